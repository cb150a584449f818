"""Streamlit plumbing of the Forecast hub page: the cached per-row scores, the filters and the linked selection.

* :func:`hub_rows` — :func:`calib_core.diagnosis.regression_hub.forecast_rows` once per data token, kept in
  :data:`dashboard.cache.RESULTS` as one shared read-only object: a filter or selection change regroups its arrays
  (``forecast_scores(rows, by, mask)``), it never recomputes a WIS;
* :func:`hub_filters` — models, horizon range, target-date range and locations, persistent across page switches;
* :class:`HubSelection` — the page's :class:`~dashboard.selection.LinkedSelection` whose charts each own one name
  (``cell``, ``horizon``, ``date``): a click in one chart replaces that chart's part of the selection and keeps the
  others, so a heatmap cell and a horizon restrict the page together;
* :func:`open_on_regression` — the "open these rows on the Regression page" button (the Slice explorer's focus).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd
import streamlit as st

import calib_core as cc
from calib_core.diagnosis.regression_hub import ForecastRows, forecast_rows
from views import hub as hv
from views.selection import BinSelection, note_event, trace_meta

from .cache import RESULTS, memoized
from .display import dataframe
from .selection import LinkedSelection
from .slices import set_slice_focus
from .state import init_state

__all__ = ["hub_rows", "hub_filters", "HubSelection", "open_on_regression", "show_model_table"]


def hub_rows(pset: cc.PredictionSet, token: str) -> ForecastRows:
    """The per-row scores of the loaded hub, computed once per data ``token`` (shared: never mutate them)."""
    return memoized(RESULTS, ("hub_rows", token), lambda: forecast_rows(pset), copied=False,
                    spinner="Scoring every forecast (WIS, coverages, bias)…")


def _valid(key: str, allowed: Callable[[object], bool], default: object) -> None:
    """Reset a persistent widget value that the loaded data no longer allow (another hub loaded)."""
    if not allowed(st.session_state.get(key)):
        st.session_state[key] = default


def hub_filters(rows: ForecastRows) -> hv.HubFilters:
    """The filter row: models, horizon range, target-end-date range, locations (persistent keys ``hub_*``)."""
    choices = hv.filter_choices(rows)
    models, horizons, dates, locations = (choices[k] for k in ("models", "horizons", "dates", "locations"))
    init_state({"hub_models": models, "hub_locations": []}, persist=True)
    _valid("hub_models", lambda v: isinstance(v, list) and set(v) <= set(models), models)
    _valid("hub_locations", lambda v: isinstance(v, list) and set(v) <= set(locations), [])
    c1, c2, c3, c4 = st.columns([3, 2, 3, 3])
    c1.multiselect("Models", models, key="hub_models", help="Models scored and drawn (one colour each).")
    horizon_range = None
    if len(horizons) > 1:
        init_state({"hub_horizons": (horizons[0], horizons[-1])}, persist=True)
        _valid("hub_horizons", lambda v: isinstance(v, tuple | list) and len(v) == 2 and v[0] in horizons
               and v[1] in horizons, (horizons[0], horizons[-1]))
        horizon_range = c2.select_slider("Horizons", horizons, key="hub_horizons",
                                         help="Forecast horizons kept (inclusive).")
    date_range = None
    if len(dates) > 1:
        init_state({"hub_dates": (dates[0], dates[-1])}, persist=True)
        _valid("hub_dates", lambda v: isinstance(v, tuple | list) and len(v) == 2 and v[0] in dates and v[1] in dates,
               (dates[0], dates[-1]))
        date_range = c3.select_slider("Target end dates", dates, key="hub_dates",
                                      format_func=lambda d: f"{pd.Timestamp(d):%Y-%m-%d}",
                                      help="Target end dates kept (inclusive).")
    c4.multiselect("Locations", locations, key="hub_locations", disabled=not locations,
                   help="Locations kept (none chosen: all).")
    return hv.HubFilters(models=tuple(st.session_state["hub_models"]) or None,
                         horizons=tuple(int(h) for h in horizon_range) if horizon_range else None,
                         dates=tuple(pd.Timestamp(d) for d in date_range) if date_range else None,
                         locations=tuple(st.session_state["hub_locations"]) or None)


class HubSelection(LinkedSelection):
    """The page's linked selection: each chart owns the names of its points; its events replace only those."""

    def on_select(self, chart_key: str, figure) -> Callable[[], None]:
        """``on_select`` callback of chart ``chart_key``: its part of the stored selection, the rest kept."""
        meta = trace_meta(figure)
        owned = {str(m.get("name")) for m in meta if m}
        key, context, prefix = self.key, self.context, self.prefix

        def callback() -> None:
            event = st.session_state.get(chart_key)
            note_event(st.session_state.setdefault(f"{prefix}_sync", {}), chart_key, event)
            stored = st.session_state.get(key)
            kept = stored.valid_for(context).bins if isinstance(stored, BinSelection) else {}
            new = BinSelection.from_event(event, meta, context).bins
            merged = {n: b for n, b in kept.items() if n not in owned} | {n: b for n, b in new.items() if b}
            st.session_state[key] = BinSelection(context, merged)

        return callback


def open_on_regression(token: str, mask: np.ndarray, label: str) -> None:
    """A button that opens the kept rows on the Regression page (as a slice focus it can clear)."""
    if st.button("Open these rows on the Regression page", key="hub_open_regression",
                 icon=":material/open_in_new:", disabled=not mask.any(),
                 help="The Regression page then diagnoses only these forecasts (PIT, stated-level tests, verdicts); "
                      "its “Show all rows” button returns to the whole hub."):
        set_slice_focus(token, label, mask)
        st.switch_page("pages/regression.py")


def show_model_table(table: pd.DataFrame, helps: dict[str, str]) -> None:
    """The per-model table: the model pinned, numbers with 4 significant digits, a help per column."""
    config = {"model": st.column_config.TextColumn(pinned=True),
              "verdict": st.column_config.TextColumn(help=helps.get("verdict")),
              "forecasts": st.column_config.NumberColumn(format="%d", help=helps.get("forecasts"))}
    config |= {c: st.column_config.NumberColumn(format="%.4g", help=helps.get(c)) for c in table.columns
               if c not in config}
    dataframe(table, hide_index=True, width="stretch", column_config=config)
