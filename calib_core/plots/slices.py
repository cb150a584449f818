"""The slice explorer's funnel plot: one statistic of every candidate slice against its size, inside the limits a
perfectly calibrated forecaster stays within (tables of :func:`calib_core.slices.regression.funnel_table` and
:func:`calib_core.slices.classification.funnel_table`)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ._style import PALETTE, REFERENCE_COLOR, apply_layout, plain, rgba

__all__ = ["funnel_figure"]

FLAGGED_COLOR = "#e45756"


def funnel_figure(points: pd.DataFrame, limits: pd.DataFrame, *, statistic: str,
                  highlight: int | None = None, title: str | None = None,
                  before: pd.DataFrame | None = None, labels: tuple[str, str] = ("before", "after")) -> go.Figure:
    """Funnel plot (Spiegelhalter 2005): each slice's statistic against its rows n (log x).

    Flagged slices in red, the 95% limits (dashed), the multiplicity-adjusted limits (solid; outside them this
    statistic alone flags a slice) and the perfect-calibration value (dotted).  Each marker's ``customdata`` is the
    slice's ``index`` (a click selects it).

    Parameters
    ----------
    points : DataFrame
        ``slice, n, value, flagged, rank, index`` (a ``funnel_table``'s points).
    limits : DataFrame
        The ``funnel_table``'s limits.
    statistic : str
        The statistic's name (axis title).
    highlight : int, optional
        The ``index`` of a slice drawn larger (the one the pages are restricted to).
    title : str, optional
        Figure title.
    before : DataFrame, optional
        The same slices (same ``index``) under other predictions, e.g. uncalibrated where ``points`` are after a
        recalibration (``views.slices.before_after_funnel``): drawn as open markers (red when flagged then) named
        ``labels[0]``, ``points`` as filled markers named ``labels[1]``, and a grey segment from each slice's before
        to its after point for the slices flagged before or after.
    labels : (str, str), default ("before", "after")
        Legend names of ``before`` and ``points``.

    Returns
    -------
    plotly.graph_objects.Figure
        The figure.

    References
    ----------
    .. [1] Spiegelhalter, D. J. (2005). Funnel plots for comparing institutional performance. Statistics in
       Medicine, 24(8), 1185–1202.
    """
    fig = go.Figure()
    if before is not None:
        _before_traces(fig, before, points, statistic, labels)
    n = limits["n"].to_numpy()
    fig.add_trace(go.Scatter(x=n, y=limits["expected"], mode="lines", name="perfect calibration",
                             line={"color": REFERENCE_COLOR, "dash": "dot", "width": 1}, hoverinfo="skip"))
    for name, dash, label in (("95%", "dash", "95% limits"), ("adjusted", "solid", "limits adjusted for the search")):
        for side in ("lower", "upper"):
            fig.add_trace(go.Scatter(
                x=n, y=limits[f"{side} {name}"], mode="lines", name=label, legendgroup=name,
                showlegend=side == "lower", line={"color": REFERENCE_COLOR, "dash": dash, "width": 1.2},
                hoverinfo="skip"))
    names = ("slices", "flagged slices") if before is None else (f"slices {labels[1]}", f"flagged {labels[1]}")
    for flagged, color, label in ((False, PALETTE[0], names[0]), (True, FLAGGED_COLOR, names[1])):
        part = points[points["flagged"].to_numpy(dtype=bool) == flagged]
        if part.empty:
            continue
        fig.add_trace(go.Scatter(
            x=part["n"], y=part["value"], mode="markers", name=label,
            marker={"color": rgba(color, 0.75), "size": 7, "line": {"width": 0.5, "color": "white"}},
            customdata=part["index"].to_numpy(), text=[plain(s) for s in part["slice"]],
            hovertemplate="%{text}<br>n = %{x:,}<br>" + plain(statistic) + " = %{y:.4g}<extra></extra>"))
    if highlight is not None:
        part = points[points["index"].to_numpy() == int(highlight)]
        if not part.empty:
            fig.add_trace(go.Scatter(
                x=part["n"], y=part["value"], mode="markers", name="shown on the pages",
                marker={"symbol": "circle-open", "size": 16, "line": {"width": 2.5, "color": "#222222"}},
                customdata=part["index"].to_numpy(), text=[plain(s) for s in part["slice"]],
                hovertemplate="%{text}<extra>shown</extra>"))
    apply_layout(fig, title, "slice size n (rows, log scale)", plain(statistic), True)
    fig.update_xaxes(type="log")
    finite = np.isfinite(points["value"].to_numpy(dtype=float))
    if finite.any():  # keep the funnel readable: y range from the limits and the slices
        shown = points["value"].to_numpy(dtype=float)[finite]
        if before is not None:
            shown = np.concatenate([shown, before["value"].to_numpy(dtype=float)])
        ys = np.concatenate([shown,
                             limits[["lower adjusted", "upper adjusted"]].to_numpy(dtype=float).ravel()])
        ys = ys[np.isfinite(ys)]
        pad = 0.05 * (ys.max() - ys.min() or 1.0)
        fig.update_yaxes(range=[ys.min() - pad, ys.max() + pad])
    fig.update_layout(clickmode="event+select")
    return fig


def _before_traces(fig: go.Figure, before: pd.DataFrame, after: pd.DataFrame, statistic: str,
                   labels: tuple[str, str]) -> None:
    """Segments before → after of the slices flagged in either, and the open markers of ``before``."""
    b = before.set_index("index")
    a = after.set_index("index").reindex(b.index)
    moved = (b["flagged"].to_numpy(dtype=bool) | a["flagged"].fillna(False).to_numpy(dtype=bool))
    moved &= np.isfinite(b["value"].to_numpy(dtype=float)) & np.isfinite(a["value"].to_numpy(dtype=float))
    if moved.any():
        k = int(moved.sum())
        xs = np.column_stack([b["n"].to_numpy(dtype=float)[moved], a["n"].to_numpy(dtype=float)[moved],
                              np.full(k, np.nan)]).ravel()
        ys = np.column_stack([b["value"].to_numpy(dtype=float)[moved], a["value"].to_numpy(dtype=float)[moved],
                              np.full(k, np.nan)]).ravel()
        fig.add_trace(go.Scatter(x=xs, y=ys, mode="lines", name=f"{labels[0]} → {labels[1]}",
                                 line={"color": rgba(REFERENCE_COLOR, 0.6), "width": 1}, hoverinfo="skip",
                                 connectgaps=False))
    for flagged, color, label in ((False, PALETTE[0], f"slices {labels[0]}"),
                                  (True, FLAGGED_COLOR, f"flagged {labels[0]}")):
        part = before[before["flagged"].to_numpy(dtype=bool) == flagged]
        if part.empty:
            continue
        fig.add_trace(go.Scatter(
            x=part["n"], y=part["value"], mode="markers", name=label,
            marker={"symbol": "circle-open", "color": rgba(color, 0.8), "size": 8, "line": {"width": 1.2}},
            text=[plain(s) for s in part["slice"]],
            hovertemplate="%{text}<br>n = %{x:,}<br>" + plain(statistic) + " = %{y:.4g}<extra>" + plain(labels[0])
            + "</extra>"))
