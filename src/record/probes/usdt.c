/* USDT (stapsdt) notes (probes_impl.h). */
#include "probes_impl.h"

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

int host_is_le(void)
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
				probes_why(why, whylen, "%s: truncated stapsdt note", path);
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
				probes_why(why, whylen, "%s: USDT probe %s:%s at 0x%" PRIx64
					" is outside every executable segment", path, u.provider,
					u.name, u.vaddr);
				err = -EINVAL;
				goto out;
			}
			/* the semaphore lives in the writable data segment; the
			 * kernel finds it through the same file offset */
			if (u.semaphore && vaddr_to_offset(&f, u.semaphore, 0, &u.ref_ctr_offset)) {
				probes_why(why, whylen, "%s: the semaphore of USDT probe %s:%s at 0x%"
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
	probes_why(why, whylen, "%s: malformed stapsdt note (strings past its end)", path);
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
	if (array_grow(&uc->sites, &uc->cap, uc->n + 1, sizeof(*uc->sites)))
		return -ENOMEM;
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
			probes_why(why, whylen, "no USDT probe sdt:%s:%s in %s (it has no USDT probes)",
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

