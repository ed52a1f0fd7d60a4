// Package pipeline reads pipeline files: their fields and defaults, their
// validation (every problem at once, with its file, line and field), and
// the graph they describe — the steps, each step's inputs, the stages split
// at repartitions, and branches and named outputs made steps of their own
// (docs/pipeline.md documents the file; docs/design.md says why the graph
// is shaped as it is). It knows nothing of Kafka or of running a pipeline:
// package host runs what this package describes.
package pipeline

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	yaml "go.yaml.in/yaml/v3"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/jsonfield"
	"github.com/eddy-streams/eddy/msgfield"
	"github.com/eddy-streams/eddy/windowing"
)

// Delivery is a pipeline's delivery guarantee.
type Delivery string

// Delivery guarantees.
const (
	// AtMostOnce commits input offsets before the output is produced: a crash
	// can lose records, never duplicate them.
	AtMostOnce Delivery = "at_most_once"
	// AtLeastOnce commits input offsets after the output is acknowledged: a
	// crash can duplicate records, never lose them. The default, as in Kafka
	// Streams.
	AtLeastOnce Delivery = "at_least_once"
	// ExactlyOnce produces output and commits input offsets in one Kafka
	// transaction: read_committed consumers see each record's output once.
	ExactlyOnce Delivery = "exactly_once"
)

// StepKind is what a process step does with each record.
type StepKind string

// Step kinds. All three call the guest's eddy_process; the kind states how
// many outputs per input the step may produce, and the node enforces it.
const (
	StepMap     StepKind = "map"      // exactly one output per input
	StepFilter  StepKind = "filter"   // zero or one output per input
	StepFlatMap StepKind = "flat_map" // any number of outputs
	// StepAggregate folds records into per-key, per-window accumulators
	// with the guest's eddy_agg_* functions and outputs window results,
	// which the steps after it read as records (a stateful one after a
	// key_by step).
	StepAggregate StepKind = "aggregate"
	// StepKeyBy gives every record a new key: a field of its value (in the
	// pipeline's record format) or the result of the guest's eddy_key. When a stateful step follows, the
	// records are first redistributed by their new key through a
	// repartition topic, so that each key's state lives in one task.
	StepKeyBy StepKind = "key_by"
	// StepJoin joins each record with a table (table: a table of the
	// pipeline) or with the records of another stream within a join window
	// (stream: a topic). The function, optional, exports eddy_join; without
	// one the output value nests both values: {"left":…,"right":…}, a JSON
	// object or, in a msgpack pipeline, a MessagePack map.
	StepJoin StepKind = "join"
	// StepBranch sends each record to the first of its branches whose
	// predicate (a filter function) keeps it; later steps read a branch as
	// <step>.<branch>, and a branch may write to a topic (to:). A record
	// no branch takes is dropped, as a filter drops it.
	StepBranch StepKind = "branch"
)

// JoinType is a join step's type.
type JoinType string

// Join types. Stream-table joins are inner or left; stream-stream joins
// inner, left or outer.
const (
	JoinInner JoinType = "inner"
	JoinLeft  JoinType = "left"
	JoinOuter JoinType = "outer"
)

// Time says where an aggregate step's event time comes from.
type Time string

// Time sources.
const (
	// TimeEvent (the default) is event time: the record timestamp, or a
	// field of the value (time_field), or the guest's eddy_timestamp
	// (time_function).
	TimeEvent Time = "event"
	// TimeLogAppend is the time the broker appended the record: the record
	// timestamp of a topic with message.timestamp.type=LogAppendTime.
	TimeLogAppend Time = "log_append"
	// TimeProcessing is the node's wall clock when it processes the record.
	// Results then depend on when records are processed: not
	// deterministic, not reproducible by replay.
	TimeProcessing Time = "processing"
)

// Overload is what a node does when input arrives faster than it processes.
type Overload string

// Overload policies.
const (
	// OverloadBlock pauses fetching (backpressure); nothing is dropped. The
	// default.
	OverloadBlock Overload = "block"
	// OverloadDrop drops records that arrive while the processing queue is
	// full; they are counted and logged, and their offsets committed.
	OverloadDrop Overload = "drop"
	// OverloadSample keeps a fraction (sample_rate) of the records that arrive
	// while the queue is full, and drops the rest, counted and logged.
	OverloadSample Overload = "sample"
)

// Pipeline is a pipeline file (docs/pipeline.md documents every field).
type Pipeline struct {
	Name           string        `yaml:"name"`
	Source         Source        `yaml:"source"`
	Tables         []Table       `yaml:"tables"`
	Steps          []Step        `yaml:"steps"`
	Sink           Sink          `yaml:"sink"`
	DeadLetter     DeadLetter    `yaml:"dead_letter"`
	Late           LateOutput    `yaml:"late"`
	Delivery       Delivery      `yaml:"delivery"`
	CommitInterval time.Duration `yaml:"commit_interval"`
	BatchSize      int           `yaml:"batch_size"`
	Limits         Limits        `yaml:"limits"`
	// StandbyReplicas is how many other nodes of the group keep a copy of
	// each partition's state, following its changelog, so that one of them
	// takes the partition over without restoring it (Kafka Streams'
	// num.standby.replicas). Default 0, at most MaxStandbyReplicas.
	StandbyReplicas int `yaml:"standby_replicas"`
	// MaxWarmupReplicas caps the warm-up copies of one assignment, over
	// the whole group: partitions that would move to a node whose copy of
	// their state is behind past the cap stay with their owners until a
	// warm-up has caught up (Kafka Streams' max.warmup.replicas). Absent
	// or 0: DefaultMaxWarmupReplicas; at most MaxMaxWarmupReplicas. Read
	// it through WarmupReplicas.
	MaxWarmupReplicas int `yaml:"max_warmup_replicas"`
	// AcceptableRecoveryLag is how many changelog records a node's copy of
	// a partition's state may be behind its owner's for the partition to
	// move to that node at once; a copy further behind is warmed up first
	// (Kafka Streams' acceptable.recovery.lag). Absent:
	// DefaultAcceptableRecoveryLag; 0: only a copy at its owner's position.
	// Read it through RecoveryLag.
	AcceptableRecoveryLag *int64 `yaml:"acceptable_recovery_lag"`

	// Dir is the directory of the pipeline file: function paths are relative
	// to it. Set by LoadPipeline.
	Dir string `yaml:"-"`
	// lines maps field paths ("steps[0].function") to their line.
	lines map[string]int
	file  string
}

// Source says where records come from.
type Source struct {
	Topics []string `yaml:"topics"`
	// Start is where a new consumer group starts: earliest or latest.
	Start string `yaml:"start"`
	// Format of record values: json, msgpack or bytes (functions receive
	// the bytes as they are; the node reads and writes them in this format
	// where a step reads a field or makes a value: ValueFormat), or a
	// schema registry's avro, protobuf or json_schema: values in the
	// Confluent wire format, which the host decodes with their writer's
	// schema into As before any step sees them (a record that does not
	// decode is dead-lettered). The format applies to every topic the
	// pipeline reads records from (source topics, a stream join's stream),
	// not to tables.
	Format string `yaml:"format"`
	// Registry is the schema registry's URL, for the registry formats.
	Registry string `yaml:"registry"`
	// As is what a registry format's values become for the steps: json
	// (default) or msgpack.
	As string `yaml:"as"`
}

// RegistryFormats are the source and sink formats whose values are in a
// schema registry's wire format.
var RegistryFormats = []string{"avro", "protobuf", "json_schema"}

// IsRegistryFormat says whether f is one of RegistryFormats.
func IsRegistryFormat(f string) bool { return slices.Contains(RegistryFormats, f) }

// ValueFormat is the format of the values steps read: As for a registry
// format, else Format. It is the pipeline's record format from the source
// to the sink: the node reads values only where a step reads a field of
// them (a key_by field, a time_field) and writes them only where it makes
// one (a join's default output), in this format; functions may output
// anything, and the steps after one read what it outputs as this format.
func (s *Source) ValueFormat() string {
	if IsRegistryFormat(s.Format) {
		return s.As
	}
	return s.Format
}

// The value formats steps read (ValueFormat), besides the registry formats.
const (
	FormatJSON    = "json"
	FormatMsgpack = "msgpack"
	FormatBytes   = "bytes"
)

// Table is a table source: the latest value of each key of a compacted
// topic (a null value deletes the key), kept in a state store that join
// steps look records up in.
type Table struct {
	Name  string `yaml:"name"`
	Topic string `yaml:"topic"`
	// Global replicates the whole topic to every task; otherwise the
	// topic must be co-partitioned with the stream that joins it (same
	// partition count, same keys), and each task holds its partition.
	Global bool `yaml:"global"`
}

