// Package graph runs one stage of a pipeline's step graph over the records
// of one partition: it calls each step's function, checks what the function
// returned against the step's kind (a map returns one record per input, a
// filter at most one), feeds the steps of branches and named outputs, merges
// the inputs of steps that name several, and says which input record every
// output descends from.
//
// It knows the pipeline file (package pipeline) and the guest runtime, and
// nothing of Kafka or of the node: what the steps make goes back to the
// caller, and everything else a stage needs of its driver comes through
// Deps — where a failed record goes (Collector), the steps that keep state
// (Operators: key_by, aggregates and joins own stores and changelogs), and
// the metrics (Meter). Which version of a function runs is the driver's
// choice too: it sets Executor.Steps[s].Instance when it swaps one. Two
// drivers use it: host's Node (Kafka, transactions) and its in-process
// driver (eddy test). The lint test keeps franz-go out of this package.
package graph

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/join"
	"github.com/eddy-streams/eddy/pipeline"
	"github.com/eddy-streams/eddy/runtime"
)

// Collector takes what a stage's steps give off besides their output.
type Collector interface {
	// Fail reports that record j of cur, the input of step s, failed
	// with e. src[j] is the stage input it descends from (-1: a window
	// result, which descends from no one input record).
	Fail(ctx context.Context, s int, cur []abi.Record, src []int32, j int, e *runtime.Error)
	// Tap receives cur, the output of step s, after every step that ran;
	// a driver writes it to the step's to: topic when it has one.
	Tap(ctx context.Context, s int, cur []abi.Record, src []int32)
}

// Operators run the steps that keep state or need the driver's time:
// their stores, changelogs and windows belong to the driver. Each returns
// the step's output and the input record each output descends from.
type Operators interface {
	KeyBy(ctx context.Context, s int, cur []abi.Record, src []int32) ([]abi.Record, []int32, error)
	// Aggregate folds cur into step s's windows and returns the window
	// results it made (their src -1).
	Aggregate(ctx context.Context, s int, cur []abi.Record, src []int32) ([]abi.Record, []int32, error)
	// Join runs step s over cur, entering it on side.
	Join(ctx context.Context, s int, side join.Side, cur []abi.Record, src []int32) ([]abi.Record, []int32, error)
	// The timers of a step that has them (pipeline.Step.Timed: a map,
	// filter or flat_map step with state; ABI.md "Timers"). The executor
	// runs such a step's function over a batch in segments, firing the
	// timers that are due before each (runTimed).
	//
	// FireTimers fires step s's timers that are due and returns what
	// they made (end: every record of the batch has run). Segment returns how many records of in (at least one)
	// the next call of step s's function takes: no timer known may
	// become due through the records before the last; and it arms the
	// check of the timers that call sets (one due before the call's last
	// record makes the call fail with runtime.ErrSplitCall, and the
	// executor asks again for fewer). Advance moves step s's watermark
	// past in, records its function ran over.
	FireTimers(ctx context.Context, s int, end bool) ([]abi.Record, error)
	Segment(s int, in []abi.Record, src []int32) int
	Advance(s int, in []abi.Record, src []int32)
}

// Meter counts and times the steps. Steps run one after another: Enter is
// called before each step with the records it receives and the number the
// step before it returned (its own output, which is not the next step's
// input when steps name their inputs), Leave after the last with its
// output. Dropped counts the records a step's function filtered out.
type Meter interface {
	Enter(s, in, prevOut int)
	Leave(out int)
	Dropped(s, n int)
}

// Deps are what an Executor needs of its driver.
type Deps struct {
	Collector Collector
	Operators Operators
	Meter     Meter
}

// Func is the function a step runs in one executor.
type Func struct {
	Instance *runtime.Instance // nil: the step runs no function
	Name     string            // the function's name, for errors
}

// Executor runs the steps of one stage for one partition. It is not safe
// for concurrent use: a partition's batches run one after another.
type Executor struct {
	steps []pipeline.Step
	stage pipeline.Stage
	ins   [][]int // the steps' inputs (Pipeline.StepInputs); nil for a chain
	deps  Deps

	// Steps are the functions the stage's steps run, by step index of
	// the pipeline; the driver replaces one when it swaps versions.
	Steps []Func
	// ShadowAt is the step whose input Run returns in Result.ShadowIn
	// (a shadow version runs on it), or -1.
	ShadowAt int

	// retracts: an aggregate of the pipeline emits retractions
	// (pipeline.Retractions), whose mark a function's outputs inherit.
	retracts bool

	outs []runtime.Output // per step: a step's output stays valid while the next runs
	// timedOuts are the outputs of the segments of a step with timers
	// (runTimed), valid until the next batch.
	timedOuts []runtime.Output
	counts    []int32 // RunFunction's count of outputs per input of the step it ran last
}

