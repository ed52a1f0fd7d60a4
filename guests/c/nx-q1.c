/*
 * nx-q1 is Nexmark's query 1, currency conversion, as an Eddy process
 * function (a map), the twin of guests/go/nx-q1 (same output byte for
 * byte, same error codes and reasons): each bid comes out with its "price"
 * replaced by price*89/100 in integer arithmetic (int64, wrapping on
 * overflow as Go does, truncated towards zero). Every other byte of the
 * value and the key, timestamp and headers are unchanged.
 *
 * The value must be a JSON object with a "bidder" member (a bid, for
 * nexmark.Decode) and an integer "price"; anything else fails with
 * BAD_INPUT. When "price" occurs more than once, the last one is converted.
 * Parsing is nx-event.h's: nexmark.AppendJSON's layout takes a fast path.
 *
 * Build (from guests/c; build.sh builds every guest the same way):
 *
 *	clang-19 --target=wasm32 -nostdlib -mbulk-memory -msimd128 -O2 -s -ffile-prefix-map=$PWD=. \
 *		-I../../sdk/c -Iinternal -Wl,--no-entry -o ../../testdata/c/nx-q1.wasm nx-q1.c
 */
#include "eddy.h"
#include "nx-event.h"

/* The exchange rate: euros = dollars * NUM / DEN (nexmark.EuroNumerator,
 * nexmark.EuroDenominator). */
#define NUM 89
#define DEN 100

/* out holds the output value; the SDK copies it before the next record. */
static eddy_buf_t out;

static int convert(const eddy_record_t *in, eddy_record_t *rec)
{
	nx_event_t ev;
	int rc = nx_parse(&ev, in->value);
	if (rc != JS_OK)
		return nx_parse_error(rc);
	if (ev.kind != NX_KIND_BID)
		return eddy_bad_input("value is not a bid: no \"bidder\" member");
	int64_t price;
	if ((rc = nx_int(&ev, NX_PRICE, &price)) != EDDY_OK)
		return rc;
	size_t start = ev.spans[NX_PRICE][0], end = ev.spans[NX_PRICE][1];
	out.len = 0;
	eddy_buf_reserve(&out, ev.len + 24);
	eddy_buf_append(&out, ev.doc, start);
	nx_append_int(&out, (int64_t)((uint64_t)price * NUM) / DEN);
	eddy_buf_append(&out, ev.doc + end, ev.len - end);
	rec->value = eddy_bytes(out.data, out.len);
	return EDDY_OK;
}

EDDY_MODULE(.name = "nx-q1", .version = "1.0.0", .map = convert);
