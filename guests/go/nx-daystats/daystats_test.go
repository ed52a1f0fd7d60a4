package daystats

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	eddy "github.com/eddy-streams/eddy/sdk/go"
	"github.com/eddy-streams/eddy/sdk/go/eddytest"
)

// day1 is 2015-07-15T00:00:00Z, nexmark's base time.
const day1 = int64(1436918400000)

func bid(auction, bidder, price, t int64) eddy.Record {
	v := fmt.Sprintf(`{"auction":%d,"bidder":%d,"price":%d,"channel":"Apple","url":"https://www.nexmark.com/a/item.htm?query=1","dateTime":%d,"extra":"x"}`,
		auction, bidder, price, t)
	return eddy.Record{Key: []byte("all"), Value: []byte(v), Timestamp: t}
}

func TestAppendDateAndMinute(t *testing.T) {
	for _, ms := range []int64{MinTime, MinTime + DayMs - 1, -DayMs - 1, -1, 0, 1, day1, day1 + DayMs - 1,
		951782400000 /* 2000-02-29 */, 4107542400000 /* 2100-02-28 */, MaxTime} {
		tm := time.UnixMilli(ms).UTC()
		if got, want := string(AppendDate(nil, FloorDiv(ms, DayMs))), tm.Format(time.DateOnly); got != want {
			t.Errorf("AppendDate of %d: %s, want %s", ms, got, want)
		}
		if got, want := string(AppendMinute(nil, ms)), tm.Format("15:04"); got != want {
			t.Errorf("AppendMinute(%d): %s, want %s", ms, got, want)
		}
	}
	// Every day of four centuries, around the calendar's corners.
	for d := FloorDiv(MinTime, DayMs); d <= FloorDiv(MaxTime, DayMs); d += 37 {
		if got, want := string(AppendDate(nil, d)), time.UnixMilli(d*DayMs).UTC().Format(time.DateOnly); got != want {
			t.Fatalf("AppendDate(%d): %s, want %s", d, got, want)
		}
	}
}

func TestAppendString(t *testing.T) {
	if got := string(AppendString(nil, []byte("a\"b\\c\n\x01é"))); got != `"a\"b\\c\u000a\u0001é"` {
		t.Fatalf("got %s", got)
	}
}

// run calls Distinct on r and returns its delta.
func run(t *testing.T, r eddy.Record) []byte {
	t.Helper()
	out, err := Distinct(r)
	if err != nil {
		t.Fatalf("%s: %v", r.Value, err)
	}
	if out.Timestamp != r.Timestamp || string(out.Key) != string(r.Key) {
		t.Fatalf("output %+v for %s", out, r.Value)
	}
	return append([]byte(nil), out.Value...)
}

func deltaOf(rank, bidder, auction byte, t int64) []byte {
	return binary.LittleEndian.AppendUint64([]byte{1, rank, bidder, auction}, uint64(t))
}

func TestDistinct(t *testing.T) {
	eddytest.Reset()
	for i, c := range []struct {
		rec  eddy.Record
		want []byte
	}{
		{bid(10, 1, 5, day1), deltaOf(1, 1|2, 1|2, day1)},                    // all new
		{bid(10, 1, 9_999, day1+1), deltaOf(1, 0, 0, day1+1)},                // nothing new
		{bid(11, 1, 10_000, day1+2), deltaOf(2, 4, 1|4, day1+2)},             // the bidder in rank 2, a new auction
		{bid(10, 2, 1_000_000, day1+3), deltaOf(3, 1|8, 8, day1+3)},          // a new bidder, the auction in rank 3
		{bid(10, 1, 5, day1+DayMs), deltaOf(1, 1|2, 1|2, day1+DayMs)},        // the next day: all new again
		{bid(11, 1, 20_000, day1+4), deltaOf(2, 0, 0, day1+4)},               // the day before the newest: still counted
		{bid(12, 1, 20_000, day1+5), deltaOf(2, 0, 1|4, day1+5)},             // a new auction on day 1
		{bid(12, 1, 20_000, day1+DayMs+1), deltaOf(2, 4, 1|4, day1+DayMs+1)}, // on day 2
	} {
		if got := run(t, c.rec); string(got) != string(c.want) {
			t.Fatalf("bid %d: delta %v, want %v", i, got, c.want)
		}
	}
	// Keys decide the groups: another key starts from nothing.
	r := bid(10, 1, 5, day1)
	r.Key = []byte("other")
	if got := run(t, r); string(got) != string(deltaOf(1, 3, 3, day1)) {
		t.Fatalf("another group: %v", got)
	}
}

