/*
 * eddy_msgpack.h - the msgpack subset of the Eddy guest ABI (abi/ABI.md,
 * section 5.1), header-only, for the C guest SDK.
 *
 * The subset is nil, bool, integers of every width, str, bin, arrays and
 * maps; floats and ext types are not part of it. This header has no
 * dependencies beyond <stddef.h>, <stdint.h> and <stdbool.h> and can be used
 * on its own (eddy.h includes it).
 *
 * Writing: an eddy_mp_writer_t appends values in their shortest form to a
 * buffer it grows with EDDY_MP_REALLOC (eddy.h sets it to eddy_realloc; on
 * its own it defaults to the C library's realloc). A writer that cannot grow
 * calls EDDY_MP_OOM(), which traps by default: in a guest the host then
 * reports the call as out of memory.
 *
 *     eddy_mp_writer_t w = {0};
 *     eddy_mp_write_array(&w, 2);
 *     eddy_mp_write_int(&w, 0);
 *     eddy_mp_write_bin(&w, "hi", 2);
 *     ... w.buf[0 .. w.len) ...
 *
 * Reading: an eddy_mp_reader_t decodes from a byte range. Byte results are
 * views into the input (eddy_bytes_t), never copies. The reader keeps its
 * first error ("sticky"): after an error every read returns a zero value and
 * consumes nothing, so a decoder can read a whole structure and check
 * r.err once.
 *
 *     eddy_mp_reader_t r;
 *     eddy_mp_reader_init(&r, buf, len);
 *     uint32_t n = eddy_mp_read_array(&r);
 *     int64_t code = eddy_mp_read_int(&r);
 *     eddy_bytes_t body = eddy_mp_read_bytes(&r);
 *     if (r.err) ... eddy_mp_error_string(r.err) ...
 *
 * Nothing here is thread-safe; a Wasm instance is single-threaded.
 */
#ifndef EDDY_MSGPACK_H
#define EDDY_MSGPACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef EDDY_BYTES_DEFINED
#define EDDY_BYTES_DEFINED
/*
 * eddy_bytes_t is a view of bytes owned by someone else: a key, a value, a
 * header value, a state value. A NULL ptr is a null (Kafka's null key or
 * tombstone value), which is not the same as an empty value (ptr non-NULL,
 * len 0); the SDK keeps the difference in both directions.
 */
typedef struct eddy_bytes {
	const uint8_t *ptr;
	size_t len;
} eddy_bytes_t;
#endif

/* Format bytes of the subset. */
enum {
	EDDY_MP_NIL = 0xc0,
	EDDY_MP_FALSE = 0xc2,
	EDDY_MP_TRUE = 0xc3,
	EDDY_MP_BIN8 = 0xc4,
	EDDY_MP_BIN16 = 0xc5,
	EDDY_MP_BIN32 = 0xc6,
	EDDY_MP_UINT8 = 0xcc,
	EDDY_MP_UINT16 = 0xcd,
	EDDY_MP_UINT32 = 0xce,
	EDDY_MP_UINT64 = 0xcf,
	EDDY_MP_INT8 = 0xd0,
	EDDY_MP_INT16 = 0xd1,
	EDDY_MP_INT32 = 0xd2,
	EDDY_MP_INT64 = 0xd3,
	EDDY_MP_STR8 = 0xd9,
	EDDY_MP_STR16 = 0xda,
	EDDY_MP_STR32 = 0xdb,
	EDDY_MP_ARRAY16 = 0xdc,
	EDDY_MP_ARRAY32 = 0xdd,
	EDDY_MP_MAP16 = 0xde,
	EDDY_MP_MAP32 = 0xdf
};

/* Reader errors (eddy_mp_reader_t.err). 0 is no error. */
enum {
	EDDY_MP_OK = 0,
	EDDY_MP_ERR_SHORT = 1, /* the input ends inside a value, or a count exceeds what is left */
	EDDY_MP_ERR_TYPE = 2,  /* the value is not of the type read */
	EDDY_MP_ERR_RANGE = 3, /* a uint64 above INT64_MAX read as int64 */
	EDDY_MP_ERR_DEPTH = 4, /* nesting deeper than EDDY_MP_MAX_DEPTH in skip */
	EDDY_MP_ERR_SHAPE = 5  /* set by decoders: a structure has the wrong number of elements */
};

/* EDDY_MP_MAX_DEPTH bounds the nesting eddy_mp_skip accepts, so hostile
 * input cannot exhaust the stack. */
