// Package jsonscan provides the small, allocation-free JSON scanning the
// reference guests need: validating a document, finding one top-level member
// of an object, and recognising a number.
//
// It exists because encoding/json decodes through reflection and allocates
// per value, which costs more than the rest of a guest's per-record path. The
// scanner follows RFC 8259 as encoding/json does: the same documents are
// valid (invalid UTF-8 inside strings is accepted, as json.Valid accepts it),
// and when an object repeats a member name the last one wins, as
// json.Unmarshal does.
package jsonscan

import (
	"errors"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// MaxDepth is the deepest nesting accepted, as in encoding/json.
const MaxDepth = 10000

// ErrNotObject is returned by Field for a valid document that is not an
// object.
var ErrNotObject = errors.New("value is not a JSON object")

// ErrSyntax is returned by Field for a document that is not valid JSON.
var ErrSyntax = errors.New("value is not valid JSON")

// Valid reports whether doc is one valid JSON value, optionally surrounded by
// whitespace.
func Valid(doc []byte) bool {
	_, _, _, ok := scan(doc, "", false)
	return ok
}

// Field checks that doc is a valid JSON object (optionally surrounded by
// whitespace) and returns the raw text of the value of its top-level member
// called name, without surrounding whitespace. found is false when there is
// no such member; members of nested objects and text inside strings never
// match. If the name appears more than once, the last value is returned.
//
// The error is ErrNotObject for valid JSON that is not an object, and
// ErrSyntax for anything else that is not valid JSON.
func Field(doc []byte, name string) (value []byte, found bool, err error) {
	value, found, object, ok := scan(doc, name, true)
	switch {
	case !ok:
		return nil, false, ErrSyntax
	case !object:
		return nil, false, ErrNotObject
	}
	return value, found, nil
}

// IsNumber reports whether tok is exactly one JSON number, with no
// surrounding whitespace.
func IsNumber(tok []byte) bool {
	return skipNumber(tok, 0) == len(tok)
}

// Float returns the value of tok, one JSON number, as a float64. Numbers
// without an exponent and with at most 15 digits (42, -3.25) are converted
// directly: the digits make an integer that float64 holds exactly, and one
// division by a power of ten that it holds exactly rounds correctly, so the
// result is strconv's. Others go to strconv.ParseFloat, which costs some
// 500 ns in Go compiled to Wasm. The error is strconv's, for a number outside
// the float64 range.
func Float(tok []byte) (float64, error) {
	digits := tok
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) > 0 && len(digits) <= 16 {
		var v int64
		point := -1 // index of the decimal point
		for i, c := range digits {
			if c-'0' > 9 {
				if c != '.' || point >= 0 {
					goto slow
				}
				point = i
				continue
			}
			v = v*10 + int64(c-'0')
		}
		f := float64(v)
		switch {
		case point >= 0:
			f /= pow10[len(digits)-1-point]
		case len(digits) == 16:
			goto slow // 16 digits
		}
		if len(digits) != len(tok) {
			f = -f // -0 too, as strconv gives
		}
		return f, nil
	}
slow:
	return strconv.ParseFloat(string(tok), 64)
}

// pow10 holds the powers of ten that float64 represents exactly.
var pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
	1e11, 1e12, 1e13, 1e14, 1e15}

// Int reports whether doc is exactly a JSON integer of at most 15 digits,
// with no surrounding whitespace and other than "-0", and returns its value,
// which float64 holds exactly. It is the common case of Number and Float in
// one loop, without a call: when ok is false doc may still be a number
// (with white space, a fraction, an exponent, more digits, or -0), for them.
func Int(doc []byte) (v int64, ok bool) {
	d := doc
	if len(d) > 0 && d[0] == '-' {
		d = d[1:]
	}
	if len(d) == 0 || len(d) > 15 || d[0] == '0' && len(d) > 1 {
		return 0, false
	}
	for _, c := range d {
		if c-'0' > 9 {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	if len(d) != len(doc) {
		if v == 0 {
			return 0, false // -0 is not an int64
		}
		v = -v
	}
	return v, true
}

// Number trims JSON whitespace from doc and reports whether what is left is
// one JSON number, which it returns.
func Number(doc []byte) ([]byte, bool) {
	start := ws(doc, 0)
	end := skipNumber(doc, start)
	if end < 0 || ws(doc, end) != len(doc) {
		return nil, false
	}
	return doc[start:end], true
}

func digits(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}

func isHex4(b []byte) bool {
	for _, c := range b[:4] {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

func hex4(b []byte) rune {
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		default:
			c -= 'A' - 10
		}
		r = r<<4 | rune(c)
	}
	return r
}

// keyEquals reports whether the raw contents of a (valid) string equal name
// once unescaped. Names without escapes are compared directly.
func keyEquals(raw []byte, escaped bool, name string) bool {
	if !escaped {
		return string(raw) == name
	}
	var buf [64]byte
	return string(Unescape(buf[:0], raw)) == name
}

// Unescape appends the unescaped contents of a valid JSON string (without its
// quotes) to dst. Lone surrogates become U+FFFD, as in encoding/json.
func Unescape(dst, raw []byte) []byte {
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if c != '\\' {
			dst = append(dst, c)
			continue
		}
		i++
		switch raw[i] {
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			r := hex4(raw[i+1:])
			i += 4
			if utf16.IsSurrogate(r) {
				r2 := utf8.RuneError
				if i+6 < len(raw) && raw[i+1] == '\\' && raw[i+2] == 'u' {
					r2 = hex4(raw[i+3:])
				}
				if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
					r = dec
					i += 6
				} else {
					r = utf8.RuneError
				}
			}
			dst = utf8.AppendRune(dst, r)
		default: // '"', '\\', '/'
			dst = append(dst, raw[i])
		}
	}
	return dst
}
