"""Streamlit plumbing of the "Resample by" control (the Regression, Classification and Forecast hub pages) and of
the Forecast hub page's per-model verdicts.

* :func:`resample_control` — which rows the intervals and tests resample together: ``auto`` (a hub's forecast date,
  else independent rows), independent rows, or a column's values; for a time-like column, moving blocks of
  consecutive values with a block length (persistent keys ``<prefix>_cluster``, ``<prefix>_moving``,
  ``<prefix>_block_length``).  Returns the diagnosis options (``cluster``, ``block_length``) that go into
  ``cc.diagnose`` and its cache keys;
* :func:`show_statement` — "Intervals and tests: …" under a metric table;
* :func:`hub_verdicts` / :func:`show_hub_verdicts` — the hub's kept rows diagnosed once per data token, rows and
  options (:func:`dashboard.cache.diagnose_cached`) and each model's verdict in words.
"""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

import calib_core as cc
from views import clustering as vc
from views import pages as views
from views.pages import md_escape

from .cache import diagnose_cached
from .state import init_state

__all__ = ["resample_control", "show_statement", "hub_verdicts", "show_hub_verdicts", "HUB_VERDICT_LINES"]

#: Up to this many models the hub page shows each model's verdict sentence as a line; more go in an expander.
HUB_VERDICT_LINES = 6


def resample_control(pset: cc.PredictionSet, prefix: str) -> dict[str, Any]:
    """The "Resample by" row: a choice of clustering, and for a time-like column moving blocks with their length.

    Returns ``{"cluster": "auto" | None | column, "block_length": None | k}`` (``views.clustering.cluster_options``).
    """
    choices = vc.resample_choices(pset)
    key, moving_key, length_key = f"{prefix}_cluster", f"{prefix}_moving", f"{prefix}_block_length"
    init_state({key: vc.AUTO, moving_key: False}, persist=True)
    if st.session_state[key] not in choices:  # another file: its columns
        st.session_state[key] = vc.AUTO
    c1, c2, c3, _ = st.columns([3, 3, 2, 2], vertical_alignment="bottom")
    choice = c1.selectbox(
        "Resample by", choices, key=key, format_func=lambda c: vc.resample_label(c, pset),
        help="Which rows the intervals and tests resample together. Rows that share a surprise (forecasts made on "
        "one date, one location's rows) are not independent: resampling them one by one makes intervals too "
        "narrow and tests reject too often. auto: a forecast hub's forecast date, else independent rows; a column: "
        "its values are drawn whole (cluster bootstrap).",
    )
    column = vc.chosen_column(pset, choice)
    if not vc.is_time_like(pset, column):
        return vc.cluster_options(choice)
    moving = c2.toggle(
        "moving blocks in time", key=moving_key,
        help="Draw runs of consecutive values of the time column instead of values drawn independently (moving-block "
        "bootstrap, Künsch 1989): for dates whose surprises are themselves correlated (a slow epidemic wave).",
    )
    g = max(vc.n_values(pset, column), 1)
    current = int(st.session_state.get(length_key) or 0)
    if st.session_state.get(f"{length_key}_column") != column or not 1 <= current <= g:
        st.session_state[length_key] = vc.default_block_length(pset, column)  # auto: round(G^(1/3)) for this column
        st.session_state[f"{length_key}_column"] = column
    init_state({length_key: st.session_state[length_key]}, persist=True)
    length = c3.number_input(
        "Block length", min_value=1, max_value=g, step=1, key=length_key, disabled=not moving,
        help=f"Consecutive values per block (default: round(G^(1/3)) of the G = {g:,} values).",
    )
    return vc.cluster_options(choice, bool(moving), int(length))


def show_statement(report: cc.Report) -> None:
    """ "Intervals and tests: …" (the report's clustering) as a caption; nothing when the report does not say."""
    statement = vc.metric_table_statement(report.options)
    if statement:
        st.caption(md_escape(statement) + ".")


def _mask_digest(mask: np.ndarray) -> str:
    """A digest of a row mask (its bits), for cache keys."""
    return hashlib.blake2b(np.packbits(np.asarray(mask, dtype=bool)).tobytes() + str(mask.size).encode(),
                           digest_size=12).hexdigest()


def hub_verdicts(pset: cc.PredictionSet, token: str, mask: np.ndarray,
                 options: dict[str, Any]) -> tuple[pd.DataFrame, cc.Report | None, str]:
    """The verdict of each model on the hub's kept rows (``mask``) with the page's clustering ``options``, cached on
    the data token, the rows and the options.  Returns (``views.clustering.hub_verdict_table``, the report, an error
    message or "")."""
    opts = {"n_resamples": views.DEFAULT_RESAMPLES, "n_simulations": views.DEFAULT_NULL_DRAWS, "seed": 0,
            "diagrams": False, **options}
    try:
        report = diagnose_cached(f"{token}|hub_verdicts|rows={_mask_digest(mask)}", pset.take(mask), **opts)
    except (cc.InputError, ValueError) as err:
        message = err.app_message() if isinstance(err, cc.InputError) else str(err)
        return vc.hub_verdict_table(pd.DataFrame(), {}), None, message
    return vc.hub_verdict_table(report.verdicts[report.verdicts["group"] == cc.ALL], report.options), report, ""


def show_hub_verdicts(table: pd.DataFrame, report: cc.Report | None = None) -> None:
    """Each model's verdict sentence (naming the clustering) as a line, or in an expander when there are many; the
    diagnosis's notes first (e.g. too few clusters for reliable tests: read before the verdicts, not after)."""
    for note in report.options.get("notes", []) if report is not None else []:
        st.caption(md_escape(note))
    if table.empty:
        return

    def lines() -> None:
        for model, sentence, outcome in zip(table["model"], table["sentence"], table["outcome"]):
            text = f"**{md_escape(model)}** — {md_escape(sentence)}"
            if outcome == "miscalibrated":
                st.warning(text, icon=":material/error:")
            elif outcome == "calibrated":
                st.success(text, icon=":material/check_circle:")
            else:
                st.info(text, icon=":material/info:")

    if len(table) <= HUB_VERDICT_LINES:
        lines()
    else:
        with st.expander(f"The verdict of each of the {len(table):,} models in words", icon=":material/gavel:"):
            lines()
