// Tests of the SDK's dispatch: test guests (test/fixtures) are compiled with
// asc and run in node's WebAssembly engine, with the host functions stubbed
// (harness.mjs), and their answers are checked envelope by envelope against
// ABI.md. Run with `npm test` in sdk/assemblyscript.

import { test } from "node:test";
import assert from "node:assert/strict";
import { instantiate, Host } from "./harness.mjs";
import { encode, decode, Raw, b, t } from "./msgpack.mjs";

const OK = 0, REJECTED = 1, BAD_INPUT = 2, UNSUPPORTED = 4, BAD_ENVELOPE = 5, STATE = 6;

/** A record as the host sends it. */
function rec(key, value, ts = 1000, headers = null) {
  return [key === null ? null : b(key), value === null ? null : b(value), ts, headers];
}

/** The records of a successful process Result, as [key, value, ts, headers] with text. */
function outRecords(result) {
  assert.equal(result[0], OK, `result failed: ${JSON.stringify(result)}`);
  return result[1].map(([k, v, ts, hs]) => [t(k), t(v), ts, hs.map(([n, hv]) => [n, t(hv)])]);
}

test("manifest", async () => {
  const g = await instantiate("process");
  const m = g.manifest();
  assert.deepEqual([...m.keys()], ["abi", "kinds", "name", "version", "sdk"]);
  assert.equal(m.get("abi"), 1);
  assert.deepEqual(m.get("kinds"), ["process", "join", "key", "timestamp"]);
  assert.equal(m.get("name"), "process");
  assert.equal(m.get("version"), "0.0.1");
  assert.equal(m.get("sdk"), "assemblyscript/0.1.0");

  const a = await instantiate("aggregate");
  assert.deepEqual(a.manifest().get("kinds"), ["process", "aggregate"]);
  assert.equal(a.manifest().has("version"), false);
  const n = await instantiate("none");
  assert.deepEqual([...n.manifest().entries()], [["abi", 1], ["kinds", []], ["sdk", "assemblyscript/0.1.0"]]);
  // "timer" only with a timer handler.
  assert.deepEqual((await instantiate("timers")).manifest().get("kinds"), ["process", "timer"]);
});

test("exports and imports", async () => {
  const g = await instantiate("process");
  const exps = WebAssembly.Module.exports(g.module).map((e) => `${e.name}:${e.kind}`).sort();
  assert.deepEqual(exps, [
    "eddy_abi_v1:function", "eddy_agg_add:function", "eddy_agg_init:function", "eddy_agg_merge:function",
    "eddy_agg_result:function", "eddy_alloc:function", "eddy_join:function", "eddy_key:function",
    "eddy_manifest:function", "eddy_process:function", "eddy_timer:function", "eddy_timestamp:function", "memory:memory",
  ]);
  for (const imp of WebAssembly.Module.imports(g.module)) assert.equal(imp.module, "eddy", `import ${imp.module}.${imp.name}`);
  const none = await instantiate("none");
  assert.deepEqual(WebAssembly.Module.imports(none.module).map((i) => i.name).sort(), ["error", "log"]); // log: the abort handler
  // A module imports the timer calls, and config_get, only if it uses them.
  const names = (m) => WebAssembly.Module.imports(m.module).map((i) => i.name).sort();
  assert.deepEqual(names(g), ["counter_add", "error", "log", "state_get", "state_put"]);
  assert.deepEqual(names(await instantiate("timers")), [
    "error", "log", "state_get", "time_now", "timer_delete", "timer_set",
  ]);
  assert.deepEqual(names(await instantiate("config")), ["config_get", "error", "log"]);
});

test("worked example of ABI.md section 9", async () => {
  const g = await instantiate("process");
  const input = Uint8Array.from([
    0x91, 0x94, 0xc4, 0x01, 0x6b, 0xc4, 0x02, 0x68, 0x69,
    0xcf, 0x00, 0x00, 0x01, 0x8b, 0xcf, 0xe5, 0x68, 0x00,
    0x91, 0x92, 0xa1, 0x68, 0xc4, 0x01, 0x76,
  ]);
  const { out } = g.callRaw("eddy_process", input);
  // The fixture returns the input record with a new value, so it keeps the
  // header (the example's guest dropped it).
  assert.deepEqual([...out], [
    0x91, 0x92, 0x00, 0x91, 0x94, 0xc4, 0x01, 0x6b, 0xc4, 0x02, 0x48, 0x49, 0xc0,
    0x91, 0x92, 0xa1, 0x68, 0xc4, 0x01, 0x76,
  ]);
});

