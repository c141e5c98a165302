/*
 * A recording in stages (session.h): plan what to open, start the target
 * (or join it: session_start.c), run the loop that drains the rings,
 * finish the database, and tear down whatever exists.
 */
#include "session_impl.h"

/* profile_load of the profile at @path (NULL: the default) as the user
 * whose files the recording touches (asuser.h): under sudo the profile is
 * in the invoking user's cache, and a link planted there reaches no more
 * than they could read. */
static int load_profile(const char *path, const struct machine *m, struct profile_peak *pp, int *n,
			struct profile_status *st, struct profile_peak *sup, int *nsup, char *why, size_t len)
{
	struct asuser_saved sv;
	int rc = asuser_enter(asuser_owner(), &sv);

	if (rc) {
		snprintf(why, len, "cannot act as uid %d to read the profile: %s", (int)asuser_uid(asuser_owner()),
			 strerror(-rc));
		*n = 0;
		return rc;
	}
	rc = profile_read_sets(path, m, pp, PROFILE_MAX_PEAKS, n, st, sup, sup ? PROFILE_MAX_PEAKS : 0, nsup, why,
			       len);
	asuser_leave(&sv);
	return rc;
}

/* How many rows of the profile at @path (NULL: the default) apply to @m
 * (its CPU identity and CPU set); @why says why none do. An unreadable
 * profile counts as none. */
static int count_profile(const char *path, const struct machine *m, const char *dtype, int *disturbed,
			 char *why, size_t len)
{
	static struct profile_peak pp[PROFILE_MAX_PEAKS]; /* large; the main thread's */
	int n = 0, rc;

	rc = load_profile(path, m, pp, &n, NULL, NULL, NULL, why, len);
	if (rc < 0 && rc != -ENOSPC)
		n = 0;
	*disturbed = n > 0 && peaks_profile_disturbed(pp, n, dtype, why, len);
	return n;
}


/* The first recording on a machine measures its peaks once (--peak auto or
 * measured, the default profile, no applicable profile yet): a spec row
 * can be wrong by 3x (a VM that masks its CPU model, a TSC rate taken for
 * the clock), and only a measurement shows it. A profile whose figures for
 * this run were all disturbed (peaks_profile_disturbed()) is measured
 * again when the machine is quiet now. Before the target starts,
 * so the two do not share the CPUs. @o->profile is the profile path
 * (explicit: no calibration), @path the default one when it is resolved
 * here (under sudo), else "". Returns 1 when it measured the peaks. */
static int calibrate_first(const struct options *o, const struct machine *m, const char *path)
{
	char why[512], prog[PATH_MAX], shown[PATH_MAX];
	int disturbed = 0;
	double busy = 1;

	if (o->no_calibrate || o->profile || o->peak_mode == PEAKS_SPEC ||
	    (o->peak_flops > 0 && o->peak_bw > 0) || o->list_events)
		return 0;
	if (count_profile(path[0] ? path : NULL, m, o->dtype, &disturbed, why, sizeof(why)) > 0) {
		/* measured while other tasks ran, with nothing undisturbed to use
		 * instead: measured again, but only on a quiet machine (a busy
		 * one would give disturbed figures again) */
		if (!disturbed || peaks_machine_busy(0.2, &busy) != 0 || busy > PEAKS_QUIET_BUSY)
			return 0;
		peaks_calibrate_program(prog, sizeof(prog));
		rec_note(o, PROG ": %s; the machine is quiet now (%.0f%% of its CPU time busy): measuring its "
			"peaks again with '%s --quick' (a few seconds; --no-calibrate skips it)\n", why, busy * 100,
			prog);
		if (peaks_calibrate(prog, path[0] ? path : NULL, asuser_owner(), o->quiet, why, sizeof(why)) != 0) {
			fprintf(stderr, PROG ": calibration failed: %s\n", why);
			return 0;
		}
		return 1;
	}
	peaks_calibrate_program(prog, sizeof(prog));
	if (path[0])
		snprintf(shown, sizeof(shown), "%s", path);
	else if (profile_default_path(shown, sizeof(shown)) != 0)
		snprintf(shown, sizeof(shown), "the default profile");
	rec_note(o, PROG ": this machine has not been calibrated yet (%s): measuring its peaks once "
		"with '%s --quick' (a few seconds; saved in %s; --no-calibrate skips it)\n", why, prog, shown);
	if (peaks_calibrate(prog, path[0] ? path : NULL, asuser_owner(), o->quiet, why, sizeof(why)) != 0) {
		fprintf(stderr, PROG ": calibration failed: %s; using the spec peaks\n", why);
		return 0;
	}
	return 1;
}


