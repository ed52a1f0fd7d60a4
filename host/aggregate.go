package host

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/runtime"
	"github.com/eddy-streams/eddy/state"
	"github.com/eddy-streams/eddy/windowing"
)

// windowing returns the step's windowing configuration.
func (s *Step) windowing() (windowing.Config, error) {
	w := s.Window
	var spec windowing.Spec
	switch w.Type {
	case "tumbling":
		spec = windowing.Tumbling(w.Size)
	case "hopping":
		spec = windowing.Hopping(w.Size, w.Advance)
	case "sliding":
		spec = windowing.Sliding(w.Size)
	case "session":
		spec = windowing.Session(w.Gap)
	case "global":
		spec = windowing.GlobalCount(w.Count)
	default:
		return windowing.Config{}, fmt.Errorf("type must be tumbling, hopping, sliding, session or global, got %q", w.Type)
	}
	if w.Zone != "" {
		loc, err := time.LoadLocation(w.Zone)
		if err != nil {
			return windowing.Config{}, fmt.Errorf("zone: %w", err)
		}
		spec = spec.In(loc)
	}
	cfg := windowing.Config{Window: spec, Disorder: w.Disorder, Grace: w.Grace, IdleTimeout: w.IdleTimeout, Retention: w.Retention}
	if s.Emit == "update" {
		cfg.Emit = windowing.EmitUpdate
	}
	if s.TimeField != "" {
		ex, err := windowing.NewJSONField(s.TimeField)
		if err != nil {
			return windowing.Config{}, err
		}
		cfg.Time = ex
	}
	return cfg, cfg.Validate()
}

// Keys of a window store: accumulators under 'a', the watermark under 'w'.
var watermarkKey = []byte("w")

func accKey(key []byte, w windowing.Window) []byte {
	b := []byte{'a'}
	b = binary.AppendUvarint(b, uint64(len(key)))
	b = append(b, key...)
	b = binary.BigEndian.AppendUint64(b, uint64(w.Start))
	return binary.BigEndian.AppendUint64(b, uint64(w.End))
}

func parseAccKey(b []byte) (key []byte, w windowing.Window, ok bool) {
	if len(b) < 1 || b[0] != 'a' {
		return nil, w, false
	}
	n, k := binary.Uvarint(b[1:])
	if k <= 0 || len(b) != 1+k+int(n)+16 {
		return nil, w, false
	}
	key = b[1+k : 1+k+int(n)]
	rest := b[1+k+int(n):]
	w.Start, w.End = int64(binary.BigEndian.Uint64(rest)), int64(binary.BigEndian.Uint64(rest[8:]))
	return key, w, true
}

// windowStore keeps a task's window accumulators in its state store and
// folds records with the guest's aggregate functions. A record the guest
// refuses is remembered in failed (the windower goes on); call failures of
// the instance (trap, timeout) are isolated the same way.
type windowStore struct {
	ctx    context.Context
	st     *state.Store
	inst   *runtime.Instance
	failed *runtime.Error
}

// Add implements windowing.Store.Add.
func (ws *windowStore) Add(key []byte, w windowing.Window, rec *abi.Record) error {
	k := accKey(key, w)
	acc, _, err := ws.st.Get(k)
	if err != nil {
		return err
	}
	added, failed, err := ws.inst.AggAdd(ws.ctx, []abi.Group{{Key: key, Acc: acc, Records: []abi.Record{*rec}}}, nil, nil)
	if err != nil {
		return err
	}
	if len(failed) > 0 {
		ws.failed = failed[0]
	}
	if added[0].Acc != nil {
		return ws.st.Put(k, added[0].Acc)
	}
	if acc == nil {
		// The only record failed: the window still exists for the
		// windower, with the initial accumulator.
		init, err := ws.inst.AggInit(ws.ctx)
		if err != nil {
			return err
		}
		return ws.st.Put(k, init)
	}
	return nil
}

// merged folds the accumulators of wins into one, without storing it.
func (ws *windowStore) merged(key []byte, wins []windowing.Window) ([]byte, error) {
	var acc []byte
	for _, w := range wins {
		v, ok, err := ws.st.Get(accKey(key, w))
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		if acc == nil {
			acc = v
			continue
		}
		res, err := ws.inst.AggMerge(ws.ctx, [][]byte{key}, [][]byte{acc}, [][]byte{v}, nil)
		if err != nil {
			return nil, err
		}
		if res[0].Err != nil {
			return nil, res[0].Err
		}
		acc = bytes.Clone(res[0].Bytes)
	}
	if acc == nil {
		init, err := ws.inst.AggInit(ws.ctx)
		if err != nil {
			return nil, err
		}
		acc = bytes.Clone(init)
	}
	return acc, nil
}

// Merge implements windowing.Store.Merge.
func (ws *windowStore) Merge(key []byte, dst windowing.Window, srcs []windowing.Window) error {
	acc, err := ws.merged(key, srcs)
	if err != nil {
		return err
	}
	for _, w := range srcs {
		if err := ws.st.Delete(accKey(key, w)); err != nil {
			return err
		}
	}
	return ws.st.Put(accKey(key, dst), acc)
}

