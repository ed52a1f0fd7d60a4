package abi

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"sync"

	"github.com/eddy-streams/eddy/abi/msgpack"
	msgpackv5 "github.com/vmihailenco/msgpack/v5"
	"github.com/vmihailenco/msgpack/v5/msgpcode"
)

// Which envelopes go through github.com/vmihailenco/msgpack/v5 and which
// through the hand-written codec of package abi/msgpack (issue 19;
// BENCHMARKS.md, "msgpack/v5 beside the hand-written codec", has the
// figures). msgpack/v5's streaming Encoder and Decoder (no reflection) are
// used where the path is cold: the manifest (AppendManifest and
// DecodeManifest; the host reads one per module load) and DecodeTimers
// (the guest's direction of the timer envelope, which no host path takes).
// Every envelope of the per-record and per-group paths stays hand-written,
// as v5 measured two to five times slower on each: the batch envelope
// (AppendRecords, DecodeProcessOutput), the timer envelope the host writes
// (AppendTimers), the aggregate envelopes (AppendAggAddInput,
// DecodeAggAddOutput, AppendTriples, AppendPairs) and the Results of
// DecodeValues (codec.go says why DecodeRecords and DecodeValue stay too).
// v5 goes through an interface (io.Writer, io.ByteScanner) and an error
// return for every value it writes and every byte it peeks; the
// hand-written codec appends to a slice and indexes it.

// v5Reader reads the msgpack subset of the ABI (abi/msgpack's) from a byte
// slice through msgpack/v5's Decoder, with the guarantees of
// msgpack.Reader, since what it reads may come from a guest:
//
//   - only the subset: a float, an ext, or a nil where a value is
//     required is a *msgpack.TypeError (v5 alone reads a nil as 0, "" or
//     an array of length -1, and a uint64 above MaxInt64 as a negative
//     int64);
//   - every length is checked against the bytes left before anything is
//     read or allocated for it, and an input that ends inside a value is
//     msgpack.ErrShort;
//   - byte strings are views into the slice, not copies;
//   - Skip's nesting is bounded.
//
// The Decoder reads from a bytes.Reader, an io.ByteScanner, so it buffers
// nothing of its own: the reader's position is the decoder's. That is what
// lets v5Reader check a length against the bytes left and hand out a view
// of a payload instead of having the Decoder copy it.
type v5Reader struct {
	src []byte
	rd  bytes.Reader
	dec *msgpackv5.Decoder
}

var v5Readers = sync.Pool{New: func() any {
	r := new(v5Reader)
	r.dec = msgpackv5.NewDecoder(&r.rd)
	return r
}}

// getV5Reader returns a pooled v5Reader over b; putV5Reader gives it back.
func getV5Reader(b []byte) *v5Reader {
	r := v5Readers.Get().(*v5Reader)
	r.src = b
	r.rd.Reset(b)
	return r
}

func putV5Reader(r *v5Reader) {
	r.src = nil
	r.rd.Reset(nil)
	v5Readers.Put(r)
}

// Len returns the number of bytes left.
func (r *v5Reader) Len() int { return r.rd.Len() }

// offset returns the number of bytes consumed.
func (r *v5Reader) offset() int { return len(r.src) - r.rd.Len() }

// peek returns the next format byte without consuming it.
func (r *v5Reader) peek() (byte, error) {
	if r.rd.Len() == 0 {
		return 0, msgpack.ErrShort
	}
	return r.dec.PeekCode()
}

func (r *v5Reader) typeErr(want string, c byte) error {
	return &msgpack.TypeError{Offset: r.offset(), Want: want, Got: c}
}

// short turns the Decoder's end of input into msgpack.ErrShort.
func short(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return msgpack.ErrShort
	}
	return err
}

// tooLarge refuses a 32-bit length above MaxInt32, as msgpack.Reader does
// (with the same message), before it is compared with the bytes left.
func tooLarge(n int) error {
	if n > math.MaxInt32 {
		return fmt.Errorf("msgpack: length %d too large", n)
	}
	return nil
}

// IsNil reports whether the next value is nil, without consuming it.
func (r *v5Reader) IsNil() bool {
	c, err := r.peek()
	return err == nil && c == msgpcode.Nil
}

// Nil consumes a nil.
func (r *v5Reader) Nil() error {
	c, err := r.peek()
	if err != nil {
		return err
	}
	if c != msgpcode.Nil {
		return r.typeErr("nil", c)
	}
	return r.dec.DecodeNil()
}

// ArrayHeader reads an array header and returns the element count. The
// count of an array16 or array32 is at most the bytes left, since every
// element takes one at least: as msgpack.Reader does, v5Reader refuses a
// larger one before its caller allocates for it. (Neither checks a
// fixarray's count, which is at most 15.)
func (r *v5Reader) ArrayHeader() (int, error) {
	c, err := r.peek()
	if err != nil {
		return 0, err
	}
	if !msgpcode.IsFixedArray(c) && c != msgpcode.Array16 && c != msgpcode.Array32 {
		return 0, r.typeErr("array", c)
	}
	n, err := r.dec.DecodeArrayLen()
	if err != nil {
		return 0, short(err)
	}
	if err := tooLarge(n); err != nil {
		return 0, err
	}
	if !msgpcode.IsFixedArray(c) && n > r.rd.Len() {
		return 0, msgpack.ErrShort
	}
	return n, nil
}

