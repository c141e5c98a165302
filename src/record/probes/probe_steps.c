#include "probe_steps_impl.h"







/* ---- parsing ---- */

/* py:NAME: dotted Python names, matched by the Python hook (py_hook.h) */
static int parse_python(const char *spec, struct probe_request *out, char *why, size_t whylen)
{
	const char *s = spec + 3;
	size_t n = strlen(s);
	int ok = n > 0 && s[0] != '.' && s[n - 1] != '.' && !strstr(s, "..");

	for (const char *c = s; ok && *c; c++)
		ok = isalnum((unsigned char)*c) || *c == '_' || *c == '.' || (unsigned char)*c >= 0x80;
	if (strchr(s, ',')) {
		strbuf(why, whylen, "py: takes one function, whose every call is a step (or phase): the pair "
		       "form A,B (a step from A's entry to B's) is for functions of the program or its libraries "
		       "and sdt: probes");
		return -EINVAL;
	}
	if (!ok) {
		strbuf(why, whylen, "expected py:[MODULE.]FUNCTION, dotted Python names (e.g. "
		       "py:train.train_step or py:model.Net.forward)");
		return -EINVAL;
	}
	if (n >= sizeof(out->py_name)) {
		strbuf(why, whylen, "name too long (at most %zu bytes)", sizeof(out->py_name) - 1);
		return -EINVAL;
	}
	memcpy(out->py_name, s, n + 1);
	out->python = 1;
	return 0;
}

int probe_steps_parse(const char *arg, int phase, struct probe_request *out, char *why, size_t whylen)
{
	const char *spec = arg;

	memset(out, 0, sizeof(*out));
	out->phase = phase;
	if (phase) {
		const char *eq = strchr(arg, '=');
		if (eq && strncmp(eq + 1, "py:", 3) == 0) {
			/* the name is checked as for any spec, with a placeholder one */
			char probe[MRING_NAME_MAX + 8];
			struct probe_spec unused;
			if ((size_t)(eq - arg) >= MRING_NAME_MAX) {
				strbuf(why, whylen, "phase name too long in '%s' (at most %d bytes)", arg,
				       MRING_NAME_MAX - 1);
				return -EINVAL;
			}
			snprintf(probe, sizeof(probe), "%.*s=f", (int)(eq - arg), arg);
			int rc = probes_parse_phase(probe, out->name, sizeof(out->name), &unused, why, whylen);
			if (rc)
				return rc;
			spec = eq + 1;
		} else {
			int rc = probes_parse_phase(arg, out->name, sizeof(out->name), &out->spec, why, whylen);
			if (rc)
				return rc;
			spec = eq + 1;
			return strbuf(out->text, sizeof(out->text), "%s", spec) ? -EINVAL : 0;
		}
	}
	if (strbuf(out->text, sizeof(out->text), "%s", spec)) {
		strbuf(why, whylen, "spec too long");
		return -EINVAL;
	}
	if (strncmp(spec, "py:", 3) == 0)
		return parse_python(spec, out, why, whylen);
	return probes_parse_spec(spec, &out->spec, why, whylen);
}

/* ---- lifecycle ---- */

static void add_point(struct probe_steps *ps, int req, enum boundary b, const struct probe_point *pp)
{
	struct point *p = &ps->pt[ps->npt++];
	memset(p, 0, sizeof(*p));
	p->req = req;
	p->boundary = b;
	p->pp = *pp;
}

int probe_steps_new(struct probe_steps **out, const struct probe_request *req, int nreq,
		    const struct probe_steps_sink *sink)
{
	struct probe_steps *ps;

	*out = NULL;
	if (nreq < 0 || nreq > PROBE_STEPS_MAX_REQUESTS)
		return -EINVAL;
	ps = calloc(1, sizeof(*ps));
	if (!ps)
		return -ENOMEM;
	ps->nreq = nreq;
	ps->sink = *sink;
	for (int r = 0; r < nreq; r++) {
		ps->req[r] = req[r];
		const struct probe_request *q = &ps->req[r];
		if (q->python) {
			free(ps);
			return -EINVAL; /* the Python hook's (py_hook.h), not uprobes */
		}
		if (q->spec.kind == PROBE_SPEC_EACH) {
			add_point(ps, r, BOUND_EACH, &q->spec.begin);
		} else {
			add_point(ps, r, BOUND_BEGIN, &q->spec.begin);
			add_point(ps, r, BOUND_END, &q->spec.end);
		}
	}
	*out = ps;
	return 0;
}

