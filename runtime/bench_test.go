package runtime_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	goruntime "runtime"
	"strconv"
	"testing"
	"time"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/runtime"
)

// benchBatch returns n records of about 200 bytes (10-byte key, ~190-byte
// JSON value), half of them with amount >= 100.
func benchBatch(n int) []abi.Record {
	recs := make([]abi.Record, n)
	for i := range recs {
		v := fmt.Sprintf(`{"id":%d,"user":"user-%05d","amount":%d.25,"currency":"EUR","note":"the quick brown fox jumps over the lazy dog again and again","ts":%d}`,
			i, i%1000, 50+(i%2)*100, 1700000000000+int64(i))
		recs[i] = abi.Record{Key: fmt.Appendf(nil, "user-%05d", i%1000), Value: []byte(v), Timestamp: 1700000000000 + int64(i)}
	}
	return recs
}

const benchBatchSize = 1024

// nativeFunc is the same logic as a guest, written as a host Go function:
// it appends its outputs for one record to out, copying bytes into arena as
// the host copies a guest's answer.
type nativeFunc func(r *abi.Record, out []abi.Record, arena []byte) ([]abi.Record, []byte)

// BenchmarkProcess compares each reference guest, in every language
// (testdata/<lang>), with its native twin in one run: "native" is the bare
// Go loop, "native-runtime" the same logic as a runtime.Native called through
// Instance.Process (what the runtime path itself costs). Metrics: records/s
// and allocations per record.
func BenchmarkProcess(b *testing.B) {
	cases := []struct {
		name   string
		guest  string
		native nativeFunc
		// viaRuntime is native's logic as a runtime.Native.
		viaRuntime func() runtime.Native
	}{
		{"passthrough", "passthrough.wasm", nativePassthrough, passthroughNative},
		{"map-upper", "upper.wasm", nativeUpper, upperNative},
		{"filter-amount", "filter.wasm", nativeFilter, filterAmountNative},
	}
	batch := benchBatch(benchBatchSize)
	e := newEngine(b)
	for _, tc := range cases {
		for _, lang := range []string{"go", "rust", "c", "assemblyscript"} {
			for _, mode := range []struct {
				name string
				opts []runtime.Option
			}{{"wasm", nil}, {"wasm-uninterruptible", []runtime.Option{runtime.WithUninterruptible()}}} {
				b.Run(tc.name+"/"+lang+"/"+mode.name, func(b *testing.B) {
					benchWasm(b, e, lang+"/"+tc.guest, batch, mode.opts...)
				})
			}
		}
		b.Run(tc.name+"/native", func(b *testing.B) {
			var out []abi.Record
			var arena []byte
			measure(b, len(batch), func() int {
				out, arena = out[:0], arena[:0]
				for i := range batch {
					out, arena = tc.native(&batch[i], out, arena)
				}
				return len(out)
			})
		})
		b.Run(tc.name+"/native-runtime", func(b *testing.B) {
			benchFunction(b, loadNative(b, e, tc.name, tc.viaRuntime), batch)
		})
	}
}

// passthroughNative emits every record as it is.
func passthroughNative() runtime.Native {
	return runtime.Native{Process: func(r *abi.Record, emit func(abi.Record)) error {
		emit(*r)
		return nil
	}}
}

// filterAmountNative is nativeFilter as a runtime.Native.
func filterAmountNative() runtime.Native {
	return runtime.Native{Process: func(r *abi.Record, emit func(abi.Record)) error {
		if !json.Valid(r.Value) {
			return nil
		}
		if amount, ok := topLevelNumber(r.Value, "amount"); ok && amount >= 100 {
			emit(*r)
		}
		return nil
	}}
}

func benchWasm(b *testing.B, e *runtime.Engine, guest string, batch []abi.Record, opts ...runtime.Option) {
	benchFunction(b, load(b, e, guest, opts...), batch)
}

// benchFunction runs batch through one instance of f, one batch per
// iteration.
func benchFunction(b *testing.B, f *runtime.Function, batch []abi.Record) {
	inst, err := f.Acquire(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	defer f.Release(context.Background(), inst)
	var out runtime.Output
	measure(b, len(batch), func() int {
		out.Reset()
		if err := inst.Process(context.Background(), batch, &out); err != nil || len(out.Failed) > 0 {
			b.Fatal(err, out.Failed)
		}
		return len(out.Records)
	})
}

// measure runs one batch per iteration and reports records/s and
// allocations per record.
func measure(b *testing.B, batch int, run func() int) {
	run() // warm up: buffers reach their steady size
	var before, after goruntime.MemStats
	goruntime.ReadMemStats(&before)
	start := time.Now()
	iters := 0
	for b.Loop() {
		run()
		iters++
	}
	elapsed := time.Since(start)
	goruntime.ReadMemStats(&after)
	recs := float64(iters * batch)
	b.ReportMetric(recs/elapsed.Seconds(), "records/s")
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/recs, "allocs/record")
	b.ReportMetric(float64(elapsed.Nanoseconds())/recs, "ns/record")
}

