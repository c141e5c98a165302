/* Merging a job's ranks (merge.h): rank databases made here with known
 * step times are merged, and the merged tables, the job_rank_step view
 * (common steps, median, straggler) and the merge's notes are checked
 * against values worked out by hand; then the refusals (other program, a
 * rank twice, emulated with native, a merged input, schema versions), the
 * pattern expansion and the threshold parser. */
#include "check.h"
#include "db.h"
#include "report/merge.h"
#include "report/job_peak.h"
#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[] = "/tmp/mfu-test-merge-XXXXXX";

/* Step times (ms) of each rank; 0 ends a rank's steps. Rank 2 is 50% slower
 * in step 1 (a straggler at 10%: the median of 100, 100 and 150 is 100),
 * 5% slower in step 2 (not one), and has one step fewer. */
static const int wall_ms[3][5] = {
	{ 100, 100, 100, 100, 0 },
	{ 100, 100, 100, 100, 0 },
	{ 100, 150, 105, 0, 0 },
};

/* A rank's database at dir/@name: run rank @rank (or none when < 0) of
 * @program, emulated by @emulated when not NULL, with the steps of row
 * @times of wall_ms, each with 1e7 model FLOPs. */
static void make_rank(const char *name, int rank, const char *program, const char *emulated, int times)
{
	char path[256], sql[1024], err[256];
	sqlite3 *db = NULL;

	strbuf(path, sizeof(path), "%s/%s", dir, name);
	unlink(path);
	if (db_create(path, &db, NULL, 0, err, sizeof(err))) {
		fprintf(stderr, "db_create %s: %s\n", path, err);
		CHECK(0);
		return;
	}
	if (rank >= 0)
		strbuf(sql, sizeof(sql),
		       "INSERT INTO run (id, mfu_version, command, start_unix_ns, start_ns, dtype, state, rank, "
		       "world_size, peak_flops, emulated) VALUES (1, 'test', json_array('%s', '--n', '%d'), 1, 1, "
		       "'fp32', 'complete', %d, 3, 1e9, %s%s%s)",
		       program, rank, rank, emulated ? "'" : "", emulated ? emulated : "NULL", emulated ? "'" : "");
	else
		strbuf(sql, sizeof(sql),
		       "INSERT INTO run (id, mfu_version, command, start_unix_ns, start_ns, dtype, state, peak_flops) "
		       "VALUES (1, 'test', json_array('%s'), 1, 1, 'fp32', 'complete', 1e9)",
		       program);
	CHECK_EQ_INT(db_exec(db, sql, err, sizeof(err)), 0);
	for (long long s = 0, t = 0; s < 5 && wall_ms[times][s]; s++) {
		long long w = wall_ms[times][s] * 1000000LL;
		strbuf(sql, sizeof(sql),
		       "INSERT INTO step (step, pid, tid, begin_ns, end_ns, wall_ns, model_flops, complete) "
		       "VALUES (%lld, 1, 1, %lld, %lld, %lld, 1e7, 1)",
		       s, t, t + w, w);
		CHECK_EQ_INT(db_exec(db, sql, err, sizeof(err)), 0);
		t += w;
	}
	CHECK_EQ_INT(db_finish(db, err, sizeof(err)), 0);
	sqlite3_close(db);
}

static sqlite3 *open_rank(const char *name, char *path, size_t len)
{
	char err[256];
	sqlite3 *db = NULL;

	strbuf(path, len, "%s/%s", dir, name);
	if (db_open_readonly(path, &db, err, sizeof(err))) {
		fprintf(stderr, "open %s: %s\n", path, err);
		CHECK(0);
	}
	return db;
}

static long long one_int(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st = NULL;
	long long v = -999;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
		fprintf(stderr, "%s: %s\n", sql, sqlite3_errmsg(db));
		return v;
	}
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_type(st, 0) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

/* Merge the databases @names (n of them) into a new in-memory database:
 * merge_write's return, the database in *@out (or closed when @out is
 * NULL), its message in @err. */
