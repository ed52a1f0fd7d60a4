// Package await lets tests wait for a condition of a running system without
// a time limit of their own: they poll until the condition holds, and give
// up only shortly before the test binary's deadline (go test -timeout), so
// that a slow machine makes a test slower, never wrong.
package await

import (
	"testing"
	"time"
)

// margin is left before the test binary's deadline to report the failure.
const margin = 5 * time.Second

// Until calls cond every interval until it returns true. If the test's
// deadline comes near first, it fails the test with what explain returns
// (the state that did not satisfy cond).
func Until(t testing.TB, interval time.Duration, cond func() bool, explain func() string) {
	t.Helper()
	deadline, limited := deadlineOf(t)
	for !cond() {
		if limited && time.Until(deadline) < margin {
			t.Fatalf("gave up waiting at the test's deadline: %s", explain())
		}
		time.Sleep(interval)
	}
}

func deadlineOf(t testing.TB) (time.Time, bool) {
	if d, ok := t.(interface{ Deadline() (time.Time, bool) }); ok {
		return d.Deadline()
	}
	return time.Time{}, false
}

// Receive waits for a value from ch, as Until waits for a condition, and
// returns it.
func Receive[T any](t testing.TB, ch <-chan T, explain func() string) T {
	t.Helper()
	var v T
	Until(t, 10*time.Millisecond, func() bool {
		select {
		case v = <-ch:
			return true
		default:
			return false
		}
	}, explain)
	return v
}
