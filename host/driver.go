package host

import (
	"context"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// A driver runs a node's tasks and takes what they make. There are two:
// the node itself over Kafka (kafkaDriver: the group's partitions,
// transactions, changelogs) and InProcess (records handed over in process,
// no broker, stores that start empty). A task reaches what runs it only
// through its node's driver; the steps themselves run in graph.Executor,
// which knows neither.
type driver interface {
	// send produces r, an output, dead letter, changelog or repartition
	// record of batch b (nil: none), counted against b until acknowledged
	// (task.settle).
	send(ctx context.Context, t *task, b *batch, r *kgo.Record)
	// settled is told that the batch head, at the front of t's queue, is
	// processed and its records acknowledged; called under t.mu.
	settled(t *task, head *batch)
	// restoreTo brings ts up to offset upTo of its log (upTo < 0: its
	// end) and returns the offset reached, where consumption of the log
	// goes on (Node.restoreFromLog).
	restoreTo(ctx context.Context, ts *taskStore, part int32, upTo int64) (int64, error)
	// syncsTime reports whether tasks that join a co-partitioned table
	// take their inputs in time order (timesync.go); InProcess hands them
	// over in the order they are sent.
	syncsTime() bool
}

// kafkaDriver is the node's own driver.
type kafkaDriver struct{ n *Node }

func (d kafkaDriver) send(ctx context.Context, t *task, b *batch, r *kgo.Record) {
	n := d.n
	t.mu.Lock()
	b.pending++
	t.mu.Unlock()
	n.client().Produce(ctx, r, func(_ *kgo.Record, err error) {
		if errors.Is(err, kerr.MessageTooLarge) {
			// Every record is measured against its topic's limit before it
			// is produced (outsize.go): the broker's limit is lower than the
			// one read at start. A restarted node reads it again and
			// dead-letters the record instead.
			err = fmt.Errorf("%w: the broker's limit for the topic is below the %d bytes the node read at start "+
				"(max.message.bytes changed?); a restarted node reads it again", err, n.recordLimit(r.Topic))
		}
		if err != nil {
			n.fail(fmt.Errorf("produce to %s: %w", r.Topic, err))
			return
		}
		t.settle(b)
	})
}

func (d kafkaDriver) settled(t *task, head *batch) {
	n := d.n
	switch {
	case head.last == nil:
		// A tick (timers.go): it consumed nothing.
	case n.p.Delivery != AtLeastOnce:
		// exactly_once commits the offsets with the transaction,
		// at_most_once before processing.
	case n.checkpointing:
		// Marked once the state it changed is checkpointed.
		t.mu.processed = append(t.mu.processed, head.last)
	default:
		n.client().MarkCommitRecords(head.last)
	}
}

func (d kafkaDriver) restoreTo(ctx context.Context, ts *taskStore, part int32, upTo int64) (int64, error) {
	return d.n.restoreFromLog(ctx, ts, part, upTo)
}

func (d kafkaDriver) syncsTime() bool { return true }
