package eddy

import (
	"bytes"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/eddy-streams/eddy/sdk/go/internal/msgpack"
	"github.com/eddy-streams/eddy/sdk/go/internal/native"
)

// fromHex parses the hex dumps of ABI.md (spaces and newlines ignored).
func fromHex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.Join(strings.Fields(s), ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func register(t testing.TB, fn func()) {
	t.Helper()
	resetHandlers()
	t.Cleanup(resetHandlers)
	fn()
}

// TestWorkedExample checks the byte-exact example of ABI.md section 9.
func TestWorkedExample(t *testing.T) {
	register(t, func() {
		Map(func(r Record) (Record, error) {
			if string(r.Value) == "bad" {
				return r, errorString("bad json")
			}
			r.Value = bytes.ToUpper(r.Value)
			r.Headers = nil // the example's answer has no headers
			return r, nil
		})
	})
	in := fromHex(t, `91 94 c4 01 6b c4 02 68 69 cf 00 00 01 8b cf e5 68 00 91 92 a1 68 c4 01 76`)
	out, code := invoke(expProcess, in)
	if want := fromHex(t, `91 92 00 91 94 c4 01 6b c4 02 48 49 c0 90`); code != 0 || !bytes.Equal(out, want) {
		t.Fatalf("answer % x (code %d), want % x", out, code, want)
	}

	bad := fromHex(t, `91 94 c4 01 6b c4 03 62 61 64 cf 00 00 01 8b cf e5 68 00 90`)
	out, _ = invoke(expProcess, bad)
	if want := append(fromHex(t, `91 92 01 a8`), "bad json"...); !bytes.Equal(out, want) {
		t.Fatalf("answer % x, want % x", out, want)
	}

	SetName("upper", "")
	out, _ = invoke(expManifest, nil)
	want := fromHex(t, `84 a3 61 62 69 01 a5 6b 69 6e 64 73 91 a7 70 72 6f 63 65 73 73
		a4 6e 61 6d 65 a5 75 70 70 65 72`)
	want = msgpack.AppendStr(msgpack.AppendStr(want, "sdk"), SDKVersion)
	if !bytes.Equal(out, want) {
		t.Fatalf("manifest % x, want % x", out, want)
	}
}

type errorString string

func (e errorString) Error() string { return string(e) }

// batch returns an input envelope of n records of about size bytes each.
func batch(n, size int) []byte {
	var b []byte
	b = msgpack.AppendArrayHeader(b, n)
	val := bytes.Repeat([]byte("v"), size-40)
	for i := 0; i < n; i++ {
		b = append(b, 0x94)
		b = msgpack.AppendBin(b, []byte("key-0000000000"))
		b = msgpack.AppendBin(b, val)
		b = msgpack.AppendInt(b, 1700000000000+int64(i))
		b = append(b, 0x91, 0x92)
		b = msgpack.AppendStr(b, "content-type")
		b = msgpack.AppendBin(b, []byte("text/plain"))
	}
	return b
}

// TestProcessZeroAllocs is the allocation budget of the per-record path: a
// handler that does not allocate makes a whole batch allocation-free.
func TestProcessZeroAllocs(t *testing.T) {
	buf := make([]byte, 0, 512)
	tests := []struct {
		name string
		reg  func()
	}{
		{"map passthrough", func() { Map(func(r Record) (Record, error) { return r, nil }) }},
		{"map into reused buffer", func() {
			Map(func(r Record) (Record, error) {
				buf = append(buf[:0], r.Value...)
				r.Value = buf
				return r, nil
			})
		}},
		{"filter", func() { Filter(func(r Record) (bool, error) { return r.Timestamp%2 == 0, nil }) }},
		{"key", func() { KeyBy(func(r Record) ([]byte, error) { return r.Value[:3], nil }) }},
		{"timestamp", func() { Timestamp(func(r Record) (int64, error) { return r.Timestamp + 1, nil }) }},
	}
	in := batch(1000, 200)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			register(t, tt.reg)
			exp := expProcess
			switch {
			case reg.keyFn != nil:
				exp = expKey
			case reg.timeFn != nil:
				exp = expTimestamp
			}
			invoke(exp, in) // grow the reused buffers
			allocs := testing.AllocsPerRun(20, func() {
				if _, code := invoke(exp, in); code != 0 {
					t.Fatalf("code %d", code)
				}
			})
			if allocs != 0 {
				t.Fatalf("%v allocations per batch of 1000, want 0", allocs)
			}
		})
	}
}

