// The msgpack subset of the Eddy guest ABI (abi/ABI.md, section 5.1): nil,
// bool, integers of every width, str, bin, arrays and maps. No floats, no
// ext types.
//
// The SDK uses one Reader and one Writer for its envelopes; a function may
// make its own to encode or decode msgpack payloads.
//
// # Why it works on raw memory
//
// AssemblyScript compiles loads and stores of linear memory to single Wasm
// instructions, while the safe Uint8Array accessors check bounds on every
// byte. The Reader checks each value's bounds once and then reads the memory
// directly; byte results are reported as (start, length) pairs, so reading
// allocates nothing.

/** Format bytes of the subset. */
export namespace Format {
  export const NIL: u8 = 0xc0;
  export const FALSE: u8 = 0xc2;
  export const TRUE: u8 = 0xc3;
  export const BIN8: u8 = 0xc4;
  export const BIN16: u8 = 0xc5;
  export const BIN32: u8 = 0xc6;
  export const UINT8: u8 = 0xcc;
  export const UINT16: u8 = 0xcd;
  export const UINT32: u8 = 0xce;
  export const UINT64: u8 = 0xcf;
  export const INT8: u8 = 0xd0;
  export const INT16: u8 = 0xd1;
  export const INT32: u8 = 0xd2;
  export const INT64: u8 = 0xd3;
  export const STR8: u8 = 0xd9;
  export const STR16: u8 = 0xda;
  export const STR32: u8 = 0xdb;
  export const ARRAY16: u8 = 0xdc;
  export const ARRAY32: u8 = 0xdd;
  export const MAP16: u8 = 0xde;
  export const MAP32: u8 = 0xdf;
}

/** The deepest nesting Reader.skip accepts, so hostile input cannot exhaust the stack. */
export const MAX_DEPTH = 64;

/** The error when the input ends inside a value, or when an array or map announces more elements than there are bytes left. */
export const ERR_SHORT = "msgpack: unexpected end of input";

// @ts-ignore: decorator
@inline function be16(p: usize): u32 {
  return (<u32>load<u8>(p) << 8) | <u32>load<u8>(p, 1);
}

// @ts-ignore: decorator
@inline function be32(p: usize): u32 {
  return bswap<u32>(load<u32>(p));
}

// @ts-ignore: decorator
@inline function be64(p: usize): u64 {
  return bswap<u64>(load<u64>(p));
}

/** Returns the payload size of a sized integer format, or 0 for any other byte. */
function intSize(c: u32): i32 {
  if (c >= Format.UINT8 && c <= Format.UINT64) return 1 << (c - Format.UINT8);
  if (c >= Format.INT8 && c <= Format.INT64) return 1 << (c - Format.INT8);
  return 0;
}

/**
 * Reader decodes msgpack values from a region of memory.
 *
 * Byte results (bin, str) are not copied: readBytes and readStr return the
 * payload's length and leave its address in `start`, so the caller can make
 * a view of it. The first error is kept ("sticky"): afterwards every method
 * returns a zero value and consumes nothing, so a decoder can read a whole
 * structure and check `error` once.
 */
export class Reader {
  /** The first byte of the input (offsets in error messages count from it). */
  base: usize = 0;
  /** The next byte to read. */
  pos: usize = 0;
  /** The end of the input. */
  end: usize = 0;
  /** The payload address of the last bin or str read. */
  start: usize = 0;
  /** The first error met, or null. */
  error: string | null = null;

  /** Points the reader at the len bytes at ptr and clears the error. */
  reset(ptr: usize, len: usize): void {
    this.base = ptr;
    this.pos = ptr;
    this.end = ptr + len;
    this.error = null;
  }

  /** Points the reader at the bytes of b and clears the error. */
  resetBytes(b: Uint8Array): void {
    this.reset(b.dataStart, <usize>b.byteLength);
  }

  /** The number of bytes consumed. */
  get offset(): i32 {
    return <i32>(this.pos - this.base);
  }

