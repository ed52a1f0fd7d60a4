package host

import "github.com/eddy-streams/eddy/pipeline"

// The pipeline file lives in package pipeline; these names keep host's
// API (host.Pipeline, host.LoadPipeline, host.StepMap, ...) for the node's
// callers, which run what that package describes.

type (
	Pipeline        = pipeline.Pipeline
	Source          = pipeline.Source
	Table           = pipeline.Table
	Step            = pipeline.Step
	StepKind        = pipeline.StepKind
	JoinType        = pipeline.JoinType
	Time            = pipeline.Time
	Overload        = pipeline.Overload
	Delivery        = pipeline.Delivery
	WindowSpec      = pipeline.WindowSpec
	Sink            = pipeline.Sink
	DeadLetter      = pipeline.DeadLetter
	LateOutput      = pipeline.LateOutput
	Limits          = pipeline.Limits
	ByteSize        = pipeline.ByteSize
	ValidationError = pipeline.ValidationError
	Stage           = pipeline.Stage
	Branch          = pipeline.Branch
	Output          = pipeline.Output
)

// Delivery guarantees.
const (
	AtMostOnce  = pipeline.AtMostOnce
	AtLeastOnce = pipeline.AtLeastOnce
	ExactlyOnce = pipeline.ExactlyOnce
)

// Step kinds.
const (
	StepMap       = pipeline.StepMap
	StepFilter    = pipeline.StepFilter
	StepFlatMap   = pipeline.StepFlatMap
	StepAggregate = pipeline.StepAggregate
	StepKeyBy     = pipeline.StepKeyBy
	StepJoin      = pipeline.StepJoin
	StepBranch    = pipeline.StepBranch
	stepOutput    = pipeline.StepOutput
)

// Join types, time sources and overload policies.
const (
	JoinInner      = pipeline.JoinInner
	JoinLeft       = pipeline.JoinLeft
	JoinOuter      = pipeline.JoinOuter
	TimeEvent      = pipeline.TimeEvent
	TimeLogAppend  = pipeline.TimeLogAppend
	TimeProcessing = pipeline.TimeProcessing
	OverloadBlock  = pipeline.OverloadBlock
	OverloadDrop   = pipeline.OverloadDrop
	OverloadSample = pipeline.OverloadSample
)

// Defaults and limits of pipeline files (pipeline package).
const (
	DefaultCommitInterval = pipeline.DefaultCommitInterval
	DefaultBatchSize      = pipeline.DefaultBatchSize
	DefaultQueueSize      = pipeline.DefaultQueueSize
	DefaultMemoryLimit    = pipeline.DefaultMemoryLimit
	DefaultCallTimeout    = pipeline.DefaultCallTimeout
	DefaultMaxIdle        = pipeline.DefaultMaxIdle
	MaxPipelineFileSize   = pipeline.MaxPipelineFileSize
	MaxPipelineNodes      = pipeline.MaxPipelineNodes
	MaxSteps              = pipeline.MaxSteps
	MaxTables             = pipeline.MaxTables
	MaxSourceTopics       = pipeline.MaxSourceTopics
	MaxPipelineNameLen    = pipeline.MaxPipelineNameLen
	MaxStepNameLen        = pipeline.MaxStepNameLen
	MaxPathLen            = pipeline.MaxPathLen
	MaxBatchSize          = pipeline.MaxBatchSize
	MaxQueueSize          = pipeline.MaxQueueSize
	MinMemoryLimit        = pipeline.MinMemoryLimit
	MaxMemoryLimit        = pipeline.MaxMemoryLimit
	MaxCallTimeout        = pipeline.MaxCallTimeout
	MaxCommitInterval     = pipeline.MaxCommitInterval
	MaxWindowDuration     = pipeline.MaxWindowDuration
	MaxWindowCount        = pipeline.MaxWindowCount
	MaxMaxIdle            = pipeline.MaxMaxIdle
	MaxOutputs            = pipeline.MaxOutputs
	SourceInput           = pipeline.SourceInput
	RepartitionSuffix     = pipeline.RepartitionSuffix
)

// LoadPipeline reads, defaults and validates a pipeline file
// (pipeline.LoadPipeline).
func LoadPipeline(path string) (*Pipeline, error) { return pipeline.LoadPipeline(path) }

// ParsePipeline parses and validates pipeline YAML (pipeline.ParsePipeline).
func ParsePipeline(name string, src []byte) (*Pipeline, error) {
	return pipeline.ParsePipeline(name, src)
}

// ParseByteSize reads a size such as 64MiB (pipeline.ParseByteSize).
func ParseByteSize(s string) (ByteSize, error) { return pipeline.ParseByteSize(s) }

// RepartitionTopic is the topic through which a key_by step redistributes
// records (pipeline.RepartitionTopic).
func RepartitionTopic(pipelineName, step string) string {
	return pipeline.RepartitionTopic(pipelineName, step)
}
