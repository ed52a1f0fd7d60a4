package runtime

import (
	"bytes"
	"errors"
	"fmt"
	"hash/maphash"
	"math"

	"github.com/eddy-streams/eddy/abi"
)

// callWrites holds the keyed-state writes of the guest call in progress. A
// call's writes take effect only if the call succeeds (ABI.md section 3):
// the state host calls write here and read here first (a call sees its own
// writes), and the instance applies them to its State once the call's answer
// has decoded (keep), or drops them when the call fails as a whole (a trap,
// a timeout, a negative return, malformed output): the bisection that then
// isolates the failing record re-runs the other records on the state as it
// was before the call, instead of counting them again.
type callWrites struct {
	// index maps a key's hash to the last entry of ents with that hash;
	// entries of one hash are chained by next. A map keyed by string
	// would allocate the key of each new entry; this one keeps its
	// buckets across calls and allocates nothing once grown.
	index map[uint64]int
	seed  maphash.Seed
	ents  []write // in order of first write, so they are applied in a stable order
	arena []byte  // copies of the keys and values of ents
}

type write struct {
	key, value []byte // views into arena
	deleted    bool
	next       int // the previous entry with the same hash, or -1
}

// arenaKeep bounds the arena a callWrites keeps between calls: a call that
// wrote more gives its buffer back to the garbage collector.
const arenaKeep = 1 << 20

func (w *callWrites) reset() {
	clear(w.index)
	clear(w.ents)
	w.ents = w.ents[:0]
	if cap(w.arena) > arenaKeep {
		w.arena = nil
	}
	w.arena = w.arena[:0]
}

// copyIn appends b to the arena and returns the copy. Earlier copies stay
// valid when the arena grows: they keep the old array.
func (w *callWrites) copyIn(b []byte) []byte {
	start := len(w.arena)
	w.arena = append(w.arena, b...)
	return w.arena[start:len(w.arena):len(w.arena)]
}

// find returns the entry of key and its hash, or -1.
func (w *callWrites) find(key []byte) (int, uint64) {
	if w.index == nil {
		w.index, w.seed = make(map[uint64]int), maphash.MakeSeed()
	}
	h := maphash.Bytes(w.seed, key)
	j, ok := w.index[h]
	for ok && j >= 0 {
		if bytes.Equal(w.ents[j].key, key) {
			return j, h
		}
		j = w.ents[j].next
	}
	return -1, h
}

func (w *callWrites) set(key, value []byte, deleted bool) {
	if !deleted {
		value = w.copyIn(value)
	}
	j, h := w.find(key)
	if j >= 0 {
		w.ents[j].value, w.ents[j].deleted = value, deleted
		return
	}
	prev, ok := w.index[h]
	if !ok {
		prev = -1
	}
	w.index[h] = len(w.ents)
	w.ents = append(w.ents, write{key: w.copyIn(key), value: value, deleted: deleted, next: prev})
}

// get returns the call's own write of key, if any (found false: read the
// store).
func (w *callWrites) get(key []byte) (value []byte, ok, found bool) {
	if len(w.ents) == 0 {
		return nil, false, false
	}
	j, _ := w.find(key)
	if j < 0 {
		return nil, false, false
	}
	e := &w.ents[j]
	return e.value, !e.deleted, true
}

// apply writes the entries to st and resets w.
func (w *callWrites) apply(st State) error {
	defer w.reset()
	for _, e := range w.ents {
		var err error
		if e.deleted {
			err = st.Delete(e.key)
		} else {
			err = st.Put(e.key, e.value)
		}
		if err != nil {
			return fmt.Errorf("state: %w", err)
		}
	}
	return nil
}

// beginState starts a call's state writes: anything a failed earlier call
// left is dropped.
func (i *Instance) beginState() {
	if len(i.writes.ents) > 0 {
		i.writes.reset()
	}
	if i.timers != nil {
		i.timers.Keep(false) //nolint:errcheck // dropping changes cannot fail
	}
}

