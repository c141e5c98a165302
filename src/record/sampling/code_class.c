#include "code_class.h"
#include "util.h"

#include <errno.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>

/*
 * Compute kernels: libraries whose code is all kernels (BLAS, LAPACK,
 * oneDNN, FFTW, ggml) match whole; in mixed libraries (libtorch_cpu, numpy)
 * only the kernel symbols do.
 */
const char *const code_class_builtin_compute[] = {
	"^lib(open)?blas[^:]*:",          /* OpenBLAS, reference BLAS */
	"^libcblas[^:]*:",
	"^liblapack[^:]*:",
	"^libblis[^:]*:",
	"^libmkl_[^:]*:",                 /* Intel MKL */
	"^lib(dnnl|mkldnn|onednn)[^:]*:", /* oneDNN */
	"^libfftw3[^:]*:",
	"^libggml[^:]*:",                 /* ggml / llama.cpp */
	"^libxsmm[^:]*:",
	":(cblas_|[sdcz](gemm|gemv|syrk|trsm|symm|axpy|dot|scal)_?$)",
	":.*(sgemm|dgemm|hgemm|bgemm|gemm_kernel|gemm_small_kernel|gemm_oncopy|gemm_itcopy)",
	":([A-Za-z0-9_]*_)?[sdchzb]?gemm(_[A-Za-z0-9_]*)?$", /* gemm, my_gemm, gemm_nt... */
	":([A-Za-z0-9_]*_)?(conv[0-9]d|matmul)(_[A-Za-z0-9_]*)?$",
	":ggml_(compute_forward|vec_|gemm|gemv)",
	":(dnnl|mkldnn|onednn)::",
	":Eigen::internal::(gebp_kernel|gemm_pack|general_matrix_matrix_product|general_matrix_vector_product)",
	":fftw_",
	":at::native::.*(gemm|conv|Kernel|kernel)",
	NULL,
};

/*
 * Waiting for other threads. Tried before the compute patterns, so that a
 * BLAS library's idle worker loop counts as waiting, not as its kernels.
 * The OpenMP and TBB runtimes match whole: user code of a parallel region
 * is outlined into the program (foo._omp_fn.0), so what runs inside the
 * runtime itself is scheduling, barriers and spinning for work.
 */
const char *const code_class_builtin_sync[] = {
	"^libgomp[^:]*:",                 /* GNU OpenMP */
	"^lib(omp|iomp5)[^:]*:",          /* LLVM and Intel OpenMP */
	"^libtbb[^:]*:",                  /* oneTBB */
	"^libpthreadpool[^:]*:",          /* XNNPACK/NNPACK's pool */
	/* OpenBLAS's idle worker loop; and its functions that no symbol
	 * names ("libopenblas.so.0+0x374810", from .eh_frame): OpenBLAS
	 * exports every kernel, so what a stripped build leaves unnamed is
	 * its static threading layer, blas_thread_server (a yield loop) and
	 * the level-3 drivers' inner_thread (waiting on the other threads'
	 * flags between kernel calls). docs/metrics.md, "Code classes". */
	"^lib(open)?blas[^:]*:(blas_thread_server|lib(open)?blas[^:]*\\+0x[0-9a-f]+)$",
	":(pthread_barrier_wait|pthread_cond_(timed|clock)?wait|_*pthread_cond_[a-z]*wait[0-9]*|"
	"(__GI_)?_*futex_[a-z_]*wait[a-z_0-9]*|__lll_lock_wait[a-z_]*|sem_(timed|clock)?wait|"
	"__new_sem_wait[a-z_]*|do_futex_wait[a-z_.0-9]*|_*sched_yield|pthread_join|"
	"__pthread_(clock|timed)join[a-z_]*)$",
	":std::(condition_variable|_V2::condition_variable_any)::wait",
	":std::thread::join",
	":c10::ThreadPool::main_loop",
	":[A-Za-z0-9_:]*([Ss]pin_?[Ww]ait|_barrier_wait)",
	NULL,
};

/* Runtime layers: interpreters, framework dispatch, glue, allocators,
 * copies, locks. */
