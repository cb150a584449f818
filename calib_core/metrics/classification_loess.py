"""Locally weighted regression (loess / lowess, Cleveland 1979): the smoother behind the smoothed calibration curve
and the integrated calibration index (Austin & Steyerberg 2019).

Definition
----------
Rows (f_i, y_i) with prior weights w_i ≥ 0 (default 1), total weight W = Σ w_i.  The fitted value at a point t is
the value at t of the weighted least-squares polynomial of degree ``degree`` fitted to the rows near t:

* the neighbourhood radius h(t) is the smallest h such that the rows with |f_i − t| ≤ h carry weight at least
  k = ⌊span·W⌋ (at least 2, at most W) — with unit weights, the distance to the k-th nearest row, the span·N nearest
  rows of Cleveland (1979) and of R's / statsmodels' ``lowess``;
* the local weights are tricube × prior × robustness: v_i(t) = (1 − (|f_i − t|/h)³)³ · w_i · ρ_i for |f_i − t| < h,
  0 beyond (ρ_i = 1 without robustness iterations);
* degree 1 (default): with the normalised weights ṽ_i = v_i / Σ v, f̄ = Σ ṽ_i f_i and S = max(Σ ṽ_i (f_i − f̄)², 1e-12),
  ŷ(t) = Σ ṽ_i [1 + (t − f̄)(f_i − f̄)/S] y_i (the local line at t, written as statsmodels writes it);
  degree 0: ŷ(t) = Σ ṽ_i y_i (local mean); degree 2: the local quadratic in (f − t)/h, solved by least squares.
* Degenerate neighbourhoods: when h = 0 (more than k of the weight sits on the value t itself) or fewer than two
  rows have local weight > 1e-12, ŷ(t) is the weighted mean of y over the neighbourhood, the rows with
  |f_i − t| ≤ h (the rows tied at t when h = 0).  statsmodels returns the row's own y_i (NaN at ``xvals``) here;
  with k ≥ 2 rows of distinct values this never occurs.

Robustness iterations (``iterations`` = statsmodels' ``it``): after each pass, r_i = |y_i − ŷ(f_i)|, s = the median
of r over the rows of positive weight; if s ≤ 1e-7 the iterations stop; else ρ_i = (1 − min(r_i / 6s, 1)²)².  For
binary outcomes the default 0 is the right choice (Austin & Steyerberg 2019 use it = 0 too).

Computation (vectorised; no loop over rows)
-------------------------------------------
* The radius of every fit point by a vectorised binary search over the left end of the contiguous window of
  weight k (the k nearest rows are contiguous in the sorted f).  Degrees 0 and 1: per chunk of sorted fit points,
  the (points × rows) tricube matrix over the union of their windows, computed in place, times the five columns
  v·(1, x, x², y, x·y) (x centred at the chunk's mean) in one matrix product — the local sums S0, S1, S2, T0, T1,
  and ŷ = T0/S0 + (t − x̄)(T1/S0 − x̄ T0/S0)/max(S2/S0 − x̄², 1e-12), the statsmodels form; O(fit points · k) work
  (at N = 1e5 with the default delta: 0.08 s CPU, statsmodels 0.11 s).  Degree 2 and the degenerate
  neighbourhoods: per chunk of points, a (points × window) gather of the rows and the weighted sums.
* ``delta`` (statsmodels' meaning, default 0.01·(max f − min f), R's ``lowess`` default): the local fit is run only
  at a subset of the sorted rows — the first row, then repeatedly the last row within ``delta`` of the previous fit
  point (at least one row further on; rows tied with a fit point share its value) — and linearly interpolated in
  between.  The subset is found by a loop over fit points (≤ 2·range/delta + 2 of them), never over rows.
  ``delta=0`` fits at every distinct value.  Rows of weight 0 are never fit points (they take the interpolated
  value, the nearest end's value outside the weighted rows' range), so weight 0 is the row left out.
* ``at``: the fit is evaluated directly at each point of ``at`` (``delta`` is not used there), with the
  robustness weights of the passes over the rows, as statsmodels' ``xvals``.

With ``weights=None`` the result equals ``statsmodels.nonparametric.lowess(y, f, frac=span, it=iterations,
delta=delta, return_sorted=False)`` (tested to 1e-6); integer weights equal duplicated rows (also with ``delta``,
since the fit points depend on the values only).
"""

