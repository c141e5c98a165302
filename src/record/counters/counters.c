#include "counters.h"
#include "emulate/mfu_emulate.h"
#include "perf_event.h"
#include "suggest.h"
#include "pmu.h"
#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <perfmon/pfmlib_perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

static const struct {
	const char *name;
	uint64_t config;
	enum counter_col col;
} cycle_events[] = {
	{ "cycles", PERF_COUNT_HW_CPU_CYCLES, COL_CYCLES },
	{ "instructions", PERF_COUNT_HW_INSTRUCTIONS, COL_INSTRUCTIONS },
	{ "ref-cycles", PERF_COUNT_HW_REF_CPU_CYCLES, COL_REF_CYCLES },
};

/*
 * FLOP events, tried in order on each core PMU with libpfm4; the ones a PMU
 * does not know are skipped. Lane weights from SPEC section 3 (Intel SDM
 * vol. 3B and the Intel optimization manual: FP_ARITH_INST_RETIRED counts
 * instructions, an FMA counting twice, so FLOPs = count x lanes; SPR's
 * FP_ARITH_INST_RETIRED2 counts the AVX512-FP16 half-precision ones).
 * AMD Zen 2-4: RETIRED_SSE_AVX_FLOPS (event 0x03) already counts FLOPs, of
 * every precision. It can count more than 15 per cycle, which needs the
 * adjacent "merge" counter: Linux pairs it by itself for event 0x03
 * (arch/x86/events/amd/core.c, amd_is_pair_event_code, since 5.7), so no
 * MERGE event is opened here (libpfm4 4.13 has none for Zen 4 either).
 * Each block of the same precision becomes one group of <= 4 events.
 */
static const struct {
	enum counter_col col;
	const char *event;
	double weight;
} flop_events[] = {
	{ COL_FLOPS_FP64, "FP_ARITH_INST_RETIRED:SCALAR_DOUBLE", 1 },
	{ COL_FLOPS_FP64, "FP_ARITH_INST_RETIRED:128B_PACKED_DOUBLE", 2 },
	{ COL_FLOPS_FP64, "FP_ARITH_INST_RETIRED:256B_PACKED_DOUBLE", 4 },
	{ COL_FLOPS_FP64, "FP_ARITH_INST_RETIRED:512B_PACKED_DOUBLE", 8 },
	{ COL_FLOPS_FP32, "FP_ARITH_INST_RETIRED:SCALAR_SINGLE", 1 },
	{ COL_FLOPS_FP32, "FP_ARITH_INST_RETIRED:128B_PACKED_SINGLE", 4 },
	{ COL_FLOPS_FP32, "FP_ARITH_INST_RETIRED:256B_PACKED_SINGLE", 8 },
	{ COL_FLOPS_FP32, "FP_ARITH_INST_RETIRED:512B_PACKED_SINGLE", 16 },
	{ COL_FLOPS_FP16, "FP_ARITH_INST_RETIRED2:SCALAR_HALF", 1 },
	{ COL_FLOPS_FP16, "FP_ARITH_INST_RETIRED2:128B_PACKED_HALF", 8 },
	{ COL_FLOPS_FP16, "FP_ARITH_INST_RETIRED2:256B_PACKED_HALF", 16 },
	{ COL_FLOPS_FP16, "FP_ARITH_INST_RETIRED2:512B_PACKED_HALF", 32 },
	{ COL_FLOPS_ANY, "RETIRED_SSE_AVX_FLOPS:ANY", 1 },
	/* AMX tile operations are invisible to FP_ARITH: counted apart. */
	{ COL_AMX_OPS, "AMX_OPS_RETIRED:BF16", 1 },
	{ COL_AMX_OPS, "AMX_OPS_RETIRED:INT8", 1 },
};

