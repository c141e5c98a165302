/*
 * The symbols module's private half: the data every file of
 * src/record/symbols/ works on, and the functions they call across files.
 *   symbols.c  processes and their maps, the string pool, demangling, the
 *              public functions (symbols.h)
 *   dso.c      files: identity (device, inode, build ID), their symbol
 *              tables and line tables, address lookups
 *   stubs.c    names no symbol table gives: PLT stubs (foo@plt), .init, .fini
 *   eh_frame.c function bounds from .eh_frame, for functions without a symbol
 *   kernel.c   /proc/kallsyms
 *   jit.c      /tmp/perf-PID.map of JIT compilers
 */
#ifndef MFU_SYMBOLS_IMPL_H
#define MFU_SYMBOLS_IMPL_H

#include "symbols.h"
#include "util.h"
#include "record/idmap.h"

#include <dlfcn.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
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

struct pool_chunk {
	struct pool_chunk *next;
	size_t used, cap;
	char data[];
};


enum dso_state { DSO_UNREAD = 0, DSO_READY, DSO_MISSING };

/* 32 bytes: two to a cache line */
struct dso_sym {
	uint64_t addr;        /* ELF virtual address */
	uint32_t size;        /* bytes (a function is smaller than 4 GiB) */
	unsigned char source; /* enum symbol_source */
	const char *name;     /* as in the symbol table; PLT stubs: "foo@plt";
			       * NULL: a function known only by its .eh_frame
			       * bounds */
	const char *shown;    /* demangled (or @name; "libfoo.so.1+0x1a2b0"
			       * for a NULL @name), set on first use */
};

/* A function's bounds from its FDE in .eh_frame. */
struct dso_fde {
	uint64_t start, end;  /* ELF virtual addresses, [start, end) */
};

struct dso_load {
	uint64_t off, vaddr, filesz;
	bool exec;
};

/* One resolved address (the per-DSO cache). */
struct dso_hit {
	uint32_t sym; /* index in syms, NONE if no symbol covers it */
	int line;
	const char *file;
};

/* Symbol candidates while a DSO is read (dso.c, stubs.c). */
struct cand {
	uint64_t addr, size;
	const char *name;
	size_t len; /* of the name without its "@VERSION" / "@@VERSION" */
	unsigned char bind;
	bool plt;   /* a PLT stub jumping to @name: shown as "name@plt" */
};

struct cands {
	struct cand *c;
	size_t n, cap;
	char **own;   /* names made here, not in the ELF data (cands_free()) */
	size_t nown, capown;
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
	uint64_t *addrs; /* syms[i].addr: the bisection reads 8 bytes an entry,
			  * not a whole dso_sym */

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

	/* libdwfl's callbacks, with our own search path for separate debug
	 * files (MFU_DEBUG_DIRS) */
	Dwfl_Callbacks callbacks;
	char *debuginfo_path;

	struct symbols_stats st;
};


/* symbols.c */
const char *pool_strndup(struct pool_chunk **pool, const char *str, size_t len);
const char *pool_strdup(struct pool_chunk **pool, const char *str);
void pool_free(struct pool_chunk *c);
/* The name to show for a raw symbol name: demangled, kept in the pool. */
const char *shown_name(struct symbols *s, const char *raw);
int proc_get(struct symbols *s, pid_t pid, struct proc **out);

/* dso.c */
/* The DSO for @path (already stripped of " (deleted)"), created if new. */
int dso_get(struct symbols *s, const char *path, bool deleted, struct dso **out);
int dso_read(struct symbols *s, struct dso *d);
uint64_t dso_vaddr(const struct dso *d, uint64_t off);
int dso_lookup(struct symbols *s, struct dso *d, uint64_t vaddr, struct dso_hit *out);
void dso_free(struct dso *d);
size_t leading_underscores(const char *s);
int cands_add(struct cands *cs, uint64_t addr, uint64_t size, const char *name, unsigned char bind);
/* A name @cs keeps until cands_free() (a string of its own, or NULL). */
const char *cands_keep(struct cands *cs, char *name);
void cands_free(struct cands *cs);
/* libdwfl's find_debuginfo callback, run with the owner's file identity */
int dso_find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
		       const char *file_name, const char *debuglink_file, GElf_Word debuglink_crc,
		       char **debuginfo_file_name);

/* stubs.c */
/* Add to @cs the PLT stubs of @elf ("foo@plt", x86-64: the GOT slot each
 * one jumps through, named by its relocation) and the .init/.fini sections.
 * @plt (up to @maxplt) receives the address ranges of the PLT sections,
 * *@nplt their number. Returns 0 or -ENOMEM; a section that does not parse
 * adds nothing. */
int stubs_read(Elf *elf, struct cands *cs, uint64_t (*plt)[2], size_t maxplt, size_t *nplt);

/* eh_frame.c */
/* The function bounds of every FDE in @elf's .eh_frame whose start lies in
 * one of @loads' executable segments, sorted by start, into a malloc'd
 * *@out. Returns 0 (none: *@out NULL) or -ENOMEM; what does not parse ends
 * the walk, keeping what came before. */
int eh_frame_read(Elf *elf, const struct dso_load *loads, size_t nloads, struct dso_fde **out, size_t *n);

/* kernel.c */
int resolve_kernel(struct symbols *s, uint64_t ip, struct symbol_info *out);

/* jit.c */
int resolve_jit(struct symbols *s, pid_t pid, const struct map *m, uint64_t ip, struct symbol_info *out);

#endif