  /** The number of bytes left. */
  get left(): i32 {
    return <i32>(this.end - this.pos);
  }

  /** Whether no error has been met. */
  get ok(): bool {
    return this.error == null;
  }

  /** Records msg as the reader's error unless one is already recorded. */
  fail(msg: string): void {
    if (this.error == null) this.error = msg;
  }

  private short(): void {
    this.fail(ERR_SHORT);
  }

  private typeError(want: string, c: u32): void {
    this.fail("msgpack: at byte " + this.offset.toString() + ": want " + want + ", got format 0x" + c.toString(16));
  }

  /** Returns the next format byte without consuming it, or -1 at the end of the input (an error) or after an error. */
  peek(): i32 {
    if (this.error != null) return -1;
    if (this.pos >= this.end) {
      this.short();
      return -1;
    }
    return <i32>load<u8>(this.pos);
  }

  /** Reports whether the next value is nil, without consuming it. */
  isNil(): bool {
    return this.error == null && this.pos < this.end && load<u8>(this.pos) == Format.NIL;
  }

  /** Consumes a nil. */
  readNil(): void {
    let c = this.peek();
    if (c < 0) return;
    if (c != Format.NIL) {
      this.typeError("nil", c);
      return;
    }
    this.pos++;
  }

  /** Reads a bool. */
  readBool(): bool {
    let c = this.peek();
    if (c == Format.TRUE || c == Format.FALSE) {
      this.pos++;
      return c == Format.TRUE;
    }
    if (c >= 0) this.typeError("bool", c);
    return false;
  }

  /** Reads an integer of any width. A uint 64 above i64.MAX_VALUE is an error. */
  readInt(): i64 {
    let c = this.peek();
    if (c < 0) return 0;
    if (c <= 0x7f) {
      this.pos++;
      return <i64>c;
    }
    if (c >= 0xe0) {
      this.pos++;
      return <i64>(c - 256);
    }
    let size = intSize(c);
    if (size == 0) {
      this.typeError("int", c);
      return 0;
    }
    let p = this.pos + 1;
    if (<usize>size > this.end - p) {
      this.short();
      return 0;
    }
    let v: i64;
    switch (c) {
      case Format.UINT8: v = <i64>load<u8>(p); break;
      case Format.UINT16: v = <i64>be16(p); break;
      case Format.UINT32: v = <i64>be32(p); break;
      case Format.INT8: v = <i64>load<i8>(p); break;
      case Format.INT16: v = <i64><i16>be16(p); break;
      case Format.INT32: v = <i64><i32>be32(p); break;
      case Format.UINT64: {
        v = <i64>be64(p);
        if (v < 0) {
          this.fail("msgpack: at byte " + this.offset.toString() + ": uint64 " + (<u64>v).toString() + " overflows int64");
          return 0;
        }
        break;
      }
      default: v = <i64>be64(p);
    }
    this.pos = p + <usize>size;
    return v;
  }

  /**
   * Reads bin or str and returns its length, with its payload at `start`;
   * returns -1 for nil (and on error). An empty bin or str returns 0.
   */
  readBytes(): i32 {
    let c = this.peek();
    if (c < 0) return -1;
    if (c == Format.NIL) {
      this.pos++;
      return -1;
    }
    return this.payload(c, "bin, str or nil");
  }

  /** Reads a str (a bin is accepted too) and returns its length, with its payload at `start`; nil is an error. Returns -1 on error. */
  readStr(): i32 {
    let c = this.peek();
    if (c < 0) return -1;
    return this.payload(c, "str");
  }