static const char *const col_names[COL_NCOLS] = {
	[COL_NONE] = NULL,
	[COL_CPU_NS] = "cpu_ns",
	[COL_CTX_SWITCHES] = "ctx_switches",
	[COL_CPU_MIGRATIONS] = "cpu_migrations",
	[COL_PAGE_FAULTS] = "page_faults",
	[COL_CYCLES] = "cycles",
	[COL_INSTRUCTIONS] = "instructions",
	[COL_REF_CYCLES] = "ref_cycles",
	[COL_FLOPS_FP64] = "hw_flops_fp64",
	[COL_FLOPS_FP32] = "hw_flops_fp32",
	[COL_FLOPS_FP16] = "hw_flops_fp16",
	[COL_FLOPS_ANY] = "hw_flops_any",
	[COL_AMX_OPS] = "amx_ops",
};

const char *counters_col_name(enum counter_col col)
{
	return col < COL_NCOLS ? col_names[col] : NULL;
}

static int is_flops(enum counter_col col)
{
	return col == COL_FLOPS_FP64 || col == COL_FLOPS_FP32 || col == COL_FLOPS_FP16 ||
	       col == COL_FLOPS_ANY;
}

double counters_hw_flops(const struct counter_delta *d)
{
	double sum = 0;
	int any = 0;
	for (int c = 0; c < COL_NCOLS; c++) {
		if (is_flops((enum counter_col)c) && d->has[c]) {
			sum += d->v[c];
			any = 1;
		}
	}
	return any ? sum : -1;
}

static struct counter *add(struct counters *cs, const char *name, const char *kind,
			   const char *unit, int group, enum counter_col col, double weight)
{
	struct counter *c;

	if (cs->n >= COUNTERS_MAX || group >= MRING_MAX_GROUPS)
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
	c->word = -1;
	c->attr.size = sizeof(c->attr);
	if (group + 1 > cs->ngroups)
		cs->ngroups = group + 1;
	return c;
}

static void set_encoding(struct counter *c)
{
	if (c->attr.config1 || c->attr.config2)
		strbuf(c->encoding, sizeof(c->encoding), "%u:%#llx:%#llx:%#llx", c->attr.type,
		       (unsigned long long)c->attr.config, (unsigned long long)c->attr.config1,
		       (unsigned long long)c->attr.config2);
	else
		strbuf(c->encoding, sizeof(c->encoding), "%u:%#llx", c->attr.type,
		       (unsigned long long)c->attr.config);
}

static int has_dir(const char *sysfs, const char *name)
{
	char path[512];
	struct stat st;
	return strbuf(path, sizeof(path), "%s/%s", sysfs, name) == 0 && stat(path, &st) == 0;
}

