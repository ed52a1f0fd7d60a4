// Reusable Uint8Array views.
//
// # Why views are re-pointed
//
// Handing a handler a fresh Uint8Array (`buffer.subarray(...)`) for every
// key, value and header would allocate three or more objects per record. The
// SDK instead keeps a few Uint8Array objects and points them at the bytes of
// the current record: the object's buffer, start and length are written in
// place. That is why input views are valid only until the handler returns.

/** Returns a new empty Uint8Array for the SDK to re-point. */
export function newView(): Uint8Array {
  return new Uint8Array(0);
}

/** Points view at the len bytes at ptr, which lie inside buf (which keeps them alive). */
// @ts-ignore: decorator
@inline export function pointView(view: Uint8Array, buf: ArrayBuffer, ptr: usize, len: i32): void {
  let v = changetype<usize>(view);
  store<usize>(v, changetype<usize>(buf), offsetof<Uint8Array>("buffer"));
  __link(v, changetype<usize>(buf), false); // the write barrier of the incremental runtime; a no-op in the others
  store<usize>(v, ptr, offsetof<Uint8Array>("dataStart"));
  store<i32>(v, len, offsetof<Uint8Array>("byteLength"));
}
