"""Speed of smooth-ECE, ratio/TCE and PIT-band lenses (points 4, 5, 7, 9) beside the page's point estimates.

For N = 1e4, 1e5, 1e6 (K = 10, synthetic over-confident logits, as ``bench/classification.py``) this times, as medians
of ``--repeat`` interleaved rounds (wall clock and process CPU):

* ``point estimates``: ``cc.diagnose`` with intervals and nulls off and without the new statistics (what the
  Classification page computed before these lenses: every metric and reliability table);
* ``smooth ECE + test + interval``: the point estimate at the automatic bandwidth with its curve
  (``smooth_summaries``) and ``smooth_inference`` (1,000 null draws, 1,000 bootstrap replicates, 200 null σ*);
* ``ratio + interval + test``: Σf/Σy and its delta-method interval (its test sums the overall gap's existing null
  draws over the bins: no extra draws);
* ``TCE + test``: TCE and 1,000 null draws;
* ``simultaneous band``: ``ecdf_band`` for a new N (uncached: 4,000 simulated samples, bisection on γ).

Each new lens is reported with its ratio to the point estimates (target: at most 3×).

Usage::

    python bench/new_lenses.py [--sizes 10000 100000 1000000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import calib_core as cc  # noqa: E402
from calib_core.base import ecdf_bands  # noqa: E402
from calib_core.diagnosis.classification import classification_rows  # noqa: E402
from calib_core.metrics.classification_ratio import ratio_interval, ratio_of, tce_null  # noqa: E402
from calib_core.metrics.classification_smooth import smooth_inference, smooth_summaries  # noqa: E402
from calib_core.metrics.regression import DEFAULT_LEVELS  # noqa: E402


def data(n: int, k: int = 10, seed: int = 0) -> cc.PredictionSet:
    rng = np.random.default_rng(seed)
    z = rng.normal(0.0, 2.0, size=(n, k))
    p = np.exp(z - z.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    y = np.minimum((np.cumsum(p, axis=1) < rng.random(n)[:, None]).sum(axis=1), k - 1)
    return cc.PredictionSet(task="classification", labels=y, logits=1.5 * z)


def timed(fn) -> tuple[float, float]:
    w, c = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - w, time.process_time() - c


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f}; medians of {args.repeat} interleaved rounds (wall / CPU)\n")
    print("| N | point estimates | smooth ECE + test + interval | ratio + interval + test | TCE + test | "
          "simultaneous band (new N) |")
    print("|---|---|---|---|---|---|")
    for n in args.sizes:
        pset = data(n)
        rows = classification_rows(pset)
        f, y = rows.confidence, rows.correct
        jobs = {
            "point": lambda: cc.diagnose(pset, n_resamples=0, n_simulations=0, smooth=False, tce=False),
            "smooth": lambda: smooth_inference(f, y, estimate=smooth_summaries(rows)[0]["smooth_ece"],
                                               rng=np.random.default_rng(1)),
            "ratio": lambda: (ratio_of(f, y), ratio_interval(f, y)),
            "tce": lambda: tce_null(f, y, rng=np.random.default_rng(3)),
            "band": lambda: (ecdf_bands._gamma_cached.cache_clear(), ecdf_bands.ecdf_band(n, DEFAULT_LEVELS)),
        }
        times: dict[str, list[tuple[float, float]]] = {k: [] for k in jobs}
        for _ in range(args.repeat):
            for key, fn in jobs.items():
                times[key].append(timed(fn))
        med = {k: (statistics.median(t[0] for t in v), statistics.median(t[1] for t in v)) for k, v in times.items()}
        base_w, base_c = med["point"]

        def cell(key: str) -> str:
            w, c = med[key]
            return f"{w * 1e3:.0f} / {c * 1e3:.0f} ms (**{w / base_w:.2f}×** / {c / base_c:.2f}×)"

        print(f"| {n:.0e} | {base_w * 1e3:.0f} / {base_c * 1e3:.0f} ms | {cell('smooth')} | {cell('ratio')} | "
              f"{cell('tce')} | {cell('band')} |", flush=True)


if __name__ == "__main__":
    main()
