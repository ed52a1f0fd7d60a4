package windowing

import (
	"math"
	"slices"
	"time"
)

// NoWatermark is the watermark before any record has been seen.
const NoWatermark int64 = math.MinInt64

// Watermarks tracks per-partition watermarks with bounded out-of-orderness
// and combines them into a task watermark.
//
// A partition's watermark is the largest event time seen on it minus the
// allowed disorder. The task watermark is the minimum over the partitions
// that are not idle, and never goes backwards. A partition is idle when no
// record arrived on it for longer than the idle timeout, measured on the
// processing-time clock at the calls to [Watermarks.Tick] (a partition's quiet
// time counts from the first Tick after its last record, so the clock is not
// read per record); an idle
// partition stops holding the task watermark back and becomes active again
// with its next record. If every partition is idle the watermark stays where
// it is.
//
// Idleness makes the watermark depend on processing time: with it, results
// can depend on how fast partitions are read. Without it (timeout 0) a
// partition that receives nothing holds the watermark forever.
//
// Watermarks is not safe for concurrent use.
type Watermarks struct {
	disorder int64
	idle     time.Duration
	clock    func() time.Time
	parts    []partition
	last     int // index of the last partition looked up
	current  int64
}

type partition struct {
	id      int32
	maxTime int64 // NoWatermark until a record is seen
	active  bool  // a record arrived since the last Tick
	seen    time.Time
	idle    bool
}

// NewWatermarks returns a tracker; idle 0 disables idleness, and clock is
// read only by Tick and Assign. A negative disorder counts as 0.
//
// Observe takes any int64 time: a watermark that would fall below
// NoWatermark is NoWatermark (the callers, Windower and join.WindowJoin,
// refuse times outside [MinTime, MaxTime] before they get here).
func NewWatermarks(disorder, idle time.Duration, clock func() time.Time) *Watermarks {
	return &Watermarks{disorder: max(0, disorder.Milliseconds()), idle: idle, clock: clock, current: NoWatermark}
}

// Assign declares partitions of the task so that they hold the watermark
// back before their first record (until they turn idle). Assigning a known
// partition does nothing.
func (w *Watermarks) Assign(ids ...int32) {
	now := w.clock()
	for _, id := range ids {
		if w.find(id) < 0 {
			w.parts = append(w.parts, partition{id: id, maxTime: NoWatermark, seen: now})
		}
	}
}

// Revoke forgets a partition; the task watermark does not go backwards.
func (w *Watermarks) Revoke(id int32) {
	if i := w.find(id); i >= 0 {
		w.parts = slices.Delete(w.parts, i, i+1)
		w.last = 0
		w.recompute()
	}
}

func (w *Watermarks) find(id int32) int {
	if w.last < len(w.parts) && w.parts[w.last].id == id {
		return w.last
	}
	for i := range w.parts {
		if w.parts[i].id == id {
			w.last = i
			return i
		}
	}
	return -1
}

// Observe records event time t on partition id (adding the partition if
// new) and returns the task watermark.
func (w *Watermarks) Observe(id int32, t int64) int64 {
	i := w.find(id)
	if i < 0 {
		w.parts = append(w.parts, partition{id: id, maxTime: NoWatermark, seen: w.clock()})
		i = len(w.parts) - 1
		w.last = i
	}
	p := &w.parts[i]
	p.active = true
	wasIdle := p.idle
	p.idle = false
	if t > p.maxTime {
		p.maxTime = t
		w.recompute()
	} else if wasIdle {
		w.recompute()
	}
	return w.current
}

// Tick reads the clock, marks partitions idle or active, and returns the
// task watermark.
func (w *Watermarks) Tick() int64 {
	if w.idle <= 0 {
		return w.current
	}
	now := w.clock()
	changed := false
	for i := range w.parts {
		p := &w.parts[i]
		if p.active {
			p.active = false
			p.seen = now
		}
		if idle := now.Sub(p.seen) > w.idle; idle != p.idle {
			p.idle = idle
			changed = true
		}
	}
	if changed {
		w.recompute()
	}
	return w.current
}

// With returns the task watermark that Observe(id, t) for every id and t
// of times would make, without changing anything (idleness aside: an
// idle partition that times names becomes active, as Observe makes it).
func (w *Watermarks) With(times map[int32]int64) int64 {
	m, any := int64(math.MaxInt64), false
	for i := range w.parts {
		p := &w.parts[i]
		t, named := times[p.id]
		if p.idle && !named {
			continue
		}
		q := *p
		if named {
			q.maxTime = max(q.maxTime, t)
		}
		m, any = min(m, w.partWM(&q)), true
	}
	for id, t := range times {
		if w.find(id) < 0 {
			q := partition{id: id, maxTime: t}
			m, any = min(m, w.partWM(&q)), true
		}
	}
	if !any || m < w.current {
		return w.current
	}
	return m
}

// Current returns the task watermark.
func (w *Watermarks) Current() int64 { return w.current }

// Times returns the largest event time seen on each partition that has
// seen one. A task that restarts gives them back with Observe, so that a
// partition that receives nothing more after the restart does not hold the
// watermark back where it was.
func (w *Watermarks) Times() map[int32]int64 {
	m := map[int32]int64{}
	for _, p := range w.parts {
		if p.maxTime != NoWatermark {
			m[p.id] = p.maxTime
		}
	}
	return m
}

// Partition returns the watermark of partition id and whether it is idle.
func (w *Watermarks) Partition(id int32) (wm int64, idle bool) {
	i := w.find(id)
	if i < 0 {
		return NoWatermark, false
	}
	return w.partWM(&w.parts[i]), w.parts[i].idle
}

func (w *Watermarks) partWM(p *partition) int64 {
	if p.maxTime < NoWatermark+w.disorder {
		return NoWatermark // saturate rather than wrap around to the future
	}
	return p.maxTime - w.disorder
}

func (w *Watermarks) recompute() {
	m, any := int64(math.MaxInt64), false
	for i := range w.parts {
		p := &w.parts[i]
		if p.idle {
			continue
		}
		any = true
		if wm := w.partWM(p); wm < m {
			m = wm
		}
	}
	if any && m > w.current {
		w.current = m
	}
}
