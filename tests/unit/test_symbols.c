/* Symbols: resolve IPs of this test binary, libc, libstdc++ (a mangled C++
 * name), the vdso, the kernel, JIT code described by a perf map, anonymous
 * memory, a process that has exited and a DSO deleted after its mapping was
 * recorded. The truth comes from dladdr/dlsym, the function pointers
 * themselves, __LINE__ and /proc/kallsyms. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pwd.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "asuser.h"
#include "check.h"
#include "symbols.h"
#include "util.h"

/* A pid that cannot exist (pid_max is at most 2^22). */
#define NO_PID 999999999

/* Functions of this binary to find by address. */
__attribute__((noinline, used)) int symtest_alpha(int x);
__attribute__((noinline, used)) int symtest_alpha(int x)
{
	return x * 7 + 3;
}

__attribute__((noinline, used)) static int symtest_beta(int x)
{
	return x * 11 - 5;
}

/* The whole function on one line, so every line-table row of it has this line. */
__attribute__((noinline, used)) int symtest_line(volatile int *p); __attribute__((noinline, used)) int symtest_line(volatile int *p) { return *p * 13 + 1; } static const int symtest_line_line = __LINE__;

static uint64_t addr_of(int (*fn)(int))
{
	uint64_t a;
	memcpy(&a, &fn, sizeof(a) < sizeof(fn) ? sizeof(a) : sizeof(fn));
	return a;
}

static uint64_t ptr_addr(void *p)
{
	return (uint64_t)(uintptr_t)p;
}

static int same_path(const char *a, const char *b)
{
	char ra[PATH_MAX], rb[PATH_MAX];

	if (!a || !b || !realpath(a, ra) || !realpath(b, rb))
		return 0;
	return strcmp(ra, rb) == 0;
}

static int ends_with(const char *s, const char *suffix)
{
	size_t n = s ? strlen(s) : 0, m = strlen(suffix);
	return n >= m && strcmp(s + n - m, suffix) == 0;
}

static void test_self(void)
{
	static const struct {
		int line;
		const char *name;
		int (*fn)(int);
		uint64_t delta;
	} rows[] = {
		{ __LINE__, "symtest_alpha", symtest_alpha, 0 },
		{ __LINE__, "symtest_alpha", symtest_alpha, 3 },
		{ __LINE__, "symtest_beta", symtest_beta, 0 },
		{ __LINE__, "symtest_beta", symtest_beta, 2 },
	};
	struct symbols *s;
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	CHECK(n > 0);
	exe[n > 0 ? n : 0] = '\0';
	CHECK_EQ_INT(symbols_new(&s), 0);
	CHECK_EQ_INT(symbols_add_proc_maps(s, getpid()), 0);
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		uint64_t ip = addr_of(rows[i].fn) + rows[i].delta;
		struct symbol_info si;
		struct link_map *lm = NULL;
		Dl_info dl;

		CHECK_ROW(symbols_resolve(s, getpid(), ip, &si) == 0, rows[i].line);
		CHECK_ROW(si.kind == SYMBOL_USER, rows[i].line);
		CHECK_ROW(strcmp(si.name, rows[i].name) == 0, rows[i].line);
		CHECK_ROW(si.offset == rows[i].delta, rows[i].line);
		CHECK_ROW(ip - si.offset == addr_of(rows[i].fn), rows[i].line);
		CHECK_ROW(same_path(si.dso, exe), rows[i].line);
		/* dladdr agrees on the object, and the ELF address is the IP
		 * minus the object's load bias */
		CHECK_ROW(dladdr1((void *)(uintptr_t)ip, &dl, (void **)&lm, RTLD_DL_LINKMAP) != 0, rows[i].line);
		CHECK_ROW(lm && si.dso_addr == ip - lm->l_addr, rows[i].line);
		CHECK_ROW(same_path(dl.dli_fname, exe) || !strcmp(dl.dli_fname, ""), rows[i].line);
		if (strcmp(si.name, rows[i].name) != 0)
			fprintf(stderr, "  got %s+%#llx in %s\n", si.name, (unsigned long long)si.offset, si.dso);
	}
	symbols_free(s);
}