/* Work out the peaks for @m's CPU set (the target's): the profile is read
 * here, so this comes before the target runs (a run's first counter
 * readings must not wait for it). What is worth saying (a measured peak far
 * above the spec, an unreadable profile) goes into @pk->warn, printed by
 * the caller once the command runs. */
int choose_peaks(const struct machine *m, const struct options *o, struct peaks *pk)
{
	static struct profile_peak pp[PROFILE_MAX_PEAKS]; /* large; the main thread's */
	static struct profile_peak sup[PROFILE_MAX_PEAKS]; /* the CPU sets holding the target's */
	struct profile_status st = { 0 }; /* load_profile may fail before reading it */
	struct peaks_request rq = { .mode = o->peak_mode, .dtype = o->dtype, .user_flops = o->peak_flops,
				    .user_bw = o->peak_bw, .profile = &st, .machine = sup };
	char why[512] = "";
	int n = 0, rc, err;

	err = load_profile(o->profile, m, pp, &n, &st, sup, &rq.nmachine, why, sizeof(why));
	if (err < 0 && err != -ENOSPC)
		n = 0, rq.nmachine = 0;
	rc = peaks_choose(pk, m, &rq, pp, n, why);
	if (!rc && err < 0 && err != -ENOSPC && pk->nwarn < PEAKS_MAX_WARN)
		snprintf(pk->warn[pk->nwarn++], sizeof(pk->warn[0]), "ignoring the machine profile: %s", why);
	return rc;
}


void rec_note(const struct options *o, const char *fmt, ...)
{
	va_list ap;

	if (o->quiet)
		return;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
}

void say_peak_warnings(const struct options *o, const struct peaks *pk, int calibrated)
{
	for (int i = 0; i < pk->nwarn; i++)
		rec_note(o, PROG ": note: %s\n", pk->warn[i]);
	if (calibrated && pk->spec_note[0])
		rec_note(o, PROG ": note: %s\n", pk->spec_note);
	if (pk->profile_note[0])
		rec_note(o, PROG ": note: %s\n", pk->profile_note);
}


