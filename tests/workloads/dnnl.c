/*
 * dnnl: oneDNN's GEMM functions and primitives with known sizes, for the
 * library-call counting tests (tests/e2e/test_libflops.py). One step each:
 *   0: dnnl_sgemm 32x24x16                       2 * 32 * 24 * 16 fp32 FLOPs
 *   1: dnnl_gemm_u8s8s32 16x8x64                 2 * 16 * 8 * 64 int8 ops
 *   2: dnnl_sgemm with lda < k (rejected: an error status, no work),
 *      then dnnl_gemm_s8s8s32 8x8x8              2 * 8^3 int8 ops
 * Primitives (dnnl_primitive_execute), f32 in plain layouts:
 *   3: a convolution with groups, strides, dilation and padding: src
 *      2x6x10x12, 8 output channels in 2 groups, kernel 3x3, stride 2x1,
 *      dilation 0x1 (oneDNN's: kernel width 5 with its gaps), padding 1x0,
 *      bias: dst 2x8x5x8; forward twice, backward data, backward weights
 *   4: a deconvolution: src 2x4x5x5, 6 output channels, kernel 3x3,
 *      stride 2, padding 1: dst 2x6x9x9; forward, backward data
 *   5: an inner product: src 4x3x5x5, 7 outputs; forward, backward data,
 *      backward weights
 *   6: matmuls: 3x5x6 times 1x6x4 (broadcast); 9x6 times 6x4 from a
 *      descriptor with a run-time M (DNNL_RUNTIME_DIM_VAL)
 *   7: matmuls in int8 (u8 x s8 -> s32) and bf16 (-> f32), 4x8 times 8x3,
 *      where this CPU has an implementation ("unimplemented" otherwise)
 *   8: no FLOPs counted: eltwise ReLU and max pooling (kinds whose FLOPs
 *      are not counted: unknown), a reorder (data movement: 0)
 *   9: a convolution executed and destroyed, then another of other sizes
 *      (likely at the same address: "reused 1"): src 1x2x4x4 to 2
 *      channels, then 1x4x6x6 to 4, kernel 3x3, padding 1
 * Prints each call's status ("status NAME CODE"), the destination shapes
 * of step 3 and 4 ("dims NAME D0xD1..."), and "checksum HEX" of the
 * results.
 */
#include <oneapi/dnnl/dnnl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "mfu.h"

static uint64_t hash = 0xcbf29ce484222325ull;
static int bad;

static void mix(const void *p, size_t len)
{
	const unsigned char *b = p;
	for (size_t i = 0; i < len; i++)
		hash = (hash ^ b[i]) * 0x100000001b3ull;
}

static float a[32 * 64], b[64 * 24], c[32 * 24];
static uint8_t ua[16 * 64];
static int8_t sa[16 * 64], sb[64 * 8];
static int32_t ic[16 * 8], co;

static void gemms(void)
{
	dnnl_status_t st;

	for (int i = 0; i < 32 * 64; i++)
		a[i] = 0.25f * (float)((i * 7) % 13) - 1.0f;
	for (int i = 0; i < 64 * 24; i++)
		b[i] = 0.5f * (float)((i * 3) % 5) - 1.0f;
	for (int i = 0; i < 16 * 64; i++) {
		ua[i] = (uint8_t)(i * 13);
		sa[i] = (int8_t)((i * 5) % 17 - 8);
	}
	for (int i = 0; i < 64 * 8; i++)
		sb[i] = (int8_t)((i * 11) % 23 - 11);

	/* row-major: A m x k (lda k), B k x n (ldb n), C m x n (ldc n) */
	mfu_step_begin();
	st = dnnl_sgemm('N', 'N', 32, 24, 16, 1.0f, a, 16, b, 24, 0.0f, c, 24);
	printf("status dnnl_sgemm %d\n", (int)st);
	bad |= st != dnnl_success;
	mix(c, sizeof(c));
	mfu_step_end();

	mfu_step_begin();
	st = dnnl_gemm_u8s8s32('N', 'N', 'F', 16, 8, 64, 1.0f, ua, 64, 0, sb, 8, 0, 0.0f, ic, 8, &co);
	printf("status dnnl_gemm_u8s8s32 %d\n", (int)st);
	bad |= st != dnnl_success;
	mix(ic, sizeof(ic));
	mfu_step_end();

	mfu_step_begin();
	st = dnnl_sgemm('N', 'N', 32, 24, 16, 1.0f, a, 8, b, 24, 0.0f, c, 24);
	printf("status dnnl_sgemm_invalid %d\n", (int)st);
	bad |= st == dnnl_success;
	st = dnnl_gemm_s8s8s32('N', 'N', 'F', 8, 8, 8, 1.0f, sa, 8, 0, sb, 8, 0, 0.0f, ic, 8, &co);
	printf("status dnnl_gemm_s8s8s32 %d\n", (int)st);
	bad |= st != dnnl_success;
	mix(ic, 8 * 8 * sizeof(ic[0]));
	mfu_step_end();
}