#define EDDY_MP_MAX_DEPTH 64

#ifndef EDDY_MP_REALLOC
#include <stdlib.h>
#define EDDY_MP_REALLOC(p, n) realloc((p), (n))
#endif

#ifndef EDDY_MP_OOM
#define EDDY_MP_OOM() __builtin_trap()
#endif

/* EDDY_MP_GOOD_SIZE(n) rounds a buffer size up to what the allocator gives
 * anyway (eddy.h uses it to fill its power-of-two blocks). */
#ifndef EDDY_MP_GOOD_SIZE
#define EDDY_MP_GOOD_SIZE(n) (n)
#endif

/* ------------------------------------------------------------------------ */
/* Writer */

/*
 * eddy_mp_writer_t appends msgpack to buf[0..len), growing buf with
 * EDDY_MP_REALLOC. A zero value is an empty writer. Reset it with
 * w->len = 0 to reuse the buffer.
 */
typedef struct eddy_mp_writer {
	uint8_t *buf;
	size_t len;
	size_t cap;
} eddy_mp_writer_t;

/* eddy_mp__grow makes room for need more bytes (slow path). */
static __attribute__((noinline, unused)) void eddy_mp__grow(eddy_mp_writer_t *w, size_t need)
{
	size_t want = w->len + need;
	size_t cap = w->cap ? w->cap * 2 : 4096;
	if (want < w->len)
		EDDY_MP_OOM();
	while (cap < want) {
		if (cap > (SIZE_MAX >> 1))
			EDDY_MP_OOM();
		cap *= 2;
	}
	cap = EDDY_MP_GOOD_SIZE(cap);
	uint8_t *b = (uint8_t *)EDDY_MP_REALLOC(w->buf, cap);
	if (!b)
		EDDY_MP_OOM();
	w->buf = b;
	w->cap = cap;
}

/*
 * eddy_mp_reserve makes room for n more bytes and returns where they go:
 * the caller writes up to n bytes there and adds what it wrote to w->len.
 */
static inline uint8_t *eddy_mp_reserve(eddy_mp_writer_t *w, size_t n)
{
	if (__builtin_expect(w->cap - w->len < n, 0))
		eddy_mp__grow(w, n);
	return w->buf + w->len;
}

