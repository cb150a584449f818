"""Compiled null draws of the CORP quantile reliability band: the same draws as NumPy, a quarter of the time.

:func:`calib_core.metrics.regression_decomposition.quantile_reliability` draws, for R resamples, G groups of
consecutive forecasts and C grid values c_j, the count K_gj of targets at most c_j under calibration:
K_gj ~ Binomial(n_g, p̄_gj) where the binomial's variance n_g p̄(1 − p̄) is below ``normal_above``, else
n_g p̄ + √(n_g p̄(1 − p̄))·Z with Z standard normal; then the first arg-max s_j of the walk
W_b = Σ_{g < b} (K_gj − τ n_g), b = 0 … G, and the histogram of s_j over the R resamples (Gneiting et al. 2023,
§3–4; the threshold decomposition of the isotonic fit).

:func:`band_split_counts_numpy` is the NumPy reference: grid values in blocks of 32, per block R·G·32 normal
deviates (unless every cell is binomial) and then the binomial cells, in C order, from ``numpy.random.Generator``.
:func:`band_split_counts` takes **the same random numbers from the same generator in the same order** and returns
the same histogram bit for bit (the walk is the same sequential sum; Numba's generator methods are NumPy's
algorithms on the same bit generator):

* most binomial cells have n_g p ≤ 30, where NumPy draws by inversion (Kachitvichyanukul & Schmeiser 1988, the
  ``random_binomial_inversion`` of NumPy's ``distributions.c``): one uniform U, then X = the first k with
  U − px_0 − … − px_{k−1} ≤ px_k, px_0 = (1 − p)^n, px_k = px_{k−1}·(n − k + 1)p / (k(1 − p)), restarted with a
  new U past k = ⌊min(n, np + 10√(np(1 − p) + 1))⌋.  NumPy recomputes (1 − p)^n = exp(n log(1 − p)) and the px_k
  (a division each, a dependent chain) on every draw, because consecutive draws have different p; here the
  probabilities px_k of each cell are tabulated once per block with the same operations, and each draw only
  subtracts them from U — the same subtractions in the same order, so the same X;
* the other cells (BTPE, p = 0, p > ½ by symmetry) follow NumPy's ``random_binomial`` case by case;
* no R·G·C temporaries: the counts of one block are written once and the walk's arg-max is taken in the same loop.

References
----------
Gneiting, T., Wolffram, D., Resin, J., Kraus, K., Bracher, J., Dimitriadis, T., Hagenmeyer, V., Jordan, A. I.,
Lerch, S., Phipps, K. & Schienle, M. (2023). Model diagnostics and forecast evaluation for quantiles. Annual Review
of Statistics and Its Application 10, 597–621.

Kachitvichyanukul, V. & Schmeiser, B. W. (1988). Binomial random variate generation. Communications of the ACM
31(2), 216–222.

Lam, S. K., Pitrou, A. & Seibert, S. (2015). Numba: a LLVM-based Python JIT compiler. *LLVM-HPC '15*, 1–6.
"""

from __future__ import annotations

import math

import numpy as np

from ..base.compiled import compiled_kernel
from ..base.regression import Gaussian, PredictiveDistribution
from .regression_isotonic_quantile import isotonic_quantile_regression

__all__ = ["BAND_BLOCK", "band_split_counts", "band_split_counts_numpy", "sorted_quantile", "rows_cdf", "warm_up"]

#: Grid values drawn per block (the NumPy reference's block: it fixes the order of the random numbers).
BAND_BLOCK = 32

#: Entries of an inversion table: the inversion's bound is below 30 + 10·√31 < 86 whenever n·p ≤ 30.
_TABLE = 88


