#include "merge.h"
#include "embedded.h"
#include "job_peak.h"
#include "util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The per-run tables a merged database carries, each with a rank column.
 * The samples, stacks, symbols, off-CPU intervals and the -I readings
 * stay in the ranks' own databases (the breakdown of a rank reads them
 * there). */
static const char *const merged_tables[] = {
	"run", "peak", "counter", "note", "anomaly", "step", "phase", "lib_call", "run_lib_call",
};

int merge_is_merged(sqlite3 *db)
{
	sqlite3_stmt *st = NULL;
	int yes = 0;

	if (sqlite3_prepare_v2(db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'job_rank'", -1, &st,
			       NULL) == SQLITE_OK)
		yes = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	return yes;
}

/* What merge_write needs of each run. */
struct run_info {
	const char *path; /* the database's, for messages */
	long long rank; /* from run.rank; has_rank 0: none */
	int has_rank;
	char *program, *command, *job_id;
	char *emulated; /* run.emulated: the engine, NULL for a native run */
	long long world_size;
	int has_world;
};

static void infos_free(struct run_info *ri, size_t n)
{
	for (size_t i = 0; ri && i < n; i++) {
		free(ri[i].program);
		free(ri[i].command);
		free(ri[i].job_id);
		free(ri[i].emulated);
	}
	free(ri);
}

static char *col_dup(sqlite3_stmt *st, int i)
{
	const unsigned char *t = sqlite3_column_text(st, i);
	return t ? strdup((const char *)t) : NULL;
}

static int read_info(const struct merge_input *in, struct run_info *ri, char *err, size_t errlen)
{
	sqlite3_stmt *st = NULL;
	int rc, emu_lost;

	if (merge_is_merged(in->db)) {
		strbuf(err, errlen, "%s is a merged database (mfu-report merge): merge the ranks' own databases",
		       in->path);
		return -EINVAL;
	}
	if (sqlite3_prepare_v2(in->db,
			       "SELECT rank, world_size, job_id, json_extract(command, '$[0]'), command, emulated "
			       "FROM main.run WHERE id = 1",
			       -1, &st, NULL) != SQLITE_OK) {
		strbuf(err, errlen, "%s: %s", in->path, sqlite3_errmsg(in->db));
		return -EIO;
	}
	rc = sqlite3_step(st);
	if (rc != SQLITE_ROW) {
		strbuf(err, errlen, "%s: %s", in->path,
		       rc == SQLITE_DONE ? "the run table has no row (the recording never started)" : sqlite3_errmsg(in->db));
		sqlite3_finalize(st);
		return rc == SQLITE_DONE ? -EINVAL : -EIO;
	}
	ri->has_rank = sqlite3_column_type(st, 0) != SQLITE_NULL;
	ri->rank = sqlite3_column_int64(st, 0);
	ri->has_world = sqlite3_column_type(st, 1) != SQLITE_NULL;
	ri->world_size = sqlite3_column_int64(st, 1);
	ri->job_id = col_dup(st, 2);
	ri->program = col_dup(st, 3);
	ri->command = col_dup(st, 4);
	ri->emulated = col_dup(st, 5);
	emu_lost = sqlite3_column_type(st, 5) != SQLITE_NULL && !ri->emulated;
	sqlite3_finalize(st);
	if (!ri->program || !ri->command || emu_lost) {
		strbuf(err, errlen, "%s: out of memory or no command in the run table", in->path);
		return -ENOMEM;
	}
	return 0;
}

static int cmp_ll(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;
	return x < y ? -1 : x > y;
}

static int add_note(sqlite3 *out, const char *kind, const char *text, char *err, size_t errlen)
{
	sqlite3_stmt *st = NULL;
	int rc = 0;

	if (sqlite3_prepare_v2(out, "INSERT INTO note (rank, id, kind, text) VALUES (NULL, NULL, ?, ?)", -1, &st,
			       NULL) != SQLITE_OK) {
		strbuf(err, errlen, "%s", sqlite3_errmsg(out));
		return -EIO;
	}
	sqlite3_bind_text(st, 1, kind, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, text, -1, SQLITE_STATIC);
	if (sqlite3_step(st) != SQLITE_DONE) {
		strbuf(err, errlen, "%s", sqlite3_errmsg(out));
		rc = -EIO;
	}
	sqlite3_finalize(st);
	return rc;
}

