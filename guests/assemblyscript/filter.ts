// Filter is an Eddy process function that keeps the records whose value is
// a JSON object with a top-level numeric member "amount" of at least 100,
// and drops the others:
//
//   - a value that is not a JSON object (including invalid JSON and a null
//     value) fails with BAD_INPUT;
//   - an object without "amount", or whose "amount" is not a number, is
//     dropped;
//   - "amount" inside nested objects or strings does not count; if the name
//     repeats, the last one counts (as with Go's encoding/json).
//
// The scan is hand-written (internal/jsonscan.ts) and allocation-free.
//
// Build (from guests/assemblyscript; build.sh builds every guest):
//
//	../../sdk/assemblyscript/node_modules/.bin/asc filter.ts -O3 --runtime minimal --noAssert --use abort=../../sdk/assemblyscript/assembly/abort/eddyAbort -o ../../testdata/assemblyscript/filter.wasm

import * as eddy from "../../sdk/assemblyscript/assembly/index";
import * as json from "./internal/jsonscan";
export * from "../../sdk/assemblyscript/assembly/exports";

/** The smallest amount kept. */
const THRESHOLD: f64 = 100;

const AMOUNT = eddy.toBytes("amount");

eddy.setName("filter", "1.0.0");
eddy.filter(keep);

function keep(r: eddy.Record): bool {
  let v = r.value;
  let p: usize = v == null ? 0 : v.dataStart;
  let n: usize = v == null ? 0 : <usize>v.byteLength;
  switch (json.field(p, n, AMOUNT)) {
    case json.Field.SYNTAX: return eddy.badInput<bool>(json.ERR_SYNTAX);
    case json.Field.NOT_OBJECT: return eddy.badInput<bool>(json.ERR_NOT_OBJECT);
    case json.Field.MISSING: return false;
  }
  let s = json.valueStart, k = json.valueEnd - json.valueStart;
  if (!json.isNumber(s, k)) return false;
  // A JSON number always parses; one too large for a float64 is ±Infinity,
  // which still compares correctly.
  return json.toFloat(s, k) >= THRESHOLD;
}
