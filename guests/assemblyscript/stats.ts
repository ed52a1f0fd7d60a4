// Stats is an Eddy aggregate function: the count, sum and average of record
// values that are JSON numbers ("42", "3.5", "-1e3"; white space around the
// number is allowed).
//
// The accumulator is 16 bytes, little-endian: the count as an int64, then
// the sum as a float64. add updates it in place (the SDK hands add a scratch
// copy), so folding allocates nothing. The result is the JSON object
// {"count":N,"sum":S,"avg":A}, numbers written as Go's encoding/json writes
// them; a sum or average that is not finite (no records yet, or a float64
// overflow) is written as null.
//
// A value that is not a JSON number, or one outside the float64 range, fails
// its record with BAD_INPUT; an accumulator that is not 16 bytes (written by
// something else) fails with REJECTED.
//
// Build (from guests/assemblyscript; build.sh builds every guest):
//
//	../../sdk/assemblyscript/node_modules/.bin/asc stats.ts -O3 --runtime minimal --noAssert --use abort=../../sdk/assemblyscript/assembly/abort/eddyAbort -o ../../testdata/assemblyscript/stats.wasm

import * as eddy from "../../sdk/assemblyscript/assembly/index";
import * as json from "./internal/jsonscan";
import { appendJSONFloat } from "./internal/strconv";
export * from "../../sdk/assemblyscript/assembly/exports";

/** The size of an accumulator: i64 count, f64 sum. */
const ACC_SIZE = 16;

// The initial accumulator (the SDK copies it), the merged one and the
// result, each reused.
const zero = new Uint8Array(ACC_SIZE);
const merged = new Uint8Array(ACC_SIZE);
const out = new eddy.ByteBuffer(64);

eddy.setName("stats", "1.0.0");
eddy.aggregate({ init: initial, add: add, merge: merge, result: result });

function initial(): Uint8Array {
  return zero;
}

/** Checks an accumulator's size; the reason if it is wrong, else null. */
function badSize(acc: Uint8Array): string | null {
  if (acc.byteLength == ACC_SIZE) return null;
  return "accumulator is " + acc.byteLength.toString() + " bytes, want 16";
}

function add(acc: Uint8Array, r: eddy.Record): Uint8Array {
  let bad = badSize(acc);
  if (bad != null) return eddy.reject<Uint8Array>(bad);
  let v = r.value;
  if (v == null || !json.number(v.dataStart, <usize>v.byteLength)) return eddy.badInput<Uint8Array>("value is not a JSON number");
  let x = json.toFloat(json.valueStart, json.valueEnd - json.valueStart);
  if (json.floatRange) return eddy.badInput<Uint8Array>("value is out of the float64 range");
  let p = acc.dataStart;
  store<i64>(p, load<i64>(p) + 1);
  store<f64>(p, load<f64>(p, 8) + x, 8);
  return acc;
}

function merge(key: Uint8Array | null, a: Uint8Array, b: Uint8Array): Uint8Array {
  let bad = badSize(a);
  if (bad == null) bad = badSize(b);
  if (bad != null) return eddy.reject<Uint8Array>(bad);
  let p = merged.dataStart;
  store<i64>(p, load<i64>(a.dataStart) + load<i64>(b.dataStart));
  store<f64>(p, load<f64>(a.dataStart, 8) + load<f64>(b.dataStart, 8), 8);
  return merged;
}

function result(key: Uint8Array | null, acc: Uint8Array): Uint8Array | null {
  let bad = badSize(acc);
  if (bad != null) return eddy.reject<Uint8Array | null>(bad);
  let count = load<i64>(acc.dataStart);
  let sum = load<f64>(acc.dataStart, 8);
  out.reset().appendString('{"count":').appendI64(count);
  out.appendString(',"sum":');
  appendNumber(sum);
  out.appendString(',"avg":');
  appendNumber(sum / <f64>count);
  return out.push(0x7d).view(); // '}'
}

/** Appends f as encoding/json writes a float64, or null if f is not finite (JSON has no NaN or infinity). */
function appendNumber(f: f64): void {
  if (!isFinite(f)) out.appendString("null");
  else appendJSONFloat(out, f);
}
