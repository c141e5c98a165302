/* The inputs of a merge (merge.h): the databases' names (patterns
 * expanded, no file twice), the descriptors reading them one at a time
 * needs, their schema versions, the straggler threshold. */
#include "merge.h"
#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

void merge_paths_free(char **paths, size_t n)
{
	for (size_t i = 0; paths && i < n; i++)
		free(paths[i]);
	free(paths);
}

static int add_path(char ***paths, size_t *n, size_t *cap, const char *p)
{
	char *copy = strdup(p);

	if (!copy || array_grow(paths, cap, *n + 1, sizeof(**paths))) {
		free(copy);
		return -ENOMEM;
	}
	(*paths)[(*n)++] = copy;
	return 0;
}

int merge_expand(const char *const *patterns, size_t n, char ***paths, size_t *npaths, char *err,
		 size_t errlen)
{
	char **out = NULL;
	size_t len = 0, cap = 0;
	int rc = 0;

	for (size_t i = 0; i < n && !rc; i++) {
		glob_t g;
		int grc;

		if (!strpbrk(patterns[i], "*?[")) {
			rc = add_path(&out, &len, &cap, patterns[i]);
			continue;
		}
		memset(&g, 0, sizeof(g));
		grc = glob(patterns[i], 0, NULL, &g);
		if (grc == GLOB_NOMATCH) {
			strbuf(err, errlen, "no database matches '%s'", patterns[i]);
			rc = -ENOENT;
		} else if (grc == GLOB_NOSPACE) {
			rc = -ENOMEM;
		} else if (grc != 0) {
			strbuf(err, errlen, "'%s': cannot read a directory of the pattern", patterns[i]);
			rc = -EIO;
		}
		for (size_t k = 0; !rc && k < g.gl_pathc; k++)
			rc = add_path(&out, &len, &cap, g.gl_pathv[k]);
		globfree(&g);
	}
	if (rc == -ENOMEM)
		strbuf(err, errlen, "out of memory");
	/* the same file twice would count its rank twice */
	for (size_t i = 0; !rc && i < len; i++) {
		struct stat a, b;

		if (stat(out[i], &a) != 0)
			continue; /* opening it says why */
		for (size_t k = i + 1; k < len; k++) {
			if (stat(out[k], &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino) {
				strbuf(err, errlen, "'%s' and '%s' are the same file: each rank's database goes once",
				       out[i], out[k]);
				rc = -EEXIST;
				break;
			}
		}
	}
	if (rc) {
		merge_paths_free(out, len);
		return rc;
	}
	*paths = out;
	*npaths = len;
	return 0;
}

/* File descriptors a merge needs free at once, however many ranks it has:
 * the rank being read with its WAL and shared memory (3), the output
 * (merge -o) or the temporary merged database, which SQLite keeps in
 * memory until it grows (1), a temporary file for a large sort (1); the
 * report then reads the merged database and the chosen rank's own (3).
 * Measured: 30 ranks in WAL mode merged with 2 free, and not with 1. */
#define MERGE_FDS 8

/* The descriptors open in this process, or -1 when /proc cannot tell. */
static long fds_in_use(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	long n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)) != NULL)
		n += e->d_name[0] != '.';
	closedir(d);
	return n - 1; /* the directory's own */
}

int merge_fd_check(size_t nfiles, char *err, size_t errlen)
{
	struct rlimit rl;
	long used = fds_in_use();
	rlim_t want;

	if (used < 0 || getrlimit(RLIMIT_NOFILE, &rl) != 0)
		return 0; /* cannot tell: opening the files says what fails */
	want = (rlim_t)used + MERGE_FDS;
	if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= want)
		return 0;
	if (rl.rlim_max == RLIM_INFINITY || rl.rlim_max >= want) {
		/* the soft limit is the user's to raise up to the hard one */
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) == 0)
			return 0;
	}
	strbuf(err, errlen,
	       "cannot read %zu database%s: the open file limit (ulimit -n) is %llu, %ld descriptors are in use, "
	       "and reading the databases one at a time needs %d more (raise it: ulimit -n %llu)",
	       nfiles, nfiles == 1 ? "" : "s", (unsigned long long)rl.rlim_cur, used, MERGE_FDS,
	       (unsigned long long)want);
	return -EMFILE;
}

/* PRAGMA user_version from the file's header (offset 60, big-endian), or
 * -1 when the header cannot be read. */
static long header_version(const char *path)
{
	unsigned char h[100];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t got = fd >= 0 ? read(fd, h, sizeof(h)) : -1;

	if (fd >= 0)
		close(fd);
	if (got != (ssize_t)sizeof(h) || memcmp(h, "SQLite format 3", 16) != 0)
		return -1;
	return (long)((uint32_t)h[60] << 24 | (uint32_t)h[61] << 16 | (uint32_t)h[62] << 8 | h[63]);
}

int merge_check_versions(char *const *paths, size_t n, char *err, size_t errlen)
{
	long first = -1;
	size_t at = 0;

	for (size_t i = 0; i < n; i++) {
		long v = header_version(paths[i]);

		if (v < 0)
			continue;
		if (first < 0) {
			first = v;
			at = i;
		} else if (v != first) {
			strbuf(err, errlen,
			       "cannot merge databases of different schema versions: %s has version %ld, %s has %ld "
			       "(record every rank with the same mfu-record)",
			       paths[at], first, paths[i], v);
			return -EPROTO;
		}
	}
	return 0;
}

int merge_parse_threshold(const char *s, double *out)
{
	char buf[64];
	size_t n = strlen(s);
	double v;

	if (n == 0 || n >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, s, n + 1);
	if (buf[n - 1] == '%')
		buf[--n] = '\0';
	if (n == 0 || safe_atod(buf, &v) != 0 || !(v >= 0 && v <= 1000))
		return -EINVAL;
	*out = v / 100;
	return 0;
}
