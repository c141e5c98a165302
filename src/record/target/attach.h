/*
 * Attach: joining a process that is already running (mfu-record -p PID).
 *
 * A launched target gets its counter groups before its first instruction,
 * inherited by every thread it creates. A running process already has its
 * threads, and a counting event covers one thread and its descendants: so
 * the groups are opened on every thread of the process (with inherit, for
 * the threads they create later), found in /proc/PID/task until no new one
 * appears, and a reading is the sum over them. The recorder never stops or
 * signals the process: closing the events detaches (uprobes are removed and
 * USDT semaphores drop back), and the process goes on.
 */
#ifndef MFU_ATTACH_H
#define MFU_ATTACH_H

#include <stddef.h>
#include <sys/types.h>

#include "record/counters/counters.h"
#include "record/counters/intervals.h"

struct attach;

/* Open @cs's counters on every thread of @pid. @cs gets the first thread's
 * fds and the readings' layout (counters_open_task). Returns 0; -ESRCH (no
 * such process), -EPERM / -EACCES (not allowed: @why says what to do),
 * -EINVAL (@pid is mfu-record itself), other -errno; @why set. */
int attach_open(struct attach **out, pid_t pid, struct counters *cs, char *why, size_t whylen);

/* Whether user @uid may join @pid as perf lets a user join one: when the
 * process's real, effective, saved and filesystem uids are all @uid (a
 * process that changed its ids, setuid programs among them, is not its
 * user's to watch). Returns 0; -EPERM with @why naming the owner; -ESRCH
 * when it is gone; -errno when /proc cannot be read. mfu-record under sudo
 * asks this for the user who ran sudo. */
int attach_owned_by(pid_t pid, uid_t uid, char *why, size_t whylen);

/* The threads found, the first (@pid's main thread when it lives) first.
 * The array belongs to @a. */
const pid_t *attach_tids(const struct attach *a, size_t *n);

/* Add each thread's groups as a source of the counter readings. */
int attach_add_sources(const struct attach *a, struct intervals *iv);

/* Take every thread's groups now as the start of what attach_read()
 * sums: the counters count from attach_open(), before the run starts. */
void attach_mark(struct attach *a, const struct counters *cs);

/* The sum of every thread's groups now, less its reading at attach_mark()
 * (if any), laid out as a marker record's readings (the whole-run
 * totals). A thread whose group cannot be read now (gone) is left out. */
void attach_read(const struct attach *a, const struct counters *cs, struct counter_reading *r);

/* A pollable fd that becomes readable when the process exits (pidfd), or
 * -1 on kernels without pidfd_open (then attach_alive() must be asked). */
int attach_pidfd(const struct attach *a);
int attach_alive(const struct attach *a);

/* The process's command line as a JSON array (malloc'd), for run.command;
 * NULL when it cannot be read (a zombie, a kernel thread). */
char *attach_command_json(pid_t pid);

/* Close every thread's events but the first's (in @cs, the caller's).
 * NULL is fine. */
void attach_close(struct attach *a);

/*
 * The process's own step and phase markers (attach_markers.c), when it uses
 * libmfu: libmfu made an attach page (attach_page.h), a memfd the recorder
 * finds among the process's descriptors (or, as root, its mappings), claims,
 * makes a marker ring in, and switches on. From the next marker call on,
 * every thread's boundaries go into that ring with their times; they carry
 * no counter readings (MRING_F_UNREAD), their counts are interpolated from
 * the recorder's readings of the threads. The memory is the process's: the
 * recorder treats all of it as hostile, and detaching switches the markers
 * off, releases the page and frees the ring's pages.
 */
struct attach_markers;

/* Find, claim and prepare @pid's attach page, and consume its new ring
 * through @c (the markers are still off). Returns 0, or -errno with @why
 * saying in one sentence why the process's markers cannot be recorded:
 * -ENOENT (no libmfu in it, an older one, no page), -EBUSY (another
 * mfu-record has them), -EACCES, -EPROTO. */
int attach_markers_open(struct attach_markers **out, pid_t pid, struct mring_consumer *c, char *why,
			size_t whylen);
/* Switch the markers on: their next call writes into the ring. */
void attach_markers_on(struct attach_markers *am);
/* Switch them off, and wait the few ms a marker that saw them on needs to
 * finish its record. NULL is fine. */
void attach_markers_off(struct attach_markers *am);
/* What libmfu did with this ring: 1 took it (a marker was called since it
 * was switched on), 0 not yet, -1 refused it. */
int attach_markers_state(const struct attach_markers *am);
/* libmfu's version as its page says it (printable), into @buf. */
const char *attach_markers_lib(const struct attach_markers *am, char *buf, size_t len);
/* Off, release the page for another recorder, free the ring's pages in
 * the process, unmap. NULL is fine. */
void attach_markers_close(struct attach_markers *am);

#endif
