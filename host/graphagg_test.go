package host_test

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/host"
	"github.com/eddy-streams/eddy/runtime"
)

// itemCount is a window result of the first aggregate, tagged with its
// window by the map after it.
type itemCount struct {
	Item  string `json:"item"`
	Count int    `json:"count"`
	Start int64  `json:"start"`
	// Total, in a result of the second aggregate, is the sum of the
	// counts it folded: the bids of the window, which a count folded
	// twice (an update not retracted) would make too large.
	Total int `json:"total,omitempty"`
}

// twoStageNatives are the functions of the two-stage pipeline: count (an
// aggregate: records per key and window), tag (a map: a count result with
// its key and window start, from the result's eddy.window.start header; it
// fails on the result of item refuse in the window at refuseAt) and top (an
// aggregate of tagged counts: the largest count, the smaller item on a tie).
func twoStageNatives(refuse string, refuseAt int64) map[string]func() runtime.Native {
	return map[string]func() runtime.Native{
		"count": func() runtime.Native {
			return runtime.Native{
				AggInit: func() []byte { return []byte("0") },
				AggAdd: func(acc []byte, _ *abi.Record) ([]byte, error) {
					n, _ := strconv.Atoi(string(acc))
					return strconv.AppendInt(nil, int64(n+1), 10), nil
				},
				AggMerge: func(_, a, b []byte) ([]byte, error) {
					x, _ := strconv.Atoi(string(a))
					y, _ := strconv.Atoi(string(b))
					return strconv.AppendInt(nil, int64(x+y), 10), nil
				},
				AggResult: func(_, acc []byte) ([]byte, error) { return acc, nil },
			}
		},
		"tag": func() runtime.Native {
			return runtime.Native{Process: func(rec *abi.Record, emit func(abi.Record)) error {
				var start int64 = -1
				for _, h := range rec.Headers {
					if h.Key == "eddy.window.start" {
						start, _ = strconv.ParseInt(string(h.Value), 10, 64)
					}
				}
				n, err := strconv.Atoi(string(rec.Value))
				if err != nil || start < 0 {
					return fmt.Errorf("not a count result: %q (window start %d)", rec.Value, start)
				}
				if string(rec.Key) == refuse && start == refuseAt {
					return fmt.Errorf("refused: %s at %d", refuse, start)
				}
				v, _ := json.Marshal(itemCount{Item: string(rec.Key), Count: n, Start: start})
				emit(abi.Record{Key: rec.Key, Value: v, Timestamp: rec.Timestamp})
				return nil
			}}
		},
		"top": func() runtime.Native {
			better := func(a, b itemCount) bool { return a.Count > b.Count || a.Count == b.Count && a.Item < b.Item }
			pick := func(a, b []byte) ([]byte, error) {
				if len(a) == 0 {
					return b, nil
				}
				if len(b) == 0 {
					return a, nil
				}
				var x, y itemCount
				if err := json.Unmarshal(a, &x); err != nil {
					return nil, err
				}
				if err := json.Unmarshal(b, &y); err != nil {
					return nil, err
				}
				best := x
				if better(y, x) {
					best = y
				}
				best.Total = x.Total + y.Total
				return json.Marshal(best)
			}
			return runtime.Native{
				AggInit: func() []byte { return nil },
				AggAdd: func(acc []byte, rec *abi.Record) ([]byte, error) {
					var x itemCount
					if err := json.Unmarshal(rec.Value, &x); err != nil {
						return nil, err
					}
					x.Total = x.Count
					v, _ := json.Marshal(x)
					return pick(acc, v)
				},
				AggMerge:  func(_, a, b []byte) ([]byte, error) { return pick(a, b) },
				AggResult: func(_, acc []byte) ([]byte, error) { return acc, nil },
			}
		},
	}
}

