// Command route is an Eddy process function (a map) that sends each record
// to a named output of its step by the first byte of its value: a value
// starting with '{' (a JSON object) to the output "objects", one starting
// with an ASCII digit to "numbers"; any other record, and a null or empty
// value, stays the step's own output. Records keep their key, value,
// timestamp and headers. It is the conformance reference "route" (ABI.md,
// "Named outputs").
//
// Build (from guests/go; build.sh builds every guest):
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -ldflags="-s -w" -o ../../testdata/go/route.wasm ./route
package main

import (
	eddy "github.com/eddy-streams/eddy/sdk/go"
)

func init() {
	eddy.SetName("route", "1.0.0")
	eddy.Map(route)
}

func main() {}

func route(r eddy.Record) (eddy.Record, error) {
	if len(r.Value) == 0 {
		return r, nil
	}
	switch c := r.Value[0]; {
	case c == '{':
		return r.ToOutput("objects"), nil
	case c >= '0' && c <= '9':
		return r.ToOutput("numbers"), nil
	}
	return r, nil
}
