package host_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"
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
//     state.Store.Restore in batches of RestoreBatchBytes (the write path
//     of a restore), no Kafka;
//   - ceiling: the same keys (with a store's prefix) and values written
//     by Badger alone, in one WriteBatch, under the options state.Open
//     gives it: what this disk and Badger allow a restore at best.
//
// Each reports records/s and MB/s of keys and values; restore also
// MB/s-restoring, from when the node's status shows the restore until it
// is over (without the node's start). The broker is kfake, in this
// process: its work for fetch and restore takes CPU from the rest.
//
//	go test ./host/ -run XXX -bench BenchmarkRestore -benchtime 1x
func BenchmarkRestore(b *testing.B) {
	const records, valueSize = 200_000, 512
	// Values that do not compress: the fetches' sizes, on the wire, are
	// then the records' size (compressed changelogs bring more records a
	// fetch).
	rnd := rand.NewChaCha8([32]byte{})
	recs := make([]abi.Record, records)
	bytes := 0
	for i := range recs {
		value := make([]byte, valueSize)
		rnd.Read(value)
		recs[i] = abi.Record{Key: []byte(fmt.Sprintf("key-%09d", i)), Value: value}
		bytes += len(recs[i].Key) + len(recs[i].Value)
	}
	report := func(b *testing.B, d time.Duration) {
		b.ReportMetric(float64(records)/d.Seconds(), "records/s")
		b.ReportMetric(float64(bytes)/d.Seconds()/1e6, "MB/s")
		b.ReportMetric(0, "ns/op")
	}
	bk := testkafka.StartPartitions(b, 1, "in", "out")
	// Pipelines are named by a count kept across runs of the sub-benchmark
	// (-count runs it again on the same broker): each restores a changelog
	// of its own that holds the records once.
	runs := 0
	b.Run("restore", func(b *testing.B) {
		var total, restoring time.Duration
		for b.Loop() {
			name := fmt.Sprintf("restoring%d", runs)
			runs++
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
			var began time.Time // when status first shows the restore
			go func() { done <- n.Run(ctx) }()
			for {
				st := n.Status()
				if began.IsZero() && len(st.Restores) > 0 {
					began = time.Now()
				}
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
			if !began.IsZero() {
				restoring += time.Since(began)
			}
			cancel()
			<-done
			eng.Close(context.Background())
		}
		report(b, total/time.Duration(b.N))
		// The restore alone, without the node's start (its clients, the
		// group's join).
		b.ReportMetric(float64(bytes)/(restoring/time.Duration(b.N)).Seconds()/1e6, "MB/s-restoring")
	})
	const fetchTopic = "fetch-only"
	produceAll(b, bk.Brokers(), fetchTopic, recs)
	b.Run("fetch", func(b *testing.B) {
		topic := fetchTopic
		var total time.Duration
		for b.Loop() {
			cl, err := kgo.NewClient(kgo.SeedBrokers(bk.Brokers()...),
				kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().AtStart()}}),
				kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.FetchMaxWait(100*time.Millisecond), kgo.KeepControlRecords(),
				kgo.FetchMaxBytes(host.RestoreFetchBytes), kgo.FetchMaxPartitionBytes(host.RestoreFetchBytes))
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
			var changes []state.Change
			size := 0
			start := time.Now()
			for i := range recs {
				changes = append(changes, state.Change{Key: recs[i].Key, Value: recs[i].Value})
				size += len(recs[i].Key) + len(recs[i].Value)
				if size >= host.RestoreBatchBytes || i == len(recs)-1 {
					if err := st.Restore(changes, int64(i+1)); err != nil {
						b.Fatal(err)
					}
					changes, size = changes[:0], 0
				}
			}
			total += time.Since(start)
			db.Close()
		}
		report(b, total/time.Duration(b.N))
	})
	b.Run("ceiling", func(b *testing.B) {
		var total time.Duration
		for b.Loop() {
			bdb, err := badger.Open(state.BadgerOptions(b.TempDir()))
			if err != nil {
				b.Fatal(err)
			}
			keys := make([][]byte, len(recs))
			for i := range recs {
				keys[i] = append([]byte("d\x01p\x01s\x00\x00\x00\x00"), recs[i].Key...)
			}
			start := time.Now()
			wb := bdb.NewWriteBatch()
			for i := range recs {
				if err := wb.Set(keys[i], recs[i].Value); err != nil {
					b.Fatal(err)
				}
			}
			if err := wb.Flush(); err != nil {
				b.Fatal(err)
			}
			total += time.Since(start)
			bdb.Close()
		}
		report(b, total/time.Duration(b.N))
	})
}
