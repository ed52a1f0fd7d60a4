package host

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Fencing a departed node's transaction.
//
// Under exactly_once a node killed with a transaction open leaves it open,
// and the broker aborts it only at the transaction timeout (max(10 s, 10 ×
// commit_interval)). Until then the last stable offset of every output
// partition the dead node wrote to stays where its transaction began, so
// read_committed readers see nothing newer there — whoever processes its
// partitions now, however warm their standby copies. A node therefore
// looks at its group after each assignment (fenceDeparted): an Eddy node
// it saw as a member before, that is a member no longer, and whose
// transactional id (<pipeline>-<node id>) has a transaction open that
// began well before the group was described (half a session timeout), is
// presumed dead, and its transactional id is fenced: InitProducerID under
// it aborts the open transaction at once and bumps its producer epoch.
//
// What makes that safe:
//   - A node not in the group has no partitions, so no transaction of its
//     own is legitimate: it is dead, cut off or paused past the session
//     timeout, and what it wrote meanwhile must not be committed (the
//     group's generation moved on; fencing only makes that sooner).
//   - A node restarting with its id (a static member, or one that comes
//     back on its data directory) aborts its old transaction itself
//     (InitProducerID) before it begins a new one, and begins one only
//     after it has joined the group: its transactions start after the
//     description that found it missing, and half a session timeout keeps
//     broker and node clocks from mistaking one for old. A node found in
//     the group is never fenced.
//   - A node fenced while alive (cut off past its session timeout, then
//     back) finds its producer refused, PRODUCER_FENCED, and exits; a
//     supervisor restarts it (docs/operating.md, "Several hosts"), as
//     when the broker's timeout aborted its transaction.

// fencer is the node's fencing goroutine's state (exactly_once only).
type fencer struct {
	wake chan struct{} // runFencer's signal (buffer 1)
	// requested counts the wakes; mu guards finished, the value of
	// requested when the last finished look at the group began, and
	// roundDone, closed when a look finishes (awaitFence).
	requested atomic.Int64
	mu        sync.Mutex
	finished  int64
	roundDone chan struct{}
	// seen is the node ids found as members of the group since the node
	// started; only runFencer uses it.
	seen map[string]bool
	// quit and done stop and wait for runFencer (startFencer).
	quit context.CancelFunc
	done chan struct{}
}

// fenceTimeout bounds one look at the group and the fencing it leads to.
const fenceTimeout = 30 * time.Second

// fenceWait bounds how long an assignment waits for the look at the group
// that its sync started (awaitFence).
const fenceWait = 5 * time.Second

// memberNodeID is the node id of a group member whose client id is Eddy's
// ("eddy-<node id>"), or "" for another client.
func memberNodeID(clientID string) string {
	id, ok := strings.CutPrefix(clientID, "eddy-")
	if !ok {
		return ""
	}
	return id
}

// wakeFencer has the fencing goroutine look at the group (after each
// assignment). It does not block.
func (n *Node) wakeFencer() {
	if n.fence.wake == nil {
		return
	}
	n.fence.requested.Add(1)
	select {
	case n.fence.wake <- struct{}{}:
	default:
	}
}

// startFencer starts the node's fencing goroutine (runFencer), which
// stopFencer stops.
func (n *Node) startFencer(ctx context.Context) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	n.fence.quit, n.fence.done = cancel, done
	go func() {
		defer close(done)
		n.runFencer(ctx)
	}()
}

func (n *Node) stopFencer() {
	if n.fence.quit != nil {
		n.fence.quit()
		<-n.fence.done
	}
}

func (n *Node) runFencer(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-n.fence.wake:
			round := n.fence.requested.Load()
			fctx, cancel := context.WithTimeout(ctx, fenceTimeout)
			if err := n.fenceDeparted(fctx); err != nil && ctx.Err() == nil {
				n.log.Warn("fencing departed nodes' transactions", "error", err)
			}
			cancel()
			n.fence.mu.Lock()
			n.fence.finished = round
			if n.fence.roundDone != nil {
				close(n.fence.roundDone)
				n.fence.roundDone = nil
			}
			n.fence.mu.Unlock()
		}
	}
}

