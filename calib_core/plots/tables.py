"""Display tables derived from a Report's long metric table (pure pandas; no Streamlit).

The dashboard shows each metric with its bootstrap CI and the value a perfectly calibrated
forecaster with the same predicted distributions would get (Report columns, see
``calib_core.report``).  :func:`metric_display_table` adds a readable label and a verdict column
that says whether the observed value lies outside the perfect-calibration range (the central
``level`` range of the simulated values), i.e. whether the deviation is larger than noise at this N.
Labels come from the metric registry (:mod:`calib_core.registry`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ..registry import direction_text, metric, metric_label
from ..report import ALL

__all__ = ["metric_label", "metric_display_table", "comparison_table"]


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


def _direction(key: str, task: str | None = None) -> str | float | None:
    """The registry's direction of a metric key (None for keys outside the registry, e.g. custom metrics)."""
    try:
        return metric(key, task).direction
    except KeyError:
        return None


def comparison_table(result: Any, order: list[str] | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Display table of an evaluation (``cc.evaluate``'s result): metrics as rows, one column per calibrator
    ("model · calibrator" with several models) holding "mean ± std", and a "better" column (the registry's
    direction); plus the boolean frame of the best cell per metric (for highlighting).

    ``order``: calibrator column order (default: the result's).  The best cell of a metric is the lowest, the
    highest or the closest to the target value as the registry says; no cell is marked for metrics without a
    direction, or when most columns tie (e.g. RMSE under σ-only maps).
    """
    order = list(result.calibrators) if order is None else list(order)
    task = getattr(result, "task", None)
    s = result.summary
    models = list(pd.unique(s["model"]))
    multi = len(models) > 1
    metrics = list(pd.unique(s["metric"]))
    text = result.formatted(digits=3)  # index (model, calibrator), columns metrics
    mean = result.wide("mean")
    cols = [(m, c) for m in models for c in order if (m, c) in text.index]
    names = [f"{m} · {c}" if multi else c for m, c in cols]
    body = pd.DataFrame({name: [text.loc[mc, k] for k in metrics] for name, mc in zip(names, cols)})
    best = pd.DataFrame(False, index=body.index, columns=names)
    for i, k in enumerate(metrics):
        rule = _direction(k, task)
        for m in models:
            sel = [(j, name) for j, ((mm, _), name) in enumerate(zip(cols, names)) if mm == m]
            vals = np.array([mean.loc[cols[j], k] if k in mean.columns else np.nan for j, _ in sel], dtype=float)
            if not sel or not np.isfinite(vals).any() or rule is None:
                continue
            score = vals if rule == "lower" else (-vals if rule == "higher" else np.abs(vals - float(rule)))
            score = np.where(np.isfinite(score), score, np.inf)
            winners = np.flatnonzero(score == score.min())
            if winners.size > max(1, len(sel) // 2):  # a tie of most columns (e.g. RMSE under σ-only maps)
                continue
            for w in winners:
                best.loc[i, sel[w][1]] = True
    body.insert(0, "better", [direction_text(_direction(k, task)) for k in metrics])
    body.insert(0, "metric", [metric_label(k, task) for k in metrics])
    best.insert(0, "better", False)
    best.insert(0, "metric", False)
    return body, best
