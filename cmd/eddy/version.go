package main

import (
	"fmt"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/eddy-streams/eddy/abi"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func newVersionCmd(c *cli) *cobra.Command {
	return &cobra.Command{
		Use:     "version",
		Short:   "Print the version of eddy, its guest ABI and its main dependencies",
		Example: `  eddy version`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintf(c.stdout, "eddy %s\n", version)
			fmt.Fprintf(c.stdout, "guest ABI v%d\n", abi.Version)
			if bi, ok := debug.ReadBuildInfo(); ok {
				fmt.Fprintf(c.stdout, "%s\n", bi.GoVersion)
				for _, d := range bi.Deps {
					switch d.Path {
					case "github.com/tetratelabs/wazero", "github.com/twmb/franz-go", "github.com/dgraph-io/badger/v4":
						fmt.Fprintf(c.stdout, "%s %s\n", d.Path, d.Version)
					}
				}
			}
			return nil
		},
	}
}
