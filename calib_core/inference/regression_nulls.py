"""Regression null laws: what the statistics look like when every target is a draw from its predictive distribution.

* :class:`NullModel` and its layouts — the per-row moments E zᵏ (k = 1…4) and coverage probabilities under H0:
  N(0, 1) for Gaussians (:class:`GaussianNull`), the exact moments of the piecewise-uniform law with exponential
  tails for quantile sets (:class:`QuantileNull`), the exchangeability null of a finite ensemble enumerated per row
  (:class:`EnsembleNull`; Czado et al. 2009 for its randomised PIT).
* Statistics whose null depends on N only (uniform PITs, N(0, 1) z): simulated once per N and cached
  (:func:`n_only_null`, :func:`warm_up`), extrapolated above N = 2,000.
* Exact laws: Kolmogorov–Smirnov (:func:`ks_sf_ppf`, :func:`kstwo_mean`), the multinomial null of the calibration
  curve on a level grid (:func:`curve_null`), D'Agostino's skewness and Anscombe–Glynn's kurtosis tests.
"""

from __future__ import annotations

import threading
import warnings
from functools import lru_cache
from typing import Any

import numpy as np
from scipy import special, stats

from ..base.regression import QuantileSet, SampleSet, norm_pdf
from ..metrics.regression import Binning, RegressionRows
from ..metrics.regression_ensemble_ranks import member_index, pool_interval_probability
from .regression_ence import sigma_bin_edges

__all__ = ["NullModel", "GaussianNull", "QuantileNull", "EnsembleNull", "null_model", "warm_up", "n_only_null",
           "ks_sf_ppf", "kstwo_mean", "curve_null", "skew_test", "kurtosis_test"]


#: uniform-PIT / normal-z null tables are simulated at N up to this size and extrapolated beyond
_TABLE_MAX_N = 2_000


_TABLE_DRAWS = 2_000


class NullModel:
    """The null model of a generic continuous predictive law: per-row moments E zᵏ (k = 1…4) of z = (y − μ)/σ and
    coverage probabilities of the central intervals under H0 (scalars when constant).

    Under H0 each target is a draw from its predictive law, so z has mean 0 and variance 1 per row and the central
    c-interval covers with probability c; the kurtosis is taken as Gaussian (E z⁴ = 3) for a law this model does
    not know.  The subclasses give the exact moments of each layout.

    Parameters
    ----------
    rows : RegressionRows
        The rows (targets and predictive distributions).

    Attributes
    ----------
    exact_gaussian : bool
        Whether z is exactly N(0, 1) under H0 (the Gaussian layout: exact t, χ², D'Agostino tests apply).

    References
    ----------
    .. [1] Gneiting, T., Balabdaoui, F. & Raftery, A. E. (2007). Probabilistic forecasts, calibration and sharpness.
       *Journal of the Royal Statistical Society B* 69(2), 243–268.
    .. [2] Levi, D., Gispan, L., Giladi, N. & Fetaya, E. (2019). Evaluating and calibrating uncertainty prediction
       in regression tasks. *arXiv:1905.11659*.
    """

    exact_gaussian = False

    def __init__(self, rows: RegressionRows) -> None:
        self.rows = rows
        self._moments: tuple[Any, Any, Any, Any] | None = None

    def z_moments(self) -> tuple[Any, Any, Any, Any]:
        """(E z, E z², E z³, E z⁴) per row of ``rows.z_finite`` (computed once)."""
        if self._moments is None:
            self._moments = self._z_moments()
        return self._moments

    def _z_moments(self) -> tuple[Any, Any, Any, Any]:
        return 0.0, 1.0, 0.0, 3.0

    def coverage_prob(self, c: float) -> Any:
        return c


class GaussianNull(NullModel):
    """The null model of Gaussian predictions: z ~ N(0, 1) exactly, so the exact tests apply.

    Parameters
    ----------
    rows : RegressionRows
        The rows (Gaussian predictive distributions).

    References
    ----------
    .. [1] Kuleshov, V., Fenner, N. & Ermon, S. (2018). Accurate uncertainties for deep learning using calibrated
       regression. *ICML*.
    """

    exact_gaussian = True


