#include "sampler.h"
#include "code_class.h"
#include "embedded.h"
#include "procmaps.h"
#include "perf_ring.h"
#include "symbols.h"
#include "util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <dirent.h>
#include <limits.h>
#include <string.h>
#include <sys/mman.h>

#define MAX_FRAMES 128

struct stack_entry {
	uint64_t hash;
	int64_t id;   /* 0: empty */
	uint32_t pid;
	uint16_t n, nkernel;
	uint64_t *ips;
};

struct sampler {
	sqlite3 *db;
	struct perf_sampler *ps;
	pid_t target;
	unsigned freq;
	sqlite3_stmt *ins_sample, *ins_switch, *ins_mapping, *ins_thread, *upd_exit, *upd_comm,
		*ins_exec, *ins_stack, *ins_frame;
	struct stack_entry *stacks;
	size_t nstacks, cap;
	int64_t next_stack;
	struct code_classes *cc;
	uint64_t samples, switches;
	int error;          /* first error while draining */
	void (*on_task)(void *ctx, pid_t pid, pid_t tid, int exited);
	void (*on_exec_map)(void *ctx, pid_t pid, const char *path);
	void *cb_ctx;
	char note[512];
	char why[256];
};

static const char *const stmt_sql[] = {
	"INSERT INTO sample (time_ns, pid, tid, cpu, kind, kernel, stack) VALUES (?,?,?,?,?,?,?)",
	"INSERT INTO switch (time_ns, pid, tid, cpu, out, preempt) VALUES (?,?,?,?,?,?)",
	"INSERT INTO mapping (pid, start, len, pgoff, path, time_ns) VALUES (?,?,?,?,?,?)",
	"INSERT INTO thread (tid, pid, ppid, comm, start_ns) VALUES (?,?,?,?,?)",
	"UPDATE thread SET end_ns = ? WHERE tid = ? AND end_ns IS NULL",
	"UPDATE thread SET comm = ? WHERE tid = ? AND end_ns IS NULL",
	"INSERT INTO exec (time_ns, pid, comm) VALUES (?,?,?)",
	"INSERT INTO stack (id, pid, nframes) VALUES (?,?,?)",
	"INSERT INTO stack_frame (stack, depth, ip, kernel) VALUES (?,?,?,?)",
};

static sqlite3_stmt **stmt_slot(struct sampler *s, int i)
{
	sqlite3_stmt **slots[] = { &s->ins_sample, &s->ins_switch, &s->ins_mapping, &s->ins_thread,
				   &s->upd_exit, &s->upd_comm, &s->ins_exec, &s->ins_stack, &s->ins_frame };
	return slots[i];
}

static int step_stmt(struct sampler *s, sqlite3_stmt *st)
{
	int rc = sqlite3_step(st);
	sqlite3_reset(st);
	if (rc != SQLITE_DONE) {
		strbuf(s->why, sizeof(s->why), "%s", sqlite3_errmsg(s->db));
		return sqlite3_errcode(s->db) == SQLITE_FULL ? -ENOSPC : -EIO;
	}
	return 0;
}

static int add_pattern(struct sampler *s, const char *src, char *why, size_t whylen)
{
	return code_classes_add(s->cc, CODE_COMPUTE, src, why, whylen);
}

static int load_pattern_file(struct sampler *s, const char *path, int must_exist, char *why, size_t whylen)
{
	char line[1024];
	FILE *f = fopen(path, "r");
	int rc = 0, n = 0;

	if (!f) {
		/* the default file is optional: missing, or not ours to read
		 * (HOME still pointing at root's under setpriv or su) */
		if (!must_exist && (errno == ENOENT || errno == EACCES || errno == ENOTDIR))
			return 0;
		strbuf(why, whylen, "cannot read compute patterns from %s: %s", path, strerror(errno));
		return -errno;
	}
	while (!rc && fgets(line, sizeof(line), f)) {
		n++;
		line[strcspn(line, "\r\n")] = '\0';
		char *p = line;
		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p || *p == '#')
			continue;
		rc = add_pattern(s, p, why, whylen);
		if (rc == -EINVAL) {
			char msg[300];
			strbuf(msg, sizeof(msg), "%s:%d: %s", path, n, why);
			strbuf(why, whylen, "%s", msg);
		}
	}
	fclose(f);
	return rc;
}

