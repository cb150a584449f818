"""Proper scores and prediction intervals of regression predictions, and the accuracy of the mean.

The negative log-likelihood and the CRPS (Gneiting & Raftery 2007; the Gaussian closed form of Camporeale & Carè,
"ACCRUE", eq. 5), the coverage, width and interval score of central prediction intervals (Gneiting & Raftery 2007,
§6.2), sharpness (Zelikman et al., "CRUDE"), RMSE and MAE of the predictive mean, and which rows make the NLL
infinite.  The weighted interval kernel (``stat_intervals``) serves
:func:`calib_core.metrics.regression.summary_statistics` and the bootstrap.
"""

from __future__ import annotations

import numpy as np

from ..base.regression import PredictiveDistribution, norm_ppf
from .regression_rows import (
    DEFAULT_COVERAGES,
    RegressionRows,
    dot,
    metric_rows,
    reject_nan_inputs,
    root_mean_square,
    wmean,
)

__all__ = [
    "nll",
    "zero_density_rows",
    "zero_density_note",
    "crps",
    "sharpness",
    "rmse",
    "mae",
    "interval_coverage",
    "interval_table",
]


def stat_intervals(r: RegressionRows, w: np.ndarray | None, coverages) -> dict[str, float]:
    """Coverage, mean width and mean interval score of the central intervals."""
    if w is None and r._gaussian:  # the metric table and the interval diagram share it
        cache = r.__dict__.setdefault("_gaussian_interval_cache", {})
        key = tuple(coverages)
        if key not in cache:
            cache[key] = _gaussian_intervals(r, coverages)
        return dict(cache[key])
    out: dict[str, float] = {}
    bounds = r.__dict__.setdefault("_interval_cache", {})
    for c in coverages:
        if c not in bounds:
            alpha = 1.0 - c
            if r._gaussian:  # [μ − kσ, μ + kσ], k = Φ⁻¹((1 + c)/2): everything from |z| and σ
                k = float(norm_ppf(0.5 + c / 2.0))
                inside = (r.abs_z <= k).astype(float)
                width = (2.0 * k) * r.sigma
                score = width + _interval_penalty(r.sigma * np.maximum(r.abs_z - k, 0.0), alpha)
            else:
                lo, hi = r.dist.interval(c)
                inside = ((r.y >= lo) & (r.y <= hi)).astype(float)
                width = hi - lo
                score = width + _interval_penalty(np.maximum(lo - r.y, 0) + np.maximum(r.y - hi, 0), alpha)
            bounds[c] = (inside, width, score)
        inside, width, score = bounds[c]
        tag = f"{100 * c:g}"
        out[f"coverage_{tag}"] = wmean(inside, w)
        out[f"width_{tag}"] = wmean(width, w)
        out[f"interval_score_{tag}"] = wmean(score, w)
    return out


def _interval_penalty(excess: np.ndarray, alpha: float) -> np.ndarray:
    """(2/α)·excess of the interval score; at α = 0 (the whole support, c = 1) infinite where a target lies
    outside and 0 elsewhere (no 0·∞)."""
    if alpha > 0:
        return (2.0 / alpha) * excess
    return np.where(excess > 0, np.inf, 0.0)


def _check_coverages(coverages) -> None:
    bad = [c for c in np.atleast_1d(np.asarray(coverages, dtype=float)) if not 0.0 < c <= 1.0]
    if bad:
        raise ValueError(f"coverage must be in (0, 1], got {bad[0]:g}")


