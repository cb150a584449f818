"""The overlays of a σ-bin selection — the Kuleshov quantile-calibration curve, the PIT histogram and the z
histogram of :mod:`calib_core.plots.regression` — built as plain figure dicts without Plotly's validation.

``go.Figure``, ``add_trace`` and ``update_layout`` validate every property: 10–15 ms a figure, and a click on a
σ-bin of the Regression page redraws three of them.  Each builder here returns what the validated builder's
``to_plotly_json()`` gives (the same keys in the same order, NumPy arrays where Plotly stores them), so that the
JSON a browser receives is byte for byte the same (``tests/plots/test_regression_dicts.py``), as
:func:`calib_core.plots.regression_levi.levi_figure_dict` does for the Levi diagram.

Built from the diagram tables of ``calib_core.diagrams.regression`` (``calibration_curve``: ``level, observed,
band_low, band_high``; ``pit_histogram``: ``left, right, count, density``; ``z_histogram``: the same with
``normal_density`` and optionally ``outside``).
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Collection, Mapping
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ._style import (
    HEIGHT,
    REFERENCE_COLOR,
    Tables,
    float_column,
    merged_colors,
    named_tables,
    plain,
    rgba,
    set_template,
    title_layout,
)
from .regression_parts import (
    CLIPPED_MARKER,
    CLIPPED_NAME,
    clipped_parts,
    finite_edges,
    histogram_hover_text,
    note_traces,
    notes_height,
)

__all__ = ["calibration_curve_figure_dict", "pit_histogram_figure_dict", "z_histogram_figure_dict"]


@functools.cache
def _template() -> dict:
    """The figures' template as :func:`~calib_core.plots._style.set_template` gives it, as a plain dict (made once
    per process, shared by every figure dict: never changed)."""
    return set_template(go.Figure()).layout.template.to_plotly_json()


def _layout(title: str | None, xaxis: str, yaxis: str, multi: bool, *, first: Mapping[str, Any] | None = None,
            x: Mapping[str, Any] | None = None, y: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The layout ``apply_layout`` gives (after the properties ``first`` set before it), with the axis properties
    ``x`` and ``y`` set after it, in Plotly's key order."""
    title_spec, top = title_layout(title, lines=str(title or "").count("<br>") + 1)
    # Plotly's key order: a title's pad first; no title is {} after the legend
    title_dict = {"pad": dict(title_spec["pad"]), **{k: v for k, v in title_spec.items() if k != "pad"}} \
        if title_spec is not None else None
    layout: dict[str, Any] = {"template": _template(), **(first or {})}
    if title_dict:
        layout["title"] = title_dict
    layout.update({
        "margin": {"l": 60, "r": 20, "t": top, "b": 95 if multi else 55},
        "legend": {"orientation": "h", "yanchor": "top", "y": -0.17, "xanchor": "center", "x": 0.5},
        **({} if title_dict else {"title": {}}),
        "xaxis": {"title": {"text": xaxis}, **(x or {})},
        "yaxis": {"title": {"text": yaxis}, **(y or {})},
        "height": HEIGHT, "showlegend": multi, "hovermode": "closest",
    })
    return layout


