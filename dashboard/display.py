"""Display helpers of the dashboard: Markdown escaping (:func:`views.pages.md_escape`), charts, metric and
number tables, the filter controls and the export row of the diagnosis pages.  The tables themselves are built by
``views.pages``."""

from __future__ import annotations

import functools
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable, Mapping
from typing import Any

import pandas as pd
import streamlit as st

import calib_core as cc
from calib_core import export
from views import pages as views
from views.numbers import display_numbers
from views.pages import md_escape

from .cache import content_key, diagnose_cached, result_cached
from .state import init_state

#: Plotly selection modes of every selectable chart (click, shift-click, box, lasso).
SELECT_MODES = ("points", "box", "lasso")


def data_caption(pset: cc.PredictionSet, name: str) -> str:
    """One Markdown line: name (escaped), task, layout, rows and models."""
    return views.data_caption(pset, md_escape(name))


def csv_safe(data: Any) -> Any:
    """``data`` (a DataFrame or a pandas ``Styler``) with the text cells and column names a spreadsheet would run
    as a formula (``= + - @``, tab, CR, LF first) prefixed with ``'`` — :func:`calib_core.export.neutralise_formulas`,
    the rule of the project's own CSV exports.  Streamlit's dataframe toolbar offers "Download as CSV" of what is
    displayed, so every displayed frame that holds text from a file goes through this (:func:`dataframe`)."""
    if type(data).__name__ == "Styler" and isinstance(getattr(data, "data", None), pd.DataFrame):
        data.data = export.neutralise_formulas(data.data)
        return data
    if isinstance(data, pd.Series):
        data = data.to_frame()
    return export.neutralise_formulas(data) if isinstance(data, pd.DataFrame) else data


def dataframe(data: Any, *, neutralised: bool = False, **kwargs: Any):
    """``st.dataframe`` of :func:`csv_safe` data: the toolbar's CSV download cannot carry a formula from a file
    (``=HYPERLINK(…)`` in a model name, a group, a label or a column name).  ``neutralised``: ``data`` is the
    unchanged result of :func:`csv_safe` (a display frame cached after neutralisation), not neutralised twice.
    Float columns holding tiny or huge values (2.9e-149, 1e300, ±inf) are shown as right-aligned text in
    scientific notation (:func:`views.numbers.display_numbers`): the grid prints such numbers as rows of zeros or
    as an error cell."""
    data = data if neutralised else csv_safe(data)
    if isinstance(data, pd.DataFrame):
        data, config = display_numbers(data, kwargs.pop("column_config", None))
        if config:
            kwargs["column_config"] = config
    return st.dataframe(data, **kwargs)


def chart(fig, key: str, *, live: bool = False, **kwargs: Any):
    """``st.plotly_chart`` as built (``theme=None``: the figure's own template), full width.

    ``live``: a chart that is not selectable and whose figure changes from run to run (a selection's overlay) is
    drawn by :func:`live_chart` instead, which updates the chart already drawn (``Plotly.react``) where
    ``st.plotly_chart`` draws a new one from scratch."""
    if live and not kwargs:
        return live_chart(fig, key)
    return st.plotly_chart(fig, key=key, theme=None, width="stretch", config={"displaylogo": False}, **kwargs)


#: Steps of :func:`steady_ranges`: an axis end is rounded up to one of these times a power of ten.
_NICE_STEPS = (1.0, 1.2, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0)


def _nice_up(value: float) -> float:
    """The smallest of ``_NICE_STEPS`` × 10^k at or above ``value`` (> 0)."""
    import numpy as np

    power = 10.0 ** np.floor(np.log10(value))
    return float(next(step for step in _NICE_STEPS if step * power >= value * (1 - 1e-12)) * power)


