package runtime

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strings"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
	"github.com/tetratelabs/wazero/sys"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/runtime/internal/interrupt"
)

// Instance is one instantiation of a Function. It is not safe for concurrent
// use: a task owns an instance, or borrows one from the pool for a call.
//
// An instance heals itself: a call that traps, times out, exhausts memory or
// returns malformed output discards the underlying module, and the next call
// instantiates a fresh one. Within a batch, the failing record is isolated by
// bisection (ABI.md section 8), so the other records still succeed.
type Instance struct {
	fn       *Function
	mod      api.Module // nil after a failure: rebuilt on the next call
	mem      api.Memory
	exports  map[string]api.Function
	inPtr    uint32 // the eddy_alloc region
	inCap    uint32
	enc      []byte // reused envelope buffer
	stack    [2]uint64
	state    State
	aggInit  []byte // cached answer of eddy_agg_init
	rebuilds int

	// slot is the module's entry in the engine's watchdog, nil for an
	// uninterruptible function. interrupted says that the watchdog stopped
	// the last failed call.
	slot        *callSlot
	interrupted bool

	lastCode   abi.Code // set by the error host call during a call
	lastReason string
	// growRefused says that a memory.grow of the current call was refused
	// at the memory limit (guestMemory), so that a trap after it is
	// reported as out of memory.
	growRefused bool
	// writes are the state writes of the call in progress (state.go);
	// limitErr is set by a state write over the limits, which fails the
	// call (refuseWrite).
	writes     callWrites
	limitErr   error
	limitCause Cause // CauseStateLimit or CauseTimerLimit, with limitErr
	// timers is the step's timer service (timers.go), nil without one.
	timers Timers

	// A native instance (LoadNative) has no module: it runs nat.
	nat     *Native
	emit    func(abi.Record) // emitNative, bound once
	out     *Output          // during Process: where emit appends
	from    int32            // during Process: the input record's index
	scratch []byte           // answers of the current call, before they are copied out
	spans   []span           // where each answer lies in scratch
	acc     [2][]byte        // AggAdd: the current accumulator and a work copy
}

// NewInstance instantiates the function. Most callers use Acquire/Release.
func (f *Function) NewInstance(ctx context.Context) (*Instance, error) {
	if f.IsNative() {
		return f.newNativeInstance()
	}
	i := &Instance{fn: f}
	if err := i.instantiate(ctx); err != nil {
		return nil, err
	}
	return i, nil
}

// SetState attaches the keyed store used by the state host calls; nil
// detaches it (the calls then return "unavailable").
func (i *Instance) SetState(s State) { i.state = s }

// Rebuilds returns how many times the instance was rebuilt after a failure
// (always 0 for a native function, which has nothing to rebuild).
func (i *Instance) Rebuilds() int { return i.rebuilds }

// MemorySize returns the current size of the instance's linear memory in
// bytes, or 0 while it awaits a rebuild (and always for a native function).
func (i *Instance) MemorySize() uint32 {
	if i.mod == nil {
		return 0
	}
	return i.mem.Size()
}

// Close closes the underlying module.
func (i *Instance) Close(ctx context.Context) error {
	if i.mod == nil {
		return nil
	}
	i.unwatch()
	err := i.mod.Close(ctx)
	i.mod = nil
	return err
}

// unwatch takes the module out of the watchdog.
func (i *Instance) unwatch() {
	if i.slot != nil {
		i.fn.wd.remove(i.slot)
		i.slot = nil
	}
}

