"""Lab 11 — clinical calibration: calibration-in-the-large against the slope, Hosmer–Lemeshow against its groups,
and recalibration judged on held-out patients (Van Calster et al. 2016; Austin & Steyerberg 2019; Steyerberg 2019).

Thin page: sliders, a cached call to ``calib_core.labs.clinical.run_clinical`` and its figures.  The numbers the lab
claims are stored in ``st.session_state["lab_clinical"]`` (read by the AppTest).
"""

from __future__ import annotations

import streamlit as st

import dashboard as ui
from calib_core.labs.clinical import HL_MARKED, METHODS, SCENARIOS, run_clinical

DEV, OVER, MOVED = SCENARIOS
LABELS = {"model": "model", "method": "method", "spiegelhalter_p": "Spiegelhalter p",
          "hosmer_lemeshow_p": "Hosmer–Lemeshow p (g = 10)", "auc": "AUC (c statistic)",
          "mean_predicted": "mean predicted risk", "observed_rate": "observed risk"}
SHOWN = ["model", "calibration_in_the_large", "calibration_slope", "cox_intercept", "mean_predicted", "observed_rate",
         "spiegelhalter_z", "spiegelhalter_p", "hosmer_lemeshow", "hosmer_lemeshow_p", "ici", "e50", "e90", "auc"]

LOOK = (
    "**What to look at.** Simulated patients with a known risk. The development model is fitted on thousands, the "
    "over-fitted one on a hundred: on new patients its smoothed calibration curve is flatter than the diagonal — "
    "the observed risk is higher than predicted where the model predicts low risks and lower where it predicts "
    "high ones (slope < 1) — yet it crosses the diagonal near the average risk (calibration-in-the-large ≈ 0). "
    "Move the development model to a hospital whose baseline risk differs: its curve runs parallel to the "
    "diagonal, above or below it (intercept off, slope ≈ 1). Then see Hosmer–Lemeshow give different p-values for "
    "the same predictions as the number of groups changes, and which recalibration repairs what, judged on "
    "patients it was not fitted on. What the numbers say is listed under each part."
)
page = ui.LabPage(
    "clinical",
    {"labcl_small": 100, "labcl_dev": 5000, "labcl_val": 2000, "labcl_shift": 1.0, "labcl_seed": 0},
    look=LOOK,
)
c1, c2, c3, c4, c5 = st.columns([2.2, 2.2, 2.2, 2.2, 1])
c1.select_slider("Patients of the over-fitted model", [40, 60, 80, 100, 150, 200, 300, 500, 1000],
                 key="labcl_small", help="8 predictors; about one patient in four has the event, so 100 patients "
                                         "give about 3 events per predictor.")
c2.select_slider("Patients of the development model", [1000, 2000, 5000, 10000, 20000], key="labcl_dev")
c3.select_slider("New patients per validation set", [500, 1000, 2000, 5000], key="labcl_val",
                 help="Each validation set is also split in halves for the recalibration: fitted on one, judged on "
                      "the other.")
c4.slider("New hospital: change of the baseline log-odds", -2.0, 2.0, key="labcl_shift", step=0.25,
          help="> 0: patients there are at higher risk with the same predictors; the model does not know.")
c5.number_input("Seed", 0, 10_000, key="labcl_seed", step=1)
params = page.params({"n_small": "labcl_small", "n_dev": "labcl_dev", "n_val": "labcl_val", "shift": "labcl_shift",
                      "seed": "labcl_seed"}, digits=4)
result = page.run(run_clinical, params, spinner="Simulating patients, fitting and recalibrating…", max_entries=16)
figs = page.figures(result, ("overfit", "transport", "hl", f"recalibrated {OVER}", f"recalibrated {MOVED}"))

m1, m2, m3, m4 = st.columns(4)
m1.metric("calibration slope, over-fitted", f"{result.value(OVER, 'calibration_slope'):.2f}",
          delta=f"{result.value(OVER, 'calibration_slope') - 1:+.2f} from 1", delta_color="off")
