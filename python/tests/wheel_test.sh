#!/bin/sh
# wheel_test.sh — the pip route of docs/PYTHON.md, as a new user takes it
# (ctest python_wheel): in a fresh venv that sees Debian's numpy,
#   python3 -m venv --system-site-packages v && v/bin/pip install --no-build-isolation --no-index .
# run from the source tree (offline: no index, no build isolation), then, from
# a directory outside the source tree and with no PYTHONPATH, `import attend`
# must load the package, libattend.so.0 and the G2P model from inside the venv,
# and the examples must run: examples/g2p_say.py and every Python block of
# docs/PYTHON.md (python/tests/test_docs.py, output compared).
#   usage: wheel_test.sh SOURCE_DIR WORK_DIR
# The CMake build of the wheel goes to WORK_DIR/build ($ATTEND_WHEEL_BUILD_DIR),
# not the default build-wheel/ in the source tree, so the test writes nothing there.
set -eu
src=$1 work=$2
py=/usr/bin/python3
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$work"
mkdir -p "$work"
"$py" -c 'import ensurepip' 2>/dev/null || fail "$py has no venv/ensurepip (Debian: apt-get install python3-venv)"
"$py" -m venv --system-site-packages "$work/v" || fail "python3 -m venv"
t0=$(date +%s)
(cd "$src" && env -u PYTHONPATH ATTEND_WHEEL_BUILD_DIR="$work/build" \
    "$work/v/bin/pip" install --no-build-isolation --no-index .) >"$work/pip.log" 2>&1 ||
    { cat "$work/pip.log"; fail "pip install"; }
t1=$(date +%s)
grep -q 'Successfully installed attend-' "$work/pip.log" || { cat "$work/pip.log"; fail "pip did not install attend"; }
echo "pip install: $((t1 - t0)) s"
site=$("$work/v/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["platlib"])')
for f in __init__.py py.typed libattend.so.0 models/g2p-cmudict.safetensors models/g2p-cmudict-int8.safetensors \
         models/g2p-cmudict-b-int8.safetensors models/g2p-cmudict-stress.safetensors models/LICENSE-cmudict.txt; do
    [ -f "$site/attend/$f" ] || fail "the wheel did not install attend/$f"
done
mkdir -p "$work/elsewhere"
cd "$work/elsewhere"
run() { env -u PYTHONPATH -u ATTEND_LIBRARY -u ATTEND_G2P_MODEL -u LD_LIBRARY_PATH "$@"; }
run "$work/v/bin/python" - "$work/v" "$src" <<'EOF' || fail "import attend from the venv"
import os, re, sys
venv, src = (os.path.realpath(p) for p in sys.argv[1:3])
import attend, attend.g2p
for what, path in (("package", attend.__file__), ("library", attend._lib.lib._name),
                   ("G2P model", attend.g2p.default_model_path())):
    path = os.path.realpath(path)
    assert path.startswith(venv + "/"), "%s %s is not inside the venv %s" % (what, path, venv)
cmake = open(os.path.join(src, "CMakeLists.txt")).read()
want = re.search(r"project\(attend VERSION ([0-9.]+)", cmake).group(1)
from importlib.metadata import version
assert attend.version() == want == version("attend") == attend.__version__, (attend.version(), want)
print("import attend: %s, libattend %s, from %s" % (attend.__version__, attend.version(), os.path.dirname(attend.__file__)))
EOF
out=$(run "$work/v/bin/python" "$src/examples/g2p_say.py" hello world) || fail "examples/g2p_say.py"
[ "$out" = "$(printf 'hello HH EH L OW\nworld W ER L D')" ] || fail "examples/g2p_say.py printed: $out"
echo "examples/g2p_say.py: ok"
run ATTEND_SOURCE_DIR="$src" ATTEND_EXPECT_PREFIX="$work/v" \
    "$work/v/bin/python" -m pytest -q -p no:cacheprovider "$src/python/tests/test_docs.py" ||
    fail "docs/PYTHON.md's examples against the installed wheel"
echo "python_wheel: ok"
