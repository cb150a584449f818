"""CORP quantile reliability redraw bench: what the Regression page's "CORP quantile reliability" tab computes when it
opens or its level τ changes (``quantile_reliability_of`` at one τ and its figure), before and after the compiled
null draws, side by side in one process; the figure with its wire dict both validated by Plotly
(``quantile_reliability_figure``) and as a plain dict (``quantile_reliability_figure_dict``, what the page draws
without a slice behind it).

"Before" is ``calib_core/metrics/regression_decomposition.py`` as it was at ``--before`` (default: main at the start
of the session, 5f083e2), read with ``git show`` and loaded as a module beside the current one (it imports the
same core); "after" is the current module.  Both see the same rows (``bench/app.py``'s heteroscedastic Gaussian set,
the page bench's data) and every τ of the page's level control; rounds are interleaved, CPU seconds
(``time.process_time``) are medians, OMP/OpenBLAS threads 1.  Each round also checks that the two give the same
curve, band and decomposition bit for bit, and the two figures the same JSON.

Then, in fresh processes: the first call of the band's kernel — compiled (an empty Numba cache directory) and loaded
from Numba's on-disk cache (what a server pays once, or at warm-up).

Usage::

    nice python bench/corp_redraw.py                 # N = 1e5 and 1e6, 3 rounds
    nice python bench/corp_redraw.py --sizes 1e5 --rounds 5
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import plotly.io as pio  # noqa: E402

from app import regression_set  # noqa: E402
from calib_core.metrics import regression_decomposition as after  # noqa: E402
from calib_core.plots.corp import quantile_reliability_figure, quantile_reliability_figure_dict  # noqa: E402
from dashboard.redraw_cache import dict_figure, prepared_figure  # noqa: E402

LEVELS = (0.05, 0.25, 0.5, 0.75, 0.95)  # the page's level control


def load_before(rev: str):
    """The decomposition module as it was at ``rev`` (``git show``), loaded inside ``calib_core.metrics``."""
    source = subprocess.run(["git", "show", f"{rev}:calib_core/metrics/regression_decomposition.py"], cwd=ROOT,
                            check=True, capture_output=True, text=True).stdout
    path = Path(tempfile.mkdtemp()) / "regression_decomposition_before.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("calib_core.metrics._corp_before", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def same(a: dict, b: dict) -> bool:
    """The two results' curves, bands and decompositions are identical (bit for bit)."""
    for m in a:
        try:
            pd.testing.assert_frame_equal(a[m].curve, b[m].curve, check_exact=True)
            pd.testing.assert_frame_equal(a[m].bands, b[m].bands, check_exact=True)
        except AssertionError:
            return False
        if a[m].decomposition != b[m].decomposition:
            return False
    return True


def first_call(cache_dir: str) -> float:
    """CPU seconds of the band kernel's first call in a fresh process (after ``import calib_core``)."""
    code = ("import time; import calib_core.metrics.regression_decomposition_kernels as k; "
            "t = time.process_time(); k.warm_up(); print(time.process_time() - t)")
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir, PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-c", code], env=env, check=True, capture_output=True, text=True, cwd=ROOT)
    return float(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="1e5,1e6", help="comma-separated N")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--before", default="5f083e2", help="git revision of the 'before' module")
    args = ap.parse_args()
    before = load_before(args.before)
    quantile_reliability_figure(after.quantile_reliability_of(regression_set(1_000, seed=1), tau=0.5))  # warm
    print(f"load average {open('/proc/loadavg').read().split()[:3]}", file=sys.stderr)
    print("| N | τ | before: reliability (CPU) | after: reliability (CPU) | ratio | figure + wire dict, validated "
          "(CPU) | as a plain dict (CPU) | identical |")
    print("|---|---|---|---|---|---|---|---|")
    for n in [int(float(s)) for s in args.sizes.split(",")]:
        pset = regression_set(n, seed=0)
        for tau in LEVELS:
            cpu: dict[str, list[float]] = {"before": [], "after": [], "figure": [], "dict": []}
            identical = True
            for _ in range(args.rounds):
                c0 = time.process_time()
                old = before.quantile_reliability_of(pset, tau=tau)
                c1 = time.process_time()
                new = after.quantile_reliability_of(pset, tau=tau)
                c2 = time.process_time()
                wire = prepared_figure(quantile_reliability_figure(new)).to_dict()
                c3 = time.process_time()
                plain = prepared_figure(dict_figure(quantile_reliability_figure_dict(new))).to_dict()
                c4 = time.process_time()
                cpu["before"].append(c1 - c0)
                cpu["after"].append(c2 - c1)
                cpu["figure"].append(c3 - c2)
                cpu["dict"].append(c4 - c3)
                identical &= same(old, new) and pio.to_json(wire, validate=False) == pio.to_json(plain, validate=False)
            b, a, f, d = (1000 * float(np.median(cpu[k])) for k in ("before", "after", "figure", "dict"))
            print(f"| {n:.0e} | {tau:g} | {b:.0f} ms | {a:.0f} ms | **{b / a:.2f}×** | {f:.1f} ms | {d:.1f} ms | "
                  f"{'yes' if identical else 'NO'} |", flush=True)
    with tempfile.TemporaryDirectory() as cache:
        compiled = first_call(cache)
        loaded = first_call(cache)
    print(f"\nFirst call of the band kernel in a fresh process: compiled {compiled:.2f} s CPU, "
          f"loaded from Numba's cache {loaded:.2f} s CPU.")
    print(f"load average {open('/proc/loadavg').read().split()[:3]}", file=sys.stderr)


if __name__ == "__main__":
    main()
