/*
 * filter is an Eddy process function that keeps the records whose value is
 * a JSON object with a top-level numeric member "amount" of at least 100,
 * and drops the others, as guests/go/filter does:
 *
 *   - a value that is not a JSON object (including invalid JSON and a null
 *     value) fails with BAD_INPUT;
 *   - an object without "amount", or whose "amount" is not a number, is
 *     dropped;
 *   - "amount" inside nested objects or strings does not count; if the name
 *     repeats, the last one counts (as with encoding/json).
 *
 * The scan (internal/jsonscan.h) is allocation-free.
 *
 * Build (from guests/c; build.sh builds every guest the same way):
 *
 *	clang-19 --target=wasm32 -nostdlib -mbulk-memory -msimd128 -O2 -s -ffile-prefix-map=$PWD=. \
 *		-I../../sdk/c -Iinternal -Wl,--no-entry -o ../../testdata/c/filter.wasm filter.c
 */
#include "eddy.h"
#include "jsonscan.h"

/* THRESHOLD is the smallest amount kept. */
#define THRESHOLD 100

static int keep(const eddy_record_t *in, bool *keep)
{
	eddy_bytes_t v;
	switch (js_field(in->value.ptr, in->value.len, "amount", &v)) {
	case JS_SYNTAX:
		return eddy_bad_input(JS_ERR_SYNTAX);
	case JS_NOT_OBJECT:
		return eddy_bad_input(JS_ERR_NOT_OBJECT);
	}
	if (!v.ptr || !js_is_number(v))
		return EDDY_OK; /* *keep is preset to false: dropped */
	/* A JSON number always parses; one too large for a float64 is ±Inf,
	 * which still compares correctly. */
	double amount;
	js_float(v, &amount);
	*keep = amount >= THRESHOLD;
	return EDDY_OK;
}

EDDY_MODULE(.name = "filter", .version = "1.0.0", .filter = keep);
