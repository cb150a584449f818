"""The clinical set of every one-vs-rest column of an (n × K) probability matrix in four compiled passes over the
matrix, read in place (no column copies, no per-class outcome arrays).

At large N the clinical set of K classes used to walk the rows once per class and per statistic: a transposed copy
of the matrix, a 0/1 outcome array per class, the logit moments of the logistic fits
(:mod:`~calib_core.metrics.classification_clinical_moments`), the clipped copy, the cut points (a selection) and the
groups of Hosmer–Lemeshow, the bin sums, the deviations and the E50 / E90 selection of the binned loess
(:mod:`~calib_core.metrics.classification_loess_binned`).  Here the same sums, each added in the same order (row
order per column and per bin, the same row blocks), come from four passes over the matrix for all classes at once:

1. **Scan** — min and max of every column (the loess bins' range) and a histogram of the clipped p̃ = clip(p, ε,
   1 − ε) over monotone cells (the top bits of the double: 256 cells per binade), which locates the order statistics
   of Hosmer–Lemeshow's cut points c_j = Q(j/g) (linear interpolation, Hyndman & Fan 1996 type 7).
2. **Loess bins** — one column at a time down the rows (its 16,384 × 5 sums stay in cache): W, D1, D2, Y, E per bin
   of p (bit for bit the binned loess's); then the loess vertices of every column from its bins (no rows read).
3. **Main** — the logit x = log(p̃ / (1 − p̃)) once per value: the binned logit moments, Σ y, Σ y x, the clipped
   count, Spiegelhalter's (1986) sums Σ (y − p)(1 − 2p), Σ (1 − 2p)² p (1 − p) and the separation ranges
   (bit for bit :func:`~calib_core.metrics.classification_clinical_moments.column_sums`); the values of p̃ in the
   histogram cells that hold the cut points' order statistics (sorted afterwards: the exact order statistics); the
   deviations d_i = |ĉ(p_i) − p_i| of the loess curve ĉ (linear between its vertices): Σ d (the ICI, in row order)
   and a histogram of d.
4. **Groups and quantiles** — n_g, O_g = Σ y, E_g = Σ p̃ of the groups g_i = #{c_j < p̃_i} (Hosmer & Lemeshow 1980);
   d recomputed (the same operations, so the same bits) and kept where its cell holds the order statistics of E50
   and E90, then sorted: the exact quantiles.

Every reported value is bit for bit the one of the per-class path (tested): the same floating-point operations in
the same order; only the order statistics are found by another exact selection.
"""

from __future__ import annotations

import numpy as np

from ..base.compiled import compiled_kernel
from .classification_clinical_moments import MOMENT_BINS, MOMENT_ORDER, ColumnSums
from .classification_loess_binned import N_BINS, loess_from_bin_sums

__all__ = ["FusedColumns", "fused_columns"]

#: Right shift of a double's bits that leaves its cell: 8 mantissa bits, 256 cells per binade.
_SHIFT = 44
#: Binades of the deviations' histogram below its bound (smaller deviations share the first cell).
_D_BINADES = 40
_BLOCK = 512


def _bits(x: float) -> int:
    return int(np.array([x], dtype=np.float64).view(np.int64)[0])


@compiled_kernel
def _scan(p, eps, base, n_cells, shift):  # pragma: no cover - compiled
    """Pass 1: min and max of every column; counts (K, C + 1) of the clipped values' cells (cell c's at c + 1)."""
    n, k_cols = p.shape
    lo = np.full(k_cols, np.inf)
    hi = np.full(k_cols, -np.inf)
    counts = np.zeros((k_cols, n_cells + 1), dtype=np.int64)
    buf = np.empty(1)
    bits = buf.view(np.int64)
    for i in range(n):
        for k in range(k_cols):
            v = p[i, k]
            if v < lo[k]:
                lo[k] = v
            if v > hi[k]:
                hi[k] = v
            q = v
            if v < eps:
                q = eps
            elif v > 1.0 - eps:
                q = 1.0 - eps
            buf[0] = q
            c = (bits[0] >> shift) - base
            c = 0 if c < 0 else (n_cells - 1 if c >= n_cells else c)
            counts[k, c + 1] += 1
    return lo, hi, counts


