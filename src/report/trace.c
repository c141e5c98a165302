#include "trace.h"
#include "trace_frames.h"
#include "analysis.h"
#include "format.h"
#include "format_impl.h"
#include "outbuf.h"
#include "util.h"

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

/* A process's counter tracks: when its last step ended and which tracks it
 * set, so they drop to 0 between steps. */
struct pid_state {
	int64_t pid, last_end;
	unsigned set; /* bit i: counter_defs[i] holds a step's value */
};

/* Escaped JSON keys ("name":) of a statement's argument columns. */
struct arg_keys {
	int first, n;
	char **key;
	size_t *len;
};

/* One sampled callchain: its event text up to the class argument. */
struct stack_text {
	int64_t id; /* the key first: find_by_key() */
	char *text;
	size_t len;
};

struct trace {
	sqlite3 *db;
	int64_t origin; /* run.start_ns: ts 0 */
	char *err;
	size_t errlen;
	char *esc; /* scratch: one escaped string */
	size_t esc_len, esc_cap;
	uint64_t nevents;
	struct trace_counts counts;
	struct pid_state *pids;
	size_t npids, pids_cap;
	struct stack_text *stacks;
	size_t nstacks, stacks_cap;
	struct trace_frames *frames; /* the callchains as stackFrames */
	struct outbuf ob; /* the output */
};

/* ---- output ---- */

static void t_i64(struct trace *t, int64_t v)
{
	char num[24];

	outbuf_write(&t->ob, num, fmt_i64(num, (long long)v));
}

/* A double that reads back exactly; JSON has no infinity or NaN. */
static void t_double(struct trace *t, double v)
{
	char num[40];

	if (!isfinite(v))
		outbuf_str(&t->ob, "null");
	else
		outbuf_write(&t->ob, num, format_double(num, v));
}

/* @to - @from nanoseconds as microseconds, exactly: "1234.567", "-0.5",
 * "12". The difference of two int64 times may not fit in one (an edited
 * database's INT64_MIN and INT64_MAX): its magnitude always fits in 64
 * unsigned bits, and is computed there. */
static size_t fmt_us(char *buf, int64_t to, int64_t from)
{
	int neg = to < from;
	uint64_t a = neg ? (uint64_t)from - (uint64_t)to : (uint64_t)to - (uint64_t)from;
	unsigned r = (unsigned)(a % 1000);
	size_t n = 0;

	if (neg)
		buf[n++] = '-';
	n += fmt_i64(buf + n, (long long)(a / 1000)); /* < 2^64 / 1000: fits */
	if (r) {
		buf[n++] = '.';
		buf[n++] = (char)('0' + r / 100);
		buf[n++] = (char)('0' + r / 10 % 10);
		buf[n++] = (char)('0' + r % 10);
		while (buf[n - 1] == '0')
			n--;
	}
	buf[n] = '\0';
	return n;
}

/* The time from @from to @to, in microseconds. */
static void t_us(struct trace *t, int64_t to, int64_t from)
{
	char num[32];

	outbuf_write(&t->ob, num, fmt_us(num, to, from));
}

/* @s (@n bytes) as a JSON string; -ENOMEM. */
static int t_jstr(struct trace *t, const char *s, size_t n)
{
	t->esc_len = 0;
	if (json_append_string(&t->esc, &t->esc_len, &t->esc_cap, s ? s : "", s ? n : 0))
		return -ENOMEM;
	outbuf_write(&t->ob, t->esc, t->esc_len);
	return 0;
}

static int t_jcol(struct trace *t, sqlite3_stmt *st, int i)
{
	return t_jstr(t, (const char *)sqlite3_column_text(st, i), (size_t)sqlite3_column_bytes(st, i));
}

/* The separator before the next event. */
static void t_event(struct trace *t)
{
	outbuf_str(&t->ob, t->nevents++ ? ",\n{" : "\n{");
}

/* "pid":P,"tid":T,"ts":TS */
static void t_where(struct trace *t, int64_t pid, int64_t tid, int64_t ns)
{
	outbuf_str(&t->ob, "\"pid\":");
	t_i64(t, pid);
	outbuf_str(&t->ob, ",\"tid\":");
	t_i64(t, tid);
	outbuf_str(&t->ob, ",\"ts\":");
	t_us(t, ns, t->origin);
}

