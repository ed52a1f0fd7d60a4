package host_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/host"
	"github.com/eddy-streams/eddy/internal/testkafka"
	"github.com/eddy-streams/eddy/runtime"
	"github.com/eddy-streams/eddy/state"
)

// BenchmarkRestore measures how fast a store is restored from its
// changelog (issue 21, item 4), beside the two halves of that work on the
// same records in the same run:
//
//   - restore: a node with an empty data directory is assigned the one
//     partition of a stateful step whose changelog holds the records; timed
//     from the node's start until the restore is over (status shows none
//     and the partition is held);
//   - fetch: the changelog partition read to its end by a franz-go client
//     as the restore reads it (read_committed), nothing written;
//   - badger: the records written into a fresh on-disk store through
//     state.Store.Restore in batches of the size a fetch gives (the write
//     path of a restore), no Kafka.
//
// Each reports records/s and MB/s of keys and values.
//
//	go test ./host/ -run XXX -bench BenchmarkRestore -benchtime 1x
func BenchmarkRestore(b *testing.B) {
	const records, valueSize = 200_000, 512
	value := make([]byte, valueSize)
	for i := range value {
		value[i] = byte('a' + i%26)
	}
	recs := make([]abi.Record, records)
	bytes := 0
	for i := range recs {
		recs[i] = abi.Record{Key: []byte(fmt.Sprintf("key-%09d", i)), Value: value}
		bytes += len(recs[i].Key) + len(value)
	}
	report := func(b *testing.B, d time.Duration) {
		b.ReportMetric(float64(records)/d.Seconds(), "records/s")
		b.ReportMetric(float64(bytes)/d.Seconds()/1e6, "MB/s")
		b.ReportMetric(0, "ns/op")
	}
	bk := testkafka.StartPartitions(b, 1, "in", "out")
	b.Run("restore", func(b *testing.B) {
		var total time.Duration
		for i := 0; b.Loop(); i++ {
			name := fmt.Sprintf("restoring%d", i)
			p := loadPipeline(b, fmt.Sprintf(`name: %s
source: {topics: [in]}
steps:
  - {name: keep, kind: map, function: "native:pass", state: true}
sink: {topic: out}
delivery: exactly_once
`, name))
			produceAll(b, bk.Brokers(), host.ChangelogTopic(name, "keep"), recs)
			eng, err := runtime.NewEngine(runtime.WithCacheDir(cacheDir))
			if err != nil {
				b.Fatal(err)
			}
			pass := func() runtime.Native {
				return runtime.Native{ProcessState: func(_ runtime.State, rec *abi.Record, emit func(abi.Record)) error { emit(*rec); return nil }}
			}
			n, err := host.NewNode(context.Background(), p, host.NodeConfig{Brokers: bk.Brokers(), NodeID: "r", Engine: eng,
				DataDir: b.TempDir(), Natives: map[string]func() runtime.Native{"pass": pass}})
			if err != nil {
				b.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			start := time.Now()
			go func() { done <- n.Run(ctx) }()
			for {
				st := n.Status()
				if len(st.Partitions["in"]) > 0 && len(st.Restores) == 0 {
					break
				}
				select {
				case err := <-done:
					b.Fatalf("node stopped: %v", err)
				case <-time.After(time.Millisecond):
				}
			}
			total += time.Since(start)
			cancel()
			<-done
			eng.Close(context.Background())
		}
		report(b, total/time.Duration(b.N))
	})
	b.Run("fetch", func(b *testing.B) {
		topic := "fetch-only"
		produceAll(b, bk.Brokers(), topic, recs)
		var total time.Duration
		for b.Loop() {
			cl, err := kgo.NewClient(kgo.SeedBrokers(bk.Brokers()...),
				kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().AtStart()}}),
				kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.FetchMaxWait(100*time.Millisecond), kgo.KeepControlRecords())
			if err != nil {
				b.Fatal(err)
			}
			start := time.Now()
			got := 0
			for got < records {
				fs := cl.PollFetches(context.Background())
				if err := fs.Err0(); err != nil {
					b.Fatal(err)
				}
				got += fs.NumRecords()
			}
			total += time.Since(start)
			cl.Close()
		}
		report(b, total/time.Duration(b.N))
	})
	b.Run("badger", func(b *testing.B) {
		var total time.Duration
		for b.Loop() {
			db, err := state.Open(b.TempDir(), state.Options{})
			if err != nil {
				b.Fatal(err)
			}
			st := db.Store("p", "s", 0)
			const batch = 10_000 // about what one fetch of 512-byte records gives
			changes := make([]state.Change, 0, batch)
			start := time.Now()
			for i := range recs {
				changes = append(changes, state.Change{Key: recs[i].Key, Value: recs[i].Value})
				if len(changes) == batch || i == len(recs)-1 {
					if err := st.Restore(changes, int64(i+1)); err != nil {
						b.Fatal(err)
					}
					changes = changes[:0]
				}
			}
			total += time.Since(start)
			db.Close()
		}
		report(b, total/time.Duration(b.N))
	})
}
