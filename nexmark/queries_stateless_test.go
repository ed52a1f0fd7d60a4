package nexmark

import (
	"math"
	"strconv"
	"strings"
	"testing"
)

// bid builds a bid with the fields the stateless queries read.
func bid(auction, price int64, channel, url string, t int64, extra string) Event {
	return Event{Time: t, Bid: &Bid{Auction: auction, Bidder: auction + 1, Price: price, Channel: channel, URL: url, DateTime: t, Extra: extra}}
}

// The bounds of event time: the first and the last millisecond of the
// years 0000 to 9999, UTC.
const (
	minTime = -62167219200000
	maxTime = 253402300799999
)

func TestQ10(t *testing.T) {
	h, m := int64(3_600_000), int64(60_000)
	in := []Event{
		bid(1, 10, "c", "u", BaseTime+13*h+59*m+59_999, "x"),
		P(1, "a", "OR", 5),
		bid(2, 20, "c", "u", 0, ""),
		bid(3, 30, "c", "u", -1, "y"),
		bid(4, 40, "c", "u", 1456790340000, "z"), // 2016-02-29T23:59:00Z: a leap day
		bid(5, 50, "c", "u", minTime, ""),
		bid(6, 60, "c", "u", maxTime, ""),
	}
	r := func(a, t int64, extra, dt, hm string) Q10Result {
		return Q10Result{Auction: a, Bidder: a + 1, Price: 10 * a, DateTime: t, Extra: extra, Dt: dt, Hm: hm}
	}
	check(t, Q10(in), []Q10Result{
		r(5, minTime, "", "0000-01-01", "00:00"),
		r(3, -1, "y", "1969-12-31", "23:59"),
		r(2, 0, "", "1970-01-01", "00:00"),
		r(1, BaseTime+13*h+59*m+59_999, "x", "2015-07-15", "13:59"),
		r(4, 1456790340000, "z", "2016-02-29", "23:59"),
		r(6, maxTime, "", "9999-12-31", "23:59"),
	})
}

func TestSideInput(t *testing.T) {
	rows := SideInput()
	if len(rows) != SideInputRows || rows[0] != (SideRow{0, "0"}) || rows[9999] != (SideRow{9999, "9999"}) {
		t.Fatalf("%d rows, first %+v, last %+v", len(rows), rows[0], rows[len(rows)-1])
	}
	for i, r := range rows {
		if r.Key != int64(i) || r.Value != strconv.Itoa(i) {
			t.Fatalf("row %d: %+v", i, r)
		}
	}
}

func TestQ13(t *testing.T) {
	in := []Event{
		bid(10_000, 1, "c", "u", 3, ""),
		bid(12_345, 2, "c", "u", 2, ""),
		bid(-3, 3, "c", "u", 1, ""), // mod is -3: no row
		bid(7, 4, "c", "u", 0, ""),  // no row in the small table
		A(1, 1, 10, 0, 0, 9),
	}
	r := func(a, price, t int64, v string) Q13Result {
		return Q13Result{Auction: a, Bidder: a + 1, Price: price, DateTime: t, Value: v}
	}
	check(t, Q13(in, SideInput()), []Q13Result{r(7, 4, 0, "7"), r(12_345, 2, 2, "2345"), r(10_000, 1, 3, "0")})
	small := []SideRow{{0, "zero"}, {2345, "a"}, {2345, "b"}} // the last of a key counts
	check(t, Q13(in, small), []Q13Result{r(12_345, 2, 2, "b"), r(10_000, 1, 3, "zero")})
}

func TestFormatThousandths(t *testing.T) {
	for v, want := range map[int64]string{
		1000000376: "1000000.376", 3000: "3.000", 5: "0.005", 0: "0.000", -5: "-0.005", -12345: "-12.345",
		math.MaxInt64: "9223372036854775.807", math.MinInt64: "-9223372036854775.808",
	} {
		if got := FormatThousandths(v); got != want {
			t.Errorf("FormatThousandths(%d) = %q, want %q", v, got, want)
		}
	}
}