/* file:line for a function of this file, compiled with -g. */
static void test_line(void)
{
	struct symbols *s;
	struct symbol_info si;
	void *fp = (void *)symtest_line;
	volatile int v = 2;

	CHECK_EQ_INT(symtest_line(&v), 27);
	CHECK_EQ_INT(symbols_new(&s), 0);
	CHECK_EQ_INT(symbols_add_proc_maps(s, getpid()), 0);
	CHECK_EQ_INT(symbols_resolve(s, getpid(), ptr_addr(fp), &si), 0);
	CHECK_STR(si.name, "symtest_line");
	CHECK(ends_with(si.file, "test_symbols.c"));
	CHECK_EQ_INT(si.line, symtest_line_line);
	CHECK_EQ_INT(symbols_resolve(s, getpid(), ptr_addr(fp) + 4, &si), 0);
	CHECK_EQ_INT(si.line, symtest_line_line);
	symbols_free(s);
}

/* libc functions: the name and start agree with dlsym/dladdr. */
static void test_libc(void)
{
	static const struct {
		int line;
		const char *sym;
		uint64_t delta;
	} rows[] = {
		{ __LINE__, "getpid", 0 },
		{ __LINE__, "getpid", 1 },
		{ __LINE__, "fopen", 0 },
		{ __LINE__, "qsort", 5 },
		{ __LINE__, "malloc", 0 },
		{ __LINE__, "nanosleep", 2 },
	};
	void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	struct symbols *s;

	CHECK(libc != NULL);
	if (!libc)
		return;
	CHECK_EQ_INT(symbols_new(&s), 0);
	CHECK_EQ_INT(symbols_add_proc_maps(s, getpid()), 0);
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		void *fn = dlsym(libc, rows[i].sym);
		uint64_t ip = ptr_addr(fn) + rows[i].delta;
		struct symbol_info si;
		Dl_info dl;
		int rc;

		CHECK_ROW(fn != NULL, rows[i].line);
		if (!fn)
			continue;
		rc = symbols_resolve(s, getpid(), ip, &si);
		CHECK_ROW(rc == 0, rows[i].line);
		CHECK_ROW(si.kind == SYMBOL_USER, rows[i].line);
		CHECK_ROW(si.offset == rows[i].delta, rows[i].line);
		/* the name we chose among aliases is one libc exports at that address */
		CHECK_ROW(rc == 0 && dlsym(libc, si.name) == fn, rows[i].line);
		CHECK_ROW(dladdr(fn, &dl) && same_path(dl.dli_fname, si.dso), rows[i].line);
		CHECK_ROW(dl.dli_saddr == fn, rows[i].line);
		if (rc || dlsym(libc, si.name) != fn)
			fprintf(stderr, "  %s: got %s+%#llx in %s (dladdr: %s)\n", rows[i].sym, si.name,
				(unsigned long long)si.offset, si.dso, dl.dli_sname);
	}
	/* the reader-friendly alias: getpid, not __getpid */
	{
		struct symbol_info si;
		CHECK_EQ_INT(symbols_resolve(s, getpid(), ptr_addr(dlsym(libc, "getpid")), &si), 0);
		CHECK_STR(si.name, "getpid");
	}
	symbols_free(s);
	dlclose(libc);
}

/* A C++ function: the mangled name from libstdc++'s symbol table comes back
 * demangled. */
