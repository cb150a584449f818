"""Tests of a quantile set at its stated levels: what the forecaster said, nothing the tool interpolated.

A :class:`~calib_core.base.regression.QuantileSet` states quantiles q_τ at Q levels.  Under perfect calibration
(every target a draw from a law whose τ-quantiles are the stated ones) the randomised PIT u is uniform (Czado,
Gneiting & Held 2009), its cumulative counts C_τ = #{u ≤ τ} are multinomial cumulative sums, and the data bracket
them: L_τ = #{y < q_τ} ≤ C_τ ≤ U_τ = #{y ≤ q_τ} (:mod:`calib_core.metrics.regression_stated`).  Every test here is
valid with ties (integer targets, coinciding quantiles) because its p-value is the largest one over the bracket:

==============================  =============================================================  ====================
statistic                       test                                                           interval
==============================  =============================================================  ====================
per level τ (diagram table)     exact binomial: min(1, 2 min(P(Bin(N, τ) ≥ L), P(Bin ≤ U)))    Clopper–Pearson of
                                                                                               [L, U]
max_level_deviation             min-p over the levels against the exact multinomial null of    Clopper–Pearson,
                                the cumulative counts (Monte Carlo; below its resolution the   Bonferroni over the
                                Bonferroni bound Q·min p)                                      2Q proportions
pit_chi2                        Pearson χ² of the Q + 1 cells between the levels (the smallest  none
                                the ties allow) against χ²_Q when every expected count is ≥ 10,
                                else the exact multinomial null (Monte Carlo)
coverage_c, both ends stated    exact binomial on the open / closed counts                     Clopper–Pearson
==============================  =============================================================  ====================

Everything that needs the law between the stated quantiles (KS on the continuous PIT, the z statistics, ZMS, ENCE,
the calibration-curve statistics on the default grid, PIT entropy, coverage of a non-stated interval) is
descriptive for quantile sets: no p-value, a note (:func:`descriptive_for_quantile_sets`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from scipy import special

from ..base import significance as sig
from ..base.regression import QuantileSet
from ..base.report import DESCRIPTIVE
from ..metrics.regression import RegressionRows
from ..metrics.regression_stated import (
    bracket_binomial_p,
    clopper_pearson_bounds,
    level_deviation_interval,
    level_pvalues,
    pit_cells,
    stated_level_counts,
    stated_pair_counts,
    stated_pairs,
)

__all__ = ["max_level_test", "pit_chi2_test", "stated_tests", "stated_count_tests", "descriptive_for_quantile_sets",
           "other_stated_coverages", "STATED_KEYS", "INTERPOLATED_KEYS"]


#: The statistics of the stated levels (quantile sets only)
STATED_KEYS = ("pit_chi2", "max_level_deviation")


#: Statistics that need the law the tool interpolates between stated quantiles (descriptive for quantile sets)
INTERPOLATED_KEYS = ("max_calibration_deviation", "z_mean", "z_std", "z_skewness", "z_excess_kurtosis", "zms",
                     "mean_log_z2", "ence", "calibration_rmse", "quantile_calibration_error", "miscalibration_area",
                     "pit_entropy", "reliability_score")


_INTERPOLATED_NOTE = ("no test: it needs the law the tool interpolates between the stated quantiles (descriptive for "
                      "quantile sets, which are tested at their stated levels only)")


_CHI2_MIN_EXPECTED = 10.0


def _null_cumulative(n: int, levels: np.ndarray, n_null: int, rng: np.random.Generator) -> np.ndarray:
    """Cumulative counts at the interior levels of ``n_null`` multinomial draws of N uniform PITs."""
    edges, _ = pit_cells(levels)
    counts = rng.multinomial(n, np.diff(edges), size=n_null)
    return np.cumsum(counts[:, :-1], axis=1).astype(float)


def max_level_test(lower: np.ndarray, upper: np.ndarray, n: int, levels: np.ndarray, n_null: int,
                   rng: np.random.Generator) -> tuple[float, float, str]:
    """One p-value for all stated levels: the smallest per-level p-value against its law under perfect calibration.

    T = min_τ p_τ (bracketed exact binomial p-values, :func:`level_pvalues`).  Its null law is that of the same
    minimum over multinomial cumulative counts of N uniform PITs at the levels (exact, simulated ``n_null`` times);
    with ties each bracketed p_τ is at least the one of the randomised PIT's count, so T is stochastically larger
    and the test conservative.  p = (1 + #{T* ≤ T})/(1 + B) (Phipson & Smyth 2010); when no draw reaches T the
    Bonferroni bound Q·T (valid on its own) replaces it if smaller, so rejections at any level ≥ 1/(B + 1) are
    exactly those of the Monte Carlo test.

    Parameters
    ----------
    lower, upper : ndarray of shape (Q,)
        The bracketing counts.
    n : int
        N.
    levels : ndarray of shape (Q,)
        τ.
    n_null : int
        Null draws B.
    rng : numpy.random.Generator
        Random stream.

    Returns
    -------
    (float, float, str)
        p-value, its Monte-Carlo standard error, the test's name.

    References
    ----------
    .. [1] Clopper, C. J. & Pearson, E. S. (1934). The use of confidence or fiducial limits illustrated in the case
       of the binomial. *Biometrika* 26(4), 404–413.
    .. [2] Phipson, B. & Smyth, G. K. (2010). Permutation p-values should never be zero: calculating exact p-values
       when permutations are randomly drawn. *Statistical Applications in Genetics and Molecular Biology* 9(1), 39.

    Examples
    --------
    >>> tau = np.array([0.25, 0.5, 0.75])
    >>> p, se, _ = max_level_test(tau * 400, tau * 400, 400, tau, 200, np.random.default_rng(0))
    >>> p > 0.9
    True
    """
    tau = np.asarray(levels, dtype=float)
    p_obs = level_pvalues(lower, upper, n, tau)
    t = float(p_obs.min())
    bonf = min(1.0, tau.size * t)
    interior = (tau > 0) & (tau < 1)
    if n_null <= 0 or not interior.any():
        return bonf, 0.0, "Bonferroni over the stated levels (exact binomial per level)"
    cum = _null_cumulative(n, tau, n_null, rng)
    t_null = level_pvalues(cum, cum, n, tau[interior][None, :]).min(axis=1)
    k = int(np.count_nonzero(t_null <= t * (1 + 1e-12)))
    p = (1.0 + k) / (1.0 + n_null)
    se = float(np.sqrt(p * (1 - p) / (n_null + 1)))
    test = "min-p over the stated levels (exact binomial each), exact multinomial null, Monte Carlo"
    if k == 0 and bonf < p:
        return bonf, 0.0, test + "; Bonferroni bound below its resolution"
    return float(p), se, test


def pit_chi2_test(chi2: float, n: int, levels: np.ndarray, n_null: int,
                  rng: np.random.Generator) -> tuple[float, float, str, float]:
    """p-value of the stated PIT histogram's χ² (:func:`~calib_core.metrics.regression_stated.min_pit_chi2`).

    Pearson (1900): χ² → χ²_K with K = cells − 1 (= Q for interior levels); used when every expected count N Δτ is
    at least 10; else the exact law of the statistic under uniform PITs, by Monte Carlo over multinomial counts.
    The reference is E χ² = K exactly.  Ties only lower the statistic (it is the smallest the ties allow), so both
    tests stay valid.

    Parameters
    ----------
    chi2 : float
        The statistic.
    n : int
        N.
    levels : ndarray of shape (Q,)
        τ.
    n_null : int
        Monte Carlo draws.
    rng : numpy.random.Generator
        Random stream.

    Returns
    -------
    (float, float, str, float)
        p-value, Monte-Carlo standard error, the test's name, the reference K.

    References
    ----------
    .. [1] Pearson, K. (1900). On the criterion that a given system of deviations from the probable in the case of
       a correlated system of variables is such that it can be reasonably supposed to have arisen from random
       sampling. *Philosophical Magazine* 50(302), 157–175.
    .. [2] Czado, C., Gneiting, T. & Held, L. (2009). Predictive model assessment for count data. *Biometrics*
       65(4), 1254–1261.

    Examples
    --------
    >>> p, se, test, k = pit_chi2_test(9.0, 3000, np.arange(1, 10) / 10, 0, np.random.default_rng(0))
    >>> round(p, 3), k
    (0.437, 9.0)
    """
    edges, _ = pit_cells(levels)
    probs = np.diff(edges)
    k = float(probs.size - 1)
    if n * probs.min() >= _CHI2_MIN_EXPECTED or n_null <= 0:
        return float(special.chdtrc(k, chi2)), 0.0, f"Pearson χ² ({k:g} d.f.)", k
    counts = rng.multinomial(n, probs, size=n_null)
    e = n * probs
    draws = np.sum((counts - e) ** 2 / e, axis=1)
    mc = sig.monte_carlo_p(chi2, draws, "greater")
    return mc.p, mc.se, "Pearson χ², exact multinomial null (Monte Carlo: an expected count is below 10)", k


def _stated_rng(seed: int | None) -> np.random.Generator:
    return np.random.default_rng((0 if seed is None else int(seed), 25))


def stated_tests(rec: dict[str, dict[str, Any]], values: Mapping[str, float], r: RegressionRows, coverages,
                 n_null: int, level: float, seed: int | None) -> None:
    """The tests of a quantile set's stated levels, written into the records (nothing for other layouts).

    ``max_level_deviation``: :func:`max_level_test`; ``pit_chi2``: :func:`pit_chi2_test`; coverage of a stated
    central pair: the open and closed counts bracket Bin(N, c), exact binomial (bracketed) and the Clopper–Pearson
    interval from the lower end of the open count to the upper end of the closed one; then
    :func:`descriptive_for_quantile_sets` (:func:`stated_count_tests` does the same from the counts alone).

    Parameters
    ----------
    rec : dict of str to dict
        One record per statistic (updated).
    values : mapping of str to float
        The point values.
    r : RegressionRows
        The rows.
    coverages : sequence of float
        Central-interval levels.
    n_null : int
        Monte Carlo draws.
    level : float
        Two-sided level of the intervals.
    seed : int or None
        Seeds the Monte Carlo nulls (their own stream).

    References
    ----------
    .. [1] Kuleshov, V., Fenner, N. & Ermon, S. (2018). Accurate uncertainties for deep learning using calibrated
       regression. *ICML*.
    .. [2] Gneiting, T., Balabdaoui, F. & Raftery, A. E. (2007). Probabilistic forecasts, calibration and sharpness.
       *Journal of the Royal Statistical Society B* 69(2), 243–268.
    .. [3] Bracher, J., Ray, E. L., Gneiting, T. & Reich, N. G. (2021). Evaluating epidemic forecasts in an interval
       format. *PLOS Computational Biology* 17(2), e1008618.
    .. [4] Clopper, C. J. & Pearson, E. S. (1934). The use of confidence or fiducial limits illustrated in the case
       of the binomial. *Biometrika* 26(4), 404–413.
    """
    dist = r.dist
    if not isinstance(dist, QuantileSet):
        return
    lo, hi = stated_level_counts(r.y, dist.values)
    pairs = stated_pair_counts(r.y, dist.values, stated_pairs(dist.levels, coverages))
    stated_count_tests(rec, values, lo, hi, pairs, r.n, dist.levels, coverages, n_null, level, seed)
    tau = dist.levels[dist.levels < 0.5]
    other = stated_pair_counts(r.y, dist.values, stated_pairs(dist.levels, 1.0 - 2.0 * tau))
    other_stated_coverages(rec, other, r.n, level)


def stated_count_tests(rec: dict[str, dict[str, Any]], values: Mapping[str, float], lower: np.ndarray,
                       upper: np.ndarray, pair_counts: Mapping[float, tuple[float, float]], n: int,
                       levels: np.ndarray, coverages, n_null: int, level: float, seed: int | None) -> None:
    """:func:`stated_tests` from the counts alone (what a mergeable summary keeps): L_τ = #{y < q_τ},
    U_τ = #{y ≤ q_τ} per stated level and (open, closed) counts per stated central pair.

    Parameters
    ----------
    rec : dict of str to dict
        One record per statistic (updated).
    values : mapping of str to float
        The point values (``pit_chi2`` among them).
    lower, upper : ndarray of shape (Q,)
        The bracketing counts.
    pair_counts : mapping of float to (float, float)
        c → (open, closed) count of each stated pair.
    n : int
        N.
    levels : ndarray of shape (Q,)
        τ.
    coverages : sequence of float
        Central-interval levels of the table.
    n_null : int
        Monte Carlo draws.
    level : float
        Two-sided level of the intervals.
    seed : int or None
        Seeds the Monte Carlo nulls.

    References
    ----------
    .. [1] Clopper, C. J. & Pearson, E. S. (1934). The use of confidence or fiducial limits illustrated in the case
       of the binomial. *Biometrika* 26(4), 404–413.
    .. [2] Pearson, K. (1900). On the criterion that a given system of deviations from the probable in the case of
       a correlated system of variables is such that it can be reasonably supposed to have arisen from random
       sampling. *Philosophical Magazine* 50(302), 157–175.
    .. [3] Czado, C., Gneiting, T. & Held, L. (2009). Predictive model assessment for count data. *Biometrics*
       65(4), 1254–1261.
    """
    tau = np.asarray(levels, dtype=float)
    lo, hi = np.asarray(lower, dtype=float), np.asarray(upper, dtype=float)
    rng = _stated_rng(seed)
    ties = bool(np.any(hi > lo))
    tie_note = "ties (targets equal to stated quantiles) bracketed: conservative" if ties else ""
    if "max_level_deviation" in rec:
        p, se, test = max_level_test(lo, hi, n, tau, n_null, rng)
        ci = level_deviation_interval(lo, hi, n, tau, level)
        rec["max_level_deviation"].update(p_value=p, p_mc_se=se, test=test, perfect=0.0, note=tie_note,
                                          ci_low=ci[0], ci_high=ci[1],
                                          interval="Clopper–Pearson per level, Bonferroni-simultaneous")
    if "pit_chi2" in rec:
        p, se, test, k = pit_chi2_test(values["pit_chi2"], n, tau, n_null, rng)
        note = "no interval; " + (f"{tie_note} (the smallest χ² the ties allow)" if ties else "")
        rec["pit_chi2"].update(p_value=p, p_mc_se=se, test=test, perfect=k, note=note.rstrip("; "))
    for c in coverages:
        key = f"coverage_{100 * c:g}"
        if key not in rec:
            continue
        if float(c) in pair_counts:
            k_open, k_closed = pair_counts[float(c)]
            p = float(bracket_binomial_p(k_open, k_closed, n, c))
            ci_lo, ci_hi = clopper_pearson_bounds(k_open, k_closed, n, level)
            note = (f"ties: {int(k_closed - k_open):,} target(s) on an interval end, coverage between "
                    f"{k_open / n:.4f} and {k_closed / n:.4f}") if k_closed > k_open else ""
            rec[key].update(p_value=p, p_mc_se=0.0, perfect=float(c), ci_low=float(ci_lo), ci_high=float(ci_hi),
                            interval="Clopper–Pearson (exact)",
                            test="exact binomial (both ends are stated quantiles)", note=note)
        else:
            rec[key].update(p_value=np.nan, p_mc_se=np.nan, test="",
                            note="no test: an end of this interval is not a stated level (it lies in the law the "
                                 "tool interpolates or extrapolates; descriptive for quantile sets)")
    descriptive_for_quantile_sets(rec, None)


def other_stated_coverages(rec: dict[str, dict[str, Any]], pair_counts: Mapping[float, tuple[float, float]], n: int,
                           level: float) -> None:
    """The coverage rows of a quantile set's stated central intervals beyond the report's levels (``coverage_60``
    … of :func:`~calib_core.metrics.regression_wis.wis_statistics`): descriptive, with the Clopper–Pearson interval
    of the open and closed counts and the bracketed exact binomial p-value in the note, outside every test family
    (the family of the report's levels stays as it was).

    Parameters
    ----------
    rec : dict of str to dict
        One record per statistic (updated where a ``coverage_<c>`` record is not yet tested).
    pair_counts : mapping of float to (float, float)
        c → (#{q_lo < y < q_hi}, #{q_lo ≤ y ≤ q_hi}) of the stated pairs.
    n : int
        N.
    level : float
        Two-sided level of the intervals.

    References
    ----------
    .. [1] Clopper, C. J. & Pearson, E. S. (1934). The use of confidence or fiducial limits illustrated in the case
       of the binomial. *Biometrika* 26(4), 404–413.
    .. [2] Bracher, J., Ray, E. L., Gneiting, T. & Reich, N. G. (2021). Evaluating epidemic forecasts in an interval
       format. *PLOS Computational Biology* 17(2), e1008618.
    """
    for c, (k_open, k_closed) in pair_counts.items():
        key = f"coverage_{100 * c:g}"
        if key not in rec or rec[key]["test"] or np.isfinite(rec[key]["p_value"]):
            continue  # a coverage of the report's levels: tested by stated_count_tests
        p = float(bracket_binomial_p(k_open, k_closed, n, c))
        ci_lo, ci_hi = clopper_pearson_bounds(k_open, k_closed, n, level)
        ties = (f"; ties: {int(k_closed - k_open):,} target(s) on an interval end, coverage between "
                f"{k_open / n:.4f} and {k_closed / n:.4f}") if k_closed > k_open else ""
        rec[key].update(kind=DESCRIPTIVE, perfect=float(c), ci_low=float(ci_lo), ci_high=float(ci_hi),
                        interval="Clopper–Pearson (exact)", p_value=np.nan, p_mc_se=np.nan, test="", family="",
                        note=f"descriptive: a stated interval outside the tested levels (exact binomial p = {p:.3g}, "
                             f"in no test family){ties}")


def descriptive_for_quantile_sets(rec: dict[str, dict[str, Any]], r: RegressionRows | None) -> None:
    """For a quantile set, clear the p-values of the statistics that need the interpolated law
    (:data:`INTERPOLATED_KEYS`): their kind stays, their value, reference and interval stay, the note says why.

    Parameters
    ----------
    rec : dict of str to dict
        One record per statistic (updated).
    r : RegressionRows or None
        The rows (nothing happens unless they hold a :class:`QuantileSet`); None: a quantile set's records.

    References
    ----------
    .. [1] Gneiting, T., Balabdaoui, F. & Raftery, A. E. (2007). Probabilistic forecasts, calibration and sharpness.
       *Journal of the Royal Statistical Society B* 69(2), 243–268.
    .. [2] Bracher, J., Ray, E. L., Gneiting, T. & Reich, N. G. (2021). Evaluating epidemic forecasts in an interval
       format. *PLOS Computational Biology* 17(2), e1008618.
    """
    if r is not None and not isinstance(r.dist, QuantileSet):
        return
    for k in INTERPOLATED_KEYS:
        if k in rec:
            rec[k].update(p_value=np.nan, p_mc_se=np.nan, test="", note=_INTERPOLATED_NOTE)
