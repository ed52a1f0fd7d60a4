/*
 * nx-event.h - allocation-free parsing of Nexmark events, the flat JSON
 * objects that nexmark.AppendJSON writes, for the C Nexmark guests
 * (guests/c/nx-*.c). It is the port of guests/go/nx-event, and must give
 * the same results and the same error reasons, so that each C guest
 * answers exactly as its Go twin does.
 *
 * nx_parse accepts any JSON object and finds its top-level members by
 * name; its kind follows nexmark.Decode: a "bidder" member makes a bid,
 * otherwise "itemName" or "seller" an auction, otherwise "name" or
 * "emailAddress" a person. What is valid JSON is what internal/jsonscan.h
 * (and Go's encoding/json) accept, and of duplicate members the last
 * counts. Members are read on demand with nx_int and nx_str.
 *
 * Two paths, as in Go: first nexmark.AppendJSON's exact layouts (members
 * in its order, no white space), checked in straight lines, member names
 * compared as two masked words (memcmp is a byte loop), integers parsed
 * eight digits at a time and strings skipped 64 bytes per loop iteration
 * with Wasm SIMD: the host's deadline check costs 20-40 ns per loop
 * iteration (ABI.md section 10), more than the rest of the work. Anything
 * else goes to the general path (js_valid, then a walk over the top-level
 * members), which gives the same answer more slowly. guests/nexmark_test.go
 * checks that the C and Go guests answer alike on edge cases, damaged
 * events and bids with extreme values.
 *
 * Header-only and freestanding. Not a guest: build.sh builds the *.c files.
 */
#ifndef EDDY_GUESTS_NX_EVENT_H
#define EDDY_GUESTS_NX_EVENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "eddy.h"
#include "jsonscan.h"

#ifdef __wasm_simd128__
#include <wasm_simd128.h>
#endif

/* The members of the three kinds of events (nexmark.AppendJSON). */
enum {
	NX_ID,
	NX_NAME,
	NX_EMAIL_ADDRESS,
	NX_CREDIT_CARD,
	NX_CITY,
	NX_STATE,
	NX_DATE_TIME,
	NX_EXTRA,
	NX_ITEM_NAME,
	NX_DESCRIPTION,
	NX_INITIAL_BID,
	NX_RESERVE,
	NX_EXPIRES,
	NX_SELLER,
	NX_CATEGORY,
	NX_AUCTION,
	NX_BIDDER,
	NX_PRICE,
	NX_CHANNEL,
	NX_URL,
	NX_MEMBERS
};

static const char *const nx_member_names[NX_MEMBERS] = {
	"id",	   "name",	 "emailAddress", "creditCard", "city",	  "state",    "dateTime",
	"extra",   "itemName",	 "description",	 "initialBid", "reserve", "expires",  "seller",
	"category", "auction", "bidder",	 "price",      "channel", "url",
};

/* The kinds of events; NX_KIND_NONE is an object with none of the members
 * that name a kind (nexmark.Decode refuses it). */
enum { NX_KIND_NONE, NX_KIND_PERSON, NX_KIND_AUCTION, NX_KIND_BID };

/* nx_event_t is a parsed event: where each member's value is in the
 * document and the integers the fast path has already parsed. */
typedef struct nx_event {
	int kind;
	const uint8_t *doc;
	size_t len;
	uint32_t present; /* bit m: spans[m] holds member m */
	uint32_t parsed;  /* bit m: ints[m] holds member m's value */
	uint32_t spans[NX_MEMBERS][2];
	int64_t ints[NX_MEMBERS];
} nx_event_t;

/* ------------------------------------------------------------------------ */
/* Words */

static inline uint64_t nx__le64(const uint8_t *p)
{
	uint64_t v;
	__builtin_memcpy(&v, p, 8); /* one i64.load: Wasm is little-endian */
	return v;
}

#define NX__ONES 0x0101010101010101ull
#define NX__HIGHS 0x8080808080808080ull

/* nx__word returns bytes [off, off+8) of the n-byte literal s as a
 * little-endian word, zero past its end (folded to a constant). */
