// Timers (ABI.md section 3, "Timers"; an addition to ABI v1). A function in
// a step with keyed state (a map, filter or flatMap step with state: true)
// may set timers for a key: at an event time, which fires when the step's
// watermark reaches it, or at a processing time, which fires when the
// node's clock does. A timer that fires is handed to the handler registered
// with onTimer (kind "timer"), which may read and write keyed state, set and
// delete timers, and return records. Timers are kept with the step's state:
// they survive restarts and fire once.
//
// The host functions are imported from module "eddy" like those of host.ts:
// AssemblyScript emits an import only if it is called, so a module that
// never sets, deletes or reads a timer imports none of them.

import { StateStatus, status } from "./host";

// @ts-ignore: decorator
@external("eddy", "timer_set")
declare function hostTimerSet(kptr: usize, klen: usize, domain: i32, at: i64): i32;

// @ts-ignore: decorator
@external("eddy", "timer_delete")
declare function hostTimerDelete(kptr: usize, klen: usize, domain: i32, at: i64): i32;

// @ts-ignore: decorator
@external("eddy", "time_now")
declare function hostTimeNow(domain: i32): i64;

/** The clock a timer is set on. */
export enum TimeDomain {
  /** Event time: the timer fires when the step's watermark reaches its time. */
  EVENT_TIME = 0,
  /** Processing time: the timer fires when the node's clock reaches its time. */
  PROCESSING_TIME = 1,
}

/** What currentTime returns when the time is not known: i64's minimum. */
export const NO_TIME: i64 = i64.MIN_VALUE;

/**
 * A timer that fired: the key it was set for, its time in milliseconds since
 * the Unix epoch (UTC) and its domain.
 *
 * The SDK hands the handler one Timer object, re-pointed at each timer, and
 * its key is a view into the host's input buffer: both are valid only until
 * the handler returns (keep `timer.clone()` or `key.slice()`). The key is
 * the bytes the function gave setTimer (empty for a null key): never null.
 */
export class Timer {
  constructor(
    /** The key the timer was set for. */
    public key: Uint8Array = new Uint8Array(0),
    /** The timer's time, in ms since the Unix epoch, UTC. */
    public time: i64 = 0,
    /** The timer's domain. */
    public domain: TimeDomain = TimeDomain.EVENT_TIME,
  ) {}

  /** Returns a copy that owns its key's bytes. */
  clone(): Timer {
    return new Timer(this.key.slice(), this.time, this.domain);
  }
}

// @ts-ignore: decorator
@inline function keyPtr(key: Uint8Array | null): usize {
  return key == null ? 0 : key.dataStart;
}

// @ts-ignore: decorator
@inline function keyLen(key: Uint8Array | null): usize {
  return key == null ? 0 : <usize>key.byteLength;
}

/**
 * Sets a timer for key (a null key is an empty one) at time `at` (ms since
 * the Unix epoch, UTC) in domain (host import eddy.timer_set). Setting a
 * timer that exists keeps one: a key, a domain and a time are one timer. A
 * timer at or before the step's current time fires at the next firing of
 * the step's timers.
 *
 * Returns OK; NO_STORE when the step has no timers (it has no keyed state,
 * or `eddy test` runs without --state); FAILED when the host refused the
 * timer: a key over 16 KiB or past the pipeline's timer limits (the host
 * then fails the call whatever the function answers, and the record that
 * set the timer goes to the dead-letter topic), an unknown domain, or a
 * storage failure. `failTimer` turns the status into the record's failure:
 * REJECTED for NO_STORE, STATE for FAILED.
 */
export function setTimer(key: Uint8Array | null, domain: TimeDomain, at: i64): StateStatus {
  return status(hostTimerSet(keyPtr(key), keyLen(key), <i32>domain, at));
}

/**
 * Deletes the timer for key at time `at` in domain (host import
 * eddy.timer_delete); deleting one that does not exist is not an error.
 * Returns OK, NO_STORE (the step has no timers) or FAILED (an unknown
 * domain, or a storage failure), as statePut does: `failState` turns it
 * into the record's failure.
 */
export function deleteTimer(key: Uint8Array | null, domain: TimeDomain, at: i64): StateStatus {
  return status(hostTimerDelete(keyPtr(key), keyLen(key), <i32>domain, at));
}

/**
 * Returns the step's current time in domain, in ms since the Unix epoch
 * (host import eddy.time_now): its watermark (EVENT_TIME) or the node's
 * clock (PROCESSING_TIME). It is NO_TIME (i64's minimum) when the time is
 * not known: no watermark yet, a step without timers, or an unknown domain.
 */
export function currentTime(domain: TimeDomain): i64 {
  return hostTimeNow(<i32>domain);
}
