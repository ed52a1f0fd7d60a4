// Package daystats is the shared code of the Nexmark guests nx-q15 and
// nx-q16 (the bidding statistics of a day, of all bids or per channel) and
// the day arithmetic of nx-q17. It is a library, not a guest: build.sh
// builds only directories with a main.go.
//
// # The two steps
//
// q15 and q16 count, per group (q15: all bids, keyed "all"; q16: a
// channel) and UTC day, the bids, the distinct bidders and the distinct
// auctions, in all and per price rank (nexmark.PriceRank). Counting
// distinct values in an aggregate's accumulator would rewrite a growing
// set at every bid; instead two steps share the work, in one task (the
// same key):
//
//   - The process function (a map step with state: true, after a key_by on
//     the group) keeps, per group and day, one state entry per bidder and
//     per auction seen, holding the ranks it was seen in. For each bid it
//     reads the bidder's and the auction's entry, and emits a delta of 12
//     bytes: the bid's rank, which of the bidder's counts the bid is the
//     first of (all, its rank), the same for the auction, and the bid's
//     dateTime, which it also gives the delta as its timestamp (the day
//     then decides the window, as DATE_FORMAT(dateTime) groups in SQL).
//   - The aggregate (tumbling windows of a day) sums the deltas of a group
//     and day into 12 counters and the last dateTime, and its result is
//     the day's row. Its windows close with the watermark; a delta for a
//     closed day is late, and goes to the late topic.
//
// A bid costs two or three state reads and, for a new bidder or auction,
// two writes: constant work, whatever the day's sets hold.
//
// # State of the process function
//
// Per group K (the record key) and day d (days since the epoch, big-endian
// in keys):
//
//   - "g" K: the group's header (49 bytes, little-endian): version 1, the
//     newest day N, the entries of day N and of day N-1, and the retired
//     day whose entries are being deleted, with the first and end list
//     index still to delete.
//   - "e" d tag id K: a bidder (tag 'b') or auction (tag 'a') seen on day d:
//     one byte with bit r set for each rank r it was seen in.
//   - "l" d j K: the j-th entry made on day d (its tag and id), so that the
//     day's entries can be deleted without a scan.
//
// A group keeps the entries of its newest day and the day before. When a
// bid of a newer day comes, older days retire: their entries are deleted
// a few per bid (cleanupPerBid), so no bid pays for a whole day. A bid of
// a day older than the day before the group's newest cannot be counted
// (its day's entries are gone): it fails with REJECTED and goes to the
// dead-letter topic. Input that is less than a day out of order per group
// is counted exactly.
package daystats

import (
	"encoding/binary"
	"errors"

	"github.com/eddy-streams/eddy/guests/go/internal/jsonscan"
	nxevent "github.com/eddy-streams/eddy/guests/go/nx-event"
	eddy "github.com/eddy-streams/eddy/sdk/go"
)

const (
	// DayMs is a day in ms (nexmark.DayMs).
	DayMs = 86_400_000
	// MinTime and MaxTime bound the dateTimes accepted: years 0000 to 9999
	// UTC, Eddy's valid event times.
	MinTime = -62167219200000
	MaxTime = 253402300799999
	// The price ranks (nexmark.Rank2Price, nexmark.Rank3Price).
	rank2Price = 10_000
	rank3Price = 1_000_000
	// cleanupPerBid is how many entries of a retired day a bid deletes.
	cleanupPerBid = 8
)

// Rank returns the price rank of a price: 1, 2 or 3.
func Rank(price int64) int {
	switch {
	case price < rank2Price:
		return 1
	case price < rank3Price:
		return 2
	}
	return 3
}

// FloorDiv is a/b rounded down (b > 0).
func FloorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

// AppendDate appends the date of day (days since 1970-01-01, in the years
// 0000 to 9999) as yyyy-MM-dd: the proleptic Gregorian calendar, as
// Go's time package and Java's java.time count.
func AppendDate(b []byte, day int64) []byte {
	// Howard Hinnant's civil_from_days.
	z := day + 719468
	era := FloorDiv(z, 146097)
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	y := yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d := doy - (153*mp+2)/5 + 1
	m := mp + 3
	if mp >= 10 {
		m = mp - 9
		y++
	}
	b = append(b, byte('0'+y/1000), byte('0'+y/100%10), byte('0'+y/10%10), byte('0'+y%10), '-')
	b = append(b, byte('0'+m/10), byte('0'+m%10), '-')
	return append(b, byte('0'+d/10), byte('0'+d%10))
}