  /** Reads the str or bin whose format byte c is next. */
  private payload(c: i32, want: string): i32 {
    let left = this.end - this.pos;
    let h: usize, n: usize;
    if (c >= 0xa0 && c <= 0xbf) {
      h = 1;
      n = <usize>(c & 0x1f);
    } else if (c == Format.BIN8 || c == Format.STR8) {
      if (left < 2) { this.short(); return -1; }
      h = 2;
      n = <usize>load<u8>(this.pos, 1);
    } else if (c == Format.BIN16 || c == Format.STR16) {
      if (left < 3) { this.short(); return -1; }
      h = 3;
      n = <usize>be16(this.pos + 1);
    } else if (c == Format.BIN32 || c == Format.STR32) {
      if (left < 5) { this.short(); return -1; }
      h = 5;
      n = <usize>be32(this.pos + 1);
    } else {
      this.typeError(want, c);
      return -1;
    }
    if (n > left - h) {
      this.short();
      return -1;
    }
    this.start = this.pos + h;
    this.pos = this.start + n;
    return <i32>n;
  }

  /** Reads an array header and returns the element count (0 on error). */
  readArrayLen(): i32 {
    return this.header(0x90, Format.ARRAY16, Format.ARRAY32, "array");
  }

  /** Reads a map header and returns the number of pairs (0 on error). */
  readMapLen(): i32 {
    return this.header(0x80, Format.MAP16, Format.MAP32, "map");
  }

  private header(fix: i32, f16: i32, f32: i32, want: string): i32 {
    let c = this.peek();
    if (c < 0) return 0;
    let left = this.end - this.pos;
    let h: usize, n: usize;
    if ((c & 0xf0) == fix) {
      h = 1;
      n = <usize>(c & 0x0f);
    } else if (c == f16) {
      if (left < 3) { this.short(); return 0; }
      h = 3;
      n = <usize>be16(this.pos + 1);
    } else if (c == f32) {
      if (left < 5) { this.short(); return 0; }
      h = 5;
      n = <usize>be32(this.pos + 1);
    } else {
      this.typeError(want, c);
      return 0;
    }
    // Every element takes at least one byte: a count larger than what is
    // left is malformed, and refusing it here keeps callers from sizing
    // anything by it.
    if (n > left - h) {
      this.short();
      return 0;
    }
    this.pos += h;
    return <i32>n;
  }

  /** Consumes one value of any type in the subset, including arrays and maps nested up to MAX_DEPTH levels. */
  skip(): void {
    this.skipAt(0);
  }

  private skipAt(depth: i32): void {
    let c = this.peek();
    if (c < 0) return;
    if (depth > MAX_DEPTH) {
      this.fail("msgpack: at byte " + this.offset.toString() + ": nesting deeper than " + MAX_DEPTH.toString());
      return;
    }
    if (c == Format.NIL || c == Format.TRUE || c == Format.FALSE || c <= 0x7f || c >= 0xe0) {
      this.pos++;
    } else if (intSize(c) != 0) {
      // Skipped by size: a uint 64 above i64.MAX_VALUE is still well formed.
      let size = <usize>intSize(c);
      if (size > this.end - this.pos - 1) {
        this.short();
        return;
      }
      this.pos += 1 + size;
    } else if ((c >= 0xa0 && c <= 0xbf) || (c >= <i32>Format.STR8 && c <= <i32>Format.STR32) || (c >= <i32>Format.BIN8 && c <= <i32>Format.BIN32)) {
      this.payload(c, "");
    } else if ((c & 0xf0) == 0x90 || c == Format.ARRAY16 || c == Format.ARRAY32) {
      let n = this.readArrayLen();
      for (let i = 0; i < n && this.error == null; i++) this.skipAt(depth + 1);
    } else if ((c & 0xf0) == 0x80 || c == Format.MAP16 || c == Format.MAP32) {
      let n = this.readMapLen();
      for (let i = 0; i < 2 * n && this.error == null; i++) this.skipAt(depth + 1);
    } else {
      this.typeError("a value of the subset", c);
    }
  }

  /** Reads bin, str or nil as a new Uint8Array (a copy), or null for nil. Allocates; the SDK itself uses readBytes. */
  readBytesCopy(): Uint8Array | null {
    let n = this.readBytes();
    if (n < 0) return null;
    let b = new Uint8Array(n);
    memory.copy(b.dataStart, this.start, <usize>n);
    return b;
  }

