package host

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/runtime"
	"github.com/eddy-streams/eddy/state"
	"github.com/eddy-streams/eddy/windowing"
)

// aggFuncs are the calls of an aggregate function, with the contracts of
// *runtime.Instance's methods of the same names. The aggregator takes this
// interface rather than an instance so that a benchmark can run a native Go
// aggregate over the same state path.
type aggFuncs interface {
	AggInit(ctx context.Context) ([]byte, error)
	AggAdd(ctx context.Context, groups []abi.Group, out []abi.Added, failed []*runtime.Error) ([]abi.Added, []*runtime.Error, error)
	AggMerge(ctx context.Context, keys, a, b [][]byte, out []runtime.Result) ([]runtime.Result, error)
	AggResult(ctx context.Context, keys, accs [][]byte, out []runtime.Result) ([]runtime.Result, error)
}

// Keys of a window store: accumulators under 'a', the watermark under 'w',
// the count of a global count window's key under 'n' (countKey).
// An accumulator's key holds the record key and the [start, end) of its
// state unit: the window, or for hopping and sliding windows the pane (see
// the windowing package). Hopping state written before panes (one entry per
// window) is not readable as panes: the windower refuses to restore it.
var watermarkKey = []byte("w")

// appendAccKey appends the store key of (key, w) to b.
func appendAccKey(b, key []byte, w windowing.Window) []byte {
	b = append(b, 'a')
	b = binary.AppendUvarint(b, uint64(len(key)))
	b = append(b, key...)
	b = binary.BigEndian.AppendUint64(b, uint64(w.Start))
	return binary.BigEndian.AppendUint64(b, uint64(w.End))
}

func accKey(key []byte, w windowing.Window) []byte { return appendAccKey(nil, key, w) }

// errCorruptEntry is wrapped by the errors of decoding a store entry that
// the node did not write (see corrupt.go).
var errCorruptEntry = errors.New("corrupt entry")

// parseAccKey parses the output of appendAccKey. The key is a view into b.
// Errors wrap errCorruptEntry.
func parseAccKey(b []byte) (key []byte, w windowing.Window, err error) {
	if len(b) < 1 || b[0] != 'a' {
		return nil, w, fmt.Errorf("accumulator key: no 'a' prefix: %w", errCorruptEntry)
	}
	n, k := canonicalUvarint(b[1:])
	// Compare n with what is left before converting it: a length near the
	// uint64 limit wraps around as an int.
	if k <= 0 || len(b)-1-k < 16 || n != uint64(len(b)-1-k-16) {
		return nil, w, fmt.Errorf("accumulator key of %d bytes: bad record key length: %w", len(b), errCorruptEntry)
	}
	key = b[1+k : 1+k+int(n)]
	rest := b[1+k+int(n):]
	w.Start, w.End = int64(binary.BigEndian.Uint64(rest)), int64(binary.BigEndian.Uint64(rest[8:]))
	return key, w, nil
}

// aggregator is an aggregate step of one task, without Kafka: it runs
// batches of records through the step's windower, whose accumulators live
// in the task's state store and are folded by the step's aggregate
// function, and says what the batch produced (results, late records, failed
// records). task.aggregate turns that into records to produce.
//
// Not safe for concurrent use: a task owns it.
type aggregator struct {
	w     *windowing.Windower
	store *windowStore
	part  int32
	// inputOf, when set, names the windows' input of record j of a batch
	// (an upstream partition, after a repartition); else it is part.
	inputOf func(j int) int32
	// progress, when set, reports the batch's upstream progress to the
	// windower before it advances (after a repartition).
	progress func(w *windowing.Windower, out *windowing.Output) error
	// inputTimes saves each input's event time beside the watermark (a
	// windower with several inputs).
	inputTimes bool
	name       string // the function's, for errors
	// discarded counts the stored windows deleted at restore because no
	// valid event time makes them (windowing.ErrTimeRange).
	discarded int
}

// aggOutput is what one batch of an aggregator produced. Reuse it across
// batches: process resets it.
type aggOutput struct {
	windowing.Output       // the batch's results and late records
	LateFrom         []int // LateFrom[i] is the index in the batch of Late[i]'s record
	// Failed are the records to dead-letter, in batch order, each once:
	// those without an event time and those the aggregate function refused
	// or failed on. Err.Index is the record's index in the batch.
	Failed []*runtime.Error
}

func (o *aggOutput) reset() {
	o.Output.Reset()
	o.LateFrom, o.Failed = o.LateFrom[:0], o.Failed[:0]
}

