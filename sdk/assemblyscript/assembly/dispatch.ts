// The SDK's side of ABI.md section 5: input envelope in, output envelope
// out. The exports (exports.ts) call these functions with the envelope's
// address and length.
//
// # Why it looks the way it does
//
// The per-record path allocates nothing: the record handed to a handler is
// one Record object, with key, value and header views re-pointed at each
// record's bytes in the input buffer (views.ts), and the answer is written
// to one output buffer that lives until the next call (ABI.md 6.5 lets the
// guest reuse it).
//
// A batch is read twice: once to check that the whole envelope is well
// formed, without making any object, and once to hand the records to the
// handler. So no user code runs on a malformed envelope (ABI.md 6.4), and no
// per-record state has to be kept between the two.
//
// AssemblyScript cannot catch a crash (abort, or a trap such as an
// out-of-bounds access): it ends the whole call, and the host isolates the
// record by splitting the batch (ABI.md section 8).
//
// # Loops
//
// The Eddy host runs guests with wazero, which makes every call
// interruptible at its deadline by checking for cancellation at each loop
// header: some tens of nanoseconds per loop iteration, as much as the rest
// of the SDK's work for a record. The two loops over a batch of map records
// (the check and the run) therefore handle four records per iteration.

import { Reader, Writer, Format } from "./msgpack";
import { Record, Header } from "./record";
import { Aggregator, reg } from "./register";
import { Code, clearFailure, failureCode, failureReason } from "./errors";
import { reportError } from "./host";
import { newView, pointView } from "./views";
import { Timer, TimeDomain } from "./timers";

/** What the manifest reports in its "sdk" key. */
export const SDK_VERSION = "assemblyscript/0.1.0";

// ---- Buffers reused across calls ----

// The eddy_alloc region: one buffer that grows and is reused.
let inBuf = new ArrayBuffer(0);

/** The smallest eddy_alloc region, so that small batches do not grow it in many steps. */
const MIN_ALLOC = 64 << 10;

// The output envelope; it lives until the next call.
const out = new Writer(4096);
// The reader of input envelopes.
const rd = new Reader();

// The record handed to handlers and its views (see views.ts).
const rec = new Record();
const keyView = newView();
const valueView = newView();
const headers: Header[] = [];
const headerPool: Header[] = [];
const headerViews: Uint8Array[] = [];
// Views for the items of join, merge and result.
const itemKey = newView();
const itemA = newView();
const itemB = newView();
// The timer handed to the timer handler, and its key's view.
const timerKey = newView();
const timer = new Timer(timerKey);
// Empty accumulator, for nil accumulators and handlers that return null.
const emptyAcc = new Uint8Array(0);

/**
 * Returns a region of at least size bytes that stays untouched until the
 * next eddy_alloc, or 0 if size is impossible.
 */
export function alloc(size: i32): usize {
  if (size < 0 || size > (1 << 30) - 64) return 0;
  if (size > inBuf.byteLength) {
    let n = max(max(size, inBuf.byteLength << 1), MIN_ALLOC);
    if (n > (1 << 30) - 64) n = size;
    inBuf = new ArrayBuffer(n);
  }
  return changetype<usize>(inBuf);
}

/**
 * Checks that [ptr, ptr+len) lies inside the eddy_alloc region: the host
 * writes envelopes only there (ABI.md 6.5), so anything else is refused
 * rather than read.
 */
export function inputOK(ptr: usize, len: i32): bool {
  if (len == 0) return true;
  let base = changetype<usize>(inBuf);
  return len > 0 && ptr >= base && <u64>(ptr - base) + <u64>len <= <u64>inBuf.byteLength;
}

/** Packs the output envelope as (ptr << 32) | len. */
// @ts-ignore: decorator
@inline function answer(): i64 {
  return (<i64>out.ptr << 32) | <i64>out.len;
}

/** Fails the whole call: reports msg through the error host function and returns -code. */
export function callFailure(code: i32, msg: string): i64 {
  reportError(code, msg);
  return -(<i64>code);
}

/** Reads the item count of an envelope; -1 if it cannot be read (the call fails). */
function count(ptr: usize, len: i32): i32 {
  rd.reset(ptr, <usize>len);
  let n = rd.readArrayLen();
  return rd.ok ? n : -1;
}

function malformed(): string {
  return "malformed input envelope: " + rd.error!;
}

/** Checks that the envelope ended with its last item. */
function trailing(): bool {
  if (rd.ok && rd.left != 0) rd.fail(rd.left.toString() + " trailing bytes");
  return rd.ok;
}

// ---- Writing results ----

