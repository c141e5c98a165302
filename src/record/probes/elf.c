/* ELF files and the functions in them (probes_impl.h). */
#include "probes_impl.h"

/* ==== ELF files ==== */


void elf_file_close(struct elf_file *f)
{
	if (f->elf)
		elf_end(f->elf);
	if (f->fd >= 0)
		close(f->fd);
	free(f->load);
	f->elf = NULL;
	f->fd = -1;
	f->load = NULL;
}

int elf_file_open(const char *path, struct elf_file *f, char *why, size_t whylen)
{
	size_t nph;
	int err;

	memset(f, 0, sizeof(*f));
	f->fd = -1;
	elf_version(EV_CURRENT);
	/* a file the user named or their program mapped: read as them
	 * (asuser.h), so a link reaches nothing of root's */
	f->fd = asuser_open(asuser_owner(), path, O_RDONLY | O_NONBLOCK | O_CLOEXEC, 0);
	if (f->fd < 0) {
		err = f->fd;
		f->fd = -1;
		probes_why(why, whylen, "cannot open %s: %s", path, strerror(-err));
		goto out;
	}
	f->elf = elf_begin(f->fd, ELF_C_READ_MMAP, NULL);
	if (!f->elf || elf_kind(f->elf) != ELF_K_ELF || !gelf_getehdr(f->elf, &f->ehdr) ||
	    (f->ehdr.e_type != ET_EXEC && f->ehdr.e_type != ET_DYN) ||
	    elf_getphdrnum(f->elf, &nph) != 0) {
		err = -ENOEXEC;
		probes_why(why, whylen, "%s is not an ELF executable or shared library", path);
		goto out;
	}
	f->load = calloc(nph ? nph : 1, sizeof(*f->load));
	if (!f->load) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(f->elf, (int)i, &ph) && ph.p_type == PT_LOAD)
			f->load[f->nload++] = ph;
	}
	return 0;
out:
	elf_file_close(f);
	return err;
}

/* The file offset of ELF address @vaddr: through the PT_LOAD whose
 * file-backed part holds it (off = vaddr - p_vaddr + p_offset), restricted
 * to executable segments with @exec. -ERANGE when none does. */
int vaddr_to_offset(const struct elf_file *f, uint64_t vaddr, int exec, uint64_t *off)
{
	for (size_t i = 0; i < f->nload; i++) {
		const GElf_Phdr *ph = &f->load[i];

		if (exec && !(ph->p_flags & PF_X))
			continue;
		if (vaddr >= ph->p_vaddr && vaddr - ph->p_vaddr < ph->p_filesz) {
			*off = vaddr - ph->p_vaddr + ph->p_offset;
			return 0;
		}
	}
	return -ERANGE;
}

Elf_Scn *find_section(Elf *elf, const char *name, GElf_Shdr *sh)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *n;

		if (!gelf_getshdr(scn, sh))
			continue;
		n = elf_strptr(elf, shstrndx, sh->sh_name);
		if (n && !strcmp(n, name))
			return scn;
	}
	return NULL;
}

void site_init(struct probe_site *s, const char *path)
{
	memset(s, 0, sizeof(*s));
	snprintf(s->path, sizeof(s->path), "%s", path);
}

/* ==== functions ==== */

/* Skip an operator's symbol after "operator" so that "operator<" or
 * "operator()" do not look like brackets. */
static const char *skip_operator(const char *p)
{
	if (p[0] == '(' && p[1] == ')')
		return p + 2;
	if (p[0] == '[' && p[1] == ']')
		return p + 2;
	while (*p && strchr("<>=!+-*/%^&|~,", *p))
		p++;
	return p;
}

/* In demangled @d, where the function's parameter list starts: the last
 * top-level '(' whose group is followed only by cv/ref qualifiers. NULL when
 * there is none (or a " [clone .x]" suffix follows: a clone is not the
 * function). */
