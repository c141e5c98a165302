#include "probes.h"
#include "perf_ring.h"
#include "symbols.h"
#include "util.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define UPROBE_PMU "/sys/bus/event_source/devices/uprobe"
#define STAPSDT_NOTE_TYPE 3
#define MAX_LISTED 8 /* candidates named in an ambiguity or not-found message */

static void set_why(char *why, size_t whylen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void set_why(char *why, size_t whylen, const char *fmt, ...)
{
	va_list ap;

	if (!why || !whylen)
		return;
	va_start(ap, fmt);
	vsnprintf(why, whylen, fmt, ap);
	va_end(ap);
}

/* ==== spec parsing ==== */

static int is_sdt_ident(const char *s, size_t n)
{
	if (n == 0)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '_')
			return 0;
	return 1;
}

static int has_ctrl(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return 1;
	return 0;
}

/* Index of the first ':' that is not part of "::", or -1. */
static long single_colon(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (s[i] != ':')
			continue;
		if (i + 1 < n && s[i + 1] == ':') {
			i++;
			continue;
		}
		return (long)i;
	}
	return -1;
}

static int copy_field(char *dst, size_t dstlen, const char *s, size_t n)
{
	if (n >= dstlen)
		return -ENAMETOOLONG;
	memcpy(dst, s, n);
	dst[n] = '\0';
	return 0;
}

/* "PROVIDER:NAME" (after "sdt:") into @p. */
static int parse_sdt(const char *s, size_t n, struct probe_point *p, const char *whole,
		     char *why, size_t whylen)
{
	const char *colon = memchr(s, ':', n);
	size_t pn, nn;

	if (!colon) {
		set_why(why, whylen, "expected sdt:PROVIDER:NAME, got '%s'", whole);
		return -EINVAL;
	}
	pn = (size_t)(colon - s);
	nn = n - pn - 1;
	if (!is_sdt_ident(s, pn) || !is_sdt_ident(colon + 1, nn)) {
		set_why(why, whylen,
			"expected sdt:PROVIDER:NAME with PROVIDER and NAME made of letters, digits "
			"and '_', got '%s'", whole);
		return -EINVAL;
	}
	p->kind = PROBE_POINT_SDT;
	if (copy_field(p->provider, sizeof(p->provider), s, pn) ||
	    copy_field(p->name, sizeof(p->name), colon + 1, nn)) {
		set_why(why, whylen, "USDT name too long in '%s'", whole);
		return -EINVAL;
	}
	return 0;
}

/* One point, @s[0..n), already trimmed. */
static int parse_point(const char *s, size_t n, struct probe_point *p, char *why, size_t whylen)
{
	char whole[PROBE_OBJECT_MAX + PROBE_NAME_MAX];
	long c;
	const char *fn = s;
	size_t fnn = n;

	memset(p, 0, sizeof(*p));
	snprintf(whole, sizeof(whole), "%.*s", (int)n, s);
	if (n == 0) {
		set_why(why, whylen, "empty probe point (expected FUNC or sdt:PROVIDER:NAME)");
		return -EINVAL;
	}
	if (has_ctrl(s, n)) {
		set_why(why, whylen, "control character in '%s'", whole);
		return -EINVAL;
	}
	if (n >= 4 && !strncmp(s, "sdt:", 4))
		return parse_sdt(s + 4, n - 4, p, whole, why, whylen);
	if (n >= 3 && !strncmp(s, "py:", 3)) {
		set_why(why, whylen, "'%s': Python function steps (py:) are not handled by the "
			"uprobe module", whole);
		return -EINVAL;
	}
	c = single_colon(s, n);
	if (c >= 0) {
		size_t on = (size_t)c;

		if (on == 0) {
			set_why(why, whylen, "empty object name before ':' in '%s'", whole);
			return -EINVAL;
		}
		if (copy_field(p->object, sizeof(p->object), s, on)) {
			set_why(why, whylen, "object name too long in '%s'", whole);
			return -EINVAL;
		}
		fn = s + on + 1;
		fnn = n - on - 1;
		if (fnn >= 4 && !strncmp(fn, "sdt:", 4))
			return parse_sdt(fn + 4, fnn - 4, p, whole, why, whylen);
		if (fnn == 0) {
			set_why(why, whylen, "empty function name after '%s:'", p->object);
			return -EINVAL;
		}
		if (single_colon(fn, fnn) >= 0) {
			set_why(why, whylen,
				"'%s': expected [OBJECT:]FUNC or [OBJECT:]sdt:PROVIDER:NAME", whole);
			return -EINVAL;
		}
	}
	if (isspace((unsigned char)fn[0]) || isspace((unsigned char)fn[fnn - 1])) {
		set_why(why, whylen, "space around the function name in '%s'", whole);
		return -EINVAL;
	}
	p->kind = PROBE_POINT_FUNC;
	if (copy_field(p->name, sizeof(p->name), fn, fnn)) {
		set_why(why, whylen, "function name too long in '%s' (at most %d bytes)", whole,
			PROBE_NAME_MAX - 1);
		return -EINVAL;
	}
	return 0;
}

/* The ',' that separates a pair, outside (), <> and []; -1 when none,
 * -2 when there are several. "operator," and "operator<" would fool it. */
static long pair_comma(const char *s)
{
	long at = -1;
	int depth = 0;

	for (long i = 0; s[i]; i++) {
		switch (s[i]) {
		case '(':
		case '<':
		case '[':
			depth++;
			break;
		case ')':
		case '>':
		case ']':
			if (depth > 0)
				depth--;
			break;
		case ',':
			if (depth == 0) {
				if (at >= 0)
					return -2;
				at = i;
			}
			break;
		}
	}
	return at;
}

static void trim(const char **s, size_t *n)
{
	while (*n && isspace((unsigned char)**s)) {
		(*s)++;
		(*n)--;
	}
	while (*n && isspace((unsigned char)(*s)[*n - 1]))
		(*n)--;
}

