package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
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

// TestRunNodeIdentity: `eddy run` keeps a generated node id in its data
// directory, joins the group as a static member with it by default, reuses
// it when restarted on the directory, refuses a directory another node
// holds, and gives another directory another id; --node-id overrides the
// id and --static-membership=false makes the node a dynamic member.
func TestRunNodeIdentity(t *testing.T) {
	b := testkafka.StartPartitions(t, 2, "words", "words-up", "words-dlq")
	upper, _ := filepath.Abs(td("go/upper.wasm"))
	pipe := filepath.Join(t.TempDir(), "p.yaml")
	os.WriteFile(pipe, []byte(fmt.Sprintf(`name: words
source: {topics: [words]}
steps:
  - {name: up, kind: map, function: %s}
sink: {topic: words-up}
dead_letter: {topic: words-dlq}
`, upper)), 0o644)
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	// members lists the group's members as "instance id|client id".
	members := func() []string {
		gs, err := adm.DescribeGroups(context.Background(), "words")
		if err != nil {
			return nil
		}
		var ms []string
		for _, m := range gs["words"].Members {
			inst := ""
			if m.InstanceID != nil {
				inst = *m.InstanceID
			}
			ms = append(ms, inst+"|"+m.ClientID)
		}
		return ms
	}
	awaitMember := func(want string) {
		t.Helper()
		await.Until(t, 50*time.Millisecond, func() bool { return slices.Contains(members(), want) },
			func() string { return fmt.Sprintf("no group member %q among %q", want, members()) })
	}
	// A stopped static member stays in the group until its session times
	// out, and the next member's join waits for it: the shortest session
	// Kafka allows keeps the test short.
	start := func(dir string, args ...string) func() {
		stop, _ := startRun(t, append([]string{"--log-level", "warn", "run", pipe, "--brokers", b.Addr(), "--admin-addr", "off",
			"--data-dir", dir, "--session-timeout", "6s"}, args...)...)
		return stop
	}
	// idOf waits for the id the node keeps in dir.
	idOf := func(dir string) string {
		t.Helper()
		var b []byte
		await.Until(t, 20*time.Millisecond, func() bool {
			var err error
			b, err = os.ReadFile(filepath.Join(dir, host.NodeIDFile))
			return err == nil
		}, func() string { return "the node kept no id in its data directory" })
		return strings.TrimSpace(string(b))
	}

	dir := t.TempDir()
	stop := start(dir)
	id := idOf(dir)
	awaitMember(id + "|eddy-" + id) // a static member, its id the instance id

	// A second node on the same directory is refused before it joins.
	_, stderr, code := run(t, "", "run", pipe, "--brokers", b.Addr(), "--admin-addr", "off", "--data-dir", dir)
	if code != 1 || !strings.Contains(stderr, "in use by another node") || !strings.Contains(stderr, "give each node its own --data-dir") {
		t.Fatalf("second node on a held data directory: exit %d: %s", code, stderr)
	}

	// Restarted on its directory, the node has the same id.
	stop()
	stop = start(dir)
	awaitMember(id + "|eddy-" + id)
	if got := idOf(dir); got != id {
		t.Fatalf("restarted node: id %q, want %q", got, id)
	}
	stop()

	// Another directory, another id.
	dir2 := t.TempDir()
	stop = start(dir2)
	awaitMember(idOf(dir2) + "|eddy-" + idOf(dir2))
	if idOf(dir2) == id {
		t.Fatalf("two data directories share the id %q", id)
	}
	stop()

	// --node-id wins over the kept id; --static-membership=false joins
	// without an instance id.
	stop = start(dir, "--node-id", "explicit-1")
	awaitMember("explicit-1|eddy-explicit-1")
	stop()
	if got := idOf(dir); got != id {
		t.Fatalf("--node-id changed the kept id to %q", got)
	}
	stop = start(dir, "--static-membership=false")
	awaitMember("|eddy-" + id)
	stop()
}