// TestAggregateAfterAggregate runs a pipeline whose window results go on
// through more steps: bids are counted per item and second, each count is
// tagged with its window, re-keyed by the window and aggregated again into
// the second's top item (Nexmark q5's shape). Every second's top item must
// come out once, equal to a reference computed from the input, under both
// guarantees (at_least_once: at least once). The map after the first
// aggregate fails on one result: that result goes to the dead-letter topic
// itself (it comes from no one input record), with its window headers and
// the map's name, and the rest goes on.
//
// Under emit: update on the first aggregate (the update variants), every
// change of a count is a result that the map tags and the second aggregate
// reads, each change preceded by the retraction of the count it replaces:
// the second aggregate's results must be the same as under emit: final,
// once each (none counted twice, none missing), and no retraction reaches
// the output topic.
func TestAggregateAfterAggregate(t *testing.T) {
	for _, tc := range []struct {
		delivery host.Delivery
		emit     string
	}{{host.ExactlyOnce, "final"}, {host.AtLeastOnce, "final"}, {host.ExactlyOnce, "update"}, {host.AtLeastOnce, "update"}} {
		t.Run(string(tc.delivery)+"/"+tc.emit, func(t *testing.T) { testAggregateAfterAggregate(t, tc.delivery, tc.emit) })
	}
}

