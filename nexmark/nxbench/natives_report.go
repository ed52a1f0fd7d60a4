package nxbench

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/nexmark"
	"github.com/eddy-streams/eddy/runtime"
)

// reportNatives are the functions of reportQueries.
func reportNatives() map[string]func() runtime.Native {
	return map[string]func() runtime.Native{
		"nx-q15": func() runtime.Native { return newDayStats(false) },
		"nx-q16": func() runtime.Native { n := newDayStats(true); n.Key = channelKey; return n },
		"nx-q17": newQ17,
		"nx-q18": newQ18,
		"nx-q19": newQ19,
	}
}

// The valid dateTimes of q15–q17: years 0000 to 9999, Eddy's event times.
const (
	reportMinTime = -62167219200000
	reportMaxTime = 253402300799999
)

// reportFloorDiv is a/b rounded down (b > 0).
func reportFloorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

// reportJSONString appends s as a JSON string: quotes, backslashes and
// control characters escaped, other bytes as they are (as nx-daystats).
func reportJSONString(b, s []byte) []byte {
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

// reportInts reads the integer members names of a bid.
func reportInts(doc []byte, names ...string) ([4]int64, error) {
	var v [4]int64
	if field(doc, "bidder") == nil {
		return v, runtime.BadInput(errNotBid)
	}
	for i, n := range names {
		x, ok := intField(doc, n)
		if !ok {
			return v, runtime.BadInput(fmt.Errorf("%q missing or not an integer", n))
		}
		v[i] = x
	}
	return v, nil
}

// reportKeyCheck fails a bid whose record key is not its auction.
func reportKeyCheck(r *abi.Record) error {
	if a := field(r.Value, "auction"); !bytes.Equal(a, r.Key) {
		return fmt.Errorf("bid of auction %s keyed %s: the bids must be keyed by their auction", a, r.Key)
	}
	return nil
}

// channelKey is nx-q16's key function: a bid's channel, unescaped.
func channelKey(r *abi.Record) ([]byte, error) {
	if field(r.Value, "bidder") == nil {
		return nil, runtime.BadInput(errNotBid)
	}
	tok := field(r.Value, "channel")
	if len(tok) < 2 || tok[0] != '"' {
		return nil, runtime.BadInput(errors.New(`"channel" is not a string`))
	}
	if bytes.IndexByte(tok, '\\') < 0 {
		return tok[1 : len(tok)-1], nil
	}
	var ch string
	if err := json.Unmarshal(tok, &ch); err != nil {
		return nil, runtime.BadInput(err)
	}
	return []byte(ch), nil
}

// newDayStats is guests/go/nx-daystats (nx-q15, and nx-q16 with channel):
// the distinct step, a map with keyed state turning a bid into a 12-byte
// delta, and the aggregate summing deltas into a day's row. The state and
// the accumulator are nx-daystats' (see its documentation).
func newDayStats(channel bool) runtime.Native {
	le, be := binary.LittleEndian, binary.BigEndian
	type header struct {
		newest, n0, n1, retired, next, end int64
	}
	var kb, vb []byte
	groupKey := func(k []byte) []byte { kb = append(append(kb[:0], 'g'), k...); return kb }
	entryKey := func(day int64, tag byte, id int64, k []byte) []byte {
		kb = be.AppendUint64(append(be.AppendUint64(append(kb[:0], 'e'), uint64(day)), tag), uint64(id))
		kb = append(kb, k...)
		return kb
	}
	listKey := func(day, j int64, k []byte) []byte {
		kb = append(be.AppendUint64(be.AppendUint64(append(kb[:0], 'l'), uint64(day)), uint64(j)), k...)
		return kb
	}
	deleteEntries := func(st runtime.State, day, from, to int64, k []byte) error {
		for j := from; j < to; j++ {
			v, ok, err := st.Get(listKey(day, j, k))
			switch {
			case err != nil:
				return err
			case !ok:
				continue
			case len(v) != 9:
				return errors.New("state: a list entry that is not a tag and an id")
			}
			tag, id := v[0], int64(be.Uint64(v[1:]))
			if err := st.Delete(entryKey(day, tag, id, k)); err != nil {
				return err
			}
			if err := st.Delete(listKey(day, j, k)); err != nil {
				return err
			}
		}
		return nil
	}
	retire := func(st runtime.State, h *header, day, n int64, k []byte) error {
		if n == 0 {
			return nil
		}
		if h.next < h.end {
			if err := deleteEntries(st, h.retired, h.next, h.end, k); err != nil {
				return err
			}
		}
		h.retired, h.next, h.end = day, 0, n
		return nil
	}
	see := func(st runtime.State, day int64, tag byte, id int64, r int, n *int64, k []byte) (byte, error) {
		v, ok, err := st.Get(entryKey(day, tag, id, k))
		if err != nil {
			return 0, err
		}
		var mask, first byte
		if ok {
			if len(v) != 1 {
				return 0, errors.New("state: an entry that is not one byte")
			}
			mask = v[0]
		} else {
			first = 1
		}
		if mask&(1<<r) == 0 {
			first |= 1 << r
		}
		if first == 0 {
			return 0, nil
		}
		vb = append(vb[:0], mask|1<<r)
		if err := st.Put(entryKey(day, tag, id, k), vb); err != nil {
			return 0, err
		}
		if !ok {
			vb = be.AppendUint64(append(vb[:0], tag), uint64(id))
			if err := st.Put(listKey(day, *n, k), vb); err != nil {
				return 0, err
			}
			*n++
		}
		return first, nil
	}
	var delta [12]byte
	var hb []byte
	distinct := func(st runtime.State, r *abi.Record, emit func(abi.Record)) error {
		f, err := reportInts(r.Value, "bidder", "auction", "price", "dateTime")
		if err != nil {
			return err
		}
		bidder, auction, price, t := f[0], f[1], f[2], f[3]
		if t < reportMinTime || t > reportMaxTime {
			return runtime.BadInput(errors.New(`"dateTime" is outside the years 0000 to 9999`))
		}
		day, rank := reportFloorDiv(t, nexmark.DayMs), nexmark.PriceRank(price)
		k := r.Key
		var h header
		v, exists, err := st.Get(groupKey(k))
		switch {
		case err != nil:
			return err
		case exists:
			if len(v) != 49 || v[0] != 1 {
				return errors.New("state: a group header that is not of version 1")
			}
			h = header{int64(le.Uint64(v[1:])), int64(le.Uint64(v[9:])), int64(le.Uint64(v[17:])),
				int64(le.Uint64(v[25:])), int64(le.Uint64(v[33:])), int64(le.Uint64(v[41:]))}
		default:
			h.newest = day
		}
		old := h
		switch {
		case day < h.newest-1:
			return fmt.Errorf("bid of day %s is more than a day older than day %s, its group's newest: its day's distinct bidders and auctions are deleted",
				nexmark.Day(day*nexmark.DayMs), nexmark.Day(h.newest*nexmark.DayMs))
		case day == h.newest+1:
			if err := retire(st, &h, h.newest-1, h.n1, k); err != nil {
				return err
			}
			h.newest, h.n0, h.n1 = day, 0, h.n0
		case day > h.newest+1:
			if err := retire(st, &h, h.newest-1, h.n1, k); err != nil {
				return err
			}
			if err := retire(st, &h, h.newest, h.n0, k); err != nil {
				return err
			}
			h.newest, h.n0, h.n1 = day, 0, 0
		}
		if h.next < h.end {
			to := min(h.end, h.next+8)
			if err := deleteEntries(st, h.retired, h.next, to, k); err != nil {
				return err
			}
			h.next = to
		}
		n := &h.n0
		if day != h.newest {
			n = &h.n1
		}
		firstBidder, err := see(st, day, 'b', bidder, rank, n, k)
		if err != nil {
			return err
		}
		firstAuction, err := see(st, day, 'a', auction, rank, n, k)
		if err != nil {
			return err
		}
		if !exists || h != old {
			hb = append(hb[:0], 1)
			for _, x := range []int64{h.newest, h.n0, h.n1, h.retired, h.next, h.end} {
				hb = le.AppendUint64(hb, uint64(x))
			}
			if err := st.Put(groupKey(k), hb); err != nil {
				return err
			}
		}
		delta = [12]byte{1, byte(rank), firstBidder, firstAuction}
		le.PutUint64(delta[4:], uint64(t))
		emit(abi.Record{Key: r.Key, Value: delta[:], Timestamp: t, Headers: r.Headers})
		return nil
	}

	// The accumulator: version 1, the last dateTime, 12 counters.
	const accSize = 1 + 8 + 12*8
	errAcc := errors.New("accumulator: not a day-statistics accumulator of version 1")
	type acc struct {
		last   int64
		counts [12]int64
	}
	decode := func(b []byte) (acc, error) {
		var a acc
		if len(b) != accSize || b[0] != 1 {
			return a, errAcc
		}
		a.last = int64(le.Uint64(b[1:]))
		for i := range a.counts {
			a.counts[i] = int64(le.Uint64(b[9+8*i:]))
		}
		return a, nil
	}
	encode := func(b []byte, a acc) []byte {
		b = le.AppendUint64(append(b[:0], 1), uint64(a.last))
		for _, c := range a.counts {
			b = le.AppendUint64(b, uint64(c))
		}
		return b
	}
	names := [12]string{
		"total_bids", "rank1_bids", "rank2_bids", "rank3_bids",
		"total_bidders", "rank1_bidders", "rank2_bidders", "rank3_bidders",
		"total_auctions", "rank1_auctions", "rank2_auctions", "rank3_auctions",
	}
	var out []byte
	return runtime.Native{
		ProcessState: distinct,
		AggInit:      func() []byte { return encode(nil, acc{last: -1 << 63}) },
		AggAdd: func(b []byte, r *abi.Record) ([]byte, error) {
			a, err := decode(b)
			if err != nil {
				return nil, err
			}
			d := r.Value
			if len(d) != 12 || d[0] != 1 || d[1] < 1 || d[1] > 3 || (d[2]|d[3])&^(1|1<<d[1]) != 0 {
				return nil, runtime.BadInput(errors.New("not a delta of the distinct step: 12 bytes of version 1 needed"))
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
			a.last = max(a.last, int64(le.Uint64(d[4:])))
			return encode(b, a), nil
		},
		AggMerge: func(_, x, y []byte) ([]byte, error) {
			a, err := decode(x)
			if err != nil {
				return nil, err
			}
			o, err := decode(y)
			if err != nil {
				return nil, err
			}
			a.last = max(a.last, o.last)
			for i := range a.counts {
				a.counts[i] += o.counts[i]
			}
			return encode(nil, a), nil
		},
		AggResult: func(key, b []byte) ([]byte, error) {
			a, err := decode(b)
			if err != nil || a.counts[0] == 0 {
				return nil, err
			}
			tm := time.UnixMilli(a.last).UTC()
			out = append(out[:0], '{')
			if channel {
				out = reportJSONString(append(out, `"channel":`...), key)
				out = append(out, ',')
			}
			out = append(tm.AppendFormat(append(out, `"day":"`...), time.DateOnly), '"')
			if channel {
				out = append(tm.AppendFormat(append(out, `,"minute":"`...), "15:04"), '"')
			}
			for i, c := range a.counts {
				out = strconv.AppendInt(append(append(append(out, ",\""...), names[i]...), "\":"...), c, 10)
			}
			return append(out, '}'), nil
		},
	}
}

// newQ17 is guests/go/nx-q17: per auction and day (a tumbling window of a
// day on the bids keyed by auction), the bids in all and per rank and the
// least, greatest, average and total price. The accumulator is nx-q17's.
func newQ17() runtime.Native {
	le := binary.LittleEndian
	const accSize = 1 + 9*8
	type acc struct {
		auction, day     int64
		bids             [4]int64
		minP, maxP, sumP int64
	}
	errAcc := errors.New("accumulator: not an nx-q17 accumulator of version 1")
	decode := func(b []byte) (acc, error) {
		var a acc
		if len(b) != accSize || b[0] != 1 {
			return a, errAcc
		}
		a.auction, a.day = int64(le.Uint64(b[1:])), int64(le.Uint64(b[9:]))
		for i := range a.bids {
			a.bids[i] = int64(le.Uint64(b[17+8*i:]))
		}
		a.minP, a.maxP, a.sumP = int64(le.Uint64(b[49:])), int64(le.Uint64(b[57:])), int64(le.Uint64(b[65:]))
		return a, nil
	}
	encode := func(b []byte, a acc) []byte {
		b = append(b[:0], 1)
		for _, x := range []int64{a.auction, a.day, a.bids[0], a.bids[1], a.bids[2], a.bids[3], a.minP, a.maxP, a.sumP} {
			b = le.AppendUint64(b, uint64(x))
		}
		return b
	}
	join := func(a *acc, o acc) error {
		switch {
		case o.bids[0] == 0:
			return nil
		case a.bids[0] == 0:
			*a = o
			return nil
		case o.auction != a.auction:
			return runtime.BadInput(fmt.Errorf("bids of auction %d and %d under one key: q17 needs the bids keyed by auction", o.auction, a.auction))
		case o.day != a.day:
			return runtime.BadInput(fmt.Errorf("bids of days %s and %s in one window: a bid's timestamp and dateTime are on different days",
				nexmark.Day(o.day*nexmark.DayMs), nexmark.Day(a.day*nexmark.DayMs)))
		}
		for i := range a.bids {
			a.bids[i] += o.bids[i]
		}
		a.minP, a.maxP, a.sumP = min(a.minP, o.minP), max(a.maxP, o.maxP), a.sumP+o.sumP
		return nil
	}
	var out []byte
	return runtime.Native{
		AggInit: func() []byte { return encode(nil, acc{}) },
		AggAdd: func(b []byte, r *abi.Record) ([]byte, error) {
			a, err := decode(b)
			if err != nil {
				return nil, err
			}
			f, err := reportInts(r.Value, "auction", "price", "dateTime")
			if err != nil {
				return nil, err
			}
			if f[2] < reportMinTime || f[2] > reportMaxTime {
				return nil, runtime.BadInput(errors.New(`"dateTime" is outside the years 0000 to 9999`))
			}
			one := acc{auction: f[0], day: reportFloorDiv(f[2], nexmark.DayMs), minP: f[1], maxP: f[1], sumP: f[1]}
			one.bids[0], one.bids[nexmark.PriceRank(f[1])] = 1, 1
			if err := join(&a, one); err != nil {
				return nil, err
			}
			return encode(b, a), nil
		},
		AggMerge: func(_, x, y []byte) ([]byte, error) {
			a, err := decode(x)
			if err != nil {
				return nil, err
			}
			o, err := decode(y)
			if err != nil {
				return nil, err
			}
			if err := join(&a, o); err != nil {
				return nil, err
			}
			return encode(nil, a), nil
		},
		AggResult: func(_, b []byte) ([]byte, error) {
			a, err := decode(b)
			if err != nil || a.bids[0] == 0 {
				return nil, err
			}
			out = strconv.AppendInt(append(out[:0], `{"auction":`...), a.auction, 10)
			out = append(time.UnixMilli(a.day*nexmark.DayMs).UTC().AppendFormat(append(out, `,"day":"`...), time.DateOnly), '"')
			for i, name := range []string{`,"total_bids":`, `,"rank1_bids":`, `,"rank2_bids":`, `,"rank3_bids":`} {
				out = strconv.AppendInt(append(out, name...), a.bids[i], 10)
			}
			out = strconv.AppendInt(append(out, `,"min_price":`...), a.minP, 10)
			out = strconv.AppendInt(append(out, `,"max_price":`...), a.maxP, 10)
			out = strconv.AppendInt(append(out, `,"avg_price":`...), a.sumP/a.bids[0], 10)
			out = strconv.AppendInt(append(out, `,"sum_price":`...), a.sumP, 10)
			return append(out, '}'), nil
		},
	}
}

// newQ18 is guests/go/nx-q18: per bidder and auction (state key: the bidder
// as 8 big-endian bytes, then the record key), the dateTime of the last
// bid passed on; a bid at least as late is passed on, keyed
// "<auction>/<bidder>".
func newQ18() runtime.Native {
	var key, val, outKey []byte
	return runtime.Native{ProcessState: func(st runtime.State, r *abi.Record, emit func(abi.Record)) error {
		f, err := reportInts(r.Value, "auction", "bidder", "dateTime")
		if err != nil {
			return err
		}
		if err := reportKeyCheck(r); err != nil {
			return err
		}
		bidder, t := f[1], f[2]
		key = append(binary.BigEndian.AppendUint64(key[:0], uint64(bidder)), r.Key...)
		v, ok, err := st.Get(key)
		switch {
		case err != nil:
			return err
		case ok && len(v) != 8:
			return errors.New("state: a stored dateTime that is not 8 bytes")
		case ok && int64(binary.LittleEndian.Uint64(v)) > t:
			return nil
		}
		val = binary.LittleEndian.AppendUint64(val[:0], uint64(t))
		if err := st.Put(key, val); err != nil {
			return err
		}
		outKey = strconv.AppendInt(append(append(outKey[:0], r.Key...), '/'), bidder, 10)
		emit(abi.Record{Key: outKey, Value: r.Value, Timestamp: r.Timestamp})
		return nil
	}}
}

// newQ19 is guests/go/nx-q19: per auction, the top nexmark.Q19Top bids in
// nexmark.Q19Order ("h" K: their order keys; "l" K: their JSON); a bid that
// enters emits the rows of every rank it changed, keyed "<auction>/<rank>",
// the bid's JSON with "rank_number" added.
func newQ19() runtime.Native {
	const top = nexmark.Q19Top
	le := binary.LittleEndian
	type entry struct{ price, t, bidder int64 }
	before := func(a, b entry) bool {
		switch {
		case a.price != b.price:
			return a.price > b.price
		case a.t != b.t:
			return a.t < b.t
		}
		return a.bidder < b.bidder
	}
	errList := errors.New("state: a list of ranked bids that does not match its header")
	var hkey, lkey, hbuf, lbuf, row, rowKey []byte
	var entries [top + 1]entry
	var bids [top + 1][]byte
	return runtime.Native{ProcessState: func(st runtime.State, r *abi.Record, emit func(abi.Record)) error {
		f, err := reportInts(r.Value, "auction", "price", "dateTime", "bidder")
		if err != nil {
			return err
		}
		if err := reportKeyCheck(r); err != nil {
			return err
		}
		e := entry{f[1], f[2], f[3]}
		hkey = append(append(hkey[:0], 'h'), r.Key...)
		h, ok, err := st.Get(hkey)
		if err != nil {
			return err
		}
		n := 0
		if ok {
			if len(h) == 0 || int(h[0]) > top || len(h) != 1+24*int(h[0]) {
				return errors.New("state: a ranking header of the wrong size")
			}
			n = int(h[0])
		}
		at := n
		for i := range n {
			p := h[1+24*i:]
			entries[i] = entry{int64(le.Uint64(p)), int64(le.Uint64(p[8:])), int64(le.Uint64(p[16:]))}
			if at == n && before(e, entries[i]) {
				at = i
			}
		}
		if at == top {
			return nil
		}
		lkey = append(append(lkey[:0], 'l'), r.Key...)
		l, _, err := st.Get(lkey)
		if err != nil {
			return err
		}
		for i := range n {
			if len(l) < 4 || uint64(len(l)-4) < uint64(le.Uint32(l)) {
				return errList
			}
			size := int(le.Uint32(l))
			bids[i], l = l[4:4+size], l[4+size:]
		}
		if len(l) != 0 {
			return errList
		}
		copy(entries[at+1:n+1], entries[at:n])
		copy(bids[at+1:n+1], bids[at:n])
		entries[at], bids[at] = e, r.Value
		n = min(n+1, top)
		hbuf = append(hbuf[:0], byte(n))
		lbuf = lbuf[:0]
		for i := range n {
			hbuf = le.AppendUint64(le.AppendUint64(le.AppendUint64(hbuf, uint64(entries[i].price)), uint64(entries[i].t)), uint64(entries[i].bidder))
			lbuf = append(le.AppendUint32(lbuf, uint32(len(bids[i]))), bids[i]...)
		}
		// The rows first: bids[] are views into the list st.Get returned,
		// valid until the next call on st.
		for i := at; i < n; i++ {
			b := bids[i]
			end := bytes.LastIndexByte(b, '}')
			if end < 0 {
				return errList
			}
			row = append(strconv.AppendInt(append(append(row[:0], b[:end]...), `,"rank_number":`...), int64(i+1), 10), '}')
			rowKey = strconv.AppendInt(append(append(rowKey[:0], r.Key...), '/'), int64(i+1), 10)
			emit(abi.Record{Key: rowKey, Value: row, Timestamp: r.Timestamp})
		}
		if err := st.Put(hkey, hbuf); err != nil {
			return err
		}
		return st.Put(lkey, lbuf)
	}}
}
