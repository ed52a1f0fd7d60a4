// Freeing what handlers allocated, between calls.
//
// # Why the SDK collects, and when
//
// Guests are built with the minimal runtime (--runtime minimal): a TLSF
// allocator and a mark-and-sweep collector that runs only when asked, and
// only where no reference is held on the Wasm stack alone. The start of an
// export is such a place: every object a guest keeps is reachable from a
// global. So each export starts with collect().
//
// A collection visits every live object, and under the Eddy host each loop
// iteration costs a check for the call's deadline, so a collection of a
// small guest's few dozen live objects costs some microseconds: nothing in a
// batch of a thousand records, a lot in a batch of one. collect() therefore
// collects only if something was allocated since the last collection. It
// knows by a sentinel: right after collecting it allocates a small object,
// which the runtime links last into its list of objects (each object's
// header points to the next); if the sentinel is still last at the next
// call, nothing was allocated. The list's head is static data, below
// __heap_base, so "still last" is "the sentinel's next object lies below
// __heap_base". A guest that allocates nothing per call (the SDK itself
// allocates nothing per record) never pays for collections; one that does
// pays one collection per call, and its memory stays bounded.
//
// The stub runtime frees nothing (a guest built with it must not allocate
// per call); the incremental runtime collects by itself as it allocates.
//
// This reads the object header of AssemblyScript 0.28's runtime (rt/common
// OBJECT: the block, then the next-object pointer with two color bits); the
// compiler is pinned by package-lock.json, and test/sdk.test.mjs checks that
// memory stays bounded.

import { OBJECT, TOTAL_OVERHEAD } from "rt/common";

// The object allocated right after the last collection.
let sentinel: ArrayBuffer | null = null;

/** Frees the garbage of the previous calls, if there can be any. Call it only from the start of an export. */
export function collect(): void {
  if (ASC_RUNTIME != 1) return; // only the minimal runtime needs it (Runtime.Minimal)
  let s = sentinel;
  if (s != null) {
    let header = changetype<usize>(s) - TOTAL_OVERHEAD;
    let next = load<usize>(header + offsetof<OBJECT>("gcInfo")) & ~(<usize>3);
    if (next < __heap_base) return; // nothing was allocated since
  }
  __collect();
  sentinel = new ArrayBuffer(0);
}
