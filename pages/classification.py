"""Classification page: Guo et al. (2017) reliability diagram linked to the confidence histogram, metric table
with CIs and perfect-calibration values, per-class reliability.

Selecting confidence bins in either chart (click, shift-click, box, lasso) highlights them in both, and shows
the per-class breakdown and the rows of those bins.  The selection is kept by ``dashboard.LinkedSelection`` in
``st.session_state["cls_sel"]`` (a ``views.selection.BinSelection`` tied to the data, filters and binning).
"""

from __future__ import annotations

import time

import streamlit as st

import calib_core as cc
import dashboard as ui
from calib_core import plots
from calib_core.calibrators.registry import metric_keys
from calib_core.plots import corp as corp_plots
from calib_core.plots import ordinal as ordinal_plots
from dashboard import classification_redraw as cls_redraw
from dashboard import clinical as clin
from dashboard import clustering as clu
from dashboard import redraw_cache as rc  # figures sent as wire dicts made once
from dashboard import summary as summ
from dashboard import summary_pages
from views import pages as views
from views.selection import describe_selection

_t0 = time.perf_counter()

st.title("Classification diagnostics")
loaded_summary = summ.current_summary("classification")
if loaded_summary is not None:  # a summary instead of rows: every diagram it can give, linked through its bins
    summary_pages.classification_page(*loaded_summary)
    ui.record_run_time(_t0, "classification")
    st.stop()
pset, token, name = ui.require_data("classification", ui.DEFAULT_CLASSIFICATION_EXAMPLE)
whole = pset, token  # drawn faintly behind a slice chosen on the Slice explorer
pset, token = ui.apply_slice_focus(pset, token, "cls")  # a slice chosen on the Slice explorer
st.markdown(ui.data_caption(pset, name))

rows, models, group, (n_resamples, n_sims) = ui.filter_controls(pset, "cls")
REL_KINDS = ("binned (Guo et al.)", "CORP (PAV)")
binary = views.is_binary(pset)
ui.init_state({"cls_n_bins": 15, "cls_strategy": "equal width", "cls_target": "top label",
               "cls_hist_scale": "linear", "cls_rel_kind": "binned (Guo et al.)", "cls_corp_band": "consistency",
               "cls_tce": False}, persist=True)
ui.persist("cls_per_class_model")
c1, c2, c3, c4 = st.columns([3, 2.5, 2.5, 1])
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

use_tce = c4.checkbox("TCE", key="cls_tce",
                      help="Also report TCE, the share of predictions an exact binomial test of their (equal-mass) "
                      "bin rejects (Matsubara et al. 2023), with its value under perfect calibration.")
options = {"n_bins": int(n_bins), "strategy": strategy, "n_resamples": int(n_resamples), "n_simulations": int(n_sims),
           "seed": 0, "tce": bool(use_tce), **clu.resample_control(pset, "cls")}  # rows resampled together
options.update(clin.prevalence_control(pset, "cls"))  # binary files: {"prevalence": P} when switched on
time_range = ui.over_time(pset, token, rows, models, group, "cls", whole)  # None: no time column or range
sub, base_key, report = ui.diagnose_rows(pset, token, rows, models, group, restrict=time_range, **options)
diagnosed = base_key, sub  # the other binning of these rows is prepared in idle time (below)
sub, base_key = clin.as_diagnosed(sub, base_key, options)  # the probabilities the diagnosis read (prevalence)
faint = ui.slice_background(*whole, rows, models, group, **options)  # all rows, while a slice is chosen
clin.show_prevalence_statement(options, sub)
if report.metrics.empty:
    for note in report.options.get("notes", []):  # why (e.g. a group of one row)
        st.caption(ui.md_escape(note))
    st.warning("Too few rows to diagnose with these filters.")
    st.stop()
cls_redraw.prefetch_other_binning(*diagnosed, options)  # equal width <-> equal mass: a two-option control
level = float(report.options.get("level", 0.95))
colors = plots.model_colors(pset.models())
shown = [m for m in report.models if (m, cc.ALL) in report.diagrams]
classes = list(pset.classes) if pset.classes is not None else None
semantics = views.reliability_semantics(pset, target)
st.markdown(semantics)
table_name = "reliability_positive" if target == "positive" else "reliability"
rel_tables = {m: report.diagrams[(m, cc.ALL)][table_name] for m in shown}


