/*
 * msgpack_test checks eddy_msgpack.h on its own (without eddy.h): the
 * shortest-form writer, the reader of every format of ABI.md 5.1, skip, and
 * the reader's errors. Native only; run by sdk/c/test.sh.
 */
#include "../eddy_msgpack.h"
#include "check.h"

#define W(...) ((const unsigned char[]){__VA_ARGS__})

static eddy_mp_writer_t w;

static void reset(void) { w.len = 0; }

#define CHECK_W(...) CHECK_BYTES(w.buf, w.len, W(__VA_ARGS__), sizeof W(__VA_ARGS__))

static void test_write_ints(void)
{
	struct {
		int64_t v;
		unsigned char want[9];
		size_t n;
	} cases[] = {
		{0, {0x00}, 1},
		{127, {0x7f}, 1},
		{128, {0xcc, 0x80}, 2},
		{255, {0xcc, 0xff}, 2},
		{256, {0xcd, 0x01, 0x00}, 3},
		{65535, {0xcd, 0xff, 0xff}, 3},
		{65536, {0xce, 0x00, 0x01, 0x00, 0x00}, 5},
		{4294967295, {0xce, 0xff, 0xff, 0xff, 0xff}, 5},
		{4294967296, {0xcf, 0, 0, 0, 1, 0, 0, 0, 0}, 9},
		{1700000000000, {0xcf, 0x00, 0x00, 0x01, 0x8b, 0xcf, 0xe5, 0x68, 0x00}, 9},
		{INT64_MAX, {0xcf, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, 9},
		{-1, {0xff}, 1},
		{-32, {0xe0}, 1},
		{-33, {0xd0, 0xdf}, 2},
		{-128, {0xd0, 0x80}, 2},
		{-129, {0xd1, 0xff, 0x7f}, 3},
		{-32768, {0xd1, 0x80, 0x00}, 3},
		{-32769, {0xd2, 0xff, 0xff, 0x7f, 0xff}, 5},
		{INT32_MIN, {0xd2, 0x80, 0, 0, 0}, 5},
		{(int64_t)INT32_MIN - 1, {0xd3, 0xff, 0xff, 0xff, 0xff, 0x7f, 0xff, 0xff, 0xff}, 9},
		{INT64_MIN, {0xd3, 0x80, 0, 0, 0, 0, 0, 0, 0}, 9},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		reset();
		eddy_mp_write_int(&w, cases[i].v);
		CHECK_BYTES(w.buf, w.len, cases[i].want, cases[i].n);
		/* and back */
		eddy_mp_reader_t r;
		eddy_mp_reader_init(&r, w.buf, w.len);
		CHECK(eddy_mp_read_int(&r) == cases[i].v);
		CHECK(r.err == 0 && eddy_mp_left(&r) == 0);
	}
	reset();
	eddy_mp_write_uint(&w, UINT64_MAX);
	CHECK_W(0xcf, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff);
}

static void test_write_heads(void)
{
	static unsigned char big[70000];
	size_t sizes[] = {0, 1, 15, 16, 31, 32, 255, 256, 65535, 65536};
	for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
		size_t n = sizes[i];
		eddy_mp_reader_t r;
		reset();
		eddy_mp_write_str(&w, (const char *)big, n);
		unsigned char f = w.buf[0];
		CHECK(n < 32 ? f == (0xa0 | n) : n <= 255 ? f == 0xd9 : n <= 65535 ? f == 0xda : f == 0xdb);
		eddy_mp_reader_init(&r, w.buf, w.len);
		eddy_bytes_t s = eddy_mp_read_str(&r);
		CHECK(s.ptr && s.len == n && !r.err && eddy_mp_left(&r) == 0);

		reset();
		eddy_mp_write_bin(&w, big, n);
		f = w.buf[0];
		CHECK(n <= 255 ? f == 0xc4 : n <= 65535 ? f == 0xc5 : f == 0xc6);
		eddy_mp_reader_init(&r, w.buf, w.len);
		s = eddy_mp_read_bytes(&r);
		CHECK(s.ptr && s.len == n && !r.err);

		reset();
		eddy_mp_write_array(&w, (uint32_t)n);
		f = w.buf[0];
		CHECK(n < 16 ? f == (0x90 | n) : n <= 65535 ? f == 0xdc : f == 0xdd);
		reset();
		eddy_mp_write_map(&w, (uint32_t)n);
		f = w.buf[0];
		CHECK(n < 16 ? f == (0x80 | n) : n <= 65535 ? f == 0xde : f == 0xdf);
	}
	reset();
	eddy_mp_write_bin(&w, NULL, 0);
	eddy_mp_write_bin(&w, "", 0);
	eddy_mp_write_bool(&w, true);
	eddy_mp_write_bool(&w, false);
	eddy_mp_write_nil(&w);
	CHECK_W(0xc0, 0xc4, 0x00, 0xc3, 0xc2, 0xc0);
}

