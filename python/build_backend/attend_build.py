"""attend_build — the in-tree PEP 517 build backend of the Python package.

pyproject.toml names it (build-backend = "attend_build", backend-path =
["python/build_backend"], requires = []), so

    python3 -m venv --system-site-packages v && v/bin/pip install --no-build-isolation --no-index .

needs nothing beyond the standard library, pip and CMake: no PyPI, no
setuptools, no scikit-build. build_wheel

  1. configures the project with CMake (Release, -DATTEND_TESTS=OFF,
     -DATTEND_SHARED=ON, plus $CMAKE_ARGS) and builds only libattend.so
     (target attend_shared), in `build-wheel/` beside pyproject.toml (a
     second install rebuilds only what changed), or in the directory given as
     `--config-settings build-dir=DIR` or $ATTEND_WHEEL_BUILD_DIR;
  2. writes a wheel holding python/attend/*.py, a _where.py that points the
     package at the files beside it, libattend.so.0, the shipped G2P models
     (models/*.safetensors, their README and the CMUdict licence) and py.typed.

The wheel is tagged py3-none-<platform>: it runs on any Python 3 (ctypes, no
extension module) of the platform it was built on. Its version is
CMakeLists.txt's project(attend VERSION ...), the library's own.
"""
import base64
import hashlib
import io
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import tempfile
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
NAME = "attend"
SONAME = "libattend.so.0"


# ------------------------------------------------------------ metadata
def _version():
    text = open(os.path.join(ROOT, "CMakeLists.txt"), encoding="utf-8").read()
    m = re.search(r"project\(\s*attend\s+VERSION\s+([0-9][0-9.]*)", text)
    if not m:
        raise RuntimeError("attend_build: no `project(attend VERSION x.y.z)` in CMakeLists.txt")
    return m.group(1)


def _project():
    """The [project] table of pyproject.toml (tomllib where there is one; the
    few plain keys this file uses otherwise)."""
    path = os.path.join(ROOT, "pyproject.toml")
    try:
        import tomllib
        with open(path, "rb") as f:
            return tomllib.load(f).get("project", {})
    except ImportError:
        pass
    out, section = {}, None
    text = open(path, encoding="utf-8").read()
    for m in re.finditer(r'^\[([^\]]+)\]\s*$|^(\w[\w-]*)\s*=\s*("(?:[^"\\]|\\.)*"|\[[^\]]*\])', text, re.M):
        if m.group(1):
            section = m.group(1).strip()
        elif section == "project":
            v = m.group(3)
            out[m.group(2)] = re.findall(r'"((?:[^"\\]|\\.)*)"', v) if v.startswith("[") else v[1:-1]
    return out


def _metadata():
    p = _project()
    lines = ["Metadata-Version: 2.1", "Name: " + NAME, "Version: " + _version()]
    if p.get("description"):
        lines.append("Summary: " + p["description"])
    if p.get("requires-python"):
        lines.append("Requires-Python: " + p["requires-python"])
    if p.get("keywords"):
        lines.append("Keywords: " + ",".join(p["keywords"]))
    for c in p.get("classifiers", []):
        lines.append("Classifier: " + c)
    for d in p.get("dependencies", []):
        lines.append("Requires-Dist: " + d)
    body = ""
    readme = p.get("readme")
    if isinstance(readme, str) and os.path.isfile(os.path.join(ROOT, readme)):
        lines.append("Description-Content-Type: text/markdown")
        body = "\n" + open(os.path.join(ROOT, readme), encoding="utf-8").read()
    return "\n".join(lines) + "\n" + body


def _tag():
    plat = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    return "py3-none-" + plat


def _dist_info():
    return "%s-%s.dist-info" % (NAME, _version())


# ------------------------------------------------------------ building
def _log(msg):
    print("attend_build: " + msg, file=sys.stderr, flush=True)


def _build_dir(config_settings):
    d = (config_settings or {}).get("build-dir") or os.environ.get("ATTEND_WHEEL_BUILD_DIR")
    if d:
        return os.path.abspath(d), False
    d = os.path.join(ROOT, "build-wheel")
    if os.access(ROOT, os.W_OK):
        return d, False
    return tempfile.mkdtemp(prefix="attend-wheel-"), True


def _run(cmd):
    _log(" ".join(cmd))
    r = subprocess.run(cmd)
    if r.returncode != 0:
        raise RuntimeError("attend_build: `%s` failed with exit status %d (its output is above)"
                           % (" ".join(cmd), r.returncode))


