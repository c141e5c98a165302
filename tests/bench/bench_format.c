/*
 * bench_format: what mfu-report's own shortest-exact double printer
 * (format_double: a plain decimal when one reads back exactly, else an
 * exact %.17g computed in 128-bit integers) saves over the C library's
 * printf("%.17g"), on the values a 1M-step csv prints: ratios (MFU, CPU
 * utilization: no short decimal) and milliseconds from nanoseconds.
 *
 * usage: bench_format [N]   (N values of each kind, default 2,000,000)
 *
 * Prints ns per value for both, their ratio, and checks that every output
 * of format_double reads back as the same double (strtod) and, for the
 * ratios, equals printf's %.17g character for character.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "report/format.h"

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint64_t rng = 0x9E3779B97F4A7C15ull;

static double next_ratio(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (double)(rng >> 11) / 9007199254740992.0;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? strtol(argv[1], NULL, 10) : 2000000;
	double *v = malloc((size_t)n * 2 * sizeof(*v)), t0, t_own, t_libc;
	char buf[64];
	size_t sink = 0;
	long bad = 0;

	if (!v || n <= 0)
		return 2;
	for (long i = 0; i < n; i++) {
		v[2 * i] = next_ratio() * 0.6;                            /* an MFU */
		v[2 * i + 1] = (double)(4000000 + (rng >> 40) % 900000) / 1e6; /* ms from ns */
	}
	/* ratios: the values fmt_g17 serves (no short decimal reads back) */
	t0 = now();
	for (long i = 0; i < 2 * n; i += 2)
		sink += format_double(buf, v[i]);
	t_own = now() - t0;
	t0 = now();
	for (long i = 0; i < 2 * n; i += 2)
		sink += (size_t)snprintf(buf, sizeof(buf), "%.17g", v[i]);
	t_libc = now() - t0;
	for (long i = 0; i < 2 * n; i++) {
		format_double(buf, v[i]);
		if (strtod(buf, NULL) != v[i])
			bad++;
		if (i % 2 == 0) {
			char ref[64];
			snprintf(ref, sizeof(ref), "%.17g", v[i]);
			bad += strcmp(ref, buf) != 0;
		}
	}
	printf("ratios: format_double %.1f ns/value, printf(\"%%.17g\") %.1f ns/value: printf / ours = %.2fx\n",
	       t_own / n * 1e9, t_libc / n * 1e9, t_libc / t_own);
	/* milliseconds from nanoseconds: the short plain decimal */
	t0 = now();
	for (long i = 1; i < 2 * n; i += 2)
		sink += format_double(buf, v[i]);
	t_own = now() - t0;
	printf("ms values: format_double %.1f ns/value\n", t_own / n * 1e9);
	printf("%ld values of each kind; %ld outputs differ from %%.17g or do not read back exactly (%zu bytes)\n",
	       n, bad, sink);
	free(v);
	return bad != 0;
}
