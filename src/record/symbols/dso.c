/* Files: identity, symbol and line tables, lookups (symbols_impl.h). */
#include "symbols_impl.h"
#include "asuser.h"

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
int dso_get(struct symbols *s, const char *path, bool deleted, struct dso **out)
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

void dso_free(struct dso *d)
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

size_t leading_underscores(const char *s)
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

	/* A path the target mapped: under sudo its user may have swapped it
	 * for a link to a root-only binary since. Opened as them (asuser.h):
	 * no symbol leaves a file they could not read. */
	fd = asuser_open(asuser_owner(), d->path, O_RDONLY | O_NONBLOCK | O_CLOEXEC, 0);
	if (fd < 0) {
		err = fd;
		fd = -1;
		goto out;
	}
	if (fstat(fd, &st) < 0) {
		err = -errno;
		goto out;
	}
	/* replaced since it was mapped: its symbols would be lies */
	if (!S_ISREG(st.st_mode)) {
		err = -ENOEXEC;
		goto out;
	}
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
int dso_read(struct symbols *s, struct dso *d)
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
uint64_t dso_vaddr(const struct dso *d, uint64_t off)
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

int dso_lookup(struct symbols *s, struct dso *d, uint64_t vaddr, struct dso_hit *out)
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

