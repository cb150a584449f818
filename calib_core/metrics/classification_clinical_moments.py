"""The clinical set's sums over the rows in one compiled pass: logistic recalibration fits from binned moments of the
logit, Spiegelhalter's sums, the separation ranges and the clipped count of every one-vs-rest column at once.

Logistic recalibration (Cox 1958) by Newton's method needs, at every step, sums over the rows of smooth functions
of x = logit(p̃): Σ μ, Σ μ x, Σ v, Σ v x, Σ v x² with μ = expit(a + b x), v = μ(1 − μ).  One pass over the rows
stores, per column and per bin b of x (B = :data:`MOMENT_BINS` equal-width bins over [logit ε, logit(1 − ε)],
centre c_b), the moments D_bm = Σ_{i ∈ b} (x_i − c_b)^m, m = 0 … M (M = :data:`MOMENT_ORDER`).  Each Newton step
then evaluates the sums exactly up to the Taylor remainder:

    Σ_{i ∈ b} g(x_i) = Σ_{m ≤ M} g⁽ᵐ⁾(c_b)/m! · D_bm + R,   |R| ≤ max|g⁽ᴹ⁺¹⁾| (w/2)^{M+1}/(M+1)! per row,

with w the bin width (0.0079 for ε = 1e-7): for the logistic curve |μ⁽ᵐ⁾| ≤ |b|ᵐ m!/4ᵐ⁻¹ (roughly), so R is below
1e-16·|b|⁶ per row — the sums agree with the row-by-row sums to rounding (tested to 1e-12 relative).  The Taylor
coefficients come from the logistic equation μ' = b μ(1 − μ): with μ(c + d) = Σ T_m dᵐ and 1 − μ = Σ U_m dᵐ
(U_0 = 1 − T_0, U_m = −T_m), v = Σ V_m dᵐ with V_m = Σ_j T_j U_{m−j}, and T_{m+1} = b V_m / (m + 1).

The same pass sums Spiegelhalter's (1986) numerator Σ (y − p)(1 − 2p) and denominator Σ (1 − 2p)² p (1 − p), the
events Σ y and Σ y x (exact, for the score Σ (y − μ)(1, x)), the rows clipped to [ε, 1 − ε], and the smallest and
largest p̃ of the events, the non-events and all rows (the separation check, mapped to x by the monotone logit).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import special

from ..base.compiled import compiled_kernel

__all__ = ["ColumnSums", "column_sums", "moment_sums", "group_sums", "MOMENT_BINS", "MOMENT_ORDER", "FUSED_FROM"]

#: Equal-width bins of the logit per column (a power of two ≥ 128: the moment sums' pairwise tree).
MOMENT_BINS = 4096
#: Highest moment (Taylor order) per bin (the pass's moment updates are written out for this order).
MOMENT_ORDER = 5
#: Rows from which the clinical set's fits run on binned moments (below: the row-by-row Newton sums, unchanged).
FUSED_FROM = 1 << 16


@compiled_kernel
def _pass_logits(p, xs, y, labels, use_labels, eps, half, inv_w, n_bins, mom, sums, ranges):  # pragma: no cover
    """The pass over one chunk of rows (a multiple of 512 rows but the last), the logits x = logit(p̃) given (``xs``,
    computed by NumPy's vectorised log), accumulating the moments (K, B, M + 1), the sums (K, 6: Σy, Σy x, clipped,
    Z numerator, Z denominator, rows) and the ranges (K, 6) into ``mom``, ``sums`` and ``ranges`` in place, in
    512-row blocks with each column's block summed in registers (the order of additions of the row-by-row form,
    which the tests keep as their reference)."""
    n, k_cols = p.shape
    order = mom.shape[2] - 1
    width = 1.0 / inv_w
    for start in range(0, n, 512):
        stop = min(start + 512, n)
        for k in range(k_cols):
            s_y = s_yx = clipped = z_num = z_den = 0.0
            lo1, hi1, lo0, hi0, lo, hi = ranges[k, 0], ranges[k, 1], ranges[k, 2], ranges[k, 3], ranges[k, 4], \
                ranges[k, 5]
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
                x = xs[i, k]
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
                mom[k, b, 0] += 1.0  # the moments d⁰ … d⁵ (MOMENT_ORDER = 5), unrolled
                mom[k, b, 1] += d
                mom[k, b, 2] += d2
                mom[k, b, 3] += d2 * d
                mom[k, b, 4] += d2 * d2
                mom[k, b, 5] += d2 * d2 * d
            sums[k, 0] += s_y
            sums[k, 1] += s_yx
            sums[k, 2] += clipped
            sums[k, 3] += z_num
            sums[k, 4] += z_den
            sums[k, 5] += stop - start
            ranges[k, 0], ranges[k, 1], ranges[k, 2], ranges[k, 3], ranges[k, 4], ranges[k, 5] = \
                lo1, hi1, lo0, hi0, lo, hi
    return order


@compiled_kernel
def _pass_column(f, xs, y, eps, half, inv_w, mom, sums, ranges, x_ends):  # pragma: no cover - compiled
    """:func:`_pass_logits` of one column over one chunk of its rows (contiguous: f = p[:, k], y = its outcomes,
    xs = logit(p̃) of the chunk, where the row is not clipped), accumulating into ``mom`` (B, M + 1), ``sums`` (6,)
    and ``ranges`` (6,) of the column in place: per accumulator the same additions in the same row order and 512-row
    blocks (the chunk starts at a multiple of 512 rows), so the same doubles; the column's moments stay in cache.  A
    clipped row's logit is ``x_ends`` (logit ε, logit(1 − ε), by the same NumPy operations).  Every index is provably
    in bounds (leaf loops over the block's slices, the bin clamped to the table's rows), so the compiler drops the
    per-row checks (:func:`_pass_column_labels`)."""
    n = min(f.size, xs.size, y.size)
    if mom.shape[1] != 6:  # MOMENT_ORDER = 5: the updates below are written out for it
        raise ValueError("moment table of order 5 expected")
    top = mom.shape[0] - 1
    width = 1.0 / inv_w
    x_low, x_high, one_eps = x_ends[0], x_ends[1], 1.0 - eps
    centres = np.empty(top + 1)  # c_b, each by the formula the rows used (the same doubles), read per row
    for j in range(top + 1):
        centres[j] = -half + (j + 0.5) * width
    lo1, hi1, lo0, hi0, lo, hi = ranges[0], ranges[1], ranges[2], ranges[3], ranges[4], ranges[5]
    for start in range(0, n, 512):
        stop = min(start + 512, n)
        fb, xb, yb = f[start:stop], xs[start:stop], y[start:stop]
        s_y = s_yx = clipped = z_num = z_den = 0.0
        for i in range(min(fb.size, xb.size, yb.size)):
            pk = fb[i]
            yk = yb[i]
            c = 1.0 - 2.0 * pk
            z_num += (yk - pk) * c
            z_den += c * c * pk * (1.0 - pk)
            q = pk
            x = xb[i]
            if pk < eps:
                q = eps
                clipped += 1.0
                x = x_low
            elif pk > one_eps:
                q = one_eps
                clipped += 1.0
                x = x_high
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
            b = top if z >= top else (int(z) if z > 0.0 else 0)
            b = max(min(b, top), 0)  # no-op; tells the compiler 0 ≤ b < B
            d = x - centres[b]
            d2 = d * d
            mom[b, 0] += 1.0  # the moments d⁰ … d⁵ (MOMENT_ORDER = 5), unrolled
            mom[b, 1] += d
            mom[b, 2] += d2
            mom[b, 3] += d2 * d
            mom[b, 4] += d2 * d2
            mom[b, 5] += d2 * d2 * d
        sums[0] += s_y
        sums[1] += s_yx
        sums[2] += clipped
        sums[3] += z_num
        sums[4] += z_den
        sums[5] += stop - start
    ranges[0], ranges[1], ranges[2], ranges[3], ranges[4], ranges[5] = lo1, hi1, lo0, hi0, lo, hi
    return top + 1


@compiled_kernel
def _pass_column_labels(f, xs, labels, k, eps, half, inv_w, mom, sums, ranges, x_ends):  # pragma: no cover
    """:func:`_pass_column` with the outcomes y_i = 1[labels_i = k] read from the labels (no outcome array): the same
    operations, the loop specialised (no test of where the outcome comes from inside it).  Every row is an event or
    a non-event, so the range of all rows is taken at the end as the union of theirs (min and max are exact: the
    same doubles, the row loop two comparisons shorter)."""
    n = min(f.size, xs.size, labels.size)
    if mom.shape[1] != 6:  # MOMENT_ORDER = 5: the updates below are written out for it
        raise ValueError("moment table of order 5 expected")
    top = mom.shape[0] - 1
    width = 1.0 / inv_w
    x_low, x_high, one_eps = x_ends[0], x_ends[1], 1.0 - eps
    centres = np.empty(top + 1)  # c_b, each by the formula the rows used (the same doubles), read per row
    for j in range(top + 1):
        centres[j] = -half + (j + 0.5) * width
    lo1, hi1, lo0, hi0 = ranges[0], ranges[1], ranges[2], ranges[3]
    for start in range(0, n, 512):
        stop = min(start + 512, n)
        fb, xb, lb = f[start:stop], xs[start:stop], labels[start:stop]
        s_y = s_yx = clipped = z_num = z_den = 0.0
        for i in range(min(fb.size, xb.size, lb.size)):
            pk = fb[i]
            event = lb[i] == k
            yk = 1.0 if event else 0.0
            c = 1.0 - 2.0 * pk
            z_num += (yk - pk) * c
            z_den += c * c * pk * (1.0 - pk)
            q = pk
            x = xb[i]
            if pk < eps:
                q = eps
                clipped += 1.0
                x = x_low
            elif pk > one_eps:
                q = one_eps
                clipped += 1.0
                x = x_high
            s_y += yk
            s_yx += yk * x
            if event:  # y = 1 (y > 0) …
                lo1 = min(lo1, q)
                hi1 = max(hi1, q)
            else:  # … or y = 0 (y < 1)
                lo0 = min(lo0, q)
                hi0 = max(hi0, q)
            z = (x + half) * inv_w
            b = top if z >= top else (int(z) if z > 0.0 else 0)
            b = max(min(b, top), 0)  # no-op; tells the compiler 0 ≤ b < B
            d = x - centres[b]
            d2 = d * d
            mom[b, 0] += 1.0
            mom[b, 1] += d
            mom[b, 2] += d2
            mom[b, 3] += d2 * d
            mom[b, 4] += d2 * d2
            mom[b, 5] += d2 * d2 * d
        sums[0] += s_y
        sums[1] += s_yx
        sums[2] += clipped
        sums[3] += z_num
        sums[4] += z_den
        sums[5] += stop - start
    # every row is an event or a non-event (y ∈ {0, 1}): the range of all rows is the union of the two (exact)
    ranges[0], ranges[1], ranges[2], ranges[3], ranges[4], ranges[5] = lo1, hi1, lo0, hi0, min(lo1, lo0), \
        max(hi1, hi0)
    return top + 1


@compiled_kernel
def _transpose(p, out):  # pragma: no cover - compiled
    """out[k, i] = p[i, k] (a copy: the same doubles), 64 rows at a time: the block's rows stay in L1 while each
    column's 64 values are written contiguously (faster than NumPy's strided copy of the transposed view)."""
    n, k_cols = p.shape
    if out.shape[0] != k_cols or out.shape[1] != n:
        raise ValueError("out must have the transposed shape")
    for i0 in range(0, n, 64):
        i1 = min(i0 + 64, n)
        block = p[i0:i1]
        for k in range(k_cols):
            column = out[k, i0:i1]
            for i in range(min(column.size, block.shape[0])):
                column[i] = block[i, k]


#: Rows per chunk of one column in :func:`_columnwise_pass` (a multiple of 512; the chunk, its logits and the
#: column's moments together in L2).
_COLUMN_CHUNK = 1 << 15


def _columnwise_pass(p, lab, use_labels, y, eps, half, inv_w, transposed):
    """:func:`_chunked_pass` column by column over pᵀ (``transposed`` filled first by :func:`_transpose`, or the
    single column of an (n, 1) array): the same moments, sums and ranges bit for bit (per accumulator the same
    additions in the same order; the logits by the same vectorised NumPy operations, element by element), with each
    column's moments (B × (M + 1) doubles) in cache instead of all K columns' at once."""
    n, k_cols = p.shape
    if transposed is not None:
        _transpose(p, transposed)
        cols = transposed
    else:
        cols = p.T  # one column: contiguous
    mom = np.zeros((k_cols, MOMENT_BINS, MOMENT_ORDER + 1))
    sums = np.zeros((k_cols, 6))
    ranges = np.empty((k_cols, 6))
    ranges[:, 0::2] = np.inf
    ranges[:, 1::2] = -np.inf
    buf = np.empty(min(_COLUMN_CHUNK, n))
    den = np.empty_like(buf)
    no_y = np.zeros(0)
    ends = np.clip(np.array([0.0, 1.0]), eps, 1.0 - eps)
    x_ends = np.log(ends / (1.0 - ends))  # the logits of the clipped rows, by the chunks' own operations
    for k in range(k_cols):  # columns (classes), then chunks of rows, never rows
        f = cols[k]
        yk = no_y if use_labels else y[:, 0]
        for lo in range(0, n, _COLUMN_CHUNK):
            hi = min(lo + _COLUMN_CHUNK, n)
            fc = f[lo:hi]
            q, dq = buf[:hi - lo], den[:hi - lo]
            # p / (1 − p) unclipped: equal to p̃ / (1 − p̃) wherever p is inside [ε, 1 − ε]; the kernel puts the
            # clipped rows' logits (x_ends) itself, so ±inf / NaN from the others are never read
            with np.errstate(divide="ignore", invalid="ignore"):
                np.subtract(1.0, fc, out=dq)
                np.divide(fc, dq, out=q)
                np.log(q, out=q)
            if use_labels:
                _pass_column_labels(fc, q, lab[lo:hi], k, eps, half, inv_w, mom[k], sums[k], ranges[k], x_ends)
            else:
                _pass_column(fc, q, yk[lo:hi], eps, half, inv_w, mom[k], sums[k], ranges[k], x_ends)
    return mom, sums, ranges


#: Rows per chunk of :func:`column_sums` (a multiple of the kernel's 512-row blocks; the chunk's logits in L2).
_CHUNK = 4096


def _chunked_pass(p, y, lab, use_labels, eps, half, inv_w, transposed=None):
    """The moments, sums and ranges of the pass, the logits computed chunk by chunk by NumPy's vectorised log (SIMD;
    within one unit in the last place of the C library's log, which a row-by-row loop would call) and passed to
    :func:`_pass_logits`: every sum equal to the row-by-row loop's to rounding (≤ 1e-12 relative, tested).  With
    ``transposed`` (K, n), the chunk's columns are copied into it while in cache (pᵀ, bit for bit)."""
    n, k_cols = p.shape
    mom = np.zeros((k_cols, MOMENT_BINS, MOMENT_ORDER + 1))
    sums = np.zeros((k_cols, 6))
    ranges = np.empty((k_cols, 6))
    ranges[:, 0::2] = np.inf
    ranges[:, 1::2] = -np.inf
    buf = np.empty((min(_CHUNK, n), k_cols))
    den = np.empty_like(buf)
    for lo in range(0, n, _CHUNK):  # chunks of rows, not rows
        hi = min(lo + _CHUNK, n)
        pc = p[lo:hi]
        if transposed is not None:
            transposed[:, lo:hi] = pc.T
        q, dq = buf[:hi - lo], den[:hi - lo]
        np.clip(pc, eps, 1.0 - eps, out=q)
        np.subtract(1.0, q, out=dq)
        np.divide(q, dq, out=q)
        np.log(q, out=q)
        _pass_logits(pc, q, y[lo:hi] if not use_labels else y, lab[lo:hi] if use_labels else lab, use_labels, eps,
                     half, inv_w, MOMENT_BINS, mom, sums, ranges)
    return mom, sums, ranges


