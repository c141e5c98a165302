#include "phase_stats.h"
#include "phase_stats_impl.h"
#include "cached_table.h"
#include "util.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The counted occurrences are phases.sql's CTE ok: the complete ones, but
 * not those of a step that never ended (bad_sql; the check is made here, a
 * lookup in SQL costs 10% of the scan). The rows come in rowid order (NOT
 * INDEXED: through the phase_name index every row would be a random read).
 * The last column is phases.sql's dram_bytes expression. */
static const char bad_sql[] = "SELECT step FROM step WHERE complete = 0 ORDER BY step";
static const char rows_sql[] =
	"SELECT name, id, step, wall_ns, hw_flops, model_bytes, cpu_ns,"
	" coalesce(dram_bytes, dram_read_bytes + dram_write_bytes), model_flops, lib_flops, begin_ns, end_ns"
	" FROM phase NOT INDEXED WHERE complete = 1";
/* mfu-report --skip-steps shadows the phase table with a TEMP view, which
 * takes no NOT INDEXED. */
static const char rows_view_sql[] =
	"SELECT name, id, step, wall_ns, hw_flops, model_bytes, cpu_ns,"
	" coalesce(dram_bytes, dram_read_bytes + dram_write_bytes), model_flops, lib_flops, begin_ns, end_ns"
	" FROM phase WHERE complete = 1";

/* The columns of rows_sql. flops and flops_source, virtual columns that
 * SQLite computes again at each mention, are made here from model_flops and
 * lib_flops as the schema defines them (row_flops): 0.1 s less on three
 * million phases. */
enum { Q_NAME, Q_ID, Q_STEP, Q_WALL, Q_HW_FLOPS, Q_MODEL_BYTES, Q_CPU, Q_DRAM, Q_MODEL_FLOPS, Q_LIB_FLOPS,
       Q_BEGIN, Q_END };
/* A row's values: the columns Q_WALL to Q_LIB_FLOPS, R_STEP only for its
 * type; R_FLOPS is the MFU numerator (phase.flops: declared, else library),
 * R_DECLARED and R_LIBRARY are flops_source = 'declared' and = 'library' as
 * SQL has them (NULL, 0 or 1). */
enum { R_STEP, R_WALL, R_HW_FLOPS, R_MODEL_BYTES, R_CPU, R_DRAM, R_MODEL_FLOPS, R_LIB_FLOPS, R_FLOPS,
       R_DECLARED, R_LIBRARY, R_NCELLS };
_Static_assert(Q_LIB_FLOPS - Q_WALL == R_LIB_FLOPS - R_WALL, "row_read: a cell per column, in order");

/* The table's columns; the sums come first, in the order of enum sum_col. */
static const char table_sql[] =
	"CREATE TABLE x(name, n, first_id, total_ns, flops, flops_ns, hw_flops, hw_flops_ns,"
	" model_bytes, model_bytes_ns, cpu_ns, dram_bytes, dram_ns, model_flops, lib_flops, nd, nl, step_ns, p50_ns,"
	" p95_ns,"
	" union_ns, union_flops_ns, union_hw_ns, union_bytes_ns, union_dram_ns, n_flops, n_hw, n_both)";

enum { C_NAME, C_N, C_FIRST_ID, C_SUMS, C_P50 = C_SUMS + 15, C_P95, C_UNION };

/* After the unions: how many occurrences have flops, hw_flops and both
 * (the notes' span: mfu and hfu of a phase over different occurrences). */
enum { C_NFLOPS = C_UNION + NUNIONS, C_NHW, C_NBOTH };

/* The sums of g: the column summed, and the column that must not be NULL
 * for the row to count (the "CASE WHEN x IS NOT NULL THEN wall_ns END"), or
 * -1. */
