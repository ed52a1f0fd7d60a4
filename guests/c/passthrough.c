/*
 * passthrough is an Eddy process function that returns every record
 * unchanged: the baseline for benchmarks of the host and the C SDK.
 *
 * Build (from guests/c; build.sh builds every guest the same way):
 *
 *	clang-19 --target=wasm32 -nostdlib -mbulk-memory -msimd128 -O2 -s -ffile-prefix-map=$PWD=. \
 *		-I../../sdk/c -Iinternal -Wl,--no-entry -o ../../testdata/c/passthrough.wasm passthrough.c
 */
#include "eddy.h"

static int passthrough(const eddy_record_t *in, eddy_record_t *out)
{
	(void)in;
	(void)out; /* already a copy of in */
	return EDDY_OK;
}

EDDY_MODULE(.name = "passthrough", .version = "1.0.0", .map = passthrough);
