package main

import (
	"bytes"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/host"
	"github.com/eddy-streams/eddy/jsonl"
)

func newDiffCmd(c *cli) *cobra.Command {
	var brokers, topic, shadow string
	var idle time.Duration
	var show int
	cmd := &cobra.Command{
		Use:   "diff --topic SINK",
		Short: "Compare a pipeline's live output with its shadow deploy's output",
		Long: `Read the live output topic and its shadow topic (SINK-shadow) with
read_committed isolation until each has been quiet for --idle, pair their
records by the source record they came from (the eddy.source.* headers both
carry while a shadow runs), and report the source records whose outputs
differ, and those with output on one side only. Keys and values are
compared, in order; headers are not (they name the versions).

Output: a summary line, then up to --show examples of each kind, one line
per source record:

  differ SOURCE live [JSON lines...] shadow [JSON lines...]
  only-live SOURCE [JSON lines...]
  only-shadow SOURCE [JSON lines...]

The exit status is 0 when the outputs agree, 1 when they differ or the
comparison failed (with a message).`,
		Example: `  eddy deploy v2.wasm --pipeline orders --step enrich --shadow
  eddy diff --topic orders-enriched
  eddy promote --pipeline orders --step enrich`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if shadow == "" {
				shadow = host.ShadowTopic(topic)
			}
			rep, err := host.Diff(cmd.Context(), splitBrokers(brokers), topic, shadow, idle)
			if err != nil {
				return err
			}
			w := c.stdout
			fmt.Fprintf(w, "live %s: %d records, shadow %s: %d records; %d source records: %d same, %d differ, %d only live, %d only shadow\n",
				topic, rep.LiveRecords, shadow, rep.ShadowRecords, rep.Sources, rep.Same, len(rep.Differ), len(rep.OnlyLive), len(rep.OnlyShadow))
			for i, d := range rep.Differ {
				if i == show {
					break
				}
				fmt.Fprintf(w, "differ %s live %s shadow %s\n", d.Source, recordsJSON(d.Live), recordsJSON(d.Shadow))
			}
			for i, d := range rep.OnlyLive {
				if i == show {
					break
				}
				fmt.Fprintf(w, "only-live %s %s\n", d.Source, recordsJSON(d.Live))
			}
			for i, d := range rep.OnlyShadow {
				if i == show {
					break
				}
				fmt.Fprintf(w, "only-shadow %s %s\n", d.Source, recordsJSON(d.Shadow))
			}
			if len(rep.Differ)+len(rep.OnlyLive)+len(rep.OnlyShadow) > 0 {
				return &exitError{code: 1}
			}
			return nil
		},
	}
	brokersFlag(cmd, &brokers)
	cmd.Flags().StringVar(&topic, "topic", "", "the pipeline's sink topic (required)")
	cmd.Flags().StringVar(&shadow, "shadow-topic", "", "the shadow topic (default: SINK-shadow)")
	cmd.Flags().DurationVar(&idle, "idle", 2*time.Second, "stop reading a topic after it has been quiet this long")
	cmd.Flags().IntVar(&show, "show", 10, "examples to print of each kind of difference")
	cmd.MarkFlagRequired("topic")
	return cmd
}

// recordsJSON writes records as JSON lines joined in brackets.
func recordsJSON(recs []abi.Record) string {
	var b bytes.Buffer
	w := jsonl.NewWriter(&b)
	for i := range recs {
		recs[i].Headers = nil
		w.Write(&recs[i])
	}
	w.Flush()
	return "[" + string(bytes.ReplaceAll(bytes.TrimSuffix(b.Bytes(), []byte("\n")), []byte("\n"), []byte(", "))) + "]"
}