/* Store @pk: the peak table and the run's columns. */
int write_peaks(struct writer *w, const struct machine *m, const struct options *o,
		       const struct peaks *pk, const char *cpus_source)
{
	int rc = writer_peaks(w, pk);

	if (!rc)
		rc = writer_run_peaks(w, m, pk, peaks_mode_name(o->peak_mode), cpus_source);
	return rc;
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


static void raise_fd_limit(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}


struct session *session_new(const struct options *o)
{
	struct session *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->o = *o;
	s->l = (struct launch){ .pid = -1, .sock = -1, .exec_pipe = -1 };
	s->ring = MAP_FAILED;
	s->ring_fd = -1;
	s->lf_fd = -1;
	s->sfd = -1;
	s->exit_code = 125;
	s->exit_status = -1;
	s->exit_signal = -1;
	return s;
}


/* Whether the recording can be made at -o, as its owner (the user under
 * sudo), before anything slow (a calibration) or anything started: not a
 * directory, not another database's side file, in a directory the owner
 * may write (a file is made there and removed: the test the kernel would
 * apply). Returns 0 or an exit code, with one line on stderr. */
static int check_output(struct session *s)
{
	static const char *const side[] = { "-wal", "-shm", "-journal" };
	const char *out = s->o.output, *slash = strrchr(out, '/');
	char dir[PATH_MAX], probe[PATH_MAX + 32];
	size_t len = strlen(out);
	struct asuser_saved sv;
	struct stat st;
	int rc, fd, e = 0;

	for (size_t i = 0; i < ARRAY_SIZE(side); i++) {
		size_t n = strlen(side[i]);
		char base[PATH_MAX];
		if (len > n && len - n < sizeof(base) && strcmp(out + len - n, side[i]) == 0) {
			memcpy(base, out, len - n);
			base[len - n] = '\0';
			if (lstat(base, &st) == 0 && S_ISREG(st.st_mode)) {
				fprintf(stderr, PROG ": %s is the %s file of the database %s: write the recording to "
					"another file\n", out, side[i] + 1, base);
				return 2;
			}
		}
	}
	if (!slash)
		strbuf(dir, sizeof(dir), ".");
	else if (slash == out)
		strbuf(dir, sizeof(dir), "/");
	else if (strbuf(dir, sizeof(dir), "%.*s", (int)(slash - out), out)) {
		fprintf(stderr, PROG ": %s: path too long\n", out);
		return 2;
	}
	rc = asuser_enter(&s->owner, &sv);
	if (rc) {
		fprintf(stderr, PROG ": cannot act as uid %d to create %s: %s\n", (int)s->owner.uid, out,
			strerror(-rc));
		return s->exit_code;
	}
	if (stat(out, &st) == 0 && S_ISDIR(st.st_mode)) {
		e = EISDIR;
	} else if (strbuf(probe, sizeof(probe), "%s/.mfu-record-XXXXXX", dir) == 0) {
		fd = mkostemp(probe, O_CLOEXEC);
		if (fd < 0) {
			e = errno;
		} else {
			close(fd);
			unlink(probe);
		}
	}
	asuser_leave(&sv);
	if (e == EISDIR) {
		fprintf(stderr, PROG ": %s is a directory: name the recording's file (-o DIR/run.sqlite)\n", out);
		return 2;
	}
	if (e) {
		fprintf(stderr, PROG ": cannot write the recording %s: directory %s: %s\n", out, dir, strerror(e));
		return s->exit_code;
	}
	return 0;
}

/* Block the signals we handle from the start: one that arrives while
 * mfu-record sets up is handled in its loop (passed on, or a detach),
 * never kills it half-way; none is lost between fork and the signalfd.
 * The child restores the old mask. */
static void block_signals(struct session *s)
{
	sigemptyset(&s->block);
	sigaddset(&s->block, SIGCHLD);
	sigaddset(&s->block, SIGINT);
	sigaddset(&s->block, SIGTERM);
	sigaddset(&s->block, SIGHUP);
	sigaddset(&s->block, SIGQUIT);
	sigprocmask(SIG_BLOCK, &s->block, &s->old);
}

/* The machine and the counters to open (--list-events ends here).
 * Returns -1 to go on, or an exit code. */
static int plan_counters(struct session *s)
{
	char err[512];
	int rc = machine_probe(&s->m);

	if (rc) {
		fprintf(stderr, PROG ": cannot read this machine's CPU description: %s\n", strerror(-rc));
		return 125;
	}
	/* one of several ranks of a job on this node: its share of the
	 * node's CPUs when they all run unbound (machine.h) */
	if (s->o.rank.rank >= 0 && s->o.rank.local_size > 1) {
		s->m.rank_share = s->o.rank.local_size;
		(void)machine_probe_cpus(&s->m, 0);
	}
	rc = counters_plan(&s->cs, "/sys/bus/event_source/devices", s->o.events, s->o.nevents, err, sizeof(err));
	if (!rc && s->o.emulate)
		rc = counters_plan_emulated(&s->cs, err, sizeof(err));
	if (rc) {
		fprintf(stderr, PROG ": %s\n", err);
		return 2;
	}
	if (s->o.list_events)
		return list_events(&s->cs);
	return -1;
}

/* Whose the recording is (the user under sudo), whether it can be made
 * at -o, their profile, and the emulator. Returns -1 to go on, or an
 * exit code. */
static int plan_owner(struct session *s)
{
	char err[512];
	int rc;

	if (sudo_creds(&s->o, &s->creds) != 0)
		return 2;
	/* Under sudo the target's user owns what the recording makes and
	 * touches in their places (asuser.h). */
	if (s->creds.drop)
		asuser_init(&s->owner, s->creds.uid, s->creds.gid, s->creds.user[0] ? s->creds.user : NULL);
	asuser_set_owner(&s->owner);
	rc = check_output(s);
	if (rc)
		return rc;
	/* ... and the profile is theirs too (with --as-root, root's own):
	 * sudo -E leaves the user's HOME, where root's calibration would
	 * leave root's files and follow the user's links */
	if (!s->o.profile && geteuid() == 0 && getenv("SUDO_UID") &&
	    profile_user_path(asuser_uid(&s->owner), s->profile, sizeof(s->profile)) != 0)
		s->profile[0] = '\0';
	if (s->o.emulate) {
		/* before the database: nothing is left behind when Valgrind, the
		 * tool or the command is missing */
		rc = emulator_prepare(&s->emu, s->o.argv, &s->owner, err, sizeof(err));
		if (rc) {
			fprintf(stderr, PROG ": %s\n", err);
			/* as for a native run: 127 not found, 126 not executable */
			return !s->emu.command_missing ? 125 : rc == -ENOENT ? 127 : 126;
		}
	}
	return -1;
}

/* The uprobes of --step and --phase (@ureq, @nureq: all but py: specs),
 * resolved in the program or the process to join. Returns -1 to go on,
 * or an exit code. */
static int plan_uprobes(struct session *s, const struct probe_request *ureq, int nureq)
{
	char exe[PATH_MAX], warn[2048], why[1200];
	struct probe_steps_sink psink = { .ctx = &s->d, .boundary = session_loop_probe_boundary, .cancel = session_loop_probe_cancel };
	int rc;

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
			rec_note(&s->o, PROG ": %.*s\n", (int)n, line);
			line += n + (line[n] == '\n');
		}
	}
	return -1;
}

