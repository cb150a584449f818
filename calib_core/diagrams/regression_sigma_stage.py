"""What a diagnosis redone at other σ-bins reuses of its rows: the σ-bins from the rows' σ order, and the Levi
table's bootstrap design drawn once.

A change of the σ-bins count or binning on a page redoes ENCE, its test and the Levi table from the bins-free stage
(:class:`calib_core.diagnosis.regression.SubsetStage`).  Two parts of that did not depend on the new bins and were
redone anyway:

* **equal-width σ-bins** were found by comparing every row's σ with the edges (``equal_width_bins``: a binary search
  per row).  σ-bins are runs of the rows in σ order (:func:`~calib_core.diagrams.regression_sigma_prefix.
  sigma_bin_bounds`), so the bin of every row follows from B + 1 boundaries: one binary search per edge in the sorted
  σ and one pass writing each run's bin (:func:`prime_sigma_bins`); the bin indices are the same integers.
* **the Levi table's random blocks and bootstrap weights** were drawn again from the seed on every call (the same
  draws each time: 256 blocks of the rows, 1,000 × 256 multinomial counts); :func:`levi_design` draws them once per
  (N, replicates, seed) and :func:`levi_table_from_design` computes the table from them.

Every sum is still added in row order, as the fresh diagnosis adds it: the tables and values are the same to the
last bit (``tests/diagrams/test_regression_sigma_stage.py``).
"""

from __future__ import annotations

import warnings
from functools import lru_cache
from typing import NamedTuple

import numpy as np
import pandas as pd

from ..base.significance import block_bootstrap_weights, block_ids, nan_quantiles
from ..metrics.regression import RegressionRows
from .regression_sigma_prefix import SigmaPrefix, sigma_bin_bounds

__all__ = ["prime_sigma_bins", "bins_from_bounds", "LeviDesign", "levi_design", "levi_table_from_design",
           "LEVI_BLOCKS", "LEVI_DESIGN_MEMO"]

#: Random row blocks of the Levi table's bootstrap (``levi_bins_table``'s default, which the diagnosis uses)
LEVI_BLOCKS = 256


def bins_from_bounds(order: np.ndarray, bounds: np.ndarray) -> np.ndarray:
    """The bin of every row from the runs of a sort order: row ``order[p]`` is in bin k for s_k ≤ p < s_{k+1}.

    Parameters
    ----------
    order : ndarray of int, shape (N,)
        A sort order of the rows (here: stable σ order).
    bounds : ndarray of int, shape (B + 1,)
        Run boundaries s_0 = 0 ≤ … ≤ s_B = N.

    Returns
    -------
    ndarray of int64, shape (N,)
        The bin of every row.

    References
    ----------
    .. [1] Levi, D., Gispan, L., Giladi, N. & Fetaya, E. (2019). Evaluating and calibrating uncertainty prediction
       in regression tasks. *arXiv:1905.11659*.

    Examples
    --------
    >>> bins_from_bounds(np.array([2, 0, 1, 3]), np.array([0, 1, 3, 4])).tolist()
    [1, 1, 0, 2]
    """
    out = np.empty(order.shape[0], dtype=np.int64)
    out[order] = np.repeat(np.arange(bounds.shape[0] - 1, dtype=np.int64), np.diff(bounds))
    return out


