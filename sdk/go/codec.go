package eddy

import (
	"encoding/binary"
	"errors"
	"math"
	"strconv"

	"github.com/eddy-streams/eddy/sdk/go/internal/msgpack"
)

// The envelope codec of the SDK (ABI.md section 5): records are decoded into
// views of the input and answers are appended to the reused output buffer.
//
// # Why there are fast paths
//
// Go compiled to Wasm pays for control flow: every taken jump goes through a
// dispatch table at the top of the function, and every call through the Go
// stack kept in linear memory. The general msgpack Reader costs some 600 ns a
// record in wazero. The fast paths below decode and encode a record in the
// shape the Eddy host writes (bin or nil key and value, an int64 timestamp,
// no headers) as one straight-line function, and fall back to the general
// code for anything else, so every input the ABI allows is still accepted.

var (
	errRecordShape = errors.New("a record is not an array of 4 elements")
	errHeaderShape = errors.New("a header is not an array of 2 elements")
	errItemShape   = errors.New("an item has the wrong number of elements")
)

// envelopeError describes a malformed item of an input envelope.
func envelopeError(what string, i int, err error) error {
	return errors.New("malformed input envelope: " + what + " " + strconv.Itoa(i) + ": " + err.Error())
}

// count reads the item count of an input envelope. It returns -1 and the
// reason when the count cannot be read, which fails the whole call.
func (g *guest) count(in []byte) (int, error) {
	g.r.Reset(in)
	n := g.r.ArrayLen()
	if err := g.r.Err(); err != nil {
		return -1, errors.New("malformed input envelope: " + err.Error())
	}
	return n, nil
}

// trailing checks that the envelope ended with its last item.
func (g *guest) trailing() error {
	if err := g.r.Err(); err != nil {
		return errors.New("malformed input envelope: " + err.Error())
	}
	if g.r.Len() != 0 {
		return errors.New("malformed input envelope: " + strconv.Itoa(g.r.Len()) + " trailing bytes")
	}
	return nil
}

// readRecords decodes [Record × n] into g.recs[:n]. It returns n = -1 when the
// count cannot be read (the call fails), and n with an error when the count
// is readable but the records are not (every item fails with BAD_ENVELOPE).
// No user code runs on a malformed envelope.
func (g *guest) readRecords(in []byte) (n int, err error) {
	if n, err = g.count(in); n < 0 {
		return n, err
	}
	if cap(g.recs) < n {
		g.recs = make([]Record, n, n+n/4)
	}
	g.recs = g.recs[:n]
	g.hdrs = g.hdrs[:0]
	off, i, err := g.decodeRecords(in, g.r.Offset(), g.recs)
	if err != nil {
		return n, envelopeError("record", i, err)
	}
	g.r.ResetAt(in, off)
	return n, g.trailing()
}

// decodeRecords decodes len(recs) records from in[off:] into recs and
// returns the offset after them. On failure it returns the index of the
// record that could not be decoded and the reader's error. The headers of
// the records are appended to g.hdrs.
//
// Records in the shape the Eddy host writes for a record without headers,
//
//	94  c4 KL key | c0  c4 VL value | c5 VH VL value  cf <8 bytes>  90
//
// (a bin 8 or nil key, a bin 8 or bin 16 value, a uint 64 timestamp, no
// headers) are decoded by the straight-line code in the loop, which checks
// all format bytes with one branch; it is written out here rather than called
// because a call costs some 25 ns in Go compiled to Wasm. Any other shape goes
// to readRecord, the general decoder.
func (g *guest) decodeRecords(in []byte, off int, recs []Record) (next, i int, err error) {
	for i = range recs {
		if p := in[off:]; len(p) >= 14 {
			ks, kl := 3, int(p[2]) // key start and length, for bin 8
			if p[1] == msgpack.Nil {
				ks, kl = 2, 0
			}
			vs := ks + kl // value header
			if len(p) >= vs+13 {
				vf := p[vs]
				big := int(vf & 1) // 0 for bin 8, 1 for bin 16
				vl := int(p[vs+1])<<(8*big) | int(p[vs+2])&-big
				ts := vs + 2 + big + vl // timestamp
				if len(p) >= ts+10 && (p[0]^0x94)|((p[1]^msgpack.Bin8)&(p[1]^msgpack.Nil))|
					((vf|1)^msgpack.Bin16)|(p[ts]^msgpack.Uint64)|(p[ts+1]&0x80)|(p[ts+9]^0x90) == 0 {
					var key []byte
					if ks == 3 {
						key = p[3:vs:vs]
					}
					rec := &recs[i]
					rec.Key, rec.Value = key, p[vs+2+big:ts:ts]
					rec.Timestamp, rec.Headers = int64(binary.BigEndian.Uint64(p[ts+1:])), nil
					off += ts + 10
					continue
				}
			}
		}
		g.r.ResetAt(in, off)
		if g.readRecord(&recs[i]); g.r.Err() != nil {
			return off, i, g.r.Err()
		}
		off = g.r.Offset()
	}
	return off, len(recs), nil
}

