"""Exact sums, row-id hashing and equal-count edges: the numeric primitives of the mergeable summaries.

Exact sums
----------
A float sum depends on the order of its additions, so a sum computed chunk by chunk and merged would differ in its
last bits from the same sum computed another way.  The summaries avoid that altogether: every float sum they keep
(Σσ², Σε², ΣNLL, … per bin) is held **exactly**, as a Python integer in units of 2⁻¹¹³⁸ (every float64 is an integer
multiple of 2⁻¹⁰⁷⁴; the 64 spare bits leave room for the split below).  Adding two exact sums is integer addition,
associative and commutative, so a merged summary is bit for bit the same whatever the chunking and the merge order.
The value is rounded to float64 once, when a metric is computed (correctly rounded: ``Fraction → float``), which
is more accurate than any float summation (Demmel & Hida 2004; Shewchuk 1997; ``math.fsum`` rounds the same way).

Vectorised accumulation (:func:`exact_bin_sums`): each value x = m·2ᵉ (``np.frexp``, ½ ≤ |m| < 1) is split into
t = m·2²⁶ = t_hi + t_lo with t_hi = trunc(t), an integer with |t_hi| < 2²⁶, and t_lo = t − t_hi, a multiple of
2⁻²⁷ with |t_lo| < 1 (both exact).  Rows are grouped by (cell, e); within a group a float ``np.bincount`` of t_hi
adds integers below 2²⁶ and of t_lo multiples of 2⁻²⁷ below 1, so every partial sum is exact as long as a group
has fewer than 2²⁶ rows (blocks of 2²⁵ rows are accumulated separately).  (In the code the halves are taken from
the IEEE bits: hi = x with its lowest 27 significand bits cleared, lo = x − hi, grouped by the biased exponent;
the halves of |x| ≥ 2⁵¹³ are first divided by 2⁵¹², exactly, so that a group's float sum of values near the
largest double cannot overflow.)
Each group total (Σt_hi + Σt_lo)·2^(e−26) then becomes an integer and is added to its cell.  Non-finite values
are not summed: they are counted (+inf, −inf, NaN) and a sum with any of them is ±inf or NaN, as the float sum
would be.

Row-id hashing
--------------
Everything random in a summary is a function of the row id, never of the chunk: the bootstrap block of a row is
``splitmix64(row_id ⊕ seed) mod G`` and the randomisation V of an ensemble's rank PIT is a second hash of the same
id (Steele, Lea & Flood 2014, SplitMix64).  So a row contributes the same numbers whichever chunk it is in.

Equal-count edges
-----------------
:func:`equal_count_positions`, :func:`equal_count_edges` and :func:`bin_by_edges` give the equal-count bins of
:func:`calib_core.base.binning.equal_count_bins` from order statistics (value, row id) found in a first pass over
distributed data.  :mod:`calib_core.base.mergeable` re-exports these names.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import numpy as np

__all__ = [
    "EXACT_UNIT_BITS",
    "exact_bin_sums",
    "exact_bin_sums_columns",
    "exact_value",
    "exact_float",
    "exact_fraction",
    "splitmix64",
    "hash_uniform",
    "hash_block",
    "equal_count_positions",
    "equal_count_edges",
    "bin_by_edges",
]


#: Exact sums are integers in units of 2**-EXACT_UNIT_BITS.
EXACT_UNIT_BITS = 1138

_BLOCK_ROWS = 1 << 25

_HI_MASK = ~((1 << 27) - 1) & 0xFFFFFFFFFFFFFFFF  # clears the lowest 27 significand bits

_TOP_E, _TOP_SHIFT = 1536, 512  # biased exponents ≥ 1536 (|x| ≥ 2^513) are summed in units 2^512 larger

_WIDTH_BYTES = 296  # two's-complement width of a serialised exact sum (2,368 bits ≥ 1138 + 1024 + 64 + sign)


def exact_bin_sums(index: np.ndarray, n_cells: int, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Exact per-cell sums of ``values`` (cell of row i = ``index[i]`` ∈ 0..n_cells−1).

    Σ_{i: index_i = c} x_i for every cell c, exactly, as an integer in units of 2⁻¹¹³⁸ (module docstring); the fast
    path of :func:`exact_bin_sums_columns` when it applies (the same integers).

    Non-finite values are counted and left out of the sums.  O(N) NumPy passes plus O(cells × exponents) Python
    additions.

    Parameters
    ----------
    index : ndarray of int, shape (n,)
        The cell of every row.
    n_cells : int
        Number of cells.
    values : ndarray of shape (n,)
        The values.

    Returns
    -------
    sums : ndarray of object
        Python ints: the exact sums in units of 2⁻¹¹³⁸ (module docstring).
    nonfinite : ndarray of int64, shape (n_cells, 3)
        Counts of +inf, −inf and NaN values.

    References
    ----------
    Demmel, J. & Hida, Y. (2004). Accurate and efficient floating point summation. SIAM Journal on Scientific
    Computing 25(4), 1214–1248.

    Shewchuk, J. R. (1997). Adaptive precision floating-point arithmetic and fast robust geometric predicates.
    Discrete & Computational Geometry 18(3), 305–363.
    """
    return exact_bin_sums_columns(index, n_cells, [values])[0]