/* The ranks of the runs into @rank: run.rank when all have distinct ones,
 * else the positions. */
static int choose_ranks(const struct run_info *ri, size_t n, long long *rank, int *by_position, char *err,
			size_t errlen)
{
	size_t without = n;

	*by_position = 0;
	for (size_t i = 0; i < n; i++)
		if (!ri[i].has_rank) {
			without = i;
			break;
		}
	if (without < n) {
		*by_position = 1;
		for (size_t i = 0; i < n; i++)
			rank[i] = (long long)i;
		return 0;
	}
	for (size_t i = 0; i < n; i++)
		rank[i] = ri[i].rank;
	{
		long long *sorted = malloc(n * sizeof(*sorted));

		if (!sorted)
			return -ENOMEM;
		memcpy(sorted, rank, n * sizeof(*sorted));
		qsort(sorted, n, sizeof(*sorted), cmp_ll);
		for (size_t i = 1; i < n; i++) {
			if (sorted[i] != sorted[i - 1])
				continue;
			size_t a = n, b = n;
			for (size_t k = 0; k < n && b == n; k++) {
				if (rank[k] != sorted[i])
					continue;
				if (a == n)
					a = k;
				else
					b = k;
			}
			strbuf(err, errlen,
			       "rank %lld is in both %s and %s: databases of different jobs or runs? "
			       "(merge the ranks of one run)",
			       sorted[i], ri[a].path, ri[b].path);
			free(sorted);
			return -EINVAL;
		}
		free(sorted);
	}
	return 0;
}

/* Notes on the runs as a whole: ranks by position, arguments, job ids,
 * world size. */
static int run_notes(sqlite3 *out, const struct run_info *ri, size_t n, int by_position, char *err,
		     size_t errlen)
{
	char text[2048];
	int rc = 0;

	if (by_position) {
		size_t i = 0;
		while (ri[i].has_rank)
			i++;
		strbuf(text, sizeof(text),
		       "%s has no rank (not recorded under mpirun or srun): the ranks are the databases' positions "
		       "in the argument list, 0 to %zu (%s is rank 0)",
		       ri[i].path, n - 1, ri[0].path);
		rc = add_note(out, "merge_rank_position", text, err, errlen);
	}
	for (size_t i = 1; !rc && i < n; i++) {
		if (strcmp(ri[i].command, ri[0].command) != 0) {
			strbuf(text, sizeof(text), "the ranks ran %s with different arguments: %s ran %s, %s ran %s",
			       ri[0].program, ri[0].path, ri[0].command, ri[i].path, ri[i].command);
			rc = add_note(out, "merge_arguments", text, err, errlen);
			break;
		}
	}
	for (size_t i = 1; !rc && i < n; i++) {
		if (ri[i].job_id && ri[0].job_id && strcmp(ri[i].job_id, ri[0].job_id) != 0) {
			strbuf(text, sizeof(text), "the databases come from different jobs: %s of job %s, %s of job %s",
			       ri[0].path, ri[0].job_id, ri[i].path, ri[i].job_id);
			rc = add_note(out, "merge_jobs", text, err, errlen);
			break;
		}
	}
	if (!rc && ri[0].emulated) {
		strbuf(text, sizeof(text),
		       "the ranks ran under the emulator (%s): the job's step times, spread and stragglers are how "
		       "the emulator ran them, not the program; job_mfu is unknown; the counted FLOPs are exact",
		       ri[0].emulated);
		rc = add_note(out, "merge_emulated", text, err, errlen);
	}
	if (!rc && ri[0].has_world && ri[0].world_size != (long long)n) {
		strbuf(text, sizeof(text), "the job had %lld ranks and %zu %s merged: the job's numbers are for these only",
		       ri[0].world_size, n, n == 1 ? "is" : "are");
		rc = add_note(out, "merge_world_size", text, err, errlen);
	}
	return rc;
}

