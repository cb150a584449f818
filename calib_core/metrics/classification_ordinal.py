"""Ordered categories (ordinal classification, a forecast hub's ``pmf`` forecasts): the ranked probability score and
the cumulative (threshold) events it is made of.

A forecast p = (p_1, …, p_K) over K ordered categories and the observed category y.  Its cumulative forecast at
threshold k is P_k = Σ_{j≤k} p_j = P(Y ≤ k), the outcome O_k = 1{y ≤ k}, k = 1 … K − 1 (P_K = O_K = 1 carries no
information).  The ranked probability score (Epstein 1969; Murphy 1971)

    RPS(p, y) = Σ_{k=1}^{K−1} (P_k − O_k)²

is the sum of the Brier scores of the K − 1 binary threshold events "Y ≤ k"; it is strictly proper, 0 only for a
forecast that puts all its mass on the observed category, and — unlike the multi-class Brier score — it charges
more for mass far from the outcome than for mass next to it.  ``normalise=True`` divides by K − 1 (a value in
[0, 1]).

Under perfect calibration (Y ~ p given the forecast) its expectation is Σ_k P_k(1 − P_k) per row
(:func:`rps_expectation`, the reference a calibrated forecaster gets with the same forecasts).

The per-threshold reliability (one binary reliability diagram per event "Y ≤ k", with its test) is
:func:`calib_core.diagrams.classification_ordinal.threshold_reliability`.
"""

from __future__ import annotations

import numpy as np

__all__ = ["cumulative_events", "rps_rows", "rps", "rps_of_labels", "rps_outcomes", "rps_expectation",
           "threshold_names"]


def _check(probs: np.ndarray, labels: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray | None]:
    p = np.asarray(probs, dtype=float)
    if p.ndim != 2 or p.shape[1] < 2:
        raise ValueError(
            f"ordinal scores need probs of shape (N, K) with K ≥ 2 ordered categories (probs first, then labels); "
            f"got probs of shape {p.shape}"
        )
    if not np.all(np.isfinite(p)):
        bad = np.flatnonzero(~np.isfinite(p).all(axis=1))
        raise ValueError(f"probabilities must be finite; rows {bad[:5].tolist()} are not")
    if labels is None:
        return p, None
    y = np.asarray(labels)
    if y.shape != (p.shape[0],):
        raise ValueError(f"labels must have shape ({p.shape[0]},) to match probs {p.shape}, got {y.shape}")
    if y.size and (not np.issubdtype(y.dtype, np.number) or np.any(y != np.round(y)) or y.min() < 0
                   or y.max() >= p.shape[1]):
        raise ValueError(f"labels must be category codes 0 … {p.shape[1] - 1} (the order of the classes)")
    return p, y.astype(np.int64)


