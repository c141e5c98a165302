/* A PMU's sysfs (pmu.h): format/ fields, events/ aliases, terms. */
#include "pmu.h"
#include "util.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

/* ---- reading ---------------------------------------------------------- */

int pmu_read(const char *root, const char *pmu, const char *file, char *buf, size_t len)
{
	char path[1024];

	if (strbuf(path, sizeof(path), "%s/%s/%s", root, pmu, file))
		return -ENAMETOOLONG;
	return read_sysfs(path, buf, len);
}

int pmu_type(const char *root, const char *pmu, int *type)
{
	char buf[64];
	int err = pmu_read(root, pmu, "type", buf, sizeof(buf));

	return err ? err : safe_atoi(buf, type);
}

int pmu_formats(const char *root, const char *pmu, struct pmu_format *fmt, int *nfmt,
		void (*malformed)(void *ctx, const char *field, const char *text), void *ctx)
{
	char path[1024], text[256];
	struct dirent *de;
	DIR *d;

	*nfmt = 0;
	if (strbuf(path, sizeof(path), "%s/%s/format", root, pmu))
		return -ENAMETOOLONG;
	d = opendir(path);
	if (!d)
		return -errno;
	while ((de = readdir(d)) != NULL) {
		char file[320];

		if (de->d_name[0] == '.')
			continue;
		if (*nfmt >= PMU_MAX_FORMATS)
			break;
		if (strbuf(file, sizeof(file), "format/%s", de->d_name) ||
		    pmu_read(root, pmu, file, text, sizeof(text)) != 0)
			continue;
		if (pmu_parse_format(de->d_name, text, &fmt[*nfmt]) != 0) {
			if (malformed)
				malformed(ctx, de->d_name, text);
			continue;
		}
		(*nfmt)++;
	}
	closedir(d);
	return 0;
}

int pmu_format(const char *root, const char *pmu, const char *field, struct pmu_format *out)
{
	char file[320], text[256];
	int err;

	if (strbuf(file, sizeof(file), "format/%s", field))
		return -ENAMETOOLONG;
	err = pmu_read(root, pmu, file, text, sizeof(text));
	return err ? err : pmu_parse_format(field, text, out);
}

int pmu_alias(const char *root, const char *pmu, const char *name, struct pmu_alias *a)
{
	char file[320];
	int err;

	memset(a, 0, sizeof(*a));
	if (strbuf(file, sizeof(file), "events/%s", name))
		return -ENAMETOOLONG;
	err = pmu_read(root, pmu, file, a->terms, sizeof(a->terms));
	if (err)
		return err;
	a->has_scale = strbuf(file, sizeof(file), "events/%s.scale", name) == 0 &&
		       pmu_read(root, pmu, file, a->scale_text, sizeof(a->scale_text)) == 0;
	if (a->has_scale && (safe_atod(a->scale_text, &a->scale) != 0 || !(a->scale > 0)))
		a->scale = 0;
	a->has_unit = strbuf(file, sizeof(file), "events/%s.unit", name) == 0 &&
		      pmu_read(root, pmu, file, a->unit, sizeof(a->unit)) == 0;
	if (!a->has_unit)
		a->unit[0] = '\0';
	return 0;
}

/* ---- parsing ---------------------------------------------------------- */

/* A decimal or 0x-hex number spanning s[0..n). */
static int parse_num(const char *s, size_t n, uint64_t *out)
{
	uint64_t v = 0;
	unsigned base = 10;
	size_t i = 0;

	if (n >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		i = 2;
	}
	if (i == n)
		return -EINVAL;
	for (; i < n; i++) {
		unsigned d;
		char c = s[i];
		if (c >= '0' && c <= '9')
			d = (unsigned)(c - '0');
		else if (base == 16 && c >= 'a' && c <= 'f')
			d = (unsigned)(c - 'a' + 10);
		else if (base == 16 && c >= 'A' && c <= 'F')
			d = (unsigned)(c - 'A' + 10);
		else
			return -EINVAL;
		if (v > (UINT64_MAX - d) / base)
			return -ERANGE;
		v = v * base + d;
	}
	*out = v;
	return 0;
}

/* Length of @s without trailing whitespace (sysfs files end in "\n"). */
static size_t trimmed_len(const char *s)
{
	size_t n = strlen(s);
	while (n > 0 && isspace((unsigned char)s[n - 1]))
		n--;
	return n;
}

