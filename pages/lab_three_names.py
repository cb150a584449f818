"""Lab 6 — three names, one algorithm: CRUDE, signed split conformal and Kuleshov-on-Gaussian intervals.

Thin page: sliders, a cached call to ``calib_core.labs.three_names.run_three_names`` and its figures.  The
numbers the lab claims are stored in ``st.session_state["lab_three_names"]`` (read by the AppTest).
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

import dashboard as ui
from calib_core.labs.three_names import NOISE_SHAPES, run_three_names, three_names_findings

LOOK = (
    "**What to look at.** The left chart: CRUDE's step-shaped quantile function of the sorted calibration z-scores "
    "and Kuleshov's recalibrated Gaussian quantile function, with all three methods' interval bounds (markers) on "
    "the sorted scores — by construction their ranks differ by at most one. Then compare the held-out coverage of "
    "the three and of the uncalibrated Gaussian with the nominal one (grey band = binomial noise of the test rows). "
    "Try a skewed or heavy-tailed noise, a small L or a spread of 1, and read what changes below."
)
page = ui.LabPage(
    "three_names",
    {"lab3n_cal": 999, "lab3n_test": 5000, "lab3n_coverage": 0.90, "lab3n_spread": 1.5, "lab3n_shift": 0.0,
     "lab3n_noise": "Gaussian", "lab3n_seed": 0},
    look=LOOK,
)
c1, c2, c3, c4 = st.columns(4)
c1.slider("Calibration rows L", 50, 3000, key="lab3n_cal", step=1,
          help="With L = 999 and coverage 0.9, (L + 1)·α/2 = 50 is an integer: CRUDE and conformal coincide exactly.")
c2.slider("Test rows", 500, 20000, key="lab3n_test", step=500)
c3.slider("Coverage c", 0.50, 0.95, key="lab3n_coverage", step=0.01)
c4.number_input("Seed", 0, 10_000, key="lab3n_seed", step=1)
d1, d2, d3 = st.columns(3)
d1.slider("Noise spread (× predicted σ)", 0.5, 3.0, key="lab3n_spread", step=0.1,
          help="> 1: the Gaussian forecaster is over-confident.")
d2.slider("Bias (× predicted σ)", -1.0, 1.0, key="lab3n_shift", step=0.1)
d3.segmented_control("Noise shape", list(NOISE_SHAPES), key="lab3n_noise")

params = page.params({"n_calibration": "lab3n_cal", "n_test": "lab3n_test", "coverage": "lab3n_coverage",
                      "spread": "lab3n_spread", "shift": "lab3n_shift", "noise": "lab3n_noise", "seed": "lab3n_seed"},
                     digits=4)

result = page.run(run_three_names, params, spinner="Simulating and recalibrating…", max_entries=32)
figs = page.figures(result, ("quantiles", "intervals", "coverage"))

left, right = st.columns(2)
with left:
    ui.chart(figs["quantiles"], "lab3n_quantiles")
with right:
    ui.chart(figs["coverage"], "lab3n_coverage_chart")

st.subheader("The three intervals, row by row")
diff = result.max_abs_difference
m1, m2, m3 = st.columns(3)
m1.metric("max |CRUDE − conformal| endpoint", f"{diff['split conformal (signed)']:.4g}")
m2.metric("max |CRUDE − Kuleshov| endpoint", f"{diff['Kuleshov isotonic']:.4g}")
m3.metric("bound: σ_max × largest neighbouring z-gap", f"{result.max_neighbour_gap:.4g}",
          help="The ranks differ by at most one, so no endpoint can differ by more than this.")
table = result.bounds.rename(
    columns={"lower_z": "lower z", "upper_z": "upper z", "lower_rank": "rank of lower", "upper_rank": "rank of upper",
             "coverage_test": "held-out coverage", "mean_width": "mean width"}
)
ui.dataframe(table, hide_index=True, width="stretch", column_config={
    "lower z": st.column_config.NumberColumn(format="%.4f"), "upper z": st.column_config.NumberColumn(format="%.4f"),
    "rank of lower": st.column_config.NumberColumn(format="%.1f"),
    "rank of upper": st.column_config.NumberColumn(format="%.1f"),
    "held-out coverage": st.column_config.NumberColumn(format="%.4f"),
    "mean width": st.column_config.NumberColumn(format="%.4f"),
})
st.caption(
    f"Ranks among the L = {result.n_calibration} sorted calibration z-scores (x.5 = strictly between two). CRUDE "
    "takes z_(⌊Lα/2⌋+1) and z_(⌊L(1−α/2)⌋+1); conformal z_(⌊(L+1)α/2⌋) and z_(⌈(L+1)(1−α/2)⌉); Kuleshov's "
    "isotonic map through (Φ(z_(i)), i/L) gives z_(i) at p = i/L and interpolates in between."
)
ui.chart(figs["intervals"], "lab3n_intervals")
page.findings(three_names_findings(result))

page.finish({
    "params": params,
    "max_abs_difference": dict(diff),
    "max_neighbour_gap": float(result.max_neighbour_gap),
    "bounds": pd.DataFrame(result.bounds).to_dict("list"),
    "n_test": result.n_test,
})
