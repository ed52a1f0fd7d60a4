package host

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Time synchronisation of a task whose stage joins a co-partitioned table
// (Kafka Streams' task idling): the task takes the records of its input
// partitions — the stream's, the table's, any other stream's — in timestamp
// order across them, so that a stream record meets the table as of its own
// time: every table update with a timestamp up to the record's is applied
// before it joins, none later.
//
// Fetched records of such a task wait in one queue per input partition
// (syncQueue) until they are next in time. A record is next when its queue's
// head is the earliest of the non-empty queues (a table update before a
// stream record of the same time) and no empty queue can still bring an
// earlier record: an empty queue whose partition is read to its end (as the
// last fetch or offset listing told) holds nothing back; one that lags holds
// the others back until its records are fetched, but at most max_idle
// (timeSync.maxIdle): then the task goes on with what it has, and the
// lagging partition's records, when they come, are taken in their turn (a
// table update then reaches only the stream records after it).
//
// Records wait only between polls of one transaction under exactly_once:
// the consumer's offsets are those of the fetched records, so before a
// transaction commits, the node moves each queued partition's fetch offset
// back to its first queued record (rewindSync) and fetches those records
// again in the next one. Under at_least_once the offsets committed are those
// of processed records only, and queued records wait across commits.

// syncQueue is one input partition of a synchronised task: its fetched
// records not yet handed to the task, in offset order.
type syncQueue struct {
	topic string
	table bool // the topic of a co-partitioned table
	recs  []*kgo.Record
	// stamps is, for each of recs, its fetch stamp (recordStamp): the
	// number of end listings begun before the client received it.
	stamps []uint64
	bytes  int
	// fetched is the offset after the last record (data or transaction
	// marker) fetched from the partition, end the partition's last stable
	// offset as last seen; -1 when unknown (which counts as lagging).
	fetched, end int64
	// waitSince is when the queue, empty and lagging, began to hold the
	// others back (zero when it does not); timedOut is set once that wait
	// passed max_idle.
	waitSince time.Time
	timedOut  bool
	paused    bool // fetching is paused: the queue is full (syncFull)
	// stale is set when the partition's fetching is paused (for any
	// reason): records written meanwhile are not fetched, so the end last
	// seen says nothing of them. It is cleared by a fetch of the
	// partition's records while it is not paused, or by a listing of its
	// end begun after its last pause (pauses counts them).
	stale  bool
	pauses int
	// sure is the number of the last listing of the end (Node.listings):
	// begun after the client received every record whose stamp is below
	// it, the end counts every record written before those. An end seen
	// in a fetch is not enough: one fetch reads its partitions one after
	// the other, and a record of another partition in the same fetch may
	// have been written after this partition was read (a broker thread
	// descheduled between two partitions on a busy machine does it).
	sure uint64
}

// lagging reports whether the partition may have records the node has not
// fetched.
func (q *syncQueue) lagging() bool {
	return q.stale || q.fetched < 0 || q.end < 0 || q.fetched < q.end
}

// pausedAt notes that the partition's fetching was paused.
func (q *syncQueue) pausedAt() {
	q.stale = true
	q.pauses++
}

// add appends fetched data records; fetched is the offset after the last
// record of the fetch (markers included) and end the partition's last
// stable offset it reported; fresh says the partition is fetched (not
// paused) now, so that end is as current as the other partitions' ends.
func (q *syncQueue) add(recs []*kgo.Record, fetched, end int64, fresh bool) {
	if fresh {
		q.stale = false
	}
	q.recs = append(q.recs, recs...)
	for _, r := range recs {
		q.bytes += len(r.Key) + len(r.Value)
		q.stamps = append(q.stamps, recordStamp(r))
	}
	q.fetched = max(q.fetched, fetched)
	q.end = max(q.end, end)
	if len(recs) > 0 {
		q.waitSince, q.timedOut = time.Time{}, false
	}
}

// take removes and returns the first k records.
func (q *syncQueue) take(k int) []*kgo.Record {
	run := q.recs[:k:k]
	for _, r := range run {
		q.bytes -= len(r.Key) + len(r.Value)
	}
	if k == len(q.recs) {
		q.recs, q.stamps = nil, q.stamps[:0]
	} else {
		q.recs, q.stamps = q.recs[k:], q.stamps[k:]
	}
	return run
}

