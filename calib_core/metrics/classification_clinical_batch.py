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

__all__ = ["recalibration_columns", "BATCH_ITER"]

#: Newton steps of the batched fit before a column is handed to the scalar fit.
BATCH_ITER = 50


def recalibration_columns(probs, outcomes, *, eps: float = DEFAULT_EPS
                          ) -> tuple[list[LogisticRecalibration], list[LogisticRecalibration]]:
    """The slope-fixed (CITL) and two-parameter logistic recalibration fits of every column (module docstring).

    Per column k: maximise Σ_i [y_ik η_ik − log(1 + e^{η_ik})], η_ik = a_k + b_k x_ik (b_k = 1 for CITL), by batched
    Newton steps Δ_k = I_k⁻¹ U_k (2 × 2 closed form).

    Parameters
    ----------
    probs : array-like of float, shape (n, K)
        Probabilities of each column's event.
    outcomes : array-like of float, shape (n, K)
        Outcomes 0/1 of each column's event.
    eps : float
        Clipping of p before the logit (default 1e-7).

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
    y = np.asarray(outcomes, dtype=float)
    if p.ndim == 1:
        p, y = p[:, None], y[:, None]
    q = np.clip(p, eps, 1.0 - eps)
    x = np.log(q) - np.log1p(-q)
    n_clipped = np.count_nonzero((p < eps) | (p > 1.0 - eps), axis=0)
    events, non_events = y.sum(axis=0), (1.0 - y).sum(axis=0)
    two_classes = (events > 0) & (non_events > 0)
    if x.shape[0]:
        lo1 = np.where(y > 0, x, np.inf).min(axis=0)
        hi1 = np.where(y > 0, x, -np.inf).max(axis=0)
        lo0 = np.where(y < 1, x, np.inf).min(axis=0)
        hi0 = np.where(y < 1, x, -np.inf).max(axis=0)
        regular = two_classes & (np.ptp(x, axis=0) > 0) & ~((hi0 <= lo1) | (hi1 <= lo0))
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


def _citl(x: np.ndarray, y: np.ndarray, active: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Batched Newton for a_k of logit P = a_k + x (offset); returns a, se(a) and which columns converged."""
    k = x.shape[1]
    a = np.zeros(k)
    done = np.zeros(k, dtype=bool)
    cols = np.flatnonzero(active)
    for _ in range(BATCH_ITER):
        if cols.size == 0:
            break
        mu = special.expit(a[cols] + x[:, cols])
        info = (mu * (1.0 - mu)).sum(axis=0)
        with np.errstate(divide="ignore", invalid="ignore"):
            step = np.where(info > 0, (y[:, cols] - mu).sum(axis=0) / info, np.nan)
        a[cols] += step
        settled = np.abs(step) < 1e-10 * (1.0 + np.abs(a[cols]))
        done[cols[settled]] = True
        cols = cols[~settled & np.isfinite(step)]
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
        xc = x[:, cols]
        mu = special.expit(a[cols] + b[cols] * xc)
        r, v = y[:, cols] - mu, mu * (1.0 - mu)
        vx = v * xc
        g0, g1 = r.sum(axis=0), (r * xc).sum(axis=0)
        h00, h01, h11 = v.sum(axis=0), vx.sum(axis=0), (vx * xc).sum(axis=0)
        det = h00 * h11 - h01 * h01
        with np.errstate(divide="ignore", invalid="ignore"):
            da = np.where(det > 0, (h11 * g0 - h01 * g1) / det, np.nan)
            db = np.where(det > 0, (h00 * g1 - h01 * g0) / det, np.nan)
        a[cols] += da
        b[cols] += db
        settled = np.maximum(np.abs(da), np.abs(db)) < 1e-10 * (1.0 + np.maximum(np.abs(a[cols]), np.abs(b[cols])))
        done[cols[settled]] = True
        cols = cols[~settled & np.isfinite(da) & np.isfinite(db)]
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
