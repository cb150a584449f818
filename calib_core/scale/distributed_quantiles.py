"""Exact order statistics of distributed values by a radix select, and the bin edges cut on them: the exact
equal-count σ edges of a regression (with an ensemble's kernel floor) and the equal-mass confidence edges of a
classification.

Each pass reads every partition and counts the next bits of the IEEE-754 keys of the values inside the buckets that
hold the wanted ranks; the client narrows each bucket; after at most three passes (24 + 20 + 20 bits), or earlier
once a bucket is small enough to gather (typically the second pass), the value at each rank is known exactly.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..base.mergeable import equal_count_positions
from ..base.predictions import iter_subsets
from ..base.regression import SampleSet
from .classification import classification_rows_values
from .distributed_cluster import run_tree
from .distributed_light import LightLayout, light_sigma_subsets
from .distributed_partitions import Partition
from .distributed_reading import ReadOptions, global_ids, read_partition
from .regression_spec import silverman_bandwidths

__all__ = [
    "equal_mass_edges_distributed",
    "float_keys",
    "key_values",
    "order_statistics",
    "regression_edges",
    "regression_edges_and_kde_floor",
]

_GATHER_LIMIT = 4_000_000  # values the client gathers at most in one pass of the order statistics

_SIGN = np.uint64(1 << 63)


def float_keys(x: np.ndarray) -> np.ndarray:
    """Order-preserving uint64 keys of float64 values: x < x' ⇔ key(x) < key(x').

    x ≥ 0: the IEEE-754 bits with the sign bit set; x < 0: all bits flipped; −0.0 gets the key of +0.0.

    Parameters
    ----------
    x : ndarray of float64
        Values (no NaN).

    Returns
    -------
    ndarray of uint64
        Their keys.

    Examples
    --------
    >>> k = float_keys(np.array([-2.0, -0.0, 0.0, 1.5]))
    >>> bool(np.all(np.diff(k.astype(object)) >= 0)), bool(k[1] == k[2])
    (True, True)

    References
    ----------
    .. [1] IEEE (2008). IEEE Standard for Floating-Point Arithmetic, IEEE Std 754-2008.
    .. [2] Knuth, D. E. (1998). The Art of Computer Programming, Vol. 3: Sorting and Searching, 2nd ed., §5.2.5
       (radix sorting). Addison-Wesley.
    """
    x = np.ascontiguousarray(x, dtype=np.float64)
    bits = x.view(np.uint64)
    neg = (bits >> np.uint64(63)).astype(bool)
    key = np.where(neg, ~bits, bits | _SIGN)
    key[key == ~_SIGN] = _SIGN
    return key


def key_values(key: np.ndarray) -> np.ndarray:
    """Inverse of :func:`float_keys` (−0.0 comes back as +0.0).

    Parameters
    ----------
    key : ndarray of uint64
        Keys.

    Returns
    -------
    ndarray of float64
        The values.

    Examples
    --------
    >>> key_values(float_keys(np.array([-2.0, 0.5, 3.0])))
    array([-2. ,  0.5,  3. ])

    References
    ----------
    .. [1] IEEE (2008). IEEE Standard for Floating-Point Arithmetic, IEEE Std 754-2008.
    """
    key = np.asarray(key, dtype=np.uint64)
    pos = (key & _SIGN).astype(bool)
    return np.where(pos, key ^ _SIGN, ~key).view(np.float64)


# bits of the 128-bit (value key, row id) counted by successive passes: the first digit is the sign, the exponent and
# 12 significand bits, so a bucket spans a relative 2⁻¹² of σ and the buckets holding the wanted ranks are small
# enough to gather in the second pass (two passes over the data) up to about 10⁹ rows of a smooth distribution
_WIDTHS = (24, 20, 20, 24, 20, 20)
_STARTS = (0, 24, 44, 64, 88, 108)
_DENSE_SPAN = 1 << 22  # digits counted with a bincount (no sort) when they span at most this many values


@dataclass
class _Target:
    subset: Any
    rank: int  # wanted 0-based rank within the subset
    prefix: int = 0  # known top bits of the 128-bit key (value key << 64 | row id)
    bits: int = 0  # how many
    below: int = 0  # values of the subset whose key is below the bucket
    size: int = 0  # values of the subset in the bucket
    value: float | None = None
    row_id: int | None = None


Ask = tuple[Any, int, int, str]  # (subset, known bits, prefix, "count" | "gather")


def _in_bucket(keys: np.ndarray, ids: np.ndarray, bits: int, prefix: int) -> np.ndarray | slice:
    if bits == 0:
        return slice(None)
    if bits <= 64:
        return (keys >> np.uint64(64 - bits)) == np.uint64(prefix)
    hi, lo_bits = prefix >> (bits - 64), bits - 64
    return (keys == np.uint64(hi)) & ((ids >> np.uint64(64 - lo_bits)) == np.uint64(prefix & ((1 << lo_bits) - 1)))


def _digits(keys: np.ndarray, ids: np.ndarray, bits: int) -> np.ndarray:
    width = _WIDTHS[_STARTS.index(bits)]
    word, shift = (keys, bits) if bits < 64 else (ids, bits - 64)
    return ((word << np.uint64(shift)) if shift else word) >> np.uint64(64 - width)


def _stat_leaf(part: Partition, load: Callable[[Partition], Mapping[Any, tuple[np.ndarray, np.ndarray]]],
               asks: Sequence[Ask] | None) -> dict:
    """One partition's share of a radix pass: for each ask, the distinct next digits of the 128-bit keys inside the
    bucket and their counts (``count``), or the bucket's (value key, row id) pairs in order (``gather``);
    ``asks=None``: the top digits of every subset."""
    data = {s: (float_keys(np.asarray(v, dtype=np.float64)), np.asarray(i, dtype=np.int64).view(np.uint64))
            for s, (v, i) in load(part).items()}
    if asks is None:
        asks = [(s, 0, 0, "count") for s in data]
    out: dict = {}
    tops: dict = {}  # (subset, bits) → the rows in any asked bucket and their top bits, found once for all asks
    for ask in asks:
        subset, bits, prefix, mode = ask
        if subset not in data or data[subset][0].size == 0:
            continue
        keys, ids = data[subset]
        if 0 < bits <= 64:
            found = tops.get((subset, bits))
            if found is None:  # one pass over the rows for every bucket asked at this depth, not one per bucket
                prefixes = np.array(sorted({a[2] for a in asks if a[0] == subset and a[1] == bits}), dtype=np.uint64)
                top = keys >> np.uint64(64 - bits)
                lo, span = prefixes[0], int(prefixes[-1] - prefixes[0]) + 1
                if span <= _DENSE_SPAN:  # a table of the asked buckets over their span: one gather per row
                    table = np.zeros(span + 1, dtype=bool)
                    table[(prefixes - lo).astype(np.int64)] = True
                    off = top - lo  # wraps below lo to a huge value: clipped onto the table's False end
                    hit = table[np.minimum(off, np.uint64(span)).astype(np.int64)]
                else:
                    hit = np.isin(top, prefixes)
                rows = np.flatnonzero(hit)
                found = tops[(subset, bits)] = (top[rows], keys[rows], ids[rows])
            top, keys, ids = found
            sel = top == np.uint64(prefix)
        else:
            sel = _in_bucket(keys, ids, bits, prefix)
        k, i = keys[sel], ids[sel]
        if mode == "gather":
            order = np.lexsort((i, k))
            out[ask] = (k[order], i[order])
        else:
            out[ask] = _count_digits(_digits(k, i, bits))
    return out


def _count_digits(d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(distinct digits, counts) of uint64 digits: a bincount over the digits' span when it is at most 2²² values
    (O(n), no sort), else ``numpy.unique``."""
    if d.size == 0:
        return d, np.zeros(0, dtype=np.int64)
    lo = d.min()
    span = int(d.max() - lo) + 1
    if span > _DENSE_SPAN:
        return np.unique(d, return_counts=True)
    counts = np.bincount((d - lo).astype(np.int64), minlength=span)
    nz = np.flatnonzero(counts)
    return nz.astype(np.uint64) + lo, counts[nz]