const char *const code_class_builtin_dispatch[] = {
	/* CPython: the interpreter binary (Debian links libpython statically
	 * into python3.x), libpython, and the C API called from extensions */
	"^(libpython[0-9.]+\\.so[^:]*|python[0-9.]*(d|m|dm)?):",
	":_?Py[A-Z][A-Za-z]*_",
	/* other interpreters and VMs */
	"^(libruby[^:]*|libperl[^:]*|liblua[^:]*|libluajit[^:]*|libjvm[^:]*|libnode[^:]*|node|ruby[0-9.]*|perl[0-9.]*|lua[0-9.]*|luajit[^:]*):",
	/* PyTorch outside its kernels: the dispatcher, autograd, TensorIterator
	 * set-up, the Python bindings */
	"^libtorch(_cpu|_python|_global_deps)?\\.so[^:]*:",
	"^libc10[^:]*:",
	"^_C\\.cpython[^:]*:",
	":(c10|torch|caffe2|pybind11)::",
	":at::(_ops|TensorIteratorBase|TensorIterator|TensorBase|Tensor|impl|detail)::",
	/* allocators */
	"^lib(jemalloc|tcmalloc[^:]*|mimalloc)[^:]*:",
	"^libc\\.so[^:]*:(__libc_|_int_|__)?(malloc|free|calloc|realloc|memalign|posix_memalign|aligned_alloc|valloc|"
	"pvalloc|cfree)$",
	"^libc\\.so[^:]*:(malloc_consolidate|sysmalloc|unlink_chunk|tcache_[a-z_]*|arena_get2[a-z_.0-9]*|"
	"_int_[a-z_]*|_mid_memalign|alloc_perturb)$",
	":operator (new|delete)",
	/* sanitizer runtimes: their allocators and the interceptors of copies
	 * and string functions */
	"^lib(a|ub|t|m|l|hwa)san\\.so[^:]*:",
	/* copies */
	":_*(memcpy|memmove|mempcpy|memset|bcopy|bzero|wmemset|wmemcpy)(_[A-Za-z0-9_]*)?$",
	/* locks and the dynamic linker's lazy binding */
	":(pthread_mutex_(lock|unlock|trylock)|_*pthread_mutex_[a-z_]*lock[a-z_]*|pthread_spin_(lock|unlock|trylock)|"
	"pthread_rwlock_[a-z]*|__lll_(un)?lock_wake[a-z_]*)$",
	/* the dynamic loader: lazy binding, and loading libraries (an import) */
	"^(ld-linux[^:]*|ld64)\\.so[^:]*:",
	":_dl_(runtime_resolve|fixup|lookup_symbol|profile_fixup)[A-Za-z_0-9]*$",
	NULL,
};

/* Helpers that take their caller's class. */
const char *const code_class_builtin_neutral[] = {
	"^(libc|libm|libmvec|libstdc\\+\\+|libgcc_s|libpthread|libdl|librt)\\.so[^:]*:",
	"^\\[vdso\\]:",
	NULL,
};

struct pattern {
	regex_t re;
	char *src;
	enum code_class cls;
	int user;
};

struct code_classes {
	struct pattern *p;
	size_t n, cap;
};

static int add(struct code_classes *cc, enum code_class cls, const char *src, int user, char *why, size_t whylen)
{
	struct pattern *p;
	int rc;

	if (array_grow(&cc->p, &cc->cap, cc->n + 1, sizeof(*cc->p)))
		return -ENOMEM;
	p = &cc->p[cc->n];
	rc = regcomp(&p->re, src, REG_EXTENDED | REG_NOSUB);
	if (rc) {
		char msg[128];
		regerror(rc, &p->re, msg, sizeof(msg));
		strbuf(why, whylen, "bad %s pattern '%s': %s", code_class_name(cls), src, msg);
		return -EINVAL;
	}
	p->src = strdup(src);
	if (!p->src) {
		regfree(&p->re);
		return -ENOMEM;
	}
	p->cls = cls;
	p->user = user;
	cc->n++;
	return 0;
}

int code_classes_new(struct code_classes **out, char *why, size_t whylen)
{
	/* the order of trial: sync before compute (see above) */
	static const struct {
		enum code_class cls;
		const char *const *list;
	} builtin[] = {
		{ CODE_SYNC, code_class_builtin_sync },
		{ CODE_COMPUTE, code_class_builtin_compute },
		{ CODE_DISPATCH, code_class_builtin_dispatch },
		{ CODE_NEUTRAL, code_class_builtin_neutral },
	};
	struct code_classes *cc = calloc(1, sizeof(*cc));
	int rc = 0;

	*out = NULL;
	if (!cc)
		return -ENOMEM;
	for (size_t i = 0; !rc && i < ARRAY_SIZE(builtin); i++)
		for (size_t j = 0; !rc && builtin[i].list[j]; j++)
			rc = add(cc, builtin[i].cls, builtin[i].list[j], 0, why, whylen);
	if (rc) {
		code_classes_free(cc);
		return rc;
	}
	*out = cc;
	return 0;
}

