// Upper-casing as Go's unicode.ToUpper does it: the simple (one code point to
// one code point) case mapping of Unicode, so "straße" becomes "STRAßE" (ß has
// no single-code-point upper case) rather than "STRASSE".

import { casemap } from "util/casemap";
import { ByteBuffer } from "../../../sdk/assemblyscript/assembly/index";
import { decodeRune, encodeRune, runeWidth, RUNE_ERROR } from "./utf8";

/**
 * Returns the upper case of rune r, or r if it has none.
 *
 * AssemblyScript's standard library maps with musl's case tables; they differ
 * from Go's (Unicode 15) in a few places, fixed here: musl upper-cases ß to ẞ,
 * which Go does not, and lacks the letters added in Unicode 14.
 */
export function toUpper(r: u32): u32 {
  if (r < 0x80) return r - 0x61 < 26 ? r - 0x20 : r;
  if (r < 0x100) return (r >= 0xe0 && r != 0xf7 && r != 0xff) ? r - 0x20 : r == 0xb5 ? 0x39c : r == 0xff ? 0x178 : r;
  if (r >= 0x20000) return r;
  if (r - 0x24d0 <= 0x24e9 - 0x24d0) return r - 26; // circled letters, which casemap does not cover
  if (r >= 0x10597 && r <= 0x105bc) {
    // Vithkuqi (Unicode 14): lower case letters, with three gaps.
    return r == 0x105a2 || r == 0x105b2 || r == 0x105ba ? r : r - 0x27;
  }
  switch (r) {
    case 0x2c5f: return 0x2c2f;
    case 0xa7c1: return 0xa7c0;
    case 0xa7d1: return 0xa7d0;
    case 0xa7d7: return 0xa7d6;
    case 0xa7d9: return 0xa7d8;
  }
  return <u32>(casemap(r, 1) & 0x1fffff);
}

// @ts-ignore: decorator
@inline const HIGH: u64 = 0x8080808080808080;
// @ts-ignore: decorator
@inline const ONES: u64 = 0x0101010101010101;

/**
 * Upper-cases eight ASCII bytes held in x. For bytes below 0x80, adding
 * 0x80-'a' sets the high bit of those >= 'a' and adding 0x80-'z'-1 that of
 * those > 'z', so the difference marks 'a'..'z'; 0x20 is the case bit.
 */
// @ts-ignore: decorator
@inline function upper8(x: u64): u64 {
  let lower = (x + (0x80 - 0x61) * ONES) & ~(x + (0x80 - 0x7a - 1) * ONES) & HIGH;
  return x ^ (lower >> 2);
}

/** Upper-cases the 64 ASCII bytes at s into d, or returns false if one is not ASCII. */
// @ts-ignore: decorator
@inline function upper64(q: usize, p: usize): bool {
  let x0 = load<u64>(p), x1 = load<u64>(p, 8), x2 = load<u64>(p, 16), x3 = load<u64>(p, 24);
  let x4 = load<u64>(p, 32), x5 = load<u64>(p, 40), x6 = load<u64>(p, 48), x7 = load<u64>(p, 56);
  if (((x0 | x1 | x2 | x3 | x4 | x5 | x6 | x7) & HIGH) != 0) return false;
  store<u64>(q, upper8(x0));
  store<u64>(q, upper8(x1), 8);
  store<u64>(q, upper8(x2), 16);
  store<u64>(q, upper8(x3), 24);
  store<u64>(q, upper8(x4), 32);
  store<u64>(q, upper8(x5), 40);
  store<u64>(q, upper8(x6), 48);
  store<u64>(q, upper8(x7), 56);
  return true;
}

