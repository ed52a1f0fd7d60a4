// Package msgpack provides the small msgpack subset that Eddy's guest ABI uses
// for envelopes: nil, bool, integers, str, bin, arrays and maps (abi/ABI.md,
// section 5.1).
//
// Writing is done with Append* functions that extend a byte slice, so a caller
// that reuses its buffer encodes without allocating. Reading is done with a
// Reader over a byte slice; byte and string results are views into that slice,
// not copies. Nothing here uses reflection.
package msgpack

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// Format bytes of the subset.
const (
	Nil     byte = 0xc0
	False   byte = 0xc2
	True    byte = 0xc3
	Bin8    byte = 0xc4
	Bin16   byte = 0xc5
	Bin32   byte = 0xc6
	Uint8   byte = 0xcc
	Uint16  byte = 0xcd
	Uint32  byte = 0xce
	Uint64  byte = 0xcf
	Int8    byte = 0xd0
	Int16   byte = 0xd1
	Int32   byte = 0xd2
	Int64   byte = 0xd3
	Str8    byte = 0xd9
	Str16   byte = 0xda
	Str32   byte = 0xdb
	Array16 byte = 0xdc
	Array32 byte = 0xdd
	Map16   byte = 0xde
	Map32   byte = 0xdf
)

// ErrShort is returned when the input ends inside a value.
var ErrShort = errors.New("msgpack: unexpected end of input")

// TypeError reports a value of the wrong type at an offset.
type TypeError struct {
	Offset int
	Want   string
	Got    byte
}

func (e *TypeError) Error() string {
	return fmt.Sprintf("msgpack: at byte %d: want %s, got format 0x%02x", e.Offset, e.Want, e.Got)
}

// AppendNil appends nil.
func AppendNil(b []byte) []byte { return append(b, Nil) }

// AppendBool appends a bool.
func AppendBool(b []byte, v bool) []byte {
	if v {
		return append(b, True)
	}
	return append(b, False)
}

// AppendInt appends a signed integer in its shortest form.
func AppendInt(b []byte, v int64) []byte {
	switch {
	case v >= 0:
		return AppendUint(b, uint64(v))
	case v >= -32:
		return append(b, byte(v))
	case v >= math.MinInt8:
		return append(b, Int8, byte(v))
	case v >= math.MinInt16:
		return binary.BigEndian.AppendUint16(append(b, Int16), uint16(v))
	case v >= math.MinInt32:
		return binary.BigEndian.AppendUint32(append(b, Int32), uint32(v))
	default:
		return binary.BigEndian.AppendUint64(append(b, Int64), uint64(v))
	}
}

// AppendUint appends an unsigned integer in its shortest form.
func AppendUint(b []byte, v uint64) []byte {
	switch {
	case v <= 0x7f:
		return append(b, byte(v))
	case v <= math.MaxUint8:
		return append(b, Uint8, byte(v))
	case v <= math.MaxUint16:
		return binary.BigEndian.AppendUint16(append(b, Uint16), uint16(v))
	case v <= math.MaxUint32:
		return binary.BigEndian.AppendUint32(append(b, Uint32), uint32(v))
	default:
		return binary.BigEndian.AppendUint64(append(b, Uint64), v)
	}
}

// AppendBin appends v as bin, or nil when v is nil (a nil slice is not an
// empty one: Kafka distinguishes a null key from an empty key).
func AppendBin(b []byte, v []byte) []byte {
	if v == nil {
		return append(b, Nil)
	}
	b = appendLen(b, len(v), Bin8, Bin16, Bin32)
	return append(b, v...)
}

// AppendStr appends v as str.
func AppendStr(b []byte, v string) []byte {
	if len(v) < 32 {
		b = append(b, 0xa0|byte(len(v)))
	} else {
		b = appendLen(b, len(v), Str8, Str16, Str32)
	}
	return append(b, v...)
}

func appendLen(b []byte, n int, f8, f16, f32 byte) []byte {
	switch {
	case n <= math.MaxUint8:
		return append(b, f8, byte(n))
	case n <= math.MaxUint16:
		return binary.BigEndian.AppendUint16(append(b, f16), uint16(n))
	default:
		return binary.BigEndian.AppendUint32(append(b, f32), uint32(n))
	}
}

// AppendArrayHeader appends the header of an array of n elements.
func AppendArrayHeader(b []byte, n int) []byte {
	if n < 16 {
		return append(b, 0x90|byte(n))
	}
	if n <= math.MaxUint16 {
		return binary.BigEndian.AppendUint16(append(b, Array16), uint16(n))
	}
	return binary.BigEndian.AppendUint32(append(b, Array32), uint32(n))
}

