package eddy

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/eddy-streams/eddy/sdk/go/internal/msgpack"
)

// decodeGeneral decodes a batch with the general reader only, as the
// reference for the fast path of readRecords.
func decodeGeneral(in []byte) ([]Record, error) {
	var g2 guest
	g2.r.Reset(in)
	n := g2.r.ArrayLen()
	if err := g2.r.Err(); err != nil {
		return nil, err
	}
	recs := make([]Record, n)
	for i := range recs {
		if g2.readRecord(&recs[i]); g2.r.Err() != nil {
			return nil, g2.r.Err()
		}
	}
	return recs, g2.trailing()
}

// sameRecords compares records keeping nil and empty apart.
func sameRecords(a, b []Record) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if (x.Key == nil) != (y.Key == nil) || (x.Value == nil) != (y.Value == nil) ||
			!bytes.Equal(x.Key, y.Key) || !bytes.Equal(x.Value, y.Value) || x.Timestamp != y.Timestamp ||
			len(x.Headers) != len(y.Headers) {
			return false
		}
		for j := range x.Headers {
			if x.Headers[j].Key != y.Headers[j].Key || !bytes.Equal(x.Headers[j].Value, y.Headers[j].Value) ||
				(x.Headers[j].Value == nil) != (y.Headers[j].Value == nil) {
				return false
			}
		}
	}
	return true
}

// randomBatch encodes records of many shapes: the host's (which take the
// fast path) and every other form the ABI allows.
func randomBatch(rng *rand.Rand, n int) []byte {
	var b []byte
	b = msgpack.AppendArrayHeader(b, n)
	bytesOf := func(max int) []byte {
		switch rng.IntN(8) {
		case 0:
			return nil
		case 1:
			return []byte{}
		}
		v := make([]byte, rng.IntN(max))
		for i := range v {
			v[i] = byte(rng.IntN(256))
		}
		return v
	}
	appendBytes := func(b, v []byte) []byte {
		if v != nil && rng.IntN(6) == 0 { // str instead of bin
			return msgpack.AppendStr(b, string(v))
		}
		return msgpack.AppendBin(b, v)
	}
	for range n {
		b = append(b, 0x94)
		b = appendBytes(b, bytesOf(300))
		b = appendBytes(b, bytesOf(70000))
		switch rng.IntN(6) {
		case 0:
			b = msgpack.AppendInt(b, -rng.Int64N(1<<40))
		case 1:
			b = msgpack.AppendInt(b, rng.Int64N(200))
		case 2:
			b = append(b, msgpack.Int64, 0, 0, 1, 0x8b, 0xcf, 0xe5, 0x68, 0)
		default:
			b = append(b, msgpack.Uint64)
			b = append(b, 0, 0, 1, 0x8b, byte(rng.IntN(256)), 0xe5, 0x68, 0)
		}
		switch rng.IntN(5) {
		case 0:
			b = msgpack.AppendNil(b)
		case 1:
			b = msgpack.AppendArrayHeader(b, 2)
			b = append(b, 0x92)
			b = msgpack.AppendStr(b, "h1")
			b = msgpack.AppendBin(b, bytesOf(10))
			b = append(b, 0x92)
			b = msgpack.AppendStr(b, "h2")
			b = msgpack.AppendNil(b)
		default:
			b = msgpack.AppendArrayHeader(b, 0)
		}
	}
	return b
}

// TestReadRecordsFastPath checks that the fast path of readRecords decodes
// exactly what the general decoder does, on every shape.
func TestReadRecordsFastPath(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 300 {
		in := randomBatch(rng, 1+rng.IntN(20))
		want, err := decodeGeneral(in)
		if err != nil {
			t.Fatalf("batch %d: general decoder: %v", i, err)
		}
		var g2 guest
		n, err := g2.readRecords(in)
		if err != nil || n != len(want) || !sameRecords(g2.recs, want) {
			t.Fatalf("batch %d: fast path decoded %d records (%v), differently from the general decoder", i, n, err)
		}
	}
}

