package windowing

import (
	"strconv"
	"testing"
	"time"

	"github.com/eddy-streams/eddy/abi"
)

// countStore is the cheapest Store: a map of counts, to measure the
// Windower's own cost per record.
type countStore map[storeKey]int64

func (s countStore) Add(key []byte, w Window, _ *abi.Record) error {
	s[storeKey{string(key), w}]++
	return nil
}
func (s countStore) Merge([]byte, Window, []Window) error { return nil }
func (s countStore) Result(key []byte, _ Window, srcs []Window) ([]byte, error) {
	var n int64
	for _, w := range srcs {
		n += s[storeKey{string(key), w}]
	}
	return strconv.AppendInt(nil, n, 10), nil
}
func (s countStore) Delete(key []byte, w Window) error {
	delete(s, storeKey{string(key), w})
	return nil
}

// BenchmarkTumblingCount counts 1000 keys in 1 s tumbling windows, records
// 1 ms apart on 4 partitions with 100 ms disorder, final emission.
func BenchmarkTumblingCount(b *testing.B) {
	benchCount(b, Tumbling(time.Second))
}

// BenchmarkHoppingCount is BenchmarkTumblingCount with 5 s windows every
// second: each record is in 5 windows and one pane.
func BenchmarkHoppingCount(b *testing.B) {
	benchCount(b, Hopping(5*time.Second, time.Second))
}

func benchCount(b *testing.B, spec Spec) {
	const keys, parts = 1000, 4
	recs := make([]abi.Record, 1<<16)
	for i := range recs {
		recs[i] = abi.Record{Key: []byte("key-" + strconv.Itoa(i%keys)), Value: []byte("1")}
	}
	store := countStore{}
	w, err := New(Config{Window: spec, Disorder: 100 * time.Millisecond}, store)
	if err != nil {
		b.Fatal(err)
	}
	var out Output
	n := 0
	b.ReportAllocs()
	for b.Loop() {
		r := &recs[n&(len(recs)-1)]
		r.Timestamp = int64(n / parts)
		if err := w.Process(int32(n%parts), r, &out); err != nil {
			b.Fatal(err)
		}
		if len(out.Emits) > 0 {
			out.Reset()
		}
		n++
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "records/s")
	if len(store) > 2*int(spec.Size/spec.Advance)*keys {
		b.Fatalf("%d accumulators held: state does not expire", len(store))
	}
}
