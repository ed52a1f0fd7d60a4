// Command ksbench runs Nexmark queries on Kafka Streams (the Java program of
// bench/kstreams) and on Eddy (`eddy bench nexmark --kafka`) against one
// Apache Kafka broker, alternately, checks both sides' outputs against the
// nexmark package's reference results, and prints a table of events/s, CPU
// seconds per million events, latencies and the Eddy/Kafka Streams ratios.
// bench/kstreams/run.sh builds both and runs it; see bench/kstreams/README.md
// for what is measured and how.
package main

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/host"
	"github.com/eddy-streams/eddy/nexmark"
	"github.com/eddy-streams/eddy/nexmark/nxbench"
)

type config struct {
	brokers    string
	events     int64
	queries    []string
	systems    []string
	runs       int
	guarantee  string
	eddy       string
	testdata   string
	classpath  string
	java       string
	threads    int
	partitions int
	timeout    time.Duration
	jsonOut    string
}

// A run is one measured run of one query on one system.
type run struct {
	Query, System string
	Round         int
	Events        int64
	Outputs       int
	Elapsed       time.Duration
	EventsPerSec  float64
	CPU           time.Duration // the processing process's, over Elapsed
	// ProcessCPU is, for Eddy, the whole `eddy bench nexmark` process's CPU
	// (writing its input and, for windowed queries, an untimed in-process
	// run included); for Kafka Streams the JVM's from start to stop.
	ProcessCPU time.Duration
	P50, P99   time.Duration // 0: not measured
	Check      string
}

func (r *run) cpuPerMillion() float64 { return r.CPU.Seconds() / float64(r.Events) * 1e6 }

func main() {
	var c config
	var queries, systems string
	flag.StringVar(&c.brokers, "brokers", "", "Kafka bootstrap broker, host:port (required)")
	flag.Int64Var(&c.events, "events", 300_000, "events to generate (the same events for every run)")
	flag.StringVar(&queries, "queries", "q1,q2,q5-counts,q7,q12", "queries to run")
	flag.StringVar(&systems, "systems", "ks,native,go,c", "what to run: ks (Kafka Streams), native, go, c (Eddy's functions; c exists for q1 and q2)")
	flag.IntVar(&c.runs, "runs", 3, "runs of each query on each system, alternating")
	flag.StringVar(&c.guarantee, "guarantee", "exactly_once", "exactly_once (Kafka Streams: exactly_once_v2) or at_least_once")
	flag.StringVar(&c.eddy, "eddy", "", "the eddy binary (required)")
	flag.StringVar(&c.testdata, "testdata", "testdata", "the directory of the guest fixtures")
	flag.StringVar(&c.classpath, "classpath", "", "the Kafka Streams program's class path (required)")
	flag.StringVar(&c.java, "java", "java", "the java command")
	flag.IntVar(&c.threads, "threads", runtime.NumCPU(), "Kafka Streams' num.stream.threads")
	flag.IntVar(&c.partitions, "partitions", 4, "partitions of the input and output topics")
	flag.DurationVar(&c.timeout, "timeout", 5*time.Minute, "the longest one run may take")
	flag.StringVar(&c.jsonOut, "json", "", "also write every run as a JSON line to this file")
	flag.Parse()
	c.queries = strings.Split(queries, ",")
	c.systems = strings.Split(systems, ",")
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := c.main(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "ksbench:", err)
		os.Exit(1)
	}
}

func (c *config) validate() error {
	switch {
	case c.brokers == "":
		return errors.New("--brokers is required")
	case c.eddy == "":
		return errors.New("--eddy is required")
	case c.classpath == "" && slices.Contains(c.systems, "ks"):
		return errors.New("--classpath is required to run Kafka Streams")
	case c.guarantee != "exactly_once" && c.guarantee != "at_least_once":
		return fmt.Errorf("--guarantee %q: want exactly_once or at_least_once", c.guarantee)
	case c.runs < 1 || c.events < 1:
		return errors.New("--runs and --events must be positive")
	}
	for _, q := range c.queries {
		if _, ok := expectations[q]; !ok {
			return fmt.Errorf("query %q: the side-by-side queries are q1, q2, q5-counts, q7, q12", q)
		}
	}
	for _, s := range c.systems {
		if !slices.Contains([]string{"ks", "native", "go", "c"}, s) {
			return fmt.Errorf("system %q: want ks, native, go or c", s)
		}
	}
	return nil
}

