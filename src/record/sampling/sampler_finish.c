/* The sampler at the end of a recording: off-CPU intervals, symbols, classes (sampler_impl.h). */
#include "sampler_impl.h"

/* ---- the end of a recording ---- */

static int exec_sql(struct sampler *s, const char *sql, char *why, size_t whylen)
{
	char *msg = NULL;
	if (sqlite3_exec(s->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
		strbuf(why, whylen, "%s", msg ? msg : sqlite3_errmsg(s->db));
		sqlite3_free(msg);
		return sqlite3_errcode(s->db) == SQLITE_FULL ? -ENOSPC : -EIO;
	}
	return 0;
}

/* Off-CPU intervals (a switch-out to the thread's next switch-in), where each
 * began, and each thread's on-CPU time (a switch-in to the next switch-out). */
static int build_offcpu(struct sampler *s, char *why, size_t whylen)
{
	static const char *const files[] = { "offcpu.sql", "thread_cpu.sql" };

	for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
		const struct mfu_embedded *f = embedded_find(mfu_derive_files, files[i]);
		int rc;

		if (!f) {
			strbuf(why, whylen, "schema/derive/%s is not built in", files[i]);
			return -ENOENT;
		}
		rc = exec_sql(s, f->text, why, whylen);
		if (rc)
			return rc;
	}
	return 0;
}

/* The class of a resolved symbol (enum code_class): kernel frames are not
 * classified, an address in no mapping takes its caller's class, generated
 * code (JIT) is the program's own. */
static enum code_class symbol_class(const struct sampler *s, const struct symbol_info *si, const char *name)
{
	if (si->kind == SYMBOL_JIT)
		return CODE_USER;
	if (si->kind != SYMBOL_USER)
		return CODE_NEUTRAL;
	return code_classes_match(s->cc, si->dso, name);
}

/* Each stack's class from its user frames (code_class_of_stack), then each
 * sample's: kernel mode stays "kernel" unless the thread was waiting for
 * others (a futex or sched_yield call from a spin-wait), which is "sync". */
