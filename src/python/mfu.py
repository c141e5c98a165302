"""Step and phase markers for mfu-record (a ctypes binding of libmfu).

    import mfu

    for batch in loader:
        with mfu.step(flops=6 * n_params * tokens, bytes=4 * n_params):
            with mfu.phase("forward"):
                loss = model(batch)
            with mfu.phase("backward"):
                loss.backward()
            with mfu.phase("optimizer", flops=2 * n_params):
                opt.step()

The same operations exist as plain functions (step_begin(), step_end(),
step_model(flops, bytes), phase_begin(name), phase_end(name),
phase_model(flops, bytes), recording()), and step()/phase() also work as
decorators (``@mfu.phase("eval")``). FLOPs and bytes are plain numbers of
floating-point operations and bytes; see the C header mfu.h for the meaning
of each call.

libmfu is loaded from the file named by the environment variable
MFU_LIBRARY if it is set, else as "libmfu.so.0" through the dynamic loader
(so LD_LIBRARY_PATH finds an uninstalled build), else the one mfu-record
names for the programs it starts (MFU_RECORD_LIBMFU), else the one
installed with this file (<prefix>/share/mfu/python -> <prefix>/lib...),
else the one of the mfu-record first on PATH (its install prefix, or its
build directory). library() says which. If it cannot be loaded every
call is a no-op; when the program is being recorded (MFU_RING_FD is set) the
module says why, once, on stderr. Outside mfu-record every call is a no-op in
libmfu too, and recording() is False, until `mfu-record -p PID` joins the
running process: libmfu's markers are then switched on from outside (nothing
to do here), and off again when the recorder leaves.

mfu.flops (the file mfu_flops.py, next to this one) has FLOP and byte
formulas (matmul, transformer, param_bytes, kv_cache_bytes) and counts the
FLOPs of a PyTorch call (count). It is imported on first use, so this file
also works alone; mfu.flops then raises ImportError. step(flops="count")
counts the first step at each call site with it and declares that number
for every step there (or nothing, when it counted nothing: never a 0 that
would hide the FLOPs mfu-record counts in library calls), and says what it
did in the run's notes.
"""

import contextlib
import ctypes
import importlib
import os
import sys
import warnings

_NAN = float("nan")

__all__ = [
    "step",
    "phase",
    "step_begin",
    "step_end",
    "step_model",
    "phase_begin",
    "phase_end",
    "phase_model",
    "recording",
    "available",
    "library",
]

_SONAME = "libmfu.so.0"


def _noop(*args):
    return None


def _zero():
    return 0


# The C entry points, replaced by ctypes function objects (argtypes and
# restype set once, here, so each call converts nothing it need not) when
# libmfu loads. Everything below calls these module globals.
_step_begin = _noop
_step_end = _noop
_step_model = _noop
_phase_begin = _noop
_phase_end = _noop
_phase_model = _noop
_recording = _zero

_lib = None
_lib_path = None
_load_error = None


def _prefix_libs(prefix):
    """libmfu.so.0 in the library directories of an install prefix: lib,
    lib64, lib32 and their multiarch subdirectories (lib/x86_64-linux-gnu,
    Debian's meson default)."""
    found = []
    try:
        names = sorted(os.listdir(prefix))
    except OSError:
        return found
    for d in names:
        if not d.startswith("lib"):
            continue
        top = os.path.join(prefix, d)
        found.append(os.path.join(top, _SONAME))
        try:
            found.extend(os.path.join(top, sub, _SONAME) for sub in sorted(os.listdir(top))
                         if "-linux-" in sub)
        except OSError:
            pass
    return found


def _recorder_on_path():
    for d in os.environ.get("PATH", "").split(os.pathsep):
        exe = os.path.join(d or ".", "mfu-record")
        if os.path.isfile(exe) and os.access(exe, os.X_OK):
            return os.path.realpath(exe)
    return None


def _candidates():
    """Where libmfu may be, most trusted first (the module docstring)."""
    yield _SONAME
    own = os.environ.get("MFU_RECORD_LIBMFU")
    if own:
        yield own
    # Installed as data, this file is <prefix>/share/mfu/python/mfu.py, and
    # meson installed libmfu under the same prefix.
    here = os.path.dirname(os.path.realpath(__file__))
    parts = here.split(os.sep)
    if parts[-3:] == ["share", "mfu", "python"]:
        for path in _prefix_libs(os.sep.join(parts[:-3]) or os.sep):
            if os.path.isfile(path):
                yield path
    # The libmfu that comes with the mfu-record on PATH, as mfu-record names
    # it in MFU_RECORD_LIBMFU for the programs it starts: its build
    # directory's (build/src/record/mfu-record, build/src/lib/libmfu.so.0),
    # or its prefix's (<prefix>/bin/mfu-record).
    rec = _recorder_on_path()
    if rec:
        bindir = os.path.dirname(rec)
        near = [os.path.join(os.path.dirname(bindir), "lib", _SONAME)]
        near += _prefix_libs(os.path.dirname(bindir))
        for path in near:
            if os.path.isfile(path):
                yield path


