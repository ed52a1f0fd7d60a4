package host_test

import (
	"bytes"
	"context"
	crand "crypto/rand"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/host"
	"github.com/eddy-streams/eddy/internal/await"
	"github.com/eddy-streams/eddy/internal/testkafka"
	"github.com/eddy-streams/eddy/runtime"
)

// TestOversizedOutputIsDeadLettered: a map guest (testdata/amplify.wat)
// answers a 3,000,000-byte value for a few records of a stream of small
// ones. Each of those input records goes to the dead-letter topic with code
// output_too_large and a reason giving the sizes and the topic; every other
// record is in the output (exactly once under exactly_once), and the node
// keeps running. Before the check, the producer refused the record
// (MESSAGE_TOO_LARGE) and the node stopped, again after every restart.
func TestOversizedOutputIsDeadLettered(t *testing.T) {
	for _, d := range []host.Delivery{host.ExactlyOnce, host.AtLeastOnce} {
		t.Run(string(d), func(t *testing.T) { testOversizedOutput(t, d) })
	}
}

func testOversizedOutput(t *testing.T, d host.Delivery) {
	b := startBroker(t, "in", "out", "dlq")
	wasm, _ := filepath.Abs("testdata/amplify.wasm")
	path := filepath.Join(t.TempDir(), "p.yaml")
	os.WriteFile(path, []byte(fmt.Sprintf(`name: amplify
source: {topics: [in]}
steps:
  - name: fn
    kind: map
    function: %s
sink: {topic: out}
dead_letter: {topic: dlq}
delivery: %s
commit_interval: 50ms
batch_size: 1
`, wasm, d)), 0o644)
	p, err := host.LoadPipeline(path)
	if err != nil {
		t.Fatal(err)
	}
	const total = 300
	var recs []abi.Record
	for i := range total {
		v := fmt.Sprintf("v%06d", i)
		if i%100 == 50 {
			v = fmt.Sprintf("B%06d", i) // amplified
		}
		recs = append(recs, abi.Record{Value: []byte(v)})
	}
	produceAll(t, []string{b.Addr()}, "in", recs)
	n := startNode(t, b, p, "a")
	dlq := consumeAll(t, b, "dlq", 3, time.Second)
	if len(dlq) != 3 {
		t.Fatalf("%d dead letters, want 3 (node: %v)", len(dlq), nodeErr(n))
	}
	for _, r := range dlq {
		reason := header(r, "eddy.error")
		if !strings.HasPrefix(string(r.Value), "B") || header(r, "eddy.error.code") != "output_too_large" ||
			!strings.Contains(reason, "exceeds the 1000012-byte limit of topic out") ||
			!strings.Contains(reason, "function fn (process): output_too_large: output record of 3000") || header(r, "eddy.step") != "fn" || header(r, "eddy.source.offset") == "" {
			t.Fatalf("dead letter %q: headers %v", r.Value, r.Headers)
		}
	}
	out := consumeAll(t, b, "out", total-3, time.Second)
	seen := map[string]int{}
	for _, r := range out {
		seen[string(r.Value)]++
	}
	for i := range total {
		v, want := fmt.Sprintf("v%06d", i), 1
		if i%100 == 50 {
			v, want = fmt.Sprintf("B%06d", i), 0
		}
		if c := seen[v]; c != want && (d == host.ExactlyOnce || c == 0 || want == 0) {
			t.Fatalf("output has %s %d times, want %d (node: %v)", v, c, want, nodeErr(n))
		}
	}
	if err := nodeErr(n); err != nil {
		t.Fatalf("node stopped: %v", err)
	}
	if st := n.node.Stats(); st.DeadLettered != 3 {
		t.Fatalf("stats %+v: want 3 dead-lettered", st)
	}
}