// readRecord decodes one Record (ABI.md 5.2) as views into the input, with
// the general reader.
func (g *guest) readRecord(rec *Record) {
	r := &g.r
	if n := r.ArrayLen(); n != 4 {
		r.Fail(errRecordShape)
		return
	}
	rec.Key = r.Bytes()
	rec.Value = r.Bytes()
	if r.IsNil() { // input timestamps are ints; be lenient
		r.Nil()
		rec.Timestamp = 0
	} else {
		rec.Timestamp = r.Int()
	}
	rec.Headers = nil
	if r.IsNil() {
		r.Nil()
		return
	}
	h := r.ArrayLen()
	if h == 0 {
		return
	}
	start := len(g.hdrs)
	for j := 0; j < h; j++ {
		if n := r.ArrayLen(); n != 2 {
			r.Fail(errHeaderShape)
			return
		}
		name := g.intern(r.Str())
		g.hdrs = append(g.hdrs, Header{Key: name, Value: r.Bytes()})
	}
	// Cap the capacity so that appending to one record's headers cannot
	// overwrite the next record's.
	end := len(g.hdrs)
	rec.Headers = g.hdrs[start:end:end]
}

// maxNames bounds the interned header names.
const maxNames = 256

// intern returns b as a string without allocating for header names seen
// before (there are usually a handful). Strings must not change, so a view
// into the input buffer would not do: the host overwrites it.
func (g *guest) intern(b []byte) string {
	if s, ok := g.names[string(b)]; ok { // no allocation: the compiler looks up string(b) in place
		return s
	}
	s := string(b)
	if g.names == nil {
		g.names = make(map[string]string)
	}
	if len(g.names) < maxNames {
		g.names[s] = s
	}
	return s
}

// readItems decodes [[key, a, b] × N] (width 3) or [[key, acc] × N] (width
// 2) into g.items[:n], with the conventions of readRecords. Items whose
// fields are all bin 8 or nil, as the host writes keys and accumulators, are
// decoded by the loop itself; any other shape by the general reader.
func (g *guest) readItems(in []byte, width int) (n int, err error) {
	if n, err = g.count(in); n < 0 {
		return n, err
	}
	if cap(g.items) < n {
		g.items = make([]item, n)
	}
	g.items = g.items[:n]
	r := &g.r
	off := r.Offset()
	for i := range g.items {
		it := &g.items[i]
		p := in[off:]
		var f [3][]byte
		j, ok := 1, len(p) > 0 && p[0] == 0x90|byte(width)
		for w := 0; ok && w < width; w++ {
			switch {
			case j < len(p) && p[j] == msgpack.Nil:
				j++
			case j+1 < len(p) && p[j] == msgpack.Bin8 && j+2+int(p[j+1]) <= len(p):
				e := j + 2 + int(p[j+1])
				f[w] = p[j+2 : e : e]
				j = e
			default:
				ok = false
			}
		}
		if ok {
			it.key, it.a, it.b = f[0], f[1], f[2]
			off += j
			continue
		}
		r.ResetAt(in, off)
		if m := r.ArrayLen(); m != width {
			r.Fail(errItemShape)
		}
		it.key, it.a = r.Bytes(), r.Bytes()
		it.b = nil
		if width == 3 {
			it.b = r.Bytes()
		}
		if r.Err() != nil {
			return n, envelopeError("item", i, r.Err())
		}
		off = r.Offset()
	}
	r.ResetAt(in, off)
	return n, g.trailing()
}

