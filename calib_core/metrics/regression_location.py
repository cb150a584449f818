"""Location of the forecasts: the share of targets below the forecast median (``below_median``).

Under perfect calibration every target y is a draw from its predictive law F, so P(y < median F) = ½ for every row
— whatever the spread.  A forecast with the right centre and a wrong σ (too small in one region, too large
everywhere, …) still has half of its targets below its medians when its law is symmetric; a forecast that is too
high has more than half.  ``below_median`` is therefore the location statistic that a wrong spread cannot fake
(unlike the mean z, whose sign is decided by a few large |z| when σ is too small where the errors happen to lean
one way).

How the median is read, per layout:

* Gaussian N(μ, σ²): the median is μ; counted as y < μ.
* quantile set with the level τ = ½ stated: the stated q_½ itself (never an interpolated law).  Ties y = q_½
  (integer targets, rounded quantiles) are bracketed: L = #{y < q_½}, U = #{y ≤ q_½}; the value is their midpoint
  (L + U)/(2N), and the test (:mod:`calib_core.inference.regression_location`) uses the exact brackets
  P(y < q_½) ≤ ½ ≤ P(y ≤ q_½) of the quantile's definition.  Without τ = ½ the statistic is undefined (NaN).
* ensembles (:class:`~calib_core.base.regression.SampleSet`, M members sorted x₍₁₎ ≤ … ≤ x₍M₎): the middle
  order statistics a = x₍⌈M/2⌉₎, b = x₍⌊M/2⌋+1₎ (a = b for odd M).  The value is the share of randomised rank PIT
  values u < ½ (Czado et al. 2009; ½ on average under exchangeability); the test brackets ties:
  L = #{y < a} + #{a < y < b, u < ½}, U = #{y ≤ a} + #{a < y < b, u < ½} + #{y = b > a} (L ≤ #{u < ½} ≤ U; without
  ties L = U = #{u < ½}).  The randomised PIT alone spreads a tied target over the tie's ranks, exact under
  exchangeability but not when the spread alone is wrong: with censored members and targets (rain zeros) and σ × 0.7
  or × 1.4, #{u < ½} moved to 0.475 / 0.52 of N (N = 5,000, 10 members: 76–89% false alarms at 5%); order
  statistics commute with any monotone censoring, so the bracket stays valid there (no false alarm in 600 such sets).
* every other law: the share of PIT values u < ½ (L = U).

Reference ½; above ½ the forecasts are too high ("biased high"), below ½ too low.
"""

from __future__ import annotations

import numpy as np

from ..base.regression import Gaussian, PredictiveDistribution, QuantileSet, SampleSet
from .regression_rows import RegressionRows, metric_rows

__all__ = ["median_counts", "stat_below_median", "below_median"]


def _median_level(dist: PredictiveDistribution) -> int | None:
    """Index of the stated level τ = ½ of a quantile set (None when it is not stated)."""
    tau = np.asarray(dist.levels, dtype=float)  # type: ignore[attr-defined]
    hit = np.flatnonzero(np.abs(tau - 0.5) < 1e-9)
    return int(hit[0]) if hit.size else None


def _below_masks(r: RegressionRows) -> tuple[np.ndarray, np.ndarray] | None:
    """Per-row (y < median, y ≤ median) of the layout (see the module docstring); None when undefined."""
    d = r.dist
    if isinstance(d, QuantileSet):
        j = _median_level(d)
        if j is None:
            return None
        q = d.values[:, j]
        return r.y < q, r.y <= q
    if isinstance(d, Gaussian):
        return r.y < r.mean, r.y <= r.mean
    if isinstance(d, SampleSet):
        return _ensemble_masks(r.y, d.sorted_samples, r.u < 0.5)
    below = r.u < 0.5
    return below, below