// Step is one function applied to every record.
type Step struct {
	Name     string   `yaml:"name"`
	Kind     StepKind `yaml:"kind"`
	Function string   `yaml:"function"`
	// Field is a key_by step's key: a dotted path into the value, JSON or
	// MessagePack as the pipeline's record format is (the alternative to a
	// function exporting eddy_key).
	Field string `yaml:"field"`
	// Table (a stream-table join) or Stream (a stream-stream join: the
	// other stream's topic) is what a join step joins with; Type is its
	// join type (default inner).
	Table  string   `yaml:"table"`
	Stream string   `yaml:"stream"`
	Type   JoinType `yaml:"type"`
	// MaxIdle is how long a task with a co-partitioned table waits for a
	// lagging table partition before it joins stream records with the
	// table it has (timesync.go). Absent: DefaultMaxIdle; 0: never waits.
	MaxIdle *time.Duration `yaml:"max_idle"`
	// State gives the function a keyed store (the ABI's state_get/put/delete)
	// kept in the node's data directory and in the changelog topic
	// <pipeline>-<step>-changelog. Needs delivery at_least_once or
	// exactly_once.
	State bool `yaml:"state"`
	// Config is the configuration the step's function reads (the ABI's
	// config_get): values written here, or secrets read from an
	// environment variable or a file when the node starts (ConfigValue).
	Config map[string]ConfigValue `yaml:"config"`
	// Limits override the pipeline's memory_limit and call_timeout for the
	// step's function (a branch step's: for each of its predicates).
	Limits *StepLimits `yaml:"limits"`
	// Watermark configures the event-time watermark of a step with timers
	// (Timed): how out of order its input may be, and when an idle input
	// stops holding it back. Absent: no disorder, no idleness.
	Watermark *WatermarkSpec `yaml:"watermark"`
	// Window configures an aggregate step's windows (required for it).
	Window *WindowSpec `yaml:"window"`
	// Emit is an aggregate step's emit mode: final (default) or update.
	Emit string `yaml:"emit"`
	// Time is an aggregate step's time source: event (default),
	// log_append or processing.
	Time Time `yaml:"time"`
	// TimeField takes event time from a field of the value, JSON or
	// MessagePack as the pipeline's record format is (a dotted path;
	// integer milliseconds or RFC 3339, and in MessagePack also a float of
	// milliseconds or a timestamp) instead of the record timestamp.
	TimeField string `yaml:"time_field"`
	// TimeFunction takes event time from a Wasm module's eddy_timestamp
	// (the path of a .wasm file, which may be the step's own function).
	TimeFunction string `yaml:"time_function"`
	// To writes the step's output records to this topic too (a tap: they
	// also go on to the next step), in the same transaction as the sink's.
	To string `yaml:"to"`
	// From names the steps whose outputs are this step's input (merged in
	// the order named), or "source" for the pipeline's source topics.
	// Absent: the previous step (the source for the first step).
	From []string `yaml:"from"`
	// Branches are a branch step's branches, in the order their
	// predicates are tried.
	Branches []Branch `yaml:"branches"`
	// Outputs name the outputs a map, filter or flat_map step's function
	// may route records to (abi.HeaderOutput); later steps read one as
	// <step>.<output>. Records routed nowhere stay the step's output.
	Outputs []Output `yaml:"outputs"`

	// Part is what the step is part of once branches and outputs are
	// steps of their own (expandOutputs); zero for a step of the file.
	Part GraphPart `yaml:"-"`
}

// SourceInput is the name a step's from: gives the pipeline's source
// topics.
const SourceInput = "source"

// Chain reports whether every step reads the one before it: no step names
// its inputs (from:) and none has branches or named outputs.
func (p *Pipeline) Chain() bool {
	return !slices.ContainsFunc(p.Steps, func(s Step) bool { return len(s.From) > 0 || s.Part.Of != "" })
}

// StepInputs returns, for each step, the steps whose outputs are its input
// (-1: its stage's input — the source topics, or the repartition topic in
// front of the stage), from: or the previous step of its stage.
func (p *Pipeline) StepInputs() [][]int {
	index := map[string]int{SourceInput: -1}
	for i, s := range p.Steps {
		index[s.Name] = i
	}
	stageFrom := make([]int, len(p.Steps))
	for _, st := range p.Stages() {
		for s := st.From; s < st.To; s++ {
			stageFrom[s] = st.From
		}
	}
	ins := make([][]int, len(p.Steps))
	for i, s := range p.Steps {
		switch {
		case s.Part.Fed:
			// Its input is put in place by the step it belongs to.
		case len(s.From) > 0:
			for _, f := range s.From {
				ins[i] = append(ins[i], index[f])
			}
		case i == stageFrom[i]:
			ins[i] = []int{-1}
		default:
			ins[i] = []int{i - 1}
		}
	}
	return ins
}

// Timed reports whether the step has timers (ABI.md "Timers"): a map,
// filter or flat_map step with state. Its timers live in a store of their
// own, with the changelog TimerTopic.
func (s *Step) Timed() bool {
	return s.State && (s.Kind == StepMap || s.Kind == StepFilter || s.Kind == StepFlatMap)
}

// Stateful reports whether the step keeps keyed state.
func (s *Step) Stateful() bool { return s.State || s.Kind == StepAggregate || s.Kind == StepJoin }

// Changelogged reports whether the step's store has a changelog topic (a
// table's store is restored from the table's topic instead).
func (s *Step) Changelogged() bool {
	return s.State || s.Kind == StepAggregate || s.Kind == StepJoin && s.Stream != ""
}

// WindowSpec is an aggregate step's window configuration.
type WindowSpec struct {
	Type        string        `yaml:"type"` // tumbling, hopping, sliding, session or global
	Size        time.Duration `yaml:"size"`
	Advance     time.Duration `yaml:"advance"`      // hopping
	Gap         time.Duration `yaml:"gap"`          // session
	Count       int           `yaml:"count"`        // global: fire every count records per key
	Grace       time.Duration `yaml:"grace"`        // allowed lateness
	Disorder    time.Duration `yaml:"disorder"`     // bounded out-of-orderness of the watermark
	IdleTimeout time.Duration `yaml:"idle_timeout"` // exclude idle partitions from the watermark
	Retention   time.Duration `yaml:"retention"`    // keep window state after close
	Zone        string        `yaml:"zone"`         // align day windows to this IANA time zone
	Before      time.Duration `yaml:"before"`       // join: how much earlier the other stream's record may be
	After       time.Duration `yaml:"after"`        // join: how much later
}

// ConfigValue is one entry of a step's config: a value written in the
// file, or a secret: the name of an environment variable (env) or the path
// of a file (file, relative to the pipeline file) that the node reads when
// it starts. A secret's value is never part of the Pipeline: only where it
// comes from, which is what logs, status and the registry may show.
type ConfigValue struct {
	Value string `yaml:"-"`
	Env   string `yaml:"env"`
	File  string `yaml:"file"`
}

// UnmarshalYAML implements yaml.Unmarshaler: a scalar is a value, a
// mapping names an env or a file.
func (c *ConfigValue) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		c.Value = n.Value
		return nil
	}
	var m map[string]string
	if err := n.Decode(&m); err != nil {
		return fmt.Errorf("line %d: a config entry is a value, {env: NAME} or {file: PATH}: %w", n.Line, err)
	}
	for k, v := range m {
		switch k {
		case "env":
			c.Env = v
		case "file":
			c.File = v
		default:
			return fmt.Errorf("line %d: a config entry is a value, {env: NAME} or {file: PATH}, not %q", n.Line, k)
		}
		if v == "" {
			return fmt.Errorf("line %d: config entry: %s is empty", n.Line, k)
		}
	}
	if len(m) == 0 {
		return fmt.Errorf("line %d: a config entry is a value, {env: NAME} or {file: PATH}, not {}", n.Line)
	}
	return nil
}

// Secret reports whether the entry is a secret (read from env or file).
func (c ConfigValue) Secret() bool { return c.Env != "" || c.File != "" }

// String shows the entry without a secret's value: the value, or where
// the secret comes from.
func (c ConfigValue) String() string {
	switch {
	case c.Env != "":
		return "secret from environment variable " + c.Env
	case c.File != "":
		return "secret from file " + c.File
	}
	return c.Value
}

// ResolveConfig reads step s's config: its values, and its secrets from
// getenv and from files (relative to the pipeline's directory). An error
// names the entry and where its secret should have come from, never a
// value.
func (p *Pipeline) ResolveConfig(s int, getenv func(string) (string, bool)) (map[string][]byte, error) {
	return p.ResolveStepConfig(s, p.Steps[s].Config, getenv)
}

// ResolveStepConfig is ResolveConfig of cfg, config for step s other than
// the file's (a deploy's): files are read relative to the pipeline's
// directory.
func (p *Pipeline) ResolveStepConfig(s int, cfg map[string]ConfigValue, getenv func(string) (string, bool)) (map[string][]byte, error) {
	step := &p.Steps[s]
	if len(cfg) == 0 {
		return nil, nil
	}
	out := make(map[string][]byte, len(cfg))
	for name, c := range cfg {
		var v []byte
		switch {
		case c.Env != "":
			s, ok := getenv(c.Env)
			if !ok {
				return nil, fmt.Errorf("step %s: config %s: environment variable %s is not set", step.Name, name, c.Env)
			}
			v = []byte(s)
		case c.File != "":
			path := c.File
			if !filepath.IsAbs(path) {
				path = filepath.Join(p.Dir, path)
			}
			f, err := os.Open(path)
			if err != nil {
				return nil, fmt.Errorf("step %s: config %s: %w", step.Name, name, err)
			}
			v, err = io.ReadAll(io.LimitReader(f, abi.MaxConfigValue+1))
			f.Close()
			if err != nil {
				return nil, fmt.Errorf("step %s: config %s: read %s: %w", step.Name, name, path, err)
			}
		default:
			v = []byte(c.Value)
		}
		if len(v) > abi.MaxConfigValue {
			return nil, fmt.Errorf("step %s: config %s: the value is over %d bytes", step.Name, name, abi.MaxConfigValue)
		}
		out[name] = v
	}
	return out, nil
}

// ConfigDigest is a short hash of step s's config as the pipeline file
// writes it (values, and where secrets come from, not their values), for
// the header that says which config produced a record; "" without config.
func (p *Pipeline) ConfigDigest(s int) string { return ConfigDigestOf(p.Steps[s].Config) }

