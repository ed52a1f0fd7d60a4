package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
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
	"github.com/eddy-streams/eddy/host"
	"github.com/eddy-streams/eddy/internal/await"
	"github.com/eddy-streams/eddy/internal/testkafka"
)

// buildEddy builds the eddy binary once for tests that run it as a process.
func buildEddy(t testing.TB) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "eddy")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func freePort(t testing.TB) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// brokerProc runs `eddy broker` as a child process with the given topics and
// waits until it answers.
//
// With EDDY_TEST_KAFKA set it gives the Apache Kafka broker that names
// instead, emptied and with the topics created (testkafka): a process of
// its own too.
func brokerProc(t *testing.T, bin string, topics ...string) []string {
	t.Helper()
	if testkafka.Real() {
		return testkafka.StartPartitions(t, 4, topics...).Brokers()
	}
	brokers, _ := brokerProcCmd(t, bin, topics...)
	return brokers
}

// brokerProcCmd is brokerProc that also returns the broker's process, for a
// test that stops and continues it: an `eddy broker` process always (a
// test that must freeze the shared Apache Kafka broker would freeze every
// other test's too).
func brokerProcCmd(t *testing.T, bin string, topics ...string) ([]string, *exec.Cmd) {
	t.Helper()
	return brokerProcOn(t, exec.Command, bin, "127.0.0.1", freePort(t), topics...)
}

