/*
 * dispatch_test drives the SDK natively through the same envelopes the host
 * sends (ABI.md section 5): every kind, per-record error codes, bad
 * envelopes, the manifest, keyed state, counters and logging, scratch
 * memory and large batches. Native only; run by sdk/c/test.sh.
 */
#include "../eddy.h"
#include "check.h"

/* ------------------------------------------------------------------------ */
/* Envelope helpers */

static eddy_mp_writer_t env;

static void env_reset(void) { env.len = 0; }

/* put_record appends a Record; key or value NULL is nil, ts < 0 means nil. */
static void put_record(eddy_mp_writer_t *w, const char *key, const char *value, int64_t ts, int nh,
		       const char *const *hdrs)
{
	eddy_mp_write_array(w, 4);
	eddy_mp_write_bin(w, key, key ? strlen(key) : 0);
	eddy_mp_write_bin(w, value, value ? strlen(value) : 0);
	if (ts < 0)
		eddy_mp_write_nil(w);
	else
		eddy_mp_write_int(w, ts);
	eddy_mp_write_array(w, (uint32_t)nh);
	for (int i = 0; i < nh; i++) {
		eddy_mp_write_array(w, 2);
		eddy_mp_write_cstr(w, hdrs[2 * i]);
		eddy_mp_write_bin(w, hdrs[2 * i + 1], hdrs[2 * i + 1] ? strlen(hdrs[2 * i + 1]) : 0);
	}
}

typedef struct {
	int code;
	char reason[512];
	int nrecs;
	eddy_record_t recs[40];
	eddy_header_t hdrs[40][4];
	eddy_bytes_t value; /* key, join, merge, result bodies */
	int64_t ts;         /* timestamp bodies */
} result_t;

enum { BODY_RECORDS, BODY_BYTES, BODY_INT };

/* decode_results decodes [Result × n] of the given body type into res and
 * returns n, or -1 if the envelope is malformed. Output timestamps that are
 * nil are reported as -1. */
static int decode_results(const uint8_t *out, size_t len, int body, result_t *res, int max)
{
	eddy_mp_reader_t r;
	eddy_mp_reader_init(&r, out, len);
	int n = (int)eddy_mp_read_array(&r);
	if (n > max)
		return -1;
	for (int i = 0; i < n; i++) {
		result_t *x = &res[i];
		memset(x, 0, sizeof *x);
		if (eddy_mp_read_array(&r) != 2)
			return -1;
		x->code = (int)eddy_mp_read_int(&r);
		if (x->code != 0) {
			eddy_bytes_t s = eddy_mp_read_str(&r);
			if (s.len >= sizeof x->reason)
				return -1;
			memcpy(x->reason, s.ptr, s.len);
			continue;
		}
		if (body == BODY_BYTES) {
			x->value = eddy_mp_read_bytes(&r);
		} else if (body == BODY_INT) {
			x->ts = eddy_mp_read_int(&r);
		} else {
			x->nrecs = (int)eddy_mp_read_array(&r);
			if (x->nrecs > 40)
				return -1;
			for (int j = 0; j < x->nrecs; j++) {
				eddy_record_t *rec = &x->recs[j];
				if (eddy_mp_read_array(&r) != 4)
					return -1;
				rec->key = eddy_mp_read_bytes(&r);
				rec->value = eddy_mp_read_bytes(&r);
				if (eddy_mp_is_nil(&r)) {
					eddy_mp_read_nil(&r);
					rec->timestamp = -1;
				} else {
					rec->timestamp = eddy_mp_read_int(&r);
				}
				rec->headers_len = eddy_mp_read_array(&r);
				if (rec->headers_len > 4)
					return -1;
				for (size_t k = 0; k < rec->headers_len; k++) {
					if (eddy_mp_read_array(&r) != 2)
						return -1;
					x->hdrs[j][k].name = eddy_mp_read_str(&r);
					x->hdrs[j][k].value = eddy_mp_read_bytes(&r);
				}
				rec->headers = x->hdrs[j];
			}
		}
	}
	if (r.err || eddy_mp_left(&r))
		return -1;
	return n;
}

static bool bytes_is(eddy_bytes_t b, const char *s) { return eddy_bytes_equal_cstr(b, s); }

static const uint8_t *out;
static size_t out_len;

/* call runs export name of m on the envelope in env. */
static int call(const eddy_module_t *m, const char *name)
{
	return eddy_call_module(m, name, env.buf, env.len, &out, &out_len);
}

/* ------------------------------------------------------------------------ */
/* Handlers */

static int map_upper(const eddy_record_t *in, eddy_record_t *out)
{
	if (!in->value.ptr)
		return EDDY_OK;
	uint8_t *v = eddy_scratch(in->value.len);
	for (size_t i = 0; i < in->value.len; i++) {
		uint8_t c = in->value.ptr[i];
		v[i] = c >= 'a' && c <= 'z' ? c - 32 : c;
	}
	out->value = eddy_bytes(v, in->value.len);
	out->headers_len = 0; /* as in the ABI's worked example */
	return EDDY_OK;
}

/* map_rules exercises the error codes and output fields by value. */
static int map_rules(const eddy_record_t *in, eddy_record_t *out)
{
	eddy_bytes_t v = in->value;
	if (bytes_is(v, "reject"))
		return eddy_reject("no thanks");
	if (bytes_is(v, "bad"))
		return eddy_bad_input("not json");
	if (bytes_is(v, "user"))
		return eddy_failf(77, "user %d at %lld", 77, (long long)in->timestamp);
	if (bytes_is(v, "bare-user"))
		return 200;
	if (bytes_is(v, "bare-reject"))
		return EDDY_REJECTED;
	if (bytes_is(v, "bare-bad"))
		return EDDY_BAD_INPUT;
	if (bytes_is(v, "bare-state"))
		return EDDY_STATE;
	if (bytes_is(v, "code-9"))
		return eddy_fail(9, "reserved code");
	if (bytes_is(v, "code-300"))
		return eddy_fail(300, "too big");
	if (bytes_is(v, "negative"))
		return -1;
	if (bytes_is(v, "stale")) {
		eddy_reject("set but not returned");
		return EDDY_OK;
	}
	if (bytes_is(v, "time"))
		out->timestamp = in->timestamp + 5;
	if (bytes_is(v, "nullkey"))
		out->key = EDDY_NULL;
	if (bytes_is(v, "emptyvalue"))
		out->value = eddy_bytes(eddy_scratch(0), 0);
	if (bytes_is(v, "nullvalue"))
		out->value = EDDY_NULL;
	if (bytes_is(v, "header")) {
		eddy_header_t *h = eddy_scratch(sizeof *h);
		h->name = eddy_cstr("added");
		h->value = EDDY_NULL;
		out->headers = h;
		out->headers_len = 1;
	}
	return EDDY_OK;
}

static int filter_even(const eddy_record_t *in, bool *keep)
{
	if (!in->value.ptr)
		return eddy_bad_input("null value");
	*keep = in->value.len % 2 == 0;
	return EDDY_OK;
}

static int flat_words(const eddy_record_t *in, eddy_emitter_t *out)
{
	/* One record per byte of the value, key = the input key; "fail" fails
	 * after emitting. */
	eddy_record_t r = *in;
	r.headers = NULL;
	r.headers_len = 0;
	for (size_t i = 0; in->value.ptr && i < in->value.len; i++) {
		r.value = eddy_bytes(in->value.ptr + i, 1);
		r.timestamp = in->timestamp + (int64_t)(i % 2);
		eddy_emit(out, &r);
	}
	if (bytes_is(in->value, "fail"))
		return eddy_reject("failed after emitting");
	return EDDY_OK;
}

/* flat_route sends each record to output "a", then to "b" (named twice),
 * then to no output: eddy_record_to_output leaves the input's headers as
 * they are. */
static int flat_route(const eddy_record_t *in, eddy_emitter_t *out)
{
	eddy_record_t r = *in;
	eddy_record_to_output(&r, "a");
	eddy_emit(out, &r);
	r = *in;
	eddy_record_to_output(&r, "x");
	eddy_record_to_outputn(&r, "bcd", 1);
	eddy_emit(out, &r);
	eddy_emit(out, in);
	return EDDY_OK;
}

static int key_first(const eddy_record_t *in, eddy_bytes_t *key)
{
	if (in->value.ptr && in->value.len)
		*key = eddy_bytes(in->value.ptr, 1);
	if (bytes_is(in->value, "x"))
		return eddy_bad_input("x");
	return EDDY_OK;
}

static int time_len(const eddy_record_t *in, int64_t *ts)
{
	if (bytes_is(in->value, "keep"))
		return EDDY_OK;
	if (!in->value.ptr)
		return eddy_bad_input("no value");
	*ts = -(int64_t)in->value.len * 1000;
	return EDDY_OK;
}

static int join_concat(eddy_bytes_t key, eddy_bytes_t left, eddy_bytes_t right, eddy_bytes_t *out)
{
	if (!left.ptr && !right.ptr)
		return EDDY_OK;
	if (bytes_is(left, "bad"))
		return eddy_bad_input("left");
	size_t n = key.len + 1 + left.len + 1 + right.len;
	uint8_t *p = eddy_scratch(n);
	memcpy(p, key.ptr ? key.ptr : (const uint8_t *)"", key.len);
	p[key.len] = '|';
	memcpy(p + key.len + 1, left.ptr ? left.ptr : (const uint8_t *)"", left.len);
	p[key.len + 1 + left.len] = '|';
	memcpy(p + key.len + 2 + left.len, right.ptr ? right.ptr : (const uint8_t *)"", right.len);
	*out = eddy_bytes(p, n);
	return EDDY_OK;
}

