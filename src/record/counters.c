#include "counters.h"
#include "util.h"

#include <errno.h>
#include <perfmon/pfmlib_perf_event.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static const struct {
	const char *name;
	uint64_t config;
	const char *unit;
	enum counter_col col;
} software_events[] = {
	/* task-clock leads group 0: it always exists and its value is the
	 * CPU time of all the target's threads, in ns. */
	{ "task-clock", PERF_COUNT_SW_TASK_CLOCK, "ns", COL_CPU_NS },
	{ "context-switches", PERF_COUNT_SW_CONTEXT_SWITCHES, "count", COL_CTX_SWITCHES },
	{ "cpu-migrations", PERF_COUNT_SW_CPU_MIGRATIONS, "count", COL_CPU_MIGRATIONS },
	{ "page-faults", PERF_COUNT_SW_PAGE_FAULTS, "count", COL_PAGE_FAULTS },
};

/*
 * FLOP events per precision, tried in order with libpfm4 on the core PMU;
 * those the PMU does not know are skipped. Lane weights from SPEC section 3
 * (Intel SDM vol. 3B and the Intel optimization manual: FP_ARITH_INST_RETIRED
 * counts instructions, an FMA counting twice, so FLOPs = count x lanes).
 * Only the selected dtype's four width events are opened by default, so that
 * they fit the four general-purpose counters of an SMT core without
 * multiplexing (cycles and instructions use fixed counters).
 * AMD Zen 2-4: RETIRED_SSE_AVX_FLOPS already counts FLOPs of every precision.
 */
static const struct {
	const char *dtype; /* NULL: any dtype */
	const char *event;
	double weight;
} flop_events[] = {
	{ "fp64", "FP_ARITH_INST_RETIRED:SCALAR_DOUBLE", 1 },
	{ "fp64", "FP_ARITH_INST_RETIRED:128B_PACKED_DOUBLE", 2 },
	{ "fp64", "FP_ARITH_INST_RETIRED:256B_PACKED_DOUBLE", 4 },
	{ "fp64", "FP_ARITH_INST_RETIRED:512B_PACKED_DOUBLE", 8 },
	{ "fp32", "FP_ARITH_INST_RETIRED:SCALAR_SINGLE", 1 },
	{ "fp32", "FP_ARITH_INST_RETIRED:128B_PACKED_SINGLE", 4 },
	{ "fp32", "FP_ARITH_INST_RETIRED:256B_PACKED_SINGLE", 8 },
	{ "fp32", "FP_ARITH_INST_RETIRED:512B_PACKED_SINGLE", 16 },
	{ "fp16", "FP_ARITH_INST_RETIRED2:SCALAR_HALF", 1 },
	{ "fp16", "FP_ARITH_INST_RETIRED2:128B_PACKED_HALF", 8 },
	{ "fp16", "FP_ARITH_INST_RETIRED2:256B_PACKED_HALF", 16 },
	{ "fp16", "FP_ARITH_INST_RETIRED2:512B_PACKED_HALF", 32 },
	{ NULL, "RETIRED_SSE_AVX_FLOPS:ANY", 1 },
};

static const char *const col_names[COL_NCOLS] = {
	[COL_NONE] = NULL,
	[COL_CPU_NS] = "cpu_ns",
	[COL_CTX_SWITCHES] = "ctx_switches",
	[COL_CPU_MIGRATIONS] = "cpu_migrations",
	[COL_PAGE_FAULTS] = "page_faults",
	[COL_CYCLES] = "cycles",
	[COL_INSTRUCTIONS] = "instructions",
	[COL_FLOPS] = "hw_flops",
};

const char *counters_col_name(enum counter_col col)
{
	return col < COL_NCOLS ? col_names[col] : NULL;
}

static struct counter *add(struct counters *cs, const char *name, const char *kind,
			   const char *unit, int group, enum counter_col col, double weight)
{
	struct counter *c;

	if (cs->n >= COUNTERS_MAX)
		return NULL;
	c = &cs->c[cs->n++];
	memset(c, 0, sizeof(*c));
	strbuf(c->name, sizeof(c->name), "%s", name);
	c->kind = kind;
	c->unit = unit;
	c->group = group;
	c->col = col;
	c->weight = weight;
	c->fd = -1;
	c->index = -1;
	c->attr.size = sizeof(c->attr);
	return c;
}

static void set_encoding(struct counter *c)
{
	strbuf(c->encoding, sizeof(c->encoding), "%u:%#llx", c->attr.type,
	       (unsigned long long)c->attr.config);
}

