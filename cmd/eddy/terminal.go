package main

import (
	"fmt"
	"io"
	"os"
)

// isTerminal reports whether w is a terminal (a character device), where
// output may be redrawn in place. A file, a pipe or a test's buffer is not:
// there escape sequences and carriage returns would be kept as they are.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// progressLine draws a progress message that each call redraws in place,
// on a terminal only: elsewhere it writes nothing, so that a log of the
// command's output holds its final lines alone.
type progressLine struct {
	w     io.Writer
	on    bool // w is a terminal
	drawn bool // a message is on the line now
}

func newProgressLine(w io.Writer) *progressLine {
	return &progressLine{w: w, on: isTerminal(w)}
}

// show replaces the message on the line.
func (p *progressLine) show(format string, args ...any) {
	if !p.on {
		return
	}
	fmt.Fprintf(p.w, "\r\x1b[K"+format, args...) // start of line, erase it
	p.drawn = true
}

// clear erases the message, leaving the cursor at the start of the empty
// line, so that what is written next starts a clean line.
func (p *progressLine) clear() {
	if p.drawn {
		fmt.Fprint(p.w, "\r\x1b[K")
		p.drawn = false
	}
}