static const struct {
	int col, unless_null;
} sum_cols[] = {
	{ R_WALL, -1 },  { R_FLOPS, -1 }, { R_WALL, R_FLOPS }, { R_HW_FLOPS, -1 },
	{ R_WALL, R_HW_FLOPS }, { R_MODEL_BYTES, -1 }, { R_WALL, R_MODEL_BYTES }, { R_CPU, -1 },
	{ R_DRAM, -1 },  { R_WALL, R_DRAM }, { R_MODEL_FLOPS, -1 }, { R_LIB_FLOPS, -1 },
	{ R_DECLARED, -1 }, { R_LIBRARY, -1 }, { R_WALL, R_STEP },
};
#define NSUMS (sizeof(sum_cols) / sizeof(sum_cols[0]))

_Static_assert(C_SUMS + NSUMS == C_P50, "one table column per sum");

/* One phase name. */
struct group {
	char *name;
	int name_len, blob;
	int64_t n, first_id;
	int64_t nflops, nhw, nboth;
	struct sum sums[NSUMS];
	double *walls;         /* the non-NULL wall times, for the percentiles */
	size_t nwalls, cap;
	int64_t nnull;         /* NULL wall times: they sort first, as in SQL */
	int walls_int;         /* every wall time was an integer */
	int pct_null[2];
	double pct[2];
	struct span *spans;
	size_t nspans, spans_cap;
	struct sum unions[NUNIONS]; /* SUM() of the parts: NULL without spans */
};

struct stats {
	struct cached_result base; /* first: the virtual table's cache */
	struct group *groups;
	size_t ngroups, cap;
	uint32_t *hash;        /* 1 + index into groups, 0 = empty */
	size_t hash_size;      /* a power of two, at least 2 x ngroups */
};

/* The table and its last result: the table and markdown formats read every
 * section twice, and a million phase rows are worth not scanning twice. */
static void stats_destroy(struct cached_result *r)
{
	struct stats *s = (struct stats *)r;

	for (size_t i = 0; i < s->ngroups; i++) {
		free(s->groups[i].name);
		free(s->groups[i].walls);
		free(s->groups[i].spans);
	}
	free(s->groups);
	free(s->hash);
	free(s);
}


static uint32_t hash_bytes(const unsigned char *p, int n, int blob)
{
	uint32_t h = 2166136261u ^ (uint32_t)blob; /* FNV-1a */

	for (int i = 0; i < n; i++)
		h = (h ^ p[i]) * 16777619u;
	return h;
}

static int hash_grow(struct stats *s)
{
	size_t size = s->hash_size ? s->hash_size * 2 : 64;
	uint32_t *hash = calloc(size, sizeof(*hash));

	if (!hash)
		return -ENOMEM;
	for (size_t i = 0; i < s->ngroups; i++) {
		struct group *g = &s->groups[i];
		size_t at = hash_bytes((const unsigned char *)g->name, g->name_len, g->blob) & (size - 1);

		while (hash[at])
			at = (at + 1) & (size - 1);
		hash[at] = (uint32_t)(i + 1);
	}
	free(s->hash);
	s->hash = hash;
	s->hash_size = size;
	return 0;
}

/* The group of name @p (@n bytes), created if new. */
static struct group *group_get(struct stats *s, const unsigned char *p, int n, int blob)
{
	size_t at;
	struct group *g;

	if (2 * (s->ngroups + 1) > s->hash_size && (s->ngroups >= UINT32_MAX - 1 || hash_grow(s)))
		return NULL;
	at = hash_bytes(p, n, blob) & (s->hash_size - 1);
	for (; s->hash[at]; at = (at + 1) & (s->hash_size - 1)) {
		g = &s->groups[s->hash[at] - 1];
		if (g->name_len == n && g->blob == blob && memcmp(g->name, p, (size_t)n) == 0)
			return g;
	}
	if (array_grow(&s->groups, &s->cap, s->ngroups + 1, sizeof(*s->groups)))
		return NULL;
	g = &s->groups[s->ngroups];
	memset(g, 0, sizeof(*g));
	g->name = malloc((size_t)n + 1);
	if (!g->name)
		return NULL;
	if (n)
		memcpy(g->name, p, (size_t)n);
	g->name[n] = '\0';
	g->name_len = n;
	g->blob = blob;
	g->first_id = INT64_MAX;
	g->walls_int = 1;
	s->hash[at] = (uint32_t)++s->ngroups;
	return g;
}

