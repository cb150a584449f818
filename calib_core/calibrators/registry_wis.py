"""The metric registry's entries of the weighted interval score (Bracher, Ray, Gneiting & Reich 2021): the WIS and its
three parts, as argument tuples of :func:`~calib_core.calibrators.registry_metrics.make_metric` (which builds them
into :data:`~calib_core.calibrators.registry_metrics.METRICS`; kept here so that module stays one concept long).
"""

from __future__ import annotations

from typing import Any

from ..base.report import DESCRIPTIVE, PROPER_SCORE
from ..metrics.regression_wis import wis_score

__all__ = ["WIS_ENTRIES"]

_BRACHER = "Bracher, Ray, Gneiting & Reich 2021, Evaluating epidemic forecasts in an interval format (PLOS Comp. Biol.)"
_LEVELS = ("quantile sets: the stated central pairs (τ, 1 − τ) and the stated median (no median: 1/K weights); other "
           "forecasts: the 23 forecast-hub levels 0.01 … 0.99 of their own quantile function")

#: (key, label, kind, direction, formula, paper, reading, fn, fixed options) of each entry
WIS_ENTRIES: tuple[tuple[Any, ...], ...] = (
    ("wis", "WIS (weighted interval score)", PROPER_SCORE, "lower",
     "WIS = 1/(K + ½) · (½|y − m| + Σ_k (α_k/2) IS_{α_k}), IS_α = (u − l) + (2/α)(l − y)₊ + (2/α)(y − u)₊ "
     "= 1/(K + ½) Σ over the 2K + 1 quantiles of the pinball loss ρ_τ(y − q_τ); " + _LEVELS, _BRACHER,
     "Lower is better; the forecast hubs' score (≈ CRPS for many levels). Dispersion + over- + underprediction.",
     wis_score, {"part": "wis"}),
    ("wis_dispersion", "WIS dispersion", DESCRIPTIVE, None,
     "Σ_k (α_k/2)(u_k − l_k) / (K + ½)", _BRACHER,
     "The part of the WIS that is the width of the intervals: what the forecaster pays for uncertainty.",
     wis_score, {"part": "wis_dispersion"}),
    ("wis_overprediction", "WIS overprediction", DESCRIPTIVE, None,
     "[½(m − y)₊ + Σ_k (l_k − y)₊] / (K + ½)", _BRACHER,
     "The part of the WIS paid for targets below the median and the lower ends: forecasts too high.",
     wis_score, {"part": "wis_overprediction"}),
    ("wis_underprediction", "WIS underprediction", DESCRIPTIVE, None,
     "[½(y − m)₊ + Σ_k (y − u_k)₊] / (K + ½)", _BRACHER,
     "The part of the WIS paid for targets above the median and the upper ends: forecasts too low.",
     wis_score, {"part": "wis_underprediction"}),
)