static const char *param_list(const char *d)
{
	const char *open = NULL, *close = NULL;
	int depth = 0;

	for (const char *p = d; *p; p++) {
		if (!strncmp(p, "operator", 8) && (p == d || p[-1] == ':' || p[-1] == ' ')) {
			p = skip_operator(p + 8) - 1;
			continue;
		}
		switch (*p) {
		case '<':
		case '[':
			depth++;
			break;
		case '>':
		case ']':
			depth--;
			break;
		case '(':
			if (depth++ == 0)
				open = p;
			break;
		case ')':
			if (--depth == 0)
				close = p;
			break;
		}
	}
	if (!open || !close || close < open)
		return NULL;
	for (const char *q = close + 1; *q;) {
		static const char *const quals[] = { " const", " volatile", " &&", " &",
						     " noexcept" };
		size_t i;

		for (i = 0; i < ARRAY_SIZE(quals); i++) {
			size_t l = strlen(quals[i]);
			if (!strncmp(q, quals[i], l)) {
				q += l;
				break;
			}
		}
		if (i == ARRAY_SIZE(quals))
			return NULL;
	}
	return open;
}

/* Does demangled name @d designate @q: equal, with or without the
 * parameter list, with or without the return type that template functions
 * carry ("int f<int>(int)" for "f<int>" or "f<int>(int)")? */
static int demangled_matches(const char *d, const char *q)
{
	size_t qn = strlen(q);
	const char *pl, *start = NULL, *end = d + strlen(d);
	int depth = 0;

	if (!strcmp(d, q))
		return 1;
	pl = param_list(d);
	if (!pl)
		return 0;
	if ((size_t)(pl - d) == qn && !memcmp(d, q, qn))
		return 1;
	/* the last top-level space before the name ends a return type */
	for (const char *p = d; p < pl; p++) {
		if (!strncmp(p, "operator", 8) && (p == d || p[-1] == ':' || p[-1] == ' ')) {
			p = skip_operator(p + 8) - 1;
			continue;
		}
		if (*p == '<' || *p == '(')
			depth++;
		else if ((*p == '>' || *p == ')') && depth > 0)
			depth--;
		else if (*p == ' ' && depth == 0)
			start = p + 1;
	}
	if (!start)
		return 0;
	return ((size_t)(pl - start) == qn && !memcmp(start, q, qn)) ||
	       ((size_t)(end - start) == qn && !memcmp(start, q, qn));
}

/* The function's own identifier in a (demangled or plain) name, without
 * scope, template arguments or parameters: "ns::Cls<int>::run(int) const"
 * -> "run", "ns::~Cls()" -> "Cls", "int f<int>(int)" -> "f". Operators
 * give "" (no shortcut is safe for them). */
static void name_base(const char *q, char *out, size_t len)
{
	const char *pl = param_list(q), *end = pl ? pl : q + strlen(q), *start = q;
	int depth = 0;

	out[0] = '\0';
	/* the last "::" or space outside template arguments starts the name */
	for (const char *p = q; p < end; p++) {
		if (*p == '<' || *p == '(')
			depth++;
		else if ((*p == '>' || *p == ')') && depth > 0)
			depth--;
		else if (depth == 0 && p[0] == ':' && p[1] == ':')
			start = p + 2;
		else if (depth == 0 && *p == ' ')
			start = p + 1;
	}
	if (*start == '~')
		start++;
	if (!strncmp(start, "operator", 8))
		return;
	end = start + strcspn(start, "<(");
	if (end > start && (size_t)(end - start) < len) {
		memcpy(out, start, (size_t)(end - start));
		out[end - start] = '\0';
	}
}

struct func_cand {
	uint64_t value, size;
	unsigned char type, bind;
	int hidden;  /* a non-default symbol version (name@VER, not name@@VER) */
	int exported; /* global or weak, default or protected visibility */
	char *name;  /* demangled when mangled, malloc'd */
	char *label; /* name@VER when versioned, for messages, malloc'd */
};

struct func_search {
	const char *q;
	char qname[PROBE_NAME_MAX]; /* @q without "@VER" */
	const char *qver;           /* the version asked for, or NULL */
	char base[PROBE_NAME_MAX];  /* name_base(qname) */
	struct func_cand *c;
	size_t n, cap;
	int undefined; /* a matching undefined (imported) symbol was seen */
	int not_func;  /* a matching symbol that is not a function was seen */
	char near[MAX_LISTED][PROBE_NAME_MAX];
	size_t nnear;
};