/* ---- SQLite ---- */

static int sql_fail(struct trace *t, const char *what)
{
	strbuf(t->err, t->errlen, "%s: %s", what, sqlite3_errmsg(t->db));
	return -EIO;
}

/* The end of a loop over sqlite3_step(): @rc is SQLITE_DONE (0), a
 * negative errno of ours, or SQLite's error (-EIO). */
static int loop_end(struct trace *t, int rc, const char *what)
{
	if (rc == SQLITE_DONE)
		return 0;
	return rc > 0 ? sql_fail(t, what) : rc;
}

static int prepare(struct trace *t, const char *what, const char *sql, sqlite3_stmt **st)
{
	if (sqlite3_prepare_v2(t->db, sql, -1, st, NULL) != SQLITE_OK) {
		sqlite3_finalize(*st);
		*st = NULL;
		return sql_fail(t, what);
	}
	return 0;
}

/* The keys of columns @first.. of @st, escaped once. */
static int keys_init(struct arg_keys *k, sqlite3_stmt *st, int first)
{
	k->first = first;
	k->n = sqlite3_column_count(st);
	k->key = calloc((size_t)k->n + 1, sizeof(*k->key));
	k->len = calloc((size_t)k->n + 1, sizeof(*k->len));
	if (!k->key || !k->len)
		return -ENOMEM;
	for (int i = first; i < k->n; i++) {
		const char *name = sqlite3_column_name(st, i);
		size_t cap = 0;

		if (!name)
			name = "?";
		if (json_append_string(&k->key[i], &k->len[i], &cap, name, strlen(name)) ||
		    buf_append(&k->key[i], &k->len[i], &cap, ":", 1))
			return -ENOMEM;
	}
	return 0;
}

static void keys_fini(struct arg_keys *k)
{
	for (int i = 0; k->key && i < k->n; i++)
		free(k->key[i]);
	free(k->key);
	free(k->len);
	memset(k, 0, sizeof(*k));
}

/* {...}: the row's columns from k->first on that are not NULL (the args
 * of an event, the run in the metadata). */
static int t_object(struct trace *t, sqlite3_stmt *st, const struct arg_keys *k)
{
	int n = 0;

	outbuf_write(&t->ob, "{", 1);
	for (int i = k->first; i < k->n; i++) {
		int type = sqlite3_column_type(st, i);

		if (type == SQLITE_NULL || (type == SQLITE_FLOAT && !isfinite(sqlite3_column_double(st, i))))
			continue;
		if (n++)
			outbuf_write(&t->ob, ",", 1);
		outbuf_write(&t->ob, k->key[i], k->len[i]);
		if (type == SQLITE_INTEGER)
			t_i64(t, sqlite3_column_int64(st, i));
		else if (type == SQLITE_FLOAT)
			t_double(t, sqlite3_column_double(st, i));
		else if (t_jcol(t, st, i))
			return -ENOMEM;
	}
	outbuf_write(&t->ob, "}", 1);
	return 0;
}

/* ---- process and thread names ---- */

static const char names_sql[] =
	"WITH p(pid) AS (SELECT pid FROM thread UNION SELECT pid FROM exec\n"
	"                UNION SELECT target_pid FROM run WHERE target_pid IS NOT NULL)\n"
	"SELECT 'process_name', p.pid, p.pid, coalesce(\n"
	"  (SELECT comm FROM exec e WHERE e.pid = p.pid AND e.comm IS NOT NULL ORDER BY e.time_ns DESC LIMIT 1),\n"
	"  (SELECT comm FROM thread t WHERE t.tid = p.pid AND t.comm IS NOT NULL LIMIT 1),\n"
	"  (SELECT json_extract(command, '$[0]') FROM run\n"
	"   WHERE target_pid = p.pid AND json_valid(command))) AS name\n"
	"FROM p\n"
	"UNION ALL\n"
	"SELECT 'thread_name', pid, tid, comm FROM thread WHERE comm IS NOT NULL";