def _load():
    global _lib, _lib_path, _load_error
    global _step_begin, _step_end, _step_model
    global _phase_begin, _phase_end, _phase_model, _recording

    # An explicit MFU_LIBRARY that fails does not fall back to the default:
    # that would silently record with another build than the one asked for.
    explicit = os.environ.get("MFU_LIBRARY")
    tried = []
    try:
        lib = None
        for path in [explicit] if explicit else _candidates():
            try:
                lib = ctypes.CDLL(path)
                break
            except OSError as e:
                tried.append(str(e) or path)
        if lib is None:
            raise OSError("; ".join(tried))
        fns = {}
        for name, argtypes, restype in (
            ("mfu_step_begin", [], None),
            ("mfu_step_end", [], None),
            ("mfu_step_model", [ctypes.c_double, ctypes.c_double], None),
            ("mfu_phase_begin", [ctypes.c_char_p], None),
            ("mfu_phase_end", [ctypes.c_char_p], None),
            ("mfu_phase_model", [ctypes.c_double, ctypes.c_double], None),
            ("mfu_recording", [], ctypes.c_int),
        ):
            f = getattr(lib, name)
            f.argtypes = argtypes
            f.restype = restype
            fns[name] = f
    except (OSError, AttributeError) as e:
        _load_error = str(e) or type(e).__name__
        if os.environ.get("MFU_RING_FD"):
            sys.stderr.write(
                "mfu: cannot load libmfu (%s); steps will not be recorded. "
                "Set MFU_LIBRARY=/path/to/libmfu.so.0 or LD_LIBRARY_PATH.\n"
                % _load_error
            )
            sys.stderr.flush()
        return
    _lib = lib
    _lib_path = path
    _step_begin = fns["mfu_step_begin"]
    _step_end = fns["mfu_step_end"]
    _step_model = fns["mfu_step_model"]
    _phase_begin = fns["mfu_phase_begin"]
    _phase_end = fns["mfu_phase_end"]
    _phase_model = fns["mfu_phase_model"]
    _recording = fns["mfu_recording"]


_load()


def _name(name):
    """A phase name as bytes for C: str is encoded UTF-8, bytes pass as
    they are, None stays None (NULL), anything else goes through str()."""
    if isinstance(name, str):
        return name.encode("utf-8", "surrogateescape")
    if name is None or isinstance(name, bytes):
        return name
    return str(name).encode("utf-8", "surrogateescape")


def _num(x):
    # None is "not declared": NAN tells libmfu the value is unknown, so the
    # report shows null (MBU unknown), never a 0 that looks measured.
    return _NAN if x is None else float(x)


def _flops_module():
    """mfu_flops, the module behind mfu.flops, imported on first use from
    next to this file (as a sibling in a package, else as a top-level
    module). A missing file is an ImportError only when it is needed."""
    name = __package__ + ".mfu_flops" if __package__ else "mfu_flops"
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as e:
        if e.name != name:
            raise
        raise ImportError(
            "mfu.flops needs mfu_flops.py next to mfu.py (%s): it is installed "
            "with mfu.py; copy both files" % os.path.dirname(os.path.abspath(__file__)),
            name=name,
        ) from None


def _register_flops():
    """Make ``import mfu.flops`` and ``from mfu.flops import ...`` work,
    although mfu is a module and not a package: sys.modules gets mfu_flops
    under the name mfu.flops too, and the import statement finds it there.
    The module is made by importlib's LazyLoader, so mfu_flops.py still
    runs only when first used (importing it costs milliseconds; import mfu
    costs a path lookup more). Without mfu_flops.py nothing is registered:
    import mfu.flops then fails as before, and mfu.flops says why."""
    name = __package__ + ".mfu_flops" if __package__ else "mfu_flops"
    alias = __name__ + ".flops"
    if alias in sys.modules:
        return
    mod = sys.modules.get(name)
    if mod is None:
        try:
            import importlib.util

            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            return
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return
        # Python < 3.12: two threads that first touch the module at once
        # may both run it, into the same namespace; it defines functions
        # only, so either run leaves the same module.
        spec.loader = importlib.util.LazyLoader(spec.loader)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        spec.loader.exec_module(mod)
    sys.modules[alias] = mod