// ConfigDigestOf is ConfigDigest of config entries cfg.
func ConfigDigestOf(cfg map[string]ConfigValue) string {
	if len(cfg) == 0 {
		return ""
	}
	names := slices.Sorted(maps.Keys(cfg))
	h := sha256.New()
	for _, n := range names {
		c := cfg[n]
		fmt.Fprintf(h, "%d:%s%d:%s%d:%s%d:%s", len(n), n, len(c.Value), c.Value, len(c.Env), c.Env, len(c.File), c.File)
	}
	return hex.EncodeToString(h.Sum(nil))[:12]
}

// CheckConfig reports what is wrong with config entries (a deploy's, or a
// step's in the file): their number, names and sizes, and entries that are
// both a value and a secret.
func CheckConfig(cfg map[string]ConfigValue) error {
	var errs []error
	checkConfig(cfg, func(field, format string, args ...any) {
		errs = append(errs, fmt.Errorf("config%s: %s", field, fmt.Sprintf(format, args...)))
	})
	return errors.Join(errs...)
}

// checkConfig calls bad for each problem of cfg, field being "" or
// ".<entry name>".
func checkConfig(cfg map[string]ConfigValue, bad func(field, format string, args ...any)) {
	if len(cfg) > abi.MaxConfigEntries {
		bad("", "at most %d entries, got %d", abi.MaxConfigEntries, len(cfg))
		return
	}
	for _, name := range slices.Sorted(maps.Keys(cfg)) {
		c := cfg[name]
		switch {
		case name == "" || len(name) > abi.MaxConfigName:
			bad("", "entry names are 1 to %d bytes, got %d", abi.MaxConfigName, len(name))
		case c.Env != "" && c.File != "":
			bad("."+name, "give env or file, not both")
		case c.Secret() && c.Value != "":
			bad("."+name, "a value, or a secret from env or file, not both")
		case len(c.Value) > abi.MaxConfigValue:
			bad("."+name, "the value is over %d bytes", abi.MaxConfigValue)
		}
	}
}

// StepLimits are the limits of one step's function; a zero field keeps
// the pipeline's.
type StepLimits struct {
	MemoryLimit ByteSize      `yaml:"memory_limit"`
	CallTimeout time.Duration `yaml:"call_timeout"`
}

// FunctionLimits are the memory limit and call timeout of step i's
// function: the step's limits, else the pipeline's.
func (p *Pipeline) FunctionLimits(i int) (memory ByteSize, timeout time.Duration) {
	memory, timeout = p.Limits.MemoryLimit, p.Limits.CallTimeout
	if l := p.Steps[i].Limits; l != nil {
		if l.MemoryLimit != 0 {
			memory = l.MemoryLimit
		}
		if l.CallTimeout != 0 {
			timeout = l.CallTimeout
		}
	}
	return memory, timeout
}

// WatermarkSpec is the watermark of a step with timers: the largest
// record time it has seen on each of its inputs, less Disorder, the least
// over the inputs that are not idle.
type WatermarkSpec struct {
	Disorder    time.Duration `yaml:"disorder"`
	IdleTimeout time.Duration `yaml:"idle_timeout"`
}

// Sink says where output records go.
type Sink struct {
	Topic string `yaml:"topic"`
	// Format of the output values: by default what the steps make (the
	// source's value format), or a registry format (avro, protobuf,
	// json_schema): the host encodes each output, read as the source's
	// value format, with the subject's schema, and dead-letters an output
	// that does not fit it (with the input record it came from).
	Format string `yaml:"format"`
	// Registry is the schema registry's URL (default: the source's).
	Registry string `yaml:"registry"`
	// Subject is the subject whose schema outputs are written with
	// (default: <topic>-value, the topic-name strategy).
	Subject string `yaml:"subject"`
	// Schema is a file holding the schema to write with: registered under
	// Subject when the node starts (the registry refuses one incompatible
	// with the subject's, and the node does not start). Without it the
	// subject's latest schema is used, which must exist.
	Schema string `yaml:"schema"`
	// Message is the Protobuf message type of the outputs (its full
	// name; default: the schema's first message).
	Message string `yaml:"message"`
}

// SinkSchemaPath returns the path of the sink's schema file, resolved against
// the pipeline file's directory ("" when it has none).
func (p *Pipeline) SinkSchemaPath() string { return p.path(p.Sink.Schema) }

// DeadLetter says where failed records go.
type DeadLetter struct {
	Topic string `yaml:"topic"`
}

// LateOutput says where records later than a window's grace go.
type LateOutput struct {
	Topic string `yaml:"topic"`
}

// Limits bound what a node spends on a pipeline.
type Limits struct {
	MemoryLimit ByteSize      `yaml:"memory_limit"` // per function instance
	CallTimeout time.Duration `yaml:"call_timeout"` // per guest call (one batch)
	QueueSize   int           `yaml:"queue_size"`   // batches buffered per partition
	// TimersPerKey and TimersPerTask bound the timers a step with timers
	// holds for one key and in one task (a partition of the step); a
	// timer_set past them fails the call (cause timer_limit).
	TimersPerKey  int      `yaml:"timers_per_key"`
	TimersPerTask int      `yaml:"timers_per_task"`
	Overload      Overload `yaml:"overload"`
	SampleRate    float64  `yaml:"sample_rate"` // for overload: sample
}

// ByteSize is a size in bytes that YAML may write as 64MiB, 512KiB, 1GB or a
// plain number.
type ByteSize int64

// UnmarshalYAML implements yaml.Unmarshaler.
func (b *ByteSize) UnmarshalYAML(n *yaml.Node) error {
	v, err := ParseByteSize(n.Value)
	if err != nil {
		return err
	}
	*b = v
	return nil
}

// MarshalYAML implements yaml.Marshaler: a size is written as String
// writes it, which ParseByteSize reads back.
func (b ByteSize) MarshalYAML() (any, error) { return b.String(), nil }

// String writes b with the largest binary unit that divides it (64MiB),
// or as a plain number of bytes.
func (b ByteSize) String() string {
	for _, u := range []struct {
		name string
		size ByteSize
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if b != 0 && b%u.size == 0 {
			return strconv.FormatInt(int64(b/u.size), 10) + u.name
		}
	}
	return strconv.FormatInt(int64(b), 10)
}

// A size is at most 20 digits (the largest int64 has 19) with one unit.
var sizeRE = regexp.MustCompile(`^(\d{1,20})\s*(B|KiB|MiB|GiB|KB|MB|GB|k|K|M|G)?$`)

var sizeUnits = map[string]int64{"": 1, "B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "KB": 1e3, "MB": 1e6, "GB": 1e9,
	"k": 1 << 10, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}

// ParseByteSize parses a size such as 64MiB. A size whose bytes do not fit
// in an int64 is an error, never a wrapped value.
func ParseByteSize(s string) (ByteSize, error) {
	m := sizeRE.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return 0, fmt.Errorf("size %q: want a number of bytes with an optional unit (B, KiB, MiB, GiB, KB, MB, GB)", s)
	}
	n, err := strconv.ParseInt(m[1], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("size %q: too large (at most %d bytes)", s, int64(math.MaxInt64))
	}
	mult := sizeUnits[m[2]]
	if n > math.MaxInt64/mult {
		return 0, fmt.Errorf("size %q: too large (at most %d bytes)", s, int64(math.MaxInt64))
	}
	return ByteSize(n * mult), nil
}

// Defaults of the pipeline file.
const (
	DefaultCommitInterval = 100 * time.Millisecond
	DefaultBatchSize      = 500
	DefaultQueueSize      = 4
	DefaultMemoryLimit    = 128 << 20
	DefaultCallTimeout    = time.Second
	// DefaultMaxWarmupReplicas and DefaultAcceptableRecoveryLag are Kafka
	// Streams' defaults of max.warmup.replicas and acceptable.recovery.lag.
	DefaultMaxWarmupReplicas     = 2
	DefaultAcceptableRecoveryLag = 10000
)

// Ranges of the pipeline file (docs/pipeline.md has them in a table). Each
// bounds what one value of a file can make a node allocate or wait: a file
// is written by a person, but copied, generated and templated too, and a
// value out of range is refused at load, naming its field, never clamped.
const (
	// MaxPipelineFileSize is the largest pipeline file, checked before it is
	// parsed.
	MaxPipelineFileSize = 1 << 20
	// MaxPipelineNodes bounds the YAML nodes of a file, counting an alias as
	// many nodes as what it refers to: a file of nested aliases (a "billion
	// laughs") is refused before anything is decoded from it.
	MaxPipelineNodes = 50000
	// MaxSteps, MaxTables and MaxSourceTopics bound the lists of a
	// pipeline.
	MaxSteps        = 256
	MaxTables       = 64
	MaxSourceTopics = 256
	// MaxPipelineNameLen and MaxStepNameLen bound the names that the node
	// puts into topic names (<pipeline>-<step>-changelog, -repartition,
	// <pipeline>-dlq), which Kafka limits to 249 characters.
	MaxPipelineNameLen = 100
	MaxStepNameLen     = 64
	// MaxPathLen bounds a function path, a field path and a zone name.
	MaxPathLen = 4096
	// MaxStandbyReplicas is the most standby copies of each partition's
	// state: each one is a copy of that state on another node and a reader
	// of its changelog.
	MaxStandbyReplicas = 9
	// MaxMaxWarmupReplicas is the largest max_warmup_replicas: each
	// warm-up is a reader of a partition's changelogs.
	MaxMaxWarmupReplicas = 10000
	// MaxAcceptableRecoveryLag is the largest acceptable_recovery_lag.
	MaxAcceptableRecoveryLag = 1 << 40
	// MaxBatchSize is the most records per guest call.
	MaxBatchSize = 100000
	// MaxQueueSize is the most batches buffered per partition: each holds
	// up to batch_size records.
	MaxQueueSize = 1024
	// MinMemoryLimit and MaxMemoryLimit bound a function instance's memory.
	MinMemoryLimit = 64 << 10
	MaxMemoryLimit = 2<<30 - 64<<10
	// MaxCallTimeout is the longest deadline of one guest call.
	MaxCallTimeout = 10 * time.Minute
	// MaxCommitInterval is the longest time between commits (and, under
	// exactly_once, the longest transaction).
	MaxCommitInterval = time.Hour
	// MaxWindowDuration bounds every duration of a window: size, advance,
	// gap, grace, disorder, idle_timeout, retention, before and after.
	MaxWindowDuration = 10 * 365 * 24 * time.Hour
	// MaxWindowCount is the largest count of a global window.
	MaxWindowCount = 1 << 30
	// DefaultMaxIdle is a table join's max_idle when it has none, and
	// MaxMaxIdle the longest.
	DefaultMaxIdle = 10 * time.Second
	MaxMaxIdle     = time.Hour
)

