package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	eddy "github.com/eddy-streams/eddy"
	"github.com/eddy-streams/eddy/host"
	"github.com/eddy-streams/eddy/host/embedded"
	"github.com/eddy-streams/eddy/nexmark"
	"github.com/eddy-streams/eddy/nexmark/nxbench"
	"github.com/eddy-streams/eddy/runtime"
)

func newBenchCmd(c *cli) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Benchmarks",
	}
	cmd.AddCommand(newBenchNexmarkCmd(c))
	return cmd
}

// nexmarkFlags are the flags of `eddy bench nexmark` beyond nxbench.Options,
// and the generated events once --check needed them.
type nexmarkFlags struct {
	queries             []string
	both, check, asJSON bool
	kafka               bool
	brokers, guarantee  string
	timeout             time.Duration

	events       []nexmark.Event
	eventsLoaded bool
}

func newBenchNexmarkCmd(c *cli) *cobra.Command {
	var o nxbench.Options
	var nf nexmarkFlags
	cmd := &cobra.Command{
		Use:   "nexmark",
		Short: "Run Nexmark queries in process or Kafka to Kafka: Wasm guests against native Go",
		Long: `Generate Nexmark events (Apache Beam's generator, default configuration) and
run a query's Eddy pipeline over them. Functions are the Wasm guests
(testdata/<lang>/nx-*.wasm) or, with --native, the same logic written in Go
and run through the same host paths. --both runs each and prints the ratio.
--check compares the output with the nexmark package's reference results.

In process (the default): the node's tasks, steps, windows, joins and Badger
state, without Kafka (host.InProcess), on one goroutine, so events/s is per
core; generating the events is not timed. p50/p99: from sending a chunk of
events into the pipeline to each output it caused (processing latency, not
event-time latency: windows fire when the event time passes them).
allocs/event: the engine's Go heap allocations per event.

Kafka to Kafka (--kafka): the events are first written to new topics
(nexmark-<query>-<stamp>-bids and so on; not timed), then a real node
(host.Node) runs the pipeline with --guarantee, reading them and writing to
nexmark-<query>-<stamp>-out, in this process. Without --brokers each run
starts an embedded broker (kfake) in this process, which then shares its
cores and its heap; with --brokers the run's topics are left on the cluster.
Queries with windows or timers get one end event per input partition, an
hour after the end of the last event's UTC day (past the day-long windows
of q15-q17), which closes their last windows and fires their last timers
(their own stay open). A run
ends when the node has read every input and its output has not changed for
a second (not timed); a query that repartitions (one with a key_by step) is
first run in process with the native functions, untimed, to learn how many
outputs to wait for, since its second stage shows no progress until a
window closes.
  events/s: generated events / the time from the node's start (consumer group
    join included) until its last output is readable; per process, which uses
    every core (GOMAXPROCS, printed above the table), not per core.
  p50/p99: from the moment the node's first stage had processed the input
    that caused an output (the node's input counter, sampled every ms, passed
    it) to the output's arrival at a read_committed consumer in this process
    — under exactly_once, the commit of the output's transaction (every
    100 ms). Window results are paired with the first input at or after the
    window's end (the one that can close it); other outputs with the inputs in
    order and in proportion: exact for one output per input (q0, q1) but for
    how the partitions interleave, an approximation for filters and joins. For queries that repartition, the
    latency spans both stages.
  allocs/event: heap allocations of the whole process while the node runs —
    the embedded broker's included — less the output reader's (measured by
    reading the output again after the run).
  CPU (--json only, ns): user and system CPU time of the whole process over
    the timed part: the node, the output reader and the counter sampling
    (and an embedded broker's, without --brokers).
A run that makes no progress for a minute fails, as does one longer than
--timeout.`,
		Example: `  eddy bench nexmark --query q1 --events 1000000 --both
  eddy bench nexmark --query all --events 200000 --both --check
  eddy bench nexmark --query q1,q2,q12 --events 1000000 --kafka --both
  eddy bench nexmark --query q1 --kafka --guarantee at_least_once --brokers 127.0.0.1:9092`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkPartitions(int(o.Partitions)); err != nil {
				return err
			}
			if len(nf.queries) == 1 && nf.queries[0] == "all" {
				nf.queries = nxbench.Names()
			}
			if !nf.kafka && (cmd.Flags().Changed("brokers") || cmd.Flags().Changed("guarantee")) {
				return fmt.Errorf("--brokers and --guarantee need --kafka")
			}
			eng, err := runtime.NewEngine(c.engineOptions(nil)...)
			if err != nil {
				return err
			}
			defer eng.Close(cmd.Context())
			o.Engine, o.Keep, o.Guarantee = eng, nf.check, host.Delivery(nf.guarantee)
			if o.Testdata == "" {
				// The bundled modules, unless run from a checkout
				// whose fixtures may be newer.
				o.Testdata = "testdata"
				if _, err := os.Stat(filepath.Join(o.Testdata, "go", "nx-q1.wasm")); err != nil {
					dir, err := os.MkdirTemp("", "eddy-bench")
					if err != nil {
						return err
					}
					defer os.RemoveAll(dir)
					if o.Testdata, err = eddy.WriteGuests(dir); err != nil {
						return err
					}
				}
			}
			if o.Testdata, err = filepath.Abs(o.Testdata); err != nil {
				return err
			}
			return runNexmark(cmd.Context(), c.stdout, o, &nf)
		},
	}
	f := cmd.Flags()
	f.StringSliceVar(&nf.queries, "query", []string{"q1"}, "queries to run: "+fmt.Sprint(nxbench.Names())+" or all")
	f.Int64Var(&o.Events, "events", 1_000_000, "events to generate")
	f.BoolVar(&o.Native, "native", false, "run the native Go functions instead of the Wasm guests")
	f.BoolVar(&nf.both, "both", false, "run native and Wasm, and print their ratio")
	f.StringVar(&o.Lang, "lang", "go", "language of the guests: go or c (C guests exist for q1 and q2)")
	f.StringVar(&o.Testdata, "testdata", "", "directory of the guest fixtures (default ./testdata if it has them, else the modules bundled in eddy)")
	f.Int32Var(&o.Partitions, "partitions", 4, "partitions per topic (tasks per stage)")
	f.IntVar(&o.BatchSize, "batch-size", 500, "records per guest call")
	f.BoolVar(&nf.check, "check", false, "compare the output with the reference results")
	f.BoolVar(&nf.asJSON, "json", false, "print one JSON object per run")
	f.BoolVar(&nf.kafka, "kafka", false, "run Kafka to Kafka with a real node instead of in process")
	f.StringVar(&nf.brokers, "brokers", "", "with --kafka: Kafka bootstrap brokers, comma-separated (default: an embedded broker per run)")
	f.StringVar(&nf.guarantee, "guarantee", string(host.ExactlyOnce), "with --kafka: the delivery guarantee, exactly_once or at_least_once")
	f.DurationVar(&nf.timeout, "timeout", 10*time.Minute, "with --kafka: the longest a run may take")
	cmd.AddCommand(newBenchNexmarkGenCmd(c))
	return cmd
}

