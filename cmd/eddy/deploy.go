package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/eddy-streams/eddy/host/admin"
)

func newDeployCmd(c *cli) *cobra.Command {
	var af adminFlags
	var sf stepFlags
	var note, sample, expect string
	var shadow bool
	cmd := &cobra.Command{
		Use:   "deploy FN.wasm",
		Short: "Deploy a function to a step of a running pipeline, without a restart",
		Long: `Deploy FN.wasm to a step of a pipeline through a running node's admin API
(--admin). The node checks the module (WebAssembly, the guest ABI, the
exports the step needs) and, with --sample and --expect, runs it over the
sample records and compares its output with the expected ones; if all is
well it records the module in the function registry, from which every node
running the pipeline takes it up. With --shadow the module runs
beside the live one and writes to the shadow output instead, until
"eddy promote" or "eddy discard".

Deploying needs the node's admin token: --token-file, EDDY_ADMIN_TOKEN or
--token, in that order of preference.

` + eventFormat,
		Example: `  eddy deploy enrich.wasm --pipeline orders --step enrich --note "3.2: currency fix"
  eddy deploy enrich.wasm -p orders -s enrich --shadow
  eddy deploy enrich.wasm -p orders -s enrich --sample in.jsonl --expect out.jsonl`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if expect != "" && sample == "" {
				return errors.New("--expect needs --sample: the records to run the function over")
			}
			req := admin.DeployRequest{Pipeline: sf.pipeline, Step: sf.step, Note: note, Shadow: shadow}
			var err error
			if req.Module, err = os.ReadFile(args[0]); err != nil {
				return err
			}
			if len(req.Module) == 0 {
				return fmt.Errorf("%s: empty file", args[0])
			}
			if sample != "" {
				if req.Sample, err = os.ReadFile(sample); err != nil {
					return fmt.Errorf("--sample: %w", err)
				}
			}
			if expect != "" {
				if req.Expect, err = os.ReadFile(expect); err != nil {
					return fmt.Errorf("--expect: %w", err)
				}
			}
			return af.call(cmd.Context(), "deploy rejected", func(ctx context.Context, cl *admin.Client) error {
				ev, err := cl.Deploy(ctx, req)
				if err == nil {
					writeEvent(c.stdout, ev)
				}
				return err
			})
		},
	}
	af.register(cmd)
	sf.register(cmd)
	f := cmd.Flags()
	f.StringVar(&note, "note", "", "why, recorded in the history")
	f.BoolVar(&shadow, "shadow", false, "run the module beside the live one, writing to the shadow output")
	f.StringVar(&sample, "sample", "", "JSON-lines records to smoke-test the module with before it goes live")
	f.StringVar(&expect, "expect", "", "JSON-lines records the module must produce from --sample")
	return cmd
}
