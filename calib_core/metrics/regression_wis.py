"""The weighted interval score (WIS) and the coverage of every central interval, per row.

Bracher, Ray, Gneiting & Reich (2021) score a forecast given as a median m and K central intervals
[l_k, u_k] of nominal coverage 1 − α_k (the format of the COVID-19 and influenza forecast hubs) by

    WIS = 1/(K + ½) · (½ |y − m| + Σ_k (α_k/2) · IS_{α_k}),
    IS_α = (u − l) + (2/α)(l − y)₊ + (2/α)(y − u)₊                      (Gneiting & Raftery 2007, eq. 43),

and split it into three non-negative parts that add up to it exactly:

    dispersion      = Σ_k (α_k/2)(u_k − l_k) / (K + ½)
    overprediction  = [½ (m − y)₊ + Σ_k (l_k − y)₊] / (K + ½)      (the forecast too high: y below the interval)
    underprediction = [½ (y − m)₊ + Σ_k (y − u_k)₊] / (K + ½)      (the forecast too low: y above it)

((α_k/2)·(2/α_k) = 1: a miss costs its distance whatever the level).  With ρ_τ(e) = e (τ − 1[e < 0]) the pinball
loss, (α/2) IS_α = ρ_{α/2}(y − l) + ρ_{1−α/2}(y − u) and ½|y − m| = ρ_½(y − m), so
WIS = 1/(K + ½) · Σ over the 2K + 1 quantiles of ρ_τ(y − q_τ) — twice the mean quantile score of the 2K + 1
quantiles, a proper score for them (and an approximation of the CRPS as K grows).

Which quantiles are used:

* a :class:`~calib_core.base.regression.QuantileSet` — its stated central pairs (τ, 1 − τ), both levels stated, α =
  2τ, and its stated median (level ½).  A stated level without its partner is not used (:attr:`WisParts.unpaired`).
  No median stated: the WIS of the K intervals alone, 1/K · Σ_k (α_k/2) IS_{α_k}, the parts likewise over K (the
  "no median" variant; :attr:`WisParts.median` is False);
* any other distribution (Gaussian, ensemble, recalibrated) — the 23 levels the US forecast hubs ask for,
  :data:`HUB_LEVELS` = 0.01, 0.025, 0.05, 0.1, 0.15, …, 0.9, 0.95, 0.975, 0.99 (11 intervals and the median), from
  the distribution's own quantile function.

:func:`central_coverages` gives the coverage indicator 1[l ≤ y ≤ u] (inclusive ends) of the same central
intervals, keyed ``coverage_<100(1 − α):g>`` like the metric table.  Everything is per row (no loop over rows), so
groups — by model, horizon, date, location — are plain group means of the arrays.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..base.regression import Gaussian, PredictiveDistribution, QuantileSet, norm_ppf
from .regression_rows import DEFAULT_COVERAGES

__all__ = ["HUB_LEVELS", "WIS_PARTS", "WisParts", "wis_parts", "central_coverages", "wis_score",
           "central_pairs", "wis_statistics", "stated_rows", "gaussian_expected_wis"]


#: The 23 quantile levels of the US COVID-19 and influenza forecast hubs (11 central intervals and the median)
HUB_LEVELS = np.array([0.01, 0.025, *np.round(np.arange(1, 20) * 0.05, 10).tolist(), 0.975, 0.99])

#: The metric keys of the WIS and its parts, in the order of :meth:`WisParts.columns`
WIS_PARTS = ("wis", "wis_dispersion", "wis_overprediction", "wis_underprediction")

_TOL = 1e-9
_CHUNK = 131_072  # rows of quantiles made at once (distributions other than quantile sets)
_CACHE_ROWS = 8_192  # rows per arithmetic pass: 23 levels × 8,192 rows stay in the CPU cache (4× faster at 10⁶)


@dataclass(frozen=True)
class WisParts:
    """The WIS of every row and its three parts (:func:`wis_parts`); ``wis = dispersion + overprediction +
    underprediction`` exactly.

    Attributes
    ----------
    wis, dispersion, overprediction, underprediction : ndarray of shape (N,)
        Per row.
    alphas : ndarray of shape (K,)
        α_k of the central intervals used (interval k: levels α_k/2 and 1 − α_k/2), widest first.
    median : bool
        Whether the median entered (weight ½, normaliser K + ½); False: the "no median" variant (normaliser K).
    levels : ndarray
        Every quantile level used, increasing.
    stated : bool
        True: the quantile set's own stated quantiles; False: :data:`HUB_LEVELS` from the quantile function.
    unpaired : ndarray
        Stated levels left out (no partner 1 − τ stated; never the median).
    note : str
        What was used, in words.

    References
    ----------
    .. [1] Bracher, J., Ray, E. L., Gneiting, T. & Reich, N. G. (2021). Evaluating epidemic forecasts in an interval
       format. *PLOS Computational Biology* 17(2), e1008618.

    Examples
    --------
    >>> p = wis_parts(np.array([3.0]), QuantileSet([0.25, 0.5, 0.75], np.array([[0.0, 1.0, 2.0]])))
    >>> p.columns()["wis"].round(4).tolist(), p.alphas.tolist(), p.median
    ([1.6667], [0.5], True)
    """

    wis: np.ndarray
    dispersion: np.ndarray
    overprediction: np.ndarray
    underprediction: np.ndarray
    alphas: np.ndarray
    median: bool
    levels: np.ndarray
    stated: bool
    unpaired: np.ndarray
    note: str

    def __len__(self) -> int:
        return int(self.wis.shape[0])

    def columns(self) -> dict[str, np.ndarray]:
        """The four arrays under their metric keys (:data:`WIS_PARTS`): ``wis``, ``wis_dispersion``,
        ``wis_overprediction``, ``wis_underprediction`` — ready for ``pandas.DataFrame(...).groupby(...)``."""
        return dict(zip(WIS_PARTS, (self.wis, self.dispersion, self.overprediction, self.underprediction)))

    def means(self, weights: np.ndarray | None = None) -> dict[str, float]:
        """The (weighted) mean of each array under its metric key: the WIS of the rows and its parts."""
        return {k: float(np.mean(v)) if weights is None else float(np.dot(v, weights) / np.sum(weights))
                for k, v in self.columns().items()}


def central_pairs(levels: np.ndarray) -> tuple[np.ndarray, np.ndarray, int | None, np.ndarray]:
    """The central pairs of a set of quantile levels: every τ < ½ whose partner 1 − τ is also a level.

    Interval k has α_k = 2τ_k and coverage 1 − α_k; pairs are matched to 1e-9.

    Parameters
    ----------
    levels : ndarray of shape (Q,)
        Quantile levels, increasing.

    Returns
    -------
    lower, upper : ndarray of int of shape (K,)
        Column of τ_k and of 1 − τ_k, widest interval first.
    median : int or None
        Column of the level ½, or None.
    unpaired : ndarray of int
        Columns of the levels in no pair (other than ½).

    References
    ----------
    .. [1] Bracher, J., Ray, E. L., Gneiting, T. & Reich, N. G. (2021). Evaluating epidemic forecasts in an interval
       format. *PLOS Computational Biology* 17(2), e1008618.

    Examples
    --------
    >>> lo, hi, med, alone = central_pairs(np.array([0.05, 0.25, 0.5, 0.7, 0.95]))
    >>> lo.tolist(), hi.tolist(), med, alone.tolist()
    ([0], [4], 2, [1, 3])
    """
    tau = np.asarray(levels, dtype=float)
    partner = np.abs((1.0 - tau)[:, None] - tau[None, :])  # |(1 − τ_i) − τ_j|
    j = partner.argmin(axis=1)
    paired = partner[np.arange(tau.size), j] < _TOL
    is_median = np.abs(tau - 0.5) < _TOL
    lower = np.flatnonzero(paired & (tau < 0.5) & ~is_median)
    median = np.flatnonzero(is_median)
    alone = np.flatnonzero(~paired & ~is_median)
    return lower, j[lower], (int(median[0]) if median.size else None), alone


def _wis_block(y: np.ndarray, q: np.ndarray, lo_i: np.ndarray, hi_i: np.ndarray, med_i: int | None,
               alphas: np.ndarray, out: np.ndarray) -> None:
    """(dispersion, overprediction, underprediction) of one block into ``out`` (3, n), in sub-blocks of
    :data:`_CACHE_ROWS` rows (the temporaries stay in the CPU cache).  Each row's sums run over the intervals in one
    fixed order, so a row's value never depends on the rows around it (a summary's sums must not depend on where
    its chunks were cut; a BLAS product's rounding would)."""
    denom = alphas.size + 0.5 if med_i is not None else float(alphas.size)
    for s in range(0, y.shape[0], _CACHE_ROWS):
        e = min(y.shape[0], s + _CACHE_ROWS)
        qt, yy = np.ascontiguousarray(q[s:e].T), y[s:e]  # one level per row: contiguous columns
        disp, over, under, tmp = (np.zeros(e - s) for _ in range(4))
        for k, (i, j) in enumerate(zip(lo_i, hi_i)):
            np.subtract(qt[j], qt[i], out=tmp)
            tmp *= alphas[k] / 2.0
            disp += tmp  # (α_k/2)(u_k − l_k)
            np.subtract(qt[i], yy, out=tmp)
            np.maximum(tmp, 0.0, out=tmp)
            over += tmp  # (l_k − y)₊
            np.subtract(yy, qt[j], out=tmp)
            np.maximum(tmp, 0.0, out=tmp)
            under += tmp  # (y − u_k)₊
        if med_i is not None:
            np.subtract(qt[med_i], yy, out=tmp)
            over += 0.5 * np.maximum(tmp, 0.0)
            under += 0.5 * np.maximum(-tmp, 0.0)
        out[0, s:e] = disp / denom
        out[1, s:e] = over / denom
        out[2, s:e] = under / denom