_register_flops()


def __getattr__(name):
    # Module attribute hook (PEP 562): mfu.flops is imported when first used.
    if name == "flops":
        mod = _flops_module()
        globals()["flops"] = mod
        return mod
    raise AttributeError("module %r has no attribute %r" % (__name__, name))


def available():
    """True when libmfu was loaded (the markers reach the C library)."""
    return _lib is not None


def library():
    """The libmfu this module loaded: the file name or path it was opened
    by ("libmfu.so.0" when the dynamic loader found it), or None when none
    was loaded (every call is then a no-op)."""
    return _lib_path


def recording():
    """True while this process is being recorded by mfu-record: started by
    it, or joined by mfu-record -p since it joined."""
    return bool(_recording())


def step_begin():
    """Begin a step (one iteration of the program's main loop)."""
    _step_begin()


def step_end():
    """End the step begun by the last step_begin()."""
    _step_end()


def step_model(flops=None, bytes=None):
    """Declare the current step's model FLOPs and model bytes (calls within
    one step add up). One left out (None) stays unknown, not 0."""
    _step_model(_num(flops), _num(bytes))


def phase_begin(name):
    """Begin a phase called name (str or bytes; at most 63 bytes are kept)
    in the calling thread. Phases nest."""
    _phase_begin(_name(name))


def phase_end(name=None):
    """End the innermost open phase called name in the calling thread (None
    ends the innermost phase, whatever its name)."""
    _phase_end(_name(name))


def phase_model(flops=None, bytes=None):
    """Declare the model FLOPs and bytes of the calling thread's innermost
    open phase (calls within one phase add up). One left out (None) stays
    unknown, not 0."""
    _phase_model(_num(flops), _num(bytes))


# step(flops="count"): FLOPs counted in the first step, by key; _NOTHING
# when that count declared nothing (no FLOPs found that it can count).
_counted = {}
_NOTHING = object()


class step(contextlib.ContextDecorator):
    """``with mfu.step(flops=..., bytes=...):`` marks one step and, when flops
    or bytes is given, declares its model FLOPs and bytes (a missing one
    stays unknown: MBU null, not 0). The step ends however the block is left; exceptions
    propagate. Also a decorator: ``@mfu.step(flops=...)``.

    flops="count": the first step with a given key runs under
    mfu.flops.counting() (PyTorch's operators are counted as they run) and
    declares the count when it ends; later steps with that key declare the
    same number at their begin and run without counting. The key is the
    place that made the step object: the code object and line of the
    ``with`` statement or of the decorator (so every iteration of one loop,
    or every call of one decorated function, shares it). Pass key= (any
    hashable) to share a count across places, or to count again when the
    work changes (key=batch.shape). A step left by an exception declares no
    count and the next one counts again.

    A count of 0 is not declared (nor for the later steps): the steps keep
    the FLOPs mfu-record counts in library calls. Operators that ran with
    no formula in mfu.flops on large floating-point tensors (a custom
    operator) are named: with nothing else counted the step declares
    nothing, else it declares what was counted. Each count leaves a note in
    the run (flops_count: where the declaration came from; or
    flops_count_missing: what it left out, also a RuntimeWarning)."""


    def __init__(self, flops=None, bytes=None, key=None):
        self.flops = flops
        self.bytes = bytes
        self._key = None
        self._open = []
        if isinstance(flops, str):
            if flops != "count":
                raise ValueError('mfu.step: flops must be a number, None or "count", not %r' % flops)
            if key is None:
                caller = sys._getframe(1)
                key = (caller.f_code, caller.f_lineno)
            self._key = key

    def __enter__(self):
        if self._key is None:
            _step_begin()
            if self.flops is not None or self.bytes is not None:
                _step_model(_num(self.flops), _num(self.bytes))
            return self
        known = _counted.get(self._key)
        counter = None
        if known is None:
            counter = _flops_module().counting()
            _require_torch()
        _step_begin()
        declare = known is not None and known is not _NOTHING
        if declare or self.bytes is not None:
            _step_model(float(known) if declare else _NAN, _num(self.bytes))
        if counter is not None:
            try:
                counter.__enter__()
            except BaseException:
                _step_end()
                raise
        self._open.append(counter)
        return self

    def __exit__(self, *exc):
        counter = self._open.pop() if self._key is not None else None
        try:
            if counter is not None:
                counter.__exit__(*exc)
                if exc[0] is None:
                    result = counter.result
                    declared = result.total if result.total > 0 else None
                    _counted[self._key] = _NOTHING if declared is None else declared
                    if declared is not None:
                        _step_model(float(declared), _NAN)
                    _count_note(self._key, result, declared)
        finally:
            _step_end()
        return False


