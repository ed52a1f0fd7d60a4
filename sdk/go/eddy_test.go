package eddy_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	eddy "github.com/eddy-streams/eddy/sdk/go"
	"github.com/eddy-streams/eddy/sdk/go/eddytest"
)

func register(t *testing.T, fn func()) {
	t.Helper()
	eddy.ResetHandlers()
	eddytest.Reset()
	t.Cleanup(eddy.ResetHandlers)
	t.Cleanup(eddytest.Reset)
	fn()
}

func rec(key, value string, ts int64) eddy.Record {
	return eddy.Record{Key: []byte(key), Value: []byte(value), Timestamp: ts}
}

// poison is a Map whose behaviour is chosen by the value.
func poison(r eddy.Record) (eddy.Record, error) {
	switch string(r.Value) {
	case "reject":
		return r, errors.New("rejected")
	case "bad":
		return r, eddy.BadInput(errors.New("not json"))
	case "wrapped":
		return r, fmt.Errorf("decode: %w", eddy.BadInput(errors.New("eof")))
	case "code77":
		return r, eddy.ErrorCode(77, errors.New("user code"))
	case "code7":
		return r, eddy.ErrorCode(7, errors.New("reserved code"))
	case "panic":
		panic("boom")
	case "nilmap":
		var m map[string]int
		m["x"] = 1
	case "index":
		var s []int
		_ = s[len(r.Value)]
	case "retime":
		r.Timestamp = 5
	}
	r.Value = bytes.ToUpper(r.Value)
	return r, nil
}

func TestMapCodesAndPanics(t *testing.T) {
	register(t, func() { eddy.Map(poison) })
	in := []eddy.Record{
		rec("a", "ok", 10), rec("b", "reject", 11), rec("c", "bad", 12), rec("d", "wrapped", 13),
		rec("e", "code77", 14), rec("f", "code7", 15), rec("g", "panic", 16), rec("h", "nilmap", 17),
		rec("i", "index", 18), rec("j", "retime", 19), rec("k", "last", 20),
	}
	res, err := eddytest.Process(in...)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		code   int
		reason string // substring
		value  string
	}{
		{0, "", "OK"},
		{eddytest.Rejected, "rejected", ""},
		{eddytest.BadInput, "not json", ""},
		{eddytest.BadInput, "decode: eof", ""},
		{77, "user code", ""},
		{eddytest.Rejected, "reserved code", ""},
		{eddytest.Panic, "boom", ""},
		{eddytest.Panic, "assignment to entry in nil map", ""},
		{eddytest.Panic, "index out of range", ""},
		{0, "", "RETIME"},
		{0, "", "LAST"},
	}
	for i, w := range want {
		r := res[i]
		if r.Code != w.code || !strings.Contains(r.Reason, w.reason) {
			t.Errorf("record %d: code %d reason %q; want %d %q", i, r.Code, r.Reason, w.code, w.reason)
			continue
		}
		if w.code != 0 {
			if r.Records != nil {
				t.Errorf("record %d: failed but has output %v", i, r.Records)
			}
			continue
		}
		if len(r.Records) != 1 || string(r.Records[0].Value) != w.value || string(r.Records[0].Key) != string(in[i].Key) {
			t.Errorf("record %d: output %+v, want value %q", i, r.Records, w.value)
		}
	}
	if ts := res[0].Records[0].Timestamp; ts != 10 {
		t.Errorf("carried timestamp %d, want 10", ts)
	}
	if ts := res[9].Records[0].Timestamp; ts != 5 {
		t.Errorf("changed timestamp %d, want 5", ts)
	}
}

