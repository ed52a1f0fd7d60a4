package host

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/eddy-streams/eddy/state"
)

// Standby copies.
//
// With standby_replicas: N, the group's assignment (balancer.go) gives each
// node, besides the partition numbers it processes, up to N numbers it
// keeps a standby copy of: every changelog-backed store of that number
// (keyed state, windows, join buffers, timers) in the node's own Badger
// database, fed continuously from the changelogs and checkpointed with every
// write, as a restore is. When the active owner of a number fails, the
// balancer gives the number to the member whose copy is furthest along,
// and that node's restore reads only the tail its copy lacks.
//
// A copy is a follower: it first catches up through restoreFromLog (which
// checks the local checkpoint against the changelog and rebuilds a copy
// that does not match, reporting it), then follows the changelogs with one
// client of its own. A follower never runs beside a task of its number on
// the same node: the assignment stops it before the number's task is made
// (setStandbys is called when the assignment arrives, before assigned),
// and a task's making stops it again in case (stopStandby).
//
// Tables read from a topic of their own (a co-partitioned table) are not
// copied: their store restores only up to the group's committed offset of
// the table's topic, which a copy following the topic's end would pass.

// followWait is how long a follower's fetch waits for new changelog
// records; followList how often it lists the changelogs' ends for its lag.
const (
	followWait = 500 * time.Millisecond
	followList = time.Second
)

// standbys are a node's standby copies.
type standbys struct {
	wake chan struct{} // runStandbys's signal (buffer 1)
	mu   sync.Mutex
	want []int32 // the numbers the last assignment gave
	// warmups are the numbers of want that the assignment marked as
	// warm-ups: copies that take the number over once caught up.
	warmups []int32
	running map[int32]*follower
	stopped bool // stopFollowers ran: no follower starts again
	// quit and done stop and wait for runStandbys (startStandbys).
	quit context.CancelFunc
	done chan struct{}
}

// follower keeps the standby copy of one partition number.
type follower struct {
	part   int32
	cancel context.CancelFunc
	done   chan struct{}
	stores []*followedStore
	errors atomic.Int64 // failed rounds since it started
	// warmup is set while the assignment marks the copy as a warm-up;
	// probed once the copy, caught up, has asked for a rebalance.
	warmup, probed atomic.Bool
}

// setWarmup marks the copy as a warm-up or not; a copy that becomes one
// again may ask for a rebalance again.
func (f *follower) setWarmup(on bool) {
	if f.warmup.Swap(on) != on && on {
		f.probed.Store(false)
	}
}

// lag is the records the copy has not applied, over its stores.
func (f *follower) lag() int64 {
	var lag int64
	for _, fs := range f.stores {
		lag += max(fs.end.Load()-fs.pos.Load(), 0)
	}
	return lag
}

// probe asks the group for a rebalance once a warm-up copy is within the
// balancer's warm-up bound of its changelogs' ends, so that the number
// moves here (KIP-441's probing rebalance): the member data the next join
// sends carries the copy's new position.
func (n *Node) probe(f *follower) {
	if !f.warmup.Load() || f.probed.Load() || f.lag() > n.p.RecoveryLag() || n.cl == nil {
		return
	}
	f.probed.Store(true)
	n.log.Info("warm-up copy caught up: asking the group to rebalance", "partition", f.part, "lag", f.lag())
	n.cl.ForceRebalance()
}

// followedStore is one store of a follower.
type followedStore struct {
	ts  *taskStore
	pos atomic.Int64 // the next changelog offset the copy applies
	end atomic.Int64 // the changelog's end as last seen (-1: not yet)
}

// standbyCopy reports whether the node keeps a standby copy of partition
// part of the step store store that has caught up with its changelog once
// (a copy still catching up for the first time is partial), and the copy's
// lag: changelog records behind the end as last listed, or -1 when the
// copy has not listed it yet. A stale state query reads such a copy.
func (n *Node) standbyCopy(store string, part int32) (lag int64, ok bool) {
	topic := ChangelogTopic(n.p.Name, store)
	sb := &n.standbys
	sb.mu.Lock()
	defer sb.mu.Unlock()
	f := sb.running[part]
	if f == nil {
		return 0, false
	}
	for _, fs := range f.stores {
		if fs.ts.topic != topic {
			continue
		}
		pos, end := fs.pos.Load(), fs.end.Load()
		switch {
		case pos < 0:
			return 0, false
		case end < 0:
			return -1, true
		}
		return max(end-pos, 0), true
	}
	return 0, false
}

