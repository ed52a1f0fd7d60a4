package host

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	yaml "go.yaml.in/yaml/v3"
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
	// with the guest's eddy_agg_* functions and outputs window results. It
	// must be the last step.
	StepAggregate StepKind = "aggregate"
	// StepKeyBy gives every record a new key: a field of its JSON value or
	// the result of the guest's eddy_key. When a stateful step follows, the
	// records are first redistributed by their new key through a
	// repartition topic, so that each key's state lives in one task.
	StepKeyBy StepKind = "key_by"
	// StepJoin joins each record with a table (table: a table of the
	// pipeline) or with the records of another stream within a join window
	// (stream: a topic). The function, optional, exports eddy_join; without
	// one the output value nests both JSON values: {"left":…,"right":…}.
	StepJoin StepKind = "join"
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
	// JSON field (time_field), or the guest's eddy_timestamp
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
	// Format of record values: json or bytes. Used by tools that display
	// records; functions receive bytes either way.
	Format string `yaml:"format"`
}

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
	// Field is a key_by step's key: a dotted path into the JSON value (the
	// alternative to a function exporting eddy_key).
	Field string `yaml:"field"`
	// Table (a stream-table join) or Stream (a stream-stream join: the
	// other stream's topic) is what a join step joins with; Type is its
	// join type (default inner).
	Table  string   `yaml:"table"`
	Stream string   `yaml:"stream"`
	Type   JoinType `yaml:"type"`
	// State gives the function a keyed store (the ABI's state_get/put/delete)
	// kept in the node's data directory and in the changelog topic
	// <pipeline>-<step>-changelog. Needs delivery at_least_once or
	// exactly_once.
	State bool `yaml:"state"`
	// Window configures an aggregate step's windows (required for it).
	Window *WindowSpec `yaml:"window"`
	// Emit is an aggregate step's emit mode: final (default) or update.
	Emit string `yaml:"emit"`
	// Time is an aggregate step's time source: event (default),
	// log_append or processing.
	Time Time `yaml:"time"`
	// TimeField takes event time from a JSON field of the value (a dotted
	// path; integer milliseconds or RFC 3339) instead of the record
	// timestamp.
	TimeField string `yaml:"time_field"`
	// TimeFunction takes event time from a Wasm module's eddy_timestamp
	// (the path of a .wasm file, which may be the step's own function).
	TimeFunction string `yaml:"time_function"`
}

// stateful reports whether the step keeps keyed state.
func (s *Step) stateful() bool { return s.State || s.Kind == StepAggregate || s.Kind == StepJoin }

// changelogged reports whether the step's store has a changelog topic (a
// table's store is restored from the table's topic instead).
func (s *Step) changelogged() bool {
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

// Sink says where output records go.
type Sink struct {
	Topic string `yaml:"topic"`
}

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
	Overload    Overload      `yaml:"overload"`
	SampleRate  float64       `yaml:"sample_rate"` // for overload: sample
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

var sizeRE = regexp.MustCompile(`^(\d+)\s*(B|KiB|MiB|GiB|KB|MB|GB|k|K|M|G)?$`)

// ParseByteSize parses a size such as 64MiB.
func ParseByteSize(s string) (ByteSize, error) {
	m := sizeRE.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return 0, fmt.Errorf("size %q: want a number of bytes with an optional unit (B, KiB, MiB, GiB, KB, MB, GB)", s)
	}
	n, err := strconv.ParseInt(m[1], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("size %q: %w", s, err)
	}
	mult := map[string]int64{"": 1, "B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "KB": 1e3, "MB": 1e6, "GB": 1e9,
		"k": 1 << 10, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}[m[2]]
	return ByteSize(n * mult), nil
}

