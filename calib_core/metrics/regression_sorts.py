"""The stable argsorts of σ and |ε| of a Gaussian forecast set through compiled key packing around NumPy's SIMD sort.

:func:`calib_core.base.binning.argsort_details` sorts packed 64-bit keys — the value's order-preserving bits, its
lowest ⌈log₂ N⌉ bits replaced by the row index — with ``np.sort`` and reads the order from the low bits; about ten
NumPy passes build and unpack the keys.  :func:`packed_argsort` builds the keys in one compiled loop (|x| taken on
the fly) and unpacks them in another, with the same sort in between.  Sorted neighbours that share their value bits
(equal values, or values within about N·2⁻⁵² of each other) form short runs, put in (value, row) order by insertion
there — the stable order, as ``argsort_details``'s lexsort of those rows gives it; a run longer than 64 rows (many
ties) or a NaN hands the array to ``argsort_details`` itself.
"""

from __future__ import annotations

import numpy as np

from ..base.binning import ArgsortResult, argsort_details
from ..base.compiled import compiled_kernel

__all__ = ["packed_argsort", "packed_argsort_ranks", "rank_d2", "equal_count_bins_from_ranks"]

_SIGN = np.uint64(1 << 63)


@compiled_kernel
def _pack(bits, absolute, shift, out):  # pragma: no cover
    """Order-preserving keys of float64 bit patterns (−0.0 as +0.0; |x| when ``absolute``), low ``shift`` bits
    replaced by the row index; returns False when a value is NaN."""
    n = bits.shape[0]
    if out.shape[0] != n:
        raise IndexError("packed_argsort: arrays of different lengths")
    sign = np.uint64(1) << np.uint64(63)
    exp_mask = np.uint64(0x7FF0000000000000)
    frac_mask = np.uint64(0x000FFFFFFFFFFFFF)
    high = ~((np.uint64(1) << np.uint64(shift)) - np.uint64(1))
    ok = True
    for i in range(n):
        b = bits[i]
        if absolute:
            b &= ~sign
        if b == sign:  # −0.0
            b = np.uint64(0)
        if (b & exp_mask) == exp_mask and (b & frac_mask) != np.uint64(0):
            ok = False
        key = ~b if (b & sign) != np.uint64(0) else (b | sign)
        out[i] = (key & high) | np.uint64(i)
    return ok


@compiled_kernel
def _unpack(keys, shift, values, absolute, order, rank):  # pragma: no cover
    """The row indices in the low ``shift`` bits of sorted keys, runs of neighbours sharing their value bits put in
    (value, row) order by insertion, and (when ``rank`` has n entries) every row's position.  Returns 0 (values
    distinct), 1 (some equal) or 2 (a run longer than 64: not repaired, ranks not written)."""
    n = keys.shape[0]
    ranked = rank.shape[0] == n
    if order.shape[0] != n or values.shape[0] != n or (rank.shape[0] != 0 and not ranked):
        raise IndexError("packed_argsort: arrays of different lengths")
    low = (np.uint64(1) << np.uint64(shift)) - np.uint64(1)
    status = 0
    start = 0
    prev = keys[0] if n > 0 else np.uint64(0)
    for k in range(n + 1):
        if k < n:
            key = keys[k]
            order[k] = np.int64(key & low)  # order may be the keys' own memory: key[k] is read first
            if k > 0 and (key ^ prev) <= low:
                prev = key
                continue
            prev = key
        if k - start > 64:
            return 2
        for a in range(start + 1, k):  # the run start … k − 1 (mostly one row): insertion by (value, row)
            row = order[a]
            v = abs(values[row]) if absolute else values[row]
            b = a - 1
            while b >= start:
                other = order[b]
                w = abs(values[other]) if absolute else values[other]
                if w < v or (w == v and other < row):
                    break
                order[b + 1] = other
                b -= 1
            order[b + 1] = row
        for a in range(start + 1, k):
            va = abs(values[order[a]]) if absolute else values[order[a]]
            vb = abs(values[order[a - 1]]) if absolute else values[order[a - 1]]
            if va == vb:
                status = 1
        if ranked:
            for a in range(start, k):
                rank[order[a]] = a
        start = k
    return status


