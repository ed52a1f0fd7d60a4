package guests

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/nexmark"
	"github.com/eddy-streams/eddy/runtime"
)

// These tests run the Nexmark guests (guests/go/nx-*, guests/c/nx-*.c, as
// built into testdata/) through the runtime on nexmark's generated events,
// and compare what they produce with nexmark's reference queries. The C
// guests must answer exactly as their Go twins: same output bytes, same
// failure codes and reasons.

// nxLanguages are the languages that have each Nexmark guest.
var nxLanguages = map[string][]string{
	"nx-q1": {"go", "c"}, "nx-q2": {"go", "c"},
	"nx-q3": {"go"}, "nx-q5": {"go"}, "nx-q7": {"go"}, "nx-q8": {"go"}, "nx-count": {"go"}, "nx-one": {"go"},
}

// nxEvents returns the first n events of nexmark's default stream, or of
// the stream at the given rate (events per second of event time) to span
// more windows.
func nxEvents(t testing.TB, n int64, rate ...int) []nexmark.Event {
	t.Helper()
	cfg := nexmark.DefaultConfig()
	cfg.Events = n
	if len(rate) > 0 {
		cfg.FirstEventRate, cfg.NextEventRate = rate[0], rate[0]
	}
	g, err := nexmark.NewGenerator(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var events []nexmark.Event
	for ev, ok := g.Next(); ok; ev, ok = g.Next() {
		events = append(events, ev)
	}
	return events
}

func nxRecords(events []nexmark.Event) []abi.Record {
	recs := make([]abi.Record, len(events))
	for i, ev := range events {
		recs[i] = nexmark.Record(ev)
	}
	return recs
}

// nxInstance loads testdata/<lang>/<guest>.wasm and returns an instance of
// it, released when the test ends.
func nxInstance(t testing.TB, lang, guest string, opts ...runtime.Option) *runtime.Instance {
	t.Helper()
	wasm, err := os.ReadFile("../testdata/" + lang + "/" + guest + ".wasm")
	if err != nil {
		t.Fatalf("%v (build it with guests/%s/build.sh)", err, lang)
	}
	e, err := runtime.NewEngine(runtime.WithCacheDir(nxCacheDir(t)))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	f, err := e.Load(ctx, guest, wasm, opts...)
	if err != nil {
		t.Fatal(err)
	}
	inst, err := f.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		f.Release(ctx, inst)
		f.Close(ctx)
		e.Close(ctx)
	})
	return inst
}

var nxCache string

// nxCacheDir is one compilation cache for all the tests of a run: a Go
// module takes seconds to compile.
func nxCacheDir(t testing.TB) string {
	if nxCache == "" {
		dir, err := os.MkdirTemp("", "eddy-nexmark-guests-")
		if err != nil {
			t.Fatal(err)
		}
		nxCache = dir
	}
	return nxCache
}

func TestMain(m *testing.M) {
	code := m.Run()
	if nxCache != "" {
		os.RemoveAll(nxCache)
	}
	os.Exit(code)
}

// nxOutcome is what a process function did with one input record: its
// outputs, or its failure.
type nxOutcome struct {
	outs []abi.Record
	err  *runtime.Error
}

// String describes the outcome exactly, for comparing languages.
func (o nxOutcome) String() string {
	if o.err != nil {
		return fmt.Sprintf("error %v %d %q", o.err.Cause, o.err.Code, o.err.Reason)
	}
	s := ""
	for _, r := range o.outs {
		s += fmt.Sprintf("[%q %q %d %d]", r.Key, r.Value, r.Timestamp, len(r.Headers))
	}
	return s
}

