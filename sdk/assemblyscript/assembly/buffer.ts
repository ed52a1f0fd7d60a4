import { newView, pointView } from "./views";

/**
 * A growable byte buffer for building output values without allocating per
 * record: keep one in a global, reset it for every record, append to it and
 * return view(). The SDK copies a handler's result before it calls the
 * handler again, so the same buffer can serve every record.
 *
 *	const buf = new eddy.ByteBuffer();
 *
 *	function greet(r: eddy.Record): eddy.Record {
 *	  r.value = buf.reset().appendString("hello, ").append(r.value).view();
 *	  return r;
 *	}
 *
 * view() returns the same Uint8Array object every time, re-pointed at the
 * bytes written so far: it is valid until the buffer is next changed.
 */
export class ByteBuffer {
  private buf: ArrayBuffer;
  private v: Uint8Array = newView();
  private len: i32 = 0;

  constructor(capacity: i32 = 64) {
    this.buf = new ArrayBuffer(max(capacity, 8));
  }

  /** The number of bytes written. */
  get length(): i32 {
    return this.len;
  }

  /** The address of the first byte; it changes when the buffer grows. */
  get dataStart(): usize {
    return changetype<usize>(this.buf);
  }

  /** Empties the buffer, keeping its memory, and returns it. */
  reset(): ByteBuffer {
    this.len = 0;
    return this;
  }

  /** Makes room for n more bytes and returns the address where they go; call commit(n) after writing them. */
  reserve(n: i32): usize {
    let need = this.len + n;
    let cap = this.buf.byteLength;
    if (need > cap) {
      let nb = new ArrayBuffer(max(need, cap << 1));
      memory.copy(changetype<usize>(nb), changetype<usize>(this.buf), <usize>this.len);
      this.buf = nb;
    }
    return changetype<usize>(this.buf) + <usize>this.len;
  }

  /** Adds n bytes written after reserve to the length. */
  commit(n: i32): void {
    this.len += n;
  }

  /**
   * Sets the length to n, growing the buffer if needed (bytes already
   * written are kept; new ones are unspecified), and returns view().
   */
  resize(n: i32): Uint8Array {
    if (n > this.len) this.reserve(n - this.len);
    this.len = n;
    return this.view();
  }

  /** Appends one byte. */
  push(b: u8): ByteBuffer {
    store<u8>(this.reserve(1), b);
    this.len++;
    return this;
  }

  /** Appends the bytes of b (nothing for null). */
  append(b: Uint8Array | null): ByteBuffer {
    if (b != null) this.appendRaw(b.dataStart, b.byteLength);
    return this;
  }

  /** Appends the n bytes at ptr. */
  appendRaw(ptr: usize, n: i32): ByteBuffer {
    memory.copy(this.reserve(n), ptr, <usize>n);
    this.len += n;
    return this;
  }

  /** Appends s encoded as UTF-8. */
  appendString(s: string): ByteBuffer {
    let n = String.UTF8.byteLength(s);
    String.UTF8.encodeUnsafe(changetype<usize>(s), s.length, this.reserve(n));
    this.len += n;
    return this;
  }

  /** Appends v in decimal. */
  appendI64(v: i64): ByteBuffer {
    if (v < 0) {
      this.push(0x2d); // '-'
      return this.appendU64(<u64>-v); // i64.MIN_VALUE negates to itself, which is right as a u64
    }
    return this.appendU64(<u64>v);
  }

  /** Appends v in decimal. */
  appendU64(v: u64): ByteBuffer {
    let k = 1;
    for (let t = v; t >= 10; t /= 10) k++;
    let p = this.reserve(k) + <usize>k;
    do {
      store<u8>(--p, <u8>(0x30 + <u32>(v % 10)));
      v /= 10;
    } while (v != 0);
    this.len += k;
    return this;
  }

  /**
   * Returns a view of the bytes written. The view object is reused: it is
   * valid until the buffer next changes, and must be copied (slice()) to be
   * kept.
   */
  view(): Uint8Array {
    pointView(this.v, this.buf, changetype<usize>(this.buf), this.len);
    return this.v;
  }

  /** Returns a copy of the bytes written. */
  toBytes(): Uint8Array {
    let b = new Uint8Array(this.len);
    memory.copy(b.dataStart, changetype<usize>(this.buf), <usize>this.len);
    return b;
  }
}
