"""Lab 4 — side effects of isotonic recalibration (Utpala & Rai, "Quantile regularization", §3, Fig. 2).

Thin page: sliders → ``calib_core.labs.isotonic.run_isotonic`` (cached on the slider values) → figures from
``calib_core.plots.labs_regression``.  The lab's numbers are left in ``st.session_state["lab_isotonic"]`` for tests.
"""

from __future__ import annotations

import streamlit as st

import dashboard as ui
from calib_core.labs.isotonic import AFTER, BEFORE, isotonic_findings, run_isotonic
from calib_core.plots.labs_regression import density_figure, recalibration_map_figure
from views import pages as views

INTRO = (
    "Bayesian linear regression (conjugate Gaussian prior, closed-form predictive) is fitted to y = 3x + ε, "
    "x ~ U[−4, 4]; Kuleshov's isotonic map R is fitted on a small calibration set and the predictive density at one "
    "test input x* is shown before and after G = R∘F. **What to look at:** without the (1, 1) end point R reaches 1 at "
    "the largest calibration PIT, so the density is cut off at the truncation point and test targets above it get "
    "zero likelihood (NLL = ∞); the density is piecewise rescaled, with spikes where two calibration PITs are close; "
    "and the mean moves by −δσ. Switch the end point on: the support is whole again, the spikes and the shift stay."
)
page = ui.LabPage(
    "isotonic",
    {"lab4_n_train": 256, "lab4_n_cal": 32, "lab4_n_test": 2000, "lab4_seed": 0, "lab4_noise": 1.0,
     "lab4_assumed_noise": 1.0, "lab4_x_star": 1.0, "lab4_endpoint": False},
    intro=INTRO,
)
c1, c2, c3 = st.columns(3)
c1.slider("Training points", 16, 2048, step=16, key="lab4_n_train", help="QR: 256")
c1.slider("Calibration points m", 4, 512, step=4, key="lab4_n_cal", help="QR: 32")
c1.slider("Test points", 500, 20000, step=500, key="lab4_n_test")
c2.slider("Noise σ of the data", 0.2, 3.0, step=0.1, key="lab4_noise")
c2.slider("Noise σ assumed by the model", 0.2, 3.0, step=0.1, key="lab4_assumed_noise",
          help="= data noise: a well-specified model; smaller: over-confident, larger: under-confident")
c2.slider("Seed", 0, 99, key="lab4_seed")
c3.slider("Test input x*", -4.0, 4.0, step=0.1, key="lab4_x_star")
c3.toggle("Add the (1, 1) end point (QR's remedy)", key="lab4_endpoint",
          help="Targets i/(m + 1) and the extra pair (1, 1): R < 1 on [0, 1), no truncation")
params = page.params({"n_train": "lab4_n_train", "n_cal": "lab4_n_cal", "n_test": "lab4_n_test", "seed": "lab4_seed",
                      "noise": "lab4_noise", "assumed_noise": "lab4_assumed_noise", "x_star": "lab4_x_star",
                      "add_endpoint": "lab4_endpoint"})

result = page.run(run_isotonic, params, spinner="Fitting…")
nums = result.numbers

left, right = st.columns(2)
with left:
    ui.chart(page.figure("map", lambda: recalibration_map_figure(
        result.map_knots, result.calibration_pairs, truncation_u=nums["truncation_u"],
        title=f"Isotonic map R fitted on m = {params['n_cal']} points")), "lab4_map")
    st.caption("The calibration pairs (c_(i), i/m) — or i/(m + 1) with the end point — and the piecewise-linear R "
               "through them (QR §3: isotonic regression leaves these increasing targets unchanged).")
with right:
    markers = {"mean before": nums["mean_before"], "mean after": nums["mean_after"]}
    if nums["truncation_u"] < 1.0:
        markers["truncation point"] = nums["truncation_point"]
    ui.chart(page.figure("density", lambda: density_figure(
        result.density, markers=markers, title=f"Predictive density at x* = {result.x_star:g}",
        colors={BEFORE: "#4c78a8", AFTER: "#f58518"}, y_cap=4.0 * float(result.density[BEFORE].max()))),
        "lab4_density")
    st.caption("g(y) = R′(F(y))·f(y) (QR eq. 10): the base density rescaled piece by piece by the slopes of R.")

st.subheader("Numbers")
ui.number_table(views.quantity_table(nums, {
    "truncation_u": "truncation level a* (R = 1 from here; 1 = none)",
    "truncation_point": "truncation point y_trun = F⁻¹(a*) at x*",
    "zero_density_share": "share of test targets with zero density after",
    "nll_before": "test NLL before",
    "nll_after": "test NLL after (∞ if any target has zero density)",
    "nll_after_finite_rows": "test NLL after, rows with non-zero density",
    "spike_ratio": "largest density inflation max_k s_k (spikes)",
    "mean_before": "mean at x* before (μ)",
    "mean_after": "mean at x* after",
    "mean_shift": "mean shift (= −δσ, QR claim 3)",
    "delta": "δ",
    "calibration_rmse_before": "test calibration RMSE before",
    "calibration_rmse_after": "test calibration RMSE after",
}), "%.4g", ["value"])
st.caption(
    f"Posterior mean of the BLR weights: intercept {result.posterior_mean[0]:.3f}, "
    f"slope {result.posterior_mean[1]:.3f} (fitted on the training points only: moving m or the test size keeps "
    "this model, and every number 'before', fixed)."
)
page.findings(isotonic_findings(result, n_cal=params["n_cal"],
                                well_specified=params["noise"] == params["assumed_noise"]))
page.finish(dict(nums))
