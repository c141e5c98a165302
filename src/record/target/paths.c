/* Where mfu-record finds its own files (paths.h). */
#include "paths.h"
#include "util.h"

#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const char *const build_path[PATHS_NFILES] = {
	[PATHS_LIBMFU] = MFU_BUILD_LIBMFU,
	[PATHS_LIBFLOPS] = MFU_BUILD_LIBFLOPS,
	[PATHS_PYTHON] = MFU_SOURCE_PYTHON_DIR,
	[PATHS_EMULATE] = MFU_BUILD_EMULATE_DIR,
	[PATHS_REPORT] = MFU_BUILD_REPORT,
};

static const char *const installed_path[PATHS_NFILES] = {
	[PATHS_LIBMFU] = MFU_INSTALLED_LIBMFU,
	[PATHS_LIBFLOPS] = MFU_INSTALLED_LIBFLOPS,
	[PATHS_PYTHON] = MFU_INSTALLED_PYTHON_DIR,
	[PATHS_EMULATE] = MFU_INSTALLED_EMULATE_DIR,
	[PATHS_REPORT] = MFU_INSTALLED_BINDIR "/mfu-report",
};

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int in_build;
static char self_dir[PATH_MAX];          /* this program's directory, "" if unknown */
static char path[PATHS_NFILES][PATH_MAX]; /* what paths_get() returns */

/* The installed @file relative to a moved prefix, into @out; 0, or -1 when
 * this copy is where it was configured, or the file is not there. */
static int relocated(const char *file, char *out, size_t len)
{
	const char *prefix = MFU_INSTALLED_PREFIX, *bindir = MFU_INSTALLED_BINDIR;
	size_t plen = strlen(prefix), blen = strlen(bindir), slen = strlen(self_dir);

	/* the prefix "/" installs into "/bin": nothing to take off */
	if (plen == 1)
		plen = 0;
	if (!self_dir[0] || strcmp(self_dir, bindir) == 0 || strncmp(bindir, prefix, plen) != 0 ||
	    strncmp(file, prefix, plen) != 0 || (file[plen] != '/' && plen))
		return -1;
	const char *rel_bin = bindir + plen; /* "/bin" */
	size_t rlen = blen - plen;
	if (slen < rlen || strcmp(self_dir + slen - rlen, rel_bin) != 0)
		return -1;
	if (strbuf(out, len, "%.*s%s", (int)(slen - rlen), self_dir, file + plen))
		return -1;
	return access(out, F_OK) == 0 ? 0 : -1;
}

static void init(void)
{
	ssize_t n = readlink("/proc/self/exe", self_dir, sizeof(self_dir) - 1);
	char *slash;

	self_dir[n > 0 ? n : 0] = '\0';
	slash = strrchr(self_dir, '/');
	if (slash)
		*slash = '\0';
	else
		self_dir[0] = '\0';
	in_build = self_dir[0] && strcmp(self_dir, MFU_BUILD_RECORD_DIR) == 0;
	for (int f = 0; f < PATHS_NFILES; f++) {
		if (in_build)
			strbuf(path[f], sizeof(path[f]), "%s", build_path[f]);
		else if (relocated(installed_path[f], path[f], sizeof(path[f])) != 0)
			strbuf(path[f], sizeof(path[f]), "%s", installed_path[f]);
	}
}

int paths_in_build(void)
{
	pthread_once(&once, init);
	return in_build;
}

const char *paths_get(enum paths_file f)
{
	pthread_once(&once, init);
	return f < PATHS_NFILES ? path[f] : "";
}