/* The column names of table @t in @db as "SELECT * FROM t" gives them. */
static int create_table(sqlite3 *out, sqlite3 *db, const char *t, const char *path, char *err, size_t errlen)
{
	char sql[256], *ddl = NULL;
	size_t len = 0, cap = 0;
	sqlite3_stmt *st = NULL;
	int rc = -EIO;

	strbuf(sql, sizeof(sql), "SELECT * FROM \"%s\"", t);
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
		strbuf(err, errlen, "%s: %s", path, sqlite3_errmsg(db));
		return -EIO;
	}
	strbuf(sql, sizeof(sql), "CREATE TABLE main.\"%s\" (rank INTEGER", t);
	if (buf_append(&ddl, &len, &cap, sql, strlen(sql)))
		goto nomem;
	for (int i = 0; i < sqlite3_column_count(st); i++) {
		const char *name = sqlite3_column_name(st, i), *type = sqlite3_column_decltype(st, i);

		if (!name || strcmp(name, "rank") == 0)
			continue;
		if (strchr(name, '"') || (type && strpbrk(type, "\"();"))) {
			strbuf(err, errlen, "%s: unexpected column %s in table %s", path, name, t);
			rc = -EINVAL;
			goto out;
		}
		strbuf(sql, sizeof(sql), ", \"%s\" %s", name, type ? type : "");
		if (buf_append(&ddl, &len, &cap, sql, strlen(sql)))
			goto nomem;
	}
	if (buf_append(&ddl, &len, &cap, ")", 2))
		goto nomem;
	if (sqlite3_exec(out, ddl, NULL, NULL, NULL) != SQLITE_OK) {
		strbuf(err, errlen, "%s", sqlite3_errmsg(out));
		goto out;
	}
	rc = 0;
	goto out;
nomem:
	strbuf(err, errlen, "out of memory");
	rc = -ENOMEM;
out:
	sqlite3_finalize(st);
	free(ddl);
	return rc;
}

/* Copy table @t of @in into @out's, every row with @rank. */
static int copy_table(sqlite3 *out, const struct merge_input *in, const char *t, long long rank, char *err,
		      size_t errlen)
{
	char sql[256];
	sqlite3_stmt *sel = NULL, *ins = NULL, *probe = NULL;
	int rc = -EIO, ncol, nout, step;

	strbuf(sql, sizeof(sql), "SELECT * FROM \"%s\"", t);
	if (sqlite3_prepare_v2(in->db, sql, -1, &sel, NULL) != SQLITE_OK) {
		strbuf(err, errlen, "%s: %s", in->path, sqlite3_errmsg(in->db));
		goto out;
	}
	strbuf(sql, sizeof(sql), "SELECT * FROM main.\"%s\"", t);
	if (sqlite3_prepare_v2(out, sql, -1, &probe, NULL) != SQLITE_OK) {
		strbuf(err, errlen, "%s", sqlite3_errmsg(out));
		goto out;
	}
	ncol = sqlite3_column_count(sel);
	nout = sqlite3_column_count(probe);
	/* same columns in the same order (the schema versions are equal) */
	for (int i = 0, o = 1; i < ncol; i++) {
		const char *name = sqlite3_column_name(sel, i);
		if (name && strcmp(name, "rank") == 0)
			continue;
		if (o >= nout || !name || strcmp(name, sqlite3_column_name(probe, o)) != 0) {
			strbuf(err, errlen, "%s: the columns of table %s differ from the first database's", in->path, t);
			rc = -EINVAL;
			goto out;
		}
		o++;
	}
	{
		char *q = NULL;
		size_t len = 0, cap = 0;
		int bad = 0;

		strbuf(sql, sizeof(sql), "INSERT INTO main.\"%s\" VALUES (?", t);
		bad |= buf_append(&q, &len, &cap, sql, strlen(sql));
		for (int o = 1; o < nout; o++)
			bad |= buf_append(&q, &len, &cap, ", ?", 3);
		bad |= buf_append(&q, &len, &cap, ")", 2);
		if (bad) {
			free(q);
			strbuf(err, errlen, "out of memory");
			rc = -ENOMEM;
			goto out;
		}
		step = sqlite3_prepare_v2(out, q, -1, &ins, NULL);
		free(q);
		if (step != SQLITE_OK) {
			strbuf(err, errlen, "%s", sqlite3_errmsg(out));
			goto out;
		}
	}
	while ((step = sqlite3_step(sel)) == SQLITE_ROW) {
		int o = 1;

		sqlite3_bind_int64(ins, 1, rank);
		for (int i = 0; i < ncol; i++) {
			const char *name = sqlite3_column_name(sel, i);
			if (name && strcmp(name, "rank") == 0)
				continue;
			sqlite3_bind_value(ins, ++o, sqlite3_column_value(sel, i));
		}
		if (sqlite3_step(ins) != SQLITE_DONE) {
			strbuf(err, errlen, "%s", sqlite3_errmsg(out));
			goto out;
		}
		sqlite3_reset(ins);
	}
	if (step != SQLITE_DONE) {
		strbuf(err, errlen, "%s: %s", in->path, sqlite3_errmsg(in->db));
		goto out;
	}
	rc = 0;
out:
	sqlite3_finalize(sel);
	sqlite3_finalize(ins);
	sqlite3_finalize(probe);
	return rc;
}