// New makes the executor of stage st of p.
func New(p *pipeline.Pipeline, st pipeline.Stage, deps Deps) *Executor {
	e := &Executor{steps: p.Steps, stage: st, deps: deps,
		Steps: make([]Func, len(p.Steps)), ShadowAt: -1, outs: make([]runtime.Output, len(p.Steps))}
	if !p.Chain() {
		// Each batch keeps its steps' outputs; a chain needs none of it.
		e.ins = p.StepInputs()
	}
	emits, _ := p.Retractions()
	e.retracts = slices.Contains(emits, true)
	return e
}

// Output is step s's reusable output buffer (a shadow of a later step
// reuses it after Run).
func (e *Executor) Output(s int) *runtime.Output { return &e.outs[s] }

// Result is what a stage's steps made of a batch.
type Result struct {
	// Out is the stage's output (the records its output topic gets) and
	// Src the stage input each descends from (-1: a window result or what
	// later steps made of one).
	Out []abi.Record
	Src []int32
	// ShadowIn is the input of step ShadowAt, when it ran.
	ShadowIn  []abi.Record
	ShadowSrc []int32
}

// Run runs cur through the stage's steps from first, side being the join
// side cur enters a join step on (join.Left unless first is a join's other
// input). src[i] is the stage input record cur[i] descends from.
func (e *Executor) Run(ctx context.Context, first int, side join.Side, cur []abi.Record, src []int32) (Result, error) {
	return e.run(ctx, first, side, cur, src, false)
}

// RunAfter runs out, records step s made outside a run of its own (its
// timers' firings on a tick, its windows' results at the end of the
// input), through what follows step s as if s had just made them: its
// named outputs, its taps, and the steps after it. src[i] is as for Run
// (-1: no stage input record).
func (e *Executor) RunAfter(ctx context.Context, s int, out []abi.Record, src []int32) (Result, error) {
	return e.run(ctx, s, join.Left, out, src, true)
}

// run is Run, or, with after, RunAfter of step first.
func (e *Executor) run(ctx context.Context, first int, side join.Side, cur []abi.Record, src []int32, after bool) (Result, error) {
	var res Result
	var graph *stepOutputs // steps that name their inputs
	if e.ins != nil {
		if after {
			graph = newStepOutputs(e.stage, first, nil, nil) // no stage input
		} else {
			graph = newStepOutputs(e.stage, first, cur, src)
		}
	}
	m := e.deps.Meter
	for s := first; s < e.stage.To; s++ {
		step := &e.steps[s]
		if after && s == first {
			// cur is step s's output already.
			m.Enter(s, 0, 0)
			if step.Part.Feeds != nil {
				cur, src = e.feedParts(ctx, s, graph, nil, nil, cur, src)
			}
			e.deps.Collector.Tap(ctx, s, cur, src)
			continue
		}
		prevOut := len(cur) // step s-1's output
		if graph != nil {
			if s > first {
				graph.set(s-1, cur, src)
			}
			if step.Part.Fed {
				cur, src = graph.fed(s)
			} else {
				cur, src = graph.input(e.ins[s])
			}
		}
		m.Enter(s, len(cur), prevOut)
		var err error
		switch step.Kind {
		case pipeline.StepOutput:
			// A branch without a function, or a named output: what was
			// put in place for it goes on.
		case pipeline.StepJoin:
			cur, src, err = e.deps.Operators.Join(ctx, s, side, cur, src)
			side = join.Left
		case pipeline.StepAggregate:
			cur, src, err = e.deps.Operators.Aggregate(ctx, s, cur, src)
		case pipeline.StepKeyBy:
			cur, src, err = e.deps.Operators.KeyBy(ctx, s, cur, src)
		default:
			if e.ShadowAt == s {
				res.ShadowIn, res.ShadowSrc = cur, src
			}
			in, inSrc := cur, src
			var dropped int
			if step.Timed() {
				cur, src, dropped, err = e.runTimed(ctx, s, in, inSrc)
			} else {
				cur, src, dropped, _, err = e.RunFunction(ctx, s, e.Steps[s], &e.outs[s], in, inSrc, true)
			}
			if err != nil {
				return res, err
			}
			m.Dropped(s, dropped)
			if step.Part.Feeds != nil {
				cur, src = e.feedParts(ctx, s, graph, in, inSrc, cur, src)
			}
		}
		if err != nil {
			return res, fmt.Errorf("step %s: %w", step.Name, err)
		}
		e.deps.Collector.Tap(ctx, s, cur, src)
	}
	m.Leave(len(cur))
	if graph != nil && e.stage.Out != e.stage.To-1 {
		// The stage ends with named outputs or branches: its output is
		// its last step of the pipeline file's, if it has one.
		cur, src = nil, nil
		if e.stage.Out >= 0 {
			cur, src = graph.get(e.stage.Out)
		}
	}
	res.Out, res.Src = cur, src
	return res, nil
}