/* An aggregate: the accumulator is the concatenation of the values; "bad"
 * is refused; "grow" appends 1000 bytes. */
static int agg_init(eddy_bytes_t *acc)
{
	*acc = eddy_cstr("<");
	return EDDY_OK;
}

static int agg_add(eddy_buf_t *acc, const eddy_record_t *r)
{
	if (bytes_is(r->value, "bad")) {
		acc->len = 0; /* changes to the scratch copy must not stick */
		return eddy_bad_input("bad record");
	}
	if (bytes_is(r->value, "grow")) {
		eddy_buf_resize(acc, acc->len + 1000);
		return EDDY_OK;
	}
	eddy_buf_append(acc, r->value.ptr, r->value.len);
	return EDDY_OK;
}

static int agg_merge(eddy_bytes_t key, eddy_bytes_t a, eddy_bytes_t b, eddy_bytes_t *out)
{
	(void)key;
	if (bytes_is(a, "x"))
		return EDDY_OK; /* null: written as empty */
	uint8_t *p = eddy_scratch(a.len + b.len);
	memcpy(p, a.ptr, a.len);
	memcpy(p + a.len, b.ptr, b.len);
	*out = eddy_bytes(p, a.len + b.len);
	return EDDY_OK;
}

static int agg_result(eddy_bytes_t key, eddy_bytes_t acc, eddy_bytes_t *out)
{
	if (bytes_is(acc, "none"))
		return EDDY_OK; /* null: emit nothing */
	if (bytes_is(acc, "fail"))
		return eddy_fail(99, "result failed");
	*out = key.ptr ? key : acc;
	return EDDY_OK;
}

static int agg_init_fail(eddy_bytes_t *acc)
{
	(void)acc;
	return eddy_fail(70, "no init");
}

/* ------------------------------------------------------------------------ */
/* Tests */

static const eddy_module_t mod_upper = {.name = "upper", .map = map_upper};
static const eddy_module_t mod_rules = {.map = map_rules};
static const eddy_module_t mod_filter = {.name = "f", .version = "2", .filter = filter_even};
static const eddy_module_t mod_flat = {.flat_map = flat_words};
static const eddy_module_t mod_route = {.flat_map = flat_route};
static const eddy_module_t mod_keytime = {.key = key_first, .timestamp = time_len};
static const eddy_module_t mod_join = {.join = join_concat};
static const eddy_module_t mod_agg = {
	.aggregate = {.init = agg_init, .add = agg_add, .merge = agg_merge, .result = agg_result}};
static const eddy_module_t mod_agg_min = {.aggregate = {.add = agg_add}};
static const eddy_module_t mod_agg_badinit = {.aggregate = {.init = agg_init_fail, .add = agg_add}};
static const eddy_module_t mod_two = {.map = map_upper, .filter = filter_even};
static const eddy_module_t mod_none = {.name = "none"};

/* The worked example of ABI.md section 9, byte for byte. */
static void test_abi_worked_example(void)
{
	static const uint8_t in[] = {0x91, 0x94, 0xc4, 0x01, 0x6b, 0xc4, 0x02, 0x68, 0x69, 0xcf, 0x00, 0x00, 0x01,
				     0x8b, 0xcf, 0xe5, 0x68, 0x00, 0x91, 0x92, 0xa1, 0x68, 0xc4, 0x01, 0x76};
	static const uint8_t want[] = {0x91, 0x92, 0x00, 0x91, 0x94, 0xc4, 0x01, 0x6b,
				       0xc4, 0x02, 0x48, 0x49, 0xc0, 0x90};
	CHECK(sizeof in == 25);
	CHECK(eddy_call_module(&mod_upper, "eddy_process", in, sizeof in, &out, &out_len) == 0);
	CHECK_BYTES(out, out_len, want, sizeof want);

	/* The refusal example: 91 92 01 a8 "bad json". */
	static const uint8_t refused[] = {0x91, 0x92, 0x01, 0xa8, 'b', 'a', 'd', ' ', 'j', 's', 'o', 'n'};
	env_reset();
	eddy_mp_write_array(&env, 1);
	put_record(&env, "k", "reject", 1, 0, NULL);
	CHECK(call(&mod_rules, "eddy_process") == 0);
	result_t res[1];
	CHECK(decode_results(out, out_len, BODY_RECORDS, res, 1) == 1);
	CHECK(res[0].code == 1 && strcmp(res[0].reason, "no thanks") == 0);
	static const eddy_module_t bad_json = {.map = map_rules};
	(void)bad_json;
	env_reset();
	eddy_mp_write_array(&env, 1);
	put_record(&env, "k", "bad", 1, 0, NULL);
	CHECK(call(&mod_rules, "eddy_process") == 0);
	/* BAD_INPUT, "not json": same shape as the example with code 2. */
	static const uint8_t bad[] = {0x91, 0x92, 0x02, 0xa8, 'n', 'o', 't', ' ', 'j', 's', 'o', 'n'};
	CHECK_BYTES(out, out_len, bad, sizeof bad);
	(void)refused;
}

static void test_manifest(void)
{
	static const uint8_t want[] = {0x84, 0xa3, 'a', 'b', 'i', 0x01, 0xa5, 'k', 'i', 'n', 'd', 's', 0x91, 0xa7, 'p',
				       'r', 'o', 'c', 'e', 's', 's', 0xa4, 'n', 'a', 'm', 'e', 0xa5, 'u', 'p', 'p', 'e',
				       'r', 0xa3, 's', 'd', 'k', 0xa7, 'c', '/', '0', '.', '1', '.', '0'};
	CHECK(eddy_call_module(&mod_upper, "eddy_manifest", "", 0, &out, &out_len) == 0);
	CHECK_BYTES(out, out_len, want, sizeof want);

	/* All kinds, version, and a reader that skips unknown keys. */
	static const eddy_module_t all = {.name = "all",
					  .version = "1.2.3",
					  .flat_map = flat_words,
					  .aggregate = {.add = agg_add},
					  .join = join_concat,
					  .key = key_first,
					  .timestamp = time_len};
	CHECK(eddy_call_module(&all, "eddy_manifest", "", 0, &out, &out_len) == 0);
	eddy_mp_reader_t r;
	eddy_mp_reader_init(&r, out, out_len);
	uint32_t n = eddy_mp_read_map(&r);
	CHECK(n == 5);
	int seen = 0;
	for (uint32_t i = 0; i < n; i++) {
		eddy_bytes_t k = eddy_mp_read_str(&r);
		if (bytes_is(k, "kinds")) {
			CHECK(eddy_mp_read_array(&r) == 5);
			const char *kinds[] = {"process", "aggregate", "join", "key", "timestamp"};
			for (int j = 0; j < 5; j++)
				CHECK(bytes_is(eddy_mp_read_str(&r), kinds[j]));
			seen++;
		} else if (bytes_is(k, "version")) {
			CHECK(bytes_is(eddy_mp_read_str(&r), "1.2.3"));
			seen++;
		} else {
			eddy_mp_skip(&r);
		}
	}
	CHECK(seen == 2 && r.err == 0 && eddy_mp_left(&r) == 0);

	/* Two process handlers, or none at all: the manifest call fails. */
	CHECK(eddy_call_module(&mod_two, "eddy_manifest", "", 0, &out, &out_len) == 1);
	int code;
	CHECK(strstr(eddy_test_last_error(&code), "more than one process handler") != NULL && code == 1);
	CHECK(eddy_call_module(&mod_none, "eddy_manifest", "", 0, &out, &out_len) == 1);
	CHECK(strstr(eddy_test_last_error(NULL), "no handler") != NULL);
	CHECK(eddy_call_module(&mod_upper, "eddy_nothing", "", 0, &out, &out_len) == EDDY_UNSUPPORTED);
}

static void test_map(void)
{
	const char *hdrs[] = {"h1", "v1", "h2", NULL};
	const char *values[] = {"plain", "reject", "bad", "user", "bare-user", "bare-reject", "bare-bad", "bare-state",
				"code-9", "code-300", "negative", "stale", "time", "nullkey", "emptyvalue",
				"nullvalue", "header"};
	int nv = (int)(sizeof values / sizeof values[0]);
	env_reset();
	eddy_mp_write_array(&env, (uint32_t)nv + 2);
	for (int i = 0; i < nv; i++)
		put_record(&env, "key", values[i], 1000 + i, i == 0 ? 2 : 0, hdrs);
	put_record(&env, NULL, NULL, 7, 0, NULL); /* null key and value */
	put_record(&env, "", "", 8, 0, NULL);     /* empty key and value */
	CHECK(call(&mod_rules, "eddy_process") == 0);
	static result_t res[40];
	CHECK(decode_results(out, out_len, BODY_RECORDS, res, 40) == nv + 2);

	/* plain: the input, headers included; timestamp inherited (nil). */
	CHECK(res[0].code == 0 && res[0].nrecs == 1);
	eddy_record_t *r = &res[0].recs[0];
	CHECK(bytes_is(r->key, "key") && bytes_is(r->value, "plain") && r->timestamp == -1);
	CHECK(r->headers_len == 2 && bytes_is(r->headers[0].name, "h1") && bytes_is(r->headers[0].value, "v1"));
	CHECK(bytes_is(r->headers[1].name, "h2") && r->headers[1].value.ptr == NULL);

	CHECK(res[1].code == EDDY_REJECTED && strcmp(res[1].reason, "no thanks") == 0);
	CHECK(res[2].code == EDDY_BAD_INPUT && strcmp(res[2].reason, "not json") == 0);
	CHECK(res[3].code == 77 && strcmp(res[3].reason, "user 77 at 1003") == 0);
	CHECK(res[4].code == 200 && strcmp(res[4].reason, "error 200") == 0);
	CHECK(res[5].code == EDDY_REJECTED && strcmp(res[5].reason, "rejected") == 0);
	CHECK(res[6].code == EDDY_BAD_INPUT && strcmp(res[6].reason, "bad input") == 0);
	CHECK(res[7].code == EDDY_STATE && strcmp(res[7].reason, "eddy: keyed state storage failed") == 0);
	CHECK(res[8].code == EDDY_REJECTED && strcmp(res[8].reason, "reserved code") == 0);
	CHECK(res[9].code == EDDY_REJECTED && strcmp(res[9].reason, "too big") == 0);
	CHECK(res[10].code == EDDY_REJECTED && strcmp(res[10].reason, "rejected") == 0);
	CHECK(res[11].code == 0 && res[11].nrecs == 1); /* a reason without a failure is ignored */
	CHECK(res[12].code == 0 && res[12].recs[0].timestamp == 1012 + 5);
	CHECK(res[13].code == 0 && res[13].recs[0].key.ptr == NULL);
	CHECK(res[14].code == 0 && res[14].recs[0].value.ptr != NULL && res[14].recs[0].value.len == 0);
	CHECK(res[15].code == 0 && res[15].recs[0].value.ptr == NULL);
	CHECK(res[16].code == 0 && res[16].recs[0].headers_len == 1 &&
	      bytes_is(res[16].recs[0].headers[0].name, "added") && res[16].recs[0].headers[0].value.ptr == NULL);
	r = &res[nv].recs[0];
	CHECK(res[nv].code == 0 && r->key.ptr == NULL && r->value.ptr == NULL);
	r = &res[nv + 1].recs[0];
	CHECK(res[nv + 1].code == 0 && r->key.ptr && r->key.len == 0 && r->value.ptr && r->value.len == 0);

	/* An empty batch is answered with an empty array. */
	env_reset();
	eddy_mp_write_array(&env, 0);
	CHECK(call(&mod_rules, "eddy_process") == 0);
	CHECK_BYTES(out, out_len, "\x90", 1);
}

