"""The one binning engine behind every binned number and every bar (regression and classification).

A binning assigns each row an integer bin index in 0..B−1; ``bin_sums`` then aggregates any
per-row quantities with ``np.bincount`` (optionally weighted — bootstrap replicates are
multinomial count weights).  Metrics (ENCE, ECE, MCE …) and the diagram tables are computed from
the same sums, so the numbers and the bars always agree.

Conventions
-----------
* Equal-count bins (Levi et al. 2019 §3): rows sorted by the binned value; the row at sorted
  position i (0-based, after the cumulative weight W_<i of the rows before it) goes to bin
  ⌊W_<i · B / W⌋.  With unit weights the bin sizes differ by at most one.
* Equal-width bins on [lo, hi] split in B intervals at the edges lo + (hi − lo)·(k/B) (``uniform_edges``: on
  [0, 1] the edge k is the double nearest k/B itself, so a confidence of exactly k/B is on the edge);
  ``closed="right"`` gives (a, b] bins with the first bin closed ([lo, b]) — Guo et al.'s ((m−1)/M, m/M] for
  confidences; ``closed="left"`` gives [a, b) with the last bin closed (netcal's convention).
* Equal-mass bins: edges at the empirical quantiles of the values, then as equal-width with
  ``closed="right"``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Literal, NamedTuple

import numpy as np

__all__ = [
    "stable_argsort",
    "stable_argsorts",
    "stable_argsort_futures",
    "argsort_details",
    "ArgsortResult",
    "equal_count_bins",
    "equal_width_bins",
    "equal_mass_edges",
    "bins_from_edges",
    "bin_sums",
    "uniform_bin_index",
    "uniform_edges",
    "counts_from_sorted",
    "reject_nan",
]


_SIGN_BIT = np.uint64(1 << 63)
_NEGATIVE_ZERO_KEY = ~_SIGN_BIT  # the key of −0.0 (all bits of 0x8000… flipped)


def _float_keys(x: np.ndarray) -> np.ndarray:
    """Order-preserving unsigned keys of float64 values: x < 0 → ~bits, x ≥ 0 → bits | sign bit;
    −0.0 gets the key of +0.0 (they compare equal)."""
    bits = x.view(np.uint64)
    key = bits >> np.uint64(63)  # 1 for x < 0
    np.negative(key, out=key)  # all ones for x < 0, else 0
    key |= _SIGN_BIT
    key ^= bits
    key[key == _NEGATIVE_ZERO_KEY] = _SIGN_BIT
    return key


class ArgsortResult(NamedTuple):
    """What :func:`argsort_details` found.

    Attributes
    ----------
    order : ndarray of int
        The stable argsort.
    sorted_values : ndarray or None
        ``values[order]`` if asked for, else None.
    distinct : bool
        True when no two values are equal (False: there may be ties).

    References
    ----------
    Knuth, D. E. (1998). The Art of Computer Programming, vol. 3: Sorting and Searching, 2nd ed. Addison-Wesley.
    """

    order: np.ndarray
    sorted_values: np.ndarray | None
    distinct: bool


def argsort_details(values: np.ndarray, sorted_values: bool = False) -> ArgsortResult:
    """``np.argsort(values, kind="stable")`` for a 1-D float array, through one SIMD sort of packed keys.

    NumPy sorts plain 64-bit keys several times faster than it argsorts (vectorised sorting networks exist for
    ``np.sort``; ``argsort`` must move an index with every key).  So each value is mapped to an order-preserving
    unsigned key (IEEE-754 bits; sign bit flipped for x ≥ 0, all bits flipped for x < 0; −0.0 gets the key of +0.0),
    its lowest ⌈log₂ N⌉ bits are replaced by the row index, and the packed keys are sorted with ``np.sort``; the low
    bits of the sorted keys are the order.  Only neighbours whose keys agree above the index bits (equal values, or
    values within about N·2⁻⁵² relative of each other) can be out of order: they come out in index order, and where
    that disagrees with the values those runs are put right by a ``np.lexsort`` on (value, index) of just their rows.
    The result is therefore exactly the stable argsort (equal values in index order), which the tests check against
    NumPy.  Without such neighbours the values are all distinct (``distinct=True``), and no gather of the values is
    needed.  Falls back to ``np.argsort(kind="stable")`` for NaN, non-float input, or N ≥ 2³².

    Parameters
    ----------
    values : ndarray of shape (n,)
        The values.
    sorted_values : bool, default False
        Also return ``values[order]``.

    Returns
    -------
    ArgsortResult
        Order, sorted values (or None) and whether the values are distinct.

    References
    ----------
    Knuth, D. E. (1998). The Art of Computer Programming, vol. 3: Sorting and Searching, 2nd ed. Addison-Wesley.

    IEEE (2019). IEEE Standard for Floating-Point Arithmetic, IEEE 754-2019.
    """
    x = np.asarray(values)
    n = x.shape[0] if x.ndim == 1 else -1
    fallback = x.ndim != 1 or n < 2 or n >= 2**32 or x.dtype.kind != "f"
    if not fallback:
        x = np.ascontiguousarray(x, dtype=np.float64)
        with np.errstate(invalid="ignore", over="ignore"):
            maybe_nan = np.isnan(x.sum())  # one pass; inf − inf also gives NaN, hence the exact check
        fallback = bool(maybe_nan and np.isnan(x).any())
    if fallback:
        order = np.argsort(x, kind="stable")
        xs = x[order]
        distinct = bool(x.ndim == 1 and not (xs[1:] == xs[:-1]).any())
        return ArgsortResult(order, xs if sorted_values else None, distinct)
    shift = np.uint64(int(n - 1).bit_length())
    key = _float_keys(x)
    key >>= shift
    key <<= shift
    key |= np.arange(n, dtype=np.uint64)
    key.sort()
    neighbours = key[1:] ^ key[:-1]  # < 2^shift exactly when two neighbours share their value bits
    shared = neighbours < (np.uint64(1) << shift)
    del neighbours
    key &= np.uint64((1 << int(shift)) - 1)
    order = key.view(np.int64)  # the row indices (< 2³²), without a copy
    if not shared.any():
        return ArgsortResult(order, x[order] if sorted_values else None, True)
    # runs of neighbours sharing their value bits: re-sort those rows by (value, index)
    same = np.empty(n, dtype=bool)
    same[0] = False
    same[1:] = shared
    in_run = same.copy()
    in_run[:-1] |= same[1:]
    rows = np.flatnonzero(in_run)
    run_id = np.cumsum(~same[rows])
    fix = np.lexsort((order[rows], x[order[rows]], run_id))
    order[rows] = order[rows][fix]
    # equal values can only be such neighbours (same[i]: row i shares its value bits with row i − 1)
    run_values = x[order[rows]]
    distinct = not bool(((run_values[1:] == run_values[:-1]) & same[rows][1:]).any())
    return ArgsortResult(order, x[order] if sorted_values else None, distinct)


def stable_argsort(values: np.ndarray, return_sorted: bool = False) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
    """``np.argsort(values, kind="stable")`` of a 1-D array (see :func:`argsort_details` for how).

    Parameters
    ----------
    values : ndarray of shape (n,)
        The values.
    return_sorted : bool, default False
        Also return ``values[order]``.

    Returns
    -------
    ndarray or (ndarray, ndarray)
        The order, or the pair ``(order, values[order])``.

    References
    ----------
    Knuth, D. E. (1998). The Art of Computer Programming, vol. 3: Sorting and Searching, 2nd ed. Addison-Wesley.
    """
    result = argsort_details(values, return_sorted)
    return (result.order, result.sorted_values) if return_sorted else result.order


#: Most threads for :func:`stable_argsorts` (NumPy releases the GIL while it sorts); 1 sorts one after
#: another.  One thread per array even beyond the core count: three sorts on two cores finish sooner
#: interleaved (≈ 1.5 sort times) than as two rounds (2 sort times).
SORT_THREADS = 1 if (os.cpu_count() or 1) < 2 else 4
#: Below this many values per array the sorts run one after another (thread start-up would dominate).
PARALLEL_SORT_MIN = 100_000
_pool: ThreadPoolExecutor | None = None
_pool_threads = 0


def stable_argsort_futures(
    *arrays: np.ndarray, threads: int | None = None, sorted_values: bool | Sequence[bool] = False
) -> list[Future]:
    """Start :func:`argsort_details` of each array and return one future per array.

    For large arrays (≥ :data:`PARALLEL_SORT_MIN`) with ``threads`` > 1 (default: one per array, at most
    :data:`SORT_THREADS`) the sorts run in a thread pool — NumPy releases the GIL while it sorts — so the caller can
    do other work before collecting ``future.result()``; otherwise they run here and the futures are already done.
    The results are identical either way.

    Parameters
    ----------
    *arrays : ndarray
        The arrays to sort.
    threads : int or None, default None
        Threads; None: one per array, at most :data:`SORT_THREADS`.
    sorted_values : bool or sequence of bool, default False
        Ask for ``values[order]`` too (one flag, or one per array).

    Returns
    -------
    list of concurrent.futures.Future
        One future per array, each giving an :class:`ArgsortResult`.

    References
    ----------
    Knuth, D. E. (1998). The Art of Computer Programming, vol. 3: Sorting and Searching, 2nd ed. Addison-Wesley.
    """
    global _pool, _pool_threads
    flags = [sorted_values] * len(arrays) if isinstance(sorted_values, bool) else list(sorted_values)
    threads = min(SORT_THREADS, len(arrays)) if threads is None else max(1, int(threads))
    if threads == 1 or len(arrays) < 2 or max(np.shape(a)[0] for a in arrays) < PARALLEL_SORT_MIN:
        done = []
        for a, flag in zip(arrays, flags):
            future: Future = Future()
            future.set_result(argsort_details(a, flag))
            done.append(future)
        return done
    if _pool is None or _pool_threads < threads:
        _pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="calib_core-sort")
        _pool_threads = threads
    return [_pool.submit(argsort_details, a, flag) for a, flag in zip(arrays, flags)]


def background(fn: Callable[..., Any], *args: Any, size: int = 0) -> Future:
    """``fn(*args)`` in the sort pool when ``size`` ≥ :data:`PARALLEL_SORT_MIN` rows (and threads > 1), else here."""
    global _pool, _pool_threads
    if SORT_THREADS < 2 or size < PARALLEL_SORT_MIN:
        future: Future = Future()
        future.set_result(fn(*args))
        return future
    if _pool is None:
        _pool = ThreadPoolExecutor(max_workers=SORT_THREADS, thread_name_prefix="calib_core-sort")
        _pool_threads = SORT_THREADS
    return _pool.submit(fn, *args)


def stable_argsorts(
    *arrays: np.ndarray, threads: int | None = None, return_sorted: bool = False
) -> list[np.ndarray] | list[tuple[np.ndarray, np.ndarray]]:
    """:func:`stable_argsort` of each array, concurrently for large arrays (see :func:`stable_argsort_futures`).

    Parameters
    ----------
    *arrays : ndarray
        The arrays to sort.
    threads : int or None, default None
        Threads.
    return_sorted : bool, default False
        Also return the sorted values.

    Returns
    -------
    list
        One order (or ``(order, sorted)`` pair) per array.

    References
    ----------
    Knuth, D. E. (1998). The Art of Computer Programming, vol. 3: Sorting and Searching, 2nd ed. Addison-Wesley.
    """
    futures = stable_argsort_futures(*arrays, threads=threads, sorted_values=return_sorted)
    return [(f.result().order, f.result().sorted_values) if return_sorted else f.result().order for f in futures]


def equal_count_bins(
    values: np.ndarray,
    n_bins: int,
    weights: np.ndarray | None = None,
    order: np.ndarray | None = None,
) -> np.ndarray:
    """Bin index of each row for B equal-count bins of ``values`` (ties in the order given by ``order``).

    bin(i) = ⌊W_<i · B / W⌋ where W_<i is the weight of the rows sorted before row i.

    Parameters
    ----------
    values : ndarray of shape (n,)
        The binned values.
    n_bins : int
        B.
    weights : ndarray of shape (n,) or None, default None
        Row weights; None: 1.
    order : ndarray of shape (n,) or None, default None
        A stable argsort of ``values``, to reuse a sort.

    Returns
    -------
    ndarray of int, shape (n,)
        The bin of every row.

    References
    ----------
    Levi, D., Gispan, L., Giladi, N. & Fetaya, E. (2019). Evaluating and calibrating uncertainty prediction in
    regression tasks. arXiv:1905.11659 (Sensors 22, 5540, 2022).
    """
    values = np.asarray(values)
    n = values.shape[0]
    if n_bins < 1:
        raise ValueError("n_bins must be at least 1")
    if order is None:
        order = stable_argsort(values)
    if weights is None:  # bin k = sorted positions ⌈kN/B⌉ … ⌈(k+1)N/B⌉ − 1, i.e. ⌊i·B/N⌋, in integers
        bounds = (np.arange(n_bins + 1, dtype=np.int64) * n + n_bins - 1) // n_bins
        out = np.empty(n, dtype=np.int64)
        out[order] = np.repeat(np.arange(n_bins, dtype=np.int64), np.diff(bounds))
        return out
    else:
        w = np.asarray(weights, dtype=float)[order]
        start = np.cumsum(w) - w
        total = float(w.sum())
    b_sorted = np.minimum((start * n_bins // max(total, 1e-300)).astype(np.int64), n_bins - 1)
    out = np.empty(n, dtype=np.int64)
    out[order] = b_sorted
    return out


def bins_from_edges(
    values: np.ndarray, edges: np.ndarray, closed: Literal["right", "left"] = "right"
) -> np.ndarray:
    """Bin index for sorted ``edges`` e_0 < … < e_B; values outside go to the end bins.

    Parameters
    ----------
    values : ndarray of shape (n,)
        The binned values.
    edges : ndarray of shape (B + 1,)
        Sorted edges.
    closed : {"right", "left"}, default "right"
        (a, b] bins with the first closed, or [a, b) bins with the last closed.

    Returns
    -------
    ndarray of int, shape (n,)
        The bin of every value, 0..B−1.

    References
    ----------
    Guo, C., Pleiss, G., Sun, Y. & Weinberger, K. Q. (2017). On calibration of modern neural networks. ICML,
    PMLR 70, 1321–1330.
    """
    n_bins = len(edges) - 1
    inner = np.asarray(edges)[1:-1]
    side = "left" if closed == "right" else "right"
    idx = np.searchsorted(inner, values, side=side)
    return np.clip(idx, 0, n_bins - 1).astype(np.int64)


def equal_width_bins(
    values: np.ndarray,
    n_bins: int,
    lo: float | None = None,
    hi: float | None = None,
    closed: Literal["right", "left"] = "right",
) -> tuple[np.ndarray, np.ndarray]:
    """Bin index and edges of B equal-width bins on [lo, hi] (default: min and max of values).

    Parameters
    ----------
    values : ndarray of shape (n,)
        The binned values.
    n_bins : int
        B.
    lo : float or None, default None
        Lower end; None: min of values.
    hi : float or None, default None
        Upper end; None: max of values.
    closed : {"right", "left"}, default "right"
        Which end of a bin is closed.

    Returns
    -------
    index : ndarray of int, shape (n,)
        The bin of every value.
    edges : ndarray of shape (B + 1,)
        The edges.

    References
    ----------
    Guo, C., Pleiss, G., Sun, Y. & Weinberger, K. Q. (2017). On calibration of modern neural networks. ICML,
    PMLR 70, 1321–1330.

    Levi, D., Gispan, L., Giladi, N. & Fetaya, E. (2019). Evaluating and calibrating uncertainty prediction in
    regression tasks. arXiv:1905.11659 (Sensors 22, 5540, 2022).
    """
    values = np.asarray(values, dtype=float)
    lo = float(values.min()) if lo is None else float(lo)
    hi = float(values.max()) if hi is None else float(hi)
    if hi <= lo:
        hi = lo + 1.0 if lo == 0 else lo + abs(lo) * 1e-9 + 1e-300
    edges = uniform_edges(lo, hi, n_bins)
    return bins_from_edges(values, edges, closed), edges


def uniform_edges(lo: float, hi: float, n_bins: int) -> np.ndarray:
    """The B + 1 edges of B equal-width bins on [lo, hi]: e_k = lo + (hi − lo)·(k/B), with e_B = hi exactly.

    k/B is computed as one correctly rounded division, so on [0, 1] every edge is the double nearest k/B — the
    value a confidence of exactly k/B has.  ``np.linspace(0, 1, B + 1)`` computes k·(1/B) instead, which is one
    ulp below k/B for some k when B is 6, 7, 9, 12, 14 …, and a confidence of exactly k/B then lands one bin up
    instead of in Guo et al.'s bin ((k−1)/B, k/B].

    Parameters
    ----------
    lo : float
        Lower end.
    hi : float
        Upper end.
    n_bins : int
        B.

    Returns
    -------
    ndarray of shape (B + 1,)
        The edges.

    References
    ----------
    Guo, C., Pleiss, G., Sun, Y. & Weinberger, K. Q. (2017). On calibration of modern neural networks. ICML,
    PMLR 70, 1321–1330.

    Goldberg, D. (1991). What every computer scientist should know about floating-point arithmetic. ACM Computing
    Surveys 23(1), 5–48.

    Examples
    --------
    >>> float(uniform_edges(0.0, 1.0, 6)[5]) == 5 / 6
    True
    >>> float(np.linspace(0.0, 1.0, 7)[5]) < 5 / 6  # one ulp below: a confidence of 5/6 would land in bin 6 of 6
    True
    """
    lo, hi = float(lo), float(hi)
    edges = lo + (hi - lo) * (np.arange(n_bins + 1, dtype=float) / n_bins)
    edges[0], edges[-1] = lo, hi
    return edges


def equal_mass_edges(values: np.ndarray, n_bins: int) -> np.ndarray:
    """Edges at the empirical quantiles of ``values`` (k/B, k = 0..B), made non-decreasing.

    Parameters
    ----------
    values : ndarray of shape (n,)
        The values.
    n_bins : int
        B.

    Returns
    -------
    ndarray of shape (B + 1,)
        The edges.

    References
    ----------
    Nixon, J., Dusenberry, M. W., Zhang, L., Jerfel, G. & Tran, D. (2019). Measuring calibration in deep
    learning. CVPR Workshops, 38–41.

    Hyndman, R. J. & Fan, Y. (1996). Sample quantiles in statistical packages. The American Statistician
    50(4), 361–365.
    """
    return np.quantile(np.asarray(values, dtype=float), np.linspace(0.0, 1.0, n_bins + 1))


def bin_sums(
    bin_index: np.ndarray,
    n_bins: int,
    *quantities: np.ndarray,
    weights: np.ndarray | None = None,
) -> tuple[np.ndarray, ...]:
    """Per-bin (weighted) count followed by the per-bin weighted sum of each quantity.

    count_b = Σ_{i ∈ b} w_i,  sum_b(x) = Σ_{i ∈ b} w_i x_i  (w ≡ 1 without weights).

    Parameters
    ----------
    bin_index : ndarray of int, shape (n,)
        The bin of every row.
    n_bins : int
        B.
    *quantities : ndarray of shape (n,)
        Per-row quantities to sum.
    weights : ndarray of shape (n,) or None, default None
        Row weights.

    Returns
    -------
    tuple of ndarray of shape (B,)
        The counts, then one sum per quantity (float64).

    References
    ----------
    Guo, C., Pleiss, G., Sun, Y. & Weinberger, K. Q. (2017). On calibration of modern neural networks. ICML,
    PMLR 70, 1321–1330.

    Levi, D., Gispan, L., Giladi, N. & Fetaya, E. (2019). Evaluating and calibrating uncertainty prediction in
    regression tasks. arXiv:1905.11659 (Sensors 22, 5540, 2022).
    """
    count = np.bincount(bin_index, weights=weights, minlength=n_bins).astype(float)
    out = [count]
    for q in quantities:
        qw = q if weights is None else q * weights
        # float even for an empty index: np.bincount then returns int64 whatever the weights, and a caller's
        # in-place float assignment into it would truncate
        out.append(np.bincount(bin_index, weights=qw, minlength=n_bins).astype(float, copy=False))
    return tuple(out)


def uniform_bin_index(
    values: np.ndarray,
    n_bins: int,
    lo: float = 0.0,
    hi: float = 1.0,
    closed: Literal["right", "left"] = "right",
    *,
    edges: np.ndarray | None = None,
) -> np.ndarray:
    """Same bin index as ``bins_from_edges(values, uniform_edges(lo, hi, n_bins), closed)``, in O(1) per row.

    The arithmetic guess ⌊(v − lo)/(hi − lo)·B⌋ is corrected by one comparison with the actual edges on each side,
    so values exactly on (or a rounding error away from) an edge land where the binary search puts them.

    Parameters
    ----------
    values : ndarray of shape (n,)
        The binned values.
    n_bins : int
        B.
    lo : float, default 0.0
        Lower end.
    hi : float, default 1.0
        Upper end.
    closed : {"right", "left"}, default "right"
        Which end of a bin is closed.
    edges : ndarray of shape (B + 1,), optional
        The equal-width edges the index must agree with when they were made another way (each within a rounding
        error of lo + (hi − lo)·k/B, e.g. a stored summary's); default ``uniform_edges(lo, hi, n_bins)``.

    Returns
    -------
    ndarray of int, shape (n,)
        The bin of every value.

    References
    ----------
    Guo, C., Pleiss, G., Sun, Y. & Weinberger, K. Q. (2017). On calibration of modern neural networks. ICML,
    PMLR 70, 1321–1330.
    """
    v = np.asarray(values, dtype=float)
    edges = uniform_edges(lo, hi, n_bins) if edges is None else np.asarray(edges, dtype=float)
    g = np.floor((v - lo) * (n_bins / (hi - lo)))
    # fmin/fmax ignore NaN: NaN → last bin, as the binary search puts it
    idx = np.fmax(np.fmin(g, n_bins - 1), 0).astype(np.int64)
    if closed == "right":  # (a, b]: v ≤ lower edge → previous bin; v > upper edge → next bin
        idx -= (v <= edges[idx]) & (idx > 0)
        idx += (v > edges[idx + 1]) & (idx < n_bins - 1)
    else:  # [a, b): v < lower edge → previous bin; v ≥ upper edge → next bin
        idx -= (v < edges[idx]) & (idx > 0)
        idx += (v >= edges[idx + 1]) & (idx < n_bins - 1)
    return idx


def counts_from_sorted(
    sorted_values: np.ndarray, edges: np.ndarray, closed: Literal["right", "left"] = "right"
) -> np.ndarray:
    """Per-bin counts of already sorted values, in O(B log N).

    The same counts as ``np.bincount(bins_from_edges(values, edges, closed), minlength=B)``.  With c_k = #{v < e_k}
    (``closed="left"``, bins [a, b)) or #{v ≤ e_k} (``closed="right"``, bins (a, b]) at the inner edges
    e_1 … e_{B−1}, count_k = c_{k+1} − c_k with c_0 = 0 and c_B = N; values outside [e_0, e_B] (and NaN, sorted
    last) fall in the end bins, as ``bins_from_edges`` puts them.

    Parameters
    ----------
    sorted_values : ndarray of shape (n,)
        The values, sorted.
    edges : ndarray of shape (B + 1,)
        Sorted edges.
    closed : {"right", "left"}, default "right"
        Which end of a bin is closed.

    Returns
    -------
    ndarray of shape (B,)
        The counts.

    References
    ----------
    Knuth, D. E. (1998). The Art of Computer Programming, vol. 3: Sorting and Searching, 2nd ed. Addison-Wesley.
    """
    inner = np.asarray(edges, dtype=float)[1:-1]
    side = "left" if closed == "left" else "right"
    cum = np.concatenate([[0], np.searchsorted(sorted_values, inner, side=side), [sorted_values.shape[0]]])
    return np.diff(cum).astype(float)


def reject_nan(values: np.ndarray, what: str, *, hint: str = "") -> None:
    """The metrics' NaN policy: raise ``ValueError`` naming ``what`` and the rows when ``values`` has NaN rows.

    The error names the count and the first five indices.  Every public metric function of
    ``calib_core.metrics.regression`` and ``calib_core.metrics.classification`` raises rather than propagating or
    silently dropping NaN (README, "NaN policy"); ``cc.load_predictions`` drops such rows from a file and counts them
    instead.

    Parameters
    ----------
    values : ndarray
        A row mask if boolean, else values whose NaN rows are looked for.
    what : str
        What the values are, for the message.
    hint : str, default ""
        Added to the message.

    Raises
    ------
    ValueError
        When a row is NaN.

    References
    ----------
    IEEE (2019). IEEE Standard for Floating-Point Arithmetic, IEEE 754-2019.
    """
    v = np.asarray(values)
    bad = v if v.dtype == bool else np.isnan(v.astype(float, copy=False))
    if bad.ndim > 1:
        bad = bad.any(axis=tuple(range(1, bad.ndim)))
    if bad.any():
        rows = np.flatnonzero(bad)
        first = ", ".join(str(int(i)) for i in rows[:5]) + (", …" if rows.size > 5 else "")
        raise ValueError(f"{what} is NaN in {rows.size} row{'s' if rows.size != 1 else ''} (rows {first}): drop or "
                         f"impute those rows first{hint}")