def steady_ranges(fig):
    """``fig`` with every value axis that plotly.js would autorange given a fixed range: from 0 (or the symmetric
    ±a of an axis with negative values) to the data's end with 5 % room, rounded up to 1, 1.2, 1.5, 2, 2.5, 3, 4,
    5, 6 or 8 × 10^k — so a new selection's overlay usually leaves the axes as they are (the live chart then
    updates the changed traces only) and a taller one widens them.  Axes with a range, log or category axes and
    figures with several axes are left alone.

    Parameters
    ----------
    fig : plotly.graph_objects.Figure
        The figure (changed in place).

    Returns
    -------
    plotly.graph_objects.Figure
        ``fig``.
    """
    for axis, letter in ((fig.layout.xaxis, "x"), (fig.layout.yaxis, "y")):
        if axis.range is not None or axis.type in ("log", "category", "date") or axis.autorange is False:
            continue
        steady = _steady_range([getattr(trace, letter) for trace in fig.data
                                if getattr(trace, letter, None) is not None and trace.visible in (None, True)])
        if steady is not None:
            axis.range = steady
    return fig


def _steady_range(arrays: list) -> list[float] | None:
    """The fixed range :func:`steady_ranges` gives an axis showing ``arrays`` (None: left to autorange)."""
    import numpy as np

    values = [np.asarray(a, dtype=float).ravel() for a in arrays]
    values = np.concatenate(values) if values else np.empty(0)
    values = values[np.isfinite(values)]
    if values.size == 0:
        return None
    lo, hi = float(values.min()), float(values.max())
    if lo >= 0 and hi > 0:
        return [0.0, _nice_up(1.05 * hi)]
    if hi > lo or hi != 0:
        reach = _nice_up(1.08 * max(abs(lo), abs(hi)))
        return [-reach, reach]
    return None


def steady_spec_ranges(spec: dict) -> dict:
    """:func:`steady_ranges` of a plain figure dict (``{"data": [...], "layout": {...}}``, e.g. of
    ``calib_core.plots.regression_dicts``): the same ranges set the same way (the dict equals the figure's
    ``to_plotly_json()`` when ``spec`` equals the figure's).  Only ``xaxis`` and ``yaxis`` are read, as there.

    Parameters
    ----------
    spec : dict
        The figure dict (its layout's axes replaced in place).

    Returns
    -------
    dict
        ``spec``.

    Examples
    --------
    >>> spec = {"data": [{"type": "bar", "y": [0.2, 0.9]}], "layout": {"yaxis": {"title": {"text": "density"}}}}
    >>> steady_spec_ranges(spec)["layout"]["yaxis"]["range"]
    [0.0, 1.0]
    """
    layout = spec["layout"]
    for name, letter in (("xaxis", "x"), ("yaxis", "y")):
        axis = layout.get(name, {})
        if axis.get("range") is not None or axis.get("type") in ("log", "category", "date") \
                or axis.get("autorange") is False:
            continue
        steady = _steady_range([trace[letter] for trace in spec["data"]
                                if trace.get(letter) is not None and trace.get("visible") in (None, True)])
        if steady is not None:
            layout[name] = {**axis, "range": steady}
    return spec


