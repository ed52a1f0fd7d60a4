// Configuration (ABI.md section 3, "Configuration"; an addition to ABI v1).
// A step of the pipeline file may give its function configuration entries
// (config: in the pipeline file): values written in the file, or secrets
// the node reads from its environment or files when it starts. An entry has
// a name (UTF-8, 1 to 256 bytes) and a value (bytes, at most 64 KiB). Any
// handler of any kind may read them, at any time, and top-level code too.
//
// The entries do not change while an instance lives (a node started with
// another configuration makes new instances), so a function may read an
// entry once and keep it. The host never logs a value; a function that logs
// a secret shows it.
//
// The host function is imported from module "eddy" like those of host.ts:
// AssemblyScript emits an import only if it is called, so a module that
// never reads its configuration does not import config_get.

// @ts-ignore: decorator
@external("eddy", "config_get")
declare function hostConfigGet(nptr: usize, nlen: usize, vptr: usize, vcap: usize): i32;

/** The most tries of config's grow-and-retry loop (the value may change size between tries only if the host misbehaves). */
const MAX_CONFIG_TRIES = 4;

/**
 * Returns the value of the step's config entry name (host import
 * eddy.config_get), or null when the step has no entry of that name (or no
 * configuration). An entry with an empty value is an empty array, not null.
 *
 * The value is a new array that the function owns and may keep (in a
 * global, say): the SDK does not reuse it. Reading an entry allocates, so
 * read it once rather than per record.
 *
 * ```ts
 * let url = eddy.config("url"); // Uint8Array | null
 * ```
 */
export function config(name: string): Uint8Array | null {
  let n = String.UTF8.encode(name);
  let buf = new ArrayBuffer(256);
  for (let i = 0; i < MAX_CONFIG_TRIES; i++) {
    let cap = <usize>buf.byteLength;
    let len = hostConfigGet(changetype<usize>(n), <usize>n.byteLength, changetype<usize>(buf), cap);
    if (len < 0) return null;
    if (<usize>len <= cap) return Uint8Array.wrap(buf, 0, len);
    // The value is larger than the buffer: nothing was copied. Grow and
    // ask again.
    buf = new ArrayBuffer(len);
  }
  return null;
}

/**
 * Returns the value of the step's config entry name decoded as UTF-8, as
 * toText decodes (for a value that is text), or null when the step has no
 * such entry; see config.
 */
export function configText(name: string): string | null {
  let v = config(name);
  if (v == null) return null;
  return String.UTF8.decodeUnsafe(v.dataStart, <usize>v.byteLength);
}
