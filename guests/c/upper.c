/*
 * upper is an Eddy process function that upper-cases record values, as
 * guests/go/upper does.
 *
 * ASCII values (the common case) are upper-cased 16 bytes at a time with
 * Wasm SIMD into scratch memory (the SDK copies the result and reuses the
 * memory for the next record), with no allocation. A value with non-ASCII bytes takes a
 * slow path that maps every rune as Go's unicode.ToUpper does
 * ("straße" → "STRAßE": Go's simple case mapping has no upper case for ß);
 * invalid UTF-8 bytes are kept as they are. A null value stays null; the
 * key, timestamp and headers are kept.
 *
 * Build (from guests/c; build.sh builds every guest the same way):
 *
 *	clang-19 --target=wasm32 -nostdlib -mbulk-memory -msimd128 -O2 -s -ffile-prefix-map=$PWD=. \
 *		-I../../sdk/c -Iinternal -Wl,--no-entry -o ../../testdata/c/upper.wasm upper.c
 */
#include "eddy.h"
#include "text.h"

#ifdef __wasm_simd128__
#include <wasm_simd128.h>

/* up16 upper-cases sixteen ASCII bytes: those in 'a'..'z' lose the case bit
 * 0x20. */
static inline v128_t up16(v128_t v)
{
	v128_t lower = wasm_u8x16_lt(wasm_i8x16_sub(v, wasm_i8x16_splat('a')), wasm_i8x16_splat(26));
	return wasm_v128_xor(v, wasm_v128_and(lower, wasm_i8x16_splat(0x20)));
}

/* any_high reports whether any byte of the four vectors is not ASCII. */
static inline bool any_high(v128_t a, v128_t b, v128_t c, v128_t d)
{
	return wasm_i8x16_bitmask(wasm_v128_or(wasm_v128_or(a, b), wasm_v128_or(c, d))) != 0;
}

/*
 * upper_ascii writes the upper-case form of s[0..n) to d and reports true,
 * or reports false if s is not all ASCII (d is then garbage).
 *
 * With the host's default interruptible calls, wazero checks for an
 * interruption at every loop iteration, which costs more than upper-casing
 * 64 bytes; so the loop takes 128 bytes at a time and what is left (under
 * 128 bytes) is done without a loop, as up to four 16-byte blocks and a last
 * one that overlaps bytes already done (reading s, so doing them twice is
 * harmless).
 */
static bool upper_ascii(uint8_t *d, const uint8_t *s, size_t n)
{
	if (n < 16) {
		for (size_t i = 0; i < n; i++) {
			uint8_t c = s[i];
			if (c >= 0x80)
				return false;
			d[i] = c >= 'a' && c <= 'z' ? c - ('a' - 'A') : c;
		}
		return true;
	}
	size_t i = 0;
	for (; n - i >= 128; i += 128) {
		v128_t x[8];
		for (int k = 0; k < 8; k++)
			x[k] = wasm_v128_load(s + i + 16 * k);
		if (any_high(wasm_v128_or(x[0], x[1]), wasm_v128_or(x[2], x[3]), wasm_v128_or(x[4], x[5]),
			     wasm_v128_or(x[6], x[7])))
			return false;
		for (int k = 0; k < 8; k++)
			wasm_v128_store(d + i + 16 * k, up16(x[k]));
	}
	if (n - i >= 64) {
		v128_t a = wasm_v128_load(s + i), b = wasm_v128_load(s + i + 16);
		v128_t c = wasm_v128_load(s + i + 32), e = wasm_v128_load(s + i + 48);
		if (any_high(a, b, c, e))
			return false;
		wasm_v128_store(d + i, up16(a));
		wasm_v128_store(d + i + 16, up16(b));
		wasm_v128_store(d + i + 32, up16(c));
		wasm_v128_store(d + i + 48, up16(e));
		i += 64;
	}
	size_t left = n - i;
	v128_t last = wasm_v128_load(s + n - 16), a = last, b = last, c = last;
	if (left >= 16)
		a = wasm_v128_load(s + i);
	if (left >= 32)
		b = wasm_v128_load(s + i + 16);
	if (left >= 48)
		c = wasm_v128_load(s + i + 32);
	if (any_high(last, a, b, c))
		return false;
	if (left >= 16)
		wasm_v128_store(d + i, up16(a));
	if (left >= 32)
		wasm_v128_store(d + i + 16, up16(b));
	if (left >= 48)
		wasm_v128_store(d + i + 32, up16(c));
	wasm_v128_store(d + n - 16, up16(last));
	return true;
}

