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
 *            a binary search) and, when DWARF is there, a libdwfl module for
 *            file:line; plus a hash map of the addresses already resolved;
 *   ksyms  - /proc/kallsyms, read on the first kernel IP.
 *
 * Why our own sorted symbol table rather than dwfl_module_addrinfo(): libdwfl
 * (0.188) searches the symbol table linearly on every call, which for
 * libraries with tens of thousands of symbols and a million samples is
 * minutes, not seconds. We still load symbols through libdwfl, which finds
 * separate debug files (build-id, .gnu_debuglink under /usr/lib/debug, and
 * debuginfod when DEBUGINFOD_URLS is set) and merges .gnu_debugdata.
 *
 * Every DSO is reported to its own Dwfl at base 0 with add_p_vaddr, so the
 * module's addresses are the file's ELF virtual addresses (plus a bias that
 * is 0 except for odd prelinked files, and that we subtract anyway); the
 * same module then serves every process whatever its load address.
 */
#include "symbols.h"
#include "util.h"
#include "idmap.h"

#include <dlfcn.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#define UNKNOWN_NAME "[unknown]"
#define KERNEL_NAME "[kernel]"
#define KERNEL_DSO "[kernel.kallsyms]"
#define ANON_DSO "//anon"

/* User space ends well below 2^63 on every 64-bit Linux (x86-64 with 4- or
 * 5-level paging: 2^47 or 2^56; arm64: 2^48..2^52); kernel text lives in the
 * top half. */
#define KERNEL_START (1ULL << 63)
/* perf's callchain context markers (PERF_CONTEXT_KERNEL = -128, ...) are all
 * at or above PERF_CONTEXT_MAX = -4095: not addresses. */
#define PERF_CONTEXT_FIRST ((uint64_t)-4095)

/* How far back from the nearest symbol start we look for an enclosing
 * symbol (a function that contains smaller FUNC symbols, e.g. local labels
 * typed as functions in assembly). */
#define ENCLOSING_LOOKBACK 4
/* A kernel symbol followed by another module's symbol: its end is unknown. */
#define KSYM_MAX_TAIL (64u << 10)
#define POOL_CHUNK (256u << 10)
#define NONE UINT32_MAX

/* ---- string pool: every string we hand out lives here until free ---- */

struct pool_chunk {
	struct pool_chunk *next;
	size_t used, cap;
	char data[];
};

static const char *pool_strndup(struct pool_chunk **pool, const char *str, size_t len)
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

static const char *pool_strdup(struct pool_chunk **pool, const char *str)
{
	return pool_strndup(pool, str, strlen(str));
}

static void pool_free(struct pool_chunk *c)
{
	while (c) {
		struct pool_chunk *next = c->next;
		free(c);
		c = next;
	}
}

/* ---- data ---- */

enum dso_state { DSO_UNREAD = 0, DSO_READY, DSO_MISSING };

struct dso_sym {
	uint64_t addr, size;  /* ELF virtual address, bytes */
	const char *name;     /* as in the symbol table */
	const char *shown;    /* demangled (or @name), set on first use */
};

struct dso_load {
	uint64_t off, vaddr, filesz;
};

/* One resolved address (the per-DSO cache). */
struct dso_hit {
	uint32_t sym; /* index in syms, NONE if no symbol covers it */
	int line;
	const char *file;
};

struct dso {
	const char *path;
	bool stated, deleted;
	dev_t dev;
	ino_t ino;
	struct timespec mtime;
	off_t size;
	uint32_t next; /* next DSO with the same key hash, NONE ends */
	uint32_t index; /* in symbols.dsos */

	enum dso_state state;
	struct dso *twin;   /* another file with the same build ID, read already:
			     * its tables serve this one too */
	const unsigned char *build_id;
	size_t build_id_len;
	uint32_t next_bid;  /* next DSO with the same build-ID hash, NONE ends */
	int err;            /* why it is missing (-errno) */
	Dwfl *dwfl;         /* kept only when the file has DWARF */
	Dwfl_Module *mod;
	Dwarf_Addr bias;

	struct dso_load *loads;
	size_t nloads;
	struct dso_sym *syms;
	size_t nsyms;

