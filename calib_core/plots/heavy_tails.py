"""Plotly figures of the heavy-tail lenses (Pernot 2024): ENCE against the number of σ-bins with its
perfect-calibration band, built from the tables of :func:`calib_core.metrics.regression_tails.ence_by_bins` (columns
``n_bins, ence, null_mean, null_low, null_high, p_value``: O(bin counts) points whatever the number of rows), and the
two figures of the lab "the reference value depends on the error law" (:mod:`calib_core.labs.error_law`)."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ._style import (
    PALETTE,
    REFERENCE_COLOR,
    Tables,
    apply_layout,
    merged_colors,
    named_tables,
    plain,
    rgba,
    set_template,
    title_layout,
)

__all__ = ["ence_bins_figure", "error_law_ence_figure", "error_law_references_figure"]


def ence_bins_figure(
    tables: Tables,
    *,
    colors: Mapping[str, str] | None = None,
    current: int | None = None,
    level: float = 0.95,
    title: str | None = "ENCE against the number of σ-bins",
) -> go.Figure:
    """ENCE at each number of σ-bins B against the band of a perfectly calibrated forecaster.

    Markers and line, one colour per model, over the band where a perfectly calibrated forecaster with the same σ
    falls (``level``; ribbon) and its mean (dotted): ENCE grows with B even under perfect calibration (Pernot 2024),
    so a value is judged against the band at its own B.  Log x-axis; log y-axis when every value is positive.

    Parameters
    ----------
    tables : DataFrame or mapping of str to DataFrame
        Per model the columns ``n_bins, ence, null_mean, null_low, null_high, p_value``.
    colors : mapping of str to str, optional
        Colour per model.
    current : int, optional
        The page's B, marked with a vertical line.
    level : float, default 0.95
        The band's level (as computed; named in the legend).
    title : str or None
        Figure title.

    Returns
    -------
    plotly.graph_objects.Figure
        The figure.

    References
    ----------
    .. [1] Levi, D., Gispan, L., Giladi, N., & Fetaya, E. (2019). Evaluating and calibrating uncertainty
       prediction in regression tasks. arXiv:1905.11659.
    .. [2] Pernot, P. (2024). Negative impact of heavy-tailed uncertainty and error distributions on the
       reliability of calibration statistics for machine learning regression tasks. arXiv:2402.10043.
    """
    named = named_tables(tables, ["n_bins", "ence", "null_mean", "null_low", "null_high", "p_value"])
    cmap = merged_colors(list(named), colors)
    multi = len(named) > 1
    fig = go.Figure()
    pct = f"{100 * level:g}%"
    for name, t in named.items():
        b = t["n_bins"].to_numpy(dtype=float)
        color = cmap[name]
        shown = plain(name)
        label = f"{shown}: " if multi else ""
        fig.add_trace(go.Scatter(x=b, y=t["null_low"], mode="lines", line={"width": 0}, showlegend=False,
                                 hoverinfo="skip", legendgroup=name, meta={"name": name, "role": "band_low"}))
        fig.add_trace(go.Scatter(
            x=b, y=t["null_high"], mode="lines", line={"width": 0}, fill="tonexty", fillcolor=rgba(color, 0.16),
            name=f"{label}{pct} band, perfect calibration", legendgroup=name, hoverinfo="skip", showlegend=False,
            meta={"name": name, "role": "band_high"}))
        fig.add_trace(go.Scatter(
            x=b, y=t["null_mean"], mode="lines", line={"color": color, "width": 1.2, "dash": "dot"},
            name=f"{label}perfect calibration (mean, {pct} band)", legendgroup=name, hoverinfo="skip",
            meta={"name": name, "role": "null_mean"}))
        fig.add_trace(go.Scatter(
            x=b, y=t["ence"], mode="lines+markers", line={"color": color, "width": 2.2},
            marker={"color": color, "size": 7}, name=shown if multi else "ENCE", legendgroup=name,
            customdata=np.column_stack([t["null_mean"], t["null_low"], t["null_high"], t["p_value"]]),
            hovertemplate=("B = %{x} bins<br>ENCE %{y:.4g}<br>perfect calibration %{customdata[0]:.4g} "
                           "[%{customdata[1]:.4g}, %{customdata[2]:.4g}]<br>p = %{customdata[3]:.3g}<extra>"
                           + shown + "</extra>"),
            meta={"name": name, "role": "ence"}))
    apply_layout(fig, title, "number of σ-bins B (log scale)", "ENCE (log scale)", True)
    values = np.concatenate([t[c].to_numpy(dtype=float) for t in named.values() for c in ("ence", "null_low")]) \
        if named else np.empty(0)
    positive = values[np.isfinite(values) & (values > 0)]
    bins = np.concatenate([t["n_bins"].to_numpy(dtype=float) for t in named.values()]) if named else np.ones(1)
    x_range = [np.log10(max(bins.min(), 1.0) / 1.25), np.log10(bins.max() * 1.25)]
    ticks = [v for v in (1, 2, 3, 5, 10, 15, 20, 30, 50, 100, 200, 500, 1000) if bins.min() <= v <= bins.max()]
    fig.update_xaxes(type="log", range=x_range, tickvals=ticks, ticktext=[str(v) for v in ticks], minor_showgrid=False)
    fig.update_layout(margin={"b": 150}, legend={"y": -0.38})
    if positive.size and (values[np.isfinite(values)] > 0).all():  # log y: the band near 0 and a far ENCE both show
        fig.update_yaxes(type="log", dtick=1)
    if current is not None:
        lo, hi = (float(positive.min()) / 1.5, float(positive.max()) * 1.5) if positive.size else (0.0, 1.0)
        fig.add_trace(go.Scatter(
            x=[current, current], y=[lo, hi], mode="lines", line={"color": "#888888", "width": 1, "dash": "dash"},
            name=f"B = {current}, the page's σ-bins", hoverinfo="skip", meta={"role": "current"}))
    return fig


def _null_colors(nulls) -> dict[str, str]:
    return {null: PALETTE[(i + 2) % len(PALETTE)] for i, null in enumerate(nulls)}


def error_law_ence_figure(bands: pd.DataFrame, observed: pd.DataFrame, *, current: int | None = None,
                          title: str | None = "ENCE against σ-bins under three error laws") -> go.Figure:
    """The observed ENCE at each bin count over each null's 95% band and mean.

    Black markers for the observed ENCE; one colour per null (Gaussian, Student-t, empirical z).  Log axes.

    Parameters
    ----------
    bands : DataFrame
        ``null, n_bins, mean, low, high``.
    observed : DataFrame
        ``n_bins, ence``.
    current : int, optional
        The page's bin count, marked with a vertical line.
    title : str or None
        Figure title.

    Returns
    -------
    plotly.graph_objects.Figure
        The figure.

    References
    ----------
    .. [1] Pernot, P. (2024). Negative impact of heavy-tailed uncertainty and error distributions on the
       reliability of calibration statistics for machine learning regression tasks. arXiv:2402.10043.
    """
    nulls = list(dict.fromkeys(bands["null"]))
    cmap = _null_colors(nulls)
    fig = go.Figure()
    for null in nulls:
        t = bands[bands["null"] == null]
        b = t["n_bins"].to_numpy(dtype=float)
        fig.add_trace(go.Scatter(x=b, y=t["low"], mode="lines", line={"width": 0}, showlegend=False,
                                 hoverinfo="skip", legendgroup=null, meta={"name": null, "role": "band_low"}))
        fig.add_trace(go.Scatter(x=b, y=t["high"], mode="lines", line={"width": 0}, fill="tonexty",
                                 fillcolor=rgba(cmap[null], 0.18), showlegend=False, hoverinfo="skip",
                                 legendgroup=null, meta={"name": null, "role": "band_high"}))
        fig.add_trace(go.Scatter(
            x=b, y=t["mean"], mode="lines", line={"color": cmap[null], "width": 1.8, "dash": "dot"},
            name=f"{null} null (mean, 95% band)", legendgroup=null,
            customdata=np.column_stack([t["low"], t["high"]]),
            hovertemplate="B = %{x}<br>reference %{y:.4g}<br>95% band [%{customdata[0]:.4g}, %{customdata[1]:.4g}]"
                          "<extra>" + null + "</extra>",
            meta={"name": null, "role": "null_mean"}))
    fig.add_trace(go.Scatter(
        x=observed["n_bins"], y=observed["ence"], mode="lines+markers", line={"color": "#222222", "width": 2},
        marker={"size": 7, "color": "#222222"}, name="the data's ENCE",
        hovertemplate="B = %{x}<br>ENCE %{y:.4g}<extra>observed</extra>", meta={"role": "observed"}))
    apply_layout(fig, title, "number of σ-bins B (log scale)", "ENCE (log scale)", True)
    bins = observed["n_bins"].to_numpy(dtype=float)
    ticks = [v for v in (2, 3, 5, 10, 15, 20, 30, 50, 100, 200) if bins.min() <= v <= bins.max()]
    fig.update_xaxes(type="log", tickvals=ticks, ticktext=[str(v) for v in ticks],
                     range=[np.log10(bins.min() / 1.25), np.log10(bins.max() * 1.25)])
    fig.update_yaxes(type="log", dtick=1)
    if current is not None:
        vals = np.concatenate([bands["low"].to_numpy(float), observed["ence"].to_numpy(float)])
        vals = vals[np.isfinite(vals) & (vals > 0)]
        fig.add_trace(go.Scatter(x=[current, current], y=[vals.min() / 1.3, vals.max() * 1.3], mode="lines",
                                 line={"color": "#888888", "width": 1, "dash": "dash"}, name=f"B = {current}",
                                 hoverinfo="skip", meta={"role": "current"}))
    fig.update_layout(margin={"b": 130}, legend={"y": -0.3})
    return fig


_STAT_TITLES = {"ence": "ENCE at B bins", "zms": "ZMS (mean z²)", "mean_log_z2": "mean log z²"}


def error_law_references_figure(references: pd.DataFrame, *, n_bins: int | None = None,
                                title: str | None = None) -> go.Figure:
    """One panel per statistic (ENCE at B bins, ZMS, mean log z²): each null's reference and the observed value.

    Each null's reference (mean) with its 95% band as an error bar, and the observed value as a horizontal line.

    Parameters
    ----------
    references : DataFrame
        ``null, statistic, mean, low, high, observed``.
    n_bins : int, optional
        B, named in the ENCE panel's title.
    title : str, optional
        Figure title.

    Returns
    -------
    plotly.graph_objects.Figure
        The figure.

    References
    ----------
    .. [1] Pernot, P. (2024). Negative impact of heavy-tailed uncertainty and error distributions on the
       reliability of calibration statistics for machine learning regression tasks. arXiv:2402.10043.
    .. [2] Pernot, P. (2023). Calibration in machine learning uncertainty quantification: beyond consistency to
       target adaptivity. APL Machine Learning, 1(4), 046121 (arXiv:2309.06240).
    """
    stats = [s for s in _STAT_TITLES if s in set(references["statistic"])]
    titles = [(_STAT_TITLES[s].replace("B", str(n_bins)) if s == "ence" and n_bins else _STAT_TITLES[s])
              for s in stats]
    fig = make_subplots(rows=1, cols=len(stats), subplot_titles=titles, horizontal_spacing=0.09)
    nulls = list(dict.fromkeys(references["null"]))
    cmap = _null_colors(nulls)
    for j, stat in enumerate(stats, start=1):
        t = references[references["statistic"] == stat].set_index("null").loc[nulls]
        for null in nulls:
            r = t.loc[null]
            fig.add_trace(go.Scatter(
                x=[null], y=[r["mean"]], mode="markers", marker={"size": 11, "color": cmap[null]},
                error_y={"type": "data", "symmetric": False, "array": [r["high"] - r["mean"]],
                         "arrayminus": [r["mean"] - r["low"]], "color": cmap[null], "thickness": 2, "width": 8},
                name=null, showlegend=False,
                hovertemplate=f"{null}<br>reference %{{y:.4g}}<br>95% band [{r['low']:.4g}, {r['high']:.4g}]"
                              "<extra></extra>",
                meta={"name": null, "role": "reference", "statistic": stat}), row=1, col=j)
        v = float(t["observed"].iloc[0])
        fig.add_trace(go.Scatter(
            x=[nulls[0], nulls[-1]], y=[v, v], mode="lines", line={"color": "#222222", "width": 2, "dash": "dash"},
            name="observed", showlegend=j == 1, hovertemplate=f"observed {v:.4g}<extra></extra>",
            meta={"role": "observed", "statistic": stat}), row=1, col=j)
    spec, top = title_layout(title)
    top = top + 30 if title else 70  # the subplot titles sit above each panel, below the figure's title
    set_template(fig)
    fig.update_layout(title=spec, height=420, margin={"l": 50, "r": 20, "t": top, "b": 70},
                      legend={"orientation": "h", "yanchor": "top", "y": -0.12, "xanchor": "center", "x": 0.5},
                      showlegend=True)
    fig.update_xaxes(tickfont={"size": 11}, linecolor=REFERENCE_COLOR)
    return fig
