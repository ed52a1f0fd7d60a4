package conformance

import (
	"context"
	"log/slog"
	"strings"
	"testing"
)

// TestLogSinkKeepsBoundedLines: a case keeps at most maxKeptLines lines and
// maxKeptBytes of their text; the rest are counted.
func TestLogSinkKeepsBoundedLines(t *testing.T) {
	for _, tc := range []struct {
		name       string
		n, size    int
		kept, drop int
	}{
		{"many short lines", 2 * maxKeptLines, 1, maxKeptLines, maxKeptLines},
		{"long lines", 1000, 4 << 10, maxKeptBytes / (4 << 10), 1000 - maxKeptBytes/(4<<10)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := &logSink{}
			lg := slog.New(l)
			text := strings.Repeat("x", tc.size)
			for range tc.n {
				lg.LogAttrs(context.Background(), slog.LevelInfo, "guest log", slog.String("text", text))
			}
			if len(l.guestLines()) != tc.kept || l.dropped != tc.drop || l.bytes > maxKeptBytes {
				t.Fatalf("kept %d lines (%d bytes), dropped %d; want %d, %d", len(l.guestLines()), l.bytes, l.dropped, tc.kept, tc.drop)
			}
			l.reset("next")
			if len(l.guestLines()) != 0 || l.dropped != 0 {
				t.Fatal("reset kept lines")
			}
		})
	}
}
