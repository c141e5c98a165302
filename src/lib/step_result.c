/*
 * The results of the last step (step_result.h, mfu_last_step()).
 *
 * Under mfu-record every figure is computed the way the recorder and
 * analyses/steps.sql compute the step's row, from the same inputs: the
 * times and library-call counts stamped into the two boundary records, the
 * model values as the recorder sums them (a declaration with a value that
 * is neither NAN nor finite and >= 0 is ignored whole, as the recorder
 * does), and the peaks it chose, handed over at exec as "%.17g" text (an
 * exact double). mfu = flops / (wall_ns / 1e9 * peak) is then the same
 * double operation on the same doubles as SQLite's.
 *
 * Steps belong to the process (a step begun in one thread may end in
 * another): one open step, under a mutex. A boundary under the recorder
 * already costs a counter read (a system call); the lock adds tens of ns.
 */
#include "step_result.h"

#include "mfu.h"
#include "libflops.h"
#include "marker_ring.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

/* marker.c: point the markers' switch at an always-on word (1) or back. */
void marker_set_inprocess(int on);

struct peaks_given {
	double flops, bw;       /* NAN: unknown */
	const char *source;     /* never freed: handed out to callers */
	const char *bw_source;
	const char *dtype;
};

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static int g_recorded;          /* launched by mfu-record: its peaks */
static int g_emulated;          /* under mfu-record --emulate: no results */
static int g_inproc;            /* mfu_enable()d */
static struct peaks_given g_rec = { NAN, NAN, NULL, NULL, NULL };
static struct peaks_given g_user = { NAN, NAN, NULL, NULL, NULL };
static int g_user_source_owned; /* g_user.source was strdup()ed by mfu_enable() */

/* The open step: begun in process @pid at @begin_ns. */
#define MAX_DECL 16

static struct {
	int open;
	int32_t pid;
	unsigned long long index;
	uint64_t begin_ns;
	int has_lib;
	uint64_t lib[MRING_LIB_WORDS];
	int has_flops, has_bytes;
	double flops, bytes;
	/* the declarations of the step, summed when it ends: no floating-point
	 * arithmetic between the step's two counter readings, which the PMU's
	 * FLOP counters (or the emulator) would count as the step's */
	unsigned ndecl;
	double decl[MAX_DECL][2];
} g_cur;

static struct mfu_step_result g_last; /* size 0: none yet */
static unsigned long long g_nbegins;   /* steps begun while measured */

/* A positive finite number from text (checked: the whole string), else NAN. */
static double env_number(const char *name)
{
	const char *s = getenv(name);
	char *end;
	double v;

	if (!s || !*s)
		return NAN;
	errno = 0;
	v = strtod(s, &end);
	if (errno || *end || !isfinite(v) || v <= 0)
		return NAN;
	return v;
}

static const char *env_text(const char *name)
{
	const char *s = getenv(name);
	return s && *s ? strdup(s) : NULL;
}

int step_result_init(int recorded, int emulated)
{
	const char *in = getenv(MFU_ENV_INPROCESS);

	g_recorded = recorded;
	/* The emulator counts every floating-point instruction the process
	 * executes, these sums' too (a step's model FLOPs added up would be
	 * 2 FLOPs more per declaration), and its times are Valgrind's: an
	 * emulated run's steps have no results here, as they have no MFU. */
	g_emulated = emulated;
	if (emulated)
		return 0;
	if (recorded) {
		g_rec.flops = env_number(MFU_ENV_RECORD_PEAK_FLOPS);
		g_rec.bw = env_number(MFU_ENV_RECORD_PEAK_BW);
		g_rec.source = isnan(g_rec.flops) ? NULL : env_text(MFU_ENV_RECORD_PEAK_FLOPS_SOURCE);
		g_rec.bw_source = isnan(g_rec.bw) ? NULL : env_text(MFU_ENV_RECORD_PEAK_BW_SOURCE);
		g_rec.dtype = env_text(MFU_ENV_RECORD_DTYPE);
	}
	if (!in || !*in || strcmp(in, "0") == 0)
		return 0;
	g_user.flops = env_number(MFU_ENV_PEAK_FLOPS);
	g_user.bw = env_number(MFU_ENV_PEAK_BW);
	g_user.source = isnan(g_user.flops) ? NULL : "given in the environment (MFU_PEAK_FLOPS)";
	g_user.bw_source = isnan(g_user.bw) ? NULL : "given in the environment (MFU_PEAK_BW)";
	g_inproc = 1;
	return 1;
}

