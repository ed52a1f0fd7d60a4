// Compiles AssemblyScript test guests (test/fixtures/*.ts) the way
// guests/assemblyscript/build.sh builds real ones, and runs them in node's
// WebAssembly engine with the host functions of ABI.md section 3 stubbed.

import asc from "assemblyscript/asc";
import path from "node:path";
import { fileURLToPath } from "node:url";

const sdk = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const cache = new Map();

/** Compiles test/fixtures/NAME.ts and returns the module's bytes. */
export async function compile(name) {
  if (cache.has(name)) return cache.get(name);
  let binary = null;
  const errors = [];
  const { error } = await asc.main([
    `test/fixtures/${name}.ts`, "-O3", "--runtime", "minimal", "--noAssert",
    "--use", "abort=assembly/abort/eddyAbort", "-o", `${name}.wasm`, "--baseDir", sdk,
  ], {
    writeFile: (file, contents) => { if (file.endsWith(".wasm")) binary = contents; },
    stderr: { write: (s) => { errors.push(String(s)); return true; } },
    stdout: { write: () => true },
  });
  if (error) throw new Error(`asc ${name}: ${error.message}\n${errors.join("")}`);
  cache.set(name, binary);
  return binary;
}

/**
 * A host for one instance: stubs of the eddy imports that record what the
 * guest did, a keyed-state map (or none, or a failing one), the timers
 * set (with the same modes), and the step's configuration.
 */
export class Host {
  constructor() {
    this.logs = [];       // [level, text]
    this.errors = [];     // [code, text]
    this.counters = new Map();
    this.state = new Map(); // hex key -> Uint8Array
    this.stateMode = "ok";  // "ok", "none" (-2), "fail" (-3)
    this.stateGets = 0;
    this.timers = new Set(); // "hexkey/domain/time"
    this.timerMode = "ok";   // "ok", "none" (-2), "fail" (-3)
    this.now = [-(2n ** 63n), -(2n ** 63n)]; // time_now of domains 0 and 1
    this.config = new Map(); // entry name -> Uint8Array: what config_get answers
    this.configGets = 0;
    this.instance = null;
  }

  mem() { return new Uint8Array(this.instance.exports.memory.buffer); }
  text(ptr, len) { return new TextDecoder().decode(this.mem().slice(ptr, ptr + len)); }
  bytes(ptr, len) { return this.mem().slice(ptr, ptr + len); }
  key(ptr, len) { return Buffer.from(this.bytes(ptr, len)).toString("hex"); }

  imports() {
    return {
      eddy: {
        log: (level, ptr, len) => { this.logs.push([level, this.text(ptr, len)]); },
        error: (code, ptr, len) => { this.errors.push([code, this.text(ptr, len)]); },
        state_get: (kp, kl, vp, vcap) => {
          this.stateGets++;
          if (this.stateMode === "none") return -2;
          if (this.stateMode === "fail") return -3;
          const v = this.state.get(this.key(kp, kl));
          if (v === undefined) return -1;
          if (v.length <= vcap) this.mem().set(v, vp);
          return v.length;
        },
        state_put: (kp, kl, vp, vl) => {
          if (this.stateMode === "none") return -2;
          if (this.stateMode === "fail") return -3;
          this.state.set(this.key(kp, kl), this.bytes(vp, vl));
          return 0;
        },
        state_delete: (kp, kl) => {
          if (this.stateMode === "none") return -2;
          if (this.stateMode === "fail") return -3;
          this.state.delete(this.key(kp, kl));
          return 0;
        },
        timer_set: (kp, kl, domain, at) => {
          if (this.timerMode === "none") return -2;
          if (this.timerMode === "fail" || (domain !== 0 && domain !== 1)) return -3;
          this.timers.add(`${this.key(kp, kl)}/${domain}/${at}`);
          return 0;
        },
        timer_delete: (kp, kl, domain, at) => {
          if (this.timerMode === "none") return -2;
          if (this.timerMode === "fail" || (domain !== 0 && domain !== 1)) return -3;
          this.timers.delete(`${this.key(kp, kl)}/${domain}/${at}`);
          return 0;
        },
        time_now: (domain) => {
          if (this.timerMode !== "ok" || (domain !== 0 && domain !== 1)) return -(2n ** 63n);
          return this.now[domain];
        },
        config_get: (np, nl, vp, vcap) => {
          this.configGets++;
          const v = this.config.get(this.text(np, nl));
          if (v === undefined) return -1;
          if (v.length <= vcap) this.mem().set(v, vp);
          return v.length;
        },
        counter_add: (np, nl, delta) => {
          const name = this.text(np, nl);
          this.counters.set(name, (this.counters.get(name) ?? 0n) + delta);
        },
      },
    };
  }
}

/** Instantiates fixture name; returns a Guest. */
export async function instantiate(name, host = new Host()) {
  const bin = await compile(name);
  const { instance, module } = await WebAssembly.instantiate(bin, host.imports());
  host.instance = instance;
  return new Guest(instance, module, host);
}

/** One instance of a guest, called as the Eddy host calls it. */
export class Guest {
  constructor(instance, module, host) {
    this.instance = instance;
    this.module = module;
    this.host = host;
    this.ex = instance.exports;
    this.inPtr = 0;
    this.inCap = 0;
  }

  /** Writes envelope into the eddy_alloc region (growing it as the host does) and calls export; returns { ret, out } with out the answer's bytes (null on a negative return). */
  callRaw(exp, envelope, ptrOverride) {
    const n = envelope.length;
    if (this.inPtr === 0 || n > this.inCap) {
      const size = Math.max(n, 4096, this.inCap * 2);
      this.inPtr = this.ex.eddy_alloc(size);
      if (this.inPtr === 0) throw new Error("eddy_alloc returned 0");
      this.inCap = size;
    }
    new Uint8Array(this.ex.memory.buffer).set(envelope, this.inPtr);
    const ret = this.ex[exp](ptrOverride ?? this.inPtr, n);
    if (ret < 0n) return { ret, out: null };
    const ptr = Number(ret >> 32n), len = Number(ret & 0xffffffffn);
    return { ret, out: new Uint8Array(this.ex.memory.buffer).slice(ptr, ptr + len) };
  }

  /** Calls export with the msgpack encoding of value and decodes the answer; throws on a negative return. */
  call(exp, value) {
    const { ret, out } = this.callRaw(exp, value === undefined ? new Uint8Array(0) : encode(value));
    if (out === null) throw new Error(`${exp} returned ${ret}: ${JSON.stringify(this.host.errors.at(-1))}`);
    return decode(out);
  }

  manifest() {
    const ret = this.ex.eddy_manifest();
    const ptr = Number(ret >> 32n), len = Number(ret & 0xffffffffn);
    return decode(new Uint8Array(this.ex.memory.buffer).slice(ptr, ptr + len));
  }

  memoryBytes() {
    return this.ex.memory.buffer.byteLength;
  }
}

import { encode, decode } from "./msgpack.mjs";
export { encode, decode };
