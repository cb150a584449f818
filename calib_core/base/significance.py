"""Task-neutral significance machinery for the calibration verdicts (regression and classification).

Everything here works on plain numbers and arrays; nothing knows about metrics or layouts.

Multiplicity
------------
* :func:`holm_adjust` / :func:`holm` — Holm (1979) step-down adjusted p-values / rejections: the
  family-wise error rate (probability of at least one false rejection) is at most ``alpha`` under
  any dependence between the tests.  Used for the small pre-declared *primary* family whose result
  is the one headline verdict.
* :func:`bh_adjust` / :func:`benjamini_hochberg` — Benjamini & Hochberg (1995) step-up q-values /
  rejections: the expected share of false discoveries among the flags is at most ``alpha``
  (independent or positively dependent tests).  Used for the *secondary* statistics.
* :func:`expected_chance_flags` — how many of n unadjusted tests at level alpha a perfectly
  calibrated forecaster flags on average (n·alpha).

NaN p-values (statistics without a test) are left out of the family and stay NaN / False.
The adjusted values equal ``statsmodels.stats.multitest.multipletests(p, method="holm" / "fdr_bh")``.

p-values
--------
* :func:`monte_carlo_p` — p-value from draws of the statistic under the null hypothesis,
  p = (1 + #{T* ≥ t})/(1 + B) (Davison & Hinkley 1997, eq. 4.11; never 0, exact level for the
  randomised test), with its Monte-Carlo standard error √(p(1 − p)/(B + 1)).
* :func:`binomial_test` — exact binomial test (two-sided: twice the smaller tail, the test the
  Clopper–Pearson interval inverts).
* :func:`poisson_binomial_test` — a count of independent Bernoulli(p_i) events with unequal p_i
  (e.g. ensemble coverage with ties): exact binomial when all p_i agree, otherwise simulated over
  groups of equal p_i (cost B × #groups, not B × N).
* :func:`normal_p`, :func:`gamma_p` — p-values from a normal or a moment-matched gamma null.

Intervals
---------
* :func:`clopper_pearson` — exact binomial interval (coverage ≥ level for every p).
* Block bootstrap: rows are assigned to G random blocks once (:func:`block_ids`); per-block sums of
  whatever sufficient statistics a metric needs are kept (G × q); a bootstrap replicate is a
  multinomial weight vector over the blocks (:func:`block_bootstrap_weights`), so all replicates are
  one matrix product ``W @ S`` (B × G times G × q) instead of B passes over N rows.  Blocks of random
  rows are i.i.d., so resampling blocks is resampling rows in groups (exact row bootstrap when G = N).
  The delete-one-block jackknife sums (:func:`jackknife_sums`) give the BCa acceleration.
* :func:`percentile_interval`, :func:`basic_interval`, :func:`bca_interval` (Efron 1987; vectorised
  over statistics), :func:`studentized_interval` (bootstrap-t: each replicate studentised by its own
  standard error; second-order accurate where percentile-type intervals of spreads and shapes
  under-cover, Hall 1992, §3.5; Davison & Hinkley 1997, §5.2.1).

The block bootstrap and the bootstrap intervals are in :mod:`calib_core.base.significance_intervals`
(re-exported here).
"""

from __future__ import annotations

from typing import Literal, NamedTuple

import numpy as np
from scipy import special

from .significance_intervals import (
    BlockDesign,
    basic_interval,
    bca_interval,
    block_bootstrap_weights,
    block_design,
    block_ids,
    jackknife_sums,
    nan_quantiles,
    percentile_interval,
    studentized_interval,
)

__all__ = [
    "Alternative",
    "nan_quantiles",
    "holm_adjust",
    "holm",
    "bh_adjust",
    "benjamini_hochberg",
    "expected_chance_flags",
    "MonteCarloP",
    "monte_carlo_p",
    "binomial_test",
    "poisson_binomial_test",
    "normal_p",
    "gamma_p",
    "clopper_pearson",
    "block_ids",
    "block_bootstrap_weights",
    "BlockDesign",
    "block_design",
    "jackknife_sums",
    "percentile_interval",
    "basic_interval",
    "bca_interval",
    "studentized_interval",
    "format_p",
]

