package host_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/sr/srfake"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/host"
	"github.com/eddy-streams/eddy/nexmark"
	"github.com/eddy-streams/eddy/runtime"
	"github.com/eddy-streams/eddy/schemas"
)

// Nexmark's bid, as a registry schema of each format (the JSON field names
// of nexmark.AppendJSON).
const (
	nexmarkBidAvro = `{"type":"record","name":"Bid","namespace":"nexmark","fields":[
	{"name":"auction","type":"long"},{"name":"bidder","type":"long"},{"name":"price","type":"long"},
	{"name":"channel","type":"string"},{"name":"url","type":"string"},
	{"name":"dateTime","type":{"type":"long","logicalType":"timestamp-millis"}},{"name":"extra","type":"string"}]}`
	nexmarkBidProto = `syntax = "proto3";
package nexmark;
message Bid {
  int64 auction = 1; int64 bidder = 2; int64 price = 3;
  string channel = 4; string url = 5; int64 dateTime = 6; string extra = 7;
}
`
)

// BenchmarkSourceFormats runs Nexmark q1 (a map: prices in euros) and q2
// (a filter on auction ids) in process over the same bids written as JSON,
// Avro and Protobuf (schemas in an in-memory registry): the difference
// per record is what decoding the registry formats into JSON costs. The
// decode sub-benchmarks time the decoding alone.
//
//	go test ./host/ -run XXX -bench BenchmarkSourceFormats -benchtime 3x
func BenchmarkSourceFormats(b *testing.B) {
	ctx := context.Background()
	fake := srfake.New()
	defer fake.Close()
	reg, err := schemas.NewRegistry(fake.URL(), schemas.Options{})
	if err != nil {
		b.Fatal(err)
	}
	const n = 50_000
	cfg := nexmark.DefaultConfig()
	cfg.Events = n * 50 / 46 // bids are 46 of every 50 events
	gen, err := nexmark.NewGenerator(cfg)
	if err != nil {
		b.Fatal(err)
	}
	var jsonBids []abi.Record
	for ev, ok := gen.Next(); ok && len(jsonBids) < n; ev, ok = gen.Next() {
		if ev.Bid != nil {
			jsonBids = append(jsonBids, nexmark.Record(ev))
		}
	}
	bids := map[string][]abi.Record{"json": jsonBids}
	for _, f := range []struct {
		format schemas.Format
		schema string
	}{{schemas.Avro, nexmarkBidAvro}, {schemas.Protobuf, nexmarkBidProto}} {
		s, err := reg.Register(ctx, "bids-value", f.format, f.schema)
		if err != nil {
			b.Fatal(err)
		}
		enc, err := schemas.NewEncoder(s, schemas.JSON, "")
		if err != nil {
			b.Fatal(err)
		}
		recs := make([]abi.Record, len(jsonBids))
		for i, r := range jsonBids {
			v, err := enc.Encode(nil, r.Value)
			if err != nil {
				b.Fatalf("%s: %v", r.Value, err)
			}
			recs[i] = abi.Record{Key: r.Key, Value: v, Timestamp: r.Timestamp}
		}
		bids[string(f.format)] = recs
	}
	formats := []string{"json", "avro", "protobuf"}
	for _, format := range formats[1:] {
		b.Run("decode/"+format, func(b *testing.B) {
			dec := schemas.NewDecoder(reg, schemas.Format(format), schemas.JSON)
			recs := bids[format]
			var buf []byte
			for b.Loop() {
				for _, r := range recs {
					if buf, err = dec.Decode(ctx, buf[:0], r.Value); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(recs)), "ns/record")
			b.ReportMetric(0, "ns/op")
		})
	}
	eng, err := runtime.NewEngine(runtime.WithCacheDir(cacheDir))
	if err != nil {
		b.Fatal(err)
	}
	defer eng.Close(ctx)
	for _, q := range []struct{ name, step string }{
		{"q1", "{name: euros, kind: map, function: %s}"},
		{"q2", "{name: select, kind: filter, function: %s}"},
	} {
		fn, _ := filepath.Abs("../testdata/go/nx-" + q.name + ".wasm")
		for _, format := range formats {
			b.Run(q.name+"/"+format, func(b *testing.B) {
				source := "{topics: [bids]}"
				if format != "json" {
					source = fmt.Sprintf("{topics: [bids], format: %s, registry: %s}", format, fake.URL())
				}
				dir := b.TempDir()
				path := filepath.Join(dir, "p.yaml")
				os.WriteFile(path, []byte(fmt.Sprintf("name: %s\nsource: %s\nsteps:\n  - "+q.step+"\nsink: {topic: out}\n", q.name, source, fn)), 0o644)
				p, err := host.LoadPipeline(path)
				if err != nil {
					b.Fatal(err)
				}
				recs := bids[format]
				ip, err := host.NewInProcess(ctx, p, host.NodeConfig{Engine: eng, DataDir: b.TempDir()}, 1)
				if err != nil {
					b.Fatal(err)
				}
				defer ip.Close(ctx)
				outs := 0
				ip.Out = func(string, abi.Record, time.Time) { outs++ }
				send := func() {
					for i := 0; i < len(recs); i += 500 {
						if err := ip.Send(ctx, "bids", recs[i:min(i+500, len(recs))]); err != nil {
							b.Fatal(err)
						}
					}
				}
				send() // compiles and warms up the instances; not timed
				for b.Loop() {
					send()
				}
				if st := ip.Stats(); st.DeadLettered != 0 {
					b.Fatalf("%d records dead-lettered", st.DeadLettered)
				}
				if outs == 0 {
					b.Fatal("no output")
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(recs)), "ns/record")
				b.ReportMetric(float64(b.N*len(recs))/b.Elapsed().Seconds(), "records/s")
				b.ReportMetric(0, "ns/op")
			})
		}
	}
}