void thread_close(struct pthread *t)
{
	for (size_t i = 0; i < t->nfds; i++)
		close(t->fds[i]);
	t->nfds = 0;
	perf_ring_close(t->ring);
	t->ring = NULL;
	probes_unmap_ring(t->map, t->maplen);
	t->map = NULL;
	t->ring_fd = -1;
}

void probe_steps_close(struct probe_steps *ps)
{
	if (!ps)
		return;
	for (size_t i = 0; i < ps->nth; i++) {
		ps->lost += ps->th[i]->ring ? perf_ring_lost(ps->th[i]->ring, -1) : 0;
		thread_close(ps->th[i]);
	}
	ps->closed = 1;
}

void probe_steps_free(struct probe_steps *ps)
{
	if (!ps)
		return;
	probe_steps_close(ps);
	for (size_t i = 0; i < ps->nth; i++) {
		free(ps->th[i]->fds);
		free(ps->th[i]);
	}
	free(ps->th);
	for (int p = 0; p < ps->npt; p++)
		free(ps->pt[p].sites);
	for (size_t i = 0; i < ps->nseen; i++)
		free(ps->seen[i]);
	free(ps->seen);
	idmap_fini(&ps->ev);
	free(ps->hits);
	free(ps);
}

unsigned long long probe_steps_hits(const struct probe_steps *ps)
{
	return ps ? ps->total_hits : 0;
}

const char *probe_steps_note(const struct probe_steps *ps)
{
	return ps ? ps->note : "";
}

/* ---- resolution ---- */

int probe_steps_program(const char *argv0, char *buf, size_t len)
{
	char path[PATH_MAX], line[PATH_MAX];
	int rc;

	rc = path_lookup(argv0, path, sizeof(path));
	if (rc)
		return rc;
	/* a script runs its interpreter: that is where the probes are (read
	 * as the user who runs it, asuser.h) */
	int fd = asuser_open(asuser_owner(), path, O_RDONLY | O_NONBLOCK | O_CLOEXEC, 0);
	FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;
	if (fd >= 0 && !f)
		close(fd);
	if (f && fgets(line, sizeof(line), f) && line[0] == '#' && line[1] == '!') {
		char *interp = line + 2, *arg;
		interp += strspn(interp, " \t");
		interp[strcspn(interp, "\r\n")] = '\0';
		arg = interp + strcspn(interp, " \t");
		if (*arg) {
			*arg++ = '\0';
			arg += strspn(arg, " \t");
			arg[strcspn(arg, " \t")] = '\0';
		}
		fclose(f);
		const char *base = strrchr(interp, '/');
		if (base && strcmp(base + 1, "env") == 0 && *arg && strcmp(arg, "-S") != 0)
			return probe_steps_program(arg, buf, len);
		return probe_steps_program(interp, buf, len);
	}
	if (f)
		fclose(f);
	return strbuf(buf, len, "%s", path) ? -ENAMETOOLONG : 0;
}

static int seen_has(const struct probe_steps *ps, const char *path)
{
	for (size_t i = 0; i < ps->nseen; i++)
		if (strcmp(ps->seen[i], path) == 0)
			return 1;
	return 0;
}

static int seen_add(struct probe_steps *ps, const char *path)
{
	if (seen_has(ps, path))
		return 0;
	if (array_grow(&ps->seen, &ps->capseen, ps->nseen + 1, sizeof(*ps->seen)))
		return -ENOMEM;
	ps->seen[ps->nseen] = strdup(path);
	if (!ps->seen[ps->nseen])
		return -ENOMEM;
	ps->nseen++;
	return 0;
}