/* The core PMU's name in sysfs ("cpu"; "cpu_core" on hybrid Intel), or NULL. */
static const char *core_pmu_dir(const char *sysfs, char *buf, size_t len)
{
	static const char *const names[] = { "cpu", "cpu_core", "armv8_pmuv3" };
	struct stat st;

	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		if (strbuf(buf, len, "%s/%s", sysfs, names[i]) == 0 && stat(buf, &st) == 0)
			return names[i];
	}
	return NULL;
}

static int pfm_core_pmu(char *name, size_t len)
{
	pfm_pmu_info_t info;
	int p;

	pfm_for_all_pmus(p) {
		memset(&info, 0, sizeof(info));
		info.size = sizeof(info);
		if (pfm_get_pmu_info(p, &info) != PFM_SUCCESS || !info.is_present)
			continue;
		if (info.type == PFM_PMU_TYPE_CORE) {
			strbuf(name, len, "%s", info.name);
			return 0;
		}
	}
	return -ENOENT;
}

static int pfm_encode(const char *event, struct perf_event_attr *attr)
{
	pfm_perf_encode_arg_t arg;
	struct perf_event_attr tmp;

	memset(&arg, 0, sizeof(arg));
	memset(&tmp, 0, sizeof(tmp));
	arg.attr = &tmp;
	arg.size = sizeof(arg);
	/* user and kernel: FLOPs retired in either are the target's work */
	if (pfm_get_os_event_encoding(event, PFM_PLM3 | PFM_PLM0, PFM_OS_PERF_EVENT, &arg) != PFM_SUCCESS)
		return -ENOENT;
	attr->type = tmp.type;
	attr->config = tmp.config;
	attr->config1 = tmp.config1;
	attr->config2 = tmp.config2;
	return 0;
}

int counters_plan(struct counters *cs, const char *dtype, const char *sysfs)
{
	char path[512];
	const char *pmu_dir;
	struct counter *c;
	int found_flops = 0;

	memset(cs, 0, sizeof(*cs));
	cs->leader[0] = cs->leader[1] = -1;
	for (size_t i = 0; i < ARRAY_SIZE(software_events); i++) {
		c = add(cs, software_events[i].name, "software", software_events[i].unit, 0,
			software_events[i].col, 0);
		c->attr.type = PERF_TYPE_SOFTWARE;
		c->attr.config = software_events[i].config;
		set_encoding(c);
	}

	pmu_dir = core_pmu_dir(sysfs, path, sizeof(path));
	if (!pmu_dir) {
		strbuf(cs->hw_missing, sizeof(cs->hw_missing),
		       "no hardware PMU: %s has no cpu PMU (usual on virtual machines and in some "
		       "containers), so cycles, instructions and FLOP counters cannot be opened; "
		       "HFU, counted FLOPs and IPC are unknown", sysfs);
		return 0;
	}

	c = add(cs, "cycles", "hardware", "count", 1, COL_CYCLES, 0);
	c->attr.type = PERF_TYPE_HARDWARE;
	c->attr.config = PERF_COUNT_HW_CPU_CYCLES;
	set_encoding(c);
	c = add(cs, "instructions", "hardware", "count", 1, COL_INSTRUCTIONS, 0);
	c->attr.type = PERF_TYPE_HARDWARE;
	c->attr.config = PERF_COUNT_HW_INSTRUCTIONS;
	set_encoding(c);

	if (pfm_initialize() != PFM_SUCCESS || pfm_core_pmu(cs->pmu, sizeof(cs->pmu)) != 0) {
		strbuf(cs->hw_missing, sizeof(cs->hw_missing),
		       "libpfm4 does not know this CPU's core PMU, so FLOP counters are not opened; "
		       "HFU and counted FLOPs are unknown");
		return 0;
	}
	for (size_t i = 0; i < ARRAY_SIZE(flop_events); i++) {
		struct perf_event_attr attr = { 0 };
		char qualified[160];
		if (flop_events[i].dtype && strcmp(flop_events[i].dtype, dtype) != 0)
			continue;
		/* qualified with the PMU, so an event of another PMU never matches */
		if (strbuf(qualified, sizeof(qualified), "%s::%s", cs->pmu, flop_events[i].event) ||
		    pfm_encode(qualified, &attr) != 0)
			continue;
		c = add(cs, flop_events[i].event, "hardware", "count", 1, COL_FLOPS, flop_events[i].weight);
		if (!c)
			break;
		c->attr.type = attr.type;
		c->attr.config = attr.config;
		c->attr.config1 = attr.config1;
		c->attr.config2 = attr.config2;
		set_encoding(c);
		found_flops++;
	}
	if (!found_flops)
		strbuf(cs->hw_missing, sizeof(cs->hw_missing),
		       "libpfm4 knows no %s FLOP event for the %s PMU; HFU and counted FLOPs are unknown",
		       dtype, cs->pmu);
	return 0;
}

