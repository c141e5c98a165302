/* The run database: creating it (mfu-record) and opening it (mfu-report). */
#ifndef MFU_DB_H
#define MFU_DB_H

#include <sqlite3.h>
#include <stddef.h>

/* The newest schema version this build knows (the highest schema/NNN.sql). */
int db_schema_version(void);

/* Create a new database at @path with the current schema, in WAL mode.
 * An existing file at @path is first renamed to "@path.old" (like perf);
 * the new file is created with O_EXCL|O_NOFOLLOW, so a planted symlink is not
 * followed. Returns 0 or -errno / -EPROTO with a message in @err. */
int db_create(const char *path, sqlite3 **out, char *err, size_t errlen);

/* Finish a database made by db_create(): run the deferred part of the
 * schema (after the "-- @deferred" line: indexes that would slow down
 * ingest) and switch to a rollback journal, so that readers of the finished
 * file need no -wal/-shm files and create none. Returns 0 or -EIO. */
int db_finish(sqlite3 *db, char *err, size_t errlen);

/* Open an existing mfu database read-only. Fails, creating nothing, when the
 * file is missing, is not SQLite, is not an mfu database, or has a schema
 * newer than this build; @err gets one line saying which. Returns 0 or
 * -errno (-ENOENT, -ENOTSUP for a newer schema, -EPROTO otherwise). */
int db_open_readonly(const char *path, sqlite3 **out, char *err, size_t errlen);

/* Run @sql (several statements) and report a failure in @err. */
int db_exec(sqlite3 *db, const char *sql, char *err, size_t errlen);

#endif