// MapHeader reads a map header and returns the number of pairs, checked
// as ArrayHeader checks a count. (The Decoder's DecodeMapLen would also take an ext
// header before a map: the check of the format byte refuses it.)
func (r *v5Reader) MapHeader() (int, error) {
	c, err := r.peek()
	if err != nil {
		return 0, err
	}
	if !msgpcode.IsFixedMap(c) && c != msgpcode.Map16 && c != msgpcode.Map32 {
		return 0, r.typeErr("map", c)
	}
	n, err := r.dec.DecodeMapLen()
	if err != nil {
		return 0, short(err)
	}
	if err := tooLarge(n); err != nil {
		return 0, err
	}
	if !msgpcode.IsFixedMap(c) && n > r.rd.Len() {
		return 0, msgpack.ErrShort
	}
	return n, nil
}

// Int reads an integer of any width as int64. A uint64 above MaxInt64 is
// an error.
func (r *v5Reader) Int() (int64, error) {
	c, err := r.peek()
	if err != nil {
		return 0, err
	}
	switch {
	case msgpcode.IsFixedNum(c), c >= msgpcode.Uint8 && c <= msgpcode.Uint32, c >= msgpcode.Int8 && c <= msgpcode.Int64:
		v, err := r.dec.DecodeInt64()
		return v, short(err)
	case c == msgpcode.Uint64:
		start := r.offset()
		v, err := r.dec.DecodeUint64()
		if err != nil {
			return 0, short(err)
		}
		if v > math.MaxInt64 {
			return 0, fmt.Errorf("msgpack: at byte %d: uint64 %d overflows int64", start, v)
		}
		return int64(v), nil
	}
	return 0, r.typeErr("int", c)
}

// Bytes reads bin or str and returns a view of its payload. nil reads as
// a nil slice; an empty bin or str as a non-nil empty slice.
func (r *v5Reader) Bytes() ([]byte, error) {
	c, err := r.peek()
	if err != nil {
		return nil, err
	}
	if c == msgpcode.Nil {
		return nil, r.dec.DecodeNil()
	}
	return r.payload(c, "bin or str")
}

// StrBytes reads a str (or bin) and returns a view of its payload.
func (r *v5Reader) StrBytes() ([]byte, error) {
	c, err := r.peek()
	if err != nil {
		return nil, err
	}
	return r.payload(c, "str")
}

// Str reads a str (or bin) and returns it as a string (a copy).
func (r *v5Reader) Str() (string, error) {
	b, err := r.StrBytes()
	return string(b), err
}

// payload reads the str or bin whose format byte is c (not consumed yet):
// its length through the Decoder, checked against the bytes left, then a
// view of its bytes, which the reader skips.
func (r *v5Reader) payload(c byte, want string) ([]byte, error) {
	if !msgpcode.IsString(c) && !msgpcode.IsBin(c) {
		return nil, r.typeErr(want, c)
	}
	n, err := r.dec.DecodeBytesLen()
	if err != nil {
		return nil, short(err)
	}
	if err := tooLarge(n); err != nil {
		return nil, err
	}
	if n > r.rd.Len() {
		return nil, msgpack.ErrShort
	}
	off := r.offset()
	if _, err := r.rd.Seek(int64(n), io.SeekCurrent); err != nil {
		return nil, err
	}
	return r.src[off : off+n : off+n], nil
}

// maxV5Depth bounds nesting in Skip, as in msgpack.Reader.Skip, so that
// hostile input cannot exhaust the stack (the Decoder's own Skip has no
// bound).
const maxV5Depth = 64

// Skip consumes one value of the subset, nested arrays and maps included.
func (r *v5Reader) Skip() error { return r.skip(0) }

func (r *v5Reader) skip(depth int) error {
	if depth > maxV5Depth {
		return fmt.Errorf("msgpack: at byte %d: nesting deeper than %d", r.offset(), maxV5Depth)
	}
	c, err := r.peek()
	if err != nil {
		return err
	}
	switch {
	case c == msgpcode.Nil || c == msgpcode.True || c == msgpcode.False || msgpcode.IsFixedNum(c) ||
		(c >= msgpcode.Uint8 && c <= msgpcode.Uint64) || (c >= msgpcode.Int8 && c <= msgpcode.Int64):
		// Fixed sizes: a uint64 above MaxInt64 is a well-formed value here.
		return short(r.dec.Skip())
	case msgpcode.IsString(c) || msgpcode.IsBin(c):
		_, err := r.payload(c, "")
		return err
	case msgpcode.IsFixedArray(c) || c == msgpcode.Array16 || c == msgpcode.Array32:
		n, err := r.ArrayHeader()
		if err != nil {
			return err
		}
		for range n {
			if err := r.skip(depth + 1); err != nil {
				return err
			}
		}
		return nil
	case msgpcode.IsFixedMap(c) || c == msgpcode.Map16 || c == msgpcode.Map32:
		n, err := r.MapHeader()
		if err != nil {
			return err
		}
		for range 2 * n {
			if err := r.skip(depth + 1); err != nil {
				return err
			}
		}
		return nil
	}
	return r.typeErr("a value of the subset", c)
}
