// Number conversions that give exactly the results of Go's strconv, which
// the Go reference guests use: correctly rounded decimal-to-float parsing,
// shortest round-trip float formatting, and integer parsing with Go's range
// and syntax rules.
//
// # Why not the standard library
//
// AssemblyScript's parseFloat is not correctly rounded for every input and
// its f64.toString uses Grisu2, which does not always find the shortest
// digits; both would make a guest's output differ from the Go guest's in
// rare cases. This is the arbitrary-precision decimal method of Go's
// strconv (decimal.go, the slow path of atof.go and the bigFtoa path of
// ftoa.go), after a fast exact path for the common short numbers. It needs
// no tables; it is slower than Ryu or Eisel-Lemire, which does not matter
// for the few numbers a guest formats.

import { ByteBuffer } from "../../../sdk/assemblyscript/assembly/index";

// ---- An arbitrary-precision decimal: 0.d[0]d[1]...d[nd-1] × 10^dp ----

const MAX_DIGITS = 800;

// The decimal being worked on, in static memory (digits as ASCII).
const D = memory.data(MAX_DIGITS);
let nd: i32 = 0; // number of digits used
let dp: i32 = 0; // decimal point
let neg = false; // negative
let trunc = false; // nonzero digits were discarded beyond d[nd-1]

// Scratch for leftShift, which works from the lowest digit up.
const T = memory.data(MAX_DIGITS + 32);

// @ts-ignore: decorator
@inline function dig(i: i32): u32 {
  return <u32>load<u8>(D + <usize>i) - 0x30;
}

function trim(): void {
  while (nd > 0 && load<u8>(D + <usize>(nd - 1)) == 0x30) nd--;
  if (nd == 0) dp = 0;
}

/** Sets the decimal to v. */
function assign(v: u64): void {
  let k = 0;
  for (let t = v; t > 0; t /= 10) k++;
  nd = k;
  for (let i = k - 1; i >= 0; i--) {
    store<u8>(D + <usize>i, <u8>(0x30 + <u32>(v % 10)));
    v /= 10;
  }
  dp = nd;
  neg = false;
  trunc = false;
  trim();
}

// The most bits shifted in one pass: 9 << k must fit in a u64 with room for
// the carry.
const MAX_SHIFT = 60;

/** Divides by 2^k, k <= MAX_SHIFT. */
function rightShift(k: u32): void {
  let r = 0; // read index
  let w = 0; // write index
  // Pick up enough leading digits to cover the first shift.
  let n: u64 = 0;
  for (; (n >> k) == 0; r++) {
    if (r >= nd) {
      if (n == 0) {
        nd = 0; // a zero; should not get here
        return;
      }
      while ((n >> k) == 0) {
        n *= 10;
        r++;
      }
      break;
    }
    n = n * 10 + <u64>dig(r);
  }
  dp -= r - 1;
  let mask: u64 = (<u64>1 << k) - 1;
  // Pick up a digit, put down a digit.
  for (; r < nd; r++) {
    let c = <u64>dig(r);
    let d = n >> k;
    n &= mask;
    store<u8>(D + <usize>(w++), <u8>(0x30 + d));
    n = n * 10 + c;
  }
  // Put down the extra digits.
  while (n > 0) {
    let d = n >> k;
    n &= mask;
    if (w < MAX_DIGITS) {
      store<u8>(D + <usize>(w++), <u8>(0x30 + d));
    } else if (d > 0) {
      trunc = true;
    }
    n *= 10;
  }
  nd = w;
  trim();
}

/** Multiplies by 2^k, k <= MAX_SHIFT. */
function leftShift(k: u32): void {
  // Multiply digit by digit from the lowest, into T from its end.
  let w = MAX_DIGITS + 32;
  let carry: u64 = 0;
  for (let r = nd - 1; r >= 0; r--) {
    let v = (<u64>dig(r) << k) + carry;
    carry = v / 10;
    store<u8>(T + <usize>(--w), <u8>(0x30 + <u32>(v - carry * 10)));
  }
  while (carry > 0) {
    let c = carry / 10;
    store<u8>(T + <usize>(--w), <u8>(0x30 + <u32>(carry - c * 10)));
    carry = c;
  }
  let n = MAX_DIGITS + 32 - w; // digits of the product
  dp += n - nd;
  // Keep the highest MAX_DIGITS digits; dropping a nonzero one truncates.
  if (n > MAX_DIGITS) {
    for (let i = MAX_DIGITS; i < n; i++) {
      if (load<u8>(T + <usize>(w + i)) != 0x30) trunc = true;
    }
    n = MAX_DIGITS;
  }
  memory.copy(D, T + <usize>w, <usize>n);
  nd = n;
  trim();
}