def _gaussian_intervals(r: RegressionRows, coverages) -> dict[str, float]:
    """Unweighted Gaussian case without per-row temporaries for every level.

    coverage = #{|z| ≤ k}/N from the sorted z; width = 2k·mean σ; the interval-score penalty
    (2/α)·mean σ(|z| − k)₊ only involves the rows outside, which shrink as k grows.
    """
    out: dict[str, float] = {}
    n = r.n
    fused = r.__dict__.get("_fused")  # the compiled pass's sums (regression_point.py), for these coverages
    fused = fused["sums"] if fused is not None and fused["coverages"] == tuple(coverages) else None
    mean_sigma = float(r.sigma.mean()) if fused is None else fused["sigma"] / n
    zs = r.z_sorted
    tmp = np.empty(n) if fused is None else None
    for i, c in enumerate(coverages):
        k = float(norm_ppf(0.5 + c / 2.0))
        if tmp is None:
            penalty = fused[f"penalty_{i}"] / n
        else:
            np.subtract(r.abs_z, k, out=tmp)
            np.maximum(tmp, 0.0, out=tmp)
            penalty = dot(r.sigma, tmp) / n
        inside = (np.searchsorted(zs, k, side="right") - np.searchsorted(zs, -k, side="left")) / n
        tag = f"{100 * c:g}"
        out[f"coverage_{tag}"] = float(inside)
        out[f"width_{tag}"] = 2.0 * k * mean_sigma
        out[f"interval_score_{tag}"] = 2.0 * k * mean_sigma + float(_interval_penalty(np.float64(penalty), 1.0 - c))
    keys = [f"{kind}_{100 * c:g}" for c in coverages for kind in ("coverage", "width", "interval_score")]
    return {key: out[key] for key in keys}


def nll(y: np.ndarray, dist: PredictiveDistribution) -> float:
    """Mean negative log-likelihood NLL = −(1/N) Σ_i log f_i(y_i); Gaussian: ½log(2πσ²) + ε²/(2σ²).

    Parameters
    ----------
    y : ndarray of shape (n,)
        Targets.
    dist : PredictiveDistribution
        The n predictive distributions.

    Returns
    -------
    float
        The mean NLL (∞ when some f_i(y_i) = 0: :func:`zero_density_note`).

    References
    ----------
    Gneiting, T. & Raftery, A. E. (2007). Strictly proper scoring rules, prediction, and estimation. Journal of
    the American Statistical Association 102(477), 359–378.
    """
    return wmean(metric_rows(y, dist).neg_logpdf, None)