// AppendMinute appends the UTC time of day of t (ms since the epoch) as
// HH:mm.
func AppendMinute(b []byte, t int64) []byte {
	min := (t - FloorDiv(t, DayMs)*DayMs) / 60_000
	h, m := min/60, min%60
	return append(b, byte('0'+h/10), byte('0'+h%10), ':', byte('0'+m/10), byte('0'+m%10))
}

// AppendString appends s as a JSON string: quotes, backslashes and control
// characters escaped, other bytes as they are.
func AppendString(b, s []byte) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for _, c := range s {
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c < 0x20:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&15])
		default:
			b = append(b, c)
		}
	}
	return append(b, '"')
}

var (
	errNotBid = errors.New(`value is not a bid: no "bidder" member`)
	errTime   = errors.New(`"dateTime" is outside the years 0000 to 9999`)
	errHeader = errors.New("state: a group header that is not of version 1")
	errEntry  = errors.New("state: an entry that is not one byte")
	errList   = errors.New("state: a list entry that is not a tag and an id")
	errDelta  = errors.New("not a delta of the distinct step: 12 bytes of version 1 needed")
	errAcc    = errors.New("accumulator: not a day-statistics accumulator of version 1")
)

// header is a group's header (see the package documentation).
type header struct {
	newest    int64
	n         [2]int64 // entries of day newest, of day newest-1
	retired   int64    // the retired day being deleted
	next, end int64    // its list indexes still to delete: [next, end)
}

const headerSize = 49

func (h *header) decode(v []byte) error {
	if len(v) != headerSize || v[0] != 1 {
		return errHeader
	}
	le := binary.LittleEndian
	h.newest, h.n[0], h.n[1] = int64(le.Uint64(v[1:])), int64(le.Uint64(v[9:])), int64(le.Uint64(v[17:]))
	h.retired, h.next, h.end = int64(le.Uint64(v[25:])), int64(le.Uint64(v[33:])), int64(le.Uint64(v[41:]))
	return nil
}

func (h *header) append(b []byte) []byte {
	le := binary.LittleEndian
	b = append(b, 1)
	for _, x := range []int64{h.newest, h.n[0], h.n[1], h.retired, h.next, h.end} {
		b = le.AppendUint64(b, uint64(x))
	}
	return b
}

// Keys of the state entries, built in buffers reused for every bid.
var keyBuf, valBuf []byte

func groupKey(k []byte) []byte { keyBuf = append(append(keyBuf[:0], 'g'), k...); return keyBuf }

func entryKey(day int64, tag byte, id int64, k []byte) []byte {
	b := binary.BigEndian.AppendUint64(append(keyBuf[:0], 'e'), uint64(day))
	b = binary.BigEndian.AppendUint64(append(b, tag), uint64(id))
	keyBuf = append(b, k...)
	return keyBuf
}

func listKey(day, j int64, k []byte) []byte {
	b := binary.BigEndian.AppendUint64(append(keyBuf[:0], 'l'), uint64(day))
	keyBuf = append(binary.BigEndian.AppendUint64(b, uint64(j)), k...)
	return keyBuf
}

// deleteEntries deletes the entries of day listed at [from, to).
func deleteEntries(day, from, to int64, k []byte) error {
	for j := from; j < to; j++ {
		v, ok, err := eddy.StateGet(listKey(day, j, k))
		switch {
		case err != nil:
			return err
		case !ok:
			continue
		case len(v) != 9:
			return errList
		}
		tag, id := v[0], int64(binary.BigEndian.Uint64(v[1:]))
		if err := eddy.StateDelete(entryKey(day, tag, id, k)); err != nil {
			return err
		}
		if err := eddy.StateDelete(listKey(day, j, k)); err != nil {
			return err
		}
	}
	return nil
}

// retire makes day, with n entries, the day being deleted; a day still
// being deleted is deleted at once first.
func (h *header) retire(day, n int64, k []byte) error {
	if n == 0 {
		return nil
	}
	if h.next < h.end {
		if err := deleteEntries(h.retired, h.next, h.end, k); err != nil {
			return err
		}
	}
	h.retired, h.next, h.end = day, 0, n
	return nil
}

