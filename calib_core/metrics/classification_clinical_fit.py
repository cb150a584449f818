"""Logistic recalibration (Cox 1958): the fit behind calibration-in-the-large, the calibration slope and the Cox
intercept of a binary risk model.

Model: logit P(y = 1 | p) = a + b · x with x = logit(p̃), p̃ = p clipped to [ε, 1 − ε] (ε = 1e-7 by default, as
calzone; the rows clipped are counted in ``n_clipped``).  Weighted maximum likelihood (weights = frequency weights:
a weight of 2 is a duplicated row), maximised by Newton's method from the calibrated point (a, b) = (0, 1) with step
halving; standard errors from the inverse observed (= Fisher) information.

* ``fix_slope=True``: b = 1, x an offset — calibration-in-the-large a (Van Calster et al. 2016, "mean calibration":
  0 when the predictions are right on average, > 0 when they under-estimate the risk);
* ``fix_slope=False``: the two-parameter fit — calibration slope b (1 = calibrated, < 1 = predictions too extreme,
  the over-fitted model's signature; > 1 too moderate) and its intercept a, calzone's "Cox intercept" (not
  calibration-in-the-large: a is the intercept at b, so it is read only together with b).

Degenerate data (never an exception, never a silent infinity):

* one class only (every event weight on y = 1 or every on y = 0): the likelihood has no maximum; NaN, with the reason;
* all x equal (one distinct prediction): the slope is not identifiable; the slope fit is NaN, CITL still exists;
* (quasi-)complete separation — every event has a predicted risk at least as high as every non-event (or the
  reverse): the maximum-likelihood slope is infinite.  The estimate reported is then Firth's (1993)
  penalised-likelihood estimate (maximise log L + ½ log det I(θ)), which is finite, with ``separated=True`` and
  the reason; callers add it to the notes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import special

__all__ = ["LogisticRecalibration", "logistic_recalibration", "clipped_logit", "DEFAULT_EPS"]

#: Probabilities are clipped to [ε, 1 − ε] before the logit (calzone's ε).
DEFAULT_EPS = 1e-7
_MAX_ITER = 100


@dataclass(frozen=True)
class LogisticRecalibration:
    """The logistic recalibration fit logit P(y = 1) = a + b · logit(p) of one set of rows.

    Attributes
    ----------
    intercept : float
        a (calibration-in-the-large when ``slope`` is fixed at 1; the Cox intercept otherwise).
    slope : float
        b (1.0 when fixed).
    intercept_se, slope_se : float
        Standard errors from the inverse information (``slope_se`` NaN when the slope is fixed).
    n_clipped : int
        Rows whose probability was outside [ε, 1 − ε] (exactly 0 or 1, typically) and was clipped.
    separated : bool
        (Quasi-)complete separation: the maximum-likelihood estimate is infinite and Firth's estimate is reported.
    fixed_slope : bool
        The slope was fixed at 1.
    converged : bool
        Newton's method converged.
    reason : str
        Why the estimate is NaN or penalised ("" otherwise).
    n_iter : int
        Newton iterations.

    References
    ----------
    Cox, D. R. (1958). Two further applications of a model for binary regression. Biometrika 45(3/4), 562–565.
    Firth, D. (1993). Bias reduction of maximum likelihood estimates. Biometrika 80(1), 27–38.
    """

    intercept: float
    slope: float
    intercept_se: float
    slope_se: float
    n_clipped: int
    separated: bool
    fixed_slope: bool = False
    converged: bool = True
    reason: str = ""
    n_iter: int = 0


def clipped_logit(p, eps: float = DEFAULT_EPS) -> tuple[np.ndarray, int]:
    """logit(p̃) with p̃ = p clipped to [ε, 1 − ε], and the number of rows clipped.

    x = log p̃ − log(1 − p̃).

    Parameters
    ----------
    p : array-like of float
        Probabilities.
    eps : float
        ε (default 1e-7).

    Returns
    -------
    x : ndarray
        The logits.
    n_clipped : int
        Rows with p < ε or p > 1 − ε.

    References
    ----------
    Cox, D. R. (1958). Two further applications of a model for binary regression. Biometrika 45(3/4), 562–565.

    Examples
    --------
    >>> x, n = clipped_logit([0.0, 0.5, 1.0])
    >>> np.round(x, 2).tolist(), n
    ([-16.12, 0.0, 16.12], 2)
    """
    p = np.asarray(p, dtype=float)
    q = np.clip(p, eps, 1.0 - eps)
    return np.log(q) - np.log1p(-q), int(np.count_nonzero((p < eps) | (p > 1.0 - eps)))


def logistic_recalibration(p, y, weights=None, *, fix_slope: bool = False,
                           eps: float = DEFAULT_EPS) -> LogisticRecalibration:
    """Weighted logistic recalibration logit P(y = 1) = a + b · logit(p̃) (Cox 1958), by Newton's method.

    Maximises ℓ(a, b) = Σ_i w_i [y_i η_i − log(1 + e^{η_i})], η_i = a + b x_i, x_i = logit(p̃_i); with
    ``fix_slope`` b = 1 (x an offset): a is calibration-in-the-large.  Score U = Σ w (y − μ)(1, x), information
    I = Σ w μ(1 − μ)(1, x)(1, x)ᵀ, μ = expit(η); se = √diag(I⁻¹) at the estimate.  Under (quasi-)complete separation
    the estimate is Firth's (U + Σ w h (½ − μ)(1, x), h the leverages), see the module docstring.

    Parameters
    ----------
    p : array-like of float, shape (n,)
        Predicted probabilities of the event.
    y : array-like, shape (n,)
        Outcomes (1 = event, 0 = no event).
    weights : array-like of float, shape (n,), optional
        Frequency weights ≥ 0 (default 1 each).
    fix_slope : bool
        Fix b = 1 (calibration-in-the-large).
    eps : float
        Clipping of p before the logit (default 1e-7).

    Returns
    -------
    LogisticRecalibration
        Intercept, slope, their standard errors, the rows clipped, separation and convergence.

    References
    ----------
    Cox, D. R. (1958). Two further applications of a model for binary regression. Biometrika 45(3/4), 562–565.
    Van Calster, B., Nieboer, D., Vergouwe, Y., De Cock, B., Pencina, M. J. & Steyerberg, E. W. (2016). A
    calibration hierarchy for risk models was defined: from utopia to empirical data. Journal of Clinical
    Epidemiology 74, 167–176.
    Firth, D. (1993). Bias reduction of maximum likelihood estimates. Biometrika 80(1), 27–38.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(0.05, 0.95, 4000)
    >>> y = rng.random(4000) < p
    >>> fit = logistic_recalibration(p, y)
    >>> abs(fit.slope - 1) < 3 * fit.slope_se, abs(fit.intercept) < 3 * fit.intercept_se
    (True, True)
    """
    x, n_clipped = clipped_logit(p, eps)
    yv = np.asarray(y, dtype=float).ravel()
    x = x.ravel()
    w = np.ones_like(x) if weights is None else np.asarray(weights, dtype=float).ravel()
    if not (x.shape == yv.shape == w.shape):
        raise ValueError(f"p, y and weights must have one value per row ({x.size}, {yv.size}, {w.size})")
    nan = float("nan")
    events, non_events = float(w @ yv), float(w @ (1.0 - yv))
    if events <= 0 or non_events <= 0:
        which = "no events (y = 1)" if events <= 0 else "no non-events (y = 0)"
        return LogisticRecalibration(nan, 1.0 if fix_slope else nan, nan, nan, n_clipped, False, fix_slope, False,
                                     f"one class only ({which}): the recalibration fit has no finite estimate")
    if fix_slope:
        return _fit(x, yv, w, True, False, n_clipped, "")
    keep = w > 0
    xk, yk = x[keep], yv[keep]
    if np.ptp(xk) == 0:
        return LogisticRecalibration(nan, nan, nan, nan, n_clipped, False, False, False,
                                     "all predictions equal: the calibration slope is not identifiable")
    pos, neg = xk[yk > 0], xk[yk < 1]  # a fractional outcome (a share of events) counts on both sides
    lo1, hi1 = pos.min(), pos.max()
    lo0, hi0 = neg.min(), neg.max()
    if hi0 <= lo1 or hi1 <= lo0:
        reason = ("perfect separation (every event has a predicted risk at least as high as every non-event, or the "
                  "reverse): the maximum-likelihood slope is infinite; Firth's penalised estimate is reported")
        return _fit(x, yv, w, False, True, n_clipped, reason)
    return _fit(x, yv, w, False, False, n_clipped, "")


def _fit(x, y, w, fix_slope: bool, firth: bool, n_clipped: int, reason: str) -> LogisticRecalibration:
    """Newton's method with step halving on the (Firth-penalised) log-likelihood."""
    theta = np.array([0.0, 1.0])

    def objective(th: np.ndarray) -> float:
        eta = th[0] + th[1] * x
        ll = float(w @ (y * eta - np.logaddexp(0.0, eta)))
        if firth:
            info = _information(x, w, special.expit(eta), fix_slope)
            sign, logdet = np.linalg.slogdet(info)
            ll += 0.5 * logdet if sign > 0 else -np.inf
        return ll

    converged, it, current = False, 0, objective(theta)
    while it < _MAX_ITER:
        it += 1
        mu = special.expit(theta[0] + theta[1] * x)
        info = _information(x, w, mu, fix_slope)
        resid = y - mu
        if firth:
            h = _leverages(x, w, mu, info, fix_slope)
            resid = resid + h * (0.5 - mu)
        score = np.array([w @ resid, w @ (resid * x)])
        if fix_slope:
            step = np.array([score[0] / info[0, 0] if info[0, 0] > 0 else 0.0, 0.0])
        else:
            try:
                step = np.linalg.solve(info, score)
            except np.linalg.LinAlgError:
                break
        t = 1.0
        while True:
            cand = theta + t * step
            value = objective(cand)
            if value >= current - 1e-12 * max(1.0, abs(current)) or t < 1e-10:
                break
            t /= 2.0
        theta, current = cand, value
        if np.max(np.abs(t * step)) < 1e-10 * (1.0 + np.max(np.abs(theta))):
            converged = True
            break
    mu = special.expit(theta[0] + theta[1] * x)
    info = _information(x, w, mu, fix_slope)
    if fix_slope:
        se_a = 1.0 / math.sqrt(info[0, 0]) if info[0, 0] > 0 else float("nan")
        return LogisticRecalibration(float(theta[0]), 1.0, se_a, float("nan"), n_clipped, firth, True, converged,
                                     reason, it)
    try:
        cov = np.linalg.inv(info)
        se_a, se_b = (math.sqrt(v) if v > 0 else float("nan") for v in np.diag(cov))
    except np.linalg.LinAlgError:
        se_a = se_b = float("nan")
    if not converged and not reason:
        reason = f"Newton's method did not converge in {_MAX_ITER} iterations"
    return LogisticRecalibration(float(theta[0]), float(theta[1]), se_a, se_b, n_clipped, firth, False, converged,
                                 reason, it)


def _information(x, w, mu, fix_slope: bool) -> np.ndarray:
    v = w * mu * (1.0 - mu)
    if fix_slope:
        return np.array([[float(v.sum())]])
    s0, s1, s2 = float(v.sum()), float(v @ x), float(v @ (x * x))
    return np.array([[s0, s1], [s1, s2]])


def _leverages(x, w, mu, info, fix_slope: bool) -> np.ndarray:
    """Diagonal of the hat matrix W^{1/2} X I⁻¹ Xᵀ W^{1/2} (Firth's adjustment)."""
    v = w * mu * (1.0 - mu)
    if fix_slope:
        return v / info[0, 0] if info[0, 0] > 0 else np.zeros_like(v)
    try:
        inv = np.linalg.inv(info)
    except np.linalg.LinAlgError:
        return np.zeros_like(v)
    return v * (inv[0, 0] + 2.0 * inv[0, 1] * x + inv[1, 1] * x * x)
