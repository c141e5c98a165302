/* AVX2 + FMA kernels (built with -mavx2 -mfma). */
#include <immintrin.h>

#include "kernels.h"

static double sum_pd(__m256d v)
{
	__m128d s = _mm_add_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd(v, 1));
	return _mm_cvtsd_f64(_mm_add_sd(s, _mm_unpackhi_pd(s, s)));
}

static double sum_ps(__m256 v)
{
	float f[8];
	double s = 0;

	_mm256_storeu_ps(f, v);
	for (int i = 0; i < 8; i++)
		s += f[i];
	return s;
}

#define FLOPS_NAME flops_avx2_fp64
#define FLOPS_VEC __m256d
#define FLOPS_SET1(d) _mm256_set1_pd(d)
#define FLOPS_FMA(a, b, c) _mm256_fmadd_pd(a, b, c)
#define FLOPS_SUM(v) sum_pd(v)
#include "flops_chain.h"

#define FLOPS_NAME flops_avx2_fp32
#define FLOPS_VEC __m256
#define FLOPS_SET1(d) _mm256_set1_ps((float)(d))
#define FLOPS_FMA(a, b, c) _mm256_fmadd_ps(a, b, c)
#define FLOPS_SUM(v) sum_ps(v)
#include "flops_chain.h"
