package windowing

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
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
// required; the result is UTC).
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