#: The browser side of :func:`live_chart`: the figure is drawn into the component's own ``div`` by the plotly.js
#: that Streamlit's Plotly element loads (``window.Plotly``) — ``Plotly.react`` on the same ``div`` at every new
#: figure, so plotly.js changes what differs instead of building the chart again.
LIVE_CHART_JS = r"""
// the indices of the traces of ``fig`` that differ from those drawn (``drawn``) in their data only (x, y, hover
// data) when the layout (axes, notes, legend) and every other trace are the same and those traces are lines
// (which Plotly.animate redraws alone, 5-10 DOM changes); null when the whole figure must be applied
// (Plotly.react: 500-800 DOM changes).  Changed notes (annotations) take Plotly.react too: a relayout of one
// annotation leaves the old one drawn in plotly.js 3-4.
const DATA_KEYS = ["x", "y", "customdata", "text", "hovertext"];
const asText = (fig, layout) => ({data: (fig.data || []).map(t => JSON.stringify(t)), layout: JSON.stringify(layout)});
const tracesOnly = (drawn, shown) => {
  if (!drawn || drawn.data.length !== shown.data.length || drawn.layout !== shown.layout) return null;
  const changed = [];
  for (let i = 0; i < shown.data.length; i++) {
    if (drawn.data[i] === shown.data[i]) continue;
    const before = JSON.parse(drawn.data[i]), now = JSON.parse(shown.data[i]);
    const rest = (t) => JSON.stringify(Object.assign({}, t, Object.fromEntries(DATA_KEYS.map(k => [k, 0]))));
    if ((now.type || "scatter") !== "scatter" || rest(before) !== rest(now)) return null;
    changed.push(i);
  }
  return changed.length ? changed : null;
};

export default function (component) {
  const { data, parentElement } = component;
  let host = parentElement.querySelector(":scope > .calab-live-chart");
  if (!host) {
    host = document.createElement("div");
    host.className = "calab-live-chart";
    host.style.width = "100%";
    parentElement.appendChild(host);
    // the column's width changes without a window resize (sidebar, layout): follow it
    host.__calabResize = new ResizeObserver(() => {
      if (host._fullLayout && window.Plotly) window.Plotly.Plots.resize(host);
    });
    host.__calabResize.observe(host);
  }
  // called when the element leaves the page (and for a call overtaken by a newer figure, whose chart stays):
  // free plotly.js's listeners and the chart once it is out of the document
  const cleanup = () => setTimeout(() => {
    if (host.isConnected) return;
    host.__calabSpec = null;
    host.__calabDrawn = null;
    host.__calabFig = null;
    if (host.__calabResize) host.__calabResize.disconnect();
    if (window.Plotly && host._fullLayout) window.Plotly.purge(host);
  }, 0);
  const spec = data && data.spec;
  host.__calabSpec = spec;
  if (!spec) return cleanup;
  // the figure this chart shows already (a rerun that left it unchanged: a click's other views, a toggle of
  // another chart): nothing to draw — Plotly.react would recompute it all (new arrays count as new data)
  if (spec === host.__calabDrawn && !host.__calabBusy) {
    host.setAttribute("data-pending", "false");
    return cleanup;
  }
  host.setAttribute("data-pending", "true");  // a figure not drawn yet (benches and tests wait for "false")
  const draw = (tries) => {
    if (host.__calabSpec !== spec) return;  // a newer figure came meanwhile
    const Plotly = window.Plotly;  // set by Streamlit's Plotly element, which every page with a live chart has
    if (!Plotly) {
      if (tries < 600) setTimeout(() => draw(tries + 1), 50);
      return;
    }
    const fig = JSON.parse(spec);
    const layout = Object.assign({}, fig.layout || {}, {autosize: true});
    delete layout.width;
    host.style.height = (layout.height || 450) + "px";
    // the figure as text, trace by trace (before plotly.js sees the objects), to compare with the next one
    const shown = asText(fig, layout);
    const changed = host.__calabBusy ? null : tracesOnly(host.__calabFig, shown);  // a draw in flight: all anew
    host.__calabBusy = (host.__calabBusy || 0) + 1;  // draws in flight (a figure may come meanwhile)
    const full = () => Plotly.react(host, fig.data || [], layout, {
      displaylogo: false, responsive: true, modeBarButtonsToRemove: ["lasso2d", "select2d"]});
    host.setAttribute("data-update", changed ? "traces" : "figure");  // how (benches and tests read it)
    const drawn = changed ?  // the same axes, legend and notes: the changed line traces redrawn, nothing else
      Plotly.animate(host, {data: changed.map(i => fig.data[i]), traces: changed},
                     {transition: {duration: 0}, frame: {duration: 0, redraw: false}, mode: "immediate"})
        .catch(full) : full();
    Promise.resolve(drawn).then(() => {
        host.__calabBusy -= 1;
        host.__calabDrawn = spec;
        host.__calabFig = shown;
        if (host.__calabSpec === spec) host.setAttribute("data-pending", "false");
      });
  };
  draw(0);
  return cleanup;
}
"""


