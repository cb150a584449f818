"""Lab 5 — same NLPD, different reliability (Camporeale & Carè, "ACCRUE", §3, Fig. 2).

Thin page: sliders → ``calib_core.labs.nlpd.run_nlpd`` (cached on the slider values) → figures from
``calib_core.plots``.  The lab's metric table is left in ``st.session_state["lab_nlpd"]`` for tests.
"""

from __future__ import annotations

import streamlit as st

import dashboard as ui
from calib_core import plots
from calib_core.labs.nlpd import CALIBRATED, EQUAL_NLPD, nlpd_findings, run_nlpd
from calib_core.plots.labs_regression import nlpd_reliability_figure

INTRO = (
    "x ~ U[0, 1], y ~ N(0, σ(x)²) with σ(x) = x + ½; every model predicts the mean 0 and differs only in σ. "
    "**What to look at:** left, the calibrated model and its twin whose σ̃ solves ACCRUE eq. 5 row by row (the same "
    "NLPD by construction): compare their reliability diagrams. Right, a sequence moving each σ² towards the error "
    "ε² (the per-row NLPD minimum): follow the NLPD and the reliability score RS along it. What the numbers say is "
    "listed at the end."
)
page = ui.LabPage("nlpd", {"lab5_n": 1000, "lab5_seed": 0, "lab5_steps": 6, "lab5_t_max": 0.9}, intro=INTRO)
c1, c2, c3 = st.columns(3)
c1.slider("N", 200, 20000, step=100, key="lab5_n", help="ACCRUE Fig. 2: 1,000 points")
c1.slider("Seed", 0, 99, key="lab5_seed")
c2.slider("Models in the sequence (incl. the calibrated one)", 2, 8, key="lab5_steps")
c3.slider("Last step t_max of σ²(t) = (1 − t)σ² + tε²", 0.1, 0.95, step=0.05, key="lab5_t_max")
params = page.params({"n": "lab5_n", "seed": "lab5_seed", "steps": "lab5_steps", "t_max": "lab5_t_max"})

result = page.run(run_nlpd, params)
pair = (CALIBRATED, EQUAL_NLPD)
seq = result.sequence
colors = plots.model_colors([CALIBRATED, EQUAL_NLPD, *seq[1:]])

left, right = st.columns(2)
with left:
    nl = {m: result.value(m, "nlpd_paper") for m in pair}
    ui.chart(page.figure("pair", lambda: plots.calibration_curve_figure(
        {m: result.curves[m] for m in pair}, colors=colors,
        title=f"Same NLPD: {nl[CALIBRATED]:.3f} = {nl[EQUAL_NLPD]:.3f}")), "lab5_pair")
    st.caption("ACCRUE's reliability diagram: the empirical CDF of Φ_i = ½(erf η_i + 1), η = ε/(√2σ) — the "
               "quantile-calibration curve. NLPD in the paper's convention (without ½log 2π).")
with right:
    ui.chart(page.figure("sequence", lambda: plots.calibration_curve_figure(
        {m: result.curves[m] for m in seq}, colors=colors, bands=(CALIBRATED,),
        title="The sequence σ²(t) = (1 − t)σ² + tε²")), "lab5_sequence")
    st.caption("σ²(t) = (1 − t)σ² + tε² for growing t: each row's NLPD decreases along the way (ACCRUE Fig. 2 right).")

left2, right2 = st.columns(2)
with left2:
    path = result.metrics[result.metrics["model"].isin(seq)].rename(columns={"model": "name"})
    ui.chart(page.figure("path", lambda: nlpd_reliability_figure(path, colors=colors)), "lab5_path")
    st.caption("Each model of the sequence at (NLPD, RS): both are 'lower is better'.")
with right2:
    st.markdown("**Numbers**")
    page.table(result.metrics, {
        "nlpd": "NLPD", "nlpd_paper": "NLPD − ½log 2π (paper)", "reliability": "RS (ACCRUE eq. 8)"},
        "%.4f")
    st.caption("RS = ∫(Φ(η) − C(η))² dη, the squared distance of the standardised errors' empirical CDF from the "
               "normal one; the max deviation (KS) is the largest gap of the reliability diagram.")
page.findings(nlpd_findings(result))
page.finish(result.metrics)
