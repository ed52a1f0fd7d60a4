package nxbench

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	goruntime "runtime"
	"slices"
	"time"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/host"
	"github.com/eddy-streams/eddy/nexmark"
	"github.com/eddy-streams/eddy/runtime"
)

// Options configure a run.
type Options struct {
	Query  string
	Events int64
	// Native runs the queries' native Go functions instead of the Wasm
	// guests of Lang ("go" or "c"; the C guests exist for q1 and q2 only,
	// the others fall back to Go) found under Testdata.
	Native   bool
	Lang     string
	Testdata string
	// Partitions of each topic (default 4) and records per guest call
	// (default 500).
	Partitions int32
	BatchSize  int
	// Chunk is how many events are generated and sent at once (default
	// 10,000).
	Chunk int
	// Keep keeps the output records (Report.Out) for Check.
	Keep   bool
	Engine *runtime.Engine
	// DataDir holds the state of stateful queries (default: a temporary
	// directory, removed after the run).
	DataDir string
	// Guarantee is the pipeline's delivery (default exactly_once). In
	// process, where nothing is committed, only the pipeline's validation
	// sees it.
	Guarantee host.Delivery
}

// Report is what a run measured.
type Report struct {
	Query     string
	Functions string // "native", or the guests' language
	Events    int64
	Outputs   int64
	// Elapsed is the engine's time, Generator the time spent generating
	// and encoding the events (not counted in EventsPerSec).
	Elapsed, Generator time.Duration
	EventsPerSec       float64
	P50, P99           time.Duration // from a Send to the outputs it caused
	// CPU is, Kafka to Kafka, the CPU time (user and system) of this whole
	// process over Elapsed: the node, the output reader and the sampling of
	// the node's counters. Not measured in process.
	CPU time.Duration
	// AllocsPerEvent counts the engine's heap allocations per event (the
	// generator's excluded).
	AllocsPerEvent float64
	Out            []abi.Record `json:"-"`
}

func (o *Options) defaults() {
	if o.Partitions == 0 {
		o.Partitions = 4
	}
	if o.BatchSize == 0 {
		o.BatchSize = 500
	}
	if o.Chunk == 0 {
		o.Chunk = 10_000
	}
	if o.Lang == "" {
		o.Lang = "go"
	}
	if o.Guarantee == "" {
		o.Guarantee = host.ExactlyOnce
	}
}

// functionRef returns how a pipeline file names a query function.
func (o *Options) functionRef(name string) string {
	if o.Native {
		return host.NativePrefix + name
	}
	if name == "passthrough" {
		return filepath.Join(o.Testdata, o.Lang, "passthrough.wasm")
	}
	p := filepath.Join(o.Testdata, o.Lang, name+".wasm")
	if _, err := os.Stat(p); err != nil {
		p = filepath.Join(o.Testdata, "go", name+".wasm")
	}
	return p
}

// Pipeline writes the query's pipeline file into dir and loads it.
func (o *Options) Pipeline(dir string) (*host.Pipeline, error) {
	q, ok := Queries[o.Query]
	if !ok {
		return nil, fmt.Errorf("no query %q; the implemented ones: %v", o.Query, Names())
	}
	src := "name: nexmark-" + q.Name + "\nsource:\n  topics: ["
	for i, t := range q.Sources {
		if i > 0 {
			src += ", "
		}
		src += t
	}
	src += "]\n"
	if q.Tables != "" {
		src += "tables:\n" + q.Tables
	}
	src += "steps:\n" + q.Steps(o.functionRef)
	src += fmt.Sprintf("sink: {topic: out}\ndelivery: %s\nbatch_size: %d\n", cmp.Or(o.Guarantee, host.ExactlyOnce), o.BatchSize)
	path := filepath.Join(dir, "nexmark-"+q.Name+".yaml")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		return nil, err
	}
	return host.LoadPipeline(path)
}

// prepare writes and loads the query's pipeline in a temporary directory
// (which also holds the state unless o.DataDir is set) and returns the
// engine to run it on (o.Engine, or a new one). cleanup removes what prepare
// made.
func (o *Options) prepare(ctx context.Context) (p *host.Pipeline, eng *runtime.Engine, cleanup func(), err error) {
	tmp, err := os.MkdirTemp("", "eddy-nexmark-")
	if err != nil {
		return nil, nil, nil, err
	}
	cleanups := []func(){func() { os.RemoveAll(tmp) }}
	cleanup = func() {
		for i := len(cleanups) - 1; i >= 0; i-- {
			cleanups[i]()
		}
	}
	if o.DataDir == "" {
		o.DataDir = filepath.Join(tmp, "state")
	}
	if p, err = o.Pipeline(tmp); err != nil {
		cleanup()
		return nil, nil, nil, err
	}
	if eng = o.Engine; eng == nil {
		if eng, err = runtime.NewEngine(); err != nil {
			cleanup()
			return nil, nil, nil, err
		}
		cleanups = append(cleanups, func() { eng.Close(ctx) })
	}
	return p, eng, cleanup, nil
}