static void test_filter(void)
{
	const char *hdrs[] = {"h", "v"};
	env_reset();
	eddy_mp_write_array(&env, 4);
	put_record(&env, "a", "xx", 1, 1, hdrs);
	put_record(&env, "b", "x", 2, 0, NULL);
	put_record(&env, "c", NULL, 3, 0, NULL);
	put_record(&env, NULL, "", 4, 0, NULL);
	CHECK(call(&mod_filter, "eddy_process") == 0);
	result_t res[4];
	CHECK(decode_results(out, out_len, BODY_RECORDS, res, 4) == 4);
	CHECK(res[0].code == 0 && res[0].nrecs == 1 && bytes_is(res[0].recs[0].value, "xx") &&
	      res[0].recs[0].headers_len == 1);
	CHECK(res[1].code == 0 && res[1].nrecs == 0);
	CHECK(res[2].code == EDDY_BAD_INPUT && strcmp(res[2].reason, "null value") == 0);
	CHECK(res[3].code == 0 && res[3].nrecs == 1 && res[3].recs[0].key.ptr == NULL);
}

static void test_flat_map(void)
{
	char thirty[31];
	memset(thirty, 'z', 30);
	thirty[30] = 0;
	env_reset();
	eddy_mp_write_array(&env, 5);
	put_record(&env, "a", "", 10, 0, NULL);
	put_record(&env, "b", "xy", 20, 0, NULL);
	put_record(&env, "c", "fail", 30, 0, NULL);
	put_record(&env, "d", thirty, 40, 0, NULL);
	put_record(&env, NULL, NULL, 50, 0, NULL);
	CHECK(call(&mod_flat, "eddy_process") == 0);
	static result_t res[5];
	CHECK(decode_results(out, out_len, BODY_RECORDS, res, 5) == 5);
	CHECK(res[0].code == 0 && res[0].nrecs == 0);
	CHECK(res[1].code == 0 && res[1].nrecs == 2);
	CHECK(bytes_is(res[1].recs[0].value, "x") && res[1].recs[0].timestamp == -1 && bytes_is(res[1].recs[0].key, "b"));
	CHECK(bytes_is(res[1].recs[1].value, "y") && res[1].recs[1].timestamp == 21);
	CHECK(res[2].code == EDDY_REJECTED && strcmp(res[2].reason, "failed after emitting") == 0);
	CHECK(res[3].code == 0 && res[3].nrecs == 30);
	CHECK(res[4].code == 0 && res[4].nrecs == 0);
	/* Shortest headers: an array of 2 is 0x92, of 30 is array 16. */
	CHECK(out[0] == 0x95);
	const uint8_t *p = memchr(out, 0xdc, out_len);
	CHECK(p && p[1] == 0 && p[2] == 30);
}

static void test_to_output(void)
{
	/* The helper alone: the header goes last, an earlier one is dropped,
	 * the others keep their order, and the list rec held is unchanged. */
	const eddy_header_t hs[3] = {
		{EDDY_LIT("h1"), EDDY_LIT("v1")}, {EDDY_LIT("eddy.output"), EDDY_LIT("old")}, {EDDY_LIT("h2"), {0, 0}}};
	eddy_record_t rec = {EDDY_STR("k"), EDDY_STR("v"), 5, hs, 3};
	char name[] = "objects";
	eddy_record_to_output(&rec, name);
	name[0] = 'X'; /* the name was copied */
	CHECK(rec.headers != hs && rec.headers_len == 3);
	CHECK(bytes_is(rec.headers[0].name, "h1") && bytes_is(rec.headers[0].value, "v1"));
	CHECK(bytes_is(rec.headers[1].name, "h2") && rec.headers[1].value.ptr == NULL);
	CHECK(bytes_is(rec.headers[2].name, EDDY_HEADER_OUTPUT) && bytes_is(rec.headers[2].value, "objects"));
	CHECK(bytes_is(rec.key, "k") && bytes_is(rec.value, "v") && rec.timestamp == 5);
	CHECK(bytes_is(hs[1].name, "eddy.output") && bytes_is(hs[1].value, "old") && bytes_is(hs[2].name, "h2"));
	eddy_record_to_output(&rec, "numbers");
	CHECK(rec.headers_len == 3 && bytes_is(rec.headers[2].value, "numbers"));
	eddy_record_t none = {EDDY_NULL, EDDY_NULL, 0, NULL, 7}; /* headers NULL: none, whatever the length */
	eddy_record_to_output(&none, "");
	CHECK(none.headers_len == 1 && bytes_is(none.headers[0].name, "eddy.output") && none.headers[0].value.ptr &&
	      none.headers[0].value.len == 0);

	/* Through the envelopes. */
	const char *hdrs[] = {"h1", "v1", "eddy.output", "old", "h2", NULL};
	env_reset();
	eddy_mp_write_array(&env, 2);
	put_record(&env, "k", "v", 9, 3, hdrs);
	put_record(&env, NULL, NULL, 10, 0, NULL);
	CHECK(call(&mod_route, "eddy_process") == 0);
	static result_t res[2];
	CHECK(decode_results(out, out_len, BODY_RECORDS, res, 2) == 2);
	CHECK(res[0].code == 0 && res[0].nrecs == 3);
	const char *want[2] = {"a", "b"};
	for (int i = 0; i < 2; i++) {
		eddy_record_t *r = &res[0].recs[i];
		CHECK(bytes_is(r->key, "k") && bytes_is(r->value, "v") && r->timestamp == -1 && r->headers_len == 3);
		CHECK(bytes_is(r->headers[0].name, "h1") && bytes_is(r->headers[1].name, "h2"));
		CHECK(bytes_is(r->headers[2].name, "eddy.output") && bytes_is(r->headers[2].value, want[i]));
	}
	eddy_record_t *r = &res[0].recs[2];
	CHECK(r->headers_len == 3 && bytes_is(r->headers[1].name, "eddy.output") && bytes_is(r->headers[1].value, "old"));
	CHECK(res[1].code == 0 && res[1].nrecs == 3 && res[1].recs[0].headers_len == 1 && res[1].recs[2].headers_len == 0);
	CHECK(bytes_is(res[1].recs[1].headers[0].value, "b"));
}

static void test_key_timestamp(void)
{
	env_reset();
	eddy_mp_write_array(&env, 4);
	put_record(&env, "k", "hello", 5, 0, NULL);
	put_record(&env, "k", "", 6, 0, NULL);
	put_record(&env, "k", "x", 7, 0, NULL);
	put_record(&env, "k", "keep", 8, 0, NULL);
	CHECK(call(&mod_keytime, "eddy_key") == 0);
	result_t res[4];
	CHECK(decode_results(out, out_len, BODY_BYTES, res, 4) == 4);
	CHECK(res[0].code == 0 && bytes_is(res[0].value, "h"));
	CHECK(res[1].code == 0 && res[1].value.ptr == NULL);
	CHECK(res[2].code == EDDY_BAD_INPUT && strcmp(res[2].reason, "x") == 0);
	CHECK(call(&mod_keytime, "eddy_timestamp") == 0);
	CHECK(decode_results(out, out_len, BODY_INT, res, 4) == 4);
	CHECK(res[0].code == 0 && res[0].ts == -5000);
	CHECK(res[1].code == 0 && res[1].ts == 0);
	CHECK(res[3].code == 0 && res[3].ts == 8);
	/* The module has no process handler. */
	CHECK(call(&mod_keytime, "eddy_process") == 0);
	CHECK(decode_results(out, out_len, BODY_RECORDS, res, 4) == 4);
	CHECK(res[0].code == EDDY_UNSUPPORTED && strcmp(res[0].reason, "this module implements no process function") == 0);
	CHECK(res[3].code == EDDY_UNSUPPORTED);
}

