/*
 * Symbols: IP -> (DSO, DSO address, function, offset, file:line).
 *
 * Layout of the data:
 *   procs  - one per pid: its executable mappings, sorted and disjoint, and
 *            its /tmp/perf-PID.map entries once read;
 *   dsos   - one per distinct file (keyed by device, inode, mtime and size,
 *            so /lib/x.so and /usr/lib/x.so on a merged-/usr system, or the
 *            same library in 100 processes, are one entry); a DSO is read on
 *            the first IP that needs it: its PT_LOAD headers (to turn a file
 *            offset into an ELF address), its function symbols (sorted, for
 *            a binary search; with the PLT stubs, and the functions no
 *            symbol names, from .eh_frame) and, when DWARF is there, a
 *            libdwfl module for file:line; plus a hash map of the addresses
 *            already resolved;
 *   ksyms  - /proc/kallsyms, read on the first kernel IP.
 *
 * Why our own sorted symbol table rather than dwfl_module_addrinfo(): libdwfl
 * (0.188) searches the symbol table linearly on every call, which for
 * libraries with tens of thousands of symbols and a million samples is
 * minutes, not seconds. We still load symbols through libdwfl, which finds
 * separate debug files (build-id, .gnu_debuglink under /usr/lib/debug or
 * MFU_DEBUG_DIRS, and debuginfod when DEBUGINFOD_URLS is set) and merges
 * .gnu_debugdata (MiniDebugInfo).
 *
 * Every DSO is reported to its own Dwfl at base 0 with add_p_vaddr, so the
 * module's addresses are the file's ELF virtual addresses (plus a bias that
 * is 0 except for odd prelinked files, and that we subtract anyway); the
 * same module then serves every process whatever its load address.
 */
#include "symbols_impl.h"
#include "record/procmaps.h"

/* ---- string pool: every string we hand out lives here until free ---- */


const char *pool_strndup(struct pool_chunk **pool, const char *str, size_t len)
{
	struct pool_chunk *c = *pool;
	char *p;

	if (!c || c->cap - c->used < len + 1) {
		size_t cap = len + 1 > POOL_CHUNK ? len + 1 : POOL_CHUNK;
		c = malloc(sizeof(*c) + cap);
		if (!c)
			return NULL;
		c->used = 0;
		c->cap = cap;
		c->next = *pool;
		*pool = c;
	}
	p = c->data + c->used;
	memcpy(p, str, len);
	p[len] = '\0';
	c->used += len + 1;
	return p;
}

const char *pool_strdup(struct pool_chunk **pool, const char *str)
{
	return pool_strndup(pool, str, strlen(str));
}

void pool_free(struct pool_chunk *c)
{
	while (c) {
		struct pool_chunk *next = c->next;
		free(c);
		c = next;
	}
}

/* ---- demangling ----
 *
 * __cxa_demangle from libstdc++.so.6, looked up with dlopen at first use.
 * Why: libdw does not export a demangler; libiberty's cplus_demangle would
 * mean libiberty-dev (not installed here, a static-only, non-PIC archive on
 * Debian) at build time; llvm's demangler is a C++ dependency. libstdc++ is
 * already on every system that runs C++ code (the only code with mangled
 * names worth reading), it is the reference implementation of the Itanium
 * ABI that g++ and clang both emit, and it also reads legacy Rust names
 * (_ZN...17h<hash>E). Without it names stay mangled, nothing else breaks.
 * The handle is never closed: libstdc++ registers exit handlers and is not
 * safely unloadable. */
typedef char *(*cxa_demangle_fn)(const char *mangled, char *buf, size_t *len, int *status);
static cxa_demangle_fn cxa_demangle;
static pthread_once_t demangle_once = PTHREAD_ONCE_INIT;

static void demangle_init(void)
{
	void *h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
	void *fn;

	if (!h)
		return;
	fn = dlsym(h, "__cxa_demangle");
	/* POSIX guarantees a data pointer from dlsym converts to a function pointer */
	memcpy(&cxa_demangle, &fn, sizeof(fn));
}

int symbols_demangle(const char *mangled, char **out)
{
	int status = 0;
	char *r;

	*out = NULL;
	if (!mangled || strncmp(mangled, "_Z", 2) != 0)
		return -EINVAL;
	pthread_once(&demangle_once, demangle_init);
	if (!cxa_demangle)
		return -ENOSYS;
	r = cxa_demangle(mangled, NULL, NULL, &status);
	if (status == -1)
		return -ENOMEM;
	if (status != 0 || !r) {
		free(r);
		return -EINVAL;
	}
	*out = r;
	return 0;
}

