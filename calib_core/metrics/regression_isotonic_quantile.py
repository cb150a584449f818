"""Isotonic τ-quantile regression: the best non-decreasing function of a forecast under the quantile score.

For a level τ, forecasts x_i and targets y_i, :func:`isotonic_quantile_regression` finds the non-decreasing f
minimising Σ_i QS_τ(f(x_i), y_i), QS_τ(q, y) = (1{y ≤ q} − τ)(q − y) the quantile (pinball) score (Koenker &
Bassett 1978) — PAV's answer for the pinball loss, the recalibrated forecast of CORP for quantiles (Dimitriadis,
Gneiting & Jordan 2021; Gneiting, Wolffram, Resin et al. 2023, "Model diagnostics and forecast evaluation for
quantiles", Annu. Rev. Stat. Appl. 10, §4).

It is computed exactly by threshold partitioning (Hochbaum & Queyranne 2003; Stout 2013): for a value c between
consecutive distinct targets, the rows whose fitted value exceeds c form the suffix (in x order, ties in x kept
together) minimising Σ (1{y_i ≤ c} − τ) — a prefix-sum arg-max — and the two sides are solved again with their values
restricted to below / above c.  All segments of one recursion depth are handled at once with segmented prefix sums,
so the cost is about log₂(distinct targets) ≈ 20 passes over the rows (the exact fit: one compiled sweep per depth,
the same comparisons as the NumPy passes of the grid fit).  Above :data:`EXACT_ROWS` rows
:func:`grid_isotonic_quantile_regression` visits only the thresholds of a grid of about :data:`GRID_VALUES` values
(:func:`quantile_grid`); its fit is the exact fit rounded up to the grid (the error bound of the decomposition is in
:mod:`calib_core.metrics.regression_decomposition`, which uses this module and re-exports its names).
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

import numpy as np

from ..base.binning import ArgsortResult, argsort_details, stable_argsort, stable_argsort_futures
from ..base.compiled import compiled_kernel

__all__ = [
    "EXACT_ROWS",
    "GRID_VALUES",
    "quantile_score",
    "isotonic_quantile_regression",
    "quantile_grid",
    "grid_isotonic_quantile_regression",
]


#: Up to this many rows the decomposition's isotonic fit is exact; above, it is fitted on a grid of targets with its
#: error bound (module docstring of :mod:`calib_core.metrics.regression_decomposition`).
EXACT_ROWS = 262_144

#: Grid values of the fit above :data:`EXACT_ROWS` rows: half order statistics of the targets, half of the forecasts
#: (clipped to the targets' range), so the cells are narrow both where the targets and where the fit lie.
GRID_VALUES = 4_096


def quantile_score(y, q, tau: float) -> np.ndarray:
    """Per-row quantile (pinball) score QS_τ(q, y) = (1{y ≤ q} − τ)(q − y).

    Equals ``scoringrules.quantile_score(y, q, τ)``.

    Parameters
    ----------
    y : array_like
        Targets.
    q : array_like
        Predicted τ-quantiles (broadcast against ``y``).
    tau : float
        Level τ in (0, 1).

    Returns
    -------
    ndarray
        The scores, ≥ 0.

    References
    ----------
    Koenker, R. & Bassett, G. (1978). Regression quantiles. Econometrica 46(1), 33–50.

    Gneiting, T. & Raftery, A. E. (2007). Strictly proper scoring rules, prediction, and estimation. Journal of
    the American Statistical Association 102(477), 359–378.
    """
    y = np.asarray(y, dtype=float)
    q = np.asarray(q, dtype=float)
    return ((y <= q) - tau) * (q - y)


def isotonic_quantile_regression(x, y, tau: float, *, order: np.ndarray | None = None,
                                 targets: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
    """The non-decreasing function of ``x`` minimising Σ_i QS_τ(f(x_i), y_i), evaluated at each row.

    Exact; rows with equal x get equal values; among the minimisers, one whose values are targets y.  Threshold
    partitioning: with V the sorted distinct targets and a segment of rows (contiguous in x order) whose values are
    known to lie in V[a..b), the threshold c = V[mid − 1] (mid = ⌊(a + b)/2⌋) splits it at the suffix start s
    maximising Σ_{start ≤ i < s} (1{y_i ≤ c} − τ) over the tie-group boundaries; rows before s take values in
    V[a..mid), rows from s on in V[mid..b).  Depth ⌈log₂ |V|⌉.

    Parameters
    ----------
    x : array_like of shape (n,)
        Forecasts.
    y : array_like of shape (n,)
        Targets.
    tau : float
        Level τ in (0, 1).
    order : ndarray of shape (n,) or None, default None
        A stable argsort of x (or any order sorting x: equal forecasts get one value whatever their order), to reuse
        sorts across levels.
    targets : (ndarray, ndarray) or None, default None
        ``np.unique(y, return_inverse=True)``, to reuse across levels.

    Returns
    -------
    ndarray of shape (n,)
        The fitted value x̂_i of every row.

    References
    ----------
    Hochbaum, D. S. & Queyranne, M. (2003). Minimizing a convex cost closure set. SIAM Journal on Discrete
    Mathematics 16(2), 192–207.

    Stout, Q. F. (2013). Isotonic regression via partitioning. Algorithmica 66(1), 93–112.

    Gneiting, T., Wolffram, D., Resin, J., Kraus, K., Bracher, J., Dimitriadis, T., Hagenmeyer, V., Jordan, A. I.,
    Lerch, S., Phipps, K. & Schienle, M. (2023). Model diagnostics and forecast evaluation for quantiles. Annual
    Review of Statistics and Its Application 10, 597–621.
    """
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"x and y must be 1-D of the same length, got {x.shape} and {y.shape}")
    if not 0.0 < tau < 1.0:
        raise ValueError(f"the quantile level τ must lie in (0, 1), got {tau}")
    n = x.size
    if n == 0:
        return np.empty(0)
    order = stable_argsort(x) if order is None else order
    values, inverse = np.unique(y, return_inverse=True) if targets is None else targets
    xs = x[order]
    allowed = np.ones(n + 1, dtype=bool)
    allowed[1:n] = xs[1:] > xs[:-1]
    starts, lo = _threshold_partition_kernel(np.ascontiguousarray(inverse[order], dtype=np.int64), allowed,
                                             int(values.size), float(tau))
    out = np.empty(n)
    out[order] = np.repeat(values[lo], np.diff(np.append(starts, n)))
    return out


def _tau_ratio(tau: float, n: int) -> tuple[int, int] | None:
    """(p, q) with p/q = τ as a double (q ≤ :data:`_RATIO_DENOMINATOR`) when the prefix values q·count − p·s of
    :func:`_threshold_partition` fit in 64-bit integers for N rows; else None."""
    ratio = Fraction(tau).limit_denominator(_RATIO_DENOMINATOR)
    p, q = ratio.numerator, ratio.denominator
    if p / q != tau or q * (n + 1) >= 2**62:
        return None
    return p, q


#: Largest denominator q of a level τ = p/q whose threshold recursion on a grid runs in integers (the default levels
#: 0.05 … 0.95 have q ≤ 20).
_RATIO_DENOMINATOR = 4_096

#: Up to this many segments a pass finds each segment's first arg-max with one ``argmax`` per segment (one read of
#: the prefix values); above, with ``maximum.reduceat`` and a search for the first row attaining it (four reads).
_FEW_SEGMENTS = 64


def _threshold_partition(
    xs: np.ndarray | None, yi: np.ndarray, m: int, tau: float, *, integer_ratio: bool = False
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The threshold-partitioning recursion of :func:`isotonic_quantile_regression` on rows sorted by x (``xs``;
    None when no two forecasts are equal) with target ranks ``yi`` ∈ 0..m−1: returns the final segments' ``starts``
    (row positions) and their value-rank ranges [lo, hi) (hi = lo + 1 for every segment when the recursion ran to
    the end).

    One pass per depth, all segments at once: the prefix value at split position s is
    #{i < s : y_i ≤ c_seg(i)} − τ·s (an integer count minus one product, so equal values compare equal), its
    per-segment maximum over the allowed positions (between different x) and the first position attaining it (one
    ``argmax`` per segment while there are at most :data:`_FEW_SEGMENTS`, else one ``maximum.reduceat`` and one
    ``flatnonzero``); rows of finished segments are left in the pass (their split is forced to the segment's end),
    which costs less than compacting them away.

    ``integer_ratio``: when τ is a ratio p/q of small integers as a double (every default level), compare
    q·count − p·s in integers instead: exact, so values equal for τ = p/q compare equal (in floating point,
    count − τ·s of two such positions differ by rounding, and the first arg-max among them is the rounding's
    choice), and half the memory per pass.  The fit is then optimal for τ = p/q, which differs from the double τ by
    less than 2⁻⁵² τ.
    """
    n = yi.size
    allowed = np.ones(n + 1, dtype=bool)
    if xs is not None:
        allowed[1:n] = xs[1:] > xs[:-1]
    all_allowed = bool(allowed.all())
    ratio = _tau_ratio(tau, n) if integer_ratio else None
    if ratio is None:  # count − τ·s in floating point
        scale, value_type, lowest = 1, np.float64, -np.inf
        tau_pos = tau * np.arange(n + 1, dtype=float)
    else:  # q·count − p·s in integers
        p, scale = ratio
        value_type = np.int32 if scale * (n + 1) < 2**31 else np.int64
        lowest = np.iinfo(value_type).min
        tau_pos = np.arange(n + 1, dtype=value_type)
        tau_pos *= p
    small = n < np.iinfo(np.int32).max
    rank_type = np.int16 if m <= np.iinfo(np.int16).max else np.int32 if m <= np.iinfo(np.int32).max else np.int64
    yi = yi.astype(rank_type, copy=False)  # narrow ranks: less memory to stream through every pass
    # buffers reused by every pass (fresh arrays of N elements per pass cost as much as the arithmetic)
    counts = np.zeros(n + 1, dtype=np.int32 if small else np.int64)
    below = np.empty(n, dtype=bool)
    cs = np.empty(n + 1, dtype=value_type)
    val = cs[:n] if all_allowed else np.empty(n, dtype=value_type)
    same = np.empty(n, dtype=bool)
    starts = np.array([0])
    lo = np.array([0])
    hi = np.array([m])
    while True:
        active = hi - lo > 1
        if not active.any():
            break
        ends = np.append(starts[1:], n)
        seg_len = ends - starts
        mid = (lo + hi) // 2
        if starts.size == 1:
            np.less_equal(yi, yi.dtype.type(mid[0] - 1), out=below)
        else:
            np.less_equal(yi, np.repeat((mid - 1).astype(yi.dtype), seg_len), out=below)
        np.cumsum(below, out=counts[1:])
        if ratio is None:
            np.subtract(counts, tau_pos, out=cs)
        else:
            np.multiply(counts, scale, out=cs)
            np.subtract(cs, tau_pos, out=cs)
        if not all_allowed:
            val.fill(lowest)
            np.copyto(val, cs[:n], where=allowed[:n])
            val[starts] = cs[starts]  # s = start (everything above c) is always allowed
        if starts.size <= _FEW_SEGMENTS:  # over s in [start, end): the first maximiser of each segment
            first = np.array([s + int(np.argmax(val[s:e])) for s, e in zip(starts.tolist(), ends.tolist())],
                             dtype=np.int64)
            seg_max = val[first]
        else:
            seg_max = np.maximum.reduceat(val, starts)
            np.equal(val, np.repeat(seg_max, seg_len), out=same)
            hits = np.flatnonzero(same)
            first = hits[np.searchsorted(hits, starts)]
        end_above = ~allowed[ends] | (cs[ends] <= seg_max)  # s = end (nothing above c) not better
        split = np.where(active & end_above, first, ends)  # finished segments: all rows stay "left"
        # new segments, in row order: left [start, split) with values [lo, mid) (unchanged when finished), then
        # right [split, end) with values [mid, hi) (active segments only); empty ones dropped
        two_starts = np.stack([starts, split], 1).ravel()
        two_lo = np.stack([lo, mid], 1).ravel()
        two_hi = np.stack([np.where(active, mid, hi), hi], 1).ravel()
        keep = np.stack([split > starts, active & (ends > split)], 1).ravel()
        starts, lo, hi = two_starts[keep], two_lo[keep], two_hi[keep]
    return starts, lo, hi


