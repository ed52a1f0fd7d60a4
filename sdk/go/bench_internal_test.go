package eddy

import "testing"

// BenchmarkProcessMap measures the SDK's own per-record cost: decoding a
// batch of 1000 records of about 200 bytes, calling a Map and encoding the
// answer.
func BenchmarkProcessMap(b *testing.B) {
	register(b, func() { Map(func(r Record) (Record, error) { return r, nil }) })
	in := batch(1000, 200)
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		invoke(expProcess, in)
	}
	b.ReportMetric(float64(b.N)*1000/b.Elapsed().Seconds()/1e6, "Mrecords/s")
}