/* The name to show for @raw: demangled into the pool when it is mangled,
 * else @raw itself; a PLT stub's "_Z...@plt" becomes "demangled@plt".
 * NULL only on -ENOMEM. */
const char *shown_name(struct symbols *s, const char *raw)
{
	size_t len = strlen(raw);
	bool plt = len > 4 && strcmp(raw + len - 4, "@plt") == 0;
	char *m = NULL, *d = NULL, *both = NULL;
	const char *r = raw;
	int err;

	if (strncmp(raw, "_Z", 2) != 0)
		return raw;
	if (plt) {
		m = strndup(raw, len - 4);
		if (!m)
			return NULL;
	}
	err = symbols_demangle(m ? m : raw, &d);
	if (err == -ENOMEM) {
		r = NULL;
	} else if (!err && plt) {
		both = malloc(strlen(d) + sizeof("@plt"));
		if (both) {
			strcpy(both, d);
			strcat(both, "@plt");
			r = pool_strdup(&s->pool, both);
		} else {
			r = NULL;
		}
	} else if (!err) {
		r = pool_strdup(&s->pool, d);
	}
	free(both);
	free(d);
	free(m);
	return r;
}

/* ---- lifecycle ---- */

/* libdwfl's search path for separate debug files (its debuginfo_path
 * syntax: an empty entry is the file's own directory, a relative one is
 * below it, an absolute one is a debug root holding .build-id/xx/yyyy.debug
 * and the same tree as / for .gnu_debuglink). NULL: its default,
 * ":.debug:/usr/lib/debug". MFU_DEBUG_DIRS replaces /usr/lib/debug with
 * its absolute entries. */
static int debuginfo_path_new(char **out)
{
	const char *env = getenv("MFU_DEBUG_DIRS");
	char *path, *w;

	*out = NULL;
	if (!env)
		return 0;
	path = malloc(strlen(env) + sizeof(":.debug:") + 1);
	if (!path)
		return -ENOMEM;
	w = path + sprintf(path, ":.debug");
	for (const char *p = env; *p;) {
		size_t n = strcspn(p, ":");
		if (p[0] == '/') {
			*w++ = ':';
			memcpy(w, p, n);
			w += n;
		}
		p += n;
		p += *p == ':';
	}
	*w = '\0';
	*out = path;
	return 0;
}

int symbols_new(struct symbols **out)
{
	struct symbols *s;

	*out = NULL;
	/* libelf refuses to work until the version handshake is done; libdwfl
	 * does it for its own files, the vdso reader needs it too. */
	elf_version(EV_CURRENT);
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	if (debuginfo_path_new(&s->debuginfo_path)) {
		free(s);
		return -ENOMEM;
	}
	s->callbacks = (Dwfl_Callbacks){
		.find_elf = dwfl_build_id_find_elf, /* unused: we hand over the fd */
		.find_debuginfo = dso_find_debuginfo,
		.section_address = dwfl_offline_section_address,
		.debuginfo_path = s->debuginfo_path ? &s->debuginfo_path : NULL,
	};
	*out = s;
	return 0;
}


static void proc_free(struct proc *p)
{
	if (!p)
		return;
	free(p->maps);
	free(p->jit);
	free(p);
}

void symbols_free(struct symbols *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nprocs; i++)
		proc_free(s->procs[i]);
	free(s->procs);
	idmap_fini(&s->proc_index);
	for (size_t i = 0; i < s->ndsos; i++)
		dso_free(s->dsos[i]);
	free(s->dsos);
	idmap_fini(&s->dso_index);
	idmap_fini(&s->build_id_index);
	free(s->ksyms);
	pool_free(s->pool);
	free(s->debuginfo_path);
	free(s);
}

const char *symbol_kind_name(enum symbol_kind kind)
{
	switch (kind) {
	case SYMBOL_USER:
		return "user";
	case SYMBOL_JIT:
		return "jit";
	case SYMBOL_KERNEL:
		return "kernel";
	case SYMBOL_UNKNOWN:
		break;
	}
	return "unknown";
}

