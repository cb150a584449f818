"""Streamlit plumbing of the Classification page's clinical parts: the prevalence control (binary files) and the
smoothed (loess) calibration curve with its band among the reliability diagrams.

* :func:`prevalence_control` — a checkbox and a number (persistent keys ``<prefix>_prevalence_on``,
  ``<prefix>_prevalence``); returns the diagnosis option ``{"prevalence": P}`` or ``{}``;
* :func:`as_diagnosed` — the rows with the probabilities the diagnosis read (adjusted to the prevalence), so the
  page's other lenses (CORP, the rows of selected bins, thresholds) agree with the metrics and diagrams;
* :func:`show_prevalence_statement` — what the adjustment did, in numbers (``views.clinical``);
* :func:`smoothed_calibration_chart` — the chart and its caption; returns the figure (for the HTML export).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any

import streamlit as st

import calib_core as cc
from calib_core.diagnosis.classification_clinical import apply_prevalence
from calib_core.plots.background import with_background
from calib_core.plots.clinical import smoothed_calibration_figure
from views import clinical as vc

from .cache import content_key, figure
from .display import chart
from .redraw_cache import keyed_digest, prepared_figure
from .state import init_state

__all__ = ["prevalence_control", "as_diagnosed", "show_prevalence_statement", "smoothed_calibration_chart"]


def prevalence_control(pset: cc.PredictionSet, prefix: str) -> dict[str, float]:
    """The prevalence row of a binary file (nothing for other files): ``{"prevalence": P}`` when switched on."""
    share = vc.file_prevalence(pset)
    if share is None:
        return {}
    on_key, value_key = f"{prefix}_prevalence_on", f"{prefix}_prevalence"
    default = min(max(round(share, 3), 0.001), 0.999)
    init_state({on_key: False, value_key: default}, persist=True)
    c1, c2, _ = st.columns([3, 2, 5], vertical_alignment="bottom")
    on = c1.checkbox("Prevalence adjustment", key=on_key, help=vc.PREVALENCE_HELP)
    value = c2.number_input(f"Prevalence (this file: {share:.3f})", min_value=0.001, max_value=0.999, step=0.01,
                            format="%.3f", key=value_key, disabled=not on, help=vc.PREVALENCE_HELP)
    return vc.prevalence_options(bool(on), float(value))


def as_diagnosed(pset: cc.PredictionSet, key: str, options: Mapping[str, Any]) -> tuple[cc.PredictionSet, str]:
    """The rows and their cache key as the diagnosis saw them: with ``prevalence`` in ``options`` the probabilities
    re-expressed at the file's share of positives (``apply_prevalence``, the diagnosis's own function) and the key
    extended by the prevalence; unchanged otherwise."""
    prevalence = options.get("prevalence")
    if prevalence is None:
        return pset, key
    adjusted, _ = apply_prevalence(pset, prevalence)
    return adjusted, f"{key}|prevalence={float(prevalence)!r}"


def show_prevalence_statement(options: Mapping[str, Any], pset: cc.PredictionSet) -> None:
    """The adjustment in numbers under the controls (nothing when it is off)."""
    text = vc.prevalence_statement(options.get("prevalence"), vc.file_prevalence(pset))
    if text:
        st.info(text, icon=":material/balance:")


def smoothed_calibration_chart(report: cc.Report, models: Sequence[str], colors: Mapping[str, str], target: str,
                               behind: Callable[[str], Any], key: str, *, digest_key: Hashable | None = None) -> Any:
    """The loess calibration curve of every model (with the all-rows curves faintly behind a slice), its caption;
    the figure, or None when the report has no such table.  ``digest_key``: what determines the tables drawn (the
    diagnosis key and its bins-free options, the slice): their digest is made once per key, not on every rerun
    (``dashboard.redraw_cache.keyed_digest``), and the chart is sent from its wire dict made once."""
    tables = {m: report.diagrams[(m, cc.ALL)] for m in models if (m, cc.ALL) in report.diagrams}
    name = next((vc.smoothed_table_name(t) for t in tables.values() if vc.smoothed_table_name(t)), None)
    if name is None:
        return None
    shown = {m: t[name] for m, t in tables.items() if name in t}
    faint = behind(name)
    parts = lambda: (shown, {m: t.attrs for m, t in shown.items()}, colors, faint)  # noqa: E731
    digest = content_key(*parts()) if digest_key is None else keyed_digest(("smoothed", digest_key, name), parts)
    fig = figure(f"smoothed|{digest}", lambda: with_background(smoothed_calibration_figure, shown, faint,
                                                                colors=colors))
    chart(prepared_figure(fig), key)
    st.caption(vc.smoothed_caption(next(iter(shown.values())), target))
    return fig
