/*
 * The checkpointer: a thread that copies the run database's write-ahead
 * log into the database file every few seconds, through a connection of
 * its own, so that the file alone (a copy without its -wal, after the
 * recorder was killed) holds all but the last seconds, and the recorder's
 * loop never waits for the copy and its fsync.
 */
#ifndef MFU_RECORD_CHECKPOINTER_H
#define MFU_RECORD_CHECKPOINTER_H

#include <stdint.h>

struct checkpointer;

/* Start checkpointing @path every @interval_ns. Returns 0 or -errno. */
int checkpointer_start(struct checkpointer **out, const char *path, uint64_t interval_ns);
/* Stop the thread (at most one checkpoint's time) and close its
 * connection. Accepts NULL. */
void checkpointer_stop(struct checkpointer *c);

#endif
