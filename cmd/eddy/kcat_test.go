package main

import (
	"bytes"
	"context"
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
	"github.com/eddy-streams/eddy/host"
	"github.com/eddy-streams/eddy/internal/await"
)

// kcat returns the path of kcat (librdkafka's command-line client). Without
// it the test fails (CI installs it with scripts/install-toolchains.sh), or
// skips under -short.
func kcat(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("EDDY_KCAT"); p != "" {
		return p
	}
	if p, err := exec.LookPath("kcat"); err == nil {
		return p
	}
	const msg = "kcat not found (on PATH, or EDDY_KCAT): run scripts/install-toolchains.sh, which installs Debian's kcat"
	if testing.Short() {
		t.Skip(msg)
	}
	t.Fatal(msg)
	return ""
}

// TestKcatReadsExactlyOnceOutput reads a pipeline's exactly-once output with
// a client that is not Go: kcat, on librdkafka, which filters aborted
// transactions itself (from the aborted-transaction lists of fetch
// responses), not with franz-go's code. The output holds records of
// aborted transactions, left by nodes killed with SIGKILL in the middle
// of one; read_committed, kcat must see exactly the records, partitions and
// offsets the Go reader (host.Consume) sees, and read_uncommitted it must
// see more: the aborted ones, so that the test tells the two apart.
func TestKcatReadsExactlyOnceOutput(t *testing.T) {
	if testing.Short() {
		t.Skip("runs processes; skipped with -short")
	}
	kc := kcat(t)
	bin := buildEddy(t)
	brokers := brokerProc(t, bin, "in", "out", "dlq")

	const total = 5000
	i := 0
	if _, err := host.Produce(context.Background(), brokers, "in", func() (abi.Record, error) {
		if i >= total {
			return abi.Record{}, io.EOF
		}
		i++
		return abi.Record{Key: []byte("k" + strconv.Itoa(i%37)), Value: []byte(fmt.Sprintf("v%06d", i-1))}, nil
	}, nil); err != nil {
		t.Fatal(err)
	}
	upper, _ := filepath.Abs(td("go/upper.wasm"))
	// Two pipeline files of one pipeline (one group, one transactional
	// id per node): the killed nodes commit once a minute, so the
	// transaction a node is killed in holds every output it wrote; the
	// last node commits every 100 ms and finishes the input.
	pipeline := func(file, interval string) string {
		p := filepath.Join(t.TempDir(), file)
		os.WriteFile(p, []byte(fmt.Sprintf(`name: kcat
source: {topics: [in]}
steps:
  - {name: up, kind: map, function: %s}
sink: {topic: out}
dead_letter: {topic: dlq}
delivery: exactly_once
commit_interval: %s
batch_size: 250
`, upper, interval)), 0o644)
		return p
	}
	slow, fast := pipeline("slow.yaml", "1m"), pipeline("fast.yaml", "100ms")

	cache, data := t.TempDir(), t.TempDir()
	written := int64(0) // out's end offsets, summed: records and transaction markers
	for kill := 1; kill <= 2; kill++ {
		node := nodeProc(t, bin, cache, slow, brokers[0], data, staticMember)
		// Killed once it wrote outputs of its own: they are in the log,
		// in a transaction that cannot have committed yet. The next
		// node, with the same transactional id, aborts it. The end
		// offsets pass the previous node's by more than the abort
		// markers this node's start wrote for it (one per partition of
		// out, 4: brokerProc's) only with outputs of this node.
		before := written
		await.Until(t, 20*time.Millisecond, func() bool {
			written = endOffsets(t, brokers, "out")
			return written > before+4
		}, func() string {
			return fmt.Sprintf("node %d wrote nothing: out ends at %d", kill, written)
		})
		node.Process.Signal(syscall.SIGKILL)
		node.Wait()
		t.Logf("SIGKILL %d with out's end offsets at %d", kill, written)
	}
	node := nodeProc(t, bin, cache, fast, brokers[0], data, staticMember)
	n := 0
	await.Until(t, 100*time.Millisecond, func() bool {
		n = committed(brokers, "out")
		return n >= total
	}, func() string { return fmt.Sprintf("%d of %d outputs committed", n, total) })
	node.Process.Signal(syscall.SIGTERM)
	if err := node.Wait(); err != nil {
		t.Fatalf("the last node did not stop cleanly: %v", err)
	}

	goCommitted := goRead(t, brokers, false)
	goUncommitted := goRead(t, brokers, true)
	kcCommitted := kcatRead(t, kc, brokers[0], "read_committed")
	kcUncommitted := kcatRead(t, kc, brokers[0], "read_uncommitted")
	t.Logf("read_committed: %d records (Go), %d (kcat); read_uncommitted: %d (Go), %d (kcat); out ends at %d",
		len(goCommitted), len(kcCommitted), len(goUncommitted), len(kcUncommitted), endOffsets(t, brokers, "out"))

	// The Go reader's view is the reference: one output per input.
	seen := map[string]int{}
	for _, r := range goCommitted {
		seen[strings.Fields(r)[3]]++
	}
	for i := range total {
		if v := fmt.Sprintf("V%06d", i); seen[v] != 1 {
			t.Fatalf("Go reader, read_committed: %s seen %d times (%d records for %d inputs)", v, seen[v], len(goCommitted), total)
		}
	}
	if len(goCommitted) != total {
		t.Fatalf("Go reader, read_committed: %d records for %d inputs", len(goCommitted), total)
	}
	sameRecords(t, "read_committed", goCommitted, kcCommitted)
	sameRecords(t, "read_uncommitted", goUncommitted, kcUncommitted)
	if len(kcUncommitted) <= len(kcCommitted) {
		t.Fatalf("kcat read %d records read_uncommitted, %d read_committed: the killed nodes' aborted outputs are missing, so read_committed proves nothing",
			len(kcUncommitted), len(kcCommitted))
	}
}

