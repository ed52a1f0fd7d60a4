package host_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/eddy-streams/eddy/host"
	"github.com/eddy-streams/eddy/internal/await"
	"github.com/eddy-streams/eddy/runtime"
)

// cutDialer dials the broker for one client until cut: then it closes the
// client's connections and refuses new ones, as a network that went away
// would, so the client can neither end its transaction nor leave its group.
type cutDialer struct {
	mu    sync.Mutex
	cut   bool
	conns []net.Conn
}

func (d *cutDialer) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.cut {
		return nil, errors.New("cut off")
	}
	c, err := (&net.Dialer{Timeout: 5 * time.Second}).DialContext(ctx, network, addr)
	if err == nil {
		d.conns = append(d.conns, c)
	}
	return c, err
}

func (d *cutDialer) setCut(cut bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.cut = cut
	if cut {
		for _, c := range d.conns {
			c.Close()
		}
		d.conns = nil
	}
}

// TestFenceDepartedNode cuts a node off from the broker while its
// transaction is open, under exactly_once, with a transaction timeout of
// five minutes: the broker would hold the transaction open, and every
// read_committed reader of the output partitions it wrote to would wait
// that long. The node left in the group takes the cut-off node's
// partitions once its session expires and fences its transactional id,
// which aborts the open transaction: the committed output then holds every
// input record exactly once within the test's time, and the survivor
// counts the fencing (eddy_fenced_transactions_total). Without the
// fencing the transaction stays open for the test's whole length.
func TestFenceDepartedNode(t *testing.T) {
	b := startBroker(t, "in", "out", "dlq")
	p := pipeline(t, "fencing", "go/upper.wasm", host.ExactlyOnce, "")
	// The cut-off node commits every 5 s, so that its transaction is open
	// with records most of the time.
	ghostP := pipeline(t, "fencing", "go/upper.wasm", host.ExactlyOnce, "")
	ghostP.CommitInterval = 5 * time.Second
	const session = 6 * time.Second // the least Kafka allows by default
	eng, err := runtime.NewEngine(runtime.WithCacheDir(cacheDir))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close(context.Background()) })
	start := func(p *host.Pipeline, id string, opts ...kgo.Opt) *runningNode {
		n, err := host.NewNode(context.Background(), p, host.NodeConfig{Brokers: []string{b.Addr()}, NodeID: id, Engine: eng,
			SessionTimeout: session, Logger: testLogger(t).With("id", id), RegistryKey: testRegistryKey, ClientOpts: opts})
		if err != nil {
			t.Fatal(err)
		}
		r := &runningNode{node: n, done: make(chan error, 1)}
		r.start(t)
		return r
	}
	dialer := &cutDialer{}
	defer dialer.setCut(false)
	a := start(p, "a")
	ghost := start(ghostP, "ghost", kgo.Dialer(dialer.dial), kgo.TransactionTimeout(5*time.Minute))

	// Input flows all along.
	var sent atomic.Int64
	stop := make(chan struct{})
	produced := make(chan struct{})
	go func() {
		defer close(produced)
		for {
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
			n := int(sent.Load())
			produceN(t, b, "in", n, n+50)
			sent.Add(50)
		}
	}()
	defer func() {
		select {
		case <-stop:
		default:
			close(stop)
		}
		<-produced
	}()
	held := func(r *runningNode) []int32 { return slices.Sorted(slices.Values(r.node.Status().Partitions["in"])) }
	await.Until(t, 50*time.Millisecond, func() bool { return len(held(a)) == 2 && len(held(ghost)) == 2 },
		func() string { return fmt.Sprintf("a holds %v, ghost %v", held(a), held(ghost)) })

	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	txnState := func() string {
		t.Helper()
		txns, err := adm.DescribeTransactions(context.Background(), "fencing-ghost")
		if err != nil {
			t.Fatalf("describe transactions: %v", err)
		}
		txn, ok := txns["fencing-ghost"]
		if !ok || txn.Err != nil {
			t.Fatalf("describe transaction fencing-ghost: %v", txn.Err)
		}
		return txn.State
	}
	// Cut the ghost off while the broker holds a transaction of its open:
	// once cut, it cannot end it, so a second look settles it.
	for attempt := 0; ; attempt++ {
		await.Until(t, 20*time.Millisecond, func() bool { return txnState() == "Ongoing" },
			func() string { return "the ghost's transaction is " + txnState() })
		dialer.setCut(true)
		if txnState() == "Ongoing" {
			break
		}
		if attempt == 10 {
			t.Fatal("the ghost's transaction ended at each of ten cuts")
		}
		dialer.setCut(false)
	}
	cutAt := sent.Load()
	t.Logf("ghost cut off with a transaction open, %d records sent", cutAt)

	await.Until(t, 50*time.Millisecond, func() bool { return len(held(a)) == 4 },
		func() string { return fmt.Sprintf("a holds %v", held(a)) })
	// a counts the fencing once the broker has aborted the transaction.
	srv := httptest.NewServer(a.node.Metrics())
	defer srv.Close()
	fenced := func() float64 {
		return scrapeNode(t, srv.URL, "fencing", "a").value(t, "eddy_fenced_transactions_total")
	}
	await.Until(t, 50*time.Millisecond, func() bool { return fenced() >= 1 },
		func() string { return "a fenced nothing; the cut-off ghost's transaction is " + txnState() })
	if got, state := fenced(), txnState(); got != 1 || state == "Ongoing" {
		t.Errorf("a counted %v fenced transactions, want 1; the ghost's transaction is %s", got, state)
	}
	// Input goes on a while after the takeover, then every record must be
	// in the committed output once.
	await.Until(t, 50*time.Millisecond, func() bool { return sent.Load() > cutAt+500 }, func() string { return "input stopped" })
	close(stop)
	<-produced
	total := int(sent.Load())
	checkOutput(t, consumeAll(t, b, "out", total, 3*time.Second), total, true)
	a.stop(t)

	// The ghost comes back to a fenced producer and stops with an error.
	dialer.setCut(false)
	ghost.cancel()
	ghost.cancel = nil
	select {
	case err := <-ghost.done:
		t.Logf("the ghost stopped: %v", err)
	case <-time.After(60 * time.Second):
		t.Error("the ghost did not stop within 60 s of its link's return")
	}
}
