// Command remind is a stateful Eddy process function with processing-time
// timers: for each record it sets a timer of the node's clock, the
// record's value in decimal milliseconds after the clock's current time
// (eddy.CurrentTime), for the record's key; it passes no record on (two
// records of a key with the same time make one reminder).
// When a timer fires it emits one record: the key, with the value
// "reminder" and the timer's time as the timestamp. A value that is not a
// number is rejected (REJECTED).
//
// Build (from guests/go; build.sh builds every guest):
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -ldflags="-s -w" -o ../../testdata/go/remind.wasm ./remind
package main

import (
	"strconv"

	eddy "github.com/eddy-streams/eddy/sdk/go"
)

func init() {
	eddy.SetName("remind", "1.0.0")
	eddy.Filter(schedule)
	eddy.OnTimer(fire)
}

func main() {}

func schedule(r eddy.Record) (bool, error) {
	after, err := strconv.ParseInt(string(r.Value), 10, 64)
	if err != nil {
		return false, err
	}
	now := eddy.CurrentTime(eddy.ProcessingTime)
	return false, eddy.SetTimer(r.Key, eddy.ProcessingTime, now+after)
}

func fire(t eddy.Timer) ([]eddy.Record, error) {
	return []eddy.Record{{Key: t.Key, Value: []byte("reminder")}}, nil
}