	struct idmap hit_index; /* ELF address -> index in hits */
	struct dso_hit *hits;
	size_t nhits, caphits;
};

enum map_kind { MAP_FILE, MAP_JIT, MAP_OTHER };

struct map {
	uint64_t start, end, pgoff;
	enum map_kind kind;
	struct dso *dso;   /* MAP_FILE */
	const char *name;  /* MAP_JIT, MAP_OTHER: the kernel's name for it */
};

struct jit_sym {
	uint64_t start, end;
	const char *name;
	size_t order; /* line number: a later line wins over an overlapping earlier one */
};

struct proc {
	pid_t pid;
	struct map *maps;
	size_t nmaps, capmaps;
	size_t last; /* index of the last map hit */
	bool perfmap_read;
	const char *perfmap_path;
	struct jit_sym *jit;
	size_t njit;
};

struct ksym {
	uint64_t addr, end;
	const char *name;
	const char *module; /* "[kernel.kallsyms]" or "[module]" */
};

struct symbols {
	struct pool_chunk *pool;

	struct proc **procs;
	size_t nprocs, capprocs;
	struct idmap proc_index; /* pid -> index in procs */

	struct dso **dsos;
	size_t ndsos, capdsos;
	struct idmap dso_index; /* key hash -> first DSO of the chain */
	struct idmap build_id_index; /* build-ID hash -> first read DSO of the chain */

	bool ksyms_read;
	struct ksym *ksyms;
	size_t nksyms;

	struct symbols_stats st;
};

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
 * else @raw itself. NULL only on -ENOMEM. */
static const char *shown_name(struct symbols *s, const char *raw)
{
	char *d = NULL;
	const char *r;

	if (strncmp(raw, "_Z", 2) != 0)
		return raw;
	if (symbols_demangle(raw, &d))
		return raw;
	r = pool_strdup(&s->pool, d);
	free(d);
	return r;
}

/* ---- lifecycle ---- */

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
	*out = s;
	return 0;
}

