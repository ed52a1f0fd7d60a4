// Command nx-q14 is the Flink Nexmark suite's query 14, calculation, as an
// Eddy process function for a filter step (zero or one output per input):
// a bid whose 0.908*price lies strictly between 1,000,000 and 50,000,000
// becomes
//
//	{"auction":A,"bidder":B,"price":X,"bidTimeType":K,"dateTime":T,"extra":E,"c_counts":N}
//
// and every other bid is dropped (nexmark.Q14 is the reference). X is
// 0.908*price exactly, as Flink's DECIMAL(23,3) holds it (0.908 is a
// DECIMAL literal, not a DOUBLE): a JSON number with three decimals,
// 1000000.376 for the price 1101322. K is "dayTime" for the UTC hours 8 to
// 18 of T, "nightTime" for 0 to 6 and 20 to 23, "otherTime" for 7 and 19. E
// is the bid's "extra" string as it is in the value (escapes and all), N
// the number of 'c' characters in it once unescaped (the benchmark's
// count_char(extra, 'c')). A, B and T are the bid's integers in decimal.
// The key, timestamp and headers are kept.
//
// The value must be a Nexmark bid in JSON (nexmark.AppendJSON; any member
// order and white space): an object with a "bidder" member, integer
// "auction", "bidder", "price" and "dateTime" members and a string
// "extra". Anything else fails with BAD_INPUT, selected or not.
//
// Build (from guests/go; build.sh builds every guest):
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -buildvcs=false -ldflags="-s -w" -o ../../testdata/go/nx-q14.wasm ./nx-q14
package main

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/bits"

	nxevent "github.com/eddy-streams/eddy/guests/go/nx-event"
	eddy "github.com/eddy-streams/eddy/sdk/go"
)

func init() {
	eddy.SetName("nx-q14", "1.0.0")
	eddy.FlatMap(calc)
}

func main() {}

// 0.908*price in thousandths is price*factor; it must lie strictly between
// low and high.
const (
	factor = 908
	low    = 1_000_000 * 1000
	high   = 50_000_000 * 1000
	day    = 86_400_000
	hour   = 3_600_000
)

// timeTypes are the bidTimeTypes of the hours of the day.
var timeTypes = func() (t [24]string) {
	for h := range t {
		switch {
		case h >= 8 && h <= 18:
			t[h] = "dayTime"
		case h <= 6 || h >= 20:
			t[h] = "nightTime"
		default:
			t[h] = "otherTime"
		}
	}
	return t
}()

var errNotBid = errors.New(`value is not a bid: no "bidder" member`)

var (
	ev  nxevent.Event
	buf []byte         // the output value
	out [1]eddy.Record // the output; the SDK copies both before the next record
)

func calc(r eddy.Record) ([]eddy.Record, error) {
	if err := ev.Parse(r.Value); err != nil {
		return nil, eddy.BadInput(err)
	}
	if ev.Kind != nxevent.KindBid {
		return nil, eddy.BadInput(errNotBid)
	}
	var v [4]int64
	for i, m := range [...]nxevent.Member{nxevent.Auction, nxevent.Bidder, nxevent.Price, nxevent.DateTime} {
		n, err := ev.Int(m)
		if err != nil {
			return nil, eddy.BadInput(err)
		}
		v[i] = n
	}
	extra, err := ev.Str(nxevent.Extra)
	if err != nil {
		return nil, eddy.BadInput(err)
	}
	// A price above 2^40 is far above the range, and its product could
	// overflow.
	price := v[2]
	if price <= 0 || price > 1<<40 || price*factor <= low || price*factor >= high {
		return nil, nil
	}
	p := price * factor
	t := v[3]
	ms := t % day
	if ms < 0 {
		ms += day
	}
	b := append(buf[:0], `{"auction":`...)
	b = nxevent.AppendInt(b, v[0])
	b = append(b, `,"bidder":`...)
	b = nxevent.AppendInt(b, v[1])
	b = append(b, `,"price":`...)
	b = nxevent.AppendInt(b, p/1000)
	b = append(b, '.', byte('0'+p/100%10), byte('0'+p/10%10), byte('0'+p%10))
	b = append(b, `,"bidTimeType":"`...)
	b = append(b, timeTypes[ms/hour]...)
	b = append(b, `","dateTime":`...)
	b = nxevent.AppendInt(b, t)
	b = append(b, `,"extra":`...)
	b = append(b, extra...)
	b = append(b, `,"c_counts":`...)
	b = nxevent.AppendInt(b, int64(countC(extra[1:len(extra)-1])))
	buf = append(b, '}')
	r.Value = buf
	out[0] = r
	return out[:], nil
}

