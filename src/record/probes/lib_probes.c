/* Library calls inside the executable, through tracefs uprobes (lib_probes.h). */
#include "lib_probes.h"
#include "probes_impl.h"
#include "cpumap.h"
#include "libflops.h"
#include "libflops_list.h"
#include "perf_event.h"

#include <sys/mount.h>

#define NFIELDS 5 /* m, n, k, side, lwork */

/* LAPACK's dimensions at the entry: Fortran passes every argument by
 * reference (arguments 7 on at +8(%sp), +16(%sp)...: the kernel reads
 * through the pointer at the hit), LAPACKE by value after the matrix
 * layout. lwork, where the routine has one, tells a workspace query (-1),
 * which does no work; nrhs and ORGQR/ORMQR's k go in k. */
static const char *lapack_args(unsigned op, int lapacke)
{
	switch (op) {
	case LIBFLOPS_GETRF:
		return lapacke ? "m=%si:s32 n=%dx:s32" : "m=+0(%di):s32 n=+0(%si):s32";
	case LIBFLOPS_GETRS:  /* trans, n, nrhs */
		return lapacke ? "n=%dx:s32 k=%cx:s32" : "n=+0(%si):s32 k=+0(%dx):s32";
	case LIBFLOPS_GESV:   /* n, nrhs */
		return lapacke ? "n=%si:s32 k=%dx:s32" : "n=+0(%di):s32 k=+0(%si):s32";
	case LIBFLOPS_GETRI:  /* n, a, lda, ipiv, work, lwork */
		return lapacke ? "n=%si:s32" : "n=+0(%di):s32 lwork=+0(%r9):s32";
	case LIBFLOPS_POTRF:  /* uplo, n */
	case LIBFLOPS_POTRI:
		return lapacke ? "n=%dx:s32" : "n=+0(%si):s32";
	case LIBFLOPS_SYTRF:  /* uplo, n, a, lda, ipiv, work, lwork */
		return lapacke ? "n=%dx:s32" : "n=+0(%si):s32 lwork=+0(+8(%sp)):s32";
	case LIBFLOPS_POTRS:  /* uplo, n, nrhs */
	case LIBFLOPS_POSV:
	case LIBFLOPS_SYTRS:
		return lapacke ? "n=%dx:s32 k=%cx:s32" : "n=+0(%si):s32 k=+0(%dx):s32";
	case LIBFLOPS_SYSV:   /* uplo, n, nrhs, a, lda, ipiv, b, ldb, work, lwork */
		return "n=+0(%si):s32 k=+0(%dx):s32 lwork=+0(+32(%sp)):s32";
	case LIBFLOPS_GEQRF:  /* m, n, a, lda, tau, work, lwork */
		return lapacke ? "m=%si:s32 n=%dx:s32" : "m=+0(%di):s32 n=+0(%si):s32 lwork=+0(+8(%sp)):s32";
	case LIBFLOPS_ORGQR:  /* m, n, k, a, lda, tau, work, lwork */
		return lapacke ? "m=%si:s32 n=%dx:s32 k=%cx:s32"
			       : "m=+0(%di):s32 n=+0(%si):s32 k=+0(%dx):s32 lwork=+0(+16(%sp)):s32";
	case LIBFLOPS_ORMQR:  /* side, trans, m, n, k, a, lda, tau, c, ldc, work, lwork */
		return lapacke ? "side=%si:u8 m=%cx:s32 n=%r8:s32 k=%r9:s32"
			       : "side=+0(%di):u8 m=+0(%dx):s32 n=+0(%cx):s32 k=+0(%r8):s32 lwork=+0(+48(%sp)):s32";
	case LIBFLOPS_TRTRI:  /* uplo, diag, n */
		return lapacke ? "n=%cx:s32" : "n=+0(%dx):s32";
	case LIBFLOPS_TRTRS:  /* uplo, trans, diag, n, nrhs */
		return "n=+0(%cx):s32 k=+0(%r8):s32";
	case LIBFLOPS_GELS:   /* trans, m, n, nrhs, a, lda, b, ldb, work, lwork */
		return lapacke ? "m=%dx:s32 n=%cx:s32 k=%r8:s32"
			       : "m=+0(%si):s32 n=+0(%dx):s32 k=+0(%cx):s32 lwork=+0(+32(%sp)):s32";
	}
	return "";
}

/* The iterative drivers (FLOPs unknown): only lwork, whose -1 makes a
 * call a workspace query, not one of their calls; argument k is at
 * +8(k - 6)(%sp). */
