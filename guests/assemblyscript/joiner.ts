// Joiner is an Eddy join function: it combines the left and right values of
// a key, which must be JSON, into {"left":L,"right":R}, with the values
// inserted as they are and null for a missing side. A side that is present
// but not valid JSON (an empty value included) fails the pair with
// BAD_INPUT; when both sides are missing nothing is emitted.
//
// Build (from guests/assemblyscript; build.sh builds every guest):
//
//	../../sdk/assemblyscript/node_modules/.bin/asc joiner.ts -O3 --runtime minimal --noAssert --use abort=../../sdk/assemblyscript/assembly/abort/eddyAbort -o ../../testdata/assemblyscript/joiner.wasm

import * as eddy from "../../sdk/assemblyscript/assembly/index";
import * as json from "./internal/jsonscan";
export * from "../../sdk/assemblyscript/assembly/exports";

// The joined value; the SDK copies it before the next call.
const buf = new eddy.ByteBuffer(256);

eddy.setName("joiner", "1.0.0");
eddy.join(join);

function validJSON(v: Uint8Array): bool {
  return json.valid(v.dataStart, <usize>v.byteLength);
}

function join(key: Uint8Array | null, left: Uint8Array | null, right: Uint8Array | null): Uint8Array | null {
  if (left == null && right == null) return null;
  if (left != null && !validJSON(left)) return eddy.badInput<Uint8Array | null>("left value is not valid JSON");
  if (right != null && !validJSON(right)) return eddy.badInput<Uint8Array | null>("right value is not valid JSON");
  buf.reset().appendString('{"left":');
  appendRaw(left);
  buf.appendString(',"right":');
  appendRaw(right);
  return buf.push(0x7d).view(); // '}'
}

function appendRaw(v: Uint8Array | null): void {
  if (v == null) buf.appendString("null");
  else buf.append(v);
}