// RunFunction runs fn, step s's function (a map, filter or flat_map), over
// cur into out and returns its output records with the input record each
// descends from, how many inputs it filtered out and how many failed. A
// record the function failed on, or for which it returned more records than
// the step's kind allows, fails: its outputs are left out, and it is
// reported to the Collector when report is set (a shadow version's
// failures are only counted).
func (e *Executor) RunFunction(ctx context.Context, s int, fn Func, out *runtime.Output, cur []abi.Record, src []int32,
	report bool) (next []abi.Record, nsrc []int32, dropped, nfailed int, err error) {
	out.Reset()
	if err := fn.Instance.Process(ctx, cur, out); err != nil {
		return nil, nil, 0, 0, fmt.Errorf("step %s: %w", e.steps[s].Name, err)
	}
	fail := func(j int, err *runtime.Error) {
		if report {
			e.deps.Collector.Fail(ctx, s, cur, src, j, err)
		}
	}
	// counts[i] is the number of outputs of input i, -1 once it failed;
	// a branch's filter step reads it after (feedParts).
	const failedMark = -1
	counts := slices.Grow(e.counts[:0], len(cur))[:len(cur)]
	clear(counts)
	e.counts = counts
	for _, f := range out.Failed {
		if counts[f.Index] != failedMark {
			counts[f.Index] = failedMark
			nfailed++
		}
		fail(f.Index, f)
	}
	for _, f := range out.From {
		if counts[f] >= 0 {
			counts[f]++
		}
	}
	kind := e.steps[s].Kind
	for i, c := range counts {
		switch {
		case c == failedMark:
		case kind == pipeline.StepFlatMap || kind == pipeline.StepMap && c == 1 || kind == pipeline.StepFilter && c <= 1:
			// The step's cardinality: map exactly one, filter at most one.
			if c == 0 {
				dropped++
			}
		default:
			counts[i] = failedMark
			nfailed++
			fail(i, &runtime.Error{Function: fn.Name, Kind: abi.KindProcess,
				Cause: runtime.CauseGuest, Code: abi.CodeRejected, Index: i, Group: -1,
				Reason: fmt.Sprintf("%s step returned %d records for one input", kind, c)})
		}
	}
	if e.retracts {
		markRetractions(cur, out)
	}
	next = out.Records[:0:0]
	if nfailed == 0 {
		// The usual case: every output goes on.
		next = out.Records
		nsrc = make([]int32, len(out.Records))
		for j, f := range out.From {
			nsrc[j] = src[f]
		}
	} else {
		nsrc = make([]int32, 0, len(out.Records))
		for j := range out.Records {
			f := out.From[j]
			if counts[f] == failedMark {
				continue
			}
			next = append(next, out.Records[j])
			nsrc = append(nsrc, src[f])
		}
	}
	return next, nsrc, dropped, nfailed, nil
}

