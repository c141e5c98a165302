#!/usr/bin/env python3
"""Tests of the Python marker module src/python/mfu.py (not recording).

Environment (meson test sets them):
  MFU_PYTHON_DIR  the directory holding mfu.py; default $MFU_SRCDIR/src/python
  MFU_LIBMFU      the built libmfu shared library

Each case runs in a fresh interpreter, because the module decides how to
load libmfu (and whether to warn) once, at import, from the environment.
"""

import os
import subprocess
import sys
import textwrap
import unittest

WARNING = (
    "mfu: cannot load libmfu (%s); steps will not be recorded. "
    "Set MFU_LIBRARY=/path/to/libmfu.so.0 or LD_LIBRARY_PATH.\n"
)
MISSING = "/nonexistent/libmfu.so.0"


def need(var):
    v = os.environ.get(var)
    if not v:
        raise AssertionError("set %s (meson test does)" % var)
    return v


def python_dir():
    d = os.environ.get("MFU_PYTHON_DIR")
    if d:
        return d
    return os.path.join(need("MFU_SRCDIR"), "src", "python")


def run(code, **env):
    """Run @code after `import mfu` in a new python3; env values of None
    remove the variable. Returns the CompletedProcess."""
    e = dict(os.environ)
    for k in ("MFU_LIBRARY", "MFU_RING_FD", "MFU_GROUP_FD", "LD_LIBRARY_PATH"):
        e.pop(k, None)
    e["PYTHONPATH"] = python_dir()
    for k, v in env.items():
        if v is None:
            e.pop(k, None)
        else:
            e[k] = v
    src = "import mfu\n" + textwrap.dedent(code)
    return subprocess.run(
        [sys.executable, "-c", src], env=e, capture_output=True, text=True, timeout=60
    )


# Every operation, in every spelling, including misuse that must not raise:
# names as str, bytes, None, non-ASCII, too long; ends without begins; model
# declarations outside any step; ints, floats and huge numbers.
EXERCISE = """
mfu.step_begin()
mfu.step_model(1e9, 4e6)
mfu.phase_begin("forward")
mfu.phase_model(5, 6)
mfu.phase_end("forward")
mfu.phase_begin(b"backward")
mfu.phase_end(None)
mfu.phase_begin("d\u00e9j\u00e0 vu " + "x" * 100)
mfu.phase_end()
mfu.step_end()
mfu.step_end()
mfu.phase_end("never begun")
mfu.step_model(0, 0)
mfu.phase_model(2**70, 1)
with mfu.step(flops=10, bytes=20) as s:
    with mfu.phase("data"):
        pass
    with mfu.phase("forward", flops=3, bytes=4):
        pass
    with mfu.phase(b"bytes name", flops=1):
        pass
with mfu.step():
    pass
with mfu.step(bytes=5):
    pass

@mfu.step(flops=1)
def train_step(x):
    with mfu.phase("inner"):
        return x + 1

@mfu.phase("eval", flops=2, bytes=3)
def evaluate(x):
    return x * 2

assert train_step(1) == 2 and train_step(2) == 3
assert evaluate(4) == 8
print("recording", mfu.recording())
print("available", mfu.available())
"""


class TestWithoutLibrary(unittest.TestCase):
    """libmfu cannot be loaded: everything is a silent no-op."""

    def test_everything_is_a_silent_noop(self):
        r = run(EXERCISE, MFU_LIBRARY=MISSING)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stderr, "")
        self.assertIn("recording False", r.stdout)
        self.assertIn("available False", r.stdout)

    def test_recorded_but_unloadable_warns_once(self):
        code = EXERCISE + "\nimport mfu as again\n" + EXERCISE
        r = run(code, MFU_LIBRARY=MISSING, MFU_RING_FD="999")
        self.assertEqual(r.returncode, 0, r.stderr)
        reason = MISSING + ": cannot open shared object file: No such file or directory"
        self.assertEqual(r.stderr, WARNING % reason)
        self.assertIn("recording False", r.stdout)

    def test_warning_reason_names_a_file_that_is_not_a_library(self):
        r = run("mfu.step_begin()", MFU_LIBRARY=__file__, MFU_RING_FD="3")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stderr.count("\n"), 1, r.stderr)
        self.assertTrue(r.stderr.startswith("mfu: cannot load libmfu (" + __file__), r.stderr)

    def test_empty_ring_fd_is_not_recording(self):
        r = run("pass", MFU_LIBRARY=MISSING, MFU_RING_FD="")
        self.assertEqual(r.stderr, "")