// startNativeNode runs a node whose steps may name the given natives.
func startNativeNode(t *testing.T, b *testkafka.Broker, p *host.Pipeline, natives map[string]func() runtime.Native) *runningNode {
	t.Helper()
	eng, err := runtime.NewEngine(runtime.WithCacheDir(cacheDir))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close(context.Background()) })
	n, err := host.NewNode(context.Background(), p, host.NodeConfig{Brokers: []string{b.Addr()}, NodeID: "a", Engine: eng,
		DataDir: t.TempDir(), Logger: testLogger(t), Natives: natives})
	if err != nil {
		t.Fatal(err)
	}
	r := &runningNode{node: n, done: make(chan error, 1)}
	r.start(t)
	return r
}

// concat is an aggregate whose accumulator is its records' values, one
// after the other, and whose result is the accumulator's length, except for
// key "big", whose result is 3,000,000 bytes.
func concat() runtime.Native {
	return runtime.Native{
		AggInit: func() []byte { return []byte{} },
		AggAdd:  func(acc []byte, rec *abi.Record) ([]byte, error) { return append(acc, rec.Value...), nil },
		AggMerge: func(_, a, b []byte) ([]byte, error) {
			return append(append([]byte{}, a...), b...), nil
		},
		AggResult: func(key, acc []byte) ([]byte, error) {
			if string(key) == "big" {
				return make([]byte, 3_000_000), nil
			}
			return []byte(strconv.Itoa(len(acc))), nil
		},
	}
}

func aggregatePipeline(t *testing.T, d host.Delivery) *host.Pipeline {
	return loadPipeline(t, fmt.Sprintf(`name: bigagg
source: {topics: [in]}
steps:
  - name: agg
    kind: aggregate
    function: native:concat
    window: {type: tumbling, size: 1s}
sink: {topic: out}
dead_letter: {topic: dlq}
late: {topic: late}
delivery: %s
commit_interval: 50ms
batch_size: 1
`, d))
}

// TestOversizedWindowResultIsDeadLettered: an aggregate whose result for
// one key is 3,000,000 bytes. The result goes to the dead-letter topic (its
// key, its window, no value: it came from no one input record) with code
// output_too_large; the other keys' results are produced and the node keeps
// running. Before the check, the sink produce failed and the node stopped.
func TestOversizedWindowResultIsDeadLettered(t *testing.T) {
	b := startBroker(t, "in", "out", "dlq", "late")
	p := aggregatePipeline(t, host.ExactlyOnce)
	const base = int64(1700000000000)
	var recs []abi.Record
	for i := range 30 {
		for _, k := range []string{"a", "big", "c"} {
			recs = append(recs, abi.Record{Key: []byte(k), Value: []byte("xy"), Timestamp: base + int64(i)})
		}
	}
	for _, k := range []string{"a", "big", "c"} { // closes the windows
		recs = append(recs, abi.Record{Key: []byte(k), Value: []byte("z"), Timestamp: base + 60_000})
	}
	produceAll(t, []string{b.Addr()}, "in", recs)
	n := startNativeNode(t, b, p, map[string]func() runtime.Native{"concat": concat})
	out := consumeAll(t, b, "out", 2, time.Second)
	got := map[string]string{}
	for _, r := range out {
		got[string(r.Key)] = string(r.Value)
	}
	if len(out) != 2 || got["a"] != "60" || got["c"] != "60" {
		t.Fatalf("results %v, want a and c with 60 (node: %v)", got, nodeErr(n))
	}
	dlq := consumeAll(t, b, "dlq", 1, time.Second)
	if len(dlq) != 1 {
		t.Fatalf("%d dead letters, want 1 (node: %v)", len(dlq), nodeErr(n))
	}
	r := dlq[0]
	if string(r.Key) != "big" || r.Value != nil || header(r, "eddy.error.code") != "output_too_large" ||
		header(r, "eddy.dropped.value") != "3000000" || header(r, "eddy.window.start") != strconv.FormatInt(base, 10) ||
		!strings.Contains(header(r, "eddy.error"), "exceeds the 1000012-byte limit of topic out") || header(r, "eddy.source.offset") != "" {
		t.Fatalf("dead letter %q %q: headers %v", r.Key, r.Value, r.Headers)
	}
	if err := nodeErr(n); err != nil {
		t.Fatalf("node stopped: %v", err)
	}
}

