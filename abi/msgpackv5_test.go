package abi

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"testing"

	v5 "github.com/vmihailenco/msgpack/v5"
	"github.com/vmihailenco/msgpack/v5/msgpcode"
)

// The batch envelope through github.com/vmihailenco/msgpack/v5's streaming
// Encoder and Decoder (no reflection), beside the hand-written codec of
// this package, for issue 19's comparison: BenchmarkEnvelope measures both
// on the same batches, FuzzCodecsAgree checks that what one writes the
// other reads identically.

// appendRecordsV5 is AppendRecords through msgpack/v5; buf is reused.
func appendRecordsV5(enc *v5.Encoder, buf *bytes.Buffer, recs []Record) ([]byte, error) {
	buf.Reset()
	enc.Reset(buf)
	if err := enc.EncodeArrayLen(len(recs)); err != nil {
		return nil, err
	}
	for i := range recs {
		if err := encodeRecordV5(enc, &recs[i], false); err != nil {
			return nil, err
		}
	}
	return buf.Bytes(), nil
}

// encodeRecordV5 writes a Record; nilTime writes a nil timestamp (an
// output record that inherits its input's).
func encodeRecordV5(enc *v5.Encoder, r *Record, nilTime bool) error {
	err := errors.Join(enc.EncodeArrayLen(4), enc.EncodeBytes(r.Key), enc.EncodeBytes(r.Value))
	if nilTime {
		err = errors.Join(err, enc.EncodeNil())
	} else {
		err = errors.Join(err, enc.EncodeInt(r.Timestamp))
	}
	err = errors.Join(err, enc.EncodeArrayLen(len(r.Headers)))
	for _, h := range r.Headers {
		err = errors.Join(err, enc.EncodeArrayLen(2), enc.EncodeString(h.Key), enc.EncodeBytes(h.Value))
	}
	return err
}

// appendProcessResultsV5 is a guest's eddy_process answer, one Result of
// outs[i] per input record, through msgpack/v5.
func appendProcessResultsV5(enc *v5.Encoder, buf *bytes.Buffer, outs [][]Record) ([]byte, error) {
	buf.Reset()
	enc.Reset(buf)
	err := enc.EncodeArrayLen(len(outs))
	for _, rs := range outs {
		err = errors.Join(err, enc.EncodeArrayLen(2), enc.EncodeInt(int64(CodeOK)), enc.EncodeArrayLen(len(rs)))
		for i := range rs {
			err = errors.Join(err, encodeRecordV5(enc, &rs[i], false))
		}
	}
	return buf.Bytes(), err
}

// decodeRecordsV5 is DecodeRecords through msgpack/v5 (its byte strings
// are copies: the Decoder reads from an io.Reader).
func decodeRecordsV5(dec *v5.Decoder, r *bytes.Reader, b []byte, out []Record) ([]Record, error) {
	r.Reset(b)
	dec.Reset(r)
	n, err := dec.DecodeArrayLen()
	if err != nil {
		return out, err
	}
	if n < 0 || n > len(b) {
		return out, fmt.Errorf("%d records in %d bytes", n, len(b))
	}
	for range n {
		out = append(out, Record{})
		if err := decodeRecordV5(dec, &out[len(out)-1], 0, len(b)); err != nil {
			return out, err
		}
	}
	if r.Len() != 0 {
		return out, fmt.Errorf("%d trailing bytes", r.Len())
	}
	return out, nil
}

// decodeRecordV5 reads a Record; a nil timestamp becomes inherit. max
// bounds the header count (the envelope's size).
func decodeRecordV5(dec *v5.Decoder, rec *Record, inherit int64, max int) error {
	m, err := dec.DecodeArrayLen()
	if err != nil {
		return err
	}
	if m != 4 {
		return fmt.Errorf("record has %d elements, want 4", m)
	}
	if rec.Key, err = dec.DecodeBytes(); err != nil {
		return err
	}
	if rec.Value, err = dec.DecodeBytes(); err != nil {
		return err
	}
	if c, err := dec.PeekCode(); err != nil {
		return err
	} else if c == msgpcode.Nil {
		_ = dec.DecodeNil()
		rec.Timestamp = inherit
	} else if rec.Timestamp, err = dec.DecodeInt64(); err != nil {
		return err
	}
	h, err := dec.DecodeArrayLen()
	if err != nil {
		return err
	}
	if h <= 0 {
		rec.Headers = nil
		return nil
	}
	if h > max {
		return fmt.Errorf("%d headers in %d bytes", h, max)
	}
	rec.Headers = make([]Header, h)
	for i := range rec.Headers {
		if p, err := dec.DecodeArrayLen(); err != nil || p != 2 {
			return fmt.Errorf("header: %d elements, %v", p, err)
		}
		if rec.Headers[i].Key, err = dec.DecodeString(); err != nil {
			return err
		}
		if rec.Headers[i].Value, err = dec.DecodeBytes(); err != nil {
			return err
		}
	}
	return nil
}

