package windowing

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/eddy-streams/eddy/abi"
)

// maxDuration is the largest whole number of milliseconds a time.Duration
// holds (about 292 years): the largest size, grace or retention there is.
const maxDuration = time.Duration(maxSpan) * time.Millisecond

// badTimes are event times outside [MinTime, MaxTime], the ends of int64
// among them: before the range existed, window assignment looped forever
// at some of them (s += advance wrapped around).
var badTimes = []int64{math.MinInt64, math.MinInt64 + 1, MinTime - 1, MaxTime + 1, math.MaxInt64 - 1, math.MaxInt64}

// edgeTimes are valid event times, at and near the ends of the range.
var edgeTimes = []int64{MinTime, MinTime + 1, -1, 0, MaxTime - 1, MaxTime}

// extremeSpecs are windows of every kind, small and as large as they go.
func extremeSpecs(t testing.TB) map[string]Spec {
	t.Helper()
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	return map[string]Spec{
		"tumbling 1s":       Tumbling(time.Second),
		"tumbling max":      Tumbling(maxDuration),
		"hopping 10s/3s":    Hopping(10*time.Second, 3*time.Second),
		"hopping max/max":   Hopping(maxDuration, maxDuration),
		"hopping 10s/10s":   Hopping(10*time.Second, 10*time.Second),
		"hopping max panes": Hopping(maxDuration, (maxDuration/MaxWindowsPerRecord).Truncate(time.Millisecond)+time.Millisecond),
		"tumbling day zone": Tumbling(day).In(berlin),
		"hopping 7d/1d":     Hopping(7*day, day).In(berlin),
		"hopping zone max":  Hopping(maxDuration/day*day, maxDuration/day*day).In(berlin),
		"sliding 1s":        Sliding(time.Second),
		"sliding max":       Sliding(maxDuration),
		"session 1s":        Session(time.Second),
		"session max":       Session(maxDuration),
		"global 2":          GlobalCount(2),
	}
}

// checkStore is a sumStore that checks that every record is added to a
// window or pane that contains its time, and counts the adds.
type checkStore struct {
	*sumStore
	t    testing.TB
	adds int
}

func (s *checkStore) Add(key []byte, w Window, rec *abi.Record) error {
	s.adds++
	if !w.Contains(rec.Timestamp) {
		s.t.Errorf("record at %d added to %v", rec.Timestamp, w)
	}
	return s.sumStore.Add(key, w, rec)
}

// TestTimesOutOfRange: for every window kind, with no grace and retention
// and with the largest ones, a record at a time outside the event-time
// range is refused with an error that names it and wraps ErrTimeRange and
// ErrNoTimestamp (the host dead-letters it), leaving no trace; so is a
// progress report of such a time. Records at the ends of the range are
// windowed, fire and expire at Flush like any other.
func TestTimesOutOfRange(t *testing.T) {
	for name, spec := range extremeSpecs(t) {
		for _, big := range []bool{false, true} {
			cfg := Config{Window: spec}
			if big {
				name += ", max grace"
				cfg.Grace, cfg.Retention, cfg.Disorder = maxDuration, maxDuration, maxDuration
			}
			t.Run(name, func(t *testing.T) {
				store := &checkStore{sumStore: newSumStore(), t: t}
				w, err := New(cfg, store)
				if err != nil {
					t.Fatal(err)
				}
				w.Assign(0)
				var out Output
				for _, ts := range badTimes {
					rec := abi.Record{Key: []byte("k"), Timestamp: ts}
					err := w.Process(0, &rec, &out)
					if !errors.Is(err, ErrTimeRange) || !errors.Is(err, ErrNoTimestamp) ||
						!strings.Contains(err.Error(), "event time "+strconv.FormatInt(ts, 10)+" out of range") {
						t.Fatalf("record at %d: err = %v, want an out-of-range error", ts, err)
					}
					if err := w.Progress(0, ts, &out); !errors.Is(err, ErrTimeRange) {
						t.Fatalf("progress to %d: err = %v, want ErrTimeRange", ts, err)
					}
				}
				if store.adds != 0 || w.Watermark() != NoWatermark || w.Stats().Records != 0 || len(out.Emits)+len(out.Late) != 0 {
					t.Fatalf("refused records left a trace: %d adds, watermark %d, stats %+v, output %+v",
						store.adds, w.Watermark(), w.Stats(), out)
				}
				for _, ts := range edgeTimes {
					rec := abi.Record{Key: []byte("k"), Value: []byte("1"), Timestamp: ts}
					if err := w.Process(0, &rec, &out); err != nil {
						t.Fatalf("record at %d: %v", ts, err)
					}
				}
				if err := w.Flush(&out); err != nil {
					t.Fatal(err)
				}
				if len(out.Late) != 0 {
					t.Fatalf("late: %+v", out.Late)
				}
				records := int64(0)
				for _, e := range out.Emits {
					if !e.Final {
						t.Fatalf("non-final emit %+v", e)
					}
					if e.Window != GlobalWindow && !validWindow(e.Window) {
						t.Fatalf("emitted window %v outside the range", e.Window)
					}
					var n, sum int64
					fmt.Sscanf(string(e.Value), "count=%d sum=%d", &n, &sum)
					records += n
				}
				if records < int64(len(edgeTimes)) {
					t.Fatalf("results count %d records, want at least %d: %v", records, len(edgeTimes), out.Emits)
				}
				if spec.Kind != KindGlobal && len(store.m) != 0 {
					t.Fatalf("%d accumulators left after Flush", len(store.m))
				}
			})
		}
	}
}

