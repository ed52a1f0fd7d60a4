package msgfield

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/vmihailenco/msgpack/v5"
	"github.com/vmihailenco/msgpack/v5/msgpcode"
)

// ErrNoJSON is wrapped by AppendJSON's error about a value that is valid
// MessagePack but has no JSON form.
var ErrNoJSON = errors.New("has no JSON form")

// timestampExt is the extension type of MessagePack's timestamps.
const timestampExt = -1

// AppendJSON appends the JSON text of raw, exactly one MessagePack value,
// to dst. The text is canonical, so that equal values have equal text
// whatever their encoding:
//
//   - integers in decimal, whatever their width or signedness;
//   - floats as encoding/json writes a float64 (a float32 as it writes a
//     float32), so 1.0 is 1, equal to the integer, and -0 is 0;
//   - maps with their members sorted by key (byte order of the key's
//     string), the last of repeated keys kept; integer keys become their
//     decimal string, as encoding/json makes them;
//   - strings as JSON strings (bytes that are not UTF-8 become U+FFFD);
//     binary values as base64 strings, as encoding/json writes []byte;
//   - timestamps (extension -1) as RFC 3339 strings in UTC with the
//     nanoseconds they have.
//
// A value with no JSON form (NaN or an infinity, another extension type, a
// map key other than a string or an integer, a timestamp outside the years
// 0000 to 9999) is an error wrapping ErrNoJSON; a value that is not valid
// MessagePack is one wrapping ErrSyntax. On error dst is returned as it
// was.
func AppendJSON(dst, raw []byte) ([]byte, error) {
	s := newScanner(raw)
	defer s.close()
	out, err := s.json(dst, 0)
	if err == nil {
		err = s.end()
	}
	if errors.Is(err, ErrNoJSON) {
		// The conversion stops at what has no JSON form; the rest of the
		// value may not be MessagePack at all, which is the error then.
		if serr := Check(raw); serr != nil {
			err = serr
		}
	}
	if err != nil {
		return dst, err
	}
	return out, nil
}

// member is a map member being converted: its key's string and the range
// of its value's JSON text in the scratch buffer.
type member struct {
	key        string
	start, end int
}

// json appends the JSON text of the value at the scanner's position.
func (s *scanner) json(dst []byte, depth int) ([]byte, error) {
	c, err := s.peek()
	if err != nil {
		return dst, err
	}
	switch {
	case isMap(c):
		if depth == maxDepth {
			return dst, fmt.Errorf("%w: nested deeper than %d maps and arrays", ErrSyntax, maxDepth)
		}
		n, err := s.mapLen()
		if err != nil {
			return dst, err
		}
		members := make([]member, 0, n)
		var vals []byte
		for range n {
			k, err := s.mapKey(depth + 1)
			if err != nil {
				return dst, err
			}
			start := len(vals)
			if vals, err = s.json(vals, depth+1); err != nil {
				return dst, err
			}
			members = append(members, member{k, start, len(vals)})
		}
		// Sorted by key, the last of repeated keys first of its run.
		slices.SortStableFunc(members, func(a, b member) int { return strings.Compare(a.key, b.key) })
		dst = append(dst, '{')
		first := true
		for i, m := range members {
			if i+1 < len(members) && members[i+1].key == m.key {
				continue
			}
			if !first {
				dst = append(dst, ',')
			}
			first = false
			dst = append(appendString(dst, m.key), ':')
			dst = append(dst, vals[m.start:m.end]...)
		}
		return append(dst, '}'), nil
	case isArray(c):
		if depth == maxDepth {
			return dst, fmt.Errorf("%w: nested deeper than %d maps and arrays", ErrSyntax, maxDepth)
		}
		n, err := s.arrayLen()
		if err != nil {
			return dst, err
		}
		dst = append(dst, '[')
		for i := range n {
			if i > 0 {
				dst = append(dst, ',')
			}
			if dst, err = s.json(dst, depth+1); err != nil {
				return dst, err
			}
		}
		return append(dst, ']'), nil
	case msgpcode.IsString(c), msgpcode.IsBin(c):
		n, err := s.d.DecodeBytesLen()
		if err != nil {
			return dst, syntax(err)
		}
		at := s.pos()
		if err := s.discard(n); err != nil {
			return dst, err
		}
		b := s.doc[at : at+n]
		if msgpcode.IsBin(c) {
			dst = append(dst, '"')
			dst = base64.StdEncoding.AppendEncode(dst, b)
			return append(dst, '"'), nil
		}
		return appendString(dst, string(b)), nil
	case msgpcode.IsExt(c):
		return s.extJSON(dst)
	case c == msgpcode.Nil:
		s.d.Skip()
		return append(dst, "null"...), nil
	case c == msgpcode.False, c == msgpcode.True:
		b, err := s.d.DecodeBool()
		if err != nil {
			return dst, syntax(err)
		}
		return strconv.AppendBool(dst, b), nil
	case c == msgpcode.Float, c == msgpcode.Double:
		var f any
		if c == msgpcode.Float {
			f32, e := s.d.DecodeFloat32()
			if f32 == 0 {
				f32 = 0 // -0 is 0
			}
			f, err = f32, e
		} else {
			f64, e := s.d.DecodeFloat64()
			if f64 == 0 {
				f64 = 0
			}
			f, err = f64, e
		}
		if err != nil {
			return dst, syntax(err)
		}
		b, err := json.Marshal(f)
		if err != nil {
			return dst, fmt.Errorf("the float %v %w", f, ErrNoJSON)
		}
		return append(dst, b...), nil
	case c == msgpcode.Uint64:
		u, err := s.d.DecodeUint64()
		if err != nil {
			return dst, syntax(err)
		}
		return strconv.AppendUint(dst, u, 10), nil
	}
	// Every other code is an integer (fixed, 8 to 64 bits) or unused.
	i, err := s.d.DecodeInt64()
	if err != nil {
		return dst, syntax(err)
	}
	return strconv.AppendInt(dst, i, 10), nil
}

