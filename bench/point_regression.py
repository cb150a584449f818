"""Benchmark: regression point diagnostics against one ``np.argsort`` of the same N, in one process.

    python bench/point_regression.py                       # N = 1e4, 1e5, 1e6; Gaussian, quantile set, ensemble
    python bench/point_regression.py --sizes 1e6 --repeat 7
    python bench/point_regression.py --profile             # + a cProfile top list of calib_core at 1e6 (Gaussian)
    python bench/point_regression.py --floor --sizes 1e6 --kinds gaussian --repeat 7   # + the measured floor

"Point diagnostics" is ``cc.diagnose`` with intervals and tests off (``n_resamples=0, n_simulations=0``): every point
metric and every diagram table (the call ``bench/regression.py`` times as "CIs off"), the PredictionSet built inside
the timed call as a user would.  The yardstick is one ``np.argsort`` (NumPy's default kind: its SIMD sort) of N
float64 values (the targets y).  The target: the Gaussian forecast set at 1e6 rows within 3× of it.

Each figure is the median over ``--repeat`` interleaved rounds (argsort, ours, ours with one sort thread, argsort,
…), so both see the same load.  Three clocks:

* process CPU (``time.process_time``: every thread of the process — what the machine pays),
* main-thread CPU (``time.thread_time``: without the sort threads of ``calib_core.base.binning.SORT_THREADS``),
* wall (``time.perf_counter``).

BLAS/OpenMP run on one thread (set before NumPy is imported).  The sort pool of ``calib_core.base.binning``
(``SORT_THREADS``) is left at its default in the "ours" column and set to 1 in "ours, 1 sort thread".  The quantile
set (19 levels) and the ensemble (20 members) are timed for information (no target).  The load average is printed
at the start and the end: on a busy machine every figure drifts, the ratios less so.

``--floor`` times, in the same interleaved rounds, the passes no implementation of this metric set at these bits can
skip, each alone on one thread: the stable argsort of σ (Levi's equal-count bins and Spearman's ranks) and of |ε|
(Spearman's ranks), both as the diagnosis computes them (packed keys around ``np.sort``); one ``np.sort`` of z (the
reliability score's and the z tables' order statistics; the PIT statistics read Φ of it); Φ(z) of every row with
SciPy's bits (the CRPS and the reliability score sum it in row order); NumPy's log σ, exp(−z²/2) and log|z| (the NLL,
the CRPS's φ(z), the mean log z²).  Their sum, as a multiple of one argsort, is the floor: what the 3× target leaves
for every other pass is printed under it.  Two passes not in the floor are timed for the PIT's sort: ``np.sort`` of
Φ(z) and Φ of the sorted z; and the row pass (the sums of every per-row score, both passes of the compiled kernel,
its NumPy logs subtracted), which any implementation needs in some form: the floor plus it is printed too.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import cProfile  # noqa: E402
import io  # noqa: E402
import pstats  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
from scipy import stats  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import calib_core as cc  # noqa: E402
from calib_core.base import binning  # noqa: E402
from calib_core.base.predictions import PredictionSet  # noqa: E402
from calib_core.base.regression import norm_ppf  # noqa: E402
from calib_core.metrics.regression import DEFAULT_COVERAGES  # noqa: E402
from calib_core.metrics.regression_kernels import fused_sums, norm_cdf_rows  # noqa: E402
from calib_core.metrics.regression_sorts import packed_argsort_ranks  # noqa: E402
from calib_core.metrics.regression_wis import gaussian_wis_tables, hub_wis_setup  # noqa: E402

LEVELS = np.round(np.linspace(0.05, 0.95, 19), 10)
MEMBERS = 20


def make_data(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Heteroscedastic, mildly overconfident Gaussian forecasts (the data of bench/regression.py)."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(0.1, 1.0, n)
    mean = np.sin(3 * x) + 0.05 * rng.standard_normal(n)
    std = 0.2 * x + 0.02
    y = np.sin(3 * x) + 1.3 * (0.2 * x + 0.02) * rng.standard_normal(n)
    return mean, std, y


def make_pset(kind: str, mean: np.ndarray, std: np.ndarray, y: np.ndarray) -> PredictionSet:
    """The forecast set of one kind from the same (μ, σ, y)."""
    if kind == "gaussian":
        dist = cc.Gaussian(mean, std)
    elif kind == "quantile":
        dist = cc.QuantileSet(LEVELS, mean[:, None] + std[:, None] * stats.norm.ppf(LEVELS)[None, :])
    else:
        rng = np.random.default_rng(1)
        dist = cc.SampleSet(mean[:, None] + std[:, None] * rng.standard_normal((mean.size, MEMBERS)))
    return PredictionSet(task="regression", y=y, dist=dist)


def point_call(kind: str, mean: np.ndarray, std: np.ndarray, y: np.ndarray):
    """One point diagnosis (intervals and tests off), the PredictionSet built inside."""
    if kind == "gaussian":
        return lambda: cc.diagnose(PredictionSet(task="regression", y=y, dist=cc.Gaussian(mean, std)),
                                   n_resamples=0, n_simulations=0)
    dist = make_pset(kind, mean, std, y).dist
    return lambda: cc.diagnose(PredictionSet(task="regression", y=y, dist=_fresh(dist)), n_resamples=0,
                               n_simulations=0)


def _fresh(dist):
    """A new distribution object over the same arrays (no cached sorts carried between repeats)."""
    if isinstance(dist, cc.QuantileSet):
        return cc.QuantileSet(dist.levels, dist.values)
    return cc.SampleSet(dist.samples)


def clocks(fn) -> tuple[float, float, float]:
    """(process CPU, main-thread CPU, wall) seconds of one call."""
    p0, t0, w0 = time.process_time(), time.thread_time(), time.perf_counter()
    fn()
    return time.process_time() - p0, time.thread_time() - t0, time.perf_counter() - w0


def one_sort_thread(fn):
    def run():
        saved, binning.SORT_THREADS = binning.SORT_THREADS, 1
        try:
            return fn()
        finally:
            binning.SORT_THREADS = saved

    return run


#: (name, in the floor) of the passes ``--floor`` times
FLOOR_PASSES = (
    ("floor: stable argsort of σ (packed keys + np.sort, with ranks)", True),
    ("floor: stable argsort of |ε| (the same)", True),
    ("floor: np.sort of z", True),
    ("floor: Φ(z) of every row (compiled, SciPy's bits)", True),
    ("floor: log σ (NumPy)", True),
    ("floor: exp(−z²/2) (NumPy, 3 steps)", True),
    ("floor: log|z| (NumPy, 2 steps)", True),
    ("info: np.sort of Φ(z) (the PIT's sort)", False),
    ("info: Φ of the sorted z (instead of that sort)", False),
    ("row pass: the per-row scores' sums (compiled, both passes)", False),
)


def floor_calls(mean: np.ndarray, std: np.ndarray, y: np.ndarray) -> dict[str, object]:
    """The passes of :data:`FLOOR_PASSES` on the bench data, each a call without arguments."""
    eps = y - mean
    z = eps / std
    u = norm_cdf_rows(z)
    z_sorted = np.sort(z)

    def exp_half_z2():
        e = np.multiply(-0.5, z)
        e *= z
        return np.exp(e, out=e)

    def log_abs_z():
        a = np.abs(z)
        return np.log(a, out=a)

    setup = hub_wis_setup()
    tables = gaussian_wis_tables(*setup)
    ks = [float(norm_ppf(0.5 + c / 2.0)) for c in DEFAULT_COVERAGES]

    def row_pass():  # includes its NumPy log σ, exp(−z²/2), log|z| (timed apart above): subtracted when printed
        return fused_sums(eps, z, std, u, ks, tables, median=setup[3] is not None)

    fns = (lambda: packed_argsort_ranks(std), lambda: packed_argsort_ranks(eps, absolute=True),
           lambda: np.sort(z), lambda: norm_cdf_rows(z), lambda: np.log(std), exp_half_z2, log_abs_z,
           lambda: np.sort(u), lambda: norm_cdf_rows(z_sorted), row_pass)
    return {name: fn for (name, _), fn in zip(FLOOR_PASSES, fns)}


def measure(n: int, kinds: list[str], repeat: int, floor: bool = False) -> list[dict]:
    """Median clocks of argsort and of every kind's point diagnosis (default sort threads and one), and with
    ``floor`` of every pass of :data:`FLOOR_PASSES`."""
    mean, std, y = make_data(n)
    calls = {"argsort": lambda: np.argsort(y)}
    if floor:
        for name, fn in floor_calls(mean, std, y).items():
            fn()  # warm: compiled kernels loaded
            calls[name] = fn
    for kind in kinds:
        call = point_call(kind, mean, std, y)
        call()  # warm: imports, per-process caches
        calls[kind] = call
        calls[kind + " (1 sort thread)"] = one_sort_thread(call)
    times: dict[str, list[tuple[float, float, float]]] = {k: [] for k in calls}
    for _ in range(repeat):
        for name, fn in calls.items():
            times[name].append(clocks(fn))
    med = {k: np.median(np.array(v), axis=0) for k, v in times.items()}
    out = []
    for name in calls:
        p, t, w = med[name]
        out.append({"n": n, "what": name, "cpu": p, "thread": t, "wall": w,
                    "r_cpu": p / med["argsort"][0], "r_wall": w / med["argsort"][2]})
    return out


def profile(n: int, kind: str, top: int) -> None:
    """cProfile of one point diagnosis at n rows: the top of calib_core by own time and by cumulative time."""
    mean, std, y = make_data(n)
    call = point_call(kind, mean, std, y)
    call()
    prof = cProfile.Profile(time.thread_time)  # main-thread CPU: the load and the sort threads do not blur it
    prof.enable()
    call()
    prof.disable()
    for order in ("tottime", "cumulative"):
        buf = io.StringIO()
        st = pstats.Stats(prof, stream=buf).strip_dirs().sort_stats(order)
        st.print_stats(top)
        text = buf.getvalue()
        print(f"\n### cProfile, {kind}, N = {n:.0e}, sorted by {order} (top {top})\n")
        print("```")
        print("\n".join(line for line in text.splitlines() if line.strip())[:20000])
        print("```")


def print_floor(rows: list[dict]) -> None:
    """The floor table of every N: each pass's process CPU and its ratio to one argsort, their sum, what the 3×
    target leaves above it and how far the Gaussian diagnosis is above it."""
    for n in sorted({r["n"] for r in rows}):
        at = {r["what"]: r for r in rows if r["n"] == n}
        arg = at["argsort"]["cpu"]
        print(f"\n### Floor at N = {n:.0e} (process CPU, one thread each; argsort {arg * 1e3:.1f} ms)\n")
        print("| pass | process CPU | / argsort |")
        print("|---|---|---|")
        total = 0.0
        for name, counted in FLOOR_PASSES:
            cpu = at[name]["cpu"]
            total += cpu if counted else 0.0
            shown = name.replace("|", "\\|")  # |ε|, log|z| inside a Markdown table
            print(f"| {shown} | {cpu * 1e3:.1f} ms | {cpu / arg:.2f}× |")
        print(f"| **floor (sum of the 'floor:' passes)** | **{total * 1e3:.1f} ms** | **{total / arg:.2f}×** |")
        print(f"\nThe 3× target is {3 * arg * 1e3:.1f} ms: {(3 * arg - total) * 1e3:.1f} ms "
              f"({3 - total / arg:.2f}× one argsort) are left for every other pass.")
        logs = sum(at[name]["cpu"] for name, _ in FLOOR_PASSES if name.startswith("floor: log") or "exp(" in name)
        rows_cpu = at[FLOOR_PASSES[-1][0]]["cpu"] - logs  # the row pass without the NumPy logs already in the floor
        print(f"The floor and the row pass (its compiled loops alone, {rows_cpu * 1e3:.1f} ms): "
              f"**{(total + rows_cpu) / arg:.2f}×** one argsort, before any table is built.")
        if "gaussian" in at:
            ours = at["gaussian"]["cpu"]
            print(f"The Gaussian point diagnosis: {ours * 1e3:.1f} ms = {ours / arg:.2f}×, "
                  f"{(ours - total) * 1e3:.1f} ms ({(ours - total) / arg:.2f}× one argsort) above the floor.")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", nargs="*", type=float, default=[1e4, 1e5, 1e6])
    ap.add_argument("--kinds", nargs="*", default=["gaussian", "quantile", "ensemble"],
                    choices=["gaussian", "quantile", "ensemble"])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--profile", action="store_true", help="print a cProfile top list (N = --profile-n, Gaussian)")
    ap.add_argument("--profile-only", action="store_true", help="only the profile")
    ap.add_argument("--profile-n", type=float, default=1e6)
    ap.add_argument("--top", type=int, default=35)
    ap.add_argument("--floor", action="store_true", help="also time the passes of the floor (module docstring)")
    args = ap.parse_args()
    print(f"numpy {np.__version__}; {os.cpu_count()} CPUs; SORT_THREADS = {binning.SORT_THREADS}; "
          f"OMP/OPENBLAS threads = {os.environ['OMP_NUM_THREADS']}; load average at start: "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    if not args.profile_only:
        rows = []
        for n in map(int, args.sizes):
            got = measure(n, args.kinds, max(args.repeat, 5 if n <= 1e6 else 1), args.floor)
            rows += got
            print(f"N = {n:.0e} done (load {os.getloadavg()[0]:.2f})", flush=True)
        print("\n| N | what | process CPU | main-thread CPU | wall | CPU / argsort CPU | wall / argsort wall |")
        print("|---|---|---|---|---|---|---|")
        for r in rows:
            if r["what"].startswith(("floor:", "info:")):
                continue
            bold = "**" if r["what"].startswith("gaussian") and r["n"] >= 1e6 else ""
            print(f"| {r['n']:.0e} | {r['what']} | {r['cpu'] * 1e3:.1f} ms | {r['thread'] * 1e3:.1f} ms | "
                  f"{r['wall'] * 1e3:.1f} ms | {bold}{r['r_cpu']:.2f}×{bold} | {r['r_wall']:.2f}× |")
        if args.floor:
            print_floor(rows)
    if args.profile or args.profile_only:
        profile(int(args.profile_n), "gaussian", args.top)
    print(f"\nload average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