func (i *Instance) instantiate(ctx context.Context) error {
	f := i.fn
	var seed [32]byte
	binary.LittleEndian.PutUint64(seed[:], f.cfg.seed)
	cfg := wazero.NewModuleConfig().
		WithName("").
		WithStdout(f.newLineWriter("stdout", slog.LevelInfo)).
		WithStderr(f.newLineWriter("stderr", slog.LevelWarn)).
		WithRandSource(rand.NewChaCha8(seed))
	if f.cfg.clock == ClockSystem {
		cfg = cfg.WithSysWalltime().WithSysNanotime().WithSysNanosleep()
	}
	ictx := experimental.WithMemoryAllocator(context.WithValue(ctx, instKey{}, i), allocator{i})
	if f.wd == nil {
		// Uninterruptible: wazero runs the start function, and nothing
		// can stop it.
		mod, err := f.rt.InstantiateModule(ictx, f.compiled, cfg.WithStartFunctions(abi.ExportInitialize))
		if err != nil {
			if ctx.Err() != nil {
				return fmt.Errorf("function %s: instantiate: %w", f.name, ctx.Err())
			}
			return fmt.Errorf("function %s: instantiate: %s", f.name, firstLine(err.Error()))
		}
		i.setModule(mod)
		return nil
	}
	// Interruptible: the start functions run under the watchdog, which
	// needs the module's flag, so they are called here rather than by
	// wazero: the former start section first (interrupt.StartExport), then
	// _initialize, as wazero would.
	mod, err := f.rt.InstantiateModule(ictx, f.compiled, cfg.WithStartFunctions())
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("function %s: instantiate: %w", f.name, ctx.Err())
		}
		return fmt.Errorf("function %s: instantiate: %s", f.name, firstLine(err.Error()))
	}
	flag, ok1 := mod.ExportedGlobal(interrupt.FlagExport).(api.MutableGlobal)
	fuel, ok2 := mod.ExportedGlobal(interrupt.FuelExport).(api.MutableGlobal)
	if !ok1 || !ok2 {
		mod.Close(ctx)
		return fmt.Errorf("function %s: instantiate: no interrupt flag and fuel", f.name)
	}
	i.setModule(mod)
	i.slot = &callSlot{fn: f, flag: flag, fuel: fuel}
	f.wd.add(i.slot)
	for _, name := range [...]string{interrupt.StartExport, abi.ExportInitialize} {
		fn := mod.ExportedFunction(name)
		if fn == nil || (name == interrupt.StartExport && !f.startExport) {
			continue
		}
		what := name
		if name == interrupt.StartExport {
			what = "the start function"
		}
		def := fn.Definition()
		if len(def.ParamTypes()) != 0 || len(def.ResultTypes()) != 0 {
			i.Close(ctx)
			return fmt.Errorf("function %s: instantiate: %s has type %s, want () -> ()", f.name, what, sig(def.ParamTypes(), def.ResultTypes()))
		}
		if err := i.invoke(ictx, fn, nil); err != nil {
			interrupted := i.interrupted
			i.Close(ctx)
			var exit *sys.ExitError
			switch {
			case ctx.Err() != nil:
				return fmt.Errorf("function %s: instantiate: %w", f.name, ctx.Err())
			case interrupted:
				return fmt.Errorf("function %s: instantiate: start function did not finish within %s", f.name, f.cfg.callTimeout)
			case errors.As(err, &exit):
				return fmt.Errorf("function %s: instantiate: %s exited with code %d", f.name, what, exit.ExitCode())
			default:
				return fmt.Errorf("function %s: instantiate: %s: %s", f.name, what, firstLine(err.Error()))
			}
		}
	}
	return nil
}

func (i *Instance) setModule(mod api.Module) {
	i.mod, i.mem = mod, mod.ExportedMemory(abi.ExportMemory)
	i.exports = make(map[string]api.Function, 4)
	i.inPtr, i.inCap, i.aggInit = 0, 0, nil
}

// allocator gives an instance's linear memory: a guestMemory, which
// enforces the memory limit itself.
//
// # Why
//
// wazero refuses a memory.grow past its limit without a trace, and a guest
// that then traps (Go's runtime does, on a failed allocation) looked like
// any other trap. So wazero's limit is set to the Wasm maximum (4 GiB,
// Engine.Load) and the limit is enforced here, where a refusal is seen. A
// grow past 4 GiB in all, or past a maximum the module declares itself, is
// still refused by wazero unseen (the near-limit rule of classify covers
// the latter).
type allocator struct{ i *Instance }

// Allocate implements experimental.MemoryAllocator.
func (a allocator) Allocate(capacity, _ uint64) experimental.LinearMemory {
	i := a.i
	return &guestMemory{buf: make([]byte, 0, capacity), limit: uint64(i.fn.cfg.memoryLimit / pageSize * pageSize), refused: &i.growRefused}
}

// guestMemory is a linear memory of at most limit bytes that records the
// grows it refuses.
type guestMemory struct {
	buf     []byte
	limit   uint64
	refused *bool
}

// Reallocate implements experimental.LinearMemory. Memory only grows, and
// bytes past len(buf) were never written, so a grow within the capacity
// exposes zeros, as Wasm requires.
func (m *guestMemory) Reallocate(size uint64) []byte {
	switch {
	case size > m.limit:
		*m.refused = true
		return nil
	case size <= uint64(cap(m.buf)):
		m.buf = m.buf[:size]
	default:
		// As wazero grows its own memories: append's amortised growth.
		m.buf = append(m.buf, make([]byte, size-uint64(len(m.buf)))...)
	}
	return m.buf
}

// Free implements experimental.LinearMemory.
func (m *guestMemory) Free() { m.buf = nil }

