// Command upper is an Eddy process function that upper-cases record values.
//
// ASCII values (the common case) are upper-cased eight bytes at a time into
// one buffer reused for every record (the SDK copies each result before the
// next call), with no allocation. A value with non-ASCII bytes takes a slow
// path that maps every rune with unicode.ToUpper, as bytes.ToUpper does
// ("straße" → "STRAßE": Go's simple case mapping has no upper case for ß);
// unlike bytes.ToUpper, invalid UTF-8 bytes are kept as they are rather than
// replaced. A null value stays null.
//
// Build (from guests/go; build.sh builds every guest):
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -ldflags="-s -w" -o ../../testdata/go/upper.wasm ./upper
package main

import (
	"encoding/binary"
	"unicode"
	"unicode/utf8"

	eddy "github.com/eddy-streams/eddy/sdk/go"
)

func init() {
	eddy.SetName("upper", "1.0.0")
	eddy.Map(upper)
}

func main() {}

// buf holds the output value; reused for every record.
var buf []byte

func upper(r eddy.Record) (eddy.Record, error) {
	s := r.Value
	if len(s) == 0 {
		return r, nil // nil stays nil, empty stays empty
	}
	if cap(buf) < len(s) {
		buf = make([]byte, 0, 2*len(s))
	}
	d := buf[:len(s)]
	if !upperASCII(d, s) {
		buf = appendUpperSlow(buf[:0], s)
		d = buf
	}
	r.Value = d
	return r, nil
}

const (
	highBits = 0x8080808080808080
	ones     = 0x0101010101010101
)

// upper8 upper-cases eight ASCII bytes held in x. For bytes below 0x80,
// adding 0x80-'a' sets the high bit of those >= 'a' and adding 0x80-'z'-1
// that of those > 'z', so the difference marks 'a'..'z'; 0x20 is the case
// bit.
func upper8(x uint64) uint64 {
	lower := (x + (0x80-'a')*ones) &^ (x + (0x80-'z'-1)*ones) & highBits
	return x ^ lower>>2
}

// upperASCII writes the upper-case form of s to d (len(d) >= len(s)) and
// reports true, or reports false if s is not all ASCII (d is then garbage).
//
// Go compiled to Wasm pays for every loop iteration, branch and call (copy
// included), so s is read and d written 32 and then 8 bytes at a time, with
// one branch per block, and the last bytes are done as one overlapping word.
func upperASCII(d, s []byte) bool {
	n := len(s)
	d = d[:n]
	i := 0
	for ; n-i >= 32; i += 32 {
		w, o := s[i:i+32:i+32], d[i:i+32:i+32]
		x0 := binary.LittleEndian.Uint64(w[0:])
		x1 := binary.LittleEndian.Uint64(w[8:])
		x2 := binary.LittleEndian.Uint64(w[16:])
		x3 := binary.LittleEndian.Uint64(w[24:])
		if (x0|x1|x2|x3)&highBits != 0 {
			return false
		}
		binary.LittleEndian.PutUint64(o[0:], upper8(x0))
		binary.LittleEndian.PutUint64(o[8:], upper8(x1))
		binary.LittleEndian.PutUint64(o[16:], upper8(x2))
		binary.LittleEndian.PutUint64(o[24:], upper8(x3))
	}
	for ; n-i >= 8; i += 8 {
		x := binary.LittleEndian.Uint64(s[i:])
		if x&highBits != 0 {
			return false
		}
		binary.LittleEndian.PutUint64(d[i:], upper8(x))
	}
	if i == n {
		return true
	}
	if n >= 8 {
		// Fewer than 8 bytes left: redo the last 8, which overlap bytes
		// already done (reading s, so doing them twice is harmless).
		x := binary.LittleEndian.Uint64(s[n-8:])
		if x&highBits != 0 {
			return false
		}
		binary.LittleEndian.PutUint64(d[n-8:], upper8(x))
		return true
	}
	for ; i < n; i++ {
		c := s[i]
		if c >= utf8.RuneSelf {
			return false
		}
		if 'a' <= c && c <= 'z' {
			c -= 'a' - 'A'
		}
		d[i] = c
	}
	return true
}

// appendUpperSlow appends the upper-case form of any s, rune by rune.
func appendUpperSlow(dst, s []byte) []byte {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if 'a' <= c && c <= 'z' {
				c -= 'a' - 'A'
			}
			dst = append(dst, c)
			i++
			continue
		}
		r, n := utf8.DecodeRune(s[i:])
		if r == utf8.RuneError && n == 1 {
			dst = append(dst, c) // keep invalid bytes
		} else {
			dst = utf8.AppendRune(dst, unicode.ToUpper(r))
		}
		i += n
	}
	return dst
}
