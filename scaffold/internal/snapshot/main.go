// Command snapshot writes the Go SDK snapshot that eddy new copies into Go
// projects: go run ./internal/snapshot -o gosdk.txtar ../sdk/go
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/eddy-streams/eddy/scaffold"
)

func main() {
	out := flag.String("o", "gosdk.txtar", "output file")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: snapshot -o FILE SDKDIR")
		os.Exit(2)
	}
	b, err := scaffold.Snapshot(flag.Arg(0))
	if err == nil {
		err = os.WriteFile(*out, b, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "snapshot:", err)
		os.Exit(1)
	}
}
