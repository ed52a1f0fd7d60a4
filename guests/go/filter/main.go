// Command filter is an Eddy process function that keeps the records whose
// value is a JSON object with a top-level numeric member "amount" of at least
// 100, and drops the others:
//
//   - a value that is not a JSON object (including invalid JSON and a null
//     value) fails with BAD_INPUT;
//   - an object without "amount", or whose "amount" is not a number, is
//     dropped;
//   - "amount" inside nested objects or strings does not count; if the name
//     repeats, the last one counts (as with encoding/json).
//
// The scan is hand-written (internal/jsonscan) and allocation-free: decoding
// with encoding/json would cost more than the rest of the per-record path.
//
// Build (from guests/go; build.sh builds every guest):
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -ldflags="-s -w" -o ../../testdata/go/filter.wasm ./filter
package main

import (
	"github.com/eddy-streams/eddy/guests/go/internal/jsonscan"
	eddy "github.com/eddy-streams/eddy/sdk/go"
)

// threshold is the smallest amount kept.
const threshold = 100

func init() {
	eddy.SetName("filter", "1.0.0")
	eddy.Filter(keep)
}

func main() {}

func keep(r eddy.Record) (bool, error) {
	v, found, err := jsonscan.Field(r.Value, "amount")
	if err != nil {
		return false, eddy.BadInput(err)
	}
	if !found || !jsonscan.IsNumber(v) {
		return false, nil
	}
	// A JSON number always parses; one too large for a float64 is ±Inf,
	// which still compares correctly.
	amount, _ := jsonscan.Float(v)
	return amount >= threshold, nil
}
