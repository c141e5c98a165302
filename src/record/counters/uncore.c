#include "uncore_impl.h"

/* Every DRAM event chosen here counts 64-byte units: a CAS command moves
 * one cache line (SPEC section 3), and the free-running and AMD data
 * counters count 64 B transfers. The kernel's .scale is checked against it. */

static const char *const kind_names[] = {
	[UNCORE_KIND_NONE] = "none",
	[UNCORE_KIND_INTEL_FREE_RUNNING] = "intel_imc_free_running",
	[UNCORE_KIND_INTEL_IMC] = "intel_imc",
	[UNCORE_KIND_AMD_UMC] = "amd_umc",
	[UNCORE_KIND_AMD_DF] = "amd_df",
};

const char *uncore_kind_name(enum uncore_kind kind)
{
	if ((unsigned)kind < ARRAY_SIZE(kind_names))
		return kind_names[kind];
	return "unknown";
}


static const struct want want_free_running[] = {
	/* ICX/SNR server: read/write; TGL/ADL client: data_read/data_write.
	 * ddrt_read/ddrt_write (Optane DC persistent memory) are not DRAM. */
	{ UNCORE_DIR_READ, { "read", "data_read" }, NULL },
	{ UNCORE_DIR_WRITE, { "write", "data_write" }, NULL },
};

static const struct want want_imc[] = {
	/* servers (SNB-EP .. GNR): CAS counts; SNB..ICL client "uncore_imc":
	 * data_reads/data_writes. */
	{ UNCORE_DIR_READ, { "cas_count_read", "data_reads" }, NULL },
	{ UNCORE_DIR_WRITE, { "cas_count_write", "data_writes" }, NULL },
};

static const struct want want_umc[] = {
	{ UNCORE_DIR_READ, { "umc_cas_cmd.rd" }, "event=0x0a,rdwrmask=0x1" },
	{ UNCORE_DIR_WRITE, { "umc_cas_cmd.wr" }, "event=0x0a,rdwrmask=0x2" },
};

static const struct want want_df[] = {
	{ UNCORE_DIR_TOTAL, { "dram_channel_data_controller_0" }, "event=0x07,umask=0x38" },
	{ UNCORE_DIR_TOTAL, { "dram_channel_data_controller_1" }, "event=0x47,umask=0x38" },
	{ UNCORE_DIR_TOTAL, { "dram_channel_data_controller_2" }, "event=0x87,umask=0x38" },
	{ UNCORE_DIR_TOTAL, { "dram_channel_data_controller_3" }, "event=0xc7,umask=0x38" },
	{ UNCORE_DIR_TOTAL, { "dram_channel_data_controller_4" }, "event=0x107,umask=0x38" },
	{ UNCORE_DIR_TOTAL, { "dram_channel_data_controller_5" }, "event=0x147,umask=0x38" },
	{ UNCORE_DIR_TOTAL, { "dram_channel_data_controller_6" }, "event=0x187,umask=0x38" },
	{ UNCORE_DIR_TOTAL, { "dram_channel_data_controller_7" }, "event=0x1c7,umask=0x38" },
};

/* The amd_df "event" field of family 17h-19h before PerfMonV2 (Zen 1-3),
 * "config:0-7,32-35,59-60"; the dram_channel events exist only there. Zen
 * 4's DF ("config:0-7,32-37") counts DRAM differently; amd_umc serves it. */

static const struct {
	enum uncore_kind kind;
	const struct want *want;
	int nwant;
	int grouped; /* put one PMU's events on one CPU in a group */
} plans[] = {
	/* in order of preference */
	{ UNCORE_KIND_INTEL_FREE_RUNNING, want_free_running, ARRAY_SIZE(want_free_running), 1 },
	{ UNCORE_KIND_INTEL_IMC, want_imc, ARRAY_SIZE(want_imc), 1 },
	{ UNCORE_KIND_AMD_UMC, want_umc, ARRAY_SIZE(want_umc), 1 },
	/* 8 channel events on 4 DF counters: alone, so the kernel can
	 * multiplex them one by one (scaled by time_running) */
	{ UNCORE_KIND_AMD_DF, want_df, ARRAY_SIZE(want_df), 0 },
};

