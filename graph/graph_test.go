package graph_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/graph"
	"github.com/eddy-streams/eddy/join"
	"github.com/eddy-streams/eddy/pipeline"
	"github.com/eddy-streams/eddy/runtime"
)

// driver is a test's driver of an executor: it records what the executor
// hands its Collector and Meter, and runs a key_by step by setting the key
// to the value (the Operators of a real driver own stores; these steps
// keep none).
type driver struct {
	failed  []string // "step:value:reason"
	tapped  map[int][]string
	entered []string // "step in/prevOut"
	left    int
	dropped map[int]int
}

func (d *driver) Fail(_ context.Context, s int, cur []abi.Record, src []int32, j int, e *runtime.Error) {
	d.failed = append(d.failed, fmt.Sprintf("%d:%s:%d:%s", s, cur[j].Value, src[j], e.Reason))
}

func (d *driver) Tap(_ context.Context, s int, cur []abi.Record, _ []int32) {
	for _, r := range cur {
		d.tapped[s] = append(d.tapped[s], string(r.Value))
	}
}

func (d *driver) KeyBy(_ context.Context, _ int, cur []abi.Record, src []int32) ([]abi.Record, []int32, error) {
	out := slices.Clone(cur)
	for i := range out {
		out[i].Key = out[i].Value
	}
	return out, src, nil
}

func (d *driver) Aggregate(context.Context, int, []abi.Record, []int32) ([]abi.Record, []int32, error) {
	return nil, nil, errors.New("no aggregate in this test")
}

func (d *driver) FireTimers(context.Context, int, bool) ([]abi.Record, error) { return nil, nil }
func (d *driver) Segment(_ int, in []abi.Record, _ []int32) int               { return len(in) }
func (d *driver) Advance(int, []abi.Record, []int32)                          {}

func (d *driver) Join(context.Context, int, join.Side, []abi.Record, []int32) ([]abi.Record, []int32, error) {
	return nil, nil, errors.New("no join in this test")
}

func (d *driver) Enter(s, in, prevOut int) {
	d.entered = append(d.entered, fmt.Sprintf("%d %d/%d", s, in, prevOut))
}
func (d *driver) Leave(out int)    { d.left = out }
func (d *driver) Dropped(s, n int) { d.dropped[s] += n }

// natives are the test's functions, by name (function: "native:<name>").
var natives = map[string]runtime.Native{
	// route sends "o…" values to output objects, "n…" to numbers, "x…"
	// to an output the step does not have; the rest stay.
	"route": {Process: func(r *abi.Record, emit func(abi.Record)) error {
		out := *r
		switch r.Value[0] {
		case 'o':
			out.Headers = []abi.Header{{Key: abi.HeaderOutput, Value: []byte("objects")}}
		case 'n':
			out.Headers = []abi.Header{{Key: abi.HeaderOutput, Value: []byte("numbers")}}
		case 'x':
			out.Headers = []abi.Header{{Key: abi.HeaderOutput, Value: []byte("nowhere")}}
		}
		emit(out)
		return nil
	}},
	// short keeps values of at most 3 bytes, fails on "o!".
	"short": {Process: func(r *abi.Record, emit func(abi.Record)) error {
		if string(r.Value) == "o!" {
			return errors.New("bang")
		}
		if len(r.Value) <= 3 {
			emit(*r)
		}
		return nil
	}},
	// twice is a map that returns two records for "nn" (a map's
	// cardinality error), one otherwise.
	"twice": {Process: func(r *abi.Record, emit func(abi.Record)) error {
		emit(abi.Record{Value: append([]byte("t:"), r.Value...)})
		if string(r.Value) == "nn" {
			emit(abi.Record{Value: []byte("again")})
		}
		return nil
	}},
}

func newExecutor(t *testing.T, src string, d graph.Deps) (*graph.Executor, *pipeline.Pipeline) {
	t.Helper()
	p, err := pipeline.ParsePipeline("g.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	stages := p.Stages()
	if len(stages) != 1 {
		t.Fatalf("%d stages", len(stages))
	}
	eng, err := runtime.NewEngine()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close(context.Background()) })
	e := graph.New(p, stages[0], d)
	for s, step := range p.Steps {
		name, ok := strings.CutPrefix(step.Function, "native:")
		if !ok {
			continue
		}
		fn, err := eng.LoadNative(name, natives[name])
		if err != nil {
			t.Fatal(err)
		}
		inst, err := fn.NewInstance(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { inst.Close(context.Background()) })
		e.Steps[s] = graph.Func{Instance: inst, Name: name}
	}
	return e, p
}