def behind(name: str):
    """The all-rows tables drawn faintly behind a chosen slice's (None without a slice)."""
    return {m: t[name] for m, t in faint.tables_of(shown).items() if name in t} if faint else None


# ------------------------------------------------------------------------------------- selection
selection = ui.LinkedSelection("cls", (token, rows, group, int(n_bins), strategy, target,
                                       time_range and time_range[0]), shown)
log_hist = st.session_state["cls_hist_scale"] == "log"
fig_key = f"{base_key}|{sorted(options.items())}|target={target}|epoch={selection.epoch}"


def _linked_figure(chart_key: str, drawn: dict):
    """The reliability diagram or the confidence histogram with ``drawn`` bins marked, over a slice's background."""
    if chart_key == "cls_rel_chart":
        fig = plots.with_background(plots.reliability_figure, rel_tables, behind(table_name), colors=colors,
                                    target=target)
    else:
        fig = plots.with_background(plots.confidence_histogram_figure, rel_tables, behind(table_name), colors=colors,
                                    target=target)
        if log_hist:  # a log axis makes sparse bins visible (and clickable)
            cls_redraw.log_axis(fig)
    fig.update_layout(meta={"selection_epoch": selection.epoch})  # "Clear" gives every chart a new identity
    return plots.mark_selected(fig, drawn)


linked, charts = {}, {}  # the figures (export) and what the charts are sent
for chart_key in ("cls_rel_chart", "cls_hist_chart"):
    base = f"{fig_key}|{chart_key}" + (f"|log={log_hist}" if chart_key == "cls_hist_chart" else "")
    drawn = selection.drawn(chart_key, base)
    if faint is None:  # patched from a figure of the same layout; the selection patched into its wire dict
        kind = "reliability" if chart_key == "cls_rel_chart" else "histogram"
        linked[chart_key] = cls_redraw.figure_cached(base, lambda k=kind: cls_redraw.linked_figure(
            k, rel_tables, colors=colors, target=target, log_y=log_hist and k == "histogram"))
        charts[chart_key] = rc.marked_figure(linked[chart_key], drawn,
                                             layout_meta={"selection_epoch": selection.epoch})
    else:
        linked[chart_key] = ui.figure(f"{base}|drawn={sorted(drawn.items())}",
                                      lambda k=chart_key, d=drawn: _linked_figure(k, d))
        charts[chart_key] = rc.prepared_figure(linked[chart_key])
rel_fig, hist_fig = linked["cls_rel_chart"], linked["cls_hist_chart"]

st.subheader("Reliability diagram ↔ confidence histogram")
st.caption(
    "Click a bin in either chart (shift-click adds, or drag a box) to highlight it in both and list its rows "
    "and their per-class breakdown below."
)
sel_mask = bin_values = None
if not selection.empty:  # each row's bin kept per diagnosis: a click finds its rows in one pass
    sel_mask, bin_values = cls_redraw.selected_rows(base_key, sub, selection.bins, int(n_bins), strategy, target)
selection.row("**No bins selected** — click bars to inspect them." if sel_mask is None else
              "**" + ui.md_escape(describe_selection(selection.bins, int(sel_mask.sum()), "confidence bins",
                                                     n_bins=int(n_bins))) + "**",
              icon=":material/deselect:")
rel_kind = st.segmented_control(
    "Reliability diagram", list(REL_KINDS), key="cls_rel_kind",
    help="Binned: Guo et al.'s bars over confidence bins (click them to select rows). CORP: the isotonic (PAV) "
    "recalibration curve of Dimitriadis, Gneiting & Jordan (2021) — no bins to choose — with its consistency and "
    "confidence bands, and below the metrics the score decomposition MCB − DSC + UNC and the Murphy diagram.",
) or REL_KINDS[0]
use_corp = rel_kind == REL_KINDS[1]
corps = None
if use_corp:
    corp_options = {"target": target, "n_resamples": min(int(n_sims), 1000), "n_boot": min(int(n_resamples), 200),
                    "level": level, "seed": 0}
    corps = ui.corp_cached(base_key, sub, models=shown, **corp_options)

    def corps_behind():
        """The all-rows CORP fits drawn faintly behind a chosen slice's (None without a slice)."""
        return ui.corp_cached(faint.base_key, faint.pset, models=shown, **corp_options) if faint else None
