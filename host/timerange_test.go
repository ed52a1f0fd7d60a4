package host_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/host"
	"github.com/eddy-streams/eddy/windowing"
)

// outOfRange are event times outside the valid range (the years 0000 to
// 9999): before it existed, a record at the first made window assignment
// loop forever and the node run out of memory, on every restart.
var outOfRange = []int64{math.MaxInt64, math.MinInt64, windowing.MaxTime + 1, windowing.MinTime - 1}

// ipOutput collects what an in-process pipeline produces, by topic.
type ipOutput map[string][]abi.Record

func (o ipOutput) collect(topic string, r abi.Record, _ time.Time) {
	r.Headers = append([]abi.Header(nil), r.Headers...)
	o[topic] = append(o[topic], r)
}

// checkDeadLettered checks that the dead-letter topic holds one record per
// time of outOfRange, in order, each saying why and where it was read.
func checkDeadLettered(t *testing.T, dlq []abi.Record, source string) {
	t.Helper()
	if len(dlq) != len(outOfRange) {
		t.Fatalf("%d dead-lettered records, want %d: %+v", len(dlq), len(outOfRange), dlq)
	}
	for i, r := range dlq {
		want := "event time " + strconv.FormatInt(outOfRange[i], 10) + " out of range"
		if e := header(r, "eddy.error"); !strings.Contains(e, want) {
			t.Errorf("dead letter %d: eddy.error %q, want it to say %q", i, e, want)
		}
		if c := header(r, "eddy.error.code"); c != "bad_input" {
			t.Errorf("dead letter %d: eddy.error.code %q, want bad_input", i, c)
		}
		if s := header(r, "eddy.source.topic"); s != source {
			t.Errorf("dead letter %d: eddy.source.topic %q, want %q", i, s, source)
		}
	}
}

// TestEventTimeOutOfRange runs aggregate pipelines whose input holds
// records with event times outside the valid range, between valid ones —
// in a JSON time_field, as the record timestamp, through a key_by and its
// repartition topic: each such record goes to the dead-letter topic with
// the reason and its input's position, and the records after it are
// windowed normally.
func TestEventTimeOutOfRange(t *testing.T) {
	prices, _ := filepath.Abs("../testdata/go/pricestats.wasm")
	const base = int64(1700000000000)
	for _, tc := range []struct {
		name, steps string
		timeField   bool // the time is in the value's "ts", else the record timestamp
		windows     int  // results of the valid records
	}{
		{"time_field tumbling", "window: {type: tumbling, size: 1s}\n    time_field: ts", true, 3},
		{"time_field after key_by", "window: {type: tumbling, size: 1s, grace: 1h, retention: 1h}\n    time_field: ts", true, 3},
		{"record time hopping", "window: {type: hopping, size: 2s, advance: 1s, disorder: 1h}", false, 4},
		{"record time sliding", "window: {type: sliding, size: 1s, grace: 1h}", false, 4},
		{"time_field session", "window: {type: session, gap: 1s, retention: 1h}\n    time_field: ts", true, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			keyBy := ""
			if strings.Contains(tc.name, "key_by") {
				keyBy = "\n  - {name: by-bidder, kind: key_by, field: bidder}"
			}
			p := loadPipeline(t, fmt.Sprintf(`name: times
source: {topics: [in]}
steps:%s
  - name: prices
    kind: aggregate
    function: %s
    %s
sink: {topic: out}
dead_letter: {topic: dlq}
late: {topic: late}
delivery: exactly_once
`, keyBy, prices, tc.steps))
			ctx := context.Background()
			ip := startInProcess(t, p, 1)
			out := ipOutput{}
			ip.Out = out.collect
			rec := func(ts int64) abi.Record {
				r := abi.Record{Key: []byte("b"), Value: []byte(fmt.Sprintf(`{"bidder":"b","ts":%d,"price":2}`, ts)), Timestamp: ts}
				if tc.timeField {
					r.Timestamp = base // the time is the field's, not this one
				}
				return r
			}
			valid := []int64{base, base + 1, base + 1500, base + 2100}
			send := []abi.Record{rec(valid[0]), rec(valid[1])}
			for _, ts := range outOfRange {
				send = append(send, rec(ts))
			}
			send = append(send, rec(valid[2]), rec(valid[3]))
			if err := ip.Send(ctx, "in", send); err != nil {
				t.Fatal(err)
			}
			if err := ip.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			checkDeadLettered(t, out["dlq"], "in")
			if len(out["late"]) != 0 {
				t.Fatalf("late records: %+v", out["late"])
			}
			var count int
			for _, r := range out["out"] {
				var v struct{ Count int }
				if err := json.Unmarshal(r.Value, &v); err != nil {
					t.Fatalf("result %q: %v", r.Value, err)
				}
				count += v.Count
			}
			if len(out["out"]) != tc.windows || count < len(valid) {
				t.Fatalf("%d results counting %d records, want %d results of the %d valid records: %+v",
					len(out["out"]), count, tc.windows, len(valid), out["out"])
			}
			if st := ip.Stats(); st.DeadLettered != int64(len(outOfRange)) {
				t.Fatalf("stats: %+v", st)
			}
		})
	}
}

