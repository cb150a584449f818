"""Probability inputs and confidence bins of classification (Guo et al. 2017, "On Calibration of Modern Neural
Networks").

Notation: N rows, K classes, p_i ∈ Δ^K the predicted probability vector of row i, y_i ∈ {0..K−1} its label,
prediction ŷ_i = argmax_k p_ik, confidence c_i = max_k p_ik = p_iŷ.

Here: reading probability matrices and labels (a 1-D binary input is expanded to [1 − p, p]), the top label and
the binary event a calibration statistic looks at, labels simulated from the predictions (the perfect-calibration
reference), and the M confidence bins B_m (equal-width ``strategy="uniform"``, or equal-mass
``strategy="quantile"`` at the empirical quantiles, also of a bootstrap resample without materialising it) with
the ECE and MCE of per-bin sums.  Everything bins through the one binning engine (:mod:`calib_core.base.binning`);
:mod:`calib_core.metrics.classification` builds the metrics on them and re-exports these names.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from ..base.binning import bins_from_edges, equal_mass_edges, reject_nan, uniform_bin_index, uniform_edges

__all__ = [
    "Strategy",
    "Closed",
    "Target",
    "as_probabilities",
    "top_label",
    "event_rows",
    "simulate_labels",
    "confidence_bins",
]


Strategy = Literal["uniform", "quantile"]

Closed = Literal["right", "left"]

Target = Literal["top_label", "positive"]


# =============================================================================================
# input helpers
# =============================================================================================


def as_probabilities(probs: np.ndarray) -> np.ndarray:
    """(N, K) probability matrix; a 1-D array is read as binary positive-class probabilities [1 − p, p].

    The dtype is kept (float32 stays float32: reductions are done in float64 where it matters).

    Parameters
    ----------
    probs : array_like of shape (n,) or (n, k)
        Probabilities, K ≥ 2 (1-D: P(y = 1) of a binary set).

    Returns
    -------
    ndarray of shape (n, k)
        The probability matrix.

    References
    ----------
    Guo, C., Pleiss, G., Sun, Y. & Weinberger, K. Q. (2017). On calibration of modern neural networks. ICML,
    PMLR 70, 1321–1330.
    """
    p = np.asarray(probs)
    if not np.issubdtype(p.dtype, np.floating):
        p = p.astype(float)
    if p.ndim == 1:
        p = np.column_stack([1.0 - p, p])
    if p.ndim != 2 or p.shape[1] < 2:
        raise ValueError(f"probs must be 1-D (binary, positive class) or (N, K) with K ≥ 2; got shape {p.shape}")
    return p


def as_label_array(labels: np.ndarray, n: int, k: int) -> np.ndarray:
    y = np.asarray(labels)
    if y.ndim != 1 or y.shape[0] != n:
        raise ValueError(f"labels must be 1-D of length {n}; got shape {y.shape}")
    if y.dtype.kind == "b":
        y = y.astype(np.int64)
    if y.dtype.kind == "f":
        if not np.all(np.isfinite(y)) or np.any(y != np.round(y)):
            raise ValueError("labels must be integers 0..K−1")
        y = y.astype(np.int64)
    if y.dtype.kind not in "iu":
        raise ValueError(f"labels must be integers 0..K−1; got dtype {y.dtype}")
    y = y.astype(np.int64, copy=False)
    if n and (y.min() < 0 or y.max() >= k):
        raise ValueError(f"labels must lie in 0..{k - 1}; found {y.min()}..{y.max()}")
    return y


def top_label(probs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Prediction ŷ = argmax_k p_k (first on ties) and confidence c = p_ŷ (float64).

    Parameters
    ----------
    probs : array_like of shape (n,) or (n, k)
        Probabilities.

    Returns
    -------
    pred : ndarray of int, shape (n,)
        The predicted class ŷ.
    confidence : ndarray of shape (n,)
        The confidence c.

    References
    ----------
    Guo, C., Pleiss, G., Sun, Y. & Weinberger, K. Q. (2017). On calibration of modern neural networks. ICML,
    PMLR 70, 1321–1330.
    """
    p = as_probabilities(probs)
    pred = p.argmax(axis=1)
    conf = p[np.arange(p.shape[0]), pred].astype(float)
    return pred, conf


