/*
 * A recording in stages (session.h): plan what to open, start the target
 * (or join it), run the loop that drains the rings, finish the database,
 * and tear down whatever exists.
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
#include "session.h"

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

/* Everything one recording holds, from the options to the database. */
struct session {
	struct options o;
	struct machine m;
	struct counters cs;
	struct launch l;
	struct run_info ri;
	struct drain d;
	sigset_t block, old;    /* the signals handled in the loop; the mask before */
	sqlite3 *db;
	char cwd[PATH_MAX];
	struct peaks pk;
	char *cmd;              /* the command as JSON */
	void *ring;             /* the marker ring (MAP_FAILED: none) */
	size_t ring_size;
	int ring_fd, sfd;
	int exit_code;          /* what mfu-record exits with */
	int status;             /* the target's wait status */
	int exit_status, exit_signal, interrupted, had_old;
	struct markers_sink sink;
	struct launch_creds creds;
	struct py_hook *pyhook;
	struct attach *at;
	struct checkpointer *ckpt;
	int attached, target_ended, recap;
	struct cpu_watch cw;
	char closing[PATH_MAX + 160]; /* the last line, after the recap */
};

struct session *session_new(const struct options *o)
{
	struct session *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->o = *o;
	s->l = (struct launch){ .pid = -1, .sock = -1, .exec_pipe = -1 };
	s->ring = MAP_FAILED;
	s->ring_fd = -1;
	s->sfd = -1;
	s->exit_code = 125;
	s->exit_status = -1;
	s->exit_signal = -1;
	return s;
}

/* What to open: the machine, the counters, probes and the Python hook,
 * the calibration, the process to join; the command as JSON. */