def _quantile_chunks(dist: PredictiveDistribution, levels: np.ndarray, n: int):
    """(start, stop, quantiles (rows, L)) of ``dist`` at ``levels``, in blocks of rows."""
    if isinstance(dist, QuantileSet):
        yield 0, n, dist.values
        return
    if isinstance(dist, Gaussian):  # μ + σ Φ⁻¹(τ), made in cache-sized blocks
        z = norm_ppf(levels)
        mu, sd = dist.mean(), dist.std()
        for s in range(0, n, _CACHE_ROWS):
            e = min(n, s + _CACHE_ROWS)
            yield s, e, mu[s:e, None] + sd[s:e, None] * z[None, :]
        return
    if n <= _CHUNK:
        yield 0, n, np.asarray(dist.ppf(levels[None, :]), dtype=float)
        return
    for s in range(0, n, _CHUNK):
        e = min(n, s + _CHUNK)
        yield s, e, np.asarray(dist.take(np.arange(s, e)).ppf(levels[None, :]), dtype=float)


def _quantile_wis(y: np.ndarray, dist: PredictiveDistribution, levels: np.ndarray, lo_i: np.ndarray,
                  hi_i: np.ndarray, med_i: int | None, alphas: np.ndarray) -> np.ndarray:
    """(dispersion, overprediction, underprediction) of every row, shape (3, N), from the quantiles themselves."""
    n = y.shape[0]
    parts = np.empty((3, n))
    for s, e, q in _quantile_chunks(dist, levels, n):
        _wis_block(y[s:e], q, lo_i, hi_i, med_i, alphas, parts[:, s:e])
    return parts


