package conformance

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/runtime"
)

// timerList describes the timers set, in time order, as "key@time/domain".
func timerList(m *runtime.MemoryTimers) []string {
	var out []string
	for _, t := range m.Timers() {
		out = append(out, fmt.Sprintf("%s@%d/%s", t.Key, t.Time, t.Domain))
	}
	return out
}

// timerOutcome fires timers in batches of size and describes each timer's
// outputs or failure, as processOutcome does for records.
func timerOutcome(s *suite, inst *runtime.Instance, ts []abi.Timer, size int) (outcome, error) {
	return callOutcome(len(ts), size, func(lo, hi int, out *runtime.Output) error { return inst.Timer(s.ctx, ts[lo:hi], out) },
		func(i int) string { return fmt.Sprintf("timer %d (key %s at %d)", i, preview(ts[i].Key), ts[i].Time) })
}

// timerBatchSizes fires timers the function did not set — null, empty and
// long keys, times at the ends of int64, both domains — in batches of
// several sizes, with a store and a timer service and without: the
// function must answer each (outputs or an error code, never a trap), and
// the same way whatever the batch size.
func (s *suite) timerBatchSizes(inst *runtime.Instance) (string, error) {
	if _, err := timerOutcome(s, inst, nil, 0); err != nil {
		return "", fmt.Errorf("empty batch: %w", err)
	}
	var ts []abi.Timer
	for i := range 40 {
		ts = append(ts, abi.Timer{Key: []byte("key-" + strconv.Itoa(i%7)), Time: 1_700_000_000_000 + int64(i)*250, Domain: abi.TimeDomain(i % 2)})
	}
	ts = append(ts, abi.Timer{Key: []byte{}, Time: 0}, abi.Timer{Key: []byte{}, Time: -1, Domain: abi.ProcessingTime},
		abi.Timer{Key: bytes.Repeat([]byte("k"), abi.MaxStateKey), Time: math.MaxInt64},
		abi.Timer{Key: []byte("\xff\x00"), Time: math.MinInt64, Domain: abi.ProcessingTime})
	for _, store := range []bool{false, true} {
		if store {
			inst.SetState(mapState{})
			tm := runtime.NewMemoryTimers()
			tm.SetNow(abi.EventTime, 1_700_000_005_000)
			tm.SetNow(abi.ProcessingTime, 1_700_000_009_000)
			inst.SetTimers(tm)
		} else {
			inst.SetState(nil)
			inst.SetTimers(nil)
		}
		var first outcome
		for _, size := range []int{len(ts), 1, 7} {
			got, err := timerOutcome(s, inst, ts, size)
			if err != nil {
				return "", fmt.Errorf("batches of %d (store: %v): %w", size, store, err)
			}
			if first == nil {
				first = got
			} else if err := sameOutcome(fmt.Sprintf("batches of %d against one batch", size), "small", got, "one", first); err != nil {
				return "", err
			}
		}
	}
	inst.SetState(nil)
	inst.SetTimers(nil)
	return fmt.Sprintf("%d timers answered alike in batches of %d, 1 and 7, with and without a store", len(ts), len(ts)), nil
}

// expectTimeout checks the reference function timeout (guests/*/timeout):
// each record moves its key's event-time timer to one second after it;
// a timer that fires while it matches the key's last activity reports it.
func expectTimeout(s *suite, inst *runtime.Instance) (string, error) {
	st := mapState{}
	tm := runtime.NewMemoryTimers()
	inst.SetState(st)
	inst.SetTimers(tm)
	defer func() { inst.SetState(nil); inst.SetTimers(nil) }()
	recs := []abi.Record{
		{Key: []byte("a"), Timestamp: 1000},
		{Key: []byte("b"), Timestamp: 1500},
		{Key: []byte("a"), Timestamp: 1800},
		{Key: nil, Timestamp: 2000},
	}
	got, err := processOutcome(s, inst, recs, len(recs))
	if err != nil {
		return "", err
	}
	if err := sameOutcome("records", "got", got, "want", outcome{"", "", "", ""}); err != nil {
		return "", errorf("the function passes no record on: %v", err)
	}
	want := []string{"b@2500/event", "a@2800/event", "@3000/event"}
	if l := timerList(tm); !slices.Equal(l, want) {
		return "", errorf("timers after the records: got %v, want %v (the timer of a's first record moved)", l, want)
	}
	if string(st["a"]) != "1800" || string(st["b"]) != "1500" || string(st[""]) != "2000" {
		return "", errorf("state after the records: got %q, want a=1800 b=1500 \"\"=2000 in decimal", st)
	}
	fired := []abi.Timer{
		{Key: []byte("b"), Time: 2500},                             // matches: reported
		{Key: []byte("a"), Time: 2000},                             // stale: a's last activity is 1800
		{Key: []byte("a"), Time: 2800, Domain: abi.ProcessingTime}, // processing time: ignored
		{Key: []byte("c"), Time: 9000},                             // no activity known
		{Key: []byte{}, Time: 3000},                                // the null/empty key's
	}
	for _, size := range []int{len(fired), 1} {
		for k, v := range map[string]string{"a": "1800", "b": "1500", "": "2000"} {
			st[k] = []byte(v)
		}
		got, err := timerOutcome(s, inst, fired, size)
		if err != nil {
			return "", err
		}
		wantOut := outcome{`k="b" v="1500" t=2500;`, "", "", "", `k="" v="2000" t=3000;`}
		if err := sameOutcome(fmt.Sprintf("timers fired in batches of %d", size), "got", got, "want", wantOut); err != nil {
			return "", err
		}
		if _, ok := st["b"]; ok || string(st["a"]) != "1800" {
			return "", errorf("state after the timers: got %q, want b forgotten and a=1800 kept", st)
		}
	}
	// Without a store the function refuses records.
	inst.SetState(nil)
	inst.SetTimers(nil)
	got, err = processOutcome(s, inst, []abi.Record{{Key: []byte("a"), Timestamp: 1}}, 1)
	if err != nil {
		return "", err
	}
	if got[0] != "error 1" && got[0] != "error 6" {
		return "", errorf("without a store: got %s, want error 1 or 6", got[0])
	}
	return "moves one event-time timer per key, reports the matching firing, ignores stale and processing-time ones", nil
}

