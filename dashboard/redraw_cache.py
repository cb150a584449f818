"""What a redraw on unchanged data reuses: figures already turned into Plotly's wire dict, digests of the tables a
figure is drawn from, and diagnoses whose rows are only cut out when the diagnosis is not cached yet.

A rerun of a diagnosis page with every result cached still spent most of its server CPU on work whose inputs had
not changed: ``st.plotly_chart`` turns each figure into a plain dict on every run (``Figure.to_dict``: a deep copy of
every trace and the base64 encoding of every array, ~1.3 ms a figure), the figure keys were digests of the diagram
tables (``dashboard.content_key``: pandas hashing, ~1–2 ms a figure), and a selection's rows were cut out of the
data (``PredictionSet.take``) although only a cache miss reads them.  This module keeps those per explicit key:

* :func:`prepared_figure` — a figure whose ``to_dict`` returns its wire dict, made once per figure object (figures
  of :func:`dashboard.figure` are shared and never mutated, so their dict is too);
* :func:`keyed_digest` — ``content_key(*parts)`` memoised on an explicit key that determines the parts;
* :func:`marked_figure` — a figure with a selection marked, patched into the wire dict of the figure without it
  (``selectedpoints`` of the selectable traces) instead of a figure rebuilt and validated for every selection;
* :func:`show_metric_groups` — ``dashboard.show_metric_groups`` whose display frames (after
  ``views.numbers.display_numbers``) are shared, not copied and re-formatted on every rerun; after a change of the
  σ-bins only the families whose cells changed (ENCE's) are built again, the others are found by their cells;
* :func:`diagnose_lazily` — ``dashboard.diagnose_cached`` (the same cache entry) whose rows are made only on a miss;
* :func:`keyed_result` — ``dashboard.result_cached`` without the deep copy of a hit (for values nobody mutates).

Nothing here changes a number or a figure: the JSON a browser receives is byte for byte that of the figure
(``tests/dashboard/test_redraw_cache.py``).
"""

from __future__ import annotations

import copy
import json
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable, Mapping
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

import calib_core as cc
from calib_core.data.writing import FORMULA_PREFIXES
from calib_core.plots.regression_levi import levi_figure_dict
from views.numbers import display_numbers

from .cache import RESULTS, content_key, memoized

__all__ = ["prepared_figure", "marked_figure", "dict_figure", "plain_copy", "levi_plain_figure", "WIRE_ATTRIBUTE",
           "keyed_digest", "diagnose_lazily", "keyed_result",
           "show_metric_groups", "DIGEST_ENTRIES", "SELECTABLE_ROLES"]

#: ``meta["role"]`` of the traces whose bins a selection marks (``calib_core.plots.mark_selected``'s default)
SELECTABLE_ROLES = ("bins", "bars", "gap", "column", "hist")

DIGEST_ENTRIES = 4096  #: digests kept by :func:`keyed_digest` (least recently used dropped; ~100 bytes each)
_DIGESTS: OrderedDict[Hashable, str] = OrderedDict()
_DIGESTS_LOCK = threading.Lock()
#: The attribute of a figure holding its wire dict (what :func:`prepared_figure` and :func:`marked_figure` send)
WIRE_ATTRIBUTE = "_calab_wire_dict"
_MARKED = "_calab_marked_wires"  # the attribute of a figure holding its wire dicts with selections marked


def _wire_dict(fig: Any) -> dict:
    """The dict ``st.plotly_chart`` serialises: ``fig.to_dict()`` without trace ``uid`` (``plotly.io.to_json``
    drops them; dropping them here means Plotly never changes the shared dict)."""
    wire = fig.__dict__.get(WIRE_ATTRIBUTE)
    if wire is None:
        wire = type(fig).to_dict(fig)
        for trace in wire.get("data", []):
            trace.pop("uid", None)
        object.__setattr__(fig, WIRE_ATTRIBUTE, wire)
    return wire