func testAggregateAfterAggregate(t *testing.T, delivery host.Delivery, emit string) {
	b := startBroker(t, "bids", "out", "dlq", "late")
	p := loadPipeline(t, fmt.Sprintf(`name: hot
source: {topics: [bids]}
steps:
  - {name: by-item, kind: key_by, field: item}
  - {name: count, kind: aggregate, function: "native:count", window: {type: tumbling, size: 1s}, emit: %s}
  - {name: tag, kind: map, function: "native:tag"}
  - {name: by-window, kind: key_by, field: start}
  - {name: top, kind: aggregate, function: "native:top", window: {type: tumbling, size: 1s}}
sink: {topic: out}
dead_letter: {topic: dlq}
late: {topic: late}
delivery: %s
commit_interval: 50ms
batch_size: 50
`, emit, delivery))
	const base = int64(1700000000000)
	recs, counts := twoStageBids(8000, 20)
	// Bids far ahead, in every partition, close every window of the input
	// in the first stage, whose watermark, less its grace, is its
	// progress for the second stage: that closes the second stage's
	// windows of the input too, though the first sends no result as late
	// (its windows at 30 s stay open).
	for k := range 16 {
		recs = append(recs, abi.Record{Key: []byte(strconv.Itoa(k)), Value: []byte(fmt.Sprintf(`{"item":"flush%d"}`, k)), Timestamp: base + 30_000})
	}
	refuse, refuseAt := "it0", base+5000
	delete(counts[5], refuse)
	want := topsOf(counts)
	produceAll(t, []string{b.Addr()}, "bids", recs)
	n := startNativeNode(t, b, p, twoStageNatives(refuse, refuseAt))
	out := consumeAll(t, b, "out", len(counts), time.Second)
	if err := nodeErr(n); err != nil {
		t.Fatalf("node stopped: %v", err)
	}
	got := map[int64]int{}
	for _, r := range out {
		var v itemCount
		if err := json.Unmarshal(r.Value, &v); err != nil {
			t.Fatalf("output %s: %v", r.Value, err)
		}
		if w, ok := want[v.Start]; !ok || v != w {
			t.Errorf("top of the second at %d: %+v, want %+v", v.Start, v, w)
		}
		if start := strings.TrimSpace(string(r.Key)); start != strconv.FormatInt(v.Start, 10) {
			t.Errorf("output key %q, want the window start %d", r.Key, v.Start)
		}
		got[v.Start]++
		if header(r, abi.HeaderRetract) != "" {
			t.Errorf("a retraction in the output: %s", r.Value)
		}
	}
	for start := range want {
		if got[start] == 0 || delivery == host.ExactlyOnce && got[start] != 1 {
			t.Errorf("the second at %d has %d results, want 1", start, got[start])
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d seconds with results, want %d", len(got), len(want))
	}
	dl := consumeAll(t, b, "dlq", 1, 200*time.Millisecond)
	if len(dl) == 0 || delivery == host.ExactlyOnce && emit == "final" && len(dl) != 1 {
		// Under emit: update each change of the refused count is refused.
		t.Fatalf("%d dead letters, want the refused result once", len(dl))
	}
	for _, r := range dl {
		if string(r.Key) != refuse || header(r, "eddy.step") != "tag" || header(r, "eddy.window.start") != strconv.FormatInt(refuseAt, 10) ||
			header(r, "eddy.source.topic") != "" || !strings.Contains(header(r, "eddy.error"), "refused") {
			t.Errorf("dead letter %s=%s with headers %v, want the result of %s at %d refused by tag", r.Key, r.Value, r.Headers, refuse, refuseAt)
		}
	}
}

// TestTapWritesAStepsOutput: window totals go to one topic and the big ones,
// through a filter after the aggregate, to another (the sink): the
// aggregate step has to: totals. Under exactly_once every total is in
// totals once, and every total above the threshold in the sink once.
func TestTapWritesAStepsOutput(t *testing.T) {
	b := startBroker(t, "bids", "totals", "alerts", "dlq", "late")
	p := loadPipeline(t, `name: taps
source: {topics: [bids]}
steps:
  - {name: by-item, kind: key_by, field: item}
  - {name: count, kind: aggregate, function: "native:count", window: {type: tumbling, size: 1s}, to: totals}
  - {name: big, kind: filter, function: "native:big"}
sink: {topic: alerts}
dead_letter: {topic: dlq}
late: {topic: late}
delivery: exactly_once
commit_interval: 50ms
batch_size: 50
`)
	const base, seconds, bids, threshold = int64(1700000000000), 10, 4000, 40
	type total struct {
		item string
		sec  int64
	}
	want := map[total]int{}
	var recs []abi.Record
	for i := range bids {
		at := base + int64(i)*seconds*1000/bids
		item := fmt.Sprintf("it%d", (i*i+i/97)%17)
		want[total{item, (at - base) / 1000}]++
		recs = append(recs, abi.Record{Key: []byte(strconv.Itoa(i % 16)), Value: []byte(fmt.Sprintf(`{"item":%q}`, item)), Timestamp: at})
	}
	for k := range 16 { // close every window of the input, in every partition
		recs = append(recs, abi.Record{Key: []byte(strconv.Itoa(k)), Value: []byte(`{"item":"flush"}`), Timestamp: base + 30_000})
	}
	produceAll(t, []string{b.Addr()}, "bids", recs)
	natives := twoStageNatives("", 0)
	natives["big"] = func() runtime.Native {
		return runtime.Native{Process: func(rec *abi.Record, emit func(abi.Record)) error {
			if n, _ := strconv.Atoi(string(rec.Value)); n > threshold {
				emit(*rec)
			}
			return nil
		}}
	}
	n := startNativeNode(t, b, p, natives)
	big := 0
	for _, c := range want {
		if c > threshold {
			big++
		}
	}
	if big == 0 || big == len(want) {
		t.Fatalf("%d of %d totals above the threshold: the test needs some of each", big, len(want))
	}
	check := func(topic string, recs []abi.Record, above bool) {
		t.Helper()
		seen := map[total]int{}
		for _, r := range recs {
			start, _ := strconv.ParseInt(header(r, "eddy.window.start"), 10, 64)
			k := total{string(r.Key), (start - base) / 1000}
			n, _ := strconv.Atoi(string(r.Value))
			if w, ok := want[k]; !ok || n != w {
				t.Errorf("%s: %s in the second %d: %d, want %d", topic, k.item, k.sec, n, w)
			}
			seen[k]++
		}
		for k, w := range want {
			if expect := !above || w > threshold; expect && seen[k] != 1 || !expect && seen[k] != 0 {
				t.Errorf("%s: %s in the second %d (total %d) came out %d times", topic, k.item, k.sec, w, seen[k])
			}
		}
	}
	check("totals", consumeAll(t, b, "totals", len(want), time.Second), false)
	check("alerts", consumeAll(t, b, "alerts", big, time.Second), true)
	if err := nodeErr(n); err != nil {
		t.Fatalf("node stopped: %v", err)
	}
	rec := httptest.NewRecorder()
	n.node.Metrics().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	line := regexp.MustCompile(`(?m)^eddy_step_tapped_records_total\{[^}]*step="count"[^}]*\} (\d+)$`).FindStringSubmatch(rec.Body.String())
	if line == nil || line[1] != strconv.Itoa(len(want)) {
		t.Errorf("eddy_step_tapped_records_total{step=count}: %q, want %d", line, len(want))
	}
}

// TestStepsNameTheirInputs: a pipeline that fans out and merges (from:):
// two filters read the source, each writes what it keeps to a topic of its
// own (to:), and a map reads both — clicks, then views — into the sink.
// Under exactly_once each record is in its type's topic once, and each
// click or view in the sink once, tagged; the others nowhere.
func TestStepsNameTheirInputs(t *testing.T) {
	b := startBroker(t, "events", "clicks", "views", "out", "dlq")
	p := loadPipeline(t, `name: fan
source: {topics: [events]}
steps:
  - {name: clicks, kind: filter, function: "native:keep-click", from: [source], to: clicks}
  - {name: views, kind: filter, function: "native:keep-view", from: [source], to: views}
  - {name: both, kind: map, function: "native:tag", from: [clicks, views]}
sink: {topic: out}
dead_letter: {topic: dlq}
delivery: exactly_once
commit_interval: 50ms
batch_size: 20
`)
	kinds := []string{"click", "view", "other"}
	var recs []abi.Record
	want := map[string]map[string]bool{"clicks": {}, "views": {}, "out": {}}
	for i := range 900 {
		kind := kinds[(i*7)%3]
		v := fmt.Sprintf(`{"type":%q,"n":%d}`, kind, i)
		recs = append(recs, abi.Record{Key: []byte(strconv.Itoa(i % 10)), Value: []byte(v)})
		switch kind {
		case "click":
			want["clicks"][v], want["out"]["tagged "+v] = true, true
		case "view":
			want["views"][v], want["out"]["tagged "+v] = true, true
		}
	}
	produceAll(t, []string{b.Addr()}, "events", recs)
	keep := func(kind string) func() runtime.Native {
		return func() runtime.Native {
			return runtime.Native{Process: func(rec *abi.Record, emit func(abi.Record)) error {
				if strings.Contains(string(rec.Value), `"type":"`+kind+`"`) {
					emit(*rec)
				}
				return nil
			}}
		}
	}
	n := startNativeNode(t, b, p, map[string]func() runtime.Native{
		"keep-click": keep("click"),
		"keep-view":  keep("view"),
		"tag": func() runtime.Native {
			return runtime.Native{Process: func(rec *abi.Record, emit func(abi.Record)) error {
				emit(abi.Record{Key: rec.Key, Value: append([]byte("tagged "), rec.Value...), Timestamp: rec.Timestamp})
				return nil
			}}
		},
	})
	for topic, w := range want {
		got := consumeAll(t, b, topic, len(w), time.Second)
		seen := map[string]int{}
		for _, r := range got {
			seen[string(r.Value)]++
		}
		for v := range w {
			if seen[v] != 1 {
				t.Errorf("%s: %s came out %d times, want once", topic, v, seen[v])
			}
		}
		if len(got) != len(w) {
			t.Errorf("%s: %d records, want %d", topic, len(got), len(w))
		}
	}
	if err := nodeErr(n); err != nil {
		t.Fatalf("node stopped: %v", err)
	}
}