@dataclass(frozen=True)
class ColumnSums:
    """What one pass over the rows gives the clinical set of every column (module docstring).

    Attributes
    ----------
    moments : ndarray of shape (K, B, M + 1)
        D_bm per column.
    centres : ndarray of shape (B,)
        Bin centres c_b (logit scale).
    events, events_x : ndarray of shape (K,)
        Σ y and Σ y x.
    n_clipped : ndarray of int, shape (K,)
        Rows outside [ε, 1 − ε].
    z_num, z_den : ndarray of shape (K,)
        Spiegelhalter's numerator and denominator.
    x_ranges : ndarray of shape (K, 6)
        min and max x over events, non-events and all rows.

    References
    ----------
    Spiegelhalter, D. J. (1986). Probabilistic prediction in patient management and clinical trials. Statistics in
    Medicine 5(5), 421–433.
    """

    moments: np.ndarray
    centres: np.ndarray
    events: np.ndarray
    events_x: np.ndarray
    n_clipped: np.ndarray
    z_num: np.ndarray
    z_den: np.ndarray
    x_ranges: np.ndarray


def column_sums(probs, outcomes, *, eps: float = 1e-7, labels=None, transposed=None) -> ColumnSums:
    """One compiled pass over (n × K) probabilities and outcomes: the binned logit moments and the exact sums.

    D_bm = Σ_{i ∈ b} (x_i − c_b)^m with x = logit(clip(p, ε, 1 − ε)); Σ y, Σ y x; Z's Σ (y − p)(1 − 2p) and
    Σ (1 − 2p)² p(1 − p); the clipped rows; the x ranges (module docstring).

    Parameters
    ----------
    probs : ndarray of shape (n, K)
        Probabilities of each column's event.
    outcomes : ndarray of shape (n, K), or None
        Outcomes 0/1 (None with ``labels``).
    eps : float
        Clipping of p before the logit.
    labels : ndarray of int, shape (n,), optional
        Class of each row: the outcome of column k is 1[label = k] (no (n × K) outcome array is read).
    transposed : ndarray of shape (K, n), optional
        Filled with the probabilities transposed (one contiguous array per column), copied chunk by chunk during
        the pass (cheaper than a separate strided copy).

    Returns
    -------
    ColumnSums
        The sums.

    References
    ----------
    Cox, D. R. (1958). Two further applications of a model for binary regression. Biometrika 45(3/4), 562–565.

    Examples
    --------
    >>> p = np.array([[0.2], [0.7]]); y = np.array([[0.0], [1.0]])
    >>> s = column_sums(p, y)
    >>> float(s.moments[..., 0].sum()), float(s.events[0])
    (2.0, 1.0)
    """
    p = np.ascontiguousarray(probs, dtype=float)
    use_labels = labels is not None
    y = np.zeros((0, 0)) if use_labels else np.ascontiguousarray(outcomes, dtype=float)
    lab = np.ascontiguousarray(labels, dtype=np.int64) if use_labels else np.zeros(0, dtype=np.int64)
    if use_labels and lab.size and -128 <= lab.min() and lab.max() <= 127:  # the same labels in an eighth of the
        lab = lab.astype(np.int8)  # memory (each pass over the columns reads them once per column)
    half = float(np.log((1.0 - eps) / eps))
    width = 2.0 * half / MOMENT_BINS
    if (use_labels and (transposed is not None or p.shape[1] == 1)) or (not use_labels and p.shape[1] == 1):
        mom, sums, ranges = _columnwise_pass(p, lab, use_labels, y, float(eps), half, 1.0 / width, transposed)
    else:
        mom, sums, ranges = _chunked_pass(p, y, lab, use_labels, float(eps), half, 1.0 / width, transposed)
    centres = -half + (np.arange(MOMENT_BINS) + 0.5) * width
    with np.errstate(divide="ignore"):
        x_ranges = np.log(ranges) - np.log1p(-ranges)  # the logit is monotone: the ranges of x
    return ColumnSums(mom, centres, sums[:, 0], sums[:, 1], sums[:, 2].astype(np.int64), sums[:, 3], sums[:, 4],
                      x_ranges)


