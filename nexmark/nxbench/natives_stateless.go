package nxbench

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"time"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/nexmark"
	"github.com/eddy-streams/eddy/runtime"
)

// statelessNatives are the functions of statelessQueries.
func statelessNatives() map[string]func() runtime.Native {
	return map[string]func() runtime.Native{
		"nx-q10": newQ10,
		"nx-q13": newQ13,
		"nx-q14": newQ14,
		"nx-q21": newQ21,
		"nx-q22": newQ22,
	}
}

// The valid event times (docs/pipeline.md): the years 0000 to 9999 UTC,
// Flink's TIMESTAMP range.
const (
	minEventTime = -62167219200000
	maxEventTime = 253402300799999
)

var errTimeRange = errors.New(`"dateTime" is outside the years 0000 to 9999`)

// bidInts reads a bid's auction, bidder, price and dateTime; ok is false
// when one is missing or not an integer.
func bidInts(doc []byte) (auction, bidder, price, at int64, ok bool) {
	a, ok1 := intField(doc, "auction")
	b, ok2 := intField(doc, "bidder")
	p, ok3 := intField(doc, "price")
	t, ok4 := intField(doc, "dateTime")
	return a, b, p, t, ok1 && ok2 && ok3 && ok4
}

// strField returns the raw JSON string (quotes included) of a top-level
// member, or false when there is none or it is not a string.
func strField(doc []byte, name string) ([]byte, bool) {
	v := field(doc, name)
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return nil, false
	}
	return v, true
}

// unquote returns the text of a raw JSON string: a view of it when it has
// no escapes, else a new slice.
func unquote(tok []byte) ([]byte, error) {
	raw := tok[1 : len(tok)-1]
	if bytes.IndexByte(raw, '\\') < 0 {
		return raw, nil
	}
	var s string
	if err := json.Unmarshal(tok, &s); err != nil {
		return nil, err
	}
	return []byte(s), nil
}

// appendJSONString appends s as a JSON string, escaping what JSON requires.
func appendJSONString(dst, s []byte) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	for _, c := range s {
		switch {
		case c == '"' || c == '\\':
			dst = append(dst, '\\', c)
		case c < 0x20:
			dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		default:
			dst = append(dst, c)
		}
	}
	return append(dst, '"')
}

// appendBidHead appends {"auction":A,"bidder":B,"price":P, the start of
// every output of these queries.
func appendBidHead(b []byte, auction, bidder, price int64) []byte {
	b = append(b, `{"auction":`...)
	b = strconv.AppendInt(b, auction, 10)
	b = append(b, `,"bidder":`...)
	b = strconv.AppendInt(b, bidder, 10)
	b = append(b, `,"price":`...)
	return strconv.AppendInt(b, price, 10)
}

// append2 appends v (0–99) as two digits.
func append2(b []byte, v int) []byte { return append(b, byte('0'+v/10), byte('0'+v%10)) }

// newQ10: a bid as {"auction","bidder","price","dateTime","extra","dt",
// "hm"}, dt its UTC day (yyyy-MM-dd) and hm its minute (HH:mm). A dateTime
// outside the years 0000–9999 is bad input.
func newQ10() runtime.Native {
	var buf []byte
	return runtime.Native{Process: func(r *abi.Record, emit func(abi.Record)) error {
		a, b, p, t, ok := bidInts(r.Value)
		extra, ok2 := strField(r.Value, "extra")
		if !ok || !ok2 {
			return runtime.BadInput(errNotBid)
		}
		if t < minEventTime || t > maxEventTime {
			return runtime.BadInput(errTimeRange)
		}
		tm := time.UnixMilli(t).UTC()
		y, mo, d := tm.Date()
		v := appendBidHead(buf[:0], a, b, p)
		v = append(v, `,"dateTime":`...)
		v = strconv.AppendInt(v, t, 10)
		v = append(v, `,"extra":`...)
		v = append(v, extra...)
		v = append(v, `,"dt":"`...)
		v = append2(append2(v, y/100), y%100)
		v = append2(append(v, '-'), int(mo))
		v = append2(append(v, '-'), d)
		v = append(v, `","hm":"`...)
		v = append2(v, tm.Hour())
		v = append2(append(v, ':'), tm.Minute())
		buf = append(v, `"}`...)
		out := *r
		out.Value = buf
		emit(out)
		return nil
	}}
}

