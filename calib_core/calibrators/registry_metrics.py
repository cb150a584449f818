"""The metric registry's entries: what every metric of both tasks is.

One frozen :class:`Metric` per (task, key) — label, formula, paper, how to read it, the direction in which a value
is better, its kind (:data:`CALIBRATION`, :data:`PROPER`, :data:`DESCRIPTIVE`), the function that computes it and
that function's default options — in :data:`METRICS`; the interval metrics form the parametrised families
:data:`FAMILIES` (:class:`MetricFamily`).  The lookups (``registry.metric("coverage_97.5")`` …) are in
:mod:`calib_core.calibrators.registry`.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import numpy as np

from ..base.report import CALIBRATION_STATISTIC, DESCRIPTIVE, KINDS, PROPER_SCORE
from ..metrics import classification as cm
from ..metrics import classification_ratio as cratio
from ..metrics import classification_smooth as csm
from ..metrics import regression as rm
from ..metrics import regression_stated as rs
from ..metrics.classification_ordinal import rps_of_labels
from ..metrics.regression_ensemble_ranks import range_coverage, rank_chi2
from ..metrics.regression_location import below_median
from .registry_clinical import CLINICAL_ENTRIES
from .registry_wis import WIS_ENTRIES

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
    "direction_text",
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
    Calling the entry computes the metric with its default options updated by the keyword arguments.

    Attributes
    ----------
    key : str
        The metric's key (``"ence"``, ``"coverage_90"`` …).
    task : {"regression", "classification"}
        Its task.
    label : str
        Readable label.
    kind : str
        :data:`CALIBRATION`, :data:`PROPER` or :data:`DESCRIPTIVE`.
    direction : "lower", "higher", float or None
        The direction in which a value is better (a float: a target value).
    formula, paper, reading : str
        The formula, the paper it comes from, how to read it.
    fn : callable
        ``fn(y, dist, **options)`` or ``fn(labels, probs, **options)`` → float.
    options : mapping
        Its default keyword options.
    family : str or None
        The parametrised family of a member (``"coverage"``).
    level : float or None
        The member's nominal coverage.
    evaluate_default : bool
        Reported by ``cc.evaluate`` by default.

    References
    ----------
    .. [1] T. Gneiting and A. E. Raftery, "Strictly proper scoring rules, prediction, and estimation", Journal
           of the American Statistical Association 102(477), 359–378, 2007.
    .. [2] V. Kuleshov, N. Fenner and S. Ermon, "Accurate uncertainties for deep learning using calibrated
           regression", Proc. 35th ICML, PMLR 80, 2796–2804, 2018.
    .. [3] D. Levi, L. Gispan, N. Giladi and E. Fetaya, "Evaluating and calibrating uncertainty prediction in
           regression tasks", arXiv:1905.11659, 2019.
    .. [4] C. Guo, G. Pleiss, Y. Sun and K. Q. Weinberger, "On calibration of modern neural networks", Proc. 34th
           ICML, PMLR 70, 1321–1330, 2017.

    Examples
    --------
    >>> from calib_core.calibrators import registry
    >>> m = registry.metric("ence")
    >>> m.label, m.kind, m.direction
    ('ENCE (Levi)', 'calibration statistic', 'lower')
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


def make_metric(key: str, task: str, label: str, kind: str, direction: Direction, formula: str, paper: str,
                reading: str, fn: Callable[..., float], *, evaluate_default: bool = False, **fixed: Any) -> Metric:
    """A :class:`Metric` whose ``options`` are the keyword defaults of ``fn`` (minus its data arguments), updated by
    ``fixed``."""
    options = MappingProxyType({**_defaults(fn, _DATA_ARGS), **fixed})
    return Metric(key, task, label, kind, direction, formula, paper, reading, fn, options,
                  evaluate_default=evaluate_default)


def _level_text(level: float) -> str:
    return f"{100 * level:g}"


@dataclass(frozen=True)
class MetricFamily:
    """A metric of the central interval of nominal coverage c, one member per level (``coverage_90`` …).

    ``direction``: ``"target"`` (the member's target value is its level c), ``"lower"``, ``"higher"`` or None.
    ``fn(y, dist, coverage=c)`` computes a member; :meth:`at` builds the member at any level.

    Attributes
    ----------
    key : str
        The family's key (``"coverage"``); a member's key is ``f"{key}_{100c:g}"``.
    task : str
        Its task.
    label : str
        The members' label stem (``f"{label} {100c:g}%"``).
    help_label : str
        The family's name in the Help page.
    kind : str
        :data:`CALIBRATION`, :data:`PROPER` or :data:`DESCRIPTIVE`.
    direction : "target", "lower", "higher" or None
        ``"target"``: a member's target value is its level c.
    formula, paper, reading : str
        As :class:`Metric`.
    fn : callable
        ``fn(y, dist, coverage=c)`` → float.
    evaluate_default_levels : tuple of float
        The levels reported by ``cc.evaluate`` by default.

    References
    ----------
    .. [1] T. Gneiting and A. E. Raftery, "Strictly proper scoring rules, prediction, and estimation", Journal
           of the American Statistical Association 102(477), 359–378, 2007 (§6.2, the interval score).

    Examples
    --------
    >>> coverage = FAMILIES[0]
    >>> m = coverage.at(0.975)
    >>> m.key, m.label, m.direction
    ('coverage_97.5', 'coverage 97.5%', 0.975)
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


_LEVI = "Levi et al. 2019, Evaluating and calibrating uncertainty prediction in regression tasks"
_KUL = "Kuleshov et al. 2018 (quantile calibration)"
_CRUDE = "Zelikman et al. 2020, CRUDE"
_QR = "Utpala & Rai 2020, Quantile regularization"
_ACC = "Camporeale & Carè 2021, ACCRUE"
_GUO = "Guo et al. 2017, On calibration of modern neural networks"
_RANKS = ("Anderson 1996; Talagrand, Vautard & Strauss 1997; Hamill 2001 (rank histograms); "
          "Czado, Gneiting & Held 2009 (randomised ranks)")

_PERNOT_ZMS = ("Pernot 2023, Calibration in machine learning uncertainty quantification: beyond consistency to "
               "target adaptivity (APL Mach. Learn.); Pernot 2024, arXiv 2402.10043")
_PERNOT_HEAVY = ("Pernot 2024, Negative impact of heavy-tailed uncertainty and error distributions on the reliability "
                 "of calibration statistics for machine learning regression tasks (arXiv 2402.10043)")
_TCE = "Matsubara, Tax, Mudd & Guy 2023, TCE: A test-based approach to measuring calibration error"
_SMECE = "Błasiok & Nakkiran 2023, Smooth ECE: Principled reliability diagrams via kernel smoothing"
_R, _C = TASKS

_REGRESSION: tuple[Metric, ...] = (
    make_metric(
        "calibration_rmse", _R, "calibration RMSE", CALIBRATION, "lower",
        "p̂_j = mean_i 1[u_i ≤ p_j] on p = 0, 0.01, …, 1; calibration RMSE = sqrt(mean_j (p̂_j − p_j)²)",
        _CRUDE + " §4",
        "0 = the PIT is uniform at every level; the Kuleshov curve's distance from the diagonal.",
        rm.calibration_rmse, evaluate_default=True,
    ),
    make_metric(
        "quantile_calibration_error", _R, "l2 quantile calibration error", CALIBRATION, "lower",
        "l2 quantile calibration error = mean_j (p̂_j − p_j)² on p_j = j/100, j = 1..100",
        _QR + " (eq. 8); " + _KUL,
        "0 = calibrated in the quantile sense (marginally, averaged over all inputs).",
        rm.quantile_calibration_error, evaluate_default=True,
    ),
    make_metric(
        "miscalibration_area", _R, "miscalibration area", CALIBRATION, "lower",
        "area = ∫₀¹ |ECDF_u(p) − p| dp (exact, no grid)", "uncertainty-toolbox; Tran et al. 2020",
        "Area between the Kuleshov curve and the diagonal; 0 is perfect, 0.5 is the worst.",
        rm.miscalibration_area, evaluate_default=True,
    ),
    make_metric(
        "max_calibration_deviation", _R, "max deviation (KS)", CALIBRATION, "lower",
        "KS = sup_p |ECDF_u(p) − p| (exact)", _ACC + " (cal. err.); Kolmogorov–Smirnov statistic of the PIT",
        "Largest vertical gap of the Kuleshov curve; compare with the perfect-calibration range.",
        rm.max_calibration_deviation, evaluate_default=True,
    ),
    make_metric(
        "ence", _R, "ENCE (Levi)", CALIBRATION, "lower",
        "sort rows by σ, B equal-count bins; RMV_j = sqrt(mean σ²), RMSE_j = sqrt(mean ε²); "
        "ENCE = (1/B) Σ_j |RMV_j − RMSE_j| / RMV_j",
        _LEVI + " (eq. 11)",
        "0 = every σ-bin's error matches its predicted spread. Checks whether σ tracks the error (conditional "
        "calibration), which the Kuleshov curve cannot.",
        rm.ence, evaluate_default=True,
    ),
    make_metric(
        "cv", _R, "Cv (σ dispersion)", DESCRIPTIVE, None,
        "Cv = std(σ, ddof=1) / mean(σ)", _LEVI + " (eq. 13)",
        "Dispersion of the predicted σ: near 0 means σ is almost constant (uninformative); larger is more "
        "heteroscedastic.",
        _cv, evaluate_default=True,
    ),
    make_metric(
        "nll", _R, "NLL", PROPER, "lower",
        "NLL = mean_i −log f_i(y_i); Gaussian: ½log(2πσ²) + (y − μ)²/(2σ²).",
        "standard proper scoring rule; Levi et al. 2019 §2",
        "Lower is better; mixes calibration and sharpness, so compare it with the perfect-calibration value.",
        rm.nll, evaluate_default=True,
    ),
    make_metric(
        "crps", _R, "CRPS", PROPER, "lower",
        "CRPS = mean_i ∫(F_i(x) − 1[x ≥ y_i])² dx; Gaussian: σ[z(2Φ(z) − 1) + 2φ(z) − 1/√π]; ensembles: "
        "E|X − y| − ½E|X − X′|.",
        _ACC + " (eq. 5); Gneiting & Raftery 2007",
        "Lower is better; in the units of y. A proper score: rewards calibration and sharpness together.",
        rm.crps, evaluate_default=True,
    ),
    make_metric(
        "sharpness", _R, "sharpness √mean σ²", DESCRIPTIVE, None,
        "sharpness = sqrt(mean_i σ_i²)", _CRUDE + " §4; uncertainty-toolbox",
        "Smaller = more confident. Only good together with calibration (a calibrated forecaster should be sharp).",
        rm.sharpness, evaluate_default=True,
    ),
    make_metric(
        "rmse", _R, "RMSE", DESCRIPTIVE, "lower", "RMSE = sqrt(mean_i (y_i − μ_i)²)", "accuracy of the mean",
        "Lower is better.", rm.rmse, evaluate_default=True,
    ),
    make_metric(
        "reliability_score", _R, "reliability score RS", CALIBRATION, "lower",
        "η_i = ε_i/(√2σ_i) sorted; RS = Σ_i [η_i/N·(erf η_i + 1) − η_i/N²·(2i − 1) + exp(−η_i²)/(√π N)] − ½√(2/π)",
        _ACC + " (eq. 8)",
        "RS = ∫(Φ − C)² dη between the Gaussian and the empirical CDF of η: 0 is perfectly reliable.",
        rm.reliability_score, evaluate_default=True,
    ),
    make_metric(
        "pit_entropy", _R, "PIT entropy", CALIBRATION, "higher",
        "H = 1/(n − k) Σ_i log((n + 1)/k · (u_(i+k) − u_(i))), k = round(√n); KL(PIT ‖ U) = −H",
        _QR + " (eq. 6), sample-spacing entropy estimator",
        "0 for a uniform PIT, negative otherwise (more negative = further from calibrated).",
        rm.pit_entropy, evaluate_default=True,
    ),
    make_metric(
        "mae", _R, "MAE", DESCRIPTIVE, "lower", "MAE = mean_i |y_i − μ_i|", "accuracy of the mean", "Lower is better.",
        rm.mae,
    ),
    make_metric(
        "spearman_sigma_abs_error", _R, "Spearman ρ(σ, |ε|)", DESCRIPTIVE, "higher",
        "Spearman ρ between σ_i and |ε_i|", _LEVI + " (informativeness); " + _ACC,
        "Positive = larger predicted σ goes with larger errors (σ is informative); ≈ 0 = σ tells nothing.",
        rm.spearman_sigma_error,
    ),
    make_metric(
        "z_mean", _R, "mean z", CALIBRATION, 0.0, "mean of z = (y − μ)/σ", "standardised residuals",
        "0 when calibrated; ≠ 0 = bias.", _z_moment("z_mean"),
    ),
    make_metric(
        "z_std", _R, "std z", CALIBRATION, 1.0,
        "std of z", "standardised residuals; Levi et al. 2019 (STD scaling fits s² = mean z²)",
        "1 when calibrated; > 1 over-confident (σ too small), < 1 under-confident.", _z_moment("z_std"),
    ),
    make_metric(
        "z_skewness", _R, "skewness z", CALIBRATION, 0.0, "skewness of z", "standardised residuals",
        "0 for Gaussian-shaped errors.", _z_moment("z_skewness"),
    ),
    make_metric(
        "z_excess_kurtosis", _R, "excess kurtosis z", CALIBRATION, 0.0,
        "excess kurtosis of z", "standardised residuals", "0 for Gaussian tails; > 0 heavier tails (CRUDE §3).",
        _z_moment("z_excess_kurtosis"),
    ),
    # quantile sets judged at their stated levels (calib_core.metrics.regression_stated)
    make_metric(
        "pit_chi2", _R, "PIT χ² (stated levels)", CALIBRATION, "lower",
        "cells (0, τ₁], (τ₁, τ₂], …, (τ_Q, 1] between the stated levels; χ² = Σ_k (n_k − N Δτ_k)² / (N Δτ_k), n_k the "
        "PIT counts (with ties: the smallest χ² the brackets #{y < q_τ} ≤ C_τ ≤ #{y ≤ q_τ} allow); quantile sets only",
        "Pearson 1900; PIT histogram: Gneiting, Balabdaoui & Raftery 2007; randomised PIT: Czado, Gneiting & Held 2009",
        "Its reference is the number of cells − 1 (Q); larger = the PIT histogram between the stated levels is not "
        "flat. Uses only the stated quantiles, nothing interpolated.",
        rs.pit_chi2,
    ),
    make_metric(
        "max_level_deviation", _R, "max stated-level deviation", CALIBRATION, "lower",
        "max_τ max(0, L_τ/N − τ, τ − U_τ/N), L_τ = #{y < q_τ}, U_τ = #{y ≤ q_τ} over the stated levels τ; quantile "
        "sets only",
        _KUL + "; Bracher et al. 2021 (quantile forecasts)",
        "0 = every stated quantile q_τ has τ of the targets at or below it (up to ties); the largest miss over the "
        "levels otherwise. Uses only the stated quantiles.",
        rs.max_level_deviation,
    ),
    # heavy-tail-robust statistics (Pernot 2023–24; calib_core.metrics.regression_tails)
    make_metric(
        "zms", _R, "ZMS (mean z²)", CALIBRATION, 1.0,
        "ZMS = mean_i z_i², z = (y − μ)/σ; under calibration E z² = 1 for any error law; N·ZMS ~ χ²_N for "
        "Gaussians",
        _PERNOT_ZMS,
        "1 when the variances are calibrated on average; > 1 σ too small, < 1 σ too large. A mean of ratios: "
        "much less sensitive than MSE − mean σ² to a few huge σ or errors (heavy tails).",
        rm.zms,
    ),
    make_metric(
        "mean_log_z2", _R, "mean log z² (robust ZMS)", CALIBRATION, rm.LOG_CHI2_1_MEAN,
        "mean_i log z_i² (rows with z = 0 left out); reference for calibrated Gaussian z: "
        "E log χ²₁ = ψ(½) + log 2 ≈ −1.2704, variance π²/2",
        _PERNOT_HEAVY,
        "≈ −1.27 when calibrated with Gaussian errors; higher = σ too small (σ → cσ shifts it by −2 log c). All "
        "its moments exist even when z has heavy tails, so its interval holds where ZMS's does not; but its "
        "reference moves with the error law (unit-variance Student-t₅ errors: −1.57).",
        rm.mean_log_z2,
    ),
    make_metric(
        "below_median", _R, "share below the median", CALIBRATION, 0.5,
        "(1/N) Σ_i 1{y_i < median_i} (ties counted half); median = μ (Gaussian), the stated q_½ (quantile sets), "
        "PIT u < ½ (ensembles: randomised rank PIT)",
        "Gneiting, Balabdaoui & Raftery 2007 (probabilistic calibration); Czado, Gneiting & Held 2009 (randomised PIT)",
        "½ when calibrated, whatever the spread; > ½ the forecasts are too high (biased high), < ½ too low. "
        "A wrong σ cannot fake it (for symmetric laws), unlike mean z.",
        below_median,
    ),
    # ensembles judged as ensembles (calib_core.metrics.regression_ensemble_ranks; SampleSet predictions only)
    make_metric(
        "rank_chi2", _R, "rank histogram χ² (ensembles)", CALIBRATION, "lower",
        "X² = Σ_k (O_k − E)²/E over the M + 1 ranks r = #{members < y} (ties broken at random), E = N/(M + 1); "
        "E X² = M and X² ~ χ²_M when the target and members are exchangeable",
        _RANKS,
        "≈ M (the number of members) when the ensemble is calibrated; larger = a non-flat rank histogram (U: "
        "too little spread, ∩: too much, sloped: biased). Ensembles only.",
        rank_chi2,
    ),
    make_metric(
        "range_coverage", _R, "member-range coverage (ensembles)", CALIBRATION, None,
        "mean_i 1[x_(1) ≤ y_i ≤ x_(M)] (ties with the extreme members broken at random); exact expectation "
        "(M − 1)/(M + 1) when the target and members are exchangeable",
        _RANKS,
        "Should equal (M − 1)/(M + 1) (77.8% for 8 members, 96.2% for 51), not a nominal level; below = too "
        "little spread or a bias. Ensembles only.",
        range_coverage,
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
    make_metric(
        "ece", _C, "ECE", CALIBRATION, "lower",
        "M bins on the confidence (equal-width ((m−1)/M, m/M], M = 15); ECE = Σ_m |B_m|/n · |acc(B_m) − conf(B_m)|",
        _GUO + " (eq. 3)",
        "0 = confidence equals accuracy in every bin; the bar gaps of the reliability diagram, weighted by bin size.",
        cm.ece, evaluate_default=True,
    ),
    # -- smooth ECE ----------------------------------------------------------------------------
    make_metric(
        "smooth_ece", _C, "smooth ECE", CALIBRATION, "lower",
        "h_σ(t) = (1/N) Σ_i K_σ(t, c_i)(1[ŷ_i = y_i] − c_i), K_σ the Gaussian reflected at 0 and 1; "
        "smECE_σ = ∫₀¹ |h_σ(t)| dt; smECE = σ* with smECE_σ* = σ* (automatic bandwidth)",
        _SMECE,
        "0 = the kernel-smoothed reliability curve lies on the diagonal. Like ECE without a binning choice: the "
        "bandwidth σ* is chosen by the data (it equals the value), and the number is consistent (it cannot be made "
        "small or large by picking bins).",
        csm.smooth_ece,
    ),
    make_metric(
        "smooth_ece_positive", _C, "smooth ECE (positive class)", CALIBRATION, "lower",
        "smooth ECE of P(y = 1) against 1[y = 1] (binary files)", _SMECE,
        "Positive-class reliability without bins (differs from the top-label smooth ECE, which smooths max(p, 1 − p)).",
        csm.smooth_ece, target="positive",
    ),
    make_metric(
        "mce", _C, "MCE", CALIBRATION, "lower",
        "MCE = max_m |acc(B_m) − conf(B_m)| over non-empty bins", _GUO + " (eq. 5)",
        "Worst bin; noisy when bins are small (see the perfect-calibration value).",
        cm.mce, evaluate_default=True,
    ),
    make_metric(
        "nll", _C, "NLL", PROPER, "lower",
        "NLL = mean_i −log p_i,y_i (log-sum-exp of the logits when given).",
        "standard proper scoring rule; Guo et al. 2017 §3",
        "Lower is better; mixes calibration and sharpness, so compare it with the perfect-calibration value.",
        cm.nll, evaluate_default=True,
    ),
    make_metric(
        "brier", _C, "Brier", PROPER, "lower",
        "Brier = mean_i Σ_k (p_ik − 1[y_i = k])² (in [0, 2])", "Brier 1950",
        "Lower is better; a proper score (calibration + refinement).",
        cm.brier, evaluate_default=True,
    ),
    make_metric(  # ordinal sets only (ordered categories, e.g. a forecast hub's pmf forecasts)
        "rps", _C, "RPS (ordered classes)", PROPER, "lower",
        "RPS = mean_i Σ_{k=1}^{K−1} (P_ik − 1[y_i ≤ k])², P_ik = Σ_{j≤k} p_ij (ordinal sets only)",
        "Epstein 1969, A scoring system for probability forecasts of ranked categories; Murphy 1971",
        "Lower is better; the sum of the Brier scores of the events Y ≤ k: mass far from the outcome costs more "
        "than mass next to it. Compare it with the perfect-calibration value.", rps_of_labels,
    ),
    make_metric(
        "accuracy", _C, "accuracy", DESCRIPTIVE, "higher", "mean_i 1[argmax_k p_ik = y_i]", "",
        "Share of correct top-label predictions.", cm.accuracy, evaluate_default=True,
    ),
    make_metric(
        "mean_confidence", _C, "mean confidence", DESCRIPTIVE, None,
        "mean_i max_k p_ik", _GUO + " (Fig. 1, avg. confidence)",
        "Above the accuracy = over-confident on average.", _mean_confidence, evaluate_default=True,
    ),
    make_metric(
        "classwise_ece", _C, "class-wise ECE", CALIBRATION, "lower",
        "mean over classes k of the one-vs-rest ECE of (p_ik, 1[y_i = k])", "Kull et al. 2019; Nixon et al. 2019",
        "Calibration of every class probability, not just the top one.", cm.classwise_ece, evaluate_default=True,
    ),
    make_metric(
        "ece_positive", _C, "ECE (positive class)", CALIBRATION, "lower",
        "ECE of P(y = 1) against the frequency of y = 1 (binary files)",
        "netcal / scikit-learn binary convention",
        "Positive-class reliability: differs from the top-label ECE, which bins max(p, 1 − p).",
        _positive(cm.ece), evaluate_default=True,
    ),
    make_metric(
        "mce_positive", _C, "MCE (positive class)", CALIBRATION, "lower",
        "MCE of P(y = 1) against the frequency of y = 1 (binary files)", "netcal binary convention",
        "Worst positive-class bin.", _positive(cm.mce), evaluate_default=True,
    ),
    # -- binary and ads-style summaries ------------------------------------------------------
    make_metric(
        "calibration_ratio", _C, "calibration ratio Σp/Σy", CALIBRATION, 1.0,
        "R = Σ_i c_i / Σ_i 1[ŷ_i = y_i] (= mean confidence / accuracy); interval: log R ± z·se, "
        "se² = var(c/c̄ − hit/h̄)/N (delta method)",
        "calibration ratio of click-through models (expected / observed events)",
        "1 = right on average; > 1 over-predicts (over-confident), < 1 under-predicts. Blind to errors that cancel "
        "across probabilities: read it with ECE.",
        cratio.calibration_ratio,
    ),
    make_metric(
        "calibration_ratio_positive", _C, "calibration ratio Σp/Σy (positive class)", CALIBRATION, 1.0,
        "R = Σ_i P(y_i = 1) / #{y_i = 1} (binary files)",
        "calibration ratio of click-through models (expected / observed events)",
        "1 = as many positives as predicted; > 1 the model predicts more positives than occur.",
        cratio.calibration_ratio, target="positive",
    ),
    make_metric(
        "tce", _C, "TCE (%)", CALIBRATION, "lower",
        "10 equal-mass bins of the confidence; TCE = 100 · #{rows whose confidence the exact binomial test of their "
        "bin's accuracy rejects at 5%} / N",
        _TCE,
        "Share of predictions that differ significantly from their bin's frequency. Grows with N even for a "
        "calibrated model (compare with the perfectly calibrated value); no interval (no N-free population value).",
        cratio.tce,
    ),
    make_metric(
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
    + tuple(make_metric(key, _R, *rest, **fixed) for key, *rest, fixed in WIS_ENTRIES)  # the WIS (registry_wis)
    + _CLASSIFICATION
    + tuple(make_metric(key, _C, *rest, **fixed) for key, *rest, fixed in CLINICAL_ENTRIES)  # registry_clinical
)


def check_task(task: str | None) -> None:
    """Raise ``ValueError`` unless ``task`` is one of :data:`TASKS` or None."""
    if task is not None and task not in TASKS:
        raise ValueError(f"task must be one of {TASKS} or None, got {task!r}")


def direction_text(direction: Direction) -> str:
    """The direction of a metric in words: "lower", "higher", "≈ 0.9" for a target value, "" when no direction is
    better.

    Parameters
    ----------
    direction : "lower", "higher", float or None
        A :attr:`Metric.direction` (NaN, as None in a float column, reads as None).

    Returns
    -------
    str
        The words.

    References
    ----------
    .. [1] T. Gneiting and A. E. Raftery, "Strictly proper scoring rules, prediction, and estimation", Journal
           of the American Statistical Association 102(477), 359–378, 2007 (scores are negatively oriented:
           lower is better).

    Examples
    --------
    >>> direction_text(0.9), direction_text("lower"), direction_text(None)
    ('≈ 0.9', 'lower', '')
    """
    if direction is None or (isinstance(direction, float) and np.isnan(direction)):  # NaN: None in a float column
        return ""
    if isinstance(direction, float):
        return f"≈ {direction:g}"
    return direction