def _cmake_library(bdir):
    """Configures and builds libattend.so in bdir; returns its real path."""
    cmake = shutil.which("cmake")
    if not cmake:
        raise RuntimeError("attend_build: cmake not found (Debian: apt-get install cmake make gcc)")
    args = [cmake, "-S", ROOT, "-B", bdir, "-DCMAKE_BUILD_TYPE=Release", "-DATTEND_TESTS=OFF",
            "-DATTEND_SHARED=ON"]
    args += os.environ.get("CMAKE_ARGS", "").split()
    _run(args)
    jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL") or str(min(os.cpu_count() or 1, 2))
    _run([cmake, "--build", bdir, "--target", "attend_shared", "-j", jobs])
    lib = os.path.join(bdir, SONAME)
    if not os.path.exists(lib):
        raise RuntimeError("attend_build: the build made no %s in %s" % (SONAME, bdir))
    return os.path.realpath(lib)


WHERE = '''# Written by the wheel build (python/build_backend/attend_build.py):
# libattend.so.0 and the shipped models are inside the package.
LIBDIR = "."
G2P_MODEL = "models/g2p-cmudict.safetensors"
'''


def _files(lib):
    """(path in the wheel, bytes or source path) of everything the wheel holds."""
    out = []
    pkg = os.path.join(ROOT, "python", NAME)
    for n in sorted(os.listdir(pkg)):
        if n.endswith(".py") or n == "py.typed":
            out.append((NAME + "/" + n, os.path.join(pkg, n)))
    out.append((NAME + "/_where.py", WHERE.encode()))
    out.append((NAME + "/" + SONAME, lib))
    models = os.path.join(ROOT, "models")
    for n in sorted(os.listdir(models)):
        if n.endswith(".safetensors") or n == "README.md":
            out.append((NAME + "/models/" + n, os.path.join(models, n)))
    out.append((NAME + "/models/LICENSE-cmudict.txt", os.path.join(ROOT, "data", "g2p", "LICENSE-cmudict.txt")))
    return out


def _record_line(path, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return "%s,sha256=%s,%d" % (path, digest, len(data))


def _write_wheel(wheel_directory, lib):
    name = "%s-%s-%s.whl" % (NAME, _version(), _tag())
    path = os.path.join(wheel_directory, name)
    di = _dist_info()
    records = []
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        def add(arc, data, mode=0o644):
            info = zipfile.ZipInfo(arc, date_time=(2020, 1, 1, 0, 0, 0))
            info.external_attr = (0o100000 | mode) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, data)
            records.append(_record_line(arc, data))
        for arc, src in _files(lib):
            data = src if isinstance(src, bytes) else open(src, "rb").read()
            add(arc, data, 0o755 if arc.endswith(SONAME) else 0o644)
        add(di + "/METADATA", _metadata().encode())
        add(di + "/WHEEL", ("Wheel-Version: 1.0\nGenerator: attend_build\nRoot-Is-Purelib: false\nTag: %s\n"
                            % _tag()).encode())
        add(di + "/top_level.txt", (NAME + "\n").encode())
        rec = di + "/RECORD"
        z.writestr(zipfile.ZipInfo(rec, date_time=(2020, 1, 1, 0, 0, 0)),
                   "\n".join(records + [rec + ",,"]) + "\n")
    _log("wrote " + path)
    return name


# ------------------------------------------------------------ PEP 517 hooks
def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    d = os.path.join(metadata_directory, _dist_info())
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "METADATA"), "w", encoding="utf-8") as f:
        f.write(_metadata())
    return _dist_info()


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    bdir, temporary = _build_dir(config_settings)
    try:
        lib = _cmake_library(bdir)
        return _write_wheel(wheel_directory, lib)
    finally:
        if temporary:
            shutil.rmtree(bdir, ignore_errors=True)


def _sdist_files():
    try:
        r = subprocess.run(["git", "-C", ROOT, "ls-files", "-z"], capture_output=True, check=True)
        files = [f for f in r.stdout.decode().split("\0") if f]
    except (OSError, subprocess.CalledProcessError):
        files = []
        for d, dirs, names in os.walk(ROOT):
            rel = os.path.relpath(d, ROOT)
            dirs[:] = [x for x in dirs if not (x.startswith("build") or x.startswith(".") or x == "__pycache__")]
            files += [os.path.normpath(os.path.join(rel, n)) for n in names]
    return sorted(f for f in files if os.path.isfile(os.path.join(ROOT, f)))


def build_sdist(sdist_directory, config_settings=None):
    """The source tree (git's files, or every file outside build*/ and
    dot-directories) as attend-VERSION.tar.gz, with PKG-INFO."""
    base = "%s-%s" % (NAME, _version())
    name = base + ".tar.gz"
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz", format=tarfile.PAX_FORMAT) as t:
        for f in _sdist_files():
            t.add(os.path.join(ROOT, f), arcname=base + "/" + f, recursive=False)
        data = _metadata().encode()
        info = tarfile.TarInfo(base + "/PKG-INFO")
        info.size, info.mode = len(data), 0o644
        t.addfile(info, io.BytesIO(data))
    return name
