package host_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/host"
	"github.com/eddy-streams/eddy/internal/await"
	"github.com/eddy-streams/eddy/runtime"
)

// windowResults reads a windowed pipeline's read_committed output as one
// line per result: key, window start and value, sorted. Results emitted
// twice appear twice.
func windowResults(t *testing.T, out []abi.Record) []string {
	t.Helper()
	var lines []string
	for _, r := range out {
		lines = append(lines, fmt.Sprintf("%s@%s=%s", r.Key, header(r, "eddy.window.start"), r.Value))
	}
	sort.Strings(lines)
	return lines
}

func admClient(t *testing.T, brokers []string) *kadm.Client {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return kadm.NewClient(cl)
}

// TestResetReproducesOutput runs a windowed aggregate behind a key_by (a
// repartition topic and a changelog) under exactly_once over fixed input,
// resets it to the earliest offsets with its output truncated, and runs it
// again: first on the same data directory (which holds the state of the
// first run: the node must wipe it), then, after a second reset, on a new
// node with an empty directory. Each rerun's read_committed output must
// equal the first run's, record for record.
func TestResetReproducesOutput(t *testing.T) {
	b := startBroker(t, "in", "out", "dlq", "late")
	brokers := []string{b.Addr()}
	prices, _ := filepath.Abs("../testdata/go/pricestats.wasm")
	p := loadPipeline(t, fmt.Sprintf(`name: det
source: {topics: [in]}
steps:
  - {name: by-bidder, kind: key_by, field: bidder}
  - name: prices
    kind: aggregate
    function: %s
    window: {type: tumbling, size: 1s, disorder: 300ms}
sink: {topic: out}
dead_letter: {topic: dlq}
late: {topic: late}
delivery: exactly_once
commit_interval: 50ms
batch_size: 100
`, prices))
	const base = int64(1700000000000)
	rng := rand.New(rand.NewPCG(9, 10))
	var recs []abi.Record
	windows := map[string]bool{}
	for i := 0; i < 3000; i++ {
		bidder := fmt.Sprintf("b%d", i%5)
		ts := base + int64(i)*5 + rng.Int64N(250)
		recs = append(recs, abi.Record{Key: []byte("r" + strconv.Itoa(i)), Timestamp: ts,
			Value: []byte(fmt.Sprintf(`{"bidder":%q,"price":%d}`, bidder, rng.IntN(1000)))})
		windows[fmt.Sprint(bidder, ts/1000)] = true
	}
	for j := 0; j < 40; j++ { // far ahead on every partition: closes every window above
		recs = append(recs, abi.Record{Key: []byte("close" + strconv.Itoa(j)), Timestamp: base + 3_600_000,
			Value: []byte(`{"bidder":"b0","price":1}`)})
	}
	produceAll(t, brokers, "in", recs)
	want := len(windows)

	dirA := t.TempDir()
	a := startStatefulNode(t, brokers, p, "a", dirA)
	first := windowResults(t, consumeAll(t, b, "out", want, 2*time.Second))
	a.stop(t)
	if len(first) != want {
		t.Fatalf("first run: %d results, want %d", len(first), want)
	}

	reset := func() *host.ResetPlan {
		t.Helper()
		plan, err := host.Reset(context.Background(), p, host.ResetOptions{Brokers: brokers, TruncateOutput: true, Logger: testLogger(t), RegistryKey: testRegistryKey})
		if err != nil {
			t.Fatal(err)
		}
		return plan
	}
	compare := func(what string, got []string) {
		t.Helper()
		if strings.Join(got, "\n") == strings.Join(first, "\n") {
			return
		}
		i := 0
		for i < min(len(got), len(first)) && got[i] == first[i] {
			i++
		}
		g, f := "<end>", "<end>"
		if i < len(got) {
			g = got[i]
		}
		if i < len(first) {
			f = first[i]
		}
		t.Fatalf("%s: %d results, the first run %d; first difference at %d: %s, the first run %s", what, len(got), len(first), i, g, f)
	}

	plan := reset()
	var sb strings.Builder
	plan.WriteTo(&sb)
	t.Logf("plan:\n%s", sb.String())
	if len(plan.Recreate) != 1 || plan.Recreate[0].Topic != host.ChangelogTopic("det", "prices") {
		t.Fatalf("recreated %+v", plan.Recreate)
	}
	for _, o := range plan.Offsets {
		if o.Topic == "in" && o.To != 0 {
			t.Fatalf("source offset %+v, want 0", o)
		}
	}
	if len(plan.Truncate) == 0 || plan.Version != 1 {
		t.Fatalf("truncated %+v, version %d", plan.Truncate, plan.Version)
	}
	a = startStatefulNode(t, brokers, p, "a", dirA) // the first run's state: wiped at start
	compare("rerun on the same data directory", windowResults(t, consumeAll(t, b, "out", want, 2*time.Second)))
	a.stop(t)

	if plan := reset(); plan.Version != 3 {
		t.Fatalf("second reset: version %d, want 3 (after reset 1 and its reset_done 2)", plan.Version)
	}
	c := startStatefulNode(t, brokers, p, "c", t.TempDir())
	compare("rerun on a new node with an empty data directory", windowResults(t, consumeAll(t, b, "out", want, 2*time.Second)))
	c.stop(t)
	if late := consumeAll(t, b, "late", 0, 300*time.Millisecond); len(late) != 0 {
		t.Fatalf("%d late records, want none", len(late))
	}
}

