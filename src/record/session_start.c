/*
 * The start stage of a recording (session.h): the database, the marker
 * ring and the counting region, the target (launched, stopped before its
 * exec, or joined), the readers, the run row; then the go.
 */
#include "session_impl.h"

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
	    (s->ring = mmap(NULL, s->ring_size, PROT_READ | PROT_WRITE, MAP_SHARED, s->ring_fd, 0)) == MAP_FAILED)) {
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
	/* the first slots' pages, before the target maps them */
	if (!s->attached)
		mring_consumer_populate_ahead(&s->d.ring_c);

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


/* -p: the joined process's threads and mappings as they are now, for its
 * samples' symbols; what could not be stored is said (a note, kept in the
 * recording too), with why. */
static void existing_threads(struct session *s)
{
	char note[300];
	int rc = sampler_existing(s->d.sampler, s->o.pid, now_ns());

	if (!rc)
		return;
	strbuf(note, sizeof(note), "cannot store the threads and mappings of process %d (%s): samples in code it "
	       "mapped before the attach may stay unresolved", (int)s->o.pid,
	       rc == -ENOENT ? "it ended meanwhile" : rc == -EIO ? sqlite3_errmsg(s->db) : strerror(-rc));
	rec_note(&s->o, PROG ": note: %s\n", note);
	writer_note(s->d.writer, "sampling", note);
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
			so.on_task = session_loop_on_task;
			so.on_exec_map = session_loop_on_exec_map;
			so.cb_ctx = &s->d;
		}
		if (s->attached)
			so.tids = attach_tids(s->at, &so.ntids);
		rc = sampler_open(&s->d.sampler, s->db, s->attached ? s->o.pid : s->l.pid, &so, err, sizeof(err));
		if (!rc && s->attached)
			existing_threads(s);
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

/* What the run row says of the recording itself (run_info). */
static void fill_run_info(struct session *s)
{
	s->ri.command_json = s->cmd;
	s->ri.cwd = getcwd(s->cwd, sizeof(s->cwd)) ? s->cwd : NULL;
	s->ri.machine = &s->m;
	s->ri.dtype = s->o.dtype;
	s->ri.target_pid = s->attached ? s->o.pid : s->l.pid;
	s->ri.attach = s->attached;
	s->ri.interval_ns = (uint64_t)s->o.interval_ms * 1000000ull;
	s->ri.start_unix_ns = realtime_ns();
	s->ri.start_ns = now_ns();
	if (s->attached)
		attach_mark(s->at, &s->cs);
}

/* The readings before the go. Nonzero: probes cannot follow the attached
 * threads, said here. */
static int first_readings(struct session *s)
{
	char err[512];
	int rc = 0;

	/* the counters are enabled at the exec, after this: zero until then,
	 * a valid lower bound for a probe hit before the first reading;
	 * attached, they count already: read them now */
	if (s->d.intervals && (s->attached ? intervals_sample(s->d.intervals, 1) : intervals_store_zero(s->d.intervals, s->ri.start_ns)))
		fprintf(stderr, PROG ": %s: %s\n", s->o.output, sqlite3_errmsg(s->db));
	if (s->d.probes && s->attached) {
		/* after the first reading: every hit has readings around it */
		size_t ntids;
		const pid_t *tids = attach_tids(s->at, &ntids);
		for (size_t i = 0; !rc && i < ntids; i++)
			rc = probe_steps_add_thread(s->d.probes, s->o.pid, tids[i], err, sizeof(err));
		if (rc)
			fprintf(stderr, PROG ": %s\n", err);
	}
	return rc;
}

/* The target could not exec (error @rc): nothing ran, so leave no
 * half-made database behind. Everything holding statements on it goes
 * first, or it cannot close. */
static int undo_launch(struct session *s, int rc)
{
	fprintf(stderr, PROG ": cannot run '%s': %s\n", s->o.argv[0], strerror(-rc));
	s->exit_code = rc == -ENOENT ? 127 : 126;
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

/* Say once what will be missing and why. */
static void say_missing(struct session *s)
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
	say_peak_warnings(&s->o, &s->pk, s->calibrated);
}

/* The run row, its rank, the notes of the start (emulated, a shared node,
 * no peak) and the peaks, committed. */
static int store_run(struct session *s)
{
	int rc = writer_run_begin(s->d.writer, &s->ri);

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
	return rc;
}

/* The markers' pairing, from here on: its sink, limits, the joined
 * process's markers switched on, probe steps. */
static void start_markers(struct session *s)
{
	s->sink = (struct markers_sink){ .ctx = s, .step = on_step, .phase = on_phase, .anomaly = on_anomaly };
	s->d.ring = s->attached && !s->am ? NULL : &s->d.ring_c;
	s->d.markers = markers_new(&s->cs, &s->sink);
	if (!s->d.markers)
		session_loop_record_failed(&s->d, -ENOMEM, "out of memory");
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
}

/* The run row and the go: the target execs (or, joined, goes on); then
 * what will be missing is said once, and the markers are paired from here. */
static int go(struct session *s)
{
	int rc;

	fill_run_info(s);
	if (first_readings(s))
		return s->exit_code;
	if (!s->attached)
		hand_peaks(s);
	rc = s->attached ? 0 : launch_go(&s->l);
	if (rc)
		return undo_launch(s, rc);
	/* the target runs: the earlier recording stays where it was moved */
	if (s->kept_old[0])
		rec_note(&s->o, PROG ": %s existed: kept as %s\n", s->o.output, s->kept_old);
	say_missing(s);

	rc = store_run(s);
	s->d.output = s->o.output;
	s->d.target = s->attached ? 0 : s->l.pid; /* --on-error kill stops only what we started */
	s->d.kill_on_error = s->o.kill_on_error;
	if (rc)
		session_loop_record_failed(&s->d, rc, writer_error(s->d.writer));

	start_markers(s);
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
