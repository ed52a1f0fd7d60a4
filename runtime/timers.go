package runtime

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"

	"github.com/tetratelabs/wazero/api"

	"github.com/eddy-streams/eddy/abi"
)

// Timers is a step's timer service: what the timer host calls of ABI.md
// "Timers" act on. Set and Delete change the call in progress; Keep(true)
// makes the call's changes the service's once the call has succeeded, and
// Keep(false) drops them (a failed call, or before a call starts), as
// keyed-state writes are kept or dropped. An instance calls its service
// from one goroutine at a time.
type Timers interface {
	// Set sets a timer for key at time at in domain d; setting one that
	// exists keeps one. An error wrapping ErrTimerLimit refuses a timer
	// past the service's limits, which fails the call; any other error is
	// the store's.
	Set(key []byte, d abi.TimeDomain, at int64) error
	// Delete deletes the timer, if it exists.
	Delete(key []byte, d abi.TimeDomain, at int64) error
	// Now is the step's current time in d: its watermark (event time;
	// math.MinInt64 before any) or the node's clock (processing time), in
	// ms since the Unix epoch.
	Now(d abi.TimeDomain) int64
	// Keep ends the changes of a call: kept (true) or dropped.
	Keep(keep bool) error
}

// Has reports whether the instance's function implements kind k.
func (i *Instance) Has(k abi.Kind) bool { return i.fn.manifest.Has(k) }

// Native reports whether the instance runs a native function, which runs
// one record per call in a step with timers (Native.OnTimer).
func (i *Instance) Native() bool { return i.nat != nil }

// ErrSplitCall is returned (wrapped) by a Timers service's Keep to refuse
// a call that must run over fewer records: a timer it set is due before
// the call's last record. The call's state writes and timer changes are
// dropped, as for a failed call, and Process returns the error for its
// caller to call again with fewer records.
var ErrSplitCall = errors.New("call must be split: a timer it set is due before its last record")

// SetTimers attaches the step's timer service used by the timer host
// calls; nil detaches it (the calls then answer "unavailable").
func (i *Instance) SetTimers(t Timers) { i.timers = t }

// timersOf returns the calling instance and its timer service, or nil when
// it has none.
func timersOf(ctx context.Context) (*Instance, Timers) {
	i := instanceFrom(ctx)
	if i == nil || i.timers == nil {
		return nil, nil
	}
	return i, i.timers
}

// timerArgs reads the key, domain and time of timer_set and timer_delete.
func timerArgs(m api.Module, stack []uint64) (key []byte, d abi.TimeDomain, at int64) {
	return read(m, stack[0], stack[1]), abi.TimeDomain(api.DecodeI32(stack[2])), int64(stack[3])
}

// hostTimerSet sets a timer for the call. A key over abi.MaxStateKey or a
// timer past the service's limits fails the call (cause timer_limit),
// whatever the guest answers, like a state_put over the limits; an unknown
// domain is the guest's error (StateFailed, the call goes on).
func hostTimerSet(ctx context.Context, m api.Module, stack []uint64) {
	key, d, at := timerArgs(m, stack)
	i, ts := timersOf(ctx)
	switch {
	case ts == nil:
		stack[0] = api.EncodeI32(abi.StateUnavailable)
		return
	case !d.Valid():
		i.fn.guestLog(ctx, slog.LevelWarn, "timer_set refused", fmt.Sprintf("unknown time domain %d (0 event, 1 processing)", int32(d)))
		stack[0] = api.EncodeI32(abi.StateFailed)
		return
	case i.limitErr != nil:
		stack[0] = api.EncodeI32(abi.StateFailed) // the call fails already
		return
	case len(key) > abi.MaxStateKey:
		i.limitErr, i.limitCause = fmt.Errorf("timer_set: key of %d bytes is over the limit of %d bytes", len(key), abi.MaxStateKey), CauseTimerLimit
		stack[0] = api.EncodeI32(abi.StateFailed)
		return
	}
	err := ts.Set(key, d, at)
	switch {
	case errors.Is(err, ErrTimerLimit):
		i.limitErr, i.limitCause = err, CauseTimerLimit
		stack[0] = api.EncodeI32(abi.StateFailed)
	case err != nil:
		stack[0] = stateResult(ctx, i, "timer_set", err)
	default:
		stack[0] = 0
	}
}

func hostTimerDelete(ctx context.Context, m api.Module, stack []uint64) {
	key, d, at := timerArgs(m, stack)
	i, ts := timersOf(ctx)
	switch {
	case ts == nil:
		stack[0] = api.EncodeI32(abi.StateUnavailable)
	case !d.Valid():
		stack[0] = api.EncodeI32(abi.StateFailed)
	case len(key) > abi.MaxStateKey: // never set: nothing to delete
		stack[0] = 0
	default:
		stack[0] = stateResult(ctx, i, "timer_delete", ts.Delete(key, d, at))
	}
}

// hostTimeNow answers the step's time in a domain: math.MinInt64 when the
// function has no timer service or the domain is unknown.
func hostTimeNow(ctx context.Context, _ api.Module, stack []uint64) {
	d := abi.TimeDomain(api.DecodeI32(stack[0]))
	_, ts := timersOf(ctx)
	if ts == nil || !d.Valid() {
		stack[0] = api.EncodeI64(math.MinInt64)
		return
	}
	stack[0] = api.EncodeI64(ts.Now(d))
}

// Timer calls eddy_timer for the timers that fired, as Process calls
// eddy_process for records: the output records of timer j come with From
// j, a nil timestamp is the timer's time, and timers the guest failed on
// (or on which the call failed, isolated by bisection) are in out.Failed
// with their index. The call's state writes and timer changes take effect
// as a process call's.
func (i *Instance) Timer(ctx context.Context, fired []abi.Timer, out *Output) error {
	if err := i.checkKind(abi.KindTimer); err != nil {
		return err
	}
	if i.nat != nil {
		return i.timerNative(ctx, fired, out)
	}
	// The records the timers stand for: their timestamps are what a nil
	// output timestamp inherits.
	in := make([]abi.Record, len(fired))
	for j := range fired {
		in[j] = abi.Record{Key: fired[j].Key, Timestamp: fired[j].Time}
	}
	try := func(lo, hi int) error {
		nr, nf, ne, na, nfail := len(out.Records), len(out.From), len(out.Errors), len(out.arena), len(out.Failed)
		i.enc = abi.AppendTimers(i.enc[:0], fired[lo:hi])
		err := i.answerRecords(ctx, abi.KindTimer, abi.ExportTimer, in[lo:hi], lo, out)
		if err != nil {
			clear(out.Records[nr:])
			out.Records, out.From, out.Errors, out.arena = out.Records[:nr], out.From[:nf], out.Errors[:ne], out.arena[:na]
			out.Failed = out.Failed[:nfail]
		}
		return err
	}
	return bisect(0, len(fired), try, func(idx int, e *Error) {
		e.Index = idx
		out.Failed = append(out.Failed, e)
	})
}