static void test_cxx(void)
{
	static const struct {
		int line;
		const char *mangled, *demangled;
		int rc;
	} rows[] = {
		{ __LINE__, "_ZN3foo3barEi", "foo::bar(int)", 0 },
		{ __LINE__, "_ZNSt6vectorIiSaIiEE9push_backERKi",
		  "std::vector<int, std::allocator<int> >::push_back(int const&)", 0 },
		{ __LINE__, "_ZN3foo3barEv.cold", "foo::bar() [clone .cold]", 0 },
		{ __LINE__, "main", NULL, -EINVAL },
		{ __LINE__, "_Z!!garbage", NULL, -EINVAL },
	};
	void *h = dlopen("libstdc++.so.6", RTLD_NOW | RTLD_LOCAL);
	struct symbols *s;
	struct symbol_info si;
	void *fn;

	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		char *d = NULL;
		int rc = symbols_demangle(rows[i].mangled, &d);
		CHECK_ROW(rc == rows[i].rc, rows[i].line);
		if (rows[i].demangled)
			CHECK_ROW(d && strcmp(d, rows[i].demangled) == 0, rows[i].line);
		free(d);
	}

	CHECK(h != NULL);
	if (!h)
		return;
	fn = dlsym(h, "_ZSt17__throw_bad_allocv");
	CHECK(fn != NULL);
	CHECK_EQ_INT(symbols_new(&s), 0);
	CHECK_EQ_INT(symbols_add_proc_maps(s, getpid()), 0);
	CHECK_EQ_INT(symbols_resolve(s, getpid(), ptr_addr(fn) + 1, &si), 0);
	CHECK_STR(si.name, "std::__throw_bad_alloc()");
	CHECK_EQ_INT(si.offset, 1);
	CHECK(ends_with(si.dso, "libstdc++.so.6.0.30") || strstr(si.dso, "libstdc++.so") != NULL);
	symbols_free(s);
	dlclose(h);
}

static void test_vdso(void)
{
	uint64_t base = getauxval(AT_SYSINFO_EHDR);
	struct symbols *s;
	int found = 0, bad = 0;

	if (!base)
		return;
	CHECK_EQ_INT(symbols_new(&s), 0);
	CHECK_EQ_INT(symbols_add_proc_maps(s, getpid()), 0);
	for (uint64_t ip = base; ip < base + 0x2000; ip += 8) {
		struct symbol_info si;
		int rc = symbols_resolve(s, getpid(), ip, &si);
		bad += si.kind != SYMBOL_USER || strcmp(si.dso, "[vdso]") != 0;
		found += rc == 0 && (strstr(si.name, "clock_gettime") || strstr(si.name, "gettimeofday"));
	}
	CHECK_EQ_INT(bad, 0);
	CHECK(found > 0);
	symbols_free(s);
}

/* Kernel IPs: the name from /proc/kallsyms when it shows addresses. */
static void test_kernel(void)
{
	struct { unsigned long long addr; char type; char name[128]; int module; } prev2 = { 0 }, prev = { 0 }, cur;
	unsigned long long want_addr = 0;
	char want[128] = "", line[512];
	struct symbols *s;
	struct symbol_info si;
	int n = 0, rc;
	FILE *f = fopen("/proc/kallsyms", "r");

	/* a global text symbol strictly between its neighbours' addresses */
	while (f && fgets(line, sizeof(line), f)) {
		memset(&cur, 0, sizeof(cur));
		if (sscanf(line, "%llx %c %127s", &cur.addr, &cur.type, cur.name) != 3)
			continue;
		cur.module = strchr(line, '[') != NULL;
		if (++n > 1000 && prev.type == 'T' && !prev.module && prev.addr &&
		    prev2.addr < prev.addr && prev.addr + 1 < cur.addr) {
			want_addr = prev.addr;
			snprintf(want, sizeof(want), "%s", prev.name);
			break;
		}
		prev2 = prev;
		prev = cur;
	}
	if (f)
		fclose(f);

	CHECK_EQ_INT(symbols_new(&s), 0);
	if (want_addr) {
		CHECK_EQ_INT(symbols_resolve(s, getpid(), want_addr + 1, &si), 0);
		CHECK_EQ_INT(si.kind, SYMBOL_KERNEL);
		CHECK_STR(si.name, want);
		CHECK_STR(si.dso, "[kernel.kallsyms]");
		CHECK_EQ_INT(si.offset, 1);
	} else {
		fprintf(stderr, "note: /proc/kallsyms hides addresses; checking the fallback only\n");
		rc = symbols_resolve(s, getpid(), 0xffffffff81000000ULL, &si);
		CHECK_EQ_INT(rc, -ENOENT);
		CHECK_EQ_INT(si.kind, SYMBOL_KERNEL);
		CHECK_STR(si.name, "[kernel]");
	}
	/* a perf callchain context marker is no address */
	CHECK_EQ_INT(symbols_resolve(s, getpid(), (uint64_t)-128, &si), -ENOENT);
	CHECK_EQ_INT(si.kind, SYMBOL_UNKNOWN);
	symbols_free(s);
}

