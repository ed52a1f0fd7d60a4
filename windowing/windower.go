package windowing

import (
	"cmp"
	"container/heap"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/eddy-streams/eddy/abi"
)

// EmitMode says when window results are emitted.
type EmitMode int

// The emit modes.
const (
	// EmitFinal emits each window's result once, when the window closes:
	// when the task watermark reaches the window's close time (end + grace,
	// and for sessions end + gap + grace). This is Kafka Streams'
	// suppress(untilWindowCloses): no early or partial results, and one
	// result per (key, window). The default.
	EmitFinal EmitMode = iota
	// EmitUpdate emits the window's new result after every record that
	// changes it (Kafka Streams without suppression). Nothing more is
	// emitted at close. Merged-away sessions are announced with
	// [Emit.Removed] so the caller can write tombstones.
	EmitUpdate
)

// String returns "final" or "update".
func (m EmitMode) String() string {
	switch m {
	case EmitFinal:
		return "final"
	case EmitUpdate:
		return "update"
	}
	return fmt.Sprintf("emit(%d)", int(m))
}

// Store holds the accumulators of (key, window) pairs. The caller implements
// it: in Eddy it is backed by the state store and calls the guest's
// aggregate functions (eddy_agg_init/add/merge/result).
//
// The window an accumulator belongs to is its state unit: the window itself
// for tumbling, session and global windows; a pane for hopping and sliding
// windows (see the package documentation), whose results merge the panes
// that make up the window.
//
// The Windower calls Store only from the goroutine that calls its methods,
// and an error from Store aborts that call and is returned wrapped. Window
// and key slices passed to Store are valid only during the call.
type Store interface {
	// Add folds rec into the accumulator of (key, w), creating it from the
	// aggregate's initial value when absent. w is a state unit: a window or
	// a pane.
	Add(key []byte, w Window, rec *abi.Record) error
	// Merge replaces the accumulators of srcs (which exist) by one
	// accumulator under dst (which does not exist yet) that is their merge,
	// in srcs order. It is called when a session grows or two sessions are
	// bridged; in Eddy it calls eddy_agg_merge.
	Merge(key []byte, dst Window, srcs []Window) error
	// Result returns the aggregate result of window w for key. srcs lists
	// the accumulators that make up w, oldest first: just w for tumbling,
	// session and global windows; for hopping and sliding windows the
	// key's panes inside w, whose merge in that order is the result. The
	// store must not modify them.
	Result(key []byte, w Window, srcs []Window) ([]byte, error)
	// Delete removes the accumulator of (key, w), a state unit. The
	// Windower calls it when state expires (see [Config.Retention]), so a
	// store's key count returns to zero once the watermark passes.
	Delete(key []byte, w Window) error
}

// ClosingStore is a Store that learns when a window of a key closes in
// EmitUpdate mode, which emits nothing then: no more update of (key, w)
// follows. w is the window as its updates named it.
type ClosingStore interface {
	Store
	Closed(key []byte, w Window) error
}

// Config configures a [Windower]. The zero values of the optional fields
// are usable defaults.
type Config struct {
	// Window is the window spec. Required.
	Window Spec
	// Time extracts event time. Default: RecordTime.
	Time Extractor
	// Disorder is the allowed out-of-orderness: a partition's watermark is
	// the largest event time seen on it minus Disorder. Default 0 (records
	// are expected in timestamp order per partition).
	Disorder time.Duration
	// Grace (allowed lateness) keeps a window open for Grace after the
	// watermark passes its end. Default 0.
	Grace time.Duration
	// IdleTimeout excludes a partition that received no record for this
	// long (processing time) from the task watermark. Default 0: never.
	IdleTimeout time.Duration
	// ProgressOnly keeps records from moving the watermark: only Progress
	// does. For inputs whose records are changes to earlier results (the
	// updates of an upstream aggregate), whose times say nothing of what
	// is still to come.
	ProgressOnly bool
	// Retention keeps window state for this long (in event time) after the
	// window closes, for interactive queries, before [Store.Delete]. Default
	// 0: state is deleted as soon as the window closes and has fired.
	Retention time.Duration
	// Emit is the emit mode. Default EmitFinal.
	Emit EmitMode
	// Clock is the processing-time clock for idle partitions. Default
	// time.Now.
	Clock func() time.Time
}

