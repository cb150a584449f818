"""Where are the predictive distributions miscalibrated? Every candidate slice tested and ranked by evidence.

:func:`slice_ranking` computes, for every slice of :func:`calib_core.slices.candidates.candidate_slices`, five
calibration statistics from per-slice sums (no loop over rows), each tested against its null at that slice's n:

=================  ===============================================================  ============================
statistic          value                                                            null law (H0: y_i ~ F_i)
=================  ===============================================================  ============================
PIT χ²             Pearson χ² of the slice's PIT deciles, Σ_b (O_b − n/10)²/(n/10)  exact: each decile count
                                                                                    O_b ~ Binomial(n, 1/10), the
                                                                                    most extreme one, ×10
                                                                                    (Bonferroni over deciles)
coverage 90%       share of rows with PIT in [0.05, 0.95]                           Binomial(n, 0.9), exact
mean z             mean of z_i = Φ⁻¹(PIT_i)                                         √n·mean z ~ N(0, 1), exact
std z              sample standard deviation of z                                   (n−1)·s² ~ χ²_{n−1}, exact
ENCE               mean over σ-bins b of |RMV_b − RMSE_b|/RMV_b (Levi et al. 2019)  simulated: per bin
                   with RMV_b² = mean σ², RMSE_b² = mean (σz)², σ-bins fixed on     MSE_b/MV_b ~ χ²_ν/ν with ν
                   all rows (equal-count quantiles of σ)                            = (Σσ²)²/Σσ⁴ (Satterthwaite;
                                                                                    exact for equal σ in a bin),
                                                                                    χ²_ν/ν by Wilson–Hilferty
=================  ===============================================================  ============================

z = Φ⁻¹(PIT) is exactly N(0, 1) under H0 for any continuous predictive distribution, and equals the standardised
residual (y − μ)/σ for a Gaussian one (then mean z, std z and ENCE are the page's usual statistics); the PIT of an
ensemble or of a distribution with atoms is randomised (Czado et al. 2009).  The PIT test is exact rather than
Pearson's χ²₉: the search's adjusted thresholds sit near p = 10⁻⁶, where the χ² approximation of a slice of a few
hundred rows is anti-conservative (one decile 5.5 s.d. high: χ² p = 9·10⁻⁸, exact decile p ≈ 3·10⁻⁶; this
flagged a slice of calibrated data in a benchmark data set).  Each test is two-sided (ENCE: one-sided).  ENCE is
not tested for ensembles: the members' own spread is noisy and the target's rank depends on it (a slice's σ-bins
sorted by the sample spread differ under calibration too), so ``p ENCE`` is NaN there.  The p-values of a slice are
combined by Bonferroni and the slices are ranked and Holm-adjusted by
:func:`calib_core.slices.candidates.rank_slices`.

Every exact p-value is computed in log space (:mod:`calib_core.base.significance_tails`: SciPy's log tail where it
is a normal float, Temme's asymptotic expansion of the incomplete gamma function and the continued fraction of the
incomplete beta function beyond, Abramowitz & Stegun 1964), so a slice of 10⁵ rows with σ off by half has a finite
evidence in the thousands instead of "Infinity", and large miscalibrated slices are ranked by it rather than by
their size.  Ties in evidence are broken by ``effect``, the deciding test's deviation in units of its per-row null
standard deviation (free of n): PIT max_b |O_b/n − 1/10|/0.3; coverage |k/n − 0.9|/0.3; mean z |z̄|; std z
|s² − 1|/√2; ENCE √2·ENCE (|MSE/MV − 1| ≈ 2·|RMSE/RMV − 1| and z² has null standard deviation √2).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy import special, stats

from ..base.predictions import InputError, PredictionSet
from ..base.regression import PredictiveDistribution, SampleSet
from ..base.significance_tails import (
    log_binom_cdf,
    log_binom_sf,
    log_chi2_cdf,
    log_chi2_sf,
    log_norm_two_sided,
    log_two_sided,
)
from .candidates import (
    ALPHA,
    DEFAULT_BINS,
    DEFAULT_MIN_SIZE,
    SliceSet,
    candidate_slices,
    rank_slices,
    slice_binned_sums,
)

__all__ = ["slice_ranking", "rank_row_statistics", "row_statistics", "slice_row_statistics", "ranking_from_sums",
           "sigma_bin_edges", "funnel_table", "TESTS", "FUNNEL_STATISTICS"]

TESTS = ("PIT χ²", "coverage 90%", "mean z", "std z", "ENCE")
"""The five tests of each slice, in the order of the ranking's ``worst`` column."""
FUNNEL_STATISTICS = ("std z", "mean z", "coverage 90%")
"""Statistics a funnel plot can show (their null depends on n only)."""
_PIT_BINS = 10
_SIGMA_BINS = 5
_EPS = 1e-12