def _key_text(key):
    """Where a counted step is: file:line for the default key, else the key."""
    if (isinstance(key, tuple) and len(key) == 2 and hasattr(key[0], "co_filename")
            and isinstance(key[1], int)):
        return "%s:%d" % (key[0].co_filename, key[1])
    text = repr(key)
    return "key=" + (text if len(text) <= 80 else text[:77] + "...")


def _count_note(key, result, declared):
    """Say what step(flops="count") declared and why: a note in the run
    (through the counting library that mfu-record preloads, when it is
    there), and a RuntimeWarning when FLOPs were left out or nothing was
    declared."""
    where = _key_text(key)
    unknown = result.unknown_text() if result.unknown else ""
    if declared is not None:
        rows = sorted(result.by_op.items(), key=lambda kv: (-kv[1], kv[0]))
        top = ", ".join("%s %.0f%%" % (op, 100.0 * n / declared) for op, n in rows[:3])
        text = ('mfu.step(flops="count") at %s declared %d FLOPs per step, counted by PyTorch '
                "operator in its first step (%s%s)" % (where, declared, top, ", ..." if len(rows) > 3 else ""))
        if unknown:
            text += ("; operators with no formula in mfu.flops ran on large floating-point tensors, "
                     "and their FLOPs are not in it: %s" % unknown)
    elif unknown:
        text = ('mfu.step(flops="count") at %s declared nothing: the only PyTorch operators of its '
                "first step that may carry FLOPs have no formula in mfu.flops (%s), so its steps "
                "keep the FLOPs of their library calls (lib_flops) where mfu-record counts them; "
                "declare the FLOPs (mfu.step(flops=N)) for an MFU of the whole model" % (where, unknown))
    else:
        text = ('mfu.step(flops="count") at %s declared nothing: it counted no FLOPs in its first '
                "step (no matrix product or convolution reached PyTorch's dispatcher), so its "
                "steps keep the FLOPs of their library calls (lib_flops) where mfu-record counts "
                "them" % where)
    missing = declared is None or bool(unknown)
    _run_note(text, missing)
    if missing:
        warnings.warn("mfu: " + text, RuntimeWarning, stacklevel=3)


_note_fn = None


def _run_note(text, missing):
    """A line for the run's notes, through the counting library
    (libmfu-libflops.so exports mfu_libflops_note when mfu-record preloads
    it); nothing when it is not there."""
    global _note_fn
    if _note_fn is None:
        _note_fn = False
        if recording():
            try:
                f = ctypes.CDLL(None).mfu_libflops_note
                f.argtypes = [ctypes.c_char_p, ctypes.c_int]
                f.restype = ctypes.c_int
                _note_fn = f
            except (OSError, AttributeError):
                pass
    if _note_fn:
        _note_fn(text.encode("ascii", "backslashreplace"), 1 if missing else 0)


def _require_torch():
    """RuntimeError, before the step begins, if step(flops="count") cannot
    count for want of PyTorch."""
    try:
        import torch  # noqa: F401
    except ImportError as e:
        raise RuntimeError(
            'mfu.step(flops="count") counts PyTorch operators, and this Python (%s) '
            "cannot import torch (%s). Declare the step's FLOPs as a number instead "
            "(mfu.step(flops=N); mfu.flops.transformer() and mfu.flops.matmul() compute "
            "common ones), or leave flops out: mfu-record counts the FLOPs of BLAS and "
            "oneDNN calls by itself unless given --no-lib-flops."
            % (sys.executable or "python", e)
        ) from None


class phase(contextlib.ContextDecorator):
    """``with mfu.phase("forward"):`` marks a phase of the current step in
    the calling thread; flops= and bytes= declare its model FLOPs and bytes.
    The phase ends however the block is left; exceptions propagate. Also a
    decorator: ``@mfu.phase("optimizer")``."""


    def __init__(self, name, flops=None, bytes=None):
        # Encoded once here; C copies the name during each call.
        self.name = _name(name)
        self.flops = flops
        self.bytes = bytes

    def __enter__(self):
        _phase_begin(self.name)
        if self.flops is not None or self.bytes is not None:
            _phase_model(_num(self.flops), _num(self.bytes))
        return self

    def __exit__(self, *exc):
        _phase_end(self.name)
        return False
