/*
 * SSE2 kernels (the x86-64 baseline, built with -msse2): no FMA, so half
 * the chains multiply and half add, each a separate instruction and one
 * FLOP per lane. The multiplier is x + y (1.0): a chain multiplied by
 * 0.999 would turn denormal within a million iterations and slow down
 * a hundredfold.
 */
#include <emmintrin.h>

#include "kernels.h"

#define HALF (FLOPS_CHAINS / 2)

double flops_sse2_fp64(uint64_t iters, double x, double y)
{
	const __m128d vm = _mm_set1_pd(x + y), va = _mm_set1_pd(y);
	__m128d mul[HALF], add[HALF];
	double lanes[2], sum = 0;

	_Pragma("GCC unroll 16")
	for (int k = 0; k < HALF; k++) {
		mul[k] = _mm_set1_pd(1.0 + k / 64.0);
		add[k] = _mm_set1_pd(2.0 + k / 64.0);
	}
	for (uint64_t i = 0; i < iters; i++) {
		_Pragma("GCC unroll 16")
		for (int k = 0; k < HALF; k++) {
			mul[k] = _mm_mul_pd(mul[k], vm);
			add[k] = _mm_add_pd(add[k], va);
		}
	}
	_Pragma("GCC unroll 16")
	for (int k = 0; k < HALF; k++) {
		_mm_storeu_pd(lanes, _mm_add_pd(mul[k], add[k]));
		sum += lanes[0] + lanes[1];
	}
	return sum;
}

double flops_sse2_fp32(uint64_t iters, double x, double y)
{
	const __m128 vm = _mm_set1_ps((float)(x + y)), va = _mm_set1_ps((float)y);
	__m128 mul[HALF], add[HALF];
	float lanes[4];
	double sum = 0;

	_Pragma("GCC unroll 16")
	for (int k = 0; k < HALF; k++) {
		mul[k] = _mm_set1_ps(1.0f + k / 64.0f);
		add[k] = _mm_set1_ps(2.0f + k / 64.0f);
	}
	for (uint64_t i = 0; i < iters; i++) {
		_Pragma("GCC unroll 16")
		for (int k = 0; k < HALF; k++) {
			mul[k] = _mm_mul_ps(mul[k], vm);
			add[k] = _mm_add_ps(add[k], va);
		}
	}
	_Pragma("GCC unroll 16")
	for (int k = 0; k < HALF; k++) {
		_mm_storeu_ps(lanes, _mm_add_ps(mul[k], add[k]));
		sum += (double)lanes[0] + lanes[1] + lanes[2] + lanes[3];
	}
	return sum;
}
