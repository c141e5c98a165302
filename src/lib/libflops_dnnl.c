/* The oneDNN wrappers of libmfu-libflops.so (libflops_shim.c says how a
 * wrapper counts): its GEMM functions, and its primitives' executions. */
#include "libflops_shim_impl.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ---- oneDNN: row-major, dimensions by value (dnnl_dim_t is int64_t); a
 * call that returns an error status did no work and is not counted ---- */

typedef int64_t ddim;
WRAP_INT(dnnl_sgemm, (char ta, char tb, ddim m, ddim n, ddim k, float al, cptr a, ddim lda, cptr b, ddim ldb,
		      float be, void *c, ddim ldc),
	 (ta, tb, m, n, k, al, a, lda, b, ldb, be, c, ldc), C(GEMM, 0, 0, m, n, k))
WRAP_INT(dnnl_gemm_bf16bf16f32, (char ta, char tb, ddim m, ddim n, ddim k, float al, cptr a, ddim lda, cptr b,
				 ddim ldb, float be, void *c, ddim ldc),
	 (ta, tb, m, n, k, al, a, lda, b, ldb, be, c, ldc), C(GEMM, 0, 0, m, n, k))
WRAP_INT(dnnl_gemm_u8s8s32, (char ta, char tb, char oc, ddim m, ddim n, ddim k, float al, cptr a, ddim lda,
			     uint8_t ao, cptr b, ddim ldb, int8_t bo, float be, void *c, ddim ldc, cptr co),
	 (ta, tb, oc, m, n, k, al, a, lda, ao, b, ldb, bo, be, c, ldc, co), C(GEMM, 0, 0, m, n, k))
WRAP_INT(dnnl_gemm_s8s8s32, (char ta, char tb, char oc, ddim m, ddim n, ddim k, float al, cptr a, ddim lda,
			     int8_t ao, cptr b, ddim ldb, int8_t bo, float be, void *c, ddim ldc, cptr co),
	 (ta, tb, oc, m, n, k, al, a, lda, ao, b, ldb, bo, be, c, ldc, co), C(GEMM, 0, 0, m, n, k))

/* ---- oneDNN primitives. dnnl_primitive_execute counts the primitive's
 * FLOPs under its kind, propagation and data type (LIBFLOPS_PRIMS), the
 * FLOPs computed from the shapes of its descriptor (libflops_dnnl_count()).
 * The descriptor is queried at a primitive's first execution and kept, per
 * primitive, until dnnl_primitive_destroy. Below, the C ABI of oneDNN 2.x
 * (libdnnl.so.2, dnnl_types.h and dnnl.h), restated so that this library
 * builds without oneDNN's headers: the primitives of a library of another
 * major version count as "other", FLOPs unknown. ---- */

enum { /* dnnl_primitive_kind_t */
	DNNL_PK_REORDER = 1, DNNL_PK_SHUFFLE, DNNL_PK_CONCAT, DNNL_PK_SUM, DNNL_PK_CONVOLUTION,
	DNNL_PK_DECONVOLUTION, DNNL_PK_ELTWISE, DNNL_PK_SOFTMAX, DNNL_PK_POOLING, DNNL_PK_LRN,
	DNNL_PK_BATCH_NORMALIZATION, DNNL_PK_LAYER_NORMALIZATION, DNNL_PK_INNER_PRODUCT, DNNL_PK_RNN,
	DNNL_PK_GEMM, DNNL_PK_BINARY, DNNL_PK_LOGSOFTMAX, DNNL_PK_MATMUL, DNNL_PK_RESAMPLING,
	DNNL_PK_POOLING_V2, DNNL_PK_REDUCTION, DNNL_PK_PRELU, DNNL_PK_SOFTMAX_V2,
};
enum { /* dnnl_query_t */
	DNNL_Q_PRIMITIVE_KIND = 2,
	DNNL_Q_SRC_MD = 129, DNNL_Q_DIFF_SRC_MD, DNNL_Q_WEIGHTS_MD, DNNL_Q_DIFF_WEIGHTS_MD, DNNL_Q_DST_MD,
	DNNL_Q_DIFF_DST_MD,
};
enum { DNNL_F16 = 1, DNNL_BF16 = 2, DNNL_F32 = 3, DNNL_S8 = 5, DNNL_U8 = 6 }; /* dnnl_data_type_t */
enum { /* DNNL_ARG_* */
	DNNL_ARG_SRC = 1, DNNL_ARG_DST = 17, DNNL_ARG_WEIGHTS = 33, DNNL_ARG_DIFF_SRC = 129,
	DNNL_ARG_DIFF_DST = 145, DNNL_ARG_DIFF_WEIGHTS = 161,
};