def prepared_figure(fig: Any) -> Any:
    """A stand-in for the Plotly figure ``fig`` whose ``to_dict()`` returns ``fig``'s wire dict, converted once
    (a deep copy and base64 arrays) and then shared: what ``st.plotly_chart`` needs of a figure on every rerun.

    ``fig`` must never be mutated after this call (figures of :func:`dashboard.figure` never are); the stand-in
    shares its traces and layout and is meant for ``st.plotly_chart`` only.  Anything that is not a Plotly
    figure is returned as it is.

    Parameters
    ----------
    fig : plotly.graph_objects.Figure or any
        The figure.

    Returns
    -------
    plotly.graph_objects.Figure or any
        The stand-in (same class, same traces and layout), or ``fig`` itself when it is not a Plotly figure.

    Examples
    --------
    >>> import plotly.graph_objects as go, plotly.io as pio
    >>> fig = go.Figure(go.Scatter(x=[1, 2], y=[3, 4]))
    >>> pio.to_json(prepared_figure(fig).to_dict(), validate=False) == pio.to_json(fig, validate=False)
    True
    """
    from plotly.basedatatypes import BaseFigure

    if not isinstance(fig, BaseFigure):
        return fig
    return _stand_in(fig, _wire_dict(fig))


def dict_figure(spec: Mapping[str, Any]) -> Any:
    """A Plotly figure made from a plain figure dict without Plotly validating it, with its wire dict made at once:
    for builders that write what validation would store (e.g. ``calib_core.plots.levi_figure_dict``, equal to the
    validated figure's ``to_plotly_json()``, tested).  The layout's ``template`` (a shared dict) is encoded once
    per template object and shared by the wire dicts.  Never mutate the figure or ``spec`` afterwards.

    Parameters
    ----------
    spec : mapping
        ``{"data": [trace dicts with "type"], "layout": {...}}`` with NumPy arrays where Plotly stores them.

    Returns
    -------
    plotly.graph_objects.Figure
        The figure; ``to_dict()`` of its :func:`prepared_figure` stand-in is ``convert_to_base64`` of ``spec``
        (without trace uids).

    Examples
    --------
    >>> import plotly.graph_objects as go, plotly.io as pio
    >>> spec = {"data": [{"x": [1, 2], "y": [3, 4], "type": "scatter"}], "layout": {"height": 300}}
    >>> fig = dict_figure(spec)
    >>> pio.to_json(prepared_figure(fig).to_dict()) == pio.to_json(go.Figure(spec).to_dict())
    True
    """
    import plotly.graph_objects as go

    data = [dict(d) for d in spec.get("data", [])]
    layout = dict(spec.get("layout", {}))
    # an empty template: Plotly would otherwise deep-copy its default template into the layout cleared below
    fig = go.Figure({"data": [dict(d) for d in data], "layout": {"template": {}}}, skip_invalid=False,
                    _validate=False)
    props = fig._layout  # noqa: SLF001 (Layout's constructor would sort the keys: the spec's order kept)
    props.clear()
    props.update(layout)
    for trace_props, wanted in zip(fig._data, data):  # noqa: SLF001
        trace_props.clear()
        trace_props.update(wanted)
    object.__setattr__(fig, WIRE_ATTRIBUTE, wire_dict({"data": data, "layout": layout}))
    return fig


def wire_dict(spec: Mapping[str, Any]) -> dict:
    """The dict ``st.plotly_chart`` sends for a plain figure dict: its traces and layout copied (:func:`plain_copy`),
    NumPy arrays base64-encoded as Plotly's ``convert_to_base64`` does, and the layout's template (a shared dict)
    encoded once per template object.

    Parameters
    ----------
    spec : mapping
        ``{"data": [trace dicts], "layout": {...}}``, NumPy arrays where Plotly stores them.

    Returns
    -------
    dict
        ``{"data": [...], "layout": {...}}``, new except the template's wire dict (shared: never mutate it).

    Examples
    --------
    >>> import numpy as np
    >>> wire = wire_dict({"data": [{"type": "scatter", "y": np.arange(2.0)}], "layout": {"height": 300}})
    >>> sorted(wire["data"][0]["y"]), wire["layout"]
    (['bdata', 'dtype'], {'height': 300})
    """
    from _plotly_utils.utils import convert_to_base64

    data = plain_copy([dict(d) for d in spec.get("data", [])])
    convert_to_base64(data)
    layout = {}
    for key, value in spec.get("layout", {}).items():
        if key == "template" and isinstance(value, dict):
            layout[key] = _template_wire(value)
            continue
        value = plain_copy(value)
        if isinstance(value, dict | list):
            convert_to_base64(value)
        layout[key] = value
    return {"data": data, "layout": layout}


_ATOMS = (str, float, int, bool, type(None))


