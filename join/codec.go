package join

import (
	"encoding/binary"
	"fmt"

	"github.com/eddy-streams/eddy/abi"
)

// recordVersion is the first byte of an encoded record. Bump it (and keep
// decoding the old one) if the layout changes: buffers outlive a deploy.
const recordVersion = 1

// AppendRecord appends the encoding of rec (key, value, timestamp and
// headers) to dst: the bytes a [WindowJoin] stores in its [Buffer].
//
// Layout: a version byte (1), the timestamp as a zig-zag varint, the key
// and the value each as uvarint(len+1) then the bytes (0 for nil, so nil
// and empty stay distinct), uvarint(header count), then per header
// uvarint(len) key, uvarint(len+1) value.
func AppendRecord(dst []byte, rec *abi.Record) []byte {
	dst = append(dst, recordVersion)
	dst = binary.AppendVarint(dst, rec.Timestamp)
	dst = appendNullable(dst, rec.Key)
	dst = appendNullable(dst, rec.Value)
	dst = binary.AppendUvarint(dst, uint64(len(rec.Headers)))
	for _, h := range rec.Headers {
		dst = binary.AppendUvarint(dst, uint64(len(h.Key)))
		dst = append(dst, h.Key...)
		dst = appendNullable(dst, h.Value)
	}
	return dst
}

func appendNullable(dst, b []byte) []byte {
	if b == nil {
		return append(dst, 0)
	}
	dst = binary.AppendUvarint(dst, uint64(len(b))+1)
	return append(dst, b...)
}

// DecodeRecord decodes the output of [AppendRecord] into rec. Key, Value
// and header values are views into b, not copies; header keys are copied.
// Errors wrap [ErrCorrupt]; trailing bytes are an error.
func DecodeRecord(b []byte, rec *abi.Record) error {
	d := decoder{b: b}
	if v := d.byte(); v != recordVersion {
		return fmt.Errorf("join: record version %d: %w", v, ErrCorrupt)
	}
	rec.Timestamp = d.varint()
	rec.Key = d.nullable()
	rec.Value = d.nullable()
	n := d.uvarint()
	// Each header takes at least two bytes: a bound on n that keeps
	// garbage from allocating.
	if n > uint64(len(d.b)/2) {
		d.fail()
	}
	rec.Headers = nil
	if n > 0 && d.err == nil {
		rec.Headers = make([]abi.Header, n)
		for i := range rec.Headers {
			k := d.bytes(d.uvarint())
			rec.Headers[i] = abi.Header{Key: string(k), Value: d.nullable()}
		}
	}
	if d.err == nil && len(d.b) > 0 {
		return fmt.Errorf("join: %d trailing bytes after a record: %w", len(d.b), ErrCorrupt)
	}
	if d.err != nil {
		*rec = abi.Record{}
		return fmt.Errorf("join: truncated record: %w", ErrCorrupt)
	}
	return nil
}

// decoder reads from b; after the first error every read returns zero.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail() {
	d.err = ErrCorrupt
	d.b = nil
}

func (d *decoder) byte() byte {
	if len(d.b) == 0 {
		d.fail()
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

// varint and uvarint refuse the longer encodings of a value (0x80 0x00 for
// 0) that the encoders never write: a buffer's store key must have one
// encoding, or two entries could hold one record.
func (d *decoder) varint() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 || n > 1 && d.b[n-1] == 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 || n > 1 && d.b[n-1] == 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) bytes(n uint64) []byte {
	if n > uint64(len(d.b)) {
		d.fail()
		return nil
	}
	b := d.b[:n:n]
	d.b = d.b[n:]
	return b
}

func (d *decoder) nullable() []byte {
	n := d.uvarint()
	if n == 0 || d.err != nil {
		return nil
	}
	return d.bytes(n - 1)
}

// AppendBufferKey appends a store key for the buffer entry (side, key, t,
// seq) to dst, for a [Buffer] backed by an ordered key-value store: side
// (one byte), uvarint(len(key)), key, t (8 bytes big-endian with the sign
// bit flipped), seq (8 bytes big-endian).
//
// Among the entries of one side and key, the bytewise order of the store
// keys is the (t, seq) order that [Buffer.Scan] must follow, negative
// times included. So Scan(side, key, from, to) is an iteration from
// AppendBufferKey(side, key, from, 0) up to and including
// AppendBufferKey(side, key, to, math.MaxUint64).
func AppendBufferKey(dst []byte, side Side, key []byte, t int64, seq uint64) []byte {
	dst = append(dst, byte(side))
	dst = binary.AppendUvarint(dst, uint64(len(key)))
	dst = append(dst, key...)
	dst = binary.BigEndian.AppendUint64(dst, uint64(t)^(1<<63))
	return binary.BigEndian.AppendUint64(dst, seq)
}

// ParseBufferKey parses the output of [AppendBufferKey]. The key is a view
// into b. Errors wrap [ErrCorrupt].
func ParseBufferKey(b []byte) (side Side, key []byte, t int64, seq uint64, err error) {
	d := decoder{b: b}
	side = Side(d.byte())
	key = d.bytes(d.uvarint())
	if d.err != nil || len(d.b) != 16 || side > Right {
		// Not the key itself: it comes from outside and can be long.
		return 0, nil, 0, 0, fmt.Errorf("join: buffer key of %d bytes: %w", len(b), ErrCorrupt)
	}
	t = int64(binary.BigEndian.Uint64(d.b) ^ (1 << 63))
	seq = binary.BigEndian.Uint64(d.b[8:])
	return side, key, t, seq, nil
}
