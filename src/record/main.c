/*
 * mfu-record: run a program under perf_event counters and record its marked
 * steps and phases into an SQLite database.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <pwd.h>
#include <unistd.h>

#include "attach.h"
#include "checkpointer.h"
#include "counters.h"
#include "db.h"
#include "launch.h"
#include "machine.h"
#include "profile.h"
#include "marker_ring.h"
#include "markers.h"
#include "util.h"
#include "dram.h"
#include "intervals.h"
#include "probe_steps.h"
#include "py_hook.h"
#include "recap.h"
#include "sampler.h"
#include "writer.h"
#include "options.h"

#define COMMIT_INTERVAL_NS 250000000ull /* a killed recorder loses at most this much */
/* ... and its .sqlite file alone (copied without its -wal) lags at most this
 * much: committed rows live in the WAL until a checkpoint copies them. */
#define CHECKPOINT_INTERVAL_NS 2000000000ull
/* The recap's headline (the breakdown's verdict) scans every step and
 * sample: 15 s on a million steps. At exit it gets this long, no more. */
#define RECAP_VERDICT_MS 500u

/* How many profile rows apply to @m (its CPU identity and CPU set); @why
 * says why none do. An unreadable profile counts as none. */
static int count_profile(const struct options *o, const struct machine *m, char *why, size_t len)
{
	struct profile_peak pp[PROFILE_MAX_PEAKS];
	int n = 0, rc;

	rc = profile_load(o->profile, m, pp, PROFILE_MAX_PEAKS, &n, why, len);
	return rc < 0 && rc != -ENOSPC ? 0 : n;
}

/* The first recording on a machine measures its peaks once (--peak auto or
 * measured, the default profile, no applicable profile yet): a spec row
 * can be wrong by 3x (a VM that masks its CPU model, a TSC rate taken for
 * the clock), and only a measurement shows it. Before the target starts,
 * so the two do not share the CPUs. */
static void calibrate_first(const struct options *o, const struct machine *m)
{
	char why[512], prog[PATH_MAX], path[PATH_MAX];

	if (o->no_calibrate || o->profile || o->peak_mode == PEAKS_SPEC ||
	    (o->peak_flops > 0 && o->peak_bw > 0) || o->list_events)
		return;
	if (count_profile(o, m, why, sizeof(why)) > 0)
		return;
	peaks_calibrate_program(prog, sizeof(prog));
	if (profile_default_path(path, sizeof(path)) != 0)
		snprintf(path, sizeof(path), "the default profile");
	fprintf(stderr, PROG ": this machine has not been calibrated yet (%s): measuring its peaks once "
		"with '%s --quick' (a few seconds; saved in %s; --no-calibrate skips it)\n", why, prog, path);
	if (peaks_calibrate(prog, NULL, why, sizeof(why)) != 0)
		fprintf(stderr, PROG ": calibration failed: %s; using the spec peaks\n", why);
}

/* Work out the peaks for @m's CPU set (the target's): the profile is read
 * here, so this comes before the target runs (a run's first counter
 * readings must not wait for it). What is worth saying (a measured peak far
 * above the spec, an unreadable profile) goes into @pk->warn, printed by
 * the caller once the command runs. */
static int choose_peaks(const struct machine *m, const struct options *o, struct peaks *pk)
{
	struct profile_peak pp[PROFILE_MAX_PEAKS];
	struct peaks_request rq = { .mode = o->peak_mode, .dtype = o->dtype, .user_flops = o->peak_flops,
				    .user_bw = o->peak_bw };
	char why[512] = "";
	int n = 0, rc, err;

	err = profile_load(o->profile, m, pp, PROFILE_MAX_PEAKS, &n, why, sizeof(why));
	if (err < 0 && err != -ENOSPC)
		n = 0;
	rc = peaks_choose(pk, m, &rq, pp, n, why);
	if (!rc && err < 0 && err != -ENOSPC && pk->nwarn < PEAKS_MAX_WARN)
		snprintf(pk->warn[pk->nwarn++], sizeof(pk->warn[0]), "ignoring the machine profile: %s", why);
	return rc;
}

static void say_peak_warnings(const struct peaks *pk)
{
	for (int i = 0; i < pk->nwarn; i++)
		fprintf(stderr, PROG ": note: %s\n", pk->warn[i]);
}

/* Store @pk: the peak table and the run's columns. */
static int write_peaks(struct writer *w, const struct machine *m, const struct options *o,
		       const struct peaks *pk, const char *cpus_source)
{
	int rc = writer_peaks(w, pk);

	if (!rc)
		rc = writer_run_peaks(w, m, pk, peaks_mode_name(o->peak_mode), cpus_source);
	return rc;
}

/* Both, for a CPU set that changed. */
static int store_peaks(struct writer *w, const struct machine *m, const struct options *o, struct peaks *pk,
		       const char *cpus_source)
{
	int rc = choose_peaks(m, o, pk);

	return rc ? rc : write_peaks(w, m, o, pk, cpus_source);
}

/* Each counter's whole-run total: the groups read through the recorder's
 * fds, or attached, summed over the process's threads. */
static int store_totals(struct writer *w, const struct counters *cs, const struct attach *at)
{
	struct counter_reading r;

	if (at) {
		attach_read(at, cs, &r);
	} else {
		memset(&r, 0, sizeof(r));
		for (int g = 0; g < cs->ngroups; g++) {
			uint64_t buf[3 + COUNTERS_MAX];
			unsigned o = cs->group_offset[g], nr = cs->group_nr[g];
			int li = cs->leader[g];
			if (li < 0 || !nr)
				continue;
			ssize_t n = read(cs->c[li].fd, buf, sizeof(buf));
			if (n >= (ssize_t)((3 + nr) * sizeof(uint64_t)) && buf[0] == nr)
				memcpy(&r.data[o], buf, (3 + nr) * sizeof(uint64_t));
		}
	}
	for (int i = 0; i < cs->n; i++) {
		const struct counter *c = &cs->c[i];
		unsigned o = cs->group_offset[c->group];
		if (!c->opened || c->word < 0 || r.data[o] != cs->group_nr[c->group])
			continue;
		int rc = writer_counter_total(w, i, r.data[c->word], r.data[o + 1], r.data[o + 2]);
		if (rc)
			return rc;
	}
	return 0;
}

