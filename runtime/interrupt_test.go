package runtime_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/runtime"
)

// These tests check how calls are stopped at their deadline: by an interrupt
// flag and fuel counter added to the module at load (runtime/internal/interrupt)
// and set by the engine's watchdog.

// ownFixture reads a module of this package's testdata (built by
// testdata/build.sh).
func ownFixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// processTimesOut runs one batch through a fresh instance of f and checks
// that every record fails with a timeout that also matches
// context.DeadlineExceeded.
func processTimesOut(t *testing.T, f *runtime.Function, timeout time.Duration) {
	t.Helper()
	var out runtime.Output
	start := time.Now()
	if err := f.Process(context.Background(), records(1), &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Failed) != 1 {
		t.Fatalf("%d failed records, want 1", len(out.Failed))
	}
	fe := out.Failed[0]
	if !errors.Is(fe, runtime.ErrTimeout) || !errors.Is(fe, context.DeadlineExceeded) {
		t.Fatalf("failure %v (%v) is not a timeout", fe, fe.Err)
	}
	if !strings.Contains(fe.Error(), "did not finish within "+timeout.String()) {
		t.Fatalf("failure %q", fe)
	}
	if d := time.Since(start); d < timeout {
		t.Fatalf("the call was stopped after %s, before its deadline of %s", d, timeout)
	}
}

