/*
 * wordkey implements two Eddy kinds in one module, as guests/go/wordkey:
 *
 *   - key: the record's new key is the first white-space-separated word of
 *     its value (a null key if the value holds no word);
 *   - timestamp: the event time is the top-level integer member "ts" of the
 *     value, a JSON object, in milliseconds since the Unix epoch. A value
 *     that is not a JSON object, has no "ts", or whose "ts" is not an
 *     integer (1.5, 1e3, "17", out of the int64 range) fails with BAD_INPUT.
 *
 * Build (from guests/c; build.sh builds every guest the same way):
 *
 *	clang-19 --target=wasm32 -nostdlib -mbulk-memory -msimd128 -O2 -s -ffile-prefix-map=$PWD=. \
 *		-I../../sdk/c -Iinternal -Wl,--no-entry -o ../../testdata/c/wordkey.wasm wordkey.c
 */
#include "eddy.h"
#include "jsonscan.h"
#include "strconv.h"
#include "text.h"

/* first_word returns the first word of the value, a view into it (the SDK
 * copies it). */
static int first_word(const eddy_record_t *in, eddy_bytes_t *key)
{
	size_t i = 0;
	if (in->value.ptr)
		tx_next_word(in->value.ptr, in->value.len, &i, key); /* *key stays null if there is none */
	return EDDY_OK;
}

static int event_time(const eddy_record_t *in, int64_t *ts)
{
	eddy_bytes_t v;
	switch (js_field(in->value.ptr, in->value.len, "ts", &v)) {
	case JS_SYNTAX:
		return eddy_bad_input(JS_ERR_SYNTAX);
	case JS_NOT_OBJECT:
		return eddy_bad_input(JS_ERR_NOT_OBJECT);
	}
	if (!v.ptr)
		return eddy_bad_input("no top-level \"ts\" member");
	if (sc_parse_int(v.ptr, v.len, ts) != SC_OK)
		return eddy_bad_input("\"ts\" is not an integer");
	return EDDY_OK;
}

EDDY_MODULE(.name = "wordkey", .version = "1.0.0", .key = first_word, .timestamp = event_time);
