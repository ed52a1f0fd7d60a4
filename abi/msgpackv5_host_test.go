package abi

import (
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"

	"github.com/eddy-streams/eddy/abi/msgpack"
	msgpackv5 "github.com/vmihailenco/msgpack/v5"
)

// Both codecs for the envelopes other than the batch envelope, for issue
// 19's comparison. Where production stays hand-written, the *V5 functions
// are msgpack/v5 versions (through v5Encoder and v5Reader of
// msgpackv5.go) of the function of the same name without the suffix;
// where production went to msgpack/v5 (the manifest, DecodeTimers), the
// *Hand functions keep the hand-written code it replaced. Each pair
// matches check for check and message for message, so that the
// benchmarks compare codecs and the fuzz targets (msgpackv5_agree_test.go)
// can ask the two for the same answer.

// appendTimersV5 is AppendTimers through msgpack/v5.
func appendTimersV5(b []byte, ts []Timer) []byte {
	return appendV5(b, func(enc *msgpackv5.Encoder) error {
		err := enc.EncodeArrayLen(len(ts))
		for i := range ts {
			err = errors.Join(err, enc.EncodeArrayLen(3), enc.EncodeBytes(ts[i].Key), enc.EncodeInt(ts[i].Time), enc.EncodeInt(int64(ts[i].Domain)))
		}
		return err
	})
}

// appendAggAddInputV5 is AppendAggAddInput through msgpack/v5.
func appendAggAddInputV5(b []byte, groups []Group) []byte {
	return appendV5(b, func(enc *msgpackv5.Encoder) error {
		err := enc.EncodeArrayLen(len(groups))
		for i := range groups {
			g := &groups[i]
			err = errors.Join(err, enc.EncodeArrayLen(3), enc.EncodeBytes(g.Key), enc.EncodeBytes(g.Acc), enc.EncodeArrayLen(len(g.Records)))
			for j := range g.Records {
				err = errors.Join(err, encodeRecordV5(enc, &g.Records[j], false))
			}
		}
		return err
	})
}

// decodeAggAddOutputV5 is DecodeAggAddOutput through msgpack/v5.
func decodeAggAddOutputV5(b []byte, groups []Group, out []Added) ([]Added, error) {
	r := getV5Reader(b)
	defer putV5Reader(r)
	n, err := r.ArrayHeader()
	if err != nil {
		return out, malformed("add results: %v", err)
	}
	if n != len(groups) {
		return out, malformed("add results: %d results for %d groups", n, len(groups))
	}
	for i := 0; i < n; i++ {
		if m, err := r.ArrayHeader(); err != nil || m != 2 {
			if err == nil {
				err = errorf("has %d elements, want 2", m)
			}
			return out, malformed("group %d: %v", i, err)
		}
		acc, err := r.Bytes()
		if err != nil {
			return out, malformed("group %d: accumulator: %v", i, err)
		}
		if acc == nil {
			return out, malformed("group %d: accumulator is nil", i)
		}
		a := Added{Acc: acc}
		e, err := r.ArrayHeader()
		if err != nil {
			return out, malformed("group %d: errors: %v", i, err)
		}
		if e > len(groups[i].Records) {
			return out, malformed("group %d: %d errors for %d records", i, e, len(groups[i].Records))
		}
		for j := 0; j < e; j++ {
			ie, err := readItemErrorV5(r)
			if err != nil {
				return out, malformed("group %d: error %d: %v", i, j, err)
			}
			if ie.Index < 0 || ie.Index >= len(groups[i].Records) {
				return out, malformed("group %d: error %d: index %d out of range", i, j, ie.Index)
			}
			a.Errors = append(a.Errors, ie)
		}
		out = append(out, a)
	}
	if r.Len() != 0 {
		return out, malformed("add results: %d trailing bytes", r.Len())
	}
	return out, nil
}

func readItemErrorV5(r *v5Reader) (ItemError, error) {
	var ie ItemError
	m, err := r.ArrayHeader()
	if err != nil {
		return ie, err
	}
	if m != 3 {
		return ie, errorf("record error has %d elements, want 3", m)
	}
	idx, err := r.Int()
	if err != nil {
		return ie, wrap("index", err)
	}
	code, err := r.Int()
	if err != nil {
		return ie, wrap("code", err)
	}
	if code <= 0 || code > 1<<31-1 {
		return ie, errorf("code %d out of range", code)
	}
	if ie.Reason, err = readReasonV5(r); err != nil {
		return ie, wrap("reason", err)
	}
	if idx < 0 || idx > 1<<31-1 {
		return ie, errorf("index %d out of range", idx)
	}
	ie.Index, ie.Code = int(idx), Code(code)
	return ie, nil
}

