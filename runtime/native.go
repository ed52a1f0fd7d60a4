package runtime

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"slices"

	"github.com/eddy-streams/eddy/abi"
)

// Native is a function written in Go and run by the host itself, with no
// WebAssembly in between: a baseline to compare guests with, and a way to
// run trusted logic through the same node. Engine.LoadNative turns it into
// a Function whose Instances answer exactly as a guest implementing the
// same kinds would (the same Output, Result, abi.Added and *Error shapes).
//
// Set the fields of the kinds the function implements, as a guest module
// exports them; the Function's manifest names those kinds:
//
//   - process: Process (or ProcessState);
//   - aggregate: all of AggInit, AggAdd, AggMerge and AggResult;
//   - join: Join; key: Key; timestamp: Timestamp;
//   - timer: OnTimer (with ProcessState, whose step has timers).
//
// # Arguments and results
//
// A record, key, value or accumulator passed to a native belongs to the
// caller: read it, never modify it, and copy what you keep after the call
// returns. AggAdd is the exception: it gets a scratch copy of the
// accumulator that it may update in place and return.
//
// What a native returns or emits is copied by the runtime before the call
// returns, so a native may reuse one buffer for all its answers (use
// Engine.LoadNativeFunc to give each instance its own). As in the ABI, nil
// and empty bytes are different values: a nil key is a null key, a nil
// Join or AggResult answer emits nothing.
//
// # Errors
//
// A returned error fails that record or item only, as a guest's per-item
// error does: the *Error has Cause CauseGuest, the code of the first
// *NativeError in the error's chain (REJECTED if there is none, or if its
// code is not positive), Reason err.Error() and Err the error itself. A
// panic is recovered, fails only the record or item it happened on, with
// Cause CauseTrap and the panic value in Reason, and is logged with its
// stack through the function's logger; the rest of the batch goes on. (A
// panic in a goroutine the native starts cannot be recovered: it ends the
// process, as anywhere in Go.)
//
// # What does not apply
//
// Natives run on the calling goroutine with the host's privileges: the call
// timeout (WithCallTimeout) and the memory limit (WithMemoryLimit) do not
// apply, nor do WithClock, WithSeed, WithUninterruptible and WithCounters.
// A native that loops forever hangs its caller. WithPoolSize, WithLogger and
// WithLogRate do apply.
type Native struct {
	// Name and Version go into the manifest. Name defaults to the name given
	// to LoadNative.
	Name, Version string

	// Process is a map, filter or flat map: it calls emit for each of the
	// 0..n records rec produces, in order. The Timestamp of an emitted
	// record is used as it is (set it to rec.Timestamp to keep the input's);
	// its Headers are not inherited. emit copies the record, and must not be
	// called after Process returns. Records emitted before an error or a
	// panic are dropped.
	Process func(rec *abi.Record, emit func(abi.Record)) error

	// ProcessState is Process with the instance's keyed store (see
	// Instance.SetState; st is nil when none is attached). Set at most one
	// of Process and ProcessState. Values st.Get returns are valid only until
	// the next call on st.
	ProcessState func(st State, rec *abi.Record, emit func(abi.Record)) error

	// AggInit returns the initial accumulator (nil is an empty one). It is
	// called once per instance and the answer is cached.
	AggInit func() []byte
	// AggAdd folds rec into acc, a scratch copy it may update in place, and
	// returns the new accumulator (not nil). After an error acc is
	// discarded, and the group goes on from the accumulator before rec.
	AggAdd func(acc []byte, rec *abi.Record) ([]byte, error)
	// AggMerge merges two accumulators of the same key (not nil).
	AggMerge func(key, a, b []byte) ([]byte, error)
	// AggResult turns an accumulator into an output value; nil emits
	// nothing.
	AggResult func(key, acc []byte) ([]byte, error)

	// Join combines the left and right values of a key (either may be nil:
	// absent); nil emits nothing.
	Join func(key, left, right []byte) ([]byte, error)

	// Key returns a record's new key (nil: a null key).
	Key func(rec *abi.Record) ([]byte, error)

	// Timestamp returns a record's event time in milliseconds since the Unix
	// epoch, UTC.
	Timestamp func(rec *abi.Record) (int64, error)

	// OnTimer is eddy_timer: it is called for each timer of the step that
	// fires, in time order, with the instance's store and emits what the
	// firing makes, as ProcessState does for a record. The Timestamp of an
	// emitted record is used as it is (set it to t.Time for the timer's
	// time). When the instance has a timer service (Instance.SetTimers),
	// st — in OnTimer and in ProcessState — is also a TimerState, through
	// which the function sets and deletes timers; a timer the firing sets
	// fires at the next firing, never within this one. A native with timers
	// runs one record per call (the host cuts its batches), so that the
	// timers a record sets fire before the next record as in ABI.md "When
	// timers fire". A native without OnTimer cannot set timers (SetTimer
	// fails), and runs whole batches.
	OnTimer func(st State, t abi.Timer, emit func(abi.Record)) error
}