// countC counts the 'c' characters of a valid JSON string's raw contents
// (between its quotes) once unescaped: the raw 'c' bytes, less those that
// are hex digits of \u escapes, plus the escapes \u0063. (No other escape
// holds or makes a 'c', and a 'c' byte is never part of a longer UTF-8
// character.) Escapes are walked in order, so that the text of an escaped
// backslash followed by "u0063" is not taken for an escape.
func countC(s []byte) int {
	n := count(s, 'c')
	for i := indexBackslash(s, 0); i >= 0; i = indexBackslash(s, i) {
		// The string is valid (Parse checked it): the escape is complete.
		if s[i+1] != 'u' {
			i += 2
			continue
		}
		h := s[i+2 : i+6 : i+6]
		w := uint64(h[0]) | uint64(h[1])<<8 | uint64(h[2])<<16 | uint64(h[3])<<24
		n -= zeros((w ^ 0x63636363) | 0xffffffff00000000) // the digits' 'c's
		if w == '0'|'0'<<8|'6'<<16|'3'<<24 {
			n++
		}
		i += 6
	}
	return n
}

// indexBackslash returns the index of the first '\\' of s at or after i,
// or -1.
func indexBackslash(s []byte, i int) int {
	if i >= len(s) {
		return -1
	}
	if j := bytes.IndexByte(s[i:], '\\'); j >= 0 {
		return i + j
	}
	return -1
}

const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
	lows  = 0x7f7f7f7f7f7f7f7f
)

// zeros counts the zero bytes of y: a byte's high bit survives
// ((y&0x7f…)+0x7f…)|y exactly when the byte is not zero, and no carry
// crosses bytes.
func zeros(y uint64) int {
	return bits.OnesCount64(^(((y &^ highs) + lows) | y) & highs)
}

// count counts the bytes c of s, eight at a time: a Go loop compiled to
// Wasm pays the host's deadline check at every iteration (see the
// nx-event package), so 32 bytes go per iteration, and the last few are
// read from the string's last word.
func count(s []byte, c byte) int {
	pat := uint64(c) * ones
	n, i := 0, 0
	for ; len(s)-i >= 32; i += 32 {
		w := s[i : i+32 : i+32]
		n += zeros(binary.LittleEndian.Uint64(w)^pat) + zeros(binary.LittleEndian.Uint64(w[8:])^pat) +
			zeros(binary.LittleEndian.Uint64(w[16:])^pat) + zeros(binary.LittleEndian.Uint64(w[24:])^pat)
	}
	for ; len(s)-i >= 8; i += 8 {
		n += zeros(binary.LittleEndian.Uint64(s[i:]) ^ pat)
	}
	switch r := len(s) - i; {
	case r == 0:
	case len(s) >= 8:
		// The last r bytes, shifted down; the zero bytes shifted in are
		// not c once xored (c is not zero).
		n += zeros(binary.LittleEndian.Uint64(s[len(s)-8:])>>(64-8*r) ^ pat)
	default:
		for _, b := range s[i:] {
			if b == c {
				n++
			}
		}
	}
	return n
}
