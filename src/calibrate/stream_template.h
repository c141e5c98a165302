/*
 * The STREAM-style memory kernels, instantiated once per ISA by the
 * stream_<isa>.c files, which define before including it:
 *   STREAM_PREFIX(f)    the function name for f (e.g. stream_avx2_##f)
 *   STREAM_ISA          the ISA's name as a string
 *   STREAM_VEC          a vector of doubles
 *   STREAM_W            doubles per vector
 *   STREAM_LOAD(p)      aligned load;  STREAM_STORE(p, v) aligned store
 *   STREAM_STREAM(p, v) non-temporal store (bypasses the caches: no read
 *                       for ownership of the destination line)
 *   STREAM_ADD(a, b), STREAM_MUL(a, b), STREAM_SET1(d), STREAM_ZERO()
 *   STREAM_SUM(v)       the lanes of v added up
 * n is a multiple of STREAM_ALIGN_DOUBLES and the arrays are 64-byte aligned.
 */

static double STREAM_PREFIX(read)(const double *x, size_t n)
{
	/* Four accumulators: the adds must not be the bottleneck. */
	STREAM_VEC s0 = STREAM_ZERO(), s1 = STREAM_ZERO(), s2 = STREAM_ZERO(), s3 = STREAM_ZERO();

	for (size_t i = 0; i < n; i += 4 * STREAM_W) {
		s0 = STREAM_ADD(s0, STREAM_LOAD(x + i));
		s1 = STREAM_ADD(s1, STREAM_LOAD(x + i + STREAM_W));
		s2 = STREAM_ADD(s2, STREAM_LOAD(x + i + 2 * STREAM_W));
		s3 = STREAM_ADD(s3, STREAM_LOAD(x + i + 3 * STREAM_W));
	}
	return STREAM_SUM(STREAM_ADD(STREAM_ADD(s0, s1), STREAM_ADD(s2, s3)));
}

static void STREAM_PREFIX(copy)(double *restrict dst, const double *restrict src, size_t n)
{
	_Pragma("GCC unroll 4")
	for (size_t i = 0; i < n; i += STREAM_W)
		STREAM_STORE(dst + i, STREAM_LOAD(src + i));
}

static void STREAM_PREFIX(copy_nt)(double *restrict dst, const double *restrict src, size_t n)
{
	_Pragma("GCC unroll 4")
	for (size_t i = 0; i < n; i += STREAM_W)
		STREAM_STREAM(dst + i, STREAM_LOAD(src + i));
	/* Non-temporal stores are weakly ordered: drain them before the
	 * clock stops (and before another thread reads the data). */
	_mm_sfence();
}

static void STREAM_PREFIX(triad)(double *restrict a, const double *restrict b,
				 const double *restrict c, double s, size_t n)
{
	const STREAM_VEC vs = STREAM_SET1(s);

	_Pragma("GCC unroll 4")
	for (size_t i = 0; i < n; i += STREAM_W)
		STREAM_STORE(a + i, STREAM_ADD(STREAM_LOAD(b + i), STREAM_MUL(vs, STREAM_LOAD(c + i))));
}

static void STREAM_PREFIX(triad_nt)(double *restrict a, const double *restrict b,
				    const double *restrict c, double s, size_t n)
{
	const STREAM_VEC vs = STREAM_SET1(s);

	_Pragma("GCC unroll 4")
	for (size_t i = 0; i < n; i += STREAM_W)
		STREAM_STREAM(a + i, STREAM_ADD(STREAM_LOAD(b + i), STREAM_MUL(vs, STREAM_LOAD(c + i))));
	_mm_sfence();
}

const struct stream_kernels STREAM_PREFIX(kernels) = {
	.isa = STREAM_ISA,
	.read = STREAM_PREFIX(read),
	.copy = STREAM_PREFIX(copy),
	.copy_nt = STREAM_PREFIX(copy_nt),
	.triad = STREAM_PREFIX(triad),
	.triad_nt = STREAM_PREFIX(triad_nt),
};