int sampler_open(struct sampler **out, sqlite3 *db, pid_t pid, const struct sampler_opts *o,
		 char *why, size_t whylen)
{
	struct sampler *s = calloc(1, sizeof(*s));
	struct perf_sampler_opts po = PERF_SAMPLER_OPTS_DEFAULT;
	int rc;

	*out = NULL;
	if (!s)
		return -ENOMEM;
	s->db = db;
	s->target = pid;
	s->freq = o->freq;
	s->next_stack = 1;
	s->on_task = o->on_task;
	s->on_exec_map = o->on_exec_map;
	s->cb_ctx = o->cb_ctx;
	rc = code_classes_new(&s->cc, why, whylen);
	if (rc)
		goto fail;
	for (int i = 0; i < o->ncompute; i++) {
		rc = add_pattern(s, o->compute[i], why, whylen);
		if (rc)
			goto fail;
	}
	for (int i = 0; i < o->ndispatch; i++) {
		rc = code_classes_add(s->cc, CODE_DISPATCH, o->dispatch[i], why, whylen);
		if (rc)
			goto fail;
	}
	if (o->compute_file) {
		rc = load_pattern_file(s, o->compute_file, 1, why, whylen);
	} else {
		char path[512];
		const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
		rc = 0;
		if (xdg && *xdg)
			strbuf(path, sizeof(path), "%s/mfu/compute", xdg);
		else if (home && *home)
			strbuf(path, sizeof(path), "%s/.config/mfu/compute", home);
		else
			path[0] = '\0';
		if (path[0])
			rc = load_pattern_file(s, path, 0, why, whylen);
	}
	if (rc)
		goto fail;
	for (size_t i = 0; i < ARRAY_SIZE(stmt_sql); i++) {
		if (sqlite3_prepare_v3(db, stmt_sql[i], -1, SQLITE_PREPARE_PERSISTENT, stmt_slot(s, (int)i), NULL) !=
		    SQLITE_OK) {
			strbuf(why, whylen, "cannot prepare the sampling statements: %s", sqlite3_errmsg(db));
			rc = -EIO;
			goto fail;
		}
	}
	s->cap = 1024;
	s->stacks = calloc(s->cap, sizeof(*s->stacks));
	if (!s->stacks) {
		rc = -ENOMEM;
		goto fail;
	}
	po.freq = o->freq;
	po.enable_on_exec = o->ntids == 0;
	if (o->ntids)
		rc = perf_ring_open_sampling_tids(&s->ps, o->tids, o->ntids, &po, why, whylen);
	else
		rc = perf_ring_open_sampling(&s->ps, pid, &po, why, whylen);
	if (rc)
		goto fail;
	if (perf_ring_note(s->ps)[0])
		strbuf(s->note, sizeof(s->note), "%s", perf_ring_note(s->ps));
	*out = s;
	return 0;
fail:
	sampler_close(s);
	return rc;
}

void sampler_close(struct sampler *s)
{
	if (!s)
		return;
	perf_ring_close(s->ps);
	for (size_t i = 0; i < ARRAY_SIZE(stmt_sql); i++)
		sqlite3_finalize(*stmt_slot(s, (int)i));
	for (size_t i = 0; s->stacks && i < s->cap; i++)
		free(s->stacks[i].ips);
	free(s->stacks);
	code_classes_free(s->cc);
	free(s);
}

const char *sampler_note(const struct sampler *s)
{
	return s ? s->note : "";
}

