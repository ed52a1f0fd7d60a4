// Command stats is an Eddy aggregate function: the count, sum and average of
// record values that are JSON numbers ("42", "3.5", "-1e3"; white space
// around the number is allowed).
//
// The accumulator is 16 bytes, little-endian: the count as an int64, then the
// sum as a float64. Add updates it in place (the SDK hands Add a scratch
// copy), so folding allocates nothing. The result is the JSON object
// {"count":N,"sum":S,"avg":A}; a sum or average that is not finite (no
// records yet, or a float64 overflow) is written as null.
//
// A value that is not a JSON number, or one outside the float64 range, fails
// its record with BAD_INPUT; an accumulator that is not 16 bytes (written by
// something else) fails with REJECTED.
//
// Build (from guests/go; build.sh builds every guest):
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -ldflags="-s -w" -o ../../testdata/go/stats.wasm ./stats
package main

import (
	"encoding/binary"
	"errors"
	"math"
	"strconv"

	"github.com/eddy-streams/eddy/guests/go/internal/jsonscan"
	eddy "github.com/eddy-streams/eddy/sdk/go"
)

func init() {
	eddy.SetName("stats", "1.0.0")
	eddy.Aggregate(eddy.Aggregator{Init: initial, Add: add, Merge: merge, Result: result})
}

func main() {}

// accSize is the size of an accumulator: int64 count, float64 sum.
const accSize = 16

// zero is the initial accumulator; the SDK copies it.
var zero [accSize]byte

var (
	errNotNumber = errors.New("value is not a JSON number")
	errRange     = errors.New("value is out of the float64 range")
)

func initial() []byte { return zero[:] }

func decode(acc []byte) (count int64, sum float64, err error) {
	if len(acc) != accSize {
		return 0, 0, errors.New("accumulator is " + strconv.Itoa(len(acc)) + " bytes, want 16")
	}
	return int64(binary.LittleEndian.Uint64(acc)), math.Float64frombits(binary.LittleEndian.Uint64(acc[8:])), nil
}

func encode(acc []byte, count int64, sum float64) []byte {
	binary.LittleEndian.PutUint64(acc, uint64(count))
	binary.LittleEndian.PutUint64(acc[8:], math.Float64bits(sum))
	return acc
}

func add(acc []byte, r eddy.Record) ([]byte, error) {
	count, sum, err := decode(acc)
	if err != nil {
		return nil, err
	}
	tok, ok := jsonscan.Number(r.Value)
	if !ok {
		return nil, eddy.BadInput(errNotNumber)
	}
	v, err := jsonscan.Float(tok)
	if err != nil {
		return nil, eddy.BadInput(errRange)
	}
	return encode(acc, count+1, sum+v), nil
}

func merge(_, a, b []byte) ([]byte, error) {
	ca, sa, err := decode(a)
	if err != nil {
		return nil, err
	}
	cb, sb, err := decode(b)
	if err != nil {
		return nil, err
	}
	return encode(make([]byte, accSize), ca+cb, sa+sb), nil
}

func result(_, acc []byte) ([]byte, error) {
	count, sum, err := decode(acc)
	if err != nil {
		return nil, err
	}
	b := make([]byte, 0, 64)
	b = append(b, `{"count":`...)
	b = strconv.AppendInt(b, count, 10)
	b = append(b, `,"sum":`...)
	b = appendNumber(b, sum)
	b = append(b, `,"avg":`...)
	b = appendNumber(b, sum/float64(count))
	return append(b, '}'), nil
}

// appendNumber appends f as encoding/json writes a float64, or null if f is
// not finite (JSON has no NaN or infinity).
func appendNumber(b []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(b, "null"...)
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// Clean up e-09 to e-9, as encoding/json does.
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}
