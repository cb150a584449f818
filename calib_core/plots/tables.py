"""Display tables derived from a Report's long metric table (pure pandas; no Streamlit).

The dashboard shows each metric with its bootstrap CI and the value a perfectly calibrated
forecaster with the same predicted distributions would get (Report columns, see
``calib_core.report``).  :func:`metric_display_table` adds a readable label and a verdict column
that says whether the observed value lies outside the perfect-calibration range (the central
``level`` range of the simulated values), i.e. whether the deviation is larger than noise at this N.
Labels come from the metric registry (:mod:`calib_core.registry`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..registry import metric_label
from ..report import ALL

__all__ = ["metric_label", "metric_display_table"]


def metric_display_table(metrics: pd.DataFrame, model: str | None = None, group: str | None = ALL) -> pd.DataFrame:
    """Metric rows of one model (``None``: all models) and group, ready to display.

    Columns: ``model, metric, label, value, ci_low, ci_high, perfect, perfect_low, perfect_high,
    verdict``.  ``verdict`` is ``"beyond noise"`` when the value lies outside
    [perfect_low, perfect_high] (the range a perfectly calibrated forecaster with the same
    predictions reaches in the simulation), ``"within noise"`` when inside, and ``""`` when that range
    is degenerate (metrics that depend on the predictions only, e.g. sharpness) or missing.
    """
    m = metrics
    if model is not None:
        m = m[m["model"] == model]
    if group is not None:
        m = m[m["group"] == group]
    out = m.drop(columns=["group"]).reset_index(drop=True).copy()
    out.insert(2, "label", [metric_label(k) for k in out["metric"]])
    value = out["value"].to_numpy(dtype=float)
    lo = out["perfect_low"].to_numpy(dtype=float)
    hi = out["perfect_high"].to_numpy(dtype=float)
    informative = np.isfinite(lo) & np.isfinite(hi) & (hi > lo)
    outside = (value < lo) | (value > hi)
    out["verdict"] = np.where(informative, np.where(outside, "beyond noise", "within noise"), "")
    return out
