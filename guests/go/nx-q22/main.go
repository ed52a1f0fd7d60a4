// Command nx-q22 is the Flink Nexmark suite's query 22, URL directories,
// as an Eddy process function (a map): each bid becomes
//
//	{"auction":A,"bidder":B,"price":P,"channel":C,"dir1":D1,"dir2":D2,"dir3":D3}
//
// A, B and P the bid's integers in decimal, C its "channel" string as it
// is in the value (escapes and all), D1, D2 and D3 SPLIT_INDEX(url, '/',
// 3), 4 and 5: the pieces 3, 4 and 5 (from 0) of the URL split at every
// '/', empty pieces kept, as JSON strings, or null when the URL has fewer
// pieces (an empty URL has none). For
// https://www.nexmark.com/abc/de_/fgh/item.htm?query=1 they are "abc",
// "de_" and "fgh". The URL is unescaped before it is split, and a piece
// of an escaped URL is escaped again. The key, timestamp and headers are
// kept (nexmark.Q22 is the reference).
//
// The value must be a Nexmark bid in JSON (nexmark.AppendJSON; any member
// order and white space): an object with a "bidder" member, integer
// "auction", "bidder" and "price" members and string "channel" and "url"
// members. Anything else fails with BAD_INPUT.
//
// Build (from guests/go; build.sh builds every guest):
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -buildvcs=false -ldflags="-s -w" -o ../../testdata/go/nx-q22.wasm ./nx-q22
package main

import (
	"bytes"
	"errors"

	"github.com/eddy-streams/eddy/guests/go/internal/jsonscan"
	nxevent "github.com/eddy-streams/eddy/guests/go/nx-event"
	eddy "github.com/eddy-streams/eddy/sdk/go"
)

func init() {
	eddy.SetName("nx-q22", "1.0.0")
	eddy.Map(dirs)
}

func main() {}

var errNotBid = errors.New(`value is not a bid: no "bidder" member`)

var (
	ev     nxevent.Event
	buf    []byte // the output value; the SDK copies it before the next record
	urlBuf []byte // the unescaped URL, when it has escapes
	ints   = [...]nxevent.Member{nxevent.Auction, nxevent.Bidder, nxevent.Price}
	names  = [...]string{`,"dir1":`, `,"dir2":`, `,"dir3":`}
)

func dirs(r eddy.Record) (eddy.Record, error) {
	if err := ev.Parse(r.Value); err != nil {
		return r, eddy.BadInput(err)
	}
	if ev.Kind != nxevent.KindBid {
		return r, eddy.BadInput(errNotBid)
	}
	var v [3]int64
	for i, m := range ints {
		n, err := ev.Int(m)
		if err != nil {
			return r, eddy.BadInput(err)
		}
		v[i] = n
	}
	channel, err := ev.Str(nxevent.Channel)
	if err != nil {
		return r, eddy.BadInput(err)
	}
	tok, err := ev.Str(nxevent.URL)
	if err != nil {
		return r, eddy.BadInput(err)
	}
	b := append(buf[:0], `{"auction":`...)
	b = nxevent.AppendInt(b, v[0])
	b = append(b, `,"bidder":`...)
	b = nxevent.AppendInt(b, v[1])
	b = append(b, `,"price":`...)
	b = nxevent.AppendInt(b, v[2])
	b = append(b, `,"channel":`...)
	b = append(b, channel...)
	url := tok[1 : len(tok)-1]
	escaped := bytes.IndexByte(url, '\\') >= 0
	if escaped {
		// Parse checked the string: it unescapes.
		urlBuf = jsonscan.Unescape(urlBuf[:0], url)
		url = urlBuf
	}
	// piece is the rest of the URL from the start of piece number at; no
	// piece at all (nil) once the URL has run out of '/' (or is empty).
	piece, at := url, 0
	if len(url) == 0 {
		piece = nil
	}
	for ; at < 3 && piece != nil; at++ {
		piece = next(piece)
	}
	for _, name := range names {
		b = append(b, name...)
		if piece == nil {
			b = append(b, "null"...)
			continue
		}
		dir := piece
		if k := bytes.IndexByte(dir, '/'); k >= 0 {
			dir = dir[:k]
		}
		if escaped {
			b = appendString(b, dir)
		} else {
			// A piece of the raw string, which needs no escapes.
			b = append(b, '"')
			b = append(b, dir...)
			b = append(b, '"')
		}
		piece = next(piece)
	}
	buf = append(b, '}')
	r.Value = buf
	return r, nil
}

// next returns what follows the first '/' of s (maybe empty), or nil when
// s has none.
func next(s []byte) []byte {
	k := bytes.IndexByte(s, '/')
	if k < 0 {
		return nil
	}
	return s[k+1:]
}

// appendString appends s as a JSON string, escaping '"', '\\' and control
// bytes (other bytes, invalid UTF-8 included, as they are).
func appendString(b, s []byte) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for _, c := range s {
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c < 0x20:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		default:
			b = append(b, c)
		}
	}
	return append(b, '"')
}