static int wall_add(struct group *g, const struct cell *c)
{
	if (c->type == SQLITE_NULL) {
		g->nnull++;
		return 0;
	}
	if (array_grow(&g->walls, &g->cap, g->nwalls + 1, sizeof(*g->walls)))
		return -ENOMEM;
	/* Exact below 2^53 ns (104 days); above, the value and the order are
	 * rounded as SQL's wall_ns / 1e6 rounds them anyway. */
	g->walls[g->nwalls++] = c->type == SQLITE_INTEGER ? (double)c->i : c->r;
	g->walls_int &= c->type == SQLITE_INTEGER;
	return 0;
}

static void swap(double *a, double *b)
{
	double t = *a;
	*a = *b;
	*b = t;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

void phase_stats_select(double *v, size_t n, size_t k)
{
	ptrdiff_t lo = 0, hi = (ptrdiff_t)n - 1, kk = (ptrdiff_t)k;
	int limit = 4; /* 2 log2(n) + 4 rounds, as introselect allows */

	for (size_t m = n; m > 1; m >>= 1)
		limit += 2;

	/* Hoare's selection with a median-of-three pivot. A partition that
	 * stops at values equal to the pivot keeps runs of equal times
	 * balanced. Inputs that defeat the pivot choice fall back to a sort of
	 * what is left, so the worst case stays O(n log n). */
	for (int rounds = 0; hi > lo; rounds++) {
		ptrdiff_t mid = lo + (hi - lo) / 2, i = lo, j = hi;
		double pivot;

		if (rounds == limit) {
			qsort(v + lo, (size_t)(hi - lo + 1), sizeof(*v), cmp_double);
			return;
		}
		if (v[mid] < v[lo])
			swap(&v[mid], &v[lo]);
		if (v[hi] < v[lo])
			swap(&v[hi], &v[lo]);
		if (v[hi] < v[mid])
			swap(&v[hi], &v[mid]);
		pivot = v[mid];
		while (i <= j) {
			while (v[i] < pivot)
				i++;
			while (v[j] > pivot)
				j--;
			if (i <= j)
				swap(&v[i++], &v[j--]);
		}
		/* v[lo..j] <= pivot, v[i..hi] >= pivot, and between them == pivot */
		if (kk <= j)
			hi = j;
		else if (kk >= i)
			lo = i;
		else
			return;
	}
}

/* The nearest-rank percentiles of one group: rank ceil(p * n / 100), as
 * (p * n + 99) / 100 in integers like phases.sql, counting the NULL wall
 * times first as ORDER BY does. */
static void group_percentiles(struct group *g)
{
	static const int64_t p[2] = { 50, 95 };
	size_t from = 0;

	for (int i = 0; i < 2; i++) {
		int64_t rank = (p[i] * g->n + 99) / 100;

		g->pct_null[i] = rank <= g->nnull;
		if (g->pct_null[i])
			continue;
		size_t k = (size_t)(rank - g->nnull - 1);
		/* after the first selection v[from..] >= v[from]: the second rank,
		 * never smaller, is found among them */
		phase_stats_select(g->walls + from, g->nwalls - from, k - from);
		g->pct[i] = g->walls[k];
		from = k;
	}
}

static int cmp_int64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

/* The steps that never ended, ascending, in *out (malloc'd, *n of them).
 * Returns an SQLite code. */
static int bad_steps(sqlite3 *db, int64_t **out, size_t *n)
{
	sqlite3_stmt *st = NULL;
	size_t cap = 0;
	int rc = sqlite3_prepare_v2(db, bad_sql, -1, &st, NULL);

	*out = NULL;
	*n = 0;
	while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (array_grow(out, &cap, *n + 1, sizeof(**out))) {
			rc = SQLITE_NOMEM;
			break;
		}
		(*out)[(*n)++] = sqlite3_column_int64(st, 0);
		rc = SQLITE_OK;
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

static int cmp_first_id(const void *a, const void *b)
{
	int64_t x = ((const struct group *)a)->first_id, y = ((const struct group *)b)->first_id;
	return (x > y) - (x < y);
}

/* The group of the row @st is at (its name: text, or a blob), created if
 * new; NULL when out of memory. */
static struct group *row_group(struct stats *s, sqlite3_stmt *st)
{
	int blob = sqlite3_column_type(st, Q_NAME) == SQLITE_BLOB;
	const unsigned char *name = blob ? sqlite3_column_blob(st, Q_NAME) : sqlite3_column_text(st, Q_NAME);
	int len = sqlite3_column_bytes(st, Q_NAME);

	return group_get(s, name ? name : (const unsigned char *)"", name ? len : 0, blob);
}

/* lib_flops > 0 as SQL compares @c: NULL is not, text and blobs are (they
 * sort after every number). */
static int cell_positive(const struct cell *c)
{
	switch (c->type) {
	case SQLITE_NULL:
		return 0;
	case SQLITE_INTEGER:
		return c->i > 0;
	case SQLITE_FLOAT:
		return c->r > 0;
	default:
		return 1;
	}
}

/* The schema's virtual columns of @row: flops = coalesce(model_flops,
 * CASE WHEN lib_flops > 0 THEN lib_flops END), flops_source 'declared'
 * when model_flops is not NULL, else 'library' when lib_flops > 0. */
static void row_flops(struct cell *row)
{
	int declared = row[R_MODEL_FLOPS].type != SQLITE_NULL;
	int library = !declared && cell_positive(&row[R_LIB_FLOPS]);
	int type = declared || library ? SQLITE_INTEGER : SQLITE_NULL;

	row[R_FLOPS] = declared ? row[R_MODEL_FLOPS] : library ? row[R_LIB_FLOPS] : (struct cell){ .type = SQLITE_NULL };
	row[R_DECLARED] = (struct cell){ .type = type, .i = declared };
	row[R_LIBRARY] = (struct cell){ .type = type, .i = library };
}

/* The values of the row @st is at into @row[R_NCELLS]. */
static void row_read(sqlite3_stmt *st, struct cell *row)
{
	sqlite3_value *v;

	/* Each column once, through its sqlite3_value: half the cost of
	 * sqlite3_column_type() plus a getter (such use of the value is
	 * only unsafe across threads, and one thread reads here). */
	for (int i = Q_WALL; i <= Q_LIB_FLOPS; i++) {
		struct cell *c = &row[R_WALL + (i - Q_WALL)];

		v = sqlite3_column_value(st, i);
		c->type = sqlite3_value_type(v);
		if (c->type == SQLITE_INTEGER)
			c->i = sqlite3_value_int64(v);
		else if (c->type != SQLITE_NULL)
			c->r = sqlite3_value_double(v);
	}
	/* only whether the occurrence is in a step (step_ns) */
	row[R_STEP].type = sqlite3_column_type(st, Q_STEP);
	row_flops(row);
}

/* Count the occurrence of @g with values @row and id @id (its wall time
 * already added): n, the counts, the first id, the sums. */
static void group_add_row(struct group *g, const struct cell *row, int64_t id)
{
	g->n++;
	g->nflops += row[R_FLOPS].type != SQLITE_NULL;
	g->nhw += row[R_HW_FLOPS].type != SQLITE_NULL;
	g->nboth += row[R_FLOPS].type != SQLITE_NULL && row[R_HW_FLOPS].type != SQLITE_NULL;
	if (id < g->first_id)
		g->first_id = id;
	for (size_t i = 0; i < NSUMS; i++)
		if (sum_cols[i].unless_null < 0 || row[sum_cols[i].unless_null].type != SQLITE_NULL)
			sum_add(&g->sums[i], &row[sum_cols[i].col]);
}

/* The span of the row @st is at (values @row) for @g's unions. Returns 0
 * or -ENOMEM. */
static int group_add_span(struct group *g, sqlite3_stmt *st, const struct cell *row)
{
	static const int cols[3] = { Q_STEP, Q_BEGIN, Q_END };
	struct span sp = { .has = 1u << U_ALL };

	for (int k = 0; k < 3; k++) {
		sqlite3_value *v = sqlite3_column_value(st, cols[k]);
		double r;

		sp.t[k] = (unsigned char)sqlite3_value_type(v);
		if (sp.t[k] == SQLITE_INTEGER) {
			sp.v[k] = sqlite3_value_int64(v);
		} else if (sp.t[k] == SQLITE_FLOAT) {
			r = sqlite3_value_double(v);
			memcpy(&sp.v[k], &r, sizeof(r));
		} else if (sp.t[k] != SQLITE_NULL) {
			/* A time that is text or a blob (no number: only an
			 * edited file has one) leaves the occurrence out of the
			 * unions; sqlite3 would order it after every number. */
			return 0;
		}
	}
	sp.has |= (row[R_FLOPS].type != SQLITE_NULL) << U_FLOPS;
	sp.has |= (row[R_HW_FLOPS].type != SQLITE_NULL) << U_HW;
	sp.has |= (row[R_MODEL_BYTES].type != SQLITE_NULL) << U_BYTES;
	sp.has |= (row[R_DRAM].type != SQLITE_NULL) << U_DRAM;
	if (array_grow(&g->spans, &g->spans_cap, g->nspans + 1, sizeof(*g->spans)))
		return -ENOMEM;
	g->spans[g->nspans++] = sp;
	return 0;
}

/* After the scan: each group's percentiles and unions (its spans freed),
 * and the groups in the order of their first id. */
static void stats_finish(struct stats *s)
{
	for (size_t i = 0; i < s->ngroups; i++) {
		group_percentiles(&s->groups[i]);
		phase_stats_unions(s->groups[i].spans, s->groups[i].nspans, s->groups[i].unions);
		free(s->groups[i].spans);
		s->groups[i].spans = NULL;
	}
	/* the hash points into groups by index: it goes before the sort */
	free(s->hash);
	s->hash = NULL;
	s->hash_size = 0;
	if (s->ngroups)
		qsort(s->groups, s->ngroups, sizeof(*s->groups), cmp_first_id);
}

/* Read the counted occurrences once and fill @s. Returns an SQLite code,
 * with the message in @vt. */
static int stats_compute(struct cached_table *vt, struct stats *s)
{
	sqlite3_stmt *st = NULL;
	int64_t *bad = NULL;
	size_t nbad = 0;
	int rc, have_bad = 0;

	rc = sqlite3_prepare_v2(vt->db, rows_sql, -1, &st, NULL);
	if (rc != SQLITE_OK)
		rc = sqlite3_prepare_v2(vt->db, rows_view_sql, -1, &st, NULL);
	if (rc != SQLITE_OK)
		goto error;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct cell row[R_NCELLS];
		struct group *g;
		int64_t step;

		/* at the first row: without phases, no scan of the steps */
		if (!have_bad) {
			rc = bad_steps(vt->db, &bad, &nbad);
			if (rc == SQLITE_NOMEM)
				goto out;
			if (rc != SQLITE_OK)
				goto error;
			have_bad = 1;
		}

		/* only an integer equals a step number (INTEGER PRIMARY KEY) */
		if (nbad && sqlite3_column_type(st, Q_STEP) == SQLITE_INTEGER &&
		    (step = sqlite3_column_int64(st, Q_STEP),
		     bsearch(&step, bad, nbad, sizeof(*bad), cmp_int64)))
			continue;

		g = row_group(s, st);
		row_read(st, row);
		if (!g || wall_add(g, &row[R_WALL])) {
			rc = SQLITE_NOMEM;
			goto out;
		}
		group_add_row(g, row, sqlite3_column_int64(st, Q_ID));
		if (group_add_span(g, st, row)) {
			rc = SQLITE_NOMEM;
			goto out;
		}
	}
	if (rc != SQLITE_DONE)
		goto error;
	rc = SQLITE_OK;
	stats_finish(s);
	goto out;
error:
	sqlite3_free(vt->base.zErrMsg);
	vt->base.zErrMsg = sqlite3_mprintf("mfu_phase_stats: %s", sqlite3_errmsg(vt->db));
out:
	sqlite3_finalize(st);
	free(bad);
	return rc;
}

/* The table's rows, computed (cached_table.h). */
static int compute(struct cached_table *vt, struct cached_result **out)
{
	struct stats *s = calloc(1, sizeof(*s));
	int rc;

	if (!s)
		return SQLITE_NOMEM;
	s->base.refs = 1;
	s->base.destroy = stats_destroy;
	rc = stats_compute(vt, s);
	if (rc != SQLITE_OK) {
		cached_result_unref(&s->base);
		return rc;
	}
	*out = &s->base;
	return SQLITE_OK;
}

static int connect_table(sqlite3 *db, void *aux, int argc, const char *const *argv, sqlite3_vtab **out, char **err)
{
	(void)aux;
	(void)argc;
	(void)argv;
	(void)err;
	return cached_table_connect(db, table_sql, NULL, compute, out);
}

static int vt_best_index(sqlite3_vtab *base, sqlite3_index_info *info)
{
	(void)base;
	/* no constraint helps: every row needs the whole scan */
	info->estimatedCost = 1e6;
	info->estimatedRows = 100;
	return SQLITE_OK;
}

static int vt_filter(sqlite3_vtab_cursor *base, int idx, const char *idx_str, int argc, sqlite3_value **argv)
{
	struct cached_cursor *c = (struct cached_cursor *)base;
	int rc;

	(void)idx;
	(void)idx_str;
	(void)argc;
	(void)argv;
	rc = cached_table_filter(c);
	if (rc == SQLITE_OK)
		c->end = ((const struct stats *)c->r)->ngroups;
	return rc;
}

static void result_sum(sqlite3_context *ctx, const struct sum *s)
{
	if (s->count == 0)
		sqlite3_result_null(ctx);
	else if (s->overflow)
		sqlite3_result_error(ctx, "integer overflow", -1);
	else if (s->approx)
		sqlite3_result_double(ctx, s->r);
	else
		sqlite3_result_int64(ctx, s->i);
}

static int vt_column(sqlite3_vtab_cursor *base, sqlite3_context *ctx, int col)
{
	struct cached_cursor *c = (struct cached_cursor *)base;
	const struct group *g = &((const struct stats *)c->r)->groups[c->row];

	switch (col) {
	case C_NAME:
		if (g->blob)
			sqlite3_result_blob(ctx, g->name, g->name_len, SQLITE_TRANSIENT);
		else
			sqlite3_result_text(ctx, g->name, g->name_len, SQLITE_TRANSIENT);
		break;
	case C_N: sqlite3_result_int64(ctx, g->n); break;
	case C_FIRST_ID: sqlite3_result_int64(ctx, g->first_id); break;
	case C_NFLOPS: sqlite3_result_int64(ctx, g->nflops); break;
	case C_NHW: sqlite3_result_int64(ctx, g->nhw); break;
	case C_NBOTH: sqlite3_result_int64(ctx, g->nboth); break;
	case C_P50:
	case C_P95: {
		int i = col - C_P50;

		if (g->pct_null[i])
			sqlite3_result_null(ctx);
		else if (g->walls_int)
			/* an integer wall time as a double: INT64_MAX became 2^63,
			 * one past what converts back (an edited database's) */
			sqlite3_result_int64(ctx, g->pct[i] >= 9223372036854775808.0 ? INT64_MAX
											: (sqlite3_int64)g->pct[i]);
		else
			sqlite3_result_double(ctx, g->pct[i]);
		break;
	}
	default:
		if (col >= C_UNION && col < C_UNION + NUNIONS)
			result_sum(ctx, &g->unions[col - C_UNION]);
		else if (col >= C_SUMS && col < C_P50)
			result_sum(ctx, &g->sums[col - C_SUMS]);
		else
			sqlite3_result_null(ctx);
	}
	return SQLITE_OK;
}

static const sqlite3_module phase_stats_module = CACHED_TABLE_MODULE(vt_best_index, vt_filter, vt_column);

int phase_stats_register(sqlite3 *db)
{
	return sqlite3_create_module(db, "mfu_phase_stats", &phase_stats_module, NULL) == SQLITE_OK ? 0 : -EIO;
}
