package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/internal/await"
	"github.com/eddy-streams/eddy/internal/netns"
	"github.com/eddy-streams/eddy/internal/testkafka"
)

// TestHostsOnANetwork runs `eddy broker` and three `eddy run` nodes on
// four hosts of a network on this machine (network namespaces joined by a
// bridge: each has its own network stack and address), under exactly_once
// with a windowed count, while the test produces input from the root
// namespace. Once the nodes process, node n2's link is taken down — the
// cable pulled, its process left running — until the broker has expired
// its session and moved its partitions to n1 and n3, then brought back.
//
// What it checks, and how:
//
//   - Nothing lost or duplicated: the committed output (read_committed)
//     holds every window of the input exactly once, with the reference's
//     count and sum. n2 was cut off in the middle of its work, with a
//     transaction open; had it been committed after its partitions moved,
//     its windows would be there twice.
//   - One owner at a time, as far as the output can show it. The window
//     results of a key go to one output partition, and a node writes a
//     key's windows in event-time order; an owner starts where the
//     committed output of its predecessor ends. So if two nodes had
//     committed work of one input partition in overlapping time, the
//     second would have gone back over windows the first had committed:
//     the test checks that in each output partition, in offset order
//     (commit order), each key's windows only go forward. Which node wrote
//     each record is its producer id (each node has its own transactional
//     id, hosts-<node>): the test reports each partition's runs of writers
//     and checks that, while n2 was cut off, others committed the output
//     of partitions n2 had, and n2 none. The nodes' logs (partitions
//     assigned, revoked, lost) say when each node thought it owned what;
//     an isolated node cannot hear that it lost its partitions, so its
//     view overlaps its successor's for a while: what matters, and what is
//     checked, is that nothing it did meanwhile was committed — the broker
//     refuses its transaction (fenced: the group's generation moved on, and
//     a node that took its partitions fenced its transactional id, which
//     aborted its open transaction; the test checks that one of them logged
//     it).
//   - n2 comes back: after the link is up it finds its producer fenced,
//     and eddy run starts a new node in its place on its data directory,
//     which rejoins the group and commits output again.
//
// It needs root and iproute2 (`ip`); without them it fails, saying so,
// unless EDDY_SKIP_NETNS=1.
func TestHostsOnANetwork(t *testing.T) {
	if testkafka.Real() {
		t.Skip("runs an `eddy broker` of its own on a host of a network of namespaces: it runs in the embedded pass, not against " + os.Getenv(testkafka.Env))
	}
	forMemberships(t, hostsOnANetwork, staticMember, dynamicMember)
}