static void dso_free(struct dso *d)
{
	if (!d)
		return;
	if (d->dwfl)
		dwfl_end(d->dwfl);
	free(d->loads);
	free(d->syms);
	idmap_fini(&d->hit_index);
	free(d->hits);
	free(d);
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

static int proc_get(struct symbols *s, pid_t pid, struct proc **out)
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

/* ---- DSOs: identity ---- */

/* splitmix64's finalizer, to combine the fields of a file's identity */
static uint64_t mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

static uint64_t hash_bytes(const void *p, size_t len)
{
	const unsigned char *b = p;
	uint64_t h = 0xcbf29ce484222325ULL; /* FNV-1a */

	for (size_t i = 0; i < len; i++)
		h = (h ^ b[i]) * 0x100000001b3ULL;
	return h;
}

static uint64_t hash_str(const char *str)
{
	return hash_bytes(str, strlen(str));
}

/* An already-read DSO with this build ID, or NULL. */
static struct dso *build_id_find(const struct symbols *s, const unsigned char *id, size_t len)
{
	int head = idmap_get(&s->build_id_index, hash_bytes(id, len));

	for (uint32_t k = head >= 0 ? (uint32_t)head : NONE; k != NONE; k = s->dsos[k]->next_bid) {
		struct dso *d = s->dsos[k];
		if (d->build_id_len == len && memcmp(d->build_id, id, len) == 0)
			return d;
	}
	return NULL;
}

static int build_id_add(struct symbols *s, struct dso *d)
{
	uint64_t h = hash_bytes(d->build_id, d->build_id_len);
	int head = idmap_get(&s->build_id_index, h);

	d->next_bid = head >= 0 ? (uint32_t)head : NONE;
	return idmap_put(&s->build_id_index, h, (int)d->index);
}

static bool same_file(const struct dso *d, const struct stat *st)
{
	return d->dev == st->st_dev && d->ino == st->st_ino && d->size == st->st_size &&
	       d->mtime.tv_sec == st->st_mtim.tv_sec && d->mtime.tv_nsec == st->st_mtim.tv_nsec;
}

/* The DSO for @path (already stripped of " (deleted)"), created if new. */
static int dso_get(struct symbols *s, const char *path, bool deleted, struct dso **out)
{
	struct stat st;
	bool stated = !deleted && path[0] == '/' && stat(path, &st) == 0;
	uint64_t key;
	int head;
	struct dso *d;
	int err;

	if (stated)
		key = mix64(st.st_dev ^ mix64(st.st_ino ^ mix64((uint64_t)st.st_size ^
				mix64((uint64_t)st.st_mtim.tv_sec * 1000000000ULL + (uint64_t)st.st_mtim.tv_nsec))));
	else
		key = hash_str(path) ^ (deleted ? 0x5bd1e995ULL : 0);
	head = idmap_get(&s->dso_index, key);
	for (uint32_t k = head >= 0 ? (uint32_t)head : NONE; k != NONE; k = s->dsos[k]->next) {
		d = s->dsos[k];
		if (d->stated != stated || d->deleted != deleted)
			continue;
		if (stated ? same_file(d, &st) : strcmp(d->path, path) == 0)
			goto out;
	}

	err = array_grow(&s->dsos, &s->capdsos, s->ndsos + 1, sizeof(*s->dsos));
	if (err)
		return err;
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->path = pool_strdup(&s->pool, path);
	if (!d->path) {
		free(d);
		return -ENOMEM;
	}
	d->deleted = deleted;
	d->stated = stated;
	if (stated) {
		d->dev = st.st_dev;
		d->ino = st.st_ino;
		d->size = st.st_size;
		d->mtime = st.st_mtim;
	}
	if (deleted) {
		/* the mapping outlived its file: nothing left to read */
		d->state = DSO_MISSING;
		d->err = -ENOENT;
		s->st.dsos_missing++;
	}
	d->next = head >= 0 ? (uint32_t)head : NONE;
	d->index = (uint32_t)s->ndsos;
	err = idmap_put(&s->dso_index, key, (int)s->ndsos);
	if (err) {
		free(d);
		return err;
	}
	s->dsos[s->ndsos++] = d;
out:
	*out = d;
	return 0;
}

/* ---- DSOs: reading symbols ---- */

struct cand {
	uint64_t addr, size;
	const char *name;
	size_t len; /* of the name without its "@VERSION" / "@@VERSION" */
	unsigned char bind;
};

struct cands {
	struct cand *c;
	size_t n, cap;
};

static int cands_add(struct cands *cs, uint64_t addr, uint64_t size, const char *name,
		     unsigned char bind)
{
	if (name[0] == '@')
		return 0;
	if (array_grow(&cs->c, &cs->cap, cs->n + 1, sizeof(*cs->c)))
		return -ENOMEM;
	/* .symtab names of versioned definitions carry the version
	 * ("fopen@@GLIBC_2.2.5"); what the program calls is the part before */
	cs->c[cs->n++] = (struct cand){
		.addr = addr, .size = size, .name = name, .len = strcspn(name, "@"), .bind = bind };
	return 0;
}

static size_t leading_underscores(const char *s)
{
	size_t n = 0;
	while (s[n] == '_')
		n++;
	return n;
}

/* Among aliases at one address, the name a reader expects: an exported one
 * (getpid rather than a local), with the fewest leading underscores
 * (getpid over __getpid, malloc over __libc_malloc), then global over weak,
 * sized over unsized, shorter, then alphabetical for a stable choice. */
static int cand_cmp(const void *pa, const void *pb)
{
	const struct cand *a = pa, *b = pb;
	size_t ua, ub;
	int c;

	if (a->addr != b->addr)
		return a->addr < b->addr ? -1 : 1;
	if ((a->bind == STB_LOCAL) != (b->bind == STB_LOCAL))
		return a->bind == STB_LOCAL ? 1 : -1;
	ua = leading_underscores(a->name);
	ub = leading_underscores(b->name);
	if (ua != ub)
		return ua < ub ? -1 : 1;
	if ((a->bind == STB_GLOBAL) != (b->bind == STB_GLOBAL))
		return a->bind == STB_GLOBAL ? -1 : 1;
	if ((a->size == 0) != (b->size == 0))
		return a->size ? -1 : 1;
	if (a->len != b->len)
		return a->len < b->len ? -1 : 1;
	c = memcmp(a->name, b->name, a->len);
	return c ? c : strcmp(a->name, b->name);
}

/* End of the PT_LOAD segment holding @vaddr, or 0. */
static uint64_t load_end(const struct dso *d, uint64_t vaddr)
{
	for (size_t i = 0; i < d->nloads; i++)
		if (d->loads[i].vaddr <= vaddr && vaddr < d->loads[i].vaddr + d->loads[i].filesz)
			return d->loads[i].vaddr + d->loads[i].filesz;
	return 0;
}

/* Sort and deduplicate the candidates into d->syms, names copied to the
 * pool (the ELF data they point into goes away with the Dwfl). */
static int dso_take_symbols(struct symbols *s, struct dso *d, struct cands *cs)
{
	size_t k = 0;

	if (!cs->n)
		return 0;
	qsort(cs->c, cs->n, sizeof(*cs->c), cand_cmp);
	d->syms = malloc(cs->n * sizeof(*d->syms));
	if (!d->syms)
		return -ENOMEM;
	for (size_t i = 0, j; i < cs->n; i = j) {
		uint64_t size = 0;
		for (j = i; j < cs->n && cs->c[j].addr == cs->c[i].addr; j++)
			size = cs->c[j].size > size ? cs->c[j].size : size;
		d->syms[k].addr = cs->c[i].addr;
		d->syms[k].size = size;
		d->syms[k].shown = NULL;
		d->syms[k].name = pool_strndup(&s->pool, cs->c[i].name, cs->c[i].len);
		if (!d->syms[k].name)
			return -ENOMEM;
		k++;
	}
	/* Assembly often leaves st_size 0: such a symbol runs to the next
	 * one, but not past the end of its segment. */
	for (size_t i = 0; i < k; i++) {
		uint64_t end;
		if (d->syms[i].size)
			continue;
		end = load_end(d, d->syms[i].addr);
		if (i + 1 < k && (!end || d->syms[i + 1].addr < end))
			end = d->syms[i + 1].addr;
		d->syms[i].size = end > d->syms[i].addr ? end - d->syms[i].addr : 0;
	}
	d->nsyms = k;
	return 0;
}

static int dso_take_loads(struct dso *d, Elf *elf)
{
	size_t phnum;

	if (elf_getphdrnum(elf, &phnum) != 0)
		return -ENOEXEC;
	d->loads = calloc(phnum ? phnum : 1, sizeof(*d->loads));
	if (!d->loads)
		return -ENOMEM;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		d->loads[d->nloads++] = (struct dso_load){
			.off = ph.p_offset, .vaddr = ph.p_vaddr, .filesz = ph.p_filesz };
	}
	return 0;
}

