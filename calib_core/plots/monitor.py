"""Plotly figure of the anytime-valid calibration monitor: the e-value path of every model over time.

Built from the ``path`` table of a monitor result (:mod:`calib_core.inference.regression_monitor` /
:mod:`calib_core.inference.classification_monitor`: one row per model × time step with the e-process ``e_value``
after that step).  An e-process E_t is a non-negative process with E_0 = 1 whose expectation stays at most 1 under
perfect calibration at every stopping time, so by Ville's inequality P(sup_t E_t ≥ 1/α) ≤ α: the alarm line at
1/α holds the false-alarm rate α however often the chart is looked at (Ramdas et al. 2023).  The y axis is
logarithmic (evidence multiplies); the first time a model's path reaches the line is marked, and the estimated start
of the change (the time after which the e-process rose most) is a vertical dotted line in the model's colour.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ._style import REFERENCE_COLOR, apply_layout, merged_colors, plain

__all__ = ["ALARM_COLOR", "monitor_figure"]

ALARM_COLOR = "#c0392b"
"""Colour of the alarm line."""

_REQUIRED = ("model", "time", "e_value")


def _per_model(value: Any, models: list[str]) -> dict[str, Any]:
    """``value`` (None, one time for every model, or a mapping model → time) as {model: time} without missing ones."""
    if value is None:
        return {}
    if isinstance(value, Mapping):
        return {m: value[m] for m in models if m in value and value[m] is not None and not pd.isna(value[m])}
    return {} if pd.isna(value) else dict.fromkeys(models, value)


def _time_text(value: Any) -> str:
    """A time as the hover and legend show it: a date (with the clock when it is not midnight) or a number."""
    if isinstance(value, np.datetime64 | pd.Timestamp):
        ts = pd.Timestamp(value)
        return f"{ts:%Y-%m-%d}" if ts == ts.normalize() else f"{ts:%Y-%m-%d %H:%M}"
    return f"{float(value):.6g}"


def monitor_figure(
    path: pd.DataFrame,
    threshold: float,
    change_point: Any = None,
    alarm_time: Any = None,
    *,
    colors: Mapping[str, str] | None = None,
    xaxis_title: str | None = None,
    title: str | None = None,
) -> go.Figure:
    """The e-value path of every model on a log axis, the alarm line at 1/α, the alarm and the change point.

    One step line per model (the e-process is constant between time steps) in the model's colour; the alarm line
    y = ``threshold`` = 1/α (dashed, labelled "alarm line: 1/α = 20" for α = 0.05); a marker where a model's path
    first reaches the line (E_t ≥ 1/α); a vertical dotted line at the estimated change point
    ŝ = argmax_s E_t / E_s (the time after which the e-process rose most); a grey dotted line at E = 1 (no evidence
    either way).  The y range always holds 1 and the alarm line, so a path far below the line reads as such.

    Parameters
    ----------
    path : DataFrame
        One row per model × time step: ``model``, ``time`` (datetimes or numbers), ``e_value`` (> 0); ``n`` (rows
        in the step) is shown on hover when present.  With an ``e_guaranteed`` column (a monitor of lag h > 1: the
        evidence already guaranteed once the h − 1 forecasts made are resolved, the value the alarm reads) that
        column is drawn, so the line crosses the alarm line where the alarm is raised.
    threshold : float
        The alarm line 1/α (> 1).
    change_point : time or mapping of str to time, optional
        The estimated start of the change: one time for every model or one per model (missing / None: no line).
    alarm_time : time or mapping of str to time, optional
        The first time E_t ≥ 1/α: one for every model or one per model (missing / None: no marker).
    colors : mapping of str to str, optional
        Colour per model (default :func:`model_colors` of the models, in order).
    xaxis_title : str, optional
        The x axis title, e.g. the time column's name (escaped with :func:`plain`; default "time", or
        "time (numbers)" for a numeric time).
    title : str, optional
        Figure title.

    Returns
    -------
    plotly.graph_objects.Figure
        The figure.  Every trace's ``meta`` holds ``{"name": model, "role": ...}`` with role
        ``"alarm"``, ``"change_point"``, ``"alarm_line"`` or ``"one"``; the paths' role is ``"curve"``, a data role of
        :func:`~calib_core.plots.background.with_background` (the whole data's paths drawn faintly behind a slice's).

    Raises
    ------
    ValueError
        If ``path`` lacks a column, holds no row, or ``threshold`` is not above 1.

    Examples
    --------
    >>> path = pd.DataFrame({"model": "a", "time": [1.0, 2.0, 3.0], "e_value": [2.0, 8.0, 30.0]})
    >>> fig = monitor_figure(path, 20.0, change_point=1.0, alarm_time=3.0)
    >>> [t.meta["role"] for t in fig.data], fig.layout.yaxis.type
    (['one', 'alarm_line', 'curve', 'alarm', 'change_point'], 'log')
    """
    missing = [c for c in _REQUIRED if c not in path.columns]
    if missing:
        raise ValueError(f"the monitor path lacks column(s) {missing}; it has {list(path.columns)}")
    if path.empty:
        raise ValueError("the monitor path holds no time step")
    threshold = float(threshold)
    if not threshold > 1:
        raise ValueError(f"the alarm line 1/alpha must be above 1, got {threshold}")
    models = [str(m) for m in pd.unique(path["model"])]
    cmap = merged_colors(models, colors)
    alarms = _per_model(alarm_time, models)
    changes = _per_model(change_point, models)
    is_date = np.issubdtype(np.asarray(path["time"]).dtype, np.datetime64)
    times = pd.to_datetime(path["time"]).to_numpy() if is_date else path["time"].to_numpy(dtype=float)
    value = "e_guaranteed" if "e_guaranteed" in path.columns else "e_value"
    e = path[value].to_numpy(dtype=float)
    positive = e[np.isfinite(e) & (e > 0)]
    lo = min(float(positive.min()) if positive.size else 1.0, 1.0)
    hi = max(float(positive.max()) if positive.size else 1.0, threshold)
    y_range = [np.log10(lo) - 0.3, np.log10(hi) + 0.3]  # log10 units: a factor 2 of room either side
    y_lo, y_hi = 10 ** y_range[0], 10 ** y_range[1]
    t_lo, t_hi = times.min(), times.max()

    fig = go.Figure()
    fig.add_trace(go.Scatter(x=[t_lo, t_hi], y=[1.0, 1.0], mode="lines", hoverinfo="skip",
                             line={"color": REFERENCE_COLOR, "width": 1, "dash": "dot"}, name="e = 1 (no evidence)",
                             meta={"role": "one"}))
    alpha = 1.0 / threshold
    label = f"alarm line: 1/α = {threshold:g}"
    fig.add_trace(go.Scatter(x=[t_lo, t_hi], y=[threshold, threshold], mode="lines", name=label,
                             line={"color": ALARM_COLOR, "width": 1.5, "dash": "dash"},
                             hovertemplate=f"alarm line 1/α = {threshold:g} (α = {alpha:g})<extra></extra>",
                             meta={"role": "alarm_line"}))
    fig.add_annotation(x=0, xref="paper", xanchor="left", y=np.log10(threshold), yref="y", yanchor="bottom",
                       text=label, showarrow=False, font={"color": ALARM_COLOR, "size": 12})
    multi = len(models) > 1
    for model in models:
        rows = (path["model"].astype(str) == model).to_numpy()
        m = path.loc[rows]
        order = np.argsort(np.asarray(times[rows]), kind="stable")
        x = times[rows][order]
        y = m[value].to_numpy(dtype=float)[order]
        color = cmap[model]
        shown = plain(model)
        n = m["n"].to_numpy()[order] if "n" in m.columns else np.full(y.size, np.nan)
        time_fmt = "%{x|%Y-%m-%d %H:%M}" if is_date else "%{x:.6g}"
        fig.add_trace(go.Scatter(
            x=x, y=y, mode="lines+markers", line={"color": color, "width": 2, "shape": "hv"},
            marker={"color": color, "size": 4}, name=shown if multi else "e-value",
            customdata=n, legendgroup=model,
            hovertemplate=(time_fmt + "<br>e-value %{y:.3g}"
                           + ("<br>%{customdata:,} rows" if "n" in m.columns else "")
                           + "<extra>" + shown + "</extra>"),
            meta={"name": model, "role": "curve"}))
        if model in alarms:
            at = pd.Timestamp(alarms[model]) if is_date else float(alarms[model])
            hit = np.flatnonzero(x >= (np.datetime64(at) if is_date else at))
            y_at = float(y[hit[0]]) if hit.size else threshold
            fig.add_trace(go.Scatter(
                x=[at], y=[y_at], mode="markers", legendgroup=model,
                marker={"color": color, "size": 14, "symbol": "star", "line": {"color": "#222", "width": 1}},
                name=(f"{shown}: " if multi else "") + f"alarm ({_time_text(at)})",
                hovertemplate=f"alarm: e-value %{{y:.3g}} ≥ {threshold:g} at {_time_text(at)}<extra>{shown}</extra>",
                meta={"name": model, "role": "alarm"}))
        if model in changes:
            cp = pd.Timestamp(changes[model]) if is_date else float(changes[model])
            fig.add_trace(go.Scatter(
                x=[cp, cp], y=[y_lo, y_hi], mode="lines", legendgroup=model,
                line={"color": color, "width": 1.5, "dash": "dot"},
                name=(f"{shown}: " if multi else "") + f"change most likely began around {_time_text(cp)}",
                hovertemplate=f"estimated start of the change: {_time_text(cp)}<extra>{shown}</extra>",
                meta={"name": model, "role": "change_point"}))
    x_title = plain(xaxis_title) if xaxis_title else ("time" if is_date else "time (numbers)")
    apply_layout(fig, title, x_title, "e-value (evidence against calibration)", True)
    fig.update_yaxes(type="log", range=y_range)
    fig.update_layout(margin={"b": 110}, legend={"y": -0.25})
    return fig
