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
    "last_step",
    "enable",
    "disable",
    "StepResult",
    "Peaks",
    "TrackedOptimizer",
    "MFUCallback",
    "Every",
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
_last_step_c = None  # mfu_last_step, None: a libmfu older than the results
_enable_c = None
_disable_c = None

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
        # the results of the last step (libmfu 0.2): optional, an older
        # library has the markers only
        for name, argtypes, restype in (
            ("mfu_last_step", [ctypes.POINTER(_CStepResult)], ctypes.c_int),
            ("mfu_enable", [ctypes.c_double, ctypes.c_double, ctypes.c_char_p], ctypes.c_int),
            ("mfu_disable", [], None),
        ):
            f = getattr(lib, name, None)
            if f is not None:
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
    global _last_step_c, _enable_c, _disable_c
    _last_step_c = fns["mfu_last_step"]
    _enable_c = fns["mfu_enable"]
    _disable_c = fns["mfu_disable"]


class _CStepResult(ctypes.Structure):
    """struct mfu_step_result of mfu.h (its first version)."""

    _fields_ = [
        ("size", ctypes.c_uint),
        ("flops_source", ctypes.c_uint),
        ("measured_by", ctypes.c_uint),
        ("reserved", ctypes.c_uint),
        ("step", ctypes.c_ulonglong),
        ("wall_ns", ctypes.c_ulonglong),
        ("flops", ctypes.c_double),
        ("model_flops", ctypes.c_double),
        ("model_bytes", ctypes.c_double),
        ("lib_flops", ctypes.c_double),
        ("flops_per_s", ctypes.c_double),
        ("mfu", ctypes.c_double),
        ("mbu", ctypes.c_double),
        ("peak_flops", ctypes.c_double),
        ("peak_bw", ctypes.c_double),
        ("peak_source", ctypes.c_char_p),
        ("dtype", ctypes.c_char_p),
        ("why", ctypes.c_char_p),
    ]


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


_TRACK_NAMES = ("TrackedOptimizer", "MFUCallback", "Every")


def __getattr__(name):
    # Module attribute hook (PEP 562): mfu.flops is imported when first used,
    # and so are the integrations (mfu_track.py).
    if name == "flops":
        mod = _flops_module()
        globals()["flops"] = mod
        return mod
    if name in _TRACK_NAMES:
        mod = importlib.import_module(__package__ + ".mfu_track" if __package__ else "mfu_track")
        for n in _TRACK_NAMES:
            globals()[n] = getattr(mod, n)
        return globals()[name]
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


class StepResult(object):
    """The results of one step (mfu.last_step(), step.result): what
    mfu-report shows in its steps section, for the program itself.

    step         its number (from 0, as mfu-report numbers them)
    wall_ms      its wall time, milliseconds
    flops        the MFU numerator (None: unknown), flops_source says which:
                 "declared" (flops=N), "counted" (flops="count": PyTorch
                 operators counted by mfu.flops), "library" (the BLAS/oneDNN
                 calls mfu-record counted), None
    model_flops, model_bytes, lib_flops   the parts (None: not known)
    flops_per_s  flops / wall time
    mfu, mbu     fractions of peak_flops, peak_bw (None: unknown; why says why)
    peak_flops, peak_bw, peak_source, dtype   the peaks divided by
    measured_by  "recorder" (mfu-record's peaks and counts: the report's
                 figures) or "in-process" (mfu.enable())
    Unknown values are None, never 0."""

    __slots__ = ("step", "wall_ms", "flops", "flops_source", "model_flops", "model_bytes", "lib_flops",
                 "flops_per_s", "mfu", "mbu", "peak_flops", "peak_bw", "peak_source", "dtype", "why",
                 "measured_by")

    def __init__(self, **kw):
        for k in self.__slots__:
            setattr(self, k, kw.get(k))

    def as_dict(self):
        return dict((k, getattr(self, k)) for k in self.__slots__)

    def __repr__(self):
        return "StepResult(%s)" % ", ".join("%s=%r" % (k, getattr(self, k)) for k in self.__slots__)


def _opt(x):
    return None if x != x else x  # NAN -> None


