package windowing

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/eddy-streams/eddy/abi"
)

type event struct {
	p   int32
	rec abi.Record
}

// genEvents returns per-partition records in timestamp order. With
// keyPerPartition every key lives in one partition (as after key_by).
func genEvents(rng *rand.Rand, parts, perPart int, keyPerPartition bool) [][]event {
	out := make([][]event, parts)
	for p := range out {
		ts := int64(rng.IntN(10))
		for range perPart {
			ts += int64(rng.IntN(8))
			key := "k" + strconv.Itoa(rng.IntN(5))
			if keyPerPartition {
				key = "p" + strconv.Itoa(p) + key
			}
			out[p] = append(out[p], event{p: int32(p), rec: abi.Record{
				Key: []byte(key), Value: []byte(strconv.Itoa(rng.IntN(100))), Timestamp: ts,
			}})
		}
	}
	return out
}

// deliver shuffles each partition within the disorder (when jitter > 0),
// interleaves the partitions at random and returns the delivery order.
func deliver(rng *rand.Rand, parts [][]event, jitter int64) []event {
	queues := make([][]event, len(parts))
	for i, evs := range parts {
		q := slices.Clone(evs)
		if jitter > 0 {
			// Sorting by time + U[0, jitter] keeps every record no more than
			// jitter behind the largest time delivered before it.
			keys := make(map[*event]int64, len(q))
			for j := range q {
				keys[&q[j]] = q[j].rec.Timestamp + rng.Int64N(jitter+1)
			}
			idx := make([]int, len(q))
			for j := range idx {
				idx[j] = j
			}
			slices.SortStableFunc(idx, func(a, b int) int {
				ka, kb := keys[&q[a]], keys[&q[b]]
				return int(ka - kb)
			})
			shuffled := make([]event, len(q))
			for j, k := range idx {
				shuffled[j] = q[k]
			}
			q = shuffled
		}
		queues[i] = q
	}
	var out []event
	for {
		var live []int
		for i, q := range queues {
			if len(q) > 0 {
				live = append(live, i)
			}
		}
		if len(live) == 0 {
			return out
		}
		i := live[rng.IntN(len(live))]
		n := 1 + rng.IntN(min(5, len(queues[i])))
		out = append(out, queues[i][:n]...)
		queues[i] = queues[i][n:]
	}
}

// run feeds evs, calling Advance at random batch boundaries, then Flush, and
// returns the final results (in emission order for EmitFinal, the last
// update of each window for EmitUpdate).
func run(t *testing.T, rng *rand.Rand, cfg Config, parts int, evs []event) (results []string, store *sumStore) {
	t.Helper()
	store = newSumStore()
	w, err := New(cfg, store)
	if err != nil {
		t.Fatal(err)
	}
	for p := range parts {
		w.Assign(int32(p))
	}
	var out Output
	last := map[string]string{}
	collect := func() {
		if len(out.Late) > 0 {
			l := out.Late[0]
			t.Fatalf("late record within the disorder: p%d %s t=%d %v wm=%d", l.Partition, l.Record.Key, l.Time, l.Window, l.Watermark)
		}
		for _, e := range out.Emits {
			id := string(e.Key) + " " + e.Window.String()
			switch {
			case e.Final && cfg.Window.Kind != KindGlobal:
				results = append(results, id+" "+string(e.Value))
			case e.Final: // global count: arrival order per key matters
				results = append(results, id+" "+string(e.Value))
				delete(last, id)
			case e.Removed:
				delete(last, id)
			default:
				last[id] = string(e.Value)
			}
		}
		out.Reset()
	}
	for i := range evs {
		if err := w.Process(evs[i].p, &evs[i].rec, &out); err != nil {
			t.Fatal(err)
		}
		if rng.IntN(7) == 0 {
			if err := w.Advance(&out); err != nil {
				t.Fatal(err)
			}
		}
		collect()
	}
	if err := w.Flush(&out); err != nil {
		t.Fatal(err)
	}
	collect()
	if cfg.Window.Kind == KindGlobal {
		// Count windows fire on arrival: keep each key's sequence, not the
		// interleaving of keys.
		slices.SortStableFunc(results, func(a, b string) int {
			return strings.Compare(strings.Fields(a)[0], strings.Fields(b)[0])
		})
	}
	if cfg.Emit == EmitUpdate {
		for _, k := range slices.Sorted(maps.Keys(last)) {
			results = append(results, k+" "+last[k])
		}
	}
	return results, store
}

