package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
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

// TestFormatDuration checks formatDuration against the cases the
// dashboard's duration is checked against too: the two follow one rule.
func TestFormatDuration(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "host", "admin", "dashboard", "testdata", "durations.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct {
		MS   int64  `json:"ms"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &cases); err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		if got := formatDuration(time.Duration(c.MS) * time.Millisecond); got != c.Text {
			t.Errorf("formatDuration(%dms) = %q, want %q", c.MS, got, c.Text)
		}
	}
}

// TestStatusOfOldWatermarks: eddy status writes how far a watermark from
// long ago is behind, and a node's uptime, in days, not hours
// (26708h23m29s).
func TestStatusOfOldWatermarks(t *testing.T) {
	wm := time.Date(2023, 11, 14, 22, 13, 20, 0, time.UTC)
	now := wm.Add(26708*time.Hour + 23*time.Minute + 29*time.Second)
	ms := wm.UnixMilli()
	cs := &reading{at: now, ClusterStatus: host.ClusterStatus{Pipeline: "p", Nodes: []host.NodeStatus{{
		Node: "n1", Started: now.Add(-3*time.Hour - 4*time.Minute),
		Tasks: []host.TaskStatus{{Watermark: &ms}},
	}}}}
	var out strings.Builder
	if err := renderCluster(&out, cs, nil); err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`\nn1 +- +0 +2023-11-14 22:13:20.000 +1,112 days +- +- +0 +0 +3h04m\n`).MatchString(out.String()) {
		t.Fatalf("status:\n%s", out.String())
	}
}

// serveCluster serves cs as a node's admin API does at GET /v1/cluster,
// until the test ends, and returns the server's URL.
func serveCluster(t *testing.T, cs host.ClusterStatus) string {
	t.Helper()
	t.Setenv("EDDY_ADMIN", "")
	body, err := json.Marshal(cs)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/cluster" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestTopWithoutATerminal: eddy top writing to a file or a pipe prints its
// reports one after the other, each under a dated heading, without the
// escapes that clear a terminal's screen.
func TestTopWithoutATerminal(t *testing.T) {
	url := serveCluster(t, host.ClusterStatus{Pipeline: "p", Nodes: []host.NodeStatus{{Node: "n1", Pipeline: "p", Started: time.Now()}}})
	stdout, stderr, code := run(t, "", "top", "--iterations", "3", "--interval", "10ms", "--admin", url)
	if code != 0 || strings.Contains(stdout, "\x1b") || strings.Count(stdout, "IN/S") != 3 {
		t.Fatalf("exit %d: %s\n%q", code, stderr, stdout)
	}
	reports := strings.Split(stdout, "\n\neddy top — ")
	if len(reports) != 3 || !strings.HasPrefix(stdout, "eddy top — ") {
		t.Fatalf("want 3 reports, each after a blank line and a heading:\n%s", stdout)
	}
	for _, r := range reports {
		if !regexp.MustCompile(`^(eddy top — )?\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC — every 10ms\n\npipeline `).MatchString(r) {
			t.Fatalf("a report without its heading:\n%s", r)
		}
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
	if code != 0 || strings.Contains(out, "\x1b") || strings.Count(out, "eddy top — ") != 2 || strings.Count(out, "IN/S") != 2 {
		t.Errorf("top: exit %d:\n%q", code, out)
	}
}

// TestStandbyLine: eddy status sums a node's standby copies by partition
// number, store lags added, warm-ups named.
func TestStandbyLine(t *testing.T) {
	ss := []host.StandbyStatus{
		{Partition: 0, Changelog: "p-count-changelog", Lag: 12},
		{Partition: 0, Changelog: "p-count-timers-changelog", Lag: 3},
		{Partition: 3, Changelog: "p-count-changelog", Lag: 4100, Warmup: true},
		{Partition: 3, Changelog: "p-count-timers-changelog", Warmup: true},
	}
	if got, want := standbyLine(ss), "partition 0 (lag 15), partition 3 (warm-up, lag 4100)"; got != want {
		t.Errorf("standbyLine = %q, want %q", got, want)
	}
	if got := standbyLine(nil); got != "" {
		t.Errorf("standbyLine(nil) = %q, want nothing", got)
	}
}
