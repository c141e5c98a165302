#include "db.h"
#include "embedded.h"
#include "util.h"

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* SQLite 3.31 and later refuse a symlink at the database path itself. */
#ifdef SQLITE_OPEN_NOFOLLOW
#define DB_OPEN_NOFOLLOW SQLITE_OPEN_NOFOLLOW
#else
#define DB_OPEN_NOFOLLOW 0
#endif

const struct mfu_embedded *embedded_find(const struct mfu_embedded *files, const char *name)
{
	for (const struct mfu_embedded *f = files; f->name; f++)
		if (strcmp(f->name, name) == 0)
			return f;
	return NULL;
}

int db_schema_version(void)
{
	int v = 0;
	for (const struct mfu_embedded *f = mfu_schema_files; f->name; f++)
		v = atoi(f->name) > v ? atoi(f->name) : v; /* names are NNN.sql by construction */
	return v;
}

int db_exec(sqlite3 *db, const char *sql, char *err, size_t errlen)
{
	char *msg = NULL;
	if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK) {
		strbuf(err, errlen, "%s", msg ? msg : sqlite3_errmsg(db));
		sqlite3_free(msg);
		return -EIO;
	}
	return 0;
}

#define DEFERRED_MARK "-- @deferred"

/* Run the part of @text before the deferred mark (@deferred = 0) or after
 * it (@deferred = 1). */
static int exec_schema_part(sqlite3 *db, const char *text, int deferred, char *err, size_t errlen)
{
	const char *mark = strstr(text, DEFERRED_MARK);
	char *part;
	int rc;

	if (!mark)
		return deferred ? 0 : db_exec(db, text, err, errlen);
	if (deferred)
		return db_exec(db, mark, err, errlen);
	part = strndup(text, (size_t)(mark - text));
	if (!part)
		return -ENOMEM;
	rc = db_exec(db, part, err, errlen);
	free(part);
	return rc;
}

#define DB_RETRY_MS 50

/* PRAGMA journal_mode=DELETE: 0, -EBUSY (another connection holds the
 * file: still in WAL mode) or -EIO. */
static int journal_mode_delete(sqlite3 *db, char *err, size_t errlen)
{
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(db, "PRAGMA journal_mode=DELETE", -1, &st, NULL);
	int err_code;

	if (rc == SQLITE_OK)
		rc = sqlite3_step(st);
	err_code = sqlite3_errcode(db) & 0xff;
	if (rc == SQLITE_ROW) {
		const char *mode = (const char *)sqlite3_column_text(st, 0);
		/* an unchanged mode, without an error, is a busy file too */
		rc = mode && strcmp(mode, "delete") == 0 ? 0 : -EBUSY;
		if (rc)
			strbuf(err, errlen, "database is locked");
	} else {
		strbuf(err, errlen, "%s", sqlite3_errmsg(db));
		rc = err_code == SQLITE_BUSY || err_code == SQLITE_LOCKED ? -EBUSY : -EIO;
	}
	sqlite3_finalize(st);
	return rc;
}

int db_finish(sqlite3 *db, char *err, size_t errlen)
{
	int rc;

	for (const struct mfu_embedded *f = mfu_schema_files; f->name; f++) {
		rc = exec_schema_part(db, f->text, 1, err, errlen);
		if (rc)
			return rc;
	}
	/* Leaving WAL mode takes the file for itself, and SQLite does not
	 * call the busy handler for it: a reader's open transaction fails it
	 * at once, so wait here as the busy timeout would. */
	for (int waited_ms = 0;; waited_ms += DB_RETRY_MS) {
		rc = journal_mode_delete(db, err, errlen);
		if (rc != -EBUSY || waited_ms >= DB_BUSY_TIMEOUT_MS)
			return rc;
		nanosleep(&(struct timespec){ .tv_nsec = DB_RETRY_MS * 1000000L }, NULL);
	}
}