test("map: records, nil and empty, timestamps, headers", async () => {
  const g = await instantiate("process");
  const res = g.call("eddy_process", [
    rec("a", "hello"),
    rec(null, "no key"),
    rec("", ""),
    rec("n", null),
    rec("t", "ts", 5),
    rec("h", "hdr", 6, [["x", b("1")], ["y", null]]),
    rec("d", "drophdr", 7, [["x", b("1")]]),
    rec("v", "nullvalue"),
    rec("e", "emptykey"),
    rec("r", "newrecord", 99),
    rec("g", "headerof", 1, [["g", b("no")], ["h", b("found")]]),
  ]);
  assert.equal(res.length, 11);
  assert.deepEqual(outRecords(res[0]), [["a", "HELLO", null, []]]);
  assert.deepEqual(outRecords(res[1]), [[null, "NO KEY", null, []]]);
  assert.deepEqual(outRecords(res[2]), [["", "", null, []]]);
  assert.deepEqual(outRecords(res[3]), [["n", null, null, []]]);
  assert.deepEqual(outRecords(res[4]), [["t", "ts", 42, []]]);
  assert.deepEqual(outRecords(res[5]), [["h", "hdr", null, [["x", "1"], ["y", null], ["added", "yes"], ["nil", null]]]]);
  assert.deepEqual(outRecords(res[6]), [["d", "drophdr", null, []]]);
  assert.deepEqual(outRecords(res[7]), [["v", null, null, []]]);
  assert.deepEqual(outRecords(res[8]), [["", "emptykey", null, []]]);
  assert.deepEqual(outRecords(res[9]), [["nk", "nv", 0, []]], "a new Record has timestamp 0");
  assert.deepEqual(outRecords(res[10]), [["g", "found", null, [["g", "no"], ["h", "found"]]]]);
  assert.deepEqual(g.call("eddy_process", []), []);
});

test("map: per-record failures", async () => {
  const g = await instantiate("process");
  const res = g.call("eddy_process", [
    rec("k1", "reject"), rec("k2", "bad"), rec("k3", "code77"), rec("k4", "code9"), rec("k5", "null"), rec("k6", "fine"),
  ]);
  assert.deepEqual(res, [
    [REJECTED, "rejected: k1"],
    [BAD_INPUT, "bad input"],
    [77, "seventy-seven"],
    [REJECTED, "error 9"],
    [REJECTED, "map returned null"],
    [OK, [[b("k6"), b("FINE"), null, []]]],
  ]);
});

test("decoder accepts every integer, str and bin width", async () => {
  const g = await instantiate("process");
  const ts = [0, 127, 255, 65535, 2 ** 32 - 1, 2 ** 40, -1, -32, -128, -32768, -(2 ** 31), -(2 ** 40)];
  const batch = ts.map((x) => rec("k", "v", x));
  // Timestamps in non-shortest forms, keys and values as str.
  batch.push([new Raw([0xd9, 1, 0x6b]), new Raw([0xda, 0, 1, 0x76]), new Raw([0xd3, 0, 0, 0, 0, 0, 0, 0, 5]), []]);
  batch.push([new Raw([0xa1, 0x6b]), new Raw([0xdb, 0, 0, 0, 1, 0x76]), new Raw([0xcc, 5]), new Raw([0xdc, 0, 0])]);
  batch.push([new Raw([0xc5, 0, 1, 0x6b]), new Raw([0xc6, 0, 0, 0, 1, 0x76]), new Raw([0xd0, 5]), new Raw([0xdd, 0, 0, 0, 1, 0x92, 0xd9, 1, 0x68, 0xa1, 0x76])]);
  const res = g.call("eddy_process", batch);
  for (let i = 0; i < ts.length; i++) assert.deepEqual(outRecords(res[i]), [["k", "V", null, []]]);
  assert.deepEqual(outRecords(res[ts.length]), [["k", "V", null, []]]);
  assert.deepEqual(outRecords(res[ts.length + 1]), [["k", "V", null, []]]);
  assert.deepEqual(outRecords(res[ts.length + 2]), [["k", "V", null, [["h", "v"]]]]);
  // An array-16 batch of 20 records.
  const many = g.call("eddy_process", Array.from({ length: 20 }, (_, i) => rec(`k${i}`, "x")));
  assert.equal(many.length, 20);
});

