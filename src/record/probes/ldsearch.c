/* The dynamic loader's search for a target not started yet (probes_impl.h). */
#include "probes_impl.h"

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
	int fd = asuser_open(asuser_owner(), path, O_RDONLY | O_NONBLOCK | O_CLOEXEC, 0), ok;
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
	if (array_grow(&L->obj, &L->cap, L->n + 1, sizeof(*L->obj)))
		return -ENOMEM;
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
		probes_why(why, whylen, "cannot resolve %s: %s", exe, strerror(-err));
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

