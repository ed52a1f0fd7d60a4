package host_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/host"
	"github.com/eddy-streams/eddy/runtime"
)

// TestInProcessRepartitionedWindows runs the repartitioned, windowed
// pipeline of TestKeyByWindowsWithTimeFunction in process (no Kafka), in
// batches of random sizes: every window's result must equal the reference,
// once.
func TestInProcessRepartitionedWindows(t *testing.T) {
	prices, _ := filepath.Abs("../testdata/go/pricestats.wasm")
	wordkey, _ := filepath.Abs("../testdata/go/wordkey.wasm")
	p := loadPipeline(t, fmt.Sprintf(`name: bids
source: {topics: [in]}
steps:
  - {name: by-bidder, kind: key_by, field: bidder}
  - name: prices
    kind: aggregate
    function: %s
    time_function: %s
    window: {type: tumbling, size: 1s, disorder: 300ms}
sink: {topic: out}
delivery: exactly_once
batch_size: 64
`, prices, wordkey))
	ctx := context.Background()
	ip := startInProcess(t, p, 4)
	type agg struct{ Count, Sum, Max float64 }
	got := map[string]agg{}
	dups := 0
	ip.Out = func(topic string, r abi.Record, _ time.Time) {
		if topic != "out" {
			t.Errorf("a record for %s: %s", topic, r.Value)
			return
		}
		var start string
		for _, h := range r.Headers {
			if h.Key == "eddy.window.start" {
				start = string(h.Value)
			}
		}
		var a agg
		json.Unmarshal(r.Value, &a)
		k := string(r.Key) + "@" + start
		if _, ok := got[k]; ok {
			dups++
		}
		got[k] = a
	}
	const base = int64(1700000000000)
	want := map[string]agg{}
	rng := rand.New(rand.NewPCG(5, 6))
	var recs []abi.Record
	for i := 0; i < 4000; i++ {
		bidder := fmt.Sprintf("b%d", i%5)
		ts := base + int64(i)*5 + rng.Int64N(250)
		price := rng.IntN(1000)
		recs = append(recs, abi.Record{Key: []byte("r" + strconv.Itoa(i)),
			Value: []byte(fmt.Sprintf(`{"bidder":%q,"ts":%d,"price":%d}`, bidder, ts, price))})
		k := fmt.Sprintf("%s@%d", bidder, ts/1000*1000)
		a := want[k]
		a.Count++
		a.Sum += float64(price)
		a.Max = max(a.Max, float64(price))
		want[k] = a
	}
	for j := 0; j < 40; j++ {
		recs = append(recs, abi.Record{Key: []byte("close" + strconv.Itoa(j)),
			Value: []byte(fmt.Sprintf(`{"bidder":"b0","ts":%d,"price":1}`, base+3_600_000))})
	}
	for len(recs) > 0 {
		n := min(len(recs), 1+rng.IntN(300))
		if err := ip.Send(ctx, "in", recs[:n]); err != nil {
			t.Fatal(err)
		}
		recs = recs[n:]
		if rng.IntN(4) == 0 {
			if err := ip.Commit(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if dups > 0 || len(got) != len(want) {
		t.Fatalf("%d windows (%d twice), want %d", len(got), dups, len(want))
	}
	for k, a := range want {
		if got[k] != a {
			t.Fatalf("window %s: got %+v, want %+v", k, got[k], a)
		}
	}
	if st := ip.Stats(); st.In != 4040 {
		t.Fatalf("stats: %+v", st)
	}
}

// startInProcess runs pipeline p in process over parts partitions, with an
// engine on the tests' compile cache and a data directory of the test's;
// both are closed when the test ends.
func startInProcess(t testing.TB, p *host.Pipeline, parts int32) *host.InProcess {
	t.Helper()
	return startInProcessWith(t, p, parts, nil)
}

// startInProcessWith is startInProcess with native functions.
func startInProcessWith(t testing.TB, p *host.Pipeline, parts int32, natives map[string]func() runtime.Native) *host.InProcess {
	t.Helper()
	eng, err := runtime.NewEngine(runtime.WithCacheDir(cacheDir))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close(context.Background()) })
	ip, err := host.NewInProcess(context.Background(), p, host.NodeConfig{Engine: eng, DataDir: t.TempDir(), Natives: natives}, parts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ip.Close(context.Background()) })
	return ip
}

// TestInProcessSendUnknownTopic: records sent to a topic the pipeline does
// not read are refused with the pipeline's inputs named, not run as if
// they came from its source.
func TestInProcessSendUnknownTopic(t *testing.T) {
	upper, _ := filepath.Abs("../testdata/go/upper.wasm")
	p := loadPipeline(t, fmt.Sprintf(`name: up
source: {topics: [in]}
steps:
  - {name: up, kind: map, function: %s}
sink: {topic: out}
`, upper))
	ip := startInProcess(t, p, 1)
	outs := 0
	ip.Out = func(string, abi.Record, time.Time) { outs++ }
	err := ip.Send(context.Background(), "other", []abi.Record{{Key: []byte("k"), Value: []byte("v")}})
	if err == nil || !strings.Contains(err.Error(), "topic other is not an input of pipeline up (its inputs: in)") {
		t.Fatalf("send to a topic the pipeline does not read: %v", err)
	}
	if outs != 0 {
		t.Fatalf("%d outputs of records sent to another topic", outs)
	}
}