def _stat_combine(*parts: dict) -> dict:
    """Sum of digit counts / ordered union of gathered pairs, per ask."""
    grouped: dict = {}
    for part in parts:
        for ask, val in part.items():
            grouped.setdefault(ask, []).append(val)
    out: dict = {}
    for ask, vals in grouped.items():
        a = np.concatenate([x for x, _ in vals])
        b = np.concatenate([y for _, y in vals])
        if ask[3] == "gather":
            order = np.lexsort((b, a))
            out[ask] = (a[order], b[order])
        else:
            digits, inverse = np.unique(a, return_inverse=True)
            out[ask] = (digits, np.bincount(inverse, weights=b.astype(np.float64)).astype(np.int64))
    return out


def _descend(t: _Target, digits: np.ndarray, counts: np.ndarray) -> None:
    """Move target ``t`` into the next digit bucket under its prefix that holds its rank."""
    width = _WIDTHS[_STARTS.index(t.bits)]
    c = np.cumsum(counts)
    i = int(np.searchsorted(c, t.rank - t.below, side="right"))
    t.below += int(c[i - 1]) if i else 0
    t.size = int(counts[i])
    t.prefix = (t.prefix << width) | int(digits[i])
    t.bits += width


def order_statistics(
    client: Any,
    parts: Sequence[Partition],
    load: Callable[[Partition], Mapping[Any, tuple[np.ndarray, np.ndarray]]],
    ranks: Callable[[Any, int], Sequence[int]],
    *,
    with_ids: bool = True,
    gather_limit: int = _GATHER_LIMIT,
) -> tuple[dict[Any, int], dict[Any, dict[int, tuple[float, int]]], int]:
    """Exact order statistics (value, row id) of distributed values, per subset, ties ordered by row id.

    Radix select on 128-bit keys (order-preserving key of the value, :func:`float_keys`, then the row id): the first
    pass counts every subset's values by their top 24 bits, which also gives n; each later pass either gathers the
    (value, id) pairs inside the buckets that hold a wanted rank, when those buckets hold at most ``gather_limit``
    rows together, or counts the next 20–24 bits inside them.  Exact, with memory bounded by the distinct digits of a
    bucket (≤ 2²⁴ counts) or ``gather_limit`` pairs.

    Parameters
    ----------
    client : distributed.Client or None
        The cluster (None: in this process).
    parts : sequence of Partition
        The partitions.
    load : callable
        ``load(part)`` → for one partition, each subset's float values and their int64 row ids ≥ 0 (a row may be
        in several subsets).  NaN is not allowed.  Sent to the workers: a closure over module-level functions.
    ranks : callable
        ``ranks(subset, n)`` → the wanted 0-based ranks in a subset of n values, sorted by (value, row id) — the
        order of a stable sort when the ids follow the row order.
    with_ids : bool, default True
        False: stop once the value is known (the id returned is then −1).
    gather_limit : int, default 4,000,000
        Most pairs the client gathers in one pass.

    Returns
    -------
    totals : dict
        n per subset.
    stats : dict
        {subset: {rank: (value, row id)}}.
    passes : int
        The number of passes over the data.

    Raises
    ------
    ValueError
        If a wanted rank is outside 0 … n − 1.

    References
    ----------
    .. [1] Knuth, D. E. (1998). The Art of Computer Programming, Vol. 3: Sorting and Searching, 2nd ed., §5.2.5
       (radix sorting). Addison-Wesley.
    .. [2] IEEE (2008). IEEE Standard for Floating-Point Arithmetic, IEEE Std 754-2008.
    """
    first = run_tree(client, lambda p: _stat_leaf(p, load, None), parts, _stat_combine, stage="quantiles-0")
    totals = {ask[0]: int(counts.sum()) for ask, (_, counts) in first.items()}
    targets = [_Target(s, int(r)) for s in sorted(totals, key=str) for r in sorted(set(ranks(s, totals[s])))]
    for t in targets:
        if not 0 <= t.rank < totals[t.subset]:
            raise ValueError(f"rank {t.rank} outside 0..{totals[t.subset] - 1} of subset {t.subset!r}")
        _descend(t, *first[(t.subset, 0, 0, "count")])
    passes = 1
    for pass_no in range(1, len(_WIDTHS) + 1):
        open_targets = [t for t in targets if t.value is None]
        for t in open_targets:
            if t.bits >= 64 and (not with_ids or t.bits == 128):
                t.value = float(key_values(np.array([t.prefix >> (t.bits - 64)], dtype=np.uint64))[0])
                t.row_id = int(t.prefix & ((1 << 64) - 1)) if t.bits == 128 else -1
        open_targets = [t for t in targets if t.value is None]
        if not open_targets:
            break
        buckets = {(t.subset, t.bits, t.prefix): t.size for t in open_targets}
        mode = "gather" if sum(buckets.values()) <= gather_limit else "count"
        asks = sorted(((s, b, p, mode) for s, b, p in buckets), key=str)
        result = run_tree(client, lambda p, asks=asks: _stat_leaf(p, load, asks), parts, _stat_combine,
                          stage=f"quantiles-{pass_no}")
        passes += 1
        for t in open_targets:
            got = result[(t.subset, t.bits, t.prefix, mode)]
            if mode == "gather":
                j = t.rank - t.below
                t.value = float(key_values(got[0][j : j + 1])[0])
                t.row_id = int(got[1][j].view(np.int64)) if with_ids else -1
            else:
                _descend(t, *got)
    out: dict[Any, dict[int, tuple[float, int]]] = {}
    for t in targets:
        assert t.value is not None and t.row_id is not None
        out.setdefault(t.subset, {})[t.rank] = (t.value, t.row_id)
    return totals, out, passes


