package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"math/rand/v2"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/host"
	"github.com/eddy-streams/eddy/internal/await"
	"github.com/eddy-streams/eddy/internal/testkafka"
	eddypipeline "github.com/eddy-streams/eddy/pipeline"
	"github.com/eddy-streams/eddy/registry"
	"github.com/eddy-streams/eddy/runtime"
)

// quietAlert is an output of the timeout guest: a key went quiet one
// second after its last activity.
type quietAlert struct {
	key        string
	last, fire int64
}

// quietReference runs the timeout guest's contract record by record over
// recs, one task with the watermark at the largest time seen: before each
// record, the timers at or before the watermark fire in (time, key) order;
// at the end every timer fires.
func quietReference(recs []abi.Record) []quietAlert { return quietReferenceUpTo(recs, true) }

// quietReferenceUpTo is quietReference; without end, the timers past the
// watermark at the end do not fire (a node's input does not end).
func quietReferenceUpTo(recs []abi.Record, end bool) []quietAlert {
	last := map[string]int64{}
	wm := int64(-1 << 63)
	var out []quietAlert
	fire := func(upTo int64) {
		var due []string
		for k, t := range last {
			if t+1000 <= upTo {
				due = append(due, k)
			}
		}
		slices.SortFunc(due, func(a, b string) int {
			if c := last[a] - last[b]; c != 0 {
				return int(c)
			}
			return compareStrings(a, b)
		})
		for _, k := range due {
			out = append(out, quietAlert{k, last[k], last[k] + 1000})
			delete(last, k)
		}
	}
	for _, r := range recs {
		fire(wm)
		last[string(r.Key)] = r.Timestamp
		wm = max(wm, r.Timestamp)
	}
	if end {
		wm = 1 << 62
	}
	fire(wm)
	return out
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// quietInput is activity of 12 keys over about three minutes: bursts of records
// a few ms to 3 s apart, so that keys go quiet, and come back, throughout.
func quietInput(seed uint64, n int) []abi.Record {
	rng := rand.New(rand.NewPCG(seed, 7))
	const base = int64(1_700_000_000_000)
	ts := base
	var recs []abi.Record
	for i := range n {
		ts += rng.Int64N(120)
		key := fmt.Sprintf("k%02d", rng.IntN(12))
		if rng.IntN(10) == 0 {
			key = fmt.Sprintf("k%02d", rng.IntN(3)) // three busy keys
		}
		recs = append(recs, abi.Record{Key: []byte(key), Value: []byte(strconv.Itoa(i)), Timestamp: ts})
	}
	return recs
}

// TestTimersInProcess runs the timeout guest (event-time timers moved at
// every record, firing alerts) in process with batches of 1 to 700
// records: the alerts must equal the record-by-record reference whatever
// the batch size — the executor runs a batch in segments so that a timer
// due before a record fires before the function sees it.
//
// The same runs with nativeTimeout, the guest's logic as a native function
// (runtime.Native.OnTimer), which the host runs one record per call.
func TestTimersInProcess(t *testing.T) {
	wasm, _ := filepath.Abs("../testdata/go/timeout.wasm")
	for _, c := range []struct {
		fn    string
		seed  uint64
		batch int
	}{{wasm, 1, 1}, {wasm, 1, 7}, {wasm, 1, 64}, {wasm, 1, 700}, {wasm, 2, 200}, {wasm, 3, 50}, {wasm, 4, 500},
		{"native:timeout", 1, 1}, {"native:timeout", 2, 200}, {"native:timeout", 4, 500}} {
		fn, seed, batch := c.fn, c.seed, c.batch
		recs := quietInput(seed, 3000)
		want := quietReference(recs)
		if len(want) < 100 {
			t.Fatalf("the input makes %d alerts: too few to test", len(want))
		}
		t.Run(fmt.Sprintf("%s/seed=%d/batch=%d", filepath.Base(fn), seed, batch), func(t *testing.T) {
			p := loadPipeline(t, fmt.Sprintf(`name: quiet
source: {topics: [in]}
steps:
  - {name: quiet, kind: filter, function: %s, state: true}
sink: {topic: out}
delivery: exactly_once
batch_size: %d
`, fn, batch))
			ctx := context.Background()
			ip := startInProcessWith(t, p, 1, map[string]func() runtime.Native{"timeout": nativeTimeout})
			var got []quietAlert
			ip.Out = func(topic string, r abi.Record, _ time.Time) {
				if topic != "out" {
					t.Errorf("a record for %s: %s", topic, r.Value)
					return
				}
				last, err := strconv.ParseInt(string(r.Value), 10, 64)
				if err != nil {
					t.Errorf("alert %q: %v", r.Value, err)
				}
				got = append(got, quietAlert{string(r.Key), last, r.Timestamp})
			}
			for i := 0; i < len(recs); i += 500 {
				if err := ip.Send(ctx, "in", recs[i:min(i+500, len(recs))]); err != nil {
					t.Fatal(err)
				}
				if err := ip.Commit(); err != nil {
					t.Fatal(err)
				}
			}
			if err := ip.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) {
				n := 0
				for i := range max(len(got), len(want)) {
					var g, w quietAlert
					if i < len(got) {
						g = got[i]
					}
					if i < len(want) {
						w = want[i]
					}
					if g != w && n < 5 {
						n++
						t.Errorf("alert %d: got %+v, want %+v", i, g, w)
					}
				}
				t.Fatalf("%d alerts, want %d", len(got), len(want))
			}
			if st := ip.Stats(); st.DeadLettered != 0 {
				t.Errorf("%d records dead-lettered", st.DeadLettered)
			}
		})
	}
}