func TestMapNilAndEmpty(t *testing.T) {
	register(t, func() { eddy.Map(func(r eddy.Record) (eddy.Record, error) { return r, nil }) })
	in := []eddy.Record{
		{Key: nil, Value: []byte{}, Timestamp: 1},
		{Key: []byte{}, Value: nil, Timestamp: 2},
		{Key: []byte("k"), Value: []byte("v"), Timestamp: 3, Headers: []eddy.Header{
			{Key: "a", Value: nil}, {Key: "b", Value: []byte{}}, {Key: "c", Value: []byte("x")}}},
	}
	res, err := eddytest.Process(in...)
	if err != nil {
		t.Fatal(err)
	}
	out := res[0].Records[0]
	if out.Key != nil || out.Value == nil || len(out.Value) != 0 {
		t.Errorf("record 0: key %#v value %#v; want nil key, empty value", out.Key, out.Value)
	}
	out = res[1].Records[0]
	if out.Key == nil || len(out.Key) != 0 || out.Value != nil {
		t.Errorf("record 1: key %#v value %#v; want empty key, nil value", out.Key, out.Value)
	}
	out = res[2].Records[0]
	if len(out.Headers) != 3 || out.Headers[0].Value != nil || out.Headers[1].Value == nil ||
		string(out.Headers[2].Value) != "x" || out.Headers[2].Key != "c" {
		t.Errorf("record 2 headers %#v", out.Headers)
	}
}

func TestFilter(t *testing.T) {
	register(t, func() {
		eddy.Filter(func(r eddy.Record) (bool, error) {
			if string(r.Value) == "panic" {
				panic(errors.New("filter panic"))
			}
			return string(r.Value) == "keep", nil
		})
	})
	in := []eddy.Record{rec("a", "keep", 1), rec("b", "drop", 2), rec("c", "panic", 3), rec("d", "keep", 4)}
	in[0].Headers = []eddy.Header{{Key: "h", Value: []byte("v")}}
	res, err := eddytest.Process(in...)
	if err != nil {
		t.Fatal(err)
	}
	if len(res[0].Records) != 1 || string(res[0].Records[0].Key) != "a" || res[0].Records[0].Timestamp != 1 ||
		len(res[0].Records[0].Headers) != 1 {
		t.Errorf("kept record %+v", res[0].Records)
	}
	if res[1].Code != 0 || len(res[1].Records) != 0 {
		t.Errorf("dropped record %+v", res[1])
	}
	if res[2].Code != eddytest.Panic || res[2].Reason != "filter panic" {
		t.Errorf("panicking record %+v", res[2])
	}
	if len(res[3].Records) != 1 {
		t.Errorf("record after the panic %+v", res[3])
	}
}

func TestFlatMap(t *testing.T) {
	var out []eddy.Record // reused across calls, as the docs allow
	register(t, func() {
		eddy.FlatMap(func(r eddy.Record) ([]eddy.Record, error) {
			out = out[:0]
			for _, w := range bytes.Fields(r.Value) {
				out = append(out, eddy.Record{Key: r.Key, Value: w, Timestamp: r.Timestamp})
			}
			return out, nil
		})
	})
	res, err := eddytest.Process(rec("k", "a bb ccc", 7), rec("k", "", 8), rec("j", "z", 9))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range res {
		for _, o := range r.Records {
			got = append(got, fmt.Sprintf("%s=%s@%d", o.Key, o.Value, o.Timestamp))
		}
	}
	if want := []string{"k=a@7", "k=bb@7", "k=ccc@7", "j=z@9"}; !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

func TestEmptyBatch(t *testing.T) {
	register(t, func() { eddy.Map(poison) })
	res, err := eddytest.Process()
	if err != nil || len(res) != 0 {
		t.Fatalf("got %v, %v", res, err)
	}
}

func TestRegisterTwicePanics(t *testing.T) {
	register(t, func() { eddy.Map(poison) })
	for name, fn := range map[string]func(){
		"filter":  func() { eddy.Filter(func(eddy.Record) (bool, error) { return true, nil }) },
		"flatmap": func() { eddy.FlatMap(func(eddy.Record) ([]eddy.Record, error) { return nil, nil }) },
		"map":     func() { eddy.Map(poison) },
		"nil key": func() { eddy.KeyBy(nil) },
		"no add":  func() { eddy.Aggregate(eddy.Aggregator{}) },
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Fatal("no panic")
				}
			}()
			fn()
		})
	}
}

