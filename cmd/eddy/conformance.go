package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/eddy-streams/eddy/conformance"
)

func newConformanceCmd(c *cli) *cobra.Command {
	var calls int
	var ff functionFlags
	cmd := &cobra.Command{
		Use:   "conformance FN.wasm",
		Short: "Check that a function module follows the guest ABI",
		Long: `Drive a function module through the standard cases of the guest ABI
(abi/ABI.md): batches of 0, 1 and many records giving the same results; null
and empty keys and values, values of 1 MiB and more, binary payloads, headers
and unicode without a call failure; with and without keyed state; aggregate
merge consistency; 100,000 calls on one instance with memory staying bounded.
Modules named after a reference function (upper, filter, split, stats,
counter, poison, joiner, wordkey, passthrough) are also checked for its exact
behaviour. Exit status 1 when any case fails.`,
		Example: `  eddy conformance testdata/go/upper.wasm
  eddy conformance --calls 10000 my-function.wasm`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			wasm, err := os.ReadFile(args[0])
			if err != nil {
				return err
			}
			opts := conformance.Options{Calls: calls, Engine: c.engineOptions(&ff)}
			name := strings.TrimSuffix(filepath.Base(args[0]), filepath.Ext(args[0]))
			rep, err := conformance.Run(cmd.Context(), name, wasm, opts)
			if err != nil {
				return err
			}
			m := rep.Manifest
			fmt.Fprintf(c.stdout, "%s: %s %s (%s), kinds %v\n\n", args[0], orDash(m.Name), m.Version, orDash(m.SDK), m.Kinds)
			tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
			failed := 0
			for _, r := range rep.Results {
				status := "ok"
				if !r.Passed {
					status = "FAIL"
					failed++
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\n", status, r.Case, strings.ReplaceAll(r.Detail, "\n", "\n\t\t"))
			}
			tw.Flush()
			fmt.Fprintf(c.stdout, "\n%d passed, %d failed in %s\n", len(rep.Results)-failed, failed, rep.Elapsed.Round(1e6))
			if failed > 0 {
				return &exitError{code: 1}
			}
			return nil
		},
	}
	ff.register(cmd, 30*time.Second)
	cmd.Flags().IntVar(&calls, "calls", 100000, "calls on one instance in the memory-bound cases")
	return cmd
}