static int write_names(struct trace *t)
{
	sqlite3_stmt *st = NULL;
	int rc = prepare(t, "process and thread names", names_sql, &st);

	while (!rc && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		rc = 0;
		if (sqlite3_column_type(st, 3) == SQLITE_NULL)
			continue;
		t_event(t);
		outbuf_str(&t->ob, "\"ph\":\"M\",\"name\":\"");
		outbuf_str(&t->ob, (const char *)sqlite3_column_text(st, 0));
		outbuf_str(&t->ob, "\",\"pid\":");
		t_i64(t, sqlite3_column_int64(st, 1));
		outbuf_str(&t->ob, ",\"tid\":");
		t_i64(t, sqlite3_column_int64(st, 2));
		outbuf_str(&t->ob, ",\"args\":{\"name\":");
		if (t_jcol(t, st, 3))
			rc = -ENOMEM;
		outbuf_str(&t->ob, "}}");
		t->counts.names++;
	}
	rc = loop_end(t, rc, "process and thread names");
	sqlite3_finalize(st);
	return rc;
}

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

static void t_counter(struct trace *t, int64_t pid, int64_t ns, size_t which, double v)
{
	t_event(t);
	outbuf_str(&t->ob, "\"ph\":\"C\",\"name\":\"");
	outbuf_str(&t->ob, counter_defs[which].track);
	outbuf_str(&t->ob, "\",\"pid\":");
	t_i64(t, pid);
	outbuf_str(&t->ob, ",\"ts\":");
	t_us(t, ns, t->origin);
	outbuf_str(&t->ob, ",\"args\":{\"value\":");
	t_double(t, v);
	outbuf_str(&t->ob, "}}");
	t->counts.counters++;
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
	rc = t_object(t, st, k);
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
static int write_intervals(struct trace *t)
{
	sqlite3_stmt *s = NULL, *p = NULL;
	struct arg_keys ks = { 0 }, kp = { 0 };
	int col[NCOUNTERS], rc, srow, prow;

	rc = prepare(t, "steps", steps_sql, &s);
	if (!rc)
		rc = prepare(t, "phases", phases_sql, &p);
	if (!rc)
		rc = keys_init(&ks, s, 6);
	if (!rc)
		rc = keys_init(&kp, p, 7);
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
		rc = sql_fail(t, "steps");
		goto out;
	}
	if (prow != SQLITE_DONE) {
		rc = sql_fail(t, "phases");
		goto out;
	}
	/* after each process's last step its counters drop to 0 */
	for (size_t i = 0; i < t->npids; i++)
		for (size_t c = 0; c < NCOUNTERS; c++)
			if (t->pids[i].set & (1u << c))
				t_counter(t, t->pids[i].pid, t->pids[i].last_end, c, 0);
out:
	keys_fini(&ks);
	keys_fini(&kp);
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

/* Each interval's values from its start, as the intervals analysis has
 * them (its one definition of the interval's MFU); a track drops to 0 at
 * the end of the last interval, and where an interval has no value for it
 * (unknown: no gap is drawn as 0 otherwise). Tracks no interval has a
 * value for are not written. */
static int write_interval_counters(struct trace *t)
{
	const struct analysis *a = analysis_find("intervals");
	sqlite3_stmt *st = NULL, *rs = NULL;
	int col[ARRAY_SIZE(interval_defs)], it = -1, idt = -1, rc;
	unsigned set = 0;
	int64_t pid = 0, end = INT64_MIN;
	char msg[512];

	if (!a)
		return 0;
	rc = prepare(t, "the run", "SELECT target_pid, start_ns FROM run WHERE id = 1", &rs);
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
	rc = loop_end(t, rc, "intervals");
	for (size_t i = 0; !rc && i < ARRAY_SIZE(interval_defs); i++)
		if (set & (1u << i))
			t_track(t, pid, end, interval_defs[i].track, 0);
	sqlite3_finalize(st);
	return rc;
}

/* ---- off-CPU intervals ---- */

/* Where the thread left the CPU: "function <- caller" of the interval's
 * stack, as the gaps section says it (analyses/gaps.sql). Columns 0-4 place
 * the slice (pid, tid, start_ns, end_ns, name); args from 5. */
static const char offcpu_sql[] =
	"WITH uf AS (\n"
	"  SELECT f.stack, row_number() OVER (PARTITION BY f.stack ORDER BY f.depth) AS k,\n"
	"         coalesce(sy.name,\n"
	"                  CASE WHEN sy.dso LIKE '[%' THEN sy.dso\n"
	"                       ELSE '[' || coalesce(replace(sy.dso, rtrim(sy.dso, replace(sy.dso, '/', '')), ''),\n"
	"                                            'unknown') || ']' END) AS fn\n"
	"  FROM stack_frame f LEFT JOIN symbol sy ON sy.id = f.symbol\n"
	"  WHERE NOT f.kernel AND f.stack IN (SELECT stack FROM offcpu)),\n"
	"wh AS (\n"
	"  SELECT a.stack, a.fn AS leaf, a.fn || coalesce(' <- ' || b.fn, '') AS text\n"
	"  FROM uf a LEFT JOIN uf b ON b.stack = a.stack AND b.k = 2 WHERE a.k = 1)\n"
	"SELECT o.pid, o.tid, o.start_ns, o.end_ns, o.kind || coalesce(': ' || wh.leaf, ''),\n"
	"       o.kind AS kind, wh.text AS \"where\", o.where_source AS where_source,\n"
	"       o.dur_ns / 1e6 AS dur_ms\n"
	"FROM offcpu o LEFT JOIN wh ON wh.stack = o.stack\n"
	"ORDER BY o.id";

static int write_offcpu(struct trace *t)
{
	sqlite3_stmt *st = NULL;
	struct arg_keys k = { 0 };
	int rc = prepare(t, "off-CPU intervals", offcpu_sql, &st);

	if (!rc)
		rc = keys_init(&k, st, 5);
	while (!rc && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t start = sqlite3_column_int64(st, 2);

		t_event(t);
		outbuf_str(&t->ob, "\"ph\":\"X\",");
		t_where(t, sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1), start);
		outbuf_str(&t->ob, ",\"dur\":");
		t_us(t, sqlite3_column_int64(st, 3), start);
		outbuf_str(&t->ob, ",\"name\":");
		rc = t_jcol(t, st, 4);
		outbuf_str(&t->ob, ",\"cat\":\"offcpu\",\"args\":");
		if (!rc)
			rc = t_object(t, st, &k);
		outbuf_write(&t->ob, "}", 1);
		t->counts.offcpu++;
	}
	rc = loop_end(t, rc, "off-CPU intervals");
	keys_fini(&k);
	sqlite3_finalize(st);
	return rc;
}

