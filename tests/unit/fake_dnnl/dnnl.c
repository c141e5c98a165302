/* A stand-in oneDNN (fake_dnnl.h) for test_libflops. */
#include "fake_dnnl.h"

#include <stddef.h>

int fake_dnnl_major = 2;
int fake_dnnl_execs;
int fake_dnnl_queries;
int fake_dnnl_destroyed;

struct fake_dnnl_version {
	int major, minor, patch;
	const char *hash;
	unsigned cpu_runtime, gpu_runtime;
};

const struct fake_dnnl_version *dnnl_version(void);
int dnnl_primitive_get_primitive_desc(const void *prim, const void **pd);
int dnnl_primitive_desc_query(const void *pd, int what, int index, void *result);
const struct fake_dnnl_md *dnnl_primitive_desc_query_md(const void *pd, int what, int index);
int dnnl_memory_get_memory_desc(const void *memory, const struct fake_dnnl_md **md);

const struct fake_dnnl_version *dnnl_version(void)
{
	static struct fake_dnnl_version v;
	v.major = fake_dnnl_major;
	v.minor = 6;
	return &v;
}

int dnnl_primitive_get_primitive_desc(const void *prim, const void **pd)
{
	fake_dnnl_queries++;
	*pd = prim;
	return 0;
}

int dnnl_primitive_desc_query(const void *pd, int what, int index, void *result)
{
	(void)index;
	if (what != 2) /* dnnl_query_primitive_kind */
		return 3; /* dnnl_unimplemented */
	*(int *)result = ((const struct fake_dnnl_prim *)pd)->kind;
	return 0;
}

/* src_md 129, diff_src_md 130, weights_md 131, diff_weights_md 132,
 * dst_md 133, diff_dst_md 134: a zero descriptor for those the
 * propagation does not have, as oneDNN */
const struct fake_dnnl_md *dnnl_primitive_desc_query_md(const void *pd, int what, int index)
{
	static const struct fake_dnnl_md zero;
	const struct fake_dnnl_prim *p = pd;
	int diff = (what == 130 || what == 132 || what == 134);
	int role = (what - 129) / 2;

	(void)index;
	if (what < 129 || what > 134)
		return NULL;
	/* which of src, weights, dst is a gradient in each propagation */
	static const int grad[3][3] = { { 0, 0, 0 }, { 1, 0, 1 }, { 0, 1, 1 } };
	return grad[p->prop][role] == diff ? &p->md[role] : &zero;
}

int dnnl_memory_get_memory_desc(const void *memory, const struct fake_dnnl_md **md)
{
	*md = memory;
	return 0;
}

int dnnl_primitive_execute(const void *prim, void *stream, int nargs, const struct fake_dnnl_arg *args)
{
	(void)stream;
	(void)nargs;
	(void)args;
	fake_dnnl_execs++;
	return ((const struct fake_dnnl_prim *)prim)->fail;
}

int dnnl_primitive_destroy(void *prim)
{
	(void)prim;
	fake_dnnl_destroyed++;
	return 0;
}
