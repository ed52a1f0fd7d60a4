package host

import (
	"context"
	"errors"
	"fmt"
	"slices"
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

// changelogTopics are the changelog topics of p's stores: of its stateful
// steps, and of the timers of its steps with timers.
func changelogTopics(p *Pipeline) []string {
	var topics []string
	for _, s := range p.Steps {
		if s.Changelogged() {
			topics = append(topics, ChangelogTopic(p.Name, s.Name))
		}
		if s.Timed() {
			topics = append(topics, TimerTopic(p.Name, s.Name))
		}
	}
	return topics
}

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
	case strings.HasSuffix(t, RepartitionSuffix):
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
	// standby marks a standby copy's store (standby.go): its catching up
	// is standby work, not a restore.
	standby bool
}

// restore brings a store up to date with its changelog partition: from its
// checkpoint, or from the start when it has none (a new node, or a lost
// data directory). It reads with read_committed isolation up to the last
// stable offset.
//
// A checkpoint that the changelog cannot have written (the changelog was
// deleted and created again, or the broker lost it: the topic's id is not
// the one recorded with the checkpoint, or its end is before the
// checkpoint) means the local copy follows another log: continuing from it
// would keep state the changelog does not have and count on from it. The
// store is then wiped and rebuilt from the changelog alone, which is the
// durable copy; the node says so (rebuildStore).
func (n *Node) restore(ctx context.Context, ts *taskStore, part int32) error {
	_, err := n.drv.restoreTo(ctx, ts, part, -1)
	return err
}

// restoreFromLog, the Kafka driver's restoreTo, is restore up to offset upTo
// of the log (upTo < 0: its end). A checkpoint past upTo means the store
// holds records the caller does not want it to have (a table's store ahead of its group's committed offset):
// the store is wiped and rebuilt up to upTo (rebuildAhead). It returns the
// offset the store reached: where the log's consumption goes on.
func (n *Node) restoreFromLog(ctx context.Context, ts *taskStore, part int32, upTo int64) (int64, error) {
	cp, cpID, err := ts.st.CheckpointOf()
	corrupt := errors.Is(err, state.ErrBadCheckpoint)
	if err != nil && !corrupt {
		return 0, err
	}
	answers := &fetchAnswers{}
	open := func(cp int64) (*kgo.Client, error) {
		start := kgo.NewOffset().AtStart()
		if cp >= 0 {
			start = kgo.NewOffset().At(cp)
		}
		return kgo.NewClient(kgo.SeedBrokers(n.cfg.Brokers...), kgo.WithHooks(answers),
			kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{ts.topic: {part: start}}),
			kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.FetchMaxWait(100*time.Millisecond),
			// Larger fetches than a consumer's 1 MiB a partition: a restore
			// reads one partition as fast as it can (restorelog.go).
			kgo.FetchMaxBytes(restoreFetchBytes), kgo.FetchMaxPartitionBytes(restoreFetchBytes),
			// Transaction markers come through, so that a log whose tail is
			// markers (and aborted records) is known to be read to its end
			// instead of waiting out a fetch that returns nothing.
			kgo.KeepControlRecords())
	}
	// The listings go through the node's own client, whose connections
	// are open: a store whose checkpoint is at the log's end (a caught-up
	// standby copy taken over, an empty changelog) needs no client of its
	// own, which would dial the brokers and look them up first.
	var cl *kgo.Client
	defer func() {
		if cl != nil {
			cl.Close()
		}
	}()
	began := time.Now()
	lister := n.cl
	if lister == nil {
		if cl, err = open(cp); err != nil {
			return 0, err
		}
		lister = cl
	}
	adm := kadm.NewClient(lister)
	// The end of the log now: nothing to read when the checkpoint is there.
	ends, err := adm.ListEndOffsets(ctx, ts.topic)
	if err != nil {
		return 0, fmt.Errorf("restore %s[%d]: end offset: %w", ts.topic, part, err)
	}
	end := int64(-1)
	if o, ok := ends.Lookup(ts.topic, part); ok && o.Err == nil {
		end = o.Offset
	}
	id, err := changelogID(ctx, adm, ts.topic)
	if err != nil {
		return 0, fmt.Errorf("restore %s[%d]: %w", ts.topic, part, err)
	}
	reason := checkpointMismatch(cp, cpID, end, id)
	switch {
	case corrupt:
		reason = rebuildCorrupt
	case reason == "" && upTo >= 0 && cp > upTo:
		reason = rebuildAhead
	}
	if reason != "" {
		if err := n.rebuildStore(ts, part, reason, cp, end); err != nil {
			return 0, err
		}
		if cl != nil {
			cl.Close()
			cl = nil
		}
		cp = -1
	}
	if upTo >= 0 && (end < 0 || upTo < end) {
		end = upTo
	}
	ts.st.SetChangelogID(id)
	restored, skipped, next := 0, 0, max(cp, 0)
	meter := n.metrics.restoring(ts.topic, part, end-next, ts.standby) // metrics.go
	defer meter.done()
	if end >= 0 && next >= end {
		n.log.Info("store restored", "changelog", ts.topic, "partition", part, "from", cp, "records", 0, "took", time.Since(began).Round(time.Millisecond))
		return next, nil
	}
	if cl == nil {
		if cl, err = open(cp); err != nil {
			return 0, err
		}
	}
	// A goroutine reads the changelog while this one writes what it read
	// (restorelog.go): the next fetches arrive while Badger takes a batch.
	f := startRestoreFetch(ctx, cl, answers, ts.topic, part, next, end, upTo)
	defer f.stop() // before cl.Close, deferred above
	err = writeRestore(ctx, f.chunks, restoreBatchBytes, ts.st.Restorable, func(b *restoreBatch) error {
		if err := ts.st.Restore(b.changes, b.next); err != nil {
			return err
		}
		restored += len(b.changes)
		skipped += b.skipped
		next = b.next
		meter.restored(len(b.changes), end-next)
		return nil
	})
	if err != nil {
		return 0, err // the store's, or ctx's
	}
	if err := f.wait(); err != nil {
		if ctx.Err() != nil {
			return 0, ctx.Err()
		}
		return 0, fmt.Errorf("restore %s[%d]: %w", ts.topic, part, err)
	}
	if skipped > 0 {
		n.log.Warn("changelog records the store cannot hold were skipped", "changelog", ts.topic, "partition", part,
			"records", skipped, "max_key_bytes", state.MaxKey, "max_value_bytes", state.MaxValue)
	}
	n.log.Info("store restored", "changelog", ts.topic, "partition", part, "from", cp, "records", restored, "took", time.Since(began).Round(time.Millisecond))
	return next, nil
}