// decodeProcessOutputV5 is DecodeProcessOutput through msgpack/v5, without
// the output limits (the comparison is of the decoding).
func decodeProcessOutputV5(dec *v5.Decoder, r *bytes.Reader, b []byte, in []Record, out *ProcessOutput) error {
	r.Reset(b)
	dec.Reset(r)
	n, err := dec.DecodeArrayLen()
	if err != nil {
		return err
	}
	if n != len(in) {
		return fmt.Errorf("%d results for %d records", n, len(in))
	}
	for i := range n {
		if m, err := dec.DecodeArrayLen(); err != nil || m != 2 {
			return fmt.Errorf("result %d: %d elements, %v", i, m, err)
		}
		code, err := dec.DecodeInt64()
		if err != nil {
			return err
		}
		if Code(code) != CodeOK {
			reason, err := dec.DecodeString()
			if err != nil {
				return err
			}
			out.Errors = append(out.Errors, ItemError{Index: i, Code: Code(code), Reason: reason})
			continue
		}
		k, err := dec.DecodeArrayLen()
		if err != nil {
			return err
		}
		if k > len(b) {
			return fmt.Errorf("%d records in %d bytes", k, len(b))
		}
		for range k {
			out.Records = append(out.Records, Record{})
			if err := decodeRecordV5(dec, &out.Records[len(out.Records)-1], in[i].Timestamp, len(b)); err != nil {
				return err
			}
			out.From = append(out.From, int32(i))
		}
	}
	if r.Len() != 0 {
		return fmt.Errorf("%d trailing bytes", r.Len())
	}
	return nil
}

// envelopeBatch is n records as the benchmark sends them: a 16-byte key,
// a 200-byte value, two headers.
func envelopeBatch(n int) []Record {
	recs := make([]Record, n)
	for i := range recs {
		recs[i] = Record{Key: fmt.Appendf(nil, "key-%012d", i), Value: bytes.Repeat([]byte{'v'}, 200), Timestamp: 1_700_000_000_000 + int64(i),
			Headers: []Header{{Key: "eddy.source.topic", Value: []byte("bids")}, {Key: "trace", Value: []byte("0123456789abcdef")}}}
	}
	return recs
}

