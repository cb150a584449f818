"""Ensembles judged as ensembles: the verification rank of the target among the M members.

For an ensemble forecast (:class:`~calib_core.base.regression.SampleSet`, M members per row) the natural statement
is "the target is one more draw of the same law as the members".  Then the target and the members are
exchangeable, and the target's rank r = #{members < y} is uniform on {0, …, M} (Anderson 1996; Talagrand, Vautard
& Strauss 1997; Hamill 2001).  Ties (rain zeros: a target equal to members, members equal to each other) are broken
at random: the rank is drawn uniformly among the ranks the tied values allow, which is the randomised rank PIT
u = (r + V(1 + t))/(M + 1) of :class:`~calib_core.metrics.regression_rows.RegressionRows` (t = #{members = y},
V ~ U(0, 1); Czado, Gneiting & Held 2009), so rank = ⌊(M + 1)u⌋ and every statistic here shares the PIT's draw.

* :func:`rank_counts` — the rank (Talagrand) histogram: counts of r = 0, …, M (M + 1 cells, each N/(M + 1) when
  calibrated);
* :func:`rank_chi2` — its Pearson χ² against the uniform multinomial, X² = Σ_k (O_k − E)²/E, E = N/(M + 1)
  (E X² = M exactly under calibration);
* :func:`range_coverage` — the share of targets inside the member range [x_(1), x_(M)] (randomised rank in
  1 … M − 1), whose exact expectation under exchangeability is (M − 1)/(M + 1) (:func:`range_coverage_expected`),
  not a nominal level;
* :func:`order_interval_probability` — per row, the exact probability under exchangeability (given the pooled
  values, ties included) that the target falls in an order-statistic interval [x_(i), x_(j)] of the members: the
  finite-M expectation of the ensemble's central-interval coverage (7/9 = 77.8% for the "90%" interval of 8
  members, which is [x_(1), x_(8)]).

Every row of a SampleSet has the same M (rows with a missing member are dropped when the file is read), so one
rank histogram with M + 1 cells serves all rows.
"""

from __future__ import annotations

import numpy as np

from ..base.regression import PredictiveDistribution, SampleSet
from .regression_rows import RegressionRows, metric_rows

__all__ = [
    "ensemble_size",
    "ensemble_ranks",
    "rank_counts",
    "rank_chi2",
    "range_coverage",
    "range_coverage_expected",
    "ensemble_statistics",
    "member_index",
    "order_interval_probability",
    "order_interval_probabilities",
]



def ensemble_size(dist: PredictiveDistribution | None) -> int:
    """M, the number of members of an ensemble (0 for any other predictive layout).

    Parameters
    ----------
    dist : PredictiveDistribution or None
        The predictions.

    Returns
    -------
    int
        M for a :class:`~calib_core.base.regression.SampleSet`, else 0.

    References
    ----------
    .. [1] Hamill, T. M. (2001). Interpretation of rank histograms for verifying ensemble forecasts. *Monthly
       Weather Review* 129(3), 550–560.
    """
    return int(dist.n_samples) if isinstance(dist, SampleSet) else 0


def ensemble_ranks(rows: RegressionRows) -> np.ndarray:
    """The randomised verification rank of every target among its M members, r ∈ {0, …, M}.

    r = ⌊(M + 1)·u⌋ with u the rows' randomised rank PIT (r₀ + V(1 + t))/(M + 1), r₀ = #{x < y}, t = #{x = y}: the
    rank of y when ties are broken uniformly at random, uniform on {0, …, M} when y and the members are
    exchangeable.

    Parameters
    ----------
    rows : RegressionRows
        Rows of an ensemble (:class:`~calib_core.base.regression.SampleSet`).

    Returns
    -------
    ndarray of shape (N,) of int64
        The ranks.

    Raises
    ------
    TypeError
        If the rows are not an ensemble's.

    References
    ----------
    .. [1] Anderson, J. L. (1996). A method for producing and evaluating probabilistic forecasts from ensemble model
       integrations. *Journal of Climate* 9(7), 1518–1530.
    .. [2] Talagrand, O., Vautard, R. & Strauss, B. (1997). Evaluation of probabilistic prediction systems. *Proc.
       ECMWF Workshop on Predictability*, 1–25.
    .. [3] Hamill, T. M. (2001). Interpretation of rank histograms for verifying ensemble forecasts. *Monthly Weather
       Review* 129(3), 550–560.
    .. [4] Czado, C., Gneiting, T. & Held, L. (2009). Predictive model assessment for count data. *Biometrics*
       65(4), 1254–1261.
    """
    m = ensemble_size(rows.dist)
    if not m:
        raise TypeError("verification ranks need an ensemble (SampleSet)")
    return np.minimum(np.floor(rows.u * (m + 1.0) + 1e-9), m).astype(np.int64)


