/*
 * mfu-calibrate: measure this machine's peak FLOP/s (FMA loops per ISA and
 * dtype) and memory bandwidth (STREAM-style read, copy, triad), on one core
 * and on all the CPUs this process may use, print them next to the spec
 * peaks, and save them as the machine profile (profile.h).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "flops.h"
#include "machine.h"
#include "asuser.h"
#include "profile.h"
#include "stream.h"
#include "team.h"
#include "util.h"

#define PROG "mfu-calibrate"
#define MAX_ROWS 64 /* one calibration's figures: kernels x dtypes x scopes + bandwidth */

struct options {
	int json;
	int save;
	int quick;
	const char *profile;    /* NULL: the default path */
};

/* How long to measure. The whole calibration must stay well under 10 s
 * on a 2-CPU machine with AVX-512 (8 FLOP kernels, 2 scopes). */
struct plan {
	double flops_rep_s;     /* one repetition of a FLOP kernel */
	int flops_reps;
	int stream_reps;
	double clock_rep_s;
	int clock_reps;
	uint64_t stream_cap;    /* bytes swept at most; 0: 4x the LLC */
};

static const struct plan plan_full = { 0.020, 5, 5, 0.005, 5, 0 };
static const struct plan plan_quick = { 0.010, 3, 2, 0.003, 3, 512ull << 20 };

struct row {
	struct profile_peak p;
	double spec;            /* spec peak for kind, dtype, scope; 0 = none */
	char spec_detail[256];
	double seconds;         /* wall time of the best repetition */
	double cpu_share;       /* team_timing.cpu_share of that repetition */
	double clock_hz;        /* core flops rows: clock measured around the
				 * repetitions; else 0 */
};

struct calibration {
	struct machine m;
	int cpus[TEAM_MAX];
	int ncpus;
	char cpulist[256];      /* the CPUs of the "all" scope */
	double clock_hz;        /* at the start, 0 if not measured */
	char stream_size[512];
	struct row rows[MAX_ROWS];
	int nrows;
	double elapsed_s;
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: " PROG " [options]\n"
		"\n"
		"Measure this machine's peak FLOP/s (FMA loops for each ISA and dtype the CPU\n"
		"has: AVX-512, AVX2+FMA, SSE2, AVX512_BF16, AVX512_FP16) and memory bandwidth\n"
		"(STREAM-style read, copy and triad), on one core and on all the CPUs this\n"
		"process may use, next to the spec peaks; save them as the machine profile.\n"
		"Takes a few seconds (--quick: about half, with a bandwidth sweep of at most\n"
		"512 MiB).\n"
		"\n"
		"options:\n"
		"      --format FORMAT  table (default) or json: an array of objects with kind,\n"
		"                       dtype, scope, kernel, value (FLOP/s or bytes/s), spec\n"
		"      --save           save the profile (default)\n"
		"      --no-save        do not save the profile\n"
		"      --profile FILE   profile to write (default\n"
		"                       $XDG_CACHE_HOME/mfu/profile-HOST.sqlite, else\n"
		"                       ~/.cache/mfu/profile-HOST.sqlite)\n"
		"      --quick          fewer and shorter repetitions, a smaller bandwidth sweep\n"
		"  -h, --help           show this help\n"
		"  -V, --version        show the version\n"
		"\n"
		"Run it on an otherwise idle machine, with the CPU set (taskset, cgroup) the\n"
		"programs you will record get: the profile applies only to that CPU set.\n");
}