/* ---- samples ---- */

/* Each callchain's name is the function its samples are attributed to, as
 * in the dispatch section (the frame that decided the class, else the
 * innermost user frame); a symbol without a name is its file, [libm.so.6]. */
static const char stacks_sql[] =
	"SELECT st.id,\n"
	"  coalesce(cs.name, lf.name, CASE WHEN coalesce(cs.dso, lf.dso) LIKE '[%' THEN coalesce(cs.dso, lf.dso)\n"
	"    ELSE '[' || replace(coalesce(cs.dso, lf.dso), rtrim(coalesce(cs.dso, lf.dso),\n"
	"                        replace(coalesce(cs.dso, lf.dso), '/', '')), '') || ']' END) AS name,\n"
	"  CASE WHEN cs.id IS NOT NULL THEN cs.dso ELSE lf.dso END AS dso,\n"
	"  CASE WHEN cs.id IS NOT NULL AND lf.id IS NOT cs.id THEN lf.name END AS leaf\n"
	"FROM stack st LEFT JOIN symbol cs ON cs.id = st.class_symbol LEFT JOIN symbol lf ON lf.id = st.leaf\n"
	"ORDER BY st.id";

/* Column 6: the sample's phase by the process's phase timeline, as in
 * analyses/dispatch.sql (its thread's innermost complete phase open then,
 * else its process's marking thread's: the thread that began its first
 * step, else its first phase); column 7: that phase's thread. */
