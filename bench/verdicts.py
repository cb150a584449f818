"""Simulation study of the verdicts: false alarms, power, interval coverage, cost.

    python bench/verdicts.py --task regression                       # the full study (long)
    python bench/verdicts.py --task regression --reps 1000 --power-reps 200 --sizes 200 1000 10000
    python bench/verdicts.py --task regression --quick               # a few minutes, smaller counts

Regression layouts: Gaussian, 9 quantiles (τ = 0.1 … 0.9) and 50-member ensembles.  Truth per row:
μ ~ N(0, 1), σ ~ U[0.5, 2], y = μ + σ·ε.  "Perfectly calibrated" means the target is a draw from the
predicted law: ε ~ N(0, 1) for Gaussians and ensembles (members drawn like the target, so target and
members are exchangeable), and for quantile sets the target is drawn from the interpolated law the
tool evaluates (linear between the quantiles, exponential tails).

Sections (Markdown tables on stdout):

1. **False alarms**: share of calibrated data sets whose headline is "miscalibrated" (goal ≤ 5% plus two
   Monte-Carlo standard errors), and per statistic the share with p ≤ 0.05 (unadjusted).
2. **Power** (headline "miscalibrated", and the share naming the expected direction) against σ × 0.8
   (over-confident), σ × 1.25 (under-confident), mean + 0.2σ (biased high), Levi's random σ
   (σ ~ U[1, 10] unrelated to the error; truth x ~ U[0.1, 1], y ~ N(x, x²)) and a Student-t3 truth with
   the right variance under a Gaussian-shaped forecast.
3. **Interval coverage** of the population value (the statistic at N = 2·10⁶ rows of the same design;
   0 / nominal for the calibrated case) by each 95% interval.
4. **Cost** at 1e6 Gaussian rows: point estimates (``summary_statistics``) versus point + inference.

Everything is seeded.  ``infer_regression`` runs with ``n_boot=200`` in sections 1–2 (the verdict does
not use the intervals) and with its defaults in section 3.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from calib_core.base.regression import Gaussian, QuantileSet, SampleSet, norm_ppf  # noqa: E402
from calib_core.inference import regression as inf  # noqa: E402
from calib_core.metrics.regression import RegressionRows, summary_statistics  # noqa: E402

TAU9 = np.arange(1, 10) / 10
LAYOUTS = ("gaussian", "quantile", "ensemble")
ALTERNATIVES = {
    "σ × 0.8": ("over-confident", dict(sigma_factor=0.8)),
    "σ × 1.25": ("under-confident", dict(sigma_factor=1.25)),
    "mean + 0.2σ": ("biased high", dict(shift=0.2)),
    "Levi random σ": ("under-confident", dict(levi=True)),
    "Student-t3 truth": ("", dict(t3=True)),
}


def make(layout: str, n: int, rng: np.random.Generator, *, sigma_factor: float = 1.0, shift: float = 0.0,
         levi: bool = False, t3: bool = False, members: int = 50):
    """(y, dist) of the study's design (see the module docstring)."""
    if levi:
        x = rng.uniform(0.1, 1.0, n)
        mu, s = x, x
        y = mu + s * rng.standard_normal(n)
        mp, sp = mu, rng.uniform(1.0, 10.0, n)
    else:
        mu = rng.normal(size=n)
        s = rng.uniform(0.5, 2.0, n)
        eps = rng.standard_t(3, n) / np.sqrt(3.0) if t3 else rng.standard_normal(n)
        y = mu + s * eps
        mp, sp = mu + shift * s, s * sigma_factor
    null = not (levi or t3) and sigma_factor == 1.0 and shift == 0.0
    if layout == "gaussian":
        return y, Gaussian(mp, sp)
    if layout == "quantile":
        dist = QuantileSet(TAU9, mp[:, None] + sp[:, None] * norm_ppf(TAU9)[None, :])
        if null:
            y = dist.sample(rng)
        elif not (levi or t3):  # the truth is the unperturbed interpolated law
            y = QuantileSet(TAU9, mu[:, None] + s[:, None] * norm_ppf(TAU9)[None, :]).sample(rng)
        return y, dist
    if layout == "ensemble":
        return y, SampleSet(mp[:, None] + sp[:, None] * rng.standard_normal((n, members)))
    raise ValueError(layout)