/* /tmp/perf-PID.map is anyone's to plant: a symlink there (to a file of
 * root's, say), a file of another user's, or, read as the target's user,
 * a file they cannot read, names nothing (issue 22). */
static void test_jit_map_planted(void)
{
	char path[64], secret[] = "/tmp/mfu-test-jit-XXXXXX", file[PATH_MAX];
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	uint8_t *code = mmap(NULL, page, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t base = ptr_addr(code);
	struct passwd *pw = getpwnam("nobody");
	struct asuser nobody;
	struct symbols *s;
	struct symbol_info si;
	FILE *f;

	CHECK(code != MAP_FAILED && mkdtemp(secret) != NULL);
	if (code == MAP_FAILED)
		return;
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	snprintf(file, sizeof(file), "%s/map", secret);
	f = fopen(file, "w");
	CHECK(f != NULL);
	if (!f)
		return;
	fprintf(f, "%llx 40 secret_name\n", (unsigned long long)base);
	fclose(f);
	chmod(file, 0600);

	/* a symlink at the name: not followed */
	unlink(path);
	CHECK_EQ_INT(symlink(file, path), 0);
	CHECK_EQ_INT(symbols_new(&s), 0);
	CHECK_EQ_INT(symbols_add_proc_maps(s, getpid()), 0);
	CHECK_EQ_INT(symbols_resolve(s, getpid(), base + 0x10, &si), -ENOENT);
	CHECK_STR(si.name, "[unknown]");
	symbols_free(s);
	unlink(path);

	/* another user's file: not the JIT's (as perf decides) */
	CHECK_EQ_INT(link(file, path) == 0 || rename(file, path) == 0 ? 0 : -1, 0);
	unlink(file);
	if (geteuid() == 0) {
		CHECK_EQ_INT(chown(path, 12345, 12345), 0);
		CHECK_EQ_INT(symbols_new(&s), 0);
		CHECK_EQ_INT(symbols_add_proc_maps(s, getpid()), 0);
		CHECK_EQ_INT(symbols_resolve(s, getpid(), base + 0x10, &si), -ENOENT);
		symbols_free(s);
		CHECK_EQ_INT(chown(path, 0, 0), 0);
	}
	/* read as the target's user (mfu-record under sudo): root's 0600 file
	 * stays closed; as root (no owner) it is read */
	if (geteuid() == 0 && pw) {
		asuser_init(&nobody, pw->pw_uid, pw->pw_gid, pw->pw_name);
		asuser_set_owner(&nobody);
		CHECK_EQ_INT(symbols_new(&s), 0);
		CHECK_EQ_INT(symbols_add_proc_maps(s, getpid()), 0);
		CHECK_EQ_INT(symbols_resolve(s, getpid(), base + 0x10, &si), -ENOENT);
		symbols_free(s);
		asuser_set_owner(NULL);
	}
	CHECK_EQ_INT(symbols_new(&s), 0);
	CHECK_EQ_INT(symbols_add_proc_maps(s, getpid()), 0);
	CHECK_EQ_INT(symbols_resolve(s, getpid(), base + 0x10, &si), 0);
	CHECK_STR(si.name, "secret_name");
	symbols_free(s);
	unlink(path);
	rmdir(secret);
	munmap(code, page);
}

/* JIT: anonymous executable memory, named through /tmp/perf-PID.map. */
static void test_jit(void)
{
	char path[64];
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	uint8_t *code = mmap(NULL, 2 * page, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t base = ptr_addr(code);
	struct symbols *s;
	struct symbol_info si;
	FILE *f;

	CHECK(code != MAP_FAILED);
	if (code == MAP_FAILED)
		return;
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	f = fopen(path, "w");
	CHECK(f != NULL);
	if (!f)
		return;
	fprintf(f, "%llx 40 jit_alpha\n", (unsigned long long)base);
	fprintf(f, "%llx 20 _ZN3foo3barEi\n", (unsigned long long)base + 0x40);
	fprintf(f, "this line is garbage\n");
	fprintf(f, "0x%llx 10 LazyCompile:~old code\n", (unsigned long long)base + 0x100);
	fprintf(f, "%llx 10 LazyCompile:~new code\n", (unsigned long long)base + 0x100);
	fprintf(f, "1000 10 orphan\n"); /* an address no mapping covers */
	fprintf(f, "%llx 8", (unsigned long long)base + 0x200); /* cut short */
	fclose(f);

	CHECK_EQ_INT(symbols_new(&s), 0);
	CHECK_EQ_INT(symbols_add_proc_maps(s, getpid()), 0);

	CHECK_EQ_INT(symbols_resolve(s, getpid(), base + 0x10, &si), 0);
	CHECK_EQ_INT(si.kind, SYMBOL_JIT);
	CHECK_STR(si.dso, "//anon");
	CHECK_STR(si.name, "jit_alpha");
	CHECK_EQ_INT(si.offset, 0x10);
	CHECK_EQ_INT(si.dso_addr, 0x10);

	CHECK_EQ_INT(symbols_resolve(s, getpid(), base + 0x48, &si), 0);
	CHECK_STR(si.name, "foo::bar(int)");
	CHECK_EQ_INT(si.offset, 8);

	CHECK_EQ_INT(symbols_resolve(s, getpid(), base + 0x105, &si), 0);
	CHECK_STR(si.name, "LazyCompile:~new code");

	/* inside the anonymous mapping but not in the perf map */
	CHECK_EQ_INT(symbols_resolve(s, getpid(), base + 0x800, &si), -ENOENT);
	CHECK_EQ_INT(si.kind, SYMBOL_JIT);
	CHECK_STR(si.dso, "//anon");
	CHECK_STR(si.name, "[unknown]");
	CHECK_EQ_INT(symbols_resolve(s, getpid(), base + 0x203, &si), -ENOENT);

	/* no mapping, but the JIT says it put code there */
	CHECK_EQ_INT(symbols_resolve(s, getpid(), 0x1004, &si), 0);
	CHECK_EQ_INT(si.kind, SYMBOL_JIT);
	CHECK_STR(si.name, "orphan");
	CHECK_STR(si.dso, path);
	symbols_free(s);
	unlink(path);
	munmap(code, 2 * page);

	/* the other names of anonymous executable memory, in a process without a perf map */
	{
		static const struct {
			int line;
			const char *path;
			enum symbol_kind kind;
			const char *dso;
		} rows[] = {
			{ __LINE__, "", SYMBOL_JIT, "//anon" },
			{ __LINE__, "//anon", SYMBOL_JIT, "//anon" },
			{ __LINE__, "[anon:v8 code]", SYMBOL_JIT, "[anon:v8 code]" },
			{ __LINE__, "/memfd:jit-cache (deleted)", SYMBOL_JIT, "/memfd:jit-cache (deleted)" },
			{ __LINE__, "[heap]", SYMBOL_JIT, "[heap]" },
			{ __LINE__, "[vsyscall]", SYMBOL_USER, "[vsyscall]" },
		};
		CHECK_EQ_INT(symbols_new(&s), 0);
		for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
			uint64_t start = 0x10000000ULL + i * 0x100000;
			CHECK_ROW(symbols_add_map(s, NO_PID, start, 0x1000, 0, rows[i].path, 1) == 0, rows[i].line);
			CHECK_ROW(symbols_resolve(s, NO_PID, start + 0x20, &si) == -ENOENT, rows[i].line);
			CHECK_ROW(si.kind == rows[i].kind, rows[i].line);
			CHECK_ROW(strcmp(si.dso, rows[i].dso) == 0, rows[i].line);
			CHECK_ROW(strcmp(si.name, "[unknown]") == 0, rows[i].line);
			CHECK_ROW(si.dso_addr == 0x20, rows[i].line);
		}
		/* nothing mapped there at all */
		CHECK_EQ_INT(symbols_resolve(s, NO_PID, 0x5000, &si), -ENOENT);
		CHECK_EQ_INT(si.kind, SYMBOL_UNKNOWN);
		CHECK_STR(si.dso, "[unknown]");
		symbols_free(s);
	}
}

static int copy_file(const char *from, const char *to)
{
	char buf[65536];
	int in = open(from, O_RDONLY), out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0755);
	ssize_t n;
	int err = in < 0 || out < 0;

	while (!err && (n = read(in, buf, sizeof(buf))) > 0)
		err = write(out, buf, (size_t)n) != n;
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	return err ? -1 : 0;
}

