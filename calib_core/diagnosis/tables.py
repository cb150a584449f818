"""Display tables derived from a Report's long metric table (pure pandas; no Streamlit).

The dashboard shows each metric with its interval, the value a perfectly calibrated forecaster with the same
predicted distributions would get, and — for calibration statistics — the p-value of the test of "the targets are
draws from the predicted distributions" with its multiplicity flag (Report columns, see ``calib_core.base.report``).
:func:`metric_display_table` adds a readable label (from the metric registry, :mod:`calib_core.calibrators.registry`), a
formatted p-value and a ``verdict`` column that says what the test found:

* ``"rejected (Holm)"`` — a statistic of the primary family whose Holm-adjusted p-value is at most α (this is what
  makes the headline verdict "miscalibrated");
* ``"flagged (BH)"`` — a secondary statistic flagged by the Benjamini–Hochberg procedure at false-discovery rate α;
* ``"not significant"`` — tested, not rejected; ``""`` — no test (proper scores, descriptive numbers).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..base.report import ALL
from ..base.significance import format_p
from ..calibrators.registry import metric_label

__all__ = [
    "metric_label",
    "statistic_label",
    "metric_display_table",
    "format_p_value",
    "p_value_cell",
    "VERDICT_TEXT",
]

#: Statistics of the inference layer that are not registry metrics (members of the classification primary family).
_EXTRA_LABELS = {
    "top_bin_gap": "top-bin gap (confidence − accuracy)",
    "confidence_gap": "mean confidence − accuracy",
}

VERDICT_TEXT = {"primary": "rejected (Holm)", "secondary": "flagged (BH)"}


def statistic_label(key: str) -> str:
    """Readable label of a metric-table key (registry label, or the inference layer's own statistics).

    Parameters
    ----------
    key : str
        A metric key.

    Returns
    -------
    str
        Its label.
    """
    return _EXTRA_LABELS.get(key) or metric_label(key)


def format_p_value(p: float, se: float = 0.0) -> str:
    """"0.031 ± 0.004" (Monte-Carlo s.e. when there is one), "< 1e-6", "–" without a test.

    Parameters
    ----------
    p : float
        The p-value (NaN or None: no test).
    se : float, default 0
        Its Monte-Carlo standard error.

    Returns
    -------
    str
        The formatted p-value.
    """
    if p is None or not np.isfinite(p):
        return "–"
    text = format_p(float(p)).replace("p = ", "").replace("p ", "")
    if se is not None and np.isfinite(se) and se > 0:
        text += f" ± {se:.1g}"
    return text


def p_value_cell(p: float, se: float = 0.0, alpha: float = 0.05) -> str:
    """Short p-value for a table cell: like :func:`format_p_value`, with the Monte-Carlo s.e. only where it
    matters — where p ± 2 s.e. reaches across ``alpha`` (e.g. "5.0e-4" at the Monte-Carlo floor, "0.049 ± 0.006").

    Parameters
    ----------
    p : float
        The p-value.
    se : float, default 0
        Its Monte-Carlo standard error.
    alpha : float, default 0.05
        The level the reader compares it with.

    Returns
    -------
    str
        The cell text.
    """
    if p is None or se is None or not (np.isfinite(p) and np.isfinite(se)) or abs(float(p) - alpha) > 2 * float(se):
        se = 0.0
    return format_p_value(p, se)


def metric_display_table(metrics: pd.DataFrame, model: str | None = None, group: str | None = ALL) -> pd.DataFrame:
    """Metric rows of one model (``None``: all models) and group, ready to display.

    Columns: the Report's (minus ``group``) plus ``label``, ``p_text`` (formatted p-value with its Monte-Carlo
    s.e.) and ``verdict`` (see the module docstring).

    Parameters
    ----------
    metrics : DataFrame
        ``Report.metrics``.
    model : str, optional
        One model (None: all).
    group : str or None, default ALL
        One group (None: all).

    Returns
    -------
    DataFrame
        The display table.
    """
    m = metrics
    if model is not None:
        m = m[m["model"] == model]
    if group is not None:
        m = m[m["group"] == group]
    out = m.drop(columns=["group"]).reset_index(drop=True).copy()
    out.insert(2, "label", [statistic_label(k) for k in out["metric"]])
    p = out["p_value"].to_numpy(dtype=float)
    se = out["p_mc_se"].to_numpy(dtype=float)
    out["p_text"] = [format_p_value(a, b) for a, b in zip(p, se)]
    family = out["family"].astype(str).to_numpy()
    flag = out["flag"].to_numpy(dtype=bool)
    out["verdict"] = [
        (VERDICT_TEXT.get(f, "flagged") if hit else "not significant") if np.isfinite(pv) else ""
        for f, hit, pv in zip(family, flag, p)
    ]
    return out
