/* The end of a recording (session_impl.h). */
#include "session_impl.h"
#include "emulate/mfu_emulate.h"
#include "attach_page.h"


/* Each counter's whole-run total: the groups read through the recorder's
 * fds, or attached, summed over the process's threads. */
static int store_totals(struct writer *w, const struct counters *cs, const struct counter_reading *at_end)
{
	struct counter_reading r;

	if (at_end) {
		r = *at_end;
	} else {
		memset(&r, 0, sizeof(r));
		for (int g = 0; g < cs->ngroups; g++)
			if (cs->leader[g] >= 0)
				(void)counters_read_group(cs, g, cs->c[cs->leader[g]].fd, &r);
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

/* --emulate: the emulated counters' whole-run totals, as the tool wrote
 * them when the process mfu-record started exited (its threads and the
 * processes it started, as perf's inherited counters count). None when it
 * was killed: the totals stay NULL. */
static int store_emulated_totals(struct session *s)
{
	unsigned long long v[MFU_EMU_NPREC * MFU_EMU_NWIDTH + 2];
	int k = 0;

	if (!s->o.emulate || emulator_totals(&s->emu, s->l.pid, v, ARRAY_SIZE(v)) != 0)
		return 0;
	for (int i = 0; i < s->cs.n; i++) {
		if (!s->cs.c[i].emulated)
			continue;
		int rc = k < (int)ARRAY_SIZE(v) ? writer_counter_total(s->d.writer, i, v[k++], UINT64_MAX, 0) : 0;
		if (rc)
			return rc;
	}
	return 0;
}


/* A utilization above 100% cannot be true: the peak is too low for this
 * machine or the declared work too high. Said on stderr at the end (the
 * report's notes say it too, from the same tables). */
static void say_impossible(sqlite3 *db)
{
	static const char *const what[] = { "steps", "phases" };
	static const char *const name[] = { "MFU", "HFU", "MBU" };
	/* a literal, so that the compiler checks the format's arguments */
#define IMPOSSIBLE_SQL \
	"WITH r AS (SELECT peak_flops AS pf, peak_bw AS pb FROM run WHERE id = 1) " \
	"SELECT %s, model_flops / (wall_ns / 1e9 * pf), hw_flops / (wall_ns / 1e9 * pf), " \
	"model_bytes / (wall_ns / 1e9 * pb) FROM %s, r WHERE complete = 1 AND wall_ns > 0"

	for (int t = 0; t < 2; t++) {
		char q[512];
		sqlite3_stmt *st = NULL;
		long n[3] = { 0 };
		double worst[3] = { 0 };
		char at[3][80] = { "", "", "" };

		snprintf(q, sizeof(q), IMPOSSIBLE_SQL, t == 0 ? "'step ' || step" : "'phase ' || quote(name) || ' (id ' || id || ')'",
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


/* What the reader of a finished recording must know: no marker seen, the
 * program's own step markers left out for --step, marker records lost. */
/* A message on stderr, after the live line is erased. */
static void say(struct session *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(struct session *s, const char *fmt, ...)
{
	va_list ap;

	live_clear(s->live);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
}

/* A note (not an error): nothing with -q; it stays in the database. */
#define say_note(s, ...) do { if (!(s)->o.quiet) say((s), __VA_ARGS__); } while (0)

/* How a run without steps gets per-step figures, for the executable it
 * ran (run.exe_functions, exe_usdt): never --step FUNC for a stripped one,
 * whose symbol tables name none of its functions. */
static void step_advice(struct session *s, char *buf, size_t len)
{
	char exe[PATH_MAX];
	const char *base;
	int functions = -1;
	long usdt = -1;

	if (!s->attached && probe_steps_program(s->o.argv[0], exe, sizeof(exe)) == 0 &&
	    probes_exe_names(exe, &functions, &usdt) != 0) {
		functions = -1;
		usdt = -1;
	}
	if (functions >= 0)
		(void)writer_run_exe(s->d.writer, functions, usdt); /* a fact for the notes; not vital */
	base = strrchr(s->o.argv[0], '/');
	base = base ? base + 1 : s->o.argv[0];
	if (strncmp(base, "python", 6) == 0)
		strbuf(buf, len, "mark its loop (import mfu; with mfu.step(): ..., which says on stderr when "
		       "it cannot load libmfu) or take steps from a Python function with --step "
		       "py:MODULE.FUNC");
	else if (functions == 0 && usdt > 0)
		strbuf(buf, len, "its executable is stripped (no symbol table names its functions, so --step "
		       "FUNC cannot find them), but it has %ld USDT probe%s (readelf -n %s): take steps from "
		       "one with --step sdt:PROVIDER:NAME, or mark its loop in its source (C: link libmfu, "
		       "pkg-config mfu)", usdt, usdt == 1 ? "" : "s", exe);
	else if (functions == 0)
		strbuf(buf, len, "its executable is stripped (no symbol table names its functions, so --step "
		       "FUNC cannot find them): mark its loop in its source (C: link libmfu, pkg-config mfu) "
		       "or build it with symbols for --step FUNC; --step LIB:FUNC makes each call of a "
		       "shared library's function a step (with its time and breakdown; its library FLOPs, "
		       "read only at markers, stay the whole run's)");
	else
		strbuf(buf, len, "mark its loop (C: link libmfu, pkg-config mfu; Python: import mfu, which "
		       "says on stderr when it cannot load libmfu) or take steps from a function with "
		       "--step FUNC");
}

/* A launched target's markers never reached the recorder: why, as far as
 * this recording can tell. The program may never have called one, or a
 * process of it that did lost mfu-record's descriptors and could not get
 * them again (its handoff would be known): which processes loaded libmfu
 * tells the two apart when the sampler saw their mappings. */
static void no_marker_note(struct session *s, char *note, size_t len)
{
	sqlite3_stmt *st = NULL;
	int known = s->d.sampler != NULL, pid = 0;
	char lib[512] = "", advice[700];
	const char *whole = s->o.interval_ms ? " and each -I interval's (intervals)" : "";

	if (known && sqlite3_prepare_v2(s->db, "SELECT pid, path FROM mapping WHERE path LIKE '%/libmfu.so%' "
					"ORDER BY time_ns LIMIT 1", -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW) {
		pid = sqlite3_column_int(st, 0);
		strbuf(lib, sizeof(lib), "%s", (const char *)sqlite3_column_text(st, 1));
	}
	sqlite3_finalize(st);
	step_advice(s, advice, sizeof(advice));
	if (pid)
		strbuf(note, len, "no marker reached mfu-record, although process %d loaded libmfu (%s): it called "
		       "no mfu_step_begin() or mfu_phase_begin(), or it lost mfu-record's descriptors (a launcher "
		       "between them closed them) and could not reach mfu-record's socket to get them again "
		       "(another network namespace, or a libmfu older than this mfu-record); in that case run "
		       "mfu-record inside the launcher: mpirun -n N mfu-record -o run.%%r.sqlite -- app", pid, lib);
	else if (known)
		strbuf(note, len, "no marker was seen, and no process of the command loaded libmfu, so there are "
		       "no steps, and the figures are the whole run's (summary: run_lib_flops, run_mfu)%s; for "
		       "per-step figures, %s", whole, advice);
	else
		strbuf(note, len, "no marker was seen, so there are no steps: the program called no "
		       "mfu_step_begin() or mfu_phase_begin(), or a launcher between mfu-record and it closed "
		       "mfu-record's descriptors where it could not ask for them again (then run mfu-record "
		       "inside the launcher); the figures are the whole run's (summary: run_lib_flops, "
		       "run_mfu)%s; for per-step figures, %s", whole, advice);
}

static int store_end_notes(struct session *s, uint64_t lost)
{
	int rc = 0;

	unsigned served = 0, refused = 0;
	char served_note[1024], refused_note[1024];
	handoff_server_stop(s->handoff);
	handoff_server_report(s->handoff, &served, &refused, served_note, sizeof(served_note), refused_note,
			      sizeof(refused_note));
	if (!rc && served)
		rc = writer_note(s->d.writer, "launcher_fds", served_note);
	if (!rc && refused) {
		say_note(s, PROG ": note: %s\n", refused_note);
		rc = writer_note(s->d.writer, s->d.records ? "launcher_fds" : "no_steps", refused_note);
	}
	if (!rc && !s->attached && !s->d.probes && !s->pyhook && s->d.records == 0 && !refused) {
		char note[1536];
		no_marker_note(s, note, sizeof(note));
		say_note(s, PROG ": note: %s\n", note);
		rc = writer_note(s->d.writer, "no_steps", note);
	}
	if (!rc && s->attached && !s->d.probes && !s->pyhook && s->d.records == 0) {
		/* joined: why its own markers gave nothing, as far as is known */
		char note[1024], lib[40];
		int state = attach_markers_state(s->am);
		if (!s->am)
			strbuf(note, sizeof(note), "no steps: %s", s->am_why);
		else if (state < 0)
			strbuf(note, sizeof(note), "no steps: the libmfu of process %d (%s) refused the marker ring "
			       "mfu-record made in its attach page; join it with the mfu-record of libmfu's release",
			       (int)s->o.pid, attach_markers_lib(s->am, lib, sizeof(lib)));
		else
			strbuf(note, sizeof(note), "no steps: process %d called no step or phase marker in the %.1f s "
			       "mfu-record was attached (its libmfu %s was switched on and wrote nothing); attach "
			       "while it runs its marked loop, or for longer (--duration)", (int)s->o.pid,
			       (double)(now_ns() - s->ri.start_ns) / 1e9, attach_markers_lib(s->am, lib, sizeof(lib)));
		if (s->am) /* else said when it joined */
			say_note(s, PROG ": note: %s\n", note);
		rc = writer_note(s->d.writer, "no_steps", note);
	}
	if (!rc && s->am && s->d.records) {
		char note[1024], lib[40], counts[200];
		if (s->o.interval_ms)
			strbuf(counts, sizeof(counts), "interpolated from the recorder's readings of all its threads "
			       "every %u ms (step.cpu_ns_err and the other *_err columns bound the error)",
			       (unsigned)s->o.interval_ms);
		else
			strbuf(counts, sizeof(counts), "unknown: -I 0 left no readings to interpolate them from");
		strbuf(note, sizeof(note), "%s come from the markers of process %d, switched on when "
		       "mfu-record joined it (libmfu %s): their times are the markers' own; their counts are %s, "
		       "since the counters were opened on threads that were already running and libmfu cannot "
		       "read them; %llu ends of steps or phases begun before the attach were left out",
		       s->d.probes ? "phases" : "steps and phases",
		       (int)s->o.pid, attach_markers_lib(s->am, lib, sizeof(lib)), counts,
		       (unsigned long long)markers_before_attach(s->d.markers));
		rc = writer_note(s->d.writer, "attach", note);
	}
	if (!rc && markers_ignored_step_markers(s->d.markers)) {
		char note[512];
		strbuf(note, sizeof(note), "the program marks its own steps too (%llu step markers): with "
		       "--step the steps come from the probes, so its step markers and their "
		       "mfu_step_model() declarations were left out; record without --step to use them",
		       (unsigned long long)markers_ignored_step_markers(s->d.markers));
		say_note(s, PROG ": note: %s\n", note);
		rc = writer_note(s->d.writer, "step_source", note);
	}
	for (int k = 0; !rc && s->d.markers && k < 2; k++) {
		char note[512];
		if (markers_limits_note(s->d.markers, k, note, sizeof(note))) {
			say_note(s, PROG ": note: %s\n", note);
			rc = writer_note(s->d.writer, k ? "too_many_threads" : "too_many_processes", note);
		}
	}
	if (!rc && lost) {
		char note[256];
		char what[160];
		if (s->am)
			strbuf(what, sizeof(what), "the ring of a joined process has the %u records its libmfu made "
			       "room for, whatever --ring-records says", (unsigned)MFU_ATTACH_RECORDS);
		else
			strbuf(what, sizeof(what), "try --ring-records");
		strbuf(note, sizeof(note), "%llu marker records were lost (the marker ring was full); "
		       "steps and phases around them may be missing or incomplete: %s",
		       (unsigned long long)lost, what);
		say(s, PROG ": %s\n", note); /* data lost: said with -q too */
		rc = writer_note(s->d.writer, "lost_records", note);
	}
	return rc;
}


/* A note when steps or phases called functions whose FLOPs are unknown
 * (iterative LAPACK drivers, oneDNN primitives of kinds not counted): how
 * many, and which functions (from the lib_call rows, the most called
 * first). */
static int unknown_flops_note(struct session *s)
{
	static const char *const sql =
		"SELECT (SELECT COUNT(*) FROM step WHERE lib_calls_unknown > 0),"
		" (SELECT COUNT(*) FROM step WHERE lib_calls_unknown > 0 AND lib_flops IS NULL),"
		" (SELECT COUNT(*) FROM phase WHERE lib_calls_unknown > 0),"
		" (SELECT group_concat(function || ' (' || n || (CASE n WHEN 1 THEN ' call)' ELSE ' calls)' END), ', ')"
		"  FROM (SELECT function, SUM(calls) AS n FROM lib_call WHERE flops IS NULL"
		"  GROUP BY function ORDER BY n DESC, function LIMIT 6)),"
		" (SELECT lib_calls_unknown FROM run WHERE id = 1),"
		" (SELECT lib_flops IS NULL FROM run WHERE id = 1),"
		" (SELECT group_concat(function || ' (' || calls || (CASE calls WHEN 1 THEN ' call)' ELSE ' calls)' END),"
		"  ', ') FROM (SELECT function, calls FROM run_lib_call WHERE flops IS NULL"
		"  ORDER BY calls DESC, function LIMIT 6))";
	sqlite3_stmt *st = NULL;
	char note[1024];
	long long steps = 0, unknown = 0, phases = 0, run = 0;
	int rc = 0;

	if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK)
		return -EIO;
	if (sqlite3_step(st) == SQLITE_ROW) {
		const char *names = (const char *)sqlite3_column_text(st, 3);
		const char *run_names = (const char *)sqlite3_column_text(st, 6);
		int run_null = sqlite3_column_int(st, 5);
		steps = sqlite3_column_int64(st, 0);
		unknown = sqlite3_column_int64(st, 1);
		phases = sqlite3_column_int64(st, 2);
		run = sqlite3_column_int64(st, 4);
		if (steps || phases) {
			char what[96];
			if (steps && phases)
				strbuf(what, sizeof(what), "%lld steps and %lld phases", steps, phases);
			else if (steps)
				strbuf(what, sizeof(what), "%lld %s", steps, steps == 1 ? "step" : "steps");
			else
				strbuf(what, sizeof(what), "%lld %s", phases, phases == 1 ? "phase" : "phases");
			strbuf(note, sizeof(note), "%s called library functions whose FLOPs are unknown "
			       "(iterative LAPACK drivers: eigenvalues, SVD, least squares by SVD; oneDNN "
			       "primitives other than convolution, inner product and matmul)%s%s: their "
			       "lib_flops count the other calls only (partial, lib_calls_unknown > 0)%s%s",
			       what, names ? ", " : "", names ? names : "",
			       unknown ? ", or are NULL where nothing else was counted" : "",
			       run > 0 ? "; the whole run's (run_lib_flops, run_mfu) likewise" : "");
			rc = writer_note(s->d.writer, "lib_flops", note);
		} else if (run > 0) {
			strbuf(note, sizeof(note), "the run called library functions whose FLOPs are unknown "
			       "(iterative LAPACK drivers: eigenvalues, SVD, least squares by SVD; oneDNN "
			       "primitives other than convolution, inner product and matmul)%s%s: the whole run's "
			       "library FLOPs (run_lib_flops, run_mfu) count the other calls only (partial, "
			       "run.lib_calls_unknown %lld)%s", run_names ? ", " : "", run_names ? run_names : "", run,
			       run_null ? ", and are unknown (NULL), as no other call was counted" : "");
			rc = writer_note(s->d.writer, "lib_flops", note);
		}
	}
	sqlite3_finalize(st);
	return rc;
}

/* The program's own notes, from the region (mfu.step(flops="count"): where
 * its declaration came from, what it could not count): kind flops_count,
 * or flops_count_missing for those that explain FLOPs left out. */
static int program_notes(struct session *s)
{
	char text[LIBFLOPS_NOTE_LEN], note[160];
	uint64_t taken = __atomic_load_n(&s->lf->note_head, __ATOMIC_ACQUIRE);
	unsigned flags;
	int rc = 0;

	for (unsigned i = 0; !rc && i < LIBFLOPS_NNOTES && i < taken; i++)
		if (libflops_note_read(s->lf, i, text, sizeof(text), &flags) == 0)
			rc = writer_note(s->d.writer, flags & LIBFLOPS_NOTE_MISSING ? "flops_count_missing" : "flops_count",
					 text);
	if (!rc && taken > LIBFLOPS_NNOTES) {
		strbuf(note, sizeof(note), "%llu more notes of mfu.step(flops=\"count\") were dropped (the first %d "
		       "are kept)", (unsigned long long)(taken - LIBFLOPS_NNOTES), LIBFLOPS_NNOTES);
		rc = writer_note(s->d.writer, "flops_count_missing", note);
	}
	return rc;
}

/* The whole run's library calls (run.lib_*, run_lib_call), as the last
 * reading took them (the same values as the last lib_reading row), and a
 * note when processes' last calls may be missing from them. */
static int store_run_lib(struct session *s)
{
	struct libflops_counter f[LIBFLOPS_MAX_FUNCS];
	uint64_t sum[LIBFLOPS_WORDS];
	char note[400];
	int rc;

	lib_counts_sum(s->d.lib, sum);
	for (unsigned i = 0; i < libflops_nfuncs && i < LIBFLOPS_MAX_FUNCS; i++)
		f[i] = lib_counts_func(s->d.lib, i);
	rc = writer_run_lib(s->d.writer, sum, f, libflops_nfuncs < LIBFLOPS_MAX_FUNCS ? libflops_nfuncs : LIBFLOPS_MAX_FUNCS);
	if (!rc && lib_counts_procs_lost(s->d.lib)) {
		strbuf(note, sizeof(note), "%llu processes of the target exited and their counters were given to "
		       "new processes before the recorder read their last calls (more than %d processes came "
		       "and went within one reading period): the run's library FLOPs may miss those calls; "
		       "a shorter -I reads more often", (unsigned long long)lib_counts_procs_lost(s->d.lib),
		       LIBFLOPS_MAX_PROCS);
		rc = writer_note(s->d.writer, "lib_flops", note);
	}
	return rc;
}

/* Whether library calls were counted (run.lib_counting), and a note when
 * they were not, or when some of what was counted is missing. */
static int store_lib_counting(struct session *s)
{
	const char *state = "off";
	char note[600];
	int active = 0, rc = 0;

	if (s->lf) {
		active = __atomic_load_n(&s->lf->loaded, __ATOMIC_ACQUIRE) != 0;
		if (!active && !s->lp)
			strbuf(s->lf_why, sizeof(s->lf_why), "library calls were not counted: no process of the "
			       "target loaded the counting library (a statically linked or setuid program, or one "
			       "that clears LD_PRELOAD); library FLOPs are unknown");
	}
	if (!rc && s->lp) {
		live_stage(s->live, "adding the executable's library calls");
		rc = lib_probes_finish(s->lp, s->db, s->l.pid, s->lf, note, sizeof(note));
		if (rc)
			return rc;
		if (note[0])
			rc = writer_note(s->d.writer, "lib_flops", note);
		active = 1;
	}
	if (!rc && s->lp_why[0]) {
		/* The counting library saw none of the executable's own calls:
		 * what it counted there is not the process's library FLOPs. */
		char sql[512];
		strbuf(sql, sizeof(sql), "DELETE FROM lib_call WHERE step IN (SELECT step FROM step WHERE pid = %d);"
		       "UPDATE step SET lib_flops = NULL, lib_flops_fp64 = NULL, lib_flops_fp32 = NULL,"
		       " lib_flops_bf16 = NULL, lib_flops_fp16 = NULL, lib_ops_int8 = NULL, lib_calls = NULL,"
		       " lib_calls_unknown = NULL WHERE pid = %d;", (int)s->l.pid, (int)s->l.pid);
		rc = db_exec(s->db, sql, note, sizeof(note));
		if (!rc) {
			strbuf(sql, sizeof(sql), "UPDATE phase SET lib_flops = NULL, lib_flops_fp64 = NULL,"
			       " lib_flops_fp32 = NULL, lib_flops_bf16 = NULL, lib_flops_fp16 = NULL,"
			       " lib_ops_int8 = NULL, lib_calls = NULL, lib_calls_unknown = NULL WHERE pid = %d;",
			       (int)s->l.pid);
			rc = db_exec(s->db, sql, note, sizeof(note));
		}
		if (rc)
			return rc;
		say_note(s, PROG ": note: %s\n", s->lp_why);
		rc = writer_note(s->d.writer, "lib_flops", s->lp_why);
	}
	/* the whole run: the counting library's calls, and those of the
	 * executable's own BLAS (uprobes) */
	if (!rc && s->d.lib && s->lf && (__atomic_load_n(&s->lf->loaded, __ATOMIC_ACQUIRE) || s->lp) &&
	    !s->lp_why[0]) {
		rc = store_run_lib(s);
		if (!rc && s->lp && lib_probes_add_run(s->lp, s->db) != 0) {
			strbuf(note, sizeof(note), "cannot add the executable's library calls to the run's: %s",
			       sqlite3_errmsg(s->db));
			say_note(s, PROG ": %s\n", note);
			rc = writer_note(s->d.writer, "lib_flops", note);
		}
	}
	if (rc)
		return rc;
	if (active)
		state = "on";
	else if (s->lf_why[0])
		state = "unavailable";
	if (s->lf_why[0]) {
		say_note(s, PROG ": note: %s\n", s->lf_why);
		rc = writer_note(s->d.writer, "lib_flops", s->lf_why);
	}
	if (!rc && s->lf && s->lf->procs_full) {
		strbuf(note, sizeof(note), "%llu processes of the target were not counted: library calls are "
		       "counted in at most %d live processes at a time", (unsigned long long)s->lf->procs_full,
		       LIBFLOPS_MAX_PROCS);
		rc = writer_note(s->d.writer, "lib_flops", note);
	}
	if (!rc && writer_lib_snaps_lost(s->d.writer)) {
		strbuf(note, sizeof(note), "%llu steps have no lib_call rows: the recorder fell %d step "
		       "boundaries behind and their copies of the counters were overwritten (their lib_flops "
		       "are exact)", (unsigned long long)writer_lib_snaps_lost(s->d.writer), LIBFLOPS_NSNAP);
		rc = writer_note(s->d.writer, "lib_flops", note);
	}
	if (!rc && writer_lib_snaps_full(s->d.writer)) {
		strbuf(note, sizeof(note), "%llu steps have no lib_call rows: their process had called more "
		       "than %d different library functions, more than a copy of its counters holds (their "
		       "lib_flops are exact)", (unsigned long long)writer_lib_snaps_full(s->d.writer),
		       LIBFLOPS_SNAP_FUNCS);
		rc = writer_note(s->d.writer, "lib_flops", note);
	}
	if (!rc && active)
		rc = unknown_flops_note(s);
	if (!rc && s->lf)
		rc = program_notes(s);
	return rc ? rc : writer_run_lib_counting(s->d.writer, state);
}

/* The target's exit status, which mfu-record exits with. */
static void take_exit_status(struct session *s)
{
	if (s->attached) {
		s->exit_code = 0; /* not our child: its exit status is not ours to know */
	} else if (WIFEXITED(s->status)) {
		s->exit_status = WEXITSTATUS(s->status);
		s->exit_code = s->exit_status;
	} else if (WIFSIGNALED(s->status)) {
		s->exit_signal = WTERMSIG(s->status);
		s->exit_code = 128 + s->exit_signal;
	}
}

/* Final drain; slots claimed but never published (a writer killed
 * mid-record, or a child process still running) count as lost. A child
 * still marking could keep this going: at most two rings' worth of
 * records is read here, and a ring's worth of holes skipped. */
static void drain_last(struct session *s)
{
	uint64_t budget = 2 * s->d.ring->nslots;
	int32_t hole_pid, hole_tid;
	int k;

	budget -= session_loop_drain_ring(&s->d, budget, UINT64_MAX);
	while (!s->d.ring_stopped && (k = mring_consumer_skip_hole(s->d.ring, &hole_pid, &hole_tid)) != 0) {
		if (k < 0) {
			session_loop_ring_tampered(&s->d);
			break;
		}
		int hrc = s->d.failed ? 0 : markers_lost_hole(s->d.markers, hole_pid, hole_tid);
		if (hrc)
			session_loop_record_failed(&s->d, hrc, hrc == -ENOMEM ? "out of memory" : writer_error(s->d.writer));
		budget -= session_loop_drain_ring(&s->d, budget, UINT64_MAX);
	}
	/* the lost count read last may show tampering too */
	(void)mring_consumer_lost(s->d.ring);
	if (s->d.ring->tampered)
		session_loop_ring_tampered(&s->d);
}

/* The steps and phases of uprobes and of the Python hook, and their notes. */
static void finish_probes(struct session *s)
{
	if (s->d.probes) {
		char why[512];
		if (s->d.sampler)
			sampler_drain(s->d.sampler); /* the last threads and libraries */
		probe_steps_drain(s->d.probes, 1);
		if (probe_steps_finish(s->d.probes, s->db, why, sizeof(why)) != 0 && !s->d.failed)
			session_loop_record_failed(&s->d, -EIO, why);
		if (probe_steps_note(s->d.probes)[0]) {
			say_note(s, PROG ": %s\n", probe_steps_note(s->d.probes));
			writer_note(s->d.writer, "probes", probe_steps_note(s->d.probes));
		}
	}
	if (s->pyhook && !s->d.failed) {
		char why[512], note[1024];
		if (py_hook_finish(s->pyhook, s->db, note, sizeof(note), why, sizeof(why)) != 0)
			session_loop_record_failed(&s->d, -EIO, why);
		else if (note[0]) {
			say_note(s, PROG ": %s\n", note);
			writer_note(s->d.writer, "probes", note);
		}
	}
}

/* The readers' last readings and what is derived from them: counter
 * totals, interval readings, library calls, DRAM, the samples' symbols.
 * @lost: the records the marker ring counted as lost (markers_finish()). */
static int finish_readers(struct session *s, uint64_t end_ns, uint64_t lost)
{
	char err[512];
	int rc;

	/* left running: its open step was cut by the detach, not misused */
	if (s->d.markers && s->attached && !s->target_ended)
		markers_set_detached(s->d.markers);
	rc = s->d.markers ? markers_finish(s->d.markers, lost) : 0;

	if (!rc)
		rc = store_totals(s->d.writer, &s->cs, s->at ? &s->at_end : NULL);
	if (!rc)
		rc = store_emulated_totals(s);
	if (!rc && s->d.intervals) {
		live_stage(s->live, "attributing the counter readings");
		/* the counters' final values: the bound for the last boundaries */
		rc = intervals_sample(s->d.intervals, 1);
		if (!rc && intervals_attribute(s->db, &s->cs, s->d.writer, err, sizeof(err)) != 0)
			say(s, PROG ": %s\n", err);
	} else if (s->d.lib) {
		/* the whole run's library calls, as the target left them
		 * (with -I, the reading above took them) */
		lib_counts_read(s->d.lib);
	}
	if (!rc && s->d.dram) {
		rc = dram_sample(s->d.dram, s->db, end_ns, 1);
		if (!rc && dram_attribute(s->db, err, sizeof(err)) != 0)
			say(s, PROG ": %s\n", err);
	}
	if (!rc && s->d.sampler) {
		live_stage(s->live, "symbolizing the samples");
		rc = sampler_finish(s->d.sampler, err, sizeof(err));
		if (rc) {
			say(s, PROG ": sampling: %s\n", err);
			rc = 0; /* the markers' data is complete: keep it */
		} else if (sampler_note(s->d.sampler)[0]) {
			writer_note(s->d.writer, "sampling", sampler_note(s->d.sampler));
		}
	}
	return rc;
}

/* A recording that kept accepting rows: its readers finished, notes, the
 * run row completed and committed; the closing line for the recap. */
static void finish_complete(struct session *s, uint64_t end_ns)
{
	uint64_t lost = s->d.ring ? mring_consumer_lost(s->d.ring) : 0;
	int rc = finish_readers(s, end_ns, lost);

	if (!rc)
		rc = store_end_notes(s, lost);
	if (!rc)
		rc = store_lib_counting(s);
	if (!rc)
		rc = writer_run_end(s->d.writer, end_ns, s->exit_status, s->exit_signal, lost, s->d.records,
				    s->attached ? (s->target_ended ? "complete" : "detached")
				    : s->interrupted ? "interrupted" : "complete");
	if (!rc)
		rc = writer_commit(s->d.writer);
	if (rc)
		say(s, PROG ": cannot complete %s: %s\n", s->o.output, writer_error(s->d.writer));
	else if (s->o.quiet)
		say_impossible(s->db); /* else the recap's notes say it */
	/* the recap reads the finished file, once it is closed, below */
	s->recap = !rc && !s->o.quiet;
	if (s->recap)
		strbuf(s->closing, sizeof(s->closing), PROG ": %llu steps, %llu marker records, %llu lost, "
		       "%llu anomalies -> %s\n", (unsigned long long)(s->d.markers ? markers_steps(s->d.markers) : 0),
		       (unsigned long long)s->d.records, (unsigned long long)lost,
		       (unsigned long long)(s->d.markers ? markers_anomalies(s->d.markers) : 0), s->o.output);
}

/* The end of the recording: the exit status, the last records, the
 * derivations, the notes, the run row. */
int session_finish(struct session *s)
{
	/* -p: the counts first, so that they lie inside start_ns..end_ns */
	if (s->at)
		attach_read(s->at, &s->cs, &s->at_end);
	uint64_t end_ns = now_ns();

	take_exit_status(s);
	/* joined: the process's markers go back to no-ops before the last drain */
	attach_markers_off(s->am);
	live_stage(s->live, "reading the last records");
	if (s->d.markers && s->d.ring)
		drain_last(s);
	if (!s->attached && !s->cw.settled)
		cpu_watch_peaks(&s->d, &s->cw, &s->o, &s->pk, s->d.records ? "the target's, read when it ended (its steps ran "
				"between two looks)" : "the target's, read when it ended (no marked step)");
	finish_probes(s);
	if (!s->d.failed) {
		finish_complete(s, end_ns);
	} else {
		/* Try to leave the reason in the file; with a full disk this
		 * may fail too, and the file still holds what was committed. */
		writer_rollback(s->d.writer);
		if (writer_run_end(s->d.writer, end_ns, s->exit_status, s->exit_signal,
				   s->d.ring ? mring_consumer_lost(s->d.ring) : 0, UINT64_MAX, "failed") == 0)
			writer_commit(s->d.writer);
		say(s, PROG ": %s holds what was recorded before the failure; %llu marker records "
			"after it were not stored\n", s->o.output, (unsigned long long)s->d.dropped);
	}
	return -1;
}
