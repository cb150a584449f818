"""The smooth reliability diagram (Błasiok & Nakkiran 2023, Fig. 1): the kernel-smoothed reliability curve at the
automatic bandwidth σ*, with the kernel density of the predictions underneath."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ._style import REFERENCE_COLOR, apply_layout, merged_colors, named_tables, plain, rgba

__all__ = ["smooth_reliability_figure"]

_AXES = {
    "top_label": ("confidence (max predicted probability)", "smoothed accuracy"),
    "positive": ("predicted probability of the positive class", "smoothed frequency of the positive class"),
}


def smooth_reliability_figure(
    tables: pd.DataFrame | Mapping[str, pd.DataFrame],
    *,
    colors: Mapping[str, str] | None = None,
    target: str = "top_label",
    title: str | None = "Smooth reliability diagram",
) -> go.Figure:
    """Smooth reliability diagram: one kernel-smoothed reliability curve per model.

    ŷ_σ*(t) = Σ K_σ*(t, f_i) y_i / Σ K_σ*(t, f_i) against t (the diagonal is perfect calibration), drawn where the
    predictions' kernel density δ̂(t) is at least 1 % of its maximum (elsewhere the curve rests on a handful of rows);
    the density itself as a shaded area on a second axis.  The legend gives each model's smooth ECE and bandwidth
    (``attrs`` of :func:`calib_core.metrics.classification_smooth.smooth_reliability`).

    Parameters
    ----------
    tables : DataFrame or mapping of str to DataFrame
        Columns ``t, curve, density``.
    colors : mapping of str to str, optional
        Colour per name (default :func:`model_colors` of the names, in order).
    target : {"top_label", "positive"}, default "top_label"
        Only changes the axis titles.
    title : str or None
        Figure title.

    Returns
    -------
    plotly.graph_objects.Figure
        The figure.

    References
    ----------
    .. [1] Błasiok, J., & Nakkiran, P. (2023). Smooth ECE: principled reliability diagrams via kernel smoothing.
       arXiv:2309.12236.
    """
    named = named_tables(tables, ["t", "curve", "density"])
    cmap = merged_colors(list(named), colors)
    x_title, y_title = _AXES.get(target, _AXES["top_label"])
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=[0, 1], y=[0, 1], mode="lines", name="perfect calibration", hoverinfo="skip",
                             line={"color": REFERENCE_COLOR, "dash": "dash", "width": 1}, meta={"role": "reference"}))
    top = max(float(np.nanmax(t["density"].to_numpy(dtype=float))) for t in named.values())
    for name, t in named.items():
        x = t["t"].to_numpy(dtype=float)
        dens = t["density"].to_numpy(dtype=float)
        curve = t["curve"].to_numpy(dtype=float)
        curve = np.where(dens >= 0.01 * np.nanmax(dens), curve, np.nan)
        label = plain(name)
        value, sigma = t.attrs.get("smooth_ece", np.nan), t.attrs.get("sigma", np.nan)
        fig.add_trace(go.Scatter(
            x=x, y=dens, yaxis="y2", mode="lines", fill="tozeroy", line={"width": 0, "color": cmap[name]},
            fillcolor=rgba(cmap[name], 0.12), name=f"{label}: density of predictions", hoverinfo="skip",
            showlegend=len(named) == 1, meta={"name": name, "role": "density"}))
        fig.add_trace(go.Scatter(
            x=x, y=curve, mode="lines", line={"color": cmap[name], "width": 2.5},
            name=f"{label}: smECE {value:.4g} (σ* = {sigma:.3g})",
            hovertemplate="t = %{x:.3f}<br>smoothed outcome = %{y:.3f}<extra>" + label + "</extra>",
            meta={"name": name, "role": "curve"}))
    apply_layout(fig, title, x_title, y_title, True)
    fig.update_layout(
        xaxis={"range": [0, 1]}, yaxis={"range": [0, 1.02]},
        yaxis2={"overlaying": "y", "side": "right", "range": [0, 4 * top if top > 0 else 1], "showgrid": False,
                "showticklabels": False, "title": None},
    )
    return fig