/* --list-events: what would be counted here, and why not where not. */
static int list_events(struct counters *cs)
{
	struct counters probe = *cs;
	const char *sysfs = "/sys/bus/event_source/devices";

	/* Open them on ourselves (disabled) to learn what this machine allows. */
	counters_open_self(&probe);
	if (cs->forced)
		printf("# PMU %s forced by LIBPFM_FORCE_PMU: encodings are %s's; this machine cannot open them\n",
		       cs->pmu, cs->pmu);
	else if (cs->pmu[0] && !cs->hw_missing[0])
		printf("# core PMU: %s (libpfm4)\n", cs->pmu);
	if (cs->hw_missing[0])
		printf("# %s\n", cs->hw_missing);
	if (cs->amx_note[0])
		printf("# %s\n", cs->amx_note);
	/* columns as wide as their longest value */
#define WIDEST(w, s) ((w) = (int)strlen(s) > (w) ? (int)strlen(s) : (w))
	int wname = (int)strlen("event"), wenc = (int)strlen("encoding"), wunit = (int)strlen("unit");
	int wcol = (int)strlen("(event)");
	for (int i = 0; i < probe.n; i++) {
		const char *col = counters_col_name(probe.c[i].col);
		WIDEST(wname, probe.c[i].name);
		WIDEST(wenc, probe.c[i].encoding);
		WIDEST(wunit, probe.c[i].unit);
		WIDEST(wcol, col ? col : "");
	}
#undef WIDEST
	printf("%-*s %5s %-*s %6s %-*s %-*s %s\n", wname, "event", "group", wenc, "encoding", "weight", wunit,
	       "unit", wcol, "column", "status");
	for (int i = 0; i < probe.n; i++) {
		const struct counter *c = &probe.c[i];
		const char *col = counters_col_name(c->col);
		char w[16] = "-";
		if (c->weight > 0)
			snprintf(w, sizeof(w), "%g", c->weight);
		printf("%-*s %5d %-*s %6s %-*s %-*s %s%s\n", wname, c->name, c->group, wenc, c->encoding, w, wunit,
		       c->unit, wcol, col ? col : "(event)", c->opened ? "ok" : "missing: ",
		       c->opened ? (c->user_only ? " (user mode only)" : "") : c->reason);
		if (c->fd >= 0)
			close(c->fd);
	}
	(void)sysfs;
	return 0;
}

/* Under sudo, run the target as the invoking user unless --as-root. */
static int sudo_creds(const struct options *o, struct launch_creds *c)
{
	const char *u = getenv("SUDO_UID"), *g = getenv("SUDO_GID");
	int uid, gid;

	memset(c, 0, sizeof(*c));
	if (o->as_root || geteuid() != 0 || !u || !g)
		return 0;
	if (safe_atoi(u, &uid) || safe_atoi(g, &gid) || uid < 0 || gid < 0) {
		fprintf(stderr, PROG ": SUDO_UID/SUDO_GID ('%s', '%s') are not user and group ids; "
			"use --as-root to run as root\n", u, g);
		return -EINVAL;
	}
	if (uid == 0)
		return 0;
	c->drop = 1;
	c->uid = (uid_t)uid;
	c->gid = (gid_t)gid;
	struct passwd *pw = getpwuid(c->uid);
	if (pw) {
		strbuf(c->user, sizeof(c->user), "%s", pw->pw_name);
		strbuf(c->home, sizeof(c->home), "%s", pw->pw_dir);
	}
	return 0;
}

struct drain {
	struct sampler *sampler;
	struct dram *dram;
	struct intervals *intervals;
	struct probe_steps *probes;
	void *ring;
	struct markers *markers;
	struct writer *writer;
	int failed; /* the database stopped accepting rows */
	uint64_t records;
	uint64_t dropped;  /* records drained after a failure, not stored */
	int kill_on_error;
	pid_t target;
	const char *output;
	int probe_warned;
};

/* The database stopped accepting data: say so once, and stop the target if
 * asked to (--on-error kill). Draining goes on so the target never blocks. */
static void record_failed(struct drain *d, int rc, const char *what)
{
	if (d->failed)
		return;
	d->failed = rc;
	fprintf(stderr, PROG ": cannot write %s: %s; recording stops here, %s\n", d->output,
		rc == -ENOSPC ? "the disk is full" : what,
		d->kill_on_error ? "stopping the target (--on-error kill)" : "the target goes on unrecorded");
	if (d->kill_on_error && d->target > 0)
		kill(d->target, SIGTERM);
}

/* Move every published record from the ring into the database. */
static int drain_ring(struct drain *d)
{
	const struct mring_record *r;
	int n = 0;

	while ((r = mring_peek(d->ring))) {
		if (!d->failed) {
			int rc = markers_feed(d->markers, r);
			if (rc)
				record_failed(d, rc, rc == -ENOMEM ? "out of memory" : writer_error(d->writer));
		}
		if (d->failed)
			d->dropped++;
		d->records += r->kind != MRING_LOSS; /* a thread's loss notice is no marker */
		mring_release(d->ring);
		n++;
	}
	return n;
}

/* probe_steps sink: probe boundaries join the markers' stream */
static int probe_boundary(void *ctx, const struct mring_record *r)
{
	struct drain *d = ctx;
	int rc;

	if (!d->markers || d->failed)
		return 0;
	rc = markers_feed_probe(d->markers, r);
	if (rc)
		record_failed(d, rc, rc == -ENOMEM ? "out of memory" : writer_error(d->writer));
	return 0;
}

static void probe_cancel(void *ctx, pid_t pid, pid_t tid, const char *name)
{
	struct drain *d = ctx;
	if (d->markers)
		markers_cancel(d->markers, pid, tid, name);
}

