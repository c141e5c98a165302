#include "sampler_impl.h"
#include "asuser.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>



static const char *const stmt_sql[] = {
	"INSERT INTO sample (time_ns, pid, tid, cpu, kind, kernel, stack) VALUES (?,?,?,?,?,?,?)",
	"INSERT INTO switch (time_ns, pid, tid, cpu, out, preempt) VALUES (?,?,?,?,?,?)",
	"INSERT INTO mapping (pid, start, len, pgoff, path, time_ns) VALUES (?,?,?,?,?,?)",
	/* a thread made by fork or clone has its creator's comm until it
	 * sets its own (a COMM record then): ?6, the creating thread */
	"INSERT INTO thread (tid, pid, ppid, comm, start_ns) VALUES (?1, ?2, ?3, coalesce(?4,"
	" (SELECT comm FROM thread WHERE tid = ?6 AND end_ns IS NULL ORDER BY start_ns DESC LIMIT 1)), ?5)",
	"UPDATE thread SET end_ns = ? WHERE tid = ? AND end_ns IS NULL",
	"UPDATE thread SET comm = ? WHERE tid = ? AND end_ns IS NULL",
	"INSERT INTO exec (time_ns, pid, comm) VALUES (?,?,?)",
	"INSERT INTO stack (id, pid, nframes) VALUES (?,?,?)",
	"INSERT INTO stack_frame (stack, depth, ip, kernel) VALUES (?,?,?,?)",
	/* a fork record after the new thread's comm record (the two came
	 * through different CPUs' rings): the row that one made */
	"UPDATE thread SET ppid = ?3, start_ns = ?5 WHERE tid = ?1 AND pid = ?2 AND end_ns IS NULL"
	" AND start_ns IS NULL AND ppid IS NULL",
};

static sqlite3_stmt **stmt_slot(struct sampler *s, int i)
{
	sqlite3_stmt **slots[] = { &s->ins_sample, &s->ins_switch, &s->ins_mapping, &s->ins_thread,
				   &s->upd_exit, &s->upd_comm, &s->ins_exec, &s->ins_stack, &s->ins_frame,
				   &s->upd_fork };
	return slots[i];
}

int step_stmt(struct sampler *s, sqlite3_stmt *st)
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
	struct stat st;
	/* under sudo the user's file (their HOME, or named by them): read as
	 * them (asuser.h), so a link reaches nothing of root's; a FIFO is no
	 * pattern file and must not hang the recorder */
	int fd = asuser_open(asuser_owner(), path, O_RDONLY | O_NONBLOCK | O_CLOEXEC, 0);
	FILE *f = NULL;
	int rc = 0, n = 0;

	if (fd >= 0 && (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))) {
		close(fd);
		fd = -EINVAL;
	}
	if (fd >= 0 && !(f = fdopen(fd, "r")))
		close(fd);
	if (fd < 0)
		errno = -fd;
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
		sqlite3_bind_null(st, 6);
		return step_stmt(s, st);
	case PERF_RECORD_FORK:
		if (s->on_task)
			s->on_task(s->cb_ctx, (pid_t)r.task.pid, (pid_t)r.task.tid, 0);
		st = s->upd_fork;
		sqlite3_bind_int(st, 1, (int)r.task.tid);
		sqlite3_bind_int(st, 2, (int)r.task.pid);
		sqlite3_bind_int(st, 3, (int)r.task.ppid);
		sqlite3_bind_int64(st, 5, (sqlite3_int64)r.task.time);
		rc = step_stmt(s, st);
		if (rc || sqlite3_changes(s->db) > 0)
			return rc;
		st = s->ins_thread;
		sqlite3_bind_int(st, 1, (int)r.task.tid);
		sqlite3_bind_int(st, 2, (int)r.task.pid);
		sqlite3_bind_int(st, 3, (int)r.task.ppid);
		sqlite3_bind_null(st, 4);
		sqlite3_bind_int64(st, 5, (sqlite3_int64)r.task.time);
		sqlite3_bind_int(st, 6, (int)r.task.ptid);
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
		sqlite3_bind_null(st, 6);
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

