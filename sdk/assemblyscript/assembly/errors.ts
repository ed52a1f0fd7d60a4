// Per-record failures (ABI.md section 7).
//
// # Why failures are set, not returned
//
// AssemblyScript has no exceptions that can be caught (a throw aborts the
// whole Wasm call) and no tuples, so a handler cannot return "a value or an
// error" cheaply. A handler fails its record by calling reject, badInput,
// fail or failState, which note the failure for the SDK, and returning what
// they return: the SDK reads the note before it looks at the handler's
// result, which is then ignored.
//
//	if (value == null) return eddy.badInput<eddy.Record>("no value");

import { StateStatus } from "./host";

/** Error codes of ABI.md section 7. */
export namespace Code {
  /** Success. */
  export const OK = 0;
  /** The function refused the record. */
  export const REJECTED = 1;
  /** The record's payload could not be decoded by the function. */
  export const BAD_INPUT = 2;
  /** The function crashed on the record (an SDK that catches crashes reports it; AssemblyScript traps instead). */
  export const PANIC = 3;
  /** The module does not implement this kind. */
  export const UNSUPPORTED = 4;
  /** The guest could not decode the host's envelope. */
  export const BAD_ENVELOPE = 5;
  /** A keyed-state host call failed. */
  export const STATE = 6;
}

/** The reason of stateful handlers that run in a step without keyed state. */
export const NO_STATE_REASON = "eddy: no keyed state store (the step is not stateful)";

/** The reason of a record that failed because the host's state storage failed. */
export const STATE_FAILED_REASON = "eddy: keyed state storage failed";

/** The reason of a record that failed because the host refused a timer (setTimer returned FAILED). */
export const TIMER_REFUSED_REASON = "eddy: timer refused by the host";

// The failure noted for the current record; code 0 is none.
let failCode: i32 = 0;
let failReason: string = "";

/** Clears the failure note; the SDK calls it before every handler call. */
export function clearFailure(): void {
  failCode = 0;
}

/** Returns the noted failure's code, 0 if none. */
export function failureCode(): i32 {
  return failCode;
}

/** Returns the noted failure's reason. */
export function failureReason(): string {
  return failReason;
}

// @ts-ignore: decorator
@inline function zero<T>(): T {
  if (isReference<T>()) return changetype<T>(0);
  // @ts-ignore: a value type
  return <T>0;
}

/**
 * Fails the current record with code REJECTED (1): the function refused it.
 * The host sends the record to the dead-letter topic with reason. Returns a
 * zero value of T (null for references) for the handler to return, which
 * the SDK ignores:
 *
 *	if (isPoison(r)) return eddy.reject<eddy.Record>("poison record");
 */
export function reject<T>(reason: string): T {
  failCode = 1;
  failReason = reason;
  return zero<T>();
}

/**
 * Fails the current record with code BAD_INPUT (2): its payload could not be
 * decoded, as opposed to a record the function decoded and refused. Returns
 * a zero value of T for the handler to return (see reject).
 */
export function badInput<T>(reason: string = "bad input"): T {
  failCode = 2;
  failReason = reason;
  return zero<T>();
}

/**
 * Fails the current record with a function-defined code, which the host
 * carries to the dead-letter record. code must be in 64–255 (the user range
 * of ABI.md section 7); any other code is reported as REJECTED (1). An empty
 * reason becomes "error CODE". Returns a zero value of T for the handler to
 * return (see reject).
 *
 *	return eddy.fail<eddy.Record>(77, "unknown currency");
 */
export function fail<T>(code: i32, reason: string = ""): T {
  failCode = code >= 64 && code <= 255 ? code : 1;
  failReason = reason.length > 0 ? reason : "error " + code.toString();
  return zero<T>();
}

/**
 * Fails the current record because of a keyed-state call that returned
 * status: NO_STORE is REJECTED (the function was deployed in a step without
 * state), FAILED is STATE (6). Returns a zero value of T for the handler to
 * return (see reject).
 *
 *	let st = eddy.statePut(r.key, value);
 *	if (st != eddy.StateStatus.OK) return eddy.failState<eddy.Record>(st);
 */
export function failState<T>(status: StateStatus): T {
  if (status == StateStatus.NO_STORE) {
    failCode = Code.REJECTED;
    failReason = NO_STATE_REASON;
  } else {
    failCode = Code.STATE;
    failReason = STATE_FAILED_REASON;
  }
  return zero<T>();
}

/**
 * Fails the current record because setTimer returned status: NO_STORE is
 * REJECTED (the function was deployed in a step without state, so without
 * timers), FAILED is STATE (6) with the reason "eddy: timer refused by the
 * host" (when the host refused the timer for a limit it fails the call
 * whatever the function answers, and the record is dead-lettered with
 * cause timer_limit). Returns a zero value of T for the handler to return
 * (see reject). deleteTimer's status goes to failState, like statePut's.
 *
 *	let st = eddy.setTimer(r.key, eddy.TimeDomain.EVENT_TIME, r.timestamp + 1000);
 *	if (st != eddy.StateStatus.OK) return eddy.failTimer<bool>(st);
 */
export function failTimer<T>(status: StateStatus): T {
  if (status == StateStatus.NO_STORE) {
    failCode = Code.REJECTED;
    failReason = NO_STATE_REASON;
  } else {
    failCode = Code.STATE;
    failReason = TIMER_REFUSED_REASON;
  }
  return zero<T>();
}
