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
// leave its memory bounded. When the manifest names one of the reference
// functions (guests/<lang>/), their exact behaviour is checked as well:
// outputs, per-record error codes, state calls, counters and logging.
package conformance

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
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
}

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
	logs := &logSink{}
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
		return nil, err
	}
	defer fn.Close(context.WithoutCancel(ctx))
	start := time.Now()
	s := &suite{ctx: ctx, fn: fn, logs: logs, calls: opts.Calls}
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
			return nil, err
		}
		logs.reset()
		detail, err := c.run(inst)
		inst.Close(context.WithoutCancel(ctx))
		if ctx.Err() != nil {
			return nil, ctx.Err()
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
	ctx   context.Context
	fn    *runtime.Function
	logs  *logSink
	calls int
}

// cases lists the cases that apply to the module's kinds and name.
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
	if ref, ok := references[m.Name]; ok {
		for _, c := range ref {
			c := c
			add("reference/"+m.Name+"/"+c.name, func(i *runtime.Instance) (string, error) { return c.run(s, i) })
		}
	}
	return cs
}

// logSink captures the function's log records.
type logSink struct {
	mu    sync.Mutex
	lines []logLine
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
	l.lines = append(l.lines, line)
	l.mu.Unlock()
	return nil
}

func (l *logSink) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *logSink) WithGroup(string) slog.Handler      { return l }

func (l *logSink) reset() {
	l.mu.Lock()
	l.lines = nil
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
