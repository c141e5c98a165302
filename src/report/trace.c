/* mfu-report --trace: the trace's frame ({"traceEvents": [...]}, its
 * metadata), the SQLite helpers its files share, process and thread names
 * and off-CPU slices; steps and phases are in trace_steps.c, samples in
 * trace_samples.c. */
#include "trace.h"
#include "trace_frames.h"
#include "trace_impl.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- SQLite ---- */

int trace_sql_fail(struct trace *t, const char *what)
{
	strbuf(t->err, t->errlen, "%s: %s", what, sqlite3_errmsg(t->db));
	return -EIO;
}

/* The end of a loop over sqlite3_step(): @rc is SQLITE_DONE (0), a
 * negative errno of ours, or SQLite's error (-EIO). */
int trace_loop_end(struct trace *t, int rc, const char *what)
{
	if (rc == SQLITE_DONE)
		return 0;
	return rc > 0 ? trace_sql_fail(t, what) : rc;
}

int trace_prepare(struct trace *t, const char *what, const char *sql, sqlite3_stmt **st)
{
	if (sqlite3_prepare_v2(t->db, sql, -1, st, NULL) != SQLITE_OK) {
		sqlite3_finalize(*st);
		*st = NULL;
		return trace_sql_fail(t, what);
	}
	return 0;
}

/* The keys of columns @first.. of @st, escaped once. */
int trace_keys_init(struct arg_keys *k, sqlite3_stmt *st, int first)
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

void trace_keys_fini(struct arg_keys *k)
{
	for (int i = 0; k->key && i < k->n; i++)
		free(k->key[i]);
	free(k->key);
	free(k->len);
	memset(k, 0, sizeof(*k));
}

/* {...}: the row's columns from k->first on that are not NULL (the args
 * of an event, the run in the metadata). */
int trace_object(struct trace *t, sqlite3_stmt *st, const struct arg_keys *k)
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
	int rc = trace_prepare(t, "process and thread names", names_sql, &st);

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
	rc = trace_loop_end(t, rc, "process and thread names");
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
	int rc = trace_prepare(t, "off-CPU intervals", offcpu_sql, &st);

	if (!rc)
		rc = trace_keys_init(&k, st, 5);
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
			rc = trace_object(t, st, &k);
		outbuf_write(&t->ob, "}", 1);
		t->counts.offcpu++;
	}
	rc = trace_loop_end(t, rc, "off-CPU intervals");
	trace_keys_fini(&k);
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
	int rc = trace_prepare(t, "the run", run_sql, &st);

	if (!rc)
		rc = trace_keys_init(&k, st, 0);
	if (!rc && sqlite3_step(st) != SQLITE_ROW)
		rc = trace_sql_fail(t, "the run");
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
	rc = trace_object(t, st, &k);
	outbuf_str(&t->ob, ",\"events\":{");
	for (size_t i = 0; i < ARRAY_SIZE(counts); i++) {
		outbuf_str(&t->ob, i ? ",\"" : "\"");
		outbuf_str(&t->ob, counts[i].name);
		outbuf_str(&t->ob, "\":");
		t_i64(t, (int64_t)counts[i].n);
	}
	outbuf_str(&t->ob, "}}}\n");
out:
	trace_keys_fini(&k);
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
	rc = trace_prepare(t, "the run", "SELECT start_ns FROM run WHERE id = 1", &st);
	if (!rc) {
		int s = sqlite3_step(st);

		if (s == SQLITE_ROW)
			t->origin = sqlite3_column_int64(st, 0);
		else if (s == SQLITE_DONE)
			rc = (strbuf(err, errlen, "the run table is empty"), -EIO);
		else
			rc = trace_sql_fail(t, "the run");
	}
	sqlite3_finalize(st);
	if (!rc) {
		outbuf_str(&t->ob, "{\"traceEvents\":[");
		rc = write_names(t);
	}
	if (!rc)
		rc = trace_write_steps(t);
	if (!rc)
		rc = trace_write_interval_counters(t);
	if (!rc)
		rc = write_offcpu(t);
	if (!rc)
		rc = trace_write_samples(t);
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