// TestRestoreOutOfRange: Restore refuses a stored window that no valid
// event time makes (a corrupt entry, or one written before times were
// checked), for every kind: before, a pane near the end of int64 made
// Restore loop forever. A window at the end of the range is restored and
// expires at Flush.
func TestRestoreOutOfRange(t *testing.T) {
	for name, spec := range extremeSpecs(t) {
		if spec.Kind == KindGlobal {
			continue // one window, checked by Restore already
		}
		t.Run(name, func(t *testing.T) {
			w, err := New(Config{Window: spec, Grace: maxDuration, Retention: maxDuration}, newSumStore())
			if err != nil {
				t.Fatal(err)
			}
			for _, win := range []Window{
				{math.MaxInt64 - 1, math.MaxInt64}, {math.MinInt64, math.MinInt64 + 1}, {math.MaxInt64, math.MinInt64},
				{MaxTime + 1, MaxTime + 2}, {MinTime - 2, MinTime}, {5, 5}, {MinTime - maxSpan - 1, MinTime + 1},
			} {
				if err := w.Restore(0, []byte("k"), win); !errors.Is(err, ErrTimeRange) || !errors.Is(err, ErrInvalidConfig) {
					t.Fatalf("restore %v: err = %v, want ErrTimeRange", win, err)
				}
			}
			store := &checkStore{sumStore: newSumStore(), t: t}
			w, _ = New(Config{Window: spec, Grace: maxDuration, Retention: maxDuration}, store)
			rec := abi.Record{Key: []byte("k"), Value: []byte("1"), Timestamp: MaxTime}
			var out Output
			if err := w.Process(0, &rec, &out); err != nil {
				t.Fatal(err)
			}
			r, _ := New(Config{Window: spec, Grace: maxDuration, Retention: maxDuration}, store)
			for _, k := range store.sortedKeys() {
				if err := r.Restore(w.Watermark(), []byte(k.key), k.w); err != nil {
					t.Fatalf("restore %v: %v", k.w, err)
				}
			}
			if err := r.Flush(&out); err != nil {
				t.Fatal(err)
			}
			if len(out.Emits) == 0 || len(store.m) != 0 {
				t.Fatalf("after Flush: %d emits, %d accumulators left", len(out.Emits), len(store.m))
			}
		})
	}
}

// TestComposeOutOfRange: a query composing hopping windows from a store
// with a corrupt unit near the end of int64 terminates (it looped before)
// and shows the unit as it is.
func TestComposeOutOfRange(t *testing.T) {
	c := Config{Window: Hopping(10*time.Second, 2*time.Second), Grace: maxDuration, Retention: maxDuration}
	bad := Window{math.MaxInt64 - 2000, math.MaxInt64}
	cs := c.Compose(math.MinInt64, []Window{{0, 2000}, bad})
	if n := len(cs); n != 6 || cs[n-1].Window != bad || len(cs[n-1].Units) != 1 {
		t.Fatalf("compose: %+v", cs)
	}
}

// TestWatermarkSaturates: a watermark below the start of int64 (a time
// near it minus the disorder) is NoWatermark, not a time in the far future.
func TestWatermarkSaturates(t *testing.T) {
	w := NewWatermarks(maxDuration, 0, time.Now)
	if wm := w.Observe(0, math.MinInt64+1); wm != NoWatermark {
		t.Fatalf("watermark %d, want NoWatermark", wm)
	}
	if wm, _ := w.Partition(0); wm != NoWatermark {
		t.Fatalf("partition watermark %d, want NoWatermark", wm)
	}
	if wm := w.Observe(0, MinTime); wm != MinTime-maxSpan {
		t.Fatalf("watermark %d, want %d", wm, MinTime-maxSpan)
	}
}

// TestTimeRangeEnds checks that the range is the years 0000 to 9999 UTC,
// what an RFC 3339 string in UTC can express.
func TestTimeRangeEnds(t *testing.T) {
	if got := time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli(); got != MinTime {
		t.Errorf("MinTime %d, want %d", MinTime, got)
	}
	if got := time.Date(9999, 12, 31, 23, 59, 59, 999e6, time.UTC).UnixMilli(); got != MaxTime {
		t.Errorf("MaxTime %d, want %d", MaxTime, got)
	}
	if CheckTime(MinTime) != nil || CheckTime(MaxTime) != nil || CheckTime(MinTime-1) == nil || CheckTime(MaxTime+1) == nil {
		t.Error("CheckTime does not match the range")
	}
}

// TestWindowsPerRecordBound: hopping windows may put a record in at most
// MaxWindowsPerRecord windows.
func TestWindowsPerRecordBound(t *testing.T) {
	for _, tc := range []struct {
		spec Spec
		ok   bool
	}{
		{Hopping(MaxWindowsPerRecord*time.Millisecond, time.Millisecond), true},
		{Hopping((MaxWindowsPerRecord+1)*time.Millisecond, time.Millisecond), false},
		{Hopping(day, time.Millisecond), false},
		{Hopping(maxDuration, time.Millisecond), false},
		{Hopping(maxDuration/day*day, day).In(time.UTC), false},
		{Hopping(MaxWindowsPerRecord*day, day).In(time.UTC), true},
	} {
		if err := tc.spec.Validate(); (err == nil) != tc.ok || (err != nil && !errors.Is(err, ErrInvalidConfig)) {
			t.Errorf("%v every %v: err = %v, want ok %v", tc.spec.Size, tc.spec.Advance, err, tc.ok)
		}
	}
}
