package main

import (
	"fmt"
	"io"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/eddy-streams/eddy/abi"
)

// version is eddy's version when the build sets it, with -ldflags
// "-X main.version=v1.2.3"; otherwise the module's version from the build
// information is shown (writeVersion).
var version = ""

func newVersionCmd(c *cli) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version of eddy, its guest ABI and its main dependencies",
		Long: `Print eddy's version and, for a build from a git checkout (go build or go
install in the repository; go records it unless -buildvcs=false), the
commit it was built from, its time and whether the work tree had
uncommitted changes; then the guest ABI version, the Go version and the
versions of the main dependencies.`,
		Example: `  eddy version`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			bi, _ := debug.ReadBuildInfo()
			writeVersion(c.stdout, version, bi)
			return nil
		},
	}
}

// writeVersion writes what eddy version prints. The first line is eddy's
// version: v, else the main module's version from bi (a release, a
// pseudo-version, or "(devel)" for a build of a checkout). The second,
// when bi has the version control information go build records in a
// checkout, is the commit, its time and "modified" for a work tree with
// uncommitted changes. bi may be nil (a binary without build
// information).
func writeVersion(w io.Writer, v string, bi *debug.BuildInfo) {
	if v == "" && bi != nil {
		v = bi.Main.Version
	}
	if v == "" {
		v = "(devel)"
	}
	fmt.Fprintf(w, "eddy %s\n", v)
	if bi != nil {
		vcs := map[string]string{}
		for _, s := range bi.Settings {
			vcs[s.Key] = s.Value
		}
		if rev := vcs["vcs.revision"]; rev != "" {
			line := "commit " + rev
			if at := vcs["vcs.time"]; at != "" {
				line += " of " + at
			}
			if vcs["vcs.modified"] == "true" {
				line += ", modified (the work tree had uncommitted changes)"
			}
			fmt.Fprintln(w, line)
		}
	}
	fmt.Fprintf(w, "guest ABI v%d\n", abi.Version)
	if bi != nil {
		fmt.Fprintf(w, "%s\n", bi.GoVersion)
		for _, d := range bi.Deps {
			switch d.Path {
			case "github.com/tetratelabs/wazero", "github.com/twmb/franz-go", "github.com/dgraph-io/badger/v4":
				fmt.Fprintf(w, "%s %s\n", d.Path, d.Version)
			}
		}
	}
}