/** Writes a failed Result: [code, reason]. */
function writeFailure(code: i32, reason: string): void {
  out.writeByte(0x92);
  out.writeInt(code);
  out.writeStr(reason);
}

/** Answers n items with the same failure. */
function failAll(n: i32, code: i32, reason: string): void {
  for (let i = 0; i < n; i++) writeFailure(code, reason);
}

/** Writes the failure noted by the handler just called, if any, and reports whether there was one. */
// @ts-ignore: decorator
@inline function wroteFailure(): bool {
  let code = failureCode();
  if (code == 0) return false;
  writeFailure(code, failureReason());
  return true;
}

/** Writes b as bin, with nil written as an empty bin: accumulators may not be nil. */
function writeAcc(b: Uint8Array | null): void {
  if (b == null) {
    out.writeByte(Format.BIN8);
    out.writeByte(0);
    return;
  }
  out.writeBin(b);
}

/**
 * Writes a successful Result holding one record: the answer of a map or a
 * kept record of a filter. The usual shape (a key of at most 255 bytes, a
 * value of at most 65535, the input's timestamp, no headers) is written with
 * one bounds check; anything else by writeRecord.
 */
function writeOneRecord(r: Record, inTime: i64): void {
  let k = r.key, v = r.value, hs = r.headers;
  let kl = k == null ? 0 : k.byteLength;
  let vl = v == null ? 0 : v.byteLength;
  if ((hs != null && hs.length != 0) || r.timestamp != inTime || kl > 0xff || vl > 0xffff) {
    out.writeByte(0x92);
    out.writeByte(0x00);
    out.writeByte(0x91);
    writeRecord(r, inTime);
    return;
  }
  let p = out.ensure(<usize>(4 + 2 + kl + 3 + vl + 2));
  store<u32>(p, 0x94910092); // 92 00 91 94: Result [0, [Record...]]
  let q = p + 4;
  if (k == null) {
    store<u8>(q, Format.NIL);
    q += 1;
  } else {
    store<u8>(q, Format.BIN8);
    store<u8>(q, <u8>kl, 1);
    memory.copy(q + 2, k.dataStart, <usize>kl);
    q += 2 + <usize>kl;
  }
  if (v == null) {
    store<u8>(q, Format.NIL);
    q += 1;
  } else if (vl <= 0xff) {
    store<u8>(q, Format.BIN8);
    store<u8>(q, <u8>vl, 1);
    memory.copy(q + 2, v.dataStart, <usize>vl);
    q += 2 + <usize>vl;
  } else {
    store<u8>(q, Format.BIN16);
    store<u16>(q, bswap<u16>(<u16>vl), 1);
    memory.copy(q + 3, v.dataStart, <usize>vl);
    q += 3 + <usize>vl;
  }
  store<u16>(q, 0x90c0); // c0 90: timestamp inherited, no headers
  out.len = q + 2 - out.ptr;
}

/**
 * Writes an output Record. A timestamp equal to the input's is written as
 * nil, which ABI.md 5.2 defines as the same value in one byte.
 */
function writeRecord(r: Record, inTime: i64): void {
  writeRecordAt(r, r.timestamp, inTime);
}

/** Writes an output Record with timestamp ts instead of r's (see writeRecord). */
function writeRecordAt(r: Record, ts: i64, inTime: i64): void {
  out.writeByte(0x94);
  out.writeBin(r.key);
  out.writeBin(r.value);
  if (ts == inTime) out.writeByte(Format.NIL);
  else out.writeInt(ts);
  let hs = r.headers;
  if (hs == null) {
    out.writeByte(0x90);
    return;
  }
  let n = hs.length;
  out.writeArrayHeader(n);
  for (let i = 0; i < n; i++) {
    let h = unchecked(hs[i]);
    out.writeByte(0x92);
    out.writeStr(h.key);
    out.writeBin(h.value);
  }
}

// ---- Reading records ----

// ---- The fast path for records in the host's usual shape ----
//
// # Why there is a fast path
//
// The general Reader checks every value's format and bounds through a
// method call per value. Records as the Eddy host writes them for Kafka
// records without headers have one shape, which fastRecord decodes with a
// handful of loads and compares; any other shape (headers, str instead of
// bin, other integer widths) falls back to the general code, so every input
// the ABI allows is still accepted. It roughly halves the SDK's cost per
// record.

// The fields decoded by fastRecord: addresses, lengths (-1 for nil) and the
// timestamp.
let fKey: usize = 0;
let fKeyLen: i32 = 0;
let fValue: usize = 0;
let fValueLen: i32 = 0;
let fTime: i64 = 0;

