package host_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/host"
)

// TestDeadLetterOfHugeReason: a guest that fails records with a 60 MB reason
// (testdata/longreason.wat), through error() and a failed call or through a
// Result, and an input record close to the producer's limit: every failed
// record reaches the dead-letter topic with a bounded eddy.error, the big
// one without its value (and a header saying so), and the node keeps
// processing. Before the bounds, the dead letter's 60 MB header made the
// producer fail with MESSAGE_TOO_LARGE and the node stop.
func TestDeadLetterOfHugeReason(t *testing.T) {
	b := startBroker(t, "in", "out", "dlq")
	wasm, _ := filepath.Abs("testdata/longreason.wasm")
	path := filepath.Join(t.TempDir(), "p.yaml")
	os.WriteFile(path, []byte(fmt.Sprintf(`name: longreason
source:
  topics: [in]
steps:
  - name: fn
    kind: map
    function: %s
sink:
  topic: out
dead_letter:
  topic: dlq
delivery: at_least_once
commit_interval: 50ms
batch_size: 1
`, wasm)), 0o644)
	p, err := host.LoadPipeline(path)
	if err != nil {
		t.Fatal(err)
	}
	big := append([]byte("x"), bytes.Repeat([]byte("v"), 998_000)...)
	values := [][]byte{[]byte("a"), []byte("x"), []byte("r"), big, []byte("b")}
	i := 0
	if _, err := host.Produce(context.Background(), []string{b.Addr()}, "in", func() (abi.Record, error) {
		if i >= len(values) {
			return abi.Record{}, io.EOF
		}
		i++
		return abi.Record{Value: values[i-1], Headers: []abi.Header{{Key: "mine", Value: []byte("kept")}}}, nil
	}, nil); err != nil {
		t.Fatal(err)
	}
	n := startNode(t, b, p, "a")
	dlq := consumeAll(t, b, "dlq", 3, time.Second)
	if len(dlq) != 3 {
		t.Fatalf("%d dead letters, want 3 (node: %v)", len(dlq), nodeErr(n))
	}
	for _, r := range dlq {
		msg := header(r, "eddy.error")
		if len(msg) > 8<<10 || !strings.Contains(msg, "truncated, 60000000 bytes") {
			t.Fatalf("eddy.error of %d bytes: %.200q", len(msg), msg)
		}
		switch {
		case len(r.Value) == 1:
			if header(r, "mine") != "kept" || header(r, "eddy.dropped.value") != "" {
				t.Fatalf("dead letter %q: headers %v", r.Value, r.Headers)
			}
		case r.Value == nil:
			if header(r, "eddy.dropped.value") != fmt.Sprint(len(big)) || header(r, "mine") != "kept" {
				t.Fatalf("big dead letter: headers %v", r.Headers)
			}
		default:
			t.Fatalf("dead letter of %d bytes", len(r.Value))
		}
	}
	out := consumeAll(t, b, "out", 2, time.Second)
	if len(out) != 2 || string(out[0].Value) != "ok" {
		t.Fatalf("output %d records, want 2 (node: %v)", len(out), nodeErr(n))
	}
	if err := nodeErr(n); err != nil {
		t.Fatalf("node stopped: %v", err)
	}
}

// nodeErr returns the node's error if it has stopped, else nil.
func nodeErr(n *runningNode) error {
	select {
	case err := <-n.done:
		n.cancel = nil
		return fmt.Errorf("stopped: %v", err)
	default:
		return nil
	}
}
