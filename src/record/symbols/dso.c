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
	free(d->addrs);
	idmap_fini(&d->hit_index);
	free(d->hits);
	free(d);
}

/* ---- DSOs: reading symbols ---- */

const char *cands_keep(struct cands *cs, char *name)
{
	if (!name || array_grow(&cs->own, &cs->capown, cs->nown + 1, sizeof(*cs->own))) {
		free(name);
		return NULL;
	}
	return cs->own[cs->nown++] = name;
}

void cands_free(struct cands *cs)
{
	for (size_t i = 0; i < cs->nown; i++)
		free(cs->own[i]);
	free(cs->own);
	free(cs->c);
}

int cands_add(struct cands *cs, uint64_t addr, uint64_t size, const char *name,
		     unsigned char bind)
{
	if (name[0] == '@')
		return 0;
	if (array_grow(&cs->c, &cs->cap, cs->n + 1, sizeof(*cs->c)))
		return -ENOMEM;
	/* .symtab names of versioned definitions carry the version
	 * ("fopen@@GLIBC_2.2.5"); what the program calls is the part before */
	cs->c[cs->n++] = (struct cand){
		.addr = addr, .size = size, .name = name, .len = strcspn(name, "@"), .bind = bind, .plt = false };
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

/* The symbol covering @vaddr, given @lo = the number of symbols starting
 * at or below it, or NONE. */
static uint32_t sym_covering(const struct dso *d, size_t lo, uint64_t vaddr)
{
	for (size_t i = lo; i > 0 && lo - i < ENCLOSING_LOOKBACK; i--) {
		const struct dso_sym *sym = &d->syms[i - 1];
		if (vaddr - sym->addr < sym->size)
			return (uint32_t)(i - 1);
	}
	return NONE;
}

/* The symbol covering @vaddr (index in d->syms), or NONE. */
static uint32_t dso_find_sym_index(const struct dso *d, uint64_t vaddr)
{
	size_t lo = 0, hi = d->nsyms;

	/* lo = number of symbols starting at or below vaddr */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (d->addrs[mid] <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return sym_covering(d, lo, vaddr);
}

/* The first of the @n sorted @fdes starting above @addr, or @n. */
static size_t fde_above(const struct dso_fde *fdes, size_t n, uint64_t addr)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (fdes[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Sort and deduplicate the candidates into d->syms, names copied to the
 * pool (the ELF data they point into goes away with the Dwfl). The @nfdes
 * sorted @fdes bound the symbols that have no size. */
static int dso_take_symbols(struct symbols *s, struct dso *d, struct cands *cs, const struct dso_fde *fdes,
			    size_t nfdes)
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
		d->syms[k].size = size > UINT32_MAX ? UINT32_MAX : (uint32_t)size;
		d->syms[k].shown = NULL;
		d->syms[k].source = cs->c[i].plt ? SYMBOL_FROM_PLT : SYMBOL_FROM_TABLE;
		if (cs->c[i].plt) {
			char *n = malloc(cs->c[i].len + sizeof("@plt"));
			if (!n)
				return -ENOMEM;
			memcpy(n, cs->c[i].name, cs->c[i].len);
			memcpy(n + cs->c[i].len, "@plt", sizeof("@plt"));
			d->syms[k].name = pool_strdup(&s->pool, n);
			free(n);
		} else {
			d->syms[k].name = pool_strndup(&s->pool, cs->c[i].name, cs->c[i].len);
		}
		if (!d->syms[k].name)
			return -ENOMEM;
		k++;
	}
	/* Assembly often leaves st_size 0: such a symbol runs to the next
	 * one, but not past the end of its segment, nor into the next
	 * function that .eh_frame knows of (or to the end of its own FDE). */
	for (size_t i = 0; i < k; i++) {
		uint64_t end;
		size_t f;
		if (d->syms[i].size)
			continue;
		end = load_end(d, d->syms[i].addr);
		if (i + 1 < k && (!end || d->syms[i + 1].addr < end))
			end = d->syms[i + 1].addr;
		f = fde_above(fdes, nfdes, d->syms[i].addr);
		if (f > 0 && fdes[f - 1].start == d->syms[i].addr && fdes[f - 1].end < end)
			end = fdes[f - 1].end;
		else if (f < nfdes && fdes[f].start < end)
			end = fdes[f].start;
		end = end > d->syms[i].addr ? end - d->syms[i].addr : 0;
		d->syms[i].size = end > UINT32_MAX ? UINT32_MAX : (uint32_t)end;
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
			.off = ph.p_offset, .vaddr = ph.p_vaddr, .filesz = ph.p_filesz, .exec = ph.p_flags & PF_X };
	}
	return 0;
}

/* libdwfl's search for a separate debug file (build ID under each debug
 * directory, .gnu_debuglink next to the file, in its .debug/ and under each
 * debug directory, then debuginfod), with the file identity of the user the
 * recording belongs to: under sudo, a debuglink or a path they control
 * reaches no file they could not read themselves (asuser.h). */
int dso_find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
		       const char *file_name, const char *debuglink_file, GElf_Word debuglink_crc,
		       char **debuginfo_file_name)
{
	struct asuser_saved sv;
	int fd;

	if (asuser_enter(asuser_owner(), &sv) != 0) {
		errno = EPERM;
		return -1;
	}
	fd = dwfl_standard_find_debuginfo(mod, userdata, modname, base, file_name, debuglink_file, debuglink_crc,
					  debuginfo_file_name);
	asuser_leave(&sv);
	return fd;
}

