#include "stream.h"
#include "machine.h"
#include "util.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define TRIAD_SCALAR 3.0
#define HUGE_PAGE (2u << 20)

const struct stream_kernels *stream_kernels_for(unsigned isa)
{
#ifdef MFU_HAVE_AVX512
	if (isa & MACHINE_ISA_AVX512F)
		return &stream_avx512_kernels;
#endif
#ifdef MFU_HAVE_AVX2
	if ((isa & MACHINE_ISA_AVX) && (isa & MACHINE_ISA_AVX2))
		return &stream_avx2_kernels;
#endif
#ifdef MFU_HAVE_SSE2
	if (isa & MACHINE_ISA_SSE2)
		return &stream_sse2_kernels;
#endif
	(void)isa;
	return NULL;
}

/* sysfs cache sizes: "107520K", "2048K", "32M". */
static int parse_size(const char *s, uint64_t *bytes)
{
	char num[32];
	size_t n = strlen(s);
	uint64_t v, mult = 1;

	if (n == 0 || n >= sizeof(num))
		return -EINVAL;
	memcpy(num, s, n + 1);
	switch (num[n - 1]) {
	case 'K': mult = 1u << 10; num[n - 1] = '\0'; break;
	case 'M': mult = 1u << 20; num[n - 1] = '\0'; break;
	case 'G': mult = 1u << 30; num[n - 1] = '\0'; break;
	default: break;
	}
	if (safe_atou64(num, &v) || v > UINT64_MAX / mult)
		return -EINVAL;
	*bytes = v * mult;
	return 0;
}

struct llc {
	int level;
	uint64_t bytes;
	char shared[256];      /* shared_cpu_list: names the instance */
};

/* The last-level cache of @cpu: the highest-level data or unified cache. */
static int cpu_llc(int cpu, struct llc *out)
{
	char path[256], buf[256];

	out->level = 0;
	for (int i = 0; i < 16; i++) {
		struct llc c = { 0 };
		int lvl;

		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/cache/index%d/type", cpu, i);
		if (read_sysfs(path, buf, sizeof(buf)))
			break;
		if (strcmp(buf, "Data") && strcmp(buf, "Unified"))
			continue;
		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/cache/index%d/level", cpu, i);
		if (read_sysfs(path, buf, sizeof(buf)) || safe_atoi(buf, &lvl))
			continue;
		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/cache/index%d/size", cpu, i);
		if (read_sysfs(path, buf, sizeof(buf)) || parse_size(buf, &c.bytes))
			continue;
		snprintf(path, sizeof(path),
			 "/sys/devices/system/cpu/cpu%d/cache/index%d/shared_cpu_list", cpu, i);
		if (read_sysfs(path, c.shared, sizeof(c.shared)))
			snprintf(c.shared, sizeof(c.shared), "%d", cpu);
		c.level = lvl;
		if (c.level > out->level)
			*out = c;
	}
	return out->level ? 0 : -ENOENT;
}

/* Bytes this process may still allocate: MemAvailable, lowered by a cgroup
 * v2 memory.max (containers). 0 if unknown. */
static uint64_t available_memory(void)
{
	char line[512], path[600];
	uint64_t avail = 0, v;
	FILE *f = fopen("/proc/meminfo", "re");

	if (f) {
		while (fgets(line, sizeof(line), f)) {
			unsigned long long kb;
			if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1) {
				avail = (uint64_t)kb << 10;
				break;
			}
		}
		fclose(f);
	}
	f = fopen("/proc/self/cgroup", "re");
	if (f) {
		while (fgets(line, sizeof(line), f)) {
			char max[64], cur[64];
			uint64_t used;
			if (strncmp(line, "0::", 3) != 0)
				continue;
			line[strcspn(line, "\n")] = '\0';
			snprintf(path, sizeof(path), "/sys/fs/cgroup%s/memory.max",
				 strcmp(line + 3, "/") ? line + 3 : "");
			if (read_sysfs(path, max, sizeof(max)) || safe_atou64(max, &v))
				break; /* "max" or no controller: no limit */
			snprintf(path, sizeof(path), "/sys/fs/cgroup%s/memory.current",
				 strcmp(line + 3, "/") ? line + 3 : "");
			if (read_sysfs(path, cur, sizeof(cur)) || safe_atou64(cur, &used))
				used = 0;
			v = v > used ? v - used : 0;
			if (avail == 0 || v < avail)
				avail = v;
			break;
		}
		fclose(f);
	}
	return avail;
}