static inline __attribute__((always_inline)) uint64_t nx__word(const char *s, size_t n, size_t off)
{
	uint64_t w = 0;
	for (size_t k = 0; k < 8; k++)
		if (off + k < n)
			w |= (uint64_t)(uint8_t)s[off + k] << (8 * k);
	return w;
}

static inline __attribute__((always_inline)) uint64_t nx__mask(size_t n, size_t off)
{
	uint64_t m = 0;
	for (size_t k = 0; k < 8; k++)
		if (off + k < n)
			m |= 0xffull << (8 * k);
	return m;
}

/* nx__lit reports whether doc holds the literal s (up to 16 bytes) at i;
 * it needs 16 bytes of document from i. memcmp would be a byte loop. */
static inline __attribute__((always_inline)) bool nx__lit(const uint8_t *d, size_t n, size_t i, const char *s,
							 size_t sn)
{
	if (i > n || n - i < 16)
		return false;
	return (((nx__le64(d + i) & nx__mask(sn, 0)) ^ nx__word(s, sn, 0)) |
		((nx__le64(d + i + 8) & nx__mask(sn, 8)) ^ nx__word(s, sn, 8))) == 0;
}
#define NX__LIT(s) nx__lit(d, n, i, s, sizeof(s) - 1) && (i += sizeof(s) - 1, true)

/* nx__non_digits marks (high bit of each byte) the bytes of x that are not
 * ASCII digits, given y = x ^ '0'x8. */
static inline uint64_t nx__non_digits(uint64_t y)
{
	return (((y & ~NX__HIGHS) + (0x80 - 10) * NX__ONES) | y) & NX__HIGHS;
}

/* nx__eight returns the number written by eight digit values, the first in
 * the lowest byte (simdjson's parse_eight_digits_unrolled). */
static inline uint64_t nx__eight(uint64_t y)
{
	y = (y * (10 << 8 | 1)) >> 8;
	y = ((y & 0x00FF00FF00FF00FFull) * (100 << 16 | 1)) >> 16;
	return ((y & 0x0000FFFF0000FFFFull) * (10000ull << 32 | 1)) >> 32;
}

static const uint64_t nx__pow10[9] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000};

/* nx__num parses the integer at d[*i..] as member m: an optional minus
 * sign and 1 to 15 digits without a leading zero (that a ',' follows is
 * the next literal's check). */
static inline bool nx__num(nx_event_t *ev, const uint8_t *d, size_t n, size_t *i, int m)
{
	size_t j = *i;
	if (j > n || n - j < 17)
		return false;
	bool neg = d[j] == '-';
	size_t k = j + neg;
	uint64_t y1 = nx__le64(d + k) ^ '0' * NX__ONES;
	uint64_t nd1 = nx__non_digits(y1);
	unsigned n1 = nd1 ? (unsigned)__builtin_ctzll(nd1) >> 3 : 8;
	if (n1 == 0 || (n1 > 1 && (y1 & 0xff) == 0))
		return false;
	uint64_t u;
	if (n1 < 8) {
		u = nx__eight(y1 << (64 - 8 * n1));
	} else {
		uint64_t y2 = nx__le64(d + k + 8) ^ '0' * NX__ONES;
		uint64_t nd2 = nx__non_digits(y2);
		unsigned n2 = nd2 ? (unsigned)__builtin_ctzll(nd2) >> 3 : 8;
		if (n2 == 8)
			return false;
		u = nx__eight(y1);
		if (n2)
			u = u * nx__pow10[n2] + nx__eight(y2 << (64 - 8 * n2));
		n1 += n2;
	}
	size_t end = k + n1;
	ev->spans[m][0] = (uint32_t)j;
	ev->spans[m][1] = (uint32_t)end;
	ev->ints[m] = neg ? -(int64_t)u : (int64_t)u;
	*i = end;
	return true;
}

/* ------------------------------------------------------------------------ */
/* Strings */

