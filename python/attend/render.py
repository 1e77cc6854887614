"""attend.render — pictures of alignments and results (the library's
renderers, include/attend/analysis.h): the text heatmaps of `attend decode
--align`, SVG and self-contained HTML heatmaps, and SVG line plots.

    import attend, attend.render
    h = m.greedy("abcd")[0]
    print(attend.render.heatmap(h))                  # a Hypothesis: its alignment and tokens
    open("a.svg", "w").write(attend.render.heatmap_svg(h, title="abcd"))
    attend.render.heatmap(w, ["a", "b"], ["x"])      # or weights [T,S] (float32) and the labels

Each function returns a str. The weights are [T,S] float32 (one output step
per row), C-contiguous; src_tokens [S] and out_tokens [T] label the axes
(None: positions 0, 1, ...; the text styles "shade", "percent" and "tsv"
need both). Any UTF-8 is safe in the labels (escaped for SVG and HTML).
"""
from __future__ import annotations

import ctypes
from typing import Any, List, Optional, Sequence, Tuple, Union

import numpy as np

from . import _arrays as ar
from ._lib import ERR_ARG, AttendValueError, PlotSeries, _libc, call
from .model import Hypothesis

__all__ = ["heatmap", "heatmap_svg", "heatmap_html", "line_plot_svg", "STYLES"]

#: heatmap styles: attend_heatmap_style
STYLES = {"shade": 0, "percent": 1, "tsv": 2, "ramp": 3}

Weights = Union[Hypothesis, np.ndarray]


def _labels(name, tokens, n):
    if tokens is None:
        return None, None
    tokens = list(tokens)
    if len(tokens) != n:
        raise AttendValueError(ERR_ARG, "%s: %d labels for %d %s" % (name, len(tokens), n,
                                                                     "columns" if name[0] == "s" else "rows"))
    keep = [str(t).encode("utf-8") for t in tokens]
    return (ctypes.c_char_p * max(n, 1))(*keep), keep


def _args(w, src_tokens, out_tokens):
    if isinstance(w, Hypothesis):
        h = w
        w = h.alignment
        if src_tokens is None:
            src_tokens = h.source_tokens
        if out_tokens is None:
            out_tokens = h.tokens
    ar.check("w", w, ar.FLOAT, ndim=2)
    T, S = w.shape
    src, k1 = _labels("src_tokens", src_tokens, S)
    out, k2 = _labels("out_tokens", out_tokens, T)
    return w, T, S, src, out, (k1, k2)


def _take(fn, *args):
    p = ctypes.c_void_p()
    call(fn, ctypes.byref(p), *args)
    try:
        return ctypes.string_at(p.value).decode("utf-8")
    finally:
        _libc.free(p.value)


def heatmap(w: Weights, src_tokens: Optional[Sequence[str]] = None, out_tokens: Optional[Sequence[str]] = None,
            style: str = "shade") -> str:
    """A text heatmap of w [T,S] (or of a Hypothesis): "shade" (the boxed
    grid of `attend decode --align`, one ramp character per cell), "percent"
    (the grid in hundredths), "tsv" (the weights, tab-separated) or "ramp"
    (source tokens as columns, each row's argmax and weight)."""
    if style not in STYLES:
        raise AttendValueError(ERR_ARG, "style %r: expected one of %s" % (style, ", ".join(STYLES)))
    w, T, S, src, out, _keep = _args(w, src_tokens, out_tokens)
    return _take("attend_render_heatmap_text_style", ar.ptr(w), T, S, src, out, STYLES[style])


def heatmap_svg(w: Weights, src_tokens: Optional[Sequence[str]] = None, out_tokens: Optional[Sequence[str]] = None,
                title: Optional[str] = None) -> str:
    """A standalone SVG heatmap (a rect per cell with data-t, data-s and
    data-w attributes, a colour scale, an optional title)."""
    w, T, S, src, out, _keep = _args(w, src_tokens, out_tokens)
    return _take("attend_render_heatmap_svg", ar.ptr(w), T, S, src, out, title.encode() if title else None)


def heatmap_html(w: Weights, src_tokens: Optional[Sequence[str]] = None, out_tokens: Optional[Sequence[str]] = None,
                 title: Optional[str] = None) -> str:
    """A self-contained HTML page with the heatmap: hovering an output token
    highlights the source tokens it attended to (no network needed)."""
    w, T, S, src, out, _keep = _args(w, src_tokens, out_tokens)
    return _take("attend_render_heatmap_html", ar.ptr(w), T, S, src, out, title.encode() if title else None)


def line_plot_svg(series: Sequence[Tuple[str, Sequence[float], Sequence[float]]], title: str = "",
                  x_label: str = "", y_label: str = "", y_min: float = 0.0, y_max: float = 0.0,
                  log_x: bool = False) -> str:
    """An SVG line plot of series (label, xs, ys), one line each (NaN y: a
    gap); y_min < y_max fix the y range, otherwise it comes from the data."""
    keep: List[Any] = []
    arr = (PlotSeries * max(len(series), 1))()
    for i, (label, xs, ys) in enumerate(series):
        x = np.ascontiguousarray(xs, dtype=np.float64)
        y = np.ascontiguousarray(ys, dtype=np.float64)
        if x.ndim != 1 or x.shape != y.shape:
            raise AttendValueError(ERR_ARG, "series %d (%s): x %s and y %s must be 1-D of one length"
                                   % (i, label, list(x.shape), list(y.shape)))
        lb = str(label).encode("utf-8")
        keep += [x, y, lb]
        dp = ctypes.POINTER(ctypes.c_double)
        arr[i] = PlotSeries(lb, len(x), x.ctypes.data_as(dp), y.ctypes.data_as(dp))
    if not y_min < y_max:  # the C call takes a fixed range: the data's, with a margin
        finite = np.concatenate([k[np.isfinite(k)] for k in keep[1::3]] or [np.zeros(0)])
        lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
        pad = 0.05 * (hi - lo) if hi > lo else max(abs(lo) * 0.05, 0.5)
        y_min, y_max = lo - pad, hi + pad
    return _take("attend_render_line_plot_svg", arr, len(series), title.encode(), x_label.encode(),
                 y_label.encode(), float(y_min), float(y_max), 1 if log_x else 0)
