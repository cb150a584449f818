"""The whole data drawn faintly behind a slice: a diagnosis page restricted to a slice of the
rows draws each diagram from the slice's tables and, underneath, the same diagram of all rows in light grey.

:func:`with_background` keeps the figure-from-tables contract: it calls a figure builder of this package on the
slice's tables and on the all-rows tables, keeps the data traces of the second (curves, bins, bars, points — not the
reference lines, bands or annotations, which the first already draws) and restyles them faint: one grey, no hover,
no click (their ``meta`` role is ``"faint"``, which no selection reads), one legend entry ``all rows (faint)`` (the
legend is shown).  Faint curves and markers come first, so the slice is drawn over them; bars of all rows become
thin grey step outlines (so that grouped bars of several models keep their slots) drawn over the slice's bars,
which would hide them.  Every axis range the builder fixed is widened to hold both.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import plotly.graph_objects as go

from ._style import rgba

__all__ = ["with_background", "faint_traces", "FAINT_NAME", "FAINT_COLOR", "DATA_ROLES"]

FAINT_NAME = "all rows (faint)"
"""Legend entry of the faint traces."""
FAINT_COLOR = "#8c8c8c"
"""Their colour (drawn at :data:`_LINE_ALPHA` / :data:`_FILL_ALPHA`)."""
DATA_ROLES = frozenset({"curve", "bins", "bars", "steps", "hist", "points", "corp", "quantile_corp",
                        "ence", "class", "murphy", "window"})
"""``meta`` roles of the traces that show data (the others are references, bands, gaps, notes)."""
_OUTLINE_COLOR = "#6e6e6e"
_LINE_ALPHA = 0.55
_FILL_ALPHA = 0.16


def _edges(trace: go.Bar) -> tuple[np.ndarray, np.ndarray]:
    """Left and right edges of a bar trace's bars (its ``width``, or half-way to the neighbours)."""
    x = np.asarray(trace.x, dtype=float)
    if trace.width is not None:
        w = np.broadcast_to(np.asarray(trace.width, dtype=float), x.shape)
        return x - w / 2.0, x + w / 2.0
    if x.size < 2:
        return x - 0.5, x + 0.5
    mid = (x[1:] + x[:-1]) / 2.0
    return np.concatenate([[2 * x[0] - mid[0]], mid]), np.concatenate([mid, [2 * x[-1] - mid[-1]]])


def _faint(trace: Any) -> go.Scatter | Any:
    """One data trace restyled faint (a bar trace as a grey step outline, marked ``meta["outline"]``)."""
    common = {"name": FAINT_NAME, "legendgroup": "faint", "showlegend": False, "hoverinfo": "skip",
              "meta": {"role": "faint", "name": (trace.meta or {}).get("name") if isinstance(trace.meta, dict)
                       else None}}
    if trace.xaxis is not None:
        common["xaxis"] = trace.xaxis
    if trace.yaxis is not None:
        common["yaxis"] = trace.yaxis
    if isinstance(trace, go.Bar):
        left, right = _edges(trace)
        y = np.asarray(trace.y, dtype=float)
        common["meta"]["outline"] = True
        return go.Scatter(x=np.concatenate([left, right[-1:]]), y=np.concatenate([y, y[-1:]]), mode="lines",
                          line={"color": rgba(_OUTLINE_COLOR, 0.9), "width": 1.5, "shape": "hv"}, **common)
    if not isinstance(trace, go.Scatter):
        return None
    out = go.Scatter(trace)
    out.update(customdata=None, hovertemplate=None, text=None, selectedpoints=None, selected=None, unselected=None,
               line={"color": rgba(FAINT_COLOR, _LINE_ALPHA), "dash": "solid"},
               marker={"color": rgba(FAINT_COLOR, _LINE_ALPHA), "line": {"color": rgba(FAINT_COLOR, 0.0)}},
               **common)
    if out.fill not in (None, "none"):
        out.fillcolor = rgba(FAINT_COLOR, _FILL_ALPHA)
    for err in ("error_x", "error_y"):
        bars = getattr(trace, err)
        if bars is not None and (bars.array is not None or bars.value is not None):
            getattr(out, err).update(color=rgba(FAINT_COLOR, _LINE_ALPHA), thickness=1)
    return out


def faint_traces(fig: go.Figure) -> list[Any]:
    """The data traces of ``fig`` restyled faint; the first one carries the legend entry :data:`FAINT_NAME`.

    Data traces: ``meta`` role in :data:`DATA_ROLES`, visible.  Scatter traces turn grey without hover; bar traces
    become grey step outlines (``meta["outline"]``).

    Parameters
    ----------
    fig : plotly.graph_objects.Figure
        A figure of this package's builders.

    Returns
    -------
    list of plotly trace
        The faint traces.
    """
    out = []
    for trace in fig.data:
        meta = trace.meta if isinstance(trace.meta, dict) else {}
        if meta.get("role") not in DATA_ROLES or trace.visible is False:
            continue
        faint = _faint(trace)
        if faint is not None:
            out.append(faint)
    if out:
        out[0].showlegend = True
    return out


def _widen_ranges(fig: go.Figure, other: go.Figure) -> None:
    """Every axis range ``fig`` fixed, widened to hold the range ``other`` fixed for the same axis (in place)."""
    for name in list(fig.layout):
        if not (name.startswith("xaxis") or name.startswith("yaxis")):
            continue
        mine, theirs = fig.layout[name].range, getattr(other.layout, name, None)
        theirs = theirs.range if theirs is not None else None
        if mine is None or theirs is None or None in mine or None in theirs:
            continue
        if fig.layout[name].fixedrange:  # an overlay axis pinned on purpose (e.g. [0, 1] for vertical lines)
            continue
        fig.layout[name].range = [min(mine[0], theirs[0]), max(mine[1], theirs[1])]


def with_background(build: Callable[..., go.Figure], tables: Any, background: Mapping[str, Any] | Any | None,
                    /, **options: Any) -> go.Figure:
    """``build(tables, **options)`` with ``build(background, **options)`` drawn faintly behind it.

    The faint traces (:func:`faint_traces`) go first, bar outlines last (module docstring); every axis range fixed by
    the builder is widened to hold both figures.

    Parameters
    ----------
    build : callable
        A figure builder of :mod:`calib_core.plots` (tables in, figure out).
    tables : object
        The diagram tables of the rows shown (a slice).
    background : mapping, object or None
        The same diagram's tables of all rows (None or empty: the figure alone, unchanged).
    **options
        Passed to ``build`` both times.

    Returns
    -------
    plotly.graph_objects.Figure
        The slice's figure over the faint one.
    """
    fig = build(tables, **options)
    if background is None or (isinstance(background, Mapping) and not background):
        return fig
    whole = build(background, **options)
    behind = faint_traces(whole)
    if not behind:
        return fig
    under = [t for t in behind if not t.meta.get("outline")]
    over = [t for t in behind if t.meta.get("outline")]  # a bar's outline would vanish behind the slice's bars
    for t in (*under, *over):
        t.showlegend = False
    (under or over)[0].showlegend = True
    out = go.Figure(data=[*under, *fig.data, *over], layout=fig.layout)
    out.layout.showlegend = True  # the grey needs its name, also where one model had no legend
    _widen_ranges(out, whole)
    return out
