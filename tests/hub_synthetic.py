"""A synthetic forecast hub for the tests of the hub views: what ``cc.load_predictions(hub, truth=...)`` returns.

Regression, layout "quantile", a QuantileSet at the 23 levels of the US COVID-19 / FluSight hubs, one row per
(model × location × reference date × horizon); ``units`` holds the task IDs (location text, horizon int64,
reference_date and target_end_date datetime64[ns], target text) and ``time`` the target end date.  Targets are
drawn from the TRUE law N(μ, 1): model "calibrated" states its quantiles, "narrow" those of N(μ, 0.5²) (over-confident)
and "high" those of N(μ + 0.5, 1) (biased high); "<kind>-<k>" names more models of a kind.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

import calib_core as cc
from calib_core.base.regression import QuantileSet

LEVELS = np.array([0.01, 0.025, *np.round(np.arange(0.05, 0.951, 0.05), 2), 0.975, 0.99])
MODELS = {"calibrated": (0.0, 1.0), "narrow": (0.0, 0.5), "high": (0.5, 1.0)}


def synthetic_hub(n_locations: int = 6, n_dates: int = 10, horizons=(0, 1, 2, 3), models=tuple(MODELS),
                  seed: int = 0, integer: bool = False) -> cc.PredictionSet:
    """The synthetic hub (``integer``: targets and quantiles rounded, so ties happen)."""
    rng = np.random.default_rng(seed)
    locations = [f"{i + 1:02d}" for i in range(n_locations)]
    refs = pd.date_range("2024-01-06", periods=n_dates, freq="7D")
    grid = pd.MultiIndex.from_product([locations, refs, list(horizons)],
                                      names=["location", "reference_date", "horizon"]).to_frame(index=False)
    grid["target_end_date"] = grid["reference_date"] + pd.to_timedelta(7 * grid["horizon"], unit="D")
    scale = 10.0 if integer else 1.0
    mu = scale * (5.0 + rng.normal(size=len(grid)))
    y = mu + scale * rng.normal(size=len(grid))  # the truth, drawn from N(μ, 1) (× scale)
    frames, values, ys, names = [], [], [], []
    for m in models:
        shift, sd = MODELS[m.split("-")[0]]  # "narrow-7": another over-confident model
        values.append(mu[:, None] + scale * (shift + sd * stats.norm.ppf(LEVELS))[None, :])
        frames.append(grid)
        ys.append(y)
        names.append(np.full(len(grid), m, dtype=object))
    q = np.vstack(values)
    yy = np.concatenate(ys)
    if integer:
        q, yy = np.round(q), np.round(yy)
    units = pd.concat(frames, ignore_index=True)
    units["horizon"] = units["horizon"].astype(np.int64)
    for c in ("reference_date", "target_end_date"):
        units[c] = units[c].astype("datetime64[ns]")
    units["target"] = "wk inc flu hosp"
    units = units[["reference_date", "target", "horizon", "location", "target_end_date"]]
    return cc.PredictionSet(
        task="regression", source="synthetic-hub", layout="quantile", y=yy, dist=QuantileSet(LEVELS, q),
        model=np.concatenate(names).astype(str), time=units["target_end_date"].to_numpy(), units=units,
        row_number=np.arange(1, len(units) + 1), n_read=len(units),
    )
