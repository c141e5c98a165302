/*
 * blas_dlopen PLUGIN [--steps N]: the BLAS in a local scope only. This
 * program links no BLAS; it loads PLUGIN (blas_plugin.c, which links
 * OpenBLAS) with dlopen(RTLD_LOCAL), as Python loads an extension module,
 * and in step s calls its plugin_step(s): s + 1 cblas_dgemm 32x24x16 calls
 * made from the plugin. The counting library must find the real cblas_dgemm
 * in the plugin's own scope (RTLD_NEXT has none) and count every call.
 * Prints "checksum HEX" of the results.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mfu.h"

int main(int argc, char **argv)
{
	uint64_t (*step)(int), h = 0;
	long steps = 3;
	void *lib;

	if (argc < 2 || argv[1][0] == '-') {
		fprintf(stderr, "usage: blas_dlopen PLUGIN [--steps N]\n");
		return 2;
	}
	if (argc == 4 && !strcmp(argv[2], "--steps")) {
		char *end;
		errno = 0;
		steps = strtol(argv[3], &end, 10);
		if (errno || *end || steps < 0) {
			fprintf(stderr, "blas_dlopen: --steps needs a non-negative integer\n");
			return 2;
		}
	} else if (argc != 2) {
		fprintf(stderr, "usage: blas_dlopen PLUGIN [--steps N]\n");
		return 2;
	}
	lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		fprintf(stderr, "blas_dlopen: %s\n", dlerror());
		return 1;
	}
	*(void **)&step = dlsym(lib, "plugin_step");
	if (!step) {
		fprintf(stderr, "blas_dlopen: %s\n", dlerror());
		return 1;
	}
	for (long s = 0; s < steps; s++) {
		mfu_step_begin();
		h ^= step((int)s) + (uint64_t)s;
		mfu_step_end();
	}
	printf("checksum %016llx\n", (unsigned long long)h);
	return 0;
}
