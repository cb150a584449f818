"""Quantile calibration of regression predictions: the calibration curve and the statistics of the PIT ECDF.

Under calibration the PIT values u_i = F_i(y_i) are uniform on [0, 1] (Kuleshov et al. 2018): the observed
proportion p̂(p) = mean(u_i ≤ p) equals p at every level.  Here: the curve (p, p̂(p)) on a level grid, its RMSE
(Zelikman et al., "CRUDE"), the l2 quantile calibration error (Utpala & Rai 2020, eq. 8), the miscalibration area
(Chung et al. 2021), the largest deviation sup_p |p̂(p) − p| (ACCRUE's calibration error, the KS statistic of the
PIT) and the sample-spacing entropy of the PIT (Utpala & Rai 2020, eq. 6).  The weighted kernels (``stat_*``)
serve :func:`calib_core.metrics.regression.summary_statistics` and the bootstrap.
"""

from __future__ import annotations

import numpy as np

from ..base.regression import PredictiveDistribution
from .regression_rows import DEFAULT_LEVELS, PropType, RegressionRows, dot, metric_rows

__all__ = [
    "observed_proportions",
    "calibration_curve",
    "calibration_rmse",
    "mean_absolute_calibration_error",
    "quantile_calibration_error",
    "miscalibration_area",
    "max_calibration_deviation",
    "pit_entropy",
]


def observed_proportions(r: RegressionRows, w: np.ndarray | None, levels: np.ndarray, prop_type: PropType):
    """Observed proportions p̂_j of a calibration curve at ``levels``, with row weights.

    ``prop_type="quantile"``: p̂_j = Σ_i w_i 1[u_i ≤ p_j] / Σ_i w_i; ``"interval"``: the weighted fraction of targets
    inside the central interval of coverage p_j, 1[|2u_i − 1| ≤ p_j].

    Parameters
    ----------
    r : RegressionRows
        The rows.
    w : ndarray of shape (n,) or None
        Row weights (bootstrap counts); None: the data.
    levels : ndarray of shape (m,)
        Levels p_j in [0, 1].
    prop_type : {"quantile", "interval"}
        Which proportion.

    Returns
    -------
    ndarray of shape (m,)
        The observed proportions p̂_j.

    References
    ----------
    Kuleshov, V., Fenner, N. & Ermon, S. (2018). Accurate uncertainties for deep learning using calibrated
    regression. ICML, PMLR 80, 2796–2804.

    Chung, Y., Char, I., Guo, H., Schneider, J. & Neiswanger, W. (2021). Uncertainty Toolbox: an open-source
    library for assessing, visualizing, and improving uncertainty quantification. arXiv:2109.10254.
    """
    levels = np.asarray(levels, dtype=float)
    if prop_type == "quantile":
        if w is None:
            return np.searchsorted(r.u_sorted, levels, side="right") / r.n
        cw = r.cum_weights(w, r.u_order, "u")
        k = np.searchsorted(r.u_sorted, levels, side="right")
        return np.where(k > 0, cw[np.maximum(k - 1, 0)], 0.0) / cw[-1]
    if prop_type == "interval":
        # centred interval of coverage p contains y  ⇔  |2u − 1| ≤ p
        d = np.abs(2.0 * r.u - 1.0)
        if w is None:
            return np.searchsorted(np.sort(d), levels, side="right") / r.n
        order = np.argsort(d, kind="stable")
        cw = np.cumsum(w[order])
        k = np.searchsorted(d[order], levels, side="right")
        return np.where(k > 0, cw[np.maximum(k - 1, 0)], 0.0) / cw[-1]
    raise ValueError(f"prop_type must be 'quantile' or 'interval', got {prop_type!r}")