def plain_copy(obj: Any) -> Any:
    """``copy.deepcopy(obj)`` of a figure dict's tree (dicts, lists, tuples, NumPy arrays, plain values) made without
    ``deepcopy``'s memo and dispatch: containers and arrays copied, strings, numbers and None shared (immutable, as
    ``deepcopy`` shares them); anything else through ``copy.deepcopy``.  Objects shared within ``obj`` are copied
    once per reference (``deepcopy`` copies them once), which a figure dict's JSON cannot tell apart.

    Parameters
    ----------
    obj : object
        The tree.

    Returns
    -------
    object
        Its copy: no container or array of it is shared with ``obj``.

    Examples
    --------
    >>> import numpy as np
    >>> spec = {"x": np.arange(3.0), "marker": {"size": [1, 2]}, "name": "a"}
    >>> twin = plain_copy(spec)
    >>> twin["marker"] is not spec["marker"] and twin["x"] is not spec["x"] and np.array_equal(twin["x"], spec["x"])
    True
    """
    kind = type(obj)
    if kind is dict:
        return {k: plain_copy(v) for k, v in obj.items()}
    if kind is list:
        return [plain_copy(v) for v in obj]
    if kind is tuple:
        return tuple(plain_copy(v) for v in obj)
    if kind in _ATOMS:
        return obj
    if kind is np.ndarray and obj.dtype != object:
        return obj.copy(order="K")
    return copy.deepcopy(obj)


_TEMPLATE_WIRES: dict[int, tuple[dict, dict]] = {}  # id(template dict) → (template dict, its wire dict)


def _template_wire(template: dict) -> dict:
    """The wire dict of a shared template dict (encoded once per template object)."""
    from _plotly_utils.utils import convert_to_base64

    known = _TEMPLATE_WIRES.get(id(template))
    if known is None or known[0] is not template:
        wire = copy.deepcopy(template)
        convert_to_base64(wire)
        known = (template, wire)
        _TEMPLATE_WIRES[id(template)] = known
    return known[1]


def levi_plain_figure(tables: Any, background: Any, *, colors: Mapping[str, str] | None, log_axes: bool) -> Any:
    """``calib_core.plots.with_background(levi_figure, tables, background, colors=..., log_axes=...)`` without
    Plotly validation when no slice is drawn behind it (:func:`dict_figure` of ``levi_figure_dict``: the same
    JSON, tested; 1–3 ms instead of 14–24 ms after a change of bins); with a background, the validated builder.

    Parameters
    ----------
    tables : mapping of str to DataFrame
        The Levi tables shown.
    background : mapping or None
        The all-rows tables drawn faintly behind (None or empty: none).
    colors : mapping of str to str or None
        Colour per name.
    log_axes : bool
        Log-log axes.

    Returns
    -------
    plotly.graph_objects.Figure
        The figure without selection marks (never mutate it).
    """
    if background is None or (isinstance(background, Mapping) and not background):
        return dict_figure(levi_figure_dict(tables, colors=colors, log_axes=log_axes))
    return cc.plots.with_background(cc.plots.levi_figure, tables, background, colors=colors, log_axes=log_axes)


def _stand_in(fig: Any, wire: dict) -> Any:
    """A shallow stand-in of ``fig`` whose ``to_dict()`` returns ``wire``."""
    stand_in = object.__new__(type(fig))
    stand_in.__dict__.update(fig.__dict__)
    object.__setattr__(stand_in, "to_dict", lambda: wire)
    return stand_in


