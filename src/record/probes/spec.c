/* Probe specs (--step, --phase): parsing and printing points (probes_impl.h). */
#include "probes_impl.h"

/* ==== spec parsing ==== */

static int is_sdt_ident(const char *s, size_t n)
{
	if (n == 0)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '_')
			return 0;
	return 1;
}

static int has_ctrl(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return 1;
	return 0;
}

/* Index of the first ':' that is not part of "::", or -1. */
static long single_colon(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (s[i] != ':')
			continue;
		if (i + 1 < n && s[i + 1] == ':') {
			i++;
			continue;
		}
		return (long)i;
	}
	return -1;
}

static int copy_field(char *dst, size_t dstlen, const char *s, size_t n)
{
	if (n >= dstlen)
		return -ENAMETOOLONG;
	memcpy(dst, s, n);
	dst[n] = '\0';
	return 0;
}

/* "PROVIDER:NAME" (after "sdt:") into @p. */
static int parse_sdt(const char *s, size_t n, struct probe_point *p, const char *whole,
		     char *why, size_t whylen)
{
	const char *colon = memchr(s, ':', n);
	size_t pn, nn;

	if (!colon) {
		probes_why(why, whylen, "expected sdt:PROVIDER:NAME, got '%s'", whole);
		return -EINVAL;
	}
	pn = (size_t)(colon - s);
	nn = n - pn - 1;
	if (!is_sdt_ident(s, pn) || !is_sdt_ident(colon + 1, nn)) {
		probes_why(why, whylen,
			"expected sdt:PROVIDER:NAME with PROVIDER and NAME made of letters, digits "
			"and '_', got '%s'", whole);
		return -EINVAL;
	}
	p->kind = PROBE_POINT_SDT;
	if (copy_field(p->provider, sizeof(p->provider), s, pn) ||
	    copy_field(p->name, sizeof(p->name), colon + 1, nn)) {
		probes_why(why, whylen, "USDT name too long in '%s'", whole);
		return -EINVAL;
	}
	return 0;
}

/* One point, @s[0..n), already trimmed. */
static int parse_point(const char *s, size_t n, struct probe_point *p, char *why, size_t whylen)
{
	char whole[PROBE_OBJECT_MAX + PROBE_NAME_MAX];
	long c;
	const char *fn = s;
	size_t fnn = n;

	memset(p, 0, sizeof(*p));
	snprintf(whole, sizeof(whole), "%.*s", (int)n, s);
	if (n == 0) {
		probes_why(why, whylen, "empty probe point (expected FUNC or sdt:PROVIDER:NAME)");
		return -EINVAL;
	}
	if (has_ctrl(s, n)) {
		probes_why(why, whylen, "control character in '%s'", whole);
		return -EINVAL;
	}
	if (n >= 4 && !strncmp(s, "sdt:", 4))
		return parse_sdt(s + 4, n - 4, p, whole, why, whylen);
	if (n >= 3 && !strncmp(s, "py:", 3)) {
		probes_why(why, whylen, "'%s': Python function steps (py:) are not handled by the "
			"uprobe module", whole);
		return -EINVAL;
	}
	c = single_colon(s, n);
	if (c >= 0) {
		size_t on = (size_t)c;

		if (on == 0) {
			probes_why(why, whylen, "empty object name before ':' in '%s'", whole);
			return -EINVAL;
		}
		if (copy_field(p->object, sizeof(p->object), s, on)) {
			probes_why(why, whylen, "object name too long in '%s'", whole);
			return -EINVAL;
		}
		fn = s + on + 1;
		fnn = n - on - 1;
		if (fnn >= 4 && !strncmp(fn, "sdt:", 4))
			return parse_sdt(fn + 4, fnn - 4, p, whole, why, whylen);
		if (fnn == 0) {
			probes_why(why, whylen, "empty function name after '%s:'", p->object);
			return -EINVAL;
		}
		if (single_colon(fn, fnn) >= 0) {
			probes_why(why, whylen,
				"'%s': expected [OBJECT:]FUNC or [OBJECT:]sdt:PROVIDER:NAME", whole);
			return -EINVAL;
		}
	}
	if (isspace((unsigned char)fn[0]) || isspace((unsigned char)fn[fnn - 1])) {
		probes_why(why, whylen, "space around the function name in '%s'", whole);
		return -EINVAL;
	}
	p->kind = PROBE_POINT_FUNC;
	if (copy_field(p->name, sizeof(p->name), fn, fnn)) {
		probes_why(why, whylen, "function name too long in '%s' (at most %d bytes)", whole,
			PROBE_NAME_MAX - 1);
		return -EINVAL;
	}
	return 0;
}

/* The ',' that separates a pair, outside (), <> and []; -1 when none,
 * -2 when there are several. "operator," and "operator<" would fool it. */
static long pair_comma(const char *s)
{
	long at = -1;
	int depth = 0;

	for (long i = 0; s[i]; i++) {
		switch (s[i]) {
		case '(':
		case '<':
		case '[':
			depth++;
			break;
		case ')':
		case '>':
		case ']':
			if (depth > 0)
				depth--;
			break;
		case ',':
			if (depth == 0) {
				if (at >= 0)
					return -2;
				at = i;
			}
			break;
		}
	}
	return at;
}