static const char *unknown_args(const char *name)
{
	static const struct {
		const char *base, *args;
	} t[] = {
		{ "syev_", "lwork=+0(+16(%sp)):s32" },  { "heev_", "lwork=+0(+16(%sp)):s32" },
		{ "syevd_", "lwork=+0(+16(%sp)):s32" }, { "heevd_", "lwork=+0(+16(%sp)):s32" },
		{ "syevr_", "lwork=+0(+96(%sp)):s32" }, { "heevr_", "lwork=+0(+96(%sp)):s32" },
		{ "gesvd_", "lwork=+0(+56(%sp)):s32" }, { "gesdd_", "lwork=+0(+48(%sp)):s32" },
		{ "gelsd_", "lwork=+0(+48(%sp)):s32" }, { "gelss_", "lwork=+0(+48(%sp)):s32" },
		{ "gelsy_", "lwork=+0(+48(%sp)):s32" },
	};
	if (!strcmp(name + 1, "geev_")) /* the real one has wr and wi, the complex one w */
		return name[0] == 's' || name[0] == 'd' ? "lwork=+0(+56(%sp)):s32" : "lwork=+0(+48(%sp)):s32";
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (!strcmp(name + 1, t[i].base))
			return t[i].args;
	return "";
}

/* Where each interface keeps the dimensions at the function's entry (x86-64
 * System V): CBLAS passes them by value after the layout and the flags,
 * Fortran by reference (the kernel reads through the pointer at the hit),
 * oneDNN by value as 64-bit integers. The 7th argument of a CBLAS TRMM is
 * on the stack, above the return address. */
static const char *fetch_args(unsigned id)
{
	const struct libflops_func *f = &libflops_funcs[id];
	int cblas = !strncmp(f->name, "cblas_", 6), dnnl = !strncmp(f->name, "dnnl_", 5);

	if (dnnl)
		return id == LIBFLOPS_ID_dnnl_gemm_u8s8s32 || id == LIBFLOPS_ID_dnnl_gemm_s8s8s32
		       ? "m=%cx:s64 n=%r8:s64 k=%r9:s64" : "m=%dx:s64 n=%cx:s64 k=%r8:s64";
	if (f->op == LIBFLOPS_UNKNOWN)
		return unknown_args(f->name);
	if (f->op >= LIBFLOPS_GETRF)
		return lapack_args(f->op, !strncmp(f->name, "LAPACKE_", 8));
	switch (f->op) {
	case LIBFLOPS_GEMM:
		return cblas ? "m=%cx:s32 n=%r8:s32 k=%r9:s32" : "m=+0(%dx):s32 n=+0(%cx):s32 k=+0(%r8):s32";
	case LIBFLOPS_GEMMT:
		return cblas ? "n=%r8:s32 k=%r9:s32" : "n=+0(%cx):s32 k=+0(%r8):s32";
	case LIBFLOPS_SYMM:
		return cblas ? "side=%si:s32 m=%cx:s32 n=%r8:s32" : "side=+0(%di):u8 m=+0(%dx):s32 n=+0(%cx):s32";
	case LIBFLOPS_SYRK:
	case LIBFLOPS_SYR2K:
		return cblas ? "n=%cx:s32 k=%r8:s32" : "n=+0(%dx):s32 k=+0(%cx):s32";
	case LIBFLOPS_TRMM:
		return cblas ? "side=%si:s32 m=%r9:s32 n=+8(%sp):s32" : "side=+0(%di):u8 m=+0(%r8):s32 n=+0(%r9):s32";
	case LIBFLOPS_GEMV:
		return cblas ? "m=%dx:s32 n=%cx:s32" : "m=+0(%si):s32 n=+0(%dx):s32";
	case LIBFLOPS_SYMV:
		return cblas ? "n=%dx:s32" : "n=+0(%si):s32";
	case LIBFLOPS_TRMV:
		return cblas ? "n=%r8:s32" : "n=+0(%cx):s32";
	case LIBFLOPS_GER:
		return cblas ? "m=%si:s32 n=%dx:s32" : "m=+0(%di):s32 n=+0(%si):s32";
	case LIBFLOPS_DOT:
	case LIBFLOPS_AXPY:
	case LIBFLOPS_SCAL:
	case LIBFLOPS_RSCAL:
	case LIBFLOPS_NRM2:
	case LIBFLOPS_ASUM:
	case LIBFLOPS_ROT:
		return cblas ? "n=%di:s32" : "n=+0(%di):s32";
	}
	return "";
}

struct field {
	int present;
	unsigned offset, size;
	int is_signed;
};

struct lp_event {
	unsigned func;             /* libflops id */
	uint64_t offset;           /* in the executable */
	uint64_t id[2];            /* tracepoint ids: entry, return */
	struct field f[NFIELDS];   /* the entry's fetched fields in its raw data */
};

struct lib_probes {
	char group[32];
	char tracefs[64];
	char exe[PATH_MAX];
	struct lp_event *ev;
	size_t nev;
	int *fds;
	size_t nfds;
	void **maps;
	size_t map_len;
	int *cpus;
	int ncpu;
	struct perf_sampler *rings;
	sqlite3_stmt *ins;        /* INSERT INTO lib_hit_raw */
	uint64_t hits, bad;
};

/* ---- the executable's functions ---- */

/* Call @cb for each function of the list that @path defines (from
 * .symtab, else .dynsym): its id and file offset. Returns the number found,
 * or -errno. */