int probes_parse_spec(const char *spec, struct probe_spec *out, char *why, size_t whylen)
{
	const char *a, *b;
	size_t an, bn;
	long comma;
	int err;

	memset(out, 0, sizeof(*out));
	if (!spec || !*spec) {
		set_why(why, whylen, "empty step spec (expected FUNC, FUNC_A,FUNC_B, "
			"sdt:PROVIDER:NAME or sdt:P:BEGIN,sdt:P:END)");
		return -EINVAL;
	}
	comma = pair_comma(spec);
	if (comma == -2) {
		set_why(why, whylen, "'%s': at most two probe points (BEGIN,END)", spec);
		return -EINVAL;
	}
	if (comma < 0) {
		a = spec;
		an = strlen(spec);
		trim(&a, &an);
		err = parse_point(a, an, &out->begin, why, whylen);
		if (err)
			return err;
		out->end = out->begin;
		if (out->begin.kind == PROBE_POINT_FUNC) {
			out->kind = PROBE_SPEC_CALL;
			out->end.at_return = 1;
		} else {
			out->kind = PROBE_SPEC_EACH;
		}
		return 0;
	}
	a = spec;
	an = (size_t)comma;
	b = spec + comma + 1;
	bn = strlen(b);
	trim(&a, &an);
	trim(&b, &bn);
	if (an == 0 || bn == 0) {
		set_why(why, whylen, "'%s': empty %s point in BEGIN,END", spec,
			an == 0 ? "begin" : "end");
		return -EINVAL;
	}
	err = parse_point(a, an, &out->begin, why, whylen);
	if (!err)
		err = parse_point(b, bn, &out->end, why, whylen);
	if (err)
		return err;
	out->kind = PROBE_SPEC_PAIR;
	return 0;
}

int probes_parse_phase(const char *arg, char *name, size_t namelen, struct probe_spec *out,
		       char *why, size_t whylen)
{
	const char *eq = arg ? strchr(arg, '=') : NULL;
	size_t n;

	if (!eq) {
		set_why(why, whylen, "expected NAME=SPEC, got '%s'", arg ? arg : "");
		return -EINVAL;
	}
	n = (size_t)(eq - arg);
	if (n == 0) {
		set_why(why, whylen, "empty phase name in '%s'", arg);
		return -EINVAL;
	}
	if (has_ctrl(arg, n)) {
		set_why(why, whylen, "control character in the phase name of '%s'", arg);
		return -EINVAL;
	}
	if (n >= namelen) {
		set_why(why, whylen, "phase name too long in '%s' (at most %zu bytes)", arg,
			namelen ? namelen - 1 : 0);
		return -EINVAL;
	}
	memcpy(name, arg, n);
	name[n] = '\0';
	return probes_parse_spec(eq + 1, out, why, whylen);
}

int probes_point_format(const struct probe_point *p, char *buf, size_t len)
{
	const char *sep = p->object[0] ? ":" : "";

	if (p->kind == PROBE_POINT_SDT)
		return strbuf(buf, len, "%s%ssdt:%s:%s", p->object, sep, p->provider, p->name);
	return strbuf(buf, len, "%s%s%s%s", p->object, sep, p->name,
		      p->at_return ? " (return)" : "");
}

int probes_object_matches(const struct probe_point *p, const char *path)
{
	const char *base;
	size_t n;

	if (!p->object[0])
		return 1;
	if (strchr(p->object, '/')) {
		char ra[PATH_MAX], rb[PATH_MAX];

		if (!strcmp(p->object, path))
			return 1;
		if (!realpath(p->object, ra) || !realpath(path, rb))
			return 0;
		return !strcmp(ra, rb);
	}
	base = strrchr(path, '/');
	base = base ? base + 1 : path;
	n = strlen(p->object);
	if (strncmp(base, p->object, n) != 0)
		return 0;
	return base[n] == '\0' || base[n] == '.';
}

/* ==== ELF files ==== */

struct elf_file {
	int fd;
	Elf *elf;
	GElf_Ehdr ehdr;
	size_t nload;
	GElf_Phdr *load; /* PT_LOAD headers */
};

static void elf_file_close(struct elf_file *f)
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