func nativePassthrough(r *abi.Record, out []abi.Record, arena []byte) ([]abi.Record, []byte) {
	k, v := len(arena), len(arena)+len(r.Key)
	arena = append(append(arena, r.Key...), r.Value...)
	return append(out, abi.Record{Key: arena[k:v:v], Value: arena[v:], Timestamp: r.Timestamp, Headers: r.Headers}), arena
}

// nativeUpper is guests/go/upper's ASCII path: eight bytes at a time.
func nativeUpper(r *abi.Record, out []abi.Record, arena []byte) ([]abi.Record, []byte) {
	k := len(arena)
	arena = append(arena, r.Key...)
	v := len(arena)
	arena = append(arena, r.Value...)
	d := arena[v:]
	i := 0
	for ; len(d)-i >= 8; i += 8 {
		x := binary.LittleEndian.Uint64(d[i:])
		if x&0x8080808080808080 != 0 {
			return nativeUpperSlow(r, out, arena[:v], k)
		}
		lower := (x + (0x80-'a')*0x0101010101010101) &^ (x + (0x80-'z'-1)*0x0101010101010101) & 0x8080808080808080
		binary.LittleEndian.PutUint64(d[i:], x^lower>>2)
	}
	for ; i < len(d); i++ {
		if d[i] >= 0x80 {
			return nativeUpperSlow(r, out, arena[:v], k)
		}
		if 'a' <= d[i] && d[i] <= 'z' {
			d[i] -= 'a' - 'A'
		}
	}
	return append(out, abi.Record{Key: arena[k:v:v], Value: d, Timestamp: r.Timestamp}), arena
}

func nativeUpperSlow(r *abi.Record, out []abi.Record, arena []byte, k int) ([]abi.Record, []byte) {
	v := len(arena)
	arena = append(arena, bytes.ToUpper(r.Value)...)
	return append(out, abi.Record{Key: arena[k:v:v], Value: arena[v:], Timestamp: r.Timestamp}), arena
}

// nativeFilter is guests/go/filter's logic: keep records whose value is valid
// JSON with a top-level "amount" number >= 100. Like the guest, it validates
// the JSON and scans for the field without building values.
func nativeFilter(r *abi.Record, out []abi.Record, arena []byte) ([]abi.Record, []byte) {
	if !json.Valid(r.Value) {
		return out, arena
	}
	amount, ok := topLevelNumber(r.Value, "amount")
	if !ok || amount < 100 {
		return out, arena
	}
	return nativePassthrough(r, out, arena)
}

// topLevelNumber finds a top-level numeric field of a flat-enough JSON object
// (strings and nested values are skipped).
func topLevelNumber(v []byte, field string) (float64, bool) {
	depth := 0
	for i := 0; i < len(v); i++ {
		switch c := v[i]; c {
		case '{', '[':
			depth++
		case '}', ']':
			depth--
		case '"':
			j := i + 1
			for j < len(v) && v[j] != '"' {
				if v[j] == '\\' {
					j++
				}
				j++
			}
			key := v[i+1 : min(j, len(v))]
			i = j
			if depth != 1 || string(key) != field {
				continue
			}
			k := i + 1
			for k < len(v) && (v[k] == ' ' || v[k] == ':') {
				k++
			}
			end := k
			for end < len(v) && (v[end] == '-' || v[end] == '.' || v[end] == 'e' || v[end] == 'E' || v[end] == '+' || (v[end] >= '0' && v[end] <= '9')) {
				end++
			}
			f, err := strconv.ParseFloat(string(v[k:end]), 64)
			return f, err == nil
		}
	}
	return 0, false
}

// BenchmarkLoad measures how long a function takes to be ready (compile or
// cache hit, validate, first instance, manifest): cold compiles into an empty
// cache every time, warm finds it in the on-disk cache as after a restart.
func BenchmarkLoad(b *testing.B) {
	for _, guest := range []string{"go/upper.wasm", "wat/dropall.wasm"} {
		wasm := fixture(b, guest)
		b.Run(guest+"/cold", func(b *testing.B) {
			for b.Loop() {
				e, err := runtime.NewEngine(runtime.WithoutCache())
				if err != nil {
					b.Fatal(err)
				}
				f, err := e.Load(context.Background(), "f", wasm)
				if err != nil {
					b.Fatal(err)
				}
				f.Close(context.Background())
				e.Close(context.Background())
			}
		})
		b.Run(guest+"/warm", func(b *testing.B) {
			dir := b.TempDir()
			warm := func() {
				e, err := runtime.NewEngine(runtime.WithCacheDir(dir))
				if err != nil {
					b.Fatal(err)
				}
				f, err := e.Load(context.Background(), "f", wasm)
				if err != nil {
					b.Fatal(err)
				}
				f.Close(context.Background())
				e.Close(context.Background())
			}
			warm()
			for b.Loop() {
				warm()
			}
		})
	}
}

// BenchmarkInstantiate measures a new instance of a loaded function (what a
// task pays on assignment and after a guest failure).
func BenchmarkInstantiate(b *testing.B) {
	for _, guest := range []string{"go/upper.wasm", "wat/dropall.wasm"} {
		b.Run(guest, func(b *testing.B) {
			f := load(b, newEngine(b), guest)
			for b.Loop() {
				i, err := f.NewInstance(context.Background())
				if err != nil {
					b.Fatal(err)
				}
				i.Close(context.Background())
			}
		})
	}
}