// nxProcess runs recs through inst in batches of 1024.
func nxProcess(t testing.TB, inst *runtime.Instance, recs []abi.Record) []nxOutcome {
	t.Helper()
	outcomes := make([]nxOutcome, len(recs))
	var out runtime.Output
	for lo := 0; lo < len(recs); lo += 1024 {
		hi := min(lo+1024, len(recs))
		out.Reset()
		if err := inst.Process(context.Background(), recs[lo:hi], &out); err != nil {
			t.Fatal(err)
		}
		for i, r := range out.Records {
			o := &outcomes[lo+int(out.From[i])]
			r.Key, r.Value = slices.Clone(r.Key), slices.Clone(r.Value)
			o.outs = append(o.outs, r)
		}
		for _, e := range out.Failed {
			outcomes[lo+e.Index].err = e
		}
	}
	return outcomes
}

// sameOutcomes fails the test where two languages' outcomes differ.
func sameOutcomes(t *testing.T, guest string, recs []abi.Record, a, b []nxOutcome) {
	t.Helper()
	bad := 0
	for i := range a {
		if sa, sb := a[i].String(), b[i].String(); sa != sb {
			t.Errorf("%s, input %q:\n  go: %s\n  c:  %s", guest, recs[i].Value, sa, sb)
			if bad++; bad == 10 {
				t.Fatal("too many differences")
			}
		}
	}
}

// wantBadInput checks that an outcome is a BAD_INPUT failure with reason.
func wantBadInput(t *testing.T, o nxOutcome, reason string) {
	t.Helper()
	if o.err == nil || o.err.Cause != runtime.CauseGuest || o.err.Code != abi.CodeBadInput || o.err.Reason != reason {
		t.Fatalf("outcome %s, want BAD_INPUT %q", o, reason)
	}
}

func TestNexmarkQ1(t *testing.T) {
	events := nxEvents(t, 20_000)
	recs := nxRecords(events)
	want := nexmark.Q1(events)
	var byLang [][]nxOutcome
	for _, lang := range nxLanguages["nx-q1"] {
		outcomes := nxProcess(t, nxInstance(t, lang, "nx-q1"), recs)
		var got []nexmark.Bid
		for i, o := range outcomes {
			if events[i].Bid == nil {
				wantBadInput(t, o, `value is not a bid: no "bidder" member`)
				continue
			}
			if o.err != nil || len(o.outs) != 1 {
				t.Fatalf("%s: bid %d: %s", lang, i, o)
			}
			out := o.outs[0]
			if string(out.Key) != string(recs[i].Key) || out.Timestamp != recs[i].Timestamp {
				t.Fatalf("%s: bid %d: key or timestamp changed", lang, i)
			}
			ev, err := nexmark.Decode(out.Value)
			if err != nil || ev.Bid == nil {
				t.Fatalf("%s: bid %d: %q: %v", lang, i, out.Value, err)
			}
			got = append(got, *ev.Bid)
		}
		slices.SortFunc(got, nexmark.Bid.Compare)
		if !slices.Equal(got, want) {
			t.Errorf("%s: %d results differ from nexmark.Q1's %d", lang, len(got), len(want))
		}
		byLang = append(byLang, outcomes)
	}
	sameOutcomes(t, "nx-q1", recs, byLang[0], byLang[1])
}

func TestNexmarkQ2(t *testing.T) {
	events := nxEvents(t, 50_000)
	recs := nxRecords(events)
	want := nexmark.Q2(events)
	if len(want) < 10 {
		t.Fatalf("only %d reference results", len(want))
	}
	var byLang [][]nxOutcome
	for _, lang := range nxLanguages["nx-q2"] {
		outcomes := nxProcess(t, nxInstance(t, lang, "nx-q2"), recs)
		var got []nexmark.Q2Result
		for i, o := range outcomes {
			if o.err != nil {
				t.Fatalf("%s: event %d: %s", lang, i, o)
			}
			for _, out := range o.outs {
				var r nexmark.Q2Result
				if err := json.Unmarshal(out.Value, &r); err != nil {
					t.Fatalf("%s: %q: %v", lang, out.Value, err)
				}
				if string(out.Key) != string(recs[i].Key) || out.Timestamp != recs[i].Timestamp {
					t.Fatalf("%s: event %d: key or timestamp changed", lang, i)
				}
				got = append(got, r)
			}
		}
		slices.SortFunc(got, nexmark.Q2Result.Compare)
		if !slices.Equal(got, want) {
			t.Errorf("%s: %d results, nexmark.Q2 %d", lang, len(got), len(want))
		}
		byLang = append(byLang, outcomes)
	}
	sameOutcomes(t, "nx-q2", recs, byLang[0], byLang[1])
}

