package host

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/join"
	"github.com/eddy-streams/eddy/runtime"
	"github.com/eddy-streams/eddy/windowing"
)

// batch is a run of consecutive records of one partition.
type batch struct {
	records []*kgo.Record
	last    *kgo.Record // the last fetched record: its offset is committed when the batch is done
	// pending counts produces not yet acknowledged (plus one while the task
	// is still processing); the batch is done at zero.
	pending int
	done    chan struct{} // closed when processed (before acks)
}

// task processes one assigned partition. It owns one instance of every
// step's function and a goroutine that takes batches from its queue in
// order. The node's poll loop is the only sender on in and closes it to stop
// the task (see stop).
type task struct {
	n       *Node
	key     taskKey
	part    int32
	stage   Stage               // the steps this task runs: those of its topic's stage
	insts   []*runtime.Instance // per step: its function's instance (nil outside the stage, or without a function)
	fns     []*liveFn           // per step: the version insts run
	gen     int64               // the node's swap generation insts follow
	headers []kgo.RecordHeader  // eddy.function.<step> of the stage's steps, added to every output
	times   []*runtime.Instance // per step: its time_function's instance, else nil
	outs    []runtime.Output    // one per step: a step's output stays valid while the next runs
	results []runtime.Result    // scratch for key and timestamp extraction
	stores  []*taskStore        // per step: the keyed store of a stateful or aggregate step, else nil
	windows []*taskWindows      // per step: an aggregate step's windowing, else nil
	joins   []*taskJoin         // per step: a join step's join, else nil

	// prepared are instances of staged versions, created ahead of a swap
	// by the registry's goroutine (swap.go); guarded by prepMu.
	prepMu   sync.Mutex
	prepared map[int]preparedInst

	// The shadow of one of the stage's steps, if any (shadow.go).
	shadowAt      int // its step, or -1
	shadowFn      *liveFn
	shadowInst    *runtime.Instance
	shadowOut     runtime.Output
	shadowHeaders []kgo.RecordHeader

	// warnedLogAppend is set once a record without a log-append timestamp
	// has been reported (time: log_append).
	warnedLogAppend bool

	// timeStep is the aggregate step whose event time this task gives its
	// records (as their timestamp) before they reach it or the repartition
	// topic in front of it; -1 when none.
	timeStep int
	extract  windowing.Extractor // timeStep's extractor, when it has no time_function
	// progress is, per input topic, the event time sent to the repartition
	// topic (feedsWindows).
	progress map[string]progressSent
	// inputs are the windows' inputs of a stage that starts with an
	// aggregate step after a repartition: the upstream inputs; from and
	// marks are the batch's (see readRepartitioned).
	inputs     []int32
	byUpstream bool
	from       []int32
	batchSrc   []int32 // src of the records the aggregate step is processing
	marks      []progress
	in         chan *batch
	quit       chan struct{} // closed to stop at once (revocation, shutdown)
	done       chan struct{} // closed when the goroutine has returned
	stopOnce   sync.Once
	counters   taskCounters

	// held are batches that did not fit in the queue, in order; their
	// topic partitions are paused until they are queued (overload: block).
	// Guarded by the node's mu.
	held []*batch

	mu struct {
		sync.Mutex
		inflight []*batch // batches processed or in progress, awaiting acks (at_least_once)
		// processed are the last records of settled batches whose offsets
		// wait for the next checkpoint (stateful at_least_once).
		processed []*kgo.Record
		failed    error
	}
}

func (n *Node) newTask(ctx context.Context, key taskKey) (*task, error) {
	part := key.part
	t := &task{
		n: n, key: key, part: part,
		outs: make([]runtime.Output, len(n.p.Steps)),
		in:   make(chan *batch, n.p.Limits.QueueSize),
		quit: make(chan struct{}),
		done: make(chan struct{}),
	}
	t.counters.watermark.Store(math.MinInt64)
	t.stage = n.stages[key.stage]
	topic := strings.Join(t.stage.Inputs, ",") // for errors
	t.shadowAt = -1
	if err := t.initTime(); err != nil {
		return nil, fmt.Errorf("task %s[%d]: %w", topic, part, err)
	}
	steps := len(n.p.Steps)
	t.insts = make([]*runtime.Instance, steps)
	t.fns = make([]*liveFn, steps)
	t.times = make([]*runtime.Instance, steps)
	t.stores = make([]*taskStore, steps)
	t.windows = make([]*taskWindows, steps)
	t.joins = make([]*taskJoin, steps)
	t.gen = n.gen.Load() // before reading the current versions: a swap after this is seen at the first batch
	for i := t.stage.From; i < t.stage.To; i++ {
		if err := t.initStep(ctx, i); err != nil {
			t.closeInstances(ctx)
			return nil, fmt.Errorf("task %s[%d]: step %s: %w", topic, part, n.p.Steps[i].Name, err)
		}
	}
	if s := t.timeStep; s >= 0 && n.timeFns[s] != nil {
		inst, err := n.timeFns[s].NewInstance(ctx)
		if err != nil {
			t.closeInstances(ctx)
			return nil, fmt.Errorf("task %s[%d]: step %s: time_function: %w", topic, part, n.p.Steps[s].Name, err)
		}
		t.times[s] = inst
	}
	t.setHeaders()
	t.refreshShadow(ctx)
	t.noteWatermark()
	if n.workCtx != nil {
		ctx = n.workCtx // batches are finished at a clean stop (shutdown)
	}
	go t.run(ctx)
	return t, nil
}

