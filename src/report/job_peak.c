/* The ceilings of a job of several ranks: each host counted once (job_peak.h). */
#include "job_peak.h"
#include "cpumap.h"
#include "util.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int same_host(const struct job_peak_rank *a, const struct job_peak_rank *b)
{
	return a->host && b->host && a->host[0] && strcmp(a->host, b->host) == 0;
}

static int has(const struct cpumap *m, int cpu)
{
	int lo = 0, hi = m->n - 1;

	while (lo <= hi) {
		int mid = (lo + hi) / 2;
		if (m->cpu[mid] == cpu)
			return 1;
		if (m->cpu[mid] < cpu)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return 0;
}

static int contains(const struct cpumap *big, const struct cpumap *small)
{
	for (int i = 0; i < small->n; i++)
		if (!has(big, small->cpu[i]))
			return 0;
	return 1;
}

static int same_map(const struct cpumap *a, const struct cpumap *b)
{
	return a->n == b->n && contains(a, b);
}

/* The packages a spec bandwidth detail names: "(package 0)", "(packages 0-1)". */
static int packages_of(const char *detail, struct cpumap *m)
{
	const char *p = detail ? strstr(detail, "(package") : NULL;
	char list[64];
	size_t n;

	memset(m, 0, sizeof(*m));
	if (!p)
		return -ENOENT;
	p += strlen("(package");
	if (*p == 's')
		p++;
	if (*p++ != ' ')
		return -ENOENT;
	n = strcspn(p, ")");
	if (!p[n] || n == 0 || n >= sizeof(list))
		return -ENOENT;
	memcpy(list, p, n);
	list[n] = '\0';
	return cpumap_parse(m, list) || m->n == 0 ? -ENOENT : 0;
}

/* The union of @a and @b into @out (freed by the caller). */
static int map_union(const struct cpumap *a, const struct cpumap *b, struct cpumap *out)
{
	int i = 0, j = 0, k = 0;

	out->cpu = malloc(sizeof(int) * (size_t)(a->n + b->n + 1));
	out->n = 0;
	if (!out->cpu)
		return -ENOMEM;
	while (i < a->n || j < b->n) {
		int c;
		if (j >= b->n || (i < a->n && a->cpu[i] < b->cpu[j]))
			c = a->cpu[i++];
		else if (i >= a->n || b->cpu[j] < a->cpu[i])
			c = b->cpu[j++];
		else
			c = a->cpu[i++], j++;
		out->cpu[k++] = c;
	}
	out->n = k;
	return 0;
}

/* The union of the ranks' CPU sets @set[0..k) into @all. */
static int sets_union(const struct cpumap *set, int k, struct cpumap *all)
{
	int err = 0;

	for (int i = 0; i < k && !err; i++) {
		struct cpumap u;
		err = map_union(all, &set[i], &u);
		if (!err) {
			cpumap_fini(all);
			*all = u;
		}
	}
	return err;
}

/* The host's FLOP/s: CPUs two ranks may both use count once, at the best
 * per-CPU rate of the ranks that may use them. */
static double shared_flops(const struct job_peak_rank *r, const int *idx, int k,
			   const struct cpumap *set, const struct cpumap *all)
{
	double u = 0;

	for (int c = 0; c < all->n; c++) {
		double best = 0;
		for (int i = 0; i < k; i++) {
			const struct job_peak_rank *q = &r[idx[i]];
			double g = q->peak_flops / q->ncpu;
			if (has(&set[i], all->cpu[c]) && g > best)
				best = g;
		}
		u += best;
	}
	return u;
}

/* The ceilings of the ranks' distinct CPU sets, each set once. */
static double distinct_sets_bw(const struct job_peak_rank *r, const int *idx, int k,
			       const struct cpumap *set)
{
	double total = 0;

	for (int i = 0; i < k; i++) {
		int first = 1;
		double b = 0;
		for (int j = 0; j < k; j++) {
			if (!same_map(&set[i], &set[j]))
				continue;
			first &= j >= i;
			b = r[idx[j]].peak_bw > b ? r[idx[j]].peak_bw : b;
		}
		if (first)
			total += b;
	}
	return total;
}

/* The spec bandwidth of the sockets the ranks span, each socket once at
 * its best rank's share (0 if none is known); *@nsockets is how many are
 * named (0: not named, an older recording). */
static double socket_cap(const struct job_peak_rank *r, const int *idx, int k, int *nsockets)
{
	double cap = 0, spec_max = 0;
	int pk_ok = 1;
	struct cpumap pk_all = { 0 };
	double *per = NULL;

	for (int i = 0; i < k && pk_ok; i++) {
		const struct job_peak_rank *q = &r[idx[i]];
		struct cpumap pk, u;
		spec_max = q->spec_bw > spec_max ? q->spec_bw : spec_max;
		if (!(q->spec_bw > 0) || packages_of(q->spec_detail, &pk)) {
			pk_ok = 0;
			break;
		}
		if (map_union(&pk_all, &pk, &u) == 0) {
			cpumap_fini(&pk_all);
			pk_all = u;
		}
		cpumap_fini(&pk);
	}
	if (pk_ok && pk_all.n > 0) {
		per = calloc((size_t)pk_all.n, sizeof(*per));
		for (int i = 0; per && i < k; i++) {
			const struct job_peak_rank *q = &r[idx[i]];
			struct cpumap pk;
			if (packages_of(q->spec_detail, &pk))
				continue;
			for (int p = 0; p < pk_all.n; p++)
				if (has(&pk, pk_all.cpu[p]) && q->spec_bw / pk.n > per[p])
					per[p] = q->spec_bw / pk.n;
			cpumap_fini(&pk);
		}
		for (int p = 0; per && p < pk_all.n; p++)
			cap += per[p];
		free(per);
	} else {
		/* sockets not named (an older recording): the ranks of a
		 * host are taken to share the same ones */
		cap = spec_max;
	}
	*nsockets = pk_ok ? pk_all.n : 0;
	cpumap_fini(&pk_all);
	return cap;
}

/* Never above the smallest bandwidth the profile measured on a CPU set
 * that contains the union @all of the host's ranks' CPUs (job_peak.h). */
static void measured_cap(const struct job_peak_rank *r, const int *idx, int k, const struct cpumap *all,
			 struct job_peak_host *h)
{
	const struct job_peak_set *best = NULL;
	long long rank = 0;

	for (int i = 0; i < k; i++) {
		const struct job_peak_rank *q = &r[idx[i]];
		for (int s = 0; s < q->nsets; s++) {
			struct cpumap m;
			int in;
			if (!q->sets[s].cpus || !(q->sets[s].bw > 0) || cpumap_parse(&m, q->sets[s].cpus))
				continue;
			in = contains(&m, all);
			cpumap_fini(&m);
			if (in && (!best || q->sets[s].bw < best->bw)) {
				best = &q->sets[s];
				rank = q->rank;
			}
		}
	}
	if (!best || !(best->bw < h->peak_bw))
		return;
	h->peak_bw = best->bw;
	snprintf(h->bw_rule, sizeof(h->bw_rule), "the bandwidth the machine profile measured on CPUs %s (%.4g GB/s, "
		 "rank %lld's recording), which hold all the ranks' CPUs: the ranks' ceilings add up to more",
		 best->cpus, best->bw / 1e9, rank);
}

/* The host's bandwidth: its sockets are shared by all its ranks. */
static void shared_bw(const struct job_peak_rank *r, const int *idx, int k, const struct cpumap *set,
		      const struct cpumap *all, struct job_peak_host *h)
{
	double total, cap;
	int cover = -1, nsockets;

	for (int i = 0; i < k; i++)
		if (set[i].n == all->n && (cover < 0 || r[idx[i]].peak_bw > r[idx[cover]].peak_bw))
			cover = i;
	if (cover >= 0) {
		h->peak_bw = r[idx[cover]].peak_bw;
		snprintf(h->bw_rule, sizeof(h->bw_rule), "once: rank %lld's CPUs %s include every other rank's",
			 r[idx[cover]].rank, h->cpus);
		return;
	}
	/* the distinct sets' ceilings, each once, capped by the spec of the
	 * sockets they span */
	total = distinct_sets_bw(r, idx, k, set);
	cap = socket_cap(r, idx, k, &nsockets);
	h->peak_bw = cap > 0 && cap < total ? cap : total;
	if (cap > 0 && cap < total)
		snprintf(h->bw_rule, sizeof(h->bw_rule), "the spec bandwidth of the host's socket%s: the "
			 "ranks' CPU sets' ceilings add up to more", nsockets > 1 ? "s" : "");
	else
		snprintf(h->bw_rule, sizeof(h->bw_rule), "the ranks' distinct CPU sets' ceilings summed, "
			 "each set once");
}

/* One host: the ranks @idx[0..k). */
static int host_ceilings(struct job_peak_rank *r, const int *idx, int k, struct job_peak_host *h)
{
	struct cpumap *set = calloc((size_t)k, sizeof(*set)), all = { 0 };
	int sets_ok = 1, flops_ok = 1, bw_ok = 1, err = 0;
	double sum_f = 0, sum_b = 0;

	if (!set)
		return -ENOMEM;
	for (int i = 0; i < k; i++) {
		const struct job_peak_rank *q = &r[idx[i]];
		size_t len = strlen(h->ranks);
		snprintf(h->ranks + len, sizeof(h->ranks) - len, "%s%lld", i ? ", " : "", q->rank);
		if (!q->cpus || cpumap_parse(&set[i], q->cpus) || set[i].n == 0 || !(q->ncpu > 0))
			sets_ok = 0;
		flops_ok &= q->peak_flops > 0;
		bw_ok &= q->peak_bw > 0;
		sum_f += q->peak_flops > 0 ? q->peak_flops : 0;
		sum_b += q->peak_bw > 0 ? q->peak_bw : 0;
	}
	h->ranks_flops = flops_ok ? sum_f : 0;
	h->ranks_bw = bw_ok ? sum_b : 0;
	h->peak_flops = h->ranks_flops;
	h->peak_bw = h->ranks_bw;
	snprintf(h->bw_rule, sizeof(h->bw_rule), "%s", k == 1 ? "the rank's own" : "the ranks' summed (CPU sets unknown)");
	if (sets_ok) {
		err = sets_union(set, k, &all);
		if (!err)
			cpumap_format(all.cpu, all.n, h->cpus, sizeof(h->cpus));
	}
	if (err)
		goto out;
	if (flops_ok && sets_ok && k > 1) {
		double u = shared_flops(r, idx, k, set, &all);
		if (u < h->peak_flops)
			h->peak_flops = u;
	}
	if (bw_ok && sets_ok && k > 1) {
		shared_bw(r, idx, k, set, &all, h);
		measured_cap(r, idx, k, &all, h);
	}
out:
	for (int i = 0; i < k; i++)
		cpumap_fini(&set[i]);
	free(set);
	cpumap_fini(&all);
	return err;
}

int job_peak_compute(struct job_peak_rank *r, size_t n, struct job_peak_host *hosts)
{
	int *idx = calloc(n ? n : 1, sizeof(*idx)), nh = 0, err = 0;
	int *done = calloc(n ? n : 1, sizeof(*done));

	if (!idx || !done) {
		free(idx);
		free(done);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n && !err; i++) {
		struct job_peak_host *h;
		int k = 0;

		if (done[i])
			continue;
		for (size_t j = i; j < n; j++)
			if (j == i || (!done[j] && same_host(&r[i], &r[j]))) {
				idx[k++] = (int)j;
				done[j] = 1;
			}
		h = &hosts[nh];
		memset(h, 0, sizeof(*h));
		snprintf(h->host, sizeof(h->host), "%s", r[i].host ? r[i].host : "");
		err = host_ceilings(r, idx, k, h);
		for (int m = 0; m < k && !err; m++) {
			struct job_peak_rank *q = &r[idx[m]];
			q->host_id = nh;
			q->job_flops = q->peak_flops > 0 && h->peak_flops > 0 && h->ranks_flops > 0
				       ? q->peak_flops * h->peak_flops / h->ranks_flops
				       : (q->peak_flops > 0 ? q->peak_flops : 0);
			q->job_bw = q->peak_bw > 0 && h->peak_bw > 0 && h->ranks_bw > 0
				    ? q->peak_bw * h->peak_bw / h->ranks_bw
				    : (q->peak_bw > 0 ? q->peak_bw : 0);
		}
		nh++;
	}
	free(idx);
	free(done);
	return err ? err : nh;
}

static void bind_pos(sqlite3_stmt *st, int i, double v)
{
	if (v > 0)
		sqlite3_bind_double(st, i, v);
	else
		sqlite3_bind_null(st, i);
}

static const char *text_or_null(sqlite3_stmt *st, int i)
{
	return (const char *)sqlite3_column_text(st, i);
}

/* A failed statement, said as it always was: with no statement text
 * (@sql NULL) the failure is taken for a failed allocation. */
static int sql_failed(sqlite3 *db, const char *sql, char *err, size_t errlen)
{
	strbuf(err, errlen, "%s", sql || !db ? sqlite3_errmsg(db) : "out of memory");
	return -EIO;
}

static int create_tables(sqlite3 *db, const char *schema, char *err, size_t errlen)
{
	char *sql = sqlite3_mprintf(
		"CREATE TABLE %s.job_host (host TEXT, ranks TEXT NOT NULL, cpus TEXT, peak_flops REAL, "
		"ranks_peak_flops REAL, peak_bw REAL, ranks_peak_bw REAL, bw_rule TEXT);"
		"CREATE TABLE %s.job_rank_peak (rank INTEGER PRIMARY KEY, host TEXT, peak_flops REAL, peak_bw REAL);",
		schema, schema);
	int rc = 0;

	if (!sql || sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK)
		rc = sql_failed(db, sql, err, errlen);
	sqlite3_free(sql);
	return rc;
}

/* The ranks' raw peaks into *@r[0..*@n), their strings (4 a rank: host,
 * CPUs, spec bandwidth detail, NULL) in *@strs, which the caller frees
 * (the first 4 * *@n) even on failure. An emulated rank's peaks are hidden
 * by the job view, not here. */
static int read_ranks(sqlite3 *db, struct job_peak_rank **r, char ***strs, size_t *n, char *err,
		      size_t errlen)
{
	sqlite3_stmt *st = NULL;
	size_t cap = 0, scap = 0;
	int rc;

	if (sqlite3_prepare_v2(db,
			       "SELECT r.rank, r.host, r.allowed_cpus, r.ncpu, r.peak_flops, r.peak_bw, "
			       "(SELECT p.value FROM peak AS p WHERE p.rank = r.rank AND p.source = 'spec' AND "
			       "p.kind = 'bandwidth' AND p.scope = 'all' LIMIT 1), "
			       "(SELECT p.detail FROM peak AS p WHERE p.rank = r.rank AND p.source = 'spec' AND "
			       "p.kind = 'bandwidth' AND p.scope = 'all' LIMIT 1) "
			       "FROM run AS r ORDER BY r.rank", -1, &st, NULL) != SQLITE_OK)
		return sql_failed(db, NULL, err, errlen);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct job_peak_rank *q;
		if (array_grow(r, &cap, *n + 1, sizeof(**r)) || array_grow(strs, &scap, 4 * (*n + 1), sizeof(**strs)))
			goto nomem;
		q = &(*r)[*n];
		memset(q, 0, sizeof(*q));
		for (int s = 0; s < 3; s++) {
			const char *t = text_or_null(st, s == 0 ? 1 : s == 1 ? 2 : 7);
			(*strs)[4 * *n + (size_t)s] = t ? strdup(t) : NULL;
			if (t && !(*strs)[4 * *n + (size_t)s])
				goto nomem;
		}
		(*strs)[4 * *n + 3] = NULL;
		q->rank = sqlite3_column_int64(st, 0);
		q->ncpu = sqlite3_column_double(st, 3);
		q->peak_flops = sqlite3_column_double(st, 4);
		q->peak_bw = sqlite3_column_double(st, 5);
		q->spec_bw = sqlite3_column_double(st, 6);
		(*n)++;
	}
	rc = rc == SQLITE_DONE ? 0 : sql_failed(db, NULL, err, errlen);
	sqlite3_finalize(st);
	if (rc)
		return rc;
	for (size_t i = 0; i < *n; i++) {
		(*r)[i].host = (*strs)[4 * i];
		(*r)[i].cpus = (*strs)[4 * i + 1];
		(*r)[i].spec_detail = (*strs)[4 * i + 2];
	}
	return 0;
nomem:
	sqlite3_finalize(st);
	strbuf(err, errlen, "out of memory");
	return -ENOMEM;
}