// Defaults of the pipeline file.
const (
	DefaultCommitInterval = 100 * time.Millisecond
	DefaultBatchSize      = 500
	DefaultQueueSize      = 4
	DefaultMemoryLimit    = 128 << 20
	DefaultCallTimeout    = time.Second
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
	src, err := os.ReadFile(path)
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

// ParsePipeline parses and validates pipeline YAML; name is used in errors.
func ParsePipeline(name string, src []byte) (*Pipeline, error) {
	p := &Pipeline{file: name, lines: map[string]int{}}
	var root yaml.Node
	if err := yaml.Unmarshal(src, &root); err != nil {
		return nil, &ValidationError{File: name, Msg: err.Error()}
	}
	if len(root.Content) == 0 {
		return nil, &ValidationError{File: name, Msg: "the file is empty"}
	}
	indexLines(root.Content[0], "", p.lines)
	dec := yaml.NewDecoder(bytes.NewReader(src))
	dec.KnownFields(true)
	if err := dec.Decode(p); err != nil {
		var te *yaml.TypeError
		if errors.As(err, &te) {
			var errs []error
			for _, e := range te.Errors {
				errs = append(errs, p.locate(strings.TrimPrefix(e, "yaml: ")))
			}
			return nil, errors.Join(errs...)
		}
		return nil, &ValidationError{File: name, Msg: err.Error()}
	}
	p.setDefaults()
	if err := p.validate(); err != nil {
		return nil, err
	}
	return p, nil
}

var lineRE = regexp.MustCompile(`^line (\d+): (.*)$`)

// locate turns a decoder message "line N: ..." into an error naming the field
// written on that line.
func (p *Pipeline) locate(msg string) *ValidationError {
	m := lineRE.FindStringSubmatch(msg)
	if m == nil {
		return &ValidationError{File: p.file, Msg: msg}
	}
	line, _ := strconv.Atoi(m[1])
	field := ""
	for f, l := range p.lines {
		if l == line && len(f) > len(field) {
			field = f
		}
	}
	msg = m[2]
	if strings.Contains(msg, "into time.Duration") {
		msg += " (want a duration such as 100ms, 1s or 2m)"
	}
	return &ValidationError{File: p.file, Line: line, Field: field, Msg: msg}
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

func (p *Pipeline) setDefaults() {
	if p.Source.Start == "" {
		p.Source.Start = "earliest"
	}
	if p.Source.Format == "" {
		p.Source.Format = "json"
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
	if l.QueueSize == 0 {
		l.QueueSize = DefaultQueueSize
	}
	if l.Overload == "" {
		l.Overload = OverloadBlock
	}
}

var topicRE = regexp.MustCompile(`^[a-zA-Z0-9._-]{1,249}$`)

func (p *Pipeline) validate() error {
	var errs []error
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
	} else if !topicRE.MatchString(p.Name) {
		bad("name", "%q: use letters, digits, '.', '_' and '-'", p.Name)
	}
	if len(p.Source.Topics) == 0 {
		bad("source.topics", "name at least one topic")
	}
	for i, t := range p.Source.Topics {
		if !topicRE.MatchString(t) {
			bad(fmt.Sprintf("source.topics[%d]", i), "%q is not a valid topic name", t)
		}
	}
	if s := p.Source.Start; s != "earliest" && s != "latest" {
		bad("source.start", "must be earliest or latest, got %q", s)
	}
	if f := p.Source.Format; f != "json" && f != "bytes" {
		bad("source.format", "must be json or bytes, got %q", f)
	}
	if len(p.Steps) == 0 {
		bad("steps", "name at least one step")
	}
	names := map[string]bool{}
	for i, s := range p.Steps {
		f := fmt.Sprintf("steps[%d]", i)
		switch s.Kind {
		case StepJoin:
			p.validateJoin(f, s, bad)
		case StepMap, StepFilter, StepFlatMap, StepKeyBy:
			if s.Window != nil {
				bad(f+".window", "only aggregate and stream-stream join steps have windows")
			}
			if s.Time != "" || s.TimeField != "" || s.TimeFunction != "" || s.Emit != "" {
				bad(f+".kind", "time, time_field, time_function and emit belong to aggregate steps")
			}
		case StepAggregate:
			if s.Window == nil {
				bad(f+".window", "an aggregate step needs a window (type: tumbling, hopping, sliding, session or global)")
			} else if _, err := s.windowing(); err != nil {
				bad(f+".window", "%v", err)
			}
			if i != len(p.Steps)-1 {
				bad(f+".kind", "an aggregate step must be the last step")
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
				bad(f+".time", "must be event, log_append or processing, got %q", s.Time)
			}
		case "":
			bad(f+".kind", "is required: map, filter, flat_map, key_by, join or aggregate")
		default:
			bad(f+".kind", "must be map, filter, flat_map, key_by, join or aggregate, got %q", s.Kind)
		}
		if s.Kind != StepJoin && (s.Table != "" || s.Stream != "" || s.Type != "") {
			bad(f+".kind", "table, stream and type belong to join steps")
		}
		if s.stateful() && p.Delivery == AtMostOnce {
			bad(f+".kind", "this step keeps state: it needs delivery at_least_once or exactly_once (its changelog is written before the offsets are committed)")
		}
		if s.Emit != "" && s.Emit != "final" && s.Emit != "update" {
			bad(f+".emit", "must be final or update, got %q", s.Emit)
		}
		switch {
		case s.Kind == StepKeyBy && s.Function == "" && s.Field == "":
			bad(f+".field", "a key_by step needs a field (a dotted path into the JSON value) or a function exporting eddy_key")
		case s.Kind == StepKeyBy && s.Function != "" && s.Field != "":
			bad(f+".field", "give field or function, not both")
		case s.Kind != StepKeyBy && s.Field != "":
			bad(f+".field", "only a key_by step has a field")
		case s.Kind != StepKeyBy && s.Kind != StepJoin && s.Function == "":
			bad(f+".function", "is required: the path of a .wasm file")
		}
		if s.Field != "" {
			if _, err := newFieldKey(s.Field); err != nil {
				bad(f+".field", "%v", err)
			}
		}
		if s.Kind == StepKeyBy && s.State {
			bad(f+".state", "a key_by step keeps no state")
		}
		if names[s.Name] {
			bad(f+".name", "%q is used by an earlier step", s.Name)
		}
		names[s.Name] = true
	}
	tables := map[string]bool{}
	for i, t := range p.Tables {
		f := fmt.Sprintf("tables[%d]", i)
		switch {
		case t.Name == "":
			bad(f+".name", "is required")
		case tables[t.Name]:
			bad(f+".name", "%q is used by an earlier table", t.Name)
		}
		tables[t.Name] = true
		if !topicRE.MatchString(t.Topic) {
			bad(f+".topic", "%q is not a valid topic name", t.Topic)
		}
		if slices.Contains(p.Source.Topics, t.Topic) || t.Topic == p.Sink.Topic {
			bad(f+".topic", "%q is also a source or the sink topic", t.Topic)
		}
	}
	if p.Sink.Topic == "" {
		bad("sink.topic", "is required")
	} else if !topicRE.MatchString(p.Sink.Topic) {
		bad("sink.topic", "%q is not a valid topic name", p.Sink.Topic)
	}
	for _, t := range p.Source.Topics {
		if t == p.Sink.Topic {
			bad("sink.topic", "%q is also a source topic: the pipeline would read its own output", t)
		}
	}
	if p.DeadLetter.Topic != "" && !topicRE.MatchString(p.DeadLetter.Topic) {
		bad("dead_letter.topic", "%q is not a valid topic name", p.DeadLetter.Topic)
	}
	switch p.Delivery {
	case AtMostOnce, AtLeastOnce, ExactlyOnce:
	default:
		bad("delivery", "must be at_most_once, at_least_once or exactly_once, got %q", p.Delivery)
	}
	if p.CommitInterval < time.Millisecond {
		bad("commit_interval", "must be at least 1ms, got %s", p.CommitInterval)
	}
	if p.BatchSize < 1 || p.BatchSize > 100000 {
		bad("batch_size", "must be between 1 and 100000, got %d", p.BatchSize)
	}
	l := p.Limits
	if l.MemoryLimit < 64<<10 || l.MemoryLimit > 2<<30-64<<10 {
		bad("limits.memory_limit", "must be between 64KiB and just under 2GiB, got %d bytes", l.MemoryLimit)
	}
	if l.CallTimeout <= 0 {
		bad("limits.call_timeout", "must be positive, got %s", l.CallTimeout)
	}
	if l.QueueSize < 1 {
		bad("limits.queue_size", "must be at least 1, got %d", l.QueueSize)
	}
	switch l.Overload {
	case OverloadBlock, OverloadDrop:
	case OverloadSample:
		if l.SampleRate <= 0 || l.SampleRate > 1 {
			bad("limits.sample_rate", "must be in (0, 1] with overload: sample, got %g", l.SampleRate)
		}
	default:
		bad("limits.overload", "must be block, drop or sample, got %q", l.Overload)
	}
	return errors.Join(errs...)
}

// validateJoin checks a join step.
func (p *Pipeline) validateJoin(f string, s Step, bad func(field, format string, args ...any)) {
	switch {
	case s.Table == "" && s.Stream == "":
		bad(f+".table", "a join step joins a table (table: NAME) or another stream (stream: TOPIC)")
	case s.Table != "" && s.Stream != "":
		bad(f+".table", "give table or stream, not both")
	case s.Table != "" && p.table(s.Table) == nil:
		bad(f+".table", "no table %q in tables", s.Table)
	case s.Stream != "" && !topicRE.MatchString(s.Stream):
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
		bad(f+".type", "must be inner, left or outer, got %q", s.Type)
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
	return pipeline + "-" + step + repartitionSuffix
}

const repartitionSuffix = "-repartition"

// Stage is a run of consecutive steps that a task applies to the records of
// one input topic. A pipeline without repartitioning has one stage, from
// its source topics to its sink. A stateful step that follows a key_by step
// starts a new stage: the stage before it ends by writing its records to the
// key_by step's repartition topic, partitioned by their new key, and the new
// stage reads that topic, so that each key's state lives in one task.
type Stage struct {
	Inputs   []string // the topics this stage consumes
	From, To int      // its steps: Steps[From:To]
	Output   string   // where its records go: a repartition topic, or the sink
	Last     bool     // Output is the sink
	// Sides maps the inputs that a join step of the stage reads (a
	// co-partitioned table's topic, the other stream of a stream-stream
	// join) to that step; the other inputs run through the stage from its
	// first step.
	Sides map[string]int
}

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
		case p.keyedByPartition(s) && keyed != "":
			cur.To, cur.Output = i, RepartitionTopic(p.Name, keyed)
			stages = append(stages, cur)
			cur = Stage{Inputs: []string{cur.Output}, From: i}
			keyed = ""
		}
	}
	cur.To, cur.Output, cur.Last = len(p.Steps), p.Sink.Topic, true
	stages = append(stages, cur)
	// A join step's other input is read by the tasks of its stage.
	for i := range stages {
		st := &stages[i]
		for s := st.From; s < st.To; s++ {
			step := p.Steps[s]
			if step.Kind != StepJoin {
				continue
			}
			topic := step.Stream
			if t := p.table(step.Table); t != nil && !t.Global {
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

// keyedByPartition reports whether a step needs each key's records in one
// partition: keyed state, windows, a join with another stream or with a
// table that is not global.
func (p *Pipeline) keyedByPartition(s Step) bool {
	if s.Kind == StepJoin && s.Table != "" {
		t := p.table(s.Table)
		return t == nil || !t.Global
	}
	return s.stateful()
}

// table returns the named table, or nil.
func (p *Pipeline) table(name string) *Table {
	for i := range p.Tables {
		if p.Tables[i].Name == name {
			return &p.Tables[i]
		}
	}
	return nil
}
