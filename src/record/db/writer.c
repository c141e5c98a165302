#include "writer_impl.h"

#define LIB_COLUMNS "lib_flops, lib_flops_fp64, lib_flops_fp32, lib_flops_bf16, lib_flops_fp16, " \
	"lib_ops_int8, lib_calls, lib_calls_unknown"
#define LIB_NPARAMS 8

static const struct {
	const char *name;
	enum counter_col col; /* COL_NONE: computed (hw_flops, hw_fraction, the errors) */
	int integer;          /* bound as an integer (rounded), else as a double */
} cnt_cols[CC_N] = {
	[CC_CPU_NS] = { "cpu_ns", COL_CPU_NS, 1 },
	[CC_CTX_SWITCHES] = { "ctx_switches", COL_CTX_SWITCHES, 1 },
	[CC_CPU_MIGRATIONS] = { "cpu_migrations", COL_CPU_MIGRATIONS, 1 },
	[CC_PAGE_FAULTS] = { "page_faults", COL_PAGE_FAULTS, 1 },
	[CC_CYCLES] = { "cycles", COL_CYCLES, 1 },
	[CC_INSTRUCTIONS] = { "instructions", COL_INSTRUCTIONS, 1 },
	[CC_REF_CYCLES] = { "ref_cycles", COL_REF_CYCLES, 1 },
	[CC_HW_FLOPS] = { "hw_flops", COL_NONE, 0 },
	[CC_FLOPS_FP64] = { "hw_flops_fp64", COL_FLOPS_FP64, 0 },
	[CC_FLOPS_FP32] = { "hw_flops_fp32", COL_FLOPS_FP32, 0 },
	[CC_FLOPS_FP16] = { "hw_flops_fp16", COL_FLOPS_FP16, 0 },
	[CC_FLOPS_ANY] = { "hw_flops_any", COL_FLOPS_ANY, 0 },
	[CC_AMX_OPS] = { "amx_ops", COL_AMX_OPS, 0 },
	[CC_HW_FRACTION] = { "hw_fraction", COL_NONE, 0 },
	[CC_CPU_NS_ERR] = { "cpu_ns_err", COL_NONE, 1 },
	[CC_HW_FLOPS_ERR] = { "hw_flops_err", COL_NONE, 0 },
};

static const char *const stmt_sql[S_N] = {
	/* S_STEP, S_PHASE, S_STEP_COUNTS and S_PHASE_COUNTS: prepare_rows() */
	[S_ANOMALY] = "INSERT INTO anomaly (time_ns, pid, tid, kind, step, detail) VALUES (?,?,?,?,?,?)",
	[S_NOTE] = "INSERT INTO note (kind, text) VALUES (?,?)",
	[S_PEAK] = "INSERT INTO peak (kind, dtype, scope, value, source, detail) VALUES (?,?,?,?,?,?)",
	[S_COUNTER] = "INSERT INTO counter (id, name, kind, unit, opened, reason, encoding, grp, weight, col, pmu) "
		      "VALUES (?,?,?,?,?,?,?,?,?,?,?)",
	[S_TOTAL] = "UPDATE counter SET total = ?, time_enabled = ?, time_running = ? WHERE id = ?",
	[S_STEP_COUNTER] = "INSERT INTO step_counter (step, counter, raw, value, err) VALUES (?,?,?,?,?)",
	[S_PHASE_COUNTER] = "INSERT INTO phase_counter (phase, counter, raw, value, err) VALUES (?,?,?,?,?)",
	[S_LIB_CALL] = "INSERT INTO lib_call (step, function, precision, calls, flops) VALUES (?,?,?,?,?)",
};

int writer_fail(struct writer *w)
{
	strbuf(w->err, sizeof(w->err), "%s", sqlite3_errmsg(w->db));
	int code = sqlite3_errcode(w->db);
	return code == SQLITE_FULL ? -ENOSPC : code == SQLITE_NOMEM ? -ENOMEM : -EIO;
}

const char *writer_error(const struct writer *w)
{
	return w->err;
}

static int exec(struct writer *w, const char *sql)
{
	if (sqlite3_exec(w->db, sql, NULL, NULL, NULL) != SQLITE_OK)
		return writer_fail(w);
	return 0;
}