static const Dwfl_Callbacks dwfl_callbacks = {
	.find_elf = dwfl_build_id_find_elf, /* unused: we hand over the fd */
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
};

static bool is_func(const GElf_Sym *sym, GElf_Word shndx)
{
	int type = GELF_ST_TYPE(sym->st_info);
	return (type == STT_FUNC || type == STT_GNU_IFUNC) && shndx != SHN_UNDEF && shndx != SHN_ABS;
}

static int dso_read_file(struct symbols *s, struct dso *d)
{
	struct cands cs = { 0 };
	Dwfl *dwfl = NULL;
	Dwfl_Module *mod;
	Dwarf_Addr bias = 0, dwbias;
	const unsigned char *bid;
	GElf_Addr bid_vaddr;
	struct stat st;
	Elf *elf;
	int fd, n, err;

	fd = open(d->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		goto out;
	}
	if (fstat(fd, &st) < 0) {
		err = -errno;
		goto out;
	}
	/* replaced since it was mapped: its symbols would be lies */
	if (d->stated && !same_file(d, &st)) {
		err = -ESTALE;
		goto out;
	}
	dwfl = dwfl_begin(&dwfl_callbacks);
	if (!dwfl) {
		err = -ENOMEM;
		goto out;
	}
	dwfl_report_begin(dwfl);
	mod = dwfl_report_elf(dwfl, d->path, d->path, fd, 0, true);
	if (!mod) {
		err = -ENOEXEC;
		goto out;
	}
	fd = -1; /* the module owns it now */
	dwfl_report_end(dwfl, NULL, NULL);

	/* The same build in another file (a copy, another container layer,
	 * another mount): use the tables already made, rather than reading
	 * and decompressing the same debug info again. */
	n = dwfl_module_build_id(mod, &bid, &bid_vaddr);
	if (n > 0) {
		d->twin = build_id_find(s, bid, (size_t)n);
		if (d->twin) {
			s->st.dsos_shared++;
			err = 0;
			goto out;
		}
		d->build_id = (const unsigned char *)pool_strndup(&s->pool, (const char *)bid, (size_t)n);
		if (!d->build_id) {
			err = -ENOMEM;
			goto out;
		}
		d->build_id_len = (size_t)n;
	}
	elf = dwfl_module_getelf(mod, &bias);
	if (!elf) {
		err = -ENOEXEC;
		goto out;
	}
	err = dso_take_loads(d, elf);
	if (err)
		goto out;

	n = dwfl_module_getsymtab(mod);
	for (int i = 0; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		GElf_Word shndx;
		const char *name = dwfl_module_getsym_info(mod, i, &sym, &addr, &shndx, NULL, NULL);

		if (!name || !*name || !is_func(&sym, shndx))
			continue;
		/* @addr is in the module's address space (bias applied, and
		 * for symbols from a separate debug file its own bias too) */
		err = cands_add(&cs, addr - bias, sym.st_size, name, (unsigned char)GELF_ST_BIND(sym.st_info));
		if (err)
			goto out;
	}
	err = dso_take_symbols(s, d, &cs);
	if (err)
		goto out;

	if (dwfl_module_getdwarf(mod, &dwbias)) {
		d->dwfl = dwfl;
		d->mod = mod;
		d->bias = bias;
		dwfl = NULL;
		s->st.dsos_dwarf++;
	}
	err = 0;
out:
	/* without DWARF nothing more is needed: close the file now so that
	 * thousands of DSOs do not hold thousands of descriptors */
	if (dwfl)
		dwfl_end(dwfl);
	if (fd >= 0)
		close(fd);
	free(cs.c);
	return err;
}