/* ---- primitives ---- */

static dnnl_engine_t eng;
static dnnl_stream_t strm;

#define MAXMEM 16
static dnnl_memory_t mems[MAXMEM];
static int nmems;

static dnnl_memory_desc_t md(int nd, const dnnl_dims_t dims, dnnl_data_type_t dt, dnnl_format_tag_t tag)
{
	dnnl_memory_desc_t m;
	if (dnnl_memory_desc_init_by_tag(&m, nd, dims, dt, tag) != dnnl_success) {
		printf("status memory_desc %d\n", -1);
		bad = 1;
		memset(&m, 0, sizeof(m));
	}
	return m;
}

/* A memory object of @m filled with a pattern (bytes that are small
 * numbers in any of the types used here). */
static dnnl_memory_t mem(const dnnl_memory_desc_t *m)
{
	dnnl_memory_t x = NULL;
	void *p = NULL;
	size_t size = dnnl_memory_desc_get_size(m);

	if (nmems == MAXMEM || dnnl_memory_create(&x, m, eng, DNNL_MEMORY_ALLOCATE) != dnnl_success ||
	    dnnl_memory_get_data_handle(x, &p) != dnnl_success) {
		bad = 1;
		return x;
	}
	if (m->data_type == dnnl_f32) {
		for (size_t i = 0; i < size / 4; i++)
			((float *)p)[i] = 0.125f * (float)((i * 7) % 11) - 0.5f;
	} else {
		for (size_t i = 0; i < size; i++)
			((uint8_t *)p)[i] = (uint8_t)((i * 5) % 7);
		if (m->data_type == dnnl_bf16)
			for (size_t i = 0; i < size / 2; i++)
				((uint16_t *)p)[i] = (uint16_t)(0x3f00 + (i % 5) * 0x40); /* 0.5 .. 1.5 */
	}
	mems[nmems++] = x;
	return x;
}

static void mix_mem(dnnl_memory_t x)
{
	const dnnl_memory_desc_t *m;
	void *p;
	if (x && dnnl_memory_get_memory_desc(x, &m) == dnnl_success &&
	    dnnl_memory_get_data_handle(x, &p) == dnnl_success)
		mix(p, dnnl_memory_desc_get_size(m));
}

static void free_mems(void)
{
	for (int i = 0; i < nmems; i++)
		dnnl_memory_destroy(mems[i]);
	nmems = 0;
}

/* A primitive from the operation descriptor @op_desc (NULL: @pd given),
 * or NULL with "status NAME unimplemented" when this CPU has none. */
static dnnl_primitive_t prim(const char *name, const void *op_desc, const_dnnl_primitive_desc_t hint,
			     dnnl_primitive_desc_t *pd_out)
{
	dnnl_primitive_desc_t pd = NULL;
	dnnl_primitive_t p = NULL;
	dnnl_status_t st = dnnl_primitive_desc_create(&pd, op_desc, NULL, eng, hint);

	if (st == dnnl_unimplemented) {
		printf("status %s unimplemented\n", name);
		return NULL;
	}
	if (st != dnnl_success || dnnl_primitive_create(&p, pd) != dnnl_success) {
		printf("status %s create %d\n", name, (int)st);
		bad = 1;
		dnnl_primitive_desc_destroy(pd);
		return NULL;
	}
	if (pd_out)
		*pd_out = pd;
	else
		dnnl_primitive_desc_destroy(pd);
	return p;
}

