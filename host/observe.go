package host

import (
	"context"
	"math"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// This file keeps what the node knows of its progress, for its status (GET
// /v1/status, the dashboard) and its metrics: per input partition the
// offset processed and the end of the log at the last fetch; per task the
// records in and out and its event-time watermark.

// inputProgress is the node's view of one partition it reads.
type inputProgress struct {
	next atomic.Int64 // offset after the last record processed; -1 before any
	end  atomic.Int64 // the partition's last stable offset at the last fetch; -1 before any
	// dispatched is the offset after the last data record handed to a
	// task, control the offset after the last transaction marker read.
	dispatched, control atomic.Int64
}

// position is the offset after the last record processed, or after the
// markers that follow it when every record read is processed.
func (p *inputProgress) position() int64 {
	next := p.next.Load()
	if c := p.control.Load(); c > 0 && c > next && p.dispatched.Load() <= max(next, 0) {
		return c
	}
	return next
}

// progressMap holds the inputProgress of every partition the node has read.
type progressMap struct {
	mu sync.Mutex
	m  map[topicPartition]*inputProgress
}

func (pm *progressMap) get(topic string, part int32) *inputProgress {
	pm.mu.Lock()
	defer pm.mu.Unlock()
	k := topicPartition{topic, part}
	p := pm.m[k]
	if p == nil {
		if pm.m == nil {
			pm.m = map[topicPartition]*inputProgress{}
		}
		p = &inputProgress{}
		p.next.Store(-1)
		p.end.Store(-1)
		pm.m[k] = p
	}
	return p
}

// dropControl returns the fetched partition's records without its
// transaction markers, noting how far the records and the markers go.
// Called with n.mu held.
func (n *Node) dropControl(fp kgo.FetchTopicPartition) []*kgo.Record {
	recs := fp.Records
	p := n.progress.get(fp.Topic, fp.Partition)
	for i, r := range recs {
		if !r.Attrs.IsControl() {
			continue
		}
		// Copy the data records out (rarely more than a few markers).
		data := slices.Clone(recs[:i])
		for _, r := range recs[i:] {
			if r.Attrs.IsControl() {
				p.control.Store(r.Offset + 1)
			} else {
				data = append(data, r)
			}
		}
		recs = data
		break
	}
	if len(recs) > 0 {
		p.dispatched.Store(recs[len(recs)-1].Offset + 1)
	}
	return recs
}

// taskCounters are a task's own counts, kept beside the node's totals.
type taskCounters struct {
	in, out atomic.Int64
	// watermark is the event-time watermark of the task's first windowed
	// step (aggregate or stream-stream join), math.MinInt64 without one
	// or before any record.
	watermark atomic.Int64
}

// observe records what processing b taught: the input's offset and the
// task's watermark.
func (t *task) observe(b *batch) {
	if len(b.records) > 0 {
		t.n.progress.get(b.records[0].Topic, t.part).next.Store(b.last.Offset + 1)
	}
	t.noteWatermark()
}

// noteWatermark publishes the watermark of the task's first windowed step
// (restored, for a new task). Called by the task's goroutine, or before it
// starts.
func (t *task) noteWatermark() {
	wm := int64(math.MinInt64)
	for i := range t.windows {
		if tw := t.windows[i]; tw != nil {
			wm = tw.agg.watermark()
			break
		}
		if tj := t.joins[i]; tj != nil && tj.win != nil {
			wm = tj.win.Watermark()
			break
		}
	}
	t.counters.watermark.Store(wm)
}

// TaskStatus is one task of the node: a stage of the pipeline on one
// partition.
type TaskStatus struct {
	Stage     int           `json:"stage"`
	Partition int32         `json:"partition"`
	In        int64         `json:"in"`  // records taken from its inputs
	Out       int64         `json:"out"` // records written to its output
	Inputs    []InputStatus `json:"inputs"`
	// Watermark is the event time (ms, UTC) the task's windows have
	// reached; absent for a stage without windows or before any record.
	Watermark *int64 `json:"watermark,omitempty"`
}

// InputStatus is a task's progress on one input partition.
type InputStatus struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	// Offset is the next offset to process, End the end of the log at the
	// last fetch (-1 until known), Lag the records between them.
	Offset int64 `json:"offset"`
	End    int64 `json:"end"`
	Lag    int64 `json:"lag"`
}

