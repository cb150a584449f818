"""Linked views without Streamlit: Plotly selection events → bin sets → row masks (pure functions).

The dashboard links its charts through *bins*: every selectable trace built by ``calib_core.plots``
carries ``customdata`` = the bin index and ``meta = {"name": <model>, "role": <role>}``.  A Plotly
selection (click, shift-click, box or lasso) arrives in Streamlit as

    {"selection": {"points": [{"curve_number": 1, "point_index": 3, "customdata": 3, ...}, ...],
                   "point_indices": [...], "box": [...], "lasso": [...]}}

(``point_indices`` is de-duplicated across traces, so it is useless with several models; this module
reads ``curve_number`` + ``customdata`` of every point instead).  The page's ``on_select`` callback
calls :func:`selected_bins` with the trace metadata of the figure that was clicked and stores the
result in its own session key; everything downstream is a pure function of that stored selection:

* :func:`sigma_bins` / :func:`confidence_row_bins` — the bin of every row, computed exactly as the
  diagram tables do (Levi σ-bins: ``RegressionRows.sigma_bins``; confidence bins:
  ``classification.metrics.confidence_bins``), per model;
* :func:`rows_in_bins` — the boolean row mask of a selection {model: bins};
* :class:`BinSelection` — a selection tied to the *context* it was made in (data token, binning,
  number of bins …): :meth:`BinSelection.valid_for` drops it when the bins it refers to no longer
  exist (new data or new binning), and keeps it across unrelated control changes;
* :func:`format_bins` / :func:`bin_runs` / :func:`describe_selection` — the "N rows selected from bins …" text
  (bins numbered from 1, as the charts' hover labels number them; indices stay 0-based in the code);
* :func:`class_breakdown` — per-class counts, accuracy and confidence of the selected rows;
* :func:`sync_chart` / :func:`note_event` / :func:`note_reset` — which selection to draw into each linked
  chart (see below).

Drawing a selection into a chart changes its figure, and Streamlit treats a changed figure as a *new*
widget: plotly.js then forgets its own selection, so a later shift-click would start from scratch.  So
the chart the user is selecting in keeps its figure unchanged (plotly.js shows and accumulates the live
selection itself), while every *other* linked chart is redrawn with the stored selection; a chart whose
figure changes anyway (other data, bins or options) gets the stored selection drawn in, and "Clear"
bumps an epoch written into every linked figure so all of them are rebuilt empty.

No Streamlit import; everything is vectorised over rows (loops run over models only).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, MutableMapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from calib_core.base.binning import bin_sums
from calib_core.diagrams.bin_rows import confidence_row_bins, rows_in_bins, sigma_bins

__all__ = [
    "BinSelection",
    "event_points",
    "selected_bins",
    "sigma_bins",
    "confidence_row_bins",
    "rows_in_bins",
    "format_bins",
    "bin_runs",
    "describe_selection",
    "class_breakdown",
    "sync_chart",
    "note_event",
    "is_area_selection",
    "note_reset",
    "trace_meta",
    "with_selected",
]

#: Trace roles (``meta["role"]``) whose points stand for a bin.
SELECTABLE_ROLES: frozenset[str] = frozenset({"bins", "bars", "gap", "column", "hist", "steps"})


def _get(obj: Any, key: str, default: Any = None) -> Any:
    """``obj[key]`` or ``obj.key`` (Streamlit's PlotlyState supports both; plain dicts only the first)."""
    if obj is None:
        return default
    if isinstance(obj, Mapping):
        return obj.get(key, default)
    try:
        return obj[key]
    except (KeyError, TypeError, IndexError):
        return getattr(obj, key, default)


def event_points(event: Any) -> list[Mapping[str, Any]]:
    """The list of selected points of a Plotly selection event (``None`` or no selection → ``[]``).

    Accepts the whole widget state (``{"selection": {"points": …}}``), the inner ``selection`` mapping,
    or Streamlit's attribute-access ``PlotlyState``.
    """
    if event is None:
        return []
    selection = _get(event, "selection", None)
    source = selection if selection is not None else event
    points = _get(source, "points", None)
    return list(points) if points else []


def _bin_of(point: Mapping[str, Any]) -> int | None:
    """Bin index of one point: its ``customdata`` (scalar, or the first element of a row: a list or, as plotly.js
    sends a 2-D customdata row, a mapping {"0": …}), else a histogram's ``bin_number``."""
    cd = _get(point, "customdata", None)
    if isinstance(cd, Mapping):  # a 2-D customdata row arrives from plotly.js as {"0": …, "1": …}
        cd = cd.get("0", cd.get(0))
    if isinstance(cd, list | tuple | np.ndarray):
        cd = cd[0] if len(cd) else None
    if cd is None:
        cd = _get(point, "bin_number", None)
    if cd is None:
        return None
    try:
        value = float(cd)
    except (TypeError, ValueError):
        return None
    return int(value) if np.isfinite(value) else None


def selected_bins(
    event: Any,
    trace_meta: Sequence[Mapping[str, Any] | None],
    roles: Iterable[str] = SELECTABLE_ROLES,
    default_name: str = "model",
) -> dict[str, tuple[int, ...]]:
    """{trace name: sorted bin indices} of a Plotly selection event.

    ``trace_meta[k]`` is ``figure.data[k].meta`` of the figure the user selected in (``None`` for
    traces without one).  A point counts when its trace's role is in ``roles`` (reference lines,
    bands and other decorations are ignored); its bin is its ``customdata``.  Clicks, shift-clicks
    (Plotly sends the accumulated points), box and lasso selections all arrive as points, so one
    function serves them all.  Points of unknown traces are ignored; an empty event gives ``{}``.
    """
    roles = frozenset(roles)
    out: dict[str, set[int]] = {}
    for point in event_points(event):
        curve = _get(point, "curve_number", 0)
        try:
            meta = trace_meta[int(curve)]
        except (IndexError, TypeError, ValueError):
            continue
        if not meta or meta.get("role") not in roles:
            continue
        b = _bin_of(point)
        if b is None:
            continue
        out.setdefault(str(meta.get("name", default_name)), set()).add(b)
    return {name: tuple(sorted(bins)) for name, bins in out.items()}


def format_bins(bins: Iterable[int], *, first: int = 1) -> str:
    """Compact text of a set of bin indices, numbered from ``first`` as the charts' hover labels and axes number
    them: ``[0, 1, 2, 5, 7, 8]`` → ``"1–3, 6, 8–9"`` (``first=0``: ``"0–2, 5, 7–8"``).

    Bin indices are 0-based everywhere in the code (``customdata``, :class:`BinSelection`); only texts add ``first``.
    """
    b = np.unique(np.asarray(list(bins), dtype=np.int64)) + int(first)
    if b.size == 0:
        return "none"
    breaks = np.flatnonzero(np.diff(b) != 1)
    starts = np.r_[b[0], b[breaks + 1]]
    ends = np.r_[b[breaks], b[-1]]
    return ", ".join(str(s) if s == e else f"{s}–{e}" for s, e in zip(starts, ends))


def bin_runs(bins: Iterable[int]) -> list[tuple[int, int]]:
    """Runs of consecutive bin indices as (first, last) pairs: ``[10, 12, 13]`` → ``[(10, 10), (12, 13)]``."""
    b = np.unique(np.asarray(list(bins), dtype=np.int64))
    if b.size == 0:
        return []
    breaks = np.flatnonzero(np.diff(b) != 1)
    return [(int(s), int(e)) for s, e in zip(np.r_[b[0], b[breaks + 1]], np.r_[b[breaks], b[-1]])]


def describe_selection(
    selection: Mapping[str, Iterable[int]], n_rows: int, what: str = "bins", *, n_bins: int | None = None
) -> str:
    """"N rows selected from σ-bins 11, 13 of 15 …": bins numbered from 1 as the charts number them (per model
    when several models are selected; ``n_bins`` adds "of B"; one bin is named in the singular)."""
    parts = [(name, tuple(bins)) for name, bins in selection.items() if tuple(bins)]
    if not parts:
        return "No bins selected."
    one = what[:-1] if what.endswith("s") else what

    def where(name: str, bins: tuple[int, ...]) -> str:
        text = f"{one if len(set(bins)) == 1 else what} {format_bins(bins)}"
        if n_bins is not None:
            text += f" of {int(n_bins)}"
        return text + ("" if name == "model" and len(parts) == 1 else f" ({name})")

    return f"{n_rows:,} row{'s' if n_rows != 1 else ''} selected from {'; '.join(where(n, b) for n, b in parts)}."


@dataclass(frozen=True)
class BinSelection:
    """Selected bins {model: bins} together with the context they refer to.

    ``context`` is any hashable description of what defines the bins (e.g. ``(data_token, n_bins,
    binning)``); a selection made under one context means nothing under another, so pages call
    :meth:`valid_for` with the current context and get an empty selection back when it changed (new
    data, other binning) — and the same selection when only unrelated controls changed.
    """

    context: Hashable = None
    bins: Mapping[str, tuple[int, ...]] = field(default_factory=dict)

    @classmethod
    def from_event(
        cls, event: Any, trace_meta: Sequence[Mapping[str, Any] | None], context: Hashable, **kwargs: Any
    ) -> BinSelection:
        """The selection of a Plotly event (see :func:`selected_bins`) under ``context``."""
        return cls(context, selected_bins(event, trace_meta, **kwargs))

    @property
    def empty(self) -> bool:
        return not any(self.bins.values())

    def valid_for(self, context: Hashable) -> BinSelection:
        """This selection if it was made under ``context``, else an empty one under ``context``."""
        return self if context == self.context else BinSelection(context, {})

    def for_name(self, name: str) -> tuple[int, ...]:
        """The bins selected for one model (``()`` if none)."""
        return tuple(self.bins.get(name, ()))


def class_breakdown(
    labels: np.ndarray,
    pred: np.ndarray,
    confidence: np.ndarray,
    n_classes: int,
    class_names: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Per-class breakdown of some rows (e.g. the selected confidence bins), one row per class k:

    ``predicted`` = #{ŷ_i = k}, ``accuracy`` = mean 1[y_i = k] over those rows (precision of k),
    ``mean confidence`` = mean max-probability over them, ``gap`` = mean confidence − accuracy
    (> 0: over-confident when predicting k; Guo et al. 2017's gap, per predicted class), and
    ``true`` = #{y_i = k}.  Sums via ``binning.bin_sums`` with the class as the bin index.
    Classes that occur neither as prediction nor as label are left out.
    """
    labels = np.asarray(labels, dtype=np.int64)
    pred = np.asarray(pred, dtype=np.int64)
    confidence = np.asarray(confidence, dtype=float)
    correct = (labels == pred).astype(float)
    n_pred, s_conf, s_hit = bin_sums(pred, n_classes, confidence, correct)
    (n_true,) = bin_sums(labels, n_classes)
    with np.errstate(invalid="ignore", divide="ignore"):
        acc = s_hit / n_pred
        conf = s_conf / n_pred
    names = [str(class_names[k]) if class_names is not None and k < len(class_names) else str(k)
             for k in range(n_classes)]
    out = pd.DataFrame(
        {
            "class": names,
            "predicted": n_pred.astype(np.int64),
            "accuracy": acc,
            "mean confidence": conf,
            "gap": conf - acc,
            "true": n_true.astype(np.int64),
        }
    )
    return out[(out["predicted"] > 0) | (out["true"] > 0)].reset_index(drop=True)


def sync_chart(
    sync: MutableMapping[str, Any], chart: str, base_token: str, stored: Mapping[str, Iterable[int]]
) -> dict[str, tuple[int, ...]]:
    """The selection to draw into linked chart ``chart`` this run (``sync`` is the page's persistent dict).

    ``base_token`` identifies the chart's figure *without* any selection (e.g. a hash of its JSON).
    Rule: redraw with the ``stored`` selection, unless the chart's base figure is unchanged **and** the last
    selection event came from this chart (:func:`note_event`) — then keep what was drawn last time, so the
    figure, and hence the Streamlit widget and plotly.js's live selection (shift-click, box, lasso), stay.
    """
    base = sync.setdefault("base", {})
    baked = sync.setdefault("baked", {})
    if base.get(chart) != base_token or sync.get("source") != chart or chart not in baked:
        baked[chart] = {str(k): tuple(int(b) for b in v) for k, v in stored.items() if tuple(v)}
    base[chart] = base_token
    return dict(baked[chart])


def note_event(sync: MutableMapping[str, Any], chart: str, event: Any = None) -> None:
    """Record that the last selection came from ``chart`` (call it in the chart's ``on_select`` callback).

    A box or lasso ``event`` (:func:`is_area_selection`) is not left to plotly.js: the chart is redrawn with the
    stored selection like the others, because plotly.js marks the points whose *centre* lies in the area, and a
    chart may stand for a bin by a point elsewhere (the reliability diagram's full-height column: a box around the
    bars would select the bars and veil every column).  Clicks and shift-clicks stay live (plotly.js accumulates
    them only in the figure it drew)."""
    sync["source"] = None if is_area_selection(event) else chart


def is_area_selection(event: Any) -> bool:
    """True when a Plotly selection event comes from the box or lasso tool (its ``box`` / ``lasso`` lists)."""
    if event is None:
        return False
    selection = _get(event, "selection", None)
    source = selection if selection is not None else event
    return bool(_get(source, "box", None) or _get(source, "lasso", None))


def note_reset(sync: MutableMapping[str, Any]) -> int:
    """A programmatic change of the selection (e.g. "Clear"): every linked chart must be rebuilt.

    Forgets the source chart and increments ``sync["epoch"]``, which pages write into every linked figure
    (``layout.meta``) so that even a chart whose drawn selection did not change gets a new identity (plotly.js
    drops its live selection).  Returns the new epoch.
    """
    sync["source"] = None
    sync["epoch"] = int(sync.get("epoch", 0)) + 1
    return sync["epoch"]


def trace_meta(figure: Any) -> list[dict | None]:
    """``meta`` of every trace of a Plotly figure (``None`` for traces without one), as :func:`selected_bins`
    and :meth:`BinSelection.from_event` take it."""
    return [dict(d.meta) if d.meta else None for d in figure.data]


def with_selected(
    tables: Mapping[str, Any],
    selected: Mapping[str, Any] | None,
    colors: Mapping[str, str],
    label: str = "selected",
) -> tuple[dict[str, Any], dict[str, str], dict[str, str]]:
    """Diagram tables of all rows overlaid with those of a selection: (tables, dashes, colours).

    Every entry ``m`` of ``selected`` is added as ``"{m} · {label}"``, drawn dashed in the colour of ``m``;
    ``colors`` gets such an entry for every name of ``colors`` (whether selected or not).
    """
    out = dict(tables)
    dashes: dict[str, str] = {}
    for m, table in (selected or {}).items():
        out[f"{m} · {label}"] = table
        dashes[f"{m} · {label}"] = "dash"
    return out, dashes, {**colors, **{f"{m} · {label}": c for m, c in colors.items()}}
