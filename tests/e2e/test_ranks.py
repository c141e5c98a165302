"""Ranks of a job (issue 15, item 1): mfu-record started by mpirun or srun
names its database after the rank (-o run.%r.sqlite, %h host, %p pid),
stores the rank, world size, local rank and size and the job id with the
run, and, when the node's ranks run unbound on all of its CPUs, counts only
this rank's share of the node in its peaks. The launchers' variables are
set here by hand (Open MPI's, MPICH's PMI_*, Slurm's), as mpirun and srun
set them."""
import os
import re
import shutil
import socket
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from mfutest import TempDirTest, prog, query  # noqa: E402

LAUNCHER_VARS = ('OMPI_COMM_WORLD_RANK', 'OMPI_COMM_WORLD_SIZE', 'OMPI_COMM_WORLD_LOCAL_RANK',
                 'OMPI_COMM_WORLD_LOCAL_SIZE', 'PMI_RANK', 'PMI_SIZE', 'MPI_LOCALRANKID', 'MPI_LOCALNRANKS',
                 'SLURM_PROCID', 'SLURM_NTASKS', 'SLURM_LOCALID', 'SLURM_NTASKS_PER_NODE', 'SLURM_JOB_ID',
                 'OMPI_MCA_ess_base_jobid', 'PMI_JOBID')


