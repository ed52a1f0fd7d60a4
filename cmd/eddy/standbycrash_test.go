package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/host"
	"github.com/eddy-streams/eddy/internal/await"
	"github.com/eddy-streams/eddy/internal/testkafka"
	"github.com/eddy-streams/eddy/state"
)

// TestCrashStandbyExactlyOnce runs the windowed count/sum pipeline of
// TestCrashWindowedExactlyOnce with standby_replicas: 1 on three nodes at
// once, under exactly_once, while input flows at a steady rate, and kills
// a random node with SIGKILL several times, restarting it (once on an
// empty data directory). Every window must equal the reference, none
// emitted twice, none missing. Besides:
//
//   - some node's status must have listed standby copies during the run;
//   - once, the killed node's data directory is damaged before its restart:
//     every store's checkpoint is overwritten with one that does not
//     decode. The stores it then holds or copies must be rebuilt from the
//     changelog and reported (status state_rebuilds, reason
//     checkpoint_corrupt, and eddy_state_rebuilds_total); which are
//     standby copies depends on the assignment (with three nodes the
//     restarted one may hold two numbers and copy none), so that standby
//     copies are rebuilt is TestStandbyCopyRebuilt's (host);
//   - the last killed node is not restarted: once the survivors' copies of
//     its partitions are caught up, the restores that take its partitions
//     over must read fewer records than those partitions' changelogs
//     hold (they read the tails their copies lack).
func TestCrashStandbyExactlyOnce(t *testing.T) {
	forMemberships(t, crashStandby, staticMember, dynamicMember)
}

// standbyNode is one node process of crashStandby.
type standbyNode struct {
	dir  string
	addr string // its admin API
	cmd  *exec.Cmd
	// statuses polled since its last start.
	last     host.NodeStatus
	standbys map[int32]bool // partitions it listed standby copies of
}

