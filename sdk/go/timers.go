package eddy

import (
	"errors"
	"math"
	"strconv"

	"github.com/eddy-streams/eddy/sdk/go/internal/msgpack"
)

// Timers (ABI.md "Timers"). A function in a step with state (a map, filter
// or flat_map step with state: true) may set timers for a key: at an event
// time, which fires when the step's watermark reaches it, or at a
// processing time, which fires when the node's clock does. A timer that
// fires is handed to the function registered with OnTimer, which may read
// and write keyed state and return records. Timers are kept with the
// step's state: they survive restarts and fire once under exactly_once.

// TimeDomain is the clock a timer is set on.
type TimeDomain int32

// The time domains.
const (
	// EventTime timers fire when the step's watermark reaches their time.
	EventTime TimeDomain = 0
	// ProcessingTime timers fire when the node's clock reaches their time.
	ProcessingTime TimeDomain = 1
)

// Timer is a timer that fired: the key it was set for, its time in
// milliseconds since the Unix epoch (UTC) and its domain. Key is a view
// into the call's input, valid during the call.
type Timer struct {
	Key    []byte
	Time   int64
	Domain TimeDomain
}

// ErrTimerLimit is returned by SetTimer when the host refused the timer:
// the step has no timers, or the key or the task holds as many as the
// pipeline allows. The host then fails the call whatever the function
// answers, and the record that set the timer goes to the dead-letter
// topic.
// Returned from a handler, it fails the record with code STATE (6).
var ErrTimerLimit error = &codeError{code: codeState, err: errors.New("eddy: timer refused by the host")}

// SetTimer sets a timer for key at time at (ms since the Unix epoch, UTC)
// in domain d. Setting a timer that exists keeps one. A timer at or before
// the step's current time fires at the next firing of the step's timers.
// The error is ErrNoState when the step has no timers (it has no state),
// or ErrTimerLimit.
func SetTimer(key []byte, d TimeDomain, at int64) error {
	switch hostTimerSet(key, int32(d), at) {
	case 0:
		return nil
	case -2:
		return ErrNoState
	}
	return ErrTimerLimit
}

// DeleteTimer deletes the timer for key at time at in domain d; deleting
// one that does not exist is not an error. The error is ErrNoState when
// the step has no timers, or ErrStateFailed.
func DeleteTimer(key []byte, d TimeDomain, at int64) error {
	return stateErr(hostTimerDelete(key, int32(d), at))
}

// CurrentTime is the step's current time in domain d, in ms since the Unix
// epoch: its watermark (EventTime) or the node's clock (ProcessingTime).
// It is math.MinInt64 when it is not known (no watermark yet, or a step
// without timers).
func CurrentTime(d TimeDomain) int64 { return hostTimeNow(int32(d)) }

// NoTime is what CurrentTime answers when the time is not known.
const NoTime int64 = math.MinInt64

// OnTimer registers fn as the module's timer function (kind "timer"),
// called for each timer of the step that fires; the records it returns are
// outputs of the step, and a record with a zero Timestamp gets the timer's
// time. The slice and its records are copied before fn is called again.
// An error (or a panic) sends the timer to the dead-letter topic. Call it
// from init, beside Map, Filter or FlatMap.
func OnTimer(fn func(Timer) ([]Record, error)) {
	mustRegister("timer", reg.timerFn != nil, fn == nil)
	reg.timerFn = fn
}

// timers answers eddy_timer: [Timer × N] → [Result × N], body =
// [Record × k].
func (g *guest) timers(in []byte) *callError {
	if reg.timerFn == nil {
		return g.unsupported(in, "timer")
	}
	n, err := g.count(in)
	if n < 0 {
		return badEnvelope(err)
	}
	if n > len(in)/4 { // a timer takes at least 4 bytes: the count is not allocated blindly
		return badEnvelope(errors.New("malformed input envelope: " + strconv.Itoa(n) + " timers in " + strconv.Itoa(len(in)) + " bytes"))
	}
	if cap(g.fired) < n {
		g.fired = make([]Timer, n)
	}
	g.fired = g.fired[:n]
	r := &g.r
	for i := range g.fired {
		t := &g.fired[i]
		if m := r.ArrayLen(); m != 3 && r.Err() == nil {
			r.Fail(errItemShape)
		}
		t.Key = r.Bytes()
		t.Time = r.Int()
		t.Domain = TimeDomain(r.Int())
		if err := r.Err(); err != nil {
			b := msgpack.AppendArrayHeader(g.out[:0], n)
			g.out = failAll(b, n, codeBadEnvelope, envelopeError("timer", i, err).Error())
			return nil
		}
	}
	b := msgpack.AppendArrayHeader(g.out[:0], n)
	if err := g.trailing(); err != nil {
		g.out = failAll(b, n, codeBadEnvelope, err.Error())
		return nil
	}
	g.out = g.run(b, n, timerStep)
	return nil
}

func timerStep(g *guest, b []byte, i int) []byte {
	t := g.fired[i]
	outs, err := reg.timerFn(t)
	if err != nil {
		return appendError(b, err)
	}
	b = append(b, 0x92, 0x00)
	b = msgpack.AppendArrayHeader(b, len(outs))
	for j := range outs {
		rec := outs[j]
		if rec.Timestamp == 0 {
			rec.Timestamp = t.Time // encoded as nil: the timer's time
		}
		b = appendRecord(b, &rec, t.Time)
	}
	return b
}