// ValidationError is a problem in a pipeline file, located by field and line.
type ValidationError struct {
	File  string
	Line  int
	Field string
	Msg   string
}

func (e *ValidationError) Error() string {
	loc := e.File
	if e.Line > 0 {
		loc += ":" + strconv.Itoa(e.Line)
	}
	if e.Field == "" {
		return loc + ": " + e.Msg
	}
	return loc + ": " + e.Field + ": " + e.Msg
}

// LoadPipeline reads, defaults and validates a pipeline file. Every problem
// found is reported (joined), each naming its field and line.
func LoadPipeline(path string) (*Pipeline, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// Read one byte more than the limit, so that a file of exactly the limit
	// is accepted and a larger one (or an endless one: a device, a pipe) is
	// refused without reading it all.
	src, err := io.ReadAll(io.LimitReader(f, MaxPipelineFileSize+1))
	if err != nil {
		return nil, err
	}
	p, err := ParsePipeline(path, src)
	if err != nil {
		return nil, err
	}
	dir, err := filepath.Abs(filepath.Dir(path))
	if err != nil {
		return nil, err
	}
	p.Dir = dir
	return p, nil
}

// maxReportedErrors bounds the errors a file gets back: a file can make
// one per node.
const maxReportedErrors = 20

// joinErrors joins a file's errors in the order of their lines, the first
// maxReportedErrors of them and how many more there are.
func joinErrors(errs []*ValidationError) error {
	slices.SortStableFunc(errs, func(a, b *ValidationError) int { return a.Line - b.Line })
	var out []error
	for i, e := range errs {
		if i == maxReportedErrors {
			out = append(out, &ValidationError{File: e.File, Msg: fmt.Sprintf("and %d more errors", len(errs)-i)})
			break
		}
		out = append(out, e)
	}
	return errors.Join(out...)
}

// ParsePipeline parses and validates pipeline YAML; name is used in errors.
// The error joins a *ValidationError for every problem of the file, in the
// order of their lines: unknown fields, values of the wrong kind and what
// validation finds in the rest (at most maxReportedErrors of them).
func ParsePipeline(name string, src []byte) (*Pipeline, error) {
	if len(src) > MaxPipelineFileSize {
		return nil, &ValidationError{File: name, Msg: fmt.Sprintf("the file is larger than %d bytes", MaxPipelineFileSize)}
	}
	p := &Pipeline{file: name, lines: map[string]int{}}
	var root yaml.Node
	if err := yaml.Unmarshal(src, &root); err != nil {
		return nil, &ValidationError{File: name, Msg: err.Error()}
	}
	if len(root.Content) == 0 {
		return nil, &ValidationError{File: name, Msg: "the file is empty"}
	}
	// yaml.Unmarshal into a Node keeps aliases as references; decoding into
	// the Pipeline expands them. Count what the expansion would make first.
	if n, err := countNodes(&root, map[*yaml.Node]int{}, MaxPipelineNodes); err != nil {
		return nil, &ValidationError{File: name, Msg: err.Error()}
	} else if n > MaxPipelineNodes {
		return nil, &ValidationError{File: name, Msg: fmt.Sprintf("the file has more than %d YAML nodes (aliases counted as what they repeat)", MaxPipelineNodes)}
	}
	indexLines(root.Content[0], "", p.lines)
	if err := checkLists(name, root.Content[0], p.lines); err != nil {
		return nil, err
	}
	// Fields the file should not have and values of the wrong kind are
	// reported and taken out first, so that the rest of the file is
	// decoded and validated, and every problem reported at once.
	fc := &fieldChecker{file: name}
	fc.value(root.Content[0], reflect.TypeFor[Pipeline](), "", root.Content[0].Line)
	errs := fc.errs
	if err := root.Decode(p); err != nil {
		// What the fieldChecker let through and the decoder refuses
		// (nothing known): reported as the decoder says it, on the
		// field of its line.
		var te *yaml.TypeError
		if !errors.As(err, &te) {
			// The decoder stopped: what it decoded is not validated.
			return nil, joinErrors(append(errs, &ValidationError{File: name, Msg: err.Error()}))
		}
		fields := p.fieldsByLine()
		for _, e := range te.Errors {
			errs = append(errs, p.locate(strings.TrimPrefix(e, "yaml: "), fields))
		}
	}
	p.setDefaults()
	for _, e := range p.validate() {
		if !fc.suppressed(e.Field) {
			errs = append(errs, e)
		}
	}
	if len(errs) > 0 {
		return nil, joinErrors(errs)
	}
	p.expandOutputs()
	return p, nil
}

// countNodes returns the nodes of the tree at n, expanding aliases, or a
// number above limit once it has counted that many. seen holds the size of
// each anchored node already counted, so that the count takes time linear
// in the document, not in its expansion, and -1 for the anchors being
// counted: an alias to one of them (a node that contains itself) is an
// error.
func countNodes(n *yaml.Node, seen map[*yaml.Node]int, limit int) (int, error) {
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		switch c, ok := seen[n.Alias]; {
		case ok && c < 0:
			return 0, fmt.Errorf("line %d: alias *%s refers to a node that contains it", n.Line, n.Value)
		case ok:
			return c, nil
		}
		seen[n.Alias] = -1
		c, err := countNodes(n.Alias, seen, limit)
		seen[n.Alias] = c
		return c, err
	}
	c := 1
	for _, k := range n.Content {
		m, err := countNodes(k, seen, limit)
		if err != nil {
			return 0, err
		}
		if c += m; c > limit {
			return c, nil
		}
	}
	return c, nil
}

// checkLists refuses a file whose steps, tables or source topics are more
// than a pipeline may have, before they are decoded.
func checkLists(name string, doc *yaml.Node, lines map[string]int) error {
	for _, l := range []struct {
		path string
		max  int
	}{{"steps", MaxSteps}, {"tables", MaxTables}, {"source.topics", MaxSourceTopics}} {
		n := lookup(doc, strings.Split(l.path, "."))
		if n != nil && n.Kind == yaml.SequenceNode && len(n.Content) > l.max {
			return &ValidationError{File: name, Line: lines[l.path], Field: l.path,
				Msg: fmt.Sprintf("at most %d, got %d", l.max, len(n.Content))}
		}
	}
	return nil
}

// lookup follows a path of mapping keys from n (nil if there is none).
func lookup(n *yaml.Node, path []string) *yaml.Node {
	for _, key := range path {
		if n.Kind != yaml.MappingNode {
			return nil
		}
		var next *yaml.Node
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == key {
				next = n.Content[i+1]
			}
		}
		if next == nil {
			return nil
		}
		n = next
	}
	return n
}

var lineRE = regexp.MustCompile(`^line (\d+): (.*)$`)

// locate turns a decoder message "line N: ..." into an error naming the field
// written on that line (fields: see fieldsByLine).
func (p *Pipeline) locate(msg string, fields map[int]string) *ValidationError {
	m := lineRE.FindStringSubmatch(msg)
	if m == nil {
		return &ValidationError{File: p.file, Msg: msg}
	}
	line, _ := strconv.Atoi(m[1])
	msg = m[2]
	if strings.Contains(msg, "into time.Duration") {
		msg += " (want a duration such as 100ms, 1s or 2m)"
	}
	return &ValidationError{File: p.file, Line: line, Field: fields[line], Msg: msg}
}

// fieldsByLine maps each line to the longest field path written on it.
func (p *Pipeline) fieldsByLine() map[int]string {
	fields := map[int]string{}
	for f, l := range p.lines {
		if g := fields[l]; len(f) > len(g) || len(f) == len(g) && f < g {
			fields[l] = f
		}
	}
	return fields
}

// indexLines records the line of every mapping key and sequence item.
func indexLines(n *yaml.Node, path string, lines map[string]int) {
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			p := k.Value
			if path != "" {
				p = path + "." + k.Value
			}
			lines[p] = k.Line
			indexLines(v, p, lines)
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			p := fmt.Sprintf("%s[%d]", path, i)
			lines[p] = c.Line
			indexLines(c, p, lines)
		}
	}
}

// WarmupReplicas is the pipeline's max_warmup_replicas, its default if
// it has none.
func (p *Pipeline) WarmupReplicas() int {
	if p.MaxWarmupReplicas == 0 {
		return DefaultMaxWarmupReplicas
	}
	return p.MaxWarmupReplicas
}