Alternative = Literal["two-sided", "greater", "less"]


# =============================================================================================
# Multiplicity
# =============================================================================================


def _family(p) -> tuple[np.ndarray, np.ndarray]:
    p = np.asarray(p, dtype=float)
    return p, np.flatnonzero(np.isfinite(p))


def holm_adjust(pvalues) -> np.ndarray:
    """Holm step-down adjusted p-values: sorted ascending, p̃_(i) = max_{j ≤ i} min(1, (m − j + 1) p_(j)).

    m counts the finite p-values only; NaN stays NaN.  Reject H_i at family-wise level α iff p̃_i ≤ α.

    Parameters
    ----------
    pvalues : array_like
        The p-values.

    Returns
    -------
    ndarray
        Adjusted p-values, in the input order.

    References
    ----------
    Holm, S. (1979). A simple sequentially rejective multiple test procedure. Scandinavian Journal of
    Statistics 6(2), 65–70.
    """
    p, ok = _family(pvalues)
    out = np.full(p.shape, np.nan)
    m = ok.size
    if m == 0:
        return out
    order = ok[np.argsort(p[ok], kind="stable")]
    scaled = (m - np.arange(m)) * p[order]
    out[order] = np.minimum(1.0, np.maximum.accumulate(scaled))
    return out


def holm(pvalues, alpha: float = 0.05) -> np.ndarray:
    """Boolean rejections of Holm's procedure at family-wise level ``alpha`` (NaN: False).

    Parameters
    ----------
    pvalues : array_like
        The p-values.
    alpha : float, default 0.05
        Family-wise error rate.

    Returns
    -------
    ndarray of bool
        Rejections.

    References
    ----------
    Holm, S. (1979). A simple sequentially rejective multiple test procedure. Scandinavian Journal of
    Statistics 6(2), 65–70.
    """
    adj = holm_adjust(pvalues)
    return np.isfinite(adj) & (adj <= alpha)


def bh_adjust(pvalues) -> np.ndarray:
    """Benjamini–Hochberg q-values: sorted ascending, q_(i) = min_{j ≥ i} min(1, m p_(j)/j) (NaN stays NaN).

    Parameters
    ----------
    pvalues : array_like
        The p-values.

    Returns
    -------
    ndarray
        q-values, in the input order.

    References
    ----------
    Benjamini, Y. & Hochberg, Y. (1995). Controlling the false discovery rate: a practical and powerful approach
    to multiple testing. Journal of the Royal Statistical Society B 57(1), 289–300.
    """
    p, ok = _family(pvalues)
    out = np.full(p.shape, np.nan)
    m = ok.size
    if m == 0:
        return out
    order = ok[np.argsort(p[ok], kind="stable")]
    scaled = m * p[order] / np.arange(1, m + 1)
    out[order] = np.minimum(1.0, np.minimum.accumulate(scaled[::-1])[::-1])
    return out


def benjamini_hochberg(pvalues, alpha: float = 0.05) -> np.ndarray:
    """Boolean discoveries of the Benjamini–Hochberg procedure at false-discovery rate ``alpha``.

    Parameters
    ----------
    pvalues : array_like
        The p-values.
    alpha : float, default 0.05
        False-discovery rate.

    Returns
    -------
    ndarray of bool
        Discoveries.

    References
    ----------
    Benjamini, Y. & Hochberg, Y. (1995). Controlling the false discovery rate: a practical and powerful approach
    to multiple testing. Journal of the Royal Statistical Society B 57(1), 289–300.
    """
    q = bh_adjust(pvalues)
    return np.isfinite(q) & (q <= alpha)


