/*
 * text.h - the UTF-8 text handling of the C reference guests, written to
 * give exactly the results of Go's unicode/utf8, unicode and bytes packages,
 * which the Go guests use:
 *
 *   - tx_decode_rune / tx_append_rune: utf8.DecodeRune (invalid sequences
 *     are one byte wide) and utf8.AppendRune;
 *   - tx_to_upper: unicode.ToUpper (simple case mapping, from a table
 *     generated from Go's own, upper_table.h);
 *   - tx_is_space and tx_next_word: unicode.IsSpace, and words separated by
 *     white space as bytes.Fields splits them, one at a time.
 *
 * Header-only and freestanding.
 */
#ifndef EDDY_GUESTS_TEXT_H
#define EDDY_GUESTS_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "eddy.h"
#include "upper_table.h"

/* TX_RUNE_ERROR is U+FFFD, what Go decodes an invalid sequence as. */
#define TX_RUNE_ERROR 0xfffd

/*
 * tx_decode_rune decodes the UTF-8 sequence at s[0..n) (n >= 1) as Go's
 * utf8.DecodeRune: it returns the rune and its width in *size, or -1 with
 * *size 1 for an invalid or incomplete sequence (Go returns U+FFFD, 1).
 * Surrogates, overlong forms and runes above U+10FFFF are invalid.
 */
static inline int32_t tx_decode_rune(const uint8_t *s, size_t n, size_t *size)
{
	uint8_t c = s[0];
	*size = 1;
	if (c < 0x80)
		return c;
	size_t need;
	uint8_t lo = 0x80, hi = 0xbf;
	int32_t r;
	if (c >= 0xc2 && c <= 0xdf) {
		need = 2;
		r = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		need = 3;
		r = c & 0x0f;
		if (c == 0xe0)
			lo = 0xa0;
		else if (c == 0xed)
			hi = 0x9f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		need = 4;
		r = c & 0x07;
		if (c == 0xf0)
			lo = 0x90;
		else if (c == 0xf4)
			hi = 0x8f;
	} else {
		return -1;
	}
	if (n < need || s[1] < lo || s[1] > hi)
		return -1;
	r = r << 6 | (s[1] & 0x3f);
	for (size_t i = 2; i < need; i++) {
		if (s[i] < 0x80 || s[i] > 0xbf)
			return -1;
		r = r << 6 | (s[i] & 0x3f);
	}
	*size = need;
	return r;
}

/* tx_encode_rune writes the UTF-8 form of r to p (4 bytes of room) and
 * returns its length; invalid runes (surrogates, above U+10FFFF) are written
 * as U+FFFD, as utf8.AppendRune does. */
static inline size_t tx_encode_rune(uint8_t *p, int32_t r)
{
	if (r >= 0 && r < 0x80) {
		p[0] = (uint8_t)r;
		return 1;
	}
	if (r >= 0 && r < 0x800) {
		p[0] = (uint8_t)(0xc0 | r >> 6);
		p[1] = (uint8_t)(0x80 | (r & 0x3f));
		return 2;
	}
	if (r < 0 || r > 0x10ffff || (r >= 0xd800 && r <= 0xdfff))
		r = TX_RUNE_ERROR;
	if (r < 0x10000) {
		p[0] = (uint8_t)(0xe0 | r >> 12);
		p[1] = (uint8_t)(0x80 | ((r >> 6) & 0x3f));
		p[2] = (uint8_t)(0x80 | (r & 0x3f));
		return 3;
	}
	p[0] = (uint8_t)(0xf0 | r >> 18);
	p[1] = (uint8_t)(0x80 | ((r >> 12) & 0x3f));
	p[2] = (uint8_t)(0x80 | ((r >> 6) & 0x3f));
	p[3] = (uint8_t)(0x80 | (r & 0x3f));
	return 4;
}

/* tx_to_upper maps r to upper case as Go's unicode.ToUpper does; runes
 * without a single-rune upper case (ß) are returned unchanged. */
static inline int32_t tx_to_upper(int32_t r)
{
	if (r < 0x80)
		return r >= 'a' && r <= 'z' ? r - ('a' - 'A') : r;
	/* The last range that starts at or before r. */
	size_t lo = 0, hi = sizeof tx_upper_ranges / sizeof tx_upper_ranges[0];
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if ((int32_t)(tx_upper_ranges[mid].packed & 0x1fffff) <= r)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return r;
	uint32_t p = tx_upper_ranges[lo - 1].packed;
	int32_t start = (int32_t)(p & 0x1fffff), len = (int32_t)(p >> 21 & 0xff);
	bool stride2 = p >> 29 & 1;
	if (r > start + len || (stride2 && ((r - start) & 1)))
		return r;
	return r + tx_upper_ranges[lo - 1].delta;
}

/* tx_is_space reports whether r is white space as Go's unicode.IsSpace
 * defines it (Unicode's White_Space property). */
static inline bool tx_is_space(int32_t r)
{
	switch (r) {
	case '\t':
	case '\n':
	case '\v':
	case '\f':
	case '\r':
	case ' ':
	case 0x85:
	case 0xa0:
	case 0x1680:
	case 0x2028:
	case 0x2029:
	case 0x202f:
	case 0x205f:
	case 0x3000:
		return true;
	}
	return r >= 0x2000 && r <= 0x200a;
}

/* tx__space returns the width of the white-space character at s[i], or 0
 * if there is none (invalid UTF-8 is part of a word). */
static inline size_t tx__space(const uint8_t *s, size_t n, size_t i)
{
	uint8_t c = s[i];
	if (c < 0x80)
		return (c >= '\t' && c <= '\r') || c == ' ' ? 1 : 0;
	size_t size;
	int32_t r = tx_decode_rune(s + i, n - i, &size);
	return r >= 0 && tx_is_space(r) ? size : 0;
}

/*
 * tx_next_word finds the first word of s[0..n) at or after byte *i, as
 * bytes.Fields splits: it returns true with the word in *word (a view into
 * s) and *i just after it, or false when no word is left.
 *
 *     size_t i = 0;
 *     eddy_bytes_t w;
 *     while (tx_next_word(s, n, &i, &w))
 *             ...
 */
static inline bool tx_next_word(const uint8_t *s, size_t n, size_t *i, eddy_bytes_t *word)
{
	size_t j = *i, w;
	while (j < n && (w = tx__space(s, n, j)) != 0)
		j += w;
	if (j >= n) {
		*i = n;
		return false;
	}
	size_t start = j;
	while (j < n && tx__space(s, n, j) == 0) {
		if (s[j] < 0x80) {
			j++;
		} else {
			size_t size;
			tx_decode_rune(s + j, n - j, &size);
			j += size;
		}
	}
	word->ptr = s + start;
	word->len = j - start;
	*i = j;
	return true;
}

#endif /* EDDY_GUESTS_TEXT_H */
