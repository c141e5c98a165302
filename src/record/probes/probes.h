/*
 * Probes: step boundaries taken from functions and USDT probes of binaries
 * that have no markers (--step SPEC, --phase NAME=SPEC).
 *
 * Three layers, each usable on its own:
 *   - spec parsing: the text of --step / --phase into a struct probe_spec of
 *     one or two struct probe_point (a function entry or return, a USDT
 *     probe), without looking at any file;
 *   - resolution: a point in one ELF file into struct probe_site (path, file
 *     offset, USDT semaphore offset) with libelf; plus the searches that
 *     decide which file: a live process's /proc/PID/maps, or an executable
 *     and its DT_NEEDED libraries found as ld.so would (for a target that has
 *     not run yet); libraries that arrive later through dlopen are resolved
 *     one file at a time (probes_resolve_point) from the MMAP2 records;
 *   - opening: one uprobe perf event per site and thread (never inherit: an
 *     inherited uprobe breaks the target's pthread_create), its ring, and
 *     the decoding of its samples (the ring is drained with perf_ring.h).
 * See docs/probes.md for the syntax and the semantics of a step.
 */
#ifndef MFU_PROBES_H
#define MFU_PROBES_H

#include <limits.h>
#include <linux/perf_event.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Longest function name (mangled or demangled, as written) or USDT
 * provider / probe name, NUL included. */
#define PROBE_NAME_MAX 512
/* Longest object name in a spec ("libfoo.so", "/opt/x/lib/libfoo.so.1"). */
#define PROBE_OBJECT_MAX 1024

/* ---- spec parsing ---- */

enum probe_point_kind {
	PROBE_POINT_FUNC = 1, /* a function: its entry, or its return */
	PROBE_POINT_SDT,      /* a USDT (<sys/sdt.h>) probe, all its sites */
};

struct probe_point {
	enum probe_point_kind kind;
	int at_return;                 /* FUNC: the return (a uretprobe), not the entry */
	char object[PROBE_OBJECT_MAX]; /* "" when not named; a path when it holds a '/';
					* else a file name (see probes_object_matches) */
	char provider[PROBE_NAME_MAX]; /* SDT only */
	char name[PROBE_NAME_MAX];     /* function as written, or SDT probe name */
};

enum probe_spec_kind {
	/* FUNC: a step from each entry of FUNC to the matching return, on the
	 * thread that made the call. end = begin with at_return set. */
	PROBE_SPEC_CALL = 1,
	/* A,B: a step from a hit of A to the next hit of B on the same thread. */
	PROBE_SPEC_PAIR,
	/* sdt:P:N alone: every hit begins a step and ends the thread's previous
	 * one, so N hits give N-1 steps. end = begin. */
	PROBE_SPEC_EACH,
};

struct probe_spec {
	enum probe_spec_kind kind;
	struct probe_point begin, end;
};

/*
 * Parse a --step SPEC:
 *   FUNC                      entry to return of FUNC
 *   FUNC_A,FUNC_B             entry of A to entry of B
 *   sdt:PROVIDER:NAME         hit to next hit of one USDT probe
 *   sdt:P:BEGIN,sdt:P:END     hit of BEGIN to hit of END
 * Each point may name its object first: "libfoo.so:FUNC",
 * "/path/libfoo.so.1:FUNC", "libfoo.so:sdt:P:N". FUNC may be a C++ name,
 * mangled ("_ZN2ns3fooEi") or demangled ("ns::foo", "ns::foo(int)"); commas
 * inside (), <> or [] do not split the pair. Mixed pairs (a function and a
 * USDT probe) are allowed.
 * Returns 0, or -EINVAL with one line in @why.
 */
int probes_parse_spec(const char *spec, struct probe_spec *out, char *why, size_t whylen);

/* Parse a --phase NAME=SPEC: NAME up to the first '=' (non-empty, printable,
 * at most @namelen - 1 bytes), SPEC as probes_parse_spec. Returns 0 or
 * -EINVAL with one line in @why. */
int probes_parse_phase(const char *arg, char *name, size_t namelen, struct probe_spec *out,
		       char *why, size_t whylen);

/* The point as a spec would write it, "[OBJECT:]FUNC", "[OBJECT:]sdt:P:N",
 * with " (return)" after a function's return: for messages and the database.
 * Returns 0 or -ENOSPC (truncated). */
int probes_point_format(const struct probe_point *p, char *buf, size_t len);

/* 1 when the object named in @p (if any) designates the file @path: an
 * object with a '/' is compared with @path after realpath() of both; a bare
 * name matches @path's file name exactly, or as a prefix followed by ".so"
 * or '.' ("libm" and "libm.so" match /lib/x86_64-linux-gnu/libm.so.6;
 * "libm" does not match libmvec.so.1). A point without object matches
 * every file. */
