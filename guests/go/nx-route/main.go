// Command nx-route is an Eddy process function (a map) that routes
// Nexmark events by kind to named outputs of its step (ABI.md, "Named
// outputs"): auctions to the output "auctions", persons to "people"; bids
// stay the step's own output. The kind is decided as nexmark.Decode decides
// it (nx-event). Records go on unchanged. A value that is not a JSON object,
// or an object that is no event, fails with BAD_INPUT. It is the function
// of examples/fan-out.
//
// Build (from guests/go; build.sh builds every guest):
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -buildvcs=false -ldflags="-s -w" -o ../../testdata/go/nx-route.wasm ./nx-route
package main

import (
	"errors"

	nxevent "github.com/eddy-streams/eddy/guests/go/nx-event"
	eddy "github.com/eddy-streams/eddy/sdk/go"
)

func init() {
	eddy.SetName("nx-route", "1.0.0")
	eddy.Map(route)
}

func main() {}

var (
	ev        nxevent.Event
	errNoKind = errors.New("not a Nexmark event: no bidder, itemName, seller, name or emailAddress member")
)

func route(r eddy.Record) (eddy.Record, error) {
	if err := ev.Parse(r.Value); err != nil {
		return r, eddy.BadInput(err)
	}
	switch ev.Kind {
	case nxevent.KindAuction:
		return r.ToOutput("auctions"), nil
	case nxevent.KindPerson:
		return r.ToOutput("people"), nil
	case nxevent.KindBid:
		return r, nil
	}
	return r, eddy.BadInput(errNoKind)
}
