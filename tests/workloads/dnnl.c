/*
 * dnnl: oneDNN's GEMM functions with known sizes, for the library-call
 * counting tests (tests/e2e/test_libflops.py). Three steps:
 *   0: dnnl_sgemm 32x24x16                       2 * 32 * 24 * 16 fp32 FLOPs
 *   1: dnnl_gemm_u8s8s32 16x8x64                 2 * 16 * 8 * 64 int8 ops
 *   2: dnnl_sgemm with lda < k (rejected: an error status, no work),
 *      then dnnl_gemm_s8s8s32 8x8x8              2 * 8^3 int8 ops
 * Prints each call's status ("status NAME CODE") and "checksum HEX" of the
 * results.
 */
#include <oneapi/dnnl/dnnl.h>
#include <stdint.h>
#include <stdio.h>

#include "mfu.h"

static uint64_t hash = 0xcbf29ce484222325ull;

static void mix(const void *p, size_t len)
{
	const unsigned char *b = p;
	for (size_t i = 0; i < len; i++)
		hash = (hash ^ b[i]) * 0x100000001b3ull;
}

static float a[32 * 64], b[64 * 24], c[32 * 24];
static uint8_t ua[16 * 64];
static int8_t sa[16 * 64], sb[64 * 8];
static int32_t ic[16 * 8], co;

int main(void)
{
	dnnl_status_t st;
	int bad = 0;

	for (int i = 0; i < 32 * 64; i++)
		a[i] = 0.25f * (float)((i * 7) % 13) - 1.0f;
	for (int i = 0; i < 64 * 24; i++)
		b[i] = 0.5f * (float)((i * 3) % 5) - 1.0f;
	for (int i = 0; i < 16 * 64; i++) {
		ua[i] = (uint8_t)(i * 13);
		sa[i] = (int8_t)((i * 5) % 17 - 8);
	}
	for (int i = 0; i < 64 * 8; i++)
		sb[i] = (int8_t)((i * 11) % 23 - 11);

	/* row-major: A m x k (lda k), B k x n (ldb n), C m x n (ldc n) */
	mfu_step_begin();
	st = dnnl_sgemm('N', 'N', 32, 24, 16, 1.0f, a, 16, b, 24, 0.0f, c, 24);
	printf("status dnnl_sgemm %d\n", (int)st);
	bad |= st != dnnl_success;
	mix(c, sizeof(c));
	mfu_step_end();

	mfu_step_begin();
	st = dnnl_gemm_u8s8s32('N', 'N', 'F', 16, 8, 64, 1.0f, ua, 64, 0, sb, 8, 0, 0.0f, ic, 8, &co);
	printf("status dnnl_gemm_u8s8s32 %d\n", (int)st);
	bad |= st != dnnl_success;
	mix(ic, sizeof(ic));
	mfu_step_end();

	mfu_step_begin();
	st = dnnl_sgemm('N', 'N', 32, 24, 16, 1.0f, a, 8, b, 24, 0.0f, c, 24);
	printf("status dnnl_sgemm_invalid %d\n", (int)st);
	bad |= st == dnnl_success;
	st = dnnl_gemm_s8s8s32('N', 'N', 'F', 8, 8, 8, 1.0f, sa, 8, 0, sb, 8, 0, 0.0f, ic, 8, &co);
	printf("status dnnl_gemm_s8s8s32 %d\n", (int)st);
	bad |= st != dnnl_success;
	mix(ic, 8 * 8 * sizeof(ic[0]));
	mfu_step_end();

	printf("checksum %016llx\n", (unsigned long long)hash);
	return bad;
}
