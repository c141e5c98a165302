/*
 * The perf_event_open(2) system call, in one place (as libperf's evsel):
 * every counter, sampling ring, uncore event and uprobe of mfu-record is
 * opened here, close-on-exec, with the error captured as -errno.
 */
#ifndef MFU_PERF_EVENT_H
#define MFU_PERF_EVENT_H

#include <linux/perf_event.h>
#include <sys/types.h>

/* Open @attr on task @pid (-1: every task) and CPU @cpu (-1: any), in
 * @group_fd's group (-1: a new one). Returns the fd or -errno. */
int perf_event_open_fd(struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd);

/* /proc/sys/kernel/perf_event_paranoid (or @path), or INT_MIN when it
 * cannot be read. */
int perf_event_paranoid(const char *path);

#endif