static uint64_t hash_frames(uint32_t pid, const uint64_t *ips, unsigned n, unsigned nk)
{
	uint64_t h = 1469598103934665603ull ^ pid ^ ((uint64_t)nk << 32);
	for (unsigned i = 0; i < n; i++) {
		h ^= ips[i];
		h *= 1099511628211ull;
		h ^= h >> 29;
	}
	return h ? h : 1;
}

static int stacks_grow(struct sampler *s)
{
	size_t ncap = s->cap * 2;
	struct stack_entry *nt = calloc(ncap, sizeof(*nt));
	if (!nt)
		return -ENOMEM;
	for (size_t i = 0; i < s->cap; i++) {
		if (!s->stacks[i].id)
			continue;
		size_t h = s->stacks[i].hash & (ncap - 1);
		while (nt[h].id)
			h = (h + 1) & (ncap - 1);
		nt[h] = s->stacks[i];
	}
	free(s->stacks);
	s->stacks = nt;
	s->cap = ncap;
	return 0;
}

/* The id of this callchain (kernel frames first), storing it when new. */
static int64_t intern_stack(struct sampler *s, uint32_t pid, const uint64_t *ips, unsigned n, unsigned nk)
{
	uint64_t h = hash_frames(pid, ips, n, nk);
	size_t i;

	if ((s->nstacks + 1) * 2 > s->cap && stacks_grow(s))
		return -ENOMEM;
	for (i = h & (s->cap - 1); s->stacks[i].id; i = (i + 1) & (s->cap - 1)) {
		struct stack_entry *e = &s->stacks[i];
		if (e->hash == h && e->pid == pid && e->n == n && e->nkernel == nk &&
		    memcmp(e->ips, ips, n * sizeof(*ips)) == 0)
			return e->id;
	}
	struct stack_entry *e = &s->stacks[i];
	e->ips = malloc((n ? n : 1) * sizeof(*ips));
	if (!e->ips)
		return -ENOMEM;
	memcpy(e->ips, ips, n * sizeof(*ips));
	e->hash = h;
	e->pid = pid;
	e->n = (uint16_t)n;
	e->nkernel = (uint16_t)nk;
	e->id = s->next_stack++;
	s->nstacks++;

	sqlite3_bind_int64(s->ins_stack, 1, e->id);
	sqlite3_bind_int64(s->ins_stack, 2, pid);
	sqlite3_bind_int(s->ins_stack, 3, (int)n);
	int rc = step_stmt(s, s->ins_stack);
	for (unsigned d = 0; !rc && d < n; d++) {
		sqlite3_bind_int64(s->ins_frame, 1, e->id);
		sqlite3_bind_int(s->ins_frame, 2, (int)d);
		sqlite3_bind_int64(s->ins_frame, 3, (sqlite3_int64)ips[d]);
		sqlite3_bind_int(s->ins_frame, 4, d < nk);
		rc = step_stmt(s, s->ins_frame);
	}
	return rc ? rc : e->id;
}

static int on_sample(struct sampler *s, const struct perf_rec *r, int cpu)
{
	uint64_t ips[MAX_FRAMES];
	unsigned n = 0, nk = 0;
	const struct perf_callchain *cc = &r->sample.callchain;
	enum perf_ring_kind kind = perf_ring_id_kind(s->ps, cpu, r->id);
	int64_t stack = 0;

	for (uint64_t i = 0; i < cc->nkernel && n < MAX_FRAMES; i++)
		ips[n++] = cc->kernel[i];
	nk = n;
	for (uint64_t i = 0; i < cc->nuser && n < MAX_FRAMES; i++)
		ips[n++] = cc->user[i];
	if (n == 0 && r->sample.ip) {
		ips[n++] = r->sample.ip;
		nk = r->sample.user_mode ? 0 : 1;
	}
	if (n) {
		stack = intern_stack(s, r->pid, ips, n, nk);
		if (stack < 0)
			return (int)stack;
	}
	sqlite3_stmt *st = s->ins_sample;
	sqlite3_bind_int64(st, 1, (sqlite3_int64)r->time);
	sqlite3_bind_int(st, 2, (int)r->pid);
	sqlite3_bind_int(st, 3, (int)r->tid);
	sqlite3_bind_int(st, 4, cpu);
	sqlite3_bind_int(st, 5, kind == PERF_RING_SWITCH_OUT);
	sqlite3_bind_int(st, 6, !r->sample.user_mode);
	if (stack)
		sqlite3_bind_int64(st, 7, stack);
	else
		sqlite3_bind_null(st, 7);
	s->samples += kind != PERF_RING_SWITCH_OUT;
	return step_stmt(s, st);
}