/* nx__special16 returns a 16-bit mask of the bytes at p that end a run of
 * plain string bytes: '"', '\\' and control bytes. */
#ifdef __wasm_simd128__
static inline uint32_t nx__special16(const uint8_t *p)
{
	v128_t v = wasm_v128_load(p);
	v128_t m = wasm_v128_or(wasm_v128_or(wasm_i8x16_eq(v, wasm_i8x16_splat('"')), wasm_i8x16_eq(v, wasm_i8x16_splat('\\'))),
				wasm_u8x16_lt(v, wasm_i8x16_splat(0x20)));
	return wasm_i8x16_bitmask(m);
}
#else
static inline uint32_t nx__special8(uint64_t x)
{
	/* Exact for every byte: the zero-byte test on (x ^ c) | high bits,
	 * which cannot borrow across bytes. */
	uint64_t q = x ^ '"' * NX__ONES, s = x ^ '\\' * NX__ONES;
	uint64_t zq = ~(((q & ~NX__HIGHS) + ~NX__HIGHS) | q) & NX__HIGHS;
	uint64_t zs = ~(((s & ~NX__HIGHS) + ~NX__HIGHS) | s) & NX__HIGHS;
	uint64_t ctl = ~(((x & ~NX__HIGHS) + (0x80 - 0x20) * NX__ONES) | x) & NX__HIGHS;
	uint64_t m = zq | zs | ctl;
	uint32_t r = 0;
	for (int k = 0; k < 8; k++)
		r |= (uint32_t)(m >> (8 * k + 7) & 1) << k;
	return r;
}
static inline uint32_t nx__special16(const uint8_t *p)
{
	return nx__special8(nx__le64(p)) | nx__special8(nx__le64(p + 8)) << 8;
}
#endif

/* nx__special64 returns a 64-bit mask of the special bytes at p. */
static inline uint64_t nx__special64(const uint8_t *p)
{
	return (uint64_t)nx__special16(p) | (uint64_t)nx__special16(p + 16) << 16 |
	       (uint64_t)nx__special16(p + 32) << 32 | (uint64_t)nx__special16(p + 48) << 48;
}

/* nx__simple_escape reports whether c follows '\\' in a two-byte escape. */
static inline bool nx__simple_escape(uint8_t c)
{
	return c == '"' || c == '\\' || c == '/' || c == 'b' || c == 'f' || c == 'n' || c == 'r' || c == 't';
}

/*
 * nx__skip_string returns the index after the closing quote of the string
 * whose contents start at d[i], or SIZE_MAX if it is not a valid JSON
 * string (encoding/json's rules: no control bytes, known escapes; invalid
 * UTF-8 is accepted). Plain bytes are skipped 64 at a time; fewer than 64
 * left are read as the document's last 64 bytes, so that the end of a
 * document costs no extra iteration.
 */
static inline size_t nx__skip_string(const uint8_t *d, size_t n, size_t i)
{
	for (;;) {
		size_t r = n - i;
		if (r > 0 && n >= 64) {
			/* 64 bytes from i, or the document's last 64 shifted to the r
			 * bytes from i: m marks the special bytes of the span. */
			size_t span = r >= 64 ? 64 : r;
			uint64_t m = r >= 64 ? nx__special64(d + i) : nx__special64(d + n - 64) >> (64 - r);
			size_t p = m ? (size_t)__builtin_ctzll(m) : 64;
			/* A two-byte escape and the next special byte of the same
			 * span, without another iteration (Nexmark's extra strings
			 * hold backslashes). */
			if (p + 2 < span && d[i + p] == '\\' && nx__simple_escape(d[i + p + 1])) {
				m &= ~((2ull << (p + 1)) - 1);
				p = m ? (size_t)__builtin_ctzll(m) : 64;
			}
			if (p >= span) {
				if (r < 64)
					return SIZE_MAX; /* the document ends in the string */
				i += 64;
				continue;
			}
			i += p;
		} else if (r >= 16) {
			uint32_t m = nx__special16(d + i);
			if (!m) {
				i += 16;
				continue;
			}
			i += (size_t)__builtin_ctz(m);
		} else if (r > 0 && n >= 16) {
			/* The last r bytes, from the document's last 16. */
			uint32_t m = nx__special16(d + n - 16) >> (16 - r);
			if (!m)
				return SIZE_MAX;
			i += (size_t)__builtin_ctz(m);
		} else {
			/* A document shorter than 16 bytes. */
			while (i < n && d[i] != '"' && d[i] != '\\' && d[i] >= 0x20)
				i++;
			if (i == n)
				return SIZE_MAX;
		}
		/* d[i] is '"', '\\' or a control byte. */
		if (d[i] == '"')
			return i + 1;
		if (d[i] != '\\' || i + 1 >= n)
			return SIZE_MAX;
		if (nx__simple_escape(d[i + 1]))
			i += 2;
		else if (d[i + 1] == 'u' && n - i >= 6 && js__is_hex4(d + i + 2))
			i += 6;
		else
			return SIZE_MAX;
	}
}

