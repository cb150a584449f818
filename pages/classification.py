"""Classification page: Guo et al. (2017) reliability diagram linked to the confidence histogram, metric table
with CIs and perfect-calibration values, per-class reliability.

Selecting confidence bins in either chart (click, shift-click, box, lasso) highlights them in both, and shows
the per-class breakdown and the rows of those bins.  The selection is stored in ``st.session_state["cls_sel"]``
(a ``calib_core.selection.BinSelection`` tied to the data, filters and binning) by ``on_select`` callbacks.
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd
import streamlit as st

import calib_core as cc
from calib_core import plots
from calib_core.registry import metric_keys
from calib_core.selection import (
    BinSelection,
    class_breakdown,
    confidence_row_bins,
    describe_selection,
    note_event,
    note_reset,
    rows_in_bins,
    sync_chart,
)
from pages import common

_t0 = time.perf_counter()

st.title("Classification diagnostics")
pset, token, name = common.require_data("classification", common.DEFAULT_CLASSIFICATION_EXAMPLE)
st.markdown(common.data_caption(pset, name))

rows, models, group, (n_resamples, n_sims) = common.filter_controls(pset, "cls")
binary = (not pset.top_label_only) and pset.probs is not None and pset.probs.shape[1] == 2
common.init_state({"cls_n_bins": 15, "cls_strategy": "equal width", "cls_target": "top label",
                   "cls_hist_scale": "linear"})
c1, c2, c3, _ = st.columns([3, 2.5, 2.5, 1])
n_bins = c1.slider("Confidence bins", 5, 30, key="cls_n_bins", help="Guo et al. use 15 equal-width bins.")
strategy_label = c2.segmented_control(
    "Bins", ["equal width", "equal mass"], key="cls_strategy",
    help="Equal-width ((m−1)/M, m/M] bins (Guo et al.), or equal-mass bins at the quantiles of the confidence.",
)
strategy = "quantile" if strategy_label == "equal mass" else "uniform"
target_label = c3.segmented_control(
    "Binary semantics", ["top label", "positive class"], key="cls_target", disabled=not binary,
    help="Top label: confidence max(p, 1 − p) against accuracy (Guo). Positive class: P(y = 1) against the "
    "frequency of y = 1 (scikit-learn / netcal).",
)
target = "positive" if (binary and target_label == "positive class") else "top_label"

options = {"n_bins": int(n_bins), "strategy": strategy, "n_resamples": int(n_resamples), "n_simulations": int(n_sims),
           "seed": 0}
sub = common.subset(pset, rows, models, group)
base_key = f"{token}|rows={rows}|models={','.join(models)}|group={group}"
try:
    report = common.diagnose_cached(base_key, sub, **options)
except (cc.InputError, ValueError) as err:
    st.error(f"Could not diagnose these rows: {common.md_escape(err)}")
    st.stop()
if report.metrics.empty:
    st.warning("Too few rows to diagnose with these filters.")
    st.stop()
level = float(report.options.get("level", 0.95))
colors = plots.model_colors(pset.models())
shown = [m for m in report.models if (m, cc.ALL) in report.diagrams]
classes = list(pset.classes) if pset.classes is not None else None
k = len(classes) if classes is not None else (pset.probs.shape[1] if pset.probs is not None else 0)

if pset.top_label_only:
    semantics = ("**Top-label file**: only the predicted class and its confidence are known, so the diagram bins "
                 "the confidence against accuracy; NLL, Brier and per-class views need full probability vectors.")
elif target == "positive":
    positive = classes[1] if classes else "1"
    semantics = (f"**Positive-class reliability** (binary): x = predicted P(y = {positive!s}), y = observed "
                 f"frequency of {positive!s} in the bin (scikit-learn / netcal convention); the table's "
                 "“ECE (positive class)” uses these bins. The top-label ECE bins max(p, 1 − p) instead.")
elif binary:
    semantics = ("**Top-label reliability** (binary): confidence = max(p, 1 − p) against accuracy (Guo et al.); "
                 "switch *Binary semantics* to see P(positive) against the frequency of the positive class.")
else:
    semantics = (f"**Top-label reliability** ({k} classes): confidence = max_k p_k of each row against the "
                 "accuracy of the predicted class (Guo et al. 2017).")
st.markdown(semantics)
table_name = "reliability_positive" if target == "positive" else "reliability"
rel_tables = {m: report.diagrams[(m, cc.ALL)][table_name] for m in shown}

# ------------------------------------------------------------------------------------- selection
context = (token, rows, group, int(n_bins), strategy, target)
stored = st.session_state.get("cls_sel")
selection = stored.valid_for(context) if isinstance(stored, BinSelection) else BinSelection(context, {})
selection = BinSelection(context, {m: b for m, b in selection.bins.items() if m in shown and b})
st.session_state["cls_sel"] = selection

sync = st.session_state.setdefault("cls_sync", {})  # which selection is drawn into each chart (selection.sync_chart)
log_hist = st.session_state["cls_hist_scale"] == "log"
fig_key = f"{base_key}|{sorted(options.items())}|target={target}|epoch={sync.get('epoch', 0)}"


def _linked_figure(chart_key: str, drawn: dict):
    """The reliability diagram or the confidence histogram with ``drawn`` bins marked."""
    if chart_key == "cls_rel_chart":
        fig = plots.reliability_figure(rel_tables, colors=colors, target=target)
    else:
        fig = plots.confidence_histogram_figure(rel_tables, colors=colors, target=target)
        if log_hist:  # a log axis makes sparse bins visible (and clickable)
            ticks = [0.01, 0.1, 1, 10, 100]
            fig.update_layout(yaxis={"type": "log", "range": None, "autorange": True,  # not yaxis2 (the lines)
                                     "tickvals": ticks, "ticktext": [f"{t:g}" for t in ticks]})
    fig.update_layout(meta={"selection_epoch": sync.get("epoch", 0)})  # "Clear" gives every chart a new identity
    return plots.mark_selected(fig, drawn)


linked = {}
for chart_key in ("cls_rel_chart", "cls_hist_chart"):
    base = f"{fig_key}|{chart_key}" + (f"|log={log_hist}" if chart_key == "cls_hist_chart" else "")
    drawn = sync_chart(sync, chart_key, base, selection.bins)
    linked[chart_key] = common.figure(f"{base}|drawn={sorted(drawn.items())}",
                                      lambda k=chart_key, d=drawn: _linked_figure(k, d))
rel_fig, hist_fig = linked["cls_rel_chart"], linked["cls_hist_chart"]
metas = {
    "cls_rel_chart": [dict(d.meta) if d.meta else None for d in rel_fig.data],
    "cls_hist_chart": [dict(d.meta) if d.meta else None for d in hist_fig.data],
}


def _on_select(chart_key: str) -> None:
    """Copy a chart's Plotly selection (bins) into ``cls_sel``; the other chart is redrawn from it."""
    note_event(st.session_state["cls_sync"], chart_key)
    st.session_state["cls_sel"] = BinSelection.from_event(st.session_state.get(chart_key), metas[chart_key], context)