left, right = st.columns(2)
with left:
    if corps:
        band = st.segmented_control("Band", list(corp_plots.BAND_CHOICES), key="cls_corp_band",
                                    label_visibility="collapsed",
                                    help="Consistency: where a calibrated forecaster's CORP curve falls 90% of the "
                                    "time (labels redrawn from the forecasts). Confidence: 90% bootstrap band of "
                                    "this curve.") or "consistency"
        corp_fig = ui.figure(f"{base_key}|corp|{sorted(corp_options.items())}|band={band}",
                             lambda: plots.with_background(corp_plots.corp_reliability_figure, corps, corps_behind(),
                                                           colors=colors, band=band))
        ui.chart(rc.prepared_figure(corp_fig), "cls_corp_chart")
        st.caption(
            "CORP: the PAV (isotonic) fit of the outcome on the forecast — the recalibrated probability at each "
            "forecast. On the diagonal = calibrated; where it leaves the grey consistency band, the miscalibration is "
            "more than chance at this N. MCB in the legend: the Brier miscalibration (table below)."
        )
    else:
        selection.chart(charts["cls_rel_chart"], "cls_rel_chart")
        st.caption(
            "Bars: accuracy per bin with 90% Wilson intervals; hatched: the gap to the bin's mean confidence (red = "
            "over-confident). ECE is the count-weighted mean of the gaps."
        )
with right:
    selection.chart(charts["cls_hist_chart"], "cls_hist_chart")
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
            models_sel = [m for m in shown if m in selection.bins]
            ui.dataframe(
                views.class_breakdowns(sub, sel_mask, target, models_sel, bin_values), hide_index=True, width="stretch",
                column_config={
                    "predicted": st.column_config.NumberColumn(help="rows predicted as this class"),
                    "accuracy": st.column_config.NumberColumn(format="%.3f", help="share of them that are right"),
                    "mean confidence": st.column_config.NumberColumn(format="%.3f"),
                    "gap": st.column_config.NumberColumn(format="%+.3f", help="mean confidence − accuracy"),
                    "true": st.column_config.NumberColumn(help="rows whose label is this class"),
                },
            )
        with b2:
            n_in = int(sel_mask.sum())
            st.markdown(f"**Rows in the selected bins** (first {min(n_in, ui.MAX_TABLE_ROWS)} of {n_in:,})")
            ui.dataframe(views.classification_rows(sub, sel_mask, target, ui.MAX_TABLE_ROWS, bin_values),
                         hide_index=True,
                         width="stretch", height=300,
                         column_config={"confidence": st.column_config.NumberColumn(format="%.4f")})

# ------------------------------------------------------------------------------------- smooth reliability
smooth_fig = None
smooth_name = "smooth_reliability_positive" if target == "positive" else "smooth_reliability"
smooth_tables = {m: report.diagrams[(m, cc.ALL)][smooth_name] for m in shown
                 if smooth_name in report.diagrams[(m, cc.ALL)]}
if smooth_tables:
    ui.init_state({"cls_smooth": True}, persist=True)
    if st.toggle("Smooth reliability diagram (no bins)", key="cls_smooth",
                 help="Kernel-smoothed reliability curve at the automatic bandwidth σ* (Błasiok & Nakkiran 2023); "
                 "its smooth ECE is in the metric table next to the binned ECE."):
        # keyed on what it is drawn from: the bins, the resamples and the selection leave it alone
        smooth_key = rc.keyed_digest(  # made once per (bins-free diagnosis, slice): not on every rerun
            ("cls_smooth", base_key, str(sorted((k, v) for k, v in options.items() if k not in ("n_bins", "strategy"))),
             tuple(shown), target, faint.key if faint else None),
            lambda: (smooth_tables, {m: t.attrs for m, t in smooth_tables.items()}, colors, target,
                     behind(smooth_name)))
        smooth_fig = ui.figure(f"smooth|{smooth_key}", lambda: plots.with_background(
            plots.smooth_reliability_figure, smooth_tables, behind(smooth_name), colors=colors, target=target))
        ui.chart(rc.prepared_figure(smooth_fig), "cls_smooth_chart")
        st.caption(
            "Kernel-smoothed outcome frequency against the predicted probability (reflected Gaussian kernel of "
            "width σ*, chosen by the data so that smooth ECE = σ*); shaded: density of the predictions. No bins to "
            "choose: the binned diagram above can look better or worse with other bins, this one cannot."
        )

