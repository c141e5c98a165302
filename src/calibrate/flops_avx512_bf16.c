/*
 * AVX512_BF16 dot products (built with -mavx512f -mavx512bf16).
 * VDPBF16PS adds to each of 16 fp32 lanes the two products of a pair of
 * bf16 values: 2 multiply-adds, 4 FLOPs, per lane, 64 per instruction.
 */
#include <immintrin.h>

#include "kernels.h"

double flops_avx512_bf16(uint64_t iters, double x, double y)
{
	const __m512bh a = _mm512_cvtne2ps_pbh(_mm512_set1_ps((float)x), _mm512_set1_ps((float)x));
	const __m512bh b = _mm512_cvtne2ps_pbh(_mm512_set1_ps((float)y), _mm512_set1_ps((float)y));
	__m512 acc[FLOPS_CHAINS];
	double sum = 0;

	_Pragma("GCC unroll 16")
	for (int k = 0; k < FLOPS_CHAINS; k++)
		acc[k] = _mm512_set1_ps(1.0f + k / 64.0f);
	for (uint64_t i = 0; i < iters; i++) {
		_Pragma("GCC unroll 16")
		for (int k = 0; k < FLOPS_CHAINS; k++)
			acc[k] = _mm512_dpbf16_ps(acc[k], a, b);
	}
	_Pragma("GCC unroll 16")
	for (int k = 0; k < FLOPS_CHAINS; k++)
		sum += _mm512_reduce_add_ps(acc[k]);
	return sum;
}