/* Different numbers of complete steps: which ranks have how many, and
 * what the job sections cover. */
static const char step_counts_sql[] =
	"WITH c AS (SELECT jr.rank, (SELECT count(*) FROM step s WHERE s.rank = jr.rank AND s.complete = 1) AS n\n"
	"           FROM job_rank jr),\n"
	"g AS (SELECT n, count(*) AS k, group_concat(rank, ', ') AS ranks FROM (SELECT * FROM c ORDER BY rank)\n"
	"      GROUP BY n),\n"
	"common AS (SELECT count(*) AS n FROM (SELECT step FROM step WHERE complete = 1 GROUP BY step\n"
	"           HAVING count(*) = (SELECT count(*) FROM job_rank)))\n"
	"SELECT 'the ranks completed different numbers of steps (' ||\n"
	"       (SELECT group_concat(CASE WHEN k = 1 THEN 'rank ' ELSE 'ranks ' END || ranks || ': ' || n, '; ')\n"
	"        FROM (SELECT * FROM g ORDER BY n DESC)) ||\n"
	"       '): steps are matched by their index, and the job sections cover the ' || common.n ||\n"
	"       ' steps that every rank completed; the others are left out of them'\n"
	"FROM common WHERE (SELECT count(*) FROM g) > 1";

static int step_count_note(sqlite3 *out, char *err, size_t errlen)
{
	sqlite3_stmt *st = NULL;
	int rc = 0;

	if (sqlite3_prepare_v2(out, step_counts_sql, -1, &st, NULL) != SQLITE_OK) {
		strbuf(err, errlen, "%s", sqlite3_errmsg(out));
		return -EIO;
	}
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
		rc = add_note(out, "merge_step_counts", (const char *)sqlite3_column_text(st, 0), err, errlen);
	sqlite3_finalize(st);
	return rc;
}

/* schema/@name (job.sql, job_index.sql) run on @out. */
static int job_schema(sqlite3 *out, const char *name, char *err, size_t errlen)
{
	const struct mfu_embedded *e = embedded_find(mfu_job_schema_files, name);

	if (!e) {
		strbuf(err, errlen, "schema/%s is missing from this build", name);
		return -ENOENT;
	}
	if (sqlite3_exec(out, e->text, NULL, NULL, NULL) != SQLITE_OK) {
		strbuf(err, errlen, "%s", sqlite3_errmsg(out));
		return -EIO;
	}
	return 0;
}

/* The job's views (analyses/job_views.sql: job_rank_step, job_step,
 * job_rank_totals, job_run), made TEMP as the file has them (@schema
 * "temp": a merged file read, of this mfu or an older one) or stored in
 * @schema "main" (the merged file, for
 * SQL users of it), from the same text. */
int merge_job_view(sqlite3 *db, const char *schema, char *err, size_t errlen)
{
	static const char temp_view[] = "CREATE TEMP VIEW ";
	const struct mfu_embedded *e = embedded_find(mfu_analysis_files, "job_views.sql");
	char *sql = NULL;
	int rc = 0;

	if (!e) {
		strbuf(err, errlen, "analyses/job_views.sql is missing from this build");
		return -ENOENT;
	}
	if (strcmp(schema, "temp") == 0) {
		sql = sqlite3_mprintf("%s", e->text);
	} else {
		/* each CREATE TEMP VIEW x becomes CREATE VIEW schema.x */
		sqlite3_str *out = sqlite3_str_new(db);
		const char *p = e->text, *q;

		while ((q = strstr(p, temp_view))) {
			sqlite3_str_append(out, p, (int)(q - p));
			sqlite3_str_appendf(out, "CREATE VIEW %s.", schema);
			p = q + sizeof(temp_view) - 1;
		}
		sqlite3_str_appendall(out, p);
		sql = sqlite3_str_finish(out);
	}
	if (!sql) {
		strbuf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK) {
		strbuf(err, errlen, "%s", sqlite3_errmsg(db));
		rc = -EIO;
	}
	sqlite3_free(sql);
	return rc;
}