func crashStandby(t *testing.T, bin string, m membership) {
	const (
		pipeline = "wstandby"
		nodes    = 3
		perTick  = 100 // records produced every 100 ms
		base     = int64(1700000000000)
	)
	brokers := brokerProc(t, bin, "in", "out", "dlq", "late")
	pipe := windowedPipeline(t, pipeline, host.ExactlyOnce, "standby_replicas: 1\n")
	// A node killed last is not restarted: its partitions move once its
	// session times out (the default is 10 s).
	m.args = append(slices.Clone(m.args), "--session-timeout", "6s")
	cache := t.TempDir()
	adm, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		t.Fatal(err)
	}
	defer adm.Close()

	var mu sync.Mutex // guards ns's addr, last and standbys, and sawStandbys
	ns := make([]*standbyNode, nodes)
	sawStandbys := 0 // statuses that listed standby copies
	start := func(i int, dir string) {
		n := &standbyNode{dir: dir, addr: fmt.Sprintf("127.0.0.1:%d", freePort(t)), standbys: map[int32]bool{}}
		args := append(nodeArgs(cache, pipe, brokers[0], dir, m), "--admin-addr", n.addr)
		n.cmd = startNode(t, exec.Command(bin, args...), os.Stderr)
		mu.Lock()
		ns[i] = n
		mu.Unlock()
	}
	kill := func(i int, pause time.Duration) {
		killMidJob(ns[i].cmd, adm, "out", pause)
		mu.Lock()
		ns[i].addr = ""
		mu.Unlock()
	}
	statusOf := func(i int) host.NodeStatus {
		mu.Lock()
		defer mu.Unlock()
		return ns[i].last
	}
	for i := range nodes {
		start(i, t.TempDir())
	}
	// Poll the nodes' status.
	stopPoll := make(chan struct{})
	polled := make(chan struct{})
	go func() {
		defer close(polled)
		for {
			select {
			case <-stopPoll:
				return
			case <-time.After(200 * time.Millisecond):
			}
			for i := range nodes {
				mu.Lock()
				n := ns[i]
				addr := n.addr
				mu.Unlock()
				if addr == "" {
					continue
				}
				st, err := fetchStatus(addr)
				if err != nil {
					continue // starting, or killed meanwhile
				}
				mu.Lock()
				if n.addr == addr {
					n.last = st
					for _, s := range st.Standbys {
						n.standbys[s.Partition] = true
					}
					if len(st.Standbys) > 0 {
						sawStandbys++
					}
				}
				mu.Unlock()
			}
		}
	}()
	defer func() {
		select {
		case <-stopPoll:
		default:
			close(stopPoll)
			<-polled
		}
	}()

	// The input, with its reference.
	input := startSteadyInput(t, brokers, base, perTick, 11)

	// awaitGroup waits until the group is stable with n members, one of
	// them not in old (a node started since old was taken).
	awaitGroup := func(n int, old []string) {
		t.Helper()
		var state string
		var ids []string
		await.Until(t, 200*time.Millisecond, func() bool {
			state, ids = describeGroup(brokers, pipeline)
			return state == "Stable" && len(ids) == n && slices.ContainsFunc(ids, func(id string) bool { return !slices.Contains(old, id) })
		}, func() string {
			return fmt.Sprintf("group %s: %s with members %q (before: %q)", pipeline, state, ids, old)
		})
	}
	began := time.Now()
	awaitGroup(nodes, nil)
	t.Logf("%s: three nodes in the group", since(began))

	// Kills and restarts; the last kill is the takeover below.
	kills := m.kills*3/5 + 1 // 7 static, 4 dynamic
	fresh, damage := 1, kills-2
	rng := rand.New(rand.NewPCG(13, 14))
	changelog := host.ChangelogTopic(pipeline, "stats")
	for k := range kills - 1 {
		v := rng.IntN(nodes)
		if k == damage {
			// A node that keeps standby copies.
			await.Until(t, 100*time.Millisecond, func() bool {
				for i := range nodes {
					if len(statusOf(i).Standbys) > 0 {
						v = i
						return true
					}
				}
				return false
			}, func() string { return "no node lists standby copies" })
		}
		copies := statusOf(v).Standbys
		old := memberIDs(brokers, pipeline)
		kill(v, time.Duration(300+rng.IntN(1200))*time.Millisecond)
		dir := ns[v].dir
		var damaged []int32
		switch k {
		case fresh:
			dir = t.TempDir() // everything comes from the changelogs and copies
		case damage:
			damaged = damageCheckpoints(t, dir, pipeline, "stats")
		}
		t.Logf("%s: SIGKILL %d: node %d (standby copies %v); restarted on %s; checkpoints damaged for partitions %v",
			since(began), k+1, v, copyParts(copies), map[bool]string{true: "an empty data dir", false: "its data dir"}[dir != ns[v].dir], damaged)
		start(v, dir)
		if m.settle() {
			awaitGroup(nodes, old)
		}
		if k != damage {
			continue
		}
		// The damaged stores it holds or copies are rebuilt from the
		// changelog and reported.
		var rebuilt []host.StoreRebuild
		await.Until(t, 100*time.Millisecond, func() bool {
			mu.Lock()
			n := ns[v]
			rebuilt = n.last.StateRebuilds
			mu.Unlock()
			for _, r := range rebuilt {
				if r.Changelog == changelog && r.Reason == "checkpoint_corrupt" && slices.Contains(damaged, r.Partition) {
					return true
				}
			}
			return false
		}, func() string {
			mu.Lock()
			defer mu.Unlock()
			return fmt.Sprintf("node %d rebuilt %+v; it keeps standby copies of %v; damaged: %v", v, rebuilt, sortedParts(ns[v].standbys), damaged)
		})
		mu.Lock()
		addr := ns[v].addr
		mu.Unlock()
		if got := scrapeMetric(t, addr, "eddy_state_rebuilds_total", `reason="checkpoint_corrupt"`); got < 1 {
			t.Errorf("node %d: eddy_state_rebuilds_total{reason=\"checkpoint_corrupt\"} is %v after its rebuilds %+v", v, got, rebuilt)
		}
		t.Logf("%s: node %d rebuilt its damaged stores: %+v", since(began), v, rebuilt)
	}

	// The last kill: the node with the most partitions, once the others'
	// copies of them are caught up; it is not restarted. The others are
	// then under their quota, and the balancer gives each of its numbers
	// to the one with the most caught-up copy while under quota
	// (balancer.go, failover).
	awaitGroup(nodes, nil)
	v := -1
	var parts []int32
	var caught []host.StandbyStatus
	await.Until(t, 100*time.Millisecond, func() bool {
		caught = nil
		for i := range nodes {
			if ps := statusOf(i).Partitions["in"]; len(ps) > len(parts) {
				v, parts = i, ps
			}
		}
		if v < 0 {
			return false
		}
		for _, p := range parts {
			ok := false
			for i := range nodes {
				for _, s := range statusOf(i).Standbys {
					if i != v && s.Partition == p && s.Changelog == changelog && !s.Warmup && s.Position >= 0 && s.Lag <= 1000 {
						ok = true
						caught = append(caught, s)
					}
				}
			}
			if !ok {
				v, parts = -1, nil // look again: the assignment may have changed
				return false
			}
		}
		return true
	}, func() string {
		var b strings.Builder
		for i := range nodes {
			st := statusOf(i)
			fmt.Fprintf(&b, "node %d holds %v and copies %+v; ", i, st.Partitions["in"], st.Standbys)
		}
		return "no node's partitions all have caught-up copies elsewhere: " + b.String()
	})
	var survivors []int
	restoredBefore := map[int]float64{}
	heldBefore := map[int][]int32{}
	copiesBefore := map[int][]int32{}
	for i := range nodes {
		if i != v {
			survivors = append(survivors, i)
			st := statusOf(i)
			heldBefore[i], copiesBefore[i] = st.Partitions["in"], copyParts(st.Standbys)
			restoredBefore[i] = scrapeMetric(t, ns[i].addr, "eddy_restore_records_total", "")
		}
	}
	kill(v, time.Duration(300+rng.IntN(700))*time.Millisecond)
	t.Logf("%s: SIGKILL %d: node %d, holding %v, copied elsewhere as %+v; not restarted", since(began), kills, v, parts, caught)
	await.Until(t, 200*time.Millisecond, func() bool {
		var held []int32
		for _, i := range survivors {
			st := statusOf(i)
			if len(st.Restores) > 0 {
				return false
			}
			held = append(held, st.Partitions["in"]...)
		}
		state, ids := describeGroup(brokers, pipeline)
		return state == "Stable" && len(ids) == len(survivors) && len(held) == testkafka.Partitions
	}, func() string {
		return fmt.Sprintf("the survivors hold %v and %v", statusOf(survivors[0]).Partitions["in"], statusOf(survivors[1]).Partitions["in"])
	})
	// Each survivor that took only numbers it had a caught-up copy of
	// restored less than their changelogs hold. (Its restore count also
	// counts numbers moved between survivors, which only adds to it.)
	fromCopies := 0
	for _, i := range survivors {
		mu.Lock()
		addr := ns[i].addr
		mu.Unlock()
		restored := scrapeMetric(t, addr, "eddy_restore_records_total", "") - restoredBefore[i]
		var took []int32
		for _, p := range statusOf(i).Partitions["in"] {
			if !slices.Contains(heldBefore[i], p) {
				took = append(took, p)
			}
		}
		whole := changelogRecords(t, brokers, pipeline, took)
		t.Logf("%s: node %d held %v with copies of %v, took %v over, restoring %v records; their changelogs hold %d",
			since(began), i, heldBefore[i], copiesBefore[i], took, restored, whole)
		if len(took) == 0 || slices.ContainsFunc(took, func(p int32) bool { return !slices.Contains(copiesBefore[i], p) }) {
			continue
		}
		fromCopies++
		if restored >= float64(whole) {
			t.Errorf("node %d took %v over from caught-up copies and restored %v records, the whole of their changelogs (%d)", i, took, restored, whole)
		}
	}
	if fromCopies == 0 {
		t.Errorf("no survivor took node %d's partitions %v over from its copies", v, parts)
	}

	// The end: the input stops, a record far ahead closes every window,
	// and the survivors finish.
	if err := input.end(); err != nil {
		t.Fatal(err)
	}
	var closing []abi.Record
	for k := range 16 {
		closing = append(closing, abi.Record{Key: []byte(fmt.Sprintf("k%d", k)), Value: []byte("0"), Timestamp: base + 100_000_000})
	}
	produce(t, brokers, "in", closing)
	behind := func() int64 { return groupBehind(adm, pipeline, "in") }
	await.Until(t, 100*time.Millisecond, func() bool { return behind() == 0 },
		func() string { return fmt.Sprintf("the group is %d records behind the input's end", behind()) })
	close(stopPoll)
	<-polled
	for _, i := range survivors {
		stopCleanly(t, ns[i].cmd, fmt.Sprintf("node %d", i))
	}
	t.Logf("%s: done; %d statuses listed standby copies", since(began), sawStandbys)
	if sawStandbys == 0 {
		t.Error("no node's status listed a standby copy")
	}
	testkafka.AwaitSettled(t, brokers, "out")
	want, _ := input.reference()
	checkWindows(t, brokers, want, host.ExactlyOnce)
}

