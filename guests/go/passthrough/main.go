// Command passthrough is an Eddy process function that returns every record
// unchanged: the baseline for benchmarks of the host and the Go SDK.
//
// Build (from guests/go; build.sh builds every guest):
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -ldflags="-s -w" -o ../../testdata/go/passthrough.wasm ./passthrough
package main

import eddy "github.com/eddy-streams/eddy/sdk/go"

func init() {
	eddy.SetName("passthrough", "1.0.0")
	eddy.Map(passthrough)
}

func passthrough(r eddy.Record) (eddy.Record, error) { return r, nil }

func main() {}
