"""The smoothed (loess) calibration curve of clinical prediction models with its bootstrap band, the diagonal and
the histogram of the predictions underneath — drawn from the table of
:func:`calib_core.diagrams.classification_clinical.smoothed_calibration_table` (never from rows).

================ ===========================================================================================
table            columns
================ ===========================================================================================
smoothed         predicted, observed, lower, upper, n_rows, share (one row per grid point)
================ ===========================================================================================
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ._style import REFERENCE_COLOR, apply_layout, float_column, merged_colors, named_tables, plain, rgba

__all__ = ["SMOOTHED_AXES", "hosmer_lemeshow_groups_figure", "smoothed_calibration_figure"]

#: Axis titles per event (``attrs["target"]`` of the table).
SMOOTHED_AXES = {
    "positive": ("predicted probability of the positive class", "observed frequency (loess)"),
    "top_label": ("confidence (max predicted probability)", "observed accuracy (loess)"),
    "class": ("predicted probability of the class", "observed frequency of the class (loess)"),
}
_REQUIRED = ["predicted", "observed", "lower", "upper", "n_rows", "share"]
#: p-values below this are drawn at it (the axis says "≤"; hover and labels give the value).
P_FLOOR = 1e-10


def smoothed_calibration_figure(
    tables: pd.DataFrame | Mapping[str, pd.DataFrame],
    *,
    colors: Mapping[str, str] | None = None,
    target: str | None = None,
    title: str | None = "Smoothed calibration curve",
    histogram: bool = True,
    bands: bool = True,
) -> go.Figure:
    """Smoothed calibration curve: the loess curve ĉ(p) of the observed outcome against the predicted
    probability p, its pointwise bootstrap band, the diagonal ĉ(p) = p (perfect calibration) and the histogram
    of the predictions along the bottom (second y axis, a quarter of the height).

    ĉ(x) is the tricube-weighted local line fitted at x to the rows nearest x holding ``span`` of the weight
    (Cleveland 1979); ICI = mean |ĉ(p_i) − p_i| (Austin & Steyerberg 2019).  Above the diagonal the model
    under-predicts the risk there, below it over-predicts.

    Parameters
    ----------
    tables : DataFrame or mapping of str to DataFrame
        One table, or one per model (the name is the legend entry), columns ``predicted, observed, lower, upper,
        n_rows, share``.
    colors : mapping of str to str, optional
        Colour per name (default: the palette in order).
    target : {"positive", "top_label", "class"}, optional
        The axis titles (default: ``attrs["target"]`` of the first table, else ``"positive"``).
    title : str or None, default "Smoothed calibration curve"
        Figure title.
    histogram : bool, default True
        Draw the histogram of the predictions.
    bands : bool, default True
        Draw the bands (several overlapping bands can hide each other's curves).

    Returns
    -------
    plotly.graph_objects.Figure
        Traces with ``meta["role"]``: ``"reference"`` (the diagonal), ``"histogram"``, ``"band"`` (lower and upper
        edge, filled between) and ``"curve"`` per model.  One model: legend entries for the curve, its band and the
        histogram; several: one entry per model (its curve, band and histogram toggle together), so the legend
        stays on one or two rows below the axis title.

    References
    ----------
    .. [1] Cleveland, W. S. (1979). Robust locally weighted regression and smoothing scatterplots. *Journal of the
       American Statistical Association* 74(368), 829–836.
    .. [2] Austin, P. C. & Steyerberg, E. W. (2019). The Integrated Calibration Index (ICI) and related metrics for
       quantifying the calibration of logistic regression models. *Statistics in Medicine* 38(21), 4051–4065.
    .. [3] Van Calster, B., Nieboer, D., Vergouwe, Y., De Cock, B., Pencina, M. J. & Steyerberg, E. W. (2016). A
       calibration hierarchy for risk models was defined: from utopia to empirical data. *Journal of Clinical
       Epidemiology* 74, 167–176.
    """
    named = named_tables(tables, _REQUIRED)
    cmap = merged_colors(list(named), colors)
    first = next(iter(named.values()))
    target = target or first.attrs.get("target", "positive")
    x_title, y_title = SMOOTHED_AXES.get(target, SMOOTHED_AXES["positive"])
    single = len(named) == 1
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=[0, 1], y=[0, 1], mode="lines", name="perfect calibration", hoverinfo="skip",
                             line={"color": REFERENCE_COLOR, "dash": "dash", "width": 1}, meta={"role": "reference"},
                             showlegend=single))
    top = max(float(np.nanmax(float_column(t, "share"), initial=0.0)) for t in named.values())
    lows, highs = [0.0], [1.0]
    for name, t in named.items():
        label, color = plain(name), cmap[name]
        x = float_column(t, "predicted")
        if histogram:
            width = float(np.median(np.diff(x))) if x.size > 1 else 0.02
            fig.add_trace(go.Bar(
                x=x, y=float_column(t, "share"), width=width, yaxis="y2", marker={"color": rgba(color, 0.25),
                                                                                   "line": {"width": 0}},
                name="predictions (histogram)" if single else label, legendgroup=label,
                hovertemplate="p ≈ %{x:.3f}: %{y:.1%} of the rows<extra>" + label + "</extra>",
                showlegend=single, meta={"name": name, "role": "histogram"}))
        lo, hi, obs = float_column(t, "lower"), float_column(t, "upper"), float_column(t, "observed")
        level = float(t.attrs.get("level", 0.95))
        if bands and np.isfinite(lo).any():
            fig.add_trace(go.Scatter(x=x, y=hi, mode="lines", line={"width": 0, "color": color}, hoverinfo="skip",
                                     showlegend=False, legendgroup=label, meta={"name": name, "role": "band"}))
            fig.add_trace(go.Scatter(x=x, y=lo, mode="lines", line={"width": 0, "color": color}, fill="tonexty",
                                     fillcolor=rgba(color, 0.2 if single else 0.14), hoverinfo="skip",
                                     legendgroup=label, showlegend=single, name=f"{level:.0%} bootstrap band",
                                     meta={"name": name, "role": "band"}))
            lows.append(float(np.nanmin(lo)))
            highs.append(float(np.nanmax(hi)))
        lows.append(float(np.nanmin(obs, initial=0.0)))
        highs.append(float(np.nanmax(obs, initial=1.0)))
        hover = np.column_stack([lo, hi, float_column(t, "n_rows")])
        span = float(t.attrs.get("span", 0.75))
        fig.add_trace(go.Scatter(
            x=x, y=obs, mode="lines", line={"color": color, "width": 2.5}, legendgroup=label, customdata=hover,
            name=f"loess (span {span:g})" if single else label,
            hovertemplate="predicted %{x:.3f}<br>observed (loess) %{y:.3f}<br>band %{customdata[0]:.3f} – "
                          "%{customdata[1]:.3f}<br>%{customdata[2]:,.0f} rows in the span<extra>" + label
                          + "</extra>",
            meta={"name": name, "role": "curve"}))
    apply_layout(fig, title, x_title, y_title, True)
    y_lo = max(min(lows) - 0.02, -0.25)
    y_hi = min(max(highs) + 0.02, 1.25)
    fig.update_layout(
        xaxis={"range": [0, 1]}, yaxis={"range": [y_lo, y_hi]}, bargap=0,
        yaxis2={"overlaying": "y", "side": "right", "range": [0, 4 * top if top > 0 else 1], "showgrid": False,
                "showticklabels": False, "title": None, "fixedrange": True},
    )
    _legend_rows(fig)
    return fig


def _legend_rows(fig: go.Figure, width: float = 520.0) -> None:
    """Room below the axis title for a horizontal legend that wraps (about 7 px a character + 45 px a symbol, in a
    chart about ``width`` px wide): 22 px more bottom margin and height per extra row."""
    names = [t.name or "" for t in fig.data if t.showlegend is not False]
    rows = 0
    used = width
    for name in names:
        need = 7.0 * len(name) + 45.0
        if used + need > width:
            rows, used = rows + 1, 0.0
        used += need
    extra = 22 * max(rows - 1, 0)
    if extra:
        fig.update_layout(height=fig.layout.height + extra, margin={"b": fig.layout.margin.b + extra})


def hosmer_lemeshow_groups_figure(
    table: pd.DataFrame,
    *,
    colors: Mapping[str, str] | None = None,
    marked: tuple[int, ...] = (5, 10, 20),
    alpha: float = 0.05,
    title: str | None = "Hosmer–Lemeshow p-value against g",
) -> go.Figure:
    """The Hosmer–Lemeshow p-value of the same predictions for g = 3, 4, … groups (one line per model), with the
    level ``alpha`` as a dashed line and the usual choices ``marked``: where a line crosses the dashed one, the
    verdict depends on g alone.

    H_g = Σ_{groups} (O − E)² / (E (1 − E/n)) over g groups at the quantiles of risk, p = P(χ²_df ≥ H_g)
    (Hosmer & Lemeshow 1980; Bertolini et al. 2000 on its dependence on the grouping).

    Parameters
    ----------
    table : DataFrame
        Columns ``model, groups, statistic, df, p_value`` (one row per model and g).
    colors : mapping of str to str, optional
        Colour per model.
    marked : tuple of int, default (5, 10, 20)
        The numbers of groups drawn as markers.
    alpha : float, default 0.05
        The level drawn as a dashed line.
    title : str or None
        Figure title.

    Returns
    -------
    plotly.graph_objects.Figure
        Traces with ``meta["role"]`` ``"level"``, then per model ``"line"`` and ``"marked"``; p-values below
        :data:`P_FLOOR` are drawn at it, unlabelled (labels of several models there would overlap; the hover gives
        the value).

    References
    ----------
    .. [1] Hosmer, D. W. & Lemeshow, S. (1980). Goodness of fit tests for the multiple logistic regression model.
       *Communications in Statistics – Theory and Methods* 9(10), 1043–1069.
    .. [2] Bertolini, G., D'Amico, R., Nardi, D., Tinazzi, A. & Apolone, G. (2000). One model, several results: the
       paradox of the Hosmer–Lemeshow goodness-of-fit test for the logistic regression model. *Journal of
       Epidemiology and Biostatistics* 5(4), 251–253.
    """
    missing = [c for c in ("model", "groups", "statistic", "df", "p_value") if c not in table.columns]
    if missing:
        raise ValueError(f"Hosmer–Lemeshow table lacks column(s) {missing}; it has {list(table.columns)}")
    models = list(dict.fromkeys(table["model"]))
    cmap = merged_colors(models, colors)
    g_all = table["groups"].to_numpy(dtype=float)
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=[g_all.min(), g_all.max()], y=[alpha, alpha], mode="lines", hoverinfo="skip",
                             line={"color": REFERENCE_COLOR, "dash": "dash", "width": 1}, name=f"p = {alpha:g}",
                             meta={"role": "level"}))
    for name in models:
        t = table[table["model"] == name]
        label = plain(name)
        p = float_column(t, "p_value")
        custom = np.column_stack([float_column(t, "statistic"), float_column(t, "df"), p])
        hover = ("g = %{x}<br>H = %{customdata[0]:.2f} (χ² with %{customdata[1]:.0f} df)<br>p = %{customdata[2]:.3g}"
                 "<extra>" + label + "</extra>")
        fig.add_trace(go.Scatter(x=t["groups"], y=np.maximum(p, P_FLOOR), mode="lines",
                                 line={"color": cmap[name], "width": 2}, name=label, customdata=custom,
                                 hovertemplate=hover, legendgroup=label, meta={"name": name, "role": "line"}))
        m = t["groups"].isin(marked).to_numpy()
        fig.add_trace(go.Scatter(x=t["groups"][m], y=np.maximum(p[m], P_FLOOR), mode="markers+text", legendgroup=label,
                                 marker={"color": cmap[name], "size": 9}, showlegend=False,
                                 text=[f"{v:.2g}" if v > P_FLOOR else "" for v in p[m]], textposition="top center",
                                 textfont={"color": cmap[name], "size": 11}, customdata=custom[m],
                                 hovertemplate=hover, meta={"name": name, "role": "marked"}))
    apply_layout(fig, title, "number of groups g (quantiles of risk)", "p-value (log scale)", True)
    low = float(np.nanmin(np.maximum(float_column(table, "p_value"), P_FLOOR), initial=alpha))
    ticks = [v for v in (1.0, 0.1, 0.01, 1e-3, 1e-4, 1e-6, 1e-8, P_FLOOR) if v >= low / 2]
    labels = ["1", "0.1", "0.01", "0.001", "1e-4", "1e-6", "1e-8", f"≤ {P_FLOOR:g}"][: len(ticks)]
    fig.update_layout(yaxis={"type": "log", "range": [np.log10(min(low, alpha)) - 0.3, 0.3], "tickvals": ticks,
                             "ticktext": labels},
                      xaxis={"dtick": 5, "range": [g_all.min() - 0.5, g_all.max() + 0.5]})
    _legend_rows(fig)
    return fig
