"""Hosmer–Lemeshow and the loess ICI / E50 / E90 of one large one-vs-rest column in three compiled passes over its
predictions and one over the deviations, no clipped copy and no outcome array written.

For the column f (n ≥ :data:`~calib_core.metrics.classification_loess_binned.BINNED_FROM` finite predictions) of
class k with outcomes y_i = 1[label_i = k] read from the labels, after NumPy's min f and max f:

1. **Bin sums.**  The loess bin sums W, D1, D2, Y, E over B equal-width bins of [min f, max f] (Cleveland & Grosse
   1991), each accumulator adding its rows in row order with the binned loess's own operations; then the local fits
   at the vertices.
2. **Deviations and deciles.**  d_i = |ĉ(f_i) − f_i| (kept in a scratch array) with Σ d (ICI = Σ d / n), and the
   values f of the bins holding the ranks ⌊(n − 1) j/10⌋ and the next one (the bin counts W are exact): sorted, they
   are the order statistics f_(r), and p̃_(r) = clip(f_(r), ε, 1 − ε) since the clip is monotone — NumPy's
   linear-interpolation quantiles of p̃ (Hyndman & Fan 1996, definition 7) are the Hosmer–Lemeshow cuts, exactly.
3. **Groups and E50 / E90.**  The Hosmer–Lemeshow n_g, O_g = Σ y, E_g = Σ p̃ in row order (groups #{cuts < p̃}; read
   from a per-bin table where no cut can fall inside the bin); then, in a pass over d of its own (fused with the
   groups it cost more than the two), for E50 and E90 the count of d below an interval [a, c] and the values inside
   it.  The interval comes from per-bin bounds of |ĉ(f) − f| (ĉ is piecewise linear:
   its values at the bin's edges and at the vertices inside) so that the ranks should fall inside; whether they do
   is checked from the exact counts, and if not the caller runs the separate passes.

Every value is the same double as the separate passes give
(:func:`~calib_core.metrics.classification_clinical.hosmer_lemeshow_of` and
:func:`~calib_core.metrics.classification_loess_binned.binned_calibration_errors`): the same operations in the same
order per accumulator, and selections that are exact whatever the bins and intervals (tested bit for bit).  Gathers
are branch-free (every value written to the next free slot, which advances only when it is wanted): a branch taken
half the time costs more than the pass.
"""

from __future__ import annotations

import numpy as np

from ..base.compiled import compiled_kernel
from .classification_loess_binned import BINNED_FROM, N_BINS, loess_from_bin_sums, order_statistics_quantiles

__all__ = ["column_hl_and_errors", "hosmer_lemeshow_from_sums"]


@compiled_kernel
def _bin_sums(f, labels, k, lo, inv_width, n_bins):  # pragma: no cover - compiled
    """The loess bin sums W, D1, D2, Y, E of unit weights, y_i = 1[labels_i = k] (the operations and row order of
    the binned loess's own pass)."""
    bins = np.zeros((n_bins, 5))
    width = 1.0 / inv_width
    for i in range(f.size):
        x = f[i]
        yi = 1.0 if labels[i] == k else 0.0
        wi = 1.0
        z = (x - lo) * inv_width
        b = n_bins - 1 if z >= n_bins - 1 else (int(z) if z > 0.0 else 0)
        d = x - (lo + (b + 0.5) * width)
        wy = wi * yi
        bins[b, 0] += wi
        bins[b, 1] += wi * d
        bins[b, 2] += wi * d * d
        bins[b, 3] += wy
        bins[b, 4] += wy * d
    return bins