// RunInProcess generates the events and runs them through the query's
// pipeline in process (host.InProcess: no Kafka), on one goroutine: the
// events per second it reports are per core.
func RunInProcess(ctx context.Context, o Options) (*Report, error) {
	o.defaults()
	p, eng, cleanup, err := o.prepare(ctx)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	ip, err := host.NewInProcess(ctx, p, host.NodeConfig{Engine: eng, DataDir: o.DataDir, Natives: Natives()}, o.Partitions)
	if err != nil {
		return nil, err
	}
	defer ip.Close(ctx)
	rep := &Report{Query: o.Query, Functions: o.Lang}
	if o.Native {
		rep.Functions = "native"
	}
	var lat []time.Duration
	ip.Out = func(topic string, r abi.Record, sent time.Time) {
		if topic != "out" {
			return
		}
		rep.Outputs++
		if len(lat) < 1<<20 {
			lat = append(lat, time.Since(sent))
		}
		if o.Keep {
			r.Headers = slices.Clone(r.Headers)
			rep.Out = append(rep.Out, r)
		}
	}
	gen, err := nexmark.NewGenerator(func() nexmark.Config { c := nexmark.DefaultConfig(); c.Events = o.Events; return c }())
	if err != nil {
		return nil, err
	}
	q := Queries[o.Query]
	reads := map[string]bool{}
	for _, t := range q.Sources {
		reads[t] = true
	}
	for _, t := range p.Tables {
		reads[t.Topic] = true
	}
	if q.Side != nil {
		for t, recs := range q.Side() {
			if err := ip.Send(ctx, t, recs); err != nil {
				return nil, fmt.Errorf("side input %s: %w", t, err)
			}
		}
	}
	for _, st := range p.Steps {
		if st.Stream != "" {
			reads[st.Stream] = true // a stream-stream join's other stream
		}
	}
	byTopic := map[string][]abi.Record{}
	var ms0, ms1 goruntime.MemStats
	goruntime.GC()
	goruntime.ReadMemStats(&ms0)
	var genTime time.Duration // generating and encoding events: not the engine's
	var genAllocs uint64
	var ms goruntime.MemStats
	began := time.Now()
	for {
		genBegan := time.Now()
		goruntime.ReadMemStats(&ms)
		genAllocs -= ms.Mallocs
		clear(byTopic)
		n := 0
		for ; n < o.Chunk; n++ {
			ev, ok := gen.Next()
			if !ok {
				break
			}
			t := topicOf(ev)
			if reads[t] {
				byTopic[t] = append(byTopic[t], nexmark.Record(ev))
			}
		}
		rep.Events += int64(n)
		goruntime.ReadMemStats(&ms)
		genAllocs += ms.Mallocs
		genTime += time.Since(genBegan)
		// Persons before auctions before bids: a chunk's auctions can find
		// its new sellers in a table.
		for _, t := range []string{TopicPersons, TopicAuctions, TopicBids} {
			if len(byTopic[t]) > 0 {
				if err := ip.Send(ctx, t, byTopic[t]); err != nil {
					return nil, err
				}
			}
		}
		if err := ip.Commit(); err != nil {
			return nil, err
		}
		if n < o.Chunk {
			break
		}
	}
	if err := ip.Flush(ctx); err != nil {
		return nil, err
	}
	rep.Elapsed = time.Since(began) - genTime
	rep.Generator = genTime
	goruntime.ReadMemStats(&ms1)
	rep.EventsPerSec = float64(rep.Events) / rep.Elapsed.Seconds()
	rep.AllocsPerEvent = float64(ms1.Mallocs-ms0.Mallocs-genAllocs) / float64(max(rep.Events, 1))
	if len(lat) > 0 {
		slices.Sort(lat)
		rep.P50, rep.P99 = lat[len(lat)/2], lat[len(lat)*99/100]
	}
	return rep, nil
}

func topicOf(ev nexmark.Event) string {
	switch ev.Kind() {
	case nexmark.KindPerson:
		return TopicPersons
	case nexmark.KindAuction:
		return TopicAuctions
	}
	return TopicBids
}

// Events returns the first n events of the default generator.
func Events(n int64) ([]nexmark.Event, error) {
	c := nexmark.DefaultConfig()
	c.Events = n
	gen, err := nexmark.NewGenerator(c)
	if err != nil {
		return nil, err
	}
	var evs []nexmark.Event
	for {
		ev, ok := gen.Next()
		if !ok {
			return evs, nil
		}
		evs = append(evs, ev)
	}
}
