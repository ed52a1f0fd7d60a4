package host

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/graph"
	"github.com/eddy-streams/eddy/join"
	"github.com/eddy-streams/eddy/runtime"
	"github.com/eddy-streams/eddy/windowing"
)

// batch is a run of consecutive records of one partition.
type batch struct {
	records []*kgo.Record
	last    *kgo.Record // the last fetched record: its offset is committed when the batch is done
	// tick marks a batch of no records that fires the task's timers
	// (timers.go); last is nil.
	tick bool
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
	fns     []*liveFn           // per step: the version its instance runs (task.inst; nil outside the stage, or without a function)
	gen     int64               // the node's swap generation the instances follow
	headers []kgo.RecordHeader  // eddy.function.<step> of the stage's steps, added to every output
	times   []*runtime.Instance // per step: its time_function's instance, else nil
	results []runtime.Result    // scratch for key and timestamp extraction
	stores  []*taskStore        // per step: the keyed store of a stateful or aggregate step, else nil
	windows []*taskWindows      // per step: an aggregate step's windowing, else nil
	joins   []*taskJoin         // per step: a join step's join, else nil
	timers  []*stepTimers       // per step: a step with timers' timer service, else nil (timers.go)
	// nextTick is when the poll loop next ticks the task's timers (unix
	// ms; math.MaxInt64: never), set by the task after each batch; ticking
	// says a tick is queued.
	nextTick atomic.Int64
	ticking  atomic.Bool
	// retracting: an aggregate of the pipeline emits retractions, which
	// no topic gets (retract.go)
	retracting bool
	// updates: the stage has an aggregate that emits retractions; the
	// times of its updates do not bound what follows them, so its
	// progress downstream is its results' bound alone (runSteps)
	updates bool

	// exec runs the stage's steps over a batch; ports connect it to the
	// task and the node for the batch in progress (ports.go).
	exec  *graph.Executor
	ports taskPorts

	// prepared are instances of staged versions, created ahead of a swap
	// by the registry's goroutine (swap.go); guarded by prepMu.
	prepMu   sync.Mutex
	prepared map[int]preparedInst

	// The shadow of one of the stage's steps, if any (shadow.go); its
	// step is exec.ShadowAt.
	shadowFn      *liveFn
	shadowInst    *runtime.Instance
	shadowOut     runtime.Output
	shadowHeaders []kgo.RecordHeader

	// warnedLogAppend is set once a record without a log-append timestamp
	// has been reported (time: log_append).
	warnedLogAppend bool

	// timed[s] says that this task gives the records of aggregate step s
	// their event time (as their timestamp) before they reach it or the
	// repartition topic in front of it (initTime); extract[s] is its
	// extractor, when it has no time_function.
	timed   []bool
	extract []windowing.Extractor
	// resultSrcBuf backs the src of a batch's window results (resultSrc).
	resultSrcBuf []int32
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
	// sync orders the inputs of a task that joins a co-partitioned table
	// by time (timesync.go); nil for other tasks. Guarded by the node's mu.
	sync *timeSync

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
		in:   make(chan *batch, n.p.Limits.QueueSize),
		quit: make(chan struct{}),
		done: make(chan struct{}),
	}
	t.counters.watermark.Store(math.MinInt64)
	t.stage = n.stages[key.stage]
	t.ports.t = t
	t.exec = graph.New(n.p, t.stage, graph.Deps{Collector: &t.ports, Operators: &t.ports, Meter: &t.ports})
	t.retracting = slices.Contains(n.emits, true)
	t.updates = slices.Contains(n.emits[t.stage.From:t.stage.To], true)
	if n.drv.syncsTime() {
		t.sync = newTimeSync(n.p, t.stage)
	}
	topic := strings.Join(t.stage.Inputs, ",") // for errors
	if err := t.initTime(); err != nil {
		return nil, fmt.Errorf("task %s[%d]: %w", topic, part, err)
	}
	steps := len(n.p.Steps)
	t.fns = make([]*liveFn, steps)
	t.times = make([]*runtime.Instance, steps)
	t.stores = make([]*taskStore, steps)
	t.windows = make([]*taskWindows, steps)
	t.joins = make([]*taskJoin, steps)
	t.timers = make([]*stepTimers, steps)
	t.nextTick.Store(math.MaxInt64)
	t.gen = n.gen.Load() // before reading the current versions: a swap after this is seen at the first batch
	for i := t.stage.From; i < t.stage.To; i++ {
		if err := t.initStep(ctx, i); err != nil {
			t.closeInstances(ctx)
			return nil, fmt.Errorf("task %s[%d]: step %s: %w", topic, part, n.p.Steps[i].Name, err)
		}
	}
	for s, timed := range t.timed {
		if !timed || n.timeFns[s] == nil {
			continue
		}
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
	lf, inst, err := n.currentInstance(ctx, i)
	if err != nil {
		return err
	}
	if lf != nil {
		t.setFunction(i, inst, lf)
	}
	if step.Kind == StepJoin {
		return t.initJoin(ctx, i)
	}
	if !step.Stateful() {
		return nil
	}
	ts := &taskStore{st: n.db.Store(n.p.Name, step.Name, t.part), topic: ChangelogTopic(n.p.Name, step.Name)}
	ts.st.Abort() // nothing pending from an earlier owner of this partition
	if err := n.restore(ctx, ts, t.part); err != nil {
		return fmt.Errorf("restore %s: %w", ts.topic, err)
	}
	if step.State {
		t.inst(i).SetState(ts.st)
	}
	t.stores[i] = ts
	if step.Timed() {
		if err := t.initTimers(ctx, i); err != nil {
			return fmt.Errorf("timers: %w", err)
		}
	}
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
	for s := range t.exec.Steps {
		if inst := t.inst(s); inst != nil {
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
			if err := t.process(ctx, b); errors.Is(err, errGiveUpBatch) {
				// The transaction aborts (Node.abortTxn); the
				// batch's records come again after it.
				t.n.abortTxn.Store(true)
				t.settle(b)
				close(b.done)
				continue
			} else if err != nil {
				t.mu.Lock()
				t.mu.failed = err
				t.mu.Unlock()
				t.n.fail(err)
				close(b.done)
				return
			}
			t.observe(b)
			t.planTick()
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
	if b.tick {
		t.ticking.Store(false)
		if err := t.fireTick(ctx, b); err != nil {
			return err
		}
		t.settle(b)
		return nil
	}
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
	// The batch's progress markers are read by every step of the stage
	// that keeps a watermark per upstream input (a step with timers, an
	// aggregate), each once its records have run: no step may take them
	// from the next, and they end with the batch.
	t.marks = t.marks[:0]
	if t.stage.From > 0 && side == join.Left {
		in, src, t.from, t.marks = t.readRepartitioned(ctx, b)
	} else {
		in = make([]abi.Record, len(b.records))
		src = make([]int32, len(in))
		for i, r := range b.records {
			in[i] = toABI(r)
			src[i] = int32(i)
		}
		// Records of a topic outside the pipeline: in the source's
		// format (formats.go).
		var err error
		if in, src, err = t.decodeSource(ctx, b, in, src); err != nil {
			return err
		}
	}
	if t.stage.From == 0 {
		n.stats.in.Add(int64(len(in)))
	}
	t.counters.in.Add(int64(len(in)))
	if err := t.runSteps(ctx, b, b.records[0].Topic, first, side, in, src); err != nil {
		return err
	}
	t.settle(b) // the processing share of pending
	return nil
}

// runSteps runs records cur (src: the input record each descends from, -1
// for a window result) through the stage's steps from first (the task's
// graph.Executor), side being the join side they enter a join step on, and
// produces the outputs to the stage's output topic; topic is the batch's
// input topic. InProcess.Flush also runs window results through the steps
// after their aggregate with it (b nil; InProcess, the driver, takes the
// records).
func (t *task) runSteps(ctx context.Context, b *batch, topic string, first int, side join.Side, cur []abi.Record, src []int32) error {
	return t.runStage(ctx, b, topic, func() (graph.Result, error) { return t.exec.Run(ctx, first, side, cur, src) })
}

// runAfter is runSteps for recs, records step s made outside a batch's run
// of its steps (timer firings on a tick or at the end of the input, window
// results at the end of the input): they go through s's named outputs and
// taps, then the steps after s (graph.Executor.RunAfter).
func (t *task) runAfter(ctx context.Context, b *batch, s int, recs []abi.Record) error {
	return t.runStage(ctx, b, t.stage.Inputs[0], func() (graph.Result, error) {
		return t.exec.RunAfter(ctx, s, recs, t.resultSrc(len(recs)))
	})
}

// runStage runs the stage's steps (run) and produces what comes out.
func (t *task) runStage(ctx context.Context, b *batch, topic string, run func() (graph.Result, error)) error {
	n := t.n
	t.ports.b, t.ports.meter = b, stepMeter{}
	defer func() { t.ports.b = nil }()
	res, err := run()
	if err != nil {
		return err
	}
	cur, src := res.Out, res.Src
	shadowIn, shadowSrc := res.ShadowIn, res.ShadowSrc
	feeds := n.feedsWindows(t.stage)
	if !t.stage.Last && (n.p.Steps[t.stage.To].Kind == StepAggregate || n.p.Steps[t.stage.To].Kind == StepJoin) {
		// The next stage's windows need the records' event time; a
		// join's is their timestamp, which must be in range. A record
		// without one is dead-lettered here, with its input's offsets.
		if cur, src, err = t.eventTimes(ctx, b, t.stage.To, cur, src); err != nil {
			return fmt.Errorf("step %s: %w", n.p.Steps[t.stage.To].Name, err)
		}
	}
	if t.retracting && t.stage.Last {
		cur, src = dropRetractions(cur, src) // retract.go
	}
	maxTime := int64(math.MinInt64)
	extra := t.headers
	if feeds {
		// Every record names its upstream: one header for the batch, in
		// the headers toKafkaBatch lays out, not one append per record.
		from := []byte(strconv.Itoa(int(t.upstreamID(topic))))
		extra = append(slices.Clip(t.headers), kgo.RecordHeader{Key: hdrFrom, Value: from})
	}
	outs := toKafkaBatch(t.stage.Output, cur, extra)
	if t.exec.ShadowAt >= 0 {
		for i := range outs {
			if src[i] >= 0 {
				outs[i].Headers = appendSource(outs[i].Headers, b.records[src[i]])
			}
		}
	}
	skip := t.oversized(ctx, b, t.stage.To-1, outs, src)
	if t.stage.Last && n.formats.enc != nil {
		skip = t.encodeSink(ctx, b, outs, src, skip)
	}
	produced := 0
	for i := range outs {
		if skip != nil && skip[i] {
			continue
		}
		if feeds && !t.updates {
			maxTime = max(maxTime, cur[i].Timestamp)
		}
		t.produce(ctx, b, &outs[i])
		produced++
	}
	if t.stage.Last {
		n.stats.out.Add(int64(produced))
	}
	t.counters.out.Add(int64(produced))
	if feeds {
		maxTime = max(maxTime, t.resultsBound())
	}
	if feeds {
		// A stage with timers sends its watermark as progress of every
		// input, as a Flink operator forwards the least of its inputs'
		// watermarks: its event-time firings come after it, and a record
		// of any input behind it is late. Without this, an input whose
		// records make no output (auctions, whose winning bids come out
		// of firings in bid batches) never moves the watermark of the
		// stage after the repartition.
		if wm := t.timersBound(); wm > math.MinInt64 {
			maxTime = max(maxTime, wm)
			for _, in := range t.stage.Inputs {
				if in != topic {
					t.sendProgress(ctx, b, in, wm)
				}
			}
		}
	}
	if feeds && maxTime > math.MinInt64 {
		t.sendProgress(ctx, b, topic, maxTime)
	}
	if t.exec.ShadowAt >= 0 {
		if err := t.runShadow(ctx, b, shadowIn, shadowSrc); err != nil {
			return err
		}
	}
	return nil
}

// oversized finds the records of outs larger than their topic accepts and
// returns which of outs not to produce (nil when all fit). An output record
// comes from an input record (src[i] in b.records): that record is
// dead-lettered, once, as failed at step s (the stage's last step, or the
// step whose output a tap writes). Its other
// outputs that fit are produced, as when a later step fails on one of the
// records an input made (graph.Executor.RunFunction). Window results and what later steps
// made of them (src[i] < 0) come from no one record: each that does not fit
// is dead-lettered itself.
func (t *task) oversized(ctx context.Context, b *batch, s int, outs []kgo.Record, src []int32) []bool {
	var skip []bool
	var failed map[int32]bool
	now := time.Now()
	for i := range outs {
		why, cause, bad := t.n.unproducible(&outs[i], "output record", now)
		if !bad {
			continue
		}
		if skip == nil {
			skip, failed = make([]bool, len(outs)), map[int32]bool{}
		}
		skip[i] = true
		if src[i] < 0 {
			t.deadLetterResult(ctx, b, &outs[i], s, t.unproducibleError(s, cause, why).Error(), string(cause))
			continue
		}
		if !failed[src[i]] {
			failed[src[i]] = true
			t.deadLetter(ctx, b, b.records[src[i]], s, t.unproducibleError(s, cause, why))
		}
	}
	return skip
}

// tap writes cur, the output of step s, to the step's to: topic, if it has
// one, in the same transaction as the stage's outputs; the records go on
// through the next steps too. A record too large for the topic
// dead-letters the input record it descends from (or a window result,
// itself), as failed at step s; its other outputs are produced.
func (t *task) tap(ctx context.Context, b *batch, s int, cur []abi.Record, src []int32) {
	to := t.n.p.Steps[s].To
	if to == "" || len(cur) == 0 {
		return
	}
	if t.retracting {
		cur, src = dropRetractions(cur, src) // retract.go
	}
	outs := toKafkaBatch(to, cur, t.headers)
	skip := t.oversized(ctx, b, s, outs, src)
	for i := range outs {
		if skip == nil || !skip[i] {
			t.produce(ctx, b, &outs[i])
		}
	}
	t.n.metrics.steps[s].tapped.Add(int64(len(outs)))
}

// produce sends r, counting it against b until acknowledged.
func (t *task) produce(ctx context.Context, b *batch, r *kgo.Record) {
	t.n.drv.send(ctx, t, b, r)
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
		t.n.drv.settled(t, head)
	}
}

// allStores are the task's stores: its steps' (t.stores) and their timers'.
func (t *task) allStores() []*taskStore {
	all := slices.Clip(t.stores)
	for _, tm := range t.timers {
		if tm != nil {
			all = append(all, tm.ts)
		}
	}
	return all
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
	msg := t.sendDeadLetter(ctx, b, orig, s, e.Error(), e.CodeString(), sourceHeaders(orig)...)
	t.n.log.Warn("record dead-lettered", "step", t.n.p.Steps[s].Name, "topic", orig.Topic, "partition", orig.Partition,
		"offset", orig.Offset, "error", msg)
}

// sourceHeaders are the eddy.source.* headers of a dead letter of orig,
// an input record: its topic, partition and offset.
func sourceHeaders(orig *kgo.Record) []kgo.RecordHeader {
	return []kgo.RecordHeader{
		{Key: "eddy.source.topic", Value: []byte(orig.Topic)},
		{Key: "eddy.source.partition", Value: []byte(strconv.Itoa(int(orig.Partition)))},
		{Key: "eddy.source.offset", Value: []byte(strconv.FormatInt(orig.Offset, 10))},
	}
}

// failRecord dead-letters record j of cur, the input of step s, which
// failed with e: the batch's input record it descends from (src[j]), or,
// for a window result of an earlier aggregate step (src[j] < 0: it descends
// from no one input record), the result as it entered step s, with its
// eddy.window.* headers and no eddy.source.* ones.
func (t *task) failRecord(ctx context.Context, b *batch, s int, cur []abi.Record, src []int32, j int, e *runtime.Error) {
	if src[j] >= 0 {
		t.deadLetter(ctx, b, b.records[src[j]], s, e)
		return
	}
	t.deadLetterResult(ctx, b, toKafka("", &cur[j]), s, e.Error(), e.CodeString())
}

// resultSrc is the src of n window results: -1 each (see failRecord). It
// reuses the task's buffer: a batch's results are its only ones until the
// batch is done (RunFunction and keyBy make new src slices).
func (t *task) resultSrc(n int) []int32 {
	src := slices.Grow(t.resultSrcBuf[:0], n)[:n]
	for i := range src {
		src[i] = -1
	}
	t.resultSrcBuf = src
	return src
}

// deadLetterResult sends r, a window result or what the steps after its
// aggregate made of it, which failed at step s with the error text reason
// and code, to the dead-letter topic in place of an input record: its key,
// its eddy.window.* headers and, when they fit, its value; no
// eddy.source.* headers, since no one input record made it.
func (t *task) deadLetterResult(ctx context.Context, b *batch, r *kgo.Record, s int, reason, code string) {
	// The window headers say which result it was; the others are the
	// node's own (eddy.function.*).
	var hs []kgo.RecordHeader
	for _, h := range r.Headers {
		if strings.HasPrefix(h.Key, "eddy.window.") {
			hs = append(hs, h)
		}
	}
	orig := &kgo.Record{Key: r.Key, Value: r.Value, Timestamp: r.Timestamp, Headers: hs}
	msg := t.sendDeadLetter(ctx, b, orig, s, reason, code)
	t.n.log.Warn("window result dead-lettered", "step", t.n.p.Steps[s].Name, "error", msg)
}

// sendDeadLetter counts and produces the dead letter of orig, failed at step
// s with the error text reason (cut to maxDeadLetterError, which it returns)
// and code: eddy.error, eddy.error.code, eddy.step and eddy.function.digest,
// then extra.
func (t *task) sendDeadLetter(ctx context.Context, b *batch, orig *kgo.Record, s int, reason, code string, extra ...kgo.RecordHeader) string {
	t.n.metrics.steps[s].deadLettered.Add(1)
	digest := "none" // a key_by step on a field runs no function
	if lf := t.fns[s]; lf != nil {
		digest = "sha256:" + lf.fn.Digest()
	}
	return t.produceDeadLetter(ctx, b, orig, t.n.p.Steps[s].Name, digest, reason, code, extra...)
}

// produceDeadLetter counts and produces the dead letter of orig, failed at
// step (a step's name, or where a format refused it: source, sink) with
// the error text reason (cut to maxDeadLetterError, which it returns) and
// code: eddy.error, eddy.error.code, eddy.step and eddy.function.digest
// (digest), then extra.
func (t *task) produceDeadLetter(ctx context.Context, b *batch, orig *kgo.Record, step, digest, reason, code string, extra ...kgo.RecordHeader) string {
	n := t.n
	n.stats.deadLettered.Add(1)
	msg := abi.TruncateReason(reason, maxDeadLetterError)
	hs := append([]kgo.RecordHeader{
		{Key: "eddy.error", Value: []byte(msg)},
		{Key: "eddy.error.code", Value: []byte(code)},
		{Key: "eddy.step", Value: []byte(step)},
		{Key: "eddy.function.digest", Value: []byte(digest)},
	}, extra...)
	dl := deadLetterRecord(n.p.DeadLetter.Topic, n.recordLimit(n.p.DeadLetter.Topic), orig, hs)
	n.restamp(dl)
	t.produce(ctx, b, dl)
	return msg
}

// maxDeadLetterError bounds the eddy.error header of a dead letter (guest
// reasons are already cut to abi.MaxReasonBytes; this covers the rest of the
// text). A dead letter the producer refuses stops the node, and the same
// record fails again after every restart, so its size is bounded here (and
// by deadLetterRecord) rather than left to the broker.
const maxDeadLetterError = 8 << 10

// deadLetterRecord is the dead letter of orig: its key, value and headers
// followed by eddy's. When that is more than limit (the dead-letter topic's
// recordLimit; an input record may be larger than the node produces, since
// its topic may accept bigger messages, and headers come on top), it drops
// the value, then the original headers, then the key, saying so in
// eddy.dropped.value (the value's length), eddy.dropped.headers (their count)
// and eddy.dropped.key (the key's length).
func deadLetterRecord(topic string, limit int, orig *kgo.Record, eddy []kgo.RecordHeader) *kgo.Record {
	r := &kgo.Record{Topic: topic, Key: orig.Key, Value: orig.Value, Timestamp: orig.Timestamp,
		Headers: append(append(make([]kgo.RecordHeader, 0, len(orig.Headers)+len(eddy)+3), orig.Headers...), eddy...)}
	if produceSize(r) <= limit {
		return r
	}
	r.Value = nil
	r.Headers = append(r.Headers, kgo.RecordHeader{Key: "eddy.dropped.value", Value: []byte(strconv.Itoa(len(orig.Value)))})
	if produceSize(r) <= limit {
		return r
	}
	r.Headers = append(r.Headers[len(orig.Headers):], kgo.RecordHeader{Key: "eddy.dropped.headers", Value: []byte(strconv.Itoa(len(orig.Headers)))})
	if produceSize(r) <= limit {
		return r
	}
	r.Key = nil
	r.Headers = append(r.Headers, kgo.RecordHeader{Key: "eddy.dropped.key", Value: []byte(strconv.Itoa(len(orig.Key)))})
	return r
}

// produceSize is an upper bound of what r takes in a record batch: its bytes,
// the varints framing them (at most 5 bytes each for lengths, 10 for the
// timestamp delta) and the batch header (61 bytes).
func produceSize(r *kgo.Record) int {
	n := 61 + 5 + 1 + 10 + 5 + 5 + len(r.Key) + 5 + len(r.Value) + 5
	for _, h := range r.Headers {
		n += 5 + len(h.Key) + 5 + len(h.Value)
	}
	return n
}