// invoke calls fn. For an interruptible function, the call is armed in the
// watchdog with the call timeout and ctx, and i.interrupted says afterwards
// whether the watchdog stopped it.
func (i *Instance) invoke(ctx context.Context, fn api.Function, stack []uint64) error {
	i.growRefused = false
	s := i.slot
	if s == nil {
		return fn.CallWithStack(ctx, stack)
	}
	s.arm(ctx, i.fn.wd.now()+int64(i.fn.cfg.callTimeout))
	err := fn.CallWithStack(ctx, stack)
	i.interrupted = s.disarm()
	if i.interrupted && err == nil {
		// The call returned as the watchdog fired: its answer stands, and
		// the next call must not trap on the flag. (The fuel the watchdog
		// took only makes the next check refuel.)
		s.flag.Set(0)
		i.interrupted = false
	}
	return err
}

func (i *Instance) export(name string) api.Function {
	fn, ok := i.exports[name]
	if !ok {
		fn = i.mod.ExportedFunction(name)
		i.exports[name] = fn
	}
	return fn
}

// discard drops the module after a failure; the next call rebuilds it. (A
// module stopped by the watchdog still has its flag set: it must not be
// called again. It would not be anyway: a trap can leave a module's state
// half updated.)
func (i *Instance) discard(ctx context.Context) {
	if i.mod != nil {
		i.unwatch()
		_ = i.mod.Close(ctx)
		i.mod = nil
		i.rebuilds++
	}
}

func (i *Instance) errorf(kind abi.Kind, cause Cause, err error, format string, args ...any) *Error {
	return &Error{Function: i.fn.name, Kind: kind, Cause: cause, Index: -1, Group: -1, Reason: fmt.Sprintf(format, args...), Err: err}
}

// call writes input into the guest's alloc region, calls export and returns a
// view of the guest's answer, valid until the next call into the instance.
// A non-nil error is an *Error (guest failure, the instance was discarded) or
// a context or instantiation error.
func (i *Instance) call(ctx context.Context, kind abi.Kind, export string, input []byte) ([]byte, error) {
	if i.mod == nil {
		if err := i.instantiate(ctx); err != nil {
			return nil, err
		}
	}
	ictx := context.WithValue(ctx, instKey{}, i)
	n := uint32(len(input))
	if uint64(len(input)) > maxMemoryLimit {
		return nil, fmt.Errorf("function %s (%s): envelope of %d bytes exceeds the ABI's limit", i.fn.name, kind, len(input))
	}
	if i.inPtr == 0 || n > i.inCap {
		size := max(n, 4096, i.inCap*2)
		if size > 1<<30 {
			size = n
		}
		i.stack[0] = uint64(size)
		if err := i.invoke(ictx, i.export(abi.ExportAlloc), i.stack[:]); err != nil {
			err = i.fail(ctx, kind, err)
			if e, ok := err.(*Error); ok {
				e.Export = fmt.Sprintf("%s(%d)", abi.ExportAlloc, size)
			}
			return nil, err
		}
		ptr := uint32(i.stack[0])
		if ptr == 0 {
			i.discard(ctx)
			return nil, i.errorf(kind, CauseOOM, nil, "eddy_alloc(%d) returned 0", size)
		}
		if uint64(ptr)+uint64(size) > uint64(i.mem.Size()) {
			i.discard(ctx)
			return nil, i.errorf(kind, CauseMalformed, nil, "eddy_alloc(%d) returned region [%d, %d) beyond memory of %d bytes", size, ptr, uint64(ptr)+uint64(size), i.mem.Size())
		}
		i.inPtr, i.inCap = ptr, size
	}
	if n > 0 && !i.mem.Write(i.inPtr, input) {
		i.discard(ctx)
		return nil, i.errorf(kind, CauseMalformed, nil, "alloc region [%d, %d) no longer inside memory", i.inPtr, uint64(i.inPtr)+uint64(n))
	}
	i.lastCode, i.lastReason, i.limitErr = 0, "", nil
	i.beginState()
	i.stack[0], i.stack[1] = uint64(i.inPtr), uint64(n)
	if err := i.invoke(ictx, i.export(export), i.stack[:]); err != nil {
		return nil, i.fail(ctx, kind, err)
	}
	if i.limitErr != nil {
		// A state write over the limits (refuseWrite): the call fails
		// whatever it answered; the instance is sound and stays.
		return nil, i.errorf(kind, i.limitCause, i.limitErr, "%v", i.limitErr)
	}
	return i.answer(ctx, kind, int64(i.stack[0]))
}

