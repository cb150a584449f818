"""Caches of the dashboard, keyed on small explicit tokens.

Heavy work is cached with ``st.cache_data`` keyed on the data token and the options, with the data itself passed
as ``_``-prefixed arguments that Streamlit does not hash — Streamlit hashes only a sample of large arrays/frames,
so hashing the data would give stale hits.  Figures are shared through ``st.cache_resource``.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Any

import streamlit as st

import calib_core as cc
from calib_core.regression.inference import warm_up


@st.cache_data(max_entries=64, show_spinner="Diagnosing (tests, intervals and verdicts)…")
def diagnosed(key: str, _pset: cc.PredictionSet, options_json: str) -> cc.Report:
    """``cc.diagnose`` cached on an explicit key (data token + filters + selection) and the options."""
    return cc.diagnose(_pset, by_group=False, **json.loads(options_json))


def diagnose_cached(key: str, pset: cc.PredictionSet, **options: Any) -> cc.Report:
    """:func:`diagnosed` with the options serialised (sorted keys) so equal options hit the same entry."""
    return diagnosed(key, pset, json.dumps(options, sort_keys=True))


@st.cache_resource(max_entries=512, show_spinner=False)
def _figure(key: str, _build: Callable[[], Any]) -> Any:
    return _build()


def figure(key: str, build: Callable[[], Any]) -> Any:
    """A Plotly figure built once per ``key`` and shared (``st.cache_resource``): building a figure costs
    20–60 ms of Plotly validation, which would dominate a redraw.  ``key`` must determine the figure
    completely (data token, filters, options, selection drawn, epoch); the returned figure is never mutated.
    """
    return _figure(key, build)


_CACHED: dict[tuple[Callable[..., Any], int, str], Callable[..., Any]] = {}


def cached(function: Callable[..., Any], *, max_entries: int = 16, spinner: str = "Computing…") -> Callable[..., Any]:
    """``function`` wrapped in ``st.cache_data`` (keyed on its arguments), one wrapper per function."""
    key = (function, max_entries, spinner)
    if key not in _CACHED:
        _CACHED[key] = st.cache_data(max_entries=max_entries, show_spinner=spinner)(function)
    return _CACHED[key]


@st.cache_resource(show_spinner=False)
def warm_up_core() -> threading.Thread:
    """Once per server process: build the core's N-only null tables in a background thread
    (:func:`calib_core.regression.inference.warm_up`, about 0.5 s), so that the first diagnosis a user asks
    for does not pay for them.  Returns the (daemon) thread; ``join()`` it to wait."""
    thread = threading.Thread(target=warm_up, name="calibration-lab-warm-up", daemon=True)
    thread.start()
    return thread