func hostsOnANetwork(t *testing.T, bin string, m membership) {
	const (
		pipeline = "hosts"
		session  = 6 * time.Second // --session-timeout: the least Kafka allows by default
		// The nodes' transaction timeout: max(10 s, 10 × commit_interval).
		txnTimeout = 10 * time.Second
		perTick    = 250 // records produced every 100 ms
		base       = int64(1700000000000)
	)
	nodes := []string{"n1", "n2", "n3"}
	network := netns.New(t, append([]string{"broker"}, nodes...)...)
	brokerHost := network.Host("broker")
	brokers, _ := brokerProcOn(t, brokerHost.Command, bin, brokerHost.Addr, 9092, "in", "out", "dlq", "late")
	t.Logf("broker at %s; nodes at %s, %s and %s; the test at %s", brokers[0],
		network.Host("n1").Addr, network.Host("n2").Addr, network.Host("n3").Addr, network.Gateway)

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
delivery: exactly_once
commit_interval: 1s
batch_size: 100
`, pipeline, stats)), 0o644)

	// The nodes log at info, as JSON, each to a file the test reads.
	cache, logs := t.TempDir(), t.TempDir()
	lvl := "info"
	if os.Getenv("EDDY_CRASH_LOG_LEVEL") == "debug" {
		lvl = "debug"
	}
	procs := map[string]*exec.Cmd{}
	dataDirs := map[string]string{}
	start := func(name string) *exec.Cmd {
		f, err := os.OpenFile(filepath.Join(logs, name+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		if dataDirs[name] == "" {
			dataDirs[name] = t.TempDir()
		}
		args := append(nodeArgs(cache, pipe, brokers[0], dataDirs[name], m),
			"--log-level", lvl, "--log-format", "json", "--node-id", name, "--session-timeout", session.String())
		return startNode(t, network.Host(name).Command(bin, args...), f)
	}
	for _, name := range nodes {
		procs[name] = start(name)
	}
	// n2's exit is watched while the test runs (its process must not be
	// waited for twice).
	var n2exit chan error
	watchN2 := func() {
		n2exit = make(chan error, 1)
		go func(cmd *exec.Cmd, exit chan error) { exit <- cmd.Wait() }(procs["n2"], n2exit)
	}
	watchN2()
	n2exited := func() (error, bool) {
		select {
		case err := <-n2exit:
			n2exit <- err
			return err, true
		default:
			return nil, false
		}
	}

	adm, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		t.Fatal(err)
	}
	defer adm.Close()
	group := func() (string, map[string][]int32) { return groupMembers(adm, pipeline) }
	awaitGroup := func(what string, ok func(map[string][]int32) bool) map[string][]int32 {
		t.Helper()
		var state string
		var members map[string][]int32
		await.Until(t, 200*time.Millisecond, func() bool {
			state, members = group()
			return state == "Stable" && ok(members)
		}, func() string { return fmt.Sprintf("%s: group %s, members %v", what, state, members) })
		return members
	}
	began := time.Now()
	var events []string // the test's own, for the timeline
	event := func(format string, args ...any) {
		e := fmt.Sprintf(format, args...)
		events = append(events, time.Now().Format(time.RFC3339Nano)+" "+e)
		t.Logf("%s: %s", since(began), e)
	}
	all := awaitGroup("three nodes join", func(ms map[string][]int32) bool {
		return len(ms) == 3 && len(ms["n1"]) > 0 && len(ms["n2"]) > 0 && len(ms["n3"]) > 0
	})
	event("the group is stable with three nodes: %v", all)

	// The input, with its reference.
	input := startSteadyInput(t, brokers, base, perTick, 21)

	// Cut n2 off in the middle of a transaction: once every node has
	// begun transactions, two seconds more, and then as soon as the
	// broker has output of n2 in an open transaction.
	var writers map[int64]string
	await.Until(t, 200*time.Millisecond, func() bool {
		writers = txnWriters(adm, pipeline)
		return len(writers) == 3
	}, func() string { return fmt.Sprintf("transactional writers: %v", writers) })
	var n2pid int64
	for id, w := range writers {
		if w == "n2" {
			n2pid = id
		}
	}
	time.Sleep(2 * time.Second)
	_, before := group()
	n2parts := before["n2"]
	var (
		cut       time.Time
		atCut     map[int32]int64
		openAtCut map[int32]int64
	)
	for try := 1; ; try++ {
		await.Until(t, 5*time.Millisecond, func() bool { return len(openTxn(adm, "out", n2pid)) > 0 },
			func() string { return "n2 has no transaction open on out" })
		network.Host("n2").SetLink(t, false)
		cut = time.Now()
		// Taken after the cut: nothing of n2's reaches the broker from
		// now on, so a transaction still open now cannot be committed
		// in time.
		atCut = partitionEnds(adm, "out")
		openAtCut = openTxn(adm, "out", n2pid)
		if len(openAtCut) > 0 {
			break
		}
		// n2 committed between the look and the cut: a cut of
		// milliseconds, which moves nothing; again.
		network.Host("n2").SetLink(t, true)
		if try == 5 {
			t.Fatalf("n2 committed its transaction between the test's look and the cut %d times", try)
		}
	}
	event("n2's link down; n2 has input partitions %v, a transaction open on out from offsets %v; output ends %v", n2parts, openAtCut, atCut)

	// Its partitions move once the broker expires its session.
	moved := awaitGroup("n2's partitions move", func(ms map[string][]int32) bool {
		_, in := ms["n2"]
		return !in && len(ms) == 2 && len(ms["n1"])+len(ms["n3"]) == testkafka.Partitions
	})
	event("the group is stable without n2 %s after the cut (session timeout %s): %v", since(cut), session, moved)
	// n1 and n3 commit output of n2's partitions meanwhile: the link stays
	// down until they have committed a second's worth of windows on each,
	// so that n2 comes back to a group that moved on. Committed, read as
	// the check below reads it: the partitions' ends also grow by
	// records of transactions that are still open or are aborted.
	from := map[int32]kgo.Offset{}
	for _, p := range n2parts {
		from[p] = kgo.NewOffset().At(atCut[p])
	}
	watch, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{"out": from}))
	if err != nil {
		t.Fatal(err)
	}
	byOthers := map[int32]int{}
	await.Until(t, 10*time.Millisecond, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		fs := watch.PollFetches(ctx)
		cancel()
		fs.EachRecord(func(r *kgo.Record) {
			if r.ProducerID != n2pid {
				byOthers[r.Partition]++
			}
		})
		for _, p := range n2parts {
			if byOthers[p] < 16 {
				return false
			}
		}
		return true
	}, func() string {
		return fmt.Sprintf("results committed by n1 and n3 since the cut %v, by partition: %v", atCut, byOthers)
	})
	watch.Close()
	// A dynamic member's link stays down past the transaction timeout,
	// so that n2 comes back to find both its member id forgotten and its
	// open transaction aborted by the broker (its producer epoch bumped),
	// and its client has given up on the heartbeat meanwhile. A static
	// member's comes back at once: n2 then still believes it owns its
	// partitions and tries to commit the transaction it had open, which
	// the broker must refuse (its generation is gone).
	if m.name == dynamicMember.name {
		time.Sleep(txnTimeout + 2*time.Second - time.Since(cut))
	}
	atRestore := partitionEnds(adm, "out")
	if err, gone := n2exited(); gone {
		t.Fatalf("n2 exited while cut off: %v", err)
	}
	network.Host("n2").SetLink(t, true)
	restored := time.Now()
	event("n2's link up after %s down; output ends %v", since(cut), atRestore)

	// n2 rejoins, or exits.
	var rejoined map[string][]int32
	awaitN2 := func() {
		await.Until(t, 200*time.Millisecond, func() bool {
			if _, gone := n2exited(); gone {
				return true
			}
			var state string
			state, rejoined = group()
			return state == "Stable" && len(rejoined) == 3 && len(rejoined["n2"]) > 0
		}, func() string { _, ms := group(); return fmt.Sprintf("n2 has not rejoined: members %v", ms) })
	}
	awaitN2()
	if err, gone := n2exited(); gone {
		t.Fatalf("n2 exited after its link came back, instead of rejoining: %v\n%s", err, nodeTimeline(t, logs, nodes, events))
	}
	event("n2 is back in the group %s after the link came up: %v", since(restored), rejoined)
	// Let n2 write output again before the input ends.
	atRejoin := partitionEnds(adm, "out")
	await.Until(t, 200*time.Millisecond, func() bool {
		ends := partitionEnds(adm, "out")
		for _, p := range rejoined["n2"] {
			if ends[p] < atRejoin[p]+16 {
				return false
			}
		}
		return true
	}, func() string {
		return fmt.Sprintf("output ends %v, at the rejoin %v", partitionEnds(adm, "out"), atRejoin)
	})
	if err := input.end(); err != nil {
		t.Fatal(err)
	}
	want, inputN := input.reference()
	var closers []abi.Record // close every window
	for k := 0; k < 16; k++ {
		closers = append(closers, abi.Record{Key: []byte(fmt.Sprintf("k%d", k)), Value: []byte("0"), Timestamp: base + 1e9})
	}
	produce(t, brokers, "in", closers)
	event("%d records produced", inputN)
	await.Until(t, 200*time.Millisecond, func() bool { return groupBehind(adm, pipeline, "in") == 0 },
		func() string {
			return fmt.Sprintf("the group is %d records behind the input's end", groupBehind(adm, pipeline, "in"))
		})
	event("the group has committed the whole input")
	for _, name := range nodes {
		cmd := procs[name]
		if name == "n2" {
			cmd.Process.Signal(syscall.SIGTERM)
			if err := <-n2exit; err != nil {
				t.Errorf("n2 did not stop cleanly: %v", err)
			}
			continue
		}
		stopCleanly(t, cmd, name)
	}
	testkafka.AwaitSettled(t, brokers, "out")
	t.Logf("the nodes' logs (partitions, aborts, warnings, errors) and the test's steps:\n%s", nodeTimeline(t, logs, nodes, events))

	// (a) Every window exactly once, as the reference has it.
	writers = txnWriters(adm, pipeline)
	committedOut := readOutput(t, brokers, kgo.ReadCommitted())
	got := map[windowKey][][2]int{}
	for _, r := range committedOut {
		got[windowKey{r.key, r.start}] = append(got[windowKey{r.key, r.start}], r.result)
	}
	wrong, dups := 0, 0
	for w, c := range want {
		rs := got[w]
		if len(rs) > 1 {
			dups++
		}
		if len(rs) == 0 || rs[0] != c {
			if wrong++; wrong <= 3 {
				t.Errorf("window %v: got %v, want %v", w, rs, c)
			}
		}
	}
	t.Logf("%d windows of %d input records; %d committed results", len(want), inputN, len(committedOut))
	if wrong > 0 || dups > 0 || len(got) != len(want) {
		t.Fatalf("%d windows wrong or missing, %d emitted more than once, results for %d windows of %d", wrong, dups, len(got), len(want))
	}

	// (b) One owner at a time: in each output partition, in commit order,
	// each key's windows only go forward; while n2 was cut off, n1 or n3
	// committed the output of its partitions and n2 none.
	type run struct {
		writer string
		cutOff bool // written while n2 was cut off
		n      int
	}
	last := map[string]int64{}
	runs := map[int32][]run{}
	for _, r := range committedOut { // in offset order per partition
		w := writers[r.producer]
		if w == "" {
			w = fmt.Sprintf("producer %d", r.producer)
		}
		if s, ok := last[r.key]; ok && r.start <= s {
			t.Errorf("out/%d offset %d: key %s window %d by %s after window %d: the key's output went back", r.partition, r.offset, r.key, r.start, w, s)
		}
		last[r.key] = r.start
		cutOff := r.offset >= atCut[r.partition] && r.offset < atRestore[r.partition]
		if cutOff && w == "n2" {
			t.Errorf("out/%d offset %d: committed by n2, written while it was cut off", r.partition, r.offset)
		}
		rs := runs[r.partition]
		if len(rs) == 0 || rs[len(rs)-1].writer != w || rs[len(rs)-1].cutOff != cutOff {
			rs = append(rs, run{writer: w, cutOff: cutOff})
		}
		rs[len(rs)-1].n++
		runs[r.partition] = rs
	}
	for p := int32(0); p < testkafka.Partitions; p++ {
		var desc []string
		movedOn := false
		for _, r := range runs[p] {
			d := fmt.Sprintf("%s ×%d", r.writer, r.n)
			if r.cutOff {
				d += " (while n2 was cut off)"
				movedOn = movedOn || r.writer != "n2"
			}
			desc = append(desc, d)
		}
		if slices.Contains(n2parts, p) {
			t.Logf("out/%d (n2's at the cut), writers in commit order: %s", p, strings.Join(desc, " → "))
			if !movedOn {
				t.Errorf("out/%d: no output committed by another node while n2 was cut off", p)
			}
		} else {
			t.Logf("out/%d, writers in commit order: %s", p, strings.Join(desc, " → "))
		}
	}
	// (c) n2 committed output after it came back.
	back := 0
	for _, r := range committedOut {
		if writers[r.producer] == "n2" && r.offset >= atRestore[r.partition] {
			back++
		}
	}
	if back == 0 {
		t.Errorf("n2 committed no output after its link came back")
	}
	// What n2 wrote that was not committed: its transactions the broker
	// refused or aborted (counted for the log, not checked: the cut may
	// fall between two of its transactions).
	// n2's transaction open at the cut was not committed: none of its
	// records from where that transaction began is in the committed
	// output (the fencing; the exact-once check above says the same
	// through the windows it would have duplicated).
	written := readOutput(t, brokers, kgo.ReadUncommitted())
	fenced := 0
	for _, r := range written {
		if start, ok := openAtCut[r.partition]; ok && r.producer == n2pid && r.offset >= start && r.offset < atCut[r.partition] {
			fenced++
			if _, ok := slices.BinarySearchFunc(committedOut, r, func(a, b windowOut) int {
				if a.partition != b.partition {
					return int(a.partition - b.partition)
				}
				return int(a.offset - b.offset)
			}); ok {
				t.Errorf("out/%d offset %d: n2 wrote it in the transaction open at the cut, and it was committed", r.partition, r.offset)
			}
		}
	}
	if fenced == 0 {
		t.Errorf("no output of n2's transaction open at the cut (%v) in the log", openAtCut)
	}
	// That transaction was aborted by a node that took n2's partitions
	// and fenced its transactional id, not by the broker's timeout.
	if by := fencersOf(t, logs, "n2", "n1", "n3"); len(by) == 0 {
		t.Errorf("neither n1 nor n3 logged fencing n2's open transaction\n%s", nodeTimeline(t, logs, nodes, events))
	} else {
		t.Logf("n2's open transaction was fenced by %v", by)
		// n2 came back to a fenced producer: eddy run started a new
		// node in its place, which rejoined (checked above).
		if !logHas(t, filepath.Join(logs, "n2.log"), "node fenced: starting it again on its data directory") {
			t.Errorf("n2 does not log starting again after being fenced\n%s", nodeTimeline(t, logs, nodes, events))
		}
	}
	t.Logf("n2 committed %d results after it came back; its transaction open at the cut held %d results, none committed; %d results in the output were written in aborted transactions in all",
		back, fenced, len(written)-len(committedOut))
}

// fencersOf returns the nodes among those whose logs (dir/NODE.log, JSON
// lines) say they fenced departed's open transaction.
func fencersOf(t *testing.T, dir, departed string, nodes ...string) []string {
	t.Helper()
	var by []string
	for _, node := range nodes {
		data, err := os.ReadFile(filepath.Join(dir, node+".log"))
		if err != nil {
			t.Error(err)
			continue
		}
		for l := range strings.Lines(string(data)) {
			var e map[string]any
			if json.Unmarshal([]byte(l), &e) == nil && e["msg"] == "fenced a departed node's open transaction" && e["departed"] == departed {
				by = append(by, node)
				break
			}
		}
	}
	return by
}

// logHas reports whether a node's log (JSON lines) has a line with msg.
func logHas(t *testing.T, path, msg string) bool {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Error(err)
		return false
	}
	for l := range strings.Lines(string(data)) {
		var e map[string]any
		if json.Unmarshal([]byte(l), &e) == nil && e["msg"] == msg {
			return true
		}
	}
	return false
}

// openTxn returns, for each partition of topic with a transaction of
// producer open, the offset where that transaction began.
func openTxn(cl *kgo.Client, topic string, producer int64) map[int32]int64 {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ps, err := kadm.NewClient(cl).DescribeProducers(ctx, kadm.TopicsSet{topic: nil})
	open := map[int32]int64{}
	if err != nil {
		return open
	}
	ps.EachProducer(func(p kadm.DescribedProducer) {
		if p.ProducerID == producer && p.CurrentTxnStartOffset >= 0 {
			open[p.Partition] = p.CurrentTxnStartOffset
		}
	})
	return open
}

// since is the time from t, rounded for a log line.
func since(t time.Time) time.Duration { return time.Since(t).Round(100 * time.Millisecond) }

// groupMembers returns a group's state and its members' input partitions
// (of every topic) by node id (the client id, eddy-<node id>).
func groupMembers(cl *kgo.Client, group string) (string, map[string][]int32) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	gs, err := kadm.NewClient(cl).DescribeGroups(ctx, group)
	if err != nil {
		return err.Error(), nil
	}
	members := map[string][]int32{}
	for _, m := range gs[group].Members {
		var parts []int32
		if a, ok := m.Assigned.AsConsumer(); ok {
			for _, tp := range a.Topics {
				parts = append(parts, tp.Partitions...)
			}
		}
		slices.Sort(parts)
		members[strings.TrimPrefix(m.ClientID, "eddy-")] = parts
	}
	return gs[group].State, members
}

// txnWriters maps the producer ids of the pipeline's transactional ids
// (<pipeline>-<node id>) to their node ids.
func txnWriters(cl *kgo.Client, pipeline string) map[int64]string {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	txns, err := kadm.NewClient(cl).ListTransactions(ctx, nil, nil)
	if err != nil {
		return nil
	}
	w := map[int64]string{}
	txns.Each(func(l kadm.ListedTransaction) {
		if node, ok := strings.CutPrefix(l.TxnID, pipeline+"-"); ok {
			w[l.ProducerID] = node
		}
	})
	return w
}

// partitionEnds returns the end offset of each of topic's partitions
// (committed or not).
func partitionEnds(cl *kgo.Client, topic string) map[int32]int64 {
	ends, _ := kadm.NewClient(cl).ListEndOffsets(context.Background(), topic)
	m := map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) { m[o.Partition] = o.Offset })
	return m
}

// windowOut is a window result of the output topic and who wrote it.
type windowOut struct {
	partition int32
	offset    int64
	producer  int64
	key       string
	start     int64
	result    [2]int // count, sum
}

// readOutput reads the output topic with isolation level iso, each
// partition in offset order (partitions one after the other).
func readOutput(t *testing.T, brokers []string, iso kgo.IsolationLevel) []windowOut {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.ConsumeTopics("out"), kgo.FetchIsolationLevel(iso),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var out []windowOut
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		fs := cl.PollFetches(ctx)
		cancel()
		if fs.NumRecords() == 0 {
			break
		}
		fs.EachRecord(func(r *kgo.Record) {
			w := windowOut{partition: r.Partition, offset: r.Offset, producer: r.ProducerID, key: string(r.Key)}
			for _, h := range r.Headers {
				if h.Key == "eddy.window.start" {
					w.start, _ = strconv.ParseInt(string(h.Value), 10, 64)
				}
			}
			var res struct{ Count, Sum int }
			json.Unmarshal(r.Value, &res)
			w.result = [2]int{res.Count, res.Sum}
			out = append(out, w)
		})
	}
	slices.SortStableFunc(out, func(a, b windowOut) int {
		if a.partition != b.partition {
			return int(a.partition - b.partition)
		}
		return int(a.offset - b.offset)
	})
	return out
}

// nodeTimeline merges the nodes' JSON logs into one timeline of what
// concerns the group and transactions: partitions assigned, revoked and
// lost, transactions aborted, and every warning and error; with the
// test's own events ("RFC 3339 time, text").
func nodeTimeline(t *testing.T, dir string, nodes []string, events []string) string {
	type line struct {
		at   time.Time
		text string
	}
	var lines []line
	for _, e := range events {
		ts, text, _ := strings.Cut(e, " ")
		at, _ := time.Parse(time.RFC3339Nano, ts)
		lines = append(lines, line{at, "test  " + text})
	}
	for _, node := range nodes {
		f, err := os.Open(filepath.Join(dir, node+".log"))
		if err != nil {
			t.Error(err)
			continue
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		var at time.Time // of the node's last JSON line
		for sc.Scan() {
			var e map[string]any
			if json.Unmarshal(sc.Bytes(), &e) != nil {
				// Not the logger's: the error a node exits with.
				lines = append(lines, line{at, fmt.Sprintf("%-5s %s", node, sc.Text())})
				continue
			}
			at, _ = time.Parse(time.RFC3339Nano, fmt.Sprint(e["time"]))
			msg, _ := e["msg"].(string)
			level, _ := e["level"].(string)
			if parts, _ := e["partitions"].(map[string]any); strings.HasPrefix(msg, "partitions ") && len(parts) == 0 {
				continue // a step of a cooperative rebalance that moved nothing here
			}
			if !strings.HasPrefix(msg, "partitions ") && level != "WARN" && level != "ERROR" && !strings.Contains(msg, "aborted") ||
				strings.HasPrefix(msg, "registry: no key") {
				continue
			}
			delete(e, "time")
			delete(e, "msg")
			delete(e, "level")
			rest, _ := json.Marshal(e)
			lines = append(lines, line{at, fmt.Sprintf("%-5s %-5s %s %s", node, level, msg, rest)})
		}
		f.Close()
		if err := sc.Err(); err != nil && !errors.Is(err, io.EOF) {
			t.Error(err)
		}
	}
	slices.SortStableFunc(lines, func(a, b line) int { return a.at.Compare(b.at) })
	var b strings.Builder
	for _, l := range lines {
		fmt.Fprintf(&b, "%s %s\n", l.at.Format("15:04:05.000"), l.text)
	}
	return b.String()
}
