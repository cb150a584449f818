"""Plotly figures of the Levi et al. (2019) reliability diagram, RMSE against RMV per σ-bin: one diagram
(:func:`levi_figure`) or small multiples, one panel per table (:func:`levi_panels_figure`); :func:`levi_figure_dict`
is :func:`levi_figure` as a plain figure dict built without Plotly's validation (go.Figure, add_trace and
update_layout validated every property: 14–24 ms a figure, most of a Regression redraw after a change of bins), equal
to the validated figure's ``to_plotly_json()`` (tested in ``tests/plots/test_regression_levi_dict.py``).

Built from ``levi_bins`` tables (``bin, count, sigma_low, sigma_high, rmv, rmse, rmse_low, rmse_high``, the schema
of ``calib_core.diagrams.regression``), with the conventions of :mod:`calib_core.plots.regression`: one colour per
name, an explicit template, ``customdata`` = the bin index for selections.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ._style import (
    HEIGHT,
    REFERENCE_COLOR,
    Tables,
    apply_layout,
    float_column,
    identity_line,
    merged_colors,
    named_tables,
    plain,
    rgba,
    set_template,
    title_layout,
)

__all__ = ["LEVI_COLUMNS", "levi_figure", "levi_figure_dict", "levi_panels_figure"]


def levi_figure(
    tables: Tables,
    *,
    colors: Mapping[str, str] | None = None,
    title: str | None = "RMSE vs RMV (Levi et al.)",
    selected: Mapping[str, Iterable[int]] | None = None,
    log_axes: bool = False,
) -> go.Figure:
    """Levi et al. (2019) reliability diagram: RMSE_j = sqrt(mean ε²) vs RMV_j = sqrt(mean σ²) per σ-bin.

    One marker per bin with its 90% bootstrap interval on RMSE as an error bar, joined by a line, and the identity
    line RMSE = RMV (perfect calibration).  Hover shows the bin's σ range, row count, RMV, RMSE and interval;
    ``customdata`` is the bin index (read it from a selection).

    Both axes share one range (the identity line at 45°) fitted to the data: linear axes start at 0 unless the data
    sit far from it; ``log_axes=True`` gives log-log axes spanning the positive values (bins whose σ differ by orders
    of magnitude — one far bin, models on different scales — are spread out instead of squeezed into a corner;
    RMSE = RMV stays the diagonal).

    Parameters
    ----------
    tables : DataFrame or mapping of str to DataFrame
        One diagram table, or one per model (the name is the legend entry).
        Columns ``bin, count, sigma_low, sigma_high, rmv, rmse, rmse_low, rmse_high``.
    colors : mapping of str to str, optional
        Colour per name (default :func:`model_colors` of the names, in order).
    title : str or None
        Figure title (None: no title).
    selected : mapping of str to iterable of int, optional
        ``{name: bins}`` marked through Plotly's ``selectedpoints`` (the other bins are dimmed), e.g. to show a
        stored selection after a rerun.
    log_axes : bool, default False
        Log-log axes.

    Returns
    -------
    plotly.graph_objects.Figure
        The figure.

    References
    ----------
    .. [1] Levi, D., Gispan, L., Giladi, N., & Fetaya, E. (2019). Evaluating and calibrating uncertainty
       prediction in regression tasks. arXiv:1905.11659.
    """
    named = named_tables(tables, LEVI_COLUMNS)
    cmap = merged_colors(list(named), colors)
    fig = go.Figure()
    vals = np.concatenate([float_column(t, c) for t in named.values()
                           for c in ("rmv", "rmse", "rmse_low", "rmse_high")])
    ax_lo, ax_hi, axis_range = _diagonal_range(vals, log_axes=log_axes)
    fig.add_trace(identity_line(ax_lo, ax_hi, "RMSE = RMV"))
    for name, t in named.items():
        fig.add_trace(_levi_trace(name, t, cmap[name], _selected_points(t, selected, name)))
    apply_layout(fig, title, "RMV = root mean predicted variance", "RMSE = root mean squared error", len(named) > 1)
    kind = "log" if log_axes else "linear"
    ticks = _log_ticks(axis_range) if log_axes else {}
    fig.update_xaxes(type=kind, range=axis_range, constrain="domain", **ticks)
    fig.update_yaxes(type=kind, range=axis_range, scaleanchor="x", scaleratio=1, constrain="domain", **ticks)
    return fig


def _log_ticks(axis_range: list[float]) -> dict[str, Any]:
    """Tick values 1, 2, 5 × 10^k inside a log axis range (log10 units), labelled in full ("0.2", not "2")."""
    e = np.arange(np.floor(axis_range[0]), np.ceil(axis_range[1]) + 1)
    vals = (np.array([1.0, 2.0, 5.0])[None, :] * 10.0 ** e[:, None]).ravel()
    vals = vals[(np.log10(vals) >= axis_range[0]) & (np.log10(vals) <= axis_range[1])]
    return {"tickvals": vals, "ticktext": [f"{v:g}" for v in vals]}


def _diagonal_range(values: np.ndarray, *, log_axes: bool) -> tuple[float, float, list[float]]:
    """(low, high, Plotly axis range) shared by both axes of a diagram with an identity line.

    Linear: [min − pad, max + pad] with pad = 6% of the span, starting at 0 when min − pad < 0.15·max.  Log: the
    positive values, padded by 6% of their span in decades; Plotly's range is then in log10 units.
    """
    vals = np.asarray(values, dtype=float)
    vals = vals[np.isfinite(vals) & ((vals > 0) if log_axes else True)]
    if log_axes:
        lo, hi = (float(np.log10(vals.min())), float(np.log10(vals.max()))) if vals.size else (-1.0, 0.0)
        pad = 0.06 * (hi - lo) if hi > lo else 0.1
        return 10 ** (lo - pad), 10 ** (hi + pad), [lo - pad, hi + pad]
    lo, hi = (float(vals.min()), float(vals.max())) if vals.size else (0.0, 1.0)
    pad = 0.06 * (hi - lo) if hi > lo else 0.5 * max(abs(hi), 1.0)
    lo = 0.0 if lo - pad < 0.15 * hi else lo - pad
    return lo, hi + pad, [lo, hi + pad]


def _levi_trace(name: str, t: pd.DataFrame, color: str, selectedpoints: Any = None, *, marker_size: int = 8,
                legend: bool = True) -> go.Scatter:
    """The σ-bins of one table: markers joined by a line, 90% bootstrap interval of RMSE as error bars, hover
    text, ``customdata`` = bin index, ``meta = {"name", "role": "bins"}``."""
    rmv, rmse, lo, hi = (float_column(t, c) for c in ("rmv", "rmse", "rmse_low", "rmse_high"))
    count = t["count"].to_numpy()
    slo, shi = float_column(t, "sigma_low"), float_column(t, "sigma_high")
    text = [
        f"bin {int(b) + 1}: σ ∈ [{a:.4g}, {c:.4g}]<br>n = {int(k):,}<br>RMV {v:.4g}<br>RMSE {e:.4g}"
        f"<br>90% CI [{lo_:.4g}, {hi_:.4g}]"
        for b, a, c, k, v, e, lo_, hi_ in zip(t["bin"], slo, shi, count, rmv, rmse, lo, hi)
    ]
    return go.Scatter(
        x=rmv, y=rmse, mode="lines+markers", name=plain(name), showlegend=legend,
        line={"color": color, "width": 1.5},
        marker={"color": color, "size": marker_size},
        error_y={
            "type": "data", "symmetric": False, "array": np.maximum(hi - rmse, 0.0),
            "arrayminus": np.maximum(rmse - lo, 0.0), "color": color, "thickness": 1.2, "width": 3,
        },
        customdata=t["bin"].to_numpy(dtype=np.int64),
        text=text,
        hovertemplate="%{text}<extra>" + plain(name) + "</extra>",
        selectedpoints=selectedpoints,
        selected={"marker": {"size": 13, "opacity": 1.0}},
        unselected={"marker": {"opacity": 0.3}},
        meta={"name": name, "role": "bins"},
    )


LEVI_COLUMNS = ["bin", "count", "sigma_low", "sigma_high", "rmv", "rmse", "rmse_low", "rmse_high"]


def levi_panels_figure(
    tables: Tables,
    *,
    colors: Mapping[str, str] | None = None,
    reference: str | None = None,
    log_axes: bool = False,
    ncols: int = 4,
    title: str | None = "RMSE vs RMV per σ-bin (Levi et al.)",
) -> go.Figure:
    """Small multiples of the Levi et al. (2019) diagram: one panel per table (e.g. per calibrator).

    RMSE_j vs RMV_j per σ-bin with its 90% bootstrap interval, the identity line RMSE = RMV in every panel and the
    ``reference`` table's bins (e.g. the uncalibrated predictions) in light grey behind every other panel's.  All
    panels share one range on both axes, fitted to the panels' own bins (:func:`levi_figure`'s rule; the reference
    may run out of view), so the panels compare at a glance and the identity line is the same diagonal everywhere.
    Eight calibrators with error bars overlaid on one diagram are a tangle; side by side each stays readable.

    Parameters
    ----------
    tables : DataFrame or mapping of str to DataFrame
        One diagram table, or one per model (the name is the legend entry).
        Columns as :func:`levi_figure`'s.
    colors : mapping of str to str, optional
        Colour per name (default :func:`model_colors` of the names, in order).
    reference : str, optional
        The name of the table drawn in grey behind every other panel.
    log_axes : bool, default False
        Log-log axes.
    ncols : int, default 4
        Panels per row.
    title : str or None
        Figure title (None: no title).

    Returns
    -------
    plotly.graph_objects.Figure
        The figure.

    References
    ----------
    .. [1] Levi, D., Gispan, L., Giladi, N., & Fetaya, E. (2019). Evaluating and calibrating uncertainty
       prediction in regression tasks. arXiv:1905.11659.
    """
    named = named_tables(tables, LEVI_COLUMNS)
    cmap = merged_colors(list(named), colors)
    ref = named.get(reference) if reference is not None else None
    panels = [n for n in named if n != reference] or list(named)
    # zoom to the panels' own bins: a far-off reference (σ of the uncalibrated model 10x too wide) is context,
    # it must not squeeze the calibrated bins into a corner
    vals = np.concatenate([float_column(named[n], c) for n in panels for c in ("rmv", "rmse", "rmse_low", "rmse_high")])
    ax_lo, ax_hi, axis_range = _diagonal_range(vals, log_axes=log_axes)
    ncols = max(1, min(ncols, len(panels)))
    nrows = -(-len(panels) // ncols)
    fig = make_subplots(rows=nrows, cols=ncols, subplot_titles=[plain(p) for p in panels], horizontal_spacing=0.05,
                        vertical_spacing=0.16 if nrows > 1 else 0.0)
    for i, name in enumerate(panels):
        r, c = i // ncols + 1, i % ncols + 1
        identity = identity_line(ax_lo, ax_hi, "RMSE = RMV")
        identity.showlegend = i == 0
        fig.add_trace(identity, row=r, col=c)
        if ref is not None:
            grey = _levi_trace(reference, ref, rgba(REFERENCE_COLOR, 0.35), marker_size=5, legend=i == 0)
            grey.meta = {"name": reference, "role": "reference_bins"}
            grey.error_y = None
            fig.add_trace(grey, row=r, col=c)
        fig.add_trace(_levi_trace(name, named[name], cmap[name], marker_size=6, legend=False), row=r, col=c)
    kind = "log" if log_axes else "linear"
    ticks = _log_ticks(axis_range) if log_axes else {"nticks": 4}
    fig.update_xaxes(type=kind, range=axis_range, tickfont={"size": 10}, **ticks)
    fig.update_yaxes(type=kind, range=axis_range, tickfont={"size": 10}, **ticks)
    for i in range(len(panels)):  # square panels: the identity line at 45° in each
        r, c = i // ncols + 1, i % ncols + 1
        xname = fig.get_subplot(r, c).xaxis.plotly_name.replace("axis", "")
        fig.update_yaxes(row=r, col=c, scaleanchor=xname, scaleratio=1, constrain="domain")
        fig.update_xaxes(row=r, col=c, constrain="domain")
    fig.update_xaxes(row=nrows, title={"text": "RMV", "font": {"size": 11}})
    fig.update_yaxes(col=1, title={"text": "RMSE", "font": {"size": 11}})
    title_spec, top = title_layout(title, above=25)  # room for the panel titles
    panel = 210
    set_template(fig)
    fig.update_layout(
        title=title_spec, height=top + nrows * (panel + 45) + 60,
        margin={"l": 60, "r": 20, "t": top, "b": 80}, showlegend=ref is not None,
        legend={"orientation": "h", "yanchor": "top", "y": -0.12 if nrows > 1 else -0.25, "xanchor": "center",
                "x": 0.5},
        hovermode="closest",
    )
    fig.update_annotations(font_size=12)
    return fig


def _selected_points(
    t: pd.DataFrame, selected: Mapping[str, Iterable[int]] | None, name: str
) -> list[int] | None:
    """Positions (point indices) of ``name``'s selected bins in its table; None when nothing is selected at all."""
    if not selected or not any(tuple(v) for v in selected.values()):
        return None
    bins = np.asarray(list(selected.get(name, ())), dtype=np.int64)
    return np.flatnonzero(np.isin(t["bin"].to_numpy(dtype=np.int64), bins)).tolist()


@functools.cache
def _template() -> dict:
    """The figures' template as :func:`set_template` gives it, as a plain dict (made once per process, shared by
    every figure dict: never changed)."""
    return set_template(go.Figure()).layout.template.to_plotly_json()


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
    # Plotly's key order (the same JSON, byte for byte): a title's pad first; no title is {} after the legend
    title_dict = {"pad": dict(title_spec["pad"]), **{k: v for k, v in title_spec.items() if k != "pad"}} \
        if title_spec is not None else None
    layout: dict[str, Any] = {"template": _template(), **({"title": title_dict} if title_dict else {})}
    layout.update({
        "margin": {"l": 60, "r": 20, "t": top, "b": 95 if multi else 55},
        "legend": {"orientation": "h", "yanchor": "top", "y": -0.17, "xanchor": "center", "x": 0.5},
        **({} if title_dict else {"title": {}}),
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