static int perf_open(struct perf_event_attr *attr, int group_fd)
{
	int fd = (int)syscall(SYS_perf_event_open, attr, 0, -1, group_fd, PERF_FLAG_FD_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

static void explain(struct counter *c, int err)
{
	const char *hint = "";

	if (err == -EACCES || err == -EPERM)
		hint = " (perf_event_paranoid forbids it: run as root or lower "
		       "/proc/sys/kernel/perf_event_paranoid)";
	else if (err == -ENOENT || err == -EOPNOTSUPP)
		hint = " (the kernel or the PMU does not provide this event)";
	strbuf(c->reason, sizeof(c->reason), "%s%s", strerror(-err), hint);
}

int counters_open_self(struct counters *cs)
{
	int opened = 0;

	for (int g = 0; g < 2; g++) {
		int leader_fd = -1;
		for (int i = 0; i < cs->n; i++) {
			struct counter *c = &cs->c[i];
			int fd;

			if (c->group != g)
				continue;
			c->attr.size = sizeof(c->attr);
			c->attr.inherit = 1;
			c->attr.disabled = 1;
			c->attr.enable_on_exec = 1;
			c->attr.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED |
					      PERF_FORMAT_TOTAL_TIME_RUNNING;
			fd = perf_open(&c->attr, leader_fd);
			if ((fd == -EACCES || fd == -EPERM) && !c->attr.exclude_kernel) {
				/* perf_event_paranoid >= 2: user-mode only */
				c->attr.exclude_kernel = 1;
				c->attr.exclude_hv = 1;
				fd = perf_open(&c->attr, leader_fd);
				if (fd >= 0)
					c->user_only = 1;
			}
			if (fd < 0) {
				c->err = -fd;
				explain(c, fd);
				continue;
			}
			c->fd = fd;
			c->opened = 1;
			/* groups are opened in order: group 1's values follow group 0's */
			c->index = (g == 0 ? 0 : cs->nopen[0]) + cs->nopen[g];
			if (leader_fd < 0) {
				leader_fd = fd;
				cs->leader[g] = i;
			}
			cs->nopen[g]++;
			opened++;
		}
	}
	return opened;
}

void counters_reading_from_record(struct counter_reading *r, const struct mring_record *rec)
{
	r->nr = rec->nr;
	r->time_enabled = rec->time_enabled;
	r->time_running = rec->time_running;
	r->time_enabled1 = rec->time_enabled1;
	r->time_running1 = rec->time_running1;
	memcpy(r->values, rec->values, sizeof(r->values));
}

void counters_delta(const struct counters *cs, const struct counter_reading *a,
		    const struct counter_reading *b, struct counter_delta *d)
{
	double scale1 = 1.0;
	uint64_t en1 = b->time_enabled1 - a->time_enabled1;
	uint64_t run1 = b->time_running1 - a->time_running1;
	int have_hw = 0;

	memset(d, 0, sizeof(*d));
	d->hw_fraction = 1.0;
	if (cs->nopen[1] > 0 && en1 > 0) {
		if (run1 == 0) {
			d->hw_fraction = 0; /* never scheduled: nothing can be said */
		} else {
			scale1 = (double)en1 / (double)run1;
			d->hw_fraction = (double)run1 / (double)en1;
			have_hw = 1;
		}
	}
	for (int i = 0; i < cs->n; i++) {
		const struct counter *c = &cs->c[i];
		double v;

		if (!c->opened || c->col == COL_NONE || (uint64_t)c->index >= a->nr ||
		    (uint64_t)c->index >= b->nr)
			continue;
		/* User-mode-only switch and migration counts are always 0: the
		 * kernel counts them in kernel mode. Unknown, not 0. */
		if (c->user_only && (c->col == COL_CTX_SWITCHES || c->col == COL_CPU_MIGRATIONS))
			continue;
		if (c->group == 1 && !have_hw)
			continue;
		v = (double)(b->values[c->index] - a->values[c->index]);
		if (c->group == 1)
			v *= scale1;
		if (c->col == COL_FLOPS)
			v *= c->weight;
		d->v[c->col] += v;
		d->has[c->col] = 1;
	}
}