def packed_argsort(values: np.ndarray, *, absolute: bool = False) -> ArgsortResult:
    """``np.argsort(x, kind="stable")`` of x = values (or |values|), and whether the values are distinct: the result
    of :func:`calib_core.base.binning.argsort_details` (without sorted values), with the keys built and unpacked in
    two compiled loops.

    Key of x: its IEEE-754 bits with the sign bit flipped when x ≥ 0 and all bits flipped when x < 0 (−0.0 as +0.0),
    so that unsigned order is numeric order; the lowest ⌈log₂ N⌉ bits are replaced by the row index and the keys
    sorted.  The low bits are the stable order except within runs of neighbours agreeing above the index bits, which
    are sorted by (value, row); the values are distinct when no two in a run are equal.

    Parameters
    ----------
    values : ndarray of shape (n,)
        The values (float64).
    absolute : bool, default False
        Sort |values| (−0.0 and 0.0 alike).

    Returns
    -------
    ArgsortResult
        ``order`` (int64), ``sorted_values`` None and ``distinct``.

    References
    ----------
    Knuth, D. E. (1998). The Art of Computer Programming, vol. 3: Sorting and Searching, 2nd ed. Addison-Wesley.

    IEEE (2019). IEEE Standard for Floating-Point Arithmetic, IEEE 754-2019.

    Examples
    --------
    >>> r = packed_argsort(np.array([0.3, -2.0, 0.1, 1.0]), absolute=True)
    >>> r.order.tolist(), r.distinct
    ([2, 0, 3, 1], True)
    """
    x = np.ascontiguousarray(values, dtype=np.float64)
    n = x.shape[0] if x.ndim == 1 else -1
    if n < 2 or n >= 2**32:
        return argsort_details(np.abs(x) if absolute else x)
    shift = int(n - 1).bit_length()
    keys = np.empty(n, dtype=np.uint64)
    if not _pack(x.view(np.uint64), absolute, shift, keys):
        return argsort_details(np.abs(x) if absolute else x)
    keys.sort()
    order = keys.view(np.int64)  # unpacked in place: the sorted keys are read before their slot is written
    status = _unpack(keys, shift, x, absolute, order, np.empty(0, dtype=np.int64))
    if status == 2:
        return argsort_details(np.abs(x) if absolute else x)
    return ArgsortResult(order, None, status == 0)


def packed_argsort_ranks(values: np.ndarray, *, absolute: bool = False) -> tuple[ArgsortResult, np.ndarray]:
    """:func:`packed_argsort` and the position of every row in that order (the inverse permutation), written while
    the keys are unpacked.

    rank[order[k]] = k: Spearman's ranks without ties (minus 1) and the sorted position that places a row in an
    equal-count bin.

    Parameters
    ----------
    values : ndarray of shape (n,)
        The values (float64).
    absolute : bool, default False
        Sort |values|.

    Returns
    -------
    result : ArgsortResult
        As :func:`packed_argsort`.
    rank : ndarray of int64, shape (n,)
        Row → position.

    References
    ----------
    Spearman, C. (1904). The proof and measurement of association between two things. American Journal of
    Psychology 15(1), 72–101.

    Examples
    --------
    >>> r, rank = packed_argsort_ranks(np.array([0.3, -2.0, 0.1]))
    >>> r.order.tolist(), rank.tolist()
    ([1, 2, 0], [2, 0, 1])
    """
    x = np.ascontiguousarray(values, dtype=np.float64)
    n = x.shape[0] if x.ndim == 1 else -1
    rank = np.empty(max(n, 0), dtype=np.int64)
    if 2 <= n < 2**32:
        shift = int(n - 1).bit_length()
        keys = np.empty(n, dtype=np.uint64)
        if _pack(x.view(np.uint64), absolute, shift, keys):
            keys.sort()
            order = keys.view(np.int64)
            status = _unpack(keys, shift, x, absolute, order, rank)
            if status != 2:
                return ArgsortResult(order, None, status == 0), rank
    result = argsort_details(np.abs(x) if absolute else x)
    rank[result.order] = np.arange(n)
    return result, rank


