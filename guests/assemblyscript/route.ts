// Route is an Eddy process function (a map) that sends each record to a
// named output of its step by the first byte of its value: a value starting
// with '{' (a JSON object) to the output "objects", one starting with an
// ASCII digit to "numbers"; any other record, and a null or empty value,
// stays the step's own output. Records keep their key, value, timestamp and
// headers. It is the conformance reference "route" (ABI.md, "Named
// outputs").
//
// Build (from guests/assemblyscript; build.sh builds every guest):
//
//	../../sdk/assemblyscript/node_modules/.bin/asc route.ts -O3 --runtime minimal --noAssert --use abort=../../sdk/assemblyscript/assembly/abort/eddyAbort -o ../../testdata/assemblyscript/route.wasm

import * as eddy from "../../sdk/assemblyscript/assembly/index";
export * from "../../sdk/assemblyscript/assembly/exports";

eddy.setName("route", "1.0.0");
eddy.map(route);

function route(r: eddy.Record): eddy.Record {
  let v = r.value;
  if (v == null || v.length == 0) return r;
  let c = unchecked(v[0]);
  if (c == 0x7b) return r.toOutput("objects"); // '{'
  if (c >= 0x30 && c <= 0x39) return r.toOutput("numbers"); // '0'..'9'
  return r;
}
