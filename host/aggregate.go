package host

import (
	"context"
	"strconv"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/windowing"
)

// taskWindows is an aggregate step's windowing in a task.
type taskWindows struct {
	agg *aggregator
	out aggOutput
}

// newTaskWindows builds the aggregator of step s for a task whose store has
// been restored.
func (t *task) newTaskWindows(_ context.Context, s int, ts *taskStore) (*taskWindows, error) {
	cfg, err := t.windowConfig(s)
	if err != nil {
		return nil, err
	}
	agg, err := newAggregator(cfg, ts.st, t.insts[s], t.fns[s].fn.Name(), t.part)
	if err != nil {
		return nil, err
	}
	if err := t.byInputs(agg); err != nil {
		return nil, err
	}
	return &taskWindows{agg: agg}, nil
}

// aggregate runs records through an aggregate step: it returns the window
// results to output; late records go to the late topic and refused ones to
// the dead-letter topic, as the input records they descend from.
func (t *task) aggregate(ctx context.Context, b *batch, s int, cur []abi.Record, src []int32) ([]abi.Record, error) {
	tw := t.windows[s]
	out := &tw.out
	t.batchSrc = src
	if err := tw.agg.process(ctx, cur, out); err != nil {
		return nil, err
	}
	for _, e := range out.Failed {
		t.deadLetter(ctx, b, b.records[src[e.Index]], s, e)
	}
	wm := tw.agg.watermark()
	for i, l := range out.Late {
		t.late(ctx, b, b.records[src[out.LateFrom[i]]], l, wm)
	}
	return windowResults(out.Emits, wm), nil
}

// windowResults turns window emissions into records: timestamp end - 1
// (the watermark for a global window), eddy.window.* headers. A nil result
// (the function emitted nothing) makes no record.
func windowResults(emits []windowing.Emit, wm int64) []abi.Record {
	results := make([]abi.Record, 0, len(emits))
	for _, e := range emits {
		if e.Value == nil {
			continue
		}
		ts := e.Window.End - 1
		if e.Window == windowing.GlobalWindow {
			ts = wm
		}
		results = append(results, abi.Record{Key: e.Key, Value: e.Value, Timestamp: ts, Headers: []abi.Header{
			{Key: "eddy.window.start", Value: strconv.AppendInt(nil, e.Window.Start, 10)},
			{Key: "eddy.window.end", Value: strconv.AppendInt(nil, e.Window.End, 10)},
			{Key: "eddy.window.final", Value: strconv.AppendBool(nil, e.Final)},
		}})
	}
	return results
}

// late sends a record later than its window's grace to the late topic.
func (t *task) late(ctx context.Context, b *batch, orig *kgo.Record, l windowing.Late, wm int64) {
	n := t.n
	n.stats.late.Add(1)
	r := &kgo.Record{Topic: n.p.Late.Topic, Key: orig.Key, Value: orig.Value, Timestamp: orig.Timestamp,
		Headers: append(append([]kgo.RecordHeader(nil), orig.Headers...),
			kgo.RecordHeader{Key: "eddy.window.start", Value: strconv.AppendInt(nil, l.Window.Start, 10)},
			kgo.RecordHeader{Key: "eddy.window.end", Value: strconv.AppendInt(nil, l.Window.End, 10)},
			kgo.RecordHeader{Key: "eddy.watermark", Value: strconv.AppendInt(nil, wm, 10)},
			kgo.RecordHeader{Key: "eddy.event.time", Value: strconv.AppendInt(nil, l.Time, 10)},
			kgo.RecordHeader{Key: "eddy.source.topic", Value: []byte(orig.Topic)},
			kgo.RecordHeader{Key: "eddy.source.partition", Value: []byte(strconv.Itoa(int(orig.Partition)))},
			kgo.RecordHeader{Key: "eddy.source.offset", Value: []byte(strconv.FormatInt(orig.Offset, 10))},
		)}
	t.produce(ctx, b, r)
}

// saveWatermarks records each window step's watermark in its store, so that
// it reaches the changelog with the transaction.
func (t *task) saveWatermarks() error {
	if err := t.saveJoinWatermarks(); err != nil {
		return err
	}
	for _, tw := range t.windows {
		if tw == nil {
			continue
		}
		if err := tw.agg.saveWatermark(); err != nil {
			return err
		}
	}
	return nil
}