// fetchStatus is GET /v1/status of the node whose admin API is on addr.
func fetchStatus(addr string) (host.NodeStatus, error) {
	var st host.NodeStatus
	cl := http.Client{Timeout: 2 * time.Second}
	resp, err := cl.Get("http://" + addr + "/v1/status")
	if err != nil {
		return st, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return st, fmt.Errorf("status: %s", resp.Status)
	}
	err = json.NewDecoder(resp.Body).Decode(&st)
	return st, err
}

// scrapeMetric sums the samples of metric name whose labels contain
// labels, from the /metrics of the node whose admin API is on addr.
func scrapeMetric(t *testing.T, addr, name, labels string) float64 {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var sum float64
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		rest, ok := strings.CutPrefix(line, name)
		if !ok || !strings.HasPrefix(rest, " ") && !strings.HasPrefix(rest, "{") {
			continue
		}
		i := strings.LastIndexByte(rest, ' ')
		if !strings.Contains(rest[:i], labels) {
			continue
		}
		v, err := strconv.ParseFloat(rest[i+1:], 64)
		if err != nil {
			t.Fatalf("metrics line %q: %v", line, err)
		}
		sum += v
	}
	return sum
}

// damageCheckpoints overwrites, in the data directory dir of a node that
// is not running, the checkpoint of every store of step that has one with
// an offset no changelog has (-1): a checkpoint that does not decode
// (state.ErrBadCheckpoint), as a damaged directory has. It returns the
// partitions damaged.
func damageCheckpoints(t *testing.T, dir, pipeline, step string) []int32 {
	t.Helper()
	db, err := state.Open(dir, state.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var parts []int32
	for p := range int32(testkafka.Partitions) {
		st := db.Store(pipeline, step, p)
		if cp, err := st.Checkpoint(); err != nil || cp < 0 {
			continue
		}
		if err := st.Restore(nil, -1); err != nil {
			t.Fatal(err)
		}
		if _, err := st.Checkpoint(); err == nil {
			t.Fatalf("partition %d: the damaged checkpoint decodes", p)
		}
		parts = append(parts, p)
	}
	return parts
}

// changelogRecords counts the committed records of the pipeline's
// changelog topics (those of its stores and timers) in partitions parts.
func changelogRecords(t *testing.T, brokers []string, pipeline string, parts []int32) int64 {
	t.Helper()
	ctx := context.Background()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	topics, err := kadm.NewClient(cl).ListTopics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	offsets := map[string]map[int32]kgo.Offset{}
	var names []string
	for name := range topics {
		if strings.HasPrefix(name, pipeline+"-") && strings.HasSuffix(name, "-changelog") {
			names = append(names, name)
			offsets[name] = map[int32]kgo.Offset{}
			for _, p := range parts {
				offsets[name][p] = kgo.NewOffset().AtStart()
			}
		}
	}
	ends, err := kadm.NewClient(cl).ListCommittedOffsets(ctx, names...)
	if err != nil {
		t.Fatal(err)
	}
	rd, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.ConsumePartitions(offsets),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	var n int64
	left := map[string]map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) {
		if slices.Contains(parts, o.Partition) && o.Offset > 0 {
			if left[o.Topic] == nil {
				left[o.Topic] = map[int32]int64{}
			}
			left[o.Topic][o.Partition] = o.Offset
		}
	})
	for len(left) > 0 {
		pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		fs := rd.PollFetches(pctx)
		cancel()
		if fs.NumRecords() == 0 {
			break // the tail is markers or aborted records
		}
		fs.EachRecord(func(r *kgo.Record) {
			end, ok := left[r.Topic][r.Partition]
			if !ok {
				return
			}
			if r.Offset < end {
				n++
			}
			// Past the end (the last records before it can be markers,
			// which a consumer does not see): done with the partition.
			if r.Offset+1 >= end {
				delete(left[r.Topic], r.Partition)
				if len(left[r.Topic]) == 0 {
					delete(left, r.Topic)
				}
			}
		})
	}
	return n
}

// copyParts lists the partitions of standby copies.
func copyParts(ss []host.StandbyStatus) []int32 {
	var ps []int32
	for _, s := range ss {
		if !slices.Contains(ps, s.Partition) {
			ps = append(ps, s.Partition)
		}
	}
	slices.Sort(ps)
	return ps
}

// sortedParts lists the keys of set, sorted.
func sortedParts(set map[int32]bool) []int32 {
	var ps []int32
	for p := range set {
		ps = append(ps, p)
	}
	slices.Sort(ps)
	return ps
}
