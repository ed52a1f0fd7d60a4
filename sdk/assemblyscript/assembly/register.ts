// The registry of handlers. It is filled by the register functions from the
// guest's top-level code, which runs when the host instantiates the module
// (the Wasm start function), before the host calls any export; it is only
// read afterwards. An instance is never called from two threads at once.

import { Record } from "./record";
import { Timer } from "./timers";

/** A map handler: returns the single output record (see map). */
export type MapFn = (r: Record) => Record;
/** A filter handler: true keeps the record (see filter). */
export type FilterFn = (r: Record) => bool;
/** A flat-map handler: returns zero or more output records (see flatMap). */
export type FlatMapFn = (r: Record) => Record[];
/** A join handler (see join). */
export type JoinFn = (key: Uint8Array | null, left: Uint8Array | null, right: Uint8Array | null) => Uint8Array | null;
/** A key extractor (see keyBy). */
export type KeyFn = (r: Record) => Uint8Array | null;
/** An event-time extractor (see timestamp). */
export type TimestampFn = (r: Record) => i64;
/** A timer handler: returns zero or more output records (see onTimer). */
export type TimerFn = (t: Timer) => Record[];

/** Aggregator.init: returns the initial accumulator. */
export type InitFn = () => Uint8Array;
/** Aggregator.add: folds a record into an accumulator. */
export type AddFn = (acc: Uint8Array, r: Record) => Uint8Array;
/** Aggregator.merge: merges two accumulators. */
export type MergeFn = (key: Uint8Array | null, a: Uint8Array, b: Uint8Array) => Uint8Array;
/** Aggregator.result: turns an accumulator into the output value. */
export type ResultFn = (key: Uint8Array | null, acc: Uint8Array) => Uint8Array | null;

/**
 * An aggregate function (kind "aggregate"): the host keeps one accumulator
 * per key and window and folds records into it.
 *
 * Accumulators are bytes in the function's own encoding; the host stores
 * them between calls and never looks inside. A new version of a function
 * must read the accumulators of the version it replaces.
 *
 *	eddy.aggregate({ init: initial, add: add, merge: merge, result: result });
 */
export class Aggregator {
  /**
   * Folds one record into acc and returns the new accumulator. acc is a
   * scratch copy owned by the SDK: add may change it in place and return
   * it, or return another array. If add fails the record (reject, badInput,
   * fail) the record is reported as not folded and the accumulator stays
   * the one before it. Required.
   */
  add: AddFn | null = null;

  /**
   * Returns the initial accumulator. Its result is copied before add sees
   * it, so it may return a shared array. A null init, or a null result, is
   * an empty accumulator.
   */
  init: InitFn | null = null;

  /**
   * Combines the accumulators of two session windows of the same key into
   * one; it must be associative. a and b are read-only views, valid during
   * the call. A null merge answers UNSUPPORTED, which fails session windows.
   */
  merge: MergeFn | null = null;

  /**
   * Turns an accumulator into the output value; a null result emits
   * nothing. acc is a read-only view, valid during the call. A null result
   * function emits the accumulator itself.
   */
  result: ResultFn | null = null;
}

/** The registered handlers; the SDK's dispatch reads them. */
export namespace reg {
  export let mapFn: MapFn | null = null;
  export let filterFn: FilterFn | null = null;
  export let flatMapFn: FlatMapFn | null = null;
  export let agg: Aggregator | null = null;
  export let joinFn: JoinFn | null = null;
  export let keyFn: KeyFn | null = null;
  export let timeFn: TimestampFn | null = null;
  export let timerFn: TimerFn | null = null;
  export let name: string = "";
  export let version: string = "";

  export function hasProcess(): bool {
    return mapFn != null || filterFn != null || flatMapFn != null;
  }
}

function taken(kind: string, isTaken: bool): void {
  if (isTaken) throw new Error("eddy: a " + kind + " handler is already registered; a module implements each kind once");
}

/**
 * Registers fn as the module's process function, called once per record;
 * the record it returns is the single output record.
 *
 * The returned record is encoded exactly as it is: its key, value,
 * timestamp and headers. Returning the input record with a new value keeps
 * the key, timestamp and headers. fn's result is encoded before fn is called
 * again, so fn may build the output value in one buffer it reuses for every
 * record.
 *
 * map, filter and flatMap all register the kind "process"; registering a
 * second process handler aborts (a programming error). Call it from the
 * module's top-level code.
 */
export function map(fn: MapFn): void {
  taken("process", reg.hasProcess());
  reg.mapFn = fn;
}

/**
 * Registers fn as the module's process function: a record for which fn
 * returns true is passed on unchanged (key, value, timestamp and headers,
 * even if fn changed the record object), the others are dropped. Only one
 * process handler may be registered (see map).
 */
export function filter(fn: FilterFn): void {
  taken("process", reg.hasProcess());
  reg.filterFn = fn;
}

/**
 * Registers fn as the module's process function: each input record becomes
 * the records fn returns, zero or more. The array and its records are
 * encoded before fn is called again, so fn may reuse them. Only one process
 * handler may be registered (see map).
 */
export function flatMap(fn: FlatMapFn): void {
  taken("process", reg.hasProcess());
  reg.flatMapFn = fn;
}

/**
 * Registers agg as the module's aggregate function (kind "aggregate"). It
 * aborts if agg.add is null or an aggregate is already registered.
 */
export function aggregate(agg: Aggregator): void {
  taken("aggregate", reg.agg != null);
  if (agg.add == null) throw new Error("eddy: an Aggregator needs an add function");
  reg.agg = agg;
}

/**
 * Registers fn as the module's join function (kind "join"): it combines the
 * left and right values of a key into the joined value. A missing side is
 * null; a null result emits nothing. key, left and right are read-only
 * views, valid during the call.
 */
export function join(fn: JoinFn): void {
  taken("join", reg.joinFn != null);
  reg.joinFn = fn;
}

/**
 * Registers fn as the module's key extractor (kind "key"): it returns the
 * record's new key; null is a null key. The result may be a view into the
 * record, or a buffer fn reuses: it is copied before fn is called again.
 */
export function keyBy(fn: KeyFn): void {
  taken("key", reg.keyFn != null);
  reg.keyFn = fn;
}

/**
 * Registers fn as the module's event-time extractor (kind "timestamp"): it
 * returns the record's event time in milliseconds since the Unix epoch, UTC.
 */
export function timestamp(fn: TimestampFn): void {
  taken("timestamp", reg.timeFn != null);
  reg.timeFn = fn;
}

/**
 * Registers fn as the module's timer function (kind "timer"), called for
 * each timer of the step that fires (see setTimer); the records it returns
 * are outputs of the step, zero or more, as those of a flatMap. An output
 * record whose timestamp is 0 (a new Record's) or the timer's time gets the
 * timer's time. The array and its records are encoded before fn is called
 * again, so fn may reuse them. A failure (reject, failState, ...) sends the
 * timer to the dead-letter topic; it does not fire again.
 *
 * The timer is a view valid during the call (see Timer). Register it beside
 * the process handler (map, filter or flatMap) that sets the timers, in the
 * module's top-level code; registering a second timer handler aborts.
 */
export function onTimer(fn: TimerFn): void {
  taken("timer", reg.timerFn != null);
  reg.timerFn = fn;
}

/**
 * Sets the function's name and version, which the manifest reports to the
 * host (for logs, metrics and `eddy inspect`). Both are optional.
 */
export function setName(name: string, version: string = ""): void {
  reg.name = name;
  reg.version = version;
}
