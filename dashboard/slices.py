"""The slice focus: a slice chosen on the Slice explorer page restricts the Regression and Classification pages.

``st.session_state["slice_focus"]`` holds ``{"token", "label", "mask", "n"}``: the data token it belongs to, the
slice's name, its boolean row mask over the loaded data and its rows.  :func:`apply_slice_focus` (called by a
diagnosis page right after it gets the data) restricts the data to the slice and changes the data token, so every
cache key, figure and linked selection of the page belongs to the slice; it shows which slice and a button that
returns to all rows.  A focus of other data (another file loaded) is ignored.

:func:`slice_background` gives the page the diagnosis of the whole data (same filters and options, no resamples or
null draws: only its values and diagram tables are drawn) to draw faintly behind the slice's diagrams
(``calib_core.plots.with_background``) and beside its metrics: computed only while a slice is chosen, once per
data, filters and options, and kept as one shared read-only object so that a redraw only looks it up.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

import calib_core as cc
from views import pages as views

from .cache import RESULTS, diagnose_cached, memoized
from .display import md_escape

FOCUS_KEY = "slice_focus"


def set_slice_focus(token: str, label: str, mask: np.ndarray) -> None:
    """Restrict the diagnosis pages to the rows of ``mask`` (a slice named ``label`` of the data ``token``)."""
    mask = np.asarray(mask, dtype=bool)
    st.session_state[FOCUS_KEY] = {"token": token, "label": str(label), "mask": mask, "n": int(mask.sum())}


def clear_slice_focus() -> None:
    """Back to all rows (a button callback)."""
    st.session_state.pop(FOCUS_KEY, None)


def slice_focus(token: str) -> dict | None:
    """The focus of the data ``token``, or None."""
    focus = st.session_state.get(FOCUS_KEY)
    return focus if isinstance(focus, dict) and focus.get("token") == token else None


def apply_slice_focus(pset: cc.PredictionSet, token: str, prefix: str) -> tuple[cc.PredictionSet, str]:
    """``(pset, token)`` restricted to the focused slice, with a line saying so and a "Show all rows" button
    (key ``{prefix}_slice_clear``); unchanged when no slice is focused."""
    focus = slice_focus(token)
    if focus is None or focus["mask"].shape[0] != pset.n_rows:
        return pset, token
    info, back = st.columns([5, 1], vertical_alignment="center")
    info.info(f"Restricted to the slice **{md_escape(focus['label'])}** ({focus['n']:,} of {pset.n_rows:,} rows), "
              "chosen on the Slice explorer: every diagram and table below uses these rows only.",
              icon=":material/filter_alt:")
    back.button("Show all rows", key=f"{prefix}_slice_clear", on_click=clear_slice_focus,
                icon=":material/filter_alt_off:", width="stretch")
    return pset.take(focus["mask"]), f"{token}|slice={focus['label']}"


@dataclass(frozen=True)
class SliceBackground:
    """The whole data behind a chosen slice: ``report`` (its diagnosis, shared: never mutate it), ``pset`` (its
    rows after the page's filters, for the diagrams the report does not hold), ``base_key`` (the data and filters:
    the page's own cache key of these rows) and ``key`` (with the options: part of the cache key of every figure
    drawn with it)."""

    report: cc.Report
    key: str
    base_key: str
    pset: cc.PredictionSet

    def tables(self, name: str, models: Iterable[str] | None = None) -> dict[str, pd.DataFrame]:
        """Diagram tables ``name`` of all rows (``views.pages.diagram_tables``)."""
        return views.diagram_tables(self.report, name, models)

    def tables_of(self, models: Iterable[str]) -> dict[str, dict[str, pd.DataFrame]]:
        """{model: every diagram table of all rows} of the ``models`` that have diagrams."""
        return {m: self.report.diagrams[(m, cc.ALL)] for m in models if (m, cc.ALL) in self.report.diagrams}

    @property
    def metrics(self) -> pd.DataFrame:
        """The all-rows metric frame (``Report.metrics``)."""
        return self.report.metrics


def slice_background(pset: cc.PredictionSet, token: str, rows: str, models: Iterable[str], group: str,
                     **options: Any) -> SliceBackground | None:
    """The diagnosis of the whole data ``pset`` (token ``token``, before :func:`apply_slice_focus`) with the
    page's filters and options but without resamples and null draws (its values and diagram tables are those of
    the full diagnosis), while a slice of it is chosen; None otherwise, or when those rows cannot be diagnosed.
    Cached: the first call with these options diagnoses, later redraws only look it up (no copy)."""
    focus = slice_focus(token)
    if focus is None or focus["mask"].shape[0] != pset.n_rows:
        return None
    models = tuple(models)
    key = f"{token}|rows={rows}|models={','.join(models)}|group={group}"
    # values and diagram tables only: the faint traces draw no band or error bar and the 'all rows' column no
    # interval or p-value, and these do not depend on the resamples or null draws (about 0.07 s instead of ~1 s of
    # CPU at 10⁵ rows)
    options = {**options, "n_resamples": 0, "n_simulations": 0}
    full_key = f"{key}|{json.dumps(options, sort_keys=True)}"

    def compute() -> SliceBackground | str:
        try:
            sub = views.subset(pset, rows, models, group)
            report = diagnose_cached(key, sub, **options)
        except (cc.InputError, ValueError) as exc:
            return f"no background: {exc}"
        return SliceBackground(report, full_key, key, sub)

    found = memoized(RESULTS, ("slice_background", full_key), compute, copied=False,
                     spinner="Diagnosing all rows (drawn faintly behind the slice)…")
    return found if isinstance(found, SliceBackground) and not found.report.metrics.empty else None


def slice_list_columns(table: pd.DataFrame) -> dict[str, Any]:
    """The column configuration of the explorer's worst-first slice list (the in-memory page and the Parquet
    summary page show the same table, :func:`views.slices.slice_display_table`): statistics to three
    decimals, ``evidence`` = −log₁₀ of the slice's combined p (finite however small p is: the tails are computed in
    log space; shown with thousands separators, 5,321.4 = p ≈ 10⁻⁵³²¹), ``effect`` (the tie-break), the Holm
    ``adjusted p`` in scientific notation, widths that keep the list inside the 1440 px main column."""
    fmt: dict[str, Any] = {c: st.column_config.NumberColumn(format="%.3f", width=62) for c in table.columns
                           if c not in ("rank", "slice", "n", "verdict", "adjusted p")}
    fmt["rank"] = st.column_config.NumberColumn(width=40)
    fmt["n"] = st.column_config.NumberColumn(format="localized", width=70)
    fmt["slice"] = st.column_config.TextColumn(width=200)
    fmt["adjusted p"] = st.column_config.NumberColumn(format="%.2e", width=75)
    fmt["evidence"] = st.column_config.NumberColumn(
        format="localized", width=70,
        help="−log₁₀ of the slice's combined p-value, computed in log space so it stays finite far below the "
             "smallest float (5,321.4 means p ≈ 10⁻⁵³²¹); the list is sorted by it")
    if "effect" in table.columns:
        fmt["effect"] = st.column_config.NumberColumn(
            format="%.3f", width=62,
            help="Size of the deciding test's deviation in per-row null standard deviations (independent of n); "
                 "breaks ties in evidence")
    fmt["verdict"] = st.column_config.TextColumn(width=150, help="Miscalibrated when the adjusted p ≤ 0.05; in "
                                                 "brackets the slice's test with the smallest p-value")
    return fmt
