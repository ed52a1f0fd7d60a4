package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"runtime/metrics"
	"runtime/pprof"
	"strconv"
	"testing"
	"time"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/host"
	"github.com/eddy-streams/eddy/runtime"
)

// brokerProcess starts `eddy broker` as a child process, so that the
// benchmark's own memory is the node's alone.
func brokerProcess(b *testing.B, bin string) []string {
	port := freePort(b)
	cmd := exec.Command(bin, "broker", "--port", strconv.Itoa(port), "--partitions", "4")
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	brokers := []string{"127.0.0.1:" + strconv.Itoa(port)}
	for i := 0; i < 200; i++ {
		if err := host.CreateTopics(context.Background(), brokers, 4, "in", "out", "dlq"); err == nil {
			return brokers
		}
		time.Sleep(50 * time.Millisecond)
	}
	b.Fatal("broker did not start")
	return nil
}

func produceBacklog(b *testing.B, brokers []string, n int) {
	// Values of ~200 bytes that vary like real events (ids, amounts, a
	// random note), so that they compress as real data does (2-3x), not
	// 20x as identical values would.
	i := 0
	rng := rand.New(rand.NewPCG(7, 7))
	note := make([]byte, 64)
	_, err := host.Produce(context.Background(), brokers, "in", func() (abi.Record, error) {
		if i >= n {
			return abi.Record{}, io.EOF
		}
		i++
		for j := range note {
			note[j] = "abcdefghijklmnopqrstuvwxyz0123456789 "[rng.IntN(37)]
		}
		v := fmt.Sprintf(`{"id":%d,"user":"user-%05d","amount":%d.%02d,"currency":"EUR","note":"%s","ts":%d}`,
			i, rng.IntN(100000), rng.IntN(300), rng.IntN(100), note, 1700000000000+int64(i))
		return abi.Record{Key: []byte(fmt.Sprintf("user-%05d", i%1000)), Value: []byte(v), Timestamp: int64(i)}, nil
	}, nil)
	if err != nil {
		b.Fatal(err)
	}
}

// runNode runs a node of guest over the backlog until it has processed n
// records, stops it cleanly (committing), and returns the elapsed time and
// the peak Go heap seen meanwhile.
func runNode(b *testing.B, brokers []string, guest string, d host.Delivery, interval time.Duration, n int) (time.Duration, uint64) {
	wasm, _ := filepath.Abs(td(guest))
	path := filepath.Join(b.TempDir(), "p.yaml")
	os.WriteFile(path, []byte(fmt.Sprintf(`name: bench-%d
source: {topics: [in]}
steps:
  - {name: fn, kind: map, function: %s}
sink: {topic: out}
dead_letter: {topic: dlq}
delivery: %s
commit_interval: %s
batch_size: 500
`, time.Now().UnixNano(), wasm, d, interval)), 0o644)
	p, err := host.LoadPipeline(path)
	if err != nil {
		b.Fatal(err)
	}
	eng, err := runtime.NewEngine(runtime.WithCacheDir(cacheDir))
	if err != nil {
		b.Fatal(err)
	}
	defer eng.Close(context.Background())
	node, err := host.NewNode(context.Background(), p, host.NodeConfig{Brokers: brokers, NodeID: "bench", Engine: eng,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), UnsignedRegistry: true})
	if err != nil {
		b.Fatal(err)
	}
	goruntime.GC()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	start := time.Now()
	go func() { done <- node.Run(ctx) }()
	// The peak of the live heap (as measured by each GC): what the node
	// retains, without the garbage that GC pacing lets accumulate.
	var peak uint64
	var ms goruntime.MemStats
	live := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	var first time.Duration
	for node.Stats().In < int64(n) {
		goruntime.ReadMemStats(&ms)
		metrics.Read(live)
		peak = max(peak, live[0].Value.Uint64())
		if f := os.Getenv("EDDY_BENCH_HEAPPROFILE"); f != "" && ms.HeapInuse > 250<<20 {
			if out, err := os.Create(f); err == nil {
				goruntime.GC()
				pprof.WriteHeapProfile(out)
				out.Close()
				os.Setenv("EDDY_BENCH_HEAPPROFILE", "")
			}
		}
		time.Sleep(20 * time.Millisecond)
		if in := node.Stats().In; in > 0 && first == 0 {
			first = time.Since(start)
		}
	}
	if os.Getenv("EDDY_BENCH_DEBUG") != "" {
		b.Logf("first record after %s", first)
	}
	cancel()
	if err := <-done; err != nil {
		b.Fatal(err)
	}
	return time.Since(start), peak
}

// BenchmarkNodeEndToEnd measures a node moving a backlog from Kafka through a
// Wasm map to Kafka, under each delivery guarantee, against an `eddy broker`
// child process. Each iteration processes the whole backlog with a new
// consumer group. Metrics: records/s and the peak live Go heap of the node.
func BenchmarkNodeEndToEnd(b *testing.B) {
	bin := buildEddy(b)
	brokers := brokerProcess(b, bin)
	const n = 200000
	produceBacklog(b, brokers, n)
	for _, c := range []struct {
		name     string
		d        host.Delivery
		interval time.Duration
	}{
		{"at_least_once", host.AtLeastOnce, 100 * time.Millisecond},
		{"exactly_once-100ms", host.ExactlyOnce, 100 * time.Millisecond},
		{"exactly_once-1s", host.ExactlyOnce, time.Second},
	} {
		for _, guest := range []string{"c/upper.wasm", "go/upper.wasm"} {
			b.Run(c.name+"/"+filepath.Dir(guest), func(b *testing.B) {
				var total time.Duration
				var peak uint64
				for b.Loop() {
					el, pk := runNode(b, brokers, guest, c.d, c.interval, n)
					total += el
					peak = max(peak, pk)
				}
				b.ReportMetric(float64(n*b.N)/total.Seconds(), "records/s")
				b.ReportMetric(float64(peak)/(1<<20), "peak-live-heap-MiB")
			})
		}
	}
}

// BenchmarkNodeBoundedMemory runs a slow function (the Go JSON filter, about
// 60,000 records/s) over backlogs of growing size: the input outpaces the
// processing, and the node's peak heap must not grow with the backlog.
func BenchmarkNodeBoundedMemory(b *testing.B) {
	bin := buildEddy(b)
	for _, backlog := range []int{50000, 200000, 600000} {
		b.Run(fmt.Sprintf("backlog-%d", backlog), func(b *testing.B) {
			brokers := brokerProcess(b, bin)
			produceBacklog(b, brokers, backlog)
			var peak uint64
			for b.Loop() {
				_, pk := runNode(b, brokers, "go/filter.wasm", host.AtLeastOnce, 100*time.Millisecond, backlog)
				peak = max(peak, pk)
			}
			b.ReportMetric(float64(peak)/(1<<20), "peak-live-heap-MiB")
		})
	}
}
