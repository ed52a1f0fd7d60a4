package host

import (
	"context"
	"math"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/windowing"
)

// taskWindows is an aggregate step's windowing in a task.
type taskWindows struct {
	agg   *aggregator
	out   aggOutput
	grace int64 // the windows' grace, ms
}

// newTaskWindows builds the aggregator of step s for a task whose store has
// been restored.
func (t *task) newTaskWindows(_ context.Context, s int, ts *taskStore) (*taskWindows, error) {
	cfg, err := t.windowConfig(s)
	if err != nil {
		return nil, err
	}
	sk := t.n.skipper(s, ts.topic, t.part)
	defer sk.done()
	agg, err := newAggregator(cfg, ts.st, t.inst(s), t.fns[s].fn.Name(), t.part, func(k []byte, err error) { sk.bad(k, err) })
	if err != nil {
		return nil, err
	}
	agg.store.limit, agg.store.changelog, agg.store.name = t.n.recordLimit(ts.topic), ts.topic, t.fns[s].fn.Name()
	if agg.discarded > 0 {
		t.n.log.Warn("window store: deleted windows outside the valid event-time range", "step", t.n.p.Steps[s].Name,
			"partition", t.part, "windows", agg.discarded)
	}
	step := t.n.p.Steps[s].Name
	agg.store.lost = func(key []byte, w windowing.Window, err error) {
		t.n.metrics.steps[s].lostResults.Add(1)
		t.n.log.Warn("window result dropped: the function failed on it and no record asked for it",
			"step", step, "partition", t.part, "key", brief(key), "window", w.String(), "error", abi.TruncateReason(err.Error(), 4*maxLoggedBytes))
	}
	if err := t.byInputs(agg, sk); err != nil {
		return nil, err
	}
	agg.store.retracts, agg.store.members = t.n.emits[s], t.n.folds[s]
	return &taskWindows{agg: agg, grace: cfg.Grace.Milliseconds()}, nil
}

// resultsBound is the least event time that a window result this task has
// yet to emit can have: its aggregate step's watermark less the grace. A
// window closes once the watermark passes its end plus the grace, and its
// result is stamped end - 1, so a window still open ends after the
// watermark less the grace. A stage whose records feed the next stage's
// windows announces it downstream as its progress (runSteps), so that the
// next stage's windows close although this one sends no record: its
// windows closed without results, a filter after them dropped the results,
// or its newest records opened windows that stay open. MinInt64 when the
// stage has no aggregate step or its watermark is not set yet.
func (t *task) resultsBound() int64 {
	bound := int64(math.MaxInt64)
	for s := t.stage.From; s < t.stage.To; s++ {
		tw := t.windows[s]
		if tw == nil {
			continue
		}
		wm := tw.agg.watermark()
		if windowing.CheckTime(wm) != nil || windowing.CheckTime(wm-tw.grace) != nil {
			return math.MinInt64
		}
		bound = min(bound, wm-tw.grace)
	}
	if bound == math.MaxInt64 {
		return math.MinInt64
	}
	return bound
}

// aggregate runs records through an aggregate step: it returns the window
// results to output; late records go to the late topic and refused ones to
// the dead-letter topic, as the input records they descend from.
func (t *task) aggregate(ctx context.Context, b *batch, s int, cur []abi.Record, src []int32) ([]abi.Record, error) {
	tw := t.windows[s]
	out := &tw.out
	cur, src = t.refuseOversized(ctx, b, s, abi.KindAggregate, cur, src)
	t.batchSrc = src
	if err := tw.agg.process(ctx, cur, out); err != nil {
		return nil, err
	}
	for _, e := range out.Failed {
		t.deadLetter(ctx, b, b.records[src[e.Index]], s, e)
	}
	wm := tw.agg.watermark()
	for i, l := range out.Late {
		t.late(ctx, b, s, b.records[src[out.LateFrom[i]]], l, wm)
	}
	return t.windowRecords(tw, out.Emits, wm)
}

// windowRecords turns window emissions into records, with retractions before the
// updates of a step that emits them (retract.go).
func (t *task) windowRecords(tw *taskWindows, emits []windowing.Emit, wm int64) ([]abi.Record, error) {
	if !tw.agg.store.retracts {
		return windowResults(emits, wm), nil
	}
	return t.withRetractions(tw.agg.store, emits, wm)
}

// windowResults turns window emissions into records (windowResult). A nil
// result (the function emitted nothing) makes no record.
func windowResults(emits []windowing.Emit, wm int64) []abi.Record {
	results := make([]abi.Record, 0, len(emits))
	for i := range emits {
		if emits[i].Value != nil {
			results = append(results, windowResult(&emits[i], wm))
		}
	}
	return results
}

// windowResult is the record of emission e: its result, timestamped end - 1
// (the watermark wm for a global window), with eddy.window.* headers.
func windowResult(e *windowing.Emit, wm int64) abi.Record {
	ts := e.Window.End - 1
	if e.Window == windowing.GlobalWindow {
		ts = wm
	}
	return abi.Record{Key: e.Key, Value: e.Value, Timestamp: ts, Headers: []abi.Header{
		{Key: "eddy.window.start", Value: strconv.AppendInt(nil, e.Window.Start, 10)},
		{Key: "eddy.window.end", Value: strconv.AppendInt(nil, e.Window.End, 10)},
		{Key: "eddy.window.final", Value: strconv.AppendBool(nil, e.Final)},
	}}
}

// late sends a record later than its window's grace to the late topic.
func (t *task) late(ctx context.Context, b *batch, s int, orig *kgo.Record, l windowing.Late, wm int64) {
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
	t.produceLate(ctx, b, r, orig, s)
}

// produceLate sends r, the late copy of orig (late at step s), to the late
// topic; a copy larger than the topic accepts (orig's topic may take bigger
// records, and the late headers come on top) is dead-lettered instead,
// where deadLetterRecord bounds it.
func (t *task) produceLate(ctx context.Context, b *batch, r, orig *kgo.Record, s int) {
	if why, cause, bad := t.n.unproducible(r, "late record", time.Now()); bad {
		t.n.stats.late.Add(-1)
		t.deadLetter(ctx, b, orig, s, t.unproducibleError(s, cause, why))
		return
	}
	t.produce(ctx, b, r)
}

// saveWatermarks records each window step's watermark in its store, so that
// it reaches the changelog with the transaction.
func (t *task) saveWatermarks() error {
	if err := t.saveJoinWatermarks(); err != nil {
		return err
	}
	for s, tm := range t.timers {
		// A function without timers leaves its timer store as it is: no
		// changelog record, no checkpoint of an unused store.
		if tm != nil && (t.inst(s).Has(abi.KindTimer) || len(tm.idx.set) > 0) {
			if err := tm.save(); err != nil {
				return err
			}
		}
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