// see notes that a bid of rank r on day saw the bidder or auction id, at
// list index *n if it is new, and returns which counts the bid is the
// first of: bit 0 all, bit r its rank.
func see(day int64, tag byte, id int64, r int, n *int64, k []byte) (byte, error) {
	v, ok, err := eddy.StateGet(entryKey(day, tag, id, k))
	if err != nil {
		return 0, err
	}
	var mask byte
	if ok {
		if len(v) != 1 {
			return 0, errEntry
		}
		mask = v[0]
	}
	var first byte
	if !ok {
		first = 1
	}
	if mask&(1<<r) == 0 {
		first |= 1 << r
	}
	if first == 0 {
		return 0, nil
	}
	valBuf = append(valBuf[:0], mask|1<<r)
	if err := eddy.StatePut(entryKey(day, tag, id, k), valBuf); err != nil {
		return 0, err
	}
	if !ok {
		valBuf = binary.BigEndian.AppendUint64(append(valBuf[:0], tag), uint64(id))
		if err := eddy.StatePut(listKey(day, *n, k), valBuf); err != nil {
			return 0, err
		}
		*n++
	}
	return first, nil
}

var (
	ev    nxevent.Event
	delta [12]byte
	hdr   []byte
)

// Distinct is the process function of the distinct step (a map): a bid
// in, its delta out (see the package documentation).
func Distinct(r eddy.Record) (eddy.Record, error) {
	if err := ev.Parse(r.Value); err != nil {
		return r, eddy.BadInput(err)
	}
	if ev.Kind != nxevent.KindBid {
		return r, eddy.BadInput(errNotBid)
	}
	var f [4]int64
	for i, m := range []nxevent.Member{nxevent.Bidder, nxevent.Auction, nxevent.Price, nxevent.DateTime} {
		v, err := ev.Int(m)
		if err != nil {
			return r, eddy.BadInput(err)
		}
		f[i] = v
	}
	bidder, auction, price, t := f[0], f[1], f[2], f[3]
	if t < MinTime || t > MaxTime {
		return r, eddy.BadInput(errTime)
	}
	day, rank := FloorDiv(t, DayMs), Rank(price)
	k := r.Key
	var h header
	v, exists, err := eddy.StateGet(groupKey(k))
	switch {
	case err != nil:
		return r, err
	case exists:
		if err := h.decode(v); err != nil {
			return r, err
		}
	default:
		h.newest = day
	}
	old := h
	switch {
	case day < h.newest-1:
		return r, errors.New("bid of day " + string(AppendDate(nil, day)) + " is more than a day older than day " +
			string(AppendDate(nil, h.newest)) + ", its group's newest: its day's distinct bidders and auctions are deleted")
	case day == h.newest+1:
		if err := h.retire(h.newest-1, h.n[1], k); err != nil {
			return r, err
		}
		h.newest, h.n = day, [2]int64{0, h.n[0]}
	case day > h.newest+1:
		if err := h.retire(h.newest-1, h.n[1], k); err != nil {
			return r, err
		}
		if err := h.retire(h.newest, h.n[0], k); err != nil {
			return r, err
		}
		h.newest, h.n = day, [2]int64{}
	}
	if h.next < h.end {
		to := min(h.end, h.next+cleanupPerBid)
		if err := deleteEntries(h.retired, h.next, to, k); err != nil {
			return r, err
		}
		h.next = to
	}
	n := &h.n[h.newest-day]
	firstBidder, err := see(day, 'b', bidder, rank, n, k)
	if err != nil {
		return r, err
	}
	firstAuction, err := see(day, 'a', auction, rank, n, k)
	if err != nil {
		return r, err
	}
	if !exists || h != old {
		hdr = h.append(hdr[:0])
		if err := eddy.StatePut(groupKey(k), hdr); err != nil {
			return r, err
		}
	}
	delta = [12]byte{1, byte(rank), firstBidder, firstAuction}
	binary.LittleEndian.PutUint64(delta[4:], uint64(t))
	r.Value, r.Timestamp = delta[:], t
	return r, nil
}

// The accumulator (105 bytes, little-endian): version 1, the last
// dateTime (math.MinInt64 before any bid), then the bids, bidders and
// auctions, each in all and per rank.
const accSize = 1 + 8 + 12*8

// acc is a decoded accumulator: counts[0:4] the bids, [4:8] the bidders,
// [8:12] the auctions.
type acc struct {
	last   int64
	counts [12]int64
}

func (a *acc) decode(b []byte) error {
	if len(b) != accSize || b[0] != 1 {
		return errAcc
	}
	a.last = int64(binary.LittleEndian.Uint64(b[1:]))
	for i := range a.counts {
		a.counts[i] = int64(binary.LittleEndian.Uint64(b[9+8*i:]))
	}
	return nil
}