@functools.cache
def _live_chart_component():
    """The component of :func:`live_chart` (registered once per process)."""
    return st.components.v2.component("calab_live_chart", js=LIVE_CHART_JS, isolate_styles=False)


def live_chart(fig, key: str) -> None:
    """A Plotly figure drawn by a component that keeps its chart from run to run: a new figure under the same
    ``key`` is applied with ``Plotly.react`` (what changed is redrawn; the axes, legend, toolbar and hover layer
    stay), where ``st.plotly_chart`` gives a changed figure a new element identity and plotly.js draws it anew
    (1,200–1,800 DOM changes a chart).  For charts without a selection (hover, zoom and the toolbar work as in
    ``st.plotly_chart``); the figure's JSON is that ``st.plotly_chart`` would send.

    Parameters
    ----------
    fig : plotly.graph_objects.Figure
        The figure (or a stand-in of ``dashboard.redraw_cache.prepared_figure``).
    key : str
        The chart's identity on the page (the same key across runs keeps the chart).

    Returns
    -------
    None
    """
    _live_chart_component()(key=key, data={"spec": _figure_json(fig), "key": key}, width="stretch")


_JSON_MEMO: OrderedDict[int, tuple[Any, str]] = OrderedDict()  # id(wire dict) → (wire dict, its JSON)
_JSON_MEMO_LOCK = threading.Lock()


def _figure_json(fig) -> str:
    """The JSON of ``fig.to_dict()``, made once per wire dict (the stand-ins of
    ``dashboard.redraw_cache.prepared_figure`` share theirs; an unchanged figure is not serialised again)."""
    import plotly.io as pio

    wire = fig.to_dict()
    with _JSON_MEMO_LOCK:
        known = _JSON_MEMO.get(id(wire))
        if known is not None and known[0] is wire:
            _JSON_MEMO.move_to_end(id(wire))
            return known[1]
    text = pio.to_json(wire, validate=False)
    with _JSON_MEMO_LOCK:
        _JSON_MEMO[id(wire)] = (wire, text)
        while len(_JSON_MEMO) > 64:
            _JSON_MEMO.popitem(last=False)
    return text


def lazy_tabs(labels: Iterable[str], key: str) -> dict[str, Any]:
    """``st.tabs`` that run only the open tab: {label: tab container}; draw a tab's content only when its ``.open``
    is true (Streamlit ≥ 1.67 tracks the open tab and reruns on a switch).  The open tab is kept across page switches
    (``key`` is persistent).  A closed tab costs nothing on the server: its figures and tables are not computed."""
    labels = list(labels)
    init_state({key: labels[0]}, persist=True)
    if st.session_state[key] not in labels:  # a tab removed since (or bad state): the first
        st.session_state[key] = labels[0]
    return dict(zip(labels, st.tabs(labels, key=key, on_change="rerun")))


class LazyFigures(Mapping):
    """Named figures for the export row whose values may be zero-argument builders, called only when a figure is
    read (a download button pressed): the figures of closed tabs are not built on every redraw."""

    def __init__(self, items: Mapping[str, Any]) -> None:
        self._items = dict(items)

    def __getitem__(self, name: str) -> Any:
        value = self._items[name]
        return value() if callable(value) else value

    def __iter__(self):
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)


def number_table(frame: pd.DataFrame, fmt: str, columns: Iterable[str] | None = None, **kwargs: Any) -> None:
    """``st.dataframe`` (no index, full width) with ``columns`` (default: all) formatted as numbers with ``fmt``."""
    names = frame.columns if columns is None else columns
    kwargs.setdefault("hide_index", True)
    dataframe(frame, width="stretch", column_config={c: st.column_config.NumberColumn(format=fmt) for c in names},
                 **kwargs)


