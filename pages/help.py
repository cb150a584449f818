"""Help page: every metric's formula and paper (from the metric registry), every calibrator (from the calibrator
registry), and how to read each diagram."""

from __future__ import annotations

import streamlit as st

from calib_core.registry import calibrator_help_table, metric_help_table

DIAGRAMS: list[tuple[str, str, str]] = [
    (
        "Levi reliability diagram (RMSE vs RMV)",
        "Levi et al. 2019",
        "Rows are sorted by predicted σ and cut into equal-count bins. Each point is one bin: x = RMV = √(mean σ²), "
        "the spread the model promised; y = RMSE = √(mean ε²), the error it made (90% bootstrap interval as an error "
        "bar). Calibrated uncertainty lies on the diagonal **in every bin**. Points above the diagonal: σ too small "
        "there (over-confident); below: too large. A flat curve means σ does not track the error at all — the case "
        "the Kuleshov curve cannot see. Select bins (click, shift-click, box, lasso) to recompute the other views "
        "on their rows only (conditional calibration).",
    ),
    (
        "Quantile calibration curve (Kuleshov)",
        "Kuleshov et al. 2018; Utpala & Rai 2020",
        "For every level p the share of targets below the predicted p-quantile (p̂ = mean 1[F(y) ≤ p]). The diagonal "
        "is perfect calibration; the ribbon is where a perfectly calibrated forecaster's curve falls 95% of the time "
        "at this N (binomial band). Below the diagonal at low p and above at high p = intervals too narrow "
        "(over-confident). Averaged over all inputs, so a random but well-scaled σ can look perfect here (Levi et al. "
        "§4.1 — try the synthetic example).",
    ),
    (
        "PIT histogram",
        "Dawid 1984; Gneiting et al. 2007",
        "Histogram of u = F(y) as a density; flat at 1 when calibrated. ∪-shape: targets fall in the tails too often "
        "(over-confident); ∩-shape: under-confident; a slope: biased mean. Ensembles use the randomised rank PIT.",
    ),
    (
        "z histogram and Q-Q plot",
        "standardised residuals",
        "z = (y − μ)/σ against N(0, 1). A wider histogram (std z > 1) = σ too small; an S-shaped Q-Q plot = heavier "
        "tails than Gaussian (CRUDE's motivation for an empirical z shape).",
    ),
    (
        "Central intervals",
        "Gneiting & Raftery 2007",
        "Observed coverage of the 50–99% central intervals against their nominal coverage; hover for mean width and "
        "interval score. Below the diagonal = too narrow.",
    ),
    (
        "Classification reliability diagram",
        "Guo et al. 2017, Fig. 1",
        "Predictions are binned by confidence (15 equal-width bins by default). Bars: accuracy in each bin with a 90% "
        "Wilson interval; hatched bars: the gap to the bin's mean confidence (red = over-confident, teal = "
        "under-confident). ECE is the count-weighted mean of the gaps, MCE the largest. For binary files, *positive "
        "class* semantics plots P(y = 1) against the frequency of y = 1 instead (scikit-learn / netcal). Click bars "
        "to list their rows and per-class breakdown.",
    ),
    (
        "Confidence histogram",
        "Guo et al. 2017, Fig. 1",
        "Share of predictions per confidence bin (same bins as the reliability diagram). The dashed line is the "
        "average confidence and the dotted line the accuracy; their distance is the overall over-confidence. Sparse "
        "bins make their reliability bars noisy — their Wilson intervals say how much.",
    ),
    (
        "Per-class reliability",
        "Kull et al. 2019 (class-wise calibration)",
        "One-vs-rest: for each class k, the frequency of y = k against the mean predicted p_k per bin; marker size "
        "grows with the bin count. The table lists each class's one-vs-rest ECE (their mean is the class-wise ECE).",
    ),
]


st.title("Help")
st.markdown(
    "Calibration Lab asks whether predicted uncertainty is **right**. Every number on the diagnosis pages comes "
    "with a **bootstrap CI** (percentile interval over resampled rows) and the value a **perfectly calibrated** "
    "forecaster with the same predictions would get at the same N (targets or labels simulated from the "
    "predictions themselves; mean and central 95% range over the simulations). A value outside that range is "
    "marked *beyond noise*.\n\n"
    "Each metric has a **kind**: a *calibration statistic* measures a departure from \"the targets are draws "
    "from the predicted distributions\"; a *proper score* rewards calibration and sharpness together (its value "
    "under perfect calibration is a reference, not a test); a *descriptive* number (sharpness, widths, accuracy, "
    "…) says something about the predictions but nothing about calibration. **better** says which direction wins "
    "(≈ a target value, e.g. coverage c% ≈ c)."
)
tab_r, tab_c, tab_cal, tab_d, tab_data = st.tabs(
    ["Regression metrics", "Classification metrics", "Calibrators", "Diagrams", "Data & layouts"]
)
with tab_r:
    st.caption("Notation: ε = y − μ, z = ε/σ, u = F(y) (PIT); N rows, B σ-bins.")
    st.table(metric_help_table("regression"), hide_index=True, border="horizontal")
with tab_c:
    st.caption("Notation: p_i the predicted probability vector, ŷ_i = argmax_k p_ik, confidence = max_k p_ik.")
    st.table(metric_help_table("classification"), hide_index=True, border="horizontal")
with tab_cal:
    st.caption(
        "Every calibrator is fitted on calibration rows only and judged on held-out test rows (Recalibrate page). "
        "Parameters are shown with their defaults."
    )
    st.table(calibrator_help_table(), hide_index=True, border="horizontal")
with tab_d:
    for title, source, text in DIAGRAMS:
        st.markdown(f"#### {title}\n*{source}*\n\n{text}")
with tab_data:
    st.markdown(
        """
**Regression** — one row per example, a target column `y` plus one of: `mean` and `std` (or `var`, `log_var`);
quantile columns `q0.05`, `q0.5`, `q0.95`, … (any levels, at least 2); samples `sample_0 … sample_{M−1}` (M ≥ 2);
or `mean` only (point predictions). **Classification** — `label` (0..K−1 or class names) plus `prob_0 … prob_{K−1}`
or `logit_0 … logit_{K−1}` (binary: one `prob` / `logit` column for the positive class; top-label files:
`label, pred_label, confidence`). Optional everywhere: `split` (`cal`/`test`), `group`, `model`, features `x*`.

Names are matched case-insensitively with common aliases (`y_true`, `target`, `mu`, `sigma`, …). When guessing
fails, the Data page shows the loader's message and a column-mapping form. Rows with missing or invalid values are
dropped and counted per reason; nothing is silently lost. Templates for every layout are on the Data page.

**Papers**: Levi et al. 2019 (ENCE, RMSE-vs-RMV, STD scaling); Kuleshov et al. 2018 (quantile calibration);
Utpala & Rai 2020 (quantile regularization, PIT entropy); Zelikman et al. 2020 (CRUDE); Camporeale & Carè 2021
(ACCRUE, CRPS, reliability score); Guo et al. 2017 (ECE, MCE, temperature scaling).
"""
    )