// bench holds what every run shares: the generated input and the reference.
type bench struct {
	*config
	brokers []string
	input   string // the bids topic
	events  []nexmark.Event
	last    int64 // the latest event time
	ends    map[int32]int64
	stamp   string
}

func (c *config) main(ctx context.Context) error {
	if err := c.validate(); err != nil {
		return err
	}
	b := &bench{config: c, brokers: strings.Split(c.brokers, ","), stamp: strconv.FormatInt(time.Now().Unix(), 36)}
	prefix := "ksbench-" + b.stamp + "-"
	b.input = prefix + nxbench.TopicBids
	fmt.Printf("machine: %s, %d cores, load average %s\n", cpuModel(), runtime.NumCPU(), loadAvg())
	fmt.Printf("generating %d events to %s{persons,auctions,bids} once\n", c.events, prefix)
	gen := exec.CommandContext(ctx, c.eddy, "bench", "nexmark", "gen", "--events", strconv.FormatInt(c.events, 10),
		"--brokers", c.brokers, "--topic-prefix", prefix, "--partitions", strconv.Itoa(c.partitions))
	gen.Stdout, gen.Stderr = os.Stdout, os.Stderr
	if err := gen.Run(); err != nil {
		return fmt.Errorf("eddy bench nexmark gen: %w", err)
	}
	var err error
	if b.events, err = nxbench.Events(c.events); err != nil {
		return err
	}
	for _, ev := range b.events {
		b.last = max(b.last, ev.Time)
	}
	if b.ends, err = endOffsets(ctx, b.brokers, b.input); err != nil {
		return err
	}
	var out io.Writer = io.Discard
	if c.jsonOut != "" {
		f, err := os.Create(c.jsonOut)
		if err != nil {
			return err
		}
		defer f.Close()
		out = f
	}
	var runs []*run
	for round := 1; round <= c.runs; round++ {
		for _, q := range c.queries {
			systems := slices.Clone(c.systems)
			if round%2 == 0 {
				slices.Reverse(systems) // alternate which goes first
			}
			for _, s := range systems {
				if s == "c" && q != "q1" && q != "q2" {
					continue
				}
				fmt.Printf("round %d: %s on %s ... ", round, q, s)
				var r *run
				if s == "ks" {
					r, err = b.runKS(ctx, q)
				} else {
					r, err = b.runEddy(ctx, q, s)
				}
				if err != nil {
					return fmt.Errorf("%s on %s: %w", q, s, err)
				}
				r.Round = round
				fmt.Printf("%.0f events/s, %.2f CPU s/M events, check %s\n", r.EventsPerSec, r.cpuPerMillion(), r.Check)
				line, _ := json.Marshal(r)
				fmt.Fprintf(out, "%s\n", line)
				runs = append(runs, r)
			}
		}
	}
	printTable(os.Stdout, c, runs)
	return nil
}

// expectation is what a query's output holds, from the reference.
type expectation struct {
	outputs  func([]nexmark.Event) int
	windowed bool
	key      string // the field the windowed query repartitions by ("" for one key)
}

var expectations = map[string]expectation{
	"q1": {outputs: func(e []nexmark.Event) int { return len(nexmark.Q1(e)) }},
	"q2": {outputs: func(e []nexmark.Event) int { return len(nexmark.Q2(e)) }},
	"q5-counts": {windowed: true, key: "auction", outputs: func(e []nexmark.Event) int {
		// One count per auction and window.
		seen := map[[2]int64]bool{}
		for _, ev := range e {
			if b := ev.Bid; b != nil {
				for s := b.DateTime - b.DateTime%nexmark.Q5Advance; s > b.DateTime-nexmark.WindowSize; s -= nexmark.Q5Advance {
					seen[[2]int64{s, b.Auction}] = true
				}
			}
		}
		return len(seen)
	}},
	"q7": {windowed: true, outputs: func(e []nexmark.Event) int {
		// One result per window.
		seen := map[int64]bool{}
		for _, r := range nexmark.Q7(e) {
			seen[r.Start] = true
		}
		return len(seen)
	}},
	"q12": {windowed: true, key: "bidder", outputs: func(e []nexmark.Event) int { return len(nexmark.Q12(e)) }},
}

// output collects a run's output as it arrives at a read_committed
// consumer.
type output struct {
	mu       sync.Mutex
	recs     []abi.Record
	arrivals []time.Time
	want     int
	full     chan struct{} // closed when want records arrived
}