@compiled_kernel
def _main(p, y, labels, use_labels, eps, half, inv_w, n_bins, order, want, base, n_cells, shift, off, pool_size,
          binned, t0, step, values, d_base, n_d):  # pragma: no cover - compiled
    """Pass 3: the logit moments and sums of ``column_sums`` (same blocks, same order), the pooled clipped values of
    the wanted cells, and for the binned columns the loess deviations d: Σ d (in row order), max d, d's cells."""
    n, k_cols = p.shape
    mom = np.zeros((k_cols, n_bins, order + 1))
    sums = np.zeros((k_cols, 6))
    ranges = np.empty((k_cols, 6))
    pool = np.empty(pool_size)
    fill = off.copy()
    sd = np.zeros(k_cols)
    top = np.zeros(k_cols)
    d_counts = np.zeros((k_cols, n_d + 1), dtype=np.int64)
    g_vert = values.shape[1]
    buf = np.empty(1)
    bits = buf.view(np.int64)
    for k in range(k_cols):
        for j in range(0, 6, 2):
            ranges[k, j] = np.inf
            ranges[k, j + 1] = -np.inf
    width = 1.0 / inv_w
    for start in range(0, n, 512):
        stop = min(start + 512, n)
        for k in range(k_cols):
            s_y = s_yx = clipped = z_num = z_den = 0.0
            lo1, hi1, lo0, hi0, lo, hi = ranges[k, 0], ranges[k, 1], ranges[k, 2], ranges[k, 3], ranges[k, 4], \
                ranges[k, 5]
            at = fill[k]
            on = binned[k]
            acc, mx = sd[k], top[k]
            lo_v, st, bk = t0[k], step[k], d_base[k]
            for i in range(start, stop):
                pk = p[i, k]
                yk = (1.0 if labels[i] == k else 0.0) if use_labels else y[i, k]
                c = 1.0 - 2.0 * pk
                z_num += (yk - pk) * c
                z_den += c * c * pk * (1.0 - pk)
                q = pk
                if pk < eps:
                    q = eps
                    clipped += 1.0
                elif pk > 1.0 - eps:
                    q = 1.0 - eps
                    clipped += 1.0
                x = np.log(q / (1.0 - q))
                s_y += yk
                s_yx += yk * x
                if yk > 0.0:
                    lo1 = min(lo1, q)
                    hi1 = max(hi1, q)
                if yk < 1.0:
                    lo0 = min(lo0, q)
                    hi0 = max(hi0, q)
                lo = min(lo, q)
                hi = max(hi, q)
                z = (x + half) * inv_w
                b = n_bins - 1 if z >= n_bins - 1 else (int(z) if z > 0.0 else 0)
                d = x - (-half + (b + 0.5) * width)
                d2 = d * d
                mom[k, b, 0] += 1.0
                mom[k, b, 1] += d
                mom[k, b, 2] += d2
                mom[k, b, 3] += d2 * d
                mom[k, b, 4] += d2 * d2
                mom[k, b, 5] += d2 * d2 * d
                buf[0] = q
                cell = (bits[0] >> shift) - base
                cell = 0 if cell < 0 else (n_cells - 1 if cell >= n_cells else cell)
                if want[k, cell]:
                    pool[at] = q
                    at += 1
                if on:  # the binned loess's deviation, as its own kernel computes it
                    xv = (pk - lo_v) / st
                    jv = g_vert - 2 if xv >= g_vert - 2 else (int(xv) if xv > 0.0 else 0)
                    lam = xv - jv
                    if lam < 0.0:
                        lam = 0.0
                    elif lam > 1.0:
                        lam = 1.0
                    v = abs(values[k, jv] * (1.0 - lam) + values[k, jv + 1] * lam - pk)
                    if v > mx:
                        mx = v
                    acc += 1.0 * v
                    buf[0] = v
                    dc = (bits[0] >> shift) - bk
                    dc = 0 if dc < 0 else (n_d - 1 if dc >= n_d else dc)
                    d_counts[k, dc + 1] += 1
            fill[k] = at
            sd[k], top[k] = acc, mx
            sums[k, 0] += s_y
            sums[k, 1] += s_yx
            sums[k, 2] += clipped
            sums[k, 3] += z_num
            sums[k, 4] += z_den
            sums[k, 5] += stop - start
            ranges[k, 0], ranges[k, 1], ranges[k, 2], ranges[k, 3], ranges[k, 4], ranges[k, 5] = \
                lo1, hi1, lo0, hi0, lo, hi
    return mom, sums, ranges, pool, sd, top, d_counts


