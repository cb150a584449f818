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
"""

from __future__ import annotations

import warnings
from functools import lru_cache
from typing import Literal, NamedTuple

import numpy as np
from scipy import special

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
    """Boolean rejections of Holm's procedure at family-wise level ``alpha`` (NaN: False)."""
    adj = holm_adjust(pvalues)
    return np.isfinite(adj) & (adj <= alpha)


def bh_adjust(pvalues) -> np.ndarray:
    """Benjamini–Hochberg q-values: sorted ascending, q_(i) = min_{j ≥ i} min(1, m p_(j)/j) (NaN stays NaN)."""
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
    """Boolean discoveries of the Benjamini–Hochberg procedure at false-discovery rate ``alpha``."""
    q = bh_adjust(pvalues)
    return np.isfinite(q) & (q <= alpha)


def expected_chance_flags(n_tests: int, alpha: float = 0.05) -> float:
    """Expected number of unadjusted flags (p ≤ α) among ``n_tests`` true null hypotheses: n·α."""
    return float(n_tests) * float(alpha)


# =============================================================================================
# p-values
# =============================================================================================


class MonteCarloP(NamedTuple):
    """A Monte-Carlo p-value: ``p`` = (1 + #{T* at least as extreme})/(1 + B), its standard error
    ``se`` = √(p(1 − p)/(B + 1)) and the number of null draws ``n_draws`` (B)."""

    p: float
    se: float
    n_draws: int


