/*
 * The library blas_dlopen.c loads with dlopen(RTLD_LOCAL): it links
 * OpenBLAS, so the BLAS is in this library's local scope only, as when a
 * Python extension module brings its own. plugin_step(s) calls cblas_dgemm
 * 32x24x16 s + 1 times and returns a hash of the results.
 */
#include <cblas.h>
#include <stdint.h>
#include <string.h>

uint64_t plugin_step(int s);

static double a[32 * 16], b[16 * 24], c[32 * 24];

__attribute__((visibility("default"))) uint64_t plugin_step(int s)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (int i = 0; i < 32 * 16; i++)
		a[i] = 0.25 * (double)((i * 7 + s) % 13) - 1.0;
	for (int i = 0; i < 16 * 24; i++)
		b[i] = 0.5 * (double)((i * 3 + s) % 5) - 1.0;
	for (int r = 0; r <= s; r++) {
		cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 32, 24, 16, 1.0, a, 16, b, 24, 0.0, c, 24);
		const unsigned char *p = (const unsigned char *)c;
		for (size_t i = 0; i < sizeof(c); i++)
			h = (h ^ p[i]) * 0x100000001b3ull;
		a[r % (32 * 16)] += 1.0;
	}
	return h;
}