def _general_bin_sums(index: np.ndarray, n_cells: int, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`exact_bin_sums` for any values: non-finite ones counted, groups by (cell, biased exponent)."""
    index = np.asarray(index, dtype=np.int64)
    x = np.asarray(values, dtype=np.float64)
    sums = np.array([0] * n_cells, dtype=object)
    nonfinite = np.zeros((n_cells, 3), dtype=np.int64)
    finite = np.isfinite(x)
    if not finite.all():
        for j, mask in enumerate((x == np.inf, x == -np.inf, np.isnan(x))):
            if mask.any():
                nonfinite[:, j] = np.bincount(index[mask], minlength=n_cells)
        index, x = index[finite], x[finite]
    wide = n_cells * 2048 > 1 << 18  # many cells: group by the exponents present only
    for start in range(0, x.shape[0], _BLOCK_ROWS):
        _add_block(sums, index[start:start + _BLOCK_ROWS], n_cells, x[start:start + _BLOCK_ROWS], wide)
    return sums, nonfinite


_SIGNED_SPAN = 4099  # the fast path's groups: sign bit and biased exponent (the top 12 bits of a float64), per cell
# a stride of 4096 doubles would put every cell's sums 32 KiB apart, on the same L1 cache sets: 2–3× slower bincounts

_FAST_SIZE = 1 << 20  # the fast path's largest n_cells · 4099 (two float arrays of this length per column)


def exact_bin_sums_columns(index: np.ndarray, n_cells: int, columns: Sequence[np.ndarray]
                           ) -> list[tuple[np.ndarray, np.ndarray]]:
    """:func:`exact_bin_sums` of several columns on the same cells, the cell keys computed once.

    Fast path (at most 2²⁵ rows and n_cells · 4099 ≤ 2²⁰): rows are grouped by (cell, sign, biased exponent E) —
    the top 12 bits of the IEEE word, one shift — and each value is split into hi = x with its lowest 27 significand
    bits cleared and lo = x − hi (both exact), in cache-sized blocks of rows; float ``np.bincount`` over the groups
    then sums, within a group,
    integers below 2²⁶ times 2^(E−1048) (hi) and below 2²⁷ times 2^(E−1075) (lo), exact for fewer than 2²⁵ rows, and
    the O(cells × exponents) group totals become integers once (``np.frexp``: total = m·2⁵³ · 2^(e − 53), an
    int64 times a power of two).  A column with a non-finite value or one of magnitude ≥ 2⁵¹³ (whose group sum
    could overflow) shows non-zero sums in the groups E ≥ 1536 and takes the general path instead.  Either way the
    sum of a cell is Σx exactly, so the integers equal those of the general path bit for bit.

    Parameters
    ----------
    index : ndarray of int, shape (n,)
        The cell of every row.
    n_cells : int
        Number of cells.
    columns : sequence of ndarray of shape (n,)
        The values, one array per sum.

    Returns
    -------
    list of (ndarray of object, ndarray of int64)
        Per column, as :func:`exact_bin_sums`: the exact sums and the (+inf, −inf, NaN) counts per cell.

    References
    ----------
    Demmel, J. & Hida, Y. (2004). Accurate and efficient floating point summation. SIAM Journal on Scientific
    Computing 25(4), 1214–1248.

    Neal, R. M. (2015). Fast exact summation using small and large superaccumulators. arXiv:1505.05571.

    Examples
    --------
    >>> [(int(s[0]) >> 1138, int(s[1]) >> 1138) for s, _ in exact_bin_sums_columns(np.array([0, 1, 0]), 2,
    ...                                                                            [np.array([1.0, 2.0, 3.0])])]
    [(4, 2)]
    """
    index = np.asarray(index, dtype=np.int64)
    n = index.shape[0]
    base = scratch = None
    if 0 < n <= _BLOCK_ROWS and n_cells * _SIGNED_SPAN <= _FAST_SIZE:
        base = (index * _SIGNED_SPAN).view(np.uint64)
        scratch = np.empty((3, min(n, _CACHE_ROWS)), dtype=np.uint64)  # key, hi, lo of a block of rows
    out = []
    for values in columns:
        x = np.asarray(values, dtype=np.float64)
        found = _fast_bin_sums(base, n_cells, x, scratch) if base is not None else None
        out.append(found if found is not None else _general_bin_sums(index, n_cells, x))
    return out


_CACHE_ROWS = 1 << 16  # rows per block of the fast path: its key, hi and lo (1.5 MiB) stay in the CPU cache


def _fast_bin_sums(base: np.ndarray, n_cells: int, x: np.ndarray, scratch: np.ndarray
                   ) -> tuple[np.ndarray, np.ndarray] | None:
    """The fast path of :func:`exact_bin_sums_columns` for one column (None: take the general path).  Blocks of
    :data:`_CACHE_ROWS` rows; a group's float sum over the blocks is still a sum of fewer than 2²⁵ of its halves, so
    it is exact and equal to the one-pass sum."""
    bits = np.ascontiguousarray(x).view(np.uint64)
    size = n_cells * _SIGNED_SPAN
    s_hi = np.zeros(size)
    s_lo = np.zeros(size)
    for start in range(0, x.shape[0], _CACHE_ROWS):
        stop = min(x.shape[0], start + _CACHE_ROWS)
        key, hi_bits, lo_bits = scratch[:, : stop - start]
        np.right_shift(bits[start:stop], np.uint64(52), out=key)  # sign and biased exponent
        key += base[start:stop]
        np.bitwise_and(bits[start:stop], np.uint64(_HI_MASK), out=hi_bits)
        hi, lo = hi_bits.view(np.float64), lo_bits.view(np.float64)
        with np.errstate(invalid="ignore"):  # inf − inf: a non-finite value, caught below
            np.subtract(x[start:stop], hi, out=lo)
        k = key.view(np.int64)
        s_hi += np.bincount(k, weights=hi, minlength=size)
        s_lo += np.bincount(k, weights=lo, minlength=size)
    return fast_group_totals(s_hi, s_lo, n_cells)


def fast_group_totals(s_hi: np.ndarray, s_lo: np.ndarray, n_cells: int) -> tuple[np.ndarray, np.ndarray] | None:
    """The exact per-cell sums from the fast path's group sums (None: a group E ≥ 1536 or non-finite is used).

    ``s_hi`` / ``s_lo`` (length n_cells · 4099, group (cell, sign, biased exponent) at cell · 4099 + (bits ≫ 52)) are
    the float sums, within each group, of the halves hi = x with its lowest 27 significand bits cleared and
    lo = x − hi, in any order (each group sum is exact: fewer than 2²⁵ rows).  A compiled summariser that
    accumulates the halves itself turns them into the same integers here."""
    used = (s_hi != 0) | (s_lo != 0)  # NaN ≠ 0: a non-finite value marks its group
    top = used.reshape(n_cells, _SIGNED_SPAN)[:, :4096].reshape(n_cells, 2, 2048)[:, :, _TOP_E:]
    if top.any():
        return None
    groups = np.flatnonzero(used)
    vals = np.concatenate([s_hi[groups], s_lo[groups]])
    cells = np.concatenate([groups, groups]) // _SIGNED_SPAN
    keep = vals != 0
    m, e = np.frexp(vals[keep])
    mant = (m * 9007199254740992.0).astype(np.int64)  # m·2⁵³: an integer, |·| < 2⁵³
    acc = [0] * n_cells
    for c, a, sh in zip(cells[keep].tolist(), mant.tolist(), (e + (EXACT_UNIT_BITS - 53)).tolist(), strict=True):
        acc[c] += a << sh
    sums = np.empty(n_cells, dtype=object)
    sums[:] = acc
    return sums, np.zeros((n_cells, 3), dtype=np.int64)


def _add_block(sums: np.ndarray, index: np.ndarray, n_cells: int, x: np.ndarray, wide: bool) -> None:
    if x.shape[0] == 0:
        return
    bits = x.view(np.uint64)
    # biased exponent E: a group of equal E shares the grid of its halves (E = 0: zero and subnormals)
    e = bits >> np.uint64(52)
    e &= np.uint64(0x7FF)
    e_min, span = 0, 2048
    if wide:
        e_min = int(e.min())
        span = int(e.max()) - e_min + 1
        e -= np.uint64(e_min)
    key = index * span
    key += e.view(np.int64)
    hi = (bits & np.uint64(_HI_MASK)).view(np.float64)  # the top 26 significand bits: a multiple of 2^(E−1048)
    lo = x - hi  # exact: a multiple of 2^(E−1075), |lo| < 2^(E−1048)
    top = (e + np.uint64(e_min)) >= np.uint64(_TOP_E)
    if top.any():  # near the largest double a group's float sum would overflow: halved 2^512-fold first (exact)
        hi[top] = np.ldexp(hi[top], -_TOP_SHIFT)
        lo[top] = np.ldexp(lo[top], -_TOP_SHIFT)
    size = n_cells * span
    s_hi = np.bincount(key, weights=hi, minlength=size)
    s_lo = np.bincount(key, weights=lo, minlength=size)
    for k in np.flatnonzero((s_hi != 0) | (s_lo != 0)).tolist():
        cell = k // span
        shift = _TOP_SHIFT if k % span + e_min >= _TOP_E else 0
        total = 0
        for v in (float(s_hi[k]), float(s_lo[k])):
            if v:
                num, den = v.as_integer_ratio()  # den = 2^j, j ≤ 1074 < EXACT_UNIT_BITS
                total += num << (EXACT_UNIT_BITS - den.bit_length() + 1 + shift)
        sums[cell] += total


def exact_value(sums: Any, nonfinite: np.ndarray | None = None) -> Fraction | float:
    """The exact value of one exact sum, or ±inf / NaN if non-finite values were counted.

    Parameters
    ----------
    sums : int
        One exact sum.
    nonfinite : ndarray of shape (3,) or None, default None
        Its (+inf, −inf, NaN) counts.

    Returns
    -------
    fractions.Fraction or float
        The value.

    References
    ----------
    Demmel, J. & Hida, Y. (2004). Accurate and efficient floating point summation. SIAM Journal on Scientific
    Computing 25(4), 1214–1248.

    Shewchuk, J. R. (1997). Adaptive precision floating-point arithmetic and fast robust geometric predicates.
    Discrete & Computational Geometry 18(3), 305–363.
    """
    if nonfinite is not None:
        pos, neg, nan = (int(v) for v in np.asarray(nonfinite).reshape(-1)[:3])
        if nan or (pos and neg):
            return float("nan")
        if pos:
            return float("inf")
        if neg:
            return float("-inf")
    return Fraction(int(sums), 1 << EXACT_UNIT_BITS)


def exact_fraction(sums: Any) -> Fraction:
    """The exact value of a finite exact sum.

    Parameters
    ----------
    sums : int
        One exact sum.

    Returns
    -------
    fractions.Fraction
        The value.

    References
    ----------
    Demmel, J. & Hida, Y. (2004). Accurate and efficient floating point summation. SIAM Journal on Scientific
    Computing 25(4), 1214–1248.

    Shewchuk, J. R. (1997). Adaptive precision floating-point arithmetic and fast robust geometric predicates.
    Discrete & Computational Geometry 18(3), 305–363.
    """
    return Fraction(int(sums), 1 << EXACT_UNIT_BITS)


def _rounded(x: Fraction) -> float:
    """``float(x)`` with IEEE overflow: ±inf beyond the largest float64 (``float`` raises instead)."""
    try:
        return float(x)
    except OverflowError:
        return float("inf") if x > 0 else float("-inf")


def exact_float(sums: np.ndarray, nonfinite: np.ndarray | None = None) -> np.ndarray:
    """Exact sums rounded once to float64 (correctly rounded), element-wise; ±inf / NaN where non-finite values were
    counted.

    Parameters
    ----------
    sums : ndarray of object
        Exact sums.
    nonfinite : ndarray of shape (..., 3) or None, default None
        Their (+inf, −inf, NaN) counts.

    Returns
    -------
    ndarray of float64
        The rounded sums.

    References
    ----------
    Demmel, J. & Hida, Y. (2004). Accurate and efficient floating point summation. SIAM Journal on Scientific
    Computing 25(4), 1214–1248.

    Shewchuk, J. R. (1997). Adaptive precision floating-point arithmetic and fast robust geometric predicates.
    Discrete & Computational Geometry 18(3), 305–363.
    """
    s = np.asarray(sums, dtype=object)
    out = np.array([_rounded(exact_fraction(v)) for v in s.reshape(-1)], dtype=float).reshape(s.shape)
    if nonfinite is not None:
        nf = np.asarray(nonfinite).reshape(s.shape + (3,))
        out = np.where(nf[..., 0] > 0, np.inf, out)
        out = np.where(nf[..., 1] > 0, np.where(nf[..., 0] > 0, np.nan, -np.inf), out)
        out = np.where(nf[..., 2] > 0, np.nan, out)
    return out


def ints_to_bytes(a: np.ndarray) -> np.ndarray:
    flat = [int(v).to_bytes(_WIDTH_BYTES, "little", signed=True) for v in np.asarray(a, dtype=object).reshape(-1)]
    return np.frombuffer(b"".join(flat), dtype=np.uint8).reshape(np.shape(a) + (_WIDTH_BYTES,))


def bytes_to_ints(b: np.ndarray) -> np.ndarray:
    shape = b.shape[:-1]
    raw = np.ascontiguousarray(b, dtype=np.uint8).reshape(-1, _WIDTH_BYTES)
    vals = [int.from_bytes(row.tobytes(), "little", signed=True) for row in raw]
    out = np.empty(len(vals), dtype=object)
    out[:] = vals
    return out.reshape(shape)


_M1 = np.uint64(0xBF58476D1CE4E5B9)

_M2 = np.uint64(0x94D049BB133111EB)

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def splitmix64(x: np.ndarray, stream: int = 0) -> np.ndarray:
    """SplitMix64 finaliser of ``x + (stream + 1)·γ`` (γ = 0x9E3779B97F4A7C15; Steele, Lea & Flood 2014).

    A uint64 per row id that depends on the id and the stream only (not on the chunk the row is in).

    Parameters
    ----------
    x : ndarray of uint64
        Row ids.
    stream : int, default 0
        The stream.

    Returns
    -------
    ndarray of uint64
        The hashes.

    References
    ----------
    Steele, G. L., Lea, D. & Flood, C. H. (2014). Fast splittable pseudorandom number generators. OOPSLA,
    453–472.
    """
    z = np.asarray(x).astype(np.uint64, copy=True)
    with np.errstate(over="ignore"):
        z += _GOLDEN * np.uint64((stream + 1) & 0xFFFFFFFFFFFFFFFF)
        z ^= z >> np.uint64(30)
        z *= _M1
        z ^= z >> np.uint64(27)
        z *= _M2
        z ^= z >> np.uint64(31)
    return z


def hash_uniform(row_ids: np.ndarray, seed: int, stream: int) -> np.ndarray:
    """U(0, 1) numbers in [0, 1) from the row ids: the top 53 bits of ``splitmix64(id, stream)`` times 2⁻⁵³.

    The seed is mixed into the stream.

    Parameters
    ----------
    row_ids : ndarray of int
        Row ids.
    seed : int
        Seed.
    stream : int
        Stream.

    Returns
    -------
    ndarray of float64
        The numbers.

    References
    ----------
    Steele, G. L., Lea, D. & Flood, C. H. (2014). Fast splittable pseudorandom number generators. OOPSLA,
    453–472.
    """
    h = splitmix64(splitmix64(np.asarray(row_ids, dtype=np.int64).view(np.uint64), stream), int(seed) & 0xFFFFFFFF)
    return (h >> np.uint64(11)).astype(np.float64) * (1.0 / 9007199254740992.0)


def hash_block(row_ids: np.ndarray, seed: int, n_blocks: int) -> np.ndarray:
    """Bootstrap block of every row, ⌊U·G⌋ with U = :func:`hash_uniform` (stream 1).

    Uniform on 0..G−1 and a function of the row id only.

    Parameters
    ----------
    row_ids : ndarray of int
        Row ids.
    seed : int
        Seed.
    n_blocks : int
        G.

    Returns
    -------
    ndarray of int
        The blocks.

    References
    ----------
    Steele, G. L., Lea, D. & Flood, C. H. (2014). Fast splittable pseudorandom number generators. OOPSLA,
    453–472.
    """
    return np.minimum((hash_uniform(row_ids, seed, 1) * n_blocks).astype(np.int64), n_blocks - 1)


def equal_count_positions(n: int, n_bins: int) -> np.ndarray:
    """0-based sorted positions ⌈kN/B⌉, k = 1..B−1, of the rows that open bins 1..B−1 of B equal-count bins.

    As :func:`calib_core.base.binning.equal_count_bins` (row at sorted position i goes to bin ⌊iB/N⌋).  A first pass
    over distributed data needs exactly these order statistics (value and row id) of each (model, group).

    Parameters
    ----------
    n : int
        N.
    n_bins : int
        B.

    Returns
    -------
    ndarray of int
        The positions.

    References
    ----------
    Levi, D., Gispan, L., Giladi, N. & Fetaya, E. (2019). Evaluating and calibrating uncertainty prediction in
    regression tasks. arXiv:1905.11659 (Sensors 22, 5540, 2022).
    """
    k = np.arange(1, n_bins, dtype=np.int64)
    return (k * n + n_bins - 1) // n_bins


def equal_count_edges(values: np.ndarray, row_ids: np.ndarray, n_bins: int) -> tuple[np.ndarray, np.ndarray]:
    """Inner edges (value, row id) of B equal-count bins of ``values``, ties ordered by row id.

    The order statistics at :func:`equal_count_positions`.  :func:`bin_by_edges` with these edges reproduces
    ``binning.equal_count_bins`` exactly when the row ids increase with the row order (ties in a stable sort).

    Parameters
    ----------
    values : ndarray of shape (n,)
        The values.
    row_ids : ndarray of shape (n,)
        Their row ids.
    n_bins : int
        B.

    Returns
    -------
    edges : ndarray
        Edge values.
    edge_ids : ndarray
        Edge row ids.

    References
    ----------
    Levi, D., Gispan, L., Giladi, N. & Fetaya, E. (2019). Evaluating and calibrating uncertainty prediction in
    regression tasks. arXiv:1905.11659 (Sensors 22, 5540, 2022).
    """
    values = np.asarray(values, dtype=float)
    ids = np.asarray(row_ids, dtype=np.int64)
    order = np.lexsort((ids, values))
    pos = equal_count_positions(values.shape[0], n_bins)
    pos = pos[pos < values.shape[0]]
    return values[order[pos]], ids[order[pos]]


def bin_by_edges(values: np.ndarray, row_ids: np.ndarray, edges: np.ndarray, edge_ids: np.ndarray | None) -> np.ndarray:
    """Bin of every row for inner edges e_1 ≤ … ≤ e_{B−1}: the number of edges (e_k, id_k) ≤ (value, id).

    Lexicographic order (without ``edge_ids``: the number of e_k ≤ value).  Bins are [e_k, e_{k+1}).

    Parameters
    ----------
    values : ndarray of shape (n,)
        The values.
    row_ids : ndarray of shape (n,)
        Their row ids.
    edges : ndarray
        Inner edge values.
    edge_ids : ndarray or None
        Inner edge row ids.

    Returns
    -------
    ndarray of int
        The bins.

    References
    ----------
    Levi, D., Gispan, L., Giladi, N. & Fetaya, E. (2019). Evaluating and calibrating uncertainty prediction in
    regression tasks. arXiv:1905.11659 (Sensors 22, 5540, 2022).
    """
    edges = np.asarray(edges, dtype=float)
    if edge_ids is None:
        return np.searchsorted(edges, values, side="right").astype(np.int64)
    lo = np.searchsorted(edges, values, side="left")
    # a row is tied with an edge iff the first edge ≥ its value equals it (one binary search, not two)
    tied = np.flatnonzero(edges[np.minimum(lo, edges.size - 1)] == values) if edges.size else lo[:0]
    out = lo.astype(np.int64)
    if tied.size:
        eids = np.asarray(edge_ids, dtype=np.int64)
        v, ids = np.asarray(values)[tied], np.asarray(row_ids, dtype=np.int64)[tied]
        # among the tied edges (all equal to v), count those whose id ≤ the row's id: a (rows × edges) comparison
        le = (edges[None, :] == v[:, None]) & (eids[None, :] <= ids[:, None])
        out[tied] += le.sum(axis=1)
    return out
