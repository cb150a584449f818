"""Small synthetic forecast hubs written to disk for the hub-reader tests (hubverse and legacy COVID-19 format)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

LEVELS = [0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85,
          0.9, 0.95, 0.975, 0.99]
"""The quantile levels of the COVID-19 Forecast Hub (data-processed README): 23 levels."""

LOCATIONS = ["01", "02", "US"]
ROUNDS = ["2022-12-03", "2022-12-10"]


def truth_series(locations=LOCATIONS, start="2022-11-01", days=90, target="wk inc flu hosp") -> pd.DataFrame:
    """A hubverse time series: target_end_date, location, target, observation (one value per day)."""
    dates = pd.date_range(start, periods=days, freq="D")
    rows = [(d.strftime("%Y-%m-%d"), loc, target, float(100 + 10 * i + d.day)) for i, loc in enumerate(locations)
            for d in dates]
    return pd.DataFrame(rows, columns=["target_end_date", "location", "target", "observation"])


def quantile_rows(model: str, round_date: str, *, levels=LEVELS, locations=LOCATIONS, horizons=(1, 2),
                  truth: pd.DataFrame | None = None, median: bool = True, spread: float = 5.0,
                  target="wk inc flu hosp", unit_days: int = 7, with_end: bool = False) -> pd.DataFrame:
    """Quantile (+ median) rows of one model and round: Gaussian quantiles centred on the truth of the target date
    (round + 7 × horizon days); ``with_end`` writes that date as a target_end_date column."""
    truth = truth_series() if truth is None else truth
    obs = truth.set_index(["location", "target_end_date"])["observation"]
    rows = []
    for loc in locations:
        for h in horizons:
            end = (pd.Timestamp(round_date) + pd.Timedelta(days=unit_days * h)).strftime("%Y-%m-%d")
            centre = float(obs.get((loc, end), 100.0))
            for lv in levels:
                rows.append((round_date, target, h, loc, "quantile", f"{lv:g}",
                             round(centre + spread * stats.norm.ppf(lv), 6)))
            if median:
                rows.append((round_date, target, h, loc, "median", "NA", round(centre, 6)))
    frame = pd.DataFrame(rows, columns=["reference_date", "target", "horizon", "location", "output_type",
                                        "output_type_id", "value"])
    if with_end:
        frame.insert(3, "target_end_date", (pd.to_datetime(frame["reference_date"]) + pd.to_timedelta(
            unit_days * frame["horizon"], unit="D")).dt.strftime("%Y-%m-%d"))
    return frame


def tasks_json(time_unit: str = "week", categories=None) -> dict:
    """A minimal hub-config/tasks.json (round id reference_date, one target and its time unit)."""
    output = {"quantile": {"output_type_id": {"required": LEVELS}, "value": {"type": "double"}}}
    if categories:
        output["pmf"] = {"output_type_id": {"required": list(categories)}, "value": {"type": "double"}}
    return {"schema_version": "v3.0.0", "rounds": [{
        "round_id_from_variable": True, "round_id": "reference_date",
        "model_tasks": [{"task_ids": {"reference_date": {"optional": ROUNDS}},
                         "output_type": output,
                         "target_metadata": [{"target_id": "wk inc flu hosp",
                                              "target_keys": {"target": "wk inc flu hosp"},
                                              "time_unit": time_unit}]}]}]}


def write_hub(root: Path, files: dict[str, dict[str, pd.DataFrame]], truth: pd.DataFrame | None = None, *,
              fmt: str = "csv", config: dict | None = None, extras: bool = True) -> Path:
    """A hub folder: model-output/<model>/<round>-<model>.<fmt>, target-data/, hub-config/tasks.json, a README."""
    for model, by_round in files.items():
        folder = root / "model-output" / model
        folder.mkdir(parents=True, exist_ok=True)
        for rnd, frame in by_round.items():
            path = folder / f"{rnd}-{model}.{fmt}"
            if fmt == "parquet":
                frame.to_parquet(path, index=False)
            else:
                frame.to_csv(path, index=False)
        if extras:
            (folder / "README.md").write_text("# a model\n")
    if truth is not None:
        (root / "target-data").mkdir(parents=True, exist_ok=True)
        truth.to_csv(root / "target-data" / "time-series.csv", index=False)
    (root / "hub-config").mkdir(parents=True, exist_ok=True)
    (root / "hub-config" / "tasks.json").write_text(json.dumps(config or tasks_json()))
    if extras:
        (root / "model-output" / "model-metadata.json").write_text("{}")
    return root


def simple_hub(root: Path, models=("alpha", "beta"), rounds=ROUNDS, **kwargs) -> Path:
    """Two models × two rounds × 3 locations × 2 horizons, 23 quantile levels + median, truth as a time series."""
    truth = truth_series()
    files = {m: {r: quantile_rows(m, r, truth=truth, spread=5.0 + i) for r in rounds} for i, m in enumerate(models)}
    return write_hub(root, files, truth, **kwargs)


def legacy_rows(model: str, forecast_date: str, *, locations=("01", "US"), horizons=(1, 2, 3, 4),
                truth: pd.DataFrame | None = None) -> pd.DataFrame:
    """A legacy COVID-19 Forecast Hub file (data-processed README): forecast_date, target, target_end_date, location,
    type, quantile, value; 23 quantiles and a point row with quantile NA per (location, target)."""
    truth = legacy_truth(locations) if truth is None else truth
    obs = truth.set_index(["location", "date"])["value"]
    rows = []
    for loc in locations:
        for h in horizons:
            end = (pd.Timestamp(forecast_date) + pd.Timedelta(days=5 + 7 * (h - 1))).strftime("%Y-%m-%d")  # Saturdays
            centre = float(obs.get((loc, end), 50.0))
            target = f"{h} wk ahead inc death"
            rows.append((forecast_date, target, end, loc, "point", "NA", centre))
            for lv in LEVELS:
                rows.append((forecast_date, target, end, loc, "quantile", f"{lv:g}",
                             round(centre + 3 * stats.norm.ppf(lv), 4)))
    return pd.DataFrame(rows, columns=["forecast_date", "target", "target_end_date", "location", "type", "quantile",
                                       "value"])


def legacy_truth(locations=("01", "US")) -> pd.DataFrame:
    """Legacy truth: date, location, location_name, value (weekly incident deaths on Saturdays)."""
    dates = pd.date_range("2020-05-02", periods=20, freq="7D")
    names = {"01": "Alabama", "US": "US"}
    rows = [(d.strftime("%Y-%m-%d"), loc, names.get(loc, loc), float(20 + 3 * i + d.day % 7)) for i, loc in
            enumerate(locations) for d in dates]
    return pd.DataFrame(rows, columns=["date", "location", "location_name", "value"])


def numbers(frame: pd.DataFrame) -> np.ndarray:
    """The value column as floats."""
    return frame["value"].to_numpy(dtype=float)
