package nxbench

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	goruntime "runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/host"
	"github.com/eddy-streams/eddy/host/embedded"
	"github.com/eddy-streams/eddy/nexmark"
)

// ErrStalled is returned by RunKafka when the node made no progress (no
// input read, no output written or seen) for a minute.
var ErrStalled = errors.New("nexmark: the node made no progress")

const (
	// settle is how long the node's counters and its visible output must
	// stay unchanged, after it has read every input record, before a run
	// counts as finished. It is well above the commit interval (100 ms) and
	// the node's fetch wait (50 ms).
	settle = time.Second
	// stallAfter is how long nothing may change before RunKafka gives up.
	stallAfter = time.Minute
	// sampleEvery is how often RunKafka reads the node's counters.
	sampleEvery = time.Millisecond
)

// eventTopics are the topics of the events, persons first.
var eventTopics = []string{TopicPersons, TopicAuctions, TopicBids}

// GenOptions configure Generate.
type GenOptions struct {
	Events int64
	// Prefix goes before the topic names: Prefix+"bids" and so on.
	Prefix string
	// Partitions of the topics Generate creates (default 4); topics that
	// exist are written as they are.
	Partitions int32
}

// GenReport is what Generate or WriteEvents wrote.
type GenReport struct {
	Events int64
	// Topics counts the records written per topic (or, for WriteEvents,
	// the events per topic they would go to).
	Topics  map[string]int64
	Elapsed time.Duration
}

// PerSec returns the events written per second.
func (r *GenReport) PerSec() float64 { return float64(r.Events) / max(r.Elapsed.Seconds(), 1e-9) }

// Generate writes the first o.Events events of the default generator to the
// topics persons, auctions and bids (each behind o.Prefix), keyed as
// nexmark.Record keys them, creating the topics if they are missing. It
// waits until every record is acknowledged.
func Generate(ctx context.Context, brokers []string, o GenOptions) (*GenReport, error) {
	if o.Partitions == 0 {
		o.Partitions = 4
	}
	rep, _, err := load(ctx, brokers, loadSpec{events: o.Events, prefix: o.Prefix, partitions: o.Partitions, topics: eventTopics})
	return rep, err
}

// WriteEvents writes the first n events of the default generator to w as
// JSON lines, one event (nexmark.AppendJSON) per line.
func WriteEvents(ctx context.Context, w io.Writer, n int64) (*GenReport, error) {
	gen, err := generator(n)
	if err != nil {
		return nil, err
	}
	rep := &GenReport{Topics: map[string]int64{}}
	began := time.Now()
	bw := bufio.NewWriterSize(w, 1<<16)
	var line []byte
	for {
		ev, ok := gen.Next()
		if !ok {
			break
		}
		line = append(nexmark.AppendJSON(line[:0], ev), '\n')
		if _, err := bw.Write(line); err != nil {
			return nil, fmt.Errorf("write events: %w", err)
		}
		rep.Events++
		rep.Topics[topicOf(ev)]++
		if rep.Events%10_000 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
	}
	if err := bw.Flush(); err != nil {
		return nil, fmt.Errorf("write events: %w", err)
	}
	rep.Elapsed = time.Since(began)
	return rep, nil
}

func generator(n int64) (*nexmark.Generator, error) {
	c := nexmark.DefaultConfig()
	c.Events = n
	return nexmark.NewGenerator(c)
}

// loadSpec says what load writes.
type loadSpec struct {
	events     int64
	prefix     string
	partitions int32
	// topics are the event topics to write (unprefixed), a subset of
	// eventTopics.
	topics []string
	// ends adds, after the events, one end marker per partition of every
	// topic (see endMarker).
	ends bool
	// timed are the topics whose records' event times load returns, in
	// the order written (which is event-time order).
	timed map[string]bool
}

