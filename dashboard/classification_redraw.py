"""What the Classification page redraws from cached results: the per-class picker and table, keyed on the diagnosis.

A rerun of the page with the same diagnosis (a view toggle, a bin click, a bins count seen before) draws from what
was computed for it; nothing here is recomputed while the diagnosis key stays the same.
"""

from __future__ import annotations

import base64
import copy
import threading
import weakref
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from _plotly_utils.basevalidators import is_homogeneous_array
from _plotly_utils.utils import convert_to_base64, plotlyjsShortTypes, to_typed_array_spec

import calib_core as cc
from calib_core import plots
from calib_core.diagrams.bin_rows import confidence_row_bins, rows_in_bins
from calib_core.plots._style import plain
from calib_core.plots.classification import histogram_values, reliability_values
from views import pages as views

from . import redraw_cache as rc
from .cache import (
    FIGURES,
    RESULTS,
    STAGES,
    Prefetch,
    classification_staged,
    diagnosis_entry,
    memoized,
    prefetch,
    result_cached,
)
from .display import csv_safe
from .store import approx_nbytes

__all__ = ["figure_cached", "linked_figure", "log_axis", "per_class_figure", "per_class_views",
           "prefetch_other_binning", "selected_rows"]


def prefetch_other_binning(key: str, pset: cc.PredictionSet, options: Mapping[str, Any]) -> Prefetch | None:
    """Prepare, in the server's idle time, the diagnosis of the same rows with the *other* binning at the same bins
    count (equal width ↔ equal mass, the page's two-option control): ``dashboard.diagnose_cached(key, pset,
    staged=True, **other)``'s own cache entry, filled by the same function (``dashboard.cache.classification_staged``,
    identical numbers whichever computes them), in ``dashboard.cache.prefetch``'s background thread at the lowest
    priority.  Other bins counts are never prepared (a slider has too many values to guess from).

    Parameters
    ----------
    key : str
        The diagnosis key of the rows (``dashboard.diagnose_rows``'s).
    pset : PredictionSet
        The rows diagnosed.
    options : mapping
        The page's diagnosis options (``strategy`` ``"uniform"`` or ``"quantile"``).

    Returns
    -------
    Prefetch or None
        The background job's :class:`dashboard.cache.Prefetch` (None: the other binning's diagnosis is cached).
    """
    other = {**options, "strategy": "uniform" if options.get("strategy") == "quantile" else "quantile"}
    entry = diagnosis_entry(key, other)  # diagnose_cached's entry of those options
    if entry in RESULTS:
        return None

    def compute() -> bool:
        memoized(RESULTS, entry, lambda: classification_staged(key, pset, other), copied=True)
        return True

    return prefetch(("cls_other_binning", key), [(("cls_other_binning", entry), compute)], when_idle=True)


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
    summary = _summary_of(per_class, classes)
    options = dict(zip(summary["class"].astype(str), summary["class_code"]))
    by_code = {code: label for label, code in options.items()}
    if len(summary) <= shown:
        worst = list(summary["class_code"])
    else:
        worst = list(summary.sort_values("one-vs-rest ECE", ascending=False, kind="stable")["class_code"].iloc[:shown])
    return options, [by_code[c] for c in worst], csv_safe(_summary_table(summary, wide_up_to))


def _summary_table(summary: pd.DataFrame, wide_up_to: int) -> pd.DataFrame:
    """``views.per_class_table``'s frame of a per-class summary: up to ``wide_up_to`` classes one column per class
    (``summary.drop(columns="class_code").set_index("class").T.rename_axis("class →").reset_index()``, made from the
    number columns at once when the class names are distinct: the same frame), a row per class above."""
    table = summary.drop(columns="class_code")
    if len(table) > wide_up_to:
        return table
    names = table["class"].tolist()
    rest = [c for c in table.columns if c != "class"]
    if len(set(names)) < len(names) or any(table[c].dtype != np.float64 for c in rest):
        return table.set_index("class").T.rename_axis("class →").reset_index()
    wide = pd.DataFrame(np.column_stack([table[c].to_numpy() for c in rest]).T, columns=pd.Index(names, name="class"))
    wide.insert(0, "class →", rest)
    return wide