// StandbyStatus is a standby copy of one store.
type StandbyStatus struct {
	Partition int32  `json:"partition"`
	Changelog string `json:"changelog"`
	// Position is the next changelog offset the copy applies; End the
	// changelog's end when last listed; Lag the records between them.
	Position int64 `json:"position"`
	End      int64 `json:"end"`
	Lag      int64 `json:"lag"`
	// Warmup is set for a copy the assignment made to move the number
	// here once it has caught up.
	Warmup bool `json:"warmup,omitempty"`
}

// copiedStores are the stores of partition number part that standby
// copies keep: every changelog-backed store and every timer store.
func (n *Node) copiedStores(part int32) []*taskStore {
	var ts []*taskStore
	for _, s := range n.p.Steps {
		if s.Changelogged() {
			ts = append(ts, &taskStore{st: n.db.Store(n.p.Name, s.Name, part), topic: ChangelogTopic(n.p.Name, s.Name), standby: true})
		}
		if s.Timed() {
			ts = append(ts, &taskStore{st: n.db.Store(n.p.Name, timerStore(s.Name), part), topic: TimerTopic(n.p.Name, s.Name), standby: true})
		}
	}
	return ts
}

// assignStandbys is the balancer's onAssigned: the standby copies (and
// warm-ups among them) the group's new assignment gives this node. It runs
// on the client's group goroutine, before the assignment's partitions are
// revoked or assigned, and does not block: the node's standby goroutine
// (runStandbys) starts and stops the followers.
func (n *Node) assignStandbys(a standbyAssignment, err error) {
	if err != nil {
		n.log.Warn("standby copies: the assignment's standby data does not decode; keeping none", "error", err)
	}
	sb := &n.standbys
	sb.mu.Lock()
	sb.want, sb.warmups = slices.Clone(a.Standbys), slices.Clone(a.Warmups)
	sb.mu.Unlock()
	n.wakeStandbys()
}

// wakeStandbys has the standby goroutine compare the followers with the
// assignment (after an assignment, a revoke, a task made).
func (n *Node) wakeStandbys() {
	select {
	case n.standbys.wake <- struct{}{}:
	default:
	}
}

// runStandbys keeps the node's followers those the assignment wants until
// ctx ends, then stops them all.
func (n *Node) runStandbys(ctx context.Context) {
	defer n.stopFollowers()
	for {
		select {
		case <-ctx.Done():
			return
		case <-n.standbys.wake:
			n.reconcileStandbys(ctx)
		}
	}
}

// reconcileStandbys starts the followers of the wanted numbers the node
// does not process and stops the others (waiting for them, not under
// sb.mu). Numbers the node processes, or whose task is being made, are
// never copied: their task owns their stores.
func (n *Node) reconcileStandbys(ctx context.Context) {
	n.mu.Lock()
	active := map[int32]bool{}
	for k := range n.mu.groups {
		active[k.part] = true
	}
	for k := range n.mu.restoring {
		active[k.part] = true
	}
	n.mu.Unlock()
	sb := &n.standbys
	sb.mu.Lock()
	if ctx.Err() != nil || sb.running == nil && sb.stopped {
		sb.mu.Unlock()
		return
	}
	if sb.running == nil {
		sb.running = map[int32]*follower{}
	}
	var stop []*follower
	for p, f := range sb.running {
		if !slices.Contains(sb.want, p) || active[p] {
			stop = append(stop, f)
			delete(sb.running, p)
		}
	}
	started := 0
	for _, p := range sb.want {
		if f := sb.running[p]; f != nil {
			f.setWarmup(slices.Contains(sb.warmups, p))
			continue
		}
		if active[p] {
			continue
		}
		fctx, cancel := context.WithCancel(ctx)
		f := &follower{part: p, cancel: cancel, done: make(chan struct{}), stores: n.followed(p)}
		f.setWarmup(slices.Contains(sb.warmups, p))
		sb.running[p] = f
		started++
		go n.follow(fctx, f)
	}
	want, warm := sb.want, sb.warmups
	sb.mu.Unlock()
	for _, f := range stop {
		f.cancel()
		<-f.done
	}
	if started+len(stop) > 0 {
		n.log.Info("standby copies", "partitions", want, "warmups", warm, "started", started, "stopped", len(stop))
	}
}

