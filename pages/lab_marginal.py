"""Lab 3 — the degenerate marginal forecaster (Utpala & Rai, "Quantile regularization", §4.3).

Thin page: sliders → ``calib_core.labs.marginal.run_marginal`` (cached on the slider values) → figures from
``calib_core.plots``.  The lab's metric table is left in ``st.session_state["lab_marginal"]`` for tests.
"""

from __future__ import annotations

import streamlit as st

import dashboard as ui
from calib_core import plots
from calib_core.labs.marginal import IDEAL, MARGINAL, marginal_findings, run_marginal
from calib_core.plots.labs_regression import coverage_by_bin_figure

INTRO = (
    "x ~ N(0, s²), y | x ~ N(a·x, σ²) (the paper: a = 5, σ = 1, s = 4). The **ideal** forecaster says N(a·x, σ²); "
    "the **marginal** one says N(0, a²s² + σ²) whatever x is. **What to look at:** the marginal of y is calibrated "
    "by construction, so compare the two quantile-calibration curves first. Then the Levi diagram: every σ-bin of "
    "the marginal sits at the one RMV = √(a²s² + σ²), the ideal's at σ (sharpness); and the coverage of the "
    "intervals given x, which the marginal ignores. What the numbers say is listed at the end."
)
DEFAULTS = {"lab3_n": 5000, "lab3_seed": 0, "lab3_slope": 5.0, "lab3_noise": 1.0, "lab3_x_std": 4.0, "lab3_bins": 15,
            "lab3_coverage": 0.9}
page = ui.LabPage("marginal", DEFAULTS, intro=INTRO)
c1, c2, c3 = st.columns(3)
c1.slider("N", 500, 50000, step=500, key="lab3_n")
c1.slider("Seed", 0, 99, key="lab3_seed")
c2.slider("Slope a", 0.0, 10.0, step=0.5, key="lab3_slope")
c2.slider("Noise σ", 0.2, 5.0, step=0.1, key="lab3_noise")
c2.slider("Spread of x (s)", 0.5, 8.0, step=0.5, key="lab3_x_std")
c3.slider("Bins (σ-bins and x-bins)", 5, 30, key="lab3_bins")
c3.slider("Central interval coverage c", 0.5, 0.99, step=0.01, key="lab3_coverage")
params = page.params({"n": "lab3_n", "seed": "lab3_seed", "slope": "lab3_slope", "noise": "lab3_noise",
                      "x_std": "lab3_x_std", "n_bins": "lab3_bins", "coverage": "lab3_coverage"})

result = page.run(run_marginal, params)
models = (IDEAL, MARGINAL)
colors = plots.model_colors(models)

# ------------------------------------------------------------------ selecting x-bins (linked to the PIT histogram)
selection, pit_fig = ui.pit_of_selected_bins(page, "lab3", result, models, colors, "x-bins")
coverage_fig = page.figure(f"coverage|{selection.epoch}", lambda: coverage_by_bin_figure(
    {m: result.tables[m]["coverage_by_x"] for m in models}, key_label="x", colors=colors,
    title=f"Coverage of the central {result.coverage:.0%} interval per x-bin"))

left, right = st.columns(2)
with left:
    ui.chart(page.figure("curve", lambda: plots.calibration_curve_figure(
        {m: result.tables[m]["calibration_curve"] for m in models}, colors=colors)), "lab3_curve")
    st.caption("Quantile calibration (Kuleshov et al. 2018) with the 95% band of a perfect forecaster.")
with right:
    ui.chart(page.figure("levi", lambda: plots.levi_figure(
        {m: result.tables[m]["levi_bins"] for m in models}, colors=colors)), "lab3_levi")
    st.caption(f"Levi et al. (2019): all of the marginal's σ-bins collapse onto RMV = {result.marginal_sigma:.3g} — "
               f"no resolution; the ideal's sit at σ = {params['noise']:g}.")

left2, right2 = st.columns(2)
with left2:
    selection.chart(coverage_fig, "lab3_coverage_chart")
    st.caption("Calibration conditional on the input: equal-count bins of x; ribbons are the 95% range of a "
               "forecaster calibrated given x.")
with right2:
    ui.chart(pit_fig, "lab3_pit")
    st.caption("PIT histograms of all rows. Select the outermost x-bins to see the PIT of their rows: a forecaster "
               "that ignores x piles it up at 0 or 1 there.")

st.subheader("Numbers")
page.table(result.metrics, {
    "min_bin_coverage": "min coverage over x-bins", "max_bin_coverage": "max coverage over x-bins"}, "%.4g",
    by_quantity=True)
page.findings(marginal_findings(result))
page.finish(result.metrics)