def expected_chance_flags(n_tests: int, alpha: float = 0.05) -> float:
    """Expected number of unadjusted flags (p ≤ α) among ``n_tests`` true null hypotheses: n·α.

    Parameters
    ----------
    n_tests : int
        Number of tests.
    alpha : float, default 0.05
        Level of each.

    Returns
    -------
    float
        n·α.

    References
    ----------
    Benjamini, Y. & Hochberg, Y. (1995). Controlling the false discovery rate: a practical and powerful approach
    to multiple testing. Journal of the Royal Statistical Society B 57(1), 289–300.
    """
    return float(n_tests) * float(alpha)


# =============================================================================================
# p-values
# =============================================================================================


class MonteCarloP(NamedTuple):
    """A Monte-Carlo p-value with its standard error.

    Attributes
    ----------
    p : float
        (1 + #{T* at least as extreme})/(1 + B).
    se : float
        √(p(1 − p)/(B + 1)).
    n_draws : int
        B, the null draws.

    References
    ----------
    Phipson, B. & Smyth, G. K. (2010). Permutation p-values should never be zero: calculating exact p-values
    when permutations are randomly drawn. Statistical Applications in Genetics and Molecular Biology 9(1), 39.

    Davison, A. C. & Hinkley, D. V. (1997). Bootstrap Methods and their Application. Cambridge University
    Press.
    """

    p: float
    se: float
    n_draws: int


def monte_carlo_p(observed: float, null_draws, alternative: Alternative = "greater") -> MonteCarloP:
    """p-value of ``observed`` against draws of the statistic under the null hypothesis.

    ``"greater"``: large values are evidence (#{T* ≥ t}); ``"less"``: #{T* ≤ t}; ``"two-sided"``: twice the smaller
    one-sided p-value, capped at 1.  Draws that are NaN are dropped.  A relative tolerance of 1e-12 counts draws equal
    to t up to rounding as "at least as extreme".

    Parameters
    ----------
    observed : float
        The observed statistic t.
    null_draws : array_like
        Draws T* under the null.
    alternative : {"greater", "less", "two-sided"}, default "greater"
        Which values are evidence.

    Returns
    -------
    MonteCarloP
        p, its standard error and B.

    References
    ----------
    Phipson, B. & Smyth, G. K. (2010). Permutation p-values should never be zero: calculating exact p-values
    when permutations are randomly drawn. Statistical Applications in Genetics and Molecular Biology 9(1), 39.

    Davison, A. C. & Hinkley, D. V. (1997). Bootstrap Methods and their Application. Cambridge University
    Press.
    """
    t = float(observed)
    draws = np.asarray(null_draws, dtype=float).ravel()
    draws = draws[np.isfinite(draws)]
    b = draws.size
    if b == 0 or not np.isfinite(t):
        return MonteCarloP(float("nan"), float("nan"), int(b))
    tol = 1e-12 * max(abs(t), 1e-300)
    hi = (1.0 + np.count_nonzero(draws >= t - tol)) / (1.0 + b)
    lo = (1.0 + np.count_nonzero(draws <= t + tol)) / (1.0 + b)
    if alternative == "greater":
        p = hi
    elif alternative == "less":
        p = lo
    elif alternative == "two-sided":
        p = min(1.0, 2.0 * min(hi, lo))
    else:
        raise ValueError(f"alternative must be 'two-sided', 'greater' or 'less', got {alternative!r}")
    return MonteCarloP(float(p), float(np.sqrt(p * (1.0 - p) / (b + 1.0))), int(b))