/* sampler callbacks: the uprobes follow new threads and libraries */
static void on_task(void *ctx, pid_t pid, pid_t tid, int exited)
{
	struct drain *d = ctx;
	char why[512];

	if (exited) {
		probe_steps_thread_exit(d->probes, tid);
	} else if (probe_steps_add_thread(d->probes, pid, tid, why, sizeof(why)) != 0 && !d->probe_warned) {
		fprintf(stderr, PROG ": cannot probe thread %d: %s\n", (int)tid, why);
		d->probe_warned = 1;
	}
}

static void on_exec_map(void *ctx, pid_t pid, const char *path)
{
	struct drain *d = ctx;
	probe_steps_on_map(d->probes, pid, path);
}

/* Uprobes need CAP_SYS_ADMIN (not CAP_PERFMON, whatever perf_event_paranoid
 * says): the effective set of /proc/self/status. */
static int have_cap_sys_admin(void)
{
	char buf[4096], *p;
	unsigned long long eff;

	if (read_text_file("/proc/self/status", buf, sizeof(buf)) < 0 || !(p = strstr(buf, "CapEff:")) ||
	    sscanf(p + 7, "%llx", &eff) != 1)
		return geteuid() == 0;
	return (eff >> 21) & 1; /* CAP_SYS_ADMIN */
}

/* A recording with uprobes holds an event per site and thread: let it use
 * every fd it may. */
/* Whose CPUs the peaks are for. The target's affinity and cgroup are
 * known only once it runs (`mfu-record -- taskset -c 0 ./app` changes them
 * in its first instructions; a program may pin itself), so they are read
 * every 20 ms until its first step begins, and that set is the one the
 * peaks use (stored again when it differs from the one assumed at the
 * start). A change after that is noted, once. */
struct cpu_watch {
	struct machine used;     /* the CPU set the stored peaks are for */
	struct machine seen;     /* the target's, last read */
	int have_seen;
	int settled;             /* its first step began: the set is fixed */
	int change_noted;
	uint64_t next_ns;
	unsigned long long mask_hash; /* of the main thread's mask last read */
};

#define CPU_WATCH_EARLY_NS 20000000ull   /* until the first step */
#define CPU_WATCH_LATE_NS 1000000000ull  /* after it: only to notice changes */

static int same_cpus(const struct machine *a, const struct machine *b)
{
	return strcmp(a->allowed_cpus, b->allowed_cpus) == 0 && a->cpu_quota == b->cpu_quota &&
	       a->ncores == b->ncores;
}

static void cpu_watch_peaks(struct drain *d, struct cpu_watch *cw, const struct options *o, struct peaks *pk,
			    const char *source)
{
	int rc;

	if (!cw->have_seen || same_cpus(&cw->used, &cw->seen)) {
		if (cw->have_seen && !d->failed)
			rc = writer_run_peaks(d->writer, &cw->used, pk, peaks_mode_name(o->peak_mode), source);
		else
			rc = 0;
	} else {
		cw->used = cw->seen;
		if (!o->quiet)
			fprintf(stderr, PROG ": the target runs on CPUs %s (%g core%s): the peaks are for them\n",
				cw->used.allowed_cpus, cw->used.ncores, cw->used.ncores == 1 ? "" : "s");
		rc = d->failed ? 0 : store_peaks(d->writer, &cw->used, o, pk, source);
	}
	if (rc)
		record_failed(d, rc, writer_error(d->writer));
}

/* Read the target's CPU set when it is due; fix it at its first step. */
/* The main thread's affinity mask and the process's cgroups, cheaply (a
 * system call and a small read): whether a full read of the CPU set is due.
 * 0 if they cannot be read. */
static unsigned long long main_mask_hash(pid_t pid)
{
	cpu_set_t set;
	unsigned long long h = 1469598103934665603ull;
	char path[64], cg[2048];
	int n;

	CPU_ZERO(&set);
	if (sched_getaffinity(pid, sizeof(set), &set) != 0)
		return 0; /* gone, or more CPUs than a cpu_set_t: read it fully */
	for (size_t i = 0; i < sizeof(set); i++)
		h = (h ^ ((const unsigned char *)&set)[i]) * 1099511628211ull;
	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	n = read_text_file(path, cg, sizeof(cg)) == 0 ? (int)strlen(cg) : 0;
	for (int i = 0; i < n; i++)
		h = (h ^ (unsigned char)cg[i]) * 1099511628211ull;
	return h;
}

/* Read the target's CPU set when it is due (cheaply: a full read, threads,
 * cgroup and topology, only when its main thread's mask changed, at its
 * first step and at the end); fix it at its first step. @final: it ended. */
static void cpu_watch_poll(struct drain *d, struct cpu_watch *cw, const struct options *o, struct peaks *pk,
			   pid_t pid, uint64_t now, int final)
{
	struct machine m;
	unsigned long long h;
	int first_step;

	if ((now < cw->next_ns && !final) || d->failed)
		return;
	cw->next_ns = now + (cw->settled ? CPU_WATCH_LATE_NS : CPU_WATCH_EARLY_NS);
	h = main_mask_hash(pid);
	first_step = !cw->settled && d->records > 0;
	if (h && h == cw->mask_hash && !first_step && !final)
		return;
	cw->mask_hash = h;
	m = cw->seen.ncpu > 0 ? cw->seen : cw->used;
	if (machine_probe_cpus(&m, pid) != 0)
		return; /* gone already: the last reading stands */
	/* An exiting task is moved to the root cgroup (cgroup_exit): the
	 * zombie's quota is not the one it ran under; its last live one is. */
	if (final && cw->have_seen && m.cpu_quota == 0 && cw->seen.cpu_quota > 0) {
		m.cpu_quota = cw->seen.cpu_quota;
		if (m.cpu_quota < m.ncpu)
			m.ncpu = m.cpu_quota;
		if (m.cpu_quota < m.ncores)
			m.ncores = m.cpu_quota;
	}
	if (cw->settled) {
		if (!same_cpus(&m, &cw->used) && !cw->change_noted) {
			char note[700];
			cw->change_noted = 1;
			strbuf(note, sizeof(note), "the target's CPU set changed during the run, from %s to %s; "
			       "the peaks are for %s, the set its first step began with", cw->used.allowed_cpus,
			       m.allowed_cpus, cw->used.allowed_cpus);
			fprintf(stderr, PROG ": note: %s\n", note);
			writer_note(d->writer, "cpus_changed", note);
		}
		return;
	}
	cw->seen = m;
	cw->have_seen = 1;
	if (first_step) {
		cw->settled = 1;
		cpu_watch_peaks(d, cw, o, pk, "the target's, read when its first step began");
	}
}

