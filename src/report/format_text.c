/* Text cells: what a terminal or markdown table may show (format.h). */
#include "format.h"
#include "format_impl.h"
#include "util.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- strings ---- */

/* Length of the valid UTF-8 sequence at @s (1-4), 0 if it is not one. */
/* Code points that reorder or hide text on a terminal: C1 controls and the
 * bidirectional overrides ("Trojan Source"). */
static int cp_is_hidden(uint32_t cp)
{
	return (cp >= 0x80 && cp <= 0x9f) || (cp >= 0x202a && cp <= 0x202e) ||
	       (cp >= 0x2066 && cp <= 0x2069) || cp == 0x200e || cp == 0x200f;
}

long format_sanitize(char **buf, size_t *len, size_t *cap, const unsigned char *s, size_t n, int markdown)
{
	long width = 0;
	char esc[16];
	size_t k;
	uint32_t cp;

	if (array_grow(buf, cap, *len + 1, 1))
		return -ENOMEM;
	(*buf)[*len] = '\0';
	for (size_t i = 0; i < n; i += k) {
		const char *piece = (const char *)s + i;
		size_t plen;

		k = utf8_decode(s + i, n - i, &cp);
		if (k == 0) {
			plen = (size_t)sprintf(esc, "\\x%02x", s[i]);
			piece = esc;
			k = 1;
		} else if (cp < 0x20 || cp == 0x7f) {
			if (cp == '\n')
				plen = (size_t)sprintf(esc, "\\n");
			else if (cp == '\t')
				plen = (size_t)sprintf(esc, "\\t");
			else if (cp == '\r')
				plen = (size_t)sprintf(esc, "\\r");
			else
				plen = (size_t)sprintf(esc, "\\x%02x", (unsigned)cp);
			piece = esc;
		} else if (cp_is_hidden(cp)) {
			plen = (size_t)sprintf(esc, "\\u%04x", (unsigned)cp);
			piece = esc;
		} else if (cp == '\\' || (markdown && strchr("|*_`<>[]", (int)cp))) {
			esc[0] = '\\';
			esc[1] = (char)cp;
			plen = 2;
			piece = esc;
		} else {
			plen = k;
		}
		if (buf_append(buf, len, cap, piece, plen))
			return -ENOMEM;
		width += piece == esc ? (long)plen : 1;
	}
	return width;
}

size_t format_text_width(const char *s, size_t n)
{
	size_t w = 0;

	for (size_t i = 0; i < n; i++)
		w += ((unsigned char)s[i] & 0xc0) != 0x80;
	return w;
}

size_t format_text_bytes(const char *s, size_t n, size_t cols)
{
	size_t i = 0, w = 0;

	while (i < n && w < cols) {
		i++;
		while (i < n && ((unsigned char)s[i] & 0xc0) == 0x80)
			i++;
		w++;
	}
	return i;
}

size_t format_wrap_line(const char *s, size_t n, size_t room, size_t *next)
{
	size_t take, cut;

	if (format_text_width(s, n) <= room) {
		*next = n;
		return n;
	}
	/* the last space within the room; a word longer than a line is cut */
	cut = format_text_bytes(s, n, room + 1);
	while (cut > 0 && s[cut - 1] != ' ')
		cut--;
	if (cut == 0)
		cut = format_text_bytes(s, n, room);
	take = cut;
	while (take > 0 && s[take - 1] == ' ')
		take--;
	while (cut < n && s[cut] == ' ')
		cut++;
	*next = cut;
	return take;
}
