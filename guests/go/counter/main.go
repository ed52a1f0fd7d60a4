// Command counter is a stateful Eddy process function: it keeps a running
// count of the records of each key in keyed state (the state key is the
// record key; a null key counts like an empty one) and emits each record with
// its value replaced by the count so far, in decimal. The count is stored as
// the same decimal text.
//
// It adds 1 to the counter "records" for every record counted and logs at
// Debug once per 1000 records. In a step without keyed state (eddy.ErrNoState)
// every record is rejected (REJECTED); a host storage failure fails it with
// STATE.
//
// Build (from guests/go; build.sh builds every guest):
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -ldflags="-s -w" -o ../../testdata/go/counter.wasm ./counter
package main

import (
	"fmt"
	"strconv"

	eddy "github.com/eddy-streams/eddy/sdk/go"
)

func init() {
	eddy.SetName("counter", "1.0.0")
	eddy.Map(count)
}

func main() {}

// logEvery is how many records pass between two debug log lines.
const logEvery = 1000

var (
	seen uint64 // records counted by this instance
	buf  []byte // the new count, reused for every record
)

func count(r eddy.Record) (eddy.Record, error) {
	v, ok, err := eddy.StateGet(r.Key)
	if err != nil {
		return r, err
	}
	var n uint64
	if ok {
		if n, err = strconv.ParseUint(string(v), 10, 64); err != nil {
			return r, fmt.Errorf("stored count %q: %w", v, err)
		}
	}
	buf = strconv.AppendUint(buf[:0], n+1, 10)
	if err := eddy.StatePut(r.Key, buf); err != nil {
		return r, err
	}
	eddy.Count("records", 1)
	if seen++; seen%logEvery == 0 {
		eddy.Logf(eddy.Debug, "counter: %d records", seen)
	}
	r.Value = buf
	return r, nil
}
