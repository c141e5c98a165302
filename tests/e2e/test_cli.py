"""One command-line shape for the three programs (src/common/cli.c): the
same bad usage gets the same two lines from mfu-record, mfu-report and
mfu-calibrate,

    PROG: what is wrong
    Try 'PROG --help'.

and exit status 2, with nothing on stdout; --help goes to stdout with
status 0 and --version prints "PROG VERSION".
"""
import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

PROGRAMS = {name: os.environ.get(var, '') for name, var in
            (('mfu-record', 'MFU_RECORD'), ('mfu-report', 'MFU_REPORT'), ('mfu-calibrate', 'MFU_CALIBRATE'))}

# (arguments, the message after "PROG: ") for every program: each has
# --help (a flag) and --format (a value; mfu-record has none: -o)
COMMON = [
    (['--no-such-option'], "unknown option '--no-such-option'"),
    (['--help=1'], "option '--help' takes no value"),
    (['-Z'], "unknown option '-Z'"),
]
VALUE = {'mfu-record': '-o', 'mfu-report': '--format', 'mfu-calibrate': '--format'}


def run(prog, args):
    return subprocess.run([PROGRAMS[prog]] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, timeout=120)


class Shape(unittest.TestCase):
    def programs(self):
        have = [p for p, path in PROGRAMS.items() if path and os.path.exists(path)]
        if not have:
            self.skipTest('no program built (run through meson test)')
        return have

    def assert_bad_usage(self, prog, args, message):
        r = run(prog, args)
        self.assertEqual(r.returncode, 2, (prog, args, r.stderr))
        self.assertEqual(r.stdout, '', (prog, args))
        self.assertEqual(r.stderr, '%s: %s\nTry \'%s --help\'.\n' % (prog, message, prog), (prog, args))

    def test_same_bad_usage_same_lines(self):
        for prog in self.programs():
            for args, message in COMMON:
                with self.subTest(prog=prog, args=args):
                    self.assert_bad_usage(prog, args, message)
            with self.subTest(prog=prog, missing=VALUE[prog]):
                self.assert_bad_usage(prog, [VALUE[prog]], "option '%s' needs a value" % VALUE[prog])

    def test_help_and_version(self):
        for prog in self.programs():
            with self.subTest(prog=prog):
                r = run(prog, ['--help'])
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertIn('usage: ' + prog, r.stdout)
                self.assertEqual(r.stderr, '')
                r = run(prog, ['--version'])
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertRegex(r.stdout, r'^%s \S+\n$' % prog)


if __name__ == '__main__':
    unittest.main(verbosity=2)