// TimerState is the State a native's ProcessState and OnTimer get when
// the instance has a timer service: the timer host calls of ABI.md
// "Timers". SetTimer fails the record (or firing) with cause timer_limit
// past the service's limits, as timer_set fails a guest's call; an error
// it returns must be returned by the native (or the native goes on without
// the timer).
type TimerState interface {
	State
	// SetTimer sets a timer for key at time at (ms since the Unix epoch)
	// in domain d; setting one that exists keeps one.
	SetTimer(key []byte, d abi.TimeDomain, at int64) error
	// DeleteTimer deletes the timer, if it exists.
	DeleteTimer(key []byte, d abi.TimeDomain, at int64) error
	// Now is the step's current time in d: its watermark (event time;
	// math.MinInt64 before any) or the node's clock (processing time).
	Now(d abi.TimeDomain) int64
}

// kinds returns the kinds n implements, in abi.Kinds order, or an error for
// a half-implemented kind.
func (n *Native) kinds() ([]abi.Kind, error) {
	var ks []abi.Kind
	if n.Process != nil && n.ProcessState != nil {
		return nil, fmt.Errorf("%w: both Process and ProcessState are set", ErrManifest)
	}
	if n.Process != nil || n.ProcessState != nil {
		ks = append(ks, abi.KindProcess)
	}
	agg := 0
	for _, set := range []bool{n.AggInit != nil, n.AggAdd != nil, n.AggMerge != nil, n.AggResult != nil} {
		if set {
			agg++
		}
	}
	switch agg {
	case 4:
		ks = append(ks, abi.KindAggregate)
	case 0:
	default:
		return nil, fmt.Errorf("%w: aggregate needs all of AggInit, AggAdd, AggMerge and AggResult; %d of them are set", ErrMissingExport, agg)
	}
	for _, k := range []struct {
		set  bool
		kind abi.Kind
	}{{n.Join != nil, abi.KindJoin}, {n.Key != nil, abi.KindKey}, {n.Timestamp != nil, abi.KindTimestamp}, {n.OnTimer != nil, abi.KindTimer}} {
		if k.set {
			ks = append(ks, k.kind)
		}
	}
	if len(ks) == 0 {
		return nil, fmt.Errorf("%w: the native implements no kind", ErrManifest)
	}
	return ks, nil
}

// NativeSDK is the SDK a native function's manifest names.
const NativeSDK = "native"

// NativeDigestPrefix starts the digest of a native function: its Digest is
// "native:" followed by its manifest name, as natives have no module bytes
// to hash.
const NativeDigestPrefix = "native:"

// LoadNative returns a Function that runs n in the host (see Native). name
// identifies it in logs and errors, as for Load. Every instance shares n's
// functions, so they must be safe for concurrent use; LoadNativeFunc gives
// each instance its own.
//
// The Function's manifest names the kinds n implements (ABI version 1, SDK
// NativeSDK), its Digest is NativeDigestPrefix + the manifest name, and its
// Info lists as exports the ABI exports of those kinds, with Size 0, no
// imports and no memory figures. A Native that implements no kind, or only
// part of aggregate, is refused (ErrManifest, ErrMissingExport).
func (e *Engine) LoadNative(name string, n Native, opts ...Option) (*Function, error) {
	return e.LoadNativeFunc(name, func() Native { return n }, opts...)
}

