"""Loess at large N on rows aggregated into fine bins of the prediction: the smoothed calibration curve, ICI, E50 and
E90 of 10⁵ rows and more at the cost of one pass over the rows.

Why
---
The exact local-linear loess (:func:`~calib_core.metrics.classification_loess.loess_smooth`) sums span·N tricube
weights per fit point: with the default ``delta`` (~100 fit points) and span 0.75, 7.5·10⁷ weights per curve at
N = 10⁶ — ten times a pass over the rows even compiled.  Above :data:`BINNED_FROM` rows the standard large-N device
is used instead (Cleveland & Grosse 1991; R's ``loess`` interpolates a fit made at a few vertices — its default
``surface = "interpolate"``, which Austin & Steyerberg's ICI code uses):

1. **Bins.**  The weighted rows are aggregated into B = :data:`N_BINS` equal-width bins of f over [min f, max f];
   per bin b the exact sums W_b = Σ w, D1_b = Σ w (f − c_b), D2_b = Σ w (f − c_b)², Y_b = Σ w y,
   E_b = Σ w y (f − c_b) (c_b the bin's centre) — one compiled pass over the rows.
2. **Radius.**  h(t) = the smallest r with weight ⌊span·W⌋ in [t − r, t + r], from the cumulative bin weights
   (linear within a bin: rows spread evenly over their bin), by bisection.
3. **Local fits at G = :data:`N_VERTICES` equally spaced vertices t.**  Every row of bin b gets the tricube weight of
   the bin's centroid x̄_b = c_b + D1_b/W_b, K_b = (1 − (|x̄_b − t|/h)³)₊³, and its own f and y through the exact
   bin sums: S0 = Σ K_b W_b, S1 = Σ K_b (W_b δ_b + D1_b), S2 = Σ K_b (W_b δ_b² + 2δ_b D1_b + D2_b),
   T0 = Σ K_b Y_b, T1 = Σ K_b (Y_b δ_b + E_b) with δ_b = c_b − t; then, with m = S1/S0,
   ĉ(t) = T0/S0 − m (T1/S0 − m T0/S0) / max(S2/S0 − m², 1e-12) — the local line of the exact method at t, whose
   only approximation is the kernel weight held at the bin's centroid (the first-order term of the kernel's
   variation within a bin cancels at the centroid; the error is O((bin width / h)²)).
4. **Rows.**  ĉ(f_i) by linear interpolation between the vertices (as the exact method interpolates between its
   ``delta`` fit points), d_i = |ĉ(f_i) − f_i|; ICI = Σ w d / Σ w; E50, E90 = the quantiles of d (NumPy's linear
   interpolation), exact given the curve.

Measured error against the exact fit (``docs/benchmarks/point_classification.md``; tested on data drawn from a
known law in ``tests/metrics/test_classification_loess_binned.py``): |ΔICI|, |ΔE50|, |ΔE90| ≤ 1e-6 at 10⁵–10⁶ rows
on simulated and real data (tested ≤ 1e-5), the curves within 5e-5 of each other — far inside the sampling error of
these statistics at those N.

Degenerate data (fewer than two distinct values, or a radius narrower than :data:`MIN_RADIUS_BINS` bins — most of
the weight on a few values) fall back to the exact method: the approximation holds only where the kernel is wide
against the bins.
"""

from __future__ import annotations

import numpy as np

from ..base.compiled import compiled_kernel

__all__ = ["binned_loess_vertices", "loess_from_bin_sums", "binned_calibration_errors", "quantiles_linear",
           "order_statistics_quantiles", "BINNED_FROM", "N_BINS", "N_VERTICES"]

#: Rows from which the clinical set's loess (ICI, E50, E90, the smoothed calibration curve without a band) is fitted
#: on bins; below, the exact per-row loess (golden outputs and the statsmodels cross-checks are exact there).
BINNED_FROM = 100_000
#: Equal-width bins of the prediction.
N_BINS = 16384
#: Equally spaced vertices of the local fits: 101, every 1 % of the range — the spacing of the exact method's fit
#: points with its default ``delta`` (R's ``lowess`` default), so both interpolate the curve alike.
N_VERTICES = 101
#: The binned fit is used only where every radius spans at least this many bins.
MIN_RADIUS_BINS = 32.0


