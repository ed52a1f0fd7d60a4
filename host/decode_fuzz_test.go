package host

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	goruntime "runtime"
	"strconv"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/join"
	"github.com/eddy-streams/eddy/windowing"
)

// The decoders of what a node reads back from Kafka (its changelogs and
// repartition topics) and from its local store, fuzzed: they never panic,
// do not allocate from the lengths they read, and give back what their
// encoders wrote.

// allocSlack is what a fuzzed decoder may allocate beyond what its input's
// size allows: the fuzzing machinery allocates meanwhile too. An
// allocation from a length read from the input (up to 2^64) is far above.
const allocSlack = 1 << 20

// allocated returns the bytes fn allocated on the heap (and what other
// goroutines did meanwhile).
func allocated(fn func()) uint64 {
	var before, after goruntime.MemStats
	goruntime.ReadMemStats(&before)
	fn()
	goruntime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// FuzzParseAccKey checks parseAccKey on any bytes: no panic, no
// allocation from the lengths it reads, and a key it accepts is one
// appendAccKey writes.
func FuzzParseAccKey(f *testing.F) {
	f.Add(accKey([]byte("user-1"), windowing.Window{Start: 1000, End: 2000}))
	f.Add(accKey(nil, windowing.GlobalWindow))
	f.Add(accKey(bytes.Repeat([]byte{'k'}, 300), windowing.Window{Start: -5, End: 5}))
	f.Add(append(binary.AppendUvarint([]byte{'a'}, math.MaxUint64-6), make([]byte, 9)...)) // issue 14's 20 bytes
	f.Add([]byte("a"))
	f.Fuzz(func(t *testing.T, b []byte) {
		var (
			key []byte
			w   windowing.Window
			err error
		)
		if n := allocated(func() { key, w, err = parseAccKey(b) }); n > allocSlack {
			t.Fatalf("parseAccKey of %d bytes allocated %d bytes", len(b), n)
		}
		if err != nil {
			if !errors.Is(err, errCorruptEntry) {
				t.Fatalf("parseAccKey(%q): %v does not wrap errCorruptEntry", b, err)
			}
			return
		}
		if again := accKey(key, w); !bytes.Equal(again, b) {
			t.Fatalf("parseAccKey(%q) = %q %v, which encodes as %q", b, key, w, again)
		}
	})
}

// FuzzAccKeyRoundTrip checks that what appendAccKey writes parses back.
func FuzzAccKeyRoundTrip(f *testing.F) {
	f.Add([]byte("k"), int64(0), int64(1000))
	f.Add([]byte(nil), int64(math.MinInt64), int64(math.MaxInt64))
	f.Fuzz(func(t *testing.T, key []byte, start, end int64) {
		w := windowing.Window{Start: start, End: end}
		k, got, err := parseAccKey(accKey(key, w))
		if err != nil || !bytes.Equal(k, key) || got != w {
			t.Fatalf("accKey(%q, %v) parses as %q %v, %v", key, w, k, got, err)
		}
		if sk := accKey(key, w); !bytes.Equal(keyOf(sk, len(key)), key) {
			t.Fatalf("keyOf(%q) = %q", sk, keyOf(sk, len(key)))
		}
	})
}

// FuzzParseCount checks the decoder of global window counts: no panic, and
// what saveWatermark writes for a count parses back.
func FuzzParseCount(f *testing.F) {
	f.Add(binary.AppendUvarint(nil, 3))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, v []byte) {
		n, err := parseCount(v)
		if err != nil {
			return
		}
		if n < 0 || n > math.MaxInt32 || !bytes.Equal(binary.AppendUvarint(nil, uint64(n)), v) {
			t.Fatalf("parseCount(%x) = %d", v, n)
		}
	})
}

// FuzzParseInputTime checks the decoder of input times: no panic, and what
// saveInputTimes writes parses back.
func FuzzParseInputTime(f *testing.F) {
	f.Add(inputTimeKey(3), binary.BigEndian.AppendUint64(nil, 1700000000000))
	f.Add([]byte("w"), []byte{1})
	f.Fuzz(func(t *testing.T, k, v []byte) {
		in, at, err := parseInputTime(k, v)
		if err != nil {
			return
		}
		if !bytes.Equal(inputTimeKey(in), k) || !bytes.Equal(binary.BigEndian.AppendUint64(nil, uint64(at)), v) {
			t.Fatalf("parseInputTime(%x, %x) = %d %d", k, v, in, at)
		}
	})
}

// FuzzBufferValue checks the decoder of join buffer values: no panic, and
// what storeBuffer.Put writes is accepted.
func FuzzBufferValue(f *testing.F) {
	rec := abi.Record{Key: []byte("k"), Value: []byte("v"), Timestamp: 7, Headers: []abi.Header{{Key: "h", Value: []byte("x")}}}
	f.Add(append([]byte{1}, join.AppendRecord(nil, &rec)...))
	f.Add([]byte{0})
	f.Add([]byte{2, 1})
	f.Fuzz(func(t *testing.T, v []byte) {
		var r abi.Record
		var err error
		if n := allocated(func() { err = checkBufferValue(v, &r) }); n > uint64(32*len(v))+allocSlack {
			t.Fatalf("checkBufferValue of %d bytes allocated %d bytes", len(v), n)
		}
		if err != nil {
			return
		}
		if again := append([]byte{v[0]}, join.AppendRecord(nil, &r)...); !bytes.Equal(again, v) {
			t.Fatalf("buffer value %x decodes as %+v, which encodes as %x", v, r, again)
		}
	})
}

