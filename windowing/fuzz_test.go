package windowing

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/eddy-streams/eddy/abi"
)

// fuzzDuration maps a fuzzed int64 to a duration of whole milliseconds (or
// whole days when days is set) that may be negative or zero, to exercise
// Validate, and can be as large as time.Duration goes.
func fuzzDuration(v int64, days bool) time.Duration {
	if days {
		return time.Duration(v%(maxSpan/int64(day/time.Millisecond)+1)) * day
	}
	return time.Duration(v%(maxSpan+1)) * time.Millisecond
}

// FuzzAssign runs two records at arbitrary int64 times through windows of
// every kind with arbitrary sizes, grace, retention and disorder. Whatever
// the values: Process and Flush return (no endless loop) without
// panicking; a time outside the event-time range is refused with
// ErrTimeRange and touches nothing; an accepted record goes only into
// windows or panes that contain it, at most MaxWindowsPerRecord of them;
// every late report and result is about a window in range; and after Flush
// no state is left but that of global windows short of their count.
func FuzzAssign(f *testing.F) {
	f.Add(uint8(0), int64(math.MaxInt64), int64(0), int64(1000), int64(1000), int64(0), int64(0), int64(0))
	f.Add(uint8(1), int64(math.MinInt64), int64(5), int64(10000), int64(3000), int64(5), int64(7), int64(2))
	f.Add(uint8(2), MaxTime, MinTime, int64(1), int64(1), maxSpan, maxSpan, maxSpan)
	f.Add(uint8(3), MinTime, MaxTime, maxSpan, int64(1), maxSpan, int64(0), int64(0))
	f.Add(uint8(4), int64(1), int64(2), int64(0), int64(0), int64(0), int64(0), int64(3))
	f.Add(uint8(0x81), int64(1700000000000), int64(1700000000001), int64(7), int64(1), int64(0), maxSpan, int64(0))
	f.Add(uint8(0x11), MaxTime, MaxTime-86400000, int64(3), int64(1), int64(1), int64(1), int64(1))
	f.Add(uint8(0x90), MinTime, MinTime+1, int64(106751), int64(0), maxSpan, maxSpan, maxSpan)
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, mode uint8, t1, t2, size, adv, grace, ret, disorder int64) {
		zone := mode&0x10 != 0
		var spec Spec
		switch (mode & 0x0f) % 5 {
		case 0:
			spec = Tumbling(fuzzDuration(size, zone))
		case 1:
			spec = Hopping(fuzzDuration(size, zone), fuzzDuration(adv, zone))
		case 2:
			spec = Sliding(fuzzDuration(size, false))
		case 3:
			spec = Session(fuzzDuration(size, false))
		case 4:
			spec = GlobalCount(int(size % 4))
		}
		if zone {
			spec = spec.In(berlin)
		}
		cfg := Config{Window: spec, Grace: fuzzDuration(grace, false), Retention: fuzzDuration(ret, false),
			Disorder: fuzzDuration(disorder, false)}
		if mode&0x80 != 0 {
			cfg.Emit = EmitUpdate
		}
		store := &checkStore{sumStore: newSumStore(), t: t}
		w, err := New(cfg, store)
		if err != nil {
			if !errors.Is(err, ErrInvalidConfig) {
				t.Fatalf("New: %v", err)
			}
			return
		}
		var out Output
		for _, ts := range []int64{t1, t2} {
			adds, emits := store.adds, len(out.Emits)
			rec := abi.Record{Key: []byte("k"), Value: []byte("1"), Timestamp: ts}
			err := w.Process(0, &rec, &out)
			if CheckTime(ts) != nil {
				if !errors.Is(err, ErrTimeRange) || store.adds != adds || len(out.Emits) != emits {
					t.Fatalf("record at %d: err %v, %d adds, %d emits", ts, err, store.adds-adds, len(out.Emits)-emits)
				}
				continue
			}
			if err != nil {
				t.Fatalf("record at %d: %v", ts, err)
			}
			if n := store.adds - adds; n > MaxWindowsPerRecord {
				t.Fatalf("record at %d added to %d windows", ts, n)
			}
			// Updates of this record's windows, and results of the
			// windows its time closed: both bounded by the windows a
			// record can be in (one record before it).
			if n := len(out.Emits) - emits; n > 2*MaxWindowsPerRecord {
				t.Fatalf("record at %d: %d emits", ts, n)
			}
		}
		if err := w.Flush(&out); err != nil {
			t.Fatal(err)
		}
		for _, l := range out.Late {
			if !l.Window.Contains(l.Time) || !validWindow(l.Window) {
				t.Fatalf("late at %d for window %v", l.Time, l.Window)
			}
		}
		for _, e := range out.Emits {
			if e.Window != GlobalWindow && !validWindow(e.Window) {
				t.Fatalf("emitted window %v", e.Window)
			}
			if (spec.Kind == KindTumbling || spec.Kind == KindHopping) && spec.Location == nil &&
				e.Window.End-e.Window.Start != spec.Size.Milliseconds() {
				t.Fatalf("emitted window %v of %v windows", e.Window, spec.Size)
			}
		}
		if spec.Kind != KindGlobal && len(store.m) != 0 {
			t.Fatalf("%d accumulators left after Flush", len(store.m))
		}
	})
}
