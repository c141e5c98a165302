/* Creating a run database (schema, .old, no symlink following) and the
 * read-only open's refusals. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "db.h"

static char dir[] = "/tmp/mfu-test-db-XXXXXX";

static const char *path(const char *name)
{
	return check_path(dir, name);
}

static void write_file(const char *p, const void *data, size_t len)
{
	FILE *f = fopen(p, "wb");
	fwrite(data, 1, len, f);
	fclose(f);
}

static int count_files(void)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

static void test_create_and_open(void)
{
	sqlite3 *db;
	char err[512];
	struct stat st;

	CHECK(db_schema_version() >= 1);
	write_file(path("run.sqlite"), "old", 3);
	CHECK_EQ_INT(db_create(path("run.sqlite"), &db, NULL, 0, err, sizeof(err)), 0);
	CHECK_EQ_INT(stat(path("run.sqlite.old"), &st), 0);
	CHECK_EQ_INT(st.st_size, 3);
	CHECK_EQ_INT(db_exec(db, "INSERT INTO run (id, mfu_version, command, start_unix_ns, start_ns, dtype, state) "
			     "VALUES (1, 'x', '[]', 0, 0, 'fp32', 'complete')", err, sizeof(err)), 0);
	CHECK_EQ_INT(db_finish(db, err, sizeof(err)), 0);
	sqlite3_close(db);

	/* a second and a third recording: the earlier ones are all kept,
	 * none overwritten (run.sqlite.old is still the first file) */
	{
		char kept[512];
		sqlite3 *db2;
		CHECK_EQ_INT(db_create(path("run.sqlite"), &db2, kept, sizeof(kept), err, sizeof(err)), 0);
		CHECK(strcmp(kept, path("run.sqlite.old.2")) == 0);
		sqlite3_close(db2);
		CHECK_EQ_INT(stat(path("run.sqlite.old"), &st), 0);
		CHECK_EQ_INT(st.st_size, 3);
		CHECK_EQ_INT(db_create(path("run.sqlite"), &db2, kept, sizeof(kept), err, sizeof(err)), 0);
		CHECK(strcmp(kept, path("run.sqlite.old.3")) == 0);
		sqlite3_close(db2);
		CHECK_EQ_INT(stat(path("run.sqlite.old.2"), &st), 0);
		CHECK(st.st_size > 3); /* the second recording */
		/* put the first recording back where the rest of the test wants it */
		CHECK_EQ_INT(rename(path("run.sqlite.old.2"), path("run.sqlite")), 0);
		unlink(path("run.sqlite.old.3"));
		unlink(path("run.sqlite-wal"));
		unlink(path("run.sqlite-shm"));
		/* every kept name taken: refused, nothing moved */
		for (int n = 2; n <= DB_KEEP_MAX; n++) {
			char name[64];
			snprintf(name, sizeof(name), "full.sqlite.old.%d", n);
			write_file(path(name), "k", 1);
		}
		write_file(path("full.sqlite.old"), "k", 1);
		write_file(path("full.sqlite"), "only", 4);
		CHECK_EQ_INT(db_create(path("full.sqlite"), &db2, kept, sizeof(kept), err, sizeof(err)), -EEXIST);
		CHECK(strstr(err, "remove some") != NULL);
		CHECK_EQ_INT(stat(path("full.sqlite"), &st), 0);
		CHECK_EQ_INT(st.st_size, 4);
	}

	int before = count_files();
	CHECK_EQ_INT(db_open_readonly(path("run.sqlite"), &db, err, sizeof(err)), 0);
	sqlite3_close(db);
	CHECK_EQ_INT(count_files(), before); /* a finished database opens without side files */
}

/* The schema's last line of defence: no negative duration or count in a
 * step or phase row, on insert or update; NULL (unknown) passes. */
