package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/eddy-streams/eddy/conformance"
)

// maxConformanceCalls bounds --calls: ten times the default.
const maxConformanceCalls = 1000000

func newConformanceCmd(c *cli) *cobra.Command {
	var calls int
	var maxTime time.Duration
	var reference string
	var ff functionFlags
	cmd := &cobra.Command{
		Use:   "conformance FN.wasm",
		Short: "Check that a function module follows the guest ABI",
		Long: `Drive a function module through the standard cases of the guest ABI
(abi/ABI.md): batches of 0, 1 and many records giving the same results; null
and empty keys and values, values of 1 MiB and more, binary payloads, headers
and unicode without a call failure; with and without keyed state; aggregate
merge consistency (failing when the function refuses every sample record:
JSON numbers, bids, persons and auctions); 100,000 calls on one instance
with memory staying bounded. The whole run is bounded by --max-time (and
each call by --timeout); a case keeps at most 10,000 guest log lines and
1 MiB of their text.
With --reference NAME the module is also checked for the exact behaviour of
that reference function (` + strings.Join(conformance.References(), ", ") + `):
what an SDK's port of guests/<lang>/NAME must do. A module's name never
selects reference checks by itself. The guest's log lines are written at
--log-level debug. Exit status 1 when any case fails.`,
		Example: `  eddy conformance my-function.wasm
  eddy conformance --reference upper testdata/go/upper.wasm
  eddy conformance --calls 10000 my-function.wasm`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := ff.validate(); err != nil {
				return err
			}
			if calls < 1 || calls > maxConformanceCalls {
				return fmt.Errorf("--calls: must be between 1 and %d, got %d", maxConformanceCalls, calls)
			}
			wasm, err := os.ReadFile(args[0])
			if err != nil {
				return err
			}
			if maxTime <= 0 {
				return fmt.Errorf("--max-time must be positive, got %s", maxTime)
			}
			opts := conformance.Options{Calls: calls, Engine: c.engineOptions(&ff), Timeout: maxTime, Reference: reference, Logger: c.logger}
			name := strings.TrimSuffix(filepath.Base(args[0]), filepath.Ext(args[0]))
			rep, err := conformance.Run(cmd.Context(), name, wasm, opts)
			if err != nil {
				return err
			}
			m := rep.Manifest
			fmt.Fprintf(c.stdout, "%s: %s %s (%s), kinds %v\n\n", args[0], orDash(m.Name), m.Version, orDash(m.SDK), m.Kinds)
			if reference == "" && slices.Contains(conformance.References(), m.Name) {
				fmt.Fprintf(c.stdout, "(%s is also the name of a reference function: --reference %s checks its exact behaviour)\n\n", m.Name, m.Name)
			}
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
	cmd.Flags().DurationVar(&maxTime, "max-time", conformance.DefaultTimeout, "time limit of the whole run (--timeout bounds one call)")
	cmd.Flags().StringVar(&reference, "reference", "", "also check the exact behaviour of this reference function: "+strings.Join(conformance.References(), ", "))
	return cmd
}