static int elf_file_open(const char *path, struct elf_file *f, char *why, size_t whylen)
{
	size_t nph;
	int err;

	memset(f, 0, sizeof(*f));
	f->fd = -1;
	elf_version(EV_CURRENT);
	f->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (f->fd < 0) {
		err = -errno;
		set_why(why, whylen, "cannot open %s: %s", path, strerror(-err));
		goto out;
	}
	f->elf = elf_begin(f->fd, ELF_C_READ_MMAP, NULL);
	if (!f->elf || elf_kind(f->elf) != ELF_K_ELF || !gelf_getehdr(f->elf, &f->ehdr) ||
	    (f->ehdr.e_type != ET_EXEC && f->ehdr.e_type != ET_DYN) ||
	    elf_getphdrnum(f->elf, &nph) != 0) {
		err = -ENOEXEC;
		set_why(why, whylen, "%s is not an ELF executable or shared library", path);
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
static int vaddr_to_offset(const struct elf_file *f, uint64_t vaddr, int exec, uint64_t *off)
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

static Elf_Scn *find_section(Elf *elf, const char *name, GElf_Shdr *sh)
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

static void site_init(struct probe_site *s, const char *path)
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
	if (fs->n == fs->cap) {
		size_t cap = fs->cap ? fs->cap * 2 : 4;
		struct func_cand *nc = realloc(fs->c, cap * sizeof(*nc));
		if (!nc)
			return -ENOMEM;
		fs->c = nc;
		fs->cap = cap;
	}
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

int probes_resolve_function(const char *path, const char *func, struct probe_site *out,
			    char *why, size_t whylen)
{
	struct elf_file f;
	struct func_search fs;
	struct versions vers;
	struct elf_file dbg = { .fd = -1 };
	const struct func_cand *c;
	GElf_Shdr sh;
	Elf_Scn *scn = NULL;
	char extra[PROBE_NAME_MAX * 3];
	const char *at;
	uint64_t addr;
	long pick = 0;
	int err;

	memset(&fs, 0, sizeof(fs));
	memset(&vers, 0, sizeof(vers));
	fs.q = func;
	if (strlen(func) >= sizeof(fs.qname)) {
		set_why(why, whylen, "function name too long");
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

	/* .symtab first: it has the local (static) functions too; a stripped
	 * file's .symtab may be in its separate debug file (same addresses);
	 * .dynsym when there is no .symtab or it has no match */
	if (!has_section_type(f.elf, SHT_SYMTAB))
		open_debug_file(&f, &dbg);
	for (int pass = 0; pass < 2 && fs.n == 0; pass++) {
		Elf32_Word want = pass == 0 ? SHT_SYMTAB : SHT_DYNSYM;
		Elf *e = pass == 0 && dbg.elf ? dbg.elf : f.elf;

		scn = NULL;
		while ((scn = elf_nextscn(e, scn))) {
			if (!gelf_getshdr(scn, &sh) || sh.sh_type != want)
				continue;
			err = scan_symtab(e, scn, &sh, &fs, pass == 1 ? &vers : NULL);
			if (err)
				goto out;
		}
	}

	if (fs.n == 0) {
		list_near(&fs, extra, sizeof(extra));
		if (fs.undefined)
			set_why(why, whylen,
				"'%s' is only imported by %s, not defined there (name the library "
				"that defines it: LIB:%s)%s", func, path, func, extra);
		else if (fs.not_func)
			set_why(why, whylen, "'%s' in %s is not a function", func, path);
		else
			set_why(why, whylen, "no function '%s' in %s%s", func, path, extra);
		err = fs.not_func && !fs.undefined ? -EINVAL : -ENOENT;
		goto out;
	}
	if (fs.n > 1 && (pick = pick_default_version(&fs)) < 0) {
		size_t used;

		strbuf(why, whylen, "'%s' is ambiguous in %s, %zu functions match: ", func, path,
		       fs.n);
		for (size_t i = 0; i < fs.n && i < MAX_LISTED; i++) {
			used = strlen(why);
			strbuf(why + used, whylen - used, "%s'%s' at 0x%" PRIx64 "%s",
			       i ? ", " : "", fs.c[i].label, (uint64_t)fs.c[i].value,
			       fs.c[i].bind == STB_LOCAL ? " (static)" : "");
		}
		used = strlen(why);
		strbuf(why + used, whylen - used, "%s; write the full demangled name "
		       "('ns::f(int)') or a version ('f@VER')", fs.n > MAX_LISTED ? ", ..." : "");
		err = -ENOTUNIQ;
		goto out;
	}
	c = &fs.c[pick];
	if (c->type == STT_GNU_IFUNC) {
		set_why(why, whylen, "'%s' in %s is an IFUNC: its symbol is the resolver that "
			"picks an implementation at load time, not the function itself; probe one "
			"of the implementations (named in .symtab, when the file has one)", func,
			path);
		err = -EINVAL;
		goto out;
	}
	if (c->size == 0) {
		set_why(why, whylen, "'%s' in %s has size 0 (hand-written or not a real "
			"function body); cannot tell where it is safe to probe", func, path);
		err = -EINVAL;
		goto out;
	}
	addr = c->value;
	if (f.ehdr.e_machine == EM_ARM)
		addr &= ~(uint64_t)1; /* the Thumb bit */
	site_init(out, path);
	if (vaddr_to_offset(&f, addr, 1, &out->offset)) {
		set_why(why, whylen, "'%s' in %s at 0x%" PRIx64 " is outside every executable "
			"segment", func, path, addr);
		err = -EINVAL;
		goto out;
	}
	out->vaddr = addr;
	out->size = c->size;
	out->exported = c->exported;
	snprintf(out->name, sizeof(out->name), "%s", c->name);
	err = 0;
out:
	free(vers.name);
	func_search_fini(&fs);
	elf_file_close(&dbg);
	elf_file_close(&f);
	return err;
}

/* ==== USDT ==== */

static uint64_t get_addr(const unsigned char *p, int is64, int swap)
{
	uint64_t v;

	if (is64) {
		memcpy(&v, p, 8);
		return swap ? __builtin_bswap64(v) : v;
	} else {
		uint32_t w;
		memcpy(&w, p, 4);
		return swap ? __builtin_bswap32(w) : w;
	}
}

static int host_is_le(void)
{
	const uint16_t one = 1;
	return *(const unsigned char *)&one == 1;
}

int probes_list_usdt(const char *path, probes_usdt_cb cb, void *ctx, char *why, size_t whylen)
{
	struct elf_file f;
	GElf_Shdr sh;
	Elf_Scn *scn = NULL;
	uint64_t base_addr = 0;
	int err, have_base = 0, is64, swap;

	err = elf_file_open(path, &f, why, whylen);
	if (err)
		return err;
	is64 = f.ehdr.e_ident[EI_CLASS] == ELFCLASS64;
	swap = (f.ehdr.e_ident[EI_DATA] == ELFDATA2LSB) != host_is_le();
	/* prelink and friends move the code but not the notes: the notes
	 * record where .stapsdt.base was at link time */
	if (find_section(f.elf, ".stapsdt.base", &sh)) {
		base_addr = sh.sh_addr;
		have_base = 1;
	}
	while ((scn = elf_nextscn(f.elf, scn))) {
		Elf_Data *data;
		size_t off = 0, noff, doff;
		GElf_Nhdr nh;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		data = elf_getdata(scn, NULL);
		if (!data)
			continue;
		while ((off = gelf_getnote(data, off, &nh, &noff, &doff)) > 0) {
			const char *owner = (const char *)data->d_buf + noff;
			const unsigned char *desc = (const unsigned char *)data->d_buf + doff;
			size_t asz = is64 ? 8 : 4, used;
			struct probe_usdt u;
			const char *strs, *end;

			if (nh.n_type != STAPSDT_NOTE_TYPE || nh.n_namesz != sizeof("stapsdt") ||
			    memcmp(owner, "stapsdt", sizeof("stapsdt")))
				continue;
			if (nh.n_descsz < 3 * asz + 3) {
				set_why(why, whylen, "%s: truncated stapsdt note", path);
				err = -EINVAL;
				goto out;
			}
			memset(&u, 0, sizeof(u));
			u.pc = get_addr(desc, is64, swap);
			u.base = get_addr(desc + asz, is64, swap);
			u.semaphore = get_addr(desc + 2 * asz, is64, swap);
			strs = (const char *)desc + 3 * asz;
			end = (const char *)desc + nh.n_descsz;
			/* provider\0name\0args\0, all inside the descriptor */
			u.provider = strs;
			used = strnlen(u.provider, (size_t)(end - u.provider));
			if (u.provider + used >= end)
				goto corrupt;
			u.name = u.provider + used + 1;
			used = strnlen(u.name, (size_t)(end - u.name));
			if (u.name + used >= end)
				goto corrupt;
			u.args = u.name + used + 1;
			if (u.args >= end || u.args + strnlen(u.args, (size_t)(end - u.args)) >= end)
				u.args = "";
			u.vaddr = u.pc;
			if (have_base && u.base)
				u.vaddr += base_addr - u.base;
			if (vaddr_to_offset(&f, u.vaddr, 1, &u.offset)) {
				set_why(why, whylen, "%s: USDT probe %s:%s at 0x%" PRIx64
					" is outside every executable segment", path, u.provider,
					u.name, u.vaddr);
				err = -EINVAL;
				goto out;
			}
			/* the semaphore lives in the writable data segment; the
			 * kernel finds it through the same file offset */
			if (u.semaphore && vaddr_to_offset(&f, u.semaphore, 0, &u.ref_ctr_offset)) {
				set_why(why, whylen, "%s: the semaphore of USDT probe %s:%s at 0x%"
					PRIx64 " is not in a file-backed segment", path, u.provider,
					u.name, u.semaphore);
				err = -EINVAL;
				goto out;
			}
			if (cb) {
				err = cb(ctx, &u);
				if (err)
					goto out;
			}
		}
	}
	err = 0;
	goto out;
corrupt:
	set_why(why, whylen, "%s: malformed stapsdt note (strings past its end)", path);
	err = -EINVAL;
out:
	elf_file_close(&f);
	return err;
}

struct usdt_collect {
	const char *path, *provider, *name;
	struct probe_site *sites;
	size_t n, cap;
	/* for the not-found message */
	char seen[MAX_LISTED][2 * PROBE_NAME_MAX];
	size_t nseen, total;
};

static int usdt_collect_cb(void *ctx, const struct probe_usdt *u)
{
	struct usdt_collect *uc = ctx;
	struct probe_site *s;

	if (strcmp(u->provider, uc->provider) || strcmp(u->name, uc->name)) {
		char pn[2 * PROBE_NAME_MAX];

		snprintf(pn, sizeof(pn), "%s:%s", u->provider, u->name);
		for (size_t i = 0; i < uc->nseen; i++)
			if (!strcmp(uc->seen[i], pn))
				return 0;
		uc->total++;
		if (uc->nseen < MAX_LISTED)
			snprintf(uc->seen[uc->nseen++], sizeof(uc->seen[0]), "%s", pn);
		return 0;
	}
	if (uc->n == uc->cap) {
		size_t cap = uc->cap ? uc->cap * 2 : 2;
		struct probe_site *ns = realloc(uc->sites, cap * sizeof(*ns));
		if (!ns)
			return -ENOMEM;
		uc->sites = ns;
		uc->cap = cap;
	}
	s = &uc->sites[uc->n++];
	site_init(s, uc->path);
	s->offset = u->offset;
	s->vaddr = u->vaddr;
	s->ref_ctr_offset = u->ref_ctr_offset;
	s->sem_vaddr = u->semaphore;
	snprintf(s->name, sizeof(s->name), "%s:%s", u->provider, u->name);
	return 0;
}

int probes_resolve_usdt(const char *path, const char *provider, const char *name,
			struct probe_site **sites, size_t *n, char *why, size_t whylen)
{
	struct usdt_collect uc;
	int err;

	*sites = NULL;
	*n = 0;
	memset(&uc, 0, sizeof(uc));
	uc.path = path;
	uc.provider = provider;
	uc.name = name;
	err = probes_list_usdt(path, usdt_collect_cb, &uc, why, whylen);
	if (err)
		goto out;
	if (uc.n == 0) {
		size_t used;

		if (uc.total == 0) {
			set_why(why, whylen, "no USDT probe sdt:%s:%s in %s (it has no USDT probes)",
				provider, name, path);
		} else {
			strbuf(why, whylen, "no USDT probe sdt:%s:%s in %s (it has ", provider, name,
			       path);
			for (size_t i = 0; i < uc.nseen; i++) {
				used = strlen(why);
				strbuf(why + used, whylen - used, "%s%s", i ? ", " : "",
				       uc.seen[i]);
			}
			used = strlen(why);
			strbuf(why + used, whylen - used, "%s)", uc.total > uc.nseen ? ", ..." : "");
		}
		err = -ENOENT;
		goto out;
	}
	*sites = uc.sites;
	*n = uc.n;
	uc.sites = NULL;
	err = 0;
out:
	free(uc.sites);
	return err;
}

int probes_resolve_point(const char *path, const struct probe_point *p,
			 struct probe_site **sites, size_t *n, char *why, size_t whylen)
{
	struct probe_site *s;
	int err;

	*sites = NULL;
	*n = 0;
	if (p->kind == PROBE_POINT_SDT)
		return probes_resolve_usdt(path, p->provider, p->name, sites, n, why, whylen);
	if (p->kind != PROBE_POINT_FUNC)
		return -EINVAL;
	s = malloc(sizeof(*s));
	if (!s)
		return -ENOMEM;
	err = probes_resolve_function(path, p->name, s, why, whylen);
	if (err) {
		free(s);
		return err;
	}
	*sites = s;
	*n = 1;
	return 0;
}

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
static int find_in_paths(char *const *paths, size_t npaths, const struct probe_point *p,
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
			set_why(why, whylen, "%s", buf);
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
		size_t used;

		strbuf(why, whylen, "function '%s' is a local (static or hidden) function of %zu "
		       "objects (", p->name, nlocal);
		for (size_t i = 0; i < nlocal && i < MAX_LISTED; i++) {
			used = strlen(why);
			strbuf(why + used, whylen - used, "%s%s", i ? ", " : "", locals[i]);
		}
		used = strlen(why);
		strbuf(why + used, whylen - used, "); name one, as LIB:%s", p->name);
		err = -ENOTUNIQ;
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
	probes_point_format(p, buf, sizeof(buf));
	if (searched == 0 && p->object[0])
		set_why(why, whylen, "%s: no object named '%s' in %s (if it is loaded later with "
			"dlopen, it is resolved when it is mapped)", buf, p->object, where);
	else if (first_err)
		set_why(why, whylen, "%s not found in %s (%zu objects; %s)", buf, where, searched,
			first_why);
	else
		set_why(why, whylen, "%s not found in %s (%zu objects searched)", buf, where,
			searched);
	err = -ENOENT;
out:
	free(all);
	free(local);
	return err;
}

/* Executable file-backed mappings of @pid, unique paths, the main
 * executable first, then in address order. */
static int maps_paths(pid_t pid, char ***out, size_t *nout)
{
	char fn[64], exe[PATH_MAX], *line = NULL;
	char **paths = NULL;
	size_t n = 0, cap = 0, linecap = 0;
	ssize_t el;
	FILE *fp;
	int err = 0;

	*out = NULL;
	*nout = 0;
	snprintf(fn, sizeof(fn), "/proc/%d/exe", (int)pid);
	el = readlink(fn, exe, sizeof(exe) - 1);
	exe[el > 0 ? el : 0] = '\0';
	snprintf(fn, sizeof(fn), "/proc/%d/maps", (int)pid);
	fp = fopen(fn, "re");
	if (!fp)
		return errno == ENOENT ? -ESRCH : -errno;
	/* the executable first: it is not always mapped lowest (ET_EXEC vs
	 * PIE), and it interposes on everything */
	if (exe[0]) {
		paths = malloc(sizeof(*paths));
		if (!paths || !(paths[0] = strdup(exe))) {
			err = -ENOMEM;
			goto out;
		}
		n = cap = 1;
	}
	while (getline(&line, &linecap, fp) > 0) {
		char perms[8];
		int at = 0;
		size_t len;
		const char *path;
		int dup = 0;

		if (sscanf(line, "%*x-%*x %7s %*x %*x:%*x %*u %n", perms, &at) < 1 || !at)
			continue;
		path = line + at;
		len = strcspn(path, "\n");
		line[at + len] = '\0';
		/* a deleted or replaced file cannot be probed by its path */
		if (path[0] != '/' || !strchr(perms, 'x') || strstr(path, " (deleted)"))
			continue;
		for (size_t i = 0; i < n && !dup; i++)
			dup = !strcmp(paths[i], path);
		if (dup)
			continue;
		if (n == cap) {
			size_t nc = cap ? cap * 2 : 8;
			char **np = realloc(paths, nc * sizeof(*np));
			if (!np) {
				err = -ENOMEM;
				goto out;
			}
			paths = np;
			cap = nc;
		}
		if (!(paths[n] = strdup(path))) {
			err = -ENOMEM;
			goto out;
		}
		n++;
	}
	*out = paths;
	*nout = n;
	paths = NULL;
	n = 0;
out:
	probes_paths_free(paths, n);
	free(line);
	fclose(fp);
	return err;
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
			set_why(why, whylen, "no process %d", (int)pid);
		else
			set_why(why, whylen, "cannot read /proc/%d/maps: %s", (int)pid,
				strerror(-err));
		return err;
	}
	order_like_loader(pid, paths, np);
	snprintf(where, sizeof(where), "process %d", (int)pid);
	err = find_in_paths(paths, np, p, where, sites, n, why, whylen);
	probes_paths_free(paths, np);
	return err;
}

/* ---- the dynamic loader's search, for a target that has not started ---- */

struct dyninfo {
	char **needed;
	size_t nneeded;
	char *rpath, *runpath, *soname;
};

static void dyninfo_fini(struct dyninfo *d)
{
	probes_paths_free(d->needed, d->nneeded);
	free(d->rpath);
	free(d->runpath);
	free(d->soname);
	memset(d, 0, sizeof(*d));
}

static int dyninfo_read(Elf *elf, struct dyninfo *d)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	memset(d, 0, sizeof(*d));
	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *data;
		size_t cnt;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC || !sh.sh_entsize)
			continue;
		data = elf_getdata(scn, NULL);
		if (!data)
			continue;
		cnt = sh.sh_size / sh.sh_entsize;
		for (size_t i = 0; i < cnt; i++) {
			GElf_Dyn dyn;
			const char *s;
			char **slot = NULL;

			if (!gelf_getdyn(data, (int)i, &dyn) || dyn.d_tag == DT_NULL)
				break;
			if (dyn.d_tag != DT_NEEDED && dyn.d_tag != DT_RPATH &&
			    dyn.d_tag != DT_RUNPATH && dyn.d_tag != DT_SONAME)
				continue;
			s = elf_strptr(elf, sh.sh_link, dyn.d_un.d_val);
			if (!s)
				continue;
			if (dyn.d_tag == DT_NEEDED) {
				char **nn = realloc(d->needed, (d->nneeded + 1) * sizeof(*nn));
				if (!nn)
					return -ENOMEM;
				d->needed = nn;
				slot = &d->needed[d->nneeded];
				*slot = NULL;
				d->nneeded++;
			} else {
				slot = dyn.d_tag == DT_RPATH   ? &d->rpath
				       : dyn.d_tag == DT_RUNPATH ? &d->runpath
								 : &d->soname;
				free(*slot);
			}
			*slot = strdup(s);
			if (!*slot)
				return -ENOMEM;
		}
		break;
	}
	return 0;
}