/**
 * Decodes the record at p if it has the host's usual shape, and returns the
 * address after it, or 0 if it has another (or is truncated): 0x94, a key
 * and a value that are each nil, bin 8 or bin 16, a timestamp that is a
 * positive fixint, a uint 8/16/32, or a uint 64 below 2^63, and no headers
 * (an empty array or nil).
 */
function fastRecord(p: usize, end: usize): usize {
  if (p >= end || load<u8>(p) != 0x94) return 0;
  let q = p + 1;
  // The key.
  if (q >= end) return 0;
  let c = <u32>load<u8>(q);
  if (c == Format.NIL) {
    fKeyLen = -1;
    q++;
  } else if (c == Format.BIN8) {
    if (end - q < 2) return 0;
    fKeyLen = <i32>load<u8>(q, 1);
    fKey = q + 2;
    q = fKey + <usize>fKeyLen;
  } else if (c == Format.BIN16) {
    if (end - q < 3) return 0;
    fKeyLen = <i32>bswap<u16>(load<u16>(q, 1));
    fKey = q + 3;
    q = fKey + <usize>fKeyLen;
  } else {
    return 0;
  }
  // The value.
  if (q >= end) return 0;
  c = <u32>load<u8>(q);
  if (c == Format.NIL) {
    fValueLen = -1;
    q++;
  } else if (c == Format.BIN8) {
    if (end - q < 2) return 0;
    fValueLen = <i32>load<u8>(q, 1);
    fValue = q + 2;
    q = fValue + <usize>fValueLen;
  } else if (c == Format.BIN16) {
    if (end - q < 3) return 0;
    fValueLen = <i32>bswap<u16>(load<u16>(q, 1));
    fValue = q + 3;
    q = fValue + <usize>fValueLen;
  } else {
    return 0;
  }
  // The timestamp, then the headers.
  if (q >= end) return 0;
  c = <u32>load<u8>(q);
  if (c == Format.UINT64) {
    if (end - q < 10) return 0;
    let ts = <i64>bswap<u64>(load<u64>(q, 1));
    if (ts < 0) return 0;
    fTime = ts;
    q += 9;
  } else if (c <= 0x7f) {
    fTime = <i64>c;
    q += 1;
  } else if (c == Format.UINT32) {
    if (end - q < 6) return 0;
    fTime = <i64>bswap<u32>(load<u32>(q, 1));
    q += 5;
  } else if (c == Format.UINT16) {
    if (end - q < 4) return 0;
    fTime = <i64>bswap<u16>(load<u16>(q, 1));
    q += 3;
  } else if (c == Format.UINT8) {
    if (end - q < 3) return 0;
    fTime = <i64>load<u8>(q, 1);
    q += 2;
  } else {
    return 0;
  }
  if (q >= end) return 0;
  c = <u32>load<u8>(q);
  if (c != 0x90 && c != Format.NIL) return 0;
  return q + 1;
}

/** Checks one Record (ABI.md 5.2) without making anything; the error is left in rd. */
function checkRecord(): void {
  if (rd.readArrayLen() != 4) {
    rd.fail("a record is not an array of 4 elements");
    return;
  }
  rd.readBytes();
  rd.readBytes();
  if (rd.isNil()) rd.readNil();
  else rd.readInt();
  if (rd.isNil()) {
    rd.readNil();
    return;
  }
  let h = rd.readArrayLen();
  for (let j = 0; j < h && rd.ok; j++) {
    if (rd.readArrayLen() != 2) {
      rd.fail("a header is not an array of 2 elements");
      return;
    }
    rd.readStr();
    rd.readBytes();
  }
}

/** Checks n records from the reader's position; false (with the reason in rd) if one is malformed. */
function checkRecords(n: i32): bool {
  let i = 0;
  // Four records of the usual shape per iteration (see "Loops" above); at
  // the first other one, one at a time.
  for (; n - i >= 4; i += 4) {
    let end = rd.end;
    let e = fastRecord(rd.pos, end);
    if (e != 0) e = fastRecord(e, end);
    if (e != 0) e = fastRecord(e, end);
    if (e != 0) e = fastRecord(e, end);
    if (e == 0) break;
    rd.pos = e;
  }
  for (; i < n; i++) {
    let e = fastRecord(rd.pos, rd.end);
    if (e != 0) {
      rd.pos = e;
      continue;
    }
    checkRecord();
    if (!rd.ok) {
      rd.error = "record " + i.toString() + ": " + rd.error!;
      return false;
    }
  }
  return trailing();
}

