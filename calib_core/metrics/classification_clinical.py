"""The clinical calibration set of a binary risk model (TRIPOD; Van Calster et al. 2016, 2019): calibration-in-the-
large, the calibration slope and its Cox intercept, Spiegelhalter's Z, the Hosmer–Lemeshow statistic, and the
integrated calibration index with E50 / E90 — and the prevalence adjustment by Bayes' rule on the odds.

Rows (p_i, y_i): p = P(y = 1) of a binary file (the positive class); for K > 2 classes each class k one-vs-rest
(p = p_ik, y = 1[label = k]) and the registry functions average over the classes (macro).  Weights w_i ≥ 0 are
frequency weights (2 = a duplicated row).

Definitions
-----------
* **calibration_in_the_large** (CITL): a of logit P(y = 1) = a + logit p̃ (slope fixed at 1, logit p̃ an offset;
  :func:`~calib_core.metrics.classification_clinical_fit.logistic_recalibration`).  0 = calibrated on average;
  > 0 the model under-estimates the risk.  (Not the difference of means Σy/N − Σp/N, which some papers also call
  CITL: a is its logit-scale, likelihood version.)
* **calibration_slope** b and **cox_intercept** a of logit P(y = 1) = a + b · logit p̃ (Cox 1958).  b = 1 calibrated,
  b < 1 predictions too extreme (over-fitting), b > 1 too moderate; a is calzone's "Cox intercept" (descriptive).
  p̃ = p clipped to [1e-7, 1 − 1e-7] (calzone's ε); the rows clipped are counted.
* **spiegelhalter_z** (Spiegelhalter 1986): Z = Σ_i (y_i − p_i)(1 − 2p_i) / √(Σ_i (1 − 2p_i)² p_i (1 − p_i)), N(0, 1)
  under perfect calibration (a test of the Brier score's calibration part; large |Z| = miscalibrated).
* **hosmer_lemeshow** (Hosmer & Lemeshow 1980): g groups by the deciles of risk (cut points at the (j/g) quantiles
  of p̃, ties kept together; empty groups dropped), H = Σ_g (O_g − E_g)² / (E_g (1 − E_g/n_g)) with O_g events,
  E_g = Σ p̃ and n_g rows of group g.  It depends on g and on where the cut points fall (a few rows moved across a cut
  point change it; Bertolini et al. 2000): read it with the smooth measures.  Reference law (the test, in
  :mod:`calib_core.inference.classification_clinical`): χ² with g degrees of freedom for predictions fixed before
  these data (validation), the textbook g − 2 belongs to a model fitted on these rows, which a validation is not.
* **ici**, **e50**, **e90** (Austin & Steyerberg 2019): the smoothed calibration curve ĉ(p) = loess of y on p
  (:func:`~calib_core.metrics.classification_loess.loess_smooth`: local linear, span 0.75, ``delta`` 1 % of the
  range of p, no robustness iterations — the stated smoother; Austin & Steyerberg used R's ``loess`` (local
  quadratic, span 0.75), calzone statsmodels' lowess with span 0.5, delta 0.001: both available through the
  options); ICI = Σ_i w_i |ĉ(p_i) − p_i| / Σ w, E50 / E90 the (weighted) median and 90th percentile of |ĉ(p_i) − p_i|.
  From 10⁵ rows the default smoother is fitted on 16,384 fine bins of p (the large-N device of R's ``loess``,
  :mod:`calib_core.metrics.classification_loess_binned`; within ~1e-5 of the exact fit, measured and tested).

Prevalence (:func:`adjust_prevalence`; Saerens, Latinne & Decaestecker 2002): probabilities made for a population
of prevalence π are re-expressed for prevalence π′ by Bayes' rule on the odds, odds′ = odds · [π′/(1 − π′)] /
[π/(1 − π)] (the class-conditional laws p(x | y) unchanged).
"""

from __future__ import annotations

import numpy as np

from .classification_clinical_column import hosmer_lemeshow_from_sums
from .classification_clinical_fit import DEFAULT_EPS, LogisticRecalibration, logistic_recalibration
from .classification_clinical_moments import FUSED_FROM, group_sums
from .classification_loess import DEFAULT_SPAN, loess_smooth
from .classification_loess_binned import BINNED_FROM, binned_calibration_errors, quantiles_linear