static void test_read_all_formats(void)
{
	eddy_mp_reader_t r;
	/* Integers of every width. */
	const unsigned char ints[] = {0x05, 0xe0, 0xcc, 0xfe, 0xcd, 0x12, 0x34, 0xce, 0x12, 0x34, 0x56, 0x78, 0xcf, 0, 0, 0,
				      1, 0, 0, 0, 0, 0xd0, 0x80, 0xd1, 0xff, 0x00, 0xd2, 0xff, 0xff, 0xff, 0xfe, 0xd3,
				      0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfd, 0xd0, 0x01};
	eddy_mp_reader_init(&r, ints, sizeof ints);
	CHECK(eddy_mp_read_int(&r) == 5);
	CHECK(eddy_mp_read_int(&r) == -32);
	CHECK(eddy_mp_read_int(&r) == 254);
	CHECK(eddy_mp_read_int(&r) == 0x1234);
	CHECK(eddy_mp_read_int(&r) == 0x12345678);
	CHECK(eddy_mp_read_int(&r) == 4294967296);
	CHECK(eddy_mp_read_int(&r) == -128);
	CHECK(eddy_mp_read_int(&r) == -256);
	CHECK(eddy_mp_read_int(&r) == -2);
	CHECK(eddy_mp_read_int(&r) == -3);
	CHECK(eddy_mp_read_int(&r) == 1);
	CHECK(r.err == 0 && eddy_mp_left(&r) == 0);

	/* str and bin of every width, and nil. */
	const unsigned char strs[] = {0xa2, 'h', 'i', 0xd9, 0x01, 'a', 0xda, 0x00, 0x02, 'b', 'c', 0xdb, 0, 0, 0, 1, 'd',
				      0xc4, 0x00, 0xc5, 0x00, 0x01, 'e', 0xc6, 0, 0, 0, 2, 'f', 'g', 0xc0, 0xc3, 0xc2};
	eddy_mp_reader_init(&r, strs, sizeof strs);
	eddy_bytes_t b = eddy_mp_read_str(&r);
	CHECK(b.len == 2 && memcmp(b.ptr, "hi", 2) == 0);
	b = eddy_mp_read_bytes(&r); /* str accepted as bytes */
	CHECK(b.len == 1 && b.ptr[0] == 'a');
	b = eddy_mp_read_bytes(&r);
	CHECK(b.len == 2 && memcmp(b.ptr, "bc", 2) == 0);
	b = eddy_mp_read_bytes(&r);
	CHECK(b.len == 1 && b.ptr[0] == 'd');
	b = eddy_mp_read_bytes(&r);
	CHECK(b.ptr != NULL && b.len == 0); /* empty, not null */
	b = eddy_mp_read_str(&r); /* bin accepted as str */
	CHECK(b.len == 1 && b.ptr[0] == 'e');
	b = eddy_mp_read_bytes(&r);
	CHECK(b.len == 2 && memcmp(b.ptr, "fg", 2) == 0);
	CHECK(eddy_mp_is_nil(&r));
	b = eddy_mp_read_bytes(&r);
	CHECK(b.ptr == NULL && b.len == 0 && r.err == 0);
	CHECK(eddy_mp_read_bool(&r) == true);
	CHECK(eddy_mp_read_bool(&r) == false);
	CHECK(r.err == 0 && eddy_mp_left(&r) == 0);

	/* Arrays and maps of every width. */
	const unsigned char heads[] = {0x92, 0x01, 0x02, 0xdc, 0x00, 0x01, 0x03, 0xdd, 0, 0, 0, 1, 0x04, 0x81, 0x01, 0x02,
				       0xde, 0x00, 0x01, 0x01, 0x02, 0xdf, 0, 0, 0, 1, 0x01, 0x02};
	eddy_mp_reader_init(&r, heads, sizeof heads);
	CHECK(eddy_mp_read_array(&r) == 2);
	eddy_mp_read_int(&r);
	eddy_mp_read_int(&r);
	CHECK(eddy_mp_read_array(&r) == 1);
	eddy_mp_read_int(&r);
	CHECK(eddy_mp_read_array(&r) == 1);
	eddy_mp_read_int(&r);
	for (int i = 0; i < 3; i++) {
		CHECK(eddy_mp_read_map(&r) == 1);
		eddy_mp_read_int(&r);
		eddy_mp_read_int(&r);
	}
	CHECK(r.err == 0 && eddy_mp_left(&r) == 0);
}

