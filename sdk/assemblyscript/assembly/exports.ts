// The exports of ABI.md section 2. A guest's entry file re-exports them:
//
//	export * from "./eddy-sdk/assembly/exports";
//
// Every kind is exported; the manifest names only the registered ones, and
// the others answer UNSUPPORTED. AssemblyScript exports the memory itself,
// and runs the guest's top-level code (where it registers its handlers) in
// the module's start function, before the host calls any export.
//
// Each call starts by freeing what handlers allocated in earlier calls
// (gc.ts).

import * as d from "./dispatch";
import { Code } from "./errors";
import { collect } from "./gc";
import "./abort"; // loaded for --use abort=.../abort/eddyAbort

/** The version marker of ABI v1; never called. */
export function eddy_abi_v1(): void {}

/** Returns a buffer of at least size bytes for the host's next input envelope, or 0. */
export function eddy_alloc(size: i32): usize {
  return d.alloc(size);
}

/** Returns the manifest (ABI.md section 4). */
export function eddy_manifest(): i64 {
  return d.manifest();
}

/** Frees earlier calls' garbage and checks that the envelope lies in the eddy_alloc region. */
// @ts-ignore: decorator
@inline function enter(name: string, ptr: usize, len: i32): bool {
  collect();
  if (d.inputOK(ptr, len)) return true;
  d.callFailure(Code.BAD_ENVELOPE, name + ": input is not inside the eddy_alloc region");
  return false;
}

/** Map, filter, flat-map: [Record × N] → [Result × N]. */
export function eddy_process(ptr: usize, len: i32): i64 {
  if (!enter("eddy_process", ptr, len)) return -Code.BAD_ENVELOPE;
  return d.process(ptr, len);
}

/** The initial accumulator. */
export function eddy_agg_init(ptr: usize, len: i32): i64 {
  collect();
  return d.aggInit();
}

/** Folds records into accumulators. */
export function eddy_agg_add(ptr: usize, len: i32): i64 {
  if (!enter("eddy_agg_add", ptr, len)) return -Code.BAD_ENVELOPE;
  return d.aggAdd(ptr, len);
}

/** Merges two accumulators (session windows). */
export function eddy_agg_merge(ptr: usize, len: i32): i64 {
  if (!enter("eddy_agg_merge", ptr, len)) return -Code.BAD_ENVELOPE;
  return d.aggMerge(ptr, len);
}

/** Turns accumulators into output values. */
export function eddy_agg_result(ptr: usize, len: i32): i64 {
  if (!enter("eddy_agg_result", ptr, len)) return -Code.BAD_ENVELOPE;
  return d.aggResult(ptr, len);
}

/** Combines left and right values. */
export function eddy_join(ptr: usize, len: i32): i64 {
  if (!enter("eddy_join", ptr, len)) return -Code.BAD_ENVELOPE;
  return d.join(ptr, len);
}

/** Key extractor. */
export function eddy_key(ptr: usize, len: i32): i64 {
  if (!enter("eddy_key", ptr, len)) return -Code.BAD_ENVELOPE;
  return d.key(ptr, len);
}

/** Event-time extractor. */
export function eddy_timestamp(ptr: usize, len: i32): i64 {
  if (!enter("eddy_timestamp", ptr, len)) return -Code.BAD_ENVELOPE;
  return d.timestamp(ptr, len);
}

/** Timers that fired: [Timer × N] → [Result × N]. */
export function eddy_timer(ptr: usize, len: i32): i64 {
  if (!enter("eddy_timer", ptr, len)) return -Code.BAD_ENVELOPE;
  return d.timers(ptr, len);
}
