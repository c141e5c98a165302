/*
 * /proc/PID/maps: the one reader of a process's mappings (symbols of an
 * attached process, the executables that uprobes are placed in).
 */
#ifndef MFU_PROCMAPS_H
#define MFU_PROCMAPS_H

#include <stdint.h>
#include <sys/types.h>

struct procmaps_entry {
	uint64_t start, end, pgoff;
	int exec;         /* mapped executable ('x' in the permissions) */
	const char *path; /* the file, a [name] the kernel gives, or "" (anonymous);
			   * valid during the callback only */
};

/* Parse one line ("start-end perms offset dev inode   path") into @e; @line
 * is modified (the path is cut at its newline). 0 or -EINVAL. */
int procmaps_parse_line(char *line, struct procmaps_entry *e);

/* Call @fn for each mapping of process @pid, in address order, until it
 * returns nonzero (which is returned). -ESRCH when the process is gone,
 * another -errno when the file cannot be read, -EINVAL for a line that does
 * not parse, -ENOMEM. */
int procmaps_each(pid_t pid, int (*fn)(void *ctx, const struct procmaps_entry *e), void *ctx);

#endif