static const char samples_sql[] =
	"WITH lim AS (SELECT coalesce(max(end_ns - begin_ns), 0) AS maxph, 64 AS max_depth FROM phase WHERE complete = 1),\n"
	"mk AS MATERIALIZED (\n"
	"  SELECT pid, coalesce((SELECT st.tid FROM step st WHERE st.pid = t.pid ORDER BY st.step LIMIT 1),\n"
	"                       (SELECT p.tid FROM phase p WHERE p.pid = t.pid ORDER BY p.id LIMIT 1)) AS tid\n"
	"  FROM (SELECT pid FROM thread UNION SELECT target_pid FROM run) t WHERE pid IS NOT NULL),\n"
	"sp AS (\n"
	"  SELECT s.time_ns, s.pid, s.tid, s.stack, s.class, s.kernel,\n"
	"    (WITH RECURSIVE up(lane, id, parent, open, n) AS (\n"
	"       SELECT * FROM (\n"
	"         SELECT 0, p.id, p.parent, coalesce(p.complete = 1 AND p.end_ns > s.time_ns, 0), 1 FROM phase p\n"
	"         WHERE p.tid = s.tid AND p.begin_ns <= s.time_ns AND p.begin_ns > s.time_ns - (SELECT maxph FROM lim) - 1\n"
	"         ORDER BY p.begin_ns DESC, p.id DESC LIMIT 1)\n"
	"       UNION ALL\n"
	"       SELECT * FROM (\n"
	"         SELECT 1, p.id, p.parent, coalesce(p.complete = 1 AND p.end_ns > s.time_ns, 0), 1 FROM phase p\n"
	"         WHERE p.tid = (SELECT mk.tid FROM mk WHERE mk.pid = s.pid AND mk.tid <> s.tid)\n"
	"           AND p.begin_ns <= s.time_ns AND p.begin_ns > s.time_ns - (SELECT maxph FROM lim) - 1\n"
	"         ORDER BY p.begin_ns DESC, p.id DESC LIMIT 1)\n"
	"       UNION ALL\n"
	"       SELECT up.lane, q.id, q.parent, coalesce(q.complete = 1 AND q.end_ns > s.time_ns, 0), up.n + 1\n"
	"       FROM up JOIN phase q ON q.id = up.parent\n"
	"       WHERE NOT up.open AND up.n < (SELECT max_depth FROM lim))\n"
	"     SELECT id FROM up WHERE open ORDER BY lane LIMIT 1) AS phase_id\n"
	"  FROM sample s WHERE s.kind = 0)\n"
	"SELECT sp.time_ns, sp.pid, sp.tid, sp.stack, sp.class, sp.kernel, p.name,\n"
	"  CASE WHEN p.tid IS NOT sp.tid THEN p.tid END\n"
	"FROM sp LEFT JOIN phase p ON p.id = sp.phase_id";

#define SAMPLE_ARGS ",\"cat\":\"sample\",\"args\":{\"stack\":"

/* The text of a callchain's sample events from "name" to the args before
 * the class: "name":N,"cat":"sample","args":{"stack":ID,"dso":D,"leaf":L */
static int stack_text(sqlite3_stmt *st, struct stack_text *s)
{
	size_t cap = 0;
	char num[24];
	int rc;

	s->id = sqlite3_column_int64(st, 0);
	s->text = NULL;
	s->len = 0;
	rc = buf_append(&s->text, &s->len, &cap, "\"name\":", 7);
	if (!rc)
		rc = json_append_string(&s->text, &s->len, &cap, (const char *)sqlite3_column_text(st, 1),
					(size_t)sqlite3_column_bytes(st, 1));
	if (!rc)
		rc = buf_append(&s->text, &s->len, &cap, SAMPLE_ARGS, strlen(SAMPLE_ARGS));
	if (!rc)
		rc = buf_append(&s->text, &s->len, &cap, num, fmt_i64(num, s->id));
	for (int i = 2; !rc && i <= 3; i++) {
		if (sqlite3_column_type(st, i) == SQLITE_NULL)
			continue;
		rc = buf_append(&s->text, &s->len, &cap, i == 2 ? ",\"dso\":" : ",\"leaf\":", i == 2 ? 7 : 8);
		if (!rc)
			rc = json_append_string(&s->text, &s->len, &cap, (const char *)sqlite3_column_text(st, i),
						(size_t)sqlite3_column_bytes(st, i));
	}
	return rc ? -ENOMEM : 0;
}

