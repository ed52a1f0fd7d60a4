/*
 * nx-q2 is Nexmark's query 2, selection, as an Eddy process function, the
 * twin of guests/go/nx-q2 (same output byte for byte, same error codes and
 * reasons): a bid on an auction whose ID is a multiple of 123
 * (nexmark.Q2AuctionSkip) becomes the value {"auction":A,"price":P}, the
 * integers in decimal; the key, timestamp and headers are kept. Every other
 * event is dropped.
 *
 * The value must be a JSON object (BAD_INPUT otherwise). An object without
 * a "bidder" member is not a bid and is dropped. A bid must have integer
 * "auction" and "price" members, or it fails with BAD_INPUT, selected or
 * not. Of repeated members the last counts.
 *
 * Build (from guests/c; build.sh builds every guest the same way):
 *
 *	clang-19 --target=wasm32 -nostdlib -mbulk-memory -msimd128 -O2 -s -ffile-prefix-map=$PWD=. \
 *		-I../../sdk/c -Iinternal -Wl,--no-entry -o ../../testdata/c/nx-q2.wasm nx-q2.c
 */
#include "eddy.h"
#include "nx-event.h"

/* SKIP selects auctions whose ID is a multiple of it. */
#define SKIP 123

/* out holds the output value; the SDK copies it before the next record. */
static eddy_buf_t out;

static int select_bid(const eddy_record_t *in, eddy_emitter_t *emit)
{
	nx_event_t ev;
	int rc = nx_parse(&ev, in->value);
	if (rc != JS_OK)
		return nx_parse_error(rc);
	if (ev.kind != NX_KIND_BID)
		return EDDY_OK;
	int64_t auction, price;
	if ((rc = nx_int(&ev, NX_AUCTION, &auction)) != EDDY_OK || (rc = nx_int(&ev, NX_PRICE, &price)) != EDDY_OK)
		return rc;
	if (auction % SKIP != 0)
		return EDDY_OK;
	out.len = 0;
	eddy_buf_append(&out, "{\"auction\":", 11);
	nx_append_int(&out, auction);
	eddy_buf_append(&out, ",\"price\":", 9);
	nx_append_int(&out, price);
	eddy_buf_append(&out, "}", 1);
	eddy_record_t rec = *in;
	rec.value = eddy_bytes(out.data, out.len);
	eddy_emit(emit, &rec);
	return EDDY_OK;
}

EDDY_MODULE(.name = "nx-q2", .version = "1.0.0", .flat_map = select_bid);
