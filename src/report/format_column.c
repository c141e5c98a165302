/* How table and markdown head and print a column, by its name (csv and
 * json print the name and the value as it is). */
#include "format.h"
#include "format_writer.h"

#include <stdio.h>
#include <string.h>

/*
 * A column's header and style come from its name: a unit suffix ("_ms",
 * "_flops", "_lo"...) sets the style and the unit in the header, and words
 * such as "cpu" or "hw" are capitalised ("cpu_ms" -> "CPU ms"). So a new
 * analysis column needs no edit here unless its name says too little;
 * the exceptions below are those names.
 */
static const struct {
	const char *suffix;
	const char *unit;
	enum style style;
} suffix_rules[] = {
	{ "_flops_per_s", " FLOP/s", STYLE_ENG },
	{ "_bytes_per_s", " bytes/s", STYLE_ENG },
	{ "_ms", " ms", STYLE_MS },
	{ "_lo", " lo %", STYLE_PCT },
	{ "_hi", " hi %", STYLE_PCT },
	{ "_source", " source", STYLE_TEXT },
	{ "_flops", " FLOP", STYLE_ENG },
	{ "_bytes", " bytes", STYLE_ENG },
	{ "_ops", " ops", STYLE_ENG },
	{ "_util", " util %", STYLE_PCT },
};

static const struct {
	const char *word, *label;
} word_labels[] = {
	{ "cpu", "CPU" }, { "hw", "HW" }, { "mfu", "MFU" }, { "hfu", "HFU" }, { "mbu", "MBU" },
	{ "dram", "DRAM" }, { "bw", "BW" }, { "ai", "AI" }, { "amx", "AMX" }, { "ipc", "IPC" },
};

struct column_style {
	const char *name;
	const char *label; /* NULL: from the rules */
	enum style style;
};

static const struct column_style column_styles[] = {
	/* utilizations: a "!" above 100% */
	{ "mfu", "MFU %", STYLE_UTIL },
	{ "hfu", "HFU %", STYLE_UTIL },
	{ "mbu", "MBU %", STYLE_UTIL },
	{ "e2e_mfu", "e2e MFU %", STYLE_UTIL },
	{ "mfu_common", "MFU common steps %", STYLE_UTIL },
	{ "hfu_common", "HFU common steps %", STYLE_UTIL },
	{ "job_mfu", "job MFU %", STYLE_UTIL },
	{ "dram_bw_util", "DRAM BW %", STYLE_UTIL },
	{ "run_mfu", "run MFU %", STYLE_UTIL },
	{ "busy_mfu", "busy MFU %", STYLE_UTIL },
	{ "compute_efficiency", "compute eff %", STYLE_UTIL },
	/* fractions without a suffix */
	{ "share", "share %", STYLE_PCT },
	{ "change", "change %", STYLE_PCT }, /* --diff: new / base - 1 */
	{ "hw_fraction", "counted %", STYLE_PCT },
	{ "lib_in_steps", "lib in steps %", STYLE_PCT },
	{ "idle", "idle %", STYLE_PCT },
	{ "kernel", "kernel %", STYLE_PCT },
	{ "sync", "sync %", STYLE_PCT },
	{ "dispatch", "dispatch %", STYLE_PCT },
	{ "unclassified", "unclassified %", STYLE_PCT },
	{ "compute", "compute %", STYLE_PCT },
	/* ratios */
	{ "ipc", "IPC", STYLE_RATIO },
	{ "cpus", "CPUs busy", STYLE_RATIO },
	{ "ai_model", "AI model FLOP/B", STYLE_RATIO },
	{ "ai_hw", "AI HW FLOP/B", STYLE_RATIO },
	{ "ratio_to_spec", "vs spec", STYLE_RATIO },
	{ "spread", "max/median", STYLE_RATIO },
	{ "mean_spread", "mean max/median", STYLE_RATIO },
	{ "max_spread", "max max/median", STYLE_RATIO },
	{ "straggler_threshold", "straggler threshold %", STYLE_PCT },
	{ "job_peak_flops", "job peak FLOP/s", STYLE_ENG },
	/* rates and amounts the name does not say */
	{ "peak_flops", "peak FLOP/s", STYLE_ENG },
	{ "peak_source", "peak FLOP/s source", STYLE_TEXT },
	{ "peak_bw", "peak bytes/s", STYLE_ENG },
	{ "peak_bw_source", "peak bytes/s source", STYLE_TEXT },
	{ "hw_flops_fp64", "HW FLOP fp64", STYLE_ENG },
	{ "hw_flops_fp32", "HW FLOP fp32", STYLE_ENG },
	{ "hw_flops_fp16", "HW FLOP fp16", STYLE_ENG },
	{ "run_lib_flops_fp64", "run lib FLOP fp64", STYLE_ENG },
	{ "run_lib_flops_fp32", "run lib FLOP fp32", STYLE_ENG },
	{ "run_lib_flops_bf16", "run lib FLOP bf16", STYLE_ENG },
	{ "run_lib_flops_fp16", "run lib FLOP fp16", STYLE_ENG },
	{ "run_lib_ops_int8", "run lib ops int8", STYLE_ENG },
	{ "busy_flops_per_s", "busy FLOP/CPU-s", STYLE_ENG },
	{ "value", "value", STYLE_ENG },
	{ "per_s", "per s", STYLE_ENG },
	/* other headers */
	{ "cpu_migrations", "migrations", STYLE_AUTO },
	{ "cpu_err_ms", "CPU +- ms", STYLE_MS },
	{ "oncpu_ms", "on-CPU ms", STYLE_MS },
	{ "ncpu", "CPUs", STYLE_AUTO },
	{ "ncores", "cores", STYLE_AUTO },
	{ "dso", "library", STYLE_PATH },
	/* text, left-aligned even when every row is null */
	{ "phase", NULL, STYLE_TEXT },
	{ "counts", NULL, STYLE_TEXT },
	{ "dtype", NULL, STYLE_TEXT },
	{ "state", NULL, STYLE_TEXT },
	{ "kind", NULL, STYLE_TEXT },
	{ "text", NULL, STYLE_TEXT }, /* notes: the header is the column's name */
	{ "where", NULL, STYLE_TEXT },
	{ "class", NULL, STYLE_TEXT },
	{ "symbol", NULL, STYLE_TEXT },
	{ "event", NULL, STYLE_TEXT },
	{ "source", NULL, STYLE_TEXT },
	{ "scope", NULL, STYLE_TEXT },
	{ "detail", NULL, STYLE_TEXT },
	{ "name", NULL, STYLE_TEXT },
	{ "unit", NULL, STYLE_TEXT },
	{ "verdict", NULL, STYLE_TEXT },
	{ "stragglers", NULL, STYLE_TEXT },
	{ "host", NULL, STYLE_TEXT },
	{ "path", NULL, STYLE_TEXT },
};