// timeSync orders a task's input partitions by time.
type timeSync struct {
	queues  []*syncQueue // one per input of the stage, in Stage.Inputs order
	maxIdle time.Duration
}

// newTimeSync returns the synchronisation of a task of stage st, or nil
// when the stage joins no co-partitioned table.
func newTimeSync(p *Pipeline, st Stage) *timeSync {
	var s *timeSync
	for _, in := range st.Inputs {
		i, side := st.Sides[in]
		if !side || p.Steps[i].Table == "" {
			continue
		}
		if s == nil {
			s = &timeSync{maxIdle: MaxMaxIdle}
		}
		s.maxIdle = min(s.maxIdle, p.Steps[i].MaxIdleOrDefault())
	}
	if s == nil {
		return nil
	}
	for _, in := range st.Inputs {
		i, side := st.Sides[in]
		s.queues = append(s.queues, &syncQueue{topic: in, table: side && p.Steps[i].Table != "", fetched: -1, end: -1})
	}
	return s
}

// queue returns the queue of topic, or nil.
func (s *timeSync) queue(topic string) *syncQueue {
	for _, q := range s.queues {
		if q.topic == topic {
			return q
		}
	}
	return nil
}

// before reports whether record r of queue a comes before the head of queue
// b: an earlier timestamp; at the same time a table update before a stream
// record, then the earlier input.
func (s *timeSync) before(a int, r *kgo.Record, b int) bool {
	ta, tb := r.Timestamp.UnixMilli(), s.queues[b].recs[0].Timestamp.UnixMilli()
	if ta != tb {
		return ta < tb
	}
	if qa, qb := s.queues[a], s.queues[b]; qa.table != qb.table {
		return qa.table
	}
	return a < b
}

// next removes and returns the next run of records to process, all of one
// queue, or nil when there is none: every queue is empty, or an empty
// lagging queue holds the others back (for less than max_idle). timedOut
// is the queue whose wait has just passed max_idle, if any (reported once
// per wait).
//
// An empty queue read to its end holds a record back too while that end is
// not sure for it (no listing of it begun after the client received the
// record: syncQueue.sure): the node then lists the partition's end
// (releaseAllSync), and the wait counts towards max_idle as a lag does.
// The end a fetch reports is not sure: one fetch reads its partitions one
// after the other, and a poll takes at most pollSize records of a fetch,
// leaving the rest — of any partition, written before the records just
// taken — in the client for the next poll. A listing begun after the
// client received a record counts both.
func (s *timeSync) next(now time.Time) (q *syncQueue, run []*kgo.Record, timedOut *syncQueue) {
	first := -1
	for i, q := range s.queues {
		if len(q.recs) > 0 && (first < 0 || s.before(i, q.recs[0], first)) {
			first = i
		}
	}
	if first < 0 {
		for _, q := range s.queues {
			q.waitSince, q.timedOut = time.Time{}, false
		}
		return nil, nil, nil
	}
	for _, q := range s.queues {
		if len(q.recs) > 0 {
			q.waitSince, q.timedOut = time.Time{}, false
			continue
		}
		if !q.lagging() {
			if q.sure > s.queues[first].stamps[0] {
				q.waitSince, q.timedOut = time.Time{}, false
				continue
			}
		}
		if q.waitSince.IsZero() {
			q.waitSince = now
		}
		if now.Sub(q.waitSince) < s.maxIdle {
			return nil, nil, nil
		}
		if !q.timedOut {
			q.timedOut = true
			timedOut = q
		}
	}
	q = s.queues[first]
	k := 1
	for ; k < len(q.recs); k++ {
		ahead := false
		for j, o := range s.queues {
			if j == first {
				continue
			}
			if len(o.recs) > 0 && !s.before(first, q.recs[k], j) ||
				len(o.recs) == 0 && !o.timedOut && !o.lagging() && o.sure <= q.stamps[k] {
				ahead = true
				break
			}
		}
		if ahead {
			break
		}
	}
	return q, q.take(k), timedOut
}

// rewind empties the queues and returns, per topic, the offset of its first
// queued record (with its leader epoch): where the partition's fetching must
// start again for nothing queued to be lost.
func (s *timeSync) rewind() map[string]kgo.EpochOffset {
	var at map[string]kgo.EpochOffset
	for _, q := range s.queues {
		if len(q.recs) == 0 {
			continue
		}
		if at == nil {
			at = map[string]kgo.EpochOffset{}
		}
		r := q.recs[0]
		at[q.topic] = kgo.EpochOffset{Epoch: r.LeaderEpoch, Offset: r.Offset}
		q.fetched = r.Offset
		q.take(len(q.recs))
	}
	return at
}

