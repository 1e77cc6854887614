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

Errors raise attend.AttendError (.code, .status, .message: the library's
message). README.md, "From Python", has more.
"""
from ._lib import (ERR_ALLOC, ERR_ARG, ERR_CAPACITY, ERR_FORMAT, ERR_IO, ERR_MASKED_ROW, ERR_NONFINITE, ERR_NULL,
                   ERR_SHAPE, OK, AttendError, lib)
from .model import Hypothesis, Model, Vocab, train
from . import kernels, g2p, ensemble  # noqa: E402  (submodules)


def version():
    """The library's version string, e.g. "0.1.0"."""
    return lib.attend_version().decode()


def gemm_backend():
    """"openblas" or "portable"."""
    return lib.attend_gemm_backend().decode()


def isa():
    """The instruction-set level the kernels run at: avx512, avx2 or baseline."""
    return lib.attend_isa().decode()


__version__ = version()
__all__ = ["AttendError", "Model", "Vocab", "Hypothesis", "train", "kernels", "g2p", "ensemble", "version", "gemm_backend",
           "isa", "OK", "ERR_NULL", "ERR_SHAPE", "ERR_MASKED_ROW", "ERR_ARG", "ERR_ALLOC", "ERR_NONFINITE",
           "ERR_IO", "ERR_FORMAT", "ERR_CAPACITY"]
