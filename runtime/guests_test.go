package runtime_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/runtime"
)

// These tests drive the Go reference guests (testdata/go, built from
// guests/go) through the Go API, one per kind.

func TestUpperThroughAPI(t *testing.T) {
	f := load(t, newEngine(t), "go/upper.wasm")
	if m := f.Manifest(); m.Name != "upper" || !m.Has(abi.KindProcess) || !strings.HasPrefix(m.SDK, "go/") {
		t.Fatalf("manifest %+v", m)
	}
	big := bytes.Repeat([]byte("abc"), 1<<20) // 3 MiB
	in := []abi.Record{
		{Key: []byte("k"), Value: []byte("hello"), Timestamp: 1, Headers: []abi.Header{{Key: "h", Value: []byte("v")}}},
		{Key: nil, Value: nil, Timestamp: 2},
		{Key: []byte{}, Value: []byte{}, Timestamp: 3},
		{Value: []byte("straße café \xff"), Timestamp: 4},
		{Value: big, Timestamp: 5},
	}
	var out runtime.Output
	if err := f.Process(context.Background(), in, &out); err != nil || len(out.Failed) != 0 {
		t.Fatalf("%v %v", err, out.Failed)
	}
	if len(out.Records) != len(in) {
		t.Fatalf("%d outputs", len(out.Records))
	}
	r := out.Records
	if string(r[0].Value) != "HELLO" || len(r[0].Headers) != 1 || r[0].Timestamp != 1 || int(out.From[4]) != 4 {
		t.Fatalf("record 0: %+v", r[0])
	}
	if r[1].Key != nil || r[1].Value != nil || r[2].Key == nil || r[2].Value == nil || len(r[2].Value) != 0 {
		t.Fatalf("nil and empty not kept apart: %+v %+v", r[1], r[2])
	}
	if string(r[3].Value) != "STRASSE CAFÉ \xff" && string(r[3].Value) != "STRAßE CAFÉ \xff" {
		t.Fatalf("unicode: %q", r[3].Value)
	}
	if !bytes.Equal(r[4].Value, bytes.ToUpper(big)) {
		t.Fatal("3 MiB value not upper-cased")
	}
}

func TestPoisonRecordsFailAlone(t *testing.T) {
	f := load(t, newEngine(t), "go/poison.wasm")
	inst, err := f.Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer f.Release(context.Background(), inst)
	in := []abi.Record{{Value: []byte("a")}, {Value: []byte("poison")}, {Value: []byte("panic")}, {Value: []byte("code77")}, {Value: []byte("b")}}
	var out runtime.Output
	if err := inst.Process(context.Background(), in, &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Records) != 2 || string(out.Records[1].Value) != "B" || out.From[1] != 4 {
		t.Fatalf("outputs %+v from %v", out.Records, out.From)
	}
	want := []struct {
		idx  int
		code abi.Code
	}{{1, abi.CodeRejected}, {2, abi.CodePanic}, {3, 77}}
	if len(out.Failed) != len(want) {
		t.Fatalf("failed %v", out.Failed)
	}
	for i, w := range want {
		e := out.Failed[i]
		if e.Index != w.idx || e.Code != w.code || !errors.Is(e, runtime.ErrGuest) || runtime.IsCallFailure(e) {
			t.Fatalf("failure %d = %+v, want index %d code %d", i, e, w.idx, w.code)
		}
	}
	if inst.Rebuilds() != 0 {
		t.Fatalf("per-record errors rebuilt the instance %d times", inst.Rebuilds())
	}
}