static int each_defined(const char *path, void (*cb)(void *ctx, unsigned id, uint64_t offset), void *ctx)
{
	static const char *const tabs[] = { ".symtab", ".dynsym" };
	struct elf_file f;
	uint8_t seen[LIBFLOPS_NIDS] = { 0 };
	int found = 0, err;

	err = elf_file_open(path, &f, NULL, 0);
	if (err)
		return err;
	for (size_t t = 0; t < 2; t++) {
		GElf_Shdr sh;
		Elf_Scn *scn = find_section(f.elf, tabs[t], &sh);
		Elf_Data *data = scn ? elf_getdata(scn, NULL) : NULL;

		if (!data || !sh.sh_entsize)
			continue;
		for (size_t i = 1; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *name;
			uint64_t off;

			if (!gelf_getsym(data, (int)i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
			    sym.st_shndx == SHN_UNDEF || !sym.st_value)
				continue;
			name = elf_strptr(f.elf, sh.sh_link, sym.st_name);
			if (!name || (name[0] != 'c' && name[0] != 'd' && name[0] != 's' && name[0] != 'z' &&
				      name[0] != 'L'))
				continue;
			for (unsigned id = 0; id < LIBFLOPS_NIDS; id++) {
				if (seen[id] || strcmp(name, libflops_funcs[id].name) ||
				    vaddr_to_offset(&f, sym.st_value, 1, &off))
					continue;
				seen[id] = 1;
				found++;
				if (cb)
					cb(ctx, id, off);
			}
		}
		if (found)
			break; /* the .symtab had them: the .dynsym repeats them */
	}
	elf_file_close(&f);
	return found;
}

int lib_probes_count_in(const char *exe)
{
	int n = each_defined(exe, NULL, NULL);
	return n > 0 ? n : 0;
}

static void add_event(void *ctx, unsigned id, uint64_t offset)
{
	struct lib_probes *lp = ctx;
	lp->ev[lp->nev].func = id;
	lp->ev[lp->nev].offset = offset;
	lp->nev++;
}

/* ---- tracefs ---- */

static int find_tracefs(struct lib_probes *lp, char *why, size_t whylen)
{
	static const char *const dirs[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
	char p[128];

	for (int attempt = 0; attempt < 2; attempt++) {
		for (size_t i = 0; i < 2; i++) {
			strbuf(p, sizeof(p), "%s/uprobe_events", dirs[i]);
			if (access(p, W_OK) == 0) {
				strbuf(lp->tracefs, sizeof(lp->tracefs), "%s", dirs[i]);
				return 0;
			}
		}
		/* as perf does: tracefs is mounted on demand */
		if (attempt == 0 && mount("nodev", dirs[0], "tracefs", 0, NULL) != 0)
			break;
	}
	probes_why(why, whylen, "no writable tracefs uprobe_events (mount -t tracefs nodev /sys/kernel/tracing, "
		   "as root)");
	return -ENOENT;
}

static int write_events(struct lib_probes *lp, const char *line)
{
	char p[128];
	int fd, err = 0;
	size_t len = strlen(line);

	strbuf(p, sizeof(p), "%s/uprobe_events", lp->tracefs);
	fd = open(p, O_WRONLY | O_APPEND | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, line, len) != (ssize_t)len)
		err = -errno;
	close(fd);
	return err;
}

static int read_u64_file(const char *path, uint64_t *v)
{
	char buf[64];
	int err = read_sysfs(path, buf, sizeof(buf));
	return err ? err : safe_atou64(buf, v);
}

/* The entry event's fields m, n, k, side in its format file. */
static int read_format(struct lib_probes *lp, struct lp_event *e)
{
	static const char *const names[NFIELDS] = { "m", "n", "k", "side", "lwork" };
	char path[PATH_MAX], line[256];
	FILE *f;

	strbuf(path, sizeof(path), "%s/events/%s/%s/format", lp->tracefs, lp->group,
	       libflops_funcs[e->func].name);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char type[32], name[32];
		unsigned off, size;
		int sgn;

		if (sscanf(line, " field:%31s %31[^;]; offset:%u; size:%u; signed:%d;", type, name, &off,
			   &size, &sgn) != 5)
			continue;
		for (int i = 0; i < NFIELDS; i++) {
			if (!strcmp(name, names[i]) && (size == 1 || size == 4 || size == 8)) {
				e->f[i] = (struct field){ 1, off, size, sgn };
			}
		}
	}
	fclose(f);
	return 0;
}

static int create_events(struct lib_probes *lp, char *why, size_t whylen)
{
	for (size_t i = 0; i < lp->nev; i++) {
		struct lp_event *e = &lp->ev[i];
		const char *name = libflops_funcs[e->func].name;
		char line[PATH_MAX + 256], path[PATH_MAX];
		int err;

		for (int ret = 0; ret < 2; ret++) {
			strbuf(line, sizeof(line), "%c:%s/%s%s %s:0x%" PRIx64 " %s\n", ret ? 'r' : 'p', lp->group,
			       name, ret ? "_r" : "", lp->exe, e->offset, ret ? "" : fetch_args(e->func));
			err = write_events(lp, line);
			if (err) {
				probes_why(why, whylen, "cannot create the uprobe event for %s in %s: %s", name,
					   lp->exe, strerror(-err));
				return err;
			}
			strbuf(path, sizeof(path), "%s/events/%s/%s%s/id", lp->tracefs, lp->group, name,
			       ret ? "_r" : "");
			err = read_u64_file(path, &e->id[ret]);
			if (err) {
				probes_why(why, whylen, "cannot read %s: %s", path, strerror(-err));
				return err;
			}
		}
		if (read_format(lp, e) != 0) {
			probes_why(why, whylen, "cannot read the format of the uprobe event for %s", name);
			return -EIO;
		}
	}
	return 0;
}