def marked_figure(fig: Any, selected: Mapping[str, Iterable[int]] | None,
                  roles: Iterable[str] = SELECTABLE_ROLES, *, layout_meta: Mapping[str, Any] | None = None) -> Any:
    """``calib_core.plots.mark_selected(fig, selected, roles)`` as ``st.plotly_chart`` receives it, without copying or
    changing ``fig``: the ``selectedpoints`` of every selectable trace (``meta["role"]`` in ``roles``) are patched
    into a copy of ``fig``'s wire dict — the positions of the trace's points whose ``customdata`` (the bin index)
    is among ``selected[meta["name"]]``; no selection at all: none (nothing dimmed).  Made once per (figure,
    selection); a redraw of another selection patches a list instead of rebuilding and validating the figure.
    ``layout_meta``: also ``fig.update_layout(meta=layout_meta)`` (e.g. the selection epoch that gives a chart a
    new identity after "Clear").

    Parameters
    ----------
    fig : plotly.graph_objects.Figure
        A shared figure without marks (never mutated).
    selected : mapping of str to iterable of int or None
        Name → selected bin indices.
    roles : iterable of str
        ``meta`` roles of the selectable traces.
    layout_meta : mapping, optional
        The layout's ``meta`` (replacing any; JSON-able values).

    Returns
    -------
    plotly.graph_objects.Figure
        A stand-in for ``st.plotly_chart`` (:func:`prepared_figure`) sending the marked figure's JSON.

    Examples
    --------
    >>> import plotly.graph_objects as go
    >>> fig = go.Figure(go.Bar(x=[0, 1, 2], y=[1, 2, 3], customdata=[0, 1, 2], meta={"name": "m", "role": "bars"}))
    >>> marked_figure(fig, {"m": (1, 2)}).to_dict()["data"][0]["selectedpoints"]
    [1, 2]
    """
    choice = tuple(sorted((str(k), tuple(int(b) for b in v)) for k, v in (selected or {}).items()))
    roles = tuple(roles)
    meta_key = json.dumps(layout_meta, sort_keys=True) if layout_meta is not None else None
    memo = fig.__dict__.get(_MARKED)
    if memo is None:
        memo = {}
        object.__setattr__(fig, _MARKED, memo)
    wire = memo.get((choice, roles, meta_key))
    if wire is None:
        base = _wire_dict(fig)
        chosen = dict(choice)
        any_selected = any(chosen.values())
        data = []
        for trace, wired in zip(fig.data, base.get("data", [])):
            meta = trace.meta if isinstance(trace.meta, dict) else None
            if not meta or meta.get("role") not in roles:
                data.append(wired)
                continue
            wired = dict(wired)
            wired.pop("selectedpoints", None)
            if any_selected:
                bins = np.asarray(chosen.get(meta.get("name"), ()), dtype=np.int64)
                cd = np.asarray(trace.customdata if trace.customdata is not None else [], dtype=float).reshape(-1)
                wired["selectedpoints"] = np.flatnonzero(np.isin(cd, bins)).tolist()
            data.append(wired)
        wire = {**base, "data": data}
        if layout_meta is not None:
            wire["layout"] = {**wire.get("layout", {}), "meta": json.loads(meta_key)}
        memo[(choice, roles, meta_key)] = wire
    return _stand_in(fig, wire)


def keyed_digest(key: Hashable, parts: Callable[[], tuple]) -> str:
    """``dashboard.content_key(*parts())`` memoised on ``key``, which must determine the parts (e.g. a diagnosis's
    cache key, the selection and the view flags): a rerun with the same key hashes no table again.

    Parameters
    ----------
    key : hashable
        What determines the parts.
    parts : callable
        Returns the tuple of parts to digest (called on a miss only).

    Returns
    -------
    str
        The digest, equal to ``content_key(*parts())``.

    Examples
    --------
    >>> keyed_digest(("doc", 1), lambda: (1, "a")) == content_key(1, "a")
    True
    """
    with _DIGESTS_LOCK:
        known = _DIGESTS.get(key)
        if known is not None:
            _DIGESTS.move_to_end(key)
            return known
    digest = content_key(*parts())
    with _DIGESTS_LOCK:
        _DIGESTS[key] = digest
        while len(_DIGESTS) > DIGEST_ENTRIES:
            _DIGESTS.popitem(last=False)
    return digest


def diagnose_lazily(key: str, rows: Callable[[], cc.PredictionSet], **options: Any) -> cc.Report:
    """``dashboard.diagnose_cached(key, rows(), **options)`` — the same cache entry — with ``rows()`` called only
    when the diagnosis is not cached (cutting a selection's rows out of 1e5 costs ~3 ms a rerun otherwise).

    Parameters
    ----------
    key : str
        The diagnosis's explicit key (data token, filters, selection).
    rows : callable
        Returns the rows to diagnose.
    **options
        Options of ``cc.diagnose``.

    Returns
    -------
    Report
        A private copy of the cached diagnosis.
    """
    options_json = json.dumps(options, sort_keys=True)
    return memoized(RESULTS, ("diagnosis", key, options_json), lambda: cc.diagnose(rows(), by_group=False, **options),
                    copied=True, spinner="Diagnosing (tests, intervals and verdicts)…")


