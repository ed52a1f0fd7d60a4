package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/eddy-streams/eddy/host/admin"
	"github.com/eddy-streams/eddy/internal/await"
	"github.com/eddy-streams/eddy/internal/testkafka"
)

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// TestDeployIntoARunningNode runs `eddy run` with its admin API, deploys a
// new version with `eddy deploy`, and checks the API's guards against the
// real node: no token or a wrong one is 401 and changes nothing, an
// oversized upload is 413, and a hostile module, or one that does not fit
// the step, is refused with its reason.
func TestDeployIntoARunningNode(t *testing.T) {
	b := testkafka.StartPartitions(t, 2, "words", "words-up", "words-dlq")
	upper, _ := filepath.Abs(td("go/upper.wasm"))
	pipe := filepath.Join(t.TempDir(), "p.yaml")
	os.WriteFile(pipe, []byte(fmt.Sprintf(`name: words
source: {topics: [words]}
steps:
  - {name: up, kind: map, function: %s}
sink: {topic: words-up}
dead_letter: {topic: words-dlq}
delivery: exactly_once
`, upper)), 0o644)
	tokenFile := filepath.Join(t.TempDir(), "token")
	os.WriteFile(tokenFile, []byte("s3cret\n"), 0o600)
	addr := freeAddr(t)
	url := "http://" + addr
	ctx := context.Background()
	stop, _ := startRun(t, "run", pipe, "--brokers", b.Addr(), "--admin-addr", addr, "--data-dir", t.TempDir(),
		"--admin-token-file", tokenFile, "--admin-max-upload", "3MiB")
	defer stop()
	cl := &admin.Client{BaseURL: url}
	await.Until(t, 50*time.Millisecond, func() bool { return cl.Health(ctx) == nil },
		func() string { return "the node's admin API did not become healthy" })

	out, stderr, code := run(t, "", "deploy", td("c/upper.wasm"), "--pipeline", "words", "--step", "up", "--note", "C port",
		"--admin", url, "--token-file", tokenFile)
	if code != 0 || !strings.Contains(out, "deploy words/up: version 2") {
		t.Fatalf("deploy: exit %d\n%s%s", code, out, stderr)
	}
	_, stderr, code = run(t, "", "deploy", td("wat/trap.wasm"), "--pipeline", "words", "--step", "up",
		"--admin", url, "--token-file", tokenFile)
	if code == 0 || !strings.Contains(stderr, "invalid_module") || !strings.Contains(stderr, "trap") {
		t.Fatalf("hostile deploy: exit %d: %s", code, stderr)
	}
	// The counter keeps keyed state, which the stateless step up has not:
	// every record would be dead-lettered.
	_, stderr, code = run(t, "", "deploy", td("go/counter.wasm"), "--pipeline", "words", "--step", "up",
		"--admin", url, "--token-file", tokenFile)
	if code == 0 || !strings.Contains(stderr, "eddy: deploy rejected: incompatible_module: the module does not fit step up: "+
		"it imports eddy.state_get, eddy.state_put, but the step has no keyed state") {
		t.Fatalf("deploy of a stateful module to a stateless step: exit %d: %s", code, stderr)
	}
	cModule, _ := os.ReadFile(td("c/upper.wasm"))
	for _, tok := range []string{"", "wrong"} {
		_, err := (&admin.Client{BaseURL: url, Token: tok}).Deploy(ctx, admin.DeployRequest{Pipeline: "words", Step: "up", Module: cModule})
		if ae := admin.AsError(err); ae == nil || ae.Status != http.StatusUnauthorized {
			t.Fatalf("deploy with token %q: %v, want 401", tok, err)
		}
	}
	big := append(bytes.Clone(cModule), make([]byte, 4<<20)...)
	_, err := (&admin.Client{BaseURL: url, Token: "s3cret"}).Deploy(ctx, admin.DeployRequest{Pipeline: "words", Step: "up", Module: big})
	if ae := admin.AsError(err); ae == nil || ae.Status != http.StatusRequestEntityTooLarge {
		t.Fatalf("oversized deploy: %v, want 413", err)
	}
	out, stderr, code = run(t, "", "functions", "history", "--pipeline", "words", "--step", "up", "--admin", url)
	if code != 0 || strings.Count(out, "\n") != 3 || !strings.Contains(out, "C port") {
		t.Fatalf("history (the header, the baseline, the deploy; nothing from the refused calls): exit %d\n%s%s", code, out, stderr)
	}

	_, stderr, code = run(t, "", "produce", "--brokers", b.Addr(), "--topic", "words", "--input", td("samples/words.jsonl"))
	if code != 0 {
		t.Fatalf("produce: %s", stderr)
	}
	out, stderr, code = run(t, "", "consume", "--brokers", b.Addr(), "--topic", "words-up", "--max", "5", "--idle", "20s")
	if code != 0 || strings.Count(out, `"eddy.function.up":"v2 sha256:`) != 5 {
		t.Fatalf("consume: exit %d: %s\n%s", code, stderr, out)
	}

	// A shadow: passthrough beside upper, compared by eddy diff, promoted.
	out, stderr, code = run(t, "", "deploy", td("go/passthrough.wasm"), "--pipeline", "words", "--step", "up", "--shadow",
		"--admin", url, "--token-file", tokenFile)
	if code != 0 || !strings.Contains(out, "shadow words/up: version 3") {
		t.Fatalf("shadow deploy: exit %d\n%s%s", code, out, stderr)
	}
	await.Until(t, 20*time.Millisecond, func() bool {
		out, _, _ = run(t, "", "status", "--local", "--admin", url)
		return strings.Contains(out, `"shadow": 3`)
	}, func() string { return "the shadow did not start: " + out })
	if _, stderr, code = run(t, "", "produce", "--brokers", b.Addr(), "--topic", "words", "--input", td("samples/words.jsonl")); code != 0 {
		t.Fatalf("produce: %s", stderr)
	}
	if _, stderr, code = run(t, "", "consume", "--brokers", b.Addr(), "--topic", "words-up-shadow", "--max", "5", "--idle", "20s"); code != 0 {
		t.Fatalf("consume shadow: %s", stderr)
	}
	out, stderr, code = run(t, "", "diff", "--brokers", b.Addr(), "--topic", "words-up", "--idle", "500ms")
	if code != 1 || !strings.Contains(out, "5 source records: 1 same, 4 differ, 0 only live, 0 only shadow") ||
		!strings.Contains(out, `"value":"THE QUICK BROWN FOX","timestamp":1700000000000}] shadow [{"key":"alice","value":"the quick brown fox"`) {
		t.Fatalf("diff: exit %d\n%s%s", code, out, stderr)
	}
	out, stderr, code = run(t, "", "promote", "--pipeline", "words", "--step", "up", "--admin", url, "--token-file", tokenFile)
	if code != 0 || !strings.Contains(out, "promote words/up: version 4") {
		t.Fatalf("promote: exit %d\n%s%s", code, out, stderr)
	}

	// With no node running, a rollback goes straight to the registry,
	// signed with the token; without the token it is refused.
	stop()
	_, stderr, code = run(t, "", "functions", "rollback", "-p", "words", "-s", "up", "--brokers", b.Addr())
	if code == 0 || !strings.Contains(stderr, "unsigned") {
		t.Fatalf("rollback through Kafka without a token: exit %d: %s", code, stderr)
	}
	out, stderr, code = run(t, "", "functions", "rollback", "-p", "words", "-s", "up", "--brokers", b.Addr(), "--token-file", tokenFile)
	if code != 0 || !strings.Contains(out, "rollback words/up: version 5") || !strings.Contains(out, "back to version 2") {
		t.Fatalf("rollback through Kafka: exit %d\n%s%s", code, out, stderr)
	}
}

