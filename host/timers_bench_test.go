package host_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/eddy-streams/eddy/abi"
)

// BenchmarkTimers measures what timers cost a stateful step, in process,
// on the same 20,000 records of 12 keys (quietInput) committed every
// 1,000: the counter guest (keyed state, no timers) against the timeout
// guest (keyed state, and an event-time timer moved at every record, fired
// when a key goes quiet), in batches of 500 and of 50 records.
func BenchmarkTimers(b *testing.B) {
	recs := quietInput(9, 20000)
	for _, batch := range []int{500, 50} {
		for _, guest := range []string{"counter", "timeout"} {
			b.Run(fmt.Sprintf("%s/batch=%d", guest, batch), func(b *testing.B) {
				fn, _ := filepath.Abs("../testdata/go/" + guest + ".wasm")
				kind := "map"
				if guest == "timeout" {
					kind = "filter"
				}
				p := loadPipeline(b, fmt.Sprintf(`name: bench-%s
source: {topics: [in]}
steps:
  - {name: s, kind: %s, function: %s, state: true}
sink: {topic: out}
delivery: exactly_once
batch_size: %d
`, guest, kind, fn, batch))
				ctx := context.Background()
				for b.Loop() {
					b.StopTimer()
					ip := startInProcess(b, p, 1)
					out := 0
					ip.Out = func(string, abi.Record, time.Time) { out++ }
					b.StartTimer()
					for i := 0; i < len(recs); i += 1000 {
						if err := ip.Send(ctx, "in", recs[i:min(i+1000, len(recs))]); err != nil {
							b.Fatal(err)
						}
						if err := ip.Commit(); err != nil {
							b.Fatal(err)
						}
					}
					if err := ip.Flush(ctx); err != nil {
						b.Fatal(err)
					}
					if out == 0 {
						b.Fatal("no output")
					}
				}
				b.ReportMetric(float64(len(recs))*float64(b.N)/b.Elapsed().Seconds(), "records/s")
			})
		}
	}
}
