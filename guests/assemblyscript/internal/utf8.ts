// UTF-8 decoding and encoding with the rules of Go's unicode/utf8, which the
// Go reference guests use: an invalid byte (a stray continuation byte, an
// overlong form, a surrogate, a value above U+10FFFF, a truncated sequence)
// decodes as U+FFFD with width 1.

/** The replacement character that invalid bytes decode as. */
export const RUNE_ERROR: u32 = 0xfffd;

/** The width of the rune decoded by the last decodeRune. */
export let runeWidth: i32 = 0;

/**
 * Decodes the rune at p (with end the end of the text, p < end) and returns
 * it, leaving its width in runeWidth; an invalid byte gives RUNE_ERROR with
 * width 1.
 */
export function decodeRune(p: usize, end: usize): u32 {
  let b0 = <u32>load<u8>(p);
  if (b0 < 0x80) {
    runeWidth = 1;
    return b0;
  }
  let n = end - p;
  runeWidth = 1;
  if (b0 < 0xc2 || b0 > 0xf4 || n < 2) return RUNE_ERROR;
  let b1 = <u32>load<u8>(p, 1);
  if (b0 < 0xe0) {
    if ((b1 & 0xc0) != 0x80) return RUNE_ERROR;
    runeWidth = 2;
    return ((b0 & 0x1f) << 6) | (b1 & 0x3f);
  }
  // The second byte's range depends on the first (no overlong forms, no
  // surrogates, nothing above U+10FFFF).
  let lo: u32 = 0x80, hi: u32 = 0xbf;
  if (b0 == 0xe0) lo = 0xa0;
  else if (b0 == 0xed) hi = 0x9f;
  else if (b0 == 0xf0) lo = 0x90;
  else if (b0 == 0xf4) hi = 0x8f;
  if (b1 < lo || b1 > hi || n < 3) return RUNE_ERROR;
  let b2 = <u32>load<u8>(p, 2);
  if ((b2 & 0xc0) != 0x80) return RUNE_ERROR;
  if (b0 < 0xf0) {
    runeWidth = 3;
    return ((b0 & 0x0f) << 12) | ((b1 & 0x3f) << 6) | (b2 & 0x3f);
  }
  if (n < 4) return RUNE_ERROR;
  let b3 = <u32>load<u8>(p, 3);
  if ((b3 & 0xc0) != 0x80) return RUNE_ERROR;
  runeWidth = 4;
  return ((b0 & 0x07) << 18) | ((b1 & 0x3f) << 12) | ((b2 & 0x3f) << 6) | (b3 & 0x3f);
}

/** Returns the number of bytes of r encoded as UTF-8 (r must be a valid rune). */
export function runeLen(r: u32): i32 {
  if (r < 0x80) return 1;
  if (r < 0x800) return 2;
  if (r < 0x10000) return 3;
  return 4;
}

/** Writes r (a valid rune) as UTF-8 at p and returns its width. */
export function encodeRune(p: usize, r: u32): i32 {
  if (r < 0x80) {
    store<u8>(p, <u8>r);
    return 1;
  }
  if (r < 0x800) {
    store<u8>(p, <u8>(0xc0 | (r >> 6)));
    store<u8>(p, <u8>(0x80 | (r & 0x3f)), 1);
    return 2;
  }
  if (r < 0x10000) {
    store<u8>(p, <u8>(0xe0 | (r >> 12)));
    store<u8>(p, <u8>(0x80 | ((r >> 6) & 0x3f)), 1);
    store<u8>(p, <u8>(0x80 | (r & 0x3f)), 2);
    return 3;
  }
  store<u8>(p, <u8>(0xf0 | (r >> 18)));
  store<u8>(p, <u8>(0x80 | ((r >> 12) & 0x3f)), 1);
  store<u8>(p, <u8>(0x80 | ((r >> 6) & 0x3f)), 2);
  store<u8>(p, <u8>(0x80 | (r & 0x3f)), 3);
  return 4;
}

/**
 * Reports whether r is white space as Go's unicode.IsSpace defines it: the
 * ASCII spaces '\t', '\n', '\v', '\f', '\r', ' ', then U+0085, U+00A0 and the
 * space separators (category Zs) and line and paragraph separators.
 */
export function isSpace(r: u32): bool {
  if (r < 0x80) return r == 0x20 || (r >= 0x09 && r <= 0x0d);
  if (r < 0x1680) return r == 0x85 || r == 0xa0;
  return r == 0x1680 || (r >= 0x2000 && r <= 0x200a) || r == 0x2028 || r == 0x2029 || r == 0x202f || r == 0x205f || r == 0x3000;
}
