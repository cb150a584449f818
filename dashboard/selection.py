"""The one linked-selection mechanism of the dashboard: bins selected in one chart drive the other views.

A :class:`LinkedSelection` keeps, under the page's ``prefix``:

* ``{prefix}_sel`` — the stored :class:`views.selection.BinSelection`, dropped when its *context* (data
  token, binning, options) changes and restricted to the names (models) still shown;
* ``{prefix}_sync`` — the bookkeeping of :func:`views.selection.sync_chart`: which selection is drawn into
  which chart, the chart the last event came from, and the epoch that "Clear" bumps so every linked figure is
  rebuilt.

It makes the ``on_select`` callback of each selectable chart, the Clear callback and the selection row (text +
Clear button).  The pure parts (events → bins, bins → rows, texts) are in ``views.selection``.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping
from typing import Any

import streamlit as st

from calib_core import plots
from calib_core.plots.regression_dicts import (
    calibration_curve_figure_dict,
    pit_histogram_figure_dict,
    z_histogram_figure_dict,
)
from views.selection import BinSelection, note_event, note_reset, sync_chart, trace_meta

from .display import SELECT_MODES, chart, steady_ranges, steady_spec_ranges
from .redraw_cache import dict_figure

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
    (``tests/dashboard/test_overlay_figure.py``).  For the chart only: its ``layout`` and ``data`` objects do not
    follow the dict (a download builds the validated figure).

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
    plotly.graph_objects.Figure
        The figure (never mutate it: figures are shared).
    """
    twin = _DICT_TWINS.get(build)
    if twin is not None and (background is None or (isinstance(background, Mapping) and not background)):
        return dict_figure(steady_spec_ranges(twin(tables, **options)))
    return steady_ranges(plots.with_background(build, tables, background, **options))
