// A small msgpack encoder and decoder for the tests: the subset of ABI.md
// section 5.1, written independently of the SDK's AssemblyScript codec.
//
// Values: null, booleans, numbers and bigints (integers), strings (str),
// Uint8Array (bin), arrays, and Map or plain objects (maps).

/** Encodes v in the shortest form. */
export function encode(v) {
  const out = [];
  write(out, v);
  return Uint8Array.from(out);
}

function be(out, v, n) {
  for (let i = n - 1; i >= 0; i--) out.push(Number((BigInt(v) >> BigInt(8 * i)) & 0xffn));
}

function write(out, v) {
  if (v === null || v === undefined) out.push(0xc0);
  else if (v === true) out.push(0xc3);
  else if (v === false) out.push(0xc2);
  else if (typeof v === "number" || typeof v === "bigint") writeInt(out, BigInt(v));
  else if (typeof v === "string") {
    const b = new TextEncoder().encode(v);
    if (b.length < 32) out.push(0xa0 | b.length);
    else if (b.length < 256) out.push(0xd9, b.length);
    else if (b.length < 65536) { out.push(0xda); be(out, b.length, 2); }
    else { out.push(0xdb); be(out, b.length, 4); }
    out.push(...b);
  } else if (v instanceof Uint8Array) {
    if (v.length < 256) out.push(0xc4, v.length);
    else if (v.length < 65536) { out.push(0xc5); be(out, v.length, 2); }
    else { out.push(0xc6); be(out, v.length, 4); }
    for (const c of v) out.push(c);
  } else if (Array.isArray(v)) {
    if (v.length < 16) out.push(0x90 | v.length);
    else if (v.length < 65536) { out.push(0xdc); be(out, v.length, 2); }
    else { out.push(0xdd); be(out, v.length, 4); }
    for (const e of v) write(out, e);
  } else if (v instanceof Raw) {
    out.push(...v.bytes);
  } else {
    const entries = v instanceof Map ? [...v.entries()] : Object.entries(v);
    if (entries.length < 16) out.push(0x80 | entries.length);
    else { out.push(0xde); be(out, entries.length, 2); }
    for (const [k, e] of entries) { write(out, k); write(out, e); }
  }
}

function writeInt(out, v) {
  if (v >= 0n) {
    if (v < 128n) out.push(Number(v));
    else if (v < 256n) out.push(0xcc, Number(v));
    else if (v < 65536n) { out.push(0xcd); be(out, v, 2); }
    else if (v < 4294967296n) { out.push(0xce); be(out, v, 4); }
    else { out.push(0xcf); be(out, v, 8); }
  } else {
    if (v >= -32n) out.push(Number(v & 0xffn));
    else if (v >= -128n) { out.push(0xd0); be(out, v & 0xffn, 1); }
    else if (v >= -32768n) { out.push(0xd1); be(out, v & 0xffffn, 2); }
    else if (v >= -2147483648n) { out.push(0xd2); be(out, v & 0xffffffffn, 4); }
    else { out.push(0xd3); be(out, v & 0xffffffffffffffffn, 8); }
  }
}

/** Raw bytes spliced into an encoding as they are (to write unusual forms). */
export class Raw {
  constructor(bytes) { this.bytes = [...bytes]; }
}

/** Decodes one value from b and checks that nothing follows it. str decodes as a string, bin as a Uint8Array, integers as numbers (bigint beyond 2^53), maps as Map. */
export function decode(b) {
  const st = { b, i: 0 };
  const v = read(st);
  if (st.i !== b.length) throw new Error(`msgpack: ${b.length - st.i} trailing bytes`);
  return v;
}

function need(st, n) {
  if (st.i + n > st.b.length) throw new Error("msgpack: short input");
}

function uint(st, n) {
  need(st, n);
  let v = 0n;
  for (let k = 0; k < n; k++) v = (v << 8n) | BigInt(st.b[st.i++]);
  return v;
}

function num(v) {
  return v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v;
}

function bytes(st, n) {
  need(st, n);
  const v = st.b.slice(st.i, st.i + n);
  st.i += n;
  return v;
}

function read(st) {
  need(st, 1);
  const c = st.b[st.i++];
  if (c <= 0x7f) return c;
  if (c >= 0xe0) return c - 256;
  if (c >= 0xa0 && c <= 0xbf) return new TextDecoder().decode(bytes(st, c & 0x1f));
  if ((c & 0xf0) === 0x90) return arr(st, c & 0x0f);
  if ((c & 0xf0) === 0x80) return map(st, c & 0x0f);
  switch (c) {
    case 0xc0: return null;
    case 0xc2: return false;
    case 0xc3: return true;
    case 0xc4: return bytes(st, Number(uint(st, 1)));
    case 0xc5: return bytes(st, Number(uint(st, 2)));
    case 0xc6: return bytes(st, Number(uint(st, 4)));
    case 0xcc: return num(uint(st, 1));
    case 0xcd: return num(uint(st, 2));
    case 0xce: return num(uint(st, 4));
    case 0xcf: return num(uint(st, 8));
    case 0xd0: return num(BigInt.asIntN(8, uint(st, 1)));
    case 0xd1: return num(BigInt.asIntN(16, uint(st, 2)));
    case 0xd2: return num(BigInt.asIntN(32, uint(st, 4)));
    case 0xd3: return num(BigInt.asIntN(64, uint(st, 8)));
    case 0xd9: return new TextDecoder().decode(bytes(st, Number(uint(st, 1))));
    case 0xda: return new TextDecoder().decode(bytes(st, Number(uint(st, 2))));
    case 0xdb: return new TextDecoder().decode(bytes(st, Number(uint(st, 4))));
    case 0xdc: return arr(st, Number(uint(st, 2)));
    case 0xdd: return arr(st, Number(uint(st, 4)));
    case 0xde: return map(st, Number(uint(st, 2)));
    case 0xdf: return map(st, Number(uint(st, 4)));
  }
  throw new Error(`msgpack: format 0x${c.toString(16)} is not in the subset`);
}

function arr(st, n) {
  const a = [];
  for (let k = 0; k < n; k++) a.push(read(st));
  return a;
}

function map(st, n) {
  const m = new Map();
  for (let k = 0; k < n; k++) {
    const key = read(st);
    m.set(key, read(st));
  }
  return m;
}

/** UTF-8 bytes of s. */
export function b(s) {
  return new TextEncoder().encode(s);
}

/** Text of UTF-8 bytes. */
export function t(bytes) {
  return bytes === null ? null : new TextDecoder().decode(bytes);
}