def _text(b):
    return None if b is None else b.decode("utf-8", "replace")


_SOURCES = {1: "declared", 2: "library"}
_c_result = None
_last = None
_last_counted = None  # the number of the last step whose FLOPs were counted
# Whether steps are measured: launched by mfu-record (its ring is in the
# environment), or mfu.enable(). Not measured, a step fetches nothing.
_measured = bool(os.environ.get("MFU_RING_FD"))
_peaks = None


def _fetch(counted=False):
    """The last step's results from libmfu (None when it has none)."""
    global _c_result, _last
    if _last_step_c is None:
        return None
    if _c_result is None:
        _c_result = _CStepResult()
    r = _c_result
    r.size = ctypes.sizeof(_CStepResult)
    if _last_step_c(ctypes.byref(r)) != 0:
        return None
    global _last_counted
    src = _SOURCES.get(r.flops_source)
    if src == "declared" and counted:
        src = "counted"
        _last_counted = r.step
    _last = StepResult(
        step=r.step, wall_ms=r.wall_ns / 1e6, flops=_opt(r.flops), flops_source=src,
        model_flops=_opt(r.model_flops), model_bytes=_opt(r.model_bytes), lib_flops=_opt(r.lib_flops),
        flops_per_s=_opt(r.flops_per_s), mfu=_opt(r.mfu), mbu=_opt(r.mbu),
        peak_flops=_opt(r.peak_flops), peak_bw=_opt(r.peak_bw), peak_source=_text(r.peak_source),
        dtype=_text(r.dtype) or (_peaks.dtype if _peaks else None), why=_text(r.why),
        measured_by="recorder" if r.measured_by == 1 else "in-process")
    return _last


def last_step():
    """The StepResult of the last step this process ended (through any
    marker: mfu.step, step_end(), C code), or None when no step ended while
    measured: under mfu-record, or after mfu.enable()."""
    if not _measured:
        return None
    res = _fetch(False)
    if res is not None and res.flops_source == "declared" and res.step == _last_counted:
        res.flops_source = "counted"
    return res


class Peaks(object):
    """The peaks the in-process mode divides by (mfu.enable()'s answer):
    flops (FLOP/s), bw (bytes/s), each None when unknown, their sources,
    dtype, and why (why flops is unknown, and how to get it)."""

    __slots__ = ("flops", "flops_source", "bw", "bw_source", "dtype", "why")

    def __init__(self, **kw):
        for k in self.__slots__:
            setattr(self, k, kw.get(k))

    def __repr__(self):
        return "Peaks(%s)" % ", ".join("%s=%r" % (k, getattr(self, k)) for k in self.__slots__)


def profile_path():
    """The machine profile mfu-calibrate writes and mfu-record reads:
    $XDG_CACHE_HOME/mfu/profile-HOST.sqlite, else
    ~/.cache/mfu/profile-HOST.sqlite."""
    import re
    import socket

    host = re.sub(r"[^A-Za-z0-9._-]", "_", socket.gethostname() or "unknown")
    if host.startswith("."):
        host = "_" + host[1:]
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    base = os.path.join(xdg, "mfu") if xdg.startswith("/") else os.path.join(
        os.path.expanduser("~"), ".cache", "mfu")
    return os.path.join(base, "profile-%s.sqlite" % host)


def _cpu_list():
    """This process's CPU set as mfu writes it ("0-3,8")."""
    cpus = sorted(os.sched_getaffinity(0))
    out, i = [], 0
    while i < len(cpus):
        j = i
        while j + 1 < len(cpus) and cpus[j + 1] == cpus[j] + 1:
            j += 1
        out.append(str(cpus[i]) if i == j else "%d-%d" % (cpus[i], cpus[j]))
        i = j + 1
    return ",".join(out)


def _cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return None