int probes_object_matches(const struct probe_point *p, const char *path);

/* ---- resolution ---- */

/* One place to put a uprobe. */
struct probe_site {
	char path[PATH_MAX];       /* the ELF file, as given or as found */
	uint64_t offset;           /* file offset of the probed instruction (bytes) */
	uint64_t vaddr;            /* its ELF virtual address (after the .stapsdt.base fix) */
	uint64_t size;             /* FUNC: the symbol's size in bytes; SDT: 0 */
	int exported;              /* FUNC: other objects can bind to it (global or
				    * weak, default or protected visibility) */
	uint64_t ref_ctr_offset;   /* file offset of the USDT semaphore; 0: none */
	uint64_t sem_vaddr;        /* the semaphore's ELF virtual address; 0: none */
	char name[PROBE_NAME_MAX]; /* FUNC: the symbol (demangled if mangled);
				    * SDT: "provider:name" */
};

/*
 * Find function @func in the ELF file @path: .symtab first, then .dynsym
 * (when .symtab has no match or does not exist). @func matches a symbol
 * whose name is @func, or whose demangled name is @func, or is @func
 * followed by a parameter list (and qualifiers, with or without a leading
 * return type for templates). Symbols at the same address (aliases, the
 * .symtab and .dynsym copies) count once.
 * Returns 0 and fills @out; -ENOENT (not there, or only imported there
 * (undefined); @why names close matches such as GCC clones
 * "func.constprop.0"), -EINVAL (size 0, an IFUNC resolver, not a function,
 * or outside every executable segment), -ENOTUNIQ (several
 * functions match; @why lists them, at most 8), -ENOEXEC (not an ELF
 * executable or shared object), -errno from open().
 */
int probes_resolve_function(const char *path, const char *func, struct probe_site *out,
			    char *why, size_t whylen);

/* What --step can name in the executable @path: *@functions 1 when its
 * symbol tables name a function it defines (a .symtab, its own or its
 * debug file's under /usr/lib/debug, or a function it exports in .dynsym),
 * 0 when they name none (stripped: --step FUNC cannot find its functions);
 * *@usdt its USDT probes (--step sdt:PROVIDER:NAME). Returns 0, or -errno
 * (-ENOEXEC: no ELF executable, e.g. a script). */
int probes_exe_names(const char *path, int *functions, long *usdt);

/*
 * Find every site of USDT probe @provider:@name in @path's .note.stapsdt
 * notes (one probe can have several sites: inlined or repeated). *sites is
 * a malloc'd array of *n entries; free() it. Returns 0 (with *n >= 1),
 * -ENOENT (no such probe; @why lists the file's probes when there are few),
 * -ENOEXEC, -EINVAL (a corrupt note or an address outside every segment),
 * -ENOMEM, -errno from open().
 */
int probes_resolve_usdt(const char *path, const char *provider, const char *name,
			struct probe_site **sites, size_t *n, char *why, size_t whylen);

/* A USDT note as found in a file. Strings point into the file's data and
 * are valid during the callback only. */
struct probe_usdt {
	const char *provider, *name, *args; /* args: "-4@%esi 8@%rax", may be "" */
	uint64_t pc, base, semaphore;       /* the note's raw fields */
	uint64_t vaddr;                     /* pc after the .stapsdt.base fix */
	uint64_t offset;                    /* file offset of vaddr */
	uint64_t ref_ctr_offset;            /* file offset of the semaphore; 0: none */
};

/* Called once per USDT note of the file; non-zero stops the walk and is
 * returned by probes_list_usdt(). */
typedef int (*probes_usdt_cb)(void *ctx, const struct probe_usdt *u);

/* Walk @path's USDT notes in file order. Returns 0 (also for a file without
 * notes), the callback's non-zero value, -ENOEXEC, -EINVAL (corrupt note),
 * -errno from open(). */
int probes_list_usdt(const char *path, probes_usdt_cb cb, void *ctx, char *why, size_t whylen);

/* Resolve @p in the one file @path (the point's object is not checked, see
 * probes_object_matches): a function gives one site, a USDT probe all its
 * sites. *sites is malloc'd, free() it. For libraries the target maps later
 * (MMAP2 records). Returns as probes_resolve_function / _usdt. */
int probes_resolve_point(const char *path, const struct probe_point *p,
			 struct probe_site **sites, size_t *n, char *why, size_t whylen);

/*
 * Resolve @p in live process @pid: among the files it maps executable
 * (/proc/PID/maps), restricted to the point's object when it names one.
 * The files are searched in load order: the main executable, its
 * DT_NEEDED libraries as probes_needed_objects() orders them, then the
 * other mapped files (dlopen'ed) in address order. A function is taken as
 * the dynamic linker binds a call: from the executable when it defines it,
 * else from the first library that exports it; a function that no object
 * exports (static or hidden) must be defined in only one object, else
 * -ENOTUNIQ. USDT sites are collected from every matching file. Paths are
 * the ones in the maps.
 * *sites is malloc'd, free() it. Returns 0, -ENOENT (nowhere; @why says
 * where it looked), -ESRCH (no such process), or a per-file error that
 * stopped the search (ambiguous name, undefined symbol in the named object).
 */