static int merge(const char *const *names, size_t n, sqlite3 **out, char *err, size_t errlen)
{
	struct merge_input in[4];
	char paths[4][256];
	sqlite3 *db = NULL;
	int rc;

	for (size_t i = 0; i < n; i++) {
		in[i].db = open_rank(names[i], paths[i], sizeof(paths[i]));
		in[i].path = paths[i];
	}
	sqlite3_open(":memory:", &db);
	err[0] = '\0';
	rc = merge_write(db, in, n, 0.10, err, errlen);
	for (size_t i = 0; i < n; i++)
		sqlite3_close(in[i].db);
	if (out)
		*out = db;
	else
		sqlite3_close(db);
	return rc;
}

static void test_merge_and_view(void)
{
	const char *names[] = { "r0.sqlite", "r1.sqlite", "r2.sqlite" };
	char err[512];
	sqlite3 *db = NULL;

	CHECK_EQ_INT(merge(names, 3, &db, err, sizeof(err)), 0);
	if (err[0])
		fprintf(stderr, "merge: %s\n", err);
	CHECK_EQ_INT(one_int(db, "PRAGMA user_version"), db_schema_version());
	CHECK_EQ_INT(one_int(db, "SELECT count(*) FROM job_rank"), 3);
	CHECK_EQ_INT(one_int(db, "SELECT count(*) FROM job_rank WHERE rank_from = 'run.rank'"), 3);
	CHECK_EQ_INT(one_int(db, "SELECT sum(rank) FROM run"), 3);
	CHECK_EQ_INT(one_int(db, "SELECT count(*) FROM step"), 11);
	CHECK_EQ_INT(one_int(db, "SELECT count(*) FROM step WHERE rank = 2"), 3);
	CHECK_EQ_INT(one_int(db, "SELECT value * 100 FROM job_setting WHERE name = 'straggler_threshold'"), 10);
	/* the view: the 3 steps every rank completed, 3 ranks each */
	CHECK_EQ_INT(one_int(db, "SELECT count(*) FROM job_rank_step"), 9);
	CHECK_EQ_INT(one_int(db, "SELECT max(step) FROM job_rank_step"), 2);
	CHECK_EQ_INT(one_int(db, "SELECT median_ns FROM job_rank_step WHERE step = 1 AND rank = 0"), 100000000);
	CHECK_EQ_INT(one_int(db, "SELECT median_ns FROM job_rank_step WHERE step = 2 AND rank = 2"), 100000000);
	CHECK_EQ_INT(one_int(db, "SELECT count(*) FROM job_rank_step WHERE straggler"), 1);
	CHECK_EQ_INT(one_int(db, "SELECT rank * 10 + step FROM job_rank_step WHERE straggler"), 21);
	/* the slowest of step 1 (down = 1) is rank 2; ties go to the lower rank */
	CHECK_EQ_INT(one_int(db, "SELECT rank FROM job_rank_step WHERE step = 1 AND down = 1"), 2);
	CHECK_EQ_INT(one_int(db, "SELECT rank FROM job_rank_step WHERE step = 0 AND down = 1"), 0);
	CHECK_EQ_INT(one_int(db, "SELECT count(peak_flops) FROM job_rank_step"), 9);
	/* different step counts and arguments are said, not refused */
	CHECK_EQ_INT(one_int(db, "SELECT count(*) FROM note WHERE rank IS NULL AND kind = 'merge_arguments'"), 1);
	CHECK_EQ_INT(one_int(db, "SELECT count(*) FROM note WHERE rank IS NULL AND kind = 'merge_step_counts' AND "
				 "text LIKE '%(ranks 0, 1: 4; rank 2: 3)%cover the 3 steps%'"),
		     1);
	CHECK_EQ_INT(one_int(db, "SELECT count(*) FROM note WHERE kind = 'merge_emulated'"), 0);
	CHECK_EQ_INT(merge_is_merged(db), 1);
	sqlite3_close(db);
}

static void test_emulated(void)
{
	const char *emu[] = { "e0.sqlite", "e1.sqlite" };
	const char *mixed[] = { "r0.sqlite", "e1.sqlite" };
	char err[512];
	sqlite3 *db = NULL;

	CHECK_EQ_INT(merge(emu, 2, &db, err, sizeof(err)), 0);
	/* the raw peaks stay; the view gives an emulated rank none */
	CHECK_EQ_INT(one_int(db, "SELECT count(peak_flops) FROM run"), 2);
	CHECK_EQ_INT(one_int(db, "SELECT count(*) FROM job_rank_step"), 8);
	CHECK_EQ_INT(one_int(db, "SELECT count(peak_flops) FROM job_rank_step"), 0);
	CHECK_EQ_INT(one_int(db, "SELECT count(*) FROM note WHERE kind = 'merge_emulated' AND text LIKE '%mfufp%'"),
		     1);
	sqlite3_close(db);
	CHECK_EQ_INT(merge(mixed, 2, NULL, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "cannot merge an emulated run with a native one") != NULL);
	CHECK(strstr(err, "e1.sqlite") != NULL);
}