func (o *output) add(r abi.Record, _ host.Meta) error {
	now := time.Now()
	o.mu.Lock()
	defer o.mu.Unlock()
	o.recs = append(o.recs, r)
	o.arrivals = append(o.arrivals, now)
	if len(o.recs) == o.want {
		close(o.full)
	}
	return nil
}

func (o *output) count() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.recs)
}

func (o *output) snapshot() ([]abi.Record, []time.Time) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Clone(o.recs), slices.Clone(o.arrivals)
}

// runKS runs query q on Kafka Streams: a new application (so a new group,
// state and repartition topic) reading the generated bids. The run starts
// when the application is RUNNING and ends with the arrival of the last
// expected output.
func (b *bench) runKS(ctx context.Context, q string) (*run, error) {
	ctx, cancel := context.WithTimeout(ctx, b.timeout)
	defer cancel()
	exp := expectations[q]
	app := fmt.Sprintf("ks-%s-%s-%d", q, b.stamp, time.Now().UnixNano()%1e9)
	outTopic := app + "-out"
	if err := host.CreateTopics(ctx, b.brokers, int32(b.partitions), outTopic); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "ksbench-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	guarantee := "exactly_once_v2"
	if b.guarantee == "at_least_once" {
		guarantee = "at_least_once"
	}
	cmd := exec.Command(b.java, "-cp", b.classpath, "eddy.kstreams.Nexmark", "--query", q, "--brokers", b.config.brokers,
		"--input", b.input, "--output", outTopic, "--app-id", app, "--guarantee", guarantee,
		"--threads", strconv.Itoa(b.threads), "--state-dir", filepath.Join(dir, "state"))
	logPath := filepath.Join(dir, "ks.log")
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	cmd.Stderr = logf
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start Kafka Streams: %w", err)
	}
	exited := make(chan struct{})
	var waitErr error
	go func() {
		waitErr = cmd.Wait()
		close(exited)
	}()
	stopped := false
	defer func() {
		if !stopped {
			cmd.Process.Kill()
			<-exited
		}
	}()
	running := make(chan struct{}, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if sc.Text() == "RUNNING" {
				select {
				case running <- struct{}{}:
				default:
				}
			}
		}
	}()
	failed := func(what string) error {
		logf.Sync()
		tail, _ := os.ReadFile(logPath)
		lines := strings.Split(strings.TrimSpace(string(tail)), "\n")
		return fmt.Errorf("%s; the last lines of its log:\n%s", what, strings.Join(lines[max(0, len(lines)-10):], "\n"))
	}

	o := &output{want: exp.outputs(b.events), full: make(chan struct{})}
	rctx, stopReader := context.WithCancel(ctx)
	defer stopReader()
	readerDone := make(chan error, 1)
	go func() {
		_, err := host.Consume(rctx, b.brokers, outTopic, host.ConsumeOptions{}, o.add)
		readerDone <- err
	}()

	select {
	case <-running:
	case <-exited:
		return nil, failed(fmt.Sprintf("Kafka Streams exited before RUNNING (%v)", waitErr))
	case <-ctx.Done():
		return nil, failed("Kafka Streams not RUNNING in time")
	}
	began, cpu0 := time.Now(), procCPU(cmd.Process.Pid)
	markers := make(chan error, 1)
	if exp.windowed {
		go func() { markers <- b.closeWindows(ctx, app, exp) }()
	}
	select {
	case <-o.full:
	case err := <-markers:
		if err != nil {
			return nil, err
		}
		select {
		case <-o.full:
		case <-exited:
			return nil, failed(fmt.Sprintf("Kafka Streams exited (%v)", waitErr))
		case <-ctx.Done():
			return nil, failed(fmt.Sprintf("%d of %d outputs in time", o.count(), o.want))
		}
	case err := <-readerDone:
		return nil, fmt.Errorf("read the output: %w", err)
	case <-exited:
		return nil, failed(fmt.Sprintf("Kafka Streams exited (%v)", waitErr))
	case <-ctx.Done():
		return nil, failed(fmt.Sprintf("%d of %d outputs in time", o.count(), o.want))
	}
	cpu1 := procCPU(cmd.Process.Pid)
	// Outputs beyond the expected count (duplicates) would fail the check:
	// give them a second to show.
	time.Sleep(time.Second)
	stopReader()
	recs, arrivals := o.snapshot()
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		<-exited
	}
	stopped = true
	r := &run{Query: q, System: "kafka-streams", Events: b.config.events, Outputs: len(recs),
		Elapsed: arrivals[o.want-1].Sub(began), CPU: cpu1 - cpu0}
	if cmd.ProcessState != nil {
		r.ProcessCPU = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	r.EventsPerSec = float64(r.Events) / r.Elapsed.Seconds()
	r.P50, r.P99 = readLatencies(recs, arrivals)
	r.Check = "ok"
	if err := nxbench.Queries[q].Check(b.events, recs); err != nil {
		r.Check = "FAILED: " + err.Error()
	}
	return r, nil
}