static void trim(const char **s, size_t *n)
{
	while (*n && isspace((unsigned char)**s)) {
		(*s)++;
		(*n)--;
	}
	while (*n && isspace((unsigned char)(*s)[*n - 1]))
		(*n)--;
}

int probes_parse_spec(const char *spec, struct probe_spec *out, char *why, size_t whylen)
{
	const char *a, *b;
	size_t an, bn;
	long comma;
	int err;

	memset(out, 0, sizeof(*out));
	if (!spec || !*spec) {
		probes_why(why, whylen, "empty step spec (expected FUNC, FUNC_A,FUNC_B, "
			"sdt:PROVIDER:NAME or sdt:P:BEGIN,sdt:P:END)");
		return -EINVAL;
	}
	comma = pair_comma(spec);
	if (comma == -2) {
		probes_why(why, whylen, "'%s': at most two probe points (BEGIN,END)", spec);
		return -EINVAL;
	}
	if (comma < 0) {
		a = spec;
		an = strlen(spec);
		trim(&a, &an);
		err = parse_point(a, an, &out->begin, why, whylen);
		if (err)
			return err;
		out->end = out->begin;
		if (out->begin.kind == PROBE_POINT_FUNC) {
			out->kind = PROBE_SPEC_CALL;
			out->end.at_return = 1;
		} else {
			out->kind = PROBE_SPEC_EACH;
		}
		return 0;
	}
	a = spec;
	an = (size_t)comma;
	b = spec + comma + 1;
	bn = strlen(b);
	trim(&a, &an);
	trim(&b, &bn);
	if (an == 0 || bn == 0) {
		probes_why(why, whylen, "'%s': empty %s point in BEGIN,END", spec,
			an == 0 ? "begin" : "end");
		return -EINVAL;
	}
	err = parse_point(a, an, &out->begin, why, whylen);
	if (!err)
		err = parse_point(b, bn, &out->end, why, whylen);
	if (err)
		return err;
	out->kind = PROBE_SPEC_PAIR;
	return 0;
}

int probes_parse_phase(const char *arg, char *name, size_t namelen, struct probe_spec *out,
		       char *why, size_t whylen)
{
	const char *eq = arg ? strchr(arg, '=') : NULL;
	size_t n;

	if (!eq) {
		probes_why(why, whylen, "expected NAME=SPEC, got '%s'", arg ? arg : "");
		return -EINVAL;
	}
	n = (size_t)(eq - arg);
	if (n == 0) {
		probes_why(why, whylen, "empty phase name in '%s'", arg);
		return -EINVAL;
	}
	if (has_ctrl(arg, n)) {
		probes_why(why, whylen, "control character in the phase name of '%s'", arg);
		return -EINVAL;
	}
	if (n >= namelen) {
		probes_why(why, whylen, "phase name too long in '%s' (at most %zu bytes)", arg,
			namelen ? namelen - 1 : 0);
		return -EINVAL;
	}
	memcpy(name, arg, n);
	name[n] = '\0';
	return probes_parse_spec(eq + 1, out, why, whylen);
}

int probes_point_format(const struct probe_point *p, char *buf, size_t len)
{
	const char *sep = p->object[0] ? ":" : "";

	if (p->kind == PROBE_POINT_SDT)
		return strbuf(buf, len, "%s%ssdt:%s:%s", p->object, sep, p->provider, p->name);
	return strbuf(buf, len, "%s%s%s%s", p->object, sep, p->name,
		      p->at_return ? " (return)" : "");
}

int probes_object_matches(const struct probe_point *p, const char *path)
{
	const char *base;
	size_t n;

	if (!p->object[0])
		return 1;
	if (strchr(p->object, '/')) {
		char ra[PATH_MAX], rb[PATH_MAX];

		if (!strcmp(p->object, path))
			return 1;
		if (!realpath(p->object, ra) || !realpath(path, rb))
			return 0;
		return !strcmp(ra, rb);
	}
	base = strrchr(path, '/');
	base = base ? base + 1 : path;
	n = strlen(p->object);
	if (strncmp(base, p->object, n) == 0 && (base[n] == '\0' || base[n] == '.'))
		return 1;
	/* the name a program links is often a link beside the file it
	 * loads: Debian's libopenblas.so.0 (and libopenblas.so) is
	 * libopenblasp-r0.3.21.so in the same directory, and the loader's
	 * search gives the file */
	if (base != path) {
		static const char *const ext[] = { "", ".so" };
		char alias[PATH_MAX], ra[PATH_MAX], rb[PATH_MAX];
		int dir = (int)(base - path);

		if (!realpath(path, rb))
			return 0;
		for (size_t i = 0; i < sizeof(ext) / sizeof(ext[0]); i++)
			if (strbuf(alias, sizeof(alias), "%.*s%s%s", dir, path, p->object, ext[i]) == 0 &&
			    realpath(alias, ra) && !strcmp(ra, rb))
				return 1;
	}
	return 0;
}


void probes_why(char *why, size_t whylen, const char *fmt, ...)
{
	va_list ap;

	if (!why || !whylen)
		return;
	va_start(ap, fmt);
	vsnprintf(why, whylen, fmt, ap);
	va_end(ap);
}

