package host_test

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"net/http/httptest"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/host"
	"github.com/eddy-streams/eddy/internal/await"
	"github.com/eddy-streams/eddy/internal/testkafka"
)

// corruptEntries returns the node's eddy_corrupt_entries_total for the step
// and kind.
func corruptEntries(t *testing.T, n *host.Node, step, kind string) float64 {
	t.Helper()
	rec := httptest.NewRecorder()
	n.Metrics().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(rec.Body)
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, m := range fams["eddy_corrupt_entries_total"].GetMetric() {
		l := map[string]string{}
		for _, p := range m.GetLabel() {
			l[p.GetName()] = p.GetValue()
		}
		if l["step"] == step && l["kind"] == kind {
			sum += m.GetCounter().GetValue()
		}
	}
	return sum
}

// produceTo writes recs to the given partition of topic, as any Kafka
// client could.
func produceTo(t *testing.T, brokers []string, topic string, part int32, recs ...*kgo.Record) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for _, r := range recs {
		r.Topic, r.Partition = topic, part
	}
	if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// hugeLengthAccKey is the 20-byte changelog key of issue 14: an
// accumulator key ('a') whose record key length, a uvarint, is so large
// that adding it to the rest of the key wraps around to the key's length.
func hugeLengthAccKey() []byte {
	k := binary.AppendUvarint([]byte{'a'}, math.MaxUint64-6) // 10 bytes of uvarint
	return append(k, make([]byte, 20-len(k))...)
}