int db_check_side_files(const char *path, char *err, size_t errlen)
{
	static const char *const sfx[] = { "-wal", "-shm", "-journal" };
	char side[4096];
	struct stat st;

	for (size_t i = 0; i < ARRAY_SIZE(sfx); i++) {
		if (strbuf(side, sizeof(side), "%s%s", path, sfx[i])) {
			strbuf(err, errlen, "%s: path too long", path);
			return -ENAMETOOLONG;
		}
		if (lstat(side, &st) == 0 && S_ISLNK(st.st_mode)) {
			strbuf(err, errlen, "%s is a symbolic link: SQLite keeps a side file of %s there and "
			       "follows no link; remove it, or write to another file", side, path);
			return -ELOOP;
		}
	}
	return 0;
}

int db_rename_noreplace(const char *from, const char *to, int how)
{
	struct stat st;

	if (how == DB_RENAME_ANY) {
		if (renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE) == 0)
			return 0;
		/* EINVAL: the file system has no RENAME_NOREPLACE (some NFS,
		 * FUSE); ENOSYS: the kernel has no renameat2 (seccomp too) */
		if (errno != EINVAL && errno != ENOSYS)
			return -1;
	}
	if (how != DB_RENAME_CHECK) {
		/* link() never replaces an existing name either */
		if (link(from, to) == 0) {
			if (unlink(from) == 0)
				return 0;
			int e = errno;
			unlink(to);
			errno = e;
			return -1;
		}
		if (errno != EPERM && errno != ENOTSUP && errno != EOPNOTSUPP)
			return -1;
	}
	/* no hard links either (vfat, some FUSE): look, then rename; another
	 * process could take the name in between, which is the best such a
	 * file system allows */
	if (lstat(to, &st) == 0) {
		errno = EEXIST;
		return -1;
	}
	return rename(from, to);
}

/* Move the file at @path out of the way, to @path.old, else the first of
 * @path.old.2, .3 ... that does not exist: never over another file (an
 * earlier recording kept the same way). @kept gets the name. */
static int keep_old(const char *path, char *kept, size_t keptlen, char *err, size_t errlen)
{
	for (int n = 1; n <= DB_KEEP_MAX; n++) {
		int rc = n == 1 ? strbuf(kept, keptlen, "%s.old", path) : strbuf(kept, keptlen, "%s.old.%d", path, n);
		if (rc) {
			strbuf(err, errlen, "%s: path too long", path);
			return -ENAMETOOLONG;
		}
		if (db_rename_noreplace(path, kept, DB_RENAME_ANY) == 0)
			return 0;
		if (errno != EEXIST) {
			rc = -errno;
			strbuf(err, errlen, "cannot keep the existing %s as %s: %s", path, kept, strerror(-rc));
			return rc;
		}
	}
	strbuf(err, errlen, "%s exists, and so do %s.old and %s.old.2 to .old.%d (earlier recordings kept): "
	       "remove some, or write to another file", path, path, path, DB_KEEP_MAX);
	return -EEXIST;
}