static int sym_exported(const GElf_Sym *sym)
{
	unsigned bind = GELF_ST_BIND(sym->st_info), vis = GELF_ST_VISIBILITY(sym->st_other);

	return (bind == STB_GLOBAL || bind == STB_WEAK || bind == STB_GNU_UNIQUE) &&
	       (vis == STV_DEFAULT || vis == STV_PROTECTED);
}

static int cand_add(struct func_search *fs, const GElf_Sym *sym, const char *shown,
		    const char *label, int hidden)
{
	struct func_cand *c;

	for (size_t i = 0; i < fs->n; i++)
		if (fs->c[i].value == sym->st_value) {
			/* an alias, or the .dynsym copy: keep the sized one */
			if (!fs->c[i].size && sym->st_size)
				fs->c[i].size = sym->st_size;
			fs->c[i].hidden &= hidden;
			fs->c[i].exported |= sym_exported(sym);
			return 0;
		}
	if (array_grow(&fs->c, &fs->cap, fs->n + 1, sizeof(*fs->c)))
		return -ENOMEM;
	c = &fs->c[fs->n];
	c->name = strdup(shown);
	c->label = strdup(label);
	if (!c->name || !c->label) {
		free(c->name);
		free(c->label);
		return -ENOMEM;
	}
	c->value = sym->st_value;
	c->size = sym->st_size;
	c->type = GELF_ST_TYPE(sym->st_info);
	c->bind = GELF_ST_BIND(sym->st_info);
	c->hidden = hidden;
	c->exported = sym_exported(sym);
	fs->n++;
	return 0;
}

static void near_add(struct func_search *fs, const char *shown)
{
	for (size_t i = 0; i < fs->nnear; i++)
		if (!strcmp(fs->near[i], shown))
			return;
	if (fs->nnear < MAX_LISTED)
		snprintf(fs->near[fs->nnear++], PROBE_NAME_MAX, "%s", shown);
}

/* Version names of a .dynsym (index -> name from SHT_GNU_verdef). */
struct versions {
	Elf_Data *versym;
	const char **name;
	size_t n;
};

static void versions_load(Elf *elf, struct versions *v)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	memset(v, 0, sizeof(*v));
	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_GNU_versym) {
			v->versym = elf_getdata(scn, NULL);
		} else if (sh.sh_type == SHT_GNU_verdef) {
			Elf_Data *d = elf_getdata(scn, NULL);
			size_t off = 0;
			GElf_Verdef vd;

			for (size_t k = 0; d && k < sh.sh_info && gelf_getverdef(d, (int)off, &vd); k++) {
				GElf_Verdaux va;

				if (vd.vd_ndx >= v->n) {
					size_t nn = (size_t)vd.vd_ndx + 1;
					const char **np = realloc(v->name, nn * sizeof(*np));
					if (!np)
						break;
					memset(np + v->n, 0, (nn - v->n) * sizeof(*np));
					v->name = np;
					v->n = nn;
				}
				if (gelf_getverdaux(d, (int)(off + vd.vd_aux), &va))
					v->name[vd.vd_ndx] = elf_strptr(elf, sh.sh_link, va.vda_name);
				if (!vd.vd_next)
					break;
				off += vd.vd_next;
			}
		}
	}
}

