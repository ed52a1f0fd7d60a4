/*
 * strconv.h - the number conversions the C reference guests need, written to
 * give exactly the results of Go's strconv, which the Go guests use:
 *
 *   - sc_parse_float: a decimal number to the nearest float64 (ParseFloat),
 *     reporting overflow as Go's ErrRange does;
 *   - sc_append_float: a float64 in the shortest form that reads back
 *     exactly (AppendFloat with precision -1), in 'e' or 'f' format;
 *   - sc_parse_int / sc_parse_uint: ParseInt / ParseUint in base 10, with
 *     Go's error messages;
 *   - sc_append_int / sc_append_uint;
 *   - sc_append_quote: Go's %q of a byte string (strconv.Quote).
 *
 * Float conversions use a multiprecision decimal, as Go's own fallback paths
 * do (strconv's decimal.go, atof.go and ftoa.go, ported): slower than Ryu or
 * Eisel-Lemire, but short, exact and easy to check. The number guests only
 * convert a few values per record.
 *
 * Header-only and freestanding: it needs only a buffer type with append.
 */
#ifndef EDDY_GUESTS_STRCONV_H
#define EDDY_GUESTS_STRCONV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "eddy.h"
#include "text.h"

/* ------------------------------------------------------------------------ */
/* Multiprecision decimal (Go's strconv/decimal.go) */

#define SC_DIGITS 800

typedef struct sc_decimal {
	uint8_t d[SC_DIGITS]; /* digits, big-endian, as ASCII */
	int nd;               /* number of digits used */
	int dp;               /* decimal point */
	bool neg;
	bool trunc; /* discarded nonzero digits beyond d[:nd] */
} sc_decimal;

static inline void sc__trim(sc_decimal *a)
{
	while (a->nd > 0 && a->d[a->nd - 1] == '0')
		a->nd--;
	if (a->nd == 0)
		a->dp = 0;
}

static inline void sc__assign(sc_decimal *a, uint64_t v)
{
	uint8_t buf[24];
	int n = 0;
	while (v > 0) {
		uint64_t v1 = v / 10;
		buf[n++] = (uint8_t)(v - 10 * v1 + '0');
		v = v1;
	}
	a->nd = 0;
	for (n--; n >= 0; n--)
		a->d[a->nd++] = buf[n];
	a->dp = a->nd;
	sc__trim(a);
}

/* The largest shift one pass can do: 9 << k must fit in a uint64. */
#define SC_MAX_SHIFT 60

static inline void sc__right_shift(sc_decimal *a, unsigned k)
{
	int r = 0, w = 0;
	uint64_t n = 0;
	for (; n >> k == 0; r++) {
		if (r >= a->nd) {
			if (n == 0) {
				a->nd = 0;
				return;
			}
			while (n >> k == 0) {
				n *= 10;
				r++;
			}
			break;
		}
		n = n * 10 + (uint64_t)(a->d[r] - '0');
	}
	a->dp -= r - 1;
	uint64_t mask = ((uint64_t)1 << k) - 1;
	for (; r < a->nd; r++) {
		uint64_t c = a->d[r];
		uint64_t dig = n >> k;
		n &= mask;
		a->d[w++] = (uint8_t)(dig + '0');
		n = n * 10 + c - '0';
	}
	while (n > 0) {
		uint64_t dig = n >> k;
		n &= mask;
		if (w < SC_DIGITS)
			a->d[w++] = (uint8_t)(dig + '0');
		else if (dig > 0)
			a->trunc = true;
		n *= 10;
	}
	a->nd = w;
	sc__trim(a);
}

/* Leading digits of 5^k (Go's leftcheats): shifting left by k adds delta
 * digits, one fewer if the number is below cutoff. */
