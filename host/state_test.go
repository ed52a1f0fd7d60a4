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
	"github.com/eddy-streams/eddy/registry"
	"github.com/eddy-streams/eddy/runtime"
)

func startStatefulNode(t *testing.T, brokers []string, p *host.Pipeline, id, dataDir string) *runningNode {
	t.Helper()
	r := newStatefulNode(t, brokers, p, id, dataDir)
	r.start(t)
	return r
}

// testRegistryKey signs and verifies the registry events of test nodes, as
// the admin token "tok" would.
var testRegistryKey = registry.Key("tok")

// newStatefulNode creates a node without running it (see start).
func newStatefulNode(t *testing.T, brokers []string, p *host.Pipeline, id, dataDir string) *runningNode {
	t.Helper()
	eng, err := runtime.NewEngine(runtime.WithCacheDir(cacheDir))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close(context.Background()) })
	n, err := host.NewNode(context.Background(), p, host.NodeConfig{Brokers: brokers, NodeID: id, Engine: eng,
		DataDir: dataDir, Logger: testLogger(t).With("id", id), RegistryKey: testRegistryKey})
	if err != nil {
		t.Fatal(err)
	}
	return &runningNode{node: n, done: make(chan error, 1)}
}

// start runs the node until stop.
func (r *runningNode) start(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	go func() { r.done <- r.node.Run(ctx) }()
	t.Cleanup(func() { r.stop(t) })
}

// TestStatefulStepRestores runs the counter guest (per-key counts in keyed
// state) under exactly_once on three nodes in turn: the second starts with an
// empty data directory (restore from the changelog alone), the third reuses
// the first's directory (its checkpoint plus the changelog's tail). The
// counts continue across all three.
func TestStatefulStepRestores(t *testing.T) {
	b := startBroker(t, "in", "out", "dlq")
	brokers := []string{b.Addr()}
	counter, _ := filepath.Abs("../testdata/go/counter.wasm")
	path := filepath.Join(t.TempDir(), "p.yaml")
	os.WriteFile(path, []byte(fmt.Sprintf(`name: counts
source: {topics: [in]}
steps:
  - {name: count, kind: map, function: %s, state: true}
sink: {topic: out}
dead_letter: {topic: dlq}
delivery: exactly_once
commit_interval: 50ms
`, counter)), 0o644)
	p, err := host.LoadPipeline(path)
	if err != nil {
		t.Fatal(err)
	}
	round := func(from int) {
		i := from
		_, err := host.Produce(context.Background(), brokers, "in", func() (abi.Record, error) {
			if i >= from+100 {
				return abi.Record{}, io.EOF
			}
			i++
			return abi.Record{Key: []byte(fmt.Sprintf("k%d", i%10)), Value: []byte("x")}, nil
		}, nil)
		if err != nil {
			t.Fatal(err)
		}
	}
	// maxima returns the highest count output for each key.
	maxima := func(want int) map[string]int {
		out := consumeAll(t, b, "out", want, time.Second)
		m := map[string]int{}
		for _, r := range out {
			var c int
			fmt.Sscan(string(r.Value), &c)
			m[string(r.Key)] = max(m[string(r.Key)], c)
		}
		return m
	}
	check := func(m map[string]int, want int) {
		t.Helper()
		if len(m) != 10 {
			t.Fatalf("%d keys, want 10: %v", len(m), m)
		}
		for k, c := range m {
			if c != want {
				t.Fatalf("key %s counted to %d, want %d (all: %v)", k, c, want, m)
			}
		}
	}
	dir1 := t.TempDir()
	n1 := startStatefulNode(t, brokers, p, "one", dir1)
	round(0)
	check(maxima(100), 10)
	n1.stop(t)

	n2 := startStatefulNode(t, brokers, p, "two", t.TempDir()) // empty: changelog only
	round(100)
	check(maxima(200), 20)
	n2.stop(t)

	n3 := startStatefulNode(t, brokers, p, "three", dir1) // checkpoint + tail
	round(200)
	check(maxima(300), 30)
	n3.stop(t)
}

