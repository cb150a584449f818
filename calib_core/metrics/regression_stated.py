"""What a quantile set states, counted: the coverage of each stated level and the PIT histogram between them.

A :class:`~calib_core.base.regression.QuantileSet` states Q quantiles q_τ per row and nothing in between; the tool's
linear interpolation and exponential tails are its own additions.  The statistics here use only the stated
quantiles (Gneiting, Balabdaoui & Raftery 2007; Kuleshov et al. 2018; Bracher et al. 2021):

* per level τ the counts L_τ = #{y < q_τ} and U_τ = #{y ≤ q_τ} (:func:`stated_level_counts`).  Under perfect
  calibration the randomised PIT u (Czado, Gneiting & Held 2009) gives C_τ = #{u ≤ τ} ~ Bin(N, τ) and
  L_τ ≤ C_τ ≤ U_τ: the bracket [L_τ/N, U_τ/N] holds the coverage whatever the ties (integer targets, quantiles that
  coincide at an atom); without ties L_τ = U_τ;
* ``max_level_deviation`` = max_τ distance of [L_τ/N, U_τ/N] from τ (0 when every bracket holds its level);
* ``pit_chi2`` = Pearson's (1900) χ² of the PIT histogram over the Q + 1 cells (0, τ₁], (τ₁, τ₂], …, (τ_Q, 1]
  against N·Δτ; with ties the smallest χ² over every vector of cumulative counts the brackets allow
  (:func:`min_pit_chi2`) — the randomised assignment is one of them, so the statistic never exceeds the one of the
  randomised PIT and a test against the continuous null stays valid;
* the coverage of a stated central pair [q_{½−c/2}, q_{½+c/2}] bracketed by the open and the closed count
  (:func:`stated_pair_counts`).

All of them are sums over rows: mergeable, exact on summaries of any size.
"""

from __future__ import annotations

import numpy as np
from scipy import special
from scipy.optimize import lsq_linear

from ..base.regression import QuantileSet

__all__ = [
    "stated_level_counts",
    "stated_pair_counts",
    "stated_pairs",
    "level_deviation",
    "level_deviation_interval",
    "bracket_binomial_p",
    "level_pvalues",
    "clopper_pearson_bounds",
    "min_pit_chi2",
    "pit_cells",
    "stated_statistics",
    "pit_chi2",
    "max_level_deviation",
]


_CHUNK = 262_144
_TOL = 1e-9