// RecoveryLag is the pipeline's acceptable_recovery_lag, its default if it
// has none.
func (p *Pipeline) RecoveryLag() int64 {
	if p.AcceptableRecoveryLag == nil {
		return DefaultAcceptableRecoveryLag
	}
	return *p.AcceptableRecoveryLag
}

func (p *Pipeline) setDefaults() {
	if p.Source.Start == "" {
		p.Source.Start = "earliest"
	}
	if p.Source.Format == "" {
		p.Source.Format = FormatJSON
	}
	if IsRegistryFormat(p.Source.Format) && p.Source.As == "" {
		p.Source.As = "json"
	}
	if p.Sink.Format == "" {
		p.Sink.Format = p.Source.ValueFormat()
	}
	if IsRegistryFormat(p.Sink.Format) {
		if p.Sink.Registry == "" {
			p.Sink.Registry = p.Source.Registry
		}
		if p.Sink.Subject == "" && p.Sink.Topic != "" {
			p.Sink.Subject = p.Sink.Topic + "-value"
		}
	}
	if p.Delivery == "" {
		p.Delivery = AtLeastOnce
	}
	if p.CommitInterval == 0 {
		p.CommitInterval = DefaultCommitInterval
	}
	if p.BatchSize == 0 {
		p.BatchSize = DefaultBatchSize
	}
	if p.DeadLetter.Topic == "" && p.Name != "" {
		p.DeadLetter.Topic = p.Name + "-dlq"
	}
	if p.Late.Topic == "" && p.Name != "" {
		p.Late.Topic = p.Name + "-late"
	}
	for i := range p.Steps {
		if p.Steps[i].Name == "" {
			p.Steps[i].Name = fmt.Sprintf("step%d", i+1)
		}
	}
	l := &p.Limits
	if l.MemoryLimit == 0 {
		l.MemoryLimit = DefaultMemoryLimit
	}
	if l.CallTimeout == 0 {
		l.CallTimeout = DefaultCallTimeout
	}
	if l.TimersPerKey == 0 {
		l.TimersPerKey = abi.DefaultMaxTimersPerKey
	}
	if l.TimersPerTask == 0 {
		l.TimersPerTask = abi.DefaultMaxTimersPerTask
	}
	if l.QueueSize == 0 {
		l.QueueSize = DefaultQueueSize
	}
	if l.Overload == "" {
		l.Overload = OverloadBlock
	}
}

var (
	topicRE = regexp.MustCompile(`^[a-zA-Z0-9._-]{1,249}$`)
	nameRE  = regexp.MustCompile(`^[a-zA-Z0-9._-]+$`)
)

// validTopic reports whether Kafka accepts t as a topic name.
func validTopic(t string) bool { return topicRE.MatchString(t) && t != "." && t != ".." }

// validate returns every problem of the decoded, defaulted pipeline.
func (p *Pipeline) validate() []*ValidationError {
	var errs []*ValidationError
	bad := func(field, format string, args ...any) {
		line := p.lines[field]
		for f := field; line == 0 && f != ""; {
			if i := strings.LastIndexAny(f, ".["); i > 0 {
				f = f[:i]
			} else {
				f = ""
			}
			line = p.lines[f]
		}
		errs = append(errs, &ValidationError{File: p.file, Line: line, Field: field, Msg: fmt.Sprintf(format, args...)})
	}
	if p.Name == "" {
		bad("name", "is required (it names the consumer group and the default dead-letter topic)")
	} else {
		checkName(bad, "name", p.Name, MaxPipelineNameLen)
	}
	if len(p.Source.Topics) == 0 {
		bad("source.topics", "name at least one topic")
	}
	for i, t := range p.Source.Topics {
		if !validTopic(t) {
			bad(fmt.Sprintf("source.topics[%d]", i), "%q is not a valid topic name", t)
		}
	}
	if s := p.Source.Start; s != "earliest" && s != "latest" {
		bad("source.start", "must be earliest or latest, got %q%s", s, suggest(s, "earliest", "latest"))
	}
	p.checkFormats(bad)
	if len(p.Steps) == 0 {
		bad("steps", "name at least one step")
	}
	names := map[string]bool{}
	for i, s := range p.Steps {
		f := fmt.Sprintf("steps[%d]", i)
		checkName(bad, f+".name", s.Name, MaxStepNameLen)
		for _, pf := range []struct{ field, v string }{{"function", s.Function}, {"time_function", s.TimeFunction},
			{"field", s.Field}, {"time_field", s.TimeField}} {
			if len(pf.v) > MaxPathLen {
				bad(f+"."+pf.field, "at most %d bytes, got %d", MaxPathLen, len(pf.v))
			}
		}
		if s.Window != nil {
			p.validateWindowRanges(f+".window", s.Window, bad)
		}
		switch s.Kind {
		case StepJoin:
			p.validateJoin(f, s, bad)
		case StepMap, StepFilter, StepFlatMap, StepKeyBy, StepBranch:
			if s.Window != nil {
				bad(f+".window", "only aggregate and stream-stream join steps have windows")
			}
			if s.Time != "" || s.TimeField != "" || s.TimeFunction != "" || s.Emit != "" {
				bad(f+".kind", "time, time_field, time_function and emit belong to aggregate steps")
			}
		case StepAggregate:
			switch {
			case s.Window == nil:
				bad(f+".window", "an aggregate step needs a window (type: tumbling, hopping, sliding, session or global)")
			case !slices.Contains(windowTypes, s.Window.Type):
				bad(f+".window.type", "must be tumbling, hopping, sliding, session or global, got %q%s", s.Window.Type, suggest(s.Window.Type, windowTypes...))
			default:
				if _, err := s.Windowing(p.Source.ValueFormat()); err != nil {
					bad(f+".window", "%v", err)
				}
			}
			switch s.Time {
			case "", TimeEvent:
				if s.TimeField != "" && s.TimeFunction != "" {
					bad(f+".time_function", "give time_field or time_function, not both")
				}
			case TimeLogAppend, TimeProcessing:
				if s.TimeField != "" || s.TimeFunction != "" {
					bad(f+".time", "time_field and time_function need time: event, got %q", s.Time)
				}
			default:
				bad(f+".time", "must be event, log_append or processing, got %q%s", s.Time, suggest(string(s.Time), "event", "log_append", "processing"))
			}
		case "":
			bad(f+".kind", "is required: map, filter, flat_map, branch, key_by, join or aggregate")
		default:
			bad(f+".kind", "must be map, filter, flat_map, branch, key_by, join or aggregate, got %q%s", s.Kind,
				suggest(string(s.Kind), "map", "filter", "flat_map", "branch", "key_by", "join", "aggregate"))
		}
		if s.Kind != StepJoin && (s.Table != "" || s.Stream != "" || s.Type != "") {
			bad(f+".kind", "table, stream and type belong to join steps")
		}
		if s.Stateful() && p.Delivery == AtMostOnce {
			bad(f+".kind", "this step keeps state: it needs delivery at_least_once or exactly_once (its changelog is written before the offsets are committed)")
		}
		if s.Emit != "" && s.Emit != "final" && s.Emit != "update" {
			bad(f+".emit", "must be final or update, got %q%s", s.Emit, suggest(s.Emit, "final", "update"))
		}
		switch {
		case s.Kind == StepKeyBy && s.Function == "" && s.Field == "":
			bad(f+".field", "a key_by step needs a field (a dotted path into the value) or a function exporting eddy_key")
		case s.Kind == StepKeyBy && s.Function != "" && s.Field != "":
			bad(f+".field", "give field or function, not both")
		case s.Kind != StepKeyBy && s.Field != "":
			bad(f+".field", "only a key_by step has a field")
		case s.Kind != StepKeyBy && s.Kind != StepJoin && s.Kind != StepBranch && s.Function == "":
			bad(f+".function", "is required: the path of a .wasm file")
		}
		if s.Field != "" {
			if _, err := jsonfield.Parse(s.Field); err != nil {
				bad(f+".field", "%v", err)
			}
		}
		if s.Kind == StepKeyBy && s.State {
			bad(f+".state", "a key_by step keeps no state")
		}
		if len(s.Config) > 0 {
			if s.Function == "" && s.Kind != StepBranch {
				bad(f+".config", "step %s runs no function: config is a function's", s.Name)
			}
			checkConfig(s.Config, func(field, format string, args ...any) { bad(f+".config"+field, format, args...) })
		}
		if l := s.Limits; l != nil {
			switch {
			case s.Function == "" && s.Kind != StepBranch:
				bad(f+".limits", "step %s runs no function: limits are a function's", s.Name)
			case l.MemoryLimit != 0 && (l.MemoryLimit < MinMemoryLimit || l.MemoryLimit > MaxMemoryLimit):
				bad(f+".limits.memory_limit", "must be between %s and %s (%d bytes, just under 2GiB), got %s",
					ByteSize(MinMemoryLimit), ByteSize(MaxMemoryLimit), MaxMemoryLimit, l.MemoryLimit)
			case l.CallTimeout != 0 && (l.CallTimeout < time.Millisecond || l.CallTimeout > MaxCallTimeout):
				bad(f+".limits.call_timeout", "must be between 1ms and %s, got %s", MaxCallTimeout, l.CallTimeout)
			}
		}
		if w := s.Watermark; w != nil {
			switch {
			case !s.Timed():
				bad(f+".watermark", "only a map, filter or flat_map step with state: true has a watermark of its own (for its timers)")
			case w.Disorder < 0 || w.IdleTimeout < 0:
				bad(f+".watermark", "disorder and idle_timeout must not be negative")
			}
		}
		if s.To != "" {
			p.validateTap(f+".to", i, s.To, bad)
		}
		if len(s.From) > MaxSteps {
			bad(f+".from", "at most %d inputs, got %d", MaxSteps, len(s.From))
		}
		if names[s.Name] {
			bad(f+".name", "%q is used by an earlier step", s.Name)
		}
		names[s.Name] = true
	}
	for i, s := range p.Steps {
		// A step's timers have the changelog <pipeline>-<step>-timers-changelog,
		// which is also the changelog of a step named <step>-timers.
		if s.Timed() && names[s.Name+"-timers"] {
			bad(fmt.Sprintf("steps[%d].name", i), "step %s has timers, whose changelog would be that of step %s-timers: rename one", s.Name, s.Name)
		}
	}
	p.validateAfterAggregates(bad)
	p.validateBranches(bad)
	p.validateFrom(bad)
	tables := map[string]bool{}
	for i, t := range p.Tables {
		f := fmt.Sprintf("tables[%d]", i)
		switch {
		case t.Name == "":
			bad(f+".name", "is required")
		case tables[t.Name]:
			bad(f+".name", "%q is used by an earlier table", t.Name)
		default:
			checkName(bad, f+".name", t.Name, MaxStepNameLen)
		}
		tables[t.Name] = true
		if !validTopic(t.Topic) {
			bad(f+".topic", "%q is not a valid topic name", t.Topic)
		}
		if slices.Contains(p.Source.Topics, t.Topic) || t.Topic == p.Sink.Topic {
			bad(f+".topic", "%q is also a source or the sink topic", t.Topic)
		}
	}
	endsInBranches := len(p.Steps) > 0 && p.Steps[len(p.Steps)-1].Kind == StepBranch
	switch {
	case p.Sink.Topic == "" && !endsInBranches:
		bad("sink.topic", "is required (a pipeline whose last step is a branch step has none)")
	case p.Sink.Topic == "":
	case endsInBranches:
		bad("sink.topic", "the last step is a branch step, which has no output of its own for the sink: its branches write with to: or are read by later steps")
	case !validTopic(p.Sink.Topic):
		bad("sink.topic", "%q is not a valid topic name", p.Sink.Topic)
	}
	for _, t := range p.Source.Topics {
		if t == p.Sink.Topic {
			bad("sink.topic", "%q is also a source topic: the pipeline would read its own output", t)
		}
	}
	if p.DeadLetter.Topic != "" && !validTopic(p.DeadLetter.Topic) {
		bad("dead_letter.topic", "%q is not a valid topic name", p.DeadLetter.Topic)
	}
	if p.Late.Topic != "" && !validTopic(p.Late.Topic) {
		bad("late.topic", "%q is not a valid topic name", p.Late.Topic)
	}
	switch p.Delivery {
	case AtMostOnce, AtLeastOnce, ExactlyOnce:
	default:
		bad("delivery", "must be at_most_once, at_least_once or exactly_once, got %q%s", p.Delivery,
			suggest(string(p.Delivery), string(AtMostOnce), string(AtLeastOnce), string(ExactlyOnce)))
	}
	if p.CommitInterval < time.Millisecond || p.CommitInterval > MaxCommitInterval {
		bad("commit_interval", "must be between 1ms and %s, got %s", MaxCommitInterval, p.CommitInterval)
	}
	if p.BatchSize < 1 || p.BatchSize > MaxBatchSize {
		bad("batch_size", "must be between 1 and %d, got %d", MaxBatchSize, p.BatchSize)
	}
	if p.StandbyReplicas < 0 || p.StandbyReplicas > MaxStandbyReplicas {
		bad("standby_replicas", "must be between 0 and %d, got %d", MaxStandbyReplicas, p.StandbyReplicas)
	}
	if p.MaxWarmupReplicas < 0 || p.MaxWarmupReplicas > MaxMaxWarmupReplicas {
		bad("max_warmup_replicas", "must be between 1 and %d (0: the default, %d), got %d", MaxMaxWarmupReplicas, DefaultMaxWarmupReplicas, p.MaxWarmupReplicas)
	}
	if l := p.AcceptableRecoveryLag; l != nil && (*l < 0 || *l > MaxAcceptableRecoveryLag) {
		bad("acceptable_recovery_lag", "must be between 0 and %d records, got %d", int64(MaxAcceptableRecoveryLag), *l)
	}
	l := p.Limits
	if l.MemoryLimit < MinMemoryLimit || l.MemoryLimit > MaxMemoryLimit {
		bad("limits.memory_limit", "must be between %s and %s (%d bytes, just under 2GiB), got %s",
			ByteSize(MinMemoryLimit), ByteSize(MaxMemoryLimit), MaxMemoryLimit, l.MemoryLimit)
	}
	if l.CallTimeout < time.Millisecond || l.CallTimeout > MaxCallTimeout {
		bad("limits.call_timeout", "must be between 1ms and %s, got %s", MaxCallTimeout, l.CallTimeout)
	}
	if l.TimersPerKey < 1 || l.TimersPerTask < l.TimersPerKey {
		bad("limits.timers_per_key", "must be at least 1 and at most timers_per_task (%d), got %d", l.TimersPerTask, l.TimersPerKey)
	}
	if l.QueueSize < 1 || l.QueueSize > MaxQueueSize {
		bad("limits.queue_size", "must be between 1 and %d, got %d", MaxQueueSize, l.QueueSize)
	}
	// Written so that NaN, which every comparison is false for, is refused.
	if l.SampleRate != 0 && !(l.SampleRate > 0 && l.SampleRate <= 1) {
		bad("limits.sample_rate", "must be in (0, 1], got %g", l.SampleRate)
	}
	switch l.Overload {
	case OverloadBlock, OverloadDrop:
	case OverloadSample:
		if l.SampleRate == 0 {
			bad("limits.sample_rate", "must be in (0, 1] with overload: sample, got 0")
		}
	default:
		bad("limits.overload", "must be block, drop or sample, got %q%s", l.Overload, suggest(string(l.Overload), "block", "drop", "sample"))
	}
	return errs
}

