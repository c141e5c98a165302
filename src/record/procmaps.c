#include "procmaps.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int procmaps_parse_line(char *line, struct procmaps_entry *e)
{
	char *p = line, *end;

	errno = 0;
	e->start = strtoull(p, &end, 16);
	if (end == p || *end != '-')
		return -EINVAL;
	p = end + 1;
	e->end = strtoull(p, &end, 16);
	if (end == p || *end != ' ')
		return -EINVAL;
	p = end + 1;
	if (strnlen(p, 5) < 5 || p[4] != ' ')
		return -EINVAL;
	e->exec = p[2] == 'x';
	p += 5;
	e->pgoff = strtoull(p, &end, 16);
	if (end == p || *end != ' ')
		return -EINVAL;
	p = strchr(end + 1, ' '); /* past "maj:min" */
	if (!p)
		return -EINVAL;
	p++;
	(void)strtoull(p, &end, 10); /* inode */
	if (end == p || (*end != ' ' && *end != '\n' && *end != '\0'))
		return -EINVAL;
	if (errno == ERANGE || e->end < e->start)
		return -EINVAL;
	p = end + strspn(end, " ");
	p[strcspn(p, "\n")] = '\0';
	e->path = p;
	return 0;
}

int procmaps_each(pid_t pid, int (*fn)(void *ctx, const struct procmaps_entry *e), void *ctx)
{
	char path[64], *line = NULL;
	size_t cap = 0;
	FILE *f;
	int err = 0;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? -ESRCH : -errno;
	errno = 0;
	while (!err && getline(&line, &cap, f) > 0) {
		struct procmaps_entry e;

		err = procmaps_parse_line(line, &e);
		if (!err)
			err = fn(ctx, &e);
	}
	if (!err && ferror(f))
		err = errno ? -errno : -EIO;
	free(line);
	fclose(f);
	return err;
}
