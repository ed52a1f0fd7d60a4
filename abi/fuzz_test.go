package abi_test

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/abi/msgpack"
)

// The fuzz targets cover every decoder that reads guest output. Each checks
// that decoding never panics, and that what decodes re-encodes to an
// envelope that decodes to the same values.

var fuzzIn = []abi.Record{
	{Key: []byte("k"), Value: []byte("v"), Timestamp: 7},
	{Key: nil, Value: []byte{}, Timestamp: -1, Headers: []abi.Header{{Key: "h", Value: nil}}},
}

func processSeeds() [][]byte {
	ok := []byte{0x92}
	for _, r := range fuzzIn {
		ok = abi.AppendProcessResult(ok, []abi.Record{r, r})
	}
	mixed := abi.AppendProcessResult([]byte{0x92}, nil)
	mixed = abi.AppendResultError(mixed, abi.CodeRejected, "no")
	long := abi.AppendResultError([]byte{0x92}, abi.CodeRejected, strings.Repeat("r", abi.MaxReasonBytes+1))
	long = abi.AppendProcessResult(long, nil)
	claim := []byte{0x92, 0x92, 0x00, 0x91, 0x94, 0xc0, 0xc0, 0xc0, 0xdc, 0x03, 0xe9, 0x92, 0xa0, 0xc0, 0x92, 0x00, 0x90}
	return [][]byte{ok, mixed, long, claim, {0x92, 0x92, 0x00, 0x90, 0x92, 0x00, 0x91, 0x94, 0xc0, 0xc0, 0xc0, 0xc0}, {0xdd, 0xff, 0xff, 0xff, 0xff}, {0x91}}
}

func FuzzDecodeProcessOutput(f *testing.F) {
	for _, s := range processSeeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var out abi.ProcessOutput
		if err := abi.DecodeProcessOutput(b, fuzzIn, &out); err != nil {
			return
		}
		checkDecodedSize(t, b, &out)
		// Re-encode: group outputs by source, then decode again.
		again := []byte{0x92}
		ri, ei := 0, 0
		for i := range fuzzIn {
			if ei < len(out.Errors) && out.Errors[ei].Index == i {
				again = abi.AppendResultError(again, out.Errors[ei].Code, out.Errors[ei].Reason)
				ei++
				continue
			}
			start := ri
			for ri < len(out.Records) && int(out.From[ri]) == i {
				ri++
			}
			again = abi.AppendProcessResult(again, out.Records[start:ri])
		}
		var out2 abi.ProcessOutput
		if err := abi.DecodeProcessOutput(again, fuzzIn, &out2); err != nil {
			t.Fatalf("re-encoded output does not decode: %v", err)
		}
		if !sameRecords(out.Records, out2.Records) || !reflect.DeepEqual(out.From, out2.From) || len(out.Errors) != len(out2.Errors) {
			t.Fatalf("round trip changed the output:\n%+v\n%+v", out, out2)
		}
	})
}

// checkDecodedSize asserts the bounds of ABI.md 5.5: the decoded structure
// of an answer is bounded by its bytes (at most one record per 5 bytes, one
// header per 3) and by the limits, and kept reasons by MaxReasonBytes.
func checkDecodedSize(t *testing.T, b []byte, out *abi.ProcessOutput) {
	t.Helper()
	headers := 0
	for _, r := range out.Records {
		if len(r.Headers) > abi.MaxRecordHeaders {
			t.Fatalf("record with %d headers", len(r.Headers))
		}
		headers += len(r.Headers)
	}
	if len(out.Records) > len(b)/5 || len(out.Records) > abi.MaxOutputRecords || headers > len(b)/3 || headers > abi.MaxOutputHeaders {
		t.Fatalf("%d bytes decoded to %d records and %d headers", len(b), len(out.Records), headers)
	}
	for _, e := range out.Errors {
		if len(e.Reason) > abi.MaxReasonBytes {
			t.Fatalf("reason of %d bytes kept", len(e.Reason))
		}
	}
}

func sameRecords(a, b []abi.Record) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if !bytes.Equal(x.Key, y.Key) || (x.Key == nil) != (y.Key == nil) || !bytes.Equal(x.Value, y.Value) ||
			(x.Value == nil) != (y.Value == nil) || x.Timestamp != y.Timestamp || len(x.Headers) != len(y.Headers) {
			return false
		}
	}
	return true
}

func FuzzDecodeAggAddOutput(f *testing.F) {
	groups := []abi.Group{{Key: []byte("a"), Records: fuzzIn}}
	f.Add([]byte{0x91, 0x92, 0xc4, 0x01, 0x00, 0x90})
	f.Add([]byte{0x91, 0x92, 0xc4, 0x00, 0x91, 0x93, 0x01, 0x01, 0xa1, 'x'})
	f.Add([]byte{0x91, 0x92, 0xc0, 0x90})
	f.Fuzz(func(t *testing.T, b []byte) {
		out, err := abi.DecodeAggAddOutput(b, groups, nil)
		if err != nil {
			return
		}
		if len(out) != 1 || out[0].Acc == nil || len(out[0].Errors) > len(fuzzIn) {
			t.Fatalf("decoded %+v", out)
		}
		for _, e := range out[0].Errors {
			if e.Index < 0 || e.Index >= len(fuzzIn) || e.Code == abi.CodeOK || len(e.Reason) > abi.MaxReasonBytes {
				t.Fatalf("bad error entry %+v", e)
			}
		}
	})
}

