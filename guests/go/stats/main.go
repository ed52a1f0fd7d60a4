// Command stats is an Eddy aggregate function: the count, sum and average of
// record values that are JSON numbers ("42", "3.5", "-1e3"; white space
// around the number is allowed).
//
// The accumulator is 16 bytes, little-endian: the count as an int64, then the
// sum as a float64. Add updates it in place (the SDK hands Add a scratch
// copy), and Merge and Result build their answers in one reused buffer (the
// SDK copies them before the next call), so nothing allocates per record.
// The result is the JSON object {"count":N,"sum":S,"avg":A}; a sum or
// average that is not finite (no records yet, or a float64 overflow) is
// written as null.
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
		return 0, 0, errAccSize(acc)
	}
	return int64(binary.LittleEndian.Uint64(acc)), math.Float64frombits(binary.LittleEndian.Uint64(acc[8:])), nil
}

// errAccSize is the error for an accumulator of the wrong size.
func errAccSize(acc []byte) error {
	return errors.New("accumulator is " + strconv.Itoa(len(acc)) + " bytes, want 16")
}

func encode(acc []byte, count int64, sum float64) []byte {
	binary.LittleEndian.PutUint64(acc, uint64(count))
	binary.LittleEndian.PutUint64(acc[8:], math.Float64bits(sum))
	return acc
}

// add is called once per record, so the usual value, a plain integer, is
// read by jsonscan.Int in one loop; anything else goes through
// jsonscan.Number and jsonscan.Float.
func add(acc []byte, r eddy.Record) ([]byte, error) {
	if len(acc) != accSize {
		return nil, errAccSize(acc)
	}
	i, ok := jsonscan.Int(r.Value)
	v := float64(i)
	if !ok {
		var err error
		if v, err = number(r.Value); err != nil {
			return nil, err
		}
	}
	count := int64(binary.LittleEndian.Uint64(acc))
	sum := math.Float64frombits(binary.LittleEndian.Uint64(acc[8:]))
	return encode(acc, count+1, sum+v), nil
}

// number reads a JSON number, with white space around it allowed.
func number(value []byte) (float64, error) {
	tok, ok := jsonscan.Number(value)
	if !ok {
		return 0, eddy.BadInput(errNotNumber)
	}
	v, err := jsonscan.Float(tok)
	if err != nil {
		return 0, eddy.BadInput(errRange)
	}
	return v, nil
}

// out holds the answer of merge and of result: the SDK copies it before it
// calls either again, so they allocate nothing.
var out = make([]byte, 0, 128)

func merge(_, a, b []byte) ([]byte, error) {
	ca, sa, err := decode(a)
	if err != nil {
		return nil, err
	}
	cb, sb, err := decode(b)
	if err != nil {
		return nil, err
	}
	return encode(out[:accSize], ca+cb, sa+sb), nil
}

func result(_, acc []byte) ([]byte, error) {
	count, sum, err := decode(acc)
	if err != nil {
		return nil, err
	}
	b := append(out[:0], `{"count":`...)
	b = strconv.AppendInt(b, count, 10)
	b = append(b, `,"sum":`...)
	b = appendNumber(b, sum)
	b = append(b, `,"avg":`...)
	b = appendNumber(b, sum/float64(count))
	b = append(b, '}')
	out = b[:0]
	return b, nil
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
	} else if b, ok := appendShort(b, f); ok {
		return b
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

// pow10 holds powers of ten that both float64 and int64 represent exactly.
var pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
	1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18}

// appendShort appends f as strconv.AppendFloat(b, f, 'f', -1, 64) does,
// when f is not zero and the shortest decimal that reads back as f has
// fewer than 16 significant digits, and reports whether it did. Sums and
// averages of small integers are such numbers (42, 4.5, 0.125), and
// formatting them here costs a fraction of strconv's shortest-digits
// algorithm compiled to Wasm.
//
// It looks for the fewest fraction digits k (for a given magnitude, the
// fewest significant digits) for which an integer n makes n / 10^k read
// back as f. Both n < 10^15 and 10^k are exact in float64, so the division
// n / 10^k is the correctly rounded value of the decimal, as
// strconv.ParseFloat computes it. A decimal reads back as f only within an
// ulp of f, so such an n is within 10^k ulp(f) <= n 2^-52 < 0.23 of the
// exact f * 10^k, and the computed product is off by less than 0.06 more:
// rounding the product finds n if it exists, and n is the only candidate,
// so strconv's shortest decimal has the same digits.
func appendShort(b []byte, f float64) ([]byte, bool) {
	if f == 0 {
		return b, false // -0 keeps its sign in strconv
	}
	for k := range pow10 {
		m := f * pow10[k]
		if math.Abs(m) >= 1e15 {
			break
		}
		n := math.RoundToEven(m)
		if n/pow10[k] != f {
			continue
		}
		v := int64(n)
		if v < 0 {
			b = append(b, '-')
			v = -v
		}
		if k == 0 {
			return strconv.AppendInt(b, v, 10), true
		}
		// v = i * 10^k + frac: write i, then 10^k + frac, a 1 and frac
		// padded to k digits, and turn the 1 into the point. frac has no
		// trailing zeros, or k - 1 digits would have done.
		p := int64(pow10[k])
		b = strconv.AppendInt(b, v/p, 10)
		point := len(b)
		b = strconv.AppendInt(b, p+v%p, 10)
		b[point] = '.'
		return b, true
	}
	return b, false
}
