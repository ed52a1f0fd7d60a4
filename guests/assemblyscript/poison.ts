// Poison is an Eddy process function for dead-letter tests. It upper-cases
// every value (as Go's bytes.ToUpper: invalid UTF-8 becomes U+FFFD) except
// three:
//
//   - "poison" is rejected: code REJECTED, reason "poison record";
//   - "panic" throws, which aborts: AssemblyScript cannot catch it, so the
//     call traps and the host isolates the record (cause "trap");
//   - "code77" fails with the user code 77, reason "code 77 record".
//
// Build (from guests/assemblyscript; build.sh builds every guest):
//
//	../../sdk/assemblyscript/node_modules/.bin/asc poison.ts -O3 --runtime minimal --noAssert --use abort=../../sdk/assemblyscript/assembly/abort/eddyAbort -o ../../testdata/assemblyscript/poison.wasm

import * as eddy from "../../sdk/assemblyscript/assembly/index";
import { appendUpper, upperASCII } from "./internal/upper";
export * from "../../sdk/assemblyscript/assembly/exports";

const POISON = eddy.toBytes("poison");
const PANIC = eddy.toBytes("panic");
const CODE77 = eddy.toBytes("code77");

// The output value; reused for every record.
const buf = new eddy.ByteBuffer(256);

eddy.setName("poison", "1.0.0");
eddy.map(poison);

function equals(a: Uint8Array, b: Uint8Array): bool {
  return a.byteLength == b.byteLength && memory.compare(a.dataStart, b.dataStart, <usize>a.byteLength) == 0;
}

function poison(r: eddy.Record): eddy.Record {
  let v = r.value;
  if (v == null) return r;
  if (equals(v, POISON)) return eddy.reject<eddy.Record>("poison record");
  if (equals(v, PANIC)) throw new Error("panic record");
  if (equals(v, CODE77)) return eddy.fail<eddy.Record>(77, "code 77 record");
  let n = v.byteLength;
  let d = buf.reset().resize(n);
  if (!upperASCII(d.dataStart, v.dataStart, <usize>n)) {
    appendUpper(buf.reset(), v.dataStart, <usize>n, true);
    d = buf.view();
  }
  r.value = d;
  return r;
}
