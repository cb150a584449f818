"""CPU cost of the clinical calibration set (logistic recalibration, Spiegelhalter's Z, Hosmer–Lemeshow, loess ICI and
the smoothed calibration curve), medians of ``--repeat`` rounds of process CPU seconds.

Jobs:

* ``per-class K=20 N=20000``: ``clinical_table_values`` of a 20-class file (one-vs-rest set of every class, the
  per-class table);
* ``per-class K=100 N=20000``: the same for 100 classes and 20,000 rows (the data of
  ``tests/views/test_nothing_hidden.py``);
* ``diagnose binary N=1e5``: ``cc.diagnose`` with its defaults on a binary file of 100,000 rows;
* ``loess N=1e5``: ``loess_smooth`` (span 0.75, default delta) of 100,000 rows, and statsmodels' ``lowess`` with the
  same settings (``ratio to statsmodels``);
* ``smoothed curve N=1e5``: ``smoothed_calibration_of`` with its 200-replicate band.

Run with single-threaded BLAS for comparable numbers::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python bench/clinical_speed.py --save /tmp/clin_before.json
    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python bench/clinical_speed.py --compare /tmp/clin_before.json

``--compare`` prints the ratio before / after of every job (> 1 = faster now).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import calib_core as cc  # noqa: E402
from calib_core.diagnosis.classification import classification_rows  # noqa: E402
from calib_core.diagnosis.classification_clinical import clinical_table_values  # noqa: E402
from calib_core.diagrams.classification_clinical import smoothed_calibration_of  # noqa: E402
from calib_core.inference import classification_clinical as icl  # noqa: E402
from calib_core.metrics.classification_loess import loess_smooth  # noqa: E402


def multiclass(n: int, k: int, seed: int = 0) -> cc.PredictionSet:
    rng = np.random.default_rng(seed)
    z = rng.normal(0.0, 2.0, size=(n, k))
    p = np.exp(z - z.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    y = np.minimum((np.cumsum(p, axis=1) < rng.random(n)[:, None]).sum(axis=1), k - 1)
    return cc.PredictionSet(task="classification", labels=y, logits=1.5 * z)


def nothing_hidden() -> cc.PredictionSet:
    """The 100-class data of ``tests/views/test_nothing_hidden.py`` (classes 60–99 over-confident)."""
    rng = np.random.default_rng(7)
    n, k = 20_000, 100
    labels = rng.integers(0, k, n)
    logits = rng.normal(size=(n, k))
    logits[np.arange(n), labels] += 2.0
    logits[:, 60:] += 1.5
    p = np.exp(logits - logits.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    return cc.PredictionSet(task="classification", labels=labels, probs=p)


def binary(n: int, seed: int = 0) -> tuple[cc.PredictionSet, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    p = 1.0 / (1.0 + np.exp(-rng.normal(-1.0, 1.5, n)))
    y = (rng.random(n) < 1.0 / (1.0 + np.exp(-0.8 * np.log(p / (1 - p))))).astype(int)
    return cc.PredictionSet(task="classification", labels=y, probs=np.column_stack([1 - p, p])), p, y.astype(float)


def cpu(fn) -> float:
    memo = getattr(icl, "_MEMO", None)
    if memo is not None:  # every round computes afresh (the memo only serves the table and its inference)
        memo.clear()
    c = time.process_time()
    fn()
    return time.process_time() - c


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--save", help="write the medians to this JSON file")
    ap.add_argument("--compare", help="print before/after ratios against this JSON file")
    ap.add_argument("--only", nargs="*", help="job names to run (default: all)")
    args = ap.parse_args()
    rows20 = classification_rows(multiclass(20_000, 20))
    rows100 = classification_rows(nothing_hidden())
    pset, p, y = binary(100_000)
    jobs = {
        "per-class K=20 N=20000": lambda: clinical_table_values(rows20),
        "per-class K=100 N=20000": lambda: clinical_table_values(rows100),
        "diagnose binary N=1e5": lambda: cc.diagnose(pset),
        "loess N=1e5": lambda: loess_smooth(p, y),
        "smoothed curve N=1e5": lambda: smoothed_calibration_of(p, y),
    }
    try:
        from statsmodels.nonparametric.smoothers_lowess import lowess

        jobs["statsmodels lowess N=1e5"] = lambda: lowess(y, p, frac=0.75, it=0, delta=0.01 * np.ptp(p),
                                                          return_sorted=False)
    except ImportError:  # statsmodels is a test dependency only
        pass
    if args.only:
        jobs = {k: v for k, v in jobs.items() if any(o in k for o in args.only)}
    print(f"load average {os.getloadavg()[0]:.1f}; OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', '-')}; "
          f"medians of {args.repeat} rounds, process CPU seconds\n")
    medians = {}
    for name, fn in jobs.items():
        medians[name] = statistics.median(cpu(fn) for _ in range(args.repeat))
    before = json.loads(Path(args.compare).read_text()) if args.compare else {}
    print("| job | CPU s | before | before / now |")
    print("|---|---|---|---|")
    for name, t in medians.items():
        b = before.get(name)
        print(f"| {name} | {t:.3f} | {'' if b is None else f'{b:.3f}'} | {'' if b is None else f'{b / t:.2f}×'} |")
    if "loess N=1e5" in medians and "statsmodels lowess N=1e5" in medians:
        print(f"\nloess_smooth / statsmodels lowess: "
              f"{medians['loess N=1e5'] / medians['statsmodels lowess N=1e5']:.2f}")
    if args.save:
        Path(args.save).write_text(json.dumps(medians, indent=1))


if __name__ == "__main__":
    main()
