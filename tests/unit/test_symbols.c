/* Symbols: resolve IPs of this test binary, libc, libstdc++ (a mangled C++
 * name), the vdso, the kernel, JIT code described by a perf map, anonymous
 * memory, a process that has exited, a DSO deleted after its mapping was
 * recorded, and a small library stripped the ways distributions strip
 * theirs (symbols_fixture/: .dynsym only, a debug file under a debug root,
 * MiniDebugInfo, PLT stubs). The truth comes from dladdr/dlsym, the
 * function pointers themselves, __LINE__, /proc/kallsyms and objdump. */
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

#include <gelf.h>

#include "asuser.h"
#include "check.h"
#include "record/symbols/symbols.h"
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

/* ---- stripped libraries (symbols_fixture/, make-fixtures.sh) ---- */

static char fixture_dir[PATH_MAX + 32];

/* The fixture directory next to this test, or NULL when it was not built
 * (a tool missing: the cases that need it say so and are skipped). */
static const char *fixture(void)
{
	char exe[PATH_MAX], probe[PATH_MAX + 64];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	char *slash;

	if (n <= 0)
		return NULL;
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (!slash)
		return NULL;
	*slash = '\0';
	snprintf(fixture_dir, sizeof(fixture_dir), "%s/symbols_fixture", exe);
	snprintf(probe, sizeof(probe), "%s/libsymfix-mini.so", fixture_dir);
	if (access(probe, R_OK) != 0) {
		fprintf(stderr, "symbols: %s not built (objcopy, strip, objdump, nm or xz missing): "
				"the stripped-library cases are skipped\n", probe);
		return NULL;
	}
	return fixture_dir;
}

struct symfix {
	void *h;
	uint64_t bias;     /* load address: IP - ELF address */
	uintptr_t fn[4];   /* symfix_one, symfix_two, symfix_nosize, symfix_hidden_asm */
	uint64_t exported; /* symfix_exported */
	char path[PATH_MAX];
};

static int symfix_open(struct symfix *f, const char *path)
{
	void (*addrs)(uintptr_t *);
	struct link_map *lm = NULL;
	void *sym;

	memset(f, 0, sizeof(*f));
	if (!realpath(path, f->path))
		return -1;
	f->h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!f->h) {
		fprintf(stderr, "  dlopen %s: %s\n", path, dlerror());
		return -1;
	}
	sym = dlsym(f->h, "symfix_addrs");
	memcpy(&addrs, &sym, sizeof(sym));
	if (!sym || dlinfo(f->h, RTLD_DI_LINKMAP, &lm) != 0 || !lm) {
		dlclose(f->h);
		return -1;
	}
	addrs(f->fn);
	f->bias = lm->l_addr;
	f->exported = ptr_addr(dlsym(f->h, "symfix_exported"));
	return 0;
}

/* "libsymfix-stripped.so+0x112f": the DSO's file name and the ELF address */
static void frame_name(char *buf, size_t len, const char *path, uint64_t vaddr)
{
	const char *base = strrchr(path, '/');
	snprintf(buf, len, "%s+%#llx", base ? base + 1 : path, (unsigned long long)vaddr);
}

/* The ELF address of section @name in @path, or 0. */
static uint64_t section_addr(const char *path, const char *name)
{
	int fd = open(path, O_RDONLY);
	uint64_t addr = 0;
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	Elf *elf;

	if (fd < 0)
		return 0;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	while (elf && elf_getshdrstrndx(elf, &shstrndx) == 0 && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *n;
		if (gelf_getshdr(scn, &sh) && (n = elf_strptr(elf, shstrndx, sh.sh_name)) && strcmp(n, name) == 0)
			addr = sh.sh_addr;
	}
	if (elf)
		elf_end(elf);
	close(fd);
	return addr;
}

/* Internal functions of a stripped library (only .dynsym is left) are
 * told apart by their .eh_frame bounds; the exported symbol below them is
 * not their name; an exported symbol without a size stops where the next
 * function starts. */