int db_create(const char *path, sqlite3 **out, char *kept, size_t keptlen, char *err, size_t errlen)
{
	struct stat st;
	sqlite3 *db = NULL;
	char old[4096] = "";
	int fd, rc, moved = 0;

	*out = NULL;
	if (keptlen)
		kept[0] = '\0';
	/* before anything is moved or made: SQLite would refuse the link
	 * only once the file exists, and leave it behind */
	rc = db_check_side_files(path, err, errlen);
	if (rc)
		return rc;
	if (lstat(path, &st) == 0) {
		if (S_ISDIR(st.st_mode)) {
			strbuf(err, errlen, "%s is a directory", path);
			return -EISDIR;
		}
		rc = keep_old(path, old, sizeof(old), err, errlen);
		if (rc)
			return rc;
		moved = 1;
		/* SQLite's side files belong to the old database; drop them. */
		for (const char *sfx = "-wal"; sfx; sfx = strcmp(sfx, "-wal") == 0 ? "-shm" : NULL) {
			char side[4096];
			if (!strbuf(side, sizeof(side), "%s%s", path, sfx))
				unlink(side);
		}
	}
	/* O_EXCL|O_NOFOLLOW: never write through a symlink planted at @path. */
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0) {
		rc = -errno;
		strbuf(err, errlen, "cannot create %s: %s", path, strerror(-rc));
		goto put_back;
	}
	close(fd);

	/* NOMUTEX: one thread uses the connection (the recorder's loop, which
	 * inserts a row per step and phase as fast as a program marks them);
	 * a serialized one takes and drops its mutex in every bind and step,
	 * about 8% of the recorder's insert time (tests/bench/bench_drain). */
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | DB_OPEN_NOFOLLOW, NULL) !=
	    SQLITE_OK) {
		strbuf(err, errlen, "cannot open %s: %s", path, db ? sqlite3_errmsg(db) : "out of memory");
		rc = -EIO;
		goto fail;
	}
	/* a reader (mfu-report, sqlite3) holding the file must not fail a
	 * commit, or the finish, at once */
	sqlite3_busy_timeout(db, DB_BUSY_TIMEOUT_MS);
	rc = db_exec(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;", err, errlen);
	if (rc)
		goto fail;
	rc = db_exec(db, "BEGIN", err, errlen);
	if (rc)
		goto fail;
	for (const struct mfu_embedded *f = mfu_schema_files; f->name; f++) {
		rc = exec_schema_part(db, f->text, 0, err, errlen);
		if (rc) {
			char msg[512];
			strbuf(msg, sizeof(msg), "schema %s: %s", f->name, err);
			strbuf(err, errlen, "%s", msg);
			goto fail;
		}
	}
	rc = db_exec(db, "COMMIT", err, errlen);
	if (rc)
		goto fail;
	*out = db;
	if (moved && keptlen)
		strbuf(kept, keptlen, "%s", old);
	return 0;
fail:
	/* no half-made file under the name: the one made here goes */
	sqlite3_close(db);
	unlink(path);
put_back:
	if (moved)
		rename(old, path);
	return rc;
}

/* Whether PATH is a readable, non-empty file, before SQLite sees it. */
static int check_file(const char *path, char *err, size_t errlen)
{
	struct stat st;
	int rc;

	if (stat(path, &st) < 0) {
		rc = -errno;
		strbuf(err, errlen, "%s: %s", path, rc == -ENOENT ? "no such file (record one with mfu-record -o FILE -- COMMAND)" : strerror(-rc));
		return rc;
	}
	if (S_ISDIR(st.st_mode)) {
		strbuf(err, errlen, "%s: is a directory, not an mfu database", path);
		return -EISDIR;
	}
	if (access(path, R_OK) < 0) {
		rc = -errno;
		strbuf(err, errlen, "%s: %s", path, strerror(-rc));
		return rc;
	}
	if (st.st_size == 0) {
		strbuf(err, errlen, "%s: empty file, not an mfu database", path);
		return -EPROTO;
	}
	return 0;
}

/* A database left in WAL mode (its recorder was killed, or a copy of a live
 * one) needs -shm/-wal side files to be opened normally. When it has no -wal
 * file there is nothing to recover: it is opened immutable, so that reading
 * it creates nothing next to it. With a -wal file the side files exist
 * already and SQLite reads the WAL's content. */
static bool wal_without_wal_file(const char *path)
{
	unsigned char hdr[20] = { 0 };
	char wal[4096];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	int wal_mode = fd >= 0 && read(fd, hdr, sizeof(hdr)) == (ssize_t)sizeof(hdr) &&
		       memcmp(hdr, "SQLite format 3", 16) == 0 && hdr[18] == 2;

	if (fd >= 0)
		close(fd);
	return wal_mode && strbuf(wal, sizeof(wal), "%s-wal", path) == 0 && access(wal, F_OK) != 0;
}

