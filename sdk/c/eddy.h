/*
 * eddy.h - the C guest SDK for Eddy: it turns plain C functions into an Eddy
 * function, a WebAssembly module that speaks the guest ABI (abi/ABI.md in
 * the Eddy repository). Header-only, C11, no dependencies.
 *
 * # Usage
 *
 *     #include "eddy.h"
 *
 *     static int upper(const eddy_record_t *in, eddy_record_t *out)
 *     {
 *             if (!in->value.ptr)              // a null value stays null
 *                     return EDDY_OK;
 *             uint8_t *v = eddy_scratch(in->value.len);
 *             for (size_t i = 0; i < in->value.len; i++) {
 *                     uint8_t c = in->value.ptr[i];
 *                     v[i] = c >= 'a' && c <= 'z' ? c - 32 : c;
 *             }
 *             out->value = eddy_bytes(v, in->value.len);
 *             return EDDY_OK;                  // key, timestamp, headers kept
 *     }
 *
 *     EDDY_MODULE(.name = "upper", .version = "1.0.0", .map = upper);
 *
 * Build it freestanding (smallest module, no WASI imports):
 *
 *     clang-19 --target=wasm32 -nostdlib -mbulk-memory -O2 -s -Wl,--no-entry -o upper.wasm upper.c
 *
 * or with wasi-libc (printf, strtod, malloc from the C library):
 *
 *     clang-19 --target=wasm32-wasi -mexec-model=reactor -mbulk-memory -O2 -s -o upper.wasm upper.c
 *
 * and try it with `eddy test upper.wasm --input records.jsonl`.
 *
 * -mbulk-memory turns every memcpy into one memory.copy instruction; without
 * it copies are loops, and the host checks for interruption in every loop
 * iteration of a guest, which makes a module several times slower.
 *
 * # Kinds
 *
 * EDDY_MODULE(...) takes the fields of an eddy_module_t as designated
 * initialisers: the name and version, and one handler per kind the module
 * implements: one process handler (.map, .filter or .flat_map), an
 * .aggregate, a .join, a .key and a .timestamp extractor, and a .timer
 * handler for the timers the module sets (see Timers below). It defines the
 * module's exports and must appear once in the program, at file scope, after
 * the handlers. The manifest lists the kinds that have a handler; every kind
 * is exported, and the others answer UNSUPPORTED. eddy.h itself may be
 * included by any number of files of the same module.
 *
 * # Errors
 *
 * A handler returns EDDY_OK (0) or a failure code, and fails its record,
 * never the batch:
 *
 *   - return eddy_reject("reason") refuses the record (REJECTED, 1);
 *   - return eddy_bad_input("reason") says the payload could not be decoded
 *     (BAD_INPUT, 2);
 *   - return eddy_fail(77, "reason") carries a function-defined code of 64 to
 *     255 to the dead-letter record (eddy_failf formats the reason);
 *   - a bare return of a code uses a default reason.
 *
 * C cannot catch a crash: a trap (__builtin_trap, eddy_panic, an out-of-bounds
 * access) fails the whole call, and the host isolates the record that caused
 * it by retrying the batch in halves, so one bad record still fails alone.
 *
 * # Memory
 *
 * Input records are views into the host's input buffer, valid until the
 * handler returns: copy what you keep. Output bytes (a new value, key,
 * accumulator) may live anywhere that stays valid until the handler returns:
 * the input, static memory, or eddy_scratch(), a bump allocator the SDK resets
 * before every record. The SDK copies outputs into one output buffer it reuses
 * across calls, and decodes without allocating per record, so a handler that
 * uses eddy_scratch allocates nothing on the heap.
 *
 * Freestanding builds get a small allocator (eddy_malloc, eddy_free,
 * eddy_realloc over memory.grow) and memcpy, memmove, memset, memcmp and
 * strlen (weak, so a libc's or your own win). With wasi-libc and natively the
 * eddy_ allocation functions are malloc, free and realloc.
 *
 * # Named outputs
 *
 * eddy_record_to_output(out, "name") sends an output record to a named
 * output of its step (ABI.md, "Named outputs"), by the header
 * EDDY_HEADER_OUTPUT.
 *
 * # Host functions
 *
 * eddy_log / eddy_logf write to the host's log, eddy_count adds to a metric,
 * eddy_state_get / eddy_state_put / eddy_state_delete use keyed state, and
 * eddy_config_get reads the step's configuration (see Configuration below).
 * A module imports only the host functions it calls.
 *
 * # Timers
 *
 * In a step with keyed state, eddy_set_timer(key, EDDY_EVENT_TIME, at) sets
 * a timer that fires when the step's watermark reaches at
 * (EDDY_PROCESSING_TIME: when the node's clock does); eddy_delete_timer
 * deletes one and eddy_current_time reads the step's clocks. A timer that
 * fires is handed to the module's .timer handler, which emits records as a
 * flat_map does:
 *
 *     static int fire(const eddy_timer_t *t, eddy_emitter_t *out)
 *     {
 *             eddy_record_t r = {.key = t->key, .value = EDDY_STR("late")};
 *             eddy_emit(out, &r);              // timestamp 0: the timer's time
 *             return EDDY_OK;
 *     }
 *
 *     EDDY_MODULE(.name = "remind", .filter = touch, .timer = fire);
 *
 * # Configuration
 *
 * eddy_config_get(name, &value) reads an entry of the step's configuration
 * (config: in the pipeline file; values, or secrets the node reads from its
 * environment or files). It returns whether the step has the entry; the
 * value is a view into a buffer the SDK owns, valid until the next
 * eddy_config_get. Entries do not change while an instance lives, so a
 * function may read one once and keep a copy:
 *
 *     static eddy_bytes_t prefix;              // read once, copied
 *     static bool read;
 *     if (!read) {
 *             eddy_bytes_t v;
 *             uint8_t *p;
 *             if (eddy_config_get("prefix", &v) && v.len && (p = eddy_malloc(v.len)))
 *                     prefix = eddy_bytes(memcpy(p, v.ptr, v.len), v.len);
 *             read = true;
 *     }
 *
 * # Native builds
 *
 * Compiled for the host (gcc or clang without a wasm target) the host
 * functions are in-memory stand-ins and eddy_call() runs an export on an
 * input envelope, so that a function's logic can be unit-tested natively;
 * see the eddy_test_* functions at the end of this file.
 *
 * # Concurrency
 *
 * A Wasm instance is single-threaded and the host never calls one instance
 * from two threads; nothing here is thread-safe (natively either).
 */
#ifndef EDDY_H
#define EDDY_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#if defined(__wasm__) && !defined(__wasi__)
/* EDDY_FREESTANDING is 1 when building for Wasm without a C library. */
#define EDDY_FREESTANDING 1
#else
#define EDDY_FREESTANDING 0
#endif

#if !defined(__wasm__) || defined(__wasi__)
#include <stdlib.h>
#include <string.h>
#endif
#if !defined(__wasm__)
#include <stdio.h>
#endif

/* The SDK's internal state and helpers are weak and hidden: one copy per
 * module whatever the number of files that include eddy.h, and none of it
 * exported even with --export-dynamic. */
#define EDDY__WEAK __attribute__((weak, visibility("hidden")))
#define EDDY__NOINLINE __attribute__((noinline, unused))
/* EDDY__COLD marks the SDK's rarely run paths (general decoding, failures,
 * the manifest): optimised for size, so that modules stay small. */
#if defined(__clang__)
#define EDDY__COLD __attribute__((noinline, unused, cold, minsize))
#else
#define EDDY__COLD __attribute__((noinline, unused, cold))
#endif
#define EDDY__UNLIKELY(x) __builtin_expect(!!(x), 0)

/* Allocation hooks of eddy_msgpack.h: the SDK's allocator. */
static inline void *eddy_realloc(void *p, size_t n);
static inline size_t eddy__good_size(size_t n);
#define EDDY_MP_REALLOC(p, n) eddy_realloc((p), (n))
#define EDDY_MP_GOOD_SIZE(n) eddy__good_size(n)
#include "eddy_msgpack.h"

