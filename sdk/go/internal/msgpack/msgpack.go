// Package msgpack provides the msgpack subset of the Eddy guest ABI
// (abi/ABI.md, section 5.1) for the Go guest SDK: nil, bool, integers of every
// width, str, bin, arrays and maps.
//
// It is a separate, dependency-free copy of the host's codec because the SDK
// is its own zero-dependency module and cannot import the host.
//
// Writing is done with Append* functions that extend a caller's slice in the
// shortest form; a caller that reuses its buffer encodes without allocating.
// Reading is done with a Reader whose byte results are views into the input,
// not copies. The Reader keeps the first error ("sticky"): after an error every
// method returns a zero value and consumes nothing, so a decoder can read a
// whole structure and check Err once.
package msgpack

import (
	"errors"
	"math"
	"strconv"
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

// MaxDepth bounds the nesting Skip accepts, so hostile input cannot exhaust
// the stack.
const MaxDepth = 64

// ErrShort is the error when the input ends inside a value, or when an array
// or map announces more elements than there are bytes left.
var ErrShort = errors.New("msgpack: unexpected end of input")

// Error reports a value that is not what the decoder wanted.
type Error struct {
	Offset int    // byte offset of the offending value
	Want   string // what the decoder expected
	Got    byte   // the format byte found
}

// Error implements error.
func (e *Error) Error() string {
	return "msgpack: at byte " + strconv.Itoa(e.Offset) + ": want " + e.Want +
		", got format 0x" + strconv.FormatUint(uint64(e.Got), 16)
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

// AppendInt appends a signed integer in its shortest form. Non-negative values
// use the unsigned formats, as msgpack recommends.
func AppendInt(b []byte, v int64) []byte {
	switch {
	case v >= 0:
		return AppendUint(b, uint64(v))
	case v >= -32:
		return append(b, byte(v))
	case v >= math.MinInt8:
		return append(b, Int8, byte(v))
	case v >= math.MinInt16:
		return append(b, Int16, byte(v>>8), byte(v))
	case v >= math.MinInt32:
		return append(b, Int32, byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
	default:
		return appendBE64(append(b, Int64), uint64(v))
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
		return append(b, Uint16, byte(v>>8), byte(v))
	case v <= math.MaxUint32:
		return append(b, Uint32, byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
	default:
		return appendBE64(append(b, Uint64), v)
	}
}

func appendBE64(b []byte, v uint64) []byte {
	return append(b, byte(v>>56), byte(v>>48), byte(v>>40), byte(v>>32),
		byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
}

// AppendBin appends v as bin, or nil when v is nil. A nil slice is not an
// empty one: Kafka distinguishes a null key from an empty key.
func AppendBin(b []byte, v []byte) []byte {
	if v == nil {
		return append(b, Nil)
	}
	n := len(v)
	switch {
	case n <= math.MaxUint8:
		b = append(b, Bin8, byte(n))
	case n <= math.MaxUint16:
		b = append(b, Bin16, byte(n>>8), byte(n))
	default:
		b = append(b, Bin32, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	}
	return append(b, v...)
}

// AppendStr appends v as str.
func AppendStr(b []byte, v string) []byte {
	n := len(v)
	switch {
	case n < 32:
		b = append(b, 0xa0|byte(n))
	case n <= math.MaxUint8:
		b = append(b, Str8, byte(n))
	case n <= math.MaxUint16:
		b = append(b, Str16, byte(n>>8), byte(n))
	default:
		b = append(b, Str32, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	}
	return append(b, v...)
}

// AppendArrayHeader appends the header of an array of n elements.
func AppendArrayHeader(b []byte, n int) []byte {
	switch {
	case n < 16:
		return append(b, 0x90|byte(n))
	case n <= math.MaxUint16:
		return append(b, Array16, byte(n>>8), byte(n))
	default:
		return append(b, Array32, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	}
}

// AppendMapHeader appends the header of a map of n pairs.
func AppendMapHeader(b []byte, n int) []byte {
	switch {
	case n < 16:
		return append(b, 0x80|byte(n))
	case n <= math.MaxUint16:
		return append(b, Map16, byte(n>>8), byte(n))
	default:
		return append(b, Map32, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	}
}

// Reader decodes values from a byte slice. The zero Reader is empty; Reset
// points it at a slice. Slices returned by Bytes and Str are views into that
// slice with their capacity cut to their length, so appending to one never
// writes into the input.
//
// The first error is kept: afterwards every method returns a zero value and
// consumes nothing. Check Err after decoding.
type Reader struct {
	buf []byte
	off int
	err error
}

// Reset points the reader at b, from its start, and clears the error.
func (r *Reader) Reset(b []byte) { r.buf, r.off, r.err = b, 0, nil }

// ResetAt points the reader at b, from offset off (clamped to b), and clears
// the error.
func (r *Reader) ResetAt(b []byte, off int) {
	r.buf, r.off, r.err = b, min(max(off, 0), len(b)), nil
}

// Err returns the first error met, or nil.
func (r *Reader) Err() error { return r.err }

// Offset returns the number of bytes consumed.
func (r *Reader) Offset() int { return r.off }

// Len returns the number of bytes left.
func (r *Reader) Len() int { return len(r.buf) - r.off }

// Fail records err as the reader's error unless one is already recorded.
// Decoders use it to report a structural problem (a record of 3 elements).
func (r *Reader) Fail(err error) {
	if r.err == nil {
		r.err = err
	}
}

func (r *Reader) typeErr(want string) {
	r.Fail(&Error{Offset: r.off, Want: want, Got: r.buf[r.off]})
}

// peek returns the next format byte; ok is false (and the error set) at the
// end of the input or after an error.
func (r *Reader) peek() (byte, bool) {
	if r.err != nil {
		return 0, false
	}
	if r.off >= len(r.buf) {
		r.err = ErrShort
		return 0, false
	}
	return r.buf[r.off], true
}

// IsNil reports whether the next value is nil, without consuming it.
func (r *Reader) IsNil() bool {
	return r.err == nil && r.off < len(r.buf) && r.buf[r.off] == Nil
}

// Nil consumes a nil.
func (r *Reader) Nil() {
	c, ok := r.peek()
	if !ok {
		return
	}
	if c != Nil {
		r.typeErr("nil")
		return
	}
	r.off++
}

// Bool reads a bool.
func (r *Reader) Bool() bool {
	c, ok := r.peek()
	if !ok {
		return false
	}
	switch c {
	case True:
		r.off++
		return true
	case False:
		r.off++
		return false
	}
	r.typeErr("bool")
	return false
}

// be reads an n-byte big-endian unsigned value at off (n is 1, 2, 4 or 8);
// the caller has checked the bounds.
func be(b []byte, n int) uint64 {
	var v uint64
	for _, c := range b[:n] {
		v = v<<8 | uint64(c)
	}
	return v
}

// intSize returns the payload size of integer format c, or 0 if c is not a
// sized integer format.
func intSize(c byte) int {
	switch c {
	case Uint8, Int8:
		return 1
	case Uint16, Int16:
		return 2
	case Uint32, Int32:
		return 4
	case Uint64, Int64:
		return 8
	}
	return 0
}

// Int reads an integer of any width as int64. A uint64 above MaxInt64 is an
// error.
func (r *Reader) Int() int64 {
	c, ok := r.peek()
	if !ok {
		return 0
	}
	if c <= 0x7f {
		r.off++
		return int64(c)
	}
	if c >= 0xe0 {
		r.off++
		return int64(int8(c))
	}
	size := intSize(c)
	if size == 0 {
		r.typeErr("int")
		return 0
	}
	if len(r.buf)-r.off-1 < size {
		r.err = ErrShort
		return 0
	}
	u := be(r.buf[r.off+1:], size)
	var v int64
	switch c {
	case Uint8, Uint16, Uint32:
		v = int64(u)
	case Uint64:
		if u > math.MaxInt64 {
			r.Fail(errors.New("msgpack: at byte " + strconv.Itoa(r.off) + ": uint64 " +
				strconv.FormatUint(u, 10) + " overflows int64"))
			return 0
		}
		v = int64(u)
	case Int8:
		v = int64(int8(u))
	case Int16:
		v = int64(int16(u))
	case Int32:
		v = int64(int32(u))
	default:
		v = int64(u)
	}
	r.off += 1 + size
	return v
}

// Bytes reads bin or str and returns a view of its payload. nil reads as a nil
// slice; an empty bin or str reads as a non-nil empty slice.
func (r *Reader) Bytes() []byte {
	c, ok := r.peek()
	if !ok {
		return nil
	}
	if c == Nil {
		r.off++
		return nil
	}
	return r.payload(c, "bin, str or nil")
}

// Str reads a str (bin is accepted too) and returns a view of its payload.
// nil is an error.
func (r *Reader) Str() []byte {
	c, ok := r.peek()
	if !ok {
		return nil
	}
	return r.payload(c, "str")
}

// payload reads the str or bin whose format byte c is at r.off.
func (r *Reader) payload(c byte, want string) []byte {
	var h, n int
	left := len(r.buf) - r.off
	switch {
	case c >= 0xa0 && c <= 0xbf:
		h, n = 1, int(c&0x1f)
	case c == Bin8 || c == Str8:
		if left < 2 {
			r.err = ErrShort
			return nil
		}
		h, n = 2, int(r.buf[r.off+1])
	case c == Bin16 || c == Str16:
		if left < 3 {
			r.err = ErrShort
			return nil
		}
		h, n = 3, int(be(r.buf[r.off+1:], 2))
	case c == Bin32 || c == Str32:
		if left < 5 {
			r.err = ErrShort
			return nil
		}
		h, n = 5, int(be(r.buf[r.off+1:], 4))
	default:
		r.typeErr(want)
		return nil
	}
	if left-h < n {
		r.err = ErrShort
		return nil
	}
	start := r.off + h
	end := start + n
	r.off = end
	return r.buf[start:end:end]
}

// ArrayLen reads an array header and returns the element count.
func (r *Reader) ArrayLen() int { return r.header(0x90, Array16, Array32, "array") }

// MapLen reads a map header and returns the number of pairs.
func (r *Reader) MapLen() int { return r.header(0x80, Map16, Map32, "map") }

func (r *Reader) header(fix, f16, f32 byte, want string) int {
	c, ok := r.peek()
	if !ok {
		return 0
	}
	var h, n int
	left := len(r.buf) - r.off
	switch {
	case c&0xf0 == fix:
		r.off++
		n = int(c & 0x0f)
		if n > left-1 {
			r.off--
			r.err = ErrShort
			return 0
		}
		return n
	case c == f16:
		h = 3
	case c == f32:
		h = 5
	default:
		r.typeErr(want)
		return 0
	}
	if left < h {
		r.err = ErrShort
		return 0
	}
	n = int(be(r.buf[r.off+1:], h-1))
	// Every element takes at least one byte: a count larger than what is left
	// is malformed, and rejecting it here keeps callers from allocating for it.
	if n > left-h {
		r.err = ErrShort
		return 0
	}
	r.off += h
	return n
}

// Skip consumes one value of any type in the subset, including nested arrays
// and maps up to MaxDepth levels.
func (r *Reader) Skip() { r.skip(0) }

func (r *Reader) skip(depth int) {
	c, ok := r.peek()
	if !ok {
		return
	}
	if depth > MaxDepth {
		r.Fail(errors.New("msgpack: at byte " + strconv.Itoa(r.off) + ": nesting deeper than " +
			strconv.Itoa(MaxDepth)))
		return
	}
	switch {
	case c == Nil || c == True || c == False || c <= 0x7f || c >= 0xe0:
		r.off++
	case intSize(c) != 0:
		// Skipped by size: a uint64 above MaxInt64 is still well formed.
		if len(r.buf)-r.off-1 < intSize(c) {
			r.err = ErrShort
			return
		}
		r.off += 1 + intSize(c)
	case (c >= 0xa0 && c <= 0xbf) || (c >= Str8 && c <= Str32) || (c >= Bin8 && c <= Bin32):
		r.payload(c, "")
	case c&0xf0 == 0x90 || c == Array16 || c == Array32:
		n := r.ArrayLen()
		for i := 0; i < n && r.err == nil; i++ {
			r.skip(depth + 1)
		}
	case c&0xf0 == 0x80 || c == Map16 || c == Map32:
		n := r.MapLen()
		for i := 0; i < 2*n && r.err == nil; i++ {
			r.skip(depth + 1)
		}
	default:
		r.typeErr("a value of the subset")
	}
}
