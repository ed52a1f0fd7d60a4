// Command nx-count is an Eddy aggregate function that counts the records
// of each key and window, whatever they hold (null values included): the
// counting step of Nexmark's q5 (bids per auction and window), q11 (bids
// per bidder and session) and q12 (bids per bidder and window).
//
// The accumulator is 8 bytes: the count as a little-endian int64. Add
// increments it in place; Merge adds two counts (session windows). The
// result is the JSON object {"count":N}. An accumulator that is not 8
// bytes (written by something else) fails with REJECTED.
//
// Build (from guests/go; build.sh builds every guest):
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -buildvcs=false -ldflags="-s -w" -o ../../testdata/go/nx-count.wasm ./nx-count
package main

import (
	"encoding/binary"
	"errors"
	"strconv"

	nxevent "github.com/eddy-streams/eddy/guests/go/nx-event"
	eddy "github.com/eddy-streams/eddy/sdk/go"
)

func init() {
	eddy.SetName("nx-count", "1.0.0")
	eddy.Aggregate(eddy.Aggregator{Init: initial, Add: add, Merge: merge, Result: result})
}

func main() {}

// accSize is the size of an accumulator: an int64 count.
const accSize = 8

// zero is the initial accumulator; the SDK copies it.
var zero [accSize]byte

// buf holds a merged accumulator or a result; the SDK copies it.
var buf []byte

func initial() []byte { return zero[:] }

func decode(acc []byte) (int64, error) {
	if len(acc) != accSize {
		return 0, errors.New("accumulator is " + strconv.Itoa(len(acc)) + " bytes, want 8")
	}
	return int64(binary.LittleEndian.Uint64(acc)), nil
}

func add(acc []byte, _ eddy.Record) ([]byte, error) {
	n, err := decode(acc)
	if err != nil {
		return nil, err
	}
	binary.LittleEndian.PutUint64(acc, uint64(n+1))
	return acc, nil
}

func merge(_, a, b []byte) ([]byte, error) {
	na, err := decode(a)
	if err != nil {
		return nil, err
	}
	nb, err := decode(b)
	if err != nil {
		return nil, err
	}
	buf = binary.LittleEndian.AppendUint64(buf[:0], uint64(na+nb))
	return buf, nil
}

func result(_, acc []byte) ([]byte, error) {
	n, err := decode(acc)
	if err != nil {
		return nil, err
	}
	b := append(buf[:0], `{"count":`...)
	b = nxevent.AppendInt(b, n)
	buf = append(b, '}')
	return buf, nil
}
