/* Names no symbol table gives (symbols_impl.h): PLT stubs and the .init
 * and .fini sections.
 *
 * A call from a shared library or a PIE to a function of another object
 * goes through a stub the linker made, in .plt (lazy binding), .plt.sec
 * (with IBT: .plt then only holds the lazy half) or .plt.got (functions
 * whose GOT slot is also used for their address). No symbol covers the
 * stubs; perf names them "foo@plt" and so do we. On x86-64 every stub jumps
 * through its GOT slot, "jmp *disp32(%rip)" (ff 25, maybe after endbr64
 * and a bnd prefix), and the relocation that fills that slot
 * (R_X86_64_JUMP_SLOT, R_X86_64_GLOB_DAT) names the function; a slot
 * filled by an IFUNC resolver of the object itself (R_X86_64_IRELATIVE,
 * libc's string functions) has no symbol: perf names its stub
 * "*ABS*+0xRESOLVER@plt" and so do we. The lazy
 * half of an IBT PLT only pushes its index into .rela.plt (68 imm32): the
 * same name. Reading the instructions rather than counting entries keeps
 * this right whatever the linker put in which order. Other architectures:
 * no stubs named (their stubs then fall to .eh_frame, or stay unknown).
 *
 * .init and .fini hold one function each, _init and _fini (crti.o), which
 * only .symtab names.
 */
#include "symbols_impl.h"

#include <inttypes.h>
#include <stdio.h>

struct got_slot {
	uint64_t addr;
	const char *name;
};

struct relocs {
	struct got_slot *slot; /* JUMP_SLOT and GLOB_DAT relocations, by address */
	size_t n, cap;
	const char **jmprel;   /* .rela.plt's symbol names, in order (NULL: none) */
	size_t njmprel;
};

static int slot_cmp(const void *pa, const void *pb)
{
	const struct got_slot *a = pa, *b = pb;

	return a->addr < b->addr ? -1 : a->addr > b->addr;
}

