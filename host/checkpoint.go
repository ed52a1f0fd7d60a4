package host

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Stateful steps under at_least_once. No transaction carries the changelog,
// so the node checkpoints every commit interval instead: its tasks finish
// their batches and their outputs are acknowledged; the stores' changes are
// produced to the changelogs and acknowledged; they are written to the local
// stores with the changelog offsets; and only then are the input records
// behind them marked and committed. Until its checkpoint a record's offset
// is not marked (task.settle), so the group never commits past state that
// is not in the changelog. A crash after a checkpoint's changelog writes and
// before its offset commit has the records processed again: their effect on
// state counts twice (at least once), it is never lost.

// checkpoints reports whether a node running p checkpoints its state
// itself (the Node keeps the answer: Node.checkpointing).
func checkpoints(p *Pipeline) bool {
	return p.Delivery == AtLeastOnce && slices.ContainsFunc(p.Steps, func(s Step) bool { return s.Stateful() })
}

// checkpoint makes the state of every task durable and commits the offsets
// of the records it reflects. The poll loop calls it (no batch is dispatched
// meanwhile) and so does shutdown.
func (n *Node) checkpoint(ctx context.Context) error {
	n.ckptMu.Lock()
	defer n.ckptMu.Unlock()
	began := time.Now()
	if err := n.drainTasks(ctx); err != nil {
		return err
	}
	if err := n.persist(ctx, n.allTasks()); err != nil {
		return err
	}
	n.metrics.commit.Observe(time.Since(began).Seconds())
	return nil
}

// checkpointRevoked stops the tasks of revoked partitions after their queued
// batches and checkpoints them before the partitions move: their next owner
// restores exactly what they processed.
func (n *Node) checkpointRevoked(ctx context.Context, parts map[string][]int32) error {
	n.ckptMu.Lock()
	defer n.ckptMu.Unlock()
	stopped := n.stopTasks(parts, true)
	if err := n.cl.Flush(ctx); err != nil { // the stopped tasks' outputs
		return fmt.Errorf("checkpoint: %w", err)
	}
	return n.persist(ctx, stopped)
}

// persist writes the idle tasks' state changes to the changelogs, then to
// their stores, then marks and commits the offsets of the records processed
// since the last checkpoint. n.ckptMu must be held.
func (n *Node) persist(ctx context.Context, tasks []*task) error {
	var failed firstError
	n.logChanges(ctx, tasks, &failed)
	if err := n.cl.Flush(ctx); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	if err := failed.get(); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	if err := n.settleStores(tasks, true); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	var marks []*kgo.Record
	for _, t := range tasks {
		marks = append(marks, t.takeProcessed()...)
	}
	n.cl.MarkCommitRecords(marks...)
	// Also commits what an interrupted checkpoint marked.
	if err := n.cl.CommitMarkedOffsets(ctx); err != nil {
		if ctx.Err() != nil {
			return ctx.Err() // stopping: the final checkpoint commits them
		}
		// The offsets stay marked: the next commit takes them.
		n.log.Warn("commit after a checkpoint failed", "error", err)
		return nil
	}
	n.stats.commits.Add(1)
	return nil
}