static void test_stripped(void)
{
	char path[PATH_MAX + 64], want[PATH_MAX + 32], one[PATH_MAX + 32];
	const char *dir = fixture();
	struct symfix f, ref;
	struct symbols *s;
	struct symbol_info si;

	if (!dir)
		return;
	snprintf(path, sizeof(path), "%s/libsymfix-stripped.so", dir);
	CHECK_EQ_INT(symfix_open(&f, path), 0);
	snprintf(path, sizeof(path), "%s/libsymfix.so", dir);
	CHECK_EQ_INT(symfix_open(&ref, path), 0);
	if (!f.h || !ref.h)
		return;
	CHECK_EQ_INT(symbols_new(&s), 0);
	CHECK_EQ_INT(symbols_add_proc_maps(s, getpid()), 0);

	/* symfix_one: its start, and 3 bytes in */
	frame_name(one, sizeof(one), f.path, f.fn[0] - f.bias);
	CHECK_EQ_INT(symbols_resolve(s, getpid(), f.fn[0], &si), 0);
	CHECK_STR(si.name, one);
	CHECK_EQ_INT(si.source, SYMBOL_FROM_EH_FRAME);
	CHECK_EQ_INT(si.offset, 0);
	CHECK_EQ_INT(si.dso_addr, f.fn[0] - f.bias);
	CHECK(same_path(si.dso, f.path));
	CHECK_EQ_INT(symbols_resolve(s, getpid(), f.fn[0] + 3, &si), 0);
	CHECK_STR(si.name, one);
	CHECK_EQ_INT(si.offset, 3);
	/* symfix_two, its neighbour: another name */
	frame_name(want, sizeof(want), f.path, f.fn[1] - f.bias);
	CHECK_EQ_INT(symbols_resolve(s, getpid(), f.fn[1] + 1, &si), 0);
	CHECK_STR(si.name, want);
	CHECK(strcmp(si.name, one) != 0);
	CHECK_EQ_INT(si.offset, 1);
	/* the last byte before symfix_exported is still symfix_two's, and
	 * symfix_exported is itself */
	CHECK_EQ_INT(symbols_resolve(s, getpid(), f.exported - 1, &si), 0);
	CHECK_STR(si.name, want);
	CHECK_EQ_INT(symbols_resolve(s, getpid(), f.exported, &si), 0);
	CHECK_STR(si.name, "symfix_exported");
	CHECK_EQ_INT(si.source, SYMBOL_FROM_TABLE);
	/* an exported symbol of size 0 (assembly without .size) does not
	 * run over the hidden function after it */
	CHECK_EQ_INT(symbols_resolve(s, getpid(), f.fn[2], &si), 0);
	CHECK_STR(si.name, "symfix_nosize");
	frame_name(want, sizeof(want), f.path, f.fn[3] - f.bias);
	CHECK_EQ_INT(symbols_resolve(s, getpid(), f.fn[3] + 1, &si), 0);
	CHECK_STR(si.name, want);
	CHECK_EQ_INT(si.offset, 1);

	/* .init is _init, as .symtab would say */
	CHECK(section_addr(f.path, ".init") != 0);
	CHECK_EQ_INT(symbols_resolve(s, getpid(), f.bias + section_addr(f.path, ".init") + 1, &si), 0);
	CHECK_STR(si.name, "_init");
	CHECK_EQ_INT(si.offset, 1);

	/* the same code not stripped: the real names (a copy with the same
	 * build ID shares the tables of the first one read, so a resolver of
	 * its own) */
	symbols_free(s);
	CHECK_EQ_INT(symbols_new(&s), 0);
	CHECK_EQ_INT(symbols_add_proc_maps(s, getpid()), 0);
	CHECK_EQ_INT(symbols_resolve(s, getpid(), ref.fn[0] + 3, &si), 0);
	CHECK_STR(si.name, "symfix_one");
	CHECK_EQ_INT(si.source, SYMBOL_FROM_TABLE);
	CHECK_EQ_INT(symbols_resolve(s, getpid(), ref.fn[3] + 1, &si), 0);
	CHECK_STR(si.name, "symfix_hidden_asm");
	symbols_free(s);
	dlclose(f.h);
	dlclose(ref.h);
}

/* PLT stubs are "foo@plt", at the addresses objdump gives them: lazy PLT
 * (.plt), .plt.got, and an IBT PLT (.plt.sec, and the lazy .plt behind
 * it) when the toolchain made one; the stub of an IFUNC of the library's
 * own, whose GOT slot an IRELATIVE relocation fills, "*ABS*+0xADDR@plt". */
