package runtime

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/eddy-streams/eddy/abi"
)

// hostTypes are the signatures of the eddy host functions (ABI.md section 3).
var hostTypes = map[string][2][]api.ValueType{
	abi.HostLog:         {{i32, i32, i32}, nil},
	abi.HostError:       {{i32, i32, i32}, nil},
	abi.HostStateGet:    {{i32, i32, i32, i32}, {i32}},
	abi.HostStatePut:    {{i32, i32, i32, i32}, {i32}},
	abi.HostStateDelete: {{i32, i32}, {i32}},
	abi.HostCounterAdd:  {{i32, i32, i64}, nil},
	abi.HostTimerSet:    {{i32, i32, i32, i64}, {i32}},
	abi.HostTimerDelete: {{i32, i32, i32, i64}, {i32}},
	abi.HostTimeNow:     {{i32}, {i64}},
	abi.HostConfigGet:   {{i32, i32, i32, i32}, {i32}},
}

// instKey carries the *Instance being called to the host functions.
type instKey struct{}

func instanceFrom(ctx context.Context) *Instance {
	i, _ := ctx.Value(instKey{}).(*Instance)
	return i
}

// instantiateHost adds WASI and the eddy host module to the function's runtime.
// Host functions are stack-based (api.GoModuleFunc): the reflective form costs
// several times more per call.
func (f *Function) instantiateHost(ctx context.Context) error {
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, f.rt); err != nil {
		return fmt.Errorf("runtime: wasi: %w", err)
	}
	b := f.rt.NewHostModuleBuilder(abi.HostModule)
	add := func(name string, fn api.GoModuleFunc) {
		t := hostTypes[name]
		b.NewFunctionBuilder().WithGoModuleFunction(fn, t[0], t[1]).Export(name)
	}
	add(abi.HostLog, f.hostLog)
	add(abi.HostError, hostError)
	add(abi.HostStateGet, hostStateGet)
	add(abi.HostStatePut, hostStatePut)
	add(abi.HostStateDelete, hostStateDelete)
	add(abi.HostCounterAdd, f.hostCounterAdd)
	add(abi.HostTimerSet, hostTimerSet)
	add(abi.HostTimerDelete, hostTimerDelete)
	add(abi.HostTimeNow, hostTimeNow)
	add(abi.HostConfigGet, hostConfigGet)
	if _, err := b.Instantiate(ctx); err != nil {
		return fmt.Errorf("runtime: host module: %w", err)
	}
	return nil
}

// read returns a view of guest memory, trapping the call when the range is
// outside memory (a panic in a host function becomes a trap of the call).
func read(m api.Module, ptr, n uint64) []byte {
	b, ok := m.Memory().Read(uint32(ptr), uint32(n))
	if !ok {
		panic(fmt.Errorf("host call: range [%d, %d) is outside guest memory (%d bytes)", uint32(ptr), uint64(uint32(ptr))+uint64(uint32(n)), m.Memory().Size()))
	}
	return b
}

var levels = [...]slog.Level{slog.LevelDebug, slog.LevelInfo, slog.LevelWarn, slog.LevelError}

func (f *Function) hostLog(ctx context.Context, m api.Module, stack []uint64) {
	level, msg := uint32(stack[0]), read(m, stack[1], stack[2])
	l := slog.LevelInfo
	if level < uint32(len(levels)) {
		l = levels[level]
	}
	// Cut like a stdout line, copying only what is kept.
	f.guestLog(ctx, l, "guest log", abi.TruncateBytes(msg, maxLine))
}

func hostError(ctx context.Context, m api.Module, stack []uint64) {
	code, reason := int32(stack[0]), read(m, stack[1], stack[2])
	if i := instanceFrom(ctx); i != nil {
		// The reason ends up in a dead-letter header and the log: only its
		// first abi.MaxReasonBytes are copied.
		i.lastCode, i.lastReason = abi.Code(code), abi.TruncateBytes(reason, abi.MaxReasonBytes)
	}
}

// stateOf returns the calling instance and its store, or nil when the
// function has no store (the state calls then answer "unavailable").
func stateOf(ctx context.Context) (*Instance, State) {
	i := instanceFrom(ctx)
	if i == nil || i.state == nil {
		return nil, nil
	}
	return i, i.state
}

// stateResult is what a state call answers for err: 0, or "failed" after
// logging the storage error.
func stateResult(ctx context.Context, i *Instance, op string, err error) uint64 {
	if err != nil {
		i.fn.guestLog(ctx, slog.LevelError, "state "+op+" failed", err.Error())
		return api.EncodeI32(abi.StateFailed)
	}
	return 0
}

func hostStateGet(ctx context.Context, m api.Module, stack []uint64) {
	key := read(m, stack[0], stack[1])
	vptr, vcap := uint32(stack[2]), uint32(stack[3])
	i, st := stateOf(ctx)
	if st == nil {
		stack[0] = api.EncodeI32(abi.StateUnavailable)
		return
	}
	var v []byte
	var ok bool
	var err error
	switch w, wok, found := i.writes.get(key); {
	case found: // the call's own write
		v, ok = w, wok
	case len(key) > abi.MaxStateKey: // never stored
	default:
		v, ok, err = st.Get(key)
	}
	switch {
	case err != nil || uint64(len(v)) > 1<<31-1:
		stack[0] = stateResult(ctx, i, "get", cmp.Or(err, errors.New("value too large for the ABI")))
	case !ok:
		stack[0] = api.EncodeI32(abi.StateAbsent)
	default:
		if len(v) > 0 && uint32(len(v)) <= vcap && !m.Memory().Write(vptr, v) {
			panic(fmt.Errorf("host call state_get: value buffer [%d, %d) is outside guest memory", vptr, uint64(vptr)+uint64(len(v))))
		}
		stack[0] = api.EncodeI32(int32(len(v)))
	}
}

