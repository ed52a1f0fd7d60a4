// Counter is a stateful Eddy process function: it keeps a running count of
// the records of each key in keyed state (the state key is the record key; a
// null key counts like an empty one) and emits each record with its value
// replaced by the count so far, in decimal. The count is stored as the same
// decimal text.
//
// It adds 1 to the counter "records" for every record counted and logs at
// DEBUG once per 1000 records. In a step without keyed state (NO_STORE)
// every record is rejected (REJECTED); a host storage failure fails it with
// STATE.
//
// Build (from guests/assemblyscript; build.sh builds every guest):
//
//	../../sdk/assemblyscript/node_modules/.bin/asc counter.ts -O3 --runtime minimal --noAssert --use abort=../../sdk/assemblyscript/assembly/abort/eddyAbort -o ../../testdata/assemblyscript/counter.wasm

import * as eddy from "../../sdk/assemblyscript/assembly/index";
import { parseUint64, parsedUint, parseError } from "./internal/strconv";
import { quote } from "./internal/quote";
export * from "../../sdk/assemblyscript/assembly/exports";

/** How many records pass between two debug log lines. */
const LOG_EVERY: u64 = 1000;

// Records counted by this instance.
let seen: u64 = 0;
// The new count, reused for every record.
const buf = new eddy.ByteBuffer(24);

eddy.setName("counter", "1.0.0");
eddy.map(count);

function count(r: eddy.Record): eddy.Record {
  let stored = eddy.stateGet(r.key);
  let st = eddy.stateStatus();
  if (st != eddy.StateStatus.OK && st != eddy.StateStatus.ABSENT) return eddy.failState<eddy.Record>(st);
  let n: u64 = 0;
  if (stored != null) {
    if (!parseUint64(stored.dataStart, <usize>stored.byteLength)) {
      let q = quote(stored);
      return eddy.reject<eddy.Record>("stored count " + q + ": strconv.ParseUint: parsing " + q + ": " + parseError);
    }
    n = parsedUint;
  }
  let v = buf.reset().appendU64(n + 1).view();
  let put = eddy.statePut(r.key, v);
  if (put != eddy.StateStatus.OK) return eddy.failState<eddy.Record>(put);
  eddy.count("records", 1);
  seen++;
  if (seen % LOG_EVERY == 0) eddy.log(eddy.Level.DEBUG, "counter: " + seen.toString() + " records");
  r.value = v;
  return r;
}
