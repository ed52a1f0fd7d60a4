// Package abi defines version 1 of the Eddy guest ABI: the names of the exports
// and imports, the error codes, and the host side of the msgpack envelopes that
// cross the boundary (abi/ABI.md is the specification).
//
// The envelopes of the per-record and per-group paths are written by hand on
// top of package msgpack: encoding appends to a caller's buffer and decoding
// fills caller-owned output structs, so those paths do no reflection and,
// with reused buffers, almost no allocation. The cold ones (the manifest, and
// DecodeTimers) go through github.com/vmihailenco/msgpack/v5's streaming API
// instead, with the same bounds; msgpackv5.go says which and why. Decoded
// byte slices are views into the decoded buffer either way.
//
// abi imports no other Eddy package.
package abi

import (
	"errors"
	"fmt"
	"strings"
)

// Version is the ABI version this host speaks.
const Version = 1

// HeaderOutput is the header by which an output record of eddy_process
// names the output of its step it goes to (ABI.md, "Named outputs"), when
// the pipeline gives the step outputs; the host takes it off the record.
// Old modules never set it, and a step without outputs leaves it alone.
const HeaderOutput = "eddy.output"

// HeaderRetract marks a record that takes back an earlier one (ABI.md,
// "Retractions"): a window result of an aggregate with emit: update that a
// newer result replaces, and what the steps after it make of it, up to the
// aggregate that folds those results. A function sees it on its input; the
// host puts it on every output of such an input. Its value is "true".
const HeaderRetract = "eddy.retract"

// IsRetraction reports whether headers mark a retraction (HeaderRetract).
func IsRetraction(headers []Header) bool {
	for i := range headers {
		if headers[i].Key == HeaderRetract {
			return true
		}
	}
	return false
}

// Export names (ABI.md, section 2).
const (
	ExportMemory     = "memory"
	ExportMarker     = "eddy_abi_v1"
	MarkerPrefix     = "eddy_abi_v"
	ExportAlloc      = "eddy_alloc"
	ExportManifest   = "eddy_manifest"
	ExportProcess    = "eddy_process"
	ExportAggInit    = "eddy_agg_init"
	ExportAggAdd     = "eddy_agg_add"
	ExportAggMerge   = "eddy_agg_merge"
	ExportAggResult  = "eddy_agg_result"
	ExportJoin       = "eddy_join"
	ExportKey        = "eddy_key"
	ExportTimestamp  = "eddy_timestamp"
	ExportTimer      = "eddy_timer"
	ExportInitialize = "_initialize"
)

// Host module and function names (ABI.md, section 3).
const (
	HostModule      = "eddy"
	HostLog         = "log"
	HostError       = "error"
	HostStateGet    = "state_get"
	HostStatePut    = "state_put"
	HostStateDelete = "state_delete"
	HostCounterAdd  = "counter_add"
	HostTimerSet    = "timer_set"
	HostTimerDelete = "timer_delete"
	HostTimeNow     = "time_now"
	HostConfigGet   = "config_get"
	WASIModule      = "wasi_snapshot_preview1"
)

// Return values of the state host functions.
const (
	StateAbsent      = -1
	StateUnavailable = -2
	StateFailed      = -3
)

// Limits of a step's configuration (ABI.md "Configuration"): its entries,
// the bytes of a name, and of a value.
const (
	MaxConfigEntries = 256
	MaxConfigName    = 256
	MaxConfigValue   = 64 << 10
)

// Limits of keyed state (ABI.md section 3). A state_put whose key or value is
// longer fails the call; a longer key is never stored, so state_get answers
// it absent and state_delete does nothing. They keep a changelog record (key,
// value and overhead) under a default broker's 1 MB message limit, and keys
// well under Badger's 65,000 bytes.
const (
	MaxStateKey   = 16 << 10  // 16 KiB
	MaxStateValue = 960 << 10 // 960 KiB
	// MaxCallStateBytes bounds what one call writes: the keys and values
	// of its state_put calls and the keys of its state_delete calls, each
	// counted every time it is written. The host holds them until the call
	// returns; a call that writes more fails as a whole, like a put over
	// the limits above.
	MaxCallStateBytes = 64 << 20 // 64 MiB
)

// Kind is a function kind a module can implement.
type Kind string

// The kinds of ABI v1.
const (
	KindProcess   Kind = "process"
	KindAggregate Kind = "aggregate"
	KindJoin      Kind = "join"
	KindKey       Kind = "key"
	KindTimestamp Kind = "timestamp"
	// KindTimer answers the timers a process function set (ABI.md
	// "Timers"): an addition to v1 that older modules need not know.
	KindTimer Kind = "timer"
)

// Kinds lists every kind of ABI v1 in a stable order.
var Kinds = []Kind{KindProcess, KindAggregate, KindJoin, KindKey, KindTimestamp, KindTimer}

// knownKinds lists Kinds for errors.
var knownKinds = func() string {
	var b strings.Builder
	for i, k := range Kinds {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(string(k))
	}
	return b.String()
}()

// Exports returns the exports a module must provide for kind k, or nil for an
// unknown kind.
func (k Kind) Exports() []string {
	switch k {
	case KindProcess:
		return []string{ExportProcess}
	case KindAggregate:
		return []string{ExportAggInit, ExportAggAdd, ExportAggMerge, ExportAggResult}
	case KindJoin:
		return []string{ExportJoin}
	case KindKey:
		return []string{ExportKey}
	case KindTimestamp:
		return []string{ExportTimestamp}
	case KindTimer:
		return []string{ExportTimer}
	}
	return nil
}

// Code is an error code of ABI.md section 7.
type Code int32

// The codes of ABI v1.
const (
	CodeOK          Code = 0
	CodeRejected    Code = 1
	CodeBadInput    Code = 2
	CodePanic       Code = 3
	CodeUnsupported Code = 4
	CodeBadEnvelope Code = 5
	CodeState       Code = 6
)

// String returns the code's name, or "user_N" for a function-defined code.
func (c Code) String() string {
	switch c {
	case CodeOK:
		return "ok"
	case CodeRejected:
		return "rejected"
	case CodeBadInput:
		return "bad_input"
	case CodePanic:
		return "panic"
	case CodeUnsupported:
		return "unsupported"
	case CodeBadEnvelope:
		return "bad_envelope"
	case CodeState:
		return "state"
	}
	if c >= 64 && c <= 255 {
		return fmt.Sprintf("user_%d", int32(c))
	}
	return fmt.Sprintf("code_%d", int32(c))
}

// Record is a Kafka-style record as it crosses the ABI.
//
// A nil Key or Value is a null, distinct from an empty slice. Timestamp is
// milliseconds since the Unix epoch, UTC.
type Record struct {
	Key       []byte
	Value     []byte
	Timestamp int64
	Headers   []Header
}

// Header is a record header.
type Header struct {
	Key   string
	Value []byte
}

// ItemError is a failed item of a batch as reported by the guest.
type ItemError struct {
	Index  int // index of the input item (for aggregate add: within its group)
	Code   Code
	Reason string
}

// ErrMalformed is wrapped by every error about guest output that does not
// decode as the envelope its call requires.
var ErrMalformed = errors.New("malformed output")

func malformed(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrMalformed, fmt.Sprintf(format, args...))
}

func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }

func wrap(what string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", what, err)
}
