"""The FP-op counting emulator's Valgrind tool (issue 16): valgrind
--tool=mfufp run straight on workloads, without mfu-record; the counts are
read with the tool's client request by the workloads themselves, and from
--mfu-out files and --mfu-dir records.

- tests/workloads/emu_kernels.c: loops of hand-written SSE, AVX, AVX2, FMA
  and x87 instructions; every kernel's counts by precision and width are
  exactly the counts per iteration below times the iterations (FMA and DPP
  twice, horizontal adds once, x87 apart, moves, logic, compares,
  conversions, shuffles, blends and integer SIMD not at all), and its guest
  instructions are the loop's plus the few of the client request around it.
- tests/workloads/emu_procs.c: a parent with two threads, a forked child
  with a thread and a forked grandchild, a second child that execs the
  program again: the parent's count after waiting is the sum of every
  part's (and only its own parts' without --mfu-dir), so are its --mfu-out
  file and the record for the tool's own parent; also as user nobody.
- tests/workloads/emu_dgemm.c: an OpenBLAS cblas_dgemm of 256^3 counts
  within 1% of 2mnk FLOPs, with one OpenBLAS thread and with two.

Skipped (exit 77) in a sanitizer build (ASan-built workloads cannot run
under Valgrind), without valgrind, and where the tool was not built
(MFU_EMULATE_MISSING says why)."""
import glob
import json
import os
import shutil
import struct
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from mfutest import SANITIZED, TempDirTest, as_nobody, nobody_reachable  # noqa: E402

LIB = os.environ.get('MFU_EMULATE_LIB')
VALGRIND = shutil.which('valgrind')
PRECS = ['fp64', 'fp32', 'fp16', 'bf16']
WIDTHS = ['scalar', '128', '256', '512']
LANES = {('fp64', 'scalar'): 1, ('fp64', '128'): 2, ('fp64', '256'): 4, ('fp64', '512'): 8,
         ('fp32', 'scalar'): 1, ('fp32', '128'): 4, ('fp32', '256'): 8, ('fp32', '512'): 16}

# Per iteration of each kernel of emu_kernels.c: the counts by (precision,
# width), x87 operations, and guest instructions (the loop's own dec and jnz
# included).
KERNELS = {
    'scalar_fp64': ({('fp64', 'scalar'): 7}, 0, 9),
    'scalar_fp32': ({('fp32', 'scalar'): 9}, 0, 11),
    'sse_fp64': ({('fp64', '128'): 7}, 0, 9),
    'sse_fp32': ({('fp32', '128'): 9}, 0, 11),
    'sse3': ({('fp64', '128'): 3, ('fp32', '128'): 3}, 0, 8),
    'dpp': ({('fp64', '128'): 2, ('fp32', '128'): 2}, 0, 4),
    'avx128': ({('fp64', '128'): 1, ('fp32', '128'): 1, ('fp64', 'scalar'): 2, ('fp32', 'scalar'): 1}, 0, 7),
    'avx256': ({('fp64', '256'): 7, ('fp32', '256'): 7}, 0, 15),
    'fma_scalar': ({('fp64', 'scalar'): 4, ('fp32', 'scalar'): 4}, 0, 6),
    'fma_packed': ({('fp64', '256'): 6, ('fp32', '256'): 2, ('fp64', '128'): 2, ('fp32', '128'): 4}, 0, 9),
    'x87': ({}, 7, 16),
    'not_counted': ({}, 0, 22),
    'not_counted_avx': ({}, 0, 12),
    'dead_and_repeated': ({('fp64', 'scalar'): 3}, 0, 9),
}
# The instructions the client request and the kernel's call add around a
# loop (about 90 seen).
INSN_SLACK = 200

# emu_procs.c's parts: (precision, width) or 'x87' -> instructions.
PROC_OWN = {('fp64', 'scalar'): 1000, ('fp64', '128'): 4000}
PROC_CHILD = {('fp32', 'scalar'): 3000, ('fp32', '128'): 4000, 'x87': 5000}
PROC_EXEC = {('fp64', 'scalar'): 6000, ('fp64', '128'): 7000}

# emu_record.h's struct emu_record: magic, version, kind, pid, size,
# 18 counters (16 FP_ARITH, x87, guest instructions), threads, children.
RECORD = struct.Struct('<IHHiI18QQQ')


def wl(name):
    path = os.environ.get('MFU_WL_' + name.upper())
    return path if path and os.path.exists(path) else None


def counts_of(line):
    """{(prec, width): n, 'x87': n} from an emu_read.h JSON object, zeros left out."""
    out = {}
    for p, row in zip(PRECS, line['inst']):
        for w, n in zip(WIDTHS, row):
            if n:
                out[(p, w)] = n
    if line['x87']:
        out['x87'] = line['x87']
    return out