def binomial_test(k: int, n: int, p: float, alternative: Alternative = "two-sided") -> float:
    """Exact binomial test of k successes in n trials against success probability p.

    Two-sided: twice the smaller exact tail, min(1, 2·min(P(X ≤ k), P(X ≥ k))) — the test that the Clopper–Pearson
    interval inverts (p is outside the level-(1 − a) interval iff this p-value < a), so the verdict and the interval
    never disagree.  One-sided: the exact tail.

    Parameters
    ----------
    k : int
        Successes.
    n : int
        Trials.
    p : float
        Success probability under the null.
    alternative : {"two-sided", "greater", "less"}, default "two-sided"
        The alternative.

    Returns
    -------
    float
        The p-value.

    References
    ----------
    Clopper, C. J. & Pearson, E. S. (1934). The use of confidence or fiducial limits illustrated in the case of
    the binomial. Biometrika 26(4), 404–413.

    Lehmann, E. L. & Romano, J. P. (2005). Testing Statistical Hypotheses, 3rd ed. Springer.
    """
    k, n = int(k), int(n)
    if n <= 0:
        return float("nan")
    p = float(p)
    lower = float(special.bdtr(k, n, p)) if k < n else 1.0  # P(X ≤ k)
    upper = float(special.bdtrc(k - 1, n, p)) if k > 0 else 1.0  # P(X ≥ k)
    if alternative == "less":
        return lower
    if alternative == "greater":
        return upper
    if alternative != "two-sided":
        raise ValueError(f"alternative must be 'two-sided', 'greater' or 'less', got {alternative!r}")
    return min(1.0, 2.0 * min(lower, upper))


def poisson_binomial_test(
    k: int,
    probs,
    *,
    n_draws: int = 10_000,
    rng: np.random.Generator | None = None,
    alternative: Alternative = "two-sided",
    decimals: int = 9,
) -> MonteCarloP:
    """Test a count k of independent events with success probabilities ``probs`` (one per trial).

    All p_i equal (to ``decimals``): the exact binomial test (``se`` = 0, ``n_draws`` = 0).  Otherwise the count is
    simulated as Σ_g Binomial(n_g, p_g) over the groups of equal p_i (``n_draws`` draws, cost n_draws × #groups) and
    the p-value is a :func:`monte_carlo_p`; when no draw is as extreme as k, the smaller normal-approximation tail
    replaces the floor 1/(B + 1).

    Parameters
    ----------
    k : int
        The observed count.
    probs : array_like
        Success probability of every trial.
    n_draws : int, default 10000
        Simulated counts.
    rng : numpy.random.Generator or None, default None
        Random numbers.
    alternative : {"two-sided", "greater", "less"}, default "two-sided"
        The alternative.
    decimals : int, default 9
        Rounding that decides equal p_i.

    Returns
    -------
    MonteCarloP
        p, its standard error and the draws.

    References
    ----------
    Hong, Y. (2013). On computing the distribution function for the Poisson binomial distribution.
    Computational Statistics & Data Analysis 59, 41–51.

    Phipson, B. & Smyth, G. K. (2010). Permutation p-values should never be zero: calculating exact p-values
    when permutations are randomly drawn. Statistical Applications in Genetics and Molecular Biology 9(1), 39.
    """
    probs = np.asarray(probs, dtype=float).ravel()
    n = probs.size
    if n == 0:
        return MonteCarloP(float("nan"), float("nan"), 0)
    values, counts = np.unique(np.round(probs, decimals), return_counts=True)
    if values.size == 1:
        return MonteCarloP(binomial_test(k, n, float(np.clip(values[0], 0.0, 1.0)), alternative), 0.0, 0)
    rng = np.random.default_rng(0) if rng is None else rng
    pv = np.clip(values, 0.0, 1.0)
    draws = rng.binomial(counts[None, :], pv[None, :], size=(n_draws, values.size)).sum(axis=1)
    mc = monte_carlo_p(float(k), draws, alternative)
    if mc.p * (1.0 + mc.n_draws) <= (2.0 if alternative == "two-sided" else 1.0) + 1e-9:
        # no draw as extreme: the Monte-Carlo floor 1/(B + 1) says little; use the normal tail (continuity
        # corrected) of the count, which is accurate there for large counts, if it is smaller
        mean, sd = float((counts * pv).sum()), float(np.sqrt((counts * pv * (1 - pv)).sum()))
        if sd > 0:
            zval = (abs(k - mean) - 0.5) / sd
            tail = float(special.ndtr(-zval)) * (2.0 if alternative == "two-sided" else 1.0)
            return MonteCarloP(min(mc.p, tail), mc.se, mc.n_draws)
    return mc