// brokerProcOn runs `eddy broker` listening on addr:port (which it
// advertises) with the given topics, started by command: exec.Command, or
// a host's command on a network of namespaces (netns.Host.Command). It
// waits until the broker answers, from the test's own process.
func brokerProcOn(t testing.TB, command func(string, ...string) *exec.Cmd, bin, addr string, port int, topics ...string) ([]string, *exec.Cmd) {
	t.Helper()
	brokers := []string{net.JoinHostPort(addr, strconv.Itoa(port))}
	args := []string{"broker", "--host", addr, "--port", strconv.Itoa(port), "--partitions", "4"}
	for _, tp := range topics {
		args = append(args, "--topic", tp)
	}
	broker := command(bin, args...)
	broker.Stderr = os.Stderr
	if err := broker.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { broker.Process.Kill(); broker.Wait() })
	for i := 0; ; i++ {
		if c, err := net.Dial("tcp", brokers[0]); err == nil {
			c.Close()
			return brokers, broker
		}
		if i > 100 {
			t.Fatal("broker did not start")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// membership is how the nodes of a crash test join their group.
type membership struct {
	name string
	args []string // eddy run's flags
	// kills is how many times the stateless and windowed crash tests kill
	// a node: at least 10 for the default (issue 16), fewer for dynamic
	// members, whose settling costs seconds per kill on kfake.
	kills int
}

var (
	// staticMember is the default: a static member whose id is kept in
	// its data directory, so that a restarted node takes its killed
	// predecessor's place at once.
	staticMember = membership{name: "static", kills: 10}
	// dynamicMember joins as a new member at each start; the killed one
	// stays in the group until its session times out: 6 s, the least both
	// brokers allow by default (group.min.session.timeout.ms), so that a
	// kill costs the test 6 s of waiting rather than the default 10.
	dynamicMember = membership{name: "dynamic", args: []string{"--static-membership=false", "--session-timeout", "6s"}, kills: 5}
)

// settle reports whether a crash test must wait, before it kills a node,
// until the node has joined its group (awaitJoined): on the embedded
// broker, always. kfake keeps a member killed during its first join —
// dynamic, or static under a new instance id (a node on a fresh data
// directory) — past its session timeout (docs/operating.md), and a few such
// kills stall the group for minutes; a static one was seen kept for good,
// its partitions never processed again. Apache Kafka expires such a member
// after its session timeout, so against it nodes are killed at any
// moment, joins included.
func (membership) settle() bool { return !testkafka.Real() }

// forMemberships runs test once per membership, as subtests sharing one
// eddy binary. On the embedded broker the crash tests run in parallel with
// each other (go test's -parallel, the cores by default): each has an
// `eddy broker` process of its own, and they spend most of their time
// waiting on it and on their nodes' groups. Against Apache Kafka, where
// each test empties the one broker, they run one at a time.
func forMemberships(t *testing.T, test func(t *testing.T, bin string, m membership), ms ...membership) {
	if testing.Short() {
		t.Skip("crash test: runs processes; skipped with -short")
	}
	if !testkafka.Real() {
		t.Parallel()
	}
	bin := buildEddy(t)
	for _, m := range ms {
		t.Run(m.name, func(t *testing.T) { test(t, bin, m) })
	}
}

// TestCrashExactlyOnce kills a node process with SIGKILL at random points
// while it processes 100,000 records under exactly_once, restarting it each
// time on its data directory; the broker is a separate process that lives
// on. The read_committed output must hold every record's output exactly
// once, whether the node is a static member or a dynamic one.
func TestCrashExactlyOnce(t *testing.T) {
	forMemberships(t, crashStateless, staticMember, dynamicMember)
}

func crashStateless(t *testing.T, bin string, m membership) {
	brokers := brokerProc(t, bin, "in", "out", "dlq")

	const total = 100000 // the issue asks for 100k+
	i := 0
	if _, err := host.Produce(context.Background(), brokers, "in", func() (abi.Record, error) {
		if i >= total {
			return abi.Record{}, io.EOF
		}
		i++
		return abi.Record{Key: []byte("k" + strconv.Itoa(i%101)), Value: []byte(fmt.Sprintf("v%06d", i-1))}, nil
	}, nil); err != nil {
		t.Fatal(err)
	}
	upper, _ := filepath.Abs(td("go/upper.wasm"))
	pipe := filepath.Join(t.TempDir(), "p.yaml")
	os.WriteFile(pipe, []byte(fmt.Sprintf(`name: crash
source: {topics: [in]}
steps:
  - {name: up, kind: map, function: %s}
sink: {topic: out}
dead_letter: {topic: dlq}
delivery: exactly_once
commit_interval: 100ms
batch_size: 250
`, upper)), 0o644)

	cache, data := t.TempDir(), t.TempDir()
	start := func() *exec.Cmd { return nodeProc(t, bin, cache, pipe, brokers[0], data, m) }
	rng := rand.New(rand.NewPCG(1, 2))
	kills := 0
	for ; kills < m.kills; kills++ {
		old := memberIDs(brokers, "crash")
		node := start()
		if m.settle() {
			awaitJoined(t, brokers, "crash", old)
		}
		time.Sleep(time.Duration(800+rng.IntN(2500)) * time.Millisecond)
		node.Process.Signal(syscall.SIGKILL)
		node.Wait()
		n, _ := host.Consume(context.Background(), brokers, "out", host.ConsumeOptions{Idle: 300 * time.Millisecond}, func(abi.Record, host.Meta) error { return nil })
		t.Logf("SIGKILL %d: %d committed outputs so far", kills+1, n)
	}
	// A last node finishes the work and stops cleanly.
	old := memberIDs(brokers, "crash")
	node := start()
	out := map[string]int{}
	began := time.Now()
	deadline := began.Add(3 * time.Minute)
	for time.Now().Before(deadline) {
		clear(out)
		n, err := host.Consume(context.Background(), brokers, "out", host.ConsumeOptions{Idle: 2 * time.Second}, func(r abi.Record, _ host.Meta) error {
			out[string(r.Value)]++
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if n >= total {
			break
		}
	}
	t.Logf("the last node finished the input in %s", time.Since(began).Round(time.Second))
	awaitJoined(t, brokers, "crash", old)
	stopCleanly(t, node, "the last node")
	missing, dups := 0, 0
	for i := 0; i < total; i++ {
		switch out[fmt.Sprintf("V%06d", i)] {
		case 0:
			missing++
		case 1:
		default:
			dups++
		}
	}
	t.Logf("%d kills; output %d distinct values", kills, len(out))
	if missing > 0 || dups > 0 || len(out) != total {
		t.Fatalf("after %d SIGKILLs: %d missing, %d duplicated, %d distinct outputs for %d inputs", kills, missing, dups, len(out), total)
	}
}

// nodeProc starts `eddy run PIPE` as a child process on a data directory
// (which keeps its node id) with a membership, logging warnings to the
// test's stderr, without an admin API.
func nodeProc(t *testing.T, bin, cache, pipe, broker, dataDir string, m membership) *exec.Cmd {
	t.Helper()
	return startNode(t, exec.Command(bin, nodeArgs(cache, pipe, broker, dataDir, m)...), os.Stderr)
}

// nodeArgs are the arguments of nodeProc's `eddy run`: its log level is
// EDDY_CRASH_LOG_LEVEL's, warn by default; later flags override them.
func nodeArgs(cache, pipe, broker, dataDir string, m membership) []string {
	lvl := "warn"
	if l := os.Getenv("EDDY_CRASH_LOG_LEVEL"); l != "" {
		lvl = l
	}
	args := []string{"--cache-dir", cache, "--log-level", lvl, "run", pipe, "--brokers", broker,
		"--data-dir", dataDir, "--admin-addr", "off"}
	return append(args, m.args...)
}

// startNode starts a node's command with its log going to stderr.
func startNode(t testing.TB, cmd *exec.Cmd, stderr io.Writer) *exec.Cmd {
	t.Helper()
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// A test that fails before it stops its node must not leave the
	// node running into the next tests (it would retry a broker that is
	// gone until the test binary ends).
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	return cmd
}

// committed counts the records of topic that read_committed consumers see.
func committed(brokers []string, topic string) int {
	n, _ := host.Consume(context.Background(), brokers, topic, host.ConsumeOptions{Idle: 300 * time.Millisecond},
		func(abi.Record, host.Meta) error { return nil })
	return n
}

// memberIDs returns the member ids of a group (nil when it cannot say).
func memberIDs(brokers []string, group string) []string {
	_, ids := describeGroup(brokers, group)
	return ids
}

// describeGroup returns a group's state and member ids ("" and nil when
// the broker cannot say).
func describeGroup(brokers []string, group string) (state string, ids []string) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		return "", nil
	}
	defer cl.Close()
	gs, err := kadm.NewClient(cl).DescribeGroups(context.Background(), group)
	if err != nil {
		return "", nil
	}
	for _, m := range gs[group].Members {
		ids = append(ids, m.MemberID)
	}
	return gs[group].State, ids
}

// awaitJoined waits until the group is stable with a single member that is
// not one of old (the members before the node was started: a killed node
// stays in the group until its session times out, under the same client
// id). A clean stop waits for a join in flight (franz-go joins with the
// client's context, so that a last commit can follow), and on kfake the
// first join of a dynamic member after kills can wait for the rebalance
// timeout (docs/operating.md, "kfake").
func awaitJoined(t *testing.T, brokers []string, group string, old []string) {
	t.Helper()
	began := time.Now()
	var state string
	var ids []string
	await.Until(t, 200*time.Millisecond, func() bool {
		state, ids = describeGroup(brokers, group)
		return state == "Stable" && len(ids) == 1 && !slices.Contains(old, ids[0])
	}, func() string {
		return fmt.Sprintf("group %s: %s with members %q (before the node: %q)", group, state, ids, old)
	})
	t.Logf("group %s stable with the new node alone after %s", group, time.Since(began).Round(100*time.Millisecond))
}

// topicEnd is the sum of the end offsets of topic's partitions: what has
// been written to it, committed or not (0 when they cannot be listed).
func topicEnd(cl *kgo.Client, topic string) int64 {
	ends, _ := kadm.NewClient(cl).ListEndOffsets(context.Background(), topic)
	var n int64
	ends.Each(func(o kadm.ListedOffset) { n += o.Offset })
	return n
}

// killMidJob kills node with SIGKILL in the middle of its work: once topic
// has grown (the node wrote output, committed or not), then after pause.
// A node that writes nothing for 10 s is killed all the same: the bound
// ends the wait, it checks nothing.
func killMidJob(node *exec.Cmd, cl *kgo.Client, topic string, pause time.Duration) {
	enough := time.After(10 * time.Second)
	for prev := topicEnd(cl, topic); topicEnd(cl, topic) == prev; {
		select {
		case <-enough:
			prev = -1 // stop waiting
		case <-time.After(10 * time.Millisecond):
			continue
		}
		break
	}
	time.Sleep(pause)
	node.Process.Signal(syscall.SIGKILL)
	node.Wait()
}

// stopCleanly stops node with SIGTERM and reports an unclean exit; what
// names the node in the report.
// awaitClaimed waits until the node of process pid has claimed its data
// directory dir (its pid in the directory's lock file, written once the
// lock is held): it is then past main, where eddy starts handling SIGTERM.
// Before that, while the Go runtime and the packages' init run, a SIGTERM
// kills any Go program, which says nothing about how eddy stops; on a
// loaded machine that takes more than the 50 ms the test used to wait.
// (The test only reads the file: taking the lock to probe it could make
// the node's own claim fail.)
func awaitClaimed(t *testing.T, dir string, pid int) {
	t.Helper()
	want := strconv.Itoa(pid)
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if b, err := os.ReadFile(filepath.Join(dir, "node.lock")); err == nil && strings.TrimSpace(string(b)) == want {
			return
		}
	}
	t.Fatalf("process %d has not claimed %s after 30 s", pid, dir)
}

func stopCleanly(t *testing.T, node *exec.Cmd, what string) {
	t.Helper()
	node.Process.Signal(syscall.SIGTERM)
	if err := node.Wait(); err != nil {
		t.Errorf("%s did not stop cleanly: %v", what, err)
	}
}
