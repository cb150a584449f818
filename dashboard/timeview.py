"""The "Over time" section of the Regression and Classification pages.

When the loaded data has a time column it draws one metric per time window (``calib_core.slices.time``:
``window_table``; figure ``calib_core.plots.timewindows.time_windows_figure``) for the rows the page's filters
chose, with the window and the metric picked here.  Clicking windows or dragging a box along the time axis picks a
time range; :func:`over_time` returns the rows inside it, which the page hands to ``diagnose_rows(restrict=…)``
so that every other view of the page (diagrams, metric table, downloads) is computed on those rows only.  The
picked windows are kept in ``st.session_state[f"{prefix}_time_pick"]`` with the context they were made in (data,
filters, window) and dropped when that changes; "Clear time range" returns to all rows.  Under the windows, the
anytime-valid monitor of the same filtered rows (``dashboard.monitorview``), which ignores the picked range.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd
import streamlit as st

import calib_core as cc
from calib_core.data.timecol import time_kind
from calib_core.data.timecol_units import time_text
from calib_core.plots import model_colors, with_background
from calib_core.plots.timewindows import time_windows_figure
from calib_core.slices.time import CALENDAR, WINDOW_METRICS, window_rows, window_table
from views import pages as views
from views.selection import selected_bins, trace_meta

from .display import chart
from .monitorview import monitor_section
from .state import persistent

__all__ = ["over_time"]

EQUAL = "N equal windows"


def _span_text(windows: pd.DataFrame, picked: tuple[int, ...], n_rows: int) -> str:
    w = windows.set_index("window")
    lo, hi = min(picked), max(picked)
    start, end = w.loc[lo, "start"], w.loc[hi, "end"]
    if isinstance(start, np.datetime64 | pd.Timestamp):  # NumPy's writer: 0001 … 10000 (strftime fails past 9999)
        a, b = time_text(w.loc[[lo], "start"].to_numpy()), time_text(w.loc[[hi], "end"].to_numpy())
        span = f"{a[0]} to {b[0]}"
    else:
        span = f"{float(start):.6g} to {float(end):.6g}"
    return f"**Time range {span}** ({hi - lo + 1} window{'s' if hi > lo else ''}, {n_rows:,} rows)"


def over_time(
    pset: cc.PredictionSet, token: str, rows: str, models: Iterable[str], group: str, prefix: str,
    whole: tuple[cc.PredictionSet, str] | None = None,
) -> tuple[str, np.ndarray] | None:
    """Draw the section; return ``(cache-key text, row mask over views.subset(pset, rows, models, group))`` of the
    picked time range, or None (no time column, or nothing picked).  ``whole``: ``(pset, token)`` of the whole data
    when ``pset`` is a slice of it (the Slice explorer's focus): its windows are drawn faintly behind."""
    if pset.time is None:
        return None
    models = tuple(models)
    sub = views.subset(pset, rows, models, group)
    if sub.n_rows < 2:
        return None
    st.subheader("Over time")
    kind = time_kind(sub.time)
    options = ([*CALENDAR] if kind == "datetime" else []) + [EQUAL]
    if st.session_state.get(f"{prefix}_time_window") not in options:
        st.session_state.pop(f"{prefix}_time_window", None)
    metrics = WINDOW_METRICS[pset.task]
    c1, c2, c3 = st.columns([2, 1, 2])
    window = c1.selectbox("Window", options, key=persistent(f"{prefix}_time_window",
                                                           "week" if kind == "datetime" else EQUAL),
                          help="Calendar windows of the time column, or N equal spans between its first and last "
                               "time.")
    n_equal = int(c2.number_input("N", min_value=1, max_value=500, step=1, disabled=window != EQUAL,
                                  key=persistent(f"{prefix}_time_n", 12), help="Number of equal windows."))
    spec = n_equal if window == EQUAL else window
    coverage = 0.9
    keys = [f"coverage_{100 * coverage:g}" if k == "coverage" else k for k in metrics]
    labels = {k2: metrics[k1][0] + (f" {100 * coverage:g}%" if k1 == "coverage" else "")
              for k1, k2 in zip(metrics, keys)}
    if st.session_state.get(f"{prefix}_time_metric") not in keys:
        st.session_state.pop(f"{prefix}_time_metric", None)
    metric = c3.selectbox("Metric", keys, key=persistent(f"{prefix}_time_metric", keys[0]), format_func=labels.get)
    cache = st.session_state.setdefault(f"{prefix}_time_cache", {})
    ckey = (token, rows, models, group, spec)
    wkey = ("whole", whole[1] if whole else None, rows, models, group, spec)
    if ckey not in cache:  # one table per page (and one of the whole data behind a slice): the last choice
        kept = {wkey: cache[wkey]} if wkey in cache else {}
        cache.clear()
        cache.update(kept)
        try:
            cache[ckey] = window_table(sub, window=spec, coverage=coverage)
        except ValueError as exc:
            cache[ckey] = exc
    got = cache[ckey]
    if isinstance(got, Exception):
        st.warning(f"No time windows: {views.md_escape(got)}")
        return None
    table, codes = got
    windows = table.drop_duplicates("window")[["window", "start", "end", "label"]]

    pick_key = f"{prefix}_time_pick"
    stored = st.session_state.get(pick_key)
    picked: tuple[int, ...] = stored[1] if isinstance(stored, tuple) and stored[0] == ckey else ()
    st.session_state[pick_key] = (ckey, picked)
    behind = None
    if whole is not None and whole[1] != token and whole[0].time is not None:
        if wkey not in cache:  # kept beside the slice's table while the slice is shown
            try:
                cache[wkey] = window_table(views.subset(whole[0], rows, models, group), window=spec,
                                           coverage=coverage)
            except ValueError as exc:
                cache[wkey] = exc
        behind = None if isinstance(cache[wkey], Exception) else cache[wkey][0]
    fig = with_background(time_windows_figure, table, behind, metric=metric, colors=model_colors(pset.models()),
                          picked=picked)
    chart_key = f"{prefix}_time_chart"
    meta = trace_meta(fig)

    def on_select() -> None:
        event = st.session_state.get(chart_key)
        chosen = selected_bins(event, meta, roles=("window",))
        st.session_state[pick_key] = (ckey, tuple(sorted({w for ws in chosen.values() for w in ws})))

    def clear() -> None:
        st.session_state[pick_key] = (ckey, ())
        st.session_state[f"{prefix}_time_epoch"] = st.session_state.get(f"{prefix}_time_epoch", 0) + 1

    fig.update_layout(meta={"epoch": st.session_state.get(f"{prefix}_time_epoch", 0)})
    mask = window_rows(codes, picked) if picked else None
    info, clear_col = st.columns([5, 1], vertical_alignment="center")
    info.markdown(_span_text(windows, picked, int(mask.sum())) + " — every view below uses these rows."
                  if picked else "**No time range picked** — the views below use all rows.")
    clear_col.button("Clear time range", key=f"{prefix}_time_clear", on_click=clear, disabled=not picked,
                     width="stretch")
    chart(fig, chart_key, on_select=on_select, selection_mode=("points", "box"))
    st.caption(
        "Each point is a window's value with its 95% interval; the shaded band is where a perfectly calibrated "
        "forecaster with the same predictions and window sizes falls 95% of the time, the dashed line the perfect "
        "value. Click windows or drag a box along the time axis to restrict every view below to that time range."
    )
    monitor_section(pset, sub, token, rows, models, group, prefix, whole)  # the filtered rows, not the picked range
    if mask is None:
        return None
    lo, hi = min(picked), max(picked)
    return f"time={spec}:{lo}-{hi}", mask
