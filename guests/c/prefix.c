/*
 * prefix is a configured Eddy map function, as guests/go/prefix: it puts
 * the value of its step's config entry "prefix" in front of each record's
 * value (a null value becomes the prefix alone); without the entry (or with
 * an empty one) it passes records unchanged. It reads the entry once per
 * instance, on its first record.
 *
 * Build (from guests/c; build.sh builds every guest the same way):
 *
 *	clang-19 --target=wasm32 -nostdlib -mbulk-memory -msimd128 -O2 -s -ffile-prefix-map=$PWD=. \
 *		-I../../sdk/c -Iinternal -Wl,--no-entry -o ../../testdata/c/prefix.wasm prefix.c
 */
#include "eddy.h"

/* prefix is the entry "prefix", copied out of the SDK's buffer (which the
 * next eddy_config_get reuses); empty without it. prefix_read says it was
 * read. */
static eddy_bytes_t prefix;
static bool prefix_read;

static int add(const eddy_record_t *in, eddy_record_t *out)
{
	if (!prefix_read) {
		eddy_bytes_t v;
		if (eddy_config_get("prefix", &v) && v.len) {
			uint8_t *p = (uint8_t *)eddy_malloc(v.len);
			if (!p)
				eddy_panic("prefix: out of memory"); /* as Go would crash */
			memcpy(p, v.ptr, v.len);
			prefix = eddy_bytes(p, v.len);
		}
		prefix_read = true;
	}
	if (!prefix.len)
		return EDDY_OK; /* out is already a copy of in */
	uint8_t *v = (uint8_t *)eddy_scratch(prefix.len + in->value.len);
	memcpy(v, prefix.ptr, prefix.len);
	if (in->value.len)
		memcpy(v + prefix.len, in->value.ptr, in->value.len);
	out->value = eddy_bytes(v, prefix.len + in->value.len);
	return EDDY_OK;
}

EDDY_MODULE(.name = "prefix", .version = "1.0.0", .map = add);
