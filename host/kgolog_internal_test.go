package host

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestKgoLogger: the Kafka client's warnings reach the node's log at any
// level, its info messages only at debug level (as debug lines), and its
// own debug messages never.
func TestKgoLogger(t *testing.T) {
	for _, c := range []struct {
		level slog.Level
		want  kgo.LogLevel
	}{{slog.LevelInfo, kgo.LogLevelWarn}, {slog.LevelDebug, kgo.LogLevelInfo}} {
		var buf bytes.Buffer
		l := kgoLogger{slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: c.level}))}
		if got := l.Level(); got != c.want {
			t.Errorf("at %v the client logs from %v, want %v", c.level, got, c.want)
		}
		l.Log(kgo.LogLevelWarn, "unable to open connection to broker", "addr", "127.0.0.1:1")
		l.Log(kgo.LogLevelInfo, "joining group", "group", "g")
		out := buf.String()
		if !strings.Contains(out, `level=WARN msg="kafka client: unable to open connection to broker" addr=127.0.0.1:1`) {
			t.Errorf("at %v the warning is missing:\n%s", c.level, out)
		}
		if joined := strings.Contains(out, `level=DEBUG msg="kafka client: joining group" group=g`); joined != (c.level == slog.LevelDebug) {
			t.Errorf("at %v the info message logged %v:\n%s", c.level, joined, out)
		}
	}
}
