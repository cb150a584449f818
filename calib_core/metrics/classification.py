"""Classification calibration diagnostics (Guo et al. 2017, "On Calibration of Modern Neural Networks").

Notation: N rows, K classes, p_i ∈ Δ^K the predicted probability vector of row i, y_i ∈ {0..K−1} its
label, prediction ŷ_i = argmax_k p_ik, confidence c_i = max_k p_ik = p_iŷ.

Public scalar metrics take ``(labels, probs, ...)`` and return a plain ``float``:

* :func:`ece` — expected calibration error (Guo eq. 3): ECE = Σ_m |B_m|/N · |acc(B_m) − conf(B_m)|
  with M bins on the confidence, equal-width ``strategy="uniform"`` [M = 15, bins ((m−1)/M, m/M]] or
  equal-mass ``strategy="quantile"`` (edges at the empirical quantiles of the confidences).
* :func:`mce` — maximum calibration error (Guo eq. 5): max over non-empty bins of |acc − conf|.
* :func:`nll` — mean negative log-likelihood −mean log p_iy (Guo eq. 6 divided by N); from logits with
  log-sum-exp when logits are given.
* :func:`brier` — mean Σ_k (p_ik − 1[y_i = k])² (Brier 1950).
* :func:`accuracy`, :func:`classwise_ece` (one-vs-rest ECE of every class, averaged; Kull et al. 2019).

Conventions (switchable, so the numbers can be compared with peers):

* ``closed="right"`` (default): bins (a, b] with the first bin closed — Guo et al.'s ((m−1)/M, m/M].
  ``closed="left"``: bins [a, b) with the last bin closed — netcal 1.4's convention (netcal also uses
  10 bins by default).
* ``target="top_label"`` (default): the confidence/accuracy of the predicted class (Guo).
  ``target="positive"`` (binary only): predicted P(y = 1) against the observed frequency of y = 1 — what
  netcal and scikit-learn's ``calibration_curve`` show for binary input.
* Binary input may be a 1-D array of positive-class probabilities; it is expanded to [1 − p, p].

Everything goes through the one binning engine (:mod:`calib_core.base.binning`); the input helpers and the
confidence bins are in :mod:`calib_core.metrics.classification_bins` and :class:`ClassificationRows` in
:mod:`calib_core.metrics.classification_rows` (both re-exported here).  The per-row quantities are
computed once in :class:`ClassificationRows`, whose ``statistics(weights)`` evaluates every scalar for
multinomial bootstrap count weights in O(N) (O(NK) for class-wise ECE) without re-sorting, and whose
``with_labels(y*)`` re-scores simulated labels (perfect-calibration reference) reusing the bins.
"""

from __future__ import annotations

import numpy as np

from ..base.binning import reject_nan
from ..base.classification import log_softmax, softmax
from .classification_bins import (
    Closed,
    Strategy,
    Target,
    as_probabilities,
    confidence_bins,
    event_rows,
    simulate_labels,
    top_label,
)
from .classification_rows import ClassificationRows, wmean

__all__ = [
    "Strategy",
    "Closed",
    "Target",
    "event_rows",
    "as_probabilities",
    "softmax",
    "log_softmax",
    "top_label",
    "confidence_bins",
    "ClassificationRows",
    "ece",
    "mce",
    "nll",
    "brier",
    "accuracy",
    "classwise_ece",
    "simulate_labels",
]


# --------------------------------------------------------------------------------------------------
# prepared rows
# --------------------------------------------------------------------------------------------------


def _rows(labels, probs, n_bins=15, strategy="uniform", closed="right", logits=None, eps=None) -> ClassificationRows:
    """The rows of a public metric call, after the NaN policy (:func:`calib_core.base.binning.reject_nan`)."""
    for values, what in ((probs, "probs"), (logits, "logits"), (labels, "labels")):
        if values is not None and np.asarray(values).dtype.kind == "f":
            reject_nan(values, what)
    return ClassificationRows(labels, probs, logits, n_bins=n_bins, strategy=strategy, closed=closed, eps=eps)


