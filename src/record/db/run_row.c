/* The run row, the peaks and the notes (writer.h). */
#include "writer_impl.h"
#include "machine.h"
#include "record/counters/peaks.h"

int writer_run_begin(struct writer *w, const struct run_info *ri)
{
	const struct machine *m = ri->machine;
	char isa[256];
	sqlite3_stmt *st = NULL;
	int rc;

	machine_isa_string(m->isa, isa, sizeof(isa));
	if (sqlite3_prepare_v2(w->db,
		"INSERT INTO run (id, mfu_version, command, cwd, start_unix_ns, start_ns, host, kernel, "
		"cpu_vendor, cpu_family, cpu_model, cpu_stepping, cpu_name, uarch, isa, nominal_hz, "
		"nominal_hz_source, allowed_cpus, ncpu_affinity, cpu_quota, ncpu, dtype, peak_flops, "
		"peak_flops_source, peak_bw, peak_bw_source, target_pid, mode, interval_ns, state) VALUES "
		"(1, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'recording')",
		-1, &st, NULL) != SQLITE_OK)
		return writer_fail(w);
	char host[256] = "", kernel[256] = "";
	FILE *f;
	if ((f = fopen("/proc/sys/kernel/hostname", "r"))) {
		if (fgets(host, sizeof(host), f))
			host[strcspn(host, "\n")] = '\0';
		fclose(f);
	}
	if ((f = fopen("/proc/sys/kernel/osrelease", "r"))) {
		if (fgets(kernel, sizeof(kernel), f))
			kernel[strcspn(kernel, "\n")] = '\0';
		fclose(f);
	}
	int i = 1;
	sqlite3_bind_text(st, i++, MFU_VERSION, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, i++, ri->command_json, -1, SQLITE_TRANSIENT);
	writer_bind_text_or_null(st, i++, ri->cwd);
	sqlite3_bind_int64(st, i++, (sqlite3_int64)ri->start_unix_ns);
	sqlite3_bind_int64(st, i++, (sqlite3_int64)ri->start_ns);
	writer_bind_text_or_null(st, i++, host[0] ? host : NULL);
	writer_bind_text_or_null(st, i++, kernel[0] ? kernel : NULL);
	writer_bind_text_or_null(st, i++, m->vendor[0] ? m->vendor : NULL);
	sqlite3_bind_int(st, i++, m->family);
	sqlite3_bind_int(st, i++, m->model);
	sqlite3_bind_int(st, i++, m->stepping);
	writer_bind_text_or_null(st, i++, m->name[0] ? m->name : NULL);
	writer_bind_text_or_null(st, i++, m->uarch[0] ? m->uarch : NULL);
	sqlite3_bind_text(st, i++, isa, -1, SQLITE_TRANSIENT);
	writer_bind_pos_or_null(st, i++, m->nominal_hz);
	writer_bind_text_or_null(st, i++, m->nominal_hz_source[0] ? m->nominal_hz_source : NULL);
	writer_bind_text_or_null(st, i++, m->allowed_cpus);
	sqlite3_bind_int(st, i++, m->ncpu_affinity);
	writer_bind_pos_or_null(st, i++, m->cpu_quota);
	sqlite3_bind_double(st, i++, m->ncpu);
	sqlite3_bind_text(st, i++, ri->dtype, -1, SQLITE_TRANSIENT);
	writer_bind_pos_or_null(st, i++, ri->peak_flops);
	writer_bind_text_or_null(st, i++, ri->peak_flops_source);
	writer_bind_pos_or_null(st, i++, ri->peak_bw);
	writer_bind_text_or_null(st, i++, ri->peak_bw_source);
	sqlite3_bind_int(st, i++, ri->target_pid);
	sqlite3_bind_text(st, i++, ri->attach ? "attach" : "launch", -1, SQLITE_STATIC);
	if (ri->interval_ns)
		sqlite3_bind_int64(st, i++, (sqlite3_int64)ri->interval_ns);
	else
		sqlite3_bind_null(st, i++);
	rc = sqlite3_step(st) == SQLITE_DONE ? 0 : writer_fail(w);
	sqlite3_finalize(st);
	return rc;
}

int writer_run_end(struct writer *w, uint64_t end_ns, int exit_status, int exit_signal,
		   uint64_t lost_records, uint64_t marker_records, const char *state)
{
	sqlite3_stmt *st = NULL;
	int rc;

	if (sqlite3_prepare_v2(w->db,
		"UPDATE run SET end_ns = ?, exit_status = ?, exit_signal = ?, lost_records = ?, state = ?, "
		"marker_records = ? WHERE id = 1",
		-1, &st, NULL) != SQLITE_OK)
		return writer_fail(w);
	if (end_ns)
		sqlite3_bind_int64(st, 1, (sqlite3_int64)end_ns);
	if (exit_status >= 0)
		sqlite3_bind_int(st, 2, exit_status);
	if (exit_signal >= 0)
		sqlite3_bind_int(st, 3, exit_signal);
	sqlite3_bind_int64(st, 4, (sqlite3_int64)lost_records);
	sqlite3_bind_text(st, 5, state, -1, SQLITE_TRANSIENT);
	if (marker_records != UINT64_MAX && marker_records <= INT64_MAX)
		sqlite3_bind_int64(st, 6, (sqlite3_int64)marker_records);
	rc = sqlite3_step(st) == SQLITE_DONE ? 0 : writer_fail(w);
	sqlite3_finalize(st);
	return rc;
}