// TestDeterminism checks that final results do not depend on batch
// boundaries, on the interleaving of partitions, or on the order of records
// within the allowed disorder.
func TestDeterminism(t *testing.T) {
	const disorder = 20
	specs := []struct {
		name   string
		spec   Spec
		jitter bool // shuffle within partitions (not for count windows)
	}{
		{"tumbling", Tumbling(50 * time.Millisecond), true},
		{"hopping", Hopping(50*time.Millisecond, 20*time.Millisecond), true},
		{"sliding", Sliding(30 * time.Millisecond), true},
		{"session", Session(8 * time.Millisecond), true},
		{"global", GlobalCount(4), false},
	}
	for _, sp := range specs {
		for _, emit := range []EmitMode{EmitFinal, EmitUpdate} {
			for _, grace := range []time.Duration{0, 7 * time.Millisecond} {
				name := fmt.Sprintf("%s/%s/grace=%v", sp.name, emit, grace)
				t.Run(name, func(t *testing.T) {
					rng := rand.New(rand.NewPCG(1, uint64(len(name))))
					cfg := Config{Window: sp.spec, Disorder: disorder * time.Millisecond, Grace: grace, Emit: emit}
					parts := genEvents(rng, 3, 150, sp.spec.Kind == KindGlobal)
					var ordered []event
					for _, p := range parts {
						ordered = append(ordered, p...)
					}
					want, _ := run(t, rng, cfg, len(parts), ordered)
					if len(want) == 0 {
						t.Fatal("no results")
					}
					for trial := range 15 {
						jitter := int64(0)
						if sp.jitter {
							jitter = disorder
						}
						got, store := run(t, rng, cfg, len(parts), deliver(rng, parts, jitter))
						if !slices.Equal(got, want) {
							t.Fatalf("trial %d: results differ\ngot  %d: %.10q\nwant %d: %.10q", trial, len(got), got, len(want), want)
						}
						if sp.spec.Kind != KindGlobal && len(store.m) != 0 {
							t.Fatalf("trial %d: %d accumulators left after flush", trial, len(store.m))
						}
					}
				})
			}
		}
	}
}

// TestRestart stops a Windower halfway, rebuilds one from the store and the
// watermark with Restore, and checks the final results equal an
// uninterrupted run.
func TestRestart(t *testing.T) {
	for _, spec := range []Spec{
		Tumbling(50 * time.Millisecond), Hopping(50*time.Millisecond, 20*time.Millisecond),
		Sliding(30 * time.Millisecond), Session(8 * time.Millisecond),
	} {
		t.Run(spec.Kind.String(), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(7, 7))
			cfg := Config{Window: spec, Disorder: 20 * time.Millisecond, Grace: 5 * time.Millisecond, Retention: 10 * time.Millisecond}
			evs := deliver(rng, genEvents(rng, 2, 200, false), 20)
			want, _ := run(t, rng, cfg, 2, evs)

			var got []string
			store := newSumStore()
			var out Output
			collect := func() {
				for _, e := range out.Emits {
					got = append(got, string(e.Key)+" "+e.Window.String()+" "+string(e.Value))
				}
				if len(out.Late) > 0 {
					t.Fatalf("late: %+v", out.Late[0])
				}
				out.Reset()
			}
			w, err := New(cfg, store)
			if err != nil {
				t.Fatal(err)
			}
			w.Assign(0, 1)
			half := len(evs) / 2
			for i := range evs[:half] {
				if err := w.Process(evs[i].p, &evs[i].rec, &out); err != nil {
					t.Fatal(err)
				}
			}
			collect()
			wm := w.Watermark()
			w, err = New(cfg, store)
			if err != nil {
				t.Fatal(err)
			}
			w.Assign(0, 1)
			for k := range store.m {
				if err := w.Restore(wm, []byte(k.key), k.w); err != nil {
					t.Fatal(err)
				}
			}
			for i := range evs[half:] {
				if err := w.Process(evs[half+i].p, &evs[half+i].rec, &out); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Flush(&out); err != nil {
				t.Fatal(err)
			}
			collect()
			if !slices.Equal(got, want) {
				t.Fatalf("results differ after restart\ngot  %d: %.8q\nwant %d: %.8q", len(got), got, len(want), want)
			}
			if len(store.m) != 0 {
				t.Fatalf("%d accumulators left", len(store.m))
			}
		})
	}
}

// TestHoppingPanes checks hopping windows kept in panes against a direct
// computation: every record counts in each of its windows it was not late
// for, so each window's final result (or last update) must be the count and
// sum of those records, fired once (or updated once per such record). The
// input has records beyond the disorder, the run restarts at random points
// (restoring the store's panes in random order), and after every step no
// pane may be left in the store once the windows that contain it have all
// expired.
func TestHoppingPanes(t *testing.T) {
	for _, tc := range []struct{ size, adv int64 }{
		{50, 20}, // pane 10: 2 or 3 windows a record
		{50, 10},
		{40, 15}, // pane 5
		{30, 30}, // one pane a window: the window
		{21, 1},
	} {
		for _, emit := range []EmitMode{EmitFinal, EmitUpdate} {
			name := fmt.Sprintf("%d-%d/%s", tc.size, tc.adv, emit)
			t.Run(name, func(t *testing.T) {
				rng := rand.New(rand.NewPCG(11, uint64(tc.size*100+tc.adv)))
				cfg := Config{
					Window:    Hopping(time.Duration(tc.size)*time.Millisecond, time.Duration(tc.adv)*time.Millisecond),
					Disorder:  10 * time.Millisecond,
					Grace:     time.Duration(rng.IntN(8)) * time.Millisecond,
					Retention: time.Duration(rng.IntN(30)) * time.Millisecond,
					Emit:      emit,
				}
				checkHoppingPanes(t, rng, cfg, tc.size, tc.adv)
			})
		}
	}
}

