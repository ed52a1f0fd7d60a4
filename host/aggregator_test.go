package host

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/runtime"
	"github.com/eddy-streams/eddy/state"
	"github.com/eddy-streams/eddy/windowing"
)

// nativeStats is guests/go/stats written as host Go (same accumulator, same
// result), with one addition for tests: a record whose value is "trap"
// fails as a call failure would once bisection has isolated it.
type nativeStats struct{}

func (nativeStats) AggInit(context.Context) ([]byte, error) { return make([]byte, 16), nil }

func (nativeStats) AggAdd(_ context.Context, groups []abi.Group, out []abi.Added, failed []*runtime.Error) ([]abi.Added, []*runtime.Error, error) {
	for g, grp := range groups {
		var count int64
		var sum float64
		if grp.Acc != nil {
			count, sum = int64(binary.LittleEndian.Uint64(grp.Acc)), math.Float64frombits(binary.LittleEndian.Uint64(grp.Acc[8:]))
		}
		folded := false
		for i, r := range grp.Records {
			if string(r.Value) == "trap" {
				failed = append(failed, &runtime.Error{Function: "stats", Kind: abi.KindAggregate, Cause: runtime.CauseTrap,
					Index: i, Group: g, Reason: "trap record"})
				continue
			}
			v, err := strconv.ParseFloat(strings.TrimSpace(string(r.Value)), 64)
			if err != nil {
				failed = append(failed, &runtime.Error{Function: "stats", Kind: abi.KindAggregate, Cause: runtime.CauseGuest,
					Code: abi.CodeBadInput, Index: i, Group: g, Reason: "value is not a JSON number"})
				continue
			}
			count, sum, folded = count+1, sum+v, true
		}
		if grp.Acc == nil && !folded {
			out = append(out, abi.Added{})
			continue
		}
		out = append(out, abi.Added{Acc: encodeStats(count, sum)})
	}
	return out, failed, nil
}

func encodeStats(count int64, sum float64) []byte {
	acc := binary.LittleEndian.AppendUint64(nil, uint64(count))
	return binary.LittleEndian.AppendUint64(acc, math.Float64bits(sum))
}

func (nativeStats) AggMerge(_ context.Context, keys, a, b [][]byte, out []runtime.Result) ([]runtime.Result, error) {
	for i := range keys {
		ca, cb := int64(binary.LittleEndian.Uint64(a[i])), int64(binary.LittleEndian.Uint64(b[i]))
		sa, sb := math.Float64frombits(binary.LittleEndian.Uint64(a[i][8:])), math.Float64frombits(binary.LittleEndian.Uint64(b[i][8:]))
		out = append(out, runtime.Result{Bytes: encodeStats(ca+cb, sa+sb)})
	}
	return out, nil
}

func (nativeStats) AggResult(_ context.Context, keys, accs [][]byte, out []runtime.Result) ([]runtime.Result, error) {
	for i := range keys {
		count, sum := int64(binary.LittleEndian.Uint64(accs[i])), math.Float64frombits(binary.LittleEndian.Uint64(accs[i][8:]))
		b := append(make([]byte, 0, 64), `{"count":`...)
		b = strconv.AppendInt(b, count, 10)
		b = append(b, `,"sum":`...)
		b = appendStatsNumber(b, sum)
		b = append(b, `,"avg":`...)
		b = appendStatsNumber(b, sum/float64(count))
		out = append(out, runtime.Result{Bytes: append(b, '}')})
	}
	return out, nil
}

