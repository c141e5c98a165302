/*
 * Symbols: turn sampled instruction pointers into names that need no binary
 * later (DSO, DSO-relative address, demangled function, offset, file:line).
 *
 * The caller feeds the address-space layout of each process (MMAP2 records,
 * or /proc/PID/maps while the process is alive) and then asks for IPs. Only
 * paths are kept, so resolution works after the process has gone, as long
 * as the files are still there; a file that has gone or changed resolves to
 * "[unknown]" with its DSO name.
 *
 * Each distinct file (same device, inode, mtime and size, whatever the path
 * or the number of processes mapping it) is opened once, lazily, on the
 * first IP that falls into it; files with the same build ID share one set of
 * symbol tables and one hash map of the addresses already resolved. Kernel IPs go through /proc/kallsyms, IPs in anonymous
 * executable memory through /tmp/perf-PID.map. See docs/symbols.md.
 *
 * Not thread-safe: one struct symbols per thread, or a lock around it.
 */
#ifndef MFU_SYMBOLS_H
#define MFU_SYMBOLS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct symbols;

enum symbol_kind {
	SYMBOL_UNKNOWN = 0, /* no map covers the IP, or a perf context marker */
	SYMBOL_USER,        /* in a file-backed mapping (or the vdso) */
	SYMBOL_JIT,         /* in anonymous executable memory, memfd, [anon:...] */
	SYMBOL_KERNEL,      /* above the user-space limit */
};

/* Where a function's name came from. */
enum symbol_source {
	SYMBOL_FROM_NONE = 0, /* no name: "[unknown]", "[kernel]" */
	SYMBOL_FROM_TABLE,    /* a symbol table: .symtab, .dynsym, MiniDebugInfo
			       * (.gnu_debugdata), a separate debug file,
			       * /proc/kallsyms, a perf map */
	SYMBOL_FROM_PLT,      /* a PLT stub: "foo@plt", after the function it
			       * jumps to (from its relocation) */
	SYMBOL_FROM_EH_FRAME, /* a function no symbol names, known by its bounds
			       * in .eh_frame: "libfoo.so.1+0x1a2b0", the DSO's
			       * file name and the function's first ELF address */
};

/* What one IP resolves to. Every string is owned by the struct symbols and
 * stays valid until symbols_free(); none is NULL except @file. */
struct symbol_info {
	enum symbol_kind kind;
	enum symbol_source source;
	const char *dso;   /* file path as mapped, "[vdso]", "//anon", "[anon:x]",
			    * "[kernel.kallsyms]", "[module]", "[unknown]" */
	uint64_t dso_addr; /* ELF virtual address in @dso (what addr2line -e wants);
			    * the file offset when the file cannot be read; the
			    * offset from the mapping start for JIT; the IP for
			    * the kernel */
	const char *name;  /* demangled function name, "foo@plt",
			    * "libfoo.so.1+0x1a2b0" (@source), "[unknown]",
			    * "[kernel]" */
	uint64_t offset;   /* bytes from the function's first byte to the IP */
	const char *file;  /* source file (from DWARF), or NULL */
	int line;          /* source line, 0 when unknown */
};

/* Counters for tests and benchmarks. */
struct symbols_stats {
	size_t procs;        /* processes with at least one map */
	size_t dsos;         /* distinct files referenced by maps */
	size_t dsos_opened;  /* files opened and read (at most once each) */
	size_t dsos_missing; /* files that could not be opened or had changed */
	size_t dsos_dwarf;   /* opened files with DWARF line information */
	size_t dsos_shared;  /* opened files that reuse the tables of an earlier
			      * file with the same build ID (copies) */
	size_t lookups;      /* IPs resolved inside files */
	size_t cache_hits;   /* of which answered from the per-DSO cache */
};

/* Create an empty resolver. Separate debug files are looked for under the
 * directories of the environment variable MFU_DEBUG_DIRS (colon-separated,
 * absolute) when it is set, else under /usr/lib/debug (docs/symbols.md).
 * Returns 0 or -ENOMEM. */
int symbols_new(struct symbols **out);

/* Release everything, including every string handed out. NULL is fine. */
void symbols_free(struct symbols *s);

/* Record that process @pid (the thread-group id) maps [@start, @start+@len)
 * from @path at file offset @pgoff (bytes). Mappings without @prot_exec are
 * ignored (no IP can fall there). A new mapping replaces whatever it
 * overlaps, as mmap(2) does, so feed MMAP2 records in time order.
 * @path as the kernel writes it: "" or "//anon" for anonymous memory,
 * "[anon:name]", "/memfd:name (deleted)", "[vdso]", "/lib/x.so (deleted)".
 * The file is stat()ed now (to share it between processes and detect a later
 * change) but opened only when an IP needs it.
 * Returns 0, -EINVAL (empty or wrapping range) or -ENOMEM. */
int symbols_add_map(struct symbols *s, pid_t pid, uint64_t start, uint64_t len, uint64_t pgoff,
		    const char *path, int prot_exec);

/* Add the executable mappings of live process @pid from /proc/PID/maps.
 * Returns 0, -errno from opening the file (-ENOENT: no such process),
 * -EINVAL (a line that does not parse) or -ENOMEM. */
int symbols_add_proc_maps(struct symbols *s, pid_t pid);

/* Child @pid starts with a copy of @ppid's mappings (a fork record).
 * Returns 0 or -ENOMEM; a parent without maps is not an error. */
int symbols_fork(struct symbols *s, pid_t ppid, pid_t pid);

/* Forget @pid's mappings (exec replaced its address space, or it exited and
 * its pid may be reused). */
void symbols_exec(struct symbols *s, pid_t pid);

/* Resolve @ip sampled in process @pid into @out (always filled, see struct
 * symbol_info). Returns 0 when a function name was found (from a symbol
 * table, a PLT stub or .eh_frame bounds: @out->source), -ENOENT when not
 * (then @out->name is "[unknown]" or "[kernel]" but the kind and DSO are
 * still right), -ENOMEM. For callchain entries other than the first (return
 * addresses) pass ip - 1: the byte after a call can belong to the next line,
 * or to the next function when the call does not return (abort()). */
int symbols_resolve(struct symbols *s, pid_t pid, uint64_t ip, struct symbol_info *out);

/* "user", "jit", "kernel", "unknown". */
const char *symbol_kind_name(enum symbol_kind kind);

void symbols_get_stats(const struct symbols *s, struct symbols_stats *st);

/* Demangle a C++ (or legacy Rust) linkage name into a malloc'd string.
 * Returns 0, -EINVAL (not a mangled name), -ENOSYS (no demangler in this
 * process: libstdc++.so.6 could not be loaded) or -ENOMEM. Thread-safe. */
int symbols_demangle(const char *mangled, char **out);

#endif
