package runtime

import (
	"bytes"
	"context"
	"log/slog"
	"sync"
	"time"
)

// limiter is a token bucket of log lines and bytes per second, shared by
// every instance of a function. Lines over either rate are counted and
// reported once tokens are available again, so a chatty guest cannot flood
// the node's log, with many lines or with long ones.
type limiter struct {
	rate, byteRate float64
	mu             struct {
		sync.Mutex
		tokens, bytes float64
		last          time.Time
		suppressed    int64
	}
}

// logBytesPerLine sets the byte rate from the line rate: n lines or n KiB a
// second, whichever comes first (a guest line is at most maxLine, 4 KiB).
const logBytesPerLine = 1 << 10

func newLimiter(perSecond int) *limiter {
	l := &limiter{rate: float64(perSecond), byteRate: float64(perSecond) * logBytesPerLine}
	l.mu.tokens, l.mu.bytes = l.rate, l.byteRate
	return l
}

// allow reports whether a line of size bytes may be logged now, and how many
// lines were suppressed since the last allowed one.
func (l *limiter) allow(now time.Time, size int) (ok bool, suppressed int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.mu.last.IsZero() {
		d := now.Sub(l.mu.last).Seconds()
		l.mu.tokens = min(l.rate, l.mu.tokens+d*l.rate)
		l.mu.bytes = min(l.byteRate, l.mu.bytes+d*l.byteRate)
	}
	l.mu.last = now
	// A line longer than a second's bytes (a native panic's stack under a
	// low rate) costs a second's bytes, so that it can pass at all.
	need := min(float64(size), l.byteRate)
	if l.mu.tokens < 1 || l.mu.bytes < need {
		l.mu.suppressed++
		return false, 0
	}
	l.mu.tokens--
	l.mu.bytes -= need
	suppressed, l.mu.suppressed = l.mu.suppressed, 0
	return true, suppressed
}

// guestLog writes one guest line to the function's logger, rate-limited.
func (f *Function) guestLog(ctx context.Context, level slog.Level, msg, text string) {
	lg := f.cfg.logger
	if !lg.Enabled(ctx, level) {
		return
	}
	ok, suppressed := f.limiter.allow(time.Now(), len(text))
	if !ok {
		return
	}
	if suppressed > 0 {
		lg.LogAttrs(ctx, slog.LevelWarn, "guest log lines suppressed by rate limit",
			slog.String("function", f.name), slog.Int64("lines", suppressed))
	}
	lg.LogAttrs(ctx, level, msg, slog.String("function", f.name), slog.String("text", text))
}

// lineWriter turns a guest's stdout or stderr into log lines. One exists per
// instance and stream; an instance is used by one goroutine at a time.
type lineWriter struct {
	stream string
	sink   func(line string)
	buf    []byte
}

func (f *Function) newLineWriter(stream string, level slog.Level) *lineWriter {
	return &lineWriter{stream: stream, sink: func(line string) {
		f.guestLog(context.Background(), level, "guest "+stream, line)
	}}
}

const maxLine = 4 << 10

// Write implements io.Writer.
func (w *lineWriter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			w.buf = append(w.buf, p...)
			if len(w.buf) >= maxLine {
				w.flush()
			}
			break
		}
		w.buf = append(w.buf, p[:i]...)
		w.flush()
		p = p[i+1:]
	}
	return n, nil
}

func (w *lineWriter) flush() {
	if len(w.buf) == 0 {
		return
	}
	line := w.buf
	if len(line) > maxLine {
		line = line[:maxLine]
	}
	w.sink(string(line))
	w.buf = w.buf[:0]
}