/* The CPU list a 'machine' row's detail begins with: "CPUs 0-1 (...". */
static char *detail_cpus(const char *detail)
{
	size_t len;

	if (!detail || strncmp(detail, "CPUs ", 5))
		return NULL;
	detail += 5;
	len = strcspn(detail, " :;");
	return len ? strndup(detail, len) : NULL;
}

/* The ranks' measured bandwidths of CPU sets containing theirs (peak rows
 * of scope 'machine') into *@sets[0..*@ns), which the caller frees with
 * their CPU lists even on failure; each rank of @r[0..@n) points at its
 * own. None (an older recording): the ranks have none. */
static int read_sets(sqlite3 *db, struct job_peak_rank *r, size_t n, struct job_peak_set **sets, size_t *ns,
		     char *err, size_t errlen)
{
	sqlite3_stmt *st = NULL;
	long long *rank = NULL;
	size_t cap = 0, rcap = 0;
	int rc;

	if (sqlite3_prepare_v2(db, "SELECT rank, value, detail FROM peak WHERE kind = 'bandwidth' AND "
			       "scope = 'machine' AND source = 'measured' AND value > 0 ORDER BY rank, rowid",
			       -1, &st, NULL) != SQLITE_OK)
		return sql_failed(db, NULL, err, errlen);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		char *cpus = detail_cpus(text_or_null(st, 2));
		if (!cpus)
			continue;
		if (array_grow(sets, &cap, *ns + 1, sizeof(**sets)) || array_grow(&rank, &rcap, *ns + 1, sizeof(*rank))) {
			free(cpus);
			rc = SQLITE_NOMEM;
			break;
		}
		(*sets)[*ns].cpus = cpus;
		(*sets)[*ns].bw = sqlite3_column_double(st, 1);
		rank[(*ns)++] = sqlite3_column_int64(st, 0);
	}
	sqlite3_finalize(st);
	if (rc == SQLITE_NOMEM) {
		free(rank);
		strbuf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	if (rc != SQLITE_DONE) {
		free(rank);
		return sql_failed(db, NULL, err, errlen);
	}
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < *ns; j++)
			if (rank[j] == r[i].rank) {
				if (!r[i].nsets)
					r[i].sets = &(*sets)[j];
				r[i].nsets++;
			}
	free(rank);
	return 0;
}