static void run(const char *name, dnnl_primitive_t p, int nargs, const dnnl_exec_arg_t *args)
{
	dnnl_status_t st = dnnl_primitive_execute(p, strm, nargs, args);
	if (st == dnnl_success)
		st = dnnl_stream_wait(strm);
	printf("status %s %d\n", name, (int)st);
	bad |= st != dnnl_success;
}

static void print_dims(const char *name, const dnnl_memory_desc_t *m)
{
	printf("dims %s ", name);
	for (int i = 0; i < m->ndims; i++)
		printf("%s%lld", i ? "x" : "", (long long)m->dims[i]);
	printf("\n");
}

static void convolution(void)
{
	const dnnl_dims_t sd = { 2, 6, 10, 12 }, wd = { 2, 4, 3, 3, 3 }, bd = { 8 }, dd = { 2, 8, 5, 8 };
	const dnnl_dims_t strides = { 2, 1 }, dilates = { 0, 1 }, pad = { 1, 0 };
	dnnl_memory_desc_t s = md(4, sd, dnnl_f32, dnnl_nchw), w = md(5, wd, dnnl_f32, dnnl_goihw),
			   bi = md(1, bd, dnnl_f32, dnnl_a), d = md(4, dd, dnnl_f32, dnnl_nchw);
	dnnl_convolution_desc_t fd, bdd, bwd;
	dnnl_primitive_desc_t fpd = NULL;
	dnnl_primitive_t fwd, bwd_data, bwd_weights;

	dnnl_dilated_convolution_forward_desc_init(&fd, dnnl_forward_training, dnnl_convolution_direct, &s, &w, &bi,
						   &d, strides, dilates, pad, pad);
	dnnl_dilated_convolution_backward_data_desc_init(&bdd, dnnl_convolution_direct, &s, &w, &d, strides, dilates,
							 pad, pad);
	dnnl_dilated_convolution_backward_weights_desc_init(&bwd, dnnl_convolution_direct, &s, &w, &bi, &d, strides,
							    dilates, pad, pad);
	fwd = prim("conv_fwd", &fd, NULL, &fpd);
	bwd_data = prim("conv_bwd_data", &bdd, fpd, NULL);
	bwd_weights = prim("conv_bwd_weights", &bwd, fpd, NULL);
	if (fpd)
		print_dims("conv_dst", dnnl_primitive_desc_query_md(fpd, dnnl_query_dst_md, 0));
	dnnl_memory_t ms = mem(&s), mw = mem(&w), mb = mem(&bi), md_ = mem(&d);
	mfu_step_begin();
	if (fwd) {
		dnnl_exec_arg_t args[] = { { DNNL_ARG_SRC, ms }, { DNNL_ARG_WEIGHTS, mw }, { DNNL_ARG_BIAS, mb },
					   { DNNL_ARG_DST, md_ } };
		run("conv_fwd", fwd, 4, args);
		run("conv_fwd", fwd, 4, args);
		mix_mem(md_);
	}
	if (bwd_data) {
		dnnl_exec_arg_t args[] = { { DNNL_ARG_DIFF_DST, md_ }, { DNNL_ARG_WEIGHTS, mw },
					   { DNNL_ARG_DIFF_SRC, ms } };
		run("conv_bwd_data", bwd_data, 3, args);
		mix_mem(ms);
	}
	if (bwd_weights) {
		dnnl_exec_arg_t args[] = { { DNNL_ARG_SRC, ms }, { DNNL_ARG_DIFF_DST, md_ },
					   { DNNL_ARG_DIFF_WEIGHTS, mw }, { DNNL_ARG_DIFF_BIAS, mb } };
		run("conv_bwd_weights", bwd_weights, 4, args);
		mix_mem(mw);
		mix_mem(mb);
	}
	mfu_step_end();
	dnnl_primitive_destroy(fwd);
	dnnl_primitive_destroy(bwd_data);
	dnnl_primitive_destroy(bwd_weights);
	dnnl_primitive_desc_destroy(fpd);
	free_mems();
}