func FuzzDecodeValues(f *testing.F) {
	f.Add([]byte{0x92, 0x92, 0x00, 0xc4, 0x01, 'x', 0x92, 0x02, 0xa0}, uint8(0))
	f.Add([]byte{0x92, 0x92, 0x00, 0xd3, 0, 0, 0, 0, 0, 0, 0, 1, 0x92, 0x00, 0x05}, uint8(2))
	f.Add([]byte{0x92, 0x92, 0x00, 0xc0, 0x92, 0x00, 0xc0}, uint8(1))
	f.Fuzz(func(t *testing.T, b []byte, bt uint8) {
		typ := abi.BodyType(bt % 3)
		vals, err := abi.DecodeValues(b, 2, typ, nil)
		if err != nil {
			return
		}
		for _, v := range vals {
			if len(v.Reason) > abi.MaxReasonBytes {
				t.Fatalf("reason of %d bytes kept", len(v.Reason))
			}
		}
		again := msgpack.AppendArrayHeader(nil, len(vals))
		for _, v := range vals {
			if v.Code != abi.CodeOK {
				again = abi.AppendResultError(again, v.Code, v.Reason)
				continue
			}
			again = append(again, 0x92, 0x00)
			if typ == abi.BodyInt {
				again = msgpack.AppendInt(again, v.Int)
			} else {
				again = msgpack.AppendBin(again, v.Bytes)
			}
		}
		vals2, err := abi.DecodeValues(again, 2, typ, nil)
		if err != nil || !reflect.DeepEqual(vals, vals2) {
			t.Fatalf("round trip: %v\n%+v\n%+v", err, vals, vals2)
		}
	})
}

func FuzzDecodeManifest(f *testing.F) {
	f.Add(abi.AppendManifest(nil, &abi.Manifest{ABI: 1, Kinds: []abi.Kind{abi.KindProcess, abi.KindAggregate}, Name: "n", Version: "1", SDK: "go"}))
	f.Add([]byte("\x82\xa3abi\x01\xa5kinds\x91\xa7process"))
	f.Add([]byte("\x83\xa3abi\x01\xa5kinds\x91\xa4join\xa5extra\x81\x01\x92\xc0\xc3"))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := abi.DecodeManifest(b)
		if err != nil {
			return
		}
		if len(m.Name) > abi.MaxManifestString || len(m.Version) > abi.MaxManifestString || len(m.SDK) > abi.MaxManifestString {
			t.Fatalf("manifest strings of %d, %d, %d bytes", len(m.Name), len(m.Version), len(m.SDK))
		}
		m2, err := abi.DecodeManifest(abi.AppendManifest(nil, &m))
		if err != nil || !reflect.DeepEqual(m, m2) {
			t.Fatalf("round trip: %v\n%+v\n%+v", err, m, m2)
		}
	})
}

func FuzzSkip(f *testing.F) {
	f.Add([]byte{0x93, 0xc0, 0x81, 0xa1, 'a', 0xcf, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xc3})
	f.Add([]byte{0xdc, 0x00, 0x02, 0xd9, 0x01, 'x', 0xc6, 0, 0, 0, 1, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		r := msgpack.NewReader(b)
		for r.Len() > 0 {
			before := r.Len()
			if err := r.Skip(); err != nil {
				return
			}
			if r.Len() >= before {
				t.Fatalf("skip made no progress at %d", r.Offset())
			}
		}
	})
}

// FuzzDecodeTimers checks the eddy_timer envelope decoder on any bytes: no
// panic, no count it cannot hold, and what it accepts encodes back to
// timers that decode the same.
func FuzzDecodeTimers(f *testing.F) {
	f.Add(abi.AppendTimers(nil, []abi.Timer{{Key: []byte("k"), Time: 5}, {Key: []byte{}, Time: -1, Domain: abi.ProcessingTime}}))
	f.Add([]byte{0xdd, 0xff, 0xff, 0xff, 0xff})
	f.Add([]byte{0x91, 0x93, 0xc4, 0x00, 0x01, 0x07})
	f.Fuzz(func(t *testing.T, b []byte) {
		ts, err := abi.DecodeTimers(b, nil)
		if err != nil {
			return
		}
		again, err := abi.DecodeTimers(abi.AppendTimers(nil, ts), nil)
		if err != nil || len(again) != len(ts) {
			t.Fatalf("%+v encodes to timers that decode as %+v (%v)", ts, again, err)
		}
		for i := range ts {
			if !bytes.Equal(ts[i].Key, again[i].Key) || ts[i].Time != again[i].Time || ts[i].Domain != again[i].Domain {
				t.Fatalf("timer %d: %+v, then %+v", i, ts[i], again[i])
			}
		}
	})
}
