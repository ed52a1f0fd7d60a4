package runtime_test

import (
	"context"
	"testing"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/runtime"
)

// BenchmarkProcessState runs the counter guest (a state_get and a
// state_put per record) over a batch of 1024 records of 1000 keys, with a
// map behind the state calls: the cost of the keyed-state path, the
// per-call writes (state.go) included.
func BenchmarkProcessState(b *testing.B) {
	batch := benchBatch(benchBatchSize)
	e := newEngine(b)
	for _, lang := range []string{"go", "rust", "c"} {
		b.Run(lang, func(b *testing.B) {
			f := load(b, e, lang+"/counter.wasm")
			benchState(b, f, batch)
		})
	}
}

func benchState(b *testing.B, f *runtime.Function, batch []abi.Record) {
	inst, err := f.Acquire(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	defer f.Release(context.Background(), inst)
	inst.SetState(mapState{})
	var out runtime.Output
	measure(b, len(batch), func() int {
		out.Reset()
		if err := inst.Process(context.Background(), batch, &out); err != nil || len(out.Failed) > 0 {
			b.Fatal(err, out.Failed)
		}
		return len(out.Records)
	})
}
