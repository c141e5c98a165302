/*
 * AVX-VNNI int8 dot products (built with -mavx2 -mavxvnni): the VEX form of
 * VPDPBUSD on ymm registers, which client cores without AVX-512 (Alder
 * Lake and later) and Sapphire Rapids have: 8 int32 lanes x 4 byte products
 * x 2 ops = 64 per instruction.
 */
#include <immintrin.h>

#include "kernels.h"

double flops_avx_vnni(uint64_t iters, double x, double y)
{
	const __m256i a = _mm256_set1_epi8((char)(1 + (int)(x * 3)));
	const __m256i b = _mm256_set1_epi8((char)(1 + (int)(y * 3)));
	__m256i acc[FLOPS_CHAINS];
	double sum = 0;

	_Pragma("GCC unroll 16")
	for (int k = 0; k < FLOPS_CHAINS; k++)
		acc[k] = _mm256_set1_epi32(k);
	for (uint64_t i = 0; i < iters; i++) {
		_Pragma("GCC unroll 16")
		for (int k = 0; k < FLOPS_CHAINS; k++)
			acc[k] = _mm256_dpbusd_avx_epi32(acc[k], a, b);
	}
	_Pragma("GCC unroll 16")
	for (int k = 0; k < FLOPS_CHAINS; k++) {
		int32_t v[8];
		_mm256_storeu_si256((__m256i *)v, acc[k]);
		for (int j = 0; j < 8; j++)
			sum += v[j];
	}
	return sum;
}