@compiled_kernel
def _threshold_partition_kernel(yi, allowed, m, tau):  # pragma: no cover - compiled
    """:func:`_threshold_partition` in floating point (``integer_ratio`` off) as one sweep over the rows per depth:
    the same prefix values count − τ·s (the count of rows before s at most their segment's threshold, over all
    rows, as NumPy's ``cumsum``), the same first arg-max per segment among the allowed positions, the same split
    rule; returns the final segments' ``starts`` and value ranks ``lo`` (the same bits: exact counts, one product
    and one subtraction per position, compared as NumPy compares them)."""
    n = yi.shape[0]
    starts = np.zeros(1, np.int64)
    lo = np.zeros(1, np.int64)
    hi = np.full(1, m, np.int64)
    while True:
        ns = starts.shape[0]
        any_active = False
        for i in range(ns):
            if hi[i] - lo[i] > 1:
                any_active = True
                break
        if not any_active:
            break
        new_starts = np.empty(2 * ns, np.int64)
        new_lo = np.empty(2 * ns, np.int64)
        new_hi = np.empty(2 * ns, np.int64)
        k = 0
        count = 0  # rows before the current position at most their own segment's threshold
        for i in range(ns):
            start = starts[i]
            end = starts[i + 1] if i + 1 < ns else n
            mid = (lo[i] + hi[i]) // 2
            threshold = mid - 1
            active = hi[i] - lo[i] > 1
            best = count - tau * start  # s = start is always allowed
            first = start
            for s in range(start + 1, end):
                count += 1 if yi[s - 1] <= threshold else 0  # a select, not a branch: targets come in random order
                if allowed[s]:
                    v = count - tau * s
                    if v > best:
                        best = v
                        first = s
            if end > start and yi[end - 1] <= threshold:
                count += 1
            end_above = (not allowed[end]) or (count - tau * end <= best)
            split = first if (active and end_above) else end
            if split > start:
                new_starts[k] = start
                new_lo[k] = lo[i]
                new_hi[k] = mid if active else hi[i]
                k += 1
            if active and end > split:
                new_starts[k] = split
                new_lo[k] = mid
                new_hi[k] = hi[i]
                k += 1
        starts = new_starts[:k].copy()
        lo = new_lo[:k].copy()
        hi = new_hi[:k].copy()
    return starts, lo