/** Multiplies by 2^k (k > 0) or divides by 2^-k (k < 0). */
function shift(k: i32): void {
  if (nd == 0) return;
  if (k > 0) {
    while (k > MAX_SHIFT) {
      leftShift(MAX_SHIFT);
      k -= MAX_SHIFT;
    }
    leftShift(<u32>k);
  } else if (k < 0) {
    while (k < -MAX_SHIFT) {
      rightShift(MAX_SHIFT);
      k += MAX_SHIFT;
    }
    rightShift(<u32>-k);
  }
}

/** Reports whether rounding to n digits should round up (half to even). */
function shouldRoundUp(n: i32): bool {
  if (n < 0 || n >= nd) return false;
  if (load<u8>(D + <usize>n) == 0x35 && n + 1 == nd) {
    // Exactly halfway: round to even, unless digits were dropped.
    if (trunc) return true;
    return n > 0 && dig(n - 1) % 2 != 0;
  }
  return load<u8>(D + <usize>n) >= 0x35;
}

function roundDown(n: i32): void {
  if (n < 0 || n >= nd) return;
  nd = n;
  trim();
}

function roundUp(n: i32): void {
  if (n < 0 || n >= nd) return;
  for (let i = n - 1; i >= 0; i--) {
    let c = load<u8>(D + <usize>i);
    if (c < 0x39) {
      store<u8>(D + <usize>i, c + 1);
      nd = i + 1;
      return;
    }
  }
  // All nines: becomes 1 with the decimal point moved.
  store<u8>(D, 0x31);
  nd = 1;
  dp++;
}

function round(n: i32): void {
  if (n < 0 || n >= nd) return;
  if (shouldRoundUp(n)) roundUp(n);
  else roundDown(n);
}

/** Returns the integer part, rounded. */
function roundedInteger(): u64 {
  if (dp > 20) return u64.MAX_VALUE;
  let n: u64 = 0;
  let i = 0;
  for (; i < dp && i < nd; i++) n = n * 10 + <u64>dig(i);
  for (; i < dp; i++) n *= 10;
  if (shouldRoundUp(dp)) n++;
  return n;
}

// ---- Parsing ----

/** Set by parseFloat: the number is outside the float64 range (the result is ±Infinity). */
export let rangeError = false;

