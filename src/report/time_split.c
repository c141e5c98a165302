/* The scans behind time_split.h: the off-CPU intervals and cpu-clock
 * samples read once and sorted by thread (or process) and time, then each
 * step or phase occurrence looks its own up by binary search, as the SQL's
 * index probes do, with the SQL's arithmetic: integers, a NULL end that
 * matches nothing. Whatever that arithmetic could not hold in 64 bits (a
 * sum, a difference) is TS_IRREGULAR: the SQL decides it. */
#include "time_split.h"
#include "time_split_impl.h"
#include "util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The classes of a sample as the SQL counts them: class = 'kernel' and so
 * on; a NULL class is NULL in every sum, any other value 0. */
enum { CL_NULL, CL_KERNEL, CL_SYNC, CL_DISPATCH, CL_UNCLASSIFIED, CL_COMPUTE, CL_OTHER, NCLASSES };

struct off {
	int64_t tid, start, end;
	int kind; /* 1 blocked, 2 runnable, 0 other */
};

struct smp {
	int64_t key, t; /* tid or pid, time_ns */
	int cls;
};

/* What the intervals of one group (a step, a phase name) hold. */
struct acc {
	int64_t blocked, runnable;
	int64_t abs;            /* the sum of |part|: while it fits, every order of the sum does */
	int64_t cnt[NCLASSES];
};

struct inputs {
	int64_t sampling;       /* rows in the sampling table */
	int64_t maxdur;
	struct off *offs;
	size_t noffs;
	struct smp *smps;
	size_t nsmps;
};

/* Column @i of @st: 1 and *@v for an integer, 0 for NULL, -1 otherwise. */
static int col_int(sqlite3_stmt *st, int i, int64_t *v)
{
	switch (sqlite3_column_type(st, i)) {
	case SQLITE_INTEGER: *v = sqlite3_column_int64(st, i); return 1;
	case SQLITE_NULL: return 0;
	default: return -1;
	}
}

static int text_is(sqlite3_stmt *st, int i, const char *s)
{
	size_t n = strlen(s);

	return sqlite3_column_type(st, i) == SQLITE_TEXT && (size_t)sqlite3_column_bytes(st, i) == n &&
	       memcmp(sqlite3_column_text(st, i), s, n) == 0;
}

static int sample_class(sqlite3_stmt *st, int i)
{
	static const char *const names[] = { "kernel", "sync", "dispatch", "unclassified", "compute" };

	if (sqlite3_column_type(st, i) == SQLITE_NULL)
		return CL_NULL;
	for (int k = 0; k < 5; k++)
		if (text_is(st, i, names[k]))
			return CL_KERNEL + k;
	return CL_OTHER;
}

static int cmp_off(const void *a, const void *b)
{
	const struct off *x = a, *y = b;

	return x->tid != y->tid ? (x->tid > y->tid) - (x->tid < y->tid) : (x->start > y->start) - (x->start < y->start);
}

static int cmp_smp(const void *a, const void *b)
{
	const struct smp *x = a, *y = b;

	return x->key != y->key ? (x->key > y->key) - (x->key < y->key) : (x->t > y->t) - (x->t < y->t);
}

/* One integer from @sql into *@v: 0, TS_IRREGULAR when not an integer, or
 * an SQLite code. */
static int one_int(sqlite3 *db, const char *sql, int64_t *v)
{
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);

	if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW)
		rc = col_int(st, 0, v) == 1 ? SQLITE_OK : TS_IRREGULAR;
	sqlite3_finalize(st);
	return rc;
}

static int load_offcpu(sqlite3 *db, struct inputs *in)
{
	sqlite3_stmt *st = NULL;
	size_t cap = 0;
	int rc = one_int(db, "SELECT coalesce(max(dur_ns), 0) FROM offcpu", &in->maxdur);

	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v2(db, "SELECT tid, start_ns, end_ns, kind FROM offcpu", -1, &st, NULL);
	while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct off o;

		if (col_int(st, 0, &o.tid) != 1 || col_int(st, 1, &o.start) != 1 || col_int(st, 2, &o.end) != 1) {
			rc = TS_IRREGULAR;
			break;
		}
		o.kind = text_is(st, 3, "blocked") ? 1 : text_is(st, 3, "runnable") ? 2 : 0;
		if (array_grow(&in->offs, &cap, in->noffs + 1, sizeof(*in->offs))) {
			rc = SQLITE_NOMEM;
			break;
		}
		in->offs[in->noffs++] = o;
		rc = SQLITE_OK;
	}
	sqlite3_finalize(st);
	if (rc == SQLITE_DONE) {
		rc = SQLITE_OK;
		if (in->noffs) /* qsort(NULL, 0) is undefined */
			qsort(in->offs, in->noffs, sizeof(*in->offs), cmp_off);
	}
	return rc;
}

