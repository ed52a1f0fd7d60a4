package msgfield

import (
	"fmt"
	"math"
	"time"

	"github.com/vmihailenco/msgpack/v5/msgpcode"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/windowing"
)

// TimeField extracts event time from a field of a MessagePack record
// value, named by a dotted path such as "payload.ts": the time_field of an
// aggregate step in a msgpack pipeline, as windowing.JSONField is in a JSON
// one. (It lives here, not in package windowing, which depends on the
// standard library alone.) The field may be
//
//   - an integer: milliseconds since the epoch;
//   - a float: milliseconds since the epoch, rounded down to the
//     millisecond (as the fraction of a second of a string or a timestamp
//     is);
//   - a string: RFC 3339 with a zone offset, as JSONField reads it;
//   - a timestamp (MessagePack's extension type -1).
//
// The value must be exactly one MessagePack value, with nothing after it.
type TimeField struct {
	path Path
}

// NewTimeField returns an extractor for the dotted path. It fails
// (wrapping windowing.ErrInvalidConfig) on an empty path or an empty path
// segment.
func NewTimeField(path string) (*TimeField, error) {
	p, err := Parse(path)
	if err != nil {
		return nil, fmt.Errorf("msgpack timestamp path: %w: %w", err, windowing.ErrInvalidConfig)
	}
	return &TimeField{path: p}, nil
}

// String returns the dotted path.
func (f *TimeField) String() string { return f.path.String() }

// Timestamp implements windowing.Extractor. Its errors wrap
// windowing.ErrNoTimestamp. A time beyond what an int64 of milliseconds
// holds is an error that also wraps windowing.ErrTimeRange; one within it
// is returned for the caller to check with windowing.CheckTime.
func (f *TimeField) Timestamp(rec *abi.Record) (int64, error) {
	raw, err := f.path.Find(rec.Value)
	if err != nil {
		return 0, fmt.Errorf("msgpack timestamp %s: %w: %w", f, err, windowing.ErrNoTimestamp)
	}
	ms, err := Millis(raw)
	if err != nil {
		return 0, fmt.Errorf("msgpack timestamp %s: %w: %w", f, err, windowing.ErrNoTimestamp)
	}
	return ms, nil
}

// Millis reads raw, one MessagePack value, as milliseconds since the epoch,
// as TimeField says. A time that no int64 of milliseconds holds is an error
// wrapping windowing.ErrTimeRange.
func Millis(raw []byte) (int64, error) {
	s := newScanner(raw)
	defer s.close()
	c, err := s.peek()
	if err != nil {
		return 0, err
	}
	switch {
	case c == msgpcode.Uint64:
		u, err := s.d.DecodeUint64()
		if err != nil {
			return 0, syntax(err)
		}
		if u > math.MaxInt64 {
			return 0, outOfRange(fmt.Sprintf("%d milliseconds", u))
		}
		return int64(u), nil
	case msgpcode.IsFixedNum(c), c >= msgpcode.Uint8 && c <= msgpcode.Int64:
		i, err := s.d.DecodeInt64()
		if err != nil {
			return 0, syntax(err)
		}
		return i, nil
	case c == msgpcode.Float, c == msgpcode.Double:
		f, err := s.d.DecodeFloat64()
		if err != nil {
			return 0, syntax(err)
		}
		// Written so that NaN, for which every comparison is false, is
		// refused; float64(MaxInt64) is 2^63, one past it.
		if !(f >= math.MinInt64 && f < math.MaxInt64) {
			return 0, outOfRange(fmt.Sprintf("%g milliseconds", f))
		}
		return int64(math.Floor(f)), nil
	case msgpcode.IsString(c):
		str, err := s.d.DecodeString()
		if err != nil {
			return 0, syntax(err)
		}
		t, err := time.Parse(time.RFC3339Nano, str)
		if err != nil {
			return 0, err
		}
		return t.UnixMilli(), nil
	case msgpcode.IsExt(c):
		t, err := Timestamp(raw)
		if err != nil {
			return 0, err
		}
		// UnixMilli of a time more than an int64 of milliseconds from the
		// epoch overflows.
		if sec := t.Unix(); sec < math.MinInt64/1000+1 || sec > math.MaxInt64/1000-1 {
			return 0, outOfRange(fmt.Sprintf("the timestamp of %d seconds", sec))
		}
		return t.UnixMilli(), nil
	}
	return 0, fmt.Errorf("want integer milliseconds, a float of milliseconds, an RFC 3339 string or a timestamp, got %s", kind(c))
}

// outOfRange is the error about a time that no int64 of milliseconds
// holds, far outside [windowing.MinTime, windowing.MaxTime]: like
// windowing.CheckTime's, it wraps windowing.ErrTimeRange.
type outOfRange string

func (e outOfRange) Error() string {
	return string(e) + " is out of range: valid event times are 0000-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z"
}

func (e outOfRange) Is(target error) bool { return target == windowing.ErrTimeRange }

// kind names the type of the MessagePack value that starts with code c,
// for errors.
func kind(c byte) string {
	switch {
	case c == msgpcode.Nil:
		return "nil"
	case c == msgpcode.False || c == msgpcode.True:
		return "a boolean"
	case isMap(c):
		return "a map"
	case isArray(c):
		return "an array"
	case msgpcode.IsBin(c):
		return "binary"
	}
	return fmt.Sprintf("code 0x%02x", c)
}