  /** Reads a str (or bin) as a string, decoding UTF-8; nil and errors give "". Allocates. */
  readString(): string {
    let n = this.readStr();
    if (n <= 0) return "";
    return String.UTF8.decodeUnsafe(this.start, <usize>n);
  }
}

/**
 * Writer appends msgpack values, in their shortest form, to a buffer it owns
 * and grows. reset() empties it and keeps the memory, so a writer that is
 * reused encodes without allocating once it has grown.
 */
export class Writer {
  private buf: ArrayBuffer;
  /** The first byte of the buffer. Changes when the buffer grows. */
  ptr: usize;
  /** The buffer's capacity in bytes. */
  cap: usize;
  /** The number of bytes written. */
  len: usize = 0;

  constructor(capacity: i32 = 256) {
    this.buf = new ArrayBuffer(max(capacity, 16));
    this.ptr = changetype<usize>(this.buf);
    this.cap = <usize>this.buf.byteLength;
  }

  /** Empties the writer, keeping its buffer. */
  reset(): void {
    this.len = 0;
  }

  /** Returns the number of bytes written. */
  get length(): i32 {
    return <i32>this.len;
  }

  /** Makes room for n more bytes and returns the address where they go; the caller then adds n to len. */
  ensure(n: usize): usize {
    if (this.cap - this.len < n) this.grow(n);
    return this.ptr + this.len;
  }

  private grow(n: usize): void {
    let want = max(max(this.cap << 1, this.len + n), <usize>4096);
    let nb = new ArrayBuffer(<i32>want);
    memory.copy(changetype<usize>(nb), this.ptr, this.len);
    this.buf = nb;
    this.ptr = changetype<usize>(nb);
    this.cap = want;
  }

  /** Appends one raw byte. */
  writeByte(b: u8): void {
    let p = this.ensure(1);
    store<u8>(p, b);
    this.len++;
  }

  /** Appends len raw bytes from ptr. */
  writeRaw(src: usize, n: usize): void {
    let p = this.ensure(n);
    memory.copy(p, src, n);
    this.len += n;
  }

  /** Appends nil. */
  writeNil(): void {
    this.writeByte(Format.NIL);
  }

  /** Appends a bool. */
  writeBool(v: bool): void {
    this.writeByte(v ? Format.TRUE : Format.FALSE);
  }

  /** Appends a signed integer in its shortest form; non-negative values use the unsigned formats. */
  writeInt(v: i64): void {
    if (v >= 0) {
      this.writeUint(<u64>v);
      return;
    }
    let p = this.ensure(9);
    if (v >= -32) {
      store<u8>(p, <u8>v);
      this.len += 1;
    } else if (v >= i8.MIN_VALUE) {
      store<u8>(p, Format.INT8);
      store<u8>(p, <u8>v, 1);
      this.len += 2;
    } else if (v >= i16.MIN_VALUE) {
      store<u8>(p, Format.INT16);
      store<u16>(p, bswap<u16>(<u16>v), 1);
      this.len += 3;
    } else if (v >= i32.MIN_VALUE) {
      store<u8>(p, Format.INT32);
      store<u32>(p, bswap<u32>(<u32>v), 1);
      this.len += 5;
    } else {
      store<u8>(p, Format.INT64);
      store<u64>(p, bswap<u64>(<u64>v), 1);
      this.len += 9;
    }
  }

