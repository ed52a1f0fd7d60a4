package main

import (
	"testing"

	eddy "github.com/eddy-streams/eddy/sdk/go"
	"github.com/eddy-streams/eddy/sdk/go/eddytest"
)

// TestQ16 runs bids of two channels, keyed by channel, through the
// distinct step and the aggregate: each channel counts its own bidders.
func TestQ16(t *testing.T) {
	eddytest.Reset()
	const t0 = int64(1436918400000) + 45_296_000 // 12:34:56
	bid := func(channel, value string) eddy.Record {
		return eddy.Record{Key: []byte(channel), Value: []byte(value), Timestamp: t0}
	}
	res, err := eddytest.Process(
		bid("Google", `{"auction":1,"bidder":7,"price":3,"dateTime":1436963696000}`),
		bid("Google", `{"auction":1,"bidder":7,"price":3,"dateTime":1436963636000}`), // a minute earlier
		bid(`a "b"`, `{"auction":1,"bidder":7,"price":3,"dateTime":1436963636000}`),
	)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		key  string
		recs []eddy.Record
		want string
	}{
		{"Google", []eddy.Record{res[0].Records[0], res[1].Records[0]},
			`{"channel":"Google","day":"2015-07-15","minute":"12:34","total_bids":2,"rank1_bids":2,"rank2_bids":0,"rank3_bids":0,` +
				`"total_bidders":1,"rank1_bidders":1,"rank2_bidders":0,"rank3_bidders":0,` +
				`"total_auctions":1,"rank1_auctions":1,"rank2_auctions":0,"rank3_auctions":0}`},
		{`a "b"`, []eddy.Record{res[2].Records[0]},
			`{"channel":"a \"b\"","day":"2015-07-15","minute":"12:33","total_bids":1,"rank1_bids":1,"rank2_bids":0,"rank3_bids":0,` +
				`"total_bidders":1,"rank1_bidders":1,"rank2_bidders":0,"rank3_bidders":0,` +
				`"total_auctions":1,"rank1_auctions":1,"rank2_auctions":0,"rank3_auctions":0}`},
	} {
		added, err := eddytest.AggAdd(eddytest.Group{Key: []byte(c.key), Records: c.recs})
		if err != nil || len(added[0].Errors) != 0 {
			t.Fatalf("add %+v %v", added, err)
		}
		got, err := eddytest.AggResult(eddytest.ResultItem{Key: []byte(c.key), Acc: added[0].Acc})
		if err != nil || string(got[0].Value) != c.want {
			t.Fatalf("%s: %s %v\nwant %s", c.key, got[0].Value, err, c.want)
		}
	}
}

func TestChannelKey(t *testing.T) {
	res, err := eddytest.Key(
		eddy.Record{Value: []byte(`{"bidder":1,"channel":"Google"}`)},
		eddy.Record{Value: []byte(`{"bidder":1,"channel":"a\"b\u00e9\ud83d\ude00"}`)},
		eddy.Record{Value: []byte(`{"bidder":1,"channel":5}`)},
		eddy.Record{Value: []byte(`{"id":1,"name":"n"}`)},
	)
	if err != nil {
		t.Fatal(err)
	}
	if string(res[0].Value) != "Google" || string(res[1].Value) != "a\"bé😀" {
		t.Fatalf("keys %q %q", res[0].Value, res[1].Value)
	}
	if res[2].Code != eddytest.BadInput || res[2].Reason != `"channel" is not a string` || res[3].Code != eddytest.BadInput {
		t.Fatalf("results %+v", res[2:])
	}
}