/* The present core PMUs of libpfm4 (two on hybrid Intel parts). */
static int pfm_core_pmus(char names[][32], int max)
{
	pfm_pmu_info_t info;
	int p, n = 0;

	pfm_for_all_pmus(p) {
		memset(&info, 0, sizeof(info));
		info.size = sizeof(info);
		if (pfm_get_pmu_info(p, &info) != PFM_SUCCESS || !info.is_present)
			continue;
		if (info.type == PFM_PMU_TYPE_CORE && n < max)
			strbuf(names[n++], 32, "%s", info.name);
	}
	return n;
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

/* Plan the hardware events of one core PMU, from group @g on; returns the
 * next free group. */
static int plan_core_pmu(struct counters *cs, const char *pmu, int g, int hybrid)
{
	struct counter *c;
	int in_group = 0;
	enum counter_col cur = COL_NONE;
	char qualified[160];

	for (size_t i = 0; i < sizeof(cycle_events) / sizeof(cycle_events[0]); i++) {
		struct perf_event_attr attr = { 0 };
		if (hybrid) {
			/* generic events have no PMU on hybrid parts: ask libpfm4
			 * for this PMU's own encoding */
			strbuf(qualified, sizeof(qualified), "%s::%s", pmu,
			       i == 0 ? "CPU_CLK_UNHALTED:THREAD" : i == 1 ? "INST_RETIRED:ANY" : "CPU_CLK_UNHALTED:REF_TSC");
			if (pfm_encode(qualified, &attr) != 0)
				continue;
		} else {
			attr.type = PERF_TYPE_HARDWARE;
			attr.config = cycle_events[i].config;
		}
		if (hybrid)
			strbuf(qualified, sizeof(qualified), "%s::%s", pmu, cycle_events[i].name);
		else
			strbuf(qualified, sizeof(qualified), "%s", cycle_events[i].name);
		c = add(cs, qualified, "hardware", "count", g, cycle_events[i].col, 0);
		if (!c)
			return g;
		strbuf(c->pmu, sizeof(c->pmu), "%s", pmu);
		c->attr.type = attr.type;
		c->attr.config = attr.config;
		set_encoding(c);
	}
	g++;
	for (size_t i = 0; i < sizeof(flop_events) / sizeof(flop_events[0]); i++) {
		struct perf_event_attr attr = { 0 };
		/* qualified with the PMU, so an event of another PMU never matches */
		if (strbuf(qualified, sizeof(qualified), "%s::%s", pmu, flop_events[i].event) ||
		    pfm_encode(qualified, &attr) != 0)
			continue;
		if (in_group && (flop_events[i].col != cur || in_group == COUNTER_GROUP_MAX)) {
			g++;
			in_group = 0;
		}
		cur = flop_events[i].col;
		c = add(cs, hybrid ? qualified : flop_events[i].event, "hardware", "count", g,
			flop_events[i].col, flop_events[i].weight);
		if (!c)
			break;
		strbuf(c->pmu, sizeof(c->pmu), "%s", pmu);
		c->attr.type = attr.type;
		c->attr.config = attr.config;
		c->attr.config1 = attr.config1;
		c->attr.config2 = attr.config2;
		set_encoding(c);
		in_group++;
		if (flop_events[i].col == COL_AMX_OPS && !cs->amx_note[0])
			strbuf(cs->amx_note, sizeof(cs->amx_note),
			       "AMX tile operations are counted apart (amx_ops): their FLOPs are not in "
			       "FP_ARITH_INST_RETIRED, so counted FLOPs and HFU miss AMX work");
	}
	return in_group ? g + 1 : g;
}

/* "did you mean ...?" for a mistyped -e in perf's sysfs form: among
 * "pmu/NAME/" for every entry NAME of @dir (the PMUs of sysfs, or a PMU's
 * events/ aliases, whose files with a '.' are their scale and unit), and
 * "NAME/terms/" when @pmu is NULL. "" when none is close. */
static void suggest_sysfs(const char *dir, const char *ev, const char *pmu, const char *terms, char *out,
			  size_t len)
{
	struct suggest s;
	char name[SUGGEST_NAME_MAX];
	DIR *d = opendir(dir);
	struct dirent *e;

	suggest_init(&s, ev);
	while (d && (e = readdir(d)))
		if (e->d_name[0] != '.' && !(pmu && strchr(e->d_name, '.')) &&
		    !strbuf(name, sizeof(name), "%s/%s/", pmu ? pmu : e->d_name, pmu ? e->d_name : terms))
			suggest_add(&s, name);
	if (d)
		closedir(d);
	suggest_format(&s, out, len);
}

/* A user event in perf's sysfs form, "pmu/terms/": terms are an event
 * alias of the PMU (its events/NAME file) or "event=0x..,umask=.."-style
 * terms, both encoded with the PMU's format/ files (pmu.h). */
static int encode_sysfs(const char *sysfs, const char *ev, struct perf_event_attr *attr, char *why,
			size_t whylen)
{
	char pmu[64], terms[256], dir[512], close[400];
	struct pmu_format fmt[PMU_MAX_FORMATS];
	struct pmu_alias alias;
	int nfmt = 0, type;
	const char *slash = strchr(ev, '/');
	size_t plen = slash ? (size_t)(slash - ev) : 0, tlen;

	if (!slash || plen == 0 || plen >= sizeof(pmu))
		goto bad;
	tlen = strlen(slash + 1);
	if (tlen < 2 || slash[tlen] != '/' || tlen - 1 >= sizeof(terms))
		goto bad;
	memcpy(pmu, ev, plen);
	pmu[plen] = '\0';
	memcpy(terms, slash + 1, tlen - 1);
	terms[tlen - 1] = '\0';
	if (strchr(pmu, '.') || strchr(terms, '/'))
		goto bad;
	if (pmu_type(sysfs, pmu, &type) || type < 0) {
		suggest_sysfs(sysfs, ev, NULL, terms, close, sizeof(close));
		strbuf(why, whylen, "unknown event '%s': no PMU '%s' in %s%s%s", ev, pmu, sysfs,
		       close[0] ? "; " : "", close);
		return -EINVAL;
	}
	(void)pmu_formats(sysfs, pmu, fmt, &nfmt, NULL, NULL);
	/* an alias name (no '=' and a file of that name) or literal terms */
	strbuf(dir, sizeof(dir), "%s/%s/format", sysfs, pmu);
	if (!strchr(terms, '=') && !strchr(terms, ',')) {
		strbuf(dir, sizeof(dir), "%s/%s/events", sysfs, pmu);
		if (pmu_alias(sysfs, pmu, terms, &alias) == 0)
			strbuf(terms, sizeof(terms), "%s", alias.terms);
	}
	attr->type = (uint32_t)type;
	if (pmu_parse_terms(terms, fmt, nfmt, attr) != 0) {
		close[0] = '\0';
		if (!strchr(terms, '='))
			suggest_sysfs(dir, ev, pmu, NULL, close, sizeof(close));
		strbuf(why, whylen, "unknown event '%s': '%s' is not an event of the %s PMU (see %s/%s/events)%s%s",
		       ev, terms, pmu, sysfs, pmu, close[0] ? "; " : "", close);
		return -EINVAL;
	}
	return 0;
bad:
	strbuf(why, whylen, "unknown event '%s': expected a libpfm4 name or PMU/EVENT/", ev);
	return -EINVAL;
}

/* "did you mean ...?" for an event libpfm4 does not know: among the names
 * EVENT and EVENT:UMASK of the PMU named in "PMU::...", else of @pmu (the
 * core PMU in use), else of every present PMU. "" when none is close. */
static void suggest_pfm(const char *ev, const char *pmu, char *out, size_t len)
{
	struct suggest s;
	const char *sep = strstr(ev, "::");
	char qual[64] = "", name[SUGGEST_NAME_MAX];
	int p;

	if (sep && (size_t)(sep - ev) < sizeof(qual))
		memcpy(qual, ev, (size_t)(sep - ev));
	suggest_init(&s, ev);
	pfm_for_all_pmus(p) {
		pfm_pmu_info_t pinfo = { .size = sizeof(pinfo) };

		if (pfm_get_pmu_info(p, &pinfo) != PFM_SUCCESS || !pinfo.name ||
		    (qual[0] ? strcmp(pinfo.name, qual) : pmu[0] ? strcmp(pinfo.name, pmu) : !pinfo.is_present))
			continue;
		for (int i = pinfo.first_event; i != -1; i = pfm_get_event_next(i)) {
			pfm_event_info_t einfo = { .size = sizeof(einfo) };

			if (pfm_get_event_info(i, PFM_OS_NONE, &einfo) != PFM_SUCCESS)
				continue;
			if (!strbuf(name, sizeof(name), "%s%s%s", qual, qual[0] ? "::" : "", einfo.name))
				suggest_add(&s, name);
			for (int a = 0; a < einfo.nattrs; a++) {
				pfm_event_attr_info_t ainfo = { .size = sizeof(ainfo) };

				if (pfm_get_event_attr_info(i, a, PFM_OS_NONE, &ainfo) == PFM_SUCCESS &&
				    ainfo.type == PFM_ATTR_UMASK &&
				    !strbuf(name, sizeof(name), "%s%s%s:%s", qual, qual[0] ? "::" : "", einfo.name,
					    ainfo.name))
					suggest_add(&s, name);
			}
		}
	}
	suggest_format(&s, out, len);
}

/* A user event: a libpfm4 name, optionally "pmu::"-qualified, or perf's
 * sysfs form "pmu/event/". */
static int plan_user(struct counters *cs, const char *sysfs, const char *ev, int g, char *why,
		     size_t whylen)
{
	struct perf_event_attr attr = { 0 };
	struct counter *c;

	if (strchr(ev, '/')) {
		int rc = encode_sysfs(sysfs, ev, &attr, why, whylen);
		if (rc)
			return rc;
	} else if (pfm_encode(ev, &attr) != 0) {
		char close[400];

		suggest_pfm(ev, cs->pmu, close, sizeof(close));
		strbuf(why, whylen, "unknown event '%s'%s%s (libpfm4 knows no such event for %s; "
		       "see mfu-record --list-events)", ev, close[0] ? "; " : "", close,
		       cs->pmu[0] ? cs->pmu : "this machine");
		return -EINVAL;
	}
	c = add(cs, ev, "user", "count", g, COL_NONE, 0);
	if (!c) {
		strbuf(why, whylen, "too many events: at most %d counters in %d groups", COUNTERS_MAX,
		       MRING_MAX_GROUPS);
		return -E2BIG;
	}
	c->attr.type = attr.type;
	c->attr.config = attr.config;
	c->attr.config1 = attr.config1;
	c->attr.config2 = attr.config2;
	set_encoding(c);
	return 0;
}

int counters_plan(struct counters *cs, const char *sysfs, const char *const *user, int nuser,
		  char *why, size_t whylen)
{
	char pmus[4][32];
	int g = 1, npmus = 0, hybrid;
	struct counter *c;

	memset(cs, 0, sizeof(*cs));
	for (int i = 0; i < MRING_MAX_GROUPS; i++)
		cs->leader[i] = -1;
	for (size_t i = 0; i < sizeof(software_events) / sizeof(software_events[0]); i++) {
		c = add(cs, software_events[i].name, "software", software_events[i].unit, 0,
			software_events[i].col, 0);
		c->attr.type = PERF_TYPE_SOFTWARE;
		c->attr.config = software_events[i].config;
		set_encoding(c);
	}

	int have_pmu = has_dir(sysfs, "cpu") || has_dir(sysfs, "cpu_core") || has_dir(sysfs, "cpu_atom");
	const char *force = getenv("LIBPFM_FORCE_PMU");
	if (pfm_initialize() == PFM_SUCCESS)
		npmus = pfm_core_pmus(pmus, 4);
	/* A forced PMU replaces the detected one; two core PMUs are used only
	 * when the kernel shows a hybrid CPU (cpu_core and cpu_atom). */
	for (int p = 0; force && *force && p < npmus; p++) {
		if (strcmp(pmus[p], force) == 0) {
			memmove(pmus[0], pmus[p], sizeof(pmus[0]));
			npmus = 1;
			break;
		}
	}
	hybrid = has_dir(sysfs, "cpu_core") && has_dir(sysfs, "cpu_atom") && npmus > 1;
	if (!hybrid && npmus > 1)
		npmus = 1;
	if (npmus)
		strbuf(cs->pmu, sizeof(cs->pmu), "%s", pmus[0]);
	cs->forced = force && *force && !have_pmu;

	if (!have_pmu && !cs->forced) {
		strbuf(cs->hw_missing, sizeof(cs->hw_missing),
		       "no hardware PMU: %s has no cpu PMU (usual on virtual machines and in some "
		       "containers), so cycles, instructions and FLOP counters cannot be opened; "
		       "HFU, counted FLOPs and IPC are unknown", sysfs);
	} else if (!npmus) {
		strbuf(cs->hw_missing, sizeof(cs->hw_missing),
		       "libpfm4 does not know this CPU's core PMU, so FLOP counters are not opened; "
		       "HFU and counted FLOPs are unknown");
		npmus = 0;
	}
	if (cs->hw_missing[0] == '\0') {
		for (int p = 0; p < npmus; p++)
			g = plan_core_pmu(cs, pmus[p], g, hybrid);
		int flops = 0;
		for (int i = 0; i < cs->n; i++)
			flops += is_flops(cs->c[i].col);
		if (!flops)
			strbuf(cs->hw_missing, sizeof(cs->hw_missing),
			       "libpfm4 knows no FLOP event for the %s PMU; HFU and counted FLOPs are unknown",
			       cs->pmu);
	}
	for (int i = 0, in_group = 0; i < nuser; i++) {
		if (in_group == COUNTER_GROUP_MAX) {
			g++;
			in_group = 0;
		}
		int rc = plan_user(cs, sysfs, user[i], g, why, whylen);
		if (rc)
			return rc;
		in_group++;
		if (i == nuser - 1)
			g++;
	}
	if (cs->ngroups > MRING_MAX_GROUPS) {
		strbuf(why, whylen, "too many events: at most %d counter groups", MRING_MAX_GROUPS);
		return -E2BIG;
	}
	return 0;
}

int counters_plan_emulated(struct counters *cs, char *why, size_t whylen)
{
	static const char *const prec[MFU_EMU_NPREC] = { "fp64", "fp32", "fp16", "bf16" };
	static const char *const width[MFU_EMU_NWIDTH] = { "scalar", "128b", "256b", "512b" };
	static const enum counter_col col[MFU_EMU_NPREC] = { COL_FLOPS_FP64, COL_FLOPS_FP32, COL_FLOPS_FP16,
							    COL_FLOPS_FP16 };
	struct counter *c;
	int n = 0;

	for (int i = 0; i < cs->n; i++) {
		if (strcmp(cs->c[i].kind, "user") == 0) {
			strbuf(why, whylen, "-e %s does not go with --emulate: under the emulator the "
			       "hardware counts the emulator's own work, not the program's", cs->c[i].name);
			return -EINVAL;
		}
		if (cs->c[i].group == 0)
			cs->c[n++] = cs->c[i];
	}
	cs->n = n;
	cs->ngroups = 1;
	for (int g = 1; g < MRING_MAX_GROUPS; g++)
		cs->leader[g] = -1;
	cs->hw_missing[0] = '\0';
	cs->amx_note[0] = '\0';
	cs->emulated_group = 1;
	/* the order of struct mfu_emu_counts: inst[prec][width], then x87 */
	for (int p = 0; p < MFU_EMU_NPREC; p++) {
		for (int w = 0; w < MFU_EMU_NWIDTH; w++) {
			char name[64];
			strbuf(name, sizeof(name), "emu:%s_%s", prec[p], width[w]);
			c = add(cs, name, "emulated", "count", 1, col[p], mfu_emu_lanes(p, w));
			c->emulated = 1;
			strbuf(c->encoding, sizeof(c->encoding), "valgrind --tool=" MFU_EMU_TOOL);
		}
	}
	c = add(cs, "emu:x87_ops", "emulated", "count", 1, COL_NONE, 0);
	c->emulated = 1;
	strbuf(c->encoding, sizeof(c->encoding), "valgrind --tool=" MFU_EMU_TOOL);
	c = add(cs, "emu:instructions", "emulated", "count", 1, COL_INSTRUCTIONS, 0);
	c->emulated = 1;
	strbuf(c->encoding, sizeof(c->encoding), "valgrind --tool=" MFU_EMU_TOOL);
	return 0;
}

static void explain(struct counter *c, int err)
{
	const char *hint = "";

	if (err == -EACCES || err == -EPERM)
		hint = " (perf_event_paranoid forbids it: run as root or lower "
		       "/proc/sys/kernel/perf_event_paranoid)";
	else if (err == -ENOENT || err == -EOPNOTSUPP)
		hint = " (the kernel or the PMU does not provide this event)";
	else if (err == -EINVAL && c->group > 0)
		hint = " (the PMU cannot count this event, or not together with its group)";
	strbuf(c->reason, sizeof(c->reason), "%s%s", strerror(-err), hint);
}

/* Open the plan on @pid (0: the caller), counting from its exec with
 * @on_exec, else at once; lay out the readings. */
static int open_plan(struct counters *cs, pid_t pid, int on_exec)
{
	int opened = 0;
	unsigned off = 0;

	/* counters_plan() refuses more groups than the layout arrays hold */
	for (int g = 0; g < cs->ngroups && g < MRING_MAX_GROUPS; g++) {
		int leader_fd = -1, idx = 0;
		for (int i = 0; i < cs->n; i++) {
			struct counter *c = &cs->c[i];
			int fd;

			if (c->group != g)
				continue;
			if (c->emulated) {
				/* no perf event: libmfu fills the group */
				c->opened = 1;
				c->word = (int)(off + 3 + (unsigned)idx++);
				if (cs->leader[g] < 0)
					cs->leader[g] = i;
				continue;
			}
			c->attr.size = sizeof(c->attr);
			c->attr.inherit = 1;
			c->attr.disabled = on_exec ? 1 : 0;
			c->attr.enable_on_exec = on_exec ? 1 : 0;
			c->attr.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED |
					      PERF_FORMAT_TOTAL_TIME_RUNNING;
			fd = perf_event_open_fd(&c->attr, pid, -1, leader_fd);
			if ((fd == -EACCES || fd == -EPERM) && !c->attr.exclude_kernel) {
				/* perf_event_paranoid >= 2: user-mode only */
				c->attr.exclude_kernel = 1;
				c->attr.exclude_hv = 1;
				fd = perf_event_open_fd(&c->attr, pid, -1, leader_fd);
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
			/* a group's values follow its nr, time_enabled, time_running */
			c->word = (int)(off + 3 + (unsigned)idx++);
			if (leader_fd < 0) {
				leader_fd = fd;
				cs->leader[g] = i;
			}
			opened++;
		}
		cs->group_nr[g] = (uint8_t)idx;
		cs->group_offset[g] = (uint8_t)off;
		off += 3u + (unsigned)idx;
	}
	return opened;
}

int counters_open_self(struct counters *cs)
{
	return open_plan(cs, 0, 1);
}

int counters_open_task(struct counters *cs, pid_t tid)
{
	return open_plan(cs, tid, 0);
}

int counters_open_like(const struct counters *cs, pid_t tid, int *fds, int *leaders)
{
	int opened = 0;

	for (int i = 0; i < cs->n; i++)
		fds[i] = -1;
	for (int g = 0; g < MRING_MAX_GROUPS; g++)
		leaders[g] = -1;
	for (int g = 0; g < cs->ngroups; g++) {
		int leader = -1, ok = 1;
		for (int i = 0; i < cs->n && ok; i++) {
			const struct counter *c = &cs->c[i];
			if (c->group != g || !c->opened)
				continue;
			struct perf_event_attr attr = c->attr; /* as it opened on the first thread */
			int fd = perf_event_open_fd(&attr, tid, -1, leader);
			if (fd == -ESRCH)
				return -ESRCH;
			if (fd < 0) {
				ok = 0; /* a partial group would not match the layout */
				break;
			}
			fds[i] = fd;
			if (leader < 0)
				leader = fd;
		}
		if (!ok) {
			for (int i = 0; i < cs->n; i++)
				if (cs->c[i].group == g && fds[i] >= 0) {
					close(fds[i]);
					fds[i] = -1;
				}
			continue;
		}
		leaders[g] = leader;
		opened++;
	}
	return opened;
}

int counters_read_group(const struct counters *cs, int g, int fd, struct counter_reading *acc)
{
	uint64_t buf[3 + COUNTERS_MAX];
	unsigned o = cs->group_offset[g], nr = cs->group_nr[g];
	ssize_t n;

	if (fd < 0 || nr == 0)
		return -EIO;
	/* ECHILD: a thread the inherited group counts is exiting (its counts
	 * are being folded into the parent's): transient, read again, as
	 * libmfu's markers do */
	for (int tries = 0; tries < 4; tries++) {
		n = read(fd, buf, sizeof(buf));
		if (n >= 0 || errno != ECHILD)
			break;
	}
	if (n < (ssize_t)((3 + nr) * sizeof(uint64_t)) || buf[0] != nr)
		return -EIO;
	acc->data[o] = nr;
	for (unsigned k = 1; k < 3 + nr; k++)
		acc->data[o + k] += buf[k];
	return 0;
}

void counters_reading_from_record(struct counter_reading *r, const struct mring_record *rec)
{
	r->ngroups = rec->ngroups;
	memcpy(r->data, rec->data, sizeof(r->data));
	r->has_lib = (rec->flags & MRING_F_LIB) != 0;
	memcpy(r->lib, rec->lib, sizeof(r->lib));
	r->lib_snap = r->has_lib ? rec->lib_snap : 0;
}

void counters_delta(const struct counters *cs, const struct counter_reading *a,
		    const struct counter_reading *b, struct counter_delta *d)
{
	double scale[MRING_MAX_GROUPS];
	int ok[MRING_MAX_GROUPS];

	memset(d, 0, sizeof(*d));
	d->hw_fraction = -1;
	/* The library-call counters only grow (unsigned difference: exact
	 * across a wrap). Both readings are of one process's counters: a step
	 * and a phase begin and end in the same process. */
	if (a->has_lib && b->has_lib) {
		d->has_lib = 1;
		for (int i = 0; i < MRING_LIB_WORDS; i++)
			d->lib[i] = b->lib[i] - a->lib[i];
	}
	for (int g = 0; g < cs->ngroups; g++) {
		unsigned o = cs->group_offset[g];
		ok[g] = 0;
		scale[g] = 1;
		if (cs->group_nr[g] == 0 || g >= a->ngroups || g >= b->ngroups ||
		    a->data[o] != cs->group_nr[g] || b->data[o] != cs->group_nr[g])
			continue;
		uint64_t en = b->data[o + 1] - a->data[o + 1];
		uint64_t run = b->data[o + 2] - a->data[o + 2];
		if (g > 0 && en > 0) {
			double frac = run == 0 ? 0 : (double)run / (double)en;
			if (d->hw_fraction < 0 || frac < d->hw_fraction)
				d->hw_fraction = frac;
		}
		if (run == 0 && en > 0)
			continue; /* never scheduled: nothing can be said */
		scale[g] = (run && en) ? (double)en / (double)run : 1;
		ok[g] = 1;
	}
	for (int i = 0; i < cs->n; i++) {
		const struct counter *c = &cs->c[i];
		if (!c->opened || !ok[c->group])
			continue;
		d->known[i] = 1;
		d->raw[i] = b->data[c->word] - a->data[c->word];
		d->scaled[i] = (double)d->raw[i] * scale[c->group];
		if (c->col == COL_NONE)
			continue;
		/* User-mode-only switch and migration counts are always 0: the
		 * kernel counts them in kernel mode. Unknown, not 0. */
		if (c->user_only && (c->col == COL_CTX_SWITCHES || c->col == COL_CPU_MIGRATIONS))
			continue;
		d->v[c->col] += is_flops(c->col) ? d->scaled[i] * c->weight : d->scaled[i];
		d->has[c->col] = 1;
	}
}