static const char *slot_name(const struct relocs *rl, uint64_t addr)
{
	size_t lo = 0, hi = rl->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (rl->slot[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < rl->n && rl->slot[lo].addr == addr ? rl->slot[lo].name : NULL;
}

/* The function relocations of one SHT_RELA section whose symbols are in
 * a .dynsym. */
static int relocs_add(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh, bool is_jmprel, struct relocs *rl,
		      struct cands *cs)
{
	Elf_Scn *symscn = elf_getscn(elf, sh->sh_link);
	Elf_Data *rd = elf_getdata(scn, NULL), *sd;
	GElf_Shdr ssh;
	size_t nrel;

	if (!symscn || !gelf_getshdr(symscn, &ssh) || ssh.sh_type != SHT_DYNSYM || !rd || !sh->sh_entsize ||
	    !(sd = elf_getdata(symscn, NULL)))
		return 0;
	nrel = sh->sh_size / sh->sh_entsize;
	if (is_jmprel && !rl->jmprel) {
		rl->jmprel = calloc(nrel ? nrel : 1, sizeof(*rl->jmprel));
		if (!rl->jmprel)
			return -ENOMEM;
		rl->njmprel = nrel;
	}
	/* elf_getdata() gave the relocations in our layout and byte order */
	if (gelf_getclass(elf) == ELFCLASS64 && rd->d_type == ELF_T_RELA)
		nrel = rd->d_size / sizeof(Elf64_Rela) < nrel ? rd->d_size / sizeof(Elf64_Rela) : nrel;
	for (size_t i = 0; i < nrel; i++) {
		GElf_Rela rel;
		GElf_Sym sym;
		const char *name;
		unsigned type;

		if (gelf_getclass(elf) == ELFCLASS64 && rd->d_type == ELF_T_RELA) {
			const Elf64_Rela *r = (const Elf64_Rela *)rd->d_buf + i;
			/* most of .rela.dyn is R_X86_64_RELATIVE: skip it cheaply */
			type = (unsigned)ELF64_R_TYPE(r->r_info);
			if (type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT && type != R_X86_64_IRELATIVE)
				continue;
			rel.r_offset = r->r_offset;
			rel.r_info = r->r_info;
			rel.r_addend = r->r_addend;
		} else if (!gelf_getrela(rd, (int)i, &rel)) {
			break;
		}
		type = (unsigned)GELF_R_TYPE(rel.r_info);
		if (type == R_X86_64_IRELATIVE && is_jmprel) {
			char *n = NULL;

			if (asprintf(&n, "*ABS*+%#" PRIx64, (uint64_t)rel.r_addend) < 0)
				n = NULL;
			if (!(name = cands_keep(cs, n)))
				return -ENOMEM;
			goto named;
		}
		if (type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT)
			continue;
		if (!GELF_R_SYM(rel.r_info) || !gelf_getsym(sd, (int)GELF_R_SYM(rel.r_info), &sym))
			continue;
		name = elf_strptr(elf, ssh.sh_link, sym.st_name);
		if (!name || !*name)
			continue;
		if (type == R_X86_64_GLOB_DAT && GELF_ST_TYPE(sym.st_info) != STT_FUNC &&
		    GELF_ST_TYPE(sym.st_info) != STT_GNU_IFUNC && GELF_ST_TYPE(sym.st_info) != STT_NOTYPE)
			continue; /* a data object's slot: no stub jumps through it */
named:
		if (is_jmprel && rl->jmprel && i < rl->njmprel)
			rl->jmprel[i] = name;
		if (array_grow(&rl->slot, &rl->cap, rl->n + 1, sizeof(*rl->slot)))
			return -ENOMEM;
		rl->slot[rl->n++] = (struct got_slot){ .addr = rel.r_offset, .name = name };
	}
	return 0;
}

/* The function that the x86-64 PLT entry @e (@len bytes at @vaddr) is for,
 * or NULL. */
static const char *plt_entry_name(const struct relocs *rl, const unsigned char *e, size_t len, uint64_t vaddr)
{
	size_t i = 0;

	if (len >= 4 && e[0] == 0xf3 && e[1] == 0x0f && e[2] == 0x1e && e[3] == 0xfa)
		i = 4; /* endbr64 */
	if (i < len && e[i] == 0xf2)
		i++; /* bnd */
	if (i + 6 <= len && e[i] == 0xff && e[i + 1] == 0x25) {
		/* jmp *disp32(%rip): relative to the next instruction */
		int32_t disp = (int32_t)((uint32_t)e[i + 2] | (uint32_t)e[i + 3] << 8 | (uint32_t)e[i + 4] << 16 |
					 (uint32_t)e[i + 5] << 24);
		return slot_name(rl, vaddr + i + 6 + (uint64_t)(int64_t)disp);
	}
	if (i + 5 <= len && e[i] == 0x68) {
		/* push $index: the lazy half of an IBT PLT */
		uint32_t idx = (uint32_t)e[i + 1] | (uint32_t)e[i + 2] << 8 | (uint32_t)e[i + 3] << 16 |
			       (uint32_t)e[i + 4] << 24;
		return idx < rl->njmprel ? rl->jmprel[idx] : NULL;
	}
	return NULL; /* PLT0 (push GOT+8; jmp *GOT+16), or unknown code */
}

static int plt_section(const struct relocs *rl, Elf_Scn *scn, const GElf_Shdr *sh, const char *name,
		       struct cands *cs)
{
	Elf_Data *data = elf_rawdata(scn, NULL);
	size_t ent = sh->sh_entsize;

	if (!data || !data->d_buf || data->d_size < sh->sh_size)
		return 0;
	/* ld sets sh_entsize: 16 for .plt and .plt.sec, 8 or 16 (IBT) for
	 * .plt.got; guess the same when it is missing */
	if (ent != 8 && ent != 16)
		ent = strcmp(name, ".plt.got") == 0 ? 8 : 16;
	for (size_t off = 0; off + ent <= sh->sh_size; off += ent) {
		const char *fn = plt_entry_name(rl, (const unsigned char *)data->d_buf + off, ent, sh->sh_addr + off);
		int err;
		if (!fn)
			continue;
		err = cands_add(cs, sh->sh_addr + off, ent, fn, STB_LOCAL);
		if (err)
			return err;
		if (cs->n && cs->c[cs->n - 1].name == fn && cs->c[cs->n - 1].addr == sh->sh_addr + off)
			cs->c[cs->n - 1].plt = true;
	}
	return 0;
}

int stubs_read(Elf *elf, struct cands *cs, uint64_t (*plt)[2], size_t maxplt, size_t *nplt)
{
	struct relocs rl = { 0 };
	GElf_Ehdr eh;
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	bool plt_got = false;
	int err = 0;

	*nplt = 0;
	if (!gelf_getehdr(elf, &eh) || elf_getshdrstrndx(elf, &shstrndx) != 0)
		return 0;
	/* .rela.dyn is long and only .plt.got needs it */
	while (eh.e_machine == EM_X86_64 && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_PROGBITS &&
		    (name = elf_strptr(elf, shstrndx, sh.sh_name)) && strcmp(name, ".plt.got") == 0)
			plt_got = true;
	}
	/* the relocations first: the stubs are named by them */
	scn = NULL;
	while (eh.e_machine == EM_X86_64 && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;
		bool jmprel;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA)
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		jmprel = name && strcmp(name, ".rela.plt") == 0;
		if (!jmprel && !plt_got)
			continue;
		err = relocs_add(elf, scn, &sh, jmprel, &rl, cs);
		if (err)
			goto out;
	}
	if (rl.n)
		qsort(rl.slot, rl.n, sizeof(*rl.slot), slot_cmp);
	scn = NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS || !(sh.sh_flags & SHF_EXECINSTR) ||
		    !sh.sh_size)
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name)
			continue;
		if (strcmp(name, ".init") == 0 || strcmp(name, ".fini") == 0) {
			err = cands_add(cs, sh.sh_addr, sh.sh_size, name[1] == 'i' ? "_init" : "_fini", STB_LOCAL);
		} else if (strncmp(name, ".plt", 4) == 0 && (name[4] == '\0' || name[4] == '.')) {
			if (*nplt < maxplt) {
				plt[*nplt][0] = sh.sh_addr;
				plt[*nplt][1] = sh.sh_addr + sh.sh_size;
				(*nplt)++;
			}
			if (eh.e_machine == EM_X86_64)
				err = plt_section(&rl, scn, &sh, name, cs);
		}
		if (err)
			goto out;
	}
out:
	free(rl.slot);
	free(rl.jmprel);
	return err;
}