def _positions(cut: np.ndarray, z: np.ndarray) -> np.ndarray:
    """``np.searchsorted(cut, z, side="right")`` (#{cut ≤ z}) of a short increasing ``cut``, by a bucket table:
    z is put in buckets of width w below the smallest gap of ``cut`` (at most one cut per bucket), the bucket gives
    the count below it and its one cut, and one comparison finishes — a few flat passes instead of a binary search
    per value (4× faster at 10⁶).  The buckets are placed so that no cut is within 10⁻⁶ w of a bucket edge (a z
    rounded into the neighbouring bucket then still counts right); where that fails, or for NaN (counted as
    ``searchsorted`` does: above every cut), ``np.searchsorted`` itself."""
    gaps = np.diff(cut)
    if (cut.size < 2 or not np.isfinite(cut).all() or not gaps.min() > 1e-100 * max(1.0, np.abs(cut).max())
            or (cut[-1] - cut[0]) > 1024 * gaps.min()):  # a table of at most ~2,000 buckets
        return np.searchsorted(cut, z, side="right")
    w = 2.0 ** np.floor(np.log2(gaps.min() / 2.0))  # a power of two: exact bucket arithmetic on the cuts
    lo = np.floor(cut[0] / w) * w - 1.5 * w
    n_buckets = int(np.ceil((cut[-1] - lo) / w)) + 2
    frac = (cut - lo) / w - np.floor((cut - lo) / w)
    if n_buckets > 4096 or (np.minimum(frac, 1.0 - frac) < 1e-6).any():
        return np.searchsorted(cut, z, side="right")
    edges = lo + w * np.arange(n_buckets + 1)
    below = np.searchsorted(cut, edges[:-1], side="left")  # cuts below each bucket's left edge
    inside = np.full(n_buckets, np.nan)  # no cut: z >= NaN is False, even for z = inf
    b_of_cut = np.floor((cut - lo) / w).astype(np.intp)
    inside[b_of_cut] = cut
    top = lo + w * n_buckets - 0.5 * w  # inside the last bucket, above every cut
    b = np.fmin(np.fmax(z, lo), top)  # NaN → lo, fixed below
    b -= lo
    b *= 1.0 / w
    idx = b.astype(np.intp)
    pos = np.take(below, idx, mode="clip")  # idx is in range: "clip" skips the bounds checks (3× faster)
    pos += z >= np.take(inside, idx, mode="clip")
    nan = np.isnan(z)
    if nan.any():
        pos[nan] = cut.size
    return pos