int pmu_parse_format(const char *name, const char *spec, struct pmu_format *out)
{
	struct pmu_format f = { 0 };
	size_t n, i = 0;
	int word;

	if (!name || !spec || !out || !*name || strlen(name) >= sizeof(f.name))
		return -EINVAL;
	n = trimmed_len(spec);
	if (n >= 7 && strncmp(spec, "config:", 7) == 0) {
		word = 0;
		i = 7;
	} else if (n >= 8 && strncmp(spec, "config1:", 8) == 0) {
		word = 1;
		i = 8;
	} else if (n >= 8 && strncmp(spec, "config2:", 8) == 0) {
		word = 2;
		i = 8;
	} else {
		return -EINVAL; /* config3 (Linux 6.3+, Arm SPE) is not for us */
	}
	if (i == n)
		return -EINVAL;
	while (i < n) {
		size_t j = i;
		uint64_t lo, hi;

		while (j < n && isdigit((unsigned char)spec[j]))
			j++;
		if (parse_num(spec + i, j - i, &lo) != 0)
			return -EINVAL;
		hi = lo;
		if (j < n && spec[j] == '-') {
			size_t k = ++j;
			while (j < n && isdigit((unsigned char)spec[j]))
				j++;
			if (parse_num(spec + k, j - k, &hi) != 0)
				return -EINVAL;
		}
		if (lo > hi || hi > 63)
			return -EINVAL;
		for (uint64_t b = lo; b <= hi; b++)
			f.mask |= 1ull << b;
		if (j < n && spec[j] != ',')
			return -EINVAL;
		if (j < n && j + 1 == n)
			return -EINVAL; /* trailing comma */
		i = j < n ? j + 1 : j;
	}
	memcpy(f.name, name, strlen(name) + 1);
	f.config = word;
	*out = f;
	return 0;
}

/* Deposit @value's low bits into the set bits of @mask, lowest first. */
static int deposit(uint64_t value, uint64_t mask, uint64_t *out)
{
	uint64_t r = 0;

	for (int b = 0; b < 64; b++) {
		if (!(mask & (1ull << b)))
			continue;
		if (value & 1)
			r |= 1ull << b;
		value >>= 1;
	}
	if (value)
		return -ERANGE;
	*out = r;
	return 0;
}

static int is_term_char(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

int pmu_parse_terms(const char *alias, const struct pmu_format *fmt, int nfmt, struct perf_event_attr *attr)
{
	static const struct pmu_format raw[] = {
		{ "config", 0, ~0ull }, { "config1", 1, ~0ull }, { "config2", 2, ~0ull },
	};
	const char *seen[PMU_TERMS_MAX / 2];
	size_t seen_len[PMU_TERMS_MAX / 2];
	int nseen = 0;
	uint64_t word[3] = { 0, 0, 0 };
	size_t n, i = 0;

	if (!alias || !attr || nfmt < 0 || (nfmt > 0 && !fmt))
		return -EINVAL;
	n = trimmed_len(alias);
	if (n == 0 || n >= PMU_TERMS_MAX)
		return -EINVAL;
	while (i < n) {
		const struct pmu_format *f = NULL;
		size_t name_end = i, term_end;
		uint64_t value = 1, bits;
		int err;

		while (name_end < n && is_term_char(alias[name_end]))
			name_end++;
		if (name_end == i)
			return -EINVAL; /* empty term, or a stray character */
		term_end = name_end;
		if (term_end < n && alias[term_end] == '=') {
			size_t v = ++term_end;
			while (term_end < n && alias[term_end] != ',')
				term_end++;
			err = parse_num(alias + v, term_end - v, &value);
			if (err)
				return err;
		}
		if (term_end < n && alias[term_end] != ',')
			return -EINVAL;
		if (term_end < n && term_end + 1 == n)
			return -EINVAL; /* trailing comma */

		for (int k = 0; k < nseen; k++)
			if (seen_len[k] == name_end - i && memcmp(seen[k], alias + i, seen_len[k]) == 0)
				return -EINVAL; /* the same field twice */
		seen[nseen] = alias + i;
		seen_len[nseen++] = name_end - i;

		for (int k = 0; k < nfmt && !f; k++)
			if (strlen(fmt[k].name) == name_end - i &&
			    memcmp(fmt[k].name, alias + i, name_end - i) == 0)
				f = &fmt[k];
		/* config/config1/config2 name the words themselves unless a
		 * format file gives those names another meaning */
		for (size_t k = 0; k < ARRAY_SIZE(raw) && !f; k++)
			if (strlen(raw[k].name) == name_end - i &&
			    memcmp(raw[k].name, alias + i, name_end - i) == 0)
				f = &raw[k];
		if (!f)
			return -ENOENT;
		if (f->config < 0 || f->config > 2 || f->mask == 0)
			return -EINVAL;
		err = deposit(value, f->mask, &bits);
		if (err)
			return err;
		word[f->config] |= bits;
		i = term_end < n ? term_end + 1 : term_end;
	}
	attr->config = word[0];
	attr->config1 = word[1];
	attr->config2 = word[2];
	return 0;
}