def cumulative_events(probs: np.ndarray, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The K − 1 cumulative forecasts P_k = Σ_{j≤k} p_j = P(Y ≤ k) and their outcomes O_k = 1{y ≤ k}.

    Parameters
    ----------
    probs : ndarray of shape (N, K)
        Probabilities of the K ordered categories (in their order).
    labels : ndarray of shape (N,)
        Observed category codes 0 … K − 1.

    Returns
    -------
    forecast : ndarray of shape (N, K − 1)
        P_k, clipped to [0, 1] (rounding).
    outcome : ndarray of shape (N, K − 1)
        O_k as 0.0 / 1.0.

    References
    ----------
    .. [1] E. S. Epstein, "A scoring system for probability forecasts of ranked categories", Journal of Applied
           Meteorology 8(6), 985–987, 1969.

    Examples
    --------
    >>> f, o = cumulative_events(np.array([[0.2, 0.5, 0.3]]), np.array([1]))
    >>> f.round(2).tolist(), o.tolist()
    ([[0.2, 0.7]], [[0.0, 1.0]])
    """
    p, y = _check(probs, labels)
    forecast = np.clip(np.cumsum(p[:, :-1], axis=1), 0.0, 1.0)
    outcome = (y[:, None] <= np.arange(p.shape[1] - 1)[None, :]).astype(float)
    return forecast, outcome


def rps_rows(probs: np.ndarray, labels: np.ndarray, *, normalise: bool = False) -> np.ndarray:
    """The ranked probability score of every row: RPS_i = Σ_{k=1}^{K−1} (P_ik − O_ik)², P_ik = Σ_{j≤k} p_ij,
    O_ik = 1{y_i ≤ k}; with ``normalise`` divided by K − 1.

    Parameters
    ----------
    probs : ndarray of shape (N, K)
        Probabilities of the K ordered categories.
    labels : ndarray of shape (N,)
        Observed category codes 0 … K − 1.
    normalise : bool, default False
        Divide by K − 1 (a score in [0, 1]).

    Returns
    -------
    ndarray of shape (N,)
        RPS per row (lower is better; 0 = all mass on the observed category).

    References
    ----------
    .. [1] E. S. Epstein, "A scoring system for probability forecasts of ranked categories", Journal of Applied
           Meteorology 8(6), 985–987, 1969.
    .. [2] A. H. Murphy, "A note on the ranked probability score", Journal of Applied Meteorology 10(1), 155–156,
           1971.

    Examples
    --------
    >>> rps_rows(np.array([[0.1, 0.2, 0.3, 0.4]]), np.array([2])).round(4).tolist()
    [0.26]
    """
    forecast, outcome = cumulative_events(probs, labels)
    out = ((forecast - outcome) ** 2).sum(axis=1)
    return out / forecast.shape[1] if normalise else out


def rps(probs: np.ndarray, labels: np.ndarray, *, normalise: bool = False, weights: np.ndarray | None = None) -> float:
    """The mean ranked probability score: RPS = (1/N) Σ_i Σ_{k=1}^{K−1} (P_ik − O_ik)² (weighted mean with
    ``weights``); with ``normalise`` divided by K − 1.

    Parameters
    ----------
    probs : ndarray of shape (N, K)
        Probabilities of the K ordered categories (probs first, then labels).
    labels : ndarray of shape (N,)
        Observed category codes 0 … K − 1.
    normalise : bool, default False
        Divide by K − 1 (a score in [0, 1]).
    weights : ndarray of shape (N,), optional
        Row weights.

    Returns
    -------
    float
        The mean RPS (lower is better; a strictly proper score).  NaN without rows.

    References
    ----------
    .. [1] E. S. Epstein, "A scoring system for probability forecasts of ranked categories", Journal of Applied
           Meteorology 8(6), 985–987, 1969.
    .. [2] A. H. Murphy, "A note on the ranked probability score", Journal of Applied Meteorology 10(1), 155–156,
           1971.
    .. [3] T. Gneiting and A. E. Raftery, "Strictly proper scoring rules, prediction, and estimation", Journal of
           the American Statistical Association 102(477), 359–378, 2007.

    Examples
    --------
    >>> p = np.array([[0.7, 0.2, 0.1], [0.1, 0.2, 0.7]])
    >>> round(rps(p, np.array([0, 0])), 4), round(rps(p, np.array([0, 0]), normalise=True), 4)
    (0.7, 0.35)
    """
    r = rps_rows(probs, labels, normalise=normalise)
    if r.size == 0:
        return float("nan")
    return float(np.average(r, weights=None if weights is None else np.asarray(weights, dtype=float)))


def rps_of_labels(labels: np.ndarray, probs: np.ndarray, *, normalise: bool = False,
                  weights: np.ndarray | None = None) -> float:
    """:func:`rps` with the arguments in the order of the other classification metrics (labels, then probs):
    RPS = (1/N) Σ_i Σ_{k=1}^{K−1} (P_ik − O_ik)².

    Parameters
    ----------
    labels : ndarray of shape (N,)
        Observed category codes 0 … K − 1.
    probs : ndarray of shape (N, K)
        Probabilities of the K ordered categories.
    normalise : bool, default False
        Divide by K − 1.
    weights : ndarray of shape (N,), optional
        Row weights.

    Returns
    -------
    float
        The mean RPS.

    References
    ----------
    .. [1] E. S. Epstein, "A scoring system for probability forecasts of ranked categories", Journal of Applied
           Meteorology 8(6), 985–987, 1969.

    Examples
    --------
    >>> round(rps_of_labels(np.array([2]), np.array([[0.1, 0.2, 0.3, 0.4]])), 4)
    0.26
    """
    return rps(probs, labels, normalise=normalise, weights=weights)


def rps_outcomes(probs: np.ndarray, *, normalise: bool = False) -> np.ndarray:
    """The RPS every possible outcome would get: R_ij = Σ_{k<j} P_ik² + Σ_{j≤k≤K−1} (1 − P_ik)² (codes j = 0 … K − 1,
    thresholds k = 0 … K − 2), from prefix sums, O(N·K).

    Parameters
    ----------
    probs : ndarray of shape (N, K)
        Probabilities of the K ordered categories.
    normalise : bool, default False
        Divide by K − 1.

    Returns
    -------
    ndarray of shape (N, K)
        R_ij = RPS(p_i, j).

    References
    ----------
    .. [1] E. S. Epstein, "A scoring system for probability forecasts of ranked categories", Journal of Applied
           Meteorology 8(6), 985–987, 1969.

    Examples
    --------
    >>> rps_outcomes(np.array([[0.1, 0.2, 0.3, 0.4]])).round(2).tolist()
    [[1.46, 0.66, 0.26, 0.46]]
    """
    p, _ = _check(probs)
    cum = np.clip(np.cumsum(p[:, :-1], axis=1), 0.0, 1.0)
    n = p.shape[0]
    below = np.concatenate([np.zeros((n, 1)), np.cumsum(cum**2, axis=1)], axis=1)  # Σ_{k<j} P_k²
    above_terms = (1.0 - cum) ** 2
    above = np.concatenate([np.cumsum(above_terms[:, ::-1], axis=1)[:, ::-1], np.zeros((n, 1))], axis=1)
    out = below + above
    return out / cum.shape[1] if normalise else out


def rps_expectation(probs: np.ndarray, *, normalise: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Mean and variance of every row's RPS when its category is drawn from its own forecast (Y ~ p, perfect
    calibration): E RPS_i = Σ_{k=1}^{K−1} P_ik(1 − P_ik), Var RPS_i = Σ_j p_ij R_ij² − (E RPS_i)² with R_ij the
    RPS of outcome j (:func:`rps_outcomes`).

    Parameters
    ----------
    probs : ndarray of shape (N, K)
        Probabilities of the K ordered categories.
    normalise : bool, default False
        Divide by K − 1.

    Returns
    -------
    mean : ndarray of shape (N,)
        E RPS_i.
    var : ndarray of shape (N,)
        Var RPS_i.

    References
    ----------
    .. [1] A. H. Murphy, "A note on the ranked probability score", Journal of Applied Meteorology 10(1), 155–156,
           1971.
    .. [2] T. Gneiting and A. E. Raftery, "Strictly proper scoring rules, prediction, and estimation", Journal of
           the American Statistical Association 102(477), 359–378, 2007.

    Examples
    --------
    >>> m, v = rps_expectation(np.array([[0.5, 0.5]]))
    >>> float(m[0]), float(v[0])
    (0.25, 0.0)
    """
    p, _ = _check(probs)
    outcomes = rps_outcomes(p, normalise=normalise)
    mean = np.einsum("ij,ij->i", p, outcomes)
    second = np.einsum("ij,ij->i", p, outcomes**2)
    return mean, np.clip(second - mean**2, 0.0, None)


def threshold_names(classes: list | None, k: int) -> list[str]:
    """Names of the K − 1 threshold events "Y ≤ class_k": ``"≤ <class name>"`` (``"≤ 0"`` … without names).

    Parameters
    ----------
    classes : list or None
        The K class names in their order.
    k : int
        K, the number of categories.

    Returns
    -------
    list of str
        K − 1 names.

    References
    ----------
    .. [1] E. S. Epstein, "A scoring system for probability forecasts of ranked categories", Journal of Applied
           Meteorology 8(6), 985–987, 1969.

    Examples
    --------
    >>> threshold_names(["low", "mid", "high"], 3)
    ['≤ low', '≤ mid']
    """
    names = [str(c) for c in classes] if classes is not None and len(classes) == k else [str(j) for j in range(k)]
    return [f"≤ {c}" for c in names[:-1]]
