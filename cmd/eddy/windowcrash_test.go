package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/host"
	"github.com/eddy-streams/eddy/internal/await"
	"github.com/eddy-streams/eddy/internal/testkafka"
)

// TestCrashWindowedExactlyOnce runs a windowed count/sum pipeline under
// exactly_once and kills its node with SIGKILL several times, restarting it
// each time — once on a fresh node with an empty data directory. The final
// window results must equal a reference computed from the input, each
// window exactly once.
func TestCrashWindowedExactlyOnce(t *testing.T) {
	forMemberships(t, func(t *testing.T, bin string, m membership) { crashWindowed(t, bin, host.ExactlyOnce, m) },
		staticMember, dynamicMember)
}

// TestCrashWindowedAtLeastOnce is the same under at_least_once: every window
// must have a result, and none may have lost a record — a result counts and
// sums at least the reference (records processed again after a crash may
// count twice in the state they changed).
func TestCrashWindowedAtLeastOnce(t *testing.T) {
	forMemberships(t, func(t *testing.T, bin string, m membership) { crashWindowed(t, bin, host.AtLeastOnce, m) },
		staticMember)
}

func crashWindowed(t *testing.T, bin string, delivery host.Delivery, m membership) {
	brokers := brokerProc(t, bin, "in", "out", "dlq", "late")

	const base = int64(1700000000000)
	rng := rand.New(rand.NewPCG(5, 6))
	want := map[windowKey][2]int{}
	var recs []abi.Record
	const total = 300000
	for i := 0; i < total; i++ {
		key := fmt.Sprintf("k%d", i%16)
		ts := base + int64(i)*5 + rng.Int64N(200) // 1500 s of event time, disorder < 200 ms
		v := rng.IntN(1000)
		recs = append(recs, abi.Record{Key: []byte(key), Value: []byte(fmt.Sprint(v)), Timestamp: ts})
		w := windowKey{key, ts / 1000 * 1000}
		c := want[w]
		want[w] = [2]int{c[0] + 1, c[1] + v}
	}
	for k := 0; k < 16; k++ { // close every window
		recs = append(recs, abi.Record{Key: []byte(fmt.Sprintf("k%d", k)), Value: []byte("0"), Timestamp: base + 10_000_000})
	}
	produce(t, brokers, "in", recs) // hostile_test.go
	pipe := windowedPipeline(t, "wcrash", delivery, "")
	cache, data := t.TempDir(), t.TempDir()
	start := func(dataDir string) *exec.Cmd { return nodeProc(t, bin, cache, pipe, brokers[0], dataDir, m) }
	count := func() int { return committed(brokers, "out") }
	adm, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		t.Fatal(err)
	}
	defer adm.Close()
	rng2 := rand.New(rand.NewPCG(7, 8))
	for kill := 0; kill < m.kills; kill++ {
		dir := data
		if kill == 2 || kill == 7 {
			dir = t.TempDir() // a fresh node: everything comes from the changelog
		}
		old := memberIDs(brokers, "wcrash")
		node := start(dir)
		if m.settle() {
			awaitJoined(t, brokers, "wcrash", old)
		}
		killMidJob(node, adm, "out", time.Duration(100+rng2.IntN(900))*time.Millisecond)
		t.Logf("SIGKILL %d: %d committed window results so far", kill+1, count())
	}
	old := memberIDs(brokers, "wcrash")
	node := start(data)
	// Done when the group has committed the end of the input: every
	// record is processed (and, under at_least_once, checkpointed).
	behind := func() int64 { return groupBehind(adm, "wcrash", "in") }
	await.Until(t, 100*time.Millisecond, func() bool { return behind() == 0 },
		func() string { return fmt.Sprintf("the group is %d records behind the input's end", behind()) })
	awaitJoined(t, brokers, "wcrash", old)
	stopCleanly(t, node, "the last node")
	// A node told to stop while it is still starting exits cleanly too.
	node = start(data)
	awaitClaimed(t, data, node.Process.Pid)
	stopCleanly(t, node, "a node stopped while starting")
	testkafka.AwaitSettled(t, brokers, "out")
	checkWindows(t, brokers, want, delivery)
}

// windowKey is a window of the windowed crash tests: its key and start.
type windowKey struct {
	key   string
	start int64
}

// windowedPipeline writes the windowed crash tests' pipeline, a count and
// sum of each key's values in tumbling windows of a second, named name,
// under delivery, with extra (pipeline lines, each ending in a newline)
// appended; it returns the file's path.
func windowedPipeline(t *testing.T, name string, delivery host.Delivery, extra string) string {
	t.Helper()
	stats, _ := filepath.Abs(td("go/stats.wasm"))
	pipe := filepath.Join(t.TempDir(), "p.yaml")
	os.WriteFile(pipe, []byte(fmt.Sprintf(`name: %s
source: {topics: [in]}
steps:
  - name: stats
    kind: aggregate
    function: %s
    window: {type: tumbling, size: 1s, disorder: 250ms}
sink: {topic: out}
dead_letter: {topic: dlq}
late: {topic: late}
delivery: %s
commit_interval: 100ms
batch_size: 100
%s`, name, stats, delivery, extra)), 0o644)
	return pipe
}