// Validate reports whether c is usable. Errors wrap [ErrInvalidConfig].
func (c Config) Validate() error {
	if err := c.Window.Validate(); err != nil {
		return err
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"disorder", c.Disorder}, {"grace", c.Grace}, {"idle timeout", c.IdleTimeout}, {"retention", c.Retention}} {
		if d.v < 0 || d.v%time.Millisecond != 0 {
			return fmt.Errorf("%s %v must be a non-negative whole number of milliseconds: %w", d.name, d.v, ErrInvalidConfig)
		}
	}
	if c.Emit != EmitFinal && c.Emit != EmitUpdate {
		return fmt.Errorf("emit mode %d: %w", int(c.Emit), ErrInvalidConfig)
	}
	return nil
}

// Emit is a window result to send downstream.
type Emit struct {
	Key    []byte
	Window Window
	// Value is the result from Store.Result; nil when Removed.
	Value []byte
	// Final is set for results of EmitFinal and for count-triggered global
	// windows: the window will not be emitted again.
	Final bool
	// Removed announces, in EmitUpdate mode, that a session window was
	// merged into another and no longer exists.
	Removed bool
}

// Late is a record that arrived after a window it belongs to had closed.
// The caller sends it to the late-data side output (with the window and the
// watermark as headers); the Windower never drops records silently.
type Late struct {
	Partition int32
	// Record is the pointer passed to Process, not a copy: the caller must
	// not reuse the record before handling the Late entry.
	Record *abi.Record
	// Time is the record's event time.
	Time int64
	// Window is the window the record would have gone to. A hopping record
	// can be late for some of its windows and accepted by others; it is
	// reported once per closed window.
	Window Window
	// Watermark is the task watermark when the record arrived.
	Watermark int64
}

// Output collects what one or more calls produced. Reuse it across calls
// with Reset to avoid allocation.
type Output struct {
	Emits []Emit
	Late  []Late
}

// Reset empties o, keeping its capacity.
func (o *Output) Reset() {
	clear(o.Emits)
	clear(o.Late)
	o.Emits, o.Late = o.Emits[:0], o.Late[:0]
}

// Stats are a Windower's counters.
type Stats struct {
	Records uint64 // records processed, late or not
	Late    uint64 // Late entries produced
	Fired   uint64 // final results emitted
	Updates uint64 // update results emitted
	// Expired counts (key, window) states that expired, and Open those
	// currently held. For hopping windows, whose state is in panes shared
	// by several windows, they count windows, not panes: a pane is deleted
	// with the last window that needs it.
	Expired uint64
	Open    int
}

// Windower is the event-time logic of one task: it tracks watermarks,
// assigns records to windows, decides lateness, merges sessions and says
// which windows fire and which state expires. Accumulators live in the
// caller's [Store].
//
// Only the window index (which keys have state in which windows) is held in
// memory. A Windower is not safe for concurrent use: a task owns it.
type Windower struct {
	cfg      Config
	time     Extractor
	store    Store
	al       aligner
	wms      *Watermarks
	grace    int64
	ret      int64
	gap      int64
	size     int64
	floor    int64 // watermark forced by Flush
	advanced int64 // watermark up to which closes and expiries were handled

	// paned is set for hopping windows made of several panes (size is not
	// the advance): state lives in panes of gcd(size, advance).
	paned bool

	windows  map[Window]*winState
	closing  winHeap
	expiring winHeap
	sessions map[string][]Window  // open sessions per key, by start
	panes    map[string][]int64   // sliding: pane starts per key, ascending
	hop      map[string]*paneList // paned hopping: each key's panes
	counts   map[string]int       // global: records since the last firing
	dirty    map[string]struct{}  // global: keys whose count changed since TakeCounts

	buf   []Window
	srcs  []Window
	keys  []string
	kbuf  []byte // a key passed to the store
	stats Stats
}

type winState struct {
	keys   map[string]struct{}
	closed bool
}

// paneList is the panes in which a key has state, by start.
type paneList struct {
	key string // the key, shared with the windows' key sets
	ps  []Window
}