// mapKey reads a map key for AppendJSON, inside depth open maps and
// arrays: a string, or an integer as its decimal string.
func (s *scanner) mapKey(depth int) (string, error) {
	c, err := s.peek()
	if err != nil {
		return "", err
	}
	switch {
	case msgpcode.IsString(c):
		n, err := s.d.DecodeBytesLen()
		if err != nil {
			return "", syntax(err)
		}
		at := s.pos()
		if err := s.discard(n); err != nil {
			return "", err
		}
		// As appendString writes it, so that keys that differ only in
		// bytes that are not UTF-8 are one key of the text.
		return validUTF8(s.doc[at : at+n]), nil
	case msgpcode.IsFixedNum(c), c >= msgpcode.Uint8 && c <= msgpcode.Int64:
		b, err := s.json(nil, depth)
		return string(b), err
	}
	return "", fmt.Errorf("a map key of code 0x%02x %w (JSON keys are strings)", c, ErrNoJSON)
}

// extJSON appends the JSON of an extension value: a timestamp's RFC 3339
// string.
func (s *scanner) extJSON(dst []byte) ([]byte, error) {
	at := s.pos()
	typ, n, err := s.d.DecodeExtHeader()
	if err != nil {
		return dst, syntax(err)
	}
	if err := s.discard(n); err != nil {
		return dst, err
	}
	if typ != timestampExt {
		return dst, fmt.Errorf("extension type %d %w", typ, ErrNoJSON)
	}
	t, err := Timestamp(s.doc[at:s.pos()])
	if err != nil {
		return dst, fmt.Errorf("extension -1 %w: %w", ErrNoJSON, err)
	}
	if y := t.Year(); y < 0 || y > 9999 {
		return dst, fmt.Errorf("a timestamp in the year %d %w (RFC 3339 has years 0000 to 9999)", y, ErrNoJSON)
	}
	dst = append(dst, '"')
	dst = t.AppendFormat(dst, time.RFC3339Nano)
	return append(dst, '"'), nil
}

// Timestamp returns the time of raw, one MessagePack timestamp (extension
// type -1, of 4, 8 or 12 bytes, fewer than 10^9 nanoseconds), in UTC.
func Timestamp(raw []byte) (time.Time, error) {
	s := newScanner(raw)
	defer s.close()
	c, err := s.peek()
	if err != nil {
		return time.Time{}, err
	}
	if !msgpcode.IsExt(c) {
		return time.Time{}, fmt.Errorf("code 0x%02x is not an extension", c)
	}
	typ, n, err := s.d.DecodeExtHeader()
	if err != nil {
		return time.Time{}, syntax(err)
	}
	if typ != timestampExt {
		return time.Time{}, fmt.Errorf("extension type %d is not a timestamp (-1)", typ)
	}
	if n != s.r.Len() {
		return time.Time{}, fmt.Errorf("%w: an extension of %d bytes in %d", ErrSyntax, n, s.r.Len())
	}
	b := raw[len(raw)-n:]
	var sec, nsec int64
	switch n {
	case 4: // seconds, unsigned 32 bits
		sec = int64(binary.BigEndian.Uint32(b))
	case 8: // nanoseconds in 30 bits, seconds in 34, unsigned
		v := binary.BigEndian.Uint64(b)
		sec, nsec = int64(v&(1<<34-1)), int64(v>>34)
	case 12: // nanoseconds, unsigned 32 bits; seconds, signed 64
		nsec, sec = int64(binary.BigEndian.Uint32(b)), int64(binary.BigEndian.Uint64(b[4:]))
	default:
		return time.Time{}, fmt.Errorf("a timestamp of %d bytes (want 4, 8 or 12)", n)
	}
	if nsec >= 1e9 {
		return time.Time{}, fmt.Errorf("a timestamp of %d nanoseconds past the second (want fewer than 10^9)", nsec)
	}
	return time.Unix(sec, nsec).UTC(), nil
}

