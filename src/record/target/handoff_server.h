/*
 * The recorder's side of the handoff (src/common/handoff.h): a thread that
 * answers, on an abstract unix socket named in the target's environment,
 * the processes of the target that lost mfu-record's descriptors (a
 * launcher closed them or reused their numbers), with the marker ring, the
 * counter group leaders and the counting region again (SCM_RIGHTS).
 *
 * It serves only the target's own: the peer's pid (SO_PEERCRED) must be the
 * launched process or one of its descendants (/proc ancestry), and its
 * user the target's (any, when mfu-record runs as root and the target too).
 * It remembers who asked, what they had found and what it did, for the
 * recording's notes.
 */
#ifndef MFU_HANDOFF_SERVER_H
#define MFU_HANDOFF_SERVER_H

#include <stddef.h>
#include <sys/types.h>

#include "marker_ring.h"

struct handoff_server;

/* Listen on a new abstract socket with a random name. Returns 0 or -errno. */
int handoff_server_open(struct handoff_server **out);

/* Its name for MFU_RECORD_SOCK ("@..."). */
const char *handoff_server_name(const struct handoff_server *h);

/* What to hand out, and to whom: descendants of @root (itself included)
 * running as @uid, or as anyone with @any_uid. @group_fds are the
 * recorder's copies of the leaders of the groups that have one in
 * MFU_GROUP_FD (in order); @lf_fd may be -1. The fds stay the caller's and
 * must stay open until handoff_server_stop(). Then start answering.
 * Returns 0 or -errno. */
int handoff_server_start(struct handoff_server *h, pid_t root, uid_t uid, int any_uid, int ring_fd,
			 const int *group_fds, int ngroups, int lf_fd);

/* Stop answering (joins the thread). NULL is fine. */
void handoff_server_stop(struct handoff_server *h);

/* What happened, for the notes: the processes that asked and were served
 * (*@served) or refused (*@refused); one sentence for each kind into
 * @served_note and @refused_note ("" when none). */
void handoff_server_report(struct handoff_server *h, unsigned *served, unsigned *refused, char *served_note,
			   size_t slen, char *refused_note, size_t rlen);

/* Stop, close, free. NULL is fine. */
void handoff_server_free(struct handoff_server *h);

#endif
