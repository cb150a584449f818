"""Shared pieces of the classification labs: calibrators judged side by side on the same held-out rows.

A classification lab recalibrates one classifier several ways and compares the probabilities on its test rows.
:func:`score_methods` computes, per method, what such a lab shows: accuracy and mean confidence (their gap is the
over-confidence of Guo et al. 2017, §2), the expected calibration error ECE = Σ_m |B_m|/n · |acc(B_m) − conf(B_m)|
at M equal-width bins and its maximum MCE, the proper scores NLL and Brier, how many predicted classes changed
against a reference method, the ECE as a function of M and the reliability tables behind the diagrams — from the
core's own metrics (:mod:`calib_core.metrics.classification`) and diagram tables
(:mod:`calib_core.diagrams.classification`), so the labs and the diagnosis pages cannot disagree.

References
----------
Guo, C., Pleiss, G., Sun, Y. & Weinberger, K. Q. (2017). On calibration of modern neural networks. ICML.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal

import numpy as np
import pandas as pd

from ..diagrams import classification as cd
from ..metrics import classification as cm

__all__ = ["score_methods"]


def score_methods(
    y: np.ndarray,
    probs: Mapping[str, np.ndarray],
    *,
    n_bins: int = 15,
    target: Literal["top_label", "positive"] = "top_label",
    bin_counts: Sequence[int] = (),
    reference: str | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, pd.DataFrame]]:
    """Metrics, ECE against the number of bins and reliability tables of several methods' probabilities.

    Parameters
    ----------
    y : ndarray of shape (n,)
        Class labels 0 … K−1 of the rows every method is scored on.
    probs : mapping of str to ndarray of shape (n, K)
        Each method's predicted probabilities, in the order the tables list them.
    n_bins : int, default 15
        M, the number of equal-width confidence bins of the ECE, MCE and reliability tables.
    target : {"top_label", "positive"}, default "top_label"
        Reliability semantics: top-label confidence against "prediction correct" (Guo et al.), or P(y = 1) against
        the frequency of y = 1 (binary only).  ``ece_top_label`` is always top-label; binary sets also get
        ``ece_positive``.
    bin_counts : sequence of int, default ()
        The values of M of the ECE-against-M curve.
    reference : str, optional
        The method whose predicted classes the others are compared with (default: the first).

    Returns
    -------
    metrics : DataFrame
        One row per method: ``method, accuracy, mean_confidence, ece, ece_top_label, [ece_positive,] mce, nll,
        brier, changed_predictions``.
    ece_by_bins : DataFrame
        ``n_bins`` and one ECE column per method.
    reliability : dict of str to DataFrame
        The reliability table of each method at ``n_bins`` bins.

    References
    ----------
    .. [1] Guo, C., Pleiss, G., Sun, Y., & Weinberger, K. Q. (2017). On calibration of modern neural networks.
       Proceedings of the 34th International Conference on Machine Learning (ICML), PMLR 70, 1321–1330.
    .. [2] Naeini, M. P., Cooper, G. F., & Hauskrecht, M. (2015). Obtaining well calibrated probabilities using
       Bayesian binning. Proceedings of the 29th AAAI Conference on Artificial Intelligence, 2901–2907.

    Examples
    --------
    >>> import numpy as np
    >>> y = np.array([0, 1, 1, 0])
    >>> p = np.array([[0.9, 0.1], [0.2, 0.8], [0.4, 0.6], [0.6, 0.4]])
    >>> metrics, _, _ = score_methods(y, {"model": p}, n_bins=2)
    >>> float(metrics.loc[0, "accuracy"])
    1.0
    """
    names = list(probs)
    pred0 = probs[reference if reference is not None else names[0]].argmax(axis=1)
    binary = next(iter(probs.values())).shape[1] == 2
    rows, by_bins, rel = [], {"n_bins": list(bin_counts)}, {}
    for name in names:  # loops over methods, never rows
        p = probs[name]
        row = {
            "method": name,
            "accuracy": cm.accuracy(y, p),
            "mean_confidence": float(np.mean(p.max(axis=1))),
            "ece": cm.ece(y, p, n_bins=n_bins, target=target),
            "ece_top_label": cm.ece(y, p, n_bins=n_bins),
        }
        if binary:
            row["ece_positive"] = cm.ece(y, p, n_bins=n_bins, target="positive")
        row |= {
            "mce": cm.mce(y, p, n_bins=n_bins, target=target),
            "nll": cm.nll(y, p),
            "brier": cm.brier(y, p),
            "changed_predictions": int(np.count_nonzero(p.argmax(axis=1) != pred0)),
        }
        rows.append(row)
        by_bins[name] = [cm.ece(y, p, n_bins=m, target=target) for m in bin_counts]  # one pass per M, not per row
        rel[name] = cd.reliability_table(y, p, n_bins=n_bins, target=target)
    return pd.DataFrame(rows), pd.DataFrame(by_bins), rel