static int add_sites(struct probe_steps *ps, int pi, const struct probe_site *sites, size_t n, char *why,
		     size_t whylen)
{
	struct point *p = &ps->pt[pi];

	for (size_t i = 0; i < n; i++) {
		if (array_grow(&p->sites, &p->capsites, p->nsites + 1, sizeof(*p->sites)))
			return -ENOMEM;
		p->sites[p->nsites++] = sites[i];
	}
	return 0;
}

void point_text(const struct point *p, char *buf, size_t len)
{
	probes_point_format(&p->pp, buf, len);
}

/* "did you mean ...?" for a function @name that is in none of the files
 * seen so far (the program and its libraries), from their symbol tables;
 * "" when nothing is close. */
static void near_functions(const struct probe_steps *ps, const char *name, char *hint, size_t len)
{
	struct suggest sg;

	hint[0] = '\0';
	if (elf_version(EV_CURRENT) == EV_NONE)
		return;
	suggest_init(&sg, name);
	for (size_t i = 0; i < ps->nseen; i++) {
		int fd = asuser_open(asuser_owner(), ps->seen[i], O_RDONLY | O_NONBLOCK | O_CLOEXEC, 0);
		Elf *e = fd >= 0 ? elf_begin(fd, ELF_C_READ, NULL) : NULL;
		Elf_Scn *scn = NULL;

		while (e && (scn = elf_nextscn(e, scn))) {
			GElf_Shdr sh;
			Elf_Data *data;

			if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) ||
			    !sh.sh_entsize || !(data = elf_getdata(scn, NULL)))
				continue;
			for (size_t k = 0; k < sh.sh_size / sh.sh_entsize; k++) {
				GElf_Sym sym;
				const char *sn;

				if (gelf_getsym(data, (int)k, &sym) && GELF_ST_TYPE(sym.st_info) == STT_FUNC &&
				    sym.st_shndx != SHN_UNDEF && (sn = elf_strptr(e, sh.sh_link, sym.st_name)) && *sn)
					suggest_add(&sg, sn);
			}
		}
		elf_end(e);
		if (fd >= 0)
			close(fd);
	}
	suggest_format(&sg, hint, len);
}

static int resolve(struct probe_steps *ps, const char *exe, pid_t pid, char *warn, size_t warnlen, char *why,
		   size_t whylen)
{
	size_t wlen = 0;

	if (warnlen)
		warn[0] = '\0';
	for (int i = 0; i < ps->npt; i++) {
		struct point *p = &ps->pt[i];
		struct probe_site *sites = NULL;
		size_t n = 0;
		char msg[1024], text[PROBE_OBJECT_MAX + 64];
		int rc = exe ? probes_find_in_needed(exe, NULL, &p->pp, &sites, &n, msg, sizeof(msg))
			     : probes_find_in_maps(pid, &p->pp, &sites, &n, msg, sizeof(msg));

		point_text(p, text, sizeof(text));
		if (rc == -ENOENT && !p->pp.object[0]) {
			/* A bare name that is nowhere now is a typo far more often
			 * than a function of a library loaded later: refused, like
			 * an unknown event. Naming the library (LIB:FUNC) is the
			 * way to wait for a dlopen. */
			char hint[512] = "";
			const char *opt = ps->req[p->req].phase ? "--phase" : "--step";
			int func = p->pp.kind == PROBE_POINT_FUNC;

			if (func)
				near_functions(ps, p->pp.name, hint, sizeof(hint));
			strbuf(why, whylen, "%s '%s': %s%s%s%s %s of a library the program loads later with "
			       "dlopen is probed when named with it: LIB:%s (e.g. libfoo.so:%s%s%s%s)", opt,
			       ps->req[p->req].text, msg, hint[0] ? "; " : "", hint, hint[0] ? " A" : "; a",
			       func ? "function" : "probe",
			       func ? "FUNC" : "sdt:PROVIDER:NAME", func ? "" : "sdt:", func ? "" : p->pp.provider,
			       func ? "" : ":", p->pp.name);
			free(sites);
			return -ENOENT;
		}
		if (rc == -ENOENT) {
			strbuf(p->detail, sizeof(p->detail), "%s", msg);
			/* once per option: its entry and return are the same function */
			int said = 0;
			for (int k = 0; k < i; k++)
				said |= ps->pt[k].req == p->req && !ps->pt[k].nsites;
			if (!said && wlen < warnlen)
				wlen += (size_t)snprintf(warn + wlen, warnlen - wlen, "%s%s '%s': %s",
							 wlen ? "\n" : "", ps->req[p->req].phase ? "--phase" : "--step",
							 ps->req[p->req].text, msg);
			continue;
		}
		if (rc) {
			strbuf(why, whylen, "%s: %s", text, msg);
			free(sites);
			return rc;
		}
		rc = add_sites(ps, i, sites, n, msg, sizeof(msg));
		free(sites);
		if (rc) {
			strbuf(why, whylen, "%s: %s", text, rc == -ENOMEM ? "out of memory" : msg);
			return rc;
		}
	}
	return 0;
}