def zero_density_rows(y: np.ndarray, dist: PredictiveDistribution) -> np.ndarray:
    """Boolean mask of the rows whose target has predictive density 0, f_i(y_i) = 0 (log f = −∞).

    One such row makes the mean NLL −mean log f_i(y_i) infinite.

    Parameters
    ----------
    y : ndarray of shape (n,)
        Targets.
    dist : PredictiveDistribution
        The n predictive distributions.

    Returns
    -------
    ndarray of bool, shape (n,)
        True where log f_i(y_i) = −∞.

    References
    ----------
    Gneiting, T. & Raftery, A. E. (2007). Strictly proper scoring rules, prediction, and estimation. Journal of
    the American Statistical Association 102(477), 359–378.
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        logf = np.asarray(dist.logpdf(np.asarray(y, dtype=float)), dtype=float)
    return np.isneginf(logf)


def zero_density_note(
    y: np.ndarray, dist: PredictiveDistribution, *, row_numbers: np.ndarray | None = None, what: str = "rows"
) -> str:
    """Why the NLL is infinite, in one paragraph.

    Names how many of the ``what`` (and which: ``row_numbers``, 1-based, else positions from 1) have f_i(y_i) = 0
    and, for a recalibrated distribution with a truncated support (Kuleshov's isotonic map R is flat at 0 below its
    first knot and at 1 above the largest calibration PIT a*: G = R∘F has density g = R'(F(y))·f(y) = 0 outside
    [F⁻¹(lower), F⁻¹(a*)], Utpala & Rai, "Quantile regularization", §3 and appendix B.2), says where the support ends
    and on which side the targets fell.  The NLL ignores no row, so it is ∞; CRPS and the calibration metrics stay
    finite.

    Parameters
    ----------
    y : ndarray of shape (n,)
        Targets.
    dist : PredictiveDistribution
        The n predictive distributions.
    row_numbers : ndarray of shape (n,) or None, default None
        Row numbers to name (1-based); None: positions from 1.
    what : str, default "rows"
        What the rows are called in the sentence.

    Returns
    -------
    str
        The paragraph; ``""`` when every target has a positive density.

    References
    ----------
    Kuleshov, V., Fenner, N. & Ermon, S. (2018). Accurate uncertainties for deep learning using calibrated
    regression. ICML, PMLR 80, 2796–2804.

    Utpala, S. & Rai, P. (2020). Quantile regularization: towards implicit calibration of regression models.
    arXiv:2002.12860.
    """
    zero = zero_density_rows(y, dist)
    k = int(zero.sum())
    if k == 0:
        return ""
    idx = np.flatnonzero(zero)
    numbers = (np.asarray(row_numbers)[idx] if row_numbers is not None else idx + 1).tolist()
    shown = ", ".join(f"{int(r):,}" for r in numbers[:8]) + (" …" if k > 8 else "")
    text = (f"NLL = ∞: {k:,} of {zero.size:,} {what} ({shown}) have a target where the predictive density is 0, "
            "and one such row makes the mean of −log f(y) infinite.")
    support = getattr(dist, "support", None)
    if callable(support) and hasattr(dist, "truncation_u"):
        lo, hi = (np.asarray(a, dtype=float) for a in support())
        yy = np.asarray(y, dtype=float)
        above = int((zero & (yy >= hi)).sum())
        below = k - above
        parts = []
        if above:
            parts.append(f"every PIT above a* = {float(dist.truncation_u):.4g} to 1, so there is no mass above "
                         f"F⁻¹(a*) — {above:,} of these targets lie there")
        if below:
            parts.append(f"every PIT below {float(dist.lower_truncation_u):.4g} to 0, so there is no mass below "
                         f"its quantile — {below:,} of these targets lie there")
        if parts:
            text += (" Isotonic recalibration (Kuleshov et al. 2018) is flat at its ends: its map R sends "
                     + "; and ".join(parts) + ". The recalibrated distribution has a truncated support (Utpala & "
                     "Rai, \"Quantile regularization\", §3): the calibration rows had no PIT that far out. CRPS "
                     "and the calibration metrics stay finite; more calibration rows or a calibrator with full "
                     "support (STD scaling) avoid it.")
    return text


def crps(y: np.ndarray, dist: PredictiveDistribution) -> float:
    """Mean continuous ranked probability score CRPS = (1/N) Σ_i ∫ (F_i(x) − 1[y_i ≤ x])² dx.

    Gaussian closed form σ[z(2Φ(z) − 1) + 2φ(z) − 1/√π] (ACCRUE eq. 5); exact for the other distributions
    (``dist.crps``).

    Parameters
    ----------
    y : ndarray of shape (n,)
        Targets.
    dist : PredictiveDistribution
        The n predictive distributions.

    Returns
    -------
    float
        The mean CRPS, in the units of y.

    References
    ----------
    Matheson, J. E. & Winkler, R. L. (1976). Scoring rules for continuous probability distributions.
    Management Science 22(10), 1087–1096.

    Gneiting, T. & Raftery, A. E. (2007). Strictly proper scoring rules, prediction, and estimation. Journal of
    the American Statistical Association 102(477), 359–378.

    Camporeale, E. & Carè, A. (2021). ACCRUE: accurate and reliable uncertainty estimate in deterministic
    models. International Journal for Uncertainty Quantification 11(4), 81–94.
    """
    return wmean(metric_rows(y, dist).crps, None)


def sharpness(y: np.ndarray | None, dist: PredictiveDistribution) -> float:
    """Sharpness = sqrt(mean σ²) (CRUDE §4; uncertainty-toolbox), computed scale-free as c·sqrt(mean (σ/c)²) with c
    a power of two near max σ when σ² would over- or underflow (exact for any finite σ).

    Parameters
    ----------
    y : ndarray of shape (n,) or None
        Ignored (taken first like every regression metric).
    dist : PredictiveDistribution
        The n predictive distributions.

    Returns
    -------
    float
        The root mean predictive variance.

    References
    ----------
    Zelikman, E., Healy, C., Zhou, S. & Avati, A. (2020). CRUDE: calibrating regression uncertainty
    distributions empirically. arXiv:2005.12496.

    Gneiting, T., Balabdaoui, F. & Raftery, A. E. (2007). Probabilistic forecasts, calibration and sharpness.
    Journal of the Royal Statistical Society B 69(2), 243–268.
    """
    reject_nan_inputs(None, dist)
    return root_mean_square(np.asarray(dist.std(), dtype=float))


def rmse(y: np.ndarray, dist: PredictiveDistribution) -> float:
    """Root mean squared error of the predictive mean, RMSE = sqrt((1/N) Σ_i ε_i²).

    Parameters
    ----------
    y : ndarray of shape (n,)
        Targets.
    dist : PredictiveDistribution
        The n predictive distributions.

    Returns
    -------
    float
        The RMSE.

    References
    ----------
    Hyndman, R. J. & Koehler, A. B. (2006). Another look at measures of forecast accuracy. International Journal
    of Forecasting 22(4), 679–688.
    """
    reject_nan_inputs(y, dist)
    return float(np.sqrt(np.mean((np.asarray(y, float) - dist.mean()) ** 2)))


def mae(y: np.ndarray, dist: PredictiveDistribution) -> float:
    """Mean absolute error of the predictive mean, MAE = (1/N) Σ_i |ε_i|.

    Parameters
    ----------
    y : ndarray of shape (n,)
        Targets.
    dist : PredictiveDistribution
        The n predictive distributions.

    Returns
    -------
    float
        The MAE.

    References
    ----------
    Hyndman, R. J. & Koehler, A. B. (2006). Another look at measures of forecast accuracy. International Journal
    of Forecasting 22(4), 679–688.
    """
    reject_nan_inputs(y, dist)
    return float(np.mean(np.abs(np.asarray(y, float) - dist.mean())))


def interval_coverage(y: np.ndarray, dist: PredictiveDistribution, *, coverage: float = 0.9) -> float:
    """Observed coverage (PICP) of the central prediction interval of nominal coverage c = 1 − α.

    mean_i 1[F_i⁻¹((1−c)/2) ≤ y_i ≤ F_i⁻¹((1+c)/2)]; c for a calibrated model.  c = 1 is the whole support (1.0 for a
    Gaussian, as uncertainty-toolbox returns).

    Parameters
    ----------
    y : ndarray of shape (n,)
        Targets.
    dist : PredictiveDistribution
        The n predictive distributions.
    coverage : float, default 0.9
        Nominal coverage c, 0 < c ≤ 1.

    Returns
    -------
    float
        The fraction of targets inside their interval.

    References
    ----------
    Gneiting, T. & Raftery, A. E. (2007). Strictly proper scoring rules, prediction, and estimation. Journal of
    the American Statistical Association 102(477), 359–378.
    """
    _check_coverages(coverage)
    return stat_intervals(metric_rows(y, dist), None, [coverage])[f"coverage_{100 * coverage:g}"]


def interval_table(y: np.ndarray, dist: PredictiveDistribution, *, coverages=DEFAULT_COVERAGES):
    """Per nominal coverage c: observed coverage, mean width and mean interval score.

    Interval score (Gneiting & Raftery 2007, §6.2, α = 1 − c): (u − l) + (2/α)(l − y)₊ + (2/α)(y − u)₊ for the
    central interval [l, u].

    Parameters
    ----------
    y : ndarray of shape (n,)
        Targets.
    dist : PredictiveDistribution
        The n predictive distributions.
    coverages : sequence of float, default DEFAULT_COVERAGES
        Nominal coverages, each in (0, 1].

    Returns
    -------
    pandas.DataFrame
        One row per coverage: ``coverage``, ``observed``, ``mean_width``, ``interval_score``.

    References
    ----------
    Gneiting, T. & Raftery, A. E. (2007). Strictly proper scoring rules, prediction, and estimation. Journal of
    the American Statistical Association 102(477), 359–378.
    """
    import pandas as pd

    _check_coverages(coverages)
    s = stat_intervals(metric_rows(y, dist), None, coverages)
    return pd.DataFrame(
        {
            "coverage": list(coverages),
            "observed": [s[f"coverage_{100 * c:g}"] for c in coverages],
            "mean_width": [s[f"width_{100 * c:g}"] for c in coverages],
            "interval_score": [s[f"interval_score_{100 * c:g}"] for c in coverages],
        }
    )
