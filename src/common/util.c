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

static int grow(char **buf, size_t *cap, size_t need)
{
	return array_grow(buf, cap, need, 1);
}

int json_append_string(char **buf, size_t *len, size_t *cap, const char *s)
{
	/* worst case: every byte becomes \u00XX, plus quotes and NUL */
	if (grow(buf, cap, *len + strlen(s) * 6 + 3))
		return -ENOMEM;
	char *p = *buf + *len;
	*p++ = '"';
	for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
		switch (*c) {
		case '"': *p++ = '\\'; *p++ = '"'; break;
		case '\\': *p++ = '\\'; *p++ = '\\'; break;
		case '\n': *p++ = '\\'; *p++ = 'n'; break;
		case '\r': *p++ = '\\'; *p++ = 'r'; break;
		case '\t': *p++ = '\\'; *p++ = 't'; break;
		default:
			if (*c < 0x20) {
				p += sprintf(p, "\\u%04x", *c);
			} else {
				*p++ = (char)*c;
			}
		}
	}
	*p++ = '"';
	*p = '\0';
	*len = (size_t)(p - *buf);
	return 0;
}

char *json_argv(char *const argv[])
{
	char *buf = NULL;
	size_t len = 0, cap = 0;

	/* json_append_string writes a string and its NUL; the separators
	 * take the place of an empty string's quotes */
	if (json_append_string(&buf, &len, &cap, "") < 0)
		return NULL;
	len = 0;
	buf[len++] = '[';
	for (int i = 0; argv[i]; i++) {
		if (i) {
			if (json_append_string(&buf, &len, &cap, "") < 0)
				goto oom;
			len -= 2;
			buf[len++] = ',';
		}
		if (json_append_string(&buf, &len, &cap, argv[i]) < 0)
			goto oom;
	}
	if (json_append_string(&buf, &len, &cap, "") < 0)
		goto oom;
	len -= 2;
	buf[len++] = ']';
	buf[len] = '\0';
	return buf;
oom:
	free(buf);
	return NULL;
}