def prime_sigma_bins(rows: RegressionRows, n_bins: int, binning: str) -> None:
    """Put the equal-width σ-bins of ``rows`` into their bin cache from their σ order, so that
    ``rows.sigma_bins(n_bins, "width")`` (ENCE, its test, the Levi table) finds them: the same integers as
    ``equal_width_bins(σ, B, closed="left")`` — row i is in bin k when e_k ≤ σ_i < e_{k+1} (the last bin closed),
    i.e. at sorted positions s_k = #{σ < e_k} ≤ p < s_{k+1} — from B − 1 binary searches of the sorted σ instead
    of one per row.  Equal-count bins (already made from the σ order in one compiled pass), other binnings and σ
    that are not all finite are left to ``rows`` itself.

    Parameters
    ----------
    rows : RegressionRows
        The rows (their cache is filled).
    n_bins : int
        B.
    binning : str
        "count" or "width".

    Returns
    -------
    None

    References
    ----------
    .. [1] Levi, D., Gispan, L., Giladi, N. & Fetaya, E. (2019). Evaluating and calibrating uncertainty prediction
       in regression tasks. *arXiv:1905.11659*.

    Examples
    --------
    >>> import calib_core as cc
    >>> r = RegressionRows(np.zeros(4), cc.Gaussian(np.zeros(4), np.array([1.0, 4.0, 2.0, 3.0])))
    >>> prime_sigma_bins(r, 2, "width")
    >>> r.sigma_bins(2, "width").tolist()
    [0, 1, 0, 1]
    """
    nb = int(n_bins)
    if binning != "width" or nb < 1 or rows.n == 0:
        return
    cache = rows.__dict__.setdefault("_bin_cache", {})
    if ("width", nb) in cache:
        return
    sigma_sorted = rows.sigma_sorted
    if not (np.isfinite(sigma_sorted[0]) and np.isfinite(sigma_sorted[-1])):
        return
    prefix = SigmaPrefix(sigma=sigma_sorted, var=sigma_sorted, sq_err=sigma_sorted)  # only σ is read
    cache[("width", nb)] = bins_from_bounds(rows.sigma_order, sigma_bin_bounds(prefix, nb, "width"))


class LeviDesign(NamedTuple):
    """The Levi table's bootstrap design of N rows: what ``levi_bins_table(rows, n_resamples=R, seed=s)`` draws.

    Attributes
    ----------
    ids : ndarray of int, shape (N,)
        The random block of every row (read-only; 16-bit when G < 2¹⁶).
    n_blocks : int
        G.
    weights : ndarray of shape (R, G)
        Multinomial block counts of each replicate (read-only; 16-bit integers when G < 2¹⁶: each count is at
        most G, exact as a double again).
    key : tuple
        (N, R, seed, blocks) it was drawn for.

    References
    ----------
    .. [1] Efron, B. & Tibshirani, R. J. (1993). *An Introduction to the Bootstrap*. Chapman & Hall.
    """

    ids: np.ndarray
    n_blocks: int
    weights: np.ndarray
    key: tuple


#: :func:`levi_design` keeps the designs of this many (N, R, seed, G) (about 0.7 MB each at N = 1e5, R = 1,000)
LEVI_DESIGN_MEMO = 8


@lru_cache(maxsize=LEVI_DESIGN_MEMO)
def levi_design(n: int, n_resamples: int, seed: int, n_blocks: int = LEVI_BLOCKS) -> LeviDesign:
    """The random blocks and weights ``levi_bins_table`` draws: ``rng = default_rng(seed)``, then
    ``block_ids(N, G, rng)`` and ``block_bootstrap_weights(g, R, rng)`` (the same numbers), memoised for the last
    :data:`LEVI_DESIGN_MEMO` (N, R, seed, G): every re-bin of N rows with one seed draws the same ones (~3 ms at
    N = 1e5).

    Parameters
    ----------
    n : int
        Rows.
    n_resamples : int
        Replicates R.
    seed : int
        Seed.
    n_blocks : int, default LEVI_BLOCKS
        Most blocks G.

    Returns
    -------
    LeviDesign
        Blocks and weights (read-only).

    References
    ----------
    .. [1] Efron, B. & Tibshirani, R. J. (1993). *An Introduction to the Bootstrap*. Chapman & Hall.

    Examples
    --------
    >>> d = levi_design(10, 4, 0)
    >>> d.weights.shape, float(d.weights.sum(axis=1)[0]) == d.n_blocks
    ((4, 10), True)
    """
    rng = np.random.default_rng(seed)
    ids, g = block_ids(int(n), int(n_blocks), rng)
    weights = block_bootstrap_weights(g, int(n_resamples), rng)
    if g <= np.iinfo(np.uint16).max:  # kept small (a stage keeps it): block numbers and counts are below 2¹⁶
        ids, weights = ids.astype(np.uint16), weights.astype(np.uint16)
    ids.flags.writeable = False
    weights.flags.writeable = False
    return LeviDesign(ids, int(g), weights, (int(n), int(n_resamples), int(seed), int(n_blocks)))


