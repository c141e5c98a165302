/* %.6g without printf's multiple-precision path. The double is m * 2^e
 * exactly (m < 2^53); its 6 significant digits are m * 10^k / 2^-e rounded
 * half to even, computed in 128 bits, which hold m * 10^k for k <= 22 and
 * a shift of up to 127 bits: the decimal exponent X of the rounded value
 * is then that of %e, and the C standard's %g rule follows (X < -4 or
 * X >= 6: exponent form, left to snprintf here; else P - 1 - X decimals,
 * trailing zeros dropped). */
#include "html_number.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* round(m * 10^k / 2^shift), half to even; @k in 0..22, @shift in 1..127. */
static uint64_t scaled_round(uint64_t m, int k, int shift)
{
	unsigned __int128 p = m, half, rem;
	uint64_t q;

	for (int i = 0; i < k; i++)
		p *= 10;
	q = (uint64_t)(p >> shift);
	rem = p & ((((unsigned __int128)1) << shift) - 1);
	half = ((unsigned __int128)1) << (shift - 1);
	if (rem > half || (rem == half && (q & 1)))
		q++;
	return q;
}

size_t html_number_g6(char *buf, double v)
{
	double a = fabs(v);
	int e2, x, k, shift;
	uint64_t m, d = 0;
	char digits[6];
	size_t n = 0;

	if (!(a >= 1e-5 && a < 1e15))
		return (size_t)snprintf(buf, 32, "%.6g", v);
	(void)frexp(a, &e2);          /* a = f * 2^e2, 0.5 <= f < 1 */
	m = (uint64_t)ldexp(a, 53 - e2); /* exact: a = m * 2^(e2 - 53) */
	shift = 53 - e2;
	if (shift < 1 || shift > 127)
		return (size_t)snprintf(buf, 32, "%.6g", v);
	/* X from the unrounded value, then corrected on the rounded digits */
	x = (int)floor(log10(a));
	for (int tries = 0; tries < 3; tries++) {
		k = 5 - x;
		if (k < 0 || k > 22)
			return (size_t)snprintf(buf, 32, "%.6g", v);
		d = scaled_round(m, k, shift);
		if (d >= 1000000)
			x++;
		else if (d < 100000)
			x--;
		else
			break;
	}
	if (d < 100000 || d >= 1000000 || x < -4 || x >= 6)
		return (size_t)snprintf(buf, 32, "%.6g", v);
	for (int i = 5; i >= 0; i--, d /= 10)
		digits[i] = (char)('0' + d % 10);
	if (v < 0)
		buf[n++] = '-';
	if (x >= 0) {
		/* x + 1 digits before the point, 5 - x after */
		memcpy(buf + n, digits, (size_t)x + 1);
		n += (size_t)x + 1;
		int last = 5;

		while (last > x && digits[last] == '0')
			last--;
		if (last > x) {
			buf[n++] = '.';
			memcpy(buf + n, digits + x + 1, (size_t)(last - x));
			n += (size_t)(last - x);
		}
	} else {
		int last = 5;

		while (last > 0 && digits[last] == '0')
			last--;
		buf[n++] = '0';
		buf[n++] = '.';
		for (int i = 0; i < -x - 1; i++)
			buf[n++] = '0';
		memcpy(buf + n, digits, (size_t)last + 1);
		n += (size_t)last + 1;
	}
	buf[n] = '\0';
	return n;
}
