package runtime_test

import (
	"context"
	"log/slog"
	"sync"
	"testing"

	"github.com/eddy-streams/eddy/runtime"
)

// captured is a slog handler that keeps records, for checking guest logs.
type captured struct {
	mu      sync.Mutex
	records []slog.Record
}

func (c *captured) Enabled(context.Context, slog.Level) bool { return true }
func (c *captured) Handle(_ context.Context, r slog.Record) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.records = append(c.records, r)
	return nil
}
func (c *captured) WithAttrs([]slog.Attr) slog.Handler { return c }
func (c *captured) WithGroup(string) slog.Handler      { return c }

func (c *captured) find(msg string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, r := range c.records {
		if r.Message != msg {
			continue
		}
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == "text" || a.Key == "lines" {
				out = append(out, a.Value.String())
			}
			return true
		})
	}
	return out
}

// sandboxRun runs the sandbox fixture once in a fresh function and returns
// what the guest saw of time and randomness, and the captured log.
func sandboxRun(t *testing.T, opts ...runtime.Option) (string, *captured) {
	t.Helper()
	logs := &captured{}
	opts = append(opts, runtime.WithLogger(slog.New(logs)))
	f := load(t, newEngine(t), "wat/sandbox.wasm", opts...)
	var out runtime.Output
	if err := f.Process(context.Background(), nil, &out); err != nil || len(out.Failed) != 0 {
		t.Fatalf("%v %v", err, out.Failed)
	}
	seen := logs.find("guest log")
	if len(seen) != 1 || len(seen[0]) != 24 {
		t.Fatalf("guest log lines %q", seen)
	}
	return seen[0], logs
}

func TestClockAndRandomAreDeterministicByDefault(t *testing.T) {
	a, _ := sandboxRun(t)
	b, _ := sandboxRun(t)
	if a != b {
		t.Fatalf("two fresh instances saw different time or randomness:\n%x\n%x", a, b)
	}
	c, _ := sandboxRun(t, runtime.WithSeed(42))
	if a[8:] == c[8:] {
		t.Fatal("a different seed gave the same random bytes")
	}
	d, _ := sandboxRun(t, runtime.WithClock(runtime.ClockSystem))
	if a[:8] == d[:8] {
		t.Fatal("the system clock gave the deterministic time")
	}
}

func TestGuestStdoutIsLoggedWithRateLimit(t *testing.T) {
	_, logs := sandboxRun(t, runtime.WithLogRate(50))
	lines := logs.find("guest stdout")
	if len(lines) < 40 || len(lines) > 60 {
		t.Fatalf("%d stdout lines logged for a rate of 50/s (500 written)", len(lines))
	}
	for _, l := range lines {
		if l != "stdout line" {
			t.Fatalf("logged line %q", l)
		}
	}
}