// TestOversizedAccumulatorFailsItsRecords: an aggregate whose accumulator
// grows with every record (300,000 bytes each) for one key, whose changelog
// topic takes records of at most 700,000 bytes (max.message.bytes: the state
// limits alone, 960 KiB, would refuse it first). The records that would
// make it larger than its changelog takes go to the dead-letter topic
// with code output_too_large, and the window keeps the accumulator it had;
// other keys are not affected, and the node keeps running, under both
// guarantees (the changelog is written in the transaction, or at
// checkpoints). Before the check, the changelog produce failed and the node
// stopped, again after every restart.
func TestOversizedAccumulatorFailsItsRecords(t *testing.T) {
	for _, d := range []host.Delivery{host.ExactlyOnce, host.AtLeastOnce} {
		t.Run(string(d), func(t *testing.T) {
			changelog := host.ChangelogTopic("bigagg", "agg")
			b := startBroker(t, "in", "out", "dlq", "late", changelog)
			setTopicLimit(t, b.Addr(), changelog, "700000")
			p := aggregatePipeline(t, d)
			const base = int64(1700000000000)
			var recs []abi.Record
			for i := range 5 {
				v := append([]byte(strconv.Itoa(i)), make([]byte, 299_999)...)
				recs = append(recs, abi.Record{Key: []byte("grow"), Value: v, Timestamp: base + int64(i)},
					abi.Record{Key: []byte("a"), Value: []byte("xy"), Timestamp: base + int64(i)})
			}
			for _, k := range []string{"a", "grow"} { // closes the windows
				recs = append(recs, abi.Record{Key: []byte(k), Value: []byte("z"), Timestamp: base + 60_000})
			}
			produceAll(t, []string{b.Addr()}, "in", recs)
			n := startNativeNode(t, b, p, map[string]func() runtime.Native{"concat": concat})
			dlq := consumeAll(t, b, "dlq", 3, time.Second)
			if len(dlq) != 3 {
				t.Fatalf("%d dead letters, want 3 (node: %v)", len(dlq), nodeErr(n))
			}
			for i, r := range dlq {
				if string(r.Key) != "grow" || len(r.Value) == 0 || r.Value[0] != byte('2'+i) ||
					header(r, "eddy.error.code") != "output_too_large" || header(r, "eddy.step") != "agg" ||
					!strings.Contains(header(r, "eddy.error"), "accumulator of 900000 bytes") ||
					!strings.Contains(header(r, "eddy.error"), "limit of topic bigagg-agg-changelog") {
					t.Fatalf("dead letter %d %q: headers %v", i, r.Key, r.Headers)
				}
			}
			out := consumeAll(t, b, "out", 2, time.Second)
			got := map[string]string{}
			for _, r := range out {
				got[string(r.Key)] = string(r.Value)
			}
			if len(out) != 2 || got["a"] != "10" || got["grow"] != "600000" {
				t.Fatalf("results %v, want a 10 and grow 600000 (node: %v)", got, nodeErr(n))
			}
			if err := nodeErr(n); err != nil {
				t.Fatalf("node stopped: %v", err)
			}
		})
	}
}

