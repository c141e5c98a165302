/* mfu-record --emulate: Valgrind and the FP-op counting tool (emulate.h). */
#include "emulate.h"
#include "emulate/mfu_emulate.h"
#include "paths.h"
#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* "valgrind-3.19.0" from `valgrind --version`, or "valgrind". Valgrind is
 * found in PATH, which under sudo -E is the user's: it runs as @owner
 * (asuser.h), as the target will, never as root. */
static void valgrind_version(const char *valgrind, const struct asuser *owner, char *out, size_t len)
{
	char line[128] = "";
	int fds[2], status;
	ssize_t n = 0, r;
	pid_t pid;

	strbuf(out, len, "valgrind");
	if (pipe2(fds, O_CLOEXEC) != 0)
		return;
	pid = fork();
	if (pid == 0) {
		int devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
		dup2(fds[1], STDOUT_FILENO);
		if (devnull >= 0)
			dup2(devnull, STDERR_FILENO);
		if (asuser_become(owner) == 0)
			execl(valgrind, valgrind, "--version", (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	while (pid > 0 && n < (ssize_t)sizeof(line) - 1 &&
	       ((r = read(fds[0], line + n, sizeof(line) - 1 - (size_t)n)) > 0 || (r < 0 && errno == EINTR)))
		n += r > 0 ? r : 0;
	close(fds[0]);
	while (pid > 0 && waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	line[n] = '\0';
	line[strcspn(line, "\n")] = '\0';
	if (strncmp(line, "valgrind-", 9) == 0)
		strbuf(out, len, "%s", line);
}

/* The private directory under @tmp, as e->owner: made by mkdtemp, its
 * path absolute. Returns 0 or -errno with @why set. */
static int make_dir(struct emulator *e, const char *tmp, char *why, size_t whylen)
{
	struct asuser_saved sv;
	int err = asuser_enter(e->owner, &sv);

	if (err) {
		strbuf(why, whylen, "cannot act as uid %d for the emulator's directory: %s",
		       (int)asuser_uid(e->owner), strerror(-err));
		return err;
	}
	if (strbuf(e->dir, sizeof(e->dir), "%s/mfu-emulate.XXXXXX", tmp) || !mkdtemp(e->dir)) {
		err = errno ? -errno : -ENAMETOOLONG;
		strbuf(why, whylen, "cannot make a directory for the emulator in %s: %s", tmp, strerror(-err));
		e->dir[0] = '\0';
		goto out;
	}
	/* the tool wants an absolute path: every process of the tree, in
	 * whatever working directory, must name the same files */
	if (e->dir[0] != '/') {
		char abs[PATH_MAX];
		if (!realpath(e->dir, abs) || strbuf(e->dir, sizeof(e->dir), "%s", abs)) {
			err = errno ? -errno : -ENAMETOOLONG;
			strbuf(why, whylen, "cannot make %s absolute: %s", e->dir, strerror(-err));
			rmdir(e->dir);
			e->dir[0] = '\0';
		}
	}
out:
	asuser_leave(&sv);
	return err;
}

int emulator_prepare(struct emulator *e, char *const cmd[], const struct asuser *owner, char *why,
		     size_t whylen)
{
	const char *tmp = getenv("TMPDIR");
	char tool[PATH_MAX + 64], version[64];
	size_t ncmd = 0;
	int k = 0;

	memset(e, 0, sizeof(*e));
	int rc = path_lookup(cmd[0], tool, sizeof(tool));
	if (rc) {
		strbuf(why, whylen, "cannot run '%s': %s", cmd[0], strerror(-rc));
		e->command_missing = 1;
		return rc;
	}
	if (path_lookup("valgrind", e->valgrind, sizeof(e->valgrind)) != 0) {
		strbuf(why, whylen, "--emulate runs the program under Valgrind, which is not installed "
		       "(apt-get install valgrind)");
		return -ENOENT;
	}
	strbuf(e->libdir, sizeof(e->libdir), "%s", paths_get(PATHS_EMULATE));
	strbuf(tool, sizeof(tool), "%s/" MFU_EMU_TOOL "-amd64-linux", e->libdir);
	if (access(tool, X_OK) != 0) {
		int err = errno;
		strbuf(why, whylen, "--emulate needs mfu's Valgrind tool %s, which cannot be run (%s): this "
		       "mfu was built without Valgrind's headers and libraries (install valgrind and build "
		       "again), or the tool runs on x86-64 only", tool, strerror(err));
		return -ENOENT;
	}
	if (!tmp || !*tmp)
		tmp = "/tmp";
	e->owner = owner;
	rc = make_dir(e, tmp, why, whylen);
	if (rc)
		return rc;
	valgrind_version(e->valgrind, owner, version, sizeof(version));
	strbuf(e->engine, sizeof(e->engine), "%s --tool=" MFU_EMU_TOOL, version);
	strbuf(e->opt_dir, sizeof(e->opt_dir), "--mfu-dir=%s", e->dir);
	strbuf(e->opt_out, sizeof(e->opt_out), "--mfu-out=%s/total.%%p", e->dir);
	while (cmd[ncmd])
		ncmd++;
	e->argv = calloc(ncmd + EMULATE_MAX_ARGS + 1, sizeof(char *));
	if (!e->argv) {
		emulator_cleanup(e);
		strbuf(why, whylen, "out of memory");
		return -ENOMEM;
	}
	e->argv[k++] = e->valgrind;
	e->argv[k++] = (char *)"--tool=" MFU_EMU_TOOL;
	e->argv[k++] = (char *)"-q";
	/* the processes the program starts are counted too */
	e->argv[k++] = (char *)"--trace-children=yes";
	e->argv[k++] = e->opt_dir;
	e->argv[k++] = e->opt_out;
	for (size_t i = 0; i < ncmd; i++)
		e->argv[k++] = cmd[i];
	e->argv[k] = NULL;
	if (setenv("VALGRIND_LIB", e->libdir, 1) != 0) {
		int err = errno;
		emulator_cleanup(e);
		strbuf(why, whylen, "cannot set VALGRIND_LIB: %s", strerror(err));
		return -err;
	}
	return 0;
}

int emulator_totals(const struct emulator *e, pid_t pid, unsigned long long *counts, size_t n)
{
	static const char *const prec[MFU_EMU_NPREC] = { "fp64", "fp32", "fp16", "bf16" };
	static const char *const width[MFU_EMU_NWIDTH] = { "scalar", "128", "256", "512" };
	char path[PATH_MAX + 32], line[256];
	size_t want = MFU_EMU_NPREC * MFU_EMU_NWIDTH + 2, found = 0;
	FILE *f;

	if (n < want || !e->dir[0])
		return -EINVAL;
	if (strbuf(path, sizeof(path), "%s/total.%d", e->dir, (int)pid))
		return -ENAMETOOLONG;
	/* written by the tool inside the target, as its user, in their
	 * directory: read as them, a regular file of theirs (asuser.h) */
	int fd = asuser_open_file(e->owner, path, 1 << 20, NULL);
	f = fd >= 0 ? fdopen(fd, "r") : NULL;
	if (!f) {
		if (fd >= 0)
			close(fd);
		return fd == -ENOENT ? -ENOENT : -EPROTO;
	}
	memset(counts, 0, want * sizeof(*counts));
	while (fgets(line, sizeof(line), f)) {
		char key[64];
		unsigned long long v;
		if (sscanf(line, "%63s %llu", key, &v) != 2)
			continue;
		for (int p = 0; p < MFU_EMU_NPREC; p++)
			for (int w = 0; w < MFU_EMU_NWIDTH; w++) {
				char name[32];
				strbuf(name, sizeof(name), "inst_%s_%s", prec[p], width[w]);
				if (strcmp(key, name) == 0) {
					counts[p * MFU_EMU_NWIDTH + w] = v;
					found++;
				}
			}
		if (strcmp(key, "x87_ops") == 0) {
			counts[want - 2] = v;
			found++;
		} else if (strcmp(key, "guest_insns") == 0) {
			counts[want - 1] = v;
			found++;
		}
	}
	fclose(f);
	return found == want ? 0 : -EPROTO;
}

void emulator_cleanup(struct emulator *e)
{
	struct asuser_saved sv;

	free(e->argv);
	e->argv = NULL;
	/* as the owner: the directory is theirs, and a link they put at its
	 * path must not lead root's unlink() into another directory */
	if (e->dir[0] && asuser_enter(e->owner, &sv) == 0) {
		DIR *d = opendir(e->dir);
		struct dirent *de;
		while (d && (de = readdir(d))) {
			char path[PATH_MAX + 300];
			if (de->d_name[0] == '.')
				continue;
			if (strbuf(path, sizeof(path), "%s/%s", e->dir, de->d_name) == 0)
				unlink(path);
		}
		if (d)
			closedir(d);
		rmdir(e->dir);
		e->dir[0] = '\0';
		asuser_leave(&sv);
	}
}