def _ensemble_masks(y: np.ndarray, x: np.ndarray, pit_below: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(certainly below, possibly below) the middle of each row's sorted members ``x`` (module docstring); a target
    strictly between the two middle members of an even ensemble counts as its randomised rank PIT says
    (``pit_below`` = u < ½, true with probability ½ there), so L ≤ #{u < ½} ≤ U row by row."""
    m = x.shape[1]
    a, b = x[:, (m - 1) // 2], x[:, m // 2]
    half = (a < y) & (y < b) & pit_below
    return (y < a) | half, (y <= a) | half | ((y == b) & (a < b))


def median_counts(r: RegressionRows, weights: np.ndarray | None = None) -> tuple[float, float, float]:
    """The (weighted) counts L = #{y < median}, U = #{y ≤ median} and the number of rows.

    Ensembles: the middle order statistics with ties bracketed (module docstring); other laws L = U = #{u < ½}.
    ``weights`` are bootstrap count weights (Σw = N); the counts are then Σ w·1{…}.

    Parameters
    ----------
    r : RegressionRows
        The rows.
    weights : ndarray of shape (N,) or None, default None
        Row weights of a bootstrap replicate; None: the data.

    Returns
    -------
    tuple of float
        (L, U, N), NaN counts when the median is not stated (a quantile set without τ = ½).

    References
    ----------
    .. [1] Gneiting, T., Balabdaoui, F. & Raftery, A. E. (2007). Probabilistic forecasts, calibration and
       sharpness. *Journal of the Royal Statistical Society B* 69(2), 243–268.
    .. [2] Czado, C., Gneiting, T. & Held, L. (2009). Predictive model assessment for count data. *Biometrics*
       65(4), 1254–1261.

    Examples
    --------
    >>> import numpy as np
    >>> from calib_core.base.regression import Gaussian
    >>> r = RegressionRows(np.array([0.0, 1.0, -1.0, 2.0]), Gaussian(np.zeros(4), np.ones(4)))
    >>> median_counts(r)
    (1.0, 2.0, 4.0)
    """
    fused = r.__dict__.get("_fused") if weights is None else None
    if fused is not None:  # y < μ ⇔ ε < 0 for finite y and μ (the compiled pass counted the signs)
        return float(fused["counts"]["eps_negative"]), float(fused["counts"]["eps_nonpositive"]), float(r.n)
    masks = _below_masks(r)
    n = float(r.n if weights is None else np.sum(weights))
    if masks is None:
        return float("nan"), float("nan"), n
    lo, hi = masks
    if weights is None:
        return float(np.count_nonzero(lo)), float(np.count_nonzero(hi)), n
    w = np.asarray(weights, dtype=float)
    return float(np.dot(w, lo)), float(np.dot(w, hi)), n


def stat_below_median(r: RegressionRows, weights: np.ndarray | None = None) -> float:
    """Share of targets below the forecast median: (L + U)/(2N) (:func:`median_counts`; ties counted half), for
    ensembles the share of randomised rank PIT values u < ½ (between L/N and U/N).

    Parameters
    ----------
    r : RegressionRows
        The rows.
    weights : ndarray of shape (N,) or None, default None
        Row weights of a bootstrap replicate; None: the data.

    Returns
    -------
    float
        The share (½ under perfect calibration; NaN when the median is not stated).

    References
    ----------
    .. [1] Gneiting, T., Balabdaoui, F. & Raftery, A. E. (2007). Probabilistic forecasts, calibration and
       sharpness. *Journal of the Royal Statistical Society B* 69(2), 243–268.
    """
    if isinstance(r.dist, SampleSet):
        below = r.u < 0.5
        return float(np.mean(below) if weights is None else np.dot(weights, below) / np.sum(weights))
    lo, hi, n = median_counts(r, weights)
    return float((lo + hi) / (2.0 * n)) if n > 0 else float("nan")


def below_median(y: np.ndarray, dist: PredictiveDistribution) -> float:
    """Share of targets below the forecast median: (1/N) Σ_i 1{y_i < m_i} (ties y_i = m_i counted half).

    m_i is μ_i for Gaussians, the stated q_½ for quantile sets (NaN without τ = ½); for ensembles the share of
    randomised rank PIT values u < ½.  ½ when calibrated, whatever the spread; > ½ the forecasts are too high
    ("biased high"), < ½ too low.

    Parameters
    ----------
    y : ndarray of shape (n,)
        Targets.
    dist : PredictiveDistribution
        The n predictive distributions.

    Returns
    -------
    float
        The share below the median.

    References
    ----------
    .. [1] Gneiting, T., Balabdaoui, F. & Raftery, A. E. (2007). Probabilistic forecasts, calibration and
       sharpness. *Journal of the Royal Statistical Society B* 69(2), 243–268.
    .. [2] Czado, C., Gneiting, T. & Held, L. (2009). Predictive model assessment for count data. *Biometrics*
       65(4), 1254–1261.

    Examples
    --------
    >>> import numpy as np
    >>> from calib_core.base.regression import Gaussian
    >>> below_median(np.array([0.5, -1.0, -2.0, 3.0]), Gaussian(np.zeros(4), np.ones(4)))
    0.5
    """
    return stat_below_median(metric_rows(y, dist), None)
