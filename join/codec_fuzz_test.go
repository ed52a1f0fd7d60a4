package join

import (
	"bytes"
	"errors"
	"math"
	"runtime"
	"testing"

	"github.com/eddy-streams/eddy/abi"
)

// FuzzParseBufferKey checks ParseBufferKey on any bytes (a buffer's store
// keys come back from its changelog topic): no panic, an error that wraps
// ErrCorrupt and does not grow with the key, and a key it accepts is the
// one AppendBufferKey writes for what it parsed.
func FuzzParseBufferKey(f *testing.F) {
	f.Add(AppendBufferKey(nil, Left, []byte("user-1"), 1700000000000, 3))
	f.Add(AppendBufferKey(nil, Right, nil, math.MinInt64, math.MaxUint64))
	f.Add([]byte{0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 0, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		side, key, tm, seq, err := ParseBufferKey(b)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) || len(err.Error()) > 100 {
				t.Fatalf("ParseBufferKey(%x): error %q", b, err)
			}
			return
		}
		if again := AppendBufferKey(nil, side, key, tm, seq); !bytes.Equal(again, b) {
			t.Fatalf("ParseBufferKey(%x) = %v %q %d %d, which encodes as %x", b, side, key, tm, seq, again)
		}
	})
}

// FuzzDecodeRecordAllocation checks that DecodeRecord allocates in
// proportion to its input, whatever counts and lengths the input claims:
// a header takes at least two bytes of it, and 40 bytes of memory.
func FuzzDecodeRecordAllocation(f *testing.F) {
	rec := abi.Record{Key: []byte("k"), Value: []byte("v"), Headers: []abi.Header{{Key: "a", Value: []byte("b")}, {Key: "c"}}}
	f.Add(AppendRecord(nil, &rec))
	f.Add([]byte{1, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Add(append([]byte{1, 0, 0, 0, 0x80, 0x01}, make([]byte, 256)...)) // 128 empty headers
	f.Fuzz(func(t *testing.T, b []byte) {
		var r abi.Record
		// The slack covers what the fuzzing machinery allocates meanwhile;
		// an allocation from a claimed count (up to 2^64) is far above.
		if n := allocated(func() { _ = DecodeRecord(b, &r) }); n > uint64(32*len(b)+1<<20) {
			t.Fatalf("DecodeRecord of %d bytes allocated %d bytes", len(b), n)
		}
	})
}

// allocated returns the bytes fn allocated on the heap (and what other
// goroutines did meanwhile).
func allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}
