/*
 * mfufp: a Valgrind tool that counts executed floating-point arithmetic the
 * way FP_ARITH_INST_RETIRED does (see mfu_emulate.h and docs/emulate.md).
 *
 * Every guest instruction is classified once, at translation, from its
 * bytes (fpclass.c); the translation then adds the counts of the
 * instructions executed so far to per-process counters with inline
 * load/add/store statements, before each side exit and at the end of the
 * superblock. So a superblock pays one add per counter class it touches
 * per exit taken, not one per instruction, and every count is exact:
 * Valgrind runs one thread at a time, so plain global counters suffice.
 *
 * Processes: counts of exited descendants are folded in through the files
 * of --mfu-dir (emu_record.h); counts before an execve() are saved there
 * too, for the new image.
 *
 * Built like Valgrind's own tools: static, no libc, only the VG_()
 * functions of the core (src/emulate/meson.build).
 */
#include "pub_tool_basics.h"
#include "pub_tool_clreq.h"
#include "pub_tool_aspacemgr.h"
#include "pub_tool_libcassert.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcfile.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_libcproc.h"
#include "pub_tool_machine.h"
#include "pub_tool_mallocfree.h"
#include "pub_tool_options.h"
#include "pub_tool_tooliface.h"
#include "pub_tool_vki.h"
#include "pub_tool_vkiscnums.h"

#include "emu_record.h"
#include "fpclass.h"
#include "mfu_emulate.h"

#ifndef MFU_VERSION
#define MFU_VERSION "unknown"
#endif

/* Options. */
static const HChar *clo_dir;   /* --mfu-dir: records of exited children */
static const HChar *clo_out;   /* --mfu-out: totals at exit, %p expanded */

/* This process image's own counts (its threads since it started, forked or
 * exec'd): the instrumentation adds to these. */
static ULong counter[EMU_NCOUNTERS];
static ULong own_threads;

/* What was folded in from DIR/<own pid>, and how far that file was read. */
static ULong folded[EMU_NCOUNTERS];
static ULong folded_threads, folded_children;
static Long fold_off;
static ULong bad_records;

static Int own_pid, parent_pid;

/* ------------------------------------------------------------------ */
/* Instrumentation                                                     */
/* ------------------------------------------------------------------ */

/* Adds @n to counter[@i] at run time: three flat statements. */
static void add_counter(IRSB *sb, Int i, ULong n)
{
	IRExpr *addr = mkIRExpr_HWord((HWord)&counter[i]);
	IRTemp old = newIRTemp(sb->tyenv, Ity_I64);
	IRTemp sum = newIRTemp(sb->tyenv, Ity_I64);

	addStmtToIRSB(sb, IRStmt_WrTmp(old, IRExpr_Load(Iend_LE, Ity_I64, addr)));
	addStmtToIRSB(sb, IRStmt_WrTmp(sum, IRExpr_Binop(Iop_Add64, IRExpr_RdTmp(old),
							 IRExpr_Const(IRConst_U64(n)))));
	addStmtToIRSB(sb, IRStmt_Store(Iend_LE, addr, IRExpr_RdTmp(sum)));
}

static void flush_pending(IRSB *sb, ULong *pending)
{
	for (Int i = 0; i < EMU_NCOUNTERS; i++) {
		if (pending[i]) {
			add_counter(sb, i, pending[i]);
			pending[i] = 0;
		}
	}
}

static IRSB *mfufp_instrument(VgCallbackClosure *closure, IRSB *in,
			      const VexGuestLayout *layout, const VexGuestExtents *vge,
			      const VexArchInfo *archinfo_host, IRType gWordTy, IRType hWordTy)
{
	ULong pending[EMU_NCOUNTERS];
	IRSB *out;
	Int i = 0;

	if (gWordTy != hWordTy)
		VG_(tool_panic)("host/guest word size mismatch");

	VG_(memset)(pending, 0, sizeof pending);
	out = deepCopyIRSBExceptStmts(in);
	/* The preamble before the first IMark is no guest instruction. */
	for (; i < in->stmts_used && in->stmts[i]->tag != Ist_IMark; i++)
		addStmtToIRSB(out, in->stmts[i]);

	for (; i < in->stmts_used; i++) {
		IRStmt *st = in->stmts[i];

		switch (st->tag) {
		case Ist_IMark: {
			struct fpclass c;
			UInt len = st->Ist.IMark.len;

			pending[EMU_INSNS]++;
			/* The guest code is mapped and readable: Valgrind
			 * has just read these bytes to translate them. An
			 * IMark of length 0 (a redirection stub) has none. */
			if (len > 0 && len <= 16 &&
			    fpclass_decode((const uint8_t *)(Addr)st->Ist.IMark.addr, len, &c)) {
				if (c.kind == FPCLASS_X87)
					pending[EMU_X87] += c.count;
				else
					pending[c.prec * MFU_EMU_NWIDTH + c.width] += c.count;
			}
			break;
		}
		case Ist_Exit:
			/* What ran before this exit is counted whether the
			 * exit is taken or not. The exit's own instruction
			 * (a conditional branch) is in pending already. */
			flush_pending(out, pending);
			break;
		default:
			break;
		}
		addStmtToIRSB(out, st);
	}
	flush_pending(out, pending);
	return out;
}