from __future__ import annotations

import numpy as np

__all__ = ["loess_smooth", "LoessDesign", "stable_order", "DEFAULT_SPAN", "DEFAULT_DELTA_FRACTION"]

#: Default span (share of the weight in each neighbourhood): 0.75, as R's ``loess`` and Austin & Steyerberg (2019).
DEFAULT_SPAN = 0.75
#: ``delta=None`` means this share of the range of f (R's ``lowess`` default, statsmodels' recommendation).
DEFAULT_DELTA_FRACTION = 0.01
#: Cells of the (fit points × window) weight matrix computed at once.
_CHUNK_CELLS = 2_000_000
#: Cells of the kernel matrix of one chunk of points (8 MB), at least 8 points per chunk.
_FAST_CELLS = 1 << 20
#: Tricube > 1e-12 ⟺ u < (1 − 1e-4)^(1/3): rows strictly inside this share of the radius count as weighted.
_INNER = (1.0 - 1e-4) ** (1.0 / 3.0)
#: Windows wider than this many rows (N above ~90,000 at span 0.75) are summed over row blocks of
#: :data:`_BLOCK_ROWS` rows that stay in cache (the products then add up in another order: equal to 1e-12).
_BLOCK_FROM = 1 << 16
#: Rows of one kernel block (8 points × 8,192 rows: 512 kB).
_BLOCK_ROWS = 1 << 13