// newQ13: the key of a bid, its auction modulo 10,000 in decimal (the
// side input's key), and the join of a bid with its side input row
// {"key":K,"value":V}: {"auction","bidder","price","dateTime","value"}, V
// as in the row (a string or null). A missing side emits nothing.
func newQ13() runtime.Native {
	var key, buf []byte
	return runtime.Native{
		Key: func(r *abi.Record) ([]byte, error) {
			a, ok := intField(r.Value, "auction")
			if !ok || field(r.Value, "bidder") == nil {
				return nil, runtime.BadInput(errNotBid)
			}
			key = strconv.AppendInt(key[:0], a%nexmark.SideInputRows, 10)
			return key, nil
		},
		Join: func(_, left, right []byte) ([]byte, error) {
			if left == nil || right == nil {
				return nil, nil
			}
			a, b, p, t, ok := bidInts(left)
			if !ok {
				return nil, runtime.BadInput(errors.New("left: not a Nexmark bid"))
			}
			v := field(right, "value")
			if v == nil || v[0] != '"' && string(v) != "null" {
				return nil, runtime.BadInput(errors.New(`right: not a side input row: no string "value"`))
			}
			out := appendBidHead(buf[:0], a, b, p)
			out = append(out, `,"dateTime":`...)
			out = strconv.AppendInt(out, t, 10)
			out = append(out, `,"value":`...)
			out = append(out, v...)
			buf = append(out, '}')
			return buf, nil
		},
	}
}

// countC counts the 'c' characters of a raw JSON string once unescaped
// (Flink's count_char(extra, 'c') counts UTF-16 units, which for an ASCII
// letter is the same), without unescaping it: the raw 'c' bytes, less the
// hex digits of \u escapes, plus the escapes \u0063. Escapes are walked
// in order, so that an escaped backslash is not taken for the start of
// one.
func countC(tok []byte) (int, error) {
	s := tok[1 : len(tok)-1]
	n := bytes.Count(s, []byte{'c'})
	for i := bytes.IndexByte(s, '\\'); i >= 0; {
		switch {
		case i+1 >= len(s):
			return 0, errors.New("a string ends in a backslash")
		case s[i+1] != 'u':
			i += 2
		case i+6 > len(s):
			return 0, errors.New(`a string ends in a short \u escape`)
		default:
			hex := s[i+2 : i+6]
			n -= bytes.Count(hex, []byte{'c'})
			if string(hex) == "0063" {
				n++
			}
			i += 6
		}
		j := bytes.IndexByte(s[min(i, len(s)):], '\\')
		if j < 0 {
			break
		}
		i += j
	}
	return n, nil
}

// newQ14: a bid whose 0.908*price is strictly between 1,000,000 and
// 50,000,000 as {"auction","bidder","price","bidTimeType","dateTime",
// "extra","c_counts"}, price the exact product with three decimals, the
// type of time of its UTC hour; other bids are dropped.
func newQ14() runtime.Native {
	var buf []byte
	return runtime.Native{Process: func(r *abi.Record, emit func(abi.Record)) error {
		a, b, p, t, ok := bidInts(r.Value)
		extra, ok2 := strField(r.Value, "extra")
		if !ok || !ok2 {
			return runtime.BadInput(errNotBid)
		}
		// Bounds on the price first: the product of a larger one would
		// overflow, and is far outside.
		if p <= 0 || p > 1<<40 || p*908 <= 1_000_000_000 || p*908 >= 50_000_000_000 {
			return nil
		}
		n, err := countC(extra)
		if err != nil {
			return runtime.BadInput(err)
		}
		kind := "otherTime"
		switch h := (t%86_400_000 + 86_400_000) % 86_400_000 / 3_600_000; {
		case h >= 8 && h <= 18:
			kind = "dayTime"
		case h <= 6 || h >= 20:
			kind = "nightTime"
		}
		v := append(buf[:0], `{"auction":`...)
		v = strconv.AppendInt(v, a, 10)
		v = append(v, `,"bidder":`...)
		v = strconv.AppendInt(v, b, 10)
		v = append(v, `,"price":`...)
		th := p * 908
		v = strconv.AppendInt(v, th/1000, 10)
		v = append(v, '.', byte('0'+th/100%10), byte('0'+th/10%10), byte('0'+th%10))
		v = append(v, `,"bidTimeType":"`...)
		v = append(v, kind...)
		v = append(v, `","dateTime":`...)
		v = strconv.AppendInt(v, t, 10)
		v = append(v, `,"extra":`...)
		v = append(v, extra...)
		v = append(v, `,"c_counts":`...)
		v = strconv.AppendInt(v, int64(n), 10)
		buf = append(v, '}')
		out := *r
		out.Value = buf
		emit(out)
		return nil
	}}
}

