"""Simulation study of the classification verdicts: false alarms, power, interval coverage.

For K = 2, 10 and 100 classes and N = 200, 1,000 and 10,000 rows, ``--sets`` data sets per cell are drawn from

* **calibrated**: logits z_ik ~ N(0, s²) (s = ``--scale``), predictions p_i = softmax(z_i) and labels
  y_i ~ Categorical(p_i) — perfectly calibrated by construction;
* **T = 1.5** (under-confident) and **T = 1/1.5** (over-confident): the same labels (from softmax(z_i)) but the
  reported predictions are softmax(z_i / T) — a temperature miscalibration.

Each set goes through ``infer_classification`` (``--n-null`` null draws, ``--n-boot`` bootstrap replicates).
Reported per cell: the rate of the headline verdict "miscalibrated" (false-alarm rate for calibrated data, with its
Monte-Carlo standard error; goal ≤ 5 % + 2 s.e.; power otherwise) and of the named direction, the raw rejection
rate (p ≤ 0.05) of every calibration statistic, the rate of any secondary BH flag, and the coverage of every
interval for the population value — computed once per (K, scenario) on ``--pop-n`` rows with the correctness
Rao–Blackwellised (E[1(ŷ = y)] = p_true,ŷ, E[1(y = k)] = p_true,k), so it carries no sampling noise.  MCE's
target is the population's largest bin gap over the bins the data set fills (what its interval is for: a bin no
row falls in says nothing); ``mce_all_bins`` scores the same interval against the maximum over every bin.

``--timing`` instead measures the cost: at N = 1e4, 1e5, 1e6 and K = 10 (the over-confident
synthetic logits of ``bench/classification.py``), the best of ``--rounds`` interleaved runs of the point estimates
``cc.diagnose(pset, n_resamples=0, n_simulations=0)`` and of the whole inference (``classification_rows`` +
``infer_classification`` with its defaults: 2,000 null draws, 1,000 bootstrap replicates).

Usage::

    python bench/verdicts_classification.py                  # 1,000 calibrated sets per cell (long: background)
    python bench/verdicts_classification.py --sets 200 --max-seconds 120
    python bench/verdicts_classification.py --timing
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import calib_core as cc  # noqa: E402
from calib_core.diagnosis.classification import classification_rows  # noqa: E402
from calib_core.inference.classification import infer_classification  # noqa: E402
from calib_core.metrics.classification import ClassificationRows, confidence_bins  # noqa: E402

OUT = ROOT / "bench" / "out"
SCENARIOS = {"calibrated": 1.0, "T=1.5 (under-confident)": 1.5, "T=1/1.5 (over-confident)": 1.0 / 1.5}
STATS = ["ece", "top_bin_gap", "mce", "confidence_gap", "classwise_ece", "ece_positive", "mce_positive"]
INTERVALS = [*STATS, "accuracy", "mean_confidence", "nll", "brier"]


def softmax(z: np.ndarray) -> np.ndarray:
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def draw(n: int, k: int, temperature: float, scale: float, rng: np.random.Generator):
    """(labels, reported probabilities, true probabilities) of one data set."""
    z = rng.normal(0.0, scale, size=(n, k))
    p_true = softmax(z)
    q = p_true if temperature == 1.0 else softmax(z / temperature)
    u = rng.random(n)
    y = np.minimum((np.cumsum(p_true, axis=1) < u[:, None]).sum(axis=1), k - 1)
    return y, q, p_true


def population(k: int, temperature: float, scale: float, n_pop: int, n_bins: int, seed: int) -> dict:
    """Population values (same bins) of every statistic, Rao–Blackwellised over the labels."""
    rng = np.random.default_rng(seed)
    _, q, pt = draw(n_pop, k, temperature, scale, rng)
    rows = ClassificationRows(np.zeros(n_pop, dtype=int), q, n_bins=n_bins)
    conf, idx = rows.confidence, rows.bin_index
    hit = pt[np.arange(n_pop), rows.pred]  # E[correct | x]
    cnt = np.bincount(idx, minlength=n_bins).astype(float)
    dev = np.bincount(idx, weights=hit - conf, minlength=n_bins)
    out = {
        "ece": float(np.abs(dev).sum() / n_pop),
        "mce": float(np.max(np.abs(dev[cnt > 0]) / cnt[cnt > 0])),
        "accuracy": float(hit.mean()),
        "mean_confidence": float(conf.mean()),
        "confidence_gap": float((conf - hit).mean()),
        "bin_dev": dev / n_pop,  # per-bin mass × (acc − conf), for the top-bin gap of each set's top region
        "bin_mass": cnt / n_pop,
        "nll": float(-(pt * np.log(np.clip(q, 1e-300, None))).sum(axis=1).mean()),
        "brier": float(((q * q).sum(axis=1) - 2.0 * (pt * q).sum(axis=1) + 1.0).mean()),
    }
    # class-wise: cells (k, bin(q_ik)), deviation Σ (p_true,ik − q_ik)
    b, _ = confidence_bins(q.reshape(-1), n_bins, "uniform", "right")
    cells = (b.reshape(n_pop, k) + np.arange(k) * n_bins).ravel()
    cdev = np.bincount(cells, weights=(pt - q).ravel(), minlength=k * n_bins)
    out["classwise_ece"] = float(np.abs(cdev).sum() / (n_pop * k))
    if k == 2:
        bp, _ = confidence_bins(q[:, 1], n_bins, "uniform", "right")
        pc = np.bincount(bp, minlength=n_bins).astype(float)
        pd_ = np.bincount(bp, weights=pt[:, 1] - q[:, 1], minlength=n_bins)
        out["ece_positive"] = float(np.abs(pd_).sum() / n_pop)
        out["mce_positive"] = float(np.max(np.abs(pd_[pc > 0]) / pc[pc > 0]))
        out["pos_bin_dev"], out["pos_bin_mass"] = pd_ / n_pop, pc / n_pop
    return out


def _filled(conf: np.ndarray, n_bins: int = 15) -> np.ndarray:
    """Bins (equal-width, as the inference) that hold at least one of these confidences."""
    idx, _ = confidence_bins(conf, n_bins, "uniform", "right")
    return np.bincount(idx, minlength=n_bins) > 0


def _max_gap(dev: np.ndarray, mass: np.ndarray, filled: np.ndarray) -> float:
    """Population max |acc − conf| over the filled bins (a filled bin of population mass 0 counts 0)."""
    use = filled & (mass > 0)
    return float(np.max(np.abs(dev[use]) / mass[use])) if use.any() else 0.0


def run_cell(k, n, temperature, pop, args, seed) -> dict:
    rng = np.random.default_rng(seed)
    n_sets = args.sets if temperature == 1.0 else args.sets_power
    head = np.zeros(n_sets, bool)
    direction = []
    rej = {s: [] for s in STATS}
    pvals = {s: [] for s in STATS}
    any_bh = np.zeros(n_sets, bool)
    cover = {s: [] for s in [*INTERVALS, "mce_all_bins"]}
    t0 = time.perf_counter()
    done = 0
    for i in range(n_sets):
        if args.max_seconds and time.perf_counter() - t0 > args.max_seconds:
            break
        done += 1
        y, q, _ = draw(n, k, temperature, args.scale, rng)
        r = infer_classification(
            labels=y, probs=q, n_null=args.n_null, n_boot=args.n_boot, seed=int(rng.integers(2**31)),
            classwise=not args.no_classwise,
        )
        head[i] = r.miscalibrated
        direction.append(r.direction)
        t = r.table
        any_bh[i] = bool(t.loc[t["family"] == "secondary", "flag"].any())
        for s in STATS:
            if s in t.index:
                rej[s].append(t.loc[s, "p_value"] <= 0.05)
                pvals[s].append(t.loc[s, "p_value"])
        lo_bin, hi_bin = r.top_bins
        region = slice(lo_bin, hi_bin + 1)
        mass = pop["bin_mass"][region].sum()
        pop_top = -pop["bin_dev"][region].sum() / mass if mass > 0 else np.nan
        # MCE's interval is for the largest bin gap over the bins this data set fills (a bin no row falls in says
        # nothing); "mce_all_bins" scores the same interval against the maximum over every bin of the population
        targets = {"top_bin_gap": pop_top, "mce": _max_gap(pop["bin_dev"], pop["bin_mass"], _filled(q.max(axis=1)))}
        if k == 2:
            targets["mce_positive"] = _max_gap(pop["pos_bin_dev"], pop["pos_bin_mass"], _filled(q[:, 1]))
        for s in INTERVALS:
            if s in t.index:
                target = targets.get(s, pop.get(s, np.nan))
                cover[s].append(bool(t.loc[s, "ci_low"] <= target <= t.loc[s, "ci_high"]))
        if "mce" in t.index:
            cover["mce_all_bins"].append(bool(t.loc["mce", "ci_low"] <= pop["mce"] <= t.loc["mce", "ci_high"]))
    dt = (time.perf_counter() - t0) / done
    head = head[:done]
    any_bh = any_bh[:done]
    rate = float(head.mean())
    res = {
        "K": k, "N": n, "T": temperature, "sets": done,
        "headline": rate, "headline_se": math.sqrt(max(rate * (1 - rate), 0.05 * 0.95) / done),
        "over": float(np.mean([d == "over-confident" for d in direction])),
        "under": float(np.mean([d == "under-confident" for d in direction])),
        "any_bh": float(any_bh.mean()),
        "reject": {s: float(np.mean(v)) for s, v in rej.items() if v},
        "p_below_0.1": {s: float(np.mean(np.array(v) <= 0.1)) for s, v in pvals.items() if v},
        "coverage": {s: float(np.mean(v)) for s, v in cover.items() if v},
        "seconds_per_set": dt,
    }
    return res


def fmt_table(results: list[dict]) -> str:
    lines = []
    lines.append("| scenario | K | N | sets | headline rate (± s.e.) | over / under | any BH flag | "
                 "p ≤ 0.05: ECE / top / MCE / gap / cw-ECE / ECE+ | s per set |")
    lines.append("|---|---|---|---|---|---|---|---|---|")
    for r in results:
        scen = next(name for name, t in SCENARIOS.items() if abs(t - r["T"]) < 1e-12)
        rj = r["reject"]
        rej = " / ".join(f"{rj[s]:.3f}" if s in rj else "–" for s in
                         ["ece", "top_bin_gap", "mce", "confidence_gap", "classwise_ece", "ece_positive"])
        lines.append(f"| {scen} | {r['K']} | {r['N']} | {r['sets']} | {r['headline']:.3f} ± {r['headline_se']:.3f} | "
                     f"{r['over']:.2f} / {r['under']:.2f} | {r['any_bh']:.3f} | {rej} | {r['seconds_per_set']:.2f} |")
    lines.append("")
    lines.append("Interval coverage of the population value (nominal 0.95):")
    lines.append("")
    cols = ["ece", "classwise_ece", "ece_positive", "mce", "mce_all_bins", "mce_positive", "top_bin_gap",
            "confidence_gap", "accuracy", "mean_confidence", "nll", "brier"]
    lines.append("| scenario | K | N | " + " | ".join(cols) + " |")
    lines.append("|---|---|---|" + "---|" * len(cols))
    for r in results:
        scen = next(name for name, t in SCENARIOS.items() if abs(t - r["T"]) < 1e-12)
        cv = r["coverage"]
        lines.append(f"| {scen} | {r['K']} | {r['N']} | " + " | ".join(f"{cv[c]:.3f}" if c in cv else "–"
                                                                     for c in cols) + " |")
    return "\n".join(lines)


def timing(sizes, rounds: int, k: int = 10) -> str:
    """Point estimates vs the whole inference, best of ``rounds`` interleaved runs, per N."""
    lines = ["| N | K | point estimates (s) | inference (s) | ratio | inference parts (s) |",
             "|---|---|---|---|---|---|"]
    for n in sizes:
        rng = np.random.default_rng(0)
        z = rng.normal(size=(n, k)) * 2.0
        y = np.minimum((np.cumsum(softmax(z / 1.5), axis=1) < rng.random(n)[:, None]).sum(1), k - 1)
        pset = cc.PredictionSet(task="classification", source="synthetic", layout="probs", labels=y,
                                probs=softmax(z), n_read=n)
        best_p = best_i = math.inf
        parts = {}
        for _ in range(rounds):
            t = time.perf_counter()
            cc.diagnose(pset, n_resamples=0, n_simulations=0)
            best_p = min(best_p, time.perf_counter() - t)
            t = time.perf_counter()
            res = infer_classification(classification_rows(pset))
            dt = time.perf_counter() - t
            if dt < best_i:
                best_i, parts = dt, res.timings
        part_text = ", ".join(f"{a} {b:.3f}" for a, b in parts.items() if a != "total")
        lines.append(f"| {n:,} | {k} | {best_p:.3f} | {best_i:.3f} | {best_i / best_p:.2f} | {part_text} |")
        print(lines[-1], flush=True)
    return "\n".join(lines)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sets", type=int, default=1000, help="calibrated data sets per cell (default 1000)")
    ap.add_argument("--sets-power", type=int, default=200, help="miscalibrated data sets per cell (default 200)")
    ap.add_argument("--max-seconds", type=float, default=0.0,
                    help="stop a cell after this many seconds (0: never); the table gives the sets actually run")
    ap.add_argument("--n-null", type=int, default=1000, help="null draws per test (default 1000)")
    ap.add_argument("--n-boot", type=int, default=500, help="bootstrap replicates (default 500)")
    ap.add_argument("--scale", type=float, default=2.0, help="sd of the logits (default 2)")
    ap.add_argument("--pop-n", type=int, default=2_000_000, help="rows for the population values")
    ap.add_argument("--K", type=int, nargs="*", default=[2, 10, 100])
    ap.add_argument("--N", type=int, nargs="*", default=[200, 1000, 10000])
    ap.add_argument("--scenarios", nargs="*", default=list(SCENARIOS), choices=list(SCENARIOS))
    ap.add_argument("--no-classwise", action="store_true", help="skip class-wise ECE (faster)")
    ap.add_argument("--out", default=str(OUT / "verdicts_classification"))
    ap.add_argument("--timing", action="store_true", help="measure the cost instead (point estimates vs inference)")
    ap.add_argument("--rounds", type=int, default=3, help="timing rounds (best of)")
    ap.add_argument("--timing-sizes", type=int, nargs="*", default=[10_000, 100_000, 1_000_000])
    args = ap.parse_args(argv)
    if args.timing:
        text = timing(args.timing_sizes, args.rounds)
        print(text)
        out = Path(args.out + "_timing")
        out.parent.mkdir(parents=True, exist_ok=True)
        out.with_suffix(".md").write_text(text + "\n")
        return
    results = []
    for scen in args.scenarios:  # calibrated cells first
        t = SCENARIOS[scen]
        for k in args.K:
            pop = population(k, t, args.scale, args.pop_n, 15, seed=10_000 + k)
            for n in args.N:
                r = run_cell(k, n, t, pop, args, seed=k * 1_000_003 + n * 7 + int(round(100 * t)))
                results.append(r)
                print(json.dumps(r), flush=True)
    text = fmt_table(results)
    print(text)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".md").write_text(text + "\n")
    out.with_suffix(".json").write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
