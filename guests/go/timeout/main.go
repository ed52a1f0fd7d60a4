// Command timeout is a stateful Eddy process function with timers: it
// reports keys that went quiet. For each record it keeps the record's
// timestamp as the key's last activity (keyed state: the record key → the
// time in decimal text) and moves the key's event-time timer to one
// second after it (deleting the one it set for the previous record); it
// passes no record on. When a timer fires and the key's last activity is
// still one second before it, it forgets the key and emits one record:
// the key, the last activity in decimal as the value, and the timer's time
// as the timestamp. A timer that no longer matches (none should) and a
// processing-time timer emit nothing.
//
// In a step without keyed state (eddy.ErrNoState) every record is rejected
// (REJECTED); a host storage failure fails it with STATE.
//
// Build (from guests/go; build.sh builds every guest):
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -ldflags="-s -w" -o ../../testdata/go/timeout.wasm ./timeout
package main

import (
	"fmt"
	"strconv"

	eddy "github.com/eddy-streams/eddy/sdk/go"
)

// gap is how long a key stays quiet before it is reported, in ms.
const gap = 1000

func init() {
	eddy.SetName("timeout", "1.0.0")
	eddy.Filter(touch)
	eddy.OnTimer(fire)
}

func main() {}

var buf []byte

// last reads the key's last activity.
func last(key []byte) (int64, bool, error) {
	v, ok, err := eddy.StateGet(key)
	if err != nil || !ok {
		return 0, false, err
	}
	t, err := strconv.ParseInt(string(v), 10, 64)
	if err != nil {
		return 0, false, fmt.Errorf("stored time %q: %w", v, err)
	}
	return t, true, nil
}

func touch(r eddy.Record) (bool, error) {
	prev, ok, err := last(r.Key)
	if err != nil {
		return false, err
	}
	if ok {
		if err := eddy.DeleteTimer(r.Key, eddy.EventTime, prev+gap); err != nil {
			return false, err
		}
	}
	buf = strconv.AppendInt(buf[:0], r.Timestamp, 10)
	if err := eddy.StatePut(r.Key, buf); err != nil {
		return false, err
	}
	return false, eddy.SetTimer(r.Key, eddy.EventTime, r.Timestamp+gap)
}

func fire(t eddy.Timer) ([]eddy.Record, error) {
	if t.Domain != eddy.EventTime {
		return nil, nil
	}
	at, ok, err := last(t.Key)
	if err != nil || !ok || at+gap != t.Time {
		return nil, err
	}
	if err := eddy.StateDelete(t.Key); err != nil {
		return nil, err
	}
	return []eddy.Record{{Key: t.Key, Value: strconv.AppendInt(nil, at, 10)}}, nil
}
