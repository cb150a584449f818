"""CORP bench: the CORP reliability curve, its consistency and confidence bands, the Brier and
log score decompositions with their intervals and MCB test, and the Murphy diagram, against the Classification
page's point estimates, at N = 1e4, 1e5, 1e6 (K = 10, top label; over-confident synthetic logits of
``bench/classification.py``), with model-diagnostics' ``decompose`` (the peer, Brier only) beside.

Columns (medians of interleaved rounds, wall and CPU seconds; every function sees the same load):

* ``page point estimates`` — ``cc.diagnose`` with intervals and tests off (what the page computes before any
  interval: metrics, reliability and per-class tables);
* ``CORP exact`` — the curve, both decompositions and the Murphy table, no resampling;
* ``CORP with bands`` — what the page's CORP option computes: 1,000 null draws (consistency band, MCB test) and
  200 bootstrap resamples (confidence band, intervals), on the grid above 1,000 distinct values;
* ratio = CORP with bands / page point estimates (target: at most 3×);
* ``exact-resampling bands`` (N = 1e4 only, one round) — the same resampling on every distinct value (no grid), to
  show what the grid saves.

Usage::

    python bench/corp.py            # N = 1e4, 1e5, 1e6
    python bench/corp.py --quick    # N up to 1e5
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from classification import make_data  # noqa: E402

import calib_core as cc  # noqa: E402
from calib_core.diagrams import classification_corp as C  # noqa: E402


def median_times(fns: dict[str, Callable[[], object]], runs: int) -> dict[str, tuple[float, float]]:
    """(median wall, median CPU) seconds of each function over ``runs`` interleaved rounds."""
    wall: dict[str, list[float]] = {k: [] for k in fns}
    cpu: dict[str, list[float]] = {k: [] for k in fns}
    for _ in range(runs):
        for key, fn in fns.items():
            t0, c0 = time.perf_counter(), time.process_time()
            fn()
            wall[key].append(time.perf_counter() - t0)
            cpu[key].append(time.process_time() - c0)
    return {k: (float(np.median(wall[k])), float(np.median(cpu[k]))) for k in fns}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="N up to 1e5")
    args = ap.parse_args()
    sizes = [10_000, 100_000] + ([] if args.quick else [1_000_000])
    try:
        from model_diagnostics.scoring import SquaredError, decompose
    except ImportError:  # pragma: no cover - the peer is a test dependency
        decompose = None
    rows = []
    exact: dict[int, float | None] = {}
    for n in sizes:
        _, p, y = make_data(n, 10)
        pset = cc.PredictionSet(task="classification", labels=y, probs=p, layout="probs")
        x, e = C.binary_events(y, p, target="top_label")
        fns: dict[str, Callable[[], object]] = {
            "page point estimates": lambda: cc.diagnose(pset, n_resamples=0, n_simulations=0),
            "CORP exact": lambda: C.corp(x, e, n_resamples=0, n_boot=0),
            "CORP with bands": lambda: C.corp(x, e, n_resamples=1000, n_boot=200),
        }
        exact_bands = None
        if n <= 10_000:  # one round: it is the slow reference
            t0 = time.perf_counter()
            C.corp(x, e, n_resamples=1000, n_boot=200, max_groups=10**9)
            exact_bands = time.perf_counter() - t0
        if decompose is not None:
            fns["model-diagnostics decompose (Brier)"] = lambda: decompose(y_obs=e, y_pred=x,
                                                                           scoring_function=SquaredError())
        for fn in fns.values():  # warm-up
            fn()
        t = median_times(fns, 3)
        t["load"] = (os.getloadavg()[0], 0.0)
        rows.append((n, t))
        exact[n] = exact_bands
        print(f"N = {n:.0e}: " + ", ".join(f"{k} {v[0]:.3f} s" for k, v in t.items()), file=sys.stderr)
    print("| N | page point estimates | CORP exact | CORP with bands | ratio (wall / CPU) | exact-resampling bands "
          "| model-diagnostics decompose | load |")
    print("|---|---|---|---|---|---|---|---|")
    for n, t in rows:
        pe, ex, bd = t["page point estimates"], t["CORP exact"], t["CORP with bands"]
        exact_bands = exact.get(n)
        md = t.get("model-diagnostics decompose (Brier)")
        print(f"| {n:.0e} | {pe[0]:.3f} s ({pe[1]:.3f} CPU) | {ex[0]:.3f} s | {bd[0]:.3f} s ({bd[1]:.3f} CPU) "
              f"| **{bd[0] / pe[0]:.2f}× / {bd[1] / pe[1]:.2f}×** "
              f"| {'—' if exact_bands is None else f'{exact_bands:.3f} s'} "
              f"| {'—' if md is None else f'{md[0]:.3f} s'} | {t['load'][0]:.1f} |")


if __name__ == "__main__":
    main()