/* ------------------------------------------------------------------ */
/* Processes: the records of --mfu-dir                                */
/* ------------------------------------------------------------------ */

static void dir_path(HChar *buf, SizeT size, Int pid)
{
	VG_(snprintf)(buf, size, "%s/%d", clo_dir, pid);
}

/* Reads the records of DIR/<own pid> not read yet. A record still being
 * written (a short read) is left for the next call. */
static void fold_records(void)
{
	HChar path[VKI_PATH_MAX];
	struct emu_record rec;
	SysRes r;
	Int fd;

	if (!clo_dir)
		return;
	dir_path(path, sizeof path, own_pid);
	r = VG_(open)(path, VKI_O_RDONLY, 0);
	if (sr_isError(r))
		return;
	fd = sr_Res(r);
	if (VG_(lseek)(fd, fold_off, VKI_SEEK_SET) == fold_off) {
		while (VG_(read)(fd, &rec, sizeof rec) == (Int)sizeof rec) {
			fold_off += sizeof rec;
			if (rec.magic != EMU_REC_MAGIC || rec.version != EMU_REC_VERSION ||
			    rec.size != sizeof rec) {
				bad_records++;
				continue;
			}
			for (Int i = 0; i < EMU_NCOUNTERS; i++)
				folded[i] += rec.count[i];
			folded_threads += rec.threads;
			folded_children += rec.children;
		}
	}
	VG_(close)(fd);
}

static void append_record(Int to_pid, UInt kind, const ULong *count, ULong threads,
			  ULong children)
{
	HChar path[VKI_PATH_MAX];
	struct emu_record rec;
	SysRes r;
	Int fd, n;

	VG_(memset)(&rec, 0, sizeof rec);
	rec.magic = EMU_REC_MAGIC;
	rec.version = EMU_REC_VERSION;
	rec.kind = (uint16_t)kind;
	rec.pid = own_pid;
	rec.size = sizeof rec;
	for (Int i = 0; i < EMU_NCOUNTERS; i++)
		rec.count[i] = count[i];
	rec.threads = threads;
	rec.children = children;

	dir_path(path, sizeof path, to_pid);
	r = VG_(open)(path, VKI_O_WRONLY | VKI_O_CREAT | VKI_O_APPEND, 0600);
	if (sr_isError(r)) {
		VG_(umsg)("mfufp: cannot open '%s': error %lu (the counts of process %d are lost to its parent)\n",
			  path, sr_Err(r), own_pid);
		return;
	}
	fd = sr_Res(r);
	/* One write on O_APPEND: records of concurrent writers never mix. */
	n = VG_(write)(fd, &rec, sizeof rec);
	if (n != (Int)sizeof rec)
		VG_(umsg)("mfufp: cannot write '%s' (%d of %lu bytes written)\n",
			  path, n, (unsigned long)sizeof rec);
	VG_(close)(fd);
}

/* The process's counts so far: its threads plus what it folded in. */
static void totals(ULong *count, ULong *threads, ULong *children)
{
	fold_records();
	for (Int i = 0; i < EMU_NCOUNTERS; i++)
		count[i] = counter[i] + folded[i];
	*threads = own_threads + folded_threads;
	*children = folded_children;
}

static void forget_folded(void)
{
	VG_(memset)(folded, 0, sizeof folded);
	folded_threads = folded_children = 0;
	fold_off = 0;
}

/* Valgrind's fork copies the tool: the child starts from zero, with one
 * thread, and reports to the process that forked it. */
static Int pid_before_fork;

static void fork_pre(ThreadId tid)
{
	pid_before_fork = VG_(getpid)();
}

static void fork_child(ThreadId tid)
{
	HChar path[VKI_PATH_MAX];

	parent_pid = pid_before_fork;
	own_pid = VG_(getpid)();
	VG_(memset)(counter, 0, sizeof counter);
	own_threads = 1;
	forget_folded();
	bad_records = 0;
	/* A file of an earlier process that had this pid: nothing can be
	 * addressed to this new process yet. */
	if (clo_dir) {
		dir_path(path, sizeof path, own_pid);
		VG_(unlink)(path);
	}
}

