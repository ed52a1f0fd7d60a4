/*
 * split is an Eddy process function (a flat map) that splits a record's
 * value on white space (Unicode, as Go's strings.Fields) into one record per
 * word, with the input's key and timestamp and no headers, as
 * guests/go/split does. An empty or blank value, or a null one, gives no
 * records.
 *
 * The output records are views into the input value: eddy_emit encodes each
 * one at once.
 *
 * Build (from guests/c; build.sh builds every guest the same way):
 *
 *	clang-19 --target=wasm32 -nostdlib -mbulk-memory -msimd128 -O2 -s -ffile-prefix-map=$PWD=. \
 *		-I../../sdk/c -Iinternal -Wl,--no-entry -o ../../testdata/c/split.wasm split.c
 */
#include "eddy.h"
#include "text.h"

static int split(const eddy_record_t *in, eddy_emitter_t *out)
{
	eddy_record_t rec = {.key = in->key, .timestamp = in->timestamp};
	size_t i = 0;
	if (!in->value.ptr)
		return EDDY_OK;
	while (tx_next_word(in->value.ptr, in->value.len, &i, &rec.value))
		eddy_emit(out, &rec);
	return EDDY_OK;
}

EDDY_MODULE(.name = "split", .version = "1.0.0", .flat_map = split);