func TestQ14(t *testing.T) {
	h := int64(3_600_000)
	in := []Event{
		bid(1, 1_101_321, "c", "u", 8*h, "c"),       // 999,999.468: out
		bid(2, 1_101_322, "c", "u", 8*h, "cc"),      // 1,000,000.376: in, day
		bid(3, 55_066_079, "c", "u", 18*h+1, "Cc"),  // 49,999,999.732: in, day
		bid(4, 55_066_080, "c", "u", 8*h, ""),       // 50,000,000.640: out
		bid(5, -2_000_000, "c", "u", 8*h, ""),       // negative: out
		bid(6, math.MaxInt64, "c", "u", 8*h, ""),    // would overflow: out
		bid(7, 2_000_000, "c", "u", 7*h, "abc"),     // 7 h: other
		bid(8, 2_000_000, "c", "u", 19*h+59, "ccc"), // 19 h: other
		bid(9, 2_000_000, "c", "u", 20*h, "cc"),     // 20 h: night
		bid(10, 2_000_000, "c", "u", 6*h+h-1, ""),   // 6 h: night
		bid(11, 2_000_000, "c", "u", -1, "ç"),       // 23 h the day before: night
		P(1, "c", "OR", 0),
	}
	r := func(a, price int64, kind string, t int64, extra string, c int64) Q14Result {
		return Q14Result{Auction: a, Bidder: a + 1, Price: price, BidTimeType: kind, DateTime: t, Extra: extra, CCounts: c}
	}
	check(t, Q14(in), []Q14Result{
		r(11, 1_816_000_000, "nightTime", -1, "ç", 0),
		r(10, 1_816_000_000, "nightTime", 7*h-1, "", 0),
		r(7, 1_816_000_000, "otherTime", 7*h, "abc", 1),
		r(2, 1_000_000_376, "dayTime", 8*h, "cc", 2),
		r(3, 49_999_999_732, "dayTime", 18*h+1, "Cc", 1),
		r(8, 1_816_000_000, "otherTime", 19*h+59, "ccc", 3),
		r(9, 1_816_000_000, "nightTime", 20*h, "cc", 2),
	})
}

