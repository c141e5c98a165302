/* Close matches for a name that is not known: "did you mean ...?".
 *
 * suggest_init() with the name asked for, suggest_add() for every name
 * that is known, suggest_format() for the closest few. Closeness is the
 * edit distance ignoring case; a name is suggested when it is within a
 * quarter of the asked name's length (at least 1 edit) and at most one
 * edit further than the closest one, so a typo gets its fix and not its
 * fix's neighbours. */
#ifndef MFU_SUGGEST_H
#define MFU_SUGGEST_H

#include <stddef.h>

#define SUGGEST_MAX 3         /* names suggested at most */
#define SUGGEST_NAME_MAX 160  /* bytes of a name compared (longer ones are cut) */

struct suggest {
	char query[SUGGEST_NAME_MAX];
	int limit;  /* the largest distance that is close */
	size_t n;   /* names kept in best[], closest first */
	struct {
		char name[SUGGEST_NAME_MAX];
		int dist;
	} best[SUGGEST_MAX];
};

/* Start looking for names close to @query. */
void suggest_init(struct suggest *s, const char *query);

/* Consider @name; a name already kept (ignoring case) is not kept twice. */
void suggest_add(struct suggest *s, const char *name);

/* "did you mean A?", "did you mean A or B?" or "did you mean A, B or C?"
 * in @buf (always terminated), "" when no name was close. Returns how many
 * names, or -ENOSPC when @buf was too small (the text is cut). */
int suggest_format(const struct suggest *s, char *buf, size_t len);

/* Edit distance between @a and @b ignoring ASCII case: insertions,
 * deletions, substitutions and swaps of two adjacent characters count one
 * each (optimal string alignment). Only the first SUGGEST_NAME_MAX - 1
 * bytes of each are compared. */
int suggest_distance(const char *a, const char *b);

#endif