/* nx__str records the string at d[*i] (its opening quote), quotes
 * included, as member m. */
static inline bool nx__str(nx_event_t *ev, const uint8_t *d, size_t n, size_t *i, int m)
{
	size_t j = *i;
	if (j >= n || d[j] != '"')
		return false;
	size_t end = nx__skip_string(d, n, j + 1);
	if (end == SIZE_MAX)
		return false;
	ev->spans[m][0] = (uint32_t)j;
	ev->spans[m][1] = (uint32_t)end;
	*i = end;
	return true;
}

/* ------------------------------------------------------------------------ */
/* The fast path: nexmark.AppendJSON's layouts */

#define NX__BIT(m) (1u << (m))
#define NX__BID_MEMBERS                                                                                      \
	(NX__BIT(NX_AUCTION) | NX__BIT(NX_BIDDER) | NX__BIT(NX_PRICE) | NX__BIT(NX_CHANNEL) | NX__BIT(NX_URL) | \
	 NX__BIT(NX_DATE_TIME) | NX__BIT(NX_EXTRA))
#define NX__BID_INTS (NX__BIT(NX_AUCTION) | NX__BIT(NX_BIDDER) | NX__BIT(NX_PRICE) | NX__BIT(NX_DATE_TIME))
#define NX__PERSON_MEMBERS                                                                                      \
	(NX__BIT(NX_ID) | NX__BIT(NX_NAME) | NX__BIT(NX_EMAIL_ADDRESS) | NX__BIT(NX_CREDIT_CARD) | NX__BIT(NX_CITY) | \
	 NX__BIT(NX_STATE) | NX__BIT(NX_DATE_TIME) | NX__BIT(NX_EXTRA))
#define NX__PERSON_INTS (NX__BIT(NX_ID) | NX__BIT(NX_DATE_TIME))
#define NX__AUCTION_INTS                                                                                   \
	(NX__BIT(NX_ID) | NX__BIT(NX_INITIAL_BID) | NX__BIT(NX_RESERVE) | NX__BIT(NX_DATE_TIME) |           \
	 NX__BIT(NX_EXPIRES) | NX__BIT(NX_SELLER) | NX__BIT(NX_CATEGORY))
#define NX__AUCTION_MEMBERS \
	(NX__AUCTION_INTS | NX__BIT(NX_ITEM_NAME) | NX__BIT(NX_DESCRIPTION) | NX__BIT(NX_EXTRA))

/* A string member's opening quote is not part of its literal: nx__str
 * checks it. */
#define NX__NUM(m) nx__num(ev, d, n, &i, m)
#define NX__STR(m) nx__str(ev, d, n, &i, m)

/* nx__fast parses the document if it has exactly one of AppendJSON's
 * layouts and is certainly valid; false means "not sure". */