/* Does @path hold an ELF of @cls and @machine? */
static int elf_compatible(const char *path, unsigned char cls, unsigned machine)
{
	unsigned char id[EI_NIDENT + 4];
	uint16_t m;
	int fd = open(path, O_RDONLY | O_CLOEXEC), ok;
	struct stat st;

	if (fd < 0)
		return 0;
	ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
	     pread(fd, id, sizeof(id), 0) == (ssize_t)sizeof(id) && !memcmp(id, ELFMAG, SELFMAG) &&
	     id[EI_CLASS] == cls;
	close(fd);
	if (!ok)
		return 0;
	/* e_machine follows e_ident and e_type (2 bytes), in the file's order */
	memcpy(&m, id + EI_NIDENT + 2, 2);
	if ((id[EI_DATA] == ELFDATA2LSB) != host_is_le())
		m = __builtin_bswap16(m);
	return m == machine;
}

/* /etc/ld.so.cache, the "glibc-ld.so.cache1.1" format (glibc >= 2.32 writes
 * only that; older files carry it after the old one). */
struct ldcache {
	unsigned char *data;
	size_t len;
	size_t hdr;     /* offset of the new-format header; strings are relative to it */
	uint32_t nlibs;
};

#define LDCACHE_MAGIC "glibc-ld.so.cache1.1"
#define LDCACHE_HDR 48 /* magic+version 20, nlibs, len_strings, flags+pad, ext, unused[3] */
#define LDCACHE_ENTRY 24 /* flags, key, value, osversion, hwcap (u64) */

