package nxbench

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/runtime"
)

// Natives are the Nexmark query functions written in Go: the same
// contracts as the Wasm guests guests/go/nx-* (and the reference
// passthrough), run through the same host paths, as the baseline of the
// benchmark. They read nexmark's flat JSON events by scanning the members
// they need, as the guests do.
func Natives() map[string]func() runtime.Native {
	all := map[string]func() runtime.Native{}
	for _, m := range []map[string]func() runtime.Native{windowNatives(), statelessNatives(), reportNatives(), auctionNatives()} {
		for n, f := range m {
			all[n] = f
		}
	}
	return all
}

// windowNatives are the functions of windowQueries.
func windowNatives() map[string]func() runtime.Native {
	return map[string]func() runtime.Native{
		"passthrough": func() runtime.Native {
			return runtime.Native{Process: func(r *abi.Record, emit func(abi.Record)) error { emit(*r); return nil }}
		},
		"nx-q1":    newQ1,
		"nx-q2":    newQ2,
		"nx-count": newCount,
		"nx-q3":    newQ3,
		"nx-q5":    newQ5,
		"nx-q7":    newQ7,
		"nx-q8":    newQ8,
		"nx-one": func() runtime.Native {
			all := []byte("all")
			return runtime.Native{Key: func(*abi.Record) ([]byte, error) { return all, nil }}
		},
	}
}

var errNotBid = errors.New("not a Nexmark bid")

// field returns the raw value of a top-level member of a flat JSON object
// (strings with their quotes), or nil.
func field(doc []byte, name string) []byte {
	start, end := span(doc, name)
	if start < 0 {
		return nil
	}
	return doc[start:end]
}

// span returns where field's value is in doc, or -1, -1.
func span(doc []byte, name string) (int, int) {
	i := 0
	for i < len(doc) {
		q := bytes.IndexByte(doc[i:], '"')
		if q < 0 {
			return -1, -1
		}
		i += q + 1
		end := bytes.IndexByte(doc[i:], '"')
		if end < 0 {
			return -1, -1
		}
		key := doc[i : i+end]
		i += end + 1
		for i < len(doc) && (doc[i] == ' ' || doc[i] == ':') {
			i++
		}
		start := i
		if i < len(doc) && doc[i] == '"' {
			for i++; i < len(doc) && doc[i] != '"'; i++ {
				if doc[i] == '\\' {
					i++
				}
			}
			i++
		} else {
			for i < len(doc) && doc[i] != ',' && doc[i] != '}' {
				i++
			}
		}
		if string(key) == name {
			return start, min(i, len(doc))
		}
		for i < len(doc) && doc[i] != ',' {
			i++
		}
	}
	return -1, -1
}

func intField(doc []byte, name string) (int64, bool) {
	v := field(doc, name)
	if v == nil {
		return 0, false
	}
	n, err := strconv.ParseInt(string(v), 10, 64)
	return n, err == nil
}

// newQ1: a bid with its price in euros (price*89/100).
func newQ1() runtime.Native {
	var buf []byte
	return runtime.Native{Process: func(r *abi.Record, emit func(abi.Record)) error {
		at, end := span(r.Value, "price")
		if at < 0 {
			return runtime.BadInput(errNotBid)
		}
		p, err := strconv.ParseInt(string(r.Value[at:end]), 10, 64)
		if err != nil {
			return runtime.BadInput(errNotBid)
		}
		buf = append(buf[:0], r.Value[:at]...)
		buf = strconv.AppendInt(buf, p*89/100, 10)
		buf = append(buf, r.Value[end:]...)
		out := *r
		out.Value = buf
		emit(out)
		return nil
	}}
}

// newQ2: {"auction":A,"price":P} of a bid whose auction % 123 == 0.
func newQ2() runtime.Native {
	var buf []byte
	return runtime.Native{Process: func(r *abi.Record, emit func(abi.Record)) error {
		a, ok1 := intField(r.Value, "auction")
		p, ok2 := intField(r.Value, "price")
		if !ok1 || !ok2 {
			return runtime.BadInput(errNotBid)
		}
		if a%123 != 0 {
			return nil
		}
		buf = append(buf[:0], `{"auction":`...)
		buf = strconv.AppendInt(buf, a, 10)
		buf = append(buf, `,"price":`...)
		buf = strconv.AppendInt(buf, p, 10)
		buf = append(buf, '}')
		out := *r
		out.Value = buf
		emit(out)
		return nil
	}}
}

