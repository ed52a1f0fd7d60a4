// Timeout is a stateful Eddy process function with timers: it reports keys
// that went quiet. For each record it keeps the record's timestamp as the
// key's last activity (keyed state: the record key → the time in decimal
// text; a null key is kept like an empty one) and moves the key's
// event-time timer to one second after it (deleting the one it set for the
// previous record); it passes no record on. When a timer fires and the
// key's last activity is still one second before it, it forgets the key
// and emits one record: the key, the last activity in decimal as the value,
// and the timer's time as the timestamp. A timer that no longer matches
// (none should) and a processing-time timer emit nothing.
//
// In a step without keyed state (NO_STORE) every record is rejected
// (REJECTED); a host storage failure fails it with STATE.
//
// Build (from guests/assemblyscript; build.sh builds every guest):
//
//	../../sdk/assemblyscript/node_modules/.bin/asc timeout.ts -O3 --runtime minimal --noAssert --use abort=../../sdk/assemblyscript/assembly/abort/eddyAbort -o ../../testdata/assemblyscript/timeout.wasm

import * as eddy from "../../sdk/assemblyscript/assembly/index";
import { parseInt64, parsedInt, parseError } from "./internal/strconv";
import { quote } from "./internal/quote";
export * from "../../sdk/assemblyscript/assembly/exports";

/** How long a key stays quiet before it is reported, in ms. */
const GAP: i64 = 1000;

// The stored time of a record, and the value of a report: reused.
const buf = new eddy.ByteBuffer(24);
// The one record a firing emits, reused.
const report = new eddy.Record();
const reports: eddy.Record[] = [report];
const none: eddy.Record[] = [];

// What last() found.
const FOUND = 1;
const ABSENT = 0;
const FAILED = -1;
// The last activity last() read, when it answered FOUND.
let lastTime: i64 = 0;

// Handlers after the globals they use: top-level code runs in order.
eddy.setName("timeout", "1.0.0");
eddy.filter(touch);
eddy.onTimer(fire);

/**
 * Reads the key's last activity into lastTime. On FAILED the record's
 * failure is noted already (a state failure, or a stored time that is not
 * a decimal int64).
 */
function last(key: Uint8Array | null): i32 {
  let v = eddy.stateGet(key);
  let st = eddy.stateStatus();
  if (st == eddy.StateStatus.ABSENT) return ABSENT;
  if (st != eddy.StateStatus.OK) {
    eddy.failState<i32>(st);
    return FAILED;
  }
  let stored = v!;
  if (!parseInt64(stored.dataStart, <usize>stored.byteLength)) {
    let q = quote(stored);
    eddy.reject<i32>("stored time " + q + ": strconv.ParseInt: parsing " + q + ": " + parseError);
    return FAILED;
  }
  lastTime = parsedInt;
  return FOUND;
}

function touch(r: eddy.Record): bool {
  let found = last(r.key);
  if (found == FAILED) return false;
  if (found == FOUND) {
    let st = eddy.deleteTimer(r.key, eddy.TimeDomain.EVENT_TIME, lastTime + GAP);
    if (st != eddy.StateStatus.OK) return eddy.failState<bool>(st);
  }
  let put = eddy.statePut(r.key, buf.reset().appendI64(r.timestamp).view());
  if (put != eddy.StateStatus.OK) return eddy.failState<bool>(put);
  let set = eddy.setTimer(r.key, eddy.TimeDomain.EVENT_TIME, r.timestamp + GAP);
  if (set != eddy.StateStatus.OK) return eddy.failTimer<bool>(set);
  return false;
}

function fire(t: eddy.Timer): eddy.Record[] {
  if (t.domain != eddy.TimeDomain.EVENT_TIME) return none;
  let found = last(t.key);
  if (found == FAILED) return none;
  if (found == ABSENT || lastTime + GAP != t.time) return none;
  let del = eddy.stateDelete(t.key);
  if (del != eddy.StateStatus.OK) return eddy.failState<eddy.Record[]>(del);
  report.key = t.key;
  report.value = buf.reset().appendI64(lastTime).view();
  report.timestamp = t.time;
  return reports;
}