test("large values use bin 16 and bin 32", async () => {
  const g = await instantiate("process");
  for (const n of [255, 256, 65535, 65536, 200000]) {
    const { out } = g.callRaw("eddy_process", encode([rec("k", `big:${n}`)]));
    const res = decode(out);
    assert.equal(res[0][1][0][1].length, n);
    const hdr = out[6 + 1 + 1]; // 91 92 00 91 94 c4 01 6b, then the value's format
    assert.equal(hdr, n < 256 ? 0xc4 : n < 65536 ? 0xc5 : 0xc6, `format for ${n}`);
  }
});

test("malformed envelopes", async () => {
  const g = await instantiate("process");
  // The count cannot be read: the call fails with -5 and a reason.
  let r = g.callRaw("eddy_process", Uint8Array.from([0xc1]));
  assert.equal(r.ret, -5n);
  assert.match(g.host.errors.at(-1)[1], /^eddy_process: malformed input envelope: msgpack: at byte 0: want array/);
  assert.equal(g.host.errors.at(-1)[0], BAD_ENVELOPE);
  // A bad record: every item fails with BAD_ENVELOPE, no user code runs.
  const bad = encode([rec("a", "reject"), [b("k"), b("v"), 1]]);
  let res = decode(g.callRaw("eddy_process", bad).out);
  assert.equal(res.length, 2);
  for (const item of res) {
    assert.equal(item[0], BAD_ENVELOPE);
    assert.match(item[1], /record 1: a record is not an array of 4 elements/);
  }
  // Trailing bytes.
  const trailing = Uint8Array.from([...encode([rec("a", "x")]), 0xc0]);
  res = decode(g.callRaw("eddy_process", trailing).out);
  assert.deepEqual(res, [[BAD_ENVELOPE, "malformed input envelope: 1 trailing bytes"]]);
  // Truncated, and a float (not in the subset).
  res = decode(g.callRaw("eddy_process", encode([rec("a", "x")]).slice(0, 6)).out);
  assert.match(res[0][1], /unexpected end of input/);
  res = decode(g.callRaw("eddy_process", Uint8Array.from([0x91, 0x94, 0xc0, 0xc0, 0xcb, 0, 0, 0, 0, 0, 0, 0, 0, 0x90])).out);
  assert.match(res[0][1], /want int, got format 0xcb/);
  // A uint64 above the int64 range.
  res = decode(g.callRaw("eddy_process", encode([[null, null, new Raw([0xcf, 0x80, 0, 0, 0, 0, 0, 0, 0]), null]])).out);
  assert.match(res[0][1], /overflows int64/);
  // An envelope outside the eddy_alloc region.
  r = g.callRaw("eddy_process", encode([]), 8);
  assert.equal(r.ret, -5n);
  assert.match(g.host.errors.at(-1)[1], /not inside the eddy_alloc region/);
  // The instance still works.
  assert.deepEqual(outRecords(g.call("eddy_process", [rec("a", "ok")])[0]), [["a", "OK", null, []]]);
});

test("a crash traps the call and reports it", async () => {
  for (const v of ["throw", "oob"]) {
    const g = await instantiate("process");
    assert.throws(() => g.call("eddy_process", [rec("a", "fine"), rec("b", v)]), WebAssembly.RuntimeError);
    const [level, text] = g.host.logs.at(-1);
    assert.equal(level, 3);
    assert.match(text, v === "throw" ? /^abort: thrown on purpose \(test\/fixtures\/process\.ts:\d+:\d+\)$/ : /^abort: Index out of range \(~lib\/typedarray\.ts:\d+:\d+\)$/);
    assert.deepEqual(g.host.errors.at(-1), [3, text]);
  }
});

test("log and counters", async () => {
  const g = await instantiate("process");
  g.call("eddy_process", [rec("a", "log"), rec("a", "log")]);
  assert.deepEqual(g.host.logs, [[2, "warn ü"], [3, "clamped"], [2, "warn ü"], [3, "clamped"]]);
  assert.deepEqual([...g.host.counters], [["calls", 2n], ["weight", -10n]]);
});

