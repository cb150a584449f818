"""The σ-bin tables of one subset at any bin count from its σ order, kept once: counts, Σσ², Σε², σ ranges and ENCE.

Levi σ-bins (equal-count or equal-width) are contiguous runs of the rows sorted by σ.  :class:`SigmaPrefix` keeps
that order with σ, σ² and ε² gathered into it (one pass, once per subset) and the cumulative row counts; a new bin
count then needs only its B + 1 run boundaries — arithmetic for equal-count bins, a binary search of the sorted σ
for equal-width bins — and one contiguous pass of ``np.add.reduceat`` for the per-bin sums (no scatter by row, no
bin index of N rows).  The tables equal those of :meth:`RegressionRows.sigma_bin_sums`,
``levi_bins_table``'s σ ranges and :meth:`RegressionRows.ence` to rounding (each bin's sum is added in σ order
instead of row order: ≤ 1e-12 relative).  What a page redraws when only the σ-bins change.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..base.binning import uniform_edges
from ..metrics.regression import RegressionRows

__all__ = ["SigmaPrefix", "sigma_prefix", "sigma_bin_bounds", "sigma_bin_table", "ence_from_prefix"]


@dataclass(frozen=True)
class SigmaPrefix:
    """One subset's rows in σ order: what every σ-bin table of it is summed from.

    Attributes
    ----------
    sigma : ndarray of shape (N,)
        σ sorted (ties in the rows' stable σ order).
    var : ndarray of shape (N,)
        σ² in that order.
    sq_err : ndarray of shape (N,)
        ε² = (y − μ)² in that order.

    References
    ----------
    .. [1] Levi, D., Gispan, L., Giladi, N. & Fetaya, E. (2019). Evaluating and calibrating uncertainty prediction
       in regression tasks. *arXiv:1905.11659*.
    """

    sigma: np.ndarray
    var: np.ndarray
    sq_err: np.ndarray

    @property
    def n(self) -> int:
        """Rows."""
        return int(self.sigma.shape[0])


def sigma_prefix(rows: RegressionRows) -> SigmaPrefix:
    """The rows gathered into their stable σ order (``rows.sigma_order``, shared with the diagnosis's own sort).

    σ_(1) ≤ … ≤ σ_(N) with σ², ε² carried along: a σ-bin is a run σ_(s) … σ_(e−1) of it.

    Parameters
    ----------
    rows : RegressionRows
        The subset's rows.

    Returns
    -------
    SigmaPrefix
        The sorted arrays.

    References
    ----------
    .. [1] Levi, D., Gispan, L., Giladi, N. & Fetaya, E. (2019). Evaluating and calibrating uncertainty prediction
       in regression tasks. *arXiv:1905.11659*.

    Examples
    --------
    >>> import numpy as np, calib_core as cc
    >>> r = RegressionRows(np.array([0.0, 1.0, 0.0]), cc.Gaussian(np.zeros(3), np.array([2.0, 1.0, 3.0])))
    >>> sigma_prefix(r).sigma.tolist(), sigma_prefix(r).sq_err.tolist()
    ([1.0, 2.0, 3.0], [1.0, 0.0, 0.0])
    """
    order = rows.sigma_order
    return SigmaPrefix(sigma=np.ascontiguousarray(rows.sigma[order], dtype=float),
                       var=np.ascontiguousarray(rows.var[order], dtype=float),
                       sq_err=np.ascontiguousarray(rows.sq_err[order], dtype=float))


def sigma_bin_bounds(prefix: SigmaPrefix, n_bins: int, binning: str) -> np.ndarray:
    """Boundaries s_0 = 0 ≤ s_1 ≤ … ≤ s_B = N of the B σ-bins in σ order: bin k is the sorted rows s_k … s_{k+1} − 1.

    Equal count: s_k = ⌈kN/B⌉ (the bins of :func:`~calib_core.base.binning.equal_count_bins`).  Equal width on
    [σ_min, σ_max] with edges e_k (:func:`~calib_core.base.binning.uniform_edges`), bins closed on the left and the
    last one on both ends: s_k = #{σ < e_k} for 0 < k < B (those of ``equal_width_bins(σ, B, closed="left")``).

    Parameters
    ----------
    prefix : SigmaPrefix
        The sorted rows.
    n_bins : int
        B.
    binning : {"count", "width"}
        Equal-count or equal-width bins.

    Returns
    -------
    ndarray of int64, shape (B + 1,)
        The boundaries.

    References
    ----------
    .. [1] Levi, D., Gispan, L., Giladi, N. & Fetaya, E. (2019). Evaluating and calibrating uncertainty prediction
       in regression tasks. *arXiv:1905.11659*.

    Examples
    --------
    >>> p = SigmaPrefix(np.array([1.0, 2.0, 3.0, 10.0]), np.zeros(4), np.zeros(4))
    >>> sigma_bin_bounds(p, 3, "count").tolist(), sigma_bin_bounds(p, 3, "width").tolist()
    ([0, 2, 3, 4], [0, 3, 3, 4])
    """
    n, nb = prefix.n, int(n_bins)
    if nb < 1:
        raise ValueError("n_bins must be at least 1")
    if binning == "count":
        return (np.arange(nb + 1, dtype=np.int64) * n + nb - 1) // nb
    if binning != "width":
        raise ValueError(f"binning must be 'count' or 'width', got {binning!r}")
    bounds = np.empty(nb + 1, dtype=np.int64)
    bounds[0], bounds[-1] = 0, n
    if n == 0:
        bounds[:] = 0
        return bounds
    lo, hi = float(prefix.sigma[0]), float(prefix.sigma[-1])
    if hi <= lo:  # as equal_width_bins widens a degenerate range
        hi = lo + 1.0 if lo == 0 else lo + abs(lo) * 1e-9 + 1e-300
    bounds[1:-1] = np.searchsorted(prefix.sigma, uniform_edges(lo, hi, nb)[1:-1], side="left")
    return bounds


def sigma_bin_table(prefix: SigmaPrefix, n_bins: int, binning: str) -> tuple[np.ndarray, ...]:
    """Per σ-bin row count, Σσ², Σε², smallest and largest σ from the runs of :func:`sigma_bin_bounds`.

    count_k = s_{k+1} − s_k, Σσ²_k = Σ_{s_k ≤ i < s_{k+1}} σ²_(i) (likewise ε²), σ range [σ_(s_k), σ_(s_{k+1}−1)];
    empty bins have sums 0 and a NaN range.

    Parameters
    ----------
    prefix : SigmaPrefix
        The sorted rows.
    n_bins : int
        B.
    binning : {"count", "width"}
        Equal-count or equal-width bins.

    Returns
    -------
    count, sum_var, sum_sq_err, sigma_low, sigma_high : ndarray of shape (B,)
        Count as float, as :meth:`RegressionRows.sigma_bin_sums` gives it.

    References
    ----------
    .. [1] Levi, D., Gispan, L., Giladi, N. & Fetaya, E. (2019). Evaluating and calibrating uncertainty prediction
       in regression tasks. *arXiv:1905.11659*.

    Examples
    --------
    >>> p = SigmaPrefix(np.array([1.0, 2.0, 3.0]), np.array([1.0, 4.0, 9.0]), np.array([0.5, 1.0, 2.0]))
    >>> [a.tolist() for a in sigma_bin_table(p, 2, "count")]
    [[2.0, 1.0], [5.0, 9.0], [1.5, 2.0], [1.0, 3.0], [2.0, 3.0]]
    """
    bounds = sigma_bin_bounds(prefix, n_bins, binning)
    counts = np.diff(bounds)
    full = counts > 0
    starts = bounds[:-1][full]
    s_var = np.zeros(counts.shape)
    s_sq = np.zeros(counts.shape)
    lo = np.full(counts.shape, np.nan)
    hi = np.full(counts.shape, np.nan)
    if starts.size:
        s_var[full] = np.add.reduceat(prefix.var, starts)
        s_sq[full] = np.add.reduceat(prefix.sq_err, starts)
        lo[full] = prefix.sigma[starts]
        hi[full] = prefix.sigma[bounds[1:][full] - 1]
    return counts.astype(float), s_var, s_sq, lo, hi


def ence_from_prefix(prefix: SigmaPrefix, n_bins: int, binning: str) -> float:
    """ENCE = mean over bins with Σσ² > 0 of |RMV_k − RMSE_k| / RMV_k (Levi eq. 8), from :func:`sigma_bin_table`.

    For σ whose squares neither overflow nor underflow (:meth:`RegressionRows.ence` rescales those first).

    Parameters
    ----------
    prefix : SigmaPrefix
        The sorted rows.
    n_bins : int
        B.
    binning : {"count", "width"}
        Equal-count or equal-width bins.

    Returns
    -------
    float
        ENCE (NaN when no bin has Σσ² > 0).

    References
    ----------
    .. [1] Levi, D., Gispan, L., Giladi, N. & Fetaya, E. (2019). Evaluating and calibrating uncertainty prediction
       in regression tasks. *arXiv:1905.11659*.

    Examples
    --------
    >>> p = SigmaPrefix(np.array([1.0, 1.0]), np.array([1.0, 1.0]), np.array([4.0, 4.0]))
    >>> ence_from_prefix(p, 1, "count")
    1.0
    """
    cnt, s_var, s_sq, _, _ = sigma_bin_table(prefix, n_bins, binning)
    ok = (cnt > 0) & (s_var > 0)
    if not ok.any():
        return float("nan")
    rmv = np.sqrt(s_var[ok] / cnt[ok])
    rmse = np.sqrt(s_sq[ok] / cnt[ok])
    return float(np.mean(np.abs(rmv - rmse) / rmv))
