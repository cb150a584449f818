"""Figures of a forecast hub: WIS parts per model, coverage by horizon, a score over dates, a location × date heatmap.

Each builder takes the tables of :mod:`calib_core.diagnosis.regression_hub` (``forecast_scores`` /
``forecast_heatmap``), never rows.  The selectable traces carry ``meta = {"name": <what>, "role": "bins"}`` and a
``customdata`` code per point, as every linked chart of the dashboard (``views.selection``): ``horizon`` (the
horizon itself), ``date`` (days since 1970-01-01) and ``cell`` (the heatmap cell's code, given by the caller).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ._style import REFERENCE_COLOR, apply_layout, merged_colors, plain

__all__ = ["wis_parts_figure", "coverage_by_horizon_figure", "score_over_dates_figure", "hub_heatmap_figure",
           "day_codes", "WIS_PART_COLORS", "SCORE_LABELS"]

#: Colours of the three parts of the WIS (stacked bars).
WIS_PART_COLORS = {"wis_dispersion": "#4c78a8", "wis_overprediction": "#e45756", "wis_underprediction": "#f58518"}
#: Axis / legend words of the scores.
SCORE_LABELS = {
    "wis": "WIS", "wis_dispersion": "dispersion", "wis_overprediction": "overprediction",
    "wis_underprediction": "underprediction", "below_median": "share below the median", "bias": "bias",
    "pit_departure": "PIT departure (largest level miss)", "wis_relative": "WIS / the row's mean WIS",
}
_OUTLINE, _CLEAR = "#111111", "rgba(0,0,0,0)"  # a selected heatmap cell's outline; the other cells' (none)
_DASHES = ("solid", "dash", "dot", "dashdot", "longdash", "longdashdot")


def _label(value: str) -> str:
    if value.startswith("coverage_"):
        return f"coverage of the central {value.split('_', 1)[1]}% interval"
    return SCORE_LABELS.get(value, value)


def _upper(text: str) -> str:
    return text[:1].upper() + text[1:]


def day_codes(dates: Sequence | np.ndarray | pd.Series) -> np.ndarray:
    """The code of a date in a selection: whole days since 1970-01-01.

    Parameters
    ----------
    dates : array-like of datetime64
        Dates.

    Returns
    -------
    ndarray of int64
        Days since the epoch (floor).

    Examples
    --------
    >>> day_codes(np.array(["1970-01-03"], dtype="datetime64[ns]")).tolist()
    [2]
    """
    return (np.asarray(dates, dtype="datetime64[ns]").astype("datetime64[D]").astype(np.int64))


def _figure(traces: list[dict]) -> go.Figure:
    """A figure of trace dicts built by this module, without Plotly's per-property validation (about 10 ms a trace;
    the tests build every figure of this module again with validation on)."""
    return go.Figure(data=traces, _validate=False)


def _reference_line(y: float) -> dict:
    return {"type": "line", "xref": "paper", "x0": 0, "x1": 1, "yref": "y", "y0": y, "y1": y,
            "line": {"color": REFERENCE_COLOR, "dash": "dot", "width": 1}}


def wis_parts_figure(scores: pd.DataFrame, *, title: str | None = "WIS and its parts per model") -> go.Figure:
    """Stacked bars of the mean WIS per model split into dispersion, overprediction and underprediction.

    Parameters
    ----------
    scores : pandas.DataFrame
        ``forecast_scores(..., by=("model",))``: ``model``, ``wis_dispersion``, ``wis_overprediction``,
        ``wis_underprediction``, ``n``.
    title : str or None
        Figure title.

    Returns
    -------
    plotly.graph_objects.Figure
        One bar per model; the bar's height is its mean WIS.
    """
    models = [plain(m) for m in scores["model"]]
    fig = _figure([dict(
        type="bar", x=models, y=scores[part].to_numpy(float), name=SCORE_LABELS[part], marker={"color": color},
        customdata=np.c_[scores["wis"].to_numpy(float), scores["n"].to_numpy(float)],
        hovertemplate=f"%{{x}}<br>{SCORE_LABELS[part]} %{{y:.4g}} of WIS %{{customdata[0]:.4g}}"
                      "<br>%{customdata[1]:,} forecasts<extra></extra>",
    ) for part, color in WIS_PART_COLORS.items()])
    fig.update_layout(barmode="stack")
    return apply_layout(fig, title, "model", "mean WIS", True)


def coverage_by_horizon_figure(
    scores: pd.DataFrame,
    intervals: Sequence[str] = ("coverage_50", "coverage_90"),
    *,
    colors: Mapping[str, str] | None = None,
    title: str | None = "Coverage of the central intervals by horizon",
) -> go.Figure:
    """Observed coverage of each chosen central interval against the horizon, per model, with the nominal levels.

    Parameters
    ----------
    scores : pandas.DataFrame
        ``forecast_scores(..., by=("model", "horizon"))``.
    intervals : sequence of str, default ("coverage_50", "coverage_90")
        The ``coverage_<c>`` columns drawn (one dash style each); a dotted line marks each nominal c %.
    colors : mapping of str to str, optional
        Model → colour.
    title : str or None
        Figure title.

    Returns
    -------
    plotly.graph_objects.Figure
        Selectable points (``meta`` name ``horizon``, ``customdata`` the horizon).
    """
    models = list(pd.unique(scores["model"]))
    palette = merged_colors(models, colors)
    traces, shapes, notes = [], [], []
    for k, interval in enumerate(intervals):
        nominal = float(interval.split("_", 1)[1]) / 100
        shapes.append(_reference_line(nominal))
        notes.append({"x": 0, "xref": "paper", "y": nominal, "yref": "y", "text": f"nominal {nominal:.0%}",
                      "showarrow": False, "xanchor": "left", "yanchor": "bottom", "font": {"size": 10}})
        for m in models:
            t = scores[scores["model"] == m].sort_values("horizon")
            traces.append(dict(
                type="scatter", x=t["horizon"].to_numpy(np.int64), y=t[interval].to_numpy(float), mode="lines+markers",
                name=f"{plain(m)} · {interval.split('_')[1]}%",
                line={"color": palette[m], "dash": _DASHES[k % len(_DASHES)]}, marker={"size": 9},
                customdata=t["horizon"].to_numpy(np.int64), meta={"name": "horizon", "role": "bins"},
                text=t["n"].map("{:,}".format).tolist(),
                hovertemplate=f"{plain(m)}<br>horizon %{{x}}<br>{interval.split('_')[1]}% interval covers "
                              "%{y:.1%}<br>%{text} forecasts<extra></extra>",
                selected={"marker": {"size": 13}}, unselected={"marker": {"opacity": 0.35}},
            ))
    fig = _figure(traces)
    fig.update_layout(shapes=shapes, annotations=notes)
    fig.update_xaxes(dtick=1)
    fig.update_yaxes(range=[0, 1.02], tickformat=".0%")
    return apply_layout(fig, title, "horizon", "observed coverage", True)


def score_over_dates_figure(
    scores: pd.DataFrame,
    value: str = "wis",
    date: str = "target_end_date",
    *,
    colors: Mapping[str, str] | None = None,
    reference: float | None = None,
    title: str | None = None,
) -> go.Figure:
    """A score per model over the dates (a box or lasso selects a date range).

    Parameters
    ----------
    scores : pandas.DataFrame
        ``forecast_scores(..., by=("model", date))``.
    value : str, default "wis"
        The score drawn.
    date : str, default "target_end_date"
        The date column.
    colors : mapping of str to str, optional
        Model → colour.
    reference : float, optional
        A reference level (the nominal coverage) drawn dotted.
    title : str or None
        Figure title (default: the score over the date).

    Returns
    -------
    plotly.graph_objects.Figure
        Selectable points (``meta`` name ``date``, ``customdata`` :func:`day_codes` of the date).
    """
    models = list(pd.unique(scores["model"]))
    palette = merged_colors(models, colors)
    traces = []
    for m in models:
        t = scores[scores["model"] == m].sort_values(date)
        traces.append(dict(
            type="scatter", x=t[date].to_numpy(dtype="datetime64[ns]"), y=t[value].to_numpy(float),
            mode="lines+markers", name=plain(m), line={"color": palette[m]}, marker={"size": 6},
            customdata=day_codes(t[date]), meta={"name": "date", "role": "bins"},
            text=t["n"].map("{:,}".format).tolist(),
            hovertemplate=f"{plain(m)}<br>%{{x|%Y-%m-%d}}<br>{_label(value)} %{{y:.4g}}<br>%{{text}} "
                          "forecasts<extra></extra>",
            selected={"marker": {"size": 9}}, unselected={"marker": {"opacity": 0.3}},
        ))
    fig = _figure(traces)
    if reference is not None:
        fig.update_layout(shapes=[_reference_line(reference)])
    words = date.replace("_", " ")
    fig.update_xaxes(tickformat="%Y-%m-%d")  # one line of tick labels: the legend below stays clear of them
    days = pd.to_datetime(scores[date]).dropna()
    if len(days) and (days.max() - days.min()) <= pd.Timedelta(days=7):
        # a few days: one tick per day (no repeated labels), the range padded by a day so one date sits in the middle
        pad = pd.Timedelta(days=1)
        fig.update_xaxes(dtick=86_400_000, range=[days.min() - pad, days.max() + pad])
    return apply_layout(fig, title or f"{_upper(_label(value))} by {words}", words, _label(value), True)


def hub_heatmap_figure(
    table: pd.DataFrame,
    value: str,
    *,
    rows: str = "location",
    columns: str = "target_end_date",
    center: float | None = None,
    selected: Sequence[int] = (),
    title: str | None = None,
) -> go.Figure:
    """A heatmap of one score over (row value × column value) cells; every cell selectable by click, box or lasso.

    Parameters
    ----------
    table : pandas.DataFrame
        ``forecast_heatmap(...)`` (``row``, ``column``, ``value``, ``n``) with a ``cell`` column: the code of each cell
        in a selection.
    value : str
        The score (for the labels).
    rows, columns : str
        The grouping columns (for the axis titles).
    center : float, optional
        The value at the centre of a diverging colour scale (nominal coverage, 1 for relative WIS); without it a
        sequential scale.
    selected : sequence of int, default ()
        Codes of the selected cells (outlined).
    title : str or None
        Figure title.

    Returns
    -------
    plotly.graph_objects.Figure
        A ``go.Heatmap`` under a transparent marker per cell (``meta`` name ``cell``, ``customdata`` the cell code).
    """
    xs = pd.unique(table["column"].sort_values()) if len(table) else []
    ys = pd.unique(table["row"].sort_values()) if len(table) else []
    xi = pd.Index(xs).get_indexer(table["column"])
    yi = pd.Index(ys).get_indexer(table["row"])
    z = np.full((len(ys), len(xs)), np.nan)
    z[yi, xi] = table["value"].to_numpy(float)
    is_date = pd.api.types.is_datetime64_any_dtype(table["column"])
    x_text = [pd.Timestamp(x).strftime("%Y-%m-%d") if is_date else plain(x) for x in xs]
    y_text = [plain(v) for v in ys]
    scale = dict(colorscale="RdBu", zmid=center) if center is not None else dict(colorscale="Viridis")
    codes = table["cell"].to_numpy(np.int64) if "cell" in table else np.arange(len(table))
    chosen = np.isin(codes, np.asarray(list(selected), dtype=np.int64))
    fig = _figure([
        dict(type="heatmap", x=x_text, y=y_text, z=z, colorbar={"title": {"text": _label(value), "side": "right"}},
             hoverinfo="skip", xgap=1, ygap=1, **scale),
        # the transparent markers take the clicks, boxes and lassos (a heatmap trace has no selectable points)
        dict(type="scatter", x=[x_text[i] for i in xi], y=[y_text[i] for i in yi], mode="markers", customdata=codes,
             meta={"name": "cell", "role": "bins"}, showlegend=False,
             text=[f"{_label(value)} {v:.3g}<br>{c:,} forecasts" for v, c in zip(table["value"], table["n"])],
             hovertemplate=f"{plain(rows)} %{{y}}<br>{plain(columns)} %{{x}}<br>%{{text}}<extra></extra>",
             marker={"symbol": "square-open", "size": 14, "line": {"width": 2.5},
                     "color": np.where(chosen, _OUTLINE, _CLEAR).tolist()},
             # a live click, box or lasso outlines its cells the same way (plotly.js restyles the points)
             selected={"marker": {"color": _OUTLINE}}, unselected={"marker": {"color": _CLEAR}}),
    ])
    fig.update_xaxes(type="category", tickangle=-45 if is_date else 0)
    fig.update_yaxes(type="category", autorange="reversed")
    row_words, column_words = plain(rows.replace("_", " ")), plain(columns.replace("_", " "))
    words = f"{_upper(_label(value))} by {row_words} and {column_words}"
    fig = apply_layout(fig, title or words, column_words, row_words, False)
    fig.update_layout(height=max(360, min(900, 140 + 22 * len(ys))))
    return fig
