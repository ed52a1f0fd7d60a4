package runtime

import (
	"bytes"
	"context"
	"log/slog"
	"sync"
	"time"
)

// limiter is a token bucket of log lines per second, shared by every instance
// of a function. Lines over the rate are counted and reported once tokens are
// available again, so a chatty guest cannot flood the node's log.
type limiter struct {
	rate float64
	mu   struct {
		sync.Mutex
		tokens     float64
		last       time.Time
		suppressed int64
	}
}

func newLimiter(perSecond int) *limiter {
	l := &limiter{rate: float64(perSecond)}
	l.mu.tokens = l.rate
	return l
}

// allow reports whether a line may be logged now, and how many lines were
// suppressed since the last allowed one.
func (l *limiter) allow(now time.Time) (ok bool, suppressed int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.mu.last.IsZero() {
		l.mu.tokens = min(l.rate, l.mu.tokens+now.Sub(l.mu.last).Seconds()*l.rate)
	}
	l.mu.last = now
	if l.mu.tokens < 1 {
		l.mu.suppressed++
		return false, 0
	}
	l.mu.tokens--
	suppressed, l.mu.suppressed = l.mu.suppressed, 0
	return true, suppressed
}

// guestLog writes one guest line to the function's logger, rate-limited.
func (f *Function) guestLog(ctx context.Context, level slog.Level, msg, text string) {
	lg := f.cfg.logger
	if !lg.Enabled(ctx, level) {
		return
	}
	ok, suppressed := f.limiter.allow(time.Now())
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