def band_split_counts_numpy(rng: np.random.Generator, p_bar: np.ndarray, n_g: np.ndarray, tau: float,
                            normal_above: float, n_resamples: int) -> np.ndarray:
    """The histogram of the walk's first arg-max s_j over ``n_resamples`` null draws, per grid value (NumPy).

    With K_gj ~ Binomial(n_g, p̄_gj) where n_g p̄(1 − p̄) < ``normal_above``, else n_g p̄ + √(n_g p̄(1 − p̄))·Z:
    s_j = the first arg-max over b = 0 … G of W_b = Σ_{g < b} (K_gj − τ n_g).

    Parameters
    ----------
    rng : numpy.random.Generator
        The generator (advanced by the draws).
    p_bar : ndarray of shape (G, C)
        P(y ≤ c_j) averaged over group g's representative rows, in [0, 1].
    n_g : ndarray of shape (G,)
        Rows per group (whole numbers, as floats).
    tau : float
        The level τ.
    normal_above : float
        Binomial variance from which the normal law is drawn.
    n_resamples : int
        Draws R.

    Returns
    -------
    ndarray of shape (C, G + 1)
        ``out[j, b]`` = #{resamples with s_j = b} (floats).

    References
    ----------
    Gneiting, T., Wolffram, D., Resin, J., Kraus, K., Bracher, J., Dimitriadis, T., Hagenmeyer, V., Jordan, A. I.,
    Lerch, S., Phipps, K. & Schienle, M. (2023). Model diagnostics and forecast evaluation for quantiles. Annual
    Review of Statistics and Its Application 10, 597–621.

    Examples
    --------
    >>> import numpy as np
    >>> out = band_split_counts_numpy(np.random.default_rng(0), np.full((3, 2), 0.5), np.full(3, 10.0), 0.5, 25.0, 4)
    >>> out.shape, float(out.sum())
    ((2, 4), 8.0)
    """
    r = int(n_resamples)
    n_groups, n_grid = p_bar.shape
    n_gi = n_g.astype(np.int64)
    split_counts = np.zeros((n_grid, n_groups + 1))
    for j0 in range(0, n_grid, BAND_BLOCK):  # 32 grid values at a time: R × G × 32 counts
        js = np.arange(j0, min(j0 + BAND_BLOCK, n_grid))
        p_js = np.broadcast_to(p_bar[None, :, js], (r, n_groups, js.size))
        n_js = np.broadcast_to(n_g[None, :, None], p_js.shape)
        var = n_js * p_js * (1.0 - p_js)
        small = var < normal_above  # exact binomial draws; the normal law with the same moments above
        if small.all():
            counts = rng.binomial(n_gi[None, :, None], p_js).astype(float)
        else:
            counts = n_js * p_js + np.sqrt(var) * rng.standard_normal(p_js.shape)
            if small.any():
                counts[small] = rng.binomial(np.broadcast_to(n_gi[None, :, None], p_js.shape)[small], p_js[small])
        walk = np.cumsum(counts - tau * n_g[None, :, None], axis=1)
        walk = np.concatenate([np.zeros((r, 1, js.size)), walk], axis=1)
        s = walk.argmax(axis=1)  # R × |js|: first maximiser over group boundaries 0..G
        split_counts[js] = np.bincount((np.arange(js.size)[None, :] * (n_groups + 1) + s).ravel(),
                                       minlength=js.size * (n_groups + 1)).reshape(js.size, -1)
    return split_counts


@compiled_kernel
def _band_splits(rng, p_bar, n_g, n_gi, tau, normal_above, r, block):  # pragma: no cover - compiled
    """:func:`band_split_counts_numpy` as one loop: the same random numbers in the same order (module docstring)."""
    n_groups, n_grid = p_bar.shape
    split = np.zeros((n_grid, n_groups + 1))
    counts = np.empty((r, n_groups, block))
    kind = np.zeros((n_groups, block), np.int64)  # 0: no draw, 1: inversion, 2: inversion of 1 − p, 3: BTPE
    small = np.zeros((n_groups, block), np.bool_)
    mean = np.empty((n_groups, block))
    sd = np.empty((n_groups, block))
    table = np.empty((n_groups, block, _TABLE))
    last = np.zeros((n_groups, block), np.int64)
    walk = np.zeros(block)  # per grid value of the block: the walk, its maximum and first arg-max
    best = np.zeros(block)
    arg = np.zeros(block, np.int64)
    for j0 in range(0, n_grid, block):
        jn = min(block, n_grid - j0)
        all_small = True
        for g in range(n_groups):
            n = n_gi[g]
            for jj in range(jn):
                p = p_bar[g, j0 + jj]
                m = n_g[g] * p
                v = m * (1.0 - p)
                mean[g, jj] = m
                sd[g, jj] = math.sqrt(v)
                small[g, jj] = v < normal_above
                if not small[g, jj]:
                    all_small = False
                if n == 0 or p == 0.0:
                    kind[g, jj] = 0
                    continue
                a = p if p <= 0.5 else 1.0 - p
                if a * n > 30.0:
                    kind[g, jj] = 3
                    continue
                kind[g, jj] = 1 if p <= 0.5 else 2
                q = 1.0 - a  # NumPy's random_binomial_inversion, its set-up and px_k sequence
                px = np.exp(n * np.log(q))
                mu = n * a
                bound = min(n, mu + 10.0 * np.sqrt(mu * q + 1))
                table[g, jj, 0] = px
                x = 0
                while x + 1 <= bound:
                    x += 1
                    px = ((n - x + 1) * a * px) / (x * q)
                    table[g, jj, x] = px
                last[g, jj] = x
        if not all_small:
            for ri in range(r):
                for g in range(n_groups):
                    for jj in range(jn):
                        counts[ri, g, jj] = mean[g, jj] + sd[g, jj] * rng.standard_normal()
        for ri in range(r):
            for g in range(n_groups):
                n = n_gi[g]
                for jj in range(jn):
                    if not small[g, jj]:
                        continue
                    k = kind[g, jj]
                    if k == 0:
                        counts[ri, g, jj] = 0.0
                    elif k == 3:
                        counts[ri, g, jj] = rng.binomial(n, p_bar[g, j0 + jj])
                    else:
                        b = last[g, jj]
                        x = 0
                        px = table[g, jj, 0]
                        u = rng.random()
                        while u > px:
                            if x >= b:  # past the bound: a new uniform
                                x = 0
                                px = table[g, jj, 0]
                                u = rng.random()
                            else:
                                u -= px
                                x += 1
                                px = table[g, jj, x]
                        counts[ri, g, jj] = (n - x) if k == 2 else x
        for ri in range(r):  # the walks of the block's grid values side by side: each one's sums in its own order
            walk[:jn] = 0.0
            best[:jn] = 0.0
            arg[:jn] = 0
            for g in range(n_groups):
                step = tau * n_g[g]
                row = counts[ri, g, :jn]
                for jj in range(jn):
                    w = walk[jj] + (row[jj] - step)
                    walk[jj] = w
                    if w > best[jj] or (w != w and best[jj] == best[jj]):  # argmax: the first maximum (or NaN)
                        best[jj] = w
                        arg[jj] = g + 1
            for jj in range(jn):
                split[j0 + jj, arg[jj]] += 1.0
    return split


