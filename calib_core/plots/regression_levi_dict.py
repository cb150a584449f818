"""The Levi et al. (2019) diagram of :func:`calib_core.plots.regression_levi.levi_figure` as a plain figure dict:
the same traces and layout, built without Plotly's validation (``go.Figure``, ``add_trace`` and ``update_layout``
validated every property: 14–24 ms a figure, most of a Regression redraw after a change of bins).

:func:`levi_figure_dict` equals ``levi_figure(...).to_plotly_json()`` before Plotly's base64 encoding of arrays
(``tests/plots/test_regression_levi_dict.py`` compares the two for linear and log axes, selections, one or several
models, NaN and empty bins); ``dashboard.redraw_cache.dict_figure`` turns it into the figure a chart is sent.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
import pandas as pd

from ._style import (
    HEIGHT,
    REFERENCE_COLOR,
    Tables,
    _validated_template,
    float_column,
    merged_colors,
    named_tables,
    plain,
    title_layout,
)
from .regression_levi import LEVI_COLUMNS, _diagonal_range, _log_ticks, _selected_points

__all__ = ["levi_figure_dict", "template_dict"]


@functools.cache
def _template() -> dict:
    """The validated template as a plain dict (made once per process; never changed: callers get a copy)."""
    return _validated_template().to_plotly_json()


def template_dict() -> dict:
    """The figures' template (``calib_core.plots._style.TEMPLATE`` as Plotly validates it) as a plain dict, shared.

    Returns
    -------
    dict
        The template's properties; shared by every figure dict: never change it.
    """
    return _template()


def levi_figure_dict(
    tables: Tables,
    *,
    colors: Mapping[str, str] | None = None,
    title: str | None = "RMSE vs RMV (Levi et al.)",
    selected: Mapping[str, Iterable[int]] | None = None,
    log_axes: bool = False,
) -> dict[str, Any]:
    """``levi_figure(tables, ...).to_plotly_json()`` without Plotly validation: RMSE_j = sqrt(mean ε²) against
    RMV_j = sqrt(mean σ²) per σ-bin, the 90% bootstrap interval of RMSE as error bars, the identity line RMSE = RMV.

    Arrays are NumPy arrays as Plotly stores them (``plotly.io.to_json`` / ``convert_to_base64`` encode them as a
    validated figure's); the template is the shared dict of :func:`template_dict` (copy the dict before changing it).

    Parameters
    ----------
    tables : DataFrame or mapping of str to DataFrame
        One diagram table, or one per model (columns of ``levi_figure``).
    colors : mapping of str to str, optional
        Colour per name.
    title : str or None
        Figure title.
    selected : mapping of str to iterable of int, optional
        ``{name: bins}`` marked through ``selectedpoints``.
    log_axes : bool, default False
        Log-log axes.

    Returns
    -------
    dict
        ``{"data": [trace dicts with "type"], "layout": {...}}``.

    References
    ----------
    .. [1] Levi, D., Gispan, L., Giladi, N., & Fetaya, E. (2019). Evaluating and calibrating uncertainty
       prediction in regression tasks. arXiv:1905.11659.
    """
    named = named_tables(tables, LEVI_COLUMNS)
    cmap = merged_colors(list(named), colors)
    vals = np.concatenate([float_column(t, c) for t in named.values()
                           for c in ("rmv", "rmse", "rmse_low", "rmse_high")])
    ax_lo, ax_hi, axis_range = _diagonal_range(vals, log_axes=log_axes)
    data = [{"hoverinfo": "skip", "line": {"color": REFERENCE_COLOR, "dash": "dash", "width": 1},
             "meta": {"role": "reference"}, "mode": "lines", "name": "RMSE = RMV", "x": [ax_lo, ax_hi],
             "y": [ax_lo, ax_hi], "type": "scatter"}]
    for name, t in named.items():
        data.append(_levi_trace_dict(name, t, cmap[name], _selected_points(t, selected, name)))
    multi = len(named) > 1
    title_spec, top = title_layout(title, lines=str(title or "").count("<br>") + 1)
    kind = "log" if log_axes else "linear"
    ticks = _log_ticks(axis_range) if log_axes else {}
    layout: dict[str, Any] = {"template": _template()}
    layout["title"] = copy.deepcopy(title_spec) if title_spec is not None else {}  # Plotly stores None as {}
    layout.update({
        "margin": {"l": 60, "r": 20, "t": top, "b": 95 if multi else 55},
        "legend": {"orientation": "h", "yanchor": "top", "y": -0.17, "xanchor": "center", "x": 0.5},
        "xaxis": {"title": {"text": "RMV = root mean predicted variance"}, "type": kind, "range": list(axis_range),
                  "constrain": "domain", **copy.deepcopy(ticks)},
        "yaxis": {"title": {"text": "RMSE = root mean squared error"}, "type": kind, "range": list(axis_range),
                  "scaleanchor": "x", "scaleratio": 1, "constrain": "domain", **copy.deepcopy(ticks)},
        "height": HEIGHT, "showlegend": multi, "hovermode": "closest",
    })
    return {"data": data, "layout": layout}


def _levi_trace_dict(name: str, t: pd.DataFrame, color: str, selectedpoints: list[int] | None) -> dict[str, Any]:
    """``regression_levi._levi_trace(name, t, color, selectedpoints)`` as the dict Plotly stores."""
    rmv, rmse, lo, hi = (float_column(t, c) for c in ("rmv", "rmse", "rmse_low", "rmse_high"))
    count = t["count"].to_numpy()
    slo, shi = float_column(t, "sigma_low"), float_column(t, "sigma_high")
    text = [
        f"bin {int(b) + 1}: σ ∈ [{a:.4g}, {c:.4g}]<br>n = {int(k):,}<br>RMV {v:.4g}<br>RMSE {e:.4g}"
        f"<br>90% CI [{lo_:.4g}, {hi_:.4g}]"
        for b, a, c, k, v, e, lo_, hi_ in zip(t["bin"], slo, shi, count, rmv, rmse, lo, hi)
    ]
    trace: dict[str, Any] = {
        "customdata": t["bin"].to_numpy(dtype=np.int64),
        "error_y": {"array": np.maximum(hi - rmse, 0.0), "arrayminus": np.maximum(rmse - lo, 0.0), "color": color,
                    "symmetric": False, "thickness": 1.2, "type": "data", "width": 3},
        "hovertemplate": "%{text}<extra>" + plain(name) + "</extra>",
        "line": {"color": color, "width": 1.5},
        "marker": {"color": color, "size": 8},
        "meta": {"name": name, "role": "bins"},
        "mode": "lines+markers",
        "name": plain(name),
        "selected": {"marker": {"opacity": 1.0, "size": 13}},
    }
    if selectedpoints is not None:
        trace["selectedpoints"] = selectedpoints
    trace.update({"showlegend": True, "text": text, "unselected": {"marker": {"opacity": 0.3}},
                  "x": rmv, "y": rmse, "type": "scatter"})
    return trace
