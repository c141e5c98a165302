#include "attach.h"
#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MAX_ROUNDS 16 /* thread lists re-read until stable */

struct athread {
	pid_t tid;
	int fds[COUNTERS_MAX];
	int leaders[MRING_MAX_GROUPS];
	int own;                /* fds are ours to close (all but the first thread's) */
};

struct attach {
	pid_t pid;
	int pidfd;
	struct athread *th;
	size_t n, cap;
	pid_t *tids;
	struct counter_reading *mark; /* each thread's groups at attach_mark(), NULL: none */
};

static int has_tid(const struct attach *a, pid_t tid)
{
	for (size_t i = 0; i < a->n; i++)
		if (a->th[i].tid == tid)
			return 1;
	return 0;
}

static struct athread *add_thread(struct attach *a, pid_t tid)
{
	if (array_grow(&a->th, &a->cap, a->n + 1, sizeof(*a->th)))
		return NULL;
	struct athread *t = &a->th[a->n++];
	memset(t, 0, sizeof(*t));
	t->tid = tid;
	for (int i = 0; i < COUNTERS_MAX; i++)
		t->fds[i] = -1;
	for (int g = 0; g < MRING_MAX_GROUPS; g++)
		t->leaders[g] = -1;
	return t;
}

/* The thread ids of @pid now, ascending. */
static int list_tids(pid_t pid, pid_t **out, size_t *n)
{
	char path[64];
	DIR *d;
	struct dirent *e;
	pid_t *v = NULL;
	size_t cap = 0;

	*out = NULL;
	*n = 0;
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return errno == ENOENT ? -ESRCH : -errno;
	while ((e = readdir(d))) {
		int tid;
		if (safe_atoi(e->d_name, &tid) != 0 || tid <= 0)
			continue;
		if (array_grow(&v, &cap, *n + 1, sizeof(*v))) {
			free(v);
			closedir(d);
			return -ENOMEM;
		}
		v[(*n)++] = tid;
	}
	closedir(d);
	*out = v;
	return 0;
}

int attach_open(struct attach **out, pid_t pid, struct counters *cs, char *why, size_t whylen)
{
	struct attach *a;
	pid_t *tids = NULL;
	size_t ntids = 0;
	int rc;

	*out = NULL;
	if (pid == getpid()) {
		strbuf(why, whylen, "-p %d is mfu-record itself", (int)pid);
		return -EINVAL;
	}
	if (kill(pid, 0) != 0 && errno == ESRCH) {
		strbuf(why, whylen, "-p %d: no such process", (int)pid);
		return -ESRCH;
	}
	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	a->pid = pid;
	a->pidfd = -1;
#ifdef SYS_pidfd_open
	a->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
#endif

	/* the main thread first: its group also counts the threads it creates */
	struct athread *t = add_thread(a, pid);
	if (!t) {
		rc = -ENOMEM;
		goto fail;
	}
	int opened = counters_open_task(cs, pid);
	if (opened <= 0) {
		const struct counter *c = &cs->c[0];
		rc = c->err ? -c->err : -EPERM;
		if (rc == -ESRCH)
			strbuf(why, whylen, "-p %d: the process is gone", (int)pid);
		else
			strbuf(why, whylen, "cannot count in process %d: %s%s", (int)pid, c->reason,
			       rc == -EACCES || rc == -EPERM
				       ? " (a process of another user needs root, or CAP_PERFMON and "
					 "CAP_SYS_PTRACE)" : "");
		goto fail;
	}
	for (int i = 0; i < cs->n; i++)
		t->fds[i] = cs->c[i].opened ? cs->c[i].fd : -1;
	for (int g = 0; g < cs->ngroups; g++)
		t->leaders[g] = cs->leader[g] >= 0 ? cs->c[cs->leader[g]].fd : -1;

	/* the other threads, until a pass finds no new one: a thread created
	 * by a counted thread meanwhile is counted through inherit, but one
	 * created by a thread not yet counted must be found here */
	for (int round = 0; round < MAX_ROUNDS; round++) {
		int added = 0;
		rc = list_tids(pid, &tids, &ntids);
		if (rc) {
			strbuf(why, whylen, "-p %d: cannot list its threads: %s", (int)pid, strerror(-rc));
			goto fail;
		}
		for (size_t i = 0; i < ntids; i++) {
			if (has_tid(a, tids[i]))
				continue;
			struct athread *x = add_thread(a, tids[i]);
			if (!x) {
				rc = -ENOMEM;
				goto fail;
			}
			x->own = 1;
			if (counters_open_like(cs, tids[i], x->fds, x->leaders) == -ESRCH)
				a->n--; /* gone meanwhile */
			else
				added++;
		}
		free(tids);
		tids = NULL;
		if (!added)
			break;
	}
	a->tids = malloc(a->n * sizeof(*a->tids));
	if (!a->tids) {
		rc = -ENOMEM;
		goto fail;
	}
	for (size_t i = 0; i < a->n; i++)
		a->tids[i] = a->th[i].tid;
	*out = a;
	return 0;
fail:
	free(tids);
	attach_close(a);
	return rc;
}