  /** Appends an unsigned integer in its shortest form. */
  writeUint(v: u64): void {
    let p = this.ensure(9);
    if (v <= 0x7f) {
      store<u8>(p, <u8>v);
      this.len += 1;
    } else if (v <= u8.MAX_VALUE) {
      store<u8>(p, Format.UINT8);
      store<u8>(p, <u8>v, 1);
      this.len += 2;
    } else if (v <= u16.MAX_VALUE) {
      store<u8>(p, Format.UINT16);
      store<u16>(p, bswap<u16>(<u16>v), 1);
      this.len += 3;
    } else if (v <= u32.MAX_VALUE) {
      store<u8>(p, Format.UINT32);
      store<u32>(p, bswap<u32>(<u32>v), 1);
      this.len += 5;
    } else {
      store<u8>(p, Format.UINT64);
      store<u64>(p, bswap<u64>(v), 1);
      this.len += 9;
    }
  }

  /** Appends n bytes at src as bin. */
  writeBinRaw(src: usize, n: usize): void {
    let p = this.ensure(n + 5);
    let h: usize;
    if (n <= 0xff) {
      store<u8>(p, Format.BIN8);
      store<u8>(p, <u8>n, 1);
      h = 2;
    } else if (n <= 0xffff) {
      store<u8>(p, Format.BIN16);
      store<u16>(p, bswap<u16>(<u16>n), 1);
      h = 3;
    } else {
      store<u8>(p, Format.BIN32);
      store<u32>(p, bswap<u32>(<u32>n), 1);
      h = 5;
    }
    memory.copy(p + h, src, n);
    this.len += h + n;
  }

  /** Appends b as bin, or nil when b is null. A null is not an empty array: Kafka tells a null key from an empty one. */
  writeBin(b: Uint8Array | null): void {
    if (b == null) {
      this.writeByte(Format.NIL);
      return;
    }
    this.writeBinRaw(b.dataStart, <usize>b.byteLength);
  }

  /** Appends the n UTF-8 bytes at src as str. */
  writeStrRaw(src: usize, n: usize): void {
    let p = this.ensure(n + 5);
    let h = this.strHeader(p, n);
    memory.copy(p + h, src, n);
    this.len += h + n;
  }

  /** Appends s, encoded as UTF-8, as str. */
  writeStr(s: string): void {
    let n = <usize>String.UTF8.byteLength(s);
    let p = this.ensure(n + 5);
    let h = this.strHeader(p, n);
    String.UTF8.encodeUnsafe(changetype<usize>(s), s.length, p + h);
    this.len += h + n;
  }

  private strHeader(p: usize, n: usize): usize {
    if (n < 32) {
      store<u8>(p, <u8>(0xa0 | n));
      return 1;
    }
    if (n <= 0xff) {
      store<u8>(p, Format.STR8);
      store<u8>(p, <u8>n, 1);
      return 2;
    }
    if (n <= 0xffff) {
      store<u8>(p, Format.STR16);
      store<u16>(p, bswap<u16>(<u16>n), 1);
      return 3;
    }
    store<u8>(p, Format.STR32);
    store<u32>(p, bswap<u32>(<u32>n), 1);
    return 5;
  }

  /** Appends the header of an array of n elements. */
  writeArrayHeader(n: i32): void {
    this.collection(n, 0x90, Format.ARRAY16, Format.ARRAY32);
  }

  /** Appends the header of a map of n pairs. */
  writeMapHeader(n: i32): void {
    this.collection(n, 0x80, Format.MAP16, Format.MAP32);
  }

  private collection(n: i32, fix: u8, f16: u8, f32: u8): void {
    let p = this.ensure(5);
    let u = <u32>n;
    if (u < 16) {
      store<u8>(p, fix | <u8>u);
      this.len += 1;
    } else if (u <= 0xffff) {
      store<u8>(p, f16);
      store<u16>(p, bswap<u16>(<u16>u), 1);
      this.len += 3;
    } else {
      store<u8>(p, f32);
      store<u32>(p, bswap<u32>(u), 1);
      this.len += 5;
    }
  }

  /** Returns a copy of the bytes written. */
  toBytes(): Uint8Array {
    let b = new Uint8Array(<i32>this.len);
    memory.copy(b.dataStart, this.ptr, this.len);
    return b;
  }
}