static void put_item(eddy_mp_writer_t *w, int width, const char *k, const char *a, const char *b)
{
	eddy_mp_write_array(w, (uint32_t)width);
	eddy_mp_write_bin(w, k, k ? strlen(k) : 0);
	eddy_mp_write_bin(w, a, a ? strlen(a) : 0);
	if (width == 3)
		eddy_mp_write_bin(w, b, b ? strlen(b) : 0);
}

static void test_join(void)
{
	env_reset();
	eddy_mp_write_array(&env, 4);
	put_item(&env, 3, "k", "l", "r");
	put_item(&env, 3, "k", NULL, "r");
	put_item(&env, 3, NULL, NULL, NULL);
	put_item(&env, 3, "k", "bad", NULL);
	CHECK(call(&mod_join, "eddy_join") == 0);
	result_t res[4];
	CHECK(decode_results(out, out_len, BODY_BYTES, res, 4) == 4);
	CHECK(res[0].code == 0 && bytes_is(res[0].value, "k|l|r"));
	CHECK(res[1].code == 0 && bytes_is(res[1].value, "k||r"));
	CHECK(res[2].code == 0 && res[2].value.ptr == NULL);
	CHECK(res[3].code == EDDY_BAD_INPUT);
	/* Unsupported kinds of this module. */
	CHECK(call(&mod_join, "eddy_key") == 0);
	CHECK(decode_results(out, out_len, BODY_BYTES, res, 4) == 4 && res[1].code == EDDY_UNSUPPORTED);
	CHECK(call(&mod_join, "eddy_agg_merge") == 0);
	CHECK(decode_results(out, out_len, BODY_BYTES, res, 4) == 4 && res[0].code == EDDY_UNSUPPORTED);
	CHECK(strcmp(res[0].reason, "this module implements no aggregate function") == 0);
	CHECK(eddy_call_module(&mod_join, "eddy_agg_init", "", 0, &out, &out_len) == 0);
	static const uint8_t unsup[] = {0x92, 0x04, 0xd9, 44};
	CHECK(out_len > 4 && memcmp(out, unsup, 4) == 0);
}

/* decode_added decodes [Added × n]: accumulators and error counts. */
static int decode_added(eddy_bytes_t *accs, int *nerrs, int errs[][3], char reasons[][64], int max)
{
	eddy_mp_reader_t r;
	eddy_mp_reader_init(&r, out, out_len);
	int n = (int)eddy_mp_read_array(&r);
	if (n > max)
		return -1;
	int e = 0;
	for (int i = 0; i < n; i++) {
		if (eddy_mp_read_array(&r) != 2)
			return -1;
		accs[i] = eddy_mp_read_bytes(&r);
		nerrs[i] = (int)eddy_mp_read_array(&r);
		for (int j = 0; j < nerrs[i]; j++, e++) {
			if (eddy_mp_read_array(&r) != 3)
				return -1;
			errs[e][0] = i;
			errs[e][1] = (int)eddy_mp_read_int(&r);
			errs[e][2] = (int)eddy_mp_read_int(&r);
			eddy_bytes_t s = eddy_mp_read_str(&r);
			snprintf(reasons[e], 64, "%.*s", (int)s.len, (const char *)s.ptr);
		}
	}
	return r.err || eddy_mp_left(&r) ? -1 : n;
}

static void put_group(eddy_mp_writer_t *w, const char *key, const char *acc, int n, const char *const *values)
{
	eddy_mp_write_array(w, 3);
	eddy_mp_write_bin(w, key, key ? strlen(key) : 0);
	eddy_mp_write_bin(w, acc, acc ? strlen(acc) : 0);
	eddy_mp_write_array(w, (uint32_t)n);
	for (int i = 0; i < n; i++)
		put_record(w, key, values[i], i, 0, NULL);
}

static void test_aggregate(void)
{
	/* init */
	CHECK(eddy_call_module(&mod_agg, "eddy_agg_init", "", 0, &out, &out_len) == 0);
	CHECK_BYTES(out, out_len, "\x92\x00\xc4\x01<", 5);
	CHECK(eddy_call_module(&mod_agg_min, "eddy_agg_init", "", 0, &out, &out_len) == 0);
	CHECK_BYTES(out, out_len, "\x92\x00\xc4\x00", 4);
	CHECK(eddy_call_module(&mod_agg_badinit, "eddy_agg_init", "", 0, &out, &out_len) == 0);
	CHECK_BYTES(out, out_len, "\x92\x46\xa7no init", 10);

	/* add: nil acc starts from init; a failed record leaves the
	 * accumulator as it was; groups are independent. */
	const char *g1[] = {"a", "bad", "b"};
	const char *g2[] = {"grow"};
	const char *g3[] = {"bad", "bad"};
	env_reset();
	eddy_mp_write_array(&env, 4);
	put_group(&env, "k1", NULL, 3, g1);
	put_group(&env, "k2", "", 1, g2);
	put_group(&env, NULL, "acc", 2, g3);
	put_group(&env, "k4", "same", 0, NULL);
	CHECK(call(&mod_agg, "eddy_agg_add") == 0);
	eddy_bytes_t accs[4];
	int nerrs[4], errs[8][3];
	char reasons[8][64];
	CHECK(decode_added(accs, nerrs, errs, reasons, 4) == 4);
	CHECK(bytes_is(accs[0], "<ab") && nerrs[0] == 1 && errs[0][1] == 1 && errs[0][2] == EDDY_BAD_INPUT);
	CHECK(strcmp(reasons[0], "bad record") == 0);
	CHECK(accs[1].len == 1000 && nerrs[1] == 0);
	CHECK(bytes_is(accs[2], "acc") && nerrs[2] == 2 && errs[1][1] == 0 && errs[2][1] == 1);
	CHECK(bytes_is(accs[3], "same") && nerrs[3] == 0);

	/* add when init fails: every record fails, the accumulator is empty. */
	env_reset();
	eddy_mp_write_array(&env, 1);
	put_group(&env, "k", NULL, 2, g1);
	CHECK(call(&mod_agg_badinit, "eddy_agg_add") == 0);
	CHECK(decode_added(accs, nerrs, errs, reasons, 1) == 1);
	CHECK(accs[0].ptr && accs[0].len == 0 && nerrs[0] == 2 && errs[0][2] == 70);
	CHECK(strcmp(reasons[0], "initial accumulator: no init") == 0);

	/* add in a module without an aggregate: UNSUPPORTED, acc unchanged. */
	env_reset();
	eddy_mp_write_array(&env, 2);
	put_group(&env, "k", "acc", 3, g1);
	put_group(&env, "k", NULL, 1, g2);
	CHECK(call(&mod_upper, "eddy_agg_add") == 0);
	CHECK(decode_added(accs, nerrs, errs, reasons, 2) == 2);
	CHECK(bytes_is(accs[0], "acc") && nerrs[0] == 3 && errs[2][1] == 2 && errs[2][2] == EDDY_UNSUPPORTED);
	CHECK(accs[1].ptr && accs[1].len == 0 && nerrs[1] == 1);
	CHECK(strcmp(reasons[0], "this module implements no aggregate function") == 0);

	/* merge */
	env_reset();
	eddy_mp_write_array(&env, 2);
	put_item(&env, 3, "k", "ab", "cd");
	put_item(&env, 3, "k", "x", "y");
	CHECK(call(&mod_agg, "eddy_agg_merge") == 0);
	result_t res[3];
	CHECK(decode_results(out, out_len, BODY_BYTES, res, 2) == 2);
	CHECK(bytes_is(res[0].value, "abcd") && res[1].value.ptr && res[1].value.len == 0);
	CHECK(call(&mod_agg_min, "eddy_agg_merge") == 0);
	CHECK(decode_results(out, out_len, BODY_BYTES, res, 2) == 2 && res[0].code == EDDY_UNSUPPORTED);
	CHECK(strcmp(res[0].reason, "this aggregate function has no merge") == 0);

	/* result */
	env_reset();
	eddy_mp_write_array(&env, 3);
	put_item(&env, 2, NULL, "acc", NULL);
	put_item(&env, 2, "k", "none", NULL);
	put_item(&env, 2, "k", "fail", NULL);
	CHECK(call(&mod_agg, "eddy_agg_result") == 0);
	CHECK(decode_results(out, out_len, BODY_BYTES, res, 3) == 3);
	CHECK(bytes_is(res[0].value, "acc") && res[1].code == 0 && res[1].value.ptr == NULL);
	CHECK(res[2].code == 99 && strcmp(res[2].reason, "result failed") == 0);
	CHECK(call(&mod_agg_min, "eddy_agg_result") == 0); /* no result: the accumulator itself */
	CHECK(decode_results(out, out_len, BODY_BYTES, res, 3) == 3 && bytes_is(res[1].value, "none"));
}

