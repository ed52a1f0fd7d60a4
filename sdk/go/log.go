package eddy

import "fmt"

// Level is the severity of a log line.
type Level int32

// Log levels, as numbered by the host's log function (ABI.md section 3).
const (
	Debug Level = 0
	Info  Level = 1
	Warn  Level = 2
	Error Level = 3
)

// String returns the level's name.
func (l Level) String() string {
	switch l {
	case Debug:
		return "debug"
	case Info:
		return "info"
	case Warn:
		return "warn"
	case Error:
		return "error"
	}
	return fmt.Sprintf("level(%d)", int32(l))
}

// Log writes msg to the host's structured log at level (host import
// eddy.log). The host may rate-limit a function's log lines, so do not log
// per record at Info or above. A level outside Debug..Error is clamped.
// Natively (plain go test), lines go to standard error.
//
// Log does not allocate; format with Logf only where it is worth it.
func Log(level Level, msg string) {
	hostLog(int32(min(max(level, Debug), Error)), msg)
}

// Logf formats its arguments as fmt.Sprintf does and logs the result.
func Logf(level Level, format string, args ...any) {
	Log(level, fmt.Sprintf(format, args...))
}

// Count adds delta to the counter called name, a metric the host exports
// (host import eddy.counter_add). It is cheap enough to call per record.
// Natively, counters are kept in memory; package eddytest reads them.
func Count(name string, delta int64) {
	hostCounterAdd(name, delta)
}