/** Points view at the bytes read last by rd (n from readBytes) and returns it, or null for nil. */
// @ts-ignore: decorator
@inline function viewOf(view: Uint8Array, n: i32): Uint8Array | null {
  if (n < 0) return null;
  pointView(view, inBuf, rd.start, n);
  return view;
}

/** Decodes the checked record at the reader's position into rec. */
function readRecord(): Record {
  let e = fastRecord(rd.pos, rd.end);
  if (e != 0) {
    if (fKeyLen < 0) rec.key = null;
    else {
      pointView(keyView, inBuf, fKey, fKeyLen);
      rec.key = keyView;
    }
    if (fValueLen < 0) rec.value = null;
    else {
      pointView(valueView, inBuf, fValue, fValueLen);
      rec.value = valueView;
    }
    rec.timestamp = fTime;
    rec.headers = null;
    rd.pos = e;
    return rec;
  }
  rd.readArrayLen();
  rec.key = viewOf(keyView, rd.readBytes());
  rec.value = viewOf(valueView, rd.readBytes());
  if (rd.isNil()) {
    rd.readNil();
    rec.timestamp = 0; // input timestamps are ints; be lenient
  } else {
    rec.timestamp = rd.readInt();
  }
  if (rd.isNil()) {
    rd.readNil();
    rec.headers = null;
    return rec;
  }
  let h = rd.readArrayLen();
  if (h == 0) {
    rec.headers = null;
    return rec;
  }
  while (headerPool.length < h) {
    headerViews.push(newView());
    headerPool.push(new Header(""));
  }
  // Rebuilt from the pool every time: a handler may have put its own
  // Header objects into the array, and those must not be overwritten.
  headers.length = 0;
  for (let j = 0; j < h; j++) {
    rd.readArrayLen();
    let nl = rd.readStr();
    let hd = unchecked(headerPool[j]);
    hd.key = intern(rd.start, nl);
    hd.value = viewOf(unchecked(headerViews[j]), rd.readBytes());
    headers.push(hd);
  }
  rec.headers = headers;
  return rec;
}

// Header names are strings, which are immutable; a view into the input would
// not do, as the host overwrites it. Names seen before (there are usually a
// handful) are looked up by their UTF-8 bytes rather than decoded again.
const MAX_NAMES = 64;
const nameBytes: ArrayBuffer[] = [];
const nameStrings: string[] = [];

function intern(ptr: usize, n: i32): string {
  for (let i = 0, k = nameBytes.length; i < k; i++) {
    let b = unchecked(nameBytes[i]);
    if (b.byteLength == n && memory.compare(changetype<usize>(b), ptr, <usize>n) == 0) return unchecked(nameStrings[i]);
  }
  let s = String.UTF8.decodeUnsafe(ptr, <usize>n);
  if (nameBytes.length < MAX_NAMES) {
    let b = new ArrayBuffer(n);
    memory.copy(changetype<usize>(b), ptr, <usize>n);
    nameBytes.push(b);
    nameStrings.push(s);
  }
  return s;
}

/** Checks n items of [key, a, b] (width 3) or [key, acc] (width 2). */
function checkItems(n: i32, width: i32): bool {
  for (let i = 0; i < n; i++) {
    if (rd.readArrayLen() != width) rd.fail("an item has the wrong number of elements");
    for (let j = 0; j < width; j++) rd.readBytes();
    if (!rd.ok) {
      rd.error = "item " + i.toString() + ": " + rd.error!;
      return false;
    }
  }
  return trailing();
}

// ---- The calls ----

/** The kinds of calls that take a batch of records. */
const enum RecordCall {
  MAP,
  FILTER,
  FLAT_MAP,
  KEY,
  TIMESTAMP,
}

/**
 * Answers a batch of records: the shared body of eddy_process, eddy_key and
 * eddy_timestamp.
 */
function records(ptr: usize, len: i32, call: RecordCall, name: string): i64 {
  let n = count(ptr, len);
  if (n < 0) return callFailure(Code.BAD_ENVELOPE, name + ": " + malformed());
  out.reset();
  out.writeArrayHeader(n);
  let first = rd.pos;
  if (!checkRecords(n)) {
    failAll(n, Code.BAD_ENVELOPE, malformed());
    return answer();
  }
  rd.pos = first;
  switch (call) {
    case RecordCall.MAP: runMap(n); break;
    case RecordCall.FILTER: runFilter(n); break;
    case RecordCall.FLAT_MAP: runFlatMap(n); break;
    case RecordCall.KEY: runKey(n); break;
    case RecordCall.TIMESTAMP: runTimestamp(n); break;
  }
  return answer();
}