// nxEdgeCases are values on which the C guests must answer exactly as the
// Go guests: the general path, malformed JSON, and numbers at the limits.
var nxEdgeCases = []string{
	``, `{}`, `[]`, `null`, `5`, `"x"`, `{`, `}`, `{"bidder":1}`, `{"bidder":1,"price":5}`,
	`{"auction":123,"bidder":1,"price":5}`, `{"auction":-123,"bidder":1,"price":-5}`,
	` {"auction" : 246 , "bidder":1 ,"price": 7 } `, "{\"auction\":0,\n\"bidder\":1,\t\"price\":9}",
	`{"auction":123,"bidder":1,"price":5,"price":6}`, `{"auction":1,"bidder":1,"price":5,"auction":123}`,
	`{"bidd\u0065r":1,"\u0070rice":100,"auction":123}`, `{"auction":123,"bidder":1,"price":1.5}`,
	`{"auction":123,"bidder":1,"price":1e2}`, `{"auction":123,"bidder":1,"price":"5"}`,
	`{"auction":123,"bidder":1,"price":null}`, `{"auction":123,"bidder":1,"price":01}`,
	`{"auction":123,"bidder":1,"price":-}`, `{"auction":123,"bidder":1,"price":9223372036854775807}`,
	`{"auction":123,"bidder":1,"price":-9223372036854775808}`, `{"auction":123,"bidder":1,"price":9223372036854775808}`,
	`{"auction":9223372036854775807,"bidder":1,"price":1}`, `{"auction":123,"bidder":1,"price":1234567890123456789}`,
	`{"auction":123,"bidder":1}`, `{"bidder":1,"price":5}`, `{"auction":123,"price":5}`,
	`{"auction":123,"bidder":1,"price":5,"x":{"bidder":[1,2,{"a":"}"}]}}`, `{"auction":123,"bidder":1,"price":5}x`,
	`{"auction":123,"bidder":1,"price":5,}`, "{\"auction\":123,\"bidder\":1,\"price\":5,\"s\":\"a\x01\"}",
	`{"auction":123,"bidder":1,"price":5,"s":"\q"}`, `{"auction":123,"bidder":1,"price":5,"s":"\u12"}`,
	`{"auction":123,"bidder":1,"price":5,"s":"\ud800\udc00 \u00e9 \" \\ \/ \b\f\n\r\t"}`,
	"{\"auction\":123,\"bidder\":1,\"price\":5,\"s\":\"\xff\xfe\"}",
	`{"id":1,"name":"n","emailAddress":"e"}`, `{"id":1,"itemName":"i","seller":2}`,
}

// nxMutate damages a value at random: a byte replaced, removed or
// inserted, white space added, a number made a fraction, or a cut.
func nxMutate(r *rand.Rand, v []byte) []byte {
	v = slices.Clone(v)
	const junk = "{}[]\",:0-9e.E \\u\x00\x1fxé\t\n"
	i := r.IntN(len(v))
	switch r.IntN(6) {
	case 0:
		v[i] = junk[r.IntN(len(junk))]
	case 1:
		v = slices.Delete(v, i, i+1)
	case 2:
		v = slices.Insert(v, i, junk[r.IntN(len(junk))])
	case 3:
		v = slices.Insert(v, i, ' ')
	case 4:
		v = slices.Insert(v, i, '.', '5')
	default:
		v = v[:i]
	}
	return v
}

