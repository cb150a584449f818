"""Simulation study of the anytime-valid calibration monitor against looking at weekly windows.

    python bench/monitor_study.py                      # the study: 1,000 seasons per case (a few CPU minutes)
    python bench/monitor_study.py --seasons 500 --cases gaussian_calibrated gaussian_bias

A season is 52 weekly looks with 50 locations a week.  Per location and week a TRUE law (a centre and a scale that
vary by row), the target drawn from it, and a forecast that states it:

* ``gaussian``: N(c, s²) forecasts; ``quantile``: the 23 hub levels of a Student t₅ law (cells between stated
  levels); ``probability``: event probabilities p = logistic(z), z ~ N(0, 1.2²), outcomes drawn from the truth;
* **date effect** (``_date`` cases): a shock shared by the week's 50 locations carries half the target's variance
  (regression; the forecast's scale covers it) or moves every logit of the week by a N(0, 1) shock (probabilities;
  the forecast is the truth averaged over the shock) — calibrated given what the forecaster knows, dependent within
  a week;
* scenarios: ``calibrated``; ``bias``: from week 30 the forecast's centre is 0.5 s below the truth's (probabilities:
  0.1 too low); ``scale``: from week 30 the forecast's scale is 0.7 of the truth's (probabilities: over-confident,
  logit × 1.8).

Procedures compared on the same seasons:

* **monitor**: ``pit_monitor`` / ``probability_monitor`` (alarm when e ≥ 1/α = 20; the rows of a week averaged);
* **monitor, rows as steps** (calibrated cases): the same bets with every row its own step (the rows of a week
  multiplied, as if they were independent; histogram windows of the same 8 and 4 weeks), to show what the
  averaging buys under a date effect;
* **naive weekly tests**: each week, tests of that week's 50 rows at 5%: the mean of z = Φ⁻¹(PIT) (z test, known
  variance 1), the coverage of the central 90% interval (exact binomial), for probabilities the mean of y − p
  (z test with variance Σ p(1 − p)); the naive rule alarms in the first week where the test rejects.

Per case: the false-alarm rate (calibrated: an alarm in any of the 52 weeks; shifted: an alarm before week 30),
the detection rate (an alarm in weeks 30–52), the median delay (alarm week − 30) and the median change point of
the monitor, with Monte-Carlo standard errors, the seed and the CPU seconds.

References
----------
.. [1] Ville, J. (1939). *Étude critique de la notion de collectif*. Gauthier-Villars, Paris.
.. [2] Arnold, S., Henzi, A. & Ziegel, J. F. (2023). Sequentially valid tests for forecast calibration. *Annals of
   Applied Statistics* 17(3), 1909–1935.
.. [3] Henzi, A. & Ziegel, J. F. (2022). Valid sequential inference on probability forecast performance.
   *Biometrika* 109(3), 647–663.
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from calib_core.base.predictions import PredictionSet  # noqa: E402
from calib_core.base.regression import Gaussian, QuantileSet  # noqa: E402
from calib_core.data.hub_example import HUB_LEVELS  # noqa: E402
from calib_core.inference.classification_monitor import probability_monitor  # noqa: E402
from calib_core.inference.regression_monitor import pit_monitor  # noqa: E402

T, N_LOC, SHIFT = 52, 50, 29  # weeks, locations, first shifted week (index 29 = week 30)
ALPHA = 0.05
TYPES = ("gaussian", "quantile", "probability")
SCENARIOS = ("calibrated", "bias", "scale")
CASES = [f"{t}{d}_{s}" for t in TYPES for d in ("", "_date") for s in SCENARIOS]


def _grid(seasons: int) -> tuple[np.ndarray, np.ndarray]:
    return np.repeat(np.arange(seasons), T * N_LOC), np.tile(np.repeat(np.arange(T), N_LOC), seasons)


def _regression(kind: str, scenario: str, date: bool, seasons: int, rng: np.random.Generator):
    season, week = _grid(seasons)
    c = rng.normal(size=season.size) * 3
    s = np.exp(rng.normal(size=season.size) * 0.3)
    shared = rng.standard_normal(seasons * T)[season * T + week]
    share = 0.5 if date else 0.0
    if kind == "quantile" and not date:  # a Student t5 law (heavy tails) stated by its 23 quantiles
        e = rng.standard_t(5, size=season.size)
        scale_sd = np.sqrt(5 / 3)
    else:  # Gaussian: with a date effect the sum of the shared and the own shock is the row's law
        e = np.sqrt(share) * shared + np.sqrt(1 - share) * rng.standard_normal(season.size)
        scale_sd = 1.0
    y = c + s * e
    late = week >= SHIFT
    f_c = c - np.where(late & (scenario == "bias"), 0.5 * scale_sd, 0.0) * s
    f_s = s * np.where(late & (scenario == "scale"), 0.7, 1.0)
    if kind == "gaussian":
        dist = Gaussian(f_c, f_s)
        z = (y - f_c) / f_s
    else:
        q = stats.t.ppf(np.array(HUB_LEVELS), 5) if not date else stats.norm.ppf(np.array(HUB_LEVELS))
        dist = QuantileSet(HUB_LEVELS, f_c[:, None] + f_s[:, None] * q[None, :])
        z = None
    lo90, hi90 = dist.values[:, [2, 20]].T if kind == "quantile" else (f_c - 1.6449 * f_s, f_c + 1.6449 * f_s)
    inside = (y >= lo90) & (y <= hi90)
    ps = PredictionSet(task="regression", y=y, dist=dist, time=week, model=season.astype(str))
    return ps, week, season, z, inside


def _probability(scenario: str, date: bool, seasons: int, rng: np.random.Generator):
    season, week = _grid(seasons)
    logit = rng.normal(0.0, 1.2, season.size)
    if date:
        shock = rng.standard_normal(seasons * T)[season * T + week]
        truth = 1 / (1 + np.exp(-(logit + shock)))
        x, w = np.polynomial.hermite_e.hermegauss(40)
        p = (1 / (1 + np.exp(-(logit[:, None] + x[None, :]))) @ w) / w.sum()
    else:
        truth = p = 1 / (1 + np.exp(-logit))
    y = (rng.random(season.size) < truth).astype(float)
    late = week >= SHIFT
    if scenario == "bias":
        p = np.where(late, np.clip(p - 0.1, 0.01, 0.99), p)
    elif scenario == "scale":
        p = np.where(late, 1 / (1 + np.exp(-1.8 * logit)), p)
    return y, p, week, season


def _first_week(reject: np.ndarray) -> np.ndarray:
    """(seasons, T) booleans → the first week index with True, or −1."""
    return np.where(reject.any(axis=1), reject.argmax(axis=1), -1)


def _weekly(values: np.ndarray, season: np.ndarray, week: np.ndarray, seasons: int) -> np.ndarray:
    return np.bincount(season * T + week, weights=values, minlength=seasons * T).reshape(seasons, T)


def _alarm_weeks(result) -> np.ndarray:
    s = result.summary
    order = np.argsort(s["model"].astype(int).to_numpy())
    return pd.to_numeric(s["alarm_time"], errors="coerce").fillna(-1).to_numpy()[order].astype(int)


def _change_points(result) -> np.ndarray:
    s = result.summary
    order = np.argsort(s["model"].astype(int).to_numpy())
    return pd.to_numeric(s["change_point"], errors="coerce").to_numpy()[order]


def run_case(case: str, seasons: int, seed: int) -> list[dict]:
    kind, scenario = case.split("_")[0], case.split("_")[-1]
    date = "_date_" in case
    rng = np.random.default_rng(seed)
    rows = []
    t0 = time.process_time()
    if kind == "probability":
        y, p, week, season = _probability(scenario, date, seasons, rng)
        t_gen = time.process_time() - t0
        t0 = time.process_time()
        mon = probability_monitor(y, p, week, model=season)
        alarms = {"monitor": (_alarm_weeks(mon), time.process_time() - t0 + t_gen, _change_points(mon))}
        if scenario == "calibrated":
            t0 = time.process_time()
            per_row = probability_monitor(y, p, week * N_LOC + np.tile(np.arange(N_LOC), seasons * T), model=season)
            alarms["monitor, rows as steps"] = (_alarm_weeks(per_row) // N_LOC, time.process_time() - t0, None)
        t0 = time.process_time()
        zsum = _weekly(y - p, season, week, seasons)
        var = _weekly(p * (1 - p), season, week, seasons)
        alarms["naive weekly y − p test"] = (_first_week(np.abs(zsum) / np.sqrt(var) > 1.96),
                                             time.process_time() - t0, None)
    else:
        ps, week, season, z, inside = _regression(kind, scenario, date, seasons, rng)
        t_gen = time.process_time() - t0
        t0 = time.process_time()
        mon = pit_monitor(ps)
        alarms = {"monitor": (_alarm_weeks(mon), time.process_time() - t0 + t_gen, _change_points(mon))}
        if scenario == "calibrated":
            t0 = time.process_time()
            step = week * N_LOC + np.tile(np.arange(N_LOC), seasons * T)
            per_row = pit_monitor(ps, step, windows=(8 * N_LOC, 4 * N_LOC))  # the same windows of 8 and 4 weeks
            alarms["monitor, rows as steps"] = (_alarm_weeks(per_row) // N_LOC, time.process_time() - t0, None)
        t0 = time.process_time()
        if z is not None:
            zmean = _weekly(z, season, week, seasons) / np.sqrt(N_LOC)
            alarms["naive weekly z-mean test"] = (_first_week(np.abs(zmean) > 1.96), time.process_time() - t0, None)
        k = _weekly(inside.astype(float), season, week, seasons)
        reject = (stats.binom.cdf(k, N_LOC, 0.9) <= 0.025) | (stats.binom.sf(k - 1, N_LOC, 0.9) <= 0.025)
        alarms["naive weekly 90% coverage test"] = (_first_week(reject), time.process_time() - t0, None)
    for name, (first, cpu, cps) in alarms.items():
        false = (first >= 0) if scenario == "calibrated" else ((first >= 0) & (first < SHIFT))
        row = {"case": case, "procedure": name, "seasons": seasons, "seed": seed,
               "false_alarm": float(false.mean()), "false_alarm_se": float(np.sqrt(false.mean() * (1 - false.mean())
                                                                                   / seasons)),
               "cpu_s": round(cpu, 1)}
        if scenario != "calibrated":
            det = first >= SHIFT
            row["detection"] = float(det.mean())
            row["median_delay"] = float(np.median(first[det] - SHIFT)) if det.any() else np.nan
            if cps is not None and det.any():
                row["median_change_point"] = float(np.median(cps[det])) + 1  # week number, 1-based
        rows.append(row)
    return rows


def _table(frame: pd.DataFrame) -> str:
    lines = ["| case | procedure | seasons | false alarms | detection (weeks 30–52) | median delay (weeks) | "
             "median change point (week) | CPU s |", "|---|---|---|---|---|---|---|---|"]
    for r in frame.itertuples():
        fa = f"{100 * r.false_alarm:.1f}% ± {100 * r.false_alarm_se:.1f}"
        det = "—" if pd.isna(getattr(r, "detection", np.nan)) else f"{100 * r.detection:.1f}%"
        dl = "—" if pd.isna(getattr(r, "median_delay", np.nan)) else f"{r.median_delay:.0f}"
        cp = "—" if pd.isna(getattr(r, "median_change_point", np.nan)) else f"{r.median_change_point:.0f}"
        lines.append(f"| {r.case} | {r.procedure} | {r.seasons} | {fa} | {det} | {dl} | {cp} | {r.cpu_s} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seasons", type=int, default=1000)
    ap.add_argument("--cases", nargs="*", default=CASES, choices=CASES)
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--out", default=str(ROOT / "bench" / "out" / "monitor_study.csv"))
    args = ap.parse_args(argv)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                            cwd=ROOT).stdout.strip()
    print(f"commit {commit}, {platform.node()}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}, "
          f"seasons {args.seasons}, seeds {args.seed} + case index", flush=True)
    out = []
    for case in args.cases:
        rows = run_case(case, args.seasons, args.seed + CASES.index(case))
        out.extend(rows)
        print("\n".join(_table(pd.DataFrame(rows)).splitlines()[2:]), flush=True)
    frame = pd.DataFrame(out)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    frame.to_csv(args.out, index=False)
    print()
    print(_table(frame))
    print(f"\ntotal CPU {time.process_time():.0f} s")


if __name__ == "__main__":
    main()