/* The header of column @name by the rules, into @buf; returns its style. */
static enum style style_by_rules(const char *name, char *buf, size_t len)
{
	size_t n = strlen(name), k = 0;
	const char *unit = "";
	enum style style = STYLE_AUTO;

	for (size_t r = 0; r < sizeof(suffix_rules) / sizeof(suffix_rules[0]); r++) {
		size_t sl = strlen(suffix_rules[r].suffix);
		if (n > sl && strcmp(name + n - sl, suffix_rules[r].suffix) == 0) {
			n -= sl;
			unit = suffix_rules[r].unit;
			style = suffix_rules[r].style;
			break;
		}
	}
	buf[0] = '\0';
	for (size_t i = 0; i < n;) {
		size_t w = i;
		const char *word = NULL;

		while (w < n && name[w] != '_')
			w++;
		for (size_t j = 0; j < sizeof(word_labels) / sizeof(word_labels[0]); j++)
			if (strlen(word_labels[j].word) == w - i && strncmp(name + i, word_labels[j].word, w - i) == 0)
				word = word_labels[j].label;
		k += (size_t)snprintf(buf + k, k < len ? len - k : 0, "%s%.*s", i ? " " : "",
				      word ? (int)strlen(word) : (int)(w - i), word ? word : name + i);
		i = w < n ? w + 1 : w;
	}
	snprintf(buf + (k < len ? k : len - 1), k < len ? len - k : 1, "%s", unit);
	return style;
}

enum style format_column_header(const char *name, char *buf, size_t len, const char **label)
{
	enum style style = style_by_rules(name, buf, len);

	*label = buf;
	for (size_t s = 0; s < sizeof(column_styles) / sizeof(column_styles[0]); s++) {
		if (strcmp(name, column_styles[s].name) == 0) {
			if (column_styles[s].label)
				*label = column_styles[s].label;
			return column_styles[s].style;
		}
	}
	return style;
}

const char *format_column_style(const char *name, char *label, size_t len)
{
	static const char *const words[] = {
		[STYLE_AUTO] = "auto", [STYLE_MS] = "ms", [STYLE_PCT] = "pct", [STYLE_UTIL] = "util",
		[STYLE_ENG] = "eng", [STYLE_RATIO] = "ratio", [STYLE_TEXT] = "text",
		[STYLE_PATH] = "text", /* the page shows the whole path */
	};
	_Static_assert(sizeof(words) / sizeof(words[0]) == STYLE_PATH + 1, "a word for every style");
	const char *l;
	enum style style = format_column_header(name, label, len, &l);

	if (l != label)
		snprintf(label, len, "%s", l);
	return words[style];
}
