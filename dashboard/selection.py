"""The one linked-selection mechanism of the dashboard: bins selected in one chart drive the other views.

A :class:`LinkedSelection` keeps, under the page's ``prefix``:

* ``{prefix}_sel`` — the stored :class:`views.selection.BinSelection`, dropped when its *context* (data
  token, binning, options) changes and restricted to the names (models) still shown;
* ``{prefix}_sync`` — the bookkeeping of :func:`views.selection.sync_chart`: which selection is drawn into
  which chart, the chart the last event came from, and the epoch that "Clear" bumps so every linked figure is
  rebuilt.

It makes the ``on_select`` callback of each selectable chart, the Clear callback and the selection row (text +
Clear button).  The pure parts (events → bins, bins → rows, texts) are in ``views.selection``.

The diagnosis of the rows of selected σ-bins (:func:`sigma_selection`) is a summary of the rows, the binning and
the bins: :func:`prefetch_sigma_selections` prepares that of every single σ-bin in the server's idle time once the
Levi diagram is drawn, so that a click reads it instead of computing it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

import calib_core as cc
from calib_core import plots
from calib_core.plots.regression_dicts import (
    calibration_curve_figure_dict,
    pit_histogram_figure_dict,
    z_histogram_figure_dict,
)
from views.selection import BinSelection, note_event, note_reset, rows_in_bins, sigma_bins, sync_chart, trace_meta

from .cache import Prefetch, prefetch, prefetched_result
from .display import SELECT_MODES, chart, steady_ranges, steady_spec_ranges
from .redraw_cache import keyed_result, wire_dict

#: The overlays of a selection with a plain-dict twin that writes the validated figure's JSON
#: (:mod:`calib_core.plots.regression_dicts`)
_DICT_TWINS: dict[Callable, Callable] = {
    plots.calibration_curve_figure: calibration_curve_figure_dict,
    plots.pit_histogram_figure: pit_histogram_figure_dict,
    plots.z_histogram_figure: z_histogram_figure_dict,
}


class LinkedSelection:
    """The stored bin selection of one page (``prefix``) under ``context``."""

    def __init__(self, prefix: str, context: Hashable, names: Iterable[str] | None = None):
        self.prefix = prefix
        self.context = context
        stored = st.session_state.get(self.key)
        selection = stored.valid_for(context) if isinstance(stored, BinSelection) else BinSelection(context, {})
        if names is not None:
            shown = set(names)
            selection = BinSelection(context, {m: b for m, b in selection.bins.items() if m in shown and b})
        st.session_state[self.key] = selection
        self.selection: BinSelection = selection
        self.sync: dict = st.session_state.setdefault(f"{prefix}_sync", {})

    @property
    def key(self) -> str:
        return f"{self.prefix}_sel"

    @property
    def bins(self) -> Mapping[str, tuple[int, ...]]:
        return self.selection.bins

    @property
    def empty(self) -> bool:
        return self.selection.empty

    def for_name(self, name: str) -> tuple[int, ...]:
        """The bins selected for one model (``()`` if none)."""
        return self.selection.for_name(name)

    @property
    def epoch(self) -> int:
        """Bumped by Clear: written into (or keyed into) every linked figure so each becomes a new widget."""
        return int(self.sync.get("epoch", 0))

    def drawn(self, chart_key: str, base_token: str) -> dict[str, tuple[int, ...]]:
        """The selection to draw into linked chart ``chart_key`` (:func:`views.selection.sync_chart`)."""
        return sync_chart(self.sync, chart_key, base_token, self.selection.bins)

    def on_select(self, chart_key: str, figure) -> Callable[[], None]:
        """``on_select`` callback of chart ``chart_key`` drawing ``figure``: its event → the stored selection."""
        meta = trace_meta(figure)
        key, context, prefix = self.key, self.context, self.prefix

        def callback() -> None:
            event = st.session_state.get(chart_key)
            note_event(st.session_state.setdefault(f"{prefix}_sync", {}), chart_key, event)
            st.session_state[key] = BinSelection.from_event(event, meta, context)

        return callback

    def clear(self) -> None:
        """Clear callback: empty selection, every linked chart rebuilt (new epoch)."""
        note_reset(st.session_state.setdefault(f"{self.prefix}_sync", {}))
        st.session_state[self.key] = BinSelection(self.context, {})

    def chart(self, figure, chart_key: str) -> None:
        """The selectable chart ``chart_key``, wired to this selection."""
        chart(figure, chart_key, on_select=self.on_select(chart_key, figure), selection_mode=SELECT_MODES)

    def row(self, text: str, icon: str | None = None) -> None:
        """What is selected (``text``, Markdown) beside a Clear selection button (disabled when nothing is)."""
        info, clear_col = st.columns([5, 1], vertical_alignment="center")
        info.markdown(text)
        clear_col.button("Clear selection", key=f"{self.prefix}_clear", on_click=self.clear, disabled=self.empty,
                         icon=icon, width="stretch")


def overlay_figure(build: Callable[..., Any], tables: Any, background: Any, /, **options: Any) -> Any:
    """``steady_ranges(plots.with_background(build, tables, background, **options))`` — a selection's overlay on
    fixed axes — built without Plotly's validation when nothing is drawn behind it and ``build`` has a plain-dict
    twin (the Kuleshov curve, the PIT and z histograms: :mod:`calib_core.plots.regression_dicts`): the figure of
    :func:`dashboard.redraw_cache.dict_figure`, whose JSON is the validated figure's byte for byte
    (``tests/dashboard/test_overlay_figure.py``).  For the chart only (a download builds the validated figure).

    Parameters
    ----------
    build : callable
        A figure builder of :mod:`calib_core.plots` (tables in, figure out).
    tables : object
        The diagram tables drawn.
    background : mapping, object or None
        The tables drawn faintly behind (a slice's page); None or empty: none.
    **options
        Options of ``build``.

    Returns
    -------
    WireFigure or plotly.graph_objects.Figure
        The figure (never mutate it: figures are shared).
    """
    twin = _DICT_TWINS.get(build)
    if twin is not None and (background is None or (isinstance(background, Mapping) and not background)):
        return WireFigure(steady_spec_ranges(twin(tables, **options)))
    return steady_ranges(plots.with_background(build, tables, background, **options))


class WireFigure:
    """A chart's figure as ``st.plotly_chart`` and ``dashboard.display.live_chart`` read it — ``to_dict()``, the
    wire dict of a plain figure dict — without a Plotly ``Figure`` (no trace or layout object is built: ~0.3 ms
    less per overlay).  The wire dict is that of :func:`dashboard.redraw_cache.dict_figure` of the same dict:
    the traces and layout copied, NumPy arrays base64-encoded (``convert_to_base64``), the layout's template
    (a shared dict) encoded once per template object; so the JSON is the validated figure's byte for byte where
    ``dict_figure``'s is (``tests/dashboard/test_overlay_figure.py``).  Never mutate it.

    Parameters
    ----------
    spec : mapping
        ``{"data": [trace dicts with "type"], "layout": {...}}`` with NumPy arrays where Plotly stores them.

    Examples
    --------
    >>> import numpy as np, plotly.io as pio
    >>> from dashboard.redraw_cache import dict_figure, prepared_figure
    >>> spec = {"data": [{"type": "scatter", "x": np.arange(3.0), "y": [1, 2, 3]}], "layout": {"height": 300}}
    >>> pio.to_json(WireFigure(spec).to_dict()) == pio.to_json(prepared_figure(dict_figure(spec)).to_dict())
    True
    """

    __slots__ = ("_data", "_layout", "_wire")

    def __init__(self, spec: Mapping[str, Any]) -> None:
        wire = wire_dict(spec)
        data, layout = wire["data"], wire["layout"]
        self._data, self._layout = data, layout  # what dashboard.cache sizes a figure by
        self._wire = {"data": data, "layout": layout}

    def to_dict(self) -> dict:
        """The wire dict (shared: never mutate it)."""
        return self._wire


@dataclass(frozen=True)
class SigmaSelection:
    """The rows of selected σ-bins and their diagnosis (:func:`sigma_selection`); shared, never mutated.

    Attributes
    ----------
    key : str
        The selection's key: the rows' key and the bins (``"{base_key}|sel=[(model, bins), …]"``).
    mask : numpy.ndarray
        Boolean row mask of the selection over the diagnosed rows.
    n_rows : int
        Rows selected.
    report : Report or None
        ``cc.diagnose`` of the selected rows (None below 2 rows).
    """

    key: str
    mask: np.ndarray
    n_rows: int
    report: cc.Report | None


def sigma_selection_job(rows: cc.PredictionSet, base_key: str, bins: Mapping[str, Iterable[int]], n_bins: int,
                        binning: str, options: Mapping[str, Any]) -> tuple[tuple, Callable[[], SigmaSelection]]:
    """(key, compute) of the diagnosis of the rows of σ-bins ``bins`` {model: bins}: the key a click reads
    (:func:`sigma_selection`) and a prefetch job fills (:func:`prefetch_sigma_selections`), so that both paths
    compute the same value with the same function, arguments and random streams (``options["seed"]``).

    ``compute`` takes every row's σ-bin (``views.selection.sigma_bins`` of ``rows.dist.std()``: equal-count or
    equal-width bins of σ per model, as the Levi table bins them; shared per rows and binning), the rows of
    ``bins`` (``views.selection.rows_in_bins``) and diagnoses them: ``cc.diagnose(rows.take(mask),
    by_group=False, **options)`` (Levi et al. 2019's conditional calibration: the metrics of the rows whose σ
    lies in the bins).

    Parameters
    ----------
    rows : PredictionSet
        The diagnosed rows (with a predictive distribution).
    base_key : str
        Their explicit key (data token, filters).
    bins : mapping
        {model: σ-bin indices (0-based)}.
    n_bins, binning : int, str
        The σ-bins (``"count"`` or ``"width"``).
    options : mapping
        Options of ``cc.diagnose`` (JSON-serialisable).

    Returns
    -------
    tuple
        (key, compute), ``compute()`` a :class:`SigmaSelection`.

    References
    ----------
    Levi, D., Gispan, L., Giladi, N., Fetaya, E. (2019). Evaluating and calibrating uncertainty prediction in
    regression tasks. arXiv:1905.11659.

    Examples
    --------
    >>> from calib_core.data import examples
    >>> pset = examples.levi_synthetic(n=600)
    >>> key, compute = sigma_selection_job(pset, "doc", {pset.models()[0]: [2]}, 5, "count",
    ...                                    {"n_resamples": 50, "n_simulations": 50, "seed": 0})
    >>> key[1]
    "doc|sel=[('model', (2,))]"
    """
    chosen = {str(m): tuple(int(b) for b in v) for m, v in bins.items() if tuple(v)}
    sel_key = f"{base_key}|sel={sorted(chosen.items())}"
    key = ("sigma_selection", sel_key, int(n_bins), str(binning), json.dumps(dict(options), sort_keys=True))
    kwargs = dict(options)

    def compute() -> SigmaSelection:
        row_bins = keyed_result(("reg_row_bins", base_key, int(n_bins), str(binning)),  # shared, never changed
                                lambda: sigma_bins(rows.dist.std(), int(n_bins), str(binning), group=rows.model))
        mask = rows_in_bins(row_bins, chosen, group=rows.model)
        n_rows = int(mask.sum())
        report = cc.diagnose(rows.take(mask), by_group=False, **kwargs) if n_rows >= 2 else None
        return SigmaSelection(sel_key, mask, n_rows, report)

    return key, compute


def sigma_selection(rows: cc.PredictionSet, base_key: str, bins: Mapping[str, Iterable[int]], n_bins: int,
                    binning: str, options: Mapping[str, Any]) -> SigmaSelection:
    """The rows of σ-bins ``bins`` and their diagnosis (:func:`sigma_selection_job`), shared through
    ``dashboard.cache.prefetched_result``: prepared by :func:`prefetch_sigma_selections` (a hit), being prepared
    (the click waits for it: computed once), or computed now.  Never mutate it.

    Parameters
    ----------
    rows, base_key, bins, n_bins, binning, options
        As :func:`sigma_selection_job`.

    Returns
    -------
    SigmaSelection
        The selected rows' mask, count and diagnosis.

    References
    ----------
    Levi, D., Gispan, L., Giladi, N., Fetaya, E. (2019). Evaluating and calibrating uncertainty prediction in
    regression tasks. arXiv:1905.11659.

    Examples
    --------
    >>> from calib_core.data import examples
    >>> pset = examples.levi_synthetic(n=600)
    >>> chosen = sigma_selection(pset, "doc", {"model": [0]}, 5, "count",
    ...                          {"n_resamples": 50, "n_simulations": 50, "seed": 0})
    >>> chosen.n_rows, chosen.report.n_rows
    (120, 120)
    """
    return prefetched_result(*sigma_selection_job(rows, base_key, bins, n_bins, binning, options))


def click_order(levi_tables: Mapping[str, pd.DataFrame]) -> list[tuple[str, int]]:
    """(model, σ-bin) pairs in the order a user most likely clicks them in the Levi diagram: the bins farthest
    from the diagonal first, by their term of ENCE, |RMV_b − RMSE_b| / RMV_b (Levi et al. 2019), ties (and
    undefined terms, last) in model then bin order.

    Parameters
    ----------
    levi_tables : mapping
        {model: Levi table} (columns ``bin``, ``rmv``, ``rmse``).

    Returns
    -------
    list of tuple
        (model, bin) pairs.

    References
    ----------
    Levi, D., Gispan, L., Giladi, N., Fetaya, E. (2019). Evaluating and calibrating uncertainty prediction in
    regression tasks. arXiv:1905.11659.

    Examples
    --------
    >>> t = pd.DataFrame({"bin": [0, 1, 2], "rmv": [1.0, 2.0, 3.0], "rmse": [1.1, 3.0, 3.0]})
    >>> click_order({"m": t})
    [('m', 1), ('m', 0), ('m', 2)]
    """
    pairs, terms = [], []
    for model, table in levi_tables.items():
        rmv = table["rmv"].to_numpy(dtype=float)
        with np.errstate(invalid="ignore", divide="ignore"):
            term = np.abs(rmv - table["rmse"].to_numpy(dtype=float)) / rmv
        pairs.extend((str(model), int(b)) for b in table["bin"].to_numpy())
        terms.append(term)
    if not pairs:
        return []
    term = np.concatenate(terms)
    order = np.argsort(np.where(np.isfinite(term), -term, np.inf), kind="stable")
    return [pairs[i] for i in order]


#: Rows from which :func:`prefetch_sigma_selections` prepares the σ-bins' diagnoses (below, a click's diagnosis of
#: a bin's few thousand rows is quick and is left to the click)
SIGMA_PREFETCH_MIN_ROWS = 50_000


def sigma_prefetch_name(base_key: str, n_bins: int, binning: str) -> tuple:
    """The name of :func:`prefetch_sigma_selections`' prefetch of rows ``base_key`` with these σ-bins (for
    ``dashboard.cache.cancel_prefetch`` when its user moves to other rows or bins).

    Parameters
    ----------
    base_key : str
        The rows' explicit key.
    n_bins, binning : int, str
        The σ-bins.

    Returns
    -------
    tuple
        The name.

    Examples
    --------
    >>> sigma_prefetch_name("rows", 15, "count")
    ('sigma_selections', 'rows', 15, 'count')
    """
    return ("sigma_selections", base_key, int(n_bins), str(binning))


def prefetch_sigma_selections(rows: cc.PredictionSet, base_key: str, levi_tables: Mapping[str, pd.DataFrame],
                              n_bins: int, binning: str, options: Mapping[str, Any]) -> Prefetch | None:
    """Queue, for the server's idle time, the diagnosis of every single σ-bin of the Levi diagram drawn from
    ``levi_tables`` (:func:`sigma_selection_job` of {model: (bin,)}), in :func:`click_order`: a click then reads it
    (``dashboard.cache.prefetch`` with ``when_idle``: one background thread at the lowest priority, after a quiet
    window, one job at a time; a click on a bin being prepared waits for it, one not started computes it).
    Only from :data:`SIGMA_PREFETCH_MIN_ROWS` rows.

    Parameters
    ----------
    rows, base_key, n_bins, binning, options
        As :func:`sigma_selection_job`.
    levi_tables : mapping
        {model: Levi table} of the diagram drawn.

    Returns
    -------
    Prefetch or None
        The prefetch (None: every bin's diagnosis is cached).

    References
    ----------
    Levi, D., Gispan, L., Giladi, N., Fetaya, E. (2019). Evaluating and calibrating uncertainty prediction in
    regression tasks. arXiv:1905.11659.

    Examples
    --------
    >>> from calib_core.data import examples
    >>> pset = examples.levi_synthetic(n=600)
    >>> report = cc.diagnose(pset, by_group=False, n_bins=5, n_resamples=50, n_simulations=50, seed=0)
    >>> tables = {"model": report.diagrams[("model", cc.ALL)]["levi_bins"]}
    >>> prefetch_sigma_selections(pset, "doc-prefetch", tables, 5, "count", {"n_bins": 5}) is None  # 600 rows
    True
    """
    if rows.n_rows < SIGMA_PREFETCH_MIN_ROWS:
        return None
    jobs = [sigma_selection_job(rows, base_key, {model: (b,)}, n_bins, binning, options)
            for model, b in click_order(levi_tables)]
    return prefetch(sigma_prefetch_name(base_key, n_bins, binning), jobs, when_idle=True)