static void test_checks(void)
{
	static const char *const bad[] = {
		"INSERT INTO step (step, pid, tid, begin_ns, end_ns, wall_ns, complete) VALUES (1, 1, 1, 10, 5, -5, 1)",
		"INSERT INTO step (step, pid, tid, begin_ns, cpu_ns, complete) VALUES (2, 1, 1, 10, -1, 0)",
		"UPDATE step SET page_faults = -9223372036854775808 WHERE step = 0",
		"UPDATE step SET model_flops = -1 WHERE step = 0",
		"INSERT INTO phase (id, name, pid, tid, depth, begin_ns, wall_ns, complete) VALUES (1, 'p', 1, 1, 0, 0, -1, 1)",
		"UPDATE phase SET ctx_switches = -1 WHERE id = 0",
	};
	sqlite3 *db;
	char err[512];

	CHECK_EQ_INT(db_create(path("checks.sqlite"), &db, NULL, 0, err, sizeof(err)), 0);
	CHECK_EQ_INT(db_exec(db, "INSERT INTO step (step, pid, tid, begin_ns, complete) VALUES (0, 1, 1, 10, 0);"
			     "INSERT INTO phase (id, name, pid, tid, depth, begin_ns, complete) VALUES (0, 'p', 1, 1, 0, 0, 0)",
			     err, sizeof(err)), 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CHECK(db_exec(db, bad[i], err, sizeof(err)) == -EIO);
		CHECK(strstr(err, "CHECK constraint failed") != NULL);
	}
	CHECK_EQ_INT(db_exec(db, "UPDATE step SET end_ns = 20, wall_ns = 10, cpu_ns = NULL, complete = 1 WHERE step = 0",
			     err, sizeof(err)), 0);
	sqlite3_close(db);
}

static void test_refusals(void)
{
	sqlite3 *db = NULL;
	char err[512];
	char junk[8192];

	CHECK_EQ_INT(db_open_readonly(path("missing.sqlite"), &db, err, sizeof(err)), -ENOENT);
	CHECK(strstr(err, "no such file") != NULL);
	write_file(path("empty"), "", 0);
	CHECK_EQ_INT(db_open_readonly(path("empty"), &db, err, sizeof(err)), -EPROTO);
	CHECK(strstr(err, "empty") != NULL);
	for (size_t i = 0; i < sizeof(junk); i++)
		junk[i] = (char)(i * 7 + 3);
	write_file(path("random"), junk, sizeof(junk));
	CHECK_EQ_INT(db_open_readonly(path("random"), &db, err, sizeof(err)), -EPROTO);
	CHECK(strstr(err, "not an SQLite database") != NULL);

	sqlite3 *other;
	sqlite3_open(path("other.sqlite"), &other);
	sqlite3_exec(other, "CREATE TABLE t(x)", NULL, NULL, NULL);
	sqlite3_close(other);
	CHECK_EQ_INT(db_open_readonly(path("other.sqlite"), &db, err, sizeof(err)), -EPROTO);
	CHECK(strstr(err, "not one written by mfu-record") != NULL);

	sqlite3_open(path("newer.sqlite"), &other);
	sqlite3_exec(other, "CREATE TABLE run(id); PRAGMA user_version = 999", NULL, NULL, NULL);
	sqlite3_close(other);
	CHECK_EQ_INT(db_open_readonly(path("newer.sqlite"), &db, err, sizeof(err)), -ENOTSUP);
	CHECK(strstr(err, "newer") != NULL);
	CHECK(db == NULL);
	CHECK_EQ_INT(db_open_readonly(dir, &db, err, sizeof(err)), -EISDIR);
}