/* A utilization above 100% cannot be true: the peak is too low for this
 * machine or the declared work too high. Said on stderr at the end (the
 * report's notes say it too, from the same tables). */
static void say_impossible(sqlite3 *db)
{
	static const char *const what[] = { "steps", "phases" };
	static const char *const name[] = { "MFU", "HFU", "MBU" };
	static const char *const sql =
		"WITH r AS (SELECT peak_flops AS pf, peak_bw AS pb FROM run WHERE id = 1) "
		"SELECT %s, model_flops / (wall_ns / 1e9 * pf), hw_flops / (wall_ns / 1e9 * pf), "
		"model_bytes / (wall_ns / 1e9 * pb) FROM %s, r WHERE complete = 1 AND wall_ns > 0";

	for (int t = 0; t < 2; t++) {
		char q[512];
		sqlite3_stmt *st = NULL;
		long n[3] = { 0 };
		double worst[3] = { 0 };
		char at[3][80] = { "", "", "" };

		snprintf(q, sizeof(q), sql, t == 0 ? "'step ' || step" : "'phase ' || quote(name) || ' (id ' || id || ')'",
			 t == 0 ? "step" : "phase");
		if (sqlite3_prepare_v2(db, q, -1, &st, NULL) != SQLITE_OK)
			continue;
		while (sqlite3_step(st) == SQLITE_ROW) {
			for (int k = 0; k < 3; k++) {
				double v;
				if (sqlite3_column_type(st, k + 1) == SQLITE_NULL)
					continue;
				v = sqlite3_column_double(st, k + 1);
				if (!(v > 1.0))
					continue;
				n[k]++;
				if (v > worst[k]) {
					worst[k] = v;
					snprintf(at[k], sizeof(at[k]), "%s", (const char *)sqlite3_column_text(st, 0));
				}
			}
		}
		sqlite3_finalize(st);
		for (int k = 0; k < 3; k++)
			if (n[k])
				fprintf(stderr, PROG ": warning: %ld %s have %s above 100%% (the highest %.0f%%, %s): "
					"impossible, so the %s peak is too low for this machine or the declared %s "
					"too high; see the peak's source in mfu-report's notes\n", n[k],
					n[k] == 1 ? (t == 0 ? "step" : "phase") : what[t], name[k], worst[k] * 100,
					at[k], k == 2 ? "bandwidth" : "FLOP/s", k == 2 ? "bytes" : "FLOPs");
	}
}