func TestAggAddZeroAllocs(t *testing.T) {
	register(t, func() {
		Aggregate(Aggregator{
			Init: func() []byte { return make([]byte, 8) },
			Add: func(acc []byte, r Record) ([]byte, error) {
				acc[0]++
				return acc, nil
			},
		})
	})
	var in []byte
	in = msgpack.AppendArrayHeader(in, 2)
	for _, k := range []string{"a", "b"} {
		in = append(in, 0x93)
		in = msgpack.AppendBin(in, []byte(k))
		in = msgpack.AppendBin(in, make([]byte, 8))
		rec := batch(100, 100)
		in = append(in, rec...)
	}
	invoke(expAggAdd, in)
	if allocs := testing.AllocsPerRun(20, func() { invoke(expAggAdd, in) }); allocs != 0 {
		t.Fatalf("%v allocations per call, want 0", allocs)
	}
}

// TestAggAddLeavesInputAlone checks that Add, which may change its
// accumulator in place, never writes into the input envelope.
func TestAggAddLeavesInputAlone(t *testing.T) {
	register(t, func() {
		Aggregate(Aggregator{Add: func(acc []byte, r Record) ([]byte, error) {
			for i := range acc {
				acc[i] = 'X'
			}
			return acc, nil
		}})
	})
	var in []byte
	in = msgpack.AppendArrayHeader(in, 1)
	in = append(in, 0x93)
	in = msgpack.AppendBin(in, nil)
	in = msgpack.AppendBin(in, []byte("accumulator"))
	in = append(in, batch(2, 60)...)
	orig := append([]byte{}, in...)
	out, code := invoke(expAggAdd, in)
	if code != 0 {
		t.Fatalf("code %d", code)
	}
	if !bytes.Equal(in, orig) {
		t.Fatal("the input envelope was modified")
	}
	if !bytes.Contains(out, []byte("XXXXXXXXXXX")) {
		t.Fatalf("answer % x lacks the new accumulator", out)
	}
}

func TestHeaderNamesAreInterned(t *testing.T) {
	var names []string
	register(t, func() {
		Map(func(r Record) (Record, error) {
			for _, h := range r.Headers {
				names = append(names, h.Key)
			}
			return r, nil
		})
	})
	in := batch(3, 60)
	invoke(expProcess, in)
	// Overwrite the input as the host does with the next batch: names kept
	// by the handler must not change.
	for i := range in {
		in[i] = 'Z'
	}
	for _, n := range names {
		if n != "content-type" {
			t.Fatalf("kept header name changed to %q", n)
		}
	}
}

func TestCallLevelFailures(t *testing.T) {
	register(t, func() { Map(func(r Record) (Record, error) { return r, nil }) })
	tests := []struct {
		name string
		exp  export
		in   []byte
	}{
		{"empty process input", expProcess, nil},
		{"not an array", expProcess, []byte{0x81, 0xa1, 'a', 0x01}},
		{"count beyond the input", expProcess, []byte{0xdd, 0, 0, 1, 0}},
		{"join not an array", expJoin, []byte{0xc0}},
		{"agg add with a bad group", expAggAdd, []byte{0x91, 0x92, 0xc0, 0xc0}},
		{"agg add with trailing bytes", expAggAdd, []byte{0x90, 0x00}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			native.Error(0, "")
			out, code := invoke(tt.exp, tt.in)
			if code != codeBadEnvelope || out != nil {
				t.Fatalf("code %d, out % x; want %d", code, out, codeBadEnvelope)
			}
			if c, msg := native.LastError(); c != codeBadEnvelope || !strings.Contains(msg, "malformed input envelope") {
				t.Fatalf("reported %d %q", c, msg)
			}
		})
	}
}

func TestStateGetGrowsAndRetries(t *testing.T) {
	native.ResetState()
	t.Cleanup(native.ResetState)
	stateBuf = make([]byte, 4)
	big := bytes.Repeat([]byte("x"), 1000)
	if err := StatePut([]byte("k"), big); err != nil {
		t.Fatal(err)
	}
	v, ok, err := StateGet([]byte("k"))
	if err != nil || !ok || !bytes.Equal(v, big) {
		t.Fatalf("StateGet = %d bytes, %v, %v", len(v), ok, err)
	}
	if cap(stateBuf) < 1000 {
		t.Fatalf("buffer did not grow: cap %d", cap(stateBuf))
	}
	// Once grown, reads do not allocate.
	if allocs := testing.AllocsPerRun(100, func() { StateGet([]byte("k")) }); allocs != 0 {
		t.Fatalf("%v allocations per StateGet", allocs)
	}
	// An empty value is present, not absent.
	if err := StatePut([]byte("e"), []byte{}); err != nil {
		t.Fatal(err)
	}
	if v, ok, err := StateGet([]byte("e")); !ok || err != nil || v == nil || len(v) != 0 {
		t.Fatalf("empty value read as %#v, %v, %v", v, ok, err)
	}
}
