// Command pricestats is an Eddy aggregate function over JSON objects: the
// count, sum and maximum of their top-level "price" member, a JSON number.
// It is the shape of a Nexmark bid aggregation and what the node's tests of
// key_by, time functions and windows over JSON records use.
//
// The accumulator is 24 bytes, little-endian: the count as an int64, then
// the sum and the maximum as float64s. The result is the JSON object
// {"count":N,"sum":S,"max":M} (max is null for an empty window).
//
// A value that is not a JSON object with a numeric "price" fails its record
// with BAD_INPUT; an accumulator that is not 24 bytes fails with REJECTED.
//
// Build (from guests/go; build.sh builds every guest):
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -ldflags="-s -w" -o ../../testdata/go/pricestats.wasm ./pricestats
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
	eddy.SetName("pricestats", "1.0.0")
	eddy.Aggregate(eddy.Aggregator{Init: initial, Add: add, Merge: merge, Result: result})
}

func main() {}

const accSize = 24

var errNoPrice = errors.New(`value is not a JSON object with a numeric "price"`)

func initial() []byte {
	var acc [accSize]byte
	return encode(acc[:], 0, 0, math.Inf(-1))
}

func decode(acc []byte) (count int64, sum, hi float64, err error) {
	if len(acc) != accSize {
		return 0, 0, 0, errors.New("accumulator is " + strconv.Itoa(len(acc)) + " bytes, want 24")
	}
	return int64(binary.LittleEndian.Uint64(acc)), math.Float64frombits(binary.LittleEndian.Uint64(acc[8:])),
		math.Float64frombits(binary.LittleEndian.Uint64(acc[16:])), nil
}

func encode(acc []byte, count int64, sum, hi float64) []byte {
	binary.LittleEndian.PutUint64(acc, uint64(count))
	binary.LittleEndian.PutUint64(acc[8:], math.Float64bits(sum))
	binary.LittleEndian.PutUint64(acc[16:], math.Float64bits(hi))
	return acc
}

func add(acc []byte, r eddy.Record) ([]byte, error) {
	count, sum, hi, err := decode(acc)
	if err != nil {
		return nil, err
	}
	tok, found, err := jsonscan.Field(r.Value, "price")
	if err != nil || !found || !jsonscan.IsNumber(tok) {
		return nil, eddy.BadInput(errNoPrice)
	}
	v, err := jsonscan.Float(tok)
	if err != nil {
		return nil, eddy.BadInput(errNoPrice)
	}
	return encode(acc, count+1, sum+v, math.Max(hi, v)), nil
}

func merge(_, a, b []byte) ([]byte, error) {
	ca, sa, ha, err := decode(a)
	if err != nil {
		return nil, err
	}
	cb, sb, hb, err := decode(b)
	if err != nil {
		return nil, err
	}
	return encode(make([]byte, accSize), ca+cb, sa+sb, math.Max(ha, hb)), nil
}

func result(_, acc []byte) ([]byte, error) {
	count, sum, hi, err := decode(acc)
	if err != nil {
		return nil, err
	}
	b := make([]byte, 0, 64)
	b = append(b, `{"count":`...)
	b = strconv.AppendInt(b, count, 10)
	b = append(b, `,"sum":`...)
	b = number(b, sum)
	b = append(b, `,"max":`...)
	b = number(b, hi)
	return append(b, '}'), nil
}

// number appends f in the shortest form that reads back exactly, or null
// if it is not finite.
func number(b []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(b, "null"...)
	}
	return strconv.AppendFloat(b, f, 'g', -1, 64)
}