/**
 * Writes the upper case of the n ASCII bytes at s to d and returns true, or
 * returns false as soon as it meets a byte that is not ASCII (d then holds
 * garbage).
 *
 * # Why it is written out
 *
 * Under the Eddy host every loop iteration costs a check (wazero, with
 * calls interruptible by their deadline, tests for cancellation at every
 * loop header), as much as upper-casing some 50 bytes. So the loop does 128
 * bytes per iteration and is entered only for values that long, the rest is
 * done in straight 64-, 32-, 16- and 8-byte steps, and the last bytes as one
 * overlapping word (or, below 8 bytes, 4, 2 and 1): a value of up to 127
 * bytes takes no loop at all.
 */
export function upperASCII(d: usize, s: usize, n: usize): bool {
  let i: usize = 0;
  if (n >= 128) {
    do {
      if (!upper64(d + i, s + i) || !upper64(d + i + 64, s + i + 64)) return false;
      i += 128;
    } while (n - i >= 128);
  }
  if (n - i >= 64) {
    if (!upper64(d + i, s + i)) return false;
    i += 64;
  }
  if (n - i >= 32) {
    let p = s + i, q = d + i;
    let x0 = load<u64>(p), x1 = load<u64>(p, 8), x2 = load<u64>(p, 16), x3 = load<u64>(p, 24);
    if (((x0 | x1 | x2 | x3) & HIGH) != 0) return false;
    store<u64>(q, upper8(x0));
    store<u64>(q, upper8(x1), 8);
    store<u64>(q, upper8(x2), 16);
    store<u64>(q, upper8(x3), 24);
    i += 32;
  }
  if (n - i >= 16) {
    let p = s + i, q = d + i;
    let x0 = load<u64>(p), x1 = load<u64>(p, 8);
    if (((x0 | x1) & HIGH) != 0) return false;
    store<u64>(q, upper8(x0));
    store<u64>(q, upper8(x1), 8);
    i += 16;
  }
  if (n - i >= 8) {
    let x = load<u64>(s + i);
    if ((x & HIGH) != 0) return false;
    store<u64>(d + i, upper8(x));
    i += 8;
  }
  if (i == n) return true;
  if (n >= 8) {
    // Fewer than 8 bytes left: redo the last 8, which overlap bytes already
    // done (reading s, so doing them twice is harmless).
    let x = load<u64>(s + n - 8);
    if ((x & HIGH) != 0) return false;
    store<u64>(d + n - 8, upper8(x));
    return true;
  }
  // A value of fewer than 8 bytes: 4, 2 and 1 at a time (upper8 leaves the
  // zero bytes above them alone).
  if (n - i >= 4) {
    let x = <u64>load<u32>(s + i);
    if ((x & HIGH) != 0) return false;
    store<u32>(d + i, <u32>upper8(x));
    i += 4;
  }
  if (n - i >= 2) {
    let x = <u64>load<u16>(s + i);
    if ((x & HIGH) != 0) return false;
    store<u16>(d + i, <u16>upper8(x));
    i += 2;
  }
  if (i < n) {
    let x = <u64>load<u8>(s + i);
    if ((x & HIGH) != 0) return false;
    store<u8>(d + i, <u8>upper8(x));
  }
  return true;
}

/**
 * Appends the upper case of the n bytes at s to buf, rune by rune. Invalid
 * UTF-8 bytes are kept as they are, or, with replaceInvalid, written as
 * U+FFFD (as Go's bytes.ToUpper does).
 */
export function appendUpper(buf: ByteBuffer, s: usize, n: usize, replaceInvalid: bool): void {
  let end = s + n;
  let p = s;
  while (p < end) {
    let c = <u32>load<u8>(p);
    if (c < 0x80) {
      buf.push(<u8>(c - 0x61 < 26 ? c - 0x20 : c));
      p++;
      continue;
    }
    let r = decodeRune(p, end);
    let w = runeWidth;
    if (r == RUNE_ERROR && w == 1 && !replaceInvalid) {
      buf.push(<u8>c); // keep invalid bytes
    } else {
      let d = buf.reserve(4);
      buf.commit(encodeRune(d, toUpper(r)));
    }
    p += <usize>w;
  }
}