function runMap(n: i32): void {
  let fn = reg.mapFn!;
  let i = 0;
  // Four records per iteration (see "Loops" above).
  for (; n - i >= 4; i += 4) {
    mapOne(fn);
    mapOne(fn);
    mapOne(fn);
    mapOne(fn);
  }
  for (; i < n; i++) mapOne(fn);
}

// @ts-ignore: decorator
@inline function mapOne(fn: (r: Record) => Record): void {
  let r = readRecord();
  let inTime = r.timestamp;
  clearFailure();
  let o = fn(r);
  if (failureCode() != 0) {
    writeFailure(failureCode(), failureReason());
  } else if (changetype<usize>(o) == 0) {
    writeFailure(Code.REJECTED, "map returned null");
  } else {
    writeOneRecord(o, inTime);
  }
}

function runFilter(n: i32): void {
  let fn = reg.filterFn!;
  for (let i = 0; i < n; i++) {
    let r = readRecord();
    // The record is passed on as it came, whatever fn does to the object.
    let key = r.key, value = r.value, ts = r.timestamp, hs = r.headers;
    clearFailure();
    let keep = fn(r);
    if (wroteFailure()) continue;
    if (!keep) {
      out.writeByte(0x92);
      out.writeByte(0x00);
      out.writeByte(0x90);
      continue;
    }
    r.key = key;
    r.value = value;
    r.timestamp = ts;
    r.headers = hs;
    writeOneRecord(r, ts);
  }
}

function runFlatMap(n: i32): void {
  let fn = reg.flatMapFn!;
  for (let i = 0; i < n; i++) {
    let r = readRecord();
    let inTime = r.timestamp;
    clearFailure();
    let outs = fn(r);
    if (wroteFailure()) continue;
    out.writeByte(0x92);
    out.writeByte(0x00);
    if (changetype<usize>(outs) == 0) {
      out.writeByte(0x90);
      continue;
    }
    let k = outs.length;
    out.writeArrayHeader(k);
    for (let j = 0; j < k; j++) writeRecord(unchecked(outs[j]), inTime);
  }
}

function runKey(n: i32): void {
  let fn = reg.keyFn!;
  for (let i = 0; i < n; i++) {
    let r = readRecord();
    clearFailure();
    let k = fn(r);
    if (wroteFailure()) continue;
    out.writeByte(0x92);
    out.writeByte(0x00);
    out.writeBin(k);
  }
}

function runTimestamp(n: i32): void {
  let fn = reg.timeFn!;
  for (let i = 0; i < n; i++) {
    let r = readRecord();
    clearFailure();
    let ts = fn(r);
    if (wroteFailure()) continue;
    out.writeByte(0x92);
    out.writeByte(0x00);
    out.writeInt(ts);
  }
}

/** Answers every item of a kind the module does not implement with UNSUPPORTED. */
function unsupported(ptr: usize, len: i32, name: string, reason: string): i64 {
  let n = count(ptr, len);
  if (n < 0) return callFailure(Code.BAD_ENVELOPE, name + ": " + malformed());
  out.reset();
  out.writeArrayHeader(n);
  failAll(n, Code.UNSUPPORTED, reason);
  return answer();
}

/** eddy_process: [Record × N] → [Result × N], body = [Record × k]. */
export function process(ptr: usize, len: i32): i64 {
  const name = "eddy_process";
  if (reg.mapFn != null) return records(ptr, len, RecordCall.MAP, name);
  if (reg.filterFn != null) return records(ptr, len, RecordCall.FILTER, name);
  if (reg.flatMapFn != null) return records(ptr, len, RecordCall.FLAT_MAP, name);
  return unsupported(ptr, len, name, "this module implements no process function");
}

/** eddy_key: [Record × N] → [Result × N], body = key bytes?. */
export function key(ptr: usize, len: i32): i64 {
  if (reg.keyFn == null) return unsupported(ptr, len, "eddy_key", "this module implements no key function");
  return records(ptr, len, RecordCall.KEY, "eddy_key");
}

/** eddy_timestamp: [Record × N] → [Result × N], body = int. */
export function timestamp(ptr: usize, len: i32): i64 {
  if (reg.timeFn == null) return unsupported(ptr, len, "eddy_timestamp", "this module implements no timestamp function");
  return records(ptr, len, RecordCall.TIMESTAMP, "eddy_timestamp");
}

/**
 * Checks n timers, [key bytes, time int, domain int] each; false (with the
 * reason in rd) if one is malformed. The host never sends a nil key, which
 * is read as an empty one, and sends only the domains 0 and 1: another is
 * refused (ABI.md 5.4), so a handler sees only TimeDomain's values.
 */
