/*
 * stats is an Eddy aggregate function: the count, sum and average of record
 * values that are JSON numbers ("42", "3.5", "-1e3"; white space around the
 * number is allowed), as guests/go/stats computes them.
 *
 * The accumulator is 16 bytes, little-endian: the count as an int64, then
 * the sum as a float64 (the Go guest's encoding, so either can read the
 * other's). add updates it in place. The result is the JSON object
 * {"count":N,"sum":S,"avg":A}, numbers written as Go's encoding/json writes
 * a float64; a sum or average that is not finite (no records yet, or a
 * float64 overflow) is written as null.
 *
 * A value that is not a JSON number, or one outside the float64 range, fails
 * its record with BAD_INPUT; an accumulator that is not 16 bytes (written by
 * something else) fails with REJECTED.
 *
 * Build (from guests/c; build.sh builds every guest the same way):
 *
 *	clang-19 --target=wasm32 -nostdlib -mbulk-memory -msimd128 -O2 -s -ffile-prefix-map=$PWD=. \
 *		-I../../sdk/c -Iinternal -Wl,--no-entry -o ../../testdata/c/stats.wasm stats.c
 */
#include "eddy.h"
#include "jsonscan.h"
#include "strconv.h"

/* ACC_SIZE is the size of an accumulator: int64 count, float64 sum. */
#define ACC_SIZE 16

/* zero is the initial accumulator; the SDK copies it. */
static const uint8_t zero[ACC_SIZE];

static uint64_t load64(const uint8_t *p)
{
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static void store64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++, v >>= 8)
		p[i] = (uint8_t)v;
}

static int decode(eddy_bytes_t acc, int64_t *count, double *sum)
{
	if (acc.len != ACC_SIZE)
		return eddy_failf(EDDY_REJECTED, "accumulator is %zu bytes, want 16", acc.len);
	uint64_t bits = load64(acc.ptr + 8);
	*count = (int64_t)load64(acc.ptr);
	memcpy(sum, &bits, 8);
	return EDDY_OK;
}

static void encode(uint8_t *acc, int64_t count, double sum)
{
	uint64_t bits;
	memcpy(&bits, &sum, 8);
	store64(acc, (uint64_t)count);
	store64(acc + 8, bits);
}

static int initial(eddy_bytes_t *acc)
{
	*acc = eddy_bytes(zero, ACC_SIZE);
	return EDDY_OK;
}

static int add(eddy_buf_t *acc, const eddy_record_t *r)
{
	int64_t count;
	double sum, v;
	int rc = decode(eddy_bytes(acc->data, acc->len), &count, &sum);
	if (rc)
		return rc;
	eddy_bytes_t tok;
	if (!js_number(r->value, &tok))
		return eddy_bad_input("value is not a JSON number");
	if (!js_float(tok, &v))
		return eddy_bad_input("value is out of the float64 range");
	encode(acc->data, (int64_t)((uint64_t)count + 1), sum + v);
	return EDDY_OK;
}

static int merge(eddy_bytes_t key, eddy_bytes_t a, eddy_bytes_t b, eddy_bytes_t *out)
{
	(void)key;
	int64_t ca, cb;
	double sa, sb;
	int rc = decode(a, &ca, &sa);
	if (rc)
		return rc;
	if ((rc = decode(b, &cb, &sb)))
		return rc;
	uint8_t *m = eddy_scratch(ACC_SIZE);
	encode(m, (int64_t)((uint64_t)ca + (uint64_t)cb), sa + sb);
	*out = eddy_bytes(m, ACC_SIZE);
	return EDDY_OK;
}

/* append_number appends f as encoding/json writes a float64, or null if f
 * is not finite (JSON has no NaN or infinity). */
static void append_number(eddy_buf_t *b, double f)
{
	if (f != f || f - f != 0) {
		eddy_buf_append(b, "null", 4);
		return;
	}
	double abs = f < 0 ? -f : f;
	char format = abs != 0 && (abs < 1e-6 || abs >= 1e21) ? 'e' : 'f';
	sc_append_float(b, f, format);
	if (format == 'e') {
		/* Clean up e-09 to e-9, as encoding/json does. */
		size_t n = b->len;
		uint8_t *p = b->data;
		if (n >= 4 && p[n - 4] == 'e' && p[n - 3] == '-' && p[n - 2] == '0') {
			p[n - 2] = p[n - 1];
			b->len--;
		}
	}
}

/* res holds the result value; the SDK copies it before the next call. */
static eddy_buf_t res;

static int result(eddy_bytes_t key, eddy_bytes_t acc, eddy_bytes_t *out)
{
	(void)key;
	int64_t count;
	double sum;
	int rc = decode(acc, &count, &sum);
	if (rc)
		return rc;
	res.len = 0;
	eddy_buf_append(&res, "{\"count\":", 9);
	sc_append_int(&res, count);
	eddy_buf_append(&res, ",\"sum\":", 7);
	append_number(&res, sum);
	eddy_buf_append(&res, ",\"avg\":", 7);
	append_number(&res, sum / (double)count);
	eddy_buf_append(&res, "}", 1);
	*out = eddy_bytes(res.data, res.len);
	return EDDY_OK;
}

EDDY_MODULE(.name = "stats", .version = "1.0.0",
	    .aggregate = {.init = initial, .add = add, .merge = merge, .result = result});