__all__ = [
    "LogisticRecalibration",
    "logistic_recalibration",
    "spiegelhalter_z_of",
    "hosmer_lemeshow_of",
    "hosmer_lemeshow_groups",
    "calibration_errors_of",
    "adjust_prevalence",
    "one_vs_rest",
    "calibration_in_the_large",
    "calibration_slope",
    "cox_intercept",
    "spiegelhalter_z",
    "hosmer_lemeshow",
    "ici",
    "e50",
    "e90",
    "HL_GROUPS",
]

#: Groups of the Hosmer–Lemeshow statistic (deciles of risk).
HL_GROUPS = 10

def _weights(w, n: int) -> np.ndarray:
    return np.ones(n) if w is None else np.asarray(w, dtype=float).ravel()


def spiegelhalter_z_of(p, y, weights=None) -> float:
    """Spiegelhalter's Z = Σ w (y − p)(1 − 2p) / √(Σ w (1 − 2p)² p(1 − p)).

    N(0, 1) under perfect calibration (y_i ~ Bernoulli(p_i) independently); NaN when the denominator is 0 (every
    p is 0, ½ or 1).

    Parameters
    ----------
    p : array-like of float, shape (n,)
        Predicted probabilities of the event.
    y : array-like, shape (n,)
        Outcomes 0/1.
    weights : array-like, optional
        Frequency weights.

    Returns
    -------
    float
        Z.

    References
    ----------
    Spiegelhalter, D. J. (1986). Probabilistic prediction in patient management and clinical trials. Statistics
    in Medicine 5(5), 421–433.

    Examples
    --------
    >>> round(spiegelhalter_z_of([0.2, 0.8], [0, 1]), 4)
    -0.7071
    """
    p = np.asarray(p, dtype=float).ravel()
    y = np.asarray(y, dtype=float).ravel()
    w = _weights(weights, p.size)
    c = 1.0 - 2.0 * p
    den = float(w @ (c * c * p * (1.0 - p)))
    if not den > 0:
        return float("nan")
    return float(w @ ((y - p) * c)) / float(np.sqrt(den))


def hosmer_lemeshow_groups(p, n_groups: int = HL_GROUPS, eps: float = DEFAULT_EPS) -> np.ndarray:
    """The Hosmer–Lemeshow group of each row: deciles of risk (cut points at the j/g quantiles of p̃, ties kept
    together).

    group_i = #{cut points c_j (j = 1 … g − 1) with c_j < p̃_i}, c_j = quantile(p̃, j/g) (linear interpolation).

    Parameters
    ----------
    p : array-like of float
        Predicted probabilities.
    n_groups : int
        g (default 10).
    eps : float
        Clipping of p (as the logistic fits).

    Returns
    -------
    ndarray of int
        Group 0 … g − 1 per row (some groups may be empty when p has ties).

    References
    ----------
    Hosmer, D. W. & Lemeshow, S. (1980). Goodness of fit tests for the multiple logistic regression model.
    Communications in Statistics – Theory and Methods 9(10), 1043–1069.
    """
    q = np.clip(np.asarray(p, dtype=float).ravel(), eps, 1.0 - eps)
    if q.size == 0:
        return np.zeros(0, dtype=np.intp)
    cuts = np.quantile(q, np.arange(1, int(n_groups)) / int(n_groups))
    return np.searchsorted(cuts, q, side="left").astype(np.intp)