static void ldcache_load(struct ldcache *c)
{
	FILE *fp = fopen("/etc/ld.so.cache", "re");
	struct stat st;

	memset(c, 0, sizeof(*c));
	if (!fp)
		return;
	if (fstat(fileno(fp), &st) == 0 && st.st_size > LDCACHE_HDR && st.st_size < (1 << 28)) {
		c->data = malloc((size_t)st.st_size);
		if (c->data && fread(c->data, 1, (size_t)st.st_size, fp) == (size_t)st.st_size)
			c->len = (size_t)st.st_size;
	}
	fclose(fp);
	if (!c->len)
		goto bad;
	if (!memcmp(c->data, "ld.so-1.7.0", 11)) {
		/* old format first: 12-byte entries after a 16-byte header,
		 * the new header 8-aligned after them */
		uint32_t nold;
		memcpy(&nold, c->data + 12, 4);
		c->hdr = (16 + (size_t)nold * 12 + 7) & ~(size_t)7;
	}
	if (c->hdr + LDCACHE_HDR > c->len ||
	    memcmp(c->data + c->hdr, LDCACHE_MAGIC, sizeof(LDCACHE_MAGIC) - 1))
		goto bad;
	memcpy(&c->nlibs, c->data + c->hdr + 20, 4);
	if (c->nlibs > (c->len - c->hdr - LDCACHE_HDR) / LDCACHE_ENTRY)
		goto bad;
	return;
bad:
	free(c->data);
	memset(c, 0, sizeof(*c));
}

