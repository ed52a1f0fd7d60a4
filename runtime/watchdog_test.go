package runtime

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/tetratelabs/wazero/api"
)

// fakeGlobal records Set calls. (wazero's interfaces cannot be implemented
// outside it: the embedded nil interface supplies the method that seals
// them, never called.)
type fakeGlobal struct {
	api.MutableGlobal
	v uint64
}

func (g *fakeGlobal) Type() api.ValueType { return api.ValueTypeI32 }
func (g *fakeGlobal) Get() uint64         { return g.v }
func (g *fakeGlobal) String() string      { return "fake" }
func (g *fakeGlobal) Set(v uint64)        { g.v = v }

func TestWatchdogRunsOnlyWhileModulesLive(t *testing.T) {
	running := func(w *watchdog) bool {
		w.mu.Lock()
		defer w.mu.Unlock()
		return w.mu.running
	}
	e, err := NewEngine(WithoutCache(), WithCallTimeout(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	wasm, err := os.ReadFile("../testdata/wat/dropall.wasm")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if running(e.wd) {
		t.Fatal("watchdog running before any module")
	}
	f, err := e.Load(ctx, "dropall", wasm)
	if err != nil {
		t.Fatal(err)
	}
	if !running(e.wd) {
		t.Fatal("watchdog not running with a pooled instance")
	}
	f.Close(ctx)
	deadline := time.Now().Add(5 * time.Second)
	for running(e.wd) && time.Now().Before(deadline) {
		time.Sleep(watchdogTick)
	}
	if running(e.wd) {
		t.Fatal("watchdog still running after its last function closed")
	}
	e.Close(ctx)
	e.Close(ctx) // harmless twice
}

func TestCallSlot(t *testing.T) {
	w := newWatchdog()
	flag, fuel := &fakeGlobal{}, &fakeGlobal{v: 100}
	s := &callSlot{flag: flag, fuel: fuel}
	now := w.now()
	s.check(now + int64(time.Hour)) // idle: nothing to stop
	if flag.v != 0 {
		t.Fatal("an idle slot was interrupted")
	}
	s.arm(context.Background(), now+int64(time.Second))
	s.check(now)
	if flag.v != 0 || fuel.v != 100 {
		t.Fatal("interrupted before its deadline")
	}
	s.check(now + int64(time.Second))
	if flag.v != 1 || fuel.v != 1 {
		t.Fatalf("flag %d fuel %d after the deadline", flag.v, fuel.v)
	}
	fuel.v = 50 // the guest's decrement overwrote the watchdog's Set
	s.check(now + int64(2*time.Second))
	if fuel.v != 1 {
		t.Fatal("fuel not taken again")
	}
	if !s.disarm() {
		t.Fatal("disarm does not report the interruption")
	}
	flag.v, fuel.v = 0, 100
	ctx, cancel := context.WithCancel(context.Background())
	s.arm(ctx, now+int64(time.Hour))
	cancel()
	s.check(now)
	if flag.v != 1 || !s.disarm() {
		t.Fatal("a cancelled call was not interrupted")
	}
	if s.disarm() {
		t.Fatal("disarm reports an interruption twice")
	}
}

// BenchmarkArm compares ways to bound a call: arming the watchdog's slot
// (what the runtime does), a timer per call, a timer and a context hook per
// call (to see cancellation too), and context.WithTimeout (what the runtime
// did before, besides wazero's goroutine per call).
func BenchmarkArm(b *testing.B) {
	ctx, cancel := context.WithCancel(context.Background()) // a cancellable parent, as a task's
	defer cancel()
	b.Run("watchdog", func(b *testing.B) {
		w := newWatchdog()
		s := &callSlot{flag: &fakeGlobal{}, fuel: &fakeGlobal{}}
		for b.Loop() {
			s.arm(ctx, w.now()+int64(time.Second))
			s.disarm()
		}
	})
	b.Run("timer", func(b *testing.B) {
		g := &fakeGlobal{}
		for b.Loop() {
			t := time.AfterFunc(time.Second, func() { g.Set(1) })
			t.Stop()
		}
	})
	b.Run("timer+context", func(b *testing.B) {
		g := &fakeGlobal{}
		for b.Loop() {
			t := time.AfterFunc(time.Second, func() { g.Set(1) })
			stop := context.AfterFunc(ctx, func() { g.Set(1) })
			t.Stop()
			stop()
		}
	})
	b.Run("context.WithTimeout", func(b *testing.B) {
		for b.Loop() {
			_, cancel := context.WithTimeout(ctx, time.Second)
			cancel()
		}
	})
}