function checkTimers(n: i32): bool {
  for (let i = 0; i < n; i++) {
    if (rd.readArrayLen() != 3) rd.fail("a timer is not an array of 3 elements");
    rd.readBytes();
    rd.readInt();
    let d = rd.readInt();
    if (rd.ok && d != TimeDomain.EVENT_TIME && d != TimeDomain.PROCESSING_TIME) {
      rd.fail("domain " + d.toString() + ": want 0 (event time) or 1 (processing time)");
    }
    if (!rd.ok) {
      rd.error = "timer " + i.toString() + ": " + rd.error!;
      return false;
    }
  }
  return trailing();
}

/**
 * eddy_timer: [Timer × N] → [Result × N], body = [Record × k], Timer =
 * [key bytes, time int, domain int]. Output records are written as those of
 * eddy_process, with the timer's time as the input's: an output timestamp
 * of 0 (a new Record's) or the timer's time is written as nil, which the
 * host reads as the timer's time.
 */
export function timers(ptr: usize, len: i32): i64 {
  const name = "eddy_timer";
  let fn = reg.timerFn;
  if (fn == null) return unsupported(ptr, len, name, "this module implements no timer function");
  let n = count(ptr, len);
  if (n < 0) return callFailure(Code.BAD_ENVELOPE, name + ": " + malformed());
  out.reset();
  out.writeArrayHeader(n);
  let first = rd.pos;
  if (!checkTimers(n)) {
    failAll(n, Code.BAD_ENVELOPE, malformed());
    return answer();
  }
  rd.pos = first;
  for (let i = 0; i < n; i++) {
    rd.readArrayLen();
    let kn = rd.readBytes();
    if (kn < 0) pointView(timerKey, inBuf, changetype<usize>(inBuf), 0);
    else pointView(timerKey, inBuf, rd.start, kn);
    timer.key = timerKey; // a handler may have put another array there
    let at = rd.readInt();
    timer.time = at;
    timer.domain = <TimeDomain><i32>rd.readInt();
    clearFailure();
    let outs = fn(timer);
    if (wroteFailure()) continue;
    out.writeByte(0x92);
    out.writeByte(0x00);
    if (changetype<usize>(outs) == 0) {
      out.writeByte(0x90);
      continue;
    }
    let k = outs.length;
    out.writeArrayHeader(k);
    for (let j = 0; j < k; j++) {
      let r = unchecked(outs[j]);
      writeRecordAt(r, r.timestamp == 0 ? at : r.timestamp, at);
    }
  }
  return answer();
}

/** The kinds of calls that take [key, a, b] or [key, acc] items. */
const enum ItemCall {
  JOIN,
  MERGE,
  RESULT,
  IDENTITY,
}

/** Answers a batch of items: the shared body of eddy_join, eddy_agg_merge and eddy_agg_result. */
function items(ptr: usize, len: i32, width: i32, call: ItemCall, name: string): i64 {
  let n = count(ptr, len);
  if (n < 0) return callFailure(Code.BAD_ENVELOPE, name + ": " + malformed());
  out.reset();
  out.writeArrayHeader(n);
  let first = rd.pos;
  if (!checkItems(n, width)) {
    failAll(n, Code.BAD_ENVELOPE, malformed());
    return answer();
  }
  rd.pos = first;
  for (let i = 0; i < n; i++) {
    rd.readArrayLen();
    let key = viewOf(itemKey, rd.readBytes());
    let a = viewOf(itemA, rd.readBytes());
    let b: Uint8Array | null = null;
    if (width == 3) b = viewOf(itemB, rd.readBytes());
    clearFailure();
    switch (call) {
      case ItemCall.JOIN: {
        let v = reg.joinFn!(key, a, b);
        if (wroteFailure()) break;
        out.writeByte(0x92);
        out.writeByte(0x00);
        out.writeBin(v);
        break;
      }
      case ItemCall.MERGE: {
        let v = reg.agg!.merge!(key, a != null ? a : emptyAcc, b != null ? b : emptyAcc);
        if (wroteFailure()) break;
        out.writeByte(0x92);
        out.writeByte(0x00);
        writeAcc(changetype<usize>(v) == 0 ? null : v);
        break;
      }
      case ItemCall.RESULT: {
        let v = reg.agg!.result!(key, a != null ? a : emptyAcc);
        if (wroteFailure()) break;
        out.writeByte(0x92);
        out.writeByte(0x00);
        out.writeBin(v);
        break;
      }
      case ItemCall.IDENTITY: {
        out.writeByte(0x92);
        out.writeByte(0x00);
        out.writeBin(a);
        break;
      }
    }
  }
  return answer();
}

