// Command prefix is a configured Eddy map function: it puts the value of
// its step's config entry "prefix" in front of each record's value (a null
// value becomes the prefix alone); without the entry it passes records
// unchanged. It reads the entry once per instance.
//
// Build (from guests/go; build.sh builds every guest):
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -ldflags="-s -w" -o ../../testdata/go/prefix.wasm ./prefix
package main

import (
	eddy "github.com/eddy-streams/eddy/sdk/go"
)

func init() {
	eddy.SetName("prefix", "1.0.0")
	eddy.Map(add)
}

func main() {}

var (
	prefix []byte
	read   bool
	buf    []byte
)

func add(r eddy.Record) (eddy.Record, error) {
	if !read {
		p, _ := eddy.Config("prefix")
		prefix, read = []byte(p), true
	}
	if len(prefix) == 0 {
		return r, nil
	}
	buf = append(append(buf[:0], prefix...), r.Value...)
	r.Value = buf
	return r, nil
}
