// The small, allocation-free JSON scanning the reference guests need:
// validating a document, finding one top-level member of an object, and
// recognising a number. It follows RFC 8259 as Go's encoding/json does (the
// Go guests' internal/jsonscan): the same documents are valid (invalid UTF-8
// inside strings is accepted, as json.Valid accepts it), and when an object
// repeats a member name the last one wins, as json.Unmarshal does.
//
// Results that are parts of the document are reported as the globals
// valueStart and valueEnd (addresses), not as new arrays.

import { ByteBuffer } from "../../../sdk/assemblyscript/assembly/index";
import { encodeRune } from "./utf8";
import { parseFloat, rangeError } from "./strconv";

/** The deepest nesting accepted, as in encoding/json. */
export const MAX_DEPTH = 10000;

/** The reason for a valid document that is not an object. */
export const ERR_NOT_OBJECT = "value is not a JSON object";
/** The reason for a document that is not valid JSON. */
export const ERR_SYNTAX = "value is not valid JSON";

/** What field returns. */
export const enum Field {
  /** The member was found: its raw value is [valueStart, valueEnd). */
  FOUND = 1,
  /** The document is an object without the member. */
  MISSING = 0,
  /** The document is valid JSON but not an object. */
  NOT_OBJECT = -1,
  /** The document is not valid JSON. */
  SYNTAX = -2,
}

/** The raw value found by field, or the number found by number. */
export let valueStart: usize = 0;
export let valueEnd: usize = 0;

// The scanner's stack of open containers ('{' or '['), in static memory.
const STACK = memory.data(MAX_DEPTH);

// Set by skipString: the string held an escape.
let escaped = false;

/** Reports whether the n bytes at p are one valid JSON value, optionally surrounded by whitespace. */
export function valid(p: usize, n: usize): bool {
  return scan(p, n, 0, 0, false) != Field.SYNTAX;
}

/**
 * Checks that the n bytes at p are a valid JSON object (optionally
 * surrounded by whitespace) and looks for its top-level member called name
 * (UTF-8, nameLen bytes at namePtr). On FOUND the member's raw value,
 * without surrounding whitespace, is [valueStart, valueEnd); members of
 * nested objects and text inside strings never match; if the name appears
 * more than once, the last value counts.
 */
export function field(p: usize, n: usize, name: Uint8Array): Field {
  return scan(p, n, name.dataStart, <usize>name.byteLength, true);
}

/** Reports whether the n bytes at p are exactly one JSON number, with no surrounding whitespace. */
export function isNumber(p: usize, n: usize): bool {
  return skipNumber(p, 0, n) == <isize>n;
}

/**
 * Trims JSON whitespace from the n bytes at p and reports whether what is
 * left is one JSON number, which is then [valueStart, valueEnd).
 */
export function number(p: usize, n: usize): bool {
  let start = ws(p, 0, n);
  let end = skipNumber(p, start, n);
  if (end < 0 || ws(p, <usize>end, n) != n) return false;
  valueStart = p + start;
  valueEnd = p + <usize>end;
  return true;
}

/** Set by toFloat: the number is outside the float64 range (the result is ±Infinity). */
export let floatRange = false;

/**
 * Returns the value of the JSON number in the n bytes at p as a float64, as
 * Go's strconv.ParseFloat does. Integers of up to 15 digits are converted
 * directly (exactly); others go to the exact decimal parser.
 */
export function toFloat(p: usize, n: usize): f64 {
  floatRange = false;
  let d = p, dn = n;
  let negative = n > 0 && load<u8>(p) == 0x2d;
  if (negative) {
    d++;
    dn--;
  }
  if (dn > 0 && dn <= 15) {
    let v: i64 = 0;
    let i: usize = 0;
    for (; i < dn; i++) {
      let c = <u32>load<u8>(d + i) - 0x30;
      if (c >= 10) break;
      v = v * 10 + <i64>c;
    }
    if (i == dn) {
      if (!negative) return <f64>v;
      return v == 0 ? -0.0 : -(<f64>v);
    }
  }
  let f = parseFloat(p, n);
  floatRange = rangeError;
  return f;
}

// @ts-ignore: decorator
@inline function isWS(c: u32): bool {
  return c == 0x20 || c == 0x09 || c == 0x0a || c == 0x0d;
}

/** Returns the index of the first non-whitespace byte at or after i. */
function wsLoop(p: usize, i: usize, n: usize): usize {
  while (i < n && isWS(load<u8>(p + i))) i++;
  return i;
}

/**
 * Returns the index of the first non-whitespace byte at or after i. Most
 * JSON has no whitespace between tokens, so the loop (each iteration of
 * which costs a deadline check under the Eddy host) is entered only when
 * there is some.
 */
// @ts-ignore: decorator
@inline function ws(p: usize, i: usize, n: usize): usize {
  return i < n && load<u8>(p + i) <= 0x20 ? wsLoop(p, i, n) : i;
}

