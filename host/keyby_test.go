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
	"strconv"
	"testing"
	"time"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/host"
)

func loadPipeline(t testing.TB, src string) *host.Pipeline {
	t.Helper()
	path := filepath.Join(t.TempDir(), "p.yaml")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := host.LoadPipeline(path)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func produceAll(t testing.TB, brokers []string, topic string, recs []abi.Record) {
	t.Helper()
	i := 0
	_, err := host.Produce(context.Background(), brokers, topic, func() (abi.Record, error) {
		if i >= len(recs) {
			return abi.Record{}, io.EOF
		}
		i++
		return recs[i-1], nil
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
}

func header(r abi.Record, key string) string {
	for _, h := range r.Headers {
		if h.Key == key {
			return string(h.Value)
		}
	}
	return ""
}

// TestKeyByRepartitionsState rekeys records spread over four partitions by
// a JSON field, then counts them per new key with keyed state: each key's
// counts must run 1, 2, ... exactly once, which holds only if every record of
// a key reached the same task (through the repartition topic). A record
// without the field goes to the dead-letter topic from the key_by step.
func TestKeyByRepartitionsState(t *testing.T) {
	b := startBroker(t, "in", "out", "dlq")
	brokers := []string{b.Addr()}
	counter, _ := filepath.Abs("../testdata/go/counter.wasm")
	p := loadPipeline(t, fmt.Sprintf(`name: keyed
source: {topics: [in]}
steps:
  - {name: by-user, kind: key_by, field: user.id}
  - {name: count, kind: map, function: %s, state: true}
sink: {topic: out}
dead_letter: {topic: dlq}
delivery: exactly_once
commit_interval: 50ms
batch_size: 40
`, counter))
	const users, n = 7, 700
	var recs []abi.Record
	for i := 0; i < n; i++ {
		recs = append(recs, abi.Record{Key: []byte("r" + strconv.Itoa(i)), Value: []byte(fmt.Sprintf(`{"user":{"id":"u%d"},"n":%d}`, i%users, i))})
		if i == 350 {
			recs = append(recs, abi.Record{Key: []byte("bad"), Value: []byte(`{"n":1}`)})
		}
	}
	produceAll(t, brokers, "in", recs)
	node := startStatefulNode(t, brokers, p, "one", t.TempDir())
	out := consumeAll(t, b, "out", n, 2*time.Second)
	node.stop(t)

	counts := map[string][]int{}
	for _, r := range out {
		c, err := strconv.Atoi(string(r.Value))
		if err != nil {
			t.Fatalf("output %q: %v", r.Value, err)
		}
		counts[string(r.Key)] = append(counts[string(r.Key)], c)
	}
	if len(counts) != users {
		t.Fatalf("%d keys in the output, want %d: %v", len(counts), users, counts)
	}
	for k, cs := range counts {
		sort.Ints(cs)
		for i, c := range cs {
			if c != i+1 {
				t.Fatalf("key %s: counts %v, want 1..%d once each", k, cs, n/users)
			}
		}
		if len(cs) != n/users {
			t.Fatalf("key %s: %d counts, want %d", k, len(cs), n/users)
		}
	}
	dlq := consumeAll(t, b, "dlq", 1, time.Second)
	if len(dlq) != 1 || header(dlq[0], "eddy.step") != "by-user" || header(dlq[0], "eddy.error.code") != "bad_input" {
		t.Fatalf("dead letters: %d, first %+v", len(dlq), dlq)
	}
}

// TestKeyByWindowsWithTimeFunction aggregates bids per bidder (a JSON field)
// in 1 s tumbling windows, with event time from a Wasm timestamp extractor
// (the record timestamps are deliberately wrong), through a repartition
// topic. Every window's result must equal a reference computed from the
// input, exactly once: the downstream windows keep a watermark per upstream
// partition, so the interleaving of the upstream tasks' output does not
// make records late.
func TestKeyByWindowsWithTimeFunction(t *testing.T) {
	b := startBroker(t, "in", "out", "dlq", "late")
	brokers := []string{b.Addr()}
	prices, _ := filepath.Abs("../testdata/go/pricestats.wasm")
	wordkey, _ := filepath.Abs("../testdata/go/wordkey.wasm")
	p := loadPipeline(t, fmt.Sprintf(`name: bids
source: {topics: [in]}
steps:
  - {name: by-bidder, kind: key_by, field: bidder}
  - name: prices
    kind: aggregate
    function: %s
    time_function: %s
    window: {type: tumbling, size: 1s, disorder: 300ms}
sink: {topic: out}
dead_letter: {topic: dlq}
late: {topic: late}
delivery: exactly_once
commit_interval: 50ms
batch_size: 100
`, prices, wordkey))
	const base = int64(1700000000000)
	type wk struct {
		bidder string
		start  int64
	}
	type agg struct {
		Count int
		Sum   float64
		Max   float64
	}
	want := map[wk]agg{}
	rng := rand.New(rand.NewPCG(5, 6))
	var recs []abi.Record
	for i := 0; i < 4000; i++ {
		bidder := fmt.Sprintf("b%d", i%5)
		ts := base + int64(i)*5 + rng.Int64N(250)
		price := rng.IntN(1000)
		recs = append(recs, abi.Record{Key: []byte("r" + strconv.Itoa(i)), Timestamp: base - 86_400_000,
			Value: []byte(fmt.Sprintf(`{"bidder":%q,"ts":%d,"price":%d}`, bidder, ts, price))})
		w := wk{bidder, ts / 1000 * 1000}
		a := want[w]
		a.Count++
		a.Sum += float64(price)
		a.Max = max(a.Max, float64(price))
		want[w] = a
	}
	// Far ahead on every partition: closes every window above.
	for j := 0; j < 40; j++ {
		recs = append(recs, abi.Record{Key: []byte("close" + strconv.Itoa(j)),
			Value: []byte(fmt.Sprintf(`{"bidder":"b0","ts":%d,"price":1}`, base+3_600_000))})
	}
	produceAll(t, brokers, "in", recs)
	node := startStatefulNode(t, brokers, p, "one", t.TempDir())
	out := consumeAll(t, b, "out", len(want), 2*time.Second)
	node.stop(t)

	got := map[wk]agg{}
	for _, r := range out {
		start, _ := strconv.ParseInt(header(r, "eddy.window.start"), 10, 64)
		var a agg
		if err := json.Unmarshal(r.Value, &a); err != nil {
			t.Fatalf("result %q: %v", r.Value, err)
		}
		w := wk{string(r.Key), start}
		if _, dup := got[w]; dup {
			t.Fatalf("window %v emitted twice", w)
		}
		got[w] = a
	}
	var diffs []string
	for w, a := range want {
		if got[w] != a {
			diffs = append(diffs, fmt.Sprintf("%v: got %+v want %+v", w, got[w], a))
		}
	}
	for w := range got {
		if _, ok := want[w]; !ok {
			diffs = append(diffs, fmt.Sprintf("%v: unexpected %+v", w, got[w]))
		}
	}
	sort.Strings(diffs)
	if len(diffs) > 0 {
		t.Fatalf("%d of %d windows differ, e.g. %v", len(diffs), len(want), diffs[:min(5, len(diffs))])
	}
	if late := consumeAll(t, b, "late", 0, 500*time.Millisecond); len(late) != 0 {
		t.Fatalf("%d late records, want none", len(late))
	}
}