static inline bool nx__fast(nx_event_t *ev, const uint8_t *d, size_t n)
{
	size_t i = 0;
	if (n < 48 || n > 1u << 30)
		return false;
	if (NX__LIT("{\"auction\":")) {
		if (!(NX__NUM(NX_AUCTION) && NX__LIT(",\"bidder\":") && NX__NUM(NX_BIDDER) && NX__LIT(",\"price\":") &&
		      NX__NUM(NX_PRICE) && NX__LIT(",\"channel\":") && NX__STR(NX_CHANNEL) && NX__LIT(",\"url\":") &&
		      NX__STR(NX_URL) && NX__LIT(",\"dateTime\":") && NX__NUM(NX_DATE_TIME) && NX__LIT(",\"extra\":") &&
		      NX__STR(NX_EXTRA)))
			return false;
		ev->kind = NX_KIND_BID;
		ev->present = NX__BID_MEMBERS;
		ev->parsed = NX__BID_INTS;
	} else if (NX__LIT("{\"id\":") && NX__NUM(NX_ID)) {
		if (NX__LIT(",\"name\":")) {
			if (!(NX__STR(NX_NAME) && NX__LIT(",\"emailAddress\":") && NX__STR(NX_EMAIL_ADDRESS) &&
			      NX__LIT(",\"creditCard\":") && NX__STR(NX_CREDIT_CARD) && NX__LIT(",\"city\":") &&
			      NX__STR(NX_CITY) && NX__LIT(",\"state\":") && NX__STR(NX_STATE) && NX__LIT(",\"dateTime\":") &&
			      NX__NUM(NX_DATE_TIME) && NX__LIT(",\"extra\":") && NX__STR(NX_EXTRA)))
				return false;
			ev->kind = NX_KIND_PERSON;
			ev->present = NX__PERSON_MEMBERS;
			ev->parsed = NX__PERSON_INTS;
		} else {
			if (!(NX__LIT(",\"itemName\":") && NX__STR(NX_ITEM_NAME) && NX__LIT(",\"description\":") &&
			      NX__STR(NX_DESCRIPTION) && NX__LIT(",\"initialBid\":") && NX__NUM(NX_INITIAL_BID) &&
			      NX__LIT(",\"reserve\":") && NX__NUM(NX_RESERVE) && NX__LIT(",\"dateTime\":") &&
			      NX__NUM(NX_DATE_TIME) && NX__LIT(",\"expires\":") && NX__NUM(NX_EXPIRES) &&
			      NX__LIT(",\"seller\":") && NX__NUM(NX_SELLER) && NX__LIT(",\"category\":") &&
			      NX__NUM(NX_CATEGORY) && NX__LIT(",\"extra\":") && NX__STR(NX_EXTRA)))
				return false;
			ev->kind = NX_KIND_AUCTION;
			ev->present = NX__AUCTION_MEMBERS;
			ev->parsed = NX__AUCTION_INTS;
		}
	} else {
		return false;
	}
	/* The object ends the document. */
	return i == n - 1 && d[i] == '}';
}

#undef NX__NUM
#undef NX__STR

/* ------------------------------------------------------------------------ */
/* The general path: any JSON object */

/* nx__skip_value returns the index after the valid JSON value at d[i]. */
static inline size_t nx__skip_value(const uint8_t *d, size_t n, size_t i)
{
	if (d[i] == '"')
		return nx__skip_string(d, n, i + 1);
	if (d[i] == '{' || d[i] == '[') {
		size_t depth = 0;
		for (;;) {
			uint8_t c = d[i];
			if (c == '"') {
				i = nx__skip_string(d, n, i + 1);
				continue;
			}
			if (c == '{' || c == '[') {
				depth++;
			} else if (c == '}' || c == ']') {
				if (--depth == 0)
					return i + 1;
			}
			i++;
		}
	}
	while (i < n && d[i] != ',' && d[i] != '}' && d[i] != ']' && d[i] != ' ' && d[i] != '\t' && d[i] != '\n' &&
	       d[i] != '\r')
		i++;
	return i;
}

/* nx__general validates the document with jsonscan and walks its
 * top-level members. */
