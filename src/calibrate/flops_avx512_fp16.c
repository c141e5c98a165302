/* AVX512_FP16 FMA (built with -mavx512f -mavx512fp16): 32 fp16 lanes per
 * zmm register, 64 FLOPs per instruction. */
#include <immintrin.h>

#include "kernels.h"

static double sum_ph(__m512h v)
{
	_Float16 h[32];
	double s = 0;

	_mm512_storeu_ph(h, v);
	for (int i = 0; i < 32; i++)
		s += (double)h[i];
	return s;
}

#define FLOPS_NAME flops_avx512_fp16
#define FLOPS_VEC __m512h
#define FLOPS_SET1(d) _mm512_set1_ph((_Float16)(d))
#define FLOPS_FMA(a, b, c) _mm512_fmadd_ph(a, b, c)
#define FLOPS_SUM(v) sum_ph(v)
#include "flops_chain.h"