func TestUnsupportedKinds(t *testing.T) {
	register(t, func() { eddy.Map(poison) })
	res, err := eddytest.Key(rec("a", "b", 1), rec("c", "d", 2))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.Code != eddytest.Unsupported {
			t.Fatalf("key result %+v", r)
		}
	}
	for name, call := range map[string]func() ([]eddytest.Result, error){
		"timestamp": func() ([]eddytest.Result, error) { return eddytest.Timestamp(rec("a", "b", 1)) },
		"join":      func() ([]eddytest.Result, error) { return eddytest.Join(eddytest.JoinItem{}) },
		"merge": func() ([]eddytest.Result, error) {
			return eddytest.AggMerge(eddytest.MergeItem{A: []byte{}, B: []byte{}})
		},
		"result": func() ([]eddytest.Result, error) { return eddytest.AggResult(eddytest.ResultItem{Acc: []byte{}}) },
	} {
		res, err := call()
		if err != nil || len(res) != 1 || res[0].Code != eddytest.Unsupported {
			t.Errorf("%s: %+v, %v", name, res, err)
		}
	}
	if r, err := eddytest.AggInit(); err != nil || r.Code != eddytest.Unsupported {
		t.Errorf("agg init: %+v, %v", r, err)
	}
	added, err := eddytest.AggAdd(eddytest.Group{Key: []byte("k"), Records: []eddy.Record{rec("a", "1", 1), rec("b", "2", 2)}})
	if err != nil || len(added) != 1 || len(added[0].Errors) != 2 || added[0].Errors[1].Code != eddytest.Unsupported ||
		added[0].Errors[1].Index != 1 || added[0].Acc == nil {
		t.Errorf("agg add: %+v, %v", added, err)
	}
	m, err := eddytest.ReadManifest()
	if err != nil || !slices.Equal(m.Kinds, []string{"process"}) {
		t.Errorf("manifest %+v, %v", m, err)
	}
}

func TestMalformedEnvelope(t *testing.T) {
	register(t, func() { eddy.Map(poison) })
	// Two records announced, the second is [nil, nil, nil] (3 elements): the
	// count is readable, so every item fails with BAD_ENVELOPE and no user
	// code runs.
	in := []byte{0x92, 0x94, 0xc0, 0xc0, 0x01, 0xc0, 0x93, 0xc0, 0xc0, 0xc0}
	out, err := eddytest.Call("eddy_process", in)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(out, []byte{0x92, 0x92, 0x05}) || bytes.Count(out, []byte("record 1")) != 2 {
		t.Fatalf("answer %q", out)
	}
	// An unreadable count fails the call.
	_, err = eddytest.Call("eddy_process", []byte{0xc3})
	var ce *eddytest.CallError
	if !errors.As(err, &ce) || ce.Code != eddytest.BadEnvelope || !strings.Contains(ce.Reason, "eddy_process") {
		t.Fatalf("error %v", err)
	}
}

func TestKeyAndTimestamp(t *testing.T) {
	register(t, func() {
		eddy.KeyBy(func(r eddy.Record) ([]byte, error) {
			if len(r.Value) == 0 {
				return nil, nil // null key
			}
			return r.Value[:1], nil
		})
		eddy.Timestamp(func(r eddy.Record) (int64, error) {
			if string(r.Value) == "x" {
				return 0, eddy.BadInput(nil)
			}
			return r.Timestamp * 2, nil
		})
	})
	res, err := eddytest.Key(rec("", "hello", 1), rec("", "", 2))
	if err != nil {
		t.Fatal(err)
	}
	if string(res[0].Value) != "h" || res[1].Value != nil || res[1].Code != 0 {
		t.Fatalf("keys %+v", res)
	}
	res, err = eddytest.Timestamp(rec("", "a", 21), rec("", "x", 2), rec("", "b", -3))
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Time != 42 || res[1].Code != eddytest.BadInput || res[1].Reason != "bad input" || res[2].Time != -6 {
		t.Fatalf("timestamps %+v", res)
	}
	m, err := eddytest.ReadManifest()
	if err != nil || !slices.Equal(m.Kinds, []string{"key", "timestamp"}) || m.ABI != 1 || m.SDK != "go/0.1.0" {
		t.Fatalf("manifest %+v, %v", m, err)
	}
}