func TestJavaLower(t *testing.T) {
	for in, want := range map[string]string{
		"Apple": "apple", "FACEBOO\u212a": "facebook", // the Kelvin sign lowers to k
		"BA\u0130DU": "bai\u0307du", "\u017f": "\u017f", // long s is lower case already
	} {
		if got := javaLower(in); got != want {
			t.Errorf("javaLower(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestQ21(t *testing.T) {
	in := []Event{
		bid(1, 1, "Apple", "https://x/item.htm?query=1&channel_id=9", 0, ""), // the channel wins
		bid(2, 1, "GOOGLE", "u", 0, ""),
		bid(3, 1, "faceboo\u212a", "u", 0, ""),
		bid(4, 1, "baidu", "u", 0, ""),
		bid(5, 1, "ba\u0130du", "u", 0, ""), // not baidu in Java: no ID
		bid(6, 1, "channel-6", "https://x/item.htm?query=1&channel_id=77&b=2", 0, ""),
		bid(7, 1, "channel-7", "channel_id=5&x", 0, ""),          // at the start
		bid(8, 1, "channel-8", "https://x/?channel_id=5", 0, ""), // after '?': no
		bid(9, 1, "channel-9", "a&channel_id=", 0, ""),           // empty, not null
		bid(10, 1, "channel-10", "a&xchannel_id=1&channel_id=2", 0, ""),
		bid(11, 1, "channel-11", "&channel_id=1&channel_id=2", 0, ""),
		bid(12, 1, "channel-12", "a&channel_id=x\ny&z", 0, ""),
		bid(13, 1, "", "", 0, ""),
		bid(14, 1, "apples", "u", 0, ""),
	}
	r := func(a int64, ch, id string) Q21Result {
		return Q21Result{Auction: a, Bidder: a + 1, Price: 1, Channel: ch, ChannelID: id}
	}
	check(t, Q21(in), []Q21Result{
		r(1, "Apple", "0"), r(2, "GOOGLE", "1"), r(3, "faceboo\u212a", "2"), r(4, "baidu", "3"),
		r(6, "channel-6", "77"), r(7, "channel-7", "5"), r(9, "channel-9", ""), r(10, "channel-10", "2"),
		r(11, "channel-11", "1"), r(12, "channel-12", "x\ny"),
	})
}

func TestSplitIndex(t *testing.T) {
	null := NullString{}
	s := func(v string) NullString { return NullString{S: v, Valid: true} }
	const url = "https://www.nexmark.com/a/b/c/item.htm?query=1"
	for _, c := range []struct {
		str   string
		index int
		want  NullString
	}{
		{url, 0, s("https:")}, {url, 1, s("")}, {url, 2, s("www.nexmark.com")}, {url, 3, s("a")},
		{url, 5, s("c")}, {url, 6, s("item.htm?query=1")}, {url, 7, null}, {url, -1, null},
		{"", 0, null}, {"x", 0, s("x")}, {"x", 1, null}, {"///", 3, s("")}, {"///", 4, null}, {"a/", 1, s("")},
	} {
		if got := SplitIndex(c.str, "/", c.index); got != c.want {
			t.Errorf("SplitIndex(%q, %d) = %+v, want %+v", c.str, c.index, got, c.want)
		}
	}
}

func TestQ22(t *testing.T) {
	in := []Event{
		bid(1, 1, "Apple", "https://www.nexmark.com/ab_/cd/efg/item.htm?query=1", 0, ""),
		bid(2, 2, "c", "https://www.nexmark.com/a//", 0, ""),
		bid(3, 3, "c", "https://x/y", 0, ""),
		bid(4, 4, "c", "", 0, ""),
		A(1, 1, 10, 0, 0, 9),
	}
	null := NullString{}
	s := func(v string) NullString { return NullString{S: v, Valid: true} }
	r := func(a int64, ch string, d1, d2, d3 NullString) Q22Result {
		return Q22Result{Auction: a, Bidder: a + 1, Price: a, Channel: ch, Dir1: d1, Dir2: d2, Dir3: d3}
	}
	check(t, Q22(in), []Q22Result{
		r(1, "Apple", s("ab_"), s("cd"), s("efg")),
		r(2, "c", s("a"), s(""), s("")),
		r(3, "c", s("y"), null, null),
		r(4, "c", null, null, null),
	})
}

// TestStatelessOnGenerated runs the references over generated events and
// checks what ties them to the input.
func TestStatelessOnGenerated(t *testing.T) {
	evs := generate(t, defaultN(50_000))
	bids := 0
	for _, ev := range evs {
		if ev.Bid != nil {
			bids++
		}
	}
	q10, q13, q14, q21, q22 := Q10(evs), Q13(evs, SideInput()), Q14(evs), Q21(evs), Q22(evs)
	if len(q10) != bids || len(q13) != bids || len(q22) != bids {
		t.Fatalf("q10, q13, q22 give %d, %d, %d rows for %d bids", len(q10), len(q13), len(q22), bids)
	}
	for _, r := range q13 {
		if r.Value != strconv.FormatInt(r.Auction%SideInputRows, 10) {
			t.Fatalf("q13: %+v", r)
		}
	}
	for _, r := range q14 {
		if r.Price <= Q14Low || r.Price >= Q14High || r.CCounts != int64(strings.Count(r.Extra, "c")) {
			t.Fatalf("q14: %+v", r)
		}
	}
	ids := map[string]bool{}
	for _, r := range q21 {
		if _, err := strconv.Atoi(r.ChannelID); err != nil {
			t.Fatalf("q21: %+v", r)
		}
		ids[r.ChannelID] = true
	}
	for _, r := range q22 {
		if !r.Dir1.Valid || !r.Dir2.Valid || !r.Dir3.Valid {
			t.Fatalf("q22: %+v", r)
		}
	}
	// Half the bids are on the four hot channels; 90% of the others have a
	// channel_id in their URL.
	if len(q14) == 0 || len(q14) == bids || len(q21) <= bids/2 || len(q21) >= bids || len(ids) < 100 {
		t.Fatalf("q14 %d, q21 %d rows (%d channel IDs) of %d bids", len(q14), len(q21), len(ids), bids)
	}
	t.Logf("%d bids: q14 %d, q21 %d rows (%d channel IDs)", bids, len(q14), len(q21), len(ids))
}
