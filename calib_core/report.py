"""The Report returned by ``cc.diagnose``: a long metric table and the data behind every diagram.

The metric table has one row per (model, group, metric) with columns

    model, group, metric, value, ci_low, ci_high, perfect, perfect_low, perfect_high

``value`` is the metric on the data, ``[ci_low, ci_high]`` its bootstrap CI, ``perfect`` the mean
value a perfectly calibrated forecaster with the same predictions would get (targets simulated
from the predictions) and ``[perfect_low, perfect_high]`` the central range of that simulation —
the noise level at this N.  ``group == ALL`` is the whole model.

``diagrams[(model, group)]`` maps a diagram name to its table (see ``regression.diagrams`` and
``classification.metrics`` for the schemas).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .resampling import bootstrap_intervals, simulate_reference

__all__ = ["Report", "ALL", "METRIC_COLUMNS", "metric_rows"]

ALL = "(all)"
METRIC_COLUMNS = [
    "model",
    "group",
    "metric",
    "value",
    "ci_low",
    "ci_high",
    "perfect",
    "perfect_low",
    "perfect_high",
]


def metric_rows(
    statistic: Callable[[np.ndarray | None], Mapping[str, float]],
    n: int,
    simulate: Callable[[np.random.Generator], Mapping[str, float]] | None = None,
    *,
    model: str = "model",
    group: str = ALL,
    n_resamples: int = 200,
    n_simulations: int = 50,
    level: float = 0.95,
    seed: int | None = 0,
) -> pd.DataFrame:
    """Evaluate ``statistic(None)`` and attach bootstrap CIs and perfect-calibration values.

    ``statistic(weights)`` returns ``{metric: value}`` for row weights (``None`` = the data);
    ``simulate(rng)`` returns the same metrics on simulated perfectly calibrated targets.
    ``n_resamples = 0`` / ``n_simulations = 0`` switch either part off (NaN columns).
    """
    values = statistic(None)
    ci = bootstrap_intervals(statistic, n, n_resamples, level, seed) if n_resamples else {}
    ref = simulate_reference(simulate, n_simulations, level, seed) if (simulate and n_simulations) else {}
    nan3 = (np.nan, np.nan, np.nan)
    rows = []
    for name, v in values.items():
        lo, hi = ci.get(name, (np.nan, np.nan))
        pm, pl, ph = ref.get(name, nan3)
        rows.append([model, group, name, float(v), lo, hi, pm, pl, ph])
    return pd.DataFrame(rows, columns=METRIC_COLUMNS)


@dataclass
class Report:
    """Diagnostics of one PredictionSet: ``metrics`` (long table) and ``diagrams``."""

    task: str
    metrics: pd.DataFrame
    diagrams: dict[tuple[str, str], dict[str, pd.DataFrame]] = field(default_factory=dict)
    source: str = "<memory>"
    n_rows: int = 0
    dropped: pd.DataFrame | None = None
    options: dict[str, Any] = field(default_factory=dict)

    @property
    def models(self) -> list[str]:
        return list(pd.unique(self.metrics["model"]))

    @property
    def groups(self) -> list[str]:
        return list(pd.unique(self.metrics["group"]))

    def table(self, model: str | None = None, group: str = ALL) -> pd.DataFrame:
        """The metric rows of one model (default: the first) and group, indexed by metric."""
        model = self.models[0] if model is None else model
        m = self.metrics
        sel = m[(m["model"] == model) & (m["group"] == group)]
        return sel.drop(columns=["model", "group"]).set_index("metric")

    def value(self, metric: str, model: str | None = None, group: str = ALL) -> float:
        """One metric's value."""
        return float(self.table(model, group).loc[metric, "value"])

    def wide(self, column: str = "value") -> pd.DataFrame:
        """Metrics as columns, one row per (model, group)."""
        return self.metrics.pivot_table(index=["model", "group"], columns="metric", values=column, sort=False)