// New returns a Windower for cfg whose accumulators live in store. It fails
// with an error wrapping ErrInvalidConfig when cfg does not validate.
func New(cfg Config, store Store) (*Windower, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Time == nil {
		cfg.Time = RecordTime{}
	}
	if cfg.Clock == nil {
		cfg.Clock = time.Now
	}
	w := &Windower{
		cfg:      cfg,
		time:     cfg.Time,
		store:    store,
		wms:      NewWatermarks(cfg.Disorder, cfg.IdleTimeout, cfg.Clock),
		grace:    cfg.Grace.Milliseconds(),
		ret:      cfg.Retention.Milliseconds(),
		gap:      cfg.Window.Gap.Milliseconds(),
		size:     cfg.Window.Size.Milliseconds(),
		floor:    NoWatermark,
		advanced: NoWatermark,
		windows:  make(map[Window]*winState),
		sessions: make(map[string][]Window),
		panes:    make(map[string][]int64),
		hop:      make(map[string]*paneList),
		counts:   make(map[string]int),
		dirty:    make(map[string]struct{}),
	}
	if k := cfg.Window.Kind; k == KindTumbling || k == KindHopping {
		w.al = newAligner(cfg.Window)
		w.paned = w.al.pane != w.al.size
	}
	return w, nil
}

// Assign declares the task's partitions so that each holds the watermark
// back from the start, even before its first record (until it turns idle).
// Partitions not declared are added on their first record.
func (w *Windower) Assign(partitions ...int32) { w.wms.Assign(partitions...) }

// Revoke forgets a partition's watermark.
func (w *Windower) Revoke(partition int32) { w.wms.Revoke(partition) }

// Watermark returns the task watermark (NoWatermark before any record).
func (w *Windower) Watermark() int64 { return max(w.wms.Current(), w.floor) }

// Stats returns the counters.
func (w *Windower) Stats() Stats {
	s := w.stats
	s.Open = 0
	for _, st := range w.windows {
		s.Open += len(st.keys)
	}
	s.Open += len(w.counts)
	return s
}

// Restore rebuilds the Windower after a restart, before any Process call.
// The caller passes the task watermark it checkpointed (with the state, in
// the same transaction as the output) and then the (key, window) of every
// accumulator in its store, in any order: windows already closed at that
// watermark are marked fired (they only await expiry), the others are
// scheduled to fire. Sliding accumulators are panes [t, t+1), hopping ones
// panes of gcd(size, advance) (see the package documentation); an entry
// that is not one of the windows or panes of the configuration (a hopping
// entry of an older layout, state of other windows, a corrupt entry) is an
// error wrapping ErrInvalidConfig, and nothing of it is kept; so is a
// window that no event time in [MinTime, MaxTime] can make (that error
// also wraps ErrTimeRange). A global count window needs its count too:
// give it with RestoreCount (see TakeCounts).
//
// The per-partition watermarks start over from the restored task watermark,
// which never goes backwards; call Assign with the task's partitions too, or
// the first partition to deliver a record would advance the watermark alone.
func (w *Windower) Restore(watermark int64, key []byte, win Window) error {
	w.floor = max(w.floor, watermark)
	w.advanced = max(w.advanced, watermark)
	if w.cfg.Window.Kind == KindGlobal {
		if win != GlobalWindow {
			return fmt.Errorf("windowing: restore %v into global windows: %w", win, ErrInvalidConfig)
		}
		return nil // its accumulator is all the state besides the count
	}
	if !validWindow(win) {
		return fmt.Errorf("windowing: restore %v: outside the event-time range: %w: %w", win, ErrTimeRange, ErrInvalidConfig)
	}
	// The entry comes from a store that a changelog topic restores: check
	// that it is a window (or pane) these windows can have before keeping
	// anything of it (validWindow checked that it ends after it starts).
	if w.paned {
		return w.restorePane(key, win)
	}
	switch k := w.cfg.Window.Kind; {
	case k == KindTumbling && !w.al.isPane(win):
		return fmt.Errorf("windowing: restore %v: not one of %v windows: %w", win, w.cfg.Window.Size, ErrInvalidConfig)
	case k == KindSliding && win.End != win.Start+1:
		return fmt.Errorf("windowing: restore %v: not a pane of sliding windows: %w", win, ErrInvalidConfig)
	}
	w.restoreWindow(key, win)
	switch w.cfg.Window.Kind {
	case KindSession:
		if st := w.windows[win]; !st.closed {
			ss := w.sessions[string(key)]
			i, _ := slices.BinarySearchFunc(ss, win, func(a, b Window) int { return cmp.Compare(a.Start, b.Start) })
			w.sessions[string(key)] = slices.Insert(ss, i, win)
		}
	case KindSliding:
		ps := w.panes[string(key)]
		if i, ok := slices.BinarySearch(ps, win.Start); !ok {
			w.panes[string(key)] = slices.Insert(ps, i, win.Start)
		}
	}
	return nil
}