def read_profile(dtype="fp32", path=None):
    """The peaks of the machine profile at path (default profile_path()) for
    this host and CPU set: the fastest undisturbed FLOP/s of dtype and the
    triad bandwidth, measured by mfu-calibrate with all the CPUs of this
    process's set (the figures mfu-record --peak measured uses; its default,
    auto, takes the spec peak instead where that is higher, and where the
    profile lacks an undisturbed all-CPU figure of the fastest one-core
    kernel it multiplies that one by the cores). Returns Peaks;
    a peak that does not apply is None and why says why and what to run."""
    import sqlite3

    path = path or profile_path()
    how = "make one with mfu-calibrate (a few seconds), or pass mfu.enable(peak_flops=...)"
    if not os.path.exists(path):
        return Peaks(dtype=dtype, why="no machine profile at %s: %s" % (path, how))
    try:
        db = sqlite3.connect("file:%s?mode=ro" % path, uri=True)
    except sqlite3.Error as e:
        return Peaks(dtype=dtype, why="cannot open the machine profile %s (%s): %s" % (path, e, how))
    try:
        version = db.execute("PRAGMA user_version").fetchone()[0]
        if version < 2:
            return Peaks(dtype=dtype, why="the machine profile %s has the older format %d (no host): run "
                         "mfu-calibrate" % (path, version))
        host, cpu_name, set_cpus = db.execute(
            "SELECT host, cpu_name, allowed_cpus FROM machine WHERE id = 1").fetchone()
        import socket

        if host != socket.gethostname():
            return Peaks(dtype=dtype, why="the machine profile %s is for host %s (this is %s): %s"
                         % (path, host, socket.gethostname(), how))
        here = _cpu_name()
        if here and cpu_name and here.strip() != cpu_name.strip():
            return Peaks(dtype=dtype, why="the machine profile %s is for another CPU (%s; this is %s): %s"
                         % (path, cpu_name, here, how))
        cpus = _cpu_list()
        # as mfu-record's peaks.c picks them: for FLOPs the fastest
        # undisturbed figure of any kernel, for bandwidth the best (triad)
        if version >= 3:
            q = ("SELECT value, kernel, detail, measured_unix_s FROM measurement WHERE kind = ? AND "
                 "scope = 'all' AND disturbed = 0 AND cpus = ? %s ORDER BY value DESC LIMIT 1")
            args = (cpus,)
        else:
            # format 2: the CPU set is the machine row's, a disturbed
            # figure says so in its detail only (as profile_load.c reads it)
            q = ("SELECT value, kernel, detail, measured_unix_s FROM measurement WHERE kind = ? AND "
                 "scope = 'all' AND coalesce(detail, '') NOT LIKE '%%disturbed: the threads ran%%' "
                 "AND ? = ? %s ORDER BY value DESC LIMIT 1")
            args = (set_cpus, cpus)
        f = db.execute(q % "AND dtype = ?", ("flops",) + args + (dtype,)).fetchone()
        b = db.execute(q % "AND best = 1", ("bandwidth",) + args).fetchone()
    except (sqlite3.Error, TypeError) as e:
        return Peaks(dtype=dtype, why="cannot read the machine profile %s (%s): run mfu-calibrate" % (path, e))
    finally:
        db.close()

    def source(row):
        import time

        detail = row[2] or row[1]
        if detail.startswith("measured: "):
            detail = detail[len("measured: "):]
        return "measured (%s, %s): %s" % (path, time.strftime("%Y-%m-%d", time.gmtime(row[3])), detail)

    why = None
    if f is None:
        why = ("the machine profile %s has no undisturbed %s FLOP/s measured with all of CPUs %s (this "
               "process's set): run mfu-calibrate with this CPU set, on a quiet machine, or pass "
               "mfu.enable(peak_flops=...)" % (path, dtype, cpus))
    return Peaks(flops=f[0] if f else None, flops_source=source(f) if f else None,
                 bw=b[0] if b else None, bw_source=source(b) if b else None, dtype=dtype, why=why)


