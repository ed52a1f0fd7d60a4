package host_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/host"
	"github.com/eddy-streams/eddy/internal/await"
)

// TestStatusReportsProgress runs a keyed windowed count over 3 partitions
// and checks what the node's status says once the input is processed: the
// pipeline's graph, every task's counts adding up to the node's totals and
// to the input, no lag, and watermarks near the input's event times.
func TestStatusReportsProgress(t *testing.T) {
	b := startBroker(t, "in", "out", "dlq")
	count, _ := filepath.Abs("../testdata/go/nx-count.wasm")
	path := filepath.Join(t.TempDir(), "p.yaml")
	os.WriteFile(path, []byte(fmt.Sprintf(`name: observed
source: {topics: [in]}
steps:
  - {name: by-value, kind: key_by, field: v}
  - name: count
    kind: aggregate
    function: %s
    window: {type: tumbling, size: 10ms}
sink: {topic: out}
dead_letter: {topic: dlq}
delivery: exactly_once
commit_interval: 50ms
`, count)), 0o644)
	p, err := host.LoadPipeline(path)
	if err != nil {
		t.Fatal(err)
	}
	const n = 3000
	i := 0
	if _, err := host.Produce(context.Background(), []string{b.Addr()}, "in", func() (abi.Record, error) {
		if i == n {
			return abi.Record{}, io.EOF
		}
		i++
		return abi.Record{Key: []byte(fmt.Sprint(i % 7)), Value: []byte(fmt.Sprintf(`{"v":"k%d"}`, i%11)), Timestamp: 1700000000000 + int64(i)}, nil
	}, nil); err != nil {
		t.Fatal(err)
	}
	r := startStatefulNode(t, []string{b.Addr()}, p, "a", t.TempDir())
	var st host.NodeStatus
	await.Until(t, 50*time.Millisecond, func() bool {
		st = r.node.Status()
		var repartitioned int64
		for _, ts := range st.Tasks {
			repartitioned += ts.In * int64(ts.Stage)
		}
		return st.Stats.In == n && repartitioned == n && st.Lag == 0 && len(st.Tasks) == 8
	}, func() string {
		return fmt.Sprintf("status never settled: in %d of %d, lag %d, %d tasks: %+v", st.Stats.In, n, st.Lag, len(st.Tasks), st.Tasks)
	})
	g := st.Graph
	if len(g.Steps) != 2 || g.Steps[0].Field != "v" || g.Steps[1].Window != "tumbling 10ms" || g.Steps[1].Stage != 1 ||
		len(g.Stages) != 2 || g.Stages[0].Output != host.RepartitionTopic("observed", "by-value") || g.Sink != "out" {
		t.Fatalf("graph %+v", g)
	}
	var in [2]int64
	var out int64
	for _, ts := range st.Tasks {
		in[ts.Stage] += ts.In
		if ts.Stage == 1 {
			out += ts.Out
			if ts.In > 0 && (ts.Watermark == nil || *ts.Watermark < 1700000000000) {
				t.Errorf("task %d/%d: watermark %v", ts.Stage, ts.Partition, ts.Watermark)
			}
		}
		for _, i := range ts.Inputs {
			if i.Lag != 0 || i.Offset != i.End {
				t.Errorf("task %d/%d input %+v", ts.Stage, ts.Partition, i)
			}
		}
	}
	// Every record crosses the repartition topic once.
	if in[0] != n || in[1] != n || out != st.Stats.Out {
		t.Fatalf("tasks took %v records per stage and wrote %d; node: in %d out %d", in, out, st.Stats.In, st.Stats.Out)
	}
}