func (n *Node) followed(part int32) []*followedStore {
	var fs []*followedStore
	for _, ts := range n.copiedStores(part) {
		f := &followedStore{ts: ts}
		f.pos.Store(-1)
		f.end.Store(-1)
		fs = append(fs, f)
	}
	return fs
}

// stopStandby stops the follower of number part, if one runs, and waits
// for it: the number's task is about to use its stores.
func (n *Node) stopStandby(part int32) {
	sb := &n.standbys
	sb.mu.Lock()
	f := sb.running[part]
	delete(sb.running, part)
	sb.mu.Unlock()
	if f != nil {
		f.cancel()
		<-f.done
	}
}

// startStandbys starts the node's standby goroutine (runStandbys), which
// stopStandbys stops.
func (n *Node) startStandbys(ctx context.Context) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	n.standbys.quit, n.standbys.done = cancel, done
	go func() {
		defer close(done)
		n.runStandbys(ctx)
	}()
}

// stopStandbys stops the standby goroutine and every follower (the node
// stops).
func (n *Node) stopStandbys() {
	if n.standbys.quit != nil {
		n.standbys.quit()
		<-n.standbys.done
	}
	n.stopFollowers()
}

// stopFollowers stops every follower; none starts again.
func (n *Node) stopFollowers() {
	sb := &n.standbys
	sb.mu.Lock()
	running := sb.running
	sb.running, sb.stopped = nil, true
	sb.mu.Unlock()
	for _, f := range running {
		f.cancel()
		<-f.done
	}
}

