package host_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/eddy-streams/eddy/host"
	"github.com/eddy-streams/eddy/internal/await"
	"github.com/eddy-streams/eddy/runtime"
)

// TestCleanStopIsBounded: a node told to stop while the broker does not
// answer its offset commits gives up its last commit at
// NodeConfig.StopTimeout, and Run says which step ran out of time
// (ErrStopTimeout). Before the bound the last commit waited 30s, and the
// revoke of closing the client committed again without any bound.
func TestCleanStopIsBounded(t *testing.T) {
	b := startBroker(t, "in", "out", "dlq")
	fake := b.Embedded(t, "makes the broker hold an offset commit").Cluster()
	p := pipeline(t, "stopbound", "go/upper.wasm", host.AtLeastOnce, "")
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	var hang atomic.Bool
	fake.ControlKey(kmsg.OffsetCommit.Int16(), func(kmsg.Request) (kmsg.Response, error, bool) {
		fake.KeepControl()
		if hang.Load() {
			fake.SleepControl(func() { <-release })
		}
		return nil, nil, false
	})
	// Heartbeats share the connection of the hanging commits: a long
	// session keeps the partitions (and their offsets to commit) assigned,
	// and a static member does not send a LeaveGroup behind them.
	n, cancel, done := runNode(t, b.Addr(), p,
		host.NodeConfig{StopTimeout: 500 * time.Millisecond, Static: true, SessionTimeout: time.Minute})
	defer cancel()
	produceN(t, b, "in", 0, 500)
	consumeAll(t, b, "out", 500, 300*time.Millisecond)

	// From now on commits hang; records processed meanwhile leave offsets
	// to commit at the stop.
	hang.Store(true)
	produceN(t, b, "in", 500, 1000)
	await.Until(t, 10*time.Millisecond, func() bool { return n.Stats().In >= 1000 },
		func() string { return fmt.Sprintf("the node took %d of 1000 records", n.Stats().In) })
	cancel()
	err := await.Receive(t, done, func() string { return "Run did not return; the node was " + n.Stage() })
	if !errors.Is(err, host.ErrStopTimeout) || !strings.Contains(err.Error(), "committing the processed offsets") {
		t.Fatalf("Run returned %v, want ErrStopTimeout naming the last commit", err)
	}
	t.Logf("Run returned: %v", err)
}

// TestStopDuringCommitFinishesTheTransaction: a node under exactly_once told
// to stop while its poll loop waits for the transaction's produces to be
// acknowledged commits that transaction in its clean stop instead of
// aborting it. Before, the cancelled wait aborted it (seen against Apache
// Kafka: the output of the last transaction missed until the next start, and
// eddy_transaction_aborts_total counted a clean stop).
func TestStopDuringCommitFinishesTheTransaction(t *testing.T) {
	b := startBroker(t, "in", "out", "dlq")
	fake := b.Embedded(t, "makes the broker hold produce requests").Cluster()
	p := pipeline(t, "stopcommit", "go/upper.wasm", host.ExactlyOnce, "")
	release := make(chan struct{})
	var once sync.Once
	releaseAll := func() { once.Do(func() { close(release) }) }
	t.Cleanup(releaseAll)
	var hold atomic.Bool
	var held atomic.Int32
	fake.ControlKey(kmsg.Produce.Int16(), func(req kmsg.Request) (kmsg.Response, error, bool) {
		fake.KeepControl()
		if hold.Load() && req.(*kmsg.ProduceRequest).TransactionID != nil { // the node's, not the test's

			held.Add(1)
			fake.SleepControl(func() { <-release })
		}
		return nil, nil, false
	})
	n, cancel, done := runNode(t, b.Addr(), p, host.NodeConfig{})
	defer cancel()
	produceN(t, b, "in", 0, 200)
	consumeAll(t, b, "out", 200, 300*time.Millisecond)

	// The next records' produces are held: the poll loop's end of the
	// transaction waits on them when the stop comes.
	hold.Store(true)
	produceN(t, b, "in", 200, 400)
	await.Until(t, 10*time.Millisecond, func() bool { return n.Stats().In >= 400 && held.Load() > 0 },
		func() string {
			return fmt.Sprintf("the node took %d of 400 records, %d produces held", n.Stats().In, held.Load())
		})
	// Not an assertion: give the loop a commit interval (50ms) to start
	// ending the transaction.
	time.Sleep(200 * time.Millisecond)
	cancel()
	time.Sleep(100 * time.Millisecond)
	releaseAll()
	if err := await.Receive(t, done, func() string { return "Run did not return; the node was " + n.Stage() }); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if st := n.Stats(); st.Aborts != 0 {
		t.Fatalf("%d transactions aborted by a clean stop", st.Aborts)
	}
	out := consumeAll(t, b, "out", 400, 300*time.Millisecond)
	seen := map[string]int{}
	for _, r := range out {
		seen[string(r.Value)]++
	}
	for i := range 400 {
		if v := fmt.Sprintf("V%06d", i); seen[v] != 1 {
			t.Errorf("%s in the output %d times", v, seen[v])
		}
	}
}

// runNode runs a node "s" of p against broker with cfg (its broker, id,
// engine and logger filled in) until cancel; done receives what Run
// returned.
func runNode(t *testing.T, broker string, p *host.Pipeline, cfg host.NodeConfig) (*host.Node, context.CancelFunc, chan error) {
	t.Helper()
	eng, err := runtime.NewEngine(runtime.WithCacheDir(cacheDir))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close(context.Background()) })
	cfg.Brokers, cfg.NodeID, cfg.Engine, cfg.Logger = []string{broker}, "s", eng, testLogger(t)
	n, err := host.NewNode(context.Background(), p, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- n.Run(ctx) }()
	return n, cancel, done
}