// hotChannels are q21's channels with a well-known ID, in ID order.
var hotChannels = [...]string{"apple", "google", "facebook", "baidu"}

// channelID is REGEXP_EXTRACT(url, '(&|^)channel_id=([^&]*)', 2): the
// text after the first "channel_id=" that starts the URL or follows an
// '&', up to the next '&'; false when there is none.
func channelID(url []byte) ([]byte, bool) {
	const name = "channel_id="
	for i := 0; ; {
		j := bytes.Index(url[i:], []byte(name))
		if j < 0 {
			return nil, false
		}
		j += i
		if j == 0 || url[j-1] == '&' {
			v := url[j+len(name):]
			if k := bytes.IndexByte(v, '&'); k >= 0 {
				v = v[:k]
			}
			return v, true
		}
		i = j + 1
	}
}

// newQ21: a bid with a channel ID as {"auction","bidder","price","channel",
// "channel_id"}: the well-known channels' (by lower-cased name, as Java
// lowers: strings.EqualFold agrees with it on these names), else the URL's
// channel_id parameter; bids with neither are dropped.
func newQ21() runtime.Native {
	var buf []byte
	return runtime.Native{Process: func(r *abi.Record, emit func(abi.Record)) error {
		a, b, p, _, ok := bidInts(r.Value)
		chTok, ok2 := strField(r.Value, "channel")
		urlTok, ok3 := strField(r.Value, "url")
		if !ok || !ok2 || !ok3 {
			return runtime.BadInput(errNotBid)
		}
		ch, err := unquote(chTok)
		if err != nil {
			return runtime.BadInput(err)
		}
		v := appendBidHead(buf[:0], a, b, p)
		v = append(v, `,"channel":`...)
		v = append(v, chTok...)
		v = append(v, `,"channel_id":`...)
		hot := -1
		for i, h := range hotChannels {
			if bytes.EqualFold(ch, []byte(h)) {
				hot = i
				break
			}
		}
		if hot >= 0 {
			v = append(v, '"', byte('0'+hot), '"')
		} else {
			url, err := unquote(urlTok)
			if err != nil {
				return runtime.BadInput(err)
			}
			id, ok := channelID(url)
			if !ok {
				return nil
			}
			v = appendJSONString(v, id)
		}
		buf = append(v, '}')
		out := *r
		out.Value = buf
		emit(out)
		return nil
	}}
}

// newQ22: a bid as {"auction","bidder","price","channel","dir1","dir2",
// "dir3"}, the directories the pieces 3, 4 and 5 (from 0) of its URL split
// at '/', null when the URL has fewer pieces (SPLIT_INDEX; an empty URL
// has none).
func newQ22() runtime.Native {
	var buf []byte
	return runtime.Native{Process: func(r *abi.Record, emit func(abi.Record)) error {
		a, b, p, _, ok := bidInts(r.Value)
		chTok, ok2 := strField(r.Value, "channel")
		urlTok, ok3 := strField(r.Value, "url")
		if !ok || !ok2 || !ok3 {
			return runtime.BadInput(errNotBid)
		}
		url, err := unquote(urlTok)
		if err != nil {
			return runtime.BadInput(err)
		}
		v := appendBidHead(buf[:0], a, b, p)
		v = append(v, `,"channel":`...)
		v = append(v, chTok...)
		// rest is what follows the piece-th '/', nil when there are fewer.
		rest, piece := url, 0
		if len(url) == 0 {
			rest = nil
		}
		for _, name := range [...]string{`,"dir1":`, `,"dir2":`, `,"dir3":`} {
			for ; rest != nil && piece < 3; piece++ {
				rest = after(rest)
			}
			v = append(v, name...)
			if rest == nil {
				v = append(v, "null"...)
				continue
			}
			dir := rest
			if k := bytes.IndexByte(dir, '/'); k >= 0 {
				dir = dir[:k]
			}
			v = appendJSONString(v, dir)
			rest = after(rest)
		}
		buf = append(v, '}')
		out := *r
		out.Value = buf
		emit(out)
		return nil
	}}
}

// after returns what follows the first '/' of s, nil if there is none.
func after(s []byte) []byte {
	k := bytes.IndexByte(s, '/')
	if k < 0 {
		return nil
	}
	return s[k+1:]
}
