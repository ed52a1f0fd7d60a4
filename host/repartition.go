package host

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/eddy-streams/eddy/abi"
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
// topic to an aggregate step.
func (n *Node) feedsWindows(st Stage) bool {
	return !st.Last && n.p.Steps[st.To].Kind == StepAggregate
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
func (t *task) readRepartitioned(b *batch) (in []abi.Record, src, from []int32, marks []progress, err error) {
	from = make([]int32, len(b.records))
	for i, r := range b.records {
		a := abi.Record{Key: r.Key, Value: r.Value, Timestamp: r.Timestamp.UnixMilli()}
		var at int64
		mark := false
		for _, h := range r.Headers {
			switch h.Key {
			case hdrFrom:
				var f int64
				f, err = strconv.ParseInt(string(h.Value), 10, 32)
				from[i] = int32(f)
			case hdrProgress:
				mark = true
				at, err = strconv.ParseInt(string(h.Value), 10, 64)
			default:
				a.Headers = append(a.Headers, abi.Header{Key: h.Key, Value: h.Value})
			}
			if err != nil {
				return nil, nil, nil, nil, fmt.Errorf("%s[%d] offset %d: header %s: %w", r.Topic, r.Partition, r.Offset, h.Key, err)
			}
		}
		if mark {
			marks = append(marks, progress{from: from[i], time: at})
			continue
		}
		in = append(in, a)
		src = append(src, int32(i))
	}
	return in, src, from, marks, nil
}

// sendProgress sends a progress marker to every partition of the stage's
// repartition topic for the batch's input, when its event time has advanced
// since the last.
func (t *task) sendProgress(ctx context.Context, b *batch, maxTime int64) {
	topic := b.records[0].Topic
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
		t.produce(ctx, b, &kgo.Record{Topic: t.stage.Output, Partition: part, Timestamp: time.UnixMilli(p.max),
			Headers: []kgo.RecordHeader{{Key: hdrFrom, Value: from}, {Key: hdrProgress, Value: at}}})
	}
}

// progressSent is an input's largest event time sent downstream, and the
// last one announced in a progress marker.
type progressSent struct {
	max, at int64
	sent    bool
}