def _ecdf_steps(r: RegressionRows, w: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """Sorted PIT values and the weighted ECDF just after each of them (normalised to 1)."""
    if w is None:
        return r.u_sorted, np.arange(1, r.n + 1) / r.n
    cw = r.cum_weights(w, r.u_order, "u")
    return r.u_sorted, cw / cw[-1]


def _ecdf_gap_statistics(r: RegressionRows) -> tuple[float, float] | None:
    """(area, largest deviation) of the unweighted PIT ECDF from the gaps d_j = j/N − u_(j), j = 1 … N (the ECDF
    just after each sorted PIT value minus the value), cached; ``None`` if a PIT value lies outside [0, 1] (then the
    general path clips).  Both come from one gap array and one more buffer: after the area's first sum the gaps
    are shifted by −1/N in place (the same subtraction as into a new array), so no third 10⁶-row array is made."""
    cache = r.__dict__
    if "_ecdf_gap_statistics" not in cache:
        u = r.u_sorted
        ok = u.shape[0] > 0 and u[0] >= 0.0 and u[-1] <= 1.0
        found = None
        if ok:  # j/N − u_(j) in one buffer (j < 2⁵³: the float j is exact, as the integer's conversion was)
            d = np.arange(1, r.n + 1, dtype=float)
            d /= r.n
            d -= u
            largest = float(max(d.max(), 1.0 / r.n - d.min(), 0.0))
            buf = np.abs(d)
            first = dot(d, buf)
            d -= 1.0 / r.n  # e_j = d_j − 1/N
            area = float(0.5 * (first - dot(d, np.abs(d, out=buf))))
            found = (area, largest)
        cache["_ecdf_gap_statistics"] = found
    return cache["_ecdf_gap_statistics"]


def stat_max_deviation(r: RegressionRows, w: np.ndarray | None) -> float:
    """sup_p |ECDF(u)(p) − p| (exact: the supremum is attained at a jump).

    Just after u_(j) the gap is d_j = j/N − u_(j); just before it, u_(j) − (j − 1)/N = 1/N − d_j.
    """
    found = _ecdf_gap_statistics(r) if w is None else None
    if found is not None:
        return found[1]
    u, after = _ecdf_steps(r, w)
    before = np.concatenate([[0.0], after[:-1]])
    return float(max(np.max(after - u), np.max(u - before), 0.0))


def stat_area(r: RegressionRows, w: np.ndarray | None) -> float:
    """∫₀¹ |ECDF(u)(p) − p| dp, exactly.

    On the gap [a, b] between consecutive sorted PIT values the ECDF is a constant c, and
    ∫_a^b |c − p| dp = ½[(c − a)|c − a| − (c − b)|c − b|]  (an antiderivative of |c − p| is
    −½(c − p)|c − p|).  Unweighted, with g(x) = x|x| and d_j = j/N − u_(j), the gaps telescope to
    ½ Σ_j [g(d_j) − g(d_j − 1/N)] (the end gaps [0, u_(1)] and [u_(N), 1] included).
    """
    found = _ecdf_gap_statistics(r) if w is None else None
    if found is not None:
        return found[0]
    u, after = _ecdf_steps(r, w)
    n = u.shape[0]
    edges = np.empty(n + 2)
    edges[0], edges[-1] = 0.0, 1.0
    np.clip(u, 0.0, 1.0, out=edges[1:-1])
    c = np.empty(n + 1)
    c[0] = 0.0
    c[1:] = after
    da = c - edges[:-1]
    db = c - edges[1:]
    return float(0.5 * (dot(da, np.abs(da)) - dot(db, np.abs(db))))


def stat_pit_entropy(r: RegressionRows, w: np.ndarray | None) -> float:
    """Sample-spacing entropy (QR eq. 6).  With weights: on the distinct resampled rows."""
    u = r.u_sorted if w is None else r.u_sorted[w[r.u_order] > 0]
    n = u.shape[0]
    if n < 2:  # QR eq. 6 needs one spacing: n = 2, k = 1 is defined
        return float("nan")
    k = max(1, int(round(np.sqrt(n))))
    if k >= n:
        k = n - 1
    spacing = u[k:] - u[:-k]
    spacing *= (n + 1) / k  # the steps of log((n + 1)/k · spacing), in one buffer
    with np.errstate(divide="ignore"):
        return float(np.mean(np.log(spacing, out=spacing)))


def calibration_curve(
    y: np.ndarray,
    dist: PredictiveDistribution,
    *,
    levels: np.ndarray = DEFAULT_LEVELS,
    prop_type: PropType = "quantile",
) -> tuple[np.ndarray, np.ndarray]:
    """Kuleshov quantile-calibration curve: (expected p_j, observed p̂_j).

    ``prop_type="quantile"`` (default): p̂_j = mean(u_i ≤ p_j), u the PIT.  ``prop_type="interval"``
    (uncertainty-toolbox's default): p̂_j = fraction of targets inside the centred interval of coverage p_j, i.e.
    mean(|2u − 1| ≤ p_j).

    Parameters
    ----------
    y : ndarray of shape (n,)
        Targets.
    dist : PredictiveDistribution
        The n predictive distributions.
    levels : ndarray of shape (m,), default DEFAULT_LEVELS
        Levels p_j (0, 0.01, …, 1).
    prop_type : {"quantile", "interval"}, default "quantile"
        Which proportion.

    Returns
    -------
    levels : ndarray of shape (m,)
        The expected proportions p_j.
    observed : ndarray of shape (m,)
        The observed proportions p̂_j.

    References
    ----------
    Kuleshov, V., Fenner, N. & Ermon, S. (2018). Accurate uncertainties for deep learning using calibrated
    regression. ICML, PMLR 80, 2796–2804.

    Chung, Y., Char, I., Guo, H., Schneider, J. & Neiswanger, W. (2021). Uncertainty Toolbox: an open-source
    library for assessing, visualizing, and improving uncertainty quantification. arXiv:2109.10254.
    """
    levels = np.asarray(levels, dtype=float)
    return levels, observed_proportions(metric_rows(y, dist), None, levels, prop_type)


def calibration_rmse(
    y: np.ndarray,
    dist: PredictiveDistribution,
    *,
    levels: np.ndarray = DEFAULT_LEVELS,
    prop_type: PropType = "quantile",
) -> float:
    """Calibration RMSE = sqrt(mean_j (p̂_j − p_j)²) over the level grid (CRUDE §4).

    With ``levels=np.linspace(0, 1, 100), prop_type="interval"`` this is uncertainty-toolbox's
    ``root_mean_squared_calibration_error``.

    Parameters
    ----------
    y : ndarray of shape (n,)
        Targets.
    dist : PredictiveDistribution
        The n predictive distributions.
    levels : ndarray of shape (m,), default DEFAULT_LEVELS
        Levels p_j.
    prop_type : {"quantile", "interval"}, default "quantile"
        Proportion of :func:`calibration_curve`.

    Returns
    -------
    float
        The calibration RMSE (0 for a perfectly calibrated curve).

    References
    ----------
    Zelikman, E., Healy, C., Zhou, S. & Avati, A. (2020). CRUDE: calibrating regression uncertainty
    distributions empirically. arXiv:2005.12496.

    Chung, Y., Char, I., Guo, H., Schneider, J. & Neiswanger, W. (2021). Uncertainty Toolbox: an open-source
    library for assessing, visualizing, and improving uncertainty quantification. arXiv:2109.10254.
    """
    p, ph = calibration_curve(y, dist, levels=levels, prop_type=prop_type)
    return float(np.sqrt(np.mean((ph - p) ** 2)))


def mean_absolute_calibration_error(
    y: np.ndarray,
    dist: PredictiveDistribution,
    *,
    levels: np.ndarray = DEFAULT_LEVELS,
    prop_type: PropType = "quantile",
) -> float:
    """Mean absolute calibration error MACE = mean_j |p̂_j − p_j| over the level grid.

    p̂_j as in :func:`calibration_curve`; Uncertainty Toolbox's MACE with its levels.

    Parameters
    ----------
    y : ndarray of shape (n,)
        Targets.
    dist : PredictiveDistribution
        The n predictive distributions.
    levels : ndarray of shape (m,), default DEFAULT_LEVELS
        Levels p_j.
    prop_type : {"quantile", "interval"}, default "quantile"
        Proportion of :func:`calibration_curve`.

    Returns
    -------
    float
        The MACE.

    References
    ----------
    Chung, Y., Char, I., Guo, H., Schneider, J. & Neiswanger, W. (2021). Uncertainty Toolbox: an open-source
    library for assessing, visualizing, and improving uncertainty quantification. arXiv:2109.10254.

    Kuleshov, V., Fenner, N. & Ermon, S. (2018). Accurate uncertainties for deep learning using calibrated
    regression. ICML, PMLR 80, 2796–2804.
    """
    p, ph = calibration_curve(y, dist, levels=levels, prop_type=prop_type)
    return float(np.mean(np.abs(ph - p)))


def quantile_calibration_error(y: np.ndarray, dist: PredictiveDistribution, *, n_levels: int = 100) -> float:
    """l2 quantile calibration error (QR eq. 8): (1/M) Σ_{j=1}^{M} (p̂_j − p_j)², p_j = j/M.

    Parameters
    ----------
    y : ndarray of shape (n,)
        Targets.
    dist : PredictiveDistribution
        The n predictive distributions.
    n_levels : int, default 100
        M, the number of levels.

    Returns
    -------
    float
        The mean squared deviation of the quantile-calibration curve.

    References
    ----------
    Utpala, S. & Rai, P. (2020). Quantile regularization: towards implicit calibration of regression models.
    arXiv:2002.12860.
    """
    levels = np.arange(1, n_levels + 1) / n_levels
    p, ph = calibration_curve(y, dist, levels=levels, prop_type="quantile")
    return float(np.mean((ph - p) ** 2))


def miscalibration_area(
    y: np.ndarray,
    dist: PredictiveDistribution,
    *,
    levels: np.ndarray | None = None,
    prop_type: PropType = "quantile",
) -> float:
    """Miscalibration area between the calibration curve and the diagonal.

    ``levels=None`` (default): the exact area ∫₀¹ |ECDF_u(p) − p| dp of the PIT ECDF (no grid).  With a grid of
    levels: the area between the piecewise-linear curve through (p_j, p̂_j) and the diagonal, splitting segments where
    they cross (uncertainty-toolbox's polygon area with ``levels=np.linspace(0, 1, 100), prop_type="interval"``).

    Parameters
    ----------
    y : ndarray of shape (n,)
        Targets.
    dist : PredictiveDistribution
        The n predictive distributions.
    levels : ndarray of shape (m,) or None, default None
        Levels of the curve; None: the exact area (``prop_type="quantile"`` only).
    prop_type : {"quantile", "interval"}, default "quantile"
        Proportion of :func:`calibration_curve`.

    Returns
    -------
    float
        The area, in [0, ½].

    References
    ----------
    Chung, Y., Char, I., Guo, H., Schneider, J. & Neiswanger, W. (2021). Uncertainty Toolbox: an open-source
    library for assessing, visualizing, and improving uncertainty quantification. arXiv:2109.10254.

    Kuleshov, V., Fenner, N. & Ermon, S. (2018). Accurate uncertainties for deep learning using calibrated
    regression. ICML, PMLR 80, 2796–2804.
    """
    if levels is None:
        if prop_type != "quantile":
            raise ValueError("the exact (grid-free) area is defined for prop_type='quantile'")
        return stat_area(metric_rows(y, dist), None)
    p, ph = calibration_curve(y, dist, levels=levels, prop_type=prop_type)
    return _area_between_polyline_and_diagonal(p, ph)


def _area_between_polyline_and_diagonal(p: np.ndarray, ph: np.ndarray) -> float:
    d0, d1 = ph[:-1] - p[:-1], ph[1:] - p[1:]
    dx = np.diff(p)
    same = d0 * d1 >= 0
    area_same = 0.5 * dx * (np.abs(d0) + np.abs(d1))
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.abs(d0) / (np.abs(d0) + np.abs(d1))
    area_cross = 0.5 * dx * (t * np.abs(d0) + (1 - t) * np.abs(d1))
    return float(np.sum(np.where(same, area_same, np.nan_to_num(area_cross))))


def max_calibration_deviation(y: np.ndarray, dist: PredictiveDistribution) -> float:
    """sup_p |ECDF(u)(p) − p|, computed exactly without binning (the KS statistic of the PIT).

    ACCRUE's "calibration error"; equals ``scipy.stats.kstest(u, "uniform").statistic``.

    Parameters
    ----------
    y : ndarray of shape (n,)
        Targets.
    dist : PredictiveDistribution
        The n predictive distributions.

    Returns
    -------
    float
        The largest deviation of the PIT ECDF from the diagonal.

    References
    ----------
    Camporeale, E. & Carè, A. (2021). ACCRUE: accurate and reliable uncertainty estimate in deterministic
    models. International Journal for Uncertainty Quantification 11(4), 81–94.

    Kuleshov, V., Fenner, N. & Ermon, S. (2018). Accurate uncertainties for deep learning using calibrated
    regression. ICML, PMLR 80, 2796–2804.
    """
    return stat_max_deviation(metric_rows(y, dist), None)


def pit_entropy(y: np.ndarray, dist: PredictiveDistribution) -> float:
    """Sample-spacing entropy of the PIT (QR eq. 6), k = round(√n).

    H = 1/(n−k) Σ_{i=1}^{n−k} log((n+1)/k · (u_(i+k) − u_(i))).  H ≤ 0, → 0 for uniform PIT; KL(PIT ‖ U(0,1)) ≈ −H.

    Parameters
    ----------
    y : ndarray of shape (n,)
        Targets.
    dist : PredictiveDistribution
        The n predictive distributions.

    Returns
    -------
    float
        H (NaN for fewer than 2 rows).

    References
    ----------
    Utpala, S. & Rai, P. (2020). Quantile regularization: towards implicit calibration of regression models.
    arXiv:2002.12860.

    Vasicek, O. (1976). A test for normality based on sample entropy. Journal of the Royal Statistical Society
    B 38(1), 54–59.
    """
    return stat_pit_entropy(metric_rows(y, dist), None)