// TestOversizedRepartitionRecordIsDeadLettered: a key_by on a field whose
// value is 600,000 bytes makes a repartition record (that key and the
// record's value) of 1.2 MB. The input record goes to the dead-letter topic
// with code output_too_large, naming the key_by step and the repartition
// topic; the other records reach the sink through the repartition topic (in
// front of a stateful step).
// Before the check, the repartition produce failed and the node stopped.
func TestOversizedRepartitionRecordIsDeadLettered(t *testing.T) {
	b := startBroker(t, "in", "out", "dlq")
	p := loadPipeline(t, `name: rekey
source: {topics: [in]}
steps:
  - {name: by-user, kind: key_by, field: user.id}
  - {name: pass, kind: map, function: "native:pass", state: true}
sink: {topic: out}
dead_letter: {topic: dlq}
delivery: exactly_once
commit_interval: 50ms
batch_size: 10
`)
	var recs []abi.Record
	for i := range 50 {
		recs = append(recs, abi.Record{Value: []byte(fmt.Sprintf(`{"user":{"id":"u%d"},"n":%d}`, i%7, i))})
		if i == 25 {
			recs = append(recs, abi.Record{Value: []byte(`{"user":{"id":"` + strings.Repeat("x", 600_000) + `"}}`)})
		}
	}
	produceAll(t, []string{b.Addr()}, "in", recs)
	pass := func() runtime.Native {
		return runtime.Native{ProcessState: func(_ runtime.State, rec *abi.Record, emit func(abi.Record)) error { emit(*rec); return nil }}
	}
	n := startNativeNode(t, b, p, map[string]func() runtime.Native{"pass": pass})
	out := consumeAll(t, b, "out", 50, time.Second)
	if len(out) != 50 {
		t.Fatalf("%d outputs, want 50 (node: %v)", len(out), nodeErr(n))
	}
	dlq := consumeAll(t, b, "dlq", 1, time.Second)
	if len(dlq) != 1 {
		t.Fatalf("%d dead letters, want 1 (node: %v)", len(dlq), nodeErr(n))
	}
	r := dlq[0]
	if len(r.Value) < 600_000 || header(r, "eddy.step") != "by-user" || header(r, "eddy.error.code") != "output_too_large" ||
		!strings.Contains(header(r, "eddy.error"), "-repartition") || header(r, "eddy.source.topic") != "in" {
		t.Fatalf("dead letter of %d bytes: headers %v", len(r.Value), r.Headers)
	}
	if err := nodeErr(n); err != nil {
		t.Fatalf("node stopped: %v", err)
	}
}

// TestTopicMaxMessageBytesIsTheLimit: the sink topic's max.message.bytes is
// 200,000 (below the producer's limit); a map that triples its input's value
// makes 300,000-byte outputs for a few 100,000-byte records. The node reads
// the topic's limit at start, and those records are dead-lettered with it;
// the others are produced. Without it, the broker refused the produce and
// the node stopped.
func TestTopicMaxMessageBytesIsTheLimit(t *testing.T) {
	b := startBroker(t, "in", "out", "dlq")
	limit := "200000"
	setTopicLimit(t, b.Addr(), "out", limit)
	p := loadPipeline(t, `name: triple
source: {topics: [in]}
steps:
  - {name: fn, kind: map, function: "native:triple"}
sink: {topic: out}
dead_letter: {topic: dlq}
delivery: exactly_once
commit_interval: 50ms
batch_size: 10
`)
	var recs []abi.Record
	for i := range 40 {
		v := []byte(fmt.Sprintf("v%06d", i))
		if i%10 == 5 {
			noise := make([]byte, 100_000) // incompressible: the broker measures compressed batches
			crand.Read(noise)
			v = append(v, noise...)
		}
		recs = append(recs, abi.Record{Value: v})
	}
	produceAll(t, []string{b.Addr()}, "in", recs)
	triple := func() runtime.Native {
		return runtime.Native{Process: func(rec *abi.Record, emit func(abi.Record)) error {
			v := rec.Value
			if len(v) > 100 {
				n := len(v)
				v = bytes.Repeat(v, 3)
				mrand.NewChaCha8([32]byte{}).Read(v[n:]) // incompressible, see testLoweredTopicLimit
			}
			emit(abi.Record{Value: v, Timestamp: rec.Timestamp})
			return nil
		}}
	}
	n := startNativeNode(t, b, p, map[string]func() runtime.Native{"triple": triple})
	out := consumeAll(t, b, "out", 36, time.Second)
	if len(out) != 36 {
		t.Fatalf("%d outputs, want 36 (node: %v)", len(out), nodeErr(n))
	}
	dlq := consumeAll(t, b, "dlq", 4, time.Second)
	if len(dlq) != 4 {
		t.Fatalf("%d dead letters, want 4 (node: %v)", len(dlq), nodeErr(n))
	}
	for _, r := range dlq {
		if header(r, "eddy.error.code") != "output_too_large" || !strings.Contains(header(r, "eddy.error"), "exceeds the 200000-byte limit of topic out") {
			t.Fatalf("dead letter: headers %v", r.Headers)
		}
	}
	if err := nodeErr(n); err != nil {
		t.Fatalf("node stopped: %v", err)
	}
}