/* Returns CLI_GO_ON, else the exit status (cli.h). */
static int parse_options(int argc, char **argv, struct options *o)
{
	enum { OPT_FORMAT = 256, OPT_SAVE, OPT_NO_SAVE, OPT_PROFILE, OPT_QUICK, OPT_VERSION };
	static const struct option longopts[] = {
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ "save", no_argument, NULL, OPT_SAVE },
		{ "no-save", no_argument, NULL, OPT_NO_SAVE },
		{ "profile", required_argument, NULL, OPT_PROFILE },
		{ "quick", no_argument, NULL, OPT_QUICK },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0, 0, 0, 0 },
	};
	int c;

	*o = (struct options){ .save = 1 };
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":hV", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_FORMAT:
			if (strcmp(optarg, "table") == 0)
				o->json = 0;
			else if (strcmp(optarg, "json") == 0)
				o->json = 1;
			else
				return cli_usage_error(PROG, "unknown format '%s' (use table or json)", optarg);
			break;
		case OPT_SAVE: o->save = 1; break;
		case OPT_NO_SAVE: o->save = 0; break;
		case OPT_PROFILE:
			if (!*optarg)
				return cli_usage_error(PROG, "--profile needs a file name");
			o->profile = optarg;
			break;
		case OPT_QUICK: o->quick = 1; break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V': return cli_version(PROG, MFU_VERSION);
		default: return cli_option_error(PROG, c, argv, longopts);
		}
	}
	if (optind < argc)
		return cli_usage_error(PROG, "unexpected argument '%s'", argv[optind]);
	return CLI_GO_ON;
}

static void cpulist_of(const int *cpus, int n, char *buf, size_t len)
{
	size_t k = 0;

	buf[0] = '\0';
	for (int i = 0; i < n && k < len; i++) {
		int j = i;
		while (j + 1 < n && cpus[j + 1] == cpus[j] + 1)
			j++;
		if (j > i)
			k += (size_t)snprintf(buf + k, len - k, "%s%d-%d", k ? "," : "", cpus[i], cpus[j]);
		else
			k += (size_t)snprintf(buf + k, len - k, "%s%d", k ? "," : "", cpus[i]);
		i = j;
	}
}

/* The 1-minute load average (/proc/loadavg), -1 when unreadable: the
 * profile keeps it beside each figure, to say what else ran. */
static double loadavg(void)
{
	char buf[128];
	double v;

	if (read_text_file("/proc/loadavg", buf, sizeof(buf)) != 0 || sscanf(buf, "%lf", &v) != 1 || !(v >= 0))
		return -1;
	return v;
}

static struct row *add_row(struct calibration *c)
{
	struct row *r;

	if (c->nrows >= MAX_ROWS)
		return NULL;
	r = &c->rows[c->nrows++];
	memset(r, 0, sizeof(*r));
	r->p.measured_unix_s = (int64_t)time(NULL);
	r->p.loadavg = loadavg();
	return r;
}

/* What the profile keeps of a row beside its figure: the CPUs and threads
 * it ran on, and how much of the time they had the CPUs. */
static void set_conditions(const struct calibration *c, struct row *r, struct team *t)
{
	strbuf(r->p.cpus, sizeof(r->p.cpus), "%s", c->m.allowed_cpus);
	r->p.ncpu = c->m.ncpu;
	r->p.threads = team_size(t);
	r->p.cpu_share = r->cpu_share > 0 ? r->cpu_share : 1e-3;
	r->p.disturbed = r->cpu_share < TEAM_SHARE_OK;
}

static const char *scope_where(const struct calibration *c, struct team *t, char *buf, size_t len)
{
	if (team_size(t) == 1)
		snprintf(buf, len, "1 thread on CPU %d", team_cpu(t, 0));
	else
		snprintf(buf, len, "%d threads on CPUs %s", team_size(t), c->cpulist);
	return buf;
}

/* A note for a figure measured while another task shared a CPU. */
static const char *disturbed(double cpu_share, char *buf, size_t len)
{
	if (cpu_share >= TEAM_SHARE_OK)
		return "";
	snprintf(buf, len, " (disturbed: the threads ran %.0f%% of the time)", cpu_share * 100);
	return buf;
}

static int measure_flops(struct calibration *c, const struct plan *pl, struct team *core,
			 struct team *all)
{
	const struct flops_kernel *ks[FLOPS_MAX_KERNELS];
	int nk = flops_kernels(c->m.isa, ks, FLOPS_MAX_KERNELS);