int probe_steps_resolve_exe(struct probe_steps *ps, const char *exe, char *warn, size_t warnlen, char *why,
			    size_t whylen)
{
	char **paths = NULL;
	size_t n = 0;
	int rc = probes_needed_objects(exe, NULL, &paths, &n, why, whylen);

	if (rc)
		return rc;
	for (size_t i = 0; i < n && !rc; i++)
		rc = seen_add(ps, paths[i]);
	probes_paths_free(paths, n);
	return rc ? rc : resolve(ps, exe, 0, warn, warnlen, why, whylen);
}

static int add_exec_file(void *ctx, const struct procmaps_entry *e)
{
	return e->exec && e->path[0] == '/' ? seen_add(ctx, e->path) : 0;
}

int probe_steps_resolve_pid(struct probe_steps *ps, pid_t pid, char *warn, size_t warnlen, char *why,
			    size_t whylen)
{
	int rc = procmaps_each(pid, add_exec_file, ps);

	if (rc == -ESRCH || rc == -EACCES || rc == -EPERM || rc == -EINVAL) {
		strbuf(why, whylen, "cannot read /proc/%d/maps: %s", (int)pid,
		       strerror(rc == -ESRCH ? ENOENT : -rc));
		return rc == -ESRCH ? -ENOENT : rc;
	}
	return rc ? rc : resolve(ps, NULL, pid, warn, warnlen, why, whylen);
}

/* ---- opening ---- */

static struct pthread *thread_find(struct probe_steps *ps, pid_t tid)
{
	for (size_t i = 0; i < ps->nth; i++)
		if (ps->th[i]->tid == tid && !ps->th[i]->exited)
			return ps->th[i];
	return NULL;
}


static int event_add(struct probe_steps *ps, uint64_t id, int point, int site)
{
	if (site >= 1 << SITE_BITS)
		return -E2BIG;
	return idmap_put(&ps->ev, id, point << SITE_BITS | site);
}