#else /* no SIMD (a native build for tests, or -mno-simd128): 8 bytes at a time */

#define ONES 0x0101010101010101ull
#define HIGH 0x8080808080808080ull

typedef uint64_t __attribute__((aligned(1), may_alias)) u64u;

/* upper8 upper-cases eight ASCII bytes held in x. For bytes below 0x80,
 * adding 0x80-'a' sets the high bit of those >= 'a' and adding 0x80-'z'-1
 * that of those > 'z', so the difference marks 'a'..'z'; 0x20 is the case
 * bit. */
static inline uint64_t upper8(uint64_t x)
{
	uint64_t lower = (x + (0x80 - 'a') * ONES) & ~(x + (0x80 - 'z' - 1) * ONES) & HIGH;
	return x ^ lower >> 2;
}

/* upper_ascii writes the upper-case form of s[0..n) to d and reports true,
 * or reports false if s is not all ASCII (d is then garbage). */
static bool upper_ascii(uint8_t *d, const uint8_t *s, size_t n)
{
	size_t i = 0;
	for (; n - i >= 8; i += 8) {
		uint64_t x = *(const u64u *)(s + i);
		if (x & HIGH)
			return false;
		*(u64u *)(d + i) = upper8(x);
	}
	if (i == n)
		return true;
	if (n >= 8) {
		/* Fewer than 8 bytes left: redo the last 8, which overlap bytes
		 * already done. */
		uint64_t x = *(const u64u *)(s + n - 8);
		if (x & HIGH)
			return false;
		*(u64u *)(d + n - 8) = upper8(x);
		return true;
	}
	for (; i < n; i++) {
		uint8_t c = s[i];
		if (c >= 0x80)
			return false;
		d[i] = c >= 'a' && c <= 'z' ? c - ('a' - 'A') : c;
	}
	return true;
}
#endif

/* upper_slow writes the upper-case form of any s[0..n) to d, rune by rune,
 * and returns its length. d must hold 2n bytes: a rune's upper case is at
 * most twice as long as the rune. */
static size_t upper_slow(uint8_t *d, const uint8_t *s, size_t n)
{
	size_t o = 0;
	for (size_t i = 0; i < n;) {
		uint8_t c = s[i];
		if (c < 0x80) {
			d[o++] = c >= 'a' && c <= 'z' ? c - ('a' - 'A') : c;
			i++;
			continue;
		}
		size_t size;
		int32_t r = tx_decode_rune(s + i, n - i, &size);
		if (r < 0)
			d[o++] = c; /* keep invalid bytes */
		else
			o += tx_encode_rune(d + o, tx_to_upper(r));
		i += size;
	}
	return o;
}

static int upper(const eddy_record_t *in, eddy_record_t *out)
{
	const uint8_t *s = in->value.ptr;
	size_t n = in->value.len;
	if (!s)
		return EDDY_OK;
	uint8_t *d = eddy_scratch(n);
	if (upper_ascii(d, s, n)) {
		out->value = eddy_bytes(d, n);
		return EDDY_OK;
	}
	d = eddy_scratch(2 * n);
	out->value = eddy_bytes(d, upper_slow(d, s, n));
	return EDDY_OK;
}

EDDY_MODULE(.name = "upper", .version = "1.0.0", .map = upper);
