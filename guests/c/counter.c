/*
 * counter is a stateful Eddy process function, as guests/go/counter: it
 * keeps a running count of the records of each key in keyed state (the
 * state key is the record key; a null key counts like an empty one) and
 * emits each record with its value replaced by the count so far, in
 * decimal. The count is stored as the same decimal text.
 *
 * It adds 1 to the counter "records" for every record counted and logs at
 * DEBUG once per 1000 records. In a step without keyed state every record is
 * rejected (REJECTED); a host storage failure fails it with STATE.
 *
 * Build (from guests/c; build.sh builds every guest the same way):
 *
 *	clang-19 --target=wasm32 -nostdlib -mbulk-memory -msimd128 -O2 -s -ffile-prefix-map=$PWD=. \
 *		-I../../sdk/c -Iinternal -Wl,--no-entry -o ../../testdata/c/counter.wasm counter.c
 */
#include "eddy.h"
#include "strconv.h"

/* LOG_EVERY is how many records pass between two debug log lines. */
#define LOG_EVERY 1000

/* seen counts the records counted by this instance. */
static uint64_t seen;

/* why holds the reason of a bad stored count. */
static eddy_buf_t why;

/* bad_count fails the record for a stored count that is not a number, with
 * the reason Go's fmt.Errorf("stored count %q: %w", v, err) gives. */
static int bad_count(eddy_bytes_t v, int rc)
{
	why.len = 0;
	eddy_buf_append(&why, "stored count ", 13);
	sc_append_quote(&why, v.ptr, v.len);
	eddy_buf_append(&why, ": strconv.ParseUint: parsing ", 29);
	sc_append_quote(&why, v.ptr, v.len);
	eddy_buf_append(&why, ": ", 2);
	const char *err = rc == SC_RANGE ? SC_ERR_RANGE : SC_ERR_SYNTAX;
	eddy_buf_append(&why, err, strlen(err));
	return eddy_failn(EDDY_REJECTED, (const char *)why.data, why.len);
}

static int count(const eddy_record_t *in, eddy_record_t *out)
{
	eddy_bytes_t v;
	int rc = eddy_state_get(in->key, &v);
	if (rc != EDDY_OK)
		return rc;
	uint64_t n = 0;
	if (v.ptr && (rc = sc_parse_uint(v.ptr, v.len, &n)) != SC_OK)
		return bad_count(v, rc);
	/* The new count, in decimal, in scratch memory. */
	uint8_t *end = (uint8_t *)eddy_scratch(20) + 20, *p = end;
	n++;
	do {
		*--p = (uint8_t)('0' + n % 10);
		n /= 10;
	} while (n);
	eddy_bytes_t value = eddy_bytes(p, (size_t)(end - p));
	if ((rc = eddy_state_put(in->key, value)) != EDDY_OK)
		return rc;
	eddy_count("records", 1);
	if (++seen % LOG_EVERY == 0)
		eddy_logf(EDDY_LOG_DEBUG, "counter: %llu records", (unsigned long long)seen);
	out->value = value;
	return EDDY_OK;
}

EDDY_MODULE(.name = "counter", .version = "1.0.0", .map = count);