static const struct {
	int delta;
	const char *cutoff;
} sc__leftcheats[] = {
	{0, ""},
	{1, "5"},
	{1, "25"},
	{1, "125"},
	{2, "625"},
	{2, "3125"},
	{2, "15625"},
	{3, "78125"},
	{3, "390625"},
	{3, "1953125"},
	{4, "9765625"},
	{4, "48828125"},
	{4, "244140625"},
	{4, "1220703125"},
	{5, "6103515625"},
	{5, "30517578125"},
	{5, "152587890625"},
	{6, "762939453125"},
	{6, "3814697265625"},
	{6, "19073486328125"},
	{7, "95367431640625"},
	{7, "476837158203125"},
	{7, "2384185791015625"},
	{7, "11920928955078125"},
	{8, "59604644775390625"},
	{8, "298023223876953125"},
	{8, "1490116119384765625"},
	{9, "7450580596923828125"},
	{9, "37252902984619140625"},
	{9, "186264514923095703125"},
	{10, "931322574615478515625"},
	{10, "4656612873077392578125"},
	{10, "23283064365386962890625"},
	{10, "116415321826934814453125"},
	{11, "582076609134674072265625"},
	{11, "2910383045673370361328125"},
	{11, "14551915228366851806640625"},
	{12, "72759576141834259033203125"},
	{12, "363797880709171295166015625"},
	{12, "1818989403545856475830078125"},
	{13, "9094947017729282379150390625"},
	{13, "45474735088646411895751953125"},
	{13, "227373675443232059478759765625"},
	{13, "1136868377216160297393798828125"},
	{14, "5684341886080801486968994140625"},
	{14, "28421709430404007434844970703125"},
	{14, "142108547152020037174224853515625"},
	{15, "710542735760100185871124267578125"},
	{15, "3552713678800500929355621337890625"},
	{15, "17763568394002504646778106689453125"},
	{16, "88817841970012523233890533447265625"},
	{16, "444089209850062616169452667236328125"},
	{16, "2220446049250313080847263336181640625"},
	{16, "11102230246251565404236316680908203125"},
	{17, "55511151231257827021181583404541015625"},
	{17, "277555756156289135105907917022705078125"},
	{17, "1387778780781445675529539585113525390625"},
	{18, "6938893903907228377647697925567626953125"},
	{18, "34694469519536141888238489627838134765625"},
	{18, "173472347597680709441192448139190673828125"},
	{19, "867361737988403547205962240695953369140625"},
};

static inline bool sc__prefix_less(const sc_decimal *a, const char *s)
{
	for (int i = 0; s[i]; i++) {
		if (i >= a->nd)
			return true;
		if (a->d[i] != (uint8_t)s[i])
			return a->d[i] < (uint8_t)s[i];
	}
	return false;
}

static inline void sc__left_shift(sc_decimal *a, unsigned k)
{
	int delta = sc__leftcheats[k].delta;
	if (sc__prefix_less(a, sc__leftcheats[k].cutoff))
		delta--;
	int r = a->nd, w = a->nd + delta;
	uint64_t n = 0;
	for (r--; r >= 0; r--) {
		n += (uint64_t)(a->d[r] - '0') << k;
		uint64_t quo = n / 10, rem = n - 10 * quo;
		w--;
		if (w < SC_DIGITS)
			a->d[w] = (uint8_t)(rem + '0');
		else if (rem != 0)
			a->trunc = true;
		n = quo;
	}
	while (n > 0) {
		uint64_t quo = n / 10, rem = n - 10 * quo;
		w--;
		if (w < SC_DIGITS)
			a->d[w] = (uint8_t)(rem + '0');
		else if (rem != 0)
			a->trunc = true;
		n = quo;
	}
	a->nd += delta;
	if (a->nd >= SC_DIGITS)
		a->nd = SC_DIGITS;
	a->dp += delta;
	sc__trim(a);
}

/* sc__shift multiplies a by 2^k (k > 0) or divides it by 2^-k. */
static inline void sc__shift(sc_decimal *a, int k)
{
	if (a->nd == 0)
		return;
	if (k > 0) {
		for (; k > SC_MAX_SHIFT; k -= SC_MAX_SHIFT)
			sc__left_shift(a, SC_MAX_SHIFT);
		sc__left_shift(a, (unsigned)k);
	} else if (k < 0) {
		for (; k < -SC_MAX_SHIFT; k += SC_MAX_SHIFT)
			sc__right_shift(a, SC_MAX_SHIFT);
		sc__right_shift(a, (unsigned)-k);
	}
}