def mc_se(rate: float, reps: int) -> float:
    return float(np.sqrt(max(rate * (1 - rate), 1e-12) / reps))


def false_alarms(sizes, reps: int, seed: int, layouts=LAYOUTS) -> None:
    print(f"\n### False alarms under perfect calibration ({reps} data sets per cell)\n")
    print("| layout | N | headline false alarms | goal (5% + 2 s.e.) | BH flags / set | expected chance flags "
          "| s/set |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    per_stat: dict[tuple[str, int], dict[str, float]] = {}
    for layout in layouts:
        for n in sizes:
            rng = np.random.default_rng([seed, n, LAYOUTS.index(layout)])
            alarms, flags, chance = 0, 0, 0.0
            pvals: dict[str, list[float]] = {}
            t0 = time.perf_counter()
            for i in range(reps):
                y, d = make(layout, n, rng)
                res = inf.infer_regression(y, d, seed=i, n_boot=200)
                alarms += res.verdict == "miscalibrated"
                flags += res.n_flags
                chance = res.expected_chance_flags
                for k, p in res.table["p_value"].items():
                    if np.isfinite(p):
                        pvals.setdefault(k, []).append(p)
            dt = (time.perf_counter() - t0) / reps
            rate = alarms / reps
            goal = 0.05 + 2 * mc_se(0.05, reps)
            mark = "✓" if rate <= goal else "✗"
            print(f"| {layout} | {n:,} | {rate:.3f} ± {mc_se(rate, reps):.3f} {mark} | {goal:.3f} "
                  f"| {flags / reps:.3f} | {chance:.2f} | {dt:.3f} |")
            per_stat[(layout, n)] = {k: float(np.mean(np.array(v) <= 0.05)) for k, v in pvals.items()}
    keys = sorted({k for v in per_stat.values() for k in v}, key=lambda k: (k not in inf.PRIMARY, k))
    cells = list(per_stat)
    print("\nPer statistic: share of calibrated data sets with p ≤ 0.05 (unadjusted; goal 0.05, "
          f"± {2 * mc_se(0.05, reps):.3f} at two s.e.)\n")
    print("| statistic | " + " | ".join(f"{lay[:5]} {n:,}" for lay, n in cells) + " |")
    print("|---|" + "---:|" * len(cells))
    for k in keys:
        print(f"| {k}{' (primary)' if k in inf.PRIMARY else ''} | "
              + " | ".join(f"{per_stat[c][k]:.3f}" if k in per_stat[c] else "–" for c in cells) + " |")


def power(sizes, reps: int, seed: int, layouts=LAYOUTS) -> None:
    print(f"\n### Power: headline 'miscalibrated' (and the expected direction named) — {reps} data sets per cell\n")
    print("| alternative | layout | " + " | ".join(f"N = {n:,}" for n in sizes) + " |")
    print("|---|---|" + "---:|" * len(sizes))
    for name, (direction, kw) in ALTERNATIVES.items():
        for layout in layouts:
            cells = []
            for n in sizes:
                rng = np.random.default_rng([seed + 1, n, LAYOUTS.index(layout), len(name)])
                hit = named = 0
                for i in range(reps):
                    y, d = make(layout, n, rng, **kw)
                    res = inf.infer_regression(y, d, seed=i, n_boot=200)
                    hit += res.verdict == "miscalibrated"
                    named += res.verdict == "miscalibrated" and (not direction or direction in res.direction)
                cells.append(f"{hit / reps:.2f}" + (f" ({named / reps:.2f})" if direction else ""))
            print(f"| {name} | {layout} | " + " | ".join(cells) + " |")


COVERED = ("z_mean", "z_std", "coverage_90", "coverage_50", "ence", "max_calibration_deviation", "calibration_rmse",
           "quantile_calibration_error", "miscalibration_area", "z_skewness", "z_excess_kurtosis", "nll", "crps",
           "interval_score_90", "rmse", "sharpness", "cv")


def interval_coverage(n: int, reps: int, seed: int, big: int = 2_000_000) -> None:
    print(f"\n### Interval coverage of the population value (Gaussian, N = {n:,}, {reps} data sets, 95% intervals)\n")
    scenarios = {"calibrated": {}, "σ × 0.8": dict(sigma_factor=0.8), "σ × 1.25": dict(sigma_factor=1.25),
                 "mean + 0.2σ": dict(shift=0.2)}
    pops = {}
    for name, kw in scenarios.items():
        rng = np.random.default_rng([seed + 2, 0])
        y, d = make("gaussian", big, rng, **kw)
        pop = summary_statistics(RegressionRows(y, d))
        if name == "calibrated":  # exact population values of a calibrated forecaster
            for k in ("ence", "max_calibration_deviation", "calibration_rmse", "quantile_calibration_error",
                      "miscalibration_area", "z_mean", "z_skewness", "z_excess_kurtosis"):
                pop[k] = 0.0
            pop.update(z_std=1.0, coverage_90=0.9, coverage_50=0.5)
        pops[name] = pop
    print("| statistic | interval | " + " | ".join(scenarios) + " |")
    print("|---|---|" + "---:|" * len(scenarios))
    hits = {name: {k: 0 for k in COVERED} for name in scenarios}
    method = {}
    for name, kw in scenarios.items():
        rng = np.random.default_rng([seed + 3, n])
        for i in range(reps):
            y, d = make("gaussian", n, rng, **kw)
            t = inf.infer_regression(y, d, seed=i).table
            for k in COVERED:
                lo, hi = t.loc[k, "ci_low"], t.loc[k, "ci_high"]
                hits[name][k] += bool(lo <= pops[name][k] <= hi)
                method[k] = t.loc[k, "interval"]
    for k in COVERED:
        print(f"| {k} | {method[k]} | " + " | ".join(f"{hits[s][k] / reps:.3f}" for s in scenarios) + " |")
    print(f"\n(two Monte-Carlo s.e. at 0.95: ± {2 * mc_se(0.95, reps):.3f}; population values from N = {big:,} rows, "
          "exact 0 / 1 / nominal for the calibrated forecaster)")


def cost(n: int = 1_000_000, repeat: int = 3) -> None:
    print(f"\n### Cost at N = {n:,} Gaussian rows (best of {repeat}; load average {os.getloadavg()[0]:.1f})\n")
    rng = np.random.default_rng(0)
    y, d = make("gaussian", n, rng, sigma_factor=0.9)
    inf.warm_up()  # the once-per-process tables (N-only nulls), cached
    point, total = [], []
    for _ in range(repeat):
        t0 = time.perf_counter()
        rows = RegressionRows(y, d)
        values = summary_statistics(rows)
        t1 = time.perf_counter()
        inf.infer_regression(None, rows=rows, values=values)
        t2 = time.perf_counter()
        point.append(t1 - t0)
        total.append(t2 - t0)
    p, t = min(point), min(total)
    print("| point estimates | point + inference | ratio |\n|---:|---:|---:|")
    print(f"| {p:.3f} s | {t:.3f} s | {t / p:.2f}× |")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--task", choices=["regression", "classification"], default="regression")
    ap.add_argument("--sizes", type=int, nargs="+", default=[200, 1000, 10000])
    ap.add_argument("--reps", type=int, default=1000, help="calibrated data sets per false-alarm cell")
    ap.add_argument("--power-reps", type=int, default=200)
    ap.add_argument("--coverage-reps", type=int, default=500)
    ap.add_argument("--coverage-n", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=2024)
    ap.add_argument("--sections", nargs="+", default=["false-alarms", "power", "coverage", "cost"],
                    choices=["false-alarms", "power", "coverage", "cost"])
    ap.add_argument("--layouts", nargs="+", default=list(LAYOUTS), choices=list(LAYOUTS))
    ap.add_argument("--quick", action="store_true", help="200 / 50 / 100 data sets, N = 200 and 1,000")
    args = ap.parse_args(argv)
    if args.task != "regression":
        print("classification: python bench/verdicts_classification.py (K = 2, 10, 100; same sections)")
        return 2
    if args.quick:
        args.sizes, args.reps, args.power_reps, args.coverage_reps = [200, 1000], 200, 50, 100
    print(f"# Regression verdicts: simulation study (seed {args.seed})")
    t0 = time.perf_counter()
    if "false-alarms" in args.sections:
        false_alarms(args.sizes, args.reps, args.seed, args.layouts)
    if "power" in args.sections:
        power(args.sizes, args.power_reps, args.seed, args.layouts)
    if "coverage" in args.sections:
        interval_coverage(args.coverage_n, args.coverage_reps, args.seed)
    if "cost" in args.sections:
        cost()
    print(f"\n(total {time.perf_counter() - t0:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