/* The functions no symbol names, known from .eh_frame: the @nfdes sorted
 * @fdes whose start no symbol (nor a PLT section, whose FDE spans all its
 * stubs) covers join d->syms, nameless, so that one bisection finds either.
 * Returns 0 or -ENOMEM. */
static int dso_add_unnamed(struct dso *d, struct dso_fde *fdes, size_t nfdes, uint64_t (*plt)[2], size_t nplt)
{
	size_t k = 0, lo = 0, n = 0;
	struct dso_sym *all;

	/* both sorted: one walk */
	for (size_t i = 0; i < nfdes; i++) {
		uint64_t a = fdes[i].start;
		bool drop;
		while (lo < d->nsyms && d->syms[lo].addr <= a)
			lo++;
		drop = sym_covering(d, lo, a) != NONE;
		for (size_t j = 0; !drop && j < nplt; j++)
			drop = a >= plt[j][0] && a < plt[j][1];
		if (!drop && k && a < fdes[k - 1].end)
			drop = true; /* overlaps the previous one: keep the first */
		/* nor into a symbol that starts inside it */
		if (!drop && lo < d->nsyms && d->syms[lo].addr < fdes[i].end)
			fdes[i].end = d->syms[lo].addr;
		if (!drop)
			fdes[k++] = fdes[i];
	}
	if (!k)
		return 0;
	all = malloc((d->nsyms + k) * sizeof(*all));
	if (!all)
		return -ENOMEM;
	for (size_t i = 0, j = 0; i < d->nsyms || j < k;) {
		if (j == k || (i < d->nsyms && d->syms[i].addr < fdes[j].start)) {
			all[n++] = d->syms[i++];
		} else {
			uint64_t size = fdes[j].end - fdes[j].start;
			all[n++] = (struct dso_sym){ .addr = fdes[j].start,
						     .size = size > UINT32_MAX ? UINT32_MAX : (uint32_t)size,
						     .source = SYMBOL_FROM_EH_FRAME };
			j++;
		}
	}
	free(d->syms);
	d->syms = all;
	d->nsyms = n;
	return 0;
}

static bool is_func(const GElf_Sym *sym, GElf_Word shndx)
{
	int type = GELF_ST_TYPE(sym->st_info);
	return (type == STT_FUNC || type == STT_GNU_IFUNC) && shndx != SHN_UNDEF && shndx != SHN_ABS;
}

/* @d's file, opened as the target's user and checked: a descriptor, or
 * -errno. A path the target mapped: under sudo its user may have swapped
 * it for a link to a root-only binary since. Opened as them (asuser.h): no
 * symbol leaves a file they could not read. */