int writer_run_rank(struct writer *w, int rank, int size, int local_rank, int local_size, const char *job,
		    const char *source, int shared)
{
	sqlite3_stmt *st = NULL;
	int rc;

	if (rank < 0)
		return 0;
	if (sqlite3_prepare_v2(w->db, "UPDATE run SET rank = ?, world_size = ?, local_rank = ?, local_size = ?,"
			       " job_id = ?, rank_source = ?, rank_shared = ? WHERE id = 1", -1, &st, NULL) != SQLITE_OK)
		return writer_fail(w);
	sqlite3_bind_int(st, 1, rank);
	if (size >= 0)
		sqlite3_bind_int(st, 2, size);
	if (local_rank >= 0)
		sqlite3_bind_int(st, 3, local_rank);
	if (local_size >= 0)
		sqlite3_bind_int(st, 4, local_size);
	writer_bind_text_or_null(st, 5, job && *job ? job : NULL);
	writer_bind_text_or_null(st, 6, source);
	sqlite3_bind_int(st, 7, shared);
	rc = sqlite3_step(st) == SQLITE_DONE ? 0 : writer_fail(w);
	sqlite3_finalize(st);
	return rc;
}

/* UPDATE run SET ... = @text (@sql names the column). */
static int run_set_text(struct writer *w, const char *sql, const char *text)
{
	sqlite3_stmt *st = NULL;
	int rc;

	if (sqlite3_prepare_v2(w->db, sql, -1, &st, NULL) != SQLITE_OK)
		return writer_fail(w);
	writer_bind_text_or_null(st, 1, text);
	rc = sqlite3_step(st) == SQLITE_DONE ? 0 : writer_fail(w);
	sqlite3_finalize(st);
	return rc;
}

int writer_run_lib_counting(struct writer *w, const char *state)
{
	return run_set_text(w, "UPDATE run SET lib_counting = ? WHERE id = 1", state);
}

/* A count as an SQLite integer (INT64_MAX for the counting library's
 * saturated UINT64_MAX). */
static sqlite3_int64 count64(uint64_t v)
{
	return v > (uint64_t)INT64_MAX ? INT64_MAX : (sqlite3_int64)v;
}

