"""Lab 7 — ACCRUE on toy data: true versus estimated σ(x), against CRPS-only and k-means baselines.

Thin page: sliders, a cached call to ``calib_core.labs.accrue.run_accrue`` and its figures.  The numbers the lab
claims are stored in ``st.session_state["lab_accrue"]`` (read by the AppTest).
"""

from __future__ import annotations

import streamlit as st

import dashboard as ui
from calib_core.labs.accrue import TOY_SETS, accrue_findings, run_accrue

LOOK = (
    "**What to look at.** The black line is the σ(x) that generated the data. ACCRUE fits σ(x) by minimising "
    "β·CRPS + (1 − β)·RS; CRPS only is the same model with β = 1 (a proper score alone); k-means can only draw a "
    "staircase with k steps, and a constant σ is the flat line. Compare each curve with the black line and the "
    "median relative σ errors below; change the toy set, N and k and see which method follows σ(x). For 5D the "
    "chart shows estimated against true σ at test points (the paper's Fig. 7 view): σ depends on Σx_i there."
)
page = ui.LabPage("accrue", {"labac_toy": "Y", "labac_n": 2000, "labac_seed": 0, "labac_k": 5}, look=LOOK)
c1, c2, c3, c4 = st.columns(4)
c1.segmented_control("Toy set", list(TOY_SETS), key="labac_toy",
                     help="G, Y, W: 1-D (polynomial σ, Algorithm 1); 5D: the one-hidden-layer network on all five x.")
c2.slider("Rows N", 100, 5000, key="labac_n", step=100, help="The paper uses 100 rows for G, Y, W and 3,300 for 5D.")
c3.number_input("Seed", 0, 10_000, key="labac_seed", step=1)
c4.slider("k-means clusters k", 1, 10, key="labac_k")

params = page.params({"toy": "labac_toy", "n": "labac_n", "seed": "labac_seed", "n_clusters": "labac_k"})

result = page.run(run_accrue, params, spinner="Fitting σ(x) four ways…", max_entries=32)
figs = page.figures(result, ("sigma", "errors"))

errors = result.median_errors()
cols = st.columns(len(errors))
for col, (name, value) in zip(cols, errors.items()):
    col.metric(f"{name}: median relative σ error", f"{100 * value:.1f}%")

left, right = st.columns([3, 2])
with left:
    ui.chart(figs["sigma"], "labac_sigma")
with right:
    ui.chart(figs["errors"], "labac_errors")

page.table(result.metrics, {
    "median_rel_sigma_error": "median |σ̂ − σ|/σ",
    "calibration_error": "calibration error (max |ECDF(PIT) − p|)",
}, "%.4f", text=("method",))
st.caption(
    f"All on 5,000 fresh test rows of {result.toy}; the point prediction is the exact mean f(x), so only σ(x) is "
    f"estimated. ACCRUE's weight β = {result.beta:.3f} (eq. 12, the paper's practical RS_min)"
    + (f"; Algorithm 1 stopped at polynomial degree {result.degree}." if result.degree is not None else ".")
)
page.findings(accrue_findings(result))

page.finish({
    "params": params,
    "median_errors": errors,
    "metrics": result.metrics.to_dict("list"),
    "beta": result.beta,
    "degree": result.degree,
})
