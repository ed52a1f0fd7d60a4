package host_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/host"
	"github.com/eddy-streams/eddy/internal/await"
)

// TestWindowedAggregate counts and sums values per key in 1 s tumbling
// windows with the stats guest, on a node that stops halfway and a second
// node that starts with an empty data directory (its windows come from the
// changelog), under exactly_once and under at_least_once (checkpoints
// instead of transactions; with clean stops nothing is processed twice).
// Every window's final result must equal a reference computed from the
// input, once; records later than the grace go to the late topic.
func TestWindowedAggregate(t *testing.T) {
	for _, d := range []host.Delivery{host.ExactlyOnce, host.AtLeastOnce} {
		t.Run(string(d), func(t *testing.T) { testWindowedAggregate(t, d) })
	}
}

func testWindowedAggregate(t *testing.T, delivery host.Delivery) {
	b := startBroker(t, "in", "out", "dlq", "late")
	brokers := []string{b.Addr()}
	stats, _ := filepath.Abs("../testdata/go/stats.wasm")
	path := filepath.Join(t.TempDir(), "p.yaml")
	os.WriteFile(path, []byte(fmt.Sprintf(`name: windows
source: {topics: [in]}
steps:
  - name: stats
    kind: aggregate
    function: %s
    window: {type: tumbling, size: 1s, disorder: 300ms}
sink: {topic: out}
dead_letter: {topic: dlq}
late: {topic: late}
delivery: %s
commit_interval: 50ms
batch_size: 50
`, stats, delivery)), 0o644)
	p, err := host.LoadPipeline(path)
	if err != nil {
		t.Fatal(err)
	}
	// Events: 8 keys, 3000 records over 30 s of event time, shuffled within
	// 250 ms; then one late record per key; then a record per key far ahead
	// that closes every window.
	const base = int64(1700000000000)
	type ev struct {
		key string
		ts  int64
		v   int
	}
	rng := rand.New(rand.NewPCG(3, 4))
	var evs []ev
	for i := 0; i < 3000; i++ {
		evs = append(evs, ev{fmt.Sprintf("k%d", i%8), base + int64(i)*10 + rng.Int64N(250), rng.IntN(100)})
	}
	type wk struct {
		key   string
		start int64
	}
	want := map[wk][2]int{} // count, sum
	for _, e := range evs {
		w := wk{e.key, e.ts / 1000 * 1000}
		c := want[w]
		want[w] = [2]int{c[0] + 1, c[1] + e.v}
	}
	for k := 0; k < 8; k++ {
		evs = append(evs, ev{fmt.Sprintf("k%d", k), base, 1})             // late: its window closed long ago
		evs = append(evs, ev{fmt.Sprintf("k%d", k), base + 3_600_000, 0}) // closes everything before
	}
	produce := func(evs []ev) {
		i := 0
		_, err := host.Produce(context.Background(), brokers, "in", func() (abi.Record, error) {
			if i >= len(evs) {
				return abi.Record{}, io.EOF
			}
			e := evs[i]
			i++
			return abi.Record{Key: []byte(e.key), Value: []byte(fmt.Sprint(e.v)), Timestamp: e.ts}, nil
		}, nil)
		if err != nil {
			t.Fatal(err)
		}
	}

	// The first node gets half the input and stops once it has taken it
	// all: the windows around the middle are open in its state.
	const half = 1500
	produce(evs[:half])
	n1 := startStatefulNode(t, brokers, p, "one", t.TempDir())
	await.Until(t, 10*time.Millisecond, func() bool { return n1.node.Stats().In >= half },
		func() string { return fmt.Sprintf("the first node took %d of %d records", n1.node.Stats().In, half) })
	n1.stop(t)
	produce(evs[half:])
	n2 := startStatefulNode(t, brokers, p, "two", t.TempDir())
	out := consumeAll(t, b, "out", len(want), 2*time.Second)
	n2.stop(t)

	got := map[wk][2]int{}
	for _, r := range out {
		var start int64
		for _, h := range r.Headers {
			if h.Key == "eddy.window.start" {
				fmt.Sscan(string(h.Value), &start)
			}
		}
		var res struct{ Count, Sum int }
		if err := json.Unmarshal(r.Value, &res); err != nil {
			t.Fatalf("result %q: %v", r.Value, err)
		}
		w := wk{string(r.Key), start}
		if _, dup := got[w]; dup {
			t.Fatalf("window %v emitted twice", w)
		}
		got[w] = [2]int{res.Count, res.Sum}
	}
	var diffs []string
	for w, c := range want {
		if got[w] != c {
			diffs = append(diffs, fmt.Sprintf("%v: got %v want %v", w, got[w], c))
		}
	}
	for w := range got {
		if _, ok := want[w]; !ok {
			diffs = append(diffs, fmt.Sprintf("%v: unexpected %v", w, got[w]))
		}
	}
	sort.Strings(diffs)
	if len(diffs) > 0 {
		t.Fatalf("%d of %d windows differ, e.g. %v", len(diffs), len(want), diffs[:min(5, len(diffs))])
	}
	late := consumeAll(t, b, "late", 8, time.Second)
	if len(late) != 8 {
		t.Fatalf("%d late records, want 8", len(late))
	}
	for _, r := range late {
		h := map[string]string{}
		for _, x := range r.Headers {
			h[x.Key] = string(x.Value)
		}
		if h["eddy.window.start"] != fmt.Sprint(base) || h["eddy.watermark"] == "" || h["eddy.source.offset"] == "" {
			t.Fatalf("late record headers %v", h)
		}
	}
}