// TestStatefulRebalanceAtLeastOnce runs the counter guest under
// at_least_once while records keep arriving: a second node joins, then the
// first leaves. Partitions move only after their tasks have checkpointed
// (changelog, store, then offsets), so the node that takes a partition
// continues its counts: every key counts each of its records once, and
// every count from 1 to the key's total is in the output.
func TestStatefulRebalanceAtLeastOnce(t *testing.T) {
	b := startBroker(t, "in", "out", "dlq")
	brokers := []string{b.Addr()}
	counter, _ := filepath.Abs("../testdata/go/counter.wasm")
	path := filepath.Join(t.TempDir(), "p.yaml")
	os.WriteFile(path, []byte(fmt.Sprintf(`name: alocounts
source: {topics: [in]}
steps:
  - {name: count, kind: map, function: %s, state: true}
sink: {topic: out}
dead_letter: {topic: dlq}
delivery: at_least_once
commit_interval: 50ms
`, counter)), 0o644)
	p, err := host.LoadPipeline(path)
	if err != nil {
		t.Fatal(err)
	}
	const keys, rounds, perRound = 20, 30, 200
	produced := 0
	produceRound := func() {
		i := 0
		_, err := host.Produce(context.Background(), brokers, "in", func() (abi.Record, error) {
			if i >= perRound {
				return abi.Record{}, io.EOF
			}
			i++
			produced++
			return abi.Record{Key: []byte(fmt.Sprintf("k%d", produced%keys)), Value: []byte("x")}, nil
		}, nil)
		if err != nil {
			t.Fatal(err)
		}
	}
	n1 := startStatefulNode(t, brokers, p, "one", t.TempDir())
	var n2 *runningNode
	for r := 0; r < rounds; r++ {
		produceRound()
		switch r {
		case rounds / 3:
			n2 = startStatefulNode(t, brokers, p, "two", t.TempDir())
		case 2 * rounds / 3:
			n1.stop(t)
		}
		time.Sleep(20 * time.Millisecond)
	}
	out := consumeAll(t, b, "out", produced, 2*time.Second)
	n2.stop(t)
	seen := map[string]map[int]int{}
	for _, r := range out {
		var c int
		fmt.Sscan(string(r.Value), &c)
		k := string(r.Key)
		if seen[k] == nil {
			seen[k] = map[int]int{}
		}
		seen[k][c]++
	}
	dups := 0
	for k := 0; k < keys; k++ {
		key := fmt.Sprintf("k%d", k)
		want := produced / keys
		for c := 1; c <= want; c++ {
			if seen[key][c] == 0 {
				t.Fatalf("key %s: count %d missing from the output (%d records of the key)", key, c, want)
			}
			dups += seen[key][c] - 1
		}
		for c := range seen[key] {
			if c > want {
				t.Fatalf("key %s counted to %d, want %d: a record counted twice", key, c, want)
			}
		}
	}
	t.Logf("%d records, %d outputs, %d repeated", produced, len(out), dups)
}

// TestStatefulBrokerOutage counts records per key with keyed state while
// the broker becomes unreachable for 3 s and comes back, records arriving
// throughout, under both guarantees that keep state: no count may be
// missing from the output and no record may be counted twice.
func TestStatefulBrokerOutage(t *testing.T) {
	for _, d := range []host.Delivery{host.ExactlyOnce, host.AtLeastOnce} {
		t.Run(string(d), func(t *testing.T) {
			b := startBroker(t, "in", "out", "dlq")
			gate := b.Embedded(t, "cuts the network between the node and the broker")
			brokers := []string{b.Addr()}
			counter, _ := filepath.Abs("../testdata/go/counter.wasm")
			p := loadPipeline(t, fmt.Sprintf(`name: outage
source: {topics: [in]}
steps:
  - {name: count, kind: map, function: %s, state: true}
sink: {topic: out}
dead_letter: {topic: dlq}
delivery: %s
commit_interval: 50ms
`, counter, d))
			n := startStatefulNode(t, brokers, p, "a", t.TempDir())
			const keys, total = 10, 3000
			produced := make(chan struct{})
			go func() {
				defer close(produced)
				for from := 0; from < total; from += 250 {
					var recs []abi.Record
					for i := from; i < from+250; i++ {
						recs = append(recs, abi.Record{Key: []byte(fmt.Sprintf("k%d", i%keys)), Value: []byte("x")})
					}
					produceAll(t, brokers, "in", recs)
					time.Sleep(300 * time.Millisecond)
				}
			}()
			time.Sleep(time.Second)
			gate.SetReachable(false)
			time.Sleep(3 * time.Second)
			gate.SetReachable(true)
			<-produced
			out := consumeAll(t, b, "out", total, 3*time.Second)
			n.stop(t)
			seen := map[string]map[int]bool{}
			for _, r := range out {
				var c int
				fmt.Sscan(string(r.Value), &c)
				if seen[string(r.Key)] == nil {
					seen[string(r.Key)] = map[int]bool{}
				}
				seen[string(r.Key)][c] = true
			}
			for k := 0; k < keys; k++ {
				key := fmt.Sprintf("k%d", k)
				for c := 1; c <= total/keys; c++ {
					if !seen[key][c] {
						t.Fatalf("key %s: count %d missing (%d outputs)", key, c, len(out))
					}
				}
				if len(seen[key]) != total/keys {
					t.Fatalf("key %s: %d distinct counts, want %d: a record counted twice", key, len(seen[key]), total/keys)
				}
			}
		})
	}
}
