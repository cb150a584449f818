"""Classification point diagnostics against one plain NumPy ECE pass, side by side in one process.

What is timed (process CPU seconds, ``time.process_time``, one BLAS/OpenMP thread; medians of interleaved repeats
so every contender sees the same load):

* **plain ECE** — the floor: argmax + max of the (N, K) probabilities and three ``np.bincount`` over 15
  equal-width confidence bins (count, Σ confidence, Σ hits), the way anyone writes top-label ECE in NumPy;
* **diagnose (point)** — ``cc.diagnose(pset, n_resamples=0, n_simulations=0)``: every point metric (ECE, MCE,
  accuracy, NLL, Brier, class-wise ECE, smooth ECE, TCE, ratios, the clinical set) and every diagram table
  (reliability, per class, smooth reliability, smoothed calibration curve, per-class clinical table) — what
  ``bench/classification.py --diagnose-only`` calls "off";
* **clinical** — the part of it that is the clinical set: the logistic recalibration fits, Spiegelhalter's Z,
  Hosmer–Lemeshow and the loess ICI / E50 / E90 of every one-vs-rest class
  (``clinical_table_values``), plus the loess smoothed-calibration curve diagram (``smoothed_calibration_diagrams``
  without a band), timed by themselves on the same rows;
* **core** = diagnose (point) − clinical: the binned / smoothed / scoring-rule metrics and their tables;
* **rows** — ``classification_rows(pset)`` by itself (argmax, confidence, bins and bin sums): part of both diagnose
  and clinical (which builds its own rows), so the core column leaves it out.

Data: over-confident synthetic logits (``bench/classification.py``'s ``make_data``: z ~ N(0, 2²), y ~ softmax(z /
1.5), p = softmax(z)) at K = 2 and 10, N = 1e4, 1e5, 1e6.

Usage::

    nice python bench/point_classification.py                       # K = 2, 10; N = 1e4 … 1e6; 5 repeats
    nice python bench/point_classification.py --k 10 --n 1e6        # one cell
    nice python bench/point_classification.py --profile --k 10 --n 1e6   # cProfile (CPU seconds) of calib_core
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS"):
    os.environ[_var] = "1"  # one BLAS thread: single-thread CPU costs, set before NumPy loads

import argparse  # noqa: E402
import cProfile  # noqa: E402
import io  # noqa: E402
import pstats  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]  # bench/ holds library-named modules
sys.path.insert(0, str(ROOT))

import calib_core as cc  # noqa: E402
from calib_core.diagnosis.classification import classification_rows  # noqa: E402
from calib_core.diagnosis.classification_clinical import clinical_table_values  # noqa: E402
from calib_core.diagrams.classification_clinical import smoothed_calibration_diagrams  # noqa: E402


def make_data(n: int, k: int = 10, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Over-confident synthetic logits: z ~ N(0, 2²), y ~ softmax(z / 1.5); p = softmax(z) (as bench/classification)."""
    rng = np.random.default_rng(seed)
    z = rng.normal(size=(n, k)) * 2.0
    zt = z / 1.5
    pt = np.exp(zt - zt.max(1, keepdims=True))
    pt /= pt.sum(1, keepdims=True)
    u = rng.random(n)
    y = np.minimum((np.cumsum(pt, axis=1) < u[:, None]).sum(1), k - 1)
    p = np.exp(z - z.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    return p, y


def plain_numpy_ece(p: np.ndarray, y: np.ndarray, n_bins: int = 15) -> float:
    """The floor: top-label ECE with argmax + max + three bincounts over equal-width bins."""
    conf = p.max(axis=1)
    acc = (p.argmax(axis=1) == y).astype(float)
    b = np.clip(np.ceil(conf * n_bins).astype(np.int64) - 1, 0, n_bins - 1)
    cnt = np.bincount(b, minlength=n_bins)
    s_conf = np.bincount(b, weights=conf, minlength=n_bins)
    s_acc = np.bincount(b, weights=acc, minlength=n_bins)
    return float(np.abs(s_acc - s_conf).sum() / cnt.sum())


def cpu(fn: Callable[[], object]) -> float:
    t0 = time.process_time()
    fn()
    return time.process_time() - t0


def point_diagnose(pset: cc.PredictionSet) -> object:
    return cc.diagnose(pset, n_resamples=0, n_simulations=0)


def clinical_part(pset: cc.PredictionSet) -> object:
    rows = classification_rows(pset)
    return clinical_table_values(rows), smoothed_calibration_diagrams(rows, n_resamples=0)


def measure(n: int, k: int, repeats: int) -> dict[str, float]:
    p, y = make_data(n, k)
    pset = cc.PredictionSet(task="classification", labels=y, probs=p, layout="probs")
    fns = {"ece": lambda: plain_numpy_ece(p, y), "diagnose": lambda: point_diagnose(pset),
           "clinical": lambda: clinical_part(pset), "rows": lambda: classification_rows(pset)}
    for fn in fns.values():  # warm-up (imports, caches of the first call)
        fn()
    times: dict[str, list[float]] = {key: [] for key in fns}
    for _ in range(repeats):
        for key, fn in fns.items():
            if key == "ece":  # the floor is short: the median of 5 calls per round
                times[key].append(float(np.median([cpu(fn) for _ in range(5)])))
            else:
                times[key].append(cpu(fn))
    out = {key: float(np.median(v)) for key, v in times.items()}
    out["core"] = max(out["diagnose"] - out["clinical"], 0.0)
    out["load"] = os.getloadavg()[0]
    return out


def profile(n: int, k: int, top: int = 30) -> str:
    p, y = make_data(n, k)
    pset = cc.PredictionSet(task="classification", labels=y, probs=p, layout="probs")
    point_diagnose(pset)
    prof = cProfile.Profile(time.process_time)  # CPU seconds: wall clocks are inflated on a shared machine
    prof.enable()
    point_diagnose(pset)
    prof.disable()
    buf = io.StringIO()
    stats = pstats.Stats(prof, stream=buf)
    stats.sort_stats("cumulative").print_stats(r"calib_core", top)
    stats.sort_stats("tottime").print_stats(top)
    return buf.getvalue()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--k", nargs="*", type=int, default=[2, 10], help="classes (default 2 10)")
    ap.add_argument("--n", nargs="*", type=float, default=[1e4, 1e5, 1e6], help="rows (default 1e4 1e5 1e6)")
    ap.add_argument("--repeats", type=int, default=5, help="interleaved repeats (median; default 5)")
    ap.add_argument("--profile", action="store_true", help="cProfile of one point diagnose at each (K, N)")
    args = ap.parse_args()
    load = Path("/proc/loadavg").read_text().strip()
    print(f"NumPy {np.__version__}, one BLAS thread, {os.cpu_count()} CPUs; load {load}", flush=True)
    if args.profile:
        for k in args.k:
            for n in args.n:
                print(f"\n## profile K = {k}, N = {int(n):,}\n")
                print(profile(int(n), k))
        return
    print("\n| K | N | plain ECE | diagnose (point) | core | clinical | diagnose / ECE | core / ECE | "
          "clinical / ECE | rows (in clinical) | load (1 min) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for k in args.k:
        for n in args.n:
            t = measure(int(n), k, args.repeats)
            ms = lambda s: f"{s * 1e3:.1f} ms" if s < 1 else f"{s:.2f} s"  # noqa: E731
            print(f"| {k} | {int(n):.0e} | {ms(t['ece'])} | {ms(t['diagnose'])} | {ms(t['core'])} | "
                  f"{ms(t['clinical'])} | **{t['diagnose'] / t['ece']:.1f}×** | {t['core'] / t['ece']:.1f}× | "
                  f"{t['clinical'] / t['ece']:.1f}× | {ms(t['rows'])} | {t['load']:.1f} |", flush=True)


if __name__ == "__main__":
    main()