// nxWildBids are bids with integers of every size, and strings with
// escapes, in AppendJSON's layout.
func nxWildBids(r *rand.Rand, n int) []abi.Record {
	num := func() int64 {
		switch r.IntN(5) {
		case 0:
			return r.Int64() >> r.IntN(64)
		case 1:
			return -(r.Int64() >> r.IntN(64))
		case 2:
			return 123 * (r.Int64N(1e6) - 5e5)
		case 3:
			return []int64{0, math.MaxInt64, math.MinInt64, 1e8, 1e16, -1e15}[r.IntN(6)]
		}
		return r.Int64N(1e9)
	}
	str := func() string {
		b := make([]byte, r.IntN(100))
		for i := range b {
			b[i] = "ab\\\"\n\x01zHé/"[r.IntN(11)]
		}
		return string(b)
	}
	recs := make([]abi.Record, n)
	for i := range recs {
		ev := nexmark.Event{Bid: &nexmark.Bid{Auction: num(), Bidder: num(), Price: num(), Channel: str(),
			URL: str(), DateTime: num(), Extra: str()}}
		recs[i] = nexmark.Record(ev)
	}
	return recs
}

// TestNexmarkCMatchesGo runs the C and Go twins on edge cases, damaged
// events and bids with wild values.
func TestNexmarkCMatchesGo(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	var recs []abi.Record
	for _, v := range nxEdgeCases {
		recs = append(recs, abi.Record{Key: []byte("k"), Value: []byte(v), Timestamp: 1})
	}
	recs = append(recs, abi.Record{Key: []byte("null"), Value: nil, Timestamp: 2})
	events := nxRecords(nxEvents(t, 2_000))
	for range 5_000 {
		rec := events[r.IntN(len(events))]
		rec.Value = nxMutate(r, rec.Value)
		if r.IntN(3) == 0 {
			rec.Value = nxMutate(r, rec.Value)
		}
		recs = append(recs, rec)
	}
	recs = append(recs, nxWildBids(r, 5_000)...)
	recs = append(recs, events...)
	for _, guest := range []string{"nx-q1", "nx-q2"} {
		goOut := nxProcess(t, nxInstance(t, "go", guest), recs)
		cOut := nxProcess(t, nxInstance(t, "c", guest), recs)
		sameOutcomes(t, guest, recs, goOut, cOut)
		failed := 0
		for _, o := range goOut {
			if o.err != nil {
				failed++
			}
		}
		t.Logf("%s: %d records, %d failed", guest, len(recs), failed)
	}
}

