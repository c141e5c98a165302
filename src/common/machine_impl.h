/*
 * The machine model's private half:
 *   machine.c           probing (cpuid, sysfs, /proc), names, helpers
 *   machine_uarch.c     the microarchitecture table and its lookups
 *   machine_cpus.c      CPU lists and the cgroup CPU quota
 *   machine_identify.c  the model number checked against the ISA
 *   machine_peaks.c     spec peaks (FLOP/s per dtype, DRAM bandwidth)
 */
#ifndef MFU_MACHINE_IMPL_H
#define MFU_MACHINE_IMPL_H

#include "machine.h"
#include "cpumap.h"
#include "util.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <dirent.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#define MACHINE_X86 1
#else
#define MACHINE_X86 0
#endif

/* The largest CPU number a CPU list may name: Linux caps NR_CPUS at 8192
 * today; 65536 leaves room and keeps a CPU set of them at 8 KiB. */
#define MAX_CPUS CPUMAP_MAX


struct uarch {
	const char *vendor;
	int family;
	int model_lo, model_hi;
	int step_lo, step_hi;
	const char *brand;      /* substring of the brand string; NULL = any */
	const char *name;       /* machine.uarch */
	int fma128;             /* 128-bit FMA (or add/mul) ops per cycle */
	int fma256;             /* 256-bit FMA ops per cycle */
	int fma512;             /* 512-bit FMA ops per cycle; 0 = no AVX-512 */
	int amx;                /* AMX TMUL FLOPs per cycle (bf16, and fp16 with AMX-FP16) */
	const char *fpu_note;   /* appended to the FLOP detail, or NULL */
	int channels;           /* DRAM channels per socket; 0 = unknown */
	int mts;                /* DRAM transfer rate, MT/s */
	const char *dram;       /* "DDR5-4800" */
	const char *platform;   /* the product line the DRAM row is for */
};

#define MIB (1024.0 * 1024.0)
#define INTEL "GenuineIntel"
#define AMD "AuthenticAMD"

/* The row for a CPU no row names: an estimate from its ISA. */
extern const struct uarch uarch_estimate;

/* Notes on the 512-bit rate: their addresses identify them. */
extern const char skx_1fma_note[], zen4_note[], zen5_mobile_note[];

const struct uarch *uarch_by_identity(const struct machine *m);
const struct uarch *uarch_find(const struct machine *m);
__attribute__((format(printf, 3, 4))) void machine_append(char *buf, size_t len, const char *fmt, ...);
void machine_set_str(char *buf, size_t len, const char *s);
void machine_trim(char *s);
int read_u64_file(const char *path, uint64_t *v);
int cpulist_parse(const char *list, cpu_set_t *set, size_t setsize, unsigned ncpus);
int cpulist_format(const cpu_set_t *set, size_t setsize, unsigned ncpus, char *buf, size_t len);

#endif