/* The cpu-clock samples (kind = 0, tested by SQLite as the SQL tests it)
 * keyed by @key ("tid" or "pid"). */
static int load_samples(sqlite3 *db, const char *key, struct inputs *in)
{
	char sql[96];
	sqlite3_stmt *st = NULL;
	size_t cap = 0;
	int rc;

	strbuf(sql, sizeof(sql), "SELECT %s, time_ns, class FROM sample WHERE kind = 0", key);
	rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
	while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct smp s;

		if (col_int(st, 0, &s.key) != 1 || col_int(st, 1, &s.t) != 1) {
			rc = TS_IRREGULAR;
			break;
		}
		s.cls = sample_class(st, 2);
		if (array_grow(&in->smps, &cap, in->nsmps + 1, sizeof(*in->smps))) {
			rc = SQLITE_NOMEM;
			break;
		}
		in->smps[in->nsmps++] = s;
		rc = SQLITE_OK;
	}
	sqlite3_finalize(st);
	if (rc == SQLITE_DONE) {
		rc = SQLITE_OK;
		if (in->nsmps)
			qsort(in->smps, in->nsmps, sizeof(*in->smps), cmp_smp);
	}
	return rc;
}

/* The sampling count, the off-CPU intervals and the samples by thread. */
static int load_inputs(sqlite3 *db, struct inputs *in)
{
	int rc;

	memset(in, 0, sizeof(*in));
	rc = one_int(db, "SELECT count(*) FROM sampling", &in->sampling);
	if (rc == SQLITE_OK)
		rc = load_offcpu(db, in);
	if (rc == SQLITE_OK)
		rc = load_samples(db, "tid", in);
	return rc;
}

static void inputs_free(struct inputs *in)
{
	free(in->offs);
	free(in->smps);
}

static int add_abs(struct acc *a, int64_t part)
{
	int64_t m;

	if (part == INT64_MIN)
		return TS_IRREGULAR;
	m = part < 0 ? -part : part;
	return __builtin_add_overflow(a->abs, m, &a->abs) ? TS_IRREGULAR : 0;
}

/* Add to @a what thread @tid did in [@begin, @end) (@has_end 0: a NULL
 * end, which matches nothing), as breakdown.sql's off and smp join it:
 *   o.tid = tid AND o.start_ns < end AND o.start_ns > begin - maxdur - 1
 *     AND o.end_ns > begin, adding min(o.end_ns, end) - max(o.start_ns, begin)
 *   s.tid = tid AND s.time_ns >= begin AND s.time_ns < end
 * Returns 0 or TS_IRREGULAR. */
static int acc_span(const struct inputs *in, struct acc *a, int64_t tid, int64_t begin, int64_t end, int has_end)
{
	size_t lo, hi;
	int64_t from;

	if (!has_end)
		return 0;
	if (in->noffs) {
		if (__builtin_sub_overflow(begin, in->maxdur, &from) || __builtin_sub_overflow(from, 1, &from))
			return TS_IRREGULAR;
		for (lo = 0, hi = in->noffs; lo < hi;) { /* the first (tid, start) > (tid, from) */
			size_t mid = lo + (hi - lo) / 2;
			const struct off *o = &in->offs[mid];

			if (o->tid < tid || (o->tid == tid && o->start <= from))
				lo = mid + 1;
			else
				hi = mid;
		}
		for (const struct off *o = in->offs + lo; o < in->offs + in->noffs && o->tid == tid && o->start < end; o++) {
			int64_t part;

			if (o->end <= begin)
				continue;
			if (__builtin_sub_overflow(o->end < end ? o->end : end, o->start > begin ? o->start : begin, &part) ||
			    add_abs(a, part))
				return TS_IRREGULAR;
			if (o->kind == 1)
				a->blocked += part;
			else if (o->kind == 2)
				a->runnable += part;
		}
	}
	if (!in->nsmps)
		return 0;
	for (lo = 0, hi = in->nsmps; lo < hi;) { /* the first (tid, t) >= (tid, begin) */
		size_t mid = lo + (hi - lo) / 2;
		const struct smp *s = &in->smps[mid];

		if (s->key < tid || (s->key == tid && s->t < begin))
			lo = mid + 1;
		else
			hi = mid;
	}
	for (const struct smp *s = in->smps + lo; s < in->smps + in->nsmps && s->key == tid && s->t < end; s++)
		a->cnt[s->cls]++;
	return 0;
}