// newCount counts records: an 8-byte little-endian accumulator, result
// {"count":N}.
func newCount() runtime.Native {
	return runtime.Native{
		AggInit: func() []byte { return make([]byte, 8) },
		AggAdd: func(acc []byte, _ *abi.Record) ([]byte, error) {
			binary.LittleEndian.PutUint64(acc, binary.LittleEndian.Uint64(acc)+1)
			return acc, nil
		},
		AggMerge: func(_, a, b []byte) ([]byte, error) {
			return binary.LittleEndian.AppendUint64(nil, binary.LittleEndian.Uint64(a)+binary.LittleEndian.Uint64(b)), nil
		},
		AggResult: func(_, acc []byte) ([]byte, error) {
			return append(strconv.AppendUint(append([]byte(nil), `{"count":`...), binary.LittleEndian.Uint64(acc), 10), '}'), nil
		},
	}
}

// newQ3: a filter keeping auctions of category 10, and a join of an auction
// with its seller: {"name","city","state","auction"} when the seller lives
// in OR, ID or CA.
func newQ3() runtime.Native {
	return runtime.Native{
		Process: func(r *abi.Record, emit func(abi.Record)) error {
			c, ok := intField(r.Value, "category")
			if !ok {
				return runtime.BadInput(errors.New("not a Nexmark auction"))
			}
			if c == 10 {
				emit(*r)
			}
			return nil
		},
		Join: func(_, left, right []byte) ([]byte, error) {
			if left == nil || right == nil {
				return nil, nil
			}
			st := field(right, "state")
			if !slices.Contains([]string{`"OR"`, `"ID"`, `"CA"`}, string(st)) {
				return nil, nil
			}
			id := field(left, "id")
			b := append([]byte(nil), `{"name":`...)
			b = append(b, field(right, "name")...)
			b = append(b, `,"city":`...)
			b = append(b, field(right, "city")...)
			b = append(b, `,"state":`...)
			b = append(b, st...)
			b = append(b, `,"auction":`...)
			b = append(b, id...)
			return append(b, '}'), nil
		},
	}
}

// newQ7: per window, the highest price and every bid at it. The
// accumulator is the price (8 bytes) then 24 bytes per bid: auction,
// bidder, dateTime. The result is {"price":P,"bids":[{"auction":A,
// "bidder":B,"dateTime":T},…]}, bids by dateTime, auction, bidder.
func newQ7() runtime.Native {
	le := binary.LittleEndian
	return runtime.Native{
		AggInit: func() []byte { return le.AppendUint64(nil, 1<<63) }, // below any price
		AggAdd: func(acc []byte, r *abi.Record) ([]byte, error) {
			p, ok1 := intField(r.Value, "price")
			a, ok2 := intField(r.Value, "auction")
			b, ok3 := intField(r.Value, "bidder")
			t, ok4 := intField(r.Value, "dateTime")
			if !ok1 || !ok2 || !ok3 || !ok4 {
				return nil, runtime.BadInput(errNotBid)
			}
			cur := int64(le.Uint64(acc))
			switch {
			case p < cur:
				return acc, nil
			case p > cur:
				acc = le.AppendUint64(acc[:0], uint64(p))
			}
			acc = le.AppendUint64(acc, uint64(a))
			acc = le.AppendUint64(acc, uint64(b))
			return le.AppendUint64(acc, uint64(t)), nil
		},
		AggMerge: func(_, a, b []byte) ([]byte, error) {
			pa, pb := int64(le.Uint64(a)), int64(le.Uint64(b))
			switch {
			case pa > pb:
				return bytes.Clone(a), nil
			case pb > pa:
				return bytes.Clone(b), nil
			}
			return append(bytes.Clone(a), b[8:]...), nil
		},
		AggResult: func(_, acc []byte) ([]byte, error) {
			type bid struct{ a, b, t int64 }
			var bids []bid
			for i := 8; i+24 <= len(acc); i += 24 {
				bids = append(bids, bid{int64(le.Uint64(acc[i:])), int64(le.Uint64(acc[i+8:])), int64(le.Uint64(acc[i+16:]))})
			}
			if len(bids) == 0 {
				return nil, nil
			}
			slices.SortFunc(bids, func(x, y bid) int {
				switch {
				case x.t != y.t:
					return cmpInt(x.t, y.t)
				case x.a != y.a:
					return cmpInt(x.a, y.a)
				}
				return cmpInt(x.b, y.b)
			})
			out := append([]byte(nil), `{"price":`...)
			out = strconv.AppendInt(out, int64(le.Uint64(acc)), 10)
			out = append(out, `,"bids":[`...)
			for i, x := range bids {
				if i > 0 {
					out = append(out, ',')
				}
				out = append(out, `{"auction":`...)
				out = strconv.AppendInt(out, x.a, 10)
				out = append(out, `,"bidder":`...)
				out = strconv.AppendInt(out, x.b, 10)
				out = append(out, `,"dateTime":`...)
				out = strconv.AppendInt(out, x.t, 10)
				out = append(out, '}')
			}
			return append(out, "]}"...), nil
		},
	}
}