test("keyed state: grow and retry, no store, failure", async () => {
  const g = await instantiate("process");
  // Each call stores one more byte under the key, so the value outgrows
  // stateGet's 256-byte buffer.
  let last;
  for (let i = 1; i <= 300; i++) last = g.call("eddy_process", [rec("user", "count")])[0];
  assert.deepEqual(outRecords(last), [["user", "300", null, []]]);
  assert.equal(g.host.state.get(Buffer.from("user").toString("hex")).length, 300);
  assert.ok(g.host.stateGets >= 301 && g.host.stateGets <= 305, `state_get called ${g.host.stateGets} times`);
  // A null key is an empty key.
  g.call("eddy_process", [rec(null, "count")]);
  assert.equal(g.host.state.get("").length, 1);

  g.host.stateMode = "none";
  assert.deepEqual(g.call("eddy_process", [rec("user", "count")]), [[REJECTED, "eddy: no keyed state store (the step is not stateful)"]]);
  g.host.stateMode = "fail";
  assert.deepEqual(g.call("eddy_process", [rec("user", "count")]), [[STATE, "eddy: keyed state storage failed"]]);
});

test("key and timestamp extractors", async () => {
  const g = await instantiate("process");
  assert.deepEqual(g.call("eddy_key", [rec("a", "new"), rec("a", "nokey"), rec("a", "reject"), rec("a", "")]), [
    [OK, b("new")], [OK, null], [REJECTED, "no key"], [OK, b("")],
  ]);
  assert.deepEqual(g.call("eddy_timestamp", [rec("a", "abc", 5), rec("a", null), rec("a", "reject")]), [
    [OK, 3005], [OK, -1], [BAD_INPUT, "no time"],
  ]);
  assert.deepEqual(g.call("eddy_timestamp", [rec("a", "x".repeat(3000000), 2 ** 40)]), [[OK, 3000000 * 1000 + 2 ** 40]]);
});

test("join", async () => {
  const g = await instantiate("process");
  assert.deepEqual(g.call("eddy_join", [
    [b("k"), b("l"), b("r")], [null, null, b("r")], [b("k"), null, null], [b("k"), b("reject"), null], [b(""), b(""), b("")],
  ]), [[OK, b("k=l|r")], [OK, b("=|r")], [OK, null], [REJECTED, "left refused"], [OK, b("=|")]]);
  const res = decode(g.callRaw("eddy_join", encode([[b("k"), b("l")]])).out);
  assert.deepEqual(res, [[BAD_ENVELOPE, "malformed input envelope: item 0: an item has the wrong number of elements"]]);
});

test("unsupported kinds", async () => {
  const g = await instantiate("none");
  assert.deepEqual(g.call("eddy_process", [rec("a", "b"), rec("c", "d")]), [
    [UNSUPPORTED, "this module implements no process function"], [UNSUPPORTED, "this module implements no process function"],
  ]);
  assert.deepEqual(g.call("eddy_key", [rec("a", "b")]), [[UNSUPPORTED, "this module implements no key function"]]);
  assert.deepEqual(g.call("eddy_timestamp", [rec("a", "b")]), [[UNSUPPORTED, "this module implements no timestamp function"]]);
  assert.deepEqual(g.call("eddy_join", [[null, null, null]]), [[UNSUPPORTED, "this module implements no join function"]]);
  assert.deepEqual(g.call("eddy_timer", [[b("k"), 5, 0], [null, 6, 1]]), [
    [UNSUPPORTED, "this module implements no timer function"], [UNSUPPORTED, "this module implements no timer function"],
  ]);
  assert.deepEqual(g.call("eddy_timer", []), []);
  assert.deepEqual(g.call("eddy_agg_init"), [UNSUPPORTED, "this module implements no aggregate function"]);
  assert.deepEqual(g.call("eddy_agg_merge", [[null, b(""), b("")]]), [[UNSUPPORTED, "this module implements no aggregate function"]]);
  assert.deepEqual(g.call("eddy_agg_result", [[null, b("")]]), [[UNSUPPORTED, "this module implements no aggregate function"]]);
  assert.deepEqual(g.call("eddy_agg_add", [[b("k"), null, [rec("a", "b"), rec("a", "c")]], [b("j"), b("acc"), []]]), [
    [b(""), [[0, UNSUPPORTED, "this module implements no aggregate function"], [1, UNSUPPORTED, "this module implements no aggregate function"]]],
    [b("acc"), []],
  ]);
});

/** A u32 count accumulator. */
function acc(n, extra = "") {
  const a = new Uint8Array(4 + extra.length);
  new DataView(a.buffer).setUint32(0, n, true);
  a.set(b(extra), 4);
  return a;
}