// endOffsets sums topic's end offsets (read_uncommitted: the high
// watermarks), 0 when the broker cannot say.
func endOffsets(t *testing.T, brokers []string, topic string) int64 {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ends, err := kadm.NewClient(cl).ListEndOffsets(context.Background(), topic)
	if err != nil {
		return 0
	}
	var sum int64
	ends.Each(func(o kadm.ListedOffset) {
		if o.Err == nil {
			sum += o.Offset
		}
	})
	return sum
}

// goRead reads out with host.Consume, each record as "partition offset key
// value", sorted.
func goRead(t *testing.T, brokers []string, uncommitted bool) []string {
	t.Helper()
	var recs []string
	_, err := host.Consume(context.Background(), brokers, "out", host.ConsumeOptions{ReadUncommitted: uncommitted, Idle: 2 * time.Second},
		func(r abi.Record, m host.Meta) error {
			recs = append(recs, fmt.Sprintf("%d %d %s %s", m.Partition, m.Offset, r.Key, r.Value))
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(recs)
	return recs
}

// kcatRead reads out with kcat from the beginning to the end of every
// partition (-e: at the last stable offset under read_committed), in the
// same form as goRead. Keys and values hold no spaces.
func kcatRead(t *testing.T, kc, broker, isolation string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, kc, "-C", "-b", broker, "-t", "out", "-o", "beginning", "-e", "-q",
		"-X", "isolation.level="+isolation, "-f", `%p %o %k %s\n`)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("kcat %s: %v\n%s", isolation, err, stderr.Bytes())
	}
	recs := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(out) == 0 {
		recs = nil
	}
	slices.Sort(recs)
	return recs
}

// sameRecords fails the test unless kcat read what the Go reader read,
// saying the first difference.
func sameRecords(t *testing.T, isolation string, goRecs, kcRecs []string) {
	t.Helper()
	if slices.Equal(goRecs, kcRecs) {
		return
	}
	for i := range max(len(goRecs), len(kcRecs)) {
		var g, k string
		if i < len(goRecs) {
			g = goRecs[i]
		}
		if i < len(kcRecs) {
			k = kcRecs[i]
		}
		if g != k {
			t.Fatalf("%s: kcat read %d records, the Go reader %d; first difference at sorted record %d: Go %q, kcat %q",
				isolation, len(kcRecs), len(goRecs), i, g, k)
		}
	}
}