class Ranks(TempDirTest):
    def run_rec(self, out, env_extra, pre=(), peak='spec', quiet=True):
        env = {k: v for k, v in os.environ.items() if k not in LAUNCHER_VARS}
        env.update(env_extra)
        cmd = list(pre) + [prog('MFU_RECORD')] + (['-q'] if quiet else []) + ['--peak', peak, '-o', out, '--',
                           prog('MFU_WL_STEPS'), '--steps', '3']
        return subprocess.run(cmd, env=env, cwd=self.dir, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, timeout=120)

    def run_row(self, path):
        return query(path, 'SELECT rank, world_size, local_rank, local_size, job_id, rank_source, rank_shared,'
                           ' ncpu, ncores, peak_flops FROM run')[0]

    def test_open_mpi_rank_names_the_file_and_is_stored(self):
        p = self.run_rec('run.%r.%h.%p.%%.sqlite', {
            'OMPI_COMM_WORLD_RANK': '3', 'OMPI_COMM_WORLD_SIZE': '4', 'OMPI_COMM_WORLD_LOCAL_RANK': '1',
            'OMPI_COMM_WORLD_LOCAL_SIZE': '1', 'SLURM_JOB_ID': '77'})
        self.assertEqual(p.returncode, 0, p.stderr)
        names = [n for n in os.listdir(self.dir) if n.startswith('run.3.')]
        self.assertEqual(len(names), 1, os.listdir(self.dir))
        # %h the host, %p mfu-record's pid, %% a %
        self.assertRegex(names[0], r'^run\.3\.' + re.escape(socket.gethostname()) + r'\.\d+\.%\.sqlite$')
        row = self.run_row(os.path.join(self.dir, names[0]))
        self.assertEqual((row['rank'], row['world_size'], row['local_rank'], row['local_size'], row['job_id'],
                          row['rank_source'], row['rank_shared']),
                         (3, 4, 1, 1, '77', 'OMPI_COMM_WORLD_RANK', 0))

    def test_launchers_in_order(self):
        # Open MPI's variables first, then PMI's (MPICH, Intel MPI), then Slurm's
        for env, rank, source in (({'PMI_RANK': '5', 'SLURM_PROCID': '6', 'PMI_SIZE': '8'}, 5, 'PMI_RANK'),
                                  ({'SLURM_PROCID': '6', 'SLURM_NTASKS': '8', 'SLURM_LOCALID': '0'}, 6,
                                   'SLURM_PROCID')):
            out = 'run.%r.sqlite'
            p = self.run_rec(out, env)
            self.assertEqual(p.returncode, 0, p.stderr)
            row = self.run_row(self.path('run.%d.sqlite' % rank))
            self.assertEqual((row['rank'], row['world_size'], row['rank_source']), (rank, 8, source))

    def test_unbound_ranks_share_the_node(self):
        base = self.run_rec('alone.sqlite', {})
        self.assertEqual(base.returncode, 0, base.stderr)
        alone = self.run_row(self.path('alone.sqlite'))
        self.assertIsNone(alone['rank'])
        ncpu = os.cpu_count()
        if len(os.sched_getaffinity(0)) != ncpu:
            self.skipTest('this test runs bound to some CPUs: the unbound case cannot be made here')
        p = self.run_rec('run.%r.sqlite', {'OMPI_COMM_WORLD_RANK': '0', 'OMPI_COMM_WORLD_SIZE': '2',
                                          'OMPI_COMM_WORLD_LOCAL_RANK': '0', 'OMPI_COMM_WORLD_LOCAL_SIZE': '2'})
        self.assertEqual(p.returncode, 0, p.stderr)
        row = self.run_row(self.path('run.0.sqlite'))
        self.assertEqual(row['rank_shared'], 1)
        self.assertAlmostEqual(row['ncpu'], alone['ncpu'] / 2)
        self.assertAlmostEqual(row['ncores'], alone['ncores'] / 2)
        # the spec peak is per core: half the cores, half the peak
        self.assertAlmostEqual(row['peak_flops'], alone['peak_flops'] / 2, delta=alone['peak_flops'] * 1e-9)
        notes = query(self.path('run.0.sqlite'), "SELECT text FROM note WHERE kind = 'rank_share'")
        self.assertEqual(len(notes), 1)
        self.assertIn('2 ranks of this job run on this node unbound', notes[0]['text'])

    @unittest.skipUnless(shutil.which('taskset') and (os.cpu_count() or 1) > 1, 'needs taskset and 2 CPUs')
    def test_bound_ranks_keep_their_own_cpus(self):
        p = self.run_rec('run.%r.sqlite', {'OMPI_COMM_WORLD_RANK': '1', 'OMPI_COMM_WORLD_SIZE': '2',
                                          'OMPI_COMM_WORLD_LOCAL_RANK': '1', 'OMPI_COMM_WORLD_LOCAL_SIZE': '2'},
                         pre=('taskset', '-c', '1'))
        self.assertEqual(p.returncode, 0, p.stderr)
        row = self.run_row(self.path('run.1.sqlite'))
        self.assertEqual(row['rank_shared'], 0)
        self.assertEqual(row['ncpu'], 1)
        self.assertEqual(query(self.path('run.1.sqlite'), "SELECT COUNT(*) AS n FROM note WHERE kind = 'rank_share'")[0]['n'], 0)

    def test_ranks_never_share_one_file(self):
        """A rank of a job of several whose -o names no rank writes its own
        database, the rank before the extension; rank 0 says so; a job of
        one rank, %p, or a run outside a job keep the name."""
        for rank in (0, 1):
            p = self.run_rec('run.sqlite', {'OMPI_COMM_WORLD_RANK': str(rank), 'OMPI_COMM_WORLD_SIZE': '2'})
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(self.run_row(self.path('run.%d.sqlite' % rank))['rank'], rank)
        os.mkdir(self.path('out'))
        p = self.run_rec('out/job', {'PMI_RANK': '0', 'PMI_SIZE': '3'}, quiet=False)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("-o out/job names no rank, so each rank writes its own database, this one out/job.0", p.stderr)
        self.assertIn("mfu-report --db 'out/job.*'", p.stderr)
        self.assertEqual(self.run_row(self.path('out/job.0'))['world_size'], 3)
        self.assertFalse(os.path.exists(self.path('run.sqlite')))
        for out, env, want in (('one.sqlite', {'SLURM_PROCID': '0', 'SLURM_NTASKS': '1'}, 'one.sqlite'),
                               # named per rank by the shell: kept
                               ('shell.7.sqlite', {'PMI_RANK': '7', 'PMI_SIZE': '8'}, 'shell.7.sqlite'),
                               ('pid.%p.sqlite', {'PMI_RANK': '1', 'PMI_SIZE': '2'}, None),
                               ('alone.sqlite', {}, 'alone.sqlite')):
            p = self.run_rec(out, env, quiet=False)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertNotIn('names no rank', p.stderr)
            if want:
                self.assertTrue(os.path.exists(self.path(want)), os.listdir(self.dir))
        self.assertEqual(len([n for n in os.listdir(self.dir) if re.match(r'^pid\.\d+\.sqlite$', n)]), 1)

    def test_bad_names(self):
        for out, why in (('run.%r.sqlite', '%r is the rank of an MPI or Slurm job'),
                         ('run.%q.sqlite', 'unknown %q'), ('run.%', 'unknown %')):
            p = self.run_rec(out, {})
            self.assertEqual(p.returncode, 2, (out, p.stderr))
            self.assertIn(why, p.stderr)
            # what is wrong, then where help is (cli.h)
            self.assertEqual(p.stderr.strip().splitlines()[1:], ["Try 'mfu-record --help'."], p.stderr)
            self.assertEqual([n for n in os.listdir(self.dir) if n.startswith('run')], [])


if __name__ == '__main__':
    unittest.main(verbosity=2)