def added(*parts):
    out = {}
    for part in parts:
        for k, n in part.items():
            out[k] = out.get(k, 0) + n
    return out


class ToolTest(TempDirTest):
    def run_tool(self, args, cmd, env=None, nobody=False, timeout=120):
        lib = LIB
        if nobody:
            # the tool and the workload from copies nobody can reach
            cp = nobody_reachable(self, [LIB, cmd[0]])
            lib, cmd = cp[LIB], [cp[cmd[0]]] + list(cmd[1:])
        full = [VALGRIND, '--tool=mfufp', '-q'] + list(args) + list(cmd)
        if nobody:
            full = as_nobody(full)
        e = dict(os.environ if env is None else env, VALGRIND_LIB=lib)
        p = subprocess.run(full, env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, timeout=timeout)
        self.assertEqual(p.returncode, 0, p.stderr)
        return p

    def json_lines(self, text):
        return [json.loads(line) for line in text.splitlines() if line.startswith('{')]


@unittest.skipUnless(wl('emu_kernels'), 'wl_emu_kernels was not built (no valgrind/valgrind.h)')
class Kernels(ToolTest):
    N = 20000

    def test_kernels(self):
        p = self.run_tool([], [wl('emu_kernels'), str(self.N)])
        lines = {line['kernel']: line for line in self.json_lines(p.stdout)}
        self.assertEqual(set(lines), set(KERNELS))
        ran = 0
        for name, (per_iter, x87, insns) in KERNELS.items():
            line = lines[name]
            with self.subTest(kernel=name):
                if 'skipped' in line:
                    self.skipTest('%s: %s' % (name, line['skipped']))
                ran += 1
                self.assertEqual(line['tool'], 1)
                want = {k: n * self.N for k, n in per_iter.items()}
                if x87:
                    want['x87'] = x87 * self.N
                self.assertEqual(counts_of(line), want)
                self.assertGreaterEqual(line['insns'], insns * self.N)
                self.assertLessEqual(line['insns'], insns * self.N + INSN_SLACK)
                self.assertEqual((line['threads'], line['children']), (0, 0))
        self.assertGreaterEqual(ran, 10)

    def test_native_request_is_a_no_op(self):
        p = subprocess.run([wl('emu_kernels'), '1000'], stdout=subprocess.PIPE, text=True, timeout=60)
        self.assertEqual(p.returncode, 0)
        lines = self.json_lines(p.stdout)
        self.assertTrue(lines)
        for line in lines:
            if 'skipped' not in line:
                self.assertEqual(line['tool'], 0, line)
                self.assertEqual(counts_of(line), {}, line)


