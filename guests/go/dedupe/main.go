// Command dedupe is a stateful Eddy process function with timers that
// drops repeated records: a record whose key was seen within the last
// minute of event time is dropped, others pass unchanged. It keeps each
// key it passed in keyed state (the key → the record's timestamp in
// decimal text) with an event-time timer one minute later, which forgets
// the key when it fires and emits nothing; a duplicate does not extend the
// minute. State and timers hold only the keys of the last minute.
//
// Build (from guests/go; build.sh builds every guest):
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -ldflags="-s -w" -o ../../testdata/go/dedupe.wasm ./dedupe
package main

import (
	"strconv"

	eddy "github.com/eddy-streams/eddy/sdk/go"
)

// ttl is how long a key is remembered, in ms of event time.
const ttl = 60_000

func init() {
	eddy.SetName("dedupe", "1.0.0")
	eddy.Filter(fresh)
	eddy.OnTimer(forget)
}

func main() {}

var buf []byte

func fresh(r eddy.Record) (bool, error) {
	_, seen, err := eddy.StateGet(r.Key)
	if err != nil || seen {
		return false, err
	}
	buf = strconv.AppendInt(buf[:0], r.Timestamp, 10)
	if err := eddy.StatePut(r.Key, buf); err != nil {
		return false, err
	}
	return true, eddy.SetTimer(r.Key, eddy.EventTime, r.Timestamp+ttl)
}

func forget(t eddy.Timer) ([]eddy.Record, error) {
	return nil, eddy.StateDelete(t.Key)
}
