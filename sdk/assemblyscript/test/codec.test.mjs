// Tests of the SDK's msgpack codec (assembly/msgpack.ts) through a test
// module that exposes its Reader and Writer (test/fixtures/codec.ts).

import { test } from "node:test";
import assert from "node:assert/strict";
import { instantiate } from "./harness.mjs";
import { encode, decode } from "./msgpack.mjs";

const codec = await instantiate("codec");
const ex = codec.ex;
const region = ex.eddy_alloc(1 << 20);

function put(bytes) {
  new Uint8Array(ex.memory.buffer).set(bytes, region);
  return bytes.length;
}

function answer(ret) {
  const ptr = Number(ret >> 32n), len = Number(ret & 0xffffffffn);
  return new Uint8Array(ex.memory.buffer).slice(ptr, ptr + len);
}

function describe(bytes) {
  return decode(answer(ex.describe(region, put(Uint8Array.from(bytes)))));
}

const hex = (s) => Uint8Array.from((s.match(/../g) ?? []).map((h) => parseInt(h, 16)));

test("reader: every format of the subset", () => {
  const cases = [
    ["c0", "nil"], ["c2", "false"], ["c3", "true"],
    ["00", "0"], ["7f", "127"], ["e0", "-32"], ["ff", "-1"],
    ["cc80", "128"], ["cdffff", "65535"], ["ceffffffff", "4294967295"], ["cf7fffffffffffffff", "9223372036854775807"],
    ["d080", "-128"], ["d18000", "-32768"], ["d280000000", "-2147483648"], ["d38000000000000000", "-9223372036854775808"],
    ["d0ff", "-1"], ["cc05", "5"],
    ["a161", "sa"], ["d90161", "sa"], ["da000161", "sa"], ["db0000000161", "sa"], ["a0", "s"],
    ["c40161", "b1"], ["c5000161", "b1"], ["c600000001ff", "b1"], ["c400", "b0"],
    ["90", "[]"], ["9201c0", "[1,nil]"], ["dc000101", "[1]"], ["dd0000000101", "[1]"],
    ["80", "{}"], ["81a16101", "{sa:1}"], ["de0001a16101", "{sa:1}"], ["df00000001a16101", "{sa:1}"],
    ["9291c081a16192c3c2", "[[nil],{sa:[true,false]}]"],
  ];
  for (const [h, want] of cases) assert.equal(describe(hex(h)), want, h);
});

test("reader: errors", () => {
  const cases = [
    ["", "error: msgpack: unexpected end of input"],
    ["cb0000000000000000", "error: msgpack: at byte 0: want int, got format 0xcb"],
    ["ca00000000", "error: msgpack: at byte 0: want int, got format 0xca"],
    ["c1", "error: msgpack: at byte 0: want int, got format 0xc1"],
    ["d4", "error: msgpack: at byte 0: want int, got format 0xd4"],
    ["cf8000000000000000", "error: msgpack: at byte 0: uint64 9223372036854775808 overflows int64"],
    ["cd01", "error: msgpack: unexpected end of input"],
    ["a261", "error: msgpack: unexpected end of input"],
    ["c5ff", "error: msgpack: unexpected end of input"],
    ["92c0", "error: msgpack: unexpected end of input"],
    ["dc0003c0c0", "error: msgpack: unexpected end of input"],
    ["dd7fffffff", "error: msgpack: unexpected end of input"],
    ["c6ffffffff00", "error: msgpack: unexpected end of input"],
  ];
  for (const [h, want] of cases) assert.equal(describe(hex(h)), want, h);
  assert.equal(describe(hex("01c0")), "1 +1", "trailing bytes are left");
});