def enable(peak_flops=None, peak_bw=None, dtype="fp32", profile=None, quiet=False):
    """Switch the in-process mode on: without mfu-record, libmfu times every
    step itself, and step.mfu, step.result and last_step() give the results.
    The peak is peak_flops (FLOP/s) when given, else the one mfu-calibrate
    measured for dtype in the machine profile (read_profile(): profile= or
    the default); none is made up: without one MFU is None, and the line
    printed once on stderr (unless quiet) says how to get one. peak_bw
    (bytes/s, for MBU) likewise. Under mfu-record the recorder's peaks are
    used instead, whatever is given here. Returns Peaks (what will be
    divided by). The default, not calling this, keeps every marker a no-op."""
    global _measured, _peaks
    if _enable_c is None:
        raise RuntimeError("mfu.enable() needs libmfu 0.2 (the results of the last step): %s"
                           % ("this one is older: " + str(_lib_path) if _lib is not None
                              else "libmfu was not loaded (%s)" % _load_error))
    if os.environ.get("MFU_RING_FD") and recording():
        pk = Peaks(dtype=os.environ.get("MFU_RECORD_DTYPE", dtype),
                   flops=_opt(float(os.environ.get("MFU_RECORD_PEAK_FLOPS", "nan"))),
                   flops_source=os.environ.get("MFU_RECORD_PEAK_FLOPS_SOURCE"),
                   bw=_opt(float(os.environ.get("MFU_RECORD_PEAK_BW", "nan"))),
                   bw_source=os.environ.get("MFU_RECORD_PEAK_BW_SOURCE"))
        pk.why = None if pk.flops else "mfu-record knows no peak FLOP/s for this CPU (mfu-record --peak-flops)"
        who = "mfu-record's"
    else:
        pk = read_profile(dtype, profile) if peak_flops is None or peak_bw is None else Peaks(dtype=dtype)
        if peak_flops is not None:
            pk.flops, pk.flops_source, pk.why = float(peak_flops), "given to mfu.enable()", None
        if peak_bw is not None:
            pk.bw, pk.bw_source = float(peak_bw), "given to mfu.enable()"
        who = "in-process mode"
    _enable_c(pk.flops or _NAN, pk.bw or _NAN, (pk.flops_source or "").encode("utf-8", "replace"))
    _measured = True
    _peaks = pk
    if not quiet:
        if pk.flops:
            line = "mfu: %s: MFU against %.4g %s FLOP/s, %s" % (who, pk.flops, pk.dtype, pk.flops_source)
        else:
            line = "mfu: %s: MFU unknown: %s" % (who, pk.why)
        sys.stderr.write(line + "\n")
        sys.stderr.flush()
    return pk


def disable():
    """Switch the in-process mode off: markers are no-ops again."""
    global _measured
    if _disable_c is not None:
        _disable_c()
    _measured = bool(os.environ.get("MFU_RING_FD"))


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
        self.result = None
        if isinstance(flops, str):
            if flops != "count":
                raise ValueError('mfu.step: flops must be a number, None or "count", not %r' % flops)
            if key is None:
                caller = sys._getframe(1)
                key = (caller.f_code, caller.f_lineno)
            self._key = key

    # The results of the step that ended last through this object (its
    # StepResult, None before one ended or when steps are not measured).
    mfu = property(lambda self: self.result and self.result.mfu)
    mbu = property(lambda self: self.result and self.result.mbu)
    wall_ms = property(lambda self: self.result and self.result.wall_ms)
    flops_per_s = property(lambda self: self.result and self.result.flops_per_s)
    flops_used = property(lambda self: self.result and self.result.flops)
    flops_source = property(lambda self: self.result and self.result.flops_source)
    peak_flops = property(lambda self: self.result and self.result.peak_flops)
    peak_source = property(lambda self: self.result and self.result.peak_source)

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
            if _measured:
                counted = self._key is not None and _counted.get(self._key, _NOTHING) is not _NOTHING
                self.result = _fetch(counted)
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


# MFU_INPROCESS=1: the in-process mode from the start (libmfu switched it on
# already; this gives it the profile's peak and says which, once).
if (os.environ.get("MFU_INPROCESS", "") not in ("", "0") and _enable_c is not None
        and not os.environ.get("MFU_RING_FD")):
    enable(peak_flops=os.environ.get("MFU_PEAK_FLOPS") or None, peak_bw=os.environ.get("MFU_PEAK_BW") or None,
           dtype=os.environ.get("MFU_DTYPE", "fp32"))
