"""Logistic recalibration of many binary events at once: the K one-vs-rest columns of a multi-class file (or one
column of a binary file), fitted by a batched Newton iteration.

Each column k is the fit of :func:`~calib_core.metrics.classification_clinical_fit.logistic_recalibration`,
logit P(y_k = 1) = a_k + b_k · x_k with x_k = logit(p̃_k) (p̃ clipped to [ε, 1 − ε]); unit weights.  Newton's step
per column from the calibrated start (a, b) = (0, 1) is the closed-form solve of its 2 × 2 information,

    Δ = I⁻¹ U,  U = (Σ r, Σ r x),  I = [[Σ v, Σ v x], [Σ v x, Σ v x²]],  r = y − μ, v = μ(1 − μ), μ = expit(a + b x),

with all sums column sums of (N × K) arrays; CITL (b fixed at 1) is the one-parameter step Δa = Σ r / Σ v.  The
log-likelihood is concave, so a column whose steps fall below 1e-10 · (1 + max|θ|) (the scalar fit's stopping rule)
is at the maximum; standard errors are √diag(I⁻¹) at the estimate.  Columns with one class, one distinct
prediction, (quasi-)complete separation (Firth's estimate) or a Newton sequence that has not settled in
:data:`BATCH_ITER` steps are fitted by the scalar function (its step halving and its reasons), so every column
equals the scalar fit up to rounding (tested to 1e-9).
"""

from __future__ import annotations

import numpy as np
from scipy import special

from .classification_clinical_fit import DEFAULT_EPS, LogisticRecalibration, logistic_recalibration
from .classification_clinical_moments import FUSED_FROM, ColumnSums, column_sums, moment_sums

__all__ = ["recalibration_columns", "BATCH_ITER"]

#: Newton steps of the batched fit before a column is handed to the scalar fit.
BATCH_ITER = 50
#: Above this many rows each Newton step sums over blocks of rows that stay in cache (the column sums then add up
#: in another order: equal to the one-pass sums to 1e-12).
BLOCK_FROM = 1 << 16
#: Cells (rows × active columns) of one block.
_BLOCK_CELLS = 1 << 15


