"""Small forecast hubs written into a test's folder: hubverse model output (quantile and median rows) for a few
models, rounds, horizons and locations, and the truth as a hubverse time series.

The forecasts are the quantiles of N(μ, σ²) and the truth is drawn from that same law (a calibrated hub), or from a
shifted one (``shift``) for a model that forecasts too low.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import norm

LEVELS = (0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95)
ROUNDS = ("2024-01-06", "2024-01-13")
LOCATIONS = ("01", "02", "US")
HORIZONS = (0, 1, 2)
TARGET = "wk inc flu hosp"


def truth_frame(seed: int = 0) -> pd.DataFrame:
    """The time series: one observation per location and week, drawn from N(μ, 1) with μ = 100 + 10·week."""
    rng = np.random.default_rng(seed)
    dates = pd.date_range("2023-12-30", periods=8, freq="7D")
    rows = [(d.strftime("%Y-%m-%d"), loc, 100.0 + 10.0 * i + rng.normal()) for i, d in enumerate(dates)
            for loc in LOCATIONS]
    frame = pd.DataFrame(rows, columns=["date", "location", "observation"])
    frame["target"] = TARGET
    return frame[["date", "target", "location", "observation"]]


def model_frame(model: str, round_date: str, *, shift: float = 0.0, median_rows: bool = True,
                mean_rows: bool = False, model_id_column: bool = False) -> pd.DataFrame:
    """One round's model output (long hubverse format): the N(μ − shift, 1) quantiles of every unit."""
    dates = pd.date_range("2023-12-30", periods=8, freq="7D")
    week = {d.strftime("%Y-%m-%d"): i for i, d in enumerate(dates)}
    rows = []
    for h in HORIZONS:
        end = (pd.Timestamp(round_date) + pd.Timedelta(days=7 * h)).strftime("%Y-%m-%d")
        mu = 100.0 + 10.0 * week[end] - shift
        for loc in LOCATIONS:
            for tau in LEVELS:
                rows.append((round_date, TARGET, h, loc, end, "quantile", f"{tau:g}", mu + norm.ppf(tau)))
            if median_rows:
                rows.append((round_date, TARGET, h, loc, end, "median", "NA", mu))
            if mean_rows:
                rows.append((round_date, TARGET, h, loc, end, "mean", "NA", mu))
    frame = pd.DataFrame(rows, columns=["reference_date", "target", "horizon", "location", "target_end_date",
                                        "output_type", "output_type_id", "value"])
    if model_id_column:
        frame.insert(0, "model_id", model)
    return frame


def write_hub(root: Path, models: dict[str, float] | None = None, **kwargs) -> Path:
    """A hub folder: model-output/<model>/<round>-<model>.csv for every model (its shift) and round, and
    target-data/time-series.csv; returns the hub's root."""
    models = {"team-a": 0.0, "team-b": 3.0} if models is None else models
    for model, shift in models.items():
        folder = root / "model-output" / model
        folder.mkdir(parents=True, exist_ok=True)
        for r in ROUNDS:
            model_frame(model, r, shift=shift, **kwargs).to_csv(folder / f"{r}-{model}.csv", index=False)
    (root / "target-data").mkdir(parents=True, exist_ok=True)
    truth_frame().to_csv(root / "target-data" / "time-series.csv", index=False)
    return root


def csv_bytes(frame: pd.DataFrame) -> bytes:
    return frame.to_csv(index=False).encode()


#: Forecast units per model of :func:`write_hub`: rounds × horizons × locations.
UNITS_PER_MODEL = len(ROUNDS) * len(HORIZONS) * len(LOCATIONS)