/* Where merge_from() finds each rank's database: open already (@in), or
 * opened with @open when needed and closed after (@paths). */
struct source {
	const struct merge_input *in;
	char *const *paths;
	merge_open_fn open;
	void *ctx;
};

/* The @i-th database into *@m: 0, or -ECANCELED when @open failed (it said
 * why). */
static int source_get(const struct source *s, size_t i, struct merge_input *m)
{
	if (s->in) {
		*m = s->in[i];
		return 0;
	}
	m->path = s->paths[i];
	m->db = NULL;
	if (s->open(s->ctx, m->path, &m->db)) {
		merge_close(m->db);
		m->db = NULL;
		return -ECANCELED;
	}
	return 0;
}

static void source_put(const struct source *s, struct merge_input *m)
{
	if (!s->in)
		merge_close(m->db);
	m->db = NULL;
}

void merge_close(sqlite3 *db)
{
	if (!db)
		return;
	sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
	sqlite3_close(db);
}

/* What each run is, read from each database in turn (@ri[i].path names
 * it in the messages that follow). */
static int read_infos(const struct source *src, size_t n, struct run_info *ri, char *err, size_t errlen)
{
	struct merge_input in = { 0 };
	int rc = 0;

	for (size_t i = 0; i < n && !rc; i++) {
		rc = source_get(src, i, &in);
		if (!rc)
			rc = read_info(&in, &ri[i], err, errlen);
		ri[i].path = in.path; /* what the messages below name */
		source_put(src, &in);
	}
	return rc;
}

/* The runs are of one program, all native or all emulated. */
static int check_alike(const struct run_info *ri, size_t n, char *err, size_t errlen)
{
	int rc = 0;

	for (size_t i = 1; i < n && !rc; i++) {
		if (strcmp(ri[i].program, ri[0].program) != 0) {
			strbuf(err, errlen, "cannot merge runs of different programs: %s ran %s, %s ran %s", ri[0].path,
			       ri[0].program, ri[i].path, ri[i].program);
			rc = -EINVAL;
		}
	}
	for (size_t i = 1; i < n && !rc; i++) {
		if (!ri[i].emulated != !ri[0].emulated) {
			size_t e = ri[0].emulated ? 0 : i, nat = ri[0].emulated ? i : 0;
			strbuf(err, errlen,
			       "cannot merge an emulated run with a native one: %s ran under the emulator (%s), %s "
			       "natively; an emulated rank's times are the emulator's (merge the native ranks, and give "
			       "each its counts with --hw-flops-from)",
			       ri[e].path, ri[e].emulated, ri[nat].path);
			rc = -EINVAL;
		}
	}
	return rc;
}

/* The output's transaction begun (*@began) with the first database's
 * schema version, the job tables and the merged tables as the first
 * database has them. */