// Why a store is rebuilt from its changelog (rebuildStore), the values of
// the reason label of eddy_state_rebuilds_total and of StoreRebuild.Reason.
const (
	// rebuildReplaced: the changelog topic's id is not the one recorded
	// with the checkpoint: the topic was deleted and created again.
	rebuildReplaced = "changelog_replaced"
	// rebuildBehind: the changelog ends before the checkpoint: the
	// broker lost records the local copy has (an in-memory broker that
	// restarted, a topic created again on a broker without topic ids).
	rebuildBehind = "changelog_behind"
	// rebuildCorrupt: the local checkpoint does not decode
	// (state.ErrBadCheckpoint): the local copy cannot say where it is.
	rebuildCorrupt = "checkpoint_corrupt"
	// rebuildAhead: a table's store holds records past the offset of the
	// table's topic that its consumer group committed (the group is new or
	// its offsets were reset, or a checkpoint was not followed by its
	// commit): it would join stream records with table updates later
	// than the ones they meet.
	rebuildAhead = "ahead_of_group"
)

var rebuildReasons = [...]string{rebuildReplaced, rebuildBehind, rebuildCorrupt, rebuildAhead}

// checkpointMismatch returns why a store whose checkpoint is cp, recorded
// with changelog id cpID, does not follow a changelog partition whose id is
// id and whose end is end; "" when it does (or cannot tell: no checkpoint,
// no ids, no end).
func checkpointMismatch(cp int64, cpID [16]byte, end int64, id [16]byte) string {
	var zero [16]byte
	switch {
	case cp < 0:
		return ""
	case cpID != zero && id != zero && cpID != id:
		return rebuildReplaced
	case end >= 0 && cp > end:
		return rebuildBehind
	}
	return ""
}

// changelogID returns the topic id of a changelog, zero when the broker
// gives none or the topic does not exist yet.
func changelogID(ctx context.Context, adm *kadm.Client, topic string) ([16]byte, error) {
	tds, err := adm.ListTopics(ctx, topic)
	if err != nil {
		return [16]byte{}, fmt.Errorf("topic id: %w", err)
	}
	td, ok := tds[topic]
	if !ok || td.Err != nil {
		return [16]byte{}, nil
	}
	return td.ID, nil
}

// rebuildStore wipes a store that does not follow its changelog, before it
// is restored from the start, and reports it: a warning in the log, the
// metric eddy_state_rebuilds_total{reason} and the node's status
// (NodeStatus.StateRebuilds).
func (n *Node) rebuildStore(ts *taskStore, part int32, reason string, cp, end int64) error {
	n.log.Warn("store does not match its changelog: rebuilding it from the changelog", "changelog", ts.topic,
		"partition", part, "reason", reason, "checkpoint", cp, "changelog_end", end)
	if err := ts.st.Wipe(); err != nil {
		return fmt.Errorf("rebuild %s[%d]: %w", ts.topic, part, err)
	}
	n.metrics.stateRebuilt(reason)
	n.rebuilds.add(StoreRebuild{Changelog: ts.topic, Partition: part, Reason: reason, Checkpoint: cp, End: end, At: time.Now().UTC()})
	return nil
}

// StoreRebuild is a store that was wiped and rebuilt from its changelog
// because its local checkpoint did not match the changelog (see
// Node.restore).
type StoreRebuild struct {
	Changelog string `json:"changelog"`
	Partition int32  `json:"partition"`
	// Reason is changelog_replaced (the topic's id changed),
	// changelog_behind (the changelog ends before the checkpoint) or
	// checkpoint_corrupt (the local checkpoint does not decode).
	Reason string `json:"reason"`
	// Checkpoint is the offset the local copy claimed; End the changelog
	// partition's end offset then.
	Checkpoint int64     `json:"checkpoint"`
	End        int64     `json:"end"`
	At         time.Time `json:"at"`
}

// storeRebuilds keeps the node's last rebuilds for its status.
type storeRebuilds struct {
	mu   sync.Mutex
	last []StoreRebuild
}

// keptRebuilds bounds the rebuilds the status lists (the most recent).
const keptRebuilds = 16

func (r *storeRebuilds) add(sr StoreRebuild) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.last) == keptRebuilds {
		r.last = append(r.last[:0], r.last[1:]...)
	}
	r.last = append(r.last, sr)
}

func (r *storeRebuilds) list() []StoreRebuild {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.last)
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
		for _, ts := range t.allStores() {
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
		for _, ts := range t.allStores() {
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