// runTimed runs step s, which has timers, over in: the timers due before
// each record fire before the function sees it, as if it ran record by
// record, but the function is called once for as many records as that
// allows (Operators.Segment). The output is in order: what the timers made
// (src -1) and the function's outputs, segment after segment.
func (e *Executor) runTimed(ctx context.Context, s int, in []abi.Record, inSrc []int32) (out []abi.Record, src []int32, dropped int, err error) {
	ops := e.deps.Operators
	fire := func(end bool) error {
		recs, err := ops.FireTimers(ctx, s, end)
		if err != nil {
			return fmt.Errorf("step %s: timers: %w", e.steps[s].Name, err)
		}
		for _, r := range recs {
			out, src = append(out, r), append(src, -1)
		}
		return nil
	}
	if err := fire(len(in) == 0); err != nil {
		return nil, nil, 0, err
	}
	for seg, pos := 0, 0; pos < len(in); seg++ {
		if len(e.timedOuts) <= seg {
			e.timedOuts = append(e.timedOuts, runtime.Output{})
		}
		n := ops.Segment(s, in[pos:], inSrc[pos:])
		var next []abi.Record
		var nsrc []int32
		var d int
		for {
			next, nsrc, d, _, err = e.RunFunction(ctx, s, e.Steps[s], &e.timedOuts[seg], in[pos:pos+n], inSrc[pos:pos+n], true)
			if n > 1 && errors.Is(err, runtime.ErrSplitCall) {
				// A timer the call set is due before its last record.
				n = ops.Segment(s, in[pos:pos+n/2], inSrc[pos:pos+n/2])
				continue
			}
			break
		}
		if err != nil {
			return nil, nil, 0, err
		}
		if pos == 0 && n == len(in) && len(out) == 0 {
			out, src = next, nsrc // the usual case: one call, no copy
		} else {
			out, src = append(out, next...), append(src, nsrc...)
		}
		dropped += d
		ops.Advance(s, in[pos:pos+n], inSrc[pos:pos+n])
		pos += n
		if err := fire(pos == len(in)); err != nil {
			return nil, nil, 0, err
		}
	}
	return out, src, dropped, nil
}

// markRetractions marks as a retraction every output of an input that is
// one (abi.HeaderRetract): what a step makes of a retracted result is
// taken back with it, whatever headers the function gave its outputs.
func markRetractions(in []abi.Record, out *runtime.Output) {
	for j, f := range out.From {
		r := &out.Records[j]
		if abi.IsRetraction(in[f].Headers) && !abi.IsRetraction(r.Headers) {
			r.Headers = append(slices.Clip(r.Headers), abi.Header{Key: abi.HeaderRetract, Value: []byte("true")})
		}
	}
}

// feedParts puts in place the inputs of the steps that step s feeds
// (Step.Part.Feeds) and returns what stays its own output (cur, src). A
// branch's filter step feeds the next branch with the records of in that
// it dropped (neither kept nor failed: RunFunction's counts); a step with
// named outputs routes its output records (routeRecords), and a record
// naming an output the step does not have fails the input it descends
// from, once.
func (e *Executor) feedParts(ctx context.Context, s int, graph *stepOutputs, in []abi.Record, inSrc []int32,
	cur []abi.Record, src []int32) ([]abi.Record, []int32) {
	step := &e.steps[s]
	if step.Part.Branch {
		var rest []abi.Record
		var restSrc []int32
		for j, c := range e.counts[:len(in)] {
			if c == 0 {
				rest, restSrc = append(rest, in[j]), append(restSrc, inSrc[j])
			}
		}
		graph.feed(step.Part.Feeds[0], rest, restSrc)
		return cur, src
	}
	parts, partSrc := make([][]abi.Record, len(step.Outputs)), make([][]int32, len(step.Outputs))
	var failed map[int32]bool
	keep, keepSrc := routeRecords(step.Outputs, cur, src, parts, partSrc, func(j int, name string) {
		if src[j] >= 0 {
			if failed[src[j]] {
				return
			}
			if failed == nil {
				failed = map[int32]bool{}
			}
			failed[src[j]] = true
		}
		name = abi.TruncateReason(name, 256)
		e.deps.Collector.Fail(ctx, s, cur, src, j, &runtime.Error{Function: e.Function(s), Kind: abi.KindProcess,
			Cause: runtime.CauseGuest, Code: abi.CodeRejected, Index: j, Group: -1,
			Reason: fmt.Sprintf("the record names output %q (header %s), which step %s does not have (its outputs: %s)",
				name, abi.HeaderOutput, step.Name, strings.Join(step.Parts(), ", "))})
	})
	for k, f := range step.Part.Feeds {
		graph.feed(f, parts[k], partSrc[k])
	}
	return keep, keepSrc
}

// Function names step s's function for errors (the step's name when it
// runs none).
func (e *Executor) Function(s int) string {
	if name := e.Steps[s].Name; name != "" {
		return name
	}
	return e.steps[s].Name
}
