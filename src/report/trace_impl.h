/* mfu-report --trace, shared by its files: trace.c (the trace's frame,
 * names, off-CPU slices, metadata), trace_steps.c (steps, phases and the
 * counter tracks) and trace_samples.c (cpu-clock samples). */
#ifndef MFU_REPORT_TRACE_IMPL_H
#define MFU_REPORT_TRACE_IMPL_H

#include "trace.h"
#include "format.h"
#include "format_impl.h"
#include "outbuf.h"
#include "util.h"

#include <errno.h>
#include <math.h>
#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

/* A process's counter tracks: when its last step ended and which tracks it
 * set, so they drop to 0 between steps. */
struct pid_state {
	int64_t pid, last_end;
	unsigned set; /* bit i: counter i of trace_steps.c holds a step's value */
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

static inline void t_i64(struct trace *t, int64_t v)
{
	char num[24];

	outbuf_write(&t->ob, num, fmt_i64(num, (long long)v));
}

/* A double that reads back exactly; JSON has no infinity or NaN. */
static inline void t_double(struct trace *t, double v)
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
static inline size_t fmt_us(char *buf, int64_t to, int64_t from)
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
static inline void t_us(struct trace *t, int64_t to, int64_t from)
{
	char num[32];

	outbuf_write(&t->ob, num, fmt_us(num, to, from));
}

/* @s (@n bytes) as a JSON string; -ENOMEM. */
static inline int t_jstr(struct trace *t, const char *s, size_t n)
{
	t->esc_len = 0;
	if (json_append_string(&t->esc, &t->esc_len, &t->esc_cap, s ? s : "", s ? n : 0))
		return -ENOMEM;
	outbuf_write(&t->ob, t->esc, t->esc_len);
	return 0;
}

static inline int t_jcol(struct trace *t, sqlite3_stmt *st, int i)
{
	return t_jstr(t, (const char *)sqlite3_column_text(st, i), (size_t)sqlite3_column_bytes(st, i));
}

/* The separator before the next event. */
static inline void t_event(struct trace *t)
{
	outbuf_str(&t->ob, t->nevents++ ? ",\n{" : "\n{");
}

/* "pid":P,"tid":T,"ts":TS */
static inline void t_where(struct trace *t, int64_t pid, int64_t tid, int64_t ns)
{
	outbuf_str(&t->ob, "\"pid\":");
	t_i64(t, pid);
	outbuf_str(&t->ob, ",\"tid\":");
	t_i64(t, tid);
	outbuf_str(&t->ob, ",\"ts\":");
	t_us(t, ns, t->origin);
}

/* ---- SQLite ---- */

/* SQLite's message about @what into t->err; returns -EIO. */
int trace_sql_fail(struct trace *t, const char *what);

/* The end of a loop over sqlite3_step(): @rc is SQLITE_DONE (0), a
 * negative errno of ours, or SQLite's error (-EIO). */
int trace_loop_end(struct trace *t, int rc, const char *what);

/* Prepare @sql into *@st; on failure *@st is NULL and t->err says @what. */
int trace_prepare(struct trace *t, const char *what, const char *sql, sqlite3_stmt **st);

/* The keys of columns @first.. of @st, escaped once; -ENOMEM. */
int trace_keys_init(struct arg_keys *k, sqlite3_stmt *st, int first);
void trace_keys_fini(struct arg_keys *k);

/* {...}: the row's columns from k->first on that are not NULL (the args
 * of an event, the run in the metadata); -ENOMEM. */
int trace_object(struct trace *t, sqlite3_stmt *st, const struct arg_keys *k);

/* ---- the events, each kind in one pass; 0, -ENOMEM or -EIO ---- */

/* Steps and phases as slices, and the per-step counters (trace_steps.c). */
int trace_write_steps(struct trace *t);
/* The intervals section's figures on counter tracks (trace_steps.c). */
int trace_write_interval_counters(struct trace *t);
/* The cpu-clock samples as instants with their stacks (trace_samples.c). */
int trace_write_samples(struct trace *t);

#endif