#: Number columns of a metric table that are missing for some metrics (no debiased estimate, no
#: perfect-calibration value): shown as right-aligned text, an empty cell where there is no number (a NaN in a
#: NumberColumn reads "None").
SPARSE_NUMBER_COLUMNS = ("debiased", "perfectly calibrated")

METRIC_COLUMN_CONFIG = {
    # model and metric stay in view when a wide table (selection vs all rows, several models) scrolls sideways
    "model": st.column_config.TextColumn(pinned=True),
    "metric": st.column_config.TextColumn(pinned=True),
    "value": st.column_config.NumberColumn(format="%.4g", width=72),
    "debiased": st.column_config.TextColumn(
        width=72, alignment="right",
        help="Bias-corrected estimate where the plug-in value is biased upward by noise (ENCE, ECE, …)",
    ),
    "selection": st.column_config.NumberColumn(format="%.4g", width=72, help="The metric on the selected rows only"),
    "slice": st.column_config.NumberColumn(format="%.4g", width=72,
                                           help="The metric on the rows of the slice chosen on the Slice explorer"),
    "all rows": st.column_config.NumberColumn(format="%.4g", width=72, help="The metric on all rows (no selection)"),
    "from the summary": st.column_config.TextColumn(  # a summary loaded instead of rows (dashboard.summary_pages)
        width=170, help="exact: the in-memory value of the same rows; bound [a, b]: the in-memory value lies in "
        "[a, b]; exact for the summary's bins: bins from a sample; needs the rows: not available from a summary"),
    "perfectly calibrated": st.column_config.TextColumn(
        "if calibrated", width=100, alignment="right",  # a short header keeps 9 columns inside the page
        help="Perfectly calibrated: what a perfectly calibrated forecaster with the same predictions gets on "
        "average at this N (exact expectation where known, else simulated)"
    ),
    "p-value": st.column_config.TextColumn(
        width=95, alignment="right",
        help="p-value of the test of “the targets are draws from the predicted distributions” (± its Monte-Carlo "
        "standard error when simulated and close enough to 5% to matter; the CSV export has it for every row)"
    ),
    "verdict": st.column_config.TextColumn(
        width=135,
        help="rejected (Holm): a primary test rejected at family-wise 5% — the headline says miscalibrated; "
        "flagged (BH): a secondary statistic flagged at false-discovery rate 5%; empty: no test (scores, "
        "descriptive numbers). See Help."
    ),
    "test": st.column_config.TextColumn(help="How the p-value was computed"),
    "note": st.column_config.TextColumn(help="E.g. why a value sits outside its interval"),
}


def number_text(values: Iterable[Any]) -> list[str]:
    """4 significant digits (as the ``%.4g`` number columns), an empty string for a missing value."""
    return ["" if v is None or pd.isna(v) else f"{float(v):.4g}" for v in values]


def show_metric_table(table: pd.DataFrame, height: int | str = "auto", **column_help: str) -> None:
    """A metric table of ``views.pages.metric_table`` with number formats, column widths and help
    (``column_help``: other help texts, e.g. ``perfectly_calibrated="…"``).  The sparse number columns
    (:data:`SPARSE_NUMBER_COLUMNS`) are shown as text with an empty cell where a metric has no such number."""
    config = _metric_column_config(column_help)
    _metric_table_element(_metric_display_frame(table), height, config)


def _metric_display_frame(table: pd.DataFrame) -> pd.DataFrame:
    """The frame :func:`show_metric_table` shows: the sparse number columns as text, then :func:`csv_safe`."""
    shown = table.copy()
    for column in SPARSE_NUMBER_COLUMNS:
        if column in shown.columns:
            shown[column] = number_text(shown[column])
    return csv_safe(shown)


def _metric_table_element(shown: pd.DataFrame, height: int | str, config: dict) -> None:
    """``st.dataframe`` of a frame already passed through :func:`_metric_display_frame` (csv-safe)."""
    dataframe(shown, neutralised=True, hide_index=True, width="stretch", height=height, column_config=config)