/* A library deleted after its mapping was recorded, one replaced by another
 * file, and a file that is not ELF: "[unknown]" with the DSO name. */
static void test_missing(void)
{
	char dir[] = "/tmp/mfu-symtest-XXXXXX", lib[PATH_MAX], text[PATH_MAX];
	struct symbols *before, *loaded, *replaced, *after;
	struct symbol_info si;
	Dl_info dl;
	void *h, *fn;
	FILE *f;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(lib, sizeof(lib), "%s/libsymtest.so", dir);
	snprintf(text, sizeof(text), "%s/not-elf.so", dir);
	/* a copy of libelf under a new name: loadable, with a known export */
	h = dlopen("libelf.so.1", RTLD_NOW | RTLD_NOLOAD);
	fn = h ? dlsym(h, "elf_version") : NULL;
	CHECK(fn && dladdr(fn, &dl));
	if (h)
		dlclose(h);
	if (!fn)
		return;
	CHECK_EQ_INT(copy_file(dl.dli_fname, lib), 0);
	h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	CHECK(h != NULL);
	if (!h)
		return;
	fn = dlsym(h, "elf_version");

	CHECK_EQ_INT(symbols_new(&before), 0);
	CHECK_EQ_INT(symbols_new(&loaded), 0);
	CHECK_EQ_INT(symbols_new(&replaced), 0);
	CHECK_EQ_INT(symbols_add_proc_maps(before, getpid()), 0);
	CHECK_EQ_INT(symbols_add_proc_maps(loaded, getpid()), 0);
	CHECK_EQ_INT(symbols_add_proc_maps(replaced, getpid()), 0);
	CHECK_EQ_INT(symbols_resolve(loaded, getpid(), ptr_addr(fn), &si), 0);
	CHECK_STR(si.name, "elf_version");
	CHECK_STR(si.dso, lib);

	CHECK_EQ_INT(unlink(lib), 0);
	/* recorded while the file was there, resolved after it went */
	CHECK_EQ_INT(symbols_resolve(before, getpid(), ptr_addr(fn), &si), -ENOENT);
	CHECK_EQ_INT(si.kind, SYMBOL_USER);
	CHECK_STR(si.dso, lib);
	CHECK_STR(si.name, "[unknown]");
	/* already read: still resolves */
	CHECK_EQ_INT(symbols_resolve(loaded, getpid(), ptr_addr(fn) + 2, &si), 0);
	CHECK_STR(si.name, "elf_version");
	/* recorded after it went: the kernel says "(deleted)" */
	CHECK_EQ_INT(symbols_new(&after), 0);
	CHECK_EQ_INT(symbols_add_proc_maps(after, getpid()), 0);
	CHECK_EQ_INT(symbols_resolve(after, getpid(), ptr_addr(fn), &si), -ENOENT);
	CHECK_STR(si.dso, lib);
	CHECK_STR(si.name, "[unknown]");
	/* a different file now at the same path: not trusted */
	CHECK_EQ_INT(copy_file(dl.dli_fname, lib), 0);
	CHECK_EQ_INT(symbols_resolve(replaced, getpid(), ptr_addr(fn), &si), -ENOENT);
	CHECK_STR(si.dso, lib);
	CHECK_STR(si.name, "[unknown]");

	/* two files, one build: the second reuses the first one's tables */
	{
		struct symbols *twins;
		struct symbols_stats st;
		Dl_info copy;
		uint64_t off;

		CHECK(dladdr(fn, &copy) != 0);
		off = ptr_addr(fn) - ptr_addr(copy.dli_fbase);
		CHECK_EQ_INT(symbols_new(&twins), 0);
		CHECK_EQ_INT(symbols_add_map(twins, NO_PID, 0x10000000, 0x100000, 0, dl.dli_fname, 1), 0);
		CHECK_EQ_INT(symbols_add_map(twins, NO_PID, 0x20000000, 0x100000, 0, lib, 1), 0);
		CHECK_EQ_INT(symbols_resolve(twins, NO_PID, 0x10000000 + off, &si), 0);
		CHECK_STR(si.name, "elf_version");
		CHECK_EQ_INT(symbols_resolve(twins, NO_PID, 0x20000000 + off + 1, &si), 0);
		CHECK_STR(si.name, "elf_version");
		CHECK_STR(si.dso, lib);
		CHECK_EQ_INT(si.offset, 1);
		symbols_get_stats(twins, &st);
		CHECK_EQ_INT(st.dsos, 2);
		CHECK_EQ_INT(st.dsos_opened, 2);
		CHECK_EQ_INT(st.dsos_shared, 1);
		symbols_free(twins);
	}

	/* not an ELF file; the DSO address is then the file offset */
	f = fopen(text, "w");
	CHECK(f != NULL);
	if (f) {
		fputs("not an ELF file\n", f);
		fclose(f);
	}
	CHECK_EQ_INT(symbols_add_map(after, NO_PID, 0x400000, 0x3000, 0x1000, text, 1), 0);
	CHECK_EQ_INT(symbols_resolve(after, NO_PID, 0x401234, &si), -ENOENT);
	CHECK_EQ_INT(si.kind, SYMBOL_USER);
	CHECK_STR(si.dso, text);
	CHECK_STR(si.name, "[unknown]");
	CHECK_EQ_INT(si.dso_addr, 0x2234);
	/* a file that never existed */
	CHECK_EQ_INT(symbols_add_map(after, NO_PID, 0x800000, 0x1000, 0, "/nonexistent/libgone.so", 1), 0);
	CHECK_EQ_INT(symbols_resolve(after, NO_PID, 0x800010, &si), -ENOENT);
	CHECK_STR(si.dso, "/nonexistent/libgone.so");
	CHECK_STR(si.name, "[unknown]");

	symbols_free(before);
	symbols_free(loaded);
	symbols_free(replaced);
	symbols_free(after);
	dlclose(h);
	unlink(lib);
	unlink(text);
	rmdir(dir);
}

