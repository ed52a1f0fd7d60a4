// Split is an Eddy process function (a flat map) that splits a record's
// value on white space (Unicode, as Go's strings.Fields) into one record per
// word, with the input's key and timestamp and no headers. An empty or blank
// value, or a null one, gives no records.
//
// The output records come from a pool and the output array is reused: the
// SDK encodes them before the next call. Each word is a subarray (a view,
// not a copy) of the input value.
//
// Build (from guests/assemblyscript; build.sh builds every guest):
//
//	../../sdk/assemblyscript/node_modules/.bin/asc split.ts -O3 --runtime minimal --noAssert --use abort=../../sdk/assemblyscript/assembly/abort/eddyAbort -o ../../testdata/assemblyscript/split.wasm

import * as eddy from "../../sdk/assemblyscript/assembly/index";
import { nextWord, wordEnd } from "./internal/words";
export * from "../../sdk/assemblyscript/assembly/exports";

// The output array and the records it holds, reused for every record.
const out: eddy.Record[] = [];
const pool: eddy.Record[] = [];

eddy.setName("split", "1.0.0");
eddy.flatMap(split);

function split(r: eddy.Record): eddy.Record[] {
  out.length = 0;
  let v = r.value;
  if (v == null) return out;
  let p = v.dataStart, n = <usize>v.byteLength;
  for (let i = nextWord(p, n, 0); i >= 0; i = nextWord(p, n, wordEnd)) {
    let k = out.length;
    if (k == pool.length) pool.push(new eddy.Record());
    let w = unchecked(pool[k]);
    w.key = r.key;
    w.value = v.subarray(<i32>i, <i32>wordEnd);
    w.timestamp = r.timestamp;
    w.headers = null;
    out.push(w);
  }
  return out;
}
