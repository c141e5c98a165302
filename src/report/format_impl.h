/* The report formatter's private half: the number printers format.c's
 * writer uses (format_number.c). */
#ifndef MFU_FORMAT_IMPL_H
#define MFU_FORMAT_IMPL_H

#include <stddef.h>
#include <stdint.h>

/* An integer in decimal, into @buf (24 bytes); returns its length. */
size_t fmt_i64(char *buf, long long v);
/* printf("%.*f", dec, v) without printf's cost, into @buf (64 bytes). */
size_t fmt_fixed(char *buf, double v, int dec);

#endif