func (a *acc) encode(b []byte) []byte {
	b = binary.LittleEndian.AppendUint64(append(b[:0], 1), uint64(a.last))
	for _, c := range a.counts {
		b = binary.LittleEndian.AppendUint64(b, uint64(c))
	}
	return b
}

var empty = func() []byte { a := acc{last: -1 << 63}; return a.encode(nil) }()

// Init is the aggregate's initial accumulator.
func Init() []byte { return empty }

// Add folds a delta into the accumulator.
func Add(b []byte, r eddy.Record) ([]byte, error) {
	var a acc
	if err := a.decode(b); err != nil {
		return nil, err
	}
	d := r.Value
	if len(d) != 12 || d[0] != 1 || d[1] < 1 || d[1] > 3 || (d[2]|d[3])&^(1|1<<d[1]) != 0 {
		return nil, eddy.BadInput(errDelta)
	}
	rank := int(d[1])
	a.counts[0]++
	a.counts[rank]++
	for g, first := range []byte{d[2], d[3]} {
		if first&1 != 0 {
			a.counts[4+4*g]++
		}
		if first&(1<<rank) != 0 {
			a.counts[4+4*g+rank]++
		}
	}
	a.last = max(a.last, int64(binary.LittleEndian.Uint64(d[4:])))
	return a.encode(b), nil
}

var merged, out []byte

// Merge adds two accumulators: their deltas are of distinct bids, and the
// distinct step counted each bidder and auction once per day.
func Merge(_, x, y []byte) ([]byte, error) {
	var a, o acc
	if err := a.decode(x); err != nil {
		return nil, err
	}
	if err := o.decode(y); err != nil {
		return nil, err
	}
	a.last = max(a.last, o.last)
	for i := range a.counts {
		a.counts[i] += o.counts[i]
	}
	merged = a.encode(merged)
	return merged, nil
}

// names are the JSON names of the counters, as the Flink queries name
// their columns.
var names = [12]string{
	"total_bids", "rank1_bids", "rank2_bids", "rank3_bids",
	"total_bidders", "rank1_bidders", "rank2_bidders", "rank3_bidders",
	"total_auctions", "rank1_auctions", "rank2_auctions", "rank3_auctions",
}

// Result returns the day's row: {"day":D,"total_bids":N,...} (q15), or,
// with channel, {"channel":K,"day":D,"minute":"HH:mm",...} (q16), the
// minute of the group's last bid of the day. An accumulator without bids
// gives nothing.
func Result(key, b []byte, channel bool) ([]byte, error) {
	var a acc
	if err := a.decode(b); err != nil {
		return nil, err
	}
	if a.counts[0] == 0 {
		return nil, nil
	}
	out = append(out[:0], '{')
	if channel {
		out = AppendString(append(out, `"channel":`...), key)
		out = append(out, ',')
	}
	out = append(AppendDate(append(out, `"day":"`...), FloorDiv(a.last, DayMs)), '"')
	if channel {
		out = append(AppendMinute(append(out, `,"minute":"`...), a.last), '"')
	}
	for i, c := range a.counts {
		out = append(append(append(out, ",\""...), names[i]...), "\":"...)
		out = nxevent.AppendInt(out, c)
	}
	return append(out, '}'), nil
}

var keyBufCh []byte

// ChannelKey is q16's key function: a bid's channel, unescaped (what a
// key_by on the field channel gives, without decoding the whole value
// through encoding/json).
func ChannelKey(r eddy.Record) ([]byte, error) {
	if err := ev.Parse(r.Value); err != nil {
		return nil, eddy.BadInput(err)
	}
	if ev.Kind != nxevent.KindBid {
		return nil, eddy.BadInput(errNotBid)
	}
	tok, err := ev.Str(nxevent.Channel)
	if err != nil {
		return nil, eddy.BadInput(err)
	}
	keyBufCh = jsonscan.Unescape(keyBufCh[:0], tok[1:len(tok)-1])
	return keyBufCh, nil
}

// Register registers the module's functions under name: Distinct and the
// aggregate, whose results are q16's with channel, q15's without; with
// channel also ChannelKey.
func Register(name string, channel bool) {
	eddy.SetName(name, "1.0.0")
	if channel {
		eddy.KeyBy(ChannelKey)
	}
	eddy.Map(Distinct)
	eddy.Aggregate(eddy.Aggregator{Init: Init, Add: Add, Merge: Merge,
		Result: func(key, acc []byte) ([]byte, error) { return Result(key, acc, channel) }})
}