def _clear() -> None:
    note_reset(st.session_state["cls_sync"])
    st.session_state["cls_sel"] = BinSelection(context, {})


# row-level values of the bins the diagrams use
if sub.top_label_only:
    values = sub.confidence
    pred = sub.point.astype(np.int64)
elif target == "positive":
    values = sub.probs[:, 1]
    pred = sub.probs.argmax(axis=1)
else:
    values = sub.probs.max(axis=1)
    pred = sub.probs.argmax(axis=1)
conf = sub.confidence if sub.top_label_only else sub.probs.max(axis=1)

st.subheader("Reliability diagram ↔ confidence histogram")
st.caption(
    "Click a bin in either chart (shift-click adds, or drag a box) to highlight it in both and list its rows "
    "and their per-class breakdown below."
)
info, clear_col = st.columns([5, 1], vertical_alignment="center")
sel_mask = None
if selection.empty:
    info.markdown("**No bins selected** — click bars to inspect them.")
else:
    row_bins = confidence_row_bins(values, int(n_bins), strategy, group=sub.model)
    sel_mask = rows_in_bins(row_bins, selection.bins, group=sub.model)
    info.markdown(f"**{describe_selection(selection.bins, int(sel_mask.sum()), 'confidence bins')}**")
clear_col.button(
    "Clear selection", key="cls_clear", on_click=_clear, disabled=selection.empty, icon=":material/deselect:",
    width="stretch",
)
left, right = st.columns(2)
with left:
    common.chart(rel_fig, "cls_rel_chart", on_select=lambda: _on_select("cls_rel_chart"),
                 selection_mode=("points", "box", "lasso"))
    st.caption(
        "Bars: accuracy per bin with 90% Wilson intervals; hatched: the gap to the bin's mean confidence (red = "
        "over-confident). ECE is the count-weighted mean of the gaps."
    )
with right:
    common.chart(hist_fig, "cls_hist_chart", on_select=lambda: _on_select("cls_hist_chart"),
                 selection_mode=("points", "box", "lasso"))
    cap, scale = st.columns([3, 2], vertical_alignment="center")
    cap.caption("Share of samples per bin; dashed = average confidence, dotted = accuracy (Guo et al. Fig. 1).")
    scale.segmented_control("y axis", ["linear", "log"], key="cls_hist_scale", label_visibility="collapsed",
                            help="y axis of the histogram: a log axis makes sparse bins visible (and clickable).")

