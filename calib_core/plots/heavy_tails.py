"""Plotly figure of ENCE against the number of σ-bins with its perfect-calibration band (Pernot 2024), built from
the tables of :func:`calib_core.regression.heavy_tails.ence_by_bins` (columns ``n_bins, ence, null_mean, null_low,
null_high, p_value``): O(bin counts) points whatever the number of rows."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import plotly.graph_objects as go

from ._style import Tables, apply_layout, merged_colors, named_tables, rgba

__all__ = ["ence_bins_figure"]


def ence_bins_figure(
    tables: Tables,
    *,
    colors: Mapping[str, str] | None = None,
    current: int | None = None,
    level: float = 0.95,
    title: str | None = "ENCE against the number of σ-bins",
) -> go.Figure:
    """ENCE at each number of σ-bins B (markers and line, one colour per model) over the band where a perfectly
    calibrated forecaster with the same σ falls (``level``; ribbon) and its mean (dotted): ENCE grows with B even
    under perfect calibration (Pernot 2024), so a value is judged against the band at its own B.  ``current`` marks
    the page's B with a vertical line.  Log x-axis; log y-axis when every value is positive."""
    named = named_tables(tables, ["n_bins", "ence", "null_mean", "null_low", "null_high", "p_value"])
    cmap = merged_colors(list(named), colors)
    multi = len(named) > 1
    fig = go.Figure()
    pct = f"{100 * level:g}%"
    for name, t in named.items():
        b = t["n_bins"].to_numpy(dtype=float)
        color = cmap[name]
        label = f"{name}: " if multi else ""
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
            marker={"color": color, "size": 7}, name=name if multi else "ENCE", legendgroup=name,
            customdata=np.column_stack([t["null_mean"], t["null_low"], t["null_high"], t["p_value"]]),
            hovertemplate=("B = %{x} bins<br>ENCE %{y:.4g}<br>perfect calibration %{customdata[0]:.4g} "
                           "[%{customdata[1]:.4g}, %{customdata[2]:.4g}]<br>p = %{customdata[3]:.3g}<extra>"
                           + name + "</extra>"),
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