// FuzzRepartitionHeaders checks the reading of a repartition record's
// headers on a task with four upstream inputs: no panic, errors only for
// what is not what sendProgress and process write, and those read back.
func FuzzRepartitionHeaders(f *testing.F) {
	f.Add("2", "1700000000000", true, true, true)
	f.Add("3", "", true, false, false)
	f.Add("not a number", "soon", true, true, true)
	f.Add("4000", "-9223372036854775808", true, true, false)
	f.Add("-1", "1", false, true, true)
	f.Fuzz(func(t *testing.T, from, at string, hasFrom, hasProgress, byUpstream bool) {
		tk := &task{byUpstream: byUpstream, inputs: []int32{0, 1, 2, 3}}
		r := &kgo.Record{Headers: []kgo.RecordHeader{{Key: "user", Value: []byte("h")}}}
		if hasFrom {
			r.Headers = append(r.Headers, kgo.RecordHeader{Key: hdrFrom, Value: []byte(from)})
		}
		if hasProgress {
			r.Headers = append(r.Headers, kgo.RecordHeader{Key: hdrProgress, Value: []byte(at)})
		}
		var a abi.Record
		f, tm, mark, err := tk.parseRepartitionHeaders(r, &a)
		if mark != hasProgress {
			t.Fatalf("mark %v with progress header %v", mark, hasProgress)
		}
		if len(a.Headers) != 1 || a.Headers[0].Key != "user" {
			t.Fatalf("headers passed on: %v", a.Headers)
		}
		// Header values are quoted up to maxLoggedBytes (4 bytes each
		// at worst: \xff), whatever their length.
		if err != nil && len(err.Error()) > 4*maxLoggedBytes+100 {
			t.Fatalf("an error of %d bytes: %v", len(err.Error()), err)
		}
		wantFrom, fromErr := strconv.ParseInt(from, 10, 32)
		validFrom := !byUpstream || !hasFrom && !hasProgress || hasFrom && fromErr == nil && wantFrom >= 0 && wantFrom < 4
		wantAt, atErr := strconv.ParseInt(at, 10, 64)
		validAt := !hasProgress || atErr == nil
		if valid := validFrom && validAt; valid != (err == nil) {
			t.Fatalf("from %q (%v) at %q (%v), byUpstream %v: err %v", from, hasFrom, at, hasProgress, byUpstream, err)
		}
		if err != nil {
			return
		}
		if byUpstream && hasFrom && int64(f) != wantFrom {
			t.Fatalf("from %q read as %d", from, f)
		}
		if hasProgress && tm != wantAt {
			t.Fatalf("progress %q read as %d", at, tm)
		}
	})
}

// FuzzDecodeMember checks the decoder of a folding window's members (read
// back from a changelog): no panic, no allocation beyond what the input's
// size allows, and a member it accepts encodes to one that decodes the same.
func FuzzDecodeMember(f *testing.F) {
	f.Add(encodeMember(nil, 2, &abi.Record{Timestamp: 1700000000999, Value: []byte(`{"n":3}`),
		Headers: []abi.Header{{Key: "eddy.window.start", Value: []byte("1700000000000")}}}))
	f.Add([]byte("\x01\x00\x00\x00\x00\x00\x00\x00\x00\x01\x0ceddy.retract\x04truev"))
	f.Add(encodeMember(nil, 1, &abi.Record{Timestamp: -1}))
	f.Add([]byte{0x01, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, v []byte) {
		var (
			count uint64
			r     abi.Record
			err   error
		)
		if got := allocated(func() { count, r, err = decodeMember(v) }); got > uint64(64*len(v))+allocSlack {
			t.Fatalf("decodeMember of %d bytes allocated %d bytes", len(v), got)
		}
		if err != nil {
			if !errors.Is(err, errBadMember) {
				t.Fatalf("error %v does not wrap errBadMember", err)
			}
			return
		}
		if count == 0 || count > maxMemberCount {
			t.Fatalf("count %d accepted", count)
		}
		again := encodeMember(nil, count, &r)
		c2, r2, err := decodeMember(again)
		// Headers outside a member's identity are not kept.
		var hs []abi.Header
		for _, h := range r.Headers {
			if memberIdentity(h.Key) {
				hs = append(hs, h)
			}
		}
		if err != nil || c2 != count || r2.Timestamp != r.Timestamp || !bytes.Equal(r2.Value, r.Value) || len(r2.Headers) != len(hs) {
			t.Fatalf("re-encoded member %x decodes to %d %+v, %v; want %d %+v", again, c2, r2, err, count, r)
		}
		for i, h := range hs {
			if r2.Headers[i].Key != h.Key || !bytes.Equal(r2.Headers[i].Value, h.Value) {
				t.Fatalf("header %d: %+v, want %+v", i, r2.Headers[i], h)
			}
		}
	})
}

// FuzzParseTimerEntry checks the decoder of a timer store's keys (read back
// from the timers' changelog): no panic, and an entry it accepts is the one
// appendTimerEntry writes for what it read.
func FuzzParseTimerEntry(f *testing.F) {
	f.Add(appendTimerEntry(nil, abi.EventTime, 1700000000000, []byte("user-1")))
	f.Add(appendTimerEntry(nil, abi.ProcessingTime, math.MinInt64, nil))
	f.Add([]byte{timerPrefix, 7, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Add([]byte("t"))
	f.Fuzz(func(t *testing.T, k []byte) {
		tm, err := parseTimerEntry(k)
		if err != nil {
			if !errors.Is(err, errCorruptEntry) {
				t.Fatalf("error %v does not wrap errCorruptEntry", err)
			}
			return
		}
		if back := appendTimerEntry(nil, tm.Domain, tm.Time, tm.Key); !bytes.Equal(back, k) {
			t.Fatalf("entry %x parsed as %+v, which writes %x", k, tm, back)
		}
	})
}