def band_split_counts(rng: np.random.Generator, p_bar: np.ndarray, n_g: np.ndarray, tau: float,
                      normal_above: float, n_resamples: int) -> np.ndarray:
    """:func:`band_split_counts_numpy` compiled: the same random numbers in the same order, the same histogram.

    With K_gj ~ Binomial(n_g, p̄_gj) where n_g p̄(1 − p̄) < ``normal_above``, else n_g p̄ + √(n_g p̄(1 − p̄))·Z:
    s_j = the first arg-max over b = 0 … G of W_b = Σ_{g < b} (K_gj − τ n_g).  Falls back to the NumPy reference
    where it would raise (a p̄ outside [0, 1] or NaN, a group without rows).

    Parameters
    ----------
    rng : numpy.random.Generator
        The generator (advanced by the draws exactly as by the reference).
    p_bar : ndarray of shape (G, C)
        P(y ≤ c_j) averaged over group g's representative rows, in [0, 1].
    n_g : ndarray of shape (G,)
        Rows per group (whole numbers, as floats).
    tau : float
        The level τ.
    normal_above : float
        Binomial variance from which the normal law is drawn.
    n_resamples : int
        Draws R.

    Returns
    -------
    ndarray of shape (C, G + 1)
        ``out[j, b]`` = #{resamples with s_j = b} (floats).

    References
    ----------
    Kachitvichyanukul, V. & Schmeiser, B. W. (1988). Binomial random variate generation. Communications of the ACM
    31(2), 216–222.

    Gneiting, T., Wolffram, D., Resin, J., Kraus, K., Bracher, J., Dimitriadis, T., Hagenmeyer, V., Jordan, A. I.,
    Lerch, S., Phipps, K. & Schienle, M. (2023). Model diagnostics and forecast evaluation for quantiles. Annual
    Review of Statistics and Its Application 10, 597–621.

    Examples
    --------
    >>> import numpy as np
    >>> p, n = np.full((3, 2), 0.5), np.full(3, 10.0)
    >>> a = band_split_counts(np.random.default_rng(0), p, n, 0.5, 25.0, 4)
    >>> bool((a == band_split_counts_numpy(np.random.default_rng(0), p, n, 0.5, 25.0, 4)).all())
    True
    """
    p_bar = np.ascontiguousarray(p_bar, dtype=np.float64)
    n_g = np.ascontiguousarray(n_g, dtype=np.float64)
    if (p_bar.ndim != 2 or n_g.shape != (p_bar.shape[0],) or not ((p_bar >= 0.0) & (p_bar <= 1.0)).all()
            or not (n_g >= 1.0).all() or int(n_resamples) < 1 or type(rng.bit_generator) is not np.random.PCG64):
        return band_split_counts_numpy(rng, p_bar, n_g, tau, normal_above, n_resamples)
    return _band_splits(rng, p_bar, n_g, n_g.astype(np.int64), float(tau), float(normal_above), int(n_resamples),
                        BAND_BLOCK)