/* ---- perf events ---- */

static int open_events(struct lib_probes *lp, pid_t pid, char *why, size_t whylen)
{
	char buf[4096];
	struct cpumap cm = { 0 };
	int err;

	err = read_sysfs("/sys/devices/system/cpu/online", buf, sizeof(buf));
	if (!err)
		err = cpumap_parse(&cm, buf);
	if (err || cm.n == 0) {
		probes_why(why, whylen, "cannot read the online CPUs");
		cpumap_fini(&cm);
		return err ? err : -ENOENT;
	}
	lp->cpus = cm.cpu;
	lp->ncpu = cm.n;
	cm.cpu = NULL;
	lp->fds = malloc(lp->nev * 2 * (size_t)lp->ncpu * sizeof(*lp->fds));
	lp->maps = calloc((size_t)lp->ncpu, sizeof(*lp->maps));
	if (!lp->fds || !lp->maps)
		return -ENOMEM;
	for (int c = 0; c < lp->ncpu; c++) {
		int leader = -1;
		for (size_t i = 0; i < lp->nev; i++) {
			for (int ret = 0; ret < 2; ret++) {
				struct perf_event_attr attr;
				long fd;

				memset(&attr, 0, sizeof(attr));
				attr.size = sizeof(attr);
				attr.type = PERF_TYPE_TRACEPOINT;
				attr.config = lp->ev[i].id[ret];
				attr.sample_period = 1;
				attr.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
						   PERF_SAMPLE_RAW;
				attr.use_clockid = 1;
				attr.clockid = CLOCK_MONOTONIC;
				/* tracefs events may be inherited (the uprobe PMU's may not) */
				attr.inherit = 1;
				fd = perf_event_open_fd(&attr, pid, lp->cpus[c], -1);
				if (fd < 0) {
					probes_why(why, whylen, "cannot open the uprobe event for %s on CPU %d: %s",
						   libflops_funcs[lp->ev[i].func].name, lp->cpus[c], strerror((int)-fd));
					return (int)fd;
				}
				lp->fds[lp->nfds++] = (int)fd;
				if (leader < 0) {
					leader = (int)fd;
					err = probes_map_ring(leader, 64, &lp->maps[c], &lp->map_len);
				} else if (ioctl((int)fd, PERF_EVENT_IOC_SET_OUTPUT, leader) != 0) {
					err = -errno;
				}
				if (err) {
					probes_why(why, whylen, "cannot map the uprobe events' ring on CPU %d: %s",
						   lp->cpus[c], strerror(-err));
					return err;
				}
			}
		}
	}
	err = perf_ring_open_maps(&lp->rings, lp->maps, lp->cpus, lp->ncpu, lp->map_len);
	if (err)
		probes_why(why, whylen, "cannot read the uprobe events' rings: %s", strerror(-err));
	return err;
}

int lib_probes_open(struct lib_probes **out, const char *exe, pid_t pid, char *why, size_t whylen)
{
	struct lib_probes *lp;
	int n, err;

	*out = NULL;
	n = each_defined(exe, NULL, NULL);
	if (n <= 0)
		return 0;
	if (strpbrk(exe, " \t\n:")) {
		probes_why(why, whylen, "%s: a path with a blank or a colon cannot name a uprobe event", exe);
		return -EINVAL;
	}
	lp = calloc(1, sizeof(*lp));
	if (!lp)
		return -ENOMEM;
	lp->ev = calloc((size_t)n, sizeof(*lp->ev));
	if (!lp->ev) {
		free(lp);
		return -ENOMEM;
	}
	strbuf(lp->group, sizeof(lp->group), "mfu_%d", (int)getpid());
	strbuf(lp->exe, sizeof(lp->exe), "%s", exe);
	each_defined(exe, add_event, lp);
	if (geteuid() != 0) {
		probes_why(why, whylen, "uprobes need root (CAP_SYS_ADMIN)");
		err = -EPERM;
		goto fail;
	}
	err = find_tracefs(lp, why, whylen);
	if (!err)
		err = create_events(lp, why, whylen);
	if (!err)
		err = open_events(lp, pid, why, whylen);
	if (err)
		goto fail;
	*out = lp;
	return 0;
fail:
	lib_probes_free(lp);
	return err;
}

