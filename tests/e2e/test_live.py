"""The live line (issue 14): on a terminal mfu-record keeps one status line
on stderr, about once a second; in a pipe, or with --quiet, it prints none.

The terminal is a pseudo-terminal: with a known size the line lives in the
last row, outside the scrolling region (the program's output scrolls above
it), and the region is given back at the end; with no size it is redrawn in
place. The numbers on the line are checked against the run's database."""
import os
import pty
import re
import select
import struct
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from mfutest import TempDirTest, prog, query  # noqa: E402

try:
    import fcntl
    import termios
except ImportError:  # pragma: no cover
    fcntl = termios = None

LINE = re.compile(rb'mfu-record: (\d+) s, (\d+) steps, last ([0-9.]+) (ns|us|ms|s), median ([0-9.]+) (ns|us|ms|s)'
                  rb'(, MFU ([0-9.]+)%)?')


def on_pty(argv, rows=0, cols=0, timeout=120):
    """Run argv on a new pseudo-terminal (of @rows x @cols when given);
    returns everything it wrote there."""
    env = dict(os.environ, TERM='xterm')
    pid, fd = pty.fork()
    if pid == 0:  # the child: the terminal is its stdin, stdout and stderr
        try:
            os.execve(argv[0], argv, env)
        finally:
            os._exit(127)
    if rows:
        fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack('HHHH', rows, cols, 0, 0))
    out = b''
    while True:
        r, _, _ = select.select([fd], [], [], timeout)
        if not r:
            break
        try:
            data = os.read(fd, 65536)
        except OSError:  # the child closed the terminal (EIO)
            break
        if not data:
            break
        out += data
    _, status = os.waitpid(pid, 0)
    return out, os.waitstatus_to_exitcode(status)


class Live(TempDirTest):
    def cmd(self, *extra):
        self.db = self.path('run.sqlite')
        # 2.5 s of steps on any CPU, in any build: each spins 10 ms by the
        # clock (a count of MLP steps took 2-3 s on one machine and under
        # 1 s on a faster one, before the first line is drawn at 1 s)
        return [prog('MFU_RECORD'), '-o', self.db] + list(extra) + [
            '--', prog('MFU_WL_STEPS'), '--steps', '250', '--busy-us', '10000', '--flops', '1000000000']

    def check_lines(self, out):
        lines = LINE.findall(out)
        self.assertGreaterEqual(len(lines), 1, out[-2000:])
        steps = query(self.db, 'SELECT COUNT(*) AS n FROM step WHERE complete = 1')[0]['n']
        for sec, n, *_ in lines:
            self.assertLessEqual(int(n), steps)
        # redrawn about once a second: the seconds shown go up
        secs = [int(sec) for sec, *_ in lines]
        self.assertEqual(secs, sorted(secs))
        # the running MFU is the steps' MFU so far: within the range of the
        # steps' own (every step here declares its FLOPs)
        mfus = query(self.db, 'SELECT MIN(model_flops / (wall_ns / 1e9 * (SELECT peak_flops FROM run))) AS lo,'
                              ' MAX(model_flops / (wall_ns / 1e9 * (SELECT peak_flops FROM run))) AS hi'
                              ' FROM step WHERE complete = 1')[0]
        # (the line shows one decimal of a percent: +-0.05 points)
        for line in lines:
            if line[7]:
                self.assertLessEqual(float(line[7]) / 100, mfus['hi'] * 1.01 + 0.0005, line)
                self.assertGreaterEqual(float(line[7]) / 100, mfus['lo'] * 0.99 - 0.0005, line)
        return lines

    @unittest.skipUnless(fcntl, 'no termios')
    def test_status_row_on_a_sized_terminal(self):
        out, code = on_pty(self.cmd(), rows=24, cols=120)
        self.assertEqual(code, 0, out[-2000:])
        self.check_lines(out)
        # the last row is kept out of the scrolling region, then given back
        self.assertIn(b'\x1b[1;23r', out)
        self.assertIn(b'\x1b[24;1Hmfu-record: ', out)
        self.assertIn(b'\x1b[1;24r', out)
        self.assertLess(out.rindex(b'\x1b[1;23r'), out.rindex(b'\x1b[1;24r'))
        # the end shows its stages, then the summary
        self.assertIn(b'finishing: building the indexes', out)
        self.assertGreater(out.index(b'summary'), out.rindex(b'\x1b[1;24r'))
        # cut to the terminal's width: a line that wrapped could not be redrawn
        for m in re.finditer(rb'\x1b\[24;1H(.*?)\x1b\[K', out):
            self.assertLessEqual(len(m.group(1)), 119)

    @unittest.skipUnless(fcntl, 'no termios')
    def test_in_place_on_a_terminal_of_unknown_size(self):
        out, code = on_pty(self.cmd())
        self.assertEqual(code, 0, out[-2000:])
        self.check_lines(out)
        self.assertRegex(out, rb'\rmfu-record: \d+ s, \d+ steps')
        self.assertNotIn(b'\x1b[1;', out)      # no scrolling region

    @unittest.skipUnless(fcntl, 'no termios')
    def test_quiet_on_a_terminal(self):
        out, code = on_pty(self.cmd('-q'), rows=24, cols=120)
        self.assertEqual(code, 0, out[-2000:])
        self.assertIsNone(LINE.search(out), out[-2000:])
        self.assertNotIn(b'\x1b', out)

    def test_nothing_in_a_pipe(self):
        p = subprocess.run(self.cmd(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIsNone(LINE.search(p.stderr))
        self.assertNotIn(b'\x1b', p.stderr)
        self.assertNotIn(b'finishing:', p.stderr)
        self.assertIn(b'summary', p.stderr)     # the summary at the end still comes


if __name__ == '__main__':
    unittest.main(verbosity=2)