int writer_run_lib(struct writer *w, const uint64_t sum[LIBFLOPS_WORDS], const struct libflops_counter *funcs,
		   unsigned nfuncs)
{
	sqlite3_stmt *st = NULL;
	uint64_t flops = 0;
	int rc;

	if (sqlite3_prepare_v2(w->db, "UPDATE run SET lib_flops = ?, lib_flops_fp64 = ?, lib_flops_fp32 = ?, "
			       "lib_flops_bf16 = ?, lib_flops_fp16 = ?, lib_ops_int8 = ?, lib_calls = ?, "
			       "lib_calls_unknown = ? WHERE id = 1", -1, &st, NULL) != SQLITE_OK)
		return writer_fail(w);
	for (int p = 0; p < LIBFLOPS_NPREC; p++)
		flops = flops + sum[LIBFLOPS_W_FLOPS + p] < flops ? UINT64_MAX : flops + sum[LIBFLOPS_W_FLOPS + p];
	/* only calls of unknown FLOPs: unknown, not 0 (as a step's) */
	if (!(sum[LIBFLOPS_W_UNKNOWN] && !flops)) {
		sqlite3_bind_int64(st, 1, count64(flops));
		for (int p = 0; p < LIBFLOPS_NPREC; p++)
			sqlite3_bind_int64(st, 2 + p, count64(sum[LIBFLOPS_W_FLOPS + p]));
	}
	sqlite3_bind_int64(st, 2 + LIBFLOPS_NPREC, count64(sum[LIBFLOPS_W_CALLS]));
	sqlite3_bind_int64(st, 3 + LIBFLOPS_NPREC, count64(sum[LIBFLOPS_W_UNKNOWN]));
	rc = sqlite3_step(st) == SQLITE_DONE ? 0 : writer_fail(w);
	sqlite3_finalize(st);
	st = NULL;
	if (!rc && sqlite3_prepare_v2(w->db, "INSERT OR REPLACE INTO run_lib_call (function, precision, calls, flops) "
				      "VALUES (?,?,?,?)", -1, &st, NULL) != SQLITE_OK)
		return writer_fail(w);
	for (unsigned f = 0; !rc && f < nfuncs && f < libflops_nfuncs; f++) {
		if (!funcs[f].calls)
			continue;
		sqlite3_bind_text(st, 1, libflops_funcs[f].name, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 2, libflops_prec_name(libflops_funcs[f].prec), -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 3, count64(funcs[f].calls));
		if (libflops_funcs[f].op == LIBFLOPS_UNKNOWN)
			sqlite3_bind_null(st, 4);
		else
			sqlite3_bind_int64(st, 4, count64(funcs[f].flops));
		rc = sqlite3_step(st) == SQLITE_DONE ? 0 : writer_fail(w);
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	return rc;
}

int writer_run_exe(struct writer *w, int functions, long usdt)
{
	sqlite3_stmt *st = NULL;
	int rc;

	if (sqlite3_prepare_v2(w->db, "UPDATE run SET exe_functions = ?, exe_usdt = ? WHERE id = 1", -1, &st,
			       NULL) != SQLITE_OK)
		return writer_fail(w);
	if (functions >= 0)
		sqlite3_bind_int(st, 1, functions);
	if (usdt >= 0)
		sqlite3_bind_int64(st, 2, usdt);
	rc = sqlite3_step(st) == SQLITE_DONE ? 0 : writer_fail(w);
	sqlite3_finalize(st);
	return rc;
}

int writer_run_emulated(struct writer *w, const char *engine)
{
	return run_set_text(w, "UPDATE run SET emulated = ? WHERE id = 1", engine);
}

int writer_peak(struct writer *w, const char *kind, const char *dtype, const char *scope,
		double value, const char *source, const char *detail)
{
	sqlite3_stmt *st = w->st[S_PEAK];
	sqlite3_bind_text(st, 1, kind, -1, SQLITE_TRANSIENT);
	writer_bind_text_or_null(st, 2, dtype);
	sqlite3_bind_text(st, 3, scope, -1, SQLITE_TRANSIENT);
	sqlite3_bind_double(st, 4, value);
	sqlite3_bind_text(st, 5, source, -1, SQLITE_TRANSIENT);
	writer_bind_text_or_null(st, 6, detail);
	return writer_run_stmt(w, st);
}

int writer_peaks(struct writer *w, const struct peaks *pk)
{
	int rc;

	/* the profile's note goes with the peaks it explains: chosen again
	 * for another CPU set, it is said again, once */
	if (sqlite3_exec(w->db, "DELETE FROM peak; DELETE FROM note WHERE kind = 'profile'", NULL, NULL, NULL) !=
	    SQLITE_OK)
		return writer_fail(w);
	for (int i = 0; i < pk->nrows; i++) {
		const struct peak_row *r = &pk->rows[i];
		rc = writer_peak(w, r->kind, r->dtype[0] ? r->dtype : NULL, r->scope, r->value, r->source,
				 r->detail);
		if (rc)
			return rc;
	}
	if (pk->profile_note[0])
		return writer_note(w, "profile", pk->profile_note);
	return 0;
}

int writer_run_peaks(struct writer *w, const struct machine *m, const struct peaks *pk,
		     const char *peak_mode, const char *cpus_source)
{
	sqlite3_stmt *st = NULL;
	int rc, i = 1;

	if (sqlite3_prepare_v2(w->db,
		"UPDATE run SET allowed_cpus = ?, ncpu_affinity = ?, cpu_quota = ?, ncpu = ?, ncores = ?, "
		"clock_hz = ?, peak_flops = ?, peak_flops_source = ?, peak_bw = ?, peak_bw_source = ?, "
		"peak_mode = ?, cpus_source = ? WHERE id = 1", -1, &st, NULL) != SQLITE_OK)
		return writer_fail(w);
	writer_bind_text_or_null(st, i++, m->allowed_cpus[0] ? m->allowed_cpus : NULL);
	sqlite3_bind_int(st, i++, m->ncpu_affinity);
	writer_bind_pos_or_null(st, i++, m->cpu_quota);
	sqlite3_bind_double(st, i++, m->ncpu);
	writer_bind_pos_or_null(st, i++, m->ncores);
	writer_bind_pos_or_null(st, i++, pk->clock_hz);
	writer_bind_pos_or_null(st, i++, pk->flops);
	writer_bind_text_or_null(st, i++, pk->flops > 0 ? pk->flops_source : NULL);
	writer_bind_pos_or_null(st, i++, pk->bw);
	writer_bind_text_or_null(st, i++, pk->bw > 0 ? pk->bw_source : NULL);
	writer_bind_text_or_null(st, i++, peak_mode);
	writer_bind_text_or_null(st, i++, cpus_source);
	rc = sqlite3_step(st) == SQLITE_DONE ? 0 : writer_fail(w);
	sqlite3_finalize(st);
	return rc;
}

int writer_note(struct writer *w, const char *kind, const char *text)
{
	sqlite3_stmt *st = w->st[S_NOTE];
	sqlite3_bind_text(st, 1, kind, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 2, text, -1, SQLITE_TRANSIENT);
	return writer_run_stmt(w, st);
}
