/* mfu-report --trace: every cpu-clock sample as an instant on its thread,
 * with its callchain's name and class and its stack (trace_frames.c). */
#include "trace_impl.h"
#include "trace_frames.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

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
	int rc = trace_prepare(t, "sampled callchains", stacks_sql, &st);

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
	rc = trace_loop_end(t, rc, "sampled callchains");
	sqlite3_finalize(st);
	return rc;
}

static const struct stack_text *find_stack(const struct trace *t, int64_t id)
{
	return find_by_key(t->stacks, t->nstacks, sizeof(*t->stacks), id);
}

int trace_write_samples(struct trace *t)
{
	sqlite3_stmt *st = NULL;
	int rc = load_stacks(t);

	if (!rc)
		rc = trace_frames_build(t->db, &t->frames, t->err, t->errlen);
	if (!rc)
		rc = trace_prepare(t, "samples", samples_sql, &st);
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
	rc = trace_loop_end(t, rc, "samples");
	sqlite3_finalize(st);
	return rc;
}