def keyed_result(key: Hashable, compute: Callable[[], Any]) -> Any:
    """``compute()`` cached in ``dashboard.cache.RESULTS`` on ``key`` and shared, not copied: for values the caller
    never mutates (row masks, display frames), so a hit costs nothing.

    Parameters
    ----------
    key : hashable
        Determines the value.
    compute : callable
        Computes it on a miss.

    Returns
    -------
    any
        The shared value (do not mutate it).
    """
    return memoized(RESULTS, ("shared", key), compute, copied=False)


def _display_frame(part: pd.DataFrame) -> pd.DataFrame:
    """What ``dashboard.show_metric_table`` shows of a metric table: the sparse number columns as text (an empty cell
    where a metric has no such number), then ``dashboard.csv_safe``."""
    from .display import SPARSE_NUMBER_COLUMNS, csv_safe, number_text

    shown = part.copy()
    for column in SPARSE_NUMBER_COLUMNS:
        if column in shown.columns:
            shown[column] = number_text(shown[column])
    return csv_safe(shown)


def _risky(values: Iterable[Any]) -> bool:
    """Whether a text cell among ``values`` starts with a formula character (``calib_core.export``'s rule would
    then look at it); False: ``csv_safe`` leaves them all as they are."""
    return any(isinstance(v, str) and v[:1] in FORMULA_PREFIXES for v in values)


def _group_frame(table: pd.DataFrame, cells: Mapping[Any, list], rows: list[int], keep: list) -> pd.DataFrame:
    """``_display_frame(table.iloc[rows][keep].reset_index(drop=True))`` built once from the columns: each kept column
    taken at ``rows`` (its own dtype), the sparse number columns as text; ``csv_safe`` only when a cell or a name
    starts with a formula character (otherwise it changes nothing but costs ~1.5 ms a frame)."""
    from .display import SPARSE_NUMBER_COLUMNS, csv_safe, number_text

    positions = np.asarray(rows, dtype=np.intp)
    data: dict[Any, Any] = {}
    risky = _risky(str(c) for c in keep)
    for column in keep:
        if column in SPARSE_NUMBER_COLUMNS:
            data[column] = pd.Series(number_text(cells[column][i] for i in rows))
        else:
            data[column] = table[column].array.take(positions)
        if not risky and not pd.api.types.is_numeric_dtype(data[column].dtype):
            risky = _risky(cells[column][i] for i in rows) if column not in SPARSE_NUMBER_COLUMNS else \
                _risky(data[column])
    frame = pd.DataFrame({c: (v.array if isinstance(v, pd.Series) else v) for c, v in data.items()})
    return csv_safe(frame) if risky else frame


def _shown_groups(table: pd.DataFrame | Callable[[], pd.DataFrame], metrics: pd.DataFrame,
                  tests: bool = True) -> tuple[list, tuple | None]:
    """(heading, frame, column config) of each metric family after ``display_numbers`` and (frame, config) of the
    table of how each p-value was computed: the frames of ``dashboard.show_metric_groups`` (``views.metric_groups``,
    the sparse number columns as text, ``csv_safe``), each built in one go from the table's columns (``tests``
    False: None in place of the latter)."""
    from views import pages as views

    from .display import METRIC_COLUMN_CONFIG

    table = table() if callable(table) else table
    cells = {c: table[c].tolist() for c in table.columns}
    dtypes = {c: str(t) for c, t in zip(table.columns, table.dtypes)}
    shown = []
    for heading, rows, keep in views.metric_group_rows(table, metrics, cells):
        # a family whose cells did not change (σ-bins change ENCE's row, not the proper scores) reuses its frame
        key = ("group", heading, tuple((c, dtypes[c]) for c in keep),
               tuple(_cell_key(cells[c][i]) for c in keep for i in rows))
        shown.append((heading, *_frames_of(key, lambda rows=rows, keep=keep: display_numbers(
            _group_frame(table, cells, rows, keep), dict(METRIC_COLUMN_CONFIG)))))

    return shown, _tests_frames(metrics) if tests else None