// BenchmarkEnvelope encodes a 1,024-record batch (the input envelope) and
// decodes a guest's answer to it (one record per input) with the
// hand-written codec and with msgpack/v5's streaming API, buffers reused.
func BenchmarkEnvelope(b *testing.B) {
	recs := envelopeBatch(1024)
	outs := make([][]Record, len(recs))
	for i := range recs {
		outs[i] = recs[i : i+1]
	}
	var buf bytes.Buffer
	enc := v5.NewEncoder(&buf)
	answer, err := appendProcessResultsV5(enc, &buf, outs)
	if err != nil {
		b.Fatal(err)
	}
	answer = slices.Clone(answer)
	size := int64(len(AppendRecords(nil, recs)))
	b.Run("encode/hand", func(b *testing.B) {
		b.SetBytes(size)
		var out []byte
		for b.Loop() {
			out = AppendRecords(out[:0], recs)
		}
	})
	b.Run("encode/msgpack-v5", func(b *testing.B) {
		b.SetBytes(size)
		for b.Loop() {
			if _, err := appendRecordsV5(enc, &buf, recs); err != nil {
				b.Fatal(err)
			}
		}
	})
	var out ProcessOutput
	b.Run("decode/hand", func(b *testing.B) {
		b.SetBytes(int64(len(answer)))
		for b.Loop() {
			out.Reset()
			if err := DecodeProcessOutput(answer, recs, &out); err != nil {
				b.Fatal(err)
			}
		}
	})
	dec := v5.NewDecoder(nil)
	var rd bytes.Reader
	b.Run("decode/msgpack-v5", func(b *testing.B) {
		b.SetBytes(int64(len(answer)))
		for b.Loop() {
			out.Reset()
			if err := decodeProcessOutputV5(dec, &rd, answer, recs, &out); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// FuzzCodecsAgree builds records from the fuzzer's bytes and checks that
// each codec reads what the other writes as the records written: the
// input envelope both ways, and a guest's answer (with nil timestamps)
// written by msgpack/v5 and read by the host's decoder.
func FuzzCodecsAgree(f *testing.F) {
	f.Add([]byte("k\x00v\x01h"), int64(0), uint8(1))
	f.Add([]byte{}, int64(-1<<63), uint8(0))
	f.Add(bytes.Repeat([]byte{0xff}, 70000), int64(1<<40), uint8(3))
	f.Fuzz(func(t *testing.T, data []byte, ts int64, nh uint8) {
		// Up to four records cut from data; nil and empty keys both occur.
		var recs []Record
		for i, part := range bytes.SplitN(data, []byte{0}, 4) {
			r := Record{Value: part, Timestamp: ts + int64(i)}
			if i%2 == 1 {
				r.Key = part[:len(part)/2]
			}
			for h := range int(nh % 4) {
				r.Headers = append(r.Headers, Header{Key: fmt.Sprintf("h%d-%s", h, part[:min(len(part), 3)]), Value: part[len(part)/2:]})
			}
			recs = append(recs, r)
		}
		var buf bytes.Buffer
		enc := v5.NewEncoder(&buf)
		dec := v5.NewDecoder(nil)
		var rd bytes.Reader

		hand := AppendRecords(nil, recs)
		got, err := decodeRecordsV5(dec, &rd, hand, nil)
		if err != nil {
			t.Fatalf("msgpack/v5 cannot read the hand-written envelope: %v", err)
		}
		sameRecords(t, "hand → msgpack/v5", recs, got)

		viaV5, err := appendRecordsV5(enc, &buf, recs)
		if err != nil {
			t.Fatal(err)
		}
		got, err = DecodeRecords(slices.Clone(viaV5), nil)
		if err != nil {
			t.Fatalf("the hand-written decoder cannot read msgpack/v5's envelope: %v", err)
		}
		sameRecords(t, "msgpack/v5 → hand", recs, got)

		// A guest's answer through msgpack/v5, one result per record, with
		// a nil timestamp (inherited) on odd records.
		buf.Reset()
		enc.Reset(&buf)
		err = enc.EncodeArrayLen(len(recs))
		for i := range recs {
			err = errors.Join(err, enc.EncodeArrayLen(2), enc.EncodeInt(0), enc.EncodeArrayLen(1), encodeRecordV5(enc, &recs[i], i%2 == 1))
		}
		if err != nil {
			t.Fatal(err)
		}
		var out ProcessOutput
		if err := DecodeProcessOutput(buf.Bytes(), recs, &out); err != nil {
			t.Fatalf("the host cannot read msgpack/v5's answer: %v", err)
		}
		sameRecords(t, "answer", recs, out.Records)
	})
}

// sameRecords fails t unless got holds want's records (nil and empty byte
// strings apart, as the ABI keeps them).
func sameRecords(t *testing.T, what string, want, got []Record) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d records, want %d", what, len(got), len(want))
	}
	for i := range want {
		w, g := &want[i], &got[i]
		if (w.Key == nil) != (g.Key == nil) || !bytes.Equal(w.Key, g.Key) || (w.Value == nil) != (g.Value == nil) || !bytes.Equal(w.Value, g.Value) ||
			w.Timestamp != g.Timestamp || len(w.Headers) != len(g.Headers) {
			t.Fatalf("%s: record %d: got %+v, want %+v", what, i, *g, *w)
		}
		for j := range w.Headers {
			if w.Headers[j].Key != g.Headers[j].Key || !bytes.Equal(w.Headers[j].Value, g.Headers[j].Value) {
				t.Fatalf("%s: record %d header %d: got %+v, want %+v", what, i, j, g.Headers[j], w.Headers[j])
			}
		}
	}
}
