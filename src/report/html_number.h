/* The HTML page's short numbers: the step and interval series carry
 * fractions to 6 significant digits (printf's %.6g), a few million of them
 * in a page of a million steps. */
#ifndef MFU_REPORT_HTML_NUMBER_H
#define MFU_REPORT_HTML_NUMBER_H

#include <stddef.h>

/* @v as snprintf(buf, 32, "%.6g", v) writes it, byte for byte, into @buf
 * (32 bytes at least, NUL-terminated); returns the length. Exact integer
 * arithmetic on the double's bits for 1e-5 <= |v| < 1e15 (the fractions
 * and rates of a run), snprintf itself for the rest: glibc's %g costs
 * 0.2 s of three million values. */
size_t html_number_g6(char *buf, double v);

#endif
