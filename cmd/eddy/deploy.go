package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/eddy-streams/eddy/host/admin"
	"github.com/eddy-streams/eddy/registry"
)

func newDeployCmd(c *cli) *cobra.Command {
	var af adminFlags
	var sf stepFlags
	var note, sample, expect string
	var shadow bool
	var cfgValues, cfgEnvs, cfgFiles []string
	cmd := &cobra.Command{
		Use:   "deploy FN.wasm",
		Short: "Deploy a function to a step of a running pipeline, without a restart",
		Long: `Deploy FN.wasm to a step of a pipeline through a running node's admin API
(--admin). The node checks the module (WebAssembly, the guest ABI, the
exports the step needs, and that it fits the step: keyed-state calls need
a step with state: true, timers a map, filter or flat_map step with state:
true) and, with --sample and --expect, runs it over the
sample records and compares its output with the expected ones; if all is
well it records the module in the function registry, from which every node
running the pipeline takes it up. With --shadow the module runs
beside the live one and writes to the shadow output instead, until
"eddy promote" or "eddy discard".

With --config, --config-env or --config-file the new version runs with that
config instead of the step's (all of it: the entries given are the whole
config); without them it carries on the live version's. Secrets are never
sent: --config-env and --config-file name the environment variable or the
file (relative to the pipeline file's directory) each node reads the value
from, and a node that cannot read it keeps its current version.

Deploying needs the node's admin token: --token-file, EDDY_ADMIN_TOKEN or
--token, in that order of preference.

` + eventFormat,
		Example: `  eddy deploy enrich.wasm --pipeline orders --step enrich --note "3.2: currency fix"
  eddy deploy enrich.wasm -p orders -s enrich --shadow
  eddy deploy enrich.wasm -p orders -s enrich --sample in.jsonl --expect out.jsonl
  eddy deploy alert.wasm -p orders -s alert --config threshold=500 --config-env token=ALERT_TOKEN`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if expect != "" && sample == "" {
				return errors.New("--expect needs --sample: the records to run the function over")
			}
			req := admin.DeployRequest{Pipeline: sf.pipeline, Step: sf.step, Note: note, Shadow: shadow}
			var err error
			if req.Config, err = deployConfig(cfgValues, cfgEnvs, cfgFiles); err != nil {
				return err
			}
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
	f.StringArrayVar(&cfgValues, "config", nil, "a config entry NAME=VALUE of the new version (repeatable)")
	f.StringArrayVar(&cfgEnvs, "config-env", nil, "a secret config entry NAME=VAR: each node reads it from its environment variable VAR (repeatable)")
	f.StringArrayVar(&cfgFiles, "config-file", nil, "a secret config entry NAME=PATH: each node reads it from the file PATH (repeatable)")
	return cmd
}

// deployConfig makes the config of a deploy from its flags: nil when none
// is given (the live version's carries on).
func deployConfig(values, envs, files []string) (map[string]registry.ConfigEntry, error) {
	if len(values)+len(envs)+len(files) == 0 {
		return nil, nil
	}
	cfg := map[string]registry.ConfigEntry{}
	for _, f := range []struct {
		flag string
		args []string
		make func(string) registry.ConfigEntry
	}{
		{"--config", values, func(v string) registry.ConfigEntry { return registry.ConfigEntry{Value: v} }},
		{"--config-env", envs, func(v string) registry.ConfigEntry { return registry.ConfigEntry{Env: v} }},
		{"--config-file", files, func(v string) registry.ConfigEntry { return registry.ConfigEntry{File: v} }},
	} {
		for _, a := range f.args {
			name, v, ok := strings.Cut(a, "=")
			switch {
			case !ok || name == "":
				return nil, fmt.Errorf("%s %q: want NAME=VALUE", f.flag, a)
			case f.flag != "--config" && v == "":
				return nil, fmt.Errorf("%s %s: name the %s", f.flag, name, map[bool]string{true: "environment variable", false: "file"}[f.flag == "--config-env"])
			}
			if _, dup := cfg[name]; dup {
				return nil, fmt.Errorf("config entry %s given twice", name)
			}
			cfg[name] = f.make(v)
		}
	}
	return cfg, nil
}
