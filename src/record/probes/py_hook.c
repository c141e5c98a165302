#include "py_hook.h"
#include "record/target/paths.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_PY PROBE_STEPS_MAX_REQUESTS

struct py_hook {
	struct probe_request req[MAX_PY];
	int n;
	char dir[PATH_MAX];    /* private directory of the status file */
	char status[PATH_MAX];
	const struct asuser *owner; /* whose directory it is */
};

/* The status file's lines are short; a hostile one stops here. */
#define STATUS_MAX_BYTES (64 << 20)

static int file_exists(const char *dir, const char *name)
{
	char path[PATH_MAX];
	struct stat st;
	return strbuf(path, sizeof(path), "%s/%s", dir, name) == 0 && stat(path, &st) == 0;
}

/* Where mfu.py and mfu_hook/ are: $MFU_PYTHON_DIR, the source tree for a
 * build-tree mfu-record, else the installed data directory. */
static int python_dir(char *buf, size_t len, int *build_tree)
{
	const char *env = getenv("MFU_PYTHON_DIR");

	*build_tree = 0;
	if (env && *env)
		return strbuf(buf, len, "%s", env) ? -ENAMETOOLONG : 0;
	*build_tree = paths_in_build();
	return strbuf(buf, len, "%s", paths_get(PATHS_PYTHON)) ? -ENAMETOOLONG : 0;
}

/* mkdtemp and the empty status file, as @h->owner. Returns 0 or -errno
 * with @why set. */
static int make_status(struct py_hook *h, char *why, size_t whylen)
{
	const char *tmp = getenv("TMPDIR");
	struct asuser_saved sv;
	int rc, fd;

	rc = asuser_enter(h->owner, &sv);
	if (rc) {
		strbuf(why, whylen, "cannot act as uid %d for the Python hook's status: %s",
		       (int)asuser_uid(h->owner), strerror(-rc));
		return rc;
	}
	if (strbuf(h->dir, sizeof(h->dir), "%s/mfu-py-XXXXXX", tmp && *tmp ? tmp : "/tmp") || !mkdtemp(h->dir)) {
		rc = errno ? -errno : -ENAMETOOLONG;
		strbuf(why, whylen, "cannot create a directory for the Python hook's status: %s", strerror(-rc));
		h->dir[0] = '\0';
		goto out;
	}
	strbuf(h->status, sizeof(h->status), "%s/status", h->dir);
	fd = open(h->status, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		rc = -errno;
		strbuf(why, whylen, "cannot create %s: %s", h->status, strerror(-rc));
		h->status[0] = '\0';
		rmdir(h->dir);
		h->dir[0] = '\0';
		goto out;
	}
	close(fd);
out:
	asuser_leave(&sv);
	return rc;
}

int py_hook_setup(struct py_hook **out, const struct probe_request *req, int nreq,
		  const struct asuser *owner, char *why, size_t whylen)
{
	struct py_hook *h;
	char pydir[PATH_MAX], path[PATH_MAX], lines[MAX_PY * 600];
	size_t llen = 0;
	int build_tree, rc;

	*out = NULL;
	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	for (int i = 0; i < nreq; i++) {
		if (!req[i].python)
			continue;
		h->req[h->n++] = req[i];
		llen += (size_t)snprintf(lines + llen, sizeof(lines) - llen, "%s%s\t%s%s%s", llen ? "\n" : "",
					 req[i].phase ? "phase" : "step", req[i].py_name, req[i].phase ? "\t" : "",
					 req[i].phase ? req[i].name : "");
	}
	if (!h->n) {
		free(h);
		return 0;
	}
	rc = python_dir(pydir, sizeof(pydir), &build_tree);
	if (!rc && (!file_exists(pydir, "mfu.py") || !file_exists(pydir, "mfu_hook/sitecustomize.py")))
		rc = -ENOENT;
	if (rc) {
		strbuf(why, whylen, "py: steps need mfu's Python files (mfu.py and mfu_hook/sitecustomize.py), "
		       "not found in %s: reinstall mfu, or set MFU_PYTHON_DIR to the directory that has them",
		       pydir);
		free(h);
		return rc;
	}
	/* the status file, in a directory of the target's user: they write
	 * it, we read it */
	h->owner = owner;
	rc = make_status(h, why, whylen);
	if (rc) {
		free(h);
		return rc;
	}

	const char *old = getenv("PYTHONPATH");
	char *pp = NULL;
	if (asprintf(&pp, "%s/mfu_hook%s%s", pydir, old && *old ? ":" : "", old && *old ? old : "") < 0) {
		py_hook_free(h);
		return -ENOMEM;
	}
	rc = setenv("PYTHONPATH", pp, 1);
	free(pp);
	if (!rc && strbuf(path, sizeof(path), "%s/mfu.py", pydir) == 0)
		rc = setenv("MFU_PY_HOOK_MFU", path, 1);
	if (!rc)
		rc = setenv("MFU_PY_HOOK", lines, 1);
	if (!rc)
		rc = setenv("MFU_PY_HOOK_STATUS", h->status, 1);
	/* mfu.py loads libmfu by name: an uninstalled build names its own */
	if (!rc && build_tree && !getenv("MFU_LIBRARY"))
		rc = setenv("MFU_LIBRARY", MFU_BUILD_LIBMFU, 1);
	if (rc) {
		rc = -errno;
		strbuf(why, whylen, "cannot set the Python hook's environment: %s", strerror(-rc));
		py_hook_free(h);
		return rc;
	}
	*out = h;
	return 0;
}