// nativeTimeout is guests/go/timeout as a native function: each record
// moves its key's event-time timer to a second after it; a firing that
// matches the key's last activity emits an alert.
func nativeTimeout() runtime.Native {
	const gap = 1000
	last := func(st runtime.State, key []byte) (int64, bool, error) {
		v, ok, err := st.Get(key)
		if err != nil || !ok {
			return 0, false, err
		}
		at, err := strconv.ParseInt(string(v), 10, 64)
		return at, true, err
	}
	return runtime.Native{
		ProcessState: func(st runtime.State, r *abi.Record, _ func(abi.Record)) error {
			ts, ok := st.(runtime.TimerState)
			if !ok {
				return errors.New("no timers")
			}
			prev, had, err := last(st, r.Key)
			if err != nil {
				return err
			}
			if had {
				if err := ts.DeleteTimer(r.Key, abi.EventTime, prev+gap); err != nil {
					return err
				}
			}
			if err := st.Put(r.Key, strconv.AppendInt(nil, r.Timestamp, 10)); err != nil {
				return err
			}
			return ts.SetTimer(r.Key, abi.EventTime, r.Timestamp+gap)
		},
		OnTimer: func(st runtime.State, tm abi.Timer, emit func(abi.Record)) error {
			at, ok, err := last(st, tm.Key)
			if err != nil || !ok || at+gap != tm.Time || tm.Domain != abi.EventTime {
				return err
			}
			if err := st.Delete(tm.Key); err != nil {
				return err
			}
			emit(abi.Record{Key: tm.Key, Value: strconv.AppendInt(nil, at, 10), Timestamp: tm.Time})
			return nil
		},
	}
}

