"""Simultaneous confidence bands for the ECDF of PIT values (Säilynoja, Bürkner & Vehtari 2022, "Graphical test for
discrete uniformity and its applications in goodness-of-fit evaluation and multiple sample comparison",
Statistics and Computing 32:32).

Under perfect calibration the PIT values u_1..u_N are i.i.d. uniform, and at the K evaluation points z_1 < … < z_K
in (0, 1) the counts N·F̂(z_j) are Binomial(N, z_j) each, jointly the cumulative sums of one multinomial draw.  The
*pointwise* band [B⁻¹(α/2; N, z_j), B⁻¹(1 − α/2; N, z_j)]/N holds at each z_j with probability ≈ 1 − α, but the
whole curve leaves it far more often (with 99 points, in most calibrated data sets).  The *simultaneous* band uses
the same binomial quantiles at an adjusted level γ < α, chosen so that the probability that the whole ECDF stays
inside is 1 − α:

    band_j(γ) = [B⁻¹(γ/2; N, z_j), B⁻¹(1 − γ/2; N, z_j)] / N,   P(∀j: F̂(z_j) ∈ band_j(γ)) = 1 − α.

γ is found by the paper's **simulation method** (§3.1): draw M uniform samples of size N — here their counts at the
z_j directly, one multinomial draw over the K + 1 gaps per sample, so the cost is M·K whatever N — and choose the
largest γ ≤ α for which the share of samples whose ECDF lies inside band(γ) at every z_j is at least 1 − α
(bisection in log γ; each step is K binomial quantiles and M·K comparisons, and the band tested is exactly the band
drawn).  The paper phrases the same choice through each sample's smallest pointwise tail probability.  The result
is cached per (N, evaluation points, α) (:func:`adjusted_gamma`; M = 4,000 by default, seeded, so a cached value
is reproducible; the Monte-Carlo standard error of the achieved coverage is √(α(1 − α)/M) ≈ 0.0034).

**Tabulated γ for large N.**  The simulation costs ~65 ms per new N (M·K comparisons per bisection step, 30 steps),
which a summary-backed page pays on every σ-bin selection (each selection has its own N).  But γ(N) varies slowly
in N: as N → ∞ the centred counts converge to a Brownian bridge at the z_j and the binomial band to its normal
limit, so γ(N) tends to a constant γ∞(z, α) with corrections of order (N·min z_j)^(−1/2).  For the default grid
(the 99 interior levels 0.01 … 0.99) at α = 0.05, γ was therefore calibrated once by the same simulation with
M = 100,000 (seed 0; coverage s.e. 0.0007) at the 37 log-spaced N = 10^(k/4), k = 12 … 48 (10³ … 10¹²)
(:func:`gamma_table` regenerates it; ``tests/base/test_ecdf_bands.py`` recomputes entries and checks them), and
:func:`adjusted_gamma` interpolates log γ linearly in log N between them (γ goes from 0.00265 at N = 10³ to
0.00223, the table's neighbouring entries differ by at most 5%); above 10¹² it uses the last entry (the limit,
within Monte-Carlo error).  Below 10³, for other grids and other levels it simulates per N as above.  The band
itself is always the exact binomial band at that γ (vectorised ``scipy.stats.binom.ppf``), so a selection
costs two quantile calls of K points (< 1 ms) instead of ~65 ms.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from scipy import stats

__all__ = ["adjusted_gamma", "ecdf_band", "inside_band", "gamma_table", "TABLE_N", "TABLE_SIMS"]

#: N of the tabulated γ: 10^(k/4), k = 12 … 48 (10³ … 10¹²).
TABLE_N = np.round(10.0 ** (np.arange(12, 49) / 4.0)).astype(np.int64)
#: Simulated samples per tabulated γ.
TABLE_SIMS = 100_000
_DEFAULT_GRID = tuple(np.round(np.linspace(0.0, 1.0, 101)[1:-1], 12).tolist())
#: γ(N) at TABLE_N for (grid, α) (``gamma_table(np.linspace(0, 1, 101), 0.05)``, rounded to 7 digits).
_GAMMA_TABLES: dict[tuple[tuple[float, ...], float], np.ndarray] = {(_DEFAULT_GRID, 0.05): np.array([
    2.654630e-03, 2.557432e-03, 2.470244e-03, 2.338936e-03, 2.286376e-03, 2.312878e-03,
    2.231531e-03, 2.220291e-03, 2.225593e-03, 2.276390e-03, 2.304081e-03, 2.235446e-03,
    2.236467e-03, 2.257299e-03, 2.239630e-03, 2.213277e-03, 2.247088e-03, 2.205394e-03,
    2.222565e-03, 2.231174e-03, 2.191445e-03, 2.273774e-03, 2.220763e-03, 2.226079e-03,
    2.247681e-03, 2.217409e-03, 2.240212e-03, 2.298380e-03, 2.263851e-03, 2.242232e-03,
    2.217050e-03, 2.254770e-03, 2.180266e-03, 2.234316e-03, 2.225777e-03, 2.239978e-03,
    2.240165e-03,
])}


def _interior(levels: np.ndarray) -> np.ndarray:
    z = np.asarray(levels, dtype=float)
    return np.unique(z[(z > 0.0) & (z < 1.0)])


@lru_cache(maxsize=512)
def _gamma_cached(n: int, z: tuple[float, ...], alpha: float, n_sims: int, seed: int) -> float:
    zz = np.asarray(z, dtype=float)
    gaps = np.diff(np.concatenate([[0.0], zz, [1.0]]))
    counts = np.cumsum(np.random.default_rng(seed).multinomial(n, gaps, size=n_sims)[:, :-1], axis=1)

    def coverage(gamma: float) -> float:
        lo = stats.binom.ppf(gamma / 2.0, n, zz)
        hi = stats.binom.ppf(1.0 - gamma / 2.0, n, zz)
        return float(np.mean(np.all((counts >= lo) & (counts <= hi), axis=1)))

    # coverage(γ) falls as γ grows (the band narrows): bisection in log γ for the largest γ ≤ α with coverage ≥ 1 − α
    if coverage(alpha) >= 1.0 - alpha:
        return float(alpha)
    lo_g, hi_g = np.log(alpha * 1e-6), np.log(alpha)
    for _ in range(30):
        mid = 0.5 * (lo_g + hi_g)
        if coverage(float(np.exp(mid))) >= 1.0 - alpha:
            lo_g = mid
        else:
            hi_g = mid
    return float(np.exp(lo_g))


def adjusted_gamma(n: int, levels: np.ndarray, alpha: float = 0.05, *, n_sims: int = 4_000, seed: int = 0,
                   tabulated: bool = True) -> float:
    """The adjusted pointwise level γ (≤ α) at which the binomial band of the ECDF holds simultaneously.

    For the ECDF of N uniform values at the interior ``levels``, with probability 1 − α (simulation method of
    Säilynoja et al. 2022; cached).  With ``tabulated`` and a (grid, α) that has a table (the default 99 levels at
    α = 0.05) and N ≥ 10³: log γ interpolated linearly in log N in the table calibrated with M = 100,000 (module
    docstring; < 0.1 ms); otherwise the simulation at this N with M = ``n_sims``, seed ``seed`` (~65 ms, cached per
    N).

    Parameters
    ----------
    n : int
        N.
    levels : ndarray
        The levels of the ECDF.
    alpha : float, default 0.05
        1 − the simultaneous level.
    n_sims : int, default 4000
        Simulated samples when not tabulated.
    seed : int, default 0
        Seed of the simulation.
    tabulated : bool, default True
        Use the table when there is one.

    Returns
    -------
    float
        γ.

    References
    ----------
    Säilynoja, T., Bürkner, P.-C. & Vehtari, A. (2022). Graphical test for discrete uniformity and its
    applications in goodness-of-fit evaluation and multiple sample comparison. Statistics and Computing 32, 32.
    """
    z = _interior(levels)
    if n < 1 or z.size == 0:
        return float(alpha)
    key = tuple(np.round(z, 12).tolist())
    table = _GAMMA_TABLES.get((key, round(float(alpha), 12))) if tabulated else None
    if table is not None and n >= TABLE_N[0]:
        return float(np.exp(np.interp(np.log(n), np.log(TABLE_N), np.log(table))))
    return _gamma_cached(int(n), key, float(alpha), int(n_sims), int(seed))


def gamma_table(levels: np.ndarray, alpha: float = 0.05, *, n_grid: np.ndarray = TABLE_N,
                n_sims: int = TABLE_SIMS, seed: int = 0) -> np.ndarray:
    """γ(N) at each N of ``n_grid`` by the simulation method: the table :func:`adjusted_gamma` interpolates.

    Cost ≈ 1.5 s per N at M = 100,000.

    Parameters
    ----------
    levels : ndarray
        The levels of the ECDF.
    alpha : float, default 0.05
        1 − the simultaneous level.
    n_grid : ndarray of int, default TABLE_N
        The N.
    n_sims : int, default TABLE_SIMS
        M, simulated samples per N.
    seed : int, default 0
        Seed of the generator.

    Returns
    -------
    ndarray
        γ at each N.

    References
    ----------
    Säilynoja, T., Bürkner, P.-C. & Vehtari, A. (2022). Graphical test for discrete uniformity and its
    applications in goodness-of-fit evaluation and multiple sample comparison. Statistics and Computing 32, 32.
    """
    key = tuple(np.round(_interior(levels), 12).tolist())
    return np.array([_gamma_cached.__wrapped__(int(n), key, float(alpha), int(n_sims), int(seed)) for n in n_grid])


def ecdf_band(
    n: int, levels: np.ndarray, level: float = 0.95, *, simultaneous: bool = True, n_sims: int = 4_000
) -> tuple[np.ndarray, np.ndarray, float]:
    """(low, high, γ) of the ``level`` band of the ECDF of N uniform PIT values at ``levels``.

    Pointwise binomial quantiles at γ = 1 − level, or (``simultaneous``) at the adjusted γ of :func:`adjusted_gamma`,
    so that the whole ECDF of a calibrated forecaster stays inside with probability ``level``.

    Parameters
    ----------
    n : int
        N.
    levels : ndarray
        The levels.
    level : float, default 0.95
        Level of the band.
    simultaneous : bool, default True
        Simultaneous or pointwise.
    n_sims : int, default 4000
        Simulated samples when γ is not tabulated.

    Returns
    -------
    low : ndarray
        Lower edge at each level.
    high : ndarray
        Upper edge.
    gamma : float
        The pointwise level used.

    References
    ----------
    Säilynoja, T., Bürkner, P.-C. & Vehtari, A. (2022). Graphical test for discrete uniformity and its
    applications in goodness-of-fit evaluation and multiple sample comparison. Statistics and Computing 32, 32.
    """
    lev = np.asarray(levels, dtype=float)
    lo, hi, gamma = _band_cached(int(n), lev.shape, tuple(lev.ravel().tolist()), float(level), bool(simultaneous),
                                 int(n_sims))
    return lo.copy(), hi.copy(), gamma


@lru_cache(maxsize=256)
def _band_cached(n: int, shape: tuple[int, ...], levels: tuple[float, ...], level: float, simultaneous: bool,
                 n_sims: int) -> tuple[np.ndarray, np.ndarray, float]:
    """:func:`ecdf_band`'s result, once per (N, levels, level, …): several forecasters of one N (a lab's six, a
    page's models) share it (two ``binom.ppf`` over the levels, ~1 ms)."""
    lev = np.array(levels, dtype=float).reshape(shape)
    alpha = 1.0 - level
    gamma = adjusted_gamma(n, lev, alpha, n_sims=n_sims) if simultaneous else alpha
    if n < 1:
        return np.full(lev.shape, np.nan), np.full(lev.shape, np.nan), gamma
    lo = _binom_ppf(gamma / 2.0, n, lev) / n
    hi = _binom_ppf(1.0 - gamma / 2.0, n, lev) / n
    return lo, hi, gamma


def _binom_ppf(q: float, n: int, p: np.ndarray) -> np.ndarray:
    """Smallest c with P(Binomial(n, p) ≤ c) ≥ q, vectorised over p (scipy.stats.binom.ppf's convention)."""
    return np.asarray(stats.binom.ppf(q, n, p), dtype=float)


def inside_band(observed: np.ndarray, low: np.ndarray, high: np.ndarray) -> bool:
    """True when every point of the ECDF lies in its band (ends included).

    Parameters
    ----------
    observed : ndarray
        The ECDF at the levels.
    low : ndarray
        Lower edges.
    high : ndarray
        Upper edges.

    Returns
    -------
    bool
        Whether the ECDF stays inside.

    References
    ----------
    Säilynoja, T., Bürkner, P.-C. & Vehtari, A. (2022). Graphical test for discrete uniformity and its
    applications in goodness-of-fit evaluation and multiple sample comparison. Statistics and Computing 32, 32.
    """
    o = np.asarray(observed, dtype=float)
    return bool(np.all((o >= np.asarray(low) - 1e-12) & (o <= np.asarray(high) + 1e-12)))
