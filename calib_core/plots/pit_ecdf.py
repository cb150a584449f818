"""The PIT-ECDF difference plot (Säilynoja, Bürkner & Vehtari 2022, Fig. 3): F̂(z) − z with its simultaneous band,
the Kuleshov curve's view in which small departures are visible at every level."""

from __future__ import annotations

from collections.abc import Collection, Mapping

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ._style import REFERENCE_COLOR, apply_layout, merged_colors, named_tables, plain, rgba

__all__ = ["pit_ecdf_difference_figure"]


def pit_ecdf_difference_figure(
    tables: pd.DataFrame | Mapping[str, pd.DataFrame],
    *,
    colors: Mapping[str, str] | None = None,
    title: str | None = "PIT-ECDF difference",
    dashes: Mapping[str, str] | None = None,
    bands: Collection[str] | None = None,
) -> go.Figure:
    """F̂(p) − p of each calibration-curve table with its band minus p as a ribbon.

    Roles ``band_low``, ``band_high``, ``curve`` as in ``calibration_curve_figure``: 0 is perfect calibration; with
    the simultaneous band a calibrated forecaster's whole curve stays inside 95% of the time.

    Parameters
    ----------
    tables : DataFrame or mapping of str to DataFrame
        ``calibration_curve`` tables (``level, observed, band_low, band_high``).
    colors : mapping of str to str, optional
        Colour per name (default :func:`model_colors` of the names, in order).
    title : str or None
        Figure title.
    dashes : mapping of str to str, optional
        Plotly dash style per name.
    bands : collection of str, optional
        The names whose band is drawn (default: all).

    Returns
    -------
    plotly.graph_objects.Figure
        The figure.

    References
    ----------
    .. [1] Säilynoja, T., Bürkner, P.-C., & Vehtari, A. (2022). Graphical test for discrete uniformity and its
       applications in goodness-of-fit evaluation and multiple sample comparison. Statistics and Computing, 32,
       32.
    .. [2] Kuleshov, V., Fenner, N., & Ermon, S. (2018). Accurate uncertainties for deep learning using calibrated
       regression. Proceedings of the 35th International Conference on Machine Learning (ICML), PMLR 80,
       2796–2804.
    """
    named = named_tables(tables, ["level", "observed", "band_low", "band_high"])
    cmap = merged_colors(list(named), colors)
    multi = len(named) > 1
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=[0, 1], y=[0, 0], mode="lines", name="perfect calibration", hoverinfo="skip",
                             line={"color": REFERENCE_COLOR, "dash": "dash", "width": 1}, meta={"role": "reference"}))
    kind = "simultaneous"
    for name, t in named.items():
        p = t["level"].to_numpy(dtype=float)
        d = t["observed"].to_numpy(dtype=float) - p
        lo = t["band_low"].to_numpy(dtype=float) - p
        hi = t["band_high"].to_numpy(dtype=float) - p
        kind = t.attrs.get("band", kind)
        label = plain(name)
        color = cmap[name]
        if bands is None or name in bands:
            fig.add_trace(go.Scatter(x=p, y=lo, mode="lines", line={"width": 0}, showlegend=False, hoverinfo="skip",
                                     legendgroup=label, meta={"name": name, "role": "band_low"}))
            fig.add_trace(go.Scatter(
                x=p, y=hi, mode="lines", line={"width": 0}, fill="tonexty", fillcolor=rgba(color, 0.18),
                name=f"{label}: 95% {kind} band" if multi else f"95% {kind} band (perfect calibration)",
                showlegend=not multi, hoverinfo="skip", legendgroup=label, meta={"name": name, "role": "band_high"}))
        fig.add_trace(go.Scatter(
            x=p, y=d, mode="lines", name=label, legendgroup=label,
            line={"color": color, "width": 2.5, "dash": (dashes or {}).get(name, "solid")},
            customdata=np.column_stack([lo, hi]),
            hovertemplate="p %{x:.2f}<br>F̂(p) − p %{y:+.4f}<br>band [%{customdata[0]:+.4f}, %{customdata[1]:+.4f}]"
                          "<extra>" + label + "</extra>",
            meta={"name": name, "role": "curve"}))
    apply_layout(fig, title, "expected proportion p (predicted quantile level)", "F̂(p) − p (observed − expected)",
                 True)
    fig.update_xaxes(range=[0, 1])
    return fig