static inline void eddy_mp__be16(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline void eddy_mp__be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static inline void eddy_mp__be64(uint8_t *p, uint64_t v)
{
	eddy_mp__be32(p, (uint32_t)(v >> 32));
	eddy_mp__be32(p + 4, (uint32_t)v);
}

/* eddy_mp_write_raw appends n bytes as they are (already encoded msgpack). */
static inline void eddy_mp_write_raw(eddy_mp_writer_t *w, const void *p, size_t n)
{
	uint8_t *o = eddy_mp_reserve(w, n);
	if (n)
		__builtin_memcpy(o, p, n);
	w->len += n;
}

/* eddy_mp_write_byte appends one byte: a format byte or a fixint. */
static inline void eddy_mp_write_byte(eddy_mp_writer_t *w, uint8_t c)
{
	*eddy_mp_reserve(w, 1) = c;
	w->len++;
}

/* eddy_mp_write_nil appends nil. */
static inline void eddy_mp_write_nil(eddy_mp_writer_t *w) { eddy_mp_write_byte(w, EDDY_MP_NIL); }

/* eddy_mp_write_bool appends a bool. */
static inline void eddy_mp_write_bool(eddy_mp_writer_t *w, bool v)
{
	eddy_mp_write_byte(w, v ? EDDY_MP_TRUE : EDDY_MP_FALSE);
}

/* eddy_mp__put_uint writes v in its shortest form at o and returns its size
 * (at most 9 bytes). */
static inline size_t eddy_mp__put_uint(uint8_t *o, uint64_t v)
{
	if (v <= 0x7f) {
		o[0] = (uint8_t)v;
		return 1;
	}
	if (v <= 0xff) {
		o[0] = EDDY_MP_UINT8;
		o[1] = (uint8_t)v;
		return 2;
	}
	if (v <= 0xffff) {
		o[0] = EDDY_MP_UINT16;
		eddy_mp__be16(o + 1, (uint32_t)v);
		return 3;
	}
	if (v <= 0xffffffffu) {
		o[0] = EDDY_MP_UINT32;
		eddy_mp__be32(o + 1, (uint32_t)v);
		return 5;
	}
	o[0] = EDDY_MP_UINT64;
	eddy_mp__be64(o + 1, v);
	return 9;
}

/* eddy_mp__put_int writes v in its shortest form at o and returns its size
 * (at most 9 bytes). Non-negative values use the unsigned formats, as
 * msgpack recommends. */
static inline size_t eddy_mp__put_int(uint8_t *o, int64_t v)
{
	if (v >= 0)
		return eddy_mp__put_uint(o, (uint64_t)v);
	if (v >= -32) {
		o[0] = (uint8_t)v;
		return 1;
	}
	if (v >= INT8_MIN) {
		o[0] = EDDY_MP_INT8;
		o[1] = (uint8_t)v;
		return 2;
	}
	if (v >= INT16_MIN) {
		o[0] = EDDY_MP_INT16;
		eddy_mp__be16(o + 1, (uint32_t)v);
		return 3;
	}
	if (v >= INT32_MIN) {
		o[0] = EDDY_MP_INT32;
		eddy_mp__be32(o + 1, (uint32_t)v);
		return 5;
	}
	o[0] = EDDY_MP_INT64;
	eddy_mp__be64(o + 1, (uint64_t)v);
	return 9;
}

/* eddy_mp_write_int appends a signed integer in its shortest form. */
static inline void eddy_mp_write_int(eddy_mp_writer_t *w, int64_t v)
{
	w->len += eddy_mp__put_int(eddy_mp_reserve(w, 9), v);
}

/* eddy_mp_write_uint appends an unsigned integer in its shortest form. */
static inline void eddy_mp_write_uint(eddy_mp_writer_t *w, uint64_t v)
{
	w->len += eddy_mp__put_uint(eddy_mp_reserve(w, 9), v);
}

/* eddy_mp__put_len writes the header of a str/bin/array/map of n elements:
 * fix (or 0 when the family has no fix form) for n <= fixmax, else the 8
 * (if f8 is not 0), 16 or 32 bit form. Returns its size. */
static inline size_t eddy_mp__put_head(uint8_t *o, size_t n, uint8_t fix, size_t fixmax, uint8_t f8,
				       uint8_t f16, uint8_t f32)
{
	if (fix && n <= fixmax) {
		o[0] = (uint8_t)(fix | n);
		return 1;
	}
	if (f8 && n <= 0xff) {
		o[0] = f8;
		o[1] = (uint8_t)n;
		return 2;
	}
	if (n <= 0xffff) {
		o[0] = f16;
		eddy_mp__be16(o + 1, (uint32_t)n);
		return 3;
	}
	o[0] = f32;
	eddy_mp__be32(o + 1, (uint32_t)n);
	return 5;
}

/* eddy_mp_write_bin appends n bytes at p as bin, or nil when p is NULL. A
 * NULL p is not an empty value: Kafka distinguishes a null key from an empty
 * key. */
static inline void eddy_mp_write_bin(eddy_mp_writer_t *w, const void *p, size_t n)
{
	if (!p) {
		eddy_mp_write_nil(w);
		return;
	}
	uint8_t *o = eddy_mp_reserve(w, n + 5);
	size_t h = eddy_mp__put_head(o, n, 0, 0, EDDY_MP_BIN8, EDDY_MP_BIN16, EDDY_MP_BIN32);
	if (n)
		__builtin_memcpy(o + h, p, n);
	w->len += h + n;
}

/* eddy_mp_write_bytes appends b as bin, or nil when b is null. */
static inline void eddy_mp_write_bytes(eddy_mp_writer_t *w, eddy_bytes_t b)
{
	eddy_mp_write_bin(w, b.ptr, b.len);
}

/* eddy_mp_write_str appends n bytes at s (UTF-8) as str. A NULL s with
 * n == 0 is the empty string. */
static inline void eddy_mp_write_str(eddy_mp_writer_t *w, const char *s, size_t n)
{
	uint8_t *o = eddy_mp_reserve(w, n + 5);
	size_t h = eddy_mp__put_head(o, n, 0xa0, 31, EDDY_MP_STR8, EDDY_MP_STR16, EDDY_MP_STR32);
	if (n)
		__builtin_memcpy(o + h, s, n);
	w->len += h + n;
}

/* eddy_mp_write_cstr appends a NUL-terminated string as str. */
static inline void eddy_mp_write_cstr(eddy_mp_writer_t *w, const char *s)
{
	size_t n = 0;
	while (s[n])
		n++;
	eddy_mp_write_str(w, s, n);
}

/* eddy_mp_write_array appends the header of an array of n elements. */
static inline void eddy_mp_write_array(eddy_mp_writer_t *w, uint32_t n)
{
	w->len += eddy_mp__put_head(eddy_mp_reserve(w, 5), n, 0x90, 15, 0, EDDY_MP_ARRAY16, EDDY_MP_ARRAY32);
}

/* eddy_mp_write_map appends the header of a map of n pairs. */
static inline void eddy_mp_write_map(eddy_mp_writer_t *w, uint32_t n)
{
	w->len += eddy_mp__put_head(eddy_mp_reserve(w, 5), n, 0x80, 15, 0, EDDY_MP_MAP16, EDDY_MP_MAP32);
}

/* ------------------------------------------------------------------------ */
/* Reader */

/*
 * eddy_mp_reader_t reads values from [p, end). start is the beginning of the
 * input, for offsets in error messages. err is the first error met (an
 * EDDY_MP_ERR_* value) and err_at the offset where it was met.
 */
typedef struct eddy_mp_reader {
	const uint8_t *p;
	const uint8_t *end;
	const uint8_t *start;
	int err;
	size_t err_at;
} eddy_mp_reader_t;

/* eddy_mp_reader_init points r at the n bytes at buf and clears its error. */
static inline void eddy_mp_reader_init(eddy_mp_reader_t *r, const void *buf, size_t n)
{
	r->start = r->p = (const uint8_t *)buf;
	r->end = r->p + n;
	r->err = 0;
	r->err_at = 0;
}

/* eddy_mp_left returns the number of bytes not yet consumed. */
static inline size_t eddy_mp_left(const eddy_mp_reader_t *r) { return (size_t)(r->end - r->p); }

/* eddy_mp_offset returns the number of bytes consumed. */
static inline size_t eddy_mp_offset(const eddy_mp_reader_t *r) { return (size_t)(r->p - r->start); }

/* eddy_mp_fail records err (an EDDY_MP_ERR_* value) unless an error is
 * already recorded. Decoders use it for structural problems. */
static inline void eddy_mp_fail(eddy_mp_reader_t *r, int err)
{
	if (!r->err) {
		r->err = err;
		r->err_at = eddy_mp_offset(r);
	}
}

/* eddy_mp_error_string describes a reader error. */
static inline const char *eddy_mp_error_string(int err)
{
	switch (err) {
	case EDDY_MP_OK:
		return "no error";
	case EDDY_MP_ERR_SHORT:
		return "unexpected end of input";
	case EDDY_MP_ERR_TYPE:
		return "unexpected format";
	case EDDY_MP_ERR_RANGE:
		return "uint64 overflows int64";
	case EDDY_MP_ERR_DEPTH:
		return "nesting too deep";
	case EDDY_MP_ERR_SHAPE:
		return "wrong number of elements";
	}
	return "unknown error";
}

/* eddy_mp_peek returns the next format byte without consuming it, or -1 at
 * the end of the input or after an error (without recording an error). */
static inline int eddy_mp_peek(const eddy_mp_reader_t *r)
{
	if (r->err || r->p >= r->end)
		return -1;
	return *r->p;
}

/* eddy_mp__next returns the next format byte, or -1 (recording
 * EDDY_MP_ERR_SHORT at the end of the input). */
static inline int eddy_mp__next(eddy_mp_reader_t *r)
{
	if (r->err)
		return -1;
	if (r->p >= r->end) {
		eddy_mp_fail(r, EDDY_MP_ERR_SHORT);
		return -1;
	}
	return *r->p;
}

static inline uint64_t eddy_mp__load_be(const uint8_t *p, int n)
{
	uint64_t v = 0;
	for (int i = 0; i < n; i++)
		v = v << 8 | p[i];
	return v;
}

/* eddy_mp__int_size returns the payload size of sized integer format c, or
 * 0 if c is not one. */
static inline int eddy_mp__int_size(int c)
{
	switch (c) {
	case EDDY_MP_UINT8:
	case EDDY_MP_INT8:
		return 1;
	case EDDY_MP_UINT16:
	case EDDY_MP_INT16:
		return 2;
	case EDDY_MP_UINT32:
	case EDDY_MP_INT32:
		return 4;
	case EDDY_MP_UINT64:
	case EDDY_MP_INT64:
		return 8;
	}
	return 0;
}

/* eddy_mp_is_nil reports whether the next value is nil, without consuming
 * it. */
static inline bool eddy_mp_is_nil(const eddy_mp_reader_t *r) { return eddy_mp_peek(r) == EDDY_MP_NIL; }

/* eddy_mp_read_nil consumes a nil. */
static inline void eddy_mp_read_nil(eddy_mp_reader_t *r)
{
	int c = eddy_mp__next(r);
	if (c < 0)
		return;
	if (c != EDDY_MP_NIL) {
		eddy_mp_fail(r, EDDY_MP_ERR_TYPE);
		return;
	}
	r->p++;
}

/* eddy_mp_read_bool reads a bool. */
static inline bool eddy_mp_read_bool(eddy_mp_reader_t *r)
{
	int c = eddy_mp__next(r);
	if (c == EDDY_MP_TRUE || c == EDDY_MP_FALSE) {
		r->p++;
		return c == EDDY_MP_TRUE;
	}
	if (c >= 0)
		eddy_mp_fail(r, EDDY_MP_ERR_TYPE);
	return false;
}

/* eddy_mp_read_int reads an integer of any width as int64_t. A uint64 above
 * INT64_MAX is an error (EDDY_MP_ERR_RANGE). */
static inline int64_t eddy_mp_read_int(eddy_mp_reader_t *r)
{
	int c = eddy_mp__next(r);
	if (c < 0)
		return 0;
	if (c <= 0x7f) {
		r->p++;
		return c;
	}
	if (c >= 0xe0) {
		r->p++;
		return (int64_t)c - 256;
	}
	int size = eddy_mp__int_size(c);
	if (!size) {
		eddy_mp_fail(r, EDDY_MP_ERR_TYPE);
		return 0;
	}
	if (eddy_mp_left(r) - 1 < (size_t)size) {
		eddy_mp_fail(r, EDDY_MP_ERR_SHORT);
		return 0;
	}
	uint64_t u = eddy_mp__load_be(r->p + 1, size);
	int64_t v;
	switch (c) {
	case EDDY_MP_UINT64:
		if (u > (uint64_t)INT64_MAX) {
			eddy_mp_fail(r, EDDY_MP_ERR_RANGE);
			return 0;
		}
		v = (int64_t)u;
		break;
	case EDDY_MP_INT8:
		v = (int8_t)u;
		break;
	case EDDY_MP_INT16:
		v = (int16_t)u;
		break;
	case EDDY_MP_INT32:
		v = (int32_t)u;
		break;
	default: /* uint 8/16/32, int64 */
		v = (int64_t)u;
	}
	r->p += 1 + size;
	return v;
}

/* eddy_mp__payload reads the str or bin whose format byte c is next. */
static inline eddy_bytes_t eddy_mp__payload(eddy_mp_reader_t *r, int c)
{
	eddy_bytes_t b = {0, 0};
	size_t left = eddy_mp_left(r), h, n;
	if (c >= 0xa0 && c <= 0xbf) {
		h = 1;
		n = (size_t)(c & 0x1f);
	} else if (c == EDDY_MP_BIN8 || c == EDDY_MP_STR8) {
		h = 2;
	} else if (c == EDDY_MP_BIN16 || c == EDDY_MP_STR16) {
		h = 3;
	} else if (c == EDDY_MP_BIN32 || c == EDDY_MP_STR32) {
		h = 5;
	} else {
		eddy_mp_fail(r, EDDY_MP_ERR_TYPE);
		return b;
	}
	if (left < h) {
		eddy_mp_fail(r, EDDY_MP_ERR_SHORT);
		return b;
	}
	if (h > 1)
		n = (size_t)eddy_mp__load_be(r->p + 1, (int)h - 1);
	if (left - h < n) {
		eddy_mp_fail(r, EDDY_MP_ERR_SHORT);
		return b;
	}
	b.ptr = r->p + h;
	b.len = n;
	r->p += h + n;
	return b;
}

/* eddy_mp_read_bytes reads bin or str (ABI "bytes?") and returns a view of
 * its payload. nil reads as a null view (ptr NULL); an empty bin or str as
 * a non-NULL ptr with len 0. */
static inline eddy_bytes_t eddy_mp_read_bytes(eddy_mp_reader_t *r)
{
	int c = eddy_mp__next(r);
	if (c == EDDY_MP_NIL) {
		r->p++;
		return (eddy_bytes_t){0, 0};
	}
	if (c < 0)
		return (eddy_bytes_t){0, 0};
	return eddy_mp__payload(r, c);
}

/* eddy_mp_read_str reads a str (bin is accepted too) and returns a view of
 * its payload. nil is an error. */
static inline eddy_bytes_t eddy_mp_read_str(eddy_mp_reader_t *r)
{
	int c = eddy_mp__next(r);
	if (c < 0)
		return (eddy_bytes_t){0, 0};
	return eddy_mp__payload(r, c);
}

/* eddy_mp__head reads an array (fix 0x90) or map (fix 0x80) header. Every
 * element takes at least one byte, so a count larger than what is left is
 * malformed (EDDY_MP_ERR_SHORT): callers may size buffers by the count. */
static inline uint32_t eddy_mp__head(eddy_mp_reader_t *r, int fix, int f16, int f32)
{
	int c = eddy_mp__next(r);
	if (c < 0)
		return 0;
	size_t left = eddy_mp_left(r), h;
	uint64_t n;
	if ((c & 0xf0) == fix) {
		h = 1;
		n = (uint64_t)(c & 0x0f);
	} else if (c == f16 || c == f32) {
		h = c == f16 ? 3 : 5;
		if (left < h) {
			eddy_mp_fail(r, EDDY_MP_ERR_SHORT);
			return 0;
		}
		n = eddy_mp__load_be(r->p + 1, (int)h - 1);
	} else {
		eddy_mp_fail(r, EDDY_MP_ERR_TYPE);
		return 0;
	}
	if (n > left - h) {
		eddy_mp_fail(r, EDDY_MP_ERR_SHORT);
		return 0;
	}
	r->p += h;
	return (uint32_t)n;
}

/* eddy_mp_read_array reads an array header and returns the element count. */
static inline uint32_t eddy_mp_read_array(eddy_mp_reader_t *r)
{
	return eddy_mp__head(r, 0x90, EDDY_MP_ARRAY16, EDDY_MP_ARRAY32);
}

/* eddy_mp_read_map reads a map header and returns the number of pairs. */
static inline uint32_t eddy_mp_read_map(eddy_mp_reader_t *r)
{
	return eddy_mp__head(r, 0x80, EDDY_MP_MAP16, EDDY_MP_MAP32);
}

static inline void eddy_mp__skip(eddy_mp_reader_t *r, int depth)
{
	int c = eddy_mp__next(r);
	if (c < 0)
		return;
	if (depth > EDDY_MP_MAX_DEPTH) {
		eddy_mp_fail(r, EDDY_MP_ERR_DEPTH);
		return;
	}
	if (c == EDDY_MP_NIL || c == EDDY_MP_TRUE || c == EDDY_MP_FALSE || c <= 0x7f || c >= 0xe0) {
		r->p++;
	} else if (eddy_mp__int_size(c)) {
		/* Skipped by size: a uint64 above INT64_MAX is still well formed. */
		if (eddy_mp_left(r) - 1 < (size_t)eddy_mp__int_size(c)) {
			eddy_mp_fail(r, EDDY_MP_ERR_SHORT);
			return;
		}
		r->p += 1 + eddy_mp__int_size(c);
	} else if ((c >= 0xa0 && c <= 0xbf) || (c >= EDDY_MP_STR8 && c <= EDDY_MP_STR32) ||
		   (c >= EDDY_MP_BIN8 && c <= EDDY_MP_BIN32)) {
		eddy_mp__payload(r, c);
	} else if ((c & 0xf0) == 0x90 || c == EDDY_MP_ARRAY16 || c == EDDY_MP_ARRAY32) {
		uint32_t n = eddy_mp_read_array(r);
		for (uint32_t i = 0; i < n && !r->err; i++)
			eddy_mp__skip(r, depth + 1);
	} else if ((c & 0xf0) == 0x80 || c == EDDY_MP_MAP16 || c == EDDY_MP_MAP32) {
		uint64_t n = 2 * (uint64_t)eddy_mp_read_map(r);
		for (uint64_t i = 0; i < n && !r->err; i++)
			eddy_mp__skip(r, depth + 1);
	} else {
		eddy_mp_fail(r, EDDY_MP_ERR_TYPE); /* floats, ext: not in the subset */
	}
}

/* eddy_mp_skip consumes one value of any type in the subset, including
 * nested arrays and maps up to EDDY_MP_MAX_DEPTH levels (for unknown map
 * keys, as in the manifest). */
static inline void eddy_mp_skip(eddy_mp_reader_t *r) { eddy_mp__skip(r, 0); }

#ifdef __cplusplus
}
#endif

#endif /* EDDY_MSGPACK_H */
