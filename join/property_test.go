package join

import (
	"bytes"
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/windowing"
)

type event struct {
	side  Side
	input int32
	rec   abi.Record
}

// genEvents returns the records of each input in timestamp order: inputs
// 0..n-1 are left, n..2n-1 right. Values are unique ids; about one record
// in 20 has a null key and one in 7 carries headers.
func genEvents(rng *rand.Rand, perSide, perInput int) [][]event {
	out := make([][]event, 2*perSide)
	for i := range out {
		side := Left
		if i >= perSide {
			side = Right
		}
		ts := int64(rng.IntN(10))
		for n := range perInput {
			ts += int64(rng.IntN(6))
			rec := abi.Record{Timestamp: ts, Value: fmt.Appendf(nil, "%c%d.%d", side.String()[0]-32, i, n)}
			if rng.IntN(20) > 0 {
				rec.Key = []byte("k" + strconv.Itoa(rng.IntN(6)))
			}
			if rng.IntN(7) == 0 {
				rec.Headers = []abi.Header{{Key: "h", Value: rec.Value}, {Key: "nil"}}
			}
			out[i] = append(out[i], event{side: side, input: int32(i), rec: rec})
		}
	}
	return out
}

// inOrder returns all events in timestamp order.
func inOrder(inputs [][]event) []event {
	var all []event
	for _, in := range inputs {
		all = append(all, in...)
	}
	slices.SortStableFunc(all, func(a, b event) int { return cmp.Compare(a.rec.Timestamp, b.rec.Timestamp) })
	return all
}