// endID is where the end markers' IDs start, as in nxbench: far above any
// generated ID.
const endID = 1 << 40

// closeWindows closes the last windows of a windowed Kafka Streams run.
//
// # Why
//
// A Kafka Streams window closes when its task's stream time (the highest
// record timestamp the task has seen) passes its end plus the grace period.
// Stream time is per task and does not flow through a repartition topic as
// a watermark does: a record written to a repartition partition after one
// with a much later timestamp is late, and dropped once past the grace. So
// the closing records must come after every real record of each
// repartition partition: closeWindows waits until the application has
// committed the whole input (its first stage has then written, and
// committed, every repartitioned record), then writes one bid an hour after
// the last event to every partition of APP-rekey-repartition. Eddy's end
// markers, in its input, need no such wait: its watermarks are the minimum
// over the upstream partitions.
func (b *bench) closeWindows(ctx context.Context, app string, exp expectation) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.brokers...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		return err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for done := false; !done; {
		select {
		case <-ctx.Done():
			return fmt.Errorf("the application did not commit its whole input in time: %w", ctx.Err())
		case <-tick.C:
		}
		offs, err := adm.FetchOffsets(ctx, app)
		if err != nil {
			continue // the group may not exist yet
		}
		done = true
		for p, end := range b.ends {
			o, ok := offs.Lookup(b.input, p)
			if !ok || o.At < end {
				done = false
			}
		}
	}
	topic := app + "-rekey-repartition"
	parts, err := host.PartitionCount(ctx, b.brokers, topic)
	if err != nil {
		return err
	}
	at := b.last + time.Hour.Milliseconds()
	var recs []*kgo.Record
	for p := range parts {
		id := int64(endID) + int64(p)
		bid := nexmark.Bid{Auction: id, Bidder: id, Channel: "end", DateTime: at}
		key := "all"
		if exp.key != "" {
			key = strconv.FormatInt(id, 10)
		}
		recs = append(recs, &kgo.Record{Topic: topic, Partition: p, Key: []byte(key), Value: bid.AppendJSON(nil),
			Timestamp: time.UnixMilli(at)})
	}
	return cl.ProduceSync(ctx, recs...).FirstErr()
}

// readLatencies returns the percentiles of arrival − the ks.read header (the
// wall-clock ms at which the first processor read the input), for outputs
// that have it (q1, q2).
func readLatencies(recs []abi.Record, arrivals []time.Time) (p50, p99 time.Duration) {
	var lat []time.Duration
	for i, r := range recs {
		for _, h := range r.Headers {
			if h.Key == "ks.read" {
				ms, err := strconv.ParseInt(string(h.Value), 10, 64)
				if err == nil {
					lat = append(lat, arrivals[i].Sub(time.UnixMilli(ms)))
				}
			}
		}
	}
	if len(lat) == 0 {
		return 0, 0
	}
	slices.Sort(lat)
	return lat[len(lat)/2], lat[len(lat)*99/100]
}