def event_rows(labels: np.ndarray, probs: np.ndarray, target: str = "top_label") -> tuple[np.ndarray, np.ndarray]:
    """The binary event a calibration statistic of one probability per row looks at: ``(f, y)`` with ``y ∈ {0, 1}``.

    ``target="top_label"``: f_i = max_k p_ik (the confidence) and y_i = 1[argmax_k p_ik = label_i] (Guo et al. 2017);
    ``target="positive"`` (binary files, K = 2): f_i = p_i1 and y_i = 1[label_i = 1].  NaN probabilities or labels
    raise a ``ValueError`` naming the argument (the package's NaN policy).

    Parameters
    ----------
    labels : array_like of shape (n,)
        Labels 0..K−1.
    probs : array_like of shape (n,) or (n, k)
        Probabilities.
    target : {"top_label", "positive"}, default "top_label"
        Which event.

    Returns
    -------
    f : ndarray of shape (n,)
        The probability of the event.
    y : ndarray of shape (n,)
        The event, 0 or 1.

    References
    ----------
    Guo, C., Pleiss, G., Sun, Y. & Weinberger, K. Q. (2017). On calibration of modern neural networks. ICML,
    PMLR 70, 1321–1330.
    """
    p = as_probabilities(probs)
    reject_nan(p, "probs")
    y = np.asarray(labels)
    if y.dtype.kind == "f":
        reject_nan(y, "labels")
    y = y.astype(np.int64)
    if target == "top_label":
        pred, conf = top_label(p)
        return conf, (pred == y).astype(float)
    if target == "positive":
        if p.shape[1] != 2:
            raise ValueError("target='positive' needs binary predictions (K = 2)")
        return p[:, 1].astype(float), (y == 1).astype(float)
    raise ValueError(f"target must be 'top_label' or 'positive', not {target!r}")


