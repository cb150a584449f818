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

import numpy as np
import plotly.io as pio
import streamlit as st

import calib_core as cc
from calib_core import examples, plots, views
from calib_core.registry import metric_keys
from calib_core.regression.inference import warm_up
from calib_core.selection import with_selected


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


def warm_up_pages() -> None:
    """The first-use work of the two diagnosis pages, done once per process on small data so that a user's first
    diagnosis does not pay it: the code paths of a diagnosis above 2,000 rows with the pages' default options
    (1,000 bootstrap replicates, 2,000 null draws), Plotly's lazily imported figure, trace and validator classes,
    its template and JSON encoding (every figure builder the pages call), and the metric and per-class tables.
    Pure computation (no Streamlit element, no session state): safe in a background thread, about 0.5 s of CPU.
    """
    reg = cc.diagnose(examples.levi_synthetic(n=2_500), by_group=False)  # 2 models × 2,500 rows: N > 2,000 paths
    shown = list(views.diagram_tables(reg, "levi_bins"))
    colors = plots.model_colors(shown)
    figs = [plots.mark_selected(plots.levi_figure(views.diagram_tables(reg, "levi_bins"), colors=colors), {})]
    curve, dashes, curve_colors = with_selected(views.diagram_tables(reg, "calibration_curve", shown), None, colors)
    figs.append(plots.calibration_curve_figure(curve, colors=curve_colors, dashes=dashes, bands=None))
    pit, pit_dashes, _ = with_selected(views.diagram_tables(reg, "pit_histogram", shown), None, colors)
    figs.append(plots.pit_histogram_figure(pit, colors=curve_colors, dashes=pit_dashes))
    z, z_dashes, _ = with_selected(views.diagram_tables(reg, "z_histogram", shown), None, colors)
    figs.append(plots.z_histogram_figure(z, colors=curve_colors, dashes=z_dashes))
    figs.append(plots.intervals_figure(views.diagram_tables(reg, "intervals", shown), colors=colors))
    figs.append(plots.qq_figure(views.diagram_tables(reg, "qq", shown), colors=colors))
    views.metric_table(reg.metrics, 0.95)

    rng = np.random.default_rng(0)
    probs = rng.dirichlet(np.full(10, 0.3), size=3_000)
    labels = (probs.cumsum(axis=1) < rng.random((3_000, 1))).sum(axis=1).clip(0, 9)
    cls = cc.diagnose(cc.PredictionSet(task="classification", labels=labels, probs=probs, layout="probs"),
                      by_group=False)
    model = cls.models[0]
    rel = {model: cls.diagrams[(model, cc.ALL)]["reliability"]}
    colors = plots.model_colors([model])
    figs.append(plots.mark_selected(plots.reliability_figure(rel, colors=colors, target="top_label"), {}))
    figs.append(plots.mark_selected(plots.confidence_histogram_figure(rel, colors=colors, target="top_label"), {}))
    per_class = cls.diagrams[(model, cc.ALL)]["per_class"]
    figs.append(plots.per_class_reliability_figure(per_class, class_names=None, color=colors[model]))
    views.metric_table(cls.metrics, 0.95, keys=metric_keys("classification"))
    views.per_class_table(per_class, None)
    for fig in figs:  # what st.plotly_chart does with a figure
        pio.to_json(fig.to_dict(), validate=False)


def warm_up_server() -> None:
    """Everything a server process does once, ahead of its first diagnosis: the core's N-only null tables
    (:func:`calib_core.regression.inference.warm_up`, read by the first diagnosis, so built first), then
    :func:`warm_up_pages`."""
    warm_up()
    warm_up_pages()


@st.cache_resource(show_spinner=False)
def warm_up_core() -> threading.Thread:
    """Once per server process: :func:`warm_up_server` in a background thread (about 1 s of CPU), so that the
    first diagnosis a user asks for pays neither the null tables nor the first use of Plotly and the tables.
    Returns the thread; ``join()`` it to wait.  Not a daemon: a process that ends right after starting (an AppTest
    run, a short-lived server) waits the ~1 s for it instead of tearing the interpreter down while the thread is in
    native code (which aborted such a process with "terminate called without an active exception")."""
    thread = threading.Thread(target=warm_up_server, name="calibration-lab-warm-up", daemon=False)
    thread.start()
    return thread