def gaussian_wis_tables(levels: np.ndarray, lo_i: np.ndarray, hi_i: np.ndarray, med_i: int | None,
                        alphas: np.ndarray) -> tuple | None:
    """The lookup tables of the closed-form Gaussian WIS (:func:`_gaussian_wis`): the sorted standard-normal levels
    ``cut``, per position p = #{z_τ ≤ z} the sum and count of the lower ends above z (S_lo, C_lo) and of the upper
    ends below z (C_hi, S_hi), the dispersion factor Σ_k (α_k/2)(z_hi,k − z_lo,k) and the denominator K + ½ (K
    without a median); None when the median level is not at z = 0 (then the quantiles themselves are scored).

    Parameters
    ----------
    levels : ndarray
        The quantile levels.
    lo_i, hi_i : ndarray of int
        Indices of the central pairs' lower and upper levels.
    med_i : int or None
        Index of the median level.
    alphas : ndarray
        α_k of the pairs.

    Returns
    -------
    tuple or None
        ``(cut, s_lo, c_lo, c_hi, s_hi, disp_factor, denom)``.

    References
    ----------
    .. [1] Bracher, J., Ray, E. L., Gneiting, T. & Reich, N. G. (2021). Evaluating epidemic forecasts in an interval
       format. *PLOS Computational Biology* 17(2), e1008618.
    """
    zq = norm_ppf(levels)
    if med_i is not None and zq[med_i] != 0.0:
        return None
    denom = alphas.size + 0.5 if med_i is not None else float(alphas.size)
    z_lo, z_hi = zq[lo_i], zq[hi_i]
    # where z falls among the levels: position p = #{z_τ ≤ z} (0 … L); a lower end z_lo,k counts when z_lo,k > z,
    # an upper end when z_hi,k < z (a level equal to z adds 0 either way)
    cut = np.sort(zq)
    p_lo = np.searchsorted(cut, z_lo, side="right")  # a lower end z_lo,k counts for positions p < p_lo[k]
    p_hi = np.searchsorted(cut, z_hi, side="left")  # an upper end counts for positions p > p_hi[k]
    pos = np.arange(cut.size + 1)[:, None]
    above = pos < p_lo[None, :]
    below = pos > p_hi[None, :]
    c_lo, s_lo = above.sum(axis=1).astype(float), np.where(above, z_lo[None, :], 0.0).sum(axis=1)
    c_hi, s_hi = below.sum(axis=1).astype(float), np.where(below, z_hi[None, :], 0.0).sum(axis=1)
    disp_factor = float(np.sum(alphas / 2.0 * (z_hi - z_lo)))
    return cut, s_lo, c_lo, c_hi, s_hi, disp_factor, denom


def hub_wis_setup() -> tuple:
    """``(levels, lo_i, hi_i, med_i, alphas)`` of the 23 :data:`HUB_LEVELS` (the WIS of a non-quantile forecast).

    Returns
    -------
    tuple
        The levels, the central pairs' indices, the median's index and the α's.

    References
    ----------
    .. [1] Bracher, J., Ray, E. L., Gneiting, T. & Reich, N. G. (2021). Evaluating epidemic forecasts in an interval
       format. *PLOS Computational Biology* 17(2), e1008618.
    """
    levels = np.asarray(HUB_LEVELS, dtype=float)
    lo_i, hi_i, med_i, _ = central_pairs(levels)
    return levels, lo_i, hi_i, med_i, 2.0 * levels[lo_i]