// hostStatePut writes into the call's writes (state.go). A key or value
// over the limits fails the call (refuseWrite).
func hostStatePut(ctx context.Context, m api.Module, stack []uint64) {
	key, val := read(m, stack[0], stack[1]), read(m, stack[2], stack[3])
	i, st := stateOf(ctx)
	if st == nil {
		stack[0] = api.EncodeI32(abi.StateUnavailable)
		return
	}
	err := checkStatePut(key, val)
	if err == nil {
		err = i.checkCallWrites(len(key) + len(val))
	}
	if i.refuseWrite(err) {
		stack[0] = api.EncodeI32(abi.StateFailed)
		return
	}
	i.writes.set(key, val, false)
	stack[0] = 0
}

// refuseWrite reports whether a state write must be refused: err (a write
// over the limits) or an earlier refusal in the same call. The guest is
// answered StateFailed, and the call fails with cause state_limit whatever
// it answers (Instance.call checks limitErr): the bisection that follows
// isolates the record that made the write, which is dead-lettered with the
// reason, and the call's other writes are dropped with it.
func (i *Instance) refuseWrite(err error) bool {
	if err != nil && i.limitErr == nil {
		i.limitErr, i.limitCause = err, CauseStateLimit
	}
	return i.limitErr != nil
}

func hostStateDelete(ctx context.Context, m api.Module, stack []uint64) {
	key := read(m, stack[0], stack[1])
	i, st := stateOf(ctx)
	switch {
	case st == nil:
		stack[0] = api.EncodeI32(abi.StateUnavailable)
		return
	case len(key) <= abi.MaxStateKey: // a longer key is never stored: nothing to delete
		if i.refuseWrite(i.checkCallWrites(len(key))) {
			stack[0] = api.EncodeI32(abi.StateFailed)
			return
		}
		i.writes.set(key, nil, true)
	}
	stack[0] = 0
}

// checkCallWrites returns the error of a write of n more bytes that would
// take the call's writes over abi.MaxCallStateBytes.
func (i *Instance) checkCallWrites(n int) error {
	if have := len(i.writes.arena); have+n > abi.MaxCallStateBytes {
		return fmt.Errorf("state writes of one call over the limit of %d bytes (%d written, %d more)", abi.MaxCallStateBytes, have, n)
	}
	return nil
}

// checkStatePut returns the error of a put over the keyed-state limits.
// It names the sizes, never the bytes.
func checkStatePut(key, value []byte) error {
	switch {
	case len(key) > abi.MaxStateKey:
		return fmt.Errorf("state_put: key of %d bytes is over the limit of %d bytes", len(key), abi.MaxStateKey)
	case len(value) > abi.MaxStateValue:
		return fmt.Errorf("state_put: value of %d bytes is over the limit of %d bytes", len(value), abi.MaxStateValue)
	}
	return nil
}

// hostConfigGet answers a configuration entry of the function's step
// (WithConfig), as state_get answers a key: -1 when absent, else the
// value's length, copied when it fits.
func hostConfigGet(ctx context.Context, m api.Module, stack []uint64) {
	name := read(m, stack[0], stack[1])
	vptr, vcap := uint32(stack[2]), uint32(stack[3])
	i := instanceFrom(ctx)
	if i == nil {
		stack[0] = api.EncodeI32(abi.StateAbsent)
		return
	}
	v, ok := i.fn.cfg.config[string(name)]
	if !ok {
		stack[0] = api.EncodeI32(abi.StateAbsent)
		return
	}
	if len(v) > 0 && uint32(len(v)) <= vcap && !m.Memory().Write(vptr, v) {
		panic(fmt.Errorf("host call config_get: value buffer [%d, %d) is outside guest memory", vptr, uint64(vptr)+uint64(len(v))))
	}
	stack[0] = api.EncodeI32(int32(len(v)))
}

// Bounds of guest counters: each distinct name is kept by the host (and
// becomes a metric), so a guest adding to a new name on every call would
// grow them without end.
const (
	maxCounterNames = 1000 // distinct names per function
	maxCounterName  = 256  // bytes
)

func (f *Function) hostCounterAdd(ctx context.Context, m api.Module, stack []uint64) {
	name, delta := read(m, stack[0], stack[1]), int64(stack[2])
	f.countersMu.Lock()
	_, known := f.counters[string(name)] // no allocation for the lookup
	if !known && (len(name) > maxCounterName || len(f.counters) >= maxCounterNames) {
		first := f.countersDropped == 0
		f.countersDropped++
		f.countersMu.Unlock()
		if first {
			f.guestLog(ctx, slog.LevelWarn, "guest counter dropped",
				fmt.Sprintf("counter %q refused: at most %d names of at most %d bytes per function; further refusals are not logged",
					abi.TruncateBytes(name, 64), maxCounterNames, maxCounterName))
		}
		return
	}
	if f.counters == nil {
		f.counters = make(map[string]int64)
	}
	f.counters[string(name)] += delta
	f.countersMu.Unlock()
	if f.cfg.counters != nil {
		f.cfg.counters.Add(f.name, string(name), delta)
	}
}
