"""The smoothed calibration curve of clinical prediction models, with its bootstrap band (classification side).

A probability forecast f ∈ [0, 1] of a binary event y ∈ {0, 1} — the positive class of a binary file (f = P(y = 1)),
one class against the rest, or the top label (f = max_k p_k, y = 1[arg-max = label]).  The *calibration curve*
is c(f) = P(y = 1 | f); a calibrated model has c(f) = f, the diagonal.  The clinical literature draws it as a
**loess** smooth of the outcomes on the predictions (Austin & Steyerberg 2014; Van Calster et al. 2016, "moderate
calibration"; Steyerberg 2019, ch. 15), the curve whose distance |ĉ(f) − f| gives ICI, E50 and E90 (Austin &
Steyerberg 2019).

Curve (Cleveland 1979; degree 1, no robustness iterations; :func:`calib_core.metrics.classification_loess.loess_smooth`
evaluated at the grid): at each grid point x the rows nearest x holding weight k = ⌊span·W⌋ (at least 2) of the
total weight W = Σ w_i form the neighbourhood, h(x) is the distance to its farthest row, and

    ĉ(x) = â,  (â, b̂) = argmin Σ_i w_i K((f_i − x)/h(x)) (y_i − a − b (f_i − x))²,  K(u) = (1 − |u|³)³ on |u| < 1,

i.e. with S_m = Σ w K (f − x)^m and T_m = Σ w K (f − x)^m y:  ĉ(x) = (S₂T₀ − S₁T₁) / (S₀S₂ − S₁²) (the local mean
T₀/S₀ where every neighbour sits at one prediction).  The curve is reported as fitted (a local line can leave
[0, 1] near the ends; nothing is clipped).  With integer weights the curve equals that of the duplicated rows; the
band resamples a weighted row as one unit (as survey weights are resampled, and exactly as the copies resampled as
one cluster each), so for weights that count independent copies it is conservative.

Band (pointwise, two-sided ``level``): the project's weighted bootstrap over rows
(:func:`calib_core.base.significance_intervals.block_design`: rows in at most ``n_blocks`` random blocks, each
replicate a multinomial re-weighting of the blocks — the ordinary row bootstrap when N ≤ ``n_blocks``; whole
clusters with a ``clustering``, :func:`calib_core.base.clustering.cluster_design`).  Each replicate refits the
local lines at the grid with the bandwidths h(x) of the data (the bandwidth is conditioned on, as the smooth ECE's
σ* is), so all replicates come from the per-block sums S_m, T_m by one matrix product; the band is the percentile
interval of the replicates (Efron & Tibshirani 1993).  It is the uncertainty of the *smoothed* curve: where the
true curve bends within a span the smooth is biased and the band is about the smooth, not the curve.  Measured
coverage of a straight true curve: see ``tests/diagrams/test_classification_clinical.py``.

Cost: O(N log N) for the sort and O(N · n_grid) for the per-block kernel sums (the kernel over the union of the
spans of a chunk of grid points, three sparse-dense products with the rows' block indicator; skipped without a
band), then O(B · G · n_grid) for the replicates — independent of N after the sums.  Measured (one thread, 101 grid
points, 200 replicates): 0.26 s CPU at N = 1e5, about 4.3 s at N = 1e6 (``bench/clinical_speed.py``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import sparse

from ..base.clustering import Clustering, cluster_design
from ..base.significance_intervals import block_design, nan_quantiles
from ..metrics.classification import ClassificationRows
from ..metrics.classification_bins import event_rows
from ..metrics.classification_loess import loess_smooth, stable_order
from ..metrics.classification_loess_binned import BINNED_FROM, binned_loess_vertices
from ..metrics.classification_smooth import rows_target

__all__ = [
    "SMOOTHED_COLUMNS",
    "SMOOTHED_NAME",
    "smoothed_calibration_diagrams",
    "smoothed_calibration_table",
    "smoothed_calibration_of",
]

#: Columns of :func:`smoothed_calibration_table` (the contract with :mod:`calib_core.plots.clinical`).
SMOOTHED_COLUMNS = ["predicted", "observed", "lower", "upper", "n_rows", "share"]
#: The key of the table in ``Report.diagrams[(model, group)]``: top label; binary sets get
#: ``"smoothed_calibration_positive"`` (P(y = 1), the clinical convention) instead.
SMOOTHED_NAME = "smoothed_calibration"
#: Bootstrap replicates of the diagnosis's band (at most; the diagnosis's ``n_resamples`` if fewer).
DIAGNOSIS_RESAMPLES = 200
#: Random row blocks of the bootstrap (the classification inference's default).
N_BLOCKS = 500
#: Most kernel entries held at once (grid points × rows in their spans), to bound memory.
_CHUNK = 2_000_000

_SEMANTICS = {
    "positive": "positive class: x = predicted P(y = 1), y = loess-smoothed frequency of y = 1",
    "top_label": "top label: x = confidence max_k p_k, y = loess-smoothed accuracy",
    "class": "one class against the rest: x = predicted P(y = k), y = loess-smoothed frequency of y = k",
}


def _events(labels, probs, positive) -> tuple[np.ndarray, np.ndarray, str]:
    p = np.asarray(probs, dtype=float)
    if p.ndim == 1:
        p = np.column_stack([1.0 - p, p])
    if positive is None:
        target = "positive" if p.shape[1] == 2 else "top_label"
        f, y = event_rows(labels, p, target)
        return f, y, target
    k = int(positive)
    if not 0 <= k < p.shape[1]:
        raise ValueError(f"positive must be a class index 0..{p.shape[1] - 1}, not {positive!r}")
    f, y = event_rows((np.asarray(labels) == k).astype(int), np.column_stack([1.0 - p[:, k], p[:, k]]),
                      "positive")
    return f, y, "positive" if p.shape[1] == 2 and k == 1 else "class"


def _bandwidths(f: np.ndarray, cw: np.ndarray, grid: np.ndarray, q: float) -> np.ndarray:
    """h(x): the smallest distance d with weight(|f − x| ≤ d) ≥ q, for every grid point (f sorted, cw = cumulative
    weights with a leading 0); found by bisection over the sorted candidate distances, vectorised over the grid."""
    lo = np.zeros(grid.size)
    hi = np.full(grid.size, max(grid.max() - f[0], f[-1] - grid.min()) * (1 + 1e-9) + 1e-300)

    def weight(d):
        return cw[np.searchsorted(f, grid + d, side="right")] - cw[np.searchsorted(f, grid - d, side="left")]

    for _ in range(64):  # doubles: 64 halvings reach adjacent floats
        mid = 0.5 * (lo + hi)
        ok = weight(mid) >= q
        hi = np.where(ok, mid, hi)
        lo = np.where(ok, lo, mid)
    # snap to the distance of an actual row (the farthest neighbour), so ties and rounding are exact
    slack = 1e-12 * np.maximum(np.abs(grid), 1.0)
    left = np.searchsorted(f, grid - hi - slack, side="left")
    right = np.searchsorted(f, grid + hi + slack, side="right") - 1
    return np.maximum(grid - f[np.clip(left, 0, f.size - 1)], f[np.clip(right, 0, f.size - 1)] - grid).clip(0.0)


def _kernel_sums(f, y, w, block, n_blocks, grid, h) -> tuple[np.ndarray, np.ndarray]:
    """Per-block sums (G, 5, n_grid) of S₀, S₁, S₂, T₀, T₁ and the weight within the span of every grid point.

    For a chunk of grid points, the tricube kernel K (rows × points, over the union of their spans), K·d and K·d²
    (d = f − x) are multiplied by the sparse (2G × rows) matrix holding w and w·y at each row's block: three
    sparse-dense products give every block's sums."""
    n_grid, n = grid.size, f.size
    cols = np.concatenate([np.arange(n), np.arange(n)])
    blocks = sparse.csc_matrix((np.concatenate([w, w * y]), (np.concatenate([block, block + n_blocks]), cols)),
                               shape=(2 * n_blocks, n))
    sums = np.zeros((n_blocks, 5, n_grid))
    left = np.searchsorted(f, grid - h, side="left")
    right = np.searchsorted(f, grid + h, side="right")
    order = np.argsort(grid, kind="stable")
    width = max(int((right - left).max()), 1)
    step = max(1, _CHUNK // width)
    with np.errstate(divide="ignore"):
        inv_h = 1.0 / h  # h = 0: ∞, the rows at the grid point itself (0 · ∞ set to 0 below)
    for start in range(0, n_grid, step):  # chunks of grid points, at most about _CHUNK kernel entries each
        g = order[start:start + step]
        lo, hi = int(left[g].min()), int(right[g].max())
        if hi <= lo:
            continue
        d = np.subtract.outer(f[lo:hi], grid[g])
        u = np.abs(d)
        with np.errstate(invalid="ignore", over="ignore"):
            u *= inv_h[g]
            if not np.all(h[g] > 0):
                np.nan_to_num(u, copy=False, nan=0.0, posinf=np.inf)
            kern = u * u
            kern *= u
            np.subtract(1.0, kern, out=kern)
        np.maximum(kern, 0.0, out=kern)
        cube = kern * kern
        cube *= kern  # (1 − u³)³ on u < 1, 0 beyond (rows outside a point's span have u ≥ 1 up to rounding)
        kd = cube * d
        part = blocks[:, lo:hi]
        s_k, s_kd = np.asarray(part @ cube), np.asarray(part @ kd)
        kd *= d
        s_kd2 = np.asarray(part[:n_blocks] @ kd)
        sums[:, 0, g], sums[:, 1, g], sums[:, 2, g] = s_k[:n_blocks], s_kd[:n_blocks], s_kd2
        sums[:, 3, g], sums[:, 4, g] = s_k[n_blocks:], s_kd[n_blocks:]
    return sums, _span_weight(f, w, grid, h, left, right)


def _span_weight(f, w, grid, h, left=None, right=None, cw=None) -> np.ndarray:
    """Weight of the rows within the span of every grid point (|f − x| ≤ h(x), the rows of [left, right) whose
    |f − x|/h does not exceed 1 by rounding), from cumulative weights (``cw``, with a leading 0, if given: then
    ``w`` is not read)."""
    n, n_grid = f.size, grid.size
    left = np.searchsorted(f, grid - h, side="left") if left is None else left
    right = np.searchsorted(f, grid + h, side="right") if right is None else right
    # weight within the span (u ≤ 1): the rows of [left, right) less those whose |f − x|/h exceeds 1 by rounding —
    # only the rows tied with the span's first or last row can
    cw = np.concatenate([[0.0], np.cumsum(w)]) if cw is None else cw
    nonempty = right > left
    first, last = f[np.minimum(left, n - 1)], f[np.maximum(right - 1, 0)]
    inside = np.where(nonempty, cw[right] - cw[left], 0.0)
    for v, again in ((first, np.zeros(n_grid, dtype=bool)), (last, first == last)):
        with np.errstate(divide="ignore", invalid="ignore"):
            u_end = np.abs(v - grid) / h
        beyond = nonempty & ~again & (u_end > 1.0)  # (0/0 for h = 0 is NaN: not beyond)
        tied = cw[np.searchsorted(f, v, side="right")] - cw[np.searchsorted(f, v, side="left")]
        inside = inside - np.where(beyond, tied, 0.0)
    return inside


def _local_line(s: np.ndarray) -> np.ndarray:
    """ĉ = (S₂T₀ − S₁T₁) / (S₀S₂ − S₁²) from sums (..., 5, n_grid); the local mean T₀/S₀ where the determinant
    vanishes (every neighbour at one prediction); NaN where S₀ = 0 (no weight in the span)."""
    s0, s1, s2, t0, t1 = (s[..., m, :] for m in range(5))
    det = s0 * s2 - s1 * s1
    with np.errstate(divide="ignore", invalid="ignore"):
        line = (s2 * t0 - s1 * t1) / det
        mean = t0 / s0
    flat = ~(det > 1e-12 * np.maximum(s0 * s2, np.finfo(float).tiny))
    out = np.where(flat, mean, line)
    return np.where(s0 > 0, out, np.nan)


def smoothed_calibration_of(
    f: np.ndarray,
    y: np.ndarray,
    weights: np.ndarray | None = None,
    *,
    span: float = 0.75,
    n_grid: int = 101,
    n_resamples: int = 200,
    level: float = 0.95,
    seed: int | None = 0,
    clustering: Clustering | None = None,
    n_blocks: int = N_BLOCKS,
) -> pd.DataFrame:
    """The loess calibration curve of forecasts ``f`` of binary outcomes ``y`` with its bootstrap band (the module
    docstring has the formulas): the engine of :func:`smoothed_calibration_table`.

    Parameters
    ----------
    f : ndarray of shape (n,)
        Forecast probabilities of the event.
    y : ndarray of shape (n,)
        The event, 0 or 1.
    weights : ndarray of shape (n,), optional
        Non-negative row weights (frequency weights: an integer weight is that many copies of the row).
    span : float, default 0.75
        Share of the total weight in every neighbourhood (Cleveland's f; R's ``loess`` default).
    n_grid : int, default 101
        Grid points, equally spaced from the smallest to the largest forecast.
    n_resamples : int, default 200
        Bootstrap replicates B (0: no band, ``lower``/``upper`` NaN).
    level : float, default 0.95
        Two-sided level of the pointwise band.
    seed : int or None, default 0
        Seeds the bootstrap (None is 0).
    clustering : Clustering, optional
        Rows resampled together (one code per row): whole clusters (or moving blocks of them) per replicate.
    n_blocks : int, default 500
        Random row blocks of the bootstrap without a clustering.

    Returns
    -------
    DataFrame
        :data:`SMOOTHED_COLUMNS`: ``predicted`` (grid), ``observed`` (the loess curve), ``lower``, ``upper``
        (band), ``n_rows`` (weight of the rows within the span, K > 0), ``share`` (share of the weight whose
        forecast is nearest this grid point: the histogram of the predictions).  ``attrs``: ``span``,
        ``level``, ``n_resamples``, ``n``, ``band`` (how it was drawn).

    References
    ----------
    .. [1] Cleveland, W. S. (1979). Robust locally weighted regression and smoothing scatterplots. *Journal of the
       American Statistical Association* 74(368), 829–836.
    .. [2] Austin, P. C. & Steyerberg, E. W. (2019). The Integrated Calibration Index (ICI) and related metrics for
       quantifying the calibration of logistic regression models. *Statistics in Medicine* 38(21), 4051–4065.
    .. [3] Efron, B. & Tibshirani, R. J. (1993). *An Introduction to the Bootstrap*. Chapman & Hall.
    """
    f = np.asarray(f, dtype=float).ravel()
    y = np.asarray(y, dtype=float).ravel()
    if weights is None and f.size == y.size:  # unit weights: checked without an array of ones
        finite = bool(np.isfinite(f).all() and np.isfinite(y).all())
        if finite and 0 < span <= 1 and f.size >= BINNED_FROM and int(n_resamples) <= 0:  # no band: binned loess
            table = _binned_curve(f, y, span, n_grid, level)
            if table is not None:
                return table
    w = np.ones(f.size) if weights is None else np.asarray(weights, dtype=float).ravel()
    if not (f.size == y.size == w.size):
        raise ValueError(f"f, y and weights need one value per row; got {f.size}, {y.size} and {w.size}")
    bad = np.flatnonzero(~(np.isfinite(f) & np.isfinite(y) & np.isfinite(w)) | (w < 0))
    if bad.size:
        raise ValueError(f"smoothed calibration: non-finite forecasts, outcomes or negative weights at rows "
                         f"{bad[:5].tolist()}{' …' if bad.size > 5 else ''}")
    if not 0 < span <= 1:
        raise ValueError(f"span must be in (0, 1], not {span!r}")
    keep = w > 0
    rows = np.flatnonzero(keep)
    if rows.size == 0:
        raise ValueError("smoothed calibration needs at least one row with a positive weight")
    order = rows[stable_order(f[rows])]
    fs, ys, ws = f[order], y[order], w[order]
    cw = np.concatenate([[0.0], np.cumsum(ws)])
    grid = np.linspace(fs[0], fs[-1], max(int(n_grid), 1)) if fs[-1] > fs[0] else fs[:1].copy()
    total = float(cw[-1])
    k = min(max(float(int(span * total + 1e-10)), min(2.0, total)), total)  # loess_smooth's ⌊span·W⌋, at least 2
    h = _bandwidths(fs, cw, grid, k - 1e-9 * max(total, 1.0))
    b = max(int(n_resamples), 0)
    if clustering is not None:
        design = cluster_design(clustering, b, (0 if seed is None else int(seed), 0xC11C))
        block = np.asarray(design.ids)[order]
    else:
        design = block_design(f.size, n_blocks, b, (0 if seed is None else int(seed), 0xC11C))
        block = np.asarray(design.ids)[order]
    if b > 0:
        sums, inside = _kernel_sums(fs, ys, ws, block, design.n_blocks, grid, h)
    else:  # no band: no per-block kernel sums
        inside = _span_weight(fs, ws, grid, h)
    observed = loess_smooth(fs, ys, ws, span=span, degree=1, iterations=0, at=grid)  # = _local_line of the sums
    lower = upper = np.full(grid.size, np.nan)
    if b > 0:
        reps = _local_line((design.weights @ sums.reshape(design.n_blocks, -1)).reshape(b, 5, grid.size))
        alpha = (1.0 - level) / 2.0
        lower, upper = nan_quantiles(reps, [alpha, 1.0 - alpha], axis=0)
    cells = np.clip(np.searchsorted((grid[1:] + grid[:-1]) / 2, fs, side="right"), 0, grid.size - 1)
    share = np.bincount(cells, weights=ws, minlength=grid.size) / cw[-1]
    table = pd.DataFrame({"predicted": grid, "observed": observed, "lower": lower, "upper": upper,
                          "n_rows": inside, "share": share})
    table.attrs.update({
        "span": float(span), "level": float(level), "n_resamples": b, "n": int(rows.size),
        "band": ("none" if b == 0 else
                 f"{level:.0%} pointwise percentile band, {b} bootstrap replicates of "
                 + (f"whole {clustering.column} clusters" if clustering is not None else "the rows")
                 + ", bandwidths of the data"),
    })
    return table


def _binned_curve(f: np.ndarray, y: np.ndarray, span: float, n_grid: int, level: float) -> pd.DataFrame | None:
    """:func:`smoothed_calibration_of` without a band at large N (unit weights): the exact radii, span weights and
    shares from the sorted values, the curve from the loess on fine bins of f
    (:func:`~calib_core.metrics.classification_loess_binned.binned_loess_vertices`, within ~1e-5 of the exact fit);
    None when the bins do not apply (the exact path runs)."""
    fs = np.sort(f)
    if not fs[-1] > fs[0]:
        return None
    cw = np.arange(fs.size + 1, dtype=float)  # the cumulative unit weights (exact integers)
    grid = np.linspace(fs[0], fs[-1], max(int(n_grid), 1))
    total = float(fs.size)
    k = min(max(float(int(span * total + 1e-10)), min(2.0, total)), total)
    h = _bandwidths(fs, cw, grid, k - 1e-9 * max(total, 1.0))
    fit = binned_loess_vertices(f, y, span=span, at=grid, radius=h)
    if fit is None:
        return None
    inside = _span_weight(fs, None, grid, h, cw=cw)
    pos = np.searchsorted(fs, (grid[1:] + grid[:-1]) / 2, side="left")  # rows below each cell's upper midpoint
    share = np.diff(np.concatenate([[0], pos, [fs.size]])).astype(float) / total
    table = pd.DataFrame({"predicted": grid, "observed": fit[1], "lower": np.full(grid.size, np.nan),
                          "upper": np.full(grid.size, np.nan), "n_rows": inside, "share": share})
    table.attrs.update({"span": float(span), "level": float(level), "n_resamples": 0, "n": int(fs.size),
                        "band": "none"})
    return table


def smoothed_calibration_table(
    labels: np.ndarray,
    probs: np.ndarray,
    weights: np.ndarray | None = None,
    *,
    span: float = 0.75,
    n_grid: int = 101,
    n_resamples: int = 200,
    level: float = 0.95,
    seed: int | None = 0,
    positive: int | None = None,
    clustering: Clustering | None = None,
) -> pd.DataFrame:
    """Loess-smoothed calibration curve with a pointwise bootstrap band: the diagram table of
    :func:`calib_core.plots.clinical.smoothed_calibration_figure`.

    ĉ(x) = local-linear tricube fit of y on f at x over the rows nearest x holding ``span`` of the weight
    (Cleveland 1979); band = pointwise percentile interval of B bootstrap refits (module docstring).

    Parameters
    ----------
    labels : array_like of shape (n,)
        Labels 0..K−1 (0/1 for a binary set).
    probs : array_like of shape (n,) or (n, k)
        Probabilities (1-D: P(y = 1) of a binary set).
    weights : array_like of shape (n,), optional
        Non-negative row weights (an integer weight counts as that many copies of the row).
    span : float, default 0.75
        Share of the weight in every neighbourhood.
    n_grid : int, default 101
        Grid points between the smallest and largest forecast.
    n_resamples : int, default 200
        Bootstrap replicates (0: no band).
    level : float, default 0.95
        Two-sided level of the band.
    seed : int or None, default 0
        Seeds the bootstrap.
    positive : int, optional
        The event: class ``positive`` against the rest.  Default: class 1 of a binary set (P(y = 1)), the top
        label (confidence against "prediction correct") of K > 2 classes.
    clustering : Clustering, optional
        Rows resampled together (whole clusters per replicate).

    Returns
    -------
    DataFrame
        Columns ``predicted, observed, lower, upper, n_rows, share`` (:func:`smoothed_calibration_of`);
        ``attrs["semantics"]`` says what the axes are, ``attrs["target"]`` the event.

    References
    ----------
    .. [1] Cleveland, W. S. (1979). Robust locally weighted regression and smoothing scatterplots. *Journal of the
       American Statistical Association* 74(368), 829–836.
    .. [2] Austin, P. C. & Steyerberg, E. W. (2019). The Integrated Calibration Index (ICI) and related metrics for
       quantifying the calibration of logistic regression models. *Statistics in Medicine* 38(21), 4051–4065.
    .. [3] Van Calster, B., Nieboer, D., Vergouwe, Y., De Cock, B., Pencina, M. J. & Steyerberg, E. W. (2016). A
       calibration hierarchy for risk models was defined: from utopia to empirical data. *Journal of Clinical
       Epidemiology* 74, 167–176.
    .. [4] Steyerberg, E. W. (2019). *Clinical Prediction Models: A Practical Approach to Development, Validation,
       and Updating* (2nd ed.). Springer.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(0.05, 0.95, 2000)
    >>> y = (rng.random(2000) < p).astype(int)          # calibrated: drawn from p itself
    >>> t = smoothed_calibration_table(y, p, n_grid=5, n_resamples=100)
    >>> list(t.columns)
    ['predicted', 'observed', 'lower', 'upper', 'n_rows', 'share']
    >>> bool(np.all(np.abs(t["observed"] - t["predicted"]) < 0.05))
    True
    """
    f, y, target = _events(labels, probs, positive)
    table = smoothed_calibration_of(f, y, weights, span=span, n_grid=n_grid, n_resamples=n_resamples, level=level,
                                    seed=seed, clustering=clustering)
    table.attrs["target"] = target
    table.attrs["semantics"] = _SEMANTICS[target]
    return table


def smoothed_calibration_diagrams(
    rows: ClassificationRows,
    *,
    n_resamples: int = DIAGNOSIS_RESAMPLES,
    level: float = 0.95,
    seed: int | None = 0,
    clustering: Clustering | None = None,
) -> dict[str, pd.DataFrame]:
    """The smoothed calibration table of a diagnosis's rows: ``{"smoothed_calibration_positive": …}`` for a binary
    set with full probabilities (P(y = 1) against the frequency of y = 1), else ``{"smoothed_calibration": …}``
    (top label: the confidence against "prediction correct").  One table per subset, so a binary set pays for one
    curve, not two.

    Parameters
    ----------
    rows : ClassificationRows
        The subset's rows.
    n_resamples : int, default 200
        Bootstrap replicates (capped at :data:`DIAGNOSIS_RESAMPLES`; 0: no band).
    level : float, default 0.95
        Level of the band.
    seed : int or None, default 0
        Seeds the bootstrap.
    clustering : Clustering, optional
        The rows' clusters (whole clusters resampled).

    Returns
    -------
    dict of str to DataFrame
        One :func:`smoothed_calibration_of` table (empty dict without rows).

    References
    ----------
    .. [1] Cleveland, W. S. (1979). Robust locally weighted regression and smoothing scatterplots. *Journal of the
       American Statistical Association* 74(368), 829–836.
    .. [2] Austin, P. C. & Steyerberg, E. W. (2019). The Integrated Calibration Index (ICI) and related metrics for
       quantifying the calibration of logistic regression models. *Statistics in Medicine* 38(21), 4051–4065.
    """
    if rows.n == 0:
        return {}
    target = "positive" if rows.is_binary and not rows.top_label_only else "top_label"
    f, y = rows_target(rows, target)
    table = smoothed_calibration_of(f, y, span=0.75, n_resamples=min(int(n_resamples), DIAGNOSIS_RESAMPLES),
                                    level=level, seed=seed, clustering=clustering)
    table.attrs.update(target=target, semantics=_SEMANTICS[target])
    return {SMOOTHED_NAME + ("_positive" if target == "positive" else ""): table}
