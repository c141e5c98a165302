#include "cpumap.h"
#include "util.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One CPU number at *p: digits only, below CPUMAP_MAX. */
static int parse_cpu(const char **p, int *cpu)
{
	long v = 0;
	const char *s = *p;

	if (!isdigit((unsigned char)*s))
		return -EINVAL;
	while (isdigit((unsigned char)*s)) {
		v = v * 10 + (*s - '0');
		/* checked per digit, so a 40-digit number cannot wrap around */
		if (v >= CPUMAP_MAX)
			return -EINVAL;
		s++;
	}
	*cpu = (int)v;
	*p = s;
	return 0;
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

int cpumap_parse(struct cpumap *m, const char *list)
{
	const char *p = list, *end;
	size_t cap = 0;
	int err = -EINVAL, k = 0;

	m->cpu = NULL;
	m->n = 0;
	if (!list)
		return -EINVAL;
	end = list + strlen(list);
	while (end > list && isspace((unsigned char)end[-1]))
		end--;
	if (end == list)
		return 0;
	for (;;) {
		int lo, hi;

		if (parse_cpu(&p, &lo))
			goto fail;
		hi = lo;
		if (*p == '-') {
			p++;
			if (parse_cpu(&p, &hi) || hi < lo)
				goto fail;
		}
		for (int c = lo; c <= hi; c++) {
			if (array_grow(&m->cpu, &cap, (size_t)m->n + 1, sizeof(*m->cpu))) {
				err = -ENOMEM;
				goto fail;
			}
			m->cpu[m->n++] = c;
		}
		if (p == end)
			break;
		if (*p != ',' || p + 1 == end)
			goto fail;
		p++;
	}
	/* overlapping or unordered items ("4,0-3,2"): sort, drop repeats */
	qsort(m->cpu, (size_t)m->n, sizeof(*m->cpu), cmp_int);
	for (int i = 0; i < m->n; i++)
		if (k == 0 || m->cpu[k - 1] != m->cpu[i])
			m->cpu[k++] = m->cpu[i];
	m->n = k;
	return 0;
fail:
	cpumap_fini(m);
	return err;
}

void cpumap_fini(struct cpumap *m)
{
	if (!m)
		return;
	free(m->cpu);
	m->cpu = NULL;
	m->n = 0;
}

int cpumap_format(const int *cpu, int n, char *buf, size_t len)
{
	size_t used = 0;

	if (len < 4)
		return -ENOSPC;
	buf[0] = '\0';
	for (int i = 0; i < n; i++) {
		int j = i;
		char item[32];
		int w;

		while (j + 1 < n && cpu[j + 1] == cpu[j] + 1)
			j++;
		if (j == i)
			w = snprintf(item, sizeof(item), "%s%d", used ? "," : "", cpu[i]);
		else
			w = snprintf(item, sizeof(item), "%s%d-%d", used ? "," : "", cpu[i], cpu[j]);
		if (w < 0 || used + (size_t)w + 4 >= len) {
			snprintf(buf + used, len - used, "%s", "...");
			return -ENOSPC;
		}
		memcpy(buf + used, item, (size_t)w + 1);
		used += (size_t)w;
		i = j;
	}
	return 0;
}