static int64_t acc_samples(const struct acc *a)
{
	int64_t n = 0;

	for (int k = 0; k < NCLASSES; k++)
		n += a->cnt[k];
	return n;
}

/* ---- the breakdown's sums ---- */

static void sums_add(struct time_split_sums *out, int col, double v)
{
	out->sum[col] += v;
	out->known[col]++;
}

/* One breakdown row (wall_ns @wall, NULL when !@has_wall) added to @out:
 * its values as breakdown.sql's final SELECT makes them. */
static int breakdown_row(const struct inputs *in, const struct acc *a, int64_t wall, int has_wall,
			 struct time_split_sums *out)
{
	int64_t n = acc_samples(a), oncpu = 0;
	int has_oncpu = in->sampling && has_wall;

	out->steps++;
	if (has_wall)
		sums_add(out, TS_WALL, (double)wall / 1e6);
	if (in->sampling) {
		sums_add(out, TS_BLOCKED, (double)a->blocked / 1e6);
		sums_add(out, TS_RUNNABLE, (double)a->runnable / 1e6);
	}
	if (has_oncpu && (__builtin_sub_overflow(wall, a->blocked, &oncpu) ||
			  __builtin_sub_overflow(oncpu, a->runnable, &oncpu)))
		return TS_IRREGULAR;
	/* CASE WHEN n > 0 THEN oncpu_ns * nk / n / 1e6 END: NULL without an
	 * on-CPU time, or when no sample has a class (the sum is NULL) */
	if (n > 0 && has_oncpu && a->cnt[CL_NULL] < n) {
		for (int k = 0; k < 5; k++) {
			int64_t prod;

			if (__builtin_mul_overflow(oncpu, a->cnt[CL_KERNEL + k], &prod))
				return TS_IRREGULAR;
			sums_add(out, TS_KERNEL + k, (double)(prod / n) / 1e6);
		}
	}
	sums_add(out, TS_SAMPLES, (double)n);
	out->samples += n;
	return 0;
}

