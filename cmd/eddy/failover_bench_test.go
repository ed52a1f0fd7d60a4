package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/host"
	"github.com/eddy-streams/eddy/internal/testkafka"
)

// failoverParts is the partitions of the benchmark's topics: 4 on each of
// its two nodes.
const failoverParts = 8

// failoverValue is the size of the state's values: random bytes, which do
// not compress, so that the state's size is what the changelog and the
// stores hold.
const failoverValue = 1024

// failoverSession is the nodes' --session-timeout unless
// EDDY_FAILOVER_SESSION says otherwise: how long the group waits for the
// killed node before it moves its partitions. kfake allows no less than
// 6 s unless told (group.min.session.timeout.ms), which the benchmark
// lowers.
var failoverSession = 3 * time.Second

// BenchmarkFailover is issue 21's acceptance benchmark: how long the
// partitions of a node killed with SIGKILL take to produce output again on
// the other node, without a standby copy of their state (the node that
// takes them over restores it all from the changelog) and with one (it
// reads the tail), in the same run.
//
// Each variant is a pipeline of its own (its own group, topics and
// changelog) on one `eddy broker` process: the counter guest (keyed count
// in keyed state) under exactly_once, 8 partitions, two `eddy run` nodes
// (static members, --session-timeout 3s or EDDY_FAILOVER_SESSION, Badger data directories). Its
// state, EDDY_FAILOVER_STATE_MB MiB (default 128) of distinct keys with
// 1 KiB random values, is written to the changelog before the nodes start
// (the nodes restore it, and the standbys copy it); key-<p> holds the
// count 1000 in partition p. Node 2 starts first and restores every
// partition; node 1 joins once it has, so that it never held node 2's
// partitions (without a standby it then restores their whole state). Once
// each node holds 4 partitions, no restore runs and every standby has
// caught up, a trickle of records (one per
// partition every 20 ms, key key-<p>) runs through the pipeline; node 2
// is killed; the benchmark times, for each partition it held, how long
// until the output of an input produced after the kill arrives (read
// committed), and checks that the counts go on from 1000 without a gap or
// a repeat.
//
// Reported per variant (0standby, 1standby): s-to-output (the slowest of
// the partitions), s-detect (until node 1's status shows the partitions:
// the session timeout and the rebalance), s-detect-to-processed and
// s-detect-to-output (what the takeover itself costs), the records and
// MB node 1 restored (eddy_restore_records_total), ms-status-slowest,
// ms-metrics-slowest and their p99 (node 1's answers to /v1/status and
// /metrics, asked every 50 ms from the kill until the output is back,
// restore included); and the broker's peak RSS (it holds the topics in
// memory). The log adds the medians and the CPU time the broker, node 1
// and the benchmark used from the kill until the output was back.
// EDDY_FAILOVER_STANDBYS=0 (or 1) runs one variant only.
//
//	EDDY_FAILOVER_STATE_MB=2048 go test ./cmd/eddy -run XXX -bench BenchmarkFailover -benchtime 1x -timeout 60m
//	EDDY_FAILOVER_SESSION=1s go test ./cmd/eddy -run XXX -bench BenchmarkFailover -benchtime 1x
func BenchmarkFailover(b *testing.B) {
	if testkafka.Real() {
		b.Skip("runs its own eddy broker")
	}
	stateMB := 128
	if s := os.Getenv("EDDY_FAILOVER_STATE_MB"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			b.Fatalf("EDDY_FAILOVER_STATE_MB=%q: not a positive number", s)
		}
		stateMB = n
	}
	if s := os.Getenv("EDDY_FAILOVER_SESSION"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d < 100*time.Millisecond {
			b.Fatalf("EDDY_FAILOVER_SESSION=%q: want a duration of at least 100ms", s)
		}
		failoverSession = d
	}
	variants := []int{0, 1}
	if s := os.Getenv("EDDY_FAILOVER_STANDBYS"); s != "" {
		variants = nil
		for _, f := range strings.Split(s, ",") {
			n, err := strconv.Atoi(f)
			if err != nil || n < 0 || n > 1 {
				b.Fatalf("EDDY_FAILOVER_STANDBYS=%q: want 0, 1 or 0,1", s)
			}
			variants = append(variants, n)
		}
	}
	bin := buildEddy(b)
	brokers, broker := brokerProcOn(b, exec.Command, bin, "127.0.0.1", freePort(b))
	lowerMinSession(b, brokers)
	for b.Loop() {
		for _, standbys := range variants {
			r := failover(b, bin, brokers, broker.Process.Pid, stateMB, standbys)
			unit := func(u string) string { return fmt.Sprintf("%s-%dstandby", u, standbys) }
			b.ReportMetric(r.toOutput.Seconds(), unit("s-to-output"))
			b.ReportMetric((r.toOutput - r.detect).Seconds(), unit("s-detect-to-output"))
			b.ReportMetric(r.detect.Seconds(), unit("s-detect"))
			b.ReportMetric(r.processed.Seconds(), unit("s-to-processed"))
			b.ReportMetric((r.processed - r.detect).Seconds(), unit("s-detect-to-processed"))
			b.ReportMetric(float64(r.restored), unit("records-restored"))
			b.ReportMetric(ms(r.status.max), unit("ms-status-slowest"))
			b.ReportMetric(ms(r.metrics.max), unit("ms-metrics-slowest"))
			b.ReportMetric(ms(r.status.p99), unit("ms-status-p99"))
			b.ReportMetric(ms(r.metrics.p99), unit("ms-metrics-p99"))
			b.ReportMetric(float64(r.restored)*float64(r.recordBytes)/1e6, unit("MB-restored"))
		}
	}
	b.ReportMetric(float64(peakRSS(broker.Process.Pid))/1e6, "MB-broker-peak-RSS")
	b.ReportMetric(0, "ns/op")
}

