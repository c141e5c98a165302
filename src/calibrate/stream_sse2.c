/* STREAM kernels with 128-bit SSE2 vectors (built with -msse2). */
#include <emmintrin.h>

#include "kernels.h"

static double sum_pd(__m128d v)
{
	return _mm_cvtsd_f64(_mm_add_sd(v, _mm_unpackhi_pd(v, v)));
}

#define STREAM_PREFIX(f) stream_sse2_##f
#define STREAM_ISA "sse2"
#define STREAM_VEC __m128d
#define STREAM_W 2
#define STREAM_LOAD(p) _mm_load_pd(p)
#define STREAM_STORE(p, v) _mm_store_pd(p, v)
#define STREAM_STREAM(p, v) _mm_stream_pd(p, v)
#define STREAM_ADD(a, b) _mm_add_pd(a, b)
#define STREAM_MUL(a, b) _mm_mul_pd(a, b)
#define STREAM_SET1(d) _mm_set1_pd(d)
#define STREAM_ZERO() _mm_setzero_pd()
#define STREAM_SUM(v) sum_pd(v)
#include "stream_template.h"