def normal_p(z, alternative: Alternative = "two-sided"):
    """p-value of a standard-normal statistic z (vectorised).

    Parameters
    ----------
    z : array_like
        The statistics.
    alternative : {"two-sided", "greater", "less"}, default "two-sided"
        The alternative.

    Returns
    -------
    ndarray or float
        The p-values.

    References
    ----------
    Lehmann, E. L. & Romano, J. P. (2005). Testing Statistical Hypotheses, 3rd ed. Springer.
    """
    z = np.asarray(z, dtype=float)
    if alternative == "two-sided":
        out = 2.0 * special.ndtr(-np.abs(z))
    elif alternative == "greater":
        out = special.ndtr(-z)
    elif alternative == "less":
        out = special.ndtr(z)
    else:
        raise ValueError(f"alternative must be 'two-sided', 'greater' or 'less', got {alternative!r}")
    return float(out) if out.ndim == 0 else out


def gamma_p(x: float, mean: float, var: float, alternative: Alternative = "two-sided") -> float:
    """p-value of x against the gamma law with the given mean and variance (shape mean²/var, scale var/mean).

    A χ²_ν law is the gamma with mean ν and variance 2ν, so this is exact for sums of squared standard normals and a
    moment-matched (Satterthwaite) approximation otherwise.

    Parameters
    ----------
    x : float
        The statistic.
    mean : float
        Its null mean.
    var : float
        Its null variance.
    alternative : {"two-sided", "greater", "less"}, default "two-sided"
        The alternative.

    Returns
    -------
    float
        The p-value.

    References
    ----------
    Satterthwaite, F. E. (1946). An approximate distribution of estimates of variance components. Biometrics
    Bulletin 2(6), 110–114.
    """
    if not (mean > 0 and var > 0 and np.isfinite(x)):
        return float("nan")
    shape, scale = mean * mean / var, var / mean
    lo = float(special.gammainc(shape, x / scale))
    hi = float(special.gammaincc(shape, x / scale))
    if alternative == "greater":
        return hi
    if alternative == "less":
        return lo
    return min(1.0, 2.0 * min(lo, hi))


# =============================================================================================
# Intervals
# =============================================================================================


def clopper_pearson(k, n, level: float = 0.95) -> tuple[float, float]:
    """Exact (Clopper–Pearson) interval for a binomial proportion: coverage ≥ ``level`` for every p.

    Parameters
    ----------
    k : int or array_like
        Successes.
    n : int or array_like
        Trials.
    level : float, default 0.95
        Confidence level.

    Returns
    -------
    low, high : float or ndarray
        The interval.

    References
    ----------
    Clopper, C. J. & Pearson, E. S. (1934). The use of confidence or fiducial limits illustrated in the case of
    the binomial. Biometrika 26(4), 404–413.
    """
    k, n = int(k), int(n)
    if n <= 0:
        return float("nan"), float("nan")
    a = (1.0 - level) / 2.0
    lo = 0.0 if k == 0 else float(special.betaincinv(k, n - k + 1, a))
    hi = 1.0 if k == n else float(special.betaincinv(k + 1, n - k, 1.0 - a))
    return lo, hi


def format_p(p: float, floor: float = 1e-6) -> str:
    """"p < 1e-06"-style text for a sentence: two significant digits, "p < floor" below the floor.

    Parameters
    ----------
    p : float
        The p-value.
    floor : float, default 1e-6
        Smallest value written out.

    Returns
    -------
    str
        The text.

    References
    ----------
    Wasserstein, R. L. & Lazar, N. A. (2016). The ASA statement on p-values: context, process, and purpose.
    The American Statistician 70(2), 129–133.
    """
    if not np.isfinite(p):
        return "no test"
    if p < floor:
        return f"p < {floor:.0e}".replace("e-0", "e-")
    if p < 0.001:
        return f"p = {p:.1e}".replace("e-0", "e-")
    return f"p = {p:.2g}" if p < 0.1 else f"p = {p:.2f}"
