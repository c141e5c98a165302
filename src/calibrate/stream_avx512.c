/* STREAM kernels with 512-bit vectors (built with -mavx512f): a whole cache
 * line per load or store. */
#include <immintrin.h>

#include "kernels.h"

#define STREAM_PREFIX(f) stream_avx512_##f
#define STREAM_ISA "avx512"
#define STREAM_VEC __m512d
#define STREAM_W 8
#define STREAM_LOAD(p) _mm512_load_pd(p)
#define STREAM_STORE(p, v) _mm512_store_pd(p, v)
#define STREAM_STREAM(p, v) _mm512_stream_pd(p, v)
#define STREAM_ADD(a, b) _mm512_add_pd(a, b)
#define STREAM_MUL(a, b) _mm512_mul_pd(a, b)
#define STREAM_SET1(d) _mm512_set1_pd(d)
#define STREAM_ZERO() _mm512_setzero_pd()
#define STREAM_SUM(v) _mm512_reduce_add_pd(v)
#include "stream_template.h"
