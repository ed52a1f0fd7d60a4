package host_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/host"
	"github.com/eddy-streams/eddy/internal/testkafka"
)

var cacheDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "eddy-host-cache")
	if err != nil {
		panic(err)
	}
	cacheDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// startBroker gives the test its broker (internal/testkafka): an embedded
// one, or the Apache Kafka broker EDDY_TEST_KAFKA names, with topics
// created, 4 partitions each.
func startBroker(t *testing.T, topics ...string) *testkafka.Broker {
	t.Helper()
	return testkafka.Start(t, topics...)
}

func testLogger(t *testing.T) *slog.Logger {
	if testing.Verbose() {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// pipeline writes a pipeline file running guest over in → out.
func pipeline(t *testing.T, name, guest string, delivery host.Delivery, extra string) *host.Pipeline {
	t.Helper()
	wasm, err := filepath.Abs(filepath.Join("..", "testdata", guest))
	if err != nil {
		t.Fatal(err)
	}
	src := fmt.Sprintf(`name: %s
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
delivery: %s
commit_interval: 50ms
batch_size: 100
%s`, name, wasm, delivery, extra)
	path := filepath.Join(t.TempDir(), "pipeline.yaml")
	os.WriteFile(path, []byte(src), 0o644)
	p, err := host.LoadPipeline(path)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// runningNode starts a node; stop it with the returned function.
type runningNode struct {
	node   *host.Node
	cancel context.CancelFunc
	done   chan error
}

func startNode(t *testing.T, b *testkafka.Broker, p *host.Pipeline, id string) *runningNode {
	t.Helper()
	return startStatefulNode(t, []string{b.Addr()}, p, id, "")
}

func (r *runningNode) stop(t *testing.T) {
	if r.cancel == nil {
		return
	}
	r.cancel()
	r.cancel = nil
	select {
	case err := <-r.done:
		if err != nil {
			t.Errorf("node: %v", err)
		}
	case <-time.After(60 * time.Second):
		t.Error("node did not stop within 60s")
	}
}

func produceN(t *testing.T, b *testkafka.Broker, topic string, from, to int) {
	t.Helper()
	i := from
	_, err := host.Produce(context.Background(), []string{b.Addr()}, topic, func() (abi.Record, error) {
		if i >= to {
			return abi.Record{}, io.EOF
		}
		r := abi.Record{Key: []byte(fmt.Sprintf("k%d", i%37)), Value: []byte(fmt.Sprintf("v%06d", i)), Timestamp: int64(1700000000000 + i)}
		i++
		return r, nil
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
}

// consumeAll reads a topic (read_committed) until it has want records or
// nothing new arrives for idle.
func consumeAll(t *testing.T, b *testkafka.Broker, topic string, want int, idle time.Duration) []abi.Record {
	t.Helper()
	var recs []abi.Record
	var mu sync.Mutex
	deadline := time.Now().Add(90 * time.Second)
	for {
		recs = recs[:0]
		_, err := host.Consume(context.Background(), []string{b.Addr()}, topic, host.ConsumeOptions{Idle: idle}, func(r abi.Record, _ host.Meta) error {
			mu.Lock()
			recs = append(recs, abi.Record{Key: append([]byte(nil), r.Key...), Value: append([]byte(nil), r.Value...), Timestamp: r.Timestamp, Headers: r.Headers})
			mu.Unlock()
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) >= want || time.Now().After(deadline) {
			return recs
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// checkExactlyOnce verifies out holds the upper-cased value of every input in
// [0, n) exactly once.
func checkOutput(t *testing.T, out []abi.Record, n int, exactlyOnce bool) {
	t.Helper()
	seen := map[string]int{}
	for _, r := range out {
		seen[string(r.Value)]++
	}
	var missing, dup []string
	for i := 0; i < n; i++ {
		v := fmt.Sprintf("V%06d", i)
		switch c := seen[v]; {
		case c == 0:
			missing = append(missing, v)
		case c > 1 && exactlyOnce:
			dup = append(dup, v)
		}
		delete(seen, v)
	}
	extra := make([]string, 0, len(seen))
	for v := range seen {
		extra = append(extra, v)
	}
	sort.Strings(extra)
	if len(missing) > 0 || len(dup) > 0 || len(extra) > 0 {
		t.Fatalf("output of %d records for %d inputs: %d missing (%s), %d duplicated (%s), %d unexpected (%s)",
			len(out), n, len(missing), head(missing), len(dup), head(dup), len(extra), head(extra))
	}
}

func head(s []string) string {
	if len(s) > 5 {
		s = s[:5]
	}
	return strings.Join(s, " ")
}

func TestNodeAtLeastOnce(t *testing.T) {
	b := startBroker(t, "in", "out", "dlq")
	p := pipeline(t, "alo", "go/upper.wasm", host.AtLeastOnce, "")
	produceN(t, b, "in", 0, 2000)
	n := startNode(t, b, p, "a")
	out := consumeAll(t, b, "out", 2000, 2*time.Second)
	checkOutput(t, out, 2000, false)
	n.stop(t)
	if st := n.node.Stats(); st.In < 2000 || st.Out < 2000 {
		t.Fatalf("stats %+v", st)
	}
}

func TestNodeExactlyOnce(t *testing.T) {
	b := startBroker(t, "in", "out", "dlq")
	p := pipeline(t, "eos", "go/upper.wasm", host.ExactlyOnce, "")
	produceN(t, b, "in", 0, 2000)
	n := startNode(t, b, p, "a")
	out := consumeAll(t, b, "out", 2000, 2*time.Second)
	checkOutput(t, out, 2000, true)
	n.stop(t)
	if st := n.node.Stats(); st.Commits == 0 {
		t.Fatalf("no transaction committed: %+v", st)
	}
}

// TestDeadLetterHeadersAndTheRestOfTheStream runs the poison guest in Go
// (which catches the panic) and in Rust (where the panic traps and the host
// isolates the record).
func TestDeadLetterHeadersAndTheRestOfTheStream(t *testing.T) {
	for _, lang := range []struct{ name, panicCode string }{{"go", "panic"}, {"rust", "trap"}} {
		t.Run(lang.name, func(t *testing.T) { testDeadLetters(t, lang.name+"/poison.wasm", lang.panicCode) })
	}
}

func testDeadLetters(t *testing.T, guest, panicCode string) {
	b := startBroker(t, "in", "out", "dlq")
	p := pipeline(t, "dlq", guest, host.ExactlyOnce, "")
	values := []string{"a", "poison", "b", "panic", "c", "code77", "d"}
	i := 0
	_, err := host.Produce(context.Background(), []string{b.Addr()}, "in", func() (abi.Record, error) {
		if i >= len(values) {
			return abi.Record{}, io.EOF
		}
		i++
		return abi.Record{Key: []byte("same-key"), Value: []byte(values[i-1])}, nil
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	startNode(t, b, p, "a")
	out := consumeAll(t, b, "out", 4, time.Second)
	got := []string{}
	for _, r := range out {
		got = append(got, string(r.Value))
	}
	if strings.Join(got, ",") != "A,B,C,D" {
		t.Fatalf("output %v, want A,B,C,D in order", got)
	}
	dlq := consumeAll(t, b, "dlq", 3, time.Second)
	if len(dlq) != 3 {
		t.Fatalf("%d dead letters, want 3", len(dlq))
	}
	wantCodes := map[string]string{"poison": "rejected", "panic": panicCode, "code77": "user_77"}
	for _, r := range dlq {
		h := map[string]string{}
		for _, x := range r.Headers {
			h[x.Key] = string(x.Value)
		}
		v := string(r.Value)
		if h["eddy.error.code"] != wantCodes[v] || h["eddy.step"] != "fn" || h["eddy.source.topic"] != "in" ||
			h["eddy.source.partition"] == "" || h["eddy.source.offset"] == "" || !strings.HasPrefix(h["eddy.function.digest"], "sha256:") ||
			!strings.Contains(h["eddy.error"], "function fn (process)") {
			t.Fatalf("dead letter %q has headers %v", v, h)
		}
	}
}

// TestRebalanceExactlyOnce runs two nodes, adds a third mid-stream and stops
// the first mid-stream: the read_committed output holds every input's
// output exactly once.
func TestRebalance(t *testing.T) {
	for _, d := range []host.Delivery{host.ExactlyOnce, host.AtLeastOnce} {
		t.Run(string(d), func(t *testing.T) {
			b := startBroker(t, "in", "out", "dlq")
			p := pipeline(t, "rebalance", "go/upper.wasm", d, "")
			const total = 12000
			n1 := startNode(t, b, p, "n1")
			startNode(t, b, p, "n2")
			produceN(t, b, "in", 0, 4000)
			time.Sleep(500 * time.Millisecond)
			startNode(t, b, p, "n3")
			produceN(t, b, "in", 4000, 8000)
			time.Sleep(300 * time.Millisecond)
			n1.stop(t)
			produceN(t, b, "in", 8000, total)
			out := consumeAll(t, b, "out", total, 3*time.Second)
			checkOutput(t, out, total, d == host.ExactlyOnce)
		})
	}
}

// TestBrokerGoesAwayAndComesBack cuts every connection to the broker for a
// few seconds mid-stream: the node retries, resumes and loses nothing (and,
// under exactly_once, duplicates nothing).
func TestBrokerGoesAwayAndComesBack(t *testing.T) {
	b := startBroker(t, "in", "out", "dlq")
	gate := b.Embedded(t, "cuts the network between the node and the broker")
	p := pipeline(t, "outage", "go/upper.wasm", host.ExactlyOnce, "")
	n := startNode(t, b, p, "a")
	// Records keep arriving before, during and after the outage (the
	// producer, too, retries while the broker is away).
	produced := make(chan struct{})
	go func() {
		defer close(produced)
		for from := 0; from < 6000; from += 500 {
			produceN(t, b, "in", from, from+500)
			time.Sleep(300 * time.Millisecond)
		}
	}()
	time.Sleep(time.Second)
	gate.SetReachable(false)
	time.Sleep(3 * time.Second)
	gate.SetReachable(true)
	<-produced
	out := consumeAll(t, b, "out", 6000, 3*time.Second)
	checkOutput(t, out, 6000, true)
	n.stop(t)
}

func TestNodeAtMostOnce(t *testing.T) {
	b := startBroker(t, "in", "out", "dlq")
	p := pipeline(t, "amo", "go/upper.wasm", host.AtMostOnce, "")
	produceN(t, b, "in", 0, 1000)
	n := startNode(t, b, p, "a")
	out := consumeAll(t, b, "out", 1000, 2*time.Second)
	checkOutput(t, out, 1000, true)
	n.stop(t)
}

// TestOverloadDrop gives each partition a queue of one small batch: batches
// that find it full are dropped and counted, and every input record is
// either output or counted as dropped.
func TestOverloadDrop(t *testing.T) {
	b := startBroker(t, "in", "out", "dlq")
	p := pipeline(t, "drop", "go/upper.wasm", host.AtLeastOnce, "limits:\n  queue_size: 1\n  overload: drop\n")
	p.BatchSize = 20
	const total = 20000
	produceN(t, b, "in", 0, total)
	n := startNode(t, b, p, "a")
	deadline := time.Now().Add(60 * time.Second)
	for {
		st := n.node.Stats()
		if st.Out+st.Dropped >= total || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	n.stop(t)
	st := n.node.Stats()
	out := consumeAll(t, b, "out", int(st.Out), time.Second)
	if st.Dropped == 0 {
		t.Fatalf("nothing was dropped: %+v", st)
	}
	if int64(len(out)) != st.Out || st.Out+st.Dropped != total {
		t.Fatalf("%d output records, stats %+v: out + dropped should be %d", len(out), st, total)
	}
}

// TestOutputPartitionedLikeKafka checks that every output record sits in the
// partition Kafka's default partitioner gives its key.
func TestOutputPartitionedLikeKafka(t *testing.T) {
	b := startBroker(t, "in", "out", "dlq")
	p := pipeline(t, "parts", "go/upper.wasm", host.AtLeastOnce, "")
	produceN(t, b, "in", 0, 500)
	startNode(t, b, p, "a")
	seen := 0
	for deadline := time.Now().Add(30 * time.Second); seen < 500 && time.Now().Before(deadline); {
		seen = 0
		_, err := host.Consume(context.Background(), []string{b.Addr()}, "out", host.ConsumeOptions{Idle: time.Second}, func(r abi.Record, m host.Meta) error {
			seen++
			if want := host.KeyPartition(r.Key, 4); m.Partition != want {
				return fmt.Errorf("key %q in partition %d, Kafka's partitioner says %d", r.Key, m.Partition, want)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if seen < 500 {
		t.Fatalf("only %d outputs", seen)
	}
}
