#include "suggest.h"

#include <ctype.h>
#include <errno.h>
#include <string.h>
#include <strings.h>

#include "util.h"

int suggest_distance(const char *a, const char *b)
{
	/* three rows of the dynamic programme: i-2, i-1, i */
	int rows[3][SUGGEST_NAME_MAX];
	size_t na = strnlen(a, SUGGEST_NAME_MAX - 1), nb = strnlen(b, SUGGEST_NAME_MAX - 1);

	for (size_t j = 0; j <= nb; j++)
		rows[0][j] = (int)j;
	for (size_t i = 1; i <= na; i++) {
		/* row i is rows[i % 3]; row i - 2 is rows[(i + 1) % 3] */
		int *cur = rows[i % 3], *prev = rows[(i - 1) % 3], *two = rows[(i + 1) % 3];
		int ca = tolower((unsigned char)a[i - 1]);

		cur[0] = (int)i;
		for (size_t j = 1; j <= nb; j++) {
			int cb = tolower((unsigned char)b[j - 1]);
			int d = prev[j - 1] + (ca != cb);

			if (prev[j] + 1 < d)
				d = prev[j] + 1;
			if (cur[j - 1] + 1 < d)
				d = cur[j - 1] + 1;
			if (i > 1 && j > 1 && ca == tolower((unsigned char)b[j - 2]) &&
			    tolower((unsigned char)a[i - 2]) == cb && two[j - 2] + 1 < d)
				d = two[j - 2] + 1;
			cur[j] = d;
		}
	}
	return rows[na % 3][nb];
}

void suggest_init(struct suggest *s, const char *query)
{
	memset(s, 0, sizeof(*s));
	strbuf(s->query, sizeof(s->query), "%s", query);
	s->limit = 1 + (int)strlen(s->query) / 4;
}

void suggest_add(struct suggest *s, const char *name)
{
	int d = suggest_distance(s->query, name);
	size_t at;

	if (d > s->limit || (s->n && d > s->best[0].dist + 1))
		return;
	for (size_t i = 0; i < s->n; i++)
		if (strncasecmp(s->best[i].name, name, SUGGEST_NAME_MAX - 1) == 0)
			return;
	/* keep best[] sorted by distance, then name, so the result does not
	 * depend on the order the names came in */
	for (at = s->n; at > 0; at--) {
		int c = s->best[at - 1].dist - d;

		if (c < 0 || (c == 0 && strcmp(s->best[at - 1].name, name) < 0))
			break;
	}
	if (at == SUGGEST_MAX)
		return;
	if (s->n == SUGGEST_MAX)
		s->n--;
	memmove(&s->best[at + 1], &s->best[at], (s->n - at) * sizeof(s->best[0]));
	strbuf(s->best[at].name, sizeof(s->best[at].name), "%s", name);
	s->best[at].dist = d;
	s->n++;
	/* a closer name makes the ones more than one edit further away noise */
	while (s->n > 1 && s->best[s->n - 1].dist > s->best[0].dist + 1)
		s->n--;
}

int suggest_format(const struct suggest *s, char *buf, size_t len)
{
	size_t used = 0;

	if (len)
		buf[0] = '\0';
	for (size_t i = 0; i < s->n; i++) {
		const char *sep = i == 0 ? "did you mean " : i + 1 == s->n ? " or " : ", ";

		if (used >= len || strbuf(buf + used, len - used, "%s%s%s", sep, s->best[i].name,
					  i + 1 == s->n ? "?" : ""))
			return -ENOSPC;
		used += strlen(buf + used);
	}
	return (int)s->n;
}