int step_result_inprocess(void)
{
	return __atomic_load_n(&g_inproc, __ATOMIC_RELAXED);
}

static int model_value_ok(double v)
{
	return isnan(v) || (isfinite(v) && v >= 0);
}

/* Add the declarations kept so far into the step's model values, in the
 * order they came (as the recorder sums them). Under g_lock. */
static void sum_declarations(void)
{
	for (unsigned i = 0; i < g_cur.ndecl; i++) {
		if (!isnan(g_cur.decl[i][0])) {
			g_cur.has_flops = 1;
			g_cur.flops += g_cur.decl[i][0];
		}
		if (!isnan(g_cur.decl[i][1])) {
			g_cur.has_bytes = 1;
			g_cur.bytes += g_cur.decl[i][1];
		}
	}
	g_cur.ndecl = 0;
}

/* The step that just ended, as analyses/steps.sql computes its row. Under
 * g_lock. */
static void finish(uint64_t end_ns, const uint64_t *lib)
{
	const struct peaks_given *pk = g_recorded ? &g_rec : &g_user;
	struct mfu_step_result *r = &g_last;
	double wall_s;

	sum_declarations();
	memset(r, 0, sizeof(*r));
	r->size = sizeof(*r);
	r->measured_by = g_recorded ? MFU_MEASURED_RECORDER : MFU_MEASURED_INPROCESS;
	r->step = g_cur.index;
	r->wall_ns = end_ns - g_cur.begin_ns;
	r->model_flops = g_cur.has_flops ? g_cur.flops : NAN;
	r->model_bytes = g_cur.has_bytes ? g_cur.bytes : NAN;
	r->lib_flops = NAN;
	/* writer.c's bind_lib(): calls only grow; FLOPs of a step whose
	 * calls were all of functions of unknown FLOPs are unknown */
	if (lib && g_cur.has_lib) {
		uint64_t d[MRING_LIB_WORDS];
		double total = 0;
		for (int i = 0; i < MRING_LIB_WORDS; i++)
			d[i] = lib[i] - g_cur.lib[i];
		if (d[LIBFLOPS_W_CALLS] <= INT64_MAX && d[LIBFLOPS_W_UNKNOWN] <= d[LIBFLOPS_W_CALLS]) {
			for (int k = 0; k < LIBFLOPS_NPREC; k++)
				total += (double)d[LIBFLOPS_W_FLOPS + k];
			if (!(d[LIBFLOPS_W_UNKNOWN] && total == 0))
				r->lib_flops = total;
		}
	}
	if (!isnan(r->model_flops)) {
		r->flops = r->model_flops;
		r->flops_source = MFU_FLOPS_DECLARED;
	} else if (r->lib_flops > 0) {
		r->flops = r->lib_flops;
		r->flops_source = MFU_FLOPS_LIBRARY;
	} else {
		r->flops = NAN;
		r->flops_source = MFU_FLOPS_UNKNOWN;
	}
	r->peak_flops = pk->flops;
	r->peak_bw = pk->bw;
	r->peak_source = pk->source;
	r->dtype = pk->dtype;
	/* the same operations, in the same order, as steps.sql's */
	wall_s = (double)r->wall_ns / 1e9;
	r->flops_per_s = r->wall_ns ? r->flops / wall_s : NAN;
	r->mfu = r->wall_ns ? r->flops / (wall_s * pk->flops) : NAN;
	r->mbu = r->wall_ns ? r->model_bytes / (wall_s * pk->bw) : NAN;
	if (!isnan(r->mfu))
		r->why = NULL;
	else if (r->wall_ns == 0)
		r->why = "the step took no measurable time";
	else if (isnan(r->flops))
		r->why = g_recorded ? "the step declared no FLOPs and made no counted library call "
				      "(declare them: mfu_step_model(), mfu.step(flops=...))"
				    : "the step declared no FLOPs (declare them: mfu_step_model(), "
				      "mfu.step(flops=...)); library calls are counted only under mfu-record";
	else if (g_recorded)
		r->why = "mfu-record knows no peak FLOP/s for this CPU (give it one: mfu-record --peak-flops)";
	else
		r->why = "no peak FLOP/s was given to the in-process mode (mfu_enable(), MFU_PEAK_FLOPS, or "
			 "mfu.enable() in Python, which reads the machine profile: make one with mfu-calibrate)";
}