const POW10: StaticArray<f64> = [
  1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
  1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

// @ts-ignore: decorator
@inline function isDigit(c: u32): bool {
  return c - 0x30 < 10;
}

/**
 * Parses the n bytes at p, a decimal number as JSON writes them (an optional
 * '-', digits, an optional fraction and exponent; the caller has checked
 * the syntax), to the nearest float64, as Go's strconv.ParseFloat does. A
 * number too large for a float64 gives ±Infinity and sets rangeError; one
 * too small gives ±0.
 */
export function parseFloat(p: usize, n: usize): f64 {
  rangeError = false;
  // Fast path: at most 19 significant digits times an exact power of ten.
  let i: usize = 0;
  let negative = false;
  if (i < n && load<u8>(p) == 0x2d) {
    negative = true;
    i++;
  }
  let mant: u64 = 0;
  let digits = 0, mantDigits = 0, point = 0;
  let sawDot = false, truncated = false;
  for (; i < n; i++) {
    let c = <u32>load<u8>(p + i);
    if (c == 0x2e) {
      sawDot = true;
      point = digits;
      continue;
    }
    if (!isDigit(c)) break;
    if (c == 0x30 && digits == 0) {
      point--; // leading zeros
      continue;
    }
    digits++;
    if (mantDigits < 19) {
      mant = mant * 10 + <u64>(c - 0x30);
      mantDigits++;
    } else if (c != 0x30) {
      truncated = true;
    }
  }
  if (!sawDot) point = digits;
  if (i < n && (load<u8>(p + i) | 0x20) == 0x65) {
    i++;
    let esign = 1;
    if (i < n && load<u8>(p + i) == 0x2b) i++;
    else if (i < n && load<u8>(p + i) == 0x2d) {
      esign = -1;
      i++;
    }
    let e = 0;
    for (; i < n && isDigit(load<u8>(p + i)); i++) {
      if (e < 10000) e = e * 10 + <i32>(load<u8>(p + i) - 0x30);
    }
    point += e * esign;
  }
  let exp = mant != 0 ? point - mantDigits : 0;
  if (!truncated && (mant >> 52) == 0) {
    let f = <f64>mant;
    if (negative) f = -f;
    if (exp == 0) return f;
    if (exp > 0 && exp <= 15 + 22) {
      if (exp > 22) {
        f *= unchecked(POW10[exp - 22]);
        exp = 22;
      }
      if (f <= 1e15 && f >= -1e15) return f * unchecked(POW10[exp]);
    } else if (exp < 0 && exp >= -22) {
      return f / unchecked(POW10[-exp]);
    }
  }
  return slowParse(p, n);
}

/** Parses with the arbitrary-precision decimal (Go's decimal.set and floatBits). */
function slowParse(p: usize, n: usize): f64 {
  nd = 0;
  dp = 0;
  neg = false;
  trunc = false;
  let i: usize = 0;
  if (i < n && load<u8>(p) == 0x2d) {
    neg = true;
    i++;
  }
  let sawDot = false;
  for (; i < n; i++) {
    let c = <u32>load<u8>(p + i);
    if (c == 0x2e) {
      sawDot = true;
      dp = nd;
      continue;
    }
    if (!isDigit(c)) break;
    if (c == 0x30 && nd == 0) {
      dp--; // leading zeros
      continue;
    }
    if (nd < MAX_DIGITS) {
      store<u8>(D + <usize>nd, <u8>c);
      nd++;
    } else if (c != 0x30) {
      trunc = true;
    }
  }
  if (!sawDot) dp = nd;
  if (i < n && (load<u8>(p + i) | 0x20) == 0x65) {
    i++;
    let esign = 1;
    if (i < n && load<u8>(p + i) == 0x2b) i++;
    else if (i < n && load<u8>(p + i) == 0x2d) {
      esign = -1;
      i++;
    }
    let e = 0;
    for (; i < n && isDigit(load<u8>(p + i)); i++) {
      if (e < 10000) e = e * 10 + <i32>(load<u8>(p + i) - 0x30);
    }
    dp += e * esign;
  }
  return reinterpret<f64>(floatBits());
}

// float64: 52 mantissa bits, 11 exponent bits, bias -1023.
const MANT_BITS = 52;
const EXP_BITS = 11;
const BIAS = -1023;

const POWTAB: StaticArray<i32> = [1, 3, 6, 9, 13, 16, 19, 23, 26];

/** Converts the decimal to the bits of the nearest float64 (Go's decimal.floatBits). */
function floatBits(): u64 {
  let exp = 0;
  let mant: u64 = 0;
  let overflow = false;
  if (nd == 0) {
    exp = BIAS;
  } else if (dp > 310) {
    overflow = true;
  } else if (dp < -330) {
    exp = BIAS; // zero
  } else {
    // Scale by powers of two until in [0.5, 1).
    while (dp > 0) {
      let k = dp >= POWTAB.length ? 27 : unchecked(POWTAB[dp]);
      shift(-k);
      exp += k;
    }
    while (dp < 0 || (dp == 0 && load<u8>(D) < 0x35)) {
      let k = -dp >= POWTAB.length ? 27 : unchecked(POWTAB[-dp]);
      shift(k);
      exp -= k;
    }
    // The range is [0.5, 1) but the float's is [1, 2).
    exp--;
    // The smallest exponent is BIAS+1; below it, denormalise.
    if (exp < BIAS + 1) {
      let k = BIAS + 1 - exp;
      shift(-k);
      exp += k;
    }
    if (exp - BIAS >= (1 << EXP_BITS) - 1) {
      overflow = true;
    } else {
      // Extract 1+MANT_BITS bits.
      shift(1 + MANT_BITS);
      mant = roundedInteger();
      // Rounding might have added a bit; shift down.
      if (mant == (<u64>2 << MANT_BITS)) {
        mant >>= 1;
        exp++;
        if (exp - BIAS >= (1 << EXP_BITS) - 1) overflow = true;
      }
      // Denormalised?
      if ((mant & (<u64>1 << MANT_BITS)) == 0) exp = BIAS;
    }
  }
  if (overflow) {
    mant = 0;
    exp = (1 << EXP_BITS) - 1 + BIAS;
    rangeError = true;
  }
  let bits = mant & ((<u64>1 << MANT_BITS) - 1);
  bits |= <u64>((exp - BIAS) & ((1 << EXP_BITS) - 1)) << MANT_BITS;
  if (neg) bits |= <u64>1 << 63;
  return bits;
}

// ---- Formatting ----

/**
 * Leaves in the decimal the shortest digits that parse back to the float
 * mant × 2^(exp - MANT_BITS), choosing the closest when several are as short
 * (Go's roundShortest).
 */
function roundShortest(mant: u64, exp: i32): void {
  if (mant == 0) {
    nd = 0;
    return;
  }
  // The number is already shortest if 10^(dp-nd) > 2^(exp-MANT_BITS).
  let minexp = BIAS + 1;
  if (exp > minexp && 332 * (dp - nd) >= 100 * (exp - MANT_BITS)) return;

  // Save d, then compute upper = (2·mant + 1) × 2^(exp-MANT_BITS-1), the
  // midpoint to the next float up, and lower, the midpoint to the next down.
  let dNd = nd, dDp = dp, dTrunc = trunc;
  let dSave = memory.data(MAX_DIGITS);
  memory.copy(dSave, D, <usize>dNd);

  assign(mant * 2 + 1);
  shift(exp - MANT_BITS - 1);
  let upperNd = nd, upperDp = dp;
  let upper = memory.data(MAX_DIGITS);
  memory.copy(upper, D, <usize>upperNd);

  let mantlo: u64;
  let explo: i32;
  if (mant > (<u64>1 << MANT_BITS) || exp == minexp) {
    mantlo = mant - 1;
    explo = exp;
  } else {
    mantlo = mant * 2 - 1;
    explo = exp - 1;
  }
  assign(mantlo * 2 + 1);
  shift(explo - MANT_BITS - 1);
  let lowerNd = nd, lowerDp = dp;
  let lower = memory.data(MAX_DIGITS);
  memory.copy(lower, D, <usize>lowerNd);

  // Restore d.
  memory.copy(D, dSave, <usize>dNd);
  nd = dNd;
  dp = dDp;
  trunc = dTrunc;

  // The bounds are possible outputs only if the mantissa is even (IEEE
  // round-half-to-even would round them to it).
  let inclusive = mant % 2 == 0;
  // upperDelta: 0 while d and upper agree so far; 1 after a difference of
  // one followed only by 9s in d and 0s in upper; 2 once rounding up is
  // certainly within the bound.
  let upperDelta = 0;
  for (let ui = 0; ; ui++) {
    let mi = ui - upperDp + dp;
    if (mi >= nd) break;
    let li = ui - upperDp + lowerDp;
    let l: u32 = 0x30;
    if (li >= 0 && li < lowerNd) l = load<u8>(lower + <usize>li);
    let m: u32 = 0x30;
    if (mi >= 0) m = load<u8>(D + <usize>mi);
    let u: u32 = 0x30;
    if (ui < upperNd) u = load<u8>(upper + <usize>ui);

    // Rounding down (truncating) is fine if lower has a different digit,
    // or if lower is inclusive and exactly the truncation.
    let okDown = l != m || (inclusive && li + 1 == lowerNd);
    if (upperDelta == 0 && m + 1 < u) upperDelta = 2;
    else if (upperDelta == 0 && m != u) upperDelta = 1;
    else if (upperDelta == 1 && (m != 0x39 || u != 0x30)) upperDelta = 2;
    // Rounding up is fine if upper has a different digit and either upper
    // is inclusive or bigger than the rounded-up result.
    let okUp = upperDelta > 0 && (inclusive || upperDelta > 1 || ui + 1 < upperNd);
    if (okDown && okUp) {
      round(mi + 1);
      return;
    }
    if (okDown) {
      roundDown(mi + 1);
      return;
    }
    if (okUp) {
      roundUp(mi + 1);
      return;
    }
  }
}

/**
 * Appends f as Go's encoding/json writes a float64: the shortest digits that
 * parse back to f, in plain notation ("20", "3.5", "0.001") unless |f| is
 * below 1e-6 or at least 1e21, then in exponent notation ("1e+21", "1e-7").
 * f must be finite.
 */
export function appendJSONFloat(b: ByteBuffer, f: f64): void {
  let bits = reinterpret<u64>(f);
  let negative = (bits >> 63) != 0;
  let exp = <i32>((bits >> MANT_BITS) & ((1 << EXP_BITS) - 1));
  let mant = bits & ((<u64>1 << MANT_BITS) - 1);
  if (exp == 0) exp++; // denormalised
  else mant |= <u64>1 << MANT_BITS;
  exp += BIAS;

  assign(mant);
  shift(exp - MANT_BITS);
  roundShortest(mant, exp);

  let abs = Math.abs(f);
  let useE = abs != 0 && (abs < 1e-6 || abs >= 1e21);
  if (negative) b.push(0x2d);
  if (useE) {
    // d.ddddde±dd, with the exponent's leading zero dropped as
    // encoding/json does ("e-07" becomes "e-7").
    b.push(nd != 0 ? load<u8>(D) : 0x30);
    if (nd > 1) {
      b.push(0x2e);
      b.appendRaw(D + 1, nd - 1);
    }
    b.push(0x65);
    let e = nd == 0 ? 0 : dp - 1;
    if (e < 0) {
      b.push(0x2d);
      e = -e;
    } else {
      b.push(0x2b);
    }
    if (e < 10) {
      if (!(e != 0 && load<u8>(b.dataStart + <usize>b.length - 1) == 0x2d)) b.push(0x30);
      b.push(<u8>(0x30 + e));
    } else {
      b.appendU64(<u64>e);
    }
    return;
  }
  // ddddd.ddddd
  if (dp > 0) {
    let m = min(nd, dp);
    b.appendRaw(D, m);
    for (; m < dp; m++) b.push(0x30);
  } else {
    b.push(0x30);
  }
  let prec = max(nd - dp, 0);
  if (prec > 0) {
    b.push(0x2e);
    for (let i = 1; i <= prec; i++) {
      let j = dp + i - 1;
      b.push(j >= 0 && j < nd ? load<u8>(D + <usize>j) : 0x30);
    }
  }
}

// ---- Integers ----

/**
 * Parses the n bytes at p as a decimal int64 as Go's strconv.ParseInt(s, 10,
 * 64) does: an optional sign, then digits only. Returns false for a syntax
 * error or a value out of range (parseError tells which); the value is left
 * in parsedInt.
 */
export let parsedInt: i64 = 0;

export function parseInt64(p: usize, n: usize): bool {
  parsedInt = 0;
  if (n == 0) {
    parseError = "invalid syntax";
    return false;
  }
  let negative = false;
  let i: usize = 0;
  let c = load<u8>(p);
  if (c == 0x2b || c == 0x2d) {
    negative = c == 0x2d;
    i = 1;
  }
  if (!parseUint64(p + i, n - i)) return false;
  let u = parsedUint;
  if ((!negative && u > <u64>i64.MAX_VALUE) || (negative && u > <u64>i64.MAX_VALUE + 1)) {
    parseError = "value out of range";
    return false;
  }
  parsedInt = negative ? -(<i64>u) : <i64>u;
  return true;
}

/** The value of the last successful parseUint64. */
export let parsedUint: u64 = 0;
/** Why the last parseUint64 or parseInt64 failed: "invalid syntax" or "value out of range". */
export let parseError: string = "";

/**
 * Parses the n bytes at p as a decimal uint64 as Go's strconv.ParseUint(s,
 * 10, 64) does: digits only, at least one. Returns false for a syntax error
 * or a value out of range (parseError tells which); the value is left in
 * parsedUint.
 */
export function parseUint64(p: usize, n: usize): bool {
  parsedUint = 0;
  if (n == 0) {
    parseError = "invalid syntax";
    return false;
  }
  let v: u64 = 0;
  for (let i: usize = 0; i < n; i++) {
    let d = <u32>load<u8>(p + i) - 0x30;
    if (d >= 10) {
      parseError = "invalid syntax";
      return false;
    }
    // Go stops at the first digit that overflows: "99999999999999999999x"
    // is out of range, not a syntax error.
    if (v > u64.MAX_VALUE / 10 || v * 10 > u64.MAX_VALUE - <u64>d) {
      parseError = "value out of range";
      return false;
    }
    v = v * 10 + <u64>d;
  }
  parsedUint = v;
  return true;
}