func TestJoin(t *testing.T) {
	register(t, func() {
		eddy.Join(func(key, left, right []byte) ([]byte, error) {
			if left == nil && right == nil {
				return nil, nil
			}
			if string(left) == "panic" {
				panic("join panic")
			}
			return []byte(fmt.Sprintf("%s:%q|%q", key, left, right)), nil
		})
		eddy.SetName("joiner", "2.1")
	})
	res, err := eddytest.Join(
		eddytest.JoinItem{Key: []byte("k"), Left: []byte("l"), Right: nil},
		eddytest.JoinItem{Key: []byte("k"), Left: nil, Right: nil},
		eddytest.JoinItem{Key: []byte("k"), Left: []byte("panic")},
		eddytest.JoinItem{Key: []byte("k"), Left: []byte{}, Right: []byte("r")},
	)
	if err != nil {
		t.Fatal(err)
	}
	if string(res[0].Value) != `k:"l"|""` || res[1].Value != nil || res[1].Code != 0 ||
		res[2].Code != eddytest.Panic || string(res[3].Value) != `k:""|"r"` {
		t.Fatalf("join results %+v", res)
	}
	m, _ := eddytest.ReadManifest()
	if m.Name != "joiner" || m.Version != "2.1" || !slices.Equal(m.Kinds, []string{"join"}) {
		t.Fatalf("manifest %+v", m)
	}
}

// sumAgg sums decimal values into an 8-byte little-endian accumulator,
// modifying it in place.
func sumAgg() eddy.Aggregator {
	return eddy.Aggregator{
		Init: func() []byte { return make([]byte, 8) },
		Add: func(acc []byte, r eddy.Record) ([]byte, error) {
			n := binary.LittleEndian.Uint64(acc)
			binary.LittleEndian.PutUint64(acc, n+999) // modified before failing
			switch string(r.Value) {
			case "bad":
				return nil, eddy.BadInput(errors.New("not a number"))
			case "panic":
				panic("add panic")
			}
			var v uint64
			fmt.Sscan(string(r.Value), &v)
			binary.LittleEndian.PutUint64(acc, n+v)
			return acc, nil
		},
		Merge: func(key, a, b []byte) ([]byte, error) {
			return binary.LittleEndian.AppendUint64(nil, binary.LittleEndian.Uint64(a)+binary.LittleEndian.Uint64(b)), nil
		},
		Result: func(key, acc []byte) ([]byte, error) {
			n := binary.LittleEndian.Uint64(acc)
			if n == 0 {
				return nil, nil
			}
			return []byte(fmt.Sprintf("%s=%d", key, n)), nil
		},
	}
}

func u64(n uint64) []byte { return binary.LittleEndian.AppendUint64(nil, n) }

func TestAggregate(t *testing.T) {
	register(t, func() { eddy.Aggregate(sumAgg()) })
	init, err := eddytest.AggInit()
	if err != nil || init.Code != 0 || !bytes.Equal(init.Value, u64(0)) {
		t.Fatalf("init %+v, %v", init, err)
	}
	added, err := eddytest.AggAdd(
		eddytest.Group{Key: []byte("a"), Acc: nil, Records: []eddy.Record{
			rec("a", "1", 1), rec("a", "bad", 2), rec("a", "2", 3), rec("a", "panic", 4), rec("a", "3", 5)}},
		eddytest.Group{Key: []byte("b"), Acc: u64(100), Records: []eddy.Record{rec("b", "5", 1)}},
		eddytest.Group{Key: nil, Acc: u64(7), Records: nil},
	)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(added[0].Acc, u64(6)) {
		t.Errorf("group a: acc %v, want 6 (failed records leave the accumulator alone)", binary.LittleEndian.Uint64(added[0].Acc))
	}
	if e := added[0].Errors; len(e) != 2 || e[0] != (eddytest.RecordError{Index: 1, Code: eddytest.BadInput, Reason: "not a number"}) ||
		e[1].Index != 3 || e[1].Code != eddytest.Panic || e[1].Reason != "add panic" {
		t.Errorf("group a errors %+v", e)
	}
	if !bytes.Equal(added[1].Acc, u64(105)) || len(added[1].Errors) != 0 {
		t.Errorf("group b %+v", added[1])
	}
	if !bytes.Equal(added[2].Acc, u64(7)) {
		t.Errorf("empty group %+v", added[2])
	}

	merged, err := eddytest.AggMerge(eddytest.MergeItem{Key: []byte("a"), A: u64(2), B: u64(3)})
	if err != nil || !bytes.Equal(merged[0].Value, u64(5)) {
		t.Fatalf("merge %+v, %v", merged, err)
	}
	results, err := eddytest.AggResult(
		eddytest.ResultItem{Key: []byte("a"), Acc: u64(6)},
		eddytest.ResultItem{Key: []byte("z"), Acc: u64(0)},
		eddytest.ResultItem{Key: []byte("s"), Acc: []byte{1}}, // too short: Uint64 panics
	)
	if err != nil {
		t.Fatal(err)
	}
	if string(results[0].Value) != "a=6" || results[1].Value != nil || results[1].Code != 0 ||
		results[2].Code != eddytest.Panic || !strings.Contains(results[2].Reason, "index out of range") {
		t.Fatalf("results %+v", results)
	}
}