void symbols_get_stats(const struct symbols *s, struct symbols_stats *st)
{
	*st = s->st;
	st->procs = 0;
	for (size_t i = 0; i < s->nprocs; i++)
		st->procs += s->procs[i]->nmaps > 0;
	st->dsos = s->ndsos;
}

/* ---- processes and maps ---- */

static struct proc *proc_find(const struct symbols *s, pid_t pid)
{
	int v = idmap_get(&s->proc_index, (uint64_t)(uint32_t)pid);
	return v >= 0 ? s->procs[v] : NULL;
}

int proc_get(struct symbols *s, pid_t pid, struct proc **out)
{
	struct proc *p = proc_find(s, pid);
	int err;

	if (p)
		goto out;
	err = array_grow(&s->procs, &s->capprocs, s->nprocs + 1, sizeof(*s->procs));
	if (err)
		return err;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->pid = pid;
	err = idmap_put(&s->proc_index, (uint64_t)(uint32_t)pid, (int)s->nprocs);
	if (err) {
		free(p);
		return err;
	}
	s->procs[s->nprocs++] = p;
out:
	*out = p;
	return 0;
}

/* Index of the first map whose end is above @addr (maps are disjoint and
 * sorted, so ends are sorted too). */
static size_t map_first_ending_after(const struct proc *p, uint64_t addr)
{
	size_t lo = 0, hi = p->nmaps;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (p->maps[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static const struct map *proc_map_find(struct proc *p, uint64_t ip)
{
	size_t i;

	if (p->last < p->nmaps && p->maps[p->last].start <= ip && ip < p->maps[p->last].end)
		return &p->maps[p->last];
	i = map_first_ending_after(p, ip);
	if (i == p->nmaps || p->maps[i].start > ip)
		return NULL;
	p->last = i;
	return &p->maps[i];
}

/* Insert @m, cutting away whatever part of older maps it overlaps. */
static int proc_insert(struct proc *p, const struct map *m)
{
	struct map left, right, add[3];
	size_t i = map_first_ending_after(p, m->start), j = i, nadd = 0;
	int err;

	while (j < p->nmaps && p->maps[j].start < m->end)
		j++;
	if (i < j && p->maps[i].start < m->start) {
		left = p->maps[i];
		left.end = m->start;
		add[nadd++] = left;
	}
	add[nadd++] = *m;
	if (i < j && p->maps[j - 1].end > m->end) {
		right = p->maps[j - 1];
		if (right.kind == MAP_FILE)
			right.pgoff += m->end - right.start;
		right.start = m->end;
		add[nadd++] = right;
	}
	err = array_grow(&p->maps, &p->capmaps, p->nmaps - (j - i) + nadd, sizeof(*p->maps));
	if (err)
		return err;
	memmove(&p->maps[i + nadd], &p->maps[j], (p->nmaps - j) * sizeof(*p->maps));
	memcpy(&p->maps[i], add, nadd * sizeof(*add));
	p->nmaps = p->nmaps - (j - i) + nadd;
	p->last = i;
	return 0;
}

/* ---- public ---- */

static bool has_prefix(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

static bool has_suffix(const char *s, size_t len, const char *suffix)
{
	size_t n = strlen(suffix);
	return len >= n && memcmp(s + len - n, suffix, n) == 0;
}

/* Anonymous executable memory under the names the kernel gives it. */
static bool is_anon(const char *path)
{
	return !*path || strcmp(path, ANON_DSO) == 0 || has_prefix(path, "[anon:") ||
	       has_prefix(path, "/memfd:") || has_prefix(path, "[anon_shmem:") ||
	       has_prefix(path, "/dev/zero") || has_prefix(path, "anon_inode:") ||
	       strcmp(path, "[heap]") == 0 || strcmp(path, "[stack]") == 0;
}

int symbols_add_map(struct symbols *s, pid_t pid, uint64_t start, uint64_t len, uint64_t pgoff,
		    const char *path, int prot_exec)
{
	struct map m = { .start = start, .end = start + len, .pgoff = pgoff };
	static const char deleted_suffix[] = " (deleted)";
	struct proc *p;
	char *copy = NULL;
	int err;

	if (!prot_exec)
		return 0;
	if (!len || m.end < start)
		return -EINVAL;
	if (!path)
		path = "";
	if (is_anon(path)) {
		m.kind = MAP_JIT;
		m.name = *path ? pool_strdup(&s->pool, path) : ANON_DSO;
	} else if (path[0] == '[' && strcmp(path, "[vdso]") != 0) {
		m.kind = MAP_OTHER; /* [vsyscall], [uprobes]: no file to read */
		m.name = pool_strdup(&s->pool, path);
	} else {
		size_t n = strlen(path);
		bool deleted = has_suffix(path, n, deleted_suffix);

		m.kind = MAP_FILE;
		if (deleted) {
			copy = strndup(path, n - (sizeof(deleted_suffix) - 1));
			if (!copy)
				return -ENOMEM;
		}
		err = dso_get(s, copy ? copy : path, deleted, &m.dso);
		if (err)
			goto out;
	}
	if (m.kind != MAP_FILE && !m.name) {
		err = -ENOMEM;
		goto out;
	}
	err = proc_get(s, pid, &p);
	if (err)
		goto out;
	err = proc_insert(p, &m);
out:
	free(copy);
	return err;
}

struct add_maps {
	struct symbols *s;
	pid_t pid;
};

static int add_map_entry(void *ctx, const struct procmaps_entry *e)
{
	struct add_maps *a = ctx;

	if (!e->exec || e->end == e->start)
		return 0;
	return symbols_add_map(a->s, a->pid, e->start, e->end - e->start, e->pgoff, e->path, e->exec);
}

int symbols_add_proc_maps(struct symbols *s, pid_t pid)
{
	struct add_maps a = { s, pid };
	int err = procmaps_each(pid, add_map_entry, &a);

	return err == -ESRCH ? -ENOENT : err;
}

int symbols_fork(struct symbols *s, pid_t ppid, pid_t pid)
{
	struct proc *parent, *child;
	int err;

	err = proc_get(s, pid, &child);
	if (err)
		return err;
	parent = proc_find(s, ppid);
	if (!parent || parent == child || !parent->nmaps)
		return 0;
	err = array_grow(&child->maps, &child->capmaps, parent->nmaps, sizeof(*child->maps));
	if (err)
		return err;
	memcpy(child->maps, parent->maps, parent->nmaps * sizeof(*child->maps));
	child->nmaps = parent->nmaps;
	child->last = 0;
	return 0;
}

void symbols_exec(struct symbols *s, pid_t pid)
{
	struct proc *p = proc_find(s, pid);

	if (!p)
		return;
	p->nmaps = 0;
	p->last = 0;
	free(p->jit);
	p->jit = NULL;
	p->njit = 0;
	p->perfmap_read = false;
}

int symbols_resolve(struct symbols *s, pid_t pid, uint64_t ip, struct symbol_info *out)
{
	const struct map *m = NULL;
	struct dso_hit hit;
	struct proc *p;
	struct dso *d;
	uint64_t off;
	int err;

	*out = (struct symbol_info){
		.kind = SYMBOL_UNKNOWN, .dso = UNKNOWN_NAME, .dso_addr = ip, .name = UNKNOWN_NAME };
	if (ip >= PERF_CONTEXT_FIRST)
		return -ENOENT;
	if (ip >= KERNEL_START) {
		err = resolve_kernel(s, ip, out);
		goto out;
	}
	p = proc_find(s, pid);
	if (p)
		m = proc_map_find(p, ip);
	if (!m || m->kind == MAP_JIT) {
		err = resolve_jit(s, pid, m, ip, out);
		goto out;
	}
	out->kind = SYMBOL_USER;
	out->dso_addr = ip - m->start;
	if (m->kind == MAP_OTHER) {
		out->dso = m->name;
		return -ENOENT;
	}

	d = m->dso;
	off = ip - m->start + m->pgoff;
	out->dso = d->path;
	out->dso_addr = off;
	if (d->state == DSO_UNREAD) {
		err = dso_read(s, d);
		if (err)
			return err;
	}
	if (d->state != DSO_READY)
		return -ENOENT;
	if (d->twin)
		d = d->twin;
	out->dso_addr = dso_vaddr(d, off);
	err = dso_lookup(s, d, out->dso_addr, &hit);
	if (err)
		return err;
	out->file = hit.file;
	out->line = hit.line;
	if (hit.sym == NONE)
		return -ENOENT;
	out->name = d->syms[hit.sym].shown;
	out->offset = out->dso_addr - d->syms[hit.sym].addr;
	out->source = d->syms[hit.sym].source;
	return 0;
out:
	if (!err)
		out->source = SYMBOL_FROM_TABLE;
	return err;
}
