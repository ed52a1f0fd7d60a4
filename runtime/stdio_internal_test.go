package runtime

import (
	"testing"
	"time"
)

func TestLimiterCountsSuppressedLines(t *testing.T) {
	l := newLimiter(2)
	t0 := time.Unix(1000, 0)
	for i, want := range []bool{true, true, false, false, false} {
		if ok, _ := l.allow(t0, 1); ok != want {
			t.Fatalf("line %d at t0: allowed %v", i, ok)
		}
	}
	ok, suppressed := l.allow(t0.Add(time.Second), 1)
	if !ok || suppressed != 3 {
		t.Fatalf("after a second: allowed %v, suppressed %d, want true, 3", ok, suppressed)
	}
	if _, suppressed := l.allow(t0.Add(time.Second), 1); suppressed != 0 {
		t.Fatalf("suppressed count reported twice: %d", suppressed)
	}
}

// TestLimiterBoundsBytes: long lines are limited by their bytes (n KiB a
// second for n lines a second), not only by their count.
func TestLimiterBoundsBytes(t *testing.T) {
	l := newLimiter(10) // 10 lines or 10 KiB a second
	t0 := time.Unix(1000, 0)
	allowed := 0
	for range 10 {
		if ok, _ := l.allow(t0, maxLine); ok {
			allowed++
		}
	}
	if allowed != 2 {
		t.Fatalf("%d lines of 4 KiB allowed in a second, want 2 (10 KiB)", allowed)
	}
	ok, suppressed := l.allow(t0.Add(time.Second), maxLine)
	if !ok || suppressed != 8 {
		t.Fatalf("after a second: allowed %v, suppressed %d, want true, 8", ok, suppressed)
	}
}

func TestLineWriterSplitsAndBoundsLines(t *testing.T) {
	var got []string
	w := &lineWriter{stream: "stdout", sink: func(s string) { got = append(got, s) }}
	w.Write([]byte("a\nbc"))
	w.Write([]byte("d\n\n"))
	long := make([]byte, maxLine+10)
	for i := range long {
		long[i] = 'x'
	}
	w.Write(long)
	if len(got) != 3 || got[0] != "a" || got[1] != "bcd" || len(got[2]) != maxLine {
		t.Fatalf("lines %q", got)
	}
}