// TestStateGet reads a stateful step's state through `eddy state get`:
// a key, a scan, a missing key, and --stale (TestStaleQueriesFromStandbys,
// in host, has standby copies answer).
func TestStateGet(t *testing.T) {
	b := testkafka.StartPartitions(t, 2, "words", "counted", "words-dlq")
	counter, _ := filepath.Abs(td("go/counter.wasm"))
	pipe := filepath.Join(t.TempDir(), "p.yaml")
	os.WriteFile(pipe, []byte(fmt.Sprintf(`name: counted
source: {topics: [words]}
steps:
  - {name: count, kind: map, function: %s, state: true}
sink: {topic: counted}
dead_letter: {topic: words-dlq}
delivery: exactly_once
`, counter)), 0o644)
	addr := freeAddr(t)
	url := "http://" + addr
	stop, _ := startRun(t, "run", pipe, "--brokers", b.Addr(), "--admin-addr", addr, "--data-dir", t.TempDir())
	defer stop()
	if _, stderr, code := run(t, "", "produce", "--brokers", b.Addr(), "--topic", "words", "--input", td("samples/words.jsonl")); code != 0 {
		t.Fatalf("produce: %s", stderr)
	}
	if _, stderr, code := run(t, "", "consume", "--brokers", b.Addr(), "--topic", "counted", "--max", "5", "--idle", "20s"); code != 0 {
		t.Fatalf("consume: %s", stderr)
	}
	out, stderr, code := run(t, "", "state", "get", "--pipeline", "counted", "--store", "count", "alice", "--admin", url)
	if code != 0 || !strings.HasPrefix(out, `{"key":"alice","partition":`) || !strings.Contains(out, `"value":2}`) {
		t.Fatalf("state get alice: exit %d\n%s%s", code, out, stderr)
	}
	out, _, code = run(t, "", "state", "get", "--pipeline", "counted", "--store", "count", "--prefix", "", "--admin", url)
	if code != 0 || strings.Count(out, "\n") != 4 || !strings.HasPrefix(out, `{"key":"","partition":`) { // the counter counts a null key as ""
		t.Fatalf("state scan: exit %d\n%s", code, out)
	}
	if _, stderr, code = run(t, "", "state", "get", "--pipeline", "counted", "--store", "count", "nobody", "--admin", url); code != 1 || !strings.Contains(stderr, "no entry") {
		t.Fatalf("missing key: exit %d %s", code, stderr)
	}
	// --stale: the one node owns every partition and answers as the owner.
	out, stderr, code = run(t, "", "state", "get", "--pipeline", "counted", "--store", "count", "--stale", "alice", "--admin", url)
	if code != 0 || !strings.Contains(out, `"value":2}`) || strings.Contains(stderr, "standby") {
		t.Fatalf("state get --stale alice: exit %d\n%s%s", code, out, stderr)
	}
	if _, stderr, code = run(t, "", "state", "get", "--pipeline", "counted", "--store", "count", "--stale", "--prefix", "a", "--admin", url); code == 0 || !strings.Contains(stderr, "--stale reads one KEY") {
		t.Fatalf("state get --stale --prefix: exit %d %s", code, stderr)
	}
}