def recalibration_columns(probs, outcomes, *, eps: float = DEFAULT_EPS, sums: ColumnSums | None = None,
                          labels=None) -> tuple[list[LogisticRecalibration], list[LogisticRecalibration]]:
    """The slope-fixed (CITL) and two-parameter logistic recalibration fits of every column (module docstring).

    Per column k: maximise Σ_i [y_ik η_ik − log(1 + e^{η_ik})], η_ik = a_k + b_k x_ik (b_k = 1 for CITL), by batched
    Newton steps Δ_k = I_k⁻¹ U_k (2 × 2 closed form).

    Parameters
    ----------
    probs : array-like of float, shape (n, K)
        Probabilities of each column's event.
    outcomes : array-like of float, shape (n, K), or None
        Outcomes 0/1 of each column's event (None with ``labels``).
    eps : float
        Clipping of p before the logit (default 1e-7).
    sums : ColumnSums, optional
        The binned moments of the columns (:func:`~calib_core.metrics.classification_clinical_moments.column_sums`,
        computed here from :data:`~calib_core.metrics.classification_clinical_moments.FUSED_FROM` rows): every
        Newton step then sums over bins of the logit instead of rows (equal to the row sums to 1e-12).
    labels : ndarray of int, shape (n,), optional
        With ``outcomes=None``: the outcome of column k is 1[label = k].

    Returns
    -------
    citl : list of LogisticRecalibration
        The slope-fixed fit of each column.
    cox : list of LogisticRecalibration
        The two-parameter fit of each column.

    References
    ----------
    Cox, D. R. (1958). Two further applications of a model for binary regression. Biometrika 45(3/4), 562–565.
    Firth, D. (1993). Bias reduction of maximum likelihood estimates. Biometrika 80(1), 27–38.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(0.05, 0.95, (3000, 2))
    >>> y = (rng.random((3000, 2)) < p).astype(float)
    >>> citl, cox = recalibration_columns(p, y)
    >>> one = logistic_recalibration(p[:, 1], y[:, 1])
    >>> bool(abs(cox[1].slope - one.slope) < 1e-9)
    True
    """
    p = np.asarray(probs, dtype=float)
    if outcomes is None:
        labels = np.asarray(labels)
        if sums is None and p.shape[0] >= FUSED_FROM:
            sums = column_sums(p, None, eps=eps, labels=labels)
        if sums is not None:
            return _from_moments(p, lambda j: (labels == j).astype(float), sums, eps)
        outcomes = (labels[:, None] == np.arange(p.shape[1])).astype(float)
    y = np.asarray(outcomes, dtype=float)
    if p.ndim == 1:
        p, y = p[:, None], y[:, None]
    if sums is None and p.shape[0] >= FUSED_FROM:
        sums = column_sums(p, y, eps=eps)
    if sums is not None:
        return _from_moments(p, lambda j: y[:, j], sums, eps)
    q = np.clip(p, eps, 1.0 - eps)
    x = np.log(q) - np.log1p(-q)
    n_clipped = np.count_nonzero((p < eps) | (p > 1.0 - eps), axis=0)
    events, non_events = y.sum(axis=0), (1.0 - y).sum(axis=0)
    two_classes = (events > 0) & (non_events > 0)
    if x.shape[0]:
        step = max(1024, _BLOCK_CELLS // max(x.shape[1], 1))
        ends = np.array([_ranges(x[i:i + step], y[i:i + step]) for i in range(0, x.shape[0], step)])  # row blocks
        lo1, lo0, lo = ends[:, 0].min(axis=0), ends[:, 2].min(axis=0), ends[:, 4].min(axis=0)
        hi1, hi0, hi = ends[:, 1].max(axis=0), ends[:, 3].max(axis=0), ends[:, 5].max(axis=0)
        regular = two_classes & (hi - lo > 0) & ~((hi0 <= lo1) | (hi1 <= lo0))
    else:
        regular = np.zeros(x.shape[1], dtype=bool)
    a1, se1, ok1 = _citl(x, y, two_classes)
    a2, b2, sa2, sb2, ok2 = _cox(x, y, regular)
    citl, cox = [], []
    for k in range(x.shape[1]):  # loop over columns (classes), never rows
        if ok1[k]:
            citl.append(LogisticRecalibration(float(a1[k]), 1.0, float(se1[k]), float("nan"), int(n_clipped[k]),
                                              False, True, True, "", 0))
        else:
            citl.append(logistic_recalibration(p[:, k], y[:, k], fix_slope=True, eps=eps))
        if ok2[k]:
            cox.append(LogisticRecalibration(float(a2[k]), float(b2[k]), float(sa2[k]), float(sb2[k]),
                                             int(n_clipped[k]), False, False, True, "", 0))
        else:
            cox.append(logistic_recalibration(p[:, k], y[:, k], eps=eps))
    return citl, cox


def _from_moments(p: np.ndarray, column_y, s: ColumnSums, eps: float
                  ) -> tuple[list[LogisticRecalibration], list[LogisticRecalibration]]:
    """The batched Newton fits of :func:`recalibration_columns` with every sum from the binned moments."""
    n, k = p.shape
    events, non_events = s.events, n - s.events
    two_classes = (events > 0) & (non_events > 0)
    lo1, hi1, lo0, hi0, lo, hi = s.x_ranges.T
    regular = two_classes & (hi - lo > 0) & ~((hi0 <= lo1) | (hi1 <= lo0))
    nan = float("nan")
    # CITL: b = 1, score Σ y − Σ μ, information Σ v
    a1 = np.zeros(k)
    done1 = np.zeros(k, dtype=bool)
    cols = np.flatnonzero(two_classes)
    for _ in range(BATCH_ITER):
        if cols.size == 0:
            break
        mu, _, v, _, _ = moment_sums(s, cols, a1[cols], np.ones(cols.size), mu_and_v_only=True)
        with np.errstate(divide="ignore", invalid="ignore"):
            step = np.where(v > 0, (events[cols] - mu) / v, np.nan)
        a1[cols] += step
        settled = np.abs(step) < 1e-10 * (1.0 + np.abs(a1[cols]))
        done1[cols[settled]] = True
        cols = cols[~settled & np.isfinite(step)]
    info1 = moment_sums(s, np.arange(k), a1, np.ones(k), mu_and_v_only=True)[2]
    with np.errstate(divide="ignore", invalid="ignore"):
        se1 = np.where(info1 > 0, 1.0 / np.sqrt(info1), np.nan)
    ok1 = done1 & np.isfinite(a1) & two_classes
    # two-parameter fit
    a2, b2 = np.zeros(k), np.ones(k)
    done2 = np.zeros(k, dtype=bool)
    cols = np.flatnonzero(regular)
    for _ in range(BATCH_ITER):
        if cols.size == 0:
            break
        mu, mux, h00, h01, h11 = moment_sums(s, cols, a2[cols], b2[cols])
        g0, g1 = events[cols] - mu, s.events_x[cols] - mux
        det = h00 * h11 - h01 * h01
        with np.errstate(divide="ignore", invalid="ignore"):
            da = np.where(det > 0, (h11 * g0 - h01 * g1) / det, np.nan)
            db = np.where(det > 0, (h00 * g1 - h01 * g0) / det, np.nan)
        a2[cols] += da
        b2[cols] += db
        settled = np.maximum(np.abs(da), np.abs(db)) < 1e-10 * (1.0 + np.maximum(np.abs(a2[cols]),
                                                                                np.abs(b2[cols])))
        done2[cols[settled]] = True
        cols = cols[~settled & np.isfinite(da) & np.isfinite(db)]
    _, _, h00, h01, h11 = moment_sums(s, np.arange(k), a2, b2)
    det = h00 * h11 - h01 * h01
    with np.errstate(divide="ignore", invalid="ignore"):
        var_a, var_b = h11 / det, h00 / det
        sa2 = np.where(var_a > 0, np.sqrt(np.abs(var_a)), np.nan)
        sb2 = np.where(var_b > 0, np.sqrt(np.abs(var_b)), np.nan)
    ok2 = done2 & np.isfinite(a2) & np.isfinite(b2) & (det > 0) & regular
    citl, cox = [], []
    for j in range(k):  # loop over columns (classes), never rows
        nc = int(s.n_clipped[j])
        citl.append(LogisticRecalibration(float(a1[j]), 1.0, float(se1[j]), nan, nc, False, True, True, "", 0)
                    if ok1[j] else logistic_recalibration(p[:, j], column_y(j), fix_slope=True, eps=eps))
        cox.append(LogisticRecalibration(float(a2[j]), float(b2[j]), float(sa2[j]), float(sb2[j]), nc, False, False,
                                         True, "", 0)
                   if ok2[j] else logistic_recalibration(p[:, j], column_y(j), eps=eps))
    return citl, cox


def _citl(x: np.ndarray, y: np.ndarray, active: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Batched Newton for a_k of logit P = a_k + x (offset); returns a, se(a) and which columns converged."""
    k = x.shape[1]
    a = np.zeros(k)
    done = np.zeros(k, dtype=bool)
    cols = np.flatnonzero(active)
    for _ in range(BATCH_ITER):
        if cols.size == 0:
            break
        if x.shape[0] > BLOCK_FROM:  # large N: the same sums over row blocks that stay in cache
            score, info = _blocked_sums(_citl_block, x, y, a, None, cols, 2)
        else:
            mu = special.expit(a[cols] + x[:, cols])
            info = (mu * (1.0 - mu)).sum(axis=0)
            score = (y[:, cols] - mu).sum(axis=0)
        with np.errstate(divide="ignore", invalid="ignore"):
            step = np.where(info > 0, score / info, np.nan)
        a[cols] += step
        settled = np.abs(step) < 1e-10 * (1.0 + np.abs(a[cols]))
        done[cols[settled]] = True
        cols = cols[~settled & np.isfinite(step)]
    if x.shape[0] > BLOCK_FROM:
        info = _blocked_sums(_citl_block, x, y, a, None, np.arange(k), 2)[1]
    else:
        mu = special.expit(a + x)
        info = (mu * (1.0 - mu)).sum(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        se = np.where(info > 0, 1.0 / np.sqrt(info), np.nan)
    return a, se, done & np.isfinite(a) & active


def _cox(x: np.ndarray, y: np.ndarray, active: np.ndarray):
    """Batched Newton for (a_k, b_k): 2 × 2 information solved in closed form per column."""
    k = x.shape[1]
    a, b = np.zeros(k), np.ones(k)
    done = np.zeros(k, dtype=bool)
    cols = np.flatnonzero(active)
    for _ in range(BATCH_ITER):
        if cols.size == 0:
            break
        if x.shape[0] > BLOCK_FROM:  # large N: the same sums over row blocks that stay in cache
            g0, g1, h00, h01, h11 = _blocked_sums(_cox_block, x, y, a, b, cols, 5)
        else:
            g0, g1, h00, h01, h11 = _cox_block(x[:, cols], y[:, cols], a[cols], b[cols])
        det = h00 * h11 - h01 * h01
        with np.errstate(divide="ignore", invalid="ignore"):
            da = np.where(det > 0, (h11 * g0 - h01 * g1) / det, np.nan)
            db = np.where(det > 0, (h00 * g1 - h01 * g0) / det, np.nan)
        a[cols] += da
        b[cols] += db
        settled = np.maximum(np.abs(da), np.abs(db)) < 1e-10 * (1.0 + np.maximum(np.abs(a[cols]), np.abs(b[cols])))
        done[cols[settled]] = True
        cols = cols[~settled & np.isfinite(da) & np.isfinite(db)]
    if x.shape[0] > BLOCK_FROM:
        h00, h01, h11 = _blocked_sums(_cox_block, x, y, a, b, np.arange(k), 5)[2:]
    else:
        mu = special.expit(a + b * x)
        v = mu * (1.0 - mu)
        h00, h01, h11 = v.sum(axis=0), (v * x).sum(axis=0), (v * x * x).sum(axis=0)
    det = h00 * h11 - h01 * h01
    with np.errstate(divide="ignore", invalid="ignore"):
        var_a, var_b = h11 / det, h00 / det
        se_a = np.where(var_a > 0, np.sqrt(np.abs(var_a)), np.nan)
        se_b = np.where(var_b > 0, np.sqrt(np.abs(var_b)), np.nan)
    ok = done & np.isfinite(a) & np.isfinite(b) & (det > 0) & active
    return a, b, se_a, se_b, ok


def _cox_block(xc: np.ndarray, yc: np.ndarray, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, ...]:
    """Column sums of one block for the two-parameter Newton step: Σ r, Σ r x, Σ v, Σ v x, Σ v x²."""
    mu = special.expit(a + b * xc)
    r, v = yc - mu, mu * (1.0 - mu)
    vx = v * xc
    return r.sum(axis=0), (r * xc).sum(axis=0), v.sum(axis=0), vx.sum(axis=0), (vx * xc).sum(axis=0)


def _citl_block(xc: np.ndarray, yc: np.ndarray, a: np.ndarray, b: None) -> tuple[np.ndarray, ...]:
    """Column sums of one block for the slope-fixed Newton step: Σ r, Σ v."""
    mu = special.expit(a + xc)
    return (yc - mu).sum(axis=0), (mu * (1.0 - mu)).sum(axis=0)


def _blocked_sums(block, x: np.ndarray, y: np.ndarray, a: np.ndarray, b: np.ndarray | None, cols: np.ndarray,
                  n_out: int) -> tuple[np.ndarray, ...]:
    """The column sums of ``block`` over all rows, accumulated over row blocks of about _BLOCK_CELLS cells."""
    step = max(1024, _BLOCK_CELLS // max(cols.size, 1))
    acc = np.zeros((n_out, cols.size))
    ac, bc = a[cols], (None if b is None else b[cols])
    for start in range(0, x.shape[0], step):  # blocks of rows, each vectorised over rows and columns
        rows = slice(start, start + step)
        acc += np.asarray(block(x[rows][:, cols], y[rows][:, cols], ac, bc))
    return tuple(acc)


def _ranges(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Per column of one block: min and max of x over events, over non-events, and over all rows."""
    return np.array([np.where(y > 0, x, np.inf).min(axis=0), np.where(y > 0, x, -np.inf).max(axis=0),
                     np.where(y < 1, x, np.inf).min(axis=0), np.where(y < 1, x, -np.inf).max(axis=0),
                     x.min(axis=0), x.max(axis=0)])