def loess_smooth(f, y, weights=None, *, span: float = DEFAULT_SPAN, degree: int = 1, delta: float | None = None,
                 iterations: int = 0, at=None) -> np.ndarray:
    """Cleveland's locally weighted regression of ``y`` on ``f``, evaluated at the rows or at ``at``.

    ŷ(t) = argmin over polynomials q of degree ``degree`` of Σ_i (1 − (|f_i − t|/h(t))³)₊³ · w_i · (y_i − q(f_i − t))²,
    evaluated at t, where h(t) is the smallest radius holding ⌊span·Σw⌋ of the weight (the span·N nearest rows with
    unit weights).  See the module docstring for the neighbourhood, ``delta``, the robustness iterations and the
    degenerate cases.

    Parameters
    ----------
    f : array-like of float, shape (n,)
        The abscissae (predicted probabilities for a calibration curve); finite.
    y : array-like of float, shape (n,)
        The responses (0/1 outcomes for a calibration curve); finite.
    weights : array-like of float, shape (n,), optional
        Prior row weights ≥ 0 (bootstrap or survey weights); ``None`` = 1 each.  Weight 2 equals a duplicated row.
    span : float
        Share of the total weight in each neighbourhood, in (0, 1] (statsmodels' ``frac``); default 0.75.
    degree : {0, 1, 2}
        Degree of the local polynomial; default 1 (local linear, as ``lowess``).
    delta : float, optional
        Fit only at rows at least about ``delta`` apart and interpolate linearly in between (statsmodels' meaning);
        default ``None`` = 0.01 × (max f − min f); 0 fits at every distinct value.  Not used at ``at``.
    iterations : int
        Robustness iterations (statsmodels' ``it``); default 0.
    at : array-like of float, optional
        Where to evaluate the fitted curve; default the rows' own f, in the input order.

    Returns
    -------
    numpy.ndarray
        The fitted values, one per row of ``f`` (input order) or one per point of ``at`` (NaN at non-finite
        points of ``at``, and everywhere when there are no rows of positive weight).

    References
    ----------
    Cleveland, W. S. (1979). Robust locally weighted regression and smoothing scatterplots. Journal of the
    American Statistical Association 74(368), 829–836.
    Austin, P. C. & Steyerberg, E. W. (2019). The Integrated Calibration Index (ICI) and related metrics for
    quantifying the calibration of logistic regression models. Statistics in Medicine 38(21), 4051–4065.

    Examples
    --------
    >>> f = np.linspace(0.0, 1.0, 11)
    >>> np.round(loess_smooth(f, 2 * f + 1, span=0.5), 6)  # a line is reproduced exactly
    array([1. , 1.2, 1.4, 1.6, 1.8, 2. , 2.2, 2.4, 2.6, 2.8, 3. ])
    """
    f = np.asarray(f, dtype=float).ravel()
    y = np.asarray(y, dtype=float).ravel()
    if f.shape != y.shape:
        raise ValueError(f"f and y must have the same length ({f.size} and {y.size})")
    w = np.ones_like(f) if weights is None else np.asarray(weights, dtype=float).ravel()
    if w.shape != f.shape:
        raise ValueError(f"weights must have one value per row ({w.size} for {f.size} rows)")
    if not (np.all(np.isfinite(f)) and np.all(np.isfinite(y)) and np.all(np.isfinite(w)) and np.all(w >= 0)):
        raise ValueError("f and y must be finite and the weights finite and ≥ 0")
    if not 0.0 < float(span) <= 1.0:
        raise ValueError(f"span must be in (0, 1], got {span}")
    if int(degree) not in (0, 1, 2):
        raise ValueError(f"degree must be 0, 1 or 2, got {degree}")
    if int(iterations) < 0:
        raise ValueError(f"iterations must be ≥ 0, got {iterations}")
    at_arr = None if at is None else np.asarray(at, dtype=float).ravel()
    keep = w > 0
    n_out = f.size if at_arr is None else at_arr.size
    if not keep.any():
        return np.full(n_out, np.nan)
    order = stable_order(f)
    xs, ys, ws = f[order], y[order], w[order]
    if delta is None:
        delta = DEFAULT_DELTA_FRACTION * float(xs[-1] - xs[0])
    if float(delta) < 0:
        raise ValueError(f"delta must be ≥ 0, got {delta}")
    total = float(ws.sum())
    k = min(max(float(int(span * total + 1e-10)), min(2.0, total)), total)
    smoother = _Smoother(xs, ys, ws, k, int(degree))
    robust = np.ones_like(xs)
    passes = int(iterations) + (1 if at_arr is None else 0)
    fitted_sorted = None
    for it in range(passes):
        fitted_sorted = _fit_rows(smoother, robust, float(delta))
        if it == passes - 1 and at_arr is None:
            break
        resid = np.abs(ys - fitted_sorted)
        scale = float(np.median(resid[ws > 0]))
        if scale <= 1e-7:
            break
        r = np.minimum(resid / (6.0 * scale), 1.0)
        robust = (1.0 - r * r) ** 2
    if at_arr is None:
        out = np.empty_like(f)
        out[order] = fitted_sorted
        return out
    out = np.full(at_arr.size, np.nan)
    ok = np.isfinite(at_arr)
    out[ok] = smoother.fit(at_arr[ok], robust)
    return out


def stable_order(v: np.ndarray) -> np.ndarray:
    """``np.argsort(v, kind="stable")``, from NumPy's faster unstable (SIMD) sort when no two values are equal.

    Without ties every sort gives the one ordering; with ties (or NaN) the stable sort is run.

    Parameters
    ----------
    v : ndarray of shape (n,)
        Values.

    Returns
    -------
    ndarray of int, shape (n,)
        The stable sort order of ``v`` (ties in input order).

    References
    ----------
    Bramas, B. (2017). A novel hybrid quicksort algorithm vectorized using AVX-512 on Intel Skylake. International
    Journal of Advanced Computer Science and Applications 8(10), 337–344.

    Examples
    --------
    >>> stable_order(np.array([0.3, 0.1, 0.2])).tolist()
    [1, 2, 0]
    """
    v = np.asarray(v)
    order = np.argsort(v)
    s = v[order]
    if s.size < 2 or bool(np.all(s[1:] > s[:-1])):  # strictly increasing: no ties, no NaN
        return order
    return np.argsort(v, kind="stable")