// syncMaxBytes bounds the record bytes of a time-sync queue: past it (or
// past batch_size × queue_size records) its partition's fetching pauses
// until the queue has room.
const syncMaxBytes = 8 << 20

func (n *Node) syncFull(q *syncQueue) bool {
	return len(q.recs) >= n.p.BatchSize*n.p.Limits.QueueSize || q.bytes >= syncMaxBytes
}

// addSync queues the records of a fetched partition of a synchronised task
// (data records only: recs) and reports whether it did (false: the topic is
// not one of the task's queues). n.mu must be held.
func (n *Node) addSync(t *task, fp kgo.FetchTopicPartition, recs []*kgo.Record) bool {
	q := t.sync.queue(fp.Topic)
	if q == nil {
		return false
	}
	fetched := int64(-1)
	if len(fp.Records) > 0 {
		fetched = fp.Records[len(fp.Records)-1].Offset + 1
	}
	q.add(recs, fetched, fp.LastStableOffset, !t.fetchPaused(fp.Topic))
	return true
}

// releaseAllSync hands every synchronised task the records that are next
// in time (releaseSync); the poll loop calls it after each poll. When an
// empty queue whose end is stale (its partition was paused) or not sure for
// the records waiting (syncQueue.sure) holds others back, it lists that
// partition's end and tries again. One listing serves all the records the
// client had received when it began — a whole fetch, though a poll takes
// part of it —, so a backlog is listed about once per fetch.
func (n *Node) releaseAllSync(ctx context.Context) {
	var need []syncListing
	n.mu.Lock()
	now := time.Now()
	for _, t := range n.mu.groups {
		if t.sync == nil {
			continue
		}
		n.releaseSync(ctx, t, now)
		// The newest stamp of the records that wait.
		waiting, newest := false, uint64(0)
		for _, q := range t.sync.queues {
			if k := len(q.stamps); k > 0 {
				waiting, newest = true, max(newest, q.stamps[k-1])
			}
		}
		for _, q := range t.sync.queues {
			if waiting && len(q.recs) == 0 && (q.stale || q.sure <= newest) && !t.fetchPaused(q.topic) {
				need = append(need, syncListing{t, q, q.pauses})
			}
		}
	}
	n.mu.Unlock()
	if len(need) == 0 {
		return
	}
	var topics []string
	for _, l := range need {
		if !slices.Contains(topics, l.q.topic) {
			topics = append(topics, l.q.topic)
		}
	}
	// Numbered before it begins: a record stamped below the number was
	// received by the client before the listing was sent.
	number := n.listings.Add(1)
	lctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	ends, err := kadm.NewClient(n.cl).ListCommittedOffsets(lctx, topics...)
	cancel()
	if err != nil {
		return // the next poll tries again; max_idle bounds the wait
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, l := range need {
		o, ok := ends.Lookup(l.q.topic, l.t.part)
		// Begun after the partition's last pause, and after the client
		// received the records stamped below number: any record written
		// before those is counted in this end.
		if !ok || o.Err != nil || n.mu.groups[l.t.key] != l.t || l.q.pauses != l.pauses {
			continue
		}
		l.q.end, l.q.stale, l.q.sure = max(l.q.end, o.Offset), false, max(l.q.sure, number)
		n.releaseSync(ctx, l.t, time.Now())
	}
}

// syncListing is a listing of the end of queue q of task t; pauses is the
// queue's count of pauses when it was asked for.
type syncListing struct {
	t      *task
	q      *syncQueue
	pauses int
}

// fetchStamp stamps each record the client buffers after a fetch with the
// number of end listings begun so far (Node.listings), in its Context, as
// franz-go allows a consumer hook to: a listing numbered above a record's
// stamp began after the client received the record, so that the end it
// lists counts every record written before it (syncQueue.sure). The node's
// client has the hook when a stage is time-synchronised.
type fetchStamp struct {
	listings *atomic.Uint64
	cur      atomic.Pointer[stampContext] // the context of the current number
}

type stampContext struct {
	number uint64
	ctx    context.Context
}

type stampKey struct{}

// OnFetchRecordBuffered implements kgo.HookFetchRecordBuffered.
func (h *fetchStamp) OnFetchRecordBuffered(r *kgo.Record) {
	v := h.listings.Load()
	c := h.cur.Load()
	if c == nil || c.number != v {
		c = &stampContext{v, context.WithValue(context.Background(), stampKey{}, v)}
		h.cur.Store(c)
	}
	r.Context = c.ctx
}

// recordStamp is r's fetch stamp (fetchStamp); 0 for a record without one.
func recordStamp(r *kgo.Record) uint64 {
	if r.Context == nil {
		return 0
	}
	v, _ := r.Context.Value(stampKey{}).(uint64)
	return v
}

// fetchPaused reports whether the fetching of t's partition of topic is
// paused (see fetchGate). The node's mu must be held.
func (t *task) fetchPaused(topic string) bool {
	if slices.ContainsFunc(t.held, func(b *batch) bool { return b.records[0].Topic == topic }) {
		return true
	}
	q := t.syncQueue(topic)
	return q != nil && q.paused
}

// releaseSync hands task t the records of its queues that are next in time,
// and pauses or resumes the fetching of its partitions as their queues fill
// and empty. n.mu must be held.
func (n *Node) releaseSync(ctx context.Context, t *task, now time.Time) {
	s := t.sync
	for _, q := range s.queues {
		q.end = max(q.end, n.progress.get(q.topic, t.part).end.Load())
	}
	for {
		q, run, late := s.next(now)
		if late != nil {
			n.metrics.syncTimeouts.Add(1)
			if s.maxIdle > 0 {
				n.log.Warn("a lagging input partition held a table join back for max_idle: going on without it", "topic", late.topic,
					"partition", t.part, "max_idle", s.maxIdle, "fetched", late.fetched, "end", late.end)
			}
		}
		if run == nil {
			break
		}
		n.enqueue(ctx, t, q.topic, run)
	}
	for _, q := range s.queues {
		if full := n.syncFull(q); full != q.paused {
			q.paused = full
			n.fetchGate(t, q.topic)
		}
	}
}

// fetchGate pauses or resumes the fetching of task t's partition of topic:
// paused while a batch of it is held (the task's queue is full) or its
// time-sync queue is full, fetched otherwise. n.mu must be held.
func (n *Node) fetchGate(t *task, topic string) {
	tp := map[string][]int32{topic: {t.part}}
	if t.fetchPaused(topic) {
		n.pauseFetch(t, topic)
		return
	}
	n.cl.ResumeFetchPartitions(tp)
}

// pauseFetch pauses the fetching of t's partition of topic. The node's mu
// must be held.
func (n *Node) pauseFetch(t *task, topic string) {
	n.cl.PauseFetchPartitions(map[string][]int32{topic: {t.part}})
	if q := t.syncQueue(topic); q != nil {
		q.pausedAt()
	}
}

// syncQueue is t's time-sync queue of topic, or nil.
func (t *task) syncQueue(topic string) *syncQueue {
	if t.sync == nil {
		return nil
	}
	return t.sync.queue(topic)
}

// rewindSync moves the fetch offset of every partition with queued records
// back to its first queued record and empties the queues. The poll loop
// calls it before a transaction commits: the offsets the transaction
// commits are the fetched ones, and must not pass records no task has
// processed (see the top of this file).
func (n *Node) rewindSync() {
	var at map[string]map[int32]kgo.EpochOffset
	n.mu.Lock()
	for _, t := range n.mu.groups {
		if t.sync == nil {
			continue
		}
		for topic, o := range t.sync.rewind() {
			if at == nil {
				at = map[string]map[int32]kgo.EpochOffset{}
			}
			if at[topic] == nil {
				at[topic] = map[int32]kgo.EpochOffset{}
			}
			// No epoch: a leader epoch makes the client validate the
			// offset with the broker before it fetches, once per
			// transaction.
			at[topic][t.part] = kgo.EpochOffset{Epoch: -1, Offset: o.Offset}
		}
		for _, q := range t.sync.queues {
			if q.paused {
				q.paused = false
				n.fetchGate(t, q.topic)
			}
		}
	}
	n.mu.Unlock()
	if at != nil {
		// Not under n.mu: the client takes its own locks, which its
		// group goroutine may hold while it calls the node back.
		n.cl.SetOffsets(at)
	}
}

// startSync tells the time synchronisation of the tasks rebuilt after an
// aborted transaction where their partitions' fetching starts again: the
// committed offsets, to which the aborted session has rewound.
func (n *Node) startSync(tasks []*task) {
	committed := n.cl.CommittedOffsets()
	for _, t := range tasks {
		if t.sync == nil {
			continue
		}
		for _, q := range t.sync.queues {
			if o, ok := committed[q.topic][t.part]; ok && o.Offset >= 0 {
				q.fetched = o.Offset
			}
			q.stale = true // its end is listed when it holds others back
		}
	}
}

// adjustOffsets runs when the group has fetched the committed offsets of
// newly assigned partitions, before their consumption begins
// (kgo.AdjustFetchOffsetsFn). For each task that joins a co-partitioned
// table, it restores the table's store up to the group's committed offset
// of the table's partition — never further, so that stream records
// processed again after a restart or a rebalance meet the table as of their
// own time — and has the table's consumption continue where the store
// stopped, so that no table record is applied twice or skipped. A table
// partition without a committed offset (a new group, a reset) is read from
// its start, with an empty store, whatever source.start says: a table is
// read whole. It also tells the tasks' time synchronisation where each
// input partition's consumption starts, and where it ends.
func (n *Node) adjustOffsets(ctx context.Context, offsets map[string]map[int32]kgo.Offset) (map[string]map[int32]kgo.Offset, error) {
	if !n.awaitClient(ctx) {
		return offsets, ctx.Err()
	}
	var ins []syncInput
	var topics []string
	n.mu.Lock()
	for topic, ps := range offsets {
		for p, o := range ps {
			t := n.mu.tasks[topic][p]
			if t == nil {
				continue // its task failed to start: the node is stopping
			}
			if q := t.syncQueue(topic); q != nil {
				ins = append(ins, syncInput{t, q, o.EpochOffset().Offset})
				if !slices.Contains(topics, topic) {
					topics = append(topics, topic)
				}
			}
		}
	}
	n.mu.Unlock()
	if len(ins) == 0 {
		return offsets, nil
	}
	if err := n.startInputs(ctx, offsets, topics, ins); err != nil {
		err = fmt.Errorf("starting the partitions of a table join: %w", err)
		if ctx.Err() == nil {
			n.fail(err)
		}
		return nil, err
	}
	return offsets, nil
}

// syncInput is a newly assigned partition of a synchronised task.
type syncInput struct {
	t  *task
	q  *syncQueue
	at int64 // the group's committed offset; kgo's start (-2) or end (-1) when none
}

// startInputs restores the tables of ins and sets where their partitions'
// consumption starts (adjustOffsets).
func (n *Node) startInputs(ctx context.Context, offsets map[string]map[int32]kgo.Offset, topics []string, ins []syncInput) error {
	adm := kadm.NewClient(n.cl)
	starts, err := adm.ListStartOffsets(ctx, topics...)
	if err != nil {
		return err
	}
	ends, err := adm.ListCommittedOffsets(ctx, topics...) // read_committed ends
	if err != nil {
		return err
	}
	for _, in := range ins {
		topic, part := in.q.topic, in.t.part
		start, end := int64(-1), int64(-1)
		if o, ok := starts.Lookup(topic, part); ok && o.Err == nil {
			start = o.Offset
		}
		if o, ok := ends.Lookup(topic, part); ok && o.Err == nil {
			end = o.Offset
		}
		at := in.at
		switch {
		case in.q.table:
			ts := in.t.stores[in.t.stage.Sides[topic]]
			reached, err := n.drv.restoreTo(ctx, ts, part, max(at, 0))
			if err != nil {
				return fmt.Errorf("restore table %s[%d]: %w", topic, part, err)
			}
			if at < 0 {
				offsets[topic][part] = kgo.NewOffset().AtStart()
				at = start
			} else if reached != at {
				offsets[topic][part] = kgo.NewOffset().At(reached)
				at = reached
			}
		case at == -2:
			at = start
		case at < 0:
			at = end
		}
		// The end listed here says nothing of records written before the
		// partition's fetching begins (the client may start each
		// partition's fetching at its own moment): stale until a fetch of
		// its records, or a listing begun after records wait for it.
		n.mu.Lock()
		in.q.fetched, in.q.end, in.q.stale = at, max(in.q.end, end), true
		n.mu.Unlock()
	}
	return nil
}