def levi_table_from_design(rows: RegressionRows, design: LeviDesign, *, n_bins: int, binning: str,
                           level: float = 0.90) -> pd.DataFrame:
    """``levi_bins_table(rows, n_bins=B, binning=…, n_resamples=R, seed=s, level=level)`` (no clustering) from its
    design drawn once (:func:`levi_design` of (N, R, s)): RMV_j = √(Σσ²/n_j), RMSE_j = √(Σε²/n_j) per σ-bin, and the
    percentile interval of RMSE_j over the replicates √(Σ_g w_rg Σε²_gj / Σ_g w_rg n_gj) — the same computation in
    the same order, so the same table to the last bit.

    Parameters
    ----------
    rows : RegressionRows
        The rows (N = ``design.key[0]``, more than one).
    design : LeviDesign
        The bootstrap design.
    n_bins : int
        σ-bins.
    binning : str
        "count" or "width".
    level : float, default 0.90
        Level of the interval.

    Returns
    -------
    pandas.DataFrame
        Columns ``bin, count, sigma_low, sigma_high, rmv, rmse, rmse_low, rmse_high`` (non-empty bins).

    References
    ----------
    .. [1] Levi, D., Gispan, L., Giladi, N. & Fetaya, E. (2019). Evaluating and calibrating uncertainty prediction
       in regression tasks. *arXiv:1905.11659*.
    .. [2] Efron, B. & Tibshirani, R. J. (1993). *An Introduction to the Bootstrap*. Chapman & Hall.
    """
    if design.key[0] != rows.n:
        raise ValueError(f"a Levi design of {design.key[0]} rows cannot serve {rows.n}")
    b = rows.sigma_bins(n_bins, binning)
    cnt, s_var, s_err = rows.sigma_bin_sums(n_bins, binning)
    smin, smax = _sigma_range_by_bin(rows, cnt)
    with np.errstate(invalid="ignore", divide="ignore"):
        rmv = np.sqrt(s_var / cnt)
        rmse = np.sqrt(s_err / cnt)
    g = design.n_blocks
    key = design.ids.astype(np.int64) * n_bins + b
    sums = np.hstack([np.bincount(key, minlength=g * n_bins).reshape(g, n_bins).astype(float),
                      np.bincount(key, weights=rows.sq_err, minlength=g * n_bins).reshape(g, n_bins)])
    reps = design.weights.astype(float) @ sums  # the same float64 counts: the same product
    with np.errstate(invalid="ignore", divide="ignore"):
        reps = np.sqrt(reps[:, n_bins:] / reps[:, :n_bins])
    a = (1.0 - level) / 2.0
    with np.errstate(invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a bin empty in every replicate
        lo, hi = nan_quantiles(reps, [a, 1.0 - a])
    table = pd.DataFrame({"bin": np.arange(n_bins), "count": cnt.astype(np.int64), "sigma_low": smin,
                          "sigma_high": smax, "rmv": rmv, "rmse": rmse, "rmse_low": lo, "rmse_high": hi})
    return table[table["count"] > 0].reset_index(drop=True)


def _sigma_range_by_bin(rows: RegressionRows, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Smallest and largest σ of each bin (bins are runs of the σ order; as ``levi_bins_table``)."""
    counts = counts.astype(np.int64)
    starts = np.cumsum(counts) - counts
    ok = counts > 0
    order = rows.sigma_order
    smin = np.full(counts.shape, np.nan)
    smax = np.full(counts.shape, np.nan)
    smin[ok] = rows.sigma[order[starts[ok]]]
    smax[ok] = rows.sigma[order[starts[ok] + counts[ok] - 1]]
    return smin, smax
