/* STREAM kernels with 256-bit AVX vectors (built with -mavx2). */
#include <immintrin.h>

#include "kernels.h"

static double sum_pd(__m256d v)
{
	__m128d s = _mm_add_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd(v, 1));
	return _mm_cvtsd_f64(_mm_add_sd(s, _mm_unpackhi_pd(s, s)));
}

#define STREAM_PREFIX(f) stream_avx2_##f
#define STREAM_ISA "avx2"
#define STREAM_VEC __m256d
#define STREAM_W 4
#define STREAM_LOAD(p) _mm256_load_pd(p)
#define STREAM_STORE(p, v) _mm256_store_pd(p, v)
#define STREAM_STREAM(p, v) _mm256_stream_pd(p, v)
#define STREAM_ADD(a, b) _mm256_add_pd(a, b)
#define STREAM_MUL(a, b) _mm256_mul_pd(a, b)
#define STREAM_SET1(d) _mm256_set1_pd(d)
#define STREAM_ZERO() _mm256_setzero_pd()
#define STREAM_SUM(v) sum_pd(v)
#include "stream_template.h"