def calibration_curve_figure_dict(
    tables: Tables,
    *,
    colors: Mapping[str, str] | None = None,
    title: str | None = "Quantile calibration",
    dashes: Mapping[str, str] | None = None,
    bands: Collection[str] | None = None,
) -> dict[str, Any]:
    """``calibration_curve_figure(tables, ...).to_plotly_json()`` without Plotly validation: the Kuleshov et al.
    (2018) curve p̂_j = mean(u ≤ p_j) against p_j, its 95% consistency band and the diagonal.

    Parameters
    ----------
    tables : DataFrame or mapping of str to DataFrame
        One diagram table, or one per model.  Columns ``level, observed, band_low, band_high``.
    colors : mapping of str to str, optional
        Colour per name.
    title : str or None
        Figure title.
    dashes : mapping of str to str, optional
        Plotly dash style per name.
    bands : collection of str, optional
        The names whose band is drawn (default: all).

    Returns
    -------
    dict
        ``{"data": [trace dicts with "type"], "layout": {...}}``.

    References
    ----------
    .. [1] Kuleshov, V., Fenner, N., & Ermon, S. (2018). Accurate uncertainties for deep learning using calibrated
       regression. ICML, PMLR 80, 2796–2804.

    Examples
    --------
    >>> t = pd.DataFrame({"level": [0.0, 0.5, 1.0], "observed": [0.0, 0.4, 1.0], "band_low": [0.0, 0.3, 1.0],
    ...                   "band_high": [0.0, 0.6, 1.0]})
    >>> [d["meta"]["role"] for d in calibration_curve_figure_dict(t)["data"]]
    ['reference', 'band_low', 'band_high', 'curve']
    """
    named = named_tables(tables, ["level", "observed", "band_low", "band_high"])
    cmap = merged_colors(list(named), colors)
    multi = len(named) > 1
    data: list[dict[str, Any]] = [_reference([0.0, 1.0], [0.0, 1.0], "ideal", 1)]
    for name, t in named.items():
        level, obs, lo, hi = (float_column(t, c) for c in ("level", "observed", "band_low", "band_high"))
        color = cmap[name]
        if bands is None or name in bands:
            data.append({"hoverinfo": "skip", "legendgroup": name, "line": {"width": 0},
                         "meta": {"name": name, "role": "band_low"}, "mode": "lines", "showlegend": False,
                         "x": level, "y": lo, "type": "scatter"})
            data.append({"fill": "tonexty", "fillcolor": rgba(color, 0.18), "hoverinfo": "skip", "legendgroup": name,
                         "line": {"width": 0}, "meta": {"name": name, "role": "band_high"}, "mode": "lines",
                         "name": f"{plain(name)}: 95% band" if multi else "95% band (perfect calibration)",
                         "showlegend": not multi, "x": level, "y": hi, "type": "scatter"})
        data.append({
            "customdata": np.column_stack([lo, hi]),
            "hovertemplate": ("expected %{x:.2f}<br>observed %{y:.3f}<br>95% band [%{customdata[0]:.3f}, "
                              "%{customdata[1]:.3f}]<extra>" + plain(name) + "</extra>"),
            "legendgroup": name, "line": {"color": color, "dash": (dashes or {}).get(name, "solid"), "width": 2.5},
            "meta": {"name": name, "role": "curve"}, "mode": "lines", "name": plain(name), "x": level, "y": obs,
            "type": "scatter"})
    layout = _layout(title, "expected proportion p (predicted quantile level)", "observed proportion of y ≤ F⁻¹(p)",
                     True, x={"range": [0, 1], "constrain": "domain"},
                     y={"range": [0, 1], "scaleanchor": "x", "scaleratio": 1, "constrain": "domain"})
    return {"data": data, "layout": layout}


def _reference(x: Any, y: Any, name: str, width: float) -> dict[str, Any]:
    """The dashed grey reference line through (x, y)."""
    return {"hoverinfo": "skip", "line": {"color": REFERENCE_COLOR, "dash": "dash", "width": width},
            "meta": {"role": "reference"}, "mode": "lines", "name": name, "x": x, "y": y, "type": "scatter"}


def _histogram_traces(named: Mapping[str, pd.DataFrame], cmap: Mapping[str, str], extra: str = "",
                      dashes: Mapping[str, str] | None = None) -> list[dict[str, Any]]:
    """The bars of one table, or the step outlines of several (``regression._histogram_traces``)."""
    multi = len(named) > 1
    out = []
    for name, t in named.items():
        left, right = finite_edges(t)
        dens = float_column(t, "density")
        text = histogram_hover_text(t, left, right, extra)
        bins = np.arange(dens.size, dtype=np.int64)
        if not multi:
            out.append({"customdata": bins, "hovertemplate": "%{text}<extra>" + plain(name) + "</extra>",
                        "marker": {"color": rgba(cmap[name], 0.75), "line": {"color": cmap[name], "width": 1}},
                        "meta": {"name": name, "role": "bars"}, "name": plain(name), "text": text,
                        "textposition": "none", "width": right - left, "x": (left + right) / 2, "y": dens,
                        "type": "bar"})
        else:
            out.append({"customdata": np.concatenate([bins, bins[-1:]]),
                        "hovertemplate": "%{text}<extra>" + plain(name) + "</extra>",
                        "line": {"color": cmap[name], "dash": (dashes or {}).get(name, "solid"), "shape": "hv",
                                 "width": 2},
                        "meta": {"name": name, "role": "steps"}, "mode": "lines", "name": plain(name),
                        "text": text + text[-1:], "x": np.concatenate([left, right[-1:]]),
                        "y": np.concatenate([dens, dens[-1:]]), "type": "scatter"})
    return out


