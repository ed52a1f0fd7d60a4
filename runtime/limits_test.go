package runtime_test

import (
	"context"
	"log/slog"
	goruntime "runtime"
	"strings"
	"testing"
	"time"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/runtime"
)

// TestAmplifyingAnswers: answers that decode to far more than their bytes
// (testdata/amplify.wat) fail their record as malformed output, without the
// host allocating for what they claim, and the instance serves the next
// batch.
func TestAmplifyingAnswers(t *testing.T) {
	e := newEngine(t)
	f, err := e.Load(context.Background(), "amplify", ownFixture(t, "amplify.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close(context.Background())
	inst, err := f.NewInstance(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Close(context.Background())
	for _, tc := range []struct {
		mode, want string
	}{
		{"c", "cannot fit"},
		{"h", "more than the limit of 1000 per record"},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			var out runtime.Output
			var before, after goruntime.MemStats
			goruntime.GC()
			goruntime.ReadMemStats(&before)
			err := inst.Process(context.Background(), []abi.Record{{Value: []byte(tc.mode)}}, &out)
			goruntime.ReadMemStats(&after)
			if err != nil {
				t.Fatal(err)
			}
			// The 4 MiB answer is copied once; the claim of 4 Mi headers
			// would be 168 MB.
			if n := after.TotalAlloc - before.TotalAlloc; n > 32<<20 {
				t.Fatalf("the call allocated %d MB", n>>20)
			}
			if len(out.Failed) != 1 || out.Failed[0].Cause != runtime.CauseMalformed || !strings.Contains(out.Failed[0].Reason, tc.want) {
				t.Fatalf("failed %v, records %d; want one malformed_output: %s", out.Failed, len(out.Records), tc.want)
			}
		})
	}
}

// TestGuestStringsAndCountersBounded: a guest adding to 1,500 distinct
// counter names and logging a 1 MB line (testdata/chatty.wat) leaves the
// function with 1,000 counters (the rest dropped, the first drop logged
// once) and one log line of at most 4 KiB that says it was cut.
func TestGuestStringsAndCountersBounded(t *testing.T) {
	logs := &captured{}
	e := newEngine(t, runtime.WithLogger(slog.New(logs)))
	f, err := e.Load(context.Background(), "chatty", ownFixture(t, "chatty.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close(context.Background())
	for range 2 {
		var out runtime.Output
		if err := f.Process(context.Background(), []abi.Record{{Value: []byte("x")}}, &out); err != nil || len(out.Failed) != 0 {
			t.Fatal(err, out.Failed)
		}
	}
	if n, d := len(f.Counters()), f.CountersDropped(); n != 1000 || d != 2*500 {
		t.Fatalf("%d counters, %d adds dropped; want 1000, 1000", n, d)
	}
	for name, v := range f.Counters() {
		if v != 2 {
			t.Fatalf("counter %q = %d, want 2", name, v)
		}
	}
	if drops := logs.find("guest counter dropped"); len(drops) != 1 || !strings.Contains(drops[0], "at most 1000 names") {
		t.Fatalf("drop logs %q", drops)
	}
	lines := logs.find("guest log")
	if len(lines) != 2 {
		t.Fatalf("%d guest log lines, want 2", len(lines))
	}
	for _, l := range lines {
		if len(l) > 4<<10 || !strings.HasSuffix(l, "(truncated, 1000000 bytes)") {
			t.Fatalf("log line of %d bytes ending %q", len(l), l[max(0, len(l)-40):])
		}
	}
}

// TestFailuresSayWhatHappened (testdata/failures.wat): a refused
// memory.grow and then a trap is out_of_memory even far below the limit; a
// return value that is no code is reported as such, with the value; a
// reserved or unknown code is named so; a trap in eddy_alloc says so.
func TestFailuresSayWhatHappened(t *testing.T) {
	e := newEngine(t)
	f, err := e.Load(context.Background(), "failures", ownFixture(t, "failures.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close(context.Background())
	for _, tc := range []struct {
		value string
		cause runtime.Cause
		want  string
	}{
		{"g", runtime.CauseOOM, "out_of_memory: memory at 131072 of 134217728 bytes, a memory.grow refused"},
		{"m", runtime.CauseFailed, "call failed (returned -9223372036854775808, not an error code)"},
		{"b", runtime.CauseFailed, "call failed (returned -1099511627776, not an error code)"},
		{"u", runtime.CauseFailed, "call failed (code 300, not an ABI code)"},
		{"r", runtime.CauseFailed, "call failed (code 9, a reserved code)"},
		{"x", runtime.CauseFailed, "call failed (code 1, rejected)"},
		{"big" + strings.Repeat(".", 2<<20), runtime.CauseTrap, "record 0: trap in eddy_alloc(2097165): wasm error: unreachable"},
	} {
		var out runtime.Output
		if err := f.Process(context.Background(), []abi.Record{{Value: []byte(tc.value)}}, &out); err != nil {
			t.Fatal(err)
		}
		if len(out.Failed) != 1 || out.Failed[0].Cause != tc.cause || !strings.Contains(out.Failed[0].Error(), tc.want) {
			t.Errorf("%.3s: failed %v, want %s: %s", tc.value, out.Failed, tc.cause, tc.want)
		}
	}
}

// TestSlowIterationsDoNotStopTheProcess (testdata/slowfill.wat): a loop
// whose every iteration fills 127 MiB is stopped at its deadline while
// garbage collections keep starting. Before bulk memory was charged by its
// bytes, the guest returned to Go once every 65,536 fills, and the first
// collection that started during the call stopped every goroutine, the
// watchdog included, for minutes.
func TestSlowIterationsDoNotStopTheProcess(t *testing.T) {
	e := newEngine(t)
	f, err := e.Load(context.Background(), "slowfill", ownFixture(t, "slowfill.wasm"), runtime.WithCallTimeout(300*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close(context.Background())
	done := make(chan []*runtime.Error, 1)
	go func() {
		var out runtime.Output
		if err := f.Process(context.Background(), []abi.Record{{Value: []byte("x")}}, &out); err != nil {
			t.Error(err)
		}
		done <- out.Failed
	}()
	for {
		select {
		case failed := <-done:
			if len(failed) != 1 || failed[0].Cause != runtime.CauseTimeout {
				t.Fatalf("failed %v, want a timeout", failed)
			}
			return
		default:
			goruntime.GC() // waits for the guest to return to Go
		}
	}
}

// TestBisectedAnswersAreNotKept: records refused with 60 MB reasons, one
// answer per record once the batch is bisected (the fixture answers for
// one record only), leave the output holding their 4 KiB reasons, not
// every answer: 30 of them used to keep 1.8 GB until the batch ended.
func TestBisectedAnswersAreNotKept(t *testing.T) {
	f := load(t, newEngine(t, runtime.WithCallTimeout(time.Minute)), "wat/hostile-item-reason.wasm")
	var out runtime.Output
	in := records(30)
	var before, after goruntime.MemStats
	goruntime.GC()
	goruntime.ReadMemStats(&before)
	if err := f.Process(context.Background(), in, &out); err != nil {
		t.Fatal(err)
	}
	goruntime.GC()
	goruntime.ReadMemStats(&after)
	if len(out.Failed) != len(in) || len(out.Records) != 0 {
		t.Fatalf("%d failed, %d records; want %d failed", len(out.Failed), len(out.Records), len(in))
	}
	for _, e := range out.Failed {
		if len(e.Reason) > abi.MaxReasonBytes+64 {
			t.Fatalf("reason of %d bytes kept", len(e.Reason))
		}
	}
	if grew := int64(after.HeapAlloc) - int64(before.HeapAlloc); grew > 512<<20 {
		t.Fatalf("the output holds %d MiB after %d refused records", grew>>20, len(in))
	}
	goruntime.KeepAlive(&out)
}
