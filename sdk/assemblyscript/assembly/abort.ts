// The abort handler. AssemblyScript calls abort for a throw, a failed
// assertion and a runtime error (an index out of range, a null dereference).
// Guests are built with `--use abort=<sdk>/assembly/abort/eddyAbort`, which
// routes those calls here instead of to an `env.abort` import the host does
// not provide.
//
// AssemblyScript cannot catch a crash, so this reports it and traps: the host
// discards the instance and retries the batch in halves until the record
// that crashes is isolated (ABI.md section 8); it fails with cause "trap".
//
// The message is built in a static buffer: abort may be called because
// memory ran out, so it must not allocate.

import { Level, logRaw, reportErrorRaw } from "./host";

// abort may run before any global is initialised (the runtime itself calls
// it), so this file uses no globals: only constants and static memory.

// @ts-ignore: decorator
@inline const MSG_CAP: usize = 512;

// @ts-ignore: decorator
@inline const PANIC = 3; // Code.PANIC

/** Appends s to the message of n bytes at msg and returns the new length. */
function put(msg: usize, n: usize, s: string | null): usize {
  if (s == null) return n;
  let k = <usize>String.UTF8.byteLength(s);
  if (k > MSG_CAP - n) return n; // rather drop than split a character
  String.UTF8.encodeUnsafe(changetype<usize>(s), s.length, msg + n);
  return n + k;
}

/** Appends v in decimal to the message of n bytes at msg and returns the new length. */
function putUint(msg: usize, n: usize, v: u32): usize {
  let k: usize = 1; // the number of digits
  for (let t = v; t >= 10; t /= 10) k++;
  if (k > MSG_CAP - n) return n;
  let p = msg + n + k;
  do {
    store<u8>(--p, <u8>(0x30 + v % 10));
    v /= 10;
  } while (v != 0);
  return n + k;
}

/**
 * Reports an abort through the host's log (level error) and error functions,
 * as "abort: MESSAGE (FILE:LINE:COLUMN)", and traps.
 */
export function eddyAbort(message: string | null, fileName: string | null, line: u32, column: u32): void {
  let msg = memory.data(<i32>MSG_CAP);
  let n = put(msg, 0, "abort: ");
  n = put(msg, n, message);
  if (fileName != null) {
    n = put(msg, n, " (");
    n = put(msg, n, fileName);
    n = put(msg, n, ":");
    n = putUint(msg, n, line);
    n = put(msg, n, ":");
    n = putUint(msg, n, column);
    n = put(msg, n, ")");
  }
  logRaw(Level.ERROR, msg, n);
  reportErrorRaw(PANIC, msg, n);
  unreachable();
}
