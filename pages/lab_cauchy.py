"""Lab 2 — the Cauchy example (Levi et al. 2019, §2): quantile calibrated, yet useless.

Thin page: sliders → ``calib_core.labs.cauchy.run_cauchy`` (cached on the slider values) → figures from
``calib_core.plots``.  The lab's metric table is left in ``st.session_state["lab_cauchy"]`` for tests.
"""

from __future__ import annotations

import streamlit as st

import dashboard as ui
from calib_core import plots
from calib_core.labs.cauchy import CAUCHY, HONEST, cauchy_findings, run_cauchy
from calib_core.plots.labs_regression import coverage_by_bin_figure

INTRO = (
    "Targets y ~ N(0, 1). One forecaster says **Cauchy(0, γ)** with γ = |z|, z ~ N(0, 1) drawn independently of y; "
    "the other says **N(0, 1)**. **What to look at:** both quantile-calibration curves and PIT histograms are "
    "perfect — y/|z| is exactly Cauchy(0, 1), so the Cauchy's PIT is exactly uniform. Now look at the coverage of "
    "its intervals per bin of γ: near 0% for small γ and near 100% for large γ (the dotted curve is the exact "
    "2Φ(γ·tan(πc/2)) − 1), while N(0, 1) covers the nominal share in every bin. The Cauchy's scale is noise."
)
page = ui.LabPage("cauchy", {"lab2_n": 5000, "lab2_seed": 0, "lab2_bins": 10, "lab2_coverage": 0.5}, intro=INTRO)
c1, c2, c3 = st.columns(3)
c1.slider("N", 500, 50000, step=500, key="lab2_n")
c1.slider("Seed", 0, 99, key="lab2_seed")
c2.slider("γ-bins", 4, 20, key="lab2_bins")
c3.slider("Central interval coverage c", 0.1, 0.95, step=0.05, key="lab2_coverage")
params = page.params({"n": "lab2_n", "seed": "lab2_seed", "n_bins": "lab2_bins", "coverage": "lab2_coverage"})

result = page.run(run_cauchy, params)
models = (CAUCHY, HONEST)
colors = plots.model_colors(models)

# ------------------------------------------------------------------ selecting γ-bins (linked to the PIT histogram)
selection, pit_fig = ui.pit_of_selected_bins(page, "lab2", result, models, colors, "γ-bins")
coverage_fig = page.figure(f"coverage|{selection.epoch}", lambda: coverage_by_bin_figure(
    {m: result.tables[m]["coverage_by_scale"] for m in models}, key_label="γ = |z| (the Cauchy's scale)",
    colors=colors, title=f"Coverage of the central {result.coverage:.0%} interval per γ-bin",
    exact=(result.exact_curve["gamma"], result.exact_curve["coverage"], "exact: 2Φ(γ·tan(πc/2)) − 1")))

left, right = st.columns(2)
with left:
    ui.chart(page.figure("curve", lambda: plots.calibration_curve_figure(
        {m: result.tables[m]["calibration_curve"] for m in models}, colors=colors)), "lab2_curve")
    st.caption("Quantile calibration (Kuleshov et al. 2018) with the 95% band of a perfect forecaster.")
with right:
    selection.chart(coverage_fig, "lab2_coverage_chart")
    st.caption("Both forecasters, binned by the Cauchy's γ (equal-count bins; ribbons: 95% range of a forecaster "
               "calibrated given γ).")

left2, right2 = st.columns(2)
with left2:
    ui.chart(pit_fig, "lab2_pit")
    st.caption("PIT histograms of all rows. Select small-γ bins: intervals too narrow pile the PIT up at 0 and 1; "
               "large-γ bins: intervals too wide pile it up in the middle.")
with right2:
    st.markdown("**Numbers**")
    table = result.metrics.rename(columns=ui.column_labels(result.metrics.columns, {
        "spearman_scale_abs_y": "Spearman(γ, |y|)", "mean_width": f"mean {result.coverage:.0%} width",
        "coverage": "coverage", "min_bin_coverage": "min coverage over γ-bins",
        "max_bin_coverage": "max coverage over γ-bins"}))
    ui.dataframe(table.set_index("model").T, width="stretch",
                 column_config={m: st.column_config.NumberColumn(format="%.3f") for m in models})
    st.caption("The Cauchy's CRPS is infinite and it has no variance, so there is no Levi RMSE-vs-RMV diagram "
               "for it.")
page.findings(cauchy_findings(result))
page.finish(result.metrics)
