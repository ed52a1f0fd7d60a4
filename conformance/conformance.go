// Package conformance drives a guest module through the standard cases of the
// guest ABI, so that a new language SDK, or a user's function, proves itself
// by passing them (`eddy conformance FN.wasm`).
//
// Generic cases hold for any function of a kind: batches of 0, 1 and many
// records give the same per-record results as one record at a time; null and
// empty keys and values, values of 1 MiB and more, binary payloads, headers and
// unicode are handled without a call failure (a function may refuse a record
// with an error code, but not trap on it); it runs with and without keyed
// state; aggregates merge consistently; and 100,000 calls on one instance
// leave its memory bounded. Options.Reference names one of the reference
// functions (guests/<lang>/) whose exact behaviour is checked as well:
// outputs, per-record error codes, state calls, counters and logging. It is
// never inferred from the module's name: a correct function that happens to
// be called upper is not the reference upper.
package conformance

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/runtime"
)

// Options configure a run.
type Options struct {
	// Calls is the number of calls of the memory-bound case. Default 100000.
	Calls int
	// Engine options for loading the module (cache, limits).
	Engine []runtime.Option
	// Timeout bounds the whole run: past it, Run stops the case under way
	// and returns an error naming it. Default DefaultTimeout; negative: no
	// bound.
	Timeout time.Duration
	// Reference, when set, is the reference function (see References)
	// whose exact behaviour the module must also have.
	Reference string
	// Logger, when set, receives the guest's log lines at debug level,
	// with the case they were logged in.
	Logger *slog.Logger
}

// References returns the names of the reference functions that
// Options.Reference may name.
func References() []string {
	return slices.Sorted(maps.Keys(references))
}

// DefaultTimeout is the default Options.Timeout: generous for the 100,000
// calls of the memory cases through a slow guest, finite for one that never
// ends a call or logs without end.
const DefaultTimeout = 10 * time.Minute

// Bounds of the guest log lines a case keeps: past them lines are counted,
// not kept, so a guest that logs without end cannot exhaust memory.
const (
	maxKeptLines = 10_000
	maxKeptBytes = 1 << 20
)

// Result is the outcome of one case.
type Result struct {
	Case   string
	Passed bool
	Detail string // why it failed, or what was measured
}

// Report is the outcome of a run.
type Report struct {
	Function string
	Manifest abi.Manifest
	Results  []Result
	Elapsed  time.Duration
}

// Passed reports whether every case passed.
func (r *Report) Passed() bool {
	for _, c := range r.Results {
		if !c.Passed {
			return false
		}
	}
	return len(r.Results) > 0
}

// Run loads wasm and runs every case that applies to its kinds. An error means
// the module could not be loaded at all (that is also a failure).
func Run(ctx context.Context, name string, wasm []byte, opts Options) (*Report, error) {
	if opts.Calls <= 0 {
		opts.Calls = 100000
	}
	if _, ok := references[opts.Reference]; opts.Reference != "" && !ok {
		return nil, fmt.Errorf("no reference function %q; there are %s", opts.Reference, strings.Join(References(), ", "))
	}
	if opts.Timeout == 0 {
		opts.Timeout = DefaultTimeout
	}
	parent := ctx
	if opts.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, opts.Timeout)
		defer cancel()
	}
	// stopped is the error of a run cut short: the caller's, or the limit's.
	stopped := func(during string) error {
		if parent.Err() != nil {
			return parent.Err()
		}
		return fmt.Errorf("conformance: stopped %s after %s, the run's time limit: %w", during, opts.Timeout, ctx.Err())
	}
	logs := &logSink{out: opts.Logger}
	// The suite checks behaviour, not speed: calls get a generous deadline
	// (4 MiB values through a loop-heavy guest on a loaded machine), unless
	// the caller sets one.
	engOpts := append([]runtime.Option{runtime.WithLogger(slog.New(logs)), runtime.WithLogRate(1 << 20),
		runtime.WithCallTimeout(30 * time.Second)}, opts.Engine...)
	eng, err := runtime.NewEngine(engOpts...)
	if err != nil {
		return nil, err
	}
	defer eng.Close(context.WithoutCancel(ctx))
	fn, err := eng.Load(ctx, name, wasm)
	if err != nil {
		if ctx.Err() != nil {
			return nil, stopped("loading the module")
		}
		return nil, err
	}
	defer fn.Close(context.WithoutCancel(ctx))
	start := time.Now()
	s := &suite{ctx: ctx, fn: fn, logs: logs, calls: opts.Calls, reference: opts.Reference, eng: eng, name: name, wasm: wasm}
	rep := &Report{Function: name, Manifest: fn.Manifest()}
	timedOut := ""
	for _, c := range s.cases() {
		if timedOut != "" {
			// A function whose calls do not end would take a deadline per
			// call of every case, and of every bisection step inside it.
			rep.Results = append(rep.Results, Result{Case: c.name, Detail: "not run: case " + timedOut + " timed out"})
			continue
		}
		inst, err := fn.NewInstance(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil, stopped("in case " + c.name)
			}
			return nil, err
		}
		logs.reset(c.name)
		detail, err := c.run(inst)
		inst.Close(context.WithoutCancel(ctx))
		if ctx.Err() != nil {
			return nil, stopped("in case " + c.name)
		}
		r := Result{Case: c.name, Passed: err == nil, Detail: detail}
		if err != nil {
			r.Detail = err.Error()
			if errors.Is(err, runtime.ErrTimeout) {
				timedOut = c.name
			}
		}
		rep.Results = append(rep.Results, r)
	}
	rep.Elapsed = time.Since(start)
	return rep, nil
}