int stream_size(const int *cpus, int n, uint64_t cap, size_t *bytes, char *detail, size_t len)
{
	struct llc seen[64];
	int nseen = 0;
	uint64_t llc = 0, want, avail;

	for (int i = 0; i < n; i++) {
		struct llc c;
		int dup = 0;
		if (cpu_llc(cpus[i], &c))
			continue;
		for (int j = 0; j < nseen; j++)
			dup |= seen[j].level == c.level && strcmp(seen[j].shared, c.shared) == 0;
		if (dup || nseen == (int)ARRAY_SIZE(seen))
			continue;
		seen[nseen++] = c;
		llc += c.bytes;
	}
	want = 4 * llc > STREAM_MIN_BYTES ? 4 * llc : STREAM_MIN_BYTES;
	avail = available_memory();
	if (avail && want > avail / 2) {
		want = avail / 2;
		snprintf(detail, len,
			 "%.0f MiB, capped at half the available memory (4x LLC = %.0f MiB): the figures "
			 "may include cache hits", (double)want / (1 << 20), 4.0 * (double)llc / (1 << 20));
	} else if (llc) {
		snprintf(detail, len, "%.0f MiB: %s", (double)want / (1 << 20),
			 want == STREAM_MIN_BYTES ? "the 256 MiB minimum (more than 4x the LLC)" :
			 "4x the last-level cache");
		if (want != STREAM_MIN_BYTES) {
			size_t k = strlen(detail);
			snprintf(detail + k, len - k, " (%d x %.0f MiB L%d)", nseen,
				 (double)seen[0].bytes / (1 << 20), seen[0].level);
		}
	} else {
		snprintf(detail, len, "%.0f MiB: last-level cache size unknown (no sysfs cache info)",
			 (double)want / (1 << 20));
	}
	if (cap && want > cap && cap >= STREAM_MIN_BYTES) {
		/* --quick: paging in and sweeping 4x a server's L3 (a VM shows the
		 * host's: 260-480 MiB) takes seconds; a VM gets a share of that
		 * L3, so twice the cap's size is still mostly DRAM traffic */
		size_t k = strlen(detail);
		snprintf(detail + k, len - k, "; --quick: capped at %.0f MiB (%.1fx the LLC: some cache hits "
			 "possible, the full calibration sweeps 4x)", (double)cap / (1 << 20),
			 llc ? (double)cap / (double)llc : 0.0);
		want = cap;
	}
	if (want < (16u << 20))
		return -ENOMEM;
	*bytes = (size_t)want;
	return 0;
}

struct stream_job {
	const struct stream_kernels *k;
	double *base;
	size_t per;            /* doubles per worker, a multiple of 6 * STREAM_ALIGN_DOUBLES */
	enum { JOB_TOUCH, JOB_READ, JOB_COPY, JOB_COPY_NT, JOB_TRIAD, JOB_TRIAD_NT, JOB_NJOBS } what;
	volatile double sink[TEAM_MAX];
	int bad[TEAM_MAX];
};

static void stream_work(void *arg, int idx)
{
	struct stream_job *j = arg;
	double *x = j->base + (size_t)idx * j->per;
	size_t n = j->per, h = n / 2, t = n / 3;

	switch (j->what) {
	case JOB_TOUCH:
		/* First touch by the worker that will use it. */
		for (size_t i = 0; i < n; i++)
			x[i] = i < t ? 0.0 : i < 2 * t ? 1.0 : 2.0;
		break;
	case JOB_READ:
		j->sink[idx] = j->k->read(x, n);
		break;
	case JOB_COPY:
		j->k->copy(x, x + h, h);
		break;
	case JOB_COPY_NT:
		j->k->copy_nt(x, x + h, h);
		break;
	case JOB_TRIAD:
	case JOB_TRIAD_NT:
		if (j->what == JOB_TRIAD)
			j->k->triad(x, x + t, x + 2 * t, TRIAD_SCALAR, t);
		else
			j->k->triad_nt(x, x + t, x + 2 * t, TRIAD_SCALAR, t);
		/* Check a few elements: a kernel that skips work must not
		 * pass for a fast one. */
		for (size_t i = 0; i < t; i += t / 7 + 1) {
			double want = x[t + i] + TRIAD_SCALAR * x[2 * t + i];
			if (!(fabs(x[i] - want) <= 1e-12 * fabs(want)))
				j->bad[idx] = 1;
		}
		break;
	default:
		break;
	}
}