static void test_refusals(void)
{
	const char *other[] = { "r0.sqlite", "o1.sqlite" };
	const char *twice[] = { "r0.sqlite", "r1.sqlite", "d0.sqlite" };
	const char *unranked[] = { "u0.sqlite", "r1.sqlite" };
	char err[512];
	sqlite3 *db = NULL;

	CHECK_EQ_INT(merge(other, 2, NULL, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "cannot merge runs of different programs") != NULL);
	CHECK(strstr(err, "other") != NULL);
	CHECK_EQ_INT(merge(twice, 3, NULL, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "rank 0 is in both") != NULL);
	CHECK(strstr(err, "d0.sqlite") != NULL);
	CHECK_EQ_INT(merge(NULL, 0, NULL, err, sizeof(err)), -EINVAL);
	/* a run without a rank: all ranks by position, with a note */
	CHECK_EQ_INT(merge(unranked, 2, &db, err, sizeof(err)), 0);
	CHECK_EQ_INT(one_int(db, "SELECT count(*) FROM job_rank WHERE rank_from = 'position'"), 2);
	CHECK_EQ_INT(one_int(db, "SELECT rank FROM job_rank WHERE path LIKE '%u0.sqlite'"), 0);
	CHECK_EQ_INT(one_int(db, "SELECT count(*) FROM note WHERE kind = 'merge_rank_position'"), 1);
	sqlite3_close(db);
	/* a merged database is not merged again */
	{
		char path[256], err2[256];
		struct merge_input in[2];
		sqlite3 *out = NULL, *merged = NULL;
		const char *names[] = { "r0.sqlite", "r1.sqlite" };

		strbuf(path, sizeof(path), "%s/job.sqlite", dir);
		unlink(path);
		CHECK_EQ_INT(merge(names, 2, &merged, err, sizeof(err)), 0);
		/* write it to a file through the backup API */
		{
			sqlite3 *file = NULL;
			sqlite3_backup *b;

			sqlite3_open(path, &file);
			b = sqlite3_backup_init(file, "main", merged, "main");
			CHECK(b != NULL);
			if (b) {
				sqlite3_backup_step(b, -1);
				sqlite3_backup_finish(b);
			}
			sqlite3_close(file);
		}
		sqlite3_close(merged);
		in[0].path = path;
		in[1].path = "r1";
		sqlite3_open_v2(path, &in[0].db, SQLITE_OPEN_READONLY, NULL);
		in[1].db = open_rank("r1.sqlite", err2, sizeof(err2));
		sqlite3_open(":memory:", &out);
		CHECK_EQ_INT(merge_write(out, in, 2, 0.1, err, sizeof(err)), -EINVAL);
		CHECK(strstr(err, "is a merged database") != NULL);
		sqlite3_close(out);
		sqlite3_close(in[0].db);
		sqlite3_close(in[1].db);
	}
}

/* merge_write_each(): how often it opens, and that the rank it opened
 * before is closed when it opens the next: the process's descriptors on
 * dir/r*.sqlite (and their -wal, -shm) are counted at each open. */
struct opener {
	int calls, fail_at, most;
};

static int rank_fds(void)
{
	char link[64], target[512], prefix[300];
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	strbuf(prefix, sizeof(prefix), "%s/r", dir);
	while (d && (e = readdir(d)) != NULL) {
		ssize_t len;

		strbuf(link, sizeof(link), "/proc/self/fd/%s", e->d_name);
		len = readlink(link, target, sizeof(target) - 1);
		if (len > 0) {
			target[len] = '\0';
			n += strncmp(target, prefix, strlen(prefix)) == 0;
		}
	}
	if (d)
		closedir(d);
	return n;
}