@compiled_kernel
def _deviations(f, lo, step, values, lo_bins, inv_width, want, size, d):  # pragma: no cover - compiled
    """One pass: d_i = |ĉ(f_i) − f_i| into ``d`` (ĉ linear between the vertices lo + j·step; the binned loess's
    operations), Σ d, Σ 1, and the values f of the wanted bins of :func:`_bin_sums` (sorted; at most ``size``, the
    count says whether more were found).  The gather is branch-free: each value is written to the next free slot,
    which advances only for a wanted bin.  The position (f − lo)/step is taken as (f − lo)·(1/step), as in the
    binned loess's own pass.  The vertex pairs (ĉ_j, ĉ_{j+1}) are read from one (g − 1) × 2 table and the indices
    clamped to their tables (no-ops), so the compiler can drop most per-row bounds checks."""
    g = values.size
    top_b = want.size - 1
    pairs = np.empty((g - 1, 2))
    for j in range(g - 1):
        pairs[j, 0] = values[j]
        pairs[j, 1] = values[j + 1]
    top_j = g - 2
    pool = np.empty(size + 1)
    m = 0
    sd = 0.0
    sw = 0.0
    inv_step = 1.0 / step
    for i in range(min(f.size, d.size)):
        fi = f[i]
        x = (fi - lo) * inv_step
        j = top_j if x >= top_j else (int(x) if x > 0.0 else 0)
        j = max(min(j, top_j), 0)  # no-op (0 ≤ j ≤ g − 2)
        lam = x - j
        if lam < 0.0:
            lam = 0.0
        elif lam > 1.0:
            lam = 1.0
        v = abs(pairs[j, 0] * (1.0 - lam) + pairs[j, 1] * lam - fi)
        d[i] = v
        wi = 1.0
        sd += wi * v
        sw += wi
        z = (fi - lo_bins) * inv_width
        b = top_b if z >= top_b else (int(z) if z > 0.0 else 0)
        b = max(min(b, top_b), 0)  # no-op
        pool[min(m, size)] = fi
        m += want[b]
    out = pool[:min(m, size)].copy()
    out.sort()
    return sd, sw, out, m


@compiled_kernel
def _groups(f, labels, k, eps, one_minus_eps, cuts, lo, inv_width, group_of_bin):  # pragma: no cover - compiled
    """One pass: the Hosmer–Lemeshow n_g, O_g, E_g of p̃ = clip(f, ε, 1 − ε) (groups #{cuts < p̃}, row order).  The
    group of a row is that of its loess bin (``group_of_bin``, the bins of :func:`_bin_sums`) where every value the
    bin can hold has the same group, else (−1) counted from the cuts."""
    n_bins = group_of_bin.size
    groups = np.zeros((3, cuts.size + 1))
    for i in range(f.size):
        yi = 1.0 if labels[i] == k else 0.0
        q = f[i]
        if q < eps:
            q = eps
        if q > one_minus_eps:
            q = one_minus_eps
        z = (f[i] - lo) * inv_width
        b = n_bins - 1 if z >= n_bins - 1 else (int(z) if z > 0.0 else 0)
        gi = group_of_bin[b]
        if gi < 0:
            gi = 0
            for c in range(cuts.size):
                gi += cuts[c] < q
        groups[0, gi] += 1.0
        groups[1, gi] += yi
        groups[2, gi] += q
    return groups


@compiled_kernel
def _intervals_of(d, a0, c0, size0, a1, c1, size1):  # pragma: no cover - compiled
    """One pass over d: for the intervals [a0, c0] and [a1, c1] the count of d below each and its values inside
    (sorted; at most size0 / size1, the counts say whether more were found).  Branch-free counts and gathers (a
    pass of its own: fused with the group sums it cost more than the two passes)."""
    pool0 = np.empty(size0 + 1)
    pool1 = np.empty(size1 + 1)
    m0 = m1 = 0
    below0 = below1 = 0
    for i in range(d.size):
        v = d[i]
        below0 += np.int64(v < a0)
        below1 += np.int64(v < a1)
        pool0[min(m0, size0)] = v
        m0 += (v >= a0) & (v <= c0)
        pool1[min(m1, size1)] = v
        m1 += (v >= a1) & (v <= c1)
    out0 = pool0[:min(m0, size0)].copy()
    out0.sort()
    out1 = pool1[:min(m1, size1)].copy()
    out1.sort()
    return below0, below1, out0, out1, m0, m1