static int classify_stacks(struct sampler *s, char *why, size_t whylen)
{
	enum code_class frames[MAX_FRAMES];
	sqlite3_int64 syms[MAX_FRAMES];
	sqlite3_stmt *fr = NULL, *ins = NULL;
	sqlite3_int64 cur = -1;
	size_t n = 0;
	int rc = exec_sql(s, "CREATE TEMP TABLE stack_class (id INTEGER PRIMARY KEY, class TEXT NOT NULL, symbol INTEGER);",
			  why, whylen);

	if (rc)
		return rc;
	if (sqlite3_prepare_v2(s->db,
		"SELECT f.stack, coalesce(c.class, 4), f.symbol FROM stack_frame f LEFT JOIN temp.symbol_class c ON c.id = f.symbol "
		"WHERE NOT f.kernel ORDER BY f.stack, f.depth", -1, &fr, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(s->db, "INSERT INTO temp.stack_class (id, class, symbol) VALUES (?,?,?)", -1, &ins, NULL) !=
		    SQLITE_OK) {
		strbuf(why, whylen, "%s", sqlite3_errmsg(s->db));
		rc = -EIO;
		goto out;
	}
	for (;;) {
		int row = sqlite3_step(fr) == SQLITE_ROW;
		sqlite3_int64 id = row ? sqlite3_column_int64(fr, 0) : -1;

		if (id != cur && n > 0) {
			size_t owner;
			enum code_class cls = code_class_of_stack(frames, n, &owner);

			sqlite3_bind_int64(ins, 1, cur);
			sqlite3_bind_text(ins, 2, code_class_name(cls), -1, SQLITE_STATIC);
			if (syms[owner])
				sqlite3_bind_int64(ins, 3, syms[owner]);
			else
				sqlite3_bind_null(ins, 3);
			rc = step_stmt(s, ins);
			if (rc) {
				strbuf(why, whylen, "%s", s->why);
				goto out;
			}
			n = 0;
		}
		if (!row)
			break;
		cur = id;
		if (n < ARRAY_SIZE(frames)) {
			frames[n] = (enum code_class)sqlite3_column_int(fr, 1);
			syms[n++] = sqlite3_column_int64(fr, 2);
		}
	}
	rc = exec_sql(s,
		"UPDATE stack SET compute = coalesce((SELECT class = 'compute' FROM temp.stack_class c "
		"    WHERE c.id = stack.id), 0), "
		"  class_symbol = (SELECT symbol FROM temp.stack_class c WHERE c.id = stack.id);"
		"UPDATE sample SET class = CASE "
		"    WHEN kernel THEN CASE WHEN (SELECT class FROM temp.stack_class c WHERE c.id = sample.stack) = 'sync' "
		"        THEN 'sync' ELSE 'kernel' END "
		"    WHEN stack IS NULL THEN 'unclassified' "
		"    ELSE coalesce((SELECT class FROM temp.stack_class c WHERE c.id = sample.stack), 'unclassified') END;"
		"DROP TABLE temp.stack_class; DROP TABLE temp.symbol_class;",
		why, whylen);
out:
	sqlite3_finalize(fr);
	sqlite3_finalize(ins);
	return rc;
}

struct symbol_stmts {
	sqlite3_stmt *find, *ins_sym, *ins_cls;
};

/* The symbol row of @si (@name NULL when unresolved): one row per distinct
 * (dso, name, file, line, kind), found with a lookup query so that the
 * symbol table stays small, else inserted with its code class. */
static int symbol_row(struct sampler *s, struct symbol_stmts *ss, const struct symbol_info *si, const char *name,
		      sqlite3_int64 *id)
{
	enum code_class cls;
	int rc = 0;

	sqlite3_bind_text(ss->find, 1, si->dso, -1, SQLITE_STATIC);
	sqlite3_bind_text(ss->find, 2, name, -1, SQLITE_STATIC);
	sqlite3_bind_text(ss->find, 3, si->file, -1, SQLITE_STATIC);
	if (si->line > 0)
		sqlite3_bind_int(ss->find, 4, si->line);
	else
		sqlite3_bind_null(ss->find, 4);
	sqlite3_bind_text(ss->find, 5, symbol_kind_name(si->kind), -1, SQLITE_STATIC);
	if (sqlite3_step(ss->find) == SQLITE_ROW) {
		*id = sqlite3_column_int64(ss->find, 0);
		sqlite3_reset(ss->find);
		return 0;
	}
	sqlite3_reset(ss->find);
	sqlite3_bind_text(ss->ins_sym, 1, si->dso, -1, SQLITE_STATIC);
	sqlite3_bind_text(ss->ins_sym, 2, name, -1, SQLITE_STATIC);
	sqlite3_bind_text(ss->ins_sym, 3, si->file, -1, SQLITE_STATIC);
	if (si->line > 0)
		sqlite3_bind_int(ss->ins_sym, 4, si->line);
	else
		sqlite3_bind_null(ss->ins_sym, 4);
	sqlite3_bind_text(ss->ins_sym, 5, symbol_kind_name(si->kind), -1, SQLITE_STATIC);
	cls = symbol_class(s, si, name);
	if (si->kind == SYMBOL_USER || si->kind == SYMBOL_JIT)
		sqlite3_bind_text(ss->ins_sym, 6, code_class_symbol_name(cls), -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(ss->ins_sym, 6);
	rc = step_stmt(s, ss->ins_sym);
	*id = sqlite3_last_insert_rowid(s->db);
	if (!rc) {
		sqlite3_bind_int64(ss->ins_cls, 1, *id);
		sqlite3_bind_int(ss->ins_cls, 2, (int)cls);
		rc = step_stmt(s, ss->ins_cls);
	}
	return rc;
}

/* Tell @sym the target's address-space history, in time order: the forks
 * of processes, their execs and their mappings. */
static int replay_address_spaces(struct sampler *s, struct symbols *sym, char *why, size_t whylen)
{
	sqlite3_stmt *ev = NULL;
	int rc = 0;

	if (sqlite3_prepare_v2(s->db,
		"SELECT time_ns, 2 AS k, pid, start, len, pgoff, path FROM mapping "
		"UNION ALL SELECT start_ns, 0, pid, ppid, 0, 0, NULL FROM thread "
		"    WHERE tid = pid AND ppid IS NOT NULL AND ppid != pid AND start_ns IS NOT NULL "
		"UNION ALL SELECT time_ns, 1, pid, 0, 0, 0, NULL FROM exec "
		"ORDER BY 1, 2", -1, &ev, NULL) != SQLITE_OK) {
		strbuf(why, whylen, "%s", sqlite3_errmsg(s->db));
		return -EIO;
	}
	while (!rc && sqlite3_step(ev) == SQLITE_ROW) {
		int k = sqlite3_column_int(ev, 1);
		pid_t pid = sqlite3_column_int(ev, 2);
		if (k == 0) {
			rc = symbols_fork(sym, (pid_t)sqlite3_column_int(ev, 3), pid);
		} else if (k == 1) {
			symbols_exec(sym, pid);
		} else {
			const char *path = (const char *)sqlite3_column_text(ev, 6);
			rc = symbols_add_map(sym, pid, (uint64_t)sqlite3_column_int64(ev, 3),
					     (uint64_t)sqlite3_column_int64(ev, 4),
					     (uint64_t)sqlite3_column_int64(ev, 5), path ? path : "", 1);
			if (rc == -EINVAL)
				rc = 0; /* an odd mapping: its IPs stay unknown */
		}
	}
	sqlite3_finalize(ev);
	return rc;
}

/* Resolve every (process, address) of the stored stacks, in the order the
 * address spaces changed, and classify the samples. */
static int symbolize(struct sampler *s, char *why, size_t whylen)
{
	struct symbols *sym = NULL;
	struct symbol_stmts ss = { 0 };
	sqlite3_stmt *ips = NULL, *ins_map = NULL;
	int rc = symbols_new(&sym);

	if (rc)
		return rc;
	rc = exec_sql(s,
		"CREATE TEMP TABLE ip_symbol (pid INTEGER, ip INTEGER, symbol INTEGER, PRIMARY KEY (pid, ip)) WITHOUT ROWID;"
		"CREATE TEMP TABLE symbol_class (id INTEGER PRIMARY KEY, class INTEGER);",
		why, whylen);
	if (rc)
		goto out;
	rc = replay_address_spaces(s, sym, why, whylen);
	if (rc)
		goto out;

	if (sqlite3_prepare_v2(s->db,
		/* frames above the innermost of their mode are return addresses:
		 * resolve the call instruction (ip - 1), as perf does, or a call
		 * at the end of a function would be named after the next one. The
		 * first user frame of a kernel-mode sample is where the thread
		 * entered the kernel (the interrupted or faulting instruction, or
		 * the one after a syscall), not a return address: taken as it is */
		"SELECT DISTINCT st.pid, f.ip - (f.prev IS f.kernel)"
		" FROM (SELECT stack, ip, kernel, lag(kernel) OVER (PARTITION BY stack ORDER BY depth) AS prev"
		"       FROM stack_frame) AS f JOIN stack st ON st.id = f.stack",
		-1, &ips, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(s->db,
		"INSERT INTO symbol (dso, name, file, line, kind, class) VALUES (?,?,?,?,?,?)", -1, &ss.ins_sym, NULL) !=
		    SQLITE_OK ||
	    sqlite3_prepare_v2(s->db,
		"INSERT INTO temp.ip_symbol (pid, ip, symbol) VALUES (?,?,?)", -1, &ins_map, NULL) != SQLITE_OK)
		goto sqlerr;
	/* one symbol row per distinct (dso, name, file, line, kind), found with
	 * a lookup query: the symbol table stays small */
	if (sqlite3_prepare_v2(s->db,
		"SELECT id FROM symbol WHERE dso IS ? AND name IS ? AND file IS ? AND line IS ? AND kind = ?",
		-1, &ss.find, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(s->db, "INSERT INTO temp.symbol_class (id, class) VALUES (?,?)", -1, &ss.ins_cls,
			       NULL) != SQLITE_OK)
		goto sqlerr;
	while (sqlite3_step(ips) == SQLITE_ROW) {
		struct symbol_info si;
		pid_t pid = sqlite3_column_int(ips, 0);
		uint64_t ip = (uint64_t)sqlite3_column_int64(ips, 1);
		int rr = symbols_resolve(sym, pid, ip, &si);
		if (rr == -ENOMEM) {
			rc = rr;
			break;
		}
		const char *name = rr == 0 ? si.name : NULL;
		sqlite3_int64 id;

		rc = symbol_row(s, &ss, &si, name, &id);
		if (!rc) {
			sqlite3_bind_int(ins_map, 1, pid);
			sqlite3_bind_int64(ins_map, 2, (sqlite3_int64)ip);
			sqlite3_bind_int64(ins_map, 3, id);
			rc = step_stmt(s, ins_map);
		}
		if (rc) {
			strbuf(why, whylen, "%s", s->why);
			break;
		}
	}
	if (rc)
		goto out;
	rc = exec_sql(s,
		"UPDATE stack_frame SET symbol = (SELECT t.symbol FROM temp.ip_symbol t, stack st "
		"    WHERE st.id = stack_frame.stack AND t.pid = st.pid AND t.ip = stack_frame.ip -"
		"      coalesce((SELECT p.kernel IS stack_frame.kernel FROM stack_frame p"
		"       WHERE p.stack = stack_frame.stack AND p.depth = stack_frame.depth - 1), 0));"
		"UPDATE stack SET leaf = (SELECT symbol FROM stack_frame f WHERE f.stack = stack.id AND NOT f.kernel "
		"    ORDER BY depth LIMIT 1);"
		"DROP TABLE temp.ip_symbol;",
		why, whylen);
	if (!rc)
		rc = classify_stacks(s, why, whylen);
	goto out;
sqlerr:
	strbuf(why, whylen, "%s", sqlite3_errmsg(s->db));
	rc = -EIO;
out:
	sqlite3_finalize(ips);
	sqlite3_finalize(ss.find);
	sqlite3_finalize(ss.ins_sym);
	sqlite3_finalize(ss.ins_cls);
	sqlite3_finalize(ins_map);
	symbols_free(sym);
	return rc;
}

/* The user's --dispatch patterns, as a note: sampling.compute_patterns has
 * the compute side. */
static int store_dispatch_patterns(struct sampler *s, char *why, size_t whylen)
{
	char *pat = code_classes_patterns(s->cc, CODE_DISPATCH, 1), *text = NULL;
	sqlite3_stmt *st = NULL;
	int rc = 0;

	if (!pat)
		return -ENOMEM;
	if (!*pat)
		goto out;
	pat[strlen(pat) - 1] = '\0';
	if (asprintf(&text, "functions matching these --dispatch patterns count as dispatch: %s", pat) < 0) {
		text = NULL;
		rc = -ENOMEM;
		goto out;
	}
	for (char *c = text; *c; c++)
		if (*c == '\n')
			*c = ' ';
	if (sqlite3_prepare_v2(s->db, "INSERT INTO note (kind, text) VALUES ('dispatch_patterns', ?)", -1, &st, NULL) !=
	    SQLITE_OK) {
		strbuf(why, whylen, "%s", sqlite3_errmsg(s->db));
		rc = -EIO;
		goto out;
	}
	sqlite3_bind_text(st, 1, text, -1, SQLITE_STATIC);
	rc = step_stmt(s, st);
	if (rc)
		strbuf(why, whylen, "%s", s->why);
out:
	sqlite3_finalize(st);
	free(text);
	free(pat);
	return rc;
}

int sampler_finish(struct sampler *s, char *why, size_t whylen)
{
	sqlite3_stmt *st = NULL;
	char *patterns = NULL;
	int rc;

	perf_ring_disable(s->ps);
	sampler_drain(s);
	if (s->error) {
		strbuf(why, whylen, "cannot store samples: %s", s->why);
		return s->error;
	}
	rc = build_offcpu(s, why, whylen);
	if (!rc)
		rc = symbolize(s, why, whylen);
	if (rc)
		return rc;
	patterns = code_classes_patterns(s->cc, CODE_COMPUTE, 0);
	if (!patterns)
		return -ENOMEM;
	if (sqlite3_prepare_v2(s->db,
		"INSERT INTO sampling (freq, user_only, switch_samples, lost, lost_samples, samples, switches, "
		"compute_patterns) VALUES (?,?,?,?,?,?,?,?)", -1, &st, NULL) != SQLITE_OK) {
		free(patterns);
		strbuf(why, whylen, "%s", sqlite3_errmsg(s->db));
		return -EIO;
	}
	sqlite3_bind_int(st, 1, (int)s->freq);
	sqlite3_bind_int(st, 2, perf_ring_user_only(s->ps));
	sqlite3_bind_int(st, 3, perf_ring_switch_samples(s->ps));
	sqlite3_bind_int64(st, 4, (sqlite3_int64)perf_ring_lost(s->ps, -1));
	sqlite3_bind_int64(st, 5, (sqlite3_int64)perf_ring_lost_samples(s->ps, -1));
	sqlite3_bind_int64(st, 6, (sqlite3_int64)s->samples);
	sqlite3_bind_int64(st, 7, (sqlite3_int64)s->switches);
	sqlite3_bind_text(st, 8, patterns, -1, SQLITE_TRANSIENT);
	rc = step_stmt(s, st);
	if (rc)
		strbuf(why, whylen, "%s", s->why);
	sqlite3_finalize(st);
	free(patterns);
	if (!rc)
		rc = store_dispatch_patterns(s, why, whylen);
	if (!rc && perf_ring_lost(s->ps, -1)) {
		size_t len = strlen(s->note);
		snprintf(s->note + len, sizeof(s->note) - len, "%sthe kernel dropped %llu sampling records "
			 "(rings full); breakdowns near them are less exact", len ? "; " : "",
			 (unsigned long long)perf_ring_lost(s->ps, -1));
	}
	return rc;
}
