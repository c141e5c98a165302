/* Function bounds from .eh_frame (symbols_impl.h).
 *
 * Every function a compiler emits with unwind tables (the default on
 * x86-64 and arm64 Linux, C++ or not) has an FDE in .eh_frame giving its
 * first address and its length. A stripped library keeps .eh_frame (it is
 * loaded: the unwinder needs it at run time) while its internal functions
 * lose their names, so the FDEs are what still tells two unnamed functions
 * apart, and where an exported function ends.
 *
 * The format is the LSB's ("Exception Frames"): a sequence of CIEs and
 * FDEs, each with a length; an FDE's first two fields are its initial
 * location and its address range, in the pointer encoding that its CIE's
 * 'R' augmentation gives. The file is whatever the target mapped: every
 * read is bounds-checked, and what does not parse ends the walk.
 */
#include "symbols_impl.h"

#include <dwarf.h>

struct rd {
	const unsigned char *base, *p, *end;
	uint64_t vaddr; /* of base */
	bool big;       /* the file is big-endian */
	bool addr64;    /* ELFCLASS64 */
	bool ok;
};

static uint64_t rd_bytes(struct rd *r, size_t n)
{
	uint64_t v = 0;

	if (!r->ok || (size_t)(r->end - r->p) < n) {
		r->ok = false;
		return 0;
	}
	/* in the file's byte order, whatever ours is */
	for (size_t i = 0; i < n; i++)
		v = (v << 8) | r->p[r->big ? i : n - 1 - i];
	r->p += n;
	return v;
}

static uint64_t rd_uleb(struct rd *r)
{
	uint64_t v = 0;
	unsigned shift = 0;

	while (r->ok && r->p < r->end) {
		unsigned char b = *r->p++;
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80))
			return v;
	}
	r->ok = false;
	return 0;
}

static int64_t rd_sleb(struct rd *r)
{
	uint64_t v = 0;
	unsigned shift = 0;

	while (r->ok && r->p < r->end) {
		unsigned char b = *r->p++;
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80)) {
			if (shift < 64 && (b & 0x40))
				v |= ~0ULL << shift;
			return (int64_t)v;
		}
	}
	r->ok = false;
	return 0;
}

static int64_t sign_extend(uint64_t v, unsigned bits)
{
	uint64_t m = 1ULL << (bits - 1);
	return (int64_t)((v ^ m) - m);
}

/* A pointer in encoding @enc (DW_EH_PE_*). Only what .eh_frame uses for
 * code addresses is understood: absolute or pc-relative; anything else
 * fails the reader. */
static uint64_t rd_encoded(struct rd *r, unsigned char enc)
{
	uint64_t at = r->vaddr + (uint64_t)(r->p - r->base), v;

	if (enc == DW_EH_PE_omit) {
		r->ok = false;
		return 0;
	}
	switch (enc & 0x0f) {
	case DW_EH_PE_absptr:
		v = rd_bytes(r, r->addr64 ? 8 : 4);
		break;
	case DW_EH_PE_uleb128:
		v = rd_uleb(r);
		break;
	case DW_EH_PE_udata2:
		v = rd_bytes(r, 2);
		break;
	case DW_EH_PE_udata4:
		v = rd_bytes(r, 4);
		break;
	case DW_EH_PE_udata8:
		v = rd_bytes(r, 8);
		break;
	case DW_EH_PE_sleb128:
		v = (uint64_t)rd_sleb(r);
		break;
	case DW_EH_PE_sdata2:
		v = (uint64_t)sign_extend(rd_bytes(r, 2), 16);
		break;
	case DW_EH_PE_sdata4:
		v = (uint64_t)sign_extend(rd_bytes(r, 4), 32);
		break;
	case DW_EH_PE_sdata8:
		v = rd_bytes(r, 8);
		break;
	default:
		r->ok = false;
		return 0;
	}
	switch (enc & 0x70) {
	case DW_EH_PE_absptr:
		break;
	case DW_EH_PE_pcrel:
		v += at;
		break;
	default: /* textrel, datarel, funcrel, aligned: not for code addresses */
		r->ok = false;
		return 0;
	}
	if (enc & DW_EH_PE_indirect)
		r->ok = false;
	return r->addr64 ? v : (uint32_t)v;
}