// TestCorruptChangelogEntriesAreSkipped counts and sums values per key in
// tumbling windows on a node that stops halfway; then someone writes
// garbage into the step's changelog topic — on every partition, the 20-byte
// accumulator key of issue 14 (which made the key parser panic at every
// restore), a watermark and a count that do not decode. A second node, with an empty data directory,
// restores from that changelog and a third restarts on the second's data
// directory (the entries are in its local store now): both skip the bad
// entries, count them, and keep running, and every window's result is
// still right.
func TestCorruptChangelogEntriesAreSkipped(t *testing.T) {
	b := startBroker(t, "in", "out", "dlq")
	brokers := []string{b.Addr()}
	stats, _ := filepath.Abs("../testdata/go/stats.wasm")
	p := loadPipeline(t, fmt.Sprintf(`name: corrupt
source: {topics: [in]}
steps:
  - name: stats
    kind: aggregate
    function: %s
    window: {type: tumbling, size: 1s}
sink: {topic: out}
dead_letter: {topic: dlq}
delivery: exactly_once
commit_interval: 50ms
batch_size: 50
`, stats))
	const base, keys, total = int64(1700000000000), 8, 2000
	type wk struct {
		key   string
		start int64
	}
	want := map[wk][2]int{} // count, sum
	var recs []abi.Record
	for i := range total {
		k, ts, v := fmt.Sprintf("k%d", i%keys), base+int64(i)*10, i%100
		recs = append(recs, abi.Record{Key: []byte(k), Value: []byte(fmt.Sprint(v)), Timestamp: ts})
		w := wk{k, ts / 1000 * 1000}
		want[w] = [2]int{want[w][0] + 1, want[w][1] + v}
	}
	for k := range keys { // far ahead: closes every window above
		recs = append(recs, abi.Record{Key: []byte(fmt.Sprintf("k%d", k)), Value: []byte("0"), Timestamp: base + 3_600_000})
	}

	const half = total / 2
	produceAll(t, brokers, "in", recs[:half])
	n1 := startStatefulNode(t, brokers, p, "one", t.TempDir())
	await.Until(t, 10*time.Millisecond, func() bool { return n1.node.Stats().In >= half },
		func() string { return fmt.Sprintf("the first node took %d of %d records", n1.node.Stats().In, half) })
	n1.stop(t)

	changelog := host.ChangelogTopic("corrupt", "stats")
	const perPartition = 3
	for part := range int32(4) {
		produceTo(t, brokers, changelog, part,
			&kgo.Record{Key: hugeLengthAccKey(), Value: []byte("x")},
			&kgo.Record{Key: []byte("w"), Value: []byte("short")},
			&kgo.Record{Key: []byte("nk0"), Value: []byte{0xff}},
		)
	}
	if k := hugeLengthAccKey(); len(k) != 20 {
		t.Fatalf("the bad key has %d bytes", len(k))
	}

	dir2 := t.TempDir()
	n2 := startStatefulNode(t, brokers, p, "two", dir2)
	await.Until(t, 10*time.Millisecond, func() bool { return corruptEntries(t, n2.node, "stats", "store") >= 4*perPartition },
		func() string {
			return fmt.Sprintf("the second node reported %v corrupt entries, want %d", corruptEntries(t, n2.node, "stats", "store"), 4*perPartition)
		})
	produceAll(t, brokers, "in", recs[half:])
	out := consumeAll(t, b, "out", len(want), 2*time.Second)
	n2.stop(t)

	got := map[wk][2]int{}
	for _, r := range out {
		var start int64
		fmt.Sscan(header(r, "eddy.window.start"), &start)
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
	if got := corruptEntries(t, n2.node, "stats", "store"); got != 4*perPartition {
		t.Fatalf("the second node reported %v corrupt entries, want %d", got, 4*perPartition)
	}

	// The bad accumulator key and count are in the second node's store
	// now (it wrote a good watermark over the bad one): a restart on its
	// directory meets them there, and goes on too.
	n3 := startStatefulNode(t, brokers, p, "three", dir2)
	await.Until(t, 10*time.Millisecond, func() bool { return corruptEntries(t, n3.node, "stats", "store") >= 4*2 },
		func() string {
			return fmt.Sprintf("the third node reported %v corrupt entries, want %d", corruptEntries(t, n3.node, "stats", "store"), 4*2)
		})
	produceAll(t, brokers, "in", []abi.Record{{Key: []byte("k0"), Value: []byte("1"), Timestamp: base + 3_600_000}})
	await.Until(t, 10*time.Millisecond, func() bool { return n3.node.Stats().In >= 1 },
		func() string { return "the third node took no record" })
	n3.stop(t) // fails the test if the node stopped with an error
}

// TestForgedRepartitionRecords writes into the repartition topic in front
// of a windowed count what any Kafka client could: a record whose
// eddy.repartition.from is not a number (it stopped the node, at every
// restart), one naming an upstream input that does not exist, and progress
// markers with the same faults. The records go to the dead-letter topic
// with the repartition topic's coordinates, the markers are skipped and
// counted, and the node counts the real records right.
func TestForgedRepartitionRecords(t *testing.T) {
	b := startBroker(t, "in", "out", "dlq")
	brokers := []string{b.Addr()}
	count, _ := filepath.Abs("../testdata/go/nx-count.wasm")
	p := loadPipeline(t, fmt.Sprintf(`name: forged
source: {topics: [in]}
steps:
  - {name: by-k, kind: key_by, field: k}
  - name: count
    kind: aggregate
    function: %s
    window: {type: tumbling, size: 1s}
sink: {topic: out}
dead_letter: {topic: dlq}
delivery: exactly_once
commit_interval: 50ms
`, count))
	repart := host.RepartitionTopic("forged", "by-k")
	from := func(v string) kgo.RecordHeader {
		return kgo.RecordHeader{Key: "eddy.repartition.from", Value: []byte(v)}
	}
	mark := func(v string) kgo.RecordHeader {
		return kgo.RecordHeader{Key: "eddy.repartition.progress", Value: []byte(v)}
	}
	const base = int64(1700000000000)
	n := startStatefulNode(t, brokers, p, "one", t.TempDir())
	// The node creates the repartition topic: wait for its tasks.
	await.Until(t, 10*time.Millisecond, func() bool { return len(n.node.Status().Tasks) > 0 },
		func() string { return "the node runs no task" })
	produceTo(t, brokers, repart, 0,
		&kgo.Record{Key: []byte("a"), Value: []byte(`{"k":"a"}`), Headers: []kgo.RecordHeader{from("not a number")}, Timestamp: time.UnixMilli(base)},
		&kgo.Record{Key: []byte("a"), Value: []byte(`{"k":"a"}`), Headers: []kgo.RecordHeader{from("4000")}, Timestamp: time.UnixMilli(base)},
		&kgo.Record{Headers: []kgo.RecordHeader{from("x"), mark("1")}},
		&kgo.Record{Headers: []kgo.RecordHeader{from("4000"), mark("1")}},
		&kgo.Record{Headers: []kgo.RecordHeader{from("0"), mark("soon")}},
	)
	var recs []abi.Record
	for i := range 200 {
		recs = append(recs, abi.Record{Value: []byte(fmt.Sprintf(`{"k":"k%d"}`, i%4)), Timestamp: base + int64(i)})
	}
	for i := range 40 { // far ahead on every partition: closes the windows above
		recs = append(recs, abi.Record{Key: []byte(fmt.Sprint(i)), Value: []byte(`{"k":"late"}`), Timestamp: base + 3_600_000})
	}
	produceAll(t, brokers, "in", recs)
	out := consumeAll(t, b, "out", 4, time.Second)
	dlq := consumeAll(t, b, "dlq", 2, time.Second)
	await.Until(t, 10*time.Millisecond, func() bool { return corruptEntries(t, n.node, "count", "progress") >= 3 },
		func() string {
			return fmt.Sprintf("%v progress markers skipped, want 3", corruptEntries(t, n.node, "count", "progress"))
		})
	n.stop(t)

	counts := map[string]string{}
	for _, r := range out {
		if header(r, "eddy.window.start") == fmt.Sprint(base) {
			counts[string(r.Key)] = string(r.Value)
		}
	}
	for k := range 4 {
		if got := counts[fmt.Sprintf("k%d", k)]; got != `{"count":50}` {
			t.Errorf("key k%d: %s, want {\"count\":50} (all: %v)", k, got, counts)
		}
	}
	if len(dlq) != 2 {
		t.Fatalf("%d dead letters, want 2", len(dlq))
	}
	for _, r := range dlq {
		if header(r, "eddy.step") != "count" || header(r, "eddy.source.topic") != repart || header(r, "eddy.error.code") != "bad_input" {
			t.Errorf("dead letter headers %v", r.Headers)
		}
	}
	if got := corruptEntries(t, n.node, "count", "progress"); got != 3 {
		t.Errorf("%v progress markers skipped, want 3", got)
	}
}

// TestCorruptJoinBufferEntriesAreSkipped writes garbage into a
// stream-stream join's changelog on every partition — a record without a
// key (the restore's walk of the buffer indexed its first byte: a panic),
// a buffer key whose value holds no record, an input time of an input the
// join does not have — and starts a node on it: the node skips and counts
// them, and joins what comes next.
func TestCorruptJoinBufferEntriesAreSkipped(t *testing.T) {
	b := startBroker(t, "orders", "payments", "out", "dlq")
	brokers := []string{b.Addr()}
	p := loadPipeline(t, `name: cjoin
source: {topics: [orders]}
steps:
  - name: match
    kind: join
    stream: payments
    type: inner
    window: {before: 1s, after: 1s}
sink: {topic: out}
dead_letter: {topic: dlq}
delivery: exactly_once
commit_interval: 50ms
`)
	n1 := startStatefulNode(t, brokers, p, "one", t.TempDir())
	await.Until(t, 10*time.Millisecond, func() bool { return len(n1.node.Status().Tasks) > 0 },
		func() string { return "the node runs no task" })
	n1.stop(t)
	// A buffer key (side 0, key "o1", time 0, sequence 0) whose value is
	// the matched flag and no record.
	bufKey := append(append([]byte{0, 2}, "o1"...), make([]byte, 16)...)
	bufKey[4] = 0x80 // the time's sign bit flipped: time 0
	inputTime := []byte("w\x00\x00\x03\xe8")
	perPartition := 3.0
	for part := range int32(4) {
		recs := []*kgo.Record{{Key: bufKey, Value: []byte{0}}, {Key: inputTime, Value: make([]byte, 8)}}
		if testkafka.Real() {
			// Apache Kafka refuses a record without a key in a compacted
			// topic (INVALID_RECORD): only the embedded broker can hold one.
			perPartition = 2
		} else {
			recs = append(recs, &kgo.Record{Value: []byte("no key")})
		}
		produceTo(t, brokers, host.ChangelogTopic("cjoin", "match"), part, recs...)
	}
	n2 := startStatefulNode(t, brokers, p, "two", t.TempDir())
	await.Until(t, 10*time.Millisecond, func() bool { return corruptEntries(t, n2.node, "match", "store") >= 4*perPartition },
		func() string {
			return fmt.Sprintf("%v corrupt entries reported, want %v", corruptEntries(t, n2.node, "match", "store"), 4*perPartition)
		})
	const base = int64(1700000000000)
	var orders, payments []abi.Record
	for i := range 10 {
		k := []byte(fmt.Sprintf("o%d", i))
		orders = append(orders, abi.Record{Key: k, Value: []byte(fmt.Sprintf(`{"order":%d}`, i)), Timestamp: base + int64(i)*100})
		payments = append(payments, abi.Record{Key: k, Value: []byte(fmt.Sprintf(`{"pay":%d}`, i)), Timestamp: base + int64(i)*100 + 50})
	}
	produceAll(t, brokers, "orders", orders)
	produceAll(t, brokers, "payments", payments)
	out := consumeAll(t, b, "out", 10, time.Second)
	n2.stop(t)
	if len(out) != 10 {
		t.Fatalf("%d joined records, want 10", len(out))
	}
	if got := corruptEntries(t, n2.node, "match", "store"); got != 4*perPartition {
		t.Fatalf("%v corrupt entries reported, want %v", got, 4*perPartition)
	}
}