static inline bool sc__should_round_up(const sc_decimal *a, int nd)
{
	if (nd < 0 || nd >= a->nd)
		return false;
	if (a->d[nd] == '5' && nd + 1 == a->nd) { /* exactly halfway: round to even */
		if (a->trunc)
			return true;
		return nd > 0 && (a->d[nd - 1] - '0') % 2 != 0;
	}
	return a->d[nd] >= '5';
}

static inline void sc__round_down(sc_decimal *a, int nd)
{
	if (nd < 0 || nd >= a->nd)
		return;
	a->nd = nd;
	sc__trim(a);
}

static inline void sc__round_up(sc_decimal *a, int nd)
{
	if (nd < 0 || nd >= a->nd)
		return;
	for (int i = nd - 1; i >= 0; i--) {
		if (a->d[i] < '9') {
			a->d[i]++;
			a->nd = i + 1;
			return;
		}
	}
	a->d[0] = '1';
	a->nd = 1;
	a->dp++;
}

static inline void sc__round(sc_decimal *a, int nd)
{
	if (nd < 0 || nd >= a->nd)
		return;
	if (sc__should_round_up(a, nd))
		sc__round_up(a, nd);
	else
		sc__round_down(a, nd);
}

static inline uint64_t sc__rounded_integer(const sc_decimal *a)
{
	if (a->dp > 20)
		return UINT64_MAX;
	int i;
	uint64_t n = 0;
	for (i = 0; i < a->dp && i < a->nd; i++)
		n = n * 10 + (uint64_t)(a->d[i] - '0');
	for (; i < a->dp; i++)
		n *= 10;
	if (sc__should_round_up(a, a->dp))
		n++;
	return n;
}

/* ------------------------------------------------------------------------ */
/* Parsing floats (Go's strconv/atof.go, decimal numbers only) */

#define SC_MANTBITS 52
#define SC_EXPBITS 11
#define SC_BIAS (-1023)

static inline double sc__from_bits(uint64_t b)
{
	double f;
	__builtin_memcpy(&f, &b, 8);
	return f;
}

static inline uint64_t sc__to_bits(double f)
{
	uint64_t b;
	__builtin_memcpy(&b, &f, 8);
	return b;
}

/* sc__decimal_set reads the decimal number s[0..n) into b; false if it is
 * not one. */
static inline bool sc__decimal_set(sc_decimal *b, const uint8_t *s, size_t n)
{
	size_t i = 0;
	b->neg = b->trunc = false;
	b->nd = b->dp = 0;
	if (i >= n)
		return false;
	if (s[i] == '+')
		i++;
	else if (s[i] == '-') {
		i++;
		b->neg = true;
	}
	bool sawdot = false, sawdigits = false;
	for (; i < n; i++) {
		uint8_t c = s[i];
		if (c == '.') {
			if (sawdot)
				return false;
			sawdot = true;
			b->dp = b->nd;
			continue;
		}
		if (c < '0' || c > '9')
			break;
		sawdigits = true;
		if (c == '0' && b->nd == 0) { /* ignore leading zeros */
			b->dp--;
			continue;
		}
		if (b->nd < SC_DIGITS)
			b->d[b->nd++] = c;
		else if (c != '0')
			b->trunc = true;
	}
	if (!sawdigits)
		return false;
	if (!sawdot)
		b->dp = b->nd;
	if (i < n && (s[i] == 'e' || s[i] == 'E')) {
		i++;
		if (i >= n)
			return false;
		int esign = 1;
		if (s[i] == '+')
			i++;
		else if (s[i] == '-') {
			i++;
			esign = -1;
		}
		if (i >= n || s[i] < '0' || s[i] > '9')
			return false;
		int e = 0;
		for (; i < n && s[i] >= '0' && s[i] <= '9'; i++)
			if (e < 10000)
				e = e * 10 + (s[i] - '0');
		b->dp += e * esign;
	}
	return i == n;
}

