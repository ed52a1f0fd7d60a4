// Splitting text into words separated by white space, as Go's bytes.Fields
// does (Unicode white space; invalid UTF-8 is part of a word), one word at a
// time and without allocating.

import { decodeRune, isSpace, runeWidth } from "./utf8";

/** The end (exclusive index) of the word found by nextWord. */
export let wordEnd: usize = 0;

/** Returns the width of the white-space character at i, or 0 if there is none. */
function space(p: usize, i: usize, n: usize): usize {
  let c = <u32>load<u8>(p + i);
  if (c < 0x80) return c == 0x20 || (c >= 0x09 && c <= 0x0d) ? 1 : 0;
  let r = decodeRune(p + i, p + n);
  return isSpace(r) ? <usize>runeWidth : 0;
}

/**
 * Finds the first word of the n bytes at p at or after index i: returns its
 * start index and leaves its end in wordEnd, or returns -1 when no word is
 * left.
 *
 *	for (let i = nextWord(p, n, 0); i >= 0; i = nextWord(p, n, wordEnd)) {
 *	  // the word is [i, wordEnd)
 *	}
 */
export function nextWord(p: usize, n: usize, i: usize): isize {
  while (i < n) {
    let w = space(p, i, n);
    if (w == 0) break;
    i += w;
  }
  if (i >= n) {
    wordEnd = n;
    return -1;
  }
  let start = i;
  while (i < n) {
    if (space(p, i, n) != 0) break;
    if (load<u8>(p + i) < 0x80) {
      i++;
    } else {
      decodeRune(p + i, p + n);
      i += <usize>runeWidth;
    }
  }
  wordEnd = i;
  return <isize>start;
}