// checkName checks a name that the node puts into topic names, metric
// labels and log lines.
func checkName(bad func(field, format string, args ...any), field, name string, maxLen int) {
	switch {
	case len(name) > maxLen:
		bad(field, "at most %d characters, got %d", maxLen, len(name))
	case !nameRE.MatchString(name) || name == "." || name == "..":
		bad(field, "%q: use letters, digits, '.', '_' and '-'", name)
	}
}

// validateWindowRanges checks the ranges of a window's numbers; the
// windowing package checks how they fit together.
func (p *Pipeline) validateWindowRanges(f string, w *WindowSpec, bad func(field, format string, args ...any)) {
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"size", w.Size}, {"advance", w.Advance}, {"gap", w.Gap}, {"grace", w.Grace}, {"disorder", w.Disorder},
		{"idle_timeout", w.IdleTimeout}, {"retention", w.Retention}, {"before", w.Before}, {"after", w.After}} {
		// Negative durations are the windowing package's to refuse.
		if d.v > MaxWindowDuration {
			bad(f+"."+d.name, "at most %s (10 years), got %s", MaxWindowDuration, d.v)
		}
	}
	if w.Type == "hopping" && w.Advance > 0 && w.Size > 0 && w.Size/w.Advance > windowing.MaxWindowsPerRecord {
		bad(f+".advance", "size/advance is the number of windows each record goes to: at most %d, got %d (size %s, advance %s)",
			windowing.MaxWindowsPerRecord, w.Size/w.Advance, w.Size, w.Advance)
	}
	if w.Count > MaxWindowCount {
		bad(f+".count", "at most %d, got %d", MaxWindowCount, w.Count)
	}
	if len(w.Zone) > MaxPathLen {
		bad(f+".zone", "at most %d bytes, got %d", MaxPathLen, len(w.Zone))
	}
}

// validateJoin checks a join step.
func (p *Pipeline) validateJoin(f string, s Step, bad func(field, format string, args ...any)) {
	switch {
	case s.Table == "" && s.Stream == "":
		bad(f+".table", "a join step joins a table (table: NAME) or another stream (stream: TOPIC)")
	case s.Table != "" && s.Stream != "":
		bad(f+".table", "give table or stream, not both")
	case s.Table != "" && p.Table(s.Table) == nil:
		bad(f+".table", "no table %q in tables", s.Table)
	case s.Stream != "" && !validTopic(s.Stream):
		bad(f+".stream", "%q is not a valid topic name", s.Stream)
	case s.Stream != "" && (slices.Contains(p.Source.Topics, s.Stream) || s.Stream == p.Sink.Topic):
		bad(f+".stream", "%q is also a source or the sink topic", s.Stream)
	}
	switch s.Type {
	case "", JoinInner, JoinLeft:
	case JoinOuter:
		if s.Table != "" {
			bad(f+".type", "a stream-table join is inner or left")
		}
	default:
		bad(f+".type", "must be inner, left or outer, got %q%s", s.Type, suggest(string(s.Type), "inner", "left", "outer"))
	}
	if s.Time != "" || s.TimeField != "" || s.TimeFunction != "" || s.Emit != "" {
		bad(f+".kind", "time, time_field, time_function and emit belong to aggregate steps")
	}
	w := s.Window
	switch {
	case s.Stream != "" && w == nil:
		bad(f+".window", "a stream-stream join needs a join window: {before: 5s, after: 5s, grace: 1s}")
	case s.Stream == "" && w != nil:
		bad(f+".window", "a stream-table join has no window")
	case w != nil && (w.Type != "" || w.Size != 0 || w.Advance != 0 || w.Gap != 0 || w.Count != 0 || w.Retention != 0 || w.Zone != ""):
		bad(f+".window", "a join window has before, after, grace, disorder and idle_timeout only")
	case w != nil && (w.Before < 0 || w.After < 0 || w.Grace < 0 || w.Disorder < 0 || w.IdleTimeout < 0):
		bad(f+".window", "durations must not be negative")
	}
	if d := s.MaxIdle; d != nil {
		switch t := p.Table(s.Table); {
		case t == nil || t.Global:
			bad(f+".max_idle", "max_idle belongs to a join with a table that is not global (it bounds the wait for the table's partition)")
		case *d < 0 || *d > MaxMaxIdle:
			bad(f+".max_idle", "must be 0 to %s, got %s", MaxMaxIdle, *d)
		}
	}
}

