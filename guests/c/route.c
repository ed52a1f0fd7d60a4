/*
 * route is an Eddy process function (a map) that sends each record to a
 * named output of its step by the first byte of its value, as guests/go/route
 * does: a value starting with '{' (a JSON object) to the output "objects",
 * one starting with an ASCII digit to "numbers"; any other record, and a
 * null or empty value, stays the step's own output. Records keep their key,
 * value, timestamp and headers. It is the conformance reference "route"
 * (ABI.md, "Named outputs").
 *
 * Build (from guests/c; build.sh builds every guest the same way):
 *
 *	clang-19 --target=wasm32 -nostdlib -mbulk-memory -msimd128 -O2 -s -ffile-prefix-map=$PWD=. \
 *		-I../../sdk/c -Iinternal -Wl,--no-entry -o ../../testdata/c/route.wasm route.c
 */
#include "eddy.h"

static int route(const eddy_record_t *in, eddy_record_t *out)
{
	if (!in->value.len) /* null or empty */
		return EDDY_OK;
	uint8_t c = in->value.ptr[0];
	if (c == '{')
		eddy_record_to_output(out, "objects");
	else if (c >= '0' && c <= '9')
		eddy_record_to_output(out, "numbers");
	return EDDY_OK;
}

EDDY_MODULE(.name = "route", .version = "1.0.0", .map = route);
