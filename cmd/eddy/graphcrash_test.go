package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
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
	"github.com/eddy-streams/eddy/nexmark"
)

// TestCrashGraphExactlyOnce runs a three-stage graph under exactly_once and
// kills its node with SIGKILL five times mid-job, once restarting it on an empty
// data directory: a branch step sends payments (records with an amount of
// 100 or more, the filter guest) to the topic large and bids on; bids are
// counted per auction and second (nx-count); one step (from:) copies every
// count to the topic counts (to:), another tags each count with its window,
// re-keys it by the window and aggregates again into the second's hot
// auctions (nx-q5), split one per record into the sink. The three outputs
// must equal references computed from the input: every payment, count and
// hot auction exactly once.
//
// Against Apache Kafka only (make test-kafka): on the embedded broker it
// fails in more than half the runs with some windows of the first aggregate
// counted too high, where Apache Kafka 4.4 gave exact results in every run
// so far. The embedded broker hands the node that starts after the second
// kill the first records of a long-aborted transaction of the repartition
// topic (docs/kafka.md, "Open: the embedded broker hands a restarted group
// part of an aborted transaction").
// EDDY_CRASH_GRAPH_EMBEDDED=1 runs it on the embedded broker anyway;
// EDDY_CRASH_LOG_LEVEL=info (or debug) shows the nodes' logs. On a wrong
// count it logs where the records came from: the first wrong window's
// changelog history, its input records read from the start and from each
// node's starting offset, the repartition topic's duplicates, and the
// transactions of the changelog, output and repartition topics as runs of
// each producer epoch and their markers.
func TestCrashGraphExactlyOnce(t *testing.T) {
	if !testkafka.Real() && os.Getenv("EDDY_CRASH_GRAPH_EMBEDDED") == "" {
		t.Skip("Apache Kafka only (EDDY_TEST_KAFKA; make test-kafka): the embedded broker hands a restarted node part of an aborted transaction of the repartition topic, see docs/kafka.md (EDDY_CRASH_GRAPH_EMBEDDED=1 runs it anyway)")
	}
	forMemberships(t, crashGraph, membership{name: staticMember.name, args: staticMember.args, kills: 5})
}

