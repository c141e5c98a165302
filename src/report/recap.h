/* The recap mfu-record prints on stderr when a recording ends, as perf stat
 * does: mfu-report's default output (the summary for people,
 * summary_text.h: the breakdown's verdict and the notes in it), from the
 * finished database.
 *
 * It is mfu-report's own code on the same views (runview.h with
 * mfu-report's default options, the summary through format.c), so the
 * recap and `mfu-report --db FILE` are the same bytes. */
#ifndef MFU_REPORT_RECAP_H
#define MFU_REPORT_RECAP_H

#include <stddef.h>
#include <stdio.h>

/* Write the recap of the run database @path to @out: what
 * `mfu-report --db @path` prints. The breakdown verdict in it has a budget
 * (SUMMARY_VERDICT_KOPS, summary_text.h): past it, the line says to run
 * mfu-report breakdown. Returns 0, or -errno with the reason in @err
 * (nothing or part of the recap written). */
int recap_print(const char *path, FILE *out, char *err, size_t errlen);

#endif