def slice_row_statistics(pset: PredictionSet, *, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Per row: the PIT u_i and the spread σ_i the slice explorer works on.

    u_i is randomised where the distribution has atoms (generator ``seed``); σ_i is the distribution's standard
    deviation (for ENCE's σ-bins).

    Parameters
    ----------
    pset : PredictionSet
        A regression set with predictive distributions.
    seed : int, default 0
        Seed of the PIT randomisation.

    Returns
    -------
    u, sigma : ndarray of shape (n,)
        The PIT values and the spreads.

    Raises
    ------
    InputError
        If ``pset`` has no predictive distributions.

    References
    ----------
    .. [1] Czado, C., Gneiting, T., & Held, L. (2009). Predictive model assessment for count data. Biometrics,
       65(4), 1254–1261.
    .. [2] Levi, D., Gispan, L., Giladi, N., & Fetaya, E. (2019). Evaluating and calibrating uncertainty
       prediction in regression tasks. arXiv:1905.11659.
    """
    if pset.task != "regression" or pset.dist is None or pset.y is None:
        raise InputError("the slice explorer needs predictive distributions (σ, quantiles or samples)",
                         source=pset.source, hint="load a regression file with an uncertainty column")
    return row_statistics(pset.y, pset.dist, seed=seed)


def row_statistics(y: np.ndarray, dist: PredictiveDistribution, *, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """``(u, σ)`` of targets ``y`` under ``dist``.

    u_i = F_i(y_i) (randomised PIT, Czado et al. 2009, where F_i has atoms; generator ``default_rng(seed)``) and
    σ_i = sd(F_i).

    Parameters
    ----------
    y : ndarray of shape (n,)
        Targets.
    dist : PredictiveDistribution
        The predictive distributions.
    seed : int, default 0
        Seed of the PIT randomisation.

    Returns
    -------
    u, sigma : ndarray of shape (n,)
        The PIT values and the spreads.

    References
    ----------
    .. [1] Czado, C., Gneiting, T., & Held, L. (2009). Predictive model assessment for count data. Biometrics,
       65(4), 1254–1261.
    .. [2] Gneiting, T., Balabdaoui, F., & Raftery, A. E. (2007). Probabilistic forecasts, calibration and
       sharpness. Journal of the Royal Statistical Society B, 69(2), 243–268.
    """
    u = np.asarray(dist.pit(np.asarray(y, dtype=float), np.random.default_rng(seed)), dtype=float)
    return u, np.asarray(dist.std(), dtype=float)


def slice_ranking(pset: PredictionSet, *, columns: Sequence[str] | None = None, n_bins: int = DEFAULT_BINS,
                  min_size: int = DEFAULT_MIN_SIZE, pairs: bool = True, n_null: int = 200, seed: int = 0,
                  alpha: float = ALPHA, slices: SliceSet | None = None) -> tuple[pd.DataFrame, SliceSet]:
    """Every candidate slice of a regression set with its statistics, tests, evidence and adjusted p, worst first.

    Parameters
    ----------
    pset : PredictionSet
        A regression set with predictive distributions.
    columns : sequence of str, optional
        Slice columns (default all); see :func:`calib_core.slices.candidates.candidate_slices`.
    n_bins : int, default DEFAULT_BINS
        Quantile bins of a numeric column.
    min_size : int, default DEFAULT_MIN_SIZE
        Smallest slice.
    pairs : bool, default True
        Also the intersections of two columns' levels.
    n_null : int, default 200
        Simulated draws of ENCE's null.
    seed : int, default 0
        Seed of the PIT randomisation and the null draws.
    alpha : float, default ALPHA
        Family-wise level of the flags.
    slices : SliceSet, optional
        Ready slices of ``pset`` (then ``columns``, ``n_bins``, ``min_size``, ``pairs`` are unused).

    Returns
    -------
    ranking : DataFrame
        One row per slice, worst first — ``rank``, ``slice`` (label), ``n``, the five statistics (module table) and
        their p-values (``p PIT``, ``p coverage``, ``p mean z``, ``p std z``, ``p ENCE``), ``evidence`` (−log₁₀ of
        the Bonferroni-combined p), ``p``, ``adjusted p`` (Holm over the slices searched), ``flagged`` (adjusted
        p ≤ ``alpha``), ``worst`` (the test with the smallest p) and ``index`` (the slice's
        index in ``slices``, for :func:`calib_core.slices.candidates.slice_mask`).
    slices : SliceSet
        The slices searched.

    References
    ----------
    .. [1] Levi, D., Gispan, L., Giladi, N., & Fetaya, E. (2019). Evaluating and calibrating uncertainty
       prediction in regression tasks. arXiv:1905.11659.
    .. [2] Kuleshov, V., Fenner, N., & Ermon, S. (2018). Accurate uncertainties for deep learning using calibrated
       regression. Proceedings of the 35th International Conference on Machine Learning (ICML), PMLR 80,
       2796–2804.
    .. [3] Czado, C., Gneiting, T., & Held, L. (2009). Predictive model assessment for count data. Biometrics,
       65(4), 1254–1261.
    .. [4] Holm, S. (1979). A simple sequentially rejective multiple test procedure. Scandinavian Journal of
       Statistics, 6(2), 65–70.
    .. [5] Chung, Y., Kraska, T., Polyzotis, N., Tae, K. H., & Whang, S. E. (2019). Slice Finder: automated data
       slicing for model validation. Proceedings of the 35th IEEE International Conference on Data Engineering
       (ICDE), 1550–1553.
    .. [6] Pernot, P. (2023). Calibration in machine learning uncertainty quantification: beyond consistency to
       target adaptivity. APL Machine Learning, 1(4), 046121 (arXiv:2309.06240).
    """
    u, sigma = slice_row_statistics(pset, seed=seed)
    sset = slices if slices is not None else candidate_slices(pset, columns=columns, n_bins=n_bins,
                                                              min_size=min_size, pairs=pairs)
    return rank_row_statistics(u, sigma, sset, ence_tested=not isinstance(pset.dist, SampleSet), n_null=n_null,
                               seed=seed, alpha=alpha), sset


def rank_row_statistics(u: np.ndarray, sigma: np.ndarray, sset: SliceSet, *, ence_tested: bool = True,
                        n_null: int = 200, seed: int = 0, alpha: float = ALPHA) -> pd.DataFrame:
    """The ranking of :func:`slice_ranking` from per-row PIT values and spreads.

    ``u`` and ``sigma`` (:func:`row_statistics`) of the ``sset.n_rows`` rows the slices ``sset`` index — e.g.
    held-out rows under a calibrator's predictions (``views.slices.slices_before_after``): the per-slice sums, then
    :func:`ranking_from_sums`.

    Parameters
    ----------
    u : ndarray of shape (n,)
        PIT values.
    sigma : ndarray of shape (n,)
        Spreads.
    sset : SliceSet
        The slices of those n rows.
    ence_tested : bool, default True
        False: ``p ENCE`` is NaN (ensembles, module docstring).
    n_null : int, default 200
        Simulated draws of ENCE's null.
    seed : int, default 0
        Seed of the null draws.
    alpha : float, default ALPHA
        Family-wise level of the flags.

    Returns
    -------
    DataFrame
        The ranking (columns as :func:`slice_ranking`).

    Raises
    ------
    ValueError
        If ``u`` or ``sigma`` does not have the slices' rows.

    References
    ----------
    .. [1] Levi, D., Gispan, L., Giladi, N., & Fetaya, E. (2019). Evaluating and calibrating uncertainty
       prediction in regression tasks. arXiv:1905.11659.
    .. [2] Holm, S. (1979). A simple sequentially rejective multiple test procedure. Scandinavian Journal of
       Statistics, 6(2), 65–70.
    .. [3] Chung, Y., Kraska, T., Polyzotis, N., Tae, K. H., & Whang, S. E. (2019). Slice Finder: automated data
       slicing for model validation. Proceedings of the 35th IEEE International Conference on Data Engineering
       (ICDE), 1550–1553.
    """
    u = np.asarray(u, dtype=float)
    sigma = np.asarray(sigma, dtype=float)
    if u.shape != (sset.n_rows,) or sigma.shape != (sset.n_rows,):
        raise ValueError(f"u and sigma must have the slices' {sset.n_rows} rows, got {u.shape} and {sigma.shape}")
    uc = np.clip(u, _EPS, 1.0 - _EPS)
    z = special.ndtri(uc)
    covered = ((u >= 0.05) & (u <= 0.95)).astype(float)
    pit_bin = np.minimum((u * _PIT_BINS).astype(np.int64), _PIT_BINS - 1)
    finite_sigma = np.isfinite(sigma) & (sigma > 0)
    s_edges = sigma_bin_edges(sigma)
    s_bin = np.searchsorted(s_edges, sigma, side="right")
    n_s = s_edges.size + 1
    s2 = np.where(finite_sigma, sigma, 0.0) ** 2
    e2 = s2 * z * z
    ones = np.ones_like(z)
    pit_counts = slice_binned_sums(sset, ones, pit_bin, _PIT_BINS)[:, :, 0]  # (S, 10)
    sums = slice_binned_sums(sset, np.column_stack([ones, z, z * z, covered]))[:, 0, :]
    ence_sums = slice_binned_sums(sset, np.column_stack([ones, s2, e2, s2 * s2]), s_bin, n_s)  # (S, B, 4)
    return ranking_from_sums(sset.label, sset.size, pit_counts, sums, ence_sums, ence_tested=ence_tested,
                             n_null=n_null, seed=seed, alpha=alpha)


def sigma_bin_edges(sigma: np.ndarray) -> np.ndarray:
    """The inner edges of ENCE's σ-bins: the distinct quantiles k/5, k = 1 … 4, of the finite positive σ.

    ``np.quantile``, linear method; a row's bin is ``searchsorted(edges, σ, side="right")``.

    Parameters
    ----------
    sigma : ndarray of shape (n,)
        Spreads.

    Returns
    -------
    ndarray
        Up to 4 inner edges (empty when no σ is finite and positive).

    Examples
    --------
    >>> sigma_bin_edges(np.arange(1.0, 11.0))
    array([2.8, 4.6, 6.4, 8.2])

    References
    ----------
    .. [1] Levi, D., Gispan, L., Giladi, N., & Fetaya, E. (2019). Evaluating and calibrating uncertainty
       prediction in regression tasks. arXiv:1905.11659.
    .. [2] Hyndman, R. J., & Fan, Y. (1996). Sample quantiles in statistical packages. The American Statistician,
       50(4), 361–365.
    """
    sigma = np.asarray(sigma, dtype=float)
    finite_sigma = np.isfinite(sigma) & (sigma > 0)
    return np.unique(np.quantile(sigma[finite_sigma], np.linspace(0, 1, _SIGMA_BINS + 1)[1:-1])) \
        if finite_sigma.any() else np.empty(0)


def ranking_from_sums(labels: Sequence[str], sizes: np.ndarray, pit_counts: np.ndarray, sums: np.ndarray,
                      ence_sums: np.ndarray, *, ence_tested: bool = True, n_null: int = 200, seed: int = 0,
                      alpha: float = ALPHA) -> pd.DataFrame:
    """The ranking of :func:`slice_ranking` from the per-slice sums alone.

    So that in-memory rows and mergeable summaries give the same table.  Statistics and tests: module table.

    Parameters
    ----------
    labels : sequence of str
        The slices' names.
    sizes : ndarray of shape (S,)
        Their rows.
    pit_counts : ndarray of shape (S, 10)
        Rows per PIT decile.
    sums : ndarray of shape (S, 4)
        (n, Σz, Σz², rows with PIT in [0.05, 0.95]).
    ence_sums : ndarray of shape (S, B, 4)
        Per σ-bin (rows, Σσ², Σ(σz)², Σσ⁴).
    ence_tested : bool, default True
        False: ``p ENCE`` is NaN.
    n_null : int, default 200
        Simulated draws of ENCE's null (per bin MSE/MV ~ χ²_ν/ν, ν = (Σσ²)²/Σσ⁴, by Wilson–Hilferty).
    seed : int, default 0
        Seed of the null draws.
    alpha : float, default ALPHA
        Family-wise level of the flags.

    Returns
    -------
    DataFrame
        One row per slice, worst first — ``rank``, ``slice`` (label), ``n``, the five statistics (module table) and
        their p-values (``p PIT``, ``p coverage``, ``p mean z``, ``p std z``, ``p ENCE``), ``evidence`` (−log₁₀ of
        the Bonferroni-combined p, from the log p-values: finite however small p is), ``effect`` (the deciding
        test's effect size, module docstring: the tie-break), ``p``, ``adjusted p`` (Holm over the slices
        searched), ``flagged`` (adjusted p ≤ ``alpha``), ``worst`` (the test with the smallest p) and ``index``
        (position in ``labels``).

    References
    ----------
    .. [1] Levi, D., Gispan, L., Giladi, N., & Fetaya, E. (2019). Evaluating and calibrating uncertainty
       prediction in regression tasks. arXiv:1905.11659.
    .. [2] Satterthwaite, F. E. (1946). An approximate distribution of estimates of variance components.
       Biometrics Bulletin, 2(6), 110–114.
    .. [3] Wilson, E. B., & Hilferty, M. M. (1931). The distribution of chi-square. Proceedings of the National
       Academy of Sciences, 17(12), 684–688.
    .. [4] Holm, S. (1979). A simple sequentially rejective multiple test procedure. Scandinavian Journal of
       Statistics, 6(2), 65–70.
    .. [5] Pernot, P. (2023). Calibration in machine learning uncertainty quantification: beyond consistency to
       target adaptivity. APL Machine Learning, 1(4), 046121 (arXiv:2309.06240).
    .. [6] Temme, N. M. (1979). The asymptotic expansion of the incomplete gamma functions. SIAM Journal on
       Mathematical Analysis, 10(4), 757–766.
    .. [7] Abramowitz, M., & Stegun, I. A. (1964). Handbook of Mathematical Functions. National Bureau of Standards,
       Applied Mathematics Series 55.
    """
    S = len(labels)
    n = sums[:, 0]
    mean_z = sums[:, 1] / n
    var_z = np.maximum(sums[:, 2] - n * mean_z**2, 0.0) / np.maximum(n - 1, 1)
    expected = n[:, None] / _PIT_BINS
    chi2_pit = ((pit_counts - expected) ** 2 / expected).sum(axis=1)
    k_cov = sums[:, 3]
    # ENCE on the fixed σ-bins, and its null per bin: MSE/MV ~ χ²_ν/ν, ν = (Σσ²)²/Σσ⁴
    cnt, ss2, se2, ss4 = (ence_sums[:, :, j] for j in range(4))
    used = (cnt > 0) & (ss2 > 0)
    ratio = np.sqrt(np.divide(se2, ss2, out=np.ones_like(se2), where=used))
    n_used = np.maximum(used.sum(axis=1), 1)
    ence = (np.abs(1.0 - ratio) * used).sum(axis=1) / n_used
    nu = np.divide(ss2**2, ss4, out=np.ones_like(ss2), where=used & (ss4 > 0))
    n_s = ence_sums.shape[1]
    rng = np.random.default_rng(seed + 1)
    null_ence = np.empty((S, n_null))
    for lo in range(0, S, 512):  # chunks of slices: memory 512 × B × n_null
        part = slice(lo, lo + 512)
        h = 2.0 / (9.0 * nu[part, :, None])  # Wilson–Hilferty: χ²_ν/ν ≈ (1 − h + Z√h)³
        root = np.maximum(1.0 - h + np.sqrt(h) * rng.standard_normal((nu[part].shape[0], n_s, n_null)), 0.0) ** 1.5
        null_ence[part] = (np.abs(1.0 - root) * used[part, :, None]).sum(axis=1) / n_used[part, None]
    p_ence = (1.0 + (null_ence >= ence[:, None] - 1e-12).sum(axis=1)) / (n_null + 1.0)

    chi2_s = np.maximum((n - 1) * var_z, 1e-300)  # s² = 0 (every z clipped alike): P(χ² ≤ 10⁻³⁰⁰), finite
    pit_share = pit_counts / np.maximum(n, 1)[:, None]
    log_p = np.column_stack([
        np.minimum(0.0, np.log(_PIT_BINS) + log_two_sided(
            log_binom_cdf(pit_counts, n[:, None], 1.0 / _PIT_BINS),
            log_binom_sf(pit_counts - 1, n[:, None], 1.0 / _PIT_BINS)).min(axis=1)),
        log_two_sided(log_binom_cdf(k_cov, n, 0.9), log_binom_sf(k_cov - 1, n, 0.9)),
        log_norm_two_sided(mean_z * np.sqrt(n)),
        log_two_sided(log_chi2_cdf(chi2_s, n - 1), log_chi2_sf(chi2_s, n - 1)),
        np.log(p_ence) if ence_tested else np.full(S, np.nan),
    ]) if S else np.empty((0, len(TESTS)))
    # effect sizes: each test's deviation in units of its per-row null standard deviation (module docstring)
    effect = np.column_stack([
        np.abs(pit_share - 1.0 / _PIT_BINS).max(axis=1, initial=0.0) / 0.3, np.abs(k_cov / n - 0.9) / 0.3,
        np.abs(mean_z), np.abs(var_z - 1.0) / np.sqrt(2.0), np.sqrt(2.0) * ence,
    ]) if S else np.empty((0, len(TESTS)))
    p = np.exp(log_p)
    table = pd.DataFrame({
        "slice": list(labels), "n": np.asarray(sizes), "PIT χ²": chi2_pit, "coverage 90%": k_cov / n, "mean z": mean_z,
        "std z": np.sqrt(var_z), "ENCE": ence if ence_tested else np.full(S, np.nan), "p PIT": p[:, 0],
        "p coverage": p[:, 1], "p mean z": p[:, 2],
        "p std z": p[:, 3], "p ENCE": p[:, 4], "index": np.arange(S),
    })
    ranked = rank_slices(table, p, log_p, alpha=alpha, effect=effect)
    ranked.insert(ranked.columns.get_loc("flagged") + 1, "worst",
                  [TESTS[i] for i in ranked.pop("_worst").to_numpy()])
    return ranked


def funnel_table(ranking: pd.DataFrame, statistic: str = "std z", *, alpha: float = ALPHA,
                 n_points: int = 120) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The funnel plot of one statistic: ``(points, limits)``.

    Exact null laws at n: mean z ~ N(0, 1/n); std z: s² ~ χ²_{n−1}/(n−1); coverage 90% ~ Binomial(n, 0.9)/n.

    Parameters
    ----------
    ranking : DataFrame
        A ranking of :func:`slice_ranking`.
    statistic : {"std z", "mean z", "coverage 90%"}, default "std z"
        The statistic (its null depends on n only).
    alpha : float, default ALPHA
        Family-wise level of the adjusted limits.
    n_points : int, default 120
        Points of the log grid of n.

    Returns
    -------
    points : DataFrame
        slice, n, value, flagged, rank, index of every ranked slice.
    limits : DataFrame
        On a log grid of n from the smallest to the largest slice, the value a perfectly calibrated forecaster stays
        within with probability 95% (``lower 95%``, ``upper 95%``) and with probability 1 − α/(5·S)
        (``lower adjusted`` / ``upper adjusted``: the Bonferroni level at which this statistic alone flags a slice
        among the S searched), and the perfect-calibration value (``expected``).

    Raises
    ------
    ValueError
        If ``statistic`` is not one of :data:`FUNNEL_STATISTICS`.

    References
    ----------
    .. [1] Spiegelhalter, D. J. (2005). Funnel plots for comparing institutional performance. Statistics in
       Medicine, 24(8), 1185–1202.
    """
    if statistic not in FUNNEL_STATISTICS:
        raise ValueError(f"statistic must be one of {FUNNEL_STATISTICS}, not {statistic!r}")
    points = ranking[["slice", "n", statistic, "flagged", "rank", "index"]].rename(columns={statistic: "value"})
    S = max(len(ranking), 1)
    lo_n = max(float(ranking["n"].min()) if len(ranking) else 2.0, 2.0)
    hi_n = max(float(ranking["n"].max()) if len(ranking) else 10.0, lo_n * 1.01)
    grid = np.unique(np.round(np.geomspace(lo_n, hi_n, n_points)))
    out = {"n": grid}
    for name, a in (("95%", 0.05), ("adjusted", alpha / (len(TESTS) * S))):
        q = np.array([a / 2.0, 1.0 - a / 2.0])
        if statistic == "mean z":
            lo, hi = (special.ndtri(qq) / np.sqrt(grid) for qq in q)
            expected = np.zeros_like(grid)
        elif statistic == "std z":
            lo, hi = (np.sqrt(stats.chi2.ppf(qq, grid - 1) / (grid - 1)) for qq in q)
            expected = np.ones_like(grid)
        else:
            lo, hi = (stats.binom.ppf(qq, grid, 0.9) / grid for qq in q)
            expected = np.full_like(grid, 0.9)
        out[f"lower {name}"], out[f"upper {name}"] = lo, hi
    out["expected"] = expected
    return points.reset_index(drop=True), pd.DataFrame(out)