def hosmer_lemeshow_of(p, y, weights=None, *, n_groups: int = HL_GROUPS, eps: float = DEFAULT_EPS,
                       groups: np.ndarray | None = None) -> tuple[float, int]:
    """The Hosmer–Lemeshow statistic H = Σ_g (O_g − E_g)² / (E_g (1 − E_g / n_g)) over the non-empty groups.

    O_g = Σ w y, E_g = Σ w p̃, n_g = Σ w over group g (:func:`hosmer_lemeshow_groups`, p̃ = p clipped to [ε, 1 − ε]).

    Parameters
    ----------
    p : array-like of float, shape (n,)
        Predicted probabilities of the event.
    y : array-like, shape (n,)
        Outcomes 0/1.
    weights : array-like, optional
        Frequency weights.
    n_groups : int
        g (default 10, deciles of risk).
    eps : float
        Clipping of p.
    groups : ndarray of int, optional
        Precomputed groups (default: deciles of risk of p).

    Returns
    -------
    statistic : float
        H.
    n_nonempty : int
        Groups holding weight (the degrees of freedom are counted from them).

    References
    ----------
    Hosmer, D. W. & Lemeshow, S. (1980). Goodness of fit tests for the multiple logistic regression model.
    Communications in Statistics – Theory and Methods 9(10), 1043–1069.
    Bertolini, G., D'Amico, R., Nardi, D., Tinazzi, A. & Apolone, G. (2000). One model, several results: the
    paradox of the Hosmer–Lemeshow goodness-of-fit test for the logistic regression model. Journal of
    Epidemiology and Biostatistics 5(4), 251–253.

    Examples
    --------
    >>> stat, g = hosmer_lemeshow_of([0.1, 0.1, 0.9, 0.9], [0, 0, 1, 1], n_groups=2)
    >>> round(stat, 3), g
    (0.444, 2)
    """
    q = np.clip(np.asarray(p, dtype=float).ravel(), eps, 1.0 - eps)
    yv = np.asarray(y, dtype=float).ravel()
    if weights is None and groups is None and q.size >= FUSED_FROM:  # large N: cuts by selection, one pass
        cuts = quantiles_linear(q, np.arange(1, int(n_groups)) / int(n_groups))
        return hosmer_lemeshow_from_sums(*group_sums(q, yv, cuts))
    w = _weights(weights, q.size)
    g = hosmer_lemeshow_groups(q, n_groups, eps) if groups is None else np.asarray(groups, dtype=np.intp)
    m = int(max(int(n_groups), int(g.max()) + 1 if g.size else 0))
    n_g = np.bincount(g, weights=w, minlength=m)
    o_g = np.bincount(g, weights=w * yv, minlength=m)
    e_g = np.bincount(g, weights=w * q, minlength=m)
    return hosmer_lemeshow_from_sums(n_g, o_g, e_g)


def _weighted_quantile(v: np.ndarray, w: np.ndarray, q: float) -> float:
    """Quantile of v under weights w: linear interpolation of the weighted midpoint CDF (numpy's default when the
    weights are equal)."""
    keep = w > 0
    v, w = v[keep], w[keep]
    if v.size == 0:
        return float("nan")
    if np.all(w == w[0]):
        return float(np.quantile(v, q))
    order = np.argsort(v, kind="stable")
    v, w = v[order], w[order]
    cum = np.cumsum(w)
    pos = (cum - w / 2.0) / cum[-1]
    return float(np.interp(q, pos, v))


def calibration_errors_of(p, y, weights=None, *, span: float = DEFAULT_SPAN, degree: int = 1,
                          delta: float | None = None) -> dict[str, float]:
    """ICI, E50 and E90 of the loess calibration curve (Austin & Steyerberg 2019).

    ĉ = loess of y on p (:func:`~calib_core.metrics.classification_loess.loess_smooth`); d_i = |ĉ(p_i) − p_i|;
    ICI = Σ w d / Σ w, E50 = weighted median of d, E90 = weighted 90th percentile of d.  From
    :data:`~calib_core.metrics.classification_loess_binned.BINNED_FROM` (10⁵) rows with the default smoother
    (degree 1, default ``delta``) ĉ is the loess fitted on fine bins of p at the same 1 %-of-range fit points
    (:func:`~calib_core.metrics.classification_loess_binned.binned_calibration_errors`; measured within ~1e-5 of
    the exact fit, which stays below 10⁵ rows).

    Parameters
    ----------
    p : array-like of float, shape (n,)
        Predicted probabilities of the event.
    y : array-like, shape (n,)
        Outcomes 0/1.
    weights : array-like, optional
        Frequency weights.
    span, degree, delta
        The smoother's settings (default local linear, span 0.75, delta 1 % of the range).

    Returns
    -------
    dict
        ``ici``, ``e50``, ``e90`` (NaN without rows of positive weight).

    References
    ----------
    Austin, P. C. & Steyerberg, E. W. (2019). The Integrated Calibration Index (ICI) and related metrics for
    quantifying the calibration of logistic regression models. Statistics in Medicine 38(21), 4051–4065.
    Cleveland, W. S. (1979). Robust locally weighted regression and smoothing scatterplots. Journal of the
    American Statistical Association 74(368), 829–836.

    Examples
    --------
    >>> p = np.linspace(0.05, 0.95, 19)
    >>> calibration_errors_of(p, p)["ici"] < 1e-12  # outcomes on the diagonal: no calibration error
    True
    """
    p = np.asarray(p, dtype=float).ravel()
    yv = np.asarray(y, dtype=float).ravel()
    if weights is None and p.size >= BINNED_FROM and degree == 1 and delta is None:  # large N: loess on bins of p
        binned = binned_calibration_errors(p, yv, None, span=span)
        if binned is not None:
            return binned
    w = _weights(weights, p.size)
    if p.size == 0 or not (w > 0).any():
        return {"ici": float("nan"), "e50": float("nan"), "e90": float("nan")}
    if p.size >= BINNED_FROM and degree == 1 and delta is None:  # large N, weighted: the loess on bins of p
        binned = binned_calibration_errors(p, yv, w, span=span)
        if binned is not None:
            return binned
    curve = loess_smooth(p, yv, None if weights is None else w, span=span, degree=degree, delta=delta)
    d = np.abs(curve - p)
    if weights is None:  # unit weights: numpy's quantiles, both from one partition
        e50, e90 = (float(v) for v in np.quantile(d, [0.5, 0.9]))
    else:
        e50, e90 = _weighted_quantile(d, w, 0.5), _weighted_quantile(d, w, 0.9)
    return {"ici": float((w @ d) / w.sum()), "e50": e50, "e90": e90}


