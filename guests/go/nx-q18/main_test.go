package main

import (
	"fmt"
	"testing"

	eddy "github.com/eddy-streams/eddy/sdk/go"
	"github.com/eddy-streams/eddy/sdk/go/eddytest"
)

func bid(auction, bidder, price, t int64) eddy.Record {
	v := fmt.Sprintf(`{"auction":%d,"bidder":%d,"price":%d,"channel":"Apple","url":"u","dateTime":%d,"extra":"x"}`, auction, bidder, price, t)
	return eddy.Record{Key: fmt.Appendf(nil, "%d", auction), Value: []byte(v), Timestamp: t}
}

func TestQ18(t *testing.T) {
	eddytest.Reset()
	in := []eddy.Record{
		bid(1, 7, 100, 50),
		bid(1, 7, 300, 40), // earlier than the last: dropped
		bid(1, 8, 10, 10),
		bid(1, 8, 20, 10), // the same time: the later in the input is the last
		bid(2, 7, 5, 60),  // another auction
		bid(1, 7, 400, 51),
	}
	res, err := eddytest.Process(in...)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"1/7", "", "1/8", "1/8", "2/7", "1/7"} {
		r := res[i]
		if r.Code != 0 {
			t.Fatalf("bid %d: %+v", i, r)
		}
		switch {
		case want == "" && len(r.Records) != 0:
			t.Fatalf("bid %d passed on: %+v", i, r.Records)
		case want == "":
		case len(r.Records) != 1 || string(r.Records[0].Key) != want || string(r.Records[0].Value) != string(in[i].Value) ||
			r.Records[0].Timestamp != in[i].Timestamp:
			t.Fatalf("bid %d: %+v, want key %s and the bid", i, r.Records, want)
		}
	}
	// A bid whose key is not its auction, and values that are not bids.
	wrong := bid(3, 1, 1, 1)
	wrong.Key = []byte("03")
	res, err = eddytest.Process(wrong,
		eddy.Record{Key: []byte("1"), Value: []byte(`{"id":1,"name":"n"}`)},
		eddy.Record{Key: []byte("1"), Value: []byte(`{"auction":1,"bidder":1,"dateTime":"x"}`)},
		eddy.Record{Key: []byte("1"), Value: []byte(`{"auction":1.5,"bidder":1,"dateTime":1}`)})
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Code != eddytest.Rejected || res[0].Reason != "bid of auction 3 keyed 03: the bids must be keyed by their auction" {
		t.Fatalf("wrong key: %+v", res[0])
	}
	for i, reason := range []string{`value is not a bid: no "bidder" member`, `"dateTime" is not an integer`, `"auction" is not an integer`} {
		if r := res[i+1]; r.Code != eddytest.BadInput || r.Reason != reason {
			t.Fatalf("record %d: %+v, want %s", i+1, r, reason)
		}
	}
	// A corrupt stored time fails the bid, and it is not passed on.
	eddytest.SetState(append([]byte{0, 0, 0, 0, 0, 0, 0, 9}, '5'), []byte{1})
	if res, err := eddytest.Process(bid(5, 9, 1, 1)); err != nil || res[0].Code != eddytest.Rejected || len(res[0].Records) != 0 {
		t.Fatalf("corrupt state: %+v %v", res, err)
	}
}