/* The vdso is not a file; every process on this kernel maps the same image
 * (for a given ABI), so read ours. */
static int dso_read_vdso(struct symbols *s, struct dso *d)
{
	unsigned long base = getauxval(AT_SYSINFO_EHDR);
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)base;
	struct cands cs = { 0 };
	Elf_Scn *scn = NULL;
	Elf *elf = NULL;
	char *image = NULL;
	size_t size;
	int err;

	if (!base || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64) {
		err = -ENOENT;
		goto out;
	}
	size = eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize;
	for (size_t i = 0; i < eh->e_phnum; i++) {
		const Elf64_Phdr *ph = (const Elf64_Phdr *)(base + eh->e_phoff + i * eh->e_phentsize);
		if (ph->p_type == PT_LOAD && ph->p_offset + ph->p_filesz > size)
			size = ph->p_offset + ph->p_filesz;
	}
	image = malloc(size);
	if (!image) {
		err = -ENOMEM;
		goto out;
	}
	memcpy(image, (const void *)base, size);
	elf = elf_memory(image, size);
	if (!elf) {
		err = -ENOEXEC;
		goto out;
	}
	err = dso_take_loads(d, elf);
	if (err)
		goto out;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;
		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_DYNSYM && sh.sh_type != SHT_SYMTAB) ||
		    !sh.sh_entsize || !(data = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *name;
			if (!gelf_getsym(data, (int)i, &sym) || !is_func(&sym, sym.st_shndx))
				continue;
			name = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (!name || !*name)
				continue;
			err = cands_add(&cs, sym.st_value, sym.st_size, name,
					(unsigned char)GELF_ST_BIND(sym.st_info));
			if (err)
				goto out;
		}
	}
	err = dso_take_symbols(s, d, &cs);
out:
	free(cs.c);
	if (elf)
		elf_end(elf);
	free(image);
	return err;
}

/* Read @d once; a file that cannot be read becomes DSO_MISSING. Returns 0
 * or -ENOMEM. */