// keepState applies the state writes of a call that succeeded. An error is
// the store's (not the guest's): it fails the batch.
func (i *Instance) keepState(kind abi.Kind) error {
	if i.timers != nil {
		if err := i.timers.Keep(true); err != nil {
			return fmt.Errorf("function %s (%s): timers: %w", i.fn.name, kind, err)
		}
	}
	if len(i.writes.ents) == 0 || i.state == nil {
		return nil
	}
	if err := i.writes.apply(i.state); err != nil {
		return fmt.Errorf("function %s (%s): %w", i.fn.name, kind, err)
	}
	return nil
}

// nativeState returns the State a native's ProcessState and OnTimer see:
// nil without a store.
func (i *Instance) nativeState() State {
	if i.state == nil {
		return nil
	}
	return callState{i}
}

// callState is the State a native's ProcessState sees: the instance's
// store behind the record's writes, which apply unless the record panics (a
// native's trap) or breaks the limits, as a guest call's do.
type callState struct{ i *Instance }

// Get implements State.Get.
func (c callState) Get(key []byte) ([]byte, bool, error) {
	if v, ok, found := c.i.writes.get(key); found {
		return v, ok, nil
	}
	if len(key) > abi.MaxStateKey {
		return nil, false, nil // never stored
	}
	return c.i.state.Get(key)
}

// Put implements State.Put.
func (c callState) Put(key, value []byte) error {
	if err := checkStatePut(key, value); err != nil {
		c.i.limitErr, c.i.limitCause = err, CauseStateLimit
		return err
	}
	c.i.writes.set(key, value, false)
	return nil
}

// Delete implements State.Delete.
func (c callState) Delete(key []byte) error {
	if len(key) <= abi.MaxStateKey {
		c.i.writes.set(key, nil, true)
	}
	return nil
}

// errNoTimers answers a native's timer call on an instance without a timer
// service (its step has no timers).
var errNoTimers = errors.New("the step has no timers (a map, filter or flat_map step with state: true has them)")

// SetTimer implements TimerState, as timer_set: a key over the limit or a
// timer past the service's limits fails the record (cause timer_limit).
func (c callState) SetTimer(key []byte, d abi.TimeDomain, at int64) error {
	i := c.i
	switch {
	case i.timers == nil:
		return errNoTimers
	case i.nat != nil && i.nat.OnTimer == nil:
		return errors.New("the native function has no OnTimer: its timers could not fire")
	case !d.Valid():
		return fmt.Errorf("unknown time domain %d (0 event, 1 processing)", int32(d))
	case i.limitErr != nil:
		return i.limitErr
	case len(key) > abi.MaxStateKey:
		i.limitErr, i.limitCause = fmt.Errorf("timer_set: key of %d bytes is over the limit of %d bytes", len(key), abi.MaxStateKey), CauseTimerLimit
		return i.limitErr
	}
	err := i.timers.Set(key, d, at)
	if errors.Is(err, ErrTimerLimit) {
		i.limitErr, i.limitCause = err, CauseTimerLimit
	}
	return err
}

// DeleteTimer implements TimerState.
func (c callState) DeleteTimer(key []byte, d abi.TimeDomain, at int64) error {
	switch {
	case c.i.timers == nil:
		return errNoTimers
	case !d.Valid():
		return fmt.Errorf("unknown time domain %d (0 event, 1 processing)", int32(d))
	case len(key) > abi.MaxStateKey: // never set: nothing to delete
		return nil
	}
	return c.i.timers.Delete(key, d, at)
}

// Now implements TimerState: math.MinInt64 without a timer service.
func (c callState) Now(d abi.TimeDomain) int64 {
	if c.i.timers == nil || !d.Valid() {
		return math.MinInt64
	}
	return c.i.timers.Now(d)
}

var _ TimerState = callState{}
