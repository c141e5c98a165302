/*
 * The handoff: how a process of a launched target gets mfu-record's
 * descriptors back when something between mfu-record and it (mpirun, a
 * job launcher, a shell's `exec 7>&-`) closed them, or reused their
 * numbers for other files.
 *
 * mfu-record puts, next to the fd numbers in the environment, what each
 * one is (the ring's and the counting region's memfd "DEV:INO", each
 * counter group leader's perf event id) and the name of an abstract
 * unix socket it listens on (MFU_RECORD_SOCK). libmfu and the counting
 * library check the numbers they inherit against those identities; when
 * one is not what it should be they connect, say what they found, and
 * receive the descriptors over the socket (SCM_RIGHTS). The recorder hands
 * them only to its own target's descendants of the target's user
 * (SO_PEERCRED, /proc ancestry), and says in the recording who asked and
 * why. A process that cannot reach the socket (another network namespace)
 * writes nothing, and the recorder says what it can.
 *
 * One request and one reply per connection, SOCK_SEQPACKET; the reply
 * carries the descriptors in a fixed order: the ring, the group leaders
 * (the numeric items of MFU_GROUP_FD, in order), the counting region.
 */
#ifndef MFU_HANDOFF_H
#define MFU_HANDOFF_H

#include <stddef.h>
#include <stdint.h>

#include "marker_ring.h"

#define MFU_ENV_RECORD_SOCK "MFU_RECORD_SOCK" /* "@NAME": an abstract socket */
#define MFU_HANDOFF_MAGIC 0x66666f64U           /* "doff" */
#define MFU_HANDOFF_VERSION 1

/* what a request asks for (and a reply holds) */
#define MFU_HANDOFF_RING 0x1      /* the marker ring and the counter group leaders */
#define MFU_HANDOFF_LIBFLOPS 0x2  /* the library-call counting region */

#define MFU_HANDOFF_TEXT 240

struct mfu_handoff_msg {
	uint32_t magic;
	uint32_t version;
	uint32_t what;         /* request: wanted; reply: included */
	int32_t status;        /* reply: 0, or -errno: refused (text says why) */
	int32_t pid;           /* request: the asker (checked against SO_PEERCRED) */
	uint32_t nfds;         /* reply: descriptors attached */
	uint32_t ngroups;      /* reply: of them group leaders */
	uint32_t reserved;
	char text[MFU_HANDOFF_TEXT]; /* request: what was wrong; reply: why refused */
};

/* Client (libmfu, the counting library): ask the recorder for @what,
 * telling it @why (what was wrong with the inherited descriptors). On
 * success the received descriptors (close-on-exec) are in @fds, in the
 * reply's order, and their count is returned; *@ngroups says how many are
 * group leaders. -errno when there is no socket to ask, it cannot be
 * reached within half a second, or the recorder refused. Never prints. */
int mfu_handoff_request(uint32_t what, const char *why, int *fds, int maxfds, int *ngroups);

/* Whether @fd is the file whose identity @id ("DEV:INO", from the
 * environment) names. 1 yes, 0 no (another file, or closed), -1 when @id
 * is not one. */
int mfu_fd_is(int fd, const char *id);

/* Describe @fd for a message: "closed", "/dev/null", "a pipe"... into @buf. */
void mfu_fd_describe(int fd, char *buf, size_t len);

#endif
