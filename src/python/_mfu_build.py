"""The build backend of pyproject.toml (PEP 517, PEP 660): the wheel of the
Python module, built with nothing but the standard library, so that
``pip install ./src/python`` works offline, in a virtualenv, with or
without build isolation (there is nothing to download: no setuptools, no
wheel package).

The wheel holds mfu.py, mfu_flops.py (imported by mfu.py as mfu.flops),
mfu_track.py (mfu.TrackedOptimizer, mfu.MFUCallback, mfu.Every) and
the hook of --step py: (mfu_hook/sitecustomize.py, not on sys.path: it is
there so that MFU_PYTHON_DIR=<site-packages> gives mfu-record a complete
set), as meson installs them into <datadir>/mfu/python. An editable
install (pip install -e) is a .pth file naming this directory.
"""

import base64
import hashlib
import io
import os
import re
import tarfile
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
FILES = ("mfu.py", "mfu_flops.py", "mfu_track.py", "mfu_hook/sitecustomize.py")
TOP_LEVEL = ("mfu", "mfu_flops", "mfu_track")
# Reproducible archives: the time of SOURCE_DATE_EPOCH, else 1980-01-01
# (the earliest a zip file can hold).
EPOCH = max(int(os.environ.get("SOURCE_DATE_EPOCH", "315532800")), 315532800)


def _project():
    """name, version, description and requires-python of [project]."""
    with open(os.path.join(HERE, "pyproject.toml"), "rb") as f:
        raw = f.read()
    try:
        import tomllib  # Python 3.11+
    except ImportError:
        tomllib = None
    if tomllib is not None:
        return tomllib.loads(raw.decode("utf-8"))["project"]
    # Older Pythons: the plain key = "string" lines of [project], all it has.
    project, table = {}, None
    for line in raw.decode("utf-8").splitlines():
        m = re.match(r"\s*\[([^\]]+)\]\s*$", line)
        if m:
            table = m.group(1).strip()
            continue
        m = re.match(r'\s*([A-Za-z0-9_-]+)\s*=\s*"([^"]*)"\s*$', line)
        if m and table == "project":
            project[m.group(1)] = m.group(2)
    return project


def _dist_info():
    p = _project()
    name, version = p["name"], p["version"]
    metadata = ("Metadata-Version: 2.1\nName: %s\nVersion: %s\nSummary: %s\nRequires-Python: %s\n"
                % (name, version, p.get("description", ""), p.get("requires-python", ">=3")))
    wheel = ("Wheel-Version: 1.0\nGenerator: mfu _mfu_build.py\nRoot-Is-Purelib: true\n"
             "Tag: py3-none-any\n")
    base = "%s-%s" % (re.sub(r"[-_.]+", "_", name).lower(), version)
    return base, {
        "METADATA": metadata.encode("utf-8"),
        "WHEEL": wheel.encode("utf-8"),
        "top_level.txt": "".join(t + "\n" for t in TOP_LEVEL).encode("utf-8"),
    }


def _read(rel):
    with open(os.path.join(HERE, rel), "rb") as f:
        return f.read()


def _write_wheel(wheel_directory, entries):
    base, info = _dist_info()
    dist = base + ".dist-info"
    entries = list(entries) + [(dist + "/" + k, v) for k, v in sorted(info.items())]
    record = []
    for path, data in entries:
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append("%s,sha256=%s,%d\n" % (path, digest, len(data)))
    record.append("%s/RECORD,,\n" % dist)
    entries.append((dist + "/RECORD", "".join(record).encode("utf-8")))
    name = base + "-py3-none-any.whl"
    os.makedirs(wheel_directory, exist_ok=True)
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w", zipfile.ZIP_DEFLATED) as z:
        for path, data in entries:
            zi = zipfile.ZipInfo(path, _date())
            zi.external_attr = 0o644 << 16
            zi.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(zi, data)
    return name


def _date():
    import time

    return time.gmtime(EPOCH)[:6]


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    base, info = _dist_info()
    dist = os.path.join(metadata_directory, base + ".dist-info")
    os.makedirs(dist, exist_ok=True)
    for k, v in info.items():
        with open(os.path.join(dist, k), "wb") as f:
            f.write(v)
    return base + ".dist-info"


prepare_metadata_for_build_editable = prepare_metadata_for_build_wheel


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    return _write_wheel(wheel_directory, [(rel, _read(rel)) for rel in FILES])


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    # The modules stay here: a .pth line puts this directory on sys.path.
    return _write_wheel(wheel_directory, [("mfu.pth", (HERE + "\n").encode("utf-8"))])


def build_sdist(sdist_directory, config_settings=None):
    base, info = _dist_info()
    name = base + ".tar.gz"
    os.makedirs(sdist_directory, exist_ok=True)
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz", format=tarfile.PAX_FORMAT) as t:
        for rel, data in [("PKG-INFO", info["METADATA"])] + [
                (rel, _read(rel)) for rel in ("pyproject.toml", "_mfu_build.py") + FILES]:
            ti = tarfile.TarInfo(base + "/" + rel)
            ti.size, ti.mtime, ti.mode = len(data), EPOCH, 0o644
            t.addfile(ti, io.BytesIO(data))
    return name
