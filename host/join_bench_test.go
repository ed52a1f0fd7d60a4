package host_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/host"
	"github.com/eddy-streams/eddy/host/embedded"
	"github.com/eddy-streams/eddy/runtime"
)

// BenchmarkJoin measures exactly-once join pipelines end to end on an
// in-process broker (4 partitions, commit interval 100 ms): 200,000 stream
// records enriched from a 10,000-key table (co-partitioned and global), or
// paired with 200,000 records of a second stream within a ±1 s window,
// against a passthrough map over the same records as the baseline. Run with
// -benchtime 1x.
func BenchmarkJoin(b *testing.B) {
	pass, _ := filepath.Abs("../testdata/c/passthrough.wasm")
	const records, keys = 200_000, 10_000
	base := int64(1700000000000)
	value := func(i int) []byte {
		return []byte(fmt.Sprintf(`{"bidder":%d,"auction":%d,"price":%d,"channel":"web"}`, i%keys, i, i%997))
	}
	stream := func(i int) abi.Record {
		return abi.Record{Key: []byte(fmt.Sprintf("k%d", i%keys)), Value: value(i), Timestamp: base + int64(i)}
	}
	table := func(i int) abi.Record {
		return abi.Record{Key: []byte(fmt.Sprintf("k%d", i)), Value: []byte(fmt.Sprintf(`{"name":"person %d","city":"c%d"}`, i, i%100))}
	}
	cases := []struct {
		name, pipeline string
		table          bool // produce the table
		right          bool // produce the second stream
		outputs        int64
	}{
		{"baseline-map", fmt.Sprintf(`steps: [{name: pass, kind: map, function: %s}]`, pass), false, false, records},
		{"stream-table", `tables: [{name: people, topic: people}]
steps: [{name: enrich, kind: join, table: people, type: left}]`, true, false, records},
		{"stream-table-global", `tables: [{name: people, topic: people, global: true}]
steps: [{name: enrich, kind: join, table: people, type: left}]`, true, false, records},
		{"stream-stream-inner", `steps: [{name: pair, kind: join, stream: right, type: inner, window: {before: 1s, after: 1s, disorder: 10ms}}]`,
			false, true, 0},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			for range b.N {
				broker, err := embedded.Start(embedded.Config{Partitions: 4, Topics: []string{"in", "right", "people", "out", "dlq", "late"}})
				if err != nil {
					b.Fatal(err)
				}
				brokers := []string{broker.Addr()}
				produce := func(topic string, n int, rec func(int) abi.Record) {
					i := 0
					if _, err := host.Produce(context.Background(), brokers, topic, func() (abi.Record, error) {
						if i >= n {
							return abi.Record{}, io.EOF
						}
						i++
						return rec(i - 1), nil
					}, nil); err != nil {
						b.Fatal(err)
					}
				}
				if c.table {
					produce("people", keys, table)
				}
				produce("in", records, stream)
				in := int64(records)
				if c.right {
					produce("right", records, stream)
					in *= 2
				}
				path := filepath.Join(b.TempDir(), "p.yaml")
				os.WriteFile(path, []byte(fmt.Sprintf("name: bench\nsource: {topics: [in]}\n%s\nsink: {topic: out}\ndead_letter: {topic: dlq}\nlate: {topic: late}\ndelivery: exactly_once\ncommit_interval: 100ms\n", c.pipeline)), 0o644)
				p, err := host.LoadPipeline(path)
				if err != nil {
					b.Fatal(err)
				}
				eng, err := runtime.NewEngine(runtime.WithCacheDir(cacheDir))
				if err != nil {
					b.Fatal(err)
				}
				n, err := host.NewNode(context.Background(), p, host.NodeConfig{Brokers: brokers, NodeID: "bench", Engine: eng,
					Logger: testLoggerB(), DataDir: b.TempDir(), RegistryKey: testRegistryKey})
				if err != nil {
					b.Fatal(err)
				}
				ctx, cancel := context.WithCancel(context.Background())
				done := make(chan error, 1)
				began := time.Now()
				go func() { done <- n.Run(ctx) }()
				for n.Stats().In < in {
					select {
					case err := <-done:
						b.Fatalf("node stopped: %v", err)
					case <-time.After(5 * time.Millisecond):
					}
				}
				elapsed := time.Since(began)
				cancel()
				if err := <-done; err != nil {
					b.Fatal(err)
				}
				st := n.Stats()
				if c.outputs > 0 && st.Out != c.outputs {
					b.Fatalf("%d outputs, want %d", st.Out, c.outputs)
				}
				b.ReportMetric(float64(in)/elapsed.Seconds(), "records/s")
				b.ReportMetric(float64(st.Out), "outputs")
				eng.Close(context.Background())
				broker.Close()
			}
		})
	}
}
