"""Plotly figures of the regression labs (``calib_core.labs``), built from small lab tables (never raw rows).

==================== =====================================================================================
builder              table columns
==================== =====================================================================================
coverage_by_bin      bin, count, key_low, key_high, key_mean, observed, expected, band_low, band_high
recalibration_map    u, R (the map on a grid); optional points: u, target (the calibration pairs)
density              y, <one column per curve> (densities on a grid); markers: name → x position
nlpd_reliability     name, nlpd, reliability (one row per model of a sequence)
==================== =====================================================================================

Same conventions as :mod:`calib_core.plots.regression`: explicit ``plotly_white`` template, one colour per
name (``model_colors``), ``meta = {"name", "role"}`` on every trace and ``customdata`` = bin index on the
binned traces.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ._style import REFERENCE_COLOR, apply_layout, merged_colors, named_tables, rgba, title_layout

__all__ = ["coverage_by_bin_figure", "recalibration_map_figure", "density_figure", "nlpd_reliability_figure"]


def coverage_by_bin_figure(
    tables: pd.DataFrame | Mapping[str, pd.DataFrame],
    *,
    key_label: str = "σ",
    colors: Mapping[str, str] | None = None,
    title: str | None = None,
    exact: tuple[np.ndarray, np.ndarray, str] | None = None,
) -> go.Figure:
    """Observed coverage of the central c-interval per equal-count bin of a key (σ, x, scale …) against c.

    One line per name at the bins' mean key, the horizontal reference at the nominal c and, per name, the 95% range
    of Bin(n_j, c)/n_j (where a forecaster calibrated conditionally on the key falls) as a ribbon.  Average
    calibration only fixes the count-weighted mean of the line; a line crossing c from 0 to 1 means the intervals'
    widths carry no information about the errors (Levi et al. 2019 §2).

    Parameters
    ----------
    tables : DataFrame or mapping of str to DataFrame
        Columns ``bin, count, key_low, key_high, key_mean, observed, expected, band_low, band_high``.
    key_label : str, default "σ"
        Name of the key on the x-axis.
    colors : mapping of str to str, optional
        Colour per name (default :func:`model_colors` of the names, in order).
    title : str, optional
        Figure title.
    exact : (ndarray, ndarray, str), optional
        ``(x, y, name)`` of a theoretical coverage curve (dotted).

    Returns
    -------
    plotly.graph_objects.Figure
        The figure.

    References
    ----------
    .. [1] Levi, D., Gispan, L., Giladi, N., & Fetaya, E. (2019). Evaluating and calibrating uncertainty
       prediction in regression tasks. arXiv:1905.11659.
    """
    cols = ["bin", "count", "key_low", "key_high", "key_mean", "observed", "expected", "band_low", "band_high"]
    named = named_tables(tables, cols)
    cmap = merged_colors(list(named), colors)
    fig = go.Figure()
    c = float(next(iter(named.values()))["expected"].iloc[0])
    x_all = np.concatenate([t["key_mean"].to_numpy(float) for t in named.values()])
    fig.add_trace(go.Scatter(x=[x_all.min(), x_all.max()], y=[c, c], mode="lines", name=f"nominal {c:.0%}",
                             line={"color": REFERENCE_COLOR, "dash": "dash", "width": 1}, hoverinfo="skip",
                             meta={"role": "reference"}))
    for name, t in named.items():
        x = t["key_mean"].to_numpy(float)
        fig.add_trace(go.Scatter(x=x, y=t["band_low"], mode="lines", line={"width": 0}, showlegend=False,
                                 hoverinfo="skip", legendgroup=name, meta={"name": name, "role": "band_low"}))
        fig.add_trace(go.Scatter(x=x, y=t["band_high"], mode="lines", line={"width": 0}, fill="tonexty",
                                 fillcolor=rgba(cmap[name], 0.15), showlegend=False, hoverinfo="skip",
                                 legendgroup=name, meta={"name": name, "role": "band_high"}))
        text = [f"bin {int(b) + 1}: {key_label} ∈ [{a:.3g}, {h:.3g}]<br>n = {int(k):,}<br>covered {o:.1%}"
                for b, a, h, k, o in zip(t["bin"], t["key_low"], t["key_high"], t["count"], t["observed"])]
        fig.add_trace(go.Scatter(x=x, y=t["observed"], mode="lines+markers", name=name, legendgroup=name,
                                 line={"color": cmap[name], "width": 2}, marker={"color": cmap[name], "size": 8},
                                 customdata=t["bin"].to_numpy(np.int64), text=text,
                                 hovertemplate="%{text}<extra>" + name + "</extra>",
                                 meta={"name": name, "role": "bins"}))
    if exact is not None:
        fig.add_trace(go.Scatter(x=exact[0], y=exact[1], mode="lines", name=exact[2], hoverinfo="skip",
                                 line={"color": REFERENCE_COLOR, "dash": "dot", "width": 1.5}, meta={"role": "exact"}))
    apply_layout(fig, title, f"{key_label} (bin mean; equal-count bins)", "observed coverage", True)
    fig.update_yaxes(range=[-0.02, 1.02], tickformat=".0%")
    return fig


def recalibration_map_figure(
    grid: pd.DataFrame,
    points: pd.DataFrame | None = None,
    *,
    title: str | None = "Isotonic recalibration map R",
    truncation_u: float | None = None,
) -> go.Figure:
    """Kuleshov's isotonic recalibration map R: [0, 1] → [0, 1] with the pairs it was fitted on.

    If R reaches 1 before u = 1, the truncation level a* is marked (Utpala & Rai, §3, B.2).

    Parameters
    ----------
    grid : DataFrame
        Columns ``u, R``.
    points : DataFrame, optional
        The calibration pairs (u_i, P̂(u_i)): columns ``u, target``.
    title : str or None
        Figure title.
    truncation_u : float, optional
        a*, marked with a vertical line.

    Returns
    -------
    plotly.graph_objects.Figure
        The figure.

    References
    ----------
    .. [1] Kuleshov, V., Fenner, N., & Ermon, S. (2018). Accurate uncertainties for deep learning using calibrated
       regression. Proceedings of the 35th International Conference on Machine Learning (ICML), PMLR 80,
       2796–2804.
    .. [2] Utpala, S., & Rai, P. (2020). Quantile regularization: towards implicit calibration of regression
       models. arXiv:2002.12860.
    """
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=[0, 1], y=[0, 1], mode="lines", name="identity",
                             line={"color": REFERENCE_COLOR, "dash": "dash", "width": 1}, hoverinfo="skip",
                             meta={"role": "reference"}))
    fig.add_trace(go.Scatter(x=grid["u"], y=grid["R"], mode="lines", name="R(u)", line={"color": "#4c78a8", "width": 2},
                             hovertemplate="u %{x:.3f}<br>R(u) %{y:.3f}<extra></extra>", meta={"role": "map"}))
    if points is not None and len(points):
        fig.add_trace(go.Scatter(x=points["u"], y=points["target"], mode="markers", name="calibration pairs",
                                 marker={"color": "#f58518", "size": 7},
                                 hovertemplate="u %{x:.3f}<br>P̂ %{y:.3f}<extra></extra>", meta={"role": "points"}))
    if truncation_u is not None and truncation_u < 1.0:
        fig.add_vline(x=truncation_u, line={"color": "#e45756", "dash": "dot"},
                      annotation_text=f"R = 1 from u = {truncation_u:.3f}", annotation_position="top left")
    apply_layout(fig, title, "u = F(y) (predicted CDF)", "R(u) (recalibrated CDF)", True)
    fig.update_xaxes(range=[0, 1], constrain="domain")
    fig.update_yaxes(range=[0, 1.02], scaleanchor="x", scaleratio=1, constrain="domain")
    return fig


def density_figure(
    table: pd.DataFrame,
    *,
    markers: Mapping[str, float] | None = None,
    colors: Mapping[str, str] | None = None,
    title: str | None = "Predictive density",
    x_label: str = "y",
    y_cap: float | None = None,
) -> go.Figure:
    """Densities on a grid with vertical markers, e.g. the means before/after recalibration and the truncation point.

    Marker labels are staggered so close markers stay legible.

    Parameters
    ----------
    table : DataFrame
        Column ``y`` and one column per curve.
    markers : mapping of str to float, optional
        Name → x position of a vertical marker (non-finite ones are skipped).
    colors : mapping of str to str, optional
        Colour per name (default :func:`model_colors` of the names, in order).
    title : str or None
        Figure title.
    x_label : str, default "y"
        The x-axis title.
    y_cap : float, optional
        Clip the y-axis (spikes of an isotonic-recalibrated density can be 100× the base density); the clipped peak
        height is then added to the title.

    Returns
    -------
    plotly.graph_objects.Figure
        The figure.

    References
    ----------
    .. [1] Utpala, S., & Rai, P. (2020). Quantile regularization: towards implicit calibration of regression
       models. arXiv:2002.12860.
    """
    names = [c for c in table.columns if c != "y"]
    cmap = merged_colors(names, colors)
    fig = go.Figure()
    for name in names:
        fig.add_trace(go.Scatter(x=table["y"], y=table[name], mode="lines", name=name,
                                 line={"color": cmap[name], "width": 2}, meta={"name": name, "role": "density"},
                                 hovertemplate="y %{x:.3f}<br>density %{y:.3f}<extra>" + name + "</extra>"))
    palette = ["#555555", "#e45756", "#54a24b", "#b279a2"]
    finite = [(name, float(x)) for name, x in (markers or {}).items() if np.isfinite(x)]
    for i, (name, x) in enumerate(finite):
        color = palette[i % len(palette)]
        fig.add_shape(type="line", x0=x, x1=x, y0=0, y1=1, yref="paper", name=name,
                      line={"color": color, "dash": "dot", "width": 1.5})
        fig.add_annotation(x=x, y=1.0 - 0.08 * i, yref="paper", text=f"{name} = {x:.3g}", showarrow=False,
                           xanchor="left", xshift=4, font={"color": color, "size": 11}, bgcolor="rgba(255,255,255,0.7)")
    apply_layout(fig, title, x_label, "density", True)
    peak = float(np.nanmax(table[names].to_numpy(float))) if names else 0.0
    if y_cap is not None and peak > y_cap:
        fig.update_yaxes(range=[0, y_cap])
        note = f"<sup>y-axis clipped; spikes reach {peak:.3g}</sup>"
        spec, top = title_layout(f"{title}<br>{note}" if title else note, lines=2 if title else 1)
        fig.update_layout(title=spec, margin={"t": top})
    else:
        fig.update_yaxes(rangemode="tozero")
    return fig


def nlpd_reliability_figure(
    table: pd.DataFrame,
    *,
    colors: Mapping[str, str] | None = None,
    title: str | None = "Accuracy (NLPD) against reliability (RS)",
) -> go.Figure:
    """One marker per model at (NLPD, reliability score), joined in the table's order (a sequence of models).

    Both are negatively oriented; ACCRUE §3's point is that NLPD can fall while RS rises (Camporeale & Carè).

    Parameters
    ----------
    table : DataFrame
        Columns ``name, nlpd, reliability``.
    colors : mapping of str to str, optional
        Colour per name (default :func:`model_colors` of the names, in order).
    title : str or None
        Figure title.

    Returns
    -------
    plotly.graph_objects.Figure
        The figure.

    References
    ----------
    .. [1] Camporeale, E., & Carè, A. (2021). ACCRUE: accurate and reliable uncertainty estimate in deterministic
       models. International Journal for Uncertainty Quantification, 11(4), 81–94.
    """
    named = list(table["name"])
    cmap = merged_colors(named, colors)
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=table["nlpd"], y=table["reliability"], mode="lines", name="sequence",
                             line={"color": REFERENCE_COLOR, "width": 1}, hoverinfo="skip",
                             meta={"role": "path"}, showlegend=False))
    for _, row in table.iterrows():
        fig.add_trace(go.Scatter(x=[row["nlpd"]], y=[row["reliability"]], mode="markers", name=row["name"],
                                 marker={"color": cmap[row["name"]], "size": 11},
                                 hovertemplate="NLPD %{x:.3f}<br>RS %{y:.4f}<extra>" + row["name"] + "</extra>",
                                 meta={"name": row["name"], "role": "points"}))
    apply_layout(fig, title, "NLPD (lower = more accurate)", "reliability score RS (lower = more reliable)", True)
    return fig
