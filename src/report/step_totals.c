/* mfu_step_totals (step_totals.h). */
#include "step_totals.h"
#include "nearest_rank.h"

#include "util.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum arg {
	A_WALL, A_LIB, A_MODEL, A_BYTES, A_HW, A_HW64, A_HW32, A_HW16, A_CPU, A_DRAM,
	A_BEGIN, A_END, A_PEAK_FLOPS, A_PEAK_BW, A_LIB64, A_LIB32, A_LIBBF16, A_LIB16, A_LIBI8, A_COMPLETE, A_COUNT
};

/* SQLite's sum() (func.c, 3.40): a double and, while every value is an
 * integer, an exact 64-bit sum that may overflow. */
struct sum {
	double r;
	int64_t i;
	int64_t cnt;
	int approx, overflow;
};

static void sum_add(struct sum *s, sqlite3_value *v)
{
	int type = sqlite3_value_numeric_type(v);

	if (type == SQLITE_NULL)
		return;
	s->cnt++;
	if (type == SQLITE_INTEGER) {
		int64_t x = sqlite3_value_int64(v);
		s->r += (double)x;
		if (!(s->approx | s->overflow) && __builtin_add_overflow(s->i, x, &s->i))
			s->overflow = 1;
	} else {
		s->r += sqlite3_value_double(v);
		s->approx = 1;
	}
}

struct mx {
	double v;
	int any;
};

/* MAX(@num / @den) as SQL computes the quotient (a real: NULL when either
 * is NULL or @den is 0). */
static void max_add(struct mx *m, sqlite3_value *num, const double *den)
{
	double x;

	if (sqlite3_value_type(num) == SQLITE_NULL || !den || *den == 0)
		return;
	x = sqlite3_value_double(num) / *den;
	if (isnan(x))
		return;
	if (!m->any || x > m->v)
		m->v = x;
	m->any = 1;
}

/* @v / 1e9 * @peak as SQL computes it, into @out; NULL when either is NULL
 * or the product is NaN (SQLite's arithmetic gives no NaN). */
static const double *seconds_times(sqlite3_value *v, sqlite3_value *peak, double *out)
{
	if (sqlite3_value_type(v) == SQLITE_NULL || sqlite3_value_type(peak) == SQLITE_NULL)
		return NULL;
	*out = sqlite3_value_double(v) / 1e9 * sqlite3_value_double(peak);
	return isnan(*out) ? NULL : out;
}

enum sums {
	S_WALL, S_MODEL, S_FLOPS, S_FLOPS_NS, S_DECLARED, S_LIBRARY, S_LIB, S_BOTH_DECLARED, S_BOTH_LIB, S_BYTES,
	S_BYTES_NS, S_HW, S_HW64, S_HW32, S_HW16, S_HW_NS, S_CPU, S_CPU_WALL, S_DRAM, S_DRAM_NS, S_COMMON_FLOPS,
	S_COMMON_HW, S_COMMON_NS, S_LIBSRC, S_LIBSRC64, S_LIBSRC32, S_LIBSRCBF16, S_LIBSRC16, S_LIBSRCI8,
	S_COUNT
};

struct totals {
	int64_t steps;
	struct sum s[S_COUNT];
	int64_t n_flops, n_hw, n_common, n_bytes, n_lib, n_both;
	int64_t begin_min, end_max;
	int any_begin, any_end;
	int64_t incomplete;
	int64_t *walls; /* the complete steps' wall_ns, for p50 and p95 */
	size_t nwalls, cap;
	int oom;
	struct mx mfu, hfu, mbu;
};

static int is_null(sqlite3_value *v)
{
	return sqlite3_value_type(v) == SQLITE_NULL;
}

/* x > 0 as SQL says it: NULL and 0 are not */
static int positive(sqlite3_value *v)
{
	return !is_null(v) && sqlite3_value_double(v) > 0;
}

/* lib_flops > 0 as SQL compares it: NULL is not, text and blobs are (they
 * sort after every number). */
static int sql_positive(sqlite3_value *v)
{
	switch (sqlite3_value_type(v)) {
	case SQLITE_NULL:
		return 0;
	case SQLITE_INTEGER:
		return sqlite3_value_int64(v) > 0;
	case SQLITE_FLOAT:
		return sqlite3_value_double(v) > 0;
	default:
		return 1;
	}
}

/* The step's virtual columns, as the schema makes them from the arguments
 * (as arguments they cost 0.1 s a million steps more): flops =
 * coalesce(model_flops, CASE WHEN lib_flops > 0 THEN lib_flops END), the
 * value returned (NULL for none); flops_source 'declared' when model_flops
 * is not NULL (*@model), else 'library' when lib_flops > 0 (*@library). */
