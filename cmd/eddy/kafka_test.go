package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/eddy-streams/eddy/internal/testkafka"
)

// TestProduceRunConsume drives the Kafka commands end to end against the
// test's broker (testkafka): produce JSON lines, run a pipeline until its output is
// there, consume it.
func TestProduceRunConsume(t *testing.T) {
	b := testkafka.StartPartitions(t, 2, "words", "words-up", "words-dlq")
	_, stderr, code := run(t, "", "produce", "--brokers", b.Addr(), "--topic", "words", "--input", td("samples/words.jsonl"))
	if code != 0 || !strings.Contains(stderr, "produced 5 records to words") {
		t.Fatalf("produce: exit %d: %s", code, stderr)
	}
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
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int)
	go func() {
		code := execute(ctx, []string{"--cache-dir", cacheDir, "run", pipe, "--brokers", b.Addr(), "--data-dir", t.TempDir()}, strings.NewReader(""), &strings.Builder{}, &strings.Builder{})
		done <- code
	}()
	var stdout string
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); {
		stdout, stderr, code = run(t, "", "consume", "--brokers", b.Addr(), "--topic", "words-up", "--idle", "1s")
		if strings.Count(stdout, "\n") >= 5 {
			break
		}
	}
	cancel()
	if c := <-done; c != 0 {
		t.Fatalf("eddy run exited %d", c)
	}
	for _, want := range []string{`"value":"THE QUICK BROWN FOX"`, `"value":"NO KEY HERE"`, `"headers":{"source":"web","eddy.function.up":"v0 sha256:`} {
		if !strings.Contains(stdout, want) {
			t.Fatalf("consume output lacks %s:\n%s\n%s", want, stdout, stderr)
		}
	}
	if strings.Count(stdout, "\n") != 5 {
		t.Fatalf("consumed %d records, want 5:\n%s", strings.Count(stdout, "\n"), stdout)
	}
}

// TestDevRunsTheDemo runs eddy dev from a directory other than the
// repository's (its functions are the ones bundled in the binary) until
// --events orders went through: it stops by itself, and its output has the
// big orders upper-cased, the orders joined with their customers, and the
// malformed orders dead-lettered with their reason, one short line each.
func TestDevRunsTheDemo(t *testing.T) {
	addr, regAddr := freeAddr(t), freeAddr(t)
	t.Chdir(t.TempDir())
	stdout, stderr, code := run(t, "", "dev", "--port", "0", "--rate", "500", "--events", "300", "--duration", "90s",
		"--admin-addr", addr, "--schema-registry", regAddr)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, "eddy dev: the 300 orders went through; stopping") {
		t.Errorf("eddy dev --events 300 did not stop after the 300 orders (--duration did):\n%s", stderr)
	}
	if !strings.Contains(stdout, `"AMOUNT"`) || !strings.Contains(stdout, `"right":{"name":"Grace Hopper","tier":"gold"}`) ||
		!strings.Contains(stderr, "300 orders in") || !strings.Contains(stderr, "6 dead-lettered") ||
		!strings.Contains(stderr, "dashboard on http://"+addr+"/ui/") || !strings.Contains(stderr, "schema registry on http://"+regAddr) {
		t.Fatalf("stdout:\n%.800s\nstderr:\n%s", stdout, stderr)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	dead := 0
	for _, l := range lines {
		if len(l) > 400 || strings.Contains(l, "sha256") {
			t.Errorf("a line a person cannot read: %s", l)
		}
		if strings.HasPrefix(l, "dead letter") {
			dead++
			if !strings.Contains(l, "not valid JSON") {
				t.Errorf("a dead letter without its reason: %s", l)
			}
		}
	}
	if dead != 6 {
		t.Errorf("%d dead letters shown, want 6", dead)
	}
}

func TestRunRejectsBadPipeline(t *testing.T) {
	pipe := filepath.Join(t.TempDir(), "p.yaml")
	os.WriteFile(pipe, []byte("name: x\nsource:\n  topics: [a]\nsteps:\n  - kind: mapp\n    function: f.wasm\nsink:\n  topic: b\n"), 0o644)
	_, stderr, code := run(t, "", "run", pipe, "--brokers", "127.0.0.1:1")
	if code != 1 || !strings.Contains(stderr, `p.yaml:5: steps[0].kind: must be map, filter, flat_map, branch, key_by, join or aggregate, got "mapp"`) {
		t.Fatalf("exit %d: %s", code, stderr)
	}
}

