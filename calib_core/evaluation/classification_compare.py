"""The per-row scores of classification forecasts that ``cc.compare_models`` compares (lower is better).

* ``brier`` — the Brier score Σ_k (p_k − 1[y = k])² (Brier 1950), the default;
* ``log`` — the log loss −log p_y (Good 1952).

Both come from :class:`calib_core.metrics.classification_rows.ClassificationRows` (its ``brier_rows`` and
``nll_rows``), so they equal the diagnosis's values row by row.
"""

from __future__ import annotations

import numpy as np

from ..base.predictions import InputError, PredictionSet
from ..metrics.classification_rows import ClassificationRows
from .comparison_units import UnitScores

__all__ = ["CLASSIFICATION_SCORES", "classification_unit_scores"]

#: Score key → its name in sentences
CLASSIFICATION_SCORES = {"brier": "Brier score", "log": "log loss"}


def classification_unit_scores(pset: PredictionSet, score: str | None = None) -> UnitScores:
    """The score of every row of a classification set with probability vectors.

    Brier score Σ_k (p_k − 1[y = k])²; log loss −log p_y (p_y clipped to [ε, 1 − ε], or log-sum-exp of the logits).

    Parameters
    ----------
    pset : PredictionSet
        Classification predictions with every class's probability.
    score : {"brier", "log"} or None
        The score (None: ``brier``).

    Returns
    -------
    UnitScores
        Per-row values, key, label and a note.

    Raises
    ------
    InputError
        Top-label confidences only, or an unknown score.

    References
    ----------
    .. [1] Brier, G. W. (1950). Verification of forecasts expressed in terms of probability. *Monthly Weather
       Review* 78(1), 1–3.
    .. [2] Gneiting, T. & Raftery, A. E. (2007). Strictly proper scoring rules, prediction, and estimation.
       *Journal of the American Statistical Association* 102(477), 359–378.

    Examples
    --------
    >>> ps = PredictionSet("classification", labels=np.array([0, 1]), probs=np.array([[0.8, 0.2], [0.5, 0.5]]))
    >>> classification_unit_scores(ps).values.round(4).tolist()
    [0.08, 0.5]
    """
    key = (score or "brier").strip().lower()
    if key not in CLASSIFICATION_SCORES:
        raise InputError(f"unknown score {score!r} for classification forecasts (scores: "
                         f"{', '.join(CLASSIFICATION_SCORES)})", source=pset.source,
                         hint="pass score='brier' or 'log'", app_hint="pick one of the listed scores")
    if pset.probs is None and pset.logits is None:
        raise InputError("comparing models needs every class's probability; the data gives top-label confidences "
                         "only", source=pset.source, columns=["confidence"],
                         hint="load a file with one probability column per class",
                         app_hint="load a file with one probability column per class")
    rows = ClassificationRows(pset.labels, pset.probs, pset.logits)
    values = rows.brier_rows if key == "brier" else rows.nll_rows
    return UnitScores(np.asarray(values, dtype=float), key, CLASSIFICATION_SCORES[key], True, "")
