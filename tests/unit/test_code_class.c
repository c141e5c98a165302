/* code_class: what each function is (compute, sync, dispatch, neutral, the
 * program's own), and a callchain's class from its frames. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "record/sampling/code_class.h"

static void test_functions(void)
{
	static const struct {
		int line;
		const char *dso, *name;
		enum code_class want;
	} rows[] = {
		/* compute kernels */
		{ __LINE__, "/usr/lib/x86_64-linux-gnu/openblas-pthread/libblas.so.3", "sgemm_kernel_HASWELL", CODE_COMPUTE },
		{ __LINE__, "/usr/lib/libdnnl.so.2", NULL, CODE_COMPUTE },
		{ __LINE__, "/work/app", "gemm", CODE_COMPUTE },
		{ __LINE__, "/usr/lib/libtorch_cpu.so",
		  "at::native::(anonymous namespace)::addmm_impl_cpu_kernel<float>", CODE_COMPUTE },
		/* synchronization waits: the OpenMP runtime whole, even unnamed */
		{ __LINE__, "/usr/lib/x86_64-linux-gnu/libgomp.so.1", NULL, CODE_SYNC },
		{ __LINE__, "/usr/lib/x86_64-linux-gnu/libgomp.so.1", "gomp_team_barrier_wait_end", CODE_SYNC },
		{ __LINE__, "/opt/intel/lib/libiomp5.so", "__kmp_hyper_barrier_release", CODE_SYNC },
		{ __LINE__, "/usr/lib/libtbb.so.12", "tbb::detail::r1::market::process", CODE_SYNC },
		{ __LINE__, "/usr/lib/x86_64-linux-gnu/libc.so.6", "pthread_cond_wait", CODE_SYNC },
		{ __LINE__, "/usr/lib/x86_64-linux-gnu/libc.so.6", "__futex_abstimed_wait_common", CODE_SYNC },
		{ __LINE__, "/usr/lib/x86_64-linux-gnu/libc.so.6", "sched_yield", CODE_SYNC },
		{ __LINE__, "/usr/lib/x86_64-linux-gnu/libc.so.6", "pthread_barrier_wait", CODE_SYNC },
		{ __LINE__, "/usr/lib/libc10.so", "c10::ThreadPool::main_loop(unsigned long)", CODE_SYNC },
		{ __LINE__, "/usr/lib/libopenblas.so.0", "blas_thread_server", CODE_SYNC },
		/* unnamed functions (.eh_frame bounds, docs/symbols.md): by their library */
		{ __LINE__, "/usr/lib/x86_64-linux-gnu/libgomp.so.1.0.0", "libgomp.so.1.0.0+0x1f5e0", CODE_SYNC },
		{ __LINE__, "/usr/lib/x86_64-linux-gnu/libpthreadpool.so.0", "libpthreadpool.so.0+0xd790", CODE_SYNC },
		{ __LINE__, "/usr/lib/x86_64-linux-gnu/openblas-pthread/libopenblasp-r0.3.21.so",
		  "libopenblasp-r0.3.21.so+0x374810", CODE_SYNC }, /* its threading layer */
		{ __LINE__, "/usr/lib/x86_64-linux-gnu/openblas-pthread/libopenblasp-r0.3.21.so", NULL, CODE_COMPUTE },
		{ __LINE__, "/usr/lib/x86_64-linux-gnu/libdnnl.so.2.6", "libdnnl.so.2.6+0x52460", CODE_COMPUTE },
		{ __LINE__, "/usr/lib/x86_64-linux-gnu/libtorch_cpu.so.1.13.0", "libtorch_cpu.so.1.13.0+0xfe1340",
		  CODE_DISPATCH },
		{ __LINE__, "/usr/bin/python3.11", "python3.11+0x50ba60", CODE_DISPATCH },
		{ __LINE__, "/work/app", "app+0x1130", CODE_USER },
		/* PLT stubs: their library's, whatever they jump to */
		{ __LINE__, "/work/app", "sgemm_@plt", CODE_USER },
		{ __LINE__, "/work/app", "memcpy@plt", CODE_USER },
		{ __LINE__, "/usr/lib/x86_64-linux-gnu/libgomp.so.1.0.0", "pthread_cond_wait@plt", CODE_SYNC },
		{ __LINE__, "/usr/lib/x86_64-linux-gnu/libtorch_cpu.so.1.13.0", "memcpy@plt", CODE_DISPATCH },
		{ __LINE__, "/usr/lib/x86_64-linux-gnu/libc.so.6", "strlen@plt", CODE_NEUTRAL },
		{ __LINE__, "/usr/lib/x86_64-linux-gnu/openblas-pthread/libopenblasp-r0.3.21.so", "sched_yield@plt",
		  CODE_COMPUTE },
		/* runtime layers */
		{ __LINE__, "/usr/bin/python3.11", "_PyEval_EvalFrameDefault", CODE_DISPATCH },
		{ __LINE__, "/usr/lib/libpython3.12.so.1.0", NULL, CODE_DISPATCH },
		{ __LINE__, "/site-packages/numpy/core/_multiarray_umath.so", "PyArray_NewFromDescr", CODE_DISPATCH },
		{ __LINE__, "/usr/lib/libtorch_cpu.so", "at::_ops::add_Tensor::call", CODE_DISPATCH },
		{ __LINE__, "/usr/lib/libtorch_python.so", NULL, CODE_DISPATCH },
		{ __LINE__, "/usr/lib/libc10.so", "c10::impl::OperatorEntry::lookup", CODE_DISPATCH },
		{ __LINE__, "/x/_C.cpython-311-x86_64-linux-gnu.so", "pybind11::cpp_function::dispatcher", CODE_DISPATCH },
		{ __LINE__, "/usr/lib/x86_64-linux-gnu/libc.so.6", "__memmove_avx_unaligned_erms", CODE_DISPATCH },
		{ __LINE__, "/usr/lib/x86_64-linux-gnu/libc.so.6", "__memset_avx512_unaligned_erms", CODE_DISPATCH },
		{ __LINE__, "/usr/lib/x86_64-linux-gnu/libc.so.6", "malloc", CODE_DISPATCH },
		{ __LINE__, "/usr/lib/x86_64-linux-gnu/libc.so.6", "_int_free", CODE_DISPATCH },
		{ __LINE__, "/usr/lib/x86_64-linux-gnu/libc.so.6", "pthread_mutex_lock", CODE_DISPATCH },
		{ __LINE__, "/usr/lib/x86_64-linux-gnu/libstdc++.so.6", "operator new(unsigned long)", CODE_DISPATCH },
		{ __LINE__, "/usr/lib/libjemalloc.so.2", "je_malloc", CODE_DISPATCH },
		{ __LINE__, "/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2", "_dl_runtime_resolve_xsavec", CODE_DISPATCH },
		{ __LINE__, "/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2", "do_lookup_x", CODE_DISPATCH },
		{ __LINE__, "/usr/lib/gcc/x86_64-linux-gnu/12/libasan.so", "__interceptor_memcpy", CODE_DISPATCH },
		/* neutral helpers take their caller's class */
		{ __LINE__, "/usr/lib/x86_64-linux-gnu/libm.so.6", "__cos_fma", CODE_NEUTRAL },
		{ __LINE__, "/usr/lib/x86_64-linux-gnu/libc.so.6", "qsort", CODE_NEUTRAL },
		{ __LINE__, "/usr/lib/x86_64-linux-gnu/libstdc++.so.6", "std::string::_M_append", CODE_NEUTRAL },
		{ __LINE__, NULL, NULL, CODE_NEUTRAL },
		/* the program's own code: not dispatch */
		{ __LINE__, "/work/app", "main", CODE_USER },
		{ __LINE__, "/work/app", "free_list_nodes", CODE_USER },
		{ __LINE__, "/work/app", "python_like_name", CODE_USER },
		{ __LINE__, "/usr/lib/libmyfw.so", NULL, CODE_USER },
		{ __LINE__, "/work/spin", "spin", CODE_USER },
	};
	struct code_classes *cc = NULL;
	char why[256] = "";

	CHECK(code_classes_new(&cc, why, sizeof(why)) == 0);
	if (!cc)
		return;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		enum code_class got = code_classes_match(cc, rows[i].dso, rows[i].name);
		CHECK_ROW(got == rows[i].want, rows[i].line);
		if (got != rows[i].want)
			fprintf(stderr, "  %s:%s is %s, not %s\n", rows[i].dso ? rows[i].dso : "(null)",
				rows[i].name ? rows[i].name : "(null)", code_class_symbol_name(got),
				code_class_symbol_name(rows[i].want));
	}
	code_classes_free(cc);
}