// LoadNativeFunc is LoadNative with one Native per instance: newNative is
// called for each new instance, so its functions may keep per-instance state
// (scratch buffers, caches) in their closures, as a guest keeps globals, and
// need not be safe for concurrent use. Every Native it returns must
// implement the same kinds as the first.
func (e *Engine) LoadNativeFunc(name string, newNative func() Native, opts ...Option) (*Function, error) {
	cfg := e.cfg
	for _, o := range opts {
		o.apply(&cfg)
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	n := newNative()
	kinds, err := n.kinds()
	if err != nil {
		return nil, fmt.Errorf("function %s: %w", name, err)
	}
	m := abi.Manifest{ABI: abi.Version, Kinds: kinds, Name: n.Name, Version: n.Version, SDK: NativeSDK}
	if m.Name == "" {
		m.Name = name
	}
	f := &Function{
		name:      name,
		digest:    NativeDigestPrefix + m.Name,
		cfg:       cfg,
		manifest:  m,
		pool:      make(chan *Instance, cfg.poolSize),
		limiter:   newLimiter(cfg.logRate),
		newNative: newNative,
	}
	f.Release(context.Background(), f.nativeInstance(&n))
	return f, nil
}

// nativeInstance returns an instance running n.
func (f *Function) nativeInstance(n *Native) *Instance {
	i := &Instance{fn: f, nat: n}
	i.emit = i.emitNative
	return i
}

// newNativeInstance makes an instance with a new Native.
func (f *Function) newNativeInstance() (*Instance, error) {
	n := f.newNative()
	kinds, err := n.kinds()
	if err == nil && !slices.Equal(kinds, f.manifest.Kinds) {
		err = fmt.Errorf("%w: this instance's Native implements %v, the function %v", ErrManifest, kinds, f.manifest.Kinds)
	}
	if err != nil {
		return nil, fmt.Errorf("function %s: %w", f.name, err)
	}
	return f.nativeInstance(&n), nil
}

// NativeError fails one record or item of a native call with an ABI error
// code (see Native). Return it, or an error wrapping it.
type NativeError struct {
	Code abi.Code // abi.CodeBadInput, a function-defined code (64-255), ...; not positive means REJECTED
	Err  error    // the reason; may be nil
}

// Error implements error.
func (e *NativeError) Error() string {
	if e.Err == nil {
		return e.Code.String()
	}
	return e.Err.Error()
}

// Unwrap returns e.Err.
func (e *NativeError) Unwrap() error { return e.Err }

// BadInput marks err as "the record's payload could not be decoded" (code
// BAD_INPUT) for a native, like the Go SDK's eddy.BadInput.
func BadInput(err error) error { return &NativeError{Code: abi.CodeBadInput, Err: err} }

// nativeError is the *Error for an error a native returned for an item.
func (i *Instance) nativeError(kind abi.Kind, group, idx int, err error) *Error {
	code := abi.CodeRejected
	if ne, ok := errors.AsType[*NativeError](err); ok && ne.Code > 0 {
		code = ne.Code
	}
	return &Error{Function: i.fn.name, Kind: kind, Cause: CauseGuest, Code: code, Index: idx, Group: group, Reason: err.Error(), Err: err}
}

// nativePanic is the *Error for a panic in a native, which it logs with its
// stack.
func (i *Instance) nativePanic(kind abi.Kind, group, idx int, v any, stack []byte) *Error {
	i.fn.guestLog(context.Background(), slog.LevelError, "native function panicked", fmt.Sprintf("%s: %v\n%s", kind, v, stack))
	err, _ := v.(error)
	return &Error{Function: i.fn.name, Kind: kind, Cause: CauseTrap, Index: idx, Group: group, Reason: fmt.Sprintf("panic: %v", v), Err: err}
}

// nativeMalformed is the *Error for a nil answer where the ABI requires
// bytes.
func (i *Instance) nativeMalformed(kind abi.Kind, group, idx int, what string) *Error {
	return &Error{Function: i.fn.name, Kind: kind, Cause: CauseMalformed, Index: idx, Group: group,
		Reason: "native " + what + " returned a nil accumulator"}
}

// each calls item(j) for every j in [0, n), in order. A panic in item(j) is
// recovered and handed to panicked with its stack, and the loop goes on at
// j+1: a batch pays for one deferred recover, not one per item.
func each(n int, item func(j int), panicked func(j int, v any, stack []byte)) {
	for j := 0; j < n; {
		j = eachFrom(j, n, item, panicked)
	}
}

func eachFrom(j, n int, item func(j int), panicked func(j int, v any, stack []byte)) (next int) {
	defer func() {
		if v := recover(); v != nil {
			panicked(j, v, debug.Stack())
			next = j + 1
		}
	}()
	for ; j < n; j++ {
		item(j)
	}
	return j
}

// nativeCtx returns the error a native call gives for a done context, as a
// guest call does.
func (i *Instance) nativeCtx(ctx context.Context, kind abi.Kind) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("function %s (%s): %w", i.fn.name, kind, err)
	}
	return nil
}