static void thread_created(ThreadId parent, ThreadId child)
{
	own_threads++;
}

/* Before execve(): the image's own counts go to DIR/<own pid>, where the
 * new image (--trace-children=yes) folds them in with everything else the
 * file holds, the records this image had read included; so the image's
 * folded sums are dropped, not saved. Should the execve fail, this image
 * goes on from zero and folds its own record back: nothing is lost or
 * counted twice either way. */
static void mfufp_pre_syscall(ThreadId tid, UInt sysno, UWord *args, UInt nargs)
{
	if (!clo_dir || (sysno != __NR_execve && sysno != __NR_execveat))
		return;
	/* the execing thread goes on in the new image, which counts it */
	append_record(own_pid, EMU_REC_EXEC, counter, own_threads - 1, 0);
	VG_(memset)(counter, 0, sizeof counter);
	own_threads = 1;
	forget_folded();
}

static void mfufp_post_syscall(ThreadId tid, UInt sysno, UWord *args, UInt nargs, SysRes res)
{
}

/* ------------------------------------------------------------------ */
/* The client request                                                  */
/* ------------------------------------------------------------------ */

static void fill_counts(struct mfu_emu_counts *c)
{
	ULong count[EMU_NCOUNTERS], threads, children;

	totals(count, &threads, &children);
	VG_(memset)(c, 0, sizeof *c);
	c->version = MFU_EMU_VERSION;
	c->size = sizeof *c;
	for (Int p = 0; p < MFU_EMU_NPREC; p++)
		for (Int w = 0; w < MFU_EMU_NWIDTH; w++)
			c->inst[p][w] = count[p * MFU_EMU_NWIDTH + w];
	c->x87_ops = count[EMU_X87];
	c->guest_insns = count[EMU_INSNS];
	c->threads = threads;
	c->children = children;
}

static Bool mfufp_client_request(ThreadId tid, UWord *arg, UWord *ret)
{
	struct mfu_emu_counts c;
	Addr a = arg[1];
	UInt size;

	if (!VG_IS_TOOL_USERREQ('M', 'F', arg[0]))
		return False;
	*ret = 0;
	if (arg[0] != MFU_EMU_REQ_READ)
		return True;
	/* The caller's struct: its size field first, then as much of ours
	 * as it has room for (an older, shorter struct gets its prefix). */
	if (!VG_(am_is_valid_for_client)(a, 8, VKI_PROT_READ | VKI_PROT_WRITE))
		return True;
	size = ((const UInt *)a)[1];
	if (size < __builtin_offsetof(struct mfu_emu_counts, inst) ||
	    !VG_(am_is_valid_for_client)(a, size, VKI_PROT_READ | VKI_PROT_WRITE))
		return True;
	fill_counts(&c);
	c.size = size;
	VG_(memcpy)((void *)a, &c, size < sizeof c ? size : sizeof c);
	*ret = 1;
	return True;
}

/* ------------------------------------------------------------------ */
/* Options, start and end                                              */
/* ------------------------------------------------------------------ */

static Bool mfufp_process_cmd_line_option(const HChar *arg)
{
	if VG_STR_CLO(arg, "--mfu-dir", clo_dir) {
		/* Absolute: every process of the tree, whatever its working
		 * directory when it started, must name the same files. */
		if (clo_dir[0] != '/')
			VG_(fmsg_bad_option)(arg, "the directory must be an absolute path\n");
		if (VG_(strlen)(clo_dir) + 16 > VKI_PATH_MAX)
			VG_(fmsg_bad_option)(arg, "the directory name is too long\n");
	} else if VG_STR_CLO(arg, "--mfu-out", clo_out) {
	} else {
		return False;
	}
	return True;
}

static void mfufp_print_usage(void)
{
	VG_(printf)(
"    --mfu-dir=DIR             fold in the counts of exited child processes, and\n"
"                              keep counts across execve, through files in DIR\n"
"                              (an existing directory private to this run, given\n"
"                              as an absolute path)\n"
"    --mfu-out=FILE            write each process's totals at its exit to FILE\n"
"                              (%%p is the pid); key value lines\n");
}

static void mfufp_print_debug_usage(void)
{
	VG_(printf)("    (none)\n");
}

static void mfufp_post_clo_init(void)
{
	own_pid = VG_(getpid)();
	parent_pid = VG_(getppid)();
	/* own_threads counts the main thread when the core creates it */
}