@compiled_kernel
def _bin_sums(f, y, w, lo, inv_width, n_bins, unit):  # pragma: no cover - compiled
    """Per-bin sums W, D1, D2, Y, E (module docstring, step 1) of the rows with positive weight."""
    out = np.zeros((n_bins, 5))
    width = 1.0 / inv_width
    for i in range(f.size):
        wi = 1.0 if unit else w[i]
        if wi <= 0.0:
            continue
        z = (f[i] - lo) * inv_width
        b = n_bins - 1 if z >= n_bins - 1 else (int(z) if z > 0.0 else 0)  # float compare first: never int(±inf)
        d = f[i] - (lo + (b + 0.5) * width)
        wy = wi * y[i]
        out[b, 0] += wi
        out[b, 1] += wi * d
        out[b, 2] += wi * d * d
        out[b, 3] += wy
        out[b, 4] += wy * d
    return out


@compiled_kernel
def _vertex_fits(xc, wb, d1b, d2b, yb, eb, delta0, t, h):  # pragma: no cover - compiled
    """Local lines at the points t with radii h from the non-empty bins' centroids xc and sums W, D1, D2, Y, E (one
    contiguous array each; module docstring, step 3; δ_b = delta0_b − t with delta0 the bins' centres); NaN where
    fewer than two bins carry kernel weight.  Per point, first the tricube weights of the bins in its window (a loop
    over slices the compiler vectorises; 0 outside the radius), then the five sums in bin order: a bin outside adds
    0·term = +0, so the sums equal the loop that skips it, bit for bit."""
    out = np.empty(t.size)
    kb = np.empty(xc.size)
    for j in range(t.size):
        tj, hj = t[j], h[j]
        inv_h = 1.0 / hj
        b0 = np.searchsorted(xc, tj - hj)
        b1 = np.searchsorted(xc, tj + hj, side="right")
        m = b1 - b0
        xs, ws, d1s, d2s, ys, es, ds = xc[b0:b1], wb[b0:b1], d1b[b0:b1], d2b[b0:b1], yb[b0:b1], eb[b0:b1], \
            delta0[b0:b1]
        ks = kb[:m]
        used = 0
        for b in range(m):
            u = abs(xs[b] - tj) * inv_h
            c = 1.0 - u * u * u
            ks[b] = c * c * c if u < 1.0 else 0.0
            used += u < 1.0
        s0 = s1 = s2 = t0 = t1 = 0.0
        for b in range(m):
            k = ks[b]
            w, d1, y = ws[b], d1s[b], ys[b]
            delta = ds[b] - tj
            s0 += k * w
            s1 += k * (w * delta + d1)
            s2 += k * (w * delta * delta + 2.0 * delta * d1 + d2s[b])
            t0 += k * y
            t1 += k * (y * delta + es[b])
        if used < 2 or s0 <= 0.0:
            out[j] = np.nan
            continue
        mx = s1 / s0
        mean_y = t0 / s0
        sxx = s2 / s0 - mx * mx
        if sxx < 1e-12:
            sxx = 1e-12
        out[j] = mean_y - mx * (t1 / s0 - mx * mean_y) / sxx
    return out


