"""Inference from a summary, as statistics: coverage of the summary report's new intervals, the size of its new tests,
and how often its verdict and headline sentence are those of ``cc.diagnose`` on the same rows.

Regression: Gaussian forecasts N(μ, σ²), targets drawn from the TRUE law N(μ, (sσ)²) (s = 1 calibrated, s = 1.2
over-confident); the population values of KS, calibration RMSE, the l2 QCE and the miscalibration area follow from
the PIT's law G(p) = Φ(Φ⁻¹(p)/s).  Classification (K = 10): logits, labels drawn from softmax(logits/T); the
population overall gap E[conf] − P(correct) and ratio E[conf]/P(correct) from 2·10⁶ rows of the same law (their
true probabilities, no label noise).  Then, side by side on the same rows, the summary report against ``cc.diagnose``
(verdict, sentence) and the CPU seconds of both at 1e5 rows.

    python bench/summary_inference.py [--quick]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
from scipy import stats  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import calib_core as cc  # noqa: E402
from calib_core.scale import summary as S  # noqa: E402

PIT_STATS = ("max_calibration_deviation", "calibration_rmse", "quantile_calibration_error", "miscalibration_area")
NEW_TESTS = ("miscalibration_area", "reliability_score", "z_skewness", "z_excess_kurtosis")


def gaussian_rows(n: int, s: float, rng: np.random.Generator) -> cc.PredictionSet:
    mu = rng.standard_normal(n)
    sd = np.exp(0.4 * rng.standard_normal(n))
    y = mu + s * sd * rng.standard_normal(n)
    return cc.PredictionSet(task="regression", y=y, dist=cc.Gaussian(mu, sd), layout="gaussian",
                            row_number=np.arange(1, n + 1, dtype=np.int64))


def population_pit(spec, s: float) -> dict[str, float]:
    def g(p):
        return stats.norm.cdf(stats.norm.ppf(p) / s)
    grid = np.linspace(0.0, 1.0, 400_001)[1:-1]
    lev, qlev = np.asarray(spec.levels, float), np.asarray(spec.qce_levels, float)
    inner = (lev > 0) & (lev < 1)
    lev_g = np.where(lev >= 1, 1.0, 0.0)
    lev_g[inner] = g(lev[inner])
    return {"max_calibration_deviation": float(np.max(np.abs(g(grid) - grid))),
            "calibration_rmse": float(np.sqrt(np.mean((lev_g - lev) ** 2))),
            "quantile_calibration_error": float(np.mean((g(qlev) - qlev) ** 2)),
            "miscalibration_area": float(np.mean(np.abs(g(grid) - grid)))}


def regression_study(n: int, reps: int, s: float, seed: int) -> dict:
    rng = np.random.default_rng(np.random.SeedSequence([seed, n, int(100 * s)]))
    cover = dict.fromkeys(PIT_STATS, 0)
    width = {k: [] for k in PIT_STATS}
    alarms = dict.fromkeys((*NEW_TESTS, "verdict"), 0)
    truth = None
    for _ in range(reps):
        pset = gaussian_rows(n, s, rng)
        spec = S.spec_for(pset, by_group=False)
        truth = truth or population_pit(spec, s)
        rep = S.report(S.summarize(pset, spec=spec), n_resamples=1, n_simulations=500, diagrams=False)
        t = rep.table()
        for k, v in truth.items():
            cover[k] += int(t.loc[k, "ci_low"] <= v <= t.loc[k, "ci_high"])
            width[k].append(t.loc[k, "ci_high"] - t.loc[k, "ci_low"])
        for k in NEW_TESTS:
            alarms[k] += int(t.loc[k, "p_value"] <= 0.05)
        alarms["verdict"] += int(rep.verdict()["verdict"] == "miscalibrated")
    return {"cover": {k: v / reps for k, v in cover.items()},
            "width": {k: float(np.median(v)) for k, v in width.items()},
            "alarm": {k: v / reps for k, v in alarms.items()}, "truth": truth}


def classification_rows(n: int, temperature: float, rng: np.random.Generator, k: int = 10):
    logits = 2.0 * rng.standard_normal((n, k))
    probs = cc.softmax(logits)
    true = cc.softmax(logits / temperature)
    labels = np.minimum((np.cumsum(true, axis=1) < rng.random(n)[:, None]).sum(axis=1), k - 1)
    top = probs.argmax(axis=1)
    return (cc.PredictionSet(task="classification", labels=labels, probs=probs, layout="probs",
                             row_number=np.arange(1, n + 1, dtype=np.int64)),
            probs.max(axis=1), true[np.arange(n), top])


def classification_study(n: int, reps: int, temperature: float, seed: int) -> dict:
    rng = np.random.default_rng(np.random.SeedSequence([seed, n, int(100 * temperature), 7]))
    _, conf, p_true = classification_rows(2_000_000, temperature, np.random.default_rng(99))
    truth = {"confidence_gap": float(conf.mean() - p_true.mean()),
             "calibration_ratio": float(conf.mean() / p_true.mean())}
    cover = dict.fromkeys(truth, 0)
    for _ in range(reps):
        pset, _, _ = classification_rows(n, temperature, rng)
        t = S.report(S.summarize(pset, spec=S.spec_for(pset, by_group=False)), n_resamples=500, n_simulations=200,
                     diagrams=False).table()
        for k, v in truth.items():
            cover[k] += int(t.loc[k, "ci_low"] <= v <= t.loc[k, "ci_high"])
    return {"cover": {k: v / reps for k, v in cover.items()}, "truth": truth}


def agreement(n: int, reps: int, seed: int) -> dict:
    """Verdict and sentence of the summary report against cc.diagnose on the same rows (Gaussian, s drawn from
    {1, 1.03, 1.1}; K = 10, T from {1, 1.1})."""
    rng = np.random.default_rng(np.random.SeedSequence([seed, n, 3]))
    same = {"regression verdict": 0, "regression sentence": 0, "classification verdict": 0,
            "classification sentence": 0}
    for _ in range(reps):
        pset = gaussian_rows(n, float(rng.choice([1.0, 1.03, 1.1])), rng)
        a = S.report(S.summarize(pset, spec=S.spec_for(pset, by_group=False)), n_resamples=0, n_simulations=500,
                     diagrams=False).verdict()
        b = cc.diagnose(pset, n_resamples=0, n_simulations=500, diagrams=False, by_group=False).verdict()
        same["regression verdict"] += int(a["verdict"] == b["verdict"])
        same["regression sentence"] += int(a["sentence"] == b["sentence"])
        cset, _, _ = classification_rows(n, float(rng.choice([1.0, 1.1])), rng)
        a = S.report(S.summarize(cset, spec=S.spec_for(cset, by_group=False)), n_resamples=0, n_simulations=500,
                     diagrams=False).verdict()
        b = cc.diagnose(cset, n_resamples=0, n_simulations=500, diagrams=False, by_group=False).verdict()
        same["classification verdict"] += int(a["verdict"] == b["verdict"])
        same["classification sentence"] += int(a["sentence"] == b["sentence"])
    return {k: v / reps for k, v in same.items()}


def cpu_cost(n: int, repeats: int = 3) -> tuple[float, float, float]:
    pset = gaussian_rows(n, 1.05, np.random.default_rng(5))
    spec = S.spec_for(pset, by_group=False)
    summ = S.summarize(pset, spec=spec)
    S.report(summ, diagrams=False)  # warm the N-only null tables
    t_rep, t_diag = [], []
    for _ in range(repeats):
        t = time.process_time()
        S.report(summ, diagrams=False)
        t_rep.append(time.process_time() - t)
        fresh = pset.take(np.arange(pset.n_rows))  # a new set each time: nothing cached from the last call
        t = time.process_time()
        cc.diagnose(fresh, diagrams=False, by_group=False)
        t_diag.append(time.process_time() - t)
    a, b = statistics.median(t_rep), statistics.median(t_diag)
    return a, b, a / b


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer data sets (a smoke run)")
    args = ap.parse_args()
    q = 5 if args.quick else 1
    print(f"load average: {open('/proc/loadavg').read().split()[:3]}")
    level = 0.95
    print("\nRegression, Gaussian forecasts, targets from N(μ, (sσ)²); nominal level 95%")
    print(f"{'N':>7s} {'sets':>5s} {'s':>4s} | " + " | ".join(f"{k[:22]:>22s}" for k in PIT_STATS))
    for n, reps in ((2_000, 1_000 // q), (20_000, 200 // q)):
        for s in (1.0, 1.2):
            r = regression_study(n, reps, s, 2026)
            se = np.sqrt(level * (1 - level) / reps)
            cells = [f"{r['cover'][k]:.3f} (w {r['width'][k]:.2g})" for k in PIT_STATS]
            print(f"{n:7d} {reps:5d} {s:4.1f} | " + " | ".join(f"{c:>22s}" for c in cells) + f"   (± {3 * se:.3f})")
            if s == 1.0:
                print(f"{'':19s}false alarms at 5%: " + ", ".join(f"{k} {v:.3f}" for k, v in r["alarm"].items()))
            else:
                print(f"{'':19s}rejections at 5%: " + ", ".join(f"{k} {v:.3f}" for k, v in r["alarm"].items()))
    print("\nClassification K = 10, labels from softmax(logits/T); nominal 95%")
    for n, reps in ((5_000, 200 // q),):
        for temp in (1.0, 1.3):
            r = classification_study(n, reps, temp, 2026)
            print(f"N {n} sets {reps} T {temp}: " + ", ".join(f"{k} {v:.3f}" for k, v in r["cover"].items())
                  + f"  (truth {', '.join(f'{k} {v:.4g}' for k, v in r['truth'].items())}; ± "
                    f"{3 * np.sqrt(level * (1 - level) / reps):.3f})")
    print("\nSame rows, summary report vs cc.diagnose: share of data sets with the same verdict / sentence")
    for n, reps in ((20_000, 100 // q),):
        print(f"N {n}, {reps} sets each: " + ", ".join(f"{k} {v:.2f}" for k, v in agreement(n, reps, 2026).items()))
    a, b, ratio = cpu_cost(100_000)
    print(f"\nCPU seconds at 1e5 rows (Gaussian, medians of 3): summary report {a:.3f}, cc.diagnose {b:.3f}, "
          f"ratio {ratio:.2f}")


if __name__ == "__main__":
    main()
