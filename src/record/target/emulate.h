/*
 * mfu-record --emulate: run the target under Valgrind with the FP-op
 * counting tool (src/emulate/, mfu_emulate.h). This finds Valgrind and the
 * tool, makes the tool's private directory, and writes the command that
 * starts the target under them.
 */
#ifndef MFU_EMULATE_LAUNCH_H
#define MFU_EMULATE_LAUNCH_H

#include <limits.h>
#include <stddef.h>
#include <sys/types.h>

#include "asuser.h"

#define EMULATE_MAX_ARGS 16 /* Valgrind's own arguments before the command */

struct emulator {
	char valgrind[PATH_MAX]; /* the valgrind program */
	char libdir[PATH_MAX];   /* VALGRIND_LIB: the tool and Valgrind's core files */
	char dir[PATH_MAX];      /* the tool's private directory ("" before emulator_prepare) */
	char engine[160];        /* "valgrind-3.19.0 --tool=mfufp", for run.emulated */
	char opt_dir[PATH_MAX + 16];
	char opt_out[PATH_MAX + 16];
	char **argv;             /* Valgrind, its options, then the command */
	int command_missing;     /* emulator_prepare failed because of the command */
	const struct asuser *owner; /* whose directory it is (NULL: ours) */
};

/* Find the command (as execvp would: Valgrind would start and then fail
 * to), Valgrind (in PATH) and the tool (paths.h), make the private
 * directory (under $TMPDIR, else /tmp) as @owner (asuser.h; the user the
 * target runs as, who writes there: the directory is made, read and
 * removed as them; NULL or inactive: as we are; it must outlive @e), and
 * build argv for @cmd. Returns 0, or -errno with @why set (what is missing
 * and how to get it; command_missing set when it is the command: -ENOENT
 * not found, else not executable). */
int emulator_prepare(struct emulator *e, char *const cmd[], const struct asuser *owner, char *why,
		     size_t whylen);

/* The target's whole-run counts, as the tool wrote them when the process
 * @pid (the one mfu-record started) exited: FP_ARITH-style counts in
 * @inst[prec * MFU_EMU_NWIDTH + width] (MFU_EMU_NPREC x MFU_EMU_NWIDTH), then
 * x87 operations and guest instructions. The file is read as the owner,
 * never through a symlink. Returns 0, or -ENOENT when the tool wrote none
 * (the target was killed), -EPROTO when it cannot be read. */
int emulator_totals(const struct emulator *e, pid_t pid, unsigned long long *counts, size_t n);

/* Remove the private directory (as the owner) and free argv. */
void emulator_cleanup(struct emulator *e);

#endif