/* Append to @buf (@len bytes, *@n used), or mark it full (*@n = @len). */
static void append(char *buf, size_t len, size_t *n, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void append(char *buf, size_t len, size_t *n, const char *fmt, ...)
{
	va_list ap;
	int k;

	if (*n >= len)
		return;
	va_start(ap, fmt);
	k = vsnprintf(buf + *n, len - *n, fmt, ap);
	va_end(ap);
	*n = k < 0 || (size_t)k >= len - *n ? len : *n + (size_t)k;
}

/* (Re)prepare the statements of step and phase rows for the counter
 * columns in w->cols. Returns 0, or -EIO (w->err says why). */
static int prepare_rows(struct writer *w)
{
	static const struct {
		int id;
		const char *head;   /* the columns before the counters' */
		int nhead;
	} ins[] = {
		{ S_STEP, "INSERT INTO step (step, pid, tid, end_tid, begin_ns, end_ns, wall_ns, model_flops, "
			  "model_bytes", 9 },
		{ S_PHASE, "INSERT INTO phase (id, step, name, pid, tid, depth, parent, begin_ns, end_ns, wall_ns, "
			   "model_flops, model_bytes", 12 },
	};
	static const struct {
		int id;
		const char *table, *key;
	} upd[] = { { S_STEP_COUNTS, "step", "step" }, { S_PHASE_COUNTS, "phase", "id" } };
	char sql[2048];
	size_t n;

	for (size_t i = 0; i < ARRAY_SIZE(ins) + ARRAY_SIZE(upd); i++) {
		int id;
		n = 0;
		if (i < ARRAY_SIZE(ins)) {
			id = ins[i].id;
			append(sql, sizeof(sql), &n, "%s", ins[i].head);
			for (int k = 0; k < w->ncols; k++)
				append(sql, sizeof(sql), &n, ", %s", cnt_cols[w->cols[k]].name);
			append(sql, sizeof(sql), &n, ", complete, counts, " LIB_COLUMNS ") VALUES (?");
			for (int k = 1; k < ins[i].nhead + w->ncols + 2 + LIB_NPARAMS; k++)
				append(sql, sizeof(sql), &n, ",?");
			append(sql, sizeof(sql), &n, ")");
		} else {
			id = upd[i - ARRAY_SIZE(ins)].id;
			append(sql, sizeof(sql), &n, "UPDATE %s SET ", upd[i - ARRAY_SIZE(ins)].table);
			for (int k = 0; k < w->ncols; k++)
				append(sql, sizeof(sql), &n, "%s%s = ?", k ? ", " : "", cnt_cols[w->cols[k]].name);
			append(sql, sizeof(sql), &n, " WHERE %s = ?", upd[i - ARRAY_SIZE(ins)].key);
		}
		if (n >= sizeof(sql)) {
			strbuf(w->err, sizeof(w->err), "a statement of step or phase rows is too long");
			return -EIO;
		}
		sqlite3_finalize(w->st[id]);
		w->st[id] = NULL;
		if (sqlite3_prepare_v3(w->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &w->st[id], NULL) != SQLITE_OK)
			return writer_fail(w);
	}
	return 0;
}

int writer_open(struct writer **out, sqlite3 *db, char *err, size_t errlen)
{
	struct writer *w = calloc(1, sizeof(*w));
	int rc;

	*out = NULL;
	if (!w)
		return -ENOMEM;
	w->db = db;
	for (int i = 0; i < S_N; i++) {
		if (!stmt_sql[i])
			continue;
		if (sqlite3_prepare_v3(db, stmt_sql[i], -1, SQLITE_PREPARE_PERSISTENT, &w->st[i], NULL) != SQLITE_OK) {
			strbuf(err, errlen, "cannot prepare statement: %s", sqlite3_errmsg(db));
			rc = -EIO;
			goto fail;
		}
	}
	/* every counter column, until writer_counters() says which can be known */
	w->ncols = CC_N;
	for (int k = 0; k < CC_N; k++)
		w->cols[k] = (enum cnt_col)k;
	rc = prepare_rows(w);
	if (rc) {
		strbuf(err, errlen, "cannot prepare statement: %s", w->err);
		goto fail;
	}
	rc = exec(w, "BEGIN");
	if (rc) {
		strbuf(err, errlen, "%s", w->err);
		goto fail;
	}
	w->in_txn = 1;
	*out = w;
	return 0;
fail:
	for (int i = 0; i < S_N; i++)
		sqlite3_finalize(w->st[i]);
	free(w);
	return rc;
}

int writer_commit(struct writer *w)
{
	int rc;
	if (w->in_txn) {
		rc = exec(w, "COMMIT");
		if (rc)
			return rc;
		w->in_txn = 0;
	}
	rc = exec(w, "BEGIN");
	if (rc == 0)
		w->in_txn = 1;
	return rc;
}

void writer_rollback(struct writer *w)
{
	if (w->in_txn)
		sqlite3_exec(w->db, "ROLLBACK", NULL, NULL, NULL);
	w->in_txn = sqlite3_exec(w->db, "BEGIN", NULL, NULL, NULL) == SQLITE_OK;
}

void writer_close(struct writer *w)
{
	if (!w)
		return;
	if (w->in_txn)
		exec(w, "COMMIT");
	for (int i = 0; i < S_N; i++)
		sqlite3_finalize(w->st[i]);
	free(w);
}

/* Every caller binds each parameter of its statement before each run: no
 * sqlite3_clear_bindings(), a walk over them all at every row. */
int writer_run_stmt(struct writer *w, sqlite3_stmt *st)
{
	int rc = sqlite3_step(st);
	sqlite3_reset(st);
	if (rc != SQLITE_DONE)
		return writer_fail(w);
	return 0;
}

void writer_bind_text_or_null(sqlite3_stmt *st, int i, const char *s)
{
	if (s)
		sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, i);
}