// TestTimerLimits sets more timers than limits.timers_per_task allows: the
// records that would set them go to the dead-letter topic with the cause
// timer_limit and a reason naming the limit, the others are processed, and
// a timer fires once a key's is free again.
func TestTimerLimits(t *testing.T) {
	fn, _ := filepath.Abs("../testdata/go/timeout.wasm")
	p := loadPipeline(t, fmt.Sprintf(`name: limited
source: {topics: [in]}
steps:
  - {name: quiet, kind: filter, function: %s, state: true}
sink: {topic: out}
delivery: exactly_once
limits: {timers_per_key: 1, timers_per_task: 5}
`, fn))
	ctx := context.Background()
	ip := startInProcess(t, p, 1)
	var alerts []string
	var dead []abi.Record
	ip.Out = func(topic string, r abi.Record, _ time.Time) {
		switch topic {
		case "out":
			alerts = append(alerts, string(r.Key))
		case p.DeadLetter.Topic:
			dead = append(dead, r)
		}
	}
	const base = int64(1_700_000_000_000)
	var recs []abi.Record
	for i := range 8 {
		recs = append(recs, abi.Record{Key: []byte(fmt.Sprintf("k%d", i)), Timestamp: base + int64(i)})
	}
	if err := ip.Send(ctx, "in", recs); err != nil {
		t.Fatal(err)
	}
	if len(dead) != 3 {
		t.Fatalf("%d dead letters, want 3 (keys 5 to 7)", len(dead))
	}
	for i, r := range dead {
		code, reason := header(r, "eddy.error.code"), header(r, "eddy.error")
		if string(r.Key) != fmt.Sprintf("k%d", i+5) || code != "timer_limit" || !strings.Contains(reason, "limit per task is 5") {
			t.Errorf("dead letter %d: key %s, code %q, reason %q", i, r.Key, code, reason)
		}
	}
	if err := ip.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if want := []string{"k0", "k1", "k2", "k3", "k4"}; !slices.Equal(alerts, want) {
		t.Fatalf("alerts %v, want %v", alerts, want)
	}
}

