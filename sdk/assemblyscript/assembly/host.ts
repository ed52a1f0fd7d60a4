// Host functions of ABI.md section 3, imported from module "eddy".
// AssemblyScript emits an import only if it is called, so a function imports
// only what it uses.

import { pointView, newView } from "./views";

// @ts-ignore: decorator
@external("eddy", "log")
declare function hostLog(level: i32, ptr: usize, len: usize): void;

// @ts-ignore: decorator
@external("eddy", "error")
declare function hostError(code: i32, ptr: usize, len: usize): void;

// @ts-ignore: decorator
@external("eddy", "state_get")
declare function hostStateGet(kptr: usize, klen: usize, vptr: usize, vcap: usize): i32;

// @ts-ignore: decorator
@external("eddy", "state_put")
declare function hostStatePut(kptr: usize, klen: usize, vptr: usize, vlen: usize): i32;

// @ts-ignore: decorator
@external("eddy", "state_delete")
declare function hostStateDelete(kptr: usize, klen: usize): i32;

// @ts-ignore: decorator
@external("eddy", "counter_add")
declare function hostCounterAdd(nptr: usize, nlen: usize, delta: i64): void;

// Strings are UTF-16 in AssemblyScript; the host wants UTF-8. scratch is
// where they are encoded: it grows to the longest string and is reused.
let scratch = new ArrayBuffer(256);

/** Encodes s as UTF-8 into the scratch buffer and returns its length. */
function utf8(s: string): usize {
  let n = <usize>String.UTF8.byteLength(s);
  if (n > <usize>scratch.byteLength) scratch = new ArrayBuffer(<i32>max(n, <usize>scratch.byteLength << 1));
  String.UTF8.encodeUnsafe(changetype<usize>(s), s.length, changetype<usize>(scratch));
  return n;
}

/** Severity of a log line, as numbered by the host's log function. */
export enum Level {
  DEBUG = 0,
  INFO = 1,
  WARN = 2,
  ERROR = 3,
}

/**
 * Writes msg to the host's structured log at level (host import eddy.log).
 * The host may rate-limit a function's log lines, so do not log per record
 * at INFO or above. A level outside DEBUG..ERROR is clamped. Log does not
 * allocate once its buffer has grown to the longest message.
 */
export function log(level: Level, msg: string): void {
  let n = utf8(msg);
  hostLog(min(max(<i32>level, 0), 3), changetype<usize>(scratch), n);
}

/**
 * Adds delta to the counter called name, a metric the host exports (host
 * import eddy.counter_add). It is cheap enough to call per record.
 */
export function count(name: string, delta: i64 = 1): void {
  let n = utf8(name);
  hostCounterAdd(changetype<usize>(scratch), n, delta);
}

/** Gives the host the reason for a failing call (host import eddy.error). */
export function reportError(code: i32, msg: string): void {
  let n = utf8(msg);
  hostError(code, changetype<usize>(scratch), n);
}

/** Gives the host a reason held in memory, without allocating (for abort). */
export function reportErrorRaw(code: i32, ptr: usize, len: usize): void {
  hostError(code, ptr, len);
}

/** Logs a line held in memory, without allocating (for abort). */
export function logRaw(level: Level, ptr: usize, len: usize): void {
  hostLog(<i32>level, ptr, len);
}

// ---- Keyed state ----

/**
 * The outcome of a keyed-state call: what stateStatus() returns after
 * stateGet, and what statePut and stateDelete return.
 */
export enum StateStatus {
  /** The call succeeded (stateGet: the key was found). */
  OK = 0,
  /** stateGet: the key has no value. */
  ABSENT = -1,
  /** The function has no state store: it runs in a step that is not stateful, or under `eddy test` without --state. */
  NO_STORE = -2,
  /** The host's state storage failed. */
  FAILED = -3,
}

// stateBuf receives state_get values; it grows to the largest value read.
// stateView is the view stateGet returns, re-pointed on every call.
let stateBuf = new ArrayBuffer(256);
let stateView = newView();
let lastStatus: StateStatus = StateStatus.OK;

/** The most tries of stateGet's grow-and-retry loop (the value may change between tries). */
const MAX_STATE_TRIES = 4;

// @ts-ignore: decorator
@inline function keyPtr(key: Uint8Array | null): usize {
  return key == null ? 0 : key.dataStart;
}

// @ts-ignore: decorator
@inline function keyLen(key: Uint8Array | null): usize {
  return key == null ? 0 : <usize>key.byteLength;
}

/**
 * Reads the value stored under key in the function's keyed state (a null key
 * is the same as an empty one). Returns null when there is no value or the
 * call failed; stateStatus() tells which (ABSENT, NO_STORE or FAILED).
 *
 * The value is a view into a buffer the SDK reuses: it is valid only until
 * the next stateGet, and must be copied (`slice()`) to be kept. stateGet
 * does not allocate once its buffer has grown to the size of the values read.
 */
export function stateGet(key: Uint8Array | null): Uint8Array | null {
  for (let i = 0; i < MAX_STATE_TRIES; i++) {
    let cap = <usize>stateBuf.byteLength;
    let n = hostStateGet(keyPtr(key), keyLen(key), changetype<usize>(stateBuf), cap);
    if (n < 0) {
      lastStatus = n == -1 ? StateStatus.ABSENT : n == -2 ? StateStatus.NO_STORE : StateStatus.FAILED;
      return null;
    }
    if (<usize>n <= cap) {
      lastStatus = StateStatus.OK;
      pointView(stateView, stateBuf, changetype<usize>(stateBuf), n);
      return stateView;
    }
    // The value is larger than the buffer: nothing was copied. Grow and
    // ask again.
    stateBuf = new ArrayBuffer(n + (n >> 2));
  }
  lastStatus = StateStatus.FAILED;
  return null;
}

/** Returns the status of the last stateGet: OK (found), ABSENT, NO_STORE or FAILED. */
export function stateStatus(): StateStatus {
  return lastStatus;
}

/** Stores value under key, replacing any previous value; a null value is stored as an empty one. The host copies both during the call. Returns OK, NO_STORE or FAILED. */
export function statePut(key: Uint8Array | null, value: Uint8Array | null): StateStatus {
  return status(hostStatePut(keyPtr(key), keyLen(key), keyPtr(value), keyLen(value)));
}

/** Removes key; deleting an absent key is not an error. Returns OK, NO_STORE or FAILED. */
export function stateDelete(key: Uint8Array | null): StateStatus {
  return status(hostStateDelete(keyPtr(key), keyLen(key)));
}

/** The StateStatus of a host call's return code: 0 OK, -2 NO_STORE, anything else FAILED (also used by timers.ts). */
export function status(rc: i32): StateStatus {
  if (rc == 0) return StateStatus.OK;
  if (rc == -2) return StateStatus.NO_STORE;
  return StateStatus.FAILED;
}
