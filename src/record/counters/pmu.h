/*
 * A PMU as sysfs describes it (/sys/bus/event_source/devices/NAME): its
 * perf type, its format/ fields (named bit ranges of perf_event_attr's
 * config words), its events/ aliases with their .scale and .unit, and the
 * encoding of perf's "event=0x04,umask=0x03" terms with those fields. The
 * one reader of a PMU's sysfs for the recorder: user events in perf's
 * "pmu/terms/" form (counters.c), the memory controllers (uncore.c), the
 * uprobe PMU (probes/uprobe.c). As perf's util/pmu.c. @root is the
 * devices directory (PMU_SYSFS_ROOT, or a fixture tree in the tests).
 */
#ifndef MFU_PMU_H
#define MFU_PMU_H

#include <linux/perf_event.h>
#include <stddef.h>
#include <stdint.h>

#define PMU_SYSFS_ROOT "/sys/bus/event_source/devices"
#define PMU_MAX_FORMATS 32 /* format/ files of one PMU */
#define PMU_TERMS_MAX 256  /* longest terms parsed; kernel aliases are < 64 */

/* One format/ file: a named field of perf_event_attr.config, config1 or
 * config2, e.g. "umask" = "config:8-15". @mask has the field's bits; a
 * value's bits fill them from the lowest up, as perf does for fields split
 * over several ranges ("config:0-7,32-35"). */
struct pmu_format {
	char name[32];
	int config;     /* 0: config, 1: config1, 2: config2 */
	uint64_t mask;
};

/* An events/ alias: its terms, and its .scale and .unit files when it has
 * them (a count times @scale is an amount in @unit). */
struct pmu_alias {
	char terms[PMU_TERMS_MAX];  /* "event=0x04,umask=0x03" */
	int has_scale, has_unit;
	double scale;               /* 0 when .scale is not a positive number */
	char scale_text[PMU_TERMS_MAX];
	char unit[PMU_TERMS_MAX];   /* "MiB" */
};

/* Read @file of PMU @pmu ("cpumask", "events/NAME") into @buf, without its
 * trailing whitespace. Returns 0 or -errno (-EFBIG: longer than @len). */
int pmu_read(const char *root, const char *pmu, const char *file, char *buf, size_t len);

/* The PMU's perf type (its type file), as written there. Returns 0 or
 * -errno (-ENOENT: no such PMU; -EINVAL: not a number). */
int pmu_type(const char *root, const char *pmu, int *type);

/* Every format/ field of @pmu, at most PMU_MAX_FORMATS into @fmt. A
 * malformed file is left out and, when @malformed is not NULL, told to it
 * with its field name and text. Returns 0 (@nfmt set) or -errno: no
 * format/ directory (@nfmt 0). */
int pmu_formats(const char *root, const char *pmu, struct pmu_format *fmt, int *nfmt,
		void (*malformed)(void *ctx, const char *field, const char *text), void *ctx);

/* The format/ field @field of @pmu. Returns 0, -errno from the read, or
 * -EINVAL when it is malformed. */
int pmu_format(const char *root, const char *pmu, const char *field, struct pmu_format *out);

/* The events/ alias @name of @pmu, with its .scale and .unit. Returns 0, or
 * -errno when events/@name cannot be read (-ENOENT: no such alias). */
int pmu_alias(const char *root, const char *pmu, const char *name, struct pmu_alias *a);

/* Parse a format/ file's text @spec ("config:0-7", "config1:0-4",
 * "config:0-7,32-35,59-60") for the field @name. Returns 0 or -EINVAL. */
int pmu_parse_format(const char *name, const char *spec, struct pmu_format *out);

/* Encode event terms ("event=0x04,umask=0x03", "edge" meaning edge=1;
 * "config=", "config1=" and "config2=" set those words directly when no
 * format names them) with the PMU's formats into attr->config, config1
 * and config2, which it overwrites (nothing else of @attr is touched, and
 * nothing at all on failure). Safe on any input (fuzzed). Returns 0;
 * -EINVAL malformed; -ENOENT a term no format names; -ERANGE a value too
 * wide for its field. */
int pmu_parse_terms(const char *terms, const struct pmu_format *fmt, int nfmt, struct perf_event_attr *attr);

#endif