static void bind_text(sqlite3_stmt *st, int i, const char *s)
{
	if (s)
		sqlite3_bind_text(st, i, s, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(st, i);
}

/* Row @i of job_host or job_rank_peak bound to @st: */
typedef void bind_row_fn(sqlite3_stmt *st, const void *rows, size_t i);

static void bind_host(sqlite3_stmt *st, const void *rows, size_t i)
{
	const struct job_peak_host *h = (const struct job_peak_host *)rows + i;

	bind_text(st, 1, h->host[0] ? h->host : NULL);
	bind_text(st, 2, h->ranks);
	bind_text(st, 3, h->cpus[0] ? h->cpus : NULL);
	bind_pos(st, 4, h->peak_flops);
	bind_pos(st, 5, h->ranks_flops);
	bind_pos(st, 6, h->peak_bw);
	bind_pos(st, 7, h->ranks_bw);
	bind_text(st, 8, h->bw_rule);
}

static void bind_rank_peak(sqlite3_stmt *st, const void *rows, size_t i)
{
	const struct job_peak_rank *r = (const struct job_peak_rank *)rows + i;

	sqlite3_bind_int64(st, 1, r->rank);
	bind_text(st, 2, r->host);
	bind_pos(st, 3, r->job_flops);
	bind_pos(st, 4, r->job_bw);
}

/* "INSERT INTO @schema.@into" (a table and its VALUES) for each of the @n
 * @rows, bound by @bind. */
static int insert_rows(sqlite3 *db, const char *schema, const char *into, bind_row_fn *bind,
		       const void *rows, size_t n, char *err, size_t errlen)
{
	char *sql = sqlite3_mprintf("INSERT INTO %s.%s", schema, into);
	sqlite3_stmt *st = NULL;
	int rc = -EIO;

	if (!sql || sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		goto out;
	for (size_t i = 0; i < n; i++) {
		sqlite3_reset(st);
		bind(st, rows, i);
		if (sqlite3_step(st) != SQLITE_DONE)
			goto out;
	}
	rc = 0;
out:
	if (rc)
		sql_failed(db, sql, err, errlen);
	sqlite3_finalize(st);
	sqlite3_free(sql);
	return rc;
}

/* What was counted once, said once: a note for each host whose ranks
 * share CPUs or sockets. */
static int note_shared_hosts(sqlite3 *db, const struct job_peak_host *h, int nh, char *err, size_t errlen)
{
	for (int i = 0; i < nh; i++) {
		char f[160] = "", b[600] = "", *text, *sql;
		int rc = 0;

		if (h[i].peak_flops > 0 && h[i].ranks_flops > 0 && h[i].peak_flops < h[i].ranks_flops * (1 - 1e-9))
			snprintf(f, sizeof(f), "its FLOP ceiling counts their shared CPUs once (%.4g GFLOP/s, not the "
				 "%.4g their peaks add up to)", h[i].peak_flops / 1e9, h[i].ranks_flops / 1e9);
		if (h[i].peak_bw > 0 && h[i].ranks_bw > 0 && h[i].peak_bw < h[i].ranks_bw * (1 - 1e-9))
			snprintf(b, sizeof(b), "%sits memory bandwidth ceiling is the host's, %.4g GB/s (%s), not the "
				 "%.4g GB/s the ranks' ceilings add up to", f[0] ? "; " : "", h[i].peak_bw / 1e9,
				 h[i].bw_rule, h[i].ranks_bw / 1e9);
		if (!f[0] && !b[0])
			continue;
		/* sqlite3_mprintf: as long as it needs to be */
		text = sqlite3_mprintf("ranks %s run on host %s (CPUs %s) and share it: %s%s", h[i].ranks,
				       h[i].host[0] ? h[i].host : "?", h[i].cpus[0] ? h[i].cpus : "?", f, b);
		if (!text) {
			strbuf(err, errlen, "out of memory");
			return -ENOMEM;
		}
		sql = sqlite3_mprintf("INSERT INTO note (rank, id, kind, text) VALUES (NULL, NULL, "
				      "'merge_host_peaks', %Q)", text);
		sqlite3_free(text);
		if (!sql || sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK)
			rc = sql_failed(db, sql, err, errlen);
		sqlite3_free(sql);
		if (rc)
			return rc;
	}
	return 0;
}

int job_peak_tables(sqlite3 *db, const char *schema, int with_note, char *err, size_t errlen)
{
	struct job_peak_rank *r = NULL;
	struct job_peak_host *h = NULL;
	struct job_peak_set *sets = NULL;
	char **strs = NULL; /* the strings of the ranks, 4 each */
	size_t n = 0, ns = 0;
	int rc, nh = 0;

	rc = create_tables(db, schema, err, errlen);
	if (!rc)
		rc = read_ranks(db, &r, &strs, &n, err, errlen);
	if (!rc)
		rc = read_sets(db, r, n, &sets, &ns, err, errlen);
	if (rc)
		goto out;
	h = calloc(n ? n : 1, sizeof(*h));
	nh = h ? job_peak_compute(r, n, h) : -ENOMEM;
	if (nh < 0) {
		strbuf(err, errlen, "out of memory");
		rc = -ENOMEM;
		goto out;
	}
	rc = insert_rows(db, schema, "job_host VALUES (?, ?, ?, ?, ?, ?, ?, ?)", bind_host, h, (size_t)nh, err,
			 errlen);
	if (!rc)
		rc = insert_rows(db, schema, "job_rank_peak VALUES (?, ?, ?, ?)", bind_rank_peak, r, n, err, errlen);
	if (!rc && with_note)
		rc = note_shared_hosts(db, h, nh, err, errlen);
out:
	for (size_t i = 0; strs && i < 4 * n; i++)
		free(strs[i]);
	free(strs);
	for (size_t i = 0; i < ns; i++)
		free((char *)sets[i].cpus);
	free(sets);
	free(r);
	free(h);
	return rc;
}