def stated_level_counts(y: np.ndarray, values: np.ndarray,
                        weights: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The bracketing counts of every stated level: L_τ = Σ_i w_i 1[y_i < q_iτ] and U_τ = Σ_i w_i 1[y_i ≤ q_iτ].

    Under perfect calibration L_τ ≤ #{u_i ≤ τ} ≤ U_τ for the randomised PIT u, whose count is Bin(N, τ); so
    P(y < q_τ) ≤ τ ≤ P(y ≤ q_τ) — the definition of a τ-quantile — in counts.

    Parameters
    ----------
    y : ndarray of shape (N,)
        Targets.
    values : ndarray of shape (N, Q)
        Stated quantiles, non-decreasing along each row.
    weights : ndarray of shape (N,), optional
        Row weights (bootstrap counts); None: 1 each.

    Returns
    -------
    (ndarray, ndarray) of shape (Q,)
        L and U (float).

    References
    ----------
    .. [1] Gneiting, T., Balabdaoui, F. & Raftery, A. E. (2007). Probabilistic forecasts, calibration and sharpness.
       *Journal of the Royal Statistical Society B* 69(2), 243–268.
    .. [2] Czado, C., Gneiting, T. & Held, L. (2009). Predictive model assessment for count data. *Biometrics*
       65(4), 1254–1261.

    Examples
    --------
    >>> import numpy as np
    >>> lo, hi = stated_level_counts(np.array([0.0, 1.0, 2.0]), np.array([[1.0, 2.0]] * 3))
    >>> lo.tolist(), hi.tolist()
    ([1.0, 2.0], [2.0, 3.0])
    """
    y = np.asarray(y, dtype=float)
    values = np.asarray(values, dtype=float)
    q = values.shape[1]
    lo, hi = np.zeros(q), np.zeros(q)
    for s in range(0, y.shape[0], _CHUNK):
        yy, vv = y[s:s + _CHUNK, None], values[s:s + _CHUNK]
        if weights is None:
            lo += np.count_nonzero(yy < vv, axis=0)
            hi += np.count_nonzero(yy <= vv, axis=0)
        else:
            ww = np.asarray(weights, dtype=float)[s:s + _CHUNK]
            lo += ww @ (yy < vv)
            hi += ww @ (yy <= vv)
    return lo, hi


def stated_pairs(levels: np.ndarray, coverages) -> dict[float, tuple[int, int]]:
    """The central intervals of ``coverages`` whose ends ½ ∓ c/2 are both stated levels: c → (index of ½ − c/2,
    index of ½ + c/2).

    Parameters
    ----------
    levels : ndarray of shape (Q,)
        Stated levels τ.
    coverages : sequence of float
        Nominal coverages c.

    Returns
    -------
    dict of float to (int, int)
        The stated pairs.

    References
    ----------
    .. [1] Bracher, J., Ray, E. L., Gneiting, T. & Reich, N. G. (2021). Evaluating epidemic forecasts in an interval
       format. *PLOS Computational Biology* 17(2), e1008618.

    Examples
    --------
    >>> stated_pairs(np.arange(1, 10) / 10, (0.5, 0.8, 0.9))
    {0.8: (0, 8)}
    """
    tau = np.asarray(levels, dtype=float)
    out = {}
    for c in coverages:
        i, j = np.abs(tau - (0.5 - c / 2)), np.abs(tau - (0.5 + c / 2))
        if i.min() < _TOL and j.min() < _TOL and c > 0:
            out[float(c)] = (int(i.argmin()), int(j.argmin()))
    return out


def stated_pair_counts(y: np.ndarray, values: np.ndarray, pairs: dict[float, tuple[int, int]],
                       weights: np.ndarray | None = None) -> dict[float, tuple[float, float]]:
    """Open and closed counts of the stated central intervals: (#{q_lo < y < q_hi}, #{q_lo ≤ y ≤ q_hi}) per pair.

    Under perfect calibration #{τ_lo < u ≤ τ_hi} ~ Bin(N, c) lies between them (randomised PIT).

    Parameters
    ----------
    y : ndarray of shape (N,)
        Targets.
    values : ndarray of shape (N, Q)
        Stated quantiles.
    pairs : dict of float to (int, int)
        From :func:`stated_pairs`.
    weights : ndarray of shape (N,), optional
        Row weights.

    Returns
    -------
    dict of float to (float, float)
        c → (open count, closed count).

    References
    ----------
    .. [1] Bracher, J., Ray, E. L., Gneiting, T. & Reich, N. G. (2021). Evaluating epidemic forecasts in an interval
       format. *PLOS Computational Biology* 17(2), e1008618.

    Examples
    --------
    >>> stated_pair_counts(np.array([1.0, 1.5, 3.0]), np.array([[1.0, 2.0]] * 3), {0.8: (0, 1)})
    {0.8: (1.0, 2.0)}
    """
    y = np.asarray(y, dtype=float)
    w = None if weights is None else np.asarray(weights, dtype=float)
    out = {}
    for c, (i, j) in pairs.items():
        lo, hi = values[:, i], values[:, j]
        inner = (lo < y) & (y < hi)
        closed = (lo <= y) & (y <= hi)
        out[c] = ((float(np.count_nonzero(inner)), float(np.count_nonzero(closed))) if w is None
                  else (float(w @ inner), float(w @ closed)))
    return out


def bracket_binomial_p(lower, upper, n: int, p) -> np.ndarray:
    """Two-sided exact binomial p-value of a count known to lie in [lower, upper]:
    min(1, 2 min(P(X ≥ lower), P(X ≤ upper))), X ~ Bin(n, p).

    Under H0 the true count C ~ Bin(n, p) satisfies lower ≤ C ≤ upper, so each tail is at least the one of C and the
    p-value is valid (exact binomial test when lower = upper, the test the Clopper–Pearson interval inverts).

    Parameters
    ----------
    lower, upper : array_like
        Bracket of the count.
    n : int
        Trials.
    p : array_like
        Null success probability.

    Returns
    -------
    ndarray
        p-values (broadcast shape).

    References
    ----------
    .. [1] Clopper, C. J. & Pearson, E. S. (1934). The use of confidence or fiducial limits illustrated in the case
       of the binomial. *Biometrika* 26(4), 404–413.
    .. [2] Czado, C., Gneiting, T. & Held, L. (2009). Predictive model assessment for count data. *Biometrics*
       65(4), 1254–1261.

    Examples
    --------
    >>> float(bracket_binomial_p(50, 50, 100, 0.5))
    1.0
    >>> bool(bracket_binomial_p(70, 75, 100, 0.5) < 1e-4)
    True
    """
    lo = np.asarray(lower, dtype=float)
    hi = np.asarray(upper, dtype=float)
    p = np.asarray(p, dtype=float)
    with np.errstate(invalid="ignore"):
        upper_tail = np.where(lo <= 0, 1.0, special.bdtrc(np.maximum(lo - 1, 0), n, p))  # P(X ≥ lower)
        lower_tail = np.where(hi >= n, 1.0, special.bdtr(np.minimum(hi, n), n, p))  # P(X ≤ upper)
    return np.minimum(1.0, 2.0 * np.minimum(upper_tail, lower_tail))


def level_pvalues(lower: np.ndarray, upper: np.ndarray, n: int, levels: np.ndarray) -> np.ndarray:
    """Per stated level τ the bracketed exact binomial p-value of P(y ≤ q_τ) = τ (:func:`bracket_binomial_p`).

    Parameters
    ----------
    lower, upper : ndarray of shape (Q,)
        L_τ = #{y < q_τ}, U_τ = #{y ≤ q_τ}.
    n : int
        N.
    levels : ndarray of shape (Q,)
        τ.

    Returns
    -------
    ndarray of shape (Q,)
        p-values.

    References
    ----------
    .. [1] Clopper, C. J. & Pearson, E. S. (1934). The use of confidence or fiducial limits illustrated in the case
       of the binomial. *Biometrika* 26(4), 404–413.

    Examples
    --------
    >>> level_pvalues(np.array([10.0]), np.array([10.0]), 100, np.array([0.1])).round(3).tolist()
    [1.0]
    """
    return bracket_binomial_p(lower, upper, int(n), levels)


def clopper_pearson_bounds(lower, upper, n: int, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Clopper–Pearson interval of a proportion whose count lies in [lower, upper]: the lower end of the interval of
    ``lower``, the upper end of the one of ``upper`` (covers the true proportion with probability ≥ ``level``).

    Ends: B⁻¹(a; k, N − k + 1) and B⁻¹(1 − a; k + 1, N − k), a = (1 − level)/2, with 0 at k = 0 and 1 at k = N.

    Parameters
    ----------
    lower, upper : array_like
        Bracket of the count.
    n : int
        Trials.
    level : float, default 0.95
        Confidence level.

    Returns
    -------
    (ndarray, ndarray)
        The interval's ends.

    References
    ----------
    .. [1] Clopper, C. J. & Pearson, E. S. (1934). The use of confidence or fiducial limits illustrated in the case
       of the binomial. *Biometrika* 26(4), 404–413.

    Examples
    --------
    >>> lo, hi = clopper_pearson_bounds(np.array([0.0]), np.array([10.0]), 10)
    >>> lo.tolist(), hi.tolist()
    ([0.0], [1.0])
    """
    lo = np.asarray(lower, dtype=float)
    hi = np.asarray(upper, dtype=float)
    a = (1.0 - level) / 2.0
    with np.errstate(invalid="ignore", divide="ignore"):
        low = np.where(lo <= 0, 0.0, special.betaincinv(np.maximum(lo, 1e-300), n - lo + 1, a))
        high = np.where(hi >= n, 1.0, special.betaincinv(hi + 1, np.maximum(n - hi, 1e-300), 1.0 - a))
    return low, high


def level_deviation(lower: np.ndarray, upper: np.ndarray, n: float, levels: np.ndarray) -> np.ndarray:
    """Distance of each bracket [L_τ/N, U_τ/N] from its level: max(0, L_τ/N − τ, τ − U_τ/N).

    Parameters
    ----------
    lower, upper : ndarray of shape (Q,)
        L and U (:func:`stated_level_counts`).
    n : float
        N (the total weight).
    levels : ndarray of shape (Q,)
        τ.

    Returns
    -------
    ndarray of shape (Q,)
        The distances; ``max_level_deviation`` is their maximum.

    References
    ----------
    .. [1] Kuleshov, V., Fenner, N. & Ermon, S. (2018). Accurate uncertainties for deep learning using calibrated
       regression. *ICML*.

    Examples
    --------
    >>> level_deviation(np.array([2.0, 5.0]), np.array([3.0, 5.0]), 10.0, np.array([0.1, 0.9])).round(3).tolist()
    [0.1, 0.4]
    """
    tau = np.asarray(levels, dtype=float)
    return np.maximum(0.0, np.maximum(np.asarray(lower) / n - tau, tau - np.asarray(upper) / n))


def level_deviation_interval(lower: np.ndarray, upper: np.ndarray, n: int, levels: np.ndarray,
                             level: float = 0.95) -> tuple[float, float]:
    """Simultaneous interval for the population ``max_level_deviation`` max_τ max(0, P(y < q_τ) − τ, τ − P(y ≤ q_τ)).

    Clopper–Pearson intervals for P(y < q_τ) (from L_τ) and P(y ≤ q_τ) (from U_τ) at the Bonferroni level
    1 − (1 − level)/(2Q) hold all together with probability ≥ ``level``; the deviation is monotone in both, so its
    range over the box is [max_τ max(0, lo(L) − τ, τ − hi(U)), max_τ max(0, hi(L) − τ, τ − lo(U))].

    Parameters
    ----------
    lower, upper : ndarray of shape (Q,)
        L and U.
    n : int
        N.
    levels : ndarray of shape (Q,)
        τ.
    level : float, default 0.95
        Simultaneous level.

    Returns
    -------
    (float, float)
        The interval.

    References
    ----------
    .. [1] Clopper, C. J. & Pearson, E. S. (1934). The use of confidence or fiducial limits illustrated in the case
       of the binomial. *Biometrika* 26(4), 404–413.

    Examples
    --------
    >>> lo, hi = level_deviation_interval(np.array([500.0]), np.array([500.0]), 1000, np.array([0.5]))
    >>> lo, round(hi, 3)
    (0.0, 0.036)
    """
    tau = np.asarray(levels, dtype=float)
    lev = 1.0 - (1.0 - level) / (2 * max(tau.size, 1))
    l_lo, l_hi = clopper_pearson_bounds(lower, lower, n, lev)
    u_lo, u_hi = clopper_pearson_bounds(upper, upper, n, lev)
    low = np.maximum(0.0, np.maximum(l_lo - tau, tau - u_hi))
    high = np.maximum(0.0, np.maximum(l_hi - tau, tau - u_lo))
    return float(low.max()), float(high.max())


def pit_cells(levels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The cells of the stated PIT histogram: edges 0, τ₁, …, τ_Q, 1 (stated levels 0 and 1 give no cell) and the
    mask of the levels that are interior edges.

    Parameters
    ----------
    levels : ndarray of shape (Q,)
        Stated levels.

    Returns
    -------
    edges : ndarray
        Cell edges.
    interior : ndarray of bool of shape (Q,)
        Levels strictly inside (0, 1).

    References
    ----------
    .. [1] Gneiting, T., Balabdaoui, F. & Raftery, A. E. (2007). Probabilistic forecasts, calibration and sharpness.
       *Journal of the Royal Statistical Society B* 69(2), 243–268.

    Examples
    --------
    >>> pit_cells(np.array([0.0, 0.5, 1.0]))[0].tolist()
    [0.0, 0.5, 1.0]
    """
    tau = np.asarray(levels, dtype=float)
    interior = (tau > 0) & (tau < 1)
    return np.concatenate([[0.0], tau[interior], [1.0]]), interior


def min_pit_chi2(lower: np.ndarray, upper: np.ndarray, n: float, levels: np.ndarray) -> tuple[float, np.ndarray]:
    """Pearson's χ² of the stated PIT histogram, the smallest one the ties allow.

    Cells (τ_{k−1}, τ_k] with τ₀ = 0, τ_{Q+1} = 1, expected counts e_k = N Δτ_k; with C_k the cumulative count at
    τ_k (C₀ = 0, C_{Q+1} = N), χ²(C) = Σ_k (C_k − C_{k−1} − e_k)² / e_k, minimised over L_k ≤ C_k ≤ U_k (a bounded
    linear least-squares problem, solved exactly).  Without ties L = U and this is Pearson's statistic of the
    counts.  The randomised PIT's counts are one feasible C, so the minimum is at most their χ²: tested against the
    law of χ² under uniform PITs it is conservative under ties and exact without.

    Parameters
    ----------
    lower, upper : ndarray of shape (Q,)
        L and U (:func:`stated_level_counts`).
    n : float
        N.
    levels : ndarray of shape (Q,)
        τ.

    Returns
    -------
    chi2 : float
        The statistic.
    counts : ndarray of shape (cells,)
        The cell counts that attain it (the data's own counts without ties).

    References
    ----------
    .. [1] Pearson, K. (1900). On the criterion that a given system of deviations from the probable in the case of
       a correlated system of variables is such that it can be reasonably supposed to have arisen from random
       sampling. *Philosophical Magazine* 50(302), 157–175.
    .. [2] Czado, C., Gneiting, T. & Held, L. (2009). Predictive model assessment for count data. *Biometrics*
       65(4), 1254–1261.

    Examples
    --------
    >>> chi2, counts = min_pit_chi2(np.array([5.0]), np.array([5.0]), 10.0, np.array([0.5]))
    >>> chi2, counts.tolist()
    (0.0, [5.0, 5.0])
    """
    edges, interior = pit_cells(levels)
    lo = np.asarray(lower, dtype=float)[interior]
    hi = np.asarray(upper, dtype=float)[interior]
    e = n * np.diff(edges)
    if lo.size and np.any(hi > lo):
        q = lo.size
        s = 1.0 / np.sqrt(e)
        a = np.zeros((q + 1, q))
        a[np.arange(q), np.arange(q)] = s[:q]
        a[np.arange(1, q + 1), np.arange(q)] = -s[1:]
        b = e * s
        b[-1] -= n * s[-1]
        # equal bounds: lsq_linear wants lb < ub; a width of 1e-9 of a count changes nothing
        sol = lsq_linear(a, b, bounds=(lo, np.maximum(hi, lo + 1e-9 * max(n, 1.0))), method="bvls")
        cum = np.clip(sol.x, lo, hi)
    else:
        cum = lo
    counts = np.diff(np.concatenate([[0.0], cum, [n]]))
    return float(np.sum((counts - e) ** 2 / e)), counts


def stated_statistics(y: np.ndarray, dist: QuantileSet, weights: np.ndarray | None = None) -> dict[str, float]:
    """``pit_chi2`` and ``max_level_deviation`` of a quantile set (empty for any other layout).

    max_level_deviation = max_τ max(0, L_τ/N − τ, τ − U_τ/N); pit_chi2 = min over the allowed cumulative counts C of
    Σ_k (ΔC_k − N Δτ_k)² / (N Δτ_k) (:func:`min_pit_chi2`).

    Parameters
    ----------
    y : ndarray of shape (N,)
        Targets.
    dist : PredictiveDistribution
        The predictions (statistics only for a :class:`QuantileSet`).
    weights : ndarray of shape (N,), optional
        Row weights.

    Returns
    -------
    dict of str to float
        ``pit_chi2`` and ``max_level_deviation``, or {}.

    References
    ----------
    .. [1] Kuleshov, V., Fenner, N. & Ermon, S. (2018). Accurate uncertainties for deep learning using calibrated
       regression. *ICML*.
    .. [2] Gneiting, T., Balabdaoui, F. & Raftery, A. E. (2007). Probabilistic forecasts, calibration and sharpness.
       *Journal of the Royal Statistical Society B* 69(2), 243–268.
    .. [3] Bracher, J., Ray, E. L., Gneiting, T. & Reich, N. G. (2021). Evaluating epidemic forecasts in an interval
       format. *PLOS Computational Biology* 17(2), e1008618.
    .. [4] Pearson, K. (1900). On the criterion that a given system of deviations from the probable in the case of
       a correlated system of variables is such that it can be reasonably supposed to have arisen from random
       sampling. *Philosophical Magazine* 50(302), 157–175.

    Examples
    --------
    >>> from calib_core.base.regression import QuantileSet
    >>> d = QuantileSet([0.25, 0.5, 0.75], np.array([[-1.0, 0.0, 1.0]] * 4))
    >>> s = stated_statistics(np.array([-2.0, -0.5, 0.5, 2.0]), d)
    >>> s["pit_chi2"], s["max_level_deviation"]
    (0.0, 0.0)
    """
    if not isinstance(dist, QuantileSet):
        return {}
    lo, hi = stated_level_counts(y, dist.values, weights)
    n = float(len(dist)) if weights is None else float(np.sum(weights))
    return {"pit_chi2": min_pit_chi2(lo, hi, n, dist.levels)[0],
            "max_level_deviation": float(level_deviation(lo, hi, n, dist.levels).max())}


def pit_chi2(y: np.ndarray, dist: QuantileSet) -> float:
    """Pearson χ² of a quantile set's PIT histogram over the cells between its stated levels (NaN for other
    layouts): min over the cumulative counts the ties allow of Σ_k (ΔC_k − N Δτ_k)² / (N Δτ_k).

    Parameters
    ----------
    y : ndarray of shape (N,)
        Targets.
    dist : PredictiveDistribution
        The predictions.

    Returns
    -------
    float
        The statistic (its reference under perfect calibration is the number of cells − 1).

    References
    ----------
    .. [1] Pearson, K. (1900). On the criterion that a given system of deviations from the probable in the case of
       a correlated system of variables is such that it can be reasonably supposed to have arisen from random
       sampling. *Philosophical Magazine* 50(302), 157–175.
    .. [2] Gneiting, T., Balabdaoui, F. & Raftery, A. E. (2007). Probabilistic forecasts, calibration and sharpness.
       *Journal of the Royal Statistical Society B* 69(2), 243–268.

    Examples
    --------
    >>> from calib_core.base.regression import QuantileSet
    >>> round(pit_chi2(np.array([-1.0, 1.0]), QuantileSet([0.5, 0.6], np.array([[0.0, 0.5]] * 2))), 6)
    0.25
    """
    return stated_statistics(np.asarray(y, dtype=float), dist).get("pit_chi2", float("nan"))


def max_level_deviation(y: np.ndarray, dist: QuantileSet) -> float:
    """Largest distance of a stated level's coverage bracket [#{y < q_τ}/N, #{y ≤ q_τ}/N] from τ (NaN for other
    layouts): max_τ max(0, L_τ/N − τ, τ − U_τ/N).

    Parameters
    ----------
    y : ndarray of shape (N,)
        Targets.
    dist : PredictiveDistribution
        The predictions.

    Returns
    -------
    float
        The statistic (0 under perfect calibration as N → ∞).

    References
    ----------
    .. [1] Kuleshov, V., Fenner, N. & Ermon, S. (2018). Accurate uncertainties for deep learning using calibrated
       regression. *ICML*.
    .. [2] Bracher, J., Ray, E. L., Gneiting, T. & Reich, N. G. (2021). Evaluating epidemic forecasts in an interval
       format. *PLOS Computational Biology* 17(2), e1008618.

    Examples
    --------
    >>> from calib_core.base.regression import QuantileSet
    >>> max_level_deviation(np.array([-1.0, 1.0]), QuantileSet([0.1, 0.9], np.array([[0.0, 0.5]] * 2)))
    0.4
    """
    return stated_statistics(np.asarray(y, dtype=float), dist).get("max_level_deviation", float("nan"))