/* The FDE pointer encoding of the CIE whose fields (after its id) are
 * [@r->p, @r->end). Returns false for a CIE we cannot read. */
static bool cie_encoding(struct rd *r, unsigned char *enc)
{
	const char *aug = (const char *)r->p;
	size_t auglen;
	unsigned version;
	const unsigned char *data_end;

	*enc = DW_EH_PE_absptr;
	version = (unsigned)rd_bytes(r, 1);
	auglen = strnlen(aug + 1, (size_t)(r->end - r->p));
	if (!r->ok || version < 1 || version > 4 || (size_t)(r->end - r->p) <= auglen)
		return false;
	r->p += auglen + 1;
	if (strstr(aug + 1, "eh")) /* an old GCC's pointer to its EH data */
		rd_bytes(r, r->addr64 ? 8 : 4);
	if (version == 4) /* address_size, segment_selector_size */
		rd_bytes(r, 2);
	rd_uleb(r); /* code alignment */
	rd_sleb(r); /* data alignment */
	if (version == 1)
		rd_bytes(r, 1); /* return address register */
	else
		rd_uleb(r);
	if (aug[1] != 'z')
		return r->ok && aug[1] == '\0';
	auglen = rd_uleb(r);
	if (!r->ok || auglen > (size_t)(r->end - r->p))
		return false;
	data_end = r->p + auglen;
	for (const char *c = aug + 2; *c && r->ok; c++) {
		switch (*c) {
		case 'R':
			*enc = (unsigned char)rd_bytes(r, 1);
			return r->ok;
		case 'L':
			rd_bytes(r, 1);
			break;
		case 'P': {
			unsigned char penc = (unsigned char)rd_bytes(r, 1);
			if ((penc & 0x70) == DW_EH_PE_aligned) {
				size_t a = r->addr64 ? 8 : 4;
				uint64_t at = r->vaddr + (uint64_t)(r->p - r->base);
				size_t pad = (size_t)((a - at % a) % a);
				if ((size_t)(data_end - r->p) < pad)
					return false;
				r->p += pad;
				penc = DW_EH_PE_absptr;
			}
			/* the personality routine may be indirect: its value is not used */
			rd_encoded(r, (unsigned char)(penc & ~DW_EH_PE_indirect & ~0x70));
			break;
		}
		case 'S': /* signal frame */
		case 'B': /* arm64 pointer authentication key B */
		case 'G': /* arm64 MTE tagged frame */
			break;
		default:
			/* unknown data before 'R': its size is unknown too */
			return false;
		}
		if (r->p > data_end)
			return false;
	}
	/* no 'R': the default encoding */
	return r->ok;
}

static int fde_cmp(const void *pa, const void *pb)
{
	const struct dso_fde *a = pa, *b = pb;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return a->end < b->end ? -1 : a->end > b->end;
}

static bool in_exec_load(const struct dso_load *loads, size_t nloads, uint64_t addr)
{
	for (size_t i = 0; i < nloads; i++)
		if (loads[i].exec && addr - loads[i].vaddr < loads[i].filesz)
			return true;
	return false;
}

/* The .eh_frame being read: its bytes, and the last CIE read (CIEs are
 * few, the linker merges equal ones). */
struct frames {
	struct rd r;          /* the whole section */
	size_t size;
	uint64_t cie_off;     /* UINT64_MAX: none yet */
	unsigned char cie_enc;
	bool cie_ok;
};

enum entry { ENTRY_END, ENTRY_CIE, ENTRY_FDE, ENTRY_SKIP };

