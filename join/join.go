package join

import (
	"errors"
	"fmt"
	"math"

	"github.com/eddy-streams/eddy/abi"
)

// Type is the kind of join: which records are emitted without a partner.
type Type int

// The join types.
const (
	// InnerJoin emits only matched pairs.
	InnerJoin Type = iota
	// LeftJoin also emits each left record that found no right record
	// (with [Pair.Right] nil): at once for a stream-table join, when its
	// window closes for a windowed join.
	LeftJoin
	// OuterJoin emits unmatched records of both sides when their window
	// closes. Windowed joins only.
	OuterJoin
)

// String returns "inner", "left" or "outer".
func (t Type) String() string {
	switch t {
	case InnerJoin:
		return "inner"
	case LeftJoin:
		return "left"
	case OuterJoin:
		return "outer"
	}
	return fmt.Sprintf("join(%d)", int(t))
}

// ParseType parses "inner", "left" or "outer". The error wraps
// [ErrInvalidConfig].
func ParseType(s string) (Type, error) {
	for _, t := range []Type{InnerJoin, LeftJoin, OuterJoin} {
		if s == t.String() {
			return t, nil
		}
	}
	return 0, fmt.Errorf("join type %q: %w", s, ErrInvalidConfig)
}

// Side is the input a record of a windowed join comes from.
type Side uint8

// The two sides of a join.
const (
	Left Side = iota
	Right
)

// String returns "left" or "right".
func (s Side) String() string {
	switch s {
	case Left:
		return "left"
	case Right:
		return "right"
	}
	return fmt.Sprintf("side(%d)", int(s))
}

// ErrInvalidConfig is wrapped by every configuration error of
// [NewTableJoin], [NewWindowJoin] and [ParseType].
var ErrInvalidConfig = errors.New("join: invalid config")

// ErrCorrupt is wrapped by errors about bytes read back from a [Buffer]: a
// buffered record that does not decode, an entry the index knows of that
// the buffer lost, or a side that is neither Left nor Right.
var ErrCorrupt = errors.New("join: corrupt buffer")

// Pair is one join result.
//
// Records passed to Process or Lookup appear as the same pointer, not a
// copy: the caller must not reuse them before handling the Pair. Records
// read back from the buffer are fresh copies owned by the Pair.
type Pair struct {
	// Key is the join key: the key of both records, or of the one record
	// of an unmatched result (nil for a null-key record).
	Key []byte
	// Left and Right are the joined records. One of them is nil for an
	// unmatched result (of a left or outer join).
	Left, Right *abi.Record
	// Time is the result's event time: the later of the two records'
	// times, or the one record's time when unmatched. For a stream-table
	// join it is the stream record's time.
	Time int64
}

// Late is a record of a windowed join that arrived after the watermark had
// passed its time plus the grace period. It was not joined. The caller
// sends it to the late-data side output (with the side and the watermark as
// headers); a WindowJoin never drops records silently.
type Late struct {
	Side  Side
	Input int32
	// Record is the pointer passed to Process, not a copy: the caller must
	// not reuse the record before handling the Late entry.
	Record *abi.Record
	// Time is the record's event time.
	Time int64
	// Watermark is the task watermark when the record arrived.
	Watermark int64
}

// Output collects what one or more calls produced, in order. Reuse it
// across calls with Reset to avoid allocation.
type Output struct {
	Pairs []Pair
	Late  []Late
}

// Reset empties o, keeping its capacity.
func (o *Output) Reset() {
	clear(o.Pairs) // drop references to records
	clear(o.Late)
	o.Pairs, o.Late = o.Pairs[:0], o.Late[:0]
}

// add returns a+b, saturated at the int64 bounds (event times near the
// bounds must not wrap around into the past).
func add(a, b int64) int64 {
	s := a + b
	switch {
	case b > 0 && s < a:
		return math.MaxInt64
	case b < 0 && s > a:
		return math.MinInt64
	}
	return s
}
