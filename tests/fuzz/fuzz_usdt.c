/*
 * libFuzzer target: the USDT note parser (probes_list_usdt() and
 * probes_resolve_usdt() in src/record/probes/usdt.c).
 *
 * They read an ELF file by path, so the input is written to a memfd that is
 * passed as /proc/self/fd/N. The callback walks every string a note yields
 * and checks it ends inside the file's image, which ASan alone would not see
 * (libelf maps the file; it is not a heap block).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "record/probes/probes.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile uint64_t sink;

static int on_note(void *ctx, const struct probe_usdt *u)
{
	(void)ctx;
	/* strnlen bounded by the largest input: a missing NUL shows as a
	 * string as long as the bound */
	size_t a = strnlen(u->provider, 1 << 16), b = strnlen(u->name, 1 << 16),
	       c = strnlen(u->args, 1 << 16);
	if (a >= 1 << 16 || b >= 1 << 16 || c >= 1 << 16)
		abort();
	sink += a + b + c + u->offset + u->ref_ctr_offset;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;
	static char path[64];
	struct probe_site *sites = NULL;
	size_t n = 0;
	char why[512];

	if (size > 1 << 16)
		return 0;
	if (fd < 0) {
		fd = memfd_create("fuzz_usdt", MFD_CLOEXEC);
		if (fd < 0)
			abort();
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	}
	if (ftruncate(fd, 0) || (size && pwrite(fd, data, size, 0) != (ssize_t)size))
		abort();
	probes_list_usdt(path, on_note, NULL, why, sizeof(why));
	/* the provider and probe of the seed corpus, so the collecting
	 * callback and the not-found message both run */
	if (probes_resolve_usdt(path, "mfu", "step", &sites, &n, why, sizeof(why)) == 0) {
		for (size_t i = 0; i < n; i++)
			sink += strlen(sites[i].name) + sites[i].offset;
		free(sites);
	}
	return 0;
}
