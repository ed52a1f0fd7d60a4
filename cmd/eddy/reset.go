package main

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/eddy-streams/eddy/host"
	"github.com/eddy-streams/eddy/host/admin"
	"github.com/eddy-streams/eddy/registry"
)

func newResetCmd(c *cli) *cobra.Command {
	var brokers, pipeline, to, note, token, tokenFile string
	var unsigned bool
	var opts host.ResetOptions
	cmd := &cobra.Command{
		Use:   "reset --pipeline PIPELINE.yaml --to earliest|TIMESTAMP",
		Short: "Reprocess a pipeline's input: reset its offsets, rebuild its state, optionally truncate its output",
		Long: `Move a pipeline back to an earlier point of its input, to process it again
(after a fix, or to rebuild its output). PIPELINE.yaml is the file the nodes
run (its name, topics and steps).

The reset:
  - records a reset in the function registry: the pipeline's nodes stop, and
    nodes that start wait until the reset is done; afterwards each node wipes
    the state it kept in its data directory from before the reset;
  - deletes the pipeline's changelog topics and creates them again empty
    (same partitions, replication factor and topic configs), so that the
    state is rebuilt from the reprocessed input alone;
  - commits the consumer group's offsets: the source topics (and streams
    joined) to their earliest records or to the first record at or after
    TIMESTAMP, the repartition topics and co-partitioned table topics to
    their end (tables are rebuilt from their whole topic);
  - with --truncate-output, deletes the records of the sink, of its shadow
    topic and of the late topic; with --truncate-dead-letters, those of the
    dead-letter topic.

It refuses while nodes of the pipeline are in its consumer group; --force
tells running nodes to stop (they exit with an error; started again, they
wait for the reset and then continue), removes static members from the group
and waits up to --wait for it to be empty. --dry-run prints exactly what the
reset would do and changes nothing.

TIMESTAMP is an RFC 3339 time (2026-03-01T12:00:00Z) or Unix milliseconds.
State is rebuilt from the records from there on: windows and keyed state that
began before TIMESTAMP are rebuilt partly.

The plan prints one action a line:

  offset TOPIC[P]: FROM -> TO (WHY)
  recreate TOPIC: ...
  truncate TOPIC[P]: delete offsets FROM to TO (N records; WHY)
  keep TOPIC: ...

If the reset fails half-way, the pipeline stays fenced (its nodes wait):
run eddy reset again to finish it.`,
		Example: `  eddy reset --pipeline orders.yaml --to earliest --dry-run
  eddy reset --pipeline orders.yaml --to earliest --truncate-output
  eddy reset --pipeline orders.yaml --to 2026-03-01T12:00:00Z --force`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			p, err := host.LoadPipeline(pipeline)
			if err != nil {
				return err
			}
			if opts.To, err = parseResetTo(to); err != nil {
				return fmt.Errorf("--to: %w", err)
			}
			tok, err := admin.ResolveToken(token, tokenFile)
			if err != nil {
				return err
			}
			if tok == "" && !unsigned && !opts.DryRun {
				return fmt.Errorf("reset refused: its registry events must be signed with the pipeline's admin token, which the nodes verify (--token-file, %s or --token); --registry-unsigned writes them unsigned, for nodes without a token or run with --registry-unsigned", admin.TokenEnv)
			}
			opts.RegistryKey = registry.Key(tok)
			opts.Brokers, opts.Note, opts.Logger = splitBrokers(brokers), note, c.logger
			plan, err := host.Reset(cmd.Context(), p, opts)
			var re *host.RunningError
			switch {
			case errors.As(err, &re) && !opts.Force:
				if opts.DryRun && plan != nil {
					fmt.Fprintln(c.stdout, "dry run: nothing was changed; the reset would refuse, the nodes being in the group:")
					plan.WriteTo(c.stdout)
				}
				return fmt.Errorf("reset refused: %w; stop them first, or use --force", err)
			case err != nil:
				return err
			case opts.DryRun:
				fmt.Fprintln(c.stdout, "dry run: nothing was changed; the reset would do this:")
			default:
				fmt.Fprintf(c.stdout, "reset %d of pipeline %s done:\n", plan.Version, p.Name)
			}
			_, err = plan.WriteTo(c.stdout)
			return err
		},
	}
	brokersFlag(cmd, &brokers)
	f := cmd.Flags()
	f.StringVarP(&pipeline, "pipeline", "p", "", "the pipeline file (as given to eddy run)")
	f.StringVar(&to, "to", "", "where the input restarts: earliest, an RFC 3339 time or Unix milliseconds")
	f.BoolVar(&opts.TruncateOutput, "truncate-output", false, "delete the records of the sink, its shadow topic and the late topic")
	f.BoolVar(&opts.TruncateDeadLetters, "truncate-dead-letters", false, "delete the records of the dead-letter topic")
	f.BoolVar(&opts.Force, "force", false, "reset even while nodes run: they are told to stop")
	f.BoolVar(&opts.DryRun, "dry-run", false, "print what the reset would do; change nothing")
	f.DurationVar(&opts.Wait, "wait", time.Minute, "how long to wait for the nodes to leave the group")
	f.StringVar(&note, "note", "", "why, recorded in the registry")
	f.StringVar(&token, "token", "", "the pipeline's admin token, which signs the reset's registry events (default: env "+admin.TokenEnv+", then --token-file); visible in the process list")
	f.StringVar(&tokenFile, "token-file", "", "file holding the admin token")
	f.BoolVar(&unsigned, "registry-unsigned", false, "write the reset's registry events unsigned (nodes with a token refuse them)")
	cmd.MarkFlagRequired("pipeline")
	cmd.MarkFlagRequired("to")
	return cmd
}

// parseResetTo parses --to: the zero time for earliest.
func parseResetTo(s string) (time.Time, error) {
	if strings.EqualFold(s, "earliest") {
		return time.Time{}, nil
	}
	if ms, err := strconv.ParseInt(s, 10, 64); err == nil {
		if ms < 0 {
			return time.Time{}, fmt.Errorf("%d: negative milliseconds", ms)
		}
		return time.UnixMilli(ms).UTC(), nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q: want earliest, an RFC 3339 time (2026-03-01T12:00:00Z) or Unix milliseconds", s)
	}
	return t, nil
}
