package graph

import (
	"slices"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/pipeline"
)

// stepOutputs holds the outputs of a stage's steps over one batch when its
// steps name their inputs (Step.From): each step's input is then the
// outputs of the steps it names, merged in the order named, instead of the
// previous step's output. A pipeline without from: runs its steps as a
// chain and never makes one.
type stepOutputs struct {
	from    int // the stage's first step
	stageIn []abi.Record
	inSrc   []int32
	outs    [][]abi.Record // by step - from
	srcs    [][]int32
	// fedIns are the inputs put in place for the steps of branches and
	// named outputs (Step.Part.Feeds), by step - from.
	fedIns  [][]abi.Record
	fedSrcs [][]int32
}

// newStepOutputs starts a batch entering stage st at step first with cur
// (src: the input record each descends from): the stage's input when first
// is the stage's first step, else the output of step first-1 (a join's
// other input enters at the join, window results after their aggregate).
func newStepOutputs(st pipeline.Stage, first int, cur []abi.Record, src []int32) *stepOutputs {
	o := &stepOutputs{from: st.From, outs: make([][]abi.Record, st.To-st.From), srcs: make([][]int32, st.To-st.From)}
	if first == st.From {
		o.stageIn, o.inSrc = cur, src
	} else {
		o.set(first-1, cur, src)
	}
	return o
}

// set records the output of step s.
func (o *stepOutputs) set(s int, cur []abi.Record, src []int32) {
	o.outs[s-o.from], o.srcs[s-o.from] = cur, src
}

// feed puts cur in place as the input of step s (a step of a branch or a
// named output).
func (o *stepOutputs) feed(s int, cur []abi.Record, src []int32) {
	if o.fedIns == nil {
		o.fedIns, o.fedSrcs = make([][]abi.Record, len(o.outs)), make([][]int32, len(o.outs))
	}
	o.fedIns[s-o.from], o.fedSrcs[s-o.from] = cur, src
}

// fed returns the input put in place for step s.
func (o *stepOutputs) fed(s int) ([]abi.Record, []int32) {
	if o.fedIns == nil {
		return nil, nil
	}
	return o.fedIns[s-o.from], o.fedSrcs[s-o.from]
}

func (o *stepOutputs) get(s int) ([]abi.Record, []int32) {
	if s < 0 {
		return o.stageIn, o.inSrc
	}
	return o.outs[s-o.from], o.srcs[s-o.from]
}

// input returns the input of a step that reads the outputs of ins (-1: the
// stage's input): one step's output as it is, several merged in order.
func (o *stepOutputs) input(ins []int) ([]abi.Record, []int32) {
	if len(ins) == 1 {
		return o.get(ins[0])
	}
	n := 0
	for _, j := range ins {
		cur, _ := o.get(j)
		n += len(cur)
	}
	cur, src := make([]abi.Record, 0, n), make([]int32, 0, n)
	for _, j := range ins {
		c, s := o.get(j)
		cur, src = append(cur, c...), append(src, s...)
	}
	return cur, src
}

// route splits the output of step s, whose function names outputs: each
// record whose abi.HeaderOutput header names one of them goes to that
// output's step (without the header), the others stay. It returns the
// records that stay and, per output, the records routed there; a record
// naming no output of the step fails its input record (bad).
func routeRecords(outputs []pipeline.Output, cur []abi.Record, src []int32, parts [][]abi.Record, partSrc [][]int32,
	bad func(j int, name string)) ([]abi.Record, []int32) {
	keep := cur[:0]
	keepSrc := src[:0]
	for j := range cur {
		name, at := outputHeader(cur[j].Headers)
		if at < 0 {
			keep, keepSrc = append(keep, cur[j]), append(keepSrc, src[j])
			continue
		}
		k := slices.IndexFunc(outputs, func(o pipeline.Output) bool { return o.Name == name })
		if k < 0 {
			bad(j, name)
			continue
		}
		r := cur[j]
		if at == len(r.Headers)-1 {
			// Where every SDK's helper puts it: cut it off, no copy.
			r.Headers = r.Headers[:at:at]
		} else {
			// The guest's header slice may be shared (a native function
			// that returns its input's): take it out of a copy.
			r.Headers = slices.Delete(slices.Clone(r.Headers), at, at+1)
		}
		parts[k], partSrc[k] = append(parts[k], r), append(partSrc[k], src[j])
	}
	return keep, keepSrc
}

// outputHeader finds a record's abi.HeaderOutput header: its value and
// index (-1 without one). The first one counts.
func outputHeader(hs []abi.Header) (string, int) {
	for i, h := range hs {
		if h.Key == abi.HeaderOutput {
			return string(h.Value), i
		}
	}
	return "", -1
}
