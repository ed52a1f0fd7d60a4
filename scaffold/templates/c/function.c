/*
 * {{.Name}} is an Eddy process function (a map): it upper-cases the ASCII
 * letters of record values and keeps the key, timestamp and headers.
 *
 * Build with ./build.sh (writes {{.Name}}.wasm), test natively with
 * ./build.sh test, and try it with the host:
 *
 *     eddy test {{.Name}}.wasm --input sample.jsonl
 *
 * eddy-sdk/README.md documents the whole SDK: filter, flat_map, aggregate,
 * join, key and timestamp handlers, keyed state, logs and counters.
 */
#include "eddy.h"

/*
 * upper is the handler: *out starts as a copy of *in, and the handler
 * replaces its value. Input bytes are views into the host's buffer, valid
 * during the call only; the new value lives in scratch memory, which the SDK
 * copies and then reuses for the next record, so nothing is allocated per
 * record.
 */
static int upper(const eddy_record_t *in, eddy_record_t *out)
{
	const uint8_t *s = in->value.ptr;
	size_t n = in->value.len;
	if (!s)
		return EDDY_OK; /* a null value stays null */
	uint8_t *d = eddy_scratch(n);
	for (size_t i = 0; i < n; i++)
		d[i] = s[i] >= 'a' && s[i] <= 'z' ? s[i] - ('a' - 'A') : s[i];
	out->value = eddy_bytes(d, n);
	return EDDY_OK;
	/* To fail this record instead: return eddy_reject("reason"),
	 * eddy_bad_input("reason") or eddy_fail(64..255, "reason"). */
}

EDDY_MODULE(.name = "{{.Name}}", .version = "0.1.0", .map = upper);