# --------------------------------------------------------------------------------------------------
# public scalar metrics
# --------------------------------------------------------------------------------------------------
def ece(
    labels: np.ndarray,
    probs: np.ndarray,
    *,
    n_bins: int = 15,
    strategy: Strategy = "uniform",
    closed: Closed = "right",
    target: Target = "top_label",
    weights: np.ndarray | None = None,
) -> float:
    """Expected calibration error (Naeini et al. 2015; Guo et al. 2017 eq. 3).

    ECE = Σ_m |B_m|/N · |acc(B_m) − conf(B_m)| over M bins of the confidence c_i = max_k p_ik: equal-width
    ((m−1)/M, m/M] for ``strategy="uniform"`` (Guo; M = 15), equal-mass for ``"quantile"``.  ``closed="left"`` gives
    netcal's [a, b) bins; ``target="positive"`` bins P(y = 1) of a binary set against the frequency of y = 1 (netcal's
    binary convention).

    Parameters
    ----------
    labels : ndarray of shape (n,)
        Labels 0..K−1.
    probs : ndarray of shape (n,) or (n, k)
        Probabilities.
    n_bins : int, default 15
        M.
    strategy : {"uniform", "quantile"}, default "uniform"
        Equal-width or equal-mass bins.
    closed : {"right", "left"}, default "right"
        Which end of a bin is closed.
    target : {"top_label", "positive"}, default "top_label"
        The event binned.
    weights : ndarray of shape (n,) or None, default None
        Row weights.

    Returns
    -------
    float
        The ECE, in [0, 1].

    References
    ----------
    Naeini, M. P., Cooper, G. F. & Hauskrecht, M. (2015). Obtaining well calibrated probabilities using
    Bayesian binning. AAAI, 2901–2907.

    Guo, C., Pleiss, G., Sun, Y. & Weinberger, K. Q. (2017). On calibration of modern neural networks. ICML,
    PMLR 70, 1321–1330.
    """
    r = _rows(labels, probs, n_bins, strategy, closed)
    return r.calibration_errors(weights, target)[0]


def mce(
    labels: np.ndarray,
    probs: np.ndarray,
    *,
    n_bins: int = 15,
    strategy: Strategy = "uniform",
    closed: Closed = "right",
    target: Target = "top_label",
    weights: np.ndarray | None = None,
) -> float:
    """Maximum calibration error: max_m |acc(B_m) − conf(B_m)| over the non-empty bins (same bins as :func:`ece`).

    Parameters
    ----------
    labels : ndarray of shape (n,)
        Labels 0..K−1.
    probs : ndarray of shape (n,) or (n, k)
        Probabilities.
    n_bins : int, default 15
        M.
    strategy : {"uniform", "quantile"}, default "uniform"
        Equal-width or equal-mass bins.
    closed : {"right", "left"}, default "right"
        Which end of a bin is closed.
    target : {"top_label", "positive"}, default "top_label"
        The event binned.
    weights : ndarray of shape (n,) or None, default None
        Row weights.

    Returns
    -------
    float
        The MCE, in [0, 1].

    References
    ----------
    Naeini, M. P., Cooper, G. F. & Hauskrecht, M. (2015). Obtaining well calibrated probabilities using
    Bayesian binning. AAAI, 2901–2907.

    Guo, C., Pleiss, G., Sun, Y. & Weinberger, K. Q. (2017). On calibration of modern neural networks. ICML,
    PMLR 70, 1321–1330.
    """
    r = _rows(labels, probs, n_bins, strategy, closed)
    return r.calibration_errors(weights, target)[1]


def nll(
    labels: np.ndarray,
    probs: np.ndarray | None = None,
    *,
    logits: np.ndarray | None = None,
    eps: float | None = None,
    weights: np.ndarray | None = None,
) -> float:
    """Mean negative log-likelihood −(1/N) Σ_i log p̂(y_i | x_i) (Guo et al. 2017 eq. 6, per row).

    From ``logits`` (preferred when available): logsumexp(z_i) − z_iy with the max shift, exact for any logit scale.
    From ``probs``: −log clip(p_iy, ε, 1 − ε) computed in float64 with ε = 2.2e-16 (float64 machine epsilon) unless
    ``eps`` is given.  scikit-learn's ``log_loss`` clips at the *input dtype's* epsilon — identical for float64 input;
    for float32 probabilities pass ``eps=np.finfo(np.float32).eps`` to reproduce it (it clips every p_iy < 1.2e-7,
    which e.g. moves DenseNet-BC-100's NLL from 1.2256 to 1.2196).

    Parameters
    ----------
    labels : ndarray of shape (n,)
        Labels 0..K−1.
    probs : ndarray of shape (n,) or (n, k) or None, default None
        Probabilities.
    logits : ndarray of shape (n, k) or None, default None
        Logits.
    eps : float or None, default None
        Clipping ε.
    weights : ndarray of shape (n,) or None, default None
        Row weights.

    Returns
    -------
    float
        The mean NLL.

    References
    ----------
    Guo, C., Pleiss, G., Sun, Y. & Weinberger, K. Q. (2017). On calibration of modern neural networks. ICML,
    PMLR 70, 1321–1330.

    Gneiting, T. & Raftery, A. E. (2007). Strictly proper scoring rules, prediction, and estimation. Journal of
    the American Statistical Association 102(477), 359–378.
    """
    if probs is None and logits is None:
        raise ValueError("give probs or logits")
    r = _rows(labels, probs, logits=logits, eps=eps)
    return wmean(r.nll_rows, None if weights is None else np.asarray(weights, dtype=float))


