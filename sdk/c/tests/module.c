/*
 * module.c is a function that uses every part of the SDK's API. test.sh
 * compiles it freestanding and with wasi-libc to check that eddy.h builds
 * without warnings in both modes, and that a freestanding module imports
 * nothing but the host functions it calls: built with -DNO_TIMERS, it calls
 * no timer function and must import none; built with -DNO_CONFIG, it reads
 * no configuration and must not import config_get.
 */
#include "eddy.h"

static int map(const eddy_record_t *in, eddy_record_t *out)
{
	eddy_bytes_t v;
	int rc = eddy_state_get(in->key, &v);
	if (rc)
		return rc;
	if (v.ptr && (rc = eddy_state_delete(in->key)))
		return rc;
	if ((rc = eddy_state_put(in->key, in->value)))
		return rc;
	eddy_count("records", 1);
	eddy_log(EDDY_LOG_DEBUG, "map");
	if (in->value.len > 100)
		return eddy_failf(64, "value of %zu bytes", in->value.len);
	uint8_t *p = eddy_malloc(16);
	if (!p)
		return eddy_reject("out of memory");
	p = eddy_realloc(p, 64);
	eddy_free(p);
	out->value = eddy_bytes(eddy_scratch(in->value.len), in->value.len);
	memcpy((uint8_t *)out->value.ptr, in->value.ptr, in->value.len);
	if (in->value.len == 1)
		eddy_record_to_output(out, "one");
#ifndef NO_CONFIG
	eddy_bytes_t suffix;
	if (eddy_config_get("suffix", &suffix) && suffix.len)
		out->value = suffix;
#endif
#ifndef NO_TIMERS
	if (eddy_current_time(EDDY_EVENT_TIME) != EDDY_NO_TIME &&
	    (rc = eddy_delete_timer(in->key, EDDY_EVENT_TIME, in->timestamp)))
		return rc;
	if ((rc = eddy_set_timer(in->key, EDDY_PROCESSING_TIME, in->timestamp + 1)))
		return rc;
#endif
	return EDDY_OK;
}

#ifndef NO_TIMERS
static int on_timer(const eddy_timer_t *t, eddy_emitter_t *out)
{
	eddy_record_t r = {.key = t->key, .value = EDDY_STR("fired"), .timestamp = t->time};
	if (t->domain == EDDY_PROCESSING_TIME)
		eddy_emit(out, &r);
	return EDDY_OK;
}
#else
#define on_timer 0
#endif

static int add(eddy_buf_t *acc, const eddy_record_t *r)
{
	eddy_buf_append(acc, r->value.ptr, r->value.len);
	return EDDY_OK;
}

static int key(const eddy_record_t *in, eddy_bytes_t *k)
{
	*k = in->value;
	return EDDY_OK;
}

static int ts(const eddy_record_t *in, int64_t *t)
{
	*t = in->timestamp + 1;
	return EDDY_OK;
}

static int join(eddy_bytes_t k, eddy_bytes_t l, eddy_bytes_t r, eddy_bytes_t *out)
{
	(void)k;
	*out = l.ptr ? l : r;
	return EDDY_OK;
}

EDDY_MODULE(.name = "module", .version = "0.0.1", .map = map, .aggregate = {.add = add}, .join = join, .key = key,
	    .timestamp = ts, .timer = on_timer);