def _group_of_bin(lo: float, hi: float, width: float, n_bins: int, cuts: np.ndarray, eps: float, top_q: float
                  ) -> np.ndarray:
    """Per loess bin, the Hosmer–Lemeshow group #{cuts < p̃} shared by every value the bin can hold — the bin's
    edges widened by far more than the rounding of the bin index, clipped, counted with the kernel's comparison;
    −1 where the two ends differ (a cut inside the bin: the rows are counted one by one)."""
    edges = lo + width * np.arange(n_bins + 1)
    slack = 1e-6 * width + 1e-15 * (abs(lo) + abs(hi))
    low = np.clip(edges[:-1] - slack, eps, top_q)
    high = np.clip(edges[1:] + slack, eps, top_q)
    if np.all(cuts[1:] >= cuts[:-1]):  # sorted cuts: #{cuts < v} is the left insertion point (the same counts)
        g_low = np.searchsorted(cuts, low, side="left")
        g_high = np.searchsorted(cuts, high, side="left")
    else:
        g_low = (cuts[None, :] < low[:, None]).sum(axis=1)
        g_high = (cuts[None, :] < high[:, None]).sum(axis=1)
    return np.where(g_low == g_high, g_low, -1).astype(np.int64)


def _deviation_bounds(lo: float, width: float, n_bins: int, t: np.ndarray, values: np.ndarray
                      ) -> tuple[np.ndarray, np.ndarray]:
    """Per bin of f, bounds of d = |ĉ(f) − f| over the bin (ĉ piecewise linear: its values at the bin's edges and at
    the vertices inside), widened for rounding: they only choose where to look, the selection checks its counts."""
    edges = lo + width * np.arange(n_bins + 1)
    g = np.interp(edges, t, values) - edges
    a, b = g[:-1], g[1:]
    dlo = np.where(a * b <= 0.0, 0.0, np.minimum(np.abs(a), np.abs(b)))
    dhi = np.maximum(np.abs(a), np.abs(b))
    gv = values - t
    vb = np.clip(np.floor((t - lo) / width).astype(np.int64), 0, n_bins - 1)
    sign_change = (gv * a[vb] <= 0.0) | (gv * b[vb] <= 0.0)
    np.minimum.at(dlo, vb, np.where(sign_change, 0.0, np.abs(gv)))  # per vertex inside the bin (order-free)
    np.maximum.at(dhi, vb, np.abs(gv))
    margin = 1e-9 * np.maximum(dhi, 1e-3)
    return np.maximum(dlo - margin, 0.0), dhi + margin


def _intervals(dlo: np.ndarray, dhi: np.ndarray, w: np.ndarray, rank_pairs: list[tuple[int, int]]
               ) -> list[tuple[float, float, int]]:
    """Per pair (r_min, r_max), [a, c] holding the ranks r_min … r_max of d if the bounds hold:
    #(d < a) ≤ r_min ≤ r_max < #(d ≤ c); and the rows of the bins that can hold values in it (the bounds sorted
    once for all pairs)."""
    o = np.argsort(dlo, kind="stable")
    cum = np.concatenate([[0.0], np.cumsum(w[o])])
    lows = dlo[o]
    o2 = np.argsort(dhi, kind="stable")
    cum2 = np.cumsum(w[o2])
    highs = dhi[o2]
    out = []
    for r_min, r_max in rank_pairs:  # the two quantiles, not rows
        i = int(np.searchsorted(cum, r_min, side="right")) - 1
        a = float(lows[min(i, o.size - 1)])
        i2 = min(int(np.searchsorted(cum2, r_max + 1, side="left")), o2.size - 1)
        c = float(highs[i2])
        out.append((a, c, int(w[(dhi >= a) & (dlo <= c)].sum())))
    return out