// lowerMinSession lets the group take the nodes' session timeout (failoverSession):
// kfake refuses a join whose session timeout is under its
// group.min.session.timeout.ms, 6 s by default (as Apache Kafka's).
func lowerMinSession(b *testing.B, brokers []string) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		b.Fatal(err)
	}
	defer cl.Close()
	ms := strconv.Itoa(int(failoverSession.Milliseconds()))
	rs, err := kadm.NewClient(cl).AlterBrokerConfigs(context.Background(),
		[]kadm.AlterConfig{{Name: "group.min.session.timeout.ms", Value: &ms}})
	if err == nil {
		for _, r := range rs {
			if r.Err != nil {
				err = r.Err
			}
		}
	}
	if err != nil {
		b.Fatalf("setting the broker's group.min.session.timeout.ms: %v", err)
	}
}

// failoverResult is one variant's measure.
type failoverResult struct {
	toOutput    time.Duration // from the kill until every partition's output is back
	detect      time.Duration // from the kill until node 1's status holds the partitions
	processed   time.Duration // from the kill until node 1's output is written (uncommitted)
	restored    int64         // records node 1 restored meanwhile
	recordBytes int           // the bytes of a state record (key and value)
	// status and metrics are node 1's answers to status and metrics,
	// asked every 50 ms from the kill until the output was back
	// (probeAdmin).
	status, metrics latencies
	// cpu is the CPU time the broker, node 1 and the benchmark's own
	// process (its probes, producer and readers) used meanwhile.
	cpu [3]time.Duration
}

// latencies sums up a series of answer times.
type latencies struct {
	n             int
	p50, p99, max time.Duration
}

func summarize(ds []time.Duration) latencies {
	if len(ds) == 0 {
		return latencies{}
	}
	ds = slices.Clone(ds)
	slices.Sort(ds)
	at := func(q float64) time.Duration { return ds[min(len(ds)-1, int(q*float64(len(ds))))] }
	return latencies{n: len(ds), p50: at(0.5), p99: at(0.99), max: ds[len(ds)-1]}
}

func (l latencies) String() string {
	r := func(d time.Duration) time.Duration { return d.Round(100 * time.Microsecond) }
	return fmt.Sprintf("%d asks, median %s, p99 %s, slowest %s", l.n, r(l.p50), r(l.p99), r(l.max))
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1e3 }

