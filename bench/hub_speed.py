"""Benchmark: a forecast hub of 10⁶ quantile rows loaded, joined to its truth, scored and diagnosed.

    python bench/hub_speed.py                                  # 10⁶ rows, 10 models, CSV and Parquet, 3 repeats
    python bench/hub_speed.py --rows 1000000 --models 10 --repeats 3 --out /tmp/hub_speed.json
    python bench/hub_speed.py --rows 20000 --models 3 --repeats 1 --formats csv --profile read_join

The hub is the seeded synthetic one of :func:`calib_core.data.hub_example.write_example_hub` (hubverse long format,
23 levels, weekly rounds, horizons 0–3, up to 50 locations, ``--models`` models cycling calibrated / narrow /
biased), written once per format into a temporary folder (not timed).  Every step is timed in process CPU
seconds (``time.process_time``: every thread of the process, so Arrow's parallel reading counts in full), median
over ``--repeats``:

* ``read_join`` — ``cc.load_predictions(hub, truth=time-series.csv)``: files → one row per model × forecast unit,
  joined to the truth;
* ``wis`` — ``calib_core.metrics.regression_wis.wis_parts(y, dist)`` on every row;
* ``diagnose`` — ``cc.diagnose(pset)`` with its defaults (every model: metrics, intervals, tests, verdicts,
  diagrams; ``diagnose_per_model`` = that over the number of models);
* ``scores_by_model`` / ``scores_by_model_horizon`` — ``calib_core.diagnosis.regression_hub.forecast_scores``;
* peers in the same process: ``pandas`` (read every file with ``pd.read_csv`` / ``pd.read_parquet``, task IDs as
  text, pivot the levels to columns, merge the truth) and ``hubdata`` (``connect_hub(...).to_table()``, then the
  same pandas pivot and merge; the truth read by pandas, since hubdata 0.2.0 reads the time series' ``location``
  as int64).

A step whose code is not there yet (an unmerged branch) is reported as unavailable; ``diagnose`` then runs on a
PredictionSet built from the generator's frames in memory.  ``--profile STEP`` prints the top cProfile entries of
one step (cumulative time).  The issue's target: loaded, joined and diagnosed in ≤ 5 s CPU.
"""

from __future__ import annotations

import argparse
import cProfile
import importlib.util
import inspect
import io
import json
import math
import pstats
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import calib_core as cc  # noqa: E402
from calib_core.base.regression import QuantileSet  # noqa: E402
from calib_core.data.hub_example import HUB_LEVELS, ExampleHub, write_example_hub  # noqa: E402

HORIZONS = (0, 1, 2, 3)
TASK_IDS = ["reference_date", "target", "horizon", "location", "target_end_date"]


def hub_shape(rows: int, models: int) -> dict[str, int]:
    """Locations and rounds giving at least ``rows`` quantile rows (23 levels, 4 horizons)."""
    units = math.ceil(rows / (len(HUB_LEVELS) * models))
    n_locations = int(min(50, max(2, math.ceil(units / len(HORIZONS)))))
    n_rounds = int(max(1, math.ceil(units / (len(HORIZONS) * n_locations))))
    return {"n_models": models, "n_locations": n_locations, "n_rounds": n_rounds}


def cpu(fn: Callable[[], Any], repeats: int) -> tuple[float, Any]:
    """Median process CPU seconds of ``fn()`` over ``repeats`` calls, and the last result."""
    times, out = [], None
    for _ in range(repeats):
        t0 = time.process_time()
        out = fn()
        times.append(time.process_time() - t0)
    return statistics.median(times), out


# ------------------------------------------------------------------------------------------------ peers


def pivot_join(long: pd.DataFrame, truth: pd.DataFrame) -> pd.DataFrame:
    """Long quantile rows → one row per (model, unit) with a column per level, left-joined to the truth."""
    wide = long.pivot(index=["model_id", *TASK_IDS], columns="output_type_id", values="value").reset_index()
    return wide.merge(truth, on=["target_end_date", "target", "location"], how="left")


