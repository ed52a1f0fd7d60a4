package main

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/eddy-streams/eddy/scaffold"
	"github.com/eddy-streams/eddy/sdk"
)

func newNewCmd(c *cli) *cobra.Command {
	var lang, dir string
	cmd := &cobra.Command{
		Use:   "new --lang LANG NAME",
		Short: "Create a function project in a language, ready to build and test",
		Long: `Create a new function project NAME in the directory NAME (or --dir): a source
file with an upper-case map to start from, a build script, a README, a sample
input and a copy of the language's SDK in eddy-sdk/, so the project builds with
nothing but the language's toolchain (docs/languages/LANG.md says how to
install it). Languages: ` + strings.Join(scaffold.Languages(), ", ") + `.`,
		Example: `  eddy new --lang go myfn && cd myfn && ./build.sh && eddy test myfn.wasm --input sample.jsonl
  eddy new --lang rust --dir /tmp/work/enricher enricher`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			if dir == "" {
				dir = name
			}
			sdks, err := sdkSources()
			if err != nil {
				return err
			}
			files, err := scaffold.New(dir, lang, name, sdks)
			if err != nil {
				return err
			}
			fmt.Fprintf(c.stdout, "created %s (%s, %d files)\n\n  cd %s\n  ./build.sh\n  eddy test %s.wasm --input sample.jsonl\n  eddy conformance %s.wasm\n",
				dir, lang, len(files), filepath.Clean(dir), name, name)
			return nil
		},
	}
	cmd.Flags().StringVar(&lang, "lang", "", "language: "+strings.Join(scaffold.Languages(), ", "))
	cmd.Flags().StringVar(&dir, "dir", "", "directory to create (default: NAME)")
	cmd.MarkFlagRequired("lang")
	return cmd
}

// sdkSources returns every language's SDK files.
func sdkSources() (scaffold.SDKs, error) {
	sdks := scaffold.SDKs{}
	goSDK, err := scaffold.GoSDK()
	if err != nil {
		return nil, err
	}
	sdks["go"] = goSDK
	for lang, fsys := range sdk.Sources() {
		sdks[lang] = fsys
	}
	return sdks, nil
}
