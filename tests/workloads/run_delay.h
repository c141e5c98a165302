/*
 * run_delay_ns(): how long the calling thread has waited for a CPU so far,
 * runnable but not running (ns): the second field of
 * /proc/thread-self/schedstat, the scheduler's run_delay. 0 where the
 * kernel does not keep it (no CONFIG_SCHED_INFO).
 *
 * The workloads read it next to their own clocks. A test that compares a
 * recorded time with the program's reading around it (which lies a few
 * microseconds outside the marker or probe) allows for exactly the time
 * the thread waited for a CPU between the reading and the marker: on a busy
 * machine a preemption lands there now and then, and it is not the
 * recorder's error. On an idle machine it is 0 and the check stands as it
 * is; an error of the recorder's own is not hidden unless it is smaller
 * than that wait.
 */
#ifndef MFU_WORKLOAD_RUN_DELAY_H
#define MFU_WORKLOAD_RUN_DELAY_H

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

static inline uint64_t run_delay_ns(void)
{
	/* one descriptor per thread, opened for that thread: a forked child
	 * inherits its parent's, which names the parent */
	static __thread int fd = -1;
	static __thread pid_t owner;
	char buf[128];
	unsigned long long on_cpu, delay;
	ssize_t n;

	if (owner != gettid()) {
		if (fd >= 0)
			close(fd);
		fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
		owner = gettid();
	}
	if (fd < 0)
		return 0;
	n = pread(fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	if (sscanf(buf, "%llu %llu", &on_cpu, &delay) != 2)
		return 0;
	return delay;
}

#endif