// load generates the events and writes those of s.topics, one producer per
// topic fed by the generating goroutine. It returns the event times of the
// records of s.timed topics.
func load(ctx context.Context, brokers []string, s loadSpec) (*GenReport, []int64, error) {
	began := time.Now()
	names := make([]string, len(s.topics))
	for i, t := range s.topics {
		names[i] = s.prefix + t
	}
	if err := host.CreateTopics(ctx, brokers, s.partitions, names...); err != nil {
		return nil, nil, fmt.Errorf("create topics: %w", err)
	}
	parts := map[string]int32{}
	if s.ends {
		for i, t := range s.topics {
			n, err := host.PartitionCount(ctx, brokers, names[i])
			if err != nil {
				return nil, nil, err
			}
			parts[t] = n
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	chans := map[string]chan abi.Record{}
	counts := make([]int, len(s.topics))
	errs := make([]error, len(s.topics))
	var wg sync.WaitGroup
	for i, t := range s.topics {
		ch := make(chan abi.Record, 4096)
		chans[t] = ch
		wg.Add(1)
		go func() {
			defer wg.Done()
			counts[i], errs[i] = host.Produce(ctx, brokers, names[i], fromChan(ctx, ch), nil)
			if errs[i] != nil {
				errs[i] = fmt.Errorf("write %s: %w", names[i], errs[i])
				cancel() // the generator stops sending
			}
		}()
	}
	events, times, genErr := feed(ctx, s, chans, parts)
	wg.Wait()
	if err := errors.Join(append(errs, genErr)...); err != nil {
		return nil, nil, err
	}
	rep := &GenReport{Events: events, Topics: map[string]int64{}, Elapsed: time.Since(began)}
	for i := range s.topics {
		rep.Topics[names[i]] = int64(counts[i])
	}
	return rep, times, nil
}

// fromChan is a host.RecordSource reading ch until it is closed.
func fromChan(ctx context.Context, ch <-chan abi.Record) host.RecordSource {
	return func() (abi.Record, error) {
		select {
		case r, ok := <-ch:
			if !ok {
				return abi.Record{}, io.EOF
			}
			return r, nil
		case <-ctx.Done():
			return abi.Record{}, ctx.Err()
		}
	}
}

// feed generates the events, sends those of s.topics to their channel, then
// the end markers, and closes every channel. It returns how many events it
// generated and the event times of the s.timed records.
func feed(ctx context.Context, s loadSpec, chans map[string]chan abi.Record, parts map[string]int32) (int64, []int64, error) {
	defer func() {
		for _, ch := range chans {
			close(ch)
		}
	}()
	gen, err := generator(s.events)
	if err != nil {
		return 0, nil, err
	}
	var times []int64
	var n, last int64
	send := func(t string, r abi.Record) error {
		select {
		case chans[t] <- r:
			if s.timed[t] {
				times = append(times, r.Timestamp)
			}
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	for {
		ev, ok := gen.Next()
		if !ok {
			break
		}
		n++
		last = max(last, ev.Time)
		if t := topicOf(ev); chans[t] != nil {
			if err := send(t, nexmark.Record(ev)); err != nil {
				return n, nil, err
			}
		}
	}
	if !s.ends {
		return n, times, nil
	}
	for _, t := range s.topics {
		for p := range parts[t] {
			if err := send(t, endMarker(t, p, parts[t], endTime(last))); err != nil {
				return n, nil, err
			}
		}
	}
	return n, times, nil
}

// endID is where the end markers' IDs start: far above any generated ID, so
// they join nothing.
const endID = 1 << 40

// endTime is the end markers' event time for events up to last: an hour
// after the end of last's UTC day.
//
// It must pass every window end and timer of the events: q15–q17 close
// windows a whole day long (the events' day, UTC), which a marker an hour
// after the last event leaves open; the hour beyond the day's end covers a
// watermark's disorder or a window's grace of up to an hour. The markers'
// own windows and days start at or before their time and end after it, and
// the watermark never passes the largest time seen, so they stay open and
// the markers add no output; they are a day later than any event, so a
// query that groups by day never counts them with the events.
func endTime(last int64) int64 {
	const day, hour = 24 * time.Hour / time.Millisecond, time.Hour / time.Millisecond
	d := last / int64(day)
	if last%int64(day) < 0 {
		d--
	}
	return (d+1)*int64(day) + int64(hour)
}

// endMarker returns an event for partition p of topic t (of parts
// partitions) at event time at.
//
// # Why end markers
//
// In Kafka, a window closes when the watermark of every upstream partition
// passes its end, and the watermark moves only with newer records: the last
// windows of a finite input never close. In process, the driver flushes
// them (host.InProcess.Flush); through Kafka, the run writes one event
// after the last, at endTime, to every partition of the windowed queries'
// topics. They close every window of the events, and their own windows
// stay open, so they add no output.
func endMarker(t string, p, parts int32, at int64) abi.Record {
	id := endID + int64(p)
	var ev nexmark.Event
	switch t {
	case TopicPersons:
		ev.Person = &nexmark.Person{ID: id, Name: "end", DateTime: at}
	case TopicAuctions:
		ev.Auction = &nexmark.Auction{ID: id, ItemName: "end", DateTime: at, Expires: at + 1, Seller: endID - 1, Category: -1}
	default:
		ev.Bid = &nexmark.Bid{Auction: id, Bidder: id, Channel: "end", DateTime: at}
	}
	ev.Time = at
	r := nexmark.Record(ev)
	r.Key = keyFor(p, parts)
	return r
}

// keyFor returns a key that Kafka's default partitioner (the producer's)
// sends to partition p of parts.
func keyFor(p, parts int32) []byte {
	for i := 0; ; i++ {
		k := []byte("end-" + strconv.Itoa(i))
		if host.KeyPartition(k, parts) == p {
			return k
		}
	}
}

// RunKafka runs a query Kafka to Kafka: it writes the generated events to
// new input topics (not timed), starts a host.Node on the query's pipeline
// with o.Guarantee, and measures from the node's start until it has read
// every input record and its output has settled (for a pipeline that
// repartitions, once it has as many outputs as the query writes in
// process; see expectedOutputs). Without brokers it starts an embedded
// broker (host/embedded) in this process for the run.
//
// The run's topics and consumer group are named nexmark-<query>-<stamp>-…,
// so runs never share them; on an external broker they are left behind.
//
// Report.Elapsed runs from the node's start (consumer group join included)
// to the arrival of its last output at a read_committed consumer in this
// process; Report.Generator is the time spent writing the input. P50 and
// P99 are latencies from the moment the node's first stage had processed
// the input that caused an output (its input counter passed it) to the
// output's arrival at that consumer, which under exactly_once is the
// transaction's commit. Window results are paired with the first input
// record at or after the window's end (the record that can close it), other
// outputs with inputs in order and in proportion (the k-th of O outputs
// with the ⌈k·I/O⌉-th of I inputs): exact for one output per input (q0,
// q1) but for how the partitions interleave, an approximation for filters
// and joins. AllocsPerEvent counts the
// heap allocations of the whole process while the node runs, the embedded
// broker's included, less those of reading the output (measured by reading
// it again after the run).
//
// It returns ErrStalled when nothing progressed for a minute.
func RunKafka(ctx context.Context, o Options, brokers []string) (*Report, error) {
	o.defaults()
	if len(brokers) == 0 {
		b, err := embedded.Start(embedded.Config{Partitions: int(o.Partitions)})
		if err != nil {
			return nil, err
		}
		defer b.Close()
		brokers = []string{b.Addr()}
	}
	p, eng, cleanup, err := o.prepare(ctx)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	name := p.Name + "-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	spec := inputsOf(p)
	spec.events, spec.prefix, spec.partitions = o.Events, name+"-", o.Partitions
	rename(p, name)
	gen, times, err := load(ctx, brokers, spec)
	if err != nil {
		return nil, fmt.Errorf("write the input: %w", err)
	}
	if err := loadSide(ctx, brokers, name+"-", o.Partitions, Queries[o.Query]); err != nil {
		return nil, fmt.Errorf("write the side input: %w", err)
	}
	if err := host.CreateTopics(ctx, brokers, o.Partitions, p.Sink.Topic); err != nil {
		return nil, fmt.Errorf("create the output topic: %w", err)
	}
	node, err := host.NewNode(ctx, p, host.NodeConfig{Brokers: brokers, Engine: eng, DataDir: o.DataDir, Natives: Natives(),
		Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	if err != nil {
		return nil, err
	}
	r := &kafkaRun{node: node, brokers: brokers, sink: p.Sink.Topic, want: int64(len(times))}
	if len(p.Stages()) > 1 {
		if r.expect, err = expectedOutputs(ctx, o); err != nil {
			return nil, err
		}
	}
	if err := r.run(ctx); err != nil {
		return nil, err
	}
	rep := &Report{Query: o.Query, Functions: o.Lang, Events: gen.Events, Outputs: int64(len(r.arrivals)),
		Elapsed: r.elapsed, Generator: gen.Elapsed, CPU: r.cpu}
	if o.Native {
		rep.Functions = "native"
	}
	readAllocs, out, err := r.readOutput(ctx, o.Keep)
	if err != nil {
		return nil, err
	}
	rep.Out = out
	rep.EventsPerSec = float64(rep.Events) / rep.Elapsed.Seconds()
	rep.AllocsPerEvent = float64(r.mallocs-min(r.mallocs, readAllocs)) / float64(max(rep.Events, 1))
	rep.P50, rep.P99 = r.latencies(times)
	return rep, nil
}

// expectedOutputs runs the query in process with the native functions and
// returns how many outputs it wrote.
//
// # Why
//
// A pipeline that repartitions keeps working after the node has read its
// input: its second stage reads the repartition topic and shows nothing of
// its progress until a window closes. q7 (one key, so one task) can be
// silent for over a second. Its output count tells RunKafka when it is done;
// the in-process run writes the same outputs (the tests check both against
// the reference).
func expectedOutputs(ctx context.Context, o Options) (int64, error) {
	ref := Options{Query: o.Query, Events: o.Events, Native: true, Partitions: o.Partitions, BatchSize: o.BatchSize,
		Chunk: o.Chunk, Engine: o.Engine, Guarantee: host.ExactlyOnce}
	rep, err := RunInProcess(ctx, ref)
	if err != nil {
		return 0, fmt.Errorf("count the expected outputs in process: %w", err)
	}
	return rep.Outputs, nil
}

// inputsOf returns what to load for pipeline p: every event topic it reads
// (sources, tables, joined streams), end markers if it has windows, and as
// timed the topics whose records the node's input counter counts (the first
// stage's inputs but tables).
func inputsOf(p *host.Pipeline) loadSpec {
	s := loadSpec{timed: map[string]bool{}}
	reads := map[string]bool{}
	for _, t := range p.Source.Topics {
		reads[t] = true
	}
	for _, t := range p.Tables {
		reads[t.Topic] = true
	}
	for _, st := range p.Steps {
		if st.Stream != "" {
			reads[st.Stream] = true
		}
		s.ends = s.ends || st.Window != nil || st.Timed()
	}
	for _, t := range eventTopics {
		if reads[t] {
			s.topics = append(s.topics, t)
		}
	}
	first := p.Stages()[0]
	for _, t := range first.Inputs {
		if i, ok := first.Sides[t]; ok && p.Steps[i].Table != "" {
			continue
		}
		s.timed[t] = true
	}
	return s
}

// loadSide writes the query's side input (Query.Side), each topic behind
// prefix and compacted, as a table's topic is. The node reads a global
// table to its end before it starts, so the first event meets all of it.
func loadSide(ctx context.Context, brokers []string, prefix string, partitions int32, q Query) error {
	if q.Side == nil {
		return nil
	}
	for t, recs := range q.Side() {
		if err := host.CreateCompactedTopics(ctx, brokers, partitions, prefix+t); err != nil {
			return err
		}
		next := 0
		if _, err := host.Produce(ctx, brokers, prefix+t, func() (abi.Record, error) {
			if next == len(recs) {
				return abi.Record{}, io.EOF
			}
			next++
			return recs[next-1], nil
		}, nil); err != nil {
			return fmt.Errorf("write %s: %w", prefix+t, err)
		}
	}
	return nil
}

// rename gives the pipeline, its topics and so its consumer group the name
// of the run; its event topics get name- in front.
func rename(p *host.Pipeline, name string) {
	prefix := func(t string) string { return name + "-" + t }
	p.Name = name
	p.Sink.Topic, p.DeadLetter.Topic, p.Late.Topic = prefix("out"), prefix("dlq"), prefix("late")
	for i, t := range p.Source.Topics {
		p.Source.Topics[i] = prefix(t)
	}
	for i := range p.Tables {
		p.Tables[i].Topic = prefix(p.Tables[i].Topic)
	}
	for i := range p.Steps {
		if p.Steps[i].Stream != "" {
			p.Steps[i].Stream = prefix(p.Steps[i].Stream)
		}
	}
}

// kafkaRun runs a node and watches it: its counters, sampled every
// millisecond, and its output, read as it becomes visible.
type kafkaRun struct {
	node    *host.Node
	brokers []string
	sink    string
	want    int64 // input records the node's counter will count
	expect  int64 // outputs to wait for (0: whatever the node writes)

	began time.Time
	// progress is when the node's input counter grew, in order.
	progress []progress
	// arrivals are the outputs in the order they were read; the reading
	// goroutine appends under mu, and seen and lastAt mirror it.
	mu       sync.Mutex
	arrivals []arrival
	seen     atomic.Int64
	lastAt   atomic.Int64 // since began, ns

	elapsed time.Duration
	mallocs uint64
	// cpu0 is the process's CPU time at began; cpu is the CPU time from
	// began to the last change watch saw (the last output's arrival, or
	// the last input read).
	cpu0, cpu time.Duration
}

type progress struct {
	at time.Duration
	in int64
}

type arrival struct {
	at  time.Duration
	end int64 // the eddy.window.end header, 0 for other outputs
}

// run runs the node until it is done, then stops it and the output reader.
func (r *kafkaRun) run(ctx context.Context) error {
	var ms0, ms1 goruntime.MemStats
	goruntime.GC()
	goruntime.ReadMemStats(&ms0)
	r.began, r.cpu0 = time.Now(), processCPU()
	nctx, stopNode := context.WithCancel(ctx)
	defer stopNode()
	var nodeErr, readerErr error
	nodeDone, readerDone := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(nodeDone)
		nodeErr = r.node.Run(nctx)
	}()
	rctx, stopReader := context.WithCancel(ctx)
	defer stopReader()
	go func() {
		defer close(readerDone)
		_, readerErr = host.Consume(rctx, r.brokers, r.sink, host.ConsumeOptions{}, r.arrived)
	}()
	err := r.watch(ctx, nodeDone, readerDone)
	goruntime.ReadMemStats(&ms1)
	r.mallocs = ms1.Mallocs - ms0.Mallocs
	stopReader()
	<-readerDone
	stopNode()
	<-nodeDone
	if errors.Is(err, errNodeStopped) {
		err = fmt.Errorf("the node stopped before the end of the input: %w", cmp.Or(nodeErr, err))
	}
	if errors.Is(err, errReaderStopped) {
		err = fmt.Errorf("reading the output: %w", cmp.Or(readerErr, err))
	}
	if err == nil && nodeErr != nil {
		err = fmt.Errorf("node: %w", nodeErr)
	}
	return err
}

var (
	errNodeStopped   = errors.New("the node returned")
	errReaderStopped = errors.New("the reader returned")
)

// arrived records an output's arrival (host.Consume's callback).
func (r *kafkaRun) arrived(rec abi.Record, _ host.Meta) error {
	at := time.Since(r.began)
	var end int64
	for _, h := range rec.Headers {
		if h.Key == "eddy.window.end" {
			end, _ = strconv.ParseInt(string(h.Value), 10, 64)
		}
	}
	r.mu.Lock()
	r.arrivals = append(r.arrivals, arrival{at: at, end: end})
	r.mu.Unlock()
	r.lastAt.Store(int64(at))
	r.seen.Add(1)
	return nil
}

// watch samples the node's counters until it has read every input record
// and its output (as counted by the node and as read back) has not changed
// for settle. It returns errNodeStopped or errReaderStopped when one of them
// returned first.
func (r *kafkaRun) watch(ctx context.Context, nodeDone, readerDone <-chan struct{}) error {
	tick := time.NewTicker(sampleEvery)
	defer tick.Stop()
	var last host.Stats
	var lastSeen int64
	changed := time.Now()
	readAll := time.Duration(0)
	for {
		select {
		case <-ctx.Done():
			st := r.node.Stats()
			return fmt.Errorf("the node read %d of %d input records and wrote %d outputs, %d of them visible: %w",
				st.In, r.want, st.Out, r.seen.Load(), ctx.Err())
		case <-nodeDone:
			return errNodeStopped
		case <-readerDone:
			return errReaderStopped
		case now := <-tick.C:
			st, seen := r.node.Stats(), r.seen.Load()
			if st.In != last.In {
				r.progress = append(r.progress, progress{at: now.Sub(r.began), in: st.In})
				if st.In >= r.want && readAll == 0 {
					readAll = now.Sub(r.began)
				}
			}
			if st.In != last.In || st.Out != last.Out || seen != lastSeen {
				last, lastSeen, changed = st, seen, now
				r.cpu = processCPU() - r.cpu0
				continue
			}
			quiet := now.Sub(changed)
			// Under exactly_once an aborted transaction's outputs are
			// counted by the node but never visible.
			if st.In >= r.want && (seen >= st.Out || st.Aborts > 0) && seen >= r.expect && quiet >= settle {
				r.elapsed = max(readAll, time.Duration(r.lastAt.Load()))
				return nil
			}
			if quiet >= stallAfter {
				return fmt.Errorf("%w for %s: it read %d of %d input records and wrote %d outputs, %d of them visible (expected: %d)",
					ErrStalled, stallAfter, st.In, r.want, st.Out, seen, r.expect)
			}
		}
	}
}

// readOutput reads the output again, after the run: it returns the heap
// allocations that took (those of the reader during the run) and, with
// keep, the records.
func (r *kafkaRun) readOutput(ctx context.Context, keep bool) (uint64, []abi.Record, error) {
	want := len(r.arrivals)
	if want == 0 {
		return 0, nil, nil
	}
	var out []abi.Record
	if keep {
		out = make([]abi.Record, 0, want)
	}
	var ms0, ms1 goruntime.MemStats
	goruntime.ReadMemStats(&ms0)
	n, err := host.Consume(ctx, r.brokers, r.sink, host.ConsumeOptions{Max: want, Idle: 10 * time.Second},
		func(rec abi.Record, _ host.Meta) error {
			if keep {
				out = append(out, rec)
			}
			return nil
		})
	goruntime.ReadMemStats(&ms1)
	if err == nil && n != want {
		err = fmt.Errorf("read %d outputs back, %d were seen during the run", n, want)
	}
	if err != nil {
		return 0, nil, fmt.Errorf("read the output: %w", err)
	}
	return ms1.Mallocs - ms0.Mallocs, out, nil
}

// latencies returns the 50th and 99th percentile of the outputs' latencies
// (see RunKafka); times are the event times of the counted input records in
// the order written.
func (r *kafkaRun) latencies(times []int64) (p50, p99 time.Duration) {
	if len(r.arrivals) == 0 || len(r.progress) == 0 {
		return 0, 0
	}
	total := r.progress[len(r.progress)-1].in
	lat := make([]time.Duration, len(r.arrivals))
	for k, a := range r.arrivals {
		var cause int64
		if a.end != 0 {
			i, _ := slices.BinarySearch(times, a.end)
			cause = int64(i) + 1
		} else {
			cause = (int64(k+1)*total + int64(len(r.arrivals)) - 1) / int64(len(r.arrivals))
		}
		cause = min(cause, total)
		j, _ := slices.BinarySearchFunc(r.progress, cause, func(p progress, in int64) int {
			switch {
			case p.in < in:
				return -1
			case p.in > in:
				return 1
			}
			return 0
		})
		lat[k] = max(0, a.at-r.progress[min(j, len(r.progress)-1)].at)
	}
	slices.Sort(lat)
	return lat[len(lat)/2], lat[len(lat)*99/100]
}
