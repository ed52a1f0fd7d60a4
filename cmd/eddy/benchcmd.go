package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"text/tabwriter"

	"github.com/spf13/cobra"

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

func newBenchNexmarkCmd(c *cli) *cobra.Command {
	var o nxbench.Options
	var queries []string
	var both, check, asJSON bool
	cmd := &cobra.Command{
		Use:   "nexmark",
		Short: "Run Nexmark queries in process: Wasm guests against native Go",
		Long: `Generate Nexmark events (Apache Beam's generator, default configuration) and
run a query's Eddy pipeline over them in process: the node's tasks, steps,
windows, joins and Badger state, without Kafka (host.InProcess), on one
goroutine, so events/s is per core. Functions are the Wasm guests
(testdata/<lang>/nx-*.wasm) or, with --native, the same logic written in Go
and run through the same host paths. --both runs each and prints the ratio.

Columns: events/s; p50/p99: from sending a chunk of events into the pipeline
to each output it caused (processing latency, not event-time latency:
windows fire when the event time passes them); allocs/event: Go heap
allocations per event, whole process; outputs. --check compares the output
with the nexmark package's reference results.`,
		Example: `  eddy bench nexmark --query q1 --events 1000000 --both
  eddy bench nexmark --query all --events 200000 --both --check`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if len(queries) == 1 && queries[0] == "all" {
				queries = nxbench.Names()
			}
			eng, err := runtime.NewEngine(c.engineOptions(nil)...)
			if err != nil {
				return err
			}
			defer eng.Close(cmd.Context())
			o.Engine, o.Keep = eng, check
			if o.Testdata == "" {
				o.Testdata = "testdata"
			}
			if o.Testdata, err = filepath.Abs(o.Testdata); err != nil {
				return err
			}
			var evs []nexmarkEvents
			tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
			if !asJSON {
				fmt.Fprintln(tw, "query\tfunctions\tevents/s\tp50\tp99\tallocs/event\toutputs\tvs native\tcheck\t")
			}
			for _, q := range queries {
				runs := []bool{o.Native}
				if both {
					runs = []bool{true, false}
				}
				var native float64
				for _, nat := range runs {
					ro := o
					ro.Query, ro.Native = q, nat
					rep, err := nxbench.RunInProcess(cmd.Context(), ro)
					if err != nil {
						return fmt.Errorf("%s: %w", q, err)
					}
					verdict := "-"
					if check {
						if evs == nil {
							all, err := nxbench.Events(o.Events)
							if err != nil {
								return err
							}
							evs = []nexmarkEvents{{all}}
						}
						verdict = "ok"
						if err := nxbench.Queries[q].Check(evs[0].evs, rep.Out); err != nil {
							verdict = "FAILED: " + err.Error()
						}
						rep.Out = nil
					}
					ratio := "-"
					if nat {
						native = rep.EventsPerSec
					} else if native > 0 {
						ratio = fmt.Sprintf("%.2f", rep.EventsPerSec/native)
					}
					if asJSON {
						b, _ := json.Marshal(struct {
							*nxbench.Report
							Ratio string `json:"VsNative"`
							Check string
						}{rep, ratio, verdict})
						fmt.Fprintf(c.stdout, "%s\n", b)
						continue
					}
					fmt.Fprintf(tw, "%s\t%s\t%.0f\t%s\t%s\t%.1f\t%d\t%s\t%s\t\n", q, rep.Functions, rep.EventsPerSec, rep.P50.Round(1000),
						rep.P99.Round(1000), rep.AllocsPerEvent, rep.Outputs, ratio, verdict)
				}
			}
			return tw.Flush()
		},
	}
	f := cmd.Flags()
	f.StringSliceVar(&queries, "query", []string{"q1"}, "queries to run: "+fmt.Sprint(nxbench.Names())+" or all")
	f.Int64Var(&o.Events, "events", 1_000_000, "events to generate")
	f.BoolVar(&o.Native, "native", false, "run the native Go functions instead of the Wasm guests")
	f.BoolVar(&both, "both", false, "run native and Wasm, and print their ratio")
	f.StringVar(&o.Lang, "lang", "go", "language of the guests: go or c (C guests exist for q1 and q2)")
	f.StringVar(&o.Testdata, "testdata", "", "directory of the guest fixtures (default ./testdata)")
	f.Int32Var(&o.Partitions, "partitions", 4, "partitions per topic (tasks per stage)")
	f.IntVar(&o.BatchSize, "batch-size", 500, "records per guest call")
	f.BoolVar(&check, "check", false, "compare the output with the reference results")
	f.BoolVar(&asJSON, "json", false, "print one JSON object per run")
	return cmd
}

type nexmarkEvents struct{ evs []nexmark.Event }
