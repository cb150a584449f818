"""Lab 9 — why temperature scaling works (Guo et al. 2017): over-confidence, one temperature, and the bins of ECE.

Thin page: sliders, a cached call to ``calib_core.labs.temperature.run_temperature`` and its figures.  The
numbers the lab claims are stored in ``st.session_state["lab_temperature"]`` (read by the AppTest).
"""

from __future__ import annotations

import streamlit as st

import dashboard as ui
from calib_core.labs.temperature import DATASETS, run_temperature

TARGETS = {"top-label": "top_label", "positive class": "positive"}

LOOK = (
    "**What to look at.** The reliability diagram before: bars below the diagonal mean accuracy below confidence "
    "(over-confidence), above it the reverse; the hatched gaps are the difference. One temperature T divides every "
    "logit: compare the diagram after, and the accuracy, which cannot move (the order of a row's logits is kept). "
    "Histogram binning and isotonic regression are fitted on the same rows and may change predictions. Then read "
    "the ECE chart: the same predictions get a different ECE for every number of bins. On the binary data set "
    "switch between top-label and positive-class reliability — two different questions, two different ECEs. "
    "What the numbers say is listed below the table."
)
page = ui.LabPage(
    "temperature",
    {"labts_data": DATASETS[0], "labts_seed": 0, "labts_c": 1e4, "labts_cal": 0.5, "labts_bins": 15,
     "labts_target": "top-label", "labts_hist_bins": 15},
    look=LOOK,
)
c1, c2, c3, c4 = st.columns([3, 2, 2, 1.3])
c1.segmented_control("Data set", list(DATASETS), key="labts_data")
c2.select_slider("Classifier's C (inverse L2 strength)", [0.01, 0.1, 1.0, 10.0, 100.0, 1e4], key="labts_c",
                 help="Large C: nearly unregularised logistic regression — separable training data, growing logits, "
                      "over-confidence. Small C: shrunk logits, under-confidence.")
c3.slider("Calibration fraction", 0.2, 0.8, key="labts_cal", step=0.05,
          help="Share of the held-out rows used to fit the calibrators; the rest are the test rows.")
c4.number_input("Seed", 0, 10_000, key="labts_seed", step=1)
d1, d2, d3 = st.columns(3)
d1.slider("Bins M (diagrams, ECE in the table)", 5, 30, key="labts_bins")
d2.slider("Histogram-binning calibrator bins", 5, 30, key="labts_hist_bins")
binary = st.session_state["labts_data"] == DATASETS[1]
d3.segmented_control("Binary semantics", list(TARGETS), key="labts_target", disabled=not binary,
                     help="Top-label: confidence max(p, 1 − p) against 'prediction correct' (Guo). Positive class: "
                          "P(y = 1) against the frequency of y = 1 (scikit-learn's calibration_curve).")

target = TARGETS.get(st.session_state["labts_target"] or "top-label", "top_label") if binary else "top_label"
params = page.params({"dataset": "labts_data", "c": "labts_c", "cal_fraction": "labts_cal", "seed": "labts_seed",
                      "n_bins": "labts_bins", "histogram_bins": "labts_hist_bins"}, digits=4, target=target)

result = page.run(run_temperature, params, spinner="Training the classifier and calibrating…", max_entries=32)
figs = page.figures(result, ("before", "after", "histogram", "ece_bins"))

semantics = "positive-class" if result.target == "positive" else "top-label"
m1, m2, m3, m4 = st.columns(4)
m1.metric("temperature T", f"{result.temperature:.3f}")
m2.metric(f"ECE ({semantics}, M = {result.n_bins}): uncalibrated", f"{result.value('uncalibrated', 'ece'):.4f}")
m3.metric(f"ECE ({semantics}, M = {result.n_bins}): scaled by T",
          f"{result.value('temperature scaling', 'ece'):.4f}",
          delta=f"{result.value('temperature scaling', 'ece') - result.value('uncalibrated', 'ece'):.4f}",
          delta_color="inverse")
acc_before, acc_after = result.value("uncalibrated", "accuracy"), result.value("temperature scaling", "accuracy")
m4.metric("accuracy after scaling by T", f"{acc_after:.4f}", delta=f"{acc_after - acc_before:+.4f} vs before",
          delta_color="off", help="softmax(z/T) keeps the order of every row's logits: not one prediction changes.")

left, right = st.columns(2)
with left:
    ui.chart(figs["before"], "labts_before")
with right:
    ui.chart(figs["after"], "labts_after")
left, right = st.columns(2)
with left:
    ui.chart(figs["ece_bins"], "labts_ece_bins")
    st.caption("ECE on the test rows for M = 2 … 50 equal-width bins (Guo eq. 3). Few bins average over- and "
               "under-confidence away; many bins hold few rows each and add noise.")
with right:
    ui.chart(figs["histogram"], "labts_histogram")
    st.caption("Share of test rows per confidence bin, before and after temperature scaling; dashed = average "
               "confidence, dotted = accuracy (Guo et al. Fig. 1, top row). Their distance is the over-confidence.")

page.table(result.metric_table(), {"changed_predictions": "predictions changed"}, "%.4f",
           text=("method", "changed_predictions"), task="classification")
st.caption(
    f"{result.dataset}: calibrators fitted on {result.n_cal} held-out rows, scored on {result.n_test} others; "
    f"ECE and MCE with M = {result.n_bins} equal-width bins ((m−1)/M, m/M]."
)
page.findings(result.findings())

page.finish({
    "params": params,
    "temperature": result.temperature,
    "metrics": result.metrics.to_dict("list"),
    "ece_by_bins": result.ece_by_bins.to_dict("list"),
})
