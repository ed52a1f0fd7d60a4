package abi_test

import (
	"bytes"
	"errors"
	"runtime"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/abi/msgpack"
)

// allocated returns the bytes allocated while fn runs.
func allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// oneRecord returns a one-result process answer whose record has the given
// headers array (its header bytes and then the elements).
func oneRecord(headers []byte) []byte {
	b := []byte{0x91, 0x92, 0x00, 0x91, 0x94, 0xc0, 0xc0, 0xc0}
	return append(b, headers...)
}

var oneIn = []abi.Record{{Value: []byte("x")}}

// TestDecodeClaimedCounts: an answer that claims more elements than its
// bytes can hold is refused before the host allocates for the claim.
func TestDecodeClaimedCounts(t *testing.T) {
	for _, tc := range []struct {
		name   string
		answer []byte
	}{
		// 983,040 headers claimed, with 1 MiB of bytes behind the claim: more
		// than a header per 3 bytes.
		{"headers", oneRecord(append([]byte{0xdd, 0x00, 0x0f, 0x00, 0x00}, make([]byte, 1<<20)...))},
		{"records", append([]byte{0x91, 0x92, 0x00, 0xdd, 0x00, 0x10, 0x00, 0x00}, bytes.Repeat([]byte{0xc0}, 1<<20)...)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out abi.ProcessOutput
			var err error
			n := allocated(func() { err = abi.DecodeProcessOutput(tc.answer, oneIn, &out) })
			// The answer is 1 MiB; decoding it must not allocate a multiple
			// of it (before the bound: 39 MB of headers, 84 MB of records).
			if n > 1<<20 {
				t.Fatalf("decoding allocated %d bytes", n)
			}
			if !errors.Is(err, abi.ErrMalformed) || !strings.Contains(err.Error(), "cannot fit") {
				t.Fatalf("err = %v, want malformed: cannot fit", err)
			}
		})
	}
}

func emptyHeaders(n int) []byte {
	b := msgpack.AppendArrayHeader(nil, n)
	for range n {
		b = append(b, 0x92, 0xa0, 0xc0)
	}
	return b
}

// TestDecodeLimits: an answer whose counts fit its bytes but exceed the
// documented limits is malformed; one at the limit decodes.
func TestDecodeLimits(t *testing.T) {
	var out abi.ProcessOutput
	if err := abi.DecodeProcessOutput(oneRecord(emptyHeaders(abi.MaxRecordHeaders)), oneIn, &out); err != nil {
		t.Fatalf("%d headers: %v", abi.MaxRecordHeaders, err)
	}
	if len(out.Records) != 1 || len(out.Records[0].Headers) != abi.MaxRecordHeaders {
		t.Fatalf("decoded %d records", len(out.Records))
	}
	out.Reset()
	err := abi.DecodeProcessOutput(oneRecord(emptyHeaders(abi.MaxRecordHeaders+1)), oneIn, &out)
	if !errors.Is(err, abi.ErrMalformed) || !strings.Contains(err.Error(), "limit of 1000 per record") {
		t.Fatalf("%d headers: err = %v", abi.MaxRecordHeaders+1, err)
	}

	// More records than MaxOutputRecords in one answer, spread over results.
	in := make([]abi.Record, 2)
	half := abi.MaxOutputRecords/2 + 1
	answer := []byte{0x92}
	for range 2 {
		answer = append(msgpack.AppendArrayHeader(append(answer, 0x92, 0x00), half), bytes.Repeat([]byte{0x94, 0xc0, 0xc0, 0xc0, 0xc0}, half)...)
	}
	out.Reset()
	err = abi.DecodeProcessOutput(answer, in, &out)
	if !errors.Is(err, abi.ErrMalformed) || !strings.Contains(err.Error(), "more than 1000000 output records") {
		t.Fatalf("%d records: err = %v", 2*half, err)
	}

	// More headers than MaxOutputHeaders in one answer: 1001 records of
	// 1000 headers.
	n := abi.MaxOutputHeaders/abi.MaxRecordHeaders + 1
	answer = msgpack.AppendArrayHeader([]byte{0x91, 0x92, 0x00}, n)
	rec := append([]byte{0x94, 0xc0, 0xc0, 0xc0}, emptyHeaders(abi.MaxRecordHeaders)...)
	for range n {
		answer = append(answer, rec...)
	}
	out.Reset()
	err = abi.DecodeProcessOutput(answer, oneIn, &out)
	if !errors.Is(err, abi.ErrMalformed) || !strings.Contains(err.Error(), "more than 1000000 headers") {
		t.Fatalf("%d headers: err = %v", n*abi.MaxRecordHeaders, err)
	}
}

// TestDecodeAggAddErrorCount: a group reports each of its records at most
// once.
func TestDecodeAggAddErrorCount(t *testing.T) {
	groups := []abi.Group{{Key: []byte("a"), Records: fuzzIn}}
	answer := []byte{0x91, 0x92, 0xc4, 0x00, 0x93}
	for range 3 {
		answer = append(answer, 0x93, 0x00, 0x01, 0xa0)
	}
	_, err := abi.DecodeAggAddOutput(answer, groups, nil)
	if !errors.Is(err, abi.ErrMalformed) || !strings.Contains(err.Error(), "3 errors for 2 records") {
		t.Fatalf("err = %v", err)
	}
}

