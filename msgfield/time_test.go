package msgfield

import (
	"bytes"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/windowing"
)

// TestTimeField reads event time from each kind of MessagePack field a
// msgpack pipeline's time_field may be, and refuses the others.
func TestTimeField(t *testing.T) {
	ex, err := NewTimeField("p.ts")
	if err != nil {
		t.Fatal(err)
	}
	// value is {"p": {"ts": ts}}, ts encoded as msgpack/v5 encodes it.
	value := func(ts any) []byte {
		var b bytes.Buffer
		e := msgpack.NewEncoder(&b)
		e.EncodeMapLen(1)
		e.EncodeString("p")
		e.EncodeMapLen(1)
		e.EncodeString("ts")
		if err := e.Encode(ts); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	const ms = 1700000000123
	at := time.UnixMilli(ms).UTC()
	tests := []struct {
		name  string
		value []byte
		want  int64
		err   error
	}{
		{"int64", value(int64(ms)), ms, nil},
		{"uint32", value(uint32(4000000000)), 4000000000, nil},
		{"int8", value(int8(-5)), -5, nil},
		{"uint64", value(uint64(ms)), ms, nil},
		{"float64", value(float64(ms)), ms, nil},
		{"float64 with a fraction", value(float64(ms) + 0.75), ms, nil},
		{"negative float rounds down", value(-1.5), -2, nil},
		{"float32", value(float32(1024)), 1024, nil},
		{"RFC 3339", value(at.Format(time.RFC3339Nano)), ms, nil},
		{"RFC 3339 with a zone", value("2023-11-14T23:13:20.123+01:00"), ms, nil},
		{"timestamp, 12 bytes", value(at.Add(456 * time.Microsecond)), ms, nil},
		{"timestamp, 4 bytes", value(time.Unix(1700000000, 0)), 1700000000000, nil},
		{"timestamp before 1970", value(time.Date(1969, 12, 31, 23, 59, 59, 500e6, time.UTC)), -500, nil},
		{"uint64 past int64", value(uint64(math.MaxUint64)), 0, windowing.ErrTimeRange},
		{"huge float", value(1e300), 0, windowing.ErrTimeRange},
		{"NaN", value(math.NaN()), 0, windowing.ErrTimeRange},
		{"huge timestamp", value(time.Unix(math.MaxInt64/1000, 0)), 0, windowing.ErrTimeRange},
		{"RFC 3339 without a zone", value("2023-11-15T00:13:20"), 0, windowing.ErrNoTimestamp},
		{"nil", value(nil), 0, windowing.ErrNoTimestamp},
		{"bool", value(true), 0, windowing.ErrNoTimestamp},
		{"map", value(map[string]int{"a": 1}), 0, windowing.ErrNoTimestamp},
		{"binary", value([]byte{1}), 0, windowing.ErrNoTimestamp},
		{"missing", []byte{0x81, 0xa1, 'p', 0x80}, 0, windowing.ErrNoTimestamp},
		{"bytes after the value", append(value(int64(ms)), 0), 0, windowing.ErrNoTimestamp},
		{"JSON", []byte(`{"p":{"ts":5}}`), 0, windowing.ErrNoTimestamp},
	}
	for _, tc := range tests {
		got, err := ex.Timestamp(&abi.Record{Value: tc.value})
		if tc.err != nil {
			if !errors.Is(err, tc.err) || !errors.Is(err, windowing.ErrNoTimestamp) {
				t.Errorf("%s: %d, %v; want %v", tc.name, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s: %d, %v; want %d", tc.name, got, err, tc.want)
		}
	}
	if _, err := NewTimeField("p..ts"); !errors.Is(err, windowing.ErrInvalidConfig) {
		t.Errorf("empty segment: %v", err)
	}
	_, err = ex.Timestamp(&abi.Record{Value: value(nil)})
	if want := "msgpack timestamp p.ts: want integer milliseconds, a float of milliseconds, an RFC 3339 string or a timestamp, got nil: windowing: no timestamp"; err == nil || err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
}