// TestTimersOnNode runs the timeout guest on a node (exactly_once, four
// partitions), stops it halfway and goes on with a node that has an empty
// data directory, which restores the timers from their changelog. The
// alerts must be those of the record-by-record reference of each
// partition, up to its watermark (a node fires no timer past it), each
// once.
func TestTimersOnNode(t *testing.T) {
	b := startBroker(t, "in", "out")
	fn, _ := filepath.Abs("../testdata/go/timeout.wasm")
	p := loadPipeline(t, fmt.Sprintf(`name: quiet-node
source: {topics: [in]}
steps:
  - {name: quiet, kind: filter, function: %s, state: true}
sink: {topic: out}
delivery: exactly_once
commit_interval: 50ms
batch_size: 50
`, fn))
	recs := quietInput(3, 2000)
	produceAll(t, b.Brokers(), "in", recs[:1000])
	n1 := startStatefulNode(t, b.Brokers(), p, "n1", t.TempDir())
	await.Until(t, 50*time.Millisecond, func() bool { return n1.node.Stats().In >= 1000 },
		func() string { return fmt.Sprintf("node 1 processed %d of 1000 records", n1.node.Stats().In) })
	n1.stop(t)
	produceAll(t, b.Brokers(), "in", recs[1000:])
	n2 := startStatefulNode(t, b.Brokers(), p, "n2", t.TempDir())
	defer n2.stop(t)
	await.Until(t, 50*time.Millisecond, func() bool { return n2.node.Stats().In >= 1000 },
		func() string { return fmt.Sprintf("node 2 processed %d of 1000 records", n2.node.Stats().In) })

	// The reference, partition by partition, in the order the node read.
	byPart := map[int32][]abi.Record{}
	_, err := host.Consume(context.Background(), b.Brokers(), "in", host.ConsumeOptions{Idle: time.Second}, func(r abi.Record, m host.Meta) error {
		byPart[m.Partition] = append(byPart[m.Partition], abi.Record{Key: slices.Clone(r.Key), Timestamp: r.Timestamp})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var want []quietAlert
	for _, rs := range byPart {
		want = append(want, quietReferenceUpTo(rs, false)...)
	}
	got := map[quietAlert]int{}
	out := consumeAll(t, b, "out", len(want), 3*time.Second)
	for _, r := range out {
		last, _ := strconv.ParseInt(string(r.Value), 10, 64)
		got[quietAlert{string(r.Key), last, r.Timestamp}]++
	}
	missing, dup := 0, 0
	for _, w := range want {
		switch got[w] {
		case 0:
			missing++
			if missing <= 3 {
				t.Errorf("missing alert %+v", w)
			}
		case 1:
		default:
			dup++
		}
		delete(got, w)
	}
	if missing > 0 || dup > 0 || len(got) > 0 {
		t.Fatalf("%d alerts for %d expected: %d missing, %d duplicated, %d unexpected (%v)", len(out), len(want), missing, dup, len(got), got)
	}
}

// TestProcessingTimersOnNode runs the remind guest: processing-time timers
// that fire when the node has no more input (the poll loop's tick), each
// once, in exactly_once transactions of their own.
func TestProcessingTimersOnNode(t *testing.T) {
	b := startBroker(t, "in", "out")
	fn, _ := filepath.Abs("../testdata/go/remind.wasm")
	p := loadPipeline(t, fmt.Sprintf(`name: remind
source: {topics: [in]}
steps:
  - {name: remind, kind: filter, function: %s, state: true}
sink: {topic: out}
delivery: exactly_once
commit_interval: 50ms
`, fn))
	var recs []abi.Record
	for i := range 40 {
		recs = append(recs, abi.Record{Key: []byte(fmt.Sprintf("r%02d", i)), Value: []byte(strconv.Itoa(200 + 20*i))})
	}
	produceAll(t, b.Brokers(), "in", recs)
	n := startStatefulNode(t, b.Brokers(), p, "n1", t.TempDir())
	defer n.stop(t)
	out := consumeAll(t, b, "out", len(recs), 3*time.Second)
	seen := map[string]int{}
	for _, r := range out {
		if string(r.Value) != "reminder" {
			t.Errorf("output %s=%s", r.Key, r.Value)
		}
		seen[string(r.Key)]++
	}
	for _, r := range recs {
		if c := seen[string(r.Key)]; c != 1 {
			t.Errorf("key %s: %d reminders, want 1", r.Key, c)
		}
	}
	rec := httptest.NewRecorder()
	n.node.Metrics().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	line := regexp.MustCompile(`(?m)^eddy_step_timers_fired_total\{[^}]*step="remind"[^}]*\} (\d+)$`).FindStringSubmatch(rec.Body.String())
	if line == nil || line[1] != strconv.Itoa(len(recs)) {
		t.Errorf("eddy_step_timers_fired_total{step=remind}: %q, want %d", line, len(recs))
	}
}

// TestTimersAfterKeyBy runs the timeout guest after a key_by: its records
// come through a repartition topic from four upstream tasks, out of time
// order, and its watermark is the least of the upstream inputs' progress
// (their records' eddy.repartition.from header and progress markers), not
// the largest time the repartition partition has seen. A timer at F fires
// only once every upstream has passed F, so every record a key gets after
// an alert is at or after the alert's time: the next alert of the key
// reports a last activity no earlier. (A watermark taken from the
// repartition partition's records alone runs ahead of a slower upstream
// task, whose older records then come after the firing.)
func TestTimersAfterKeyBy(t *testing.T) {
	fn, _ := filepath.Abs("../testdata/go/timeout.wasm")
	pass, _ := filepath.Abs("../testdata/go/passthrough.wasm")
	t.Run("first", func(t *testing.T) { timersAfterKeyBy(t, fn, "") })
	// A stateless step between runs before the repartition (in the key_by's
	// stage): the timed step still begins its stage, with a watermark per
	// upstream input.
	t.Run("after-a-map", func(t *testing.T) {
		timersAfterKeyBy(t, fn, fmt.Sprintf("  - {name: pass, kind: map, function: %s}\n", pass))
	})
}

func timersAfterKeyBy(t *testing.T, fn, between string) {
	b := startBroker(t, "in", "out")
	p := loadPipeline(t, fmt.Sprintf(`name: quiet-keyed
source: {topics: [in]}
steps:
  - {name: by-user, kind: key_by, field: user}
%s  - {name: quiet, kind: filter, function: %s, state: true}
sink: {topic: out}
delivery: exactly_once
commit_interval: 50ms
batch_size: 20
`, between, fn))
	rng := rand.New(rand.NewPCG(21, 22))
	const base = int64(1_700_000_000_000)
	var recs []abi.Record
	ts := base
	for i := range 4000 {
		ts += rng.Int64N(40)
		user := fmt.Sprintf("u%02d", rng.IntN(12))
		recs = append(recs, abi.Record{Key: []byte(strconv.Itoa(i)), Value: []byte(fmt.Sprintf(`{"user":%q}`, user)), Timestamp: ts})
	}
	produceAll(t, b.Brokers(), "in", recs)
	n := startStatefulNode(t, b.Brokers(), p, "n1", t.TempDir())
	defer n.stop(t)
	// Every record has reached the timed step (of the second stage, behind
	// the repartition topic, which on a loaded machine can be far behind
	// the first stage), so its firings so far are committed soon after.
	stepIn := func() int64 {
		return int64(scrapeHandler(t, n.node.Metrics(), "quiet-keyed", "n1").value(t, "eddy_step_records_in_total", "step", "quiet"))
	}
	await.Until(t, 50*time.Millisecond, func() bool { return stepIn() >= int64(len(recs)) },
		func() string { return fmt.Sprintf("the timed step took %d of %d records", stepIn(), len(recs)) })
	out := consumeAll(t, b, "out", 0, 3*time.Second)
	if len(out) < 50 {
		t.Fatalf("%d alerts: too few for the test to mean anything", len(out))
	}
	prev := map[string]int64{} // each key's last alert time
	for _, r := range out {
		user := string(r.Key)
		last, err := strconv.ParseInt(string(r.Value), 10, 64)
		if err != nil || r.Timestamp != last+1000 {
			t.Fatalf("alert %s=%s at %d", r.Key, r.Value, r.Timestamp)
		}
		if f, ok := prev[user]; ok && last < f {
			t.Errorf("%s: an alert at %d, then one whose last activity is %d: a record older than the first alert came after it", user, f, last)
		}
		prev[user] = r.Timestamp
	}
	t.Logf("%d alerts", len(out))
}

// TestStepLimits: a step's limits override the pipeline's for its
// function: an endless loop is stopped at the step's call timeout (50 ms),
// not the pipeline's minute, and each record goes to the dead-letter topic
// with cause timeout and the step's deadline in the reason.
func TestStepLimits(t *testing.T) {
	loop, _ := filepath.Abs("../testdata/wat/loop.wasm")
	p := loadPipeline(t, fmt.Sprintf(`name: limited-step
source: {topics: [in]}
steps:
  - name: spin
    kind: map
    function: %s
    limits: {call_timeout: 50ms, memory_limit: 1MiB}
sink: {topic: out}
limits: {call_timeout: 1m}
`, loop))
	if mem, timeout := p.FunctionLimits(0); mem != 1<<20 || timeout != 50*time.Millisecond {
		t.Fatalf("FunctionLimits: %d, %s", mem, timeout)
	}
	ctx := context.Background()
	ip := startInProcess(t, p, 1)
	var dead []abi.Record
	ip.Out = func(topic string, r abi.Record, _ time.Time) {
		if topic == p.DeadLetter.Topic {
			dead = append(dead, r)
		}
	}
	began := time.Now()
	if err := ip.Send(ctx, "in", []abi.Record{{Value: []byte("a")}, {Value: []byte("b")}, {Value: []byte("c")}}); err != nil {
		t.Fatal(err)
	}
	if len(dead) != 3 {
		t.Fatalf("%d dead letters after %s, want 3", len(dead), time.Since(began))
	}
	for _, r := range dead {
		if code, reason := header(r, "eddy.error.code"), header(r, "eddy.error"); code != "timeout" || !strings.Contains(reason, "50ms") {
			t.Errorf("dead letter %s: code %q, reason %q", r.Value, code, reason)
		}
	}
}

// TestConfigAndSecrets gives the prefix guest its prefix from a secret (an
// environment variable the node reads): the outputs carry it, the output
// version header names the config (a hash of what the file says, not of
// the secret), and the secret is in none of the node's status, metrics or
// log. A secret whose variable is not set stops the node at start with an
// error naming the variable.
func TestConfigAndSecrets(t *testing.T) {
	const secret = "s3cr3t-9f8e7d-"
	fn, _ := filepath.Abs("../testdata/go/prefix.wasm")
	src := fmt.Sprintf(`name: configured
source: {topics: [in]}
steps:
  - name: tag
    kind: map
    function: %s
    config:
      prefix: {env: EDDY_TEST_PREFIX}
      note: plain value
sink: {topic: out}
`, fn)
	p := loadPipeline(t, src)
	b := startBroker(t, "in", "out")
	var logs strings.Builder
	eng := testEngine(t)
	n, err := host.NewNode(context.Background(), p, host.NodeConfig{Brokers: b.Brokers(), NodeID: "c1", Engine: eng, DataDir: t.TempDir(),
		Logger:    slog.New(slog.NewTextHandler(&lockedWriter{w: &logs}, &slog.HandlerOptions{Level: slog.LevelDebug})),
		LookupEnv: func(k string) (string, bool) { return secret, k == "EDDY_TEST_PREFIX" }, UnsignedRegistry: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- n.Run(ctx) }()
	produceAll(t, b.Brokers(), "in", []abi.Record{{Key: []byte("a"), Value: []byte("one")}, {Key: []byte("b"), Value: []byte("two")}})
	out := consumeAll(t, b, "out", 2, 3*time.Second)
	if len(out) != 2 {
		t.Fatalf("%d outputs, want 2", len(out))
	}
	for _, r := range out {
		if !strings.HasPrefix(string(r.Value), secret) {
			t.Errorf("output %s: no prefix from the secret", r.Value)
		}
		if h := header(r, host.FunctionHeader("tag")); !strings.Contains(h, " config:"+p.ConfigDigest(0)) || strings.Contains(h, secret) {
			t.Errorf("version header %q: want config:%s", h, p.ConfigDigest(0))
		}
	}
	deployedConfig(t, n, b, fn, secret)
	status, _ := json.Marshal(n.Status())
	rec := httptest.NewRecorder()
	n.Metrics().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	cancel()
	if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
		t.Errorf("node: %v", err)
	}
	for what, text := range map[string]string{"status": string(status), "metrics": rec.Body.String(), "log": logs.String()} {
		if strings.Contains(text, strings.TrimSuffix(secret, "-")) {
			t.Errorf("the secret is in the node's %s", what)
		}
	}
	if !strings.Contains(string(status), `"prefix":"secret from environment variable EDDY_TEST_PREFIX"`) || !strings.Contains(string(status), `"other":"v2"`) {
		t.Errorf("status shows the config as %s", status)
	}
	_, err = host.NewNode(context.Background(), p, host.NodeConfig{Brokers: b.Brokers(), NodeID: "c2", Engine: eng, DataDir: t.TempDir(),
		LookupEnv: func(string) (string, bool) { return "", false }})
	if err == nil || !strings.Contains(err.Error(), "config prefix: environment variable EDDY_TEST_PREFIX is not set") {
		t.Fatalf("a node without the secret's variable: %v", err)
	}
}

// deployedConfig deploys the prefix module again with other config (a
// value, then a secret again): the records the new versions make carry
// their prefixes and their config's digest; a deploy whose secret the node
// cannot read is refused; a deploy without config carries on the live
// version's.
func deployedConfig(t *testing.T, n *host.Node, b *testkafka.Broker, fn, secret string) {
	t.Helper()
	ctx := context.Background()
	module, err := os.ReadFile(fn)
	if err != nil {
		t.Fatal(err)
	}
	sent := 2
	// expect sends records until one comes out with the prefix want (the
	// swap happens at a transaction boundary) and checks its header.
	expect := func(want string, entries map[string]eddypipeline.ConfigValue) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			produceAll(t, b.Brokers(), "in", []abi.Record{{Key: []byte("k"), Value: []byte("x")}})
			sent++
			var r abi.Record // the last output of key k
			for _, o := range consumeAll(t, b, "out", sent, 2*time.Second) {
				if string(o.Key) == "k" {
					r = o
				}
			}
			if string(r.Value) != want+"x" {
				continue
			}
			if h := header(r, host.FunctionHeader("tag")); !strings.HasSuffix(h, " config:"+eddypipeline.ConfigDigestOf(entries)) {
				t.Fatalf("version header %q: want config:%s", h, eddypipeline.ConfigDigestOf(entries))
			}
			return
		}
		t.Fatalf("no output with the prefix %q", want)
	}
	v2 := map[string]registry.ConfigEntry{"prefix": {Value: "v2:"}, "other": {Value: "v2"}}
	if _, err := n.Deploy(ctx, host.Deployment{Step: "tag", Module: module, Config: v2}); err != nil {
		t.Fatal(err)
	}
	expect("v2:", map[string]eddypipeline.ConfigValue{"prefix": {Value: "v2:"}, "other": {Value: "v2"}})
	_, err = n.Deploy(ctx, host.Deployment{Step: "tag", Module: module, Config: map[string]registry.ConfigEntry{"prefix": {Env: "EDDY_NOT_SET"}}})
	if de, ok := errors.AsType[*host.DeployError](err); !ok || de.Code != "invalid_config" || !strings.Contains(err.Error(), "environment variable EDDY_NOT_SET is not set") {
		t.Fatalf("a deploy whose secret the node cannot read: %v", err)
	}
	v3 := map[string]registry.ConfigEntry{"prefix": {Env: "EDDY_TEST_PREFIX"}, "other": {Value: "v2"}}
	if _, err := n.Deploy(ctx, host.Deployment{Step: "tag", Module: module, Config: v3}); err != nil {
		t.Fatal(err)
	}
	v3Entries := map[string]eddypipeline.ConfigValue{"prefix": {Env: "EDDY_TEST_PREFIX"}, "other": {Value: "v2"}}
	expect(secret, v3Entries)
	// Without config: the live version's carries on.
	ev, err := n.Deploy(ctx, host.Deployment{Step: "tag", Module: module, Note: "same config"})
	if err != nil || !maps.Equal(ev.Config, v3) {
		t.Fatalf("a deploy without config: %+v, %v", ev.Config, err)
	}
}