// TestExecutorGraph runs one batch through named outputs, a branch and a
// merge, and checks each step's input and output, the records' sources,
// the failures (an unknown output, a function's error, a map's second
// record) and what the Meter was told.
func TestExecutorGraph(t *testing.T) {
	d := &driver{tapped: map[int][]string{}, dropped: map[int]int{}}
	e, p := newExecutor(t, `name: g
source: {topics: [in]}
steps:
  - {name: route, kind: map, function: "native:route", outputs: [objects, numbers]}
  - name: kinds
    kind: branch
    from: [route.objects]
    branches:
      - {name: small, function: "native:short", to: small}
      - {name: rest}
  - {name: tag, kind: map, function: "native:twice", from: [kinds.rest, route.numbers, route]}
  - {name: keyed, kind: key_by, field: v}
sink: {topic: out}
dead_letter: {topic: dlq}
`, graph.Deps{Collector: d, Operators: d, Meter: d})
	steps := map[string]int{}
	for s, step := range p.Steps {
		steps[step.Name] = s
	}
	in := []string{"o1", "n2", "w3", "oooo", "x5", "o!", "nn", "w8"}
	cur := make([]abi.Record, len(in))
	src := make([]int32, len(in))
	for i, v := range in {
		cur[i] = abi.Record{Value: []byte(v)}
		src[i] = int32(i) + 100
	}
	res, err := e.Run(context.Background(), 0, join.Left, cur, src)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for i, r := range res.Out {
		out = append(out, fmt.Sprintf("%s<%d key=%s", r.Value, res.Src[i], r.Key))
	}
	// tag reads kinds.rest, then route.numbers, then what route kept.
	want := []string{"t:oooo<103 key=t:oooo", "t:n2<101 key=t:n2", "t:w3<102 key=t:w3", "t:w8<107 key=t:w8"}
	if !slices.Equal(out, want) {
		t.Errorf("output\n%v, want\n%v", out, want)
	}
	wantFailed := []string{
		fmt.Sprintf("%d:x5:104:the record names output \"nowhere\" (header eddy.output), which step route does not have (its outputs: objects, numbers)", steps["route"]),
		fmt.Sprintf("%d:o!:105:bang", steps["kinds.small"]),
		fmt.Sprintf("%d:nn:106:map step returned 2 records for one input", steps["tag"]),
	}
	if !slices.Equal(d.failed, wantFailed) {
		t.Errorf("failed\n%q, want\n%q", d.failed, wantFailed)
	}
	for name, want := range map[string][]string{
		"route":         {"w3", "w8"},
		"route.objects": {"o1", "oooo", "o!"},
		"route.numbers": {"n2", "nn"},
		"kinds.small":   {"o1"},
		"kinds.rest":    {"oooo"},
	} {
		if got := d.tapped[steps[name]]; !slices.Equal(got, want) {
			t.Errorf("step %s put out %v, want %v", name, got, want)
		}
	}
	// kinds.small's filter dropped "oooo" (kept o1, failed on o!), which
	// then went on to kinds.rest: the step's metrics count it dropped.
	if got := d.dropped[steps["kinds.small"]]; got != 1 {
		t.Errorf("kinds.small dropped %d, want 1", got)
	}
	if d.left != 4 {
		t.Errorf("the meter left with %d records, want 4", d.left)
	}
	var entered []string
	for _, s := range d.entered {
		f := strings.Fields(s)
		i, _ := strconv.Atoi(f[0])
		entered = append(entered, p.Steps[i].Name+" "+f[1])
	}
	// A step's prevOut is the output of the step before it in the file:
	// route keeps w3 and w8 (x5 failed), kinds.small keeps o1.
	wantEntered := []string{"route 8/8", "route.objects 3/2", "route.numbers 2/3",
		"kinds.small 3/2", "kinds.rest 1/1", "tag 5/1", "keyed 4/4"}
	if !slices.Equal(entered, wantEntered) {
		t.Errorf("meter\n%v, want\n%v", entered, wantEntered)
	}
}