// appendStatsNumber appends f as the stats guests do (encoding/json's float
// format, null when not finite).
func appendStatsNumber(b []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(b, "null"...)
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

// refStore is the window store as it was before adds were batched: a read,
// an eddy_agg_add call and a write per record and window, over a map. The
// batched aggregator must behave exactly like it.
type refStore struct {
	fn     aggFuncs
	m      map[string][]byte
	failed *runtime.Error
}

func (r *refStore) Add(key []byte, w windowing.Window, rec *abi.Record) error {
	k := string(accKey(key, w))
	acc := r.m[k]
	added, failed, err := r.fn.AggAdd(context.Background(), []abi.Group{{Key: key, Acc: acc, Records: []abi.Record{*rec}}}, nil, nil)
	if err != nil {
		return err
	}
	if len(failed) > 0 {
		r.failed = failed[0]
	}
	switch {
	case added[0].Acc != nil:
		r.m[k] = bytes.Clone(added[0].Acc)
	case acc == nil:
		init, err := r.fn.AggInit(context.Background())
		if err != nil {
			return err
		}
		r.m[k] = bytes.Clone(init)
	}
	return nil
}

func (r *refStore) merged(key []byte, wins []windowing.Window) []byte {
	var acc []byte
	for _, w := range wins {
		v, ok := r.m[string(accKey(key, w))]
		if !ok {
			continue
		}
		if acc == nil {
			acc = v
			continue
		}
		res, _ := r.fn.AggMerge(context.Background(), [][]byte{key}, [][]byte{acc}, [][]byte{v}, nil)
		acc = bytes.Clone(res[0].Bytes)
	}
	if acc == nil {
		init, _ := r.fn.AggInit(context.Background())
		acc = bytes.Clone(init)
	}
	return acc
}

func (r *refStore) Merge(key []byte, dst windowing.Window, srcs []windowing.Window) error {
	acc := r.merged(key, srcs)
	for _, w := range srcs {
		delete(r.m, string(accKey(key, w)))
	}
	r.m[string(accKey(key, dst))] = acc
	return nil
}

func (r *refStore) Result(key []byte, _ windowing.Window, srcs []windowing.Window) ([]byte, error) {
	res, err := r.fn.AggResult(context.Background(), [][]byte{key}, [][]byte{r.merged(key, srcs)}, nil)
	if err != nil {
		return nil, err
	}
	return bytes.Clone(res[0].Bytes), nil
}

func (r *refStore) Delete(key []byte, w windowing.Window) error {
	delete(r.m, string(accKey(key, w)))
	return nil
}

// aggRun is what a run of records produced, comparable across stores.
type aggRun struct {
	emits  []string
	late   []string
	failed []string
	state  map[string]string
}

func (r *aggRun) emit(e windowing.Emit) {
	r.emits = append(r.emits, fmt.Sprintf("%s %v %s final=%v removed=%v", e.Key, e.Window, e.Value, e.Final, e.Removed))
}

// runReference runs recs one at a time through a Windower over a refStore.
func runReference(t testing.TB, cfg windowing.Config, fn aggFuncs, recs []abi.Record) aggRun {
	rs := &refStore{fn: fn, m: map[string][]byte{}}
	w, err := windowing.New(cfg, rs)
	if err != nil {
		t.Fatal(err)
	}
	w.Assign(0)
	var run aggRun
	var out windowing.Output
	for j := range recs {
		rs.failed = nil
		out.Reset()
		if err := w.Process(0, &recs[j], &out); err != nil {
			t.Fatal(err)
		}
		if rs.failed != nil {
			run.failed = append(run.failed, fmt.Sprintf("%d %s", j, rs.failed.CodeString()))
		}
		for _, e := range out.Emits {
			run.emit(e)
		}
		for _, l := range out.Late {
			run.late = append(run.late, fmt.Sprintf("%d %v", j, l.Window))
		}
	}
	run.state = map[string]string{}
	for k, v := range rs.m {
		run.state[k] = string(v)
	}
	return run
}

// runAggregator runs recs through an aggregator in batches of random sizes
// up to maxBatch, committing the store now and then; its cache of
// accumulators holds up to budget bytes.
func runAggregator(t testing.TB, cfg windowing.Config, fn aggFuncs, recs []abi.Record, maxBatch, budget int, rng *rand.Rand) aggRun {
	db, err := state.Open("", state.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	st := db.Store("p", "agg", 0)
	a, err := newAggregatorBudget(cfg, st, fn, "stats", 0, budget, nil)
	if err != nil {
		t.Fatal(err)
	}
	var run aggRun
	var out aggOutput
	ctx := context.Background()
	for lo, batches := 0, 0; lo < len(recs); batches++ {
		hi := min(len(recs), lo+1+rng.IntN(maxBatch))
		if err := a.process(ctx, recs[lo:hi], &out); err != nil {
			t.Fatal(err)
		}
		for _, e := range out.Failed {
			run.failed = append(run.failed, fmt.Sprintf("%d %s", lo+e.Index, e.CodeString()))
		}
		for _, e := range out.Emits {
			run.emit(e)
		}
		for i, l := range out.Late {
			if l.Record != &recs[lo+out.LateFrom[i]] {
				t.Fatalf("late entry %d: LateFrom %d is not its record", i, out.LateFrom[i])
			}
			run.late = append(run.late, fmt.Sprintf("%d %v", lo+out.LateFrom[i], l.Window))
		}
		if batches%3 == 2 {
			if err := st.Commit(int64(hi)); err != nil {
				t.Fatal(err)
			}
		}
		lo = hi
	}
	run.state = map[string]string{}
	err = st.Scan([]byte{'a'}, func(k, v []byte) error {
		run.state[string(k)] = string(v)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return run
}

// aggInput returns n records over 20 keys, about 7 ms apart in event time
// with up to 300 ms of disorder; about 3% fail (not numbers, and traps when
// traps is set). It also gives a few windows a single, failing record, and
// adds a few late records.
func aggInput(n int, traps bool, rng *rand.Rand) []abi.Record {
	const base = int64(1_700_000_000_000)
	recs := make([]abi.Record, 0, n+10)
	for i := range n {
		v := strconv.Itoa(rng.IntN(1000))
		switch x := rng.IntN(100); {
		case x < 2:
			v = "x"
		case x < 3 && traps:
			v = "trap"
		}
		recs = append(recs, abi.Record{Key: []byte("k" + strconv.Itoa(rng.IntN(20))),
			Value: []byte(v), Timestamp: base + int64(i)*7 + rng.Int64N(300)})
		if i%700 == 300 {
			// Later than any window's grace.
			recs = append(recs, abi.Record{Key: []byte("k1"), Value: []byte("1"), Timestamp: base + int64(i)*7 - 2000})
		}
		if i%1000 == 500 {
			// A key seen once, with a record that fails: its window must
			// still exist, with the initial accumulator.
			recs = append(recs, abi.Record{Key: []byte("lonely" + strconv.Itoa(i)), Value: []byte("x"), Timestamp: base + int64(i)*7})
		}
	}
	return recs
}

var aggConfigs = []struct {
	name string
	cfg  windowing.Config
}{
	{"tumbling", windowing.Config{Window: windowing.Tumbling(time.Second), Disorder: 300 * time.Millisecond}},
	{"tumbling-retention", windowing.Config{Window: windowing.Tumbling(time.Second), Disorder: 300 * time.Millisecond, Retention: 2 * time.Second}},
	{"tumbling-update", windowing.Config{Window: windowing.Tumbling(time.Second), Disorder: 300 * time.Millisecond, Emit: windowing.EmitUpdate}},
	{"hopping", windowing.Config{Window: windowing.Hopping(time.Second, 250*time.Millisecond), Disorder: 300 * time.Millisecond, Grace: 100 * time.Millisecond}},
	// 200 ms panes, two or three windows a record.
	{"hopping-uneven", windowing.Config{Window: windowing.Hopping(time.Second, 400*time.Millisecond), Disorder: 300 * time.Millisecond, Retention: 500 * time.Millisecond}},
	{"hopping-update", windowing.Config{Window: windowing.Hopping(time.Second, 250*time.Millisecond), Disorder: 300 * time.Millisecond, Emit: windowing.EmitUpdate}},
	{"session", windowing.Config{Window: windowing.Session(150 * time.Millisecond), Disorder: 300 * time.Millisecond}},
	{"session-update", windowing.Config{Window: windowing.Session(150 * time.Millisecond), Disorder: 300 * time.Millisecond, Emit: windowing.EmitUpdate}},
	{"sliding", windowing.Config{Window: windowing.Sliding(500 * time.Millisecond), Disorder: 300 * time.Millisecond}},
	{"global", windowing.Config{Window: windowing.GlobalCount(7)}},
}

// TestAggregatorMatchesPerRecord checks that folding adds in batches changes
// nothing the outside sees: for every kind of window, the results, late
// records, dead-lettered records and stored accumulators equal those of the
// per-record store the node used before, with the stats guest and its
// native twin (whose "trap" records fail like isolated call failures),
// whether the accumulators fit in the cache or not.
func TestAggregatorMatchesPerRecord(t *testing.T) {
	fns := []struct {
		name  string
		fn    func(t *testing.T) aggFuncs
		traps bool
	}{
		{"native", func(*testing.T) aggFuncs { return nativeStats{} }, true},
		{"go", func(t *testing.T) aggFuncs { return loadAggGuest(t, "go/stats.wasm") }, false},
	}
	for _, f := range fns {
		fn := f.fn(t)
		for _, c := range aggConfigs {
			t.Run(f.name+"/"+c.name, func(t *testing.T) {
				rng := rand.New(rand.NewPCG(7, uint64(len(c.name))))
				recs := aggInput(4000, f.traps, rng)
				want := runReference(t, c.cfg, fn, recs)
				if len(want.emits) == 0 || len(want.failed) == 0 || len(want.late) == 0 && c.cfg.Window.Kind != windowing.KindGlobal {
					t.Fatalf("the input does not exercise the store: %d emits, %d failed, %d late", len(want.emits), len(want.failed), len(want.late))
				}
				for _, run := range []struct{ maxBatch, budget int }{
					{1, accCacheBudget}, {50, accCacheBudget}, {500, accCacheBudget},
					{500, 0},    // every read goes to the store
					{500, 4000}, // some do
				} {
					got := runAggregator(t, c.cfg, fn, recs, run.maxBatch, run.budget, rng)
					compareRuns(t, fmt.Sprintf("batches up to %d, cache of %d bytes", run.maxBatch, run.budget), got, want)
				}
			})
		}
	}
}

func compareRuns(t *testing.T, what string, got, want aggRun) {
	t.Helper()
	for _, c := range []struct {
		name      string
		got, want []string
	}{{"emits", got.emits, want.emits}, {"late", got.late, want.late}, {"failed", got.failed, want.failed}} {
		if !slices.Equal(c.got, c.want) {
			i := 0
			for i < min(len(c.got), len(c.want)) && c.got[i] == c.want[i] {
				i++
			}
			t.Fatalf("%s: %s differ at %d of %d/%d: got %q, want %q", what, c.name, i, len(c.got), len(c.want),
				c.got[i:min(i+3, len(c.got))], c.want[i:min(i+3, len(c.want))])
		}
	}
	if len(got.state) != len(want.state) {
		t.Fatalf("%s: %d accumulators stored, want %d", what, len(got.state), len(want.state))
	}
	for k, v := range want.state {
		if got.state[k] != v {
			t.Fatalf("%s: accumulator %q = %x, want %x", what, k, got.state[k], v)
		}
	}
}

// loadAggGuest loads a guest from testdata and returns an instance.
func loadAggGuest(t testing.TB, guest string) *runtime.Instance {
	t.Helper()
	ctx := context.Background()
	eng, err := runtime.NewEngine(runtime.WithCacheDir(filepath.Join(os.TempDir(), "eddy-host-aggregator-cache")))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close(ctx) })
	wasm, err := os.ReadFile(filepath.Join("..", "testdata", guest))
	if err != nil {
		t.Fatal(err)
	}
	fn, err := eng.Load(ctx, "stats", wasm)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fn.Close(ctx) })
	inst, err := fn.NewInstance(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { inst.Close(ctx) })
	return inst
}