static int on_record(void *ctx, const struct perf_event_header *hdr, const void *rec, int cpu)
{
	struct sampler *s = ctx;
	struct perf_rec r;
	sqlite3_stmt *st;
	int rc = perf_record_parse(hdr, rec, hdr->size - sizeof(*hdr), PERF_RING_SAMPLE_TYPE, 1, &r);

	if (rc)
		return 0; /* a type we do not use, or malformed: skip it */
	switch (r.type) {
	case PERF_RECORD_SAMPLE:
		return on_sample(s, &r, cpu);
	case PERF_RECORD_SWITCH:
		st = s->ins_switch;
		sqlite3_bind_int64(st, 1, (sqlite3_int64)r.time);
		sqlite3_bind_int(st, 2, (int)r.pid);
		sqlite3_bind_int(st, 3, (int)r.tid);
		sqlite3_bind_int(st, 4, cpu);
		sqlite3_bind_int(st, 5, r.sw.out);
		sqlite3_bind_int(st, 6, r.sw.out && r.sw.preempt);
		s->switches++;
		return step_stmt(s, st);
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		if (r.type == PERF_RECORD_MMAP2 && !(r.mmap.prot & PROT_EXEC))
			return 0;
		if (s->on_exec_map)
			s->on_exec_map(s->cb_ctx, (pid_t)r.mmap.pid, r.mmap.filename);
		st = s->ins_mapping;
		sqlite3_bind_int(st, 1, (int)r.mmap.pid);
		sqlite3_bind_int64(st, 2, (sqlite3_int64)r.mmap.addr);
		sqlite3_bind_int64(st, 3, (sqlite3_int64)r.mmap.len);
		sqlite3_bind_int64(st, 4, (sqlite3_int64)r.mmap.pgoff);
		sqlite3_bind_text(st, 5, r.mmap.filename, -1, SQLITE_TRANSIENT);
		if (r.has & PERF_REC_HAS_TIME)
			sqlite3_bind_int64(st, 6, (sqlite3_int64)r.time);
		else
			sqlite3_bind_null(st, 6);
		return step_stmt(s, st);
	case PERF_RECORD_COMM:
		if (r.comm.exec) {
			st = s->ins_exec;
			sqlite3_bind_int64(st, 1, (sqlite3_int64)r.time);
			sqlite3_bind_int(st, 2, (int)r.comm.pid);
			sqlite3_bind_text(st, 3, r.comm.comm, -1, SQLITE_TRANSIENT);
			rc = step_stmt(s, st);
			if (rc)
				return rc;
		}
		st = s->upd_comm;
		sqlite3_bind_text(st, 1, r.comm.comm, -1, SQLITE_TRANSIENT);
		sqlite3_bind_int(st, 2, (int)r.comm.tid);
		rc = step_stmt(s, st);
		if (rc || sqlite3_changes(s->db) > 0)
			return rc;
		/* the first sight of a thread that no fork record announced */
		st = s->ins_thread;
		sqlite3_bind_int(st, 1, (int)r.comm.tid);
		sqlite3_bind_int(st, 2, (int)r.comm.pid);
		sqlite3_bind_null(st, 3);
		sqlite3_bind_text(st, 4, r.comm.comm, -1, SQLITE_TRANSIENT);
		sqlite3_bind_null(st, 5);
		return step_stmt(s, st);
	case PERF_RECORD_FORK:
		if (s->on_task)
			s->on_task(s->cb_ctx, (pid_t)r.task.pid, (pid_t)r.task.tid, 0);
		st = s->ins_thread;
		sqlite3_bind_int(st, 1, (int)r.task.tid);
		sqlite3_bind_int(st, 2, (int)r.task.pid);
		sqlite3_bind_int(st, 3, (int)r.task.ppid);
		sqlite3_bind_null(st, 4);
		sqlite3_bind_int64(st, 5, (sqlite3_int64)r.task.time);
		return step_stmt(s, st);
	case PERF_RECORD_EXIT:
		if (s->on_task)
			s->on_task(s->cb_ctx, (pid_t)r.task.pid, (pid_t)r.task.tid, 1);
		st = s->upd_exit;
		sqlite3_bind_int64(st, 1, (sqlite3_int64)r.task.time);
		sqlite3_bind_int(st, 2, (int)r.task.tid);
		return step_stmt(s, st);
	default:
		return 0;
	}
}

