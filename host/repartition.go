package host

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/runtime"
)

// Records on a repartition topic that feeds an aggregate step carry
// hdrFrom, the upstream input (an index over the upstream stage's topic
// partitions) they come from, and already carry their event time as their
// timestamp. After each batch an upstream task also sends every partition a
// progress marker — no key, no value, hdrFrom and hdrProgress, the largest
// event time it has sent — so that the downstream windows keep one
// watermark per upstream input, as if they read the source partitions
// directly: results do not depend on how the upstream tasks' batches
// interleave, and a downstream partition that an upstream task sends no
// record to is not held back by it.
const (
	hdrFrom     = "eddy.repartition.from"
	hdrProgress = "eddy.repartition.progress"
)

func isProgress(hs []kgo.RecordHeader) bool {
	for _, h := range hs {
		if h.Key == hdrProgress {
			return true
		}
	}
	return false
}

// progress is a marker read from a repartition topic.
type progress struct {
	from int32
	time int64
}

// feedsWindows reports whether the stage's records go through a repartition
// topic to an aggregate step or a step with timers: the next stage keeps a
// watermark per upstream input, from the records' eddy.repartition.from
// header and the progress markers.
func (n *Node) feedsWindows(st Stage) bool {
	return !st.Last && (n.p.Steps[st.To].Kind == StepAggregate || n.p.Steps[st.To].Timed())
}

// upstreamInputs is how many upstream inputs feed a downstream stage's
// windows: every partition of every topic of the stage before it.
func (n *Node) upstreamInputs(st Stage) int32 {
	for i, s := range n.stages {
		if s.From == st.From && i > 0 {
			return int32(len(n.stages[i-1].Inputs)) * n.parts
		}
	}
	return 0
}

// upstreamID is the index of this task's partition of topic among the
// upstream inputs of the next stage.
func (t *task) upstreamID(topic string) int32 {
	for i, in := range t.stage.Inputs {
		if in == topic {
			return int32(i)*t.n.parts + t.part
		}
	}
	return t.part
}

// readRepartitioned splits a batch read from a repartition topic into its
// records, with src their index in b.records, and its progress markers;
// from[i] is the upstream input of b.records[i].
//
// Anyone who can write to the topic can put anything there, so the headers
// are checked: a record whose upstream input is not a number or not one of
// the task's inputs goes to the dead-letter topic (from the stage's first
// step); such a progress marker is skipped and counted (corrupt.go). A
// record without hdrFrom counts as input 0's. Only a stage whose windows
// keep a watermark per upstream input (byUpstream) looks at hdrFrom.
//
// # Forged progress markers
//
// A well-formed marker cannot be told from the upstream task's: one that
// names a valid input with a time ahead of the records does move that
// input's watermark (never backwards: a watermark only rises), and with
// it, once the other inputs are there too, the task watermark, closing
// windows early. What the checks guarantee is that a marker cannot stop
// the node, add inputs, or hold the watermark back. The repartition topics
// are the pipeline's own, like its changelogs: Kafka ACLs must keep other
// principals from writing them (docs/security.md).
func (t *task) readRepartitioned(ctx context.Context, b *batch) (in []abi.Record, src, from []int32, marks []progress) {
	from = make([]int32, len(b.records))
	var sk *skipper
	for i, r := range b.records {
		a := abi.Record{Key: r.Key, Value: r.Value, Timestamp: r.Timestamp.UnixMilli()}
		f, at, mark, err := t.parseRepartitionHeaders(r, &a)
		if mark {
			if err != nil {
				if sk == nil {
					sk = t.n.skipper(t.stage.From, r.Topic, r.Partition)
					defer sk.done()
				}
				sk.skip(corruptProgress, r.Key, fmt.Errorf("progress marker at offset %d: %w", r.Offset, err))
				continue
			}
			marks = append(marks, progress{from: f, time: at})
			continue
		}
		if err != nil {
			t.deadLetter(ctx, b, r, t.stage.From, &runtime.Error{Function: t.n.p.Steps[t.stage.From].Name, Kind: abi.KindProcess,
				Cause: runtime.CauseGuest, Code: abi.CodeBadInput, Index: i, Group: -1, Reason: err.Error()})
			continue
		}
		from[i] = f
		in = append(in, a)
		src = append(src, int32(i))
	}
	return in, src, from, marks
}

// parseRepartitionHeaders reads the eddy.repartition.* headers of r, and
// appends its other headers to a. mark says whether r is a progress
// marker; from is its upstream input, at a marker's time. An error says
// what is wrong with the headers; it does not quote them beyond a bound.
func (t *task) parseRepartitionHeaders(r *kgo.Record, a *abi.Record) (from int32, at int64, mark bool, err error) {
	hasFrom := false
	for _, h := range r.Headers {
		switch h.Key {
		case hdrFrom:
			hasFrom = true
			if !t.byUpstream || err != nil {
				continue
			}
			var f int64
			if f, err = strconv.ParseInt(string(h.Value), 10, 32); err != nil {
				err = fmt.Errorf("header %s %s: not an input number", hdrFrom, brief(h.Value))
			} else if !t.hasInput(int32(f)) {
				err = fmt.Errorf("header %s %d: not one of the %d upstream inputs", hdrFrom, f, len(t.inputs))
			}
			from = int32(f)
		case hdrProgress:
			mark = true
			var perr error
			if at, perr = strconv.ParseInt(string(h.Value), 10, 64); perr != nil && err == nil {
				err = fmt.Errorf("header %s %s: not an event time", hdrProgress, brief(h.Value))
			}
		default:
			a.Headers = append(a.Headers, abi.Header{Key: h.Key, Value: h.Value})
		}
	}
	if mark && t.byUpstream && !hasFrom && err == nil {
		err = fmt.Errorf("no %s header", hdrFrom)
	}
	return from, at, mark, err
}

// sendProgress sends a progress marker to every partition of the stage's
// repartition topic for the batch's input, when its event time has advanced
// since the last.
func (t *task) sendProgress(ctx context.Context, b *batch, topic string, maxTime int64) {
	if t.progress == nil {
		t.progress = map[string]progressSent{}
	}
	p := t.progress[topic]
	if p.max = max(p.max, maxTime); p.sent && p.max <= p.at {
		t.progress[topic] = p
		return
	}
	p.sent, p.at = true, p.max
	t.progress[topic] = p
	from := []byte(strconv.Itoa(int(t.upstreamID(topic))))
	at := []byte(strconv.FormatInt(p.max, 10))
	for part := range t.n.parts {
		mark := &kgo.Record{Topic: t.stage.Output, Partition: part, Timestamp: time.UnixMilli(p.max),
			Headers: []kgo.RecordHeader{{Key: hdrFrom, Value: from}, {Key: hdrProgress, Value: at}}}
		t.n.restamp(mark) // its event time is in hdrProgress
		t.produce(ctx, b, mark)
	}
}

// progressSent is an input's largest event time sent downstream, and the
// last one announced in a progress marker.
type progressSent struct {
	max, at int64
	sent    bool
}