	for (int i = 0; i < nk; i++) {
		const struct flops_kernel *k = ks[i];
		uint64_t iters;
		int err = flops_iterations(k, core, pl->flops_rep_s, &iters);
		if (err)
			return err;
		for (int s = 0; s < 2; s++) {
			struct team *t = s == 0 ? core : all;
			struct row *r = add_row(c);
			double ncpu = s == 0 ? 1.0 : c->m.ncores; /* FLOP peaks count cores */
			char where[320], clock[128] = "", share[96];
			struct flops_result fr;

			if (!r)
				return -ENOSPC;
			err = flops_measure(k, t, iters, pl->flops_reps, &fr);
			if (err)
				return err;
			r->p.value = fr.flops;
			r->seconds = fr.seconds;
			r->cpu_share = fr.cpu_share;
			r->clock_hz = fr.clock_hz;
			set_conditions(c, r, t);
			strbuf(r->p.kind, sizeof(r->p.kind), "flops");
			strbuf(r->p.dtype, sizeof(r->p.dtype), "%s", machine_dtype_name(k->dtype));
			strbuf(r->p.scope, sizeof(r->p.scope), "%s", s == 0 ? "core" : "all");
			strbuf(r->p.kernel, sizeof(r->p.kernel), "%s", k->name);
			if (r->clock_hz > 0)
				strbuf(clock, sizeof(clock), "; core clock up to %.2f GHz around it "
				       "(add chain): %.1f %s/cycle", r->clock_hz / 1e9,
				       r->p.value / r->clock_hz, machine_dtype_is_integer(k->dtype) ? "op" : "FLOP");
			strbuf(r->p.detail, sizeof(r->p.detail),
			       "measured: %s (%s), %s, best of %d x %.0f ms%s%s", k->name, k->basis,
			       scope_where(c, t, where, sizeof(where)), fr.reps, r->seconds * 1e3,
			       disturbed(r->cpu_share, share, sizeof(share)), clock);
			if (machine_peak_flops(&c->m, k->dtype, ncpu, &r->spec, r->spec_detail,
					       sizeof(r->spec_detail)) != 0)
				r->spec = 0;
		}
	}
	return 0;
}

static int measure_stream(struct calibration *c, const struct plan *pl, struct team *core,
			  struct team *all)
{
	static const char *const counted[STREAM_NKINDS] = {
		"8 B read per element",
		"2 x 8 B per element (dst, src)",
		"3 x 8 B per element (a, b, c)",
	};
	const struct stream_kernels *k = stream_kernels_for(c->m.isa);
	double spec_bw = 0;
	char spec_detail[256] = "";
	size_t bytes;
	int err;

	if (!k)
		return -ENOTSUP;
	err = stream_size(c->cpus, c->ncpus, pl->stream_cap, &bytes, c->stream_size, sizeof(c->stream_size));
	if (err)
		return err;
	if (machine_peak_bw(&c->m, &spec_bw, spec_detail, sizeof(spec_detail)) != 0)
		spec_bw = 0;
	for (int s = 0; s < 2; s++) {
		struct team *t = s == 0 ? core : all;
		struct stream_result res[STREAM_NKINDS];
		char where[320];

		err = stream_measure(k, t, bytes, pl->stream_reps, res);
		if (err)
			return err;
		for (int i = 0; i < STREAM_NKINDS; i++) {
			struct row *r = add_row(c);
			char other[96] = "", share[96];

			if (!r)
				return -ENOSPC;
			strbuf(r->p.kind, sizeof(r->p.kind), "bandwidth");
			strbuf(r->p.scope, sizeof(r->p.scope), "%s", s == 0 ? "core" : "all");
			strbuf(r->p.kernel, sizeof(r->p.kernel), "%s", res[i].kernel);
			r->p.value = res[i].bytes_per_s;
			r->seconds = res[i].seconds;
			r->cpu_share = res[i].cpu_share;
			set_conditions(c, r, t);
			if (res[i].other)
				strbuf(other, sizeof(other), "; %s %.1f GB/s", res[i].other,
				       res[i].other_bytes_per_s / 1e9);
			strbuf(r->p.detail, sizeof(r->p.detail),
			       "measured: %s (%s %s vectors), %s, %s; STREAM bytes: %s, write-allocate "
			       "not counted; best of %d%s%s",
			       res[i].kernel, k->isa, i == STREAM_READ ? "load" : "load/store",
			       scope_where(c, t, where, sizeof(where)), c->stream_size, counted[i],
			       res[i].reps, disturbed(r->cpu_share, share, sizeof(share)), other);
			/* The spec bandwidth is the socket's: there is no spec
			 * figure for one core. */
			if (s == 1 && spec_bw > 0) {
				r->spec = spec_bw;
				strbuf(r->spec_detail, sizeof(r->spec_detail), "%s", spec_detail);
			}
		}
	}
	return 0;
}

