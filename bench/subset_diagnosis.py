"""Benchmark: the Regression page's diagnosis of new rows, with its intervals and tests, against the point diagnosis
of the same rows and one ``np.argsort``, in one process.

    python bench/subset_diagnosis.py                      # the four cases below, 5 rounds of new rows each
    python bench/subset_diagnosis.py --repeat 9 --parts   # + CPU of each part of the inference (first case run)
    python bench/subset_diagnosis.py --profile --cases 2  # + a cProfile top list (of the σ-bin click)
    python bench/subset_diagnosis.py --first-call         # + first diagnosis of a fresh process (kernels cached, cold)

The steps of ``bench/load.py`` that diagnose rows not diagnosed before ("first diagnosis", "rows → cal", "click a
Levi σ-bin") run ``cc.diagnose`` with the page's defaults on the new subset: σ-bins 15 (equal count), 1,000
bootstrap replicates, 2,000 null draws, seed 0, ``cluster="auto"``, ``by_group=False`` (``pages/regression.py`` →
``dashboard.diagnose_rows`` → ``dashboard.cache.diagnose_cached``).  The cases:

* **upload, all rows**: ``bench/load.py``'s upload at 1e5 rows (y, mean, std, split; σ 30 % too small), read with
  ``cc.load_predictions`` from the CSV the bench uploads;
* **upload, rows → cal**: its ``split == "cal"`` rows (about 5e4);
* **σ-bin click**: the rows of the fourth of 16 equal-count σ-bins (about 6e3; a selection diagnoses its rows);
* **built-in example**: the page's default example (Levi et al. §4.1 synthetic, two models × 1e4 rows).

Every round takes new rows (round r drops r more rows), so the tables the inference keeps per N (block design,
calibration-curve null) are computed as on a step of the page, and nothing is a cache hit that would not be one
there.  Each figure is the median over ``--repeat`` interleaved rounds (argsort, point, full, …), three clocks:
process CPU (``time.process_time``, every thread: the sort threads too), main-thread CPU (``time.thread_time``),
wall.  "point" is ``cc.diagnose`` of the same rows with intervals and tests off (``n_resamples=0,
n_simulations=0``): every point metric and diagram table; "full − point" is what the intervals, tests and verdicts
add.  BLAS/OpenMP run on one thread (set before NumPy is imported), as the diagnosis does its matrix products.

``--first-call`` runs two diagnoses of 2 × 3e3 rows in two fresh processes (process CPU of each): with the
compiled kernels loaded from their on-disk cache (``__pycache__`` beside the modules, as a server finds them) and
compiled from nothing (``NUMBA_CACHE_DIR`` set to an empty folder); the numba import and compilation are in those
seconds.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import collections  # noqa: E402
import cProfile  # noqa: E402
import io  # noqa: E402
import pstats  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import calib_core as cc  # noqa: E402
from calib_core.data import examples  # noqa: E402
from calib_core.diagnosis import regression as diagnosis_regression  # noqa: E402
from calib_core.inference import regression as inference_regression  # noqa: E402
from calib_core.inference import regression_bootstrap, regression_tests  # noqa: E402

#: the Regression page's diagnosis options at its defaults (pages/regression.py, views/pages.py)
PAGE_OPTIONS = {"n_bins": 15, "binning": "count", "n_resamples": 1000, "n_simulations": 2000, "seed": 0,
                "cluster": "auto", "block_length": None}
POINT_OPTIONS = dict(PAGE_OPTIONS, n_resamples=0, n_simulations=0)


def upload_set(n: int, folder: Path) -> cc.PredictionSet:
    """bench/load.py's upload of session 1 at n rows, read as the Data page reads it."""
    from load import write_csv  # bench/load.py: the same file the load bench uploads

    return cc.load_predictions(str(write_csv(folder / "upload.csv", n, 1)))