def pandas_peer(hub: Path, file_format: str) -> pd.DataFrame:
    """Plain pandas: read every file (task IDs as text), pivot, merge the truth."""
    text = {c: str for c in TASK_IDS if c != "horizon"} | {"output_type": str, "output_type_id": str}
    parts = []
    for p in sorted((hub / "model-output").glob(f"*/*.{file_format}")):
        part = pd.read_csv(p, dtype=text | {"value": float}) if file_format == "csv" else pd.read_parquet(p)
        parts.append(part.assign(model_id=p.parent.name))
    long = pd.concat(parts, ignore_index=True)
    truth = pd.read_csv(hub / "target-data" / "time-series.csv", dtype={"location": str, "target": str,
                                                                       "target_end_date": str})
    return pivot_join(long, truth)


def hubdata_peer(hub: Path) -> pd.DataFrame:
    """hubdata (Arrow datasets) for the model output, then the same pandas pivot and merge.

    The truth is read with pandas: hubdata 0.2.0's time-series reader infers ``location`` as int64 (``"01"`` → 1),
    which no longer joins the model output's text locations.
    """
    import hubdata

    long = hubdata.connect_hub(hub.resolve()).to_table().to_pandas()
    for col in ("reference_date", "target_end_date"):
        long[col] = long[col].astype(str)
    long["output_type_id"] = long["output_type_id"].map("{:g}".format)
    truth = pd.read_csv(hub / "target-data" / "time-series.csv", dtype={"location": str, "target": str,
                                                                       "target_end_date": str})
    return pivot_join(long, truth)


# ------------------------------------------------------------------------------------------------ calib_core steps


def reader_available() -> bool:
    return "truth" in inspect.signature(cc.load_predictions).parameters


def wis_fn() -> Callable | None:
    if importlib.util.find_spec("calib_core.metrics.regression_wis") is None:
        return None
    from calib_core.metrics.regression_wis import wis_parts

    return wis_parts


def scores_fn() -> Callable | None:
    if importlib.util.find_spec("calib_core.diagnosis.regression_hub") is None:
        return None
    module = importlib.import_module("calib_core.diagnosis.regression_hub")
    return getattr(module, "forecast_scores", None)


def memory_set(hub: ExampleHub) -> cc.PredictionSet:
    """The generator's frames as a PredictionSet (stand-in while the reader is not there)."""
    fc = hub.forecasts
    n_levels = len(hub.levels)
    units = fc.iloc[::n_levels][["model_id", *TASK_IDS]].reset_index(drop=True)
    truth = hub.truth.assign(target_end_date=hub.truth["target_end_date"].dt.strftime("%Y-%m-%d"))
    y = units.merge(truth, on=["target_end_date", "target", "location"], how="left")["observation"].to_numpy()
    values = fc["value"].to_numpy().reshape(-1, n_levels)
    n = len(units)
    return cc.PredictionSet(task="regression", source="example-hub", layout="quantile", y=y,
                            dist=QuantileSet(np.asarray(hub.levels), values), model=units["model_id"].to_numpy(object),
                            row_number=np.arange(1, n + 1), n_read=n)


def profile(fn: Callable[[], Any], top: int = 25) -> str:
    prof = cProfile.Profile()
    prof.enable()
    fn()
    prof.disable()
    out = io.StringIO()
    pstats.Stats(prof, stream=out).sort_stats("cumulative").print_stats(top)
    tottime = io.StringIO()
    pstats.Stats(prof, stream=tottime).sort_stats("tottime").print_stats(top)
    return out.getvalue() + "\n" + tottime.getvalue()


