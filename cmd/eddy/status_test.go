package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/host"
	"github.com/eddy-streams/eddy/internal/await"
	"github.com/eddy-streams/eddy/internal/testkafka"
)

func TestStatusCommand(t *testing.T) {
	b, url := startAdmin(t)
	stdout, stderr, code := run(t, "", "status", "--local", "--admin", url)
	if want := "{\n  \"events\": 0,\n  \"node\": \"node-1\",\n  \"steps\": 2\n}\n"; code != 0 || stdout != want {
		t.Fatalf("exit %d, stdout:\n%s\nwant:\n%s\nstderr: %s", code, stdout, want, stderr)
	}
	stdout, stderr, code = run(t, "", "status", "--json", "--admin", url)
	if want := "{\n  \"nodes\": [\n    {\n      \"events\": 0,\n      \"node\": \"node-1\",\n      \"steps\": 2\n    }\n  ]\n}\n"; code != 0 || stdout != want {
		t.Fatalf("exit %d, stdout:\n%s\nwant:\n%s\nstderr: %s", code, stdout, want, stderr)
	}
	_, stderr, code = run(t, "", "status", "--admin", strings.TrimPrefix(url, "http://")+"/nope")
	if code != 1 || !strings.Contains(stderr, "eddy: status: not_found: no such route") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if b.Calls() != 2 {
		t.Fatalf("%d backend calls", b.Calls())
	}
}

// TestStatusOfAGroup runs two nodes of a windowed pipeline and reads the
// group's status through either: both nodes, their partitions between
// them, the totals equal to the input, no lag once processed, watermarks,
// step versions; rates while records flow; eddy top's screens.
func TestStatusOfAGroup(t *testing.T) {
	b := testkafka.StartPartitions(t, 4, "clicks", "counts", "clicks-dlq")
	count, _ := filepath.Abs(td("go/nx-count.wasm"))
	pipe := filepath.Join(t.TempDir(), "p.yaml")
	os.WriteFile(pipe, []byte(fmt.Sprintf(`name: clickcount
source: {topics: [clicks]}
steps:
  - {name: by-page, kind: key_by, field: page}
  - name: count
    kind: aggregate
    function: %s
    window: {type: tumbling, size: 1s}
sink: {topic: counts}
dead_letter: {topic: clicks-dlq}
delivery: exactly_once
commit_interval: 50ms
`, count)), 0o644)
	var urls []string
	for _, id := range []string{"a", "b"} {
		addr := freeAddr(t)
		urls = append(urls, "http://"+addr)
		stop, _ := startRun(t, "--log-level", "warn", "run", pipe, "--brokers", b.Addr(),
			"--admin-addr", addr, "--node-id", id, "--data-dir", t.TempDir())
		defer stop()
	}
	produce := func(from, to int) {
		i := from
		if _, err := host.Produce(context.Background(), []string{b.Addr()}, "clicks", func() (abi.Record, error) {
			if i == to {
				return abi.Record{}, io.EOF
			}
			i++
			return abi.Record{Key: []byte(fmt.Sprint(i)), Value: []byte(fmt.Sprintf(`{"page":"p%d"}`, i%13)), Timestamp: 1700000000000 + 10*int64(i)}, nil
		}, nil); err != nil {
			t.Error(err)
		}
	}
	produce(0, 2000)
	var cs host.ClusterStatus
	var last string
	await.Until(t, 200*time.Millisecond, func() bool {
		out, stderr, code := run(t, "", "status", "--json", "--admin", urls[1])
		last = out + stderr
		cs = host.ClusterStatus{}
		if code == 0 {
			if err := json.Unmarshal([]byte(out), &cs); err != nil {
				t.Fatal(err)
			}
		}
		// Positions, not counters: after a rebalance a node processes
		// again what an aborted transaction of the other had processed.
		var read, lag int64
		parts, watermarks := 0, 0
		for _, n := range cs.Nodes {
			lag += n.Lag
			parts += len(n.Partitions["clicks"])
			for _, task := range n.Tasks {
				if task.Stage == 0 {
					read += task.Inputs[0].Offset
				}
				if task.Watermark != nil {
					watermarks++
				}
			}
		}
		// The windows' stage runs behind the first (through the
		// repartition topic): its watermark shows once it has read.
		return len(cs.Nodes) == 2 && parts == 4 && read == 2000 && lag == 0 && watermarks > 0
	}, func() string { return "the group never settled:\n" + last })
	out, stderr, code := run(t, "", "status", "--interval", "0", "--admin", urls[0])
	if code != 0 {
		t.Fatalf("status: exit %d: %s", code, stderr)
	}
	for _, want := range []string{"pipeline clickcount (exactly_once): 2 nodes, lag 0, in ", "\na ", "\nb ", "\ncount ", "aggregate", "2023-11-14 22:13:"} {
		if !strings.Contains(out, want) {
			t.Errorf("status lacks %q:\n%s", want, out)
		}
	}
	// While records flow, the throughput shows.
	go produce(2000, 60000)
	out, _, code = run(t, "", "status", "--interval", "1500ms", "--admin", urls[0])
	rates := 0
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) >= 7 && (f[0] == "a" || f[0] == "b") && f[5] != "0" && f[5] != "-" {
			rates++
		}
	}
	if code != 0 || rates == 0 {
		t.Errorf("no node shows records per second:\n%s", out)
	}
	out, _, code = run(t, "", "top", "--iterations", "2", "--interval", "100ms", "--admin", urls[1])
	if code != 0 || strings.Count(out, "\x1b[H\x1b[2J") != 2 || strings.Count(out, "IN/S") != 2 {
		t.Errorf("top: exit %d:\n%q", code, out)
	}
}