// expectDedupe checks the Go fixture dedupe: a key passes once a minute
// of event time; its timer forgets it.
func expectDedupe(s *suite, inst *runtime.Instance) (string, error) {
	st := mapState{}
	tm := runtime.NewMemoryTimers()
	inst.SetState(st)
	inst.SetTimers(tm)
	defer func() { inst.SetState(nil); inst.SetTimers(nil) }()
	recs := []abi.Record{{Key: []byte("a"), Value: []byte("1"), Timestamp: 1000}, {Key: []byte("a"), Value: []byte("2"), Timestamp: 2000},
		{Key: []byte("b"), Value: []byte("3"), Timestamp: 2500}}
	got, err := processOutcome(s, inst, recs, len(recs))
	if err != nil {
		return "", err
	}
	if err := sameOutcome("records", "got", got, "want", outcome{`k="a" v="1" t=1000;`, "", `k="b" v="3" t=2500;`}); err != nil {
		return "", err
	}
	if l := timerList(tm); !slices.Equal(l, []string{"a@61000/event", "b@62500/event"}) {
		return "", errorf("timers: got %v, want a@61000 and b@62500", l)
	}
	fired, err := timerOutcome(s, inst, tm.Due(abi.EventTime, 61000), 1)
	if err != nil {
		return "", err
	}
	if err := sameOutcome("firing a", "got", fired, "want", outcome{""}); err != nil {
		return "", err
	}
	got, err = processOutcome(s, inst, []abi.Record{{Key: []byte("a"), Value: []byte("4"), Timestamp: 62000}, {Key: []byte("b"), Value: []byte("5"), Timestamp: 62000}}, 2)
	if err != nil {
		return "", err
	}
	if err := sameOutcome("after a's timer", "got", got, "want", outcome{`k="a" v="4" t=62000;`, ""}); err != nil {
		return "", err
	}
	return "drops a key seen within the minute, forgets it when its timer fires", nil
}

// expectRemind checks the Go fixture remind: processing-time timers the
// record's value after the node's clock.
func expectRemind(s *suite, inst *runtime.Instance) (string, error) {
	tm := runtime.NewMemoryTimers()
	tm.SetNow(abi.ProcessingTime, 5000)
	inst.SetState(mapState{})
	inst.SetTimers(tm)
	defer func() { inst.SetState(nil); inst.SetTimers(nil) }()
	got, err := processOutcome(s, inst, []abi.Record{{Key: []byte("k"), Value: []byte("300")}, {Key: []byte("j"), Value: []byte("x")}}, 2)
	if err != nil {
		return "", err
	}
	if err := sameOutcome("records", "got", got, "want", outcome{"", "error 1"}); err != nil {
		return "", err
	}
	if l := timerList(tm); !slices.Equal(l, []string{"k@5300/processing"}) {
		return "", errorf("timers: got %v, want k@5300/processing", l)
	}
	fired, err := timerOutcome(s, inst, tm.Due(abi.ProcessingTime, 5300), 1)
	if err != nil {
		return "", err
	}
	if err := sameOutcome("firing", "got", fired, "want", outcome{`k="k" v="reminder" t=5300;`}); err != nil {
		return "", err
	}
	return "a processing-time timer the value after the clock, a reminder when it fires", nil
}