// AppendMapHeader appends the header of a map of n pairs.
func AppendMapHeader(b []byte, n int) []byte {
	if n < 16 {
		return append(b, 0x80|byte(n))
	}
	if n <= math.MaxUint16 {
		return binary.BigEndian.AppendUint16(append(b, Map16), uint16(n))
	}
	return binary.BigEndian.AppendUint32(append(b, Map32), uint32(n))
}

// Reader decodes values from a byte slice. The zero Reader is empty; Reset
// points it at a new slice. Results of Bytes and Str are views into the slice.
type Reader struct {
	buf []byte
	off int
}

// NewReader returns a Reader over b.
func NewReader(b []byte) *Reader { return &Reader{buf: b} }

// Reset points the reader at b, from its start.
func (r *Reader) Reset(b []byte) { r.buf, r.off = b, 0 }

// Offset returns the number of bytes consumed.
func (r *Reader) Offset() int { return r.off }

// Len returns the number of bytes left.
func (r *Reader) Len() int { return len(r.buf) - r.off }

// Peek returns the next format byte without consuming it.
func (r *Reader) Peek() (byte, error) {
	if r.off >= len(r.buf) {
		return 0, ErrShort
	}
	return r.buf[r.off], nil
}

// IsNil reports whether the next value is nil, without consuming it.
func (r *Reader) IsNil() bool { return r.off < len(r.buf) && r.buf[r.off] == Nil }

func (r *Reader) take(n int) ([]byte, error) {
	if n < 0 || len(r.buf)-r.off < n {
		return nil, ErrShort
	}
	b := r.buf[r.off : r.off+n : r.off+n]
	r.off += n
	return b, nil
}

func (r *Reader) lenField(size int) (int, error) {
	b, err := r.take(size)
	if err != nil {
		return 0, err
	}
	switch size {
	case 1:
		return int(b[0]), nil
	case 2:
		return int(binary.BigEndian.Uint16(b)), nil
	default:
		n := binary.BigEndian.Uint32(b)
		if uint64(n) > math.MaxInt32 {
			return 0, fmt.Errorf("msgpack: length %d too large", n)
		}
		return int(n), nil
	}
}

func (r *Reader) typeErr(want string) error {
	return &TypeError{Offset: r.off, Want: want, Got: r.buf[r.off]}
}

// Nil consumes a nil.
func (r *Reader) Nil() error {
	if r.off >= len(r.buf) {
		return ErrShort
	}
	if r.buf[r.off] != Nil {
		return r.typeErr("nil")
	}
	r.off++
	return nil
}

// Bool reads a bool.
func (r *Reader) Bool() (bool, error) {
	c, err := r.Peek()
	if err != nil {
		return false, err
	}
	switch c {
	case True:
		r.off++
		return true, nil
	case False:
		r.off++
		return false, nil
	}
	return false, r.typeErr("bool")
}

// Int reads an integer of any width as int64. A uint64 above MaxInt64 is an
// error.
func (r *Reader) Int() (int64, error) {
	c, err := r.Peek()
	if err != nil {
		return 0, err
	}
	switch {
	case c <= 0x7f:
		r.off++
		return int64(c), nil
	case c >= 0xe0:
		r.off++
		return int64(int8(c)), nil
	}
	var size int
	switch c {
	case Uint8, Int8:
		size = 1
	case Uint16, Int16:
		size = 2
	case Uint32, Int32:
		size = 4
	case Uint64, Int64:
		size = 8
	default:
		return 0, r.typeErr("int")
	}
	start := r.off
	r.off++
	b, err := r.take(size)
	if err != nil {
		r.off = start
		return 0, err
	}
	switch c {
	case Uint8:
		return int64(b[0]), nil
	case Uint16:
		return int64(binary.BigEndian.Uint16(b)), nil
	case Uint32:
		return int64(binary.BigEndian.Uint32(b)), nil
	case Uint64:
		v := binary.BigEndian.Uint64(b)
		if v > math.MaxInt64 {
			r.off = start
			return 0, fmt.Errorf("msgpack: at byte %d: uint64 %d overflows int64", start, v)
		}
		return int64(v), nil
	case Int8:
		return int64(int8(b[0])), nil
	case Int16:
		return int64(int16(binary.BigEndian.Uint16(b))), nil
	case Int32:
		return int64(int32(binary.BigEndian.Uint32(b))), nil
	default:
		return int64(binary.BigEndian.Uint64(b)), nil
	}
}

