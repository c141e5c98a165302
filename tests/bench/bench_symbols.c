/*
 * bench_symbols: symbolization of a run with 100 DSOs and 1,000,000 samples
 * (the target: under 5 s).
 *
 * The DSOs are the first NDSO shared libraries (sorted by name, symlinks
 * skipped) of DIR, default /usr/lib/x86_64-linux-gnu. NPROC synthetic
 * processes map every one of them at their own base addresses, as MMAP2
 * records would say; NSAMPLES IPs are drawn uniformly over the executable
 * segments of a random process and DSO. Uniform IPs are the worst case for
 * the per-DSO caches (almost every IP is new); the "hot" pass then draws
 * from 1,000 addresses, closer to a real profile. Everything is timed from
 * an empty resolver: reading each DSO is part of the figure.
 *
 * DIR "gen" builds NDSO distinct libraries of GEN_FUNCS functions each with
 * $CC -O1 -g into a temporary directory first (removed afterwards): every
 * DSO then has DWARF, and file:line costs are part of the figure.
 *
 * usage: bench_symbols [NDSO [NSAMPLES [DIR|gen]]]
 * Prints one line of key=value.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "record/symbols/symbols.h"
#include "bench_clock.h"

#define NPROC 10
#define NHOT 1000
#define GEN_FUNCS 200

struct text {
	char path[512];
	uint64_t vaddr, filesz, offset; /* the executable PT_LOAD */
};

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static uint64_t xorshift(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The executable segment of @path, if it is a shared library with one. */
static int text_of(const char *path, struct text *t)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), found = 0;
	Elf *elf = NULL;
	GElf_Ehdr eh;
	size_t n;

	if (fd < 0)
		return 0;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || !gelf_getehdr(elf, &eh) || eh.e_type != ET_DYN || elf_getphdrnum(elf, &n))
		goto out;
	for (size_t i = 0; i < n && !found; i++) {
		GElf_Phdr ph;
		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD && (ph.p_flags & PF_X) &&
		    ph.p_filesz >= 4096) {
			snprintf(t->path, sizeof(t->path), "%s", path);
			t->vaddr = ph.p_vaddr;
			t->filesz = ph.p_filesz;
			t->offset = ph.p_offset;
			found = 1;
		}
	}
out:
	if (elf)
		elf_end(elf);
	close(fd);
	return found;
}

/* Write @n C files into @dir and compile them to shared libraries there. */
static int generate(const char *dir, int n)
{
	const char *cc = getenv("CC") ? getenv("CC") : "cc";
	char path[600], cmd[1024];

	for (int k = 0; k < n; k++) {
		FILE *f;
		snprintf(path, sizeof(path), "%s/gen%03d.c", dir, k);
		f = fopen(path, "w");
		if (!f)
			return -1;
		for (int i = 0; i < GEN_FUNCS; i++)
			fprintf(f,
				"int gen%d_f%d(int *a, int n)\n{\n\tint s = %d;\n"
				"\tfor (int i = 0; i < n; i++)\n\t\ts += a[i] * %d ^ (s >> %d);\n"
				"\treturn s;\n}\n",
				k, i, k * 7919 + i, i % 97 + 3, i % 13 + 1);
		fclose(f);
	}
	snprintf(cmd, sizeof(cmd),
		 "cd '%s' && ls gen*.c | xargs -P %ld -I{} sh -c "
		 "'%s -O1 -g -shared -fPIC -o \"$(basename {} .c).so\" {}'",
		 dir, sysconf(_SC_NPROCESSORS_ONLN), cc);
	return system(cmd) == 0 ? 0 : -1;
}

static uint64_t base_of(int proc, int dso)
{
	return 0x7f0000000000ULL + (uint64_t)proc * 0x10000000000ULL + (uint64_t)dso * 0x10000000ULL;
}