// processNative is Process for a native.
func (i *Instance) processNative(ctx context.Context, in []abi.Record, out *Output) error {
	n := i.nat
	if n.Process != nil {
		return i.eachNative(ctx, abi.KindProcess, len(in), out, false, func(_ State, j int) error {
			return n.Process(&in[j], i.emit)
		})
	}
	return i.eachNative(ctx, abi.KindProcess, len(in), out, true, func(st State, j int) error {
		return n.ProcessState(st, &in[j], i.emit)
	})
}

// timerNative is Timer for a native: OnTimer for each timer that fired.
func (i *Instance) timerNative(ctx context.Context, fired []abi.Timer, out *Output) error {
	return i.eachNative(ctx, abi.KindTimer, len(fired), out, true, func(st State, j int) error {
		return i.nat.OnTimer(st, fired[j], i.emit)
	})
}

// eachNative calls call for items 0..n-1 of a native call of kind, the
// outputs of item j coming From j. A failed item's outputs are dropped
// and it goes to out.Failed. With state, each item is a call of its own:
// its state writes and timer changes apply unless it panics or breaks the
// limits (state.go), as a guest call's do. The error is the store's: it
// fails the batch.
func (i *Instance) eachNative(ctx context.Context, kind abi.Kind, n int, out *Output, state bool, call func(st State, j int) error) error {
	if err := i.nativeCtx(ctx, kind); err != nil {
		return err
	}
	nr, nf, na := len(out.Records), len(out.From), len(out.arena)
	// rollback drops what item j emitted before it failed, and its
	// changes.
	rollback := func() {
		clear(out.Records[nr:])
		out.Records, out.From, out.arena = out.Records[:nr], out.From[:nf], out.arena[:na]
		if state {
			i.beginState()
		}
	}
	i.out = out
	var st State
	if state {
		st = i.nativeState()
	}
	var stop error
	each(n, func(j int) {
		if stop != nil {
			return
		}
		nr, nf, na = len(out.Records), len(out.From), len(out.arena)
		i.from = int32(j)
		if state {
			i.limitErr = nil
			i.beginState()
		}
		err := call(st, j)
		if state {
			if i.limitErr != nil {
				rollback()
				out.Failed = append(out.Failed, &Error{Function: i.fn.name, Kind: kind, Cause: i.limitCause,
					Index: j, Group: -1, Reason: i.limitErr.Error(), Err: i.limitErr})
				return
			}
			stop = i.keepState(kind)
		}
		if err != nil {
			rollback()
			out.Failed = append(out.Failed, i.nativeError(kind, -1, j, err))
		}
	}, func(j int, v any, stack []byte) {
		rollback()
		out.Failed = append(out.Failed, i.nativePanic(kind, -1, j, v, stack))
	})
	i.out = nil
	return stop
}

// emitNative is the emit function of Process: it copies r's bytes into the
// output's arena, as a guest's answer is copied.
func (i *Instance) emitNative(r abi.Record) {
	out := i.out
	if out == nil {
		panic("runtime: a native called emit after its Process call returned")
	}
	a := out.arena
	// Filled in place: building the record apart and appending it costs a
	// stalled copy (a third of a passthrough's time through the runtime).
	out.Records = append(out.Records, abi.Record{})
	rec := &out.Records[len(out.Records)-1]
	rec.Timestamp = r.Timestamp
	rec.Key, a = appendOwned(a, r.Key)
	rec.Value, a = appendOwned(a, r.Value)
	if len(r.Headers) > 0 {
		rec.Headers = make([]abi.Header, len(r.Headers))
		for k, h := range r.Headers {
			rec.Headers[k].Key = h.Key
			rec.Headers[k].Value, a = appendOwned(a, h.Value)
		}
	}
	out.arena = a
	out.From = append(out.From, i.from)
}

// appendOwned appends b to arena and returns the copy (nil for nil, a
// non-nil empty slice for empty) and the arena.
func appendOwned(arena, b []byte) ([]byte, []byte) {
	if b == nil {
		return nil, arena
	}
	if len(b) == 0 {
		return []byte{}, arena
	}
	s := len(arena)
	arena = append(arena, b...)
	return arena[s:len(arena):len(arena)], arena
}

// span is where item j's answer lies in Instance.scratch.
type span struct{ j, lo, hi int }

// keep copies b into the instance's scratch as item j's answer; owned then
// moves every answer kept since the last call into one new buffer.
func (i *Instance) keep(j int, b []byte) {
	lo := len(i.scratch)
	i.scratch = append(i.scratch, b...)
	i.spans = append(i.spans, span{j, lo, len(i.scratch)})
}