@compiled_kernel
def _radii(t, edges, cum, target, full):  # pragma: no cover - compiled
    """The bisection of :func:`loess_from_bin_sums` (60 halvings of [0, full] per point, the weight in
    [t − r, t + r] from ``np.interp`` on the cumulative bin weights) point by point: the same doubles.  The
    interpolation at each end is NumPy's for strictly increasing nodes: its end values, its exact-node shortcut,
    slope·(x − xp_j) + fp_j and its retry from the right node when that is NaN."""
    out = np.empty(t.size)
    n = edges.size
    ends = np.empty(2)
    for i in range(t.size):
        a, b = 0.0, full
        ti = t[i]
        for _ in range(60):
            mid = 0.5 * (a + b)
            for side in range(2):
                x = ti + mid if side == 0 else ti - mid
                if x != x:
                    r = x
                elif x > edges[n - 1]:
                    r = cum[n - 1]
                elif x < edges[0]:
                    r = cum[0]
                else:
                    j = np.searchsorted(edges, x, side="right") - 1
                    if j == n - 1 or edges[j] == x:
                        r = cum[j]
                    else:
                        slope = (cum[j + 1] - cum[j]) / (edges[j + 1] - edges[j])
                        r = slope * (x - edges[j]) + cum[j]
                        if r != r:
                            r = slope * (x - edges[j + 1]) + cum[j + 1]
                            if r != r and cum[j] == cum[j + 1]:
                                r = cum[j]
                ends[side] = r
            if ends[0] - ends[1] >= target:
                b = mid
            else:
                a = mid
        out[i] = b
    return out


@compiled_kernel
def _deviations(f, w, lo, step, values, unit):  # pragma: no cover - compiled
    """d_i = |ĉ(f_i) − f_i| (ĉ linear between the vertices lo + j·step), Σ w d, Σ w and max d.  The position
    (f − lo)/step is taken as (f − lo)·(1/step): one multiplication per row instead of a division (the same
    position within a unit in the last place; ĉ is continuous across the vertices, so d moves at rounding level)."""
    g = values.size
    d = np.empty(f.size)
    sd = 0.0
    sw = 0.0
    top = 0.0
    inv_step = 1.0 / step
    for i in range(f.size):
        x = (f[i] - lo) * inv_step
        j = g - 2 if x >= g - 2 else (int(x) if x > 0.0 else 0)  # float compare first: never int(±inf)
        lam = x - j
        if lam < 0.0:
            lam = 0.0
        elif lam > 1.0:
            lam = 1.0
        v = abs(values[j] * (1.0 - lam) + values[j + 1] * lam - f[i])
        d[i] = v
        if v > top:
            top = v
        wi = 1.0 if unit else w[i]
        sd += wi * v
        sw += wi
    return d, sd, sw, top


@compiled_kernel
def _select(v, top, ranks, n_cells):  # pragma: no cover - compiled
    """The order statistics v_(r) (0-based ranks r, sorted ascending) of values 0 ≤ v ≤ top, exactly: a histogram
    of n_cells cells over [0, top], then a sort of only the values in the cells holding the ranks."""
    n = v.size
    scale = n_cells / top if top > 0.0 else 0.0
    counts = np.zeros(n_cells + 1, dtype=np.int64)
    cells = np.empty(n, dtype=np.int32)  # n_cells ≤ 2¹⁶
    last = float(n_cells - 1)
    for i in range(n):  # the cell of every value (a loop the compiler vectorises), kept for the second pass
        z = v[i] * scale
        cells[i] = n_cells - 1 if z >= last else (int(z) if z > 0.0 else 0)  # NaN (0·∞) and ∞ stay in range
    for i in range(n):
        counts[cells[i] + 1] += 1
    for c in range(n_cells):
        counts[c + 1] += counts[c]
    want = np.zeros(n_cells, dtype=np.bool_)
    cell_of = np.empty(ranks.size, dtype=np.int64)
    for j in range(ranks.size):
        c = np.searchsorted(counts, ranks[j], side="right") - 1
        cell_of[j] = c
        want[c] = True
    size = 0
    for c in range(n_cells):
        if want[c]:
            size += counts[c + 1] - counts[c]
    pool = np.empty(size)
    m = 0
    for i in range(n):
        if want[cells[i]]:
            pool[m] = v[i]
            m += 1
    pool.sort()
    out = np.empty(ranks.size)
    for j in range(ranks.size):  # rank r is the (r − below)-th of the pooled cells' values
        c = cell_of[j]
        below = counts[c]
        for cc in range(c):
            if want[cc]:
                below -= counts[cc + 1] - counts[cc]
        out[j] = pool[ranks[j] - below]
    return out