void code_classes_free(struct code_classes *cc)
{
	if (!cc)
		return;
	for (size_t i = 0; i < cc->n; i++) {
		regfree(&cc->p[i].re);
		free(cc->p[i].src);
	}
	free(cc->p);
	free(cc);
}

int code_classes_add(struct code_classes *cc, enum code_class cls, const char *regex, char *why, size_t whylen)
{
	size_t nuser = 0;
	struct pattern tmp;
	int rc;

	if (cls != CODE_COMPUTE && cls != CODE_DISPATCH)
		return -EINVAL;
	rc = add(cc, cls, regex, 1, why, whylen);
	if (rc)
		return rc;
	/* move it after the earlier user patterns, before every built-in one */
	while (nuser < cc->n - 1 && cc->p[nuser].user)
		nuser++;
	tmp = cc->p[cc->n - 1];
	memmove(&cc->p[nuser + 1], &cc->p[nuser], (cc->n - 1 - nuser) * sizeof(*cc->p));
	cc->p[nuser] = tmp;
	return 0;
}

enum code_class code_classes_match(const struct code_classes *cc, const char *dso, const char *name)
{
	char key[1024];
	const char *base = dso ? strrchr(dso, '/') : NULL;
	size_t len = name ? strlen(name) : 0;

	if (!dso && !name)
		return CODE_NEUTRAL; /* an address in no known mapping */
	/* A PLT stub ("foo@plt", docs/symbols.md) only jumps to foo: it is
	 * its library's linkage, not foo (sgemm_@plt is no kernel), so only
	 * the library's patterns place it, as when it had no name. Not
	 * neutral: a frame-pointer callchain through a stub often has nothing
	 * else to go by (the stub's caller is not in it). */
	if (len > 4 && strcmp(name + len - 4, "@plt") == 0)
		name = "";
	base = base ? base + 1 : dso ? dso : "";
	strbuf(key, sizeof(key), "%s:%s", base, name ? name : "");
	for (size_t i = 0; i < cc->n; i++)
		if (regexec(&cc->p[i].re, key, 0, NULL, 0) == 0)
			return cc->p[i].cls;
	return CODE_USER;
}

char *code_classes_patterns(const struct code_classes *cc, enum code_class cls, int user_only)
{
	size_t len = 1;
	char *s;

	for (size_t i = 0; i < cc->n; i++)
		if ((cc->p[i].user || !user_only) && cc->p[i].cls == cls)
			len += strlen(cc->p[i].src) + 1;
	s = calloc(1, len);
	if (!s)
		return NULL;
	for (size_t i = 0; i < cc->n; i++)
		if ((cc->p[i].user || !user_only) && cc->p[i].cls == cls) {
			strcat(s, cc->p[i].src);
			strcat(s, "\n");
		}
	return s;
}

enum code_class code_class_of_stack(const enum code_class *frames, size_t n, size_t *owner)
{
	size_t first = n;

	*owner = 0;
	for (size_t i = 0; i < n && first == n; i++)
		if (frames[i] != CODE_NEUTRAL)
			first = i;
	if (first == n)
		return CODE_USER; /* all helpers: nothing says what called them */
	*owner = first;
	/* waiting is waiting, even inside a kernel's parallel region */
	if (frames[first] == CODE_SYNC)
		return CODE_SYNC;
	/* a kernel's own helpers (memset, exp) and callbacks are its time */
	for (size_t i = first; i < n; i++)
		if (frames[i] == CODE_COMPUTE) {
			*owner = i;
			return CODE_COMPUTE;
		}
	return frames[first];
}

const char *code_class_name(enum code_class cls)
{
	/* a sample of the program's own code, or of helpers only */
	return cls == CODE_USER || cls == CODE_NEUTRAL ? "unclassified" : code_class_symbol_name(cls);
}

const char *code_class_symbol_name(enum code_class cls)
{
	switch (cls) {
	case CODE_COMPUTE:
		return "compute";
	case CODE_DISPATCH:
		return "dispatch";
	case CODE_SYNC:
		return "sync";
	case CODE_NEUTRAL:
		return "neutral";
	case CODE_USER:
		break;
	}
	return "user";
}
