package runtime

import (
	"context"
	"sync"
	"time"

	"github.com/tetratelabs/wazero/api"
)

// watchdogTick is how often the watchdog looks at the calls in flight: a
// call is stopped at most this long after its deadline (plus the time to
// reach its next loop header or function entry).
const watchdogTick = 5 * time.Millisecond

// watchdog stops guest calls that run past their deadline or whose context
// is done, by setting the interrupt flag of their module and taking its fuel
// (Load adds both, and their checks, to every interruptible module: see
// runtime/internal/interrupt): the guest traps at its next loop iteration or
// function call.
//
// An Engine owns one watchdog. Its goroutine runs while a module of the
// engine's interruptible functions is instantiated, and wakes every
// watchdogTick to look at each one's call in flight; Engine.Close stops it
// and waits for it.
//
// # Why one goroutine rather than a timer per call
//
// Arming and disarming a call is then a clock read and two uncontended
// locks: 56 ns on the reference machine, no allocation. A timer per call
// (time.AfterFunc and Stop) costs 231 ns and 2 allocations, 567 ns and 5
// with context.AfterFunc to see a cancelled context too (BenchmarkArm). The
// price is precision: a deadline is noticed up to a tick late, which is
// little next to a call timeout of a second.
type watchdog struct {
	epoch time.Time // clock origin: now is time since epoch (monotonic)
	stop  chan struct{}
	mu    struct {
		sync.Mutex
		slots   map[*callSlot]struct{}
		running bool
		closed  bool
		done    chan struct{} // closed when the goroutine last started returns
	}
}

func newWatchdog() *watchdog {
	w := &watchdog{epoch: time.Now(), stop: make(chan struct{})}
	w.mu.slots = make(map[*callSlot]struct{})
	return w
}

// now returns the watchdog's clock in nanoseconds, always above 0.
func (w *watchdog) now() int64 { return int64(time.Since(w.epoch)) + 1 }

// add watches s, starting the goroutine if it is not running. After close,
// slots are no longer watched.
func (w *watchdog) add(s *callSlot) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.mu.slots[s] = struct{}{}
	if !w.mu.running && !w.mu.closed {
		w.mu.running = true
		w.mu.done = make(chan struct{})
		go w.run(w.mu.done)
	}
}

// remove stops watching s.
func (w *watchdog) remove(s *callSlot) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.mu.slots, s)
}

// removeFunction stops watching the slots of f's instances (Function.Close:
// instances it closes with its runtime are not closed one by one).
func (w *watchdog) removeFunction(f *Function) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for s := range w.mu.slots {
		if s.fn == f {
			delete(w.mu.slots, s)
		}
	}
}

func (w *watchdog) run(done chan struct{}) {
	defer close(done)
	t := time.NewTicker(watchdogTick)
	defer t.Stop()
	for {
		select {
		case <-w.stop:
			return
		case <-t.C:
		}
		if !w.scan() {
			return
		}
	}
}

// scan checks every slot. With none left it marks the goroutine stopped and
// returns false: the next add starts another.
func (w *watchdog) scan() bool {
	now := w.now()
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.mu.slots) == 0 {
		w.mu.running = false
		return false
	}
	for s := range w.mu.slots {
		s.check(now)
	}
	return true
}

// close stops the goroutine and waits for it.
func (w *watchdog) close() {
	w.mu.Lock()
	if w.mu.closed {
		w.mu.Unlock()
		return
	}
	w.mu.closed = true
	w.mu.running = false
	done := w.mu.done
	w.mu.Unlock()
	close(w.stop)
	if done != nil {
		<-done
	}
}

// callSlot is an instantiated module's entry in the watchdog: its interrupt
// flag and fuel, and the deadline and context of its call in flight. The
// instance arms it before each call into the guest and disarms it after.
type callSlot struct {
	fn   *Function
	flag api.MutableGlobal
	fuel api.MutableGlobal
	mu   struct {
		sync.Mutex
		deadline int64 // on the watchdog's clock; 0 while no call is in flight
		ctx      context.Context
		fired    bool // the flag was set during this call
	}
}

func (s *callSlot) arm(ctx context.Context, deadline int64) {
	s.mu.Lock()
	s.mu.deadline, s.mu.ctx, s.mu.fired = deadline, ctx, false
	s.mu.Unlock()
}

// disarm ends the call and reports whether the watchdog set the flag during
// it. Once disarmed, the watchdog no longer touches the flag.
func (s *callSlot) disarm() (fired bool) {
	s.mu.Lock()
	fired = s.mu.fired
	s.mu.deadline, s.mu.ctx, s.mu.fired = 0, nil, false
	s.mu.Unlock()
	return fired
}

// check sets the flag and takes the fuel (the next check in the guest then
// looks at the flag) if the call in flight is past its deadline or its
// context is done.
func (s *callSlot) check(now int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.mu.deadline == 0:
	case s.mu.fired:
		// Still running: the guest's own decrement of the fuel may have
		// overwritten the first Set (it loads, subtracts and stores).
		s.fuel.Set(1)
	case now >= s.mu.deadline || s.mu.ctx.Err() != nil:
		s.flag.Set(1)
		s.fuel.Set(1)
		s.mu.fired = true
	}
}
