package host_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/host"
	"github.com/eddy-streams/eddy/internal/await"
)

// TestWindowsAfterTimedStep runs an aggregate after a step with state (and
// so timers) in the stage behind a key_by: both keep a watermark per
// upstream input, and both must read the batch's progress markers. Eight
// users' records fill one window; then one record per source partition,
// all of one user, moves every upstream task a window later. Only the
// repartition partition of that user gets a record; the others learn of
// the upstream tasks' progress from the markers alone, and every user's
// first window must close. (When the step with timers took the markers
// for itself, the aggregate behind it missed them, and windows of the
// partitions the later records miss could stay open for good.)
func TestWindowsAfterTimedStep(t *testing.T) {
	const parts = 4 // startBroker's partitions
	b := startBroker(t, "in", "out")
	counter, _ := filepath.Abs("../testdata/go/counter.wasm")
	stats, _ := filepath.Abs("../testdata/go/stats.wasm")
	p := loadPipeline(t, fmt.Sprintf(`name: timed-then-windows
source: {topics: [in]}
steps:
  - {name: by-user, kind: key_by, field: user}
  - {name: count, kind: map, function: %s, state: true}
  - name: stats
    kind: aggregate
    function: %s
    window: {type: tumbling, size: 1s}
sink: {topic: out}
delivery: exactly_once
commit_interval: 50ms
`, counter, stats))
	const base = int64(1_700_000_000_000)
	var recs []abi.Record
	users := map[string]int{} // user -> records in the first window
	for i := range 400 {
		u := fmt.Sprintf("u%d", i%8)
		users[u]++
		recs = append(recs, abi.Record{Key: []byte(strconv.Itoa(i)), Value: []byte(fmt.Sprintf(`{"user":%q}`, u)), Timestamp: base + int64(i)})
	}
	// One record a window later on every source partition, all of one user.
	for part := range int32(parts) {
		for k := 0; ; k++ {
			key := []byte("later-" + strconv.Itoa(k))
			if host.KeyPartition(key, parts) == part {
				recs = append(recs, abi.Record{Key: key, Value: []byte(`{"user":"later"}`), Timestamp: base + 5000})
				break
			}
		}
	}
	elsewhere := 0 // users whose repartition partition the later records miss
	for u := range users {
		if host.KeyPartition([]byte(u), parts) != host.KeyPartition([]byte("later"), parts) {
			elsewhere++
		}
	}
	if elsewhere == 0 {
		t.Fatal("every user shares the later records' repartition partition: the test would mean nothing")
	}
	produceAll(t, b.Brokers(), "in", recs)
	n := startStatefulNode(t, b.Brokers(), p, "n1", t.TempDir())
	defer n.stop(t)
	await.Until(t, 50*time.Millisecond, func() bool { return n.node.Stats().In >= int64(len(recs)) },
		func() string { return fmt.Sprintf("the node processed %d of %d records", n.node.Stats().In, len(recs)) })
	out := consumeAll(t, b, "out", len(users), 3*time.Second)
	got := map[string]int{}
	for _, r := range out {
		var s struct{ Count int }
		if err := json.Unmarshal(r.Value, &s); err != nil {
			t.Fatalf("result %s: %v", r.Value, err)
		}
		if header(r, "eddy.window.start") != strconv.FormatInt(base, 10) {
			t.Fatalf("result %s=%s of window %s", r.Key, r.Value, header(r, "eddy.window.start"))
		}
		got[string(r.Key)] = s.Count
	}
	for u, c := range users {
		if got[u] != c {
			t.Errorf("user %s (repartition partition %d): %d records in its first window, want %d", u, host.KeyPartition([]byte(u), parts), got[u], c)
		}
	}
	if len(got) != len(users) {
		t.Errorf("results for %v, want the %d users", got, len(users))
	}
}
