package nexmark

import (
	"cmp"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The references of the stateless queries of the Flink Nexmark suite that
// are not in Beam's: q10, q13, q14, q21 and q22, each one SQL statement
// over the bids (the statements are quoted in the documentation of each).
// Their times are UTC: Flink's TIMESTAMP(3) holds the bid's dateTime as it
// is, and the benchmark runs in UTC.

// SideInputRows is the size of q13's side input: keys 0 to SideInputRows-1,
// so that a bid's auction modulo SideInputRows always finds a row (the
// Flink benchmark's default).
const SideInputRows = 10_000

// SideRow is a row of q13's side input table (key BIGINT, value VARCHAR).
type SideRow struct {
	Key   int64
	Value string
}

// SideInput returns q13's side input: for every i in [0, SideInputRows),
// key i and value i in decimal, as the Flink benchmark's
// SideInputGenerator writes its file (lines "i,i").
func SideInput() []SideRow {
	rows := make([]SideRow, SideInputRows)
	for i := range rows {
		rows[i] = SideRow{Key: int64(i), Value: strconv.Itoa(i)}
	}
	return rows
}

// Q10Result is a bid as q10 logs it, with the partition it goes to.
type Q10Result struct {
	Auction  int64
	Bidder   int64
	Price    int64
	DateTime int64
	Extra    string
	Dt       string // DATE_FORMAT(dateTime, 'yyyy-MM-dd')
	Hm       string // DATE_FORMAT(dateTime, 'HH:mm')
}

// Compare orders by DateTime, then Auction, Bidder, Price, Extra, Dt and
// Hm.
func (r Q10Result) Compare(o Q10Result) int {
	return cmp.Or(
		cmp.Compare(r.DateTime, o.DateTime),
		cmp.Compare(r.Auction, o.Auction),
		cmp.Compare(r.Bidder, o.Bidder),
		cmp.Compare(r.Price, o.Price),
		cmp.Compare(r.Extra, o.Extra),
		cmp.Compare(r.Dt, o.Dt),
		cmp.Compare(r.Hm, o.Hm),
	)
}

// Q10 logs every bid to a file system partitioned by day and minute:
//
//	SELECT auction, bidder, price, dateTime, extra,
//	       DATE_FORMAT(dateTime, 'yyyy-MM-dd'), DATE_FORMAT(dateTime, 'HH:mm')
//	FROM bid
//
// The result is the rows; where they are written is the pipeline's
// business.
func Q10(events []Event) []Q10Result {
	var out []Q10Result
	for _, ev := range events {
		b := ev.Bid
		if b == nil {
			continue
		}
		t := time.UnixMilli(b.DateTime).UTC()
		out = append(out, Q10Result{Auction: b.Auction, Bidder: b.Bidder, Price: b.Price, DateTime: b.DateTime, Extra: b.Extra,
			Dt: t.Format("2006-01-02"), Hm: t.Format("15:04")})
	}
	slices.SortFunc(out, Q10Result.Compare)
	return out
}

// Q13Result is a bid of q13 with the value of its side input row.
type Q13Result struct {
	Auction  int64
	Bidder   int64
	Price    int64
	DateTime int64
	Value    string
}

// Compare orders by DateTime, then Auction, Bidder, Price and Value.
func (r Q13Result) Compare(o Q13Result) int {
	return cmp.Or(
		cmp.Compare(r.DateTime, o.DateTime),
		cmp.Compare(r.Auction, o.Auction),
		cmp.Compare(r.Bidder, o.Bidder),
		cmp.Compare(r.Price, o.Price),
		cmp.Compare(r.Value, o.Value),
	)
}

// Q13 joins every bid with a bounded side input, looked up by the bid's
// auction modulo [SideInputRows]:
//
//	SELECT B.auction, B.bidder, B.price, B.dateTime, S.value
//	FROM (SELECT *, PROCTIME() as p_time FROM bid) B
//	JOIN side_input FOR SYSTEM_TIME AS OF B.p_time AS S
//	ON mod(B.auction, 10000) = S.key
//
// side is the table (rows of a key occurring twice: the last counts). MOD
// takes the sign of the dividend, as Java's %: a negative auction finds no
// row of [SideInput], and an inner join drops it.
func Q13(events []Event, side []SideRow) []Q13Result {
	table := map[int64]string{}
	for _, r := range side {
		table[r.Key] = r.Value
	}
	var out []Q13Result
	for _, ev := range events {
		b := ev.Bid
		if b == nil {
			continue
		}
		if v, ok := table[b.Auction%SideInputRows]; ok {
			out = append(out, Q13Result{Auction: b.Auction, Bidder: b.Bidder, Price: b.Price, DateTime: b.DateTime, Value: v})
		}
	}
	slices.SortFunc(out, Q13Result.Compare)
	return out
}

// Q14 selects bids by 0.908*price, which the SQL computes exactly: 0.908 is
// a DECIMAL(3,3) literal, price a BIGINT, their product DECIMAL(23,3) (the
// type of the sink's price column), compared with the bounds exactly.
const (
	// Q14Factor is 0.908 in thousandths.
	Q14Factor = 908
	// Q14Low and Q14High are the exclusive bounds of 0.908*price, in
	// thousandths.
	Q14Low  = 1_000_000 * 1000
	Q14High = 50_000_000 * 1000
)

// Q14Result is a bid of q14.
type Q14Result struct {
	Auction int64
	Bidder  int64
	// Price is 0.908*price in thousandths: the DECIMAL(23,3) 12345.678 is
	// 12345678.
	Price       int64
	BidTimeType string
	DateTime    int64
	Extra       string
	CCounts     int64 `json:"c_counts"`
}

// Compare orders by DateTime, then Auction, Bidder, Price, BidTimeType,
// Extra and CCounts.
func (r Q14Result) Compare(o Q14Result) int {
	return cmp.Or(
		cmp.Compare(r.DateTime, o.DateTime),
		cmp.Compare(r.Auction, o.Auction),
		cmp.Compare(r.Bidder, o.Bidder),
		cmp.Compare(r.Price, o.Price),
		cmp.Compare(r.BidTimeType, o.BidTimeType),
		cmp.Compare(r.Extra, o.Extra),
		cmp.Compare(r.CCounts, o.CCounts),
	)
}

// FormatThousandths returns v thousandths as a DECIMAL of scale 3 prints
// (Java's BigDecimal.toString): "12345.678", "-0.005", "3.000".
func FormatThousandths(v int64) string {
	sign, u := "", uint64(v)
	if v < 0 {
		sign, u = "-", -u
	}
	frac := strconv.FormatUint(1000+u%1000, 10)[1:]
	return sign + strconv.FormatUint(u/1000, 10) + "." + frac
}

// Q14 computes, for the bids whose 0.908*price lies strictly between one
// and fifty million, that price, the time of day and the number of 'c'
// characters of the extra:
//
//	SELECT auction, bidder, 0.908 * price as price,
//	    CASE
//	        WHEN HOUR(dateTime) >= 8 AND HOUR(dateTime) <= 18 THEN 'dayTime'
//	        WHEN HOUR(dateTime) <= 6 OR HOUR(dateTime) >= 20 THEN 'nightTime'
//	        ELSE 'otherTime'
//	    END AS bidTimeType,
//	    dateTime, extra, count_char(extra, 'c') AS c_counts
//	FROM bid
//	WHERE 0.908 * price > 1000000 AND 0.908 * price < 50000000
//
// The product is exact (see [Q14Factor]), and no price overflows it.
func Q14(events []Event) []Q14Result {
	var out []Q14Result
	for _, ev := range events {
		b := ev.Bid
		if b == nil {
			continue
		}
		if !q14Selects(b.Price) {
			continue
		}
		var kind string
		switch h := time.UnixMilli(b.DateTime).UTC().Hour(); {
		case h >= 8 && h <= 18:
			kind = "dayTime"
		case h <= 6 || h >= 20:
			kind = "nightTime"
		default:
			kind = "otherTime"
		}
		out = append(out, Q14Result{Auction: b.Auction, Bidder: b.Bidder, Price: b.Price * Q14Factor, BidTimeType: kind,
			DateTime: b.DateTime, Extra: b.Extra, CCounts: int64(strings.Count(b.Extra, "c"))})
	}
	slices.SortFunc(out, Q14Result.Compare)
	return out
}

// q14Selects reports whether Q14Low < price*Q14Factor < Q14High, exactly
// for every int64 price: a price whose product could overflow is far
// outside the bounds, which are below 2^36.
func q14Selects(price int64) bool {
	if price <= 0 || price > 1<<40 {
		return false
	}
	p := price * Q14Factor
	return p > Q14Low && p < Q14High
}

// Q21Result is a bid of q21 with its channel ID.
type Q21Result struct {
	Auction   int64
	Bidder    int64
	Price     int64
	Channel   string
	ChannelID string `json:"channel_id"`
}

// Compare orders by Auction, then Bidder, Price, Channel and ChannelID.
func (r Q21Result) Compare(o Q21Result) int {
	return cmp.Or(
		cmp.Compare(r.Auction, o.Auction),
		cmp.Compare(r.Bidder, o.Bidder),
		cmp.Compare(r.Price, o.Price),
		cmp.Compare(r.Channel, o.Channel),
		cmp.Compare(r.ChannelID, o.ChannelID),
	)
}

// channelIDPattern is q21's regular expression. Go's regexp picks the
// leftmost match and, within it, the first alternative that matches, as
// Java's Matcher.find does; ^ without (?m) is the start of the text in
// both, and [^&] matches line breaks in both.
var channelIDPattern = regexp.MustCompile(`(&|^)channel_id=([^&]*)`)

// q21Channels are the IDs of the well-known channels, by lower-case name.
var q21Channels = map[string]string{"apple": "0", "google": "1", "facebook": "2", "baidu": "3"}

// javaLower is Java's String.toLowerCase in a locale other than Turkish
// (Flink's LOWER): Unicode's default lower-case mapping, where U+0130 (I
// with a dot) becomes "i" and a combining dot above, unlike in Go's
// strings.ToLower. The other conditional mappings of Unicode's
// SpecialCasing (the final sigma) change no ASCII letter.
func javaLower(s string) string {
	return strings.ToLower(strings.ReplaceAll(s, "\u0130", "i\u0307"))
}

// Q21 adds a channel ID to the bids that have one:
//
//	SELECT auction, bidder, price, channel,
//	    CASE
//	        WHEN lower(channel) = 'apple' THEN '0'
//	        WHEN lower(channel) = 'google' THEN '1'
//	        WHEN lower(channel) = 'facebook' THEN '2'
//	        WHEN lower(channel) = 'baidu' THEN '3'
//	        ELSE REGEXP_EXTRACT(url, '(&|^)channel_id=([^&]*)', 2)
//	    END AS channel_id
//	FROM bid
//	WHERE REGEXP_EXTRACT(url, '(&|^)channel_id=([^&]*)', 2) is not null or
//	      lower(channel) in ('apple', 'google', 'facebook', 'baidu')
//
// REGEXP_EXTRACT is the second group of the first match (Flink's
// SqlFunctionUtils.regexpExtract), null when nothing matches; an empty
// channel_id= gives "", which is not null.
func Q21(events []Event) []Q21Result {
	var out []Q21Result
	for _, ev := range events {
		b := ev.Bid
		if b == nil {
			continue
		}
		id, ok := q21Channels[javaLower(b.Channel)]
		if !ok {
			m := channelIDPattern.FindStringSubmatch(b.URL)
			if m == nil {
				continue
			}
			id = m[2]
		}
		out = append(out, Q21Result{Auction: b.Auction, Bidder: b.Bidder, Price: b.Price, Channel: b.Channel, ChannelID: id})
	}
	slices.SortFunc(out, Q21Result.Compare)
	return out
}

// NullString is a VARCHAR that may be null.
type NullString struct {
	S     string
	Valid bool // false: null
}

func (n NullString) compare(o NullString) int {
	if n.Valid != o.Valid {
		if n.Valid {
			return 1
		}
		return -1
	}
	return cmp.Compare(n.S, o.S)
}

// Q22Result is a bid of q22 with the first three directories of its URL.
type Q22Result struct {
	Auction int64
	Bidder  int64
	Price   int64
	Channel string
	Dir1    NullString
	Dir2    NullString
	Dir3    NullString
}

// Compare orders by Auction, then Bidder, Price, Channel and the
// directories (null first).
func (r Q22Result) Compare(o Q22Result) int {
	return cmp.Or(
		cmp.Compare(r.Auction, o.Auction),
		cmp.Compare(r.Bidder, o.Bidder),
		cmp.Compare(r.Price, o.Price),
		cmp.Compare(r.Channel, o.Channel),
		r.Dir1.compare(o.Dir1),
		r.Dir2.compare(o.Dir2),
		r.Dir3.compare(o.Dir3),
	)
}

// SplitIndex is Flink's SPLIT_INDEX(str, sep, index): the index-th (from
// 0) of the pieces of str between occurrences of sep, empty pieces kept
// (commons-lang's splitByWholeSeparatorPreserveAllTokens), null when there
// is no such piece. An empty str has no pieces at all.
func SplitIndex(str, sep string, index int) NullString {
	if str == "" || index < 0 {
		return NullString{}
	}
	pieces := strings.Split(str, sep)
	if index >= len(pieces) {
		return NullString{}
	}
	return NullString{S: pieces[index], Valid: true}
}

// Q22 splits every bid's URL into directories:
//
//	SELECT auction, bidder, price, channel,
//	    SPLIT_INDEX(url, '/', 3) as dir1,
//	    SPLIT_INDEX(url, '/', 4) as dir2,
//	    SPLIT_INDEX(url, '/', 5) as dir3 FROM bid
//
// For "https://www.nexmark.com/a/b/c/item.htm?query=1" the pieces are
// "https:", "", "www.nexmark.com", "a", "b", "c" and the rest.
func Q22(events []Event) []Q22Result {
	var out []Q22Result
	for _, ev := range events {
		b := ev.Bid
		if b == nil {
			continue
		}
		out = append(out, Q22Result{Auction: b.Auction, Bidder: b.Bidder, Price: b.Price, Channel: b.Channel,
			Dir1: SplitIndex(b.URL, "/", 3), Dir2: SplitIndex(b.URL, "/", 4), Dir3: SplitIndex(b.URL, "/", 5)})
	}
	slices.SortFunc(out, Q22Result.Compare)
	return out
}