// lockedWriter serialises writes to w (a node logs from several
// goroutines).
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

func testEngine(t *testing.T) *runtime.Engine {
	t.Helper()
	eng, err := runtime.NewEngine(runtime.WithCacheDir(cacheDir))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close(context.Background()) })
	return eng
}

// TestTimerOutputsRouted fires timers outside a batch's run (at the end of
// the input, as on a tick): what a firing makes goes through the step's
// named outputs and taps as a record's outputs do. The native emits two
// records per firing, one to the named output "alerts" and one of the
// step's own, which the step's tap and the sink both get.
func TestTimerOutputsRouted(t *testing.T) {
	p := loadPipeline(t, `name: routed
source: {topics: [in]}
steps:
  - name: quiet
    kind: filter
    function: native:routed
    state: true
    outputs: [{name: alerts, to: alerts}]
    to: taps
sink: {topic: out}
delivery: exactly_once
`)
	routed := func() runtime.Native {
		n := nativeTimeout()
		fire := n.OnTimer
		n.OnTimer = func(st runtime.State, tm abi.Timer, emit func(abi.Record)) error {
			return fire(st, tm, func(r abi.Record) {
				emit(r)
				r.Headers = []abi.Header{{Key: abi.HeaderOutput, Value: []byte("alerts")}}
				emit(r)
			})
		}
		return n
	}
	ctx := context.Background()
	ip := startInProcessWith(t, p, 1, map[string]func() runtime.Native{"routed": routed})
	got := map[string]int{}
	ip.Out = func(topic string, r abi.Record, _ time.Time) {
		got[topic]++
		for _, h := range r.Headers {
			if h.Key == abi.HeaderOutput {
				t.Errorf("a record for %s still has the header %s", topic, h.Key)
			}
		}
	}
	recs := quietInput(1, 500)
	if err := ip.Send(ctx, "in", recs); err != nil {
		t.Fatal(err)
	}
	if err := ip.Commit(); err != nil {
		t.Fatal(err)
	}
	inBatch := maps.Clone(got)
	if err := ip.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	want := len(quietReference(recs))
	if left := want - inBatch["out"]; left == 0 {
		t.Fatalf("every alert fired within the batch (%d): the end of the input fires none", want)
	}
	for _, topic := range []string{"out", "alerts", "taps"} {
		if got[topic] != want {
			t.Errorf("%s got %d records, want %d (%d before the end of the input)", topic, got[topic], want, inBatch[topic])
		}
	}
}
