// Passthrough is an Eddy process function that returns every record
// unchanged: the baseline for benchmarks of the host and the SDK.
//
// Build (from guests/assemblyscript; build.sh builds every guest):
//
//	../../sdk/assemblyscript/node_modules/.bin/asc passthrough.ts -O3 --runtime minimal --noAssert --use abort=../../sdk/assemblyscript/assembly/abort/eddyAbort -o ../../testdata/assemblyscript/passthrough.wasm

import * as eddy from "../../sdk/assemblyscript/assembly/index";
export * from "../../sdk/assemblyscript/assembly/exports";

eddy.setName("passthrough", "1.0.0");
eddy.map(passthrough);

function passthrough(r: eddy.Record): eddy.Record {
  return r;
}
