#include "perf_event.h"
#include "util.h"

#include <errno.h>
#include <limits.h>
#include <sys/syscall.h>
#include <unistd.h>

int perf_event_open_fd(struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd)
{
	long fd = syscall(SYS_perf_event_open, attr, pid, cpu, group_fd, PERF_FLAG_FD_CLOEXEC);
	return fd < 0 ? -errno : (int)fd;
}

int perf_event_paranoid(const char *path)
{
	char buf[32];
	int level;

	if (read_sysfs(path ? path : "/proc/sys/kernel/perf_event_paranoid", buf, sizeof(buf)) != 0)
		return INT_MIN;
	return safe_atoi(buf, &level) == 0 ? level : INT_MIN;
}