static void test_read_errors(void)
{
	eddy_mp_reader_t r;
	/* Short input at every position of a uint64. */
	const unsigned char u64[] = {0xcf, 0, 0, 0, 0, 0, 0, 0, 1};
	for (size_t n = 0; n < sizeof u64; n++) {
		eddy_mp_reader_init(&r, u64, n);
		CHECK(eddy_mp_read_int(&r) == 0 && r.err == EDDY_MP_ERR_SHORT);
	}
	/* uint64 above INT64_MAX. */
	const unsigned char over[] = {0xcf, 0x80, 0, 0, 0, 0, 0, 0, 0};
	eddy_mp_reader_init(&r, over, sizeof over);
	eddy_mp_read_int(&r);
	CHECK(r.err == EDDY_MP_ERR_RANGE);
	/* Type errors; the error is sticky and nothing is consumed after it. */
	const unsigned char str[] = {0xa1, 'x', 0x01};
	eddy_mp_reader_init(&r, str, sizeof str);
	eddy_mp_read_int(&r);
	CHECK(r.err == EDDY_MP_ERR_TYPE && r.err_at == 0);
	CHECK(eddy_mp_read_str(&r).ptr == NULL && eddy_mp_offset(&r) == 0);
	/* nil is not a str. */
	const unsigned char nil[] = {0xc0};
	eddy_mp_reader_init(&r, nil, 1);
	eddy_mp_read_str(&r);
	CHECK(r.err == EDDY_MP_ERR_TYPE);
	/* A count larger than the bytes left. */
	const unsigned char arr[] = {0xdc, 0x00, 0x05, 0x01};
	eddy_mp_reader_init(&r, arr, sizeof arr);
	CHECK(eddy_mp_read_array(&r) == 0 && r.err == EDDY_MP_ERR_SHORT);
	const unsigned char fix[] = {0x93, 0x01};
	eddy_mp_reader_init(&r, fix, sizeof fix);
	CHECK(eddy_mp_read_array(&r) == 0 && r.err == EDDY_MP_ERR_SHORT);
	/* A str longer than the input. */
	const unsigned char longstr[] = {0xd9, 0x05, 'a'};
	eddy_mp_reader_init(&r, longstr, sizeof longstr);
	eddy_mp_read_str(&r);
	CHECK(r.err == EDDY_MP_ERR_SHORT);
	/* Empty input. */
	eddy_mp_reader_init(&r, "", 0);
	eddy_mp_read_bytes(&r);
	CHECK(r.err == EDDY_MP_ERR_SHORT);
	/* peek does not fail. */
	eddy_mp_reader_init(&r, "", 0);
	CHECK(eddy_mp_peek(&r) == -1 && r.err == 0 && !eddy_mp_is_nil(&r));
	/* fail keeps the first error. */
	eddy_mp_reader_init(&r, fix, sizeof fix);
	eddy_mp_fail(&r, EDDY_MP_ERR_SHAPE);
	eddy_mp_fail(&r, EDDY_MP_ERR_TYPE);
	CHECK(r.err == EDDY_MP_ERR_SHAPE);
	CHECK(strcmp(eddy_mp_error_string(EDDY_MP_ERR_SHORT), "unexpected end of input") == 0);
}