def adjust_prevalence(probs, *, from_prevalence: float, to_prevalence: float) -> np.ndarray:
    """Probabilities made for prevalence π re-expressed for prevalence π′ by Bayes' rule on the odds.

    odds′ = odds · [π′/(1 − π′)] / [π/(1 − π)], i.e. logit p′ = logit p + logit π′ − logit π (p = 0 and 1 stay).
    A 1-D array is P(y = 1); an (n, 2) array gets column 1 adjusted and column 0 = 1 − p′.  calzone's
    ``apply_prevalence_adjustment(π_a, y, p)`` is ``adjust_prevalence(p, from_prevalence=π_a,
    to_prevalence=mean(y))``.

    Parameters
    ----------
    probs : array-like, shape (n,) or (n, 2)
        Probabilities.
    from_prevalence : float
        π, the prevalence the probabilities were made for, in (0, 1).
    to_prevalence : float
        π′, the prevalence to re-express them at, in (0, 1).

    Returns
    -------
    ndarray
        The adjusted probabilities, same shape.

    References
    ----------
    Saerens, M., Latinne, P. & Decaestecker, C. (2002). Adjusting the outputs of a classifier to new a priori
    probabilities: a simple procedure. Neural Computation 14(1), 21–41.

    Examples
    --------
    >>> np.round(adjust_prevalence([0.5, 0.2], from_prevalence=0.5, to_prevalence=0.1), 4)
    array([0.1  , 0.027])
    """
    for name, v in (("from_prevalence", from_prevalence), ("to_prevalence", to_prevalence)):
        if not (isinstance(v, int | float | np.floating) and 0.0 < float(v) < 1.0):
            raise ValueError(f"{name} must be a prevalence strictly between 0 and 1, got {v!r}")
    arr = np.asarray(probs, dtype=float)
    two = arr.ndim == 2
    if two and arr.shape[1] != 2:
        raise ValueError(f"adjust_prevalence needs P(y = 1) or two columns, got {arr.shape[1]} columns")
    p = arr[:, 1] if two else arr
    shift = np.log(to_prevalence / (1.0 - to_prevalence)) - np.log(from_prevalence / (1.0 - from_prevalence))
    with np.errstate(divide="ignore"):
        logit = np.log(p) - np.log1p(-p)
    out = 1.0 / (1.0 + np.exp(-(logit + shift)))
    out = np.where(p <= 0.0, 0.0, np.where(p >= 1.0, 1.0, out))
    return np.column_stack([1.0 - out, out]) if two else out


def one_vs_rest(labels, probs) -> list[tuple[int, np.ndarray, np.ndarray]]:
    """The binary events of the clinical set: ``[(1, P(y = 1), 1[y = 1])]`` for a binary file (1-D probabilities or
    K = 2), ``[(k, p_·k, 1[y = k]) for every class k]`` for K > 2.

    Parameters
    ----------
    labels : array-like of int, shape (n,)
        Labels 0 … K − 1.
    probs : array-like, shape (n,) or (n, K)
        Probabilities.

    Returns
    -------
    list of (int, ndarray, ndarray)
        (class, probabilities, outcomes) per event.

    References
    ----------
    Van Calster, B., McLernon, D. J., van Smeden, M., Wynants, L. & Steyerberg, E. W. (2019). Calibration: the
    Achilles heel of predictive analytics. BMC Medicine 17, 230.
    """
    lab = np.asarray(labels).ravel()
    pr = np.asarray(probs, dtype=float)
    if pr.ndim == 1:
        return [(1, pr, (lab == 1).astype(float))]
    if pr.shape[1] == 2:
        return [(1, pr[:, 1], (lab == 1).astype(float))]
    return [(k, pr[:, k], (lab == k).astype(float)) for k in range(pr.shape[1])]