// follow keeps f's copy up to date until ctx ends, starting over (after a
// second) when a round fails: the broker went away, a changelog was
// replaced. Each failure is logged and counted.
func (n *Node) follow(ctx context.Context, f *follower) {
	defer close(f.done)
	for {
		err := n.followRound(ctx, f)
		if ctx.Err() != nil {
			return
		}
		f.errors.Add(1)
		n.metrics.standbyFailures.Add(1)
		n.log.Warn("standby copy: following its changelogs failed; starting over", "partition", f.part, "error", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
	}
}

// followRound catches f's stores up (restoreFromLog: a copy that does not
// match its changelog is rebuilt and reported) and then follows their
// changelogs until ctx ends or an error.
func (n *Node) followRound(ctx context.Context, f *follower) error {
	offsets := map[string]map[int32]kgo.Offset{}
	byTopic := map[string]*followedStore{}
	var topics []string
	for _, fs := range f.stores {
		next, err := n.restoreFromLog(ctx, fs.ts, f.part, -1)
		if err != nil {
			return fmt.Errorf("catching up %s[%d]: %w", fs.ts.topic, f.part, err)
		}
		fs.pos.Store(next)
		fs.end.Store(next) // caught up to the end as it was
		offsets[fs.ts.topic] = map[int32]kgo.Offset{f.part: kgo.NewOffset().At(next)}
		byTopic[fs.ts.topic] = fs
		topics = append(topics, fs.ts.topic)
	}
	if len(topics) == 0 {
		<-ctx.Done()
		return nil
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(n.cfg.Brokers...), kgo.ConsumePartitions(offsets),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.FetchMaxWait(followWait), kgo.KeepControlRecords())
	if err != nil {
		return err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	var listed time.Time
	for {
		// A poll waits for records at most followWait, so that the
		// copy's lag is listed and a caught-up warm-up probes while its
		// changelogs are quiet.
		pctx, cancel := context.WithTimeout(ctx, followWait)
		fetches := cl.PollFetches(pctx)
		cancel()
		if ctx.Err() != nil {
			return nil
		}
		var ferr error
		fetches.EachError(func(topic string, p int32, err error) {
			if !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
				ferr = fmt.Errorf("%s[%d]: %w", topic, p, err)
			}
		})
		if ferr != nil {
			return ferr
		}
		var aerr error
		fetches.EachPartition(func(fp kgo.FetchTopicPartition) {
			fs := byTopic[fp.Topic]
			if fs == nil || len(fp.Records) == 0 || aerr != nil {
				return
			}
			var changes []state.Change
			next := fs.pos.Load()
			for _, r := range fp.Records {
				next = r.Offset + 1
				if r.Attrs.IsControl() || !fs.ts.st.Restorable(r.Key, r.Value) {
					continue
				}
				changes = append(changes, state.Change{Key: r.Key, Value: r.Value, Deleted: r.Value == nil})
			}
			if err := fs.ts.st.Restore(changes, next); err != nil {
				aerr = fmt.Errorf("%s[%d]: %w", fp.Topic, fp.Partition, err)
				return
			}
			fs.pos.Store(next)
			fs.end.Store(max(fs.end.Load(), fp.LastStableOffset, next))
			n.metrics.standbyRecords.Add(int64(len(changes)))
		})
		if aerr != nil {
			return aerr
		}
		n.probe(f)
		if time.Since(listed) >= followList {
			listed = time.Now()
			// The lag as the broker sees it (the stable ends: what a
			// read_committed copy can reach).
			if ends, err := adm.ListCommittedOffsets(ctx, topics...); err == nil {
				ends.Each(func(o kadm.ListedOffset) {
					if fs := byTopic[o.Topic]; fs != nil && o.Err == nil && o.Partition == f.part {
						fs.end.Store(o.Offset)
					}
				})
			}
		}
	}
}

// standbyStatus lists the node's standby copies, store by store.
func (n *Node) standbyStatus() []StandbyStatus {
	sb := &n.standbys
	sb.mu.Lock()
	var out []StandbyStatus
	for p, f := range sb.running {
		warm := f.warmup.Load()
		for _, fs := range f.stores {
			pos, end := fs.pos.Load(), fs.end.Load()
			out = append(out, StandbyStatus{Partition: p, Changelog: fs.ts.topic, Position: pos, End: end,
				Lag: max(end-pos, 0), Warmup: warm})
		}
	}
	sb.mu.Unlock()
	slices.SortFunc(out, func(a, b StandbyStatus) int {
		if a.Partition != b.Partition {
			return int(a.Partition - b.Partition)
		}
		if a.Changelog < b.Changelog {
			return -1
		}
		if a.Changelog > b.Changelog {
			return 1
		}
		return 0
	})
	return out
}

// copyPositions returns, for each partition number of which this node
// holds stores (active or standby), the sum of their checkpoints: how far
// its copy is along its changelogs. Positions of one number are comparable
// between nodes (offsets of the same changelog partitions); the balancer
// gives a number whose owner left to the node furthest along.
func (n *Node) copyPositions() map[int32]int64 {
	if n.db == nil || n.parts <= 0 {
		return nil
	}
	out := map[int32]int64{}
	for p := range n.parts {
		sum, any := int64(0), false
		for _, ts := range n.copiedStores(p) {
			cp, err := ts.st.Checkpoint()
			if err != nil || cp < 0 {
				continue
			}
			sum += cp
			any = true
		}
		if any {
			out[p] = sum
		}
	}
	return out
}

// balancer is the node's group balancer: by partition number, with
// standby copies when the pipeline asks for them (balancer.go). A node
// without state reports no copies and takes no standbys.
func (n *Node) balancer() copartitioned {
	b := copartitioned{adminURL: n.adminURL, standbys: n.p.StandbyReplicas, warmupLag: n.p.RecoveryLag(), maxWarmups: n.p.WarmupReplicas()}
	if n.db != nil {
		b.copies = n.copyPositions
		b.onAssigned = n.assignStandbys
	}
	if n.p.Delivery == ExactlyOnce {
		b.synced = n.wakeFencer
	}
	return b
}