int stream_measure(const struct stream_kernels *k, struct team *t, size_t bytes, int reps,
		   struct stream_result out[STREAM_NKINDS])
{
	static struct stream_job job;
	const size_t unit = 6 * STREAM_ALIGN_DOUBLES;
	double best[JOB_NJOBS] = { 0 }, wall_at[JOB_NJOBS] = { 0 }, share[JOB_NJOBS] = { 0 };
	double spent[JOB_NJOBS] = { 0 }, undisturbed[JOB_NJOBS];
	int done[JOB_NJOBS] = { 0 };
	size_t mapped;
	int nw = team_size(t), err = 0;
	void *mem;

	if (!k || !t || reps < 1 || nw < 1)
		return -EINVAL;
	memset(&job, 0, sizeof(job));
	job.k = k;
	job.per = bytes / sizeof(double) / (size_t)nw / unit * unit;
	if (job.per == 0)
		return -EINVAL;
	mapped = (job.per * (size_t)nw * sizeof(double) + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
	mem = mmap(NULL, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		return -errno;
	/* Huge pages: fewer page faults to set up and fewer TLB misses to
	 * measure. Only a hint; without it the figures barely change. */
	(void)madvise(mem, mapped, MADV_HUGEPAGE);
	job.base = mem;

	job.what = JOB_TOUCH;
	err = team_run(t, stream_work, &job, NULL);
	if (err)
		goto out;
	/* Interleaved, so that a slow moment of the host hits every kernel
	 * rather than one. */
	for (int r = 0; r < 2 * reps; r++) {
		for (int w = JOB_READ; w < JOB_NJOBS; w++) {
			struct team_timing tm;
			double v;

			/* As in flops_measure(): retry a disturbed kernel
			 * within twice its undisturbed time. */
			if (r >= reps && (share[w] >= TEAM_SHARE_OK ||
					  spent[w] > 2 * reps * undisturbed[w]))
				continue;
			job.what = w;
			err = team_run(t, stream_work, &job, &tm);
			if (err)
				goto out;
			done[w]++;
			spent[w] += tm.wall_s;
			if (r == 0 || tm.wall_s * tm.cpu_share < undisturbed[w])
				undisturbed[w] = tm.wall_s * tm.cpu_share;
			/* Every kernel moves the worker's whole share once. */
			v = tm.wall_s > 0 ? (double)nw * (double)job.per * sizeof(double) / tm.wall_s : 0;
			if (v > best[w]) {
				best[w] = v;
				wall_at[w] = tm.wall_s;
				share[w] = tm.cpu_share;
			}
		}
	}
	for (int i = 0; i < nw; i++)
		if (job.bad[i] || !isfinite(job.sink[i])) {
			err = -EIO;
			goto out;
		}

	out[STREAM_READ] = (struct stream_result){ "read", best[JOB_READ], wall_at[JOB_READ],
		share[JOB_READ], done[JOB_READ], NULL, 0 };
	for (int i = STREAM_COPY; i <= STREAM_TRIAD; i++) {
		int plain = i == STREAM_COPY ? JOB_COPY : JOB_TRIAD, nt = plain + 1;
		int win = best[nt] > best[plain] ? nt : plain, lose = win == nt ? plain : nt;
		static const char *const names[JOB_NJOBS] = {
			[JOB_COPY] = "copy", [JOB_COPY_NT] = "copy_nt",
			[JOB_TRIAD] = "triad", [JOB_TRIAD_NT] = "triad_nt",
		};
		out[i] = (struct stream_result){ names[win], best[win], wall_at[win], share[win],
			done[win], names[lose], best[lose] };
	}
out:
	munmap(mem, mapped);
	return err;
}