/* "file:PATH?immutable=1" into URI (LEN bytes), or -ENAMETOOLONG. */
static int immutable_uri(const char *path, char *uri, size_t len)
{
	/* a URI path needs ?, # and % escaped; "//" would start an
	 * authority, so leading slashes collapse to one */
	const char *c = path;
	size_t k = (size_t)snprintf(uri, len, "file:");

	if (*c == '/')
		while (c[1] == '/')
			c++;
	for (; *c; c++) {
		if (k + 16 >= len)
			return -ENAMETOOLONG;
		if (*c == '?' || *c == '#' || *c == '%')
			k += (size_t)snprintf(uri + k, len - k, "%%%02X", (unsigned char)*c);
		else
			uri[k++] = *c;
	}
	uri[k] = '\0';
	strbuf(uri + k, len - k, "?immutable=1");
	return 0;
}

/* Opens PATH read-only (immutable when that is safe, above) into *DB, which
 * the caller closes even on failure. */
static int open_sqlite(const char *path, sqlite3 **db, char *err, size_t errlen)
{
	char uri[4200];
	bool immutable = wal_without_wal_file(path);

	if (immutable && immutable_uri(path, uri, sizeof(uri)) < 0) {
		strbuf(err, errlen, "%s: path too long", path);
		return -ENAMETOOLONG;
	}
	if (sqlite3_open_v2(immutable ? uri : path, db,
			    SQLITE_OPEN_READONLY | (immutable ? SQLITE_OPEN_URI : 0), NULL) != SQLITE_OK) {
		strbuf(err, errlen, "%s: cannot open: %s", path, *db ? sqlite3_errmsg(*db) : "out of memory");
		return -EIO;
	}
	return 0;
}

/* Whether DB is an mfu database of the schema version this mfu reads. */
static int check_schema(sqlite3 *db, const char *path, char *err, size_t errlen)
{
	sqlite3_stmt *st_ver = NULL;
	int rc = 0, version, has_run = 0;

	if (sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st_ver, NULL) != SQLITE_OK ||
	    sqlite3_step(st_ver) != SQLITE_ROW) {
		int code = sqlite3_errcode(db);
		strbuf(err, errlen, "%s: %s", path,
		       code == SQLITE_NOTADB ? "not an SQLite database, so not an mfu database"
		       : code == SQLITE_CORRUPT ? "the database is corrupt (truncated or damaged)"
						: sqlite3_errmsg(db));
		rc = -EPROTO;
		goto out;
	}
	version = sqlite3_column_int(st_ver, 0);
	sqlite3_finalize(st_ver);
	st_ver = NULL;
	if (sqlite3_prepare_v2(db, "SELECT 1 FROM sqlite_master WHERE type='table' AND name='run'", -1, &st_ver, NULL) == SQLITE_OK &&
	    sqlite3_step(st_ver) == SQLITE_ROW)
		has_run = 1;
	else if (sqlite3_errcode(db) == SQLITE_CORRUPT || sqlite3_errcode(db) == SQLITE_NOTADB) {
		strbuf(err, errlen, "%s: the database is corrupt (truncated or damaged)", path);
		rc = -EPROTO;
		goto out;
	}
	if (version == 0 || !has_run) {
		strbuf(err, errlen, "%s: an SQLite database, but not one written by mfu-record", path);
		rc = -EPROTO;
		goto out;
	}
	if (version < db_schema_version()) {
		strbuf(err, errlen, "%s: schema version %d is older than this mfu reads (%d); record it again with this mfu-record",
		       path, version, db_schema_version());
		rc = -ENOTSUP;
		goto out;
	}
	if (version > db_schema_version()) {
		strbuf(err, errlen, "%s: schema version %d is newer than this mfu (knows up to %d); use a newer mfu-report",
		       path, version, db_schema_version());
		rc = -ENOTSUP;
		goto out;
	}
out:
	sqlite3_finalize(st_ver);
	return rc;
}

int db_open_readonly(const char *path, sqlite3 **out, char *err, size_t errlen)
{
	sqlite3 *db = NULL;
	int rc;

	*out = NULL;
	rc = check_file(path, err, errlen);
	if (rc < 0)
		return rc;
	rc = open_sqlite(path, &db, err, errlen);
	if (rc == 0)
		rc = check_schema(db, path, err, errlen);
	if (rc < 0) {
		sqlite3_close(db);
		return rc;
	}
	*out = db;
	return 0;
}
