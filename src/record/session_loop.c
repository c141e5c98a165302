/* The recording's event loop (session_impl.h). */
#include "session_impl.h"


/* The database stopped accepting data: say so once, and stop the target if
 * asked to (--on-error kill). Draining goes on so the target never blocks. */
void session_loop_record_failed(struct drain *d, int rc, const char *what)
{
	if (d->failed)
		return;
	d->failed = rc;
	live_clear(d->live);
	fprintf(stderr, PROG ": cannot write %s: %s; recording stops here, %s\n", d->output,
		rc == -ENOSPC ? "the disk is full" : what,
		d->kill_on_error ? "stopping the target (--on-error kill)" : "the target goes on unrecorded");
	if (d->kill_on_error && d->target > 0)
		kill(d->target, SIGTERM);
}


/* The target wrote its marker ring's header where it must not (or
 * something impossible): say so once, in an anomaly, a note and on
 * stderr, and read the ring no more. The recording goes on without the
 * markers and finishes as usual. */
void session_loop_ring_tampered(struct drain *d)
{
	char note[512];
	int rc = 0;

	if (d->ring_stopped)
		return;
	d->ring_stopped = 1;
	strbuf(note, sizeof(note), "the target tampered with its marker ring (%s): the recorder stopped "
	       "reading it after %llu records; steps and phases after that are missing", d->ring->why,
	       (unsigned long long)d->ring->tail);
	live_clear(d->live);
	fprintf(stderr, PROG ": %s\n", note);
	if (d->failed)
		return;
	if (d->markers)
		rc = markers_ring_tampered(d->markers, d->ring);
	if (!rc)
		rc = writer_note(d->writer, "ring_tampered", note);
	if (rc)
		session_loop_record_failed(d, rc, writer_error(d->writer));
}


/* Move the ring's published records into the database: until none is
 * published, @max were read, or the clock passes @deadline_ns (the loop's
 * next commit: a burst that keeps the ring full must not hold the commits
 * back). Returns the records read. */
uint64_t session_loop_drain_ring(struct drain *d, uint64_t max, uint64_t deadline_ns)
{
	struct markers_drained r;
	uint64_t n = 0;

	while (d->ring && !d->ring_stopped && n < max) {
		markers_drain(d->failed ? NULL : d->markers, d->ring, max - n, deadline_ns, &r);
		n += r.read;
		d->records += r.records;
		if (d->failed)
			d->dropped += r.read;
		if (r.tampered) {
			session_loop_ring_tampered(d);
		} else if (r.err) {
			/* the record that failed is not stored either; the rest
			 * is read and dropped, so the target never blocks */
			d->dropped++;
			session_loop_record_failed(d, r.err, r.err == -ENOMEM ? "out of memory" : writer_error(d->writer));
			continue;
		}
		break;
	}
	if (d->ring && !d->ring_stopped)
		mring_consumer_populate_ahead(d->ring);
	return n;
}


/* probe_steps sink: probe boundaries join the markers' stream */
int session_loop_probe_boundary(void *ctx, const struct mring_record *r)
{
	struct drain *d = ctx;
	int rc;

	if (!d->markers || d->failed)
		return 0;
	rc = markers_feed_probe(d->markers, r);
	if (rc)
		session_loop_record_failed(d, rc, rc == -ENOMEM ? "out of memory" : writer_error(d->writer));
	return 0;
}


void session_loop_probe_cancel(void *ctx, pid_t pid, pid_t tid, const char *name)
{
	struct drain *d = ctx;
	if (d->markers)
		markers_cancel(d->markers, pid, tid, name);
}


/* sampler callbacks: the uprobes follow new threads and libraries */
void session_loop_on_task(void *ctx, pid_t pid, pid_t tid, int exited)
{
	struct drain *d = ctx;
	char why[512];

	if (exited) {
		probe_steps_thread_exit(d->probes, tid);
	} else if (probe_steps_add_thread(d->probes, pid, tid, why, sizeof(why)) != 0 && !d->probe_warned) {
		live_clear(d->live);
		fprintf(stderr, PROG ": cannot probe thread %d: %s\n", (int)tid, why);
		d->probe_warned = 1;
	}
}


void session_loop_on_exec_map(void *ctx, pid_t pid, const char *path)
{
	struct drain *d = ctx;
	probe_steps_on_map(d->probes, pid, path);
}


/* Both, for a CPU set that changed. */
static int store_peaks(struct writer *w, const struct machine *m, const struct options *o, struct peaks *pk,
		       const char *cpus_source)
{
	int rc = choose_peaks(m, o, pk);

	return rc ? rc : write_peaks(w, m, o, pk, cpus_source);
}


#define CPU_WATCH_EARLY_NS 20000000ull   /* until the first step */
#define CPU_WATCH_LATE_NS 1000000000ull  /* after it: only to notice changes */

static int same_cpus(const struct machine *a, const struct machine *b)
{
	return strcmp(a->allowed_cpus, b->allowed_cpus) == 0 && a->cpu_quota == b->cpu_quota &&
	       a->ncores == b->ncores;
}


void cpu_watch_peaks(struct drain *d, struct cpu_watch *cw, const struct options *o, struct peaks *pk,
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
		live_clear(d->live);
		if (!o->quiet)
			fprintf(stderr, PROG ": the target runs on CPUs %s (%g core%s): the peaks are for them\n",
				cw->used.allowed_cpus, cw->used.ncores, cw->used.ncores == 1 ? "" : "s");
		rc = d->failed ? 0 : store_peaks(d->writer, &cw->used, o, pk, source);
	}
	if (rc)
		session_loop_record_failed(d, rc, writer_error(d->writer));
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
			live_clear(d->live);
			rec_note(o, PROG ": note: %s\n", note);
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


