/*
 * Running one of mfu's own programs from another and waiting for it:
 * mfu-record starts mfu-calibrate (a machine with no profile) and
 * mfu-report (the recap when a recording ends) this way.
 *
 * The child runs as the recording's user (asuser_become(), for good), with
 * no signal blocked whatever the caller blocks, and with its standard
 * output and error where the caller says.
 */
#ifndef MFU_CHILD_H
#define MFU_CHILD_H

#include "asuser.h"

#include <stddef.h>

/* Exit statuses of the child when it never reached the program: it could
 * not become the user (126) or not execute the program (127). The reason
 * is written on the child's standard error first, prefixed by @who. */
#define CHILD_CANNOT_BECOME 126
#define CHILD_CANNOT_EXEC 127

/* Run @argv (argv[0] is the program: a path, or a name looked up in PATH)
 * as @as (NULL or inactive: as this process is) and wait for it. The
 * child's standard output becomes @out_fd and its standard error @err_fd
 * (-1: keep this process's). @who prefixes the child's own messages.
 * Returns 0 with the wait status in @status, or -errno when the child
 * could not be started or waited for (with the reason in @why). */
int child_run(const char *const argv[], const struct asuser *as, int out_fd, int err_fd, const char *who,
	      int *status, char *why, size_t len);

/* @status (from child_run()) in words, for "@program @words": "exited
 * with status 2", "was killed by signal 9", "could not be executed". */
const char *child_status_text(int status, char *buf, size_t len);

#endif