@unittest.skipUnless(wl('emu_procs'), 'wl_emu_procs was not built (no valgrind/valgrind.h)')
class Processes(ToolTest):
    def run_procs(self, args, nobody=False):
        p = self.run_tool(['--trace-children=yes'] + args, [wl('emu_procs')], nobody=nobody)
        at = {}
        for line in self.json_lines(p.stdout):
            self.assertNotIn(line['at'], at, p.stdout)
            self.assertEqual(line['tool'], 1, line)
            at[line['at']] = line
        self.assertEqual(set(at), {'own', 'child', 'exec', 'total'}, p.stdout)
        return at

    def check_folded(self, nobody=False):
        d = self.path('emu')
        os.mkdir(d)
        os.chmod(d, 0o777)
        at = self.run_procs(['--mfu-dir=' + d, '--mfu-out=' + os.path.join(d, 'out.%p')], nobody=nobody)
        self.assertEqual(counts_of(at['own']), PROC_OWN)
        self.assertEqual((at['own']['threads'], at['own']['children']), (3, 0))
        self.assertEqual(counts_of(at['child']), PROC_CHILD)
        self.assertEqual((at['child']['threads'], at['child']['children']), (3, 1))
        # the exec'd image has the counts of the image before the execve
        self.assertEqual(counts_of(at['exec']), PROC_EXEC)
        self.assertEqual((at['exec']['threads'], at['exec']['children']), (1, 0))
        total = added(PROC_OWN, PROC_CHILD, PROC_EXEC)
        self.assertEqual(counts_of(at['total']), total)
        self.assertEqual((at['total']['threads'], at['total']['children']), (7, 3))
        self.assertGreater(at['total']['insns'],
                           at['own']['insns'] + at['child']['insns'] + at['exec']['insns'])

        # one --mfu-out file per process that exited under the tool (the
        # image replaced by execve is no process of its own); the parent's
        # holds the totals
        outs = {}
        for path in glob.glob(os.path.join(d, 'out.*')):
            with open(path) as f:
                kv = dict(line.split() for line in f)
            outs[int(kv['pid'])] = kv
        self.assertEqual(len(outs), 4, sorted(outs))
        parent = outs[at['total']['pid']]
        for p in PRECS:
            for w in WIDTHS:
                self.assertEqual(int(parent['inst_%s_%s' % (p, w)]), total.get((p, w), 0), (p, w))
        self.assertEqual(int(parent['flops_fp64']),
                         sum(n * LANES[k] for k, n in total.items() if k != 'x87' and k[0] == 'fp64'))
        self.assertEqual(int(parent['x87_ops']), total['x87'])
        self.assertEqual((int(parent['threads']), int(parent['children'])), (7, 3))
        self.assertGreaterEqual(int(parent['guest_insns']), at['total']['insns'])
        self.assertEqual(int(outs[at['exec']['pid']]['ppid']), at['total']['pid'])

        # the tool's parent (this test) got one exit record with the whole
        # tree, and every process removed its own file
        files = sorted(f for f in os.listdir(d) if not f.startswith('out.'))
        self.assertEqual(files, [str(os.getpid())])
        with open(os.path.join(d, files[0]), 'rb') as f:
            data = f.read()
        self.assertEqual(len(data), RECORD.size)
        magic, version, kind, pid, size, *rest = RECORD.unpack(data)
        self.assertEqual((magic, version, kind, pid, size), (0x5255464d, 1, 1, at['total']['pid'], RECORD.size))
        inst, x87, insns, threads, children = rest[:16], rest[16], rest[17], rest[18], rest[19]
        self.assertEqual({(PRECS[i // 4], WIDTHS[i % 4]): n for i, n in enumerate(inst) if n},
                         {k: n for k, n in total.items() if k != 'x87'})
        self.assertEqual((x87, insns, threads, children),
                         (total['x87'], int(parent['guest_insns']), 7, 4))

    def test_fork_threads_exec_summed(self):
        self.check_folded()

    def test_without_dir_only_own_threads(self):
        # no --mfu-dir: children are not folded in (and the exec'd image
        # starts from zero), so the parent has its own threads only
        at = self.run_procs([])
        self.assertEqual(counts_of(at['total']), PROC_OWN)
        self.assertEqual((at['total']['threads'], at['total']['children']), (3, 0))
        self.assertEqual(counts_of(at['exec']), {('fp64', '128'): 7000})

    def test_unprivileged(self):
        self.check_folded(nobody=True)


@unittest.skipUnless(wl('emu_dgemm'), 'wl_emu_dgemm was not built (no OpenBLAS or valgrind.h)')
class Dgemm(ToolTest):
    SIZE = 256

    def dgemm(self, threads):
        env = dict(os.environ, OPENBLAS_NUM_THREADS=str(threads))
        d = self.path('emu')
        os.mkdir(d)
        t0 = time.monotonic()
        p = self.run_tool(['--mfu-out=' + os.path.join(d, 'out')],
                          [wl('emu_dgemm')] + [str(self.SIZE)] * 3, env=env)
        wall = time.monotonic() - t0
        (line,) = self.json_lines(p.stdout)
        self.assertEqual(line['tool'], 1)
        self.assertEqual(line['model_flops'], 2 * self.SIZE ** 3)
        with open(os.path.join(d, 'out')) as f:
            kv = dict(l.split() for l in f)
        print('dgemm %d^3, OPENBLAS_NUM_THREADS=%d: counted %d fp64 FLOPs, model %d, ratio %.6f '
              '(the call %.2f s under the tool, the run %.1f s; %s threads)'
              % (self.SIZE, threads, line['fp64_flops'], line['model_flops'], line['ratio'],
                 line['seconds'], wall, kv['threads']))
        self.assertLess(abs(line['ratio'] - 1), 0.01, line)
        # nothing but fp64 from a dgemm
        self.assertEqual({k: n for k, n in counts_of(line).items() if k[0] != 'fp64'}, {})
        return line, kv

    def test_dgemm_one_thread(self):
        self.dgemm(1)

    def test_dgemm_two_threads(self):
        # OpenBLAS splits a 256^3 dgemm between its threads: the worker's
        # counts must be in the process's
        line, kv = self.dgemm(2)
        self.assertGreaterEqual(int(kv['threads']), 2)


if __name__ == '__main__':
    why = None
    if SANITIZED:
        why = 'a sanitizer build: ASan-built workloads cannot run under Valgrind (the plain build runs this test)'
    elif not VALGRIND:
        why = 'valgrind is not installed (tools/install-deps installs it)'
    elif not LIB or not os.path.isfile(os.path.join(LIB, 'mfufp-amd64-linux')):
        why = 'the mfufp tool was not built: ' + os.environ.get('MFU_EMULATE_MISSING', 'MFU_EMULATE_LIB is not set')
    if why:
        print('skipped: ' + why)
        sys.exit(77)
    unittest.main(verbosity=2)