func crashGraph(t *testing.T, bin string, m membership) {
	brokers := brokerProc(t, bin, "bids", "large", "counts", "out", "dlq", "late")
	const (
		base  = int64(1700000000000)
		total = 300_000 // bid i at base + i ms: 300 s
	)
	type win struct {
		auction int64
		sec     int64
	}
	rng := rand.New(rand.NewPCG(21, 22))
	counts := map[win]int64{}
	var recs []abi.Record
	large := map[string]bool{} // the payments' values
	for i := range total {
		if i%97 == 0 {
			v := fmt.Sprintf(`{"amount":%d,"payment":%d}`, 100+rng.IntN(900), i)
			large[v] = true
			recs = append(recs, abi.Record{Key: []byte(strconv.Itoa(i % 16)), Value: []byte(v), Timestamp: base + int64(i)})
			continue
		}
		a := int64(rng.IntN(40))
		if rng.IntN(3) == 0 {
			a = int64(rng.IntN(5)) // a few hot auctions
		}
		at := base + int64(i)
		counts[win{a, (at - base) / 1000}]++
		recs = append(recs, abi.Record{Key: []byte(strconv.Itoa(i % 16)), Value: fmt.Appendf(nil, `{"auction":%d,"bidder":%d,"price":1}`, a, i), Timestamp: at})
	}
	for k := range 16 { // close every window of the input; their own stay open
		recs = append(recs, abi.Record{Key: []byte(strconv.Itoa(k)), Value: []byte(`{"auction":999999,"bidder":0,"price":1}`), Timestamp: base + 3_600_000})
	}
	hot := map[nexmark.Q5Result]bool{}
	best := map[int64]int64{}
	for w, n := range counts {
		best[w.sec] = max(best[w.sec], n)
	}
	for w, n := range counts {
		if n == best[w.sec] {
			start := base + w.sec*1000
			hot[nexmark.Q5Result{Start: start, End: start + 1000, Auction: w.auction, Count: n}] = true
		}
	}
	produce(t, brokers, "bids", recs) // hostile_test.go
	count, _ := filepath.Abs(td("go/nx-count.wasm"))
	q5, _ := filepath.Abs(td("go/nx-q5.wasm"))
	pass, _ := filepath.Abs(td("go/passthrough.wasm"))
	filter, _ := filepath.Abs(td("go/filter.wasm"))
	pipe := filepath.Join(t.TempDir(), "p.yaml")
	os.WriteFile(pipe, []byte(fmt.Sprintf(`name: gcrash
source: {topics: [bids]}
steps:
  - name: kinds
    kind: branch
    branches: [{name: large, function: %[4]s, to: large}, {name: bids}]
  - {name: by-auction, kind: key_by, field: auction, from: [kinds.bids]}
  - {name: count, kind: aggregate, function: %[1]s, window: {type: tumbling, size: 1s}}
  - {name: copy, kind: map, function: %[3]s, from: [count], to: counts}
  - {name: tag, kind: map, function: %[2]s, from: [count]}
  - {name: by-window, kind: key_by, field: end}
  - {name: hot, kind: aggregate, function: %[2]s, window: {type: tumbling, size: 1s}}
  - {name: split, kind: flat_map, function: %[2]s}
sink: {topic: out}
dead_letter: {topic: dlq}
late: {topic: late}
delivery: exactly_once
commit_interval: 100ms
batch_size: 200
`, count, q5, pass, filter)), 0o644)
	cache, data := t.TempDir(), t.TempDir()
	start := func(dataDir string) *exec.Cmd { return nodeProc(t, bin, cache, pipe, brokers[0], dataDir, m) }
	adm, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		t.Fatal(err)
	}
	defer adm.Close()
	rng2 := rand.New(rand.NewPCG(23, 24))
	killOffsets := map[int32][]int64{} // the count stage's input offsets at each kill
	for kill := 0; kill < m.kills; kill++ {
		dir := data
		if kill == 2 {
			dir = t.TempDir() // a fresh node: every store comes from its changelog
		}
		old := memberIDs(brokers, "gcrash")
		node := start(dir)
		if m.settle() {
			awaitJoined(t, brokers, "gcrash", old)
		}
		killMidJob(node, adm, "counts", time.Duration(50+rng2.IntN(400))*time.Millisecond)
		offs, say := groupOffsets(brokers, "gcrash", "gcrash-by-auction-repartition")
		for p, o := range offs {
			killOffsets[p] = append(killOffsets[p], o)
		}
		t.Logf("SIGKILL %d: %d committed counts, %d hot auctions so far; the group's offsets of the count stage's input: %s",
			kill+1, committed(brokers, "counts"), committed(brokers, "out"), say)
	}
	old := memberIDs(brokers, "gcrash")
	node := start(data)
	// Every hot auction out, or — when counts are wrong, the hot auctions
	// Eddy finds are not the reference's — every count out and the hot
	// auctions of those counts: the checks below then say what is wrong.
	await.Until(t, 100*time.Millisecond, func() bool {
		out := committed(brokers, "out")
		return out >= len(hot) || committed(brokers, "counts") >= len(counts) && out >= hotOfCounts(brokers, base)
	}, func() string {
		return fmt.Sprintf("%d of %d hot auctions came out", committed(brokers, "out"), len(hot))
	})
	awaitJoined(t, brokers, "gcrash", old)
	stopCleanly(t, node, "the last node")
	testkafka.AwaitSettled(t, brokers, "out", "counts", "large")

	gotCounts := map[win]int{}
	bad := 0
	var firstBad win
	host.Consume(context.Background(), brokers, "counts", host.ConsumeOptions{Idle: time.Second}, func(r abi.Record, meta host.Meta) error {
		var v struct{ Count int64 }
		json.Unmarshal(r.Value, &v)
		var start int64
		for _, h := range r.Headers {
			if h.Key == "eddy.window.start" {
				start, _ = strconv.ParseInt(string(h.Value), 10, 64)
			}
		}
		a, _ := strconv.ParseInt(string(r.Key), 10, 64)
		w := win{a, (start - base) / 1000}
		gotCounts[w]++
		if counts[w] != v.Count {
			if bad == 0 {
				firstBad = w
			}
			bad++
			if bad <= 3 || bad%40 == 0 {
				t.Errorf("counts: auction %d in second %d: %d, want %d (counts p%d@%d)", a, w.sec, v.Count, counts[w], meta.Partition, meta.Offset)
			}
		}
		return nil
	})
	dups := 0
	for w := range counts {
		if gotCounts[w] != 1 {
			dups++
			if dups <= 3 {
				t.Errorf("counts: auction %d in second %d came out %d times", w.auction, w.sec, gotCounts[w])
			}
		}
	}
	gotHot := map[nexmark.Q5Result]int{}
	host.Consume(context.Background(), brokers, "out", host.ConsumeOptions{Idle: time.Second}, func(r abi.Record, _ host.Meta) error {
		var v nexmark.Q5Result
		if err := json.Unmarshal(r.Value, &v); err != nil {
			return err
		}
		gotHot[v]++
		return nil
	})
	missing, extra := 0, 0
	for h := range hot {
		if gotHot[h] != 1 {
			missing++
			if missing <= 3 {
				t.Errorf("hot auction %+v came out %d times", h, gotHot[h])
			}
		}
	}
	for h := range gotHot {
		if !hot[h] {
			extra++
			if extra <= 3 {
				t.Errorf("hot auction %+v is not in the reference", h)
			}
		}
	}
	gotLarge := map[string]int{}
	host.Consume(context.Background(), brokers, "large", host.ConsumeOptions{Idle: time.Second}, func(r abi.Record, _ host.Meta) error {
		gotLarge[string(r.Value)]++
		return nil
	})
	wrongLarge := 0
	for v := range large {
		if gotLarge[v] != 1 {
			wrongLarge++
			if wrongLarge <= 3 {
				t.Errorf("large: payment %s came out %d times", v, gotLarge[v])
			}
		}
	}
	if bad+dups > 0 {
		// Where the double counts come from: the same bid twice in the
		// repartition topic (stage 0 wrote it in two committed
		// transactions), or once (the count stage read it twice).
		seen := map[string][]string{}
		host.Consume(context.Background(), brokers, "gcrash-by-auction-repartition", host.ConsumeOptions{Idle: time.Second}, func(r abi.Record, m host.Meta) error {
			if r.Value == nil {
				return nil
			}
			from := ""
			for _, h := range r.Headers {
				if h.Key == "eddy.repartition.from" {
					from = string(h.Value)
				}
			}
			seen[string(r.Value)] = append(seen[string(r.Value)], fmt.Sprintf("p%d@%d from %s", m.Partition, m.Offset, from))
			return nil
		})
		twice := 0
		for v, at := range seen {
			if len(at) > 1 {
				twice++
				if twice <= 5 {
					t.Logf("repartition: %s at %v", v, at)
				}
			}
		}
		t.Logf("repartition topic: %d distinct records, %d of them more than once; %d late records", len(seen), twice, committed(brokers, "late"))
		start := base + firstBad.sec*1000
		keyHistory(t, brokers, "gcrash-count-changelog", []byte(strconv.FormatInt(firstBad.auction, 10)), start, start+1000, killOffsets)
		txnTimeline(t, brokers, "gcrash-count-changelog")
		txnTimeline(t, brokers, "counts")
		txnTimeline(t, brokers, "gcrash-by-auction-repartition")
	}
	if bad+dups+missing+extra+wrongLarge > 0 || len(gotCounts) != len(counts) || len(gotLarge) != len(large) {
		t.Fatalf("counts: %d of %d windows, %d wrong, %d not exactly once; hot auctions: %d of %d not exactly once, %d not in the reference; "+
			"payments: %d of %d not exactly once, %d in all",
			len(gotCounts), len(counts), bad, dups, missing, len(hot), extra, wrongLarge, len(large), len(gotLarge))
	}
	t.Logf("%d payments, %d counts and %d hot auctions, each once", len(large), len(counts), len(hot))
}