/* The leading fields of dnnl_memory_desc_t (dims in logical order). */
struct dnnl_md {
	int32_t ndims;
	int64_t dims[LIBFLOPS_DNNL_MAX_DIMS];
	int32_t data_type;
};
struct dnnl_exec_arg {
	int arg;
	void *memory;
};
struct dnnl_ver {
	int major, minor, patch;
};

typedef int (*dnnl_exec_fn)(const void *prim, void *stream, int nargs, const struct dnnl_exec_arg *args);
typedef int (*dnnl_destroy_fn)(void *prim);
typedef int (*dnnl_get_pd_fn)(const void *prim, const void **pd);
typedef int (*dnnl_query_fn)(const void *pd, int what, int index, void *result);
typedef const struct dnnl_md *(*dnnl_query_md_fn)(const void *pd, int what, int index);
typedef int (*dnnl_mem_md_fn)(const void *memory, const struct dnnl_md **md);
typedef const struct dnnl_ver *(*dnnl_version_fn)(void);

/* The query functions of each oneDNN library whose dnnl_primitive_execute
 * was reached (a process may load two: the system's and a framework's),
 * taken from that same library. Written once, under g_lock, exec last. */
#define NDNNL_LIBS 4
static struct dnnl_lib {
	void *exec;             /* its dnnl_primitive_execute; NULL: a free slot */
	int v2;                 /* oneDNN 2.x, every function below found */
	dnnl_get_pd_fn get_pd;
	dnnl_query_fn query;
	dnnl_query_md_fn query_md;
	dnnl_mem_md_fn mem_md;
} g_dnnl_libs[NDNNL_LIBS];

static const struct dnnl_lib *dnnl_lib_for(void *exec)
{
	struct dnnl_lib *l = NULL;
	Dl_info info;
	void *h;

	for (int i = 0; i < NDNNL_LIBS; i++)
		if (__atomic_load_n(&g_dnnl_libs[i].exec, __ATOMIC_ACQUIRE) == exec)
			return &g_dnnl_libs[i];
	pthread_mutex_lock(&g_lock);
	for (int i = 0; i < NDNNL_LIBS && !l; i++)
		if (g_dnnl_libs[i].exec == exec || !g_dnnl_libs[i].exec)
			l = &g_dnnl_libs[i];
	if (l && !l->exec) {
		h = dladdr(exec, &info) && info.dli_fname ? dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD) : NULL;
		if (h) {
			dnnl_version_fn version = (dnnl_version_fn)dlsym(h, "dnnl_version");
			const struct dnnl_ver *v = version ? version() : NULL;
			l->get_pd = (dnnl_get_pd_fn)dlsym(h, "dnnl_primitive_get_primitive_desc");
			l->query = (dnnl_query_fn)dlsym(h, "dnnl_primitive_desc_query");
			l->query_md = (dnnl_query_md_fn)dlsym(h, "dnnl_primitive_desc_query_md");
			l->mem_md = (dnnl_mem_md_fn)dlsym(h, "dnnl_memory_get_memory_desc");
			l->v2 = v && v->major == 2 && l->get_pd && l->query && l->query_md && l->mem_md;
			dlclose(h); /* loaded before, and still: NOLOAD took a reference only */
		}
		__atomic_store_n(&l->exec, exec, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&g_lock);
	return l;
}