// taskStatuses returns the status of every task of the node, by stage then
// partition.
func (n *Node) taskStatuses() []TaskStatus {
	n.mu.Lock()
	tasks := make([]*task, 0, len(n.mu.groups))
	for _, t := range n.mu.groups {
		tasks = append(tasks, t)
	}
	n.mu.Unlock()
	committed := map[string]map[int32]kgo.EpochOffset{}
	if cl := n.clientLoaded.Load(); cl != nil {
		committed = cl.CommittedOffsets()
	}
	out := make([]TaskStatus, 0, len(tasks))
	for _, t := range tasks {
		ts := TaskStatus{Stage: t.key.stage, Partition: t.part, In: t.counters.in.Load(), Out: t.counters.out.Load(),
			Inputs: []InputStatus{}}
		if wm := t.counters.watermark.Load(); wm != math.MinInt64 {
			ts.Watermark = &wm
		}
		for _, in := range t.stage.Inputs {
			p := n.progress.get(in, t.part)
			is := InputStatus{Topic: in, Partition: t.part, Offset: p.position(), End: p.end.Load()}
			if c, ok := committed[in][t.part]; ok && c.Offset > is.Offset {
				is.Offset = c.Offset // nothing processed here since the group's last commit
			}
			if is.Offset >= 0 && is.End >= 0 {
				is.Lag = max(is.End-is.Offset, 0)
			}
			ts.Inputs = append(ts.Inputs, is)
		}
		out = append(out, ts)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Stage != out[j].Stage {
			return out[i].Stage < out[j].Stage
		}
		return out[i].Partition < out[j].Partition
	})
	return out
}

// Graph is the pipeline's shape, for drawing it: its inputs, steps in
// order (each in the stage that runs it), and outputs.
type Graph struct {
	Sources    []string     `json:"sources"`
	Tables     []GraphTable `json:"tables"`
	Steps      []GraphStep  `json:"steps"`
	Stages     []GraphStage `json:"stages"`
	Sink       string       `json:"sink"`
	DeadLetter string       `json:"dead_letter,omitempty"`
	Late       string       `json:"late,omitempty"`
}

// GraphTable is a table the pipeline joins.
type GraphTable struct {
	Name   string `json:"name"`
	Topic  string `json:"topic"`
	Global bool   `json:"global"`
}

// GraphStep is one step: what it does, in a word or two each.
type GraphStep struct {
	Name     string   `json:"name"`
	Kind     StepKind `json:"kind"`
	Stage    int      `json:"stage"`
	Function string   `json:"function,omitempty"` // the pipeline file's module (its base name) or native:NAME
	Field    string   `json:"field,omitempty"`    // key_by on a field
	Window   string   `json:"window,omitempty"`   // e.g. "tumbling 10s"
	Join     string   `json:"join,omitempty"`     // e.g. "table persons", "stream clicks (left)"
	State    bool     `json:"state,omitempty"`
	To       string   `json:"to,omitempty"`   // the topic the step's output is also written to
	From     []string `json:"from,omitempty"` // the steps it reads (from:), when not the previous one
	// Of names the branch step whose branch this step is, or the step
	// whose named output it is (its From is then the step that feeds it:
	// the branch before, whose dropped records it reads, or that step).
	Of string `json:"of,omitempty"`
}

// GraphStage is a stage: the steps one task runs, between topics.
type GraphStage struct {
	Inputs []string `json:"inputs"`
	Output string   `json:"output"`
	From   int      `json:"from"` // its steps: Steps[From:To]
	To     int      `json:"to"`
}

// sendsLate reports whether the pipeline can send records to its late
// topic: whether it has windows that close, an aggregate's (all but a
// global window, which never closes) or a stream-stream join's. Every
// pipeline has a late topic by default; a stateless one never writes to
// it, and its graph leaves it out.
func sendsLate(p *Pipeline) bool {
	return slices.ContainsFunc(p.Steps, func(s Step) bool {
		return s.Window != nil && (s.Kind == StepAggregate && s.Window.Type != "global" || s.Kind == StepJoin && s.Stream != "")
	})
}

