/*
 * A recording in stages (session.h): plan what to open, start the target
 * (or join it), run the loop that drains the rings, finish the database,
 * and tear down whatever exists.
 */
#include "session_impl.h"

/* profile_load of the profile at @path (NULL: the default) as the user
 * whose files the recording touches (asuser.h): under sudo the profile is
 * in the invoking user's cache, and a link planted there reaches no more
 * than they could read. */
static int load_profile(const char *path, const struct machine *m, struct profile_peak *pp, int *n,
			struct profile_status *st, char *why, size_t len)
{
	struct asuser_saved sv;
	int rc = asuser_enter(asuser_owner(), &sv);

	if (rc) {
		snprintf(why, len, "cannot act as uid %d to read the profile: %s", (int)asuser_uid(asuser_owner()),
			 strerror(-rc));
		*n = 0;
		return rc;
	}
	rc = profile_read(path, m, pp, PROFILE_MAX_PEAKS, n, st, why, len);
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

	rc = load_profile(path, m, pp, &n, NULL, why, len);
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
 * here (under sudo), else "". */
static void calibrate_first(const struct options *o, const struct machine *m, const char *path)
{
	char why[512], prog[PATH_MAX], shown[PATH_MAX];
	int disturbed = 0;
	double busy = 1;

	if (o->no_calibrate || o->profile || o->peak_mode == PEAKS_SPEC ||
	    (o->peak_flops > 0 && o->peak_bw > 0) || o->list_events)
		return;
	if (count_profile(path[0] ? path : NULL, m, o->dtype, &disturbed, why, sizeof(why)) > 0) {
		/* measured while other tasks ran, with nothing undisturbed to use
		 * instead: measured again, but only on a quiet machine (a busy
		 * one would give disturbed figures again) */
		if (!disturbed || peaks_machine_busy(0.2, &busy) != 0 || busy > PEAKS_QUIET_BUSY)
			return;
		peaks_calibrate_program(prog, sizeof(prog));
		rec_note(o, PROG ": %s; the machine is quiet now (%.0f%% of its CPU time busy): measuring its "
			"peaks again with '%s --quick' (a few seconds; --no-calibrate skips it)\n", why, busy * 100,
			prog);
		if (peaks_calibrate(prog, path[0] ? path : NULL, asuser_owner(), o->quiet, why, sizeof(why)) != 0)
			fprintf(stderr, PROG ": calibration failed: %s\n", why);
		return;
	}
	peaks_calibrate_program(prog, sizeof(prog));
	if (path[0])
		snprintf(shown, sizeof(shown), "%s", path);
	else if (profile_default_path(shown, sizeof(shown)) != 0)
		snprintf(shown, sizeof(shown), "the default profile");
	rec_note(o, PROG ": this machine has not been calibrated yet (%s): measuring its peaks once "
		"with '%s --quick' (a few seconds; saved in %s; --no-calibrate skips it)\n", why, prog, shown);
	if (peaks_calibrate(prog, path[0] ? path : NULL, asuser_owner(), o->quiet, why, sizeof(why)) != 0)
		fprintf(stderr, PROG ": calibration failed: %s; using the spec peaks\n", why);
}


/* Work out the peaks for @m's CPU set (the target's): the profile is read
 * here, so this comes before the target runs (a run's first counter
 * readings must not wait for it). What is worth saying (a measured peak far
 * above the spec, an unreadable profile) goes into @pk->warn, printed by
 * the caller once the command runs. */
int choose_peaks(const struct machine *m, const struct options *o, struct peaks *pk)
{
	static struct profile_peak pp[PROFILE_MAX_PEAKS]; /* large; the main thread's */
	struct profile_status st = { 0 }; /* load_profile may fail before reading it */
	struct peaks_request rq = { .mode = o->peak_mode, .dtype = o->dtype, .user_flops = o->peak_flops,
				    .user_bw = o->peak_bw, .profile = &st };
	char why[512] = "";
	int n = 0, rc, err;

	err = load_profile(o->profile, m, pp, &n, &st, why, sizeof(why));
	if (err < 0 && err != -ENOSPC)
		n = 0;
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

static void say_peak_warnings(const struct options *o, const struct peaks *pk)
{
	for (int i = 0; i < pk->nwarn; i++)
		rec_note(o, PROG ": note: %s\n", pk->warn[i]);
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


/* What to open: the machine, the counters, probes and the Python hook,
 * the calibration, the process to join; the command as JSON. */
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
	struct probe_request ureq[PROBE_STEPS_MAX_REQUESTS];
	int nureq = 0;
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
				rec_note(&s->o, PROG ": %.*s\n", (int)n, line);
				line += n + (line[n] == '\n');
			}
		}
	}
	calibrate_first(&s->o, &s->m, s->profile);
	if (!s->o.profile && s->profile[0])
		s->o.profile = s->profile;
	if (s->o.pid) {
		/* before the database: a process that cannot be joined leaves none.
		 * Under sudo, only the invoking user's own processes: root could
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


/* The database, the marker ring, the target (launched, stopped before its
 * exec, or joined), the sampling and counter readers; then the go. */
/* The database (the old file kept as FILE.old) and its writer. */
static int start_database(struct session *s)
{
	char err[512];
	struct asuser_saved sv;
	int rc;

	/* Under sudo the user makes the file, as they would without sudo: in
	 * a directory they may write, theirs, and a link or a swapped
	 * directory there reaches nothing of root's (asuser.h). */
	rc = asuser_enter(&s->owner, &sv);
	if (rc) {
		fprintf(stderr, PROG ": cannot act as uid %d to create %s: %s\n", (int)s->owner.uid, s->o.output,
			strerror(-rc));
		return s->exit_code;
	}
	rc = db_create(s->o.output, &s->db, s->kept_old, sizeof(s->kept_old), err, sizeof(err));
	asuser_leave(&sv);
	if (rc) {
		fprintf(stderr, PROG ": %s\n", err);
		return s->exit_code;
	}
	rc = writer_open(&s->d.writer, s->db, err, sizeof(err));
	if (rc) {
		fprintf(stderr, PROG ": %s: %s\n", s->o.output, err);
		return s->exit_code;
	}
	return -1;
}


/* Fix the size of a memfd shared with the target: the target holds the fd,
 * and a ring or region it shrank would kill the recorder with SIGBUS at
 * its next read. */
static int seal_size(int fd)
{
	return fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0 ? -errno : 0;
}

/* The region in which the counting library, preloaded into the target,
 * counts library calls (libflops.h). Without it the recording goes on, and
 * lf_why says why library FLOPs are unknown. */
static void start_libflops(struct session *s)
{
	size_t size = libflops_region_size();
	const char *lib = launch_libflops_path();
	void *mem;

	if (s->o.no_lib_flops)
		return;
	if (s->attached) {
		strbuf(s->lf_why, sizeof(s->lf_why), "library calls are not counted with -p: the counting "
		       "library is preloaded when a program starts, so record the program from its start "
		       "for library FLOPs");
		return;
	}
	if (access(lib, R_OK) != 0) {
		strbuf(s->lf_why, sizeof(s->lf_why), "library calls are not counted: the counting library %s "
		       "cannot be read (%s); reinstall mfu", lib, strerror(errno));
		return;
	}
	s->lf_fd = memfd_create("mfu-libflops", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (s->lf_fd < 0 || ftruncate(s->lf_fd, (off_t)size) < 0 || seal_size(s->lf_fd) < 0 ||
	    (mem = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, s->lf_fd, 0)) == MAP_FAILED) {
		strbuf(s->lf_why, sizeof(s->lf_why), "library calls are not counted: cannot share %zu bytes "
		       "with the target (%s)", size, strerror(errno));
		if (s->lf_fd >= 0)
			close(s->lf_fd);
		s->lf_fd = -1;
		return;
	}
	s->lf = mem;
	libflops_region_init(s->lf);
	writer_set_libflops(s->d.writer, s->lf);
	/* read on the timer too: a run without steps has its library FLOPs */
	if (lib_counts_new(&s->d.lib, s->lf) != 0)
		strbuf(s->lf_why, sizeof(s->lf_why), "library calls are counted in each step, but not for "
		       "the whole run: out of memory");
}

/* BLAS functions linked into the executable itself, which preloading
 * cannot reach: uprobes on them, on the child before its exec (they fire
 * from its first call). Without them the recording goes on, and lp_why
 * says what is not counted. */
static void start_lib_probes(struct session *s)
{
	char exe[PATH_MAX], why[512];
	int n, err;

	if (s->o.no_lib_flops || s->attached || probe_steps_program(s->o.argv[0], exe, sizeof(exe)) != 0)
		return;
	n = lib_probes_count_in(exe);
	if (n <= 0)
		return;
	if (s->o.emulate) {
		strbuf(s->lp_why, sizeof(s->lp_why), "the executable %s has %d BLAS/oneDNN functions linked "
		       "in, which preloading cannot reach, and uprobes never fire in code the emulator runs "
		       "(--emulate); the library FLOPs of its steps are unknown (their counted FLOPs are "
		       "not)", exe, n);
		return;
	}
	why[0] = '\0';
	err = lib_probes_open(&s->lp, exe, s->l.pid, why, sizeof(why));
	if (err)
		strbuf(s->lp_why, sizeof(s->lp_why), "the executable %s has %d BLAS/oneDNN functions linked "
		       "in, which preloading cannot reach, and their calls cannot be counted: %s; the "
		       "library FLOPs of its steps are unknown", exe, n, why);
}

/* Answer the target's processes that lost the fds (handoff_server.h):
 * the ring, the leaders of the groups MFU_GROUP_FD numbers, the region. */
static int start_handoff(struct session *s)
{
	int gfds[MRING_MAX_GROUPS], n = 0;

	if (!s->handoff)
		return 0;
	for (int g = 0; g < s->cs.ngroups && g < MRING_MAX_GROUPS; g++) {
		int li = s->cs.leader[g];
		if (li >= 0 && !s->cs.c[li].emulated)
			gfds[n++] = s->cs.c[li].fd;
	}
	/* the target's user; as root for root, anyone its processes become */
	return handoff_server_start(s->handoff, s->l.pid, s->creds.drop ? s->creds.uid : geteuid(),
				    !s->creds.drop && geteuid() == 0, s->ring_fd, gfds, n, s->lf_fd);
}

/* The marker ring, the signals' fd, and the target stopped before its exec
 * (launch) with its uprobes; attached, only the fd. */
static int start_target(struct session *s)
{
	char err[512];
	int rc;

	start_libflops(s);
	s->ring_size = mring_size(s->o.ring_records);
	s->ring_fd = s->attached ? -1 : memfd_create("mfu-marker-ring", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (!s->attached && (s->ring_fd < 0 || ftruncate(s->ring_fd, (off_t)s->ring_size) < 0 || seal_size(s->ring_fd) < 0 ||
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
		/* A launcher between mfu-record and the program (mpirun) may
		 * close the fds it passes down: the program asks for them again
		 * on this socket. Without one it can only say nothing. */
		rc = handoff_server_open(&s->handoff);
		if (rc)
			rec_note(&s->o, PROG ": note: cannot listen for processes that lose mfu-record's descriptors "
				"(%s): a launcher that closes them leaves their steps unrecorded\n", strerror(-rc));
		rc = launch_prepare(&s->l, s->o.emulate ? s->emu.argv : s->o.argv, s->ring_fd, s->lf_fd, &s->cs,
				    &s->old, &s->creds, s->handoff ? handoff_server_name(s->handoff) : NULL, err,
				    sizeof(err));
		if (rc) {
			fprintf(stderr, PROG ": %s\n", err);
			return s->exit_code;
		}
		rc = start_handoff(s);
		if (rc) {
			rec_note(&s->o, PROG ": note: cannot answer processes that lose mfu-record's descriptors "
				"(%s): a launcher that closes them leaves their steps unrecorded\n", strerror(-rc));
			handoff_server_free(s->handoff);
			s->handoff = NULL;
		}
	}
	start_lib_probes(s);
	if (!s->attached && mring_init(s->ring, s->o.ring_records, (uint32_t)s->cs.ngroups, s->cs.group_nr) != 0) {
		fprintf(stderr, PROG ": the counters' readings do not fit a marker record: use fewer -e events\n");
		launch_abort(&s->l);
		return s->exit_code;
	}
	/* The consumer's geometry, now: the child waits for the go in our own
	 * code, so nothing but the recorder has written the ring yet. */
	if (!s->attached && mring_consumer_init(&s->d.ring_c, s->ring, s->ring_size, s->o.ring_records) != 0) {
		fprintf(stderr, PROG ": cannot read the marker ring it made\n");
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
	return -1;
}


/* What was opened and what could not be (the counters, their notes), and
 * the peaks chosen for the target. */
static int store_plan(struct session *s)
{
	int rc;

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
	return -1;
}


/* The sampling rings, the counter readings (-I) and the memory
 * controllers. */
static int open_readers(struct session *s)
{
	char err[512];
	int rc;

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
			rec_note(&s->o, PROG ": note: %s\n", sampler_note(s->d.sampler));
		}
	}

	if (s->o.interval_ms) {
		int leaders[MRING_MAX_GROUPS];
		for (int g = 0; g < MRING_MAX_GROUPS; g++)
			leaders[g] = g < s->cs.ngroups && s->cs.leader[g] >= 0 ? s->cs.c[s->cs.leader[g]].fd : -1;
		rc = intervals_new(&s->d.intervals, s->db, &s->cs, (uint64_t)s->o.interval_ms * 1000000ull);
		if (!rc)
			rc = s->attached ? attach_add_sources(s->at, s->d.intervals) : intervals_add_source(s->d.intervals, leaders);
		if (!rc && s->d.lib)
			rc = intervals_set_lib(s->d.intervals, s->d.lib);
		if (rc) {
			fprintf(stderr, PROG ": cannot prepare the counter readings: %s\n", strerror(-rc));
			launch_abort(&s->l);
			return s->exit_code;
		}
	}

	rc = dram_open(&s->d.dram, "/sys/bus/event_source/devices", (uint64_t)s->o.dram_ms * 1000000ull, s->dram_why,
		       sizeof(s->dram_why));
	if (rc)
		writer_note(s->d.writer, "missing_dram", s->dram_why); /* said once below, after the exec */
	else
		s->dram_why[0] = '\0';
	return -1;
}


/* The markers' rows go to the writer; each step also to the live line. */
static int on_step(void *ctx, const struct interval_row *row)
{
	struct session *s = ctx;
	live_step(s->live, row);
	return writer_step(s->d.writer, row);
}

static int on_phase(void *ctx, const struct interval_row *row)
{
	struct session *s = ctx;
	return writer_phase(s->d.writer, row);
}

static int on_anomaly(void *ctx, const struct anomaly_row *row)
{
	struct session *s = ctx;
	return writer_anomaly(s->d.writer, row);
}

/* The peaks the run divides by, for the target's libmfu (mfu_last_step():
 * the program's own MFU of each step is then the report's): exact doubles
 * and their sources, set in its environment with the go. Sources that do
 * not fit are left out (the peaks are not). The target's CPU set is read
 * again at its first step, and when it changed (the program set its own
 * affinity first) the run's peaks change while the program keeps these:
 * the notes say so (cpus_source). */
static void hand_peaks(struct session *s)
{
	char v[64];

	if (s->pk.flops > 0) {
		snprintf(v, sizeof(v), "%.17g", s->pk.flops);
		launch_setenv(&s->l, "MFU_RECORD_PEAK_FLOPS", v);
	}
	if (s->pk.bw > 0) {
		snprintf(v, sizeof(v), "%.17g", s->pk.bw);
		launch_setenv(&s->l, "MFU_RECORD_PEAK_BW", v);
	}
	launch_setenv(&s->l, "MFU_RECORD_DTYPE", s->o.dtype);
	if (s->pk.flops > 0)
		launch_setenv(&s->l, "MFU_RECORD_PEAK_FLOPS_SOURCE", s->pk.flops_source);
	if (s->pk.bw > 0)
		launch_setenv(&s->l, "MFU_RECORD_PEAK_BW_SOURCE", s->pk.bw_source);
}

/* The run row and the go: the target execs (or, joined, goes on); then
 * what will be missing is said once, and the markers are paired from here. */
static int go(struct session *s)
{
	char err[512];
	int rc;

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
	if (!s->attached)
		hand_peaks(s);
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
		struct asuser_saved sv;
		int as = asuser_enter(&s->owner, &sv);
		sqlite3_close(s->db);
		s->db = NULL;
		if (!as) {
			unlink(s->o.output);
			if (s->kept_old[0])
				rename(s->kept_old, s->o.output);
			asuser_leave(&sv);
		}
		return s->exit_code;
	}
	/* the target runs: the earlier recording stays where it was moved */
	if (s->kept_old[0])
		rec_note(&s->o, PROG ": %s existed: kept as %s\n", s->o.output, s->kept_old);
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
				rec_note(&s->o, PROG ": cannot open counter '%s': %s\n", s->cs.c[i].name, s->cs.c[i].reason);
			}
		}
		if (s->cs.hw_missing[0])
			rec_note(&s->o, PROG ": %s\n", s->cs.hw_missing);
		if (hw_failed)
			rec_note(&s->o, PROG ": cannot open %d of the hardware counters (first '%s': %s)\n",
				hw_failed, s->cs.c[first].name, s->cs.c[first].reason);
		if (s->cs.amx_note[0])
			rec_note(&s->o, PROG ": note: %s\n", s->cs.amx_note);
		if (s->dram_why[0])
			rec_note(&s->o, PROG ": %s\n", s->dram_why);
		say_peak_warnings(&s->o, &s->pk);
	}

	rc = writer_run_begin(s->d.writer, &s->ri);
	if (!rc)
		rc = writer_run_rank(s->d.writer, s->o.rank.rank, s->o.rank.size, s->o.rank.local_rank,
				     s->o.rank.local_size, s->o.rank.job, s->o.rank.source, s->m.rank_shared);
	if (!rc && s->o.emulate) {
		char note[600];
		rc = writer_run_emulated(s->d.writer, s->emu.engine);
		strbuf(note, sizeof(note), "emulated run (%s): the FP operations of every step and phase "
		       "were counted exactly by an emulator, not by the PMU; its times are the emulator's "
		       "(2 to 1,000+ times the program's own), so MFU, HFU, MBU and rates are not given: join the "
		       "counts to a native run with mfu-report --hw-flops-from", s->emu.engine);
		if (!rc)
			rc = writer_note(s->d.writer, "emulated", note);
		if (!s->o.quiet)
			fprintf(stderr, PROG ": note: %s\n", note);
	}
	if (!rc && s->m.rank_shared) {
		char note[400];
		strbuf(note, sizeof(note), "%d ranks of this job run on this node unbound, each on all %d CPUs: "
		       "this rank's peaks count its share, 1/%d of the node; bind the ranks to their own cores "
		       "(mpirun --bind-to core, srun --cpu-bind=cores) for peaks of the CPUs each one uses",
		       s->o.rank.local_size, s->m.ncpu_affinity, s->o.rank.local_size);
		rc = writer_note(s->d.writer, "rank_share", note);
	}
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

	s->sink = (struct markers_sink){ .ctx = s, .step = on_step, .phase = on_phase, .anomaly = on_anomaly };
	s->d.ring = s->attached && !s->am ? NULL : &s->d.ring_c;
	s->d.markers = markers_new(&s->cs, &s->sink);
	if (!s->d.markers)
		record_failed(&s->d, -ENOMEM, "out of memory");
	else
		markers_set_limits(s->d.markers, s->o.max_procs, s->o.max_threads);
	if (s->d.markers && s->am) {
		/* after the first counter reading: every boundary has readings
		 * on both sides to interpolate its counts from */
		markers_set_attached(s->d.markers);
		attach_markers_on(s->am);
	}
	for (int i = 0; s->d.markers && i < s->o.nreq; i++)
		if (!s->o.req[i].phase && !s->o.req[i].python)
			markers_set_probe_steps(s->d.markers);

	if (s->attached) {
		size_t nth;
		attach_tids(s->at, &nth);
		rec_note(&s->o, PROG ": attached to process %d (%zu thread%s)%s%s\n", (int)s->o.pid, nth, nth == 1 ? "" : "s",
			s->am ? ", its libmfu markers switched on" : "", s->o.duration > 0 ? "" : "; Ctrl-C detaches");
		if (!s->am && !s->o.quiet && !s->d.probes)
			rec_note(&s->o, PROG ": note: no steps: %s\n", s->am_why);
	}
	return -1;
}


int session_start(struct session *s)
{
	int rc = start_database(s);

	if (rc < 0)
		rc = start_target(s);
	if (rc < 0)
		rc = store_plan(s);
	if (rc < 0)
		rc = open_readers(s);
	if (rc < 0)
		rc = go(s);
	return rc;
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
		if (!as && recap_print(s->o.output, stderr, RECAP_VERDICT_MS, err, sizeof(err)) != 0)
			fprintf(stderr, PROG ": cannot summarize %s: %s\n", s->o.output, err);
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