m2.metric("calibration-in-the-large, over-fitted", f"{result.value(OVER, 'calibration_in_the_large'):+.2f}")
m3.metric("calibration-in-the-large, transported", f"{result.value(MOVED, 'calibration_in_the_large'):+.2f}",
          delta=f"baseline log-odds {result.shift:+.2f}", delta_color="off")
m4.metric("calibration slope, transported", f"{result.value(MOVED, 'calibration_slope'):.2f}")

left, right = st.columns(2)
with left:
    ui.chart(figs["overfit"], "labcl_overfit")
with right:
    ui.chart(figs["transport"], "labcl_transport")
st.caption(
    "Loess calibration curves (local linear, span 0.75) of the new patients with 95% bootstrap bands, and the "
    "histogram of the predicted risks. Above the diagonal the model under-estimates the risk there, below it "
    "over-estimates. ICI is the mean distance between the curve and the diagonal over the patients."
)
page.table(result.metrics[SHOWN], LABELS, "%.3f", task="classification", by_quantity=True)
st.caption(
    f"{result.sizes['n_val']} new patients per model. Calibration-in-the-large: a of logit P(y = 1) = a + logit p "
    "(0 = right on average); slope: b of logit P(y = 1) = a′ + b·logit p (1 = right spread; Cox intercept = a′). "
    "Spiegelhalter's p from N(0, 1); Hosmer–Lemeshow with 10 groups at the deciles of risk, p from χ² with 10 "
    "degrees of freedom (predictions made before these patients)."
)
page.findings(result.story_findings(), title="Calibration-in-the-large and slope: two stories")

st.subheader("Hosmer–Lemeshow and its number of groups")
left, right = st.columns(2)
with left:
    ui.chart(figs["hl"], "labcl_hl")
with right:
    page.table(result.hl_table(), LABELS, "%.3g", by_quantity=True)
    st.caption(
        f"The same predictions cut into g groups at the quantiles of risk (labels: p at g = "
        f"{', '.join(map(str, HL_MARKED))}; p-values below 1e-10 are drawn on the bottom line). Where a line "
        "crosses the dashed 5% line, the verdict depends on g alone (Bertolini et al. 2000): read Hosmer–Lemeshow "
        "with the calibration curve and ICI, which have no groups to choose."
    )
page.findings(result.hl_findings(), title="What Hosmer–Lemeshow says")

st.subheader("Recalibration, judged on held-out patients")
left, right = st.columns(2)
for column, model in ((left, OVER), (right, MOVED)):
    with column:
        ui.chart(figs[f"recalibrated {model}"], f"labcl_recal_{model.split()[0]}")
for model in (OVER, MOVED):
    st.markdown(f"**{model.capitalize()}**, held-out half")
    rows = result.recalibration[result.recalibration["model"] == model]
    page.table(rows[["method", *SHOWN[1:]]], LABELS, "%.3f", task="classification", by_quantity=True)
st.caption(
    f"Each validation set split at random: the calibrators fitted on {result.sizes['n_cal']} patients, every measure "
    f"on the other {result.sizes['n_test']}. Intercept update: logit p′ = logit p + a (a = calibration-in-the-large "
    "of the fitting half); logistic recalibration: logit p′ = a + b·logit p (Platt scaling on logit p); isotonic: "
    "the non-decreasing step function closest to the outcomes (Zadrozny & Elkan 2002)."
)
page.findings(result.recalibration_findings(OVER) + result.recalibration_findings(MOVED),
              title="What each recalibration repaired")

page.finish({
    "params": params,
    "metrics": result.metrics.to_dict("list"),
    "hosmer_lemeshow": result.hosmer_lemeshow.to_dict("list"),
    "recalibration": result.recalibration.to_dict("list"),
    "methods": list(METHODS),
    "findings": result.findings(),
})