static void test_bad_envelopes(void)
{
	result_t res[3];
	int code;
	/* Not an array: the whole call fails with BAD_ENVELOPE. */
	CHECK(eddy_call_module(&mod_upper, "eddy_process", "\x05", 1, &out, &out_len) == EDDY_BAD_ENVELOPE);
	const char *why = eddy_test_last_error(&code);
	CHECK(code == EDDY_BAD_ENVELOPE && strncmp(why, "eddy_process: malformed input envelope", 38) == 0);
	CHECK(eddy_call_module(&mod_upper, "eddy_process", "", 0, &out, &out_len) == EDDY_BAD_ENVELOPE);
	/* The count is readable, a record is not: every item fails. */
	env_reset();
	eddy_mp_write_array(&env, 3);
	put_record(&env, "k", "v", 1, 0, NULL);
	eddy_mp_write_array(&env, 3); /* a record of 3 elements */
	eddy_mp_write_nil(&env);
	eddy_mp_write_nil(&env);
	eddy_mp_write_nil(&env);
	put_record(&env, "k", "v", 1, 0, NULL);
	CHECK(call(&mod_upper, "eddy_process") == 0);
	CHECK(decode_results(out, out_len, BODY_RECORDS, res, 3) == 3);
	CHECK(res[0].code == EDDY_BAD_ENVELOPE && res[2].code == EDDY_BAD_ENVELOPE);
	CHECK(strstr(res[1].reason, "record 1") && strstr(res[1].reason, "not an array of 4 elements"));
	/* Trailing bytes. */
	env_reset();
	eddy_mp_write_array(&env, 1);
	put_record(&env, "k", "v", 1, 0, NULL);
	eddy_mp_write_nil(&env);
	CHECK(call(&mod_upper, "eddy_process") == 0);
	CHECK(decode_results(out, out_len, BODY_RECORDS, res, 1) == 1 && res[0].code == EDDY_BAD_ENVELOPE);
	CHECK(strcmp(res[0].reason, "malformed input envelope: 1 trailing bytes") == 0);
	/* A bad header, a float timestamp, a truncated envelope. */
	env_reset();
	eddy_mp_write_array(&env, 1);
	eddy_mp_write_array(&env, 4);
	eddy_mp_write_nil(&env);
	eddy_mp_write_nil(&env);
	eddy_mp_write_byte(&env, 0xcb);
	for (int i = 0; i < 8; i++)
		eddy_mp_write_byte(&env, 0);
	eddy_mp_write_nil(&env);
	CHECK(call(&mod_upper, "eddy_process") == 0);
	CHECK(decode_results(out, out_len, BODY_RECORDS, res, 1) == 1 && res[0].code == EDDY_BAD_ENVELOPE);
	env_reset();
	eddy_mp_write_array(&env, 2);
	put_record(&env, "k", "value", 1, 0, NULL);
	env.len -= 3;
	CHECK(call(&mod_upper, "eddy_process") == 0);
	CHECK(decode_results(out, out_len, BODY_RECORDS, res, 2) == 2 && res[1].code == EDDY_BAD_ENVELOPE);
	/* Join items of the wrong width. */
	env_reset();
	eddy_mp_write_array(&env, 1);
	put_item(&env, 2, "k", "a", NULL);
	CHECK(call(&mod_join, "eddy_join") == 0);
	CHECK(decode_results(out, out_len, BODY_BYTES, res, 1) == 1 && res[0].code == EDDY_BAD_ENVELOPE);
	CHECK(strstr(res[0].reason, "wrong number of elements") != NULL);
	/* A malformed agg_add group fails the call. */
	env_reset();
	eddy_mp_write_array(&env, 1);
	eddy_mp_write_array(&env, 2);
	eddy_mp_write_nil(&env);
	eddy_mp_write_nil(&env);
	CHECK(call(&mod_agg, "eddy_agg_add") == EDDY_BAD_ENVELOPE);
	CHECK(call(&mod_upper, "eddy_agg_add") == EDDY_BAD_ENVELOPE);
}

/* Input the host may write in any width: str keys, int32 timestamps, nil
 * timestamps and headers, array 16 headers. */
static void test_general_decoding(void)
{
	env_reset();
	eddy_mp_write_byte(&env, 0xdc);
	eddy_mp_write_byte(&env, 0);
	eddy_mp_write_byte(&env, 2);
	eddy_mp_write_byte(&env, 0x94);
	eddy_mp_write_cstr(&env, "strkey");
	eddy_mp_write_byte(&env, 0xc6);
	eddy_mp_write_raw(&env, "\0\0\0\x02hi", 6);
	eddy_mp_write_byte(&env, 0xd2);
	eddy_mp_write_raw(&env, "\xff\xff\xff\xfe", 4);
	eddy_mp_write_nil(&env);
	eddy_mp_write_byte(&env, 0x94);
	eddy_mp_write_nil(&env);
	eddy_mp_write_nil(&env);
	eddy_mp_write_nil(&env);
	eddy_mp_write_raw(&env, "\xdc\x00\x01\x92\xd9\x01h\xc0", 8);
	CHECK(call(&mod_rules, "eddy_process") == 0);
	result_t res[2];
	CHECK(decode_results(out, out_len, BODY_RECORDS, res, 2) == 2);
	CHECK(bytes_is(res[0].recs[0].key, "strkey") && bytes_is(res[0].recs[0].value, "hi"));
	CHECK(res[0].recs[0].timestamp == -1 && res[0].recs[0].headers_len == 0);
	CHECK(res[1].recs[0].headers_len == 1 && bytes_is(res[1].recs[0].headers[0].name, "h"));
}

/* Many records with headers (the header array is reallocated while the
 * batch is decoded) and large values (bin 16 and bin 32). */
static void test_large_batches(void)
{
	enum { N = 3000 };
	static char big[70001];
	memset(big, 'q', sizeof big - 1);
	env_reset();
	eddy_mp_write_array(&env, N);
	for (int i = 0; i < N; i++) {
		char key[16], hv[16];
		snprintf(key, sizeof key, "k%d", i);
		snprintf(hv, sizeof hv, "h%d", i);
		const char *hdrs[] = {"n", hv, "m", key};
		put_record(&env, key, i == 5 ? big : i == 6 ? big + 70000 - 300 : key, 1700000000000 + i, 2, hdrs);
	}
	CHECK(call(&mod_rules, "eddy_process") == 0);
	eddy_mp_reader_t r;
	eddy_mp_reader_init(&r, out, out_len);
	CHECK(eddy_mp_read_array(&r) == N);
	int ok = 1;
	for (int i = 0; i < N; i++) {
		char key[16], hv[16];
		snprintf(key, sizeof key, "k%d", i);
		snprintf(hv, sizeof hv, "h%d", i);
		ok &= eddy_mp_read_array(&r) == 2 && eddy_mp_read_int(&r) == 0 && eddy_mp_read_array(&r) == 1;
		ok &= eddy_mp_read_array(&r) == 4 && bytes_is(eddy_mp_read_bytes(&r), key);
		eddy_bytes_t v = eddy_mp_read_bytes(&r);
		ok &= i == 5 ? v.len == 70000 : i == 6 ? v.len == 300 : bytes_is(v, key);
		eddy_mp_read_nil(&r);
		ok &= eddy_mp_read_array(&r) == 2;
		ok &= eddy_mp_read_array(&r) == 2 && bytes_is(eddy_mp_read_str(&r), "n") && bytes_is(eddy_mp_read_bytes(&r), hv);
		ok &= eddy_mp_read_array(&r) == 2 && bytes_is(eddy_mp_read_str(&r), "m") &&
		      bytes_is(eddy_mp_read_bytes(&r), key);
	}
	CHECK(ok && r.err == 0 && eddy_mp_left(&r) == 0);

	/* Upper over the same batch through the fast map path. */
	CHECK(call(&mod_upper, "eddy_process") == 0);
	eddy_mp_reader_init(&r, out, out_len);
	CHECK(eddy_mp_read_array(&r) == N);
}

/* ------------------------------------------------------------------------ */
/* State, counters, logging */

static int count_map(const eddy_record_t *in, eddy_record_t *out)
{
	eddy_bytes_t v;
	int rc = eddy_state_get(in->key, &v);
	if (rc)
		return rc;
	size_t n = v.ptr ? v.len : 0;
	/* The state value grows by one byte per record: "", "x", "xx", ... */
	uint8_t *p = eddy_scratch(n + 1);
	memset(p, 'x', n + 1);
	if (bytes_is(in->value, "delete")) {
		if ((rc = eddy_state_delete(in->key)))
			return rc;
		out->value = eddy_cstr("deleted");
		return EDDY_OK;
	}
	if ((rc = eddy_state_put(in->key, eddy_bytes(p, n + 1))))
		return rc;
	eddy_count("records", 1);
	eddy_count("bytes", (int64_t)n + 1);
	out->value = eddy_bytes(p, n + 1);
	return EDDY_OK;
}

static const eddy_module_t mod_count = {.map = count_map};

static int log_lines;
static char last_log[128];
static int last_level;

static void capture_log(int level, const char *msg, size_t len)
{
	log_lines++;
	last_level = level;
	snprintf(last_log, sizeof last_log, "%.*s", (int)len, msg);
}