// TestRunRejectsBadNodeID: a --node-id that Kafka would refuse as a group
// instance id stops the node before it starts.
func TestRunRejectsBadNodeID(t *testing.T) {
	pipe := filepath.Join(t.TempDir(), "p.yaml")
	os.WriteFile(pipe, []byte("name: x\nsource: {topics: [a]}\nsteps: [{name: f, kind: filter, function: f.wasm}]\nsink: {topic: b}\n"), 0o644)
	_, stderr, code := run(t, "", "run", pipe, "--brokers", "127.0.0.1:1", "--node-id", "a/b")
	if code != 1 || !strings.Contains(stderr, "--node-id: node id \"a/b\": only letters, digits") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
}

// TestRunStopIsBounded: a node whose clean stop cannot finish — its broker
// stopped answering (the broker process is frozen with SIGSTOP) — exits
// after --shutdown-timeout with status 1, saying what it was waiting for.
// Before the bound, closing the Kafka client waited for the broker (a
// dynamic member's LeaveGroup, a join in flight) for as long as its retries
// lasted — 35s in one run, after which the node exited with status 0 as if
// its stop had been clean.
func TestRunStopIsBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("runs processes; skipped with -short")
	}
	bin := buildEddy(t)
	brokers, broker := brokerProcCmd(t, bin, "in", "out", "dlq")
	i := 0
	if _, err := host.Produce(context.Background(), brokers, "in", func() (abi.Record, error) {
		if i >= 1000 {
			return abi.Record{}, io.EOF
		}
		i++
		return abi.Record{Key: []byte(fmt.Sprint(i)), Value: []byte("v")}, nil
	}, nil); err != nil {
		t.Fatal(err)
	}
	upper, _ := filepath.Abs(td("go/upper.wasm"))
	pipe := filepath.Join(t.TempDir(), "p.yaml")
	os.WriteFile(pipe, []byte(fmt.Sprintf(`name: stuck
source: {topics: [in]}
steps:
  - {name: up, kind: map, function: %s}
sink: {topic: out}
dead_letter: {topic: dlq}
`, upper)), 0o644)
	var stderr bytes.Buffer
	node := exec.Command(bin, "--cache-dir", t.TempDir(), "--log-level", "warn", "run", pipe, "--brokers", brokers[0],
		"--data-dir", t.TempDir(), "--admin-addr", "off", "--static-membership=false", "--shutdown-timeout", "2s")
	node.Stderr = &stderr
	if err := node.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { node.Process.Kill() })
	await.Until(t, 100*time.Millisecond, func() bool { return committed(brokers, "out") == 1000 },
		func() string { return fmt.Sprintf("%d of 1000 records came out", committed(brokers, "out")) })

	broker.Process.Signal(syscall.SIGSTOP)
	t.Cleanup(func() { broker.Process.Signal(syscall.SIGCONT) })
	node.Process.Signal(syscall.SIGTERM)
	exited := make(chan error, 1)
	go func() { exited <- node.Wait() }()
	t.Cleanup(func() { node.Process.Kill() })
	err := await.Receive(t, exited, func() string {
		return "the node did not exit after SIGTERM with its broker frozen; its log:\n" + stderr.String()
	})
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("exit: %v, want status 1; log:\n%s", err, stderr.String())
	}
	said := stderr.String()
	// The process gives up on the step it is in ("the node was ..."), or
	// the node's own deadline ends a call to the broker first.
	if !strings.Contains(said, "eddy: pipeline stuck: clean stop timed out after 2s") ||
		!(strings.Contains(said, "the node was ") || strings.Contains(said, "context deadline exceeded")) {
		t.Fatalf("the node's last words do not say what it waited for:\n%s", said)
	}
	t.Logf("the node said: %s", strings.TrimSpace(said[strings.LastIndex(said, "eddy: "):]))
}