// failAll answers n items with the same failure.
func failAll(b []byte, n int, code int32, reason string) []byte {
	for i := 0; i < n; i++ {
		b = appendFailure(b, code, reason)
	}
	return b
}

// appendFailure appends a failed Result: [code, reason].
func appendFailure(b []byte, code int32, reason string) []byte {
	b = append(b, 0x92)
	b = msgpack.AppendInt(b, int64(code))
	return msgpack.AppendStr(b, reason)
}

// appendError appends a failed Result for a handler's error.
func appendError(b []byte, err error) []byte {
	code, reason := failure(err)
	return appendFailure(b, code, reason)
}

// appendNonNil appends v as bin, writing nil as an empty bin: accumulators
// may not be nil.
func appendNonNil(b, v []byte) []byte {
	if v == nil {
		return append(b, msgpack.Bin8, 0)
	}
	return msgpack.AppendBin(b, v)
}

// appendMapResult appends a successful Result holding one record: the answer
// of a Map or a kept record of a Filter. The common shape (a key of at most
// 255 bytes, a value of at most 65535, the input's timestamp, no headers) is
// written by straight-line code; anything else by appendRecord.
//
// guest.mapFrom holds a copy of this code written out in its loop; keep the
// two the same (TestMapAndFilterEncodeAlike checks).
func appendMapResult(b []byte, rec *Record, inTime int64) []byte {
	kl, vl := len(rec.Key), len(rec.Value)
	if kl > math.MaxUint8 || vl > math.MaxUint16 || rec.Key == nil || rec.Value == nil ||
		len(rec.Headers) != 0 || rec.Timestamp != inTime {
		b = append(b, 0x92, 0x00, 0x91)
		return appendRecord(b, rec, inTime)
	}
	need := 4 + 2 + kl + 3 + vl + 2
	if cap(b)-len(b) < need {
		b = grow(b, need)
	}
	n := len(b)
	o := b[n : n+need]
	// Result [0, [Record...]] and the record's array header.
	binary.LittleEndian.PutUint32(o, 0x94_91_00_92)
	o[4], o[5] = msgpack.Bin8, byte(kl)
	if k := rec.Key; kl >= 8 && kl <= 16 {
		// Two overlapping word moves: a call of copy (runtime.memmove)
		// costs some 40 ns in Go compiled to Wasm, more than this.
		binary.LittleEndian.PutUint64(o[6+kl-8:], binary.LittleEndian.Uint64(k[kl-8:]))
		binary.LittleEndian.PutUint64(o[6:], binary.LittleEndian.Uint64(k))
	} else {
		copy(o[6:], k)
	}
	p := 6 + kl
	if vl <= math.MaxUint8 {
		o[p], o[p+1] = msgpack.Bin8, byte(vl)
		p += 2
	} else {
		o[p], o[p+1], o[p+2] = msgpack.Bin16, byte(vl>>8), byte(vl)
		p += 3
	}
	p += copy(o[p:], rec.Value)
	o[p], o[p+1] = msgpack.Nil, 0x90 // timestamp inherited, no headers
	return b[:n+p+2]
}

// grow returns b with room for at least need more bytes.
func grow(b []byte, need int) []byte {
	nb := make([]byte, len(b), max(2*cap(b), len(b)+need, 4096))
	copy(nb, b)
	return nb
}

// appendRecord appends an output Record. A timestamp equal to the input's is
// written as nil, which ABI.md 5.2 defines as the same value in one byte.
func appendRecord(b []byte, rec *Record, inTime int64) []byte {
	b = append(b, 0x94)
	b = msgpack.AppendBin(b, rec.Key)
	b = msgpack.AppendBin(b, rec.Value)
	if rec.Timestamp == inTime {
		b = append(b, msgpack.Nil)
	} else {
		b = msgpack.AppendInt(b, rec.Timestamp)
	}
	b = msgpack.AppendArrayHeader(b, len(rec.Headers))
	for i := range rec.Headers {
		h := &rec.Headers[i]
		b = append(b, 0x92)
		b = msgpack.AppendStr(b, h.Key)
		b = msgpack.AppendBin(b, h.Value)
	}
	return b
}
