package main

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestProgressLine: progress is drawn in place on a terminal and erased
// before the final line, which then stands alone; elsewhere nothing but
// the final line is written.
func TestProgressLine(t *testing.T) {
	var out strings.Builder
	p := &progressLine{w: &out, on: true}
	p.show("produced %d records", 10000)
	p.show("produced %d records", 20000)
	p.clear()
	p.clear() // once is enough
	fmt.Fprintln(&out, "produced 20001 records to t in 1s")
	if want := "\r\x1b[Kproduced 10000 records\r\x1b[Kproduced 20000 records\r\x1b[Kproduced 20001 records to t in 1s\n"; out.String() != want {
		t.Fatalf("on a terminal: %q, want %q", out.String(), want)
	}

	out.Reset()
	p = newProgressLine(&out)
	p.show("produced %d records", 10000)
	p.clear()
	fmt.Fprintln(&out, "produced 10000 records to t in 1s")
	if out.String() != "produced 10000 records to t in 1s\n" {
		t.Fatalf("not on a terminal: %q", out.String())
	}
	f, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if isTerminal(f) {
		t.Fatal("a file is taken for a terminal")
	}
	// A pseudo-terminal's master side is a terminal, where there is one.
	if pty, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0); err == nil {
		defer pty.Close()
		if !isTerminal(pty) {
			t.Fatal("a pseudo-terminal is not taken for a terminal")
		}
	}
}
