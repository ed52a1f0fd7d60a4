/*
 * jsonscan.h - the small, allocation-free JSON scanning the C reference
 * guests need, a port of guests/go/internal/jsonscan: validating a document,
 * finding one top-level member of an object, and recognising a number.
 *
 * The scanner follows RFC 8259 as Go's encoding/json does: the same
 * documents are valid (invalid UTF-8 inside strings is accepted, as
 * json.Valid accepts it), nesting deeper than JS_MAX_DEPTH is refused, and
 * when an object repeats a member name the last one wins.
 *
 * Header-only and freestanding.
 */
#ifndef EDDY_GUESTS_JSONSCAN_H
#define EDDY_GUESTS_JSONSCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "eddy.h"
#include "strconv.h"
#include "text.h"

/* JS_MAX_DEPTH is the deepest nesting accepted, as in encoding/json. */
#define JS_MAX_DEPTH 10000

/* Results of js_field. */
enum { JS_OK = 0, JS_NOT_OBJECT = 1, JS_SYNTAX = 2 };

/* The reasons of the js_field errors, as the Go guests word them. */
#define JS_ERR_NOT_OBJECT "value is not a JSON object"
#define JS_ERR_SYNTAX "value is not valid JSON"

/* js__ws returns the index of the first non-whitespace byte at or after i. */
static inline size_t js__ws(const uint8_t *doc, size_t n, size_t i)
{
	while (i < n && (doc[i] == ' ' || doc[i] == '\t' || doc[i] == '\n' || doc[i] == '\r'))
		i++;
	return i;
}

static inline size_t js__digits(const uint8_t *b, size_t n, size_t i)
{
	while (i < n && b[i] >= '0' && b[i] <= '9')
		i++;
	return i;
}

/* js__skip_number skips a number at i and returns the index after it, or
 * SIZE_MAX if there is none. */
static inline size_t js__skip_number(const uint8_t *b, size_t n, size_t i)
{
	if (i < n && b[i] == '-')
		i++;
	if (i >= n)
		return SIZE_MAX;
	if (b[i] == '0')
		i++;
	else if (b[i] >= '1' && b[i] <= '9')
		i = js__digits(b, n, i);
	else
		return SIZE_MAX;
	if (i < n && b[i] == '.') {
		size_t j = js__digits(b, n, i + 1);
		if (j == i + 1)
			return SIZE_MAX;
		i = j;
	}
	if (i < n && (b[i] == 'e' || b[i] == 'E')) {
		i++;
		if (i < n && (b[i] == '+' || b[i] == '-'))
			i++;
		size_t j = js__digits(b, n, i);
		if (j == i)
			return SIZE_MAX;
		i = j;
	}
	return i;
}

static inline int js__hexval(uint8_t c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static inline bool js__is_hex4(const uint8_t *b)
{
	return js__hexval(b[0]) >= 0 && js__hexval(b[1]) >= 0 && js__hexval(b[2]) >= 0 && js__hexval(b[3]) >= 0;
}

static inline int32_t js__hex4(const uint8_t *b)
{
	return js__hexval(b[0]) << 12 | js__hexval(b[1]) << 8 | js__hexval(b[2]) << 4 | js__hexval(b[3]);
}

/* js__skip_string skips the contents of a string that starts at i (just
 * after the opening quote) and returns the index after the closing quote,
 * or SIZE_MAX if the string is not valid; *escaped reports escapes. */
static inline size_t js__skip_string(const uint8_t *doc, size_t n, size_t i, bool *escaped)
{
	*escaped = false;
	for (;;) {
		/* Plain bytes, eight at a time when they are plainly plain. */
		while (n - i >= 8) {
			uint64_t x;
			__builtin_memcpy(&x, doc + i, 8);
			const uint64_t ones = 0x0101010101010101ull, high = 0x8080808080808080ull;
			uint64_t q = x ^ ('"' * ones), s = x ^ ('\\' * ones);
			uint64_t m = ((q - ones) & ~q) | ((s - ones) & ~s) | ((x - 0x20 * ones) & ~x);
			if ((m &= high) != 0) {
				i += (size_t)__builtin_ctzll(m) / 8;
				break;
			}
			i += 8;
		}
		if (i >= n)
			return SIZE_MAX;
		uint8_t c = doc[i];
		if (c == '"')
			return i + 1;
		if (c == '\\') {
			*escaped = true;
			if (i + 1 >= n)
				return SIZE_MAX;
			switch (doc[i + 1]) {
			case '"':
			case '\\':
			case '/':
			case 'b':
			case 'f':
			case 'n':
			case 'r':
			case 't':
				i += 2;
				break;
			case 'u':
				if (i + 5 >= n || !js__is_hex4(doc + i + 2))
					return SIZE_MAX;
				i += 6;
				break;
			default:
				return SIZE_MAX;
			}
		} else if (c < 0x20) {
			return SIZE_MAX;
		} else {
			i++;
		}
	}
}

/*
 * js__key_equals reports whether the raw contents raw[0..n) of a valid
 * string equal name once unescaped (lone surrogates become U+FFFD, as in
 * encoding/json). The unescaped text is compared piece by piece, so the
 * comparison stops at the first difference.
 */
static inline bool js__key_equals(const uint8_t *raw, size_t n, bool escaped, const char *name)
{
	size_t nlen = eddy_cstr(name).len;
	if (!escaped)
		return n == nlen && (n == 0 || __builtin_memcmp(raw, name, n) == 0);
	size_t o = 0; /* bytes of name matched */
	for (size_t i = 0; i < n; i++) {
		uint8_t piece[4];
		size_t k = 1;
		uint8_t c = raw[i];
		if (c != '\\') {
			piece[0] = c;
		} else {
			i++;
			switch (raw[i]) {
			case 'b':
				piece[0] = '\b';
				break;
			case 'f':
				piece[0] = '\f';
				break;
			case 'n':
				piece[0] = '\n';
				break;
			case 'r':
				piece[0] = '\r';
				break;
			case 't':
				piece[0] = '\t';
				break;
			case 'u': {
				int32_t r = js__hex4(raw + i + 1);
				i += 4;
				if (r >= 0xd800 && r < 0xe000) {
					int32_t r2 = -1;
					if (i + 6 < n && raw[i + 1] == '\\' && raw[i + 2] == 'u')
						r2 = js__hex4(raw + i + 3);
					if (r < 0xdc00 && r2 >= 0xdc00 && r2 < 0xe000) {
						r = 0x10000 + ((r - 0xd800) << 10 | (r2 - 0xdc00));
						i += 6;
					} else {
						r = TX_RUNE_ERROR;
					}
				}
				k = tx_encode_rune(piece, r);
				break;
			}
			default: /* '"', '\\', '/' */
				piece[0] = raw[i];
			}
		}
		if (nlen - o < k || __builtin_memcmp(name + o, piece, k) != 0)
			return false;
		o += k;
	}
	return o == nlen;
}

/*
 * js__scan validates doc[0..n) as one JSON value with optional surrounding
 * whitespace. With name set it also finds the raw value of the last
 * top-level member called name when doc is an object (*found, *value).
 * *object reports whether the value is an object.
 *
 * It is a single state machine with an explicit stack, one bit per open
 * container, rather than a recursive descent, so that deep nesting cannot
 * exhaust the stack.
 */
static inline bool js__scan(const uint8_t *doc, size_t n, const char *name, eddy_bytes_t *value, bool *found,
			    bool *object)
{
	uint8_t stack[JS_MAX_DEPTH / 8 + 1]; /* bit set: '{', clear: '[' */
	size_t depth = 0;
	size_t i = js__ws(doc, n, 0);
	bool escaped;
	size_t val_start = 0;
	bool is_match = false;
	*found = false;
	*object = i < n && doc[i] == '{';
	*value = EDDY_NULL;
#define JS__TOP_IS_OBJECT() (stack[(depth - 1) / 8] >> ((depth - 1) % 8) & 1)

value: /* a value starts at i */
	if (i >= n)
		return false;
	switch (doc[i]) {
	case '{':
	case '[': {
		uint8_t c = doc[i];
		if (depth >= JS_MAX_DEPTH)
			return false;
		if (c == '{')
			stack[depth / 8] |= (uint8_t)(1u << (depth % 8));
		else
			stack[depth / 8] &= (uint8_t)~(1u << (depth % 8));
		depth++;
		i = js__ws(doc, n, i + 1);
		if (i >= n)
			return false;
		if (doc[i] == c + 2) { /* '}' or ']' */
			depth--;
			i++;
			goto after;
		}
		if (c == '{')
			goto member;
		goto value;
	}
	case '"':
		if ((i = js__skip_string(doc, n, i + 1, &escaped)) == SIZE_MAX)
			return false;
		break;
	case 't':
		if (n - i < 4 || __builtin_memcmp(doc + i, "true", 4) != 0)
			return false;
		i += 4;
		break;
	case 'f':
		if (n - i < 5 || __builtin_memcmp(doc + i, "false", 5) != 0)
			return false;
		i += 5;
		break;
	case 'n':
		if (n - i < 4 || __builtin_memcmp(doc + i, "null", 4) != 0)
			return false;
		i += 4;
		break;
	default:
		if ((i = js__skip_number(doc, n, i)) == SIZE_MAX)
			return false;
	}

after: /* a value ended just before i */
	if (is_match && depth == 1) {
		*value = eddy_bytes(doc + val_start, i - val_start);
		*found = true;
		is_match = false;
	}
	i = js__ws(doc, n, i);
	if (depth == 0)
		return i == n;
	if (i >= n)
		return false;
	if (doc[i] == ',') {
		i = js__ws(doc, n, i + 1);
		if (JS__TOP_IS_OBJECT())
			goto member;
		goto value;
	}
	if (doc[i] == (JS__TOP_IS_OBJECT() ? '}' : ']')) {
		depth--;
		i++;
		goto after;
	}
	return false;

member: /* a member "key": value starts at i */
	if (i >= n || doc[i] != '"')
		return false;
	{
		size_t start = i + 1;
		if ((i = js__skip_string(doc, n, start, &escaped)) == SIZE_MAX)
			return false;
		bool match = name && depth == 1 && js__key_equals(doc + start, i - 1 - start, escaped, name);
		i = js__ws(doc, n, i);
		if (i >= n || doc[i] != ':')
			return false;
		i = js__ws(doc, n, i + 1);
		if (match) {
			val_start = i;
			is_match = true;
		}
	}
	goto value;
#undef JS__TOP_IS_OBJECT
}

/* js_valid reports whether doc[0..n) is one valid JSON value, optionally
 * surrounded by whitespace. */
static inline bool js_valid(const uint8_t *doc, size_t n)
{
	eddy_bytes_t v;
	bool found, object;
	return js__scan(doc, n, 0, &v, &found, &object);
}

/*
 * js_field checks that doc[0..n) is a valid JSON object (optionally
 * surrounded by whitespace) and finds the raw text of the value of its
 * top-level member called name, without surrounding whitespace: *value is
 * null when there is none. Members of nested objects and text inside strings
 * never match; if the name appears more than once, the last value counts.
 * It returns JS_OK, JS_NOT_OBJECT for valid JSON that is not an object, or
 * JS_SYNTAX for anything that is not valid JSON (a null doc included).
 */
static inline int js_field(const uint8_t *doc, size_t n, const char *name, eddy_bytes_t *value)
{
	bool found, object;
	if (!doc)
		doc = (const uint8_t *)"", n = 0;
	if (!js__scan(doc, n, name, value, &found, &object)) {
		*value = EDDY_NULL;
		return JS_SYNTAX;
	}
	if (!object) {
		*value = EDDY_NULL;
		return JS_NOT_OBJECT;
	}
	return JS_OK;
}

/* js_is_number reports whether tok is exactly one JSON number, with no
 * surrounding whitespace. */
static inline bool js_is_number(eddy_bytes_t tok)
{
	return tok.ptr && js__skip_number(tok.ptr, tok.len, 0) == tok.len;
}

/* js_number trims JSON whitespace from doc and reports whether what is left
 * is one JSON number, which it returns in *tok. */
static inline bool js_number(eddy_bytes_t doc, eddy_bytes_t *tok)
{
	if (!doc.ptr)
		return false;
	size_t start = js__ws(doc.ptr, doc.len, 0);
	size_t end = js__skip_number(doc.ptr, doc.len, start);
	if (end == SIZE_MAX || js__ws(doc.ptr, doc.len, end) != doc.len)
		return false;
	*tok = eddy_bytes(doc.ptr + start, end - start);
	return true;
}

/*
 * js_float returns the value of tok, one JSON number, in *f. Integers of up
 * to 15 digits are converted directly (exactly); others by sc_parse_float.
 * It returns false (*f = ±Inf) for a number outside the float64 range, as
 * Go's strconv.ParseFloat reports ErrRange.
 */
static inline bool js_float(eddy_bytes_t tok, double *f)
{
	const uint8_t *d = tok.ptr;
	size_t n = tok.len;
	bool neg = n > 0 && d[0] == '-';
	if (neg)
		d++, n--;
	if (n > 0 && n <= 15) {
		int64_t v = 0;
		size_t i = 0;
		for (; i < n && d[i] >= '0' && d[i] <= '9'; i++)
			v = v * 10 + (d[i] - '0');
		if (i == n) {
			*f = neg ? -(double)v : (double)v; /* -0 for "-0", as strconv gives */
			return true;
		}
	}
	return sc_parse_float(tok.ptr, tok.len, f) == 0;
}

#endif /* EDDY_GUESTS_JSONSCAN_H */