static sqlite3_value *step_flops(sqlite3_value **a, int *model, int *library)
{
	*model = !is_null(a[A_MODEL]);
	*library = !*model && sql_positive(a[A_LIB]);
	return *model ? a[A_MODEL] : *library ? a[A_LIB] : NULL;
}

/* The highest of the step view's mfu, hfu and mbu: flops (@fl, NULL when
 * none), hw_flops and model_bytes over (wall_ns / 1e9 * peak). */
static void max_ratios(struct totals *t, sqlite3_value **a, sqlite3_value *fl)
{
	double wf, wb;
	const double *dflops = seconds_times(a[A_WALL], a[A_PEAK_FLOPS], &wf);

	if (fl)
		max_add(&t->mfu, fl, dflops);
	max_add(&t->hfu, a[A_HW], dflops);
	max_add(&t->mbu, a[A_BYTES], seconds_times(a[A_WALL], a[A_PEAK_BW], &wb));
}

static void totals_step(sqlite3_context *ctx, int argc, sqlite3_value **a)
{
	struct totals *t = sqlite3_aggregate_context(ctx, sizeof(*t));
	int flops = 0, hw = 0, model = 0, lib_source = 0;
	sqlite3_value *fl;

	if (!t || argc != A_COUNT)
		return;
	if (sqlite3_value_int(a[A_COMPLETE]) != 1) {
		t->incomplete++;
		return;
	}
	if (sqlite3_value_type(a[A_WALL]) == SQLITE_INTEGER && !t->oom) {
		if (array_grow(&t->walls, &t->cap, t->nwalls + 1, sizeof(*t->walls)))
			t->oom = 1;
		else
			t->walls[t->nwalls++] = sqlite3_value_int64(a[A_WALL]);
	}
	fl = step_flops(a, &model, &lib_source);
	flops = fl != NULL;
	hw = !is_null(a[A_HW]);
	t->steps++;
	sum_add(&t->s[S_WALL], a[A_WALL]);
	sum_add(&t->s[S_MODEL], a[A_MODEL]);
	if (flops) {
		sum_add(&t->s[S_FLOPS], fl);
		sum_add(&t->s[S_FLOPS_NS], a[A_WALL]);
		t->n_flops++;
	}
	if (model || lib_source) {
		/* flops_source = 'declared': 1 or 0, summed as integers */
		t->s[S_DECLARED].cnt++;
		t->s[S_LIBRARY].cnt++;
		if (model)
			t->s[S_DECLARED].i++, t->s[S_DECLARED].r++;
		if (lib_source)
			t->s[S_LIBRARY].i++, t->s[S_LIBRARY].r++;
	}
	sum_add(&t->s[S_LIB], a[A_LIB]);
	if (!is_null(a[A_LIB]))
		t->n_lib++;
	if (positive(a[A_LIB])) {
		sum_add(&t->s[S_BOTH_DECLARED], a[A_MODEL]);
		t->n_both += model;
	}
	if (model)
		sum_add(&t->s[S_BOTH_LIB], a[A_LIB]);
	sum_add(&t->s[S_BYTES], a[A_BYTES]);
	if (!is_null(a[A_BYTES])) {
		sum_add(&t->s[S_BYTES_NS], a[A_WALL]);
		t->n_bytes++;
	}
	sum_add(&t->s[S_HW], a[A_HW]);
	sum_add(&t->s[S_HW64], a[A_HW64]);
	sum_add(&t->s[S_HW32], a[A_HW32]);
	sum_add(&t->s[S_HW16], a[A_HW16]);
	if (hw) {
		sum_add(&t->s[S_HW_NS], a[A_WALL]);
		t->n_hw++;
		if (flops)
			sum_add(&t->s[S_COMMON_FLOPS], fl);
	}
	sum_add(&t->s[S_CPU], a[A_CPU]);
	if (!is_null(a[A_CPU]))
		sum_add(&t->s[S_CPU_WALL], a[A_WALL]);
	sum_add(&t->s[S_DRAM], a[A_DRAM]);
	if (!is_null(a[A_DRAM]))
		sum_add(&t->s[S_DRAM_NS], a[A_WALL]);
	if (flops) {
		sum_add(&t->s[S_COMMON_HW], a[A_HW]);
		t->n_common += hw;
		if (hw)
			sum_add(&t->s[S_COMMON_NS], a[A_WALL]);
	}
	if (lib_source) {
		sum_add(&t->s[S_LIBSRC], a[A_LIB]);
		sum_add(&t->s[S_LIBSRC64], a[A_LIB64]);
		sum_add(&t->s[S_LIBSRC32], a[A_LIB32]);
		sum_add(&t->s[S_LIBSRCBF16], a[A_LIBBF16]);
		sum_add(&t->s[S_LIBSRC16], a[A_LIB16]);
		sum_add(&t->s[S_LIBSRCI8], a[A_LIBI8]);
	}
	if (!is_null(a[A_BEGIN])) {
		int64_t b = sqlite3_value_int64(a[A_BEGIN]);
		if (!t->any_begin || b < t->begin_min)
			t->begin_min = b;
		t->any_begin = 1;
	}
	if (!is_null(a[A_END])) {
		int64_t e = sqlite3_value_int64(a[A_END]);
		if (!t->any_end || e > t->end_max)
			t->end_max = e;
		t->any_end = 1;
	}
	max_ratios(t, a, fl);
}