static int breakdown_scan(sqlite3 *db, const struct inputs *in, struct time_split_sums *out)
{
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(db, "SELECT tid, begin_ns, end_ns, wall_ns FROM step WHERE complete = 1 ORDER BY step",
				    -1, &st, NULL);
	int any = in->noffs || in->nsmps;

	while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct acc a;
		int64_t tid = 0, begin = 0, end = 0, wall = 0;
		int has_end = 0, has_wall = col_int(st, 3, &wall);

		memset(&a, 0, sizeof(a));
		/* without an interval or a sample, the times meet nothing */
		if (any && (col_int(st, 0, &tid) != 1 || col_int(st, 1, &begin) != 1 ||
			    (has_end = col_int(st, 2, &end)) < 0))
			has_wall = -1;
		if (has_wall < 0 || (any && acc_span(in, &a, tid, begin, end, has_end)) ||
		    breakdown_row(in, &a, wall, has_wall, out)) {
			rc = TS_IRREGULAR;
			break;
		}
		rc = SQLITE_OK;
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

int time_split_breakdown(sqlite3 *db, struct time_split_sums *out)
{
	struct inputs in;
	int rc = load_inputs(db, &in);

	memset(out, 0, sizeof(*out));
	if (rc == SQLITE_OK)
		rc = breakdown_scan(db, &in, out);
	inputs_free(&in);
	if (rc == SQLITE_NOMEM)
		return -ENOMEM;
	return rc == SQLITE_OK ? 0 : rc == TS_IRREGULAR ? 1 : -EIO;
}

/* ---- phase_breakdown.sql's g: per phase name ---- */

/* Columns of mfu_phase_split after the name. */
enum { G_FIRST_ID, G_COUNT, G_WALL, G_BLOCKED, G_RUNNABLE, G_N, G_NK, G_NCOLS = G_NK + 5 };

struct group {
	const unsigned char *name; /* into the table's names */
	int len, blob;
	long row;
	int64_t first_id, count, wall, nwall;
	struct acc a;
};

struct groups {
	struct group *g;
	size_t n, cap;
	uint32_t *hash; /* 1 + index into g; 0: empty */
	size_t size;    /* a power of two, at least 2 n */
};

static uint32_t hash_name(const unsigned char *p, int n, int blob)
{
	uint32_t h = 2166136261u ^ (uint32_t)blob; /* FNV-1a */

	for (int i = 0; i < n; i++)
		h = (h ^ p[i]) * 16777619u;
	return h;
}

static int groups_rehash(struct groups *gs)
{
	size_t size = gs->size ? gs->size * 2 : 64;
	uint32_t *hash = calloc(size, sizeof(*hash));

	if (!hash)
		return -ENOMEM;
	for (size_t i = 0; i < gs->n; i++) {
		size_t at = hash_name(gs->g[i].name, gs->g[i].len, gs->g[i].blob) & (size - 1);

		while (hash[at])
			at = (at + 1) & (size - 1);
		hash[at] = (uint32_t)(i + 1);
	}
	free(gs->hash);
	gs->hash = hash;
	gs->size = size;
	return 0;
}

/* The group of the name in column 1 of @st (GROUP BY name: text and blobs
 * apart, bytes compared), made with a row of @t if new; NULL when out of
 * memory or when the name is neither text nor a blob. */
static struct group *group_of(struct groups *gs, struct ts_table *t, sqlite3_stmt *st)
{
	int type = sqlite3_column_type(st, 1), blob = type == SQLITE_BLOB;
	const unsigned char *p = blob ? sqlite3_column_blob(st, 1) : sqlite3_column_text(st, 1);
	int len = sqlite3_column_bytes(st, 1);
	struct group *g;
	size_t at;
	long row;

	if ((type != SQLITE_TEXT && !blob) || (!p && len))
		return NULL;
	if (2 * (gs->n + 1) > gs->size && (gs->n >= UINT32_MAX - 1 || groups_rehash(gs)))
		return NULL;
	at = hash_name(p, len, blob) & (gs->size - 1);
	for (; gs->hash[at]; at = (at + 1) & (gs->size - 1)) {
		g = &gs->g[gs->hash[at] - 1];
		if (g->len == len && g->blob == blob && (!len || memcmp(g->name, p, (size_t)len) == 0))
			return g;
	}
	if (array_grow(&gs->g, &gs->cap, gs->n + 1, sizeof(*gs->g)) || (row = ts_table_add(t, 1)) < 0)
		return NULL;
	t->names[row] = malloc((size_t)len + 1);
	if (!t->names[row])
		return NULL;
	if (len)
		memcpy(t->names[row], p, (size_t)len);
	t->names[row][len] = '\0';
	t->name_len[row] = len;
	t->name_blob[row] = (unsigned char)blob;
	g = &gs->g[gs->n];
	memset(g, 0, sizeof(*g));
	g->name = (const unsigned char *)t->names[row];
	g->len = len;
	g->blob = blob;
	g->row = row;
	g->first_id = INT64_MAX;
	gs->hash[at] = (uint32_t)++gs->n;
	return g;
}

/* One occurrence (id, name, wall_ns, then tid, begin_ns, end_ns when there
 * are intervals or samples to look up) into its group. */
static int phase_row(const struct inputs *in, struct groups *gs, struct ts_table *t, sqlite3_stmt *st)
{
	struct group *g = group_of(gs, t, st);
	int64_t id = sqlite3_column_int64(st, 0), tid = 0, begin = 0, end = 0, wall;
	int has_end = 0, has_wall = col_int(st, 2, &wall);

	if (!g)
		return sqlite3_column_type(st, 1) == SQLITE_TEXT || sqlite3_column_type(st, 1) == SQLITE_BLOB
		       ? SQLITE_NOMEM : TS_IRREGULAR;
	if (has_wall < 0 || (has_wall && __builtin_add_overflow(g->wall, wall, &g->wall)))
		return TS_IRREGULAR;
	g->nwall += has_wall;
	g->count++;
	if (id < g->first_id)
		g->first_id = id;
	if (!in->noffs && !in->nsmps)
		return SQLITE_OK;
	if (col_int(st, 3, &tid) != 1 || col_int(st, 4, &begin) != 1 || (has_end = col_int(st, 5, &end)) < 0)
		return TS_IRREGULAR;
	return acc_span(in, &g->a, tid, begin, end, has_end) ? TS_IRREGULAR : SQLITE_OK;
}

/* The groups' values into their rows of @t:
 *   CASE WHEN has.sampling THEN coalesce(off.blocked_ns, 0) END AS blocked_ns,
 *   coalesce(smp.n, 0) AS n, coalesce(smp.nk, 0) AS nk... */
static void phase_finish(const struct inputs *in, const struct groups *gs, struct ts_table *t)
{
	for (size_t i = 0; i < gs->n; i++) {
		const struct group *g = &gs->g[i];
		int64_t *v = t->v + (size_t)g->row * (size_t)t->ncols + 1;
		unsigned char *null = t->null + (size_t)g->row * (size_t)t->ncols + 1;

		v[G_FIRST_ID] = g->first_id;
		v[G_COUNT] = g->count;
		v[G_WALL] = g->wall;
		null[G_WALL] = !g->nwall;
		v[G_BLOCKED] = g->a.blocked;
		v[G_RUNNABLE] = g->a.runnable;
		null[G_BLOCKED] = null[G_RUNNABLE] = !in->sampling;
		v[G_N] = acc_samples(&g->a);
		for (int k = 0; k < 5; k++)
			v[G_NK + k] = g->a.cnt[CL_KERNEL + k];
	}
}

int ts_phase_split(sqlite3 *db, struct ts_table *t)
{
	struct groups gs = { 0 };
	struct inputs in;
	sqlite3_stmt *st = NULL;
	int rc = load_inputs(db, &in);

	/* without intervals and samples, 3 columns: 0.1 s of 3M occurrences */
	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v2(db, in.noffs || in.nsmps
					? "SELECT id, name, wall_ns, tid, begin_ns, end_ns FROM phase WHERE complete = 1"
					: "SELECT id, name, wall_ns FROM phase WHERE complete = 1", -1, &st, NULL);
	while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW)
		rc = phase_row(&in, &gs, t, st);
	if (rc == SQLITE_DONE) {
		rc = SQLITE_OK;
		phase_finish(&in, &gs, t);
	}
	sqlite3_finalize(st);
	inputs_free(&in);
	free(gs.g);
	free(gs.hash);
	return rc;
}