def _gaussian_wis(y: np.ndarray, dist: Gaussian, levels: np.ndarray, lo_i: np.ndarray, hi_i: np.ndarray,
                  med_i: int | None, alphas: np.ndarray) -> np.ndarray:
    """The parts of a Gaussian N(μ, σ²) and their sum, shape (4, N), in a handful of passes instead of one per
    quantile.

    With q_τ = μ + σ z_τ (z_τ = Φ⁻¹(τ)), ε = y − μ and z = ε/σ, the sums over the K intervals are piecewise linear in
    z: (l_k − y)₊ > 0 exactly for the lower ends z_lo,k above z, (y − u_k)₊ > 0 for the upper ends below it, so

        Σ_k (l_k − y)₊ = σ · S_lo(z) − ε · C_lo(z),   Σ_k (y − u_k)₊ = ε · C_hi(z) − σ · S_hi(z),
        Σ_k (α_k/2)(u_k − l_k) = σ · Σ_k (α_k/2)(z_hi,k − z_lo,k),

    with C, S the count and the sum of those ends, looked up by one ``searchsorted`` of z among the 2K + 1 levels.
    The same numbers as :func:`_quantile_wis` up to rounding (the old sums lose ~|μ|·2⁻⁵² per quantile to
    μ + σ z_τ; these do not).  Rows whose parts are not finite (infinite y, μ or σ, overflow) are taken from
    :func:`_quantile_wis`, term by term as before."""
    tables = gaussian_wis_tables(levels, lo_i, hi_i, med_i, alphas)
    if tables is None:  # not the hub levels' median: the quantiles themselves
        return _quantile_wis(y, dist, levels, lo_i, hi_i, med_i, alphas)
    cut, s_lo, c_lo, c_hi, s_hi, disp_factor, denom = tables
    mu, sd = np.asarray(dist.mean(), dtype=float), np.asarray(dist.std(), dtype=float)
    n = y.shape[0]
    out = np.empty((4, n))  # dispersion, overprediction, underprediction, WIS
    disp, over, under, total = out
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        eps = y - mu
        tmp = np.divide(eps, sd)  # z, then a scratch row
        p = _positions(cut, tmp)  # σ = 0: z = ±∞ (or NaN for ε = 0, where every term is 0 anyway)
        np.multiply(sd, disp_factor / denom, out=disp)
        np.take(s_lo, p, mode="clip", out=over)
        over *= sd
        np.take(c_lo, p, mode="clip", out=tmp)
        tmp *= eps
        over -= tmp
        np.take(c_hi, p, mode="clip", out=under)
        under *= eps
        np.take(s_hi, p, mode="clip", out=tmp)
        tmp *= sd
        under -= tmp
        if med_i is not None:  # ½ (m − y)₊ and ½ (y − m)₊ with m = μ + σ·Φ⁻¹(½) = μ
            np.multiply(eps, 0.5, out=tmp)
            np.minimum(tmp, 0.0, out=total)
            over -= total
            np.maximum(tmp, 0.0, out=tmp)
            under += tmp
        over /= denom
        under /= denom
        np.add(disp, over, out=total)
        total += under
        bad = ~np.isfinite(total)  # the parts are ≥ 0: a non-finite part makes the total non-finite
    if bad.any():  # infinite targets or σ, overflowing quantiles: the quantiles themselves, as before
        rows = np.flatnonzero(bad)
        out[:3, rows] = _quantile_wis(y[rows], dist.take(rows), levels, lo_i, hi_i, med_i, alphas)
        out[3, rows] = out[0, rows] + out[1, rows] + out[2, rows]
    return out