@compiled_kernel
def _loess_bins(p, y, labels, use_labels, lo_b, inv_wb, binned, n_lb):  # pragma: no cover - compiled
    """The binned loess's bin sums W, D1, D2, Y, E (unit weights) of the columns flagged ``binned``, as its own kernel
    computes them; one column at a time down the rows (its 16,384 × 5 sums stay in cache)."""
    n, k_cols = p.shape
    lsums = np.zeros((k_cols, n_lb, 5))
    for k in range(k_cols):
        if not binned[k]:
            continue
        lob, ilb = lo_b[k], inv_wb[k]
        wlb = 1.0 / ilb
        out = lsums[k]
        for i in range(n):
            pk = p[i, k]
            yk = (1.0 if labels[i] == k else 0.0) if use_labels else y[i, k]
            zb = (pk - lob) * ilb
            bb = n_lb - 1 if zb >= n_lb - 1 else (int(zb) if zb > 0.0 else 0)
            db = pk - (lob + (bb + 0.5) * wlb)
            out[bb, 0] += 1.0
            out[bb, 1] += db
            out[bb, 2] += db * db
            out[bb, 3] += yk
            out[bb, 4] += yk * db
    return lsums


@compiled_kernel
def _groups(p, y, labels, use_labels, eps, cuts, binned, t0, step, values, want, base, n_cells, shift, off,
            pool_size):  # pragma: no cover - compiled
    """Pass 4: Hosmer–Lemeshow's n_g, O_g, E_g (K, 3, G) with groups #{cuts < p̃}, and the deviations d of the binned
    columns that fall in the wanted cells."""
    n, k_cols = p.shape
    m = cuts.shape[1]
    hl = np.zeros((k_cols, 3, m + 1))
    pool = np.empty(pool_size)
    fill = off.copy()
    g_vert = values.shape[1]
    buf = np.empty(1)
    bits = buf.view(np.int64)
    for start in range(0, n, 512):
        stop = min(start + 512, n)
        for k in range(k_cols):
            on = binned[k]
            lo, st, bk = t0[k], step[k], base[k]
            at = fill[k]
            for i in range(start, stop):
                pk = p[i, k]
                yk = (1.0 if labels[i] == k else 0.0) if use_labels else y[i, k]
                q = pk
                if pk < eps:
                    q = eps
                elif pk > 1.0 - eps:
                    q = 1.0 - eps
                g = 0
                for j in range(m):  # branch-free count of the cuts below q
                    g += cuts[k, j] < q
                hl[k, 0, g] += 1.0
                hl[k, 1, g] += yk
                hl[k, 2, g] += q
                if on:  # the deviation again: the same operations, the same bits
                    x = (pk - lo) / st
                    j = g_vert - 2 if x >= g_vert - 2 else (int(x) if x > 0.0 else 0)
                    lam = x - j
                    if lam < 0.0:
                        lam = 0.0
                    elif lam > 1.0:
                        lam = 1.0
                    v = abs(values[k, j] * (1.0 - lam) + values[k, j + 1] * lam - pk)
                    buf[0] = v
                    cell = (bits[0] >> shift) - bk
                    cell = 0 if cell < 0 else (n_cells - 1 if cell >= n_cells else cell)
                    if want[k, cell]:
                        pool[at] = v
                        at += 1
            fill[k] = at
    return hl, pool