def cases(n: int, folder: Path) -> dict[str, callable]:
    """Each case: round r -> the PredictionSet of that round's new rows."""
    up = upload_set(n, folder)
    idx = np.arange(up.n_rows)
    cal = np.flatnonzero(np.asarray(up.split) == "cal")
    order = np.argsort(up.dist.std(), kind="stable")
    edges = np.linspace(0, up.n_rows, 17).astype(int)
    in_bin = np.sort(order[edges[3]:edges[4]])  # the rows of one equal-count σ-bin of 16

    def drop(rows: np.ndarray, r: int) -> cc.PredictionSet:
        return up.take(np.isin(idx, rows[: rows.size - r]))

    return {
        f"upload, all rows (~{n:.0e})": lambda r: drop(idx, r),
        "upload, rows → cal": lambda r: drop(cal, r),
        "σ-bin click (1 of 16 bins)": lambda r: drop(in_bin, r),
        "built-in example (2 models × 1e4)": lambda r: examples.levi_synthetic(n=10_000 - r),
    }


def clocks(fn) -> tuple[float, float, float]:
    """(process CPU, main-thread CPU, wall) seconds of one call."""
    p0, t0, w0 = time.process_time(), time.thread_time(), time.perf_counter()
    fn()
    return time.process_time() - p0, time.thread_time() - t0, time.perf_counter() - w0


def measure(name: str, make, repeat: int) -> dict:
    """Median clocks of argsort, point and full diagnosis over ``repeat`` rounds of new rows."""
    cc.diagnose(make(repeat + 7), by_group=False, **PAGE_OPTIONS)  # warm: imports, kernels, N-only tables
    got: dict[str, list] = {"argsort": [], "point": [], "full": []}
    n_rows = 0
    for r in range(repeat):  # rounds 0 … repeat − 1: rows no other call of this process has diagnosed
        pset = make(r)
        n_rows = pset.n_rows
        y = np.ascontiguousarray(pset.y, dtype=float)
        got["argsort"].append(clocks(lambda: np.argsort(y)))
        got["point"].append(clocks(lambda: cc.diagnose(pset, by_group=False, **POINT_OPTIONS)))
        got["full"].append(clocks(lambda: cc.diagnose(make(r), by_group=False, **PAGE_OPTIONS)))
    med = {k: np.median(np.array(v), axis=0) for k, v in got.items()}
    return {"case": name, "n": n_rows, **med}


PART_NAMES = [  # (module, function): the parts of the inference whose CPU --parts prints
    (inference_regression, "_inference_stage"),
    (inference_regression, "_design"),
    (inference_regression, "bootstrap_intervals"),
    (regression_bootstrap, "block_table"),
    (inference_regression, "pit_tests"),
    (regression_tests, "curve_null"),
    (inference_regression, "zms_tests"),
    (inference_regression, "_finish_inference"),
    (inference_regression, "ence_test"),
    (inference_regression, "decide"),
    (diagnosis_regression, "summary_statistics"),
    (diagnosis_regression, "regression_diagrams"),
]


