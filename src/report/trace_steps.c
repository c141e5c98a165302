/* mfu-report --trace: steps and phases as slices on the thread that began
 * them, the counters each step sets on its process's tracks, and the
 * intervals section's figures on tracks of their own. */
#include "trace_impl.h"
#include "analysis.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The counters a step sets on its process's counter tracks: the column of
 * the step query each one shows, and its track name. */
static const struct {
	const char *column, *track;
} counter_defs[] = {
	{ "model_flops_per_s", "model FLOP/s" },
	{ "hw_flops_per_s", "HW FLOP/s" },
	{ "mfu", "MFU" },
	{ "hfu", "HFU" },
	{ "mbu", "MBU" },
	{ "model_bytes_per_s", "model bytes/s" },
	{ "dram_bytes_per_s", "DRAM bytes/s" },
	{ "dram_bw_util", "DRAM BW util" },
	{ "cpu_util", "CPU util" },
};
#define NCOUNTERS ARRAY_SIZE(counter_defs)

/* ---- steps and phases ---- */

/* Columns 0-5 place the event (id, pid, tid, begin_ns, end_ns, complete);
 * the rest are its args, named as in the steps section. The figures are
 * the step and phase views' (analyses/views.sql: no peaks and no rates for
 * an emulated run). */
static const char steps_sql[] =
	"SELECT s.step, s.pid, s.tid, s.begin_ns, s.end_ns, s.complete,\n"
	"  s.step AS step, s.wall_ns / 1e6 AS wall_ms,\n"
	"  s.mfu AS mfu, s.hfu AS hfu, s.mbu AS mbu,\n"
	"  s.flops AS flops, s.flops_source AS flops_source,\n"
	"  s.model_flops AS model_flops, s.model_bytes AS model_bytes,\n"
	"  s.hw_flops AS hw_flops, s.lib_flops AS lib_flops, s.lib_calls AS lib_calls,\n"
	"  s.cpu_ns / 1e6 AS cpu_ms, s.cpu_util AS cpu_util,\n"
	"  s.ctx_switches AS ctx_switches, s.page_faults AS page_faults,\n"
	"  s.instructions * 1.0 / s.cycles AS ipc,\n"
	"  s.dram_total_bytes AS dram_bytes, s.dram_bw_util AS dram_bw_util,\n"
	"  s.model_flops_per_s AS model_flops_per_s, s.hw_flops_per_s AS hw_flops_per_s,\n"
	"  s.model_bytes_per_s AS model_bytes_per_s, s.dram_bytes_per_s AS dram_bytes_per_s,\n"
	"  s.counts AS counts, s.end_tid AS end_tid\n"
	"FROM step s\n"
	"ORDER BY s.step";

/* Column 6 is the phase's name; args from column 7. */
static const char phases_sql[] =
	"SELECT p.id, p.pid, p.tid, p.begin_ns, p.end_ns, p.complete, p.name,\n"
	"  p.name AS phase, p.id AS id, p.step AS step, p.depth AS depth, p.parent AS parent,\n"
	"  p.wall_ns / 1e6 AS wall_ms,\n"
	"  p.mfu AS mfu, p.hfu AS hfu, p.mbu AS mbu,\n"
	"  p.flops AS flops, p.flops_source AS flops_source,\n"
	"  p.model_flops AS model_flops, p.model_bytes AS model_bytes,\n"
	"  p.hw_flops AS hw_flops, p.lib_flops AS lib_flops, p.lib_calls AS lib_calls,\n"
	"  p.cpu_ns / 1e6 AS cpu_ms,\n"
	"  p.dram_total_bytes AS dram_bytes\n"
	"FROM phase p\n"
	"ORDER BY p.begin_ns, p.end_ns DESC, p.id";