// failover runs one variant: a pipeline with standbys standby replicas, its
// state written to its changelog, two nodes, the kill of one.
func failover(b *testing.B, bin string, brokers []string, brokerPid, stateMB, standbys int) failoverResult {
	ctx := context.Background()
	name := fmt.Sprintf("failover%d", standbys)
	in, out := name+"-in", name+"-out"
	changelog := host.ChangelogTopic(name, "count")
	if err := host.CreateTopics(ctx, brokers, failoverParts, in, out); err != nil {
		b.Fatal(err)
	}
	if err := host.CreateCompactedTopics(ctx, brokers, failoverParts, changelog); err != nil {
		b.Fatal(err)
	}
	began := time.Now()
	records, recordBytes := writeState(b, brokers, changelog, stateMB)
	b.Logf("%s: wrote %d state records (%d MiB) to %s in %s; broker RSS %d MB", name, records, stateMB, changelog,
		time.Since(began).Round(100*time.Millisecond), rss(brokerPid)/1e6)

	counter, _ := filepath.Abs(td("go/counter.wasm"))
	pipe := filepath.Join(b.TempDir(), "p.yaml")
	if err := os.WriteFile(pipe, []byte(fmt.Sprintf(`name: %s
source: {topics: [%s]}
steps:
  - {name: count, kind: map, function: %s, state: true}
sink: {topic: %s}
delivery: exactly_once
commit_interval: 100ms
standby_replicas: %d
`, name, in, counter, out, standbys)), 0o644); err != nil {
		b.Fatal(err)
	}
	cache := b.TempDir()
	admins := [2]string{}
	nodes := [2]*exec.Cmd{}
	defer func() {
		for _, n := range nodes {
			if n != nil && n.ProcessState == nil {
				n.Process.Signal(syscall.SIGTERM)
				n.Wait()
			}
		}
	}()
	// Node 2, the one killed, starts first and restores every partition;
	// node 1 joins once it has, and takes its 4 (after warming them up).
	// Node 1 so never held node 2's partitions, and without a standby
	// restores their whole state when it takes them over (two nodes
	// started at once would give every partition to the first to join for
	// a while: its Badger would then hold a stale copy of all).
	began = time.Now()
	for _, i := range []int{1, 0} {
		admins[i] = "127.0.0.1:" + strconv.Itoa(freePort(b))
		args := append(nodeArgs(cache, pipe, brokers[0], b.TempDir(), staticMember),
			"--admin-addr", admins[i], "--session-timeout", failoverSession.String())
		nodes[i] = startNode(b, exec.Command(bin, args...), os.Stderr)
		if i == 0 {
			break
		}
		awaitFor(b, 30*time.Minute, func() (bool, string) {
			st, err := nodeStatus(admins[1])
			if err != nil {
				return false, err.Error()
			}
			return len(st.Partitions[in]) == failoverParts && len(st.Restores) == 0,
				fmt.Sprintf("node 2 holds %v, restoring %d stores", st.Partitions[in], len(st.Restores))
		})
		b.Logf("%s: node 2 alone restored the state in %s", name, time.Since(began).Round(100*time.Millisecond))
	}

	// Ready: each node holds 4 partitions, restores nothing, and (with
	// standbys) has caught up its copies of the other's 4, and keeps the same
	// partitions (a warm-up that caught up moves partitions
	// with a rebalance of its own): readyPolls readings in a row agree.
	const readyPolls = 100 // 20 ms apart (awaitFor)
	readyRun, readyHeld := 0, ""
	awaitFor(b, 30*time.Minute, func() (bool, string) {
		ok, says, held := failoverReady(admins, in, changelog, standbys)
		if !ok || held != readyHeld {
			readyRun, readyHeld = 0, held
			return false, says
		}
		readyRun++
		return readyRun >= readyPolls, says
	})
	b.Logf("%s: nodes ready (restored, standbys caught up) %s after their start; broker RSS %d MB", name,
		time.Since(began).Round(100*time.Millisecond), rss(brokerPid)/1e6)
	st2, err := nodeStatus(admins[1])
	if err != nil {
		b.Fatal(err)
	}
	victim := st2.Partitions[in]
	if len(victim) != failoverParts/2 {
		b.Fatalf("%s: node 2 holds %v once the nodes were ready, want %d partitions", name, victim, failoverParts/2)
	}

	// Read the output: for each input partition, when each count arrived.
	type seen struct {
		count int
		at    time.Time
	}
	var mu sync.Mutex
	outs := map[int32][]seen{}    // read_committed
	written := map[int32][]seen{} // read_uncommitted: processed, not yet committed
	readCtx, stopReading := context.WithCancel(ctx)
	var readers sync.WaitGroup
	for _, uncommitted := range []bool{false, true} {
		into := outs
		if uncommitted {
			into = written
		}
		readers.Go(func() {
			host.Consume(readCtx, brokers, out, host.ConsumeOptions{ReadUncommitted: uncommitted}, func(r abi.Record, _ host.Meta) error {
				// The sink partitions by key: key-<p> counts the inputs of
				// partition p.
				n, err := strconv.Atoi(string(r.Value))
				ps, ok := strings.CutPrefix(string(r.Key), "key-")
				p, perr := strconv.Atoi(ps)
				if err != nil || !ok || perr != nil || p < 0 || p >= failoverParts {
					b.Errorf("output %q=%q: not a count of an input partition's key", r.Key, r.Value)
					return nil
				}
				mu.Lock()
				into[int32(p)] = append(into[int32(p)], seen{n, time.Now()})
				mu.Unlock()
				return nil
			})
		})
	}

	// The trickle: input i of partition p (from 1) makes key-<p>'s
	// count 1000+i.
	var issued [failoverParts]atomic.Int64
	trickle := newPartitionedProducer(b, brokers)
	stopTrickle := make(chan struct{})
	trickleDone := make(chan struct{})
	go func() {
		defer close(trickleDone)
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stopTrickle:
				return
			case <-tick.C:
			}
			for p := range int32(failoverParts) {
				i := issued[p].Add(1)
				trickle.Produce(ctx, &kgo.Record{Topic: in, Partition: p, Key: []byte("key-" + strconv.Itoa(int(p))),
					Value: []byte(strconv.FormatInt(i, 10))}, func(_ *kgo.Record, err error) {
					if err != nil {
						b.Errorf("producing to %s: %v", in, err)
					}
				})
			}
		}
	}()
	// Let the pipeline run a while: every partition outputs.
	awaitFor(b, time.Minute, func() (bool, string) {
		mu.Lock()
		defer mu.Unlock()
		return len(outs) == failoverParts, fmt.Sprintf("%d partitions output", len(outs))
	})
	time.Sleep(2 * time.Second)

	before := restoreRecords(b, admins[0])
	var after [failoverParts]int64 // the last input issued before the kill
	t0 := time.Now()
	nodes[1].Process.Signal(syscall.SIGKILL)
	for p := range after {
		after[p] = issued[p].Load()
	}
	nodes[1].Wait()
	var r failoverResult
	r.recordBytes = recordBytes
	// Node 1's status and metrics are asked every 50 ms from the kill
	// until the output is back (the takeover, and the restore without a
	// standby): how long each answer took.
	probeDone := make(chan struct{})
	stopProbe := make(chan struct{})
	go func() {
		defer close(probeDone)
		r.status, r.metrics = probeAdmin(admins[0], stopProbe)
	}()
	pids := [3]int{brokerPid, nodes[0].Process.Pid, os.Getpid()}
	var cpu0 [3]time.Duration
	for i, pid := range pids {
		cpu0[i] = cpuTime(pid)
	}
	// Detection: node 1's status holds every partition.
	awaitFor(b, 5*time.Minute, func() (bool, string) {
		st, err := nodeStatus(admins[0])
		if err != nil {
			return false, err.Error()
		}
		return len(st.Partitions[in]) == failoverParts, fmt.Sprintf("node 1 holds %v", st.Partitions[in])
	})
	r.detect = time.Since(t0)
	// Output: every partition of node 2's has an output of an input
	// issued after the kill.
	// Processed: the same in the output read uncommitted, which shows
	// when node 1 processes the partitions again, before the killed
	// node's open transaction (which holds the partitions' last stable
	// offset) is aborted by the broker.
	back, processed := map[int32]time.Duration{}, map[int32]time.Duration{}
	awaitFor(b, 30*time.Minute, func() (bool, string) {
		mu.Lock()
		defer mu.Unlock()
		for _, p := range victim {
			for m, ss := range map[*map[int32]time.Duration][]seen{&back: outs[p], &processed: written[p]} {
				if _, ok := (*m)[p]; ok {
					continue
				}
				for _, s := range ss {
					if int64(s.count) > 1000+after[p] {
						(*m)[p] = s.at.Sub(t0)
						break
					}
				}
			}
		}
		return len(back) == len(victim) && len(processed) == len(victim), fmt.Sprintf("partitions back: %v, processed %v of %v", back, processed, victim)
	})
	close(stopProbe)
	<-probeDone
	for i, pid := range pids {
		r.cpu[i] = cpuTime(pid) - cpu0[i]
	}
	for _, d := range back {
		r.toOutput = max(r.toOutput, d)
	}
	for _, d := range processed {
		r.processed = max(r.processed, d)
	}
	r.restored = restoreRecords(b, admins[0]) - before
	b.Logf("%s: SIGKILL of node 2 (partitions %v): held by node 1 after %s, processed again after %v (max %s), output (committed) again after %v (max %s); node 1 restored %d records; broker RSS %d MB",
		name, victim, r.detect.Round(time.Millisecond), roundAll(processed), r.processed.Round(time.Millisecond), roundAll(back), r.toOutput.Round(time.Millisecond), r.restored, rss(brokerPid)/1e6)
	b.Logf("%s: node 1's answers meanwhile: status %s; metrics %s", name, r.status, r.metrics)
	b.Logf("%s: CPU meanwhile: broker %s, node 1 %s, the benchmark %s", name,
		r.cpu[0].Round(10*time.Millisecond), r.cpu[1].Round(10*time.Millisecond), r.cpu[2].Round(10*time.Millisecond))

	// Correctness: once the trickle stops and the output is settled, each
	// key's counts are 1001 up to 1000 plus its inputs, each once.
	close(stopTrickle)
	<-trickleDone
	if err := trickle.Flush(ctx); err != nil {
		b.Fatal(err)
	}
	trickle.Close()
	awaitFor(b, 5*time.Minute, func() (bool, string) {
		mu.Lock()
		defer mu.Unlock()
		var behind []string
		for p := range int32(failoverParts) {
			if s := outs[p]; len(s) == 0 || int64(s[len(s)-1].count) < 1000+issued[p].Load() {
				behind = append(behind, strconv.Itoa(int(p)))
			}
		}
		return len(behind) == 0, "partitions not at their last input: " + strings.Join(behind, ",")
	})
	stopReading()
	readers.Wait()
	for p := range int32(failoverParts) {
		var counts []int
		for _, s := range outs[p] {
			counts = append(counts, s.count)
		}
		n := int(issued[p].Load())
		slices.Sort(counts)
		counts = slices.Compact(counts)
		if len(counts) != n || len(outs[p]) != n || counts[0] != 1001 || counts[n-1] != 1000+n {
			b.Errorf("%s: key-%d: %d outputs, %d distinct counts from %d to %d; want %d, 1001 to %d",
				name, p, len(outs[p]), len(counts), counts[0], counts[len(counts)-1], n, 1000+n)
		}
	}
	nodes[0].Process.Signal(syscall.SIGTERM)
	if err := nodes[0].Wait(); err != nil {
		b.Errorf("%s: node 1 did not stop cleanly: %v", name, err)
	}
	// Free the broker's memory for the next variant.
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err == nil {
		kadm.NewClient(cl).DeleteTopics(ctx, in, out, changelog)
		cl.Close()
	}
	return r
}