# ------------------------------------------------------------------------------------- smoothed calibration (loess)
free_options = sorted((k, v) for k, v in options.items() if k not in ("n_bins", "strategy"))  # what bins leave alone
smoothed_fig = clin.smoothed_calibration_chart(report, shown, colors, target, behind, "cls_smoothed_chart",
                                               digest_key=(base_key, str(free_options), tuple(shown),
                                                           faint.key if faint else None))

# ------------------------------------------------------------------------------------- metrics
st.subheader("Metrics")
ui.show_verdicts(report)
st.caption(
    f"Value with its {level:.0%} interval, the value a perfectly calibrated classifier with the same predicted "
    "probabilities gets at this N, and the p-value of the test of perfect calibration (labels drawn from the "
    "predicted probabilities). The headline above comes from two primary tests (ECE and the gap of the top "
    "confidence bin; Holm at family-wise 5%); the other calibration statistics are flagged by Benjamini–Hochberg "
    "at 5% FDR. Tests, formulas and papers: see the Help page."
)
if faint is not None:
    st.caption("'slice': the metric on the slice's rows; 'all rows': on the whole data with the same filters. "
               "The interval, reference, p-value and verdict are the slice's.")
rc.show_metric_groups((lambda: views.metric_table(report.metrics, level, keys=metric_keys("classification"),
                                                  compact=True))
                      if faint is None else
                      (lambda: views.selection_vs_all(
                          report.metrics, faint.metrics, level, len(shown) > 1, compact=True, label="slice",
                          keys=metric_keys("classification"))), report.metrics,
                      key=f"cls|{base_key}|{sorted(options.items())}|{level}|{faint.key if faint else None}")
clu.show_statement(report)
for note in report.options.get("notes", []):
    st.caption(ui.md_escape(note))
per_class_fig = None
murphy_fig = None

# ------------------------------------------------------------------------------------------------ CORP
if corps:
    st.subheader("Score decomposition (CORP)")
    st.caption(
        "Mean score S = MCB − DSC + UNC from the PAV-recalibrated forecasts (Dimitriadis, Gneiting & Jordan 2021): "
        "MCB = miscalibration (what recalibration would gain; ≥ 0), DSC = discrimination (how much the recalibrated "
        f"forecasts beat the base rate; ≥ 0), UNC = the base rate's own score. {level:.0%} bootstrap intervals; "
        "'MCB if calibrated' is what a perfectly calibrated forecaster gets at this N (PAV fits noise); the MCB "
        "test compares MCB with its null draws ('floor': MCB beat all of them). Brier here is that of the binary "
        "event ((x − y)²; for two classes half the Brier of the metric table)."
    )
    ui.dataframe(corp_plots.decomposition_display_table(corps), hide_index=True, width="stretch")
    murphy_fig = ui.figure(f"{base_key}|murphy|{sorted(corp_options.items())}",
                           lambda: plots.with_background(corp_plots.murphy_figure,
                                                         {m: c.murphy for m, c in corps.items()},
                                                         {m: c.murphy for m, c in (corps_behind() or {}).items()},
                                                         colors=colors))
    ui.chart(rc.prepared_figure(murphy_fig), "cls_murphy_chart")
    st.caption(
        "Murphy diagram (Ehm et al. 2016): the mean elementary score at each threshold θ — the loss of a user who "
        "acts when the forecast exceeds θ, with cost–loss ratio θ. Lower is better; a model below another at every "
        "θ is better for every user and every proper score. The area under a curve is half its Brier score."
    )

