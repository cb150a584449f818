"""The base of the classification calibrators: the estimator interface and the reading of its input.

Every classification calibrator (:mod:`calib_core.calibrators.classification`) is a
:class:`ClassificationCalibrator`: ``fit(X, labels)`` decides once whether ``X`` holds logits or probabilities
(``input="auto" | "logits" | "probs"``, stored in ``input_kind_``), ``predict_proba(X)`` checks the number of
classes and reads ``X`` the same way.  The helpers turn either kind into logits (:func:`logits_from`) or
probabilities (:func:`probs_from`), check the labels, and renormalise one-vs-rest outputs.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from scipy import special
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from ..base.classification import softmax

__all__ = ["InputKind", "ClassificationCalibrator"]


InputKind = Literal["auto", "logits", "probs"]

_ROW_SUM_TOL = 1e-3


def as_float_array(X: np.ndarray) -> np.ndarray:
    """X as a finite float array, 1-D (binary) or 2-D (N, K ≥ 2); an (N, 1) array becomes 1-D."""
    a = np.asarray(X)
    if a.dtype.kind not in "fiu":
        raise ValueError(f"X must be numeric; got dtype {a.dtype}")
    a = a.astype(float, copy=False)
    if a.ndim not in (1, 2):
        raise ValueError(f"X must be 1-D (binary) or 2-D (N, K); got shape {a.shape}")
    if a.ndim == 2 and a.shape[1] < 2:
        if a.shape[1] == 1:
            a = a[:, 0]
        else:
            raise ValueError("X has no columns")
    if not np.all(np.isfinite(a)):
        raise ValueError("X contains NaN or infinite values")
    return a


def detect_kind(X: np.ndarray, requested: str) -> str:
    """``"logits"`` or ``"probs"``: the requested kind, checked, or the one ``"auto"`` reads from X."""
    if requested in ("logits", "probs"):
        if requested == "probs" and (X.min() < 0 or X.max() > 1):
            raise ValueError("input='probs' but X has values outside [0, 1]")
        return requested
    if requested != "auto":
        raise ValueError(f"input must be 'auto', 'logits' or 'probs', not {requested!r}")
    in_unit = X.size > 0 and X.min() >= 0.0 and X.max() <= 1.0
    if X.ndim == 1:
        return "probs" if in_unit else "logits"
    if not in_unit:
        return "logits"
    if np.all(np.abs(np.einsum("ij->i", X) - 1.0) <= _ROW_SUM_TOL):
        return "probs"
    raise ValueError(
        "input='auto' cannot tell what X is: every value is in [0, 1] but rows do not sum to 1. "
        "Pass input='probs' (e.g. independent per-class scores) or input='logits'."
    )


def check_labels(y: np.ndarray, n: int, k: int) -> np.ndarray:
    """The labels as int64 of shape (n,) in 0..k − 1."""
    y = np.asarray(y)
    if y.ndim != 1 or y.shape[0] != n:
        raise ValueError(f"labels must be 1-D of length {n}; got shape {y.shape}")
    if y.dtype.kind == "b":
        y = y.astype(np.int64)
    if y.dtype.kind == "f" and np.all(y == np.round(y)):
        y = y.astype(np.int64)
    if y.dtype.kind not in "iu":
        raise ValueError("labels must be integers 0..K−1")
    y = y.astype(np.int64, copy=False)
    if n and (y.min() < 0 or y.max() >= k):
        raise ValueError(f"labels must lie in 0..{k - 1}; found {y.min()}..{y.max()}")
    return y


def logits_from(X: np.ndarray, kind: str, eps: float) -> np.ndarray:
    """(N, K) logits: X itself, or log p (clipped at eps); 1-D binary → [0, z] with z the positive-class logit."""
    if X.ndim == 1:
        if kind == "logits":
            z = X
        else:
            p = np.clip(X, eps, 1.0 - eps)
            z = np.log(p) - np.log1p(-p)
        return np.column_stack([np.zeros_like(z), z])
    if kind == "logits":
        return X
    return np.log(np.maximum(X, eps))


def probs_from(X: np.ndarray, kind: str) -> np.ndarray:
    """(N, K) probabilities: X itself, softmax(X) or, for 1-D input, [1 − q, q] with q = p or sigmoid(z)."""
    if X.ndim == 1:
        q = X if kind == "probs" else special.expit(X)
        return np.column_stack([1.0 - q, q])
    if kind == "probs":
        return X
    return softmax(X, axis=1)


def nll_and_softmax(z: np.ndarray, y: np.ndarray) -> tuple[float, np.ndarray]:
    """Mean −log softmax(z)_y (log-sum-exp with the max shift) and softmax(z)."""
    m = z.max(axis=1, keepdims=True)
    e = np.exp(z - m)
    s = e.sum(axis=1)
    lse = m[:, 0] + np.log(s)
    nll = float(np.mean(lse - z[np.arange(z.shape[0]), y]))
    return nll, e / s[:, None]


def renormalise(q: np.ndarray) -> np.ndarray:
    """Rows divided by their sums; an all-zero row becomes uniform 1/K (never NaN)."""
    s = q.sum(axis=1, keepdims=True)
    out = np.full_like(q, 1.0 / q.shape[1])
    np.divide(q, s, out=out, where=s > 0)
    return out


class ClassificationCalibrator(BaseEstimator):
    """Base class of the classification calibrators: ``fit(X, labels)``, ``predict_proba(X)``, ``predict(X)``.

    Shared input handling: the ``input`` kind (logits or probabilities) is decided once in ``fit`` and stored in
    ``input_kind_``; ``predict_proba`` checks the number of classes K and never re-guesses.  X is (N, K) or, for a
    binary problem, 1-D (the positive class's logit or probability).  Post-hoc calibration maps are fitted on a
    held-out calibration set (Guo et al. 2017, §4).

    Attributes
    ----------
    input_kind_ : {"logits", "probs"}
        What X was read as.
    n_classes_ : int
        K.
    binary_1d_ : bool
        X was 1-D (binary).

    References
    ----------
    .. [1] C. Guo, G. Pleiss, Y. Sun and K. Q. Weinberger, "On calibration of modern neural networks", Proc.
           34th International Conference on Machine Learning (ICML), PMLR 70, 1321–1330, 2017.
    """

    def _fit_input(self, X: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        A = as_float_array(X)
        kind = detect_kind(A, self.input)
        k = 2 if A.ndim == 1 else A.shape[1]
        self.input_kind_ = kind
        self.n_classes_ = k
        self.binary_1d_ = A.ndim == 1
        return A, check_labels(y, A.shape[0], k)

    def _predict_input(self, X: np.ndarray) -> np.ndarray:
        check_is_fitted(self, "input_kind_")
        A = as_float_array(X)
        k = 2 if A.ndim == 1 else A.shape[1]
        if k != self.n_classes_:
            raise ValueError(f"X has {k} classes but the calibrator was fitted on {self.n_classes_}")
        if self.input_kind_ == "probs" and (A.min() < 0 or A.max() > 1):
            raise ValueError("the calibrator was fitted on probabilities but X has values outside [0, 1]")
        return A

    def predict(self, X: np.ndarray) -> np.ndarray:
        """Class with the highest calibrated probability."""
        return self.predict_proba(X).argmax(axis=1)
