"""What the Classification page redraws from cached results: the per-class picker and table, keyed on the diagnosis.

A rerun of the page with the same diagnosis (a view toggle, a bin click, a bins count seen before) draws from what
was computed for it; nothing here is recomputed while the diagnosis key stays the same.
"""

from __future__ import annotations

import threading
from collections.abc import Hashable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go

import calib_core as cc
from calib_core import plots
from calib_core.diagrams.bin_rows import confidence_row_bins, rows_in_bins
from views import pages as views

from .cache import STAGES, memoized, result_cached
from .display import csv_safe

__all__ = ["per_class_figure", "per_class_views", "selected_rows"]


def per_class_views(key: str, per_class: pd.DataFrame, classes: Sequence[str] | None
                    ) -> tuple[dict[str, Any], list[str], pd.DataFrame]:
    """(``views.per_class_choice``'s class options and default classes, ``views.per_class_table`` made csv-safe)
    of one diagnosis's per-class table, cached on ``key`` (the diagnosis key and model: it determines the table).

    Parameters
    ----------
    key : str
        Determines ``per_class`` and ``classes`` (the diagnosis cache key, its options and the model).
    per_class : DataFrame
        The diagnosis's per-class reliability table.
    classes : sequence of str or None
        The class names.

    Returns
    -------
    tuple
        {label: class code}, the labels shown by default, and the summary table (formulas neutralised).
    """
    return result_cached(("cls_per_class_views", key), lambda: _per_class_views(per_class, classes))


def _per_class_views(per_class: pd.DataFrame, classes: Sequence[str] | None, shown: int = views.PER_CLASS_SHOWN,
                     wide_up_to: int = 12) -> tuple[dict[str, Any], list[str], pd.DataFrame]:
    """``views.per_class_choice`` and ``views.per_class_table`` from ONE ``plots.per_class_summary`` (they make it
    twice each, with ``plots.worst_classes``; about 10 ms apiece at K = 10): the same options, default classes
    (the ``shown`` largest one-vs-rest ECE, worst first, stable) and table (tested equal)."""
    summary = plots.per_class_summary(per_class, classes)
    options = dict(zip(summary["class"].astype(str), summary["class_code"]))
    by_code = {code: label for label, code in options.items()}
    if len(summary) <= shown:
        worst = list(summary["class_code"])
    else:
        worst = list(summary.sort_values("one-vs-rest ECE", ascending=False, kind="stable")["class_code"].iloc[:shown])
    table = summary.drop(columns="class_code")
    if len(table) <= wide_up_to:
        table = table.set_index("class").T.rename_axis("class →").reset_index()
    return options, [by_code[c] for c in worst], csv_safe(table)


#: Per-class figures already built, by what fixes their layout (classes, names, colour): the skeletons a figure of
#: new bins is patched from.  A few entries (the figures themselves are in :data:`dashboard.cache.FIGURES`).
_SKELETONS: dict[Hashable, go.Figure] = {}
_SKELETON_ENTRIES = 16
_SKELETONS_LOCK = threading.Lock()
_ECE_TITLE = " · ECE "


def per_class_figure(per_class: pd.DataFrame, *, class_names: Sequence[str] | None, color: str,
                     classes: Sequence[Any]) -> go.Figure:
    """``plots.per_class_reliability_figure(per_class, class_names=…, color=…, classes=…)``, patched from an earlier
    figure of the same classes, names and colour when there is one: Plotly's ``make_subplots`` and twenty validated
    traces (about 160 ms at K = 10) are built once; a new bins count copies that figure (about 25 ms) and replaces
    each class's points (x = mean p_k, y = frequency of class k, the marker size 5 + 2.5 log₁₀ n clipped to [5, 14],
    the customdata (bin, n)) and the ECE_k of each panel's title.  The JSON is that of a fresh figure (tested).

    Parameters
    ----------
    per_class : DataFrame
        The per-class reliability table (``class``, ``bin``, ``count``, ``confidence``, ``accuracy``).
    class_names : sequence of str or None
        Display names of the class codes.
    color : str
        Colour of the curves.
    classes : sequence
        The class codes drawn, in order.

    Returns
    -------
    plotly.graph_objects.Figure
        The figure (a new object; the skeleton is never handed out).
    """
    layout_key = (tuple(classes), None if class_names is None else tuple(class_names), color)
    with _SKELETONS_LOCK:
        skeleton = _SKELETONS.get(layout_key)
    if skeleton is None:
        fig = plots.per_class_reliability_figure(per_class, class_names=class_names, color=color, classes=classes)
        with _SKELETONS_LOCK:
            if len(_SKELETONS) >= _SKELETON_ENTRIES:
                _SKELETONS.pop(next(iter(_SKELETONS)))
            _SKELETONS[layout_key] = go.Figure(fig)
        return fig
    fig = go.Figure(skeleton)
    ece_k = plots.per_class_summary(per_class).set_index("class_code")["one-vs-rest ECE"]
    code = per_class["class"].to_numpy()
    positive = per_class["count"].to_numpy() > 0
    traces = [t for t in fig.data if (t.meta or {}).get("role") == "class"]
    with fig.batch_update():
        for c, trace, note in zip(classes, traces, fig.layout.annotations):
            t = per_class[(code == c) & positive]
            count = t["count"].to_numpy(dtype=float)
            trace.x = t["confidence"].to_numpy(dtype=float)
            trace.y = t["accuracy"].to_numpy(dtype=float)
            trace.marker.size = np.clip(5 + 2.5 * np.log10(np.maximum(count, 1)), 5, 14)
            trace.customdata = np.column_stack([t["bin"].to_numpy(dtype=np.int64) + 1, count])
            note.text = f"{note.text.rsplit(_ECE_TITLE, 1)[0]}{_ECE_TITLE}{ece_k[c]:.3f}"
    return fig


def selected_rows(key: str, pset: cc.PredictionSet, bins: Mapping[str, Sequence[int]], n_bins: int, strategy: str,
                  target: str) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """The row mask of the selected confidence bins (``views.confidence_bin_rows``) and ``views.row_bin_values`` of
    the rows, with each row's bin (per model, as the diagram bins them) and its values kept per ``key`` (the
    diagnosis key: it determines ``pset``), bins and target: a click on another bin finds the rows in one pass
    over the bin numbers.

    Parameters
    ----------
    key : str
        Determines ``pset`` (the diagnosis cache key).
    pset : PredictionSet
        The diagnosed rows.
    bins : mapping of str to sequence of int
        Model → selected bins.
    n_bins : int
        Confidence bins.
    strategy : str
        ``"uniform"`` or ``"quantile"``.
    target : str
        ``"top_label"`` or ``"positive"``.

    Returns
    -------
    tuple
        The row mask and (binned value, predicted class, top-label confidence) of every row.
    """
    def build() -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray, np.ndarray]]:
        values = views.row_bin_values(pset, target)
        return confidence_row_bins(values[0], n_bins, strategy, group=pset.model), values

    row_bins, values = memoized(STAGES, ("cls_row_bins", key, int(n_bins), strategy, target), build, copied=False)
    return rows_in_bins(row_bins, bins, group=pset.model), values