/* The row a recorder uses for each kind, dtype and scope: the fastest
 * undisturbed FLOP kernel; the triad for bandwidth, as STREAM reports it
 * (the profile's rule: profile_mark_best()). */
static void mark_best(struct calibration *c)
{
	static struct profile_peak p[MAX_ROWS];

	for (int i = 0; i < c->nrows; i++)
		p[i] = c->rows[i].p;
	profile_mark_best(p, c->nrows);
	for (int i = 0; i < c->nrows; i++)
		c->rows[i].p.best = p[i].best;
}

struct out {
	char *buf;
	size_t len, cap;
	int err;
};

static void out_printf(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void out_printf(struct out *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (o->err)
		return;
	for (;;) {
		size_t room = o->cap - o->len;
		va_start(ap, fmt);
		n = vsnprintf(o->buf ? o->buf + o->len : NULL, room, fmt, ap);
		va_end(ap);
		if (n < 0) {
			o->err = -EIO;
			return;
		}
		if ((size_t)n < room) {
			o->len += (size_t)n;
			return;
		}
		if (array_grow(&o->buf, &o->cap, o->len + (size_t)n + 1, 1)) {
			o->err = -ENOMEM;
			return;
		}
	}
}

static void out_string(struct out *o, const char *s)
{
	if (!o->err && !s) {
		out_printf(o, "null");
		return;
	}
	if (!o->err && json_append_string(&o->buf, &o->len, &o->cap, s, strlen(s)))
		o->err = -ENOMEM;
}

static int print_json(const struct calibration *c)
{
	struct out o = { 0 };
	int err;

	out_printf(&o, "[");
	for (int i = 0; i < c->nrows; i++) {
		const struct row *r = &c->rows[i];
		out_printf(&o, "%s\n  {\"kind\": ", i ? "," : "");
		out_string(&o, r->p.kind);
		out_printf(&o, ", \"dtype\": ");
		out_string(&o, r->p.dtype[0] ? r->p.dtype : NULL);
		out_printf(&o, ", \"scope\": ");
		out_string(&o, r->p.scope);
		out_printf(&o, ", \"kernel\": ");
		out_string(&o, r->p.kernel);
		out_printf(&o, ", \"value\": %.6e, \"spec\": ", r->p.value);
		if (r->spec > 0)
			out_printf(&o, "%.6e, \"ratio\": %.4f", r->spec, r->p.value / r->spec);
		else
			out_printf(&o, "null, \"ratio\": null");
		out_printf(&o, ", \"seconds\": %.6f, \"cpu_share\": %.3f, \"disturbed\": %s, \"threads\": %d, "
			   "\"best\": %s", r->seconds, r->cpu_share, r->p.disturbed ? "true" : "false", r->p.threads,
			   r->p.best ? "true" : "false");
		if (r->p.loadavg >= 0)
			out_printf(&o, ", \"loadavg\": %.2f", r->p.loadavg);
		else
			out_printf(&o, ", \"loadavg\": null");
		if (r->clock_hz > 0)
			out_printf(&o, ", \"clock_hz\": %.6e", r->clock_hz);
		else
			out_printf(&o, ", \"clock_hz\": null");
		out_printf(&o, ", \"detail\": ");
		out_string(&o, r->p.detail);
		out_printf(&o, ", \"spec_detail\": ");
		out_string(&o, r->spec > 0 ? r->spec_detail : NULL);
		out_printf(&o, "}");
	}
	out_printf(&o, "\n]\n");
	err = o.err;
	if (!err && fwrite(o.buf, 1, o.len, stdout) != o.len)
		err = -EIO;
	free(o.buf);
	return err;
}

static void format_value(char *buf, size_t len, const char *kind, const char *dtype, double v)
{
	if (!(v > 0))
		snprintf(buf, len, "-");
	else if (strcmp(kind, "flops") == 0 && strcmp(dtype, "int8") == 0)
		snprintf(buf, len, "%.1f Gop/s", v / 1e9); /* integer ops, not FLOPs */
	else if (strcmp(kind, "flops") == 0)
		snprintf(buf, len, "%.1f GFLOP/s", v / 1e9);
	else
		snprintf(buf, len, "%.1f GB/s", v / 1e9);
}

static int print_table(const struct calibration *c)
{
	const struct machine *m = &c->m;
	char isa[256];
	int shown[MACHINE_NDTYPES][2] = { { 0 } };

	machine_isa_string(m->isa, isa, sizeof(isa));
	printf("machine: %s [%s], CPUs %s (%g), nominal %.2f GHz (%s)", m->name, m->uarch,
	       m->allowed_cpus, m->ncpu, m->nominal_hz / 1e9,
	       m->nominal_hz_source[0] ? m->nominal_hz_source : "unknown");
	if (c->clock_hz > 0)
		printf(", clock %.2f GHz at the start (add chain)", c->clock_hz / 1e9);
	printf("\nisa: %s\n\n", isa);
	/* Columns as wide as their widest cell: a big machine's figures are
	 * wider than a laptop's. */
	static char cells[MAX_ROWS + 1][7][40];
	static const char *const head[7] = { "kind", "dtype", "scope", "kernel", "measured", "spec",
					    "ratio" };
	int width[7] = { 0 };

	for (int j = 0; j < 7; j++)
		snprintf(cells[0][j], sizeof(cells[0][j]), "%s", head[j]);
	for (int i = 0; i < c->nrows; i++) {
		const struct row *r = &c->rows[i];
		char (*cell)[40] = cells[i + 1];

		snprintf(cell[0], sizeof(cell[0]), "%s", r->p.kind);
		snprintf(cell[1], sizeof(cell[1]), "%s", r->p.dtype[0] ? r->p.dtype : "-");
		snprintf(cell[2], sizeof(cell[2]), "%s", r->p.scope);
		snprintf(cell[3], sizeof(cell[3]), "%s%s%s", r->p.kernel, r->p.best || r->p.disturbed ? " " : "",
			 r->p.best && r->p.disturbed ? "*!" : r->p.best ? "*" : r->p.disturbed ? "!" : "");
		format_value(cell[4], sizeof(cell[4]), r->p.kind, r->p.dtype, r->p.value);
		format_value(cell[5], sizeof(cell[5]), r->p.kind, r->p.dtype, r->spec);
		if (r->spec > 0)
			snprintf(cell[6], sizeof(cell[6]), "%.2f", r->p.value / r->spec);
		else
			snprintf(cell[6], sizeof(cell[6]), "-");
	}
	for (int i = 0; i <= c->nrows; i++)
		for (int j = 0; j < 7; j++)
			if ((int)strlen(cells[i][j]) > width[j])
				width[j] = (int)strlen(cells[i][j]);
	for (int i = 0; i <= c->nrows; i++) {
		/* Text left-aligned, numbers right-aligned. */
		for (int j = 0; j < 7; j++)
			printf(j < 4 ? "%-*s  " : j < 6 ? "%*s  " : "%*s\n", width[j], cells[i][j]);
	}
	printf("\n* the figure mfu-record uses for that kind, dtype and scope: the fastest FLOP\n"
	       "  kernel; the triad for bandwidth, as STREAM reports it\n");
	for (int i = 0; i < c->nrows; i++)
		if (c->rows[i].p.disturbed) {
			printf("! disturbed: another task shared the CPUs (the threads ran less than %.0f%% of the\n"
			       "  time): the figure is too low, and never a peak mfu-record uses\n", TEAM_SHARE_OK * 100);
			break;
		}
	printf("bandwidth: each kernel sweeps %s;\n"
	       "  STREAM byte counts (read 8 B, copy 16 B, triad 24 B per element), write-allocate\n"
	       "  traffic not counted; \"_nt\": non-temporal stores were faster\n", c->stream_size);
	for (int i = 0; i < c->nrows; i++) {
		const struct row *r = &c->rows[i];
		int d = machine_dtype_parse(r->p.dtype), s = strcmp(r->p.scope, "core") != 0;
		if (r->spec > 0 && d >= 0 && !shown[d][s]) {
			shown[d][s] = 1;
			printf("spec %s %s: %s\n", r->p.dtype, r->p.scope, r->spec_detail);
		}
	}
	for (int i = 0; i < c->nrows; i++)
		if (c->rows[i].spec > 0 && strcmp(c->rows[i].p.kind, "bandwidth") == 0) {
			printf("spec bandwidth: %s\n", c->rows[i].spec_detail);
			break;
		}
	printf("calibration took %.1f s\n", c->elapsed_s);
	return ferror(stdout) ? -EIO : 0;
}

static void warn_disturbed(const struct calibration *c)
{
	double low = 1.0;
	int n = 0;

	for (int i = 0; i < c->nrows; i++)
		if (c->rows[i].cpu_share < TEAM_SHARE_OK) {
			n++;
			low = c->rows[i].cpu_share < low ? c->rows[i].cpu_share : low;
		}
	if (n)
		fprintf(stderr, PROG ": warning: other tasks shared the CPUs during %d of %d "
			"measurements (the threads ran as little as %.0f%% of the time): those figures "
			"are too low, and are never used as peaks; calibrate on an idle machine\n", n, c->nrows,
			low * 100);
}

/* What the save did with the disturbed figures. */
static void say_saved(const struct profile_calibration *s)
{
	char when[32];
	time_t t = (time_t)s->kept_since;
	struct tm tm;

	if (s->kept > 0) {
		gmtime_r(&t, &tm);
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M UTC", &tm);
		fprintf(stderr, PROG ": kept the earlier undisturbed figures (measured since %s) in place of %d "
			"of the disturbed ones: a disturbed measurement never replaces one that was not\n", when,
			s->kept);
	}
	if (s->disturbed > s->kept)
		fprintf(stderr, PROG ": %d disturbed figure%s had no earlier undisturbed one: saved marked "
			"disturbed, which mfu-record never uses as a peak (it takes one core's undisturbed figure "
			"times the cores, or the spec, and says so); run mfu-calibrate again when the machine is "
			"quiet\n", s->disturbed - s->kept, s->disturbed - s->kept == 1 ? "" : "s");
}

static int save_profile(const struct calibration *c, const struct options *o)
{
	static struct profile_peak peaks[MAX_ROWS + 1];
	struct profile_calibration saved;
	char why[1024], path[4096];
	int err;

	int n = 0;
	double clock = c->clock_hz;
	const char *when = "at the start";

	for (int i = 0; i < c->nrows && n < MAX_ROWS + 1; i++) {
		peaks[n++] = c->rows[i].p;
		/* the clock while the FMA loops ran: what FLOP peaks scale with */
		if (c->rows[i].clock_hz > clock) {
			clock = c->rows[i].clock_hz;
			when = "around the FLOP kernels (the highest)";
		}
	}
	/* The measured core clock, for the recorder's peak texts: a VM's TSC
	 * rate (its "cpu MHz") is not the clock its cores run at. */
	if (clock > 0 && n < MAX_ROWS + 1) {
		struct profile_peak *p = &peaks[n++];
		memset(p, 0, sizeof(*p));
		snprintf(p->kind, sizeof(p->kind), "clock");
		snprintf(p->scope, sizeof(p->scope), "core");
		snprintf(p->kernel, sizeof(p->kernel), "add_chain");
		p->value = clock;
		p->best = 1;
		p->measured_unix_s = c->rows[0].p.measured_unix_s;
		p->loadavg = c->rows[0].p.loadavg;
		p->cpu_share = 1; /* timed in thread CPU time: a shared CPU does not slow it */
		snprintf(p->detail, sizeof(p->detail), "core clock %.2f GHz: a chain of dependent adds (one per "
			 "cycle) timed %s on CPU %d", clock / 1e9, when, c->cpus[0]);
	}
	/* Under sudo the profile is the invoking user's, made as them: root's
	 * files in their cache would be unreadable to their own runs, and
	 * root would follow their links (docs/calibrate.md). */
	struct asuser u;
	struct asuser_saved sv;
	char user_path[4096];
	const char *file = o->profile;
	if (asuser_from_sudo(&u) != 0)
		memset(&u, 0, sizeof(u));
	if (!file && u.active && profile_user_path(u.uid, user_path, sizeof(user_path)) == 0)
		file = user_path;
	err = asuser_enter(&u, &sv);
	if (err) {
		fprintf(stderr, PROG ": cannot save the profile as uid %d: %s\n", (int)u.uid, strerror(-err));
		return err;
	}
	err = profile_save(file, &c->m, peaks, n, &saved, why, sizeof(why));
	asuser_leave(&sv);
	if (err) {
		fprintf(stderr, PROG ": cannot save the profile: %s\n", why);
		return err;
	}
	if (file)
		strbuf(path, sizeof(path), "%s", file);
	else if (profile_default_path(path, sizeof(path)))
		strbuf(path, sizeof(path), "the default profile");
	fprintf(stderr, PROG ": saved the profile to %s\n", path);
	say_saved(&saved);
	return 0;
}

int main(int argc, char **argv)
{
	static struct calibration cal;
	struct options opt;
	const struct plan *pl;
	struct team *core = NULL, *all = NULL;
	uint64_t t0 = now_ns();
	int status = 1, err;

	err = parse_options(argc, argv, &opt);
	if (err >= 0)
		return err;
	pl = opt.quick ? &plan_quick : &plan_full;

	err = machine_probe(&cal.m);
	if (err) {
		fprintf(stderr, PROG ": cannot probe the machine: %s\n", strerror(-err));
		goto out;
	}
	err = team_allowed_cpus(cal.cpus, TEAM_MAX, &cal.ncpus);
	if (err) {
		fprintf(stderr, PROG ": cannot read the CPU affinity mask: %s\n", strerror(-err));
		goto out;
	}
	cpulist_of(cal.cpus, cal.ncpus, cal.cpulist, sizeof(cal.cpulist));
	err = team_new(cal.cpus, 1, &core);
	if (!err)
		err = team_new(cal.cpus, cal.ncpus, &all);
	if (err) {
		fprintf(stderr, PROG ": cannot start pinned threads on CPUs %s: %s\n", cal.cpulist,
			strerror(-err));
		goto out;
	}
	/* The clock is informative (turbo, hypervisor): no figure depends on it. */
	if (flops_clock_hz(core, pl->clock_rep_s, pl->clock_reps, &cal.clock_hz) != 0)
		cal.clock_hz = 0;

	err = measure_flops(&cal, pl, core, all);
	if (err) {
		fprintf(stderr, PROG ": FLOP/s measurement failed: %s\n", strerror(-err));
		goto out;
	}
	err = measure_stream(&cal, pl, core, all);
	if (err) {
		fprintf(stderr, PROG ": bandwidth measurement failed: %s%s\n", strerror(-err),
			err == -ENOMEM ? " (not enough free memory for a buffer larger than the caches)" :
			err == -EIO ? " (a kernel produced wrong results)" : "");
		goto out;
	}
	team_free(all);
	team_free(core);
	all = core = NULL;
	mark_best(&cal);
	cal.elapsed_s = (double)(now_ns() - t0) * 1e-9;

	warn_disturbed(&cal);
	err = opt.json ? print_json(&cal) : print_table(&cal);
	if (err || fflush(stdout) != 0) {
		fprintf(stderr, PROG ": cannot write the results: %s\n", strerror(err ? -err : EIO));
		goto out;
	}
	if (opt.save && save_profile(&cal, &opt) != 0)
		goto out;
	status = 0;
out:
	team_free(all);
	team_free(core);
	return status;
}
