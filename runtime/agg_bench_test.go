package runtime_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/runtime"
)

// BenchmarkAggregate measures the aggregate calls of the stats guest in
// every language (testdata/<lang>/stats.wasm: count and sum of JSON
// numbers), in the shapes a windowed aggregate step makes them: 500 groups
// of one record each (a batch spread over many keys, as a tumbling window
// over 1000 keys gets it), one group of 500 records (one hot key), and
// eddy_agg_merge and eddy_agg_result over 500 accumulators. Values are small
// JSON integers. Metrics: records/s (groups/s for merge and result),
// allocations per record and ns per record.
func BenchmarkAggregate(b *testing.B) {
	const n = 500
	keys := make([][]byte, n)
	recs := make([]abi.Record, n)
	for i := range recs {
		keys[i] = []byte("user-" + strconv.Itoa(i))
		recs[i] = abi.Record{Key: keys[i], Value: []byte(strconv.Itoa(i * 7 % 1000)), Timestamp: 1_700_000_000_000 + int64(i)}
	}
	e := newEngine(b)
	for _, lang := range []string{"go", "c", "rust", "assemblyscript"} {
		guest := lang + "/stats.wasm"
		b.Run("add-1x500/"+lang, func(b *testing.B) {
			inst, ctx := acquire(b, load(b, e, guest))
			groups := make([]abi.Group, n)
			for i := range groups {
				groups[i] = abi.Group{Key: keys[i], Records: recs[i : i+1]}
			}
			var out []abi.Added
			var failed []*runtime.Error
			measure(b, n, func() int {
				var err error
				out, failed, err = inst.AggAdd(ctx, groups, out[:0], failed[:0])
				if err != nil || len(failed) > 0 {
					b.Fatal(err, failed)
				}
				for i := range groups {
					groups[i].Acc = out[i].Acc
				}
				return n
			})
		})
		b.Run("add-500x1/"+lang, func(b *testing.B) {
			inst, ctx := acquire(b, load(b, e, guest))
			groups := []abi.Group{{Key: keys[0], Records: recs}}
			var out []abi.Added
			var failed []*runtime.Error
			measure(b, n, func() int {
				var err error
				out, failed, err = inst.AggAdd(ctx, groups, out[:0], failed[:0])
				if err != nil || len(failed) > 0 {
					b.Fatal(err, failed)
				}
				groups[0].Acc = out[0].Acc
				return n
			})
		})
		accs := func(b *testing.B, inst *runtime.Instance, ctx context.Context) [][]byte {
			groups := make([]abi.Group, n)
			for i := range groups {
				groups[i] = abi.Group{Key: keys[i], Records: recs[i : i+1]}
			}
			out, failed, err := inst.AggAdd(ctx, groups, nil, nil)
			if err != nil || len(failed) > 0 {
				b.Fatal(err, failed)
			}
			a := make([][]byte, n)
			for i := range out {
				a[i] = out[i].Acc
			}
			return a
		}
		b.Run("merge-500/"+lang, func(b *testing.B) {
			inst, ctx := acquire(b, load(b, e, guest))
			a := accs(b, inst, ctx)
			var out []runtime.Result
			measure(b, n, func() int {
				var err error
				if out, err = inst.AggMerge(ctx, keys, a, a, out[:0]); err != nil {
					b.Fatal(err)
				}
				return n
			})
		})
		b.Run("result-500/"+lang, func(b *testing.B) {
			inst, ctx := acquire(b, load(b, e, guest))
			a := accs(b, inst, ctx)
			var out []runtime.Result
			measure(b, n, func() int {
				var err error
				if out, err = inst.AggResult(ctx, keys, a, out[:0]); err != nil {
					b.Fatal(err)
				}
				return n
			})
		})
	}
}

// acquire takes an instance of f for the rest of the benchmark.
func acquire(b *testing.B, f *runtime.Function) (*runtime.Instance, context.Context) {
	ctx := context.Background()
	inst, err := f.Acquire(ctx)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { f.Release(ctx, inst) })
	return inst, ctx
}
