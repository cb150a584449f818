"""Display tables derived from a Report's long metric table (pure pandas; no Streamlit).

The dashboard shows each metric with its bootstrap CI and the value a perfectly calibrated
forecaster with the same predicted distributions would get (Report columns, see
``calib_core.report``).  :func:`metric_display_table` adds a readable label and a verdict column
that says whether the observed value lies outside the perfect-calibration range (the central
``level`` range of the simulated values), i.e. whether the deviation is larger than noise at this N.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..report import ALL

__all__ = ["METRIC_LABELS", "METRIC_HELP", "MetricHelp", "metric_label", "metric_help", "metric_display_table"]

#: Human-readable names of the metric keys used by ``calib_core`` (unknown keys are shown as is).
METRIC_LABELS: dict[str, str] = {
    "nll": "NLL",
    "crps": "CRPS",
    "rmse": "RMSE",
    "mae": "MAE",
    "sharpness": "sharpness √mean σ²",
    "ence": "ENCE (Levi)",
    "cv": "Cv (σ dispersion)",
    "calibration_rmse": "calibration RMSE",
    "quantile_calibration_error": "l2 quantile calibration error",
    "miscalibration_area": "miscalibration area",
    "max_calibration_deviation": "max deviation (KS)",
    "reliability_score": "reliability score RS",
    "pit_entropy": "PIT entropy",
    "spearman_sigma_abs_error": "Spearman ρ(σ, |ε|)",
    "z_mean": "mean z",
    "z_std": "std z",
    "z_skewness": "skewness z",
    "z_excess_kurtosis": "excess kurtosis z",
    "ece": "ECE",
    "mce": "MCE",
    "brier": "Brier",
    "accuracy": "accuracy",
    "mean_confidence": "mean confidence",
    "classwise_ece": "class-wise ECE",
    "ece_positive": "ECE (positive class)",
    "mce_positive": "MCE (positive class)",
}


@dataclass(frozen=True)
class MetricHelp:
    """What a metric is: its formula (plain text with Unicode maths), where it comes from, how to read it."""

    formula: str
    source: str
    reading: str


_LEVI = "Levi et al. 2019, Evaluating and calibrating uncertainty prediction in regression tasks"
_KUL = "Kuleshov et al. 2018 (quantile calibration)"
_CRUDE = "Zelikman et al. 2020, CRUDE"
_QR = "Utpala & Rai 2020, Quantile regularization"
_ACC = "Camporeale & Carè 2021, ACCRUE"
_GUO = "Guo et al. 2017, On calibration of modern neural networks"

#: Formula, paper and reading guide of every metric key the Report can contain (the Help page lists them).
METRIC_HELP: dict[str, MetricHelp] = {
    "nll": MetricHelp(
        "NLL = mean_i −log f_i(y_i); Gaussian: ½log(2πσ²) + (y − μ)²/(2σ²). Classification: mean −log p_i,y_i "
        "(log-sum-exp of the logits when given).",
        "standard proper scoring rule; Levi et al. 2019 §2, Guo et al. 2017 §3",
        "Lower is better; mixes calibration and sharpness, so compare it with the perfect-calibration value.",
    ),
    "crps": MetricHelp(
        "CRPS = mean_i ∫(F_i(x) − 1[x ≥ y_i])² dx; Gaussian: σ[z(2Φ(z) − 1) + 2φ(z) − 1/√π]; ensembles: "
        "E|X − y| − ½E|X − X′|.",
        _ACC + " (eq. 5); Gneiting & Raftery 2007",
        "Lower is better; in the units of y. A proper score: rewards calibration and sharpness together.",
    ),
    "rmse": MetricHelp("RMSE = sqrt(mean_i (y_i − μ_i)²)", "accuracy of the mean", "Lower is better."),
    "mae": MetricHelp("MAE = mean_i |y_i − μ_i|", "accuracy of the mean", "Lower is better."),
    "sharpness": MetricHelp(
        "sharpness = sqrt(mean_i σ_i²)", _CRUDE + " §4; uncertainty-toolbox",
        "Smaller = more confident. Only good together with calibration (a calibrated forecaster should be sharp).",
    ),
    "ence": MetricHelp(
        "sort rows by σ, B equal-count bins; RMV_j = sqrt(mean σ²), RMSE_j = sqrt(mean ε²); "
        "ENCE = (1/B) Σ_j |RMV_j − RMSE_j| / RMV_j",
        _LEVI + " (eq. 11)",
        "0 = every σ-bin's error matches its predicted spread. Checks whether σ tracks the error (conditional "
        "calibration), which the Kuleshov curve cannot.",
    ),
    "cv": MetricHelp(
        "Cv = std(σ, ddof=1) / mean(σ)", _LEVI + " (eq. 13)",
        "Dispersion of the predicted σ: near 0 means σ is almost constant (uninformative); larger is more "
        "heteroscedastic.",
    ),
    "calibration_rmse": MetricHelp(
        "p̂_j = mean_i 1[u_i ≤ p_j] on p = 0, 0.01, …, 1; calibration RMSE = sqrt(mean_j (p̂_j − p_j)²)",
        _CRUDE + " §4",
        "0 = the PIT is uniform at every level; the Kuleshov curve's distance from the diagonal.",
    ),
    "quantile_calibration_error": MetricHelp(
        "l2 quantile calibration error = mean_j (p̂_j − p_j)² on p_j = j/100, j = 1..100",
        _QR + " (eq. 8); " + _KUL,
        "0 = calibrated in the quantile sense (marginally, averaged over all inputs).",
    ),
    "miscalibration_area": MetricHelp(
        "area = ∫₀¹ |ECDF_u(p) − p| dp (exact, no grid)", "uncertainty-toolbox; Tran et al. 2020",
        "Area between the Kuleshov curve and the diagonal; 0 is perfect, 0.5 is the worst.",
    ),
    "max_calibration_deviation": MetricHelp(
        "KS = sup_p |ECDF_u(p) − p| (exact)", _ACC + " (cal. err.); Kolmogorov–Smirnov statistic of the PIT",
        "Largest vertical gap of the Kuleshov curve; compare with the perfect-calibration range.",
    ),
    "reliability_score": MetricHelp(
        "η_i = ε_i/(√2σ_i) sorted; RS = Σ_i [η_i/N·(erf η_i + 1) − η_i/N²·(2i − 1) + exp(−η_i²)/(√π N)] − ½√(2/π)",
        _ACC + " (eq. 8)",
        "RS = ∫(Φ − C)² dη between the Gaussian and the empirical CDF of η: 0 is perfectly reliable.",
    ),
    "pit_entropy": MetricHelp(
        "H = 1/(n − k) Σ_i log((n + 1)/k · (u_(i+k) − u_(i))), k = round(√n); KL(PIT ‖ U) = −H",
        _QR + " (eq. 6), sample-spacing entropy estimator",
        "0 for a uniform PIT, negative otherwise (more negative = further from calibrated).",
    ),
    "spearman_sigma_abs_error": MetricHelp(
        "Spearman ρ between σ_i and |ε_i|", _LEVI + " (informativeness); " + _ACC,
        "Positive = larger predicted σ goes with larger errors (σ is informative); ≈ 0 = σ tells nothing.",
    ),
    "z_mean": MetricHelp("mean of z = (y − μ)/σ", "standardised residuals", "0 when calibrated; ≠ 0 = bias."),
    "z_std": MetricHelp(
        "std of z", "standardised residuals; Levi et al. 2019 (STD scaling fits s² = mean z²)",
        "1 when calibrated; > 1 over-confident (σ too small), < 1 under-confident.",
    ),
    "z_skewness": MetricHelp("skewness of z", "standardised residuals", "0 for Gaussian-shaped errors."),
    "z_excess_kurtosis": MetricHelp(
        "excess kurtosis of z", "standardised residuals", "0 for Gaussian tails; > 0 heavier tails (CRUDE §3).",
    ),
    "coverage": MetricHelp(
        "PICP = mean_i 1[y_i ∈ central interval of nominal coverage c]", "prediction-interval coverage",
        "Should equal c (e.g. 90%); below = intervals too narrow.",
    ),
    "width": MetricHelp("mean width of the central interval", "sharpness of intervals", "Smaller is sharper."),
    "interval_score": MetricHelp(
        "IS = (u − l) + (2/α)(l − y)·1[y < l] + (2/α)(y − u)·1[y > u], α = 1 − c", "Gneiting & Raftery 2007 (eq. 43)",
        "Lower is better: width plus a penalty for misses.",
    ),
    "ece": MetricHelp(
        "M bins on the confidence (equal-width ((m−1)/M, m/M], M = 15); ECE = Σ_m |B_m|/n · |acc(B_m) − conf(B_m)|",
        _GUO + " (eq. 3)",
        "0 = confidence equals accuracy in every bin; the bar gaps of the reliability diagram, weighted by bin size.",
    ),
    "mce": MetricHelp(
        "MCE = max_m |acc(B_m) − conf(B_m)| over non-empty bins", _GUO + " (eq. 5)",
        "Worst bin; noisy when bins are small (see the perfect-calibration value).",
    ),
    "accuracy": MetricHelp("mean_i 1[argmax_k p_ik = y_i]", "", "Share of correct top-label predictions."),
    "mean_confidence": MetricHelp(
        "mean_i max_k p_ik", _GUO + " (Fig. 1, avg. confidence)",
        "Above the accuracy = over-confident on average.",
    ),
    "brier": MetricHelp(
        "Brier = mean_i Σ_k (p_ik − 1[y_i = k])² (in [0, 2])", "Brier 1950",
        "Lower is better; a proper score (calibration + refinement).",
    ),
    "classwise_ece": MetricHelp(
        "mean over classes k of the one-vs-rest ECE of (p_ik, 1[y_i = k])", "Kull et al. 2019; Nixon et al. 2019",
        "Calibration of every class probability, not just the top one.",
    ),
    "ece_positive": MetricHelp(
        "ECE of P(y = 1) against the frequency of y = 1 (binary files)",
        "netcal / scikit-learn binary convention",
        "Positive-class reliability: differs from the top-label ECE, which bins max(p, 1 − p).",
    ),
    "mce_positive": MetricHelp(
        "MCE of P(y = 1) against the frequency of y = 1 (binary files)", "netcal binary convention",
        "Worst positive-class bin.",
    ),
}


def metric_help(key: str) -> MetricHelp | None:
    """Help entry of a metric key (``coverage_90`` etc. map to their family), or None."""
    if key in METRIC_HELP:
        return METRIC_HELP[key]
    for prefix in ("coverage", "width", "interval_score"):
        if key.startswith(prefix + "_"):
            return METRIC_HELP[prefix]
    return None


def metric_label(key: str) -> str:
    """Readable label of a metric key; interval metrics ``coverage_90`` → "coverage 90%" etc."""
    if key in METRIC_LABELS:
        return METRIC_LABELS[key]
    for prefix, text in (("coverage_", "coverage"), ("width_", "mean width"), ("interval_score_", "interval score")):
        if key.startswith(prefix):
            return f"{text} {key[len(prefix):]}%"
    return key


def metric_display_table(metrics: pd.DataFrame, model: str | None = None, group: str | None = ALL) -> pd.DataFrame:
    """Metric rows of one model (``None``: all models) and group, ready to display.

    Columns: ``model, metric, label, value, ci_low, ci_high, perfect, perfect_low, perfect_high,
    verdict``.  ``verdict`` is ``"beyond noise"`` when the value lies outside
    [perfect_low, perfect_high] (the range a perfectly calibrated forecaster with the same
    predictions reaches in the simulation), ``"within noise"`` when inside, and ``""`` when that range
    is degenerate (metrics that depend on the predictions only, e.g. sharpness) or missing.
    """
    m = metrics
    if model is not None:
        m = m[m["model"] == model]
    if group is not None:
        m = m[m["group"] == group]
    out = m.drop(columns=["group"]).reset_index(drop=True).copy()
    out.insert(2, "label", [metric_label(k) for k in out["metric"]])
    value = out["value"].to_numpy(dtype=float)
    lo = out["perfect_low"].to_numpy(dtype=float)
    hi = out["perfect_high"].to_numpy(dtype=float)
    informative = np.isfinite(lo) & np.isfinite(hi) & (hi > lo)
    outside = (value < lo) | (value > hi)
    out["verdict"] = np.where(informative, np.where(outside, "beyond noise", "within noise"), "")
    return out
