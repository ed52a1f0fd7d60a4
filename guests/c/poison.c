/*
 * poison is an Eddy process function for dead-letter tests, as
 * guests/go/poison. It upper-cases every value (as Go's bytes.ToUpper:
 * invalid UTF-8 becomes U+FFFD) except three:
 *
 *   - "poison" is rejected: code REJECTED, reason "poison record";
 *   - "panic" crashes: C cannot catch a crash, so the call traps and the
 *     host isolates the record (its cause is "trap", where the Go SDK
 *     reports PANIC);
 *   - "code77" fails with the user code 77, reason "code 77 record".
 *
 * Build (from guests/c; build.sh builds every guest the same way):
 *
 *	clang-19 --target=wasm32 -nostdlib -mbulk-memory -msimd128 -O2 -s -ffile-prefix-map=$PWD=. \
 *		-I../../sdk/c -Iinternal -Wl,--no-entry -o ../../testdata/c/poison.wasm poison.c
 */
#include "eddy.h"
#include "text.h"

/* to_upper writes Go's bytes.ToUpper of s[0..n) to d (room for 3n bytes:
 * an invalid byte becomes the 3 bytes of U+FFFD) and returns its length. */
static size_t to_upper(uint8_t *d, const uint8_t *s, size_t n)
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
		o += tx_encode_rune(d + o, r < 0 ? TX_RUNE_ERROR : tx_to_upper(r));
		i += size;
	}
	return o;
}

static int poison(const eddy_record_t *in, eddy_record_t *out)
{
	if (eddy_bytes_equal_cstr(in->value, "poison"))
		return eddy_reject("poison record");
	if (eddy_bytes_equal_cstr(in->value, "panic"))
		__builtin_trap(); /* the natural crash of C */
	if (eddy_bytes_equal_cstr(in->value, "code77"))
		return eddy_fail(77, "code 77 record");
	if (in->value.ptr) {
		uint8_t *d = eddy_scratch(3 * in->value.len);
		out->value = eddy_bytes(d, to_upper(d, in->value.ptr, in->value.len));
	}
	return EDDY_OK;
}

EDDY_MODULE(.name = "poison", .version = "1.0.0", .map = poison);