/* The entry at @off of .eh_frame: its end in *@next and, for an FDE we
 * can read, the function's bounds. ENTRY_END: the terminator, or what does
 * not parse. */
static enum entry frames_entry(struct frames *fr, uint64_t off, uint64_t *next, uint64_t *start, uint64_t *end)
{
	struct rd r = fr->r, e;
	uint64_t len, id_off, id, range;

	if (off > fr->size || fr->size - off < 4)
		return ENTRY_END;
	r.p = r.base + off;
	r.ok = true;
	len = rd_bytes(&r, 4);
	if (len == 0)
		return ENTRY_END;
	if (len == 0xffffffff)
		len = rd_bytes(&r, 8);
	id_off = (uint64_t)(r.p - r.base);
	if (!r.ok || len < 4 || len > fr->size - id_off)
		return ENTRY_END;
	*next = id_off + len;
	e = r;
	e.end = r.base + *next;
	id = rd_bytes(&e, 4);
	if (id == 0)
		return ENTRY_CIE;
	if (id > id_off)
		return ENTRY_END;
	if (id_off - id != fr->cie_off) {
		struct rd c = fr->r;
		uint64_t clen;

		c.p = c.base + (id_off - id);
		c.ok = true;
		clen = rd_bytes(&c, 4);
		if (clen == 0xffffffff)
			clen = rd_bytes(&c, 8);
		fr->cie_off = id_off - id;
		fr->cie_ok = c.ok && clen >= 4 && clen <= (uint64_t)(c.end - c.p) && rd_bytes(&c, 4) == 0 && c.ok;
		if (fr->cie_ok) {
			c.end = c.p - 4 + clen;
			fr->cie_ok = cie_encoding(&c, &fr->cie_enc);
		}
	}
	if (!fr->cie_ok)
		return ENTRY_SKIP;
	*start = rd_encoded(&e, fr->cie_enc);
	/* the range has the pointer's size, never an adjustment */
	range = rd_encoded(&e, (unsigned char)(fr->cie_enc & 0x0f));
	if (!e.ok || !range || *start + range < *start)
		return ENTRY_SKIP;
	*end = *start + range;
	return ENTRY_FDE;
}

struct fde_list {
	struct dso_fde *f;
	size_t n, cap;
	bool sorted;
};

/* Keep the FDE [@start, @end) when it starts in an executable segment: an
 * FDE of code the linker dropped keeps a 0 or stray start. */
static int fde_add(struct fde_list *l, const struct dso_load *loads, size_t nloads, uint64_t start, uint64_t end)
{
	if (!in_exec_load(loads, nloads, start))
		return 0;
	if (array_grow(&l->f, &l->cap, l->n + 1, sizeof(*l->f)))
		return -ENOMEM;
	if (l->n && l->f[l->n - 1].start > start)
		l->sorted = false;
	l->f[l->n++] = (struct dso_fde){ .start = start, .end = end };
	return 0;
}

/* Through .eh_frame_hdr's search table: sorted by start already (the
 * unwinder bisects it). Returns 1 when the table was read, 0 when it
 * cannot be (then walk .eh_frame), -ENOMEM. */
