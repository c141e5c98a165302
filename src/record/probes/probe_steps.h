/*
 * Probe steps: steps and phases of a program without markers, taken from
 * uprobes on its functions and USDT probes (--step SPEC, --phase NAME=SPEC).
 * (Python functions by name, py:MODULE.FUNC, are parsed here but taken by
 * the Python hook, py_hook.h: CPython 3.11's function__entry probe does not
 * fire for calls from Python code, gh-98894.)
 *
 * It resolves the points (probes.h) in the program about to run, in a
 * running process, and in every library mapped later (dlopen); opens one
 * uprobe per site and followed thread (uprobes cannot be inherited, so new
 * threads are added as the sampler reports them); drains the per-thread
 * rings, orders the hits by time and turns them into boundary records that
 * the markers module pairs like the marker library's, flagged as probe
 * boundaries (their counts are interpolated later, intervals.h). At the end
 * it stores one row per point in the probe table. docs/probes.md.
 */
#ifndef MFU_PROBE_STEPS_H
#define MFU_PROBE_STEPS_H

#include <sqlite3.h>
#include <stddef.h>
#include <sys/types.h>

#include "marker_ring.h"
#include "probes.h"

#define PROBE_STEPS_MAX_REQUESTS 17 /* one --step and 16 --phase */

/* One --step or --phase option. */
struct probe_request {
	int phase;                     /* 0: --step, 1: --phase NAME=SPEC */
	char name[MRING_NAME_MAX];     /* the phase name */
	char text[PROBE_OBJECT_MAX];   /* SPEC as given */
	int python;                    /* py:[MODULE.]FUNC: taken by the Python hook */
	char py_name[512];             /* the dotted name after "py:" */
	struct probe_spec spec;        /* the parsed points (not for python) */
};

/* Parse a --step SPEC (@phase 0) or a --phase NAME=SPEC (@phase 1), SPEC as
 * in probes_parse_spec or py:[MODULE.]FUNC. Returns 0 or -EINVAL with one
 * line in @why. */
int probe_steps_parse(const char *arg, int phase, struct probe_request *out, char *why, size_t whylen);

/* Where the boundaries go (the markers module). */
struct probe_steps_sink {
	void *ctx;
	int (*boundary)(void *ctx, const struct mring_record *r);
	/* drop an open step (@name NULL) or phase @name of thread @tid that a
	 * sdt:P:N alone began at its last hit: the part after the last hit is
	 * not a step */
	void (*cancel)(void *ctx, pid_t pid, pid_t tid, const char *name);
};

struct probe_steps;

int probe_steps_new(struct probe_steps **out, const struct probe_request *req, int nreq,
		    const struct probe_steps_sink *sink);
void probe_steps_free(struct probe_steps *ps);

/* The file the kernel will run for @argv0: searched in PATH as execvp
 * does, and for a script its interpreter (#!, through /usr/bin/env too).
 * Returns 0 with @buf set, or -errno. */
int probe_steps_program(const char *argv0, char *buf, size_t len);

/* Resolve every point in @exe and the libraries it needs (a program about
 * to be executed). A point found nowhere is left pending, for libraries
 * loaded later, and said in @warn (may be "" on return). Returns 0, or
 * -errno with @why set (ambiguous name, an unreadable file...). */
int probe_steps_resolve_exe(struct probe_steps *ps, const char *exe, char *warn, size_t warnlen, char *why,
			    size_t whylen);

/* The same in the files a running process @pid maps. */
int probe_steps_resolve_pid(struct probe_steps *ps, pid_t pid, char *warn, size_t warnlen, char *why,
			    size_t whylen);

/* Thread @tid of process @pid appeared (or is the first): open every site
 * on it. Returns 0, or -errno with @why set (e.g. -EPERM: uprobes need
 * CAP_SYS_ADMIN); a thread that is already gone is not an error. */
int probe_steps_add_thread(struct probe_steps *ps, pid_t pid, pid_t tid, char *why, size_t whylen);

/* Thread @tid exited: its ring is drained and its events closed at the next
 * drain. */
void probe_steps_thread_exit(struct probe_steps *ps, pid_t tid);

/* Process @pid mapped executable file @path: resolve the points that may
 * be there and open the new sites on the process's threads. Errors are
 * kept in the probe rows, not returned. */
void probe_steps_on_map(struct probe_steps *ps, pid_t pid, const char *path);

/* Drain every thread's ring and pass the boundaries up to now (all of them
 * with @final) to the sink, in time order. Returns the number of hits
 * drained, or the sink's error. */
int probe_steps_drain(struct probe_steps *ps, int final);

/* Close every event (uprobes leave the target; USDT semaphores drop). */
void probe_steps_close(struct probe_steps *ps);

/* After the final drain: the open sdt-alone steps are dropped (sink
 * cancel), and one row per point goes into the probe table of @db.
 * Returns 0 or -errno with @why set. */
int probe_steps_finish(struct probe_steps *ps, sqlite3 *db, char *why, size_t whylen);

/* One row of the probe table (docs/schema.md); NULL strings are NULL. */
struct probe_row {
	const char *role, *name, *spec, *boundary, *point, *paths, *status, *detail;
	long long sites;
	unsigned long long hits;
};

/* Insert @r into @db's probe table. Returns 0 or -errno (-ENOSPC: disk
 * full) with @why set. */
int probe_steps_store_row(sqlite3 *db, const struct probe_row *r, char *why, size_t whylen);

/* Hits seen, and what the user should know ("" if nothing). */
unsigned long long probe_steps_hits(const struct probe_steps *ps);
const char *probe_steps_note(const struct probe_steps *ps);

#endif
