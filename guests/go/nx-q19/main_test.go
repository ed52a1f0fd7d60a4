package main

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	eddy "github.com/eddy-streams/eddy/sdk/go"
	"github.com/eddy-streams/eddy/sdk/go/eddytest"
)

func bid(auction, bidder, price, t int64) eddy.Record {
	v := fmt.Sprintf(`{"auction":%d,"bidder":%d,"price":%d,"channel":"Apple","url":"u","dateTime":%d,"extra":"x"} `, auction, bidder, price, t)
	return eddy.Record{Key: fmt.Appendf(nil, "%d", auction), Value: []byte(v), Timestamp: t}
}

// row is the output row of a bid at a rank.
func row(r eddy.Record, rank int) string {
	v := strings.TrimSpace(string(r.Value))
	return v[:len(v)-1] + fmt.Sprintf(`,"rank_number":%d}`, rank)
}

// TestQ19 feeds an auction's bids one at a time and keeps the last row of
// every rank, as an upsert sink would; after every bid that must be the
// top ten of the bids so far.
func TestQ19(t *testing.T) {
	eddytest.Reset()
	var in []eddy.Record
	for i := range int64(40) {
		// Prices repeat (i%13), times too (i%5): ties by time and bidder.
		in = append(in, bid(7, 100-i%3, 10*(i%13), 1000+i%5))
	}
	in = append(in, bid(7, 1, 120, 1000), bid(7, 1, 120, 1000)) // equal bids: the second ranks after the first
	rows := map[string]string{}
	var held []eddy.Record // the expected top, in order
	for i, r := range in {
		res, err := eddytest.Process(r)
		if err != nil || res[0].Code != 0 {
			t.Fatalf("bid %d: %+v %v", i, res, err)
		}
		// The expected ranking: stable, by price desc, time, bidder.
		at := len(held)
		var p, tm, b int64
		fmt.Sscanf(string(r.Value), `{"auction":7,"bidder":%d,"price":%d,"channel":"Apple","url":"u","dateTime":%d`, &b, &p, &tm)
		for j, h := range held {
			var hp, ht, hb int64
			fmt.Sscanf(string(h.Value), `{"auction":7,"bidder":%d,"price":%d,"channel":"Apple","url":"u","dateTime":%d`, &hb, &hp, &ht)
			if p > hp || p == hp && (tm < ht || tm == ht && b < hb) {
				at = j
				break
			}
		}
		held = slices.Insert(held, at, r)[:min(len(held)+1, top)]
		if at >= top {
			if len(res[0].Records) != 0 {
				t.Fatalf("bid %d below the top: %+v", i, res[0].Records)
			}
			continue
		}
		if len(res[0].Records) != len(held)-at {
			t.Fatalf("bid %d at rank %d: %d rows, want %d", i, at+1, len(res[0].Records), len(held)-at)
		}
		for _, o := range res[0].Records {
			rows[string(o.Key)] = string(o.Value)
		}
		for j, h := range held {
			if got := rows[fmt.Sprintf("7/%d", j+1)]; got != row(h, j+1) {
				t.Fatalf("after bid %d, rank %d: %s, want %s", i, j+1, got, row(h, j+1))
			}
		}
	}
	if len(rows) != top {
		t.Fatalf("%d ranks", len(rows))
	}
}

func TestQ19Rejects(t *testing.T) {
	eddytest.Reset()
	wrong := bid(3, 1, 1, 1)
	wrong.Key = []byte("4")
	res, err := eddytest.Process(wrong,
		eddy.Record{Key: []byte("1"), Value: []byte(`{"id":1,"name":"n"}`)},
		eddy.Record{Key: []byte("1"), Value: []byte(`{"auction":1,"bidder":1,"dateTime":1}`)})
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Code != eddytest.Rejected || res[0].Reason != "bid of auction 3 keyed 4: the bids must be keyed by their auction" ||
		res[1].Code != eddytest.BadInput || res[2].Code != eddytest.BadInput || res[2].Reason != `no "price" member` {
		t.Fatalf("results %+v", res)
	}
	// Corrupt state fails the bid.
	eddytest.SetState([]byte("h5"), []byte{2, 0})
	eddytest.SetState([]byte("h6"), append([]byte{1}, make([]byte, 24)...))
	eddytest.SetState([]byte("l6"), []byte{200, 0, 0, 0, '{'})
	res, err = eddytest.Process(bid(5, 1, 1, 1), bid(6, 1, 1, 1))
	if err != nil || res[0].Code != eddytest.Rejected || res[1].Code != eddytest.Rejected {
		t.Fatalf("corrupt state: %+v %v", res, err)
	}
}
