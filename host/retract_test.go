package host_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/host"
	"github.com/eddy-streams/eddy/runtime"
)

// twoStage is the pipeline of TestAggregateAfterAggregate with the first
// aggregate's emit mode emit.
func twoStage(emit string) string {
	return fmt.Sprintf(`name: hot
source: {topics: [bids]}
steps:
  - {name: by-item, kind: key_by, field: item}
  - {name: count, kind: aggregate, function: "native:count", window: {type: tumbling, size: 1s}, emit: %s}
  - {name: tag, kind: map, function: "native:tag"}
  - {name: by-window, kind: key_by, field: start}
  - {name: top, kind: aggregate, function: "native:top", window: {type: tumbling, size: 1s}}
sink: {topic: out}
delivery: exactly_once
batch_size: 200
`, emit)
}

// twoStageBids makes n bids over seconds seconds, in time order, from
// 1700000000000 ms, and the number of bids of each item in each second.
func twoStageBids(n, seconds int) ([]abi.Record, []map[string]int) {
	const base = int64(1700000000000)
	counts := make([]map[string]int, seconds)
	var recs []abi.Record
	for i := range n {
		at := base + int64(i)*int64(seconds)*1000/int64(n)
		item := fmt.Sprintf("it%d", (i*i+i/97)%17)
		sec := (at - base) / 1000
		if counts[sec] == nil {
			counts[sec] = map[string]int{}
		}
		counts[sec][item]++
		recs = append(recs, abi.Record{Key: []byte(strconv.Itoa(i % 16)), Value: []byte(fmt.Sprintf(`{"item":%q,"bid":%d}`, item, i)), Timestamp: at})
	}
	return recs, counts
}

// topsOf returns each second's reference result of the two-stage pipeline:
// the item with the most bids (the smaller name on a tie) and the number
// of bids, by the second's start.
func topsOf(counts []map[string]int) map[int64]itemCount {
	const base = int64(1700000000000)
	want := map[int64]itemCount{}
	for sec, c := range counts {
		var top itemCount
		total := 0
		for item, k := range c {
			if k > top.Count || k == top.Count && item < top.Item {
				top = itemCount{Item: item, Count: k}
			}
			total += k
		}
		top.Start, top.Total = base+int64(sec)*1000, total
		want[top.Start] = top
	}
	return want
}

// startNatives runs pipeline src in process with the two-stage natives.
func startNatives(tb testing.TB, src string, parts int32) *host.InProcess {
	tb.Helper()
	p, err := host.ParsePipeline("p.yaml", []byte(src))
	if err != nil {
		tb.Fatal(err)
	}
	eng, err := runtime.NewEngine()
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { eng.Close(context.Background()) })
	ip, err := host.NewInProcess(context.Background(), p, host.NodeConfig{Engine: eng, DataDir: tb.TempDir(), Natives: twoStageNatives("", 0)}, parts)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { ip.Close(context.Background()) })
	return ip
}

// TestInProcessUpdatesIntoAggregate runs the two-stage pipeline with
// emit: update on the first aggregate in process (the driver of eddy test
// and eddy bench), its input ended by Flush: the second aggregate's
// results must equal those computed from the input, once per second, and
// no retraction may come out.
func TestInProcessUpdatesIntoAggregate(t *testing.T) {
	ip := startNatives(t, twoStage("update"), 4)
	recs, counts := twoStageBids(6000, 12)
	want := topsOf(counts)
	got := map[int64]int{}
	ip.Out = func(topic string, r abi.Record, _ time.Time) {
		var v itemCount
		if err := json.Unmarshal(r.Value, &v); err != nil {
			t.Errorf("output %s: %v", r.Value, err)
			return
		}
		got[v.Start]++
		if abi.IsRetraction(r.Headers) {
			t.Errorf("a retraction came out: %s", r.Value)
		}
		if w := want[v.Start]; v != w {
			t.Errorf("second at %d: %+v, want %+v", v.Start, v, w)
		}
	}
	ctx := context.Background()
	for len(recs) > 0 {
		n := min(len(recs), 700)
		if err := ip.Send(ctx, "bids", recs[:n]); err != nil {
			t.Fatal(err)
		}
		recs = recs[n:]
		if err := ip.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	if err := ip.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	for start := range want {
		if got[start] != 1 {
			t.Errorf("the second at %d has %d results, want 1", start, got[start])
		}
	}
}

// BenchmarkAggregateAfterAggregate is the cost of retractions: the
// two-stage pipeline in process with native functions, the first aggregate
// emitting final results (one per item and second) or every update, each
// with a retraction that the second aggregate folds its window's set again
// for. The stores commit after every 1,000 bids, as a node's transactions
// would.
func BenchmarkAggregateAfterAggregate(b *testing.B) {
	for _, emit := range []string{"final", "update"} {
		b.Run(emit, func(b *testing.B) {
			recs, _ := twoStageBids(20000, 20)
			ctx := context.Background()
			for b.Loop() {
				b.StopTimer()
				ip := startNatives(b, twoStage(emit), 4)
				out := 0
				ip.Out = func(string, abi.Record, time.Time) { out++ }
				b.StartTimer()
				for i := 0; i < len(recs); i += 1000 {
					if err := ip.Send(ctx, "bids", recs[i:min(i+1000, len(recs))]); err != nil {
						b.Fatal(err)
					}
					if err := ip.Commit(); err != nil { // as a node commits its transactions
						b.Fatal(err)
					}
				}
				if err := ip.Flush(ctx); err != nil {
					b.Fatal(err)
				}
				if out != 20 {
					b.Fatalf("%d results, want 20", out)
				}
			}
			b.ReportMetric(float64(len(recs))*float64(b.N)/b.Elapsed().Seconds(), "bids/s")
		})
	}
}
