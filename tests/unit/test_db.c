/* Creating a run database (schema, .old, no symlink following) and the
 * read-only open's refusals. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "db.h"

static char dir[] = "/tmp/mfu-test-db-XXXXXX";

static const char *path(const char *name)
{
	static char buf[4][256];
	static int k;
	k = (k + 1) % 4;
	snprintf(buf[k], sizeof(buf[k]), "%s/%s", dir, name);
	return buf[k];
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
	CHECK_EQ_INT(db_create(path("run.sqlite"), &db, err, sizeof(err)), 0);
	CHECK_EQ_INT(stat(path("run.sqlite.old"), &st), 0);
	CHECK_EQ_INT(st.st_size, 3);
	CHECK_EQ_INT(db_exec(db, "INSERT INTO run (id, mfu_version, command, start_unix_ns, start_ns, dtype, state) "
			     "VALUES (1, 'x', '[]', 0, 0, 'fp32', 'complete')", err, sizeof(err)), 0);
	CHECK_EQ_INT(db_finish(db, err, sizeof(err)), 0);
	sqlite3_close(db);

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

	CHECK_EQ_INT(db_create(path("checks.sqlite"), &db, err, sizeof(err)), 0);
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
	CHECK_EQ_INT(db_create(path("link.sqlite"), &db, err, sizeof(err)), 0);
	sqlite3_close(db);
	CHECK_EQ_INT(stat(path("victim"), &st), 0);
	CHECK_EQ_INT(st.st_size, 4); /* the planted link's target is untouched */
	CHECK_EQ_INT(lstat(path("link.sqlite.old"), &st), 0);
	CHECK(S_ISLNK(st.st_mode));
	CHECK_EQ_INT(db_create(dir, &db, err, sizeof(err)), -EISDIR);
}

int main(void)
{
	if (!mkdtemp(dir))
		return 1;
	test_create_and_open();
	test_checks();
	test_refusals();
	test_symlink();
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		return 1;
	return check_status();
}