static void test_state(void)
{
	eddy_test_reset();
	/* 600 records of one key: the value outgrows the 256-byte state
	 * buffer, which grows and asks again. */
	env_reset();
	eddy_mp_write_array(&env, 600);
	for (int i = 0; i < 600; i++)
		put_record(&env, i == 599 ? "other" : NULL, "v", i, 0, NULL);
	CHECK(call(&mod_count, "eddy_process") == 0);
	eddy_mp_reader_t r;
	eddy_mp_reader_init(&r, out, out_len);
	CHECK(eddy_mp_read_array(&r) == 600);
	int ok = 1;
	for (int i = 0; i < 600; i++) {
		ok &= eddy_mp_read_array(&r) == 2 && eddy_mp_read_int(&r) == 0 && eddy_mp_read_array(&r) == 1;
		ok &= eddy_mp_read_array(&r) == 4;
		eddy_mp_read_bytes(&r);
		ok &= eddy_mp_read_bytes(&r).len == (i == 599 ? 1u : (size_t)i + 1);
		eddy_mp_skip(&r);
		eddy_mp_skip(&r);
	}
	CHECK(ok && r.err == 0);
	CHECK(eddy_test_state(eddy_bytes("", 0)).len == 599);
	CHECK(eddy_test_state(eddy_cstr("other")).len == 1);
	CHECK(eddy_test_counter("records") == 600);
	CHECK(eddy_test_counter("bytes") == 599 * 600 / 2 + 1);

	/* Delete, then preset state. */
	env_reset();
	eddy_mp_write_array(&env, 1);
	put_record(&env, "other", "delete", 1, 0, NULL);
	CHECK(call(&mod_count, "eddy_process") == 0);
	CHECK(eddy_test_state(eddy_cstr("other")).ptr == NULL);
	eddy_test_set_state(eddy_cstr("p"), eddy_cstr("xxxx"));

	/* No store: REJECTED with the Go SDK's words; a failing store: STATE. */
	env_reset();
	eddy_mp_write_array(&env, 1);
	put_record(&env, "p", "v", 1, 0, NULL);
	result_t res[1];
	eddy_test_set_state_mode(EDDY_TEST_STATE_NONE);
	CHECK(call(&mod_count, "eddy_process") == 0);
	CHECK(decode_results(out, out_len, BODY_RECORDS, res, 1) == 1 && res[0].code == EDDY_REJECTED);
	CHECK(strcmp(res[0].reason, "eddy: no keyed state store (the step is not stateful)") == 0);
	eddy_test_set_state_mode(EDDY_TEST_STATE_FAILING);
	CHECK(call(&mod_count, "eddy_process") == 0);
	CHECK(decode_results(out, out_len, BODY_RECORDS, res, 1) == 1 && res[0].code == EDDY_STATE);
	CHECK(strcmp(res[0].reason, "eddy: keyed state storage failed") == 0);
	eddy_test_set_state_mode(EDDY_TEST_STATE_OK);
	CHECK(call(&mod_count, "eddy_process") == 0);
	CHECK(decode_results(out, out_len, BODY_RECORDS, res, 1) == 1 && bytes_is(res[0].recs[0].value, "xxxxx"));
	eddy_test_reset();
	CHECK(eddy_test_counter("records") == 0);

	/* Logging: levels are clamped; eddy_logf formats. */
	eddy_test_set_log(capture_log);
	eddy_log(EDDY_LOG_INFO, "hello");
	CHECK(log_lines == 1 && last_level == 1 && strcmp(last_log, "hello") == 0);
	eddy_logf((eddy_level_t)9, "n=%d s=%s x=%x u=%llu z=%zu %%", -5, "str", 255u, 18446744073709551615ull,
		  (size_t)7);
	CHECK(last_level == 3 && strcmp(last_log, "n=-5 s=str x=ff u=18446744073709551615 z=7 %") == 0);
	eddy_logf(EDDY_LOG_DEBUG, "[%5d|%-4s|%05u|%.*s|%lld]", 42, "ab", 7u, 3, "abcdef", (long long)INT64_MIN);
	CHECK(last_level == 0 && strcmp(last_log, "[   42|ab  |00007|abc|-9223372036854775808]") == 0);
	eddy_test_set_log(NULL);
}

/* ------------------------------------------------------------------------ */
/* Configuration */

/* config_map puts the config entry "prefix", read for every record, before
 * the value; without it the record passes unchanged. */
static int config_map(const eddy_record_t *in, eddy_record_t *out)
{
	eddy_bytes_t p;
	if (!eddy_config_get("prefix", &p))
		return EDDY_OK;
	uint8_t *v = eddy_scratch(p.len + in->value.len);
	memcpy(v, p.ptr, p.len);
	if (in->value.len)
		memcpy(v + p.len, in->value.ptr, in->value.len);
	out->value = eddy_bytes(v, p.len + in->value.len);
	return EDDY_OK;
}

static const eddy_module_t mod_config = {.map = config_map};

static void test_config(void)
{
	eddy_test_reset();
	/* No configuration: every entry is absent, a null value. */
	eddy_bytes_t v = eddy_cstr("old");
	CHECK(!eddy_config_get("prefix", &v) && v.ptr == NULL && v.len == 0);

	static uint8_t long_value[1000], exact[256];
	memset(long_value, 'x', sizeof long_value);
	memset(exact, 'y', sizeof exact);
	eddy_test_set_config("prefix", eddy_cstr("p-"));
	eddy_test_set_config("empty", eddy_bytes("", 0));
	eddy_test_set_config("exact", eddy_bytes(exact, sizeof exact)); /* the first buffer's size */
	eddy_test_set_config("naïve", eddy_bytes("\xff\x00", 2));       /* values are bytes */
	CHECK(eddy_config_get("prefix", &v) && bytes_is(v, "p-"));
	CHECK(eddy_config_get("empty", &v) && v.ptr != NULL && v.len == 0); /* found, empty */
	CHECK(eddy_config_get("exact", &v) && v.len == sizeof exact && memcmp(v.ptr, exact, sizeof exact) == 0);
	CHECK(eddy_config_get("naïve", &v) && v.len == 2 && memcmp(v.ptr, "\xff\x00", 2) == 0);
	CHECK(!eddy_config_get("missing", &v) && v.ptr == NULL);
	CHECK(!eddy_config_get("Prefix", &v) && !eddy_config_get("", &v));
	/* A value over the buffer: it grows and asks again. */
	eddy_test_set_config("long", eddy_bytes(long_value, sizeof long_value));
	CHECK(eddy_config_get("long", &v) && v.len == sizeof long_value);
	CHECK(memcmp(v.ptr, long_value, sizeof long_value) == 0);
	CHECK(eddy__config.cap >= sizeof long_value);
	/* Setting an entry again replaces it; a null value removes it. */
	eddy_test_set_config("prefix", eddy_cstr("q-"));
	CHECK(eddy_config_get("prefix", &v) && bytes_is(v, "q-"));
	eddy_test_set_config("empty", EDDY_NULL);
	CHECK(!eddy_config_get("empty", &v));
	eddy_test_set_config("never-set", EDDY_NULL);

	/* Through the envelopes: handlers read entries at any time. */
	result_t res[2];
	env_reset();
	eddy_mp_write_array(&env, 2);
	put_record(&env, "k", "v", 3, 0, NULL);
	put_record(&env, NULL, NULL, 4, 0, NULL);
	CHECK(call(&mod_config, "eddy_process") == 0);
	CHECK(decode_results(out, out_len, BODY_RECORDS, res, 2) == 2);
	CHECK(bytes_is(res[0].recs[0].value, "q-v") && bytes_is(res[1].recs[0].value, "q-"));

	/* eddy_test_reset removes every entry. */
	eddy_test_reset();
	CHECK(!eddy_config_get("prefix", &v) && !eddy_config_get("long", &v));
	CHECK(call(&mod_config, "eddy_process") == 0);
	CHECK(decode_results(out, out_len, BODY_RECORDS, res, 2) == 2);
	CHECK(bytes_is(res[0].recs[0].value, "v") && res[1].recs[0].value.ptr == NULL);
}

/* ------------------------------------------------------------------------ */
/* Timers */

/* touch_timer moves the record key's event-time timer to its timestamp +
 * 10 and sets a processing-time one at the value's length (the record with
 * value "bad-domain" sets one in domain 7). */
static int touch_timer(const eddy_record_t *in, bool *keep)
{
	*keep = true;
	int rc;
	if ((rc = eddy_delete_timer(in->key, EDDY_EVENT_TIME, in->timestamp - 1)))
		return rc;
	if ((rc = eddy_set_timer(in->key, EDDY_EVENT_TIME, in->timestamp + 10)))
		return rc;
	if (bytes_is(in->value, "bad-domain"))
		return eddy_set_timer(in->key, (eddy_time_domain_t)7, 1);
	return eddy_set_timer(in->key, EDDY_PROCESSING_TIME, (int64_t)in->value.len);
}

/* fire_timer answers by the timer's key: "none" emits nothing, "fail"
 * fails, "many" emits 20 records, "times" three records with timestamp 0,
 * the timer's time and 5, "now" one whose value is the current event
 * time; others one record: key, value = the domain, the timer's time. */
static int fire_timer(const eddy_timer_t *t, eddy_emitter_t *out)
{
	if (bytes_is(t->key, "none"))
		return EDDY_OK;
	if (bytes_is(t->key, "fail"))
		return eddy_failf(70, "timer at %lld failed", (long long)t->time);
	eddy_record_t r = {.key = t->key, .value = eddy_cstr(t->domain == EDDY_EVENT_TIME ? "event" : "processing"),
			   .timestamp = t->time};
	if (bytes_is(t->key, "many")) {
		for (int i = 0; i < 20; i++)
			eddy_emit(out, &r);
		return EDDY_OK;
	}
	if (bytes_is(t->key, "times")) {
		r.timestamp = 0;
		eddy_emit(out, &r);
		r.timestamp = t->time;
		eddy_emit(out, &r);
		r.timestamp = 5;
		eddy_emit(out, &r);
		return EDDY_OK;
	}
	if (bytes_is(t->key, "now")) {
		char *v = eddy_scratch(24);
		r.value = eddy_bytes(v, eddy_format(v, 24, "%lld", (long long)eddy_current_time(EDDY_EVENT_TIME)));
	}
	eddy_emit(out, &r);
	return EDDY_OK;
}

static const eddy_module_t mod_timer = {.name = "t", .filter = touch_timer, .timer = fire_timer};
static const eddy_module_t mod_timer_only = {.timer = fire_timer};

/* has reports whether b[0..n) holds s[0..k). */
static bool has(const uint8_t *b, size_t n, const char *s, size_t k)
{
	for (size_t i = 0; i + k <= n; i++)
		if (memcmp(b + i, s, k) == 0)
			return true;
	return false;
}

/* put_timer appends a Timer [key, time, domain]; key NULL is nil. */
static void put_timer(eddy_mp_writer_t *w, const char *key, int64_t time, int64_t domain)
{
	eddy_mp_write_array(w, 3);
	eddy_mp_write_bin(w, key, key ? strlen(key) : 0);
	eddy_mp_write_int(w, time);
	eddy_mp_write_int(w, domain);
}