/** eddy_join: [[key, left, right] × N] → [Result × N], body = bytes?. */
export function join(ptr: usize, len: i32): i64 {
  if (reg.joinFn == null) return unsupported(ptr, len, "eddy_join", "this module implements no join function");
  return items(ptr, len, 3, ItemCall.JOIN, "eddy_join");
}

/** eddy_agg_merge: [[key, a, b] × G] → [Result × G], body = the merged accumulator. */
export function aggMerge(ptr: usize, len: i32): i64 {
  const name = "eddy_agg_merge";
  let agg = reg.agg;
  if (agg == null) return unsupported(ptr, len, name, "this module implements no aggregate function");
  if (agg.merge == null) return unsupported(ptr, len, name, "this aggregate function has no merge");
  return items(ptr, len, 3, ItemCall.MERGE, name);
}

/** eddy_agg_result: [[key, acc] × G] → [Result × G], body = bytes?. */
export function aggResult(ptr: usize, len: i32): i64 {
  const name = "eddy_agg_result";
  let agg = reg.agg;
  if (agg == null) return unsupported(ptr, len, name, "this module implements no aggregate function");
  return items(ptr, len, 2, agg.result == null ? ItemCall.IDENTITY : ItemCall.RESULT, name);
}

/**
 * Calls Aggregator.init; a null init or a null result is an empty
 * accumulator. Returns null if init failed (the failure is noted).
 */
function callInit(agg: Aggregator): Uint8Array | null {
  let init = agg.init;
  clearFailure();
  if (init == null) return emptyAcc;
  let acc = init();
  if (failureCode() != 0) return null;
  return changetype<usize>(acc) == 0 ? emptyAcc : acc;
}

/** eddy_agg_init: one Result, body = the initial accumulator. Its input is empty and ignored. */
export function aggInit(): i64 {
  out.reset();
  let agg = reg.agg;
  if (agg == null) {
    writeFailure(Code.UNSUPPORTED, "this module implements no aggregate function");
    return answer();
  }
  let acc = callInit(agg);
  if (acc == null) {
    writeFailure(failureCode(), failureReason());
    return answer();
  }
  out.writeByte(0x92);
  out.writeByte(0x00);
  writeAcc(acc);
  return answer();
}

// Aggregation scratch: two buffers alternate as the accumulator handed to
// Aggregator.add, so that a failed add leaves the previous accumulator
// intact, and the input envelope is never written.
let scratchBuf: StaticArray<ArrayBuffer> = [new ArrayBuffer(64), new ArrayBuffer(64)];
const scratchView: StaticArray<Uint8Array> = [newView(), newView()];
// Records of the current group that were not folded.
const errIndex: i32[] = [];
const errCode: i32[] = [];
const errReason: string[] = [];

function noteRecordError(i: i32, code: i32, reason: string): void {
  errIndex.push(i);
  errCode.push(code);
  errReason.push(reason);
}

/**
 * eddy_agg_add: [Group × G] → [Added × G], Group = [key, acc, [Record × n]],
 * Added = [acc, [RecordError × e]].
 *
 * Added has no failure code of its own, so an envelope that is not a valid
 * list of groups fails the whole call with BAD_ENVELOPE, and a module
 * without an aggregate reports every record as UNSUPPORTED.
 */
export function aggAdd(ptr: usize, len: i32): i64 {
  const name = "eddy_agg_add";
  let g = count(ptr, len);
  if (g < 0) return callFailure(Code.BAD_ENVELOPE, name + ": " + malformed());
  let first = rd.pos;
  for (let i = 0; i < g; i++) {
    if (rd.readArrayLen() != 3) rd.fail("an item has the wrong number of elements");
    rd.readBytes();
    rd.readBytes();
    let k = rd.readArrayLen();
    for (let j = 0; j < k && rd.ok; j++) checkRecord();
    if (!rd.ok) return callFailure(Code.BAD_ENVELOPE, name + ": malformed input envelope: group " + i.toString() + ": " + rd.error!);
  }
  if (!trailing()) return callFailure(Code.BAD_ENVELOPE, name + ": " + malformed());

  rd.pos = first;
  out.reset();
  out.writeArrayHeader(g);
  for (let i = 0; i < g; i++) {
    rd.readArrayLen();
    rd.readBytes(); // the group's key: Add does not see it
    let an = rd.readBytes();
    let accStart = rd.start;
    let k = rd.readArrayLen();
    let acc = fold(an, accStart, k);
    out.writeByte(0x92);
    writeAcc(acc);
    let e = errIndex.length;
    out.writeArrayHeader(e);
    for (let j = 0; j < e; j++) {
      out.writeByte(0x93);
      out.writeInt(unchecked(errIndex[j]));
      out.writeInt(unchecked(errCode[j]));
      out.writeStr(unchecked(errReason[j]));
    }
  }
  return answer();
}

