/* mfu_nearest_rank (nearest_rank.h). */
#include "nearest_rank.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct values {
	int64_t *v;
	size_t n, cap;
	double p;
	int oom;
};

static void nr_step(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	struct values *s = sqlite3_aggregate_context(ctx, sizeof(*s));

	(void)argc;
	if (!s || s->oom)
		return;
	s->p = sqlite3_value_double(argv[1]);
	if (sqlite3_value_type(argv[0]) == SQLITE_NULL)
		return;
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 1024;
		int64_t *v = realloc(s->v, cap * sizeof(*v));

		if (!v) {
			s->oom = 1;
			return;
		}
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n++] = sqlite3_value_int64(argv[0]);
}

/* The k-th smallest (0-based) of @v[0..n): Hoare's selection with the
 * middle element as pivot (step times come nearly sorted, or all equal). */
int64_t nearest_rank_select(int64_t *v, size_t n, size_t k)
{
	long lo = 0, hi = (long)n - 1, kk = (long)k;

	while (lo < hi) {
		int64_t pivot = v[lo + (hi - lo) / 2];
		long i = lo - 1, j = hi + 1;

		for (;;) {
			do
				i++;
			while (v[i] < pivot);
			do
				j--;
			while (v[j] > pivot);
			if (i >= j)
				break;
			int64_t t = v[i];
			v[i] = v[j];
			v[j] = t;
		}
		/* v[lo..j] <= pivot <= v[j+1..hi] */
		if (kk <= j)
			hi = j;
		else
			lo = j + 1;
	}
	return v[kk];
}

static void nr_final(sqlite3_context *ctx)
{
	struct values *s = sqlite3_aggregate_context(ctx, 0);
	double rank;
	size_t k;

	if (!s || (!s->oom && s->n == 0)) {
		if (s)
			free(s->v);
		sqlite3_result_null(ctx);
		return;
	}
	if (s->oom) {
		free(s->v);
		sqlite3_result_error_nomem(ctx);
		return;
	}
	/* rank ceil(p/100 x n), 1-based, as (p x n + 99) / 100 in integers */
	rank = (s->p * (double)s->n + 99.0) / 100.0;
	k = rank < 1 ? 0 : (size_t)rank - 1;
	if (k >= s->n)
		k = s->n - 1;
	sqlite3_result_int64(ctx, nearest_rank_select(s->v, s->n, k));
	free(s->v);
}

int nearest_rank_register(sqlite3 *db)
{
	return sqlite3_create_function(db, "mfu_nearest_rank", 2, SQLITE_UTF8 | SQLITE_DETERMINISTIC, NULL, NULL,
				       nr_step, nr_final);
}