def brier(
    labels: np.ndarray,
    probs: np.ndarray,
    *,
    scale_by_half: bool = False,
    weights: np.ndarray | None = None,
) -> float:
    """Multi-class Brier score (Brier 1950): (1/N) Σ_i Σ_k (p_ik − 1[y_i = k])², in [0, 2].

    A binary 1-D input sums over both classes, i.e. 2·mean (p_i − y_i)²; ``scale_by_half=True`` halves it
    (scikit-learn's default for binary input, ``brier_score_loss(..., scale_by_half="auto")``).

    Parameters
    ----------
    labels : ndarray of shape (n,)
        Labels 0..K−1.
    probs : ndarray of shape (n,) or (n, k)
        Probabilities.
    scale_by_half : bool, default False
        Halve the score.
    weights : ndarray of shape (n,) or None, default None
        Row weights.

    Returns
    -------
    float
        The Brier score.

    References
    ----------
    Brier, G. W. (1950). Verification of forecasts expressed in terms of probability. Monthly Weather Review
    78(1), 1–3.

    Gneiting, T. & Raftery, A. E. (2007). Strictly proper scoring rules, prediction, and estimation. Journal of
    the American Statistical Association 102(477), 359–378.
    """
    r = _rows(labels, probs)
    v = wmean(r.brier_rows, None if weights is None else np.asarray(weights, dtype=float))
    return 0.5 * v if scale_by_half else v


def accuracy(labels: np.ndarray, probs: np.ndarray, *, weights: np.ndarray | None = None) -> float:
    """Fraction of rows with argmax_k p_ik = y_i (ties: the first maximal class).

    Parameters
    ----------
    labels : ndarray of shape (n,)
        Labels 0..K−1.
    probs : ndarray of shape (n,) or (n, k)
        Probabilities.
    weights : ndarray of shape (n,) or None, default None
        Row weights.

    Returns
    -------
    float
        The accuracy, in [0, 1].

    References
    ----------
    Guo, C., Pleiss, G., Sun, Y. & Weinberger, K. Q. (2017). On calibration of modern neural networks. ICML,
    PMLR 70, 1321–1330.
    """
    r = _rows(labels, probs)
    return wmean(r.correct, None if weights is None else np.asarray(weights, dtype=float))


def classwise_ece(
    labels: np.ndarray,
    probs: np.ndarray,
    *,
    n_bins: int = 15,
    strategy: Strategy = "uniform",
    closed: Closed = "right",
    weights: np.ndarray | None = None,
) -> float:
    """Class-wise ECE: (1/K) Σ_k Σ_m |B_km|/N · |freq_{B_km}(y = k) − mean_{B_km}(p_k)|.

    The one-vs-rest ECE of every class's probability, averaged over the K classes.

    Parameters
    ----------
    labels : ndarray of shape (n,)
        Labels 0..K−1.
    probs : ndarray of shape (n,) or (n, k)
        Probabilities.
    n_bins : int, default 15
        Bins per class.
    strategy : {"uniform", "quantile"}, default "uniform"
        Equal-width or equal-mass bins.
    closed : {"right", "left"}, default "right"
        Which end of a bin is closed.
    weights : ndarray of shape (n,) or None, default None
        Row weights.

    Returns
    -------
    float
        The class-wise ECE.

    References
    ----------
    Kull, M., Perello-Nieto, M., Kängsepp, M., Silva Filho, T., Song, H. & Flach, P. (2019). Beyond temperature
    scaling: obtaining well-calibrated multi-class probabilities with Dirichlet calibration. NeurIPS 32.

    Nixon, J., Dusenberry, M. W., Zhang, L., Jerfel, G. & Tran, D. (2019). Measuring calibration in deep
    learning. CVPR Workshops, 38–41.
    """
    r = _rows(labels, probs, n_bins, strategy, closed)
    return r.classwise_ece(None if weights is None else np.asarray(weights, dtype=float))