static void raise_fd_limit(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

int main(int argc, char **argv)
{
	struct options o = { 0 };
	struct machine m;
	struct counters cs;
	struct launch l = { .pid = -1, .sock = -1, .exec_pipe = -1 };
	struct run_info ri = { 0 };
	struct drain d = { 0 };
	sigset_t block, old;
	sqlite3 *db = NULL;
	char err[512], cwd[PATH_MAX], dram_why[700] = "";
	static struct peaks pk; /* large: off the stack */
	char *cmd = NULL;
	void *ring = MAP_FAILED;
	size_t ring_size = 0;
	int ring_fd = -1, sfd = -1, exit_code = 125, rc, status = 0;
	int exit_status = -1, exit_signal = -1, interrupted = 0, had_old = 0;
	uint64_t last_commit, end_ns;
	struct markers_sink sink;
	struct stat lst;
	struct launch_creds creds;
	struct py_hook *pyhook = NULL;
	struct attach *at = NULL;
	struct checkpointer *ckpt = NULL;
	int attached = 0, target_ended = 0, recap = 0;
	char closing[PATH_MAX + 160] = "";

	rc = options_parse(argc, argv, &o);
	if (rc)
		return rc;
	/* Block the signals we handle from the start: one that arrives while
	 * mfu-record sets up is handled in its loop (passed on, or a detach),
	 * never kills it half-way; none is lost between fork and the
	 * signalfd. The child restores the old mask. */
	sigemptyset(&block);
	sigaddset(&block, SIGCHLD);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGHUP);
	sigaddset(&block, SIGQUIT);
	sigprocmask(SIG_BLOCK, &block, &old);

	rc = machine_probe(&m);
	if (rc) {
		fprintf(stderr, PROG ": cannot read this machine's CPU description: %s\n", strerror(-rc));
		return 125;
	}
	rc = counters_plan(&cs, "/sys/bus/event_source/devices", o.events, o.nevents, err, sizeof(err));
	if (rc) {
		fprintf(stderr, PROG ": %s\n", err);
		return 2;
	}
	if (o.list_events)
		return list_events(&cs);

	if (sudo_creds(&o, &creds) != 0)
		return 2;
	struct probe_request ureq[PROBE_STEPS_MAX_REQUESTS];
	int nureq = 0;
	for (int i = 0; i < o.nreq; i++)
		if (!o.req[i].python)
			ureq[nureq++] = o.req[i];
	if (nureq < o.nreq) {
		char why[600];
		rc = py_hook_setup(&pyhook, o.req, o.nreq, creds.drop ? creds.uid : (uid_t)-1,
				   creds.drop ? creds.gid : (gid_t)-1, why, sizeof(why));
		if (rc) {
			fprintf(stderr, PROG ": %s\n", why);
			return 125;
		}
	}
	if (nureq && !o.interval_ms)
		fprintf(stderr, PROG ": note: with -I 0 there are no counter readings to interpolate, so the "
			"counts of steps and phases from uprobes are unknown\n");
	if (nureq) {
		char exe[PATH_MAX], warn[2048], why[1200];
		struct probe_steps_sink psink = { .ctx = &d, .boundary = probe_boundary, .cancel = probe_cancel };
		if (!have_cap_sys_admin()) {
			fprintf(stderr, PROG ": --step and --phase put uprobes in the program (all but py: specs), "
				"and opening a uprobe needs CAP_SYS_ADMIN: run mfu-record as root (sudo "
				"mfu-record ...; the program still runs as you)\n");
			py_hook_free(pyhook);
			return 125;
		}
		raise_fd_limit();
		if (probe_steps_new(&d.probes, ureq, nureq, &psink) != 0) {
			fprintf(stderr, PROG ": out of memory\n");
			py_hook_free(pyhook);
			return 125;
		}
		/* a program that cannot be found fails at its exec, with 127 */
		if (o.pid || probe_steps_program(o.argv[0], exe, sizeof(exe)) == 0) {
			rc = o.pid ? probe_steps_resolve_pid(d.probes, o.pid, warn, sizeof(warn), why, sizeof(why))
				   : probe_steps_resolve_exe(d.probes, exe, warn, sizeof(warn), why, sizeof(why));
			if (rc) {
				fprintf(stderr, PROG ": %s\n", why);
				probe_steps_free(d.probes);
				py_hook_free(pyhook);
				return 2;
			}
			for (char *line = warn; *line;) {
				size_t n = strcspn(line, "\n");
				/* LIB:POINT of a library not loaded yet: probed once
				 * it is mapped (a bare name not found is refused) */
				fprintf(stderr, PROG ": %.*s\n", (int)n, line);
				line += n + (line[n] == '\n');
			}
		}
	}
	calibrate_first(&o, &m);
	if (o.pid) {
		/* before the database: a process that cannot be joined leaves none */
		rc = attach_open(&at, o.pid, &cs, err, sizeof(err));
		if (rc) {
			fprintf(stderr, PROG ": %s\n", err);
			probe_steps_free(d.probes);
			return 125;
		}
		attached = 1;
		/* its CPUs, not ours: the peaks are for them */
		if (machine_probe_cpus(&m, o.pid) != 0)
			fprintf(stderr, PROG ": cannot read the CPU set of process %d; the peaks are for "
				"mfu-record's own CPUs (%s)\n", (int)o.pid, m.allowed_cpus);
		cmd = attach_command_json(o.pid);
		if (!cmd)
			cmd = strdup("[]");
	} else {
		cmd = json_argv(o.argv);
	}
	if (!cmd) {
		fprintf(stderr, PROG ": out of memory\n");
		goto out;
	}

	had_old = lstat(o.output, &lst) == 0;
	rc = db_create(o.output, &db, err, sizeof(err));
	if (rc) {
		fprintf(stderr, PROG ": %s\n", err);
		goto out;
	}
	/* under sudo the user gets the file, as they would without sudo */
	if (creds.drop && chown(o.output, creds.uid, creds.gid) < 0)
		fprintf(stderr, PROG ": cannot give %s to uid %d: %s\n", o.output, (int)creds.uid, strerror(errno));
	rc = writer_open(&d.writer, db, err, sizeof(err));
	if (rc) {
		fprintf(stderr, PROG ": %s: %s\n", o.output, err);
		goto out;
	}

	ring_size = mring_size(o.ring_records);
	ring_fd = attached ? -1 : memfd_create("mfu-marker-ring", MFD_CLOEXEC);
	if (!attached && (ring_fd < 0 || ftruncate(ring_fd, (off_t)ring_size) < 0 ||
	    (ring = mmap(NULL, ring_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, ring_fd, 0)) == MAP_FAILED)) {
		fprintf(stderr, PROG ": cannot create the marker ring (%zu bytes): %s\n", ring_size, strerror(errno));
		goto out;
	}
	/* Counter indexes are known only after the child opened them; the ring
	 * header is filled in before the go, below. */

	sfd = signalfd(-1, &block, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sfd < 0) {
		fprintf(stderr, PROG ": signalfd: %s\n", strerror(errno));
		goto out;
	}

	if (!attached) {
		rc = launch_prepare(&l, o.argv, ring_fd, &cs, &old, &creds, err, sizeof(err));
		if (rc) {
			fprintf(stderr, PROG ": %s\n", err);
			goto out;
		}
	}
	if (!attached && mring_init(ring, o.ring_records, (uint32_t)cs.ngroups, cs.group_nr) != 0) {
		fprintf(stderr, PROG ": the counters' readings do not fit a marker record: use fewer -e events\n");
		launch_abort(&l);
		goto out;
	}

	if (d.probes && !attached) {
		/* on the child before its exec: they survive it, and fire from
		 * the program's first instruction */
		rc = probe_steps_add_thread(d.probes, l.pid, l.pid, err, sizeof(err));
		if (rc) {
			fprintf(stderr, PROG ": %s\n", err);
			launch_abort(&l);
			goto out;
		}
	}

	rc = writer_counters(d.writer, &cs);
	if (!rc && cs.hw_missing[0])
		rc = writer_note(d.writer, "missing_counters", cs.hw_missing);
	if (!rc && cs.amx_note[0])
		rc = writer_note(d.writer, "amx", cs.amx_note);
	for (int i = 0; !rc && i < cs.n; i++) {
		if (!cs.c[i].opened) {
			char note[400];
			strbuf(note, sizeof(note), "counter '%s' could not be opened: %s", cs.c[i].name, cs.c[i].reason);
			rc = writer_note(d.writer, "missing_counters", note);
		} else if (cs.c[i].user_only && (cs.c[i].col == COL_CTX_SWITCHES || cs.c[i].col == COL_CPU_MIGRATIONS)) {
			char note[400];
			strbuf(note, sizeof(note), "counter '%s' counts user mode only (perf_event_paranoid >= 2) "
			       "and reads 0 there, so it is reported as unknown; run as root for it", cs.c[i].name);
			rc = writer_note(d.writer, "missing_counters", note);
		}
	}
	if (!rc && choose_peaks(&m, &o, &pk) != 0) {
		fprintf(stderr, PROG ": out of memory\n");
		launch_abort(&l);
		goto out;
	}
	if (rc) {
		fprintf(stderr, PROG ": %s: %s\n", o.output, writer_error(d.writer));
		launch_abort(&l);
		goto out;
	}

	{
		struct sampler_opts so = { .freq = o.freq, .compute = o.compute, .ncompute = o.ncompute,
					   .dispatch = o.dispatch, .ndispatch = o.ndispatch,
					   .compute_file = o.compute_file };
		if (d.probes) {
			so.on_task = on_task;
			so.on_exec_map = on_exec_map;
			so.cb_ctx = &d;
		}
		if (attached)
			so.tids = attach_tids(at, &so.ntids);
		rc = sampler_open(&d.sampler, db, attached ? o.pid : l.pid, &so, err, sizeof(err));
		if (!rc && attached && sampler_existing(d.sampler, o.pid, now_ns()) != 0)
			fprintf(stderr, PROG ": cannot store the threads and mappings of %d: its samples "
				"may stay unresolved\n", (int)o.pid);
		if (rc == -EINVAL) {
			fprintf(stderr, PROG ": %s\n", err);
			launch_abort(&l);
			exit_code = 2;
			goto out;
		}
		if (rc) {
			char note[600];
			strbuf(note, sizeof(note), "no sampling: %s; the breakdown of step time is unknown%s", err,
			       d.probes ? ", and probes follow only the first thread" : "");
			fprintf(stderr, PROG ": %s\n", note);
			writer_note(d.writer, "no_sampling", note);
		} else if (sampler_note(d.sampler)[0]) {
			fprintf(stderr, PROG ": note: %s\n", sampler_note(d.sampler));
		}
	}

	if (o.interval_ms) {
		int leaders[MRING_MAX_GROUPS];
		for (int g = 0; g < MRING_MAX_GROUPS; g++)
			leaders[g] = g < cs.ngroups && cs.leader[g] >= 0 ? cs.c[cs.leader[g]].fd : -1;
		rc = intervals_new(&d.intervals, db, &cs, (uint64_t)o.interval_ms * 1000000ull);
		if (!rc)
			rc = attached ? attach_add_sources(at, d.intervals) : intervals_add_source(d.intervals, leaders);
		if (rc) {
			fprintf(stderr, PROG ": cannot prepare the counter readings: %s\n", strerror(-rc));
			launch_abort(&l);
			goto out;
		}
	}

	rc = dram_open(&d.dram, "/sys/bus/event_source/devices", (uint64_t)o.dram_ms * 1000000ull, dram_why,
		       sizeof(dram_why));
	if (rc)
		writer_note(d.writer, "missing_dram", dram_why); /* said once below, after the exec */
	else
		dram_why[0] = '\0';

	ri.command_json = cmd;
	ri.cwd = getcwd(cwd, sizeof(cwd)) ? cwd : NULL;
	ri.machine = &m;
	ri.dtype = o.dtype;
	ri.target_pid = attached ? o.pid : l.pid;
	ri.attach = attached;
	ri.interval_ns = (uint64_t)o.interval_ms * 1000000ull;
	ri.start_unix_ns = realtime_ns();
	ri.start_ns = now_ns();
	/* the counters are enabled at the exec, after this: zero until then,
	 * a valid lower bound for a probe hit before the first reading;
	 * attached, they count already: read them now */
	if (d.intervals && (attached ? intervals_sample(d.intervals, 1) : intervals_store_zero(d.intervals, ri.start_ns)))
		fprintf(stderr, PROG ": %s: %s\n", o.output, sqlite3_errmsg(db));
	if (d.probes && attached) {
		/* after the first reading: every hit has readings around it */
		size_t ntids;
		const pid_t *tids = attach_tids(at, &ntids);
		rc = 0;
		for (size_t i = 0; !rc && i < ntids; i++)
			rc = probe_steps_add_thread(d.probes, o.pid, tids[i], err, sizeof(err));
		if (rc) {
			fprintf(stderr, PROG ": %s\n", err);
			goto out;
		}
	}
	rc = attached ? 0 : launch_go(&l);
	if (rc) {
		fprintf(stderr, PROG ": cannot run '%s': %s\n", o.argv[0], strerror(-rc));
		exit_code = rc == -ENOENT ? 127 : 126;
		/* Nothing ran: leave no half-made database behind. Everything
		 * holding statements on it goes first, or it cannot close. */
		sampler_close(d.sampler);
		d.sampler = NULL;
		dram_close(d.dram);
		d.dram = NULL;
		intervals_free(d.intervals);
		d.intervals = NULL;
		writer_close(d.writer);
		d.writer = NULL;
		sqlite3_close(db);
		db = NULL;
		unlink(o.output);
		if (had_old) {
			char old_path[PATH_MAX];
			if (strbuf(old_path, sizeof(old_path), "%s.old", o.output) == 0)
				rename(old_path, o.output);
		}
		goto out;
	}
	/* Say once what will be missing and why. */
	{
		int hw_failed = 0, first = -1;
		for (int i = 0; i < cs.n; i++) {
			if (cs.c[i].opened)
				continue;
			if (strcmp(cs.c[i].kind, "hardware") == 0) {
				if (first < 0)
					first = i;
				hw_failed++;
			} else {
				fprintf(stderr, PROG ": cannot open counter '%s': %s\n", cs.c[i].name, cs.c[i].reason);
			}
		}
		if (cs.hw_missing[0])
			fprintf(stderr, PROG ": %s\n", cs.hw_missing);
		if (hw_failed)
			fprintf(stderr, PROG ": cannot open %d of the hardware counters (first '%s': %s)\n",
				hw_failed, cs.c[first].name, cs.c[first].reason);
		if (cs.amx_note[0])
			fprintf(stderr, PROG ": note: %s\n", cs.amx_note);
		if (dram_why[0])
			fprintf(stderr, PROG ": %s\n", dram_why);
		say_peak_warnings(&pk);
	}

	rc = writer_run_begin(d.writer, &ri);
	if (!rc)
		rc = write_peaks(d.writer, &m, &o, &pk, attached ? "the attached process" : "mfu-record's own "
				 "(until the target's is read)");
	if (!rc && pk.flops <= 0) {
		char note[256];
		strbuf(note, sizeof(note), "no %s peak FLOP/s is known for this CPU (%s); MFU and HFU are unknown: "
		       "pass --peak-flops", o.dtype, m.uarch);
		fprintf(stderr, PROG ": %s\n", note);
		rc = writer_note(d.writer, "missing_peak", note);
	}
	if (!rc)
		rc = writer_commit(d.writer);
	d.output = o.output;
	d.target = attached ? 0 : l.pid; /* --on-error kill stops only what we started */
	d.kill_on_error = o.kill_on_error;
	if (rc)
		record_failed(&d, rc, writer_error(d.writer));

	sink = (struct markers_sink){ .ctx = d.writer, .step = writer_step, .phase = writer_phase,
				      .anomaly = writer_anomaly };
	d.ring = attached ? NULL : ring;
	d.markers = markers_new(&cs, &sink);
	if (!d.markers) {
		record_failed(&d, -ENOMEM, "out of memory");
	}
	for (int i = 0; d.markers && i < o.nreq; i++)
		if (!o.req[i].phase && !o.req[i].python)
			markers_set_probe_steps(d.markers);

	if (attached) {
		size_t nth;
		attach_tids(at, &nth);
		fprintf(stderr, PROG ": attached to process %d (%zu thread%s)%s\n", (int)o.pid, nth, nth == 1 ? "" : "s",
			o.duration > 0 ? "" : "; Ctrl-C detaches");
	}
	struct cpu_watch cw = { .used = m, .settled = attached };
	last_commit = now_ns();
	if (checkpointer_start(&ckpt, o.output, CHECKPOINT_INTERVAL_NS) != 0)
		fprintf(stderr, PROG ": note: cannot start the checkpointer: %s holds the rows only with "
			"its -wal file until the end\n", o.output);
	for (;;) {
		struct pollfd pfd[2] = { { .fd = sfd, .events = POLLIN },
					 { .fd = attached ? attach_pidfd(at) : -1, .events = POLLIN } };
		struct signalfd_siginfo si;
		int drained = d.markers && d.ring ? drain_ring(&d) : 0;
		if (d.dram && !d.failed) {
			int e = dram_sample(d.dram, db, now_ns(), 0);
			if (e)
				record_failed(&d, e, "cannot store DRAM readings");
		}
		if (d.intervals && !d.failed) {
			int e = intervals_sample(d.intervals, 0);
			if (e)
				record_failed(&d, e, "cannot store counter readings");
		}
		if (d.sampler && !d.failed) {
			int n = sampler_drain(d.sampler);
			if (n < 0)
				record_failed(&d, n, "cannot store samples");
			else
				drained += n;
		}
		if (d.probes) {
			int n = probe_steps_drain(d.probes, 0);
			if (n > 0)
				drained += n;
		}
		if (!attached)
			cpu_watch_poll(&d, &cw, &o, &pk, l.pid, now_ns(), 0);

		/* A busy ring is drained again at once; an idle one every 5 ms,
		 * or at the pace of the counter readings when -I is shorter. */
		poll(pfd, 2, drained > 64 ? 0 : o.interval_ms && o.interval_ms < 5 ? (int)o.interval_ms : 5);
		while (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
			if (si.ssi_signo == SIGCHLD)
				continue;
			/* A terminal's ^C (or hangup) reaches the whole foreground
			 * process group, the target included: pass on only signals
			 * sent to mfu-record alone, with kill() or sigqueue().
			 * Attached, the process is not ours: a signal detaches. */
			if (!attached && (si.ssi_code == SI_USER || si.ssi_code == SI_QUEUE))
				kill(l.pid, (int)si.ssi_signo);
			interrupted = 1;
		}
		if (attached) {
			if ((pfd[1].fd >= 0 && (pfd[1].revents & POLLIN)) || (pfd[1].fd < 0 && !attach_alive(at))) {
				target_ended = 1;
				break;
			}
			if (interrupted || (o.duration > 0 && now_ns() - ri.start_ns >= (uint64_t)(o.duration * 1e9)))
				break;
		} else {
			/* Ended? Look without reaping: the zombie still has its
			 * CPU set, for a program too short for the polls. */
			siginfo_t wi = { .si_pid = 0 };
			if (waitid(P_PID, (id_t)l.pid, &wi, WEXITED | WNOHANG | WNOWAIT) == 0 && wi.si_pid == l.pid) {
				if (!cw.settled)
					cpu_watch_poll(&d, &cw, &o, &pk, l.pid, now_ns(), 1);
				if (waitpid(l.pid, &status, 0) == l.pid)
					break;
			}
		}
		if (!d.failed && now_ns() - last_commit >= COMMIT_INTERVAL_NS) {
			rc = writer_commit(d.writer);
			if (rc)
				record_failed(&d, rc, writer_error(d.writer));
			last_commit = now_ns();
		}

	}
	end_ns = now_ns();
	if (attached) {
		exit_code = 0; /* not our child: its exit status is not ours to know */
	} else if (WIFEXITED(status)) {
		exit_status = WEXITSTATUS(status);
		exit_code = exit_status;
	} else if (WIFSIGNALED(status)) {
		exit_signal = WTERMSIG(status);
		exit_code = 128 + exit_signal;
	}

	/* Final drain; slots claimed but never published (a writer killed
	 * mid-record, or a child process still running) count as lost. */
	if (d.markers && d.ring) {
		int32_t hole_pid, hole_tid;
		drain_ring(&d);
		while (mring_hole_owner(ring, &hole_pid, &hole_tid), mring_skip_hole(ring)) {
			int hrc = d.failed ? 0 : markers_lost_hole(d.markers, hole_pid, hole_tid);
			if (hrc)
				record_failed(&d, hrc, hrc == -ENOMEM ? "out of memory" : writer_error(d.writer));
			drain_ring(&d);
		}
	}
	if (!attached && !cw.settled)
		cpu_watch_peaks(&d, &cw, &o, &pk, d.records ? "the target's, read when it ended (its steps ran "
				"between two looks)" : "the target's, read when it ended (no marked step)");
	if (d.probes) {
		char why[512];
		if (d.sampler)
			sampler_drain(d.sampler); /* the last threads and libraries */
		probe_steps_drain(d.probes, 1);
		if (probe_steps_finish(d.probes, db, why, sizeof(why)) != 0 && !d.failed)
			record_failed(&d, -EIO, why);
		if (probe_steps_note(d.probes)[0]) {
			fprintf(stderr, PROG ": %s\n", probe_steps_note(d.probes));
			writer_note(d.writer, "probes", probe_steps_note(d.probes));
		}
	}
	if (pyhook && !d.failed) {
		char why[512], note[1024];
		if (py_hook_finish(pyhook, db, note, sizeof(note), why, sizeof(why)) != 0)
			record_failed(&d, -EIO, why);
		else if (note[0]) {
			fprintf(stderr, PROG ": %s\n", note);
			writer_note(d.writer, "probes", note);
		}
	}
	if (!d.failed) {
		uint64_t lost = attached ? 0 : mring_lost(ring);
		rc = d.markers ? markers_finish(d.markers) : 0;
		if (!rc)
			rc = store_totals(d.writer, &cs, at);
		if (!rc && d.intervals) {
			/* the counters' final values: the bound for the last boundaries */
			rc = intervals_sample(d.intervals, 1);
			if (!rc && intervals_attribute(db, &cs, d.writer, err, sizeof(err)) != 0)
				fprintf(stderr, PROG ": %s\n", err);
		}
		if (!rc && d.dram) {
			rc = dram_sample(d.dram, db, end_ns, 1);
			if (!rc && dram_attribute(db, err, sizeof(err)) != 0)
				fprintf(stderr, PROG ": %s\n", err);
		}
		if (!rc && d.sampler) {
			rc = sampler_finish(d.sampler, err, sizeof(err));
			if (rc) {
				fprintf(stderr, PROG ": sampling: %s\n", err);
				rc = 0; /* the markers' data is complete: keep it */
			} else if (sampler_note(d.sampler)[0]) {
				writer_note(d.writer, "sampling", sampler_note(d.sampler));
			}
		}
		if (!rc && !attached && !d.probes && !pyhook && d.records == 0) {
			char note[512];
			strbuf(note, sizeof(note), "no marker was seen: the program never called mfu_step_begin() "
			       "or mfu_phase_begin(), so there are no steps; mark its loop (C: link libmfu, "
			       "pkg-config mfu; Python: import mfu, which says on stderr when it cannot load "
			       "libmfu) or take steps from a function with --step FUNC");
			fprintf(stderr, PROG ": note: %s\n", note);
			rc = writer_note(d.writer, "no_steps", note);
		}
		if (!rc && markers_ignored_step_markers(d.markers)) {
			char note[512];
			strbuf(note, sizeof(note), "the program marks its own steps too (%llu step markers): with "
			       "--step the steps come from the probes, so its step markers and their "
			       "mfu_step_model() declarations were left out; record without --step to use them",
			       (unsigned long long)markers_ignored_step_markers(d.markers));
			fprintf(stderr, PROG ": note: %s\n", note);
			rc = writer_note(d.writer, "step_source", note);
		}
		if (!rc && lost) {
			char note[256];
			strbuf(note, sizeof(note), "%llu marker records were lost (the marker ring was full); "
			       "steps and phases around them may be missing or incomplete: try --ring-records",
			       (unsigned long long)lost);
			fprintf(stderr, PROG ": %s\n", note);
			rc = writer_note(d.writer, "lost_records", note);
		}
		if (!rc)
			rc = writer_run_end(d.writer, end_ns, exit_status, exit_signal, lost,
					    attached ? (target_ended ? "complete" : "detached")
					    : interrupted ? "interrupted" : "complete");
		if (!rc)
			rc = writer_commit(d.writer);
		if (rc)
			fprintf(stderr, PROG ": cannot complete %s: %s\n", o.output, writer_error(d.writer));
		else if (o.quiet)
			say_impossible(db); /* else the recap's notes say it */
		/* the recap reads the finished file, once it is closed, below */
		recap = !rc && !o.quiet;
		if (recap)
			strbuf(closing, sizeof(closing), PROG ": %llu steps, %llu marker records, %llu lost, "
			       "%llu anomalies -> %s\n", (unsigned long long)(d.markers ? markers_steps(d.markers) : 0),
			       (unsigned long long)d.records, (unsigned long long)lost,
			       (unsigned long long)(d.markers ? markers_anomalies(d.markers) : 0), o.output);
	} else {
		/* Try to leave the reason in the file; with a full disk this
		 * may fail too, and the file still holds what was committed. */
		writer_rollback(d.writer);
		if (writer_run_end(d.writer, end_ns, exit_status, exit_signal, attached ? 0 : mring_lost(ring),
				   "failed") == 0)
			writer_commit(d.writer);
		fprintf(stderr, PROG ": %s holds what was recorded before the failure; %llu marker records "
			"after it were not stored\n", o.output, (unsigned long long)d.dropped);
	}
out:
	checkpointer_stop(ckpt);
	sampler_close(d.sampler);
	probe_steps_free(d.probes); /* uprobes leave the target, semaphores drop */
	py_hook_free(pyhook);
	attach_close(at);
	dram_close(d.dram);
	intervals_free(d.intervals);
	markers_free(d.markers);
	writer_close(d.writer);
	if (db) {
		if (db_finish(db, err, sizeof(err)) != 0) {
			fprintf(stderr, PROG ": cannot finish %s: %s\n", o.output, err);
			recap = 0;
		}
		sqlite3_close(db);
	}
	/* As perf stat does: what the run amounts to, from the file as
	 * mfu-report reads it. The exit status stays the target's. */
	if (recap) {
		fputc('\n', stderr);
		if (recap_print(o.output, stderr, RECAP_VERDICT_MS, err, sizeof(err)) != 0)
			fprintf(stderr, PROG ": cannot summarize %s: %s\n", o.output, err);
		fputs(closing, stderr);
	}
	if (ring != MAP_FAILED)
		munmap(ring, ring_size);
	if (ring_fd >= 0)
		close(ring_fd);
	if (sfd >= 0)
		close(sfd);
	free(cmd);
	return exit_code;
}