/* The propagations of a convolution, deconvolution or inner product. */
enum { PROP_FWD, PROP_BWD_DATA, PROP_BWD_WEIGHTS };

/* What the execution of a primitive counts: its counter, and its FLOPs
 * (from the execution's arguments when its descriptor has run-time
 * dimensions). */
struct prim_count {
	uint32_t id;
	uint8_t per_call;       /* FLOPs from the arguments' shapes, at each execution */
	uint8_t kind;           /* enum libflops_dnnl_kind, for per_call */
	uint8_t prop;
	uint64_t flops;
};

/* Primitives seen, by address: open addressing, looked for in NPROBE
 * slots; found without a lock, written under g_lock (the count first, the
 * key last). A destroyed primitive leaves a tombstone, which a later one
 * reuses. */
#define NPRIMS 4096
#define PRIM_TOMB ((const void *)1)
static struct prim {
	const void *p;          /* NULL: never used; PRIM_TOMB: destroyed */
	struct prim_count c;
} g_prims[NPRIMS];

static size_t prim_hash(const void *p)
{
	return (size_t)(((uintptr_t)p * 0x9e3779b97f4a7c15ull) >> 40) & (NPRIMS - 1);
}

static struct prim *prim_find(const void *p)
{
	size_t h = prim_hash(p);
	for (size_t i = 0; i < NPROBE; i++) {
		struct prim *e = &g_prims[(h + i) & (NPRIMS - 1)];
		const void *k = __atomic_load_n(&e->p, __ATOMIC_ACQUIRE);
		if (k == p)
			return e;
		if (!k)
			break;
	}
	return NULL;
}