func TestRetiredDaysAreDeleted(t *testing.T) {
	eddytest.Reset()
	k := []byte("all")
	d1 := FloorDiv(day1, DayMs)
	// Day 1: 20 bidders on auction 5, so 21 entries.
	for b := int64(1); b <= 20; b++ {
		run(t, bid(5, b, 1, day1+b))
	}
	has := func(day int64, tag byte, id int64) bool {
		_, ok := eddytest.State(entryKey(day, tag, id, k))
		return ok
	}
	if !has(d1, 'b', 20) || !has(d1, 'a', 5) {
		t.Fatal("day 1's entries missing")
	}
	// Day 2 keeps day 1 (the day before the newest); day 3 retires it, and
	// each bid deletes cleanupPerBid of its entries: 21 entries, 3 bids.
	run(t, bid(5, 1, 1, day1+DayMs))
	run(t, bid(5, 1, 1, day1+2*DayMs))
	if !has(d1, 'b', 20) {
		t.Fatal("day 1 deleted at once")
	}
	run(t, bid(5, 1, 1, day1+2*DayMs+1))
	run(t, bid(5, 1, 1, day1+2*DayMs+2))
	for b := int64(1); b <= 20; b++ {
		if has(d1, 'b', b) {
			t.Fatalf("bidder %d of day 1 kept", b)
		}
		if _, ok := eddytest.State(listKey(d1, b, k)); ok {
			t.Fatalf("list entry %d of day 1 kept", b)
		}
	}
	if has(d1, 'a', 5) || !has(d1+1, 'b', 1) || !has(d1+2, 'a', 5) {
		t.Fatal("wrong entries deleted")
	}
	// A bid of day 1 now is more than a day late.
	_, err := Distinct(bid(5, 1, 1, day1+7))
	if err == nil || !strings.Contains(err.Error(), "bid of day 2015-07-15 is more than a day older than day 2015-07-17") {
		t.Fatalf("late bid: %v", err)
	}
	// A jump of several days retires both kept days: day 3 goes at once
	// when day 2 is still being deleted.
	for b := int64(1); b <= 20; b++ {
		run(t, bid(6, b, 1, day1+2*DayMs+3+b))
	}
	run(t, bid(6, 1, 1, day1+9*DayMs))
	if has(d1+1, 'b', 1) || !has(d1+2, 'b', 20) {
		t.Fatal("day 2 should be gone, day 3's last entries not yet")
	}
	for range 10 {
		run(t, bid(6, 1, 1, day1+9*DayMs))
	}
	for b := int64(1); b <= 20; b++ {
		if has(d1+1, 'b', b) || has(d1+2, 'b', b) {
			t.Fatalf("bidder %d of days 2 and 3 kept", b)
		}
	}
}

func TestDistinctRejects(t *testing.T) {
	eddytest.Reset()
	for _, c := range []struct {
		value, reason string
	}{
		{`{"id":1,"name":"n","emailAddress":"e"}`, `value is not a bid: no "bidder" member`},
		{`{"bidder":1,"auction":2,"price":3}`, `no "dateTime" member`},
		{`{"bidder":1,"auction":2,"price":"3","dateTime":4}`, `"price" is not an integer`},
		{`{"bidder":1,"auction":2,"price":3,"dateTime":253402300800000}`, `"dateTime" is outside the years 0000 to 9999`},
		{`[1]`, "value is not a JSON object"},
	} {
		_, err := Distinct(eddy.Record{Key: []byte("all"), Value: []byte(c.value)})
		if err == nil || err.Error() != c.reason {
			t.Errorf("%s: %v, want %s", c.value, err, c.reason)
		}
	}
	// A corrupt header fails the bid (REJECTED, not BAD_INPUT).
	eddytest.SetState(groupKey([]byte("all")), []byte{2})
	if _, err := Distinct(bid(1, 1, 1, day1)); !errors.Is(err, errHeader) {
		t.Fatalf("corrupt header: %v", err)
	}
}

func TestAggregate(t *testing.T) {
	acc := Init()
	var err error
	for _, d := range [][]byte{
		deltaOf(1, 3, 3, day1+5), deltaOf(1, 0, 0, day1+1), deltaOf(2, 4, 5, day1+7_200_000), deltaOf(3, 9, 8, day1+3),
	} {
		if acc, err = Add(append([]byte(nil), acc...), eddy.Record{Value: d}); err != nil {
			t.Fatal(err)
		}
	}
	want := `{"day":"2015-07-15","total_bids":4,"rank1_bids":2,"rank2_bids":1,"rank3_bids":1,` +
		`"total_bidders":2,"rank1_bidders":1,"rank2_bidders":1,"rank3_bidders":1,` +
		`"total_auctions":2,"rank1_auctions":1,"rank2_auctions":1,"rank3_auctions":1}`
	if got, err := Result([]byte("all"), acc, false); err != nil || string(got) != want {
		t.Fatalf("result %s %v\nwant   %s", got, err, want)
	}
	// Merging with an accumulator of one bid adds it.
	one, _ := Add(append([]byte(nil), Init()...), eddy.Record{Value: deltaOf(1, 3, 0, day1+9_000_000)})
	m, err := Merge(nil, acc, one)
	if err != nil {
		t.Fatal(err)
	}
	want = `{"channel":"a\"b","day":"2015-07-15","minute":"02:30","total_bids":5,"rank1_bids":3,"rank2_bids":1,"rank3_bids":1,` +
		`"total_bidders":3,"rank1_bidders":2,"rank2_bidders":1,"rank3_bidders":1,` +
		`"total_auctions":2,"rank1_auctions":1,"rank2_auctions":1,"rank3_auctions":1}`
	if got, err := Result([]byte(`a"b`), m, true); err != nil || string(got) != want {
		t.Fatalf("merged result %s %v\nwant          %s", got, err, want)
	}
	if got, err := Result(nil, Init(), true); got != nil || err != nil {
		t.Fatalf("empty accumulator: %s %v", got, err)
	}
	for _, d := range [][]byte{
		deltaOf(0, 1, 1, 0), deltaOf(4, 1, 1, 0), deltaOf(1, 4, 0, 0), deltaOf(2, 0, 2, 0), {1, 1, 1, 1}, append(deltaOf(1, 1, 1, 0), 0),
	} {
		if _, err := Add(append([]byte(nil), Init()...), eddy.Record{Value: d}); !errors.Is(err, errDelta) {
			t.Errorf("delta %v: %v", d, err)
		}
	}
	if _, err := Add([]byte{1, 2}, eddy.Record{Value: deltaOf(1, 1, 1, 0)}); !errors.Is(err, errAcc) {
		t.Errorf("short accumulator: %v", err)
	}
}
