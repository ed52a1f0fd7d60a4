package host

import (
	"bytes"
	"container/heap"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/runtime"
	"github.com/eddy-streams/eddy/windowing"
)

// Timers of a stateful map, filter or flat_map step (ABI.md "Timers";
// pipeline.Step.Timed). Each task keeps its step's timers in a store of
// their own, beside the guest's keyed state (whose keys are the guest's to
// choose: no prefix of the host's could be kept apart from them), with the
// changelog TimerTopic: they survive restarts and move with the partition.
// A guest call's timer_set and timer_delete change the call's view
// (stepTimers.call); they reach the store when the call succeeds (Keep),
// so a call that fails leaves the timers as they were, as it leaves the
// keyed state. Timers that are due fire after the step's function has run
// over a batch (taskPorts.Timers) or, for processing time, at a tick of the
// node's poll loop (fireTick): they are deleted from the store and their
// eddy_timer outputs produced in the same transaction, so under
// exactly_once a timer fires once and its outputs are written once.

// TimerTopic is the changelog topic of the timers of step of pipeline.
// (validation keeps a step from being named <step>-timers, whose
// changelog it would be).
func TimerTopic(pipeline, step string) string {
	return pipeline + "-" + step + "-timers" + changelogSuffix
}

// timerStore names a step's timer store in the state database (a name no
// step can have).
func timerStore(step string) string { return step + "#timers" }

// Keys of a timer store: 't' + domain (1 byte) + time (8 bytes, big-endian,
// sign bit flipped so that times sort in order) + the timer's key -> empty;
// the watermark and its input times under 'w' (watermarkKey,
// inputTimeKey).
const timerPrefix = 't'

func appendTimerEntry(b []byte, d abi.TimeDomain, at int64, key []byte) []byte {
	b = append(b, timerPrefix, byte(d))
	b = binary.BigEndian.AppendUint64(b, uint64(at)^(1<<63))
	return append(b, key...)
}

// parseTimerEntry reads a timer entry's key. The timer's Key is a view of k.
func parseTimerEntry(k []byte) (abi.Timer, error) {
	if len(k) < 10 || k[0] != timerPrefix {
		return abi.Timer{}, fmt.Errorf("timer entry of %d bytes: %w", len(k), errCorruptEntry)
	}
	d := abi.TimeDomain(k[1])
	if !d.Valid() {
		return abi.Timer{}, fmt.Errorf("timer entry of domain %d: %w", k[1], errCorruptEntry)
	}
	if len(k)-10 > abi.MaxStateKey {
		return abi.Timer{}, fmt.Errorf("timer entry with a key of %d bytes: %w", len(k)-10, errCorruptEntry)
	}
	return abi.Timer{Domain: d, Time: int64(binary.BigEndian.Uint64(k[2:10]) ^ (1 << 63)), Key: k[10:]}, nil
}

// maxFired bounds the timers one firing hands eddy_timer (and one
// transaction gets the outputs of): more that are due fire at the next
// batch or tick.
const maxFired = 10_000

// maxFlushRounds bounds the firings of one step at the end of the input.
const maxFlushRounds = 1000

// stepTimers is the timer service of one step in one task: the runtime's
// Timers for the step's instance, its watermark, and the firing.
//
// The store is the timers' durable copy; the service also keeps them in
// memory (timerIndex), rebuilt from the store when its generation changes
// (an abort, a restore): what is due, a key's count and whether a timer
// exists are then answered without reading the store, which a function
// that moves a timer at every record would otherwise read several times
// per record.
type stepTimers struct {
	ts              *taskStore
	wm              *windowing.Watermarks
	idle            time.Duration // the watermark's idle timeout
	clock           func() time.Time
	perKey, perTask int
	bad             func(k []byte, err error) error // a corrupt entry (skipper.bad)

	// idx holds the store's timers as of store generation gen; next, per
	// domain, is the time of its first timer (math.MaxInt64: none).
	idx   timerIndex
	next  [2]int64
	gen   uint64
	known bool

	// The changes of the guest call in progress: call maps a timer entry
	// to whether it exists after them, order is the entries in the order
	// first changed, added the call's new timers per key.
	call      map[string]bool
	order     []string
	added     map[string]int
	callTotal int
	callMin   int64 // the earliest event-time timer the call set (math.MaxInt64: none)

	out runtime.Output // eddy_timer's answers

	// The check of the call the executor is about to make (arm).
	armed    bool
	armLimit int64
	armCalls int
	// ended: the input has ended (InProcess.Flush), every event-time
	// timer is due.
	ended bool
	// byUpstream: the step's inputs are the upstream inputs of the
	// repartition topic in front of it (task.from, task.marks).
	byUpstream bool
}