def parts(make, repeat: int) -> list[tuple[str, float, int]]:
    """Main-thread CPU of each part of the inference (medians over rounds of new rows; calls per diagnosis)."""
    spent: dict[str, list[float]] = collections.defaultdict(list)
    saved = []
    for mod, fn_name in PART_NAMES:
        mod_name = mod.__name__
        fn = getattr(mod, fn_name, None)
        if fn is None:
            continue
        saved.append((mod, fn_name, fn))

        def timed(*a, _fn=fn, _key=f"{mod_name.rsplit('.', 1)[1]}.{fn_name}", **k):
            t0 = time.thread_time()
            try:
                return _fn(*a, **k)
            finally:
                spent[_key].append(time.thread_time() - t0)

        setattr(mod, fn_name, timed)
    try:
        cc.diagnose(make(2 * repeat + 20), by_group=False, **PAGE_OPTIONS)
        spent.clear()
        for r in range(repeat + 10, 2 * repeat + 10):  # rounds measure() did not take: new rows here too
            cc.diagnose(make(r), by_group=False, **PAGE_OPTIONS)
    finally:
        for mod, fn_name, fn in saved:
            setattr(mod, fn_name, fn)
    return [(k, float(np.sum(v)) / repeat, len(v) // repeat) for k, v in spent.items()]


def profile(make, top: int) -> None:
    """cProfile (main-thread CPU) of one full diagnosis of new rows: calib_core's top by own and cumulative time."""
    cc.diagnose(make(500), by_group=False, **PAGE_OPTIONS)
    prof = cProfile.Profile(time.thread_time)
    pset = make(501)
    prof.enable()
    cc.diagnose(pset, by_group=False, **PAGE_OPTIONS)
    prof.disable()
    for order in ("tottime", "cumulative"):
        buf = io.StringIO()
        pstats.Stats(prof, stream=buf).strip_dirs().sort_stats(order).print_stats(top)
        print(f"\n### cProfile (main-thread CPU), one diagnosis of new rows, sorted by {order} (top {top})\n\n```")
        print("\n".join(line for line in buf.getvalue().splitlines() if line.strip()))
        print("```")


FIRST_CALL = """
import time
c0 = time.process_time()
import calib_core as cc
from calib_core.data import examples
c1 = time.process_time()
cc.diagnose(examples.levi_synthetic(n=3000), by_group=False, n_resamples=1000, n_simulations=2000)
c2 = time.process_time()
cc.diagnose(examples.levi_synthetic(n=2998), by_group=False, n_resamples=1000, n_simulations=2000)
c3 = time.process_time()
print(f"{c1 - c0:.3f} {c2 - c1:.3f} {c3 - c2:.3f}")
"""


def first_call() -> None:
    """Process CPU of the import and of the first and second diagnosis (2 × 3e3 rows) in fresh processes: kernels
    loaded from the disk cache, and compiled from nothing (the first diagnosis also builds the N-only null tables,
    about 0.5 s, which the dashboard's warm-up thread builds at server start)."""
    print("\n| fresh process (process CPU) | import calib_core | first diagnosis | second diagnosis |")
    print("|---|---|---|---|")
    with tempfile.TemporaryDirectory() as empty:
        for label, env in (("kernels cached on disk", {}), ("kernels compiled (empty NUMBA_CACHE_DIR)",
                                                            {"NUMBA_CACHE_DIR": empty})):
            out = subprocess.run([sys.executable, "-c", FIRST_CALL], cwd=ROOT, capture_output=True, text=True,
                                 env={**os.environ, "PYTHONPATH": str(ROOT), **env}, check=True).stdout.split()
            a, b, c = (float(x) for x in out[-3:])
            print(f"| {label} | {a:.2f} s | {b:.2f} s | {c:.2f} s |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=float, default=1e5, help="rows of the upload")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--parts", action="store_true", help="CPU of each part of the inference (the first case run)")
    ap.add_argument("--profile", action="store_true", help="cProfile top list of one diagnosis (the first case run)")
    ap.add_argument("--top", type=int, default=30)
    ap.add_argument("--first-call", action="store_true", help="first diagnosis of fresh processes")
    ap.add_argument("--cases", nargs="*", type=int, default=None, help="indices of the cases to run (default all)")
    args = ap.parse_args()
    print(f"numpy {np.__version__}; {os.cpu_count()} CPUs; OMP/OPENBLAS threads = {os.environ['OMP_NUM_THREADS']}; "
          f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        made = cases(int(args.n), Path(tmp))
        chosen = list(made.items()) if args.cases is None else [list(made.items())[i] for i in args.cases]
        rows = []
        for name, make in chosen:
            rows.append(measure(name, make, args.repeat))
            print(f"{name} done (load {os.getloadavg()[0]:.2f})", flush=True)
        print("\n| case | rows | full: process CPU | main-thread CPU | wall | point: process CPU | full − point "
              "| full / point | full / argsort |")
        print("|---|---|---|---|---|---|---|---|---|")
        for r in rows:
            full, point, srt = r["full"], r["point"], r["argsort"]
            print(f"| {r['case']} | {r['n']:,} | **{full[0] * 1e3:.0f} ms** | {full[1] * 1e3:.0f} ms | "
                  f"{full[2] * 1e3:.0f} ms | {point[0] * 1e3:.0f} ms | {(full[0] - point[0]) * 1e3:.0f} ms | "
                  f"{full[0] / point[0]:.2f}× | {full[0] / srt[0]:.0f}× |")
        first_name, first_case = chosen[0]
        if args.parts:
            print(f"\n| part ({first_name}) | main-thread CPU per diagnosis | calls |")
            print("|---|---|---|")
            for key, sec, calls in parts(first_case, args.repeat):
                print(f"| {key} | {sec * 1e3:.1f} ms | {calls} |")
        if args.profile:
            profile(first_case, args.top)
    if args.first_call:
        first_call()
    print(f"\nload average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