func TestAggregateDefaults(t *testing.T) {
	register(t, func() {
		eddy.Aggregate(eddy.Aggregator{Add: func(acc []byte, r eddy.Record) ([]byte, error) {
			return append(acc, r.Value...), nil
		}})
	})
	init, err := eddytest.AggInit()
	if err != nil || init.Value == nil || len(init.Value) != 0 {
		t.Fatalf("init %+v, %v", init, err)
	}
	added, err := eddytest.AggAdd(eddytest.Group{Records: []eddy.Record{rec("", "ab", 1), rec("", "cd", 2)}})
	if err != nil || string(added[0].Acc) != "abcd" {
		t.Fatalf("add %+v, %v", added, err)
	}
	// No Result: the accumulator is the output. No Merge: UNSUPPORTED.
	res, err := eddytest.AggResult(eddytest.ResultItem{Acc: []byte("abcd")})
	if err != nil || string(res[0].Value) != "abcd" {
		t.Fatalf("result %+v, %v", res, err)
	}
	res, err = eddytest.AggMerge(eddytest.MergeItem{A: []byte("a"), B: []byte("b")})
	if err != nil || res[0].Code != eddytest.Unsupported {
		t.Fatalf("merge %+v, %v", res, err)
	}
}

func TestAggregateInitPanics(t *testing.T) {
	register(t, func() {
		eddy.Aggregate(eddy.Aggregator{
			Init: func() []byte { panic("no init") },
			Add:  func(acc []byte, r eddy.Record) ([]byte, error) { return acc, nil },
		})
	})
	init, err := eddytest.AggInit()
	if err != nil || init.Code != eddytest.Panic || init.Reason != "no init" {
		t.Fatalf("init %+v, %v", init, err)
	}
	added, err := eddytest.AggAdd(eddytest.Group{Records: []eddy.Record{rec("", "x", 1)}})
	if err != nil || len(added[0].Errors) != 1 || added[0].Errors[0].Code != eddytest.Panic {
		t.Fatalf("add %+v, %v", added, err)
	}
}