void step_result_mark(uint8_t kind, uint64_t time_ns, double a, double b, const uint64_t *lib, int32_t pid)
{
	if (g_emulated)
		return;
	pthread_mutex_lock(&g_lock);
	switch (kind) {
	case MRING_STEP_BEGIN:
		/* a begin while a step is open: the recorder keeps the older
		 * one as incomplete and opens this one */
		g_cur.open = 1;
		g_cur.pid = pid;
		g_cur.index = g_nbegins++;
		g_cur.begin_ns = time_ns;
		g_cur.has_lib = lib != NULL;
		if (lib)
			memcpy(g_cur.lib, lib, sizeof(g_cur.lib));
		g_cur.has_flops = g_cur.has_bytes = 0;
		g_cur.flops = g_cur.bytes = 0;
		g_cur.ndecl = 0;
		break;
	case MRING_STEP_MODEL:
		if (!g_cur.open || g_cur.pid != pid || !model_value_ok(a) || !model_value_ok(b))
			break;
		if (g_cur.ndecl == MAX_DECL)
			sum_declarations(); /* more than MAX_DECL in a step: the sum so far */
		g_cur.decl[g_cur.ndecl][0] = a;
		g_cur.decl[g_cur.ndecl][1] = b;
		g_cur.ndecl++;
		break;
	case MRING_STEP_END:
		if (g_cur.open && g_cur.pid == pid && time_ns >= g_cur.begin_ns)
			finish(time_ns, lib);
		g_cur.open = 0;
		break;
	default:
		break;
	}
	pthread_mutex_unlock(&g_lock);
}

EXPORT int mfu_last_step(struct mfu_step_result *r)
{
	size_t n;
	int rc = 0;

	if (!r || r->size < offsetof(struct mfu_step_result, why) + sizeof(r->why))
		return -EINVAL;
	n = r->size < sizeof(*r) ? r->size : sizeof(*r);
	pthread_mutex_lock(&g_lock);
	if (g_emulated || (!g_recorded && !g_inproc && !g_last.size))
		rc = -ENOTSUP;
	else if (!g_last.size)
		rc = -ENODATA;
	else {
		unsigned size = r->size;
		memcpy(r, &g_last, n);
		r->size = size;
	}
	pthread_mutex_unlock(&g_lock);
	return rc;
}

/* The peak sources mfu_enable() replaced: a result handed out may still
 * point at one, so they are kept (and reachable: not a leak). */
static char **g_old_sources;
static size_t g_nold;

static void retire_source(const char *s)
{
	char **grown;

	if (!s)
		return;
	grown = realloc(g_old_sources, (g_nold + 1) * sizeof(*grown));
	if (!grown)
		return; /* out of memory: the text stays allocated, unreferenced */
	g_old_sources = grown;
	g_old_sources[g_nold++] = (char *)s;
}

EXPORT int mfu_enable(double peak_flops, double peak_bw, const char *peak_source)
{
	char *src = NULL;

	if (isfinite(peak_flops) && peak_flops > 0)
		src = strdup(peak_source && *peak_source ? peak_source : "given by the program");
	pthread_mutex_lock(&g_lock);
	/* the old texts are never freed: a result handed out may point at them */
	if (g_user.source && g_user_source_owned)
		retire_source(g_user.source);
	g_user_source_owned = src != NULL;
	g_user.flops = src ? peak_flops : NAN;
	g_user.source = src;
	g_user.bw = isfinite(peak_bw) && peak_bw > 0 ? peak_bw : NAN;
	g_user.bw_source = isnan(g_user.bw) ? NULL : "given by the program";
	__atomic_store_n(&g_inproc, 1, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&g_lock);
	marker_set_inprocess(1);
	return 0;
}

EXPORT void mfu_disable(void)
{
	pthread_mutex_lock(&g_lock);
	__atomic_store_n(&g_inproc, 0, __ATOMIC_RELAXED);
	g_cur.open = 0;
	pthread_mutex_unlock(&g_lock);
	marker_set_inprocess(0);
}