def _metric_column_config(column_help: dict[str, str]) -> dict:
    """:data:`METRIC_COLUMN_CONFIG` with the help texts of ``column_help`` (see :func:`show_metric_table`)."""
    config = dict(METRIC_COLUMN_CONFIG)
    text_columns = {"verdict", "p-value", "test", "note"}
    for name, text in column_help.items():
        column = name.replace("_", " ")
        if column in config:
            config[column] = {**config[column], "help": text}
        else:
            config[column] = (st.column_config.TextColumn(help=text) if column in text_columns
                              else st.column_config.NumberColumn(format="%.4g", help=text))
    return config


def _metric_group_frames(table: pd.DataFrame,
                         metrics: pd.DataFrame) -> tuple[list[tuple[str, pd.DataFrame]], pd.DataFrame]:
    """What :func:`show_metric_groups` shows: (heading, display frame) of each metric family and the csv-safe
    table of how each p-value was computed (empty when there is none)."""
    parts = [(heading, _metric_display_frame(part)) for heading, part in views.metric_groups(table, metrics)]
    tests = views.metric_tests(metrics)
    return parts, (csv_safe(tests) if not tests.empty else tests)


#: Column widths (px) of the quantile-score decomposition table: two models' "value [low, high]" columns side by
#: side fit a 1440 px window's main column (auto widths overflowed it by 14 px and the grid scrolled).
DECOMPOSITION_COLUMN_WIDTHS = {"model": 95, "τ": 40, "QS": 165, "MCB": 205, "DSC": 210, "UNC": 165,
                               "MCB share": 80}


def show_decomposition_table(table: pd.DataFrame) -> None:
    """The quantile-score decomposition (``calib_core.metrics.regression_decomposition.decomposition_display``) whole in
    the main column: fixed column widths instead of Glide's auto widths (a cell's full text shows on hover)."""
    config = {c: st.column_config.TextColumn(width=w) for c, w in DECOMPOSITION_COLUMN_WIDTHS.items()
              if c in table.columns}
    dataframe(table, hide_index=True, width="stretch", column_config=config)


def table_height(n_rows: int) -> int:
    """Pixel height of an ``st.dataframe`` that shows ``n_rows`` rows and its header whole (35 px a row)."""
    return 35 * (n_rows + 1) + 3


def show_metric_groups(table: pd.DataFrame | Callable[[], pd.DataFrame], metrics: pd.DataFrame, *,
                       key: Hashable | None = None, **column_help: str) -> None:
    """A display metric table (``views.metric_table(..., compact=True)`` or ``views.selection_vs_all``) as one
    whole table per metric family (``views.metric_groups``: calibration statistics, proper scores, descriptive;
    no inner scroll), then how each p-value was computed (``views.metric_tests``) in an expander.

    The frames are built once per content (about 50 ms at every rerun otherwise: grouping, number texts and the
    formula neutralisation of small pandas frames).  ``key``: something that determines ``table`` and ``metrics``
    (the diagnosis's cache key and the level): the frames are then cached on it, and ``table`` may be a
    zero-argument builder that is called only when they are not (a rerun with the same diagnosis builds neither the
    table nor a digest of it, ~7 ms); without ``key`` they are cached on a digest of the two tables."""
    if key is not None:
        parts, tests = result_cached(("metric_groups_of", key), lambda: _metric_group_frames(
            table() if callable(table) else table, metrics))
    else:
        table = table() if callable(table) else table
        parts, tests = result_cached(("metric_groups", content_key(table, metrics)),
                                     lambda: _metric_group_frames(table, metrics))
    config = _metric_column_config(column_help)
    for heading, part in parts:
        st.markdown(f"**{heading}**")
        _metric_table_element(part, table_height(len(part)), config)
    if not tests.empty:
        with st.expander("How each p-value or reference value was computed", icon=":material/function:"):
            dataframe(tests, neutralised=True, hide_index=True, width="stretch", height=table_height(len(tests)))