/* Scan one symbol table for @fs->q. */
static int scan_symtab(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh, struct func_search *fs,
		       const struct versions *vers)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t qn = strlen(fs->qname), nsym;
	int err = 0;

	if (!data || !sh->sh_entsize)
		return 0;
	nsym = sh->sh_size / sh->sh_entsize;
	for (size_t i = 1; i < nsym && !err; i++) {
		GElf_Sym sym;
		const char *raw, *ver = NULL, *at;
		char name[PROBE_NAME_MAX], label[PROBE_NAME_MAX + 64], *dem = NULL;
		const char *shown;
		int match, hidden = 0;
		unsigned type;

		if (!gelf_getsym(data, (int)i, &sym))
			continue;
		raw = elf_strptr(elf, sh->sh_link, sym.st_name);
		if (!raw || !*raw || strlen(raw) >= sizeof(name))
			continue;
		/* "f@@V" (default) or "f@V" (kept for old binaries) in a
		 * .symtab; the .dynsym keeps versions in .gnu.version */
		at = strchr(raw, '@');
		if (at) {
			memcpy(name, raw, (size_t)(at - raw));
			name[at - raw] = '\0';
			hidden = at[1] != '@';
			ver = at + (hidden ? 1 : 2);
		} else {
			strcpy(name, raw);
			if (vers && vers->versym) {
				GElf_Versym vs;
				if (gelf_getversym(vers->versym, (int)i, &vs)) {
					hidden = !!(vs & 0x8000);
					vs &= 0x7fff;
					if (vs >= 2 && vs < vers->n && vers->name[vs])
						ver = vers->name[vs];
				}
			}
		}
		match = !strcmp(name, fs->qname);
		if (!strncmp(name, "_Z", 2) && (!fs->base[0] || strstr(name, fs->base)))
			symbols_demangle(name, &dem);
		if (!match && dem)
			match = demangled_matches(dem, fs->qname);
		if (match && fs->qver)
			match = ver && !strcmp(ver, fs->qver);
		shown = dem ? dem : name;
		snprintf(label, sizeof(label), "%s%s%s", shown, ver ? "@" : "", ver ? ver : "");
		type = GELF_ST_TYPE(sym.st_info);
		if (match) {
			if (sym.st_shndx == SHN_UNDEF)
				fs->undefined = 1;
			else if (type == STT_FUNC || type == STT_GNU_IFUNC)
				err = cand_add(fs, &sym, shown, label, hidden);
			else
				fs->not_func = 1;
		} else if (sym.st_shndx != SHN_UNDEF && type == STT_FUNC) {
			char b[PROBE_NAME_MAX];

			/* GCC clones ("f.constprop.0", "f() [clone .isra.0]"),
			 * and the same function name in another scope */
			if (!strncmp(shown, fs->qname, qn) && strchr(".( ", shown[qn]))
				near_add(fs, shown);
			else if (dem && fs->base[0] &&
				 (name_base(dem, b, sizeof(b)), !strcmp(b, fs->base)))
				near_add(fs, shown);
		}
		free(dem);
	}
	return err;
}

static void func_search_fini(struct func_search *fs)
{
	for (size_t i = 0; i < fs->n; i++) {
		free(fs->c[i].name);
		free(fs->c[i].label);
	}
	free(fs->c);
}

static void list_near(const struct func_search *fs, char *buf, size_t len)
{
	size_t used;

	buf[0] = '\0';
	if (!fs->nnear)
		return;
	strbuf(buf, len, "; close matches: ");
	for (size_t i = 0; i < fs->nnear; i++) {
		used = strlen(buf);
		strbuf(buf + used, len - used, "%s'%s'", i ? ", " : "", fs->near[i]);
	}
}

/* Several symbols at different addresses: when all but one are old symbol
 * versions (f@V beside f@@V), the default one is what programs linked today
 * call. Returns the index to use, or -1 (really ambiguous). */
static long pick_default_version(const struct func_search *fs)
{
	long pick = -1;

	for (size_t i = 0; i < fs->n; i++) {
		if (fs->c[i].hidden)
			continue;
		if (pick >= 0)
			return -1;
		pick = (long)i;
	}
	return pick;
}

static int has_section_type(Elf *elf, Elf32_Word type)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &sh) && sh.sh_type == type)
			return 1;
	return 0;
}

/* The separate debug file of @f by build ID
 * (/usr/lib/debug/.build-id/xx/yyyy.debug, as Debian's -dbg packages
 * install them), opened into @dbg when it exists and has a .symtab. */
static void open_debug_file(const struct elf_file *f, struct elf_file *dbg)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(f->elf, scn))) {
		Elf_Data *data;
		size_t off = 0, noff, doff;
		GElf_Nhdr nh;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		data = elf_getdata(scn, NULL);
		while (data && (off = gelf_getnote(data, off, &nh, &noff, &doff)) > 0) {
			const unsigned char *id = (const unsigned char *)data->d_buf + doff;
			char path[PATH_MAX];
			size_t len;

			if (nh.n_type != NT_GNU_BUILD_ID || nh.n_namesz != 4 ||
			    memcmp((const char *)data->d_buf + noff, "GNU", 4) || nh.n_descsz < 2 ||
			    nh.n_descsz > 64)
				continue;
			len = (size_t)snprintf(path, sizeof(path), "/usr/lib/debug/.build-id/%02x/",
					       id[0]);
			for (size_t i = 1; i < nh.n_descsz; i++)
				len += (size_t)snprintf(path + len, sizeof(path) - len, "%02x", id[i]);
			snprintf(path + len, sizeof(path) - len, ".debug");
			if (elf_file_open(path, dbg, NULL, 0) == 0 &&
			    !has_section_type(dbg->elf, SHT_SYMTAB))
				elf_file_close(dbg);
			return;
		}
	}
}

