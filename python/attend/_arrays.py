"""_arrays.py — the door between numpy and C: every array is checked for
dtype, C-contiguity and shape before a pointer to it is taken. Nothing is
converted silently: a float64 or a transposed (non-contiguous) array is
refused with AttendError, so the caller knows a copy would be made: a
wrong type or dtype is an AttendTypeError (a TypeError), a wrong layout or
shape an AttendValueError (a ValueError)."""
import ctypes
from typing import Any, Optional, Sequence

import numpy as np

from ._lib import ERR_ARG, ERR_SHAPE, AttendTypeError, AttendValueError, i32_p, real_p, u8_p

FLOAT = np.dtype(np.float32)
_PTR = {np.dtype(np.float32): real_p, np.dtype(np.int32): i32_p, np.dtype(np.uint8): u8_p}


def check(name: str, a: Any, dtype: Any, shape: Optional[Sequence[Optional[int]]] = None,
          ndim: Optional[int] = None) -> np.ndarray:
    """a must be a numpy array of exactly `dtype`, C-contiguous, with `ndim`
    dimensions and, where shape[i] is not None, that extent. Returns a."""
    dtype = np.dtype(dtype)
    if not isinstance(a, np.ndarray):
        raise AttendTypeError(ERR_ARG, "%s: expected a numpy array of %s, got %s" % (name, dtype, type(a).__name__))
    if a.dtype != dtype:
        raise AttendTypeError(ERR_ARG, "%s: dtype %s, expected %s (convert with np.ascontiguousarray(%s, dtype=np.%s))"
                          % (name, a.dtype, dtype, name, dtype))
    if not a.flags["C_CONTIGUOUS"]:
        raise AttendValueError(ERR_ARG, "%s: the array is not C-contiguous (strides %s); pass np.ascontiguousarray(%s)"
                          % (name, a.strides, name))
    if ndim is None and shape is not None:
        ndim = len(shape)
    if ndim is not None and a.ndim != ndim:
        raise AttendValueError(ERR_SHAPE, "%s: %d dimensions %s, expected %d" % (name, a.ndim, list(a.shape), ndim))
    if shape is not None:
        for i, (got, want) in enumerate(zip(a.shape, shape)):
            if want is not None and got != want:
                raise AttendValueError(ERR_SHAPE, "%s: shape %s, expected %s (dimension %d is %d, expected %d)"
                                  % (name, list(a.shape), ["?" if w is None else w for w in shape], i, got, want))
    if a.size == 0:
        raise AttendValueError(ERR_SHAPE, "%s: shape %s has no elements" % (name, list(a.shape)))
    return a


def ptr(a):
    """A ctypes pointer into a (checked) array, or NULL for None."""
    if a is None:
        return None
    return a.ctypes.data_as(_PTR[a.dtype])


def mask(name, a, shape):
    """An optional validity mask: None, or an array of bool/uint8 (bool is
    reinterpreted as uint8 without a copy: nonzero = may be attended to)."""
    if a is None:
        return None
    if isinstance(a, np.ndarray) and a.dtype == np.bool_:
        a = a.view(np.uint8)
    return check(name, a, np.uint8, shape)


def zeros(*shape):
    return np.zeros(shape, dtype=FLOAT)


def byref(x):
    return ctypes.byref(x)