/* ---- waterfall.sql's smp: per step, the samples of its process ---- */

struct bound {
	int64_t pid, begin, step, end;
	int complete, has_end;
	uint32_t cnt[NCLASSES];
};

static int cmp_bound(const void *a, const void *b)
{
	const struct bound *x = a, *y = b;

	if (x->pid != y->pid)
		return (x->pid > y->pid) - (x->pid < y->pid);
	if (x->begin != y->begin)
		return (x->begin > y->begin) - (x->begin < y->begin);
	return (x->step > y->step) - (x->step < y->step);
}

static int cmp_bound_step(const void *a, const void *b)
{
	int64_t x = (*(const struct bound *const *)a)->step, y = (*(const struct bound *const *)b)->step;

	return (x > y) - (x < y);
}

/* Every step (complete or not: a sample goes to the last step its process
 * began at or before it), sorted by process and begin. */
static int load_bounds(sqlite3 *db, struct bound **out, size_t *n)
{
	sqlite3_stmt *st = NULL;
	size_t cap = 0;
	int rc = sqlite3_prepare_v2(db, "SELECT step, pid, begin_ns, end_ns, complete = 1 FROM step", -1, &st, NULL);

	while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct bound b;

		memset(&b, 0, sizeof(b));
		b.complete = sqlite3_column_int(st, 4) == 1;
		if (col_int(st, 0, &b.step) != 1 || col_int(st, 1, &b.pid) != 1 || col_int(st, 2, &b.begin) != 1 ||
		    (b.complete && (b.has_end = col_int(st, 3, &b.end)) < 0)) {
			rc = TS_IRREGULAR;
			break;
		}
		if (array_grow(out, &cap, *n + 1, sizeof(**out))) {
			rc = SQLITE_NOMEM;
			break;
		}
		(*out)[(*n)++] = b;
		rc = SQLITE_OK;
	}
	sqlite3_finalize(st);
	if (rc == SQLITE_DONE) {
		rc = SQLITE_OK;
		if (*n)
			qsort(*out, *n, sizeof(**out), cmp_bound);
	}
	return rc;
}