def _macro(labels, probs, fn) -> float:
    vals = [fn(f, y) for _, f, y in one_vs_rest(labels, probs)]
    return float(np.mean(vals)) if vals else float("nan")


def calibration_in_the_large(labels, probs, *, weights=None, eps: float = DEFAULT_EPS) -> float:
    """Calibration-in-the-large: a of logit P(y = 1) = a + logit p̃ (slope fixed at 1; 0 = calibrated).

    Binary files: the positive class; K > 2: the mean over classes of the one-vs-rest values.

    Parameters
    ----------
    labels : array-like of int, shape (n,)
        Labels.
    probs : array-like, shape (n,) or (n, K)
        Probabilities.
    weights : array-like, optional
        Frequency weights.
    eps : float
        Clipping of p before the logit.

    Returns
    -------
    float
        a (NaN with one class only).

    References
    ----------
    Van Calster, B., Nieboer, D., Vergouwe, Y., De Cock, B., Pencina, M. J. & Steyerberg, E. W. (2016). A
    calibration hierarchy for risk models was defined: from utopia to empirical data. Journal of Clinical
    Epidemiology 74, 167–176.
    Cox, D. R. (1958). Two further applications of a model for binary regression. Biometrika 45(3/4), 562–565.
    """
    return _macro(labels, probs,
                  lambda f, y: logistic_recalibration(f, y, weights, fix_slope=True, eps=eps).intercept)


def calibration_slope(labels, probs, *, weights=None, eps: float = DEFAULT_EPS) -> float:
    """Calibration slope: b of logit P(y = 1) = a + b · logit p̃ (1 = calibrated, < 1 predictions too extreme).

    Binary files: the positive class; K > 2: the mean over classes of the one-vs-rest values.

    Parameters
    ----------
    labels : array-like of int, shape (n,)
        Labels.
    probs : array-like, shape (n,) or (n, K)
        Probabilities.
    weights : array-like, optional
        Frequency weights.
    eps : float
        Clipping of p before the logit.

    Returns
    -------
    float
        b (Firth's estimate under separation; NaN with one class or one distinct prediction).

    References
    ----------
    Cox, D. R. (1958). Two further applications of a model for binary regression. Biometrika 45(3/4), 562–565.
    Van Calster, B., McLernon, D. J., van Smeden, M., Wynants, L. & Steyerberg, E. W. (2019). Calibration: the
    Achilles heel of predictive analytics. BMC Medicine 17, 230.
    """
    return _macro(labels, probs, lambda f, y: logistic_recalibration(f, y, weights, eps=eps).slope)


def cox_intercept(labels, probs, *, weights=None, eps: float = DEFAULT_EPS) -> float:
    """Cox intercept: a of the two-parameter fit logit P(y = 1) = a + b · logit p̃ (calzone's name; descriptive).

    Parameters
    ----------
    labels : array-like of int, shape (n,)
        Labels.
    probs : array-like, shape (n,) or (n, K)
        Probabilities.
    weights : array-like, optional
        Frequency weights.
    eps : float
        Clipping of p before the logit.

    Returns
    -------
    float
        a.

    References
    ----------
    Cox, D. R. (1958). Two further applications of a model for binary regression. Biometrika 45(3/4), 562–565.
    """
    return _macro(labels, probs, lambda f, y: logistic_recalibration(f, y, weights, eps=eps).intercept)


def spiegelhalter_z(labels, probs, *, weights=None) -> float:
    """Spiegelhalter's Z of the positive class (K > 2: mean over the one-vs-rest classes); see
    :func:`spiegelhalter_z_of`.

    Z = Σ (y − p)(1 − 2p) / √(Σ (1 − 2p)² p(1 − p)).

    Parameters
    ----------
    labels : array-like of int, shape (n,)
        Labels.
    probs : array-like, shape (n,) or (n, K)
        Probabilities.
    weights : array-like, optional
        Frequency weights.

    Returns
    -------
    float
        Z.

    References
    ----------
    Spiegelhalter, D. J. (1986). Probabilistic prediction in patient management and clinical trials. Statistics
    in Medicine 5(5), 421–433.
    """
    return _macro(labels, probs, lambda f, y: spiegelhalter_z_of(f, y, weights))