/* Maps read from a live child, resolved after it has exited. */
static void test_exited(void)
{
	void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	void *fn = libc ? dlsym(libc, "getpid") : NULL;
	struct symbols *s;
	struct symbol_info si;
	int fds[2], status;
	char c;
	pid_t child;

	CHECK(fn != NULL);
	CHECK_EQ_INT(pipe(fds), 0);
	child = fork();
	if (child == 0) {
		close(fds[1]);
		(void)!read(fds[0], &c, 1); /* until the parent has read our maps */
		_exit(0);
	}
	close(fds[0]);
	CHECK_EQ_INT(symbols_new(&s), 0);
	CHECK_EQ_INT(symbols_add_proc_maps(s, child), 0);
	close(fds[1]);
	CHECK_EQ_INT(waitpid(child, &status, 0), child);
	CHECK_EQ_INT(symbols_add_proc_maps(s, child), -ENOENT);
	CHECK_EQ_INT(symbols_resolve(s, child, ptr_addr(fn), &si), 0);
	CHECK_STR(si.name, "getpid");
	/* fork: the child inherits; exec: its maps go */
	CHECK_EQ_INT(symbols_fork(s, child, NO_PID), 0);
	CHECK_EQ_INT(symbols_resolve(s, NO_PID, ptr_addr(fn), &si), 0);
	CHECK_STR(si.name, "getpid");
	symbols_exec(s, NO_PID);
	CHECK_EQ_INT(symbols_resolve(s, NO_PID, ptr_addr(fn), &si), -ENOENT);
	CHECK_EQ_INT(si.kind, SYMBOL_UNKNOWN);
	symbols_free(s);
	if (libc)
		dlclose(libc);
}