// TestJoinTimeOutOfRange: a stream-stream join given records whose
// timestamps are outside the valid range dead-letters them (before, they
// were buffered for ever, their input's watermark at the end of time), also
// after a key_by, where they are refused before the repartition topic (the
// dead letter names the input record), and pairs the records around them
// normally.
func TestJoinTimeOutOfRange(t *testing.T) {
	for _, keyBy := range []bool{false, true} {
		t.Run(fmt.Sprintf("key_by %v", keyBy), func(t *testing.T) {
			steps := ""
			if keyBy {
				steps = "\n  - {name: by-id, kind: key_by, field: id}"
			}
			p := loadPipeline(t, fmt.Sprintf(`name: jtimes
source: {topics: [in]}
steps:%s
  - {name: pair, kind: join, stream: right, type: inner, window: {before: 1s, after: 1s, grace: 1h}}
sink: {topic: out}
dead_letter: {topic: dlq}
late: {topic: late}
delivery: exactly_once
`, steps))
			ctx := context.Background()
			ip := startInProcess(t, p, 1)
			out := ipOutput{}
			ip.Out = out.collect
			const base = int64(1700000000000)
			rec := func(v string, ts int64) abi.Record {
				return abi.Record{Key: []byte("k"), Value: []byte(`{"id":"k","v":"` + v + `"}`), Timestamp: ts}
			}
			left := []abi.Record{rec("l1", base)}
			for _, ts := range outOfRange {
				left = append(left, rec("bad", ts))
			}
			left = append(left, rec("l2", base+5000))
			if err := ip.Send(ctx, "in", left); err != nil {
				t.Fatal(err)
			}
			if err := ip.Send(ctx, "right", []abi.Record{rec("r1", base+500), rec("r2", base+5500)}); err != nil {
				t.Fatal(err)
			}
			checkDeadLettered(t, out["dlq"], "in")
			var got []string
			for _, r := range out["out"] {
				var v struct{ Left, Right struct{ V string } }
				if err := json.Unmarshal(r.Value, &v); err != nil {
					t.Fatalf("result %q: %v", r.Value, err)
				}
				got = append(got, v.Left.V+"+"+v.Right.V)
			}
			if fmt.Sprint(got) != "[l1+r1 l2+r2]" {
				t.Fatalf("joined %q, want [l1+r1 l2+r2]", got)
			}
		})
	}
}

// TestForgedRepartitionTimes writes into the repartition topic of a
// key_by → aggregate pipeline, as any Kafka client could, a progress marker
// and a record whose times are outside the valid range. The marker is
// ignored (before, it moved the watermark to the end of time: every window
// fired at once and every later record was late) and the record
// dead-lettered (before, window assignment looped forever); the records
// around them are windowed normally.
func TestForgedRepartitionTimes(t *testing.T) {
	prices, _ := filepath.Abs("../testdata/go/pricestats.wasm")
	const base = int64(1700000000000)
	for _, forged := range []string{"marker", "record"} {
		t.Run(forged, func(t *testing.T) {
			p := loadPipeline(t, fmt.Sprintf(`name: forged
source: {topics: [in]}
steps:
  - {name: by-bidder, kind: key_by, field: bidder}
  - name: prices
    kind: aggregate
    function: %s
    window: {type: tumbling, size: 1s}
sink: {topic: out}
dead_letter: {topic: dlq}
late: {topic: late}
delivery: exactly_once
`, prices))
			ctx := context.Background()
			ip := startInProcess(t, p, 1)
			out := ipOutput{}
			ip.Out = out.collect
			rec := func(ts int64) abi.Record {
				return abi.Record{Key: []byte("x"), Value: []byte(`{"bidder":"b","price":2}`), Timestamp: ts}
			}
			if err := ip.Send(ctx, "in", []abi.Record{rec(base), rec(base + 1)}); err != nil {
				t.Fatal(err)
			}
			from := abi.Header{Key: "eddy.repartition.from", Value: []byte("0")}
			bad := abi.Record{Key: []byte("b"), Value: []byte(`{"bidder":"b","price":2}`), Timestamp: math.MaxInt64,
				Headers: []abi.Header{from}}
			if forged == "marker" {
				bad = abi.Record{Timestamp: base, Headers: []abi.Header{from,
					{Key: "eddy.repartition.progress", Value: []byte(strconv.FormatInt(math.MaxInt64, 10))}}}
			}
			if err := ip.Send(ctx, host.RepartitionTopic("forged", "by-bidder"), []abi.Record{bad}); err != nil {
				t.Fatal(err)
			}
			if err := ip.Send(ctx, "in", []abi.Record{rec(base + 2), rec(base + 1500)}); err != nil {
				t.Fatal(err)
			}
			if err := ip.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			if len(out["late"]) != 0 {
				t.Fatalf("%d late records", len(out["late"]))
			}
			var counts []int
			for _, r := range out["out"] {
				var v struct{ Count int }
				json.Unmarshal(r.Value, &v)
				counts = append(counts, v.Count)
			}
			if fmt.Sprint(counts) != "[3 1]" {
				t.Fatalf("window counts %v, want [3 1]", counts)
			}
			dlq := out["dlq"]
			if forged == "marker" {
				if len(dlq) != 0 {
					t.Fatalf("dead letters: %+v", dlq)
				}
				return
			}
			want := "event time " + strconv.FormatInt(math.MaxInt64, 10) + " out of range"
			if len(dlq) != 1 || !strings.Contains(header(dlq[0], "eddy.error"), want) {
				t.Fatalf("dead letters %+v, want one saying %q", dlq, want)
			}
		})
	}
}