// TestOversizedJoinBufferEntryIsDeadLettered: a stream-stream join whose
// changelog topic takes records of at most 200,000 bytes (max.message.bytes)
// would buffer a record with a 300,000-byte value: within the state limits
// (960 KiB), over what its changelog takes. The record is dead-lettered
// before it joins; the others join, and the node keeps running (the
// read_committed output shows the transactions that follow it committed).
// Before the check, the changelog produce failed at the commit and the node
// stopped, again after every restart.
func TestOversizedJoinBufferEntryIsDeadLettered(t *testing.T) {
	changelog := host.ChangelogTopic("bigjoin", "match")
	b := startBroker(t, "orders", "payments", "out", "dlq", "late", changelog)
	setTopicLimit(t, b.Addr(), changelog, "200000")
	p := loadPipeline(t, `name: bigjoin
source: {topics: [orders]}
steps:
  - name: match
    kind: join
    stream: payments
    type: inner
    window: {before: 1s, after: 1s, grace: 100ms}
sink: {topic: out}
dead_letter: {topic: dlq}
late: {topic: late}
delivery: exactly_once
commit_interval: 50ms
batch_size: 10
`)
	const base = int64(1700000000000)
	var orders, payments []abi.Record
	for i := range 20 {
		k := []byte(fmt.Sprintf("o%d", i))
		orders = append(orders, abi.Record{Key: k, Value: []byte(`{"order":1}`), Timestamp: base + int64(i)})
		payments = append(payments, abi.Record{Key: k, Value: []byte(`{"paid":1}`), Timestamp: base + int64(i)})
	}
	orders = append(orders, abi.Record{Key: []byte("o5"), Value: bytes.Repeat([]byte("v"), 300_000), Timestamp: base + 5})
	produceAll(t, []string{b.Addr()}, "orders", orders)
	produceAll(t, []string{b.Addr()}, "payments", payments)
	n := startStatefulNode(t, []string{b.Addr()}, p, "a", t.TempDir())
	out := consumeAll(t, b, "out", 20, time.Second)
	if len(out) != 20 {
		t.Fatalf("%d outputs, want 20 (node: %v)", len(out), nodeErr(n))
	}
	dlq := consumeAll(t, b, "dlq", 1, time.Second)
	if len(dlq) != 1 {
		t.Fatalf("%d dead letters, want 1 (node: %v)", len(dlq), nodeErr(n))
	}
	r := dlq[0]
	if header(r, "eddy.error.code") != "output_too_large" || header(r, "eddy.step") != "match" ||
		!strings.Contains(header(r, "eddy.error"), "join buffer entry of ") ||
		!strings.Contains(header(r, "eddy.error"), "limit of topic bigjoin-match-changelog") {
		t.Fatalf("dead letter: headers %v", r.Headers)
	}
	if err := nodeErr(n); err != nil {
		t.Fatalf("node stopped: %v", err)
	}
}

// TestLoweredTopicLimitStopsOnceThenDeadLetters: the sink topic's
// max.message.bytes is lowered to 200,000 while a node runs, below what the
// node read at start. A 300,000-byte output is then refused by the broker:
// the node stops, saying why; a restarted node reads the new limit and
// dead-letters the record instead of stopping again. Under exactly_once the
// node used to wedge instead of stopping: the produce error was taken by the
// wait for the transaction's work and lost.
func TestLoweredTopicLimitStopsOnceThenDeadLetters(t *testing.T) {
	for _, d := range []host.Delivery{host.ExactlyOnce, host.AtLeastOnce} {
		t.Run(string(d), func(t *testing.T) { testLoweredTopicLimit(t, d) })
	}
}

