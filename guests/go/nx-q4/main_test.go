package main

import (
	"testing"

	eddy "github.com/eddy-streams/eddy/sdk/go"
	"github.com/eddy-streams/eddy/sdk/go/eddytest"
)

func TestAverage(t *testing.T) {
	eddytest.Reset()
	for _, c := range []struct{ row, key, want string }{
		{`{"id":1,"seller":5,"category":10,"auction":1,"bidder":2,"price":7}`, "10", `{"category":10,"final":7}`},
		{`{"id":2,"seller":5,"category":11,"auction":2,"bidder":2,"price":100}`, "11", `{"category":11,"final":100}`},
		{`{"category":10, "price": 8}`, "10", `{"category":10,"final":7}`}, // 15/2, truncated
		{`{"category":10,"price":10}`, "10", `{"category":10,"final":8}`},  // 25/3
	} {
		res, err := eddytest.Process(eddy.Record{Key: []byte(c.key), Value: []byte(c.row), Timestamp: 42})
		if err != nil {
			t.Fatal(err)
		}
		r := res[0]
		if r.Code != 0 || len(r.Records) != 1 {
			t.Fatalf("%s: code %d %q, %d records", c.row, r.Code, r.Reason, len(r.Records))
		}
		if o := r.Records[0]; string(o.Value) != c.want || string(o.Key) != c.key || o.Timestamp != 42 {
			t.Fatalf("%s: got %s key %q at %d, want %s", c.row, o.Value, o.Key, o.Timestamp, c.want)
		}
	}
	if v, ok := eddytest.State([]byte("10")); !ok || len(v) != 16 || v[0] != 3 || v[8] != 25 {
		t.Fatalf("state of category 10: %v", v)
	}
}

func TestBadInput(t *testing.T) {
	eddytest.Reset()
	for _, c := range []struct{ value, reason string }{
		{`{"category":10}`, `no "price" member`},
		{`{"price":10}`, `no "category" member`},
		{`{"category":"10","price":1}`, `"category" is not an integer`},
		{`[]`, "value is not a JSON object"},
	} {
		res, err := eddytest.Process(eddy.Record{Value: []byte(c.value)})
		if err != nil {
			t.Fatal(err)
		}
		if r := res[0]; r.Code != eddytest.BadInput || r.Reason != c.reason {
			t.Errorf("%s: code %d %q, want BAD_INPUT %q", c.value, r.Code, r.Reason, c.reason)
		}
	}
	eddytest.SetState([]byte("10"), []byte{1, 2, 3})
	res, _ := eddytest.Process(eddy.Record{Value: []byte(`{"category":10,"price":1}`)})
	if res[0].Code != eddytest.Rejected || res[0].Reason != errState.Error() {
		t.Fatalf("corrupt state: code %d %q", res[0].Code, res[0].Reason)
	}
	eddytest.Reset()
	eddytest.SetStateMode(eddytest.StateNone)
	defer eddytest.Reset()
	res, _ = eddytest.Process(eddy.Record{Value: []byte(`{"category":10,"price":1}`)})
	if res[0].Code != eddytest.Rejected {
		t.Fatalf("no state: code %d %q", res[0].Code, res[0].Reason)
	}
}
