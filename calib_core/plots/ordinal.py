"""Per-threshold reliability of ordinal forecasts: small multiples, one reliability panel per event "Y ≤ k".

Built from :class:`~calib_core.diagrams.classification_ordinal.ThresholdReliability` results (one per model): in
each panel the CORP (PAV) curve of P(Y ≤ k) against the observed frequency, the binned points (marker size grows
with the bin's count), the diagonal, and — for one model — the grey consistency band a calibrated forecaster's
curve stays in.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ..diagrams.classification_ordinal import ThresholdReliability
from ._style import REFERENCE_COLOR, merged_colors, plain, rgba, set_template, title_layout

__all__ = ["threshold_reliability_figure", "worst_thresholds"]


def worst_thresholds(summary: pd.DataFrame, n: int) -> list[int]:
    """The ``n`` thresholds shown first: all when there are at most ``n``, else those with the smallest Holm-adjusted
    p-value (ties: the largest MCB), in threshold order.

    Parameters
    ----------
    summary : DataFrame
        :attr:`ThresholdReliability.summary` (columns ``threshold``, ``adjusted_p``, ``mcb``).
    n : int
        Most thresholds.

    Returns
    -------
    list of int
        Threshold codes.
    """
    if len(summary) <= n:
        return [int(k) for k in summary["threshold"]]
    order = summary.assign(_p=summary["adjusted_p"].fillna(np.inf)).sort_values(["_p", "mcb"],
                                                                                 ascending=[True, False])
    return sorted(int(k) for k in order["threshold"].iloc[:n])


def _panel_title(name: str, results: Mapping[str, ThresholdReliability], k: int) -> str:
    if len(results) != 1:
        return plain(name)
    row = next(iter(results.values())).summary.set_index("threshold").loc[k]
    p = row["adjusted_p"]
    p_text = ""
    if np.isfinite(p):
        p_text = f" · p<sub>Holm</sub> {p:.3f}" if p >= 0.001 else " · p<sub>Holm</sub> &lt; 0.001"
    return f"{plain(name)} · MCB {row['mcb']:.4f}{p_text}"


def threshold_reliability_figure(
    results: Mapping[str, ThresholdReliability],
    *,
    colors: Mapping[str, str] | None = None,
    thresholds: Sequence[int] | None = None,
    max_panels: int = 12,
    ncols: int = 4,
    title: str | None = "Reliability per threshold: P(Y ≤ k) against the frequency of Y ≤ k",
) -> go.Figure:
    """Small multiples of the per-threshold reliability of ordinal forecasts, one panel per event "Y ≤ k".

    Each panel: the diagonal, the CORP curve P̂_k = PAV(1{Y ≤ k} | P_k) of every model (line) and its binned
    reliability (mean P_k against the frequency of Y ≤ k per bin; markers), and for a single model the
    consistency band and, in the panel title, its Brier MCB and Holm-adjusted p-value.

    Parameters
    ----------
    results : mapping of str to ThresholdReliability
        Per model.
    colors : mapping of str to str, optional
        Colour per model (default :func:`~calib_core.plots._style.model_colors` order).
    thresholds : sequence of int, optional
        The threshold codes to draw, in that order (default: all when at most ``max_panels``, else the
        ``max_panels`` most miscalibrated of the first model, :func:`worst_thresholds`).
    max_panels : int, default 12
        Most panels drawn by default.
    ncols : int, default 4
        Panels per row.
    title : str or None
        Figure title.

    Returns
    -------
    plotly.graph_objects.Figure
        The figure.
    """
    if not results:
        raise ValueError("no per-threshold reliability given")
    names = list(results)
    cols = merged_colors(names, colors)
    first = results[names[0]]
    ks = list(thresholds) if thresholds is not None else worst_thresholds(first.summary, max_panels)
    if not ks:
        raise ValueError("no threshold to draw")
    event = dict(zip(first.summary["threshold"].astype(int), first.summary["event"]))
    ncols = max(1, min(ncols, len(ks)))
    nrows = max(1, math.ceil(len(ks) / ncols))
    fig = make_subplots(rows=nrows, cols=ncols, shared_xaxes=True, shared_yaxes=True,
                        subplot_titles=[_panel_title(event[k], results, k) for k in ks],
                        horizontal_spacing=0.03, vertical_spacing=0.14 if nrows > 1 else 0.0)
    for i, k in enumerate(ks):
        r, c = i // ncols + 1, i % ncols + 1
        fig.add_trace(go.Scatter(x=[0, 1], y=[0, 1], mode="lines", hoverinfo="skip", showlegend=False,
                                 line={"color": REFERENCE_COLOR, "dash": "dash", "width": 1},
                                 meta={"role": "reference"}), row=r, col=c)
        if len(results) == 1:
            b = first.bands[first.bands["threshold"] == k]
            x = b["forecast"].to_numpy(float)
            lo, hi = b["consistency_low"].to_numpy(float), b["consistency_high"].to_numpy(float)
            if np.isfinite(lo).any():
                level = float(first.info.get("band_level", 0.9))
                fig.add_trace(go.Scatter(x=np.r_[x, x[::-1]], y=np.r_[hi, lo[::-1]], fill="toself", mode="lines",
                                         line={"width": 0}, fillcolor=rgba(REFERENCE_COLOR, 0.16), hoverinfo="skip",
                                         name=f"{level:.0%} consistency band", showlegend=i == 0,
                                         legendgroup="band", meta={"role": "band"}), row=r, col=c)
        for j, (name, res) in enumerate(results.items()):
            label = plain(name)
            cv = res.curves[res.curves["threshold"] == k]
            fig.add_trace(go.Scatter(
                x=cv["forecast"], y=cv["recalibrated"], mode="lines", line={"color": cols[name], "width": 2},
                name=label, legendgroup=f"m{j}", showlegend=i == 0,
                hovertemplate="P(Y ≤ k) %{x:.3f}<br>recalibrated %{y:.3f}" + f"<extra>{label}</extra>",
                meta={"name": str(name), "role": "corp", "threshold": int(k)},
            ), row=r, col=c)
            t = res.bins[(res.bins["threshold"] == k) & (res.bins["count"] > 0)]
            count = t["count"].to_numpy(float)
            fig.add_trace(go.Scatter(
                x=t["confidence"], y=t["accuracy"], mode="markers", showlegend=False, legendgroup=f"m{j}",
                marker={"color": rgba(cols[name], 0.7), "size": np.clip(4 + 2.5 * np.log10(np.maximum(count, 1)),
                                                                        4, 13),
                        "line": {"color": "white", "width": 0.5}},
                customdata=count, hovertemplate=("n = %{customdata:,}<br>mean P(Y ≤ k) %{x:.3f}<br>frequency "
                                                 "%{y:.3f}" + f"<extra>{label}</extra>"),
                meta={"name": str(name), "role": "bins", "threshold": int(k)},
            ), row=r, col=c)
    fig.update_xaxes(range=[0, 1], tickvals=[0, 0.5, 1])
    fig.update_yaxes(range=[0, 1.02], tickvals=[0, 0.5, 1])
    title_spec, top = title_layout(title, above=25)
    set_template(fig)
    fig.update_layout(title=title_spec, height=max(280, 220 * nrows + 110),
                      margin={"l": 50, "r": 20, "t": top, "b": 60},
                      legend={"orientation": "h", "yanchor": "top", "y": -0.08, "xanchor": "center", "x": 0.5})
    fig.update_annotations(font_size=12)
    return fig