static int count_open(void *ctx, const char *path, sqlite3 **db)
{
	struct opener *o = ctx;
	char err[256];
	int before = rank_fds();

	if (before > o->most)
		o->most = before;
	if (++o->calls == o->fail_at)
		return -1;
	if (db_open_readonly(path, db, err, sizeof(err)) || db_exec(*db, "BEGIN", err, sizeof(err))) {
		fprintf(stderr, "open %s: %s\n", path, err);
		CHECK(0);
		return -1;
	}
	return 0;
}

static void test_one_at_a_time(void)
{
	char p[3][256], err[512];
	char *paths[3] = { p[0], p[1], p[2] };
	struct opener o = { 0 };
	sqlite3 *out = NULL;

	for (int i = 0; i < 3; i++)
		strbuf(p[i], sizeof(p[i]), "%s/r%d.sqlite", dir, i);
	sqlite3_open(":memory:", &out);
	err[0] = '\0';
	CHECK_EQ_INT(merge_write_each(out, paths, 3, count_open, &o, 0.10, err, sizeof(err)), 0);
	if (err[0])
		fprintf(stderr, "merge: %s\n", err);
	CHECK_EQ_INT(o.calls, 6); /* each twice: what the run is, then its rows */
	CHECK_EQ_INT(o.most, 0);  /* nothing of another rank open at an open */
	CHECK_EQ_INT(rank_fds(), 0);
	CHECK_EQ_INT(one_int(out, "SELECT count(*) FROM job_rank"), 3);
	CHECK_EQ_INT(one_int(out, "SELECT count(*) FROM step"), 11);
	CHECK_EQ_INT(one_int(out, "SELECT count(*) FROM step WHERE rank = 2"), 3);
	sqlite3_close(out);
	/* an open that fails (it said why), in the first pass or the second:
	 * -ECANCELED, nothing written, nothing left open */
	for (int at = 2; at <= 5; at += 3) {
		struct opener f = { .fail_at = at };

		sqlite3_open(":memory:", &out);
		CHECK_EQ_INT(merge_write_each(out, paths, 3, count_open, &f, 0.10, err, sizeof(err)), -ECANCELED);
		CHECK_EQ_INT(one_int(out, "SELECT count(*) FROM sqlite_master WHERE name = 'job_rank'"), 0);
		CHECK_EQ_INT(rank_fds(), 0);
		sqlite3_close(out);
	}
}

static void test_versions(void)
{
	char a[256], b[256], err[512];
	char *paths[2] = { a, b };
	sqlite3 *db = NULL;

	strbuf(a, sizeof(a), "%s/r0.sqlite", dir);
	strbuf(b, sizeof(b), "%s/v1.sqlite", dir);
	CHECK_EQ_INT(merge_check_versions(paths, 1, err, sizeof(err)), 0);
	make_rank("v1.sqlite", 1, "/x/app", NULL, 0);
	CHECK_EQ_INT(merge_check_versions(paths, 2, err, sizeof(err)), 0);
	sqlite3_open(b, &db);
	CHECK_EQ_INT(db_exec(db, "PRAGMA user_version = 3", err, sizeof(err)), 0);
	sqlite3_close(db);
	CHECK_EQ_INT(merge_check_versions(paths, 2, err, sizeof(err)), -EPROTO);
	CHECK(strstr(err, "different schema versions") != NULL);
	CHECK(strstr(err, "has 3") != NULL);
}

static void test_expand(void)
{
	char pat[256], same[256], none[256], err[512];
	const char *p1[1] = { pat };
	const char *p2[2];
	char **paths = NULL;
	size_t n = 0;

	strbuf(pat, sizeof(pat), "%s/r?.sqlite", dir);
	CHECK_EQ_INT(merge_expand(p1, 1, &paths, &n, err, sizeof(err)), 0);
	CHECK_EQ_INT(n, 3);
	if (n == 3) {
		CHECK(strstr(paths[0], "/r0.sqlite") != NULL);
		CHECK(strstr(paths[1], "/r1.sqlite") != NULL);
		CHECK(strstr(paths[2], "/r2.sqlite") != NULL);
	}
	merge_paths_free(paths, n);
	strbuf(none, sizeof(none), "%s/nothing.*.sqlite", dir);
	p1[0] = none;
	paths = NULL;
	CHECK_EQ_INT(merge_expand(p1, 1, &paths, &n, err, sizeof(err)), -ENOENT);
	merge_paths_free(paths, 0);
	strbuf(pat, sizeof(pat), "%s/r0.sqlite", dir);
	strbuf(same, sizeof(same), "%s/./r0.sqlite", dir);
	p2[0] = pat;
	p2[1] = same;
	paths = NULL;
	CHECK_EQ_INT(merge_expand(p2, 2, &paths, &n, err, sizeof(err)), -EEXIST);
	merge_paths_free(paths, 0);
}

