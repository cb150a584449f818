"""Block bootstrap and bootstrap intervals, task-neutral (regression and classification).

Rows are assigned to G random blocks once (:func:`block_ids`); per-block sums of whatever sufficient statistics a
metric needs are kept (G × q); a bootstrap replicate is a multinomial weight vector over the blocks
(:func:`block_bootstrap_weights`), so all replicates are one matrix product ``W @ S`` (B × G times G × q) instead
of B passes over N rows.  Blocks of random rows are i.i.d., so resampling blocks is resampling rows in groups
(exact row bootstrap when G = N; Künsch 1989 for blocks).  The delete-one-block jackknife sums
(:func:`jackknife_sums`) give the BCa acceleration.  Intervals: :func:`percentile_interval`,
:func:`basic_interval`, :func:`bca_interval` (Efron 1987; vectorised over statistics) and
:func:`studentized_interval` (bootstrap-t; Hall 1992, §3.5; Davison & Hinkley 1997, §5.2.1).
:mod:`calib_core.base.significance` re-exports these names.
"""

from __future__ import annotations

import warnings
from functools import lru_cache
from typing import NamedTuple

import numpy as np
from scipy import special

from .compiled import compiled_kernel

__all__ = [
    "nan_quantiles",
    "block_ids",
    "block_bootstrap_weights",
    "BlockDesign",
    "block_design",
    "jackknife_sums",
    "percentile_interval",
    "basic_interval",
    "bca_interval",
    "studentized_interval",
]


def block_ids(n: int, n_blocks: int, rng: np.random.Generator) -> tuple[np.ndarray, int]:
    """Assign n rows to random blocks: ``(block index per row, number of blocks G)``.

    n ≤ ``n_blocks``: every row is its own block (G = n, the bootstrap is the ordinary row bootstrap).  Otherwise
    each row goes to one of G = ``n_blocks`` blocks uniformly at random (i.i.d. blocks, sizes multinomial; a random
    assignment rather than contiguous runs, so ordered files do not make the blocks differ systematically).

    Parameters
    ----------
    n : int
        Rows.
    n_blocks : int
        Most blocks.
    rng : numpy.random.Generator
        Random numbers.

    Returns
    -------
    ids : ndarray of int, shape (n,)
        The block of every row.
    n_blocks : int
        G.

    References
    ----------
    Künsch, H. R. (1989). The jackknife and the bootstrap for general stationary observations. Annals of
    Statistics 17(3), 1217–1241.

    Efron, B. & Tibshirani, R. J. (1993). An Introduction to the Bootstrap. Chapman & Hall.
    """
    if n <= n_blocks:
        return np.arange(n, dtype=np.intp), int(n)
    return rng.integers(0, n_blocks, size=n, dtype=np.intp), int(n_blocks)


def block_bootstrap_weights(n_blocks: int, n_boot: int, rng: np.random.Generator) -> np.ndarray:
    """``(n_boot, n_blocks)`` multinomial counts (float), each row summing to n_blocks: blocks drawn with replacement.

    Replicate sums are ``weights @ block_sums``.

    Parameters
    ----------
    n_blocks : int
        G.
    n_boot : int
        Replicates B.
    rng : numpy.random.Generator
        Random numbers.

    Returns
    -------
    ndarray of shape (n_boot, n_blocks)
        The weights.

    References
    ----------
    Künsch, H. R. (1989). The jackknife and the bootstrap for general stationary observations. Annals of
    Statistics 17(3), 1217–1241.

    Efron, B. & Tibshirani, R. J. (1993). An Introduction to the Bootstrap. Chapman & Hall.
    """
    if n_blocks <= 0 or n_boot <= 0:
        return np.zeros((max(n_boot, 0), max(n_blocks, 0)))
    # n_blocks draws with replacement per replicate, drawn and counted in one compiled pass (exact integer counts)
    return _draw_counts(rng, int(n_boot), int(n_blocks))


