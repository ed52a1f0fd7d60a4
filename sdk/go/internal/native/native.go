// Package native is the in-memory stand-in for the Eddy host that the SDK
// uses when it is not compiled to wasip1: a log writer, keyed state, counters
// and the last reported call error. Package eddytest reads and resets it.
//
// Everything here is guarded by one mutex, but the SDK itself is
// single-threaded (as a Wasm instance is): tests that drive a guest must not
// run in parallel.
package native

import (
	"fmt"
	"io"
	"os"
	"sync"
)

// StateMode is how the stand-in state store answers.
type StateMode int

// State modes: a working store, no store (-2), a failing store (-3).
const (
	StateOK StateMode = iota
	StateNone
	StateFailing
)

var mu struct {
	sync.Mutex
	state    map[string][]byte
	mode     StateMode
	counters map[string]int64
	log      io.Writer
	errCode  int32
	errMsg   string
}

// Call runs an export of the SDK on an input envelope: it returns the output
// envelope and 0, or nil and the code of a call-level failure (whose reason
// is then LastError). The SDK sets it at init.
var Call func(export string, in []byte) (out []byte, code int32)

var levels = [...]string{"DEBUG", "INFO", "WARN", "ERROR"}

// Log writes a log line to the log writer (standard error by default).
func Log(level int32, msg string) {
	mu.Lock()
	defer mu.Unlock()
	w := mu.log
	if w == nil {
		w = os.Stderr
	}
	name := "LEVEL?"
	if level >= 0 && int(level) < len(levels) {
		name = levels[level]
	}
	fmt.Fprintf(w, "eddy %s %s\n", name, msg)
}

// SetLog sets the log writer and returns the previous one; nil means
// standard error.
func SetLog(w io.Writer) io.Writer {
	mu.Lock()
	defer mu.Unlock()
	old := mu.log
	mu.log = w
	return old
}

// Error remembers the reason for a failing call (the error host function).
func Error(code int32, msg string) {
	mu.Lock()
	defer mu.Unlock()
	mu.errCode, mu.errMsg = code, msg
}

// LastError returns the last reason reported with Error.
func LastError() (int32, string) {
	mu.Lock()
	defer mu.Unlock()
	return mu.errCode, mu.errMsg
}

// StateGet has the semantics of the state_get host function: -1 absent, else
// the value's length n, copied into buf only if n <= len(buf); -2 or -3 per
// the state mode.
func StateGet(key, buf []byte) int32 {
	mu.Lock()
	defer mu.Unlock()
	if rc := modeRCLocked(); rc != 0 {
		return rc
	}
	v, ok := mu.state[string(key)]
	if !ok {
		return -1
	}
	if len(v) <= len(buf) {
		copy(buf, v)
	}
	return int32(len(v))
}

// StatePut has the semantics of the state_put host function.
func StatePut(key, value []byte) int32 {
	mu.Lock()
	defer mu.Unlock()
	if rc := modeRCLocked(); rc != 0 {
		return rc
	}
	if mu.state == nil {
		mu.state = make(map[string][]byte)
	}
	mu.state[string(key)] = append([]byte{}, value...)
	return 0
}

// StateDelete has the semantics of the state_delete host function.
func StateDelete(key []byte) int32 {
	mu.Lock()
	defer mu.Unlock()
	if rc := modeRCLocked(); rc != 0 {
		return rc
	}
	delete(mu.state, string(key))
	return 0
}

func modeRCLocked() int32 {
	switch mu.mode {
	case StateNone:
		return -2
	case StateFailing:
		return -3
	}
	return 0
}

// SetStateMode sets how the state store answers.
func SetStateMode(m StateMode) {
	mu.Lock()
	defer mu.Unlock()
	mu.mode = m
}

// State returns a copy of the value stored under key.
func State(key []byte) ([]byte, bool) {
	mu.Lock()
	defer mu.Unlock()
	v, ok := mu.state[string(key)]
	return append([]byte{}, v...), ok
}

// ResetState empties the store and makes it available.
func ResetState() {
	mu.Lock()
	defer mu.Unlock()
	mu.state, mu.mode = nil, StateOK
}

// CounterAdd adds delta to the counter called name.
func CounterAdd(name string, delta int64) {
	mu.Lock()
	defer mu.Unlock()
	if mu.counters == nil {
		mu.counters = make(map[string]int64)
	}
	mu.counters[name] += delta
}

// Counters returns a copy of all counters.
func Counters() map[string]int64 {
	mu.Lock()
	defer mu.Unlock()
	m := make(map[string]int64, len(mu.counters))
	for k, v := range mu.counters {
		m[k] = v
	}
	return m
}

// ResetCounters sets all counters to zero.
func ResetCounters() {
	mu.Lock()
	defer mu.Unlock()
	mu.counters = nil
}

// TimerKey identifies a stand-in timer.
type TimerKey struct {
	Key    string
	Domain int32
	Time   int64
}

var timers struct {
	set   map[TimerKey]bool
	now   [2]int64
	known [2]bool
}

// TimerSet has the semantics of the timer_set host function: -2 when the
// state mode is StateNone, -3 when failing or for an unknown domain.
func TimerSet(key []byte, domain int32, at int64) int32 {
	mu.Lock()
	defer mu.Unlock()
	if rc := modeRCLocked(); rc != 0 {
		return rc
	}
	if domain != 0 && domain != 1 {
		return -3
	}
	if timers.set == nil {
		timers.set = map[TimerKey]bool{}
	}
	timers.set[TimerKey{string(key), domain, at}] = true
	return 0
}

// TimerDelete has the semantics of the timer_delete host function.
func TimerDelete(key []byte, domain int32, at int64) int32 {
	mu.Lock()
	defer mu.Unlock()
	if rc := modeRCLocked(); rc != 0 {
		return rc
	}
	delete(timers.set, TimerKey{string(key), domain, at})
	return 0
}

// TimeNow has the semantics of the time_now host function: the time set
// with SetTimeNow (math.MinInt64 until then).
func TimeNow(domain int32) int64 {
	mu.Lock()
	defer mu.Unlock()
	if domain != 0 && domain != 1 || !timers.known[domain] {
		return -1 << 63
	}
	return timers.now[domain]
}

// SetTimeNow sets what TimeNow answers for domain.
func SetTimeNow(domain int32, now int64) {
	mu.Lock()
	defer mu.Unlock()
	timers.now[domain&1], timers.known[domain&1] = now, true
}

// Timers returns the timers set, in no order.
func Timers() []TimerKey {
	mu.Lock()
	defer mu.Unlock()
	ks := make([]TimerKey, 0, len(timers.set))
	for k := range timers.set {
		ks = append(ks, k)
	}
	return ks
}

// ResetTimers forgets every timer and the times set.
func ResetTimers() {
	mu.Lock()
	defer mu.Unlock()
	timers.set, timers.now, timers.known = nil, [2]int64{}, [2]bool{}
}

var config map[string]string

// ConfigGet has the semantics of the config_get host function over the
// entries SetConfig set.
func ConfigGet(name string, buf []byte) int32 {
	mu.Lock()
	defer mu.Unlock()
	v, ok := config[name]
	if !ok {
		return -1
	}
	if len(v) <= len(buf) {
		copy(buf, v)
	}
	return int32(len(v))
}

// SetConfig sets the step's config entries (nil: none).
func SetConfig(c map[string]string) {
	mu.Lock()
	defer mu.Unlock()
	config = c
}