if sel_mask is not None:
    if not sel_mask.any():
        st.warning("The selected bins hold no rows with the current filters.")
    else:
        b1, b2 = st.columns([2, 3])
        with b1:
            st.markdown("**Per-class breakdown of the selected rows** (by predicted class)")
            parts = []
            models_sel = [None] if sub.model is None else [m for m in shown if m in selection.bins]
            for m in models_sel:  # loop over models, not rows
                mm = sel_mask if m is None else sel_mask & (sub.model == m)
                t = class_breakdown(sub.labels[mm], pred[mm], conf[mm], max(k, 1), classes)
                if m is not None and len(models_sel) > 1:
                    t.insert(0, "model", m)
                parts.append(t)
            st.dataframe(
                pd.concat(parts, ignore_index=True), hide_index=True, width="stretch",
                column_config={
                    "predicted": st.column_config.NumberColumn(help="rows predicted as this class"),
                    "accuracy": st.column_config.NumberColumn(format="%.3f", help="share of them that are right"),
                    "mean confidence": st.column_config.NumberColumn(format="%.3f"),
                    "gap": st.column_config.NumberColumn(format="%+.3f", help="mean confidence − accuracy"),
                    "true": st.column_config.NumberColumn(help="rows whose label is this class"),
                },
            )
        with b2:
            idx = np.flatnonzero(sel_mask)
            st.markdown(f"**Rows in the selected bins** (first {min(idx.size, common.MAX_TABLE_ROWS)} of {idx.size:,})")
            idx = idx[: common.MAX_TABLE_ROWS]
            names = np.asarray(classes if classes is not None else [str(i) for i in range(max(k, 1))], dtype=object)
            frame = pd.DataFrame({"row": sub.row_number[idx]})
            if sub.model is not None:
                frame["model"] = sub.model[idx]
            frame["label"] = names[sub.labels[idx]]
            frame["predicted"] = names[pred[idx]]
            frame["confidence"] = conf[idx]
            if target == "positive":
                frame[f"P({names[1]})"] = values[idx]
            frame["correct"] = sub.labels[idx] == pred[idx]
            st.dataframe(frame, hide_index=True, width="stretch", height=300,
                         column_config={"confidence": st.column_config.NumberColumn(format="%.4f")})

# ------------------------------------------------------------------------------------- metrics
st.subheader("Metrics")
st.caption(
    f"Value with its {level:.0%} bootstrap CI and the value a perfectly calibrated classifier with the same "
    "predicted probabilities gets at this N (labels simulated from them). Formulas and papers: see the Help page."
)
common.show_metric_table(common.metric_table(report.metrics, level, keys=metric_keys("classification")))
for note in report.options.get("notes", []):
    st.caption(note)
per_class_fig = None

# ------------------------------------------------------------------------------------- per class
if not pset.top_label_only:
    st.subheader("Per-class reliability")
    per_model = st.selectbox("Model", shown, key="cls_per_class_model") if len(shown) > 1 else shown[0]
    per_class = report.diagrams[(per_model, cc.ALL)].get("per_class")
    if per_class is not None:
        per_class_fig = common.figure(
            f"{base_key}|{sorted(options.items())}|per_class={per_model}",
            lambda: plots.per_class_reliability_figure(per_class, class_names=classes, color=colors[per_model]),
        )
        common.chart(per_class_fig, "cls_per_class")
        st.caption(
            "One-vs-rest reliability of every class: observed frequency of the class against the mean predicted "
            "probability per bin (marker size grows with the bin count; sparse bins are noisy)."
        )
        summary = plots.per_class_summary(per_class, classes).drop(columns="class_code")
        st.dataframe(
            summary.set_index("class").T.rename_axis("class →").reset_index() if len(summary) <= 12 else summary,
            hide_index=True, width="stretch",
            column_config={c: st.column_config.NumberColumn(format="%.4f") for c in summary["class"]}
            if len(summary) <= 12 else
            {c: st.column_config.NumberColumn(format="%.4f") for c in
             ("frequency", "mean predicted probability", "one-vs-rest ECE")},
        )
        st.caption("Class-wise ECE (Kull et al. 2019) is the mean of the one-vs-rest ECEs.")

export_figures = {"Reliability diagram": rel_fig, "Confidence histogram": hist_fig}
if per_class_fig is not None:
    export_figures["Per-class reliability"] = per_class_fig
common.export_row(
    "classification", title=f"Classification diagnostics — {name}", report=report, figures=export_figures,
    metrics=report.metrics, pset=sub, notes=[semantics.replace("**", ""),
                                             f"Filters: rows = {rows}, models = {', '.join(models)}, group = {group}."],
)

common.record_run_time(_t0, "classification")
