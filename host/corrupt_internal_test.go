package host

import (
	"bytes"
	"context"
	"encoding/binary"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/join"
	"github.com/eddy-streams/eddy/runtime"
	"github.com/eddy-streams/eddy/state"
	"github.com/eddy-streams/eddy/windowing"
)

// restoreStore returns an in-memory store holding changes, as a restore
// from a changelog leaves it.
func restoreStore(t *testing.T, changes ...state.Change) *state.Store {
	t.Helper()
	db, err := state.Open("", state.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	st := db.Store("p", "s", 0)
	if err := st.Restore(changes, int64(len(changes))); err != nil {
		t.Fatal(err)
	}
	return st
}

// TestJoinBufferSkipsCorruptEntries restores a join buffer whose changelog
// holds, beside two good entries, what no node writes: an empty key (it
// made Walk panic), a key of a side that does not exist, a key whose length
// runs past its end, a value without its matched flag, a value whose
// record does not decode, a sequence number at the uint64 limit. Walk
// skips each (telling skip) and indexes the good ones, which the join then
// finds.
func TestJoinBufferSkipsCorruptEntries(t *testing.T) {
	rec := abi.Record{Key: []byte("k"), Value: []byte("v"), Timestamp: 5}
	good := append([]byte{0}, join.AppendRecord(nil, &rec)...)
	bad := [][2][]byte{
		{{}, good},
		{join.AppendBufferKey(nil, join.Side(7), []byte("k"), 5, 0), good},
		{append([]byte{0, 0xff, 0x01}, make([]byte, 16)...), good},
		{join.AppendBufferKey(nil, join.Left, []byte("k"), 5, 2), {}},
		{join.AppendBufferKey(nil, join.Left, []byte("k"), 5, 3), {2, 1}},
		{join.AppendBufferKey(nil, join.Left, []byte("k"), 5, 4), {0, 1, 0xff}},
		{join.AppendBufferKey(nil, join.Left, []byte("k"), 5, math.MaxUint64), good},
	}
	changes := []state.Change{
		{Key: join.AppendBufferKey(nil, join.Left, []byte("k"), 5, 0), Value: good},
		{Key: join.AppendBufferKey(nil, join.Right, []byte("k"), 6, 1), Value: good},
	}
	for _, b := range bad {
		changes = append(changes, state.Change{Key: b[0], Value: b[1]})
	}
	st := restoreStore(t, changes...)
	buf := newStoreBuffer(st)
	var skipped [][]byte
	buf.skip = func(k []byte, err error) error {
		skipped = append(skipped, bytes.Clone(k))
		return nil
	}
	var walked []uint64
	if err := buf.Walk(func(side join.Side, key []byte, tm int64, seq uint64) error {
		walked = append(walked, seq)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(skipped) != len(bad) {
		t.Fatalf("skipped %d entries (%q), want %d", len(skipped), skipped, len(bad))
	}
	if slices.Sort(walked); !slices.Equal(walked, []uint64{0, 1}) {
		t.Fatalf("walked sequence numbers %v, want [0 1]", walked)
	}
	var found int
	if err := buf.Scan(join.Left, []byte("k"), 0, 10, func(int64, uint64, []byte, bool) error { found++; return nil }); err != nil || found != 1 {
		t.Fatalf("scan of the left side found %d entries, %v; want 1", found, err)
	}
	// Without skip, a corrupt entry is an error, not a panic.
	if err := newStoreBuffer(st).Walk(func(join.Side, []byte, int64, uint64) error { return nil }); err == nil {
		t.Fatal("Walk without skip accepted corrupt entries")
	}
}

// TestInputTimesOfUnknownInputsAreSkipped restores input times of inputs 0
// and 1 of a task with inputs 0 to 3, and of input 9 and a short entry: the
// latter two go to bad, the others to give.
func TestInputTimesOfUnknownInputsAreSkipped(t *testing.T) {
	at := binary.BigEndian.AppendUint64(nil, 1000)
	st := restoreStore(t,
		state.Change{Key: watermarkKey, Value: at},
		state.Change{Key: inputTimeKey(0), Value: at},
		state.Change{Key: inputTimeKey(1), Value: at},
		state.Change{Key: inputTimeKey(9), Value: at},
		state.Change{Key: inputTimeKey(2), Value: []byte{1}},
	)
	var given []int32
	var bad int
	err := restoreInputTimes(st, func(in int32) bool { return in >= 0 && in < 4 },
		func([]byte, error) error { bad++; return nil },
		func(in int32, _ int64) error { given = append(given, in); return nil })
	if err != nil || bad != 2 || !slices.Equal(given, []int32{0, 1}) {
		t.Fatalf("given %v, %d bad, %v; want [0 1], 2 bad", given, bad, err)
	}
}

// TestWindowsOfAnotherShapeAreSkipped restores accumulators of 1 s
// tumbling windows beside entries that are not such windows: a window that
// ends before it starts, one not aligned, one of another size. The
// aggregator skips them and keeps the good one; a window that no valid
// event time makes (one ending before it starts, one at the end of int64)
// is deleted instead (see TestRestoreWindowOutOfRange).
func TestWindowsOfAnotherShapeAreSkipped(t *testing.T) {
	acc := make([]byte, 16)
	st := restoreStore(t,
		state.Change{Key: accKey([]byte("k"), windowing.Window{Start: 1000, End: 2000}), Value: acc},
		state.Change{Key: accKey([]byte("k"), windowing.Window{Start: 3000, End: 2000}), Value: acc},
		state.Change{Key: accKey([]byte("k"), windowing.Window{Start: 1500, End: 2500}), Value: acc},
		state.Change{Key: accKey([]byte("k"), windowing.Window{Start: 4000, End: 6000}), Value: acc},
		state.Change{Key: accKey([]byte("k"), windowing.Window{Start: math.MaxInt64 - 10, End: math.MinInt64 + 5}), Value: acc},
	)
	var skipped int
	a, err := newAggregator(windowing.Config{Window: windowing.Tumbling(time.Second)}, st, nativeStats{}, "stats", 0,
		func([]byte, error) { skipped++ })
	if err != nil {
		t.Fatal(err)
	}
	if skipped != 2 || a.discarded != 2 {
		t.Fatalf("%d entries skipped and %d deleted, want 2 and 2", skipped, a.discarded)
	}
	if open := a.w.Stats().Open; open != 1 {
		t.Fatalf("%d windows restored, want 1", open)
	}
}

// pickyStats is nativeStats whose result refuses an accumulator that is not
// 16 bytes, as a guest refuses one it cannot decode.
type pickyStats struct{ nativeStats }

func (p pickyStats) AggResult(ctx context.Context, keys, accs [][]byte, out []runtime.Result) ([]runtime.Result, error) {
	for i := range keys {
		if len(accs[i]) != 16 {
			out = append(out, runtime.Result{Err: &runtime.Error{Function: "stats", Kind: abi.KindAggregate,
				Cause: runtime.CauseGuest, Code: abi.CodeRejected, Reason: "accumulator of the wrong size"}})
			continue
		}
		var err error
		if out, err = p.nativeStats.AggResult(ctx, keys[i:i+1], accs[i:i+1], out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// TestCorruptAccumulatorValueDropsItsResult restores a window whose
// accumulator (a changelog value) the function refuses, beside a good one,
// and moves the watermark past both between records, as a progress marker
// does: the good window's result comes out, the other is dropped and
// reported, and the batch does not fail (it failed the task, at every
// start).
func TestCorruptAccumulatorValueDropsItsResult(t *testing.T) {
	st := restoreStore(t,
		state.Change{Key: accKey([]byte("bad"), windowing.Window{Start: 1000, End: 2000}), Value: []byte("x")},
		state.Change{Key: accKey([]byte("good"), windowing.Window{Start: 1000, End: 2000}), Value: encodeStats(2, 5)},
	)
	a, err := newAggregator(windowing.Config{Window: windowing.Tumbling(time.Second)}, st, pickyStats{}, "stats", 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	var lost []string
	a.store.lost = func(key []byte, w windowing.Window, err error) { lost = append(lost, string(key)+" "+w.String()) }
	a.progress = func(w *windowing.Windower, out *windowing.Output) error { return w.Progress(0, 5000, out) }
	var out aggOutput
	if err := a.process(context.Background(), nil, &out); err != nil {
		t.Fatalf("process: %v", err)
	}
	if len(out.Emits) != 1 || string(out.Emits[0].Key) != "good" || string(out.Emits[0].Value) != `{"count":2,"sum":5,"avg":2.5}` {
		t.Fatalf("emits %+v, want the good window's result alone", out.Emits)
	}
	if len(lost) != 1 || lost[0] != "bad [1000,2000)" {
		t.Fatalf("lost results %v, want the bad window's", lost)
	}
}