static int dso_open(struct dso *d)
{
	struct stat st;
	int fd, err = 0;

	fd = asuser_open(asuser_owner(), d->path, O_RDONLY | O_NONBLOCK | O_CLOEXEC, 0);
	if (fd < 0)
		return fd;
	if (fstat(fd, &st) < 0)
		err = -errno;
	/* replaced since it was mapped: its symbols would be lies */
	else if (!S_ISREG(st.st_mode))
		err = -ENOEXEC;
	else if (d->stated && !same_file(d, &st))
		err = -ESTALE;
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

/* @mod's build id kept in @d. The same build in another file (a copy,
 * another container layer, another mount): use the tables already made,
 * rather than reading and decompressing the same debug info again.
 * Returns 1 when @d has such a twin, 0, or -errno. */
static int dso_build_id(struct symbols *s, struct dso *d, Dwfl_Module *mod)
{
	const unsigned char *bid;
	GElf_Addr bid_vaddr;
	int n = dwfl_module_build_id(mod, &bid, &bid_vaddr);

	if (n <= 0)
		return 0;
	d->twin = build_id_find(s, bid, (size_t)n);
	if (d->twin) {
		s->st.dsos_shared++;
		return 1;
	}
	d->build_id = (const unsigned char *)pool_strndup(&s->pool, (const char *)bid, (size_t)n);
	if (!d->build_id)
		return -ENOMEM;
	d->build_id_len = (size_t)n;
	return 0;
}

/* @mod's functions (from .symtab or .dynsym, and a separate debug file's)
 * as candidates, at file addresses (@bias taken off). */
static int dso_functions(Dwfl_Module *mod, Dwarf_Addr bias, struct cands *cs)
{
	int n = dwfl_module_getsymtab(mod);

	for (int i = 0; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		GElf_Word shndx;
		const char *name = dwfl_module_getsym_info(mod, i, &sym, &addr, &shndx, NULL, NULL);

		if (!name || !*name || !is_func(&sym, shndx))
			continue;
		/* @addr is in the module's address space (bias applied, and
		 * for symbols from a separate debug file its own bias too) */
		int err = cands_add(cs, addr - bias, sym.st_size, name, (unsigned char)GELF_ST_BIND(sym.st_info));
		if (err)
			return err;
	}
	return 0;
}

static int dso_read_file(struct symbols *s, struct dso *d)
{
	struct cands cs = { 0 };
	Dwfl *dwfl = NULL;
	Dwfl_Module *mod;
	Dwarf_Addr bias = 0, dwbias;
	struct dso_fde *fdes = NULL;
	uint64_t plt[8][2];
	size_t nplt = 0, nfdes = 0;
	Elf *elf;
	int fd, err;

	fd = dso_open(d);
	if (fd < 0) {
		err = fd;
		fd = -1;
		goto out;
	}
	dwfl = dwfl_begin(&s->callbacks);
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

	err = dso_build_id(s, d, mod);
	if (err) {
		err = err > 0 ? 0 : err; /* a twin: its tables serve */
		goto out;
	}
	elf = dwfl_module_getelf(mod, &bias);
	if (!elf) {
		err = -ENOEXEC;
		goto out;
	}
	err = dso_take_loads(d, elf);
	if (!err)
		err = stubs_read(elf, &cs, plt, ARRAY_SIZE(plt), &nplt);
	if (!err)
		err = eh_frame_read(elf, d->loads, d->nloads, &fdes, &nfdes);
	if (!err)
		err = dso_functions(mod, bias, &cs);
	if (!err)
		err = dso_take_symbols(s, d, &cs, fdes, nfdes);
	if (!err)
		err = dso_add_unnamed(d, fdes, nfdes, plt, nplt);
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
	cands_free(&cs);
	free(fdes);
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
	struct dso_fde *fdes = NULL;
	uint64_t plt[8][2];
	size_t size, nplt = 0, nfdes = 0;
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
	err = stubs_read(elf, &cs, plt, ARRAY_SIZE(plt), &nplt);
	if (!err)
		err = eh_frame_read(elf, d->loads, d->nloads, &fdes, &nfdes);
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
	err = dso_take_symbols(s, d, &cs, fdes, nfdes);
	if (!err)
		err = dso_add_unnamed(d, fdes, nfdes, plt, nplt);
out:
	cands_free(&cs);
	free(fdes);
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
	if (!err && d->nsyms) {
		d->addrs = malloc(d->nsyms * sizeof(*d->addrs));
		if (!d->addrs)
			err = -ENOMEM;
		for (size_t i = 0; !err && i < d->nsyms; i++)
			d->addrs[i] = d->syms[i].addr;
	}
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
	free(d->addrs);
	d->addrs = NULL;
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

/* "libfoo.so.1+0x1a2b0": the function of @d at ELF address @start, which
 * no symbol names, after the file it is in (the DSO column has the whole
 * path); into the pool. NULL on -ENOMEM. */
static const char *fde_name(struct symbols *s, const struct dso *d, uint64_t start)
{
	const char *base = strrchr(d->path, '/');
	char buf[NAME_MAX + 32];
	size_t len;

	base = base ? base + 1 : d->path;
	len = strlen(base);
	/* a file name has at most NAME_MAX bytes; a longer one is not a file's */
	if (len > NAME_MAX)
		len = NAME_MAX;
	memcpy(buf, base, len);
	/* by hand: a million of these must not cost a million snprintf()s */
	buf[len++] = '+';
	buf[len++] = '0';
	buf[len++] = 'x';
	{
		int digits = 1;
		while (digits < 16 && start >> (4 * digits))
			digits++;
		for (int i = digits - 1; i >= 0; i--)
			buf[len++] = "0123456789abcdef"[(start >> (4 * i)) & 0xf];
	}
	return pool_strndup(&s->pool, buf, len);
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
	h.sym = dso_find_sym_index(d, vaddr);
	if (h.sym != NONE && !d->syms[h.sym].shown) {
		struct dso_sym *sym = &d->syms[h.sym];
		sym->shown = sym->name ? shown_name(s, sym->name) : fde_name(s, d, sym->addr);
		if (!sym->shown)
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