def moment_sums(s: ColumnSums, cols: np.ndarray, a: np.ndarray, b: np.ndarray, *, mu_and_v_only: bool = False
                ) -> tuple[np.ndarray, ...]:
    """Σ μ, Σ μ x, Σ v, Σ v x, Σ v x² over the rows of the columns ``cols`` at (a, b), from the binned moments.

    μ(c + d) = Σ_m T_m dᵐ, T_0 = expit(a + b c), T_{m+1} = b V_m/(m + 1), V_m = Σ_j T_j U_{m−j} (U = 1 − μ);
    Σ g = Σ_b Σ_m g_m(c_b) D_bm for g = μ, μ x = μ (c + d), v, v x, v x² (module docstring).  One compiled loop
    over the columns and bins, the same operations in the same order as the NumPy formula (its pairwise sums too).

    Parameters
    ----------
    s : ColumnSums
        The pass's sums.
    cols : ndarray of int
        Columns.
    a, b : ndarray
        Intercept and slope per column of ``cols``.
    mu_and_v_only : bool, default False
        Only Σ μ and Σ v (the slope-fixed fit's score and information; the same doubles), the others NaN.

    Returns
    -------
    tuple of ndarray
        Σ μ, Σ μ x, Σ v, Σ v x, Σ v x², one value per column of ``cols``.

    References
    ----------
    Cox, D. R. (1958). Two further applications of a model for binary regression. Biometrika 45(3/4), 562–565.
    """
    cols = np.asarray(cols, dtype=np.int64)
    out = _moment_kernel(s.moments, np.ascontiguousarray(cols), np.ascontiguousarray(a, dtype=float).reshape(-1),
                         np.ascontiguousarray(b, dtype=float).reshape(-1), s.centres, MOMENT_ORDER,
                         bool(mu_and_v_only))
    if mu_and_v_only:
        out[[1, 3, 4]] = np.nan
    return tuple(out)