void writer_bind_pos_or_null(sqlite3_stmt *st, int i, double v)
{
	if (v > 0)
		sqlite3_bind_double(st, i, v);
	else
		sqlite3_bind_null(st, i);
}

/* The counter columns @cs can fill: one that no opened counter feeds is
 * NULL in every row (counters_delta()). cpu_ns always: an UPDATE of the
 * counts needs a column to set. */
static void choose_columns(struct writer *w, const struct counters *cs)
{
	int feeds[COL_NCOLS] = { 0 }, hw_group = 0, flops;

	for (int i = 0; i < cs->n; i++) {
		if (!cs->c[i].opened)
			continue;
		feeds[cs->c[i].col] = 1;
		hw_group |= cs->c[i].group > 0;
	}
	flops = feeds[COL_FLOPS_FP64] || feeds[COL_FLOPS_FP32] || feeds[COL_FLOPS_FP16] || feeds[COL_FLOPS_ANY];
	w->ncols = 0;
	for (int k = 0; k < CC_N; k++) {
		int known;
		switch (k) {
		case CC_HW_FLOPS:
		case CC_HW_FLOPS_ERR: known = flops; break;
		case CC_HW_FRACTION: known = hw_group; break;
		case CC_CPU_NS_ERR: known = feeds[COL_CPU_NS]; break;
		default: known = feeds[cnt_cols[k].col]; break;
		}
		if (known || k == CC_CPU_NS)
			w->cols[w->ncols++] = (enum cnt_col)k;
	}
}

