// Upper is an Eddy process function that upper-cases record values.
//
// ASCII values (the common case) are upper-cased eight bytes at a time into
// one buffer reused for every record (the SDK copies each result before the
// next call), with no allocation. A value with non-ASCII bytes takes a slow
// path that maps every rune as Go's unicode.ToUpper does ("straße" →
// "STRAßE": the simple case mapping has no upper case for ß); invalid UTF-8
// bytes are kept as they are. A null value stays null.
//
// Build (from guests/assemblyscript; build.sh builds every guest):
//
//	../../sdk/assemblyscript/node_modules/.bin/asc upper.ts -O3 --runtime minimal --noAssert --use abort=../../sdk/assemblyscript/assembly/abort/eddyAbort -o ../../testdata/assemblyscript/upper.wasm

import * as eddy from "../../sdk/assemblyscript/assembly/index";
import { appendUpper, upperASCII } from "./internal/upper";
export * from "../../sdk/assemblyscript/assembly/exports";

// The output value; reused for every record.
const buf = new eddy.ByteBuffer(256);

eddy.setName("upper", "1.0.0");
eddy.map(upper);

function upper(r: eddy.Record): eddy.Record {
  let v = r.value;
  if (v == null) return r;
  let n = v.byteLength;
  let d = buf.reset().resize(n);
  if (!upperASCII(d.dataStart, v.dataStart, <usize>n)) {
    appendUpper(buf.reset(), v.dataStart, <usize>n, false);
    d = buf.view();
  }
  r.value = d;
  return r;
}
