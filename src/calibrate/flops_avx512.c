/* AVX-512F FMA kernels (built with -mavx512f). */
#include <immintrin.h>

#include "kernels.h"

#define FLOPS_NAME flops_avx512_fp64
#define FLOPS_VEC __m512d
#define FLOPS_SET1(d) _mm512_set1_pd(d)
#define FLOPS_FMA(a, b, c) _mm512_fmadd_pd(a, b, c)
#define FLOPS_SUM(v) _mm512_reduce_add_pd(v)
#include "flops_chain.h"

#define FLOPS_NAME flops_avx512_fp32
#define FLOPS_VEC __m512
#define FLOPS_SET1(d) _mm512_set1_ps((float)(d))
#define FLOPS_FMA(a, b, c) _mm512_fmadd_ps(a, b, c)
#define FLOPS_SUM(v) (double)_mm512_reduce_add_ps(v)
#include "flops_chain.h"
