"""The per-row scores of regression forecasts that ``cc.compare_models`` compares (lower is better).

* ``wis`` — the weighted interval score of quantile forecasts, WIS = 1/(K + ½) · (½|y − m| + Σ_k (α_k/2) IS_{α_k})
  (Bracher et al. 2021; :func:`calib_core.metrics.regression_wis.wis_parts`): the default for quantile sets;
* ``crps`` — CRPS = ∫ (F(x) − 1[y ≤ x])² dx (closed form for Gaussians, exact for ensembles and quantile sets;
  ``dist.crps``): the default for Gaussian and ensemble forecasts;
* ``log`` — the logarithmic score −log f(y) (Gaussian and ensemble forecasts; ``dist.logpdf``).
"""

from __future__ import annotations

import numpy as np

from ..base.predictions import InputError, PredictionSet
from ..base.regression import QuantileSet
from ..metrics.regression_wis import wis_parts
from .comparison_units import UnitScores

__all__ = ["REGRESSION_SCORES", "regression_unit_scores"]

#: Score key → its name in sentences
REGRESSION_SCORES = {"wis": "WIS", "crps": "CRPS", "log": "log score"}


def regression_unit_scores(pset: PredictionSet, score: str | None = None) -> UnitScores:
    """The score of every row of a regression set with predictive distributions.

    WIS = 1/(K + ½) · Σ_{2K+1 quantiles} ρ_τ(y − q_τ) (quantile sets: the stated levels; other forecasts: the 23 hub
    levels of their quantile function); CRPS(F, y) = ∫ (F(x) − 1[y ≤ x])² dx; log score −log f(y).  Default:
    ``wis`` for quantile sets, ``crps`` otherwise.

    Parameters
    ----------
    pset : PredictionSet
        Regression predictions with a distribution (``pset.dist``).
    score : {"wis", "crps", "log"} or None
        The score (None: the default of the forecast type).

    Returns
    -------
    UnitScores
        Per-row values, key, label, whether they are never negative, and a note.

    Raises
    ------
    InputError
        Point predictions only; an unknown score; the log score of quantile forecasts (no density stated).

    References
    ----------
    .. [1] Bracher, J., Ray, E. L., Gneiting, T. & Reich, N. G. (2021). Evaluating epidemic forecasts in an interval
       format. *PLOS Computational Biology* 17(2), e1008618.
    .. [2] Gneiting, T. & Raftery, A. E. (2007). Strictly proper scoring rules, prediction, and estimation.
       *Journal of the American Statistical Association* 102(477), 359–378.

    Examples
    --------
    >>> from calib_core.base.regression import Gaussian
    >>> ps = PredictionSet("regression", y=np.array([0.0]), dist=Gaussian(np.array([0.0]), np.array([1.0])))
    >>> s = regression_unit_scores(ps)
    >>> s.key, round(float(s.values[0]), 4)            # CRPS of N(0, 1) at 0: (√2 − 1)/√π
    ('crps', 0.2337)
    """
    if pset.dist is None:
        raise InputError("comparing models needs predictive distributions; the data has point predictions only",
                         source=pset.source, hint="load predictions with a standard deviation, quantiles or members",
                         app_hint="map a standard deviation, quantile or member columns on the Data page")
    quantiles = isinstance(pset.dist, QuantileSet)
    key = (score or ("wis" if quantiles else "crps")).strip().lower()
    if key not in REGRESSION_SCORES:
        raise InputError(f"unknown score {score!r} for regression forecasts (scores: {', '.join(REGRESSION_SCORES)})",
                         source=pset.source, hint="pass score='wis', 'crps' or 'log'",
                         app_hint="pick one of the listed scores")
    y = np.asarray(pset.y, dtype=float)
    if key == "wis":
        parts = wis_parts(y, pset.dist)
        return UnitScores(parts.wis, key, "WIS", True, parts.note)
    if key == "crps":
        return UnitScores(np.asarray(pset.dist.crps(y), dtype=float), key, "CRPS", True, "")
    if quantiles:
        raise InputError("the log score needs a predictive density; quantile forecasts state none",
                         source=pset.source, hint="pass score='wis' or 'crps'", app_hint="pick WIS or CRPS")
    return UnitScores(-np.asarray(pset.dist.logpdf(y), dtype=float), key, "log score", False, "")