/* ---- small parsers ---------------------------------------------------- */

double uncore_unit_bytes(const char *unit)
{
	static const struct { const char *unit; double bytes; } units[] = {
		{ "B", 1 }, { "Bytes", 1 }, { "bytes", 1 }, { "byte", 1 },
		{ "kB", 1e3 }, { "KB", 1e3 }, { "KiB", 1024.0 },
		{ "MB", 1e6 }, { "MiB", 1048576.0 },
		{ "GB", 1e9 }, { "GiB", 1073741824.0 },
		{ "TB", 1e12 }, { "TiB", 1099511627776.0 },
	};

	if (!unit)
		return 0;
	for (size_t i = 0; i < ARRAY_SIZE(units); i++)
		if (strcmp(unit, units[i].unit) == 0)
			return units[i].bytes;
	return 0;
}

/* A cpumask file ("0,56", "0-1", "") -> its ascending distinct CPUs, at most
 * @max of them. */
static int parse_cpulist(const char *s, int *cpus, int max, int *ncpus)
{
	struct cpumap m;
	int err = cpumap_parse(&m, s);

	if (err)
		return err;
	if (m.n > max) {
		cpumap_fini(&m);
		return -E2BIG;
	}
	if (m.n)
		memcpy(cpus, m.cpu, (size_t)m.n * sizeof(*cpus));
	*ncpus = m.n;
	cpumap_fini(&m);
	return 0;
}

/* ---- sysfs ------------------------------------------------------------ */

/* "uncore_imc_free_running_3" etc. -> kind, with the instance number for
 * ordering; NONE for any other PMU. */
static enum uncore_kind classify(const char *name, int *index)
{
	static const struct { const char *prefix; enum uncore_kind kind; int bare_ok; } pfx[] = {
		{ "uncore_imc_free_running", UNCORE_KIND_INTEL_FREE_RUNNING, 1 },
		{ "uncore_imc", UNCORE_KIND_INTEL_IMC, 1 },
		{ "amd_umc", UNCORE_KIND_AMD_UMC, 0 },
		{ "amd_df", UNCORE_KIND_AMD_DF, 1 },
	};

	for (size_t i = 0; i < ARRAY_SIZE(pfx); i++) {
		size_t len = strlen(pfx[i].prefix);
		const char *rest = name + len;
		uint64_t v;

		if (strncmp(name, pfx[i].prefix, len) != 0)
			continue;
		if (*rest == '\0' && pfx[i].bare_ok) {
			*index = -1;
			return pfx[i].kind;
		}
		if (pfx[i].kind == UNCORE_KIND_AMD_DF || rest[0] != '_')
			continue;
		rest++;
		for (const char *p = rest; *p; p++)
			if (!isdigit((unsigned char)*p))
				goto next;
		if (safe_atou64(rest, &v) == 0 && v < 100000) {
			*index = (int)v;
			return pfx[i].kind;
		}
next:;
	}
	return UNCORE_KIND_NONE;
}


static int cmp_candidate(const void *pa, const void *pb)
{
	const struct candidate *a = pa, *b = pb;

	if (a->kind != b->kind)
		return (int)a->kind - (int)b->kind;
	return (a->index > b->index) - (a->index < b->index);
}