def _fit_rows(smoother: _Smoother, robust: np.ndarray, delta: float) -> np.ndarray:
    """Fitted values at the sorted rows: local fits at statsmodels' fit points, linear interpolation between."""
    xs = smoother.x
    weighted = np.flatnonzero(smoother.w > 0)  # rows of weight 0 are not fit points: weight 0 = row absent
    idx = weighted[_fit_points(xs[weighted], delta)]
    values = smoother.fit(xs[idx], robust)
    return np.interp(xs, xs[idx], values)


def _fit_points(xs: np.ndarray, delta: float) -> np.ndarray:
    """Indices (into sorted ``xs``) where statsmodels' lowess runs a local regression for this ``delta``."""
    n = xs.size
    if delta == 0.0 or n <= 2:
        return np.unique(xs, return_index=True)[1]
    out = []
    i = 0
    while True:  # one iteration per fit point (≤ 2·range/delta + 2), never per row
        out.append(i)
        last = int(np.searchsorted(xs, xs[i], side="right")) - 1  # rows tied with the fit point share its value
        if last >= n - 1:
            break
        first_beyond = int(np.searchsorted(xs, xs[i] + delta, side="right"))
        k = first_beyond if first_beyond < n else n - 1
        i = max(k - 1, last + 1)
    return np.asarray(out, dtype=np.intp)


