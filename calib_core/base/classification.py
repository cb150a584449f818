"""Shared numerics: the one ``softmax`` / ``log_softmax`` of the package.

Both work along ``axis`` (default: the last one, the classes of an (N, K) array of logits), in float64,
with the max shift so that they never overflow.  Every module that needs a softmax imports it from here.
"""

from __future__ import annotations

import numpy as np

__all__ = ["log_softmax", "softmax"]


def softmax(logits: np.ndarray, axis: int = -1) -> np.ndarray:
    """Numerically stable softmax σ(z)_k = exp(z_k − max z) / Σ_j exp(z_j − max z), in float64.

    Parameters
    ----------
    logits : array_like
        Logits z.
    axis : int, default -1
        The class axis.

    Returns
    -------
    ndarray
        Probabilities, summing to 1 along ``axis``.

    References
    ----------
    Bridle, J. S. (1990). Probabilistic interpretation of feedforward classification network outputs, with
    relationships to statistical pattern recognition. Neurocomputing, NATO ASI Series F 68, 227–236.
    """
    z = np.asarray(logits, dtype=float)
    e = np.exp(z - z.max(axis=axis, keepdims=True))
    e /= e.sum(axis=axis, keepdims=True)
    return e


def log_softmax(logits: np.ndarray, axis: int = -1) -> np.ndarray:
    """log σ(z)_k = z_k − logsumexp(z) computed with the max shift (never overflows), in float64.

    Parameters
    ----------
    logits : array_like
        Logits z.
    axis : int, default -1
        The class axis.

    Returns
    -------
    ndarray
        Log-probabilities.

    References
    ----------
    Bridle, J. S. (1990). Probabilistic interpretation of feedforward classification network outputs, with
    relationships to statistical pattern recognition. Neurocomputing, NATO ASI Series F 68, 227–236.
    """
    z = np.asarray(logits, dtype=float)
    d = z - z.max(axis=axis, keepdims=True)
    return d - np.log(np.exp(d).sum(axis=axis, keepdims=True))