_KDE = "kernel bandwidths"  # the subset of the ensembles' positive Silverman bandwidths (subsets of σ are tuples)


def _sigma_subsets(part: Partition, options: ReadOptions, by_group: bool,
                   kde: bool = False, light: LightLayout | None = None) -> dict[Any, tuple[np.ndarray, np.ndarray]]:
    if light is not None and not kde:  # three valid float columns: σ without the parser (distributed_light)
        found = light_sigma_subsets(part, light)
        if found is not None:
            return found
    pset = read_partition(part, options)
    if pset.n_rows == 0 or pset.dist is None:
        return {}
    sigma = np.asarray(pset.dist.std(), dtype=np.float64)
    ids = global_ids(part, pset)
    out = {(m, g): (sigma[mask], ids[mask]) for m, g, mask in iter_subsets(pset, by_group)}
    if kde and isinstance(pset.dist, SampleSet):
        h = silverman_bandwidths(pset.dist.samples)
        positive = h > 0
        out[_KDE] = (h[positive], ids[positive])
    return out


def regression_edges(client: Any, parts: Sequence[Partition], options: ReadOptions, *, n_bins: int,
                     by_group: bool = True) -> tuple[dict[tuple[str, str], tuple[np.ndarray, np.ndarray]], int]:
    """The exact equal-count σ edges of every (model, group) of a distributed data set.

    The order statistics (σ, row number) at ``mergeable.equal_count_positions(n, n_bins)`` (ties by row number, as
    the in-memory stable sort breaks them), by :func:`order_statistics`.

    Parameters
    ----------
    client : distributed.Client or None
        The cluster (None: in this process).
    parts : sequence of Partition
        The partitions.
    options : ReadOptions
        How each partition is read.
    n_bins : int
        B, the Levi σ-bins.
    by_group : bool, default True
        Edges per (model, group) as well as per model.

    Returns
    -------
    edges : dict of (str, str) to (ndarray, ndarray)
        (model, group) → the inner edges (σ values, row ids).
    passes : int
        The number of data passes made.

    References
    ----------
    .. [1] Levi, D., Gispan, L., Giladi, N., & Fetaya, E. (2019). Evaluating and calibrating uncertainty
       prediction in regression tasks. arXiv:1905.11659.
    .. [2] Knuth, D. E. (1998). The Art of Computer Programming, Vol. 3: Sorting and Searching, 2nd ed., §5.2.5
       (radix sorting). Addison-Wesley.
    """
    edges, _, passes = regression_edges_and_kde_floor(client, parts, options, n_bins=n_bins, by_group=by_group,
                                                      kde=False)
    return edges, passes