class _Smoother:
    """Sorted rows and the span weight k; ``fit(t, robust)`` evaluates the local polynomial at the points t."""

    def __init__(self, x: np.ndarray, y: np.ndarray, w: np.ndarray, k: float, degree: int):
        self.x, self.y, self.w, self.k, self.degree = x, y, w, k, degree
        self.cw = np.concatenate([[0.0], np.cumsum(w)])
        self.tol = 1e-9 * max(float(self.cw[-1]), 1.0)

    def radius(self, t: np.ndarray) -> np.ndarray:
        """Smallest radius around each t holding weight k: min over contiguous windows [l, r(l)) of weight ≥ k."""
        x, cw, n = self.x, self.cw, self.x.size
        l_max = min(int(np.searchsorted(cw, cw[-1] - self.k + self.tol, side="right")) - 1, n - 1)

        def reach(lo: np.ndarray) -> np.ndarray:  # index of the last row of the lightest window starting at lo
            r = np.searchsorted(cw, cw[lo] + self.k - self.tol, side="left")
            return np.clip(r - 1, lo, n - 1)

        lo = np.zeros(t.size, dtype=np.intp)
        hi = np.full(t.size, l_max + 1, dtype=np.intp)
        while np.any(lo < hi):  # first l whose window reaches at least as far right as left: log2(n) steps
            mid = (lo + hi) // 2
            active = lo < hi
            mid_c = np.minimum(mid, l_max)
            right_far = (x[reach(mid_c)] - t) >= (t - x[mid_c])
            hi = np.where(active & right_far, mid, hi)
            lo = np.where(active & ~right_far, mid + 1, lo)
        best = np.full(t.size, np.inf)
        for cand in (lo - 1, lo):
            valid = (cand >= 0) & (cand <= l_max)
            c = np.clip(cand, 0, l_max)
            rho = np.maximum(t - x[c], x[reach(c)] - t)
            best = np.where(valid, np.minimum(best, rho), best)
        return np.maximum(best, 0.0)

    def fit(self, t: np.ndarray, robust: np.ndarray) -> np.ndarray:
        """Local polynomial fits at the points t: degrees 0 and 1 by kernel-matrix products over chunks of points
        (:meth:`_fast_chunk`); degree 2 and degenerate neighbourhoods by the (points × window) gather."""
        t = np.asarray(t, dtype=float)
        h = self.radius(t)
        slack = 1e-12 * np.maximum(np.abs(t), 1.0)
        left = np.searchsorted(self.x, t - h - slack, side="left")
        right = np.searchsorted(self.x, t + h + slack, side="right")
        widths = np.maximum(right - left, 1)
        out = np.empty(t.size)
        todo = np.arange(t.size)
        if self.degree < 2 and t.size:
            order = np.argsort(t, kind="stable")  # consecutive points share most of their windows
            ok = np.zeros(t.size, dtype=bool)
            prior = self.w * robust
            unit = bool(np.all(prior == 1.0))
            width = int(widths.max())
            step = max(8, _FAST_CELLS // max(width, 1))
            for start in range(0, t.size, step):
                sl = order[start:start + step]
                out[sl], ok[sl] = self._fast_chunk(t[sl], h[sl], int(left[sl].min()), int(right[sl].max()), prior,
                                                   unit)
            todo = np.flatnonzero(~ok)
        if todo.size:
            width = int(widths[todo].max())
            step = max(1, _CHUNK_CELLS // width)
            for start in range(0, todo.size, step):  # chunks of fit points, so the weight matrix stays bounded
                sl = todo[start:start + step]
                out[sl] = self._fit_chunk(t[sl], h[sl], left[sl], right[sl], int(widths[sl].max()), robust)
        return out

    def _fast_chunk(self, t, h, lo, hi, prior, unit: bool) -> tuple[np.ndarray, np.ndarray]:
        """Degree 0/1 fits at sorted points t from the kernel matrix over the union of their windows [lo, hi):
        S = K · [v, v·x, v·x², v·y, v·x·y] (x centred at the points' mean), ŷ = T0/S0 + (t − x̄)(T1/S0 − x̄ T0/S0)/
        max(S2/S0 − x̄², 1e-12) — the statsmodels form.  ``ok`` False where the neighbourhood is degenerate (h = 0 or
        fewer than two rows of local weight > 1e-12): those points are refit by :meth:`_fit_chunk`."""
        c = float(t.mean())
        tc = t - c
        with np.errstate(divide="ignore"):
            inv_h = np.where(h > 0, 1.0 / np.where(h > 0, h, 1.0), 0.0)
        if hi - lo <= _BLOCK_FROM:  # one block: the kernel matrix and one product
            sums, count = _kernel_block(tc, inv_h, self.x[lo:hi] - c, prior[lo:hi], self.y[lo:hi], unit)
        else:  # wide windows (large N): row blocks that stay in cache, the products summed block by block
            sums, count = np.zeros((t.size, 5)), np.zeros(t.size, dtype=np.intp)
            for b0 in range(lo, hi, _BLOCK_ROWS):  # blocks of rows, each vectorised
                b1 = min(b0 + _BLOCK_ROWS, hi)
                part, n_in = _kernel_block(tc, inv_h, self.x[b0:b1] - c, prior[b0:b1], self.y[b0:b1], unit)
                sums += part
                if not unit:
                    count += n_in
        if unit:  # v = K: more than 1e-12 exactly where u³ < 1 − 1e-4 (rows strictly inside that radius)
            r = h * _INNER
            count = (np.searchsorted(self.x, t + r, side="left") - np.searchsorted(self.x, t - r, side="right"))
        ok = (count >= 2) & (h > 0)
        s0, s1, s2, t0, t1 = sums.T
        with np.errstate(divide="ignore", invalid="ignore"):
            mean_y = t0 / s0
            if self.degree == 0:
                fitted = mean_y
            else:
                xbar = s1 / s0
                sxx = np.maximum(s2 / s0 - xbar * xbar, 1e-12)
                fitted = mean_y + (tc - xbar) * (t1 / s0 - xbar * mean_y) / sxx
        return fitted, ok & np.isfinite(fitted)

    def _fit_chunk(self, t, h, left, right, width, robust) -> np.ndarray:
        cols = np.arange(width)
        idx = left[:, None] + cols[None, :]
        inside = idx < right[:, None]
        idx = np.minimum(idx, self.x.size - 1)
        xj, yj = self.x[idx], self.y[idx]
        prior = np.where(inside, self.w[idx] * robust[idx], 0.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            d = np.abs(xj - t[:, None]) / h[:, None]
        tmp = 1.0 - d * d * d
        tri = np.where((d < 1.0) & (h[:, None] > 0), tmp * tmp * tmp, 0.0)
        v = tri * prior
        ok = ((v > 1e-12).sum(axis=1) >= 2) & (h > 0)
        total = v.sum(axis=1)
        vn = v / np.where(total > 0, total, 1.0)[:, None]
        if self.degree == 0:
            fitted = (vn * yj).sum(axis=1)
        elif self.degree == 1:
            xbar = (vn * xj).sum(axis=1)
            dx = xj - xbar[:, None]
            sxx = np.maximum((vn * dx * dx).sum(axis=1), 1e-12)
            fitted = (vn * (1.0 + (t - xbar)[:, None] * dx / sxx[:, None]) * yj).sum(axis=1)
        else:
            fitted = _local_quadratic(vn, (xj - t[:, None]) / np.where(h > 0, h, 1.0)[:, None], yj)
        if not ok.all():
            near = np.where(h[:, None] > 0, d <= 1.0, xj == t[:, None]) & (prior > 0)
            fallback_w = np.where(near, prior, 0.0)
            sw = fallback_w.sum(axis=1)
            with np.errstate(invalid="ignore", divide="ignore"):
                mean = np.where(sw > 0, (fallback_w * yj).sum(axis=1) / sw, np.nan)
            fitted = np.where(ok, fitted, mean)
        return fitted


def _kernel_block(tc: np.ndarray, inv_h: np.ndarray, xc: np.ndarray, pr: np.ndarray, y: np.ndarray, unit: bool
                  ) -> tuple[np.ndarray, np.ndarray | None]:
    """K · [v, v·x, v·x², v·y, v·x·y] over one block of rows (x centred), K_tj = (1 − (|x_j − t|/h_t)³)₊³, and the
    count of rows of local weight > 1e-12 per point (None with unit weights: counted from the radii instead)."""
    kern = np.subtract.outer(tc, xc)
    np.abs(kern, out=kern)
    kern *= inv_h[:, None]
    cube = kern * kern
    cube *= kern
    np.subtract(1.0, cube, out=cube)
    np.maximum(cube, 0.0, out=cube)
    np.multiply(cube, cube, out=kern)
    kern *= cube  # (1 − u³)³ on u < 1, 0 beyond
    count = None if unit else np.count_nonzero((kern * pr) > 1e-12, axis=1)
    pv = pr * y
    cols = np.empty((xc.size, 5))
    cols[:, 0] = pr
    np.multiply(pr, xc, out=cols[:, 1])
    np.multiply(cols[:, 1], xc, out=cols[:, 2])
    cols[:, 3] = pv
    np.multiply(pv, xc, out=cols[:, 4])
    return kern @ cols, count


def _local_quadratic(vn: np.ndarray, u: np.ndarray, yj: np.ndarray) -> np.ndarray:
    """Intercept of the weighted least-squares quadratic in u (batched normal equations, pseudo-inverse)."""
    m = np.stack([(vn * u ** p).sum(axis=1) for p in range(5)], axis=1)
    b = np.stack([(vn * u ** p * yj).sum(axis=1) for p in range(3)], axis=1)
    gram = np.stack([m[:, 0:3], m[:, 1:4], m[:, 2:5]], axis=1)
    coef = np.einsum("pij,pj->pi", np.linalg.pinv(gram), b)
    return coef[:, 0]


class LoessDesign:
    """The local-linear loess of many response columns (and row-weight columns) at once, on fixed abscissae.

    With f, the fit points (``delta``) and the radii h(t) of the data's weights held fixed, every local sum is a
    product with the (fit points × rows) kernel matrix K_tj = (1 − (|f_j − t|/h(t))³)₊³: for weights W and
    responses Y (rows × columns), S_m = K (W f^m) and T_m = K (W f^m Y), and the local line at t is
    ŷ(t) = T0/S0 + (t − f̄)(T1/S0 − f̄ T0/S0)/max(S2/S0 − f̄², 1e-12), f̄ = S1/S0 — the fit of :func:`loess_smooth`
    (degree 1, no robustness iterations), interpolated linearly between fit points as there.  With the data's own
    weights this equals :func:`loess_smooth` column by column; with other weights (bootstrap replicates) it is the
    loess with the data's bandwidths h(t) held fixed.  For null draws and bootstrap replicates of the smoothed
    calibration curve: one matrix product instead of one smoother per column.

    Parameters
    ----------
    f : array-like of float, shape (n,)
        The abscissae.
    weights : array-like of float, shape (n,), optional
        The data's weights (they set the radii).
    span : float
        As :func:`loess_smooth`.
    delta : float, optional
        As :func:`loess_smooth`.

    References
    ----------
    Cleveland, W. S. (1979). Robust locally weighted regression and smoothing scatterplots. Journal of the
    American Statistical Association 74(368), 829–836.
    """

    def __init__(self, f, weights=None, *, span: float = DEFAULT_SPAN, delta: float | None = None):
        f = np.asarray(f, dtype=float).ravel()
        w = np.ones_like(f) if weights is None else np.asarray(weights, dtype=float).ravel()
        order = stable_order(f)
        xs, ws = f[order], w[order]
        if delta is None:
            delta = DEFAULT_DELTA_FRACTION * float(xs[-1] - xs[0])
        total = float(ws.sum())
        k = min(max(float(int(span * total + 1e-10)), min(2.0, total)), total)
        sm = _Smoother(xs, np.zeros_like(xs), ws, k, 1)
        weighted = np.flatnonzero(ws > 0)
        idx = weighted[_fit_points(xs[weighted], float(delta))]
        t = xs[idx]
        h = sm.radius(t)
        with np.errstate(divide="ignore", invalid="ignore"):
            d = np.abs(xs[None, :] - t[:, None]) / h[:, None]
        tmp = 1.0 - d * d * d
        self.kernel = np.where((d < 1.0) & (h[:, None] > 0), tmp * tmp * tmp, 0.0)
        self.t, self.x, self.order = t, xs, order
        j = np.clip(np.searchsorted(t, xs, side="right") - 1, 0, max(t.size - 2, 0))
        if t.size > 1:
            lam = np.clip((xs - t[j]) / (t[j + 1] - t[j]), 0.0, 1.0)
        else:
            lam = np.zeros_like(xs)
        self._j, self._lam = j, lam

    def smooth(self, y, weights) -> np.ndarray:
        """Fitted values at the rows (input order) for responses and weights given as (rows × columns) arrays.

        Parameters
        ----------
        y : ndarray of shape (n, R)
            Responses.
        weights : ndarray of shape (n, R) or (n,)
            Row weights per column.

        Returns
        -------
        ndarray of shape (n, R)
            ŷ at every row, per column.
        """
        y = np.asarray(y, dtype=float)[self.order]
        w = np.asarray(weights, dtype=float)
        w = (w[:, None] if w.ndim == 1 else w)[self.order]
        x = self.x[:, None]
        kern = self.kernel
        s0, s1, s2 = kern @ w, kern @ (w * x), kern @ (w * x * x)
        wy = w * y
        t0, t1 = kern @ wy, kern @ (wy * x)
        with np.errstate(divide="ignore", invalid="ignore"):
            xbar = s1 / s0
            sxx = np.maximum(s2 / s0 - xbar * xbar, 1e-12)
            fit = t0 / s0 + (self.t[:, None] - xbar) * (t1 / s0 - xbar * t0 / s0) / sxx
        j, lam = self._j, self._lam[:, None]
        rows = fit[j] * (1.0 - lam) + fit[np.minimum(j + 1, fit.shape[0] - 1)] * lam
        out = np.empty_like(rows)
        out[self.order] = rows
        return out