static void test_symlink(void)
{
	sqlite3 *db;
	char err[512];
	struct stat st;

	write_file(path("victim"), "keep", 4);
	CHECK_EQ_INT(symlink(path("victim"), path("link.sqlite")), 0);
	CHECK_EQ_INT(db_create(path("link.sqlite"), &db, NULL, 0, err, sizeof(err)), 0);
	sqlite3_close(db);
	CHECK_EQ_INT(stat(path("victim"), &st), 0);
	CHECK_EQ_INT(st.st_size, 4); /* the planted link's target is untouched */
	CHECK_EQ_INT(lstat(path("link.sqlite.old"), &st), 0);
	CHECK(S_ISLNK(st.st_mode));
	CHECK_EQ_INT(db_create(dir, &db, NULL, 0, err, sizeof(err)), -EISDIR);
}

/* Stale side files that are links (issue 22): refused with one line naming
 * the link, before anything is made or moved; the links stay as they were. */
static void test_side_file_links(void)
{
	static const char *const sfx[] = { "-wal", "-shm", "-journal" };
	sqlite3 *db = NULL;
	char err[512], name[64], side[64];
	struct stat st;

	write_file(path("victim2"), "keep", 4);
	for (size_t i = 0; i < sizeof(sfx) / sizeof(sfx[0]); i++) {
		for (int existing = 0; existing < 2; existing++) {
			snprintf(name, sizeof(name), "side%zu%d.sqlite", i, existing);
			snprintf(side, sizeof(side), "%s%s", name, sfx[i]);
			if (existing)
				write_file(path(name), "old", 3);
			CHECK_EQ_INT(symlink(path("victim2"), path(side)), 0);
			int before = count_files();
			CHECK_EQ_INT(db_create(path(name), &db, NULL, 0, err, sizeof(err)), -ELOOP);
			CHECK(db == NULL);
			CHECK(strstr(err, side) != NULL && strstr(err, "symbolic link") != NULL);
			CHECK(strchr(err, '\n') == NULL);
			CHECK_EQ_INT(count_files(), before); /* nothing made, nothing moved */
			CHECK_EQ_INT(lstat(path(name), &st), existing ? 0 : -1);
			CHECK_EQ_INT(stat(path("victim2"), &st), 0);
			CHECK_EQ_INT(st.st_size, 4);
			CHECK_EQ_INT(db_check_side_files(path(name), err, sizeof(err)), -ELOOP);
			unlink(path(side));
			CHECK_EQ_INT(db_check_side_files(path(name), err, sizeof(err)), 0);
		}
	}
}

struct reader {
	sqlite3 *db;
	int release_fd; /* the reader lets go when this becomes readable */
};

static void *hold_then_release(void *arg)
{
	struct reader *r = arg;
	char c;
	if (read(r->release_fd, &c, 1) != 1)
		perror("read");
	/* most likely after the finish's first try */
	usleep(200000);
	sqlite3_exec(r->db, "COMMIT", NULL, NULL, NULL);
	sqlite3_close(r->db);
	r->db = NULL;
	return NULL;
}

/* A reader holds the file (an open read transaction) when the recorder
 * finishes: leaving WAL mode waits for it (SQLite would fail at once, the
 * busy handler notwithstanding) and succeeds once it goes away; a reader that
 * never does makes db_finish say -EBUSY, the file complete in WAL mode. */