def rank_counts(rows: RegressionRows, weights: np.ndarray | None = None) -> np.ndarray:
    """The rank (Talagrand) histogram: O_k = Σ_i w_i 1[r_i = k], k = 0, …, M.

    Parameters
    ----------
    rows : RegressionRows
        Rows of an ensemble.
    weights : ndarray of shape (N,), optional
        Row weights (bootstrap counts); None: 1 per row.

    Returns
    -------
    ndarray of shape (M + 1,)
        The counts (floats when weighted).

    References
    ----------
    .. [1] Anderson, J. L. (1996). A method for producing and evaluating probabilistic forecasts from ensemble model
       integrations. *Journal of Climate* 9(7), 1518–1530.
    .. [2] Talagrand, O., Vautard, R. & Strauss, B. (1997). Evaluation of probabilistic prediction systems. *Proc.
       ECMWF Workshop on Predictability*, 1–25.
    .. [3] Hamill, T. M. (2001). Interpretation of rank histograms for verifying ensemble forecasts. *Monthly Weather
       Review* 129(3), 550–560.
    """
    m = ensemble_size(rows.dist)
    r = ensemble_ranks(rows)
    return np.bincount(r, weights=weights, minlength=m + 1).astype(float)


def _chi2_of_counts(counts: np.ndarray) -> float:
    total = float(counts.sum())
    if total <= 0:
        return float("nan")
    e = total / counts.size
    return float(np.sum((counts - e) ** 2) / e)


def _range_share(rows: RegressionRows, weights: np.ndarray | None) -> float:
    m = ensemble_size(rows.dist)
    r = ensemble_ranks(rows)
    inside = ((r >= 1) & (r <= m - 1)).astype(float)
    if weights is None:
        return float(inside.mean())
    return float(np.dot(inside, weights) / weights.sum())


def rank_chi2(y: np.ndarray, dist: PredictiveDistribution) -> float:
    """Pearson's χ² of the rank histogram against the uniform: X² = Σ_{k=0}^{M} (O_k − E)²/E, E = N/(M + 1).

    O_k counts the targets of randomised rank k among their M members (:func:`ensemble_ranks`).  Under
    calibration (target and members exchangeable) the counts are multinomial(N, 1/(M + 1), …), so E X² = M
    exactly and X² → χ²_M.  NaN for predictions that are not an ensemble.

    Parameters
    ----------
    y : ndarray of shape (N,)
        Targets.
    dist : PredictiveDistribution
        The predictions (an ensemble, :class:`~calib_core.base.regression.SampleSet`).

    Returns
    -------
    float
        X² (≈ M when calibrated; larger: a non-flat rank histogram).

    Examples
    --------
    >>> from calib_core.base.regression import SampleSet
    >>> members = np.array([[0.0, 1.0, 2.0], [0.0, 1.0, 2.0], [0.0, 1.0, 2.0], [0.0, 1.0, 2.0]])
    >>> rank_chi2(np.array([-1.0, 0.5, 1.5, 3.0]), SampleSet(members))  # one target per rank: flat
    0.0

    References
    ----------
    .. [1] Anderson, J. L. (1996). A method for producing and evaluating probabilistic forecasts from ensemble model
       integrations. *Journal of Climate* 9(7), 1518–1530.
    .. [2] Talagrand, O., Vautard, R. & Strauss, B. (1997). Evaluation of probabilistic prediction systems. *Proc.
       ECMWF Workshop on Predictability*, 1–25.
    .. [3] Hamill, T. M. (2001). Interpretation of rank histograms for verifying ensemble forecasts. *Monthly Weather
       Review* 129(3), 550–560.
    """
    rows = metric_rows(y, dist)
    if not ensemble_size(rows.dist):
        return float("nan")
    return _chi2_of_counts(rank_counts(rows))


