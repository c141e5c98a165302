/* The report formatter's private half: the number printers format.c's
 * writer uses (format_number.c). */
#ifndef MFU_FORMAT_IMPL_H
#define MFU_FORMAT_IMPL_H

#include <stddef.h>
#include <stdint.h>

/* The most any number printer here writes, the NUL included: a buffer of
 * this size always holds its number. Each returns the length it wrote
 * (strlen of @buf), never more than FMT_NUM_MAX - 1. */
#define FMT_NUM_MAX 32
/* fmt_fixed's largest number of decimals (a larger @dec is taken as it). */
#define FMT_FIXED_MAX_DEC 9

/* An integer in decimal, into @buf (at most 21 bytes); returns its length. */
size_t fmt_i64(char *buf, long long v);
/* printf("%.*f", dec, v) without printf's cost, into @buf (FMT_NUM_MAX
 * bytes); from 1e15 on (and for inf and nan) "%.6g", so a declared 1e300
 * prints as 1e+300, not as 300 digits. */
size_t fmt_fixed(char *buf, double v, int dec);

/* Table and markdown size a section's columns on its first GRID_SIZE_ROWS
 * rows (or as many as GRID_SIZE_BYTES of their text hold) and stream the
 * rest (format.c, section_grid). */
#define GRID_SIZE_ROWS 10000
#define GRID_SIZE_BYTES ((size_t)8 << 20)

#endif