def _ranks(n: int, q: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """NumPy's linear-interpolation positions: j = ⌊(n − 1) q⌋, j + 1 (capped) and the ranks needed (sorted)."""
    vi = (n - 1) * q
    prev = np.floor(vi).astype(np.int64)
    nxt = np.minimum(prev + 1, n - 1)
    return prev, nxt, np.unique(np.concatenate([prev, nxt]))


def _wanted(counts: np.ndarray, ranks: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per column the cells holding the ranks: (cell of each rank (K, R), wanted mask (K, C), pool offsets, size)."""
    cum = np.cumsum(counts, axis=1)  # cum[k, c] = values in the cells below c
    cell_of = np.stack([np.searchsorted(row, ranks, side="right") - 1 for row in cum])  # loop over classes
    cell_of = np.minimum(cell_of, counts.shape[1] - 2)  # a column without values (not binned): its last cell
    want = np.zeros((counts.shape[0], counts.shape[1] - 1), dtype=np.bool_)
    np.put_along_axis(want, cell_of, True, axis=1)
    sizes = np.where(want, counts[:, 1:], 0).sum(axis=1)
    off = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
    return cell_of, want, off, int(sizes.sum())


def _order_statistics(pool: np.ndarray, counts: np.ndarray, want: np.ndarray, off: np.ndarray, k: int,
                      ranks: np.ndarray, cell_of: np.ndarray) -> np.ndarray:
    """The exact order statistics at ``ranks`` of column k from its sorted pool of the wanted cells' values."""
    size = int(np.where(want[k], counts[k, 1:], 0).sum())
    vals = np.sort(pool[off[k]:off[k] + size])
    below = np.cumsum(counts[k])[cell_of[k]]  # values in the cells below each rank's cell
    pooled_below = np.concatenate([[0], np.cumsum(np.where(want[k], counts[k, 1:], 0))])[cell_of[k]]
    return vals[ranks - below + pooled_below]


def _interpolate(stats: np.ndarray, ranks: np.ndarray, prev: np.ndarray, nxt: np.ndarray, n: int,
                 q: np.ndarray) -> np.ndarray:
    """NumPy's linear interpolation between the order statistics (as ``quantiles_linear``)."""
    a, b = stats[np.searchsorted(ranks, prev)], stats[np.searchsorted(ranks, nxt)]
    gamma = (n - 1) * q - prev
    diff = b - a
    return np.where(gamma >= 0.5, b - diff * (1 - gamma), a + diff * gamma)


class FusedColumns:
    """What the four passes give the clinical set of every column.

    Attributes
    ----------
    sums : ColumnSums
        The logistic fits' moments and Spiegelhalter's sums (as ``column_sums``).
    hl_sums : ndarray of shape (K, 3, g)
        Hosmer–Lemeshow's n_g, O_g, E_g per column.
    errors : list of (dict or None)
        ICI, E50, E90 of the binned loess per column; None where the binned fit does not apply (the caller runs
        the exact method).

    References
    ----------
    Hosmer, D. W. & Lemeshow, S. (1980). Goodness of fit tests for the multiple logistic regression model.
    Communications in Statistics – Theory and Methods 9(10), 1043–1069.
    """

    def __init__(self, sums: ColumnSums, hl_sums: np.ndarray, errors: list) -> None:
        self.sums, self.hl_sums, self.errors = sums, hl_sums, errors


def fused_columns(probs: np.ndarray, outcomes: np.ndarray | None, *, eps: float, n_groups: int, labels=None,
                  binned: bool = True, span: float = 0.75) -> FusedColumns:
    """The clinical set's row sums of every column of (n × K) probabilities in four passes (module docstring).

    Logit moments D_bm = Σ_{i ∈ b} (x_i − c_b)^m, x = logit p̃; Hosmer–Lemeshow's n_g, O_g, E_g with cut points at the
    j/g quantiles of p̃; ICI = Σ |ĉ(p_i) − p_i| / n and E50 / E90 the quantiles of |ĉ(p) − p| of the binned loess ĉ.

    Parameters
    ----------
    probs : ndarray of shape (n, K)
        Probabilities of each column's event (n ≥ 2).
    outcomes : ndarray of shape (n, K), or None
        Outcomes 0/1 (None with ``labels``).
    eps : float
        Clipping of p before the logit and Hosmer–Lemeshow.
    n_groups : int
        Hosmer–Lemeshow's groups g.
    labels : ndarray of int, shape (n,), optional
        Class of each row: the outcome of column k is 1[label = k].
    binned : bool
        Fit the binned loess (from 10⁵ rows); otherwise ``errors`` is all None.
    span : float
        The loess span.

    Returns
    -------
    FusedColumns
        The sums and the loess errors.

    References
    ----------
    Hosmer, D. W. & Lemeshow, S. (1980). Goodness of fit tests for the multiple logistic regression model.
    Communications in Statistics – Theory and Methods 9(10), 1043–1069.
    Austin, P. C. & Steyerberg, E. W. (2019). The Integrated Calibration Index (ICI) and related metrics for
    quantifying the calibration of logistic regression models. Statistics in Medicine 38(21), 4051–4065.
    Hyndman, R. J. & Fan, Y. (1996). Sample quantiles in statistical packages. The American Statistician 50(4),
    361–365.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> p = rng.dirichlet(np.ones(3), 4000)
    >>> out = fused_columns(p, None, eps=1e-7, n_groups=10, labels=rng.integers(0, 3, 4000), binned=False)
    >>> out.hl_sums.shape
    (3, 3, 10)
    """
    p = np.ascontiguousarray(probs, dtype=float)
    n, k_cols = p.shape
    use_labels = outcomes is None
    y = np.zeros((0, 0)) if use_labels else np.ascontiguousarray(outcomes, dtype=float)
    lab = np.ascontiguousarray(labels, dtype=np.int64) if use_labels else np.zeros(0, dtype=np.int64)
    eps = float(eps)
    # pass 1: ranges and the clipped values' cells
    base = _bits(eps) >> _SHIFT
    n_cells = (_bits(1.0) >> _SHIFT) - base + 1
    lo, hi, counts = _scan(p, eps, base, n_cells, _SHIFT)
    qs = np.arange(1, int(n_groups)) / int(n_groups)
    prev, nxt, ranks = _ranks(n, qs)
    cell_of, want, off, size = _wanted(counts, ranks)
    # pass 2: the loess bin sums, column by column; the loess vertices of every binned column (no rows read)
    half = float(np.log((1.0 - eps) / eps))
    width = 2.0 * half / MOMENT_BINS
    on = np.array([binned and bool(h > lo_) for lo_, h in zip(lo, hi, strict=True)], dtype=np.bool_)
    lwidth = np.where(on, (hi - lo) / N_BINS, 1.0)
    inv_wb = np.array([1.0 / w for w in lwidth])
    lsums = _loess_bins(p, y, lab, use_labels, np.where(on, lo, 0.0), inv_wb, on, N_BINS)
    g_vert = 101
    values = np.zeros((k_cols, g_vert))
    t0, step = np.zeros(k_cols), np.ones(k_cols)
    for k in np.flatnonzero(on):  # loop over classes
        fit = loess_from_bin_sums(lsums[k], float(lo[k]), float(hi[k]), span=span, n_vertices=g_vert)
        if fit is None:
            on[k] = False
            continue
        t, values[k] = fit
        t0[k], step[k] = float(t[0]), float(t[1] - t[0])
    bound = np.where(on, np.abs(values - (t0[:, None] + step[:, None] * np.arange(g_vert))).max(axis=1), 1.0)
    bound = np.maximum(bound * (1.0 + 1e-6), 1e-300)
    n_d = _D_BINADES * 256
    d_base = np.array([(_bits(float(b)) >> _SHIFT) - n_d + 1 for b in bound], dtype=np.int64)
    # pass 3: moments, Z, the cut points' pools, the deviations' sums and cells
    mom, sums, rng_q, pool, sd, _, d_counts = _main(p, y, lab, use_labels, eps, half, 1.0 / width, MOMENT_BINS,
                                                    MOMENT_ORDER, want, base, n_cells, _SHIFT, off, size, on, t0,
                                                    step, values, d_base, n_d)
    centres = -half + (np.arange(MOMENT_BINS) + 0.5) * width
    with np.errstate(divide="ignore", invalid="ignore"):
        x_ranges = np.log(rng_q) - np.log1p(-rng_q)
    col_sums = ColumnSums(mom, centres, sums[:, 0], sums[:, 1], sums[:, 2].astype(np.int64), sums[:, 3], sums[:, 4],
                          x_ranges)
    cuts = np.stack([_interpolate(_order_statistics(pool, counts, want, off, k, ranks, cell_of), ranks, prev, nxt,
                                  n, qs) for k in range(k_cols)])  # loop over classes
    # pass 4: Hosmer–Lemeshow's groups and the deviations' pools
    q2 = np.array([0.5, 0.9])
    prev2, nxt2, ranks2 = _ranks(n, q2)
    cell2, want2, off2, size2 = _wanted(d_counts, ranks2)
    hl, pool2 = _groups(p, y, lab, use_labels, eps, np.ascontiguousarray(cuts), on, t0, step, values, want2, d_base,
                        n_d, _SHIFT, off2, size2)
    errors: list = [None] * k_cols
    for k in np.flatnonzero(on):  # loop over classes
        e50, e90 = (float(v) for v in _interpolate(
            _order_statistics(pool2, d_counts, want2, off2, k, ranks2, cell2), ranks2, prev2, nxt2, n, q2))
        errors[k] = {"ici": float(sd[k] / float(n)), "e50": e50, "e90": e90}
    return FusedColumns(col_sums, hl, errors)