def order_statistics_quantiles(n: int, q, pick) -> np.ndarray:
    """NumPy's linear-interpolation quantiles from order statistics: Q(q) = v_(j) + γ (v_(j+1) − v_(j)).

    j = ⌊(n − 1) q⌋, γ = (n − 1) q − j, in NumPy's arithmetic (``b − (b − a)(1 − γ)`` for γ ≥ 0.5, else
    ``a + (b − a) γ``), so the result equals ``np.quantile(v, q)`` bit for bit when ``pick`` gives the exact order
    statistics.

    Parameters
    ----------
    n : int
        Number of values (≥ 1).
    q : sequence of float
        Probabilities in [0, 1].
    pick : callable
        ``pick(ranks)`` → the order statistics v_(r) (0-based, ascending) of the sorted unique ranks.

    Returns
    -------
    ndarray
        The quantiles.

    References
    ----------
    Hyndman, R. J. & Fan, Y. (1996). Sample quantiles in statistical packages. The American Statistician 50(4),
    361–365.

    Examples
    --------
    >>> v = np.random.default_rng(0).random(11)
    >>> got = order_statistics_quantiles(v.size, [0.5, 0.9], lambda r: np.sort(v)[r])
    >>> bool(np.array_equal(got, np.quantile(v, [0.5, 0.9])))
    True
    """
    q = np.asarray(q, dtype=float)
    vi = (n - 1) * q
    prev = np.floor(vi).astype(np.int64)
    nxt = np.minimum(prev + 1, n - 1)
    ranks = np.unique(np.concatenate([prev, nxt]))
    stats = pick(ranks)
    a, b = stats[np.searchsorted(ranks, prev)], stats[np.searchsorted(ranks, nxt)]
    gamma = vi - prev
    diff = b - a
    return np.where(gamma >= 0.5, b - diff * (1 - gamma), a + diff * gamma)


