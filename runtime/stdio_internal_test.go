package runtime

import (
	"testing"
	"time"
)

func TestLimiterCountsSuppressedLines(t *testing.T) {
	l := newLimiter(2)
	t0 := time.Unix(1000, 0)
	for i, want := range []bool{true, true, false, false, false} {
		if ok, _ := l.allow(t0); ok != want {
			t.Fatalf("line %d at t0: allowed %v", i, ok)
		}
	}
	ok, suppressed := l.allow(t0.Add(time.Second))
	if !ok || suppressed != 3 {
		t.Fatalf("after a second: allowed %v, suppressed %d, want true, 3", ok, suppressed)
	}
	if _, suppressed := l.allow(t0.Add(time.Second)); suppressed != 0 {
		t.Fatalf("suppressed count reported twice: %d", suppressed)
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