const pid_t *attach_tids(const struct attach *a, size_t *n)
{
	*n = a->n;
	return a->tids;
}

int attach_add_sources(const struct attach *a, struct intervals *iv)
{
	for (size_t i = 0; i < a->n; i++) {
		int rc = intervals_add_source(iv, a->th[i].leaders);
		if (rc)
			return rc;
	}
	return 0;
}

void attach_mark(struct attach *a, const struct counters *cs)
{
	free(a->mark);
	a->mark = calloc(a->n ? a->n : 1, sizeof(*a->mark));
	for (size_t i = 0; a->mark && i < a->n; i++)
		for (int g = 0; g < cs->ngroups; g++)
			(void)counters_read_group(cs, g, a->th[i].leaders[g], &a->mark[i]);
}

void attach_read(const struct attach *a, const struct counters *cs, struct counter_reading *r)
{
	memset(r, 0, sizeof(*r));
	r->ngroups = (uint16_t)cs->ngroups;
	for (size_t i = 0; i < a->n; i++) {
		for (int g = 0; g < cs->ngroups; g++) {
			struct counter_reading now = { 0 };
			unsigned o = cs->group_offset[g], nr = cs->group_nr[g];
			if (counters_read_group(cs, g, a->th[i].leaders[g], &now) != 0)
				continue; /* a thread gone: skipped */
			const uint64_t *m = a->mark && a->mark[i].data[o] == nr ? a->mark[i].data : NULL;
			r->data[o] = nr;
			for (unsigned k = 1; k < 3 + nr; k++)
				r->data[o + k] += m && now.data[o + k] >= m[o + k] ? now.data[o + k] - m[o + k]
										  : m ? 0 : now.data[o + k];
		}
	}
}

int attach_pidfd(const struct attach *a)
{
	return a->pidfd;
}

int attach_alive(const struct attach *a)
{
	char path[64], buf[512], *p;

	/* a zombie still answers kill(0): look at its state */
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)a->pid);
	if (read_text_file(path, buf, sizeof(buf)) < 0)
		return 0;
	p = strrchr(buf, ')');
	return p && p[1] == ' ' && p[2] != 'Z' && p[2] != 'X';
}

int attach_owned_by(pid_t pid, uid_t uid, char *why, size_t whylen)
{
	char path[64], buf[4096], *p;
	unsigned long long id[4];
	int rc;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	rc = read_text_file(path, buf, sizeof(buf));
	if (rc == -ENOENT) {
		strbuf(why, whylen, "no process %d", (int)pid);
		return -ESRCH;
	}
	if (rc < 0) {
		strbuf(why, whylen, "cannot read %s: %s", path, strerror(-rc));
		return rc;
	}
	p = strstr(buf, "\nUid:");
	if (!p || sscanf(p + 5, "%llu %llu %llu %llu", &id[0], &id[1], &id[2], &id[3]) != 4) {
		strbuf(why, whylen, "cannot read the user ids of process %d in %s", (int)pid, path);
		return -EIO;
	}
	for (int i = 0; i < 4; i++) {
		if (id[i] != (unsigned long long)uid) {
			strbuf(why, whylen, "process %d is not yours: it runs as uid %llu (%s uid), you are uid %u. "
			       "Under sudo, -p joins only the invoking user's own processes, as perf does for "
			       "them; --as-root joins any process as root", (int)pid, id[i],
			       (const char *[]){ "real", "effective", "saved", "filesystem" }[i], (unsigned)uid);
			return -EPERM;
		}
	}
	return 0;
}

char *attach_command_json(pid_t pid)
{
	char path[64], buf[65536], *argv[1024];
	int n, argc = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return NULL;
	n = (int)fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	if (n <= 0)
		return NULL;
	buf[n] = '\0';
	for (int i = 0; i < n && argc < 1023; i += (int)strlen(buf + i) + 1)
		argv[argc++] = buf + i;
	argv[argc] = NULL;
	return json_argv(argv);
}

void attach_close(struct attach *a)
{
	if (!a)
		return;
	for (size_t i = 0; i < a->n; i++) {
		if (!a->th[i].own)
			continue;
		for (int k = 0; k < COUNTERS_MAX; k++)
			if (a->th[i].fds[k] >= 0)
				close(a->th[i].fds[k]);
	}
	if (a->pidfd >= 0)
		close(a->pidfd);
	free(a->th);
	free(a->tids);
	free(a->mark);
	free(a);
}