@compiled_kernel
def _moment_kernel(mom, cols, a, b, centres, order, mu_and_v_only):  # pragma: no cover - compiled
    """:func:`moment_sums` per column and bin: the Taylor coefficients T, U, V of μ and v at the bin centre and the
    five per-bin terms, in NumPy's order of operations; each sum over the bins is NumPy's pairwise sum (blocks of 128
    with eight accumulators, combined as a binary tree; the bins a power of two ≥ 128), so the sums equal the NumPy
    formula's bit for bit.  With ``mu_and_v_only`` only the sums Σ μ and Σ v (rows 0 and 2; the others 0)."""
    n_bins = centres.size
    if order != 5 or mom.shape[2] != 6:  # the recursion below is written out for MOMENT_ORDER = 5
        raise ValueError("moments of order 5 expected")
    out = np.zeros((5, cols.size))
    terms = np.empty((5, n_bins))
    tree = np.empty(n_bins // 128)
    for j in range(cols.size):
        k = cols[j]
        aj, bj = a[j], b[j]
        # with |a|, |b| ≤ 1e30 every coefficient is finite, so an empty bin's terms are 0·(finite) summed from +0:
        # exactly +0.0, written without computing them
        bounded = abs(aj) <= 1e30 and abs(bj) <= 1e30
        for q in range(n_bins):
            d0, d1, d2, d3, d4, d5 = mom[k, q, 0], mom[k, q, 1], mom[k, q, 2], mom[k, q, 3], mom[k, q, 4], mom[k, q, 5]
            if bounded and d0 == 0.0:  # no rows in the bin (its count is 0, so every moment is 0)
                terms[0, q] = terms[1, q] = terms[2, q] = terms[3, q] = terms[4, q] = 0.0
                continue
            c = centres[q]
            # T_m, U_m = −T_m (m ≥ 1), V_m = Σ_{i ≤ m} T_i U_{m−i} summed from 0.0 in i order, T_{m+1} = b V_m/(m + 1):
            # the loops of the recursion written out for M = 5 (the same operations in the same order, in registers)
            t0 = 1.0 / (1.0 + np.exp(-(aj + bj * c)))
            u0 = 1.0 - t0
            v0 = 0.0 + t0 * u0
            t1 = bj * v0 / 1.0
            u1 = -t1
            v1 = 0.0 + t0 * u1 + t1 * u0
            t2 = bj * v1 / 2.0
            u2 = -t2
            v2 = 0.0 + t0 * u2 + t1 * u1 + t2 * u0
            t3 = bj * v2 / 3.0
            u3 = -t3
            v3 = 0.0 + t0 * u3 + t1 * u2 + t2 * u1 + t3 * u0
            t4 = bj * v3 / 4.0
            u4 = -t4
            v4 = 0.0 + t0 * u4 + t1 * u3 + t2 * u2 + t3 * u1 + t4 * u0
            t5 = bj * v4 / 5.0
            u5 = -t5
            v5 = 0.0 + t0 * u5 + t1 * u4 + t2 * u3 + t3 * u2 + t4 * u1 + t5 * u0
            # Σ_m g_m D_m from 0.0 in m order; T_{−1} = V_{−1} = V_{−2} = 0.0
            terms[0, q] = 0.0 + t0 * d0 + t1 * d1 + t2 * d2 + t3 * d3 + t4 * d4 + t5 * d5
            terms[2, q] = 0.0 + v0 * d0 + v1 * d1 + v2 * d2 + v3 * d3 + v4 * d4 + v5 * d5
            if mu_and_v_only:
                terms[1, q] = terms[3, q] = terms[4, q] = 0.0
                continue
            terms[1, q] = (0.0 + (c * t0 + 0.0) * d0 + (c * t1 + t0) * d1 + (c * t2 + t1) * d2 + (c * t3 + t2) * d3
                           + (c * t4 + t3) * d4 + (c * t5 + t4) * d5)
            terms[3, q] = (0.0 + (c * v0 + 0.0) * d0 + (c * v1 + v0) * d1 + (c * v2 + v1) * d2 + (c * v3 + v2) * d3
                           + (c * v4 + v3) * d4 + (c * v5 + v4) * d5)
            cc, c2 = c * c, 2.0 * c
            terms[4, q] = (0.0 + (cc * v0 + c2 * 0.0 + 0.0) * d0 + (cc * v1 + c2 * v0 + 0.0) * d1
                           + (cc * v2 + c2 * v1 + v0) * d2 + (cc * v3 + c2 * v2 + v1) * d3
                           + (cc * v4 + c2 * v3 + v2) * d4 + (cc * v5 + c2 * v4 + v3) * d5)
        for r in range(5):
            if mu_and_v_only and r != 0 and r != 2:
                continue
            for blk in range(n_bins // 128):  # NumPy's pairwise block: eight accumulators over 128 values
                lo = blk * 128
                r0, r1, r2, r3 = terms[r, lo], terms[r, lo + 1], terms[r, lo + 2], terms[r, lo + 3]
                r4, r5, r6, r7 = terms[r, lo + 4], terms[r, lo + 5], terms[r, lo + 6], terms[r, lo + 7]
                for i in range(lo + 8, lo + 128, 8):
                    r0 += terms[r, i]
                    r1 += terms[r, i + 1]
                    r2 += terms[r, i + 2]
                    r3 += terms[r, i + 3]
                    r4 += terms[r, i + 4]
                    r5 += terms[r, i + 5]
                    r6 += terms[r, i + 6]
                    r7 += terms[r, i + 7]
                tree[blk] = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
            width = n_bins // 128
            while width > 1:  # the recursion's halves, added left + right
                width //= 2
                for i in range(width):
                    tree[i] = tree[2 * i] + tree[2 * i + 1]
            out[r, j] = tree[0]
    return out


def _moment_sums_numpy(s: ColumnSums, cols: np.ndarray, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, ...]:
    """The NumPy formula of :func:`moment_sums` (the kernel's reference in the tests)."""
    d = s.moments[cols]  # (C, B, M + 1)
    c = s.centres[None, :]
    bb = np.asarray(b, dtype=float)[:, None]
    t0 = special.expit(np.asarray(a, dtype=float)[:, None] + bb * c)
    t, u, v = [t0], [1.0 - t0], []
    for m in range(MOMENT_ORDER + 1):
        v.append(sum(t[j] * u[m - j] for j in range(m + 1)))
        if m < MOMENT_ORDER:
            t.append(bb * v[m] / (m + 1))
            u.append(-t[m + 1])
    zero = np.zeros_like(t0)
    s_mu = sum(t[m] * d[..., m] for m in range(MOMENT_ORDER + 1))
    s_mux = sum((c * t[m] + (t[m - 1] if m else zero)) * d[..., m] for m in range(MOMENT_ORDER + 1))
    s_v = sum(v[m] * d[..., m] for m in range(MOMENT_ORDER + 1))
    s_vx = sum((c * v[m] + (v[m - 1] if m else zero)) * d[..., m] for m in range(MOMENT_ORDER + 1))
    s_vxx = sum((c * c * v[m] + (2.0 * c * v[m - 1] if m else zero) + (v[m - 2] if m > 1 else zero)) * d[..., m]
                for m in range(MOMENT_ORDER + 1))
    return tuple(arr.sum(axis=1) for arr in (s_mu, s_mux, s_v, s_vx, s_vxx))


@compiled_kernel
def _group_sums(q, y, cuts):  # pragma: no cover - compiled
    """n_g, O_g, E_g of the groups g_i = #{cuts < q_i}, summed in row order (as ``np.bincount``); per block of 1,024
    rows the groups first (cut by cut over the block's slice: a vectorised loop), then the sums row by row."""
    m = cuts.size + 1
    out = np.zeros((3, m))
    n = q.size
    g = np.empty(1024, dtype=np.int64)
    for lo in range(0, n, 1024):
        hi = min(lo + 1024, n)
        qs, ys, gs = q[lo:hi], y[lo:hi], g[:hi - lo]
        gs[:] = 0
        for j in range(cuts.size):  # branch-free count of the cuts below each value
            cj = cuts[j]
            for i in range(qs.size):
                gs[i] += cj < qs[i]
        for i in range(qs.size):
            gi = gs[i]
            out[0, gi] += 1.0
            out[1, gi] += ys[i]
            out[2, gi] += qs[i]
    return out


def group_sums(q, y, cuts) -> np.ndarray:
    """Hosmer–Lemeshow's per-group rows n_g, events O_g = Σ y and expected E_g = Σ q, groups g_i = #{c_j < q_i}.

    Equal bit for bit to ``np.bincount(np.searchsorted(cuts, q), weights=…)``: the same sums in the same row order,
    in one compiled pass instead of a sort-based group index and three passes.

    Parameters
    ----------
    q : ndarray of shape (n,)
        Clipped probabilities.
    y : ndarray of shape (n,)
        Outcomes.
    cuts : ndarray of shape (g − 1,)
        Sorted cut points.

    Returns
    -------
    ndarray of shape (3, g)
        n_g, O_g, E_g.

    References
    ----------
    Hosmer, D. W. & Lemeshow, S. (1980). Goodness of fit tests for the multiple logistic regression model.
    Communications in Statistics – Theory and Methods 9(10), 1043–1069.

    Examples
    --------
    >>> group_sums(np.array([0.1, 0.5, 0.9]), np.array([0.0, 1.0, 1.0]), np.array([0.5])).tolist()
    [[2.0, 1.0], [1.0, 1.0], [0.6, 0.9]]
    """
    return _group_sums(np.ascontiguousarray(q, dtype=float), np.ascontiguousarray(y, dtype=float),
                       np.ascontiguousarray(cuts, dtype=float))