type testCase struct {
	name string
	run  func(*runtime.Instance) (detail string, err error)
}

type suite struct {
	ctx context.Context
	fn  *runtime.Function
	// eng loads the module again (name, wasm) with other options, such
	// as a config.
	eng       *runtime.Engine
	name      string
	wasm      []byte
	logs      *logSink
	calls     int
	reference string
}

// cases lists the cases that apply to the module's kinds, and those of the
// reference function asked for.
func (s *suite) cases() []testCase {
	m := s.fn.Manifest()
	var cs []testCase
	add := func(name string, run func(*runtime.Instance) (string, error)) {
		cs = append(cs, testCase{name, run})
	}
	if m.Has(abi.KindProcess) {
		add("process/batch-sizes", s.processBatchSizes)
		add("process/edge-records", s.processEdges)
		add("process/large-values", s.processLarge)
		add("process/with-and-without-state", s.processState)
		add("process/memory-bounded", s.processMemory)
	}
	if m.Has(abi.KindAggregate) {
		add("aggregate/init", s.aggInit)
		add("aggregate/merge-consistency", s.aggMerge)
		add("aggregate/edge-records", s.aggEdges)
		add("aggregate/memory-bounded", s.aggMemory)
	}
	if m.Has(abi.KindJoin) {
		add("join/batch-sizes", s.joinBatchSizes)
	}
	if m.Has(abi.KindKey) {
		add("key/batch-sizes", s.extractBatchSizes(abi.KindKey))
	}
	if m.Has(abi.KindTimestamp) {
		add("timestamp/batch-sizes", s.extractBatchSizes(abi.KindTimestamp))
	}
	if m.Has(abi.KindTimer) {
		add("timer/batch-sizes", s.timerBatchSizes)
	}
	for _, c := range references[s.reference] {
		add("reference/"+s.reference+"/"+c.name, func(i *runtime.Instance) (string, error) { return c.run(s, i) })
	}
	return cs
}

// logSink captures the function's log records, and passes them on to out
// at debug level.
type logSink struct {
	out     *slog.Logger
	mu      sync.Mutex
	lines   []logLine
	bytes   int    // of the kept lines' text
	dropped int    // lines past maxKeptLines or maxKeptBytes
	running string // the case running
}

type logLine struct {
	level slog.Level
	msg   string
	text  string
}

func (l *logSink) Enabled(context.Context, slog.Level) bool { return true }

func (l *logSink) Handle(_ context.Context, r slog.Record) error {
	line := logLine{level: r.Level, msg: r.Message}
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "text" {
			line.text = a.Value.String()
		}
		return true
	})
	l.mu.Lock()
	if len(l.lines) < maxKeptLines && l.bytes+len(line.text) <= maxKeptBytes {
		l.lines = append(l.lines, line)
		l.bytes += len(line.text)
	} else {
		l.dropped++
	}
	c := l.running
	l.mu.Unlock()
	if l.out != nil && l.out.Enabled(context.Background(), slog.LevelDebug) {
		attrs := []any{"case", c, "level_logged", r.Level.String()}
		r.Attrs(func(a slog.Attr) bool {
			attrs = append(attrs, a)
			return true
		})
		l.out.Debug(r.Message, attrs...)
	}
	return nil
}

func (l *logSink) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *logSink) WithGroup(string) slog.Handler      { return l }

func (l *logSink) reset(c string) {
	l.mu.Lock()
	l.lines, l.bytes, l.dropped = nil, 0, 0
	l.running = c
	l.mu.Unlock()
}

func (l *logSink) guestLines() []logLine {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []logLine
	for _, x := range l.lines {
		if x.msg == "guest log" {
			out = append(out, x)
		}
	}
	return out
}

func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }
