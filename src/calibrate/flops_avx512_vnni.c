/*
 * AVX512-VNNI int8 dot products (built with -mavx512f -mavx512vnni).
 * VPDPBUSD adds to each of 16 int32 lanes the four products of unsigned by
 * signed bytes: 4 multiply-adds, 8 integer ops, per lane, 128 per
 * instruction. Integer lanes wrap around; the values do not matter, only
 * that every instruction runs.
 */
#include <immintrin.h>

#include "kernels.h"

double flops_avx512_vnni(uint64_t iters, double x, double y)
{
	const __m512i a = _mm512_set1_epi8((char)(1 + (int)(x * 3)));
	const __m512i b = _mm512_set1_epi8((char)(1 + (int)(y * 3)));
	__m512i acc[FLOPS_CHAINS];
	double sum = 0;

	_Pragma("GCC unroll 16")
	for (int k = 0; k < FLOPS_CHAINS; k++)
		acc[k] = _mm512_set1_epi32(k);
	for (uint64_t i = 0; i < iters; i++) {
		_Pragma("GCC unroll 16")
		for (int k = 0; k < FLOPS_CHAINS; k++)
			acc[k] = _mm512_dpbusd_epi32(acc[k], a, b);
	}
	_Pragma("GCC unroll 16")
	for (int k = 0; k < FLOPS_CHAINS; k++)
		sum += (double)_mm512_reduce_add_epi32(acc[k]);
	return sum;
}