void lib_probes_free(struct lib_probes *lp)
{
	char line[160];

	if (!lp)
		return;
	sqlite3_finalize(lp->ins);
	perf_ring_close(lp->rings);
	for (int c = 0; lp->maps && c < lp->ncpu; c++)
		probes_unmap_ring(lp->maps[c], lp->map_len);
	for (size_t i = 0; i < lp->nfds; i++)
		close(lp->fds[i]);
	/* the events go once no perf event holds them */
	for (size_t i = 0; lp->tracefs[0] && i < lp->nev; i++) {
		for (int ret = 1; ret >= 0; ret--) {
			strbuf(line, sizeof(line), "-:%s/%s%s\n", lp->group, libflops_funcs[lp->ev[i].func].name,
			       ret ? "_r" : "");
			(void)write_events(lp, line);
		}
	}
	free(lp->fds);
	free(lp->maps);
	free(lp->cpus);
	free(lp->ev);
	free(lp);
}

/* ---- hits ---- */

static int64_t field_value(const struct field *f, const uint8_t *raw, uint32_t rawlen)
{
	if (!f->present)
		return 0; /* not an argument of this function's family */
	if (f->offset + f->size > rawlen)
		return -1;
	switch (f->size) {
	case 1:
		return raw[f->offset];
	case 4: {
		int32_t v;
		memcpy(&v, raw + f->offset, 4);
		return f->is_signed ? v : (int64_t)(uint32_t)v;
	}
	default: {
		int64_t v;
		memcpy(&v, raw + f->offset, 8);
		return v;
	}
	}
}

struct drain_ctx {
	struct lib_probes *lp;
	sqlite3 *db;
	int err;
};

static int on_record(void *ctx, const struct perf_event_header *hdr, const void *rec, int cpu)
{
	struct drain_ctx *d = ctx;
	struct lib_probes *lp = d->lp;
	const uint8_t *p = rec;
	size_t len = hdr->size - sizeof(*hdr);
	uint64_t id, time;
	uint32_t pid, tid, rawlen;

	(void)cpu;
	if (hdr->type != PERF_RECORD_SAMPLE || len < 28)
		return 0;
	memcpy(&id, p, 8);
	memcpy(&pid, p + 8, 4);
	memcpy(&tid, p + 12, 4);
	memcpy(&time, p + 16, 8);
	memcpy(&rawlen, p + 24, 4);
	if (28 + (size_t)rawlen > len) {
		lp->bad++;
		return 0;
	}
	/* the sample's id is the event's; its tracepoint id is in the raw
	 * data's first field (common_type, u16) */
	uint16_t type;
	if (rawlen < 2) {
		lp->bad++;
		return 0;
	}
	memcpy(&type, p + 28, 2);
	(void)id;
	for (size_t i = 0; i < lp->nev; i++) {
		struct lp_event *e = &lp->ev[i];
		int ret = type == (uint16_t)e->id[1];
		double flops = 0;

		if (type != (uint16_t)e->id[0] && !ret)
			continue;
		if (!ret) {
			const uint8_t *raw = p + 28;
			int64_t side = field_value(&e->f[3], raw, rawlen);
			int left = side == 141 || side == 'L' || side == 'l';
			if (e->f[4].present && field_value(&e->f[4], raw, rawlen) == -1)
				flops = -1; /* a workspace query: no work, no call (pair_calls) */
			else
				flops = (double)libflops_count(libflops_funcs[e->func].op, libflops_funcs[e->func].cplx,
							       left, field_value(&e->f[0], raw, rawlen),
							       field_value(&e->f[1], raw, rawlen),
							       field_value(&e->f[2], raw, rawlen));
		}
		sqlite3_bind_int64(lp->ins, 1, (sqlite3_int64)time);
		sqlite3_bind_int(lp->ins, 2, (int)pid);
		sqlite3_bind_int(lp->ins, 3, (int)tid);
		sqlite3_bind_int(lp->ins, 4, (int)e->func);
		sqlite3_bind_int(lp->ins, 5, ret);
		if (!ret && flops >= 0 && libflops_funcs[e->func].op == LIBFLOPS_UNKNOWN)
			sqlite3_bind_null(lp->ins, 6); /* FLOPs unknown */
		else
			sqlite3_bind_double(lp->ins, 6, flops);
		if (sqlite3_step(lp->ins) != SQLITE_DONE) {
			d->err = -EIO;
			sqlite3_reset(lp->ins);
			return 1;
		}
		sqlite3_reset(lp->ins);
		lp->hits++;
		return 0;
	}
	lp->bad++;
	return 0;
}

int lib_probes_drain(struct lib_probes *lp, sqlite3 *db)
{
	struct drain_ctx d = { lp, db, 0 };

	if (!lp)
		return 0;
	if (!lp->ins) {
		if (sqlite3_exec(db, "CREATE TEMP TABLE IF NOT EXISTS lib_hit_raw (time_ns INTEGER, pid INTEGER,"
				 " tid INTEGER, func INTEGER, ret INTEGER, flops REAL)", NULL, NULL, NULL) != SQLITE_OK ||
		    sqlite3_prepare_v2(db, "INSERT INTO lib_hit_raw VALUES (?,?,?,?,?,?)", -1, &lp->ins, NULL) !=
			    SQLITE_OK)
			return -EIO;
	}
	int n = perf_ring_drain(lp->rings, on_record, &d);
	return d.err ? d.err : n < 0 ? n : 0;
}

