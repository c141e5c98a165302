"""mfu's Python hook: steps and phases from Python functions, without edits.

mfu-record --step py:NAME (or --phase LABEL=py:NAME) runs the program with
this directory first on PYTHONPATH, so every Python process it starts
imports this file at startup, as ``sitecustomize`` (the user's own
sitecustomize, if any, is imported right after, as Python would have). It
reads what to look for from the environment:

    MFU_PY_HOOK         one request per line: "step<TAB>NAME" or
                        "phase<TAB>NAME<TAB>LABEL"
    MFU_PY_HOOK_MFU     the path of mfu.py (the marker module)
    MFU_PY_HOOK_STATUS  a file to append what happened to, for mfu-record

NAME is a dotted Python name: the function's qualified name (``f``,
``Net.forward``), optionally after its module (``train.f``,
``pkg.model.Net.forward``). A module is known by its ``__name__`` or by its
file: ``train`` names ``/any/dir/train.py`` (so a script run as
``python3 train.py`` is ``train``, not only ``__main__``).

How: a profile function (sys.setprofile, and threading.setprofile for new
threads) looks at each call until it sees the function's first call. That
call becomes a step through mfu.step_begin()/step_end() (or a phase), and
the function object is replaced where it is defined (the module or class
attribute, and every other name there bound to the same object, such as
torch's ``Module.__call__ = _call_impl``) by a wrapper that marks every
later call, after which the
profile function removes itself: the program then runs at full speed. A
function that cannot be replaced (a nested function, a generator or
coroutine, a name bound elsewhere) keeps the profile function, which then
marks every call itself (slower: every Python call passes through it).
Only the outermost call of a recursion is a step. Steps are counted with
the marker library's exact counter readings.
"""

import os
import sys


def _chain_user_sitecustomize():
    """Import the sitecustomize this one shadows, then leave sys.path and
    sys.modules as Python would have them."""
    here = os.path.dirname(os.path.abspath(__file__))
    me = sys.modules.get("sitecustomize")
    saved = list(sys.path)
    sys.path[:] = [p for p in saved if os.path.abspath(p or ".") != here]
    rest = list(sys.path)
    sys.modules.pop("sitecustomize", None)
    user = None
    try:
        import sitecustomize as user  # noqa: F401  (the user's, if any)
    except ImportError as e:
        if e.name != "sitecustomize":
            raise
        user = None
    finally:
        sys.path[:] = rest
        sys.modules["sitecustomize"] = user if user is not None else me


_CO_NOT_WRAPPABLE = 0x20 | 0x80 | 0x200  # generator, coroutine, async generator
_UNSEEN = object()  # a code object the profile function has not looked at


class _Request:
    __slots__ = ("index", "role", "target", "label", "calls", "how", "where", "local", "aliases")

    def __init__(self, index, role, target, label):
        self.index = index
        self.role = role
        self.target = target
        self.label = label
        self.calls = 0
        self.how = None
        self.where = None
        self.local = None
        self.aliases = []