class QuantileNull(NullModel):
    """The null model of quantile sets: the exact central moments of the piecewise-uniform law with exponential
    tails that :class:`~calib_core.base.regression.QuantileSet` interpolates.

    Between stated quantiles the law is uniform (mean of xᵏ over [a, b] = Σᵢ aⁱ b^{k−i} / (k + 1)); beyond them
    exponential tails contribute E(d + sX)ᵏ for X ~ Exp(1).  Rows with σ = 0 (all quantiles equal) have no z.

    Parameters
    ----------
    rows : RegressionRows
        The rows (quantile-set predictions).

    References
    ----------
    .. [1] Gneiting, T. & Raftery, A. E. (2007). Strictly proper scoring rules, prediction, and estimation.
       *Journal of the American Statistical Association* 102(477), 359–378.
    """

    def _z_moments(self):
        dist: QuantileSet = self.rows.dist
        tau, q = dist.levels, dist.values
        mu = self.rows.mean
        sd = self.rows.sigma
        a = q[:, :-1] - mu[:, None]
        b = q[:, 1:] - mu[:, None]
        mass = np.diff(tau)
        central = {}
        pa, pb = [np.ones_like(a), a, a**2, a**3, a**4], [np.ones_like(b), b, b**2, b**3, b**4]  # powers once
        for k in (2, 3, 4):
            # mean of x^k over [a, b] = (b^{k+1} − a^{k+1}) / ((k + 1)(b − a)) = Σ_i a^i b^{k−i} / (k + 1)
            s = sum(pa[i] * pb[k - i] for i in range(k + 1)) / (k + 1)
            central[k] = (mass * s).sum(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            if tau[0] > 0:
                inv = np.where(np.isinf(dist._lam_lo), 0.0, 1.0 / dist._lam_lo)
                d = q[:, 0] - mu
                for k in (2, 3, 4):
                    central[k] = central[k] + tau[0] * _exp_shift_moment(d, -inv, k)
            if tau[-1] < 1:
                inv = np.where(np.isinf(dist._lam_hi), 0.0, 1.0 / dist._lam_hi)
                d = q[:, -1] - mu
                for k in (2, 3, 4):
                    central[k] = central[k] + (1 - tau[-1]) * _exp_shift_moment(d, inv, k)
            m2 = central[2] / sd**2
            m3 = central[3] / sd**3
            m4 = central[4] / sd**4
        ok = self.rows.z_ok  # per row of ``z_finite``: rows with σ = 0 (all quantiles equal) have no z
        if ok is not None:
            m2, m3, m4 = m2[ok], m3[ok], m4[ok]
        return 0.0, m2, m3, m4


def _exp_shift_moment(d: np.ndarray, s: np.ndarray, k: int) -> np.ndarray:
    """E(d + sX)^k for X ~ Exp(1): Σ_j C(k, j) d^{k−j} s^j j!."""
    return sum(special.comb(k, j) * d ** (k - j) * s**j * special.factorial(j) for j in range(k + 1))


class EnsembleNull(NullModel):
    """Exchangeability null of an ensemble: given the pooled values {y, x_1..x_M}, each of the M + 1
    is the target with probability 1/(M + 1).  Enumerated exactly per row (chunks of rows).

    For every candidate target the ensemble's mean and σ are those of the other M values; this gives the per-row
    moments of z, the finite-M coverage of the order-statistic intervals (e.g. (M − 1)/(M + 1) for
    [x_(1), x_(M)]) and, with ``sigma_edges``, the per-σ-bin moments of (Σε², Σσ²) that ENCE's null needs (each
    candidate binned by its own σ).

    Parameters
    ----------
    rows : RegressionRows
        The rows (ensemble predictions, :class:`~calib_core.base.regression.SampleSet`).
    coverages : sequence of float
        Central-interval levels whose coverage probabilities are enumerated.
    sigma_edges : ndarray, optional
        Interior σ-bin edges (:func:`~calib_core.inference.regression_ence.sigma_bin_edges`) for ENCE.

    Attributes
    ----------
    m : int
        Ensemble size M.
    bin_moments : ndarray of shape (5, bins)
        Per σ-bin: E Σε², Var Σε², E Σσ², Var Σσ², Cov(Σε², Σσ²) under the exchangeability null.

    References
    ----------
    .. [1] Czado, C., Gneiting, T. & Held, L. (2009). Predictive model assessment for count data. *Biometrics*
       65(4), 1254–1261.
    .. [2] Hamill, T. M. (2001). Interpretation of rank histograms for verifying ensemble forecasts. *Monthly
       Weather Review* 129(3), 550–560.
    """

    _CHUNK = 25_000  # rows per enumeration chunk (about 100 MB of temporaries at M = 51)

    def __init__(self, rows: RegressionRows, coverages, sigma_edges: np.ndarray | None = None) -> None:
        super().__init__(rows)
        dist: SampleSet = rows.dist
        n, m = dist.samples.shape
        self.m = m
        z_mom = np.full((4, n), np.nan)
        # ENCE: per σ-bin (the candidate's own σ, binned at the observed bin edges) sums over rows of the
        # candidate moments E[ε²1], Var, E[σ²1], Var, Cov → the bin's Σε², Σσ² laws
        nb = 0 if sigma_edges is None else sigma_edges.size + 1
        self.bin_moments = np.zeros((5, nb))
        cov = {c: np.empty(n) for c in coverages}
        levels = {c: (member_index(0.5 - c / 2.0, m), member_index(0.5 + c / 2.0, m)) for c in coverages}
        for start in range(0, n, self._CHUNK):
            sl = slice(start, min(n, start + self._CHUNK))
            pool = np.concatenate([rows.y[sl, None], dist.samples[sl]], axis=1)
            pool = np.sort(pool - pool.mean(axis=1, keepdims=True), axis=1)  # centred, sorted (order is free)
            mean_k, var_k = _leave_one_out(pool)
            if nb:
                self._add_bin_moments((pool - mean_k) ** 2, var_k, sigma_edges, nb)
            with np.errstate(divide="ignore", invalid="ignore"):
                zk = (pool - mean_k) / np.sqrt(var_k)
            zk[~np.isfinite(zk)] = np.nan
            with np.errstate(invalid="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # rows whose every candidate is degenerate: NaN
                z2 = zk * zk
                z_mom[0, sl] = np.nanmean(zk, axis=1)
                z_mom[1, sl] = np.nanmean(z2, axis=1)
                z_mom[2, sl] = np.nanmean(z2 * zk, axis=1)
                z_mom[3, sl] = np.nanmean(z2 * z2, axis=1)
            for c, (i_lo, i_hi) in levels.items():
                cov[c][sl] = pool_interval_probability(pool, i_lo, i_hi)
        self._z = z_mom
        self._cov = cov

    def _add_bin_moments(self, e2: np.ndarray, v: np.ndarray, edges: np.ndarray, nb: int) -> None:
        rows_, cands = e2.shape
        binned = np.searchsorted(edges, np.sqrt(v), side="right")
        flat = (np.arange(rows_)[:, None] * nb + binned).ravel()
        size = rows_ * nb

        def per_row_bin(w):  # E over candidates of w·1[bin], per (row, bin)
            return np.bincount(flat, weights=w.ravel(), minlength=size).reshape(rows_, nb) / cands

        a, c = per_row_bin(e2), per_row_bin(v)
        aa, cc, ac = per_row_bin(e2 * e2), per_row_bin(v * v), per_row_bin(e2 * v)
        self.bin_moments += np.stack([a.sum(0), (aa - a * a).sum(0), c.sum(0), (cc - c * c).sum(0),
                                      (ac - a * c).sum(0)])

    def _z_moments(self):
        ok = self.rows.z_ok
        m = self._z if ok is None else self._z[:, ok]
        return m[0], m[1], m[2], m[3]

    def coverage_prob(self, c: float):
        return self._cov[c]


def _leave_one_out(pool: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean and variance (ddof 0) of the other M values for each of the M + 1 values of every row of ``pool``,
    by Welford prefix and suffix sums merged with Chan's formula: no difference of large sums, so M equal values
    give a variance of exactly 0 and a tiny spread keeps its digits when the left-out value is far away (the
    difference Σx² − x_k² left rounding noise of 1e-16 of the pool's Σx², a spread of 1e-8 of the pool's where the
    other values are equal, hence z ≈ 1e8).  A loop over the M + 1 columns, vectorised over rows."""
    rows_, k = pool.shape
    pre_m, pre_s, suf_m, suf_s = (np.zeros((rows_, k + 1)) for _ in range(4))
    for j in range(k):  # prefix of the first j + 1 values
        d = pool[:, j] - pre_m[:, j]
        pre_m[:, j + 1] = pre_m[:, j] + d / (j + 1)
        pre_s[:, j + 1] = pre_s[:, j] + d * (pool[:, j] - pre_m[:, j + 1])
    for j in range(k - 1, -1, -1):  # suffix from j on: suf_*[:, j] (count k − j)
        d = pool[:, j] - suf_m[:, j + 1]
        suf_m[:, j] = suf_m[:, j + 1] + d / (k - j)
        suf_s[:, j] = suf_s[:, j + 1] + d * (pool[:, j] - suf_m[:, j])
    na = np.arange(k, dtype=float)[None, :]  # left of candidate i: i values; right: k − 1 − i
    nb = (k - 1.0) - na
    ma, sa = pre_m[:, :k], pre_s[:, :k]
    mb, sb = suf_m[:, 1:], suf_s[:, 1:]
    delta = mb - ma
    mean = ma + delta * nb / (k - 1.0)
    ss = sa + sb + delta * delta * na * nb / (k - 1.0)
    return mean, np.maximum(ss, 0.0) / (k - 1.0)


def null_model(rows: RegressionRows, coverages, n_bins: int, binning: Binning) -> NullModel:
    """The null model of the rows' layout: Gaussian, ensemble (exchangeability, binned at the σ-bins), quantile
    set, or the generic one.

    Parameters
    ----------
    rows : RegressionRows
        The rows.
    coverages : sequence of float
        Central-interval levels (ensembles enumerate their coverage probabilities).
    n_bins : int
        σ-bins of ENCE (ensembles).
    binning : {"count", "width"}
        Equal-count or equal-width σ-bins (ensembles).

    Returns
    -------
    NullModel
        :class:`GaussianNull`, :class:`EnsembleNull`, :class:`QuantileNull` or :class:`NullModel`.

    References
    ----------
    .. [1] Czado, C., Gneiting, T. & Held, L. (2009). Predictive model assessment for count data. *Biometrics*
       65(4), 1254–1261.
    """
    if rows._gaussian:
        return GaussianNull(rows)
    if isinstance(rows.dist, SampleSet):
        edges, _ = sigma_bin_edges(rows.sigma, rows.sigma_bins(n_bins, binning), int(n_bins))
        return EnsembleNull(rows, coverages, sigma_edges=edges)
    if isinstance(rows.dist, QuantileSet):
        return QuantileNull(rows)
    return NullModel(rows)  # generic continuous law: E z = 0, E z² = 1; kurtosis taken as Gaussian


def _pit_curve_stats(u_sorted: np.ndarray) -> dict[str, np.ndarray]:
    """Area and sample-spacing entropy of sorted uniform samples, one per row of ``u_sorted``."""
    n = u_sorted.shape[1]
    d = np.arange(1, n + 1) / n - u_sorted
    e = d - 1.0 / n
    area = 0.5 * ((d * np.abs(d)).sum(axis=1) - (e * np.abs(e)).sum(axis=1))
    k = max(1, int(round(np.sqrt(n))))
    k = min(k, n - 1)
    with np.errstate(divide="ignore"):
        entropy = np.mean(np.log((n + 1) / k * (u_sorted[:, k:] - u_sorted[:, :-k])), axis=1)
    z = special.ndtri(u_sorted)
    eta = z / np.sqrt(2.0)
    i = np.arange(1, n + 1, dtype=float)
    s_erf = (z * 2.0 * u_sorted).sum(axis=1) / np.sqrt(2.0)
    s_exp = np.sqrt(2.0 * np.pi) * norm_pdf(z).sum(axis=1)
    s_rank = (eta * (2.0 * i - 1.0)).sum(axis=1)
    rs = s_erf / n - s_rank / n**2 + s_exp / (np.sqrt(np.pi) * n) - 0.5 * np.sqrt(2.0 / np.pi)
    return {"miscalibration_area": area, "pit_entropy": entropy, "reliability_score": rs}


_TABLE_LOCK = threading.Lock()


def _n_only_table(n: int, draws: int = _TABLE_DRAWS) -> dict[str, np.ndarray]:
    """Null draws of the statistics that depend on N only, at N = n (seeded per n, cached for the process).

    One builder at a time: a diagnosis that needs a table the server-start warm-up thread is still building
    waits for it instead of building it a second time alongside (which would cost more than waiting)."""
    with _TABLE_LOCK:
        return _built_n_only_table(n, draws)


@lru_cache(maxsize=32)
def _built_n_only_table(n: int, draws: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(np.random.SeedSequence([20240512, n]))
    out: dict[str, list[np.ndarray]] = {}
    chunk = max(1, 2_000_000 // n)
    for start in range(0, draws, chunk):
        u = np.sort(rng.random((min(chunk, draws - start), n)), axis=1)
        for key, val in _pit_curve_stats(u).items():
            out.setdefault(key, []).append(val)
    return {k: np.concatenate(v) for k, v in out.items()}


def warm_up() -> None:
    """Build the N-only null tables that every diagnosis above N = 2,000 rows reads, ahead of the first one.

    The calibration-curve statistics of a continuous PIT (miscalibration area, PIT entropy, reliability score)
    have nulls that depend on N only: uniform PITs are simulated once at N = 1,000 and N = 2,000
    (2,000 sorted draws each, about 0.5 s) and extrapolated to larger N (:func:`n_only_null`).  Both tables
    are cached for the process; calling this at server start (the dashboard does, in a background thread)
    keeps that cost out of the user's first diagnosis.  Idempotent and thread-safe (one lock, one cache).

    References
    ----------
    .. [1] Kuleshov, V., Fenner, N. & Ermon, S. (2018). Accurate uncertainties for deep learning using calibrated
       regression. *ICML* (the calibration curve).
    .. [2] Camporeale, E. & Carè, A. (2021). ACCRUE: accurate and reliable uncertainty estimate in deterministic
       models. *International Journal for Uncertainty Quantification* 11(4), 81–94 (the reliability score).
    """
    _n_only_table(_TABLE_MAX_N // 2)
    _n_only_table(_TABLE_MAX_N)


def n_only_null(name: str, n: int) -> tuple[np.ndarray, str]:
    """Null draws of an N-only statistic at N = n: simulated (n ≤ 2,000) or extrapolated.

    Above 2,000 the draws at N = 2,000 are rescaled to the mean and spread at N extrapolated from N = 1,000 and
    2,000 by power laws in N (−H for the PIT entropy, which is ≤ 0).

    Parameters
    ----------
    name : {"miscalibration_area", "pit_entropy", "reliability_score"}
        The statistic.
    n : int
        Number of PITs (or z).

    Returns
    -------
    draws : ndarray of shape (2000,)
        Null draws of the statistic.
    how : str
        How they were made (for the table's ``test``).

    References
    ----------
    .. [1] Chung, Y., Char, I., Guo, H., Schneider, J. & Neiswanger, W. (2021). Uncertainty Toolbox: an open-source
       library for assessing, visualizing, and improving uncertainty quantification. *arXiv:2109.10254*
       (miscalibration area).
    .. [2] Vasicek, O. (1976). A test for normality based on sample entropy. *Journal of the Royal Statistical
       Society B* 38(1), 54–59 (spacing entropy).
    """
    if n <= _TABLE_MAX_N:
        return _n_only_table(n)[name], "simulated uniform PITs at this N"
    n1, n2 = _TABLE_MAX_N // 2, _TABLE_MAX_N
    t1, t2 = _n_only_table(n1)[name], _n_only_table(n2)[name]
    sign = -1.0 if name == "pit_entropy" else 1.0  # entropy ≤ 0: extrapolate −H
    m1, m2 = sign * t1.mean(), sign * t2.mean()
    s1, s2 = t1.std(), t2.std()
    ratio = np.log(n / n2) / np.log(n2 / n1)
    mean_n = m2 * (m2 / m1) ** ratio
    sd_n = s2 * (s2 / s1) ** ratio
    draws = sign * (mean_n + (sign * t2 - m2) * sd_n / s2)
    return draws, f"uniform PITs simulated at N = {n1:,} and {n2:,}, extrapolated (power laws in N)"


def skew_test(g1: float, n: int) -> float:
    """D'Agostino's skewness test (as scipy.stats.skewtest) from the sample skewness and N.

    Parameters
    ----------
    g1 : float
        Sample skewness of z.
    n : int
        Number of z (at least 8, else NaN).

    Returns
    -------
    float
        Two-sided p-value of "z is Gaussian" through its skewness.

    References
    ----------
    .. [1] D'Agostino, R. B. (1970). Transformation to normality of the null distribution of g1. *Biometrika*
       57(3), 679–681.
    """
    if n < 8 or not np.isfinite(g1):
        return float("nan")
    y = g1 * np.sqrt(((n + 1) * (n + 3)) / (6.0 * (n - 2)))
    beta2 = 3.0 * (n * n + 27 * n - 70) * (n + 1) * (n + 3) / ((n - 2.0) * (n + 5) * (n + 7) * (n + 9))
    w2 = -1 + np.sqrt(2 * (beta2 - 1))
    delta = 1 / np.sqrt(0.5 * np.log(w2))
    alpha = np.sqrt(2.0 / (w2 - 1))
    y = np.where(y == 0, 1, y)
    z = delta * np.log(y / alpha + np.sqrt((y / alpha) ** 2 + 1))
    return float(2 * special.ndtr(-abs(z)))


def kurtosis_test(g2: float, n: int) -> float:
    """Anscombe–Glynn kurtosis test (as scipy.stats.kurtosistest) from the excess kurtosis and N.

    Parameters
    ----------
    g2 : float
        Sample excess kurtosis of z.
    n : int
        Number of z (at least 5, else NaN).

    Returns
    -------
    float
        Two-sided p-value of "z is Gaussian" through its kurtosis.

    References
    ----------
    .. [1] Anscombe, F. J. & Glynn, W. J. (1983). Distribution of the kurtosis statistic b2 for normal samples.
       *Biometrika* 70(1), 227–234.
    """
    if n < 5 or not np.isfinite(g2):
        return float("nan")
    b2 = g2 + 3.0
    e = 3.0 * (n - 1) / (n + 1)
    varb2 = 24.0 * n * (n - 2) * (n - 3) / ((n + 1) * (n + 1.0) * (n + 3) * (n + 5))
    x = (b2 - e) / np.sqrt(varb2)
    sqrtbeta1 = 6.0 * (n * n - 5 * n + 2) / ((n + 7) * (n + 9))
    sqrtbeta1 *= np.sqrt((6.0 * (n + 3) * (n + 5)) / (n * (n - 2) * (n - 3)))
    a = 6.0 + 8.0 / sqrtbeta1 * (2.0 / sqrtbeta1 + np.sqrt(1 + 4.0 / (sqrtbeta1**2)))
    term1 = 1 - 2 / (9.0 * a)
    denom = 1 + x * np.sqrt(2 / (a - 4.0))
    term2 = np.sign(denom) * np.where(denom == 0.0, np.nan, np.power((1 - 2.0 / a) / np.abs(denom), 1 / 3.0))
    z = (term1 - term2) / np.sqrt(2 / (9.0 * a))
    return float(2 * special.ndtr(-abs(z)))


_KS_EXACT_MAX_N = 20_000


_KOLMOGOROV_MEAN = float(np.sqrt(np.pi / 2.0) * np.log(2.0))  # E sup|Brownian bridge|


def kstwo_mean(n: int) -> float:
    """E D_N under H0: (√(π/2) ln 2 − 1/(6√N))/√N (the expansion of √N D_N; within 1e-4 relative of
    ``scipy.stats.kstwo.mean``, which integrates numerically and takes seconds at large N).

    Parameters
    ----------
    n : int
        Number of PITs.

    Returns
    -------
    float
        The expected Kolmogorov–Smirnov distance of N uniform PITs.

    References
    ----------
    .. [1] Kolmogorov, A. N. (1933). Sulla determinazione empirica di una legge di distribuzione. *Giornale
       dell'Istituto Italiano degli Attuari* 4, 83–91.
    """
    sn = np.sqrt(n)
    return float((_KOLMOGOROV_MEAN - 1.0 / (6.0 * sn)) / sn)


def ks_sf_ppf(d: float, n: int, level: float) -> tuple[float, float, str]:
    """(p-value of D = d, the level-quantile of D_N, the law's name): the exact law (``kstwo``) up to
    N = 20,000; beyond, Kolmogorov's limit with Stephens' correction (√N + 0.12 + 0.11/√N)·D (within
    0.1% at p = 0.05 and 1.5% at p = 1e-30 for N ≥ 1e5, where the exact law takes seconds per call).

    Parameters
    ----------
    d : float
        Observed KS distance.
    n : int
        Number of PITs.
    level : float
        Level of the quantile (the half-width of the KS band).

    Returns
    -------
    (float, float, str)
        p-value, quantile and the law's name.

    References
    ----------
    .. [1] Simard, R. & L'Ecuyer, P. (2011). Computing the two-sided Kolmogorov–Smirnov distribution. *Journal of
       Statistical Software* 39(11).
    .. [2] Stephens, M. A. (1970). Use of the Kolmogorov–Smirnov, Cramér–von Mises and related statistics without
       extensive tables. *Journal of the Royal Statistical Society B* 32(1), 115–122.
    """
    if n <= _KS_EXACT_MAX_N:
        return float(stats.kstwo.sf(d, n)), _kstwo_ppf(float(level), int(n)), "Kolmogorov–Smirnov, exact"
    k = np.sqrt(n) + 0.12 + 0.11 / np.sqrt(n)
    return (float(stats.kstwobign.sf(k * d)), float(stats.kstwobign.ppf(level)) / k,
            "Kolmogorov–Smirnov (Stephens-corrected limit law, N > 20,000)")


@lru_cache(maxsize=1024)
def _kstwo_ppf(level: float, n: int) -> float:
    """``kstwo.ppf(level, n)`` (a root search over the exact law: ~5 ms at N = 7,000), once per (level, N)."""
    return float(stats.kstwo.ppf(level, n))


@lru_cache(maxsize=32)
def curve_null(n: int, levels: tuple[float, ...], n_null: int) -> dict[str, np.ndarray]:
    """Null draws of calibration_rmse (on ``levels``) and the l2 QCE (levels j/100) for N uniform PITs:
    exact, from multinomial counts of the cells between the grid points (seeded per N, cached).

    Parameters
    ----------
    n : int
        Number of PITs.
    levels : tuple of float
        The level grid of calibration_rmse.
    n_null : int
        Null draws.

    Returns
    -------
    dict of str to ndarray of shape (n_null,)
        ``calibration_rmse`` and ``quantile_calibration_error`` draws.

    References
    ----------
    .. [1] Kuleshov, V., Fenner, N. & Ermon, S. (2018). Accurate uncertainties for deep learning using calibrated
       regression. *ICML*, eq. 9.
    .. [2] Utpala, S. & Rai, P. (2020). Quantile regularization: towards implicit calibration of regression models.
       *arXiv:2002.12860*.
    """
    rng = np.random.default_rng(np.random.SeedSequence([20240513, n, n_null]))
    lev = np.asarray(levels, dtype=float)
    qce_lev = np.arange(1, 101) / 100.0
    cuts = np.unique(np.concatenate([lev, qce_lev, [0.0, 1.0]]))
    cuts = cuts[(cuts > 0) & (cuts < 1)]
    edges = np.concatenate([[0.0], cuts, [1.0]])
    counts = rng.multinomial(n, np.diff(edges), size=n_null)
    cdf = np.concatenate([np.zeros((n_null, 1)), np.cumsum(counts, axis=1)], axis=1) / n  # ECDF at the edges
    p_lev = cdf[:, np.searchsorted(edges, np.clip(lev, 0, 1))]
    p_lev[:, lev <= 0] = 0.0  # u > 0 almost surely
    p_qce = cdf[:, np.searchsorted(edges, qce_lev)]
    return {"calibration_rmse": np.sqrt(np.mean((p_lev - lev) ** 2, axis=1)),
            "quantile_calibration_error": np.mean((p_qce - qce_lev) ** 2, axis=1)}