int writer_counters(struct writer *w, const struct counters *cs)
{
	int rc;

	w->cs = cs;
	choose_columns(w, cs);
	rc = prepare_rows(w);
	if (rc)
		return rc;
	for (int i = 0; i < cs->n; i++) {
		const struct counter *c = &cs->c[i];
		sqlite3_stmt *st = w->st[S_COUNTER];
		char reason[320];
		const char *why = c->opened ? NULL : c->reason;

		if (c->opened && c->user_only) {
			strbuf(reason, sizeof(reason), "user-mode only (perf_event_paranoid >= 2)%s",
			       c->col == COL_CTX_SWITCHES || c->col == COL_CPU_MIGRATIONS
				       ? ": the kernel counts this in kernel mode, so it is not reported"
				       : "");
			why = reason;
		}
		sqlite3_bind_int(st, 1, i);
		sqlite3_bind_text(st, 2, c->name, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(st, 3, c->kind, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 4, c->unit, -1, SQLITE_STATIC);
		sqlite3_bind_int(st, 5, c->opened);
		writer_bind_text_or_null(st, 6, why);
		sqlite3_bind_text(st, 7, c->encoding, -1, SQLITE_TRANSIENT);
		sqlite3_bind_int(st, 8, c->group);
		writer_bind_pos_or_null(st, 9, c->weight);
		writer_bind_text_or_null(st, 10, counters_col_name(c->col));
		writer_bind_text_or_null(st, 11, c->pmu[0] ? c->pmu : NULL);
		int rc = writer_run_stmt(w, st);
		if (rc)
			return rc;
	}
	return 0;
}

int writer_counter_total(struct writer *w, int id, uint64_t total, uint64_t enabled, uint64_t running)
{
	sqlite3_stmt *st = w->st[S_TOTAL];
	sqlite3_bind_int64(st, 1, (sqlite3_int64)total);
	if (enabled == UINT64_MAX) {
		sqlite3_bind_null(st, 2);
		sqlite3_bind_null(st, 3);
	} else {
		sqlite3_bind_int64(st, 2, (sqlite3_int64)enabled);
		sqlite3_bind_int64(st, 3, (sqlite3_int64)running);
	}
	sqlite3_bind_int(st, 4, id);
	return writer_run_stmt(w, st);
}

/* Counters only grow: a delta that is negative, not finite or beyond int64
 * comes from bad boundaries, and is stored as unknown, never as a number
 * (a cast of NaN would be INT64_MIN). */
static int count_ok(double v)
{
	return v >= 0 && v < 9.2e18;
}

/* The counter columns of @row that this recording binds (w->cols);
 * cpu_ns_err and hw_flops_err from @err when given (interpolated counts),
 * else 0 for each known value (read exactly at the boundaries). */
static int bind_counters(const struct writer *w, sqlite3_stmt *st, int i, const struct interval_row *row,
			 const struct counter_delta *err)
{
	double flops = row->complete ? counters_hw_flops(&row->d) : -1;

	for (int k = 0; k < w->ncols; k++, i++) {
		enum cnt_col c = w->cols[k];
		double v = -1;

		switch (c) {
		case CC_HW_FLOPS: v = flops; break;
		case CC_HW_FRACTION: v = row->complete ? row->d.hw_fraction : -1; break;
		case CC_CPU_NS_ERR:
			if (row->complete && row->d.has[COL_CPU_NS] && count_ok(row->d.v[COL_CPU_NS]))
				v = err ? err->v[COL_CPU_NS] : 0;
			break;
		case CC_HW_FLOPS_ERR:
			if (count_ok(flops))
				v = err && counters_hw_flops(err) > 0 ? counters_hw_flops(err) : 0;
			break;
		default:
			if (row->complete && row->d.has[cnt_cols[c].col])
				v = row->d.v[cnt_cols[c].col];
			break;
		}
		if (c == CC_HW_FRACTION ? v < 0 : !count_ok(v))
			sqlite3_bind_null(st, i);
		else if (cnt_cols[c].integer)
			sqlite3_bind_int64(st, i, (sqlite3_int64)(v + 0.5));
		else
			sqlite3_bind_double(st, i, v);
	}
	return i;
}

/* The library-call columns of a row (its MFU numerator, flops, is a
 * generated column: the declared model FLOPs, else these). Calls of
 * functions whose FLOPs are unknown leave the FLOP columns partial, or
 * unknown (NULL) when nothing else was counted: never a false 0. */
static int bind_lib(sqlite3_stmt *st, int i, const struct interval_row *row)
{
	const uint64_t *lib = row->d.lib;
	/* calls only grow: a difference past 2^63 (counts that went down,
	 * in a region the target can write) is no count */
	int known = row->complete && row->d.has_lib && lib[LIBFLOPS_W_CALLS] <= INT64_MAX &&
		    lib[LIBFLOPS_W_UNKNOWN] <= lib[LIBFLOPS_W_CALLS];
	int flops_known = known;
	double total = 0;

	for (int k = 0; k < LIBFLOPS_NPREC; k++)
		total += (double)lib[LIBFLOPS_W_FLOPS + k];
	if (known && lib[LIBFLOPS_W_UNKNOWN] && total == 0)
		flops_known = 0;
	if (flops_known)
		sqlite3_bind_double(st, i++, total);
	else
		sqlite3_bind_null(st, i++);
	for (int k = 0; k < LIBFLOPS_NPREC; k++, i++) {
		if (flops_known)
			sqlite3_bind_double(st, i, (double)lib[LIBFLOPS_W_FLOPS + k]);
		else
			sqlite3_bind_null(st, i);
	}
	if (known) {
		sqlite3_bind_int64(st, i++, (sqlite3_int64)lib[LIBFLOPS_W_CALLS]);
		sqlite3_bind_int64(st, i++, (sqlite3_int64)lib[LIBFLOPS_W_UNKNOWN]);
	} else {
		sqlite3_bind_null(st, i++);
		sqlite3_bind_null(st, i++);
	}
	return i;
}

/* A step's lib_call rows: each function's calls and FLOPs between the
 * snapshots of its two boundaries (FLOPs NULL for a function whose FLOPs
 * are unknown). */
static int write_lib_calls(struct writer *w, const struct interval_row *row)
{
	static struct libflops_table a, b; /* 8 KiB each: not on the stack */
	sqlite3_stmt *st = w->st[S_LIB_CALL];
	int ra, rb;

	if (!w->lf || !row->complete || !row->d.has_lib || !row->d.lib[0] || row->d.lib[0] > INT64_MAX)
		return 0;
	ra = libflops_snapshot_read(w->lf, row->lib_snap_begin, &a);
	rb = libflops_snapshot_read(w->lf, row->lib_snap_end, &b);
	if (ra == -ENOSPC || rb == -ENOSPC) {
		w->lib_snaps_full++;
		return 0;
	}
	if (ra || rb || a.pid != b.pid) {
		w->lib_snaps_lost++;
		return 0;
	}
	for (unsigned f = 0; f < libflops_nfuncs; f++) {
		uint64_t calls = b.f[f].calls - a.f[f].calls;
		if (!calls || calls > INT64_MAX)
			continue; /* none; or counts that went down: no count */
		sqlite3_bind_int64(st, 1, row->id);
		sqlite3_bind_text(st, 2, libflops_funcs[f].name, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 3, libflops_prec_name(libflops_funcs[f].prec), -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 4, (sqlite3_int64)calls);
		if (libflops_funcs[f].op == LIBFLOPS_UNKNOWN)
			sqlite3_bind_null(st, 5);
		else
			sqlite3_bind_double(st, 5, (double)(b.f[f].flops - a.f[f].flops));
		int rc = writer_run_stmt(w, st);
		if (rc)
			return rc;
	}
	return 0;
}

void writer_set_libflops(struct writer *w, const struct libflops_region *lf)
{
	w->lf = lf;
}

uint64_t writer_lib_snaps_lost(const struct writer *w)
{
	return w->lib_snaps_lost;
}

uint64_t writer_lib_snaps_full(const struct writer *w)
{
	return w->lib_snaps_full;
}

/* Raw and scaled values of the hardware and user events of a row. */
static int write_counter_rows(struct writer *w, sqlite3_stmt *st, const struct interval_row *row,
			      const struct counter_delta *err)
{
	if (!row->complete || !w->cs || (row->interpolated && !err))
		return 0;
	for (int k = 0; k < w->cs->n; k++) {
		const struct counter *c = &w->cs->c[k];
		if (!row->d.known[k] || strcmp(c->kind, "software") == 0)
			continue;
		sqlite3_bind_int64(st, 1, row->id);
		sqlite3_bind_int(st, 2, k);
		sqlite3_bind_int64(st, 3, (sqlite3_int64)row->d.raw[k]);
		sqlite3_bind_double(st, 4, row->d.scaled[k]);
		sqlite3_bind_double(st, 5, err ? err->scaled[k] : 0);
		int rc = writer_run_stmt(w, st);
		if (rc)
			return rc;
	}
	return 0;
}

/* The counter columns, complete and counts of a new row: an interpolated
 * row's counts are filled in later (writer_step_counts). */
static int bind_row_counters(const struct writer *w, sqlite3_stmt *st, int i, const struct interval_row *row)
{
	if (row->interpolated) {
		for (int k = 0; k < w->ncols; k++)
			sqlite3_bind_null(st, i++);
	} else {
		i = bind_counters(w, st, i, row, NULL);
	}
	sqlite3_bind_int(st, i++, row->complete);
	sqlite3_bind_text(st, i++, row->interpolated ? "interpolated" : "exact", -1, SQLITE_STATIC);
	return i;
}

static void bind_interval(sqlite3_stmt *st, int *i, const struct interval_row *row)
{
	sqlite3_bind_int64(st, (*i)++, (sqlite3_int64)row->begin_ns);
	if (row->complete) {
		sqlite3_bind_int64(st, (*i)++, (sqlite3_int64)row->end_ns);
		sqlite3_bind_int64(st, (*i)++, (sqlite3_int64)(row->end_ns - row->begin_ns));
	} else {
		sqlite3_bind_null(st, (*i)++);
		sqlite3_bind_null(st, (*i)++);
	}
	if (row->has_model & MODEL_FLOPS)
		sqlite3_bind_double(st, (*i)++, row->model_flops);
	else
		sqlite3_bind_null(st, (*i)++);
	if (row->has_model & MODEL_BYTES)
		sqlite3_bind_double(st, (*i)++, row->model_bytes);
	else
		sqlite3_bind_null(st, (*i)++);
}

int writer_step(void *ctx, const struct interval_row *row)
{
	struct writer *w = ctx;
	sqlite3_stmt *st = w->st[S_STEP];
	int i = 1;

	sqlite3_bind_int64(st, i++, row->id);
	sqlite3_bind_int(st, i++, row->pid);
	sqlite3_bind_int(st, i++, row->tid);
	if (row->complete)
		sqlite3_bind_int(st, i++, row->end_tid);
	else
		sqlite3_bind_null(st, i++);
	bind_interval(st, &i, row);
	i = bind_row_counters(w, st, i, row);
	i = bind_lib(st, i, row);
	int rc = writer_run_stmt(w, st);
	if (!rc)
		rc = write_counter_rows(w, w->st[S_STEP_COUNTER], row, NULL);
	return rc ? rc : write_lib_calls(w, row);
}

int writer_phase(void *ctx, const struct interval_row *row)
{
	struct writer *w = ctx;
	sqlite3_stmt *st = w->st[S_PHASE];
	int i = 1;

	sqlite3_bind_int64(st, i++, row->id);
	if (row->step >= 0)
		sqlite3_bind_int64(st, i++, row->step);
	else
		sqlite3_bind_null(st, i++);
	sqlite3_bind_text(st, i++, row->name, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int(st, i++, row->pid);
	sqlite3_bind_int(st, i++, row->tid);
	sqlite3_bind_int(st, i++, row->depth);
	if (row->parent >= 0)
		sqlite3_bind_int64(st, i++, row->parent);
	else
		sqlite3_bind_null(st, i++);
	bind_interval(st, &i, row);
	i = bind_row_counters(w, st, i, row);
	i = bind_lib(st, i, row);
	int rc = writer_run_stmt(w, st);
	return rc ? rc : write_counter_rows(w, w->st[S_PHASE_COUNTER], row, NULL);
}

/* Counts of an interpolated row, known only when the recording ended. */
static int write_counts(struct writer *w, int is_phase, const struct interval_row *row,
			const struct counter_delta *err)
{
	sqlite3_stmt *st = w->st[is_phase ? S_PHASE_COUNTS : S_STEP_COUNTS];
	int i = bind_counters(w, st, 1, row, err);
	sqlite3_bind_int64(st, i, row->id);
	int rc = writer_run_stmt(w, st);
	return rc ? rc : write_counter_rows(w, w->st[is_phase ? S_PHASE_COUNTER : S_STEP_COUNTER], row, err);
}

int writer_step_counts(struct writer *w, const struct interval_row *row, const struct counter_delta *err)
{
	return write_counts(w, 0, row, err);
}

int writer_phase_counts(struct writer *w, const struct interval_row *row, const struct counter_delta *err)
{
	return write_counts(w, 1, row, err);
}

int writer_anomaly(void *ctx, const struct anomaly_row *row)
{
	struct writer *w = ctx;
	sqlite3_stmt *st = w->st[S_ANOMALY];

	if (row->time_ns)
		sqlite3_bind_int64(st, 1, (sqlite3_int64)row->time_ns);
	else
		sqlite3_bind_null(st, 1);
	sqlite3_bind_int(st, 2, row->pid);
	sqlite3_bind_int(st, 3, row->tid);
	sqlite3_bind_text(st, 4, row->kind, -1, SQLITE_STATIC);
	if (row->step >= 0)
		sqlite3_bind_int64(st, 5, row->step);
	else
		sqlite3_bind_null(st, 5);
	sqlite3_bind_text(st, 6, row->detail, -1, SQLITE_TRANSIENT);
	return writer_run_stmt(w, st);
}