// TestDecodeLongReason: a reason longer than MaxReasonBytes is kept cut,
// with a marker giving its length, in every decoder that reads reasons.
func TestDecodeLongReason(t *testing.T) {
	long := strings.Repeat("é", 1<<20) // 2 MiB, two bytes a rune
	check := func(what, got string) {
		t.Helper()
		if len(got) > abi.MaxReasonBytes || !utf8.ValidString(got) || !strings.HasSuffix(got, "(truncated, 2097152 bytes)") ||
			!strings.HasPrefix(got, "éé") {
			t.Fatalf("%s: reason of %d bytes ending %q", what, len(got), got[max(0, len(got)-40):])
		}
	}
	var out abi.ProcessOutput
	if err := abi.DecodeProcessOutput(abi.AppendResultError([]byte{0x91}, abi.CodeRejected, long), oneIn, &out); err != nil {
		t.Fatal(err)
	}
	check("process", out.Errors[0].Reason)

	vals, err := abi.DecodeValues(abi.AppendResultError([]byte{0x91}, abi.CodeRejected, long), 1, abi.BodyBytes, nil)
	if err != nil {
		t.Fatal(err)
	}
	check("values", vals[0].Reason)

	added := msgpack.AppendStr([]byte{0x91, 0x92, 0xc4, 0x00, 0x91, 0x93, 0x00, 0x01}, long)
	got, err := abi.DecodeAggAddOutput(added, []abi.Group{{Records: oneIn}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	check("agg add", got[0].Errors[0].Reason)
}

func TestTruncateReason(t *testing.T) {
	for _, tc := range []struct {
		s    string
		max  int
		want string
	}{
		{"short", 10, "short"},
		{strings.Repeat("a", 40), 30, "aaaaa …(truncated, 40 bytes)"},
		{strings.Repeat("a", 40), 5, " …("},
	} {
		got := abi.TruncateReason(tc.s, tc.max)
		if got != tc.want || len(got) > tc.max {
			t.Errorf("TruncateReason(%d bytes, %d) = %q, want %q", len(tc.s), tc.max, got, tc.want)
		}
		if again := abi.TruncateReason(got, tc.max); again != got {
			t.Errorf("not idempotent: %q then %q", got, again)
		}
	}
}

// TestManifestStringsBounded: a manifest name (or version, or sdk) over
// MaxManifestString makes the manifest invalid; one at it decodes.
func TestManifestStringsBounded(t *testing.T) {
	for _, n := range []int{abi.MaxManifestString, abi.MaxManifestString + 1} {
		m := abi.Manifest{ABI: 1, Kinds: []abi.Kind{abi.KindProcess}, Name: strings.Repeat("n", n)}
		_, err := abi.DecodeManifest(abi.AppendManifest(nil, &m))
		if ok := n <= abi.MaxManifestString; (err == nil) != ok || (!ok && !strings.Contains(err.Error(), "manifest name of 257 bytes: at most 256")) {
			t.Fatalf("name of %d bytes: err = %v", n, err)
		}
	}
}

// TestV5DecodersClaimedLengths: the decoders that read through msgpack/v5
// (DecodeManifest, DecodeTimers) refuse a length or a nesting their bytes
// cannot hold before allocating for it or recursing into it, as the
// hand-written ones do.
func TestV5DecodersClaimedLengths(t *testing.T) {
	junk := bytes.Repeat([]byte{0xc0}, 1<<20)
	manifest := func(key string, value ...[]byte) []byte {
		b := msgpack.AppendStr(msgpack.AppendInt(msgpack.AppendStr([]byte{0x82}, "abi"), 1), key)
		for _, v := range value {
			b = append(b, v...)
		}
		return b
	}
	decodeManifest := func(b []byte) error { _, err := abi.DecodeManifest(b); return err }
	decodeTimers := func(b []byte) error { _, err := abi.DecodeTimers(b, nil); return err }
	for _, tc := range []struct {
		name   string
		input  []byte
		decode func([]byte) error
		want   string
	}{
		{"kinds array32", manifest("kinds", []byte{0xdd, 0x7f, 0xff, 0xff, 0xff}, junk), decodeManifest, "manifest kinds: msgpack: unexpected end of input"},
		{"name str32", manifest("name", []byte{0xdb, 0x7f, 0xff, 0xff, 0xff}, junk), decodeManifest, "manifest name: msgpack: unexpected end of input"},
		{"bin32 over 2^31", manifest("x", []byte{0xc6, 0xff, 0xff, 0xff, 0xff}, junk), decodeManifest, "length 4294967295 too large"},
		{"unknown key nested 1 MiB deep", manifest("x", bytes.Repeat([]byte{0x91}, 1<<20)), decodeManifest, "nesting deeper than 64"},
		{"timers array32", append([]byte{0xdd, 0x00, 0x0f, 0xff, 0xff}, junk...), decodeTimers, "timers in 1048576 bytes"},
		{"timer key bin32", append([]byte{0x91, 0x93, 0xc6, 0x7f, 0xff, 0xff, 0xff}, junk...), decodeTimers, "timer key: msgpack: unexpected end of input"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			// The input is 1 MiB; decoding it must not allocate for what
			// it claims (up to 4 GiB).
			if n := allocated(func() { err = tc.decode(tc.input) }); n > 64<<10 {
				t.Fatalf("decoding allocated %d bytes", n)
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
}
