package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/eddy-streams/eddy/runtime"
)

func newInspectCmd(c *cli) *cobra.Command {
	var asJSON bool
	var ff functionFlags
	cmd := &cobra.Command{
		Use:   "inspect FN.wasm",
		Short: "Validate a function module and print what it is",
		Long: `Load and validate a function module, then print its ABI version, the kinds it
implements (from its manifest), its imports and exports, its memory needs
against the host's limit, and its sha256 digest. A module that would be
refused is reported with the reason and a non-zero exit.`,
		Example: `  eddy inspect testdata/go/upper.wasm
  eddy inspect --json testdata/go/stats.wasm`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			fn, done, err := c.loadFunction(cmd.Context(), args[0], &ff)
			if err != nil {
				return err
			}
			defer done()
			info := fn.Info()
			if asJSON {
				enc := json.NewEncoder(c.stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(map[string]any{
					"file": args[0], "sha256": info.Digest, "size": info.Size, "abi": info.ABIVersion,
					"kinds": info.Manifest.Kinds, "name": info.Manifest.Name, "version": info.Manifest.Version,
					"sdk": info.Manifest.SDK, "imports": info.Imports, "exports": info.Exports,
					"memory": map[string]any{"min_pages": info.MemoryMin, "max_pages": info.MemoryMax, "limit_bytes": info.MemoryLimit},
				})
			}
			tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
			kinds := make([]string, len(info.Manifest.Kinds))
			for i, k := range info.Manifest.Kinds {
				kinds[i] = string(k)
			}
			maxPages := "none declared"
			if info.MemoryMax > 0 {
				maxPages = fmt.Sprintf("%d pages (%s)", info.MemoryMax, bytesize(int64(info.MemoryMax)*65536))
			}
			rows := [][2]string{
				{"file", args[0]},
				{"sha256", info.Digest},
				{"size", bytesize(int64(info.Size))},
				{"abi", fmt.Sprintf("v%d", info.ABIVersion)},
				{"kinds", strings.Join(kinds, ", ")},
				{"name", orDash(info.Manifest.Name)},
				{"version", orDash(info.Manifest.Version)},
				{"sdk", orDash(info.Manifest.SDK)},
				{"memory", fmt.Sprintf("%d pages (%s) at start, max %s, host limit %s", info.MemoryMin, bytesize(int64(info.MemoryMin)*65536), maxPages, bytesize(int64(info.MemoryLimit)))},
				{"imports", orDash(strings.Join(info.Imports, "\n\t"))},
				{"exports", strings.Join(info.Exports, "\n\t")},
			}
			for _, r := range rows {
				fmt.Fprintf(tw, "%s\t%s\n", r[0], r[1])
			}
			return tw.Flush()
		},
	}
	ff.register(cmd, runtime.DefaultCallTimeout)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func bytesize(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
