"""What every metric and every calibrator *is*, in one place.

Two registries, read by everything that names a metric or a calibrator (the display tables, the comparison table,
the evaluation defaults, the Help and Recalibrate pages, the exports):

* **metrics** — one :class:`Metric` per (task, key): readable label, formula, paper, how to read it, the direction
  in which a value is better (``"lower"``, ``"higher"``, a target value such as 0.9 for the 90% coverage or 1 for
  std z, or ``None`` when no direction is better), its ``kind`` (:data:`CALIBRATION`, :data:`PROPER`,
  :data:`DESCRIPTIVE`: the names of ``calib_core.base.report.KINDS``, which the inference layers read too), the function
  that computes it and that function's default options.  The interval metrics form parametrised families
  (:class:`MetricFamily`: coverage, mean width and interval score of the central interval of nominal coverage c); the
  registry holds their members at :data:`~calib_core.metrics.regression.DEFAULT_COVERAGES` and :func:`metric` builds a
  member at any other level (``"coverage_97.5"``).
* **calibrators** — one :class:`CalibratorEntry` per recalibration method: name, class, paper, task, which inputs it
  needs (feature columns, whether it works on point predictions, binary labels only), its parameters with the
  defaults read from the class's constructor signature, and the few parameters worth tuning (:class:`Tunable`:
  kind, bounds, choices).

Metric functions take the targets first: ``fn(y, dist, **options)`` for regression and
``fn(labels, probs, **options)`` for classification, returning a float.

Kinds (the next layer attaches a statistical test to every calibration statistic):

* *calibration statistic*: a statistic with the null hypothesis "the targets are draws from the predicted
  distributions" (PIT/KS, calibration RMSE, ENCE, coverage, mean z, ECE, …);
* *proper score*: a strictly proper scoring rule (NLL, CRPS, Brier, interval score); its expectation under the
  null is a reference value, not a test;
* *descriptive*: a property of the predictions or of their accuracy (sharpness, Cv, widths, RMSE, accuracy,
  Spearman ρ): no verdict.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import numpy as np
import pandas as pd

from ..base.report import CALIBRATION_STATISTIC, DESCRIPTIVE, KINDS, PROPER_SCORE
from ..diagrams import classification_corp as ccorp
from ..metrics import classification as cm
from ..metrics import classification_ratio as cratio
from ..metrics import classification_smooth as csm
from ..metrics import regression as rm
from ..metrics import regression_decomposition as rdec
from . import classification as ccal
from . import regression as rcal

__all__ = [
    "CALIBRATION",
    "PROPER",
    "DESCRIPTIVE",
    "KINDS",
    "TASKS",
    "Metric",
    "MetricFamily",
    "METRICS",
    "FAMILIES",
    "metric",
    "metrics",
    "metric_keys",
    "metric_label",
    "default_metric_keys",
    "direction_text",
    "metric_help_table",
    "DECOMPOSITION_TERMS",
    "decomposition_term",
    "decomposition_terms",
    "decomposition_help_table",
    "calibrator_help_table",
    "Tunable",
    "CalibratorEntry",
    "CALIBRATORS",
    "calibrator",
    "calibrators",
    "available_calibrators",
    "constructor_defaults",
]

CALIBRATION = CALIBRATION_STATISTIC
PROPER = PROPER_SCORE
TASKS = ("regression", "classification")

Direction = str | float | None


def _defaults(fn: Callable[..., Any], skip: Iterable[str]) -> Mapping[str, Any]:
    """Parameters of ``fn`` that have a default (keyword options), minus the data arguments in ``skip``."""
    skip = set(skip)
    out = {
        name: p.default
        for name, p in inspect.signature(fn).parameters.items()
        if p.default is not inspect.Parameter.empty and name not in skip
    }
    return MappingProxyType(out)


_DATA_ARGS = ("y", "dist", "labels", "probs", "weights", "logits", "eps")


@dataclass(frozen=True)
class Metric:
    """One metric of one task.

    ``fn(y, dist, **options)`` (regression) or ``fn(labels, probs, **options)`` (classification) computes it;
    ``options`` are its default keyword options (read from the function's signature).  ``family`` and ``level``
    are set for the members of a parametrised family (``coverage_90``: family ``"coverage"``, level 0.9).
    ``evaluate_default`` marks the metrics reported by ``cc.evaluate`` (and the Recalibrate page) by default.
    """

    key: str
    task: str
    label: str
    kind: str
    direction: Direction
    formula: str
    paper: str
    reading: str
    fn: Callable[..., float] = field(compare=False, repr=False)
    options: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}), compare=False, repr=False)
    family: str | None = None
    level: float | None = None
    evaluate_default: bool = False

    def __post_init__(self) -> None:
        if self.task not in TASKS:
            raise ValueError(f"task must be one of {TASKS}, got {self.task!r}")
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, got {self.kind!r}")
        if not (self.direction in ("lower", "higher", None) or isinstance(self.direction, float)):
            raise ValueError(f"direction must be 'lower', 'higher', a target value or None, got {self.direction!r}")

    def __call__(self, y: Any, prediction: Any, **options: Any) -> float:
        """The metric of (targets, predictions) with the default options updated by ``options``."""
        return float(self.fn(y, prediction, **{**self.options, **options}))


def _metric(key: str, task: str, label: str, kind: str, direction: Direction, formula: str, paper: str,
            reading: str, fn: Callable[..., float], *, evaluate_default: bool = False, **fixed: Any) -> Metric:
    options = MappingProxyType({**_defaults(fn, _DATA_ARGS), **fixed})
    return Metric(key, task, label, kind, direction, formula, paper, reading, fn, options,
                  evaluate_default=evaluate_default)


def _level_text(level: float) -> str:
    return f"{100 * level:g}"


@dataclass(frozen=True)
class MetricFamily:
    """A metric of the central interval of nominal coverage c, one member per level (``coverage_90`` …).

    ``direction``: ``"target"`` (the member's target value is its level c), ``"lower"``, ``"higher"`` or None.
    ``fn(y, dist, coverage=c)`` computes a member.
    """

    key: str
    task: str
    label: str  # member label: f"{label} {c}%"
    help_label: str  # the family's name in the Help page
    kind: str
    direction: str | None
    formula: str
    paper: str
    reading: str
    fn: Callable[..., float] = field(compare=False, repr=False)
    evaluate_default_levels: tuple[float, ...] = ()

    def at(self, level: float) -> Metric:
        """The member at nominal coverage ``level`` (a fraction, e.g. 0.9)."""
        level = float(level)
        if not 0.0 < level < 1.0:
            raise ValueError(f"a central interval's coverage must lie in (0, 1), got {level}")
        direction = level if self.direction == "target" else self.direction
        return Metric(
            key=f"{self.key}_{_level_text(level)}", task=self.task, label=f"{self.label} {_level_text(level)}%",
            kind=self.kind, direction=direction, formula=self.formula, paper=self.paper, reading=self.reading,
            fn=self.fn, options=MappingProxyType({"coverage": level}), family=self.key, level=level,
            evaluate_default=any(np.isclose(level, lv) for lv in self.evaluate_default_levels),
        )

    def level_of(self, key: str) -> float | None:
        """The level of a member key (``"coverage_97.5"`` → 0.975), or None when ``key`` is not a member."""
        prefix = self.key + "_"
        if not key.startswith(prefix):
            return None
        try:
            level = float(key[len(prefix):]) / 100.0
        except ValueError:
            return None
        return level if 0.0 < level < 1.0 else None


# =============================================================================================
# metric functions with the (targets, predictions) signature where the public function differs
# =============================================================================================


def _cv(y: Any, dist: Any) -> float:
    return rm.cv(dist=dist, y=y)


def _z_moment(name: str) -> Callable[[Any, Any], float]:
    def moment(y: Any, dist: Any) -> float:
        return rm.standardized_residual_stats(y, dist)[name]

    moment.__name__ = name
    moment.__qualname__ = name
    return moment


def _interval_column(column: str) -> Callable[..., float]:
    def value(y: Any, dist: Any, *, coverage: float = 0.9) -> float:
        return float(rm.interval_table(y, dist, coverages=[coverage])[column].iloc[0])

    value.__name__ = column
    value.__qualname__ = column
    return value


def _mean_confidence(labels: Any, probs: Any, *, weights: Any = None) -> float:
    return float(np.average(cm.top_label(cm.as_probabilities(probs))[1], weights=weights))


def _positive(fn: Callable[..., float]) -> Callable[..., float]:
    def positive(labels: Any, probs: Any, *, n_bins: int = 15, strategy: cm.Strategy = "uniform",
                 closed: cm.Closed = "right", weights: Any = None) -> float:
        return fn(labels, probs, n_bins=n_bins, strategy=strategy, closed=closed, target="positive", weights=weights)

    positive.__name__ = f"{fn.__name__}_positive"
    positive.__qualname__ = positive.__name__
    return positive


# =============================================================================================
# the metric registry
# =============================================================================================

_LEVI = "Levi et al. 2019, Evaluating and calibrating uncertainty prediction in regression tasks"
_KUL = "Kuleshov et al. 2018 (quantile calibration)"
_CRUDE = "Zelikman et al. 2020, CRUDE"
_QR = "Utpala & Rai 2020, Quantile regularization"
_ACC = "Camporeale & Carè 2021, ACCRUE"
_GUO = "Guo et al. 2017, On calibration of modern neural networks"
_PERNOT_ZMS = ("Pernot 2023, Calibration in machine learning uncertainty quantification: beyond consistency to "
               "target adaptivity (APL Mach. Learn.); Pernot 2024, arXiv 2402.10043")
_PERNOT_HEAVY = ("Pernot 2024, Negative impact of heavy-tailed uncertainty and error distributions on the reliability "
                 "of calibration statistics for machine learning regression tasks (arXiv 2402.10043)")
_TCE = "Matsubara, Tax, Mudd & Guy 2023, TCE: A test-based approach to measuring calibration error"
_SMECE = "Błasiok & Nakkiran 2023, Smooth ECE: Principled reliability diagrams via kernel smoothing"
_R, _C = "regression", "classification"

_REGRESSION: tuple[Metric, ...] = (
    _metric(
        "calibration_rmse", _R, "calibration RMSE", CALIBRATION, "lower",
        "p̂_j = mean_i 1[u_i ≤ p_j] on p = 0, 0.01, …, 1; calibration RMSE = sqrt(mean_j (p̂_j − p_j)²)",
        _CRUDE + " §4",
        "0 = the PIT is uniform at every level; the Kuleshov curve's distance from the diagonal.",
        rm.calibration_rmse, evaluate_default=True,
    ),
    _metric(
        "quantile_calibration_error", _R, "l2 quantile calibration error", CALIBRATION, "lower",
        "l2 quantile calibration error = mean_j (p̂_j − p_j)² on p_j = j/100, j = 1..100",
        _QR + " (eq. 8); " + _KUL,
        "0 = calibrated in the quantile sense (marginally, averaged over all inputs).",
        rm.quantile_calibration_error, evaluate_default=True,
    ),
    _metric(
        "miscalibration_area", _R, "miscalibration area", CALIBRATION, "lower",
        "area = ∫₀¹ |ECDF_u(p) − p| dp (exact, no grid)", "uncertainty-toolbox; Tran et al. 2020",
        "Area between the Kuleshov curve and the diagonal; 0 is perfect, 0.5 is the worst.",
        rm.miscalibration_area, evaluate_default=True,
    ),
    _metric(
        "max_calibration_deviation", _R, "max deviation (KS)", CALIBRATION, "lower",
        "KS = sup_p |ECDF_u(p) − p| (exact)", _ACC + " (cal. err.); Kolmogorov–Smirnov statistic of the PIT",
        "Largest vertical gap of the Kuleshov curve; compare with the perfect-calibration range.",
        rm.max_calibration_deviation, evaluate_default=True,
    ),
    _metric(
        "ence", _R, "ENCE (Levi)", CALIBRATION, "lower",
        "sort rows by σ, B equal-count bins; RMV_j = sqrt(mean σ²), RMSE_j = sqrt(mean ε²); "
        "ENCE = (1/B) Σ_j |RMV_j − RMSE_j| / RMV_j",
        _LEVI + " (eq. 11)",
        "0 = every σ-bin's error matches its predicted spread. Checks whether σ tracks the error (conditional "
        "calibration), which the Kuleshov curve cannot.",
        rm.ence, evaluate_default=True,
    ),
    _metric(
        "cv", _R, "Cv (σ dispersion)", DESCRIPTIVE, None,
        "Cv = std(σ, ddof=1) / mean(σ)", _LEVI + " (eq. 13)",
        "Dispersion of the predicted σ: near 0 means σ is almost constant (uninformative); larger is more "
        "heteroscedastic.",
        _cv, evaluate_default=True,
    ),
    _metric(
        "nll", _R, "NLL", PROPER, "lower",
        "NLL = mean_i −log f_i(y_i); Gaussian: ½log(2πσ²) + (y − μ)²/(2σ²).",
        "standard proper scoring rule; Levi et al. 2019 §2",
        "Lower is better; mixes calibration and sharpness, so compare it with the perfect-calibration value.",
        rm.nll, evaluate_default=True,
    ),
    _metric(
        "crps", _R, "CRPS", PROPER, "lower",
        "CRPS = mean_i ∫(F_i(x) − 1[x ≥ y_i])² dx; Gaussian: σ[z(2Φ(z) − 1) + 2φ(z) − 1/√π]; ensembles: "
        "E|X − y| − ½E|X − X′|.",
        _ACC + " (eq. 5); Gneiting & Raftery 2007",
        "Lower is better; in the units of y. A proper score: rewards calibration and sharpness together.",
        rm.crps, evaluate_default=True,
    ),
    _metric(
        "sharpness", _R, "sharpness √mean σ²", DESCRIPTIVE, None,
        "sharpness = sqrt(mean_i σ_i²)", _CRUDE + " §4; uncertainty-toolbox",
        "Smaller = more confident. Only good together with calibration (a calibrated forecaster should be sharp).",
        rm.sharpness, evaluate_default=True,
    ),
    _metric(
        "rmse", _R, "RMSE", DESCRIPTIVE, "lower", "RMSE = sqrt(mean_i (y_i − μ_i)²)", "accuracy of the mean",
        "Lower is better.", rm.rmse, evaluate_default=True,
    ),
    _metric(
        "reliability_score", _R, "reliability score RS", CALIBRATION, "lower",
        "η_i = ε_i/(√2σ_i) sorted; RS = Σ_i [η_i/N·(erf η_i + 1) − η_i/N²·(2i − 1) + exp(−η_i²)/(√π N)] − ½√(2/π)",
        _ACC + " (eq. 8)",
        "RS = ∫(Φ − C)² dη between the Gaussian and the empirical CDF of η: 0 is perfectly reliable.",
        rm.reliability_score, evaluate_default=True,
    ),
    _metric(
        "pit_entropy", _R, "PIT entropy", CALIBRATION, "higher",
        "H = 1/(n − k) Σ_i log((n + 1)/k · (u_(i+k) − u_(i))), k = round(√n); KL(PIT ‖ U) = −H",
        _QR + " (eq. 6), sample-spacing entropy estimator",
        "0 for a uniform PIT, negative otherwise (more negative = further from calibrated).",
        rm.pit_entropy, evaluate_default=True,
    ),
    _metric(
        "mae", _R, "MAE", DESCRIPTIVE, "lower", "MAE = mean_i |y_i − μ_i|", "accuracy of the mean", "Lower is better.",
        rm.mae,
    ),
    _metric(
        "spearman_sigma_abs_error", _R, "Spearman ρ(σ, |ε|)", DESCRIPTIVE, "higher",
        "Spearman ρ between σ_i and |ε_i|", _LEVI + " (informativeness); " + _ACC,
        "Positive = larger predicted σ goes with larger errors (σ is informative); ≈ 0 = σ tells nothing.",
        rm.spearman_sigma_error,
    ),
    _metric(
        "z_mean", _R, "mean z", CALIBRATION, 0.0, "mean of z = (y − μ)/σ", "standardised residuals",
        "0 when calibrated; ≠ 0 = bias.", _z_moment("z_mean"),
    ),
    _metric(
        "z_std", _R, "std z", CALIBRATION, 1.0,
        "std of z", "standardised residuals; Levi et al. 2019 (STD scaling fits s² = mean z²)",
        "1 when calibrated; > 1 over-confident (σ too small), < 1 under-confident.", _z_moment("z_std"),
    ),
    _metric(
        "z_skewness", _R, "skewness z", CALIBRATION, 0.0, "skewness of z", "standardised residuals",
        "0 for Gaussian-shaped errors.", _z_moment("z_skewness"),
    ),
    _metric(
        "z_excess_kurtosis", _R, "excess kurtosis z", CALIBRATION, 0.0,
        "excess kurtosis of z", "standardised residuals", "0 for Gaussian tails; > 0 heavier tails (CRUDE §3).",
        _z_moment("z_excess_kurtosis"),
    ),
    # heavy-tail-robust statistics (Pernot 2023–24; calib_core.metrics.regression_tails)
    _metric(
        "zms", _R, "ZMS (mean z²)", CALIBRATION, 1.0,
        "ZMS = mean_i z_i², z = (y − μ)/σ; under calibration E z² = 1 for any error law; N·ZMS ~ χ²_N for "
        "Gaussians",
        _PERNOT_ZMS,
        "1 when the variances are calibrated on average; > 1 σ too small, < 1 σ too large. A mean of ratios: "
        "much less sensitive than MSE − mean σ² to a few huge σ or errors (heavy tails).",
        rm.zms,
    ),
    _metric(
        "mean_log_z2", _R, "mean log z² (robust ZMS)", CALIBRATION, rm.LOG_CHI2_1_MEAN,
        "mean_i log z_i² (rows with z = 0 left out); reference for calibrated Gaussian z: "
        "E log χ²₁ = ψ(½) + log 2 ≈ −1.2704, variance π²/2",
        _PERNOT_HEAVY,
        "≈ −1.27 when calibrated with Gaussian errors; higher = σ too small (σ → cσ shifts it by −2 log c). All "
        "its moments exist even when z has heavy tails, so its interval holds where ZMS's does not; but its "
        "reference moves with the error law (unit-variance Student-t₅ errors: −1.57).",
        rm.mean_log_z2,
    ),
)

#: The interval families (regression), in the order of the report.
FAMILIES: tuple[MetricFamily, ...] = (
    MetricFamily(
        "coverage", _R, "coverage", "coverage c% (PICP)", CALIBRATION, "target",
        "PICP = mean_i 1[y_i ∈ central interval of nominal coverage c]", "prediction-interval coverage",
        "Should equal c (e.g. 90%); below = intervals too narrow.",
        rm.interval_coverage, evaluate_default_levels=(0.9,),
    ),
    MetricFamily(
        "width", _R, "mean width", "mean width c%", DESCRIPTIVE, None,
        "mean width of the central interval", "sharpness of intervals", "Smaller is sharper.",
        _interval_column("mean_width"), evaluate_default_levels=(0.9,),
    ),
    MetricFamily(
        "interval_score", _R, "interval score", "interval score c%", PROPER, "lower",
        "IS = (u − l) + (2/α)(l − y)·1[y < l] + (2/α)(y − u)·1[y > u], α = 1 − c", "Gneiting & Raftery 2007 (eq. 43)",
        "Lower is better: width plus a penalty for misses.",
        _interval_column("interval_score"),
    ),
)

_CLASSIFICATION: tuple[Metric, ...] = (
    _metric(
        "ece", _C, "ECE", CALIBRATION, "lower",
        "M bins on the confidence (equal-width ((m−1)/M, m/M], M = 15); ECE = Σ_m |B_m|/n · |acc(B_m) − conf(B_m)|",
        _GUO + " (eq. 3)",
        "0 = confidence equals accuracy in every bin; the bar gaps of the reliability diagram, weighted by bin size.",
        cm.ece, evaluate_default=True,
    ),
    # -- smooth ECE ----------------------------------------------------------------------------
    _metric(
        "smooth_ece", _C, "smooth ECE", CALIBRATION, "lower",
        "h_σ(t) = (1/N) Σ_i K_σ(t, c_i)(1[ŷ_i = y_i] − c_i), K_σ the Gaussian reflected at 0 and 1; "
        "smECE_σ = ∫₀¹ |h_σ(t)| dt; smECE = σ* with smECE_σ* = σ* (automatic bandwidth)",
        _SMECE,
        "0 = the kernel-smoothed reliability curve lies on the diagonal. Like ECE without a binning choice: the "
        "bandwidth σ* is chosen by the data (it equals the value), and the number is consistent (it cannot be made "
        "small or large by picking bins).",
        csm.smooth_ece,
    ),
    _metric(
        "smooth_ece_positive", _C, "smooth ECE (positive class)", CALIBRATION, "lower",
        "smooth ECE of P(y = 1) against 1[y = 1] (binary files)", _SMECE,
        "Positive-class reliability without bins (differs from the top-label smooth ECE, which smooths max(p, 1 − p)).",
        csm.smooth_ece, target="positive",
    ),
    _metric(
        "mce", _C, "MCE", CALIBRATION, "lower",
        "MCE = max_m |acc(B_m) − conf(B_m)| over non-empty bins", _GUO + " (eq. 5)",
        "Worst bin; noisy when bins are small (see the perfect-calibration value).",
        cm.mce, evaluate_default=True,
    ),
    _metric(
        "nll", _C, "NLL", PROPER, "lower",
        "NLL = mean_i −log p_i,y_i (log-sum-exp of the logits when given).",
        "standard proper scoring rule; Guo et al. 2017 §3",
        "Lower is better; mixes calibration and sharpness, so compare it with the perfect-calibration value.",
        cm.nll, evaluate_default=True,
    ),
    _metric(
        "brier", _C, "Brier", PROPER, "lower",
        "Brier = mean_i Σ_k (p_ik − 1[y_i = k])² (in [0, 2])", "Brier 1950",
        "Lower is better; a proper score (calibration + refinement).",
        cm.brier, evaluate_default=True,
    ),
    _metric(
        "accuracy", _C, "accuracy", DESCRIPTIVE, "higher", "mean_i 1[argmax_k p_ik = y_i]", "",
        "Share of correct top-label predictions.", cm.accuracy, evaluate_default=True,
    ),
    _metric(
        "mean_confidence", _C, "mean confidence", DESCRIPTIVE, None,
        "mean_i max_k p_ik", _GUO + " (Fig. 1, avg. confidence)",
        "Above the accuracy = over-confident on average.", _mean_confidence, evaluate_default=True,
    ),
    _metric(
        "classwise_ece", _C, "class-wise ECE", CALIBRATION, "lower",
        "mean over classes k of the one-vs-rest ECE of (p_ik, 1[y_i = k])", "Kull et al. 2019; Nixon et al. 2019",
        "Calibration of every class probability, not just the top one.", cm.classwise_ece, evaluate_default=True,
    ),
    _metric(
        "ece_positive", _C, "ECE (positive class)", CALIBRATION, "lower",
        "ECE of P(y = 1) against the frequency of y = 1 (binary files)",
        "netcal / scikit-learn binary convention",
        "Positive-class reliability: differs from the top-label ECE, which bins max(p, 1 − p).",
        _positive(cm.ece), evaluate_default=True,
    ),
    _metric(
        "mce_positive", _C, "MCE (positive class)", CALIBRATION, "lower",
        "MCE of P(y = 1) against the frequency of y = 1 (binary files)", "netcal binary convention",
        "Worst positive-class bin.", _positive(cm.mce), evaluate_default=True,
    ),
    # -- binary and ads-style summaries ------------------------------------------------------
    _metric(
        "calibration_ratio", _C, "calibration ratio Σp/Σy", CALIBRATION, 1.0,
        "R = Σ_i c_i / Σ_i 1[ŷ_i = y_i] (= mean confidence / accuracy); interval: log R ± z·se, "
        "se² = var(c/c̄ − hit/h̄)/N (delta method)",
        "calibration ratio of click-through models (expected / observed events)",
        "1 = right on average; > 1 over-predicts (over-confident), < 1 under-predicts. Blind to errors that cancel "
        "across probabilities: read it with ECE.",
        cratio.calibration_ratio,
    ),
    _metric(
        "calibration_ratio_positive", _C, "calibration ratio Σp/Σy (positive class)", CALIBRATION, 1.0,
        "R = Σ_i P(y_i = 1) / #{y_i = 1} (binary files)",
        "calibration ratio of click-through models (expected / observed events)",
        "1 = as many positives as predicted; > 1 the model predicts more positives than occur.",
        cratio.calibration_ratio, target="positive",
    ),
    _metric(
        "tce", _C, "TCE (%)", CALIBRATION, "lower",
        "10 equal-mass bins of the confidence; TCE = 100 · #{rows whose confidence the exact binomial test of their "
        "bin's accuracy rejects at 5%} / N",
        _TCE,
        "Share of predictions that differ significantly from their bin's frequency. Grows with N even for a "
        "calibrated model (compare with the perfectly calibrated value); no interval (no N-free population value).",
        cratio.tce,
    ),
    _metric(
        "tce_positive", _C, "TCE (%, positive class)", CALIBRATION, "lower",
        "TCE of P(y = 1) against y (binary files)", _TCE,
        "Positive-class TCE (the paper's binary setting).",
        cratio.tce, target="positive",
    ),
)

#: Every metric of both tasks; the interval families at the report's coverages (DEFAULT_COVERAGES).
METRICS: tuple[Metric, ...] = (
    _REGRESSION
    + tuple(fam.at(c) for fam in FAMILIES for c in rm.DEFAULT_COVERAGES)
    + _CLASSIFICATION
)

_BY_KEY: dict[tuple[str, str], Metric] = {(m.task, m.key): m for m in METRICS}
if len(_BY_KEY) != len(METRICS):  # pragma: no cover - a registry edit gone wrong
    raise RuntimeError("duplicate (task, key) in the metric registry")


def _check_task(task: str | None) -> None:
    if task is not None and task not in TASKS:
        raise ValueError(f"task must be one of {TASKS} or None, got {task!r}")


def metric(key: str, task: str | None = None) -> Metric:
    """The registry entry of ``key`` (``task`` None: regression first, then classification).

    Interval family members at any level resolve (``"coverage_97.5"``), and so do the decomposition terms
    (:data:`DECOMPOSITION_TERMS`, ``"mcb_brier"``).  Raises ``KeyError`` for unknown keys.
    """
    _check_task(task)
    for t in (task,) if task is not None else TASKS:
        if (t, key) in _BY_KEY:
            return _BY_KEY[(t, key)]
        for fam in FAMILIES:
            if fam.task == t and (level := fam.level_of(key)) is not None:
                return fam.at(level)
        for m in DECOMPOSITION_TERMS:  # e.g. the MCB–DSC plane's per-trial terms in a comparison table
            if m.task == t and m.key == key:
                return m
    raise KeyError(f"unknown metric {key!r}" + (f" for {task}" if task else ""))


def metrics(task: str | None = None, kind: str | None = None) -> list[Metric]:
    """Registry entries in registry order, optionally of one task and/or one kind."""
    _check_task(task)
    if kind is not None and kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS} or None, got {kind!r}")
    return [m for m in METRICS if (task is None or m.task == task) and (kind is None or m.kind == kind)]


def metric_keys(task: str, kind: str | None = None) -> list[str]:
    """Keys of one task's metrics in registry order."""
    return [m.key for m in metrics(task, kind)]


def default_metric_keys(task: str) -> tuple[str, ...]:
    """The metrics ``cc.evaluate`` reports by default for ``task``."""
    return tuple(m.key for m in metrics(task) if m.evaluate_default)


def metric_label(key: str, task: str | None = None) -> str:
    """Readable label of a metric key (``coverage_90`` → "coverage 90%"); unknown keys are returned as is."""
    try:
        return metric(key, task).label
    except KeyError:
        return key


def direction_text(direction: Direction) -> str:
    """"lower", "higher", "≈ 0.9" for a target value, "" when no direction is better."""
    if direction is None or (isinstance(direction, float) and np.isnan(direction)):  # NaN: None in a float column
        return ""
    if isinstance(direction, float):
        return f"≈ {direction:g}"
    return direction


def metric_help_table(task: str) -> pd.DataFrame:
    """One row per metric of ``task`` (an interval family once, as "coverage c%"): metric, kind, better,
    formula, paper, how to read it."""
    rows = []
    shown: set[str] = set()
    for m in metrics(task):
        if m.family is not None:
            if m.family in shown:
                continue
            shown.add(m.family)
            fam = next(f for f in FAMILIES if f.key == m.family)
            name = fam.help_label
            better = "≈ c" if fam.direction == "target" else direction_text(fam.direction)
        else:
            name, better = m.label, direction_text(m.direction)
        rows.append({"metric": name, "kind": m.kind, "better": better, "formula": m.formula, "paper": m.paper,
                     "how to read it": m.reading})
    return pd.DataFrame(rows, columns=["metric", "kind", "better", "formula", "paper", "how to read it"])


# =============================================================================================
# score decompositions S = MCB − DSC + UNC: the terms of the CORP lenses
# =============================================================================================
# Not report metrics (``cc.diagnose`` does not compute them; the CORP views and their tables do), so they are kept
# out of METRICS and described here with the same fields.

_CORP = "Dimitriadis, Gneiting & Jordan 2021, Stable reliability diagrams for probabilistic classifiers (PNAS), eq. 4"
_QCORP = ("Gneiting, Wolffram, Resin, Kraus, Bracher, Dimitriadis, Hagenmeyer, Jordan, Lerch, Phipps & Schienle 2023, "
          "Model diagnostics and forecast evaluation for quantiles (Annu. Rev. Stat. Appl. 10), §4")
_SCORE_TEXT = {"brier": ("Brier", "S(x, y) = (x − y)²"), "log": ("log", "S(x, y) = −y log x − (1 − y) log(1 − x)")}


def _corp_term(score: str, term: str) -> Callable[..., float]:
    def value(labels: Any, probs: Any, *, target: str = "top_label") -> float:
        x, y = ccorp.binary_events(labels, probs, target=target)  # type: ignore[arg-type]
        return float(ccorp.decompose(np.clip(x, 0.0, 1.0), y, score=score)[term])  # type: ignore[arg-type]

    value.__name__ = value.__qualname__ = f"{term}_{score}"
    return value


def _quantile_term(term: str) -> Callable[..., float]:
    def value(y: Any, dist: Any, *, tau: float = 0.5) -> float:
        return float(rdec.quantile_score_decomposition(y, dist, levels=[tau], n_boot=0)[term].iloc[0])

    value.__name__ = value.__qualname__ = f"{term}_qs"
    return value


def _decomposition_terms() -> tuple[Metric, ...]:
    out = []
    for score, (name, formula) in _SCORE_TEXT.items():
        base = (f"binary event x ∈ [0, 1], y ∈ {{0, 1}} (top label: confidence and correctness; positive class: "
                f"P(y = 1) and 1[y = 1]); {formula}; x̂ = PAV(y | x) (CORP curve), ȳ the base rate")
        out += [
            _metric(f"mcb_{score}", _C, f"MCB ({name})", CALIBRATION, "lower",
                    f"MCB = S̄(x) − S̄(x̂) ≥ 0; {base}", _CORP,
                    "Miscalibration: what the isotonic recalibration would save. Compare it with the MCB a calibrated "
                    "forecaster gets at this N (PAV fits noise); its test redraws labels from the forecasts.",
                    _corp_term(score, "mcb")),
            _metric(f"dsc_{score}", _C, f"DSC ({name})", DESCRIPTIVE, "higher",
                    f"DSC = S̄(ȳ) − S̄(x̂) ≥ 0; {base}", _CORP,
                    "Discrimination: what the forecast's ordering is worth over the base rate once recalibrated.",
                    _corp_term(score, "dsc")),
            _metric(f"unc_{score}", _C, f"UNC ({name})", DESCRIPTIVE, None,
                    f"UNC = S̄(ȳ) (Brier: ȳ(1 − ȳ); log: the entropy of ȳ); S̄(x) = MCB − DSC + UNC; {base}", _CORP,
                    "Uncertainty: the difficulty of the events, the same for every forecaster of them.",
                    _corp_term(score, "unc")),
        ]
    qbase = ("QS_τ(x, y) = (1{y ≤ x} − τ)(x − y), x = F⁻¹(τ) the predicted τ-quantile; x̂ = the isotonic τ-quantile "
             "regression of y on x; r = the marginal τ-quantile of y")
    out += [
        _metric("mcb_qs", _R, "MCB (quantile score)", CALIBRATION, "lower", f"MCB = Q̄S(x) − Q̄S(x̂) ≥ 0; {qbase}",
                _QCORP, "Miscalibration of the predicted τ-quantile: what an increasing recalibration would save "
                "(read it as a share of the score; a calibrated forecaster's is PAV's overfit alone).",
                _quantile_term("mcb")),
        _metric("dsc_qs", _R, "DSC (quantile score)", DESCRIPTIVE, "higher", f"DSC = Q̄S(r) − Q̄S(x̂) ≥ 0; {qbase}",
                _QCORP, "Discrimination: what the forecast's ordering of the targets is worth at level τ.",
                _quantile_term("dsc")),
        _metric("unc_qs", _R, "UNC (quantile score)", DESCRIPTIVE, None,
                f"UNC = Q̄S(r); Q̄S(x) = MCB − DSC + UNC; {qbase}", _QCORP,
                "Uncertainty: the quantile score of the constant marginal quantile.", _quantile_term("unc")),
    ]
    return tuple(out)


#: The terms of the score decompositions (CORP: Brier and log scores of a binary event; the quantile score at a
#: level τ), described like the metrics; not in :data:`METRICS` (no report computes them).
DECOMPOSITION_TERMS: tuple[Metric, ...] = _decomposition_terms()


def decomposition_terms(task: str | None = None) -> list[Metric]:
    """The decomposition terms of ``task`` (all when None), in registry order."""
    _check_task(task)
    return [m for m in DECOMPOSITION_TERMS if task is None or m.task == task]


def decomposition_term(key: str, task: str | None = None) -> Metric:
    """The entry of a decomposition term (``"mcb_brier"``, ``"dsc_qs"``, …); ``KeyError`` when unknown."""
    for m in decomposition_terms(task):
        if m.key == key:
            return m
    raise KeyError(f"unknown decomposition term {key!r}")


def decomposition_help_table() -> pd.DataFrame:
    """One row per decomposition term: term, task, kind, better, formula, paper, how to read it."""
    return pd.DataFrame(
        [{"term": m.label, "task": m.task, "kind": m.kind, "better": direction_text(m.direction), "formula": m.formula,
          "paper": m.paper, "how to read it": m.reading} for m in DECOMPOSITION_TERMS],
        columns=["term", "task", "kind", "better", "formula", "paper", "how to read it"])


# =============================================================================================
# the calibrator registry
# =============================================================================================


def constructor_defaults(cls: type) -> dict[str, Any]:
    """Constructor parameters of ``cls`` with their defaults (from ``inspect.signature``)."""
    return {
        name: p.default
        for name, p in inspect.signature(cls.__init__).parameters.items()
        if name != "self" and p.kind not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
    }


@dataclass(frozen=True)
class Tunable:
    """A constructor parameter worth tuning: ``kind`` "bool", "int", "float", "choice", "feature" (the name of a
    feature column) or "slice" (a column slices come from: ``"group"`` or a feature column), bounds
    ``low``/``high`` for numbers, ``options`` for choices, a short ``label`` and ``help``.  The default is the
    constructor's (see :attr:`CalibratorEntry.parameters`)."""

    name: str
    label: str
    kind: str
    low: float | None = None
    high: float | None = None
    options: tuple[Any, ...] = ()
    help: str | None = None


@dataclass(frozen=True)
class CalibratorEntry:
    """One recalibration method.

    ``needs_features``: needs feature columns (``x*``); ``point_ok``: works on point predictions (estimates σ);
    ``binary_only``: two classes only; ``needs_slices``: a slice-wise method, fitted per slice of a group or feature
    column (``uses_groups``: it takes ``groups=`` in fit and transform).  ``tunable`` lists the parameters offered for
    tuning; ``default`` marks the methods compared by default.
    """

    name: str
    cls: type
    task: str
    paper: str
    tunable: tuple[Tunable, ...] = ()
    needs_features: bool = False
    point_ok: bool = False
    binary_only: bool = False
    default: bool = False
    needs_slices: bool = False

    def __post_init__(self) -> None:
        if self.task not in TASKS:
            raise ValueError(f"task must be one of {TASKS}, got {self.task!r}")
        missing = [t.name for t in self.tunable if t.name not in constructor_defaults(self.cls)]
        if missing:
            raise ValueError(f"{self.cls.__name__} has no parameter(s) {missing}")

    @property
    def parameters(self) -> dict[str, Any]:
        """Every constructor parameter with its default."""
        return constructor_defaults(self.cls)

    def default_of(self, name: str) -> Any:
        return self.parameters[name]

    def make(self, **params: Any) -> Any:
        """An unfitted instance with ``params`` (the others at their defaults)."""
        return self.cls(**params)


_SLICE_BY = Tunable("by", "slice column", "slice",
                    help="The group column or a feature column (numeric features: 5 equal-count bins); one fit per "
                         "slice on its calibration rows.")
_MIN_ROWS = Tunable("min_rows", "min calibration rows per slice", "int", 1, 100000,
                    help="A slice with fewer calibration rows, or one absent from them, uses the global fit.")

CALIBRATORS: tuple[CalibratorEntry, ...] = (
    CalibratorEntry("std scaling", rcal.StdScaling, _R, "σ' = sσ, s² = mean z² (Levi et al. 2019, eq. 12)",
                    default=True),
    CalibratorEntry("MLE + shift", rcal.GaussianShiftScale, _R, "μ' = μ + mσ, σ' = sσ (CRUDE's Gaussian baseline)"),
    CalibratorEntry(
        "isotonic (Kuleshov)", rcal.IsotonicRecalibration, _R, "R∘F with R isotonic (Kuleshov et al. 2018)",
        (Tunable("add_endpoint", "add the (1, 1) end point", "bool",
                 help="Quantile regularization §3: avoids a truncated support"),),
        default=True,
    ),
    CalibratorEntry("CRUDE", rcal.CRUDE, _R, "μ + σ·Ẑ, empirical z-scores (Zelikman et al.)", default=True),
    CalibratorEntry(
        "split conformal", rcal.SplitConformal, _R, "μ ± σ·q on |z| (split conformal)",
        (Tunable("signed", "signed scores", "bool", help="asymmetric intervals from signed z"),),
    ),
    CalibratorEntry(
        "σ-binning", rcal.SigmaBinning, _R, "σ' = RMSE of the σ-bin (Levi et al. §3.1)",
        (Tunable("n_bins", "σ-bins", "int", 2, 500), Tunable("mode", "map", "choice", options=("rmse", "ratio"))),
        default=True,
    ),
    CalibratorEntry("σ-isotonic", rcal.SigmaIsotonic, _R, "σ'² = isotonic regression of ε² on σ (Levi et al. §3.1)"),
    CalibratorEntry("constant σ", rcal.ConstantSigma, _R, "σ' = calibration RMSE (ACCRUE Table 1)", point_ok=True),
    CalibratorEntry(
        "k-means σ", rcal.KMeansSigma, _R, "σ' = RMSE of the k-means cluster of x (ACCRUE Table 1)",
        (Tunable("n_clusters", "clusters", "int", 1, 200),),
        needs_features=True, point_ok=True,
    ),
    CalibratorEntry(
        "ACCRUE", rcal.ACCRUE, _R, "σ(x) minimising β·CRPS + (1 − β)·RS (Camporeale & Carè)",
        (Tunable("model", "σ(x) model", "choice", options=("polynomial", "mlp")),
         Tunable("feature", "feature (polynomial)", "feature"),
         Tunable("max_degree", "max degree", "int", 0, 10)),
        needs_features=True, point_ok=True,
    ),
    # -- slice-wise ------------------------------------------------------------------------
    CalibratorEntry(
        "std scaling per slice", rcal.GroupStdScaling, _R,
        "σ' = s_g σ, s_g² = mean z² over the calibration rows of slice g (Levi et al. 2019 eq. 12, per slice)",
        (_SLICE_BY, _MIN_ROWS), needs_slices=True, point_ok=True,
    ),
    CalibratorEntry(
        "Mondrian conformal", rcal.MondrianConformal, _R,
        "μ ± σ·q_g, q_g the ⌈(L_g + 1)(1 − α)⌉-th |z| of slice g (Vovk et al. 2003, Mondrian confidence machine)",
        (_SLICE_BY, _MIN_ROWS, Tunable("signed", "signed scores", "bool", help="asymmetric intervals from signed z")),
        needs_slices=True, point_ok=True,
    ),
    CalibratorEntry("temperature scaling", ccal.TemperatureScaling, _C, "softmax(z/T) (Guo et al. 2017 §4.2)",
                    default=True),
    CalibratorEntry(
        "temperature scaling per slice", ccal.GroupTemperatureScaling, _C,
        "softmax(z/T_g), T_g minimising the NLL of slice g (Guo et al. 2017 §4.2, per slice)",
        (_SLICE_BY, _MIN_ROWS), needs_slices=True,
    ),
    CalibratorEntry("vector scaling", ccal.VectorScaling, _C, "diag(W)·z + b (Guo §4.2)",
                    (Tunable("l2", "L2 penalty", "float", 0.0, 1000.0),)),
    CalibratorEntry("matrix scaling", ccal.MatrixScaling, _C, "W·z + b (Guo §4.2)",
                    (Tunable("l2", "L2 penalty", "float", 0.0, 1000.0),)),
    CalibratorEntry("Platt scaling", ccal.PlattScaling, _C, "σ(a·z + b) (Platt 1999)", binary_only=True),
    CalibratorEntry(
        "histogram binning", ccal.HistogramBinning, _C, "bin frequency (Zadrozny & Elkan 2001)",
        (Tunable("n_bins", "bins", "int", 2, 500),
         Tunable("strategy", "bins", "choice", options=("uniform", "quantile"))),
        default=True,
    ),
    CalibratorEntry(
        "isotonic", ccal.IsotonicCalibration, _C, "isotonic regression (Zadrozny & Elkan 2002)",
        (Tunable("interpolation", "interpolation", "choice", options=("linear", "step")),),
        default=True,
    ),
    CalibratorEntry(
        "BBQ", ccal.BBQ, _C, "Bayesian binning into quantiles (Naeini et al. 2015)",
        (Tunable("c", "binning-size constant C", "float", 0.5, 1000.0),
         Tunable("prior_strength", "Beta prior strength", "float", 0.01, 1000.0)),
        default=True,
    ),
)

_CAL_BY_NAME: dict[tuple[str, str], CalibratorEntry] = {(e.task, e.name): e for e in CALIBRATORS}
if len(_CAL_BY_NAME) != len(CALIBRATORS):  # pragma: no cover - a registry edit gone wrong
    raise RuntimeError("duplicate (task, name) in the calibrator registry")


def calibrator(name: str, task: str | None = None) -> CalibratorEntry:
    """The registry entry named ``name`` (optionally of one task); ``KeyError`` when unknown."""
    _check_task(task)
    for t in (task,) if task is not None else TASKS:
        if (t, name) in _CAL_BY_NAME:
            return _CAL_BY_NAME[(t, name)]
    raise KeyError(f"unknown calibrator {name!r}" + (f" for {task}" if task else ""))


def calibrators(task: str | None = None) -> list[CalibratorEntry]:
    """Registry entries in registry order, optionally of one task."""
    _check_task(task)
    return [e for e in CALIBRATORS if task is None or e.task == task]


def available_calibrators(
    task: str, *, point_only: bool = False, has_features: bool = False, n_classes: int | None = None,
    has_slices: bool = False,
) -> list[CalibratorEntry]:
    """The calibrators that can run on a set of ``task`` with these inputs: feature-based ones only with features,
    σ-estimating ones only for point predictions, binary-only ones only for two classes, slice-wise ones only when
    the set has a slice column (``has_slices``: a group or feature column)."""
    out = []
    for e in calibrators(task):
        if e.needs_features and not has_features:
            continue
        if e.needs_slices and not has_slices:
            continue
        if point_only and not e.point_ok:
            continue
        if e.binary_only and n_classes != 2:
            continue
        out.append(e)
    return out


def _inputs_text(e: CalibratorEntry) -> str:
    needs = []
    if e.needs_features:
        needs.append("feature columns x*")
    if e.point_ok:
        needs.append("works on point predictions")
    if e.binary_only:
        needs.append("two classes only")
    if e.needs_slices:
        needs.append("a slice column (group or feature)")
    return "; ".join(needs)


def calibrator_help_table(task: str | None = None) -> pd.DataFrame:
    """One row per calibrator: calibrator, task, class, paper, inputs, parameters (name = default)."""
    rows = [
        {
            "calibrator": e.name,
            "task": e.task,
            "class": e.cls.__name__,
            "paper": e.paper,
            "inputs": _inputs_text(e),
            "parameters": ", ".join(f"{k}={v!r}" for k, v in e.parameters.items()),
        }
        for e in calibrators(task)
    ]
    return pd.DataFrame(rows, columns=["calibrator", "task", "class", "paper", "inputs", "parameters"])