def wis_parts(y: Any, dist: PredictiveDistribution) -> WisParts:
    """The weighted interval score of every row and its dispersion / over- / underprediction parts.

    WIS = 1/(K + ½) · (½|y − m| + Σ_k (α_k/2) IS_{α_k}), IS_α = (u − l) + (2/α)(l − y)₊ + (2/α)(y − u)₊;
    dispersion = Σ_k (α_k/2)(u_k − l_k)/(K + ½); overprediction = [½(m − y)₊ + Σ_k (l_k − y)₊]/(K + ½);
    underprediction = [½(y − m)₊ + Σ_k (y − u_k)₊]/(K + ½); WIS = their sum.  Equivalently
    WIS = 1/(K + ½) · Σ_{2K+1 quantiles} ρ_τ(y − q_τ).  Quantile sets: the stated central pairs and the stated
    median (no median: 1/K · Σ_k (α_k/2) IS_{α_k}); other distributions: the 23 :data:`HUB_LEVELS` from their
    quantile function.

    Parameters
    ----------
    y : array_like of shape (N,)
        Targets.
    dist : PredictiveDistribution
        The N forecasts.

    Returns
    -------
    WisParts
        Per-row arrays, the α's, whether the median entered, the levels used and a note.

    Raises
    ------
    ValueError
        When a quantile set states neither a median nor any central pair (nothing to score).

    References
    ----------
    .. [1] Bracher, J., Ray, E. L., Gneiting, T. & Reich, N. G. (2021). Evaluating epidemic forecasts in an interval
       format. *PLOS Computational Biology* 17(2), e1008618.
    .. [2] Gneiting, T. & Raftery, A. E. (2007). Strictly proper scoring rules, prediction, and estimation.
       *Journal of the American Statistical Association* 102(477), 359–378.

    Examples
    --------
    >>> d = QuantileSet([0.1, 0.5, 0.9], np.array([[0.0, 1.0, 2.0], [0.0, 1.0, 2.0]]))
    >>> p = wis_parts(np.array([1.0, 4.0]), d)
    >>> p.wis.round(4).tolist(), p.dispersion.round(4).tolist(), p.underprediction.round(4).tolist()
    ([0.1333, 2.4667], [0.1333, 0.1333], [0.0, 2.3333])
    """
    y = np.asarray(y, dtype=float).ravel()
    n = y.shape[0]
    if len(dist) != n:
        raise ValueError(f"y has {n} rows but the forecasts have {len(dist)}")
    stated = isinstance(dist, QuantileSet)
    levels = np.asarray(dist.levels if stated else HUB_LEVELS, dtype=float)
    lo_i, hi_i, med_i, alone = central_pairs(levels)
    if lo_i.size == 0 and med_i is None:
        raise ValueError("no weighted interval score: the quantile set states neither a median (level 0.5) nor a "
                         "central interval (levels τ and 1 − τ)")
    alphas = 2.0 * levels[lo_i]
    if isinstance(dist, Gaussian):
        parts = _gaussian_wis(y, dist, levels, lo_i, hi_i, med_i, alphas)
    else:
        parts = _quantile_wis(y, dist, levels, lo_i, hi_i, med_i, alphas)
    disp, over, under = parts[:3]
    total = parts[3] if parts.shape[0] == 4 else disp + over + under
    used = np.sort(np.concatenate([levels[lo_i], levels[hi_i], levels[[med_i]] if med_i is not None else []]))
    return WisParts(wis=total, dispersion=disp, overprediction=over, underprediction=under,
                    alphas=alphas, median=med_i is not None, levels=used, stated=stated,
                    unpaired=levels[alone], note=_note(stated, alphas.size, med_i is not None, levels[alone]))


def _note(stated: bool, k: int, median: bool, alone: np.ndarray) -> str:
    if not stated:
        return (f"WIS at the 23 forecast-hub levels 0.01 … 0.99 ({k} central intervals and the median) from the "
                "distribution's own quantile function")
    parts = [f"WIS over the {k} stated central interval(s)" + (" and the stated median" if median else "")]
    if not median:
        parts.append("no median stated: the 'no median' variant, 1/K · Σ (α/2)·IS_α")
    if alone.size:
        parts.append("stated level(s) without a partner 1 − τ not used: " + ", ".join(f"{t:g}" for t in alone))
    return "; ".join(parts)