static int begin_output(sqlite3 *out, const struct merge_input *first, int *began, char *err, size_t errlen)
{
	sqlite3_stmt *st = NULL;
	int rc = 0, version = 0;
	char sql[128];

	if (sqlite3_prepare_v2(first->db, "PRAGMA user_version", -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		version = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	strbuf(sql, sizeof(sql), "PRAGMA main.user_version = %d; BEGIN", version);
	if (sqlite3_exec(out, sql, NULL, NULL, NULL) != SQLITE_OK) {
		strbuf(err, errlen, "%s", sqlite3_errmsg(out));
		rc = -EIO;
	} else {
		*began = 1;
		rc = job_schema(out, "job.sql", err, errlen);
	}
	for (size_t t = 0; t < ARRAY_SIZE(merged_tables) && !rc; t++)
		rc = create_table(out, first->db, merged_tables[t], first->path, err, errlen);
	return rc;
}

/* Each database's rows, with its rank, one database at a time. */
static int copy_ranks(sqlite3 *out, const struct source *src, size_t n, const long long *rank, int *began,
		      char *err, size_t errlen)
{
	struct merge_input in = { 0 };
	int rc = 0;

	for (size_t i = 0; i < n && !rc; i++) {
		rc = source_get(src, i, &in);
		if (rc)
			break;
		if (i == 0)
			rc = begin_output(out, &in, began, err, errlen);
		for (size_t t = 0; t < ARRAY_SIZE(merged_tables) && !rc; t++)
			rc = copy_table(out, &in, merged_tables[t], rank[i], err, errlen);
		source_put(src, &in);
	}
	return rc;
}

/* job_rank, job_setting, the indexes, the notes, the ceilings and the job
 * views, then the commit. */
static int finish_job(sqlite3 *out, const struct run_info *ri, size_t n, const long long *rank,
		      int by_position, double threshold, char *err, size_t errlen)
{
	sqlite3_stmt *st = NULL;
	int rc;
	char sql[128];

	if (sqlite3_prepare_v2(out, "INSERT INTO main.job_rank VALUES (?, ?, ?)", -1, &st, NULL) != SQLITE_OK)
		goto sqlfail;
	for (size_t i = 0; i < n; i++) {
		sqlite3_bind_int64(st, 1, rank[i]);
		sqlite3_bind_text(st, 2, ri[i].path, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 3, by_position ? "position" : "run.rank", -1, SQLITE_STATIC);
		if (sqlite3_step(st) != SQLITE_DONE)
			goto sqlfail;
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	st = NULL;
	/* the fraction as text the SQL reads back exactly */
	strbuf(sql, sizeof(sql), "INSERT INTO main.job_setting VALUES ('straggler_threshold', %.17g)", threshold);
	if (sqlite3_exec(out, sql, NULL, NULL, NULL) != SQLITE_OK)
		goto sqlfail;
	rc = job_schema(out, "job_index.sql", err, errlen);
	if (!rc)
		rc = run_notes(out, ri, n, by_position, err, errlen);
	/* each host's ceilings once (ranks on one host share it) */
	if (!rc)
		rc = job_peak_tables(out, "main", 1, err, errlen);
	if (!rc)
		rc = merge_job_view(out, "main", err, errlen);
	if (!rc)
		rc = step_count_note(out, err, errlen);
	if (!rc && sqlite3_exec(out, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
		goto sqlfail;
	return rc;
sqlfail:
	strbuf(err, errlen, "%s", sqlite3_errmsg(out));
	sqlite3_finalize(st);
	return -EIO;
}

/* The merge, reading each database twice, one at a time: first what each
 * run is (checked against the others before anything is written), then
 * its rows. A job of more ranks than file descriptors merges as well as
 * one of two (each open connection takes one to three: the file, its WAL
 * and its shared memory). */
static int merge_from(sqlite3 *out, const struct source *src, size_t n, double threshold, char *err,
		      size_t errlen)
{
	struct run_info *ri = calloc(n ? n : 1, sizeof(*ri));
	long long *rank = calloc(n ? n : 1, sizeof(*rank));
	int rc = 0, by_position = 0, began = 0;

	if (!ri || !rank) {
		rc = -ENOMEM;
		goto out;
	}
	if (n == 0) {
		strbuf(err, errlen, "no database to merge");
		rc = -EINVAL;
		goto out;
	}
	rc = read_infos(src, n, ri, err, errlen);
	if (!rc)
		rc = check_alike(ri, n, err, errlen);
	if (!rc)
		rc = choose_ranks(ri, n, rank, &by_position, err, errlen);
	if (!rc)
		rc = copy_ranks(out, src, n, rank, &began, err, errlen);
	if (!rc)
		rc = finish_job(out, ri, n, rank, by_position, threshold, err, errlen);
out:
	if (rc == -ENOMEM)
		strbuf(err, errlen, "out of memory");
	if (rc && began)
		sqlite3_exec(out, "ROLLBACK", NULL, NULL, NULL);
	infos_free(ri, n);
	free(rank);
	return rc;
}

int merge_write(sqlite3 *out, const struct merge_input *in, size_t n, double threshold, char *err,
		size_t errlen)
{
	struct source src = { .in = in };

	return merge_from(out, &src, n, threshold, err, errlen);
}

int merge_write_each(sqlite3 *out, char *const *paths, size_t n, merge_open_fn open, void *ctx, double threshold,
		     char *err, size_t errlen)
{
	struct source src = { .paths = paths, .open = open, .ctx = ctx };

	return merge_from(out, &src, n, threshold, err, errlen);
}