// txnTimeline logs, per partition of topic, the runs of records of each
// producer epoch and the transaction markers between them (diagnostics).
func txnTimeline(t *testing.T, brokers []string, topic string) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadUncommitted()), kgo.KeepControlRecords())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	type run struct {
		pid         int64
		epoch       int16
		ctrl        bool
		first, last int64
		n           int
		key         string
	}
	runs := map[int32][]*run{}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			break
		}
		fs.EachRecord(func(r *kgo.Record) {
			ctrl := r.Attrs.IsControl()
			rs := runs[r.Partition]
			if len(rs) > 0 {
				l := rs[len(rs)-1]
				if l.pid == r.ProducerID && l.epoch == r.ProducerEpoch && !ctrl && !l.ctrl {
					l.last, l.n = r.Offset, l.n+1
					return
				}
			}
			k := ""
			if ctrl && len(r.Key) >= 4 {
				k = map[byte]string{0: "ABORT", 1: "COMMIT"}[r.Key[3]]
			}
			runs[r.Partition] = append(rs, &run{pid: r.ProducerID, epoch: r.ProducerEpoch, ctrl: ctrl, first: r.Offset, last: r.Offset, n: 1, key: k})
		})
	}
	for p, rs := range runs {
		line := ""
		for _, r := range rs {
			if r.ctrl {
				line += fmt.Sprintf(" %s(%d/%d)@%d", r.key, r.pid%1000, r.epoch, r.first)
			} else {
				line += fmt.Sprintf(" [%d/%d %d-%d]", r.pid%1000, r.epoch, r.first, r.last)
			}
		}
		t.Logf("%s p%d:%s", topic, p, line)
	}
}