func testLoweredTopicLimit(t *testing.T, d host.Delivery) {
	b := startBroker(t, "in", "out", "dlq")
	p := loadPipeline(t, `name: lowered
source: {topics: [in]}
steps:
  - {name: fn, kind: map, function: "native:triple"}
sink: {topic: out}
dead_letter: {topic: dlq}
delivery: `+string(d)+`
commit_interval: 50ms
batch_size: 10
`)
	triple := func() runtime.Native {
		return runtime.Native{Process: func(rec *abi.Record, emit func(abi.Record)) error {
			v := bytes.Repeat(rec.Value, 3)
			if len(rec.Value) > 100 {
				// Random past the input: a compressor with a long window
				// would shrink three copies below the broker's limit.
				mrand.NewChaCha8([32]byte{}).Read(v[len(rec.Value):])
			}
			emit(abi.Record{Value: v, Timestamp: rec.Timestamp})
			return nil
		}}
	}
	natives := map[string]func() runtime.Native{"triple": triple}
	small := func(from, to int) []abi.Record {
		var recs []abi.Record
		for i := from; i < to; i++ {
			recs = append(recs, abi.Record{Value: []byte(fmt.Sprintf("v%06d", i))})
		}
		return recs
	}
	produceAll(t, []string{b.Addr()}, "in", small(0, 10))
	n1 := startNativeNode(t, b, p, natives)
	if out := consumeAll(t, b, "out", 10, time.Second); len(out) != 10 {
		t.Fatalf("%d outputs, want 10 (node: %v)", len(out), nodeErr(n1))
	}
	limit := "200000"
	setTopicLimit(t, b.Addr(), "out", limit)
	noise := make([]byte, 100_000) // incompressible: the broker measures compressed batches
	crand.Read(noise)
	produceAll(t, []string{b.Addr()}, "in", append(small(10, 15), abi.Record{Value: noise}))
	stopErr := await.Receive(t, n1.done, func() string { return "the node did not stop at the refused record" })
	n1.cancel = nil
	if stopErr == nil || !strings.Contains(stopErr.Error(), "MESSAGE_TOO_LARGE") || !strings.Contains(stopErr.Error(), "a restarted node reads it again") {
		t.Fatalf("the node stopped with %v", stopErr)
	}
	n2 := startNativeNode(t, b, p, natives)
	dlq := consumeAll(t, b, "dlq", 1, time.Second)
	if len(dlq) != 1 || !strings.Contains(header(dlq[0], "eddy.error"), "exceeds the 200000-byte limit of topic out") {
		t.Fatalf("%d dead letters (node: %v)", len(dlq), nodeErr(n2))
	}
	out := consumeAll(t, b, "out", 15, time.Second)
	seen := map[string]bool{}
	for _, r := range out {
		seen[string(r.Value)] = true
	}
	for i := range 15 {
		if v := strings.Repeat(fmt.Sprintf("v%06d", i), 3); !seen[v] {
			t.Fatalf("%s missing from the output (node: %v)", v, nodeErr(n2))
		}
	}
	if err := nodeErr(n2); err != nil {
		t.Fatalf("node stopped: %v", err)
	}
}

// setTopicLimit sets topic's max.message.bytes on the broker at addr and
// waits until the broker describes it so.
func setTopicLimit(t *testing.T, addr, topic, limit string) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	res, err := adm.AlterTopicConfigs(context.Background(),
		[]kadm.AlterConfig{{Op: kadm.SetConfig, Name: "max.message.bytes", Value: &limit}}, topic)
	if err == nil {
		_, err = res.On(topic, nil)
	}
	if err != nil {
		t.Fatal(err)
	}
	await.Until(t, 10*time.Millisecond, func() bool {
		rcs, err := adm.DescribeTopicConfigs(context.Background(), topic)
		if err != nil {
			return false
		}
		rc, err := rcs.On(topic, nil)
		if err != nil {
			return false
		}
		for _, c := range rc.Configs {
			if c.Key == "max.message.bytes" && c.Value != nil && *c.Value == limit {
				return true
			}
		}
		return false
	}, func() string { return "the topic's max.message.bytes is not " + limit })
}

