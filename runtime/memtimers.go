package runtime

import (
	"cmp"
	"math"
	"slices"
	"strings"

	"github.com/eddy-streams/eddy/abi"
)

// MemoryTimers is a Timers service in memory, for tools that run a
// function without a node (eddy test, eddy conformance): the timers set,
// kept or dropped with their call as a node keeps them, and current times
// its user sets. It has no limits. Not safe for concurrent use.
type MemoryTimers struct {
	set  map[memoryTimer]bool
	call map[memoryTimer]bool // the call in progress: set (true) or deleted
	now  [2]int64
}

type memoryTimer struct {
	key    string
	domain abi.TimeDomain
	at     int64
}

// NewMemoryTimers returns a service without timers whose current times are
// unknown (math.MinInt64) until SetNow.
func NewMemoryTimers() *MemoryTimers {
	return &MemoryTimers{set: map[memoryTimer]bool{}, call: map[memoryTimer]bool{}, now: [2]int64{math.MinInt64, math.MinInt64}}
}

// Set implements Timers.
func (m *MemoryTimers) Set(key []byte, d abi.TimeDomain, at int64) error {
	m.call[memoryTimer{string(key), d, at}] = true
	return nil
}

// Delete implements Timers.
func (m *MemoryTimers) Delete(key []byte, d abi.TimeDomain, at int64) error {
	m.call[memoryTimer{string(key), d, at}] = false
	return nil
}

// Now implements Timers.
func (m *MemoryTimers) Now(d abi.TimeDomain) int64 { return m.now[d] }

// SetNow sets what Now answers for d.
func (m *MemoryTimers) SetNow(d abi.TimeDomain, now int64) { m.now[d] = now }

// Keep implements Timers.
func (m *MemoryTimers) Keep(keep bool) error {
	if keep {
		for t, on := range m.call {
			if on {
				m.set[t] = true
			} else {
				delete(m.set, t)
			}
		}
	}
	clear(m.call)
	return nil
}

// Len is how many timers are set.
func (m *MemoryTimers) Len() int { return len(m.set) }

// Timers returns the timers set, in order of time, then domain, then key.
func (m *MemoryTimers) Timers() []abi.Timer {
	ts := make([]abi.Timer, 0, len(m.set))
	for t := range m.set {
		ts = append(ts, abi.Timer{Key: []byte(t.key), Time: t.at, Domain: t.domain})
	}
	slices.SortFunc(ts, func(a, b abi.Timer) int {
		return cmp.Or(cmp.Compare(a.Time, b.Time), cmp.Compare(a.Domain, b.Domain), strings.Compare(string(a.Key), string(b.Key)))
	})
	return ts
}

// Due removes and returns the timers of domain d at or before upTo, in
// order of time, then key: they fire.
func (m *MemoryTimers) Due(d abi.TimeDomain, upTo int64) []abi.Timer {
	m.Keep(false) //nolint:errcheck // dropping cannot fail
	var due []abi.Timer
	for _, t := range m.Timers() {
		if t.Domain == d && t.Time <= upTo {
			due = append(due, t)
			delete(m.set, memoryTimer{string(t.Key), d, t.Time})
		}
	}
	return due
}
