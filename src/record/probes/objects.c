/* Which object a point is in (probes_impl.h). */
#include "probes_impl.h"
#include "record/procmaps.h"

/* ==== which object ==== */

static int append_sites(struct probe_site **all, size_t *n, struct probe_site *more, size_t m)
{
	struct probe_site *ns;

	if (!m)
		return 0;
	ns = realloc(*all, (*n + m) * sizeof(*ns));
	if (!ns)
		return -ENOMEM;
	memcpy(ns + *n, more, m * sizeof(*ns));
	*all = ns;
	*n += m;
	return 0;
}

/* @p is a local function of @nlocal objects (@locals, the first
 * MAX_LISTED of them): the user names one. Returns -ENOTUNIQ. */
static int locals_ambiguous(const struct probe_point *p, char *const *locals, size_t nlocal, char *why,
			    size_t whylen)
{
	size_t used;

	strbuf(why, whylen, "function '%s' is a local (static or hidden) function of %zu "
	       "objects (", p->name, nlocal);
	for (size_t i = 0; i < nlocal && i < MAX_LISTED; i++) {
		used = strlen(why);
		strbuf(why + used, whylen - used, "%s%s", i ? ", " : "", locals[i]);
	}
	used = strlen(why);
	strbuf(why + used, whylen - used, "); name one, as LIB:%s", p->name);
	return -ENOTUNIQ;
}

/* @p is in none of the @searched objects of @where; @first_why, when not
 * NULL, is why the first of them could not be read. Returns -ENOENT. */
static int not_found(const struct probe_point *p, const char *where, size_t searched, const char *first_why,
		     char *why, size_t whylen)
{
	char buf[PROBE_NAME_MAX + PROBE_OBJECT_MAX + 64];

	probes_point_format(p, buf, sizeof(buf));
	if (searched == 0 && p->object[0])
		probes_why(why, whylen, "%s: no object named '%s' in %s (if it is loaded later with "
			"dlopen, it is resolved when it is mapped)", buf, p->object, where);
	else if (first_why)
		probes_why(why, whylen, "%s not found in %s (%zu objects; %s)", buf, where, searched,
			first_why);
	else
		probes_why(why, whylen, "%s not found in %s (%zu objects searched)", buf, where,
			searched);
	return -ENOENT;
}

/*
 * Resolve @p over @paths (the main executable first, then the libraries in
 * load order). A function is taken as the dynamic linker binds a call to
 * it: from the executable when it defines it, else from the first library
 * that exports it (global or weak, default or protected visibility). A
 * function no object exports (a static function, or a hidden one) must be
 * defined in one object only, else -ENOTUNIQ: the user names the object.
 * USDT sites come from every file. @where says what was searched, for
 * messages.
 */
int find_in_paths(char *const *paths, size_t npaths, const struct probe_point *p,
			 const char *where, struct probe_site **sites, size_t *n, char *why,
			 size_t whylen)
{
	struct probe_site *all = NULL, *local = NULL;
	size_t nall = 0, searched = 0, nlocal = 0;
	char *locals[MAX_LISTED];
	char buf[PROBE_NAME_MAX + PROBE_OBJECT_MAX + 64], first_why[512] = "";
	int err = 0, first_err = 0;

	*sites = NULL;
	*n = 0;
	for (size_t i = 0; i < npaths; i++) {
		struct probe_site *s = NULL;
		size_t ns = 0;
		int e;

		if (!probes_object_matches(p, paths[i]))
			continue;
		searched++;
		e = probes_resolve_point(paths[i], p, &s, &ns, buf, sizeof(buf));
		if (e == -ENOMEM) {
			err = e;
			goto out;
		}
		if (e == -ENOENT || e == -ENOEXEC || (e && !p->object[0] && e != -ENOTUNIQ)) {
			/* not here (or an unreadable file among many): look on,
			 * but remember why in case it is nowhere */
			if (e != -ENOENT && !first_err) {
				first_err = e;
				strbuf(first_why, sizeof(first_why), "%s", buf);
			}
			free(s);
			continue;
		}
		if (e) {
			probes_why(why, whylen, "%s", buf);
			err = e;
			goto out;
		}
		if (p->kind == PROBE_POINT_SDT) {
			e = append_sites(&all, &nall, s, ns);
			free(s);
			if (e) {
				err = e;
				goto out;
			}
			continue;
		}
		if ((i == 0 && !p->object[0]) || s[0].exported) {
			/* the executable interposes on everything; then the
			 * first library in load order that exports it */
			*sites = s;
			*n = ns;
			err = 0;
			goto out;
		}
		if (nlocal < MAX_LISTED)
			locals[nlocal] = paths[i];
		if (nlocal++ == 0)
			local = s;
		else
			free(s);
	}
	if (p->kind == PROBE_POINT_FUNC && nlocal > 1) {
		err = locals_ambiguous(p, locals, nlocal, why, whylen);
		goto out;
	}
	if (p->kind == PROBE_POINT_FUNC && local) {
		*sites = local;
		*n = 1;
		local = NULL;
		err = 0;
		goto out;
	}
	if (p->kind == PROBE_POINT_SDT && nall) {
		*sites = all;
		*n = nall;
		all = NULL;
		err = 0;
		goto out;
	}
	err = not_found(p, where, searched, first_err ? first_why : NULL, why, whylen);
out:
	free(all);
	free(local);
	return err;
}