func readReasonV5(r *v5Reader) (string, error) {
	b, err := r.StrBytes()
	if err != nil {
		return "", err
	}
	return TruncateBytes(b, MaxReasonBytes), nil
}

// appendTriplesV5 is AppendTriples through msgpack/v5.
func appendTriplesV5(b []byte, n int, at func(i int) (x, y, z []byte)) []byte {
	return appendV5(b, func(enc *msgpackv5.Encoder) error {
		err := enc.EncodeArrayLen(n)
		for i := 0; i < n; i++ {
			x, y, z := at(i)
			err = errors.Join(err, enc.EncodeArrayLen(3), enc.EncodeBytes(x), enc.EncodeBytes(y), enc.EncodeBytes(z))
		}
		return err
	})
}

// appendPairsV5 is AppendPairs through msgpack/v5.
func appendPairsV5(b []byte, n int, at func(i int) (x, y []byte)) []byte {
	return appendV5(b, func(enc *msgpackv5.Encoder) error {
		err := enc.EncodeArrayLen(n)
		for i := 0; i < n; i++ {
			x, y := at(i)
			err = errors.Join(err, enc.EncodeArrayLen(2), enc.EncodeBytes(x), enc.EncodeBytes(y))
		}
		return err
	})
}

// decodeValuesV5 is DecodeValues through msgpack/v5.
func decodeValuesV5(b []byte, n int, t BodyType, out []Value) ([]Value, error) {
	r := getV5Reader(b)
	defer putV5Reader(r)
	m, err := r.ArrayHeader()
	if err != nil {
		return out, malformed("results: %v", err)
	}
	if m != n {
		return out, malformed("results: %d results for %d inputs", m, n)
	}
	for i := 0; i < n; i++ {
		v, err := readValueV5(r, t)
		if err != nil {
			return out, malformed("result %d: %v", i, err)
		}
		out = append(out, v)
	}
	if r.Len() != 0 {
		return out, malformed("results: %d trailing bytes", r.Len())
	}
	return out, nil
}

// decodeValueV5 is DecodeValue through msgpack/v5.
func decodeValueV5(b []byte, t BodyType) (Value, error) {
	r := getV5Reader(b)
	defer putV5Reader(r)
	v, err := readValueV5(r, t)
	if err != nil {
		return v, malformed("result: %v", err)
	}
	if r.Len() != 0 {
		return v, malformed("result: %d trailing bytes", r.Len())
	}
	return v, nil
}

func readValueV5(r *v5Reader, t BodyType) (Value, error) {
	var v Value
	m, err := r.ArrayHeader()
	if err != nil {
		return v, err
	}
	if m != 2 {
		return v, errorf("result has %d elements, want 2", m)
	}
	c, err := r.Int()
	if err != nil {
		return v, err
	}
	if c < 0 || c > 1<<31-1 {
		return v, errorf("code %d out of range", c)
	}
	v.Code = Code(c)
	if v.Code != CodeOK {
		v.Reason, err = readReasonV5(r)
		return v, wrap("reason", err)
	}
	switch t {
	case BodyInt:
		v.Int, err = r.Int()
	default:
		v.Bytes, err = r.Bytes()
		if err == nil && t == BodyNonNil && v.Bytes == nil {
			err = errorf("body is nil")
		}
	}
	return v, wrap("body", err)
}

// remindManifest is the manifest of a real module, testdata/go/remind.wasm
// (a process function with timers, built with the Go SDK).
var remindManifest = Manifest{ABI: 1, Kinds: []Kind{KindProcess, KindTimer}, Name: "remind", Version: "1.0.0", SDK: "go/0.1.0"}

// BenchmarkManifest encodes and decodes the manifest of a real module
// with the hand-written codec and with msgpack/v5's streaming API. The
// host decodes one manifest per module load.
func BenchmarkManifest(b *testing.B) {
	wire := AppendManifest(nil, &remindManifest)
	benchPair(b, "encode", int64(len(wire)),
		func(buf []byte) []byte { return AppendManifest(buf, &remindManifest) },
		func(buf []byte) []byte { return appendManifestV5(buf, &remindManifest) })
	benchDecode(b, "decode", int64(len(wire)),
		func() error { _, err := decodeManifestHand(wire); return err },
		func() error { _, err := DecodeManifest(wire); return err })
}

