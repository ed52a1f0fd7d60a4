/*
 * joiner is an Eddy join function, as guests/go/joiner: it combines the
 * left and right values of a key, which must be JSON, into
 * {"left":L,"right":R}, with the values inserted as they are and null for a
 * missing side. A side that is present but not valid JSON (an empty value
 * included) fails the pair with BAD_INPUT; when both sides are missing
 * nothing is emitted.
 *
 * Build (from guests/c; build.sh builds every guest the same way):
 *
 *	clang-19 --target=wasm32 -nostdlib -mbulk-memory -msimd128 -O2 -s -ffile-prefix-map=$PWD=. \
 *		-I../../sdk/c -Iinternal -Wl,--no-entry -o ../../testdata/c/joiner.wasm joiner.c
 */
#include "eddy.h"
#include "jsonscan.h"

/* buf holds the joined value; the SDK copies it before the next call. */
static eddy_buf_t buf;

static void append_raw(eddy_buf_t *b, eddy_bytes_t v)
{
	if (!v.ptr)
		eddy_buf_append(b, "null", 4);
	else
		eddy_buf_append(b, v.ptr, v.len);
}

static int join(eddy_bytes_t key, eddy_bytes_t left, eddy_bytes_t right, eddy_bytes_t *out)
{
	(void)key;
	if (!left.ptr && !right.ptr)
		return EDDY_OK; /* *out is preset to null: nothing is emitted */
	if (left.ptr && !js_valid(left.ptr, left.len))
		return eddy_bad_input("left value is not valid JSON");
	if (right.ptr && !js_valid(right.ptr, right.len))
		return eddy_bad_input("right value is not valid JSON");
	buf.len = 0;
	eddy_buf_append(&buf, "{\"left\":", 8);
	append_raw(&buf, left);
	eddy_buf_append(&buf, ",\"right\":", 9);
	append_raw(&buf, right);
	eddy_buf_append(&buf, "}", 1);
	*out = eddy_bytes(buf.data, buf.len);
	return EDDY_OK;
}

EDDY_MODULE(.name = "joiner", .version = "1.0.0", .join = join);