// TestAggregatorTrapIsolation folds a batch in which one record traps the
// guest's call (an invalid accumulator would too): the record goes to the
// dead letters with its batch index, and the rest of its window is folded.
func TestAggregatorTrapIsolation(t *testing.T) {
	db, err := state.Open("", state.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	a, err := newAggregator(windowing.Config{Window: windowing.Tumbling(time.Second)}, db.Store("p", "agg", 0), nativeStats{}, "stats", 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	recs := []abi.Record{
		{Key: []byte("a"), Value: []byte("1"), Timestamp: 100},
		{Key: []byte("b"), Value: []byte("trap"), Timestamp: 110},
		{Key: []byte("a"), Value: []byte("trap"), Timestamp: 120},
		{Key: []byte("a"), Value: []byte("2"), Timestamp: 130},
		{Key: []byte("a"), Value: []byte("x"), Timestamp: 140},
		{Key: []byte("c"), Value: []byte("5"), Timestamp: 5000}, // closes [0, 1000)
	}
	var out aggOutput
	if err := a.process(context.Background(), recs, &out); err != nil {
		t.Fatal(err)
	}
	var failed []string
	for _, e := range out.Failed {
		failed = append(failed, fmt.Sprintf("%d %s", e.Index, e.CodeString()))
		if e.Group != -1 || !strings.Contains(e.Error(), fmt.Sprintf("record %d", e.Index)) {
			t.Errorf("failure %v: want the batch index and no group", e)
		}
	}
	if want := []string{"1 trap", "2 trap", "4 bad_input"}; !slices.Equal(failed, want) {
		t.Fatalf("failed %q, want %q", failed, want)
	}
	var emits []string
	for _, e := range out.Emits {
		emits = append(emits, string(e.Key)+" "+string(e.Value))
	}
	if want := []string{`a {"count":2,"sum":3,"avg":1.5}`, `b {"count":0,"sum":0,"avg":null}`}; !slices.Equal(emits, want) {
		t.Fatalf("emits %q, want %q", emits, want)
	}
	if !errors.Is(out.Failed[0], runtime.ErrTrap) {
		t.Fatalf("failure %v is not a trap", out.Failed[0])
	}
}

// TestWindowStoreCacheAfterAbort checks that an aborted transaction does
// not leave its accumulators in the window store's cache.
func TestWindowStoreCacheAfterAbort(t *testing.T) {
	db, err := state.Open("", state.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	st := db.Store("p", "agg", 0)
	ws := newWindowStore(st, nativeStats{}, accCacheBudget)
	ctx := context.Background()
	win := windowing.Window{Start: 0, End: 1000}
	add := func(v string) {
		ws.begin(ctx, 1)
		if err := ws.Add([]byte("k"), win, &abi.Record{Key: []byte("k"), Value: []byte(v)}); err != nil {
			t.Fatal(err)
		}
		if err := ws.flush(); err != nil {
			t.Fatal(err)
		}
	}
	count := func() int64 {
		ws.begin(ctx, 0)
		acc, ok, err := ws.get(accKey([]byte("k"), win))
		if err != nil || !ok {
			t.Fatalf("get: %v %v", ok, err)
		}
		return int64(binary.LittleEndian.Uint64(acc))
	}
	add("1")
	if err := st.Commit(1); err != nil {
		t.Fatal(err)
	}
	add("2")
	if n := count(); n != 2 {
		t.Fatalf("count %d before the abort, want 2", n)
	}
	st.Abort()
	if n := count(); n != 1 {
		t.Fatalf("count %d after the abort, want the committed 1", n)
	}
	add("3")
	if n := count(); n != 2 {
		t.Fatalf("count %d after another add, want 2", n)
	}
}

// TestAggregatorResultsOutsideBatch advances the windower between batches,
// as a caller that drives it itself may: the results it fires must have
// their values (results are deferred only within a batch).
func TestAggregatorResultsOutsideBatch(t *testing.T) {
	db, err := state.Open("", state.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	a, err := newAggregator(windowing.Config{Window: windowing.Tumbling(time.Second)}, db.Store("p", "agg", 0), nativeStats{}, "stats", 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	var out aggOutput
	recs := []abi.Record{{Key: []byte("a"), Value: []byte("1"), Timestamp: 100}, {Key: []byte("a"), Value: []byte("2"), Timestamp: 200}}
	if err := a.process(context.Background(), recs, &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Emits) != 0 {
		t.Fatalf("emits %v before the window closed", out.Emits)
	}
	if err := a.w.Progress(0, 5000, &out.Output); err != nil {
		t.Fatal(err)
	}
	if len(out.Emits) != 1 || string(out.Emits[0].Value) != `{"count":2,"sum":3,"avg":1.5}` {
		t.Fatalf("emits %+v after progress", out.Emits)
	}
}

// unluckyMerge is nativeStats whose merge fails when the second
// accumulator's sum is 13.
type unluckyMerge struct{ nativeStats }

func (u unluckyMerge) AggMerge(ctx context.Context, keys, a, b [][]byte, out []runtime.Result) ([]runtime.Result, error) {
	for i := range keys {
		if math.Float64frombits(binary.LittleEndian.Uint64(b[i][8:])) == 13 {
			out = append(out, runtime.Result{Err: &runtime.Error{Function: "stats", Kind: abi.KindAggregate,
				Cause: runtime.CauseGuest, Code: abi.CodeBadInput, Index: i, Group: -1, Reason: "unlucky"}})
			continue
		}
		out, _ = u.nativeStats.AggMerge(ctx, keys[i:i+1], a[i:i+1], b[i:i+1], out)
	}
	return out, nil
}

// TestAggregatorMergeFailure: the panes of a hopping window are merged at
// the end of the batch; a merge that fails drops that result and charges
// the record whose arrival asked for it, as a failing result does, and
// the batch's other results keep their values.
func TestAggregatorMergeFailure(t *testing.T) {
	for _, tc := range []struct {
		emit   windowing.EmitMode
		recs   []abi.Record
		failed []string
		emits  []string
	}{
		{
			emit: windowing.EmitUpdate,
			recs: []abi.Record{
				{Key: []byte("a"), Value: []byte("1"), Timestamp: 100},
				{Key: []byte("a"), Value: []byte("13"), Timestamp: 600}, // [0,1000) merges a pane of 13
				{Key: []byte("a"), Value: []byte("2"), Timestamp: 700},
				{Key: []byte("b"), Value: []byte("5"), Timestamp: 100},
			},
			failed: []string{"1 bad_input"},
			emits: []string{
				`a [-500,500) {"count":1,"sum":1,"avg":1}`, `a [0,1000) {"count":1,"sum":1,"avg":1}`,
				`a [500,1500) {"count":1,"sum":13,"avg":13}`,
				`a [0,1000) {"count":3,"sum":16,"avg":5.333333333333333}`, `a [500,1500) {"count":2,"sum":15,"avg":7.5}`,
				`b [-500,500) {"count":1,"sum":5,"avg":5}`, `b [0,1000) {"count":1,"sum":5,"avg":5}`,
			},
		},
		{
			emit: windowing.EmitFinal,
			recs: []abi.Record{
				{Key: []byte("a"), Value: []byte("1"), Timestamp: 100},
				{Key: []byte("a"), Value: []byte("13"), Timestamp: 600},
				{Key: []byte("b"), Value: []byte("5"), Timestamp: 100},
				{Key: []byte("c"), Value: []byte("1"), Timestamp: 5000}, // wm 4000 closes them all
			},
			failed: []string{"3 bad_input"},
			emits: []string{
				`a [-500,500) {"count":1,"sum":1,"avg":1}`, `b [-500,500) {"count":1,"sum":5,"avg":5}`,
				`b [0,1000) {"count":1,"sum":5,"avg":5}`, `a [500,1500) {"count":1,"sum":13,"avg":13}`,
			},
		},
	} {
		t.Run(tc.emit.String(), func(t *testing.T) {
			db, err := state.Open("", state.Options{InMemory: true})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			cfg := windowing.Config{Window: windowing.Hopping(time.Second, 500*time.Millisecond), Disorder: time.Second, Emit: tc.emit}
			a, err := newAggregator(cfg, db.Store("p", "agg", 0), unluckyMerge{}, "stats", 0, nil)
			if err != nil {
				t.Fatal(err)
			}
			var out aggOutput
			if err := a.process(context.Background(), tc.recs, &out); err != nil {
				t.Fatal(err)
			}
			var failed, emits []string
			for _, e := range out.Failed {
				failed = append(failed, fmt.Sprintf("%d %s", e.Index, e.CodeString()))
			}
			for _, e := range out.Emits {
				emits = append(emits, fmt.Sprintf("%s %v %s", e.Key, e.Window, e.Value))
			}
			if !slices.Equal(failed, tc.failed) {
				t.Errorf("failed %q, want %q", failed, tc.failed)
			}
			if !slices.Equal(emits, tc.emits) {
				t.Errorf("emits\n%q\nwant\n%q", emits, tc.emits)
			}
		})
	}
}

// sloppyStats is nativeStats that, for a group none of whose records it
// folded, answers an accumulator of its own instead of the one it was given
// (ABI.md 5.4 asks for the input unchanged).
type sloppyStats struct{ nativeStats }

func (s sloppyStats) AggAdd(ctx context.Context, groups []abi.Group, out []abi.Added, failed []*runtime.Error) ([]abi.Added, []*runtime.Error, error) {
	n, m := len(out), len(failed)
	out, failed, err := s.nativeStats.AggAdd(ctx, groups, out, failed)
	refused := make([]int, len(groups))
	for _, e := range failed[m:] {
		refused[e.Group]++
	}
	for g := range groups {
		if refused[g] == len(groups[g].Records) {
			out[n+g].Acc = encodeStats(999, 999)
		}
	}
	return out, failed, err
}

// TestAggregatorKeepsTheStoredAccumulator: when every record of a group
// fails, the window keeps the accumulator the host had stored (or starts
// from the initial one), whatever the guest answered for it.
func TestAggregatorKeepsTheStoredAccumulator(t *testing.T) {
	db, err := state.Open("", state.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	a, err := newAggregator(windowing.Config{Window: windowing.Tumbling(time.Second)}, db.Store("p", "agg", 0), sloppyStats{}, "stats", 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	var out aggOutput
	var emits []string
	for _, recs := range [][]abi.Record{
		{{Key: []byte("a"), Value: []byte("1"), Timestamp: 100}},
		{{Key: []byte("a"), Value: []byte("x"), Timestamp: 200}, {Key: []byte("b"), Value: []byte("y"), Timestamp: 300}},
		{{Key: []byte("c"), Value: []byte("5"), Timestamp: 5000}}, // closes [0, 1000)
	} {
		if err := a.process(context.Background(), recs, &out); err != nil {
			t.Fatal(err)
		}
		for _, e := range out.Emits {
			emits = append(emits, string(e.Key)+" "+string(e.Value))
		}
	}
	if want := []string{`a {"count":1,"sum":1,"avg":1}`, `b {"count":0,"sum":0,"avg":null}`}; !slices.Equal(emits, want) {
		t.Fatalf("emits %q, want %q", emits, want)
	}
}