void py_hook_free(struct py_hook *h)
{
	struct asuser_saved sv;

	if (!h)
		return;
	/* as the owner: the directory is theirs, and whatever they put at
	 * its path is not root's to remove */
	if (asuser_enter(h->owner, &sv) == 0) {
		if (h->status[0])
			unlink(h->status);
		if (h->dir[0])
			rmdir(h->dir);
		asuser_leave(&sv);
	}
	free(h);
}

struct py_result {
	unsigned long long calls;
	int procs;              /* processes where it was found */
	char how[16];
	char why[256];
	char paths[1024];
};

int py_hook_finish(struct py_hook *h, sqlite3 *db, char *note, size_t notelen, char *why, size_t whylen)
{
	struct py_result res[MAX_PY];
	char line[2048], errors[512] = "";
	int loads = 0, rc = 0;
	FILE *f;

	if (notelen)
		note[0] = '\0';
	memset(res, 0, sizeof(res));
	/* The target's user may have replaced the file by a link to one of
	 * root's, a FIFO, or a huge file: read as them, a regular file of
	 * theirs, bounded. */
	int fd = asuser_open_file(h->owner, h->status, STATUS_MAX_BYTES, NULL);
	f = fd >= 0 ? fdopen(fd, "r") : NULL;
	if (fd >= 0 && !f)
		close(fd);
	if (!f)
		strbuf(errors, sizeof(errors), "its status file %s could not be read (%s)", h->status,
		       strerror(fd < 0 ? -fd : errno));
	for (size_t total = 0; f && total < STATUS_MAX_BYTES && fgets(line, sizeof(line), f);) {
		total += strlen(line);
		char word[16], rest[1800] = "";
		int pid, idx, off = 0;
		line[strcspn(line, "\n")] = '\0';
		if (sscanf(line, "%15s %d%n", word, &pid, &off) < 2)
			continue;
		if (strcmp(word, "load") == 0) {
			loads++;
		} else if (strcmp(word, "error") == 0) {
			if (!errors[0])
				strbuf(errors, sizeof(errors), "%s", line + off + (line[off] == ' '));
		} else if (strcmp(word, "calls") == 0) {
			unsigned long long n;
			if (sscanf(line + off, "%d %llu", &idx, &n) == 2 && idx >= 0 && idx < h->n)
				res[idx].calls += n;
		} else if (strcmp(word, "found") == 0) {
			char how[16], file[1024];
			int k = 0;
			if (sscanf(line + off, "%d %15s %1023s%n", &idx, how, file, &k) < 3 || idx < 0 || idx >= h->n)
				continue;
			struct py_result *r = &res[idx];
			r->procs++;
			if (!r->how[0] || strcmp(how, "profiled") == 0) {
				strbuf(r->how, sizeof(r->how), "%s", how);
				strbuf(rest, sizeof(rest), "%s", line + off + k + (line[off + k] == ' '));
				strbuf(r->why, sizeof(r->why), "%s", rest);
			}
			if (!strstr(r->paths, file)) {
				size_t pl = strlen(r->paths);
				snprintf(r->paths + pl, sizeof(r->paths) - pl, "%s%s", pl ? "\n" : "", file);
			}
		}
	}
	if (f)
		fclose(f);

	size_t nlen = 0;
	for (int i = 0; i < h->n && !rc; i++) {
		const struct probe_request *q = &h->req[i];
		const struct py_result *r = &res[i];
		char point[600], detail[700];
		snprintf(point, sizeof(point), "py:%s", q->py_name);
		if (r->procs && strcmp(r->how, "wrapped") == 0 && strncmp(r->why, "also as ", 8) == 0)
			strbuf(detail, sizeof(detail), "marked by a wrapper that replaced the function at its first "
			       "call, and its other names where it is defined (%s)", r->why + 8);
		else if (r->procs && strcmp(r->how, "wrapped") == 0)
			strbuf(detail, sizeof(detail), "marked by a wrapper that replaced the function at its first call");
		else if (r->procs)
			strbuf(detail, sizeof(detail), "marked by the profile function (every Python call passes "
			       "through it, slower): %s", r->why[0] ? r->why : "it could not be replaced");
		else if (errors[0])
			strbuf(detail, sizeof(detail), "the Python hook failed: %s", errors);
		else if (!loads)
			strbuf(detail, sizeof(detail), "no Python process loaded mfu's hook: not a Python program, or "
			       "Python ran with -S, -I or -E (which skip sitecustomize and PYTHONPATH)");
		else
			strbuf(detail, sizeof(detail), "%d Python process%s ran and none called %s", loads,
			       loads == 1 ? "" : "es", q->py_name);
		struct probe_row row = {
			.role = q->phase ? "phase" : "step",
			.name = q->phase ? q->name : NULL,
			.spec = q->text,
			.boundary = "call",
			.point = point,
			.sites = r->procs,
			.paths = r->paths[0] ? r->paths : NULL,
			.hits = r->calls,
			.status = r->procs ? "placed" : "not_found",
			.detail = detail,
		};
		rc = probe_steps_store_row(db, &row, why, whylen);
		if (!r->procs && nlen < notelen)
			nlen += (size_t)snprintf(note + nlen, notelen - nlen, "%s%s: %s", nlen ? "; " : "", q->text,
						 detail);
	}
	return rc;
}