def central_coverages(y: Any, dist: PredictiveDistribution) -> dict[str, np.ndarray]:
    """Whether each target lies in each central interval, ends included: 1[q_τ ≤ y ≤ q_{1−τ}].

    Quantile sets: every stated central pair (τ, 1 − τ); other distributions: the 11 central intervals of
    :data:`HUB_LEVELS` from their quantile function.  Key ``coverage_<100(1 − 2τ):g>`` (``coverage_90`` for
    τ = 0.05), narrowest interval first; the mean of an array is the interval's empirical coverage.

    Parameters
    ----------
    y : array_like of shape (N,)
        Targets.
    dist : PredictiveDistribution
        The N forecasts.

    Returns
    -------
    dict of str to ndarray of bool of shape (N,)
        One indicator array per central interval ({} when a quantile set states no central pair).

    References
    ----------
    .. [1] Bracher, J., Ray, E. L., Gneiting, T. & Reich, N. G. (2021). Evaluating epidemic forecasts in an interval
       format. *PLOS Computational Biology* 17(2), e1008618.
    .. [2] Gneiting, T., Balabdaoui, F. & Raftery, A. E. (2007). Probabilistic forecasts, calibration and sharpness.
       *Journal of the Royal Statistical Society B* 69(2), 243–268.

    Examples
    --------
    >>> d = QuantileSet([0.05, 0.25, 0.5, 0.75, 0.95], np.array([[0.0, 1.0, 2.0, 3.0, 4.0]] * 2))
    >>> {k: v.tolist() for k, v in central_coverages(np.array([1.0, 3.5]), d).items()}
    {'coverage_50': [True, False], 'coverage_90': [True, True]}
    """
    y = np.asarray(y, dtype=float).ravel()
    n = y.shape[0]
    if len(dist) != n:
        raise ValueError(f"y has {n} rows but the forecasts have {len(dist)}")
    levels = np.asarray(dist.levels if isinstance(dist, QuantileSet) else HUB_LEVELS, dtype=float)
    lo_i, hi_i, _, _ = central_pairs(levels)
    order = np.argsort(-levels[lo_i], kind="stable")  # narrowest (largest τ) first
    lo_i, hi_i = lo_i[order], hi_i[order]
    out = np.empty((lo_i.size, n), dtype=bool)
    for s, e, q in _quantile_chunks(dist, levels, n):
        for a in range(0, e - s, _CACHE_ROWS):
            b = min(e - s, a + _CACHE_ROWS)
            qq, yy = q[a:b], y[s + a:s + b, None]
            out[:, s + a:s + b] = ((qq[:, lo_i] <= yy) & (yy <= qq[:, hi_i])).T
    return {f"coverage_{100 * (1 - 2 * levels[i]):g}": out[k] for k, i in enumerate(lo_i)}


def wis_score(y: Any, dist: PredictiveDistribution, *, part: str = "wis") -> float:
    """The mean over rows of the WIS or of one of its parts (:func:`wis_parts`).

    mean_i WIS_i, WIS_i = 1/(K + ½) · (½|y_i − m_i| + Σ_k (α_k/2) IS_{α_k, i}); ``part`` one of
    :data:`WIS_PARTS` (``"wis"``, ``"wis_dispersion"``, ``"wis_overprediction"``, ``"wis_underprediction"``).

    Parameters
    ----------
    y : array_like of shape (N,)
        Targets.
    dist : PredictiveDistribution
        The N forecasts.
    part : str, default "wis"
        Which array to average.

    Returns
    -------
    float
        The mean.

    References
    ----------
    .. [1] Bracher, J., Ray, E. L., Gneiting, T. & Reich, N. G. (2021). Evaluating epidemic forecasts in an interval
       format. *PLOS Computational Biology* 17(2), e1008618.

    Examples
    --------
    >>> d = QuantileSet([0.25, 0.5, 0.75], np.array([[0.0, 1.0, 2.0]]))
    >>> round(wis_score(np.array([3.0]), d), 4), round(wis_score(np.array([3.0]), d, part="wis_dispersion"), 4)
    (1.6667, 0.3333)
    """
    if part not in WIS_PARTS:
        raise ValueError(f"part must be one of {WIS_PARTS}, got {part!r}")
    return float(np.mean(wis_parts(y, dist).columns()[part]))