// MaxIdleOrDefault is table join step s's max_idle, DefaultMaxIdle when
// the file gives none.
func (s *Step) MaxIdleOrDefault() time.Duration {
	if s.MaxIdle == nil {
		return DefaultMaxIdle
	}
	return *s.MaxIdle
}

// checkFormats checks the source's and the sink's formats.
func (p *Pipeline) checkFormats(bad func(field, format string, args ...any)) {
	plain := []string{FormatJSON, FormatMsgpack, FormatBytes}
	all := strings.Join(append(slices.Clone(plain), RegistryFormats...), ", ")
	src := &p.Source
	if f := src.Format; !slices.Contains(plain, f) && !IsRegistryFormat(f) {
		bad("source.format", "must be one of %s, got %q%s", all, f, suggest(f, append(slices.Clone(plain), RegistryFormats...)...))
	}
	registryURL := func(field, url string) {
		if !strings.HasPrefix(url, "http://") && !strings.HasPrefix(url, "https://") {
			bad(field, "want the schema registry's http:// or https:// URL, got %q", url)
		}
	}
	if IsRegistryFormat(src.Format) {
		registryURL("source.registry", src.Registry)
		if src.As != FormatJSON && src.As != FormatMsgpack {
			bad("source.as", "must be json or msgpack, got %q%s", src.As, suggest(src.As, FormatJSON, FormatMsgpack))
		}
	} else if src.Registry != "" || src.As != "" {
		bad("source.registry", "registry and as are for the formats %s", strings.Join(RegistryFormats, ", "))
	}
	sink := &p.Sink
	switch f := sink.Format; {
	case IsRegistryFormat(f):
		registryURL("sink.registry", sink.Registry)
		if sink.Subject == "" || len(sink.Subject) > 255 {
			bad("sink.subject", "give the subject outputs are written with (at most 255 bytes)")
		}
		if sink.Message != "" && f != "protobuf" {
			bad("sink.message", "a message type is for the protobuf format")
		}
	case f != src.ValueFormat():
		bad("sink.format", "must be the steps' value format %s or one of %s, got %q", src.ValueFormat(), strings.Join(RegistryFormats, ", "), f)
	default:
		if sink.Registry != "" || sink.Subject != "" || sink.Schema != "" || sink.Message != "" {
			bad("sink.registry", "registry, subject, schema and message are for the formats %s", strings.Join(RegistryFormats, ", "))
		}
	}
}

// FunctionPath returns the path of step i's module, resolved against the
// pipeline file's directory ("" for a key_by step on a field).
func (p *Pipeline) FunctionPath(i int) string { return p.path(p.Steps[i].Function) }

// TimeFunctionPath returns the path of step i's timestamp module, resolved
// against the pipeline file's directory ("" when it has none).
func (p *Pipeline) TimeFunctionPath(i int) string { return p.path(p.Steps[i].TimeFunction) }

func (p *Pipeline) path(f string) string {
	if f == "" || filepath.IsAbs(f) || p.Dir == "" {
		return f
	}
	return filepath.Join(p.Dir, f)
}

// RepartitionTopic is the topic through which a key_by step redistributes
// records by their new key when a stateful step follows it.
func RepartitionTopic(pipeline, step string) string {
	return pipeline + "-" + step + RepartitionSuffix
}

// RepartitionSuffix ends the name of every repartition topic.
const RepartitionSuffix = "-repartition"

// Stage is a run of consecutive steps that a task applies to the records of
// one input topic. A pipeline without repartitioning has one stage, from
// its source topics to its sink. A stateful step that follows a key_by step
// starts a new stage: the stage before it ends by writing its records to the
// key_by step's repartition topic, partitioned by their new key, and the new
// stage reads that topic, so that each key's state lives in one task.
type Stage struct {
	Inputs   []string // the topics this stage consumes
	From, To int      // its steps: Steps[From:To]
	Output   string   // where its records go: a repartition topic, or the sink ("" for none)
	Last     bool     // Output is the sink
	// Out is the step whose output goes to Output: its last step, or the
	// step that its last steps are the named outputs of; -1 when the stage
	// ends with a branch step's branches (p.sinkStep).
	Out int
	// Sides maps the inputs that a join step of the stage reads (a
	// co-partitioned table's topic, the other stream of a stream-stream
	// join) to that step; the other inputs run through the stage from its
	// first step.
	Sides map[string]int
}

// Contains reports whether step s is one of the stage's.
func (st Stage) Contains(s int) bool { return s >= st.From && s < st.To }

// Streams returns the stage's inputs whose records produce output: every
// input but the topics of tables.
func (st Stage) Streams(p *Pipeline) []string {
	var out []string
	for _, in := range st.Inputs {
		if s, ok := st.Sides[in]; ok && p.Steps[s].Table != "" {
			continue
		}
		out = append(out, in)
	}
	return out
}

// Stages splits the pipeline at its repartitions.
func (p *Pipeline) Stages() []Stage {
	var stages []Stage
	cur := Stage{Inputs: p.Source.Topics}
	keyed := "" // the last key_by step of the current stage
	for i, s := range p.Steps {
		switch {
		case s.Kind == StepKeyBy:
			keyed = s.Name
		case p.KeyedByPartition(s) && keyed != "":
			cur.To, cur.Output = i, RepartitionTopic(p.Name, keyed)
			stages = append(stages, cur)
			cur = Stage{Inputs: []string{cur.Output}, From: i}
			keyed = ""
		}
	}
	cur.To, cur.Output, cur.Last = len(p.Steps), p.Sink.Topic, true
	stages = append(stages, cur)
	for i := range stages {
		stages[i].Out = p.sinkStep(stages[i])
	}
	// A join step's other input is read by the tasks of its stage.
	for i := range stages {
		st := &stages[i]
		for s := st.From; s < st.To; s++ {
			step := p.Steps[s]
			if step.Kind != StepJoin {
				continue
			}
			topic := step.Stream
			if t := p.Table(step.Table); t != nil && !t.Global {
				topic = t.Topic
			}
			if topic == "" || slices.Contains(st.Inputs, topic) {
				continue
			}
			if st.Sides == nil {
				st.Sides = map[string]int{}
			}
			st.Inputs = append(slices.Clip(st.Inputs), topic)
			st.Sides[topic] = s
		}
	}
	return stages
}

// validateFrom checks the steps' from: names and that every step's output
// goes somewhere. A step may read the outputs of earlier steps of its own
// stage (the steps between two repartitions, which one task runs), or, in
// the first stage, the source topics; not a join step (its other input is
// its table or stream). A branch step's branches and a step's named outputs
// are read as <step>.<name>; a branch step has no output of its own. A step
// whose output no step reads, that writes no to: topic and is not its
// stage's last step (whose output goes to the sink or the next stage) is an
// error: its work would go nowhere; so is a branch or named output that no
// step reads and that has no to:.
func (p *Pipeline) validateFrom(bad func(field, format string, args ...any)) {
	index := map[string]int{}
	for i, s := range p.Steps {
		if _, dup := index[s.Name]; !dup {
			index[s.Name] = i
		}
	}
	// resolve finds the step a from: name reads and, for a branch or a
	// named output, its name.
	resolve := func(name string) (int, string, bool) {
		if j, ok := index[name]; ok {
			return j, "", true
		}
		if dot := strings.LastIndexByte(name, '.'); dot > 0 {
			if j, ok := index[name[:dot]]; ok && slices.Contains(p.Steps[j].Parts(), name[dot+1:]) {
				return j, name[dot+1:], true
			}
		}
		return 0, "", false
	}
	partNames := func(s Step) string {
		var out []string
		for _, part := range s.Parts() {
			out = append(out, s.Name+"."+part)
		}
		return strings.Join(out, ", ")
	}
	stageOf := make([]Stage, len(p.Steps))
	for _, st := range p.Stages() {
		for s := st.From; s < st.To && s < len(p.Steps); s++ {
			stageOf[s] = st
		}
	}
	read := make([]bool, len(p.Steps))
	partRead := map[string]bool{} // "<step>.<part>"
	for i, s := range p.Steps {
		f := fmt.Sprintf("steps[%d].from", i)
		if len(s.From) == 0 {
			if i > 0 && p.Steps[i-1].Kind == StepBranch {
				bad(fmt.Sprintf("steps[%d]", i), "step %s follows branch step %s, which has no output of its own: name the branches it reads in from: (%s)",
					s.Name, p.Steps[i-1].Name, partNames(p.Steps[i-1]))
			}
			if i > 0 && i > stageOf[i].From {
				read[i-1] = true
			}
			continue
		}
		if s.Kind == StepJoin {
			bad(f, "a join step reads the previous step (its other input is its table or stream)")
			continue
		}
		seen := map[string]bool{}
		for _, name := range s.From {
			j, part, ok := resolve(name)
			switch {
			case seen[name]:
				bad(f, "%q is named twice", name)
			case name == SourceInput && stageOf[i].From > 0:
				bad(f, "%q: step %s reads what a repartition topic brings (it is after a key_by and a step that keeps state), not the source", name, s.Name)
			case name == SourceInput:
			case !ok:
				bad(f, "%q is not a step of the pipeline, nor a branch or output of one", name)
			case j >= i:
				bad(f, "%q is not before step %s: a step reads earlier steps (a step cannot read itself or a later one, so there are no cycles)", name, s.Name)
			case j < stageOf[i].From:
				bad(f, "%q is before the repartition in front of step %s: a step reads the steps of its own stage (after its last key_by before a step that keeps state)", name, s.Name)
			case part == "" && p.Steps[j].Kind == StepBranch:
				bad(f, "%q is a branch step, which has no output of its own: name its branches (%s)", name, partNames(p.Steps[j]))
			case part != "":
				partRead[name] = true
			default:
				read[j] = true
			}
			seen[name] = true
		}
	}
	for i, s := range p.Steps {
		if !read[i] && s.To == "" && i != stageOf[i].To-1 && s.Kind != StepBranch {
			bad(fmt.Sprintf("steps[%d]", i), "the output of step %s goes nowhere: no later step reads it (from:) and it has no to: topic", s.Name)
		}
		for j, b := range s.Branches {
			if b.To == "" && !partRead[s.Name+"."+b.Name] {
				bad(fmt.Sprintf("steps[%d].branches[%d]", i, j), "branch %s.%s goes nowhere: no later step reads it (from:) and it has no to: topic", s.Name, b.Name)
			}
		}
		for j, o := range s.Outputs {
			if o.To == "" && !partRead[s.Name+"."+o.Name] {
				bad(fmt.Sprintf("steps[%d].outputs[%d]", i, j), "output %s.%s goes nowhere: no later step reads it (from:) and it has no to: topic", s.Name, o.Name)
			}
		}
	}
}

