/*
 * The body of an FMA kernel, instantiated once per ISA and dtype by the
 * flops_<isa>.c files, which define before including it:
 *   FLOPS_NAME        the function name
 *   FLOPS_VEC         the vector type
 *   FLOPS_SET1(d)     broadcast the double d
 *   FLOPS_FMA(a,b,c)  a * b + c as one fused instruction
 *   FLOPS_SUM(v)      the lanes of v added up, as a double
 * One iteration is FLOPS_CHAINS FMAs, each in its own dependency chain.
 */
double FLOPS_NAME(uint64_t iters, double x, double y)
{
	const FLOPS_VEC vx = FLOPS_SET1(x), vy = FLOPS_SET1(y);
	FLOPS_VEC acc[FLOPS_CHAINS];
	double sum = 0;

	/* Distinct starting values: identical chains could be merged into
	 * one by the compiler (GCC does). */
	_Pragma("GCC unroll 16")
	for (int k = 0; k < FLOPS_CHAINS; k++)
		acc[k] = FLOPS_SET1(1.0 + k / 64.0);
	for (uint64_t i = 0; i < iters; i++) {
		_Pragma("GCC unroll 16")
		for (int k = 0; k < FLOPS_CHAINS; k++)
			acc[k] = FLOPS_FMA(acc[k], vx, vy);
	}
	_Pragma("GCC unroll 16")
	for (int k = 0; k < FLOPS_CHAINS; k++)
		sum += FLOPS_SUM(acc[k]);
	return sum;
}

#undef FLOPS_NAME
#undef FLOPS_VEC
#undef FLOPS_SET1
#undef FLOPS_FMA
#undef FLOPS_SUM