// validUTF8 returns b as a string with each byte that is not part of UTF-8
// replaced by U+FFFD, as appendString writes it.
func validUTF8(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	var out []byte
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		if r == utf8.RuneError && n == 1 {
			out = utf8.AppendRune(out, utf8.RuneError)
		} else {
			out = append(out, b[:n]...)
		}
		b = b[n:]
	}
	return string(out)
}

// appendString appends s as a JSON string: quotes, backslashes and control
// characters escaped, bytes that are not UTF-8 replaced by U+FFFD (the
// character itself, so that the text of a string that has one is the same).
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, n := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && n == 1 {
				dst = utf8.AppendRune(dst, utf8.RuneError)
			} else {
				dst = append(dst, s[i:i+n]...)
			}
			i += n
			continue
		}
		switch {
		case c == '"' || c == '\\':
			dst = append(dst, '\\', c)
		case c == '\n':
			dst = append(dst, `\n`...)
		case c == '\r':
			dst = append(dst, `\r`...)
		case c == '\t':
			dst = append(dst, `\t`...)
		case c < 0x20:
			dst = append(dst, `\u00`...)
			dst = append(dst, "0123456789abcdef"[c>>4], "0123456789abcdef"[c&0xf])
		default:
			dst = append(dst, c)
		}
		i++
	}
	return append(dst, '"')
}

// FromJSON appends the MessagePack of doc, exactly one JSON value (white
// space around it at most), to dst:
//
//   - objects become maps, their members sorted by key (the last of
//     repeated keys kept, as encoding/json keeps it), arrays arrays,
//     strings strings, true, false and null themselves;
//   - a number written without a fraction or exponent becomes an integer
//     in the fewest bytes (an unsigned one above the int64 range), any
//     other number a float64; an integer beyond 64 bits becomes a float64,
//     rounded, and a number beyond the float64 range is an error.
//
// AppendJSON of the result is doc again, but for white space, the order of
// members, the escapes of strings and the spelling of numbers.
func FromJSON(dst, doc []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return dst, fmt.Errorf("not JSON: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return dst, errors.New("not JSON: bytes after the value")
	}
	buf := bytes.NewBuffer(dst)
	e := msgpack.GetEncoder()
	defer msgpack.PutEncoder(e)
	e.Reset(buf)
	if err := encodeJSON(e, v); err != nil {
		return dst, err
	}
	return buf.Bytes(), nil
}

// encodeJSON writes v, as encoding/json decodes it with UseNumber.
func encodeJSON(e *msgpack.Encoder, v any) error {
	switch x := v.(type) {
	case nil:
		return e.EncodeNil()
	case bool:
		return e.EncodeBool(x)
	case string:
		return e.EncodeString(x)
	case json.Number:
		if !strings.ContainsAny(string(x), ".eE") {
			if i, err := strconv.ParseInt(string(x), 10, 64); err == nil {
				return e.EncodeInt(i)
			}
			if u, err := strconv.ParseUint(string(x), 10, 64); err == nil {
				return e.EncodeUint(u)
			}
		}
		f, err := strconv.ParseFloat(string(x), 64)
		if err != nil || math.IsInf(f, 0) {
			return fmt.Errorf("the number %s is beyond the range of a float64", x)
		}
		return e.EncodeFloat64(f)
	case []any:
		if err := e.EncodeArrayLen(len(x)); err != nil {
			return err
		}
		for _, el := range x {
			if err := encodeJSON(e, el); err != nil {
				return err
			}
		}
		return nil
	case map[string]any:
		if err := e.EncodeMapLen(len(x)); err != nil {
			return err
		}
		for _, k := range slices.Sorted(maps.Keys(x)) {
			if err := e.EncodeString(k); err != nil {
				return err
			}
			if err := encodeJSON(e, x[k]); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("unexpected %T from encoding/json", v)
}