class _Hook:
    def __init__(self, requests, mfu, status):
        import threading

        self.threading = threading
        self.requests = requests
        self.mfu = mfu
        self.status = status
        self.cache = {}          # code object -> _Request or None
        self.open_frames = {}    # frame -> _Request, for calls the profile function began
        self.depth = {}          # (thread id, request index) -> nesting depth
        self.active = True
        self.pid = os.getpid()
        for r in requests:
            r.local = threading.local()

    # -- status, for mfu-record --
    def say(self, *words):
        if not self.status:
            return
        try:
            with open(self.status, "a") as f:
                f.write(" ".join(str(w).replace("\n", " ") for w in words) + "\n")
        except OSError:
            pass

    # -- matching --
    @staticmethod
    def module_names(frame):
        names = []
        g = frame.f_globals
        n = g.get("__name__")
        if isinstance(n, str):
            names.append(n)
        path = frame.f_code.co_filename
        if path.endswith(".py"):
            parts = path[:-3].replace(os.sep, "/").split("/")
            if parts and parts[-1] == "__init__":
                parts.pop()
            parts = [p for p in parts if p]
            for i in range(len(parts)):
                names.append(".".join(parts[i:]))
        return names

    def match(self, frame):
        code = frame.f_code
        qual = getattr(code, "co_qualname", code.co_name)
        for r in self.requests:
            t = r.target
            if t == qual:
                return r
            if t.endswith("." + qual):
                mod = t[: -len(qual) - 1]
                if mod in self.module_names(frame):
                    return r
        return None

    # -- marking --
    def begin(self, r):
        key = (self.threading.get_ident(), r.index)
        d = self.depth.get(key, 0)
        self.depth[key] = d + 1
        if d == 0:
            r.calls += 1
            if r.role == "step":
                self.mfu.step_begin()
            else:
                self.mfu.phase_begin(r.label)

    def end(self, r):
        key = (self.threading.get_ident(), r.index)
        d = self.depth.get(key, 0)
        if d <= 0:
            return
        if d == 1:
            del self.depth[key]
            if r.role == "step":
                self.mfu.step_end()
            else:
                self.mfu.phase_end(r.label)
        else:
            self.depth[key] = d - 1

    # -- replacing the function where it is defined --
    def wrap(self, frame, r):
        code = frame.f_code
        if code.co_flags & _CO_NOT_WRAPPABLE:
            return "a generator or coroutine: each resumption is a call"
        qual = getattr(code, "co_qualname", code.co_name)
        parts = qual.split(".")
        if "<locals>" in parts or any(p.startswith("<") for p in parts):
            return "a nested function or lambda: not reachable by name"
        owner = sys.modules.get(frame.f_globals.get("__name__"))
        if owner is None:
            return "its module is not in sys.modules"
        try:
            for p in parts[:-1]:
                owner = vars(owner)[p]
            raw = vars(owner)[parts[-1]]
        except (KeyError, TypeError):
            return "not found at %s" % qual
        kind = None
        fn = raw
        if isinstance(raw, (staticmethod, classmethod)):
            kind = type(raw)
            fn = raw.__func__
        if getattr(fn, "__code__", None) is not code:
            return "the name %s is bound to something else" % qual
        import functools

        hook = self

        @functools.wraps(fn)
        def mfu_wrapper(*args, **kwargs):
            hook.begin(r)
            try:
                return fn(*args, **kwargs)
            finally:
                hook.end(r)

        # other names of the same object where it is defined are the same
        # function called another way (torch: Module.__call__ = _call_impl):
        # they get the wrapper too, or calls through them would not be seen
        names = [parts[-1]] + sorted(n for n, v in vars(owner).items() if v is raw and n != parts[-1])
        try:
            for n in names:
                setattr(owner, n, kind(mfu_wrapper) if kind else mfu_wrapper)
        except (AttributeError, TypeError) as e:
            return "cannot replace it: %s" % e
        r.aliases = names[1:]
        return None

    def maybe_stop(self):
        if all(r.how == "wrapped" for r in self.requests) and not self.open_frames:
            self.active = False

    # -- the profile function --
    def profile(self, frame, event, arg):
        if not self.active:
            sys.setprofile(None)
            return
        if event == "call":
            code = frame.f_code
            r = self.cache.get(code, _UNSEEN)
            if r is _UNSEEN:
                r = self.cache[code] = self.match(frame)
                if r is not None and r.how is None:
                    # the first function that matches is the one measured
                    why = self.wrap(frame, r)
                    r.how = "wrapped" if why is None else "profiled"
                    r.where = code.co_filename
                    said = why or ("also as " + ",".join(r.aliases) if r.aliases else "")
                    self.say("found", self.pid, r.index, r.how, code.co_filename, said)
                elif r is not None and r.where != code.co_filename:
                    r = self.cache[code] = None
            if r is not None:
                self.open_frames[frame] = r
                self.begin(r)
        elif event == "return" and frame in self.open_frames:
            r = self.open_frames.pop(frame)
            self.end(r)
            self.maybe_stop()

    def finish(self):
        for r in self.requests:
            self.say("calls", self.pid, r.index, r.calls)


def _load_mfu(path):
    import importlib.util

    spec = importlib.util.spec_from_file_location("mfu", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    sys.modules.setdefault("mfu", mod)
    return mod


def _install():
    text = os.environ.get("MFU_PY_HOOK")
    if not text:
        return
    status = os.environ.get("MFU_PY_HOOK_STATUS")
    requests = []
    for i, line in enumerate(text.split("\n")):
        f = line.split("\t")
        if len(f) >= 2 and f[0] in ("step", "phase"):
            requests.append(_Request(i, f[0], f[1], f[2] if len(f) > 2 else None))
    if not requests:
        return
    try:
        mfu = _load_mfu(os.environ["MFU_PY_HOOK_MFU"])
    except Exception as e:  # report, never break the program
        hook = _Hook([], None, status)
        hook.say("error", os.getpid(), "cannot load mfu.py: %s" % e)
        return
    hook = _Hook(requests, mfu, status)
    hook.say("load", hook.pid, sys.executable, "%d.%d" % sys.version_info[:2])
    import atexit

    atexit.register(hook.finish)
    sys.setprofile(hook.profile)
    hook.threading.setprofile(hook.profile)


try:
    _install()
finally:
    _chain_user_sitecustomize()
