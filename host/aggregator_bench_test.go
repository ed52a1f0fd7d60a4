package host

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/state"
	"github.com/eddy-streams/eddy/windowing"
)

// Shape of BenchmarkWindowedAggregate's input.
const (
	benchKeys      = 1000    // keys active at a time
	benchRotation  = 100_000 // records after which the active keys are replaced
	benchBatch     = 500     // records per batch, as a node's batch_size
	benchPerIter   = 300_000 // records per benchmark iteration
	benchCommitDur = 100 * time.Millisecond
)

// BenchmarkWindowedAggregate measures an aggregate step without Kafka: the
// aggregator (windower, state store on disk, folding) over a stream of
// count/sum records, in batches of 500 as a node runs them, committing the
// store every 100 ms as a node's transaction would (watermark saved,
// changes listed for the changelog, then written to Badger).
//
// The stream: 1000 keys at a time, round robin, one record per millisecond
// of event time with up to 50 ms of disorder, values small JSON integers;
// every 100,000 records the 1000 keys are replaced by others. So each key
// gets a record a second: 10 per 10 s tumbling window, 10 per hopping
// window (10 s every 2 s: each record is in 5 windows and folded once, into
// its 2 s pane, and a result merges 5 panes), and sessions (gap 5 s) last
// as long as their key is active.
//
// Functions: the stats guest in Go and C (testdata/*/stats.wasm) and the
// same aggregate in native Go over the same store path (nativeStats), so
// that the difference is the cost of Wasm. The "-peradd" variants flush
// after every add, as the store did before adds were batched (a read, an
// eddy_agg_add call and a write per record and state unit: window, or pane
// for hopping windows); Go has none, it would take minutes.
func BenchmarkWindowedAggregate(b *testing.B) {
	windows := []struct {
		name string
		cfg  windowing.Config
	}{
		{"tumbling", windowing.Config{Window: windowing.Tumbling(10 * time.Second), Disorder: 100 * time.Millisecond}},
		{"hopping", windowing.Config{Window: windowing.Hopping(10*time.Second, 2*time.Second), Disorder: 100 * time.Millisecond}},
		{"session", windowing.Config{Window: windowing.Session(5 * time.Second), Disorder: 100 * time.Millisecond}},
	}
	fns := []struct {
		name   string
		fn     func(b *testing.B) aggFuncs
		perAdd bool
	}{
		{"native", func(*testing.B) aggFuncs { return nativeStats{} }, false},
		{"native-peradd", func(*testing.B) aggFuncs { return nativeStats{} }, true},
		{"c", func(b *testing.B) aggFuncs { return loadAggGuest(b, "c/stats.wasm") }, false},
		{"c-peradd", func(b *testing.B) aggFuncs { return loadAggGuest(b, "c/stats.wasm") }, true},
		{"go", func(b *testing.B) aggFuncs { return loadAggGuest(b, "go/stats.wasm") }, false},
	}
	for _, w := range windows {
		for _, f := range fns {
			b.Run(w.name+"/"+f.name, func(b *testing.B) {
				benchAggregate(b, w.cfg, f.fn(b), f.perAdd)
			})
		}
	}
}

// eagerStore flushes after every add: the store before batching.
type eagerStore struct{ *windowStore }

func (s eagerStore) Add(key []byte, w windowing.Window, rec *abi.Record) error {
	if err := s.windowStore.Add(key, w, rec); err != nil {
		return err
	}
	return s.flush()
}

func benchAggregate(b *testing.B, cfg windowing.Config, fn aggFuncs, perAdd bool) {
	db, err := state.Open(b.TempDir(), state.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	st := db.Store("bench", "stats", 0)
	a, err := newAggregator(cfg, st, fn, "stats", 0, nil)
	if err != nil {
		b.Fatal(err)
	}
	if perAdd {
		if a.w, err = windowing.New(cfg, eagerStore{a.store}); err != nil {
			b.Fatal(err)
		}
	}
	const base = int64(1_700_000_000_000)
	keys := make([][]byte, 8*benchKeys)
	for i := range keys {
		keys[i] = []byte("user-" + strconv.Itoa(i))
	}
	values := make([][]byte, 1000)
	for i := range values {
		values[i] = []byte(strconv.Itoa(i))
	}
	batch := make([]abi.Record, benchBatch)
	var out aggOutput
	ctx := context.Background()
	n, emits, commits := 0, 0, 0
	var next int64
	lastCommit := time.Now()
	commit := func() {
		if err := a.saveWatermark(); err != nil {
			b.Fatal(err)
		}
		next += int64(len(st.Changes())) // the changelog records a node produces
		if err := st.Commit(next); err != nil {
			b.Fatal(err)
		}
		commits++
		lastCommit = time.Now()
	}
	b.ResetTimer()
	for range b.N {
		for end := n + benchPerIter; n < end; {
			for j := range batch {
				i := n + j
				batch[j] = abi.Record{
					Key:       keys[i%benchKeys+benchKeys*(i/benchRotation%8)],
					Value:     values[i*7%len(values)],
					Timestamp: base + int64(i) + int64(i*31%50),
				}
			}
			if err := a.process(ctx, batch, &out); err != nil {
				b.Fatal(err)
			}
			if len(out.Failed) > 0 || len(out.Late) > 0 {
				b.Fatalf("%d failed, %d late: %v", len(out.Failed), len(out.Late), out.Failed)
			}
			emits += len(out.Emits)
			n += len(batch)
			if time.Since(lastCommit) >= benchCommitDur {
				commit()
			}
		}
	}
	commit()
	b.StopTimer()
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "records/s")
	b.ReportMetric(float64(emits)/float64(n)*1000, "results/krec")
	b.ReportMetric(float64(commits)/b.Elapsed().Seconds(), "commits/s")
	if emits == 0 {
		b.Fatal("no window fired")
	}
}