func TestStateAndCounters(t *testing.T) {
	register(t, func() {
		eddy.Map(func(r eddy.Record) (eddy.Record, error) {
			v, ok, err := eddy.StateGet(r.Key)
			if err != nil {
				return r, err
			}
			n := 0
			if ok {
				fmt.Sscan(string(v), &n)
			}
			n++
			if string(r.Value) == "delete" {
				err = eddy.StateDelete(r.Key)
			} else {
				err = eddy.StatePut(r.Key, []byte(fmt.Sprint(n)))
			}
			if err != nil {
				return r, fmt.Errorf("state: %w", err)
			}
			eddy.Count("seen", 1)
			eddy.Count("bytes", int64(len(r.Value)))
			r.Value = []byte(fmt.Sprint(n))
			return r, nil
		})
	})
	res, err := eddytest.Process(rec("a", "x", 1), rec("b", "yy", 2), rec("a", "z", 3))
	if err != nil {
		t.Fatal(err)
	}
	if string(res[2].Records[0].Value) != "2" || string(res[1].Records[0].Value) != "1" {
		t.Fatalf("counts %+v", res)
	}
	if v, ok := eddytest.State([]byte("a")); !ok || string(v) != "2" {
		t.Fatalf("state a = %q, %v", v, ok)
	}
	if eddytest.Counter("seen") != 3 || eddytest.Counter("bytes") != 4 {
		t.Fatalf("counters %v", eddytest.Counters())
	}
	if _, err := eddytest.Process(rec("a", "delete", 4)); err != nil {
		t.Fatal(err)
	}
	if _, ok := eddytest.State([]byte("a")); ok {
		t.Fatal("state a not deleted")
	}

	eddytest.SetStateMode(eddytest.StateNone)
	res, _ = eddytest.Process(rec("a", "x", 1))
	if res[0].Code != eddytest.Rejected || !strings.Contains(res[0].Reason, "no keyed state") {
		t.Fatalf("without a store: %+v", res[0])
	}
	eddytest.SetStateMode(eddytest.StateFailing)
	res, _ = eddytest.Process(rec("a", "x", 1))
	if res[0].Code != eddytest.StateError {
		t.Fatalf("with a failing store: %+v", res[0])
	}
	eddytest.SetStateMode(eddytest.StateOK)
	eddytest.SetState([]byte("b"), []byte("41"))
	res, _ = eddytest.Process(rec("b", "delete", 1), rec("b", "x", 2))
	if string(res[0].Records[0].Value) != "42" || string(res[1].Records[0].Value) != "1" {
		t.Fatalf("after SetState: %+v", res)
	}
}

func TestStateErrors(t *testing.T) {
	eddytest.Reset()
	t.Cleanup(eddytest.Reset)
	if _, ok, err := eddy.StateGet([]byte("missing")); ok || err != nil {
		t.Fatalf("absent key: %v, %v", ok, err)
	}
	eddytest.SetStateMode(eddytest.StateNone)
	if _, _, err := eddy.StateGet([]byte("k")); err != eddy.ErrNoState {
		t.Fatalf("StateGet: %v", err)
	}
	if err := eddy.StatePut([]byte("k"), nil); err != eddy.ErrNoState {
		t.Fatalf("StatePut: %v", err)
	}
	eddytest.SetStateMode(eddytest.StateFailing)
	if err := eddy.StateDelete([]byte("k")); !errors.Is(err, eddy.ErrStateFailed) {
		t.Fatalf("StateDelete: %v", err)
	}
}

func TestLog(t *testing.T) {
	var buf bytes.Buffer
	old := eddytest.SetLogOutput(&buf)
	t.Cleanup(func() { eddytest.SetLogOutput(old) })
	eddy.Log(eddy.Debug, "one")
	eddy.Logf(eddy.Warn, "two %d", 2)
	eddy.Log(eddy.Level(9), "clamped")
	if got, want := buf.String(), "eddy DEBUG one\neddy WARN two 2\neddy ERROR clamped\n"; got != want {
		t.Fatalf("log %q, want %q", got, want)
	}
	if eddy.Info.String() != "info" || eddy.Level(7).String() != "level(7)" {
		t.Fatal("Level.String")
	}
}

func TestRecordCloneAndTime(t *testing.T) {
	r := eddy.Record{Key: nil, Value: []byte{}, Timestamp: 1700000000000,
		Headers: []eddy.Header{{Key: "h", Value: []byte("v")}, {Key: "n"}}}
	c := r.Clone()
	if c.Key != nil || c.Value == nil || len(c.Headers) != 2 || c.Headers[1].Value != nil {
		t.Fatalf("clone %#v", c)
	}
	c.Headers[0].Value[0] = 'X'
	if r.Headers[0].Value[0] != 'v' {
		t.Fatal("clone shares header bytes")
	}
	if got := r.Time(); !got.Equal(time.Date(2023, 11, 14, 22, 13, 20, 0, time.UTC)) || got.Location() != time.UTC {
		t.Fatalf("Time() = %v", got)
	}
	if (eddy.Record{}).Clone().Headers != nil {
		t.Fatal("clone of no headers has headers")
	}
}
