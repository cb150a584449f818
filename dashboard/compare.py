"""Streamlit plumbing of the Compare models page: its controls, the cached comparison and the way to a model's
diagnosis.

* :func:`controls` — baseline, score, what to resample by and how (persistent keys ``cmp_*``, reset when the loaded
  data no longer offer the stored value);
* :func:`comparison` — ``cc.compare_models`` once per (data token, options), kept in :data:`dashboard.cache.RESULTS`;
* :func:`skill_chart` — the skill plot, a click on a model's point opening its diagnosis;
* :func:`open_diagnosis` — the "Open a model's diagnosis" select and button: the Regression (or Classification)
  page opens with that model chosen in its Models control (``reg_models`` / ``cls_models``);
* :func:`show_table` — the table with one help per column.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

import calib_core as cc
from views import compare as cv
from views.selection import selected_bins, trace_meta

from .cache import result_cached
from .display import chart, dataframe, md_escape
from .state import HUB_EXAMPLE, init_state, persist, set_example

__all__ = ["empty_state", "controls", "comparison", "skill_chart", "open_diagnosis", "opened_by_click", "show_table"]

_CLICKED = "cmp_clicked"  # session key: the model whose skill-plot point was clicked (read once by the page)


def empty_state(reason: str, key: str = "cmp_load_example") -> None:
    """Why the page shows nothing (``reason``: the page's own Markdown, no file text), a link to the Data page and a
    button that loads the built-in example hub (4 models) and reruns; stops the page.  (The Forecast hub page's
    empty state has the same three parts and could call this with its own text and key.)"""
    st.info(reason, icon=":material/compare_arrows:")
    st.page_link("pages/data.py", label="Go to the Data page", icon=":material/upload_file:")
    if st.button("Load the example hub (4 synthetic models: calibrated, too narrow, biased, too wide)", key=key,
                 icon=":material/science:"):
        set_example(HUB_EXAMPLE)
        st.rerun()
    st.stop()


def _valid(key: str, choices: list, default: Any) -> None:
    """Reset a persistent control whose stored value the loaded data no longer offer (other data loaded)."""
    if st.session_state.get(key) not in choices:
        st.session_state[key] = default


def controls(pset: cc.PredictionSet) -> tuple[str, str, str, Any]:
    """The row of controls: baseline, score, "Resample by" and "Blocks"; returns their values."""
    models = pset.models()
    scores = cv.score_choices(pset)
    clusters = cv.cluster_choices(pset)
    init_state({"cmp_baseline": cv.default_baseline(models), "cmp_score": scores[0], "cmp_cluster": "auto",
                "cmp_block": "whole"}, persist=True)
    _valid("cmp_baseline", models, cv.default_baseline(models))
    _valid("cmp_score", scores, scores[0])
    _valid("cmp_cluster", clusters, "auto")
    _valid("cmp_block", list(cv.BLOCK_CHOICES), "whole")
    c1, c2, c3, c4 = st.columns([3, 2, 3, 2])
    c1.selectbox("Baseline", models, key="cmp_baseline",
                 help="Every model's score is divided by this model's: below 1 is better than the baseline. A model "
                      "named like a baseline (baseline, …-baseline, naive) is chosen first.")
    c2.selectbox("Score", scores, key="cmp_score", format_func=cv.score_label, disabled=len(scores) < 2,
                 help="A proper score, lower is better: WIS for quantile forecasts (Bracher et al. 2021), CRPS or the "
                      "log score for Gaussians and ensembles, Brier or log score for probabilities.")
    c3.selectbox("Resample by", clusters, key="cmp_cluster", format_func=lambda c: cv.cluster_label(c, pset),
                 help="What the bootstrap intervals, the tests and the model confidence set resample. Forecasts made "
                      "on one date share that date's surprise: auto resamples whole forecast rounds (a hub's "
                      "reference date); independent rows treats every forecast unit as its own draw (too narrow "
                      "intervals when rows are dependent).")
    independent = st.session_state["cmp_cluster"] == "none" or (
        st.session_state["cmp_cluster"] == "auto" and cv.auto_cluster_column(pset) is None)
    c4.selectbox("Blocks", list(cv.BLOCK_CHOICES), key="cmp_block", format_func=cv.block_label,
                 disabled=independent,
                 help="Whole clusters drawn independently, or moving blocks of consecutive clusters (Künsch 1989) "
                      "when neighbouring rounds are dependent too.")
    block = None if independent else cv.block_value(st.session_state["cmp_block"])
    return (st.session_state["cmp_baseline"], st.session_state["cmp_score"], st.session_state["cmp_cluster"], block)


def comparison(pset: cc.PredictionSet, token: str, baseline: str, score: str, cluster: str, block: Any) -> Any:
    """``cc.compare_models`` of the loaded data with these options, cached on the data token and the options; an
    input the core refuses shows its message and stops the page."""
    key = ("compare", token, baseline, score, cluster, block)
    try:
        return result_cached(key, lambda: cc.compare_models(
            pset, baseline, score=score, cluster=cluster, block_length=block, alpha=cv.ALPHA, n_boot=1000, seed=0),
            spinner="Comparing the models (bootstrap intervals, tests, model confidence set)…")
    except (cc.InputError, ValueError) as err:
        st.error(f"Could not compare these models: {md_escape(err)}")
        st.stop()


def _open(pset: cc.PredictionSet, model: str) -> None:
    page, key = cv.diagnosis_page(pset)
    st.session_state[key] = [str(model)]
    persist(key)  # kept across the page switch (app.py re-assigns persistent keys before the page runs)
    st.switch_page(page)


def skill_chart(fig: Any, models: list[str], key: str = "cmp_skill_chart") -> None:
    """The skill plot; a click on one model's point opens its diagnosis (on the next run, :func:`opened_by_click`).
    ``models``: the model of each ``customdata`` code (the table's rows)."""
    meta = trace_meta(fig)

    def on_select() -> None:
        picked = selected_bins(st.session_state.get(key), meta).get("model", ())
        if len(picked) == 1 and 0 <= picked[0] < len(models):
            st.session_state[_CLICKED] = models[picked[0]]

    chart(fig, key, on_select=on_select, selection_mode="points")


def opened_by_click(pset: cc.PredictionSet) -> None:
    """Open the diagnosis of the model whose point was just clicked (no-op without a click)."""
    model = st.session_state.pop(_CLICKED, None)
    if model is not None and model in pset.models():
        _open(pset, model)


def open_diagnosis(pset: cc.PredictionSet, order: list[str]) -> None:
    """"Open a model's diagnosis": a select of the models (best first) and a button to its diagnosis page."""
    page, _ = cv.diagnosis_page(pset)
    where = "Classification" if page.endswith("classification.py") else "Regression"
    _valid("cmp_open_model", order, order[0])
    c1, c2 = st.columns([3, 2], vertical_alignment="bottom")
    c1.selectbox("Open a model's diagnosis", order, key="cmp_open_model",
                 help=f"The {where} page opens with this model chosen: its PIT, calibration tests and verdicts.")
    if c2.button(f"Open on the {where} page", key="cmp_open_button", icon=":material/open_in_new:"):
        _open(pset, st.session_state["cmp_open_model"])


def show_table(table: pd.DataFrame, score: str) -> None:
    """The comparison table: the model pinned, a help per column."""
    label = cv.score_label(score)
    helps = {
        "units": "Forecast units this model forecast.",
        f"mean {label}": f"Mean {label} on the units every model forecasts (lower is better).",
        f"relative {label}": f"θ_model / θ_baseline, θ the geometric mean of the model's {label} ratios to every "
                             "model (Cramer et al. 2022); below 1: better than the baseline.",
        f"{1 - cv.ALPHA:.0%} interval": "Bootstrap interval of the relative score, resampling as chosen above.",
        "p (Holm)": "Diebold–Mariano test of equal mean score against the baseline (Harvey–Leybourne–Newbold "
                    "correction), Holm-adjusted over the models.",
        "vs baseline": f"better / worse: p (Holm) < {cv.ALPHA:g}; otherwise not distinguishable.",
        "in MCS": f"In the {1 - cv.ALPHA:.0%} model confidence set (Hansen, Lunde & Nason 2011): the models that "
                  "cannot be told apart from the best.",
        "MCS p": "The model's MCS p-value: it leaves the set at levels above this.",
    }
    config: dict[str, Any] = {"model": st.column_config.TextColumn(pinned=True)}
    config |= {c: st.column_config.Column(help=h) for c, h in helps.items() if c in table.columns}
    config[f"mean {label}"] = st.column_config.NumberColumn(format="%.4g", help=helps[f"mean {label}"])
    dataframe(table, hide_index=True, width="stretch", column_config=config)