def _tests_frames(metrics: pd.DataFrame) -> tuple[pd.DataFrame, dict]:
    """(frame, config) of the table of how each p-value was computed (``views.metric_tests``, ``csv_safe`` when a
    cell or a name starts with a formula character, ``display_numbers``), memoised on its cells."""
    from views import pages as views

    from .display import csv_safe

    def tests_frames() -> tuple[pd.DataFrame, dict]:
        tests = views.metric_tests(metrics)
        if not tests.empty and (_risky(tests.columns) or any(_risky(tests[c].tolist()) for c in tests.columns)):
            tests = csv_safe(tests)
        return display_numbers(tests, None) if not tests.empty else (tests, {})

    tests_key = ("tests", *(tuple(_cell_key(v) for v in metrics[c].tolist()) for c in ("metric", "test", "note")))
    return _frames_of(tests_key, tests_frames)


#: Display frames of metric families kept by :func:`_frames_of`, keyed on their cells (least recently used dropped)
FRAME_ENTRIES = 256
_FRAMES: OrderedDict[Hashable, tuple] = OrderedDict()
_FRAMES_LOCK = threading.Lock()


def _cell_key(value: Any) -> Any:
    """What a cell contributes to a frame's key: floats by their exact bits (``-0.0`` and ``0.0`` apart, every NaN
    alike), strings as they are, anything else by its type and ``repr``."""
    if isinstance(value, float):
        return ("f", value.hex() if value == value else "nan")
    if isinstance(value, str):
        return value
    return (type(value).__name__, repr(value))


def _frames_of(key: Hashable, build: Callable[[], tuple]) -> tuple:
    """``build()`` (a display frame and its column config, shared and never mutated) memoised on ``key``, which
    holds every cell, column name and dtype the frame is made from."""
    with _FRAMES_LOCK:
        known = _FRAMES.get(key)
        if known is not None:
            _FRAMES.move_to_end(key)
            return known
    value = build()
    with _FRAMES_LOCK:
        _FRAMES[key] = value
        while len(_FRAMES) > FRAME_ENTRIES:
            _FRAMES.popitem(last=False)
    return value


def show_metric_groups(table: pd.DataFrame | Callable[[], pd.DataFrame], metrics: pd.DataFrame, *,
                       key: Hashable, tests_key: str | None = None) -> None:
    """``dashboard.show_metric_groups(table, metrics, key=key)`` — the same elements — with the display frames made
    once per ``key`` (which must determine ``table`` and ``metrics``) and shared: a rerun neither copies them nor
    formats their numbers again (``views.numbers.display_numbers``).

    Parameters
    ----------
    table : DataFrame or callable
        The display metric table (``views.metric_table(..., compact=True)`` or ``views.selection_vs_all``), or a
        zero-argument builder of it (called on a miss only).
    metrics : DataFrame
        The report's metrics.
    key : hashable
        Determines ``table`` and ``metrics``.
    tests_key : str, optional
        The widget key of a stateful "How each p-value …" expander whose table is built and sent only while it is
        open (opening it reruns the page or fragment); None: an ordinary expander, its table always sent.

    Returns
    -------
    None
    """
    from .display import table_height

    label, icon = "How each p-value or reference value was computed", ":material/function:"
    if tests_key is not None:
        parts = keyed_result(("metric_groups_shown", key, "lazy tests"), lambda: _shown_groups(table, metrics,
                                                                                               tests=False)[0])
    else:
        parts, (tests, tests_config) = keyed_result(("metric_groups_shown", key),
                                                    lambda: _shown_groups(table, metrics))
    for heading, part, part_config in parts:
        st.markdown(f"**{heading}**")
        st.dataframe(part, hide_index=True, width="stretch", height=table_height(len(part)),
                     **({"column_config": part_config} if part_config else {}))
    if tests_key is not None:
        # views.metric_tests has a row exactly when some metric has a test or a note (its own test of that)
        if not ((metrics["test"].astype(str).str.len() > 0) | (metrics["note"].astype(str).str.len() > 0)).any():
            return
        box = st.expander(label, icon=icon, key=tests_key, on_change="rerun")
        if not box.open:
            return
        tests, tests_config = _tests_frames(metrics)
        with box:
            st.dataframe(tests, hide_index=True, width="stretch", height=table_height(len(tests)),
                         **({"column_config": tests_config} if tests_config else {}))
        return
    if not tests.empty:
        with st.expander(label, icon=icon):
            st.dataframe(tests, hide_index=True, width="stretch", height=table_height(len(tests)),
                         **({"column_config": tests_config} if tests_config else {}))
