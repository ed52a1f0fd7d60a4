package windowing

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/eddy-streams/eddy/abi"
)

// Extractor returns a record's time in UTC milliseconds since the epoch.
//
// The host implements it to plug in a Wasm timestamp extractor (the guest's
// eddy_timestamp export). An Extractor is called from the goroutine that owns
// the [Windower]; it need not be safe for concurrent use.
type Extractor interface {
	// Timestamp returns the time of rec. An error should wrap
	// [ErrNoTimestamp] when the record has no usable time; the Windower
	// returns it to the caller (who dead-letters the record).
	Timestamp(rec *abi.Record) (int64, error)
}

// ExtractorFunc adapts a function to [Extractor].
type ExtractorFunc func(rec *abi.Record) (int64, error)

// Timestamp implements Extractor.Timestamp.
func (f ExtractorFunc) Timestamp(rec *abi.Record) (int64, error) { return f(rec) }

// ErrNoTimestamp is wrapped by extractor errors when a record carries no
// usable time (missing field, wrong type, unparsable value).
var ErrNoTimestamp = errors.New("windowing: no timestamp")

// RecordTime is event time taken from the record's timestamp, the default.
//
// It is the producer's CreateTime, or the broker's time when the topic has
// message.timestamp.type=LogAppendTime (see [LogAppendTime]).
type RecordTime struct{}

// Timestamp implements Extractor.Timestamp.
func (RecordTime) Timestamp(rec *abi.Record) (int64, error) { return rec.Timestamp, nil }

// LogAppendTime is the time the broker appended the record to the log.
//
// Kafka writes it into the record timestamp when the topic (or broker) sets
// message.timestamp.type=LogAppendTime, so it reads the same field as
// [RecordTime]; the difference is a property of the topic, not of Eddy. It
// is monotone per partition up to broker clock changes, so a watermark with
// zero out-of-orderness suits it, but it measures ingestion, not the event.
type LogAppendTime = RecordTime

// ProcessingTime stamps each record with the wall clock when it is processed.
//
// Results then depend on when the pipeline runs, on its speed, on batch
// boundaries and on restarts: they are NOT deterministic and a replay gives
// different windows. Use it only when explicitly asked for. Clock is
// injected (time.Now in production, a fake in tests).
type ProcessingTime struct {
	Clock func() time.Time
}

// Timestamp implements Extractor.Timestamp.
func (p ProcessingTime) Timestamp(*abi.Record) (int64, error) { return p.Clock().UnixMilli(), nil }

// JSONField extracts event time from a field of a JSON record value, named
// by a dotted path such as "payload.ts". The field may be an integer number
// of milliseconds since the epoch or an RFC 3339 string (a zone offset is
// required; the result is UTC). The value must be one JSON document, with
// nothing after it but white space.
type JSONField struct {
	path []string
}

// NewJSONField returns an extractor for the dotted path. It fails (wrapping
// ErrInvalidConfig) on an empty path or an empty path segment.
func NewJSONField(path string) (*JSONField, error) {
	parts := strings.Split(path, ".")
	for _, p := range parts {
		if p == "" {
			return nil, fmt.Errorf("json timestamp path %q: empty segment: %w", path, ErrInvalidConfig)
		}
	}
	return &JSONField{path: parts}, nil
}

// Timestamp implements Extractor.Timestamp.
func (j *JSONField) Timestamp(rec *abi.Record) (int64, error) {
	dec := json.NewDecoder(bytes.NewReader(rec.Value))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return 0, fmt.Errorf("json timestamp %s: %w: %w", j, ErrNoTimestamp, err)
	}
	// The value must be one JSON document: Decode stops after the first.
	if _, err := dec.Token(); err != io.EOF {
		return 0, fmt.Errorf("json timestamp %s: bytes after the JSON value: %w", j, ErrNoTimestamp)
	}
	for _, p := range j.path {
		m, ok := v.(map[string]any)
		if !ok {
			return 0, fmt.Errorf("json timestamp %s: %q is not inside an object: %w", j, p, ErrNoTimestamp)
		}
		if v, ok = m[p]; !ok {
			return 0, fmt.Errorf("json timestamp %s: field %q missing: %w", j, p, ErrNoTimestamp)
		}
	}
	switch x := v.(type) {
	case json.Number:
		ms, err := x.Int64()
		if err != nil {
			return 0, fmt.Errorf("json timestamp %s: %q is not integer milliseconds: %w", j, x, ErrNoTimestamp)
		}
		return ms, nil
	case string:
		t, err := time.Parse(time.RFC3339Nano, x)
		if err != nil {
			return 0, fmt.Errorf("json timestamp %s: %w: %w", j, ErrNoTimestamp, err)
		}
		return t.UnixMilli(), nil
	}
	return 0, fmt.Errorf("json timestamp %s: want integer milliseconds or an RFC 3339 string, got %T: %w", j, v, ErrNoTimestamp)
}

// String returns the dotted path.
func (j *JSONField) String() string { return strings.Join(j.path, ".") }

// The valid event-time range, in UTC milliseconds since the epoch: the years
// 0000 to 9999, as in Flink SQL's TIMESTAMP and as far as an RFC 3339 string
// can reach. A record whose event time lies outside is refused by
// [Windower.Process] (the caller dead-letters it) instead of being windowed.
//
// Why a range and not all of int64: window bounds, close and expiry times
// add durations (size, grace, retention, gap, disorder) to event times. A
// [time.Duration] is at most about 292 years (9,223,372,036,854 ms), so with
// event times inside the range every such sum of a few durations stays
// within ±3·10^14 ms, 30,000 times short of the int64 limits: no time
// computation can overflow, whatever the configuration. Without the range a
// time within one window of the int64 limits wrapped around, and window
// assignment looped forever.
const (
	MinTime int64 = -62167219200000 // 0000-01-01T00:00:00Z
	MaxTime int64 = 253402300799999 // 9999-12-31T23:59:59.999Z
)

// ErrTimeRange is wrapped by the error about an event time outside
// [MinTime, MaxTime]. Such an error also wraps [ErrNoTimestamp]: the record
// has no usable event time, and a caller that dead-letters records without
// one dead-letters it too.
var ErrTimeRange = errors.New("windowing: event time out of range")

// CheckTime returns nil when t is a valid event time, else an error wrapping
// [ErrTimeRange] and [ErrNoTimestamp] that names t and the range.
func CheckTime(t int64) error {
	if t < MinTime || t > MaxTime {
		return rangeError(t)
	}
	return nil
}

type rangeError int64

func (e rangeError) Error() string {
	return fmt.Sprintf("event time %d out of range: valid event times are %d to %d ms (0000-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z)",
		int64(e), MinTime, MaxTime)
}

func (e rangeError) Is(target error) bool { return target == ErrTimeRange || target == ErrNoTimestamp }

// maxSpan is the largest time.Duration in milliseconds: no window, close or
// expiry time reaches further than a few of these beyond the event-time
// range.
const maxSpan = int64(1<<63-1) / int64(time.Millisecond)

// validWindow reports whether w is a window that event times in range can
// make: non-empty, holding times in range, and no wider than a duration
// beyond them. [Windower.Restore] and [Config.Compose] take windows from a
// store and refuse others, so that arithmetic on them cannot overflow
// either.
func validWindow(w Window) bool {
	return w.Start < w.End && w.Start <= MaxTime && w.End > MinTime &&
		w.Start >= MinTime-maxSpan && w.End <= MaxTime+maxSpan+1
}