// restorePane restores key's pane of hopping windows: the key has state in
// each window that contains the pane and has not expired yet.
func (w *Windower) restorePane(key []byte, pane Window) error {
	if !w.al.isPane(pane) {
		return fmt.Errorf("windowing: restore %v: not a pane of %v windows every %v (state written before hopping windows were kept in panes, or for other windows): %w",
			pane, w.cfg.Window.Size, w.cfg.Window.Advance, ErrInvalidConfig)
	}
	w.buf = w.al.assignUnit(w.buf[:0], w.al.unit(pane.Start))
	for i, win := range w.buf {
		// Windows that expired before the checkpoint are gone, but the
		// last one, whose expiry deletes the pane, is kept in any case.
		if w.expireAt(win) > w.floor || i == len(w.buf)-1 {
			w.restoreWindow(key, win)
		}
	}
	w.addPane(key, pane)
	return nil
}

// restoreWindow records that key has state in win, scheduling its close or,
// when it is closed at the restored watermark, its expiry.
func (w *Windower) restoreWindow(key []byte, win Window) {
	st := w.windows[win]
	if st == nil {
		st = &winState{keys: make(map[string]struct{}, 1)}
		w.windows[win] = st
		if w.closeAt(win) <= w.floor {
			st.closed = true
			heap.Push(&w.expiring, timer{at: w.expireAt(win), w: win})
		} else {
			heap.Push(&w.closing, timer{at: w.closeAt(win), w: win})
		}
	}
	st.keys[string(key)] = struct{}{}
}

// Process handles one record of a partition, in arrival order: it extracts
// the event time, adds the record to its open windows (through the Store),
// reports it in out.Late for windows already closed, advances the
// watermark and appends the resulting emissions to out.
//
// An extractor error, or an event time outside [MinTime, MaxTime] (an
// error wrapping ErrTimeRange), wraps ErrNoTimestamp: the record was not
// used and the caller dead-letters it. A Store error is returned wrapped
// and leaves the Windower in an undefined state (the task restarts from
// its checkpoint).
func (w *Windower) Process(partition int32, rec *abi.Record, out *Output) error {
	t, err := w.time.Timestamp(rec)
	if err == nil {
		err = CheckTime(t)
	}
	if err != nil {
		return fmt.Errorf("windowing: partition %d: %w", partition, err)
	}
	w.stats.Records++
	wm := w.Watermark()
	switch w.cfg.Window.Kind {
	case KindTumbling, KindHopping:
		err = w.addAligned(partition, rec, t, wm, out)
	case KindSession:
		err = w.addSession(partition, rec, t, wm, out)
	case KindSliding:
		err = w.addSliding(partition, rec, t, wm, out)
	case KindGlobal:
		err = w.addGlobal(rec, out)
	}
	if err != nil {
		return err
	}
	if w.cfg.ProgressOnly {
		return nil
	}
	if nwm := max(w.wms.Observe(partition, t), w.floor); nwm > w.advanced {
		return w.advanceTo(nwm, out)
	}
	return nil
}

// Progress records that partition has reached event time t without a
// record: its watermark becomes t minus the disorder, as if a record at t
// had arrived. An upstream task that redistributes records sends its
// progress this way, so that a downstream partition it sends no record to
// does not hold the watermark back. Emissions are appended to out. A t
// outside [MinTime, MaxTime] is refused with an error wrapping
// ErrTimeRange, and changes nothing: a forged or corrupt progress marker
// must not move the watermark to the end of time.
func (w *Windower) Progress(partition int32, t int64, out *Output) error {
	if err := CheckTime(t); err != nil {
		return fmt.Errorf("windowing: progress of partition %d: %w", partition, err)
	}
	if nwm := max(w.wms.Observe(partition, t), w.floor); nwm > w.advanced {
		return w.advanceTo(nwm, out)
	}
	return nil
}