struct out {
	char *buf;
	size_t len, cap;
	int err;
};

static void key(struct out *o, const char *name)
{
	char k[64];
	int n = snprintf(k, sizeof(k), "%s\"%s\":", o->len > 1 ? "," : "", name);

	if (!o->err && buf_append(&o->buf, &o->len, &o->cap, k, (size_t)n))
		o->err = 1;
}

static void raw(struct out *o, const char *s)
{
	if (!o->err && buf_append(&o->buf, &o->len, &o->cap, s, strlen(s)))
		o->err = 1;
}

static void put_real(struct out *o, const char *name, double v)
{
	char num[40];

	key(o, name);
	if (isnan(v))
		raw(o, "null");
	else if (isinf(v))
		raw(o, v > 0 ? "9e999" : "-9e999");
	else {
		snprintf(num, sizeof(num), "%.17g", v);
		/* a double stays a double in JSON: "3" would read back as an integer */
		if (!strpbrk(num, ".eE"))
			strcat(num, ".0");
		raw(o, num);
	}
}

static void put_int(struct out *o, const char *name, int64_t v)
{
	char num[32];

	key(o, name);
	snprintf(num, sizeof(num), "%lld", (long long)v);
	raw(o, num);
}

static void put_null(struct out *o, const char *name)
{
	key(o, name);
	raw(o, "null");
}

/* The text a sum that overflowed has in the JSON: mfu_checked() turns it
 * into SQLite's own error when the sum is read, so a section fails only on
 * the sums it reads, as SUM() fails in sqlite3. */
#define OVERFLOW_TEXT "integer overflow"

/* SQLite's sumFinalize */
static void put_sum(struct out *o, const char *name, const struct sum *s)
{
	if (s->cnt == 0)
		put_null(o, name);
	else if (s->overflow) {
		key(o, name);
		raw(o, "\"" OVERFLOW_TEXT "\"");
	} else if (s->approx)
		put_real(o, name, s->r);
	else
		put_int(o, name, s->i);
}

static void put_max(struct out *o, const char *name, const struct mx *m)
{
	if (m->any)
		put_real(o, name, m->v);
	else
		put_null(o, name);
}

/* The JSON of the last mfu_step_totals_keep() of a connection. */
struct kept {
	char *json;
};