func TestNexmarkQ3(t *testing.T) {
	events := nxEvents(t, 50_000)
	recs := nxRecords(events)
	inst := nxInstance(t, "go", "nx-q3")
	// The filter keeps the auctions of category 10, unchanged.
	var left [][]byte
	var sellers []int64
	for i, o := range nxProcess(t, inst, recs) {
		a := events[i].Auction
		keep := a != nil && a.Category == 10
		if o.err != nil || len(o.outs) != map[bool]int{true: 1}[keep] {
			t.Fatalf("event %d (%s): %s", i, events[i].Kind(), o)
		}
		if keep {
			if string(o.outs[0].Value) != string(recs[i].Value) {
				t.Fatalf("auction %d changed", a.ID)
			}
			left = append(left, o.outs[0].Value)
			sellers = append(sellers, a.Seller)
		}
	}
	// The join, with every person in the table.
	persons := map[int64][]byte{}
	for i, ev := range events {
		if p := ev.Person; p != nil && persons[p.ID] == nil {
			persons[p.ID] = recs[i].Value
		}
	}
	keys := make([][]byte, len(left))
	right := make([][]byte, len(left))
	for i, s := range sellers {
		keys[i] = strconv.AppendInt(nil, s, 10)
		right[i] = persons[s] // nil when the seller is unknown: no output
	}
	res, err := inst.Join(context.Background(), keys, left, right, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []nexmark.Q3Result
	for i, r := range res {
		if r.Err != nil {
			t.Fatalf("join %d: %v", i, r.Err)
		}
		if r.Bytes == nil {
			continue
		}
		var q nexmark.Q3Result
		if err := json.Unmarshal(r.Bytes, &q); err != nil {
			t.Fatalf("%q: %v", r.Bytes, err)
		}
		got = append(got, q)
	}
	slices.SortFunc(got, nexmark.Q3Result.Compare)
	want := nexmark.Q3(events)
	if len(want) < 5 || !slices.Equal(got, want) {
		t.Errorf("%d results, nexmark.Q3 %d:\n%v\n%v", len(got), len(want), got, want)
	}
}

// nxWindow is the start of the tumbling window of q7 and q12 holding t.
func nxWindow(t int64) int64 {
	s := t / nexmark.WindowSize * nexmark.WindowSize
	if t < s {
		s -= nexmark.WindowSize
	}
	return s
}

// nxFold folds recs into one accumulator, in calls of at most batch
// records.
func nxFold(t *testing.T, inst *runtime.Instance, key []byte, acc []byte, recs []abi.Record, batch int) []byte {
	t.Helper()
	for lo := 0; lo < len(recs); lo += batch {
		hi := min(lo+batch, len(recs))
		added, failed, err := inst.AggAdd(context.Background(), []abi.Group{{Key: key, Acc: acc, Records: recs[lo:hi]}}, nil, nil)
		if err != nil || len(failed) != 0 {
			t.Fatalf("add: %v %v", err, failed)
		}
		acc = slices.Clone(added[0].Acc)
	}
	return acc
}

func TestNexmarkQ7(t *testing.T) {
	events := nxEvents(t, 100_000, 500) // 200 s: 20 windows
	recs := nxRecords(events)
	var bids []abi.Record
	for i, ev := range events {
		if ev.Bid != nil {
			bids = append(bids, recs[i])
		}
	}
	// Every bid goes to the key "all".
	keyed, err := nxInstance(t, "go", "nx-one").Key(context.Background(), bids, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keyed {
		if k.Err != nil || string(k.Bytes) != "all" {
			t.Fatalf("key %q %v", k.Bytes, k.Err)
		}
	}
	inst := nxInstance(t, "go", "nx-q7")
	byWindow := map[int64][]abi.Record{}
	var starts []int64
	for _, b := range bids {
		s := nxWindow(b.Timestamp)
		if byWindow[s] == nil {
			starts = append(starts, s)
		}
		byWindow[s] = append(byWindow[s], b)
	}
	var got []nexmark.Q7Result
	for _, s := range starts {
		ws := byWindow[s]
		acc := nxFold(t, inst, []byte("all"), nil, ws, 500)
		// The same from two halves, merged (session windows do this).
		half := len(ws) / 3
		a := nxFold(t, inst, []byte("all"), nil, ws[:half], 1024)
		b := nxFold(t, inst, []byte("all"), nil, ws[half:], 1024)
		merged, err := inst.AggMerge(context.Background(), [][]byte{[]byte("all")}, [][]byte{a}, [][]byte{b}, nil)
		if err != nil || merged[0].Err != nil || string(merged[0].Bytes) != string(acc) {
			t.Fatalf("window %d: merge %v %v", s, err, merged[0].Err)
		}
		res, err := inst.AggResult(context.Background(), [][]byte{[]byte("all")}, [][]byte{acc}, nil)
		if err != nil || res[0].Err != nil {
			t.Fatalf("result: %v %v", err, res[0].Err)
		}
		var r struct {
			Price int64
			Bids  []struct{ Auction, Bidder, DateTime int64 }
		}
		if err := json.Unmarshal(res[0].Bytes, &r); err != nil {
			t.Fatalf("%q: %v", res[0].Bytes, err)
		}
		var window []nexmark.Q7Result
		for _, b := range r.Bids {
			window = append(window, nexmark.Q7Result{Start: s, End: s + nexmark.WindowSize, Auction: b.Auction,
				Bidder: b.Bidder, Price: r.Price, DateTime: b.DateTime})
		}
		if !slices.IsSortedFunc(window, nexmark.Q7Result.Compare) {
			t.Errorf("window %d: bids not in nexmark.Q7Result's order", s)
		}
		got = append(got, window...)
	}
	slices.SortFunc(got, nexmark.Q7Result.Compare)
	want := nexmark.Q7(events)
	if len(starts) < 10 || !slices.Equal(got, want) {
		t.Errorf("%d windows, %d results, nexmark.Q7 %d:\n%v\n%v", len(starts), len(got), len(want), got, want)
	}
}

// TestNexmarkCount counts bids per bidder and tumbling window (q12) with
// nx-count.
func TestNexmarkCount(t *testing.T) {
	events := nxEvents(t, 30_000, 1000) // 30 s: 4 windows
	inst := nxInstance(t, "go", "nx-count")
	type group struct{ bidder, start int64 }
	groups := map[group][]abi.Record{}
	for _, ev := range events {
		if b := ev.Bid; b != nil {
			k := group{b.Bidder, nxWindow(b.DateTime)}
			groups[k] = append(groups[k], nexmark.Record(ev))
		}
	}
	var got []nexmark.BidderCount
	for k, recs := range groups {
		key := strconv.AppendInt(nil, k.bidder, 10)
		acc := nxFold(t, inst, key, nil, recs, 7)
		res, err := inst.AggResult(context.Background(), [][]byte{key}, [][]byte{acc}, nil)
		if err != nil || res[0].Err != nil {
			t.Fatalf("result: %v %v", err, res[0].Err)
		}
		var r struct{ Count int64 }
		if err := json.Unmarshal(res[0].Bytes, &r); err != nil {
			t.Fatal(err)
		}
		got = append(got, nexmark.BidderCount{Bidder: k.bidder, Start: k.start, End: k.start + nexmark.WindowSize, Count: r.Count})
	}
	slices.SortFunc(got, nexmark.BidderCount.Compare)
	if want := nexmark.Q12(events); !slices.Equal(got, want) {
		t.Errorf("%d counts, nexmark.Q12 %d", len(got), len(want))
	}
}

// BenchmarkNexmark runs q1 and q2 over nexmark's bids, and q2 over all
// events, one instance on one core, with the host's deadline checks (the
// default) and without: records/s.
func BenchmarkNexmark(b *testing.B) {
	events := nxEvents(b, 25_000)
	all := nxRecords(events)
	var bids []abi.Record
	for i, ev := range events {
		if ev.Bid != nil {
			bids = append(bids, all[i])
		}
	}
	for _, tc := range []struct {
		guest, input string
		recs         []abi.Record
	}{{"nx-q1", "bids", bids}, {"nx-q2", "bids", bids}, {"nx-q2", "events", all}} {
		for _, lang := range nxLanguages[tc.guest] {
			for _, mode := range []string{"wasm", "uninterruptible"} {
				b.Run(tc.guest+"/"+tc.input+"/"+lang+"/"+mode, func(b *testing.B) {
					var opts []runtime.Option
					if mode == "uninterruptible" {
						opts = append(opts, runtime.WithUninterruptible())
					}
					inst := nxInstance(b, lang, tc.guest, opts...)
					var out runtime.Output
					n := 0
					start := time.Now()
					for b.Loop() {
						lo := n % len(tc.recs)
						batch := tc.recs[lo:min(lo+1024, len(tc.recs))]
						out.Reset()
						if err := inst.Process(context.Background(), batch, &out); err != nil || len(out.Failed) != 0 {
							b.Fatal(err, out.Failed)
						}
						n += len(batch)
					}
					b.ReportMetric(float64(n)/time.Since(start).Seconds(), "records/s")
				})
			}
		}
	}
}