// TestResetRefusesWhileRunning: a reset refuses while a node of the
// pipeline is in its group, and changes nothing; with Force the node is
// told to stop (its Run returns ErrReset), its static membership is removed
// from the group, and the offsets go back: the node, started again,
// processes the input a second time.
func TestResetRefusesWhileRunning(t *testing.T) {
	b := startBroker(t, "in", "out", "dlq")
	brokers := []string{b.Addr()}
	p := pipeline(t, "busy", "go/upper.wasm", host.ExactlyOnce, "")
	produceN(t, b, "in", 0, 200)
	eng, err := runtime.NewEngine(runtime.WithCacheDir(cacheDir))
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close(context.Background())
	start := func() *runningNode {
		// A session far longer than the reset may wait: only removing the
		// static member lets the reset through.
		n, err := host.NewNode(context.Background(), p, host.NodeConfig{Brokers: brokers, NodeID: "s1", Static: true, Engine: eng,
			SessionTimeout: 5 * time.Minute, Logger: testLogger(t), RegistryKey: testRegistryKey})
		if err != nil {
			t.Fatal(err)
		}
		r := &runningNode{node: n, done: make(chan error, 1)}
		r.start(t)
		return r
	}
	n := start()
	consumeAll(t, b, "out", 200, time.Second)
	adm := admClient(t, brokers)
	committed := func() int64 {
		offs, err := adm.FetchOffsets(context.Background(), "busy")
		if err != nil {
			t.Fatal(err)
		}
		var sum int64
		offs.Each(func(o kadm.OffsetResponse) { sum += o.At })
		return sum
	}
	await.Until(t, 50*time.Millisecond, func() bool { return committed() == 200 },
		func() string { return fmt.Sprintf("committed offsets sum to %d, want 200", committed()) })

	_, err = host.Reset(context.Background(), p, host.ResetOptions{Brokers: brokers, RegistryKey: testRegistryKey})
	var re *host.RunningError
	if !errors.Is(err, host.ErrRunning) || !errors.As(err, &re) || len(re.Members) != 1 || re.Members[0].InstanceID != "s1" {
		t.Fatalf("reset of a running pipeline: %v", err)
	}
	if !strings.Contains(err.Error(), "eddy-s1") {
		t.Fatalf("the error does not name the node: %v", err)
	}
	if got := committed(); got != 200 {
		t.Fatalf("a refused reset moved the offsets: %d", got)
	}
	select {
	case err := <-n.done:
		t.Fatalf("a refused reset stopped the node: %v", err)
	case <-time.After(300 * time.Millisecond):
	}

	plan, err := host.Reset(context.Background(), p, host.ResetOptions{Brokers: brokers, Force: true, Wait: 30 * time.Second, RegistryKey: testRegistryKey,
		Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err) // with the static member left in the group, the wait runs out
	}
	if err := <-n.done; !errors.Is(err, host.ErrReset) {
		t.Fatalf("the running node stopped with %v, want ErrReset", err)
	}
	n.cancel()
	n.cancel = nil
	if len(plan.Members) != 1 {
		t.Fatalf("forced reset: members %v", plan.Members)
	}
	var sb strings.Builder
	plan.WriteTo(&sb)
	if !strings.Contains(sb.String(), "group busy: member eddy-s1 (") || !strings.Contains(sb.String(), "static instance s1): told to stop") {
		t.Fatalf("plan:\n%s", sb.String())
	}
	if got := committed(); got != 0 {
		t.Fatalf("after the reset the offsets sum to %d, want 0", got)
	}
	n = start()
	out := consumeAll(t, b, "out", 400, time.Second)
	n.stop(t)
	seen := map[string]int{}
	for _, r := range out {
		seen[string(r.Value)]++
	}
	for i := 0; i < 200; i++ {
		if c := seen[fmt.Sprintf("V%06d", i)]; c != 2 {
			t.Fatalf("V%06d output %d times, want twice (once per run)", i, c)
		}
	}
}

// TestResetTruncatesTaps plans a reset (dry run) of a pipeline whose steps
// write to topics of their own (to:, a named output): with
// --truncate-output they are truncated with the sink, without it they are
// listed as kept.
func TestResetTruncatesTaps(t *testing.T) {
	b := startBroker(t, "in", "out", "copies", "evens", "dlq")
	brokers := []string{b.Addr()}
	produceAll(t, brokers, "copies", []abi.Record{{Value: []byte("1")}})
	produceAll(t, brokers, "evens", []abi.Record{{Value: []byte("2")}})
	p := loadPipeline(t, `name: taps-reset
source: {topics: [in]}
steps:
  - {name: copy, kind: map, function: copy.wasm, to: copies}
  - {name: route, kind: map, function: route.wasm, outputs: [{name: evens, to: evens}]}
sink: {topic: out}
dead_letter: {topic: dlq}
`)
	for _, truncate := range []bool{true, false} {
		plan, err := host.Reset(context.Background(), p, host.ResetOptions{Brokers: brokers, TruncateOutput: truncate, DryRun: true,
			Logger: testLogger(t), RegistryKey: testRegistryKey})
		if err != nil {
			t.Fatal(err)
		}
		var sb strings.Builder
		plan.WriteTo(&sb)
		truncated := map[string]bool{}
		for _, tr := range plan.Truncate {
			truncated[tr.Topic] = true
		}
		for _, topic := range []string{"copies", "evens"} {
			kept := slices.ContainsFunc(plan.Kept, func(k string) bool { return strings.HasPrefix(k, topic+": output of a step") })
			if truncated[topic] != truncate || kept == truncate {
				t.Errorf("truncate-output %v: %s truncated %v, kept %v; plan:\n%s", truncate, topic, truncated[topic], kept, sb.String())
			}
		}
	}
}
