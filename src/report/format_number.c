/* Numbers as mfu-report prints them: exact, short, and fast (format.h). */
#include "format.h"
#include "format_impl.h"
#include "util.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- numbers ---- */

static const double pow10_d[] = {
	1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
	1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
};

static size_t fmt_u64(char *buf, uint64_t u)
{
	char tmp[24];
	size_t n = 0, k = 0;

	do {
		tmp[n++] = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	while (n)
		buf[k++] = tmp[--n];
	buf[k] = '\0';
	return k;
}

size_t fmt_i64(char *buf, long long v)
{
	if (v < 0) {
		buf[0] = '-';
		return 1 + fmt_u64(buf + 1, (uint64_t)0 - (uint64_t)v);
	}
	return fmt_u64(buf, (uint64_t)v);
}

/* @i / 10^@dec as a decimal with exactly @dec fraction digits. */
static size_t fmt_scaled(char *buf, int neg, uint64_t i, int dec)
{
	char digits[24];
	size_t n = fmt_u64(digits, i), k = 0;

	if (neg)
		buf[k++] = '-';
	if ((int)n <= dec) {
		buf[k++] = '0';
		if (dec) {
			buf[k++] = '.';
			for (int z = dec - (int)n; z > 0; z--)
				buf[k++] = '0';
			memcpy(buf + k, digits, n);
			k += n;
		}
	} else {
		memcpy(buf + k, digits, n - (size_t)dec);
		k += n - (size_t)dec;
		if (dec) {
			buf[k++] = '.';
			memcpy(buf + k, digits + n - dec, (size_t)dec);
			k += (size_t)dec;
		}
	}
	buf[k] = '\0';
	return k;
}

/* snprintf that returns what it wrote: at most @len - 1 bytes, never the
 * length it would have liked (which a caller copying that many bytes out of
 * @buf would read past its end). */
static size_t bounded(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static size_t bounded(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (len == 0)
		return 0;
	va_start(ap, fmt);
	n = vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	if (n < 0) {
		buf[0] = '\0';
		return 0;
	}
	return (size_t)n < len ? (size_t)n : len - 1;
}

/* "nan", "inf" or "-inf" (printf may say "-nan"). */
static size_t fmt_nonfinite(char *buf, double v)
{
	return bounded(buf, FMT_NUM_MAX, "%s", isnan(v) ? "nan" : v < 0 ? "-inf" : "inf");
}

/* printf("%.*f", dec, v) without printf's cost (a 1M-row table formats
 * millions of numbers); rounding of exact ties may differ in the last digit.
 * From 1e15 on, where a double's integer digits stop being all significant
 * and a declared 1e300 would take 300 of them, 6 significant digits in
 * scientific notation ("1.23457e+20"): a bounded number that does not lie. */
size_t fmt_fixed(char *buf, double v, int dec)
{
	double s;
	uint64_t i;

	if (dec < 0)
		dec = 0;
	if (dec > FMT_FIXED_MAX_DEC)
		dec = FMT_FIXED_MAX_DEC;
	if (!isfinite(v))
		return fmt_nonfinite(buf, v);
	if (fabs(v) >= 1e15)
		return bounded(buf, FMT_NUM_MAX, "%.6g", v);
	if (fabs(v) * pow10_d[dec] >= 9e15)
		return bounded(buf, FMT_NUM_MAX, "%.*f", dec, v);
	s = fabs(v) * pow10_d[dec] + 0.5;
	i = (uint64_t)s;
	return fmt_scaled(buf, v < 0 && i != 0, i, dec);
}

static unsigned __int128 pow10_u128(int k)
{
	static unsigned __int128 table[39];

	if (!table[0]) {
		table[0] = 1;
		for (int i = 1; i < 39; i++)
			table[i] = table[i - 1] * 10;
	}
	return table[k];
}

/* Round m * 2^e * 10^k to the nearest integer, ties to even (exact, in 128
 * bits). Returns 0 when the operands do not fit. */
static int scaled_round(uint64_t m, int e, int k, unsigned __int128 *out)
{
	unsigned __int128 x = m, p, q, r;

	if (k >= 0) {
		if (k > 22)
			return 0;
		x *= pow10_u128(k); /* < 2^53 * 2^73.1 */
		if (e >= 0) {
			if (e > 127 || (x >> (127 - e)) != 0)
				return 0;
			*out = x << e;
			return 1;
		}
		if (-e >= 127)
			return 0;
		q = x >> -e;
		r = x - (q << -e);
		p = (unsigned __int128)1 << (-e - 1); /* one half */
		if (r > p || (r == p && (q & 1)))
			q++;
		*out = q;
		return 1;
	}
	if (-k > 38 || e < 0 || e > 74)
		return 0;
	p = pow10_u128(-k);
	x <<= e;
	q = x / p;
	r = x % p;
	if (2 * r > p || (2 * r == p && (q & 1)))
		q++;
	*out = q;
	return 1;
}

/* printf("%.17g", v) for finite v != 0, exact, several times faster than
 * glibc's general algorithm; falls back to printf outside about 1e-6..1e38.
 * Why not printf: tests/bench/bench_format.c measures 31-47 ns per ratio
 * here against 160-215 ns for printf (identical output), and a 1M-step
 * steps csv takes 0.6-0.7 s longer with printf, past the report's 3 s
 * target (docs/performance.md, "Number formatting"). */
static size_t fmt_g17(char *buf, double v)
{
	const uint64_t lo = 10000000000000000ull, hi = 100000000000000000ull;
	unsigned __int128 n = 0;
	char digits[24], *p = buf;
	double a = fabs(v), f;
	uint64_t m, d;
	int e2, e, x, ok = 0, nd;

	f = frexp(a, &e2);
	m = (uint64_t)ldexp(f, 53);
	e = e2 - 53;
	/* floor(log10(a)), from the binary exponent: 78913 / 2^18 ~ log10(2).
	 * It may be one too small; the loop corrects it. */
	x = (int)(((int64_t)(e2 - 1) * 78913) >> 18);
	if (x >= -22 && x < 22 && a >= (x + 1 >= 0 ? pow10_d[x + 1] : 1 / pow10_d[-x - 1]))
		x++;
	for (int tries = 0; tries < 3; tries++) {
		if (!scaled_round(m, e, 16 - x, &n))
			break;
		if (n >= hi) {
			x++;
		} else if (n < lo) {
			x--;
		} else {
			ok = 1;
			break;
		}
	}
	if (!ok)
		return bounded(buf, FMT_NUM_MAX, "%.17g", v);
	d = (uint64_t)n;
	for (int i = 16; i >= 0; i--) {
		digits[i] = (char)('0' + d % 10);
		d /= 10;
	}
	nd = 17;
	while (nd > 1 && digits[nd - 1] == '0')
		nd--;
	if (v < 0)
		*p++ = '-';
	if (x < -4 || x >= 17) {
		*p++ = digits[0];
		if (nd > 1) {
			*p++ = '.';
			memcpy(p, digits + 1, (size_t)nd - 1);
			p += nd - 1;
		}
		p += sprintf(p, "e%c%02d", x < 0 ? '-' : '+', x < 0 ? -x : x);
	} else if (x >= 0) {
		memcpy(p, digits, (size_t)x + 1);
		p += x + 1;
		if (nd > x + 1) {
			*p++ = '.';
			memcpy(p, digits + x + 1, (size_t)(nd - x - 1));
			p += nd - x - 1;
		}
	} else {
		*p++ = '0';
		*p++ = '.';
		for (int z = -x - 1; z > 0; z--)
			*p++ = '0';
		memcpy(p, digits, (size_t)nd);
		p += nd;
	}
	*p = '\0';
	return (size_t)(p - buf);
}

size_t format_double(char *buf, double v)
{
	double a = fabs(v), s;
	uint64_t i;
	int dec;

	if (!isfinite(v))
		return fmt_nonfinite(buf, v);
	if (a == 0) {
		buf[0] = '0';
		buf[1] = '\0';
		return 1;
	}
	/* A plain decimal with at most 9 fraction digits when one reads back as
	 * exactly v: milliseconds from nanoseconds, FLOP counts. i and 10^dec are
	 * exact doubles, so i / 10^dec rounds like strtod does. The product
	 * stays below 2^51, so rounding it finds i whenever such a decimal
	 * exists. */
	if (a < 2251799813685248.0) {
		for (dec = 9; dec > 0 && a * pow10_d[dec] >= 2251799813685248.0; dec--)
			;
		s = a * pow10_d[dec] + 0.5;
		i = (uint64_t)s;
		if ((double)i / pow10_d[dec] == a) {
			while (dec > 0 && i % 10 == 0) {
				i /= 10;
				dec--;
			}
			return fmt_scaled(buf, v < 0, i, dec);
		}
	}
	return fmt_g17(buf, v);
}

size_t format_eng(char *buf, size_t len, double v)
{
	static const char *const prefix[] = { "", " k", " M", " G", " T", " P", " E" };
	char tmp[FMT_NUM_MAX + 8];
	double a = fabs(v);
	size_t n;
	int p = 0;

	if (len == 0)
		return 0;
	if (!isfinite(v)) {
		n = fmt_nonfinite(tmp, v);
	} else if (a < 1000) {
		n = a == floor(a) ? fmt_fixed(tmp, v, 0) : bounded(tmp, sizeof(tmp), "%.3g", v);
	} else if (a >= 999.5e18) {
		/* beyond E (1e18): no prefix left, and 300 digits are no
		 * engineering notation: "1e+300" */
		n = bounded(tmp, sizeof(tmp), "%.3g", v);
	} else {
		while (a >= 999.5 && p < 6) {
			a /= 1000;
			p++;
		}
		n = fmt_fixed(tmp, v < 0 ? -a : a, a < 9.995 ? 2 : a < 99.95 ? 1 : 0);
		memcpy(tmp + n, prefix[p], strlen(prefix[p]) + 1);
		n += strlen(prefix[p]);
	}
	if (n >= len)
		n = len - 1;
	memcpy(buf, tmp, n);
	buf[n] = '\0';
	return n;
}