struct existing_maps {
	struct sampler *s;
	pid_t pid;
	uint64_t time_ns;
};

/* An executable file mapping of an attached process, as a mapping row;
 * anonymous ones (JIT code, trampolines) stay unknown. */
static int store_mapping(void *ctx, const struct procmaps_entry *e)
{
	struct existing_maps *em = ctx;
	sqlite3_stmt *st = em->s->ins_mapping;

	if (!e->exec || !e->path[0])
		return 0;
	sqlite3_bind_int(st, 1, (int)em->pid);
	sqlite3_bind_int64(st, 2, (sqlite3_int64)e->start);
	sqlite3_bind_int64(st, 3, (sqlite3_int64)(e->end - e->start));
	sqlite3_bind_int64(st, 4, (sqlite3_int64)e->pgoff);
	sqlite3_bind_text(st, 5, e->path, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 6, (sqlite3_int64)em->time_ns);
	return step_stmt(em->s, st);
}

int sampler_existing(struct sampler *s, pid_t pid, uint64_t time_ns)
{
	char path[64], comm[64];
	struct existing_maps em;
	DIR *d;
	struct dirent *e;
	int rc = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return -errno;
	while (!rc && (e = readdir(d))) {
		int tid;
		if (safe_atoi(e->d_name, &tid) != 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", (int)pid, tid);
		if (read_sysfs(path, comm, sizeof(comm)) < 0)
			continue; /* gone meanwhile */
		sqlite3_stmt *st = s->ins_thread;
		sqlite3_bind_int(st, 1, tid);
		sqlite3_bind_int(st, 2, (int)pid);
		sqlite3_bind_null(st, 3);
		sqlite3_bind_text(st, 4, comm, -1, SQLITE_TRANSIENT);
		sqlite3_bind_null(st, 5);
		rc = step_stmt(s, st);
	}
	closedir(d);
	if (rc)
		return rc;
	em.s = s;
	em.pid = pid;
	em.time_ns = time_ns;
	rc = procmaps_each(pid, store_mapping, &em);
	return rc == -ESRCH ? -ENOENT : rc;
}

int sampler_drain(struct sampler *s)
{
	if (s->error)
		return s->error;
	int n = perf_ring_drain(s->ps, on_record, s);
	if (n < 0 && n != -EPROTO)
		s->error = n;
	return n;
}

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
		/* frames above the innermost are return addresses: resolve the
		 * call instruction (ip - 1), as perf does, or a call at the end of
		 * a function would be named after the next one */
		"SELECT DISTINCT st.pid, f.ip - (f.depth > 0) FROM stack_frame f JOIN stack st ON st.id = f.stack",
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
		"    WHERE st.id = stack_frame.stack AND t.pid = st.pid AND t.ip = stack_frame.ip - (stack_frame.depth > 0));"
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
