package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/eddy-streams/eddy/host/admin"
)

func newStateCmd(c *cli) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "state",
		Short: "Query the state of a running pipeline",
	}
	cmd.AddCommand(newStateGetCmd(c))
	return cmd
}

func newStateGetCmd(c *cli) *cobra.Command {
	var af adminFlags
	var pipeline, store, prefix, from, to string
	var limit int
	var stale bool
	cmd := &cobra.Command{
		Use:   "get [KEY]",
		Short: "Read a store's entries: one key, or a prefix or range scan",
		Long: `Read the committed entries of a pipeline's store through a node's admin API
(GET /v1/state/PIPELINE/STORE[/KEY]). A store is a step with state: true (its
keyed state), an aggregate step (each window's result, computed by the
step's function from the stored accumulator), or a table. Any node of the
pipeline answers: a node that does not hold the key's partition forwards the
query to the one that does, and a scan gathers every node's partitions.
With --stale a key may be answered from a standby copy (standby_replicas):
by the asked node if it keeps one, or by a node that does when the owner
cannot answer (it is gone; a rebalance); the answer is then as the owner's
state was some records ago, and says so on stderr.

Each entry prints as one JSON line:

  {"key":"k1","value":12,"partition":3}
  {"key":"k1","value":{"count":4},"partition":3,"window":[1700000000000,1700000001000]}

Values that are JSON print as JSON, other text as strings, other bytes as
"value_b64". Exit status 1 if the key has no entry.`,
		Example: `  eddy state get --pipeline counts --store count user-42
  eddy state get --pipeline counts --store count --prefix user-
  eddy state get --pipeline windows --store stats --from a --to m --limit 100
  eddy state get --pipeline counts --store count --stale user-42`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			q := admin.StateQuery{Pipeline: pipeline, Store: store, Limit: limit, Stale: stale}
			if len(args) == 1 {
				q.Key = []byte(args[0])
			}
			if cmd.Flags().Changed("prefix") {
				q.Prefix = []byte(prefix)
			}
			if cmd.Flags().Changed("from") {
				q.From = []byte(from)
			}
			if cmd.Flags().Changed("to") {
				q.To = []byte(to)
			}
			if q.Key != nil && (q.Prefix != nil || q.From != nil || q.To != nil) {
				return fmt.Errorf("give a KEY or --prefix/--from/--to, not both")
			}
			if stale && q.Key == nil {
				return fmt.Errorf("--stale reads one KEY: scans are answered by the partitions' owners")
			}
			var res admin.StateResult
			err := af.call(cmd.Context(), "state", func(ctx context.Context, cl *admin.Client) (err error) {
				res, err = cl.State(ctx, q)
				return err
			})
			if err != nil {
				return err
			}
			for _, e := range res.Entries {
				b, err := json.Marshal(e)
				if err != nil {
					return err
				}
				fmt.Fprintf(c.stdout, "%s\n", b)
			}
			if res.Standby {
				lag := fmt.Sprintf("%d changelog records", res.Lag)
				if res.Lag < 0 {
					lag = "an unknown number of changelog records"
				}
				fmt.Fprintf(c.stderr, "eddy: answered by a standby copy on %s, %s behind its owner\n", res.Node, lag)
			}
			if res.Partial {
				fmt.Fprintf(c.stderr, "eddy: partial result: no answer from %v\n", res.Missing)
			}
			if q.Key != nil && len(res.Entries) == 0 {
				fmt.Fprintf(c.stderr, "eddy: %s/%s has no entry for %q\n", pipeline, store, q.Key)
				return &exitError{code: 1}
			}
			return nil
		},
	}
	af.register(cmd)
	cmd.Flags().StringVarP(&pipeline, "pipeline", "p", "", "the pipeline's name")
	cmd.Flags().StringVar(&store, "store", "", "the store: a stateful step, an aggregate step or a table")
	cmd.Flags().StringVar(&prefix, "prefix", "", "scan the keys that start with this")
	cmd.Flags().StringVar(&from, "from", "", "scan the keys from this one (inclusive)")
	cmd.Flags().StringVar(&to, "to", "", "scan the keys up to this one (exclusive)")
	cmd.Flags().IntVar(&limit, "limit", 0, "most entries of a scan (default 1000)")
	cmd.Flags().BoolVar(&stale, "stale", false, "a standby copy may answer the KEY (behind its owner by its lag)")
	cmd.MarkFlagRequired("pipeline")
	cmd.MarkFlagRequired("store")
	return cmd
}