static void test_timers(void)
{
	eddy_test_reset();
	/* The manifest lists "timer" for a module with a timer handler, and
	 * only for it. */
	static const uint8_t want[] = {0x84, 0xa3, 'a', 'b', 'i', 0x01, 0xa5, 'k', 'i', 'n', 'd', 's', 0x92,
				       0xa7, 'p', 'r', 'o', 'c', 'e', 's', 's', 0xa5, 't', 'i', 'm', 'e', 'r',
				       0xa4, 'n', 'a', 'm', 'e', 0xa1, 't', 0xa3, 's', 'd', 'k', 0xa7, 'c',
				       '/', '0', '.', '1', '.', '0'};
	CHECK(eddy_call_module(&mod_timer, "eddy_manifest", "", 0, &out, &out_len) == 0);
	CHECK_BYTES(out, out_len, want, sizeof want);
	CHECK(eddy_call_module(&mod_timer_only, "eddy_manifest", "", 0, &out, &out_len) == 0);
	CHECK(has(out, out_len, "\x91\xa5timer", 7));
	CHECK(eddy_call_module(&mod_upper, "eddy_manifest", "", 0, &out, &out_len) == 0);
	CHECK(!has(out, out_len, "timer", 5));

	/* Records set and delete timers through the host functions. */
	env_reset();
	eddy_mp_write_array(&env, 3);
	put_record(&env, "a", "xyz", 100, 0, NULL);
	put_record(&env, "a", "", 105, 0, NULL);
	put_record(&env, NULL, "v", 7, 0, NULL);
	CHECK(call(&mod_timer, "eddy_process") == 0);
	result_t res[24];
	CHECK(decode_results(out, out_len, BODY_RECORDS, res, 3) == 3);
	CHECK(res[0].code == 0 && res[0].nrecs == 1 && res[1].code == 0 && res[2].code == 0);
	eddy_timer_t ts[8];
	CHECK(eddy_test_timers(ts, 8) == 6);
	/* In order of time, then domain, then key: the null key is empty. */
	CHECK(ts[0].time == 0 && ts[0].domain == EDDY_PROCESSING_TIME && bytes_is(ts[0].key, "a"));
	CHECK(ts[1].time == 1 && ts[1].domain == EDDY_PROCESSING_TIME && bytes_is(ts[1].key, ""));
	CHECK(ts[2].time == 3 && ts[2].domain == EDDY_PROCESSING_TIME && bytes_is(ts[2].key, "a"));
	CHECK(ts[3].time == 17 && ts[3].domain == EDDY_EVENT_TIME && bytes_is(ts[3].key, ""));
	CHECK(ts[4].time == 110 && ts[4].domain == EDDY_EVENT_TIME && bytes_is(ts[4].key, "a"));
	CHECK(ts[5].time == 115 && ts[5].domain == EDDY_EVENT_TIME && bytes_is(ts[5].key, "a"));
	CHECK(eddy_test_timers(ts, 2) == 6 && ts[0].time == 0 && ts[1].time == 1);
	/* Setting a timer that exists keeps one. */
	CHECK(eddy_set_timer(eddy_cstr("a"), EDDY_EVENT_TIME, 110) == EDDY_OK && eddy_test_timers(ts, 8) == 6);
	CHECK(eddy_test_has_timer(eddy_cstr("a"), EDDY_EVENT_TIME, 110));
	CHECK(eddy_test_has_timer(EDDY_NULL, EDDY_EVENT_TIME, 17));
	CHECK(!eddy_test_has_timer(eddy_cstr("a"), EDDY_PROCESSING_TIME, 110));
	/* Deleting the timer of the record before: a's 110 goes. */
	env_reset();
	eddy_mp_write_array(&env, 1);
	put_record(&env, "a", "xyz", 111, 0, NULL);
	CHECK(call(&mod_timer, "eddy_process") == 0);
	CHECK(!eddy_test_has_timer(eddy_cstr("a"), EDDY_EVENT_TIME, 110));
	CHECK(eddy_test_has_timer(eddy_cstr("a"), EDDY_EVENT_TIME, 121));
	/* An unknown domain: the host refuses the timer (-3). */
	env_reset();
	eddy_mp_write_array(&env, 1);
	put_record(&env, "b", "bad-domain", 1, 0, NULL);
	CHECK(call(&mod_timer, "eddy_process") == 0);
	CHECK(decode_results(out, out_len, BODY_RECORDS, res, 1) == 1 && res[0].code == EDDY_STATE);
	CHECK(strcmp(res[0].reason, "eddy: timer refused by the host") == 0);
	/* No store: REJECTED; a failing store: STATE. */
	env_reset();
	eddy_mp_write_array(&env, 1);
	put_record(&env, "a", "xyz", 1, 0, NULL);
	eddy_test_set_state_mode(EDDY_TEST_STATE_NONE);
	CHECK(call(&mod_timer, "eddy_process") == 0);
	CHECK(decode_results(out, out_len, BODY_RECORDS, res, 1) == 1 && res[0].code == EDDY_REJECTED);
	CHECK(strcmp(res[0].reason, "eddy: no keyed state store (the step is not stateful)") == 0);
	CHECK(eddy_set_timer(eddy_cstr("x"), EDDY_EVENT_TIME, 1) == EDDY_REJECTED);
	CHECK(eddy_current_time(EDDY_EVENT_TIME) == EDDY_NO_TIME);
	eddy_test_set_state_mode(EDDY_TEST_STATE_FAILING);
	CHECK(call(&mod_timer, "eddy_process") == 0);
	CHECK(decode_results(out, out_len, BODY_RECORDS, res, 1) == 1 && res[0].code == EDDY_STATE);
	CHECK(strcmp(res[0].reason, "eddy: keyed state storage failed") == 0);
	CHECK(eddy_set_timer(eddy_cstr("x"), EDDY_EVENT_TIME, 1) == EDDY_STATE);
	CHECK(eddy__g.reason.len == 31 && memcmp(eddy__g.reason.data, "eddy: timer refused by the host", 31) == 0);
	CHECK(eddy_delete_timer(eddy_cstr("x"), EDDY_EVENT_TIME, 1) == EDDY_STATE);
	eddy_test_set_state_mode(EDDY_TEST_STATE_OK);

	/* Current times: unknown until set; an unknown domain never. */
	CHECK(eddy_current_time(EDDY_EVENT_TIME) == EDDY_NO_TIME && EDDY_NO_TIME == INT64_MIN);
	eddy_test_set_current_time(EDDY_EVENT_TIME, 1700000000000);
	eddy_test_set_current_time(EDDY_PROCESSING_TIME, -3);
	CHECK(eddy_current_time(EDDY_EVENT_TIME) == 1700000000000);
	CHECK(eddy_current_time(EDDY_PROCESSING_TIME) == -3);
	CHECK(eddy_current_time((eddy_time_domain_t)2) == EDDY_NO_TIME);

	/* eddy_timer: [Timer × N] → [Result × N], body [Record × k]; a nil
	 * output timestamp is the timer's time. */
	env_reset();
	eddy_mp_write_array(&env, 8);
	put_timer(&env, "k", 1000, 0);
	put_timer(&env, "k", -7, 1);
	put_timer(&env, "none", 5, 0);
	put_timer(&env, "fail", 123, 0);
	put_timer(&env, "many", INT64_MAX, 1);
	put_timer(&env, "times", INT64_MIN, 0);
	put_timer(&env, NULL, 0, 0);
	put_timer(&env, "now", 9, 0);
	CHECK(call(&mod_timer, "eddy_timer") == 0);
	CHECK(decode_results(out, out_len, BODY_RECORDS, res, 8) == 8);
	CHECK(res[0].code == 0 && res[0].nrecs == 1 && bytes_is(res[0].recs[0].key, "k"));
	CHECK(bytes_is(res[0].recs[0].value, "event") && res[0].recs[0].timestamp == -1 && res[0].recs[0].headers_len == 0);
	CHECK(res[1].code == 0 && res[1].nrecs == 1 && bytes_is(res[1].recs[0].value, "processing"));
	CHECK(res[2].code == 0 && res[2].nrecs == 0);
	CHECK(res[3].code == 70 && strcmp(res[3].reason, "timer at 123 failed") == 0);
	CHECK(res[4].code == 0 && res[4].nrecs == 20 && res[4].recs[19].timestamp == -1);
	CHECK(res[5].code == 0 && res[5].nrecs == 3 && res[5].recs[0].timestamp == -1 && res[5].recs[1].timestamp == -1);
	CHECK(res[5].recs[2].timestamp == 5);
	CHECK(res[6].code == 0 && res[6].nrecs == 1 && res[6].recs[0].key.ptr == NULL);
	CHECK(res[7].code == 0 && bytes_is(res[7].recs[0].value, "1700000000000"));
	/* Byte for byte: one timer, one record, the timer's time as nil. */
	env_reset();
	eddy_mp_write_array(&env, 1);
	put_timer(&env, "k", 1700000000000, 0);
	CHECK(call(&mod_timer, "eddy_timer") == 0);
	static const uint8_t one[] = {0x91, 0x92, 0x00, 0x91, 0x94, 0xc4, 0x01, 'k', 0xc4, 0x05,
				      'e',  'v',  'e',  'n',  't',  0xc0, 0x90};
	CHECK_BYTES(out, out_len, one, sizeof one);
	/* An empty batch; str keys and any int width are accepted. */
	CHECK(eddy_call_module(&mod_timer, "eddy_timer", "\x90", 1, &out, &out_len) == 0);
	CHECK_BYTES(out, out_len, "\x90", 1);
	static const uint8_t wide[] = {0x91, 0x93, 0xa1, 'k', 0xd3, 0, 0, 0, 0, 0, 0, 0x03, 0xe8, 0xce, 0, 0, 0, 1};
	CHECK(eddy_call_module(&mod_timer, "eddy_timer", wide, sizeof wide, &out, &out_len) == 0);
	CHECK(decode_results(out, out_len, BODY_RECORDS, res, 1) == 1 && res[0].code == 0);
	CHECK(bytes_is(res[0].recs[0].key, "k") && bytes_is(res[0].recs[0].value, "processing"));

	/* A module without a timer handler: UNSUPPORTED. */
	env_reset();
	eddy_mp_write_array(&env, 2);
	put_timer(&env, "k", 1, 0);
	put_timer(&env, "k", 2, 1);
	CHECK(call(&mod_upper, "eddy_timer") == 0);
	CHECK(decode_results(out, out_len, BODY_RECORDS, res, 2) == 2 && res[1].code == EDDY_UNSUPPORTED);
	CHECK(strcmp(res[0].reason, "this module implements no timer function") == 0);

	/* Bad envelopes: not an array fails the call; a timer of the wrong
	 * shape, a float time or trailing bytes fail every item. */
	int code;
	CHECK(eddy_call_module(&mod_timer, "eddy_timer", "\x05", 1, &out, &out_len) == EDDY_BAD_ENVELOPE);
	CHECK(strncmp(eddy_test_last_error(&code), "eddy_timer: malformed input envelope", 36) == 0 &&
	      code == EDDY_BAD_ENVELOPE);
	env_reset();
	eddy_mp_write_array(&env, 2);
	put_timer(&env, "k", 1, 0);
	eddy_mp_write_array(&env, 2);
	eddy_mp_write_bin(&env, "k", 1);
	eddy_mp_write_int(&env, 1);
	CHECK(call(&mod_timer, "eddy_timer") == 0);
	CHECK(decode_results(out, out_len, BODY_RECORDS, res, 2) == 2 && res[0].code == EDDY_BAD_ENVELOPE);
	CHECK(strstr(res[1].reason, "timer 1") && strstr(res[1].reason, "not an array of 3 elements"));
	env_reset();
	eddy_mp_write_array(&env, 1);
	eddy_mp_write_array(&env, 3);
	eddy_mp_write_bin(&env, "k", 1);
	eddy_mp_write_byte(&env, 0xcb);
	for (int i = 0; i < 8; i++)
		eddy_mp_write_byte(&env, 0);
	eddy_mp_write_int(&env, 0);
	CHECK(call(&mod_timer, "eddy_timer") == 0);
	CHECK(decode_results(out, out_len, BODY_RECORDS, res, 1) == 1 && res[0].code == EDDY_BAD_ENVELOPE);
	env_reset();
	eddy_mp_write_array(&env, 1);
	put_timer(&env, "k", 1, 0);
	eddy_mp_write_nil(&env);
	CHECK(call(&mod_timer, "eddy_timer") == 0);
	CHECK(decode_results(out, out_len, BODY_RECORDS, res, 1) == 1 && res[0].code == EDDY_BAD_ENVELOPE);
	CHECK(strcmp(res[0].reason, "malformed input envelope: 1 trailing bytes") == 0);

	/* Many timers in one call (the timer array grows). */
	enum { N = 3000 };
	env_reset();
	eddy_mp_write_array(&env, N);
	for (int i = 0; i < N; i++)
		put_timer(&env, "k", i, i & 1);
	CHECK(call(&mod_timer, "eddy_timer") == 0);
	eddy_mp_reader_t r;
	eddy_mp_reader_init(&r, out, out_len);
	CHECK(eddy_mp_read_array(&r) == N);
	int ok = 1;
	for (int i = 0; i < N; i++) {
		ok &= eddy_mp_read_array(&r) == 2 && eddy_mp_read_int(&r) == 0 && eddy_mp_read_array(&r) == 1;
		ok &= eddy_mp_read_array(&r) == 4 && bytes_is(eddy_mp_read_bytes(&r), "k");
		ok &= bytes_is(eddy_mp_read_bytes(&r), i & 1 ? "processing" : "event");
		ok &= eddy_mp_is_nil(&r);
		eddy_mp_skip(&r);
		eddy_mp_skip(&r);
	}
	CHECK(ok && r.err == 0 && eddy_mp_left(&r) == 0);

	/* eddy_test_fire drives the program's module: see
	 * test_module_macro. */
	eddy_test_reset();
	CHECK(eddy_test_timers(ts, 8) == 0 && eddy_current_time(EDDY_EVENT_TIME) == EDDY_NO_TIME);
}