test("reader: skip", () => {
  const skip = (bytes) => ex.skip(region, put(bytes));
  // A manifest with keys the SDK does not know, values of every kind.
  const m = encode(new Map([
    ["abi", 1], ["future", new Map([["nested", [1, "two", new Uint8Array(300), null, true, -5, 2n ** 40n]]])],
    ["big", -(2n ** 62n)], ["kinds", ["process"]],
  ]));
  assert.equal(skip(Uint8Array.from([...m, 0xc0, 0xc0])), m.length);
  // A uint64 above the int64 range is skipped by size.
  assert.equal(skip(hex("cfffffffffffffffff")), 9);
  assert.equal(skip(hex("cb0000000000000000")), -1, "floats are not in the subset");
  assert.equal(skip(hex("c7")), -1, "ext types are not in the subset");
  assert.equal(skip(hex("9291")), -1);
  // Nesting: 65 levels are refused, 64 accepted.
  const nest = (n) => Uint8Array.from([...Array(n).fill(0x91), 0xc0]);
  assert.equal(skip(nest(64)), 65);
  assert.equal(skip(nest(66)), -1);
});

test("reader: bytes", () => {
  const rb = (h) => ex.readBytes(region, put(hex(h)));
  assert.equal(rb("c0"), -1, "nil");
  assert.equal(rb("c400"), 0, "empty is not nil");
  assert.equal(rb("a3616263"), 3, "str is accepted as bytes");
  assert.equal(rb("c5000161"), 1);
  assert.equal(rb("01"), -2, "an int is not bytes");
});

test("writer: shortest forms", () => {
  const int = (v) => [...answer(ex.encodeInt(BigInt(v)))].map((x) => x.toString(16).padStart(2, "0")).join("");
  const cases = [
    [0, "00"], [127, "7f"], [128, "cc80"], [255, "ccff"], [256, "cd0100"], [65535, "cdffff"], [65536, "ce00010000"],
    [2 ** 32 - 1, "ceffffffff"], [2 ** 32, "cf0000000100000000"], [-1, "ff"], [-32, "e0"], [-33, "d0df"], [-128, "d080"],
    [-129, "d1ff7f"], [-32768, "d18000"], [-32769, "d2ffff7fff"], [-(2 ** 31), "d280000000"], [-(2 ** 31) - 1, "d3ffffffff7fffffff"],
  ];
  for (const [v, want] of cases) assert.equal(int(v), want, String(v));
  assert.equal(int(-(2n ** 63n)), "d38000000000000000");
  assert.equal(int(2n ** 63n - 1n), "cf7fffffffffffffff");
  assert.deepEqual([...answer(ex.encodeUint(2n ** 64n - 1n))], [0xcf, 255, 255, 255, 255, 255, 255, 255, 255]);

  const sized = (kind, n) => answer(ex.encodeSized(kind, n));
  const head = (kind, n, k) => [...sized(kind, n).slice(0, k)];
  assert.deepEqual(head(0, 31, 1), [0xbf]);
  assert.deepEqual(head(0, 32, 2), [0xd9, 32]);
  assert.deepEqual(head(0, 256, 3), [0xda, 1, 0]);
  assert.deepEqual(head(0, 65536, 5), [0xdb, 0, 1, 0, 0]);
  assert.deepEqual(head(1, 0, 2), [0xc4, 0]);
  assert.deepEqual(head(1, 255, 2), [0xc4, 255]);
  assert.deepEqual(head(1, 256, 3), [0xc5, 1, 0]);
  assert.deepEqual(head(1, 65536, 5), [0xc6, 0, 1, 0, 0]);
  assert.equal(sized(1, 65536).length, 65541);
  assert.deepEqual([...sized(2, 15)], [0x9f]);
  assert.deepEqual([...sized(2, 16)], [0xdc, 0, 16]);
  assert.deepEqual([...sized(2, 65536)], [0xdd, 0, 1, 0, 0]);
  assert.deepEqual([...sized(3, 15)], [0x8f]);
  assert.deepEqual([...sized(3, 16)], [0xde, 0, 16]);
  assert.deepEqual([...sized(3, 70000)], [0xdf, 0, 1, 0x11, 0x70]);
  assert.deepEqual([...sized(4, 0)], [0xc0, 0xc3, 0xc2, 0xc0]);
});