def monte_carlo_p(observed: float, null_draws, alternative: Alternative = "greater") -> MonteCarloP:
    """p-value of ``observed`` against draws of the statistic under the null hypothesis.

    ``"greater"``: large values are evidence (#{T* ≥ t}); ``"less"``: #{T* ≤ t}; ``"two-sided"``:
    twice the smaller one-sided p-value, capped at 1.  Draws that are NaN are dropped.  A relative
    tolerance of 1e-12 counts draws equal to t up to rounding as "at least as extreme".
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

    Two-sided: twice the smaller exact tail, min(1, 2·min(P(X ≤ k), P(X ≥ k))) — the test that the
    Clopper–Pearson interval inverts (p is outside the level-(1 − a) interval iff this p-value < a),
    so the verdict and the interval never disagree.  One-sided: the exact tail.
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

    All p_i equal (to ``decimals``): the exact binomial test (``se`` = 0, ``n_draws`` = 0).
    Otherwise the count is simulated as Σ_g Binomial(n_g, p_g) over the groups of equal p_i
    (``n_draws`` draws, cost n_draws × #groups) and the p-value is a :func:`monte_carlo_p`; when no draw
    is as extreme as k, the smaller normal-approximation tail replaces the floor 1/(B + 1).
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
    """p-value of a standard-normal statistic z (vectorised)."""
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
    """p-value of x against the gamma law with the given mean and variance (shape mean²/var,
    scale var/mean).  A χ²_ν law is the gamma with mean ν and variance 2ν, so this is exact for
    sums of squared standard normals and a moment-matched (Satterthwaite) approximation otherwise."""
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
    """Exact (Clopper–Pearson) interval for a binomial proportion: coverage ≥ ``level`` for every p."""
    k, n = int(k), int(n)
    if n <= 0:
        return float("nan"), float("nan")
    a = (1.0 - level) / 2.0
    lo = 0.0 if k == 0 else float(special.betaincinv(k, n - k + 1, a))
    hi = 1.0 if k == n else float(special.betaincinv(k + 1, n - k, 1.0 - a))
    return lo, hi


def block_ids(n: int, n_blocks: int, rng: np.random.Generator) -> tuple[np.ndarray, int]:
    """Assign n rows to random blocks: ``(block index per row, number of blocks G)``.

    n ≤ ``n_blocks``: every row is its own block (G = n, the bootstrap is the ordinary row bootstrap).
    Otherwise each row goes to one of G = ``n_blocks`` blocks uniformly at random (i.i.d. blocks,
    sizes multinomial; a random assignment rather than contiguous runs, so ordered files do not
    make the blocks differ systematically).
    """
    if n <= n_blocks:
        return np.arange(n, dtype=np.intp), int(n)
    return rng.integers(0, n_blocks, size=n, dtype=np.intp), int(n_blocks)


def block_bootstrap_weights(n_blocks: int, n_boot: int, rng: np.random.Generator) -> np.ndarray:
    """``(n_boot, n_blocks)`` multinomial counts (float), each row summing to n_blocks: blocks drawn
    with replacement.  Replicate sums are ``weights @ block_sums``."""
    if n_blocks <= 0 or n_boot <= 0:
        return np.zeros((max(n_boot, 0), max(n_blocks, 0)))
    # n_blocks draws with replacement per replicate, counted by one bincount over (replicate, block)
    picks = rng.integers(0, n_blocks, size=(n_boot, n_blocks))
    picks += np.arange(n_boot)[:, None] * n_blocks
    return np.bincount(picks.ravel(), minlength=n_boot * n_blocks).reshape(n_boot, n_blocks).astype(float)


class BlockDesign(NamedTuple):
    """What :func:`block_design` draws: the block of every row, the number of blocks G, the (B × G) bootstrap
    weights (both arrays read-only, possibly shared) and a generator at the state after those draws."""

    ids: np.ndarray
    n_blocks: int
    weights: np.ndarray
    rng: np.random.Generator


#: :func:`block_design` keeps the designs of this many (N, G, B, seed) (about 9 MB each at N = 1e5, B = G = 1,000)
DESIGN_MEMO = 6


def block_design(n: int, n_blocks: int, n_boot: int, seed: int | tuple[int, ...]) -> BlockDesign:
    """``rng = np.random.default_rng(seed)``, then ``block_ids(n, n_blocks, rng)`` and
    ``block_bootstrap_weights(G, n_boot, rng)``: the random blocks and bootstrap weights of N rows, and the
    generator after drawing them (the caller's later draws continue the same stream).  The same numbers as those
    calls; the designs of the last :data:`DESIGN_MEMO` (N, G, B, seed) are memoised, since every diagnosis of N rows
    with one seed draws the same ones (6 ms at N = 1e5 and B = G = 1,000).  ``seed`` is an int or a tuple of ints
    (as ``default_rng([seed, stream])``); the returned arrays are read-only."""
    key = (int(n), int(n_blocks), int(n_boot), seed if isinstance(seed, int) else tuple(int(s) for s in seed))
    ids, g, weights, state = _memo_design(*key)
    rng = np.random.Generator(np.random.PCG64())
    rng.bit_generator.state = state
    return BlockDesign(ids, g, weights, rng)


@lru_cache(maxsize=DESIGN_MEMO)
def _memo_design(n: int, n_blocks: int, n_boot: int, seed: int | tuple[int, ...]):
    rng = np.random.default_rng(seed if isinstance(seed, int) else list(seed))
    ids, g = block_ids(n, n_blocks, rng)
    weights = block_bootstrap_weights(g, n_boot, rng)
    ids.flags.writeable = False
    weights.flags.writeable = False
    return ids, g, weights, rng.bit_generator.state


def jackknife_sums(block_sums: np.ndarray) -> np.ndarray:
    """Delete-one-block sums: ``total − block_sums[g]`` for every block g (G × q)."""
    s = np.asarray(block_sums, dtype=float)
    return s.sum(axis=0, keepdims=True) - s


def _columns(x) -> np.ndarray:
    x = np.asarray(x, dtype=float)
    return x[:, None] if x.ndim == 1 else x


def nan_quantiles(x: np.ndarray, q, *, axis: int = 0) -> np.ndarray:
    """``np.nanquantile(x, q, axis=axis)`` (linear interpolation between order statistics, NaN ignored): NumPy's
    nanquantile sorts each column separately in Python (1.7 ms for 1,000 × 15 replicates); without a NaN the result
    is ``np.quantile``'s, computed for all columns at once (0.2 ms) and identical."""
    x = np.asarray(x, dtype=float)
    return np.quantile(x, q, axis=axis) if not np.isnan(x).any() else np.nanquantile(x, q, axis=axis)


def percentile_interval(boot, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Percentile interval of bootstrap replicates ``boot`` (B,) or (B, q), NaN replicates ignored."""
    b = _columns(boot)
    a = (1.0 - level) / 2.0
    with warnings.catch_warnings():  # an all-NaN column gives NaN ends without a warning
        warnings.simplefilter("ignore", RuntimeWarning)
        lo, hi = nan_quantiles(b, [a, 1.0 - a])
    return lo, hi


def basic_interval(theta, boot, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Basic (reverse-percentile) interval [2θ̂ − q_{1−a}, 2θ̂ − q_a]: corrects a bias of the
    statistic to first order (the bootstrap bias is subtracted twice from the percentile ends)."""
    theta = np.atleast_1d(np.asarray(theta, dtype=float))
    lo, hi = percentile_interval(boot, level)
    return 2.0 * theta - hi, 2.0 * theta - lo


def _sorted_quantile(sorted_cols: np.ndarray, counts: np.ndarray, probs: np.ndarray) -> np.ndarray:
    """Per column c, the ``probs[c]`` quantile (linear interpolation, as ``np.quantile``) of the first
    ``counts[c]`` entries of the column-sorted array (NaN sorted last)."""
    pos = probs * (counts - 1)
    lo = np.floor(pos).astype(int)
    hi = np.minimum(lo + 1, counts - 1)
    cols = np.arange(sorted_cols.shape[1])
    frac = pos - lo
    a, b = sorted_cols[lo, cols], sorted_cols[hi, cols]
    return a + frac * (b - a)


def bca_interval(theta, boot, jack, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Bias-corrected and accelerated interval (Efron 1987), vectorised over statistics.

    ``theta`` (q,) the estimates, ``boot`` (B, q) bootstrap replicates, ``jack`` (G, q) jackknife
    (delete-one-block) values.  z₀ = Φ⁻¹(share of replicates below θ̂, ties counted half),
    a = Σ(ȷ̄ − ȷ_g)³ / (6 [Σ(ȷ̄ − ȷ_g)²]^{3/2}); the ends are the replicate quantiles at
    Φ(z₀ + (z₀ + z_α)/(1 − a(z₀ + z_α))).  Falls back to the percentile ends when z₀ is infinite
    (θ̂ outside the replicates) or the acceleration term breaks down.  NaN replicates are ignored.
    """
    theta = np.atleast_1d(np.asarray(theta, dtype=float))
    b, j = _columns(boot), _columns(jack)
    srt = np.sort(b, axis=0)  # NaN last
    counts = np.isfinite(b).sum(axis=0)
    a_tail = (1.0 - level) / 2.0
    z_a = special.ndtri(np.array([a_tail, 1.0 - a_tail]))
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN columns (e.g. N = 2): NaN ends
        below = np.nansum(b < theta, axis=0) + 0.5 * np.nansum(b == theta, axis=0)
        share = below / counts
        jm = np.nanmean(j, axis=0)
        d = jm - j
        s2 = np.nansum(d * d, axis=0)
        acc = np.where(s2 > 0, np.nansum(d**3, axis=0) / (6.0 * s2**1.5), 0.0)
        z0 = special.ndtri(share)
        ends = []
        for zz in z_a:
            t = z0 + zz
            denom = 1.0 - acc * t
            p = special.ndtr(z0 + t / denom)
            fallback = ~np.isfinite(p) | (denom <= 0) | ~np.isfinite(z0)
            ends.append(np.where(fallback, special.ndtr(zz), p))
    ok = (counts >= 2) & np.isfinite(theta)
    safe = np.maximum(counts, 1)
    with np.errstate(all="ignore"):
        lo = np.where(ok, _sorted_quantile(srt, safe, np.clip(ends[0], 0, 1)), np.nan)
        hi = np.where(ok, _sorted_quantile(srt, safe, np.clip(ends[1], 0, 1)), np.nan)
    return lo, hi


def studentized_interval(
    theta, se, boot, boot_se, level: float = 0.95, *, symmetric: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """Bootstrap-t (studentised) interval, vectorised over statistics.

    ``theta``, ``se`` (q,): the estimates and their standard errors; ``boot``, ``boot_se`` (B, q): each
    replicate's estimate and its own standard error (same formula on the replicate).  With
    t* = (θ* − θ̂)/se* and its quantiles t*_a, t*_{1−a} (a = (1 − level)/2), the interval is
    [θ̂ − t*_{1−a}·se, θ̂ − t*_a·se] (Efron & Tibshirani 1993, eq. 12.22; Hall 1992, §3.5: its coverage
    error is O(1/N) where the percentile and BCa-from-few-jackknife intervals of a spread or shape
    statistic are O(1/√N) in practice).  ``symmetric=True``: θ̂ ± q_level(|t*|)·se, the symmetric
    bootstrap-t (Hall 1988; coverage error O(1/N²) for statistics whose law is nearly symmetric, e.g.
    the sample skewness).  Replicates whose t* is not finite are ignored.
    """
    theta = np.atleast_1d(np.asarray(theta, dtype=float))
    se = np.atleast_1d(np.asarray(se, dtype=float))
    b, bs = _columns(boot), _columns(boot_se)
    with np.errstate(all="ignore"):
        t = (b - theta) / bs
    t = np.where(np.isfinite(t), t, np.nan)
    if symmetric:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            q = np.nanquantile(np.abs(t), level, axis=0)
        return theta - q * se, theta + q * se
    lo_t, hi_t = percentile_interval(t, level)
    with np.errstate(all="ignore"):
        return theta - hi_t * se, theta - lo_t * se


def format_p(p: float, floor: float = 1e-6) -> str:
    """"p < 1e-06"-style text for a sentence: two significant digits, "p < floor" below the floor."""
    if not np.isfinite(p):
        return "no test"
    if p < floor:
        return f"p < {floor:.0e}".replace("e-0", "e-")
    if p < 0.001:
        return f"p = {p:.1e}".replace("e-0", "e-")
    return f"p = {p:.2g}" if p < 0.1 else f"p = {p:.2f}"