def run_format(folder: Path, file_format: str, shape: dict[str, int], repeats: int, peers: bool,
               profile_step: str | None) -> dict[str, Any]:
    hub_dir = folder / f"hub-{file_format}"
    hub = write_example_hub(hub_dir, horizons=HORIZONS, seed=0, file_format=file_format, **shape)
    truth = hub_dir / "target-data" / "time-series.csv"
    res: dict[str, Any] = {"format": file_format, "quantile_rows": len(hub.forecasts),
                           "units": len(hub.forecasts) // len(hub.levels), "models": len(hub.models), **shape}
    steps: dict[str, Callable[[], Any]] = {}
    pset = None
    if reader_available():
        res["read_join"], pset = cpu(lambda: cc.load_predictions(hub_dir, truth=truth), repeats)
        steps["read_join"] = lambda: cc.load_predictions(hub_dir, truth=truth)
        res["rows_loaded"] = pset.n_rows
    else:
        res["read_join"] = None
    if pset is None:
        pset = memory_set(hub)
        res["diagnosed_set"] = "generator frames (reader not available)"
    wis = wis_fn()
    if wis is not None:
        steps["wis"] = lambda: wis(pset.y, pset.dist)
        res["wis"], _ = cpu(steps["wis"], repeats)
    else:
        res["wis"] = None
    steps["diagnose"] = lambda: cc.diagnose(pset)
    res["diagnose"], report = cpu(steps["diagnose"], repeats)
    res["diagnose_per_model"] = res["diagnose"] / len(hub.models)
    res["verdicts"] = report.verdicts[["model", "verdict"]].to_dict("records")
    scores = scores_fn()
    if scores is not None and pset.units is not None:
        steps["scores_by_model"] = lambda: scores(pset, by=("model",))
        steps["scores_by_model_horizon"] = lambda: scores(pset, by=("model", "horizon"))
        res["scores_by_model"], _ = cpu(steps["scores_by_model"], repeats)
        res["scores_by_model_horizon"], _ = cpu(steps["scores_by_model_horizon"], repeats)
    else:
        res["scores_by_model"] = res["scores_by_model_horizon"] = None
    if res["read_join"] is not None:
        res["load_join_diagnose"] = res["read_join"] + res["diagnose"]
    if peers:
        steps["pandas"] = lambda: pandas_peer(hub_dir, file_format)
        res["pandas_read_pivot_merge"], frame = cpu(steps["pandas"], repeats)
        assert len(frame) == res["units"] and frame["observation"].notna().all()
        try:
            steps["hubdata"] = lambda: hubdata_peer(hub_dir)
            res["hubdata_read_pivot_merge"], frame = cpu(steps["hubdata"], repeats)
            assert len(frame) == res["units"] and frame["observation"].notna().all()
        except Exception as exc:  # the peer is optional: say why it did not run
            steps.pop("hubdata", None)
            res["hubdata_read_pivot_merge"] = None
            res["hubdata_error"] = f"{type(exc).__name__}: {exc}"
        for peer in ("pandas_read_pivot_merge", "hubdata_read_pivot_merge"):
            if res["read_join"] is not None and res.get(peer):
                res[f"ratio_read_join_to_{peer.split('_')[0]}"] = res["read_join"] / res[peer]
    if profile_step is not None and profile_step in steps:
        res["profile"] = profile(steps[profile_step])
    return res


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000, help="quantile rows (at least; default 10⁶)")
    parser.add_argument("--models", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--formats", default="parquet,csv", help="comma-separated: parquet, csv")
    parser.add_argument("--no-peers", action="store_true", help="skip the pandas and hubdata references")
    parser.add_argument("--profile", default=None, help="print cProfile of one step (read_join, wis, diagnose, …)")
    parser.add_argument("--out", type=Path, default=None, help="write the results as JSON")
    args = parser.parse_args(argv)
    shape = hub_shape(args.rows, args.models)
    results: dict[str, Any] = {"rows_asked": args.rows, "repeats": args.repeats, "runs": []}
    with tempfile.TemporaryDirectory(prefix="hub_speed_") as tmp:
        for fmt in [f.strip() for f in args.formats.split(",") if f.strip()]:
            res = run_format(Path(tmp), fmt, shape, args.repeats, not args.no_peers, args.profile)
            text = res.pop("profile", None)
            results["runs"].append(res)
            print(json.dumps({k: (round(v, 3) if isinstance(v, float) else v) for k, v in res.items()
                              if k != "verdicts"}, default=str))
            if text:
                print(f"--- cProfile of {args.profile} ({fmt}) ---\n{text}")
    if args.out is not None:
        args.out.write_text(json.dumps(results, indent=2, default=str))
    return results


if __name__ == "__main__":
    main()