static struct pid_state *pid_state(struct trace *t, int64_t pid)
{
	for (size_t i = 0; i < t->npids; i++)
		if (t->pids[i].pid == pid)
			return &t->pids[i];
	if (array_grow(&t->pids, &t->pids_cap, t->npids + 1, sizeof(*t->pids)))
		return NULL;
	t->pids[t->npids] = (struct pid_state){ .pid = pid, .last_end = INT64_MIN };
	return &t->pids[t->npids++];
}

/* One value of a counter track from @ns on. */
static void t_track(struct trace *t, int64_t pid, int64_t ns, const char *track, double v)
{
	t_event(t);
	outbuf_str(&t->ob, "\"ph\":\"C\",\"name\":\"");
	outbuf_str(&t->ob, track);
	outbuf_str(&t->ob, "\",\"pid\":");
	t_i64(t, pid);
	outbuf_str(&t->ob, ",\"ts\":");
	t_us(t, ns, t->origin);
	outbuf_str(&t->ob, ",\"args\":{\"value\":");
	t_double(t, v);
	outbuf_str(&t->ob, "}}");
	t->counts.counters++;
}

static void t_counter(struct trace *t, int64_t pid, int64_t ns, size_t which, double v)
{
	t_track(t, pid, ns, counter_defs[which].track, v);
}

/* The counters of a complete step: its values from its begin; the tracks
 * of its process drop to 0 where no step runs (after the previous step's
 * end when there is a gap; a track this step has no value for, at its
 * begin). */
static int step_counters(struct trace *t, sqlite3_stmt *st, const int *col, int64_t pid, int64_t begin,
			 int64_t end)
{
	struct pid_state *ps = pid_state(t, pid);
	unsigned set = 0;

	if (!ps)
		return -ENOMEM;
	for (size_t i = 0; i < NCOUNTERS; i++)
		if (col[i] >= 0 && sqlite3_column_type(st, col[i]) != SQLITE_NULL &&
		    isfinite(sqlite3_column_double(st, col[i])))
			set |= 1u << i;
	for (size_t i = 0; i < NCOUNTERS; i++) {
		if (!(ps->set & (1u << i)))
			continue;
		if (ps->last_end < begin)
			t_counter(t, pid, ps->last_end, i, 0);
		else if (!(set & (1u << i)))
			t_counter(t, pid, begin, i, 0);
	}
	for (size_t i = 0; i < NCOUNTERS; i++)
		if (set & (1u << i))
			t_counter(t, pid, begin, i, sqlite3_column_double(st, col[i]));
	ps->set = set;
	if (end > ps->last_end)
		ps->last_end = end;
	return 0;
}

/* A step or phase row of @st: a slice when complete, else an instant at
 * its begin. @phase: the row is a phase (its name in column 6). */
static int write_interval(struct trace *t, sqlite3_stmt *st, const struct arg_keys *k, int phase,
			  const int *col)
{
	int64_t pid = sqlite3_column_int64(st, 1), tid = sqlite3_column_int64(st, 2);
	int64_t begin = sqlite3_column_int64(st, 3), end = sqlite3_column_int64(st, 4);
	int complete = sqlite3_column_int(st, 5) && sqlite3_column_type(st, 4) != SQLITE_NULL;
	char num[24];
	int rc;

	t_event(t);
	outbuf_str(&t->ob, complete ? "\"ph\":\"X\"," : "\"ph\":\"i\",\"s\":\"t\",");
	t_where(t, pid, tid, begin);
	if (complete) {
		outbuf_str(&t->ob, ",\"dur\":");
		t_us(t, end, begin);
	}
	outbuf_str(&t->ob, ",\"name\":");
	if (phase) {
		/* the escaped name without its closing quote, then the suffix */
		t->esc_len = 0;
		if (json_append_string(&t->esc, &t->esc_len, &t->esc_cap, (const char *)sqlite3_column_text(st, 6),
				       (size_t)sqlite3_column_bytes(st, 6)))
			return -ENOMEM;
		outbuf_write(&t->ob, t->esc, t->esc_len - 1);
	} else {
		outbuf_str(&t->ob, "\"step ");
		outbuf_write(&t->ob, num, fmt_i64(num, sqlite3_column_int64(st, 0)));
	}
	outbuf_str(&t->ob, complete ? "\"" : " (never ended)\"");
	outbuf_str(&t->ob, phase ? (complete ? ",\"cat\":\"phase\"," : ",\"cat\":\"phase,incomplete\",")
		       : (complete ? ",\"cat\":\"step\"," : ",\"cat\":\"step,incomplete\","));
	outbuf_str(&t->ob, "\"args\":");
	rc = trace_object(t, st, k);
	outbuf_write(&t->ob, "}", 1);
	if (rc)
		return rc;
	if (!complete) {
		t->counts.incomplete++;
		return 0;
	}
	if (phase) {
		t->counts.phases++;
		return 0;
	}
	t->counts.steps++;
	return step_counters(t, st, col, pid, begin, end);
}

