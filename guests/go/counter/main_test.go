package main

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	eddy "github.com/eddy-streams/eddy/sdk/go"
	"github.com/eddy-streams/eddy/sdk/go/eddytest"
)

func reset(t *testing.T) {
	eddytest.Reset()
	seen = 0
	t.Cleanup(eddytest.Reset)
}

func rec(key string) eddy.Record {
	return eddy.Record{Key: []byte(key), Value: []byte("payload"), Timestamp: 77}
}

func TestCounter(t *testing.T) {
	reset(t)
	res, err := eddytest.Process(rec("a"), rec("b"), rec("a"), rec("a"), eddy.Record{Key: nil, Value: []byte("x")})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range res {
		if r.Code != 0 {
			t.Fatalf("code %d: %s", r.Code, r.Reason)
		}
		got = append(got, string(r.Records[0].Value))
	}
	if strings.Join(got, ",") != "1,1,2,3,1" {
		t.Fatalf("counts %v", got)
	}
	if out := res[0].Records[0]; string(out.Key) != "a" || out.Timestamp != 77 {
		t.Fatalf("record %+v", out)
	}
	// State survives across calls (batches).
	res, _ = eddytest.Process(rec("b"))
	if string(res[0].Records[0].Value) != "2" {
		t.Fatalf("second batch: %+v", res[0])
	}
	if v, _ := eddytest.State([]byte("a")); string(v) != "3" {
		t.Fatalf("state a = %q", v)
	}
	if n := eddytest.Counter("records"); n != 6 {
		t.Fatalf("records counter %d", n)
	}
}

func TestCounterStoredCount(t *testing.T) {
	reset(t)
	eddytest.SetState([]byte("k"), []byte("41"))
	eddytest.SetState([]byte("bad"), []byte("x"))
	res, _ := eddytest.Process(rec("k"), rec("bad"))
	if string(res[0].Records[0].Value) != "42" {
		t.Fatalf("resumed count %+v", res[0])
	}
	if res[1].Code != eddytest.Rejected || !strings.Contains(res[1].Reason, "stored count") {
		t.Fatalf("corrupt count %+v", res[1])
	}
}

func TestCounterWithoutState(t *testing.T) {
	reset(t)
	eddytest.SetStateMode(eddytest.StateNone)
	res, err := eddytest.Process(rec("a"), rec("b"))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.Code != eddytest.Rejected || r.Records != nil {
			t.Fatalf("without state: %+v", r)
		}
	}
	if eddytest.Counter("records") != 0 {
		t.Fatal("counted rejected records")
	}
	eddytest.SetStateMode(eddytest.StateFailing)
	if res, _ := eddytest.Process(rec("a")); res[0].Code != eddytest.StateError {
		t.Fatalf("failing store: %+v", res[0])
	}
}

func TestCounterLogs(t *testing.T) {
	reset(t)
	var log bytes.Buffer
	old := eddytest.SetLogOutput(&log)
	t.Cleanup(func() { eddytest.SetLogOutput(old) })
	batch := make([]eddy.Record, 2500)
	for i := range batch {
		batch[i] = rec("k" + strconv.Itoa(i%7))
	}
	if _, err := eddytest.Process(batch...); err != nil {
		t.Fatal(err)
	}
	if got := log.String(); got != "eddy DEBUG counter: 1000 records\neddy DEBUG counter: 2000 records\n" {
		t.Fatalf("log %q", got)
	}
}

func TestCountAllocs(t *testing.T) {
	reset(t)
	r := rec("key")
	count(r)
	// Natively the in-memory state copies what is put, which allocates; in
	// Wasm the host copies. The guest's own path must stay small.
	if n := testing.AllocsPerRun(100, func() { count(r) }); n > 2 {
		t.Fatalf("%v allocations per record", n)
	}
}