def hosmer_lemeshow_from_sums(n_g: np.ndarray, o_g: np.ndarray, e_g: np.ndarray) -> tuple[float, int]:
    """The Hosmer–Lemeshow statistic from its group sums: H = Σ_g (O_g − E_g)² / (E_g (1 − E_g / n_g)), n_g > 0.

    Parameters
    ----------
    n_g, o_g, e_g : ndarray
        Rows (or weight), events and expected events per group (last axis: groups).

    Returns
    -------
    statistic : float or ndarray
        H (one per leading index when the sums are 2-D).
    n_nonempty : int
        Non-empty groups of the data (of the first row when 2-D).

    References
    ----------
    Hosmer, D. W. & Lemeshow, S. (1980). Goodness of fit tests for the multiple logistic regression model.
    Communications in Statistics – Theory and Methods 9(10), 1043–1069.

    Examples
    --------
    >>> stat, g = hosmer_lemeshow_from_sums(np.array([2.0, 2.0]), np.array([0.0, 2.0]), np.array([0.2, 1.8]))
    >>> round(stat, 3), g
    (0.444, 2)
    """
    ok = n_g > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(ok, (o_g - e_g) ** 2 / (e_g * (1.0 - e_g / np.where(ok, n_g, 1.0))), 0.0)
    stat = terms.sum(axis=-1)
    return (float(stat) if np.ndim(stat) == 0 else stat), int(np.count_nonzero(ok if ok.ndim == 1 else ok[0]))


