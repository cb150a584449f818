"""Cost of the heavy-tail lenses at 1e4, 1e5 and 1e6 Gaussian rows.

Prints medians of ``--repeat`` runs (CPU seconds of the process, all threads) and ratios to the page's point estimates
(``summary_statistics``, which now includes ZMS and mean log z²):

* ``point``: every metric of the Regression page's table (the budget's unit);
* ``zms point``: ZMS and mean log z² alone (one log per row);
* ``inference``: ``infer_regression`` (all tests, intervals, nulls; the issue-12 budget is ≤ 3× point);
* ``zms inference``: what ZMS and mean log z² add to it (inference minus inference without them: the block sums
  of log z², log² z² and the two tests);
* ``ence by bins``: ``ence_by_bins`` at 14 bin counts (2–100), 1,000 null draws each, on fresh rows (its own σ
  sort) and on rows whose σ order is already known (as after a diagnosis);
* ``QS decomposition``: ``quantile_score_decomposition`` at the 5 default levels with 1,000 bootstrap replicates
  (exact isotonic τ-quantile regression per level up to 262,144 rows, above on a grid of about 4,096 values with
  its error bound ``fit_bound``, printed after the table), and per level;
* ``QS CORP``: ``quantile_reliability`` at τ = 0.95 (the Regression page's CORP quantile reliability diagram for one
  level: the exact isotonic fit, its curve, and the 90% consistency band from 200 draws on 200 groups × 256 values).

``--decomposition-only`` times just the point estimates and the QS decomposition, interleaved (point, decomposition,
point, … so that both see the same load; the budget is their ratio); ``--against REV`` adds the decomposition as of
git revision ``REV`` (e.g. ``main``) to the same interleaved loop, old and new side by side.

Usage: ``nice -n 10 python bench/heavy_tails.py [--repeat 5] [--sizes 10000 100000 1000000]
[--decomposition-only] [--against main]``.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from calib_core.base.regression import Gaussian
from calib_core.inference import regression as inf
from calib_core.metrics import regression as rm
from calib_core.metrics import regression_tails as ht
from calib_core.metrics.regression_decomposition import quantile_reliability, quantile_score_decomposition


def median_time(fn, repeat: int) -> float:
    """Median CPU seconds of this process (all its threads) over ``repeat`` calls: on a machine shared with other
    jobs wall times measure the queue, CPU times the work (the figures and ratios printed are CPU)."""
    out = []
    for _ in range(repeat):
        t = time.process_time()
        fn()
        out.append(time.process_time() - t)
    return float(np.median(out))


def interleaved_times(fns: dict, repeat: int) -> dict:
    """Median CPU seconds of each function over ``repeat`` rounds, the functions called in turn within each round."""
    out: dict = {name: [] for name in fns}
    for _ in range(repeat):
        for name, fn in fns.items():
            t = time.process_time()
            fn()
            out[name].append(time.process_time() - t)
    return {name: float(np.median(v)) for name, v in out.items()}


def decomposition_at(rev: str):
    """``quantile_score_decomposition`` as of git revision ``rev``: the revision's module file, written by
    ``git show`` into a temporary directory, imported with the standard import machinery as a sibling module of this
    tree's ``calib_core.metrics`` (so its relative imports resolve here: the revision's decomposition runs on this
    tree's helpers).  The revision must have the layered layout (``calib_core/metrics/``); for an older one, check
    it out and run this benchmark there."""
    root = os.path.join(os.path.dirname(__file__), "..")
    path = "calib_core/metrics/regression_decomposition.py"
    source = subprocess.run(["git", "-C", root, "show", f"{rev}:{path}"], capture_output=True, check=True).stdout
    name = "calib_core.metrics._decomposition_at_" + "".join(c if c.isalnum() else "_" for c in rev)
    directory = tempfile.mkdtemp(prefix="decomposition_at_")
    file = os.path.join(directory, "decomposition.py")
    with open(file, "wb") as fh:
        fh.write(source)
    spec = importlib.util.spec_from_file_location(name, file)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module.quantile_score_decomposition


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    ap.add_argument("--decomposition-only", action="store_true",
                    help="time only the point estimates and the QS decomposition, interleaved")
    ap.add_argument("--against", metavar="REV",
                    help="also time the QS decomposition as of git revision REV (implies --decomposition-only)")
    args = ap.parse_args()
    print(f"load average at start: {os.getloadavg()[0]:.1f} ({os.cpu_count()} cores)")
    if args.decomposition_only or args.against:
        old = decomposition_at(args.against) if args.against else None
        print(f"{'N':>9} {'point':>8} {'QS dec.':>8} {'ratio':>6}" + (f" {'at ' + args.against:>12} {'ratio':>6}"
                                                                      if old else "") + "   (CPU s, interleaved)")
        for n in args.sizes:
            rng = np.random.default_rng(n)
            mu, s = rng.normal(size=n), rng.uniform(0.5, 2.0, n)
            y = mu + s * rng.standard_normal(n)
            d = Gaussian(mu, s)
            fns = {"point": lambda: rm.summary_statistics(rm.RegressionRows(y, d)),
                   "new": lambda: quantile_score_decomposition(y, d)}
            if old:
                fns["old"] = lambda: old(y, d)
            t = interleaved_times(fns, args.repeat)
            line = f"{n:>9,} {t['point']:8.3f} {t['new']:8.3f} {t['new'] / t['point']:6.2f}"
            if old:
                line += f" {t['old']:12.3f} {t['old'] / t['point']:6.2f}"
            print(line)
        print(f"load average at end: {os.getloadavg()[0]:.1f}")
        return
    print(f"{'N':>9} {'point':>8} {'zms pt':>8} {'inference':>10} {'zms inf':>8} {'ence/bins':>10} "
          f"{'(sorted)':>9} {'QS dec.':>8} {'QS CORP':>8} | ratios to point: {'zms':>5} {'inf':>5} {'zms inf':>7} "
          f"{'ence/bins':>9} {'QS dec.':>8} {'per level':>9} {'QS CORP':>8}")
    bounds = {}
    for n in args.sizes:
        rng = np.random.default_rng(n)
        mu, s = rng.normal(size=n), rng.uniform(0.5, 2.0, n)
        y = mu + s * rng.standard_normal(n)
        d = Gaussian(mu, s)

        def point():
            return rm.summary_statistics(rm.RegressionRows(y, d))

        t_point = median_time(point, args.repeat)
        rows = rm.RegressionRows(y, d)
        values = rm.summary_statistics(rows)

        def zms_point():
            r = rm.RegressionRows(y, d)
            return rm._stat_zms(r, None)

        t_zp = median_time(zms_point, args.repeat)

        def inference(values=values):
            return inf.infer_regression(None, rows=rows, values=values)

        t_inf = median_time(inference, args.repeat)
        without = {k: v for k, v in values.items() if k not in ("zms", "mean_log_z2")}
        saved = rows.__dict__.pop("_log_z2")
        original = inf.zms_tests
        inf.zms_tests = lambda *a, **k: None
        try:
            t_inf0 = median_time(lambda: inf.infer_regression(None, rows=rows, values=without), args.repeat)
        finally:
            inf.zms_tests = original
            rows.__dict__["_log_z2"] = saved
        t_bins = median_time(lambda: ht.ence_by_bins(rm.RegressionRows(y, d)), args.repeat)
        t_bins_sorted = median_time(lambda: ht.ence_by_bins(rows), args.repeat)
        t_dec = median_time(lambda: quantile_score_decomposition(y, d), args.repeat)
        bounds[n] = quantile_score_decomposition(y, d, n_boot=0)[["tau", "mcb", "fit_bound"]]
        t_corp = median_time(lambda: quantile_reliability(y, d, tau=0.95), args.repeat)
        extra = max(t_inf - t_inf0, 0.0)
        print(f"{n:>9,} {t_point:8.3f} {t_zp:8.3f} {t_inf:10.3f} {extra:8.3f} {t_bins:10.3f} {t_bins_sorted:9.3f} "
              f"{t_dec:8.3f} {t_corp:8.3f} | {'':>17}{t_zp / t_point:5.2f} {t_inf / t_point:5.2f} "
              f"{extra / t_point:7.2f} {t_bins / t_point:9.2f} {t_dec / t_point:8.2f} {t_dec / 5 / t_point:9.2f} "
              f"{t_corp / t_point:8.2f}")
    for n, b in bounds.items():
        print(f"N = {n:,}: MCB by level {b['mcb'].round(7).tolist()}, grid-fit bound {b['fit_bound'].round(7).tolist()}"
              " (0 = exact fit)")
    print(f"load average at end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
