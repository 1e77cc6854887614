"""attend — attention-based sequence-to-sequence models (libattend) from Python.

ctypes over libattend.so and numpy; no other dependency.

    import attend
    m = attend.train(task="reverse", steps=300, progress=print)   # as `attend train`
    m.save("reverse.safetensors")
    m = attend.Model.load("reverse.safetensors")
    h = m.greedy("abcd")[0]; h.text, h.alignment          # 'dcba', [4,4] float32
    attend.g2p.pronounce("hello")                        # 'HH EH L OW'
    attend.ensemble.greedy([m, m2], "abcd")              # an ensemble: mean log-probabilities
    import attend.kernels as K                           # the attention kernels on numpy arrays
    attend.render.heatmap(h)                             # pictures: text, SVG, HTML heatmaps

Errors raise attend.AttendError (.code, .status, .message: the library's
message), each also a ValueError, TypeError, OSError or MemoryError as its
cause calls for (AttendValueError, AttendTypeError, AttendOSError,
AttendMemoryError). Text with symbols a model does not know follows
unknown="warn" | "error" | "skip" in every call that takes text.
docs/PYTHON.md has the whole API, every function run by the tests.
"""
import ctypes

from ._lib import (ERR_ALLOC, ERR_ARG, ERR_CAPACITY, ERR_FORMAT, ERR_IO, ERR_MASKED_ROW, ERR_NONFINITE, ERR_NULL,
                   ERR_SHAPE, OK, AttendError, AttendMemoryError, AttendOSError, AttendTypeError, AttendValueError,
                   AttendWarning, Error, check, lib)
from .model import INTERVENTION_SITES, INTERVENTIONS, UNKNOWN_POLICIES, Hypothesis, Intervention, Model, Vocab, train
from . import kernels, g2p, ensemble, render  # noqa: E402  (submodules)


def version() -> str:
    """The library's version string, e.g. "0.1.0"."""
    return lib.attend_version().decode()


def gemm_backend() -> str:
    """"own" (attend's packed GEMM, the default) or "openblas" (a -DATTEND_BLAS=ON build whose
    OpenBLAS kernels suit the CPU)."""
    return lib.attend_gemm_backend().decode()


def gemm_info() -> str:
    """Which matrix products run, with the reason, e.g. "own (OpenBLAS reports Prescott on an AVX-512 CPU)"."""
    return lib.attend_gemm_info().decode()


def set_threads(n: int) -> None:
    """Sets the library's threads for the whole process: n >= 1 at most n threads per call (1: never start a
    worker), 0 automatic (every CPU the process may run on; the default, chosen by measurement: see
    docs/PERFORMANCE.md, "Threads"). Any Python thread may call it at any time; a call already running keeps
    its count. Idle workers sleep between calls (they use no CPU while Python computes). Raises
    AttendValueError for n < 0 or n > 1024, AttendTypeError for anything but an int."""
    if isinstance(n, bool) or not isinstance(n, int):
        raise AttendTypeError(ERR_ARG, "set_threads: expected an int, got %r" % (n,))
    err = Error()
    check(lib.attend_set_threads(ctypes.c_int(n) if -2**31 <= n < 2**31 else ctypes.c_int(-1), ctypes.byref(err)),
          err)


def threads() -> int:
    """The number of threads the next library call may use (the setting resolved)."""
    return lib.attend_threads()


def isa() -> str:
    """The instruction-set level the kernels run at: avx512, avx2 or baseline."""
    return lib.attend_isa().decode()


__version__ = version()
__all__ = ["AttendError", "AttendValueError", "AttendTypeError", "AttendOSError", "AttendMemoryError", "AttendWarning",
           "Model", "Vocab", "Hypothesis", "Intervention", "train", "kernels", "g2p", "ensemble", "render", "version",
           "gemm_backend", "gemm_info", "set_threads", "threads", "isa", "UNKNOWN_POLICIES", "INTERVENTIONS", "INTERVENTION_SITES", "OK",
           "ERR_NULL", "ERR_SHAPE", "ERR_MASKED_ROW", "ERR_ARG", "ERR_ALLOC", "ERR_NONFINITE", "ERR_IO", "ERR_FORMAT",
           "ERR_CAPACITY"]
