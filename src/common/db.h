/* The run database: creating it (mfu-record) and opening it (mfu-report). */
#ifndef MFU_DB_H
#define MFU_DB_H

#include <sqlite3.h>
#include <stddef.h>

/* The newest schema version this build knows (the highest schema/NNN.sql). */
int db_schema_version(void);

/* How long a connection that writes waits for another process that holds
 * the file (a reader's transaction, sqlite3's) before it fails with
 * SQLITE_BUSY. */
#define DB_BUSY_TIMEOUT_MS 10000

/* Refuse SQLite's side files of @path (@path-wal, -shm, -journal) that are
 * symbolic links: SQLite opens them with O_NOFOLLOW and would fail once
 * the database exists, a stub left behind. Returns 0 or -ELOOP (or
 * -ENAMETOOLONG) with one line in @err naming the link. */
int db_check_side_files(const char *path, char *err, size_t errlen);

/* Create a new database at @path with the current schema, in WAL mode,
 * with a busy timeout of DB_BUSY_TIMEOUT_MS. Side files that are symlinks
 * are refused first (db_check_side_files), before anything is made. An
 * existing file at @path is then renamed to "@path.old", or, when that
 * exists, to the first of "@path.old.2" ... "@path.old.<DB_KEEP_MAX>" that
 * does not (never over another file: unlike perf, a second recording does
 * not destroy the first one's .old); @kept gets that name ("" when nothing
 * was there). The new file is created with O_EXCL|O_NOFOLLOW, so a planted
 * symlink is not followed. On failure nothing made here is left (the old
 * file is put back). Returns 0 or -errno / -EPROTO with a message in @err
 * (-EEXIST when every kept name is taken). */
#define DB_KEEP_MAX 99

/* Rename @from to @to unless @to exists (then -1 with errno EEXIST);
 * -1 with errno on other failures. DB_RENAME_ANY: renameat2(RENAME_NOREPLACE),
 * or, where the file system or kernel lacks it (EINVAL, ENOSYS), link() and
 * unlink(), or, without hard links (EPERM, ENOTSUP), a check and rename().
 * DB_RENAME_LINK and DB_RENAME_CHECK start at the second and third way (for
 * tests: every file system here has the first). */
enum { DB_RENAME_ANY, DB_RENAME_LINK, DB_RENAME_CHECK };
int db_rename_noreplace(const char *from, const char *to, int how);
int db_create(const char *path, sqlite3 **out, char *kept, size_t keptlen, char *err, size_t errlen);

/* Finish a database made by db_create(): run the deferred part of the
 * schema (after the "-- @deferred" line: indexes that would slow down
 * ingest) and switch to a rollback journal, so that readers of the finished
 * file need no -wal/-shm files and create none. The switch waits (the busy
 * timeout) for readers to let go of the file. Returns 0 or -EIO, -EBUSY
 * when another process still held the file (the file is complete, in WAL
 * mode). */
int db_finish(sqlite3 *db, char *err, size_t errlen);

/* Open an existing mfu database read-only. Fails, creating nothing, when the
 * file is missing, is not SQLite, is not an mfu database, or has a schema
 * newer than this build; @err gets one line saying which. Returns 0 or
 * -errno (-ENOENT, -ENOTSUP for a newer schema, -EPROTO otherwise). */
int db_open_readonly(const char *path, sqlite3 **out, char *err, size_t errlen);

/* Run @sql (several statements) and report a failure in @err. */
int db_exec(sqlite3 *db, const char *sql, char *err, size_t errlen);

#endif
