"""Benchmark: regression diagnostics of calib_core beside uncertainty-toolbox and netcal, in one process.

    python bench/regression.py                 # N = 1e4, 1e5, 1e6 timings + ratios, then the 1e7 memory run
    python bench/regression.py --sizes 1e4 1e5 --no-memory

For each N the same synthetic Gaussian predictions (heteroscedastic, mildly overconfident) go to

* ``cc.diagnose`` with intervals and tests off (n_resamples = 0, n_simulations = 0: the point estimates, metrics
  + all diagram tables) and on (the defaults: 1,000 block-bootstrap replicates, 2,000 null draws — every interval,
  p-value, perfect-calibration value and the headline verdict), side by side with their ratio (target: at most
  3× at 1e6 rows) — medians of at least 3 interleaved rounds (off, on, off, on, …);
* uncertainty-toolbox 0.1.1: its equivalent metrics (accuracy, average calibration, sharpness, scoring
  rules: ``get_all_metrics`` minus the adversarial part) and the full ``get_all_metrics`` with its
  adversarial group calibration;
* netcal 1.4.0: ENCE + UCE + QCE + NLL (``netcal.metrics``);
* a single ``np.argsort`` of N values (the yardstick).

``cc.diagnose`` runs its three sorts (z, σ, |ε|) concurrently on ``calib_core.base.binning.SORT_THREADS``
threads; the "1 sort thread" column is the same call with the sorts one after another.  The load
average is printed: on a busy machine the concurrent sorts gain nothing and every ratio drifts.

Peak memory of a 1e7-row ``cc.diagnose`` (CIs off) is measured in a child process (ru_maxrss), together
with the memory of its input arrays.  Other times are the best of ``--repeat`` runs (wall clock).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import calib_core as cc  # noqa: E402
from calib_core.base import binning  # noqa: E402
from calib_core.base.predictions import PredictionSet  # noqa: E402


def make_data(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.uniform(0.1, 1.0, n)
    mean = np.sin(3 * x) + 0.05 * rng.standard_normal(n)
    std = 0.2 * x + 0.02
    y = np.sin(3 * x) + 1.3 * (0.2 * x + 0.02) * rng.standard_normal(n)
    return mean, std, y


def best_time(fn, repeat: int) -> float:
    best = np.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def median_pair(off, on, rounds: int) -> tuple[float, float]:
    """Median wall times of ``off`` and ``on`` over ``rounds`` interleaved rounds (off, on, off, on, …): both see the
    same load, so their ratio is fair on a shared machine."""
    t_off, t_on = [], []
    for _ in range(rounds):
        for fn, out in ((off, t_off), (on, t_on)):
            t0 = time.perf_counter()
            fn()
            out.append(time.perf_counter() - t0)
    return float(np.median(t_off)), float(np.median(t_on))


def quiet(fn):
    def run():
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            return fn()

    return run


def ours(mean, std, y, **opts):
    pset = PredictionSet(task="regression", y=y, dist=cc.Gaussian(mean, std))
    return cc.diagnose(pset, **opts)


def ut_equivalent(mean, std, y):
    import uncertainty_toolbox.metrics as utm

    utm.get_all_accuracy_metrics(mean, y, verbose=False)
    utm.get_all_average_calibration(mean, std, y, 100, verbose=False)
    utm.get_all_sharpness_metrics(std, verbose=False)
    utm.get_all_scoring_rule_metrics(mean, std, y, 99, True, verbose=False)


def ut_all(mean, std, y):
    import uncertainty_toolbox as uct

    uct.get_all_metrics(mean, std, y, verbose=False)


def netcal_metrics(mean, std, y):
    from netcal.metrics import ENCE, NLL, QCE, UCE

    ENCE(bins=10).measure((mean, std), y, kind="meanstd")
    UCE(bins=10).measure((mean, std), y, kind="meanstd")
    QCE(bins=10, marginal=True).measure((mean, std), y, q=np.linspace(0.05, 0.95, 19), kind="meanstd")
    NLL().measure((mean, std), y, kind="meanstd")


def memory_child(n: int) -> None:
    """Run in a child: diagnose n rows with CIs off and print peak RSS."""
    mean, std, y = make_data(n)
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t0 = time.perf_counter()
    ours(mean, std, y, n_resamples=0, n_simulations=0)
    elapsed = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"n": n, "seconds": elapsed, "peak_rss_mb": peak / 1024, "rss_before_mb": base / 1024,
                      "input_mb": 3 * n * 8 / 2**20}))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", nargs="*", type=float, default=[1e4, 1e5, 1e6])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--adversarial-max", type=float, default=1e5,
                    help="largest N for uncertainty-toolbox's adversarial group calibration (it is slow)")
    ap.add_argument("--no-memory", action="store_true")
    ap.add_argument("--ours-only", action="store_true", help="skip uncertainty-toolbox and netcal")
    ap.add_argument("--memory-n", type=float, default=1e7)
    ap.add_argument("--memory-child", type=float, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.memory_child:
        memory_child(int(args.memory_child))
        return

    rows = []
    for n in map(int, args.sizes):
        mean, std, y = make_data(n)
        rep = args.repeat if n <= 1e6 else 1
        t_sort = best_time(lambda: np.argsort(y), rep)
        ours(mean, std, y)  # warm the per-N null tables of the inference layer (cached once per process)
        t_off, t_on = median_pair(lambda: ours(mean, std, y, n_resamples=0, n_simulations=0),
                                  lambda: ours(mean, std, y), max(rep, 3))
        threads, binning.SORT_THREADS = binning.SORT_THREADS, 1
        t_off_1 = best_time(lambda: ours(mean, std, y, n_resamples=0, n_simulations=0), rep)
        binning.SORT_THREADS = threads
        if args.ours_only:
            t_ut = t_ut_all = t_nc = np.nan
        else:
            t_ut = best_time(quiet(lambda: ut_equivalent(mean, std, y)), rep)
            t_ut_all = best_time(quiet(lambda: ut_all(mean, std, y)), 1) if n <= args.adversarial_max else np.nan
            t_nc = best_time(quiet(lambda: netcal_metrics(mean, std, y)), rep)
        rows.append((n, t_sort, t_off, t_off_1, t_on, t_ut, t_ut_all, t_nc))
        print(f"N={n:>9,}: argsort {t_sort:.4f}s  ours(CIs off) {t_off:.4f}s  (1 sort thread {t_off_1:.4f}s)  "
              f"ours(intervals+nulls on) {t_on:.3f}s ({t_on / t_off:.2f}×)  UT {t_ut:.3f}s  "
              f"UT+adv {t_ut_all:.2f}s  netcal {t_nc:.3f}s  "
              f"load average {os.getloadavg()[0]:.2f}", flush=True)

    print(f"\nsort threads: {binning.SORT_THREADS}; load average (1 min) at the end: {os.getloadavg()[0]:.2f}")
    print("| N | np.argsort | ours, point estimates (median) | ours, 1 sort thread | "
          "ours, intervals + nulls on (median) | on / off | "
          "UT equivalent | UT get_all_metrics (adv.) | netcal ENCE+UCE+QCE+NLL | UT / ours | netcal / ours | "
          "ours / argsort | ours (1 thread) / argsort |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for n, t_sort, t_off, t_off_1, t_on, t_ut, t_ut_all, t_nc in rows:
        adv = "not run" if np.isnan(t_ut_all) else f"{t_ut_all:.2f} s"
        print(f"| {n:.0e} | {t_sort * 1e3:.1f} ms | {t_off * 1e3:.1f} ms | {t_off_1 * 1e3:.1f} ms | "
              f"{t_on * 1e3:.0f} ms | **{t_on / t_off:.2f}×** | "
              f"{t_ut * 1e3:.1f} ms | {adv} | {t_nc * 1e3:.1f} ms | {t_ut / t_off:.1f}× | {t_nc / t_off:.1f}× | "
              f"{t_off / t_sort:.1f}× | {t_off_1 / t_sort:.1f}× |")

    if not args.no_memory:
        out = subprocess.run([sys.executable, __file__, "--memory-child", str(args.memory_n)],
                             capture_output=True, text=True, check=True)
        m = json.loads(out.stdout.strip().splitlines()[-1])
        print(f"\nMemory: cc.diagnose at N={m['n']:.0e} (CIs off): peak RSS {m['peak_rss_mb']:.0f} MB "
              f"(process before the call {m['rss_before_mb']:.0f} MB, input arrays {m['input_mb']:.0f} MB), "
              f"{m['seconds']:.1f} s")


if __name__ == "__main__":
    main()
