/*
 * timeout is a stateful Eddy process function with timers, as
 * guests/go/timeout: it reports keys that went quiet. For each record it
 * keeps the record's timestamp as the key's last activity (keyed state: the
 * record key → the time in decimal text) and moves the key's event-time
 * timer to one second after it (deleting the one it set for the previous
 * record); it passes no record on. When a timer fires and the key's last
 * activity is still one second before it, it forgets the key and emits one
 * record: the key, the last activity in decimal as the value, and the
 * timer's time as the timestamp. A timer that no longer matches (none
 * should) and a processing-time timer emit nothing.
 *
 * In a step without keyed state every record is rejected (REJECTED); a host
 * storage failure fails it with STATE.
 *
 * Build (from guests/c; build.sh builds every guest the same way):
 *
 *	clang-19 --target=wasm32 -nostdlib -mbulk-memory -msimd128 -O2 -s -ffile-prefix-map=$PWD=. \
 *		-I../../sdk/c -Iinternal -Wl,--no-entry -o ../../testdata/c/timeout.wasm timeout.c
 */
#include "eddy.h"
#include "strconv.h"

/* GAP is how long a key stays quiet before it is reported, in ms. */
#define GAP 1000

/* why holds the reason of a bad stored time. */
static eddy_buf_t why;

/* plus_gap is t + GAP, wrapping around as Go's int64 addition does. */
static int64_t plus_gap(int64_t t) { return (int64_t)((uint64_t)t + GAP); }

/* bad_time fails the record (or timer) for a stored time that is not a
 * number, with the reason Go's fmt.Errorf("stored time %q: %w", v, err)
 * gives. */
static int bad_time(eddy_bytes_t v, int rc)
{
	why.len = 0;
	eddy_buf_append(&why, "stored time ", 12);
	sc_append_quote(&why, v.ptr, v.len);
	eddy_buf_append(&why, ": strconv.ParseInt: parsing ", 28);
	sc_append_quote(&why, v.ptr, v.len);
	eddy_buf_append(&why, ": ", 2);
	const char *err = rc == SC_RANGE ? SC_ERR_RANGE : SC_ERR_SYNTAX;
	eddy_buf_append(&why, err, strlen(err));
	return eddy_failn(EDDY_REJECTED, (const char *)why.data, why.len);
}

/* last reads the key's last activity into *t and *ok. */
static int last(eddy_bytes_t key, int64_t *t, bool *ok)
{
	*ok = false;
	eddy_bytes_t v;
	int rc = eddy_state_get(key, &v);
	if (rc != EDDY_OK || !v.ptr)
		return rc;
	if ((rc = sc_parse_int(v.ptr, v.len, t)) != SC_OK)
		return bad_time(v, rc);
	*ok = true;
	return EDDY_OK;
}

/* decimal writes t in decimal into scratch memory. */
static eddy_bytes_t decimal(int64_t t)
{
	uint8_t *end = (uint8_t *)eddy_scratch(20) + 20, *p = end;
	uint64_t u = t < 0 ? 0 - (uint64_t)t : (uint64_t)t;
	do {
		*--p = (uint8_t)('0' + u % 10);
		u /= 10;
	} while (u);
	if (t < 0)
		*--p = '-';
	return eddy_bytes(p, (size_t)(end - p));
}

static int touch(const eddy_record_t *in, bool *keep)
{
	(void)keep; /* no record is passed on */
	int64_t prev;
	bool ok;
	int rc = last(in->key, &prev, &ok);
	if (rc != EDDY_OK)
		return rc;
	if (ok && (rc = eddy_delete_timer(in->key, EDDY_EVENT_TIME, plus_gap(prev))) != EDDY_OK)
		return rc;
	if ((rc = eddy_state_put(in->key, decimal(in->timestamp))) != EDDY_OK)
		return rc;
	return eddy_set_timer(in->key, EDDY_EVENT_TIME, plus_gap(in->timestamp));
}

static int fire(const eddy_timer_t *t, eddy_emitter_t *out)
{
	if (t->domain != EDDY_EVENT_TIME)
		return EDDY_OK;
	int64_t at;
	bool ok;
	int rc = last(t->key, &at, &ok);
	if (rc != EDDY_OK || !ok || plus_gap(at) != t->time)
		return rc;
	if ((rc = eddy_state_delete(t->key)) != EDDY_OK)
		return rc;
	eddy_record_t r = {.key = t->key, .value = decimal(at), .timestamp = t->time};
	eddy_emit(out, &r);
	return EDDY_OK;
}

EDDY_MODULE(.name = "timeout", .version = "1.0.0", .filter = touch, .timer = fire);