/* Open the sites of every point not yet opened on @t. */
static int thread_open_sites(struct probe_steps *ps, struct pthread *t, char *why, size_t whylen)
{
	for (int pi = 0; pi < ps->npt; pi++) {
		struct point *p = &ps->pt[pi];
		int first_return = p->boundary == BOUND_END && p->pp.at_return && t->nopen[pi] == 0;
		int opened = 0;

		for (; t->nopen[pi] < p->nsites; t->nopen[pi]++) {
			const struct probe_site *site = &p->sites[t->nopen[pi]];
			char msg[512];
			uint64_t id;
			int fd, rc;

			rc = probes_open(site, t->tid, p->boundary == BOUND_END && p->pp.at_return, &fd, msg,
					 sizeof(msg));
			if (rc == -ESRCH) {
				t->exited = 1;
				return 0;
			}
			if (rc == -EPERM || rc == -ENODEV) {
				strbuf(why, whylen, "%s", msg);
				return rc;
			}
			if (rc) {
				if (!p->failed)
					strbuf(p->detail, sizeof(p->detail), "%s", msg);
				p->failed = 1;
				continue;
			}
			if (array_grow(&t->fds, &t->capfds, t->nfds + 1, sizeof(*t->fds))) {
				close(fd);
				return -ENOMEM;
			}
			t->fds[t->nfds++] = fd;
			opened++;
			if (t->ring_fd < 0) {
				int cpu = 0;
				rc = probes_map_ring(fd, RING_PAGES, &t->map, &t->maplen);
				if (!rc)
					rc = perf_ring_open_maps(&t->ring, &t->map, &cpu, 1, t->maplen);
				if (rc) {
					strbuf(why, whylen, "cannot map the ring of a uprobe on thread %d: %s (raise "
					       "/proc/sys/kernel/perf_event_mlock_kb or RLIMIT_MEMLOCK)", (int)t->tid,
					       strerror(-rc));
					return rc;
				}
				t->ring_fd = fd;
			} else if ((rc = probes_share_ring(fd, t->ring_fd)) != 0) {
				strbuf(why, whylen, "cannot share a uprobe ring on thread %d: %s", (int)t->tid,
				       strerror(-rc));
				return rc;
			}
			if ((rc = probes_event_id(fd, &id)) != 0 || (rc = event_add(ps, id, pi, (int)t->nopen[pi])) != 0) {
				strbuf(why, whylen, "cannot register a uprobe event: %s", strerror(-rc));
				return rc;
			}
		}
		/* The entry probe went in first: a call the thread entered
		 * before its return probe was in place returns unseen, and its
		 * begin would leave the request's depth one too high for the
		 * rest of the run (every later step nested in it). Such begins
		 * are dropped (probe_steps_drain.c). A return probe that could
		 * not be opened on the thread (the point's detail says why)
		 * sees none of its ends: all of its begins are dropped, or its
		 * first would stay open, every later one nested in it. */
		if (first_return && t->nopen[pi] > 0)
			t->armed[p->req] = opened ? now_ns() : UINT64_MAX;
	}
	return 0;
}

int probe_steps_add_thread(struct probe_steps *ps, pid_t pid, pid_t tid, char *why, size_t whylen)
{
	struct pthread *t;

	if (ps->closed || thread_find(ps, tid))
		return 0;
	if (array_grow(&ps->th, &ps->capth, ps->nth + 1, sizeof(*ps->th)))
		return -ENOMEM;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->pid = pid;
	t->tid = tid;
	t->ring_fd = -1;
	ps->th[ps->nth++] = t;
	return thread_open_sites(ps, t, why, whylen);
}

void probe_steps_thread_exit(struct probe_steps *ps, pid_t tid)
{
	struct pthread *t = ps ? thread_find(ps, tid) : NULL;
	if (t)
		t->exited = 2; /* drain, then close */
}

void probe_steps_on_map(struct probe_steps *ps, pid_t pid, const char *path)
{
	if (!ps || ps->closed || path[0] != '/' || seen_has(ps, path))
		return;
	if (seen_add(ps, path))
		return;
	int added = 0;
	for (int i = 0; i < ps->npt; i++) {
		struct point *p = &ps->pt[i];
		struct probe_site *sites = NULL;
		size_t n = 0;
		char msg[512];

		/* a function is bound once, like the dynamic linker does; USDT
		 * probes are collected from every file */
		if (p->pp.kind == PROBE_POINT_FUNC && p->nsites)
			continue;
		if (!probes_object_matches(&p->pp, path))
			continue;
		int rc = probes_resolve_point(path, &p->pp, &sites, &n, msg, sizeof(msg));
		if (rc == 0)
			rc = add_sites(ps, i, sites, n, msg, sizeof(msg));
		free(sites);
		if (rc == 0 && n) {
			added = 1;
			p->detail[0] = '\0';
		} else if (rc != -ENOENT && rc != -ENOEXEC && !p->failed) {
			strbuf(p->detail, sizeof(p->detail), "%s: %s", path, msg);
			p->failed = 1;
		}
	}
	if (!added)
		return;
	for (size_t i = 0; i < ps->nth; i++) {
		char why[512];
		struct pthread *t = ps->th[i];
		if (!t->exited && thread_open_sites(ps, t, why, sizeof(why)) != 0) {
			strbuf(ps->note, sizeof(ps->note), "%s", why);
		}
	}
	(void)pid;
}