int session_plan(struct session *s)
{
	char err[512];
	int rc;

	/* Block the signals we handle from the start: one that arrives while
	 * mfu-record sets up is handled in its loop (passed on, or a detach),
	 * never kills it half-way; none is lost between fork and the
	 * signalfd. The child restores the old mask. */
	sigemptyset(&s->block);
	sigaddset(&s->block, SIGCHLD);
	sigaddset(&s->block, SIGINT);
	sigaddset(&s->block, SIGTERM);
	sigaddset(&s->block, SIGHUP);
	sigaddset(&s->block, SIGQUIT);
	sigprocmask(SIG_BLOCK, &s->block, &s->old);

	rc = machine_probe(&s->m);
	if (rc) {
		fprintf(stderr, PROG ": cannot read this machine's CPU description: %s\n", strerror(-rc));
		return 125;
	}
	rc = counters_plan(&s->cs, "/sys/bus/event_source/devices", s->o.events, s->o.nevents, err, sizeof(err));
	if (rc) {
		fprintf(stderr, PROG ": %s\n", err);
		return 2;
	}
	if (s->o.list_events)
		return list_events(&s->cs);

	if (sudo_creds(&s->o, &s->creds) != 0)
		return 2;
	struct probe_request ureq[PROBE_STEPS_MAX_REQUESTS];
	int nureq = 0;
	for (int i = 0; i < s->o.nreq; i++)
		if (!s->o.req[i].python)
			ureq[nureq++] = s->o.req[i];
	if (nureq < s->o.nreq) {
		char why[600];
		rc = py_hook_setup(&s->pyhook, s->o.req, s->o.nreq, s->creds.drop ? s->creds.uid : (uid_t)-1,
				   s->creds.drop ? s->creds.gid : (gid_t)-1, why, sizeof(why));
		if (rc) {
			fprintf(stderr, PROG ": %s\n", why);
			return 125;
		}
	}
	if (nureq && !s->o.interval_ms)
		fprintf(stderr, PROG ": note: with -I 0 there are no counter readings to interpolate, so the "
			"counts of steps and phases from uprobes are unknown\n");
	if (nureq) {
		char exe[PATH_MAX], warn[2048], why[1200];
		struct probe_steps_sink psink = { .ctx = &s->d, .boundary = probe_boundary, .cancel = probe_cancel };
		if (!have_cap_sys_admin()) {
			fprintf(stderr, PROG ": --step and --phase put uprobes in the program (all but py: specs), "
				"and opening a uprobe needs CAP_SYS_ADMIN: run mfu-record as root (sudo "
				"mfu-record ...; the program still runs as you)\n");
			return 125;
		}
		raise_fd_limit();
		if (probe_steps_new(&s->d.probes, ureq, nureq, &psink) != 0) {
			fprintf(stderr, PROG ": out of memory\n");
			return 125;
		}
		/* a program that cannot be found fails at its exec, with 127 */
		if (s->o.pid || probe_steps_program(s->o.argv[0], exe, sizeof(exe)) == 0) {
			rc = s->o.pid ? probe_steps_resolve_pid(s->d.probes, s->o.pid, warn, sizeof(warn), why, sizeof(why))
				   : probe_steps_resolve_exe(s->d.probes, exe, warn, sizeof(warn), why, sizeof(why));
			if (rc) {
				fprintf(stderr, PROG ": %s\n", why);
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
	calibrate_first(&s->o, &s->m);
	if (s->o.pid) {
		/* before the database: a process that cannot be joined leaves none */
		rc = attach_open(&s->at, s->o.pid, &s->cs, err, sizeof(err));
		if (rc) {
			fprintf(stderr, PROG ": %s\n", err);
			return 125;
		}
		s->attached = 1;
		/* its CPUs, not ours: the peaks are for them */
		if (machine_probe_cpus(&s->m, s->o.pid) != 0)
			fprintf(stderr, PROG ": cannot read the CPU set of process %d; the peaks are for "
				"mfu-record's own CPUs (%s)\n", (int)s->o.pid, s->m.allowed_cpus);
		s->cmd = attach_command_json(s->o.pid);
		if (!s->cmd)
			s->cmd = strdup("[]");
	} else {
		s->cmd = json_argv(s->o.argv);
	}
	if (!s->cmd) {
		fprintf(stderr, PROG ": out of memory\n");
		return s->exit_code;
	}

	return -1;
}

/* The database, the marker ring, the target (launched, stopped before its
 * exec, or joined), the sampling and counter readers; then the go. */
int session_start(struct session *s)
{
	char err[512], dram_why[700] = "";
	struct stat lst;
	int rc;

	s->had_old = lstat(s->o.output, &lst) == 0;
	rc = db_create(s->o.output, &s->db, err, sizeof(err));
	if (rc) {
		fprintf(stderr, PROG ": %s\n", err);
		return s->exit_code;
	}
	/* under sudo the user gets the file, as they would without sudo */
	if (s->creds.drop && chown(s->o.output, s->creds.uid, s->creds.gid) < 0)
		fprintf(stderr, PROG ": cannot give %s to uid %d: %s\n", s->o.output, (int)s->creds.uid, strerror(errno));
	rc = writer_open(&s->d.writer, s->db, err, sizeof(err));
	if (rc) {
		fprintf(stderr, PROG ": %s: %s\n", s->o.output, err);
		return s->exit_code;
	}

	s->ring_size = mring_size(s->o.ring_records);
	s->ring_fd = s->attached ? -1 : memfd_create("mfu-marker-ring", MFD_CLOEXEC);
	if (!s->attached && (s->ring_fd < 0 || ftruncate(s->ring_fd, (off_t)s->ring_size) < 0 ||
	    (s->ring = mmap(NULL, s->ring_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, s->ring_fd, 0)) == MAP_FAILED)) {
		fprintf(stderr, PROG ": cannot create the marker ring (%zu bytes): %s\n", s->ring_size, strerror(errno));
		return s->exit_code;
	}
	/* Counter indexes are known only after the child opened them; the ring
	 * header is filled in before the go, below. */

	s->sfd = signalfd(-1, &s->block, SFD_CLOEXEC | SFD_NONBLOCK);
	if (s->sfd < 0) {
		fprintf(stderr, PROG ": signalfd: %s\n", strerror(errno));
		return s->exit_code;
	}

	if (!s->attached) {
		rc = launch_prepare(&s->l, s->o.argv, s->ring_fd, &s->cs, &s->old, &s->creds, err, sizeof(err));
		if (rc) {
			fprintf(stderr, PROG ": %s\n", err);
			return s->exit_code;
		}
	}
	if (!s->attached && mring_init(s->ring, s->o.ring_records, (uint32_t)s->cs.ngroups, s->cs.group_nr) != 0) {
		fprintf(stderr, PROG ": the counters' readings do not fit a marker record: use fewer -e events\n");
		launch_abort(&s->l);
		return s->exit_code;
	}

	if (s->d.probes && !s->attached) {
		/* on the child before its exec: they survive it, and fire from
		 * the program's first instruction */
		rc = probe_steps_add_thread(s->d.probes, s->l.pid, s->l.pid, err, sizeof(err));
		if (rc) {
			fprintf(stderr, PROG ": %s\n", err);
			launch_abort(&s->l);
			return s->exit_code;
		}
	}

	rc = writer_counters(s->d.writer, &s->cs);
	if (!rc && s->cs.hw_missing[0])
		rc = writer_note(s->d.writer, "missing_counters", s->cs.hw_missing);
	if (!rc && s->cs.amx_note[0])
		rc = writer_note(s->d.writer, "amx", s->cs.amx_note);
	for (int i = 0; !rc && i < s->cs.n; i++) {
		if (!s->cs.c[i].opened) {
			char note[400];
			strbuf(note, sizeof(note), "counter '%s' could not be opened: %s", s->cs.c[i].name, s->cs.c[i].reason);
			rc = writer_note(s->d.writer, "missing_counters", note);
		} else if (s->cs.c[i].user_only && (s->cs.c[i].col == COL_CTX_SWITCHES || s->cs.c[i].col == COL_CPU_MIGRATIONS)) {
			char note[400];
			strbuf(note, sizeof(note), "counter '%s' counts user mode only (perf_event_paranoid >= 2) "
			       "and reads 0 there, so it is reported as unknown; run as root for it", s->cs.c[i].name);
			rc = writer_note(s->d.writer, "missing_counters", note);
		}
	}
	if (!rc && choose_peaks(&s->m, &s->o, &s->pk) != 0) {
		fprintf(stderr, PROG ": out of memory\n");
		launch_abort(&s->l);
		return s->exit_code;
	}
	if (rc) {
		fprintf(stderr, PROG ": %s: %s\n", s->o.output, writer_error(s->d.writer));
		launch_abort(&s->l);
		return s->exit_code;
	}

	{
		struct sampler_opts so = { .freq = s->o.freq, .compute = s->o.compute, .ncompute = s->o.ncompute,
					   .dispatch = s->o.dispatch, .ndispatch = s->o.ndispatch,
					   .compute_file = s->o.compute_file };
		if (s->d.probes) {
			so.on_task = on_task;
			so.on_exec_map = on_exec_map;
			so.cb_ctx = &s->d;
		}
		if (s->attached)
			so.tids = attach_tids(s->at, &so.ntids);
		rc = sampler_open(&s->d.sampler, s->db, s->attached ? s->o.pid : s->l.pid, &so, err, sizeof(err));
		if (!rc && s->attached && sampler_existing(s->d.sampler, s->o.pid, now_ns()) != 0)
			fprintf(stderr, PROG ": cannot store the threads and mappings of %d: its samples "
				"may stay unresolved\n", (int)s->o.pid);
		if (rc == -EINVAL) {
			fprintf(stderr, PROG ": %s\n", err);
			launch_abort(&s->l);
			s->exit_code = 2;
			return s->exit_code;
		}
		if (rc) {
			char note[600];
			strbuf(note, sizeof(note), "no sampling: %s; the breakdown of step time is unknown%s", err,
			       s->d.probes ? ", and probes follow only the first thread" : "");
			fprintf(stderr, PROG ": %s\n", note);
			writer_note(s->d.writer, "no_sampling", note);
		} else if (sampler_note(s->d.sampler)[0]) {
			fprintf(stderr, PROG ": note: %s\n", sampler_note(s->d.sampler));
		}
	}

	if (s->o.interval_ms) {
		int leaders[MRING_MAX_GROUPS];
		for (int g = 0; g < MRING_MAX_GROUPS; g++)
			leaders[g] = g < s->cs.ngroups && s->cs.leader[g] >= 0 ? s->cs.c[s->cs.leader[g]].fd : -1;
		rc = intervals_new(&s->d.intervals, s->db, &s->cs, (uint64_t)s->o.interval_ms * 1000000ull);
		if (!rc)
			rc = s->attached ? attach_add_sources(s->at, s->d.intervals) : intervals_add_source(s->d.intervals, leaders);
		if (rc) {
			fprintf(stderr, PROG ": cannot prepare the counter readings: %s\n", strerror(-rc));
			launch_abort(&s->l);
			return s->exit_code;
		}
	}

	rc = dram_open(&s->d.dram, "/sys/bus/event_source/devices", (uint64_t)s->o.dram_ms * 1000000ull, dram_why,
		       sizeof(dram_why));
	if (rc)
		writer_note(s->d.writer, "missing_dram", dram_why); /* said once below, after the exec */
	else
		dram_why[0] = '\0';

	s->ri.command_json = s->cmd;
	s->ri.cwd = getcwd(s->cwd, sizeof(s->cwd)) ? s->cwd : NULL;
	s->ri.machine = &s->m;
	s->ri.dtype = s->o.dtype;
	s->ri.target_pid = s->attached ? s->o.pid : s->l.pid;
	s->ri.attach = s->attached;
	s->ri.interval_ns = (uint64_t)s->o.interval_ms * 1000000ull;
	s->ri.start_unix_ns = realtime_ns();
	s->ri.start_ns = now_ns();
	/* the counters are enabled at the exec, after this: zero until then,
	 * a valid lower bound for a probe hit before the first reading;
	 * attached, they count already: read them now */
	if (s->d.intervals && (s->attached ? intervals_sample(s->d.intervals, 1) : intervals_store_zero(s->d.intervals, s->ri.start_ns)))
		fprintf(stderr, PROG ": %s: %s\n", s->o.output, sqlite3_errmsg(s->db));
	if (s->d.probes && s->attached) {
		/* after the first reading: every hit has readings around it */
		size_t ntids;
		const pid_t *tids = attach_tids(s->at, &ntids);
		rc = 0;
		for (size_t i = 0; !rc && i < ntids; i++)
			rc = probe_steps_add_thread(s->d.probes, s->o.pid, tids[i], err, sizeof(err));
		if (rc) {
			fprintf(stderr, PROG ": %s\n", err);
			return s->exit_code;
		}
	}
	rc = s->attached ? 0 : launch_go(&s->l);
	if (rc) {
		fprintf(stderr, PROG ": cannot run '%s': %s\n", s->o.argv[0], strerror(-rc));
		s->exit_code = rc == -ENOENT ? 127 : 126;
		/* Nothing ran: leave no half-made database behind. Everything
		 * holding statements on it goes first, or it cannot close. */
		sampler_close(s->d.sampler);
		s->d.sampler = NULL;
		dram_close(s->d.dram);
		s->d.dram = NULL;
		intervals_free(s->d.intervals);
		s->d.intervals = NULL;
		writer_close(s->d.writer);
		s->d.writer = NULL;
		sqlite3_close(s->db);
		s->db = NULL;
		unlink(s->o.output);
		if (s->had_old) {
			char old_path[PATH_MAX];
			if (strbuf(old_path, sizeof(old_path), "%s.old", s->o.output) == 0)
				rename(old_path, s->o.output);
		}
		return s->exit_code;
	}
	/* Say once what will be missing and why. */
	{
		int hw_failed = 0, first = -1;
		for (int i = 0; i < s->cs.n; i++) {
			if (s->cs.c[i].opened)
				continue;
			if (strcmp(s->cs.c[i].kind, "hardware") == 0) {
				if (first < 0)
					first = i;
				hw_failed++;
			} else {
				fprintf(stderr, PROG ": cannot open counter '%s': %s\n", s->cs.c[i].name, s->cs.c[i].reason);
			}
		}
		if (s->cs.hw_missing[0])
			fprintf(stderr, PROG ": %s\n", s->cs.hw_missing);
		if (hw_failed)
			fprintf(stderr, PROG ": cannot open %d of the hardware counters (first '%s': %s)\n",
				hw_failed, s->cs.c[first].name, s->cs.c[first].reason);
		if (s->cs.amx_note[0])
			fprintf(stderr, PROG ": note: %s\n", s->cs.amx_note);
		if (dram_why[0])
			fprintf(stderr, PROG ": %s\n", dram_why);
		say_peak_warnings(&s->pk);
	}

	rc = writer_run_begin(s->d.writer, &s->ri);
	if (!rc)
		rc = write_peaks(s->d.writer, &s->m, &s->o, &s->pk, s->attached ? "the attached process" : "mfu-record's own "
				 "(until the target's is read)");
	if (!rc && s->pk.flops <= 0) {
		char note[256];
		strbuf(note, sizeof(note), "no %s peak FLOP/s is known for this CPU (%s); MFU and HFU are unknown: "
		       "pass --peak-flops", s->o.dtype, s->m.uarch);
		fprintf(stderr, PROG ": %s\n", note);
		rc = writer_note(s->d.writer, "missing_peak", note);
	}
	if (!rc)
		rc = writer_commit(s->d.writer);
	s->d.output = s->o.output;
	s->d.target = s->attached ? 0 : s->l.pid; /* --on-error kill stops only what we started */
	s->d.kill_on_error = s->o.kill_on_error;
	if (rc)
		record_failed(&s->d, rc, writer_error(s->d.writer));

	s->sink = (struct markers_sink){ .ctx = s->d.writer, .step = writer_step, .phase = writer_phase,
				      .anomaly = writer_anomaly };
	s->d.ring = s->attached ? NULL : s->ring;
	s->d.markers = markers_new(&s->cs, &s->sink);
	if (!s->d.markers) {
		record_failed(&s->d, -ENOMEM, "out of memory");
	}
	for (int i = 0; s->d.markers && i < s->o.nreq; i++)
		if (!s->o.req[i].phase && !s->o.req[i].python)
			markers_set_probe_steps(s->d.markers);

	if (s->attached) {
		size_t nth;
		attach_tids(s->at, &nth);
		fprintf(stderr, PROG ": attached to process %d (%zu thread%s)%s\n", (int)s->o.pid, nth, nth == 1 ? "" : "s",
			s->o.duration > 0 ? "" : "; Ctrl-C detaches");
	}
	return -1;
}

/* The loop: drain the rings and readers until the target ends (or, joined,
 * until a signal or --duration). */
int session_run(struct session *s)
{
	uint64_t last_commit;
	int rc;

	s->cw = (struct cpu_watch){ .used = s->m, .settled = s->attached };
	last_commit = now_ns();
	if (checkpointer_start(&s->ckpt, s->o.output, CHECKPOINT_INTERVAL_NS) != 0)
		fprintf(stderr, PROG ": note: cannot start the checkpointer: %s holds the rows only with "
			"its -wal file until the end\n", s->o.output);
	for (;;) {
		struct pollfd pfd[2] = { { .fd = s->sfd, .events = POLLIN },
					 { .fd = s->attached ? attach_pidfd(s->at) : -1, .events = POLLIN } };
		struct signalfd_siginfo si;
		int drained = s->d.markers && s->d.ring ? drain_ring(&s->d) : 0;
		if (s->d.dram && !s->d.failed) {
			int e = dram_sample(s->d.dram, s->db, now_ns(), 0);
			if (e)
				record_failed(&s->d, e, "cannot store DRAM readings");
		}
		if (s->d.intervals && !s->d.failed) {
			int e = intervals_sample(s->d.intervals, 0);
			if (e)
				record_failed(&s->d, e, "cannot store counter readings");
		}
		if (s->d.sampler && !s->d.failed) {
			int n = sampler_drain(s->d.sampler);
			if (n < 0)
				record_failed(&s->d, n, "cannot store samples");
			else
				drained += n;
		}
		if (s->d.probes) {
			int n = probe_steps_drain(s->d.probes, 0);
			if (n > 0)
				drained += n;
		}
		if (!s->attached)
			cpu_watch_poll(&s->d, &s->cw, &s->o, &s->pk, s->l.pid, now_ns(), 0);

		/* A busy ring is drained again at once; an idle one every 5 ms,
		 * or at the pace of the counter readings when -I is shorter. */
		poll(pfd, 2, drained > 64 ? 0 : s->o.interval_ms && s->o.interval_ms < 5 ? (int)s->o.interval_ms : 5);
		while (read(s->sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
			if (si.ssi_signo == SIGCHLD)
				continue;
			/* A terminal's ^C (or hangup) reaches the whole foreground
			 * process group, the target included: pass on only signals
			 * sent to mfu-record alone, with kill() or sigqueue().
			 * Attached, the process is not ours: a signal detaches. */
			if (!s->attached && (si.ssi_code == SI_USER || si.ssi_code == SI_QUEUE))
				kill(s->l.pid, (int)si.ssi_signo);
			s->interrupted = 1;
		}
		if (s->attached) {
			if ((pfd[1].fd >= 0 && (pfd[1].revents & POLLIN)) || (pfd[1].fd < 0 && !attach_alive(s->at))) {
				s->target_ended = 1;
				break;
			}
			if (s->interrupted || (s->o.duration > 0 && now_ns() - s->ri.start_ns >= (uint64_t)(s->o.duration * 1e9)))
				break;
		} else {
			/* Ended? Look without reaping: the zombie still has its
			 * CPU set, for a program too short for the polls. */
			siginfo_t wi = { .si_pid = 0 };
			if (waitid(P_PID, (id_t)s->l.pid, &wi, WEXITED | WNOHANG | WNOWAIT) == 0 && wi.si_pid == s->l.pid) {
				if (!s->cw.settled)
					cpu_watch_poll(&s->d, &s->cw, &s->o, &s->pk, s->l.pid, now_ns(), 1);
				if (waitpid(s->l.pid, &s->status, 0) == s->l.pid)
					break;
			}
		}
		if (!s->d.failed && now_ns() - last_commit >= COMMIT_INTERVAL_NS) {
			rc = writer_commit(s->d.writer);
			if (rc)
				record_failed(&s->d, rc, writer_error(s->d.writer));
			last_commit = now_ns();
		}

	}
	return -1;
}

/* The end of the recording: the exit status, the last records, the
 * derivations, the notes, the run row. */
int session_finish(struct session *s)
{
	char err[512];
	uint64_t end_ns;
	int rc;

	end_ns = now_ns();
	if (s->attached) {
		s->exit_code = 0; /* not our child: its exit status is not ours to know */
	} else if (WIFEXITED(s->status)) {
		s->exit_status = WEXITSTATUS(s->status);
		s->exit_code = s->exit_status;
	} else if (WIFSIGNALED(s->status)) {
		s->exit_signal = WTERMSIG(s->status);
		s->exit_code = 128 + s->exit_signal;
	}

	/* Final drain; slots claimed but never published (a writer killed
	 * mid-record, or a child process still running) count as lost. */
	if (s->d.markers && s->d.ring) {
		int32_t hole_pid, hole_tid;
		drain_ring(&s->d);
		while (mring_hole_owner(s->ring, &hole_pid, &hole_tid), mring_skip_hole(s->ring)) {
			int hrc = s->d.failed ? 0 : markers_lost_hole(s->d.markers, hole_pid, hole_tid);
			if (hrc)
				record_failed(&s->d, hrc, hrc == -ENOMEM ? "out of memory" : writer_error(s->d.writer));
			drain_ring(&s->d);
		}
	}
	if (!s->attached && !s->cw.settled)
		cpu_watch_peaks(&s->d, &s->cw, &s->o, &s->pk, s->d.records ? "the target's, read when it ended (its steps ran "
				"between two looks)" : "the target's, read when it ended (no marked step)");
	if (s->d.probes) {
		char why[512];
		if (s->d.sampler)
			sampler_drain(s->d.sampler); /* the last threads and libraries */
		probe_steps_drain(s->d.probes, 1);
		if (probe_steps_finish(s->d.probes, s->db, why, sizeof(why)) != 0 && !s->d.failed)
			record_failed(&s->d, -EIO, why);
		if (probe_steps_note(s->d.probes)[0]) {
			fprintf(stderr, PROG ": %s\n", probe_steps_note(s->d.probes));
			writer_note(s->d.writer, "probes", probe_steps_note(s->d.probes));
		}
	}
	if (s->pyhook && !s->d.failed) {
		char why[512], note[1024];
		if (py_hook_finish(s->pyhook, s->db, note, sizeof(note), why, sizeof(why)) != 0)
			record_failed(&s->d, -EIO, why);
		else if (note[0]) {
			fprintf(stderr, PROG ": %s\n", note);
			writer_note(s->d.writer, "probes", note);
		}
	}
	if (!s->d.failed) {
		uint64_t lost = s->attached ? 0 : mring_lost(s->ring);
		rc = s->d.markers ? markers_finish(s->d.markers) : 0;
		if (!rc)
			rc = store_totals(s->d.writer, &s->cs, s->at);
		if (!rc && s->d.intervals) {
			/* the counters' final values: the bound for the last boundaries */
			rc = intervals_sample(s->d.intervals, 1);
			if (!rc && intervals_attribute(s->db, &s->cs, s->d.writer, err, sizeof(err)) != 0)
				fprintf(stderr, PROG ": %s\n", err);
		}
		if (!rc && s->d.dram) {
			rc = dram_sample(s->d.dram, s->db, end_ns, 1);
			if (!rc && dram_attribute(s->db, err, sizeof(err)) != 0)
				fprintf(stderr, PROG ": %s\n", err);
		}
		if (!rc && s->d.sampler) {
			rc = sampler_finish(s->d.sampler, err, sizeof(err));
			if (rc) {
				fprintf(stderr, PROG ": sampling: %s\n", err);
				rc = 0; /* the markers' data is complete: keep it */
			} else if (sampler_note(s->d.sampler)[0]) {
				writer_note(s->d.writer, "sampling", sampler_note(s->d.sampler));
			}
		}
		if (!rc && !s->attached && !s->d.probes && !s->pyhook && s->d.records == 0) {
			char note[512];
			strbuf(note, sizeof(note), "no marker was seen: the program never called mfu_step_begin() "
			       "or mfu_phase_begin(), so there are no steps; mark its loop (C: link libmfu, "
			       "pkg-config mfu; Python: import mfu, which says on stderr when it cannot load "
			       "libmfu) or take steps from a function with --step FUNC");
			fprintf(stderr, PROG ": note: %s\n", note);
			rc = writer_note(s->d.writer, "no_steps", note);
		}
		if (!rc && markers_ignored_step_markers(s->d.markers)) {
			char note[512];
			strbuf(note, sizeof(note), "the program marks its own steps too (%llu step markers): with "
			       "--step the steps come from the probes, so its step markers and their "
			       "mfu_step_model() declarations were left out; record without --step to use them",
			       (unsigned long long)markers_ignored_step_markers(s->d.markers));
			fprintf(stderr, PROG ": note: %s\n", note);
			rc = writer_note(s->d.writer, "step_source", note);
		}
		if (!rc && lost) {
			char note[256];
			strbuf(note, sizeof(note), "%llu marker records were lost (the marker ring was full); "
			       "steps and phases around them may be missing or incomplete: try --ring-records",
			       (unsigned long long)lost);
			fprintf(stderr, PROG ": %s\n", note);
			rc = writer_note(s->d.writer, "lost_records", note);
		}
		if (!rc)
			rc = writer_run_end(s->d.writer, end_ns, s->exit_status, s->exit_signal, lost,
					    s->attached ? (s->target_ended ? "complete" : "detached")
					    : s->interrupted ? "interrupted" : "complete");
		if (!rc)
			rc = writer_commit(s->d.writer);
		if (rc)
			fprintf(stderr, PROG ": cannot complete %s: %s\n", s->o.output, writer_error(s->d.writer));
		else if (s->o.quiet)
			say_impossible(s->db); /* else the recap's notes say it */
		/* the recap reads the finished file, once it is closed, below */
		s->recap = !rc && !s->o.quiet;
		if (s->recap)
			strbuf(s->closing, sizeof(s->closing), PROG ": %llu steps, %llu marker records, %llu lost, "
			       "%llu anomalies -> %s\n", (unsigned long long)(s->d.markers ? markers_steps(s->d.markers) : 0),
			       (unsigned long long)s->d.records, (unsigned long long)lost,
			       (unsigned long long)(s->d.markers ? markers_anomalies(s->d.markers) : 0), s->o.output);
	} else {
		/* Try to leave the reason in the file; with a full disk this
		 * may fail too, and the file still holds what was committed. */
		writer_rollback(s->d.writer);
		if (writer_run_end(s->d.writer, end_ns, s->exit_status, s->exit_signal, s->attached ? 0 : mring_lost(s->ring),
				   "failed") == 0)
			writer_commit(s->d.writer);
		fprintf(stderr, PROG ": %s holds what was recorded before the failure; %llu marker records "
			"after it were not stored\n", s->o.output, (unsigned long long)s->d.dropped);
	}
	return -1;
}

int session_end(struct session *s, int rc)
{
	char err[512];
	int exit_code;

	if (!s)
		return 125;
	if (rc >= 0)
		s->exit_code = rc;
	checkpointer_stop(s->ckpt);
	sampler_close(s->d.sampler);
	probe_steps_free(s->d.probes); /* uprobes leave the target, semaphores drop */
	py_hook_free(s->pyhook);
	attach_close(s->at);
	dram_close(s->d.dram);
	intervals_free(s->d.intervals);
	markers_free(s->d.markers);
	writer_close(s->d.writer);
	if (s->db) {
		if (db_finish(s->db, err, sizeof(err)) != 0) {
			fprintf(stderr, PROG ": cannot finish %s: %s\n", s->o.output, err);
			s->recap = 0;
		}
		sqlite3_close(s->db);
	}
	/* As perf stat does: what the run amounts to, from the file as
	 * mfu-report reads it. The exit status stays the target's. */
	if (s->recap) {
		fputc('\n', stderr);
		if (recap_print(s->o.output, stderr, RECAP_VERDICT_MS, err, sizeof(err)) != 0)
			fprintf(stderr, PROG ": cannot summarize %s: %s\n", s->o.output, err);
		fputs(s->closing, stderr);
	}
	if (s->ring != MAP_FAILED)
		munmap(s->ring, s->ring_size);
	if (s->ring_fd >= 0)
		close(s->ring_fd);
	if (s->sfd >= 0)
		close(s->sfd);
	free(s->cmd);
	exit_code = s->exit_code;
	free(s);
	return exit_code;
}
