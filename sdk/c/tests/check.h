/* check.h - the few assertions the SDK's native tests use. */
#ifndef EDDY_TESTS_CHECK_H
#define EDDY_TESTS_CHECK_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int check_failures;
static int check_count;

#define CHECK(cond)                                                                                      \
	do {                                                                                             \
		check_count++;                                                                           \
		if (!(cond)) {                                                                           \
			check_failures++;                                                                \
			fprintf(stderr, "%s:%d: %s: check failed: %s\n", __FILE__, __LINE__, __func__, #cond); \
		}                                                                                        \
	} while (0)

/* CHECK_BYTES compares n bytes at got with the n bytes of want, printing
 * both in hex when they differ. */
#define CHECK_BYTES(got, got_len, want, want_len)                                                        \
	check_bytes(__FILE__, __LINE__, __func__, (const unsigned char *)(got), (got_len),               \
		    (const unsigned char *)(want), (want_len))

static void check_hex(const char *label, const unsigned char *p, size_t n)
{
	fprintf(stderr, "    %s (%zu):", label, n);
	for (size_t i = 0; i < n && i < 96; i++)
		fprintf(stderr, " %02x", p[i]);
	fprintf(stderr, n > 96 ? " ...\n" : "\n");
}

static void check_bytes(const char *file, int line, const char *fn, const unsigned char *got, size_t got_len,
			const unsigned char *want, size_t want_len)
{
	check_count++;
	if (got_len == want_len && (want_len == 0 || memcmp(got, want, want_len) == 0))
		return;
	check_failures++;
	fprintf(stderr, "%s:%d: %s: bytes differ\n", file, line, fn);
	check_hex("got ", got, got_len);
	check_hex("want", want, want_len);
}

/* check_done prints the summary and returns the exit status. */
static int check_done(const char *name)
{
	if (check_failures) {
		fprintf(stderr, "FAIL %s: %d of %d checks failed\n", name, check_failures, check_count);
		return 1;
	}
	printf("ok   %s: %d checks\n", name, check_count);
	return 0;
}

#endif