/* sc__float_bits converts d to float64 bits; *overflow reports ±Inf. */
static inline uint64_t sc__float_bits(sc_decimal *d, bool *overflow)
{
	static const int powtab[] = {1, 3, 6, 9, 13, 16, 19, 23, 26};
	int exp = 0;
	uint64_t mant = 0;
	*overflow = false;
	if (d->nd == 0) {
		exp = SC_BIAS;
		goto out;
	}
	if (d->dp > 310)
		goto overflow;
	if (d->dp < -330) {
		exp = SC_BIAS;
		goto out;
	}
	while (d->dp > 0) {
		int n = d->dp >= 9 ? 27 : powtab[d->dp];
		sc__shift(d, -n);
		exp += n;
	}
	while (d->dp < 0 || (d->dp == 0 && d->d[0] < '5')) {
		int n = -d->dp >= 9 ? 27 : powtab[-d->dp];
		sc__shift(d, n);
		exp -= n;
	}
	exp--;
	if (exp < SC_BIAS + 1) {
		int n = SC_BIAS + 1 - exp;
		sc__shift(d, -n);
		exp += n;
	}
	if (exp - SC_BIAS >= (1 << SC_EXPBITS) - 1)
		goto overflow;
	sc__shift(d, 1 + SC_MANTBITS);
	mant = sc__rounded_integer(d);
	if (mant == (uint64_t)2 << SC_MANTBITS) {
		mant >>= 1;
		exp++;
		if (exp - SC_BIAS >= (1 << SC_EXPBITS) - 1)
			goto overflow;
	}
	if (!(mant & ((uint64_t)1 << SC_MANTBITS)))
		exp = SC_BIAS;
	goto out;
overflow:
	mant = 0;
	exp = (1 << SC_EXPBITS) - 1 + SC_BIAS;
	*overflow = true;
out:;
	uint64_t bits = mant & (((uint64_t)1 << SC_MANTBITS) - 1);
	bits |= (uint64_t)((exp - SC_BIAS) & ((1 << SC_EXPBITS) - 1)) << SC_MANTBITS;
	if (d->neg)
		bits |= (uint64_t)1 << 63;
	return bits;
}

/* sc__exact is Go's atof64exact: the correctly rounded value of
 * mantissa * 10^exp when float arithmetic gives it directly. */
static inline bool sc__exact(uint64_t mantissa, int exp, bool neg, double *f)
{
	static const double pow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
				       1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
	if (mantissa >> SC_MANTBITS)
		return false;
	double v = (double)mantissa;
	if (neg)
		v = -v;
	if (exp == 0) {
		*f = v;
		return true;
	}
	if (exp > 0 && exp <= 15 + 22) {
		if (exp > 22) {
			v *= pow10[exp - 22];
			exp = 22;
		}
		if (v > 1e15 || v < -1e15)
			return false;
		*f = v * pow10[exp];
		return true;
	}
	if (exp < 0 && exp >= -22) {
		*f = v / pow10[-exp];
		return true;
	}
	return false;
}

/*
 * sc_parse_float converts the decimal number s[0..n) (an optional sign,
 * digits with an optional '.', an optional exponent: JSON numbers and more)
 * to the nearest float64, rounding half to even. It returns 0 on success, 1
 * for a syntax error, and 2 when the value is out of range (*f is then ±Inf),
 * as Go's ParseFloat does; values too small for a float64 become ±0 without
 * an error.
 */
