"""The anytime-valid monitor under the fixed windows of the "Over time" section (``dashboard.timeview``).

It runs the monitor (``views.monitor.run_monitor``: ``pit_monitor`` / ``probability_monitor``) on the rows the
page's filters chose — never on the picked time range: it always watches the whole season — and draws its e-value
paths (``calib_core.plots.monitor.monitor_figure``), the monitor's sentence per model and why it is there.  The
result is cached in ``st.session_state[f"{prefix}_monitor_cache"]`` by the data token and the filters (one entry:
the last choice), so brushing the windows or any other control of the page does not run it again.
"""

from __future__ import annotations

import streamlit as st

import calib_core as cc
from calib_core.plots import model_colors
from calib_core.plots.monitor import monitor_figure
from views import monitor as vm
from views import pages as views

from .display import chart

__all__ = ["monitor_section"]


def monitor_section(pset: cc.PredictionSet, sub: cc.PredictionSet, key: tuple, prefix: str) -> None:
    """Draw the monitor of ``sub`` (the filtered rows of ``pset``); ``key``: the data token and the filters."""
    if sub.task == "regression" and sub.dist is None:
        st.caption("No monitor: it bets on the predictive distributions, and this file has point predictions only.")
        return
    cache = st.session_state.setdefault(f"{prefix}_monitor_cache", {})
    if key not in cache:
        cache.clear()
        try:  # the lag of the whole data's horizons; steps of a day when nearly every row has its own time
            cache[key] = vm.run_monitor(sub, pset), None if sub.time is None else vm.step_time(sub.time)[1]
        except (ValueError, cc.InputError) as exc:
            cache[key] = exc
    got = cache[key]
    if isinstance(got, Exception):
        st.caption(f"No monitor: {views.md_escape(got)}")
        return
    result, grouped = got
    alarms, changes = vm.drawn_marks(result.summary)
    time_name = vm.time_name(pset.units)
    fig = monitor_figure(vm.thin_path(result.path, result.threshold), result.threshold, changes, alarms,
                         colors=model_colors(pset.models()), xaxis_title=time_name)
    with st.container(key=f"{prefix}_monitor"):
        st.markdown("**Anytime-valid monitor**")
        chart(fig, f"{prefix}_monitor_chart")
        for sentence in vm.model_sentences(result.summary):
            st.markdown(views.md_escape(sentence))
        st.markdown(vm.looking_sentence(result.alpha))
        st.caption(vm.monitor_caption(result.lag, time_name, grouped))