static inline int nx__general(nx_event_t *ev, const uint8_t *d, size_t n)
{
	if (!js_valid(d, n))
		return JS_SYNTAX;
	size_t i = js__ws(d, n, 0);
	if (d[i] != '{')
		return JS_NOT_OBJECT;
	i = js__ws(d, n, i + 1);
	if (d[i] != '}') {
		for (;;) {
			/* A member "key": value starts at i; d is valid JSON. */
			size_t ks = i + 1, ke = nx__skip_string(d, n, ks) - 1;
			bool escaped = false;
			for (size_t k = ks; k < ke; k++)
				escaped |= d[k] == '\\';
			i = js__ws(d, n, js__ws(d, n, ke + 1) + 1); /* past the ':' */
			size_t vs = i;
			i = nx__skip_value(d, n, i);
			for (int m = 0; m < NX_MEMBERS; m++) {
				if (js__key_equals(d + ks, ke - ks, escaped, nx_member_names[m])) {
					ev->spans[m][0] = (uint32_t)vs;
					ev->spans[m][1] = (uint32_t)i;
					ev->present |= NX__BIT(m);
					break;
				}
			}
			i = js__ws(d, n, i);
			if (d[i] == '}')
				break;
			i = js__ws(d, n, i + 1); /* past the ',' */
		}
	}
	uint32_t p = ev->present;
	if (p & NX__BIT(NX_BIDDER))
		ev->kind = NX_KIND_BID;
	else if (p & (NX__BIT(NX_ITEM_NAME) | NX__BIT(NX_SELLER)))
		ev->kind = NX_KIND_AUCTION;
	else if (p & (NX__BIT(NX_NAME) | NX__BIT(NX_EMAIL_ADDRESS)))
		ev->kind = NX_KIND_PERSON;
	return JS_OK;
}

/* ------------------------------------------------------------------------ */
/* The API */

/*
 * nx_parse parses doc, which must be a JSON object: it returns JS_OK,
 * JS_SYNTAX (not valid JSON, a null value included) or JS_NOT_OBJECT, the
 * results of js_field, whose reasons are JS_ERR_SYNTAX and
 * JS_ERR_NOT_OBJECT. An object that is not an event has kind
 * NX_KIND_NONE.
 */
static inline int nx_parse(nx_event_t *ev, eddy_bytes_t doc)
{
	const uint8_t *d = doc.ptr ? doc.ptr : (const uint8_t *)"";
	size_t n = doc.ptr ? doc.len : 0;
	ev->doc = d;
	ev->len = n;
	ev->kind = NX_KIND_NONE;
	ev->present = ev->parsed = 0;
	if (nx__fast(ev, d, n))
		return JS_OK;
	ev->kind = NX_KIND_NONE;
	ev->present = ev->parsed = 0;
	return nx__general(ev, d, n);
}

/* nx_has reports whether the event has member m. */
static inline bool nx_has(const nx_event_t *ev, int m) { return ev->present >> m & 1; }

/* nx_raw returns the raw JSON value of member m, null if there is none. */
static inline eddy_bytes_t nx_raw(const nx_event_t *ev, int m)
{
	if (!nx_has(ev, m))
		return EDDY_NULL;
	return eddy_bytes(ev->doc + ev->spans[m][0], ev->spans[m][1] - ev->spans[m][0]);
}

/*
 * nx_parse_int parses tok, one JSON value, as nexmark.Decode parses an
 * integer: an optional minus sign and decimal digits without a leading
 * zero, in the int64 range.
 */
static inline bool nx_parse_int(eddy_bytes_t tok, int64_t *v)
{
	const uint8_t *d = tok.ptr;
	size_t n = tok.len;
	bool neg = n > 0 && d[0] == '-';
	if (neg)
		d++, n--;
	if (n == 0 || (n > 1 && d[0] == '0'))
		return false;
	uint64_t u = 0;
	for (size_t i = 0; i < n; i++) {
		if (d[i] < '0' || d[i] > '9' || u > (1ull << 63) / 10)
			return false;
		u = u * 10 + (uint64_t)(d[i] - '0');
	}
	if (u > 1ull << 63 || (u == 1ull << 63 && !neg))
		return false;
	*v = neg ? (int64_t)(0 - u) : (int64_t)u;
	return true;
}