static inline int sc_parse_float(const uint8_t *s, size_t n, double *f)
{
	/* Fast path: Go's readFloat + atof64exact. */
	size_t i = 0;
	bool neg = false;
	if (i < n && (s[i] == '+' || s[i] == '-'))
		neg = s[i++] == '-';
	uint64_t mant = 0;
	int nd = 0, nd_mant = 0, dp = 0;
	bool sawdot = false, sawdigits = false, trunc = false;
	for (; i < n; i++) {
		uint8_t c = s[i];
		if (c == '.') {
			if (sawdot)
				break;
			sawdot = true;
			dp = nd;
			continue;
		}
		if (c < '0' || c > '9')
			break;
		sawdigits = true;
		if (c == '0' && nd == 0) {
			dp--;
			continue;
		}
		nd++;
		if (nd_mant < 19) {
			mant = mant * 10 + (uint64_t)(c - '0');
			nd_mant++;
		} else if (c != '0') {
			trunc = true;
		}
	}
	if (!sawdigits)
		return 1;
	if (!sawdot)
		dp = nd;
	if (i < n && (s[i] == 'e' || s[i] == 'E')) {
		i++;
		if (i >= n)
			return 1;
		int esign = 1;
		if (s[i] == '+')
			i++;
		else if (s[i] == '-') {
			i++;
			esign = -1;
		}
		if (i >= n || s[i] < '0' || s[i] > '9')
			return 1;
		int e = 0;
		for (; i < n && s[i] >= '0' && s[i] <= '9'; i++)
			if (e < 10000)
				e = e * 10 + (s[i] - '0');
		dp += e * esign;
	}
	if (i != n)
		return 1;
	int exp = mant != 0 ? dp - nd_mant : 0;
	if (!trunc && sc__exact(mant, exp, neg, f))
		return 0;
	/* Slow path: exact decimal arithmetic. */
	sc_decimal d;
	if (!sc__decimal_set(&d, s, n))
		return 1;
	bool overflow;
	*f = sc__from_bits(sc__float_bits(&d, &overflow));
	return overflow ? 2 : 0;
}

/* ------------------------------------------------------------------------ */
/* Formatting floats (Go's strconv/ftoa.go: bigFtoa and roundShortest) */

/* sc__round_shortest rounds d (= mant * 2^(exp - mantbits)) to the shortest
 * number of digits that reads back as the same float64. */
static inline void sc__round_shortest(sc_decimal *d, uint64_t mant, int exp)
{
	if (mant == 0) {
		d->nd = 0;
		return;
	}
	int minexp = SC_BIAS + 1;
	if (exp > minexp && 332 * (d->dp - d->nd) >= 100 * (exp - SC_MANTBITS))
		return;
	static sc_decimal upper, lower; /* 800 bytes each: off the stack */
	sc__assign(&upper, mant * 2 + 1);
	upper.trunc = upper.neg = false;
	sc__shift(&upper, exp - SC_MANTBITS - 1);
	uint64_t mantlo;
	int explo;
	if (mant > (uint64_t)1 << SC_MANTBITS || exp == minexp) {
		mantlo = mant - 1;
		explo = exp;
	} else {
		mantlo = mant * 2 - 1;
		explo = exp - 1;
	}
	sc__assign(&lower, mantlo * 2 + 1);
	lower.trunc = lower.neg = false;
	sc__shift(&lower, explo - SC_MANTBITS - 1);
	bool inclusive = mant % 2 == 0;
	int upperdelta = 0;
	for (int ui = 0;; ui++) {
		int mi = ui - upper.dp + d->dp;
		if (mi >= d->nd)
			break;
		int li = ui - upper.dp + lower.dp;
		uint8_t l = '0', m = '0', u = '0';
		if (li >= 0 && li < lower.nd)
			l = lower.d[li];
		if (mi >= 0)
			m = d->d[mi];
		if (ui < upper.nd)
			u = upper.d[ui];
		bool okdown = l != m || (inclusive && li + 1 == lower.nd);
		if (upperdelta == 0 && m + 1 < u)
			upperdelta = 2;
		else if (upperdelta == 0 && m != u)
			upperdelta = 1;
		else if (upperdelta == 1 && (m != '9' || u != '0'))
			upperdelta = 2;
		bool okup = upperdelta > 0 && (inclusive || upperdelta > 1 || ui + 1 < upper.nd);
		if (okdown && okup) {
			sc__round(d, mi + 1);
			return;
		}
		if (okdown) {
			sc__round_down(d, mi + 1);
			return;
		}
		if (okup) {
			sc__round_up(d, mi + 1);
			return;
		}
	}
}

static inline void sc__putc(eddy_buf_t *b, uint8_t c) { eddy_buf_append(b, &c, 1); }

/*
 * sc_append_float appends f to b as Go's strconv.AppendFloat(b, f, fmt, -1,
 * 64) does, for fmt 'e' (-d.ddde±dd) or 'f' (-ddd.ddd): the shortest digits
 * that read back as f. NaN and infinities are written "NaN", "+Inf", "-Inf".
 */
