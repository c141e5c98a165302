/* The stand-in oneDNN of test_libflops (dnnl.c): the primitive API that
 * the counting library's dnnl_primitive_execute uses, in oneDNN 2.x's C
 * ABI (the leading fields of dnnl_memory_desc_t, the enums' values), over
 * primitives whose kind, propagation and shapes the test sets. */
#ifndef FAKE_DNNL_H
#define FAKE_DNNL_H
#include <stdint.h>

struct fake_dnnl_md {
	int32_t ndims;
	int64_t dims[12];
	int32_t data_type; /* dnnl_f32 3, dnnl_bf16 2, dnnl_s8 5 ... */
	char rest[512];    /* the rest of dnnl_memory_desc_t, unused */
};

/* A primitive (its own descriptor): md[] holds its source, weights and
 * destination, or their gradients as the propagation has them (prop: 0
 * forward, 1 backward data, 2 backward weights). */
struct fake_dnnl_prim {
	int kind;     /* dnnl_primitive_kind_t: convolution 5, pooling 9, inner product 13, ... */
	int prop;
	int fail;     /* execute returns this status (0: dnnl_success) */
	struct fake_dnnl_md md[3];
};

struct fake_dnnl_arg {
	int arg;
	void *memory; /* a struct fake_dnnl_md here */
};

extern int fake_dnnl_major;   /* what dnnl_version() says (2 unless set) */
extern int fake_dnnl_execs;   /* executions that reached the library */
extern int fake_dnnl_queries; /* descriptors asked for (dnnl_primitive_get_primitive_desc) */
extern int fake_dnnl_destroyed;

int dnnl_primitive_execute(const void *prim, void *stream, int nargs, const struct fake_dnnl_arg *args);
int dnnl_primitive_destroy(void *prim);
#endif
