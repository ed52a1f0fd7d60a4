// Wordkey implements two Eddy kinds in one module:
//
//   - key: the record's new key is the first white-space-separated word of
//     its value (a null key if the value holds no word);
//   - timestamp: the event time is the top-level integer member "ts" of the
//     value, a JSON object, in milliseconds since the Unix epoch. A value
//     that is not a JSON object, has no "ts", or whose "ts" is not an
//     integer (1.5, 1e3, "17", out of the int64 range) fails with BAD_INPUT.
//
// Build (from guests/assemblyscript; build.sh builds every guest):
//
//	../../sdk/assemblyscript/node_modules/.bin/asc wordkey.ts -O3 --runtime minimal --noAssert --use abort=../../sdk/assemblyscript/assembly/abort/eddyAbort -o ../../testdata/assemblyscript/wordkey.wasm

import * as eddy from "../../sdk/assemblyscript/assembly/index";
import * as json from "./internal/jsonscan";
import { parseInt64, parsedInt } from "./internal/strconv";
import { nextWord, wordEnd } from "./internal/words";
export * from "../../sdk/assemblyscript/assembly/exports";

const TS = eddy.toBytes("ts");

// The new key; reused for every record (the SDK copies it).
const keyBuf = new eddy.ByteBuffer(64);

eddy.setName("wordkey", "1.0.0");
eddy.keyBy(firstWord);
eddy.timestamp(eventTime);

function firstWord(r: eddy.Record): Uint8Array | null {
  let v = r.value;
  if (v == null) return null;
  let i = nextWord(v.dataStart, <usize>v.byteLength, 0);
  if (i < 0) return null;
  return keyBuf.reset().appendRaw(v.dataStart + <usize>i, <i32>(wordEnd - <usize>i)).view();
}

function eventTime(r: eddy.Record): i64 {
  let v = r.value;
  let p: usize = v == null ? 0 : v.dataStart;
  let n: usize = v == null ? 0 : <usize>v.byteLength;
  switch (json.field(p, n, TS)) {
    case json.Field.SYNTAX: return eddy.badInput<i64>(json.ERR_SYNTAX);
    case json.Field.NOT_OBJECT: return eddy.badInput<i64>(json.ERR_NOT_OBJECT);
    case json.Field.MISSING: return eddy.badInput<i64>('no top-level "ts" member');
  }
  if (!parseInt64(json.valueStart, json.valueEnd - json.valueStart)) return eddy.badInput<i64>('"ts" is not an integer');
  return parsedInt;
}
