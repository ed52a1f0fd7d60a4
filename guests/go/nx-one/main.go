// Command nx-one is an Eddy key function that gives every record the
// same key, "all": Nexmark's q7 puts every bid of a window in one group
// (the highest bid of the whole stream), and an aggregate groups by key.
//
// Build (from guests/go; build.sh builds every guest):
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -buildvcs=false -ldflags="-s -w" -o ../../testdata/go/nx-one.wasm ./nx-one
package main

import eddy "github.com/eddy-streams/eddy/sdk/go"

func init() {
	eddy.SetName("nx-one", "1.0.0")
	eddy.KeyBy(func(eddy.Record) ([]byte, error) { return all, nil })
}

func main() {}

// all is the key of every record; the SDK copies it.
var all = []byte("all")