def hosmer_lemeshow(labels, probs, *, weights=None, n_groups: int = HL_GROUPS) -> float:
    """Hosmer–Lemeshow statistic over the deciles of risk (K > 2: mean over the one-vs-rest classes); see
    :func:`hosmer_lemeshow_of`.

    H = Σ_g (O_g − E_g)² / (E_g (1 − E_g/n_g)).

    Parameters
    ----------
    labels : array-like of int, shape (n,)
        Labels.
    probs : array-like, shape (n,) or (n, K)
        Probabilities.
    weights : array-like, optional
        Frequency weights.
    n_groups : int
        Groups (default 10).

    Returns
    -------
    float
        H.

    References
    ----------
    Hosmer, D. W. & Lemeshow, S. (1980). Goodness of fit tests for the multiple logistic regression model.
    Communications in Statistics – Theory and Methods 9(10), 1043–1069.
    """
    return _macro(labels, probs, lambda f, y: hosmer_lemeshow_of(f, y, weights, n_groups=n_groups)[0])


def _errors(key: str):
    def fn(labels, probs, *, weights=None, span: float = DEFAULT_SPAN, degree: int = 1,
           delta: float | None = None) -> float:
        return _macro(labels, probs,
                      lambda f, y: calibration_errors_of(f, y, weights, span=span, degree=degree, delta=delta)[key])
    return fn


def ici(labels, probs, *, weights=None, span: float = DEFAULT_SPAN, degree: int = 1,
        delta: float | None = None) -> float:
    """Integrated calibration index: mean |loess(p) − p| (K > 2: mean over the one-vs-rest classes); see
    :func:`calibration_errors_of`.

    ICI = Σ_i w_i |ĉ(p_i) − p_i| / Σ w.

    Parameters
    ----------
    labels : array-like of int, shape (n,)
        Labels.
    probs : array-like, shape (n,) or (n, K)
        Probabilities.
    weights : array-like, optional
        Frequency weights.
    span, degree, delta
        The loess settings.

    Returns
    -------
    float
        ICI.

    References
    ----------
    Austin, P. C. & Steyerberg, E. W. (2019). The Integrated Calibration Index (ICI) and related metrics for
    quantifying the calibration of logistic regression models. Statistics in Medicine 38(21), 4051–4065.
    """
    return _errors("ici")(labels, probs, weights=weights, span=span, degree=degree, delta=delta)


def e50(labels, probs, *, weights=None, span: float = DEFAULT_SPAN, degree: int = 1,
        delta: float | None = None) -> float:
    """E50: the median of |loess(p) − p| (K > 2: mean over the one-vs-rest classes).

    E50 = weighted median_i |ĉ(p_i) − p_i|.

    Parameters
    ----------
    labels : array-like of int, shape (n,)
        Labels.
    probs : array-like, shape (n,) or (n, K)
        Probabilities.
    weights : array-like, optional
        Frequency weights.
    span, degree, delta
        The loess settings.

    Returns
    -------
    float
        E50.

    References
    ----------
    Austin, P. C. & Steyerberg, E. W. (2019). The Integrated Calibration Index (ICI) and related metrics for
    quantifying the calibration of logistic regression models. Statistics in Medicine 38(21), 4051–4065.
    """
    return _errors("e50")(labels, probs, weights=weights, span=span, degree=degree, delta=delta)


def e90(labels, probs, *, weights=None, span: float = DEFAULT_SPAN, degree: int = 1,
        delta: float | None = None) -> float:
    """E90: the 90th percentile of |loess(p) − p| (K > 2: mean over the one-vs-rest classes).

    E90 = weighted 0.9-quantile_i |ĉ(p_i) − p_i|.

    Parameters
    ----------
    labels : array-like of int, shape (n,)
        Labels.
    probs : array-like, shape (n,) or (n, K)
        Probabilities.
    weights : array-like, optional
        Frequency weights.
    span, degree, delta
        The loess settings.

    Returns
    -------
    float
        E90.

    References
    ----------
    Austin, P. C. & Steyerberg, E. W. (2019). The Integrated Calibration Index (ICI) and related metrics for
    quantifying the calibration of logistic regression models. Statistics in Medicine 38(21), 4051–4065.
    """
    return _errors("e90")(labels, probs, weights=weights, span=span, degree=degree, delta=delta)
