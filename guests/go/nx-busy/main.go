// Command nx-busy is an Eddy process function (a filter) over the window
// results of nx-count ({"count":N}): it keeps the windows with at least 5
// records — the busy auctions of examples/alerts — and drops the others. A
// value without an integer "count" member fails with BAD_INPUT.
//
// Build (from guests/go; build.sh builds every guest):
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -buildvcs=false -ldflags="-s -w" -o ../../testdata/go/nx-busy.wasm ./nx-busy
package main

import (
	"errors"

	"github.com/eddy-streams/eddy/guests/go/internal/jsonscan"
	nxevent "github.com/eddy-streams/eddy/guests/go/nx-event"
	eddy "github.com/eddy-streams/eddy/sdk/go"
)

// threshold is the smallest count kept.
const threshold = 5

func init() {
	eddy.SetName("nx-busy", "1.0.0")
	eddy.Filter(busy)
}

func main() {}

var errNotCount = errors.New(`not a count: no integer "count" member`)

func busy(r eddy.Record) (bool, error) {
	v, found, err := jsonscan.Field(r.Value, "count")
	if err != nil {
		return false, eddy.BadInput(err)
	}
	n, ok := nxevent.ParseInt(v)
	if !found || !ok {
		return false, eddy.BadInput(errNotCount)
	}
	return n >= threshold, nil
}