def column_hl_and_errors(f: np.ndarray, labels: np.ndarray, k: int, *, eps: float, n_groups: int, span: float,
                         work: np.ndarray | None = None
                         ) -> tuple[tuple[float, int], dict[str, float] | None] | None:
    """Hosmer–Lemeshow (deciles of risk) and the binned-loess ICI, E50, E90 of the event 1[label = k] (module
    docstring), the same doubles as the separate functions.

    H = Σ_g (O_g − E_g)² / (E_g (1 − E_g / n_g)) over the groups cut at the deciles of p̃ = clip(f, ε, 1 − ε);
    d_i = |ĉ(f_i) − f_i| with ĉ the binned loess of y on f, ICI = mean d, E50 and E90 the quantiles of d.

    Parameters
    ----------
    f : ndarray of shape (n,)
        Predicted probabilities of class k (contiguous float64).
    labels : ndarray of int, shape (n,)
        Class of each row.
    k : int
        The class.
    eps : float
        Clipping of p for Hosmer–Lemeshow.
    n_groups : int
        Hosmer–Lemeshow groups.
    span : float
        The loess span.
    work : ndarray of shape (≥ n,), optional
        Scratch space for the deviations (reused over the columns).

    Returns
    -------
    tuple or None
        ``((H, non-empty groups), {"ici", "e50", "e90"})``, the second ``None`` when the E50 / E90 intervals missed
        their ranks (run the loess errors separately); ``None`` altogether below
        :data:`~calib_core.metrics.classification_loess_binned.BINNED_FROM` rows, with non-finite or all-equal
        predictions, or when the loess is degenerate on bins (run the separate functions).

    References
    ----------
    Hosmer, D. W. & Lemeshow, S. (1980). Goodness of fit tests for the multiple logistic regression model.
    Communications in Statistics – Theory and Methods 9(10), 1043–1069.
    Austin, P. C. & Steyerberg, E. W. (2019). The Integrated Calibration Index (ICI) and related metrics for
    quantifying the calibration of logistic regression models. Statistics in Medicine 38(21), 4051–4065.
    Cleveland, W. S. & Grosse, E. (1991). Computational methods for local regression. Statistics and Computing 1(1),
    47–62.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> f = rng.uniform(0.05, 0.95, 200_000)
    >>> labels = (rng.random(f.size) < f).astype(np.int64)
    >>> (hl, groups), errors = column_hl_and_errors(f, labels, 1, eps=1e-7, n_groups=10, span=0.75)
    >>> groups, bool(errors["ici"] < 0.01)
    (10, True)
    """
    f = np.ascontiguousarray(f, dtype=float).ravel()
    labels = np.ascontiguousarray(labels).ravel()
    n = f.size
    if n < BINNED_FROM:
        return None
    lo, hi = float(f.min()), float(f.max())
    if not (np.isfinite(lo) and np.isfinite(hi) and hi > lo):
        return None  # non-finite or one distinct prediction: the separate functions (and the exact loess)
    eps, top_q = float(eps), 1.0 - float(eps)
    width = (hi - lo) / int(N_BINS)
    inv_width = 1.0 / width
    bins = _bin_sums(f, labels, int(k), lo, inv_width, int(N_BINS))
    counts = bins[:, 0].astype(np.int64)
    fit = loess_from_bin_sums(bins, lo, hi, span=span)
    if fit is None:  # degenerate for bins: the caller runs the separate functions (and the exact loess)
        return None
    t, values = fit
    step = float(t[1] - t[0])
    # the deciles of risk: p̃_(r) = clip(f_(r)) (the clip is monotone), f_(r) from the bins holding the ranks,
    # gathered during the deviations' pass
    q_groups = np.arange(1, int(n_groups)) / int(n_groups)
    ranks = np.unique(np.concatenate([np.floor((n - 1) * q_groups).astype(np.int64),
                                      np.minimum(np.floor((n - 1) * q_groups).astype(np.int64) + 1, n - 1)]))
    cum = np.concatenate([[0], np.cumsum(counts)])
    cell_of = np.searchsorted(cum, ranks, side="right") - 1
    want = np.zeros(counts.size, dtype=np.bool_)
    want[cell_of] = True
    sizes = np.where(want, counts, 0)
    at = ranks - cum[cell_of] + np.concatenate([[0], np.cumsum(sizes)])[cell_of]
    d = np.empty(n) if work is None or work.size < n else work[:n]
    sd, sw, pool, m = _deviations(f, float(t[0]), step, values, lo, inv_width, want, int(sizes.sum()), d)
    if m != pool.size:  # cannot happen (the bins are the pass's own): the separate functions
        return None
    stats = dict(zip(ranks.tolist(), np.clip(pool[at], eps, top_q), strict=True))
    cuts = np.ascontiguousarray(order_statistics_quantiles(n, q_groups, lambda r: np.array(
        [stats[int(x)] for x in r])))
    dlo, dhi = _deviation_bounds(lo, width, int(N_BINS), t, values)
    probs = (0.5, 0.9)
    prev = [int(np.floor((n - 1) * p)) for p in probs]
    (a0, c0, s0), (a1, c1, s1) = _intervals(dlo, dhi, counts.astype(float), [(r, min(r + 1, n - 1)) for r in prev])
    groups = _groups(f, labels, int(k), eps, top_q, cuts, lo, inv_width,
                     _group_of_bin(lo, hi, width, int(N_BINS), cuts, eps, top_q))
    below0, below1, pool0, pool1, m0, m1 = _intervals_of(d, a0, c0, s0, a1, c1, s1)
    hl = hosmer_lemeshow_from_sums(*groups)
    found = {}
    for below, pool_s, m_s, r in ((below0, pool0, m0, prev[0]), (below1, pool1, m1, prev[1])):
        r1 = min(r + 1, n - 1)
        if m_s != pool_s.size or not below <= r <= r1 < below + pool_s.size:
            return hl, None  # the bounds missed (rounding beyond the margin): the caller's separate passes
        found[r], found[r1] = pool_s[r - below], pool_s[r1 - below]
    e50, e90 = (float(v) for v in order_statistics_quantiles(n, probs, lambda ranks: np.array(
        [found[int(r)] for r in ranks])))
    return hl, {"ici": float(sd / sw), "e50": e50, "e90": e90}