static const char *ldcache_str(const struct ldcache *c, uint32_t off)
{
	size_t at = c->hdr + off;

	if (at >= c->len || !memchr(c->data + at, '\0', c->len - at))
		return NULL;
	return (const char *)c->data + at;
}

/* The cache's path for @soname that fits @cls/@machine, into @out. Entries
 * for glibc-hwcaps subdirectories (hwcap != 0) only when nothing else fits. */
static int ldcache_find(const struct ldcache *c, const char *soname, unsigned char cls,
			unsigned machine, char *out, size_t len)
{
	for (int pass = 0; pass < 2; pass++) {
		for (uint32_t i = 0; i < c->nlibs; i++) {
			const unsigned char *e = c->data + c->hdr + LDCACHE_HDR + (size_t)i * LDCACHE_ENTRY;
			uint32_t key, value;
			uint64_t hwcap;
			const char *k, *v;

			memcpy(&key, e + 4, 4);
			memcpy(&value, e + 8, 4);
			memcpy(&hwcap, e + 16, 8);
			if ((pass == 0) != (hwcap == 0))
				continue;
			k = ldcache_str(c, key);
			if (!k || strcmp(k, soname))
				continue;
			v = ldcache_str(c, value);
			if (v && elf_compatible(v, cls, machine) && !strbuf(out, len, "%s", v))
				return 0;
		}
	}
	return -ENOENT;
}

struct loaded {
	char *path;    /* realpath */
	char *name;    /* as needed, or the executable's path */
	char *soname;
	char *rpath, *runpath, *origin;
	int parent;    /* index of the object that needed it; -1 for the executable */
};

struct loader {
	struct loaded *obj;
	size_t n, cap;
	unsigned char cls;
	unsigned machine;
	const char *ld_library_path;
	struct ldcache cache;
	int cache_loaded;
};

/* Try every directory of the ':'-separated @list (with $ORIGIN = @origin). */
static int search_dirs(struct loader *L, const char *list, const char *origin, const char *name,
		       char *out, size_t len)
{
	const char *p = list;

	while (p && *p) {
		size_t n = strcspn(p, ":");
		char dir[PATH_MAX], cand[PATH_MAX];
		const char *o;

		if (n == 0) {
			/* an empty element is the current directory */
			snprintf(dir, sizeof(dir), ".");
		} else if (n < sizeof(dir)) {
			memcpy(dir, p, n);
			dir[n] = '\0';
		} else {
			dir[0] = '\0';
		}
		if ((o = strstr(dir, "$ORIGIN")) || (o = strstr(dir, "${ORIGIN}"))) {
			size_t tl = o[1] == '{' ? 9 : 7;
			char tmp[PATH_MAX];

			if (strbuf(tmp, sizeof(tmp), "%.*s%s%s", (int)(o - dir), dir,
				   origin ? origin : ".", o + tl))
				tmp[0] = '\0';
			snprintf(dir, sizeof(dir), "%s", tmp);
		}
		/* $LIB and $PLATFORM depend on the loader's build: not expanded */
		if (dir[0] && !strchr(dir, '$') &&
		    !strbuf(cand, sizeof(cand), "%s/%s", dir, name) &&
		    elf_compatible(cand, L->cls, L->machine) &&
		    !strbuf(out, len, "%s", cand))
			return 0;
		p += n;
		if (*p == ':')
			p++;
	}
	return -ENOENT;
}

static int default_dirs(struct loader *L, const char *name, char *out, size_t len)
{
	const char *triplet = L->machine == EM_X86_64    ? "x86_64-linux-gnu"
			      : L->machine == EM_AARCH64 ? "aarch64-linux-gnu"
			      : L->machine == EM_386     ? "i386-linux-gnu"
							 : NULL;
	char list[512];

	if (triplet)
		snprintf(list, sizeof(list), "/lib/%s:/usr/lib/%s:/lib64:/usr/lib64:/lib:/usr/lib",
			 triplet, triplet);
	else
		snprintf(list, sizeof(list), "/lib64:/usr/lib64:/lib:/usr/lib");
	return search_dirs(L, list, NULL, name, out, len);
}

