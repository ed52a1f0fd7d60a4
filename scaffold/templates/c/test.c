/*
 * Native unit tests of {{.Name}}: ./build.sh test compiles this file (which
 * includes function.c) for the machine you are on, where the SDK's host
 * functions are in-memory stand-ins, and runs it. eddy_test_process sends
 * records through the same envelopes the host sends.
 */
#include <stdio.h>

#include "function.c"

static int failures;

#define CHECK(cond)                                                                  \
	do {                                                                         \
		if (!(cond)) {                                                       \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
			failures++;                                                  \
		}                                                                    \
	} while (0)

int main(void)
{
	eddy_record_t in[3] = {
		{.key = eddy_cstr("k"), .value = eddy_cstr("hello, eddy"), .timestamp = 1700000000000},
		{.key = eddy_cstr("k"), .value = EDDY_NULL},
		{.key = EDDY_NULL, .value = eddy_cstr("")},
	};
	eddy_test_result_t res[3];
	CHECK(eddy_test_process(in, 3, res) == 0);
	CHECK(res[0].code == EDDY_OK && res[0].records_len == 1);
	CHECK(eddy_bytes_equal_cstr(res[0].records[0].value, "HELLO, EDDY"));
	CHECK(eddy_bytes_equal_cstr(res[0].records[0].key, "k"));
	CHECK(res[0].records[0].timestamp == 1700000000000);
	CHECK(res[1].code == EDDY_OK && res[1].records[0].value.ptr == NULL);
	CHECK(res[2].code == EDDY_OK && eddy_bytes_equal_cstr(res[2].records[0].value, ""));
	if (failures)
		return 1;
	printf("ok   {{.Name}}\n");
	return 0;
}