const enum State {
  VALUE,
  AFTER,
  MEMBER,
}

/**
 * Validates the document and, with match set, looks for the member called
 * name: the single state machine behind valid and field. An explicit stack
 * rather than recursion, so that deep nesting cannot exhaust the Wasm stack.
 */
function scan(p: usize, n: usize, namePtr: usize, nameLen: usize, match: bool): Field {
  let i = ws(p, 0, n);
  let object = i < n && load<u8>(p + i) == 0x7b;
  let depth = 0;
  let found = false;
  let isMatch = false; // the value being read belongs to a matching member
  let valStart: usize = 0;
  let state = State.VALUE;
  while (true) {
    if (state == State.VALUE) {
      if (i >= n) return Field.SYNTAX;
      let c = <u32>load<u8>(p + i);
      if (c == 0x7b || c == 0x5b) { // '{' or '['
        if (depth >= MAX_DEPTH) return Field.SYNTAX;
        store<u8>(STACK + <usize>depth, <u8>c);
        depth++;
        i = ws(p, i + 1, n);
        if (i >= n) return Field.SYNTAX;
        if (<u32>load<u8>(p + i) == c + 2) { // '}' or ']'
          depth--;
          i++;
          state = State.AFTER;
          continue;
        }
        state = c == 0x7b ? State.MEMBER : State.VALUE;
        continue;
      }
      if (c == 0x22) {
        let e = skipString(p, i + 1, n);
        if (e < 0) return Field.SYNTAX;
        i = <usize>e;
      } else if (c == 0x74) { // true
        if (n - i < 4 || load<u32>(p + i) != 0x65757274) return Field.SYNTAX;
        i += 4;
      } else if (c == 0x66) { // false
        if (n - i < 5 || load<u32>(p + i, 1) != 0x65736c61) return Field.SYNTAX;
        i += 5;
      } else if (c == 0x6e) { // null
        if (n - i < 4 || load<u32>(p + i) != 0x6c6c756e) return Field.SYNTAX;
        i += 4;
      } else {
        let e = skipNumber(p, i, n);
        if (e < 0) return Field.SYNTAX;
        i = <usize>e;
      }
      state = State.AFTER;
      continue;
    }
    if (state == State.AFTER) { // a value ended just before i
      if (isMatch && depth == 1) {
        valueStart = p + valStart;
        valueEnd = p + i;
        found = true;
        isMatch = false;
      }
      i = ws(p, i, n);
      if (depth == 0) {
        if (i != n) return Field.SYNTAX;
        if (!object) return Field.NOT_OBJECT;
        return found ? Field.FOUND : Field.MISSING;
      }
      if (i >= n) return Field.SYNTAX;
      let top = <u32>load<u8>(STACK + <usize>(depth - 1));
      let c = <u32>load<u8>(p + i);
      if (c == 0x2c) { // ','
        i = ws(p, i + 1, n);
        state = top == 0x7b ? State.MEMBER : State.VALUE;
        continue;
      }
      if (c == top + 2) {
        depth--;
        i++;
        continue; // still AFTER
      }
      return Field.SYNTAX;
    }
    // MEMBER: a member "key": value starts at i.
    if (i >= n || load<u8>(p + i) != 0x22) return Field.SYNTAX;
    let keyStart = i + 1;
    let e = skipString(p, keyStart, n);
    if (e < 0) return Field.SYNTAX;
    i = <usize>e;
    let keyEnd = i - 1;
    let keyEscaped = escaped;
    i = ws(p, i, n);
    if (i >= n || load<u8>(p + i) != 0x3a) return Field.SYNTAX; // ':'
    i = ws(p, i + 1, n);
    if (match && depth == 1 && keyEquals(p + keyStart, keyEnd - keyStart, keyEscaped, namePtr, nameLen)) {
      valStart = i;
      isMatch = true;
    }
    state = State.VALUE;
  }
  return Field.SYNTAX; // not reached
}

const ONES: u64 = 0x0101010101010101;
const HIGH: u64 = 0x8080808080808080;
const QUOTES: u64 = 0x22 * ONES;
const SLASHES: u64 = 0x5c * ONES;

/**
 * Skips the contents of a string that starts at i (just after the opening
 * quote) and returns the index after the closing quote, or -1 if the string
 * is not valid; sets escaped if it holds escapes.
 */