static void test_finish_waits_for_a_reader(void)
{
	struct reader r = { 0 };
	sqlite3 *db, *ro;
	sqlite3_stmt *st;
	pthread_t t;
	char err[512];
	int fds[2];
	struct stat sb;

	CHECK_EQ_INT(db_create(path("busy.sqlite"), &db, NULL, 0, err, sizeof(err)), 0);
	CHECK_EQ_INT(db_exec(db, "INSERT INTO run (id, mfu_version, command, start_unix_ns, start_ns, dtype, state) "
			     "VALUES (1, 'x', '[]', 0, 0, 'fp32', 'complete')", err, sizeof(err)), 0);
	CHECK_EQ_INT(sqlite3_open_v2(path("busy.sqlite"), &r.db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	CHECK_EQ_INT(sqlite3_exec(r.db, "BEGIN; SELECT count(*) FROM run", NULL, NULL, NULL), SQLITE_OK);
	CHECK_EQ_INT(pipe(fds), 0);
	r.release_fd = fds[0];
	CHECK_EQ_INT(pthread_create(&t, NULL, hold_then_release, &r), 0);
	/* the reader still holds the file when the finish starts, and lets
	 * go while it waits */
	CHECK_EQ_INT(sqlite3_exec(db, "SELECT 1", NULL, NULL, NULL), SQLITE_OK);
	CHECK_EQ_INT(write(fds[1], "x", 1), 1);
	CHECK_EQ_INT(db_finish(db, err, sizeof(err)), 0);
	pthread_join(t, NULL);
	sqlite3_close(db);
	CHECK(stat(path("busy.sqlite-wal"), &sb) != 0);
	CHECK_EQ_INT(sqlite3_open_v2(path("busy.sqlite"), &ro, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	CHECK_EQ_INT(sqlite3_prepare_v2(ro, "PRAGMA journal_mode", -1, &st, NULL), SQLITE_OK);
	CHECK_EQ_INT(sqlite3_step(st), SQLITE_ROW);
	CHECK_STR((const char *)sqlite3_column_text(st, 0), "delete");
	sqlite3_finalize(st);
	sqlite3_close(ro);
	close(fds[0]);
	close(fds[1]);

	/* one that never lets go: -EBUSY after the timeout, still WAL */
	CHECK_EQ_INT(db_create(path("held.sqlite"), &db, NULL, 0, err, sizeof(err)), 0);
	CHECK_EQ_INT(sqlite3_open_v2(path("held.sqlite"), &ro, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	CHECK_EQ_INT(sqlite3_exec(ro, "BEGIN; SELECT count(*) FROM run", NULL, NULL, NULL), SQLITE_OK);
	CHECK_EQ_INT(db_finish(db, err, sizeof(err)), -EBUSY);
	CHECK(strstr(err, "locked") != NULL);
	sqlite3_close(ro);
	sqlite3_close(db);
}

/* Each of the three ways to rename without replacing (the file systems
 * without RENAME_NOREPLACE, or without hard links, take the later ones):
 * the file moves when the name is free, and nothing moves or is lost when
 * it is taken. */
static void test_rename_noreplace(void)
{
	static const int how[] = { DB_RENAME_ANY, DB_RENAME_LINK, DB_RENAME_CHECK };
	struct stat st;

	for (size_t i = 0; i < sizeof(how) / sizeof(how[0]); i++) {
		write_file(path("mv.a"), "aa", 2);
		unlink(path("mv.b"));
		CHECK_EQ_INT(db_rename_noreplace(path("mv.a"), path("mv.b"), how[i]), 0);
		CHECK(stat(path("mv.a"), &st) != 0);
		CHECK_EQ_INT(stat(path("mv.b"), &st), 0);
		CHECK_EQ_INT(st.st_size, 2);
		write_file(path("mv.a"), "new", 3);
		errno = 0;
		CHECK_EQ_INT(db_rename_noreplace(path("mv.a"), path("mv.b"), how[i]), -1);
		CHECK_EQ_INT(errno, EEXIST);
		CHECK_EQ_INT(stat(path("mv.a"), &st), 0);
		CHECK_EQ_INT(st.st_size, 3);
		CHECK_EQ_INT(stat(path("mv.b"), &st), 0);
		CHECK_EQ_INT(st.st_size, 2);
		/* a missing source is an error, not a success */
		unlink(path("mv.a"));
		unlink(path("mv.b"));
		CHECK_EQ_INT(db_rename_noreplace(path("mv.a"), path("mv.b"), how[i]), -1);
		CHECK_EQ_INT(errno, ENOENT);
	}
}

int main(void)
{
	if (!mkdtemp(dir))
		return 1;
	test_create_and_open();
	test_rename_noreplace();
	test_checks();
	test_refusals();
	test_symlink();
	test_side_file_links();
	test_finish_waits_for_a_reader();
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		return 1;
	return check_status();
}
