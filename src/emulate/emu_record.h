/*
 * The files of --mfu-dir=DIR: how a process under the tool hands its counts
 * to its parent (perf's inherit semantics: a child's counts are added to
 * its parent's when the child exits).
 *
 * DIR/<pid> is an append-only file of fixed-size records addressed to the
 * process <pid>. A process under the tool appends one record, with one
 * write() on an O_APPEND descriptor (so records from many processes never
 * interleave):
 *   - EMU_REC_EXIT to DIR/<parent pid> when it exits: its whole count, its
 *     own threads plus every descendant it folded in; children is 1 plus
 *     the descendants it folded;
 *   - EMU_REC_EXEC to DIR/<own pid> right before execve(): the counts of
 *     the image being replaced (its own threads only; the threads field
 *     leaves out the thread that goes on in the new image), which the new
 *     image under --trace-children=yes folds in as if from a child, with
 *     the records the old image had already read.
 * A process folds the records of DIR/<own pid> it has not read yet when it
 * answers MFU_EMU_REQ_READ and at exit, and removes the file at exit. The
 * process mfu-record starts under the tool writes its exit record to
 * DIR/<the recorder's pid>: the totals of the whole process tree.
 *
 * The layout is pinned by tests/unit/test_fpclass.c.
 */
#ifndef MFU_EMU_RECORD_H
#define MFU_EMU_RECORD_H

#include <stdint.h>

#include "mfu_emulate.h"

#define EMU_REC_MAGIC 0x5255464du /* "MFUR" */
#define EMU_REC_VERSION 1

enum emu_rec_kind {
	EMU_REC_EXIT = 1,
	EMU_REC_EXEC = 2,
};

/* The counters the tool keeps per process, in this order. */
enum emu_counter {
	/* 0 .. 15: FP_ARITH counts, index prec * MFU_EMU_NWIDTH + width */
	EMU_X87 = MFU_EMU_NPREC * MFU_EMU_NWIDTH,
	EMU_INSNS,
	EMU_NCOUNTERS,
};

struct emu_record {
	uint32_t magic;     /* EMU_REC_MAGIC */
	uint16_t version;   /* EMU_REC_VERSION */
	uint16_t kind;      /* enum emu_rec_kind */
	int32_t pid;        /* the writer */
	uint32_t size;      /* sizeof(struct emu_record) */
	uint64_t count[EMU_NCOUNTERS];
	uint64_t threads;   /* threads run, descendants' included */
	uint64_t children;  /* processes this record stands for besides the receiver's own */
};

#endif