test("aggregate: init, add, merge, result", async () => {
  const g = await instantiate("aggregate");
  assert.deepEqual(g.call("eddy_agg_init"), [OK, acc(0)]);
  const res = g.call("eddy_agg_add", [
    [b("k"), null, [rec("k", "a"), rec("k", "reject"), rec("k", "grow"), rec("k", "bad"), rec("k", "b")]],
    [b("j"), acc(10), []],
    [null, acc(1, "xy"), [rec(null, "grow"), rec(null, "view"), rec(null, "c")]],
  ]);
  assert.deepEqual(res, [
    [acc(3, "g"), [[1, REJECTED, "refused"], [3, BAD_INPUT, "not a number"]]],
    [acc(10), []],
    [acc(4, "xyg"), []],
  ]);
  assert.deepEqual(g.call("eddy_agg_merge", [[b("k"), acc(2), acc(3)], [null, acc(1), b("x")]]), [
    [OK, acc(5)], [200, "short accumulator"],
  ]);
  assert.deepEqual(g.call("eddy_agg_result", [[b("k"), acc(2, "gg")], [b("z"), acc(0)], [b("s"), b("")]]), [
    [OK, b("k:2+2")], [OK, null], [REJECTED, "short accumulator"],
  ]);
  // A group that cannot be folded: the initial accumulator fails.
  g.call("eddy_agg_add", [[b("k"), acc(0), [rec("k", "initfails")]]]);
  assert.deepEqual(g.call("eddy_agg_add", [[b("k"), null, [rec("k", "a"), rec("k", "b")]]]), [
    [b(""), [[0, REJECTED, "initial accumulator: no init today"], [1, REJECTED, "initial accumulator: no init today"]]],
  ]);
  assert.deepEqual(g.call("eddy_agg_init"), [REJECTED, "no init today"]);
  // A malformed group fails the whole call.
  const r = g.callRaw("eddy_agg_add", encode([[b("k"), null]]));
  assert.equal(r.ret, -5n);
  assert.match(g.host.errors.at(-1)[1], /^eddy_agg_add: malformed input envelope: group 0: an item has the wrong number of elements/);
});

test("aggregate without init, merge and result", async () => {
  const g = await instantiate("minimal");
  assert.deepEqual(g.call("eddy_agg_init"), [OK, b("")]);
  assert.deepEqual(g.call("eddy_agg_add", [[b("k"), null, [rec("k", "ab"), rec("k", "cd")]], [b("k"), b("x"), [rec("k", null)]]]), [
    [b("abcd"), []], [b(""), []],
  ]);
  assert.deepEqual(g.call("eddy_agg_merge", [[b("k"), b("a"), b("b")]]), [[UNSUPPORTED, "this aggregate function has no merge"]]);
  assert.deepEqual(g.call("eddy_agg_result", [[b("k"), b("acc")], [null, b("")]]), [[OK, b("acc")], [OK, b("")]]);
});

test("filter passes records on unchanged", async () => {
  const g = await instantiate("aggregate");
  const res = g.call("eddy_process", [rec("a", "keep", 5, [["h", b("v")]]), rec("b", "drop"), rec("c", "kbad"), rec(null, null)]);
  assert.deepEqual(res, [
    [OK, [[b("a"), b("keep"), null, [["h", b("v")]]]]],
    [OK, []],
    [BAD_INPUT, "bad filter input"],
    [OK, []],
  ]);
});

test("flat map", async () => {
  const g = await instantiate("minimal");
  const res = g.call("eddy_process", [rec("a", "x,ts,y", 3, [["h", b("1")]]), rec("b", "none"), rec("c", "null"), rec("d", "reject"), rec("e", "")]);
  assert.deepEqual(outRecords(res[0]), [["a", "x", null, [["h", "1"]]], ["a", "ts", 7, [["h", "1"]]], ["a", "y", null, [["h", "1"]]]]);
  assert.deepEqual(res.slice(1), [[OK, []], [OK, []], [REJECTED, "no explosion"], [OK, [[b("e"), b(""), null, []]]]]);
});