/* ---- the end: calls, then steps and phases ---- */

static int exec_sql(sqlite3 *db, const char *sql)
{
	return sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK ? 0 : -EIO;
}

/* Pair each thread's entries and returns in time order into the calls
 * that count: those that returned while no other counted call of their
 * thread was running, but workspace queries (flops -1). A function whose
 * FLOPs are unknown (flops NULL) is a call when no counted call encloses
 * it, and does not hide the counted calls it makes (as in the counting
 * library). */
static int pair_calls(sqlite3 *db, uint64_t *calls)
{
	sqlite3_stmt *q = NULL, *ins = NULL;
	struct { int func; double flops; } stack[64];
	const int cap = (int)(sizeof(stack) / sizeof(stack[0]));
	int depth = 0, counted = 0, rc = -EIO;
	int64_t tid = -1;

	if (exec_sql(db, "CREATE TEMP TABLE lib_hit (pid INTEGER, time_ns INTEGER, func INTEGER, flops REAL)") ||
	    sqlite3_prepare_v2(db, "SELECT time_ns, pid, tid, func, ret, flops FROM lib_hit_raw"
			       " ORDER BY tid, time_ns, ret", -1, &q, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, "INSERT INTO lib_hit VALUES (?,?,?,?)", -1, &ins, NULL) != SQLITE_OK)
		goto out;
	while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
		int func = sqlite3_column_int(q, 3), fn;
		int unknown = func >= 0 && (unsigned)func < LIBFLOPS_NIDS && libflops_funcs[func].op == LIBFLOPS_UNKNOWN;
		double flops;

		if (sqlite3_column_int64(q, 2) != tid) {
			tid = sqlite3_column_int64(q, 2);
			depth = counted = 0;
		}
		if (!sqlite3_column_int(q, 4)) {
			/* deeper than any BLAS nests: only the outer calls matter */
			if (depth < cap) {
				stack[depth].func = func;
				stack[depth].flops = sqlite3_column_type(q, 5) == SQLITE_NULL ? 0 : sqlite3_column_double(q, 5);
			}
			depth++;
			counted += !unknown;
			continue;
		}
		if (depth == 0)
			continue; /* a call that began before the events existed */
		depth--;
		if (!unknown && counted > 0)
			counted--;
		fn = depth < cap ? stack[depth].func : func;
		flops = depth < cap ? stack[depth].flops : 0;
		if (counted > 0 || flops < 0)
			continue; /* inside a counted call, or a workspace query */
		sqlite3_bind_int64(ins, 1, sqlite3_column_int64(q, 1));
		sqlite3_bind_int64(ins, 2, sqlite3_column_int64(q, 0));
		sqlite3_bind_int(ins, 3, fn);
		if (unknown)
			sqlite3_bind_null(ins, 4);
		else
			sqlite3_bind_double(ins, 4, flops);
		if (sqlite3_step(ins) != SQLITE_DONE)
			break;
		sqlite3_reset(ins);
		(*calls)++;
	}
	rc = rc == SQLITE_DONE ? 0 : -EIO;
out:
	sqlite3_finalize(q);
	sqlite3_finalize(ins);
	return rc;
}

/* The functions' names and precisions, for the SQL below. */
static int func_table(sqlite3 *db)
{
	sqlite3_stmt *ins = NULL;
	int rc = -EIO;

	if (exec_sql(db, "CREATE TEMP TABLE lib_func (id INTEGER PRIMARY KEY, name TEXT, prec INTEGER,"
		     " precision TEXT)") ||
	    sqlite3_prepare_v2(db, "INSERT INTO lib_func VALUES (?,?,?,?)", -1, &ins, NULL) != SQLITE_OK)
		goto out;
	for (unsigned i = 0; i < libflops_nfuncs; i++) {
		sqlite3_bind_int(ins, 1, (int)i);
		sqlite3_bind_text(ins, 2, libflops_funcs[i].name, -1, SQLITE_STATIC);
		sqlite3_bind_int(ins, 3, libflops_funcs[i].prec);
		sqlite3_bind_text(ins, 4, libflops_prec_name(libflops_funcs[i].prec), -1, SQLITE_STATIC);
		if (sqlite3_step(ins) != SQLITE_DONE)
			goto out;
		sqlite3_reset(ins);
	}
	rc = 0;
out:
	sqlite3_finalize(ins);
	return rc;
}

/* The calls of each interval, by the process's time window (whole
 * process, like the counters), added to its library columns; a row that
 * the counting library left NULL for calls whose FLOPs are unknown (its
 * lib_calls are not NULL) adds to 0, and is NULL again when no FLOPs were
 * counted in the end. */