static inline void sc_append_float(eddy_buf_t *b, double f, char fmt)
{
	uint64_t bits = sc__to_bits(f);
	bool neg = bits >> 63;
	int exp = (int)(bits >> SC_MANTBITS) & ((1 << SC_EXPBITS) - 1);
	uint64_t mant = bits & (((uint64_t)1 << SC_MANTBITS) - 1);
	if (exp == (1 << SC_EXPBITS) - 1) {
		const char *s = mant ? "NaN" : neg ? "-Inf" : "+Inf";
		eddy_buf_append(b, s, eddy_cstr(s).len);
		return;
	}
	if (exp == 0)
		exp++; /* denormal */
	else
		mant |= (uint64_t)1 << SC_MANTBITS;
	exp += SC_BIAS;

	static sc_decimal d; /* 800 bytes: off the stack */
	sc__assign(&d, mant);
	d.trunc = d.neg = false;
	sc__shift(&d, exp - SC_MANTBITS);
	sc__round_shortest(&d, mant, exp);

	if (neg)
		sc__putc(b, '-');
	if (fmt == 'e') {
		int prec = d.nd - 1;
		sc__putc(b, d.nd ? d.d[0] : '0');
		if (prec > 0) {
			sc__putc(b, '.');
			eddy_buf_append(b, d.d + 1, (size_t)prec);
		}
		sc__putc(b, 'e');
		int e = d.nd ? d.dp - 1 : 0;
		sc__putc(b, e < 0 ? '-' : '+');
		if (e < 0)
			e = -e;
		if (e < 10) {
			sc__putc(b, '0');
			sc__putc(b, (uint8_t)('0' + e));
		} else if (e < 100) {
			sc__putc(b, (uint8_t)('0' + e / 10));
			sc__putc(b, (uint8_t)('0' + e % 10));
		} else {
			sc__putc(b, (uint8_t)('0' + e / 100));
			sc__putc(b, (uint8_t)('0' + e / 10 % 10));
			sc__putc(b, (uint8_t)('0' + e % 10));
		}
		return;
	}
	/* 'f' */
	int prec = d.nd - d.dp > 0 ? d.nd - d.dp : 0;
	if (d.dp > 0) {
		int m = d.nd < d.dp ? d.nd : d.dp;
		eddy_buf_append(b, d.d, (size_t)m);
		for (; m < d.dp; m++)
			sc__putc(b, '0');
	} else {
		sc__putc(b, '0');
	}
	if (prec > 0) {
		sc__putc(b, '.');
		for (int i = 0; i < prec; i++) {
			int j = d.dp + i;
			sc__putc(b, 0 <= j && j < d.nd ? d.d[j] : '0');
		}
	}
}

/* ------------------------------------------------------------------------ */
/* Integers */

/* sc_append_uint appends v in decimal. */
static inline void sc_append_uint(eddy_buf_t *b, uint64_t v)
{
	uint8_t tmp[20], *p = tmp + sizeof tmp;
	do {
		*--p = (uint8_t)('0' + v % 10);
		v /= 10;
	} while (v);
	eddy_buf_append(b, p, (size_t)(tmp + sizeof tmp - p));
}

/* sc_append_int appends v in decimal. */
static inline void sc_append_int(eddy_buf_t *b, int64_t v)
{
	if (v < 0) {
		sc__putc(b, '-');
		sc_append_uint(b, 0 - (uint64_t)v);
		return;
	}
	sc_append_uint(b, (uint64_t)v);
}

/* Results of sc_parse_int and sc_parse_uint, and Go's words for them. */
enum { SC_OK = 0, SC_SYNTAX = 1, SC_RANGE = 2 };
#define SC_ERR_SYNTAX "invalid syntax"
#define SC_ERR_RANGE "value out of range"

/* sc_parse_uint is Go's strconv.ParseUint(s, 10, 64): decimal digits only
 * (no sign). */