static void test_plt(void)
{
	static const char *const libs[][2] = {
		{ "libsymfix.so", "symfix.plt" },
		{ "libsymfix-ibt.so", "symfix-ibt.plt" },
	};
	const char *dir = fixture();

	if (!dir)
		return;
	for (size_t i = 0; i < ARRAY_SIZE(libs); i++) {
		char path[PATH_MAX + 64], line[512];
		struct symfix f;
		struct symbols *s;
		int stubs = 0, getpid_stub = 0, ifunc_stub = 0;
		FILE *truth;

		snprintf(path, sizeof(path), "%s/%s", dir, libs[i][0]);
		CHECK_EQ_INT(symfix_open(&f, path), 0);
		snprintf(path, sizeof(path), "%s/%s", dir, libs[i][1]);
		truth = fopen(path, "r");
		CHECK(truth != NULL);
		if (!f.h || !truth) {
			if (truth)
				fclose(truth);
			continue;
		}
		CHECK_EQ_INT(symbols_new(&s), 0);
		CHECK_EQ_INT(symbols_add_proc_maps(s, getpid()), 0);
		while (fgets(line, sizeof(line), truth)) {
			unsigned long long vaddr;
			char name[256];
			struct symbol_info si;

			if (sscanf(line, "%llx %255s", &vaddr, name) != 2)
				continue;
			stubs++;
			getpid_stub += strcmp(name, "getpid@plt") == 0;
			ifunc_stub += strncmp(name, "*ABS*+0x", 8) == 0;
			CHECK_EQ_INT(symbols_resolve(s, getpid(), f.bias + vaddr, &si), 0);
			CHECK_STR(si.name, name);
			CHECK_EQ_INT(si.source, SYMBOL_FROM_PLT);
			CHECK_EQ_INT(si.offset, 0);
			/* inside the stub (8 bytes at least) */
			CHECK_EQ_INT(symbols_resolve(s, getpid(), f.bias + vaddr + 6, &si), 0);
			CHECK_STR(si.name, name);
			CHECK_EQ_INT(si.offset, 6);
		}
		fclose(truth);
		CHECK(stubs >= 3);
		CHECK_EQ_INT(getpid_stub, 1);
		/* the library's own IFUNC: an IRELATIVE slot, no symbol */
		CHECK_EQ_INT(ifunc_stub, 1);
		symbols_free(s);
		dlclose(f.h);
	}
}

static int copy_to(const char *from, const char *dir, const char *name, char *out, size_t outlen)
{
	if ((size_t)snprintf(out, outlen, "%s/%s", dir, name) >= outlen)
		return -1;
	return copy_file(from, out);
}

static int mkdirs(const char *path)
{
	char buf[PATH_MAX];

	snprintf(buf, sizeof(buf), "%s", path);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0755) != 0 && errno != EEXIST)
			return -1;
		*p = '/';
	}
	return mkdir(buf, 0755) != 0 && errno != EEXIST ? -1 : 0;
}

/* The build ID of @path as lowercase hex, or "" */
static void build_id_hex(const char *path, char *out, size_t len)
{
	int fd = open(path, O_RDONLY);
	Elf *elf;
	Elf_Scn *scn = NULL;

	out[0] = '\0';
	if (fd < 0)
		return;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	while (elf && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		GElf_Nhdr nh;
		Elf_Data *d;
		size_t off = 0, noff, doff;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE || !(d = elf_getdata(scn, NULL)))
			continue;
		while ((off = gelf_getnote(d, off, &nh, &noff, &doff)) > 0) {
			if (nh.n_type != NT_GNU_BUILD_ID || nh.n_namesz != 4 ||
			    memcmp((char *)d->d_buf + noff, "GNU", 4) != 0 || nh.n_descsz * 2 + 1 > len)
				continue;
			for (size_t i = 0; i < nh.n_descsz; i++)
				sprintf(out + 2 * i, "%02x", ((unsigned char *)d->d_buf)[doff + i]);
		}
	}
	if (elf)
		elf_end(elf);
	close(fd);
}

/* A stripped library whose debug file is under a debug root of our own
 * (MFU_DEBUG_DIRS): found by build ID (ROOT/.build-id/xx/yyyy.debug), or
 * through .gnu_debuglink (ROOT/<the library's directory>/symfix.debug), it
 * gives the real names and lines; without it, the .eh_frame names. */