static int load_stacks(struct trace *t)
{
	sqlite3_stmt *st = NULL;
	int rc = prepare(t, "sampled callchains", stacks_sql, &st);

	while (!rc && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		rc = 0;
		if (sqlite3_column_type(st, 1) == SQLITE_NULL)
			continue; /* no symbol at all: named per sample */
		if (array_grow(&t->stacks, &t->stacks_cap, t->nstacks + 1, sizeof(*t->stacks)) ||
		    stack_text(st, &t->stacks[t->nstacks])) {
			rc = -ENOMEM;
			break;
		}
		t->nstacks++;
	}
	rc = loop_end(t, rc, "sampled callchains");
	sqlite3_finalize(st);
	return rc;
}

static const struct stack_text *find_stack(const struct trace *t, int64_t id)
{
	return find_by_key(t->stacks, t->nstacks, sizeof(*t->stacks), id);
}

static int write_samples(struct trace *t)
{
	sqlite3_stmt *st = NULL;
	int rc = load_stacks(t);

	if (!rc)
		rc = trace_frames_build(t->db, &t->frames, t->err, t->errlen);
	if (!rc)
		rc = prepare(t, "samples", samples_sql, &st);
	while (!rc && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		const struct stack_text *s = NULL;

		rc = 0;
		if (sqlite3_column_type(st, 3) != SQLITE_NULL)
			s = find_stack(t, sqlite3_column_int64(st, 3));
		t_event(t);
		outbuf_str(&t->ob, "\"ph\":\"i\",\"s\":\"t\",");
		t_where(t, sqlite3_column_int64(st, 1), sqlite3_column_int64(st, 2), sqlite3_column_int64(st, 0));
		if (sqlite3_column_type(st, 3) != SQLITE_NULL) {
			int64_t sf = trace_frames_leaf(t->frames, sqlite3_column_int64(st, 3));
			if (sf >= 0) {
				outbuf_str(&t->ob, ",\"sf\":\"");
				t_i64(t, sf);
				outbuf_write(&t->ob, "\"", 1);
			}
		}
		outbuf_write(&t->ob, ",", 1);
		if (s)
			outbuf_write(&t->ob, s->text, s->len);
		else
			outbuf_str(&t->ob, sqlite3_column_int(st, 5) ? "\"name\":\"[kernel]\",\"cat\":\"sample\",\"args\":{"
							   : "\"name\":\"[unknown]\",\"cat\":\"sample\",\"args\":{");
		if (sqlite3_column_type(st, 4) != SQLITE_NULL) {
			outbuf_str(&t->ob, s ? ",\"class\":" : "\"class\":");
			rc = t_jcol(t, st, 4);
		}
		if (!rc && sqlite3_column_type(st, 6) != SQLITE_NULL) {
			outbuf_str(&t->ob, s || sqlite3_column_type(st, 4) != SQLITE_NULL ? ",\"phase\":" : "\"phase\":");
			rc = t_jcol(t, st, 6);
			if (!rc && sqlite3_column_type(st, 7) != SQLITE_NULL) {
				outbuf_str(&t->ob, ",\"phase_tid\":");
				t_i64(t, sqlite3_column_int64(st, 7));
			}
		}
		outbuf_str(&t->ob, "}}");
		t->counts.samples++;
	}
	rc = loop_end(t, rc, "samples");
	sqlite3_finalize(st);
	return rc;
}

/* ---- the object around the events ---- */

/* The run, for the trace's metadata: what was run, where, its peaks. */
static const char run_sql[] =
	"SELECT mfu_version, command, host, start_unix_ns, start_ns, end_ns, target_pid, ncpu,\n"
	"  dtype, peak_flops, peak_flops_source, peak_bw, peak_bw_source, state,\n"
	"  (SELECT count(*) FROM main.step WHERE complete = 1)\n"
	"    - (SELECT count(*) FROM step WHERE complete = 1) AS skipped_steps\n"
	"FROM run WHERE id = 1";