// FuzzReadRecords checks that readRecords never panics, and that whatever it
// accepts the general decoder accepts identically.
func FuzzReadRecords(f *testing.F) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 10 {
		f.Add(randomBatch(rng, 3))
	}
	f.Add(batch(2, 60))
	f.Fuzz(func(t *testing.T, in []byte) {
		var g2 guest
		n, err := g2.readRecords(in)
		if n < 0 || err != nil {
			return
		}
		want, err := decodeGeneral(in)
		if err != nil {
			t.Fatalf("readRecords accepted what the general decoder refuses: %v", err)
		}
		if !sameRecords(g2.recs, want) {
			t.Fatalf("readRecords decoded\n%+v\nthe general decoder\n%+v", g2.recs, want)
		}
	})
}

// TestMapAndFilterEncodeAlike checks that the encoder written out in
// mapFrom, appendMapResult and the general appendRecord give the same
// answers, so the copies cannot drift apart.
func TestMapAndFilterEncodeAlike(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for i := range 200 {
		in := randomBatch(rng, 1+rng.IntN(10))

		resetHandlers()
		Map(func(r Record) (Record, error) { return r, nil })
		mapOut, code := invoke(expProcess, in)
		mapOut = bytes.Clone(mapOut)
		if code != 0 {
			t.Fatalf("batch %d: map failed with %d", i, code)
		}

		resetHandlers()
		Filter(func(r Record) (bool, error) { return true, nil })
		filterOut, _ := invoke(expProcess, in)

		recs, _ := decodeGeneral(in)
		general := msgpack.AppendArrayHeader(nil, len(recs))
		for j := range recs {
			general = append(general, 0x92, 0x00, 0x91)
			general = appendRecord(general, &recs[j], recs[j].Timestamp)
		}
		if !bytes.Equal(mapOut, general) || !bytes.Equal(filterOut, general) {
			t.Fatalf("batch %d: map, filter and general encodings differ:\n% x\n% x\n% x", i, mapOut, filterOut, general)
		}
	}
	resetHandlers()
}

// TestMapChangedRecords checks the written-out encoder on records a Map
// changed in every way: nil and empty fields, long keys, other timestamps,
// headers.
func TestMapChangedRecords(t *testing.T) {
	outs := []Record{
		{Key: nil, Value: []byte("v")},
		{Key: []byte{}, Value: nil},
		{Key: bytes.Repeat([]byte("k"), 300), Value: []byte("v")},
		{Key: []byte("12345678"), Value: bytes.Repeat([]byte("v"), 70000)},
		{Key: []byte("1234567890123456"), Value: bytes.Repeat([]byte("v"), 256)},
		{Key: []byte("1234567"), Value: []byte{}, Timestamp: 1},
		{Key: []byte("k"), Value: []byte("v"), Timestamp: -5},
		{Key: []byte("k"), Value: []byte("v"), Headers: []Header{{Key: "a", Value: nil}}},
	}
	i := 0
	register(t, func() {
		Map(func(r Record) (Record, error) {
			o := outs[i%len(outs)]
			i++
			if o.Timestamp == 0 {
				o.Timestamp = r.Timestamp
			}
			return o, nil
		})
	})
	in := batch(len(outs), 60)
	out, code := invoke(expProcess, in)
	if code != 0 {
		t.Fatalf("code %d", code)
	}
	recs, _ := decodeGeneral(in)
	want := msgpack.AppendArrayHeader(nil, len(outs))
	for j, o := range outs {
		if o.Timestamp == 0 {
			o.Timestamp = recs[j].Timestamp
		}
		want = append(want, 0x92, 0x00, 0x91)
		want = appendRecord(want, &o, recs[j].Timestamp)
	}
	if !bytes.Equal(out, want) {
		t.Fatal("written-out encoder differs from appendRecord")
	}
}