static void skip(struct uncore_set *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void skip(struct uncore_set *s, const char *fmt, ...)
{
	va_list ap;

	if (s->nskipped < UNCORE_MAX_SKIPPED) {
		va_start(ap, fmt);
		vsnprintf(s->skipped[s->nskipped], sizeof(s->skipped[0]), fmt, ap);
		va_end(ap);
	}
	s->nskipped++;
}

static void add_note(struct uncore_set *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add_note(struct uncore_set *s, const char *fmt, ...)
{
	size_t used = strlen(s->note);
	va_list ap;

	if (used > 0 && used + 2 < sizeof(s->note)) {
		memcpy(s->note + used, "; ", 3);
		used += 2;
	}
	if (used + 1 >= sizeof(s->note))
		return;
	va_start(ap, fmt);
	vsnprintf(s->note + used, sizeof(s->note) - used, fmt, ap);
	va_end(ap);
}

/* pmu_formats()' word on a malformed format/ file of the PMU being planned
 * (@ctx: struct malformed_ctx). An alias using the field fails with a
 * reason of its own. */
struct malformed_ctx {
	struct uncore_set *s;
	const char *pmu;
};

static void format_malformed(void *ctx, const char *field, const char *text)
{
	struct malformed_ctx *m = ctx;
	skip(m->s, "%s: format/%s '%s' is malformed", m->pmu, field, text);
}

/* One wanted event of one PMU: its alias (sysfs, else built in), encoding,
 * scale and unit. 0, or -errno with @why saying what is wrong. */
static int resolve(struct uncore_set *s, const char *root, const char *pmu, const struct want *w,
		   const struct pmu_format *fmt, int nfmt, struct uncore_event *ev,
		   char *why, size_t why_len)
{
	struct pmu_alias a;
	const char *name = NULL;
	double ub, bpc;
	int err;

	for (size_t i = 0; i < ARRAY_SIZE(w->names) && w->names[i] && !name; i++) {
		if (pmu_alias(root, pmu, w->names[i], &a) == 0 &&
		    strbuf(ev->alias, sizeof(ev->alias), "%s", a.terms) == 0)
			name = w->names[i];
	}
	if (name) {
		ev->source = "sysfs alias";
		strbuf(ev->name, sizeof(ev->name), "%s", name);
		if (a.has_scale && !(a.scale > 0)) {
			strbuf(why, why_len, "%s/%s: scale '%s' is not a positive number", pmu, name, a.scale_text);
			return -EINVAL;
		}
		ev->scale = a.scale;
		if (a.has_unit && strbuf(ev->unit, sizeof(ev->unit), "%s", a.unit) != 0) {
			strbuf(why, why_len, "%s/%s: unit '%.32s' is too long", pmu, name, a.unit);
			return -EINVAL;
		}
		if (!a.has_scale && !a.has_unit) {
			/* a bare count of 64-byte lines */
			ev->scale = LINE_BYTES;
			strbuf(ev->unit, sizeof(ev->unit), "B");
		} else if (!a.has_unit) {
			strbuf(why, why_len, "%s/%s: has a .scale but no .unit, so its size is unknown",
			       pmu, name);
			return -EINVAL;
		} else if (!a.has_scale) {
			ev->scale = 1;
		}
	} else if (w->builtin) {
		ev->source = "perf event table";
		strbuf(ev->name, sizeof(ev->name), "%s", w->names[0]);
		strbuf(ev->alias, sizeof(ev->alias), "%s", w->builtin);
		ev->scale = LINE_BYTES;
		strbuf(ev->unit, sizeof(ev->unit), "B");
	} else {
		strbuf(why, why_len, "%s: no %s event (events/%s)", pmu,
		       w->dir == UNCORE_DIR_READ ? "read" : "write", w->names[0]);
		return -ENOENT;
	}

	err = pmu_parse_terms(ev->alias, fmt, nfmt, &ev->attr);
	if (err) {
		strbuf(why, why_len, "%s/%s: cannot encode '%s': %s", pmu, ev->name, ev->alias,
		       err == -ENOENT ? "a term names no format/ field" :
		       err == -ERANGE ? "a value is too wide for its field" : "malformed");
		return err;
	}
	ub = uncore_unit_bytes(ev->unit);
	if (ub <= 0) {
		strbuf(why, why_len, "%s/%s: unknown unit '%s'", pmu, ev->name, ev->unit);
		return -EINVAL;
	}
	bpc = ev->scale * ub;
	if (fabs(bpc - LINE_BYTES) > LINE_BYTES * 1e-6) {
		/* Linux before 5.10 (and its stable kernels before the fix) gave
		 * ICX/SNR free-running read/write a scale of 3.814697266e-6 MiB
		 * = 4 B per count, 16 times too small: the counters count 64 B. */
		add_note(s, "%s/%s: the kernel's scale %.10g %s is %.6g B per count, not 64: using 64",
			 pmu, ev->name, ev->scale, ev->unit, bpc);
		ev->scale = LINE_BYTES / ub;
	}
	ev->dir = w->dir;
	return 0;
}

/* Plan one PMU's events: all its wanted events on every CPU of its
 * cpumask, or nothing (with a reason). Returns the number added. */
static int plan_pmu(struct uncore_set *s, const char *root, const char *pmu, int p)
{
	struct uncore_event proto[ARRAY_SIZE(want_df)];
	struct pmu_format fmt[PMU_MAX_FORMATS];
	struct malformed_ctx mctx = { s, pmu };
	char text[4096], why[192];
	int cpus[UNCORE_MAX_SOCKETS], ncpus, nfmt, type, err, added = 0;
	int nwant = plans[p].nwant;

	if (pmu_type(root, pmu, &type) != 0 || type < 0) {
		skip(s, "%s: no readable type", pmu);
		return 0;
	}
	err = pmu_read(root, pmu, "cpumask", text, sizeof(text));
	if (err == 0)
		err = parse_cpulist(text, cpus, UNCORE_MAX_SOCKETS, &ncpus);
	if (err || ncpus == 0) {
		skip(s, "%s: cpumask %s", pmu, err == -E2BIG ? "names more CPUs than sockets we handle" :
		     err ? "unreadable or malformed" : "is empty (no online CPU collects it)");
		return 0;
	}
	err = pmu_formats(root, pmu, fmt, &nfmt, format_malformed, &mctx);
	if (err) {
		skip(s, "%s: no format/ directory", pmu);
		return 0;
	}
	if (plans[p].kind == UNCORE_KIND_AMD_DF) {
		const struct pmu_format *ev_fmt = NULL;
		for (int i = 0; i < nfmt; i++)
			if (strcmp(fmt[i].name, "event") == 0)
				ev_fmt = &fmt[i];
		if (!ev_fmt || ev_fmt->config != 0 || ev_fmt->mask != DF_EVENT_MASK_ZEN1_3) {
			skip(s, "%s: not a Zen 1-3 data fabric (its event field differs), whose DRAM "
			     "channel events are known; Zen 4 and later count DRAM with amd_umc PMUs "
			     "(Linux 6.7+)", pmu);
			return 0;
		}
	}
	for (int w = 0; w < nwant; w++) {
		memset(&proto[w], 0, sizeof(proto[w]));
		err = resolve(s, root, pmu, &plans[p].want[w], fmt, nfmt, &proto[w], why, sizeof(why));
		if (err) {
			skip(s, "%s", why);
			return 0;
		}
		strbuf(proto[w].pmu, sizeof(proto[w].pmu), "%s", pmu);
		proto[w].attr.type = (uint32_t)type;
		proto[w].attr.size = sizeof(proto[w].attr);
	}
	if (s->n + ncpus * nwant > UNCORE_MAX_EVENTS) {
		skip(s, "%s: more than %d events in all: left out", pmu, UNCORE_MAX_EVENTS);
		return 0;
	}
	for (int c = 0; c < ncpus; c++) {
		int leader = s->n;
		for (int w = 0; w < nwant; w++) {
			struct uncore_event *ev = &s->ev[s->n];
			*ev = proto[w];
			ev->cpu = cpus[c];
			ev->fd = -1;
			ev->leader = plans[p].grouped && w > 0 && w < GROUP_MAX ? leader : s->n;
			s->n++;
			added++;
		}
	}
	return added;
}

static void assign_sockets(struct uncore_set *s)
{
	int keep = 0;

	s->nsockets = 0;
	for (int i = 0; i < s->n; i++) {
		int cpu = s->ev[i].cpu, pos = s->nsockets, found = 0;
		for (int k = 0; k < s->nsockets; k++)
			if (s->socket_cpu[k] == cpu)
				found = 1;
		if (found)
			continue;
		if (s->nsockets >= UNCORE_MAX_SOCKETS)
			continue;
		while (pos > 0 && s->socket_cpu[pos - 1] > cpu)
			pos--;
		memmove(s->socket_cpu + pos + 1, s->socket_cpu + pos,
			(size_t)(s->nsockets - pos) * sizeof(int));
		s->socket_cpu[pos] = cpu;
		s->nsockets++;
	}
	for (int i = 0; i < s->n; i++) {
		struct uncore_event *ev = &s->ev[i];
		ev->socket = -1;
		for (int k = 0; k < s->nsockets; k++)
			if (s->socket_cpu[k] == ev->cpu)
				ev->socket = k;
	}
	/* more sockets than we keep: drop their events (groups stay whole,
	 * as all events of a group share a CPU) */
	for (int i = 0; i < s->n; i++) {
		if (s->ev[i].socket < 0) {
			s->complete = 0;
			continue;
		}
		s->ev[keep] = s->ev[i];
		s->ev[keep].leader -= i - keep;
		keep++;
	}
	if (keep != s->n)
		skip(s, "more than %d sockets: the events of the others are left out", UNCORE_MAX_SOCKETS);
	s->n = keep;
}

int uncore_discover(const char *sysfs_root, struct uncore_set *out)
{
	struct candidate *cand = NULL;
	struct dirent *de;
	int ncand = 0, err = 0, chosen = -1;
	int count[ARRAY_SIZE(kind_names)] = { 0 };
	DIR *d = NULL;

	if (!sysfs_root || !out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	out->complete = 1;
	for (int i = 0; i < UNCORE_MAX_EVENTS; i++)
		out->ev[i].fd = -1;

	d = opendir(sysfs_root);
	if (!d) {
		err = -errno;
		strbuf(out->missing, sizeof(out->missing), "cannot read %s: %s", sysfs_root,
		       strerror(-err));
		goto out;
	}
	cand = calloc(MAX_CANDIDATES, sizeof(*cand));
	if (!cand) {
		err = -ENOMEM;
		goto out;
	}
	while ((de = readdir(d)) != NULL && ncand < MAX_CANDIDATES) {
		int index;
		enum uncore_kind kind = classify(de->d_name, &index);
		if (kind == UNCORE_KIND_NONE || strlen(de->d_name) >= sizeof(cand[0].name))
			continue;
		strbuf(cand[ncand].name, sizeof(cand[ncand].name), "%s", de->d_name);
		cand[ncand].kind = kind;
		cand[ncand].index = index;
		count[kind]++;
		ncand++;
	}
	qsort(cand, (size_t)ncand, sizeof(*cand), cmp_candidate);

	for (size_t p = 0; p < ARRAY_SIZE(plans) && chosen < 0; p++) {
		int events = 0, pmus = 0, skipped_before = out->nskipped;

		for (int i = 0; i < ncand; i++) {
			if (cand[i].kind != plans[p].kind)
				continue;
			pmus++;
			if (plan_pmu(out, sysfs_root, cand[i].name, (int)p) > 0)
				events++;
		}
		if (events > 0) {
			chosen = (int)p;
			out->kind = plans[p].kind;
			if (events < pmus)
				out->complete = 0;
		} else if (pmus > 0) {
			/* e.g. Sapphire Rapids: its free-running IMC counters count
			 * clocks only; fall back to the CAS counts. Their reasons
			 * are not the chosen kind's: keep the first in the note. */
			add_note(out, "%d %s PMU%s without DRAM byte events (%s)", pmus,
				 uncore_kind_name(plans[p].kind), pmus == 1 ? "" : "s",
				 skipped_before < UNCORE_MAX_SKIPPED && out->nskipped > skipped_before ?
				 out->skipped[skipped_before] : "no reason recorded");
			out->nskipped = skipped_before;
		}
	}
	if (chosen < 0) {
		out->kind = UNCORE_KIND_NONE;
		if (ncand == 0)
			strbuf(out->missing, sizeof(out->missing),
			       "no memory-controller PMU in %s (no uncore_imc*, amd_umc* or amd_df: usual "
			       "on virtual machines, which do not expose the host's uncore), so DRAM bytes "
			       "and bandwidth utilization are unknown", sysfs_root);
		else
			strbuf(out->missing, sizeof(out->missing),
			       "memory-controller PMUs found but none has a DRAM traffic event this tool "
			       "knows (%s), so DRAM bytes are unknown", out->note[0] ? out->note : "see skipped");
		goto out;
	}
	assign_sockets(out);
	out->split = plans[chosen].kind != UNCORE_KIND_AMD_DF;
out:
	free(cand);
	if (d)
		closedir(d);
	return err;
}