static void deconvolution(void)
{
	const dnnl_dims_t sd = { 2, 4, 5, 5 }, wd = { 6, 4, 3, 3 }, dd = { 2, 6, 9, 9 };
	const dnnl_dims_t strides = { 2, 2 }, dilates = { 0, 0 }, pad = { 1, 1 };
	dnnl_memory_desc_t s = md(4, sd, dnnl_f32, dnnl_nchw), w = md(4, wd, dnnl_f32, dnnl_oihw),
			   d = md(4, dd, dnnl_f32, dnnl_nchw);
	dnnl_deconvolution_desc_t fd, bdd;
	dnnl_primitive_desc_t fpd = NULL;
	dnnl_primitive_t fwd, bwd_data;

	dnnl_dilated_deconvolution_forward_desc_init(&fd, dnnl_forward_training, dnnl_deconvolution_direct, &s, &w,
						     NULL, &d, strides, dilates, pad, pad);
	dnnl_dilated_deconvolution_backward_data_desc_init(&bdd, dnnl_deconvolution_direct, &s, &w, &d, strides,
							   dilates, pad, pad);
	fwd = prim("deconv_fwd", &fd, NULL, &fpd);
	bwd_data = prim("deconv_bwd_data", &bdd, fpd, NULL);
	if (fpd)
		print_dims("deconv_dst", dnnl_primitive_desc_query_md(fpd, dnnl_query_dst_md, 0));
	dnnl_memory_t ms = mem(&s), mw = mem(&w), md_ = mem(&d);
	mfu_step_begin();
	if (fwd) {
		dnnl_exec_arg_t args[] = { { DNNL_ARG_SRC, ms }, { DNNL_ARG_WEIGHTS, mw }, { DNNL_ARG_DST, md_ } };
		run("deconv_fwd", fwd, 3, args);
		mix_mem(md_);
	}
	if (bwd_data) {
		dnnl_exec_arg_t args[] = { { DNNL_ARG_DIFF_DST, md_ }, { DNNL_ARG_WEIGHTS, mw },
					   { DNNL_ARG_DIFF_SRC, ms } };
		run("deconv_bwd_data", bwd_data, 3, args);
		mix_mem(ms);
	}
	mfu_step_end();
	dnnl_primitive_destroy(fwd);
	dnnl_primitive_destroy(bwd_data);
	dnnl_primitive_desc_destroy(fpd);
	free_mems();
}

static void inner_product(void)
{
	const dnnl_dims_t sd = { 4, 3, 5, 5 }, wd = { 7, 3, 5, 5 }, bd = { 7 }, dd = { 4, 7 };
	dnnl_memory_desc_t s = md(4, sd, dnnl_f32, dnnl_nchw), w = md(4, wd, dnnl_f32, dnnl_oihw),
			   bi = md(1, bd, dnnl_f32, dnnl_a), d = md(2, dd, dnnl_f32, dnnl_nc);
	dnnl_inner_product_desc_t fd, bdd, bwd;
	dnnl_primitive_desc_t fpd = NULL;
	dnnl_primitive_t fwd, bwd_data, bwd_weights;

	dnnl_inner_product_forward_desc_init(&fd, dnnl_forward_training, &s, &w, &bi, &d);
	dnnl_inner_product_backward_data_desc_init(&bdd, &s, &w, &d);
	dnnl_inner_product_backward_weights_desc_init(&bwd, &s, &w, &bi, &d);
	fwd = prim("ip_fwd", &fd, NULL, &fpd);
	bwd_data = prim("ip_bwd_data", &bdd, fpd, NULL);
	bwd_weights = prim("ip_bwd_weights", &bwd, fpd, NULL);
	dnnl_memory_t ms = mem(&s), mw = mem(&w), mb = mem(&bi), md_ = mem(&d);
	mfu_step_begin();
	if (fwd) {
		dnnl_exec_arg_t args[] = { { DNNL_ARG_SRC, ms }, { DNNL_ARG_WEIGHTS, mw }, { DNNL_ARG_BIAS, mb },
					   { DNNL_ARG_DST, md_ } };
		run("ip_fwd", fwd, 4, args);
		mix_mem(md_);
	}
	if (bwd_data) {
		dnnl_exec_arg_t args[] = { { DNNL_ARG_DIFF_DST, md_ }, { DNNL_ARG_WEIGHTS, mw },
					   { DNNL_ARG_DIFF_SRC, ms } };
		run("ip_bwd_data", bwd_data, 3, args);
		mix_mem(ms);
	}
	if (bwd_weights) {
		dnnl_exec_arg_t args[] = { { DNNL_ARG_SRC, ms }, { DNNL_ARG_DIFF_DST, md_ },
					   { DNNL_ARG_DIFF_WEIGHTS, mw }, { DNNL_ARG_DIFF_BIAS, mb } };
		run("ip_bwd_weights", bwd_weights, 4, args);
		mix_mem(mw);
	}
	mfu_step_end();
	dnnl_primitive_destroy(fwd);
	dnnl_primitive_destroy(bwd_data);
	dnnl_primitive_destroy(bwd_weights);
	dnnl_primitive_desc_destroy(fpd);
	free_mems();
}