/* --step and --phase: the Python hook for py: specs, uprobes for the
 * others. Returns -1 to go on, or an exit code. */
static int plan_probes(struct session *s)
{
	struct probe_request ureq[PROBE_STEPS_MAX_REQUESTS];
	int nureq = 0, rc;

	for (int i = 0; i < s->o.nreq; i++)
		if (!s->o.req[i].python)
			ureq[nureq++] = s->o.req[i];
	if (nureq < s->o.nreq) {
		char why[600];
		rc = py_hook_setup(&s->pyhook, s->o.req, s->o.nreq, &s->owner, why, sizeof(why));
		if (rc) {
			fprintf(stderr, PROG ": %s\n", why);
			return 125;
		}
	}
	if (nureq && !s->o.interval_ms)
		rec_note(&s->o, PROG ": note: with -I 0 there are no counter readings to interpolate, so the "
			"counts of steps and phases from uprobes are unknown\n");
	return nureq ? plan_uprobes(s, ureq, nureq) : -1;
}

/* -p: the process to join, before the database (a process that cannot be
 * joined leaves none); else the command. Either way the command as JSON.
 * Returns -1 to go on, or an exit code. */
static int plan_target(struct session *s)
{
	char err[512];
	int rc;

	if (s->o.pid) {
		/* Under sudo, only the invoking user's own processes: root could
		 * join any, and the recording (samples, call stacks, command
		 * line) goes to that user */
		rc = s->creds.drop ? attach_owned_by(s->o.pid, s->creds.uid, err, sizeof(err)) : 0;
		if (!rc)
			rc = attach_open(&s->at, s->o.pid, &s->cs, err, sizeof(err));
		if (rc) {
			fprintf(stderr, PROG ": %s\n", err);
			return 125;
		}
		s->attached = 1;
		/* its own markers, when it uses libmfu: switched on in go() */
		if (attach_markers_open(&s->am, s->o.pid, &s->d.ring_c, s->am_why, sizeof(s->am_why)) != 0 &&
		    !s->am_why[0])
			strbuf(s->am_why, sizeof(s->am_why), "the markers of process %d cannot be switched on: %s",
			       (int)s->o.pid, strerror(ENOMEM));
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

/* What to open: the machine, the counters, probes and the Python hook,
 * the calibration, the process to join; the command as JSON. */
int session_plan(struct session *s)
{
	int rc;

	block_signals(s);
	rc = plan_counters(s);
	if (rc < 0)
		rc = plan_owner(s);
	if (rc < 0)
		rc = plan_probes(s);
	if (rc >= 0)
		return rc;
	s->calibrated = calibrate_first(&s->o, &s->m, s->profile);
	if (!s->o.profile && s->profile[0])
		s->o.profile = s->profile;
	return plan_target(s);
}

/* db_finish() failed: one line. A file another process held open is
 * complete but not in its finished form, and nothing said so before:
 * mfu-record's own failure, 125. (A disk that filled up was said when it
 * did, and the status stays the target's.) */
static void finish_failed(struct session *s, int rc, const char *err)
{
	if (rc == -EBUSY) {
		fprintf(stderr, PROG ": cannot finish %s: another process held it open for %d s (%s), so it "
			"is left in WAL mode: the recording is complete; keep %s-wal beside it, or run "
			"sqlite3 %s 'PRAGMA journal_mode=DELETE' once nothing reads it\n", s->o.output,
			DB_BUSY_TIMEOUT_MS / 1000, err, s->o.output, s->o.output);
		s->exit_code = 125;
	} else {
		fprintf(stderr, PROG ": cannot finish %s: %s\n", s->o.output, err);
	}
	s->recap = 0;
}


/* The recap, as perf stat prints one: `mfu-report --db FILE` on the
 * finished file, its output on our stderr, as the file's user. One code
 * path for both, and mfu-record does not link the report. */
static void print_recap(const char *output)
{
	const char *argv[] = { paths_get(PATHS_REPORT), "--db", output, NULL };
	char why[PATH_MAX + 128], how[64];
	int status;

	if (child_run(argv, asuser_owner(), STDERR_FILENO, -1, PROG, &status, why, sizeof(why)))
		fprintf(stderr, PROG ": cannot summarize %s: %s\n", output, why);
	else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		fprintf(stderr, PROG ": cannot summarize %s: %s %s (run mfu-report --db %s)\n", output, argv[0],
			child_status_text(status, how, sizeof(how)), output);
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
	lib_probes_free(s->lp);        /* before the database closes: it holds a statement */
	py_hook_free(s->pyhook);
	handoff_server_free(s->handoff);
	attach_markers_close(s->am);
	attach_close(s->at);
	dram_close(s->d.dram);
	intervals_free(s->d.intervals);
	lib_counts_free(s->d.lib);
	markers_free(s->d.markers);
	writer_close(s->d.writer);
	/* the file is the user's: finishing it (which removes the -wal and
	 * -shm files) and reading it back happen as them (asuser.h) */
	struct asuser_saved sv;
	int as = asuser_enter(&s->owner, &sv);
	if (s->db && as) {
		fprintf(stderr, PROG ": cannot act as uid %d to finish %s: %s\n", (int)s->owner.uid,
			s->o.output, strerror(-as));
		s->recap = 0;
		s->exit_code = 125;
	} else if (s->db) {
		live_stage(s->live, "building the indexes");
		int frc = db_finish(s->db, err, sizeof(err));
		if (frc) {
			live_clear(s->live);
			finish_failed(s, frc, err);
		}
		sqlite3_close(s->db);
	}
	/* As perf stat does: what the run amounts to, from the file as
	 * mfu-report reads it. The exit status stays the target's. */
	if (s->recap)
		live_stage(s->live, "summarizing");
	/* the live line goes before the summary takes its place */
	live_free(s->live);
	s->live = NULL;
	if (s->recap) {
		fputc('\n', stderr);
		if (!as)
			print_recap(s->o.output);
		fputs(s->closing, stderr);
	}
	if (!as)
		asuser_leave(&sv);
	if (s->ring != MAP_FAILED)
		munmap(s->ring, s->ring_size);
	if (s->ring_fd >= 0)
		close(s->ring_fd);
	if (s->lf)
		munmap(s->lf, libflops_region_size());
	if (s->lf_fd >= 0)
		close(s->lf_fd);
	if (s->sfd >= 0)
		close(s->sfd);
	free(s->cmd);
	emulator_cleanup(&s->emu);
	asuser_set_owner(NULL);
	exit_code = s->exit_code;
	free(s);
	return exit_code;
}
