// Package @eddy-streams/sdk provides the AssemblyScript guest SDK for Eddy:
// it turns AssemblyScript functions into an Eddy function, a WebAssembly
// module that speaks the guest ABI (abi/ABI.md in the Eddy repository).
//
// # Usage
//
// A guest's entry file registers its handlers in its top-level code, which
// runs when the host instantiates the module, and re-exports the SDK's ABI
// exports:
//
//	import * as eddy from "./eddy-sdk/assembly";
//	export * from "./eddy-sdk/assembly/exports";
//
//	eddy.setName("upper", "1.0.0");
//	eddy.map((r: eddy.Record): eddy.Record => {
//	  // ... build the new value in a buffer you reuse ...
//	  r.value = upperCased;
//	  return r;
//	});
//
// Build it with the minimal runtime, routing abort into the SDK:
//
//	asc fn.ts -O3 --runtime minimal --noAssert --use abort=eddy-sdk/assembly/abort/eddyAbort -o fn.wasm
//
// # Kinds
//
// A module implements one handler of each kind it wants: one process handler
// (map, filter or flatMap), an aggregate, a join, a keyBy, a timestamp
// extractor and a timer handler (onTimer). Registering a kind twice aborts:
// it is a programming error. The manifest lists the registered kinds; the
// module exports every kind, and the unregistered ones answer UNSUPPORTED.
//
// # Timers
//
// A process handler in a step with keyed state may set timers for a key
// (setTimer, deleteTimer; currentTime reads the step's watermark or clock);
// a timer that fires is handed to the onTimer handler, which returns
// records as a flatMap does (timers.ts).
//
// # Configuration
//
// config(name) returns the value of an entry of the step's configuration
// (config: in the pipeline file), or null without it; configText(name)
// decodes it as text (config.ts). Entries do not change while an instance
// lives: read one once and keep it.
//
// # Errors
//
// A handler fails one record, never the batch, by returning what reject,
// badInput, fail or failState return (errors.ts):
//
//   - reject(reason): code REJECTED; the host sends the record to the
//     dead-letter topic with the reason;
//   - badInput(reason): the payload could not be decoded (BAD_INPUT);
//   - fail(code, reason): a function-defined code, 64 to 255;
//   - failState(status): a keyed-state call (or deleteTimer) failed;
//   - failTimer(status): setTimer failed.
//
// AssemblyScript cannot catch a crash: a throw, abort or runtime error traps
// the whole call, and the host isolates the record that caused it by
// splitting the batch; it fails with cause "trap".
//
// # Memory and speed
//
// Records are handed to handlers as views into the host's input buffer,
// valid during the call (see Record); clone what you keep. The SDK decodes
// and encodes without allocating per record and reuses one output buffer, so
// a handler that does not allocate makes the whole path allocation-free.
// Whatever a handler allocates and does not keep is freed between calls.

export { Record, Header, HEADER_OUTPUT, cloneBytes } from "./record";
export { ByteBuffer } from "./buffer";
export {
  Aggregator,
  map,
  filter,
  flatMap,
  aggregate,
  join,
  keyBy,
  timestamp,
  onTimer,
  setName,
  MapFn,
  FilterFn,
  FlatMapFn,
  JoinFn,
  KeyFn,
  TimestampFn,
  TimerFn,
  InitFn,
  AddFn,
  MergeFn,
  ResultFn,
} from "./register";
export { Code, reject, badInput, fail, failState, failTimer } from "./errors";
export { Level, log, count, StateStatus, stateGet, stateStatus, statePut, stateDelete } from "./host";
export { TimeDomain, Timer, NO_TIME, setTimer, deleteTimer, currentTime } from "./timers";
export { config, configText } from "./config";
export { SDK_VERSION } from "./dispatch";

/** Returns the UTF-8 bytes of s, in a new array. */
export function toBytes(s: string): Uint8Array {
  return Uint8Array.wrap(String.UTF8.encode(s));
}

/** Decodes b as UTF-8 into a new string; null gives "". */
export function toText(b: Uint8Array | null): string {
  if (b == null) return "";
  return String.UTF8.decodeUnsafe(b.dataStart, <usize>b.byteLength);
}