// owned copies the kept answers into one buffer of their own, which the
// caller may keep, and calls set with each item's copy.
func (i *Instance) owned(set func(j int, b []byte)) {
	buf := make([]byte, len(i.scratch)) // non-nil even when empty
	copy(buf, i.scratch)
	for _, s := range i.spans {
		set(s.j, buf[s.lo:s.hi:s.hi])
	}
	i.scratch, i.spans = i.scratch[:0], i.spans[:0]
}

// valuesNative is values for a native: item(j) answers item j.
func (i *Instance) valuesNative(ctx context.Context, kind abi.Kind, n int, t abi.BodyType,
	item func(j int) ([]byte, int64, error), out []Result) ([]Result, error) {
	if err := i.checkKind(kind); err != nil {
		return out, err
	}
	if err := i.nativeCtx(ctx, kind); err != nil {
		return out, err
	}
	base := len(out)
	out = append(out, make([]Result, n)...)
	i.scratch, i.spans = i.scratch[:0], i.spans[:0]
	each(n, func(j int) {
		b, v, err := item(j)
		r := &out[base+j]
		switch {
		case err != nil:
			r.Err = i.nativeError(kind, -1, j, err)
		case t == abi.BodyInt:
			r.Int = v
		case b == nil && t == abi.BodyNonNil:
			r.Err = i.nativeMalformed(kind, -1, j, "AggMerge")
		case b != nil:
			i.keep(j, b)
		}
	}, func(j int, v any, stack []byte) {
		out[base+j] = Result{Err: i.nativePanic(kind, -1, j, v, stack)}
	})
	i.owned(func(j int, b []byte) { out[base+j].Bytes = b })
	return out, nil
}

// aggInitNative is AggInit for a native.
func (i *Instance) aggInitNative(ctx context.Context) ([]byte, error) {
	if i.aggInit != nil {
		return i.aggInit, nil
	}
	if err := i.nativeCtx(ctx, abi.KindAggregate); err != nil {
		return nil, err
	}
	var init []byte
	var e *Error
	each(1, func(int) { init = i.nat.AggInit() }, func(_ int, v any, stack []byte) {
		e = i.nativePanic(abi.KindAggregate, -1, -1, v, stack)
		e.Reason = "init: " + e.Reason
	})
	if e != nil {
		return nil, e
	}
	i.aggInit = append([]byte{}, init...) // nil is an empty accumulator, as in the Go SDK
	return i.aggInit, nil
}

// aggAddNative is AggAdd for a native. Each record is folded onto a scratch
// copy of the group's accumulator, so a record that fails leaves it as it
// was.
func (i *Instance) aggAddNative(ctx context.Context, groups []abi.Group, out []abi.Added, failed []*Error) ([]abi.Added, []*Error, error) {
	if err := i.nativeCtx(ctx, abi.KindAggregate); err != nil {
		return out, failed, err
	}
	add := i.nat.AggAdd
	base := len(out)
	out = append(out, make([]abi.Added, len(groups))...)
	i.scratch, i.spans = i.scratch[:0], i.spans[:0]
	for g := range groups {
		grp := &groups[g]
		acc := grp.Acc
		if acc == nil {
			init, err := i.aggInitNative(ctx)
			if err != nil {
				e, ok := errors.AsType[*Error](err)
				if !ok {
					return out, failed, err
				}
				// A group that cannot be folded at all: its accumulator
				// stays (empty), every record fails (ABI.md 5.4).
				for j := range grp.Records {
					c := *e
					c.Group, c.Index = g, j
					failed = append(failed, &c)
				}
				i.keep(base+g, nil)
				continue
			}
			acc = init
		}
		cur := append(i.acc[0][:0], acc...)
		each(len(grp.Records), func(j int) {
			work := append(i.acc[1][:0], cur...)
			i.acc[1] = work
			next, err := add(work, &grp.Records[j])
			switch {
			case err != nil:
				failed = append(failed, i.nativeError(abi.KindAggregate, g, j, err))
				return
			case next == nil:
				failed = append(failed, i.nativeMalformed(abi.KindAggregate, g, j, "AggAdd"))
				return
			}
			// Make next the current accumulator, in the work buffer (a
			// no-op copy when add updated work in place), and the old
			// current buffer the next work buffer.
			next = append(work[:0], next...)
			i.acc[0], i.acc[1] = next, cur[:0]
			cur = next
		}, func(j int, v any, stack []byte) {
			failed = append(failed, i.nativePanic(abi.KindAggregate, g, j, v, stack))
		})
		i.acc[0] = cur
		i.keep(base+g, cur)
	}
	i.owned(func(j int, b []byte) { out[j].Acc = b })
	return out, failed, nil
}
