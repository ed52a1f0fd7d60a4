// Quoting bytes for error messages, close to Go's %q.

import { decodeRune, runeWidth, RUNE_ERROR } from "./utf8";

const HEX = "0123456789abcdef";

/**
 * Returns b as a double-quoted string with Go's escapes: \" and \\, \a \b
 * \f \n \r \t \v, \xNN for other control bytes and for invalid UTF-8; valid
 * non-ASCII characters are kept as they are.
 */
export function quote(b: Uint8Array): string {
  let s = "\"";
  let p = b.dataStart, end = p + <usize>b.byteLength;
  while (p < end) {
    let c = <u32>load<u8>(p);
    if (c >= 0x80) {
      let r = decodeRune(p, end);
      if (r == RUNE_ERROR && runeWidth == 1) {
        s += "\\x" + HEX.charAt(c >> 4) + HEX.charAt(c & 15);
      } else {
        s += String.fromCodePoint(r);
      }
      p += <usize>runeWidth;
      continue;
    }
    p++;
    if (c == 0x22) s += "\\\"";
    else if (c == 0x5c) s += "\\\\";
    else if (c >= 0x20 && c < 0x7f) s += String.fromCharCode(c);
    else if (c == 0x07) s += "\\a";
    else if (c == 0x08) s += "\\b";
    else if (c == 0x0c) s += "\\f";
    else if (c == 0x0a) s += "\\n";
    else if (c == 0x0d) s += "\\r";
    else if (c == 0x09) s += "\\t";
    else if (c == 0x0b) s += "\\v";
    else s += "\\x" + HEX.charAt(c >> 4) + HEX.charAt(c & 15);
  }
  return s + "\"";
}