/* The JSON of @ctx's totals as its result, and kept in @k if not NULL. */
static void totals_result(sqlite3_context *ctx, struct kept *k)
{
	struct totals zero = { 0 }, *t = sqlite3_aggregate_context(ctx, 0);
	static const char *const names[S_COUNT] = {
		"wall_ns", "model_flops", "flops", "flops_ns", "n_declared", "n_library", "lib_flops",
		"both_declared", "both_lib", "model_bytes", "model_bytes_ns", "hw_flops", "hw_flops_fp64",
		"hw_flops_fp32", "hw_flops_fp16", "hw_flops_ns", "cpu_ns", "cpu_wall_ns", "dram_bytes", "dram_ns",
		"common_flops", "common_hw", "common_ns", "lib", "lib_fp64", "lib_fp32", "lib_bf16", "lib_fp16",
		"lib_int8",
	};
	struct out o = { 0 };

	if (!t)
		t = &zero;
	raw(&o, "{");
	put_int(&o, "steps", t->steps);
	for (int i = 0; i < S_COUNT; i++)
		put_sum(&o, names[i], &t->s[i]);
	if (t->s[S_WALL].cnt)
		put_real(&o, "mean_ns", t->s[S_WALL].r / (double)t->s[S_WALL].cnt);
	else
		put_null(&o, "mean_ns");
	int64_t e2e;
	if (t->any_begin && t->any_end && !__builtin_sub_overflow(t->end_max, t->begin_min, &e2e))
		put_int(&o, "e2e_ns", e2e);
	else if (t->any_begin && t->any_end) /* as SQLite does: the difference as a double */
		put_real(&o, "e2e_ns", (double)t->end_max - (double)t->begin_min);
	else
		put_null(&o, "e2e_ns");
	put_int(&o, "all_flops", t->n_flops == t->steps);
	put_int(&o, "n_flops", t->n_flops);
	put_int(&o, "n_hw", t->n_hw);
	put_int(&o, "n_common", t->n_common);
	put_int(&o, "n_bytes", t->n_bytes);
	put_int(&o, "n_lib", t->n_lib);
	put_int(&o, "n_both", t->n_both);
	put_max(&o, "max_mfu", &t->mfu);
	put_max(&o, "max_hfu", &t->hfu);
	put_max(&o, "max_mbu", &t->mbu);
	put_int(&o, "incomplete", t->incomplete);
	/* nearest rank ceil(p/100 x n), as summary.sql's pct */
	if (t->nwalls && !t->oom) {
		put_int(&o, "p50_ns", nearest_rank_select(t->walls, t->nwalls, (50 * t->nwalls + 99) / 100 - 1));
		put_int(&o, "p95_ns", nearest_rank_select(t->walls, t->nwalls, (95 * t->nwalls + 99) / 100 - 1));
	} else {
		put_null(&o, "p50_ns");
		put_null(&o, "p95_ns");
	}
	raw(&o, "}");
	free(t->walls);
	t->walls = NULL;
	if (t->oom)
		o.err = 1;
	if (o.err)
		sqlite3_result_error_nomem(ctx);
	else
		sqlite3_result_text(ctx, o.buf, (int)o.len, SQLITE_TRANSIENT);
	if (k) {
		free(k->json);
		k->json = NULL;
		if (!o.err && (k->json = malloc(o.len + 1))) {
			memcpy(k->json, o.buf, o.len);
			k->json[o.len] = '\0';
		}
	}
	free(o.buf);
}

static void totals_final(sqlite3_context *ctx)
{
	totals_result(ctx, NULL);
}

/* mfu_step_totals_keep(): the same, its result kept for
 * mfu_step_totals_kept() */
static void keep_final(sqlite3_context *ctx)
{
	totals_result(ctx, sqlite3_user_data(ctx));
}

static void kept_value(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	struct kept *k = sqlite3_user_data(ctx);

	(void)argc;
	(void)argv;
	if (k->json)
		sqlite3_result_text(ctx, k->json, -1, SQLITE_TRANSIENT);
	else
		sqlite3_result_null(ctx);
}

static void kept_free(void *p)
{
	struct kept *k = p;

	free(k->json);
	free(k);
}

/* mfu_checked(x): x, or SQLite's "integer overflow" error for the text a
 * sum that overflowed has in the totals' JSON. */
static void checked_value(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	(void)argc;
	if (sqlite3_value_type(argv[0]) == SQLITE_TEXT &&
	    strcmp((const char *)sqlite3_value_text(argv[0]), OVERFLOW_TEXT) == 0)
		sqlite3_result_error(ctx, OVERFLOW_TEXT, -1);
	else
		sqlite3_result_value(ctx, argv[0]);
}

int step_totals_register(sqlite3 *db)
{
	struct kept *k = calloc(1, sizeof(*k));
	int rc = sqlite3_create_function(db, "mfu_step_totals", A_COUNT, SQLITE_UTF8 | SQLITE_DETERMINISTIC, NULL,
					 NULL, totals_step, totals_final);

	if (rc == SQLITE_OK)
		rc = sqlite3_create_function(db, "mfu_checked", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, NULL,
					     checked_value, NULL, NULL);

	if (!k)
		return SQLITE_NOMEM;
	if (rc != SQLITE_OK) {
		free(k);
		return rc;
	}
	/* k is the keep function's; kept_free runs when the last goes */
	rc = sqlite3_create_function_v2(db, "mfu_step_totals_keep", A_COUNT, SQLITE_UTF8, k, NULL, totals_step,
					keep_final, kept_free);
	if (rc != SQLITE_OK)
		return rc; /* (sqlite3_create_function_v2 calls kept_free) */
	return sqlite3_create_function_v2(db, "mfu_step_totals_kept", 0, SQLITE_UTF8, k, kept_value, NULL, NULL,
					  NULL);
}