/* Find DT_NEEDED @name of object @from as ld.so(8) describes it. */
static int loader_find(struct loader *L, int from, const char *name, char *out, size_t len)
{
	const struct loaded *o = &L->obj[from];

	if (strchr(name, '/')) {
		if (elf_compatible(name, L->cls, L->machine) && !strbuf(out, len, "%s", name))
			return 0;
		return -ENOENT;
	}
	if (!o->runpath) {
		/* DT_RPATH of the needing object, then of its loaders */
		for (int i = from; i >= 0; i = L->obj[i].parent)
			if (L->obj[i].rpath && !search_dirs(L, L->obj[i].rpath, L->obj[i].origin,
							     name, out, len))
				return 0;
	}
	if (L->ld_library_path && !search_dirs(L, L->ld_library_path, NULL, name, out, len))
		return 0;
	if (o->runpath && !search_dirs(L, o->runpath, o->origin, name, out, len))
		return 0;
	if (!L->cache_loaded) {
		ldcache_load(&L->cache);
		L->cache_loaded = 1;
	}
	if (L->cache.len && !ldcache_find(&L->cache, name, L->cls, L->machine, out, len))
		return 0;
	return default_dirs(L, name, out, len);
}

static int loader_add(struct loader *L, const char *path, const char *name, int parent,
		      struct dyninfo *d)
{
	struct loaded *o;
	char real[PATH_MAX], *slash;

	if (!realpath(path, real))
		return -errno;
	if (L->n == L->cap) {
		size_t nc = L->cap ? L->cap * 2 : 16;
		struct loaded *no = realloc(L->obj, nc * sizeof(*no));
		if (!no)
			return -ENOMEM;
		L->obj = no;
		L->cap = nc;
	}
	o = &L->obj[L->n];
	memset(o, 0, sizeof(*o));
	o->parent = parent;
	o->path = strdup(real);
	o->name = strdup(name);
	slash = strrchr(real, '/');
	if (slash)
		*slash = '\0';
	o->origin = strdup(slash ? (real[0] ? real : "/") : ".");
	if (!o->path || !o->name || !o->origin) {
		free(o->path);
		free(o->name);
		free(o->origin);
		return -ENOMEM;
	}
	/* hand the strings over */
	o->rpath = d->rpath;
	o->runpath = d->runpath;
	o->soname = d->soname;
	d->rpath = d->runpath = d->soname = NULL;
	L->n++;
	return 0;
}

static int loader_has(const struct loader *L, const char *name, const char *real)
{
	for (size_t i = 0; i < L->n; i++) {
		if (!strcmp(L->obj[i].name, name) || (L->obj[i].soname && !strcmp(L->obj[i].soname, name)))
			return 1;
		if (real && !strcmp(L->obj[i].path, real))
			return 1;
	}
	return 0;
}

static void loader_fini(struct loader *L)
{
	for (size_t i = 0; i < L->n; i++) {
		free(L->obj[i].path);
		free(L->obj[i].name);
		free(L->obj[i].soname);
		free(L->obj[i].rpath);
		free(L->obj[i].runpath);
		free(L->obj[i].origin);
	}
	free(L->obj);
	free(L->cache.data);
}

/* Read @path's dynamic section (and its class/machine into @L when @first). */
static int read_dyn(struct loader *L, const char *path, int first, struct dyninfo *d, char *why,
		    size_t whylen)
{
	struct elf_file f;
	int err;

	err = elf_file_open(path, &f, why, whylen);
	if (err)
		return err;
	if (first) {
		L->cls = f.ehdr.e_ident[EI_CLASS];
		L->machine = f.ehdr.e_machine;
	}
	err = dyninfo_read(f.elf, d);
	elf_file_close(&f);
	return err;
}

int probes_needed_objects(const char *exe, const char *ld_library_path, char ***paths,
			  size_t *n, char *why, size_t whylen)
{
	struct loader L;
	struct dyninfo d;
	char **out = NULL;
	int err;

	*paths = NULL;
	*n = 0;
	memset(&L, 0, sizeof(L));
	memset(&d, 0, sizeof(d));
	L.ld_library_path = ld_library_path ? ld_library_path : getenv("LD_LIBRARY_PATH");
	err = read_dyn(&L, exe, 1, &d, why, whylen);
	if (err)
		goto out;
	err = loader_add(&L, exe, exe, -1, &d);
	if (err) {
		set_why(why, whylen, "cannot resolve %s: %s", exe, strerror(-err));
		goto out;
	}
	/* breadth first, as the loader maps them */
	for (size_t i = 0; i < L.n; i++) {
		struct dyninfo cur;

		memset(&cur, 0, sizeof(cur));
		dyninfo_fini(&d);
		err = read_dyn(&L, L.obj[i].path, 0, &cur, NULL, 0);
		if (err == -ENOMEM)
			goto out;
		if (err)
			continue;
		d = cur;
		for (size_t k = 0; k < d.nneeded; k++) {
			char found[PATH_MAX], real[PATH_MAX];
			struct dyninfo nd;

			if (loader_has(&L, d.needed[k], NULL))
				continue;
			if (loader_find(&L, (int)i, d.needed[k], found, sizeof(found)))
				continue; /* ld.so would refuse to start: not our call */
			if (!realpath(found, real) || loader_has(&L, d.needed[k], real))
				continue;
			memset(&nd, 0, sizeof(nd));
			err = read_dyn(&L, found, 0, &nd, NULL, 0);
			if (err == -ENOMEM)
				goto out;
			if (!err)
				err = loader_add(&L, found, d.needed[k], (int)i, &nd);
			dyninfo_fini(&nd);
			if (err == -ENOMEM)
				goto out;
		}
	}
	out = calloc(L.n ? L.n : 1, sizeof(*out));
	if (!out) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < L.n; i++) {
		out[i] = L.obj[i].path;
		L.obj[i].path = NULL;
	}
	*paths = out;
	*n = L.n;
	err = 0;
out:
	dyninfo_fini(&d);
	loader_fini(&L);
	return err;
}

int probes_find_in_needed(const char *exe, const char *ld_library_path,
			  const struct probe_point *p, struct probe_site **sites, size_t *n,
			  char *why, size_t whylen)
{
	char **paths = NULL, where[PATH_MAX + 32];
	size_t np = 0;
	int err;

	*sites = NULL;
	*n = 0;
	err = probes_needed_objects(exe, ld_library_path, &paths, &np, why, whylen);
	if (err)
		return err;
	snprintf(where, sizeof(where), "%s and its libraries", exe);
	err = find_in_paths(paths, np, p, where, sites, n, why, whylen);
	probes_paths_free(paths, np);
	return err;
}

/* ==== opening ==== */