def pit_histogram_figure_dict(
    tables: Tables,
    *,
    colors: Mapping[str, str] | None = None,
    title: str | None = "PIT histogram",
    dashes: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """``pit_histogram_figure(tables, ...).to_plotly_json()`` without Plotly validation: the histogram of the PIT
    u = F(y) as a density against the Uniform(0, 1) density (bars for one table, step lines for several).

    Parameters
    ----------
    tables : DataFrame or mapping of str to DataFrame
        One diagram table, or one per model.  Columns ``left, right, count, density``.
    colors : mapping of str to str, optional
        Colour per name.
    title : str or None
        Figure title.
    dashes : mapping of str to str, optional
        Plotly dash style per name.

    Returns
    -------
    dict
        ``{"data": [trace dicts with "type"], "layout": {...}}``.

    References
    ----------
    .. [1] Dawid, A. P. (1984). Present position and potential developments: some personal views. Statistical
       theory: the prequential approach. Journal of the Royal Statistical Society A, 147(2), 278–292.
    .. [2] Gneiting, T., Balabdaoui, F., & Raftery, A. E. (2007). Probabilistic forecasts, calibration and
       sharpness. Journal of the Royal Statistical Society B, 69(2), 243–268.

    Examples
    --------
    >>> t = pd.DataFrame({"left": [0.0, 0.5], "right": [0.5, 1.0], "count": [4, 6], "density": [0.8, 1.2]})
    >>> [d["type"] for d in pit_histogram_figure_dict(t)["data"]]
    ['bar', 'scatter']
    """
    named = named_tables(tables, ["left", "right", "count", "density"])
    cmap = merged_colors(list(named), colors)
    data = _histogram_traces(named, cmap, dashes=dashes)
    data.append(_reference([0.0, 1.0], [1.0, 1.0], "uniform", 1.5))
    layout = _layout(title, "PIT u = F(y)", "density", True, first={"bargap": 0}, x={"range": [0, 1]},
                     y={"rangemode": "tozero"})
    return {"data": data, "layout": layout}


def z_histogram_figure_dict(
    tables: Tables,
    *,
    colors: Mapping[str, str] | None = None,
    title: str | None = "Standardised residuals",
    dashes: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """``z_histogram_figure(tables, ...).to_plotly_json()`` without Plotly validation: the histogram of
    z = (y − μ)/σ as a density against the N(0, 1) density, with the rows beyond its range noted.

    Parameters
    ----------
    tables : DataFrame or mapping of str to DataFrame
        One diagram table, or one per model.  Columns ``left, right, count, density, normal_density`` and
        optionally ``outside``.
    colors : mapping of str to str, optional
        Colour per name.
    title : str or None
        Figure title.
    dashes : mapping of str to str, optional
        Plotly dash style per name.

    Returns
    -------
    dict
        ``{"data": [trace dicts with "type"], "layout": {...}}``.

    References
    ----------
    .. [1] Gneiting, T., Balabdaoui, F., & Raftery, A. E. (2007). Probabilistic forecasts, calibration and
       sharpness. Journal of the Royal Statistical Society B, 69(2), 243–268.

    Examples
    --------
    >>> t = pd.DataFrame({"left": [-1.0, 0.0], "right": [0.0, 1.0], "count": [5, 5], "density": [0.5, 0.5],
    ...                   "normal_density": [0.34, 0.34]})
    >>> z_histogram_figure_dict(t)["layout"]["xaxis"]["range"]
    [-1.0, 1.0]
    """
    named = named_tables(tables, ["left", "right", "count", "density", "normal_density"])
    cmap = merged_colors(list(named), colors)
    data = _histogram_traces(named, cmap, extra="normal_density", dashes=dashes)
    lo = min(float(finite_edges(t)[0].min()) for t in named.values())
    hi = max(float(finite_edges(t)[1].max()) for t in named.values())
    grid = np.linspace(lo, hi, 201)
    normal = np.exp(-0.5 * grid**2) / np.sqrt(2 * np.pi)
    data.append(_reference(grid, normal, "N(0, 1)", 1.5))
    bars, notes = clipped_parts(named)
    for i, bar in enumerate(bars):
        data.append({"base": bar["base"], "hovertemplate": bar["hovertemplate"], "legendgroup": "clipped",
                     "marker": copy.deepcopy(CLIPPED_MARKER), "meta": {"name": bar["name"], "role": "clipped"},
                     "name": CLIPPED_NAME, "showlegend": i == 0, "width": bar["width"], "x": bar["x"],
                     "y": bar["y"], "type": "bar"})
    notes_px = notes_height(notes)[0]
    first: dict[str, Any] = {"bargap": 0}
    multi = True
    if notes_px:  # room above the bars and the N(0, 1) curve for the notes: they never cover the data
        top_px = title_layout(title, lines=str(title or "").count("<br>") + 1)[1]
        plot_px = HEIGHT - top_px - (95 if multi else 55)
        data_top = max([float(np.nanmax(normal))]
                       + [float(np.nanmax(float_column(t, "density"), initial=0.0)) for t in named.values()])
        top = 1.02 * data_top / max(1.0 - notes_px / plot_px, 0.4)
        y_axis: dict[str, Any] = {"range": [0.0, top]}
        data += note_traces(notes, lo, hi, top, plot_px)
    else:
        y_axis = {"rangemode": "tozero"}
    layout = _layout(title, "z = (y − μ) / σ", "density", multi, first=first, x={"range": [lo, hi]}, y=y_axis)
    return {"data": data, "layout": layout}