func TestStatsAggregate(t *testing.T) {
	ctx := context.Background()
	f := load(t, newEngine(t), "go/stats.wasm")
	inst, err := f.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Release(ctx, inst)
	rec := func(v string) abi.Record { return abi.Record{Value: []byte(v)} }
	groups := []abi.Group{
		{Key: []byte("a"), Records: []abi.Record{rec("1"), rec("2"), rec("x"), rec("3")}},
		{Key: []byte("b"), Records: []abi.Record{rec("10")}},
	}
	added, failed, err := inst.AggAdd(ctx, groups, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(added) != 2 || len(failed) != 1 || failed[0].Group != 0 || failed[0].Index != 2 || failed[0].Code != abi.CodeBadInput {
		t.Fatalf("added %+v failed %v", added, failed)
	}
	// Fold more into a's accumulator, merge a and b, and read the result.
	accA := bytes.Clone(added[0].Acc)
	accB := bytes.Clone(added[1].Acc)
	added, _, err = inst.AggAdd(ctx, []abi.Group{{Key: []byte("a"), Acc: accA, Records: []abi.Record{rec("4")}}}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	accA = bytes.Clone(added[0].Acc)
	merged, err := inst.AggMerge(ctx, [][]byte{[]byte("a")}, [][]byte{accA}, [][]byte{accB}, nil)
	if err != nil || merged[0].Err != nil {
		t.Fatal(err, merged[0].Err)
	}
	res, err := inst.AggResult(ctx, [][]byte{[]byte("a"), []byte("m")}, [][]byte{accA, bytes.Clone(merged[0].Bytes)}, nil)
	if err != nil || res[0].Err != nil || res[1].Err != nil {
		t.Fatal(err, res)
	}
	if got := string(res[0].Bytes); got != `{"count":4,"sum":10,"avg":2.5}` {
		t.Fatalf("result a = %s", got)
	}
	if got := string(res[1].Bytes); got != `{"count":5,"sum":20,"avg":4}` {
		t.Fatalf("result merged = %s", got)
	}
	init, err := inst.AggInit(ctx)
	if err != nil || len(init) == 0 {
		t.Fatalf("init %x %v", init, err)
	}
}

// mapState is a State for tests.
type mapState map[string][]byte

func (m mapState) Get(k []byte) ([]byte, bool, error) { v, ok := m[string(k)]; return v, ok, nil }
func (m mapState) Put(k, v []byte) error              { m[string(k)] = bytes.Clone(v); return nil }
func (m mapState) Delete(k []byte) error              { delete(m, string(k)); return nil }

func TestCounterUsesStateAndCounters(t *testing.T) {
	ctx := context.Background()
	f := load(t, newEngine(t), "go/counter.wasm")
	inst, err := f.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Release(ctx, inst)
	st := mapState{"b": []byte("41")}
	inst.SetState(st)
	in := []abi.Record{{Key: []byte("a")}, {Key: []byte("b")}, {Key: []byte("a")}}
	var out runtime.Output
	if err := inst.Process(ctx, in, &out); err != nil || len(out.Failed) != 0 {
		t.Fatal(err, out.Failed)
	}
	var got []string
	for _, r := range out.Records {
		got = append(got, string(r.Value))
	}
	if strings.Join(got, ",") != "1,42,2" || string(st["a"]) != "2" || string(st["b"]) != "42" {
		t.Fatalf("outputs %v, state %q", got, st)
	}
	if n := f.Counters()["records"]; n != 3 {
		t.Fatalf("counter records = %d, want 3", n)
	}
}

func TestJoinKeyAndTimestamp(t *testing.T) {
	ctx := context.Background()
	e := newEngine(t)
	j := load(t, e, "go/joiner.wasm")
	inst, err := j.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	res, err := inst.Join(ctx, [][]byte{[]byte("k"), nil}, [][]byte{[]byte(`{"a":1}`), nil}, [][]byte{nil, []byte(`2`)}, nil)
	j.Release(ctx, inst)
	if err != nil || string(res[0].Bytes) != `{"left":{"a":1},"right":null}` || string(res[1].Bytes) != `{"left":null,"right":2}` {
		t.Fatalf("%v %q %q", err, res[0].Bytes, res[1].Bytes)
	}
	w := load(t, e, "go/wordkey.wasm")
	inst, err = w.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Release(ctx, inst)
	recs := []abi.Record{{Value: []byte(`{"ts": 1700000000123}`)}, {Value: []byte("  two words")}}
	keys, err := inst.Key(ctx, recs, nil)
	if err != nil || string(keys[0].Bytes) != `{"ts":` || string(keys[1].Bytes) != "two" {
		t.Fatalf("keys %v %q %q", err, keys[0].Bytes, keys[1].Bytes)
	}
	ts, err := inst.Timestamp(ctx, recs, nil)
	if err != nil {
		t.Fatal(err)
	}
	if ts[0].Err != nil || ts[0].Int != 1700000000123 || ts[1].Err == nil || ts[1].Err.Code != abi.CodeBadInput {
		t.Fatalf("timestamps %+v %+v", ts[0], ts[1].Err)
	}
	if err := inst.Process(ctx, recs, &runtime.Output{}); !errors.Is(err, runtime.ErrNoKind) {
		t.Fatalf("process on a key/timestamp module: %v", err)
	}
}

// TestPoolUnderConcurrency runs batches from several goroutines through one
// Function: instances are never shared, results stay correct.
func TestPoolUnderConcurrency(t *testing.T) {
	f := load(t, newEngine(t), "go/upper.wasm", runtime.WithPoolSize(2))
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var out runtime.Output
			for i := 0; i < 20; i++ {
				out.Reset()
				in := []abi.Record{{Value: []byte("x" + strings.Repeat("y", i))}}
				if err := f.Process(context.Background(), in, &out); err != nil {
					errs <- err
					return
				}
				if string(out.Records[0].Value) != strings.ToUpper(string(in[0].Value)) {
					errs <- errors.New("wrong output " + string(out.Records[0].Value))
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}