// newQ8: persons keyed by id and auctions by seller; per window, the flags
// byte (1 person, 2 auction) then the person's raw JSON name; the result
// {"person":ID,"name":NAME} when both were seen.
func newQ8() runtime.Native {
	return runtime.Native{
		Key: func(r *abi.Record) ([]byte, error) {
			if v := field(r.Value, "seller"); v != nil {
				return v, nil
			}
			if v := field(r.Value, "id"); v != nil && field(r.Value, "name") != nil {
				return v, nil
			}
			return nil, runtime.BadInput(errors.New("neither a Nexmark person nor an auction"))
		},
		AggInit: func() []byte { return []byte{0} },
		AggAdd: func(acc []byte, r *abi.Record) ([]byte, error) {
			if field(r.Value, "seller") != nil {
				acc[0] |= 2
				return acc, nil
			}
			name := field(r.Value, "name")
			if name == nil {
				return nil, runtime.BadInput(errors.New("neither a Nexmark person nor an auction"))
			}
			acc[0] |= 1
			return append(acc[:1], name...), nil
		},
		AggMerge: func(_, a, b []byte) ([]byte, error) {
			src := a
			if a[0]&1 == 0 {
				src = b
			}
			out := bytes.Clone(src)
			out[0] = a[0] | b[0]
			return out, nil
		},
		AggResult: func(key, acc []byte) ([]byte, error) {
			if acc[0] != 3 {
				return nil, nil
			}
			out := append([]byte(`{"person":`), key...)
			out = append(out, `,"name":`...)
			out = append(out, acc[1:]...)
			return append(out, '}'), nil
		},
	}
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// newQ5: the second half of q5 after nx-count, as guests/go/nx-q5: a
// process function that tags a count result with its auction and window
// ({"auction","count","start","end"}) or splits a hot-items result into
// nexmark.Q5Results, and an aggregate of tagged counts whose result is
// {"start","end","count","auctions":[…]}, the auctions with the most bids.
// The accumulator is nx-q5's: version 1, count, start, end, auctions.
func newQ5() runtime.Native {
	type acc struct {
		count, start, end int64
		auctions          []int64
	}
	decode := func(b []byte) (acc, error) {
		var a acc
		if len(b) < 25 || b[0] != 1 || (len(b)-25)%8 != 0 {
			return a, errors.New("accumulator: not an nx-q5 accumulator of version 1")
		}
		a.count, a.start, a.end = int64(binary.LittleEndian.Uint64(b[1:])), int64(binary.LittleEndian.Uint64(b[9:])), int64(binary.LittleEndian.Uint64(b[17:]))
		for p := b[25:]; len(p) > 0; p = p[8:] {
			a.auctions = append(a.auctions, int64(binary.LittleEndian.Uint64(p)))
		}
		return a, nil
	}
	encode := func(a acc) []byte {
		b := binary.LittleEndian.AppendUint64([]byte{1}, uint64(a.count))
		b = binary.LittleEndian.AppendUint64(b, uint64(a.start))
		b = binary.LittleEndian.AppendUint64(b, uint64(a.end))
		for _, x := range a.auctions {
			b = binary.LittleEndian.AppendUint64(b, uint64(x))
		}
		return b
	}
	fold := func(a *acc, o acc) {
		switch {
		case len(o.auctions) == 0 || len(a.auctions) > 0 && o.count < a.count:
		case len(a.auctions) == 0 || o.count > a.count:
			a.count, a.start, a.end, a.auctions = o.count, o.start, o.end, slices.Clone(o.auctions)
		default:
			for _, x := range o.auctions {
				if i, found := slices.BinarySearch(a.auctions, x); !found {
					a.auctions = slices.Insert(a.auctions, i, x)
				}
			}
		}
	}
	header := func(r *abi.Record, key string) (int64, bool) {
		for _, h := range r.Headers {
			if h.Key == key {
				n, err := strconv.ParseInt(string(h.Value), 10, 64)
				return n, err == nil
			}
		}
		return 0, false
	}
	return runtime.Native{
		Process: func(r *abi.Record, emit func(abi.Record)) error {
			if i := bytes.Index(r.Value, []byte(`"auctions":[`)); i >= 0 {
				start, ok1 := intField(r.Value, "start")
				end, ok2 := intField(r.Value, "end")
				n, ok3 := intField(r.Value, "count")
				list := r.Value[i+len(`"auctions":[`):]
				close := bytes.IndexByte(list, ']')
				if !ok1 || !ok2 || !ok3 || close < 0 {
					return runtime.BadInput(errors.New("not a hot-items result"))
				}
				for _, tok := range bytes.Split(list[:close], []byte{','}) {
					a, err := strconv.ParseInt(string(bytes.TrimSpace(tok)), 10, 64)
					if err != nil {
						return runtime.BadInput(errors.New("not a hot-items result"))
					}
					v := fmt.Appendf(nil, `{"Start":%d,"End":%d,"Auction":%d,"Count":%d}`, start, end, a, n)
					emit(abi.Record{Key: r.Key, Value: v, Timestamp: r.Timestamp})
				}
				return nil
			}
			n, ok1 := intField(r.Value, "count")
			start, ok2 := header(r, "eddy.window.start")
			end, ok3 := header(r, "eddy.window.end")
			auction, err := strconv.ParseInt(string(r.Key), 10, 64)
			if !ok1 || !ok2 || !ok3 || err != nil {
				return runtime.BadInput(errors.New("not a count result"))
			}
			v := fmt.Appendf(nil, `{"auction":%d,"count":%d,"start":%d,"end":%d}`, auction, n, start, end)
			emit(abi.Record{Key: r.Key, Value: v, Timestamp: r.Timestamp})
			return nil
		},
		AggInit: func() []byte { return encode(acc{}) },
		AggAdd: func(b []byte, r *abi.Record) ([]byte, error) {
			a, err := decode(b)
			if err != nil {
				return nil, err
			}
			auction, ok1 := intField(r.Value, "auction")
			n, ok2 := intField(r.Value, "count")
			start, ok3 := intField(r.Value, "start")
			end, ok4 := intField(r.Value, "end")
			if !ok1 || !ok2 || !ok3 || !ok4 {
				return nil, runtime.BadInput(errors.New("not a tagged count"))
			}
			fold(&a, acc{n, start, end, []int64{auction}})
			return encode(a), nil
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
			fold(&a, o)
			return encode(a), nil
		},
		AggResult: func(_, b []byte) ([]byte, error) {
			a, err := decode(b)
			if err != nil || len(a.auctions) == 0 {
				return nil, err
			}
			v := fmt.Appendf(nil, `{"start":%d,"end":%d,"count":%d,"auctions":[`, a.start, a.end, a.count)
			for i, x := range a.auctions {
				if i > 0 {
					v = append(v, ',')
				}
				v = strconv.AppendInt(v, x, 10)
			}
			return append(v, ']', '}'), nil
		},
	}
}
