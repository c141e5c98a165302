/* The checkpointer thread: WAL -> database file, off the recorder's loop. */
#include "checkpointer.h"
#include "asuser.h"
#include "db.h"

#include <errno.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <time.h>

struct checkpointer {
	sqlite3 *db;
	uint64_t interval_ns;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	int stop;
};

static void *run(void *arg)
{
	struct checkpointer *c = arg;
	struct timespec until;
	struct asuser_saved sv;

	/* This thread touches nothing but the output, which is the user's:
	 * the -wal file its connection opens on first use is opened as them
	 * (asuser.h; per thread). Failing that, no checkpoints: the rows stay
	 * safe in the -wal. */
	if (asuser_enter(asuser_owner(), &sv) != 0)
		return NULL;
	pthread_mutex_lock(&c->lock);
	while (!c->stop) {
		clock_gettime(CLOCK_MONOTONIC, &until);
		until.tv_sec += (time_t)(c->interval_ns / 1000000000ull);
		until.tv_nsec += (long)(c->interval_ns % 1000000000ull);
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		while (!c->stop && pthread_cond_timedwait(&c->wake, &c->lock, &until) != ETIMEDOUT)
			;
		if (c->stop)
			break;
		pthread_mutex_unlock(&c->lock);
		/* A connection opens its file lazily and learns it is in WAL
		 * mode only by reading it: before that a checkpoint does nothing. */
		sqlite3_exec(c->db, "SELECT count(*) FROM sqlite_master", NULL, NULL, NULL);
		/* Passive: copies what the writer committed and no reader still
		 * needs; never waits for the writer or a live mfu-report. A
		 * failure (busy, disk full) is retried next time: the rows are
		 * safe in the -wal meanwhile. */
		sqlite3_wal_checkpoint_v2(c->db, NULL, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
		pthread_mutex_lock(&c->lock);
	}
	pthread_mutex_unlock(&c->lock);
	asuser_leave(&sv);
	return NULL;
}

int checkpointer_start(struct checkpointer **out, const char *path, uint64_t interval_ns)
{
	struct checkpointer *c;
	pthread_condattr_t ca;
	int err;

	*out = NULL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->interval_ns = interval_ns;
	struct asuser_saved sv;
	err = asuser_enter(asuser_owner(), &sv);
	if (err) {
		free(c);
		return err;
	}
	err = sqlite3_open_v2(path, &c->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL);
	asuser_leave(&sv);
	if (err != SQLITE_OK) {
		sqlite3_close(c->db);
		free(c);
		return -EIO;
	}
	sqlite3_busy_timeout(c->db, DB_BUSY_TIMEOUT_MS);
	/* No fsync of the database file at each checkpoint: the copy is for a
	 * recorder killed (the page cache keeps it), not for a power cut, and a
	 * flush every 2 s would stall the disk under the writer's commits. */
	sqlite3_exec(c->db, "PRAGMA synchronous = OFF", NULL, NULL, NULL);
	pthread_mutex_init(&c->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&c->wake, &ca);
	pthread_condattr_destroy(&ca);
	err = pthread_create(&c->thread, NULL, run, c);
	if (err) {
		pthread_cond_destroy(&c->wake);
		pthread_mutex_destroy(&c->lock);
		sqlite3_close(c->db);
		free(c);
		return -err;
	}
	*out = c;
	return 0;
}

void checkpointer_stop(struct checkpointer *c)
{
	if (!c)
		return;
	pthread_mutex_lock(&c->lock);
	c->stop = 1;
	pthread_cond_signal(&c->wake);
	pthread_mutex_unlock(&c->lock);
	pthread_join(c->thread, NULL);
	pthread_cond_destroy(&c->wake);
	pthread_mutex_destroy(&c->lock);
	sqlite3_close(c->db);
	free(c);
}