// checkWindows reads the committed window results of topic out and
// compares them with want, the reference: under exactly_once every window
// must equal it and be emitted once; under at_least_once each result must
// count and sum at least the reference.
func checkWindows(t *testing.T, brokers []string, want map[windowKey][2]int, delivery host.Delivery) {
	t.Helper()
	got := map[windowKey][][2]int{} // every result of each window, in order
	host.Consume(context.Background(), brokers, "out", host.ConsumeOptions{Idle: time.Second}, func(r abi.Record, _ host.Meta) error {
		var start int64
		for _, h := range r.Headers {
			if h.Key == "eddy.window.start" {
				fmt.Sscan(string(h.Value), &start)
			}
		}
		var res struct{ Count, Sum int }
		json.Unmarshal(r.Value, &res)
		w := windowKey{string(r.Key), start}
		got[w] = append(got[w], [2]int{res.Count, res.Sum})
		return nil
	})
	wrong, dups, exact, above := 0, 0, 0, 0
	for w, c := range want {
		rs := got[w]
		if len(rs) > 1 {
			dups++
		}
		for _, r := range rs {
			bad := r != c
			if delivery == host.AtLeastOnce {
				bad = r[0] < c[0] || r[1] < c[1]
			}
			switch {
			case r == c:
				exact++
			case r[0] >= c[0] && r[1] >= c[1]:
				above++ // counted some records twice
			}
			if bad {
				wrong++
				if wrong <= 3 {
					t.Errorf("window %v: got %v, want %v", w, r, c)
				}
			}
		}
		if len(rs) == 0 {
			wrong++
			if wrong <= 3 {
				t.Errorf("window %v: no result, want %v", w, c)
			}
		}
	}
	t.Logf("%d windows; %d emitted more than once; %d results equal the reference, %d above it", len(want), dups, exact, above)
	if wrong > 0 || len(got) != len(want) || (delivery == host.ExactlyOnce && dups > 0) {
		t.Fatalf("%d results wrong or missing, %d windows emitted more than once, results for %d windows of %d", wrong, dups, len(got), len(want))
	}
}

// groupBehind is how many records of topic the group has not committed
// (-1 when it cannot tell).
func groupBehind(cl *kgo.Client, group, topic string) int64 {
	ends, err := kadm.NewClient(cl).ListEndOffsets(context.Background(), topic)
	if err != nil {
		return -1
	}
	offs, err := kadm.NewClient(cl).FetchOffsets(context.Background(), group)
	if err != nil {
		return -1
	}
	var n int64
	ends.Each(func(e kadm.ListedOffset) {
		o, _ := offs.Lookup(topic, e.Partition)
		n += e.Offset - max(o.At, 0)
	})
	return n
}

// steadyInput produces the windowed tests' records to "in" while a test
// runs: perTick records every 100 ms, 16 keys, 5 ms of event time apart
// from base with disorder under 200 ms; the reference windows are kept as
// they are produced.
type steadyInput struct {
	stop     chan struct{}
	done     chan error
	stopOnce sync.Once
	err      error
	mu       sync.Mutex
	want     map[windowKey][2]int // count and sum per window
	n        int                  // records produced
}

// startSteadyInput starts producing; the test's cleanup stops it.
func startSteadyInput(t *testing.T, brokers []string, base int64, perTick int, seed uint64) *steadyInput {
	in := &steadyInput{stop: make(chan struct{}), done: make(chan error, 1), want: map[windowKey][2]int{}}
	go func() {
		rng := rand.New(rand.NewPCG(seed, seed+1))
		i := 0
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		_, err := host.Produce(context.Background(), brokers, "in", func() (abi.Record, error) {
			if i%perTick == 0 && i > 0 {
				select {
				case <-in.stop:
					return abi.Record{}, io.EOF
				case <-tick.C:
				}
			}
			key := fmt.Sprintf("k%d", i%16)
			ts := base + int64(i)*5 + rng.Int64N(200)
			v := rng.IntN(1000)
			in.mu.Lock()
			w := windowKey{key, ts / 1000 * 1000}
			c := in.want[w]
			in.want[w] = [2]int{c[0] + 1, c[1] + v}
			in.n++
			in.mu.Unlock()
			i++
			return abi.Record{Key: []byte(key), Value: []byte(strconv.Itoa(v)), Timestamp: ts}, nil
		}, nil)
		in.done <- err
	}()
	t.Cleanup(func() { in.end() })
	return in
}

// end stops the input and returns the producer's error; it may be called
// more than once.
func (in *steadyInput) end() error {
	in.stopOnce.Do(func() {
		close(in.stop)
		in.err = <-in.done
	})
	return in.err
}

// reference returns the windows produced so far and the record count.
func (in *steadyInput) reference() (map[windowKey][2]int, int) {
	in.mu.Lock()
	defer in.mu.Unlock()
	return maps.Clone(in.want), in.n
}