static int dso_read(struct symbols *s, struct dso *d)
{
	int err = strcmp(d->path, "[vdso]") == 0 ? dso_read_vdso(s, d) : dso_read_file(s, d);

	s->st.dsos_opened++;
	if (!err && d->build_id && !d->twin)
		err = build_id_add(s, d);
	if (!err) {
		d->state = DSO_READY;
		return 0;
	}
	d->state = DSO_MISSING;
	d->err = err;
	s->st.dsos_missing++;
	free(d->syms);
	d->syms = NULL;
	d->nsyms = 0;
	free(d->loads);
	d->loads = NULL;
	d->nloads = 0;
	return err == -ENOMEM ? err : 0;
}

/* File offset -> ELF virtual address, through the PT_LOAD that maps it. */
static uint64_t dso_vaddr(const struct dso *d, uint64_t off)
{
	for (size_t i = 0; i < d->nloads; i++)
		if (d->loads[i].off <= off && off < d->loads[i].off + d->loads[i].filesz)
			return off - d->loads[i].off + d->loads[i].vaddr;
	if (d->nloads)
		return off - d->loads[0].off + d->loads[0].vaddr;
	return off;
}

static uint32_t dso_find_sym(const struct dso *d, uint64_t vaddr)
{
	size_t lo = 0, hi = d->nsyms;

	/* hi = number of symbols starting at or below vaddr */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (d->syms[mid].addr <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i > 0 && lo - i < ENCLOSING_LOOKBACK; i--) {
		const struct dso_sym *sym = &d->syms[i - 1];
		if (vaddr - sym->addr < sym->size)
			return (uint32_t)(i - 1);
	}
	return NONE;
}

static int dso_lookup(struct symbols *s, struct dso *d, uint64_t vaddr, struct dso_hit *out)
{
	int v = idmap_get(&d->hit_index, vaddr);
	struct dso_hit h = { .sym = NONE };
	int err;

	s->st.lookups++;
	if (v >= 0) {
		s->st.cache_hits++;
		*out = d->hits[v];
		return 0;
	}
	h.sym = dso_find_sym(d, vaddr);
	if (h.sym != NONE && !d->syms[h.sym].shown) {
		d->syms[h.sym].shown = shown_name(s, d->syms[h.sym].name);
		if (!d->syms[h.sym].shown)
			return -ENOMEM;
	}
	if (d->mod) {
		Dwfl_Line *l = dwfl_module_getsrc(d->mod, vaddr + d->bias);
		int line = 0;
		const char *file = l ? dwfl_lineinfo(l, NULL, &line, NULL, NULL, NULL) : NULL;
		if (file && line > 0) {
			h.file = file;
			h.line = line;
		}
	}
	err = array_grow(&d->hits, &d->caphits, d->nhits + 1, sizeof(*d->hits));
	if (err)
		return err;
	err = idmap_put(&d->hit_index, vaddr, (int)d->nhits);
	if (err)
		return err;
	d->hits[d->nhits++] = h;
	*out = h;
	return 0;
}

/* ---- kernel ---- */

static int ksym_cmp(const void *pa, const void *pb)
{
	const struct ksym *a = pa, *b = pb;
	size_t ua, ub;

	if (a->addr != b->addr)
		return a->addr < b->addr ? -1 : 1;
	ua = leading_underscores(a->name);
	ub = leading_underscores(b->name);
	if (ua != ub)
		return ua < ub ? -1 : 1;
	return strcmp(a->name, b->name);
}

/* Read /proc/kallsyms once. Unreadable, or all addresses 0 (kptr_restrict
 * for an unprivileged reader): no kernel names. Returns 0 or -ENOMEM. */