def sorted_quantile(values_at, n: int, q: np.ndarray) -> np.ndarray:
    """``np.quantile(v, q)`` (the default linear method) of N values v whose sorted values are known, without the
    partition: the same index arithmetic and the same interpolation ``_lerp`` as NumPy, so the same bits.

    Q(p) = v_(⌊h⌋) + (h − ⌊h⌋)(v_(⌊h⌋+1) − v_(⌊h⌋)), h = (N − 1)p (Hyndman & Fan 1996, definition 7), taken from
    the upper end (v_(⌊h⌋+1) − (1 − γ)·difference) where γ ≥ ½, as NumPy does.

    Parameters
    ----------
    values_at : callable
        Integer positions (0-based, in sorted order) → the sorted values there.
    n : int
        Number of values (≥ 1).
    q : ndarray
        Probabilities in [0, 1].

    Returns
    -------
    ndarray
        The quantiles, equal to ``np.quantile`` bit for bit (tested).

    References
    ----------
    Hyndman, R. J. & Fan, Y. (1996). Sample quantiles in statistical packages. The American Statistician 50(4),
    361–365.

    Examples
    --------
    >>> import numpy as np
    >>> v = np.array([3.0, 1.0, 2.0, 10.0])
    >>> q = np.array([0.1, 0.5, 0.9])
    >>> bool((sorted_quantile(np.sort(v).__getitem__, v.size, q) == np.quantile(v, q)).all())
    True
    """
    q = np.asarray(q, dtype=float)
    virtual = (n - 1) * q
    previous = np.floor(virtual)
    nxt = previous + 1
    above = virtual >= n - 1  # NumPy's _get_indexes: the last value past the end, the first before the start
    previous[above] = -1
    nxt[above] = -1
    below = virtual < 0
    previous[below] = 0
    nxt[below] = 0
    previous, nxt = previous.astype(np.intp), nxt.astype(np.intp)
    gamma = np.asarray(virtual - previous, dtype=virtual.dtype)
    a, b = values_at(previous % n), values_at(nxt % n)
    diff = b - a  # NumPy's _lerp
    out = np.add(a, diff * gamma)
    np.subtract(b, diff * (1 - gamma), out=out, where=gamma >= 0.5)
    return out


def rows_cdf(dist: PredictiveDistribution, rows: np.ndarray, values: np.ndarray) -> np.ndarray:
    """F_i(c_j) for the rows i of ``rows`` and every value c_j: the matrix
    ``dist.take(np.repeat(rows, C)).cdf(np.tile(values, m)).reshape(m, C)``, the same numbers; a Gaussian set
    evaluates Φ((c_j − μ_i)/σ_i) on the broadcast matrix instead of repeating every row C times.

    Parameters
    ----------
    dist : PredictiveDistribution
        The predictive distributions.
    rows : ndarray of shape (m,)
        Row indices.
    values : ndarray of shape (C,)
        The points c_j.

    Returns
    -------
    ndarray of shape (m, C)
        F_i(c_j).

    References
    ----------
    Gneiting, T. & Raftery, A. E. (2007). Strictly proper scoring rules, prediction, and estimation. Journal of
    the American Statistical Association 102(477), 359–378.

    Examples
    --------
    >>> import numpy as np
    >>> from calib_core.base.regression import Gaussian
    >>> rows_cdf(Gaussian(np.zeros(3), np.ones(3)), np.array([0, 2]), np.array([0.0])).tolist()
    [[0.5], [0.5]]
    """
    rows = np.asarray(rows)
    values = np.asarray(values, dtype=float)
    if type(dist) is Gaussian:
        return np.asarray(dist.take(rows).cdf(np.broadcast_to(values, (rows.size, values.size))), dtype=float)
    cdf = np.asarray(dist.take(np.repeat(rows, values.size)).cdf(np.tile(values, rows.size)), dtype=float)
    return cdf.reshape(rows.size, values.size)


def warm_up() -> None:
    """Compile (or load from the on-disk cache) the band's kernel and the isotonic fit's threshold sweep on a tiny
    input, so that the first CORP quantile reliability diagram does not wait for the compiler (the dashboard's
    warm-up thread calls it).

    Returns
    -------
    None

    References
    ----------
    Lam, S. K., Pitrou, A. & Seibert, S. (2015). Numba: a LLVM-based Python JIT compiler. *LLVM-HPC '15*, 1–6.
    """
    band_split_counts(np.random.default_rng(0), np.full((2, 2), 0.5), np.full(2, 4.0), 0.5, 25.0, 2)
    isotonic_quantile_regression(np.arange(3.0), np.arange(3.0), 0.5)  # its compiled threshold sweep
