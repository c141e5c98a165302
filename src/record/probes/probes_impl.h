/*
 * The probes module's private half (src/record/probes/):
 *   spec.c      --step / --phase specs: parsing and printing points
 *   elf.c       ELF files: opening (and their debug files), functions by
 *               name (versions, demangled names), addresses to file offsets
 *   usdt.c      USDT (stapsdt) notes
 *   objects.c   which object a point is in: a live process's maps, paths
 *   ldsearch.c  the dynamic loader's search (ld.so.cache, DT_NEEDED,
 *               RPATH/RUNPATH) for a target that has not started
 *   uprobe.c    uprobe perf events: opening, rings, hits
 * probe_steps.c turns hits into steps and phases; py_hook.c does the same
 * for Python functions.
 */
#ifndef MFU_PROBES_IMPL_H
#define MFU_PROBES_IMPL_H

#include "probes.h"
#include "asuser.h"
#include "record/sampling/perf_ring.h"
#include "record/symbols/symbols.h"
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

/* Say why in @why (printf), when there is room for it. */
void probes_why(char *why, size_t whylen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

struct elf_file {
	int fd;
	Elf *elf;
	GElf_Ehdr ehdr;
	size_t nload;
	GElf_Phdr *load; /* PT_LOAD headers */
};

/* elf.c */
int elf_file_open(const char *path, struct elf_file *f, char *why, size_t whylen);
void elf_file_close(struct elf_file *f);
Elf_Scn *find_section(Elf *elf, const char *name, GElf_Shdr *sh);
void site_init(struct probe_site *s, const char *path);
int vaddr_to_offset(const struct elf_file *f, uint64_t vaddr, int exec, uint64_t *off);
/* objects.c */
int find_in_paths(char *const *paths, size_t npaths, const struct probe_point *p, const char *where,
		  struct probe_site **sites, size_t *n, char *why, size_t whylen);
/* usdt.c */
int host_is_le(void);

#endif