// InputTimes returns the largest event time seen on each partition (see
// Watermarks.Times); give them back after a restart with Progress.
func (w *Windower) InputTimes() map[int32]int64 { return w.wms.Times() }

// ProcessBatch calls Process for each record of a batch from one partition.
func (w *Windower) ProcessBatch(partition int32, recs []abi.Record, out *Output) error {
	for i := range recs {
		if err := w.Process(partition, &recs[i], out); err != nil {
			return err
		}
	}
	return nil
}

// Advance reads the processing-time clock to update idle partitions, and
// fires and expires what the watermark now allows. Call it after each batch
// and periodically when no records arrive (for example every commit
// interval), or idle partitions are never detected.
func (w *Windower) Advance(out *Output) error {
	if wm := max(w.wms.Tick(), w.floor); wm > w.advanced {
		return w.advanceTo(wm, out)
	}
	return nil
}

// Flush treats the input as ended: the watermark jumps to the end of time,
// every time window fires (in EmitFinal mode) and all their state expires.
// Global windows short of their count are not fired and keep their state.
// Records processed after Flush are late. Use it for bounded inputs such
// as `eddy test`.
func (w *Windower) Flush(out *Output) error {
	w.floor = math.MaxInt64
	return w.advanceTo(math.MaxInt64, out)
}

// late reports rec as late for window win.
func (w *Windower) late(p int32, rec *abi.Record, t int64, win Window, wm int64, out *Output) {
	w.stats.Late++
	out.Late = append(out.Late, Late{Partition: p, Record: rec, Time: t, Window: win, Watermark: wm})
}

func (w *Windower) addAligned(p int32, rec *abi.Record, t, wm int64, out *Output) error {
	if w.paned {
		return w.addHopping(p, rec, t, wm, out)
	}
	w.buf = w.al.assign(w.buf[:0], t)
	for _, win := range w.buf {
		if wm >= win.End+w.grace {
			w.late(p, rec, t, win, wm, out)
			continue
		}
		if err := w.store.Add(rec.Key, win, rec); err != nil {
			return fmt.Errorf("windowing: add to %v: %w", win, err)
		}
		w.track(rec.Key, win)
		if w.cfg.Emit == EmitUpdate {
			if err := w.emit(rec.Key, win, nil, false, out); err != nil {
				return err
			}
		}
	}
	return nil
}

// addHopping folds rec once, into its pane, for the windows containing it
// that are still open; it is late for the others. Windows close in start
// order, so the closed ones come first.
func (w *Windower) addHopping(p int32, rec *abi.Record, t, wm int64, out *Output) error {
	u := w.al.unit(t)
	w.buf = w.al.assignUnit(w.buf[:0], u)
	open := 0
	for open < len(w.buf) && wm >= w.buf[open].End+w.grace {
		w.late(p, rec, t, w.buf[open], wm, out)
		open++
	}
	if open == len(w.buf) {
		return nil
	}
	pane := w.al.paneAt(u)
	if err := w.store.Add(rec.Key, pane, rec); err != nil {
		return fmt.Errorf("windowing: add to pane %v: %w", pane, err)
	}
	pl, added := w.addPane(rec.Key, pane)
	if added {
		// The key's state in a pane it had already is tracked in every
		// window containing the pane that was open then, so in those
		// open now.
		for _, win := range w.buf[open:] {
			w.trackKey(pl.key, win)
		}
	}
	if w.cfg.Emit == EmitUpdate {
		for _, win := range w.buf[open:] {
			if err := w.emit(rec.Key, win, w.hopSources(pl, win), false, out); err != nil {
				return err
			}
		}
	}
	return nil
}

// addPane records that key has state in pane and returns the key's panes,
// and whether the pane is new to the key.
func (w *Windower) addPane(key []byte, pane Window) (*paneList, bool) {
	pl := w.hop[string(key)]
	if pl == nil {
		pl = &paneList{key: string(key)}
		w.hop[pl.key] = pl
	}
	if n := len(pl.ps); n > 0 && pl.ps[n-1] == pane {
		return pl, false // the common case: the key's latest pane
	}
	i, found := slices.BinarySearchFunc(pl.ps, pane.Start, cmpStart)
	if !found {
		pl.ps = slices.Insert(pl.ps, i, pane)
	}
	return pl, !found
}

func cmpStart(w Window, start int64) int { return cmp.Compare(w.Start, start) }

