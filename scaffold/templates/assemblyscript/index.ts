// {{.Name}} is an Eddy function: a map that upper-cases each record's value
// (ASCII letters; other bytes are kept as they are).
//
// Build: ./build.sh (writes {{.Name}}.wasm). Try it:
//
//	eddy test {{.Name}}.wasm --input sample.jsonl

import * as eddy from "./eddy-sdk/assembly";
export * from "./eddy-sdk/assembly/exports";

// The output value, reused for every record: the SDK copies a handler's
// result before it calls the handler again. Declare globals before the
// registration below: top-level code runs in order.
const out = new eddy.ByteBuffer();

eddy.setName("{{.Name}}", "0.1.0");
eddy.map(upper);

function upper(r: eddy.Record): eddy.Record {
  let v = r.value;
  if (v == null) return r; // a null value (a tombstone) stays null
  let n = v.length;
  let d = out.reset().resize(n);
  for (let i = 0; i < n; i++) {
    let c = unchecked(v[i]);
    unchecked((d[i] = c >= 0x61 && c <= 0x7a ? c - 0x20 : c));
  }
  r.value = d; // key, timestamp and headers stay those of the input
  return r;
}