/**
 * Folds the k records at the reader's position into the accumulator of
 * accLen bytes at accPtr (accLen -1: nil, start from init) and returns the
 * result, leaving the records it could not fold in errIndex/errCode/errReason.
 * The reader ends after the records.
 */
function fold(accLen: i32, accPtr: usize, k: i32): Uint8Array | null {
  errIndex.length = 0;
  errCode.length = 0;
  errReason.length = 0;
  let input: Uint8Array | null = null;
  if (accLen >= 0) {
    pointView(itemA, inBuf, accPtr, accLen);
    input = itemA;
  }
  let agg = reg.agg;
  if (agg == null) {
    for (let i = 0; i < k; i++) {
      checkRecord(); // skips it
      noteRecordError(i, Code.UNSUPPORTED, "this module implements no aggregate function");
    }
    return input;
  }
  let cur: Uint8Array;
  if (input != null) {
    cur = input;
  } else {
    let init = callInit(agg);
    if (init == null) {
      let code = failureCode(), reason = "initial accumulator: " + failureReason();
      for (let i = 0; i < k; i++) {
        checkRecord();
        noteRecordError(i, code, reason);
      }
      return null;
    }
    cur = init;
  }
  let add = agg.add!;
  for (let i = 0; i < k; i++) {
    let r = readRecord();
    // Hand add a copy of cur in whichever scratch buffer cur is not in.
    let w = changetype<usize>(cur) == changetype<usize>(unchecked(scratchView[0])) ? 1 : 0;
    let work = toScratch(w, cur.dataStart, cur.byteLength);
    clearFailure();
    let next = add(work, r);
    let code = failureCode();
    if (code != 0) {
      noteRecordError(i, code, failureReason());
      continue;
    }
    // Keep the accumulator in scratch: add may have returned a view that
    // the SDK re-points (the record's value) or a buffer it reuses.
    if (changetype<usize>(next) != changetype<usize>(work)) {
      work = changetype<usize>(next) == 0 ? toScratch(w, 0, 0) : toScratch(w, next.dataStart, next.byteLength);
    }
    cur = work;
  }
  return cur;
}

/** Copies the n bytes at src into scratch buffer w (growing it) and returns its view of them. */
function toScratch(w: i32, src: usize, n: i32): Uint8Array {
  let buf = unchecked(scratchBuf[w]);
  if (buf.byteLength < n) {
    // src may lie in the old buffer, which stays alive until this returns.
    let nb = new ArrayBuffer(max(n, buf.byteLength << 1));
    memory.copy(changetype<usize>(nb), src, <usize>n);
    unchecked(scratchBuf[w] = nb);
    buf = nb;
  } else {
    memory.copy(changetype<usize>(buf), src, <usize>n); // src may overlap: memory.copy is a memmove
  }
  let view = unchecked(scratchView[w]);
  pointView(view, buf, changetype<usize>(buf), n);
  return view;
}

/** eddy_manifest: the manifest map of ABI.md section 4. */
export function manifest(): i64 {
  out.reset();
  let kinds = 0;
  if (reg.hasProcess()) kinds++;
  if (reg.agg != null) kinds++;
  if (reg.joinFn != null) kinds++;
  if (reg.keyFn != null) kinds++;
  if (reg.timeFn != null) kinds++;
  if (reg.timerFn != null) kinds++;
  let n = 3;
  if (reg.name.length > 0) n++;
  if (reg.version.length > 0) n++;
  out.writeMapHeader(n);
  out.writeStr("abi");
  out.writeInt(1);
  out.writeStr("kinds");
  out.writeArrayHeader(kinds);
  if (reg.hasProcess()) out.writeStr("process");
  if (reg.agg != null) out.writeStr("aggregate");
  if (reg.joinFn != null) out.writeStr("join");
  if (reg.keyFn != null) out.writeStr("key");
  if (reg.timeFn != null) out.writeStr("timestamp");
  if (reg.timerFn != null) out.writeStr("timer");
  if (reg.name.length > 0) {
    out.writeStr("name");
    out.writeStr(reg.name);
  }
  if (reg.version.length > 0) {
    out.writeStr("version");
    out.writeStr(reg.version);
  }
  out.writeStr("sdk");
  out.writeStr(SDK_VERSION);
  return answer();
}
