package host

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/eddy-streams/eddy/state"
)

// ChangelogTopic is the compacted topic that holds the changes of a stateful
// step's store, one partition per source partition.
func ChangelogTopic(pipeline, step string) string {
	return pipeline + "-" + step + "-changelog"
}

const changelogSuffix = "-changelog"

// partitioner sends changelog records to the partition they name (the task's
// partition); repartition records by murmur2 of their key, except progress
// markers, which name their partition; and every other record by Kafka's
// default rule (murmur2 of the key).
type partitioner struct{ def, manual, keyed kgo.Partitioner }

func newPartitioner() kgo.Partitioner {
	return partitioner{def: kgo.UniformBytesPartitioner(64<<10, true, true, nil), manual: kgo.ManualPartitioner(),
		keyed: kgo.StickyKeyPartitioner(nil)}
}

// ForTopic implements kgo.Partitioner.ForTopic.
func (p partitioner) ForTopic(t string) kgo.TopicPartitioner {
	switch {
	case strings.HasSuffix(t, changelogSuffix):
		return p.manual.ForTopic(t)
	case strings.HasSuffix(t, repartitionSuffix):
		return repartitioner{keyed: p.keyed.ForTopic(t)}
	}
	return p.def.ForTopic(t)
}

// repartitioner partitions a repartition topic's records.
type repartitioner struct{ keyed kgo.TopicPartitioner }

func (repartitioner) RequiresConsistency(*kgo.Record) bool { return true }

func (r repartitioner) Partition(rec *kgo.Record, n int) int {
	if isProgress(rec.Headers) {
		return int(rec.Partition)
	}
	return r.keyed.Partition(rec, n)
}

// taskStore is a stateful step's store in a task, with the changelog offsets
// of the open transaction.
type taskStore struct {
	st    *state.Store
	topic string
	next  int64 // offset after the last changelog record produced in the open transaction
	// source marks a table's store: topic is the table's own topic, which
	// the store is restored from and which the task consumes; its changes
	// are not written anywhere, and next is the table offset reached.
	source bool
}

// restore brings a store up to date with its changelog partition: from its
// checkpoint, or from the start when it has none (a new node, or a lost
// data directory). It reads with read_committed isolation up to the last
// stable offset.
func (n *Node) restore(ctx context.Context, ts *taskStore, part int32) error {
	if n.inProcess {
		return nil // stores start empty
	}
	cp, err := ts.st.Checkpoint()
	if err != nil {
		return err
	}
	start := kgo.NewOffset().AtStart()
	if cp >= 0 {
		start = kgo.NewOffset().At(cp)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(n.cfg.Brokers...),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{ts.topic: {part: start}}),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.FetchMaxWait(100*time.Millisecond),
		// Transaction markers come through, so that a log whose tail is
		// markers (and aborted records) is known to be read to its end
		// instead of waiting out a fetch that returns nothing.
		kgo.KeepControlRecords())
	if err != nil {
		return err
	}
	defer cl.Close()
	began := time.Now()
	restored, next := 0, max(cp, 0)
	// The end of the log now: nothing to read when the checkpoint is there.
	ends, err := kadm.NewClient(cl).ListEndOffsets(ctx, ts.topic)
	if err != nil {
		return fmt.Errorf("restore %s[%d]: end offset: %w", ts.topic, part, err)
	}
	end := int64(-1)
	if o, ok := ends.Lookup(ts.topic, part); ok && o.Err == nil {
		end = o.Offset
	}
	meter := n.metrics.restoring(end - next) // metrics.go
	defer meter.done()
	wait := 5 * time.Second // the first fetch also looks up the partition
	for end < 0 || next < end {
		pctx, cancel := context.WithTimeout(ctx, wait)
		wait = 200 * time.Millisecond // what is left past the data is markers
		fetches := cl.PollFetches(pctx)
		cancel()
		if ctx.Err() != nil {
			return ctx.Err()
		}
		var ferr error
		fetches.EachError(func(_ string, _ int32, err error) {
			if !errors.Is(err, context.DeadlineExceeded) {
				ferr = err
			}
		})
		if ferr != nil {
			return fmt.Errorf("restore %s[%d]: %w", ts.topic, part, ferr)
		}
		var changes []state.Change
		fetches.EachPartition(func(fp kgo.FetchTopicPartition) {
			for _, r := range fp.Records {
				next = r.Offset + 1
				if r.Attrs.IsControl() {
					continue
				}
				changes = append(changes, state.Change{Key: r.Key, Value: r.Value, Deleted: r.Value == nil})
			}
		})
		if fetches.NumRecords() > 0 { // data or markers: the checkpoint moves
			if err := ts.st.Restore(changes, next); err != nil {
				return err
			}
			restored += len(changes)
			meter.restored(len(changes), end-next)
		}
		// Done at the end offset, or when a poll finds nothing: the rest
		// is aborted records or transaction markers.
		if fetches.Empty() {
			break
		}
	}
	n.log.Info("store restored", "changelog", ts.topic, "partition", part, "from", cp, "records", restored, "took", time.Since(began).Round(time.Millisecond))
	return nil
}

// logChanges produces the pending changes of the stateful stores of tasks to
// their changelogs (inside the open transaction under exactly_once). The
// tasks must be idle. A failed produce fails the node; it is also reported
// to failed, when not nil, by the time the client is flushed.
func (n *Node) logChanges(ctx context.Context, tasks []*task, failed *firstError) {
	for _, t := range tasks {
		if err := t.saveWatermarks(); err != nil {
			n.fail(err)
			failed.set(err)
			return
		}
		for _, ts := range t.stores {
			if ts == nil || ts.source {
				continue
			}
			for _, c := range ts.st.Changes() {
				r := &kgo.Record{Topic: ts.topic, Partition: t.part, Key: c.Key, Value: c.Value}
				n.cl.Produce(ctx, r, func(r *kgo.Record, err error) {
					if err != nil {
						err = fmt.Errorf("changelog %s: %w", r.Topic, err)
						n.fail(err)
						failed.set(err)
						return
					}
					// Promises of one partition run in order.
					ts.next = r.Offset + 1
				})
			}
		}
	}
}

// allTasks lists the node's running tasks.
func (n *Node) allTasks() []*task {
	n.mu.Lock()
	defer n.mu.Unlock()
	ts := make([]*task, 0, len(n.mu.groups))
	for _, t := range n.mu.groups {
		ts = append(ts, t)
	}
	return ts
}

// firstError keeps the first error reported to it from any goroutine; a nil
// *firstError ignores reports.
type firstError struct {
	mu  sync.Mutex
	err error
}

func (f *firstError) set(err error) {
	if f == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err == nil {
		f.err = err
	}
}

func (f *firstError) get() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err
}

// settleStores commits (after a committed transaction or a checkpoint) or
// aborts the pending changes of the stores of tasks.
func (n *Node) settleStores(tasks []*task, committed bool) error {
	for _, t := range tasks {
		for _, ts := range t.stores {
			if ts == nil {
				continue
			}
			if !committed {
				ts.st.Abort()
				continue
			}
			if ts.st.Pending() == 0 {
				continue
			}
			if err := ts.st.Commit(ts.next); err != nil {
				return err
			}
		}
	}
	return nil
}
