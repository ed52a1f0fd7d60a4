/*
 * guests_test runs one C reference guest natively, through the SDK's native
 * stand-ins for the host, on the cases of its Go twin's tests. Compile it
 * with -DGUEST=name -DGUEST_name, '-' in name as '_' (the guest's source
 * is included);
 * guests/c/test.sh does, for every guest:
 *
 *     cc -std=c11 -I../../sdk/c -Iinternal -DGUEST=upper -DGUEST_upper internal/guests_test.c
 */
#include <stdio.h>

#define STR2(x) #x
#define STR(x) STR2(x)
#define SRC(x) STR(../x.c)
#include SRC(GUEST)

static int failures;

#define CHECK(cond)                                                                                      \
	do {                                                                                             \
		if (!(cond)) {                                                                           \
			fprintf(stderr, "%s:%d: %s: check failed: %s\n", __FILE__, __LINE__, STR(GUEST), #cond); \
			failures++;                                                                      \
		}                                                                                        \
	} while (0)

/* one runs the process handler on a record with value v (NULL: null) and
 * returns its result. */
static __attribute__((unused)) eddy_test_result_t one(const char *v)
{
	eddy_record_t in = {.key = eddy_cstr("k"), .value = eddy_cstr(v), .timestamp = 5};
	eddy_test_result_t res;
	memset(&res, 0, sizeof res);
	res.code = -1;
	CHECK(eddy_test_process(&in, 1, &res) == 0);
	return res;
}

/* value_is reports whether a single-output result has value want. */
static __attribute__((unused)) bool value_is(eddy_test_result_t r, const char *want)
{
	return r.code == EDDY_OK && r.records_len == 1 && eddy_bytes_equal_cstr(r.records[0].value, want);
}

/* call runs export name on the envelope in w and returns the answer. */
static __attribute__((unused)) eddy_bytes_t call(const char *name, eddy_mp_writer_t *w)
{
	const uint8_t *out;
	size_t n;
	CHECK(eddy_call(name, w->buf, w->len, &out, &n) == 0);
	return eddy_bytes(out, n);
}

static void test(void)
{
#if defined(GUEST_upper)
	{
		static const char *cases[][2] = {
			{"", ""},
			{"hello", "HELLO"},
			{"Hello, World! 123 az AZ `{@[", "HELLO, WORLD! 123 AZ AZ `{@["},
			{"straße", "STRAßE"},
			{"das ist eine lange straße in köln", "DAS IST EINE LANGE STRAßE IN KÖLN"},
			{"ǆemal", "ǄEMAL"},
			{"ﬁx", "ﬁX"},
			{"αβγ ωmega", "ΑΒΓ ΩMEGA"},
			{"abcdefgh\xffijk", "ABCDEFGH\xffIJK"},
			{"ab\xc3", "AB\xc3"},
			{"abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyz0123456789",
			 "ABCDEFGHIJKLMNOPQRSTUVWXYZABCDEFGHIJKLMNOPQRSTUVWXYZABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"},
		};
		for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
			CHECK(value_is(one(cases[i][0]), cases[i][1]));
		eddy_test_result_t r = one(NULL);
		CHECK(r.code == EDDY_OK && r.records[0].value.ptr == NULL);
	}
#elif defined(GUEST_poison)
	{
		eddy_test_result_t r = one("poison");
		CHECK(r.code == EDDY_REJECTED && strcmp(r.reason, "poison record") == 0);
		r = one("code77");
		CHECK(r.code == 77 && strcmp(r.reason, "code 77 record") == 0);
		CHECK(value_is(one("fine \xff straße"), "FINE \xef\xbf\xbd STRAßE")); /* as bytes.ToUpper */
		CHECK(value_is(one(""), ""));
		/* "panic" traps: not run natively. */
	}
#elif defined(GUEST_passthrough)
	{
		CHECK(value_is(one("as is"), "as is"));
	}
#elif defined(GUEST_route)
	{
		/* A value and its output (NULL: none). */
		static const char *cases[][2] = {
			{"{\"a\":1}", "objects"}, {"{", "objects"}, {"42 apples", "numbers"}, {"0", "numbers"},
			{"9x", "numbers"}, {"word", NULL}, {"", NULL}, {" {", NULL},
		};
		for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
			eddy_test_result_t r = one(cases[i][0]);
			CHECK(value_is(r, cases[i][0]) && r.records[0].timestamp == 5);
			if (!cases[i][1]) {
				CHECK(r.records[0].headers_len == 0);
				continue;
			}
			CHECK(r.records[0].headers_len == 1);
			CHECK(eddy_bytes_equal_cstr(r.records[0].headers[0].name, "eddy.output"));
			CHECK(eddy_bytes_equal_cstr(r.records[0].headers[0].value, cases[i][1]));
		}
		CHECK(one(NULL).records[0].headers_len == 0);
		/* Input headers come first, then the output. */
		static const eddy_header_t hs[] = {{EDDY_LIT("h"), EDDY_LIT("x")}, {EDDY_LIT("n"), {0, 0}}};
		eddy_record_t in = {.value = eddy_cstr("7"), .timestamp = 1, .headers = hs, .headers_len = 2};
		eddy_test_result_t r;
		CHECK(eddy_test_process(&in, 1, &r) == 0 && r.code == EDDY_OK && r.records[0].headers_len == 3);
		CHECK(eddy_bytes_equal_cstr(r.records[0].headers[0].name, "h") &&
		      eddy_bytes_equal_cstr(r.records[0].headers[1].name, "n") &&
		      eddy_bytes_equal_cstr(r.records[0].headers[2].value, "numbers"));
	}
#elif defined(GUEST_filter)
	{
		eddy_test_result_t r = one("{\"amount\": 150}");
		CHECK(r.code == EDDY_OK && r.records_len == 1);
		r = one("{\"amount\": 99.5, \"x\": {\"amount\": 500}}");
		CHECK(r.code == EDDY_OK && r.records_len == 0);
		r = one("{\"amount\": \"150\"}");
		CHECK(r.code == EDDY_OK && r.records_len == 0);
		r = one("{\"amount\": 1e400}");
		CHECK(r.code == EDDY_OK && r.records_len == 1);
		r = one("[150]");
		CHECK(r.code == EDDY_BAD_INPUT && strcmp(r.reason, "value is not a JSON object") == 0);
		r = one("{\"amount\": 150");
		CHECK(r.code == EDDY_BAD_INPUT && strcmp(r.reason, "value is not valid JSON") == 0);
		r = one(NULL);
		CHECK(r.code == EDDY_BAD_INPUT && strcmp(r.reason, "value is not valid JSON") == 0);
	}
#elif defined(GUEST_split)
	{
		eddy_test_result_t r = one("  the\u00a0quick\tfox\u3000");
		CHECK(r.code == EDDY_OK && r.records_len == 3);
		CHECK(eddy_bytes_equal_cstr(r.records[1].value, "quick") && r.records[1].headers_len == 0);
		CHECK(eddy_bytes_equal_cstr(r.records[2].key, "k") && r.records[2].timestamp == 5);
		CHECK(one(" \t ").records_len == 0 && one(NULL).records_len == 0);
	}
#elif defined(GUEST_counter)
	{
		eddy_test_reset();
		CHECK(value_is(one("a"), "1"));
		CHECK(value_is(one("b"), "2"));
		CHECK(eddy_bytes_equal_cstr(eddy_test_state(eddy_cstr("k")), "2"));
		CHECK(eddy_test_counter("records") == 2);
		eddy_test_set_state(eddy_cstr("k"), eddy_cstr("a\"b"));
		eddy_test_result_t r = one("c");
		CHECK(r.code == EDDY_REJECTED &&
		      strcmp(r.reason, "stored count \"a\\\"b\": strconv.ParseUint: parsing \"a\\\"b\": invalid syntax") == 0);
		eddy_test_set_state(eddy_cstr("k"), eddy_cstr("18446744073709551616"));
		r = one("c");
		CHECK(r.code == EDDY_REJECTED && strstr(r.reason, ": value out of range") != NULL);
		eddy_test_set_state(eddy_cstr("k"), eddy_cstr("18446744073709551615"));
		CHECK(value_is(one("c"), "0")); /* wraps, as in Go */
		eddy_test_set_state_mode(EDDY_TEST_STATE_NONE);
		r = one("d");
		CHECK(r.code == EDDY_REJECTED && strcmp(r.reason, EDDY_REASON_NO_STATE) == 0);
		eddy_test_set_state_mode(EDDY_TEST_STATE_FAILING);
		CHECK(one("d").code == EDDY_STATE);
		eddy_test_reset();
	}
#elif defined(GUEST_timeout)
	{
		/* The records of conformance's reference case: each moves its
		 * key's timer; none is passed on. */
		eddy_test_reset();
		eddy_record_t in[4] = {
			{.key = eddy_cstr("a"), .value = eddy_cstr("x"), .timestamp = 1000},
			{.key = eddy_cstr("b"), .timestamp = 1500},
			{.key = eddy_cstr("a"), .timestamp = 1800},
			{.key = EDDY_NULL, .timestamp = 2000},
		};
		eddy_test_result_t res[5];
		CHECK(eddy_test_process(in, 4, res) == 0);
		for (int i = 0; i < 4; i++)
			CHECK(res[i].code == EDDY_OK && res[i].records_len == 0);
		eddy_timer_t ts[8];
		CHECK(eddy_test_timers(ts, 8) == 3);
		CHECK(eddy_bytes_equal_cstr(ts[0].key, "b") && ts[0].time == 2500 && ts[0].domain == EDDY_EVENT_TIME);
		CHECK(eddy_bytes_equal_cstr(ts[1].key, "a") && ts[1].time == 2800);
		CHECK(ts[2].key.len == 0 && ts[2].time == 3000);
		CHECK(!eddy_test_has_timer(eddy_cstr("a"), EDDY_EVENT_TIME, 2000));
		CHECK(eddy_bytes_equal_cstr(eddy_test_state(eddy_cstr("a")), "1800"));
		CHECK(eddy_bytes_equal_cstr(eddy_test_state(eddy_cstr("b")), "1500"));
		CHECK(eddy_bytes_equal_cstr(eddy_test_state(eddy_cstr("")), "2000"));

		/* Timers that fire: one matches, one is stale, one is of
		 * processing time, one has no activity, and the empty key's. */
		eddy_timer_t fired[5] = {
			{.key = eddy_cstr("b"), .time = 2500},
			{.key = eddy_cstr("a"), .time = 2000},
			{.key = eddy_cstr("a"), .time = 2800, .domain = EDDY_PROCESSING_TIME},
			{.key = eddy_cstr("c"), .time = 9000},
			{.key = eddy_bytes("", 0), .time = 3000},
		};
		CHECK(eddy_test_fire(fired, 5, res) == 0);
		CHECK(res[0].code == EDDY_OK && res[0].records_len == 1);
		CHECK(eddy_bytes_equal_cstr(res[0].records[0].key, "b") &&
		      eddy_bytes_equal_cstr(res[0].records[0].value, "1500") && res[0].records[0].timestamp == 2500 &&
		      res[0].records[0].headers_len == 0);
		for (int i = 1; i < 4; i++)
			CHECK(res[i].code == EDDY_OK && res[i].records_len == 0);
		CHECK(res[4].code == EDDY_OK && res[4].records_len == 1 && res[4].records[0].key.ptr &&
		      res[4].records[0].key.len == 0 && eddy_bytes_equal_cstr(res[4].records[0].value, "2000") &&
		      res[4].records[0].timestamp == 3000);
		CHECK(eddy_test_state(eddy_cstr("b")).ptr == NULL && eddy_test_state(eddy_cstr("")).ptr == NULL);
		CHECK(eddy_bytes_equal_cstr(eddy_test_state(eddy_cstr("a")), "1800"));
		/* The output's timestamp is nil: the timer's. */
		eddy_mp_writer_t w = {0};
		eddy_mp_write_array(&w, 1);
		eddy_mp_write_array(&w, 3);
		eddy_mp_write_bin(&w, "a", 1);
		eddy_mp_write_int(&w, 2800);
		eddy_mp_write_int(&w, 0);
		static const uint8_t want[] = {0x91, 0x92, 0x00, 0x91, 0x94, 0xc4, 0x01, 'a',
					       0xc4, 0x04, '1',  '8',  '0',  '0',  0xc0, 0x90};
		eddy_bytes_t out = call("eddy_timer", &w);
		CHECK(out.len == sizeof want && memcmp(out.ptr, want, sizeof want) == 0);
		eddy_free(w.buf);

		/* Negative times and times at the ends of int64. */
		eddy_test_reset();
		eddy_record_t neg = {.key = eddy_cstr("n"), .timestamp = -5000};
		CHECK(eddy_test_process(&neg, 1, res) == 0 && res[0].code == EDDY_OK);
		CHECK(eddy_bytes_equal_cstr(eddy_test_state(eddy_cstr("n")), "-5000"));
		CHECK(eddy_test_has_timer(eddy_cstr("n"), EDDY_EVENT_TIME, -4000));
		neg.timestamp = INT64_MAX;
		CHECK(eddy_test_process(&neg, 1, res) == 0 && res[0].code == EDDY_OK);
		CHECK(!eddy_test_has_timer(eddy_cstr("n"), EDDY_EVENT_TIME, -4000));
		CHECK(eddy_test_has_timer(eddy_cstr("n"), EDDY_EVENT_TIME, INT64_MIN + 999)); /* wraps, as in Go */
		eddy_timer_t wrap = {.key = eddy_cstr("n"), .time = INT64_MIN + 999};
		CHECK(eddy_test_fire(&wrap, 1, res) == 0 && res[0].records_len == 1 &&
		      eddy_bytes_equal_cstr(res[0].records[0].value, "9223372036854775807"));

		/* A stored time that is not a number. */
		eddy_test_set_state(eddy_cstr("k"), eddy_cstr("a\"b"));
		eddy_test_result_t r = one("v");
		CHECK(r.code == EDDY_REJECTED &&
		      strcmp(r.reason, "stored time \"a\\\"b\": strconv.ParseInt: parsing \"a\\\"b\": invalid syntax") == 0);
		eddy_timer_t k = {.key = eddy_cstr("k"), .time = 1};
		CHECK(eddy_test_fire(&k, 1, res) == 0 && res[0].code == EDDY_REJECTED);
		eddy_test_set_state(eddy_cstr("k"), eddy_cstr("9223372036854775808"));
		r = one("v");
		CHECK(r.code == EDDY_REJECTED && strstr(r.reason, ": value out of range") != NULL);

		/* Without a store: REJECTED; a failing store: STATE. */
		eddy_test_set_state_mode(EDDY_TEST_STATE_NONE);
		r = one("v");
		CHECK(r.code == EDDY_REJECTED && strcmp(r.reason, EDDY_REASON_NO_STATE) == 0);
		CHECK(eddy_test_fire(&k, 1, res) == 0 && res[0].code == EDDY_REJECTED);
		eddy_test_set_state_mode(EDDY_TEST_STATE_FAILING);
		CHECK(one("v").code == EDDY_STATE);
		eddy_test_reset();
	}
#elif defined(GUEST_prefix)
	{
		/* The records of conformance's reference case, the first with a
		 * header. */
		eddy_header_t h = {eddy_cstr("h"), eddy_cstr("1")};
		eddy_record_t in[3] = {
			{.key = eddy_cstr("k"), .value = eddy_cstr("v"), .timestamp = 3, .headers = &h, .headers_len = 1},
			{.value = EDDY_NULL, .timestamp = 4},
			{.value = eddy_cstr("ünï"), .timestamp = 5},
		};
		eddy_test_result_t res[3];

		/* Without the entry: records unchanged. */
		eddy_test_reset();
		eddy_test_set_config("other", eddy_cstr("x"));
		CHECK(eddy_test_process(in, 3, res) == 0);
		CHECK(value_is(res[0], "v") && eddy_bytes_equal_cstr(res[0].records[0].key, "k"));
		CHECK(res[0].records[0].timestamp == 3 && res[0].records[0].headers_len == 1);
		CHECK(res[1].code == EDDY_OK && res[1].records_len == 1 && res[1].records[0].value.ptr == NULL);
		CHECK(value_is(res[2], "ünï"));
		/* Read once: an entry set later does not reach this instance. */
		eddy_test_set_config("prefix", eddy_cstr("p-"));
		CHECK(value_is(one("v"), "v"));

		/* A new instance (the guest's statics as they start) reads it. */
		prefix_read = false;
		CHECK(eddy_test_process(in, 3, res) == 0);
		CHECK(value_is(res[0], "p-v") && eddy_bytes_equal_cstr(res[0].records[0].key, "k"));
		CHECK(res[0].records[0].timestamp == 3 && res[0].records[0].headers_len == 1 &&
		      eddy_bytes_equal_cstr(res[0].records[0].headers[0].name, "h") &&
		      eddy_bytes_equal_cstr(res[0].records[0].headers[0].value, "1"));
		CHECK(value_is(res[1], "p-") && res[1].records[0].key.ptr == NULL && res[1].records[0].timestamp == 4);
		CHECK(value_is(res[2], "p-ünï") && res[2].records[0].timestamp == 5);
		CHECK(value_is(one(""), "p-"));
		/* The copy outlives the SDK's buffer, which the next read reuses. */
		eddy_test_set_config("prefix", eddy_cstr("q-"));
		eddy_bytes_t q;
		CHECK(eddy_config_get("prefix", &q) && eddy_bytes_equal_cstr(q, "q-"));
		CHECK(value_is(one("v"), "p-v"));

		/* An empty entry: records unchanged, a null value stays null. */
		eddy_free((void *)prefix.ptr);
		prefix = EDDY_NULL;
		prefix_read = false;
		eddy_test_set_config("prefix", eddy_bytes("", 0));
		CHECK(value_is(one("v"), "v"));
		eddy_test_result_t r = one(NULL);
		CHECK(r.code == EDDY_OK && r.records_len == 1 && r.records[0].value.ptr == NULL);

		/* A long prefix of bytes. */
		static uint8_t dashes[5002];
		memset(dashes, '-', 5000);
		memcpy(dashes + 5000, "\xff", 2);
		prefix_read = false;
		eddy_test_set_config("prefix", eddy_bytes(dashes, 5000));
		r = one("\xff");
		CHECK(r.code == EDDY_OK && r.records[0].value.len == 5001 &&
		      memcmp(r.records[0].value.ptr, dashes, 5001) == 0);
		eddy_test_reset();
	}
#elif defined(GUEST_stats)
	{
		eddy_mp_writer_t w = {0};
		/* init, add 10, 3.5 and "x", result */
		eddy_bytes_t out = call("eddy_agg_init", &w);
		CHECK(out.len == 20 && out.ptr[2] == 0xc4 && out.ptr[3] == 16);
		eddy_mp_write_array(&w, 1);
		eddy_mp_write_array(&w, 3);
		eddy_mp_write_bin(&w, "g", 1);
		eddy_mp_write_nil(&w);
		const char *vals[] = {"10", " 3.5 ", "x", "1e400"};
		eddy_mp_write_array(&w, 4);
		for (int i = 0; i < 4; i++) {
			eddy_mp_write_array(&w, 4);
			eddy_mp_write_nil(&w);
			eddy_mp_write_bin(&w, vals[i], strlen(vals[i]));
			eddy_mp_write_int(&w, i);
			eddy_mp_write_array(&w, 0);
		}
		out = call("eddy_agg_add", &w);
		eddy_mp_reader_t r;
		eddy_mp_reader_init(&r, out.ptr, out.len);
		CHECK(eddy_mp_read_array(&r) == 1 && eddy_mp_read_array(&r) == 2);
		eddy_bytes_t acc = eddy_mp_read_bytes(&r);
		CHECK(acc.len == 16 && acc.ptr[0] == 2);
		CHECK(eddy_mp_read_array(&r) == 2);
		CHECK(eddy_mp_read_array(&r) == 3 && eddy_mp_read_int(&r) == 2 && eddy_mp_read_int(&r) == EDDY_BAD_INPUT);
		CHECK(eddy_bytes_equal_cstr(eddy_mp_read_str(&r), "value is not a JSON number"));
		CHECK(eddy_mp_read_array(&r) == 3 && eddy_mp_read_int(&r) == 3 && eddy_mp_read_int(&r) == EDDY_BAD_INPUT);
		CHECK(eddy_bytes_equal_cstr(eddy_mp_read_str(&r), "value is out of the float64 range"));
		uint8_t saved[16];
		memcpy(saved, acc.ptr, 16);
		/* result of that accumulator, of the empty one, and of a bad one */
		static const uint8_t zero[16];
		w.len = 0;
		eddy_mp_write_array(&w, 3);
		eddy_mp_write_array(&w, 2);
		eddy_mp_write_nil(&w);
		eddy_mp_write_bin(&w, saved, 16);
		eddy_mp_write_array(&w, 2);
		eddy_mp_write_nil(&w);
		eddy_mp_write_bin(&w, zero, 16);
		eddy_mp_write_array(&w, 2);
		eddy_mp_write_nil(&w);
		eddy_mp_write_bin(&w, "abc", 3);
		out = call("eddy_agg_result", &w);
		eddy_mp_reader_init(&r, out.ptr, out.len);
		CHECK(eddy_mp_read_array(&r) == 3);
		CHECK(eddy_mp_read_array(&r) == 2 && eddy_mp_read_int(&r) == 0);
		CHECK(eddy_bytes_equal_cstr(eddy_mp_read_bytes(&r), "{\"count\":2,\"sum\":13.5,\"avg\":6.75}"));
		CHECK(eddy_mp_read_array(&r) == 2 && eddy_mp_read_int(&r) == 0);
		CHECK(eddy_bytes_equal_cstr(eddy_mp_read_bytes(&r), "{\"count\":0,\"sum\":0,\"avg\":null}"));
		CHECK(eddy_mp_read_array(&r) == 2 && eddy_mp_read_int(&r) == EDDY_REJECTED);
		CHECK(eddy_bytes_equal_cstr(eddy_mp_read_str(&r), "accumulator is 3 bytes, want 16"));
		/* encoding/json's number forms */
		struct {
			double f;
			const char *want;
		} nums[] = {{1e21, "1e+21"}, {1e-7, "1e-7"}, {123456789, "123456789"}, {0.000001, "0.000001"},
			    {-2.5e-10, "-2.5e-10"}, {1e20, "100000000000000000000"}, {0.1 + 0.2, "0.30000000000000004"}};
		for (size_t i = 0; i < sizeof nums / sizeof nums[0]; i++) {
			eddy_buf_t b = {0};
			append_number(&b, nums[i].f);
			CHECK(b.len == strlen(nums[i].want) && memcmp(b.data, nums[i].want, b.len) == 0);
			eddy_free(b.data);
		}
		eddy_free(w.buf);
	}
#elif defined(GUEST_joiner)
	{
		eddy_bytes_t out;
		eddy_bytes_t j;
		CHECK(join(EDDY_NULL, eddy_cstr("{\"a\":1}"), EDDY_NULL, &j) == EDDY_OK &&
		      eddy_bytes_equal_cstr(j, "{\"left\":{\"a\":1},\"right\":null}"));
		j = EDDY_NULL;
		CHECK(join(EDDY_NULL, EDDY_NULL, EDDY_NULL, &j) == EDDY_OK && j.ptr == NULL);
		CHECK(join(EDDY_NULL, eddy_cstr(""), EDDY_NULL, &j) == EDDY_BAD_INPUT);
		CHECK(join(EDDY_NULL, eddy_cstr("1"), eddy_cstr("[1,"), &j) == EDDY_BAD_INPUT);
		(void)out;
	}
#elif defined(GUEST_wordkey)
	{
		eddy_record_t in = {.value = eddy_cstr(" \u2003hello world")};
		eddy_bytes_t key = EDDY_NULL;
		CHECK(first_word(&in, &key) == EDDY_OK && eddy_bytes_equal_cstr(key, "hello"));
		in.value = eddy_cstr(" \t");
		key = EDDY_NULL;
		CHECK(first_word(&in, &key) == EDDY_OK && key.ptr == NULL);
		int64_t ts = 0;
		in.value = eddy_cstr("{\"ts\": -12, \"x\": {\"ts\": 5}}");
		CHECK(event_time(&in, &ts) == EDDY_OK && ts == -12);
		const char *bad[] = {"{\"ts\": 1.5}", "{\"ts\": \"17\"}", "{\"ts\": 9223372036854775808}", "{}", "[1]", "{"};
		for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
			in.value = eddy_cstr(bad[i]);
			CHECK(event_time(&in, &ts) == EDDY_BAD_INPUT);
		}
	}