// deliver shuffles each input so that no record is more than jitter behind
// the largest time delivered before it on its input, interleaves the
// inputs of both sides at random and returns the delivery order.
func deliver(rng *rand.Rand, inputs [][]event, jitter int64) []event {
	queues := make([][]event, len(inputs))
	for i, evs := range inputs {
		q := slices.Clone(evs)
		if jitter > 0 {
			// Sorting by time + U[0, jitter] keeps every record no more than
			// jitter behind the largest time delivered before it.
			keys := make([]int64, len(q))
			for j := range q {
				keys[j] = q[j].rec.Timestamp + rng.Int64N(jitter+1)
			}
			idx := make([]int, len(q))
			for j := range idx {
				idx[j] = j
			}
			slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(keys[a], keys[b]) })
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

// result is what a run produced: sorted pairs, sorted unmatched results,
// and the values of late records.
type result struct {
	pairs, unmatched []string
	late             map[string]bool
}

func pairID(key []byte, l, r *abi.Record) string {
	id := func(r *abi.Record) string {
		if r == nil {
			return "-"
		}
		return string(r.Value)
	}
	return fmt.Sprintf("%s %s %s", fmtKey(key), id(l), id(r))
}

// runJoin feeds evs to a WindowJoin, calling Advance at random batch
// boundaries and restarting it (Restore from its buffer) before the event
// indexes in restarts, then Flushes. It checks, on the way, that records
// come back from the buffer intact, that Pair times are right, and that
// unmatched results are emitted in (expiry, side, key, time) order.
func runJoin(t *testing.T, rng *rand.Rand, cfg Config, inputs int, evs []event, restarts ...int) result {
	t.Helper()
	orig := make(map[string]*abi.Record, len(evs))
	for i := range evs {
		orig[string(evs[i].rec.Value)] = &evs[i].rec
	}
	buf := newMemBuffer()
	ids := make([]int32, inputs)
	for i := range ids {
		ids[i] = int32(i)
	}
	start := func(wm int64) *WindowJoin {
		j, err := NewWindowJoin(cfg, buf)
		if err != nil {
			t.Fatal(err)
		}
		j.Assign(ids...)
		if err := j.Restore(wm); err != nil {
			t.Fatal(err)
		}
		return j
	}
	j := start(windowing.NoWatermark)
	var (
		out  Output
		res  = result{late: map[string]bool{}}
		last struct {
			at   int64
			side Side
			key  string
			t    int64
		}
	)
	lastAt := func(side Side, t int64) int64 {
		if side == Left {
			return t + cfg.After.Milliseconds() + cfg.Grace.Milliseconds()
		}
		return t + cfg.Before.Milliseconds() + cfg.Grace.Milliseconds()
	}
	check := func(r *abi.Record) {
		if r == nil {
			return
		}
		o := orig[string(r.Value)]
		if o == nil || !bytes.Equal(r.Key, o.Key) || (r.Key == nil) != (o.Key == nil) || r.Timestamp != o.Timestamp || !slices.EqualFunc(r.Headers, o.Headers, func(a, b abi.Header) bool {
			return a.Key == b.Key && bytes.Equal(a.Value, b.Value) && (a.Value == nil) == (b.Value == nil)
		}) {
			t.Fatalf("record %s came back as %+v, want %+v", r.Value, r, o)
		}
	}
	collect := func() {
		for _, p := range out.Pairs {
			check(p.Left)
			check(p.Right)
			id := pairID(p.Key, p.Left, p.Right)
			switch {
			case p.Left != nil && p.Right != nil:
				if p.Time != max(p.Left.Timestamp, p.Right.Timestamp) {
					t.Fatalf("pair %s at %d", id, p.Time)
				}
				res.pairs = append(res.pairs, id)
				continue
			case p.Left != nil:
				if p.Time != p.Left.Timestamp {
					t.Fatalf("unmatched %s at %d", id, p.Time)
				}
			default:
				if p.Time != p.Right.Timestamp {
					t.Fatalf("unmatched %s at %d", id, p.Time)
				}
			}
			res.unmatched = append(res.unmatched, id)
			if p.Key == nil {
				continue // emitted on arrival
			}
			side := Left
			if p.Left == nil {
				side = Right
			}
			cur := last
			cur.at, cur.side, cur.key, cur.t = lastAt(side, p.Time), side, string(p.Key), p.Time
			if c := cmp.Or(cmp.Compare(cur.at, last.at), cmp.Compare(cur.side, last.side), cmp.Compare(cur.key, last.key), cmp.Compare(cur.t, last.t)); c < 0 {
				t.Fatalf("unmatched %s (expiry %d) emitted after %+v", id, cur.at, last)
			}
			last = cur
		}
		for _, l := range out.Late {
			res.late[string(l.Record.Value)] = true
		}
		out.Reset()
	}
	last.at = windowing.NoWatermark
	for i := range evs {
		if slices.Contains(restarts, i) {
			j = start(j.Watermark())
		}
		if err := j.Process(evs[i].side, evs[i].input, &evs[i].rec, &out); err != nil {
			t.Fatal(err)
		}
		if rng.IntN(7) == 0 {
			if err := j.Advance(&out); err != nil {
				t.Fatal(err)
			}
		}
		collect()
	}
	if err := j.Flush(&out); err != nil {
		t.Fatal(err)
	}
	collect()
	if buf.n != 0 || j.Stats().Buffered != 0 {
		t.Fatalf("%d records left in the buffer, %d in the index after flush", buf.n, j.Stats().Buffered)
	}
	slices.Sort(res.pairs)
	slices.Sort(res.unmatched)
	return res
}

// bruteForce computes the join of the events, ignoring those in skip,
// directly from its definition.
func bruteForce(cfg Config, evs []event, skip map[string]bool) result {
	var ls, rs []*abi.Record
	for i := range evs {
		if skip[string(evs[i].rec.Value)] {
			continue
		}
		if evs[i].side == Left {
			ls = append(ls, &evs[i].rec)
		} else {
			rs = append(rs, &evs[i].rec)
		}
	}
	before, after := cfg.Before.Milliseconds(), cfg.After.Milliseconds()
	var res result
	rMatched := make(map[*abi.Record]bool)
	for _, l := range ls {
		matched := false
		for _, r := range rs {
			if l.Key != nil && r.Key != nil && bytes.Equal(l.Key, r.Key) &&
				l.Timestamp-before <= r.Timestamp && r.Timestamp <= l.Timestamp+after {
				res.pairs = append(res.pairs, pairID(l.Key, l, r))
				matched = true
				rMatched[r] = true
			}
		}
		if !matched && cfg.Type != InnerJoin {
			res.unmatched = append(res.unmatched, pairID(l.Key, l, nil))
		}
	}
	if cfg.Type == OuterJoin {
		for _, r := range rs {
			if !rMatched[r] {
				res.unmatched = append(res.unmatched, pairID(r.Key, nil, r))
			}
		}
	}
	slices.Sort(res.pairs)
	slices.Sort(res.unmatched)
	return res
}

type window struct{ before, after time.Duration }

var propertyConfigs = func() []Config {
	var cfgs []Config
	for _, typ := range []Type{InnerJoin, LeftJoin, OuterJoin} {
		for _, w := range []window{{5 * time.Millisecond, 5 * time.Millisecond}, {0, 10 * time.Millisecond}, {7 * time.Millisecond, 2 * time.Millisecond}} {
			for _, grace := range []time.Duration{0, 4 * time.Millisecond} {
				cfgs = append(cfgs, Config{Type: typ, Before: w.before, After: w.after, Grace: grace, Disorder: 10 * time.Millisecond})
			}
		}
	}
	return cfgs
}()

func cfgName(c Config) string {
	return fmt.Sprintf("%v/before=%v/after=%v/grace=%v", c.Type, c.Before, c.After, c.Grace)
}

func equalResults(t *testing.T, what string, got, want result) {
	t.Helper()
	if !slices.Equal(got.pairs, want.pairs) {
		t.Fatalf("%s: pairs differ\ngot  %d: %.6q\nwant %d: %.6q", what, len(got.pairs), got.pairs, len(want.pairs), want.pairs)
	}
	if !slices.Equal(got.unmatched, want.unmatched) {
		t.Fatalf("%s: unmatched differ\ngot  %d: %.6q\nwant %d: %.6q", what, len(got.unmatched), got.unmatched, len(want.unmatched), want.unmatched)
	}
}

// TestDeterminism checks that, for records within the disorder, the pairs
// and the unmatched results do not depend on batch boundaries, on the
// interleaving of the inputs of both sides, or on the order of records
// within the disorder, and that they are the join computed directly from
// the events.
func TestDeterminism(t *testing.T) {
	for _, cfg := range propertyConfigs {
		name := cfgName(cfg)
		t.Run(name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, uint64(len(name))))
			inputs := genEvents(rng, 2, 150)
			ordered := inOrder(inputs)
			want := runJoin(t, rng, cfg, len(inputs), ordered)
			if len(want.late) > 0 {
				t.Fatalf("late records in order: %v", want.late)
			}
			if len(want.pairs) == 0 || (cfg.Type != InnerJoin && len(want.unmatched) == 0) {
				t.Fatalf("a weak test: %d pairs, %d unmatched", len(want.pairs), len(want.unmatched))
			}
			equalResults(t, "in order vs brute force", want, bruteForce(cfg, ordered, nil))
			for trial := range 10 {
				got := runJoin(t, rng, cfg, len(inputs), deliver(rng, inputs, cfg.Disorder.Milliseconds()))
				if len(got.late) > 0 {
					t.Fatalf("trial %d: late records within the disorder: %v", trial, got.late)
				}
				equalResults(t, fmt.Sprintf("trial %d", trial), got, want)
			}
		})
	}
}