// initStep creates step i's instances and restores its store.
func (t *task) initStep(ctx context.Context, i int) error {
	n := t.n
	step := &n.p.Steps[i]
	if lf := n.current(i); lf != nil {
		inst, err := n.newInstance(ctx, lf)
		if err != nil {
			return err
		}
		t.insts[i], t.fns[i] = inst, lf
	}
	if step.Kind == StepJoin {
		return t.initJoin(ctx, i)
	}
	if !step.stateful() {
		return nil
	}
	ts := &taskStore{st: n.db.Store(n.p.Name, step.Name, t.part), topic: ChangelogTopic(n.p.Name, step.Name)}
	ts.st.Abort() // nothing pending from an earlier owner of this partition
	if err := n.restore(ctx, ts, t.part); err != nil {
		return fmt.Errorf("restore %s: %w", ts.topic, err)
	}
	if step.State {
		t.insts[i].SetState(ts.st)
	}
	t.stores[i] = ts
	if step.Kind == StepAggregate {
		tw, err := t.newTaskWindows(ctx, i, ts)
		if err != nil {
			return fmt.Errorf("windows: %w", err)
		}
		t.windows[i] = tw
	}
	return nil
}

func (t *task) closeInstances(ctx context.Context) {
	for s, inst := range t.insts {
		if inst != nil {
			t.n.release(ctx, t.fns[s], inst)
		}
	}
	for _, inst := range t.times {
		if inst != nil {
			inst.Close(context.WithoutCancel(ctx))
		}
	}
	if t.shadowInst != nil {
		t.n.release(ctx, t.shadowFn, t.shadowInst)
	}
	t.releasePrepared(ctx)
}

// run processes batches until in is closed or quit.
func (t *task) run(ctx context.Context) {
	defer close(t.done)
	defer t.closeInstances(ctx)
	for {
		select {
		case <-t.quit:
			return
		case b, ok := <-t.in:
			if !ok {
				return
			}
			select {
			case t.n.room <- struct{}{}:
			default:
			}
			if err := t.process(ctx, b); err != nil {
				t.mu.Lock()
				t.mu.failed = err
				t.mu.Unlock()
				t.n.fail(err)
				close(b.done)
				return
			}
			t.observe(b)
			close(b.done)
		}
	}
}

// stop ends the task: with drain, after the queued batches; without, at once
// (queued batches are dropped and will be fetched again by the next owner,
// since their offsets were not committed). It waits for the goroutine.
// Stopping a stopped task only waits.
func (t *task) stop(drain bool) {
	t.stopOnce.Do(func() {
		if drain {
			close(t.in)
		} else {
			close(t.quit)
		}
	})
	<-t.done
}