def simulate_labels(probs: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Labels drawn from the predictions, y*_i ~ Categorical(p_i) (inverse-CDF on the row cumsum).

    The perfect-calibration reference: labels a calibrated model would see.

    Parameters
    ----------
    probs : array_like of shape (n,) or (n, k)
        Probabilities.
    rng : numpy.random.Generator
        Random numbers.

    Returns
    -------
    ndarray of int, shape (n,)
        The simulated labels.

    References
    ----------
    Bröcker, J. & Smith, L. A. (2007). Increasing the reliability of reliability diagrams. Weather and
    Forecasting 22(3), 651–661.
    """
    p = as_probabilities(probs)
    u = rng.random(p.shape[0]) * p.sum(axis=1, dtype=float)
    cum = np.cumsum(p, axis=1, dtype=float)
    return np.minimum((cum < u[:, None]).sum(axis=1), p.shape[1] - 1).astype(np.int64)


# =============================================================================================
# binning (through calib_core.base.binning)
# =============================================================================================


def _lerp(a: np.ndarray, b: np.ndarray, t: np.ndarray) -> np.ndarray:
    """numpy.quantile's linear interpolation, bit for bit (its two-sided lerp)."""
    diff = b - a
    return np.where(t >= 0.5, b - diff * (1.0 - t), a + diff * t)


def _resampled_quantile_edges(sorted_values: np.ndarray, w_sorted: np.ndarray, n_bins: int) -> np.ndarray:
    """``equal_mass_edges`` of the resample that repeats sorted row j w_j times, without materialising it.

    With m = Σw the resample's j-th order statistic is sorted_values[first index where cumsum(w) > j];
    the edges are numpy.quantile's linear interpolation at positions q·(m − 1), q = 0, 1/M, …, 1.
    """
    cw = np.cumsum(w_sorted)
    m = int(round(float(cw[-1]))) if cw.size else 0
    if m < 1:
        return np.full(n_bins + 1, np.nan)
    h = np.linspace(0.0, 1.0, n_bins + 1) * (m - 1)
    lo = np.floor(h)
    t = h - lo
    lo_i = lo.astype(np.int64)
    hi_i = np.minimum(lo_i + 1, m - 1)
    n = sorted_values.shape[0]
    a = sorted_values[np.minimum(np.searchsorted(cw, lo_i, side="right"), n - 1)]
    b = sorted_values[np.minimum(np.searchsorted(cw, hi_i, side="right"), n - 1)]
    return _lerp(a, b, t)


def confidence_bins(
    values: np.ndarray,
    n_bins: int = 15,
    strategy: Strategy = "uniform",
    closed: Closed = "right",
    weights: np.ndarray | None = None,
    order: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Bin index (0..M−1) and the M + 1 edges of probability-valued ``values``.

    ``"uniform"``: M equal-width bins on [0, 1] (``binning.uniform_bin_index``, the O(1)-per-row equivalent of
    ``bins_from_edges`` on the edges k/M exactly, ``binning.uniform_edges``); ``"quantile"``: edges at the empirical
    quantiles (``binning.equal_mass_edges``; for bootstrap count ``weights`` the quantiles of the resample, computed
    from the pre-sorted ``order``).

    Parameters
    ----------
    values : array_like of shape (n,)
        Probabilities in [0, 1].
    n_bins : int, default 15
        M.
    strategy : {"uniform", "quantile"}, default "uniform"
        Equal-width or equal-mass bins.
    closed : {"right", "left"}, default "right"
        As in ``binning.bins_from_edges``: (a, b] bins (Guo) or [a, b) (netcal).
    weights : ndarray of shape (n,) or None, default None
        Bootstrap count weights (``"quantile"`` only).
    order : ndarray of shape (n,) or None, default None
        An argsort of ``values``.

    Returns
    -------
    index : ndarray of int, shape (n,)
        The bin of every value.
    edges : ndarray of shape (n_bins + 1,)
        The bin edges.

    References
    ----------
    Guo, C., Pleiss, G., Sun, Y. & Weinberger, K. Q. (2017). On calibration of modern neural networks. ICML,
    PMLR 70, 1321–1330.

    Naeini, M. P., Cooper, G. F. & Hauskrecht, M. (2015). Obtaining well calibrated probabilities using
    Bayesian binning. AAAI, 2901–2907.

    Nixon, J., Dusenberry, M. W., Zhang, L., Jerfel, G. & Tran, D. (2019). Measuring calibration in deep
    learning. CVPR Workshops, 38–41.
    """
    if n_bins < 1:
        raise ValueError("n_bins must be at least 1")
    values = np.asarray(values, dtype=float)
    if strategy == "uniform":
        return uniform_bin_index(values, n_bins, 0.0, 1.0, closed), uniform_edges(0.0, 1.0, n_bins)
    if strategy != "quantile":
        raise ValueError(f"strategy must be 'uniform' or 'quantile', not {strategy!r}")
    if values.size == 0:
        return np.zeros(0, dtype=np.int64), np.full(n_bins + 1, np.nan)
    if weights is None:
        edges = equal_mass_edges(values, n_bins)
    else:
        if order is None:
            order = np.argsort(values, kind="stable")
        edges = _resampled_quantile_edges(values[order], np.asarray(weights, dtype=float)[order], n_bins)
    return bins_from_edges(values, edges, closed), edges


def bin_calibration_errors(count: np.ndarray, s_conf: np.ndarray, s_hit: np.ndarray) -> tuple[float, float]:
    """(ECE, MCE) from per-bin sums: ECE = Σ_m |Σ_{B_m}(hit − conf)| / N, MCE = max_{|B_m|>0} |acc − conf|."""
    total = count.sum()
    if total <= 0:
        return float("nan"), float("nan")
    diff = np.abs(s_hit - s_conf)
    nonempty = count > 0
    ece_v = float(diff.sum() / total)
    mce_v = float(np.max(diff[nonempty] / count[nonempty])) if nonempty.any() else float("nan")
    return ece_v, mce_v