def regression_edges_and_kde_floor(
    client: Any, parts: Sequence[Partition], options: ReadOptions, *, n_bins: int, by_group: bool = True,
    kde: bool = True, light: LightLayout | None = None,
) -> tuple[dict[tuple[str, str], tuple[np.ndarray, np.ndarray]], float, int]:
    """:func:`regression_edges` and, for ensembles, the kernel floor of their NLL in the same passes.

    The floor is 1% of the median positive Silverman bandwidth h = 1.06·s·M^(−1/5) over all valid rows
    (``SampleSet``'s floor, as ``regression.summary.spec_for_regression`` takes it over a whole set), the median
    being NumPy's — the middle order statistic, or the mean of the two middle ones — of the exact order statistics.

    Parameters
    ----------
    client : distributed.Client or None
        The cluster (None: in this process).
    parts : sequence of Partition
        The partitions.
    options : ReadOptions
        How each partition is read.
    n_bins : int
        B, the Levi σ-bins.
    by_group : bool, default True
        Edges per (model, group) as well as per model.
    kde : bool, default True
        Also compute the kernel floor (ensembles).
    light : LightLayout, optional
        Read valid partitions of a plain Gaussian data set without the parser
        (:mod:`~calib_core.scale.distributed_light`; the same σ and ids).

    Returns
    -------
    edges : dict of (str, str) to (ndarray, ndarray)
        As :func:`regression_edges`.
    floor : float
        0.0 without ``kde``, 1e-12 when no bandwidth is positive.
    passes : int
        The number of data passes made.

    References
    ----------
    .. [1] Levi, D., Gispan, L., Giladi, N., & Fetaya, E. (2019). Evaluating and calibrating uncertainty
       prediction in regression tasks. arXiv:1905.11659.
    .. [2] Silverman, B. W. (1986). Density Estimation for Statistics and Data Analysis, §3.4.2. Chapman & Hall.
    .. [3] Knuth, D. E. (1998). The Art of Computer Programming, Vol. 3: Sorting and Searching, 2nd ed., §5.2.5
       (radix sorting). Addison-Wesley.
    """

    def ranks(subset: Any, n: int) -> list[int]:
        if subset == _KDE:
            return sorted({(n - 1) // 2, n // 2})
        pos = equal_count_positions(n, n_bins)
        return [int(p) for p in pos[pos < n]]

    totals, stats, passes = order_statistics(client, parts,
                                             lambda p: _sigma_subsets(p, options, by_group, kde, light), ranks)
    floor = 0.0
    if kde:
        found = stats.pop(_KDE, None)
        if found:
            n = totals[_KDE]
            middle = np.array([found[r][0] for r in sorted({(n - 1) // 2, n // 2})], dtype=np.float64)
            floor = 0.01 * float(np.median(middle))
        else:
            floor = 1e-12
    edges = {}
    for subset, found in stats.items():
        order = sorted(found)
        edges[subset] = (np.array([found[r][0] for r in order], dtype=np.float64),
                         np.array([found[r][1] for r in order], dtype=np.int64))
    return edges, floor, passes


def _confidence_subsets(part: Partition, options: ReadOptions,
                        by_group: bool) -> dict[Any, tuple[np.ndarray, np.ndarray]]:
    pset = read_partition(part, options)
    if pset.n_rows == 0:
        return {}
    conf = np.asarray(classification_rows_values(pset), dtype=np.float64)
    ids = global_ids(part, pset)
    return {(m, g): (conf[mask], ids[mask]) for m, g, mask in iter_subsets(pset, by_group)}


def _quantile_positions(n: int, n_bins: int) -> list[tuple[float, int, float]]:
    """For q = k/M, k = 0..M: NumPy's linear-method virtual index v = (n − 1)·q, its floor i and v − i."""
    out = []
    for q in np.linspace(0.0, 1.0, n_bins + 1):
        v = (n - 1) * q
        i = int(np.floor(v))
        out.append((v, i, v - i))
    return out


def equal_mass_edges_distributed(client: Any, parts: Sequence[Partition], options: ReadOptions, *, n_bins: int,
                                 by_group: bool = True) -> tuple[dict[tuple[str, str], np.ndarray], int]:
    """The equal-mass confidence edges of every (model, group) of a distributed classification set, exactly.

    ``binning.equal_mass_edges`` (``np.quantile`` of the top-label confidences at q = k/M, linear method): with
    v = (n − 1)·q, i = ⌊v⌋ and the order statistics x₍ᵢ₎, x₍ᵢ₊₁₎ (:func:`order_statistics`, values only), the edge
    is ``np.quantile([x₍ᵢ₎, x₍ᵢ₊₁₎], v − i)`` — NumPy's own interpolation of the same two values — or x₍ₙ₋₁₎ when
    v ≥ n − 1.

    Parameters
    ----------
    client : distributed.Client or None
        The cluster (None: in this process).
    parts : sequence of Partition
        The partitions.
    options : ReadOptions
        How each partition is read.
    n_bins : int
        M, the confidence bins.
    by_group : bool, default True
        Edges per (model, group) as well as per model.

    Returns
    -------
    edges : dict of (str, str) to ndarray of shape (M + 1,)
        The edges of every subset.
    passes : int
        The number of data passes made.

    References
    ----------
    .. [1] Naeini, M. P., Cooper, G. F., & Hauskrecht, M. (2015). Obtaining well calibrated probabilities using
       Bayesian binning. Proceedings of the 29th AAAI Conference on Artificial Intelligence, 2901–2907.
    .. [2] Hyndman, R. J., & Fan, Y. (1996). Sample quantiles in statistical packages. The American Statistician,
       50(4), 361–365.
    .. [3] Knuth, D. E. (1998). The Art of Computer Programming, Vol. 3: Sorting and Searching, 2nd ed., §5.2.5
       (radix sorting). Addison-Wesley.
    """

    def ranks(subset: Any, n: int) -> list[int]:
        return sorted({r for v, i, _ in _quantile_positions(n, n_bins) for r in ((n - 1,) if v >= n - 1
                                                                                  else (i, i + 1))})

    totals, stats, passes = order_statistics(client, parts, lambda p: _confidence_subsets(p, options, by_group),
                                             ranks, with_ids=False)
    edges = {}
    for subset, found in stats.items():
        n = totals[subset]
        vals = [found[n - 1][0] if v >= n - 1 else float(np.quantile(np.array([found[i][0], found[i + 1][0]]), g))
                for v, i, g in _quantile_positions(n, n_bins)]
        edges[subset] = np.array(vals, dtype=np.float64)
    return edges, passes