#define ADD_CALLS(table, key)                                                                              \
	"UPDATE " table " SET lib_flops = 0, lib_flops_fp64 = 0, lib_flops_fp32 = 0, lib_flops_bf16 = 0,"  \
	" lib_flops_fp16 = 0, lib_ops_int8 = 0, lib_calls = 0, lib_calls_unknown = 0"                      \
	" WHERE complete = 1 AND lib_calls IS NULL AND pid IN lib_pid"                                      \
	" AND (counts = 'exact' OR pid NOT IN lib_shim_pid);"                                               \
	"UPDATE " table " SET lib_flops = coalesce(lib_flops, 0) + x.f,"                                    \
	" lib_flops_fp64 = coalesce(lib_flops_fp64, 0) + x.f0, lib_flops_fp32 = coalesce(lib_flops_fp32, 0) + x.f1," \
	" lib_flops_bf16 = coalesce(lib_flops_bf16, 0) + x.f2, lib_flops_fp16 = coalesce(lib_flops_fp16, 0) + x.f3," \
	" lib_ops_int8 = coalesce(lib_ops_int8, 0) + x.f4,"                                                 \
	" lib_calls = lib_calls + x.n, lib_calls_unknown = coalesce(lib_calls_unknown, 0) + x.u"             \
	" FROM (SELECT s." key " AS id, total(h.flops) AS f, count(*) AS n, count(*) - count(h.flops) AS u," \
	"   total(CASE f.prec WHEN 0 THEN h.flops END) AS f0, total(CASE f.prec WHEN 1 THEN h.flops END) AS f1," \
	"   total(CASE f.prec WHEN 2 THEN h.flops END) AS f2, total(CASE f.prec WHEN 3 THEN h.flops END) AS f3," \
	"   total(CASE f.prec WHEN 4 THEN h.flops END) AS f4"                                              \
	"   FROM " table " AS s JOIN lib_hit AS h ON h.pid = s.pid AND h.time_ns >= s.begin_ns"             \
	"   AND h.time_ns < s.end_ns JOIN lib_func AS f ON f.id = h.func"                                     \
	"   WHERE s.complete = 1 AND s.lib_calls IS NOT NULL GROUP BY s." key ") AS x"                       \
	" WHERE " table "." key " = x.id;"                                                                   \
	"UPDATE " table " SET lib_flops = NULL, lib_flops_fp64 = NULL, lib_flops_fp32 = NULL,"             \
	" lib_flops_bf16 = NULL, lib_flops_fp16 = NULL, lib_ops_int8 = NULL"                               \
	" WHERE lib_calls_unknown > 0 AND lib_flops = 0 AND pid IN lib_pid;"

static const char attribute_sql[] =
	"CREATE INDEX temp.lib_hit_pid_time ON lib_hit (pid, time_ns);"
	ADD_CALLS("step", "step")
	ADD_CALLS("phase", "id")
	"INSERT INTO lib_call (step, function, precision, calls, flops)"
	" SELECT s.step, f.name, f.precision, count(*), sum(h.flops)"
	" FROM step AS s JOIN lib_hit AS h ON h.pid = s.pid AND h.time_ns >= s.begin_ns AND h.time_ns < s.end_ns"
	" JOIN lib_func AS f ON f.id = h.func WHERE s.complete = 1 GROUP BY s.step, f.id"
	" ON CONFLICT (step, function) DO UPDATE SET calls = calls + excluded.calls,"
	" flops = flops + excluded.flops;";

/* The processes in which the counting library counted calls: their steps
 * from probes (no marker read its counters) stay unknown, whatever the
 * uprobes saw. */
static int shim_pids(sqlite3 *db, const struct libflops_region *lf)
{
	sqlite3_stmt *ins = NULL;
	int rc = -EIO;

	if (exec_sql(db, "CREATE TEMP TABLE lib_shim_pid (pid INTEGER PRIMARY KEY)") ||
	    sqlite3_prepare_v2(db, "INSERT OR IGNORE INTO lib_shim_pid VALUES (?)", -1, &ins, NULL) != SQLITE_OK)
		goto out;
	for (int i = 0; lf && i < LIBFLOPS_MAX_PROCS; i++) {
		uint64_t w[LIBFLOPS_WORDS];
		int32_t pid = __atomic_load_n(&lf->procs[i].pid, __ATOMIC_ACQUIRE);

		libflops_sum(&lf->procs[i], w);
		if (pid <= 0 || !w[0])
			continue;
		sqlite3_bind_int(ins, 1, pid);
		if (sqlite3_step(ins) != SQLITE_DONE)
			goto out;
		sqlite3_reset(ins);
	}
	rc = 0;
out:
	sqlite3_finalize(ins);
	return rc;
}

