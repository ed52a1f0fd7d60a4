package abi

import (
	"fmt"

	"github.com/eddy-streams/eddy/abi/msgpack"
)

// TimeDomain is the clock a timer is set on (ABI.md "Timers").
type TimeDomain int32

// The time domains.
const (
	// EventTime timers fire when the step's watermark reaches them.
	EventTime TimeDomain = 0
	// ProcessingTime timers fire when the node's clock reaches them.
	ProcessingTime TimeDomain = 1
)

// Valid reports whether d is a known domain.
func (d TimeDomain) Valid() bool { return d == EventTime || d == ProcessingTime }

func (d TimeDomain) String() string {
	switch d {
	case EventTime:
		return "event"
	case ProcessingTime:
		return "processing"
	}
	return fmt.Sprintf("domain(%d)", int32(d))
}

// Limits of timers (ABI.md "Timers"). A timer's key is a state key: at
// most MaxStateKey bytes. The host's defaults bound how many timers a key
// and a task (a step's partition) hold; a timer_set past them fails the
// call, as a state_put over the limits does.
const (
	DefaultMaxTimersPerKey  = 1000
	DefaultMaxTimersPerTask = 1_000_000
)

// Timer is a timer that fired: the key the function set it for, its time
// (ms since the Unix epoch, UTC) and its domain.
type Timer struct {
	Key    []byte
	Time   int64
	Domain TimeDomain
}

// AppendTimers appends the input envelope of eddy_timer: [ Timer × N ],
// Timer = [ key: bytes, time: int, domain: int ]. It stays hand-written:
// the host writes it for every batch of timers that fires, and
// msgpack/v5's Encoder takes about five times as long (BENCHMARKS.md).
func AppendTimers(b []byte, ts []Timer) []byte {
	b = msgpack.AppendArrayHeader(b, len(ts))
	for i := range ts {
		b = append(b, 0x93)
		b = msgpack.AppendBin(b, ts[i].Key)
		b = msgpack.AppendInt(b, ts[i].Time)
		b = msgpack.AppendInt(b, int64(ts[i].Domain))
	}
	return b
}

// DecodeTimers decodes an eddy_timer input envelope, appending to out.
// Keys are views into b. It is the guest's direction, which no host path
// takes (tests and tools use it), so it reads through msgpack/v5 (see
// msgpackv5.go), with the bounds of the hand-written codec.
func DecodeTimers(b []byte, out []Timer) ([]Timer, error) {
	r := getV5Reader(b)
	defer putV5Reader(r)
	n, err := r.ArrayHeader()
	if err != nil {
		return out, fmt.Errorf("timers: %w", err)
	}
	if n > r.Len()/4 {
		return out, fmt.Errorf("timers: %d timers in %d bytes", n, r.Len())
	}
	for range n {
		m, err := r.ArrayHeader()
		if err != nil {
			return out, fmt.Errorf("timer: %w", err)
		}
		if m != 3 {
			return out, fmt.Errorf("timer: array of %d elements, want 3", m)
		}
		var t Timer
		if t.Key, err = r.Bytes(); err != nil {
			return out, fmt.Errorf("timer key: %w", err)
		}
		if t.Time, err = r.Int(); err != nil {
			return out, fmt.Errorf("timer time: %w", err)
		}
		d, err := r.Int()
		if err != nil {
			return out, fmt.Errorf("timer domain: %w", err)
		}
		if t.Domain = TimeDomain(d); !t.Domain.Valid() || int64(t.Domain) != d {
			return out, fmt.Errorf("timer domain %d: want 0 (event) or 1 (processing)", d)
		}
		out = append(out, t)
	}
	if r.Len() != 0 {
		return out, fmt.Errorf("timers: %d bytes after the envelope", r.Len())
	}
	return out, nil
}