/* One matmul @m x @k times @k x @n of types @st, @wt -> @dt ("status
 * NAME unimplemented" where this CPU has none); @runtime_m: the
 * descriptor's M is DNNL_RUNTIME_DIM_VAL, the memory's is @m. */
static void matmul2(const char *name, dnnl_dim_t m, dnnl_dim_t k, dnnl_dim_t n, dnnl_data_type_t st,
		    dnnl_data_type_t wt, dnnl_data_type_t dt, int runtime_m)
{
	const dnnl_dims_t sd = { m, k }, wd = { k, n }, dd = { m, n };
	const dnnl_dims_t rsd = { DNNL_RUNTIME_DIM_VAL, k }, rdd = { DNNL_RUNTIME_DIM_VAL, n };
	dnnl_memory_desc_t s = md(2, sd, st, dnnl_ab), w = md(2, wd, wt, dnnl_ab), d = md(2, dd, dt, dnnl_ab);
	dnnl_memory_desc_t ps = runtime_m ? md(2, rsd, st, dnnl_ab) : s, pdst = runtime_m ? md(2, rdd, dt, dnnl_ab) : d;
	dnnl_matmul_desc_t op;
	dnnl_primitive_t p;

	dnnl_matmul_desc_init(&op, &ps, &w, NULL, &pdst);
	p = prim(name, &op, NULL, NULL);
	if (p) {
		dnnl_memory_t ms = mem(&s), mw = mem(&w), md_ = mem(&d);
		dnnl_exec_arg_t args[] = { { DNNL_ARG_SRC, ms }, { DNNL_ARG_WEIGHTS, mw }, { DNNL_ARG_DST, md_ } };
		run(name, p, 3, args);
		mix_mem(md_);
	}
	dnnl_primitive_destroy(p);
	free_mems();
}

static void matmuls(void)
{
	const dnnl_dims_t sd = { 3, 5, 6 }, wd = { 1, 6, 4 }, dd = { 3, 5, 4 };
	dnnl_memory_desc_t s = md(3, sd, dnnl_f32, dnnl_abc), w = md(3, wd, dnnl_f32, dnnl_abc),
			   d = md(3, dd, dnnl_f32, dnnl_abc);
	dnnl_matmul_desc_t op;
	dnnl_primitive_t p;

	mfu_step_begin();
	dnnl_matmul_desc_init(&op, &s, &w, NULL, &d);
	p = prim("matmul_batch", &op, NULL, NULL);
	if (p) {
		dnnl_memory_t ms = mem(&s), mw = mem(&w), md_ = mem(&d);
		dnnl_exec_arg_t args[] = { { DNNL_ARG_SRC, ms }, { DNNL_ARG_WEIGHTS, mw }, { DNNL_ARG_DST, md_ } };
		run("matmul_batch", p, 3, args);
		mix_mem(md_);
	}
	dnnl_primitive_destroy(p);
	free_mems();
	matmul2("matmul_runtime", 9, 6, 4, dnnl_f32, dnnl_f32, dnnl_f32, 1);
	mfu_step_end();

	mfu_step_begin();
	matmul2("matmul_int8", 4, 8, 3, dnnl_u8, dnnl_s8, dnnl_s32, 0);
	matmul2("matmul_bf16", 4, 8, 3, dnnl_bf16, dnnl_bf16, dnnl_f32, 0);
	mfu_step_end();
}