// hopSources returns the panes of pl inside hopping window win.
func (w *Windower) hopSources(pl *paneList, win Window) []Window {
	w.srcs = w.srcs[:0]
	if pl == nil {
		return w.srcs
	}
	i, _ := slices.BinarySearchFunc(pl.ps, win.Start, cmpStart)
	for ; i < len(pl.ps) && pl.ps[i].Start < win.End; i++ {
		w.srcs = append(w.srcs, pl.ps[i])
	}
	return w.srcs
}

// addSession merges rec into the key's sessions. A record is late when it is
// more than grace behind the watermark (t+grace < wm); that rule guarantees
// an accepted record never reaches a closed session, since a session closes
// at last+1+gap+grace.
func (w *Windower) addSession(p int32, rec *abi.Record, t, wm int64, out *Output) error {
	if wm > t+w.grace {
		w.late(p, rec, t, Window{t, t + 1}, wm, out)
		return nil
	}
	ss := w.sessions[string(rec.Key)]
	// Sessions are more than gap apart, so those within gap of t are
	// contiguous in start order.
	i := 0
	for i < len(ss) && ss[i].End-1+w.gap < t {
		i++
	}
	j := i
	nw := Window{t, t + 1}
	for j < len(ss) && ss[j].Start-w.gap <= t {
		nw.Start, nw.End = min(nw.Start, ss[j].Start), max(nw.End, ss[j].End)
		j++
	}
	switch {
	case j == i: // a new session
		ss = slices.Insert(ss, i, nw)
		w.track(rec.Key, nw)
	case j == i+1 && ss[i] == nw: // inside a session
	default: // extends one session or bridges several
		w.srcs = append(w.srcs[:0], ss[i:j]...)
		if err := w.store.Merge(rec.Key, nw, w.srcs); err != nil {
			return fmt.Errorf("windowing: merge sessions %v into %v: %w", w.srcs, nw, err)
		}
		for _, old := range w.srcs {
			w.untrack(rec.Key, old)
			if w.cfg.Emit == EmitUpdate {
				out.Emits = append(out.Emits, Emit{Key: clone(rec.Key), Window: old, Removed: true})
			}
		}
		ss = slices.Replace(ss, i, j, nw)
		w.track(rec.Key, nw)
	}
	w.sessions[string(rec.Key)] = ss
	if err := w.store.Add(rec.Key, nw, rec); err != nil {
		return fmt.Errorf("windowing: add to %v: %w", nw, err)
	}
	if w.cfg.Emit == EmitUpdate {
		return w.emit(rec.Key, nw, nil, false, out)
	}
	return nil
}

// addSliding adds rec to its pane [t, t+1). A record is late when its own
// window [t-size, t+1) has closed; an accepted record therefore never
// belongs to a closed window.
func (w *Windower) addSliding(p int32, rec *abi.Record, t, wm int64, out *Output) error {
	if wm >= t+1+w.grace {
		w.late(p, rec, t, Window{t - w.size, t + 1}, wm, out)
		return nil
	}
	pane := Window{t, t + 1}
	if err := w.store.Add(rec.Key, pane, rec); err != nil {
		return fmt.Errorf("windowing: add to pane %v: %w", pane, err)
	}
	ps := w.panes[string(rec.Key)]
	i, found := slices.BinarySearch(ps, t)
	if !found {
		ps = slices.Insert(ps, i, t)
		w.panes[string(rec.Key)] = ps
		w.track(rec.Key, pane)
	}
	if w.cfg.Emit == EmitUpdate {
		for _, s := range ps[i:] {
			if s > t+w.size {
				break
			}
			if err := w.emit(rec.Key, Window{s - w.size, s + 1}, w.paneSources(ps, s), false, out); err != nil {
				return err
			}
		}
	}
	return nil
}

// paneSources returns the panes of window [s-size, s+1) from ps.
func (w *Windower) paneSources(ps []int64, s int64) []Window {
	w.srcs = w.srcs[:0]
	i, _ := slices.BinarySearch(ps, s-w.size)
	for ; i < len(ps) && ps[i] <= s; i++ {
		w.srcs = append(w.srcs, Window{ps[i], ps[i] + 1})
	}
	return w.srcs
}