int probes_find_in_maps(pid_t pid, const struct probe_point *p, struct probe_site **sites,
			size_t *n, char *why, size_t whylen);

/*
 * The files a not-yet-started @exe will map at startup: @exe itself, then
 * its DT_NEEDED libraries breadth first (the loader's order), each found as
 * ld.so does: a name with '/' as is; else DT_RPATH of the needing objects
 * (when the needing object has no DT_RUNPATH), @ld_library_path (NULL: this
 * process's LD_LIBRARY_PATH), DT_RUNPATH, /etc/ld.so.cache, the default
 * directories; $ORIGIN is expanded; a candidate of another ELF class or
 * machine than @exe is skipped. Not followed: LD_PRELOAD, glibc-hwcaps
 * subdirectories, dlopen. A library that cannot be found is skipped
 * (the loader would refuse to start the program anyway).
 * Paths are realpath()s. *paths is a malloc'd array of malloc'd strings; free with
 * probes_paths_free(). Returns 0, -ENOEXEC (@exe is not ELF), -ENOMEM,
 * -errno from opening @exe.
 */
int probes_needed_objects(const char *exe, const char *ld_library_path, char ***paths,
			  size_t *n, char *why, size_t whylen);
void probes_paths_free(char **paths, size_t n);

/* Like probes_find_in_maps, over probes_needed_objects(@exe): for a target
 * that is about to exec @exe. */
int probes_find_in_needed(const char *exe, const char *ld_library_path,
			  const struct probe_point *p, struct probe_site **sites, size_t *n,
			  char *why, size_t whylen);

/* ---- opening ---- */

/* The sample_type of every uprobe event opened here (sample_id_all is 0:
 * the events emit samples only). IDENTIFIER tells the events sharing a
 * ring apart (probes_event_id). */
#define PROBES_SAMPLE_TYPE                                                     \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME)

/*
 * Open a uprobe (or, with @retprobe, a uretprobe) at @site for thread @tid
 * only: pid = tid, cpu = -1, no inherit (new threads need their own event),
 * sample_period 1, PROBES_SAMPLE_TYPE, timestamps on CLOCK_MONOTONIC,
 * enabled at once. A site with a semaphore passes it as ref_ctr_offset: the
 * kernel increments the semaphore in the target's address space while the
 * event exists (checked: another process mapping the file is left alone). The returned fd is close-on-exec; until it has a ring
 * (probes_map_ring or probes_share_ring) its hits are dropped.
 * Returns 0; -EPERM "uprobes need CAP_SYS_ADMIN..."; -ENODEV (no uprobe
 * PMU); -EOPNOTSUPP (a semaphore but a kernel without ref_ctr_offset, or a
 * retprobe without the retprobe format bit); -ESRCH (no such thread);
 * -ENOENT (file gone); -EINVAL (bad offset, or another uprobe at the same
 * place with a different semaphore offset); other -errno.
 */
int probes_open(const struct probe_site *site, pid_t tid, int retprobe, int *fd, char *why,
		size_t whylen);

/* The kernel's id of event @fd (the IDENTIFIER in its samples). 0 or -errno. */
int probes_event_id(int fd, uint64_t *id);

/* Map a ring of @pages data pages (a power of two; 0: 8) on event @fd.
 * *map / *len describe the whole mapping (header page included), as
 * perf_ring_open_maps() wants it. Returns 0 or -errno. */
int probes_map_ring(int fd, unsigned pages, void **map, size_t *len);

/* Send event @fd's samples into the ring of event @ring_fd. The kernel
 * allows it only between events of the same thread (both cpu = -1). */
int probes_share_ring(int fd, int ring_fd);

/* Unmap a ring from probes_map_ring. NULL is fine. */
void probes_unmap_ring(void *map, size_t len);

/* One decoded uprobe sample. */
struct probe_hit {
	uint64_t id;      /* event id (probes_event_id) */
	uint64_t ip;      /* entry: the probed address; return: where it returned to */
	uint32_t pid, tid;
	uint64_t time;    /* ns, CLOCK_MONOTONIC */
};

/* Decode a record drained from a probe ring (the perf_ring_cb arguments;
 * @len = hdr->size - sizeof(*hdr)). Returns 0; -ENOMSG for a record that is
 * not a sample (PERF_RECORD_LOST...); -EPROTO when malformed. */
int probes_parse_hit(const struct perf_event_header *hdr, const void *rec, size_t len,
		     struct probe_hit *out);

#endif