static int read_sysfs_line(const char *path, char *buf, size_t len)
{
	FILE *fp = fopen(path, "re");
	int err = 0;

	if (!fp)
		return -errno;
	if (!fgets(buf, (int)len, fp))
		err = -EIO;
	fclose(fp);
	buf[strcspn(buf, "\n")] = '\0';
	return err;
}

/* A PMU format file: "config:N" or "config:A-B". Returns the first bit. */
static int format_shift(const char *name, int *shift)
{
	char path[256], buf[64], *dash;
	int err;

	snprintf(path, sizeof(path), UPROBE_PMU "/format/%s", name);
	err = read_sysfs_line(path, buf, sizeof(buf));
	if (err)
		return err;
	if (strncmp(buf, "config:", 7))
		return -EINVAL;
	dash = strchr(buf + 7, '-');
	if (dash)
		*dash = '\0';
	err = safe_atoi(buf + 7, shift);
	if (err || *shift < 0 || *shift > 63)
		return -EINVAL;
	return 0;
}

int probes_open(const struct probe_site *site, pid_t tid, int retprobe, int *fd, char *why,
		size_t whylen)
{
	struct perf_event_attr attr;
	char buf[64];
	int type, err, ret_shift = 0, ref_shift = 0;
	long r;

	*fd = -1;
	err = read_sysfs_line(UPROBE_PMU "/type", buf, sizeof(buf));
	if (!err)
		err = safe_atoi(buf, &type);
	if (err) {
		set_why(why, whylen, "this kernel has no uprobe PMU (" UPROBE_PMU "/type: %s); "
			"it needs CONFIG_UPROBE_EVENTS", strerror(-err));
		return -ENODEV;
	}
	if (retprobe && format_shift("retprobe", &ret_shift)) {
		set_why(why, whylen, "this kernel's uprobe PMU has no retprobe format bit: cannot "
			"probe function returns (%s)", site->name);
		return -EOPNOTSUPP;
	}
	/* semaphores through ref_ctr_offset came with Linux 4.20 */
	if (site->ref_ctr_offset && format_shift("ref_ctr_offset", &ref_shift)) {
		set_why(why, whylen, "USDT probe %s is guarded by a semaphore and this kernel "
			"cannot set it (no uprobe ref_ctr_offset, Linux < 4.20)", site->name);
		return -EOPNOTSUPP;
	}
	if (site->ref_ctr_offset && ref_shift + 64 - __builtin_clzll(site->ref_ctr_offset) > 64) {
		set_why(why, whylen, "semaphore offset 0x%" PRIx64 " of %s does not fit the "
			"ref_ctr_offset field", site->ref_ctr_offset, site->name);
		return -EOVERFLOW;
	}
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = (uint32_t)type;
	attr.config = (retprobe ? 1ull << ret_shift : 0) |
		      (site->ref_ctr_offset ? site->ref_ctr_offset << ref_shift : 0);
	/* the kernel copies the path during the call; an inherited copy
	 * would re-read this pointer in the child: inherit stays 0 */
	attr.config1 = (uint64_t)(uintptr_t)site->path;
	attr.config2 = site->offset;
	attr.sample_period = 1;
	attr.sample_type = PROBES_SAMPLE_TYPE;
	attr.use_clockid = 1;
	attr.clockid = CLOCK_MONOTONIC;
	attr.inherit = 0;
	r = syscall(SYS_perf_event_open, &attr, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (r >= 0) {
		*fd = (int)r;
		return 0;
	}
	err = -errno;
	switch (err) {
	case -EACCES:
	case -EPERM:
		set_why(why, whylen, "uprobes need CAP_SYS_ADMIN (run mfu-record as root, or with "
			"sudo)");
		return -EPERM;
	case -ESRCH:
		set_why(why, whylen, "cannot probe %s in thread %d: no such thread", site->name,
			(int)tid);
		break;
	case -ENOENT:
		set_why(why, whylen, "cannot probe %s: %s: no such file", site->name, site->path);
		break;
	case -EINVAL:
		set_why(why, whylen, "cannot place a uprobe on %s at %s+0x%" PRIx64 ": %s (the "
			"offset is past the end of the file, or another uprobe there uses a "
			"different semaphore offset)", site->name, site->path, site->offset,
			strerror(-err));
		break;
	default:
		set_why(why, whylen, "cannot place a uprobe on %s at %s+0x%" PRIx64 " for thread "
			"%d: %s", site->name, site->path, site->offset, (int)tid, strerror(-err));
		break;
	}
	return err;
}

int probes_event_id(int fd, uint64_t *id)
{
	if (ioctl(fd, PERF_EVENT_IOC_ID, id) != 0)
		return -errno;
	return 0;
}

int probes_map_ring(int fd, unsigned pages, void **map, size_t *len)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	void *m;

	*map = NULL;
	*len = 0;
	if (pages == 0)
		pages = 8;
	if (pages & (pages - 1))
		return -EINVAL;
	m = mmap(NULL, (1 + (size_t)pages) * page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED)
		return -errno;
	*map = m;
	*len = (1 + (size_t)pages) * page;
	return 0;
}

int probes_share_ring(int fd, int ring_fd)
{
	if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, ring_fd) != 0)
		return -errno;
	return 0;
}

void probes_unmap_ring(void *map, size_t len)
{
	if (map)
		munmap(map, len);
}

int probes_parse_hit(const struct perf_event_header *hdr, const void *rec, size_t len,
		     struct probe_hit *out)
{
	struct perf_rec r;
	int err;

	memset(out, 0, sizeof(*out));
	if (hdr->type != PERF_RECORD_SAMPLE)
		return -ENOMSG;
	err = perf_record_parse(hdr, rec, len, PROBES_SAMPLE_TYPE, 0, &r);
	if (err)
		return err == -EINVAL ? -EPROTO : err;
	if ((r.has & (PERF_REC_HAS_ID | PERF_REC_HAS_TID | PERF_REC_HAS_TIME)) !=
	    (PERF_REC_HAS_ID | PERF_REC_HAS_TID | PERF_REC_HAS_TIME))
		return -EPROTO;
	out->id = r.id;
	out->ip = r.sample.ip;
	out->pid = r.pid;
	out->tid = r.tid;
	out->time = r.time;
	return 0;
}