def quantile_grid(sorted_y: np.ndarray, size: int = GRID_VALUES // 2, *, order: np.ndarray | None = None
                  ) -> np.ndarray:
    """The distinct order statistics v_(⌈kN/size⌉), k = 1 … size, with v_(1): a grid for the fit.

    Of the targets, a grid of :func:`grid_isotonic_quantile_regression` (every fitted value has a grid cell).

    Parameters
    ----------
    sorted_y : ndarray of shape (n,)
        The values sorted (or unsorted when ``order`` is given: only the order statistics are gathered).
    size : int, default GRID_VALUES // 2
        Number of order statistics.
    order : ndarray of shape (n,) or None, default None
        An argsort of the values.

    Returns
    -------
    ndarray
        The increasing grid values.

    References
    ----------
    Hyndman, R. J. & Fan, Y. (1996). Sample quantiles in statistical packages. The American Statistician
    50(4), 361–365.

    Gneiting, T., Wolffram, D., Resin, J., Kraus, K., Bracher, J., Dimitriadis, T., Hagenmeyer, V., Jordan, A. I.,
    Lerch, S., Phipps, K. & Schienle, M. (2023). Model diagnostics and forecast evaluation for quantiles. Annual
    Review of Statistics and Its Application 10, 597–621.
    """
    n = sorted_y.size
    pos = np.r_[0, np.clip(-(-np.arange(1, int(size) + 1) * n // int(size)) - 1, 0, n - 1)]  # ⌈kN/size⌉ − 1
    return np.unique(sorted_y[pos if order is None else order[pos]])


#: Rows compared to guess which levels' forecasts share an order (:func:`level_orders`).
_ORDER_SAMPLE = 4_096


def level_orders(forecasts: Sequence[np.ndarray], y: np.ndarray | None = None
                  ) -> tuple[list[ArgsortResult], ArgsortResult | None]:
    """An order sorting each level's forecasts (:class:`~calib_core.base.binning.ArgsortResult`: the order and whether
    the forecasts are distinct; no sorted values), and the stable argsort of ``y`` with its sorted values (None
    without ``y``), all sorts started together.

    Levels whose forecasts are non-decreasing functions of one another (a constant scale, a location family, one
    forecast for several levels) share one sort: on :data:`_ORDER_SAMPLE` evenly spaced rows a level's forecasts are
    compared in the order of an earlier level's; where they are non-decreasing there, the earlier level's full order
    is checked on all rows (one gather) and used if it sorts this level's forecasts too.  An order that sorts x gives
    the same fit as x's stable argsort (ties in x are kept together whatever their order)."""
    n = forecasts[0].size if forecasts else 0
    owner = list(range(len(forecasts)))
    if n > 1:
        sample = np.unique(np.linspace(0, n - 1, min(n, _ORDER_SAMPLE)).astype(np.int64))
        sampled = [f[sample] for f in forecasts]
        sample_orders: dict[int, np.ndarray] = {}
        for j in range(1, len(forecasts)):
            for i in sorted(set(owner[:j])):
                if i not in sample_orders:
                    sample_orders[i] = np.argsort(sampled[i], kind="stable")
                xs = sampled[j][sample_orders[i]]
                if not (xs[1:] < xs[:-1]).any():
                    owner[j] = i
                    break
    owners = sorted(set(owner))
    extra = [] if y is None else [y]
    futures = stable_argsort_futures(*[forecasts[i] for i in owners], *extra,
                                     sorted_values=[False] * len(owners) + [True] * len(extra))
    done = {i: f.result() for i, f in zip(owners, futures)}
    results = []
    for j, i in enumerate(owner):
        if i != j:
            xs = forecasts[j][done[i].order]
            if (xs[1:] < xs[:-1]).any():  # the sample agreed, the rows do not: a sort of its own
                done[j] = argsort_details(forecasts[j])
            else:
                done[j] = ArgsortResult(done[i].order, None, bool((xs[1:] > xs[:-1]).all()))
        results.append(done[j])
    return results, (futures[-1].result() if extra else None)


def grid_isotonic_quantile_regression(
    x, y, tau: float, grid: np.ndarray, *, order: np.ndarray | None = None, cells: np.ndarray | None = None,
    sorted_x: np.ndarray | None = None, sorted_y: np.ndarray | None = None, distinct_x: bool = False,
) -> tuple[np.ndarray, float]:
    """The exact isotonic τ-quantile fit x̂ rounded up to ``grid``, x̂_G = ⌈x̂⌉_G, and a bound on its cost.

    Computed by the threshold recursion over the grid's values only (⌈log₂|grid|⌉ passes); ``fit_bound`` ≥
    S̄(x̂_G) − S̄(x̂) ≥ 0 bounds its mean quantile score (module docstring of
    :mod:`calib_core.metrics.regression_decomposition`).

    At a level τ that is a ratio p/q of small integers as a double (every default level) the recursion compares in
    integers (``_threshold_partition``): where several fits are exact (ties of the prefix values at τ = p/q) it rounds
    up the one with the earliest splits, which can differ from :func:`isotonic_quantile_regression`'s floating-point
    choice; the bound holds for the exact fit it rounds.  The bound uses the exact fit's values being targets: in the
    cell (c_{j−1}, c_j] they are at least t_j, the smallest target above c_{j−1}, so the rounding moves them by at most
    c_j − t_j (0 when the cell's only target is c_j: a grid holding every target gives the exact fit and a zero bound).

    Parameters
    ----------
    x : array_like of shape (n,)
        Forecasts.
    y : array_like of shape (n,)
        Targets.
    tau : float
        Level τ in (0, 1).
    grid : ndarray
        Increasing values containing min y and max y (e.g. :func:`quantile_grid` of the targets).
    order : ndarray or None, default None
        A stable argsort of x (or any order sorting x: the fit is the same whatever the order among equal forecasts).
    cells : ndarray or None, default None
        ``np.searchsorted(grid, y)`` (to reuse across levels).
    sorted_x : ndarray or None, default None
        ``x[order]`` (not needed with ``distinct_x``).
    sorted_y : ndarray or None, default None
        ``np.sort(y)`` (to reuse across levels).
    distinct_x : bool, default False
        No two forecasts are equal.

    Returns
    -------
    fit : ndarray of shape (n,)
        x̂_G per row.
    fit_bound : float
        The bound on S̄(x̂_G) − S̄(x̂).

    References
    ----------
    Hochbaum, D. S. & Queyranne, M. (2003). Minimizing a convex cost closure set. SIAM Journal on Discrete
    Mathematics 16(2), 192–207.

    Stout, Q. F. (2013). Isotonic regression via partitioning. Algorithmica 66(1), 93–112.

    Gneiting, T., Wolffram, D., Resin, J., Kraus, K., Bracher, J., Dimitriadis, T., Hagenmeyer, V., Jordan, A. I.,
    Lerch, S., Phipps, K. & Schienle, M. (2023). Model diagnostics and forecast evaluation for quantiles. Annual
    Review of Statistics and Its Application 10, 597–621.
    """
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    grid = np.asarray(grid, dtype=float)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"x and y must be 1-D of the same length, got {x.shape} and {y.shape}")
    if not 0.0 < tau < 1.0:
        raise ValueError(f"the quantile level τ must lie in (0, 1), got {tau}")
    n = x.size
    if n == 0:
        return np.empty(0), 0.0
    if grid.size == 0 or grid[0] > y.min() or grid[-1] < y.max() or np.any(np.diff(grid) <= 0):
        raise ValueError("the grid must be increasing and contain the smallest and the largest target")
    order = stable_argsort(x) if order is None else order
    cell = np.searchsorted(grid, y, side="left") if cells is None else cells  # grid[cell − 1] < y ≤ grid[cell]
    cell_sorted = cell[order]
    xs = None if distinct_x else x[order] if sorted_x is None else sorted_x
    starts, lo, _ = _threshold_partition(xs, cell_sorted, grid.size, tau, integer_ratio=True)
    seg_len = np.diff(np.append(starts, n))
    # targets in the cell of their own fitted value (cell 0 = min y: no error), counted per segment of equal fit
    own = np.add.reduceat(cell_sorted == np.repeat(lo.astype(cell_sorted.dtype), seg_len), starts, dtype=np.int64)
    sorted_y = np.sort(y) if sorted_y is None else sorted_y
    first = sorted_y[np.minimum(np.searchsorted(sorted_y, grid[:-1], side="right"), n - 1)]  # t_j, j ≥ 1
    widths = np.r_[0.0, np.maximum(grid[1:] - first, 0.0)]
    bound = (1.0 + tau) * float(np.dot(np.bincount(lo, own, minlength=grid.size), widths)) / n
    out = np.empty(n)
    out[order] = np.repeat(grid[lo], seg_len)
    return out, bound


def quantile_score_into(y: np.ndarray, q, tau: float, buffers: tuple[np.ndarray, np.ndarray, np.ndarray]
                         ) -> np.ndarray:
    """:func:`quantile_score` (the same operations, so the same bits) written into ``buffers`` (two float arrays and
    a bool array of y's length, reused: large temporaries cost as much as the arithmetic); returns the first."""
    out, factor, below = buffers
    np.less_equal(y, q, out=below)
    np.subtract(below, tau, out=factor)
    np.subtract(q, y, out=out)
    return np.multiply(factor, out, out=out)


def empirical_quantile(y: np.ndarray, tau: float, *, targets: tuple[np.ndarray, np.ndarray] | None = None,
                        cum_counts: np.ndarray | None = None) -> float:
    """A minimiser of Σ QS_τ(r, y_i) over constants r: the order statistic y_(⌈Nτ⌉) (from the distinct targets and
    their cumulative counts when given: no sort)."""
    k = int(np.ceil(y.size * tau - 1e-12))
    k = min(max(k, 1), y.size)
    if targets is not None:
        cum = np.cumsum(np.bincount(targets[1], minlength=targets[0].size)) if cum_counts is None else cum_counts
        return float(targets[0][np.searchsorted(cum, k)])
    return float(np.sort(y)[k - 1])