// validateTap checks the to: topic of step i: a valid name, not one the
// pipeline reads (its sources, tables, the other stream of a join), not its
// dead-letter, late, changelog or repartition topics, and not the sink for
// the last step, whose output goes there already.
func (p *Pipeline) validateTap(f string, i int, to string, bad func(field, format string, args ...any)) {
	read := slices.Contains(p.Source.Topics, to) || slices.ContainsFunc(p.Tables, func(t Table) bool { return t.Topic == to }) ||
		slices.ContainsFunc(p.Steps, func(s Step) bool { return s.Stream == to })
	internal := strings.HasPrefix(to, p.Name+"-") && (strings.HasSuffix(to, "-changelog") || strings.HasSuffix(to, "-repartition"))
	switch {
	case !validTopic(to):
		bad(f, "%q is not a valid topic name", to)
	case read:
		bad(f, "%q is a topic the pipeline reads: it would read its own output", to)
	case to == p.DeadLetter.Topic || to == p.Late.Topic || internal:
		bad(f, "%q is the pipeline's dead-letter, late, changelog or repartition topic", to)
	case i >= 0 && i == len(p.Steps)-1 && to == p.Sink.Topic:
		bad(f, "%q is the sink, where the last step's output goes already", to)
	}
}

// validateAfterAggregates checks the steps that read an aggregate step's
// window results. A step that keeps state needs a key_by step between: each
// stage holds at most one aggregate, and its results reach the next
// stateful step through a repartition topic, with per-upstream watermarks.
//
// The results of an aggregate with emit: update are changes, not new
// records (Retractions): an aggregate may read them, with tumbling or
// hopping windows, but a step that keeps state otherwise (state: true, a
// join) may not, for it would take each update and each retraction for a
// record of its own.
func (p *Pipeline) validateAfterAggregates(bad func(field, format string, args ...any)) {
	agg, keyed, keys := -1, false, 0
	for i, s := range p.Steps {
		f := fmt.Sprintf("steps[%d]", i)
		update := agg >= 0 && p.Steps[agg].Emit == "update"
		if update && s.Kind == StepKeyBy && keys == 1 {
			// The folding aggregate's watermark comes from its upstream
			// stage's progress alone, which a stage between would not
			// pass on.
			bad(f+".kind", "key_by step %s is the second between aggregate step %s, which has emit: update, and the aggregate "+
				"that reads its results: one key_by only", s.Name, p.Steps[agg].Name)
		}
		if s.Kind == StepKeyBy {
			keys++
		}
		if w := p.Steps[max(agg, 0)].Window; update && s.Kind == StepAggregate && w != nil && w.Type != "tumbling" && w.Type != "hopping" && w.Type != "session" {
			bad(fmt.Sprintf("steps[%d].window.type", agg), "aggregate step %s has emit: update and aggregate step %s reads its results: "+
				"its windows must be tumbling, hopping or session (each result of one of their windows replaces the one before it), not %s",
				p.Steps[agg].Name, s.Name, w.Type)
		}
		switch {
		case s.Kind == StepKeyBy:
			keyed = true
			continue
		case agg < 0:
		case p.KeyedByPartition(s) && !keyed:
			bad(f+".kind", "step %s keeps state and reads the window results of aggregate step %s: put a key_by step between them "+
				"(it sends the results through a repartition topic to the tasks of their new keys)", s.Name, p.Steps[agg].Name)
		case update && s.Kind == StepAggregate && s.Window != nil && s.Window.Type != "tumbling" && s.Window.Type != "hopping":
			bad(f+".window.type", "aggregate step %s reads the updates of aggregate step %s (emit: update), which it folds as a set of "+
				"current results: its windows must be tumbling or hopping, not %s", s.Name, p.Steps[agg].Name, s.Window.Type)
		case update && s.Kind != StepAggregate && s.Stateful():
			bad(f+".kind", "step %s keeps state and reads the updates of aggregate step %s (emit: update): only an aggregate step "+
				"can read them (it folds each window's current results); give %s emit: final", s.Name, p.Steps[agg].Name, p.Steps[agg].Name)
		}
		if s.Kind == StepAggregate {
			agg, keyed, keys = i, false, 0
		}
	}
}

// Retractions reports, for each step, whether it is an aggregate with
// emit: update whose results an aggregate step reads further on (emits),
// and whether it is such a reading aggregate (folds). An emitting step
// sends, before each new result of a window, the window's previous result
// marked as a retraction (abi.HeaderRetract); the steps between carry the
// mark to what they make of it, sinks and taps drop what carries it, and a
// folding aggregate keeps each window's current records instead of an
// accumulator that only grows: a record adds to them, a retraction takes
// its equal away, and the window's accumulator is folded again from them.
func (p *Pipeline) Retractions() (emits, folds []bool) {
	emits, folds = make([]bool, len(p.Steps)), make([]bool, len(p.Steps))
	agg := -1
	for i, s := range p.Steps {
		if s.Kind != StepAggregate {
			continue
		}
		if agg >= 0 && p.Steps[agg].Emit == "update" {
			emits[agg], folds[i] = true, true
		}
		agg = i
	}
	return emits, folds
}

// KeyedByPartition reports whether a step needs each key's records in one
// partition: keyed state, windows, a join with another stream or with a
// table that is not global.
func (p *Pipeline) KeyedByPartition(s Step) bool {
	if s.Kind == StepJoin && s.Table != "" {
		t := p.Table(s.Table)
		return t == nil || !t.Global
	}
	return s.Stateful()
}

// Table returns the named table, or nil.
func (p *Pipeline) Table(name string) *Table {
	for i := range p.Tables {
		if p.Tables[i].Name == name {
			return &p.Tables[i]
		}
	}
	return nil
}

// windowTypes are the types of an aggregate step's windows.
var windowTypes = []string{"tumbling", "hopping", "sliding", "session", "global"}

// Windowing is the windowing configuration of an aggregate step whose
// records' values are in format, the pipeline's Source.ValueFormat: its
// time_field is read from MessagePack values in a msgpack pipeline, from
// JSON ones otherwise.
func (s *Step) Windowing(format string) (windowing.Config, error) {
	w := s.Window
	var spec windowing.Spec
	switch w.Type {
	case "tumbling":
		spec = windowing.Tumbling(w.Size)
	case "hopping":
		spec = windowing.Hopping(w.Size, w.Advance)
	case "sliding":
		spec = windowing.Sliding(w.Size)
	case "session":
		spec = windowing.Session(w.Gap)
	case "global":
		spec = windowing.GlobalCount(w.Count)
	default:
		return windowing.Config{}, fmt.Errorf("type must be tumbling, hopping, sliding, session or global, got %q%s", w.Type,
			suggest(w.Type, windowTypes...))
	}
	if w.Zone != "" {
		loc, err := time.LoadLocation(w.Zone)
		if err != nil {
			return windowing.Config{}, fmt.Errorf("zone: %w", err)
		}
		spec = spec.In(loc)
	}
	cfg := windowing.Config{Window: spec, Disorder: w.Disorder, Grace: w.Grace, IdleTimeout: w.IdleTimeout, Retention: w.Retention}
	if s.Emit == "update" {
		cfg.Emit = windowing.EmitUpdate
	}
	switch s.Time {
	case TimeProcessing:
		cfg.Time = windowing.ProcessingTime{Clock: time.Now}
	case TimeLogAppend:
		cfg.Time = windowing.LogAppendTime{}
	}
	switch {
	case s.TimeField != "" && format == FormatMsgpack:
		ex, err := msgfield.NewTimeField(s.TimeField)
		if err != nil {
			return windowing.Config{}, err
		}
		cfg.Time = ex
	case s.TimeField != "":
		ex, err := windowing.NewJSONField(s.TimeField)
		if err != nil {
			return windowing.Config{}, err
		}
		cfg.Time = ex
	}
	return cfg, cfg.Validate()
}
