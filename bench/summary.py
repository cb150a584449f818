"""Mergeable summaries against the in-memory diagnosis on one machine.

For each layout: the time to summarise N rows (one chunk, median of ``--repeats``), the in-memory
``cc.diagnose`` point estimates on the same rows (no intervals, no tests) as the baseline, ``summary.report``'s
time, the summary's size on disk, the largest relative difference of the exact metrics from ``cc.diagnose`` and
the bracket widths of the bounded ones (KS, miscalibration area, reliability score).

    python bench/summary.py [--n 1000000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import calib_core as cc  # noqa: E402
from calib_core.base.predictions import ALL
from calib_core.scale import summary as S
from calib_core.scale.regression import BOUNDED_METRICS, UNAVAILABLE_METRICS, regression_bounds
from tests.scale.test_summary import classification_set, ensemble_set, gaussian_set, quantile_set  # noqa: E402


def _median_time(fn, repeats: int) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeats):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    n = args.n
    cases = [("gaussian", gaussian_set(n)), ("quantile (5 levels)", quantile_set(n)),
             ("ensemble (M = 10)", ensemble_set(n // 5)), ("classification K = 10", classification_set(n, 10)),
             ("classification binary", classification_set(n, 2))]
    print(f"{'layout':24s} {'rows':>9s} {'summarize s':>11s} {'rows/s':>10s} {'diagnose s':>10s} {'ratio':>6s} "
          f"{'report s':>8s} {'KiB':>7s} {'max rel diff':>12s}  bracket widths")
    for name, pset in cases:
        spec = S.spec_for(pset)
        t_sum, summ = _median_time(lambda: S.summarize(pset, spec=spec), args.repeats)
        t_diag, ref = _median_time(lambda: cc.diagnose(pset, n_resamples=0, n_simulations=0, diagrams=False),
                                   args.repeats)
        t_rep, rep = _median_time(lambda: S.report(summ), 1)
        size = len(summ.to_bytes()) / 1024
        got = S.report(summ, n_resamples=0, n_simulations=0, diagrams=False).table()["value"]
        want = ref.table()["value"]
        skip = set(BOUNDED_METRICS) | set(UNAVAILABLE_METRICS)
        if isinstance(pset.dist, cc.SampleSet):  # PIT-based: the hashed V differs from the in-memory draw
            skip |= {"calibration_rmse", "quantile_calibration_error"}
        rel = max(abs(got[k] - v) / max(abs(v), 1e-300) for k, v in want.items() if k not in skip and np.isfinite(v))
        widths = ""
        if pset.task == "regression":
            b = regression_bounds(summ.parts[("model", ALL)], spec)
            widths = ", ".join(f"{k.split('_')[0]} {hi - lo:.2g}" for k, (lo, hi) in b.items())
        rows = pset.n_rows
        print(f"{name:24s} {rows:>9,d} {t_sum:>11.2f} {rows / t_sum:>10,.0f} {t_diag:>10.2f} {t_sum / t_diag:>6.2f} "
              f"{t_rep:>8.2f} {size:>7.0f} {rel:>12.1e}  {widths}")


if __name__ == "__main__":
    main()