func checkHoppingPanes(t *testing.T, rng *rand.Rand, cfg Config, size, adv int64) {
	type wk struct {
		key string
		w   Window
	}
	const parts = 2
	evs := deliver(rng, genEvents(rng, parts, 300, false), 10)
	for i := range evs {
		if rng.IntN(15) == 0 { // beyond the disorder: late for some windows
			evs[i].rec.Timestamp -= int64(rng.IntN(60))
		}
	}
	want := map[wk]acc{}    // from the records each window accepted
	updates := map[wk]int{} // records each window accepted
	got := map[wk]string{}
	emitted := map[wk]int{}
	store := newSumStore()
	newWindower := func(restore bool, wm int64) *Windower {
		w, err := New(cfg, store)
		if err != nil {
			t.Fatal(err)
		}
		w.Assign(0, 1)
		if restore {
			keys := slices.Collect(maps.Keys(store.m))
			rng.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
			for _, k := range keys {
				if err := w.Restore(wm, []byte(k.key), k.w); err != nil {
					t.Fatal(err)
				}
			}
		}
		return w
	}
	w := newWindower(false, 0)
	var out Output
	check := func() {
		for _, e := range out.Emits {
			k := wk{string(e.Key), e.Window}
			if e.Final != (cfg.Emit == EmitFinal) {
				t.Fatalf("%s %v: final=%v in %s mode", e.Key, e.Window, e.Final, cfg.Emit)
			}
			got[k] = string(e.Value)
			emitted[k]++
		}
		out.Reset()
		// No pane outlives every window that contains it.
		wm := w.Watermark()
		for k := range store.m {
			if k.w.End-k.w.Start != gcd(size, adv) || floorMod(k.w.Start, gcd(size, adv)) != 0 {
				t.Fatalf("%s %v in the store is not a pane", k.key, k.w)
			}
			last := floorDiv(k.w.Start, adv) * adv // the last window containing the pane
			if wm >= last+size+cfg.Grace.Milliseconds()+cfg.Retention.Milliseconds() {
				t.Fatalf("pane %s %v kept at watermark %d, after its last window [%d,%d) expired", k.key, k.w, wm, last, last+size)
			}
		}
	}
	restarts, partial := 0, 0
	for i := range evs {
		rec := &evs[i].rec
		if err := w.Process(evs[i].p, rec, &out); err != nil {
			t.Fatal(err)
		}
		late := map[Window]bool{}
		for _, l := range out.Late {
			if l.Record != rec {
				t.Fatalf("late entry for another record")
			}
			late[l.Window] = true
		}
		wasLate, accepted := len(late) > 0, false
		t0 := rec.Timestamp
		for s := floorDiv(t0, adv) * adv; s > t0-size; s -= adv {
			win := Window{s, s + size}
			if late[win] {
				delete(late, win)
				continue
			}
			k := wk{string(rec.Key), win}
			a := want[k]
			a.count++
			a.sum += recValue(rec)
			want[k] = a
			updates[k]++
			accepted = true
		}
		if wasLate && accepted {
			partial++
		}
		if len(late) > 0 {
			t.Fatalf("record at %d late for windows it is not in: %v", t0, late)
		}
		out.Late = out.Late[:0]
		if rng.IntN(10) == 0 {
			if err := w.Advance(&out); err != nil {
				t.Fatal(err)
			}
		}
		check()
		if rng.IntN(60) == 0 {
			w = newWindower(true, w.Watermark())
			restarts++
		}
	}
	if err := w.Flush(&out); err != nil {
		t.Fatal(err)
	}
	check()
	if restarts == 0 || len(want) == 0 || partial == 0 && size != adv {
		t.Fatalf("%d restarts, %d windows, %d records partly late: the input does not exercise the test", restarts, len(want), partial)
	}
	for k, a := range want {
		if v := fmt.Sprintf("count=%d sum=%d", a.count, a.sum); got[k] != v {
			t.Fatalf("%s %v: got %q, want %q", k.key, k.w, got[k], v)
		}
		n := 1
		if cfg.Emit == EmitUpdate {
			n = updates[k]
		}
		if emitted[k] != n {
			t.Fatalf("%s %v: emitted %d times, want %d", k.key, k.w, emitted[k], n)
		}
	}
	if len(got) != len(want) {
		t.Fatalf("%d windows emitted, want %d", len(got), len(want))
	}
	if len(store.m) != 0 {
		t.Fatalf("%d accumulators left after flush", len(store.m))
	}
}

func floorMod(a, b int64) int64 { return a - floorDiv(a, b)*b }
