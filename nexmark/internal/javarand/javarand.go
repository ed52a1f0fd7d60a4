// Package javarand provides a bit-exact port of java.util.Random, the 48-bit
// linear congruential generator of the JDK (Knuth, TAOCP vol. 2, 3.2.1), and
// of the few java.lang.Math rounding rules the Nexmark generator relies on.
//
// Every method returns exactly what the JDK method of the same name returns
// for the same seed and call sequence; testdata/nexmark/RandomVectors.java
// prints the vectors the tests compare against.
//
// A Random is not safe for concurrent use.
package javarand

import "math"

const (
	multiplier = 0x5DEECE66D
	addend     = 0xB
	mask       = 1<<48 - 1
)

// Random is java.util.Random. The zero value is not seeded: use [New].
type Random struct {
	seed uint64
}

// New returns a generator seeded as new java.util.Random(seed).
func New(seed int64) Random {
	var r Random
	r.SetSeed(seed)
	return r
}

// SetSeed resets r as java.util.Random.setSeed(seed) does.
func (r *Random) SetSeed(seed int64) {
	r.seed = (uint64(seed) ^ multiplier) & mask
}

// next is Random.next(bits): it advances the state and returns its top bits
// as a Java int (sign-extended when bits is 32).
func (r *Random) next(bits uint) int32 {
	r.seed = (r.seed*multiplier + addend) & mask
	return int32(int64(r.seed) >> (48 - bits))
}

// Int32 is Random.nextInt().
func (r *Random) Int32() int32 { return r.next(32) }

// Int32n is Random.nextInt(bound): uniform in [0, bound), with the JDK's
// rejection of the biased top values. It panics if bound <= 0, where the JDK
// throws IllegalArgumentException.
func (r *Random) Int32n(bound int32) int32 {
	if bound <= 0 {
		panic("javarand: bound must be positive")
	}
	x := r.next(31)
	m := bound - 1
	if bound&m == 0 { // a power of two
		return int32((int64(bound) * int64(x)) >> 31)
	}
	// The JDK loops while u - r + m overflows a Java int.
	for u := x; ; u = r.next(31) {
		x = u % bound
		if u-x+m >= 0 { // int32 arithmetic wraps as Java's does
			return x
		}
	}
}

// Int64 is Random.nextLong().
func (r *Random) Int64() int64 {
	hi := int64(r.next(32))
	lo := int64(r.next(32))
	return hi<<32 + lo
}

// Float64 is Random.nextDouble(): 53 random bits scaled into [0, 1).
func (r *Random) Float64() float64 {
	hi := int64(r.next(26))
	lo := int64(r.next(27))
	return float64(hi<<27+lo) * (1.0 / (1 << 53))
}

// Bool is Random.nextBoolean().
func (r *Random) Bool() bool { return r.next(1) != 0 }

// Round is java.lang.Math.round(double): the closest long, ties rounding
// towards positive infinity; NaN gives 0 and out-of-range values saturate.
// Unlike math.Floor(x+0.5) it is exact for every input (0.49999999999999994
// rounds to 0).
func Round(x float64) int64 {
	switch {
	case math.IsNaN(x):
		return 0
	case x >= math.MaxInt64:
		return math.MaxInt64
	case x <= math.MinInt64:
		return math.MinInt64
	}
	f := math.Floor(x)
	// x - f is exact: both lie within one binade of each other or f is 0.
	if x-f >= 0.5 {
		f++
	}
	return int64(f)
}