/* waterfall.sql's evb and smp: the latest begin b of the sample's process
 * at or before it (a step first on a tie), then every complete step of
 * that process that began at b and had not ended at the sample. */
static void attribute(struct bound *b, size_t nb, const struct smp *s)
{
	size_t lo = 0, hi = nb;

	while (lo < hi) { /* the first (pid, begin) > (pid, t) */
		size_t mid = lo + (hi - lo) / 2;

		if (b[mid].pid < s->key || (b[mid].pid == s->key && b[mid].begin <= s->t))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || b[lo - 1].pid != s->key)
		return;
	for (size_t j = lo; j-- > 0 && b[j].pid == s->key && b[j].begin == b[lo - 1].begin;)
		if (b[j].complete && b[j].has_end && s->t < b[j].end)
			b[j].cnt[s->cls]++;
}

/* The rows of @t from the counted steps, in step order: n, and each
 * class's count, NULL when no sample of the step has a class. */
static int samples_rows(struct bound *b, size_t nb, struct ts_table *t)
{
	struct bound **rows = NULL;
	size_t n = 0;

	for (size_t i = 0; i < nb; i++)
		n += b[i].cnt[0] || b[i].cnt[1] || b[i].cnt[2] || b[i].cnt[3] || b[i].cnt[4] || b[i].cnt[5] ||
		     b[i].cnt[6];
	if (n && !(rows = malloc(n * sizeof(*rows))))
		return SQLITE_NOMEM;
	n = 0;
	for (size_t i = 0; i < nb; i++)
		if (b[i].cnt[0] || b[i].cnt[1] || b[i].cnt[2] || b[i].cnt[3] || b[i].cnt[4] || b[i].cnt[5] ||
		    b[i].cnt[6])
			rows[n++] = &b[i];
	if (n)
		qsort(rows, n, sizeof(*rows), cmp_bound_step);
	for (size_t i = 0; i < n; i++) {
		long row = ts_table_add(t, 0);
		int64_t *v, total = 0;

		if (row < 0) {
			free(rows);
			return SQLITE_NOMEM;
		}
		v = t->v + (size_t)row * (size_t)t->ncols;
		for (int k = 0; k < NCLASSES; k++)
			total += rows[i]->cnt[k];
		v[0] = rows[i]->step;
		v[1] = total;
		for (int k = 0; k < 5; k++) {
			v[2 + k] = rows[i]->cnt[CL_KERNEL + k];
			t->null[(size_t)row * (size_t)t->ncols + 2 + (size_t)k] = rows[i]->cnt[CL_NULL] == total;
		}
	}
	free(rows);
	return SQLITE_OK;
}

int ts_step_samples(sqlite3 *db, struct ts_table *t)
{
	struct inputs in = { 0 };
	struct bound *b = NULL;
	size_t nb = 0;
	int rc = load_samples(db, "pid", &in);

	/* without a sample, no row: the steps are not read */
	if (rc == SQLITE_OK && in.nsmps && in.nsmps >= UINT32_MAX)
		rc = TS_IRREGULAR;
	if (rc == SQLITE_OK && in.nsmps)
		rc = load_bounds(db, &b, &nb);
	for (size_t i = 0; rc == SQLITE_OK && i < in.nsmps; i++)
		attribute(b, nb, &in.smps[i]);
	if (rc == SQLITE_OK)
		rc = samples_rows(b, nb, t);
	free(b);
	inputs_free(&in);
	return rc;
}