// answer interprets an export's i64 return value.
func (i *Instance) answer(ctx context.Context, kind abi.Kind, ret int64) ([]byte, error) {
	if ret < 0 {
		reason := i.lastReason
		if reason == "" {
			reason = "the guest gave no reason"
		}
		i.discard(ctx)
		e := i.errorf(kind, CauseFailed, nil, "%s", reason)
		e.Return = ret
		if ret >= -(1<<31 - 1) {
			e.Code = abi.Code(-ret)
		}
		return nil, e
	}
	ptr, n := uint32(uint64(ret)>>32), uint32(ret)
	view, ok := i.mem.Read(ptr, n)
	if !ok {
		size := i.mem.Size()
		i.discard(ctx)
		return nil, i.errorf(kind, CauseMalformed, nil, "answer claims bytes [%d, %d), beyond memory of %d bytes", ptr, uint64(ptr)+uint64(n), size)
	}
	return view, nil
}

// fail classifies a failed call and discards the instance.
func (i *Instance) fail(ctx context.Context, kind abi.Kind, err error) error {
	var memSize uint32
	if i.mem != nil {
		memSize = i.mem.Size()
	}
	i.discard(ctx)
	if ctx.Err() != nil {
		return fmt.Errorf("function %s (%s): %w", i.fn.name, kind, ctx.Err())
	}
	e := i.classify(kind, err, memSize)
	if i.lastReason != "" {
		// A guest that reports through error() before trapping (an SDK's
		// abort handler) gets its reason into the failure.
		e.Reason += " (guest said: " + i.lastReason + ")"
	}
	return e
}

// classify names the cause of a failed call.
func (i *Instance) classify(kind abi.Kind, err error, memSize uint32) *Error {
	limit := uint32(i.fn.cfg.memoryLimit / pageSize * pageSize)
	// wazero does not say that a memory.grow was refused, so a failure with
	// memory close to the limit is reported as exhaustion. Runtimes grow in
	// chunks (Go asks for 4 MiB arenas): the margin is an eighth of the limit,
	// at most 4 MiB and a page.
	margin := min(limit/8, 4<<20+pageSize)
	nearLimit := memSize+margin > limit
	var exit *sys.ExitError
	switch {
	case i.limitErr != nil:
		// A state write over the limits, after which the guest trapped
		// (an SDK may treat StateFailed as fatal).
		return i.errorf(kind, i.limitCause, i.limitErr, "%v", i.limitErr)
	case i.interrupted:
		// The guest trapped on the interrupt flag the watchdog set.
		err = fmt.Errorf("%w: interrupted: %w", context.DeadlineExceeded, err)
		return i.errorf(kind, CauseTimeout, err, "call did not finish within %s", i.fn.cfg.callTimeout)
	case i.growRefused:
		return i.errorf(kind, CauseOOM, err, "memory at %d of %d bytes, a memory.grow refused: %s", memSize, limit, firstLine(err.Error()))
	case nearLimit:
		return i.errorf(kind, CauseOOM, err, "memory at %d of %d bytes: %s", memSize, limit, firstLine(err.Error()))
	case errors.As(err, &exit):
		return i.errorf(kind, CauseExit, err, "guest exited with code %d", exit.ExitCode())
	default:
		return i.errorf(kind, CauseTrap, err, "%s", firstLine(err.Error()))
	}
}

func firstLine(s string) string {
	if j := strings.IndexByte(s, '\n'); j >= 0 {
		return s[:j]
	}
	return s
}

// manifest calls eddy_manifest.
func (i *Instance) manifest(ctx context.Context) (abi.Manifest, error) {
	if err := i.invoke(context.WithValue(ctx, instKey{}, i), i.export(abi.ExportManifest), i.stack[:]); err != nil {
		return abi.Manifest{}, i.fail(ctx, "manifest", err)
	}
	view, err := i.answer(ctx, "manifest", int64(i.stack[0]))
	if err != nil {
		return abi.Manifest{}, err
	}
	return abi.DecodeManifest(view)
}

// bisect runs try over [lo, hi). When the call fails as a whole (the instance
// was discarded), it splits the range in two and retries each half, until the
// failing item is alone; that item is reported through failed and the rest
// succeed. Errors that are not guest failures (context, instantiation) stop
// it.
func bisect(lo, hi int, try func(lo, hi int) error, failed func(idx int, e *Error)) error {
	err := try(lo, hi)
	var e *Error
	if err == nil || !errors.As(err, &e) || e.Cause == CauseGuest || hi-lo == 0 {
		return err
	}
	if hi-lo == 1 {
		failed(lo, e)
		return nil
	}
	mid := lo + (hi-lo)/2
	if err := bisect(lo, mid, try, failed); err != nil {
		return err
	}
	return bisect(mid, hi, try, failed)
}

// checkKind returns ErrNoKind unless the manifest names k.
func (i *Instance) checkKind(k abi.Kind) error {
	if !i.fn.manifest.Has(k) {
		return fmt.Errorf("function %s: %w: %s (it implements %v)", i.fn.name, ErrNoKind, k, i.fn.manifest.Kinds)
	}
	return nil
}