// writeState writes stateMB MiB of distinct keys with random values to
// changelog, evenly over its partitions, and key-<p> with the count 1000
// to partition p. It returns the records written and their size.
func writeState(b *testing.B, brokers []string, changelog string, stateMB int) (int, int) {
	cl := newPartitionedProducer(b, brokers, kgo.ProducerBatchCompression(kgo.NoCompression()),
		kgo.ProducerBatchMaxBytes(1<<20), kgo.MaxBufferedBytes(64<<20))
	defer cl.Close()
	ctx := context.Background()
	const keyBytes = len("s0-0000000000")
	per := (stateMB << 20) / (keyBytes + failoverValue) / failoverParts
	var failed atomic.Value
	done := func(_ *kgo.Record, err error) {
		if err != nil {
			failed.Store(err)
		}
	}
	rnd := rand.NewChaCha8([32]byte{21})
	for i := range per {
		for p := range int32(failoverParts) {
			v := make([]byte, failoverValue)
			rnd.Read(v)
			cl.Produce(ctx, &kgo.Record{Topic: changelog, Partition: p, Key: fmt.Appendf(nil, "s%d-%010d", p, i), Value: v}, done)
		}
	}
	for p := range int32(failoverParts) {
		cl.Produce(ctx, &kgo.Record{Topic: changelog, Partition: p, Key: []byte("key-" + strconv.Itoa(int(p))), Value: []byte("1000")}, done)
	}
	if err := cl.Flush(ctx); err != nil {
		b.Fatal(err)
	}
	if err, _ := failed.Load().(error); err != nil {
		b.Fatalf("writing %s: %v", changelog, err)
	}
	return per*failoverParts + failoverParts, keyBytes + failoverValue
}

