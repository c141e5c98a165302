/*
 * libFuzzer target: the sysfs event-alias parsers (src/record/counters/uncore.c),
 * pmu_parse_format() and pmu_parse_terms().
 *
 * Input: lines "NAME SPEC" (a format/ file's name and text, e.g.
 * "umask config:8-15"), then an empty line, then the alias text (e.g.
 * "event=0x04,umask=0x03"). Every string is handed over in its own heap
 * block of exactly its length plus the NUL, so AddressSanitizer catches a
 * read past it. Formats that parse are collected (as uncore_open does from
 * a PMU's format/ directory) and the alias is encoded with them.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "record/counters/pmu.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile uint64_t sink;

static char *dup_n(const uint8_t *p, size_t n)
{
	char *s = malloc(n + 1);
	if (s) {
		memcpy(s, p, n);
		s[n] = '\0';
	}
	return s;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pmu_format fmt[PMU_MAX_FORMATS];
	struct perf_event_attr attr;
	int nfmt = 0;
	size_t i = 0;
	char *alias;

	if (size > 4096)
		return 0;
	/* format lines, up to the first empty line */
	while (i < size && data[i] != '\n') {
		const uint8_t *line = data + i, *nl = memchr(line, '\n', size - i);
		size_t n = nl ? (size_t)(nl - line) : size - i;
		const uint8_t *sp = memchr(line, ' ', n);
		size_t nn = sp ? (size_t)(sp - line) : n;
		char *name = dup_n(line, nn);
		char *spec = dup_n(sp ? sp + 1 : line + n, sp ? n - nn - 1 : 0);

		if (name && spec && nfmt < PMU_MAX_FORMATS &&
		    pmu_parse_format(name, spec, &fmt[nfmt]) == 0) {
			sink += fmt[nfmt].mask + strlen(fmt[nfmt].name);
			nfmt++;
		}
		free(name);
		free(spec);
		i += n + (nl ? 1 : 0);
	}
	if (i < size)
		i++; /* the empty line */
	alias = dup_n(data + i, size - i);
	if (!alias)
		return 0;
	memset(&attr, 0, sizeof(attr));
	if (pmu_parse_terms(alias, fmt, nfmt, &attr) == 0)
		sink += attr.config ^ attr.config1 ^ attr.config2;
	/* the raw config words alone, as for AMD's table encodings */
	memset(&attr, 0, sizeof(attr));
	if (pmu_parse_terms(alias, NULL, 0, &attr) == 0)
		sink += attr.config;
	free(alias);
	return 0;
}