// process runs one batch through every step and hands the results to the
// producer: outputs to the sink, failures to the dead-letter topic.
func (t *task) process(ctx context.Context, b *batch) error {
	n := t.n
	t.refresh(ctx)
	// A join step's other input enters at that step: a table's records
	// update it, the other stream's records join as its right side.
	first, side := t.stage.From, join.Left
	if s, ok := t.stage.Sides[b.records[0].Topic]; ok {
		if n.p.Steps[s].Table != "" {
			if err := t.updateTable(b, s); err != nil {
				return err
			}
			t.settle(b)
			return nil
		}
		first, side = s, join.Right
	}
	var in []abi.Record
	var src []int32 // src[i] is the index in b.records of the record current record i descends from
	if t.stage.From > 0 && side == join.Left {
		var err error
		if in, src, t.from, t.marks, err = t.readRepartitioned(b); err != nil {
			return err
		}
	} else {
		in = make([]abi.Record, len(b.records))
		src = make([]int32, len(in))
		for i, r := range b.records {
			in[i] = toABI(r)
			src[i] = int32(i)
		}
	}
	cur := in
	var shadowIn []abi.Record // the input of the shadowed step, if any
	var shadowSrc []int32
	var meter stepMeter // metrics.go
	for s := first; s < t.stage.To; s++ {
		meter.enter(t, s, len(cur))
		switch n.p.Steps[s].Kind {
		case StepJoin:
			var err error
			if cur, src, err = t.joinStep(ctx, b, s, side, cur, src); err != nil {
				return fmt.Errorf("step %s: %w", n.p.Steps[s].Name, err)
			}
			side = join.Left
			continue
		case StepAggregate:
			var err error
			if s == t.timeStep {
				if cur, src, err = t.eventTimes(ctx, b, s, cur, src); err != nil {
					return fmt.Errorf("step %s: %w", n.p.Steps[s].Name, err)
				}
			}
			if cur, err = t.aggregate(ctx, b, s, cur, src); err != nil {
				return fmt.Errorf("step %s: %w", n.p.Steps[s].Name, err)
			}
			continue // an aggregate step is the last
		case StepKeyBy:
			var err error
			if cur, src, err = t.keyBy(ctx, b, s, cur, src); err != nil {
				return fmt.Errorf("step %s: %w", n.p.Steps[s].Name, err)
			}
			continue
		}
		if t.shadowAt == s {
			shadowIn, shadowSrc = cur, src
		}
		var err error
		if cur, src, err = t.processStep(ctx, b, s, t.insts[s], t.fns[s], &t.outs[s], cur, src, true); err != nil {
			return err
		}
	}
	meter.leave(t, len(cur))
	feeds := n.feedsWindows(t.stage)
	if feeds {
		// The next stage's windows need the records' event time.
		var err error
		if cur, src, err = t.eventTimes(ctx, b, t.stage.To, cur, src); err != nil {
			return fmt.Errorf("step %s: %w", n.p.Steps[t.stage.To].Name, err)
		}
	}
	if t.stage.From == 0 {
		n.stats.in.Add(int64(len(in)))
	}
	if t.stage.Last {
		n.stats.out.Add(int64(len(cur)))
	}
	t.counters.in.Add(int64(len(in)))
	t.counters.out.Add(int64(len(cur)))
	var from []byte
	maxTime := int64(math.MinInt64)
	if feeds {
		from = []byte(strconv.Itoa(int(t.upstreamID(b.records[0].Topic))))
	}
	outs := toKafkaBatch(t.stage.Output, cur, t.headers)
	for i := range outs {
		r := &outs[i]
		if t.shadowAt >= 0 {
			r.Headers = appendSource(r.Headers, b.records[src[i]])
		}
		if feeds {
			r.Headers = append(r.Headers, kgo.RecordHeader{Key: hdrFrom, Value: from})
			maxTime = max(maxTime, cur[i].Timestamp)
		}
		t.produce(ctx, b, r)
	}
	if feeds && maxTime > math.MinInt64 {
		t.sendProgress(ctx, b, maxTime)
	}
	if t.shadowAt >= 0 {
		if err := t.runShadow(ctx, b, shadowIn, shadowSrc); err != nil {
			return err
		}
	}
	t.settle(b) // the processing share of pending
	return nil
}

// processStep runs a map, filter or flat_map step over cur and returns its
// output records with the input record each descends from. Failed records
// go to the dead-letter topic when deadLetters is set (the live chain; a
// shadow's failures are only counted).
func (t *task) processStep(ctx context.Context, b *batch, s int, inst *runtime.Instance, lf *liveFn, out *runtime.Output,
	cur []abi.Record, src []int32, deadLetters bool) ([]abi.Record, []int32, error) {
	n := t.n
	fail := func(orig *kgo.Record, e *runtime.Error) {
		if deadLetters {
			t.deadLetter(ctx, b, orig, s, e)
		} else {
			n.stats.shadowFailed.Add(1)
		}
	}
	out.Reset()
	if err := inst.Process(ctx, cur, out); err != nil {
		return nil, nil, fmt.Errorf("step %s: %w", n.p.Steps[s].Name, err)
	}
	failed := map[int32]bool{}
	for _, e := range out.Failed {
		failed[int32(e.Index)] = true
		fail(b.records[src[e.Index]], e)
	}
	kind := n.p.Steps[s].Kind
	if kind != StepFlatMap {
		// Enforce the step's cardinality: map exactly one, filter at most one.
		counts := make([]int, len(cur))
		for _, f := range out.From {
			counts[f]++
		}
		for i, c := range counts {
			if failed[int32(i)] || (kind == StepMap && c == 1) || (kind == StepFilter && c <= 1) {
				continue
			}
			failed[int32(i)] = true
			fail(b.records[src[i]], &runtime.Error{Function: lf.fn.Name(), Kind: abi.KindProcess,
				Cause: runtime.CauseGuest, Code: abi.CodeRejected, Index: i, Group: -1,
				Reason: fmt.Sprintf("%s step returned %d records for one input", kind, c)})
		}
	}
	next := out.Records[:0:0]
	nsrc := make([]int32, 0, len(out.Records))
	for j := range out.Records {
		f := out.From[j]
		if failed[f] {
			continue
		}
		next = append(next, out.Records[j])
		nsrc = append(nsrc, src[f])
	}
	if deadLetters {
		n.metrics.countDropped(s, kind, len(cur), len(next), out.From, failed)
	}
	return next, nsrc, nil
}

