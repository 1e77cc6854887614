"""Shared fixtures of the Python tests (run by ctest as python_*: see
python/CMakeLists.txt, which sets PYTHONPATH to build/python, ATTEND_CLI to the
built `attend` command and ATTEND_SOURCE_DIR to the source tree)."""
import os
import subprocess

import pytest

# One OpenMP thread in this process and in the commands it runs, before
# libattend (and its libgomp) is loaded: training with OpenBLAS is
# reproducible bit for bit at a given thread count, and the byte-for-byte
# comparisons with `attend train` need the same count on both sides.
os.environ["OMP_NUM_THREADS"] = "1"

SOURCE_DIR = os.environ.get("ATTEND_SOURCE_DIR") or os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
CLI = os.environ.get("ATTEND_CLI") or os.path.join(SOURCE_DIR, "build", "attend")

# a small reverse model: the options the Python and CLI training tests share
REVERSE = dict(task="reverse", symbols=6, min_len=2, max_len=6, count=2000, dev_count=40, data_seed=3, emb=16,
               hidden=16, attn=16, dec_hidden=32, batch=32, steps=400, seed=5)


def cli_args(opts):
    """attend train options for the keyword arguments of attend.train."""
    flag = {"hidden": "--hidden", "dec_hidden": "--dec-hidden", "min_len": "--min-len", "max_len": "--max-len",
            "dev_count": "--dev-count", "data_seed": "--data-seed"}
    out = []
    for k, v in opts.items():
        out += [flag.get(k, "--" + k.replace("_", "-")), str(v)]
    return out


def run_cli(*args, check=True, cwd=None, stdin=None):
    r = subprocess.run([CLI] + [str(a) for a in args], capture_output=True, text=True, cwd=cwd, input=stdin)
    if check and r.returncode != 0:
        raise AssertionError("attend %s: exit %d\n%s%s" % (" ".join(map(str, args)), r.returncode, r.stdout,
                                                           r.stderr))
    return r


@pytest.fixture(scope="session")
def reverse_model(tmp_path_factory):
    """The path of a reverse model trained by the CLI."""
    d = tmp_path_factory.mktemp("reverse")
    path = d / "reverse.safetensors"
    run_cli("train", *cli_args(REVERSE), "--out", path, cwd=d)
    return path


@pytest.fixture(scope="session")
def g2p_model():
    return os.path.join(SOURCE_DIR, "models", "g2p-cmudict.safetensors")