static void test_format(void)
{
	char buf[8];
	CHECK(eddy_format(buf, sizeof buf, "%s-%d", "abcdef", 12345) == 12);
	CHECK(memcmp(buf, "abcdef-1", 8) == 0);
	CHECK(eddy_format(NULL, 0, "%c%c", 'a', 'b') == 2);
}

/* The scratch space is reset per record: a map that takes 1 MiB of scratch
 * per record over many records and calls keeps memory bounded (checked by
 * AddressSanitizer's leak checker natively, by `eddy conformance` in Wasm). */
static int map_big_scratch(const eddy_record_t *in, eddy_record_t *out)
{
	uint8_t *p = eddy_scratch((size_t)1 << 20);
	p[0] = 'x';
	uint8_t *q = eddy_scratch(in->value.len);
	memcpy(q, in->value.ptr, in->value.len);
	out->value = eddy_bytes(q, in->value.len);
	return EDDY_OK;
}

static void test_scratch(void)
{
	static const eddy_module_t m = {.map = map_big_scratch};
	env_reset();
	eddy_mp_write_array(&env, 50);
	for (int i = 0; i < 50; i++)
		put_record(&env, "k", "value", i, 0, NULL);
	for (int call_no = 0; call_no < 20; call_no++)
		CHECK(call(&m, "eddy_process") == 0);
	result_t res[50];
	CHECK(decode_results(out, out_len, BODY_RECORDS, res, 50) == 50 && bytes_is(res[49].recs[0].value, "value"));
	CHECK(eddy_scratch(0) != NULL);
}

/* EDDY_MODULE defines eddy_call and eddy_module for this program. */
EDDY_MODULE(.name = "test", .version = "0", .map = map_upper, .timer = fire_timer);

static void test_module_macro(void)
{
	CHECK(eddy_module()->map == map_upper);
	CHECK(strcmp(eddy_module()->name, "test") == 0);
	env_reset();
	eddy_mp_write_array(&env, 1);
	put_record(&env, "k", "abc", 1, 0, NULL);
	CHECK(eddy_call("eddy_process", env.buf, env.len, &out, &out_len) == 0);
	result_t res[1];
	CHECK(decode_results(out, out_len, BODY_RECORDS, res, 1) == 1 && bytes_is(res[0].recs[0].value, "ABC"));

	/* eddy_test_process: records in, decoded results out. */
	eddy_header_t h = {eddy_cstr("h"), EDDY_NULL};
	eddy_record_t in[3] = {
		{.key = eddy_cstr("k"), .value = eddy_cstr("hello"), .timestamp = 42, .headers = &h, .headers_len = 1},
		{.value = EDDY_NULL, .timestamp = 43},
		{.key = eddy_bytes("", 0), .value = eddy_bytes("", 0)},
	};
	eddy_test_result_t tr[3];
	CHECK(eddy_test_process(in, 3, tr) == 0);
	CHECK(tr[0].code == EDDY_OK && tr[0].records_len == 1 && bytes_is(tr[0].records[0].value, "HELLO"));
	CHECK(tr[0].records[0].timestamp == 42 && bytes_is(tr[0].records[0].key, "k"));
	CHECK(tr[0].records[0].headers_len == 0); /* map_upper drops headers */
	CHECK(tr[1].code == EDDY_OK && tr[1].records[0].value.ptr == NULL && tr[1].records[0].key.ptr == NULL);
	CHECK(tr[2].records[0].value.ptr != NULL && tr[2].records[0].value.len == 0);

	/* eddy_test_fire: timers in, decoded results out; nil timestamps are
	 * the timers' times. */
	eddy_timer_t t[3] = {
		{.key = eddy_cstr("k"), .time = 42},
		{.key = eddy_cstr("times"), .time = -9, .domain = EDDY_PROCESSING_TIME},
		{.key = eddy_cstr("fail"), .time = 1},
	};
	CHECK(eddy_test_fire(t, 3, tr) == 0);
	CHECK(tr[0].code == EDDY_OK && tr[0].records_len == 1 && bytes_is(tr[0].records[0].key, "k"));
	CHECK(tr[0].records[0].timestamp == 42 && bytes_is(tr[0].records[0].value, "event"));
	CHECK(tr[1].records_len == 3 && tr[1].records[0].timestamp == -9 && tr[1].records[1].timestamp == -9);
	CHECK(tr[1].records[2].timestamp == 5 && bytes_is(tr[1].records[2].value, "processing"));
	CHECK(tr[2].code == 70 && strcmp(tr[2].reason, "timer at 1 failed") == 0);
}

int main(void)
{
	test_abi_worked_example();
	test_manifest();
	test_map();
	test_filter();
	test_flat_map();
	test_to_output();
	test_key_timestamp();
	test_join();
	test_aggregate();
	test_bad_envelopes();
	test_general_decoding();
	test_large_batches();
	test_state();
	test_config();
	test_timers();
	test_format();
	test_scratch();
	test_module_macro();
	eddy_free(env.buf);
	eddy_test_reset();
	return check_done("sdk/c dispatch");
}