// TakeCounts calls fn with every key of global count windows whose count
// (records since its last firing) changed since the last call, and its
// count now: 0 when it fired. A caller that keeps state across restarts
// saves them with the accumulators and gives them back with RestoreCount.
func (w *Windower) TakeCounts(fn func(key []byte, n int) error) error {
	for k := range w.dirty {
		if err := fn([]byte(k), w.counts[k]); err != nil {
			return err
		}
		delete(w.dirty, k)
	}
	return nil
}

// RestoreCount gives a global count window's key its count after a restart
// (see TakeCounts).
func (w *Windower) RestoreCount(key []byte, n int) {
	if n > 0 {
		w.counts[string(key)] = n
	}
}

func (w *Windower) addGlobal(rec *abi.Record, out *Output) error {
	if err := w.store.Add(rec.Key, GlobalWindow, rec); err != nil {
		return fmt.Errorf("windowing: add to global window: %w", err)
	}
	w.dirty[string(rec.Key)] = struct{}{}
	n := w.counts[string(rec.Key)] + 1
	if n < w.cfg.Window.Count {
		w.counts[string(rec.Key)] = n
		if w.cfg.Emit == EmitUpdate {
			return w.emit(rec.Key, GlobalWindow, nil, false, out)
		}
		return nil
	}
	delete(w.counts, string(rec.Key))
	if err := w.emit(rec.Key, GlobalWindow, nil, true, out); err != nil {
		return err
	}
	if err := w.store.Delete(rec.Key, GlobalWindow); err != nil {
		return fmt.Errorf("windowing: delete global window: %w", err)
	}
	w.stats.Expired++
	return nil
}

// emit appends the result of (key, win) to out; srcs nil means {win}.
func (w *Windower) emit(key []byte, win Window, srcs []Window, final bool, out *Output) error {
	if srcs == nil {
		w.srcs = append(w.srcs[:0], win)
		srcs = w.srcs
	}
	v, err := w.store.Result(key, win, srcs)
	if err != nil {
		return fmt.Errorf("windowing: result of %v: %w", win, err)
	}
	if final {
		w.stats.Fired++
	} else {
		w.stats.Updates++
	}
	out.Emits = append(out.Emits, Emit{Key: clone(key), Window: win, Value: v, Final: final})
	return nil
}

// track records that key has state in win, scheduling its close.
func (w *Windower) track(key []byte, win Window) {
	st := w.windows[win]
	if st == nil {
		st = w.window(win)
	}
	if _, ok := st.keys[string(key)]; !ok {
		st.keys[string(key)] = struct{}{}
	}
}

// trackKey is track with the key as a string.
func (w *Windower) trackKey(key string, win Window) {
	w.window(win).keys[key] = struct{}{}
}

// window returns the state of win, creating it and scheduling its close.
func (w *Windower) window(win Window) *winState {
	st := w.windows[win]
	if st == nil {
		st = &winState{keys: make(map[string]struct{}, 1)}
		w.windows[win] = st
		heap.Push(&w.closing, timer{at: w.closeAt(win), w: win})
	}
	return st
}

// untrack forgets key's state in win (merged into another session).
func (w *Windower) untrack(key []byte, win Window) {
	if st := w.windows[win]; st != nil {
		delete(st.keys, string(key))
		if len(st.keys) == 0 {
			delete(w.windows, win)
		}
	}
}

// closeAt is the watermark at which state window win closes. For sliding
// windows win is the pane [t, t+1) and the window [t-size, t+1) closes.
func (w *Windower) closeAt(win Window) int64 {
	if w.cfg.Window.Kind == KindSession {
		return win.End + w.gap + w.grace
	}
	return win.End + w.grace
}

// expireAt is the watermark at which the state of win can be deleted: after
// it closed and the retention passed. A sliding pane serves every window
// up to size after it.
func (w *Windower) expireAt(win Window) int64 {
	at := w.closeAt(win) + w.ret
	if w.cfg.Window.Kind == KindSliding {
		at += w.size
	}
	return at
}