static void test_skip(void)
{
	eddy_mp_reader_t r;
	/* A map with nested values of every family, then a marker. */
	const unsigned char v[] = {0x84, 0xa1, 'a', 0x92, 0xc0, 0xc3, 0xa1, 'b', 0x81, 0x01, 0xdc, 0x00, 0x01, 0xcf, 0xff,
				   0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xc4, 0x01, 0x00, 0xdb, 0, 0, 0, 0,
				   0xd0, 0xff, 0xde, 0, 0, 0x2a};
	eddy_mp_reader_init(&r, v, sizeof v);
	eddy_mp_skip(&r);
	CHECK(r.err == 0);
	CHECK(eddy_mp_read_int(&r) == 42 && r.err == 0 && eddy_mp_left(&r) == 0);
	/* Floats and ext are not in the subset. */
	const unsigned char fl[] = {0xcb, 0, 0, 0, 0, 0, 0, 0, 0};
	eddy_mp_reader_init(&r, fl, sizeof fl);
	eddy_mp_skip(&r);
	CHECK(r.err == EDDY_MP_ERR_TYPE);
	const unsigned char ext[] = {0xd4, 0x01, 0x02};
	eddy_mp_reader_init(&r, ext, sizeof ext);
	eddy_mp_skip(&r);
	CHECK(r.err == EDDY_MP_ERR_TYPE);
	/* Nesting deeper than EDDY_MP_MAX_DEPTH. */
	unsigned char deep[200];
	memset(deep, 0x91, sizeof deep);
	deep[sizeof deep - 1] = 0x01;
	eddy_mp_reader_init(&r, deep, sizeof deep);
	eddy_mp_skip(&r);
	CHECK(r.err == EDDY_MP_ERR_DEPTH);
	eddy_mp_reader_init(&r, deep + sizeof deep - 1 - EDDY_MP_MAX_DEPTH, EDDY_MP_MAX_DEPTH + 1);
	eddy_mp_skip(&r);
	CHECK(r.err == 0 && eddy_mp_left(&r) == 0);
	/* Truncated inside a nested value. */
	eddy_mp_reader_init(&r, v, sizeof v - 5);
	eddy_mp_skip(&r);
	CHECK(r.err == EDDY_MP_ERR_SHORT);
}

static void test_growth(void)
{
	/* The writer grows from empty through several reallocations. */
	eddy_mp_writer_t g = {0};
	for (int i = 0; i < 100000; i++)
		eddy_mp_write_int(&g, i);
	eddy_mp_reader_t r;
	eddy_mp_reader_init(&r, g.buf, g.len);
	int ok = 1;
	for (int i = 0; i < 100000; i++)
		ok &= eddy_mp_read_int(&r) == i;
	CHECK(ok && r.err == 0 && eddy_mp_left(&r) == 0);
	free(g.buf);
}

int main(void)
{
	test_write_ints();
	test_write_heads();
	test_read_all_formats();
	test_read_errors();
	test_skip();
	test_growth();
	free(w.buf);
	return check_done("sdk/c msgpack");
}
