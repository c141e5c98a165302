/* The emulator workloads' one call into the tool (src/emulate/mfu_emulate.h):
 * read the process's counts so far. Returns 0 outside valgrind --tool=mfufp. */
#ifndef MFU_EMU_READ_H
#define MFU_EMU_READ_H

#include <stdio.h>
#include <valgrind/valgrind.h>

#include "mfu_emulate.h"

static inline int emu_read(struct mfu_emu_counts *c)
{
	*c = (struct mfu_emu_counts){ .size = sizeof *c };
	return (int)VALGRIND_DO_CLIENT_REQUEST_EXPR(0, MFU_EMU_REQ_READ, c, 0, 0, 0, 0);
}

/* One JSON object of @a - @b (or of @a alone when @b is NULL), after the
 * caller's own fields: "inst": [[fp64 scalar, 128, 256, 512], [fp32 ...],
 * [fp16 ...], [bf16 ...]], "x87", "insns", "threads", "children". */
static inline void emu_print(FILE *f, const struct mfu_emu_counts *a,
			     const struct mfu_emu_counts *b)
{
	fprintf(f, "\"inst\": [");
	for (int p = 0; p < MFU_EMU_NPREC; p++) {
		fprintf(f, "%s[", p ? ", " : "");
		for (int w = 0; w < MFU_EMU_NWIDTH; w++)
			fprintf(f, "%s%llu", w ? ", " : "",
				(unsigned long long)(a->inst[p][w] - (b ? b->inst[p][w] : 0)));
		fprintf(f, "]");
	}
	fprintf(f, "], \"x87\": %llu, \"insns\": %llu, \"threads\": %llu, \"children\": %llu",
		(unsigned long long)(a->x87_ops - (b ? b->x87_ops : 0)),
		(unsigned long long)(a->guest_insns - (b ? b->guest_insns : 0)),
		(unsigned long long)(a->threads - (b ? b->threads : 0)),
		(unsigned long long)(a->children - (b ? b->children : 0)));
}

#endif