// TestOutputTimestampOutOfRangeIsDeadLettered: Apache Kafka refuses a
// record stamped more than message.timestamp.after.max.ms (1 hour by
// default) ahead of its clock, which would stop the node on the same input
// after every restart. A map that stamps some outputs 2 hours ahead has
// those inputs dead-lettered (output_timestamp) and the others produced. An
// input topic may accept what the dead-letter topic does not: a failed
// record stamped 2 hours ahead is dead-lettered stamped now, its own time in
// eddy.timestamp. The embedded broker accepts any timestamp and reports no
// bounds: this runs against Apache Kafka (EDDY_TEST_KAFKA).
func TestOutputTimestampOutOfRangeIsDeadLettered(t *testing.T) {
	if !testkafka.Real() {
		t.Skip("the embedded broker accepts any timestamp: runs against Apache Kafka (EDDY_TEST_KAFKA, scripts/kafka.sh)")
	}
	for _, d := range []host.Delivery{host.ExactlyOnce, host.AtLeastOnce} {
		t.Run(string(d), func(t *testing.T) {
			b := startBroker(t, "out", "dlq")
			cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()))
			if err != nil {
				t.Fatal(err)
			}
			defer cl.Close()
			unbounded := "9223372036854775807"
			if _, err := kadm.NewClient(cl).CreateTopic(context.Background(), 4, 1,
				map[string]*string{"message.timestamp.after.max.ms": &unbounded}, "in"); err != nil {
				t.Fatal(err)
			}
			p := loadPipeline(t, fmt.Sprintf(`name: stamps
source: {topics: [in]}
steps: [{name: stamp, kind: map, function: native:stamp}]
sink: {topic: out}
dead_letter: {topic: dlq}
delivery: %s
commit_interval: 50ms
batch_size: 10
`, d))
			now := time.Now().UnixMilli()
			ahead := now + 2*time.Hour.Milliseconds()
			n := startNativeNode(t, b, p, map[string]func() runtime.Native{"stamp": func() runtime.Native {
				return runtime.Native{Process: func(rec *abi.Record, emit func(abi.Record)) error {
					out := *rec
					switch rec.Value[0] {
					case 'F':
						out.Timestamp = ahead
					case 'E':
						return errors.New("refused")
					}
					emit(out)
					return nil
				}}
			}})
			const total = 200
			var recs []abi.Record
			for i := range total {
				r := abi.Record{Value: []byte(fmt.Sprintf("v%04d", i)), Timestamp: now}
				switch i % 50 {
				case 7:
					r.Value[0] = 'F'
				case 9:
					r.Value[0], r.Timestamp = 'E', ahead
				}
				r.Key = r.Value
				recs = append(recs, r)
			}
			produceAll(t, b.Brokers(), "in", recs)
			dlq := consumeAll(t, b, "dlq", 8, time.Second)
			out := consumeAll(t, b, "out", total-8, time.Second)
			if err := nodeErr(n); err != nil {
				t.Fatalf("node stopped: %v", err)
			}
			if len(dlq) != 8 {
				t.Fatalf("%d dead letters, want 8", len(dlq))
			}
			for _, r := range dlq {
				switch r.Value[0] {
				case 'F':
					if header(r, "eddy.error.code") != "output_timestamp" || !strings.Contains(header(r, "eddy.error"), "ahead of now") {
						t.Fatalf("dead letter %s: %v", r.Value, r.Headers)
					}
				case 'E':
					if header(r, "eddy.timestamp") != fmt.Sprint(ahead) || r.Timestamp >= ahead {
						t.Fatalf("dead letter %s at %d: %v, want it stamped now and eddy.timestamp %d", r.Value, r.Timestamp, r.Headers, ahead)
					}
				default:
					t.Fatalf("dead letter %s: %v", r.Value, r.Headers)
				}
			}
			seen := map[string]int{}
			for _, r := range out {
				seen[string(r.Value)]++
			}
			for i := range total {
				if v := fmt.Sprintf("v%04d", i); i%50 != 7 && i%50 != 9 && seen[v] == 0 {
					t.Fatalf("output %s missing", v)
				}
			}
		})
	}
}