static void no_flops(void)
{
	const dnnl_dims_t sd = { 2, 8, 5, 8 }, pd = { 2, 8, 2, 4 };
	const dnnl_dims_t k = { 2, 2 }, z = { 0, 0 };
	dnnl_memory_desc_t s = md(4, sd, dnnl_f32, dnnl_nchw), s2 = md(4, sd, dnnl_f32, dnnl_nhwc),
			   d = md(4, pd, dnnl_f32, dnnl_nchw);
	dnnl_eltwise_desc_t el;
	dnnl_pooling_desc_t po;
	dnnl_primitive_desc_t rpd = NULL;
	dnnl_primitive_t relu, pool, reorder = NULL;

	dnnl_eltwise_forward_desc_init(&el, dnnl_forward_inference, dnnl_eltwise_relu, &s, 0.0f, 0.0f);
	dnnl_pooling_forward_desc_init(&po, dnnl_forward_inference, dnnl_pooling_max, &s, &d, k, k, z, z);
	relu = prim("relu", &el, NULL, NULL);
	pool = prim("pool", &po, NULL, NULL);
	if (dnnl_reorder_primitive_desc_create(&rpd, &s, eng, &s2, eng, NULL) != dnnl_success ||
	    dnnl_primitive_create(&reorder, rpd) != dnnl_success) {
		printf("status reorder create -1\n");
		bad = 1;
	}
	dnnl_memory_t ms = mem(&s), ms2 = mem(&s2), md_ = mem(&d);
	mfu_step_begin();
	if (relu) {
		dnnl_exec_arg_t args[] = { { DNNL_ARG_SRC, ms }, { DNNL_ARG_DST, ms } };
		run("relu", relu, 2, args);
	}
	if (pool) {
		dnnl_exec_arg_t args[] = { { DNNL_ARG_SRC, ms }, { DNNL_ARG_DST, md_ } };
		run("pool", pool, 2, args);
		mix_mem(md_);
	}
	if (reorder) {
		dnnl_exec_arg_t args[] = { { DNNL_ARG_FROM, ms }, { DNNL_ARG_TO, ms2 } };
		run("reorder", reorder, 2, args);
		mix_mem(ms2);
	}
	mfu_step_end();
	dnnl_primitive_destroy(relu);
	dnnl_primitive_destroy(pool);
	dnnl_primitive_destroy(reorder);
	dnnl_primitive_desc_destroy(rpd);
	free_mems();
}

/* A convolution (kernel 3x3, padding 1) of a 1 x @ic x @hw x @hw source to
 * @oc channels, created, executed once and destroyed; returns the
 * primitive's address (compared only). */
static uintptr_t conv_once(dnnl_dim_t ic, dnnl_dim_t oc, dnnl_dim_t hw)
{
	const dnnl_dims_t sd = { 1, ic, hw, hw }, wd = { oc, ic, 3, 3 }, dd = { 1, oc, hw, hw };
	const dnnl_dims_t one = { 1, 1 }, zero = { 0, 0 };
	dnnl_memory_desc_t s = md(4, sd, dnnl_f32, dnnl_nchw), w = md(4, wd, dnnl_f32, dnnl_oihw),
			   d = md(4, dd, dnnl_f32, dnnl_nchw);
	dnnl_convolution_desc_t fd;
	dnnl_primitive_t p;
	uintptr_t addr;

	dnnl_dilated_convolution_forward_desc_init(&fd, dnnl_forward_inference, dnnl_convolution_direct, &s, &w, NULL,
						   &d, one, zero, one, one);
	p = prim("conv_once", &fd, NULL, NULL);
	addr = (uintptr_t)p;
	if (p) {
		dnnl_memory_t ms = mem(&s), mw = mem(&w), md_ = mem(&d);
		dnnl_exec_arg_t args[] = { { DNNL_ARG_SRC, ms }, { DNNL_ARG_WEIGHTS, mw }, { DNNL_ARG_DST, md_ } };
		run("conv_once", p, 3, args);
		mix_mem(md_);
	}
	dnnl_primitive_destroy(p);
	free_mems();
	return addr;
}

int main(void)
{
	gemms();
	if (dnnl_engine_create(&eng, dnnl_cpu, 0) != dnnl_success ||
	    dnnl_stream_create(&strm, eng, dnnl_stream_default_flags) != dnnl_success) {
		printf("status engine -1\n");
		return 1;
	}
	convolution();
	deconvolution();
	inner_product();
	matmuls();
	no_flops();
	mfu_step_begin();
	uintptr_t first = conv_once(2, 2, 4), second = conv_once(4, 4, 6);
	mfu_step_end();
	printf("reused %d\n", first == second);
	dnnl_stream_destroy(strm);
	dnnl_engine_destroy(eng);
	printf("checksum %016llx\n", (unsigned long long)hash);
	return bad;
}