static void test_user_patterns(void)
{
	struct code_classes *cc = NULL;
	char why[256] = "", *list;

	CHECK(code_classes_new(&cc, why, sizeof(why)) == 0);
	if (!cc)
		return;
	/* user patterns come before the built-in ones, in the order given */
	CHECK(code_classes_add(cc, CODE_COMPUTE, ":my_kernel$", why, sizeof(why)) == 0);
	CHECK(code_classes_add(cc, CODE_DISPATCH, "^libmyfw", why, sizeof(why)) == 0);
	CHECK(code_classes_add(cc, CODE_COMPUTE, "^libgomp.*:gomp_fake_kernel$", why, sizeof(why)) == 0);
	CHECK(code_classes_match(cc, "/work/app", "my_kernel") == CODE_COMPUTE);
	CHECK(code_classes_match(cc, "/usr/lib/libmyfw.so", "glue") == CODE_DISPATCH);
	CHECK(code_classes_match(cc, "/usr/lib/libgomp.so.1", "gomp_fake_kernel") == CODE_COMPUTE);
	CHECK(code_classes_match(cc, "/usr/lib/libgomp.so.1", "gomp_barrier_wait") == CODE_SYNC);
	/* a user's function can be named by its .eh_frame name; a PLT stub
	 * is not its target, even for a user pattern */
	CHECK(code_classes_add(cc, CODE_COMPUTE, "^app:app\\+0x1130$", why, sizeof(why)) == 0);
	CHECK(code_classes_match(cc, "/work/app", "app+0x1130") == CODE_COMPUTE);
	CHECK(code_classes_add(cc, CODE_COMPUTE, ":my_kernel@plt$", why, sizeof(why)) == 0);
	CHECK(code_classes_match(cc, "/work/app", "my_kernel@plt") == CODE_USER);
	/* only compute and dispatch can be added; a bad regex says why */
	CHECK(code_classes_add(cc, CODE_SYNC, "x", why, sizeof(why)) == -EINVAL);
	CHECK(code_classes_add(cc, CODE_COMPUTE, "(", why, sizeof(why)) == -EINVAL);
	CHECK(strstr(why, "bad compute pattern '('") != NULL);
	list = code_classes_patterns(cc, CODE_COMPUTE, 1);
	CHECK(list && strcmp(list, ":my_kernel$\n^libgomp.*:gomp_fake_kernel$\n^app:app\\+0x1130$\n:my_kernel@plt$\n") == 0);
	free(list);
	list = code_classes_patterns(cc, CODE_DISPATCH, 1);
	CHECK(list && strcmp(list, "^libmyfw\n") == 0);
	free(list);
	/* all compute patterns: the user's, then the built-in ones */
	list = code_classes_patterns(cc, CODE_COMPUTE, 0);
	CHECK(list && strncmp(list, ":my_kernel$\n", 12) == 0 && strstr(list, code_class_builtin_compute[0]));
	free(list);
	code_classes_free(cc);
	code_classes_free(NULL);
}