static inline int sc_parse_uint(const uint8_t *s, size_t n, uint64_t *v)
{
	*v = 0;
	if (n == 0)
		return SC_SYNTAX;
	uint64_t x = 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9') {
			*v = 0;
			return SC_SYNTAX;
		}
		uint64_t d = (uint64_t)(s[i] - '0');
		if (x > (UINT64_MAX - d) / 10) {
			*v = UINT64_MAX;
			return SC_RANGE;
		}
		x = x * 10 + d;
	}
	*v = x;
	return SC_OK;
}

/* sc_parse_int is Go's strconv.ParseInt(s, 10, 64): an optional sign, then
 * decimal digits. */
static inline int sc_parse_int(const uint8_t *s, size_t n, int64_t *v)
{
	*v = 0;
	bool neg = false;
	if (n > 0 && (s[0] == '+' || s[0] == '-')) {
		neg = s[0] == '-';
		s++;
		n--;
	}
	uint64_t u;
	int rc = sc_parse_uint(s, n, &u);
	if (rc == SC_SYNTAX)
		return rc;
	uint64_t cutoff = (uint64_t)1 << 63;
	if (rc == SC_RANGE || (!neg && u >= cutoff) || (neg && u > cutoff)) {
		*v = neg ? INT64_MIN : INT64_MAX;
		return SC_RANGE;
	}
	*v = neg ? (int64_t)(0 - u) : (int64_t)u;
	return SC_OK;
}

/* ------------------------------------------------------------------------ */
/* Quoting */

/*
 * sc_append_quote appends s[0..n) double-quoted with Go escapes, as
 * strconv.Quote (and fmt's %q) does for the text the guests quote: printable
 * ASCII as is (with \" and \\), \a \b \f \n \r \t \v, other control bytes
 * and invalid UTF-8 as \xNN, and valid non-ASCII UTF-8 as is except the C1
 * controls (\u0080-\u009f) and U+FFFD-like non-characters, which Go escapes
 * only when they are not printable. (Go's full printability tables are not
 * reproduced: non-ASCII runes other than C1 controls, U+00AD and the
 * line/paragraph separators are kept as they are.)
 */
static inline void sc_append_quote(eddy_buf_t *b, const uint8_t *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	sc__putc(b, '"');
	for (size_t i = 0; i < n;) {
		uint8_t c = s[i];
		if (c >= 0x80) {
			size_t size;
			int32_t r = tx_decode_rune(s + i, n - i, &size);
			if (r < 0) {
				uint8_t e[4] = {'\\', 'x', (uint8_t)hex[c >> 4], (uint8_t)hex[c & 15]};
				eddy_buf_append(b, e, 4);
			} else if ((r >= 0x80 && r <= 0x9f) || r == 0xad || r == 0x2028 || r == 0x2029) {
				uint8_t e[6] = {'\\', 'u', '0', '0', 0, 0};
				e[2] = (uint8_t)hex[(r >> 12) & 15];
				e[3] = (uint8_t)hex[(r >> 8) & 15];
				e[4] = (uint8_t)hex[(r >> 4) & 15];
				e[5] = (uint8_t)hex[r & 15];
				eddy_buf_append(b, e, 6);
			} else {
				eddy_buf_append(b, s + i, size);
			}
			i += size;
			continue;
		}
		i++;
		const char *esc = 0;
		switch (c) {
		case '"':
			esc = "\\\"";
			break;
		case '\\':
			esc = "\\\\";
			break;
		case '\a':
			esc = "\\a";
			break;
		case '\b':
			esc = "\\b";
			break;
		case '\f':
			esc = "\\f";
			break;
		case '\n':
			esc = "\\n";
			break;
		case '\r':
			esc = "\\r";
			break;
		case '\t':
			esc = "\\t";
			break;
		case '\v':
			esc = "\\v";
			break;
		}
		if (esc) {
			eddy_buf_append(b, esc, 2);
		} else if (c < 0x20 || c == 0x7f) {
			uint8_t e[4] = {'\\', 'x', (uint8_t)hex[c >> 4], (uint8_t)hex[c & 15]};
			eddy_buf_append(b, e, 4);
		} else {
			sc__putc(b, c);
		}
	}
	sc__putc(b, '"');
}

#endif /* EDDY_GUESTS_STRCONV_H */