// newPartitionedProducer is a client that writes each record to the
// partition it names.
func newPartitionedProducer(b *testing.B, brokers []string, opts ...kgo.Opt) *kgo.Client {
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(brokers...),
		kgo.RecordPartitioner(kgo.ManualPartitioner())}, opts...)...)
	if err != nil {
		b.Fatal(err)
	}
	return cl
}

// failoverReady reports whether each node holds half the partitions of in,
// restores nothing and has caught up standbys copies of the other's, and
// says what each node holds; held is the nodes' partitions, to compare.
func failoverReady(admins [2]string, in, changelog string, standbys int) (ready bool, says string, held string) {
	var said []string
	ready = true
	for i, a := range admins {
		st, err := nodeStatus(a)
		if err != nil {
			return false, err.Error(), ""
		}
		held += fmt.Sprint(st.Partitions[in])
		// A copy is a store each of the step's (its keyed state and
		// its timers, each with a changelog).
		var lag int64
		copies := 0
		for _, s := range st.Standbys {
			lag += s.Lag
			if s.Warmup {
				ready = false
			}
			if s.Changelog == changelog {
				copies++
			}
		}
		said = append(said, fmt.Sprintf("node %d: partitions %v, %d restores, %d standby copies lagging %d",
			i+1, st.Partitions[in], len(st.Restores), copies, lag))
		ready = ready && len(st.Partitions[in]) == failoverParts/2 && len(st.Restores) == 0 &&
			copies == standbys*failoverParts/2 && lag == 0
	}
	return ready, strings.Join(said, "; "), held
}