# ------------------------------------------------------------------------------------- per class
if not pset.top_label_only:
    st.subheader("Per-class reliability")
    per_model = st.selectbox("Model", shown, key="cls_per_class_model") if len(shown) > 1 else shown[0]
    per_class = report.diagrams[(per_model, cc.ALL)].get("per_class")
    if per_class is not None:
        per_class_key = f"{base_key}|{sorted(options.items())}|per_class={per_model}"
        class_options, worst, summary = cls_redraw.per_class_views(per_class_key, per_class, classes)
        picked = worst
        if len(class_options) > len(worst):  # more classes than panels: the worst first, the user picks others
            if st.session_state.get("cls_per_class_for") != (token, per_model, rows, group):
                st.session_state["cls_per_class_for"] = (token, per_model, rows, group)
                st.session_state["cls_per_class_pick"] = worst
            picked = st.multiselect(
                "Classes shown", list(class_options), key="cls_per_class_pick",
                help="At first the classes with the largest one-vs-rest ECE, worst first.",
            ) or worst
        caption = views.per_class_caption(len(picked), len(class_options), picked == worst)
        if caption:
            st.caption(caption)
        codes = [class_options[c] for c in picked]
        per_class_fig = cls_redraw.figure_cached(
            f"{base_key}|{sorted(options.items())}|per_class={per_model}|classes={codes}",
            lambda: plots.with_background(plots.per_class_reliability_figure, per_class,
                                          (behind("per_class") or {}).get(per_model), class_names=classes,
                                          color=colors[per_model], classes=codes)
            if faint is not None else  # no slice: patched from the figure of other bins (same classes)
            cls_redraw.per_class_figure(per_class, class_names=classes, color=colors[per_model], classes=codes),
        )
        ui.chart(rc.prepared_figure(per_class_fig), "cls_per_class")
        st.caption(
            "One-vs-rest reliability of every class: observed frequency of the class against the mean predicted "
            "probability per bin (marker size grows with the bin count; sparse bins are noisy)."
        )
        wide = "class →" in summary.columns
        ui.number_table(summary, "%.4f", summary.columns[1:] if wide else
                        ("frequency", "mean predicted probability", "one-vs-rest ECE"), neutralised=True)
        st.caption("Class-wise ECE (Kull et al. 2019) is the mean of the one-vs-rest ECEs.")

# ------------------------------------------------------------------------------------- ordered classes
threshold_fig = None
if pset.ordinal and not pset.top_label_only:  # ordered categories: one binary reliability per threshold Y ≤ k
    st.subheader("Per threshold (ordered classes)")
    threshold_options = {"n_bins": int(n_bins), "strategy": strategy, "n_resamples": min(int(n_sims), 1000)}
    thresholds = ui.result_cached(f"{base_key}|thresholds|{sorted(threshold_options.items())}",
                                  lambda: views.threshold_reliabilities(sub, shown, **threshold_options),
                                  spinner="Reliability per threshold…")
    if thresholds:
        threshold_fig = ui.figure(f"{base_key}|thresholds|{sorted(threshold_options.items())}|fig",
                                  lambda: ordinal_plots.threshold_reliability_figure(thresholds, colors=colors))
        ui.chart(rc.prepared_figure(threshold_fig), "cls_threshold_chart")
        st.caption(
            "The classes are ordered, so each threshold k states a binary forecast P(Y ≤ k) (the summed "
            "probabilities up to class k). Line: its CORP (PAV) recalibration curve; dots: binned frequencies; grey: "
            "where a calibrated forecaster's curve falls 90% of the time. The ranked probability score (RPS in the "
            "metric table) is the sum of the thresholds' Brier scores. With many thresholds the most miscalibrated "
            "are drawn; the table lists all."
        )
        threshold_rows = views.threshold_table(thresholds)
        ui.number_table(threshold_rows, "%.4f", [c for c in threshold_rows.columns
                                                 if c not in ("model", "threshold", "verdict")])
        st.caption("MCB test: MCB against its law when the outcomes Y ≤ k are drawn from the forecasts; p-values "
                   "Holm-adjusted over the thresholds of each model (family-wise 5%).")

export_figures = {"Reliability diagram": rel_fig, "Confidence histogram": hist_fig}
if corps:
    export_figures.update({"CORP reliability diagram": corp_fig, "Murphy diagram": murphy_fig})
if smooth_fig is not None:
    export_figures["Smooth reliability diagram"] = smooth_fig
if smoothed_fig is not None:
    export_figures["Smoothed calibration curve"] = smoothed_fig
if per_class_fig is not None:
    export_figures["Per-class reliability"] = per_class_fig
if threshold_fig is not None:
    export_figures["Reliability per threshold"] = threshold_fig
ui.export_row(
    "classification", title=f"Classification diagnostics — {name}", report=report, figures=export_figures,
    metrics=report.metrics, pset=sub,
    notes=[semantics.replace("**", ""),
           f"Filters: rows = {rows}, models = {', '.join(models)}, group = {views.group_label(group)}."],
)

ui.record_run_time(_t0, "classification")