/* One file in many processes and under two paths is read once; repeated
 * IPs come from the cache; a new mapping cuts older ones. */
static void test_sharing(void)
{
	void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	void *fn = libc ? dlsym(libc, "getpid") : NULL;
	struct symbols_stats st;
	struct symbols *s;
	struct symbol_info si;
	Dl_info dl;
	char real[PATH_MAX], alias[PATH_MAX];
	uint64_t off;

	CHECK(fn && dladdr(fn, &dl) && realpath(dl.dli_fname, real));
	if (!fn)
		return;
	/* /usr/lib/... and /lib/... are one file on a merged-/usr system */
	snprintf(alias, sizeof(alias), "%s", strncmp(real, "/usr/", 5) == 0 ? real + 4 : real);
	off = ptr_addr(fn) - ptr_addr(dl.dli_fbase);

	CHECK_EQ_INT(symbols_new(&s), 0);
	for (int pid = 1000; pid < 1100; pid++) {
		/* the whole file mapped at a per-process base */
		uint64_t base = 0x7f0000000000ULL + (uint64_t)pid * 0x1000000;
		CHECK_EQ_INT(symbols_add_map(s, pid, base, 0x800000, 0, pid % 2 ? real : alias, 1), 0);
	}
	for (int pid = 1000; pid < 1100; pid++) {
		uint64_t base = 0x7f0000000000ULL + (uint64_t)pid * 0x1000000;
		CHECK_EQ_INT(symbols_resolve(s, pid, base + off, &si), 0);
	}
	CHECK_STR(si.name, "getpid");
	symbols_get_stats(s, &st);
	CHECK_EQ_INT(st.procs, 100);
	CHECK_EQ_INT(st.dsos, 1);
	CHECK_EQ_INT(st.dsos_opened, 1);
	CHECK_EQ_INT(st.lookups, 100);
	CHECK_EQ_INT(st.cache_hits, 99);

	/* cut a hole: [base, +0x1000) file, [+0x1000, +0x2000) anon, rest file at the right offset */
	CHECK_EQ_INT(symbols_add_map(s, 1000, 0x7f0000000000ULL + 1000ULL * 0x1000000 + 0x1000, 0x1000, 0, "//anon", 1), 0);
	CHECK_EQ_INT(symbols_resolve(s, 1000, 0x7f0000000000ULL + 1000ULL * 0x1000000 + 0x1800, &si), -ENOENT);
	CHECK_EQ_INT(si.kind, SYMBOL_JIT);
	CHECK_EQ_INT(symbols_resolve(s, 1000, 0x7f0000000000ULL + 1000ULL * 0x1000000 + off, &si), 0);
	CHECK_STR(si.name, "getpid");
	CHECK_EQ_INT(symbols_resolve(s, 1000, 0x7f0000000000ULL + 1000ULL * 0x1000000 + 0x800, &si), -ENOENT);
	CHECK_EQ_INT(si.kind, SYMBOL_USER);

	/* non-executable mappings are ignored; empty ones refused */
	CHECK_EQ_INT(symbols_add_map(s, 2000, 0x1000, 0x1000, 0, "//anon", 0), 0);
	CHECK_EQ_INT(symbols_resolve(s, 2000, 0x1800, &si), -ENOENT);
	CHECK_EQ_INT(si.kind, SYMBOL_UNKNOWN);
	CHECK_EQ_INT(symbols_add_map(s, 2000, 0x1000, 0, 0, "//anon", 1), -EINVAL);
	CHECK_EQ_INT(symbols_add_map(s, 2000, UINT64_MAX - 10, 0x1000, 0, "//anon", 1), -EINVAL);
	CHECK_EQ_INT(symbols_add_proc_maps(s, -1), -ENOENT);
	symbols_free(s);
	symbols_free(NULL);
	if (libc)
		dlclose(libc);
}

int main(void)
{
	test_self();
	test_line();
	test_libc();
	test_cxx();
	test_vdso();
	test_kernel();
	test_jit();
	test_jit_map_planted();
	test_missing();
	test_exited();
	test_sharing();
	return check_status();
}