static int ksyms_read(struct symbols *s)
{
	const char *module = KERNEL_DSO;
	size_t cap = 0, len = 0, k = 0;
	char *line = NULL;
	bool nonzero = false;
	FILE *f;
	int err = 0;

	s->ksyms_read = true;
	f = fopen("/proc/kallsyms", "re");
	if (!f)
		return 0;
	while (getline(&line, &len, f) > 0) {
		char *p = line, *e, *name, *mod;
		uint64_t addr;
		char type;

		line[strcspn(line, "\n")] = '\0';
		errno = 0;
		addr = strtoull(p, &e, 16);
		if (e == p || *e != ' ' || errno == ERANGE || !e[1] || e[2] != ' ')
			continue;
		type = e[1];
		if (type != 't' && type != 'T' && type != 'w' && type != 'W')
			continue;
		name = e + 3;
		mod = strchr(name, '\t');
		if (mod)
			*mod++ = '\0';
		if (array_grow(&s->ksyms, &cap, s->nksyms + 1, sizeof(*s->ksyms))) {
			err = -ENOMEM;
			goto out;
		}
		if (mod && strcmp(mod, module) != 0) {
			module = pool_strdup(&s->pool, mod);
			if (!module) {
				err = -ENOMEM;
				goto out;
			}
		} else if (!mod) {
			module = KERNEL_DSO;
		}
		s->ksyms[s->nksyms].addr = addr;
		s->ksyms[s->nksyms].name = pool_strdup(&s->pool, name);
		s->ksyms[s->nksyms].module = module;
		if (!s->ksyms[s->nksyms].name) {
			err = -ENOMEM;
			goto out;
		}
		s->nksyms++;
		nonzero |= addr != 0;
	}
	if (!nonzero) {
		s->nksyms = 0;
		goto out;
	}
	qsort(s->ksyms, s->nksyms, sizeof(*s->ksyms), ksym_cmp);
	for (size_t i = 0; i < s->nksyms; i++)
		if (k == 0 || s->ksyms[k - 1].addr != s->ksyms[i].addr)
			s->ksyms[k++] = s->ksyms[i];
	s->nksyms = k;
	for (size_t i = 0; i < k; i++) {
		struct ksym *ks = &s->ksyms[i];
		if (i + 1 == k)
			ks->end = ks->addr; /* unknown size: only its first byte */
		else if (s->ksyms[i + 1].module != ks->module && strcmp(s->ksyms[i + 1].module, ks->module))
			ks->end = s->ksyms[i + 1].addr - ks->addr > KSYM_MAX_TAIL ? ks->addr + KSYM_MAX_TAIL
										   : s->ksyms[i + 1].addr;
		else
			ks->end = s->ksyms[i + 1].addr;
	}
out:
	if (err)
		s->nksyms = 0;
	free(line);
	fclose(f);
	return err;
}

static int resolve_kernel(struct symbols *s, uint64_t ip, struct symbol_info *out)
{
	size_t lo = 0, hi;
	int err;

	out->kind = SYMBOL_KERNEL;
	out->dso = KERNEL_DSO;
	out->name = KERNEL_NAME;
	if (!s->ksyms_read) {
		err = ksyms_read(s);
		if (err)
			return err;
	}
	hi = s->nksyms;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (s->ksyms[mid].addr <= ip)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || (ip >= s->ksyms[lo - 1].end && ip != s->ksyms[lo - 1].addr))
		return -ENOENT;
	out->dso = s->ksyms[lo - 1].module;
	out->name = s->ksyms[lo - 1].name;
	out->offset = ip - s->ksyms[lo - 1].addr;
	return 0;
}

/* ---- JIT: /tmp/perf-PID.map ---- */

static int jit_cmp(const void *pa, const void *pb)
{
	const struct jit_sym *a = pa, *b = pb;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return a->order < b->order ? -1 : a->order > b->order;
}

/* Lines are "START SIZE name", START and SIZE in hex (perf's format; the
 * name may contain spaces). Bad lines are skipped: the file is written by
 * the JIT while it runs and may end mid-line. Returns 0 or -ENOMEM. */
static int perfmap_read(struct symbols *s, struct proc *p)
{
	char path[64], *line = NULL;
	size_t len = 0, cap = 0, order = 0;
	FILE *f;
	int err = 0;

	p->perfmap_read = true;
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)p->pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	p->perfmap_path = pool_strdup(&s->pool, path);
	if (!p->perfmap_path) {
		err = -ENOMEM;
		goto out;
	}
	while (getline(&line, &len, f) > 0) {
		char *e1, *e2, *name;
		uint64_t start, size;

		order++;
		line[strcspn(line, "\n")] = '\0';
		errno = 0;
		start = strtoull(line, &e1, 16);
		if (e1 == line || *e1 != ' ')
			continue;
		size = strtoull(e1 + 1, &e2, 16);
		if (e2 == e1 + 1 || *e2 != ' ' || errno == ERANGE || !size || start + size < start)
			continue;
		name = e2 + 1;
		if (!*name)
			continue;
		if (array_grow(&p->jit, &cap, p->njit + 1, sizeof(*p->jit))) {
			err = -ENOMEM;
			goto out;
		}
		p->jit[p->njit] = (struct jit_sym){ .start = start, .end = start + size, .order = order };
		p->jit[p->njit].name = shown_name(s, name);
		if (p->jit[p->njit].name == name)
			p->jit[p->njit].name = pool_strdup(&s->pool, name);
		if (!p->jit[p->njit].name) {
			err = -ENOMEM;
			goto out;
		}
		p->njit++;
	}
	qsort(p->jit, p->njit, sizeof(*p->jit), jit_cmp);