def wis_statistics(rows: Any, weights: np.ndarray | None = None, coverages=DEFAULT_COVERAGES) -> dict[str, float]:
    """The WIS rows of the metric table: the (weighted) means of :data:`WIS_PARTS`, and for a quantile set the
    coverage of every stated central interval that ``coverages`` does not hold already.

    mean_i WIS_i and its parts (:func:`wis_parts`; nothing when a quantile set states neither a median nor a central
    pair); ``coverage_<c>`` = mean_i 1[q_τ ≤ y_i ≤ q_{1−τ}] for the other stated pairs (:func:`central_coverages`).
    The per-row arrays are cached on ``rows`` (the bootstrap sums them per block).

    Parameters
    ----------
    rows : RegressionRows
        The rows (``y``, ``dist``).
    weights : ndarray of shape (N,), optional
        Row weights of a bootstrap replicate; None: the data.
    coverages : sequence of float, default DEFAULT_COVERAGES
        The central intervals the metric table reports already.

    Returns
    -------
    dict of str to float
        ``wis``, ``wis_dispersion``, ``wis_overprediction``, ``wis_underprediction`` and the extra coverages.

    References
    ----------
    .. [1] Bracher, J., Ray, E. L., Gneiting, T. & Reich, N. G. (2021). Evaluating epidemic forecasts in an interval
       format. *PLOS Computational Biology* 17(2), e1008618.

    Examples
    --------
    >>> from calib_core.metrics.regression_rows import RegressionRows
    >>> d = QuantileSet([0.2, 0.25, 0.5, 0.75, 0.8], np.array([[0.0, 1.0, 2.0, 3.0, 4.0]] * 2))
    >>> s = wis_statistics(RegressionRows(np.array([1.0, 3.5]), d))
    >>> sorted(s), s["coverage_60"]
    (['coverage_60', 'wis', 'wis_dispersion', 'wis_overprediction', 'wis_underprediction'], 1.0)
    """
    fused = rows.__dict__.get("_fused") if weights is None else None
    if fused is not None and fused["wis"]:  # the compiled pass's sums: np.mean of the same rows, bit for bit
        return {k: fused["sums"][k] / rows.n for k in WIS_PARTS}
    parts, extra = stated_rows(rows, coverages)
    out = {} if parts is None else parts.means(weights)
    for key, inside in extra.items():
        out[key] = float(np.mean(inside)) if weights is None else float(np.dot(inside, weights) / np.sum(weights))
    return out


def stated_rows(rows: Any, coverages=DEFAULT_COVERAGES) -> tuple[WisParts | None, dict[str, np.ndarray]]:
    """The cached per-row arrays behind :func:`wis_statistics`: the :class:`WisParts` (None when nothing can be
    scored) and the coverage indicators of the stated central intervals outside ``coverages`` (quantile sets).

    Parameters
    ----------
    rows : RegressionRows
        The rows.
    coverages : sequence of float, default DEFAULT_COVERAGES
        The central intervals the metric table reports already.

    Returns
    -------
    (WisParts or None, dict of str to ndarray of bool)
        Per-row WIS parts and extra coverage indicators.

    References
    ----------
    .. [1] Bracher, J., Ray, E. L., Gneiting, T. & Reich, N. G. (2021). Evaluating epidemic forecasts in an interval
       format. *PLOS Computational Biology* 17(2), e1008618.
    """
    cache = rows.__dict__
    if "_wis_parts" not in cache:
        try:
            cache["_wis_parts"] = wis_parts(rows.y, rows.dist)
        except ValueError:
            cache["_wis_parts"] = None
    known = {f"coverage_{100 * c:g}" for c in coverages}
    key = ("_stated_coverages", tuple(sorted(known)))
    if key not in cache:
        found = central_coverages(rows.y, rows.dist) if isinstance(rows.dist, QuantileSet) else {}
        cache[key] = {k: v for k, v in found.items() if k not in known}
    return cache["_wis_parts"], cache[key]


def gaussian_expected_wis(sigma: Any) -> np.ndarray:
    """E WIS of a Gaussian forecast N(μ, σ²) when y is drawn from it (at the :data:`HUB_LEVELS`, median included).

    E ρ_τ(y − q_τ) = σ φ(Φ⁻¹(τ)) for y ~ N(μ, σ²) and q_τ = μ + σΦ⁻¹(τ), so
    E WIS = σ · Σ_τ φ(Φ⁻¹(τ)) / (K + ½) over the 2K + 1 = 23 levels (≈ 0.5034 σ; the CRPS is σ/√π ≈ 0.5642 σ).

    Parameters
    ----------
    sigma : array_like
        Predictive standard deviations.

    Returns
    -------
    ndarray
        The expectation per row.

    References
    ----------
    .. [1] Bracher, J., Ray, E. L., Gneiting, T. & Reich, N. G. (2021). Evaluating epidemic forecasts in an interval
       format. *PLOS Computational Biology* 17(2), e1008618.
    .. [2] Gneiting, T. & Raftery, A. E. (2007). Strictly proper scoring rules, prediction, and estimation.
       *Journal of the American Statistical Association* 102(477), 359–378.

    Examples
    --------
    >>> round(float(gaussian_expected_wis(1.0)), 4)
    0.5034
    """
    z = norm_ppf(HUB_LEVELS)
    factor = float(np.sum(np.exp(-0.5 * z * z)) / np.sqrt(2.0 * np.pi)) / (HUB_LEVELS.size // 2 + 0.5)
    return np.asarray(sigma, dtype=float) * factor