// awaitFence waits, at most fenceWait, until the fencing goroutine has
// looked at the group since the last assignment's sync woke it. assigned
// calls it before the client fetches the group's offsets of the new
// partitions: a dead node's transaction that holds offsets of them makes
// that fetch answer UNSTABLE_OFFSET_COMMIT, which franz-go retries only a
// second later, so the fencing must come first.
func (n *Node) awaitFence(ctx context.Context) {
	if n.fence.wake == nil || n.fence.quit == nil {
		return
	}
	want := n.fence.requested.Load()
	t := time.NewTimer(fenceWait)
	defer t.Stop()
	for {
		n.fence.mu.Lock()
		if n.fence.finished >= want {
			n.fence.mu.Unlock()
			return
		}
		if n.fence.roundDone == nil {
			n.fence.roundDone = make(chan struct{})
		}
		ch := n.fence.roundDone
		n.fence.mu.Unlock()
		select {
		case <-ch:
		case <-t.C:
			return
		case <-ctx.Done():
			return
		case <-n.fence.done: // the fencing goroutine stopped
			return
		}
	}
}

// fenceDeparted describes the group and fences the transactional ids of
// the nodes that left it with a transaction open (see the top of the
// file).
func (n *Node) fenceDeparted(ctx context.Context) error {
	cl := n.clientLoaded.Load()
	if cl == nil {
		return nil // woken while the client was being made: the next assignment wakes it again
	}
	described := time.Now()
	adm := kadm.NewClient(cl)
	groups, err := adm.DescribeGroups(ctx, n.p.Name)
	if err != nil {
		return fmt.Errorf("describe group %s: %w", n.p.Name, err)
	}
	g, ok := groups[n.p.Name]
	if !ok || g.Err != nil {
		return fmt.Errorf("describe group %s: %v", n.p.Name, g.Err)
	}
	if g.State != "Stable" && g.State != "CompletingRebalance" {
		return nil // the next assignment wakes it again
	}
	now := map[string]bool{}
	for _, m := range g.Members {
		if id := memberNodeID(m.ClientID); id != "" {
			now[id] = true
		}
	}
	if n.fence.seen == nil {
		n.fence.seen = map[string]bool{}
	}
	var departed []string
	for id := range n.fence.seen {
		if !now[id] && id != n.cfg.NodeID {
			departed = append(departed, id)
		}
	}
	for id := range now {
		n.fence.seen[id] = true
	}
	if len(departed) == 0 {
		return nil
	}
	txnIDs := make([]string, len(departed))
	for i, id := range departed {
		txnIDs[i] = n.p.Name + "-" + id
	}
	txns, err := adm.DescribeTransactions(ctx, txnIDs...)
	if err != nil && len(txns) == 0 {
		return fmt.Errorf("describe transactions %v: %w", txnIDs, err)
	}
	started := described.Add(-n.cfg.SessionTimeout / 2).UnixMilli()
	var errs []error
	for i, id := range departed {
		txn, ok := txns[txnIDs[i]]
		switch {
		case !ok || txn.Err != nil:
			// Looked at again after the next assignment.
			if ok {
				errs = append(errs, fmt.Errorf("describe transaction %s: %w", txnIDs[i], txn.Err))
			}
			continue
		case txn.State != "Ongoing" || txn.StartTimestamp > started:
			delete(n.fence.seen, id)
			continue
		}
		if err := n.fenceTransactionalID(ctx, txnIDs[i]); err != nil {
			errs = append(errs, err)
			continue
		}
		delete(n.fence.seen, id)
		n.metrics.fenced.Add(1)
		n.log.Info("fenced a departed node's open transaction", "departed", id, "transactional_id", txnIDs[i],
			"began", time.UnixMilli(txn.StartTimestamp).UTC().Format(time.RFC3339Nano), "producer_id", txn.ProducerID, "epoch", txn.ProducerEpoch)
	}
	if len(errs) > 0 {
		return fmt.Errorf("%d of %d departed nodes not fenced: %w", len(errs), len(departed), errs[0])
	}
	return nil
}

// fenceTransactionalID initialises a producer under id, which aborts its
// open transaction and bumps its epoch, and returns once the broker has
// done so.
func (n *Node) fenceTransactionalID(ctx context.Context, id string) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(n.cfg.Brokers...), kgo.ClientID("eddy-"+n.cfg.NodeID+"-fencing"),
		kgo.TransactionalID(id), kgo.TransactionTimeout(transactionTimeout(n.p)))
	if err != nil {
		return fmt.Errorf("fence %s: %w", id, err)
	}
	defer cl.Close()
	if _, _, err := cl.ProducerID(ctx); err != nil {
		return fmt.Errorf("fence %s: %w", id, err)
	}
	return nil
}
