/* CPU lists and the cgroup CPU quota (machine_impl.h). */
#include "machine_impl.h"

/* ------------------------------------------------------------------ */
/* CPU lists                                                           */
/* ------------------------------------------------------------------ */

/* Parse a CPU list into @set (sized for @ncpus); an empty list is an error. */
int cpulist_parse(const char *list, cpu_set_t *set, size_t setsize, unsigned ncpus)
{
	struct cpumap m;
	int err = cpumap_parse(&m, list);

	if (err)
		return err;
	if (m.n == 0)
		return -EINVAL;
	CPU_ZERO_S(setsize, set);
	for (int i = 0; i < m.n; i++)
		if ((unsigned)m.cpu[i] < ncpus)
			CPU_SET_S((unsigned)m.cpu[i], setsize, set);
	cpumap_fini(&m);
	return 0;
}

int machine_cpulist_count(const char *list)
{
	/* A set, so that overlapping items ("0-3,2") count each CPU once. */
	cpu_set_t *set = CPU_ALLOC(MAX_CPUS);
	size_t setsize = CPU_ALLOC_SIZE(MAX_CPUS);
	int err;

	if (!set)
		return -ENOMEM;
	err = cpulist_parse(list, set, setsize, MAX_CPUS);
	if (!err)
		err = CPU_COUNT_S(setsize, set);
	CPU_FREE(set);
	return err;
}

/* Write @set as "0-3,8". Returns 0 or -ENOSPC, in which case the list ends
 * in "..." (ncpu_affinity still has the exact count). */
int cpulist_format(const cpu_set_t *set, size_t setsize, unsigned ncpus,
			  char *buf, size_t len)
{
	int *cpu = calloc(ncpus ? ncpus : 1, sizeof(*cpu)), n = 0, err;

	if (!cpu) {
		snprintf(buf, len, "%s", "...");
		return -ENOMEM;
	}
	for (unsigned c = 0; c < ncpus; c++)
		if (CPU_ISSET_S(c, setsize, set))
			cpu[n++] = (int)c;
	err = cpumap_format(cpu, n, buf, len);
	free(cpu);
	return err;
}

/* ------------------------------------------------------------------ */
/* cgroup CPU quota                                                    */
/* ------------------------------------------------------------------ */

/* cgroup v2 cpu.max of one directory: "max 100000" (no limit) or
 * "QUOTA PERIOD" in microseconds. A missing file is no limit. */
static int read_cpu_max(const char *dir, double *cpus)
{
	char path[PATH_MAX], buf[128], *save = NULL, *q, *p;
	uint64_t quota, period;
	int err;

	*cpus = 0;
	if (strbuf(path, sizeof(path), "%s/cpu.max", dir))
		return -ENAMETOOLONG;
	err = read_sysfs(path, buf, sizeof(buf));
	if (err == -ENOENT || err == -ENOTDIR)
		return 0;
	if (err)
		return err;
	q = strtok_r(buf, " \t\n", &save);
	p = strtok_r(NULL, " \t\n", &save);
	if (!q || !p || strtok_r(NULL, " \t\n", &save))
		return -EINVAL;
	if (safe_atou64(p, &period) || period == 0)
		return -EINVAL;
	if (strcmp(q, "max") == 0)
		return 0;
	if (safe_atou64(q, &quota) || quota == 0)
		return -EINVAL;
	*cpus = (double)quota / (double)period;
	return 0;
}

/* cgroup v1 cpu.cfs_quota_us (-1 = no limit) over cpu.cfs_period_us. */
static int read_cfs_quota(const char *dir, double *cpus)
{
	char path[PATH_MAX], buf[64];
	uint64_t quota, period;
	int err;

	*cpus = 0;
	if (strbuf(path, sizeof(path), "%s/cpu.cfs_quota_us", dir))
		return -ENAMETOOLONG;
	err = read_sysfs(path, buf, sizeof(buf));
	if (err == -ENOENT || err == -ENOTDIR)
		return 0;
	if (err)
		return err;
	machine_trim(buf);
	if (strcmp(buf, "-1") == 0)
		return 0;
	if (safe_atou64(buf, &quota) || quota == 0)
		return -EINVAL;
	if (strbuf(path, sizeof(path), "%s/cpu.cfs_period_us", dir))
		return -ENAMETOOLONG;
	err = read_u64_file(path, &period);
	if (err == -ENOENT)
		return 0;
	if (err)
		return err;
	if (period == 0)
		return -EINVAL;
	*cpus = (double)quota / (double)period;
	return 0;
}