#: The per-class summaries of the last per-class tables (weak reference to the table, class names, summary): the
#: picker and the figure's panel titles of one diagnosis read the same one (it was made twice, ~5 ms each at K = 10).
_SUMMARIES: list[tuple[weakref.ref, Any, pd.DataFrame]] = []


def _summary_of(per_class: pd.DataFrame, classes: Sequence[str] | None, *, any_names: bool = False) -> pd.DataFrame:
    """``plots.per_class_summary(per_class, classes)``, kept for the last few tables (by identity); ``any_names``: a
    summary of the same table with other class names will do (the caller reads the codes and ECEs only)."""
    names = None if classes is None else tuple(classes)
    for ref, kept_names, summary in list(_SUMMARIES):
        if ref() is per_class and (any_names or kept_names == names):
            return summary
    summary = _column_summary(per_class, classes)
    if summary is None:  # not the class-major layout of a diagnosis's table: pandas's group-by
        summary = plots.per_class_summary(per_class, classes)
    _SUMMARIES[:] = [(weakref.ref(per_class), names, summary), *_SUMMARIES[:3]]
    return summary


def _column_summary(per_class: pd.DataFrame, classes: Sequence[str] | None) -> pd.DataFrame | None:
    """``plots.per_class_summary(per_class, classes)`` from the table's columns, for a diagnosis's table: float
    counts, every class's bins in one run, classes increasing, no NaN (None otherwise).  Each class's count, hits
    n·acc, Σ confidence n·conf and |hits − Σ conf| are summed over its run of bins by ``np.add.reduceat``, as pandas's
    group-by sums the runs of sorted groups without NaN: the same bits (tested), without the group-by's factorising
    and frames (about 1 ms at K = 10)."""
    code = per_class["class"].to_numpy()
    count = per_class["count"].to_numpy()
    if code.ndim != 1 or code.size == 0 or code.dtype.kind not in "iu" or count.dtype != np.float64:
        return None
    starts = np.flatnonzero(np.concatenate(([True], code[1:] != code[:-1])))
    if (np.diff(code[starts]) <= 0).any():  # a class in two runs, or classes not increasing
        return None
    hits = np.nan_to_num(per_class["accuracy"].to_numpy(dtype=float)) * count
    conf_sum = np.nan_to_num(per_class["confidence"].to_numpy(dtype=float)) * count
    columns = np.stack([count, hits, conf_sum, np.abs(hits - conf_sum)], axis=1)
    if not np.isfinite(columns).all():  # pandas skips NaN cells: left to it
        return None
    total = np.add.reduceat(np.ascontiguousarray(columns.T), starts, axis=1).T
    n = total[:, 0]
    kept = code[starts]
    out = pd.DataFrame({"class_code": kept, "class": kept, "frequency": total[:, 1] / n,
                        "mean predicted probability": total[:, 2] / n, "one-vs-rest ECE": total[:, 3] / n})
    out["class"] = _class_labels(per_class, list(out["class"]), classes)
    return out


def _class_labels(per_class: pd.DataFrame, codes: list, classes: Sequence[str] | None) -> list[str]:
    """Display names of class codes, as ``plots.per_class_summary`` gives them: ``classes[code]``, else the table's
    ``class_name`` column, else the code."""
    if classes is not None:
        return [str(classes[int(c)]) if 0 <= int(c) < len(classes) else str(c) for c in codes]
    if "class_name" in per_class.columns:
        mapping = dict(zip(per_class["class"], per_class["class_name"]))
        return [str(mapping.get(c, c)) for c in codes]
    return [str(c) for c in codes]


#: Per-class figures already built, by what fixes their layout (classes, names, colour): the skeletons a figure of
#: new bins is patched from.  A few entries (the figures themselves are in :data:`dashboard.cache.FIGURES`).
_SKELETONS: dict[Hashable, dict] = {}
_SKELETON_ENTRIES = 16
_SKELETONS_LOCK = threading.Lock()
_ECE_TITLE = " · ECE "