test("toOutput appends eddy.output last and leaves the input as it is", async () => {
  const g = await instantiate("minimal");
  const hs = [["h", b("1")], ["eddy.output", b("old")], ["z", null]];
  const res = g.call("eddy_process", [rec("k", "route", 3, hs), rec(null, "route", 4)]);
  assert.deepEqual(outRecords(res[0]), [
    ["k", "route", null, [["h", "1"], ["z", null], ["eddy.output", "a"]]],
    ["k", "route", null, [["h", "1"], ["z", null], ["eddy.output", "b"]]],
    ["k", "route", null, [["h", "1"], ["eddy.output", "old"], ["z", null]]],
    [null, "a", null, []],
  ]);
  assert.deepEqual(outRecords(res[1]), [
    [null, "route", null, [["eddy.output", "a"]]],
    [null, "route", null, [["eddy.output", "b"]]],
    [null, "route", null, []],
    [null, "a", null, []],
  ]);
});

test("eddy_alloc", async () => {
  const g = await instantiate("process");
  const p1 = g.ex.eddy_alloc(10);
  assert.notEqual(p1, 0);
  assert.equal(g.ex.eddy_alloc(100), p1, "a region that fits is reused");
  const p2 = g.ex.eddy_alloc(1 << 20);
  assert.notEqual(p2, 0);
  assert.ok(g.memoryBytes() >= p2 + (1 << 20));
  assert.equal(g.ex.eddy_alloc(-1), 0);
  assert.equal(g.ex.eddy_alloc(2 ** 31 - 1), 0);
});

test("memory stays bounded over 100,000 calls", async () => {
  // Records whose handler allocates 10 kB of garbage each: without the
  // collection at the start of every call, 100,000 calls would need 1 GB.
  const g = await instantiate("process");
  const batch = encode([rec("a", "garbage"), rec("b", "hello"), rec("c", "garbage")]);
  g.callRaw("eddy_process", batch);
  const start = g.memoryBytes();
  for (let i = 0; i < 100000; i++) {
    const { ret } = g.callRaw("eddy_process", batch);
    if (ret < 0n) assert.fail(`call ${i} failed`);
  }
  assert.ok(g.memoryBytes() <= Math.max(start, 1 << 20), `memory grew from ${start} to ${g.memoryBytes()} bytes`);
});

test("timers: setTimer, deleteTimer and currentTime call the host", async () => {
  const g = await instantiate("timers");
  const h = g.host;
  const hex = (s) => Buffer.from(s).toString("hex");
  const big = 2n ** 62n + 7n;
  let res = g.call("eddy_process", [
    rec("a", "set 0 1500"), rec("a", "set 1 2000"), rec("b", `set 0 ${big}`), rec(null, "set 0 -3"),
    rec("a", "set 0 1500"), rec("a", "del 1 2000"), rec("c", "del 0 1"),
  ]);
  assert.deepEqual(res.map((r) => outRecords(r)[0].slice(0, 2)), [
    ["a", "ok"], ["a", "ok"], ["b", "ok"], [null, "ok"], ["a", "ok"], ["a", "ok"], ["c", "ok"],
  ]);
  assert.deepEqual([...h.timers].sort(), [`${hex("")}/0/-3`, `${hex("a")}/0/1500`, `${hex("b")}/0/${big}`]);
  // currentTime: the host's answer, i64's minimum when it is unknown.
  h.now = [1700000000000n, 42n];
  res = g.call("eddy_process", [rec("k", "now 0"), rec("k", "now 1"), rec("k", "now 7")]);
  assert.deepEqual(res.map((r) => outRecords(r)[0][1]), ["1700000000000", "42", "-9223372036854775808"]);
  // An unknown domain is refused by the host.
  assert.deepEqual(g.call("eddy_process", [rec("k", "set 5 1")]), [[STATE, "eddy: timer refused by the host"]]);
  assert.deepEqual(g.call("eddy_process", [rec("k", "del 5 1")]), [[STATE, "eddy: keyed state storage failed"]]);
  // Without timers (no state), and with a host failure.
  h.timerMode = "none";
  assert.deepEqual(g.call("eddy_process", [rec("k", "set 0 1"), rec("k", "del 0 1"), rec("k", "now 0")]), [
    [REJECTED, "eddy: no keyed state store (the step is not stateful)"],
    [REJECTED, "eddy: no keyed state store (the step is not stateful)"],
    [OK, [[b("k"), b("-9223372036854775808"), null, []]]],
  ]);
  h.timerMode = "fail";
  assert.deepEqual(g.call("eddy_process", [rec("k", "set 0 1"), rec("k", "del 0 1")]), [
    [STATE, "eddy: timer refused by the host"],
    [STATE, "eddy: keyed state storage failed"],
  ]);
});