out:
	free(line);
	fclose(f);
	return err;
}

static const struct jit_sym *perfmap_find(const struct proc *p, uint64_t ip)
{
	const struct jit_sym *best = NULL;
	size_t lo = 0, hi = p->njit;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (p->jit[mid].start <= ip)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* code regions get reused: among overlapping entries the last written wins */
	for (size_t i = lo; i > 0 && lo - i < 16; i--) {
		const struct jit_sym *j = &p->jit[i - 1];
		if (ip < j->end && (!best || j->order > best->order))
			best = j;
	}
	return best;
}

static int resolve_jit(struct symbols *s, pid_t pid, const struct map *m, uint64_t ip,
		       struct symbol_info *out)
{
	const struct jit_sym *j;
	struct proc *p;
	int err;

	if (m) {
		out->kind = SYMBOL_JIT;
		out->dso = m->name;
		out->dso_addr = ip - m->start;
	}
	err = proc_get(s, pid, &p);
	if (err)
		return err;
	if (!p->perfmap_read) {
		err = perfmap_read(s, p);
		if (err)
			return err;
	}
	j = perfmap_find(p, ip);
	if (!j)
		return -ENOENT;
	if (!m) {
		/* no mapping was recorded for it, but the JIT says it wrote code there */
		out->kind = SYMBOL_JIT;
		out->dso = p->perfmap_path;
		out->dso_addr = ip;
	}
	out->name = j->name;
	out->offset = ip - j->start;
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

/* "start-end perms offset dev inode   path" */
static int parse_maps_line(char *line, uint64_t *start, uint64_t *end, int *exec, uint64_t *pgoff,
			   const char **path)
{
	char *p = line, *e;

	errno = 0;
	*start = strtoull(p, &e, 16);
	if (e == p || *e != '-')
		return -EINVAL;
	p = e + 1;
	*end = strtoull(p, &e, 16);
	if (e == p || *e != ' ')
		return -EINVAL;
	p = e + 1;
	if (strnlen(p, 5) < 5 || p[4] != ' ')
		return -EINVAL;
	*exec = p[2] == 'x';
	p += 5;
	*pgoff = strtoull(p, &e, 16);
	if (e == p || *e != ' ')
		return -EINVAL;
	p = strchr(e + 1, ' '); /* past "maj:min" */
	if (!p)
		return -EINVAL;
	p++;
	(void)strtoull(p, &e, 10); /* inode */
	if (e == p || (*e != ' ' && *e != '\n' && *e != '\0'))
		return -EINVAL;
	if (errno == ERANGE || *end < *start)
		return -EINVAL;
	p = e + strspn(e, " ");
	p[strcspn(p, "\n")] = '\0';
	*path = p;
	return 0;
}

int symbols_add_proc_maps(struct symbols *s, pid_t pid)
{
	char path[64], *line = NULL;
	size_t len = 0;
	FILE *f;
	int err = 0;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (getline(&line, &len, f) > 0) {
		uint64_t start, end, pgoff;
		const char *name;
		int exec;

		err = parse_maps_line(line, &start, &end, &exec, &pgoff, &name);
		if (err)
			goto out;
		if (!exec || end == start)
			continue;
		err = symbols_add_map(s, pid, start, end - start, pgoff, name, exec);
		if (err)
			goto out;
	}
out:
	free(line);
	fclose(f);
	return err;
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
	if (ip >= KERNEL_START)
		return resolve_kernel(s, ip, out);
	p = proc_find(s, pid);
	if (p)
		m = proc_map_find(p, ip);
	if (!m || m->kind == MAP_JIT)
		return resolve_jit(s, pid, m, ip, out);
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
	return 0;
}