def per_class_figure(per_class: pd.DataFrame, *, class_names: Sequence[str] | None, color: str,
                     classes: Sequence[Any]) -> go.Figure:
    """``plots.per_class_reliability_figure(per_class, class_names=…, color=…, classes=…)``, patched from an earlier
    figure of the same classes, names and colour when there is one: Plotly's ``make_subplots`` and twenty validated
    traces (about 160 ms at K = 10) are built once; a new bins count copies its dicts without validation (about 1 ms)
    and replaces each class's points (x = mean p_k, y = frequency of class k, the marker size 5 + 2.5 log₁₀ n clipped
    to [5, 14], the customdata (bin, n)) and the ECE_k of each panel's title.  Its JSON is a fresh figure's.

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
            _SKELETONS[layout_key] = _spec_of(fig)
        return fig
    spec = _copied(skeleton["spec"])
    summary = _summary_of(per_class, class_names, any_names=True)
    # {class code: ECE_k} as a plain dict (a frame's set_index and label lookups cost ~2 ms a figure)
    ece_k = dict(zip(summary["class_code"].tolist(), summary["one-vs-rest ECE"].tolist()))
    code = per_class["class"].to_numpy()
    positive = per_class["count"].to_numpy() > 0
    # the columns once, each class's points picked from them (a boolean row pick per class of the table: the same
    # values, without a DataFrame per class)
    counts, confidence, accuracy = (per_class[c].to_numpy(dtype=float) for c in ("count", "confidence", "accuracy"))
    bins = per_class["bin"].to_numpy(dtype=np.int64)
    traces = [d for d in spec["data"] if (d.get("meta") or {}).get("role") == "class"]
    for c, trace, note in zip(classes, traces, spec["layout"]["annotations"]):
        pick = (code == c) & positive
        count = counts[pick]
        trace["x"] = confidence[pick]
        trace["y"] = accuracy[pick]
        trace["marker"]["size"] = np.clip(5 + 2.5 * np.log10(np.maximum(count, 1)), 5, 14)
        trace["customdata"] = np.column_stack([bins[pick] + 1, count])
        note["text"] = f"{note['text'].rsplit(_ECE_TITLE, 1)[0]}{_ECE_TITLE}{ece_k[c]:.3f}"
    return _unvalidated(spec, skeleton)


def _spec_of(fig: go.Figure) -> dict:
    """A skeleton of a built figure: a deep copy of its trace and layout dicts (as Plotly validated and ordered them),
    with its template (about 1,000 properties) and the template's wire dict made once, shared by every figure patched
    from it (nobody changes a figure's template once drawn; export copies the figure first)."""
    layout = fig._layout  # noqa: SLF001
    template = copy.deepcopy(layout.get("template"))
    spec = {"data": copy.deepcopy(list(fig._data)),  # noqa: SLF001
            "layout": {k: template if k == "template" else copy.deepcopy(v) for k, v in layout.items()}}
    template_wire = copy.deepcopy(template)
    if template_wire is not None:
        convert_to_base64(template_wire)
    # what a figure patched from it holds but the shared template, for the cache: its trace and layout dicts and
    # their wire twin (about as large), sized once here rather than walked at every patched figure
    own = approx_nbytes([spec["data"], {k: v for k, v in spec["layout"].items() if k != "template"}])
    return {"spec": spec, "template_wire": template_wire, "nbytes": 2 * own}


def _copied(spec: dict) -> dict:
    """A copy of a skeleton's spec to patch: everything copied (:func:`_tree_copy`) but the shared template."""
    return {"data": _tree_copy(spec["data"]),
            "layout": {k: v if k == "template" else _tree_copy(v) for k, v in spec["layout"].items()}}


def _tree_copy(obj: Any, arrays: bool = True) -> Any:
    """``copy.deepcopy`` of a figure's plain tree (dicts, lists and tuples of str, numbers, None and NumPy arrays),
    without deepcopy's memo and dispatch (several times faster on a figure's thousands of nodes): containers are
    copied, arrays copied too unless ``arrays`` is False (then shared: Plotly's ``convert_to_base64`` replaces an
    array by its typed-array dict and never writes into it), immutable leaves shared as deepcopy shares them."""
    if isinstance(obj, dict):
        return {k: _tree_copy(v, arrays) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_tree_copy(v, arrays) for v in obj]
    if isinstance(obj, tuple):
        return tuple(_tree_copy(v, arrays) for v in obj)
    if isinstance(obj, np.ndarray):
        return obj.copy() if arrays else obj
    if obj is None or isinstance(obj, str | int | float | bool | complex | bytes | np.generic):
        return obj
    return copy.deepcopy(obj)  # anything else: as before


def _unvalidated(spec: dict, skeleton: dict) -> go.Figure:
    """``go.Figure(spec)`` without Plotly validating it again (``spec``: a patched :func:`_copied` copy of
    ``skeleton``'s, whose values are what validation would store: float / int arrays, lists of str), its layout keys
    in the spec's order, with its wire dict (``fig.to_dict()`` without trace uids, the template's part shared) made
    at once by :func:`_wired_item`: the same JSON as a validated build (tested), in about 2 ms instead of 30–110 ms.
    Its size for the cache is the skeleton's (:func:`_spec_of`: the same traces and layout, a few bins more or
    less)."""
    template_wire = skeleton["template_wire"]
    # traces made empty (of their type only) and filled below: Plotly neither sets nor deep-copies their properties
    # (and an empty template: Plotly would otherwise deep-copy its default one into the layout replaced below)
    fig = go.Figure({"data": [{"type": d["type"]} for d in spec["data"]], "layout": {"template": {}}}, _validate=False)
    layout = fig._layout  # noqa: SLF001 (Layout's constructor would sort the keys of every part: the spec's kept)
    layout.clear()
    layout.update(spec["layout"])
    for props, wanted in zip(fig._data, spec["data"]):  # noqa: SLF001 (keys set after a trace was made stay last)
        props.clear()
        props.update(wanted)
    data = [_wired_item(trace) for trace in spec["data"]]
    for trace in data:
        trace.pop("uid", None)
    wired_layout = {}
    for key, value in spec["layout"].items():
        if key == "template" and template_wire is not None:
            wired_layout[key] = template_wire
            continue
        wired_layout[key] = _wired_item(value) if isinstance(value, dict | list) else _tree_copy(value, arrays=False)
    object.__setattr__(fig, _WIRE_ATTRIBUTE, {"data": data, "layout": wired_layout})
    object.__setattr__(fig, _SHARED_TEMPLATE, True)
    object.__setattr__(fig, _SIZE, skeleton["nbytes"])
    return fig


#: The keys whose values ``convert_to_base64`` leaves as they are (``is_skipped_key``)
_SKIPPED_KEYS = frozenset(("geojson", "layer", "layers", "range"))


def _wired_item(obj: Any) -> Any:
    """``convert_to_base64(_tree_copy(obj, arrays=False))`` in one pass — a copy of a figure's plain tree with
    every NumPy array that is a dict's value (not a skipped key such as ``range``) as Plotly's typed-array dict
    (``to_typed_array_spec``), arrays in lists left as they are — without Plotly's per-leaf type checks: the same
    tree (tested against those two calls)."""
    if isinstance(obj, dict):
        return {k: _tree_copy(v, arrays=False) if k in _SKIPPED_KEYS else _wired_value(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_wired_item(v) for v in obj]
    if isinstance(obj, tuple):
        return tuple(_wired_item(v) for v in obj)
    return _tree_copy(obj, arrays=False)  # convert_to_base64 leaves a leaf of a list as it is


def _wired_value(value: Any) -> Any:
    """:func:`_wired_item` of a dict's value: an array becomes its typed-array dict."""
    if isinstance(value, np.ndarray):
        return _typed_array(value)
    if value is None or isinstance(value, str | int | float):  # never a homogeneous array (no __array__)
        return value
    if isinstance(value, dict | list | tuple):
        return _wired_item(value)
    value = _tree_copy(value, arrays=False)  # anything else: as the two calls treat it
    if is_homogeneous_array(value):
        return to_typed_array_spec(value)
    convert_to_base64(value)
    return value


#: The integer types Plotly narrows an int64 array to (the first whose range holds it), as ``to_typed_array_spec``
_NARROWER = tuple((np.dtype(t), np.iinfo(t).min, np.iinfo(t).max) for t in ("int8", "int16", "int32"))


def _typed_array(v: np.ndarray) -> Any:
    """``to_typed_array_spec(v)`` (Plotly's typed-array dict: dtype code, base64 of the C-ordered bytes, shape of
    a 2-D array) of a native float or int array, without its read-only copy through narwhals; any other array
    through ``to_typed_array_spec`` itself (tested equal)."""
    if type(v) is not np.ndarray or v.dtype.kind not in "fi" or not v.dtype.isnative or v.size == 0 or v.ndim == 0:
        return to_typed_array_spec(v)
    a = np.ascontiguousarray(v)
    if a.dtype == np.int64:
        hi, lo = a.max(), a.min()
        narrower = next((t for t, t_lo, t_hi in _NARROWER if hi <= t_hi and lo >= t_lo), None)
        if narrower is None:
            return to_typed_array_spec(v)
        a = a.astype(narrower)
    code = plotlyjsShortTypes.get(str(a.dtype))
    if code is None:
        return to_typed_array_spec(v)
    out = {"dtype": code, "bdata": base64.b64encode(a).decode("ascii")}
    if a.ndim > 1:
        out["shape"] = str(a.shape)[1:-1]
    return out


def _own_nbytes(fig: Any) -> int:
    """``dashboard.store.approx_nbytes`` of what a patched figure holds but its shared template."""
    own = {k: v for k, v in fig._layout.items() if k != "template"}  # noqa: SLF001
    return approx_nbytes([fig._data, own, fig.__dict__.get(_WIRE_ATTRIBUTE, {}).get("data")])  # noqa: SLF001


_SIZE = "_calab_patched_nbytes"  # a patched figure's attribute: its size for the cache (its skeleton's)


_SHARED_TEMPLATE = "_calab_shared_template"  # a patched figure's attribute: its template is a skeleton's
#: ``dashboard.redraw_cache``'s attribute of a figure's wire dict (``prepared_figure`` / ``marked_figure`` send it)
_WIRE_ATTRIBUTE = rc.WIRE_ATTRIBUTE


def figure_cached(key: str, build: Callable[[], go.Figure]) -> go.Figure:
    """``dashboard.figure(key, build)`` (the same cache entry) whose size leaves out a template shared with the
    skeleton it was patched from: ``dashboard.store.approx_nbytes`` walked the ~1,000 template properties of every
    figure kept (about 10 ms a figure); a patched figure's size is its skeleton's, sized once.

    Parameters
    ----------
    key : str
        Determines the figure completely.
    build : callable
        Builds it (on a miss only).

    Returns
    -------
    plotly.graph_objects.Figure
        The shared figure (never mutated).
    """
    def nbytes(fig: Any) -> int:
        layout = getattr(fig, "_layout", None)
        if layout is None or not fig.__dict__.get(_SHARED_TEMPLATE):
            return approx_nbytes([getattr(fig, "_data", None), layout]) if layout is not None else approx_nbytes(fig)
        size = fig.__dict__.get(_SIZE)
        return _own_nbytes(fig) if size is None else size

    return memoized(FIGURES, ("figure", key), build, copied=False, nbytes=nbytes)


#: Reliability diagrams and confidence histograms already built, by what fixes their layout (kind, models and their
#: colours, target, log axis): the skeletons a figure of other bins or other rows is patched from.
_LINKED: dict[Hashable, dict] = {}
_LOG_TICKS = [0.01, 0.1, 1, 10, 100]


def log_axis(fig: go.Figure) -> go.Figure:
    """The confidence histogram's log y axis (in place): sparse bins visible (and clickable); not ``yaxis2`` (the
    vertical lines).

    Parameters
    ----------
    fig : plotly.graph_objects.Figure
        A confidence histogram.

    Returns
    -------
    plotly.graph_objects.Figure
        ``fig``.
    """
    return fig.update_layout(yaxis={"type": "log", "range": None, "autorange": True, "tickvals": _LOG_TICKS,
                                    "ticktext": [f"{t:g}" for t in _LOG_TICKS]})


def linked_figure(kind: str, tables: Mapping[str, pd.DataFrame], *, colors: Mapping[str, str], target: str,
                  log_y: bool = False) -> go.Figure:
    """The reliability diagram (``kind="reliability"``: ``plots.reliability_figure(tables, colors=…,
    target=…)``) or the confidence histogram (``"histogram"``: ``plots.confidence_histogram_figure``, with the page's
    log y axis when ``log_y``), unmarked, patched from a figure of the same layout when there is one: Plotly
    validates a figure's traces and template once per layout (about 30 ms each); other bins or rows copy its dicts
    without validation and replace what the tables change — per bin the bars, Wilson error bars, gaps and their
    colours, hover texts and bin numbers (``plots.classification.reliability_values``), or the shares, texts, the
    mean confidence and accuracy lines and the y range (``plots.classification.histogram_values``).  The JSON is
    that of a fresh figure, byte for byte (tested).

    Parameters
    ----------
    kind : {"reliability", "histogram"}
        Which figure.
    tables : mapping of str to DataFrame
        Model → reliability table.
    colors : mapping of str to str
        Model → colour.
    target : {"top_label", "positive"}
        The binned value.
    log_y : bool, default False
        The histogram's log y axis.

    Returns
    -------
    plotly.graph_objects.Figure
        The figure (a new object, never mutated by anyone after; the skeleton is never handed out).
    """
    names = list(tables)
    layout_key = (kind, tuple(names), tuple(colors.get(m) for m in names), target, bool(log_y))
    with _SKELETONS_LOCK:
        skeleton = _LINKED.get(layout_key)
    if skeleton is None:
        if kind == "reliability":
            fig = plots.reliability_figure(tables, colors=colors, target=target)
        else:
            fig = plots.confidence_histogram_figure(tables, colors=colors, target=target)
            if log_y:
                log_axis(fig)
        with _SKELETONS_LOCK:
            if len(_LINKED) >= _SKELETON_ENTRIES:
                _LINKED.pop(next(iter(_LINKED)))
            _LINKED[layout_key] = _spec_of(fig)
        return fig
    spec = _copied(skeleton["spec"])
    if kind == "reliability":
        _patch_reliability(spec["data"], tables, target)
    else:
        _patch_histogram(spec, tables, target, log_y)
    return _unvalidated(spec, skeleton)


def _patch_reliability(data: list[dict], tables: Mapping[str, pd.DataFrame], target: str) -> None:
    """Put the bins of ``tables`` into a reliability diagram's trace dicts (after the reference line: one model's
    accuracy bars, gaps and columns, or one line per model)."""
    if len(tables) == 1:
        v = reliability_values(next(iter(tables.values())), target=target)
        bars, gap, column = data[1:4]
        for trace in (bars, gap, column):
            trace.update(x=v["centre"], width=v["width"], customdata=v["bins"], text=v["text"])
        bars["y"] = v["accuracy"]
        bars["error_y"].update(array=v["error_plus"], arrayminus=v["error_minus"])
        gap.update(y=v["gap_height"], base=np.asarray(v["gap_base"], dtype=object))  # as Plotly keeps `base`
        gap["marker"]["color"] = v["gap_fill"]
        gap["marker"]["line"]["color"] = v["gap_edge"]
        gap["marker"]["pattern"]["fgcolor"] = v["gap_edge"]
        column["y"] = np.ones_like(v["centre"])
        return
    for trace, table in zip(data[1:], tables.values()):
        v = reliability_values(table, target=target)
        trace.update(x=v["confidence"], y=v["accuracy"], customdata=v["bins"], text=v["text"])
        trace["error_y"].update(array=v["error_plus"], arrayminus=v["error_minus"])


def _patch_histogram(spec: dict, tables: Mapping[str, pd.DataFrame], target: str, log_y: bool) -> None:
    """Put the bins of ``tables`` into a confidence histogram's dicts (per model: the bars, the mean confidence line
    and the accuracy line; the y range)."""
    multi = len(tables) > 1
    acc_name = "accuracy" if target == "top_label" else "frequency of positive class"
    conf_name = "avg. confidence" if target == "top_label" else "avg. predicted probability"
    top = 0.0
    for i, (name, table) in enumerate(tables.items()):
        v = histogram_values(table, multi=multi)
        top = max(top, v["top"])
        bars, conf_line, acc_line = spec["data"][3 * i:3 * i + 3]
        bars.update(x=v["x"], y=v["pct"], customdata=v["bins"], text=v["text"])
        if not multi:
            bars["width"] = v["width"]
        suffix = f" ({plain(name)})" if multi else ""
        for line, value, label in ((conf_line, v["mean_confidence"], conf_name),
                                   (acc_line, v["mean_accuracy"], acc_name)):
            line.update(x=[value, value], name=f"{label} {value:.3f}{suffix}")
    if not log_y:
        spec["layout"]["yaxis"]["range"] = [0, max(top * 1.08, 1.0)]


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
