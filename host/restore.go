package host

import (
	"context"
	"fmt"
	"runtime"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Background restores.
//
// A task whose stores hold gigabytes takes minutes to restore from its
// changelogs. Restored inside the group's assignment callback, that would
// hold up the group goroutine (a rebalance during it could not complete in
// time, and the node would be thrown out of the group) and the new
// partitions' fetching with it. Instead the task is made in a goroutine of
// its own while its partitions stay paused; the poll loop goes on with the
// node's other partitions, transactions commit without it (it is in no
// transaction until it is published), and status and metrics show its
// progress (restoreMeter). Once its stores are restored the task is
// published and its partitions resumed; if the partitions are revoked
// first, the restore is cancelled where it is (the store keeps a checkpoint
// that matches what it wrote, and the next restore goes on from there).

// restoreConcurrency bounds the restores a node runs at once: each is a
// fetch and a stream of Badger writes, and many at once only share the
// disk and the cores.
var restoreConcurrency = max(2, runtime.GOMAXPROCS(0))

// pendingTask is a task being made in the background.
type pendingTask struct {
	topics []string // the task's assigned input topics
	// cl is the client that paused the partitions: the one the group's
	// callbacks are given, which may come before Run has set n.cl.
	cl     *kgo.Client
	cancel context.CancelFunc
	done   chan struct{} // closed when the goroutine is over
}

// restoresInBackground reports whether the tasks of stage index st are
// made in the background: they have stores to restore, and no input that
// joins a co-partitioned table (such a task's table restores up to the
// group's committed offset of its partition, known only once assigned has
// returned: adjustOffsets needs the task then).
func (n *Node) restoresInBackground(st int) bool {
	stage := n.stages[st]
	if n.drv.syncsTime() && newTimeSync(n.p, stage) != nil {
		return false
	}
	for i := stage.From; i < stage.To; i++ {
		if n.p.Steps[i].Stateful() || n.p.Steps[i].Kind == StepJoin {
			return true
		}
	}
	return false
}

// restoreInBackground starts making the task of k, whose partition of
// topics is paused (through cl, the group callback's client) until it is
// published. n.mu must be held.
func (n *Node) restoreInBackground(cl *kgo.Client, k taskKey, topics []string) {
	ctx, cancel := context.WithCancel(n.runCtx)
	pt := &pendingTask{topics: topics, cl: cl, cancel: cancel, done: make(chan struct{})}
	n.mu.restoring[k] = pt
	for _, topic := range topics {
		cl.PauseFetchPartitions(map[string][]int32{topic: {k.part}})
	}
	go func() {
		defer close(pt.done)
		defer cancel()
		select {
		case n.restoreSlots <- struct{}{}:
			defer func() { <-n.restoreSlots }()
		case <-ctx.Done():
			return
		}
		n.stopStandby(k.part) // a copy of its stores no longer
		t, err := n.newTask(ctx, k)
		if err != nil {
			if ctx.Err() != nil {
				return // revoked or stopping: the restore was cancelled
			}
			n.fail(fmt.Errorf("task %d/%d: %w", k.stage, k.part, err))
			return
		}
		if !n.publishRestored(k, pt, t) {
			t.stop(false) // revoked while it was made
		}
	}()
}

// publishRestored publishes t, made in the background for k, and resumes
// its partitions, unless its partitions were revoked meanwhile
// (cancelRestores removed pt).
func (n *Node) publishRestored(k taskKey, pt *pendingTask, t *task) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.mu.restoring[k] != pt {
		return false
	}
	delete(n.mu.restoring, k)
	n.publishTask(t, pt.topics)
	for _, topic := range pt.topics {
		n.fetchGate(t, topic)
	}
	n.log.Info("partitions restored", "partition", k.part, "topics", pt.topics)
	return true
}

// cancelRestores cancels the background restores of the partitions in
// parts and returns them; the caller waits for each one's done, not under
// n.mu (the goroutine takes it to publish). Their partitions are resumed:
// a pause outlives the assignment in the client. n.mu must be held.
func (n *Node) cancelRestores(parts map[string][]int32) []*pendingTask {
	var out []*pendingTask
	for topic, ps := range parts {
		for _, p := range ps {
			k := taskKey{stage: n.stageIndex(topic), part: p}
			pt := n.mu.restoring[k]
			if pt == nil {
				continue
			}
			delete(n.mu.restoring, k)
			pt.cancel()
			for _, in := range pt.topics {
				pt.cl.ResumeFetchPartitions(map[string][]int32{in: {p}})
			}
			out = append(out, pt)
		}
	}
	return out
}
