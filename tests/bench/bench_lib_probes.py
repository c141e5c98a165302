#!/usr/bin/env python3
"""What counting a BLAS call costs when the BLAS is linked into the
executable (docs/flops.md: preloading cannot reach it, so mfu-record counts
it with tracefs uprobes, as root), side by side in one invocation.

usage: bench_lib_probes.py BUILDDIR [ROUNDS]

A static program (OpenBLAS's libopenblas.a) times loops of cblas_sgemm at
4x4x4 (100,000 calls), 16x16x16 (50,000) and 64x64x64 (2,000), best of 3
batches, one OpenBLAS thread; run interleaved ROUNDS times (default 5) in
three configurations, each round in another order:
  bare        the program alone
  no-count    under mfu-record --no-lib-flops (markers, counters and
              sampling as by default: what recording costs without the
              probes)
  probes      under mfu-record (default): an entry and a return uprobe on
              every BLAS function linked in
The figure per size is the median over the rounds of ns per call, and of
(probes - no-count): what one counted call adds. Needs root (uprobes) and
libopenblas.a.
"""
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import machine  # noqa: E402

build = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else 'build')
rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 5
record = os.path.join(build, 'src/record/mfu-record')
OPENBLAS_A = '/usr/lib/x86_64-linux-gnu/openblas-pthread/libopenblas.a'
OPENBLAS_INC = '/usr/include/x86_64-linux-gnu/openblas-pthread'

PROGRAM = r'''
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(void)
{
	static const int size[] = { 4, 16, 64 }, calls[] = { 100000, 50000, 2000 };
	float *a = malloc(64 * 64 * sizeof *a), *b = malloc(64 * 64 * sizeof *b), *c = malloc(64 * 64 * sizeof *c);
	for (int i = 0; i < 64 * 64; i++)
		a[i] = b[i] = (float)(i % 7) * 0.125f;
	for (int s = 0; s < 3; s++) {
		int n = size[s];
		double best = 1e30;
		for (int rep = 0; rep < 3; rep++) {
			double t0 = now();
			for (int i = 0; i < calls[s]; i++)
				cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
			double t = (now() - t0) / calls[s];
			if (t < best)
				best = t;
		}
		printf("size=%d ns_per_call=%.1f\n", n, best * 1e9);
	}
	return c[0] < 0;
}
'''


def main():
    if os.geteuid() != 0:
        sys.exit('bench_lib_probes: needs root (uprobes)')
    cc = shutil.which(os.environ.get('CC', 'cc')) or shutil.which('gcc')
    if not cc or not os.path.exists(OPENBLAS_A):
        sys.exit('bench_lib_probes: needs a C compiler and %s (libopenblas-dev)' % OPENBLAS_A)
    with tempfile.TemporaryDirectory() as tmp:
        os.chmod(tmp, 0o755)
        src, exe = os.path.join(tmp, 'sgemm.c'), os.path.join(tmp, 'sgemm')
        with open(src, 'w') as f:
            f.write(PROGRAM)
        subprocess.run([cc, '-O2', '-o', exe, src, '-I' + OPENBLAS_INC, '-static', OPENBLAS_A,
                        '-lgfortran', '-lpthread', '-lm'], check=True)
        env = dict(os.environ, OPENBLAS_NUM_THREADS='1', MFU_NO_CALIBRATE='1')
        confs = {'bare': [], 'no-count': [record, '-q', '--no-lib-flops', '-o', os.path.join(tmp, 'n.sqlite'), '--'],
                 'probes': [record, '-q', '-o', os.path.join(tmp, 'p.sqlite'), '--']}
        got = {}
        for r in range(rounds):
            order = list(confs)
            random.shuffle(order)
            for conf in order:
                p = subprocess.run(confs[conf] + [exe], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                   env=env, check=True)
                for m in re.finditer(r'size=(\d+) ns_per_call=([\d.]+)', p.stdout):
                    got.setdefault((int(m.group(1)), conf), []).append(float(m.group(2)))
        # the probes did count: the calls of the last probes run, all of them
        out = subprocess.run(['sqlite3', os.path.join(tmp, 'p.sqlite'),
                              "SELECT lib_counting FROM run"], stdout=subprocess.PIPE, text=True).stdout.strip()
    print(machine('%d rounds, lib_counting %s' % (rounds, out)))
    print('| cblas_sgemm | bare | no-count | probes | probes - no-count |')
    print('| --- | --- | --- | --- | --- |')
    for n in (4, 16, 64):
        med = {c: statistics.median(got[(n, c)]) for c in confs}
        diff = [p - q for p, q in zip(got[(n, 'probes')], got[(n, 'no-count')])]
        print('| %dx%dx%d | %.0f ns | %.0f ns | %.0f ns | %+.0f ns (%.0f to %.0f) |' % (
            n, n, n, med['bare'], med['no-count'], med['probes'], statistics.median(diff), min(diff), max(diff)))


main()
