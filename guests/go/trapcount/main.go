// Command trapcount is the counter guest (a running count per key in keyed
// state, emitted as the record's value) that traps on the value "trap" after
// it has written that record's new count: a Wasm trap (an out-of-bounds
// store), which no SDK can catch, so the host isolates the record by
// bisecting its batch. It tests that a failed call's state writes are
// discarded: the other records must count 1, 2, 3 however often the batch is
// re-run.
//
// Build (from guests/go; build.sh builds every guest):
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -ldflags="-s -w" -o ../../testdata/go/trapcount.wasm ./trapcount
package main

import (
	"strconv"
	"unsafe"

	eddy "github.com/eddy-streams/eddy/sdk/go"
)

func init() {
	eddy.SetName("trapcount", "1.0.0")
	eddy.Map(count)
}

func main() {}

var buf []byte

func count(r eddy.Record) (eddy.Record, error) {
	v, ok, err := eddy.StateGet(r.Key)
	if err != nil {
		return r, err
	}
	var n uint64
	if ok {
		if n, err = strconv.ParseUint(string(v), 10, 64); err != nil {
			return r, err
		}
	}
	buf = strconv.AppendUint(buf[:0], n+1, 10)
	if err := eddy.StatePut(r.Key, buf); err != nil {
		return r, err
	}
	if string(r.Value) == "trap" {
		trap()
	}
	r.Value = buf
	return r, nil
}

// trap stores a byte 2 GiB past buf: beyond any memory the host allows (it
// caps memory below 2 GiB), so the store traps.
func trap() {
	unsafe.Slice(&buf[0], 1<<31)[1<<31-1] = 1
}
