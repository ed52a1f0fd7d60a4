package await

import (
	"testing"
	"time"
)

func TestUntilPollsUntilTheCondition(t *testing.T) {
	calls := 0
	Until(t, time.Millisecond, func() bool { calls++; return calls == 5 }, func() string { return "never" })
	if calls != 5 {
		t.Fatalf("%d calls, want 5", calls)
	}
}

// fakeT records a failure instead of ending the test.
type fakeT struct {
	testing.TB
	deadline time.Time
	failed   string
}

func (f *fakeT) Helper()                           {}
func (f *fakeT) Deadline() (time.Time, bool)       { return f.deadline, true }
func (f *fakeT) Fatalf(format string, args ...any) { f.failed = format; panic(f) }

func TestUntilGivesUpAtTheDeadline(t *testing.T) {
	f := &fakeT{deadline: time.Now().Add(margin + 20*time.Millisecond)}
	defer func() {
		if r := recover(); r != f || f.failed == "" {
			t.Fatalf("recovered %v, failure %q: want a failure at the deadline", r, f.failed)
		}
	}()
	Until(f, time.Millisecond, func() bool { return false }, func() string { return "state" })
}