// produce sends r, counting it against b until acknowledged.
func (t *task) produce(ctx context.Context, b *batch, r *kgo.Record) {
	if t.n.sink != nil {
		t.n.sink(r)
		return
	}
	t.mu.Lock()
	b.pending++
	t.mu.Unlock()
	t.n.client().Produce(ctx, r, func(_ *kgo.Record, err error) {
		if err != nil {
			t.n.fail(fmt.Errorf("produce to %s: %w", r.Topic, err))
			return
		}
		t.settle(b)
	})
}

// settle takes one from b.pending; when batches at the head of the
// partition's queue are settled, their offsets are marked for commit, in
// order (at_least_once; the other guarantees commit elsewhere), or kept for
// the next checkpoint (checkpoint.go).
func (t *task) settle(b *batch) {
	t.mu.Lock()
	defer t.mu.Unlock()
	b.pending--
	for len(t.mu.inflight) > 0 && t.mu.inflight[0].pending == 0 {
		head := t.mu.inflight[0]
		t.mu.inflight = t.mu.inflight[1:]
		switch {
		case t.n.p.Delivery != AtLeastOnce || t.n.inProcess:
		case t.n.checkpointing:
			// Marked once the state it changed is checkpointed.
			t.mu.processed = append(t.mu.processed, head.last)
		default:
			t.n.client().MarkCommitRecords(head.last)
		}
	}
}

// takeProcessed returns the records to mark at a checkpoint and forgets them.
func (t *task) takeProcessed() []*kgo.Record {
	t.mu.Lock()
	defer t.mu.Unlock()
	rs := t.mu.processed
	t.mu.processed = nil
	return rs
}

// admit registers b as in flight; called by the poll loop before queueing.
func (t *task) admit(b *batch) {
	b.pending = 1
	b.done = make(chan struct{})
	t.mu.Lock()
	t.mu.inflight = append(t.mu.inflight, b)
	t.mu.Unlock()
}

// idle reports whether every admitted batch is settled.
func (t *task) idle() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.mu.inflight) == 0
}

// deadLetter sends the input record that failed at step s to the dead-letter
// topic, with headers naming the error, the function and the source.
func (t *task) deadLetter(ctx context.Context, b *batch, orig *kgo.Record, s int, e *runtime.Error) {
	n := t.n
	n.stats.deadLettered.Add(1)
	n.metrics.steps[s].deadLettered.Add(1)
	digest := "none" // a key_by step on a field runs no function
	if lf := t.fns[s]; lf != nil {
		digest = "sha256:" + lf.fn.Digest()
	}
	r := &kgo.Record{
		Topic: n.p.DeadLetter.Topic, Key: orig.Key, Value: orig.Value, Timestamp: orig.Timestamp,
		Headers: append(append([]kgo.RecordHeader(nil), orig.Headers...),
			kgo.RecordHeader{Key: "eddy.error", Value: []byte(e.Error())},
			kgo.RecordHeader{Key: "eddy.error.code", Value: []byte(e.CodeString())},
			kgo.RecordHeader{Key: "eddy.step", Value: []byte(n.p.Steps[s].Name)},
			kgo.RecordHeader{Key: "eddy.function.digest", Value: []byte(digest)},
			kgo.RecordHeader{Key: "eddy.source.topic", Value: []byte(orig.Topic)},
			kgo.RecordHeader{Key: "eddy.source.partition", Value: []byte(strconv.Itoa(int(orig.Partition)))},
			kgo.RecordHeader{Key: "eddy.source.offset", Value: []byte(strconv.FormatInt(orig.Offset, 10))},
		),
	}
	n.log.Warn("record dead-lettered", "step", n.p.Steps[s].Name, "topic", orig.Topic, "partition", orig.Partition,
		"offset", orig.Offset, "error", e.Error())
	t.produce(ctx, b, r)
}