static const char *const prec_name[MFU_EMU_NPREC] = { "fp64", "fp32", "fp16", "bf16" };
static const char *const width_name[MFU_EMU_NWIDTH] = { "scalar", "128", "256", "512" };

static void write_out(const ULong *count, ULong threads, ULong children)
{
	HChar buf[4096];
	HChar *path;
	Int n = 0, fd;
	SysRes r;

	path = VG_(expand_file_name)("--mfu-out", clo_out);
	n += VG_(snprintf)(buf + n, sizeof buf - n, "mfufp_version %d\npid %d\nppid %d\n",
			   MFU_EMU_VERSION, own_pid, parent_pid);
	for (Int p = 0; p < MFU_EMU_NPREC; p++)
		for (Int w = 0; w < MFU_EMU_NWIDTH; w++)
			n += VG_(snprintf)(buf + n, sizeof buf - n, "inst_%s_%s %llu\n",
					   prec_name[p], width_name[w],
					   count[p * MFU_EMU_NWIDTH + w]);
	for (Int p = 0; p < MFU_EMU_NPREC; p++) {
		ULong flops = 0;
		for (Int w = 0; w < MFU_EMU_NWIDTH; w++)
			flops += count[p * MFU_EMU_NWIDTH + w] * mfu_emu_lanes(p, w);
		n += VG_(snprintf)(buf + n, sizeof buf - n, "flops_%s %llu\n", prec_name[p], flops);
	}
	n += VG_(snprintf)(buf + n, sizeof buf - n,
			   "x87_ops %llu\nguest_insns %llu\nthreads %llu\nchildren %llu\nbad_records %llu\n",
			   count[EMU_X87], count[EMU_INSNS], threads, children, bad_records);

	r = VG_(open)(path, VKI_O_WRONLY | VKI_O_CREAT | VKI_O_TRUNC, 0644);
	if (sr_isError(r)) {
		VG_(umsg)("mfufp: cannot create '%s': error %lu\n", path, sr_Err(r));
	} else {
		fd = sr_Res(r);
		if (VG_(write)(fd, buf, n) != n)
			VG_(umsg)("mfufp: cannot write '%s'\n", path);
		VG_(close)(fd);
	}
	VG_(free)(path);
}

static void mfufp_fini(Int exitcode)
{
	ULong count[EMU_NCOUNTERS], threads, children, flops[MFU_EMU_NPREC] = { 0 };
	HChar path[VKI_PATH_MAX];

	totals(count, &threads, &children);
	if (clo_dir) {
		append_record(parent_pid, EMU_REC_EXIT, count, threads, children + 1);
		dir_path(path, sizeof path, own_pid);
		VG_(unlink)(path);
	}
	if (clo_out)
		write_out(count, threads, children);
	for (Int p = 0; p < MFU_EMU_NPREC; p++)
		for (Int w = 0; w < MFU_EMU_NWIDTH; w++)
			flops[p] += count[p * MFU_EMU_NWIDTH + w] * mfu_emu_lanes(p, w);
	if (VG_(clo_verbosity) > 0) {
		VG_(umsg)("FLOPs: fp64 %'llu, fp32 %'llu; x87 ops %'llu; guest instructions %'llu\n",
			  flops[MFU_EMU_FP64], flops[MFU_EMU_FP32], count[EMU_X87], count[EMU_INSNS]);
		VG_(umsg)("threads %llu, child processes %llu\n", threads, children);
	}
	if (bad_records)
		VG_(umsg)("mfufp: %llu records in %s/%d were not mfufp's and were skipped\n",
			  bad_records, clo_dir, own_pid);
}

static void mfufp_pre_clo_init(void)
{
	VG_(details_name)("mfufp");
	VG_(details_version)(MFU_VERSION);
	VG_(details_description)("floating-point instruction counts, FP_ARITH_INST_RETIRED style (mfu)");
	VG_(details_copyright_author)("Copyright (C) the mfu authors, MIT licence");
	VG_(details_bug_reports_to)("the mfu project");
	VG_(details_avg_translation_sizeB)(275);

	VG_(basic_tool_funcs)(mfufp_post_clo_init, mfufp_instrument, mfufp_fini);
	VG_(needs_command_line_options)(mfufp_process_cmd_line_option, mfufp_print_usage,
					mfufp_print_debug_usage);
	VG_(needs_client_requests)(mfufp_client_request);
	VG_(needs_syscall_wrapper)(mfufp_pre_syscall, mfufp_post_syscall);
	VG_(track_pre_thread_ll_create)(thread_created);
	VG_(atfork)(fork_pre, NULL, fork_child);
}

VG_DETERMINE_INTERFACE_VERSION(mfufp_pre_clo_init)