/* One turn of the readers besides the marker ring: DRAM, library calls,
 * interval readings, samples, uprobes, the CPU set, the live line.
 * Returns how many records were drained. */
static uint64_t drain_readers(struct session *s)
{
	uint64_t drained = 0;

	if (s->d.dram && !s->d.failed) {
		int e = dram_sample(s->d.dram, s->db, now_ns(), 0);
		if (e)
			session_loop_record_failed(&s->d, e, "cannot store DRAM readings");
	}
	/* every turn, whatever -I: an exited process's final counts
	 * are taken before the counting library gives its slot away
	 * (a program that runs processes by the hundred) */
	if (s->d.lib)
		lib_counts_read(s->d.lib);
	if (s->d.intervals && !s->d.failed) {
		int e = intervals_sample(s->d.intervals, 0);
		if (e)
			session_loop_record_failed(&s->d, e, "cannot store counter readings");
	}
	if (s->d.sampler && !s->d.failed) {
		int n = sampler_drain(s->d.sampler);
		if (n < 0)
			session_loop_record_failed(&s->d, n, "cannot store samples");
		else
			drained += (uint64_t)n;
	}
	if (s->lp && !s->d.failed) {
		int e = lib_probes_drain(s->lp, s->db);
		if (e)
			session_loop_record_failed(&s->d, e, "cannot store library calls");
	}
	if (s->d.probes) {
		int n = probe_steps_drain(s->d.probes, 0);
		if (n > 0)
			drained += (uint64_t)n;
	}
	if (!s->attached)
		cpu_watch_poll(&s->d, &s->cw, &s->o, &s->pk, s->l.pid, now_ns(), 0);
	if (s->d.lib && live_active(s->live)) {
		uint64_t w[LIBFLOPS_WORDS];
		double f = 0;
		lib_counts_sum(s->d.lib, w);
		for (int p = 1; p < LIBFLOPS_WORDS; p++)
			f += (double)w[p];
		live_lib(s->live, f);
	}
	live_tick(s->live, now_ns(), s->pk.flops, s->pk.bw, s->d.ring ? mring_consumer_lost(s->d.ring) : 0);
	return drained;
}

/* The signals that arrived (the signalfd): passed on or taken as a detach. */
static void read_signals(struct session *s)
{
	struct signalfd_siginfo si;

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
}

/* Whether the loop ends: the target ended (reaped, when it is our child),
 * or, joined, a signal or --duration. @pidfd is the joined process's
 * poll entry. */
static int loop_done(struct session *s, const struct pollfd *pidfd)
{
	if (s->attached) {
		if ((pidfd->fd >= 0 && (pidfd->revents & POLLIN)) || (pidfd->fd < 0 && !attach_alive(s->at))) {
			s->target_ended = 1;
			return 1;
		}
		return s->interrupted || (s->o.duration > 0 && now_ns() - s->ri.start_ns >= (uint64_t)(s->o.duration * 1e9));
	}
	/* Ended? Look without reaping: the zombie still has its
	 * CPU set, for a program too short for the polls. */
	siginfo_t wi = { .si_pid = 0 };
	if (waitid(P_PID, (id_t)s->l.pid, &wi, WEXITED | WNOHANG | WNOWAIT) == 0 && wi.si_pid == s->l.pid) {
		if (!s->cw.settled)
			cpu_watch_poll(&s->d, &s->cw, &s->o, &s->pk, s->l.pid, now_ns(), 1);
		if (waitpid(s->l.pid, &s->status, 0) == s->l.pid)
			return 1;
	}
	return 0;
}

/* The loop: drain the rings and readers until the target ends (or, joined,
 * until a signal or --duration). */
int session_run(struct session *s)
{
	int rc;

	s->cw = (struct cpu_watch){ .used = s->m, .settled = s->attached };
	s->d.last_commit_ns = now_ns();
	s->live = live_new(stderr, !s->o.quiet, s->d.last_commit_ns);
	s->d.live = s->live;
	if (checkpointer_start(&s->ckpt, s->o.output, CHECKPOINT_INTERVAL_NS) != 0)
		fprintf(stderr, PROG ": note: cannot start the checkpointer: %s holds the rows only with "
			"its -wal file until the end\n", s->o.output);
	for (;;) {
		struct pollfd pfd[2] = { { .fd = s->sfd, .events = POLLIN },
					 { .fd = s->attached ? attach_pidfd(s->at) : -1, .events = POLLIN } };
		uint64_t drained = s->d.markers ? session_loop_drain_ring(&s->d, UINT64_MAX, s->d.last_commit_ns + COMMIT_INTERVAL_NS) : 0;

		drained += drain_readers(s);
		/* A busy ring is drained again at once; an idle one every 5 ms,
		 * or at the pace of the counter readings when -I is shorter. */
		poll(pfd, 2, drained > 64 ? 0 : s->o.interval_ms && s->o.interval_ms < 5 ? (int)s->o.interval_ms : 5);
		read_signals(s);
		if (loop_done(s, &pfd[1]))
			break;
		if (now_ns() - s->d.last_commit_ns >= COMMIT_INTERVAL_NS) {
			rc = s->d.failed ? 0 : writer_commit(s->d.writer);
			if (rc)
				session_loop_record_failed(&s->d, rc, writer_error(s->d.writer));
			s->d.last_commit_ns = now_ns();
		}
	}
	return -1;
}