func TestStartSectionRunsBeforeExports(t *testing.T) {
	e := newEngine(t, runtime.WithCallTimeout(100*time.Millisecond))
	// eddy_manifest answers -1 unless the start function ran.
	f, err := e.Load(context.Background(), "start", ownFixture(t, "start.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close(context.Background())
	if exports := f.Info().Exports; slices.ContainsFunc(exports, func(s string) bool { return strings.HasPrefix(s, "eddy.") }) {
		t.Errorf("Info lists the host's exports: %v", exports)
	}
	processTimesOut(t, f, 100*time.Millisecond)
}

// TestHostileStartFunctions loads guests whose start function never
// returns: the start section, and the reactor's _initialize export.
func TestHostileStartFunctions(t *testing.T) {
	e := newEngine(t, runtime.WithCallTimeout(100*time.Millisecond))
	for _, name := range []string{"startloop.wasm", "initloop.wasm"} {
		t.Run(name, func(t *testing.T) {
			f, err := e.Load(context.Background(), name, ownFixture(t, name))
			if err == nil {
				f.Close(context.Background())
				t.Fatal("loaded")
			}
			if !strings.Contains(err.Error(), "instantiate: start function did not finish within 100ms") {
				t.Fatalf("err = %v", err)
			}
		})
	}
}

// TestGarbageCollectionDuringEndlessLoop collects garbage while a guest
// loops. Go cannot preempt a goroutine that runs compiled Wasm, so a guest
// that never returned to Go would hold the collection (and every other
// goroutine, the watchdog included) until its call ended: never. The fuel
// makes it return to Go regularly.
func TestGarbageCollectionDuringEndlessLoop(t *testing.T) {
	// The call has no deadline that would end it soon: only cancellation
	// does. If the looping guest held collections up, the collections below
	// would wait for it for ever (until the test binary's deadline).
	f := load(t, newEngine(t, runtime.WithCallTimeout(time.Hour)), "wat/loop.wasm")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		var out runtime.Output
		done <- f.Process(ctx, records(1), &out)
	}()
	time.Sleep(50 * time.Millisecond) // let the guest start looping
	for range 3 {
		goruntime.GC()
	}
	select {
	case err := <-done:
		t.Fatalf("the call ended before it was cancelled: %v", err)
	default:
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("the cancelled call returned %v", err)
	}
}

// TestTimeoutsWithEveryCoreBusy runs more endless guest calls at once than
// there are cores: the watchdog must still get to run and stop them all.
func TestTimeoutsWithEveryCoreBusy(t *testing.T) {
	const timeout = 300 * time.Millisecond
	f := load(t, newEngine(t, runtime.WithCallTimeout(timeout)), "wat/loop.wasm")
	var wg sync.WaitGroup
	for range 2 * goruntime.GOMAXPROCS(0) {
		wg.Go(func() { processTimesOut(t, f, timeout) })
	}
	wg.Wait()
}

// TestCallsFinishingNearTheirDeadline runs calls that take about as long as
// their deadline: each either succeeds or times out, and the instance
// answers correctly afterwards either way (a flag set as a call returned must
// not fail the next call).
func TestCallsFinishingNearTheirDeadline(t *testing.T) {
	f := load(t, newEngine(t, runtime.WithCallTimeout(10*time.Millisecond)), "c/upper.wasm")
	inst, err := f.Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer f.Release(context.Background(), inst)
	small := []abi.Record{{Value: []byte("abc")}}
	timeouts := 0
	for i := range 40 {
		big := []abi.Record{{Value: bytes.Repeat([]byte("abcdefgh"), (1+i%12)<<17)}} // 1 to 12 MiB (the C SDK traps at 16)
		var out runtime.Output
		if err := inst.Process(context.Background(), big, &out); err != nil {
			t.Fatal(err)
		}
		switch {
		case len(out.Failed) == 1 && errors.Is(out.Failed[0], runtime.ErrTimeout):
			timeouts++
		case len(out.Failed) != 0 || len(out.Records) != 1 || !bytes.Equal(out.Records[0].Value, bytes.ToUpper(big[0].Value)):
			t.Fatalf("%d MiB: %d records, failed %v", len(big[0].Value)>>20, len(out.Records), out.Failed)
		}
		out.Reset()
		if err := inst.Process(context.Background(), small, &out); err != nil || len(out.Failed) != 0 || string(out.Records[0].Value) != "ABC" {
			t.Fatalf("small batch after a big one: %v %v", err, out.Failed)
		}
	}
	t.Logf("%d of 40 calls timed out", timeouts)
}

// TestOwnFixturesAreUpToDate rebuilds testdata/*.wasm from their WAT
// sources (testdata/build.sh) and compares, where wat2wasm is installed.
func TestOwnFixturesAreUpToDate(t *testing.T) {
	if _, err := exec.LookPath("wat2wasm"); err != nil {
		t.Skip("wat2wasm not installed (apt-get install wabt)")
	}
	out := t.TempDir()
	cmd := exec.Command("bash", "testdata/build.sh", out)
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	built, _ := filepath.Glob(filepath.Join(out, "*.wasm"))
	have, _ := filepath.Glob("testdata/*.wasm")
	if len(built) != len(have) {
		t.Errorf("build.sh builds %d modules, testdata holds %d", len(built), len(have))
	}
	for _, b := range built {
		got, _ := os.ReadFile(b)
		if want := ownFixture(t, filepath.Base(b)); !bytes.Equal(got, want) {
			t.Errorf("testdata/%s differs from its source build (run testdata/build.sh)", filepath.Base(b))
		}
	}
}

// BenchmarkCallOverhead measures a call on the smallest batches, one record
// and none, through the minimal guest (wat/dropall.wasm): what bounding a
// call by its deadline adds to it ("wasm") next to no bound
// ("uninterruptible").
func BenchmarkCallOverhead(b *testing.B) {
	e := newEngine(b)
	for _, mode := range []string{"wasm", "uninterruptible"} {
		var opts []runtime.Option
		if mode == "uninterruptible" {
			opts = append(opts, runtime.WithUninterruptible())
		}
		f := load(b, e, "wat/dropall.wasm", opts...)
		for _, n := range []int{0, 1} {
			b.Run(mode+"/records="+string(rune('0'+n)), func(b *testing.B) {
				inst, err := f.Acquire(context.Background())
				if err != nil {
					b.Fatal(err)
				}
				defer f.Release(context.Background(), inst)
				in := records(n)
				var out runtime.Output
				for b.Loop() {
					out.Reset()
					if err := inst.Process(context.Background(), in, &out); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