#elif defined(GUEST_nx_q1)
	{
		/* The Nexmark guests are checked against nexmark's reference
		 * queries and their Go twins by guests/nexmark_test.go; these are
		 * a few of nx-q1's Go cases. */
		static const char *cases[][2] = {
			{"{\"bidder\":1,\"price\":-7}", "{\"bidder\":1,\"price\":-6}"},
			{" { \"price\" : 100 ,\"x\":[1,{\"price\":5}], \"bidder\":2 } ", " { \"price\" : 89 ,\"x\":[1,{\"price\":5}], \"bidder\":2 } "},
			{"{\"bidder\":1,\"price\":100,\"price\":200}", "{\"bidder\":1,\"price\":100,\"price\":178}"},
			{"{\"bidder\":1,\"price\":9223372036854775807}", "{\"bidder\":1,\"price\":92233720368547757}"},
			{"{\"auction\":1000,\"bidder\":1001,\"price\":32530001,\"channel\":\"Facebook\",\"url\":\"https://www.nexmark.com/rvx/xssd/leql/item.htm?query=1\",\"dateTime\":1436918400000,\"extra\":\"fdiysaV^]NLVsbolvyqwg\\\\Z`UaTQO\"}",
			 "{\"auction\":1000,\"bidder\":1001,\"price\":28951700,\"channel\":\"Facebook\",\"url\":\"https://www.nexmark.com/rvx/xssd/leql/item.htm?query=1\",\"dateTime\":1436918400000,\"extra\":\"fdiysaV^]NLVsbolvyqwg\\\\Z`UaTQO\"}"},
		};
		for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
			CHECK(value_is(one(cases[i][0]), cases[i][1]));
		static const char *bad[][2] = {
			{"{\"id\":1,\"name\":\"n\"}", "value is not a bid: no \"bidder\" member"},
			{"{\"bidder\":1}", "no \"price\" member"},
			{"{\"bidder\":1,\"price\":1.5}", "\"price\" is not an integer"},
			{"[1]", "value is not a JSON object"},
			{"{\"bidder\":1", "value is not valid JSON"},
		};
		for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
			eddy_test_result_t r = one(bad[i][0]);
			CHECK(r.code == EDDY_BAD_INPUT && strcmp(r.reason, bad[i][1]) == 0);
		}
		CHECK(one(NULL).code == EDDY_BAD_INPUT);
	}
#elif defined(GUEST_nx_q2)
	{
		CHECK(value_is(one("{\"auction\":-246,\"bidder\":1,\"price\":-0}"), "{\"auction\":-246,\"price\":0}"));
		CHECK(value_is(one("{ \"price\" : 7, \"bidder\":1, \"auction\" : 123 }"), "{\"auction\":123,\"price\":7}"));
		eddy_test_result_t r = one("{\"auction\":1108,\"bidder\":1,\"price\":5}");
		CHECK(r.code == EDDY_OK && r.records_len == 0);
		r = one("{\"id\":123,\"name\":\"n\"}");
		CHECK(r.code == EDDY_OK && r.records_len == 0);
		r = one("{\"auction\":1,\"bidder\":1,\"price\":1e3}");
		CHECK(r.code == EDDY_BAD_INPUT && strcmp(r.reason, "\"price\" is not an integer") == 0);
	}
#else
	fprintf(stderr, "no cases for %s\n", STR(GUEST));
	failures++;
#endif
}

int main(void)
{
	test();
	if (failures)
		return 1;
	printf("ok   guests/c/%s\n", STR(GUEST));
	return 0;
}