/* Executable file-backed mappings of @pid, unique paths, the main
 * executable first, then in address order. */
struct path_list {
	char **paths;
	size_t n, cap;
};

static int path_add(struct path_list *l, const char *path)
{
	for (size_t i = 0; i < l->n; i++)
		if (!strcmp(l->paths[i], path))
			return 0;
	if (array_grow(&l->paths, &l->cap, l->n + 1, sizeof(*l->paths)))
		return -ENOMEM;
	if (!(l->paths[l->n] = strdup(path)))
		return -ENOMEM;
	l->n++;
	return 0;
}

static int add_mapped_file(void *ctx, const struct procmaps_entry *e)
{
	/* a deleted or replaced file cannot be probed by its path */
	if (e->path[0] != '/' || !e->exec || strstr(e->path, " (deleted)"))
		return 0;
	return path_add(ctx, e->path);
}

/* The executable files process @pid maps, the executable first (it is not
 * always mapped lowest, ET_EXEC vs PIE, and it interposes on everything),
 * each once. */
static int maps_paths(pid_t pid, char ***out, size_t *nout)
{
	struct path_list l = { 0 };
	char fn[64], exe[PATH_MAX];
	ssize_t el;
	int err = 0;

	*out = NULL;
	*nout = 0;
	snprintf(fn, sizeof(fn), "/proc/%d/exe", (int)pid);
	el = readlink(fn, exe, sizeof(exe) - 1);
	exe[el > 0 ? el : 0] = '\0';
	if (exe[0])
		err = path_add(&l, exe);
	if (!err)
		err = procmaps_each(pid, add_mapped_file, &l);
	if (err) {
		probes_paths_free(l.paths, l.n);
		return err;
	}
	*out = l.paths;
	*nout = l.n;
	return 0;
}

void probes_paths_free(char **paths, size_t n)
{
	if (!paths)
		return;
	for (size_t i = 0; i < n; i++)
		free(paths[i]);
	free(paths);
}

/* The value of @name in @pid's initial environment, into @buf ("" when
 * unset or unreadable). */
static void environ_var(pid_t pid, const char *name, char *buf, size_t len)
{
	char fn[64], *data = NULL;
	size_t n = 0, cap = 0, nl = strlen(name);
	FILE *fp;

	buf[0] = '\0';
	snprintf(fn, sizeof(fn), "/proc/%d/environ", (int)pid);
	fp = fopen(fn, "re");
	if (!fp)
		return;
	for (;;) {
		size_t r;

		if (n == cap) {
			char *nd = realloc(data, cap ? cap * 2 : 4096);
			if (!nd)
				break;
			data = nd;
			cap = cap ? cap * 2 : 4096;
		}
		r = fread(data + n, 1, cap - n, fp);
		if (r == 0)
			break;
		n += r;
	}
	fclose(fp);
	for (size_t i = 0; i < n;) {
		const char *e = data + i;
		size_t el = strnlen(e, n - i);

		if (el > nl && !strncmp(e, name, nl) && e[nl] == '=') {
			snprintf(buf, len, "%.*s", (int)(el - nl - 1), e + nl + 1);
			break;
		}
		i += el + 1;
	}
	free(data);
}

/* Put @paths (paths[0], the executable, stays first) in load order: the
 * executable's DT_NEEDED closure as the loader would map it, then the
 * rest (libraries opened with dlopen) as they were. */
static void order_like_loader(pid_t pid, char **paths, size_t np)
{
	char **needed = NULL, llp[4096];
	size_t nn = 0, next = 1;

	if (np < 3)
		return;
	environ_var(pid, "LD_LIBRARY_PATH", llp, sizeof(llp));
	if (probes_needed_objects(paths[0], llp, &needed, &nn, NULL, 0))
		return;
	for (size_t k = 1; k < nn; k++) {
		for (size_t i = next; i < np; i++) {
			char *t;

			if (strcmp(paths[i], needed[k]))
				continue;
			/* rotate paths[next..i] right by one: stable for the rest */
			t = paths[i];
			memmove(&paths[next + 1], &paths[next], (i - next) * sizeof(*paths));
			paths[next++] = t;
			break;
		}
	}
	probes_paths_free(needed, nn);
}

int probes_find_in_maps(pid_t pid, const struct probe_point *p, struct probe_site **sites,
			size_t *n, char *why, size_t whylen)
{
	char **paths = NULL, where[64];
	size_t np = 0;
	int err;

	*sites = NULL;
	*n = 0;
	err = maps_paths(pid, &paths, &np);
	if (err) {
		if (err == -ESRCH)
			probes_why(why, whylen, "no process %d", (int)pid);
		else
			probes_why(why, whylen, "cannot read /proc/%d/maps: %s", (int)pid,
				strerror(-err));
		return err;
	}
	order_like_loader(pid, paths, np);
	snprintf(where, sizeof(where), "process %d", (int)pid);
	err = find_in_paths(paths, np, p, where, sites, n, why, whylen);
	probes_paths_free(paths, np);
	return err;
}

