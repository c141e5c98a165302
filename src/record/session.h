/*
 * A recording in stages: one struct session owns what a recording holds
 * (options, machine, counter plan, target, rings, database, readers), and
 * each stage is a function. A stage returns -1 to go on, or the exit status
 * mfu-record ends with; session_end() then frees whatever exists (it takes
 * a session in any state) and, after a complete recording, prints the
 * summary.
 *
 *   session_plan    options -> what to open (counters, probes, the process
 *                   to join); nothing is created yet
 *   session_start   database, marker ring, launch or attach, readers, go
 *   session_run     the event loop
 *   session_finish  last records, derivations, notes, the run row
 */
#ifndef MFU_RECORD_SESSION_H
#define MFU_RECORD_SESSION_H

#include "options.h"

struct session;

/* A session for the options @o (copied), or NULL when out of memory. */
struct session *session_new(const struct options *o);

int session_plan(struct session *s);
int session_start(struct session *s);
int session_run(struct session *s);
int session_finish(struct session *s);

/* Tear down @s (NULL: out of memory, 125) and return the exit status: @rc
 * when a stage returned one (>= 0), else the session's own (the target's
 * exit status, 125 for a failure of mfu-record). */
int session_end(struct session *s, int rc);

#endif