/* Walk from @mount/@cgpath up to @mount itself, keeping the smallest quota.
 * Levels that do not exist are read as "no quota" and the walk goes on:
 * a container without its own cgroup namespace sees a path such as
 * "/docker/<id>" in /proc/self/cgroup, while its own cgroup is mounted at
 * @mount; the walk then finds the container's quota at the mount root. */
static int walk_quota(const char *mount, const char *cgpath,
		      int (*read_level)(const char *dir, double *cpus), double *best)
{
	char dir[PATH_MAX];
	size_t base = strlen(mount);
	int err;

	/* "/.." appears when the cgroup lies outside our cgroup namespace;
	 * there is no directory under @mount to read then. */
	if (strstr(cgpath, "/..") || cgpath[0] != '/')
		return 0;
	if (strbuf(dir, sizeof(dir), "%s%s", mount, cgpath))
		return -ENAMETOOLONG;
	for (;;) {
		size_t n = strlen(dir);
		double q;
		char *slash;

		while (n > base && dir[n - 1] == '/')
			dir[--n] = '\0';
		err = read_level(dir, &q);
		if (err)
			return err;
		if (q > 0 && (*best == 0 || q < *best))
			*best = q;
		if (n <= base)
			return 0;
		slash = strrchr(dir + base, '/');
		if (!slash)
			return 0;
		*slash = '\0';
	}
}

static bool is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Does the comma-separated controller list @ctrls name "cpu" itself? */
static bool has_cpu_controller(const char *ctrls)
{
	const char *p = ctrls;

	while (*p) {
		size_t n = strcspn(p, ",");

		if (n == 3 && strncmp(p, "cpu", 3) == 0)
			return true;
		p += n;
		if (*p == ',')
			p++;
	}
	return false;
}

/* v1: the cpu controller is mounted under @root by its controller list
 * ("cpu,cpuacct"), often with a "cpu" symlink; try the usual spellings. */
static int v1_quota(const char *root, const char *ctrls, const char *cgpath, double *best)
{
	const char *names[] = { ctrls, "cpu", "cpu,cpuacct", "cpuacct,cpu" };
	char mount[PATH_MAX];

	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		if (strbuf(mount, sizeof(mount), "%s/%s", root, names[i]))
			return -ENAMETOOLONG;
		if (is_dir(mount))
			return walk_quota(mount, cgpath, read_cfs_quota, best);
	}
	return 0;
}

int machine_cgroup_quota(const char *root, const char *proc_cgroup, double *cpus)
{
	char *line = NULL;
	size_t cap = 0;
	double best = 0;
	FILE *f;
	int err = 0;

	if (!root || !proc_cgroup || !cpus)
		return -EINVAL;
	*cpus = 0;
	f = fopen(proc_cgroup, "re");
	if (!f) {
		err = -errno;
		/* No cgroup file: a kernel without cgroups, so no quota. */
		return err == -ENOENT ? 0 : err;
	}
	while (getline(&line, &cap, f) > 0) {
		/* "hierarchy-id:controller-list:path"; the path may hold ':'. */
		char *id = line, *ctrls, *path;
		int hid;

		line[strcspn(line, "\n")] = '\0';
		ctrls = strchr(id, ':');
		if (!ctrls)
			continue;
		*ctrls++ = '\0';
		path = strchr(ctrls, ':');
		if (!path)
			continue;
		*path++ = '\0';
		if (safe_atoi(id, &hid)) {
			err = -EINVAL;
			goto out;
		}
		if (hid == 0 && ctrls[0] == '\0')
			/* v2. In hybrid mode @root is a tmpfs of v1 mounts and has
			 * no cpu.max: no quota from here, as it should be, since the
			 * cpu controller then lives in v1. */
			err = walk_quota(root, path, read_cpu_max, &best);
		else if (has_cpu_controller(ctrls))
			err = v1_quota(root, ctrls, path, &best);
		if (err)
			goto out;
	}
	if (ferror(f)) {
		err = -EIO;
		goto out;
	}
	*cpus = best;
out:
	free(line);
	fclose(f);
	return err;
}