// Bytes reads bin or str and returns a view of its payload. nil reads as a nil
// slice; an empty bin or str reads as a non-nil empty slice.
func (r *Reader) Bytes() ([]byte, error) {
	c, err := r.Peek()
	if err != nil {
		return nil, err
	}
	if c == Nil {
		r.off++
		return nil, nil
	}
	return r.payload(c, "bin or str")
}

// Str reads a str (or bin) and returns it as a string (a copy).
func (r *Reader) Str() (string, error) {
	c, err := r.Peek()
	if err != nil {
		return "", err
	}
	b, err := r.payload(c, "str")
	return string(b), err
}

// StrBytes reads a str (or bin) and returns a view of its payload.
func (r *Reader) StrBytes() ([]byte, error) {
	c, err := r.Peek()
	if err != nil {
		return nil, err
	}
	return r.payload(c, "str")
}

func (r *Reader) payload(c byte, want string) ([]byte, error) {
	start := r.off
	var n int
	var err error
	switch {
	case c >= 0xa0 && c <= 0xbf:
		r.off++
		n = int(c & 0x1f)
	case c == Str8 || c == Bin8:
		r.off++
		n, err = r.lenField(1)
	case c == Str16 || c == Bin16:
		r.off++
		n, err = r.lenField(2)
	case c == Str32 || c == Bin32:
		r.off++
		n, err = r.lenField(4)
	default:
		return nil, r.typeErr(want)
	}
	if err != nil {
		r.off = start
		return nil, err
	}
	b, err := r.take(n)
	if err != nil {
		r.off = start
		return nil, err
	}
	if b == nil {
		b = []byte{}
	}
	return b, nil
}

// ArrayHeader reads an array header and returns the element count.
func (r *Reader) ArrayHeader() (int, error) {
	return r.header(0x90, Array16, Array32, "array")
}

// MapHeader reads a map header and returns the number of pairs.
func (r *Reader) MapHeader() (int, error) {
	return r.header(0x80, Map16, Map32, "map")
}

func (r *Reader) header(fix, f16, f32 byte, want string) (int, error) {
	c, err := r.Peek()
	if err != nil {
		return 0, err
	}
	start := r.off
	var n int
	switch {
	case c&0xf0 == fix:
		r.off++
		return int(c & 0x0f), nil
	case c == f16:
		r.off++
		n, err = r.lenField(2)
	case c == f32:
		r.off++
		n, err = r.lenField(4)
	default:
		return 0, r.typeErr(want)
	}
	if err != nil {
		r.off = start
		return 0, err
	}
	// Every element takes at least one byte: a count larger than what is left
	// is malformed, and rejecting it here keeps callers from allocating for it.
	if n > r.Len() {
		r.off = start
		return 0, ErrShort
	}
	return n, nil
}

// maxDepth bounds nesting in Skip so hostile input cannot exhaust the stack.
const maxDepth = 64

// Skip consumes one value of any type in the subset, including nested arrays
// and maps.
func (r *Reader) Skip() error { return r.skip(0) }

func (r *Reader) skip(depth int) error {
	if depth > maxDepth {
		return fmt.Errorf("msgpack: at byte %d: nesting deeper than %d", r.off, maxDepth)
	}
	c, err := r.Peek()
	if err != nil {
		return err
	}
	switch {
	case c == Nil || c == True || c == False:
		r.off++
		return nil
	case c <= 0x7f || c >= 0xe0 || (c >= Uint8 && c <= Uint64) || (c >= Int8 && c <= Int64):
		_, err := r.Int()
		if err != nil {
			if _, ok := err.(*TypeError); !ok && err != ErrShort {
				// uint64 overflow is still a well-formed value.
				r.off += 9
				return nil
			}
		}
		return err
	case (c >= 0xa0 && c <= 0xbf) || (c >= Str8 && c <= Str32) || (c >= Bin8 && c <= Bin32):
		_, err := r.payload(c, "")
		return err
	case c&0xf0 == 0x90 || c == Array16 || c == Array32:
		n, err := r.ArrayHeader()
		if err != nil {
			return err
		}
		for i := 0; i < n; i++ {
			if err := r.skip(depth + 1); err != nil {
				return err
			}
		}
		return nil
	case c&0xf0 == 0x80 || c == Map16 || c == Map32:
		n, err := r.MapHeader()
		if err != nil {
			return err
		}
		for i := 0; i < 2*n; i++ {
			if err := r.skip(depth + 1); err != nil {
				return err
			}
		}
		return nil
	}
	return r.typeErr("a value of the subset")
}
