"""Figures of a calibrator comparison (one colour per calibrator on every chart)."""

from __future__ import annotations

from typing import Any

import pandas as pd

from .classification import confidence_histogram_figure, reliability_figure
from .regression import (
    calibration_curve_figure,
    intervals_figure,
    levi_figure,
    model_colors,
    pit_histogram_figure,
    qq_figure,
    z_histogram_figure,
)

__all__ = ["comparison_figures"]


def _single_band(fig, names: list[str]) -> None:
    """The 95% consistency band depends on N only (the same test rows for every calibrator): draw it once, grey."""
    first = True
    for tr in fig.data:
        meta = tr.meta or {}
        if meta.get("role") in ("band_low", "band_high"):
            if meta.get("name") != names[0]:
                tr.visible = False
            elif meta.get("role") == "band_high":
                tr.fillcolor = "rgba(85,85,85,0.15)"
                tr.name = "95% band (perfect calibration)"
                tr.showlegend = first
                first = False


def comparison_figures(result: Any, model: str) -> dict[str, Any]:
    """Before/after figures of an evaluation for one model: the diagram tables of the first trial's test rows
    (``cc.evaluate(..., diagrams=True)``), one colour per calibrator."""
    task = result.task
    tables = (result.diagrams or {}).get(model, {})
    names = [n for n in result.calibrators if n in tables]
    colors = model_colors(result.calibrators)
    if not names:
        return {}

    def pick(key: str) -> dict[str, pd.DataFrame]:
        return {n: tables[n][key] for n in names}

    if task == "regression":
        kul = calibration_curve_figure(pick("calibration_curve"), colors=colors,
                                             title="Quantile calibration (test rows)")
        _single_band(kul, names)
        return {
            "Quantile calibration (Kuleshov)": kul,
            "RMSE vs RMV (Levi)": levi_figure(pick("levi_bins"), colors=colors,
                                                   title="RMSE vs RMV per σ-bin (test rows)"),
            "PIT histogram": pit_histogram_figure(pick("pit_histogram"), colors=colors,
                                                        title="PIT histogram (test rows)"),
            "Central intervals": intervals_figure(pick("intervals"), colors=colors,
                                                        title="Central intervals (test rows)"),
            "Standardised residuals": z_histogram_figure(pick("z_histogram"), colors=colors,
                                                               title="Standardised residuals (test rows)"),
            "Q-Q plot": qq_figure(pick("qq"), colors=colors, title="Normal Q-Q plot of z (test rows)"),
        }
    rel = pick("reliability")
    hist = confidence_histogram_figure(rel, colors=colors, title="Confidence histogram (test rows)")
    for tr in hist.data:  # one legend entry per calibrator: its mean-confidence / accuracy lines stay on hover
        if (tr.meta or {}).get("role") in ("conf_line", "acc_line"):
            tr.showlegend = False
    return {
        "Reliability diagram": reliability_figure(rel, colors=colors, title="Reliability diagram (test rows)"),
        "Confidence histogram": hist,
    }
