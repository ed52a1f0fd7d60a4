package runtime

import (
	"errors"
	"fmt"

	"github.com/eddy-streams/eddy/abi"
)

// Errors returned by Engine.Load when a module is refused. Each is wrapped
// with the specifics (what is missing, what was found).
var (
	// ErrNotWasm means the bytes are not a WebAssembly binary module.
	ErrNotWasm = errors.New("not a WebAssembly module")
	// ErrInvalidModule means the module does not compile (bad or unsupported Wasm).
	ErrInvalidModule = errors.New("invalid WebAssembly module")
	// ErrNotFunction means the module has no eddy_abi_vN marker export.
	ErrNotFunction = errors.New("not an Eddy function")
	// ErrABIVersion means the module speaks an ABI version this host does not.
	ErrABIVersion = errors.New("unsupported ABI version")
	// ErrMissingExport means an export the ABI requires is absent or mistyped.
	ErrMissingExport = errors.New("missing or mistyped export")
	// ErrImport means the module imports something the host does not provide.
	ErrImport = errors.New("unsupported import")
	// ErrManifest means eddy_manifest failed or returned an invalid manifest.
	ErrManifest = errors.New("invalid manifest")
	// ErrNoKind is returned when a function is called for a kind its manifest
	// does not name.
	ErrNoKind = errors.New("function does not implement this kind")
	// ErrModuleLimit means the module is over a bound Load checks before
	// compiling: its size (WithMaxModuleSize), or the nesting depth,
	// br_table size, function count or function size of its code.
	ErrModuleLimit = errors.New("module over a limit")
	// ErrCompileTimeout means the module did not compile within the compile
	// timeout (WithCompileTimeout).
	ErrCompileTimeout = errors.New("module did not compile in time")
)

// Cause says why a guest call or a record failed.
type Cause string

// Causes of failures. CauseGuest is a per-record failure the guest reported
// itself (Error.Code says which); the others are detected by the host and end
// the instance.
const (
	CauseGuest     Cause = "guest"
	CauseFailed    Cause = "failed" // the call returned a negative value
	CauseTrap      Cause = "trap"
	CauseTimeout   Cause = "timeout"
	CauseOOM       Cause = "out_of_memory"
	CauseMalformed Cause = "malformed_output"
	CauseExit      Cause = "exit"
	// CauseStateLimit: a state_put with a key or value over the keyed-state
	// limits (abi.MaxStateKey, abi.MaxStateValue); the call fails.
	CauseStateLimit Cause = "state_limit"
	// CauseTimerLimit: a timer_set past the timers a key or a task may
	// hold (abi.DefaultMaxTimersPerKey, ...), or with a key over
	// abi.MaxStateKey; the call fails.
	CauseTimerLimit Cause = "timer_limit"
)

// Sentinels matched by errors.Is against an *Error of the same cause.
var (
	ErrGuest     = errors.New("guest reported an error")
	ErrFailed    = errors.New("guest call failed")
	ErrTrap      = errors.New("guest trapped")
	ErrTimeout   = errors.New("guest call exceeded its deadline")
	ErrOOM       = errors.New("guest ran out of memory")
	ErrMalformed = errors.New("guest returned malformed output")
	ErrExit      = errors.New("guest exited")
	// ErrStateLimit matches a CauseStateLimit failure.
	ErrStateLimit = errors.New("keyed state limit exceeded")
	// ErrTimerLimit matches a CauseTimerLimit failure; a Timers service
	// returns it (wrapped) from Set for a timer past its limits.
	ErrTimerLimit = errors.New("timer limit exceeded")
)

var causeErr = map[Cause]error{
	CauseGuest: ErrGuest, CauseFailed: ErrFailed, CauseTrap: ErrTrap, CauseTimeout: ErrTimeout,
	CauseOOM: ErrOOM, CauseMalformed: ErrMalformed, CauseExit: ErrExit, CauseStateLimit: ErrStateLimit,
	CauseTimerLimit: ErrTimerLimit,
}

// Error is a failed guest call or a failed record. It names the function, the
// kind and the cause. Per-record errors (from the guest, or isolated by the
// host by bisecting a failing batch) carry the record's index in the batch.
type Error struct {
	Function string   // the function's name
	Kind     abi.Kind // the kind being called
	Cause    Cause
	Code     abi.Code // for CauseGuest and CauseFailed: the guest's code
	Index    int      // index of the failed item in its batch (in its group for aggregate add), or -1 for a whole call
	Group    int      // for aggregate add: index of the item's group, else -1
	Reason   string   // the guest's reason, or the host's description
	Err      error    // underlying error, if any
	// Return is, for CauseFailed, the call's return value (the negated
	// code); it tells a value that is no code at all (below -(2^31-1)).
	Return int64
	// Export names the export that failed when it is not the kind's own
	// (eddy_alloc), else "".
	Export string
}

// Error implements error.
func (e *Error) Error() string {
	s := fmt.Sprintf("function %s (%s)", e.Function, e.Kind)
	if e.Group >= 0 {
		s += fmt.Sprintf(": group %d", e.Group)
	}
	if e.Index >= 0 {
		s += fmt.Sprintf(": record %d", e.Index)
	}
	switch e.Cause {
	case CauseGuest:
		s += fmt.Sprintf(": %s (code %d)", e.Code, e.Code)
	case CauseFailed:
		if e.Return < -(1<<31 - 1) {
			s += fmt.Sprintf(": call failed (returned %d, not an error code)", e.Return)
		} else {
			s += fmt.Sprintf(": call failed (code %d, %s)", e.Code, codeName(e.Code))
		}
	default:
		s += ": " + string(e.Cause)
	}
	if e.Export != "" {
		s += " in " + e.Export
	}
	if e.Reason != "" {
		s += ": " + e.Reason
	}
	return s
}

// codeName names a code of ABI.md section 7, saying when it is none.
func codeName(c abi.Code) string {
	switch {
	case c >= abi.CodeOK && c <= abi.CodeState, c >= 64 && c <= 255:
		return c.String()
	case c > abi.CodeState && c < 64:
		return "a reserved code"
	}
	return "not an ABI code"
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// Is reports whether target is the sentinel of e's cause.
func (e *Error) Is(target error) bool { return causeErr[e.Cause] == target }

// CodeString returns the value of the dead-letter error-code header: the
// guest's code name for guest failures, else the cause.
func (e *Error) CodeString() string {
	if e.Cause == CauseGuest {
		return e.Code.String()
	}
	return string(e.Cause)
}

// IsCallFailure reports whether err is a call-level guest failure (trap,
// timeout, out of memory, malformed output, exit, negative return): the kind
// of failure that ends an instance.
func IsCallFailure(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Cause != CauseGuest
}