// probeAdmin asks a node's status (/v1/status?local=true) and metrics
// (/metrics) every 50 ms until stop, and sums up how long the answers
// took. A request that fails counts as an answer that took until it
// failed.
func probeAdmin(admin string, stop <-chan struct{}) (status, metrics latencies) {
	get := func(path string) time.Duration {
		began := time.Now()
		resp, err := http.Get("http://" + admin + path)
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		return time.Since(began)
	}
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	var ss, ms []time.Duration
	for {
		select {
		case <-stop:
			return summarize(ss), summarize(ms)
		case <-tick.C:
		}
		ss = append(ss, get("/v1/status?local=true"))
		ms = append(ms, get("/metrics"))
	}
}

// cpuTime is the CPU time (user and system) a process has used so far, 0
// if it cannot be read.
func cpuTime(pid int) time.Duration {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	// The fields after the command's closing parenthesis: utime and stime
	// are the 12th and 13th, in clock ticks (100 a second on Linux).
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	k, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(u+k) * 10 * time.Millisecond
}

// nodeStatus is a node's own status (its admin API's /v1/status, local).
func nodeStatus(admin string) (host.NodeStatus, error) {
	var st host.NodeStatus
	resp, err := http.Get("http://" + admin + "/v1/status?local=true")
	if err != nil {
		return st, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return st, fmt.Errorf("status of %s: %s", admin, resp.Status)
	}
	return st, json.NewDecoder(resp.Body).Decode(&st)
}

// restoreRecords is a node's eddy_restore_records_total.
func restoreRecords(b *testing.B, admin string) int64 {
	resp, err := http.Get("http://" + admin + "/metrics")
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		// eddy_restore_records_total{node="…",pipeline="…"} 123
		if f := strings.Fields(sc.Text()); len(f) == 2 && strings.HasPrefix(f[0], "eddy_restore_records_total") {
			v := f[1]
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				b.Fatalf("eddy_restore_records_total %q: %v", v, err)
			}
			return int64(f)
		}
	}
	b.Fatalf("%s/metrics: no eddy_restore_records_total", admin)
	return 0
}

// awaitFor polls cond every 20 ms until it holds, failing the benchmark
// with cond's last word after limit.
func awaitFor(b *testing.B, limit time.Duration, cond func() (bool, string)) {
	b.Helper()
	deadline := time.Now().Add(limit)
	for {
		ok, says := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("after %s: %s", limit, says)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// rss and peakRSS are a process's resident memory now and at its peak,
// in bytes (hostile_test.go's procStatus).
func rss(pid int) int64     { r, _ := procStatus(pid); return r }
func peakRSS(pid int) int64 { _, hwm := procStatus(pid); return hwm }

func roundAll(ds map[int32]time.Duration) map[int32]time.Duration {
	r := map[int32]time.Duration{}
	for p, d := range ds {
		r[p] = d.Round(time.Millisecond)
	}
	return r
}