def show_verdicts(report: cc.Report, models: Iterable[str] | None = None, group: str = cc.ALL) -> None:
    """The headline verdict of each model in words, one line per model (above a metric table)."""
    lines = views.verdict_lines(report, models, group)
    several = len(lines) > 1
    for model, sentence in lines:
        verdict = report.verdict(model, group)["verdict"]
        icon = {"miscalibrated": ":material/error:", "calibrated": ":material/check_circle:"}.get(
            verdict, ":material/info:")
        who = f"**{md_escape(model)}** — " if several else ""
        text = f"{who}{md_escape(sentence)}"
        if verdict == "miscalibrated":
            st.warning(text, icon=icon)
        elif verdict == "calibrated":
            st.success(text, icon=icon)
        else:
            st.info(text, icon=icon)


def filter_controls(pset: cc.PredictionSet, prefix: str) -> tuple[str, tuple[str, ...], str, tuple[int, int]]:
    """Rows (split), models and group selectors plus the bootstrap-resamples and simulation selectors (one row).

    Returns (rows, models, group, (n_resamples, n_simulations)); the first three go into the cache keys.  A file
    with more than ``views.MODELS_SHOWN`` models starts with the first of them (``views.default_models``) and a
    caption says how many are shown: every model is diagnosed and drawn only when picked.
    """
    models, groups, splits = views.filter_choices(pset)
    first = views.default_models(models)
    init_state({f"{prefix}_models": first, f"{prefix}_group": cc.ALL, f"{prefix}_rows": "all"}, persist=True)
    for key, choices, default in ((f"{prefix}_group", groups, cc.ALL), (f"{prefix}_rows", splits, "all")):
        if st.session_state[key] not in choices:  # data changed under the widget
            st.session_state[key] = default
    if any(m not in models for m in st.session_state[f"{prefix}_models"]):
        st.session_state[f"{prefix}_models"] = first
    init_state({f"{prefix}_resamples": views.DEFAULT_RESAMPLES, f"{prefix}_sims": views.DEFAULT_NULL_DRAWS},
               persist=True)
    c1, c2, c3, c4, c5 = st.columns([3, 2, 2, 2, 2])
    chosen = c1.multiselect(
        "Models", models, key=f"{prefix}_models", disabled=len(models) < 2,
        help="Several models are overlaid with one colour each."
        + (f" The file has {len(models)}; the first {len(first)} are shown at first — more make the charts "
           "unreadable and the page slow." if len(first) < len(models) else ""),
    )
    group = c2.selectbox(
        "Group", groups, key=f"{prefix}_group", disabled=len(groups) < 2, format_func=views.group_label,
        help="Diagnose one slice of the `group` column, or all rows.",
    )
    rows = c3.selectbox(
        "Rows", splits, key=f"{prefix}_rows", disabled=len(splits) < 2,
        help="Rows of the `split` column (calibration / test), or all.",
    )
    n_resamples = c4.selectbox(
        "Bootstrap resamples", list(views.RESAMPLE_CHOICES), key=f"{prefix}_resamples",
        help="Bootstrap replicates for the interval of every metric (re-weighted blocks of rows; 0 switches "
        "intervals off).",
    )
    n_sims = c5.selectbox(
        "Null draws", list(views.NULL_DRAW_CHOICES), key=f"{prefix}_sims",
        help="Draws of the statistics under perfect calibration for the simulated p-values (ENCE, ECE, …; exact "
        "tests need none). 0 switches tests, verdicts and perfect-calibration values off.",
    )
    chosen = tuple(m for m in models if m in (chosen or first)) or tuple(first)
    note = views.models_note(len(chosen), len(models), chosen == tuple(first))
    if note:
        st.caption(note)
    return rows, chosen, group, (int(n_resamples), int(n_sims))