// Result implements windowing.Store.Result.
func (ws *windowStore) Result(key []byte, w windowing.Window, srcs []windowing.Window) ([]byte, error) {
	acc, err := ws.merged(key, srcs)
	if err != nil {
		return nil, err
	}
	res, err := ws.inst.AggResult(ws.ctx, [][]byte{key}, [][]byte{acc}, nil)
	if err != nil {
		return nil, err
	}
	if res[0].Err != nil {
		return nil, res[0].Err
	}
	return bytes.Clone(res[0].Bytes), nil
}

// Delete implements windowing.Store.Delete.
func (ws *windowStore) Delete(key []byte, w windowing.Window) error {
	return ws.st.Delete(accKey(key, w))
}

// taskWindows is an aggregate step's windowing in a task.
type taskWindows struct {
	w     *windowing.Windower
	store *windowStore
	out   windowing.Output
}

// newTaskWindows builds the windower of step s for a task whose store has
// been restored: the saved watermark and every stored window are given back
// to the windower.
func (t *task) newTaskWindows(ctx context.Context, s int, ts *taskStore) (*taskWindows, error) {
	cfg, err := t.n.p.Steps[s].windowing()
	if err != nil {
		return nil, err
	}
	ws := &windowStore{ctx: ctx, st: ts.st, inst: t.insts[s]}
	w, err := windowing.New(cfg, ws)
	if err != nil {
		return nil, err
	}
	wm := int64(math64Min)
	if v, ok, err := ts.st.Get(watermarkKey); err != nil {
		return nil, err
	} else if ok && len(v) == 8 {
		wm = int64(binary.BigEndian.Uint64(v))
	}
	err = ts.st.Scan([]byte{'a'}, func(k, _ []byte) error {
		key, win, ok := parseAccKey(k)
		if !ok {
			return fmt.Errorf("window store: malformed key %q", k)
		}
		return w.Restore(wm, bytes.Clone(key), win)
	})
	if err != nil {
		return nil, err
	}
	w.Assign(t.part)
	return &taskWindows{w: w, store: ws}, nil
}

const math64Min = -1 << 63

// aggregate runs records through an aggregate step: it returns the window
// results to output; late records go to the late topic and refused ones to
// the dead-letter topic.
func (t *task) aggregate(ctx context.Context, b *batch, s int, cur []abi.Record, src []int32) ([]abi.Record, error) {
	tw := t.windows[s]
	tw.out.Emits, tw.out.Late = tw.out.Emits[:0], tw.out.Late[:0]
	var lateFrom []int // lateFrom[i] is the index in cur of tw.out.Late[i]
	for j := range cur {
		tw.store.failed = nil
		err := tw.w.Process(t.part, &cur[j], &tw.out)
		for len(lateFrom) < len(tw.out.Late) {
			lateFrom = append(lateFrom, j) // late entries come from the record being processed
		}
		if err != nil {
			var te *runtime.Error
			if errors.As(err, &te) || errors.Is(err, windowing.ErrNoTimestamp) {
				if te == nil {
					te = &runtime.Error{Function: t.n.fns[s].Name(), Kind: abi.KindTimestamp, Cause: runtime.CauseGuest,
						Code: abi.CodeBadInput, Index: j, Group: -1, Reason: err.Error()}
				}
				t.deadLetter(ctx, b, b.records[src[j]], s, te)
				continue
			}
			return nil, err
		}
		if tw.store.failed != nil {
			t.deadLetter(ctx, b, b.records[src[j]], s, tw.store.failed)
		}
	}
	if err := tw.w.Advance(&tw.out); err != nil {
		return nil, err
	}
	for i, l := range tw.out.Late {
		t.late(ctx, b, b.records[src[lateFrom[i]]], l, tw.w.Watermark())
	}
	results := make([]abi.Record, 0, len(tw.out.Emits))
	for _, e := range tw.out.Emits {
		ts := e.Window.End - 1
		if e.Window == windowing.GlobalWindow {
			ts = tw.w.Watermark()
		}
		results = append(results, abi.Record{Key: e.Key, Value: e.Value, Timestamp: ts, Headers: []abi.Header{
			{Key: "eddy.window.start", Value: strconv.AppendInt(nil, e.Window.Start, 10)},
			{Key: "eddy.window.end", Value: strconv.AppendInt(nil, e.Window.End, 10)},
			{Key: "eddy.window.final", Value: strconv.AppendBool(nil, e.Final)},
		}})
	}
	return results, nil
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
	for s, tw := range t.windows {
		if tw == nil {
			continue
		}
		if err := t.stores[s].st.Put(watermarkKey, binary.BigEndian.AppendUint64(nil, uint64(tw.w.Watermark()))); err != nil {
			return err
		}
	}
	return nil
}
