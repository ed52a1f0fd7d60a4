package host_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/host"
	"github.com/eddy-streams/eddy/host/embedded"
	"github.com/eddy-streams/eddy/runtime"
)

// BenchmarkHotSwap runs 500,000 records through an exactly-once map node
// (commit interval 100 ms) on an in-process broker, without swaps and while
// the step's function is redeployed every 250 ms or 50 ms, alternating two
// modules. It reports throughput, the number of swaps and the pause each
// task spent switching (p50, p99, max). Run with -benchtime 1x.
func BenchmarkHotSwap(b *testing.B) {
	for _, pair := range []struct{ name, a, b string }{{"c-c", "c/upper.wasm", "assemblyscript/upper.wasm"}, {"go-c", "go/upper.wasm", "c/upper.wasm"}} {
		for _, every := range []time.Duration{0, 250 * time.Millisecond, 50 * time.Millisecond} {
			b.Run(fmt.Sprintf("%s/every=%s", pair.name, every), func(b *testing.B) {
				for range b.N {
					benchSwaps(b, pair.a, pair.b, every)
				}
			})
		}
	}
}

func benchSwaps(b *testing.B, first, second string, every time.Duration) {
	const records = 500_000
	broker, err := embedded.Start(embedded.Config{Partitions: 4, Topics: []string{"in", "out", "dlq"}})
	if err != nil {
		b.Fatal(err)
	}
	defer broker.Close()
	brokers := []string{broker.Addr()}
	i := 0
	value := []byte(`{"bidder":1234,"auction":5678,"price":99,"channel":"web","url":"https://example.com/item/5678"}`)
	if _, err := host.Produce(context.Background(), brokers, "in", func() (abi.Record, error) {
		if i >= records {
			return abi.Record{}, io.EOF
		}
		i++
		return abi.Record{Key: []byte(fmt.Sprintf("k%d", i%1000)), Value: value}, nil
	}, nil); err != nil {
		b.Fatal(err)
	}
	fa, _ := filepath.Abs(filepath.Join("..", "testdata", first))
	path := filepath.Join(b.TempDir(), "p.yaml")
	os.WriteFile(path, []byte(fmt.Sprintf(`name: bench
source: {topics: [in]}
steps:
  - {name: fn, kind: map, function: %s}
sink: {topic: out}
dead_letter: {topic: dlq}
delivery: exactly_once
commit_interval: 100ms
`, fa)), 0o644)
	p, err := host.LoadPipeline(path)
	if err != nil {
		b.Fatal(err)
	}
	eng, err := runtime.NewEngine(runtime.WithCacheDir(cacheDir))
	if err != nil {
		b.Fatal(err)
	}
	defer eng.Close(context.Background())
	n, err := host.NewNode(context.Background(), p, host.NodeConfig{Brokers: brokers, NodeID: "bench", Engine: eng,
		Logger: testLoggerB(), RegistryKey: testRegistryKey})
	if err != nil {
		b.Fatal(err)
	}
	modules := [2][]byte{}
	for j, f := range []string{first, second} {
		if modules[j], err = os.ReadFile(filepath.Join("..", "testdata", f)); err != nil {
			b.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	began := time.Now()
	go func() { done <- n.Run(ctx) }()
	swaps := 0
	var tick <-chan time.Time
	if every > 0 {
		t := time.NewTicker(every)
		defer t.Stop()
		tick = t.C
	}
	for n.Stats().Out < records {
		select {
		case err := <-done:
			b.Fatalf("node stopped: %v", err)
		case <-tick:
			swaps++
			dctx, dcancel := context.WithTimeout(ctx, 10*time.Second)
			if _, err := n.Deploy(dctx, host.Deployment{Step: "fn", Module: modules[swaps%2]}); err != nil {
				b.Fatal(err)
			}
			dcancel()
		case <-time.After(5 * time.Millisecond):
		}
	}
	elapsed := time.Since(began)
	cancel()
	if err := <-done; err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(records/elapsed.Seconds(), "records/s")
	b.ReportMetric(float64(swaps), "swaps")
	if ps := n.SwapPauses(); len(ps) > 0 {
		b.ReportMetric(float64(ps[len(ps)/2].Microseconds())/1000, "p50-pause-ms")
		b.ReportMetric(float64(ps[len(ps)*99/100].Microseconds())/1000, "p99-pause-ms")
		b.ReportMetric(float64(ps[len(ps)-1].Microseconds())/1000, "max-pause-ms")
		b.ReportMetric(float64(len(ps)), "task-swaps")
	}
}

func testLoggerB() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }
