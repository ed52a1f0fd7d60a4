/*
 * internal_test checks the C guests' helpers (strconv.h, text.h, jsonscan.h)
 * against test vectors computed with Go's standard library by
 * vectors_gen.go. Native only; run by guests/c/test.sh:
 *
 *     go run vectors_gen.go | ./internal_test
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eddy.h"
#include "jsonscan.h"
#include "strconv.h"
#include "text.h"

static int failures;
static long checked;

static void fail(const char *kind, const char *line, const char *got)
{
	if (failures++ < 20)
		fprintf(stderr, "FAIL %s: %s\n   got: %s\n", kind, line, got);
}

/* unhex decodes hex into a malloc'd buffer ("-" is empty). */
static uint8_t *unhex(const char *s, size_t *n)
{
	size_t l = strcmp(s, "-") == 0 ? 0 : strlen(s);
	uint8_t *b = malloc(l / 2 + 1);
	for (size_t i = 0; i < l / 2; i++) {
		unsigned v;
		sscanf(s + 2 * i, "%2x", &v);
		b[i] = (uint8_t)v;
	}
	*n = l / 2;
	return b;
}

static char *tohex(const uint8_t *b, size_t n)
{
	char *s = malloc(2 * n + 2);
	for (size_t i = 0; i < n; i++)
		sprintf(s + 2 * i, "%02x", b[i]);
	if (n == 0)
		strcpy(s, "-");
	return s;
}

/* split cuts line at tabs into at most max fields. */
static int split(char *line, char **f, int max)
{
	int n = 0;
	f[n++] = line;
	for (char *p = line; *p && n < max; p++)
		if (*p == '\t') {
			*p = 0;
			f[n++] = p + 1;
		}
	return n;
}

static uint8_t upper_seen[0x110000];
static uint8_t space_seen[0x110000];

int main(void)
{
	static char buf[1 << 20], copy[1 << 20];
	eddy_buf_t out = {0};
	while (fgets(buf, sizeof buf, stdin)) {
		buf[strcspn(buf, "\n")] = 0;
		strcpy(copy, buf);
		char *f[8];
		int nf = split(buf, f, 8);
		checked++;
		switch (f[0][0]) {
		case 'F': { /* bits e f */
			uint64_t bits = strtoull(f[1], 0, 16);
			double d;
			memcpy(&d, &bits, 8);
			for (int k = 0; k < 2; k++) {
				out.len = 0;
				sc_append_float(&out, d, k ? 'f' : 'e');
				eddy_buf_append(&out, "", 1);
				if (strcmp((char *)out.data, f[2 + k]) != 0)
					fail("float format", copy, (char *)out.data);
			}
			break;
		}
		case 'P': { /* input bits err */
			size_t n;
			uint8_t *s = unhex(f[1], &n);
			double d = 0;
			int rc = sc_parse_float(s, n, &d);
			uint64_t bits;
			memcpy(&bits, &d, 8);
			int want = atoi(f[3]);
			char got[64];
			snprintf(got, sizeof got, "%016llx %d", (unsigned long long)bits, rc);
			if (rc != want || (want != 1 && bits != strtoull(f[2], 0, 16)))
				fail("float parse", copy, got);
			free(s);
			break;
		}
		case 'T': { /* rune upper */
			long r = strtol(f[1], 0, 16), u = strtol(f[2], 0, 16);
			upper_seen[r] = 1;
			if (tx_to_upper((int32_t)r) != u) {
				char got[32];
				snprintf(got, sizeof got, "%x", tx_to_upper((int32_t)r));
				fail("to upper", copy, got);
			}
			break;
		}
		case 'S':
			space_seen[strtol(f[1], 0, 16)] = 1;
			break;
		case 'W': { /* input words */
			size_t n;
			uint8_t *s = unhex(f[1], &n);
			out.len = 0;
			size_t i = 0;
			eddy_bytes_t w;
			while (tx_next_word(s, n, &i, &w)) {
				if (out.len)
					eddy_buf_append(&out, ",", 1);
				char *x = tohex(w.ptr, w.len);
				eddy_buf_append(&out, x, strlen(x));
				free(x);
			}
			if (!out.len)
				eddy_buf_append(&out, "-", 1);
			eddy_buf_append(&out, "", 1);
			if (strcmp((char *)out.data, f[2]) != 0)
				fail("words", copy, (char *)out.data);
			free(s);
			break;
		}
		case 'B': { /* input bytes.ToUpper */
			size_t n;
			uint8_t *s = unhex(f[1], &n);
			out.len = 0;
			for (size_t i = 0; i < n;) {
				size_t size;
				int32_t r = tx_decode_rune(s + i, n - i, &size);
				uint8_t enc[4];
				eddy_buf_append(&out, enc, tx_encode_rune(enc, r < 0 ? TX_RUNE_ERROR : tx_to_upper(r)));
				i += size;
			}
			char *x = tohex(out.data, out.len);
			if (strcmp(x, f[2]) != 0)
				fail("bytes.ToUpper", copy, x);
			free(x);
			free(s);
			break;
		}
		case 'J': { /* doc valid ferr found value */
			size_t n;
			uint8_t *s = unhex(f[1], &n);
			eddy_bytes_t v;
			int valid = js_valid(s, n), ferr = js_field(s, n, "amount", &v);
			char *x = v.ptr ? tohex(v.ptr, v.len) : tohex(NULL, 0);
			char got[1 << 12];
			snprintf(got, sizeof got, "%d %d %d %s", valid, ferr, v.ptr != 0, x);
			if (valid != atoi(f[2]) || ferr != atoi(f[3]) || (v.ptr != 0) != atoi(f[4]) ||
			    (v.ptr && strcmp(x, f[5]) != 0))
				fail("json", copy, got);
			free(x);
			free(s);
			break;
		}
		case 'N': { /* doc ok tok */
			size_t n;
			uint8_t *s = unhex(f[1], &n);
			eddy_bytes_t tok = EDDY_NULL;
			bool ok = js_number(eddy_bytes(s, n), &tok);
			char *x = ok ? tohex(tok.ptr, tok.len) : tohex(NULL, 0);
			if (ok != (bool)atoi(f[2]) || (ok && strcmp(x, f[3]) != 0))
				fail("json number", copy, x);
			if (ok != js_is_number(eddy_bytes(s + (tok.ptr ? tok.ptr - s : 0), ok ? tok.len : n)) && ok)
				fail("json is_number", copy, x);
			free(x);
			free(s);
			break;
		}
		case 'I':
		case 'V': { /* input rc value */
			size_t n;
			uint8_t *s = unhex(f[1], &n);
			char got[64];
			int rc;
			if (f[0][0] == 'I') {
				int64_t v;
				rc = sc_parse_int(s, n, &v);
				snprintf(got, sizeof got, "%d %lld", rc, (long long)v);
			} else {
				uint64_t v;
				rc = sc_parse_uint(s, n, &v);
				snprintf(got, sizeof got, "%d %llu", rc, (unsigned long long)v);
			}
			char want[64];
			snprintf(want, sizeof want, "%s %s", f[2], f[3]);
			if (strcmp(got, want) != 0)
				fail("parse int", copy, got);
			free(s);
			break;
		}
		case 'Q': { /* input quoted */
			size_t n;
			uint8_t *s = unhex(f[1], &n);
			out.len = 0;
			sc_append_quote(&out, s, n);
			char *x = tohex(out.data, out.len);
			if (strcmp(x, f[2]) != 0)
				fail("quote", copy, x);
			free(x);
			free(s);
			break;
		}
		default:
			fprintf(stderr, "unknown vector %s (%d fields)\n", f[0], nf);
			return 2;
		}
	}
	for (int32_t r = 0; r < 0x110000; r++) {
		if (!upper_seen[r] && tx_to_upper(r) != r) {
			char line[64], got[32];
			snprintf(line, sizeof line, "rune %x should map to itself", r);
			snprintf(got, sizeof got, "%x", tx_to_upper(r));
			fail("to upper", line, got);
		}
		if (tx_is_space(r) != space_seen[r]) {
			char line[64];
			snprintf(line, sizeof line, "rune %x is_space", r);
			fail("is space", line, tx_is_space(r) ? "true" : "false");
		}
	}
	eddy_free(out.data);
	if (failures) {
		fprintf(stderr, "%d of %ld vectors failed\n", failures, checked);
		return 1;
	}
	printf("ok   guests/c/internal: %ld vectors\n", checked);
	return 0;
}
