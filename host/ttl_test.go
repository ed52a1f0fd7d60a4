package host_test

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/host"
	"github.com/eddy-streams/eddy/state"
)

// TestWindowStateExpires runs the stats guest in 1 s tumbling windows with
// an hour of retention over 200 keys × 20 windows, on a node with its state
// on disk, and watches the store: it must hold every window's accumulator,
// closed or not, while the watermark is within the retention, and drop them
// all once records two hours later push the watermark past it, leaving
// only the new records' windows and each partition's watermark. Every
// window's result is emitted once, before its state goes.
func TestWindowStateExpires(t *testing.T) {
	b := startBroker(t, "in", "out", "dlq", "late")
	brokers := []string{b.Addr()}
	stats, _ := filepath.Abs("../testdata/go/stats.wasm")
	p := loadPipeline(t, fmt.Sprintf(`name: ttl
source: {topics: [in]}
steps:
  - name: stats
    kind: aggregate
    function: %s
    window: {type: tumbling, size: 1s, retention: 1h}
sink: {topic: out}
dead_letter: {topic: dlq}
late: {topic: late}
delivery: exactly_once
commit_interval: 50ms
batch_size: 500
`, stats))
	const (
		base    = int64(1700000000000)
		keys    = 200
		windows = 20
		parts   = 4 // startBroker's partitions
	)
	var recs []abi.Record
	for w := range windows {
		for rep := range 2 {
			for k := range keys {
				recs = append(recs, abi.Record{Key: []byte(fmt.Sprintf("k%d", k)), Value: []byte("1"),
					Timestamp: base + int64(w)*1000 + int64(rep)*400 + int64(k)})
			}
		}
	}
	produceAll(t, brokers, "in", recs)

	dir := t.TempDir()
	n := startStatefulNode(t, brokers, p, "one", dir)
	// waitKeys polls the node's committed state until ok, or fails.
	waitKeys := func(what string, ok func(int) bool) int {
		t.Helper()
		var got int
		var err error
		deadline := time.Now().Add(60 * time.Second)
		for time.Now().Before(deadline) {
			if got, err = n.node.StateKeys("stats"); err != nil {
				t.Fatal(err)
			}
			if ok(got) {
				return got
			}
			time.Sleep(50 * time.Millisecond)
		}
		t.Fatalf("%s: the store holds %d keys", what, got)
		return got
	}
	// Every accumulator is kept: 19 windows closed and fired, the 20th
	// open, none past the retention; and a watermark per partition.
	const all = keys*windows + parts
	peak := waitKeys("within the retention", func(k int) bool { return k >= all })
	if peak != all {
		t.Fatalf("the store holds %d keys, want %d", peak, all)
	}
	// One record per partition two hours later: every window expires, and
	// each partition keeps the new record's window and its watermark.
	var late []abi.Record
	seen := map[int32]bool{}
	for k := 0; len(seen) < parts; k++ {
		key := []byte(fmt.Sprintf("k%d", k))
		if p := host.KeyPartition(key, parts); !seen[p] {
			seen[p] = true
			late = append(late, abi.Record{Key: key, Value: []byte("1"), Timestamp: base + 2*3600_000})
		}
	}
	produceAll(t, brokers, "in", late)
	const after = 2 * parts
	if got := waitKeys("past the retention", func(k int) bool { return k <= after }); got != after {
		t.Fatalf("the store holds %d keys past the retention, want %d", got, after)
	}
	out := consumeAll(t, b, "out", keys*windows, 2*time.Second)
	n.stop(t)
	results := map[string]bool{}
	for _, r := range out {
		w := fmt.Sprintf("%s@%s", r.Key, header(r, "eddy.window.start"))
		if results[w] {
			t.Fatalf("window %s emitted twice", w)
		}
		results[w] = true
		if string(r.Value) != `{"count":2,"sum":2,"avg":1}` {
			t.Fatalf("window %s: result %s", w, r.Value)
		}
	}
	if len(results) != keys*windows {
		t.Fatalf("%d windows emitted, want %d", len(results), keys*windows)
	}

	// What the node left on disk agrees.
	db, err := state.Open(dir, state.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	onDisk := 0
	for part := range int32(parts) {
		k, err := db.Store("ttl", "stats", part).Len()
		if err != nil {
			t.Fatal(err)
		}
		onDisk += k
	}
	if onDisk != after {
		t.Fatalf("%d keys on disk after the node stopped, want %d", onDisk, after)
	}
}