def quantiles_linear(v: np.ndarray, q, top: float | None = None) -> np.ndarray:
    """``np.quantile(v, q)`` (linear interpolation) of non-negative values, bit for bit, by an exact selection.

    Q(q) = v_(j) + γ (v_(j+1) − v_(j)), j = ⌊(n − 1) q⌋, γ = (n − 1) q − j (NumPy's form of the interpolation); the
    order statistics from one histogram pass and a sort of the few values in the cells that hold them.

    Parameters
    ----------
    v : ndarray of shape (n,)
        Finite values ≥ 0.
    q : sequence of float
        Probabilities in [0, 1].
    top : float, optional
        max v when known.

    Returns
    -------
    ndarray
        The quantiles.

    References
    ----------
    Hyndman, R. J. & Fan, Y. (1996). Sample quantiles in statistical packages. The American Statistician 50(4),
    361–365.

    Examples
    --------
    >>> v = np.random.default_rng(0).random(1001)
    >>> bool(np.array_equal(quantiles_linear(v, [0.5, 0.9]), np.quantile(v, [0.5, 0.9])))
    True
    """
    v = np.ascontiguousarray(v, dtype=float).ravel()
    q = np.asarray(q, dtype=float)
    n = v.size
    top = float(v.max()) if top is None else float(top)
    return order_statistics_quantiles(n, q, lambda ranks: _select(v, top, ranks, max(16, min(1 << 16, n // 64))))


def binned_loess_vertices(f, y, weights=None, *, span: float = 0.75, n_bins: int = N_BINS,
                          n_vertices: int = N_VERTICES, at=None, radius=None
                          ) -> tuple[np.ndarray, np.ndarray] | None:
    """The binned local-linear loess of ``y`` on ``f`` at equally spaced vertices (or at ``at``).

    ĉ(t) = T0/S0 − m (T1/S0 − m T0/S0) / max(S2/S0 − m², 1e-12), m = S1/S0, the sums over bins of the prediction
    with the tricube weight of each bin's centroid and the bins' exact moments (module docstring).

    Parameters
    ----------
    f : ndarray of shape (n,)
        Predictions (finite).
    y : ndarray of shape (n,)
        Outcomes (finite).
    weights : ndarray of shape (n,), optional
        Prior weights ≥ 0 (default 1).
    span : float
        Share of the weight in every neighbourhood.
    n_bins : int
        Equal-width bins of f.
    n_vertices : int
        Equally spaced vertices from min f to max f (ignored with ``at``).
    at : ndarray, optional
        Points to fit at instead of the vertices.
    radius : ndarray, optional
        The exact radii h(t) at the points (from the sorted rows), instead of the binned cumulative weight's.

    Returns
    -------
    tuple of ndarray, or None
        The points and ĉ at them; ``None`` when the data are degenerate for bins (module docstring): the caller
        then runs the exact loess.

    References
    ----------
    Cleveland, W. S. & Grosse, E. (1991). Computational methods for local regression. Statistics and Computing 1(1),
    47–62.
    Cleveland, W. S. (1979). Robust locally weighted regression and smoothing scatterplots. Journal of the American
    Statistical Association 74(368), 829–836.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> f = rng.uniform(0.0, 1.0, 20_000)
    >>> t, c = binned_loess_vertices(f, 0.5 * f + 0.25)   # a line is reproduced
    >>> bool(np.max(np.abs(c - (0.5 * t + 0.25))) < 1e-9)
    True
    """
    f = np.ascontiguousarray(f, dtype=float).ravel()
    y = np.ascontiguousarray(y, dtype=float).ravel()
    unit = weights is None
    w = np.empty(0) if unit else np.ascontiguousarray(weights, dtype=float).ravel()
    pos = f if unit else f[w > 0]
    if pos.size < 2:
        return None
    lo, hi = float(pos.min()), float(pos.max())
    if not hi > lo:
        return None
    width = (hi - lo) / int(n_bins)
    sums = _bin_sums(f, y, w, lo, 1.0 / width, int(n_bins), unit)
    return loess_from_bin_sums(sums, lo, hi, span=span, n_vertices=n_vertices, at=at, radius=radius)


def loess_from_bin_sums(sums: np.ndarray, lo: float, hi: float, *, span: float = 0.75, n_vertices: int = N_VERTICES,
                        at=None, radius=None) -> tuple[np.ndarray, np.ndarray] | None:
    """Steps 2 and 3 of the module docstring from the per-bin sums of step 1: the radii and the local lines.

    ĉ(t) = T0/S0 − m (T1/S0 − m T0/S0) / max(S2/S0 − m², 1e-12), m = S1/S0 (the bins' tricube-weighted sums).

    Parameters
    ----------
    sums : ndarray of shape (B, 5)
        W, D1, D2, Y, E per equal-width bin of [lo, hi].
    lo, hi : float
        The smallest and largest prediction of positive weight (lo < hi).
    span, n_vertices, at, radius
        As :func:`binned_loess_vertices`.

    Returns
    -------
    tuple of ndarray, or None
        As :func:`binned_loess_vertices`.

    References
    ----------
    Cleveland, W. S. & Grosse, E. (1991). Computational methods for local regression. Statistics and Computing 1(1),
    47–62.
    """
    n_bins = sums.shape[0]
    width = (hi - lo) / int(n_bins)
    total = float(sums[:, 0].sum())
    k = min(max(float(int(span * total + 1e-10)), min(2.0, total)), total)
    t = np.linspace(lo, hi, int(n_vertices)) if at is None else np.ascontiguousarray(at, dtype=float).ravel()
    if radius is None:
        edges = lo + width * np.arange(int(n_bins) + 1)
        cum = np.concatenate([[0.0], np.cumsum(sums[:, 0])])
        target = k - 1e-9 * max(total, 1.0)
        if np.all(edges[1:] > edges[:-1]) and np.all(np.isfinite(t)):  # compiled, point by point
            h = _radii(np.ascontiguousarray(t), edges, cum, float(target), float(hi - lo))
        else:
            h = _bisect_radii(t, edges, cum, target, hi - lo)
    else:
        h = np.asarray(radius, dtype=float)
    if float(h.min()) < MIN_RADIUS_BINS * width:
        return None
    full = np.flatnonzero(sums[:, 0] > 0)
    centres = lo + (full + 0.5) * width
    nonempty = np.ascontiguousarray(sums[full].T)  # one contiguous array per sum
    values = _vertex_fits(centres + nonempty[1] / nonempty[0], *nonempty, centres, t, h)
    if not np.all(np.isfinite(values)):
        return None
    return t, values


def _bisect_radii(t: np.ndarray, edges: np.ndarray, cum: np.ndarray, target: float, full: float) -> np.ndarray:
    """The radius bisection in NumPy (the reference of the compiled :func:`_radii`)."""
    a, b = np.zeros(t.size), np.full(t.size, full)
    for _ in range(60):  # bisection of the radius on the binned cumulative weight
        mid = 0.5 * (a + b)
        ok = np.interp(t + mid, edges, cum) - np.interp(t - mid, edges, cum) >= target
        b, a = np.where(ok, mid, b), np.where(ok, a, mid)
    return b


def binned_calibration_errors(f, y, weights=None, *, span: float = 0.75) -> dict[str, float] | None:
    """ICI, E50 and E90 of the binned loess calibration curve (module docstring, step 4).

    d_i = |ĉ(f_i) − f_i| with ĉ the binned loess (:func:`binned_loess_vertices`) interpolated linearly between its
    vertices; ICI = Σ w d / Σ w; E50, E90 = quantiles of d (unit weights: NumPy's; weighted: the weighted midpoint
    CDF, as the exact method).

    Parameters
    ----------
    f : ndarray of shape (n,)
        Predicted probabilities of the event.
    y : ndarray of shape (n,)
        Outcomes 0/1.
    weights : ndarray of shape (n,), optional
        Frequency weights.
    span : float
        The smoother's span.

    Returns
    -------
    dict or None
        ``ici``, ``e50``, ``e90``; ``None`` when the data are degenerate for bins (run the exact method).

    References
    ----------
    Austin, P. C. & Steyerberg, E. W. (2019). The Integrated Calibration Index (ICI) and related metrics for
    quantifying the calibration of logistic regression models. Statistics in Medicine 38(21), 4051–4065.
    Cleveland, W. S. & Grosse, E. (1991). Computational methods for local regression. Statistics and Computing 1(1),
    47–62.

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> f = rng.uniform(0.05, 0.95, 200_000)
    >>> y = (rng.random(f.size) < f).astype(float)
    >>> bool(binned_calibration_errors(f, y)["ici"] < 0.01)
    True
    """
    fit = binned_loess_vertices(f, y, weights, span=span)
    if fit is None:
        return None
    t, values = fit
    f = np.ascontiguousarray(f, dtype=float).ravel()
    unit = weights is None
    w = np.empty(0) if unit else np.ascontiguousarray(weights, dtype=float).ravel()
    d, sd, sw, top = _deviations(f, w, float(t[0]), float(t[1] - t[0]), values, unit)
    if unit:
        e50, e90 = (float(v) for v in quantiles_linear(d, [0.5, 0.9], top))
    else:  # the weighted midpoint CDF, linearly interpolated (as the exact method's weighted quantiles)
        keep = w > 0
        order = np.argsort(d[keep], kind="stable")
        v, wk = d[keep][order], w[keep][order]
        if np.all(wk == wk[0]):  # equal weights: NumPy's quantiles, as the exact method
            e50, e90 = (float(x) for x in quantiles_linear(v, [0.5, 0.9]))
        else:
            cum = np.cumsum(wk)
            e50, e90 = (float(np.interp(q, (cum - wk / 2.0) / cum[-1], v)) for q in (0.5, 0.9))
    return {"ici": float(sd / sw), "e50": e50, "e90": e90}