// keyHistory logs every record of a count changelog for the window
// [start, end) of key (the aggregate store's key: 'a', the key's length,
// the key, start and end), committed or not, with its producer and the
// transaction markers of the producers that wrote it, in offset order.
func keyHistory(t *testing.T, brokers []string, topic string, key []byte, start, end int64, starts map[int32][]int64) {
	sk := binary.AppendUvarint([]byte{'a'}, uint64(len(key)))
	sk = append(sk, key...)
	sk = binary.BigEndian.AppendUint64(sk, uint64(start))
	sk = binary.BigEndian.AppendUint64(sk, uint64(end))
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadUncommitted()), kgo.KeepControlRecords())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var part int32 = -1
	writers := map[int64]bool{}
	var lines []string
	for ctx.Err() == nil {
		fs := cl.PollFetches(ctx)
		fs.EachRecord(func(r *kgo.Record) {
			switch {
			case bytes.Equal(r.Key, sk):
				part = r.Partition
				writers[r.ProducerID] = true
				lines = append(lines, fmt.Sprintf("p%d@%d pid %d/%d value %x", r.Partition, r.Offset, r.ProducerID, r.ProducerEpoch, r.Value))
			case r.Attrs.IsControl() && len(r.Key) >= 4 && r.Partition == part && writers[r.ProducerID]:
				lines = append(lines, fmt.Sprintf("p%d@%d pid %d/%d %s", r.Partition, r.Offset, r.ProducerID, r.ProducerEpoch,
					map[byte]string{0: "ABORT", 1: "COMMIT"}[r.Key[3]]))
			}
		})
	}
	t.Logf("%s: history of key %s window [%d, %d):", topic, key, start, end)
	for _, l := range lines {
		t.Log("  " + l)
	}
	// The window's records in the count stage's input, committed ones,
	// read from the start and from where each node started.
	for _, from := range append([]int64{0}, starts[part]...) {
		in, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{
			"gcrash-by-auction-repartition": {part: kgo.NewOffset().At(from)}}), kgo.FetchIsolationLevel(kgo.ReadCommitted()))
		if err != nil {
			t.Fatal(err)
		}
		ctx2, cancel2 := context.WithTimeout(context.Background(), 5*time.Second)
		var at []string
		for ctx2.Err() == nil {
			in.PollFetches(ctx2).EachRecord(func(r *kgo.Record) {
				if ts := r.Timestamp.UnixMilli(); bytes.Equal(r.Key, key) && ts >= start && ts < end {
					at = append(at, fmt.Sprintf("%d(pid %d/%d)", r.Offset, r.ProducerID, r.ProducerEpoch))
				}
			})
		}
		cancel2()
		in.Close()
		t.Logf("its %d records in gcrash-by-auction-repartition p%d read from %d: %s", len(at), part, from, strings.Join(at, " "))
	}
}

// groupOffsets says where group's committed offsets of topic are, by
// partition.
func groupOffsets(brokers []string, group, topic string) (map[int32]int64, string) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		return nil, err.Error()
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	offs, err := kadm.NewClient(cl).FetchOffsets(ctx, group)
	if err != nil {
		return nil, err.Error()
	}
	at := map[int32]int64{}
	var b strings.Builder
	for p := int32(0); ; p++ {
		o, ok := offs.Lookup(topic, p)
		if !ok {
			break
		}
		at[p] = o.At
		fmt.Fprintf(&b, "p%d@%d ", p, o.At)
	}
	return at, b.String()
}

// hotOfCounts returns how many hot auctions the counts in the topic counts
// make (the auctions with a second's most bids), whether or not the counts
// are right: what the pipeline's second aggregate has to emit.
func hotOfCounts(brokers []string, base int64) int {
	best, n := map[int64]int64{}, map[int64]int{}
	host.Consume(context.Background(), brokers, "counts", host.ConsumeOptions{Idle: 300 * time.Millisecond}, func(r abi.Record, _ host.Meta) error {
		var v struct{ Count int64 }
		json.Unmarshal(r.Value, &v)
		start := int64(-1)
		for _, h := range r.Headers {
			if h.Key == "eddy.window.start" {
				start, _ = strconv.ParseInt(string(h.Value), 10, 64)
			}
		}
		switch sec := (start - base) / 1000; {
		case v.Count > best[sec]:
			best[sec], n[sec] = v.Count, 1
		case v.Count == best[sec]:
			n[sec]++
		}
		return nil
	})
	total := 0
	for _, k := range n {
		total += k
	}
	return total
}