static int frames_by_table(struct frames *fr, uint64_t eh_vaddr, const struct rd *hdr, struct fde_list *l,
			   const struct dso_load *loads, size_t nloads)
{
	struct rd h = *hdr;
	unsigned char ptr_enc, count_enc, table_enc;
	uint64_t count;

	h.ok = true;
	if (rd_bytes(&h, 1) != 1)
		return 0;
	ptr_enc = (unsigned char)rd_bytes(&h, 1);
	count_enc = (unsigned char)rd_bytes(&h, 1);
	table_enc = (unsigned char)rd_bytes(&h, 1);
	/* what every linker writes: the table as 4-byte offsets from the
	 * header (datarel sdata4) */
	if (!h.ok || table_enc != (DW_EH_PE_datarel | DW_EH_PE_sdata4) || count_enc == DW_EH_PE_omit ||
	    ptr_enc == DW_EH_PE_omit)
		return 0;
	if (rd_encoded(&h, ptr_enc) != eh_vaddr)
		return 0;
	count = rd_encoded(&h, count_enc);
	if (!h.ok || count > (uint64_t)(h.end - h.p) / 8)
		return 0;
	l->f = malloc((count ? count : 1) * sizeof(*l->f));
	if (!l->f)
		return -ENOMEM;
	l->cap = count ? count : 1;
	for (uint64_t i = 0; i < count; i++) {
		uint64_t next, start, end, fde;
		enum entry k;

		rd_bytes(&h, 4); /* the initial location: the FDE has it too */
		fde = h.vaddr + (uint64_t)sign_extend(rd_bytes(&h, 4), 32);
		if (!h.ok || fde < eh_vaddr)
			break;
		k = frames_entry(fr, fde - eh_vaddr, &next, &start, &end);
		if (k == ENTRY_FDE && fde_add(l, loads, nloads, start, end))
			return -ENOMEM;
		if (k == ENTRY_END || k == ENTRY_CIE)
			break;
	}
	return 1;
}

static Elf_Scn *section_named(Elf *elf, size_t shstrndx, const char *want, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		const char *name;
		if (!gelf_getshdr(scn, sh) || sh->sh_type == SHT_NOBITS)
			continue;
		name = elf_strptr(elf, shstrndx, sh->sh_name);
		if (name && strcmp(name, want) == 0)
			return scn;
	}
	return NULL;
}

int eh_frame_read(Elf *elf, const struct dso_load *loads, size_t nloads, struct dso_fde **out, size_t *n)
{
	struct fde_list l = { .sorted = true };
	struct frames fr = { .cie_off = UINT64_MAX };
	size_t shstrndx;
	Elf_Scn *scn, *hscn;
	Elf_Data *data, *hdata;
	GElf_Shdr sh, hsh;
	const char *ident;
	int rc = 0;

	*out = NULL;
	*n = 0;
	ident = elf_getident(elf, NULL);
	if (!ident || elf_getshdrstrndx(elf, &shstrndx) != 0)
		return 0;
	scn = section_named(elf, shstrndx, ".eh_frame", &sh);
	if (!scn || !(data = elf_rawdata(scn, NULL)) || !data->d_buf || !data->d_size)
		return 0;
	fr.r = (struct rd){ .base = data->d_buf, .p = data->d_buf,
			    .end = (const unsigned char *)data->d_buf + data->d_size, .vaddr = sh.sh_addr,
			    .addr64 = ident[EI_CLASS] == ELFCLASS64, .big = ident[EI_DATA] == ELFDATA2MSB, .ok = true };
	fr.size = data->d_size;

	hscn = section_named(elf, shstrndx, ".eh_frame_hdr", &hsh);
	if (hscn && (hdata = elf_rawdata(hscn, NULL)) && hdata->d_buf) {
		struct rd h = fr.r;
		h.base = h.p = hdata->d_buf;
		h.end = (const unsigned char *)hdata->d_buf + hdata->d_size;
		h.vaddr = hsh.sh_addr;
		rc = frames_by_table(&fr, sh.sh_addr, &h, &l, loads, nloads);
		if (rc < 0)
			goto out;
	}
	if (!rc) {
		/* no usable table: every entry in turn */
		uint64_t off = 0, next = 0, start = 0, end = 0;
		enum entry k;
		while ((k = frames_entry(&fr, off, &next, &start, &end)) != ENTRY_END) {
			if (k == ENTRY_FDE && fde_add(&l, loads, nloads, start, end)) {
				rc = -ENOMEM;
				goto out;
			}
			off = next;
		}
	}
	if (!l.sorted)
		qsort(l.f, l.n, sizeof(*l.f), fde_cmp);
	*out = l.f;
	*n = l.n;
	l.f = NULL;
	rc = 0;
out:
	free(l.f);
	return rc;
}
