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
from ._lib import (ERR_ALLOC, ERR_ARG, ERR_CAPACITY, ERR_FORMAT, ERR_IO, ERR_MASKED_ROW, ERR_NONFINITE, ERR_NULL,
                   ERR_SHAPE, OK, AttendError, AttendMemoryError, AttendOSError, AttendTypeError, AttendValueError,
                   AttendWarning, lib)
from .model import INTERVENTIONS, UNKNOWN_POLICIES, Hypothesis, Intervention, Model, Vocab, train
from . import kernels, g2p, ensemble, render  # noqa: E402  (submodules)


def version() -> str:
    """The library's version string, e.g. "0.1.0"."""
    return lib.attend_version().decode()


def gemm_backend() -> str:
    """The matrix products' implementation, e.g. "openblas" or "portable"."""
    return lib.attend_gemm_backend().decode()


# Threads (issue 25, "Fast by default"): set_threads / get_threads, binding
# attend_set_threads / attend_get_threads, go here (and into __all__).


def isa() -> str:
    """The instruction-set level the kernels run at: avx512, avx2 or baseline."""
    return lib.attend_isa().decode()


__version__ = version()
__all__ = ["AttendError", "AttendValueError", "AttendTypeError", "AttendOSError", "AttendMemoryError", "AttendWarning",
           "Model", "Vocab", "Hypothesis", "Intervention", "train", "kernels", "g2p", "ensemble", "render", "version",
           "gemm_backend", "isa", "UNKNOWN_POLICIES", "INTERVENTIONS", "OK", "ERR_NULL", "ERR_SHAPE",
           "ERR_MASKED_ROW", "ERR_ARG", "ERR_ALLOC", "ERR_NONFINITE", "ERR_IO", "ERR_FORMAT", "ERR_CAPACITY"]
