/* Library calls inside the executable, through tracefs uprobes (lib_probes.h). */
#include "lib_probes_impl.h"
#include "cpumap.h"
#include "libflops.h"
#include "libflops_list.h"
#include "record/counters/perf_event.h"

#include <sys/mount.h>

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