// benchTimers is n fired timers as the host sends them to eddy_timer: a
// 16-byte key, times 250 ms apart, both domains.
func benchTimers(n int) []Timer {
	ts := make([]Timer, n)
	for i := range ts {
		ts[i] = Timer{Key: fmt.Appendf(nil, "key-%012d", i), Time: 1_700_000_000_000 + int64(i)*250, Domain: TimeDomain(i % 2)}
	}
	return ts
}

// BenchmarkTimers encodes 1,024 fired timers (the input envelope of
// eddy_timer, which the host writes for every firing) and decodes them
// (the guest's direction, which tests and tools use), with both codecs.
func BenchmarkTimers(b *testing.B) {
	ts := benchTimers(1024)
	wire := AppendTimers(nil, ts)
	benchPair(b, "encode", int64(len(wire)),
		func(buf []byte) []byte { return AppendTimers(buf, ts) },
		func(buf []byte) []byte { return appendTimersV5(buf, ts) })
	var out []Timer
	benchDecode(b, "decode", int64(len(wire)),
		func() (err error) { out, err = decodeTimersHand(wire, out[:0]); return err },
		func() (err error) { out, err = DecodeTimers(wire, out[:0]); return err })
}

// BenchmarkAggregate measures the aggregate envelopes with both codecs on
// 1,024 groups of one record each (a batch spread over many keys, as a
// windowed aggregate over many keys gets it): a key "user-N", a small JSON
// number as the value, an accumulator of 20-odd bytes of JSON. add-encode
// is eddy_agg_add's input, add-decode its answer (an accumulator per
// group, no errors); merge-encode and result-encode are the inputs of
// eddy_agg_merge (AppendTriples, which eddy_join's input shares) and
// eddy_agg_result (AppendPairs); values-decode is the answer of a merge
// ([Result × N] of accumulators, as DecodeValues reads the answers of
// merge, result, join and key), values-int that of eddy_timestamp;
// init-decode is eddy_agg_init's single Result, read once per instance.
func BenchmarkAggregate(b *testing.B) {
	const n = 1024
	keys, accs := make([][]byte, n), make([][]byte, n)
	groups := make([]Group, n)
	for i := range groups {
		keys[i] = fmt.Appendf(nil, "user-%d", i)
		accs[i] = fmt.Appendf(nil, `{"n":%d,"sum":%d}`, i%97+1, i*7919%100000)
		groups[i] = Group{Key: keys[i], Acc: accs[i], Records: []Record{{Key: keys[i], Value: strconv.AppendInt(nil, int64(i*7%1000), 10), Timestamp: 1_700_000_000_000 + int64(i)}}}
	}
	addAnswer := msgpack.AppendArrayHeader(nil, n)
	valuesAnswer := msgpack.AppendArrayHeader(nil, n)
	intsAnswer := msgpack.AppendArrayHeader(nil, n)
	for i := range n {
		addAnswer = append(msgpack.AppendBin(append(addAnswer, 0x92), accs[i]), 0x90)
		valuesAnswer = msgpack.AppendBin(append(valuesAnswer, 0x92, 0x00), accs[i])
		intsAnswer = msgpack.AppendInt(append(intsAnswer, 0x92, 0x00), 1_700_000_000_000+int64(i))
	}
	initAnswer := msgpack.AppendBin([]byte{0x92, 0x00}, accs[0])

	benchPair(b, "add-encode", int64(len(AppendAggAddInput(nil, groups))),
		func(buf []byte) []byte { return AppendAggAddInput(buf, groups) },
		func(buf []byte) []byte { return appendAggAddInputV5(buf, groups) })
	var added []Added
	benchDecode(b, "add-decode", int64(len(addAnswer)),
		func() (err error) { added, err = DecodeAggAddOutput(addAnswer, groups, added[:0]); return err },
		func() (err error) { added, err = decodeAggAddOutputV5(addAnswer, groups, added[:0]); return err })
	triple := func(i int) ([]byte, []byte, []byte) { return keys[i], accs[i], accs[n-1-i] }
	benchPair(b, "merge-encode", int64(len(AppendTriples(nil, n, triple))),
		func(buf []byte) []byte { return AppendTriples(buf, n, triple) },
		func(buf []byte) []byte { return appendTriplesV5(buf, n, triple) })
	pair := func(i int) ([]byte, []byte) { return keys[i], accs[i] }
	benchPair(b, "result-encode", int64(len(AppendPairs(nil, n, pair))),
		func(buf []byte) []byte { return AppendPairs(buf, n, pair) },
		func(buf []byte) []byte { return appendPairsV5(buf, n, pair) })
	var vals []Value
	benchDecode(b, "values-decode", int64(len(valuesAnswer)),
		func() (err error) { vals, err = DecodeValues(valuesAnswer, n, BodyNonNil, vals[:0]); return err },
		func() (err error) { vals, err = decodeValuesV5(valuesAnswer, n, BodyNonNil, vals[:0]); return err })
	benchDecode(b, "values-int", int64(len(intsAnswer)),
		func() (err error) { vals, err = DecodeValues(intsAnswer, n, BodyInt, vals[:0]); return err },
		func() (err error) { vals, err = decodeValuesV5(intsAnswer, n, BodyInt, vals[:0]); return err })
	benchDecode(b, "init-decode", int64(len(initAnswer)),
		func() error { _, err := DecodeValue(initAnswer, BodyNonNil); return err },
		func() error { _, err := decodeValueV5(initAnswer, BodyNonNil); return err })
}