/* Does the pending step go before the pending phase? By begin time; at
 * the same begin the longer one first (a viewer nests the later ones in
 * it), the step when they end together. */
static int step_first(sqlite3_stmt *s, sqlite3_stmt *p)
{
	int64_t sb = sqlite3_column_int64(s, 3), pb = sqlite3_column_int64(p, 3);
	int64_t se = sqlite3_column_type(s, 4) == SQLITE_NULL ? INT64_MAX : sqlite3_column_int64(s, 4);
	int64_t pe = sqlite3_column_type(p, 4) == SQLITE_NULL ? INT64_MAX : sqlite3_column_int64(p, 4);

	if (sb != pb)
		return sb < pb;
	return se >= pe;
}

/* Steps and phases, merged by begin time: steps are numbered in order of
 * begin, phases are sorted (their ids follow the begins of a recording,
 * but not those of every database; and at the same begin the longer one
 * must come first). */
int trace_write_steps(struct trace *t)
{
	sqlite3_stmt *s = NULL, *p = NULL;
	struct arg_keys ks = { 0 }, kp = { 0 };
	int col[NCOUNTERS], rc, srow, prow;

	rc = trace_prepare(t, "steps", steps_sql, &s);
	if (!rc)
		rc = trace_prepare(t, "phases", phases_sql, &p);
	if (!rc)
		rc = trace_keys_init(&ks, s, 6);
	if (!rc)
		rc = trace_keys_init(&kp, p, 7);
	if (rc)
		goto out;
	for (size_t i = 0; i < NCOUNTERS; i++) {
		col[i] = -1;
		for (int c = 6; c < sqlite3_column_count(s); c++)
			if (strcmp(sqlite3_column_name(s, c), counter_defs[i].column) == 0)
				col[i] = c;
	}
	srow = sqlite3_step(s);
	prow = sqlite3_step(p);
	while (srow == SQLITE_ROW || prow == SQLITE_ROW) {
		if (srow == SQLITE_ROW && (prow != SQLITE_ROW || step_first(s, p))) {
			rc = write_interval(t, s, &ks, 0, col);
			srow = sqlite3_step(s);
		} else {
			rc = write_interval(t, p, &kp, 1, col);
			prow = sqlite3_step(p);
		}
		if (rc)
			goto out;
	}
	if (srow != SQLITE_DONE) {
		rc = trace_sql_fail(t, "steps");
		goto out;
	}
	if (prow != SQLITE_DONE) {
		rc = trace_sql_fail(t, "phases");
		goto out;
	}
	/* after each process's last step its counters drop to 0 */
	for (size_t i = 0; i < t->npids; i++)
		for (size_t c = 0; c < NCOUNTERS; c++)
			if (t->pids[i].set & (1u << c))
				t_counter(t, t->pids[i].pid, t->pids[i].last_end, c, 0);
out:
	trace_keys_fini(&ks);
	trace_keys_fini(&kp);
	sqlite3_finalize(s);
	sqlite3_finalize(p);
	return rc;
}

/* ---- MFU over time: the intervals ---- */