class TestContextManagers(unittest.TestCase):
    """The context managers and decorators end what they begin, even when
    the block raises, and let the exception through. The C entry points are
    replaced by recorders (module globals _step_begin and so on)."""

    CODE = """
    calls = []
    for n in ("step_begin", "step_end", "step_model", "phase_begin",
              "phase_end", "phase_model"):
        # NaN (an undeclared value: unknown) shows as None, comparable
        setattr(mfu, "_" + n, lambda *a, n=n: calls.append(
            (n,) + tuple(None if isinstance(x, float) and x != x else x for x in a)))

    class Boom(Exception):
        pass

    try:
        with mfu.step(flops=6, bytes=8):
            with mfu.phase("forward", flops=2):
                raise Boom()
    except Boom:
        calls.append("caught")

    @mfu.step()
    def failing_step():
        with mfu.phase("backward"):
            raise KeyError("x")

    try:
        failing_step()
    except KeyError:
        calls.append("caught")

    with mfu.step():
        pass
    print(repr(calls))
    """

    EXPECTED = [
        ("step_begin",),
        ("step_model", 6, 8),
        ("phase_begin", b"forward"),
        ("phase_model", 2, None),  # bytes not given: unknown, not 0
        ("phase_end", b"forward"),
        ("step_end",),
        "caught",
        ("step_begin",),
        ("phase_begin", b"backward"),
        ("phase_end", b"backward"),
        ("step_end",),
        "caught",
        ("step_begin",),
        ("step_end",),
    ]

    def check(self, **env):
        r = run(self.CODE, **env)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(eval(r.stdout), self.EXPECTED)

    def test_without_library(self):
        self.check(MFU_LIBRARY=MISSING)

    def test_with_library(self):
        self.check(MFU_LIBRARY=need("MFU_LIBMFU"))


class TestWithLibrary(unittest.TestCase):
    """libmfu loads, the process is not recorded: calls reach C, which does
    nothing, and recording() is False."""

    def test_mfu_library(self):
        r = run(EXERCISE, MFU_LIBRARY=need("MFU_LIBMFU"))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stderr, "")
        self.assertIn("recording False", r.stdout)
        self.assertIn("available True", r.stdout)

    def test_ld_library_path(self):
        # No MFU_LIBRARY: "libmfu.so.0" through the dynamic loader.
        libdir = os.path.dirname(need("MFU_LIBMFU"))
        self.assertTrue(os.path.exists(os.path.join(libdir, "libmfu.so.0")))
        r = run(EXERCISE, LD_LIBRARY_PATH=libdir)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("available True", r.stdout)
        self.assertIn("recording False", r.stdout)

    def test_stray_ring_fd_is_not_recording(self):
        # MFU_RING_FD names no ring: libmfu stays off, and the module, which
        # did load the library, has nothing to say.
        r = run(EXERCISE, MFU_LIBRARY=need("MFU_LIBMFU"), MFU_RING_FD="999")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stderr, "")
        self.assertIn("recording False", r.stdout)

    def test_c_entry_points_are_cached_ctypes_functions(self):
        code = """
        import ctypes
        assert mfu._step_model.argtypes == [ctypes.c_double, ctypes.c_double]
        assert mfu._phase_begin.argtypes == [ctypes.c_char_p]
        assert mfu._recording.restype is ctypes.c_int
        assert mfu._step_begin.restype is None
        print("ok")
        """
        r = run(code, MFU_LIBRARY=need("MFU_LIBMFU"))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout, "ok\n")


if __name__ == "__main__":
    unittest.main(verbosity=2)
