package main

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"

	eddy "github.com/eddy-streams/eddy/sdk/go"
	"github.com/eddy-streams/eddy/sdk/go/eddytest"
)

func recs(values ...string) []eddy.Record {
	out := make([]eddy.Record, len(values))
	for i, v := range values {
		out[i] = eddy.Record{Key: []byte("k"), Value: []byte(v), Timestamp: int64(i)}
	}
	return out
}

func acc(count int64, sum float64) []byte { return encode(make([]byte, accSize), count, sum) }

func TestStats(t *testing.T) {
	init, err := eddytest.AggInit()
	if err != nil || init.Code != 0 || !bytes.Equal(init.Value, acc(0, 0)) {
		t.Fatalf("init %+v, %v", init, err)
	}
	added, err := eddytest.AggAdd(
		eddytest.Group{Key: []byte("a"), Acc: nil, Records: recs("42", "3.5", "oops", " -1.5e1\n", `"7"`, "1e400", "")},
		eddytest.Group{Key: []byte("b"), Acc: acc(10, 100), Records: recs("5")},
		eddytest.Group{Key: []byte("c"), Acc: []byte("short"), Records: recs("5")},
	)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(added[0].Acc, acc(3, 30.5)) {
		c, s, _ := decode(added[0].Acc)
		t.Errorf("group a: count %d sum %v, want 3 30.5", c, s)
	}
	var badIdx []int
	for _, e := range added[0].Errors {
		if e.Code != eddytest.BadInput {
			t.Errorf("group a error %+v", e)
		}
		badIdx = append(badIdx, e.Index)
	}
	if want := []int{2, 4, 5, 6}; !equalInts(badIdx, want) {
		t.Errorf("failed records %v, want %v", badIdx, want)
	}
	if !bytes.Equal(added[1].Acc, acc(11, 105)) {
		t.Errorf("group b %+v", added[1])
	}
	if e := added[2].Errors; len(e) != 1 || e[0].Code != eddytest.Rejected || string(added[2].Acc) != "short" {
		t.Errorf("group c %+v", added[2])
	}

	merged, err := eddytest.AggMerge(
		eddytest.MergeItem{Key: []byte("a"), A: acc(3, 30.5), B: acc(1, 1.5)},
		eddytest.MergeItem{Key: []byte("a"), A: acc(3, 30.5), B: []byte{1}},
	)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(merged[0].Value, acc(4, 32)) || merged[1].Code != eddytest.Rejected {
		t.Fatalf("merge %+v", merged)
	}

	results, err := eddytest.AggResult(
		eddytest.ResultItem{Key: []byte("a"), Acc: acc(4, 32)},
		eddytest.ResultItem{Key: []byte("z"), Acc: acc(0, 0)},
		eddytest.ResultItem{Key: []byte("x"), Acc: acc(3, 1)},
	)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{`{"count":4,"sum":32,"avg":8}`, `{"count":0,"sum":0,"avg":null}`,
		`{"count":3,"sum":1,"avg":0.3333333333333333}`} {
		if got := string(results[i].Value); got != want {
			t.Errorf("result %d = %s, want %s", i, got, want)
		}
		if !json.Valid(results[i].Value) {
			t.Errorf("result %d is not JSON", i)
		}
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestAppendNumberMatchesEncodingJSON(t *testing.T) {
	for _, f := range []float64{0, 1, -1, 0.1, 1.5, 1e20, 1e21, 123456789e13, 1e-6, 1e-7, 5e-324, math.MaxFloat64, -2.5e-9, 100} {
		want, _ := json.Marshal(f)
		if got := appendNumber(nil, f); !bytes.Equal(got, want) {
			t.Errorf("appendNumber(%v) = %s, want %s", f, got, want)
		}
	}
	if string(appendNumber(nil, math.Inf(1))) != "null" || string(appendNumber(nil, math.NaN())) != "null" {
		t.Error("non-finite")
	}
}

func TestZeroAllocs(t *testing.T) {
	a := acc(0, 0)
	for _, v := range []string{"123.25", "42", " -7 ", "1e3"} {
		r := eddy.Record{Value: []byte(v)}
		if n := testing.AllocsPerRun(100, func() { add(a, r) }); n != 0 {
			t.Fatalf("%v allocations per record %q", n, v)
		}
	}
	b := acc(3, 4.5)
	if n := testing.AllocsPerRun(100, func() { merge(nil, a, b) }); n != 0 {
		t.Fatalf("%v allocations per merge", n)
	}
	if n := testing.AllocsPerRun(100, func() { result(nil, b) }); n != 0 {
		t.Fatalf("%v allocations per result", n)
	}
}

// TestAppendNumberAgreesWithStrconv checks appendShort, which formats most
// numbers without strconv, against encoding/json on the numbers a stats
// result holds (sums of integers and decimals, their averages) and on
// random float64 values.
func TestAppendNumberAgreesWithStrconv(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	check := func(f float64) {
		t.Helper()
		want, err := json.Marshal(f)
		if err != nil {
			return // not finite
		}
		if got := appendNumber(nil, f); !bytes.Equal(got, want) {
			t.Fatalf("appendNumber(%v) = %s, want %s (bits %#x)", f, got, want, math.Float64bits(f))
		}
	}
	for _, f := range []float64{1, -1, 0.5, 4.5, 0.125, 1e15 - 1, 1e15, 999999999999999.9, 0.1, 0.2, 0.3, 0.1 + 0.2,
		1.0 / 3, 2.0 / 3, -7.25, 1e-6, 1.5e-6, 123456789.123456, 9.999999999999999, 0.09999999999999999, 1e14 + 0.5} {
		check(f)
		check(math.Nextafter(f, 0))
		check(math.Nextafter(f, math.Inf(1)))
	}
	for range 200_000 {
		var f float64
		switch rng.IntN(4) {
		case 0: // an average of integers
			f = float64(rng.Int64N(1e12)-5e11) / float64(1+rng.IntN(1000))
		case 1: // a sum of decimals
			f = float64(rng.Int64N(1e9)-5e8) / pow10[rng.IntN(6)]
		case 2: // any magnitude
			f = math.Float64frombits(rng.Uint64())
		default: // few digits, any scale
			f = float64(rng.Int64N(1e6)) * math.Pow(10, float64(rng.IntN(40)-20))
		}
		check(f)
	}
}