test("configuration: config and configText", async () => {
  const host = new Host();
  const g = await instantiate("config", host);
  const values = (names) => g.call("eddy_process", names.map((n) => rec("k", n))).map((r) => outRecords(r)[0][1]);
  // No configuration: every entry is absent.
  assert.deepEqual(values(["prefix", "text:prefix", ""]), [null, null, null]);
  assert.equal(host.configGets, 3);

  const long = "x".repeat(1000); // over the first buffer: asks again
  const exact = "y".repeat(256); // the first buffer's size
  host.config.set("prefix", b("p-"));
  host.config.set("empty", b(""));
  host.config.set("long", b(long));
  host.config.set("exact", b(exact));
  host.config.set("naïve", b("ünï"));
  host.config.set("bytes", Uint8Array.from([0xff, 0x00, 0x41]));
  host.configGets = 0;
  assert.deepEqual(values(["prefix", "empty", "long", "exact", "naïve", "missing", "Prefix"]),
    ["p-", "", long, exact, "ünï", null, null]);
  assert.equal(host.configGets, 8, "one ask each, two for the long value");
  const [raw] = g.call("eddy_process", [rec("k", "bytes")]);
  assert.deepEqual([...raw[1][0][1]], [0xff, 0x00, 0x41]); // values are bytes
  assert.deepEqual(values(["text:prefix", "text:empty", "text:naïve", "text:long", "text:missing"]),
    ["[p-]", "[]", "[ünï]", `[${long}]`, null]);
  // The key, timestamp and headers of the record stay.
  const [full] = g.call("eddy_process", [rec("key", "prefix", 7, [["h", b("v")]])]);
  assert.deepEqual(outRecords(full), [["key", "p-", null, [["h", "v"]]]]);

  // A value the function keeps is its own: it survives calls (and the
  // collector between them), and a later configuration does not change it.
  host.config.set("keep", b("first"));
  assert.deepEqual(values(["kept"]), ["first"]);
  host.config.set("keep", b("second"));
  for (let i = 0; i < 3; i++) assert.deepEqual(values(["kept", "long", "keep"]), ["first", long, "second"]);
});

test("eddy_timer: timers in, records out", async () => {
  const g = await instantiate("timers");
  const res = g.call("eddy_timer", [
    [b("k"), 1500, 0],
    [b("p"), 2 ** 40, 1],
    [null, 7, 0],
    [b(""), -1, 1],
    [b("none"), 1, 0],
    [b("null"), 1, 0],
    [b("reject"), 99, 0],
    [b("code77"), 1, 0],
    [b("times"), 1000, 0],
    [b("x".repeat(300)), -(2 ** 40), 0],
  ]);
  assert.equal(res.length, 10);
  assert.deepEqual(outRecords(res[0]), [["k", "1500/0", null, []]], "a timestamp of 0 is the timer's time (nil)");
  assert.deepEqual(outRecords(res[1]), [["p", `${2 ** 40}/1`, null, []]]);
  assert.deepEqual(outRecords(res[2]), [["", "7/0", null, []]], "a nil key (the host sends none) is read as an empty one");
  assert.deepEqual(outRecords(res[3]), [["", "-1/1", null, []]]);
  assert.deepEqual(res.slice(4, 8), [[OK, []], [OK, []], [REJECTED, "timer refused at 99"], [77, "seventy-seven"]]);
  assert.deepEqual(outRecords(res[8]), [
    ["times", "zero", null, []], ["times", "same", null, []], ["times", "later", 1001, [["h", "v"]]], [null, null, -5, []],
  ]);
  assert.deepEqual(outRecords(res[9]), [["x".repeat(300), `${-(2 ** 40)}/0`, null, []]]);
  assert.deepEqual(g.call("eddy_timer", []), []);
  // Keys, times and domains in other forms: str keys, non-shortest ints.
  assert.deepEqual(g.call("eddy_timer", [
    [new Raw([0xa1, 0x6b]), new Raw([0xd3, 0, 0, 0, 0, 0, 0, 0, 5]), new Raw([0xcc, 1])],
    [new Raw([0xd9, 1, 0x6b]), new Raw([0xcf, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]), new Raw([0xd0, 0])],
    [new Raw([0xc5, 0, 1, 0x6b]), new Raw([0xd3, 0x80, 0, 0, 0, 0, 0, 0, 0]), 0],
  ]).map(outRecords), [
    [["k", "5/1", null, []]],
    [["k", "9223372036854775807/0", null, []]],
    [["k", "-9223372036854775808/0", null, []]],
  ]);
});

