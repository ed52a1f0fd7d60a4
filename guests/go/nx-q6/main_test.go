package main

import (
	"fmt"
	"slices"
	"testing"

	eddy "github.com/eddy-streams/eddy/sdk/go"
	"github.com/eddy-streams/eddy/sdk/go/eddytest"
)

// rowJSON is a row of nx-win, with the members nx-q6 reads.
func rowJSON(seller, id, price, expires int64) string {
	return fmt.Sprintf(`{"id":%d,"itemName":"x","expires":%d,"seller":%d,"category":10,"auction":%d,"bidder":1,"price":%d,"bid_dateTime":1,"bid_extra":""}`,
		id, expires, seller, id, price)
}

func holdRows(t *testing.T, rows ...string) {
	t.Helper()
	for _, v := range rows {
		res, err := eddytest.Process(eddy.Record{Key: []byte("x"), Value: []byte(v), Timestamp: 1})
		if err != nil {
			t.Fatal(err)
		}
		if r := res[0]; r.Code != 0 || len(r.Records) != 0 {
			t.Fatalf("%s: code %d %q, %d records", v, r.Code, r.Reason, len(r.Records))
		}
	}
}

// fireAt fires key@at and returns what it emits as "value@timestamp".
func fireAt(t *testing.T, key string, at int64) []string {
	t.Helper()
	res, err := eddytest.FireTimers(eddytest.Timer{Key: []byte(key), Domain: eddy.EventTime, Time: at})
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Code != 0 {
		t.Fatalf("timer %s@%d: code %d %q", key, at, res[0].Code, res[0].Reason)
	}
	var out []string
	for _, r := range res[0].Records {
		if string(r.Key) != key {
			t.Fatalf("key %q", r.Key)
		}
		out = append(out, fmt.Sprintf("%s@%d", r.Value, r.Timestamp))
	}
	return out
}

func expect(t *testing.T, got []string, want ...string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("\ngot  %q\nwant %q", got, want)
	}
}

func TestClosingOrder(t *testing.T) {
	eddytest.Reset()
	// Rows of seller 5 arriving out of closing order.
	holdRows(t, rowJSON(5, 30, 300, 130), rowJSON(5, 20, 200, 120), rowJSON(5, 11, 101, 110), rowJSON(5, 10, 100, 110))
	var ts []int64
	for _, tm := range eddytest.Timers() {
		ts = append(ts, tm.Time)
	}
	if !slices.Equal(ts, []int64{111, 121, 131}) {
		t.Fatalf("timers at %v", ts)
	}
	expect(t, fireAt(t, "5", 111),
		`{"seller":5,"auction":10,"avg_price":100}@110`,
		`{"seller":5,"auction":11,"avg_price":101}@110`) // 100.5, halves up
	// A late row (before the watermark) goes at the next firing.
	holdRows(t, rowJSON(5, 15, 150, 115))
	expect(t, fireAt(t, "5", 121),
		`{"seller":5,"auction":15,"avg_price":117}@115`, // 351/3
		`{"seller":5,"auction":20,"avg_price":138}@120`) // 551/4 = 137.75
	expect(t, fireAt(t, "5", 116)) // nothing left before it
	expect(t, fireAt(t, "5", 131), `{"seller":5,"auction":30,"avg_price":170}@130`)
}

func TestLastTen(t *testing.T) {
	eddytest.Reset()
	var want []string
	for i := int64(1); i <= 12; i++ {
		holdRows(t, rowJSON(7, i, 10*i, 100+i))
		// The average of the last ten prices: 10*max(1, i-9) .. 10*i.
		lo := max(1, i-9)
		sum := (lo + i) * (i - lo + 1) * 10 / 2
		want = append(want, fmt.Sprintf(`{"seller":7,"auction":%d,"avg_price":%d}@%d`, i, (2*sum+i-lo+1)/(2*(i-lo+1)), 100+i))
	}
	var got []string
	for _, tm := range eddytest.Timers() {
		got = append(got, fireAt(t, string(tm.Key), tm.Time)...)
	}
	expect(t, got, want...)
	if want[11] != `{"seller":7,"auction":12,"avg_price":75}@112` { // (30+...+120)/10
		t.Fatalf("the test's own average: %s", want[11])
	}
	v, _ := eddytest.State([]byte("7"))
	if len(v) != 2+8*10+4 || v[1] != 10 {
		t.Fatalf("state %v: want ten prices and nothing held", v)
	}
}

func TestBadInput(t *testing.T) {
	eddytest.Reset()
	for _, c := range []struct{ value, reason string }{
		{`{"seller":1,"id":2,"price":3}`, `no "expires" member`},
		{`{"seller":"1","id":2,"price":3,"expires":4}`, `"seller" is not an integer`},
		{`{`, "value is not valid JSON"},
	} {
		res, err := eddytest.Process(eddy.Record{Value: []byte(c.value)})
		if err != nil {
			t.Fatal(err)
		}
		if r := res[0]; r.Code != eddytest.BadInput || r.Reason != c.reason {
			t.Errorf("%s: code %d %q, want BAD_INPUT %q", c.value, r.Code, r.Reason, c.reason)
		}
	}
	for _, v := range [][]byte{{2, 0, 0, 0, 0, 0}, {1, 11, 0, 0, 0, 0}, {1, 0, 1, 0, 0, 0}} {
		eddytest.SetState([]byte("1"), v)
		res, _ := eddytest.Process(eddy.Record{Value: []byte(rowJSON(1, 2, 3, 4))})
		if res[0].Code != eddytest.Rejected || res[0].Reason != errState.Error() {
			t.Errorf("state %v: code %d %q", v, res[0].Code, res[0].Reason)
		}
	}
}
