/* The HTML page's %.6g (src/report/html_number.c): byte for byte what
 * snprintf's "%.6g" writes, on random doubles of every kind, fractions,
 * exact halfway cases at the sixth digit, and the edges of the fast path
 * (1e-5, 1e15) and of the %g notation switch (1e-4, 1e6). */
#include "check.h"
#include "html_number.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static uint64_t state = 88172645463325252ull;

static uint64_t next(void)
{
	state ^= state << 13;
	state ^= state >> 7;
	state ^= state << 17;
	return state;
}

static double pick(long i)
{
	uint64_t bits;
	double v;

	switch (i % 6) {
	case 0: bits = next(); memcpy(&v, &bits, sizeof(v)); return v; /* any double */
	case 1: return (double)(next() % 2000000) / 1e6;                 /* a fraction */
	case 2: return ldexp((double)(next() >> 11), -53 - (int)(next() % 40));
	case 3: return (double)(next() % 100000000) * pow(10, (int)(next() % 30) - 15);
	case 4: return ((double)(next() % 1000000) + 0.5) * pow(10, (int)(next() % 24) - 12); /* halves */
	default: return (double)(next() % 10000000) / 1e7 + (double)(next() % 3) * 1e-7;
	}
}

static void check_one(double v, int line)
{
	char got[64], want[64];
	size_t n = html_number_g6(got, v);
	int m = snprintf(want, sizeof(want), "%.6g", v);

	CHECK_ROW((int)n == m && strcmp(got, want) == 0, line);
	if ((int)n != m || strcmp(got, want) != 0)
		fprintf(stderr, "  %.17g: got %s, want %s\n", v, got, want);
}

int main(void)
{
	static const double edges[] = {
		1e-5, 9.999995e-6, 9.999995e-5, 1e-4, 0.000099999949, 0.0001, 999999.5, 999999.4999, 99999.95,
		123456.5, 0.1, 0.5, 1, 10, 1e6, 1e15, 9.99999e14, 0.30000000000000004, 2.5e-5, 1.0000005,
		1.0000015, 0.1234565, 0, -0.0, 5e-324, 1e308, INFINITY, NAN,
	};

	for (size_t i = 0; i < sizeof(edges) / sizeof(edges[0]); i++) {
		check_one(edges[i], __LINE__);
		check_one(-edges[i], __LINE__);
	}
	for (long i = 0; i < 2000000; i++)
		check_one((next() & 1) ? -pick(i) : pick(i), __LINE__);
	return check_status();
}