test("eddy_timer: state, timers and clones inside the handler", async () => {
  const g = await instantiate("timers");
  const h = g.host;
  const hex = (s) => Buffer.from(s).toString("hex");
  g.call("eddy_process", [rec("again", "set 0 1000")]);
  assert.deepEqual(g.call("eddy_timer", [[b("again"), 2000, 0]]), [[OK, []]]);
  assert.deepEqual([...h.timers], [`${hex("again")}/0/3000`]);
  // The kept timer owns its key after the input buffer is written over.
  g.call("eddy_timer", [[b("keep"), 123, 1]]);
  assert.deepEqual(g.call("eddy_timer", [[b("kept"), 50, 0]]).map(outRecords), [[["keep", "123/1", null, []]]]);
  h.state.set(hex("nostate"), b("v"));
  assert.deepEqual(g.call("eddy_timer", [[b("nostate"), 5, 0]]).map(outRecords), [[["nostate", "v", null, []]]]);
  h.stateMode = "none";
  h.timerMode = "none";
  assert.deepEqual(g.call("eddy_timer", [[b("nostate"), 5, 0], [b("again"), 5, 0]]), [
    [REJECTED, "eddy: no keyed state store (the step is not stateful)"],
    [REJECTED, "eddy: no keyed state store (the step is not stateful)"],
  ]);
  h.stateMode = "fail";
  h.timerMode = "fail";
  assert.deepEqual(g.call("eddy_timer", [[b("nostate"), 5, 0], [b("again"), 5, 0]]), [
    [STATE, "eddy: keyed state storage failed"],
    [STATE, "eddy: timer refused by the host"],
  ]);
});

test("eddy_timer: malformed envelopes", async () => {
  const g = await instantiate("timers");
  let r = g.callRaw("eddy_timer", Uint8Array.from([0xc1]));
  assert.equal(r.ret, -5n);
  assert.match(g.host.errors.at(-1)[1], /^eddy_timer: malformed input envelope: msgpack: at byte 0: want array/);
  // A bad timer: every item fails with BAD_ENVELOPE, no user code runs.
  for (const [bad, want] of [
    [[b("reject"), 1], /timer 1: a timer is not an array of 3 elements/],
    [[b("reject"), null, 0], /timer 1: msgpack: at byte \d+: want int, got format 0xc0/],
    [[5, 1, 0], /timer 1: msgpack: at byte \d+: want bin, str or nil, got format 0x5/],
    [[b("k"), 1, new Raw([0xcb, 0, 0, 0, 0, 0, 0, 0, 0])], /timer 1: msgpack: at byte \d+: want int, got format 0xcb/],
    [[b("k"), new Raw([0xcf, 0x80, 0, 0, 0, 0, 0, 0, 0]), 0], /timer 1: msgpack: at byte \d+: uint64 9223372036854775808 overflows int64/],
    [[b("k"), 1, 2], /^malformed input envelope: timer 1: domain 2: want 0 \(event time\) or 1 \(processing time\)$/],
    [[b("k"), 1, -1], /timer 1: domain -1: want 0/],
    [[b("k"), 1, 2 ** 32], /timer 1: domain 4294967296: want 0/],
  ]) {
    const res = decode(g.callRaw("eddy_timer", encode([[b("reject"), 1, 0], bad])).out);
    assert.equal(res.length, 2);
    for (const item of res) {
      assert.equal(item[0], BAD_ENVELOPE);
      assert.match(item[1], want);
    }
  }
  const trailing = Uint8Array.from([...encode([[b("k"), 1, 0]]), 0xc0]);
  assert.deepEqual(decode(g.callRaw("eddy_timer", trailing).out), [[BAD_ENVELOPE, "malformed input envelope: 1 trailing bytes"]]);
  r = g.callRaw("eddy_timer", encode([]), 8);
  assert.equal(r.ret, -5n);
  assert.match(g.host.errors.at(-1)[1], /^eddy_timer: input is not inside the eddy_alloc region/);
  // The instance still works.
  assert.deepEqual(outRecords(g.call("eddy_timer", [[b("k"), 3, 0]])[0]), [["k", "3/0", null, []]]);
});
