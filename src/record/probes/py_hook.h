/*
 * Python hook: steps and phases from Python functions by name (--step
 * py:NAME, --phase LABEL=py:NAME), for programs that cannot be edited.
 *
 * CPython 3.11's USDT probe function__entry does not fire for calls made
 * from Python code (gh-98894, fixed in 3.15), so uprobes cannot see a
 * Python function begin. Instead mfu-record runs the program with mfu's
 * hook directory (src/python/mfu_hook) first on PYTHONPATH: every Python
 * process imports it at startup as sitecustomize, finds the function at
 * its first call and marks its calls through mfu.py and libmfu, with the
 * markers' exact counter readings. This module prepares the environment
 * and, at the end, reads back what the hook did into the probe table.
 * docs/probes.md, "Python functions".
 */
#ifndef MFU_PY_HOOK_H
#define MFU_PY_HOOK_H

#include <sqlite3.h>
#include <stddef.h>
#include <sys/types.h>

#include "asuser.h"
#include "probe_steps.h"

struct py_hook;

/* Set this process's environment (inherited by the target) so that Python
 * programs load the hook for the python requests among @req. The status
 * file's directory (under $TMPDIR, else /tmp) is made, written, read and
 * removed as @owner (asuser.h), the user the target runs as (NULL or
 * inactive: as we are): it is theirs to write, and so theirs to fill with
 * links. @owner must outlive the hook. Returns 0 (with *out NULL when no
 * request is python), or -errno with @why set (the hook's files not
 * found...). */
int py_hook_setup(struct py_hook **out, const struct probe_request *req, int nreq,
		  const struct asuser *owner, char *why, size_t whylen);

/* Read what the hook did and store one probe row per python request. The
 * status file is read as the owner, never through a symlink, and only
 * when it is a regular file of theirs (else the note says it was
 * unreadable). @note gets what the user should know ("" if nothing).
 * Returns 0 or -errno with @why set (a database error). */
int py_hook_finish(struct py_hook *h, sqlite3 *db, char *note, size_t notelen, char *why, size_t whylen);

/* Remove the status file and free. NULL is fine. */
void py_hook_free(struct py_hook *h);

#endif