// TestBenchFromAnyDirectory runs eddy bench nexmark where there is no
// testdata/: it uses the Nexmark modules bundled in the binary, Go's and
// C's, and checks the outputs against the reference.
func TestBenchFromAnyDirectory(t *testing.T) {
	t.Chdir(t.TempDir())
	for _, lang := range []string{"go", "c"} {
		stdout, stderr, code := run(t, "", "--cache-dir", cacheDir, "bench", "nexmark", "--query", "q1,q2", "--events", "3000", "--lang", lang, "--check")
		if code != 0 || strings.Count(stdout, " ok") < 2 {
			t.Fatalf("%s: exit %d\n%s\n%s", lang, code, stdout, stderr)
		}
	}
}

// TestKafkaCommandsUnreachableBroker: eddy produce and eddy consume against
// a broker that cannot be reached fail within --connect-timeout, naming it,
// instead of waiting until interrupted (produce) or reporting an empty
// topic (consume).
func TestKafkaCommandsUnreachableBroker(t *testing.T) {
	for _, args := range [][]string{
		{"produce", "--topic", "t", "--input", td("samples/words.jsonl")},
		{"consume", "--topic", "t", "--idle", "5s"},
		{"consume", "--topic", "t"},
	} {
		_, stderr, code := run(t, "", append(args, "--brokers", "127.0.0.1:1", "--connect-timeout", "1s")...)
		if code != 1 || !strings.Contains(stderr, "could not reach Kafka broker 127.0.0.1:1 within 1s: ") || strings.Contains(stderr, "consumed") {
			t.Fatalf("eddy %s: exit %d:\n%s", strings.Join(args, " "), code, stderr)
		}
	}
}

// TestConsumeChecksTheTopic: eddy consume fails on a topic that does not
// exist, with or without --idle, and reads an existing empty one until
// --idle as before.
func TestConsumeChecksTheTopic(t *testing.T) {
	b := testkafka.Start(t, "present")
	for _, args := range [][]string{{"--idle", "1s"}, nil} {
		stdout, stderr, code := run(t, "", append([]string{"consume", "--brokers", b.Addr(), "--topic", "absent"}, args...)...)
		if code != 1 || stdout != "" || stderr != "eddy: consume absent: topic absent does not exist on "+b.Addr()+"\n" {
			t.Fatalf("consume %v of a topic that does not exist: exit %d:\n%s%s", args, code, stdout, stderr)
		}
	}
	stdout, stderr, code := run(t, "", "consume", "--brokers", b.Addr(), "--topic", "present", "--idle", "500ms")
	if code != 0 || stdout != "" || stderr != "consumed 0 records from present\n" {
		t.Fatalf("consume of an empty topic: exit %d:\n%s%s", code, stdout, stderr)
	}
}

// TestProduceToATopicNotCreated: on a cluster that does not create topics
// on first use (auto.create.topics.enable=false), eddy produce to a topic
// that does not exist fails saying so, and to one that exists writes it.
func TestProduceToATopicNotCreated(t *testing.T) {
	strict, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "present"))
	if err != nil {
		t.Fatal(err)
	}
	defer strict.Close()
	addr := strict.ListenAddrs()[0]
	_, stderr, code := run(t, "", "produce", "--brokers", addr, "--topic", "absent", "--input", td("samples/words.jsonl"))
	if want := "eddy: produce to absent: topic absent does not exist on " + addr +
		", and the cluster does not create topics on first use (auto.create.topics.enable=false): create it first\n"; code != 1 || stderr != want {
		t.Fatalf("exit %d:\n%s\nwant:\n%s", code, stderr, want)
	}
	_, stderr, code = run(t, "", "produce", "--brokers", addr, "--topic", "present", "--input", td("samples/words.jsonl"))
	if code != 0 || !strings.HasPrefix(stderr, "produced 5 records to present in ") {
		t.Fatalf("exit %d: %q", code, stderr)
	}
}

// TestProduceWritesOneSummaryLine: eddy produce with stderr not a terminal
// (a file, a pipe, here a buffer) writes its summary alone on one line,
// with no progress drawn before it (no carriage return, no escape).
func TestProduceWritesOneSummaryLine(t *testing.T) {
	b := testkafka.Start(t, "words")
	_, stderr, code := run(t, "", "produce", "--brokers", b.Addr(), "--topic", "words", "--input", td("samples/words.jsonl"))
	if !regexp.MustCompile(`^produced 5 records to words in \d+(\.\d+)?m?s\n$`).MatchString(stderr) || code != 0 {
		t.Fatalf("exit %d: %q", code, stderr)
	}
}