// newAggregator returns the aggregator of a task's partition part whose
// state store st has been restored: the saved watermark and every stored
// window are given back to the windower. An entry of the store that does
// not decode, or is not one of these windows', is given to skip and left
// out (see corrupt.go); with skip nil it is an error.
func newAggregator(cfg windowing.Config, st *state.Store, fn aggFuncs, name string, part int32, skip func(key []byte, err error)) (*aggregator, error) {
	return newAggregatorBudget(cfg, st, fn, name, part, accCacheBudget, skip)
}

// newAggregatorBudget is newAggregator with the given cache budget (tests).
func newAggregatorBudget(cfg windowing.Config, st *state.Store, fn aggFuncs, name string, part int32, cacheBudget int,
	skip func(key []byte, err error)) (*aggregator, error) {
	ws := newWindowStore(st, fn, cacheBudget)
	ws.name = name
	w, err := windowing.New(cfg, ws)
	if err != nil {
		return nil, err
	}
	// bad skips a corrupt entry, or fails without skip.
	bad := func(k []byte, err error) error {
		if skip == nil {
			return fmt.Errorf("window store: %w", err)
		}
		skip(k, err)
		return nil
	}
	wm, err := loadWatermark(st, bad)
	if err != nil {
		return nil, err
	}
	var outOfRange [][]byte // keys of windows that no valid event time makes
	err = st.Scan([]byte{'a'}, func(k, v []byte) error {
		key, win, err := parseAccKey(k)
		if err != nil {
			return bad(k, err)
		}
		// The windower checks that win is one of its windows before it
		// keeps anything of it.
		if err := w.Restore(wm, bytes.Clone(key), win); errors.Is(err, windowing.ErrTimeRange) {
			// Written before event times were range-checked (a sliding
			// or session window at the end of int64), or damaged: no
			// record can reach it, and keeping it would fail the task at
			// every start.
			outOfRange = append(outOfRange, bytes.Clone(k))
			return nil
		} else if err != nil {
			return bad(k, fmt.Errorf("%w: %w", errCorruptEntry, err))
		}
		ws.cache(k, bytes.Clone(v))
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, k := range outOfRange {
		// The deletion reaches the changelog with the task's first commit.
		if err := st.Delete(k); err != nil {
			return nil, err
		}
	}
	err = st.Scan([]byte{'n'}, func(k, v []byte) error {
		n, err := parseCount(v)
		if err != nil {
			return bad(k, err)
		}
		w.RestoreCount(k[1:], n)
		return nil
	})
	if err != nil {
		return nil, err
	}
	w.Assign(part)
	return &aggregator{w: w, store: ws, part: part, name: name, discarded: len(outOfRange)}, nil
}

// loadWatermark reads the watermark saved in st (windowing.NoWatermark
// when there is none, or when it is corrupt: bad is told).
func loadWatermark(st *state.Store, bad func(k []byte, err error) error) (int64, error) {
	v, ok, err := st.Get(watermarkKey)
	switch {
	case err != nil:
		return 0, err
	case !ok:
		return windowing.NoWatermark, nil
	case len(v) != 8:
		return windowing.NoWatermark, bad(watermarkKey, fmt.Errorf("watermark of %d bytes, want 8: %w", len(v), errCorruptEntry))
	}
	return int64(binary.BigEndian.Uint64(v)), nil
}

// canonicalUvarint is binary.Uvarint refusing (k = 0) the longer encodings
// of a value that binary.AppendUvarint never writes (0x80 0x00 for 0): a
// store key must have one encoding, or two entries could hold one window.
func canonicalUvarint(b []byte) (v uint64, k int) {
	v, k = binary.Uvarint(b)
	if k > 1 && b[k-1] == 0 {
		return 0, 0
	}
	return v, k
}

// parseCount parses the value of a global count window's count (countKey):
// a uvarint, within int32 (a window fires at its count, an int of the
// pipeline file; one above the count now fires at the key's next record).
func parseCount(v []byte) (int, error) {
	n, used := canonicalUvarint(v)
	if used <= 0 || used != len(v) {
		return 0, fmt.Errorf("count of %d bytes: not a uvarint: %w", len(v), errCorruptEntry)
	}
	if n > math.MaxInt32 {
		return 0, fmt.Errorf("count %d: out of range: %w", n, errCorruptEntry)
	}
	return int(n), nil
}

// countKey is the store key of a global count window's count for key.
func countKey(key []byte) []byte { return append([]byte{'n'}, key...) }

// process runs a batch of records through the windower, then advances it
// (firing what the watermark allows), and puts what came out in out. The
// records must stay unchanged until process returns. An error is not about
// a record (a cancelled context, a failing store): the task stops.
func (a *aggregator) process(ctx context.Context, recs []abi.Record, out *aggOutput) error {
	out.reset()
	ws := a.store
	ws.begin(ctx, len(recs))
	defer func() { ws.deferring = false }()
	for j := range recs {
		ws.cur = j
		err := a.w.Process(a.input(j), &recs[j], &out.Output)
		for len(out.LateFrom) < len(out.Late) {
			out.LateFrom = append(out.LateFrom, j) // late entries come from the record being processed
		}
		if err == nil {
			continue
		}
		var te *runtime.Error
		switch {
		case errors.As(err, &te):
			// A result, merge or init call the record's arrival caused
			// failed: the record is charged with it, as before batching.
			ws.fail(j, te)
		case errors.Is(err, windowing.ErrNoTimestamp):
			ws.fail(j, &runtime.Error{Function: a.name, Kind: abi.KindTimestamp, Cause: runtime.CauseGuest,
				Code: abi.CodeBadInput, Index: j, Group: -1, Reason: err.Error()})
		default:
			return err
		}
	}
	ws.cur = -1
	if err := ws.flush(); err != nil {
		return err
	}
	if a.progress != nil {
		if err := a.progress(a.w, &out.Output); err != nil {
			return err
		}
	}
	if err := a.w.Advance(&out.Output); err != nil {
		return err
	}
	var err error
	if out.Emits, err = ws.results(out.Emits); err != nil {
		return err
	}
	out.Failed = ws.failures(out.Failed)
	return nil
}

// setFunc makes fn the aggregate function from the next batch on (a new
// version of the step's function). Call it between batches.
func (a *aggregator) setFunc(fn aggFuncs) { a.store.fn = fn }

// watermark returns the task watermark.
func (a *aggregator) watermark() int64 { return a.w.Watermark() }

// saveWatermark records the watermark in the store, so that it reaches the
// changelog with the transaction.
func (a *aggregator) saveWatermark() error {
	if err := a.store.st.Put(watermarkKey, binary.BigEndian.AppendUint64(nil, uint64(a.w.Watermark()))); err != nil {
		return err
	}
	err := a.w.TakeCounts(func(key []byte, n int) error {
		if n == 0 {
			return a.store.st.Delete(countKey(key))
		}
		return a.store.st.Put(countKey(key), binary.AppendUvarint(nil, uint64(n)))
	})
	if err != nil {
		return err
	}
	if a.inputTimes {
		return saveInputTimes(a.store.st, a.w.InputTimes())
	}
	return nil
}

// windowStore keeps a task's window accumulators in its state store and
// folds records into them with the step's aggregate function.
//
// # Why adds are buffered
//
// Folding one record at a time costs a store read, a guest call and a store
// write per record. Instead, Add only appends the record to its (key,
// window) group — (key, pane) for hopping and sliding windows, whose
// records are folded once, into their pane; flush folds every pending
// group in one eddy_agg_add call, reading and writing each accumulator
// once. The Windower only sees accumulators through Merge, Result and
// Delete, and each of them flushes the groups it touches first, so it
// never sees a stale one; the aggregator flushes the rest at the end of a
// batch, before Advance. A session that grows by one window (the common
// merge) takes its pending group along without a flush.
//
// Results are deferred the same way during a batch: Result takes the
// accumulators that make up the window as they are (stored accumulators
// are never modified in place, so keeping them is a snapshot) and returns
// nil; at the end of the batch the aggregator merges each window's panes,
// in order, with one eddy_agg_merge call per round (round r merges every
// window's r-th pane into what the rounds before made), turns every result
// of the batch into a value with one eddy_agg_result call, and puts the
// values into the batch's emits, which come in the order of the Result
// calls. Outside a batch (a caller that drives the Windower itself),
// Result answers at once.
//
// Failures stay per record: a record the guest refuses, or on which the
// call fails (isolated by AggAdd's bisection), is reported with its index
// in the batch, and a window whose every record failed still gets the
// initial accumulator, since the Windower believes it exists. A result
// that fails, or whose panes fail to merge, is charged to the record whose
// arrival asked for it (a failure while advancing stops the task), as when
// results were computed on the spot.
type windowStore struct {
	ctx context.Context
	st  *state.Store
	fn  aggFuncs
	// limit, when not 0, is the largest changelog record the store may
	// make (the changelog topic's recordLimit, named by changelog): an
	// accumulator that would make a larger one is refused (see put).
	limit     int
	changelog string
	name      string // the function's, for errors

	// members: the store folds each window's members instead of adding
	// to its accumulator (an aggregate that reads an emit: update
	// aggregate's results, retract.go); retracts: the store's step emits
	// retractions, and closed lists the keys of the previous results of
	// the windows closed in the batch, deleted once its results are out.
	members, retracts bool
	closed            [][]byte
	// memberIndex holds the members of the groups met, by memberPrefix
	// and member key, as of the store's generation membersGen (retract.go).
	memberIndex map[string]map[string]member
	membersGen  uint64

	cur int // index in the batch of the record being processed; -1 after them
	// deferring is set while the aggregator processes a batch: results
	// are computed at its end.
	deferring bool
	// lost, when set, is told of a window whose result failed with no
	// record to charge the failure to; without it that failure is the
	// batch's error (see results).
	lost func(key []byte, w windowing.Window, err error)

	pending []pendingGroup // pending[:npend] are in use; the rest keep their buffers
	npend   int
	index   map[string]int // store key of a pending group → its index in pending

	failed []*runtime.Error // this batch's failed records, in failure order
	bad    []bool           // bad[j]: record j of the batch has failed

	asked []askedResult // the batch's Result calls, in order

	// accs caches accumulators by store key, up to budget bytes (see
	// accCacheBudget); while complete, it holds every accumulator there
	// is, so a miss means none without a read of the store. gen is the
	// store's generation the cache reflects (an aborted transaction drops
	// it).
	accs     map[string][]byte
	accBytes int
	budget   int
	complete bool
	gen      uint64

	// Scratch for flush.
	groups []abi.Group
	added  []abi.Added
	errs   []*runtime.Error
	res    []runtime.Result

	// Scratch for Result and results.
	parts   [][]byte         // the accumulators of the batch's Result calls (see askedResult)
	folded  [][]byte         // folded[i]: asked[i]'s accumulator, merged so far
	mfailed []*runtime.Error // mfailed[i]: why asked[i]'s merge failed
	rkeys   [][]byte         // the arguments of a call
	raccs   [][]byte
	rsrcs   [][]byte
	rasked  []int  // the asked result of each item of a merge call
	kbuf    []byte // a store key
	keyBuf  []byte // the keys of the batch's Result calls
}

// askedResult is a Result call whose value is computed at the end of the
// batch.
type askedResult struct {
	key []byte
	win windowing.Window
	// lo and hi delimit the window's accumulators in the store's parts, as
	// they were when Result was called: their merge, in order, is the
	// window's (one for a window that is its own state).
	lo, hi int
	at     int // the record being processed then, or -1
}

// accCacheBudget bounds the accumulators a task's window store keeps in
// memory, in bytes (keys, values and an estimate of the map's overhead).
//
// # Why a cache
//
// The Windower holds its index of windows in memory anyway; holding their
// accumulators too saves a state-store read for each group folded and
// each result (a Badger lookup once the transaction that wrote the
// accumulator has committed, and for every new window), which measured
// 10-25% of an aggregate step's time with a fast function. Past the budget
// the cache stops growing and misses read the store.
const accCacheBudget = 16 << 20

const accEntryOverhead = 64 // map entry and slice headers, roughly

// pendingGroup is the records added to one (key, window) since the last
// flush, in arrival order.
type pendingGroup struct {
	sk   []byte // the store key: accKey(key, win)
	key  []byte // the record key, a slice of sk
	recs []abi.Record
	from []int // from[i] is the index in the batch of recs[i]
}

func newWindowStore(st *state.Store, fn aggFuncs, budget int) *windowStore {
	return &windowStore{ctx: context.Background(), st: st, fn: fn, index: map[string]int{},
		accs: map[string][]byte{}, budget: budget, complete: true, gen: st.Generation()}
}

// begin starts a batch of n records.
func (ws *windowStore) begin(ctx context.Context, n int) {
	if g := ws.st.Generation(); g != ws.gen {
		// The store changed under the cache (an aborted transaction).
		clear(ws.accs)
		ws.gen, ws.accBytes, ws.complete = g, 0, false
	}
	ws.ctx, ws.cur, ws.deferring = ctx, 0, true
	ws.closed = ws.closed[:0]
	clear(ws.failed)
	clear(ws.asked)
	clear(ws.parts)
	ws.failed, ws.asked, ws.parts, ws.keyBuf = ws.failed[:0], ws.asked[:0], ws.parts[:0], ws.keyBuf[:0]
	if cap(ws.bad) < n {
		ws.bad = make([]bool, n)
	}
	ws.bad = ws.bad[:n]
	clear(ws.bad)
}

// fail reports record j of the batch as failed with e, unless it already
// failed: a record goes to the dead-letter topic once, with its first
// failure (a record can fail when folded and again in the results its
// arrival asked for).
func (ws *windowStore) fail(j int, e *runtime.Error) {
	if ws.bad[j] {
		return
	}
	ws.bad[j] = true
	e.Index, e.Group = j, -1
	ws.failed = append(ws.failed, e)
}

// failures appends the batch's failed records to dst in batch order.
func (ws *windowStore) failures(dst []*runtime.Error) []*runtime.Error {
	n := len(dst)
	dst = append(dst, ws.failed...)
	slices.SortFunc(dst[n:], func(a, b *runtime.Error) int { return a.Index - b.Index })
	return dst
}

// Add implements windowing.Store.Add: it appends rec to the pending group
// of (key, w). rec must stay valid until the next flush (the aggregator
// flushes before its batch ends).
func (ws *windowStore) Add(key []byte, w windowing.Window, rec *abi.Record) error {
	if ws.npend == len(ws.pending) {
		ws.pending = append(ws.pending, pendingGroup{})
	}
	g := &ws.pending[ws.npend]
	g.sk = appendAccKey(g.sk[:0], key, w)
	if i, ok := ws.index[string(g.sk)]; ok {
		g = &ws.pending[i]
	} else {
		ws.index[string(g.sk)] = ws.npend
		ws.npend++
		g.key = keyOf(g.sk, len(key))
	}
	g.recs = append(g.recs, *rec)
	g.from = append(g.from, ws.cur)
	return nil
}

// keyOf returns the record key inside store key sk, whose key is n bytes.
func keyOf(sk []byte, n int) []byte {
	k := 2 // 'a' and a one-byte length
	for v := uint64(n); v >= 0x80; v >>= 7 {
		k++
	}
	return sk[k : k+n : k+n]
}

// pendingAt returns the index of the pending group of (key, w), or -1.
func (ws *windowStore) pendingAt(key []byte, w windowing.Window, buf []byte) (int, []byte) {
	buf = appendAccKey(buf[:0], key, w)
	if i, ok := ws.index[string(buf)]; ok {
		return i, buf
	}
	return -1, buf
}

// flush folds every pending group into its accumulator with one
// eddy_agg_add call and writes the results to the store.
func (ws *windowStore) flush() error {
	if ws.npend == 0 {
		return nil
	}
	if ws.members {
		return ws.flushMembers() // retract.go
	}
	pend := ws.pending[:ws.npend]
	ws.groups = ws.groups[:0]
	for i := range pend {
		g := &pend[i]
		acc, _, err := ws.get(g.sk)
		if err != nil {
			return err
		}
		ws.groups = append(ws.groups, abi.Group{Key: g.key, Acc: acc, Records: g.recs})
	}
	if err := ws.addGroups(); err != nil {
		return err
	}
	for _, e := range ws.errs {
		j := -1
		if e.Group >= 0 && e.Group < len(pend) && e.Index >= 0 && e.Index < len(pend[e.Group].from) {
			j = pend[e.Group].from[e.Index]
		}
		if j < 0 {
			return fmt.Errorf("aggregate add: failure outside the call's records: %w", e)
		}
		ws.fail(j, e)
	}
	for i := range pend {
		g := &pend[i]
		acc := ws.added[i].Acc
		if len(ws.errs) > 0 && ws.allFailed(g) {
			// No record of the group folded: the window keeps what it
			// had (ABI.md 5.4), whatever the guest answered, and a new
			// window starts from the initial accumulator below.
			if ws.groups[i].Acc != nil {
				continue
			}
			acc = nil
		}
		if acc == nil && ws.groups[i].Acc == nil {
			// No record of a new window could be folded: the window still
			// exists for the windower, with the initial accumulator.
			var te *runtime.Error
			var err error
			if acc, err = ws.fn.AggInit(ws.ctx); errors.As(err, &te) {
				// Its records are dead-lettered already; the Windower
				// meets the failure again at the window's result.
				continue
			} else if err != nil {
				return err
			}
		}
		if acc == nil {
			continue
		}
		err := ws.put(g.sk, acc)
		var te *runtime.Error
		if !errors.As(err, &te) {
			if err != nil {
				return err
			}
			continue
		}
		// The group's records would make an accumulator larger than the
		// store or the changelog takes (put): they fail, and the window
		// keeps the accumulator it had (the initial one for a new window,
		// which the Windower believes exists).
		for _, j := range g.from {
			e := *te
			ws.fail(j, &e)
		}
		if ws.groups[i].Acc != nil {
			continue
		}
		if acc, err = ws.fn.AggInit(ws.ctx); errors.As(err, &te) {
			continue
		} else if err != nil {
			return err
		}
		if err := ws.put(g.sk, acc); err != nil {
			return err
		}
	}
	ws.reset()
	return nil
}

// addGroups folds ws.groups with one eddy_agg_add call into ws.added; the
// records that failed are in ws.errs.
func (ws *windowStore) addGroups() error {
	clear(ws.errs)
	var err error
	ws.added, ws.errs, err = ws.fn.AggAdd(ws.ctx, ws.groups, ws.added[:0], ws.errs[:0])
	return err
}

// allFailed reports whether every record of g has failed.
func (ws *windowStore) allFailed(g *pendingGroup) bool {
	for _, j := range g.from {
		if !ws.bad[j] {
			return false
		}
	}
	return true
}

// reset empties the pending groups, keeping their buffers.
func (ws *windowStore) reset() {
	for i := range ws.pending[:ws.npend] {
		g := &ws.pending[i]
		clear(g.recs) // do not hold on to the batch's records
		g.recs, g.from = g.recs[:0], g.from[:0]
	}
	clear(ws.groups)
	clear(ws.index)
	ws.npend = 0
}

// flushFor flushes if one of (key, w) for w in wins has pending records.
func (ws *windowStore) flushFor(key []byte, wins []windowing.Window) error {
	if ws.npend == 0 {
		return nil
	}
	var buf [64]byte
	for _, w := range wins {
		if i, _ := ws.pendingAt(key, w, buf[:0]); i >= 0 {
			return ws.flush()
		}
	}
	return nil
}

// merged folds the accumulators of wins into one, without storing it.
func (ws *windowStore) merged(key []byte, wins []windowing.Window) ([]byte, error) {
	var acc []byte
	for _, w := range wins {
		v, ok, err := ws.get(accKey(key, w))
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		if acc == nil {
			acc = v
			continue
		}
		ws.res, err = ws.fn.AggMerge(ws.ctx, [][]byte{key}, [][]byte{acc}, [][]byte{v}, ws.res[:0])
		if err != nil {
			return nil, err
		}
		if ws.res[0].Err != nil {
			return nil, ws.res[0].Err
		}
		acc = bytes.Clone(ws.res[0].Bytes)
	}
	if acc == nil {
		init, err := ws.fn.AggInit(ws.ctx)
		if err != nil {
			return nil, err
		}
		acc = bytes.Clone(init)
	}
	return acc, nil
}

// Merge implements windowing.Store.Merge.
func (ws *windowStore) Merge(key []byte, dst windowing.Window, srcs []windowing.Window) error {
	if len(srcs) == 1 {
		return ws.move(key, srcs[0], dst)
	}
	if err := ws.flushFor(key, srcs); err != nil {
		return err
	}
	acc, err := ws.merged(key, srcs)
	if err != nil {
		return err
	}
	dk := accKey(key, dst)
	if e := ws.refuse(dk, acc, "merged accumulator"); e != nil {
		// Charged to the record that bridged the sessions, which stay as
		// they were.
		return e
	}
	for _, w := range srcs {
		if err := ws.del(accKey(key, w)); err != nil {
			return err
		}
	}
	return ws.put(dk, acc)
}

// move renames window src of key to dst (a session that grew): its stored
// accumulator and its pending records.
func (ws *windowStore) move(key []byte, src, dst windowing.Window) error {
	sk, dk := accKey(key, src), accKey(key, dst)
	pend := false
	if i, ok := ws.index[string(sk)]; ok {
		pend = true
		delete(ws.index, string(sk))
		g := &ws.pending[i]
		g.sk = append(g.sk[:0], dk...)
		g.key = keyOf(g.sk, len(key))
		ws.index[string(dk)] = i
	}
	acc, ok, err := ws.get(sk)
	if err != nil {
		return err
	}
	switch {
	case ok:
		if err := ws.del(sk); err != nil {
			return err
		}
	case pend:
		return nil // the pending group creates dst's accumulator when flushed
	default:
		// Neither stored nor pending (not expected): the merge of nothing
		// is the initial accumulator.
		if acc, err = ws.fn.AggInit(ws.ctx); err != nil {
			return err
		}
	}
	return ws.put(dk, acc)
}

// Result implements windowing.Store.Result. During a batch it returns nil:
// the value is computed at the end of the batch (see results).
func (ws *windowStore) Result(key []byte, w windowing.Window, srcs []windowing.Window) ([]byte, error) {
	if err := ws.flushFor(key, srcs); err != nil {
		return nil, err
	}
	if !ws.deferring {
		acc, err := ws.merged(key, srcs)
		if err != nil {
			return nil, err
		}
		ws.res, err = ws.fn.AggResult(ws.ctx, [][]byte{key}, [][]byte{acc}, ws.res[:0])
		if err != nil {
			return nil, err
		}
		if ws.res[0].Err != nil {
			return nil, ws.res[0].Err
		}
		return ws.res[0].Bytes, nil // the runtime's own copy of the answer
	}
	lo := len(ws.parts)
	for _, src := range srcs {
		ws.kbuf = appendAccKey(ws.kbuf[:0], key, src)
		v, ok, err := ws.get(ws.kbuf)
		if err != nil {
			return nil, err
		}
		if ok {
			ws.parts = append(ws.parts, v) // never modified: a snapshot
		}
	}
	if len(ws.parts) == lo {
		// None stored (not expected): the merge of nothing is the initial
		// accumulator.
		init, err := ws.fn.AggInit(ws.ctx)
		if err != nil {
			return nil, err
		}
		ws.parts = append(ws.parts, bytes.Clone(init))
	}
	// The keys of a batch's calls share a buffer: a key keeps its slice
	// when the buffer grows, and the buffer is reused once they are done.
	k := len(ws.keyBuf)
	ws.keyBuf = append(ws.keyBuf, key...)
	ws.asked = append(ws.asked, askedResult{key: ws.keyBuf[k:len(ws.keyBuf):len(ws.keyBuf)], win: w, lo: lo, hi: len(ws.parts), at: ws.cur})
	return nil, nil
}

// mergeAsked merges the accumulators of each of the batch's Result calls,
// in order, into ws.folded, with one eddy_agg_merge call per round: round r
// merges the r-th accumulator of every call that has one into what the
// rounds before made of those before it (a left fold, as merged does). A
// call whose merge fails gets its failure in ws.mfailed.
func (ws *windowStore) mergeAsked() error {
	n := len(ws.asked)
	ws.folded = slices.Grow(ws.folded[:0], n)[:n]
	ws.mfailed = slices.Grow(ws.mfailed[:0], n)[:n]
	rounds := 0
	for i, q := range ws.asked {
		ws.folded[i], ws.mfailed[i] = ws.parts[q.lo], nil
		rounds = max(rounds, q.hi-q.lo-1)
	}
	for r := 1; r <= rounds; r++ {
		ws.rkeys, ws.raccs, ws.rsrcs, ws.rasked = ws.rkeys[:0], ws.raccs[:0], ws.rsrcs[:0], ws.rasked[:0]
		for i, q := range ws.asked {
			if q.hi-q.lo > r && ws.mfailed[i] == nil {
				ws.rkeys = append(ws.rkeys, q.key)
				ws.raccs = append(ws.raccs, ws.folded[i])
				ws.rsrcs = append(ws.rsrcs, ws.parts[q.lo+r])
				ws.rasked = append(ws.rasked, i)
			}
		}
		if len(ws.rasked) == 0 {
			break
		}
		var err error
		if ws.res, err = ws.fn.AggMerge(ws.ctx, ws.rkeys, ws.raccs, ws.rsrcs, ws.res[:0]); err != nil {
			return err
		}
		for j, i := range ws.rasked {
			if e := ws.res[j].Err; e != nil {
				ws.mfailed[i] = e
				continue
			}
			ws.folded[i] = ws.res[j].Bytes // the runtime's own copy
		}
	}
	return nil
}

// results computes the values of the batch's Result calls — the merges of
// their accumulators (see mergeAsked), then one eddy_agg_result call — and
// puts them into emits, the batch's emits: those not Removed match the
// calls one for one, in order. An emit whose merge or result failed is
// dropped, and the failure charged to the record being processed when it
// was asked for.
func (ws *windowStore) results(emits []windowing.Emit) ([]windowing.Emit, error) {
	asked := ws.asked
	defer func() {
		clear(ws.asked)
		clear(ws.parts)
		clear(ws.folded)
		clear(ws.rkeys)
		clear(ws.raccs)
		clear(ws.rsrcs)
		ws.asked, ws.parts, ws.keyBuf = ws.asked[:0], ws.parts[:0], ws.keyBuf[:0]
	}()
	if len(asked) == 0 {
		return emits, nil
	}
	if err := ws.mergeAsked(); err != nil {
		return nil, err
	}
	ws.rkeys, ws.raccs = ws.rkeys[:0], ws.raccs[:0]
	for i, r := range asked {
		if ws.mfailed[i] == nil {
			ws.rkeys, ws.raccs = append(ws.rkeys, r.key), append(ws.raccs, ws.folded[i])
		}
	}
	var err error
	if ws.res, err = ws.fn.AggResult(ws.ctx, ws.rkeys, ws.raccs, ws.res[:0]); err != nil {
		return nil, err
	}
	kept, n, m := emits[:0], 0, 0 // n: the next asked result; m: the next value
	for _, e := range emits {
		if e.Removed {
			kept = append(kept, e)
			continue
		}
		if n == len(asked) || asked[n].win != e.Window || !bytes.Equal(asked[n].key, e.Key) {
			return nil, fmt.Errorf("window store: emit %d (%s %v) does not match result %d", len(kept), brief(e.Key), e.Window, n)
		}
		failure, at := ws.mfailed[n], asked[n].at
		n++
		if failure == nil {
			r := ws.res[m]
			m++
			failure, e.Value = r.Err, r.Bytes // the runtime's own copy of the answer
		}
		if failure != nil {
			if at < 0 {
				// No record asked for this result (the watermark moved
				// between records: a progress marker, an idle input). A
				// function that fails on an accumulator it wrote is
				// unexpected; on one read back from a changelog that
				// anyone can write to, it must not stop the task at every
				// start: the window's result is dropped and reported.
				if ws.lost == nil {
					return nil, failure
				}
				ws.lost(e.Key, e.Window, failure)
				continue
			}
			ws.fail(at, failure)
			continue
		}
		kept = append(kept, e)
	}
	if n != len(asked) {
		return nil, fmt.Errorf("window store: %d results asked for, %d emitted", len(asked), n)
	}
	clear(emits[len(kept):])
	return kept, nil
}

// Delete implements windowing.Store.Delete.
func (ws *windowStore) Delete(key []byte, w windowing.Window) error {
	if err := ws.flushFor(key, (&[1]windowing.Window{w})[:]); err != nil {
		return err
	}
	k := accKey(key, w)
	if ws.members {
		if err := ws.deleteMembers(k); err != nil {
			return err
		}
	}
	return ws.del(k)
}

// Closed implements windowing.ClosingStore: a window of a step that emits
// retractions has its previous result deleted once the batch's results
// are out (task.withRetractions).
func (ws *windowStore) Closed(key []byte, w windowing.Window) error {
	if ws.retracts {
		ws.closed = append(ws.closed, prevKey(key, w))
	}
	return nil
}

// get returns the accumulator under store key k. The caller must not
// modify it.
func (ws *windowStore) get(k []byte) ([]byte, bool, error) {
	if v, ok := ws.accs[string(k)]; ok || ws.complete {
		return v, ok, nil
	}
	v, ok, err := ws.st.Get(k)
	if ok {
		ws.cache(k, v)
	}
	return v, ok, err
}

// put stores acc under k, in the state store and the cache. A window the
// complete cache does not hold is new to the store too: it is created, so
// that if it goes again before the transaction commits (a session that
// grew, a window that opened and expired), nothing of it is written.
//
// An accumulator over state.MaxValue, or whose changelog record would be
// larger than ws.limit, is not stored: put returns a *runtime.Error (cause
// state_limit or output_too_large), a failure of the records that made it. Stored, it would fail the changelog
// produce at the next commit, which no record can be charged with, and
// stop the node after every restart.
func (ws *windowStore) put(k, acc []byte) error {
	if e := ws.refuse(k, acc, "accumulator"); e != nil {
		return e
	}
	_, had := ws.accs[string(k)]
	create := ws.complete && !had
	acc = bytes.Clone(acc)
	ws.cache(k, acc)
	if create {
		return ws.st.Create(k, acc)
	}
	return ws.st.Put(k, acc)
}

// refuse returns the failure of storing acc under k (what names it in the
// reason), nil when the store and the changelog take it.
func (ws *windowStore) refuse(k, acc []byte, what string) *runtime.Error {
	if len(acc) > state.MaxValue {
		return &runtime.Error{Function: ws.name, Kind: abi.KindAggregate, Cause: runtime.CauseStateLimit, Index: -1, Group: -1,
			Reason: fmt.Sprintf("%s of %d bytes is over the limit of %d bytes", what, len(acc), state.MaxValue)}
	}
	if ws.limit > 0 {
		r := kgo.Record{Key: k, Value: acc}
		if size := produceSize(&r); size > ws.limit {
			return &runtime.Error{Function: ws.name, Kind: abi.KindAggregate, Cause: causeTooLarge, Index: -1, Group: -1,
				Reason: fmt.Sprintf("%s of %d bytes (changelog record of %d) exceeds the %d-byte limit of topic %s",
					what, len(acc), size, ws.limit, ws.changelog)}
		}
	}
	return nil
}

// del deletes the accumulator under k.
func (ws *windowStore) del(k []byte) error {
	if v, ok := ws.accs[string(k)]; ok {
		ws.accBytes -= len(k) + len(v) + accEntryOverhead
		delete(ws.accs, string(k))
	}
	return ws.st.Delete(k)
}

// cache keeps v (which nothing modifies) as the accumulator under k, if it
// fits in the budget; if it does not, the cache is no longer complete.
func (ws *windowStore) cache(k, v []byte) {
	if old, ok := ws.accs[string(k)]; ok {
		ws.accBytes += len(v) - len(old)
		ws.accs[string(k)] = v
		return
	}
	size := len(k) + len(v) + accEntryOverhead
	if ws.accBytes+size > ws.budget {
		ws.complete = false
		return
	}
	ws.accBytes += size
	ws.accs[string(k)] = v
}