def range_coverage(y: np.ndarray, dist: PredictiveDistribution) -> float:
    """Share of targets inside the member range: mean_i 1[1 ≤ r_i ≤ M − 1] (randomised rank r_i, ties with the
    extreme members split at random), i.e. y ∈ [x_(1), x_(M)].

    Its exact expectation under calibration is (M − 1)/(M + 1) (:func:`range_coverage_expected`): 77.8% for 8
    members, 96.2% for 51 — the finite-M value, not a nominal level.  NaN for predictions that are not an ensemble.

    Parameters
    ----------
    y : ndarray of shape (N,)
        Targets.
    dist : PredictiveDistribution
        The predictions (an ensemble).

    Returns
    -------
    float
        The share in [0, 1].

    Examples
    --------
    >>> from calib_core.base.regression import SampleSet
    >>> members = np.array([[0.0, 1.0, 2.0]] * 4)
    >>> range_coverage(np.array([-1.0, 0.5, 1.5, 3.0]), SampleSet(members))
    0.5

    References
    ----------
    .. [1] Anderson, J. L. (1996). A method for producing and evaluating probabilistic forecasts from ensemble model
       integrations. *Journal of Climate* 9(7), 1518–1530.
    .. [2] Talagrand, O., Vautard, R. & Strauss, B. (1997). Evaluation of probabilistic prediction systems. *Proc.
       ECMWF Workshop on Predictability*, 1–25.
    .. [3] Hamill, T. M. (2001). Interpretation of rank histograms for verifying ensemble forecasts. *Monthly Weather
       Review* 129(3), 550–560.
    """
    rows = metric_rows(y, dist)
    if not ensemble_size(rows.dist):
        return float("nan")
    return _range_share(rows, None)


def range_coverage_expected(m: int | np.ndarray) -> float | np.ndarray:
    """The exact coverage of [x_(1), x_(M)] under exchangeability: (M − 1)/(M + 1).

    Parameters
    ----------
    m : int or ndarray
        Ensemble size(s) M ≥ 2.

    Returns
    -------
    float or ndarray
        (M − 1)/(M + 1).

    Examples
    --------
    >>> round(range_coverage_expected(8), 4)
    0.7778

    References
    ----------
    .. [1] Anderson, J. L. (1996). A method for producing and evaluating probabilistic forecasts from ensemble model
       integrations. *Journal of Climate* 9(7), 1518–1530.
    .. [2] Talagrand, O., Vautard, R. & Strauss, B. (1997). Evaluation of probabilistic prediction systems. *Proc.
       ECMWF Workshop on Predictability*, 1–25.
    .. [3] Hamill, T. M. (2001). Interpretation of rank histograms for verifying ensemble forecasts. *Monthly Weather
       Review* 129(3), 550–560.
    """
    mm = np.asarray(m, dtype=float)
    out = (mm - 1.0) / (mm + 1.0)
    return float(out) if out.ndim == 0 else out


def ensemble_statistics(rows: RegressionRows, weights: np.ndarray | None = None) -> dict[str, float]:
    """The ensemble statistics of :func:`~calib_core.metrics.regression.summary_statistics`: ``rank_chi2`` and
    ``range_coverage`` for an ensemble, nothing for another layout.

    Parameters
    ----------
    rows : RegressionRows
        The rows.
    weights : ndarray of shape (N,), optional
        Row weights of a bootstrap replicate (X² of the weighted counts, scaled to N rows).

    Returns
    -------
    dict of str to float
        ``{"rank_chi2": X², "range_coverage": share}`` or ``{}``.

    References
    ----------
    .. [1] Anderson, J. L. (1996). A method for producing and evaluating probabilistic forecasts from ensemble model
       integrations. *Journal of Climate* 9(7), 1518–1530.
    .. [2] Talagrand, O., Vautard, R. & Strauss, B. (1997). Evaluation of probabilistic prediction systems. *Proc.
       ECMWF Workshop on Predictability*, 1–25.
    .. [3] Hamill, T. M. (2001). Interpretation of rank histograms for verifying ensemble forecasts. *Monthly Weather
       Review* 129(3), 550–560.
    """
    if not ensemble_size(rows.dist):
        return {}
    counts = rank_counts(rows, weights)
    return {"rank_chi2": _chi2_of_counts(counts), "range_coverage": _range_share(rows, weights)}


def member_index(p: float, m: int) -> int:
    """0-based index of the order statistic SampleSet.ppf(p) returns, x_(⌈pM⌉) (x_(1) at p = 0).

    Parameters
    ----------
    p : float
        A level in [0, 1].
    m : int
        Ensemble size M.

    Returns
    -------
    int
        ⌈pM⌉ − 1 clipped to 0 … M − 1.

    Examples
    --------
    >>> member_index(0.05, 8), member_index(0.95, 8)
    (0, 7)

    References
    ----------
    .. [1] Hyndman, R. J. & Fan, Y. (1996). Sample quantiles in statistical packages. *The American Statistician*
       50(4), 361–365.
    """
    return int(np.clip(np.ceil(p * m - 1e-12) - 1, 0, m - 1))


