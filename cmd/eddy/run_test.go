package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/eddy-streams/eddy/internal/await"
	"github.com/eddy-streams/eddy/internal/testkafka"
)

// TestRunLogsJSONAndServesMetrics runs `eddy run --log-format json` with an
// admin address: /metrics there counts the records it processed, and every
// line it logged is a JSON object, the node's with its pipeline and node id;
// none of a run stopped cleanly (its context cancelled) has an error.
func TestRunLogsJSONAndServesMetrics(t *testing.T) {
	b := testkafka.StartPartitions(t, 2, "words", "words-up", "words-dlq")
	upper, _ := filepath.Abs(td("go/upper.wasm"))
	pipe := filepath.Join(t.TempDir(), "p.yaml")
	os.WriteFile(pipe, []byte(fmt.Sprintf(`name: words
source: {topics: [words]}
steps:
  - {name: up, kind: map, function: %s}
sink: {topic: words-up}
dead_letter: {topic: words-dlq}
delivery: exactly_once
commit_interval: 50ms
`, upper)), 0o644)
	if _, stderr, code := run(t, "", "produce", "--brokers", b.Addr(), "--topic", "words", "--input", td("samples/words.jsonl")); code != 0 {
		t.Fatalf("produce: %s", stderr)
	}
	want := strings.Count(mustRead(t, td("samples/words.jsonl")), "\n")

	addr := freeAddr(t)
	stop, logs := startRun(t, "run", pipe, "--brokers", b.Addr(), "--admin-addr", addr,
		"--node-id", "w1", "--data-dir", t.TempDir(), "--log-format", "json")
	defer stop()

	metric := fmt.Sprintf(`eddy_records_in_total{node="w1",pipeline="words"} %d`, want)
	var body string
	await.Until(t, 100*time.Millisecond, func() bool {
		resp, err := http.Get("http://" + addr + "/metrics")
		if err != nil {
			return false // not listening yet
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET /metrics: %s: %s", resp.Status, raw)
		}
		body = string(raw)
		return strings.Contains(body, metric)
	}, func() string { return fmt.Sprintf("/metrics never showed %q:\n%s", metric, body) })
	stop()

	var started, stopped bool
	for i, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %d is not JSON: %v\n%s", i+1, err, line)
		}
		if rec["level"] == nil || rec["msg"] == nil || rec["time"] == nil {
			t.Errorf("log line %d lacks time, level or msg: %s", i+1, line)
		}
		if rec["msg"] == "node started" {
			started = rec["pipeline"] == "words" && rec["node"] == "w1"
		}
		stopped = stopped || rec["msg"] == "node stopped"
		// A clean stop (the context ended, as Ctrl-C does) logs no error.
		if rec["error"] != nil || rec["level"] == "ERROR" {
			t.Errorf("log line %d of a clean run and stop has an error: %s", i+1, line)
		}
	}
	if !started || !stopped {
		t.Errorf("no \"node started\" line with pipeline and node, or no \"node stopped\" line:\n%s", logs.String())
	}
}

// TestLogFlags checks what --log-format and --log-level make of the logger.
func TestLogFlags(t *testing.T) {
	tests := []struct {
		name, format, level string
		want                []string // in the output of an info and a debug line
		not                 []string
		err                 string
	}{
		{name: "text", format: "text", level: "info", want: []string{"level=INFO msg=hello k=v"}, not: []string{"DEBUG"}},
		{name: "json debug", format: "json", level: "debug", want: []string{`"level":"INFO","msg":"hello","k":"v"}`, `"level":"DEBUG"`}},
		{name: "warn silences info", format: "JSON", level: "warn", not: []string{"hello"}},
		{name: "bad format", format: "yaml", level: "info", err: `--log-format: want text or json, got "yaml"`},
		{name: "bad level", format: "text", level: "loud", err: "--log-level"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			c := &cli{stderr: &out, logFormat: tt.format, logLevel: tt.level}
			err := c.setup()
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("setup: %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			c.logger.Info("hello", "k", "v")
			c.logger.Debug("details")
			for _, w := range tt.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("output lacks %q:\n%s", w, out.String())
				}
			}
			for _, n := range tt.not {
				if strings.Contains(out.String(), n) {
					t.Errorf("output has %q:\n%s", n, out.String())
				}
			}
		})
	}
}
