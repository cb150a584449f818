"""The anytime-valid monitor under the fixed windows of the "Over time" section (``dashboard.timeview``).

It runs the monitor (``views.monitor.run_monitor``: ``pit_monitor`` / ``probability_monitor``) on the rows the
page's filters chose — never on the picked time range: it always watches the whole season — and draws its e-value
paths (``calib_core.plots.monitor.monitor_figure``), the monitor's sentence per model and why it is there.  The
result is cached in ``st.session_state[f"{prefix}_monitor_cache"]`` by the data token and the filters (one entry:
the last choice, and the whole data's beside a slice's), so brushing the windows or any other control of the page
does not run it again.  While a slice chosen on the Slice explorer restricts the page, the whole data's paths are
drawn faintly behind the slice's, as in every other chart of the page.
"""

from __future__ import annotations

import streamlit as st

import calib_core as cc
from calib_core.plots import model_colors, with_background
from calib_core.plots.monitor import monitor_figure
from views import monitor as vm
from views import pages as views

from .display import chart

__all__ = ["monitor_section"]


def _monitor(cache: dict, key: tuple, rows: cc.PredictionSet, whole: cc.PredictionSet) -> object:
    """The cached ``(MonitorResult, grouped)`` of ``rows`` (or the exception that refused them)."""
    if key not in cache:
        try:  # the lag of the whole data's horizons; steps of a day when nearly every row has its own time
            cache[key] = vm.run_monitor(rows, whole), None if rows.time is None else vm.step_time(rows.time)[1]
        except (ValueError, cc.InputError) as exc:
            cache[key] = exc
    return cache[key]


def monitor_section(pset: cc.PredictionSet, sub: cc.PredictionSet, token: str, rows: str, models: tuple[str, ...],
                    group: str, prefix: str, whole: tuple[cc.PredictionSet, str] | None = None) -> None:
    """Draw the monitor of ``sub`` (the filtered rows of ``pset``, whose data token is ``token``); ``whole``:
    ``(pset, token)`` of the whole data when ``pset`` is a slice of it (its monitor is drawn faintly behind)."""
    if sub.task == "regression" and sub.dist is None:
        st.caption("No monitor: it bets on the predictive distributions, and this file has point predictions only.")
        return
    cache = st.session_state.setdefault(f"{prefix}_monitor_cache", {})
    key = (token, rows, models, group)
    wkey = ("whole", whole[1] if whole else None, rows, models, group)
    if key not in cache:  # one entry per page (and the whole data's beside a slice's): the last choice
        kept = {wkey: cache[wkey]} if wkey in cache else {}
        cache.clear()
        cache.update(kept)
    got = _monitor(cache, key, sub, whole[0] if whole else pset)
    if isinstance(got, Exception):
        st.caption(f"No monitor: {views.md_escape(got)}")
        return
    result, grouped = got
    behind = None
    if whole is not None and whole[1] != token and whole[0].time is not None:
        everything = _monitor(cache, wkey, views.subset(whole[0], rows, models, group), whole[0])
        behind = None if isinstance(everything, Exception) else vm.thin_path(everything[0].path,
                                                                             everything[0].threshold)
    alarms, changes = vm.drawn_marks(result.summary)
    time_name = vm.time_name(pset.units)
    fig = with_background(monitor_figure, vm.thin_path(result.path, result.threshold), behind,
                          threshold=result.threshold, change_point=changes, alarm_time=alarms,
                          colors=model_colors(pset.models()), xaxis_title=time_name)
    with st.container(key=f"{prefix}_monitor"):
        st.markdown("**Anytime-valid monitor**")
        chart(fig, f"{prefix}_monitor_chart")
        for sentence in vm.model_sentences(result.summary):
            st.markdown(views.md_escape(sentence))
        st.markdown(vm.looking_sentence(result.alpha))
        st.caption(vm.monitor_caption(result.lag, time_name, grouped))