static void prim_keep(const void *p, const struct prim_count *c)
{
	size_t h = prim_hash(p);
	struct prim *free_slot = NULL;

	pthread_mutex_lock(&g_lock);
	for (size_t i = 0; i < NPROBE; i++) {
		struct prim *e = &g_prims[(h + i) & (NPRIMS - 1)];
		if (e->p == p) { /* another thread's first execution of it */
			free_slot = NULL;
			break;
		}
		if (!free_slot && (e->p == PRIM_TOMB || !e->p))
			free_slot = e;
		if (!e->p)
			break;
	}
	if (free_slot) {
		free_slot->c = *c;
		__atomic_store_n(&free_slot->p, p, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&g_lock);
}

static void prim_forget(const void *p)
{
	struct prim *e;

	if (!prim_find(p))
		return;
	pthread_mutex_lock(&g_lock);
	e = prim_find(p);
	if (e)
		__atomic_store_n(&e->p, PRIM_TOMB, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&g_lock);
}

static void md_dims(const struct dnnl_md *md, struct libflops_dims *out)
{
	out->n = 0;
	if (!md || md->ndims <= 0 || md->ndims > LIBFLOPS_DNNL_MAX_DIMS)
		return;
	out->n = md->ndims;
	memcpy(out->d, md->dims, (size_t)md->ndims * sizeof(out->d[0]));
}

static int md_present(const struct dnnl_md *md)
{
	return md && md->ndims > 0;
}

/* Index of a data type among a counted family's entries: f32, bf16, f16,
 * int8 (the order of LIBFLOPS_DNNL_KIND), or -1. */
static int dt_index(const struct dnnl_md *md)
{
	switch (md ? md->data_type : 0) {
	case DNNL_F32: return 0;
	case DNNL_BF16: return 1;
	case DNNL_F16: return 2;
	case DNNL_S8:
	case DNNL_U8: return 3;
	}
	return -1;
}

/* The arguments of an execution that hold the source, the weights and the
 * destination (or their gradients) of each propagation, and the queries of
 * the same in the descriptor. */
static const int prop_args[3][3] = {
	{ DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_DST },
	{ DNNL_ARG_DIFF_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_DIFF_DST },
	{ DNNL_ARG_SRC, DNNL_ARG_DIFF_WEIGHTS, DNNL_ARG_DIFF_DST },
};
static const int prop_queries[3][3] = {
	{ DNNL_Q_SRC_MD, DNNL_Q_WEIGHTS_MD, DNNL_Q_DST_MD },
	{ DNNL_Q_DIFF_SRC_MD, DNNL_Q_WEIGHTS_MD, DNNL_Q_DIFF_DST_MD },
	{ DNNL_Q_SRC_MD, DNNL_Q_DIFF_WEIGHTS_MD, DNNL_Q_DIFF_DST_MD },
};

/* FLOPs from the memory objects of an execution (a descriptor with
 * run-time dimensions: the arguments have the real ones). */
static int flops_from_args(const struct dnnl_lib *lib, const struct prim_count *c, int nargs,
			   const struct dnnl_exec_arg *args, uint64_t *flops)
{
	struct libflops_dims t[3] = { { 0 }, { 0 }, { 0 } };

	for (int i = 0; args && i < nargs; i++)
		for (int r = 0; r < 3; r++) {
			const struct dnnl_md *md = NULL;
			if (args[i].arg == prop_args[c->prop][r] && args[i].memory &&
			    lib->mem_md(args[i].memory, &md) == 0)
				md_dims(md, &t[r]);
		}
	return libflops_dnnl_count(c->kind, &t[0], &t[1], &t[2], flops);
}

/* First execution of @prim: its kind, propagation and data type from its
 * descriptor, and its FLOPs. */
static void prim_describe(const struct dnnl_lib *lib, const void *prim, struct prim_count *c)
{
	/* a counted family's ids: [propagation][data type] */
	static const uint16_t conv[3][4] = {
		{ LIBFLOPS_ID_dnnl_conv_fwd_f32, LIBFLOPS_ID_dnnl_conv_fwd_bf16, LIBFLOPS_ID_dnnl_conv_fwd_f16,
		  LIBFLOPS_ID_dnnl_conv_fwd_int8 },
		{ LIBFLOPS_ID_dnnl_conv_bwd_data_f32, LIBFLOPS_ID_dnnl_conv_bwd_data_bf16,
		  LIBFLOPS_ID_dnnl_conv_bwd_data_f16, LIBFLOPS_ID_dnnl_other },
		{ LIBFLOPS_ID_dnnl_conv_bwd_weights_f32, LIBFLOPS_ID_dnnl_conv_bwd_weights_bf16,
		  LIBFLOPS_ID_dnnl_conv_bwd_weights_f16, LIBFLOPS_ID_dnnl_other },
	};
	static const uint16_t deconv[3][4] = {
		{ LIBFLOPS_ID_dnnl_deconv_fwd_f32, LIBFLOPS_ID_dnnl_deconv_fwd_bf16, LIBFLOPS_ID_dnnl_deconv_fwd_f16,
		  LIBFLOPS_ID_dnnl_deconv_fwd_int8 },
		{ LIBFLOPS_ID_dnnl_deconv_bwd_data_f32, LIBFLOPS_ID_dnnl_deconv_bwd_data_bf16,
		  LIBFLOPS_ID_dnnl_deconv_bwd_data_f16, LIBFLOPS_ID_dnnl_other },
		{ LIBFLOPS_ID_dnnl_deconv_bwd_weights_f32, LIBFLOPS_ID_dnnl_deconv_bwd_weights_bf16,
		  LIBFLOPS_ID_dnnl_deconv_bwd_weights_f16, LIBFLOPS_ID_dnnl_other },
	};
	static const uint16_t ip[3][4] = {
		{ LIBFLOPS_ID_dnnl_ip_fwd_f32, LIBFLOPS_ID_dnnl_ip_fwd_bf16, LIBFLOPS_ID_dnnl_ip_fwd_f16,
		  LIBFLOPS_ID_dnnl_ip_fwd_int8 },
		{ LIBFLOPS_ID_dnnl_ip_bwd_data_f32, LIBFLOPS_ID_dnnl_ip_bwd_data_bf16, LIBFLOPS_ID_dnnl_ip_bwd_data_f16,
		  LIBFLOPS_ID_dnnl_other },
		{ LIBFLOPS_ID_dnnl_ip_bwd_weights_f32, LIBFLOPS_ID_dnnl_ip_bwd_weights_bf16,
		  LIBFLOPS_ID_dnnl_ip_bwd_weights_f16, LIBFLOPS_ID_dnnl_other },
	};
	static const uint16_t matmul[4] = { LIBFLOPS_ID_dnnl_matmul_f32, LIBFLOPS_ID_dnnl_matmul_bf16,
					    LIBFLOPS_ID_dnnl_matmul_f16, LIBFLOPS_ID_dnnl_matmul_int8 };
	const void *pd = NULL;
	const struct dnnl_md *md[3];
	struct libflops_dims t[3];
	const uint16_t(*ids)[4] = NULL;
	int kind = 0, dt;

	memset(c, 0, sizeof(*c));
	c->id = LIBFLOPS_ID_dnnl_other;
	if (!lib || !lib->v2 || lib->get_pd(prim, &pd) != 0 || !pd ||
	    lib->query(pd, DNNL_Q_PRIMITIVE_KIND, 0, &kind) != 0)
		return;
	switch (kind) {
	case DNNL_PK_REORDER: c->id = LIBFLOPS_ID_dnnl_reorder; return;
	case DNNL_PK_CONCAT: c->id = LIBFLOPS_ID_dnnl_concat; return;
	case DNNL_PK_SHUFFLE: c->id = LIBFLOPS_ID_dnnl_shuffle; return;
	case DNNL_PK_SUM: c->id = LIBFLOPS_ID_dnnl_sum; return;
	case DNNL_PK_ELTWISE: c->id = LIBFLOPS_ID_dnnl_eltwise; return;
	case DNNL_PK_SOFTMAX:
	case DNNL_PK_SOFTMAX_V2: c->id = LIBFLOPS_ID_dnnl_softmax; return;
	case DNNL_PK_LOGSOFTMAX: c->id = LIBFLOPS_ID_dnnl_logsoftmax; return;
	case DNNL_PK_POOLING:
	case DNNL_PK_POOLING_V2: c->id = LIBFLOPS_ID_dnnl_pooling; return;
	case DNNL_PK_LRN: c->id = LIBFLOPS_ID_dnnl_lrn; return;
	case DNNL_PK_BATCH_NORMALIZATION: c->id = LIBFLOPS_ID_dnnl_batch_normalization; return;
	case DNNL_PK_LAYER_NORMALIZATION: c->id = LIBFLOPS_ID_dnnl_layer_normalization; return;
	case DNNL_PK_RNN: c->id = LIBFLOPS_ID_dnnl_rnn; return;
	case DNNL_PK_BINARY: c->id = LIBFLOPS_ID_dnnl_binary; return;
	case DNNL_PK_RESAMPLING: c->id = LIBFLOPS_ID_dnnl_resampling; return;
	case DNNL_PK_REDUCTION: c->id = LIBFLOPS_ID_dnnl_reduction; return;
	case DNNL_PK_PRELU: c->id = LIBFLOPS_ID_dnnl_prelu; return;
	case DNNL_PK_CONVOLUTION: ids = conv; c->kind = LIBFLOPS_DNNL_CONV; break;
	case DNNL_PK_DECONVOLUTION: ids = deconv; c->kind = LIBFLOPS_DNNL_DECONV; break;
	case DNNL_PK_INNER_PRODUCT: ids = ip; c->kind = LIBFLOPS_DNNL_IP; break;
	case DNNL_PK_MATMUL: c->kind = LIBFLOPS_DNNL_MATMUL; break;
	default: return; /* another kind (a newer oneDNN's): other */
	}
	/* The propagation from the gradients the descriptor has: backward
	 * weights computes diff_weights, backward data diff_src (a query the
	 * primitive does not need gives a zero descriptor). */
	c->prop = PROP_FWD;
	if (ids && md_present(lib->query_md(pd, DNNL_Q_DIFF_WEIGHTS_MD, 0)))
		c->prop = PROP_BWD_WEIGHTS;
	else if (ids && md_present(lib->query_md(pd, DNNL_Q_DIFF_SRC_MD, 0)))
		c->prop = PROP_BWD_DATA;
	for (int r = 0; r < 3; r++) {
		md[r] = lib->query_md(pd, prop_queries[c->prop][r], 0);
		md_dims(md[r], &t[r]);
	}
	/* the type of the products' inputs: the source, or in backward data
	 * the destination's gradient */
	dt = dt_index(md[c->prop == PROP_BWD_DATA ? 2 : 0]);
	if (dt < 0)
		return;
	c->id = ids ? ids[c->prop][dt] : matmul[dt];
	if (c->id == LIBFLOPS_ID_dnnl_other)
		return;
	if (libflops_dnnl_count(c->kind, &t[0], &t[1], &t[2], &c->flops) != 0)
		c->per_call = 1; /* run-time dimensions (DNNL_RUNTIME_DIM_VAL) */
}

EXPORT int dnnl_primitive_execute(const void *prim, void *stream, int nargs, const struct dnnl_exec_arg *args);
int dnnl_primitive_execute(const void *prim, void *stream, int nargs, const struct dnnl_exec_arg *args)
{
	void *ra = __builtin_return_address(0);
	dnnl_exec_fn fn = (dnnl_exec_fn)real(SHIM_ID_dnnl_primitive_execute, ra);
	struct libflops_proc *p = __atomic_load_n(&g_proc, __ATOMIC_RELAXED);
	const struct dnnl_lib *lib = NULL;
	struct prim_count c;
	struct prim *e;
	int rc;

	if (!p || t_depth || !prim)
		return fn(prim, stream, nargs, args); /* not counted: forwarded only */
	e = prim_find(prim);
	if (e) {
		c = e->c;
	} else {
		lib = dnnl_lib_for((void *)fn);
		prim_describe(lib, prim, &c);
		prim_keep(prim, &c);
	}
	if (c.per_call) {
		if (!lib)
			lib = dnnl_lib_for((void *)fn);
		if (!lib || flops_from_args(lib, &c, nargs, args, &c.flops) != 0)
			c.id = LIBFLOPS_ID_dnnl_other;
	}
	if (libflops_funcs[c.id].op == LIBFLOPS_UNKNOWN) {
		/* as an iterative LAPACK driver: the counted calls it makes
		 * (none, from oneDNN's own kernels) would count */
		libflops_begin(p);
		rc = fn(prim, stream, nargs, args);
		if (rc == 0)
			count(c.id, 0);
		else
			uncount();
		return rc;
	}
	enter();
	rc = fn(prim, stream, nargs, args);
	t_depth--;
	if (rc == 0)
		count(c.id, c.flops);
	else
		uncount();
	return rc;
}

/* A primitive destroyed: another one may take its address. */
EXPORT int dnnl_primitive_destroy(void *prim);
int dnnl_primitive_destroy(void *prim)
{
	dnnl_destroy_fn fn = (dnnl_destroy_fn)real(SHIM_ID_dnnl_primitive_destroy, __builtin_return_address(0));
	if (prim)
		prim_forget(prim);
	return fn(prim);
}