static void test_threshold(void)
{
	static const struct {
		int line;
		const char *s;
		int rc;
		double want;
	} rows[] = {
		{ __LINE__, "10", 0, 0.10 },   { __LINE__, "10%", 0, 0.10 },  { __LINE__, "2.5", 0, 0.025 },
		{ __LINE__, "0", 0, 0 },       { __LINE__, "1000", 0, 10 },   { __LINE__, "1001", -EINVAL, 0 },
		{ __LINE__, "-1", -EINVAL, 0 }, { __LINE__, "", -EINVAL, 0 }, { __LINE__, "%", -EINVAL, 0 },
		{ __LINE__, "ten", -EINVAL, 0 }, { __LINE__, "10%%", -EINVAL, 0 }, { __LINE__, "nan", -EINVAL, 0 },
	};

	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		double v = -1;
		int rc = merge_parse_threshold(rows[i].s, &v);

		CHECK_ROW(rc == rows[i].rc, rows[i].line);
		if (rc == 0)
			CHECK_ROW(fabs(v - rows[i].want) < 1e-15, rows[i].line);
	}
}

/* The hosts' ceilings (job_peak.h), worked out by hand: ranks on one
 * host count its CPUs and its memory bandwidth once. */
static void test_job_peak(void)
{
	static const char spec0[] = "spec: 1 socket (package 0) x 12 channels x 6000 MT/s x 8 B [zen5]";
	static const char spec1[] = "spec: 1 socket (package 1) x 12 channels x 6000 MT/s x 8 B [zen5]";
	static const char spec01[] = "spec: 2 sockets (packages 0-1) x 12 channels x 6000 MT/s x 8 B [zen5]";
	static const char old[] = "spec: 1 socket x 12 channels x 6000 MT/s x 8 B [zen5]"; /* before packages */
	/* the profile's measured bandwidths of CPU sets holding a rank's
	 * (peak rows of scope 'machine') */
	static const struct job_peak_set vm01[] = { { "0-1", 58 } };
	static const struct job_peak_set vm03[] = { { "0-3", 50 } };
	static const struct job_peak_set two[] = { { "0-3", 70 }, { "0-1", 58 } };
	static const struct job_peak_set vm01b[] = { { "0-1", 59 } };
	static const struct job_peak_set high[] = { { "0-1", 200 } };
	static const struct {
		int line;
		int n;
		struct job_peak_rank r[3];
		double flops, bw;       /* the job's: the hosts' summed */
		int hosts;
	} rows[] = {
		/* the job: 2 ranks on one VM's CPUs 0-1, each with the
		 * whole VM's peaks: counted once */
		{ __LINE__, 2, { { 0, "vm", "0-1", 2, 100, 60, 576, spec0 }, { 1, "vm", "0-1", 2, 100, 60, 576, spec0 } },
		  100, 60, 1 },
		/* unbound ranks whose recorder gave each a share (rank_shared):
		 * the shares add up to the node */
		{ __LINE__, 2, { { 0, "n", "0-1", 1, 50, 60, 576, spec0 }, { 1, "n", "0-1", 1, 50, 60, 576, spec0 } },
		  100, 60, 1 },
		/* overlapping sets 0-3 and 2-5, 1 per CPU: 6 CPUs, not 8; the
		 * bandwidth of the two sets summed, capped by the socket */
		{ __LINE__, 2, { { 0, "n", "0-3", 4, 4, 40, 576, spec0 }, { 1, "n", "2-5", 4, 4, 40, 576, spec0 } },
		  6, 80, 1 },
		/* a quota of 1 CPU each on the same 4 CPUs: the quotas add up */
		{ __LINE__, 2, { { 0, "n", "0-3", 1, 1, 40, 576, spec0 }, { 1, "n", "0-3", 1, 1, 40, 576, spec0 } },
		  2, 40, 1 },
		/* bound to their own CPUs of one socket: nothing shared for
		 * FLOPs; each rank's bandwidth the socket's spec: once */
		{ __LINE__, 2, { { 0, "n", "0", 1, 10, 576, 576, spec0 }, { 1, "n", "1", 1, 10, 576, 576, spec0 } },
		  20, 576, 1 },
		/* each measured alone (a slice): their figures add up */
		{ __LINE__, 2, { { 0, "n", "0", 1, 10, 30, 576, spec0 }, { 1, "n", "1", 1, 10, 30, 576, spec0 } },
		  20, 60, 1 },
		/* one rank per socket: both sockets */
		{ __LINE__, 2, { { 0, "n", "0-3", 4, 40, 576, 576, spec0 }, { 1, "n", "4-7", 4, 40, 576, 576, spec1 } },
		  80, 1152, 1 },
		/* a rank over both sockets and one on socket 1: the first's set
		 * contains the other's */
		{ __LINE__, 2, { { 0, "n", "0-7", 8, 80, 1152, 1152, spec01 }, { 1, "n", "4-7", 4, 40, 576, 576, spec1 } },
		  80, 1152, 1 },
		/* sockets not named (an older recording): shared, as one host's */
		{ __LINE__, 2, { { 0, "n", "0", 1, 10, 576, 576, old }, { 1, "n", "1", 1, 10, 576, 576, old } },
		  20, 576, 1 },
		/* two hosts: each its own */
		{ __LINE__, 2, { { 0, "a", "0-1", 2, 100, 60, 576, spec0 }, { 1, "b", "0-1", 2, 100, 60, 576, spec0 } },
		  200, 120, 2 },
		/* no host name: each rank its own host */
		{ __LINE__, 2, { { 0, NULL, "0-1", 2, 100, 60, 576, spec0 }, { 1, NULL, "0-1", 2, 100, 60, 576, spec0 } },
		  200, 120, 2 },
		/* a CPU set unknown: summed */
		{ __LINE__, 2, { { 0, "n", NULL, 2, 100, 60, 576, spec0 }, { 1, "n", "0-1", 2, 100, 60, 576, spec0 } },
		  200, 120, 1 },
		/* the VM's: bound one per CPU, each with one thread's figure
		 * measured alone; the profile measured both CPUs together:
		 * that caps the host */
		{ __LINE__, 2, { { 0, "vm", "0", 1, 10, 60, 576, spec0, vm01, 1 },
				 { 1, "vm", "1", 1, 10, 60, 576, spec0, vm01, 1 } },
		  20, 58, 1 },
		/* only one rank has the row: it still holds the union */
		{ __LINE__, 2, { { 0, "vm", "0", 1, 10, 60, 576, spec0, vm01, 1 },
				 { 1, "vm", "1", 1, 10, 60, 576, spec0 } },
		  20, 58, 1 },
		/* the smallest figure of the sets that hold the union */
		{ __LINE__, 2, { { 0, "vm", "0", 1, 10, 60, 576, spec0, two, 2 },
				 { 1, "vm", "1", 1, 10, 60, 576, spec0, vm01b, 1 } },
		  20, 58, 1 },
		/* a set that does not hold the union (CPU 2): no cap */
		{ __LINE__, 2, { { 0, "vm", "0", 1, 10, 60, 576, spec0, vm01, 1 },
				 { 1, "vm", "2", 1, 10, 60, 576, spec0, vm01, 1 } },
		  20, 120, 1 },
		/* no such row (an older recording, no profile): summed, as before */
		{ __LINE__, 2, { { 0, "vm", "0", 1, 10, 60, 576, spec0 }, { 1, "vm", "1", 1, 10, 60, 576, spec0 } },
		  20, 120, 1 },
		/* a figure above the sum: no cap */
		{ __LINE__, 2, { { 0, "vm", "0", 1, 10, 60, 576, spec0, high, 1 },
				 { 1, "vm", "1", 1, 10, 60, 576, spec0, high, 1 } },
		  20, 120, 1 },
		/* one rank's set holds the other's: that set's ceiling, capped
		 * by the bigger set's measured figure */
		{ __LINE__, 2, { { 0, "vm", "0-1", 2, 20, 60, 576, spec0, vm03, 1 },
				 { 1, "vm", "0", 1, 10, 60, 576, spec0, vm03, 1 } },
		  20, 50, 1 },
		/* a single rank keeps its own */
		{ __LINE__, 1, { { 0, "vm", "0", 1, 10, 60, 576, spec0, vm01, 1 } }, 10, 60, 1 },
		/* two hosts: each host's ranks, each its own cap */
		{ __LINE__, 3, { { 0, "a", "0", 1, 10, 60, 576, spec0, vm01, 1 },
				 { 1, "a", "1", 1, 10, 60, 576, spec0, vm01, 1 },
				 { 2, "b", "0", 1, 10, 60, 576, spec0, vm01, 1 } },
		  30, 118, 2 },
		/* three ranks, two sharing CPU 0 */
		{ __LINE__, 3, { { 0, "n", "0", 1, 10, 30, 576, spec0 }, { 1, "n", "0", 1, 10, 30, 576, spec0 },
				 { 2, "n", "1", 1, 10, 30, 576, spec0 } },
		  20, 60, 1 },
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct job_peak_rank r[3];
		struct job_peak_host h[3];
		double f = 0, b = 0;
		int nh;

		memcpy(r, rows[i].r, sizeof(r));
		nh = job_peak_compute(r, (size_t)rows[i].n, h);
		CHECK_ROW(nh == rows[i].hosts, rows[i].line);
		for (int k = 0; k < rows[i].n; k++)
			f += r[k].job_flops, b += r[k].job_bw;
		CHECK_ROW(fabs(f - rows[i].flops) < 1e-9 * rows[i].flops, rows[i].line);
		CHECK_ROW(fabs(b - rows[i].bw) < 1e-9 * rows[i].bw, rows[i].line);
		if (fabs(f - rows[i].flops) >= 1e-9 * rows[i].flops || fabs(b - rows[i].bw) >= 1e-9 * rows[i].bw)
			fprintf(stderr, "  line %d: flops %g bw %g\n", rows[i].line, f, b);
		for (int k = 0; k < nh; k++) {
			f -= h[k].peak_flops;
			b -= h[k].peak_bw;
		}
		CHECK_ROW(fabs(f) < 1e-6 && fabs(b) < 1e-6, rows[i].line);
	}
	/* the rule says which measurement capped it */
	{
		struct job_peak_rank r[2] = { { 0, "vm", "0", 1, 10, 60, 576, spec0, vm01, 1 },
					      { 1, "vm", "1", 1, 10, 60, 576, spec0, vm01, 1 } };
		struct job_peak_host h[2];

		CHECK(job_peak_compute(r, 2, h) == 1);
		CHECK(strstr(h[0].bw_rule, "the bandwidth the machine profile measured on CPUs 0-1 (5.8e-08 GB/s, "
					   "rank 0's recording), which hold all the ranks' CPUs") != NULL);
		CHECK(h[0].ranks_bw == 120 && h[0].peak_bw == 58 && strcmp(h[0].cpus, "0-1") == 0);
	}
}

int main(void)
{
	char path[300];

	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	make_rank("r0.sqlite", 0, "/x/app", NULL, 0);
	make_rank("r1.sqlite", 1, "/x/app", NULL, 1);
	make_rank("r2.sqlite", 2, "/x/app", NULL, 2);
	make_rank("d0.sqlite", 0, "/x/app", NULL, 0);
	make_rank("o1.sqlite", 1, "/y/other", NULL, 1);
	make_rank("u0.sqlite", -1, "/x/app", NULL, 0);
	make_rank("e0.sqlite", 0, "/x/app", "valgrind-3.19.0 --tool=mfufp", 0);
	make_rank("e1.sqlite", 1, "/x/app", "valgrind-3.19.0 --tool=mfufp", 1);
	test_merge_and_view();
	test_one_at_a_time();
	test_emulated();
	test_refusals();
	test_versions();
	test_expand();
	test_threshold();
	test_job_peak();
	{
		static const char *const files[] = { "r0", "r1", "r2", "d0", "o1", "u0", "e0", "e1", "v1", "job" };
		for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
			strbuf(path, sizeof(path), "%s/%s.sqlite", dir, files[i]);
			unlink(path);
		}
		rmdir(dir);
	}
	return check_status();
}