// TestAcceptedExact delivers records beyond the disorder: some are late,
// and the results must be exactly the join of the records that were not.
func TestAcceptedExact(t *testing.T) {
	for _, cfg := range propertyConfigs {
		name := cfgName(cfg)
		t.Run(name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(2, uint64(len(name))))
			inputs := genEvents(rng, 2, 150)
			late := 0
			for trial := range 10 {
				evs := deliver(rng, inputs, 3*cfg.Disorder.Milliseconds())
				got := runJoin(t, rng, cfg, len(inputs), evs)
				late += len(got.late)
				equalResults(t, fmt.Sprintf("trial %d (%d late)", trial, len(got.late)), got, bruteForce(cfg, evs, got.late))
			}
			if late == 0 {
				t.Fatal("a weak test: no record was late")
			}
		})
	}
}

// TestRestart restarts the join twice at random points, rebuilding it from
// its buffer and watermark with Restore, and checks the results equal an
// uninterrupted run's.
func TestRestart(t *testing.T) {
	for _, cfg := range propertyConfigs {
		name := cfgName(cfg)
		t.Run(name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(3, uint64(len(name))))
			inputs := genEvents(rng, 2, 150)
			for trial := range 5 {
				evs := deliver(rng, inputs, cfg.Disorder.Milliseconds())
				want := runJoin(t, rng, cfg, len(inputs), evs)
				a, b := rng.IntN(len(evs)), rng.IntN(len(evs))
				got := runJoin(t, rng, cfg, len(inputs), evs, a, b)
				equalResults(t, fmt.Sprintf("trial %d, restarts at %d and %d", trial, a, b), got, want)
			}
		})
	}
}

// TestBruteForceSanity checks the reference join on a case small enough
// to do by hand.
func TestBruteForceSanity(t *testing.T) {
	rec := func(side Side, key string, ts int64, v string) event {
		return event{side: side, rec: abi.Record{Key: []byte(key), Timestamp: ts, Value: []byte(v)}}
	}
	evs := []event{rec(Left, "a", 10, "L1"), rec(Right, "a", 15, "R1"), rec(Right, "a", 16, "R2"), rec(Right, "b", 10, "R3")}
	got := bruteForce(Config{Type: OuterJoin, Before: 5 * time.Millisecond, After: 5 * time.Millisecond}, evs, nil)
	if want := []string{"a L1 R1"}; !slices.Equal(got.pairs, want) {
		t.Errorf("pairs %q, want %q", got.pairs, want)
	}
	if want := []string{"a - R2", "b - R3"}; !slices.Equal(got.unmatched, want) {
		t.Errorf("unmatched %q, want %q", got.unmatched, want)
	}
}
