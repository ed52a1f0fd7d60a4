package join

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/windowing"
)

// fuzzDuration maps a fuzzed int64 to a duration of whole milliseconds,
// negative ones included (Validate refuses them), up to the largest
// time.Duration.
func fuzzDuration(v int64) time.Duration {
	return time.Duration(v%(math.MaxInt64/int64(time.Millisecond)+1)) * time.Millisecond
}

// FuzzJoinTimes joins three records at arbitrary int64 times with
// arbitrary join windows, grace and disorder. Whatever the values: Process
// and Flush return without panicking; a time outside the event-time range
// is refused with ErrTimeRange and buffers nothing; a pair is two records
// within the join window of each other; a late record is more than grace
// behind the watermark; and Flush empties the buffer.
func FuzzJoinTimes(f *testing.F) {
	f.Add(uint8(2), int64(math.MaxInt64), int64(0), int64(math.MinInt64), int64(1000), int64(1000), int64(0), int64(0))
	f.Add(uint8(1), windowing.MaxTime, windowing.MaxTime, windowing.MinTime, int64(math.MaxInt64), int64(math.MaxInt64), int64(math.MaxInt64), int64(math.MaxInt64))
	f.Add(uint8(0), int64(5), int64(7), int64(3), int64(2), int64(2), int64(1), int64(0))
	f.Add(uint8(5), windowing.MinTime, windowing.MinTime+1, windowing.MaxTime+1, int64(1), int64(0), int64(-1), int64(4))
	f.Fuzz(func(t *testing.T, mode uint8, t1, t2, t3, before, after, grace, disorder int64) {
		cfg := Config{Type: Type(mode % 3), Before: fuzzDuration(before), After: fuzzDuration(after),
			Grace: fuzzDuration(grace), Disorder: fuzzDuration(disorder)}
		buf := newMemBuffer()
		j, err := NewWindowJoin(cfg, buf)
		if err != nil {
			if !errors.Is(err, ErrInvalidConfig) {
				t.Fatalf("NewWindowJoin: %v", err)
			}
			return
		}
		j.Assign(0, 1)
		var out Output
		times := map[string]int64{}
		for i, ts := range []int64{t1, t2, t3} {
			side := Side((int(mode/3) + i) % 2)
			name := string(rune('a' + i))
			rec := abi.Record{Key: []byte("k"), Value: []byte(name), Timestamp: ts}
			n, lates := buf.n, len(out.Late)
			err := j.Process(side, int32(side), &rec, &out)
			if windowing.CheckTime(ts) != nil {
				if !errors.Is(err, windowing.ErrTimeRange) || buf.n != n {
					t.Fatalf("record at %d: err %v, %d buffered (was %d)", ts, err, buf.n, n)
				}
				continue
			}
			if err != nil {
				t.Fatalf("record at %d: %v", ts, err)
			}
			times[name] = ts
			for _, l := range out.Late[lates:] {
				if l.Watermark <= add(l.Time, j.grace) {
					t.Fatalf("late at %d with watermark %d and grace %v", l.Time, l.Watermark, cfg.Grace)
				}
			}
		}
		if err := j.Flush(&out); err != nil {
			t.Fatal(err)
		}
		if buf.n != 0 {
			t.Fatalf("%d records left after Flush", buf.n)
		}
		for _, p := range out.Pairs {
			if p.Left == nil || p.Right == nil {
				continue
			}
			l, r := times[string(p.Left.Value)], times[string(p.Right.Value)]
			if r < l-cfg.Before.Milliseconds() || r > l+cfg.After.Milliseconds() || p.Time != max(l, r) {
				t.Fatalf("pair left %d right %d at %d, window before %v after %v", l, r, p.Time, cfg.Before, cfg.After)
			}
		}
	})
}