// runNexmark runs every query of nf, with native and Wasm functions if
// nf.both, and prints a table (or JSON lines) to w.
func runNexmark(ctx context.Context, w io.Writer, o nxbench.Options, nf *nexmarkFlags) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	if !nf.asJSON {
		if nf.kafka {
			where := "an embedded broker per run, in this process"
			if nf.brokers != "" {
				where = nf.brokers
			}
			fmt.Fprintf(w, "Kafka to Kafka (%s), delivery %s, GOMAXPROCS %d\n", where, o.Guarantee, goruntime.GOMAXPROCS(0))
		}
		fmt.Fprintln(tw, "query\tfunctions\tevents/s\tp50\tp99\tallocs/event\toutputs\tvs native\tcheck\t")
	}
	for _, q := range nf.queries {
		runs := []bool{o.Native}
		if nf.both {
			runs = []bool{true, false}
		}
		var native float64
		for _, nat := range runs {
			ro := o
			ro.Query, ro.Native = q, nat
			rep, err := nf.run(ctx, ro)
			if err != nil {
				return fmt.Errorf("%s: %w", q, err)
			}
			verdict, err := nf.verdict(q, rep)
			if err != nil {
				return err
			}
			ratio := "-"
			if nat {
				native = rep.EventsPerSec
			} else if native > 0 {
				ratio = fmt.Sprintf("%.2f", rep.EventsPerSec/native)
			}
			if nf.asJSON {
				printNexmarkJSON(w, rep, nf, o.Guarantee, ratio, verdict)
				continue
			}
			fmt.Fprintf(tw, "%s\t%s\t%.0f\t%s\t%s\t%.1f\t%d\t%s\t%s\t\n", q, rep.Functions, rep.EventsPerSec, rep.P50.Round(1000),
				rep.P99.Round(1000), rep.AllocsPerEvent, rep.Outputs, ratio, verdict)
		}
	}
	return tw.Flush()
}

// run runs one query in the mode of nf.
func (nf *nexmarkFlags) run(ctx context.Context, o nxbench.Options) (*nxbench.Report, error) {
	if !nf.kafka {
		return nxbench.RunInProcess(ctx, o)
	}
	ctx, cancel := context.WithTimeout(ctx, nf.timeout)
	defer cancel()
	return nxbench.RunKafka(ctx, o, splitBrokers(nf.brokers))
}

