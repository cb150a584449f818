"""Plotly figure of calibration over time: one metric per time window with its interval and
the perfect-calibration band, built from :func:`calib_core.slices.time.window_table` (one row per model × window ×
metric: O(windows) points whatever the number of rows).  Every window's marker carries ``customdata`` = its window
code and ``meta = {"name": model, "role": "window"}``, so a click or a box drawn over the chart selects windows the way
the other selectable charts select bins (``views.selection``)."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ..data.timecol_units import as_unit_of, from_instants, instants
from ._style import REFERENCE_COLOR, apply_layout, merged_colors, plain, rgba

__all__ = ["time_windows_figure"]


def _middles(start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """start + (end − start)/2 of every window: for times in microseconds when the span in the data's unit would
    overflow int64 (a window over the whole nanosecond range spans 2⁶⁴ ns), so both ends of any range draw."""
    if not np.issubdtype(start.dtype, np.datetime64):
        return start + (end - start) / 2
    us_s, rem_s, ok_s = instants(start)
    us_e, rem_e, ok_e = instants(end)
    narrow = np.datetime_data(start.dtype)[0] != "ns" or bool((us_e - us_s < 2**62 // 1000).all())
    if narrow and start.dtype == end.dtype:
        return start + (end - start) // 2
    mid = us_s + (us_e - us_s) // 2
    return as_unit_of(from_instants(mid, np.zeros_like(mid), ok_s & ok_e, unit="us"), start)


def time_windows_figure(
    table: pd.DataFrame,
    metric: str,
    *,
    colors: Mapping[str, str] | None = None,
    picked: tuple[int, ...] = (),
    level: float = 0.95,
    title: str | None = None,
) -> go.Figure:
    """A metric of every time window with its interval and the band of a perfectly calibrated forecaster.

    Markers and line at the window's middle, one colour per model; the ``level`` interval as error bars; the band
    where a perfectly calibrated forecaster with the same predictions and window sizes falls ``level`` of the time
    (ribbon per window, in the model's colour); the perfect value (dashed; per window when it depends on the window,
    e.g. accuracy = mean confidence).  Drag a box along the time axis to select windows.

    Parameters
    ----------
    table : DataFrame
        :func:`calib_core.slices.time.window_table`'s table.
    metric : str
        The metric drawn.
    colors : mapping of str to str, optional
        Colour per name (default :func:`model_colors` of the names, in order).
    picked : tuple of int, default ()
        Window codes drawn highlighted (a brushed range); the others are dimmed.
    level : float, default 0.95
        Level of the intervals and bands (as computed; named in the legend).
    title : str, optional
        Figure title.

    Returns
    -------
    plotly.graph_objects.Figure
        The figure.

    Raises
    ------
    ValueError
        If no window holds ``metric``.
    """
    t = table[table["metric"] == metric]
    if t.empty:
        raise ValueError(f"no window holds metric {metric!r}")
    models = list(pd.unique(t["model"]))
    cmap = merged_colors(models, colors)
    multi = len(models) > 1
    pct = f"{100 * level:g}%"
    fig = go.Figure()
    label = str(t["metric_label"].iloc[0])
    for model in models:
        m = t[t["model"] == model].sort_values("window")
        color = cmap[model]
        shown = plain(model)
        start, end = m["start"].to_numpy(), m["end"].to_numpy()
        mid = _middles(start, end)
        # the band as steps over each window's span: [start, end) at the window's own band
        xs = np.column_stack([start, end]).ravel()
        lo = np.repeat(m["band_lo"].to_numpy(dtype=float), 2)
        hi = np.repeat(m["band_hi"].to_numpy(dtype=float), 2)
        fig.add_trace(go.Scatter(x=xs, y=lo, mode="lines", line={"width": 0}, showlegend=False, hoverinfo="skip",
                                 legendgroup=model, meta={"name": model, "role": "band_low"}))
        fig.add_trace(go.Scatter(
            x=xs, y=hi, mode="lines", line={"width": 0}, fill="tonexty", fillcolor=rgba(color, 0.15),
            name=(f"{shown}: " if multi else "") + f"{pct} band, perfect calibration", legendgroup=model,
            hoverinfo="skip", meta={"name": model, "role": "band_high"}))
        target = m["target"].to_numpy(dtype=float)
        if not multi or model == models[0] or np.ptp(target) > 0:
            fig.add_trace(go.Scatter(
                x=xs, y=np.repeat(target, 2), mode="lines",
                line={"color": REFERENCE_COLOR if np.ptp(target) == 0 else color, "width": 1, "dash": "dash"},
                name="perfect calibration" + (f" ({shown})" if multi and np.ptp(target) > 0 else ""),
                legendgroup=model, hoverinfo="skip", meta={"name": model, "role": "target"}))
        value = m["value"].to_numpy(dtype=float)
        codes = m["window"].to_numpy(dtype=np.int64)
        sel = np.isin(codes, np.asarray(picked, dtype=np.int64)) if picked else np.ones(codes.size, dtype=bool)
        fig.add_trace(go.Scatter(
            x=mid, y=value, mode="lines+markers", line={"color": color, "width": 2},
            marker={"color": color, "size": np.where(sel, 8, 6), "opacity": np.where(sel, 1.0, 0.35).tolist(),
                    "line": {"width": np.where(sel & bool(picked), 2, 0).tolist(), "color": "#222"}},
            error_y={"type": "data", "symmetric": False, "array": m["hi"].to_numpy(dtype=float) - value,
                     "arrayminus": value - m["lo"].to_numpy(dtype=float), "color": rgba(color, 0.6), "thickness": 1.2,
                     "width": 3},
            name=shown if multi else label, legendgroup=model,
            customdata=np.column_stack([codes, m["n"], m["lo"], m["hi"], m["band_lo"], m["band_hi"]]),
            text=[plain(s) for s in m["label"]],
            hovertemplate=("%{text}<br>" + plain(label) + " %{y:.4g} [%{customdata[2]:.4g}, %{customdata[3]:.4g}]"
                           "<br>perfect calibration: %{customdata[4]:.4g} to %{customdata[5]:.4g}<br>"
                           "%{customdata[1]:,} rows<extra>" + shown + "</extra>"),
            meta={"name": model, "role": "window"}))
    time_axis = "time" if np.issubdtype(t["start"].dtype, np.datetime64) else "time (numbers)"
    apply_layout(fig, title, time_axis, label, True)
    fig.update_layout(dragmode="select", margin={"b": 110}, legend={"y": -0.25})
    return fig
