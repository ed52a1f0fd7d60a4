// Prefix is a configured Eddy map function: it puts the value of its step's
// config entry "prefix" in front of each record's value (a null value
// becomes the prefix alone); without the entry (or with an empty one) it
// passes records unchanged. It reads the entry once per instance, on its
// first record.
//
// Build (from guests/assemblyscript; build.sh builds every guest):
//
//	../../sdk/assemblyscript/node_modules/.bin/asc prefix.ts -O3 --runtime minimal --noAssert --use abort=../../sdk/assemblyscript/assembly/abort/eddyAbort -o ../../testdata/assemblyscript/prefix.wasm

import * as eddy from "../../sdk/assemblyscript/assembly/index";
export * from "../../sdk/assemblyscript/assembly/exports";

// The entry "prefix" (empty without it), once read: config returns a copy
// the function keeps.
let prefix = new Uint8Array(0);
let read = false;
// The output value; reused for every record.
const buf = new eddy.ByteBuffer(256);

// Handlers after the globals they use: top-level code runs in order.
eddy.setName("prefix", "1.0.0");
eddy.map(add);

function add(r: eddy.Record): eddy.Record {
  if (!read) {
    let p = eddy.config("prefix");
    if (p != null) prefix = p;
    read = true;
  }
  if (prefix.byteLength == 0) return r;
  r.value = buf.reset().append(prefix).append(r.value).view();
  return r;
}