#ifdef __cplusplus
extern "C" {
#endif

/* EDDY_SDK_VERSION is what the manifest reports in its "sdk" key. */
#define EDDY_SDK_VERSION "c/0.1.0"

/* ======================================================================== */
/* Public types */

/*
 * Error codes of ABI.md section 7. A handler returns EDDY_OK, one of
 * EDDY_REJECTED, EDDY_BAD_INPUT, EDDY_STATE, or a user code of 64 to 255; any
 * other code is reported as EDDY_REJECTED. EDDY_PANIC, EDDY_UNSUPPORTED and
 * EDDY_BAD_ENVELOPE are written by the SDK (PANIC never is by this SDK: C
 * cannot catch a crash).
 */
enum {
	EDDY_OK = 0,
	EDDY_REJECTED = 1,
	EDDY_BAD_INPUT = 2,
	EDDY_PANIC = 3,
	EDDY_UNSUPPORTED = 4,
	EDDY_BAD_ENVELOPE = 5,
	EDDY_STATE = 6,
	EDDY_USER_MIN = 64,
	EDDY_USER_MAX = 255
};

/* Log levels, as numbered by the host's log function (ABI.md section 3). */
typedef enum eddy_level {
	EDDY_LOG_DEBUG = 0,
	EDDY_LOG_INFO = 1,
	EDDY_LOG_WARN = 2,
	EDDY_LOG_ERROR = 3
} eddy_level_t;

/* eddy_header_t is a record header. name is not null; value may be. */
typedef struct eddy_header {
	eddy_bytes_t name;
	eddy_bytes_t value;
} eddy_header_t;

/*
 * eddy_record_t is a Kafka-style record: the input and output of process,
 * key and timestamp handlers.
 *
 * The key, value and header bytes of a record handed to a handler are views
 * into the host's input buffer, valid only until the handler returns, and
 * read-only. An output record carries exactly the headers it holds: the
 * output of a map starts as a copy of its input, so it keeps the input's
 * headers unless the handler changes headers/headers_len.
 */
typedef struct eddy_record {
	eddy_bytes_t key;   /* ptr NULL: a null key */
	eddy_bytes_t value; /* ptr NULL: a null value (a tombstone) */
	int64_t timestamp;  /* milliseconds since the Unix epoch, UTC */
	const eddy_header_t *headers;
	size_t headers_len;
} eddy_record_t;

/*
 * eddy_buf_t is a growable byte buffer owned by the SDK: the accumulator an
 * aggregate's add handler updates. Change data[0..len) in place, or resize
 * it with eddy_buf_resize / eddy_buf_append / eddy_buf_reserve; do not
 * replace data.
 */
typedef struct eddy_buf {
	uint8_t *data;
	size_t len;
	size_t cap;
} eddy_buf_t;

/* eddy_emitter_t collects the output records of a flat_map or timer
 * handler; see eddy_emit. */
typedef struct eddy_emitter {
	eddy_mp_writer_t *w;
	int64_t in_timestamp; /* the input record's timestamp, or the timer's time */
	uint32_t count;
	bool zero_inherits; /* a timer handler's: timestamp 0 is in_timestamp */
} eddy_emitter_t;

/*
 * eddy_time_domain_t is the clock a timer is set on (ABI.md section 3,
 * "Timers").
 */
typedef enum eddy_time_domain {
	/* Event-time timers fire when the step's watermark reaches their time. */
	EDDY_EVENT_TIME = 0,
	/* Processing-time timers fire when the node's clock reaches it. */
	EDDY_PROCESSING_TIME = 1
} eddy_time_domain_t;

/* EDDY_NO_TIME is what eddy_current_time answers when the time is not
 * known: INT64_MIN. */
#define EDDY_NO_TIME INT64_MIN

/*
 * eddy_timer_t is a timer that fired: the key it was set for (a view into
 * the host's input buffer, valid until the handler returns), its time in
 * milliseconds since the Unix epoch, UTC, and its domain.
 */
typedef struct eddy_timer {
	eddy_bytes_t key;
	int64_t time;
	eddy_time_domain_t domain;
} eddy_timer_t;

/*
 * Handler types. Every handler returns EDDY_OK or a failure code (see
 * "Errors" above) and writes its result through its last argument, which the
 * SDK presets as described. Results may point into the input, static memory
 * or eddy_scratch memory: the SDK copies them when the handler returns.
 */

/* eddy_map_fn: one output record per input; *out starts as a copy of *in. */
typedef int (*eddy_map_fn)(const eddy_record_t *in, eddy_record_t *out);
/* eddy_filter_fn: *keep (preset false) keeps the record unchanged. */
typedef int (*eddy_filter_fn)(const eddy_record_t *in, bool *keep);
/* eddy_flat_map_fn: zero or more output records, each passed to eddy_emit. */
typedef int (*eddy_flat_map_fn)(const eddy_record_t *in, eddy_emitter_t *out);
/* eddy_key_fn: *key (preset null) is the record's new key; null is a null key. */
typedef int (*eddy_key_fn)(const eddy_record_t *in, eddy_bytes_t *key);
/* eddy_timestamp_fn: *ts (preset to the record's timestamp) is its event
 * time in milliseconds since the Unix epoch, UTC. */
typedef int (*eddy_timestamp_fn)(const eddy_record_t *in, int64_t *ts);
/* eddy_join_fn: combines the left and right values of key (a missing side is
 * null); *out (preset null) is the joined value, null to emit nothing. */
typedef int (*eddy_join_fn)(eddy_bytes_t key, eddy_bytes_t left, eddy_bytes_t right, eddy_bytes_t *out);
/* eddy_timer_fn: handles a timer that fired (kind "timer"): zero or more
 * output records, each passed to eddy_emit, which go on as the step's
 * output. An output record whose timestamp is 0 or the timer's time gets
 * the timer's time. A failure sends the timer to the dead-letter topic. */
typedef int (*eddy_timer_fn)(const eddy_timer_t *timer, eddy_emitter_t *out);

/*
 * eddy_aggregator_t is an aggregate function (kind "aggregate"): the host
 * keeps one accumulator per key and window and folds records into it.
 * Accumulators are bytes in the function's own encoding; a new version of a
 * function must read the accumulators of the version it replaces.
 */
typedef struct eddy_aggregator {
	/* init sets *acc (preset to empty) to the initial accumulator; the SDK
	 * copies it. NULL: the initial accumulator is empty. */
	int (*init)(eddy_bytes_t *acc);
	/* add folds r into *acc, a scratch copy of the accumulator the SDK owns:
	 * change it in place or resize it. When add fails the record is
	 * reported as not folded and the accumulator is the one before it.
	 * Required: an aggregator without add is not registered. */
	int (*add)(eddy_buf_t *acc, const eddy_record_t *r);
	/* merge combines the accumulators of two session windows of the same
	 * key into *out (preset null, written as empty); it must be
	 * associative. NULL answers UNSUPPORTED, which fails session windows. */
	int (*merge)(eddy_bytes_t key, eddy_bytes_t a, eddy_bytes_t b, eddy_bytes_t *out);
	/* result turns an accumulator into the output value *out (preset null:
	 * emit nothing). NULL emits the accumulator itself. */
	int (*result)(eddy_bytes_t key, eddy_bytes_t acc, eddy_bytes_t *out);
} eddy_aggregator_t;

/*
 * eddy_module_t describes a function: give it to EDDY_MODULE as designated
 * initialisers. Set at most one of map, filter and flat_map.
 */
typedef struct eddy_module {
	const char *name;    /* optional: the function's name */
	const char *version; /* optional: the function's own version */
	eddy_map_fn map;
	eddy_filter_fn filter;
	eddy_flat_map_fn flat_map;
	eddy_aggregator_t aggregate; /* registered when aggregate.add is set */
	eddy_join_fn join;
	eddy_key_fn key;
	eddy_timestamp_fn timestamp;
	eddy_timer_fn timer; /* the timers the module sets (kind "timer") */
} eddy_module_t;

/* ======================================================================== */
/* Small helpers */

/* eddy_bytes returns a view of n bytes at p; a NULL p is a null. */
static inline eddy_bytes_t eddy_bytes(const void *p, size_t n)
{
	eddy_bytes_t b = {(const uint8_t *)p, n};
	return b;
}

/* eddy_cstr returns a view of the NUL-terminated string s (without the NUL);
 * a NULL s is a null. */
static inline eddy_bytes_t eddy_cstr(const char *s)
{
	size_t n = 0;
	if (s)
		while (s[n])
			n++;
	return eddy_bytes(s, n);
}

/* EDDY_NULL is the null view. */
#define EDDY_NULL ((eddy_bytes_t){0, 0})

/* EDDY_LIT("text") initialises an eddy_bytes_t with a string literal in a
 * static initialiser; EDDY_STR("text") is the same view as an expression:
 *
 *     static const eddy_header_t tag = {EDDY_LIT("source"), EDDY_LIT("eddy")};
 *     out->key = EDDY_STR("fixed");
 */
#define EDDY_LIT(s) {(const uint8_t *)(s), sizeof(s) - 1}
#define EDDY_STR(s) ((eddy_bytes_t)EDDY_LIT(s))

/* eddy_bytes_equal reports whether a and b hold the same bytes (two nulls
 * are equal; a null and an empty view are not). */
static inline bool eddy_bytes_equal(eddy_bytes_t a, eddy_bytes_t b)
{
	if (!a.ptr || !b.ptr)
		return !a.ptr && !b.ptr;
	if (a.len != b.len)
		return false;
	for (size_t i = 0; i < a.len; i++)
		if (a.ptr[i] != b.ptr[i])
			return false;
	return true;
}

/* eddy_bytes_equal_cstr reports whether b holds exactly the string s. */
static inline bool eddy_bytes_equal_cstr(eddy_bytes_t b, const char *s)
{
	return b.ptr && eddy_bytes_equal(b, eddy_cstr(s));
}

/* ======================================================================== */
/* Host imports (Wasm) or their native stand-ins */

#if defined(__wasm__)
#define EDDY__IMPORT(name) __attribute__((import_module("eddy"), import_name(name)))
EDDY__IMPORT("log") void eddy__host_log(int32_t level, const void *p, size_t n);
EDDY__IMPORT("error") void eddy__host_error(int32_t code, const void *p, size_t n);
EDDY__IMPORT("state_get") int32_t eddy__host_state_get(const void *k, size_t kn, void *v, size_t vcap);
EDDY__IMPORT("state_put") int32_t eddy__host_state_put(const void *k, size_t kn, const void *v, size_t vn);
EDDY__IMPORT("state_delete") int32_t eddy__host_state_delete(const void *k, size_t kn);
EDDY__IMPORT("counter_add") void eddy__host_counter_add(const void *p, size_t n, int64_t delta);
EDDY__IMPORT("timer_set") int32_t eddy__host_timer_set(const void *k, size_t kn, int32_t domain, int64_t at);
EDDY__IMPORT("timer_delete") int32_t eddy__host_timer_delete(const void *k, size_t kn, int32_t domain, int64_t at);
EDDY__IMPORT("time_now") int64_t eddy__host_time_now(int32_t domain);
EDDY__IMPORT("config_get") int32_t eddy__host_config_get(const void *n, size_t nn, void *v, size_t vcap);
#else
static inline void eddy__host_log(int32_t level, const void *p, size_t n);
static inline void eddy__host_error(int32_t code, const void *p, size_t n);
static inline int32_t eddy__host_state_get(const void *k, size_t kn, void *v, size_t vcap);
static inline int32_t eddy__host_state_put(const void *k, size_t kn, const void *v, size_t vn);
static inline int32_t eddy__host_state_delete(const void *k, size_t kn);
static inline void eddy__host_counter_add(const void *p, size_t n, int64_t delta);
static inline int32_t eddy__host_timer_set(const void *k, size_t kn, int32_t domain, int64_t at);
static inline int32_t eddy__host_timer_delete(const void *k, size_t kn, int32_t domain, int64_t at);
static inline int64_t eddy__host_time_now(int32_t domain);
static inline int32_t eddy__host_config_get(const void *n, size_t nn, void *v, size_t vcap);
#endif

/* ======================================================================== */
/* Freestanding C library pieces */

#if EDDY_FREESTANDING
/*
 * The compiler emits calls to these for struct copies and recognised loops
 * even with -nostdlib. They are weak (a C library's or your own win) and
 * no_builtin, so that their loops are not turned back into calls to
 * themselves. With -mbulk-memory, memcpy and memset are single instructions.
 */
typedef uint64_t __attribute__((aligned(1), may_alias)) eddy__u64u;

EDDY__WEAK __attribute__((no_builtin)) void *memcpy(void *restrict dst, const void *restrict src, size_t n)
{
#ifdef __wasm_bulk_memory__
	__builtin_memcpy(dst, src, n);
#else
	/* 32 bytes per iteration: every loop iteration costs an interruption
	 * check in the host. */
	uint8_t *d = (uint8_t *)dst;
	const uint8_t *s = (const uint8_t *)src;
	for (; n >= 32; n -= 32, d += 32, s += 32) {
		eddy__u64u a = *(const eddy__u64u *)s, b = *(const eddy__u64u *)(s + 8);
		eddy__u64u c = *(const eddy__u64u *)(s + 16), e = *(const eddy__u64u *)(s + 24);
		*(eddy__u64u *)d = a;
		*(eddy__u64u *)(d + 8) = b;
		*(eddy__u64u *)(d + 16) = c;
		*(eddy__u64u *)(d + 24) = e;
	}
	for (; n >= 8; n -= 8, d += 8, s += 8)
		*(eddy__u64u *)d = *(const eddy__u64u *)s;
	while (n--)
		*d++ = *s++;
#endif
	return dst;
}

EDDY__WEAK __attribute__((no_builtin)) void *memmove(void *dst, const void *src, size_t n)
{
#ifdef __wasm_bulk_memory__
	__builtin_memmove(dst, src, n);
#else
	uint8_t *d = (uint8_t *)dst;
	const uint8_t *s = (const uint8_t *)src;
	if (d == s || n == 0)
		return dst;
	if (d < s || d >= s + n) {
		for (; n >= 8; n -= 8, d += 8, s += 8)
			*(eddy__u64u *)d = *(const eddy__u64u *)s;
		while (n--)
			*d++ = *s++;
	} else {
		d += n;
		s += n;
		for (; n >= 8; n -= 8) {
			d -= 8;
			s -= 8;
			*(eddy__u64u *)d = *(const eddy__u64u *)s;
		}
		while (n--)
			*--d = *--s;
	}
#endif
	return dst;
}

EDDY__WEAK __attribute__((no_builtin)) void *memset(void *dst, int c, size_t n)
{
#ifdef __wasm_bulk_memory__
	__builtin_memset(dst, c, n);
#else
	uint8_t *d = (uint8_t *)dst;
	uint64_t w = (uint8_t)c * 0x0101010101010101ull;
	for (; n >= 8; n -= 8, d += 8)
		*(eddy__u64u *)d = w;
	while (n--)
		*d++ = (uint8_t)c;
#endif
	return dst;
}

EDDY__WEAK __attribute__((no_builtin)) int memcmp(const void *a, const void *b, size_t n)
{
	const uint8_t *x = (const uint8_t *)a, *y = (const uint8_t *)b;
	for (size_t i = 0; i < n; i++)
		if (x[i] != y[i])
			return x[i] < y[i] ? -1 : 1;
	return 0;
}

EDDY__WEAK __attribute__((no_builtin)) size_t strlen(const char *s)
{
	size_t n = 0;
	while (s[n])
		n++;
	return n;
}
#endif /* EDDY_FREESTANDING */

/* ======================================================================== */
/* Allocation */

#if EDDY_FREESTANDING
/*
 * The freestanding heap: power-of-two size classes with one free list each,
 * carved from memory grown with memory.grow past __heap_base. A block has a
 * 16-byte header holding its class. Memory is never returned to the host
 * (Wasm cannot shrink memory), but freed blocks are reused, so buffers that
 * grow geometrically and are freed do not leak.
 */
extern unsigned char __heap_base;

#define EDDY__HEAP_HDR 16
#define EDDY__HEAP_MIN_CLASS 5 /* 32 bytes */
#define EDDY__HEAP_CLASSES 32

typedef struct eddy__heap {
	uintptr_t top, limit;
	void *free[EDDY__HEAP_CLASSES];
} eddy__heap_t;

EDDY__WEAK eddy__heap_t eddy__heap;

static inline int eddy__size_class(size_t n)
{
	size_t total = n + EDDY__HEAP_HDR;
	int c = EDDY__HEAP_MIN_CLASS;
	while (((size_t)1 << c) < total)
		c++;
	return c;
}

/* eddy__good_size rounds a buffer size up to what its block holds anyway. */
static inline size_t eddy__good_size(size_t n)
{
	if (n > ((size_t)1 << 30))
		return n;
	return ((size_t)1 << eddy__size_class(n)) - EDDY__HEAP_HDR;
}
#else
static inline size_t eddy__good_size(size_t n) { return n; }
#endif

/* eddy_malloc returns n bytes aligned to 16 (8 natively at least), or NULL
 * when memory is exhausted. Freestanding it is the SDK's allocator;
 * otherwise the C library's malloc. */
static inline void *eddy_malloc(size_t n)
{
#if EDDY_FREESTANDING
	if (n > ((size_t)1 << 30))
		return 0;
	int c = eddy__size_class(n);
	eddy__heap_t *h = &eddy__heap;
	void *p = h->free[c];
	if (p) {
		h->free[c] = *(void **)p;
		return p;
	}
	if (!h->top) {
		h->top = ((uintptr_t)&__heap_base + 15) & ~(uintptr_t)15;
		h->limit = (uintptr_t)__builtin_wasm_memory_size(0) * 65536u;
	}
	size_t size = (size_t)1 << c;
	if (h->limit - h->top < size) {
		size_t need = size - (h->limit - h->top);
		size_t pages = (need + 65535) / 65536;
		if (__builtin_wasm_memory_grow(0, pages) == (size_t)-1)
			return 0;
		h->limit += pages * 65536;
	}
	uint8_t *b = (uint8_t *)h->top;
	h->top += size;
	*(uint32_t *)b = (uint32_t)c;
	return b + EDDY__HEAP_HDR;
#else
	return malloc(n ? n : 1);
#endif
}

/* eddy_free frees memory from eddy_malloc or eddy_realloc; NULL is
 * ignored. */
static inline void eddy_free(void *p)
{
#if EDDY_FREESTANDING
	if (!p)
		return;
	uint32_t c = *(uint32_t *)((uint8_t *)p - EDDY__HEAP_HDR);
	*(void **)p = eddy__heap.free[c];
	eddy__heap.free[c] = p;
#else
	free(p);
#endif
}

/* eddy_realloc resizes p (NULL: a new block) to n bytes, keeping its
 * contents, or returns NULL (p untouched) when memory is exhausted. */
static inline void *eddy_realloc(void *p, size_t n)
{
#if EDDY_FREESTANDING
	if (!p)
		return eddy_malloc(n);
	uint32_t c = *(uint32_t *)((uint8_t *)p - EDDY__HEAP_HDR);
	size_t have = ((size_t)1 << c) - EDDY__HEAP_HDR;
	if (n <= have)
		return p;
	void *q = eddy_malloc(n);
	if (!q)
		return 0;
	memcpy(q, p, have);
	eddy_free(p);
	return q;
#else
	return realloc(p, n ? n : 1);
#endif
}

/* eddy__oom fails the call for lack of memory: a trap, which the host
 * reports as out of memory when memory.grow failed. */
__attribute__((noreturn)) static inline void eddy__oom(void) { __builtin_trap(); }

/* eddy__reserve grows the array *p of *cap elements of size elem to hold at
 * least need elements. */
static EDDY__COLD void eddy__grow_array(void **p, size_t *cap, size_t need, size_t elem)
{
	size_t n = *cap * 2;
	if (n < need)
		n = need;
	if (n < 16)
		n = 16;
	if (n > SIZE_MAX / elem)
		eddy__oom();
	size_t bytes = eddy__good_size(n * elem);
	void *q = eddy_realloc(*p, bytes);
	if (!q)
		eddy__oom();
	*p = q;
	*cap = bytes / elem;
}

#define EDDY__RESERVE(arr, cap, need)                                                                    \
	do {                                                                                             \
		if (EDDY__UNLIKELY((need) > (cap)))                                                      \
			eddy__grow_array((void **)&(arr), &(cap), (need), sizeof *(arr));                \
	} while (0)

/* eddy_buf_reserve makes room for n more bytes after b->len and returns
 * where they go (b->len is unchanged). It traps when memory is exhausted. */
static inline uint8_t *eddy_buf_reserve(eddy_buf_t *b, size_t n)
{
	if (EDDY__UNLIKELY(b->cap - b->len < n)) {
		if (b->len + n < b->len)
			eddy__oom();
		eddy__grow_array((void **)&b->data, &b->cap, b->len + n, 1);
	}
	return b->data + b->len;
}

/* eddy_buf_resize sets b's length to n, growing it if needed; new bytes are
 * zero. It traps when memory is exhausted. */
static inline void eddy_buf_resize(eddy_buf_t *b, size_t n)
{
	if (n > b->len) {
		uint8_t *p = eddy_buf_reserve(b, n - b->len);
		memset(p, 0, n - b->len);
	}
	b->len = n;
}

/* eddy_buf_append appends n bytes at p to b. It traps when memory is
 * exhausted. */
static inline void eddy_buf_append(eddy_buf_t *b, const void *p, size_t n)
{
	uint8_t *o = eddy_buf_reserve(b, n);
	if (n)
		memcpy(o, p, n);
	b->len += n;
}

/* ======================================================================== */
/* The SDK's state */

typedef struct eddy__item {
	eddy_bytes_t key, a, b;
} eddy__item_t;

typedef struct eddy__group {
	eddy_bytes_t key, acc;
	size_t lo, hi; /* its records are recs[lo..hi) */
} eddy__group_t;

typedef struct eddy__rec_err {
	uint32_t index;
	int code;
	size_t off, len; /* the reason, in errtext */
} eddy__rec_err_t;

typedef struct eddy__scratch {
	uint8_t *base;
	size_t cap, off;
	void *retired; /* blocks outgrown since the last reset */
} eddy__scratch_t;

typedef struct eddy__globals {
	uint8_t *in; /* the eddy_alloc region */
	size_t in_cap;
	eddy_mp_writer_t out; /* the output envelope; lives until the next call */

	eddy_record_t *recs; /* the decoded batch: views into the input */
	size_t recs_cap;
	eddy_header_t *hdrs; /* headers of all records of the batch */
	size_t hdrs_len, hdrs_cap;
	eddy__item_t *items;
	size_t items_cap;
	eddy_timer_t *timers; /* the decoded timers of eddy_timer */
	size_t timers_cap;
	eddy__group_t *groups;
	size_t groups_cap;
	eddy__rec_err_t *errs;
	size_t errs_len, errs_cap;
	eddy_buf_t errtext;
	eddy_buf_t acc[2]; /* scratch accumulators of eddy_agg_add */

	eddy_buf_t reason; /* the reason of the current handler's failure */
	bool reason_set;

	uint8_t *state_buf; /* receives state_get values */
	size_t state_cap;

	eddy_buf_t fmt; /* eddy_logf and eddy_failf */
	eddy__scratch_t scratch;

	const char *why; /* what a structural decoding error was */
} eddy__globals_t;

EDDY__WEAK eddy__globals_t eddy__g;

/* ======================================================================== */
/* Scratch memory */

static EDDY__COLD void *eddy__scratch_slow(size_t n)
{
	eddy__scratch_t *s = &eddy__g.scratch;
	size_t cap = s->cap * 2;
	if (cap < n)
		cap = n;
	if (cap < 4096 - 16)
		cap = 4096 - 16;
	cap = eddy__good_size(cap);
	uint8_t *b = (uint8_t *)eddy_malloc(cap);
	if (!b)
		eddy__oom();
	if (s->base) {
		*(void **)s->base = s->retired;
		s->retired = s->base;
	}
	s->base = b;
	s->cap = cap;
	s->off = n;
	return b;
}

/*
 * eddy_scratch returns n bytes (aligned to 8, never NULL, even for n == 0)
 * that stay valid until the handler returns. The SDK resets the scratch space before every record (and
 * every other handler call), so scratch memory never needs freeing and
 * handlers that build their outputs there allocate nothing once the space
 * has grown to what one record needs. It traps when memory is exhausted.
 */
static inline void *eddy_scratch(size_t n)
{
	eddy__scratch_t *s = &eddy__g.scratch;
	n = (n + 7) & ~(size_t)7;
	if (EDDY__UNLIKELY(s->cap - s->off < n || !s->base)) /* never NULL, even for 0 bytes */
		return eddy__scratch_slow(n);
	void *p = s->base + s->off;
	s->off += n;
	return p;
}

static EDDY__COLD void eddy__scratch_release(void)
{
	eddy__scratch_t *s = &eddy__g.scratch;
	while (s->retired) {
		void *next = *(void **)s->retired;
		eddy_free(s->retired);
		s->retired = next;
	}
}

/* eddy__before_handler resets the per-handler state: scratch memory and the
 * failure reason. */
static inline void eddy__before_handler(void)
{
	eddy__g.scratch.off = 0;
	if (EDDY__UNLIKELY(eddy__g.scratch.retired != 0))
		eddy__scratch_release();
	eddy__g.reason_set = false;
}

/* ======================================================================== */
/* Named outputs */

/* EDDY_HEADER_OUTPUT is the header naming the output of its step that an
 * output record goes to (ABI.md, "Named outputs"); eddy_record_to_output
 * sets it. */
#define EDDY_HEADER_OUTPUT "eddy.output"

/*
 * eddy_record_to_output sends the output record rec to the named output of
 * its step: the pipeline file gives a map, filter or flat_map step its
 * outputs (outputs: [name, ...]), and later steps read one as
 * <step>.<name>. A record sent to no output stays the step's own output;
 * one sent to a name the step does not have is dead-lettered. The host takes
 * the header off before the record goes on.
 *
 * rec's headers become a new list in scratch memory: the headers rec held,
 * without any earlier EDDY_HEADER_OUTPUT header, then eddy.output: name
 * (copied there too, so name need not outlive the call). The list rec
 * pointed to is not changed: the input record keeps its headers, and a
 * flat_map may send one record to several outputs, calling eddy_emit after
 * each eddy_record_to_output. Like all scratch memory, the list lasts until
 * the handler returns.
 *
 *     static int route(const eddy_record_t *in, eddy_record_t *out)
 *     {
 *             if (in->value.len && in->value.ptr[0] == '{')
 *                     eddy_record_to_output(out, "objects");
 *             return EDDY_OK;
 *     }
 *
 * eddy_record_to_outputn takes a name of n bytes that need not end in NUL.
 */
static inline void eddy_record_to_outputn(eddy_record_t *rec, const char *name, size_t n)
{
	size_t nh = rec->headers ? rec->headers_len : 0;
	eddy_header_t *hs = (eddy_header_t *)eddy_scratch((nh + 1) * sizeof *hs);
	uint8_t *v = (uint8_t *)eddy_scratch(n);
	if (n)
		memcpy(v, name, n);
	size_t k = 0;
	for (size_t i = 0; i < nh; i++)
		if (!eddy_bytes_equal_cstr(rec->headers[i].name, EDDY_HEADER_OUTPUT))
			hs[k++] = rec->headers[i];
	hs[k].name = EDDY_STR(EDDY_HEADER_OUTPUT);
	hs[k].value = eddy_bytes(v, n);
	rec->headers = hs;
	rec->headers_len = k + 1;
}

static inline void eddy_record_to_output(eddy_record_t *rec, const char *name)
{
	eddy_record_to_outputn(rec, name, eddy_cstr(name).len);
}

/* ======================================================================== */
/* Formatting */

static inline void eddy__fmt_putc(char *dst, size_t cap, size_t *n, char c)
{
	if (*n < cap)
		dst[*n] = c;
	(*n)++;
}

/*
 * eddy_vformat is a small vsnprintf: it writes at most cap bytes of the
 * formatted text to dst (no NUL is added) and returns the full length.
 * Conversions: %% %c %s %.*s %d %i %u %x with the length modifiers l, ll, z
 * and j (cast int64_t to long long for %lld), and a field width with an
 * optional '0' or '-' flag.
 */
static inline size_t eddy_vformat(char *dst, size_t cap, const char *fmt, va_list ap)
{
	size_t n = 0;
	for (const char *f = fmt; *f; f++) {
		if (*f != '%') {
			eddy__fmt_putc(dst, cap, &n, *f);
			continue;
		}
		f++;
		char pad = ' ';
		bool left = false;
		for (;; f++) {
			if (*f == '0')
				pad = '0';
			else if (*f == '-')
				left = true;
			else
				break;
		}
		size_t width = 0;
		while (*f >= '0' && *f <= '9')
			width = width * 10 + (size_t)(*f++ - '0');
		int prec = -1;
		if (*f == '.') {
			f++;
			if (*f == '*') {
				prec = va_arg(ap, int);
				f++;
			} else {
				prec = 0;
				while (*f >= '0' && *f <= '9')
					prec = prec * 10 + (*f++ - '0');
			}
		}
		int lng = 0; /* 0 int, 1 long, 2 long long, 3 size_t, 4 intmax_t */
		if (*f == 'l') {
			lng = 1;
			if (*++f == 'l') {
				lng = 2;
				f++;
			}
		} else if (*f == 'z') {
			lng = 3;
			f++;
		} else if (*f == 'j') {
			lng = 4;
			f++;
		}
		char tmp[24];
		const char *s = tmp;
		size_t len = 0;
		switch (*f) {
		case '%':
			tmp[0] = '%';
			len = 1;
			break;
		case 'c':
			tmp[0] = (char)va_arg(ap, int);
			len = 1;
			break;
		case 's':
			s = va_arg(ap, const char *);
			if (!s)
				s = "(null)";
			while ((prec < 0 || len < (size_t)prec) && s[len])
				len++;
			break;
		case 'd':
		case 'i':
		case 'u':
		case 'x': {
			bool sign = *f == 'd' || *f == 'i';
			uint64_t u;
			bool neg = false;
			if (sign) {
				int64_t v = lng == 0 ? va_arg(ap, int)
					    : lng == 1 ? va_arg(ap, long)
					    : lng == 2 ? va_arg(ap, long long)
					    : lng == 3 ? (int64_t)va_arg(ap, size_t)
						       : (int64_t)va_arg(ap, intmax_t);
				neg = v < 0;
				u = neg ? 0 - (uint64_t)v : (uint64_t)v;
			} else {
				u = lng == 0 ? va_arg(ap, unsigned)
				    : lng == 1 ? va_arg(ap, unsigned long)
				    : lng == 2 ? va_arg(ap, unsigned long long)
				    : lng == 3 ? va_arg(ap, size_t)
					       : (uint64_t)va_arg(ap, uintmax_t);
			}
			unsigned base = *f == 'x' ? 16 : 10;
			char *e = tmp + sizeof tmp, *p = e;
			do {
				*--p = "0123456789abcdef"[u % base];
				u /= base;
			} while (u);
			if (neg)
				*--p = '-';
			s = p;
			len = (size_t)(e - p);
			break;
		}
		default: /* unknown conversion: print it as is */
			eddy__fmt_putc(dst, cap, &n, '%');
			if (!*f)
				return n;
			tmp[0] = *f;
			len = 1;
		}
		if (!left)
			for (size_t i = len; i < width; i++)
				eddy__fmt_putc(dst, cap, &n, pad);
		for (size_t i = 0; i < len; i++)
			eddy__fmt_putc(dst, cap, &n, s[i]);
		if (left)
			for (size_t i = len; i < width; i++)
				eddy__fmt_putc(dst, cap, &n, ' ');
	}
	return n;
}

/* eddy_format is eddy_vformat with variadic arguments. */
static inline size_t eddy_format(char *dst, size_t cap, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	size_t n = eddy_vformat(dst, cap, fmt, ap);
	va_end(ap);
	return n;
}

/* eddy__vformat_buf formats into b (replacing its contents). */
static inline void eddy__vformat_buf(eddy_buf_t *b, const char *fmt, va_list ap)
{
	va_list ap2;
	va_copy(ap2, ap);
	size_t n = eddy_vformat((char *)b->data, b->cap, fmt, ap);
	if (n > b->cap) {
		b->len = 0;
		eddy_buf_reserve(b, n);
		eddy_vformat((char *)b->data, b->cap, fmt, ap2);
	}
	va_end(ap2);
	b->len = n;
}

/* ======================================================================== */
/* Failure reasons */

/*
 * eddy_failn fails the current record with code and a reason of n bytes at
 * reason (copied), and returns the code to return from the handler:
 *
 *     return eddy_failn(EDDY_BAD_INPUT, msg, len);
 *
 * code must be EDDY_REJECTED, EDDY_BAD_INPUT, EDDY_STATE or 64-255 (the
 * user range of ABI.md section 7); any other code is reported as
 * EDDY_REJECTED. The host carries the code and reason to the dead-letter
 * record.
 */
static inline int eddy_failn(int code, const char *reason, size_t n)
{
	eddy_buf_t *b = &eddy__g.reason;
	b->len = 0;
	eddy_buf_append(b, reason, n);
	eddy__g.reason_set = true;
	return code;
}

/* eddy_fail is eddy_failn with a NUL-terminated reason. */
static inline int eddy_fail(int code, const char *reason)
{
	return eddy_failn(code, reason, eddy_cstr(reason).len);
}

/* eddy_failf is eddy_fail with a reason formatted by eddy_format. */
static inline int eddy_failf(int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	eddy__vformat_buf(&eddy__g.reason, fmt, ap);
	va_end(ap);
	eddy__g.reason_set = true;
	return code;
}

/* eddy_reject refuses the current record (EDDY_REJECTED) with a reason:
 * `return eddy_reject("unknown currency");`. */
static inline int eddy_reject(const char *reason) { return eddy_fail(EDDY_REJECTED, reason); }

/* eddy_bad_input fails the current record with EDDY_BAD_INPUT: its payload
 * could not be decoded, as opposed to a record the function decoded and
 * refused. */
static inline int eddy_bad_input(const char *reason) { return eddy_fail(EDDY_BAD_INPUT, reason); }

/* eddy__why starts the reason of an SDK failure; eddy__why_str and
 * eddy__why_uint extend it. (Plain concatenation, so that the SDK itself does
 * not need eddy_vformat.) */
static inline void eddy__why(const char *s)
{
	eddy__g.reason.len = 0;
	eddy__g.reason_set = true;
	eddy_buf_append(&eddy__g.reason, s, eddy_cstr(s).len);
}

static inline void eddy__why_str(const char *s) { eddy_buf_append(&eddy__g.reason, s, eddy_cstr(s).len); }

static inline void eddy__why_uint(uint64_t u)
{
	char tmp[20], *p = tmp + sizeof tmp;
	do {
		*--p = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	eddy_buf_append(&eddy__g.reason, p, (size_t)(tmp + sizeof tmp - p));
}

/* eddy__code normalises a handler's failure code. */
static inline int eddy__code(int code)
{
	if (code == EDDY_REJECTED || code == EDDY_BAD_INPUT || code == EDDY_STATE ||
	    (code >= EDDY_USER_MIN && code <= EDDY_USER_MAX))
		return code;
	return EDDY_REJECTED;
}

/* eddy__default_reason is the reason of a failure returned without one. */
static inline void eddy__default_reason(int code)
{
	switch (code) {
	case EDDY_REJECTED:
		eddy_fail(code, "rejected");
		break;
	case EDDY_BAD_INPUT:
		eddy_fail(code, "bad input");
		break;
	case EDDY_STATE:
		eddy_fail(code, "eddy: keyed state storage failed");
		break;
	default:
		eddy__why("error ");
		eddy__why_uint((uint64_t)code); /* user codes are positive */
	}
}

/* ======================================================================== */
/* Host functions */

/*
 * eddy_logn writes a log line of n bytes (UTF-8) to the host's structured
 * log at level (host import eddy.log). The host may rate-limit a function's
 * log lines, so do not log per record at INFO or above. A level outside
 * DEBUG..ERROR is clamped. Natively, lines go to standard error.
 */
static inline void eddy_logn(eddy_level_t level, const char *msg, size_t n)
{
	int l = (int)level;
	if (l < EDDY_LOG_DEBUG)
		l = EDDY_LOG_DEBUG;
	if (l > EDDY_LOG_ERROR)
		l = EDDY_LOG_ERROR;
	eddy__host_log(l, msg, n);
}

/* eddy_log writes a NUL-terminated log line; see eddy_logn. */
static inline void eddy_log(eddy_level_t level, const char *msg)
{
	eddy_logn(level, msg, eddy_cstr(msg).len);
}

/* eddy_logf formats a log line with eddy_format and logs it. */
static inline void eddy_logf(eddy_level_t level, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	eddy__vformat_buf(&eddy__g.fmt, fmt, ap);
	va_end(ap);
	eddy_logn(level, (const char *)eddy__g.fmt.data, eddy__g.fmt.len);
}

/* eddy_countn adds delta to the counter whose name is the n bytes at name,
 * a metric the host exports (host import eddy.counter_add). It is cheap
 * enough to call per record. */
static inline void eddy_countn(const char *name, size_t n, int64_t delta)
{
	eddy__host_counter_add(name, n, delta);
}

/* eddy_count adds delta to the counter called name (NUL-terminated). */
static inline void eddy_count(const char *name, int64_t delta)
{
	eddy_countn(name, eddy_cstr(name).len, delta);
}

/*
 * eddy_panic reports msg as the reason of a crash and traps: the whole call
 * fails, and the host retries the batch in halves until the record that
 * caused it fails alone (its cause is "trap"). For a bug, not for a bad
 * record: return a failure code for those.
 */
__attribute__((noreturn)) static inline void eddy_panic(const char *msg)
{
	eddy__host_error(EDDY_PANIC, msg, eddy_cstr(msg).len);
	__builtin_trap();
}

/* Keyed state (ABI.md section 3). The host scopes the store to the pipeline
 * step and the partition; records with the same Kafka key always reach the
 * same partition, so state keyed by the record key (optionally with a
 * suffix) is consistent. Writes are visible to later reads at once, and are
 * committed atomically with the output of the call. */

/* Reasons of the state failures, as the Go SDK words them. */
#define EDDY_REASON_NO_STATE "eddy: no keyed state store (the step is not stateful)"
#define EDDY_REASON_STATE_FAILED "eddy: keyed state storage failed"

/* eddy__state_rc turns a failed state call's result into a handler code. */
static inline int eddy__state_rc(int32_t rc)
{
	if (rc == -2)
		return eddy_fail(EDDY_REJECTED, EDDY_REASON_NO_STATE);
	return eddy_fail(EDDY_STATE, EDDY_REASON_STATE_FAILED);
}

/* The number of times eddy_state_get grows its buffer and asks again. */
#define EDDY__STATE_TRIES 4

/*
 * eddy_state_get reads the value stored under key into *value: a view into a
 * buffer the SDK reuses, valid until the next eddy_state_get; a null
 * (value->ptr == NULL) if there is none.
 *
 * It returns EDDY_OK, or a failure code with its reason already set, which a
 * handler can return as it is: EDDY_REJECTED when the step has no state store
 * (it is not stateful, or runs under `eddy test` without --state), and
 * EDDY_STATE when the host's storage failed.
 *
 *     eddy_bytes_t v;
 *     int rc = eddy_state_get(in->key, &v);
 *     if (rc != EDDY_OK)
 *             return rc;
 */
static inline int eddy_state_get(eddy_bytes_t key, eddy_bytes_t *value)
{
	eddy__globals_t *g = &eddy__g;
	*value = EDDY_NULL;
	if (!g->state_buf) {
		g->state_cap = eddy__good_size(256);
		g->state_buf = (uint8_t *)eddy_malloc(g->state_cap);
		if (!g->state_buf)
			eddy__oom();
	}
	for (int i = 0; i < EDDY__STATE_TRIES; i++) {
		int32_t n = eddy__host_state_get(key.ptr, key.len, g->state_buf, g->state_cap);
		if (n == -1)
			return EDDY_OK;
		if (n < 0)
			return eddy__state_rc(n);
		if ((size_t)n <= g->state_cap) {
			*value = eddy_bytes(g->state_buf, (size_t)n);
			return EDDY_OK;
		}
		/* The value is larger than the buffer: nothing was copied. */
		size_t cap = eddy__good_size((size_t)n + (size_t)n / 4);
		eddy_free(g->state_buf);
		g->state_buf = (uint8_t *)eddy_malloc(cap);
		g->state_cap = cap;
		if (!g->state_buf)
			eddy__oom();
	}
	return eddy__state_rc(-3);
}

/* eddy_state_put stores value under key, replacing any previous value (the
 * host copies both). It returns EDDY_OK or a failure code as eddy_state_get
 * does. A null value is stored as an empty one. */
static inline int eddy_state_put(eddy_bytes_t key, eddy_bytes_t value)
{
	int32_t rc = eddy__host_state_put(key.ptr, key.len, value.ptr, value.len);
	return rc == 0 ? EDDY_OK : eddy__state_rc(rc);
}

/* eddy_state_delete removes key; deleting an absent key is not an error. It
 * returns EDDY_OK or a failure code as eddy_state_get does. */
static inline int eddy_state_delete(eddy_bytes_t key)
{
	int32_t rc = eddy__host_state_delete(key.ptr, key.len);
	return rc == 0 ? EDDY_OK : eddy__state_rc(rc);
}

/*
 * Timers (ABI.md section 3, "Timers"). A function in a step with keyed
 * state (a map, filter or flat_map step with state: true) may set timers: a
 * key (bytes of its choice, usually the record's key; at most 16 KiB), a
 * domain and a time in milliseconds since the Unix epoch, UTC. A timer
 * fires once, when the step's watermark (EDDY_EVENT_TIME) or the node's
 * clock (EDDY_PROCESSING_TIME) reaches its time, and is handed to the
 * module's .timer handler. Timer changes are committed with the state
 * writes of their call, and are kept with the step's state. A null key is
 * the same timer key as an empty one.
 */

/* The reason of a timer the host refused, as the Go SDK words it. */
#define EDDY_REASON_TIMER_REFUSED "eddy: timer refused by the host"

/*
 * eddy_set_timer sets a timer for key at time at in domain; setting one that
 * exists keeps one. A timer at or before the step's current time fires at
 * the next firing of the step's timers.
 *
 * It returns EDDY_OK, or a failure code with its reason set, which a
 * handler can return as it is: EDDY_REJECTED with EDDY_REASON_NO_STATE when
 * the step has no timers (no state store), and EDDY_STATE with
 * EDDY_REASON_TIMER_REFUSED when the host refused the timer (an unknown
 * domain, a key over 16 KiB, a key or task that holds as many timers as the
 * pipeline allows, or a storage failure). The host then fails the call
 * whatever the function answers, and the record that set the timer goes to
 * the dead-letter topic.
 *
 *     int rc = eddy_set_timer(in->key, EDDY_EVENT_TIME, in->timestamp + 1000);
 *     if (rc != EDDY_OK)
 *             return rc;
 */
static inline int eddy_set_timer(eddy_bytes_t key, eddy_time_domain_t domain, int64_t at)
{
	int32_t rc = eddy__host_timer_set(key.ptr, key.len, (int32_t)domain, at);
	if (rc == 0)
		return EDDY_OK;
	if (rc == -2)
		return eddy_fail(EDDY_REJECTED, EDDY_REASON_NO_STATE);
	return eddy_fail(EDDY_STATE, EDDY_REASON_TIMER_REFUSED);
}

/* eddy_delete_timer deletes the timer for key at time at in domain;
 * deleting one that does not exist is not an error. It returns EDDY_OK or a
 * failure code as the state functions do: EDDY_REJECTED when the step has
 * no timers, EDDY_STATE when the host failed. */
static inline int eddy_delete_timer(eddy_bytes_t key, eddy_time_domain_t domain, int64_t at)
{
	int32_t rc = eddy__host_timer_delete(key.ptr, key.len, (int32_t)domain, at);
	return rc == 0 ? EDDY_OK : eddy__state_rc(rc);
}

/* eddy_current_time returns the step's current time in domain, in
 * milliseconds since the Unix epoch, UTC: its watermark (EDDY_EVENT_TIME)
 * or the node's clock (EDDY_PROCESSING_TIME); EDDY_NO_TIME (INT64_MIN) when
 * it is not known: no watermark yet, a step without timers, or an unknown
 * domain. */
static inline int64_t eddy_current_time(eddy_time_domain_t domain)
{
	return eddy__host_time_now((int32_t)domain);
}

/*
 * Configuration (ABI.md section 3, "Configuration"). A step of the pipeline
 * file may give its function configuration entries: a name (UTF-8, 1 to 256
 * bytes) and a value (bytes, at most 64 KiB), written in the file or read
 * by the node from an environment variable or a file when it starts
 * (secrets). Any handler of any kind may read them, at any time. They do
 * not change while an instance lives (a node started with another
 * configuration makes new instances), so a function may read an entry once
 * and keep a copy. The host never logs a value; a function that logs a
 * secret shows it.
 */

/* The number of times eddy_config_get grows its buffer and asks again. */
#define EDDY__CONFIG_TRIES 4

/* The buffer that receives config_get values. Apart from eddy__g, so that
 * a module that reads no configuration does not hold it. */
typedef struct eddy__config {
	uint8_t *buf;
	size_t cap;
} eddy__config_t;

EDDY__WEAK eddy__config_t eddy__config;

/*
 * eddy_config_get reads the value of the step's config entry name (a
 * NUL-terminated UTF-8 string) into *value and returns whether the step has
 * it. The value is a view into a buffer the SDK owns and reuses: it stays
 * valid until the next eddy_config_get (any name), so copy what you keep.
 * An entry with an empty value is found, with a non-null value of length 0;
 * without the entry (or without configuration) *value is a null
 * (value->ptr == NULL). It traps when memory is exhausted.
 *
 *     eddy_bytes_t url;
 *     if (!eddy_config_get("url", &url))
 *             url = eddy_cstr("http://localhost");
 */
static inline bool eddy_config_get(const char *name, eddy_bytes_t *value)
{
	eddy__config_t *c = &eddy__config;
	*value = EDDY_NULL;
	if (!c->buf) {
		c->cap = eddy__good_size(256);
		c->buf = (uint8_t *)eddy_malloc(c->cap);
		if (!c->buf)
			eddy__oom();
	}
	size_t nlen = strlen(name);
	for (int i = 0; i < EDDY__CONFIG_TRIES; i++) {
		int32_t n = eddy__host_config_get(name, nlen, c->buf, c->cap);
		if (n < 0)
			return false;
		if ((size_t)n <= c->cap) {
			*value = eddy_bytes(c->buf, (size_t)n);
			return true;
		}
		/* The value is larger than the buffer: nothing was copied. */
		size_t cap = eddy__good_size((size_t)n);
		eddy_free(c->buf);
		c->buf = (uint8_t *)eddy_malloc(cap);
		c->cap = cap;
		if (!c->buf)
			eddy__oom();
	}
	return false;
}

/* ======================================================================== */
/* Envelopes: decoding (ABI.md section 5) */

/* The exports of ABI.md section 2 that take an envelope. */
enum {
	EDDY__EXP_PROCESS,
	EDDY__EXP_AGG_INIT,
	EDDY__EXP_AGG_ADD,
	EDDY__EXP_AGG_MERGE,
	EDDY__EXP_AGG_RESULT,
	EDDY__EXP_JOIN,
	EDDY__EXP_KEY,
	EDDY__EXP_TIMESTAMP,
	EDDY__EXP_TIMER,
	EDDY__EXP_MANIFEST,
	EDDY__EXP_COUNT
};

static inline const char *eddy__export_name(int e)
{
	static const char *const names[EDDY__EXP_COUNT] = {
		"eddy_process", "eddy_agg_init", "eddy_agg_add", "eddy_agg_merge", "eddy_agg_result",
		"eddy_join",    "eddy_key",      "eddy_timestamp", "eddy_timer",      "eddy_manifest",
	};
	return e >= 0 && e < EDDY__EXP_COUNT ? names[e] : "?";
}

/* eddy__shape fails r with a structural error described by why. */
static inline void eddy__shape(eddy_mp_reader_t *r, const char *why)
{
	if (!r->err)
		eddy__g.why = why;
	eddy_mp_fail(r, EDDY_MP_ERR_SHAPE);
}

/* eddy__envelope_error formats the reason of a malformed input envelope into
 * the reason buffer: what and i name the item (what NULL: the envelope as a
 * whole). */
static EDDY__COLD void eddy__envelope_error(const eddy_mp_reader_t *r, const char *what, uint32_t i)
{
	const char *why = r->err == EDDY_MP_ERR_SHAPE ? eddy__g.why : eddy_mp_error_string(r->err);
	eddy__why("malformed input envelope: ");
	if (what) {
		eddy__why_str(what);
		eddy__why_str(" ");
		eddy__why_uint(i);
		eddy__why_str(": ");
	}
	eddy__why_str("msgpack: at byte ");
	eddy__why_uint(r->err_at);
	eddy__why_str(": ");
	eddy__why_str(why);
}

/* eddy__count reads the item count of an input envelope into *n. It returns
 * false (with the reason set) when the count cannot be read, which fails the
 * whole call. */
static inline bool eddy__count(eddy_mp_reader_t *r, const uint8_t *in, size_t len, uint32_t *n)
{
	eddy_mp_reader_init(r, in, len);
	*n = eddy_mp_read_array(r);
	if (r->err) {
		eddy__envelope_error(r, 0, 0);
		return false;
	}
	return true;
}

/* eddy__trailing checks that the envelope ended with its last item. */
static inline bool eddy__trailing(eddy_mp_reader_t *r)
{
	if (r->err) {
		eddy__envelope_error(r, 0, 0);
		return false;
	}
	if (eddy_mp_left(r)) {
		eddy__why("malformed input envelope: ");
		eddy__why_uint(eddy_mp_left(r));
		eddy__why_str(" trailing bytes");
		return false;
	}
	return true;
}

/* eddy__read_record decodes one Record (ABI.md 5.2) as views into the input
 * with the general reader. A record's headers are appended to g.hdrs and
 * rec->headers holds their index there until eddy__fix_headers. */
static EDDY__COLD void eddy__read_record(eddy_mp_reader_t *r, eddy_record_t *rec)
{
	eddy__globals_t *g = &eddy__g;
	if (eddy_mp_read_array(r) != 4) {
		eddy__shape(r, "a record is not an array of 4 elements");
		return;
	}
	rec->key = eddy_mp_read_bytes(r);
	rec->value = eddy_mp_read_bytes(r);
	if (eddy_mp_is_nil(r)) { /* input timestamps are ints; be lenient */
		eddy_mp_read_nil(r);
		rec->timestamp = 0;
	} else {
		rec->timestamp = eddy_mp_read_int(r);
	}
	rec->headers = 0;
	rec->headers_len = 0;
	if (eddy_mp_is_nil(r)) {
		eddy_mp_read_nil(r);
		return;
	}
	uint32_t h = eddy_mp_read_array(r);
	if (h == 0)
		return;
	size_t start = g->hdrs_len;
	EDDY__RESERVE(g->hdrs, g->hdrs_cap, start + h);
	for (uint32_t j = 0; j < h && !r->err; j++) {
		if (eddy_mp_read_array(r) != 2) {
			eddy__shape(r, "a header is not an array of 2 elements");
			return;
		}
		eddy_header_t *hd = &g->hdrs[g->hdrs_len++];
		hd->name = eddy_mp_read_str(r);
		hd->value = eddy_mp_read_bytes(r);
	}
	rec->headers = (const eddy_header_t *)(uintptr_t)start;
	rec->headers_len = h;
}

/* eddy__fix_headers turns the header indexes of recs[0..n) into pointers
 * once g.hdrs has stopped moving. */
static inline void eddy__fix_headers(eddy_record_t *recs, size_t n)
{
	eddy__globals_t *g = &eddy__g;
	if (g->hdrs_len == 0)
		return;
	for (size_t i = 0; i < n; i++)
		if (recs[i].headers_len)
			recs[i].headers = g->hdrs + (uintptr_t)recs[i].headers;
}

/*
 * eddy__read_record_fast decodes the record at r if it has the shape the
 * host writes for a record without headers:
 *
 *     94  c4 KL key | c0  c4 VL value | c5 VH VL value | c0  int  90
 *
 * (a bin 8 or nil key, a bin 8, bin 16 or nil value, a positive fixint or
 * uint 64 timestamp, no headers) in straight-line code, and reports false
 * for anything else, which goes to the general decoder.
 */
static inline bool eddy__read_record_fast(eddy_mp_reader_t *r, eddy_record_t *rec)
{
	const uint8_t *p = r->p, *end = r->end;
	size_t left = (size_t)(end - p);
	if (left < 5 || p[0] != 0x94)
		return false;
	size_t k; /* offset of the value */
	eddy_bytes_t key = {0, 0};
	if (p[1] == EDDY_MP_BIN8) {
		k = 3 + (size_t)p[2];
		key.ptr = p + 3;
		key.len = p[2];
	} else if (p[1] == EDDY_MP_NIL) {
		k = 2;
	} else {
		return false;
	}
	if (left < k + 3)
		return false;
	const uint8_t *v = p + k;
	eddy_bytes_t val = {0, 0};
	size_t t; /* offset of the timestamp */
	if (v[0] == EDDY_MP_BIN8) {
		val.ptr = v + 2;
		val.len = v[1];
		t = k + 2 + val.len;
	} else if (v[0] == EDDY_MP_BIN16) {
		val.len = (size_t)v[1] << 8 | v[2];
		val.ptr = v + 3;
		t = k + 3 + val.len;
	} else if (v[0] == EDDY_MP_NIL) {
		t = k + 1;
	} else {
		return false;
	}
	if (left < t + 2)
		return false;
	const uint8_t *ts = p + t;
	int64_t tsv;
	size_t h; /* offset of the headers */
	if (ts[0] <= 0x7f) {
		tsv = ts[0];
		h = t + 1;
	} else if (ts[0] == EDDY_MP_UINT64 && left >= t + 10 && ts[1] < 0x80) {
		tsv = (int64_t)eddy_mp__load_be(ts + 1, 8);
		h = t + 9;
	} else {
		return false;
	}
	if (p[h] != 0x90)
		return false;
	rec->key = key;
	rec->value = val;
	rec->timestamp = tsv;
	rec->headers = 0;
	rec->headers_len = 0;
	r->p = p + h + 1;
	return true;
}

/* The outcome of decoding a batch. */
enum {
	EDDY__DECODED,  /* all items decoded */
	EDDY__BAD_ITEMS, /* the count was read but not the items: every item fails */
	EDDY__BAD_CALL   /* not even the count: the call fails */
};

/* eddy__read_records decodes [Record × n] into g.recs[0..n). No user code
 * runs on a malformed envelope. */
static inline int eddy__read_records(const uint8_t *in, size_t len, uint32_t *n)
{
	eddy__globals_t *g = &eddy__g;
	eddy_mp_reader_t r;
	if (!eddy__count(&r, in, len, n))
		return EDDY__BAD_CALL;
	EDDY__RESERVE(g->recs, g->recs_cap, *n);
	g->hdrs_len = 0;
	eddy_record_t *recs = g->recs;
	for (uint32_t i = 0, end = *n; i < end;) {
		/* Up to four records per iteration: when the host can interrupt
		 * calls, wazero checks for it at every loop iteration, which
		 * costs more than decoding a record. */
		if (eddy__read_record_fast(&r, &recs[i])) {
			if (++i < end && eddy__read_record_fast(&r, &recs[i]) && ++i < end &&
			    eddy__read_record_fast(&r, &recs[i]) && ++i < end && eddy__read_record_fast(&r, &recs[i]))
				i++;
			continue;
		}
		eddy__read_record(&r, &recs[i]);
		if (r.err) {
			eddy__envelope_error(&r, "record", i);
			return EDDY__BAD_ITEMS;
		}
		i++;
	}
	if (!eddy__trailing(&r))
		return EDDY__BAD_ITEMS;
	eddy__fix_headers(g->recs, *n);
	return EDDY__DECODED;
}

/* eddy__read_items decodes [[key, a, b] × n] (width 3) or [[key, acc] × n]
 * (width 2) into g.items[0..n). */
static inline int eddy__read_items(const uint8_t *in, size_t len, int width, uint32_t *n)
{
	eddy__globals_t *g = &eddy__g;
	eddy_mp_reader_t r;
	if (!eddy__count(&r, in, len, n))
		return EDDY__BAD_CALL;
	EDDY__RESERVE(g->items, g->items_cap, *n);
	for (uint32_t i = 0; i < *n; i++) {
		eddy__item_t *it = &g->items[i];
		if (eddy_mp_read_array(&r) != (uint32_t)width)
			eddy__shape(&r, "an item has the wrong number of elements");
		it->key = eddy_mp_read_bytes(&r);
		it->a = eddy_mp_read_bytes(&r);
		it->b = EDDY_NULL;
		if (width == 3)
			it->b = eddy_mp_read_bytes(&r);
		if (r.err) {
			eddy__envelope_error(&r, "item", i);
			return EDDY__BAD_ITEMS;
		}
	}
	return eddy__trailing(&r) ? EDDY__DECODED : EDDY__BAD_ITEMS;
}

/* eddy__read_timers decodes [[key, time, domain] × n] (the input of
 * eddy_timer) into g.timers[0..n). */
static inline int eddy__read_timers(const uint8_t *in, size_t len, uint32_t *n)
{
	eddy__globals_t *g = &eddy__g;
	eddy_mp_reader_t r;
	if (!eddy__count(&r, in, len, n))
		return EDDY__BAD_CALL;
	EDDY__RESERVE(g->timers, g->timers_cap, *n);
	for (uint32_t i = 0; i < *n; i++) {
		eddy_timer_t *t = &g->timers[i];
		if (eddy_mp_read_array(&r) != 3)
			eddy__shape(&r, "a timer is not an array of 3 elements");
		t->key = eddy_mp_read_bytes(&r);
		t->time = eddy_mp_read_int(&r);
		/* Domains are int32 in the host calls; the host sends 0 or 1. */
		t->domain = (eddy_time_domain_t)(int32_t)eddy_mp_read_int(&r);
		if (r.err) {
			eddy__envelope_error(&r, "timer", i);
			return EDDY__BAD_ITEMS;
		}
	}
	return eddy__trailing(&r) ? EDDY__DECODED : EDDY__BAD_ITEMS;
}

/* ======================================================================== */
/* Envelopes: encoding */

/* eddy__write_reason appends the current reason as str. */
static inline void eddy__write_reason(eddy_mp_writer_t *w)
{
	eddy_mp_write_str(w, (const char *)eddy__g.reason.data, eddy__g.reason.len);
}

/* eddy__write_failure appends a failed Result [code, reason] for a handler's
 * failure code. */
static EDDY__COLD void eddy__write_failure(eddy_mp_writer_t *w, int code)
{
	code = eddy__code(code);
	if (!eddy__g.reason_set)
		eddy__default_reason(code);
	eddy_mp_write_byte(w, 0x92);
	eddy_mp_write_int(w, code);
	eddy__write_reason(w);
}

/* eddy__fail_all answers n items with the same failure (the current
 * reason). */
static inline void eddy__fail_all(eddy_mp_writer_t *w, uint32_t n, int code)
{
	for (uint32_t i = 0; i < n; i++) {
		eddy_mp_write_byte(w, 0x92);
		eddy_mp_write_int(w, code);
		eddy__write_reason(w);
	}
}

/* eddy__write_nonnull appends v as bin, writing null as an empty bin:
 * accumulators may not be nil. */
static inline void eddy__write_nonnull(eddy_mp_writer_t *w, eddy_bytes_t v)
{
	eddy_mp_write_bin(w, v.ptr ? v.ptr : (const uint8_t *)"", v.len);
}

/* eddy__write_record appends an output Record. A timestamp equal to the
 * input's is written as nil, which ABI.md 5.2 defines as the same value in
 * one byte. */
static EDDY__NOINLINE void eddy__write_record(eddy_mp_writer_t *w, const eddy_record_t *rec, int64_t in_ts)
{
	eddy_mp_write_byte(w, 0x94);
	eddy_mp_write_bytes(w, rec->key);
	eddy_mp_write_bytes(w, rec->value);
	if (rec->timestamp == in_ts)
		eddy_mp_write_nil(w);
	else
		eddy_mp_write_int(w, rec->timestamp);
	size_t nh = rec->headers ? rec->headers_len : 0;
	eddy_mp_write_array(w, (uint32_t)nh);
	for (size_t i = 0; i < nh; i++) {
		const eddy_header_t *h = &rec->headers[i];
		eddy_mp_write_byte(w, 0x92);
		eddy_mp_write_str(w, (const char *)h->name.ptr, h->name.len);
		eddy_mp_write_bytes(w, h->value);
	}
}

/*
 * eddy__write_one appends a successful Result holding one record: the answer
 * of a map or a kept record of a filter. The common shape (a key of at most
 * 255 bytes, a value of at most 65535, the input's timestamp, no headers)
 * is written by straight-line code with one capacity check.
 */
static inline void eddy__write_one(eddy_mp_writer_t *w, const eddy_record_t *rec, int64_t in_ts)
{
	size_t kl = rec->key.len, vl = rec->value.len;
	if (EDDY__UNLIKELY(!rec->key.ptr || !rec->value.ptr || kl > 0xff || vl > 0xffff ||
			   (rec->headers_len && rec->headers) || rec->timestamp != in_ts)) {
		uint8_t *o = eddy_mp_reserve(w, 3);
		o[0] = 0x92;
		o[1] = 0x00;
		o[2] = 0x91;
		w->len += 3;
		eddy__write_record(w, rec, in_ts);
		return;
	}
	uint8_t *o = eddy_mp_reserve(w, 4 + 2 + kl + 3 + vl + 2);
	o[0] = 0x92; /* Result [0, [Record]] */
	o[1] = 0x00;
	o[2] = 0x91;
	o[3] = 0x94;
	o[4] = EDDY_MP_BIN8;
	o[5] = (uint8_t)kl;
	memcpy(o + 6, rec->key.ptr, kl);
	uint8_t *p = o + 6 + kl;
	if (vl <= 0xff) {
		p[0] = EDDY_MP_BIN8;
		p[1] = (uint8_t)vl;
		p += 2;
	} else {
		p[0] = EDDY_MP_BIN16;
		p[1] = (uint8_t)(vl >> 8);
		p[2] = (uint8_t)vl;
		p += 3;
	}
	memcpy(p, rec->value.ptr, vl);
	p += vl;
	p[0] = EDDY_MP_NIL; /* timestamp inherited */
	p[1] = 0x90;        /* no headers */
	w->len = (size_t)(p + 2 - w->buf);
}

/*
 * eddy_emit adds rec to the output records of a flat_map or timer handler.
 * rec's bytes are copied at once, so rec and what it points to may be
 * reused for the next record. An output record with the input's timestamp
 * inherits it; headers are exactly rec's. In a timer handler, the timer
 * stands for the input: a record with the timer's time or with timestamp 0
 * gets the timer's time (as in the Go SDK, whose records start at 0).
 */
static inline void eddy_emit(eddy_emitter_t *out, const eddy_record_t *rec)
{
	if (EDDY__UNLIKELY(out->zero_inherits && rec->timestamp == 0)) {
		eddy_record_t r = *rec;
		r.timestamp = out->in_timestamp;
		eddy__write_record(out->w, &r, out->in_timestamp);
	} else {
		eddy__write_record(out->w, rec, out->in_timestamp);
	}
	out->count++;
}

/* ======================================================================== */
/* Dispatch */

/* eddy__unsupported answers every item of a kind that is not registered. */
static EDDY__COLD bool eddy__unsupported(const uint8_t *in, size_t len, const char *kind)
{
	eddy_mp_reader_t r;
	uint32_t n;
	if (!eddy__count(&r, in, len, &n))
		return false;
	eddy__why("this module implements no ");
	eddy__why_str(kind);
	eddy__why_str(" function");
	eddy_mp_writer_t *w = &eddy__g.out;
	eddy_mp_write_array(w, n);
	eddy__fail_all(w, n, EDDY_UNSUPPORTED);
	return true;
}

/* eddy__records decodes a batch of records, writes the array header of the
 * answer, and reports how many items there are to answer: -1 when the whole
 * call fails, 0 when the envelope was answered already (every item failed
 * with BAD_ENVELOPE, or it is empty). */
static inline int64_t eddy__begin_records(const uint8_t *in, size_t len)
{
	uint32_t n;
	int st = eddy__read_records(in, len, &n);
	if (st == EDDY__BAD_CALL)
		return -1;
	eddy_mp_write_array(&eddy__g.out, n);
	if (st == EDDY__BAD_ITEMS) {
		eddy__fail_all(&eddy__g.out, n, EDDY_BAD_ENVELOPE);
		return 0;
	}
	return n;
}

/* eddy__begin_items is eddy__begin_records for join, merge and result
 * items. */
static inline int64_t eddy__begin_items(const uint8_t *in, size_t len, int width)
{
	uint32_t n;
	int st = eddy__read_items(in, len, width, &n);
	if (st == EDDY__BAD_CALL)
		return -1;
	eddy_mp_write_array(&eddy__g.out, n);
	if (st == EDDY__BAD_ITEMS) {
		eddy__fail_all(&eddy__g.out, n, EDDY_BAD_ENVELOPE);
		return 0;
	}
	return n;
}

/* eddy__map_one answers one record of a map. */
static inline __attribute__((always_inline)) void eddy__map_one(eddy_map_fn fn, eddy_mp_writer_t *w,
								const eddy_record_t *rin)
{
	eddy_record_t out = *rin;
	eddy__before_handler();
	int code = fn(rin, &out);
	if (EDDY__UNLIKELY(code != EDDY_OK))
		eddy__write_failure(w, code);
	else
		eddy__write_one(w, &out, rin->timestamp);
}

static EDDY__NOINLINE bool eddy__run_map(const eddy_module_t *m, const uint8_t *in, size_t len)
{
	eddy_map_fn fn = m->map;
	int64_t n = eddy__begin_records(in, len);
	if (n < 0)
		return false;
	eddy_mp_writer_t *w = &eddy__g.out;
	const eddy_record_t *recs = eddy__g.recs;
	int64_t i = 0;
	/* Two records per iteration, for the loop checks of interruptible
	 * hosts (see eddy__read_records). */
	for (; n - i >= 2; i += 2) {
		eddy__map_one(fn, w, &recs[i]);
		eddy__map_one(fn, w, &recs[i + 1]);
	}
	if (i < n)
		eddy__map_one(fn, w, &recs[i]);
	return true;
}

static EDDY__NOINLINE bool eddy__run_filter(const eddy_module_t *m, const uint8_t *in, size_t len)
{
	eddy_filter_fn fn = m->filter;
	int64_t n = eddy__begin_records(in, len);
	if (n < 0)
		return false;
	eddy_mp_writer_t *w = &eddy__g.out;
	for (int64_t i = 0; i < n; i++) {
		const eddy_record_t *rin = &eddy__g.recs[i];
		bool keep = false;
		eddy__before_handler();
		int code = fn(rin, &keep);
		if (EDDY__UNLIKELY(code != EDDY_OK)) {
			eddy__write_failure(w, code);
		} else if (keep) {
			eddy__write_one(w, rin, rin->timestamp);
		} else {
			uint8_t *o = eddy_mp_reserve(w, 3);
			o[0] = 0x92;
			o[1] = 0x00;
			o[2] = 0x90;
			w->len += 3;
		}
	}
	return true;
}

/* eddy__emit_open starts the Result of a handler that emits records, [0,
 * [Record × k]], with an array 32 header that eddy__emit_close patches, and
 * returns where it starts. */
static inline size_t eddy__emit_open(eddy_mp_writer_t *w)
{
	size_t start = w->len;
	uint8_t *o = eddy_mp_reserve(w, 7);
	o[0] = 0x92;
	o[1] = 0x00;
	o[2] = EDDY_MP_ARRAY32;
	w->len += 7;
	return start;
}

/* eddy__emit_close ends the Result begun at start: a failure (code) in its
 * place, or the record count in its shortest form. */
static inline void eddy__emit_close(eddy_mp_writer_t *w, size_t start, int code, uint32_t count)
{
	if (EDDY__UNLIKELY(code != EDDY_OK)) {
		w->len = start;
		eddy__write_failure(w, code);
		return;
	}
	uint8_t *hd = w->buf + start + 2, *body = hd + 5;
	size_t body_len = w->len - (start + 7);
	size_t h = eddy_mp__put_head(hd, count, 0x90, 15, 0, EDDY_MP_ARRAY16, EDDY_MP_ARRAY32);
	if (h < 5) {
		memmove(hd + h, body, body_len);
		w->len -= 5 - h;
	}
}

static EDDY__NOINLINE bool eddy__run_flat_map(const eddy_module_t *m, const uint8_t *in, size_t len)
{
	eddy_flat_map_fn fn = m->flat_map;
	int64_t n = eddy__begin_records(in, len);
	if (n < 0)
		return false;
	eddy_mp_writer_t *w = &eddy__g.out;
	for (int64_t i = 0; i < n; i++) {
		const eddy_record_t *rin = &eddy__g.recs[i];
		size_t start = eddy__emit_open(w);
		eddy_emitter_t em = {w, rin->timestamp, 0, false};
		eddy__before_handler();
		int code = fn(rin, &em);
		eddy__emit_close(w, start, code, em.count);
	}
	return true;
}

/* eddy__run_timer answers eddy_timer: [Timer × N] → [Result × N], body =
 * [Record × k] as for eddy_process, a nil timestamp being the timer's
 * time. */
static EDDY__NOINLINE bool eddy__run_timer(const eddy_module_t *m, const uint8_t *in, size_t len)
{
	eddy_timer_fn fn = m->timer;
	uint32_t n;
	int st = eddy__read_timers(in, len, &n);
	if (st == EDDY__BAD_CALL)
		return false;
	eddy_mp_writer_t *w = &eddy__g.out;
	eddy_mp_write_array(w, n);
	if (st == EDDY__BAD_ITEMS) {
		eddy__fail_all(w, n, EDDY_BAD_ENVELOPE);
		return true;
	}
	for (uint32_t i = 0; i < n; i++) {
		const eddy_timer_t *t = &eddy__g.timers[i];
		size_t start = eddy__emit_open(w);
		eddy_emitter_t em = {w, t->time, 0, true};
		eddy__before_handler();
		int code = fn(t, &em);
		eddy__emit_close(w, start, code, em.count);
	}
	return true;
}

static EDDY__NOINLINE bool eddy__run_key(const eddy_module_t *m, const uint8_t *in, size_t len)
{
	eddy_key_fn fn = m->key;
	int64_t n = eddy__begin_records(in, len);
	if (n < 0)
		return false;
	eddy_mp_writer_t *w = &eddy__g.out;
	for (int64_t i = 0; i < n; i++) {
		eddy_bytes_t key = EDDY_NULL;
		eddy__before_handler();
		int code = fn(&eddy__g.recs[i], &key);
		if (EDDY__UNLIKELY(code != EDDY_OK)) {
			eddy__write_failure(w, code);
			continue;
		}
		eddy_mp_write_byte(w, 0x92);
		eddy_mp_write_byte(w, 0x00);
		eddy_mp_write_bytes(w, key);
	}
	return true;
}

static EDDY__NOINLINE bool eddy__run_timestamp(const eddy_module_t *m, const uint8_t *in, size_t len)
{
	eddy_timestamp_fn fn = m->timestamp;
	int64_t n = eddy__begin_records(in, len);
	if (n < 0)
		return false;
	eddy_mp_writer_t *w = &eddy__g.out;
	for (int64_t i = 0; i < n; i++) {
		const eddy_record_t *rin = &eddy__g.recs[i];
		int64_t ts = rin->timestamp;
		eddy__before_handler();
		int code = fn(rin, &ts);
		if (EDDY__UNLIKELY(code != EDDY_OK)) {
			eddy__write_failure(w, code);
			continue;
		}
		eddy_mp_write_byte(w, 0x92);
		eddy_mp_write_byte(w, 0x00);
		eddy_mp_write_int(w, ts);
	}
	return true;
}

static EDDY__NOINLINE bool eddy__run_join(const eddy_module_t *m, const uint8_t *in, size_t len)
{
	eddy_join_fn fn = m->join;
	int64_t n = eddy__begin_items(in, len, 3);
	if (n < 0)
		return false;
	eddy_mp_writer_t *w = &eddy__g.out;
	for (int64_t i = 0; i < n; i++) {
		const eddy__item_t *it = &eddy__g.items[i];
		eddy_bytes_t v = EDDY_NULL;
		eddy__before_handler();
		int code = fn(it->key, it->a, it->b, &v);
		if (EDDY__UNLIKELY(code != EDDY_OK)) {
			eddy__write_failure(w, code);
			continue;
		}
		eddy_mp_write_byte(w, 0x92);
		eddy_mp_write_byte(w, 0x00);
		eddy_mp_write_bytes(w, v);
	}
	return true;
}

/* eddy__has_aggregate reports whether m registers an aggregate. */
static inline bool eddy__has_aggregate(const eddy_module_t *m) { return m->aggregate.add != 0; }

/* eddy__call_init runs the aggregator's init into *acc (empty when init is
 * NULL). */
static inline int eddy__call_init(const eddy_module_t *m, eddy_bytes_t *acc)
{
	*acc = eddy_bytes("", 0);
	if (!m->aggregate.init)
		return EDDY_OK;
	eddy__before_handler();
	int code = m->aggregate.init(acc);
	if (code == EDDY_OK && !acc->ptr)
		*acc = eddy_bytes("", 0);
	return code;
}

/* eddy__agg_init answers eddy_agg_init: one Result, body = the initial
 * accumulator. Its input is empty and ignored. */
static EDDY__COLD bool eddy__agg_init(const eddy_module_t *m)
{
	eddy_mp_writer_t *w = &eddy__g.out;
	if (!eddy__has_aggregate(m)) {
		eddy_fail(EDDY_UNSUPPORTED, "this module implements no aggregate function");
		eddy_mp_write_byte(w, 0x92);
		eddy_mp_write_int(w, EDDY_UNSUPPORTED);
		eddy__write_reason(w);
		return true;
	}
	eddy_bytes_t acc;
	int code = eddy__call_init(m, &acc);
	if (code != EDDY_OK) {
		eddy__write_failure(w, code);
		return true;
	}
	eddy_mp_write_byte(w, 0x92);
	eddy_mp_write_byte(w, 0x00);
	eddy__write_nonnull(w, acc);
	return true;
}

/* eddy__rec_error records that record index of the current group was not
 * folded, with the current reason (after prefix). */
static inline void eddy__rec_error(uint32_t index, int code, const char *prefix)
{
	eddy__globals_t *g = &eddy__g;
	code = eddy__code(code);
	if (!g->reason_set)
		eddy__default_reason(code);
	EDDY__RESERVE(g->errs, g->errs_cap, g->errs_len + 1);
	eddy__rec_err_t *e = &g->errs[g->errs_len++];
	e->index = index;
	e->code = code;
	e->off = g->errtext.len;
	if (prefix)
		eddy_buf_append(&g->errtext, prefix, eddy_cstr(prefix).len);
	eddy_buf_append(&g->errtext, g->reason.data, g->reason.len);
	e->len = g->errtext.len - e->off;
}

/*
 * eddy__fold folds the records of gr into its accumulator and returns it,
 * leaving the records it could not fold in g.errs.
 *
 * add gets a scratch copy of the accumulator, so it may change it in place;
 * two scratch buffers alternate so that a failed add leaves the previous
 * accumulator intact, and the input envelope is never written.
 */
static inline eddy_bytes_t eddy__fold(const eddy_module_t *m, const eddy__group_t *gr)
{
	eddy__globals_t *g = &eddy__g;
	g->errs_len = 0;
	g->errtext.len = 0;
	uint32_t nrec = (uint32_t)(gr->hi - gr->lo);
	const eddy_record_t *recs = g->recs + gr->lo;
	eddy_bytes_t start = gr->acc;
	if (!start.ptr) {
		int code = eddy__call_init(m, &start);
		if (code != EDDY_OK) {
			for (uint32_t i = 0; i < nrec; i++)
				eddy__rec_error(i, code, "initial accumulator: ");
			return EDDY_NULL;
		}
	}
	int cur = 0;
	g->acc[0].len = 0;
	eddy_buf_append(&g->acc[0], start.ptr, start.len);
	for (uint32_t i = 0; i < nrec; i++) {
		eddy_buf_t *work = &g->acc[1 - cur];
		work->len = 0;
		eddy_buf_append(work, g->acc[cur].data, g->acc[cur].len);
		eddy__before_handler();
		int code = m->aggregate.add(work, &recs[i]);
		if (code != EDDY_OK) {
			eddy__rec_error(i, code, 0);
			continue;
		}
		cur = 1 - cur;
	}
	return eddy_bytes(g->acc[cur].data ? g->acc[cur].data : (const uint8_t *)"", g->acc[cur].len);
}

/* eddy__agg_add_unsupported answers eddy_agg_add for a module without an
 * aggregate: every record fails with UNSUPPORTED, every accumulator is
 * returned unchanged. (A failure of the call discards what was written.) */
static EDDY__COLD bool eddy__agg_add_unsupported(const uint8_t *in, size_t len)
{
	static const char reason[] = "this module implements no aggregate function";
	eddy_mp_reader_t r;
	uint32_t n;
	if (!eddy__count(&r, in, len, &n))
		return false;
	eddy_mp_writer_t *w = &eddy__g.out;
	eddy_mp_write_array(w, n);
	for (uint32_t i = 0; i < n; i++) {
		if (eddy_mp_read_array(&r) != 3)
			eddy__shape(&r, "an item has the wrong number of elements");
		eddy_mp_read_bytes(&r);
		eddy_bytes_t acc = eddy_mp_read_bytes(&r);
		uint32_t k = eddy_mp_read_array(&r);
		for (uint32_t j = 0; j < k && !r.err; j++) {
			eddy_record_t rec;
			eddy__g.hdrs_len = 0;
			eddy__read_record(&r, &rec);
		}
		if (r.err) {
			eddy__envelope_error(&r, "group", i);
			return false;
		}
		eddy_mp_write_byte(w, 0x92);
		eddy__write_nonnull(w, acc);
		eddy_mp_write_array(w, k);
		for (uint32_t j = 0; j < k; j++) {
			eddy_mp_write_byte(w, 0x93);
			eddy_mp_write_int(w, j);
			eddy_mp_write_int(w, EDDY_UNSUPPORTED);
			eddy_mp_write_str(w, reason, sizeof reason - 1);
		}
	}
	return eddy__trailing(&r);
}

/*
 * eddy__agg_add answers eddy_agg_add: [Group × G] → [Added × G].
 *
 * Added has no failure code of its own, so an envelope that is not a valid
 * list of groups fails the whole call with BAD_ENVELOPE, and a module
 * without an aggregate reports every record as UNSUPPORTED.
 */
static EDDY__NOINLINE bool eddy__agg_add(const eddy_module_t *m, const uint8_t *in, size_t len)
{
	eddy__globals_t *g = &eddy__g;
	if (!eddy__has_aggregate(m))
		return eddy__agg_add_unsupported(in, len);
	eddy_mp_reader_t r;
	uint32_t n;
	if (!eddy__count(&r, in, len, &n))
		return false;
	EDDY__RESERVE(g->groups, g->groups_cap, n);
	size_t nrecs = 0;
	g->hdrs_len = 0;
	for (uint32_t i = 0; i < n; i++) {
		eddy__group_t *gr = &g->groups[i];
		if (eddy_mp_read_array(&r) != 3)
			eddy__shape(&r, "an item has the wrong number of elements");
		gr->key = eddy_mp_read_bytes(&r);
		gr->acc = eddy_mp_read_bytes(&r);
		uint32_t k = eddy_mp_read_array(&r);
		gr->lo = nrecs;
		EDDY__RESERVE(g->recs, g->recs_cap, nrecs + k);
		for (uint32_t j = 0; j < k && !r.err; j++) {
			eddy_record_t *rec = &g->recs[nrecs++];
			if (!eddy__read_record_fast(&r, rec))
				eddy__read_record(&r, rec);
		}
		gr->hi = nrecs;
		if (r.err) {
			eddy__envelope_error(&r, "group", i);
			return false;
		}
	}
	if (!eddy__trailing(&r))
		return false;
	eddy__fix_headers(g->recs, nrecs);

	eddy_mp_writer_t *w = &g->out;
	eddy_mp_write_array(w, n);
	for (uint32_t i = 0; i < n; i++) {
		eddy_bytes_t acc = eddy__fold(m, &g->groups[i]);
		eddy_mp_write_byte(w, 0x92);
		eddy__write_nonnull(w, acc);
		eddy_mp_write_array(w, (uint32_t)g->errs_len);
		for (size_t j = 0; j < g->errs_len; j++) {
			const eddy__rec_err_t *e = &g->errs[j];
			eddy_mp_write_byte(w, 0x93);
			eddy_mp_write_int(w, e->index);
			eddy_mp_write_int(w, e->code);
			eddy_mp_write_str(w, (const char *)g->errtext.data + e->off, e->len);
		}
	}
	return true;
}

/* eddy__agg_merge answers eddy_agg_merge: [[key, a, b] × G] → [Result × G],
 * body = the merged accumulator. */
static EDDY__NOINLINE bool eddy__agg_merge(const eddy_module_t *m, const uint8_t *in, size_t len)
{
	if (!eddy__has_aggregate(m))
		return eddy__unsupported(in, len, "aggregate");
	eddy_mp_writer_t *w = &eddy__g.out;
	if (!m->aggregate.merge) {
		eddy_mp_reader_t r;
		uint32_t n;
		if (!eddy__count(&r, in, len, &n))
			return false;
		eddy_fail(EDDY_UNSUPPORTED, "this aggregate function has no merge");
		eddy_mp_write_array(w, n);
		eddy__fail_all(w, n, EDDY_UNSUPPORTED);
		return true;
	}
	int64_t n = eddy__begin_items(in, len, 3);
	if (n < 0)
		return false;
	for (int64_t i = 0; i < n; i++) {
		const eddy__item_t *it = &eddy__g.items[i];
		eddy_bytes_t v = EDDY_NULL;
		eddy__before_handler();
		int code = m->aggregate.merge(it->key, it->a, it->b, &v);
		if (code != EDDY_OK) {
			eddy__write_failure(w, code);
			continue;
		}
		eddy_mp_write_byte(w, 0x92);
		eddy_mp_write_byte(w, 0x00);
		eddy__write_nonnull(w, v);
	}
	return true;
}

/* eddy__agg_result answers eddy_agg_result: [[key, acc] × G] → [Result × G],
 * body = bytes?. */
static EDDY__NOINLINE bool eddy__agg_result(const eddy_module_t *m, const uint8_t *in, size_t len)
{
	if (!eddy__has_aggregate(m))
		return eddy__unsupported(in, len, "aggregate");
	int64_t n = eddy__begin_items(in, len, 2);
	if (n < 0)
		return false;
	eddy_mp_writer_t *w = &eddy__g.out;
	for (int64_t i = 0; i < n; i++) {
		const eddy__item_t *it = &eddy__g.items[i];
		eddy_bytes_t v = it->a;
		if (m->aggregate.result) {
			v = EDDY_NULL;
			eddy__before_handler();
			int code = m->aggregate.result(it->key, it->a, &v);
			if (code != EDDY_OK) {
				eddy__write_failure(w, code);
				continue;
			}
		}
		eddy_mp_write_byte(w, 0x92);
		eddy_mp_write_byte(w, 0x00);
		eddy_mp_write_bytes(w, v);
	}
	return true;
}

/* eddy__process_handlers counts the process handlers of m. */
static inline int eddy__process_handlers(const eddy_module_t *m)
{
	return (m->map != 0) + (m->filter != 0) + (m->flat_map != 0);
}

/* eddy__manifest answers eddy_manifest (ABI.md section 4), or fails for a
 * module that registers two process handlers or none at all. */
static EDDY__COLD bool eddy__manifest(const eddy_module_t *m)
{
	const char *kinds[6];
	uint32_t k = 0;
	if (eddy__process_handlers(m) > 1) {
		eddy_fail(1, "eddy: more than one process handler (map, filter, flat_map) is set; a module "
			     "implements each kind once");
		return false;
	}
	if (eddy__process_handlers(m))
		kinds[k++] = "process";
	if (eddy__has_aggregate(m))
		kinds[k++] = "aggregate";
	if (m->join)
		kinds[k++] = "join";
	if (m->key)
		kinds[k++] = "key";
	if (m->timestamp)
		kinds[k++] = "timestamp";
	if (m->timer)
		kinds[k++] = "timer";
	if (k == 0) {
		eddy_fail(1, "eddy: the module sets no handler (an aggregate needs at least add)");
		return false;
	}
	bool name = m->name && m->name[0], ver = m->version && m->version[0];
	eddy_mp_writer_t *w = &eddy__g.out;
	eddy_mp_write_map(w, 3 + name + ver);
	eddy_mp_write_cstr(w, "abi");
	eddy_mp_write_int(w, 1);
	eddy_mp_write_cstr(w, "kinds");
	eddy_mp_write_array(w, k);
	for (uint32_t i = 0; i < k; i++)
		eddy_mp_write_cstr(w, kinds[i]);
	if (name) {
		eddy_mp_write_cstr(w, "name");
		eddy_mp_write_cstr(w, m->name);
	}
	if (ver) {
		eddy_mp_write_cstr(w, "version");
		eddy_mp_write_cstr(w, m->version);
	}
	eddy_mp_write_cstr(w, "sdk");
	eddy_mp_write_cstr(w, EDDY_SDK_VERSION);
	return true;
}

/* eddy__dispatch runs export e of module m on the input envelope
 * in[0..len), leaving the answer in g.out. It returns false when the whole
 * call fails, with the cause in the reason buffer. */
static inline __attribute__((always_inline)) bool eddy__dispatch(const eddy_module_t *m, int e, const uint8_t *in,
								size_t len)
{
	bool ok;
	switch (e) {
	case EDDY__EXP_PROCESS:
		if (m->map)
			ok = eddy__run_map(m, in, len);
		else if (m->filter)
			ok = eddy__run_filter(m, in, len);
		else if (m->flat_map)
			ok = eddy__run_flat_map(m, in, len);
		else
			ok = eddy__unsupported(in, len, "process");
		break;
	case EDDY__EXP_AGG_INIT:
		ok = eddy__agg_init(m);
		break;
	case EDDY__EXP_AGG_ADD:
		ok = eddy__agg_add(m, in, len);
		break;
	case EDDY__EXP_AGG_MERGE:
		ok = eddy__agg_merge(m, in, len);
		break;
	case EDDY__EXP_AGG_RESULT:
		ok = eddy__agg_result(m, in, len);
		break;
	case EDDY__EXP_JOIN:
		ok = m->join ? eddy__run_join(m, in, len) : eddy__unsupported(in, len, "join");
		break;
	case EDDY__EXP_KEY:
		ok = m->key ? eddy__run_key(m, in, len) : eddy__unsupported(in, len, "key");
		break;
	case EDDY__EXP_TIMESTAMP:
		ok = m->timestamp ? eddy__run_timestamp(m, in, len) : eddy__unsupported(in, len, "timestamp");
		break;
	case EDDY__EXP_TIMER:
		ok = m->timer ? eddy__run_timer(m, in, len) : eddy__unsupported(in, len, "timer");
		break;
	case EDDY__EXP_MANIFEST:
		ok = eddy__manifest(m);
		break;
	default:
		eddy_fail(EDDY_UNSUPPORTED, "no such export");
		ok = false;
	}
	return ok;
}

/* eddy__report reports the failure of a call of export e to the host's
 * error function, with the cause in the reason buffer, and returns its code,
 * which the export negates: a bad manifest is a generic failure (1),
 * anything else a bad envelope. */
static EDDY__COLD int eddy__report(int e)
{
	eddy__globals_t *g = &eddy__g;
	int code = e == EDDY__EXP_MANIFEST ? 1 : EDDY_BAD_ENVELOPE;
	eddy_buf_t *msg = &g->fmt;
	msg->len = 0;
	const char *name = eddy__export_name(e);
	eddy_buf_append(msg, name, eddy_cstr(name).len);
	eddy_buf_append(msg, ": ", 2);
	eddy_buf_append(msg, g->reason.data, g->reason.len);
	eddy__host_error(code, msg->data, msg->len);
	return code;
}

/*
 * eddy__invoke runs export e of module m on the input envelope in[0..len).
 * It returns 0 with the answer in g.out (valid until the next call), or the
 * code of a call-level failure after reporting its reason to the host's
 * error function. (The Wasm exports do the same through eddy__run.)
 */
static inline int eddy__invoke(const eddy_module_t *m, int e, const uint8_t *in, size_t len)
{
	eddy__g.out.len = 0;
	eddy__before_handler();
	if (eddy__dispatch(m, e, in, len))
		return 0;
	return eddy__report(e);
}

/* eddy__alloc is eddy_alloc: the input region, one buffer that grows and is
 * reused; NULL if size cannot be allocated. */
static inline uint8_t *eddy__alloc(size_t size)
{
	eddy__globals_t *g = &eddy__g;
	if (size <= g->in_cap && g->in)
		return g->in;
	eddy_free(g->in);
	size_t n = size < (64u << 10) - 16 ? (64u << 10) - 16 : size;
	if (n < g->in_cap * 2)
		n = g->in_cap * 2;
	n = eddy__good_size(n);
	g->in = (uint8_t *)eddy_malloc(n);
	if (!g->in && n > size) {
		n = size;
		g->in = (uint8_t *)eddy_malloc(n);
	}
	g->in_cap = g->in ? n : 0;
	return g->in;
}

#if defined(__wasm__)
/*
 * eddy__enter starts a call on the n bytes at ptr: it checks that they lie in
 * the eddy_alloc region and resets the per-call state. The host writes
 * envelopes only into that region (ABI.md 6.5), so anything else is refused
 * (BAD_ENVELOPE) rather than read through an unchecked pointer.
 */
static EDDY__NOINLINE bool eddy__enter(uint32_t ptr, uint32_t n)
{
	eddy__globals_t *g = &eddy__g;
	uint32_t base = (uint32_t)(uintptr_t)g->in;
	g->out.len = 0;
	eddy__before_handler();
	if (n != 0 && (!g->in || ptr < base || (uint64_t)(ptr - base) + n > g->in_cap)) {
		static const char msg[] = "input is not inside the eddy_alloc region";
		eddy__host_error(EDDY_BAD_ENVELOPE, msg, sizeof msg - 1);
		return false;
	}
	return true;
}

/* eddy__leave ends a call of export e: it packs the answer as
 * (ptr << 32) | len, or reports a failure and returns -code. */
static EDDY__NOINLINE int64_t eddy__leave(int e, bool ok)
{
	if (!ok)
		return -(int64_t)eddy__report(e);
	return (int64_t)((uint64_t)(uintptr_t)eddy__g.out.buf << 32 | (uint64_t)eddy__g.out.len);
}

/* eddy__run calls export e on the n bytes at ptr. It is inlined in every
 * export, where e is a constant, so each export holds only its own kind. */
static inline __attribute__((always_inline)) int64_t eddy__run(const eddy_module_t *m, int e, uint32_t ptr,
								 uint32_t n)
{
	if (!eddy__enter(ptr, n))
		return -EDDY_BAD_ENVELOPE;
	return eddy__leave(e, eddy__dispatch(m, e, (const uint8_t *)(uintptr_t)ptr, n));
}

#define EDDY__EXPORT(name) __attribute__((export_name(name), visibility("hidden")))
#define EDDY__KIND_EXPORT(name, fn, e)                                                                   \
	EDDY__EXPORT(name) int64_t fn(int32_t ptr, int32_t len)                                          \
	{                                                                                                \
		return eddy__run(&eddy__module, (e), (uint32_t)ptr, (uint32_t)len);                      \
	}

#define EDDY__EXPORTS                                                                                    \
	EDDY__EXPORT("eddy_abi_v1") void eddy__export_abi_v1(void) {}                                    \
	EDDY__EXPORT("eddy_alloc") int32_t eddy__export_alloc(int32_t size)                              \
	{                                                                                                \
		return size < 0 ? 0 : (int32_t)(uintptr_t)eddy__alloc((size_t)(uint32_t)size);          \
	}                                                                                                \
	EDDY__EXPORT("eddy_manifest") int64_t eddy__export_manifest(void)                                \
	{                                                                                                \
		return eddy__run(&eddy__module, EDDY__EXP_MANIFEST, 0, 0);                               \
	}                                                                                                \
	EDDY__KIND_EXPORT("eddy_process", eddy__export_process, EDDY__EXP_PROCESS)                       \
	EDDY__KIND_EXPORT("eddy_agg_init", eddy__export_agg_init, EDDY__EXP_AGG_INIT)                    \
	EDDY__KIND_EXPORT("eddy_agg_add", eddy__export_agg_add, EDDY__EXP_AGG_ADD)                       \
	EDDY__KIND_EXPORT("eddy_agg_merge", eddy__export_agg_merge, EDDY__EXP_AGG_MERGE)                 \
	EDDY__KIND_EXPORT("eddy_agg_result", eddy__export_agg_result, EDDY__EXP_AGG_RESULT)              \
	EDDY__KIND_EXPORT("eddy_join", eddy__export_join, EDDY__EXP_JOIN)                                \
	EDDY__KIND_EXPORT("eddy_key", eddy__export_key, EDDY__EXP_KEY)                                   \
	EDDY__KIND_EXPORT("eddy_timestamp", eddy__export_timestamp, EDDY__EXP_TIMESTAMP)                 \
	EDDY__KIND_EXPORT("eddy_timer", eddy__export_timer, EDDY__EXP_TIMER)

#else /* native */

/*
 * eddy_call_module runs the export called name (e.g. "eddy_process") of
 * module m on the input envelope in[0..len), as the host would: the input is
 * copied into the eddy_alloc region first. It returns 0 and the answer in
 * *out (valid until the next call), or the code of a call-level failure,
 * whose reason eddy_test_last_error returns. Native builds only.
 */
static inline int eddy_call_module(const eddy_module_t *m, const char *name, const void *in, size_t len,
				   const uint8_t **out, size_t *out_len)
{
	int e = 0;
	while (e < EDDY__EXP_COUNT && strcmp(eddy__export_name(e), name) != 0)
		e++;
	*out = 0;
	*out_len = 0;
	if (e == EDDY__EXP_COUNT) {
		static const char msg[] = "no such export";
		eddy__host_error(EDDY_UNSUPPORTED, msg, sizeof msg - 1);
		return EDDY_UNSUPPORTED;
	}
	uint8_t *region = eddy__alloc(len);
	if (!region)
		eddy__oom();
	if (len)
		memcpy(region, in, len);
	int code = eddy__invoke(m, e, region, len);
	if (code == 0) {
		*out = eddy__g.out.buf;
		*out_len = eddy__g.out.len;
	}
	return code;
}

/* Native builds: EDDY_MODULE defines eddy_call and eddy_module, in place of
 * the Wasm exports. */
#define EDDY__EXPORTS                                                                                    \
	int eddy_call(const char *name, const void *in, size_t len, const uint8_t **out, size_t *out_len) \
	{                                                                                                \
		return eddy_call_module(&eddy__module, name, in, len, out, out_len);                     \
	}                                                                                                \
	const eddy_module_t *eddy_module(void) { return &eddy__module; }

/* eddy_call runs an export of the program's module (the one EDDY_MODULE
 * defines); see eddy_call_module. Native builds only. */
int eddy_call(const char *name, const void *in, size_t len, const uint8_t **out, size_t *out_len);
/* eddy_module returns the program's module. Native builds only. */
const eddy_module_t *eddy_module(void);

#endif

/*
 * EDDY_MODULE(...) defines the function: its arguments are the fields of an
 * eddy_module_t as designated initialisers, and it defines the module's
 * exports (eddy_abi_v1, eddy_alloc, eddy_manifest and every kind's). Use it
 * once per module, at file scope:
 *
 *     EDDY_MODULE(.name = "stats", .version = "1.0.0",
 *                 .aggregate = {.init = initial, .add = add, .result = result});
 */
#define EDDY_MODULE(...)                                                                                 \
	static const eddy_module_t eddy__module = {__VA_ARGS__};                                         \
	EDDY__EXPORTS                                                                                    \
	typedef int eddy__module_defined_once

/* ======================================================================== */
/* Native stand-ins for the host */

#if !defined(__wasm__)

/* State modes of the native state store: working, none (-2), failing (-3). */
enum { EDDY_TEST_STATE_OK, EDDY_TEST_STATE_NONE, EDDY_TEST_STATE_FAILING };

typedef struct eddy__kv {
	struct eddy__kv *next;
	uint8_t *key, *val;
	size_t klen, vlen;
	int64_t count;
} eddy__kv_t;

/* A native stand-in timer: key (an empty one for a null key), domain, time. */
typedef struct eddy__tm {
	struct eddy__tm *next;
	uint8_t *key;
	size_t klen;
	int32_t domain;
	int64_t at;
} eddy__tm_t;

typedef struct eddy__native {
	eddy__kv_t *state;
	eddy__kv_t *counters;
	eddy__kv_t *config; /* the step's config entries */
	eddy__tm_t *timers;
	int64_t now[2];   /* what time_now answers, once set */
	bool now_set[2];
	int state_mode;
	int err_code;
	char *err_msg;
	void (*log)(int level, const char *msg, size_t len);
} eddy__native_t;

EDDY__WEAK eddy__native_t eddy__native;

static inline eddy__kv_t **eddy__kv_find(eddy__kv_t **list, const void *k, size_t kn)
{
	for (; *list; list = &(*list)->next)
		if ((*list)->klen == kn && (kn == 0 || memcmp((*list)->key, k, kn) == 0))
			return list;
	return list;
}

static inline uint8_t *eddy__dup(const void *p, size_t n)
{
	uint8_t *q = (uint8_t *)malloc(n ? n : 1);
	if (!q)
		abort();
	if (n)
		memcpy(q, p, n);
	return q;
}

static inline void eddy__host_log(int32_t level, const void *p, size_t n)
{
	static const char *const names[] = {"DEBUG", "INFO", "WARN", "ERROR"};
	if (eddy__native.log) {
		eddy__native.log(level, (const char *)p, n);
		return;
	}
	fprintf(stderr, "eddy %s %.*s\n", level >= 0 && level <= 3 ? names[level] : "LEVEL?", (int)n,
		(const char *)p);
}

static inline void eddy__host_error(int32_t code, const void *p, size_t n)
{
	free(eddy__native.err_msg);
	eddy__native.err_msg = (char *)malloc(n + 1);
	if (!eddy__native.err_msg)
		abort();
	if (n)
		memcpy(eddy__native.err_msg, p, n);
	eddy__native.err_msg[n] = 0;
	eddy__native.err_code = code;
}

static inline int32_t eddy__host_state_get(const void *k, size_t kn, void *v, size_t vcap)
{
	if (eddy__native.state_mode == EDDY_TEST_STATE_NONE)
		return -2;
	if (eddy__native.state_mode == EDDY_TEST_STATE_FAILING)
		return -3;
	eddy__kv_t *e = *eddy__kv_find(&eddy__native.state, k, kn);
	if (!e)
		return -1;
	if (e->vlen <= vcap && e->vlen)
		memcpy(v, e->val, e->vlen);
	return (int32_t)e->vlen;
}

static inline int32_t eddy__host_state_put(const void *k, size_t kn, const void *v, size_t vn)
{
	if (eddy__native.state_mode != EDDY_TEST_STATE_OK)
		return eddy__native.state_mode == EDDY_TEST_STATE_NONE ? -2 : -3;
	eddy__kv_t **pe = eddy__kv_find(&eddy__native.state, k, kn), *e = *pe;
	if (!e) {
		e = (eddy__kv_t *)calloc(1, sizeof *e);
		if (!e)
			abort();
		e->key = eddy__dup(k, kn);
		e->klen = kn;
		*pe = e;
	} else {
		free(e->val);
	}
	e->val = eddy__dup(v, vn);
	e->vlen = vn;
	return 0;
}

static inline int32_t eddy__host_state_delete(const void *k, size_t kn)
{
	if (eddy__native.state_mode != EDDY_TEST_STATE_OK)
		return eddy__native.state_mode == EDDY_TEST_STATE_NONE ? -2 : -3;
	eddy__kv_t **pe = eddy__kv_find(&eddy__native.state, k, kn), *e = *pe;
	if (e) {
		*pe = e->next;
		free(e->key);
		free(e->val);
		free(e);
	}
	return 0;
}

static inline void eddy__host_counter_add(const void *p, size_t n, int64_t delta)
{
	eddy__kv_t **pe = eddy__kv_find(&eddy__native.counters, p, n), *e = *pe;
	if (!e) {
		e = (eddy__kv_t *)calloc(1, sizeof *e);
		if (!e)
			abort();
		e->key = eddy__dup(p, n);
		e->klen = n;
		*pe = e;
	}
	e->count += delta;
}

/* The native timers follow the state mode: -2 without a store, -3 when it
 * fails; -3 for an unknown domain too. */
static inline int32_t eddy__native_timer_rc(int32_t domain)
{
	if (eddy__native.state_mode != EDDY_TEST_STATE_OK)
		return eddy__native.state_mode == EDDY_TEST_STATE_NONE ? -2 : -3;
	return domain == 0 || domain == 1 ? 0 : -3;
}

static inline eddy__tm_t **eddy__tm_find(const void *k, size_t kn, int32_t domain, int64_t at)
{
	eddy__tm_t **p = &eddy__native.timers;
	for (; *p; p = &(*p)->next)
		if ((*p)->domain == domain && (*p)->at == at && (*p)->klen == kn &&
		    (kn == 0 || memcmp((*p)->key, k, kn) == 0))
			break;
	return p;
}

static inline int32_t eddy__host_timer_set(const void *k, size_t kn, int32_t domain, int64_t at)
{
	int32_t rc = eddy__native_timer_rc(domain);
	if (rc)
		return rc;
	eddy__tm_t **pt = eddy__tm_find(k, kn, domain, at);
	if (*pt)
		return 0;
	eddy__tm_t *t = (eddy__tm_t *)calloc(1, sizeof *t);
	if (!t)
		abort();
	t->key = eddy__dup(k, kn);
	t->klen = kn;
	t->domain = domain;
	t->at = at;
	*pt = t;
	return 0;
}

static inline int32_t eddy__host_timer_delete(const void *k, size_t kn, int32_t domain, int64_t at)
{
	int32_t rc = eddy__native_timer_rc(domain);
	if (rc)
		return rc;
	eddy__tm_t **pt = eddy__tm_find(k, kn, domain, at), *t = *pt;
	if (t) {
		*pt = t->next;
		free(t->key);
		free(t);
	}
	return 0;
}

static inline int64_t eddy__host_time_now(int32_t domain)
{
	if (eddy__native.state_mode == EDDY_TEST_STATE_NONE || (domain != 0 && domain != 1) ||
	    !eddy__native.now_set[domain])
		return EDDY_NO_TIME;
	return eddy__native.now[domain];
}

static inline int32_t eddy__host_config_get(const void *n, size_t nn, void *v, size_t vcap)
{
	eddy__kv_t *e = *eddy__kv_find(&eddy__native.config, n, nn);
	if (!e)
		return -1;
	if (e->vlen <= vcap && e->vlen)
		memcpy(v, e->val, e->vlen);
	return (int32_t)e->vlen;
}

/* eddy_test_set_state_mode makes the native state store and timers work
 * (EDDY_TEST_STATE_OK, the default), be absent (EDDY_TEST_STATE_NONE: the
 * host functions return -2, and eddy_current_time EDDY_NO_TIME) or fail
 * (EDDY_TEST_STATE_FAILING: -3). */
static inline void eddy_test_set_state_mode(int mode) { eddy__native.state_mode = mode; }

/* eddy_test_reset empties the native state store and counters, forgets the
 * timers, the current times, the config entries and the last error, and
 * sets the state mode back to EDDY_TEST_STATE_OK. */
static inline void eddy_test_reset(void)
{
	while (eddy__native.timers) {
		eddy__tm_t *next = eddy__native.timers->next;
		free(eddy__native.timers->key);
		free(eddy__native.timers);
		eddy__native.timers = next;
	}
	eddy__native.now_set[0] = eddy__native.now_set[1] = false;
	eddy__kv_t *lists[3] = {eddy__native.state, eddy__native.counters, eddy__native.config};
	for (int i = 0; i < 3; i++)
		while (lists[i]) {
			eddy__kv_t *next = lists[i]->next;
			free(lists[i]->key);
			free(lists[i]->val);
			free(lists[i]);
			lists[i] = next;
		}
	eddy__native.state = eddy__native.counters = eddy__native.config = 0;
	eddy__native.state_mode = EDDY_TEST_STATE_OK;
	free(eddy__native.err_msg);
	eddy__native.err_msg = 0;
	eddy__native.err_code = 0;
}

/* eddy_test_counter returns the value of the counter called name. */
static inline int64_t eddy_test_counter(const char *name)
{
	eddy__kv_t *e = *eddy__kv_find(&eddy__native.counters, name, strlen(name));
	return e ? e->count : 0;
}

/* eddy_test_state returns the value stored under key in the native state
 * store (a view, valid until it changes), or a null. */
static inline eddy_bytes_t eddy_test_state(eddy_bytes_t key)
{
	eddy__kv_t *e = *eddy__kv_find(&eddy__native.state, key.ptr, key.len);
	return e ? eddy_bytes(e->val, e->vlen) : EDDY_NULL;
}

/* eddy_test_set_state stores value under key in the native state store. */
static inline void eddy_test_set_state(eddy_bytes_t key, eddy_bytes_t value)
{
	int mode = eddy__native.state_mode;
	eddy__native.state_mode = EDDY_TEST_STATE_OK;
	eddy__host_state_put(key.ptr, key.len, value.ptr ? value.ptr : (const uint8_t *)"", value.len);
	eddy__native.state_mode = mode;
}

/* eddy_test_set_config sets the step's config entry name to value, which
 * eddy_config_get then reads (the stand-in copies both); a null value
 * removes the entry. There are none until set, and eddy_test_reset removes
 * them all. A function that reads an entry once keeps what it read: set
 * the entries before its first call. */
static inline void eddy_test_set_config(const char *name, eddy_bytes_t value)
{
	size_t nn = strlen(name);
	eddy__kv_t **pe = eddy__kv_find(&eddy__native.config, name, nn), *e = *pe;
	if (!value.ptr) {
		if (e) {
			*pe = e->next;
			free(e->key);
			free(e->val);
			free(e);
		}
		return;
	}
	if (!e) {
		e = (eddy__kv_t *)calloc(1, sizeof *e);
		if (!e)
			abort();
		e->key = eddy__dup(name, nn);
		e->klen = nn;
		*pe = e;
	} else {
		free(e->val);
	}
	e->val = eddy__dup(value.ptr, value.len);
	e->vlen = value.len;
}

/* eddy_test_set_current_time sets what eddy_current_time answers for domain
 * (EDDY_NO_TIME until then). */
static inline void eddy_test_set_current_time(eddy_time_domain_t domain, int64_t now)
{
	int d = (int)domain & 1;
	eddy__native.now[d] = now;
	eddy__native.now_set[d] = true;
}

/* eddy_test_has_timer reports whether the native timers hold the timer for
 * key at time at in domain (a null key is an empty one). */
static inline bool eddy_test_has_timer(eddy_bytes_t key, eddy_time_domain_t domain, int64_t at)
{
	return *eddy__tm_find(key.ptr, key.len, (int32_t)domain, at) != 0;
}

/*
 * eddy_test_timers writes the timers the function has set and not deleted
 * into out[0..max), in order of time, then domain, then key, and returns
 * how many there are (which may be more than max). Keys are views into the
 * stand-in's memory, valid until the timers change. The stand-ins never
 * fire timers: a test fires them with eddy_test_fire.
 */
static inline size_t eddy_test_timers(eddy_timer_t *out, size_t max)
{
	size_t n = 0;
	for (const eddy__tm_t *t = eddy__native.timers; t; t = t->next, n++) {
		eddy_timer_t x = {eddy_bytes(t->key, t->klen), t->at, (eddy_time_domain_t)t->domain};
		size_t j = n < max ? n : max;
		/* Insertion sort into out[0..j]. */
		while (j > 0) {
			const eddy_timer_t *p = &out[j - 1];
			size_t l = p->key.len < x.key.len ? p->key.len : x.key.len;
			int c = l ? memcmp(p->key.ptr, x.key.ptr, l) : 0;
			bool after = p->time != x.time ? p->time > x.time
				     : p->domain != x.domain ? (int32_t)p->domain > (int32_t)x.domain
				     : c != 0 ? c > 0 : p->key.len > x.key.len;
			if (!after)
				break;
			if (j < max)
				out[j] = *p;
			j--;
		}
		if (j < max)
			out[j] = x;
	}
	return n;
}

/* eddy_test_last_error returns the reason the last failing call gave to the
 * host's error function ("" if none) and its code in *code (if not NULL). */
static inline const char *eddy_test_last_error(int *code)
{
	if (code)
		*code = eddy__native.err_code;
	return eddy__native.err_msg ? eddy__native.err_msg : "";
}

/* eddy_test_set_log sends log lines to fn instead of standard error (NULL:
 * back to standard error). */
static inline void eddy_test_set_log(void (*fn)(int level, const char *msg, size_t len))
{
	eddy__native.log = fn;
}

/* EDDY_TEST_MAX_RECORDS bounds the output records of one input record that
 * eddy_test_process decodes; EDDY_TEST_MAX_HEADERS the output headers of a
 * whole call. */
#define EDDY_TEST_MAX_RECORDS 64
#define EDDY_TEST_MAX_HEADERS 1024

/* eddy_test_result_t is the answer of a process call for one input record,
 * decoded by eddy_test_process, or of a timer call for one timer, decoded by
 * eddy_test_fire. */
typedef struct eddy_test_result {
	int code;           /* EDDY_OK, or the failure code */
	char reason[256];   /* the failure reason, NUL-terminated (cut at 255 bytes) */
	size_t records_len; /* the number of output records */
	/* The output records: views into the output envelope, valid until the
	 * next call. An inherited (nil) timestamp is the input's, as the host
	 * sees it. */
	eddy_record_t records[EDDY_TEST_MAX_RECORDS];
} eddy_test_result_t;

EDDY__WEAK eddy_header_t eddy__test_headers[EDDY_TEST_MAX_HEADERS];
EDDY__WEAK eddy_mp_writer_t eddy__test_in;

static inline int eddy__test_decode(const uint8_t *out, size_t out_len, size_t n, const eddy_record_t *recs,
				    const eddy_timer_t *timers, eddy_test_result_t *res);

/*
 * eddy_test_process runs the program's process handler (the module of
 * EDDY_MODULE) on the n records at in, as one batch, through the envelopes
 * the host sends, and decodes the answer into res[0..n). It returns 0, or the
 * code of a call-level failure (see eddy_test_last_error), or -1 if the
 * answer does not decode (more records or headers than the limits above).
 * Native builds only:
 *
 *     eddy_record_t in = {.key = eddy_cstr("k"), .value = eddy_cstr("hello")};
 *     eddy_test_result_t res;
 *     assert(eddy_test_process(&in, 1, &res) == 0 && res.code == EDDY_OK);
 *     assert(eddy_bytes_equal_cstr(res.records[0].value, "HELLO"));
 */
static inline int eddy_test_process(const eddy_record_t *in, size_t n, eddy_test_result_t *res)
{
	eddy_mp_writer_t *w = &eddy__test_in;
	w->len = 0;
	eddy_mp_write_array(w, (uint32_t)n);
	for (size_t i = 0; i < n; i++) {
		const eddy_record_t *r = &in[i];
		eddy_mp_write_array(w, 4);
		eddy_mp_write_bytes(w, r->key);
		eddy_mp_write_bytes(w, r->value);
		eddy_mp_write_int(w, r->timestamp);
		size_t nh = r->headers ? r->headers_len : 0;
		eddy_mp_write_array(w, (uint32_t)nh);
		for (size_t j = 0; j < nh; j++) {
			eddy_mp_write_array(w, 2);
			eddy_mp_write_str(w, (const char *)r->headers[j].name.ptr, r->headers[j].name.len);
			eddy_mp_write_bytes(w, r->headers[j].value);
		}
	}
	const uint8_t *out;
	size_t out_len;
	int code = eddy_call("eddy_process", w->buf, w->len, &out, &out_len);
	if (code)
		return code;
	return eddy__test_decode(out, out_len, n, in, 0, res);
}

/*
 * eddy_test_fire runs the program's timer handler on the n timers at in, as
 * one batch, as the host does when they fire, and decodes the answer into
 * res[0..n) as eddy_test_process does; an output record's inherited (nil)
 * timestamp is its timer's time. It does not delete the timers from the
 * native stand-ins (the host deletes a timer as it fires; a test may call
 * eddy_test_reset). Native builds only:
 *
 *     eddy_timer_t t = {.key = eddy_cstr("k"), .time = 2000, .domain = EDDY_EVENT_TIME};
 *     eddy_test_result_t res;
 *     assert(eddy_test_fire(&t, 1, &res) == 0 && res.code == EDDY_OK);
 */
static inline int eddy_test_fire(const eddy_timer_t *in, size_t n, eddy_test_result_t *res)
{
	eddy_mp_writer_t *w = &eddy__test_in;
	w->len = 0;
	eddy_mp_write_array(w, (uint32_t)n);
	for (size_t i = 0; i < n; i++) {
		eddy_mp_write_array(w, 3);
		eddy_mp_write_bytes(w, in[i].key);
		eddy_mp_write_int(w, in[i].time);
		eddy_mp_write_int(w, (int32_t)in[i].domain);
	}
	const uint8_t *out;
	size_t out_len;
	int code = eddy_call("eddy_timer", w->buf, w->len, &out, &out_len);
	if (code)
		return code;
	return eddy__test_decode(out, out_len, n, 0, in, res);
}

/* eddy__test_decode decodes the answer [Result × n], body [Record × k], of
 * a process call on the records recs or a timer call on the timers timers
 * into res[0..n). */
static inline int eddy__test_decode(const uint8_t *out, size_t out_len, size_t n, const eddy_record_t *recs,
				    const eddy_timer_t *timers, eddy_test_result_t *res)
{
	eddy_mp_reader_t rd;
	eddy_mp_reader_init(&rd, out, out_len);
	if (eddy_mp_read_array(&rd) != n)
		return -1;
	size_t used = 0;
	for (size_t i = 0; i < n; i++) {
		eddy_test_result_t *x = &res[i];
		x->records_len = 0;
		x->reason[0] = 0;
		if (eddy_mp_read_array(&rd) != 2)
			return -1;
		x->code = (int)eddy_mp_read_int(&rd);
		if (x->code != EDDY_OK) {
			eddy_bytes_t why = eddy_mp_read_str(&rd);
			size_t l = why.len < sizeof x->reason ? why.len : sizeof x->reason - 1;
			if (l)
				memcpy(x->reason, why.ptr, l);
			x->reason[l] = 0;
			continue;
		}
		uint32_t k = eddy_mp_read_array(&rd);
		if (k > EDDY_TEST_MAX_RECORDS)
			return -1;
		x->records_len = k;
		for (uint32_t j = 0; j < k; j++) {
			eddy_record_t *o = &x->records[j];
			if (eddy_mp_read_array(&rd) != 4)
				return -1;
			o->key = eddy_mp_read_bytes(&rd);
			o->value = eddy_mp_read_bytes(&rd);
			if (eddy_mp_is_nil(&rd)) {
				eddy_mp_read_nil(&rd);
				o->timestamp = recs ? recs[i].timestamp : timers[i].time;
			} else {
				o->timestamp = eddy_mp_read_int(&rd);
			}
			uint32_t h = eddy_mp_read_array(&rd);
			if (used + h > EDDY_TEST_MAX_HEADERS)
				return -1;
			o->headers = h ? &eddy__test_headers[used] : 0;
			o->headers_len = h;
			for (uint32_t m = 0; m < h; m++, used++) {
				if (eddy_mp_read_array(&rd) != 2)
					return -1;
				eddy__test_headers[used].name = eddy_mp_read_str(&rd);
				eddy__test_headers[used].value = eddy_mp_read_bytes(&rd);
			}
		}
	}
	return rd.err || eddy_mp_left(&rd) ? -1 : 0;
}

#endif /* !__wasm__ */

#ifdef __cplusplus
}
#endif

#endif /* EDDY_H */