// verdict checks the run's output with --check ("-" without) and drops it.
func (nf *nexmarkFlags) verdict(q string, rep *nxbench.Report) (string, error) {
	if !nf.check {
		return "-", nil
	}
	defer func() { rep.Out = nil }()
	if !nf.eventsLoaded {
		all, err := nxbench.Events(rep.Events)
		if err != nil {
			return "", err
		}
		nf.events, nf.eventsLoaded = all, true
	}
	if err := nxbench.Queries[q].Check(nf.events, rep.Out); err != nil {
		return "FAILED: " + err.Error(), nil
	}
	return "ok", nil
}

func printNexmarkJSON(w io.Writer, rep *nxbench.Report, nf *nexmarkFlags, g host.Delivery, ratio, verdict string) {
	mode := "in_process"
	if nf.kafka {
		mode = "kafka"
	} else {
		g = ""
	}
	b, _ := json.Marshal(struct {
		*nxbench.Report
		Mode      string
		Guarantee host.Delivery `json:",omitempty"`
		Ratio     string        `json:"VsNative"`
		Check     string
	}{rep, mode, g, ratio, verdict})
	fmt.Fprintf(w, "%s\n", b)
}

func newBenchNexmarkGenCmd(c *cli) *cobra.Command {
	var o nxbench.GenOptions
	var brokers, out string
	var useEmbedded bool
	cmd := &cobra.Command{
		Use:   "gen",
		Short: "Write Nexmark events to Kafka topics or a JSON-lines file",
		Long: `Generate Nexmark events (Apache Beam's generator, default configuration) and
write them to the topics persons, auctions and bids (behind --topic-prefix;
created with --partitions partitions when missing; keyed by person or
auction ID; the record timestamp is the event time), or with --out to a file
of JSON lines, one event per line (- for stdout). --embedded writes to a
broker started in this process, which goes away with it: it measures
writing, nothing else. Prints the events written and the rate.`,
		Example: `  eddy bench nexmark gen --events 1000000 --brokers 127.0.0.1:9092
  eddy bench nexmark gen --events 10000 --out events.jsonl`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkPartitions(int(o.Partitions)); err != nil {
				return err
			}
			if out != "" && (useEmbedded || cmd.Flags().Changed("brokers")) {
				return fmt.Errorf("--out writes a file: give it without --brokers or --embedded")
			}
			var rep *nxbench.GenReport
			var err error
			switch {
			case out != "":
				rep, err = genToFile(cmd.Context(), c, out, o.Events)
			case useEmbedded:
				b, serr := embedded.Start(embedded.Config{Partitions: int(o.Partitions)})
				if serr != nil {
					return serr
				}
				defer b.Close()
				rep, err = nxbench.Generate(cmd.Context(), []string{b.Addr()}, o)
			default:
				rep, err = nxbench.Generate(cmd.Context(), splitBrokers(brokers), o)
			}
			if err != nil {
				return err
			}
			w := c.stdout
			if out == "-" {
				w = c.stderr
			}
			printGenReport(w, rep)
			return nil
		},
	}
	brokersFlag(cmd, &brokers)
	f := cmd.Flags()
	f.Int64Var(&o.Events, "events", 1_000_000, "events to generate")
	f.BoolVar(&useEmbedded, "embedded", false, "write to a broker started in this process (discarded at exit)")
	f.StringVar(&o.Prefix, "topic-prefix", "", "put this before the topic names")
	f.Int32Var(&o.Partitions, "partitions", 4, "partitions of the topics created")
	f.StringVar(&out, "out", "", "write JSON lines to this file instead (- for stdout)")
	return cmd
}

func genToFile(ctx context.Context, c *cli, path string, events int64) (*nxbench.GenReport, error) {
	if path == "-" {
		return nxbench.WriteEvents(ctx, c.stdout, events)
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	rep, err := nxbench.WriteEvents(ctx, f, events)
	if cerr := f.Close(); err == nil && cerr != nil {
		err = cerr
	}
	return rep, err
}

// printGenReport prints what was written.
func printGenReport(w io.Writer, rep *nxbench.GenReport) {
	var parts []string
	for _, t := range []string{nxbench.TopicPersons, nxbench.TopicAuctions, nxbench.TopicBids} {
		for name, n := range rep.Topics {
			if strings.HasSuffix(name, t) {
				parts = append(parts, fmt.Sprintf("%s %d", name, n))
			}
		}
	}
	fmt.Fprintf(w, "%d events (%s) in %s: %.0f events/s\n", rep.Events, strings.Join(parts, ", "),
		rep.Elapsed.Round(time.Millisecond), rep.PerSec())
}