def pool_interval_probability(pool_sorted: np.ndarray, i_lo: int, i_hi: int) -> np.ndarray:
    """P(x_(i_lo) ≤ y ≤ x_(i_hi)) per row when the target is each of the M + 1 sorted pooled values with
    probability 1/(M + 1) (0-based member order statistics; removing the candidate at sorted position k, the
    members' order statistic i is s[i] for i < k, else s[i + 1])."""
    k = np.arange(pool_sorted.shape[1])[None, :]
    lo = np.where(i_lo < k, pool_sorted[:, [i_lo]], pool_sorted[:, [i_lo + 1]])
    hi = np.where(i_hi < k, pool_sorted[:, [i_hi]], pool_sorted[:, [i_hi + 1]])
    return ((lo <= pool_sorted) & (pool_sorted <= hi)).mean(axis=1)


def order_interval_probability(y: np.ndarray, samples: np.ndarray, coverage: float,
                               chunk: int = 50_000) -> np.ndarray:
    """Per row, the exact probability under exchangeability that the target falls in the ensemble's central
    interval of nominal coverage c, [x_(i), x_(j)] with i = ⌈(½ − c/2)M⌉, j = ⌈(½ + c/2)M⌉ (what
    ``SampleSet.interval(c)`` returns).

    Given the pooled values {y, x_1, …, x_M}, each is the target with probability 1/(M + 1); the probability is the
    share of candidates inside the interval of the other M (ties included, counted as inside as the coverage count
    does).  Without ties it is (j − i)/(M + 1): 7/9 for c = 0.9 and M = 8.

    Parameters
    ----------
    y : ndarray of shape (N,)
        Targets.
    samples : ndarray of shape (N, M)
        Members.
    coverage : float
        Nominal coverage c.
    chunk : int, default 50,000
        Rows per vectorised chunk (memory).

    Returns
    -------
    ndarray of shape (N,)
        The per-row expected coverage.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> p = order_interval_probability(rng.normal(size=5), rng.normal(size=(5, 8)), 0.9)
    >>> np.round(p, 4).tolist()
    [0.7778, 0.7778, 0.7778, 0.7778, 0.7778]

    References
    ----------
    .. [1] Anderson, J. L. (1996). A method for producing and evaluating probabilistic forecasts from ensemble model
       integrations. *Journal of Climate* 9(7), 1518–1530.
    .. [2] Talagrand, O., Vautard, R. & Strauss, B. (1997). Evaluation of probabilistic prediction systems. *Proc.
       ECMWF Workshop on Predictability*, 1–25.
    .. [3] Hamill, T. M. (2001). Interpretation of rank histograms for verifying ensemble forecasts. *Monthly Weather
       Review* 129(3), 550–560.
    """
    return order_interval_probabilities(y, samples, (coverage,), chunk)[:, 0]


def order_interval_probabilities(y: np.ndarray, samples: np.ndarray, coverages, chunk: int = 50_000) -> np.ndarray:
    """:func:`order_interval_probability` at several coverages at once (one sort of the pooled values per chunk).

    Parameters
    ----------
    y : ndarray of shape (N,)
        Targets.
    samples : ndarray of shape (N, M)
        Members.
    coverages : sequence of float
        Nominal coverages c.
    chunk : int, default 50,000
        Rows per vectorised chunk (memory).

    Returns
    -------
    ndarray of shape (N, len(coverages))
        The per-row expected coverage of each central interval.

    References
    ----------
    .. [1] Anderson, J. L. (1996). A method for producing and evaluating probabilistic forecasts from ensemble model
       integrations. *Journal of Climate* 9(7), 1518–1530.
    .. [2] Hamill, T. M. (2001). Interpretation of rank histograms for verifying ensemble forecasts. *Monthly Weather
       Review* 129(3), 550–560.
    """
    x = np.asarray(samples, dtype=float)
    yy = np.asarray(y, dtype=float)
    n, m = x.shape
    ends = [(member_index(0.5 - c / 2.0, m), member_index(0.5 + c / 2.0, m)) for c in coverages]
    out = np.empty((n, len(ends)))
    for start in range(0, n, chunk):  # chunks of rows (memory), each vectorised
        sl = slice(start, min(n, start + chunk))
        pool = np.sort(np.concatenate([yy[sl, None], x[sl]], axis=1), axis=1)
        for j, (i_lo, i_hi) in enumerate(ends):
            out[sl, j] = pool_interval_probability(pool, i_lo, i_hi)
    return out