/* The symbol tables searched for @fs: .symtab first: it has the local
 * (static) functions too; a stripped file's .symtab may be in its separate
 * debug file @dbg (same addresses); .dynsym when there is no .symtab or it
 * has no match. */
static int scan_tables(struct elf_file *f, struct elf_file *dbg, struct func_search *fs,
		       struct versions *vers)
{
	GElf_Shdr sh;
	Elf_Scn *scn;
	int err;

	if (!has_section_type(f->elf, SHT_SYMTAB))
		open_debug_file(f, dbg);
	for (int pass = 0; pass < 2 && fs->n == 0; pass++) {
		Elf32_Word want = pass == 0 ? SHT_SYMTAB : SHT_DYNSYM;
		Elf *e = pass == 0 && dbg->elf ? dbg->elf : f->elf;

		scn = NULL;
		while ((scn = elf_nextscn(e, scn))) {
			if (!gelf_getshdr(scn, &sh) || sh.sh_type != want)
				continue;
			err = scan_symtab(e, scn, &sh, fs, pass == 1 ? vers : NULL);
			if (err)
				return err;
		}
	}
	return 0;
}

/* Why no function of @fs matched in @path: -ENOENT or -EINVAL. */
static int not_found(struct func_search *fs, const char *func, const char *path, char *why, size_t whylen)
{
	char extra[PROBE_NAME_MAX * 3];

	list_near(fs, extra, sizeof(extra));
	if (fs->undefined)
		probes_why(why, whylen,
			"'%s' is only imported by %s, not defined there (name the library "
			"that defines it: LIB:%s)%s", func, path, func, extra);
	else if (fs->not_func)
		probes_why(why, whylen, "'%s' in %s is not a function", func, path);
	else
		probes_why(why, whylen, "no function '%s' in %s%s", func, path, extra);
	return fs->not_func && !fs->undefined ? -EINVAL : -ENOENT;
}

/* Several functions of @fs matched and no default version tells them
 * apart: list them. Returns -ENOTUNIQ. */
static int ambiguous(const struct func_search *fs, const char *func, const char *path, char *why,
		     size_t whylen)
{
	size_t used;

	strbuf(why, whylen, "'%s' is ambiguous in %s, %zu functions match: ", func, path,
	       fs->n);
	for (size_t i = 0; i < fs->n && i < MAX_LISTED; i++) {
		used = strlen(why);
		strbuf(why + used, whylen - used, "%s'%s' at 0x%" PRIx64 "%s",
		       i ? ", " : "", fs->c[i].label, (uint64_t)fs->c[i].value,
		       fs->c[i].bind == STB_LOCAL ? " (static)" : "");
	}
	used = strlen(why);
	strbuf(why + used, whylen - used, "%s; write the full demangled name "
	       "('ns::f(int)') or a version ('f@VER')", fs->n > MAX_LISTED ? ", ..." : "");
	return -ENOTUNIQ;
}

/* Candidate @c of @path as the probe site @out: refused when it cannot be
 * probed safely (an IFUNC resolver, no size, outside the code). */
static int take_site(const struct elf_file *f, const struct func_cand *c, const char *func, const char *path,
		     struct probe_site *out, char *why, size_t whylen)
{
	uint64_t addr;