@compiled_kernel
def _draw_counts(rng, n_boot, n_blocks):
    """``w[b, g]`` = #{j : picks[b, j] = g}, as float, for ``picks = rng.integers(0, G, size=(B, G))``: the
    multinomial counts of each replicate's G draws of a block with replacement (Efron & Tibshirani 1993, ch. 6).

    Numba's ``Generator.integers`` is NumPy's algorithm on the same bit generator (Lemire's bounded integers on
    its 32-bit outputs), so the draws, the counts and the generator's state afterwards are those of
    ``np.bincount((picks + G·b).ravel()).reshape(B, G).astype(float)`` — bit for bit — without the B × G index
    array.
    """
    w = np.zeros((n_boot, n_blocks))
    for b in range(n_boot):
        picks = rng.integers(0, n_blocks, n_blocks)
        for j in range(n_blocks):
            w[b, picks[j]] += 1.0
    return w


class BlockDesign(NamedTuple):
    """What :func:`block_design` draws.

    Attributes
    ----------
    ids : ndarray of int
        The block of every row (read-only, possibly shared).
    n_blocks : int
        G.
    weights : ndarray of shape (B, G)
        Bootstrap weights (read-only, possibly shared).
    rng : numpy.random.Generator
        A generator at the state after those draws.

    References
    ----------
    Künsch, H. R. (1989). The jackknife and the bootstrap for general stationary observations. Annals of
    Statistics 17(3), 1217–1241.
    """

    ids: np.ndarray
    n_blocks: int
    weights: np.ndarray
    rng: np.random.Generator


#: :func:`block_design` keeps the designs of this many (N, G, B, seed) (about 9 MB each at N = 1e5, B = G = 1,000)
DESIGN_MEMO = 6


def block_design(n: int, n_blocks: int, n_boot: int, seed: int | tuple[int, ...]) -> BlockDesign:
    """The random blocks and bootstrap weights of N rows, and the generator after drawing them.

    ``rng = np.random.default_rng(seed)``, then ``block_ids(n, n_blocks, rng)`` and
    ``block_bootstrap_weights(G, n_boot, rng)``: the same numbers as those calls (the caller's later draws continue
    the same stream).  The designs of the last :data:`DESIGN_MEMO` (N, G, B, seed) are memoised, since every diagnosis
    of N rows with one seed draws the same ones (6 ms at N = 1e5 and B = G = 1,000).

    Parameters
    ----------
    n : int
        Rows.
    n_blocks : int
        Most blocks.
    n_boot : int
        Replicates.
    seed : int or tuple of int
        Seed (as ``default_rng([seed, stream])`` for a tuple).

    Returns
    -------
    BlockDesign
        Blocks, weights (read-only) and the generator.

    References
    ----------
    Künsch, H. R. (1989). The jackknife and the bootstrap for general stationary observations. Annals of
    Statistics 17(3), 1217–1241.

    Efron, B. & Tibshirani, R. J. (1993). An Introduction to the Bootstrap. Chapman & Hall.
    """
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
    """Delete-one-block sums: ``total − block_sums[g]`` for every block g.

    Parameters
    ----------
    block_sums : ndarray of shape (G, q)
        Per-block sums.

    Returns
    -------
    ndarray of shape (G, q)
        The sums without each block.

    References
    ----------
    Miller, R. G. (1974). The jackknife — a review. Biometrika 61(1), 1–15.

    Efron, B. (1987). Better bootstrap confidence intervals. Journal of the American Statistical Association
    82(397), 171–185.
    """
    s = np.asarray(block_sums, dtype=float)
    return s.sum(axis=0, keepdims=True) - s


def _columns(x) -> np.ndarray:
    x = np.asarray(x, dtype=float)
    return x[:, None] if x.ndim == 1 else x


def nan_quantiles(x: np.ndarray, q, *, axis: int = 0) -> np.ndarray:
    """``np.nanquantile(x, q, axis=axis)``: linear interpolation between order statistics, NaN ignored.

    NumPy's nanquantile sorts each column separately in Python (1.7 ms for 1,000 × 15 replicates); without a NaN the
    result is ``np.quantile``'s, computed for all columns at once (0.2 ms) and identical.

    Parameters
    ----------
    x : ndarray
        The values.
    q : float or array_like
        Probabilities.
    axis : int, default 0
        The axis.

    Returns
    -------
    ndarray
        The quantiles.

    References
    ----------
    Hyndman, R. J. & Fan, Y. (1996). Sample quantiles in statistical packages. The American Statistician
    50(4), 361–365.
    """
    x = np.asarray(x, dtype=float)
    return np.quantile(x, q, axis=axis) if not np.isnan(x).any() else np.nanquantile(x, q, axis=axis)