int lib_probes_finish(struct lib_probes *lp, sqlite3 *db, pid_t pid, const struct libflops_region *lf,
		      char *note, size_t notelen)
{
	sqlite3_stmt *st = NULL;
	uint64_t calls = 0, lost;
	char names[256] = "";
	int err;

	note[0] = '\0';
	if (!lp)
		return 0;
	err = lib_probes_drain(lp, db);
	/* no more hits: the database may be closed before lib_probes_free() */
	sqlite3_finalize(lp->ins);
	lp->ins = NULL;
	if (!err)
		err = pair_calls(db, &calls);
	if (!err)
		err = func_table(db);
	if (!err)
		err = shim_pids(db, lf);
	if (!err && (sqlite3_prepare_v2(db, "CREATE TEMP TABLE lib_pid AS SELECT ? AS pid UNION"
					 " SELECT DISTINCT pid FROM lib_hit_raw", -1, &st, NULL) != SQLITE_OK ||
		     sqlite3_bind_int(st, 1, (int)pid) != SQLITE_OK || sqlite3_step(st) != SQLITE_DONE))
		err = -EIO;
	sqlite3_finalize(st);
	if (!err)
		err = exec_sql(db, attribute_sql);
	for (size_t i = 0; i < lp->nev && i < 4; i++) {
		size_t len = strlen(names);
		strbuf(names + len, sizeof(names) - len, "%s%s", i ? ", " : "", libflops_funcs[lp->ev[i].func].name);
	}
	lost = perf_ring_lost(lp->rings, -1) + perf_ring_lost_samples(lp->rings, -1);
	strbuf(note, notelen, "the executable %s has %zu BLAS/oneDNN functions linked in (%s%s), which "
	       "preloading cannot reach: their %llu calls were counted with uprobes (a few microseconds "
	       "each)%s", lp->exe, lp->nev, names, lp->nev > 4 ? ", ..." : "", (unsigned long long)calls,
	       lost ? "; some hits were lost, so lib_flops may be too low" : "");
	return err;
}

/* The executable's calls in the whole run's library counts: the run row,
 * run_lib_call, and each lib_reading at or after them (cumulative). */
static const char run_sql[] =
	"CREATE TEMP TABLE lib_hit_cum AS SELECT h.time_ns AS t,"
	" sum(h.flops) OVER w AS f,"
	" total(CASE f.prec WHEN 0 THEN h.flops END) OVER w AS f0,"
	" total(CASE f.prec WHEN 1 THEN h.flops END) OVER w AS f1,"
	" total(CASE f.prec WHEN 2 THEN h.flops END) OVER w AS f2,"
	" total(CASE f.prec WHEN 3 THEN h.flops END) OVER w AS f3,"
	" total(CASE f.prec WHEN 4 THEN h.flops END) OVER w AS f4,"
	" count(*) OVER w AS n"
	" FROM lib_hit AS h JOIN lib_func AS f ON f.id = h.func"
	" WINDOW w AS (ORDER BY h.time_ns, h.rowid ROWS UNBOUNDED PRECEDING);"
	"CREATE INDEX temp.lib_hit_cum_t ON lib_hit_cum (t);"
	"UPDATE run SET lib_flops = coalesce(lib_flops, 0) + CAST(x.f AS INTEGER),"
	" lib_flops_fp64 = coalesce(lib_flops_fp64, 0) + CAST(x.f0 AS INTEGER),"
	" lib_flops_fp32 = coalesce(lib_flops_fp32, 0) + CAST(x.f1 AS INTEGER),"
	" lib_flops_bf16 = coalesce(lib_flops_bf16, 0) + CAST(x.f2 AS INTEGER),"
	" lib_flops_fp16 = coalesce(lib_flops_fp16, 0) + CAST(x.f3 AS INTEGER),"
	" lib_ops_int8 = coalesce(lib_ops_int8, 0) + CAST(x.f4 AS INTEGER),"
	" lib_calls = coalesce(lib_calls, 0) + x.n"
	" FROM (SELECT f, f0, f1, f2, f3, f4, n FROM lib_hit_cum ORDER BY t DESC, n DESC LIMIT 1) AS x"
	" WHERE id = 1;"
	"INSERT INTO run_lib_call (function, precision, calls, flops)"
	" SELECT f.name, f.precision, count(*), CAST(total(h.flops) AS INTEGER)"
	" FROM lib_hit AS h JOIN lib_func AS f ON f.id = h.func GROUP BY f.id"
	" ON CONFLICT (function) DO UPDATE SET calls = calls + excluded.calls, flops = flops + excluded.flops;"
	"UPDATE lib_reading SET lib_flops = lib_flops + CAST(c.f AS INTEGER),"
	" lib_flops_fp64 = lib_flops_fp64 + CAST(c.f0 AS INTEGER),"
	" lib_flops_fp32 = lib_flops_fp32 + CAST(c.f1 AS INTEGER),"
	" lib_flops_bf16 = lib_flops_bf16 + CAST(c.f2 AS INTEGER),"
	" lib_flops_fp16 = lib_flops_fp16 + CAST(c.f3 AS INTEGER),"
	" lib_ops_int8 = lib_ops_int8 + CAST(c.f4 AS INTEGER), lib_calls = lib_calls + c.n"
	" FROM (SELECT r.time_ns AS rt, (SELECT max(t) FROM lib_hit_cum WHERE t <= r.time_ns) AS ct"
	"       FROM lib_reading AS r) AS m"
	" JOIN lib_hit_cum AS c ON c.t = m.ct"
	" WHERE lib_reading.time_ns = m.rt"
	" AND c.n = (SELECT max(n) FROM lib_hit_cum WHERE t = m.ct);"
	"DROP TABLE temp.lib_hit_cum;";

int lib_probes_add_run(struct lib_probes *lp, sqlite3 *db)
{
	if (!lp)
		return 0;
	return exec_sql(db, run_sql);
}