@compiled_kernel
def _rank_d2_rows(rank_a, rank_b):  # pragma: no cover
    """Σ_i (rank_a[i] − rank_b[i])² in 64-bit integers, row by row."""
    n = rank_a.shape[0]
    if rank_b.shape[0] != n:
        raise IndexError("rank_d2: arrays of different lengths")
    total = 0
    for i in range(n):
        d = rank_a[i] - rank_b[i]
        total += d * d
    return total


def rank_d2(rank_a: np.ndarray, rank_b: np.ndarray) -> float:
    """Σ_i d_i², d_i = rank_a[i] − rank_b[i] (Spearman's Σd² without ties), exact in 64-bit integers (N < 3·10⁶;
    beyond that the float dot product of the differences).

    Parameters
    ----------
    rank_a, rank_b : ndarray of int64, shape (n,)
        Two rankings of the rows (positions in two sort orders).

    Returns
    -------
    float
        Σd².

    References
    ----------
    Spearman, C. (1904). The proof and measurement of association between two things. American Journal of
    Psychology 15(1), 72–101.

    Examples
    --------
    >>> rank_d2(np.array([0, 1, 2]), np.array([2, 1, 0]))
    8.0
    """
    if rank_a.shape[0] >= 3_000_000:
        d = (rank_a - rank_b).astype(float)
        return float(np.dot(d, d))
    return float(_rank_d2_rows(rank_a, rank_b))


@compiled_kernel
def _count_bins(rank, n_bins, out):  # pragma: no cover
    """out[i] = ⌊rank[i]·B/N⌋ without an integer division per row: the float quotient rank·(B/N) is within one of it
    (its relative error is below 2⁻⁵¹ and the quotient below B), and one exact integer comparison on each side puts
    it right — every row vectorised."""
    n = rank.shape[0]
    if out.shape[0] != n:
        raise IndexError("equal_count_bins_from_ranks: arrays of different lengths")
    scale = n_bins / n if n > 0 else 0.0
    for i in range(n):
        prod = rank[i] * n_bins
        q = np.int64(rank[i] * scale)
        q += (q + 1) * n <= prod
        q -= q * n > prod
        out[i] = q


def equal_count_bins_from_ranks(rank: np.ndarray, n_bins: int) -> np.ndarray:
    """Equal-count bins from sorted positions: the row at position p of a stable order goes to bin ⌊p·B/N⌋ — the bins
    of :func:`calib_core.base.binning.equal_count_bins` (bin k holds positions ⌈kN/B⌉ … ⌈(k+1)N/B⌉ − 1), read row
    by row instead of scattered through the order.

    Parameters
    ----------
    rank : ndarray of int64, shape (n,)
        Row → position in the stable order.
    n_bins : int
        B ≥ 1.

    Returns
    -------
    ndarray of int64, shape (n,)
        The bin of every row.

    References
    ----------
    Levi, D., Gispan, L., Giladi, N. & Fetaya, E. (2019). Evaluating and calibrating uncertainty prediction in
    regression tasks. arXiv:1905.11659 (Sensors 22, 5540, 2022).

    Examples
    --------
    >>> equal_count_bins_from_ranks(np.array([2, 0, 1, 3]), 2).tolist()
    [1, 0, 0, 1]
    """
    out = np.empty(rank.shape[0], dtype=np.int64)
    _count_bins(np.ascontiguousarray(rank, dtype=np.int64), int(n_bins), out)
    return out