def percentile_interval(boot, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Percentile interval of bootstrap replicates ``boot`` (B,) or (B, q), NaN replicates ignored.

    Parameters
    ----------
    boot : array_like of shape (B,) or (B, q)
        Replicates.
    level : float, default 0.95
        Two-sided level.

    Returns
    -------
    low, high : ndarray
        The interval ends.

    References
    ----------
    Efron, B. & Tibshirani, R. J. (1993). An Introduction to the Bootstrap. Chapman & Hall.
    """
    b = _columns(boot)
    a = (1.0 - level) / 2.0
    if b.shape[0] == 0:  # no replicates at all: no interval
        return np.full(b.shape[1], np.nan), np.full(b.shape[1], np.nan)
    with warnings.catch_warnings():  # an all-NaN column gives NaN ends without a warning
        warnings.simplefilter("ignore", RuntimeWarning)
        lo, hi = nan_quantiles(b, [a, 1.0 - a])
    return lo, hi


def basic_interval(theta, boot, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Basic (reverse-percentile) interval [2θ̂ − q_{1−a}, 2θ̂ − q_a].

    Corrects a bias of the statistic to first order (the bootstrap bias is subtracted twice from the percentile
    ends).

    Parameters
    ----------
    theta : array_like of shape (q,)
        The estimates.
    boot : array_like of shape (B, q)
        Replicates.
    level : float, default 0.95
        Two-sided level.

    Returns
    -------
    low, high : ndarray
        The interval ends.

    References
    ----------
    Davison, A. C. & Hinkley, D. V. (1997). Bootstrap Methods and their Application. Cambridge University
    Press.
    """
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

    z₀ = Φ⁻¹(share of replicates below θ̂, ties counted half), a = Σ(ȷ̄ − ȷ_g)³ / (6 [Σ(ȷ̄ − ȷ_g)²]^{3/2}); the ends
    are the replicate quantiles at Φ(z₀ + (z₀ + z_α)/(1 − a(z₀ + z_α))).  Falls back to the percentile ends when z₀ is
    infinite (θ̂ outside the replicates) or the acceleration term breaks down.  NaN replicates are ignored.

    Parameters
    ----------
    theta : array_like of shape (q,)
        The estimates.
    boot : array_like of shape (B, q)
        Bootstrap replicates.
    jack : array_like of shape (G, q)
        Jackknife (delete-one-block) values.
    level : float, default 0.95
        Two-sided level.

    Returns
    -------
    low, high : ndarray
        The interval ends.

    References
    ----------
    Efron, B. (1987). Better bootstrap confidence intervals. Journal of the American Statistical Association
    82(397), 171–185.

    Efron, B. & Tibshirani, R. J. (1993). An Introduction to the Bootstrap. Chapman & Hall.
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

    With t* = (θ* − θ̂)/se* and its quantiles t*_a, t*_{1−a} (a = (1 − level)/2), the interval is
    [θ̂ − t*_{1−a}·se, θ̂ − t*_a·se] (Efron & Tibshirani 1993, eq. 12.22; Hall 1992, §3.5: its coverage error is
    O(1/N) where the percentile and BCa-from-few-jackknife intervals of a spread or shape statistic are O(1/√N) in
    practice).  ``symmetric=True``: θ̂ ± q_level(|t*|)·se, the symmetric bootstrap-t (Hall 1988; coverage error
    O(1/N²) for statistics whose law is nearly symmetric, e.g. the sample skewness).  Replicates whose t* is not
    finite are ignored.

    Parameters
    ----------
    theta, se : array_like of shape (q,)
        The estimates and their standard errors.
    boot, boot_se : array_like of shape (B, q)
        Each replicate's estimate and its own standard error (same formula on the replicate).
    level : float, default 0.95
        Two-sided level.
    symmetric : bool, default False
        The symmetric bootstrap-t.

    Returns
    -------
    low, high : ndarray
        The interval ends.

    References
    ----------
    Efron, B. & Tibshirani, R. J. (1993). An Introduction to the Bootstrap. Chapman & Hall.

    Hall, P. (1992). The Bootstrap and Edgeworth Expansion. Springer.

    Hall, P. (1988). On symmetric bootstrap confidence intervals. Journal of the Royal Statistical Society B
    50(1), 35–45.
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