int main(int argc, char **argv)
{
	int ndso = argc > 1 ? atoi(argv[1]) : 100;
	long nsamples = argc > 2 ? atol(argv[2]) : 1000000;
	const char *dir = argc > 3 ? argv[3] : "/usr/lib/x86_64-linux-gnu";
	char gendir[] = "/tmp/mfu-bench-symbols-XXXXXX";
	int gen = strcmp(dir, "gen") == 0;
	char **names = NULL;
	size_t nnames = 0, cap = 0;
	struct text *texts;
	struct dirent *de;
	struct symbols_stats st;
	struct symbols *s;
	uint64_t (*ips)[2], t0, t_maps, t_cold, t_warm, t_hot;
	long named = 0, with_line = 0;
	int have = 0;
	DIR *d;

	if (ndso <= 0 || nsamples <= 0) {
		fprintf(stderr, "usage: bench_symbols [NDSO [NSAMPLES [DIR]]]\n");
		return 2;
	}
	elf_version(EV_CURRENT);
	if (gen) {
		if (!mkdtemp(gendir) || generate(gendir, ndso)) {
			fprintf(stderr, "bench_symbols: cannot build the libraries in %s\n", gendir);
			return 1;
		}
		dir = gendir;
	}
	d = opendir(dir);
	if (!d) {
		fprintf(stderr, "bench_symbols: cannot open %s: %s\n", dir, strerror(errno));
		return 1;
	}
	while ((de = readdir(d))) {
		if (!strstr(de->d_name, ".so"))
			continue;
		if (nnames == cap) {
			cap = cap ? 2 * cap : 256;
			names = realloc(names, cap * sizeof(*names));
			if (!names)
				return 1;
		}
		names[nnames++] = strdup(de->d_name);
	}
	closedir(d);
	qsort(names, nnames, sizeof(*names), cmp_str);
	texts = calloc((size_t)ndso, sizeof(*texts));
	ips = malloc((size_t)nsamples * sizeof(*ips));
	if (!texts || !ips)
		return 1;
	for (size_t i = 0; i < nnames && have < ndso; i++) {
		char path[512];
		struct stat sb;
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		if (lstat(path, &sb) == 0 && S_ISREG(sb.st_mode))
			have += text_of(path, &texts[have]);
	}
	if (have < ndso)
		fprintf(stderr, "bench_symbols: only %d shared libraries with text in %s\n", have, dir);

	for (long i = 0; i < nsamples; i++) {
		int p = (int)(xorshift() % NPROC), k = (int)(xorshift() % (uint64_t)have);
		ips[i][0] = (uint64_t)p;
		ips[i][1] = base_of(p, k) + texts[k].vaddr + xorshift() % texts[k].filesz;
	}

	t0 = now();
	if (symbols_new(&s))
		return 1;
	for (int p = 0; p < NPROC; p++)
		for (int k = 0; k < have; k++) {
			/* the segment as ld.so maps it: page-aligned, at base + p_vaddr */
			uint64_t va = texts[k].vaddr & ~4095ULL, off = texts[k].offset & ~4095ULL;
			uint64_t len = texts[k].vaddr + texts[k].filesz - va;
			if (symbols_add_map(s, 1000 + p, base_of(p, k) + va, len, off, texts[k].path, 1))
				return 1;
		}
	t_maps = now();
	for (long i = 0; i < nsamples; i++) {
		struct symbol_info si;
		int rc = symbols_resolve(s, 1000 + (pid_t)ips[i][0], ips[i][1], &si);
		if (rc == -ENOMEM)
			return 1;
		named += rc == 0;
		with_line += si.line > 0;
	}
	t_cold = now();
	/* the same IPs again: all from the caches */
	for (long i = 0; i < nsamples; i++) {
		struct symbol_info si;
		symbols_resolve(s, 1000 + (pid_t)ips[i][0], ips[i][1], &si);
	}
	t_warm = now();
	symbols_get_stats(s, &st);
	symbols_free(s);

	/* a fresh resolver on a skewed profile: NHOT distinct addresses */
	if (symbols_new(&s))
		return 1;
	t_hot = now();
	for (int p = 0; p < NPROC; p++)
		for (int k = 0; k < have; k++) {
			uint64_t va = texts[k].vaddr & ~4095ULL, off = texts[k].offset & ~4095ULL;
			if (symbols_add_map(s, 1000 + p, base_of(p, k) + va,
					    texts[k].vaddr + texts[k].filesz - va, off, texts[k].path, 1))
				return 1;
		}
	for (long i = 0; i < nsamples; i++) {
		struct symbol_info si;
		long j = (long)(xorshift() % NHOT) * (nsamples / NHOT);
		symbols_resolve(s, 1000 + (pid_t)ips[j][0], ips[j][1], &si);
	}
	t_hot = now() - t_hot;
	symbols_free(s);

	printf("dsos=%d procs=%d samples=%ld maps_ms=%.1f cold_s=%.3f total_s=%.3f warm_s=%.3f "
	       "hot%d_s=%.3f ns_per_sample=%.0f named=%.1f%% with_line=%.1f%% opened=%zu missing=%zu "
	       "dwarf=%zu shared=%zu\n",
	       have, NPROC, nsamples, (t_maps - t0) / 1e6, (t_cold - t_maps) / 1e9, (t_cold - t0) / 1e9,
	       (t_warm - t_cold) / 1e9, NHOT, t_hot / 1e9, (double)(t_cold - t0) / (double)nsamples,
	       100.0 * (double)named / (double)nsamples, 100.0 * (double)with_line / (double)nsamples,
	       st.dsos_opened, st.dsos_missing, st.dsos_dwarf, st.dsos_shared);
	if (gen) {
		char cmd[128];
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", gendir);
		if (system(cmd) != 0)
			fprintf(stderr, "bench_symbols: could not remove %s\n", gendir);
	}
	for (size_t i = 0; i < nnames; i++)
		free(names[i]);
	free(names);
	free(texts);
	free(ips);
	return 0;
}