/* The end of the event list and the metadata object: "source", "ts_origin",
 * "run" (the run row's columns), "events" (how many of each kind). */
static int write_metadata(struct trace *t)
{
	sqlite3_stmt *st = NULL;
	struct arg_keys k = { 0 };
	const struct {
		const char *name;
		uint64_t n;
	} counts[] = {
		{ "steps", t->counts.steps },       { "phases", t->counts.phases },
		{ "incomplete", t->counts.incomplete }, { "offcpu", t->counts.offcpu },
		{ "counters", t->counts.counters }, { "intervals", t->counts.intervals },
		{ "samples", t->counts.samples },
		{ "names", t->counts.names },
	};
	int rc = prepare(t, "the run", run_sql, &st);

	if (!rc)
		rc = keys_init(&k, st, 0);
	if (!rc && sqlite3_step(st) != SQLITE_ROW)
		rc = sql_fail(t, "the run");
	if (rc)
		goto out;
	outbuf_str(&t->ob, "\n],\n");
	if (t->frames) {
		char *frames;
		size_t n;
		if (trace_frames_json(t->frames, &frames, &n)) {
			rc = -ENOMEM;
			goto out;
		}
		outbuf_str(&t->ob, "\"stackFrames\":");
		outbuf_write(&t->ob, frames, n);
		outbuf_str(&t->ob, ",\n");
		free(frames);
	}
	outbuf_str(&t->ob, "\"displayTimeUnit\":\"ns\",\n\"metadata\":{\"source\":\"mfu-report --trace\","
		 "\"ts_origin\":\"run.start_ns\",\"run\":");
	rc = t_object(t, st, &k);
	outbuf_str(&t->ob, ",\"events\":{");
	for (size_t i = 0; i < ARRAY_SIZE(counts); i++) {
		outbuf_str(&t->ob, i ? ",\"" : "\"");
		outbuf_str(&t->ob, counts[i].name);
		outbuf_str(&t->ob, "\":");
		t_i64(t, (int64_t)counts[i].n);
	}
	outbuf_str(&t->ob, "}}}\n");
out:
	keys_fini(&k);
	sqlite3_finalize(st);
	return rc;
}

static void trace_free(struct trace *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->nstacks; i++)
		free(t->stacks[i].text);
	free(t->stacks);
	trace_frames_free(t->frames);
	free(t->pids);
	free(t->esc);
	free(t);
}

int trace_write(sqlite3 *db, FILE *out, struct trace_counts *counts, char *err, size_t errlen)
{
	struct trace *t = calloc(1, sizeof(*t));
	sqlite3_stmt *st = NULL;
	int rc;

	if (!t) {
		strbuf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	outbuf_init(&t->ob, out);
	t->db = db;
	t->err = err;
	t->errlen = errlen;
	rc = prepare(t, "the run", "SELECT start_ns FROM run WHERE id = 1", &st);
	if (!rc) {
		int s = sqlite3_step(st);

		if (s == SQLITE_ROW)
			t->origin = sqlite3_column_int64(st, 0);
		else if (s == SQLITE_DONE)
			rc = (strbuf(err, errlen, "the run table is empty"), -EIO);
		else
			rc = sql_fail(t, "the run");
	}
	sqlite3_finalize(st);
	if (!rc) {
		outbuf_str(&t->ob, "{\"traceEvents\":[");
		rc = write_names(t);
	}
	if (!rc)
		rc = write_intervals(t);
	if (!rc)
		rc = write_interval_counters(t);
	if (!rc)
		rc = write_offcpu(t);
	if (!rc)
		rc = write_samples(t);
	if (!rc)
		rc = write_metadata(t);
	outbuf_flush(&t->ob); /* what there is, even after a failure */
	if (!rc)
		outbuf_finish(&t->ob);
	if (rc == -ENOMEM)
		strbuf(err, errlen, "out of memory");
	else if (!rc && outbuf_error(&t->ob)) {
		rc = outbuf_error(&t->ob);
		strbuf(err, errlen, "cannot write the trace: %s", strerror(-rc));
	}
	if (counts)
		*counts = t->counts;
	trace_free(t);
	return rc;
}