// benchPair runs name/hand and name/msgpack-v5 on encoders that append to
// a reused buffer.
func benchPair(b *testing.B, name string, size int64, hand, v5 func(buf []byte) []byte) {
	for _, c := range []struct {
		codec  string
		encode func([]byte) []byte
	}{{"hand", hand}, {"msgpack-v5", v5}} {
		b.Run(name+"/"+c.codec, func(b *testing.B) {
			b.SetBytes(size)
			var buf []byte
			for b.Loop() {
				buf = c.encode(buf[:0])
			}
		})
	}
}

// benchDecode runs name/hand and name/msgpack-v5 on decoders.
func benchDecode(b *testing.B, name string, size int64, hand, v5 func() error) {
	for _, c := range []struct {
		codec  string
		decode func() error
	}{{"hand", hand}, {"msgpack-v5", v5}} {
		b.Run(name+"/"+c.codec, func(b *testing.B) {
			b.SetBytes(size)
			for b.Loop() {
				if err := c.decode(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// appendManifestV5 is AppendManifest through msgpack/v5, as issue 19 first
// wrote it.
func appendManifestV5(b []byte, m *Manifest) []byte {
	return appendV5(b, func(enc *msgpackv5.Encoder) error {
		n := 2
		for _, s := range []string{m.Name, m.Version, m.SDK} {
			if s != "" {
				n++
			}
		}
		err := errors.Join(enc.EncodeMapLen(n), enc.EncodeString("abi"), enc.EncodeInt(int64(m.ABI)),
			enc.EncodeString("kinds"), enc.EncodeArrayLen(len(m.Kinds)))
		for _, k := range m.Kinds {
			err = errors.Join(err, enc.EncodeString(string(k)))
		}
		for _, kv := range [][2]string{{"name", m.Name}, {"version", m.Version}, {"sdk", m.SDK}} {
			if kv[1] != "" {
				err = errors.Join(err, enc.EncodeString(kv[0]), enc.EncodeString(kv[1]))
			}
		}
		return err
	})
}

// decodeManifestHand is DecodeManifest through the hand-written codec, as
// it was before issue 19 switched the manifest to msgpack/v5.
func decodeManifestHand(b []byte) (Manifest, error) {
	var m Manifest
	var r msgpack.Reader
	r.Reset(b)
	n, err := r.MapHeader()
	if err != nil {
		return m, malformed("manifest: %v", err)
	}
	seenABI, seenKinds := false, false
	for i := 0; i < n; i++ {
		key, err := r.StrBytes()
		if err != nil {
			return m, malformed("manifest key %d: %v", i, err)
		}
		switch string(key) {
		case "abi":
			v, err := r.Int()
			if err != nil {
				return m, malformed("manifest abi: %v", err)
			}
			m.ABI, seenABI = int(v), true
		case "kinds":
			k, err := r.ArrayHeader()
			if err != nil {
				return m, malformed("manifest kinds: %v", err)
			}
			for j := 0; j < k; j++ {
				s, err := r.Str()
				if err != nil {
					return m, malformed("manifest kinds[%d]: %v", j, err)
				}
				kind := Kind(s)
				if kind.Exports() == nil {
					return m, malformed("manifest kinds[%d]: unknown kind %q (known: %s)", j, s, knownKinds)
				}
				if m.Has(kind) {
					return m, malformed("manifest kinds: %q listed twice", s)
				}
				m.Kinds = append(m.Kinds, kind)
			}
			seenKinds = true
		case "name", "version", "sdk":
			s, err := r.StrBytes()
			if err != nil {
				return m, malformed("manifest %s: %v", key, err)
			}
			if len(s) > MaxManifestString {
				// They travel in registry events, logs and metrics.
				return m, malformed("manifest %s of %d bytes: at most %d", key, len(s), MaxManifestString)
			}
			switch string(key) {
			case "name":
				m.Name = string(s)
			case "version":
				m.Version = string(s)
			default:
				m.SDK = string(s)
			}
		default:
			if err := r.Skip(); err != nil {
				return m, malformed("manifest %q: %v", key, err)
			}
		}
	}
	if r.Len() != 0 {
		return m, malformed("manifest: %d trailing bytes", r.Len())
	}
	switch {
	case !seenABI:
		return m, malformed("manifest has no \"abi\" key")
	case m.ABI != Version:
		return m, fmt.Errorf("manifest says abi %d; this host supports %d", m.ABI, Version)
	case !seenKinds || len(m.Kinds) == 0:
		return m, malformed("manifest names no kinds")
	}
	return m, nil
}

// decodeTimersHand is DecodeTimers through the hand-written codec, as it
// was before issue 19 switched it to msgpack/v5.
func decodeTimersHand(b []byte, out []Timer) ([]Timer, error) {
	var r msgpack.Reader
	r.Reset(b)
	n, err := r.ArrayHeader()
	if err != nil {
		return out, fmt.Errorf("timers: %w", err)
	}
	if n > r.Len()/4 {
		return out, fmt.Errorf("timers: %d timers in %d bytes", n, r.Len())
	}
	for range n {
		m, err := r.ArrayHeader()
		if err != nil {
			return out, fmt.Errorf("timer: %w", err)
		}
		if m != 3 {
			return out, fmt.Errorf("timer: array of %d elements, want 3", m)
		}
		var t Timer
		if t.Key, err = r.Bytes(); err != nil {
			return out, fmt.Errorf("timer key: %w", err)
		}
		if t.Time, err = r.Int(); err != nil {
			return out, fmt.Errorf("timer time: %w", err)
		}
		d, err := r.Int()
		if err != nil {
			return out, fmt.Errorf("timer domain: %w", err)
		}
		if t.Domain = TimeDomain(d); !t.Domain.Valid() || int64(t.Domain) != d {
			return out, fmt.Errorf("timer domain %d: want 0 (event) or 1 (processing)", d)
		}
		out = append(out, t)
	}
	if r.Len() != 0 {
		return out, fmt.Errorf("timers: %d bytes after the envelope", r.Len())
	}
	return out, nil
}

// v5Encoder is a msgpack/v5 Encoder whose writer appends to a byte slice,
// so that an envelope written through msgpack/v5 keeps the shape of the
// Append functions: the caller's buffer is extended, never copied.
type v5Encoder struct {
	buf []byte
	enc *msgpackv5.Encoder
}

// Write appends p; it never fails.
func (e *v5Encoder) Write(p []byte) (int, error) {
	e.buf = append(e.buf, p...)
	return len(p), nil
}

// WriteByte appends c; it never fails. With it the Encoder writes to e
// directly, without a wrapper of its own.
func (e *v5Encoder) WriteByte(c byte) error {
	e.buf = append(e.buf, c)
	return nil
}

var v5Encoders = sync.Pool{New: func() any {
	e := new(v5Encoder)
	e.enc = msgpackv5.NewEncoder(e)
	return e
}}

// appendV5 appends to b what write encodes, through a pooled msgpack/v5
// Encoder, and returns the extended slice.
func appendV5(b []byte, write func(enc *msgpackv5.Encoder) error) []byte {
	e := v5Encoders.Get().(*v5Encoder)
	e.buf = b
	err := write(e.enc)
	b, e.buf = e.buf, nil
	v5Encoders.Put(e)
	if err != nil {
		// The Encode methods fail only when their writer does, and
		// v5Encoder's never does.
		panic("abi test: msgpack/v5 encoding into a slice failed: " + err.Error())
	}
	return b
}
