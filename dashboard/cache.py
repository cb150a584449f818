"""Caches of the dashboard, keyed on small explicit tokens.

Heavy work is cached with ``st.cache_data`` keyed on the data token and the options, with the data itself passed
as ``_``-prefixed arguments that Streamlit does not hash — Streamlit hashes only a sample of large arrays/frames,
so hashing the data would give stale hits.  Figures are shared through ``st.cache_resource``.
"""

from __future__ import annotations

import dataclasses
import json
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any

import numpy as np
import pandas as pd
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


def nbytes(value: Any) -> int:
    """Bytes held by ``value``: NumPy arrays (``nbytes``), pandas objects (``memory_usage``), and the fields /
    items of dataclasses, dicts, lists and tuples (each object counted once), e.g. a ``PredictionSet``."""
    seen: set[int] = set()

    def walk(obj: Any) -> int:
        if obj is None or isinstance(obj, (bool, int, float, str, bytes)) or id(obj) in seen:
            return len(obj) if isinstance(obj, (str, bytes)) else 0
        seen.add(id(obj))
        if isinstance(obj, np.ndarray):
            return int(obj.nbytes)
        if isinstance(obj, pd.DataFrame):
            return int(obj.memory_usage(index=True, deep=False).sum())
        if isinstance(obj, (pd.Series, pd.Index)):
            return int(obj.memory_usage(deep=False))
        if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
            return sum(walk(getattr(obj, f.name)) for f in dataclasses.fields(obj))
        if isinstance(obj, dict):
            return sum(walk(k) + walk(v) for k, v in obj.items())
        if isinstance(obj, (list, tuple, set, frozenset)):
            return sum(walk(v) for v in obj)
        return sum(walk(v) for v in vars(obj).values()) if hasattr(obj, "__dict__") else 0

    return walk(value)


class BytesBoundedCache:
    """A process-wide LRU cache bounded in bytes (and entry age), shared by all sessions and thread-safe.

    ``st.cache_data`` bounds entries only by count (and returns a pickled copy per hit): four cached uploads of
    a few hundred MB each stayed resident after their sessions closed.  Here the values' total
    :func:`nbytes` never exceeds ``max_bytes`` — least recently used entries go first, a value larger than the
    bound is not kept — and entries older than ``ttl`` seconds are dropped.  Values are returned as stored
    (not copied): they must never be mutated (the loaded ``PredictionSet`` never is).
    """

    def __init__(self, max_bytes: Callable[[], int] | int, ttl: float = 3600.0) -> None:
        self._max_bytes = max_bytes
        self.ttl = ttl
        self._items: OrderedDict[Hashable, tuple[Any, int, float]] = OrderedDict()
        self._lock = threading.Lock()

    @property
    def max_bytes(self) -> int:
        """The bound in bytes (a callable bound is read on every use, e.g. from the Streamlit config)."""
        return int(self._max_bytes() if callable(self._max_bytes) else self._max_bytes)

    @property
    def total_bytes(self) -> int:
        """Bytes held now."""
        with self._lock:
            return sum(size for _, size, _ in self._items.values())

    def __len__(self) -> int:
        with self._lock:
            return len(self._items)

    def get(self, key: Hashable) -> Any | None:
        """The value stored under ``key`` (and mark it recently used), or None."""
        with self._lock:
            self._expire()
            item = self._items.get(key)
            if item is None:
                return None
            self._items.move_to_end(key)
            return item[0]

    def put(self, key: Hashable, value: Any, size: int | None = None) -> None:
        """Store ``value`` (``size`` bytes, default :func:`nbytes`), evicting least recently used entries."""
        size = nbytes(value) if size is None else int(size)
        bound = self.max_bytes
        with self._lock:
            self._items.pop(key, None)
            self._expire()
            if size > bound:
                return
            while self._items and sum(s for _, s, _ in self._items.values()) + size > bound:
                self._items.popitem(last=False)
            self._items[key] = (value, size, time.monotonic())

    def clear(self) -> None:
        """Drop every entry."""
        with self._lock:
            self._items.clear()

    def _expire(self) -> None:
        cutoff = time.monotonic() - self.ttl
        for key in [k for k, (_, _, t) in self._items.items() if t < cutoff]:
            del self._items[key]
