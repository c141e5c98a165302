#include "util.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int safe_atoi(const char *s, int *out)
{
	char *end;
	long v;

	if (!s || !*s || isspace((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtol(s, &end, 10);
	if (*end != '\0')
		return -EINVAL;
	if (errno == ERANGE || v < INT_MIN || v > INT_MAX)
		return -ERANGE;
	*out = (int)v;
	return 0;
}

int safe_atou64(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!s || !*s || !isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (*end != '\0')
		return -EINVAL;
	if (errno == ERANGE)
		return -ERANGE;
	*out = v;
	return 0;
}

int safe_atod(const char *s, double *out)
{
	char *end;
	double v;

	if (!s || !*s || isspace((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (*end != '\0' || end == s)
		return -EINVAL;
	if (errno == ERANGE || !isfinite(v))
		return -ERANGE;
	*out = v;
	return 0;
}

int parse_si(const char *s, double *out)
{
	static const struct { char c; double mult; } suffix[] = {
		{ 'k', 1e3 }, { 'K', 1e3 }, { 'M', 1e6 }, { 'G', 1e9 }, { 'T', 1e12 }, { 'P', 1e15 },
	};
	char num[64];
	size_t n;
	double mult = 1.0, v;
	int err;

	if (!s || !*s)
		return -EINVAL;
	n = strlen(s);
	if (n >= sizeof(num))
		return -EINVAL;
	memcpy(num, s, n + 1);
	for (size_t i = 0; i < sizeof(suffix) / sizeof(suffix[0]); i++) {
		if (n > 1 && num[n - 1] == suffix[i].c) {
			mult = suffix[i].mult;
			num[n - 1] = '\0';
			break;
		}
	}
	err = safe_atod(num, &v);
	if (err)
		return err;
	v *= mult;
	if (!isfinite(v) || v <= 0)
		return -ERANGE;
	*out = v;
	return 0;
}

int read_text_file(const char *path, char *buf, size_t len)
{
	size_t used = 0;
	int fd, err = 0;

	if (len == 0)
		return -EINVAL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	for (;;) {
		ssize_t n;
		char extra;

		if (used + 1 >= len) {
			/* full: fine only if nothing is left */
			n = read(fd, &extra, 1);
			if (n < 0 && errno == EINTR)
				continue;
			err = n == 0 ? 0 : n < 0 ? -errno : -EFBIG;
			break;
		}
		n = read(fd, buf + used, len - 1 - used);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			break;
		}
		if (n == 0)
			break;
		used += (size_t)n;
	}
	buf[used] = '\0';
	close(fd);
	return err;
}

double interp_linear(uint64_t t0, double y0, uint64_t t1, double y1, uint64_t t)
{
	if (t1 == t0)
		return y1;
	/* the signed difference: t may lie before t0 (extrapolation) */
	return y0 + (y1 - y0) * ((double)t - (double)t0) / ((double)t1 - (double)t0);
}

int read_sysfs(const char *path, char *buf, size_t len)
{
	int err = read_text_file(path, buf, len);
	size_t n;

	if (err)
		return err;
	n = strlen(buf);
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' ' || buf[n - 1] == '\t' || buf[n - 1] == '\r'))
		n--;
	buf[n] = '\0';
	return 0;
}

uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t realtime_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int strbuf(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (len == 0)
		return -ENOSPC;
	va_start(ap, fmt);
	n = vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	if (n < 0) {
		buf[0] = '\0';
		return -EINVAL;
	}
	return (size_t)n >= len ? -ENOSPC : 0;
}

const void *find_by_key(const void *base, size_t n, size_t size, int64_t key)
{
	size_t lo = 0, hi = n;
	int64_t k;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		memcpy(&k, (const char *)base + mid * size, sizeof(k));
		if (k < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == n)
		return NULL;
	memcpy(&k, (const char *)base + lo * size, sizeof(k));
	return k == key ? (const char *)base + lo * size : NULL;
}

int array_grow(void *array, size_t *cap, size_t need, size_t size)
{
	void *old, *grown;
	size_t n = *cap ? *cap : 16;

	if (need <= *cap)
		return 0;
	while (n < need) {
		if (n > SIZE_MAX / 2)
			return -ENOMEM;
		n *= 2;
	}
	if (size && n > SIZE_MAX / size)
		return -ENOMEM;
	/* @array points to a T *: read and write it as bytes, not as a void * */
	memcpy(&old, array, sizeof(old));
	grown = realloc(old, n * size);
	if (!grown)
		return -ENOMEM;
	memcpy(array, &grown, sizeof(grown));
	*cap = n;
	return 0;
}

int buf_append(char **buf, size_t *len, size_t *cap, const char *s, size_t n)
{
	if (array_grow(buf, cap, *len + n + 1, 1))
		return -ENOMEM;
	memcpy(*buf + *len, s, n);
	*len += n;
	(*buf)[*len] = '\0';
	return 0;
}

size_t utf8_decode(const unsigned char *s, size_t n, uint32_t *cp)
{
	unsigned c = s[0];

	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	if (c < 0xc2)
		return 0;
	if (c < 0xe0) {
		if (n < 2 || (s[1] & 0xc0) != 0x80)
			return 0;
		*cp = ((c & 0x1fu) << 6) | (s[1] & 0x3fu);
		return 2;
	}
	if (c < 0xf0) {
		if (n < 3 || (s[1] & 0xc0) != 0x80 || (s[2] & 0xc0) != 0x80)
			return 0;
		if ((c == 0xe0 && s[1] < 0xa0) || (c == 0xed && s[1] >= 0xa0))
			return 0; /* overlong, surrogate */
		*cp = ((c & 0x0fu) << 12) | ((s[1] & 0x3fu) << 6) | (s[2] & 0x3fu);
		return 3;
	}
	if (c < 0xf5) {
		if (n < 4 || (s[1] & 0xc0) != 0x80 || (s[2] & 0xc0) != 0x80 || (s[3] & 0xc0) != 0x80)
			return 0;
		if ((c == 0xf0 && s[1] < 0x90) || (c == 0xf4 && s[1] >= 0x90))
			return 0;
		*cp = ((c & 0x07u) << 18) | ((s[1] & 0x3fu) << 12) | ((s[2] & 0x3fu) << 6) | (s[3] & 0x3fu);
		return 4;
	}
	return 0;
}

int json_append_string(char **buf, size_t *len, size_t *cap, const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	char esc[16];
	size_t k;
	uint32_t cp;

	if (buf_append(buf, len, cap, "\"", 1))
		return -ENOMEM;
	for (size_t i = 0; i < n; i += k) {
		const char *piece = str + i;
		size_t plen;

		k = utf8_decode(s + i, n - i, &cp);
		if (k == 0) {
			/* not UTF-8: JSON must be, so the byte becomes U+FFFD */
			plen = (size_t)sprintf(esc, "\\ufffd");
			piece = esc;
			k = 1;
		} else if (cp == '"' || cp == '\\') {
			esc[0] = '\\';
			esc[1] = (char)cp;
			plen = 2;
			piece = esc;
		} else if (cp < 0x20 || cp == 0x7f || cp == 0x2028 || cp == 0x2029 || (cp >= 0x80 && cp <= 0x9f) ||
			   (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069) || cp == 0x200e ||
			   cp == 0x200f) {
			/* controls, the line separators JavaScript will not take
			 * raw in a string, and what a terminal would obey or use
			 * to hide text: C1 controls (U+009B is CSI) and the
			 * bidirectional overrides; the same text once decoded */
			piece = esc;
			switch (cp) {
			case '\n': plen = (size_t)sprintf(esc, "\\n"); break;
			case '\r': plen = (size_t)sprintf(esc, "\\r"); break;
			case '\t': plen = (size_t)sprintf(esc, "\\t"); break;
			case '\b': plen = (size_t)sprintf(esc, "\\b"); break;
			case '\f': plen = (size_t)sprintf(esc, "\\f"); break;
			default: plen = (size_t)sprintf(esc, "\\u%04x", (unsigned)cp); break;
			}
		} else {
			plen = k;
		}
		if (buf_append(buf, len, cap, piece, plen))
			return -ENOMEM;
	}
	return buf_append(buf, len, cap, "\"", 1);
}

char *json_argv(char *const argv[])
{
	char *buf = NULL;
	size_t len = 0, cap = 0;
	int err = buf_append(&buf, &len, &cap, "[", 1);

	for (int i = 0; !err && argv[i]; i++) {
		if (i)
			err = buf_append(&buf, &len, &cap, ",", 1);
		if (!err)
			err = json_append_string(&buf, &len, &cap, argv[i], strlen(argv[i]));
	}
	if (!err)
		err = buf_append(&buf, &len, &cap, "]", 1);
	if (err) {
		free(buf);
		return NULL;
	}
	return buf;
}

int path_lookup(const char *prog, char *out, size_t len)
{
	const char *env = getenv("PATH"), *p;
	struct stat st;

	if (strchr(prog, '/')) {
		if (strbuf(out, len, "%s", prog))
			return -ENAMETOOLONG;
		return access(out, X_OK) == 0 ? 0 : -errno;
	}
	for (p = env && *env ? env : "/usr/local/bin:/usr/bin:/bin"; *p;) {
		size_t n = strcspn(p, ":");
		if (strbuf(out, len, "%.*s/%s", (int)n, n ? p : ".", prog) == 0 && stat(out, &st) == 0 &&
		    S_ISREG(st.st_mode) && access(out, X_OK) == 0)
			return 0;
		p += n + (p[n] == ':');
	}
	return -ENOENT;
}