// graph describes the node's pipeline.
func (n *Node) graph() Graph {
	p := n.p
	g := Graph{Sources: p.Source.Topics, Tables: []GraphTable{}, Steps: []GraphStep{}, Stages: []GraphStage{},
		Sink: p.Sink.Topic, DeadLetter: p.DeadLetter.Topic}
	if sendsLate(p) {
		g.Late = p.Late.Topic
	}
	for _, t := range p.Tables {
		g.Tables = append(g.Tables, GraphTable{Name: t.Name, Topic: t.Topic, Global: t.Global})
	}
	stageOf := make([]int, len(p.Steps))
	for i, st := range n.stages {
		g.Stages = append(g.Stages, GraphStage{Inputs: st.Inputs, Output: st.Output, From: st.From, To: st.To})
		for s := st.From; s < st.To; s++ {
			stageOf[s] = i
		}
	}
	fedBy := map[int]string{} // a step whose input another puts in place: that step
	for _, s := range p.Steps {
		for _, f := range s.Part.Feeds {
			fedBy[f] = s.Name
		}
	}
	for i, s := range p.Steps {
		gs := GraphStep{Name: s.Name, Kind: s.Kind, Stage: stageOf[i], Field: s.Field, State: s.State, To: s.To, From: s.From, Of: s.Part.Of}
		if by, ok := fedBy[i]; ok {
			gs.From = []string{by}
		}
		if s.Function != "" {
			gs.Function = filepath.Base(s.Function)
			if strings.HasPrefix(s.Function, NativePrefix) {
				gs.Function = s.Function
			}
		}
		if w := s.Window; w != nil {
			gs.Window = w.Type
			switch {
			case w.Type == "hopping":
				gs.Window += " " + w.Size.String() + "/" + w.Advance.String()
			case w.Type == "session":
				gs.Window += " gap " + w.Gap.String()
			case w.Size > 0:
				gs.Window += " " + w.Size.String()
			}
		}
		switch {
		case s.Table != "":
			gs.Join = "table " + s.Table
		case s.Stream != "":
			gs.Join = "stream " + s.Stream
		}
		if gs.Join != "" && s.Type != "" {
			gs.Join += " (" + string(s.Type) + ")"
		}
		g.Steps = append(g.Steps, gs)
	}
	return g
}

// refreshEnds reads the end (last stable offset) of every input partition
// the node owns, for partitions that have fetched nothing lately: a caught-up
// partition returns no records, so its end would otherwise be unknown. At
// most once a second. It waits for the broker's answer at most endsWait
// (or until ctx ends): a busy broker (one serving restores, say) must not
// hold status up; a later answer still updates the ends, for the next
// status.
func (n *Node) refreshEnds(ctx context.Context) {
	cl := n.clientLoaded.Load()
	if cl == nil || n.workCtx == nil || time.Since(time.Unix(0, n.endsRead.Load())) < time.Second {
		return
	}
	n.endsRead.Store(time.Now().UnixNano())
	done := make(chan struct{})
	go func() {
		defer close(done)
		// The node's work context: the listing ends with the node, and
		// within 2 s.
		lctx, cancel := context.WithTimeout(n.workCtx, 2*time.Second)
		defer cancel()
		ends, err := kadm.NewClient(cl).ListCommittedOffsets(lctx, n.inputs()...)
		if err != nil {
			return // the status says what the fetches said
		}
		ends.Each(func(o kadm.ListedOffset) {
			if o.Err == nil {
				p := n.progress.get(o.Topic, o.Partition)
				if o.Offset > p.end.Load() {
					p.end.Store(o.Offset)
				}
			}
		})
	}()
	t := time.NewTimer(endsWait)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	case <-ctx.Done():
	}
}

// endsWait is how long a status waits for the broker's input ends.
const endsWait = 50 * time.Millisecond