/*
 * nx_int sets *v to the value of member m, which must be an integer as
 * nexmark.Decode reads one. It returns EDDY_OK or fails the record with
 * BAD_INPUT and the Go guests' reasons: `no "m" member`, `"m" is not an
 * integer`.
 */
static inline int nx_int(const nx_event_t *ev, int m, int64_t *v)
{
	if (ev->parsed >> m & 1) {
		*v = ev->ints[m];
		return EDDY_OK;
	}
	eddy_bytes_t tok = nx_raw(ev, m);
	if (!tok.ptr)
		return eddy_failf(EDDY_BAD_INPUT, "no \"%s\" member", nx_member_names[m]);
	if (!nx_parse_int(tok, v))
		return eddy_failf(EDDY_BAD_INPUT, "\"%s\" is not an integer", nx_member_names[m]);
	return EDDY_OK;
}

/* nx_parse_error fails a record with the reason of an nx_parse result. */
static inline int nx_parse_error(int rc)
{
	return eddy_bad_input(rc == JS_NOT_OBJECT ? JS_ERR_NOT_OBJECT : JS_ERR_SYNTAX);
}

/* ------------------------------------------------------------------------ */
/* Integers to text */

/* nx__digits8 returns v (< 10^8) as eight ASCII digits, the first in the
 * lowest byte, without a loop. */
static inline uint64_t nx__digits8(uint32_t v)
{
	uint64_t y = (uint64_t)(v / 10000) | (uint64_t)(v % 10000) << 32;       /* 2 x 4 digits */
	uint64_t z = ((y * 10486) >> 20) & 0x0000007F0000007Full;                /* / 100 per lane */
	y = z | (y - z * 100) << 16;                                             /* 4 x 2 digits */
	z = ((y * 103) >> 10) & 0x000F000F000F000Full;                           /* / 10 per lane */
	return (z | (y - z * 10) << 8) + '0' * NX__ONES;                         /* 8 x 1 digit */
}

/*
 * nx_append_int appends v in decimal, as Go's strconv.AppendInt(b, v, 10)
 * does, in at most three chunks of eight digits (no loop per digit).
 */
static inline void nx_append_int(eddy_buf_t *b, int64_t v)
{
	uint8_t tmp[24];
	size_t n = 0;
	uint64_t u = (uint64_t)v;
	if (v < 0) {
		tmp[n++] = '-';
		u = 0 - u;
	}
	if (u < 100000000) { /* most numbers: no 64-bit division */
		uint64_t w = nx__digits8((uint32_t)u);
		unsigned zeros = (unsigned)__builtin_ctzll((w - '0' * NX__ONES) | 1ull << 56) >> 3;
		w >>= 8 * zeros;
		__builtin_memcpy(tmp + n, &w, 8);
		eddy_buf_append(b, tmp, n + 8 - zeros);
		return;
	}
	uint64_t hi = u / 100000000, lo = u % 100000000;
	uint64_t top = hi / 100000000, mid = hi % 100000000;
	uint64_t w;
	/* The first chunk without its leading zeros (at least one digit). */
	uint64_t first = top ? top : hi ? mid : lo;
	w = nx__digits8((uint32_t)first);
	unsigned zeros = (unsigned)__builtin_ctzll((w - '0' * NX__ONES) | 1ull << 56) >> 3;
	w >>= 8 * zeros;
	__builtin_memcpy(tmp + n, &w, 8);
	n += 8 - zeros;
	if (top) {
		w = nx__digits8((uint32_t)mid);
		__builtin_memcpy(tmp + n, &w, 8);
		n += 8;
	}
	if (hi) {
		w = nx__digits8((uint32_t)lo);
		__builtin_memcpy(tmp + n, &w, 8);
		n += 8;
	}
	eddy_buf_append(b, tmp, n);
}

#endif /* EDDY_GUESTS_NX_EVENT_H */