// advanceTo fires the windows whose close time is <= wm, in order of close
// time, window and key, then deletes the state that expired.
func (w *Windower) advanceTo(wm int64, out *Output) error {
	w.advanced = wm
	for len(w.closing) > 0 && w.closing[0].at <= wm {
		tm := heap.Pop(&w.closing).(timer)
		st := w.windows[tm.w]
		if st == nil || st.closed {
			continue // a session merged away, or a duplicate timer
		}
		st.closed = true
		w.keys = w.sortedKeys(st)
		for _, k := range w.keys {
			w.kbuf = append(w.kbuf[:0], k...)
			kb := w.kbuf
			switch w.cfg.Window.Kind {
			case KindSession:
				ss := w.sessions[k]
				if i := slices.Index(ss, tm.w); i >= 0 {
					ss = slices.Delete(ss, i, i+1)
				}
				if len(ss) == 0 {
					delete(w.sessions, k)
				} else {
					w.sessions[k] = ss
				}
			}
			if w.cfg.Emit != EmitFinal {
				if cs, ok := w.store.(ClosingStore); ok && w.cfg.Window.Kind != KindSliding {
					if err := cs.Closed(kb, tm.w); err != nil {
						return err
					}
				}
				continue
			}
			var err error
			switch {
			case w.cfg.Window.Kind == KindSliding:
				s := tm.w.Start
				err = w.emit(kb, Window{s - w.size, s + 1}, w.paneSources(w.panes[k], s), true, out)
			case w.paned:
				err = w.emit(kb, tm.w, w.hopSources(w.hop[k], tm.w), true, out)
			default:
				err = w.emit(kb, tm.w, nil, true, out)
			}
			if err != nil {
				return err
			}
		}
		heap.Push(&w.expiring, timer{at: w.expireAt(tm.w), w: tm.w})
	}
	for len(w.expiring) > 0 && w.expiring[0].at <= wm {
		tm := heap.Pop(&w.expiring).(timer)
		st := w.windows[tm.w]
		if st == nil {
			continue
		}
		delete(w.windows, tm.w)
		if w.paned {
			if err := w.expireHopping(tm.w, st); err != nil {
				return err
			}
			continue
		}
		for _, k := range w.sortedKeys(st) {
			w.kbuf = append(w.kbuf[:0], k...)
			if err := w.store.Delete(w.kbuf, tm.w); err != nil {
				return fmt.Errorf("windowing: delete %v: %w", tm.w, err)
			}
			w.stats.Expired++
			if w.cfg.Window.Kind == KindSliding {
				ps := w.panes[k]
				if i, ok := slices.BinarySearch(ps, tm.w.Start); ok {
					ps = slices.Delete(ps, i, i+1)
				}
				if len(ps) == 0 {
					delete(w.panes, k)
				} else {
					w.panes[k] = ps
				}
			}
		}
	}
	return nil
}

// expireHopping forgets the state of hopping window win and deletes the
// panes that no later window needs: those that start before the next
// window. Every key with state in such a pane has state in win.
func (w *Windower) expireHopping(win Window, st *winState) error {
	next := w.al.next(win)
	for _, k := range w.sortedKeys(st) {
		w.stats.Expired++
		pl := w.hop[k]
		if pl == nil {
			continue
		}
		n := 0
		for n < len(pl.ps) && pl.ps[n].Start < next {
			n++
		}
		if n == 0 {
			continue
		}
		w.kbuf = append(w.kbuf[:0], k...)
		for _, pane := range pl.ps[:n] {
			if err := w.store.Delete(w.kbuf, pane); err != nil {
				return fmt.Errorf("windowing: delete pane %v: %w", pane, err)
			}
		}
		if pl.ps = slices.Delete(pl.ps, 0, n); len(pl.ps) == 0 {
			delete(w.hop, k)
		}
	}
	return nil
}

func (w *Windower) sortedKeys(st *winState) []string {
	keys := w.keys[:0]
	for k := range st.keys {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	w.keys = keys
	return keys
}

func clone(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append([]byte(nil), b...)
}

// timer is a window due at watermark at.
type timer struct {
	at int64
	w  Window
}

// winHeap orders timers by time, then window start and end, so that
// windows fire in the same order whatever the arrival order.
type winHeap []timer

func (h winHeap) Len() int { return len(h) }
func (h winHeap) Less(i, j int) bool {
	a, b := h[i], h[j]
	if a.at != b.at {
		return a.at < b.at
	}
	if a.w.Start != b.w.Start {
		return a.w.Start < b.w.Start
	}
	return a.w.End < b.w.End
}
func (h winHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *winHeap) Push(x any)   { *h = append(*h, x.(timer)) }
func (h *winHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