static void test_stacks(void)
{
#define U CODE_USER
#define C CODE_COMPUTE
#define D CODE_DISPATCH
#define S CODE_SYNC
#define N CODE_NEUTRAL
	static const struct {
		int line;
		enum code_class frames[6];
		size_t n;
		enum code_class want;
		size_t owner;
	} rows[] = {
		/* a program's inlined math: its own code, not dispatch */
		{ __LINE__, { U, N }, 2, U, 0 },
		/* libm called from the program's loop: the loop's class */
		{ __LINE__, { N, U, N }, 3, U, 1 },
		/* libm called from the interpreter: dispatch */
		{ __LINE__, { N, D, D }, 3, D, 1 },
		/* memset inside a BLAS kernel: the kernel's time */
		{ __LINE__, { D, C, U }, 3, C, 1 },
		/* a kernel's callback into the program: still the kernel's */
		{ __LINE__, { U, N, C, D }, 4, C, 2 },
		/* a spin-wait inside a kernel's parallel region: waiting */
		{ __LINE__, { S, C, U }, 3, S, 0 },
		{ __LINE__, { N, S, D }, 3, S, 1 },
		/* the program's code called by the OpenMP runtime: its own */
		{ __LINE__, { U, S, N }, 3, U, 0 },
		/* the program's C extension called from the interpreter */
		{ __LINE__, { U, D, D }, 3, U, 0 },
		/* nothing but helpers (the caller's frame was lost) */
		{ __LINE__, { N, N }, 2, U, 0 },
		{ __LINE__, { D }, 1, D, 0 },
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		size_t owner = 99;
		enum code_class got = code_class_of_stack(rows[i].frames, rows[i].n, &owner);
		CHECK_ROW(got == rows[i].want, rows[i].line);
		CHECK_ROW(owner == rows[i].owner, rows[i].line);
	}
#undef U
#undef C
#undef D
#undef S
#undef N
	CHECK(strcmp(code_class_name(CODE_USER), "unclassified") == 0);
	CHECK(strcmp(code_class_name(CODE_NEUTRAL), "unclassified") == 0);
	CHECK(strcmp(code_class_name(CODE_SYNC), "sync") == 0);
	CHECK(strcmp(code_class_symbol_name(CODE_NEUTRAL), "neutral") == 0);
	CHECK(strcmp(code_class_symbol_name(CODE_USER), "user") == 0);
}

int main(void)
{
	test_functions();
	test_user_patterns();
	test_stacks();
	return check_status();
}