	if (c->type == STT_GNU_IFUNC) {
		probes_why(why, whylen, "'%s' in %s is an IFUNC: its symbol is the resolver that "
			"picks an implementation at load time, not the function itself; probe one "
			"of the implementations (named in .symtab, when the file has one)", func,
			path);
		return -EINVAL;
	}
	if (c->size == 0) {
		probes_why(why, whylen, "'%s' in %s has size 0 (hand-written or not a real "
			"function body); cannot tell where it is safe to probe", func, path);
		return -EINVAL;
	}
	addr = c->value;
	if (f->ehdr.e_machine == EM_ARM)
		addr &= ~(uint64_t)1; /* the Thumb bit */
	site_init(out, path);
	if (vaddr_to_offset(f, addr, 1, &out->offset)) {
		probes_why(why, whylen, "'%s' in %s at 0x%" PRIx64 " is outside every executable "
			"segment", func, path, addr);
		return -EINVAL;
	}
	out->vaddr = addr;
	out->size = c->size;
	out->exported = c->exported;
	snprintf(out->name, sizeof(out->name), "%s", c->name);
	return 0;
}

int probes_resolve_function(const char *path, const char *func, struct probe_site *out,
			    char *why, size_t whylen)
{
	struct elf_file f;
	struct func_search fs;
	struct versions vers;
	struct elf_file dbg = { .fd = -1 };
	const char *at;
	long pick = 0;
	int err;

	memset(&fs, 0, sizeof(fs));
	memset(&vers, 0, sizeof(vers));
	fs.q = func;
	if (strlen(func) >= sizeof(fs.qname)) {
		probes_why(why, whylen, "function name too long");
		return -EINVAL;
	}
	/* "f@VER" / "f@@VER": one version of a versioned symbol */
	strcpy(fs.qname, func);
	at = strchr(func, '@');
	if (at && at != func) {
		fs.qname[at - func] = '\0';
		fs.qver = at + (at[1] == '@' ? 2 : 1);
	}
	name_base(fs.qname, fs.base, sizeof(fs.base));
	err = elf_file_open(path, &f, why, whylen);
	if (err)
		return err;
	versions_load(f.elf, &vers);

	err = scan_tables(&f, &dbg, &fs, &vers);
	if (!err && fs.n == 0)
		err = not_found(&fs, func, path, why, whylen);
	else if (!err && fs.n > 1 && (pick = pick_default_version(&fs)) < 0)
		err = ambiguous(&fs, func, path, why, whylen);
	if (!err)
		err = take_site(&f, &fs.c[pick], func, path, out, why, whylen);
	free(vers.name);
	func_search_fini(&fs);
	elf_file_close(&dbg);
	elf_file_close(&f);
	return err;
}


/* Whether symbol table @scn of @e has a function defined in the file. */
static int defines_function(Elf_Scn *scn, const GElf_Shdr *sh)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t n = sh->sh_entsize ? sh->sh_size / sh->sh_entsize : 0;

	for (size_t i = 0; data && i < n; i++) {
		GElf_Sym sym;

		if (!gelf_getsym(data, (int)i, &sym))
			break;
		if ((GELF_ST_TYPE(sym.st_info) == STT_FUNC || GELF_ST_TYPE(sym.st_info) == STT_GNU_IFUNC) &&
		    sym.st_shndx != SHN_UNDEF && sym.st_value)
			return 1;
	}
	return 0;
}

static int count_usdt(void *ctx, const struct probe_usdt *u)
{
	(void)u;
	(*(long *)ctx)++;
	return 0;
}

int probes_exe_names(const char *path, int *functions, long *usdt)
{
	struct elf_file f, dbg = { .fd = -1 };
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	int err;

	*functions = 0;
	*usdt = 0;
	err = elf_file_open(path, &f, NULL, 0);
	if (err)
		return err;
	/* where probes_resolve_function() looks: .symtab (the file's or its
	 * debug file's), then .dynsym */
	if (!has_section_type(f.elf, SHT_SYMTAB))
		open_debug_file(&f, &dbg);
	for (int pass = 0; pass < 2 && !*functions; pass++) {
		Elf *e = pass == 0 && dbg.elf ? dbg.elf : f.elf;

		scn = NULL;
		while (!*functions && (scn = elf_nextscn(e, scn)))
			if (gelf_getshdr(scn, &sh) && sh.sh_type == (pass == 0 ? SHT_SYMTAB : SHT_DYNSYM))
				*functions = defines_function(scn, &sh);
	}
	elf_file_close(&dbg);
	elf_file_close(&f);
	err = probes_list_usdt(path, count_usdt, usdt, NULL, 0);
	return err < 0 ? err : 0;
}
