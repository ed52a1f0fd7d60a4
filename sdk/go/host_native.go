//go:build !wasip1

package eddy

import "github.com/eddy-streams/eddy/sdk/go/internal/native"

// Native stand-ins for the host functions, so that guest logic and its tests
// run with plain go test: logging goes to standard error, keyed state and
// counters live in memory (package eddytest reads and resets them).

func hostLog(level int32, msg string)         { native.Log(level, msg) }
func reportError(code int32, msg string)      { native.Error(code, msg) }
func hostStateGet(key, buf []byte) int32      { return native.StateGet(key, buf) }
func hostStatePut(key, value []byte) int32    { return native.StatePut(key, value) }
func hostStateDelete(key []byte) int32        { return native.StateDelete(key) }
func hostCounterAdd(name string, delta int64) { native.CounterAdd(name, delta) }
func hostTimerSet(key []byte, domain int32, at int64) int32 {
	return native.TimerSet(key, domain, at)
}
func hostTimerDelete(key []byte, domain int32, at int64) int32 {
	return native.TimerDelete(key, domain, at)
}
func hostTimeNow(domain int32) int64              { return native.TimeNow(domain) }
func hostConfigGet(name string, buf []byte) int32 { return native.ConfigGet(name, buf) }
