package nxbench

import (
	"cmp"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/nexmark"
	"github.com/eddy-streams/eddy/runtime"
)

// auctionNatives are the functions of auctionQueries.
func auctionNatives() map[string]func() runtime.Native {
	return map[string]func() runtime.Native{
		"nx-win": newWin,
		"nx-q4":  newQ4,
		"nx-q6":  newQ6,
		"nx-q20": newQ20,
	}
}

var (
	errNoTimers      = errors.New("the step has no timers (state: true is needed)")
	errNotAuctionBid = errors.New("neither a Nexmark auction nor a bid")
	errNotWinRow     = errors.New("not a winning-bid row of nx-win")
)

// member returns the raw value of a top-level member of a flat JSON
// object, checked to be an integer (str false) or a string (str true).
func member(doc []byte, name string, str bool) ([]byte, error) {
	v := field(doc, name)
	switch {
	case v == nil:
		return nil, fmt.Errorf("no %q member", name)
	case str && (len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"'):
		return nil, fmt.Errorf("%q is not a string", name)
	case !str:
		if _, err := strconv.ParseInt(string(v), 10, 64); err != nil {
			return nil, fmt.Errorf("%q is not an integer", name)
		}
	}
	return v, nil
}

// ints returns the integer members names of doc, or a BadInput error.
func ints(doc []byte, names ...string) ([]int64, error) {
	out := make([]int64, len(names))
	for i, n := range names {
		v, err := member(doc, n, false)
		if err != nil {
			return nil, runtime.BadInput(err)
		}
		out[i], _ = strconv.ParseInt(string(v), 10, 64)
	}
	return out, nil
}

// The members nx-win copies into its rows, with whether they are strings.
var (
	auctionMembers = []struct {
		name string
		str  bool
	}{{"id", false}, {"itemName", true}, {"description", true}, {"initialBid", false}, {"reserve", false},
		{"dateTime", false}, {"expires", false}, {"seller", false}, {"category", false}, {"extra", true}}
	bidMembers = []struct {
		name, as string
		str      bool
	}{{"auction", "auction", false}, {"bidder", "bidder", false}, {"price", "price", false},
		{"dateTime", "bid_dateTime", false}, {"extra", "bid_extra", true}}
)

// winState is what nx-win keeps of an auction, under its ID in decimal:
// the auction once it has come (its JSON, open and expiry times), the best
// bid in its time so far (its JSON, price, time and bidder), and the bids
// that came before the auction (their time and JSON).
//
// Once the auction has closed, the state is only a mark that it did, which
// a timer forgets winForget later.
//
// Encoding: version 1, flags (1: auction, 2: best bid, 4: closed, with
// nothing else but a zero count of held bids); with the auction
// its open and expiry times (int64) and its JSON (uint32 length, bytes);
// with a best bid its price, time and bidder and its JSON; then the
// pending bids' count (uint32) and each bid's time and JSON. Integers are
// little-endian.
type winState struct {
	auction         []byte
	open, expires   int64
	best            []byte
	price, at, whom int64
	closed          bool
	pending         []pendingBid
}

// winForget is how long nx-win keeps the mark of a closed auction, in ms
// of event time (guests/go/nx-win's forget).
const winForget = 10_000

type pendingBid struct {
	at  int64
	doc []byte
}

const winVersion = 1

var errWinState = errors.New("state: not an nx-win state of version 1")

func (s *winState) encode() []byte {
	le := binary.LittleEndian
	flags := byte(0)
	if s.auction != nil {
		flags |= 1
	}
	if s.best != nil {
		flags |= 2
	}
	if s.closed {
		flags |= 4
	}
	b := []byte{winVersion, flags}
	bytesOf := func(b, v []byte) []byte { return append(le.AppendUint32(b, uint32(len(v))), v...) }
	if s.auction != nil {
		b = le.AppendUint64(le.AppendUint64(b, uint64(s.open)), uint64(s.expires))
		b = bytesOf(b, s.auction)
	}
	if s.best != nil {
		b = le.AppendUint64(le.AppendUint64(le.AppendUint64(b, uint64(s.price)), uint64(s.at)), uint64(s.whom))
		b = bytesOf(b, s.best)
	}
	b = le.AppendUint32(b, uint32(len(s.pending)))
	for _, p := range s.pending {
		b = bytesOf(le.AppendUint64(b, uint64(p.at)), p.doc)
	}
	return b
}

// decodeWin decodes a winState; its slices are copies.
func decodeWin(v []byte) (winState, error) {
	le := binary.LittleEndian
	var s winState
	if len(v) < 2 || v[0] != winVersion {
		return s, errWinState
	}
	flags, p := v[1], v[2:]
	bad := false
	i64 := func() int64 {
		if len(p) < 8 {
			bad = true
			return 0
		}
		x := int64(le.Uint64(p))
		p = p[8:]
		return x
	}
	u32 := func() int {
		if len(p) < 4 {
			bad = true
			return 0
		}
		x := int(le.Uint32(p))
		p = p[4:]
		return x
	}
	blob := func() []byte {
		n := u32()
		if bad || n > len(p) {
			bad = true
			return nil
		}
		x := slices.Clone(p[:n])
		p = p[n:]
		return x
	}
	if flags&1 != 0 {
		s.open, s.expires = i64(), i64()
		s.auction = blob()
	}
	if flags&2 != 0 {
		s.price, s.at, s.whom = i64(), i64(), i64()
		s.best = blob()
	}
	n := u32()
	if n > len(p)/12 { // a pending bid takes at least 12 bytes
		bad = true
	}
	for i := 0; i < n && !bad; i++ {
		at := i64()
		s.pending = append(s.pending, pendingBid{at, blob()})
	}
	s.closed = flags&4 != 0
	if bad || len(p) != 0 || flags > 7 || s.closed && (flags != 4 || n != 0) {
		return winState{}, errWinState
	}
	return s, nil
}

// offer makes bid doc (price, time, bidder) the best of s if it is in the
// auction's time and beats the best so far: a higher price, then an
// earlier time, a smaller bidder, a smaller extra (as nexmark.BeatsBid).
// It reports whether it did.
func (s *winState) offer(doc []byte, price, at, bidder int64) (bool, error) {
	if at < s.open || at > s.expires {
		return false, nil
	}
	if s.best != nil {
		c := cmp.Or(cmp.Compare(s.price, price), cmp.Compare(at, s.at), cmp.Compare(bidder, s.whom))
		if c == 0 {
			var x, y string
			if err := json.Unmarshal(field(doc, "extra"), &x); err != nil {
				return false, runtime.BadInput(fmt.Errorf("bid extra: %w", err))
			}
			if err := json.Unmarshal(field(s.best, "extra"), &y); err != nil {
				return false, fmt.Errorf("stored bid extra: %w", err)
			}
			c = cmp.Compare(x, y)
		}
		if c >= 0 {
			return false, nil
		}
	}
	s.best, s.price, s.at, s.whom = slices.Clone(doc), price, at, bidder
	return true, nil
}

// newWin is guests/go/nx-win: the winning bid of each auction (q9, and
// the first step of q4 and q6), in a stateful step with timers reading the
// auctions and the bids (co-partitioned by auction ID). It keeps per
// auction (state key: its ID in decimal) the auction and its best bid
// between the auction's dateTime and expires, both included, and holds the
// bids that come before their auction until it comes. An event-time timer
// at expires+1, when every bid of the auction's time has been seen, emits
// the row — the auction's members, then the bid's auction, bidder, price,
// bid_dateTime and bid_extra — keyed by the auction ID and stamped with
// expires, and replaces the auction by a mark that it closed (bids after
// it are dropped at once), forgotten winForget later. Held bids go when
// the watermark passes their time (a timer at their time + 1) if their
// auction has not come, and bids the watermark has passed already are not
// held: an auction that comes later opens after them.
func newWin() runtime.Native {
	return runtime.Native{
		ProcessState: func(st runtime.State, r *abi.Record, _ func(abi.Record)) error {
			ts, ok := st.(runtime.TimerState)
			if !ok {
				return errNoTimers
			}
			switch {
			case field(r.Value, "bidder") != nil:
				return winBid(ts, r.Value)
			case field(r.Value, "itemName") != nil || field(r.Value, "seller") != nil:
				return winAuction(ts, r.Value)
			}
			return runtime.BadInput(errNotAuctionBid)
		},
		OnTimer: func(st runtime.State, t abi.Timer, emit func(abi.Record)) error {
			ts, ok := st.(runtime.TimerState)
			if !ok {
				return errNoTimers
			}
			s, found, err := loadWin(st, t.Key)
			switch {
			case err != nil || !found || t.Domain != abi.EventTime:
				return err
			case s.closed:
				return st.Delete(t.Key)
			case s.auction != nil:
				if t.Time != s.expires+1 {
					return nil // a held bid's timer
				}
				if s.best != nil {
					emit(abi.Record{Key: t.Key, Value: winRow(s.auction, s.best), Timestamp: s.expires})
				}
				if err := ts.SetTimer(t.Key, abi.EventTime, s.expires+winForget); err != nil {
					return err
				}
				return st.Put(t.Key, (&winState{closed: true}).encode())
			}
			s.pending = slices.DeleteFunc(s.pending, func(p pendingBid) bool { return p.at < t.Time })
			if len(s.pending) == 0 {
				return st.Delete(t.Key)
			}
			if err := ts.SetTimer(t.Key, abi.EventTime, earliest(s.pending)+1); err != nil {
				return err
			}
			return st.Put(t.Key, s.encode())
		},
	}
}

func loadWin(st runtime.State, key []byte) (winState, bool, error) {
	v, ok, err := st.Get(key)
	if err != nil || !ok {
		return winState{}, false, err
	}
	s, err := decodeWin(v)
	return s, err == nil, err
}

func earliest(ps []pendingBid) int64 {
	at := ps[0].at
	for _, p := range ps[1:] {
		at = min(at, p.at)
	}
	return at
}

func winAuction(ts runtime.TimerState, doc []byte) error {
	for _, m := range auctionMembers {
		if _, err := member(doc, m.name, m.str); err != nil {
			return runtime.BadInput(err)
		}
	}
	v, _ := ints(doc, "id", "dateTime", "expires")
	key := strconv.AppendInt(nil, v[0], 10)
	s, _, err := loadWin(ts, key)
	if err != nil {
		return err
	}
	if s.auction != nil || s.closed {
		return nil // an ID seen before: the first auction counts
	}
	s.auction, s.open, s.expires = slices.Clone(doc), v[1], v[2]
	if len(s.pending) > 0 {
		if err := ts.DeleteTimer(key, abi.EventTime, earliest(s.pending)+1); err != nil {
			return err
		}
		for _, p := range s.pending {
			b, err := ints(p.doc, "price", "dateTime", "bidder")
			if err != nil {
				return fmt.Errorf("held bid: %w", err)
			}
			if _, err := s.offer(p.doc, b[0], b[1], b[2]); err != nil {
				return err
			}
		}
		s.pending = nil
	}
	if err := ts.SetTimer(key, abi.EventTime, s.expires+1); err != nil {
		return err
	}
	return ts.Put(key, s.encode())
}

func winBid(ts runtime.TimerState, doc []byte) error {
	for _, m := range bidMembers {
		if _, err := member(doc, m.name, m.str); err != nil {
			return runtime.BadInput(err)
		}
	}
	v, _ := ints(doc, "auction", "price", "dateTime", "bidder")
	key := strconv.AppendInt(nil, v[0], 10)
	s, _, err := loadWin(ts, key)
	if err != nil {
		return err
	}
	switch {
	case s.closed:
		return nil // later than the auction's close
	case s.auction != nil:
		better, err := s.offer(doc, v[1], v[2], v[3])
		if err != nil || !better {
			return err
		}
		return ts.Put(key, s.encode())
	case v[2] < ts.Now(abi.EventTime):
		return nil // its auction, if it comes, opens after it
	}
	if len(s.pending) == 0 || v[2] < earliest(s.pending) {
		if len(s.pending) > 0 {
			if err := ts.DeleteTimer(key, abi.EventTime, earliest(s.pending)+1); err != nil {
				return err
			}
		}
		if err := ts.SetTimer(key, abi.EventTime, v[2]+1); err != nil {
			return err
		}
	}
	s.pending = append(s.pending, pendingBid{v[2], slices.Clone(doc)})
	return ts.Put(key, s.encode())
}

// winRow is nx-win's output value: the auction's members, then the bid's,
// as their raw JSON.
func winRow(auction, bid []byte) []byte {
	b := make([]byte, 0, len(auction)+len(bid)+64)
	for i, m := range auctionMembers {
		if i == 0 {
			b = append(b, '{')
		} else {
			b = append(b, ',')
		}
		b = append(append(append(b, '"'), m.name...), '"', ':')
		b = append(b, field(auction, m.name)...)
	}
	for _, m := range bidMembers {
		b = append(append(append(b, ",\""...), m.as...), '"', ':')
		b = append(b, field(bid, m.name)...)
	}
	return append(b, '}')
}

// newQ4 is guests/go/nx-q4: q4's running average per category, in a
// stateful map step after nx-win and a key_by category. It keeps per
// category (state key: the category in decimal) the count and the sum of
// the winning prices (two little-endian int64s) and emits for each row
// {"category":C,"final":F}, F the sum divided by the count, truncated (as
// Flink's AVG of a BIGINT), keyed by the category.
func newQ4() runtime.Native {
	le := binary.LittleEndian
	return runtime.Native{
		ProcessState: func(st runtime.State, r *abi.Record, emit func(abi.Record)) error {
			if st == nil {
				return errNoTimers
			}
			v, err := ints(r.Value, "category", "price")
			if err != nil {
				return err
			}
			key := strconv.AppendInt(nil, v[0], 10)
			var n, sum int64
			switch old, ok, err := st.Get(key); {
			case err != nil:
				return err
			case ok && len(old) != 16:
				return errors.New("state: not an nx-q4 state")
			case ok:
				n, sum = int64(le.Uint64(old)), int64(le.Uint64(old[8:]))
			}
			n, sum = n+1, sum+v[1]
			if err := st.Put(key, le.AppendUint64(le.AppendUint64(nil, uint64(n)), uint64(sum))); err != nil {
				return err
			}
			out := append([]byte(`{"category":`), key...)
			out = append(strconv.AppendInt(append(out, `,"final":`...), sum/n, 10), '}')
			emit(abi.Record{Key: key, Value: out, Timestamp: r.Timestamp})
			return nil
		},
	}
}

// q6Last is how many of a seller's closed auctions q6 averages
// (nexmark.Q6Auctions).
const q6Last = nexmark.Q6Auctions

// q6Close is a closed auction q6 holds until the watermark passes it.
type q6Close struct{ expires, auction, price int64 }

// q6State is what nx-q6 keeps of a seller: the winning prices of its last
// closed auctions, oldest first, and the closes it holds. Encoding:
// version 1, the number of prices (a byte, at most q6Last), the prices,
// the number of held closes (uint32) and each close's expires, auction
// and price; integers little-endian int64s.
type q6State struct {
	prices []int64
	held   []q6Close
}

var errQ6State = errors.New("state: not an nx-q6 state of version 1")

func (s *q6State) encode() []byte {
	le := binary.LittleEndian
	b := []byte{1, byte(len(s.prices))}
	for _, p := range s.prices {
		b = le.AppendUint64(b, uint64(p))
	}
	b = le.AppendUint32(b, uint32(len(s.held)))
	for _, c := range s.held {
		b = le.AppendUint64(le.AppendUint64(le.AppendUint64(b, uint64(c.expires)), uint64(c.auction)), uint64(c.price))
	}
	return b
}

func decodeQ6(v []byte) (q6State, error) {
	le := binary.LittleEndian
	var s q6State
	if len(v) < 6 || v[0] != 1 || v[1] > q6Last || len(v) < 6+8*int(v[1]) {
		return s, errQ6State
	}
	p := v[2:]
	for range v[1] {
		s.prices = append(s.prices, int64(le.Uint64(p)))
		p = p[8:]
	}
	n := int(le.Uint32(p))
	p = p[4:]
	if len(p) != 24*n {
		return q6State{}, errQ6State
	}
	for ; len(p) > 0; p = p[24:] {
		s.held = append(s.held, q6Close{int64(le.Uint64(p)), int64(le.Uint64(p[8:])), int64(le.Uint64(p[16:]))})
	}
	return s, nil
}

// roundHalfUp is sum/n rounded to the nearest integer, halves up (Java's
// Math.round of the quotient), for n > 0.
func roundHalfUp(sum, n int64) int64 {
	num, den := 2*sum+n, 2*n
	q := num / den
	if num%den != 0 && num < 0 {
		q--
	}
	return q
}

// newQ6 is guests/go/nx-q6: q6's average selling price per seller, in a
// stateful flat_map step with timers after nx-win and a key_by seller. A
// seller's rows come from several upstream partitions in no fixed order,
// so it holds each (state key: the seller in decimal) with an event-time
// timer at its expires+1 — the rows are stamped with their expires —, and
// when the timer fires, every held row of the seller that closed before
// it goes, in closing order (expires, then auction ID), into the seller's
// last ten winning prices, and emits {"seller":S,"auction":A,
// "avg_price":P}, P their average rounded halves up (Beam's Math.round),
// keyed by the seller and stamped with expires.
func newQ6() runtime.Native {
	load := func(st runtime.State, key []byte) (q6State, error) {
		v, ok, err := st.Get(key)
		if err != nil || !ok {
			return q6State{}, err
		}
		return decodeQ6(v)
	}
	return runtime.Native{
		ProcessState: func(st runtime.State, r *abi.Record, _ func(abi.Record)) error {
			ts, ok := st.(runtime.TimerState)
			if !ok {
				return errNoTimers
			}
			v, err := ints(r.Value, "seller", "id", "price", "expires")
			if err != nil {
				return err
			}
			key := strconv.AppendInt(nil, v[0], 10)
			s, err := load(st, key)
			if err != nil {
				return err
			}
			s.held = append(s.held, q6Close{expires: v[3], auction: v[1], price: v[2]})
			if err := ts.SetTimer(key, abi.EventTime, v[3]+1); err != nil {
				return err
			}
			return st.Put(key, s.encode())
		},
		OnTimer: func(st runtime.State, t abi.Timer, emit func(abi.Record)) error {
			if t.Domain != abi.EventTime {
				return nil
			}
			s, err := load(st, t.Key)
			if err != nil {
				return err
			}
			var due []q6Close
			s.held = slices.DeleteFunc(s.held, func(c q6Close) bool {
				if c.expires < t.Time {
					due = append(due, c)
					return true
				}
				return false
			})
			if len(due) == 0 {
				return nil
			}
			slices.SortFunc(due, func(a, b q6Close) int {
				return cmp.Or(cmp.Compare(a.expires, b.expires), cmp.Compare(a.auction, b.auction))
			})
			for _, c := range due {
				if len(s.prices) == q6Last {
					s.prices = s.prices[1:]
				}
				s.prices = append(s.prices, c.price)
				var sum int64
				for _, p := range s.prices {
					sum += p
				}
				out := append([]byte(`{"seller":`), t.Key...)
				out = strconv.AppendInt(append(out, `,"auction":`...), c.auction, 10)
				out = strconv.AppendInt(append(out, `,"avg_price":`...), roundHalfUp(sum, int64(len(s.prices))), 10)
				emit(abi.Record{Key: t.Key, Value: append(out, '}'), Timestamp: c.expires})
			}
			return st.Put(t.Key, s.encode())
		},
	}
}

// The members of q20's rows: the bid's, then the auction's, each with its
// name in the row and whether it is a string.
var (
	q20Bid = []struct {
		name, as string
		str      bool
	}{{"auction", "auction", false}, {"bidder", "bidder", false}, {"price", "price", false}, {"channel", "channel", true},
		{"url", "url", true}, {"dateTime", "bid_dateTime", false}, {"extra", "bid_extra", true}}
	q20Auction = []struct {
		name, as string
		str      bool
	}{{"itemName", "itemName", true}, {"description", "description", true}, {"initialBid", "initialBid", false},
		{"reserve", "reserve", false}, {"dateTime", "auction_dateTime", false}, {"expires", "expires", false},
		{"seller", "seller", false}, {"category", "category", false}, {"extra", "auction_extra", true}}
)

// newQ20 is guests/go/nx-q20: q20's join function, for a stream-stream
// join of the bids (left) with the auctions (right). A pair whose auction
// is not of category 10 emits nothing; the others emit the row of the
// bid's members, then the auction's, named as q20's SQL names them
// (bid_dateTime, bid_extra, auction_dateTime, auction_extra).
func newQ20() runtime.Native {
	return runtime.Native{
		Join: func(_, left, right []byte) ([]byte, error) {
			if left == nil || right == nil {
				return nil, nil
			}
			c, err := member(right, "category", false)
			if err != nil {
				return nil, runtime.BadInput(fmt.Errorf("right: %w", err))
			}
			if n, _ := strconv.ParseInt(string(c), 10, 64); n != nexmark.Q20Category {
				return nil, nil
			}
			b := make([]byte, 0, len(left)+len(right)+64)
			for i, m := range q20Bid {
				v, err := member(left, m.name, m.str)
				if err != nil {
					return nil, runtime.BadInput(fmt.Errorf("left: %w", err))
				}
				if i == 0 {
					b = append(b, '{')
				} else {
					b = append(b, ',')
				}
				b = append(append(append(b, '"'), m.as...), '"', ':')
				b = append(b, v...)
			}
			for _, m := range q20Auction {
				v, err := member(right, m.name, m.str)
				if err != nil {
					return nil, runtime.BadInput(fmt.Errorf("right: %w", err))
				}
				b = append(append(append(append(b, ','), '"'), m.as...), '"', ':')
				b = append(b, v...)
			}
			return append(b, '}'), nil
		},
	}
}