/* The tracks of the interval readings (-I): the columns of the intervals
 * analysis each shows, on the target's process. Their own names: the
 * per-step tracks (MFU, CPU util) hold a step's value, these an
 * interval's, steps or none. */
static const struct {
	const char *column, *track;
} interval_defs[] = {
	{ "mfu", "MFU (intervals)" },
	{ "lib_flops_per_s", "lib FLOP/s (intervals)" },
	{ "cpu_util", "CPU util (intervals)" },
};

/* Each interval's values from its start, as the intervals analysis has
 * them (its one definition of the interval's MFU); a track drops to 0 at
 * the end of the last interval, and where an interval has no value for it
 * (unknown: no gap is drawn as 0 otherwise). Tracks no interval has a
 * value for are not written. */
int trace_write_interval_counters(struct trace *t)
{
	const struct analysis *a = analysis_find("intervals");
	sqlite3_stmt *st = NULL, *rs = NULL;
	int col[ARRAY_SIZE(interval_defs)], it = -1, idt = -1, rc;
	unsigned set = 0;
	int64_t pid = 0, end = INT64_MIN;
	char msg[512];

	if (!a)
		return 0;
	rc = trace_prepare(t, "the run", "SELECT target_pid, start_ns FROM run WHERE id = 1", &rs);
	if (rc)
		return rc;
	if (sqlite3_step(rs) == SQLITE_ROW)
		pid = sqlite3_column_int64(rs, 0);
	sqlite3_finalize(rs);
	rc = analysis_prepare(a, t->db, &st, msg, sizeof(msg));
	if (rc) {
		strbuf(t->err, t->errlen, "intervals: %s", msg);
		return rc == -ENOMEM ? -ENOMEM : -EIO;
	}
	for (int c = 0; c < sqlite3_column_count(st); c++) {
		const char *name = sqlite3_column_name(st, c);
		if (strcmp(name, "t_ms") == 0)
			it = c;
		else if (strcmp(name, "interval_ms") == 0)
			idt = c;
	}
	for (size_t i = 0; i < ARRAY_SIZE(interval_defs); i++) {
		col[i] = -1;
		for (int c = 0; c < sqlite3_column_count(st); c++)
			if (strcmp(sqlite3_column_name(st, c), interval_defs[i].column) == 0)
				col[i] = c;
	}
	if (it < 0 || idt < 0) {
		sqlite3_finalize(st);
		return 0;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		/* t_ms is from run.start_ns, the trace's origin: back to ns */
		double t_ms = sqlite3_column_double(st, it), dt_ms = sqlite3_column_double(st, idt);
		int64_t e, b;

		if (!isfinite(t_ms) || !isfinite(dt_ms) || fabs(t_ms) > 9e12 || dt_ms < 0 || dt_ms > 9e12 ||
		    __builtin_add_overflow(t->origin, (int64_t)llround(t_ms * 1e6), &e) ||
		    __builtin_sub_overflow(e, (int64_t)llround(dt_ms * 1e6), &b))
			continue; /* an edited database's: no time to put it at */
		for (size_t i = 0; i < ARRAY_SIZE(interval_defs); i++) {
			int known = col[i] >= 0 && sqlite3_column_type(st, col[i]) != SQLITE_NULL &&
				    isfinite(sqlite3_column_double(st, col[i]));
			if (known) {
				t_track(t, pid, b, interval_defs[i].track, sqlite3_column_double(st, col[i]));
				set |= 1u << i;
			} else if (set & (1u << i)) {
				t_track(t, pid, b, interval_defs[i].track, 0);
				set &= ~(1u << i);
			}
		}
		end = e;
		t->counts.intervals++;
	}
	rc = trace_loop_end(t, rc, "intervals");
	for (size_t i = 0; !rc && i < ARRAY_SIZE(interval_defs); i++)
		if (set & (1u << i))
			t_track(t, pid, end, interval_defs[i].track, 0);
	sqlite3_finalize(st);
	return rc;
}