function skipString(p: usize, i: usize, n: usize): isize {
  escaped = false;
  while (true) {
    // Eight bytes at a time to the first '"', '\\' or control byte:
    // (x - 0x01…) & ~x & 0x80… marks zero bytes (exactly, up to the first
    // one), (x - 0x20…) & ~x & 0x80… bytes below 0x20.
    while (n - i >= 8) {
      let x = load<u64>(p + i);
      let q = x ^ QUOTES, s = x ^ SLASHES;
      let m = ((q - ONES) & ~q) | ((s - ONES) & ~s) | ((x - 0x20 * ONES) & ~x);
      m &= HIGH;
      if (m != 0) {
        i += <usize>(ctz(m) >> 3);
        break;
      }
      i += 8;
    }
    if (i >= n) return -1;
    let c = <u32>load<u8>(p + i);
    if (c == 0x22) return <isize>(i + 1);
    if (c == 0x5c) {
      escaped = true;
      if (i + 1 >= n) return -1;
      let e = <u32>load<u8>(p + i + 1);
      if (e == 0x22 || e == 0x5c || e == 0x2f || e == 0x62 || e == 0x66 || e == 0x6e || e == 0x72 || e == 0x74) {
        i += 2;
      } else if (e == 0x75) {
        if (i + 5 >= n || !isHex4(p + i + 2)) return -1;
        i += 6;
      } else {
        return -1;
      }
    } else if (c < 0x20) {
      return -1;
    } else {
      i++;
    }
  }
  return -1; // not reached
}

// @ts-ignore: decorator
@inline function isDigit(c: u32): bool {
  return c - 0x30 < 10;
}

function digits(p: usize, i: usize, n: usize): usize {
  while (i < n && isDigit(load<u8>(p + i))) i++;
  return i;
}

/** Skips a number at i and returns the index after it, or -1. */
function skipNumber(p: usize, i: usize, n: usize): isize {
  if (i < n && load<u8>(p + i) == 0x2d) i++;
  if (i >= n) return -1;
  let c = <u32>load<u8>(p + i);
  if (c == 0x30) i++;
  else if (c >= 0x31 && c <= 0x39) i = digits(p, i, n);
  else return -1;
  if (i < n && load<u8>(p + i) == 0x2e) {
    let j = digits(p, i + 1, n);
    if (j == i + 1) return -1;
    i = j;
  }
  if (i < n && (load<u8>(p + i) | 0x20) == 0x65) {
    i++;
    if (i < n && (load<u8>(p + i) == 0x2b || load<u8>(p + i) == 0x2d)) i++;
    let j = digits(p, i, n);
    if (j == i) return -1;
    i = j;
  }
  return <isize>i;
}

function hexVal(c: u32): i32 {
  if (c - 0x30 < 10) return <i32>(c - 0x30);
  c |= 0x20;
  if (c - 0x61 < 6) return <i32>(c - 0x61 + 10);
  return -1;
}

function isHex4(p: usize): bool {
  for (let k: usize = 0; k < 4; k++) if (hexVal(load<u8>(p + k)) < 0) return false;
  return true;
}

function hex4(p: usize): u32 {
  let r: u32 = 0;
  for (let k: usize = 0; k < 4; k++) r = (r << 4) | <u32>hexVal(load<u8>(p + k));
  return r;
}

// Unescaped keys are built here.
const keyBuf = new ByteBuffer(64);

/** Reports whether the raw contents of a (valid) string equal name once unescaped. */
function keyEquals(raw: usize, rawLen: usize, isEscaped: bool, name: usize, nameLen: usize): bool {
  if (!isEscaped) return rawLen == nameLen && memory.compare(raw, name, rawLen) == 0;
  unescape(keyBuf.reset(), raw, rawLen);
  return <usize>keyBuf.length == nameLen && memory.compare(keyBuf.dataStart, name, nameLen) == 0;
}

/**
 * Appends the unescaped contents of a valid JSON string (without its quotes)
 * to b. Lone surrogates become U+FFFD, as in encoding/json.
 */
export function unescape(b: ByteBuffer, raw: usize, n: usize): void {
  for (let i: usize = 0; i < n; i++) {
    let c = <u32>load<u8>(raw + i);
    if (c != 0x5c) {
      b.push(<u8>c);
      continue;
    }
    i++;
    let e = <u32>load<u8>(raw + i);
    if (e == 0x62) b.push(0x08);
    else if (e == 0x66) b.push(0x0c);
    else if (e == 0x6e) b.push(0x0a);
    else if (e == 0x72) b.push(0x0d);
    else if (e == 0x74) b.push(0x09);
    else if (e == 0x75) {
      let r = hex4(raw + i + 1);
      i += 4;
      if (r >= 0xd800 && r < 0xe000) {
        // A surrogate: valid only as a high one followed by \u and a low one.
        let r2: u32 = 0xfffd;
        if (i + 6 < n && load<u8>(raw + i + 1) == 0x5c && load<u8>(raw + i + 2) == 0x75) r2 = hex4(raw + i + 3);
        if (r < 0xdc00 && r2 >= 0xdc00 && r2 < 0xe000) {
          r = 0x10000 + ((r - 0xd800) << 10) + (r2 - 0xdc00);
          i += 6;
        } else {
          r = 0xfffd;
        }
      }
      b.commit(encodeRune(b.reserve(4), r));
    } else {
      b.push(<u8>e); // '"', '\\', '/'
    }
  }
}