static void test_debug_dirs(void)
{
	const char *dir = fixture();
	char tmp[] = "/tmp/mfu-symdebug-XXXXXX", lib[PATH_MAX + 64], debug[PATH_MAX + 64], libdir[64], root[64],
	     id[128], p[PATH_MAX * 3];
	const char *old = getenv("MFU_DEBUG_DIRS");
	char *saved = old ? strdup(old) : NULL;
	struct symfix f;

	if (!dir)
		return;
	CHECK(mkdtemp(tmp) != NULL);
	snprintf(libdir, sizeof(libdir), "%s/lib", tmp);
	CHECK_EQ_INT(mkdirs(libdir), 0);
	snprintf(p, sizeof(p), "%s/libsymfix-debuglink.so", dir);
	CHECK_EQ_INT(copy_to(p, libdir, "libsymfix.so", lib, sizeof(lib)), 0);
	snprintf(debug, sizeof(debug), "%s/symfix.debug", dir);
	build_id_hex(lib, id, sizeof(id));
	CHECK(strlen(id) > 2);
	CHECK_EQ_INT(symfix_open(&f, lib), 0);
	if (!f.h || strlen(id) <= 2)
		goto out;

	for (int c = 0; c < 3; c++) {
		struct symbols *s;
		struct symbol_info si;
		char want[PATH_MAX + 32];

		/* 0: by build ID; 1: by debuglink under the root; 2: neither */
		snprintf(root, sizeof(root), "%s/root%d", tmp, c);
		CHECK_EQ_INT(mkdirs(root), 0);
		if (c == 0) {
			snprintf(p, sizeof(p), "%s/.build-id/%.2s", root, id);
			CHECK_EQ_INT(mkdirs(p), 0);
			snprintf(p, sizeof(p), "%s/.build-id/%.2s/%s.debug", root, id, id + 2);
			CHECK_EQ_INT(copy_file(debug, p), 0);
		} else if (c == 1) {
			char real[PATH_MAX];
			CHECK(realpath(libdir, real) != NULL);
			snprintf(p, sizeof(p), "%s%s", root, real);
			CHECK_EQ_INT(mkdirs(p), 0);
			snprintf(p, sizeof(p), "%s%s/symfix.debug", root, real);
			CHECK_EQ_INT(copy_file(debug, p), 0);
		}
		/* a relative entry is ignored */
		snprintf(p, sizeof(p), "relative/dir:%s", root);
		setenv("MFU_DEBUG_DIRS", p, 1);
		CHECK_EQ_INT(symbols_new(&s), 0);
		CHECK_EQ_INT(symbols_add_proc_maps(s, getpid()), 0);
		CHECK_EQ_INT(symbols_resolve(s, getpid(), f.fn[0] + 3, &si), 0);
		if (c < 2) {
			CHECK_STR(si.name, "symfix_one");
			CHECK_EQ_INT(si.source, SYMBOL_FROM_TABLE);
			CHECK(ends_with(si.file, "symfix.c"));
			CHECK(si.line > 0);
		} else {
			frame_name(want, sizeof(want), f.path, f.fn[0] - f.bias);
			CHECK_STR(si.name, want);
			CHECK_EQ_INT(si.source, SYMBOL_FROM_EH_FRAME);
			CHECK(si.file == NULL);
		}
		CHECK_EQ_INT(si.offset, 3);
		CHECK(same_path(si.dso, lib));
		symbols_free(s);
	}
	dlclose(f.h);
out:
	if (saved)
		setenv("MFU_DEBUG_DIRS", saved, 1);
	else
		unsetenv("MFU_DEBUG_DIRS");
	free(saved);
	snprintf(p, sizeof(p), "rm -rf '%s'", tmp);
	CHECK_EQ_INT(system(p), 0);
}

/* MiniDebugInfo: .gnu_debugdata, an xz-compressed ELF with the .symtab
 * entries .dynsym lacks (Fedora's binaries have it, Debian's do not).
 * libdwfl merges it when elfutils was built with lzma, as Debian's is. */
static void test_minidebuginfo(void)
{
	const char *dir = fixture();
	char path[PATH_MAX + 64];
	struct symbols *s;
	struct symbol_info si;
	struct symfix f;

	if (!dir)
		return;
	snprintf(path, sizeof(path), "%s/libsymfix-mini.so", dir);
	CHECK_EQ_INT(symfix_open(&f, path), 0);
	if (!f.h)
		return;
	CHECK_EQ_INT(symbols_new(&s), 0);
	CHECK_EQ_INT(symbols_add_proc_maps(s, getpid()), 0);
	CHECK_EQ_INT(symbols_resolve(s, getpid(), f.fn[1] + 2, &si), 0);
	CHECK_STR(si.name, "symfix_two");
	CHECK_EQ_INT(si.source, SYMBOL_FROM_TABLE);
	CHECK_EQ_INT(si.offset, 2);
	CHECK_EQ_INT(symbols_resolve(s, getpid(), f.fn[3], &si), 0);
	CHECK_STR(si.name, "symfix_hidden_asm");
	CHECK_EQ_INT(symbols_resolve(s, getpid(), f.exported, &si), 0);
	CHECK_STR(si.name, "symfix_exported");
	symbols_free(s);
	dlclose(f.h);
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
	test_stripped();
	test_plt();
	test_debug_dirs();
	test_minidebuginfo();
	return check_status();
}