def diagnose_rows(
    pset: cc.PredictionSet, token: str, rows: str, models: Iterable[str], group: str, *,
    restrict: tuple[str, Any] | None = None, **options: Any
) -> tuple[cc.PredictionSet, str, cc.Report]:
    """The chosen rows of the loaded data (``views.pages.subset``), the cache key of that choice and their
    cached diagnosis with ``options``; rows that cannot be diagnosed show the reason and stop the page.
    ``restrict``: (key text, row mask over that subset), e.g. a brushed time range (``dashboard.over_time``)."""
    models = tuple(models)
    sub = views.subset(pset, rows, models, group)
    key = f"{token}|rows={rows}|models={','.join(models)}|group={group}"
    if restrict is not None:
        sub = sub.take(restrict[1])
        key += f"|{restrict[0]}"
    try:
        report = diagnose_cached(key, sub, staged=True, **options)  # σ-bins changes redo only ENCE and the verdicts
    except (cc.InputError, ValueError) as err:
        st.error(f"Could not diagnose these rows: {md_escape(err)}")
        st.stop()
    return sub, key, report


def export_row(
    prefix: str,
    *,
    title: str,
    report: cc.Report,
    figures: Mapping[str, Any],
    metrics: pd.DataFrame | Callable[[], pd.DataFrame],
    pset: cc.PredictionSet | None,
    tables: Mapping[str, pd.DataFrame] | None = None,
    notes: Iterable[str] = (),
    verdicts: pd.DataFrame | None = None,
) -> None:
    """Download buttons of a diagnosis page: the metric table (CSV, formula-neutralised), any one figure (offline
    HTML) and the page report (self-contained HTML with data summary, metric tables, figures; ``calib_core.export``).
    Files are built only when a button is pressed (callable data); pressing one does not rerun the page.
    ``verdicts`` (default: the report's) are appended to the metric CSV's rows (headline verdict of each model).
    ``pset`` None: the page draws from a loaded summary (no rows; the report's own counts describe the data);
    ``metrics`` may be a callable, called only when the CSV is downloaded."""
    verdicts = report.verdicts if verdicts is None else verdicts
    data_name = st.session_state.get("pset_name") or st.session_state.get("summary_name") or "data"
    st.subheader("Export")
    c1, c2, c3, c4 = st.columns([2, 2, 2, 2], vertical_alignment="bottom")
    c1.download_button(
        "Metric table (CSV)",
        data=lambda: export.to_csv_bytes(export.metrics_with_verdicts(metrics() if callable(metrics) else metrics,
                                                                      verdicts, report.options)),
        file_name=views.download_name(data_name, prefix, "metrics", ext="csv"),
        mime="text/csv", key=f"{prefix}_dl_metrics", icon=":material/table:", width="stretch", on_click="ignore",
        help="Every metric with its interval, perfect-calibration value, p-value and flags, and the headline verdict "
        "of each model (cells starting with = + - @ are neutralised)",
    )
    names = list(figures)
    which = c2.selectbox("Figure", names, key=f"{prefix}_dl_figure_name")
    c3.download_button(
        "Figure (HTML)", data=lambda: export.figure_html(figures[which], title=which),
        file_name=views.download_name(data_name, prefix, which, ext="html"), mime="text/html",
        key=f"{prefix}_dl_figure", icon=":material/bar_chart:", width="stretch", on_click="ignore",
        help="The chosen figure as an interactive HTML file that works offline",
    )
    c4.download_button(
        "Page report (HTML)",
        data=lambda: export.report_html(report, title=title, figures=figures, prediction_set=pset, tables=tables,
                                        notes=list(notes), options=report.options),
        file_name=views.download_name(data_name, prefix, "report", ext="html"), mime="text/html",
        key=f"{prefix}_dl_report",
        icon=":material/description:", width="stretch", on_click="ignore",
        help="A self-contained HTML report of this page (data summary, metric tables, figures)",
    )