// runEddy runs `eddy bench nexmark --kafka` for query q with the native
// functions or the guests of a language; it writes its own input (the same
// events) and checks its output itself.
func (b *bench) runEddy(ctx context.Context, q, system string) (*run, error) {
	ctx, cancel := context.WithTimeout(ctx, b.timeout)
	defer cancel()
	args := []string{"bench", "nexmark", "--kafka", "--brokers", b.config.brokers, "--query", q,
		"--events", strconv.FormatInt(b.config.events, 10), "--partitions", strconv.Itoa(b.partitions),
		"--guarantee", b.guarantee, "--testdata", b.testdata, "--json", "--check"}
	if system == "native" {
		args = append(args, "--native")
	} else {
		args = append(args, "--lang", system)
	}
	cmd := exec.CommandContext(ctx, b.eddy, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("eddy %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	var rep struct {
		Events       int64
		Outputs      int
		Elapsed      time.Duration
		EventsPerSec float64
		CPU          time.Duration
		P50, P99     time.Duration
		Check        string
	}
	if err := json.Unmarshal(stdout, &rep); err != nil {
		return nil, fmt.Errorf("eddy's report %q: %w", stdout, err)
	}
	return &run{Query: q, System: "eddy-" + system, Events: rep.Events, Outputs: rep.Outputs, Elapsed: rep.Elapsed,
		EventsPerSec: rep.EventsPerSec, CPU: rep.CPU, ProcessCPU: cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(),
		P50: rep.P50, P99: rep.P99, Check: rep.Check}, nil
}

func endOffsets(ctx context.Context, brokers []string, topic string) (map[int32]int64, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	offs, err := kadm.NewClient(cl).ListEndOffsets(ctx, topic)
	if err != nil {
		return nil, fmt.Errorf("end offsets of %s: %w", topic, err)
	}
	ends := map[int32]int64{}
	offs.Each(func(o kadm.ListedOffset) { ends[o.Partition] = o.Offset })
	return ends, offs.Error()
}

// procCPU returns the user and system CPU time of process pid, all its
// threads, from /proc (in clock ticks of 10 ms).
func procCPU(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The fields after the command (which is in parentheses): state is
	// the 3rd field, utime the 14th, stime the 15th.
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * 10 * time.Millisecond
}

func cpuModel() string {
	b, _ := os.ReadFile("/proc/cpuinfo")
	for _, l := range strings.Split(string(b), "\n") {
		if name, ok := strings.CutPrefix(l, "model name"); ok {
			return strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(name), ":"))
		}
	}
	return "unknown CPU"
}

func loadAvg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func printTable(w io.Writer, c *config, runs []*run) {
	type key struct{ q, s string }
	by := map[key][]*run{}
	var order []key
	for _, r := range runs {
		k := key{r.Query, r.System}
		if by[k] == nil {
			order = append(order, k)
		}
		by[k] = append(by[k], r)
	}
	slices.SortStableFunc(order, func(a, b key) int {
		return cmp.Compare(slices.Index(c.queries, a.q), slices.Index(c.queries, b.q))
	})
	fmt.Fprintf(w, "\n%d events, delivery %s, %d runs each (medians; min–max of events/s)\n\n", c.events, c.guarantee, c.runs)
	tw := tabwriter.NewWriter(w, 0, 4, 1, ' ', 0)
	fmt.Fprintln(tw, "| query\t| system\t| events/s\t| (min–max)\t| CPU s / M events\t| p50\t| p99\t| events/s vs KS\t| events per CPU-s vs KS\t| check\t|")
	fmt.Fprintln(tw, "|---\t|---\t|--:\t|--:\t|--:\t|--:\t|--:\t|--:\t|--:\t|---\t|")
	stats := func(rs []*run) (eps, cpm, lo, hi float64, p50, p99 time.Duration, check string) {
		var e, m, a, b []float64
		check = "ok"
		for _, r := range rs {
			e = append(e, r.EventsPerSec)
			m = append(m, r.cpuPerMillion())
			a = append(a, float64(r.P50))
			b = append(b, float64(r.P99))
			if r.Check != "ok" {
				check = r.Check
			}
		}
		return median(e), median(m), slices.Min(e), slices.Max(e), time.Duration(median(a)), time.Duration(median(b)), check
	}
	for _, k := range order {
		eps, cpm, lo, hi, p50, p99, check := stats(by[k])
		vsEPS, vsCPU := "-", "-"
		if ks := by[key{k.q, "kafka-streams"}]; ks != nil && k.s != "kafka-streams" {
			kEPS, kCPM, _, _, _, _, _ := stats(ks)
			vsEPS = fmt.Sprintf("%.2f", eps/kEPS)
			vsCPU = fmt.Sprintf("%.2f", kCPM/cpm)
		}
		lat := func(d time.Duration) string {
			if d == 0 {
				return "-"
			}
			return d.Round(time.Millisecond).String()
		}
		fmt.Fprintf(tw, "| %s\t| %s\t| %.0f\t| %.0f–%.0f\t| %.2f\t| %s\t| %s\t| %s\t| %s\t| %s\t|\n",
			k.q, k.s, eps, lo, hi, cpm, lat(p50), lat(p99), vsEPS, vsCPU, check)
	}
	tw.Flush()
}
