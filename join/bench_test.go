package join

import (
	"strconv"
	"testing"
	"time"

	"github.com/eddy-streams/eddy/abi"
)

// BenchmarkWindowJoinInner joins two streams of 100 keys in an inner join
// with a ±50 ms window and 10 ms disorder: each side gets one record per
// millisecond (alternating inputs 0 and 1), each key every 100 ms of a side,
// so about one pair per two records. The buffer is the in-memory memBuffer,
// so the figure is the join's own cost plus a cheap store.
func BenchmarkWindowJoinInner(b *testing.B) {
	const keys = 100
	recs := make([]abi.Record, 1<<12)
	for i := range recs {
		recs[i] = abi.Record{Key: []byte("key-" + strconv.Itoa((i/2)%keys)), Value: []byte("value-" + strconv.Itoa(i))}
	}
	buf := newMemBuffer()
	j, err := NewWindowJoin(Config{Before: 50 * time.Millisecond, After: 50 * time.Millisecond, Disorder: 10 * time.Millisecond}, buf)
	if err != nil {
		b.Fatal(err)
	}
	j.Assign(0, 1)
	var out Output
	n, pairs := 0, 0
	b.ReportAllocs()
	for b.Loop() {
		r := &recs[n&(len(recs)-1)]
		r.Timestamp = int64(n / 2)
		if err := j.Process(Side(n&1), int32(n&1), r, &out); err != nil {
			b.Fatal(err)
		}
		if len(out.Pairs) > 0 {
			pairs += len(out.Pairs)
			out.Reset()
		}
		n++
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "records/s")
	b.ReportMetric(float64(pairs)/float64(n), "pairs/record")
	if s := j.Stats(); s.Buffered > 300 || buf.n != s.Buffered {
		b.Fatalf("%d records buffered (%d in the buffer): records do not expire", s.Buffered, buf.n)
	}
}