// TestGlobalCountWindowsHandOver counts records per key in global windows
// that fire every 4 records, on a node that stops halfway and a second one
// that starts with an empty data directory: each key's count since its last
// firing comes back with its accumulator, so every result covers exactly 4
// consecutive records of its key.
func TestGlobalCountWindowsHandOver(t *testing.T) {
	b := startBroker(t, "in", "out", "dlq")
	brokers := []string{b.Addr()}
	stats, _ := filepath.Abs("../testdata/c/stats.wasm")
	p := loadPipeline(t, fmt.Sprintf(`name: every4
source: {topics: [in]}
steps:
  - name: stats
    kind: aggregate
    function: %s
    window: {type: global, count: 4}
sink: {topic: out}
dead_letter: {topic: dlq}
delivery: exactly_once
commit_interval: 50ms
`, stats))
	// Key k gets values 1, 2, 3, ...: the n-th result of a key sums
	// 16n-6 (4 consecutive values).
	const keys, perKey = 5, 22
	var recs []abi.Record
	for i := 1; i <= perKey; i++ {
		for k := 0; k < keys; k++ {
			recs = append(recs, abi.Record{Key: []byte(fmt.Sprintf("k%d", k)), Value: []byte(fmt.Sprint(i))})
		}
	}
	half := len(recs)/2 + 1 // an odd split: counts are mid-window
	produceAll(t, brokers, "in", recs[:half])
	n1 := startStatefulNode(t, brokers, p, "one", t.TempDir())
	await.Until(t, 10*time.Millisecond, func() bool { return n1.node.Stats().In >= int64(half) },
		func() string { return fmt.Sprintf("the first node took %d of %d records", n1.node.Stats().In, half) })
	n1.stop(t)
	produceAll(t, brokers, "in", recs[half:])
	n2 := startStatefulNode(t, brokers, p, "two", t.TempDir())
	want := keys * (perKey / 4)
	out := consumeAll(t, b, "out", want, 2*time.Second)
	n2.stop(t)
	if len(out) != want {
		t.Fatalf("%d results, want %d", len(out), want)
	}
	seen := map[string]int{}
	for _, r := range out {
		var res struct{ Count, Sum int }
		if err := json.Unmarshal(r.Value, &res); err != nil {
			t.Fatalf("result %q: %v", r.Value, err)
		}
		seen[string(r.Key)]++
		n := seen[string(r.Key)]
		if res.Count != 4 || res.Sum != 16*n-6 {
			t.Fatalf("key %s result %d: count %d sum %d, want 4 and %d", r.Key, n, res.Count, res.Sum, 16*n-6)
		}
	}
}