var _ runtime.Timers = (*stepTimers)(nil)

func newStepTimers(ts *taskStore, wm *windowing.Watermarks, idle time.Duration, perKey, perTask int, bad func(k []byte, err error) error) *stepTimers {
	return &stepTimers{ts: ts, wm: wm, idle: idle, clock: time.Now, perKey: perKey, perTask: perTask, bad: bad,
		call: map[string]bool{}, added: map[string]int{}, callMin: math.MaxInt64}
}

// timerIndex is a step's timers in memory: the entries (timer entry keys
// of the store), how many each key has, and per domain a heap ordered by
// entry (time, then key), from which deleted entries are dropped lazily.
type timerIndex struct {
	set    map[string]struct{}
	perKey map[string]int
	heaps  [2]timerHeap
}

type heapTimer struct {
	at    int64
	entry string // appendTimerEntry's bytes: they sort by time, then key
}

type timerHeap []heapTimer

func (h timerHeap) Len() int           { return len(h) }
func (h timerHeap) Less(i, j int) bool { return h[i].entry < h[j].entry }
func (h timerHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *timerHeap) Push(x any)        { *h = append(*h, x.(heapTimer)) }
func (h *timerHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

func (x *timerIndex) reset() {
	x.set, x.perKey = map[string]struct{}{}, map[string]int{}
	x.heaps = [2]timerHeap{}
}

// add indexes entry e, the timer t.
func (x *timerIndex) add(e string, t abi.Timer) {
	x.set[e] = struct{}{}
	x.perKey[string(t.Key)]++
	heap.Push(&x.heaps[t.Domain], heapTimer{t.Time, e})
}

// remove forgets entry e, the timer t (its heap copy goes when it
// surfaces, or when the heap is mostly such copies).
func (x *timerIndex) remove(e string, t abi.Timer) {
	delete(x.set, e)
	if n := x.perKey[string(t.Key)] - 1; n > 0 {
		x.perKey[string(t.Key)] = n
	} else {
		delete(x.perKey, string(t.Key))
	}
	if h := &x.heaps[t.Domain]; len(*h) > 2*len(x.set)+1024 {
		*h = (*h)[:0]
		for e := range x.set {
			if te, _ := parseTimerEntry([]byte(e)); te.Domain == t.Domain {
				*h = append(*h, heapTimer{te.Time, e})
			}
		}
		heap.Init(h)
	}
}

// first is the earliest timer of domain d, dropping deleted heap entries.
func (x *timerIndex) first(d abi.TimeDomain) (heapTimer, bool) {
	h := &x.heaps[d]
	for len(*h) > 0 {
		top := (*h)[0]
		if _, ok := x.set[top.entry]; ok {
			return top, true
		}
		heap.Pop(h)
	}
	return heapTimer{}, false
}

// sync rebuilds the index after the store's generation changed.
func (st *stepTimers) sync() error {
	if st.known && st.gen == st.ts.st.Generation() {
		return nil
	}
	st.idx.reset()
	err := st.ts.st.Scan([]byte{timerPrefix}, func(k, _ []byte) error {
		t, err := parseTimerEntry(k)
		if err != nil {
			return st.bad(k, err)
		}
		st.idx.add(string(k), t)
		return nil
	})
	if err != nil {
		return err
	}
	st.gen, st.known = st.ts.st.Generation(), true
	st.setNext()
	return nil
}

func (st *stepTimers) setNext() {
	for d := range st.next {
		st.next[d] = math.MaxInt64
		if t, ok := st.idx.first(abi.TimeDomain(d)); ok {
			st.next[d] = t.at
		}
	}
}

// exists reports whether the timer entry exists for the call.
func (st *stepTimers) exists(e []byte) bool {
	if ok, found := st.call[string(e)]; found {
		return ok
	}
	_, ok := st.idx.set[string(e)]
	return ok
}

func (st *stepTimers) change(e []byte, exists bool) {
	if _, seen := st.call[string(e)]; !seen {
		st.order = append(st.order, string(e))
	}
	st.call[string(e)] = exists
}

// Set implements runtime.Timers.
func (st *stepTimers) Set(key []byte, d abi.TimeDomain, at int64) error {
	if err := st.sync(); err != nil {
		return err
	}
	if d == abi.EventTime {
		// Set, even if deleted later in the call: run record by record,
		// it could have fired before the record that deletes it.
		st.callMin = min(st.callMin, at)
	}
	e := appendTimerEntry(nil, d, at, key)
	if st.exists(e) {
		return nil
	}
	if have := st.idx.perKey[string(key)] + st.added[string(key)]; have >= st.perKey {
		return fmt.Errorf("%w: timer_set: the key has %d timers, the limit per key is %d (limits.timers_per_key)",
			runtime.ErrTimerLimit, have, st.perKey)
	}
	if have := len(st.idx.set) + st.callTotal; have >= st.perTask {
		return fmt.Errorf("%w: timer_set: the task has %d timers, the limit per task is %d (limits.timers_per_task)",
			runtime.ErrTimerLimit, have, st.perTask)
	}
	st.change(e, true)
	st.added[string(key)]++
	st.callTotal++
	return nil
}

// Delete implements runtime.Timers.
func (st *stepTimers) Delete(key []byte, d abi.TimeDomain, at int64) error {
	if err := st.sync(); err != nil {
		return err
	}
	e := appendTimerEntry(nil, d, at, key)
	if !st.exists(e) {
		return nil
	}
	st.change(e, false)
	st.added[string(key)]--
	st.callTotal--
	return nil
}

// Now implements runtime.Timers.
func (st *stepTimers) Now(d abi.TimeDomain) int64 {
	if d == abi.EventTime {
		return st.wm.Current()
	}
	return st.clock().UnixMilli()
}

// arm makes the next call of the step's function fail with
// runtime.ErrSplitCall if it sets an event-time timer at or before limit
// (on is false: no check). Only the first call after arm is checked: a
// call that fails and is bisected runs its records in smaller calls
// anyway.
func (st *stepTimers) arm(on bool, limit int64) {
	st.armed, st.armLimit, st.armCalls = on, limit, 0
}

// Keep implements runtime.Timers: the call's changes go to the store and
// the index (kept) or are forgotten.
func (st *stepTimers) Keep(keep bool) error {
	defer st.reset()
	if !keep {
		if st.armed {
			if st.armCalls++; st.armCalls > 1 {
				st.armed = false // a retry after a failed call
			}
		}
		return nil
	}
	if st.armed {
		st.armed = false
		if st.callMin <= st.armLimit {
			return runtime.ErrSplitCall
		}
	}
	s := st.ts.st
	for _, e := range st.order {
		t, err := parseTimerEntry([]byte(e))
		if err != nil {
			return err
		}
		_, had := st.idx.set[e]
		switch on := st.call[e]; {
		case on && !had:
			if err := s.Put([]byte(e), []byte{}); err != nil {
				return err
			}
			st.idx.add(e, t)
			st.next[t.Domain] = min(st.next[t.Domain], t.Time)
		case !on && had:
			if err := s.Delete([]byte(e)); err != nil {
				return err
			}
			st.idx.remove(e, t)
		}
	}
	if len(st.order) > 0 {
		st.setNext()
	}
	return nil
}

func (st *stepTimers) reset() {
	st.callMin = math.MaxInt64
	if len(st.order) == 0 {
		return
	}
	clear(st.call)
	clear(st.added)
	st.order, st.callTotal = st.order[:0], 0
}

// due takes the timers of domain d at or before upTo, in time then key
// order, at most maxFired: they have fired, and are deleted from the
// store. Their keys are copies.
func (st *stepTimers) due(d abi.TimeDomain, upTo int64) ([]abi.Timer, error) {
	st.reset() // changes of a call that failed last
	if err := st.sync(); err != nil {
		return nil, err
	}
	var fired []abi.Timer
	for len(fired) < maxFired {
		top, ok := st.idx.first(d)
		if !ok || top.at > upTo {
			break
		}
		t, err := parseTimerEntry([]byte(top.entry))
		if err != nil {
			return nil, err
		}
		t.Key = bytes.Clone(t.Key)
		if err := st.ts.st.Delete([]byte(top.entry)); err != nil {
			return nil, err
		}
		st.idx.remove(top.entry, t)
		fired = append(fired, t)
	}
	st.setNext()
	return fired, nil
}

// upTo is how far timers of domain d are due: the watermark, or the clock.
func (st *stepTimers) upTo(d abi.TimeDomain) int64 {
	if d == abi.EventTime {
		if st.ended {
			return math.MaxInt64
		}
		return st.wm.Current()
	}
	return st.clock().UnixMilli()
}

// save records the watermark and its input times in the store.
func (st *stepTimers) save() error {
	s := st.ts.st
	v := binary.BigEndian.AppendUint64(nil, uint64(st.wm.Current()))
	if old, ok, err := s.Get(watermarkKey); err != nil {
		return err
	} else if !ok || !bytes.Equal(old, v) {
		if err := s.Put(watermarkKey, v); err != nil {
			return err
		}
	}
	return saveInputTimes(s, st.wm.Times())
}

// initTimers opens step i's timer store, restores it and its watermark,
// and gives the step's instance the service.
func (t *task) initTimers(ctx context.Context, i int) error {
	n := t.n
	step := &n.p.Steps[i]
	ts := &taskStore{st: n.db.Store(n.p.Name, timerStore(step.Name), t.part), topic: TimerTopic(n.p.Name, step.Name)}
	ts.st.Abort()
	if err := n.restore(ctx, ts, t.part); err != nil {
		return fmt.Errorf("restore %s: %w", ts.topic, err)
	}
	var disorder, idle time.Duration
	if w := step.Watermark; w != nil {
		disorder, idle = w.Disorder, w.IdleTimeout
	}
	wm := windowing.NewWatermarks(disorder, idle, time.Now)
	// The inputs are the stage's topics, or, for the first step of a
	// stage after a repartition, the upstream inputs (initTime), whose
	// records name them and whose progress markers move them.
	byUpstream := t.byUpstream && i == t.stage.From
	inputs := make([]int32, len(t.stage.Inputs))
	for k := range inputs {
		inputs[k] = int32(k)
	}
	if byUpstream {
		inputs = t.inputs
	}
	wm.Assign(inputs...)
	sk := n.skipper(i, ts.topic, t.part)
	defer sk.done()
	saved, err := loadWatermark(ts.st, sk.bad)
	if err != nil {
		return err
	}
	valid := func(in int32) bool { return slices.Contains(inputs, in) }
	if err := restoreInputTimes(ts.st, valid, sk.bad, func(in int32, at int64) error { wm.Observe(in, at); return nil }); err != nil {
		return err
	}
	if saved != windowing.NoWatermark {
		// The watermark never goes back: a restart does not fire again
		// what fired before it (the input times alone may be lower,
		// when an input idled).
		wm.Observe(math.MaxInt32, saved)
		wm.Revoke(math.MaxInt32)
	}
	tm := newStepTimers(ts, wm, idle, n.p.Limits.TimersPerKey, n.p.Limits.TimersPerTask, func(k []byte, err error) error {
		n.log.Warn("corrupt timer entry skipped", "step", step.Name, "partition", t.part, "error", err)
		return nil
	})
	if err := tm.sync(); err != nil {
		return err
	}
	tm.byUpstream = byUpstream
	t.timers[i] = tm
	t.inst(i).SetTimers(tm)
	return nil
}

// fireTimers fires step s's timers of domain d that are due: eddy_timer
// runs over them and its outputs are returned (src -1). A timer the
// function fails on goes to the dead-letter topic (fired: it does not fire
// again).
func (t *task) fireTimers(ctx context.Context, b *batch, s int, d abi.TimeDomain) ([]abi.Record, error) {
	tm := t.timers[s]
	fired, err := tm.due(d, tm.upTo(d))
	if err != nil || len(fired) == 0 {
		return nil, err
	}
	t.n.metrics.steps[s].timersFired.Add(int64(len(fired)))
	inst := t.inst(s)
	if !inst.Has(abi.KindTimer) {
		// The version now running exports no eddy_timer (a swap took it
		// away): the timers cannot fire, and go to the dead-letter topic.
		for j := range fired {
			t.deadLetterTimer(ctx, b, s, &fired[j], &runtime.Error{Function: t.exec.Function(s), Kind: abi.KindTimer,
				Cause: runtime.CauseGuest, Code: abi.CodeUnsupported, Index: j, Group: -1,
				Reason: "the step's function does not export eddy_timer (kind timer)"})
		}
		return nil, nil
	}
	out := &tm.out
	out.Reset()
	if err := inst.Timer(ctx, fired, out); err != nil {
		return nil, err
	}
	failed := map[int32]bool{}
	for _, f := range out.Failed {
		failed[int32(f.Index)] = true
		t.deadLetterTimer(ctx, b, s, &fired[f.Index], f)
	}
	// A copy: the output buffer is the step's, and a batch fires its
	// timers more than once.
	var recs []abi.Record
	for j := range out.Records {
		if !failed[out.From[j]] {
			recs = append(recs, copyRecord(&out.Records[j]))
		}
	}
	return recs, nil
}

// copyRecord copies r's bytes into one new allocation.
func copyRecord(r *abi.Record) abi.Record {
	n := len(r.Key) + len(r.Value)
	for _, h := range r.Headers {
		n += len(h.Value)
	}
	buf := make([]byte, 0, n)
	own := func(b []byte) []byte {
		if b == nil {
			return nil
		}
		buf = append(buf, b...)
		return buf[len(buf)-len(b) : len(buf) : len(buf)]
	}
	c := abi.Record{Key: own(r.Key), Value: own(r.Value), Timestamp: r.Timestamp}
	if len(r.Headers) > 0 {
		c.Headers = make([]abi.Header, len(r.Headers))
		for i, h := range r.Headers {
			c.Headers[i] = abi.Header{Key: strings.Clone(h.Key), Value: own(h.Value)}
		}
	}
	return c
}

// deadLetterTimer sends a timer the function failed on to the dead-letter
// topic: its key, no value, its time as the timestamp, and headers
// eddy.timer.time and eddy.timer.domain.
func (t *task) deadLetterTimer(ctx context.Context, b *batch, s int, tm *abi.Timer, e *runtime.Error) {
	orig := &kgo.Record{Key: tm.Key, Timestamp: time.UnixMilli(max(0, tm.Time))}
	msg := t.sendDeadLetter(ctx, b, orig, s, e.Error(), e.CodeString(),
		kgo.RecordHeader{Key: "eddy.timer.time", Value: []byte(strconv.FormatInt(tm.Time, 10))},
		kgo.RecordHeader{Key: "eddy.timer.domain", Value: []byte(tm.Domain.String())})
	t.n.log.Warn("timer dead-lettered", "step", t.n.p.Steps[s].Name, "time", tm.Time, "domain", tm.Domain.String(), "error", msg)
}

// batchInput is the id of the input the batch in progress came from (its
// topic among the stage's inputs), for the watermarks.
func (p *taskPorts) batchInput() int32 {
	if p.b != nil && len(p.b.records) > 0 {
		return p.t.inputOf(p.b.records[0].Topic)
	}
	return 0
}

// FireTimers implements graph.Operators: step s's timers that are due, of
// both domains, fire.
func (p *taskPorts) FireTimers(ctx context.Context, s int, end bool) ([]abi.Record, error) {
	t := p.t
	tm := t.timers[s]
	if tm == nil {
		return nil, nil
	}
	if end && tm.byUpstream {
		// The batch's progress markers, once its records have run: an
		// upstream's records before its marker are no later than it.
		for _, m := range t.marks {
			if windowing.CheckTime(m.time) == nil && t.hasInput(m.from) {
				tm.wm.Observe(m.from, m.time)
			}
		}
	}
	tm.wm.Tick()
	var out []abi.Record
	for _, d := range []abi.TimeDomain{abi.EventTime, abi.ProcessingTime} {
		recs, err := t.fireTimers(ctx, p.b, s, d)
		if err != nil {
			return nil, err
		}
		out = append(out, recs...)
	}
	return out, nil
}

// Segment implements graph.Operators: the records of in up to the first
// whose watermark (that of the records before it) reaches step s's first
// timer, and the check of the timers the call sets.
func (p *taskPorts) Segment(s int, in []abi.Record, src []int32) int {
	tm := p.t.timers[s]
	if tm == nil {
		return len(in)
	}
	if inst := p.t.inst(s); inst.Native() && inst.Has(abi.KindTimer) {
		// A native runs each record as a call of its own, whose timer
		// changes apply at once: the check of a whole call (arm) cannot
		// refuse a record after the ones before it took effect. (A
		// native without OnTimer sets no timers: runtime.TimerState.)
		tm.arm(false, 0)
		return 1
	}
	input := p.inputOf(tm, src)
	next := tm.next[abi.EventTime]
	if !tm.known {
		next = math.MinInt64 // unknown: one record at a time
	}
	// The watermark before each record, as if the records before it had
	// been observed: each input's largest time among them counts.
	var seen map[int32]int64
	before := func() int64 { return tm.wm.With(seen) }
	n := len(in)
	limit := tm.wm.Current() // the watermark before the segment's last record
	for j := range in {
		if j > 0 {
			w := before()
			if w >= next {
				n = j
				break
			}
			limit = w
		}
		if ts := in[j].Timestamp; ts >= windowing.MinTime && ts <= windowing.MaxTime {
			if seen == nil {
				seen = map[int32]int64{}
			}
			if at, ok := seen[input(j)]; !ok || ts > at {
				seen[input(j)] = ts
			}
		}
	}
	tm.arm(n > 1, limit)
	return n
}

// Advance implements graph.Operators: step s's watermark moves with the
// times of in.
func (p *taskPorts) Advance(s int, in []abi.Record, src []int32) {
	tm := p.t.timers[s]
	if tm == nil {
		return
	}
	tm.armed = false
	input := p.inputOf(tm, src)
	for j := range in {
		if ts := in[j].Timestamp; ts >= windowing.MinTime && ts <= windowing.MaxTime {
			tm.wm.Observe(input(j), ts)
		}
	}
}

// inputOf returns the watermark input of each record of a segment (src:
// the records of the batch they come from): its upstream input after a
// repartition, else the batch's topic.
func (p *taskPorts) inputOf(tm *stepTimers, src []int32) func(j int) int32 {
	if tm.byUpstream {
		from := p.t.from
		return func(j int) int32 {
			if src[j] >= 0 && int(src[j]) < len(from) {
				return from[src[j]]
			}
			return 0
		}
	}
	in := p.batchInput()
	return func(int) int32 { return in }
}

// timersBound is the event time before which the stage's steps with
// timers fire no more event-time timers: the least of their watermarks;
// math.MinInt64 when the stage has none, or one has no watermark yet.
func (t *task) timersBound() int64 {
	bound := int64(math.MaxInt64)
	for s := t.stage.From; s < t.stage.To; s++ {
		tm := t.timers[s]
		if tm == nil {
			continue
		}
		wm := tm.wm.Current()
		if windowing.CheckTime(wm) != nil {
			return math.MinInt64
		}
		bound = min(bound, wm)
	}
	if bound == math.MaxInt64 {
		return math.MinInt64
	}
	return bound
}

// fireTick fires the timers of the stage's steps that are due without a
// batch of records: processing-time timers as the clock passes them, and
// event-time timers left over from a firing that hit maxFired or whose
// watermark moved by idleness. What they make goes through the steps
// after them. b is a tick batch (no records).
func (t *task) fireTick(ctx context.Context, b *batch) error {
	for s := t.stage.From; s < t.stage.To; s++ {
		tm := t.timers[s]
		if tm == nil {
			continue
		}
		tm.wm.Tick()
		var recs []abi.Record
		for _, d := range []abi.TimeDomain{abi.EventTime, abi.ProcessingTime} {
			r, err := t.fireTimers(ctx, b, s, d)
			if err != nil {
				return fmt.Errorf("step %s: timers: %w", t.n.p.Steps[s].Name, err)
			}
			recs = append(recs, r...)
		}
		if len(recs) == 0 {
			continue
		}
		if err := t.runAfter(ctx, b, s, recs); err != nil {
			return err
		}
	}
	return nil
}

// flushTimers ends the input of the task's steps with timers: their
// event-time timers all fire, those the firings set included, and what
// they make goes on (InProcess.Flush, as windows fire at the end).
func (t *task) flushTimers(ctx context.Context) error {
	for s := t.stage.From; s < t.stage.To; s++ {
		tm := t.timers[s]
		if tm == nil {
			continue
		}
		tm.ended = true
		// A function that sets a new timer at every firing would fire
		// forever: the rounds are bounded.
		for round := 0; ; round++ {
			if round == maxFlushRounds {
				t.n.log.Warn("timers still due after the last flush round; left unfired", "step", t.n.p.Steps[s].Name, "rounds", round)
				break
			}
			recs, err := t.fireTimers(ctx, nil, s, abi.EventTime)
			if err != nil {
				return fmt.Errorf("step %s: timers: %w", t.n.p.Steps[s].Name, err)
			}
			if tm.next[abi.EventTime] == math.MaxInt64 && len(recs) == 0 {
				break
			}
			if err := t.runAfter(ctx, nil, s, recs); err != nil {
				return err
			}
		}
	}
	return nil
}

// planTick works out, after a batch, when the poll loop should next tick
// the task's timers (nextTick): when its first processing-time timer is
// due, at once when event-time timers are due already (more than one
// firing takes), and every idle timeout when a watermark may move by
// idleness.
func (t *task) planTick() {
	next := int64(math.MaxInt64)
	for _, tm := range t.timers {
		if tm == nil || !tm.known {
			continue
		}
		next = min(next, tm.next[abi.ProcessingTime])
		if tm.next[abi.EventTime] <= tm.wm.Current() {
			next = math.MinInt64
		}
		if tm.idle > 0 && tm.next[abi.EventTime] != math.MaxInt64 {
			next = min(next, tm.clock().Add(tm.idle).UnixMilli())
		}
	}
	t.nextTick.Store(next)
}

// tickTimers queues a tick on every task whose timers are due (planTick),
// unless one is queued already or its queue is full (the batches in it
// fire timers too). Called by the poll loop, the only sender on the
// queues.
func (n *Node) tickTimers(now time.Time) {
	ms := now.UnixMilli()
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, t := range n.mu.groups {
		if t.nextTick.Load() > ms || t.ticking.Load() || len(t.held) > 0 || len(t.in) == cap(t.in) {
			continue
		}
		b := &batch{tick: true}
		t.ticking.Store(true)
		t.admit(b)
		t.in <- b
		n.txnWork = true
	}
}
