"""The slice explorer at scale: slice statistics from mergeable summaries over a Parquet data set.

    nice -n 10 python bench/slices_summary.py --build            # writes 1e7 rows × 20 features once (~1 min)
    python bench/slices_summary.py [--workers 2] [--repeats 3]   # times the explorer on it

The data set is the design of ``bench/slices.py`` (15 numeric features x0 … x14 ~ N(0, 1), categorical c0 … c3 with
3, 4, 6, 8 levels and ``site`` with 50; Gaussian predictions, σ depending on x0, perfectly calibrated except a
planted ``site = s07`` whose errors are 1.2·σ), written as 10 Parquet files of 10⁶ rows (row groups of 250,000) to
``/tmp/calib_slices_bench``.  The run: ``calib_core.scale.distributed.slice_summary_parquet`` (a ``LocalCluster`` of
``--workers`` single-threaded processes: the edges pass, then the summary pass merged in a tree) and the ranking of
every slice from the merged summary (``calib_core.scale.slices.summary_ranking``), as the explorer's Parquet
path runs them (the cluster is started and its workers have imported the core before the clock starts, as on a
running server), ``--repeats`` times on the same cluster.  Prints per run and as medians over the runs: wall
seconds per stage, the CPU seconds of this process and of the workers, the load average before and after; then
the number of slices and the first ones — ``site = s07`` should come first.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
# this folder first on sys.path would make ``import distributed`` import bench/distributed.py, not Dask's package
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != ROOT / "bench"]
sys.path.insert(0, str(ROOT))

OUT = Path("/tmp/calib_slices_bench")


def make_frame(n: int, seed: int, planted: float = 1.2) -> pd.DataFrame:
    """n rows of the design (module docstring) as a frame with columns y, mean, std and the 20 features."""
    rng = np.random.default_rng(seed)
    cols: dict[str, np.ndarray] = {f"x{i}": rng.normal(size=n) for i in range(15)}
    for i, k in enumerate((3, 4, 6, 8)):
        cols[f"c{i}"] = np.array([f"v{j}" for j in range(k)])[rng.integers(0, k, n)]
    cols["site"] = np.array([f"s{j:02d}" for j in range(50)])[rng.integers(0, 50, n)]
    mu = rng.normal(size=n)
    sigma = np.exp(0.3 * cols["x0"] + 0.2 * rng.normal(size=n))
    eps = rng.normal(size=n)
    eps[cols["site"] == "s07"] *= planted
    return pd.DataFrame({"y": mu + sigma * eps, "mean": mu, "std": sigma, **cols})


def build(rows: int, files: int) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    per = rows // files
    t0 = time.perf_counter()
    for i in range(files):
        make_frame(per, i).to_parquet(OUT / f"part-{i:02d}.parquet", index=False, row_group_size=250_000)
        print(f"  file {i + 1}/{files} written, {time.perf_counter() - t0:.0f} s", flush=True)


def _warm() -> None:
    import calib_core.scale.distributed  # noqa: F401
    import calib_core.scale.slices  # noqa: F401


def _cpu_of_workers(client) -> float:
    def cpu() -> float:
        t = os.times()
        return t.user + t.system

    return float(sum(client.run(cpu).values())) if client is not None else 0.0


def run(workers: int, repeats: int) -> None:
    import calib_core.scale.distributed as cd
    from calib_core.scale.slices_ranking import summary_ranking

    pattern = str(OUT / "*.parquet")
    rows = []
    with cd.open_client(None if workers > 0 else cd.IN_PROCESS, n_workers=max(workers, 1)) as client:
        if client is not None:
            client.wait_for_workers(workers, timeout=60)
            client.run(_warm)  # the workers import the core once (as a running dashboard's cluster has)
        for k in range(repeats):
            load0 = os.getloadavg()[0]
            cpu_w0 = _cpu_of_workers(client)
            cpu0, t0 = time.process_time(), time.perf_counter()
            result = cd.slice_summary_parquet(pattern, scheduler=client if client is not None else cd.IN_PROCESS)
            t1 = time.perf_counter()
            ranking = summary_ranking(result.summary)
            t2 = time.perf_counter()
            s = result.seconds
            rows.append({"plan": s.get("plan", 0.0), "edges": s.get("edges", 0.0), "summary": s.get("summaries", 0.0),
                         "ranking": t2 - t1, "total": t2 - t0, "cpu here": time.process_time() - cpu0,
                         "cpu workers": _cpu_of_workers(client) - cpu_w0, "load before": load0,
                         "load after": os.getloadavg()[0]})
            r = rows[-1]
            print(f"run {k + 1}: total {r['total']:.2f} s wall (plan {r['plan']:.2f}, edges {r['edges']:.2f}, summary "
                  f"{r['summary']:.2f}, ranking {r['ranking']:.2f}); CPU {r['cpu here']:.1f} s here + "
                  f"{r['cpu workers']:.1f} s workers; load {r['load before']:.1f} → {r['load after']:.1f}",
                  flush=True)
    med = pd.DataFrame(rows).median()
    print(f"{result.n_read:,} rows, {len(result.summary.spec.columns)} features, {len(ranking):,} slices; "
          f"{'in process' if workers == 0 else f'{workers} workers'}; medians of {repeats} runs "
          f"(the first run includes the workers' first Parquet read):")
    print(f"  wall: plan {med['plan']:.2f} s, edges pass {med['edges']:.2f} s, summary pass {med['summary']:.2f} s, "
          f"ranking {med['ranking']:.2f} s; total {med['total']:.2f} s")
    print(f"  CPU: this process {med['cpu here']:.1f} s, workers {med['cpu workers']:.1f} s; load average "
          f"{med['load before']:.1f} before, {med['load after']:.1f} after")
    print(ranking.head(5)[["rank", "slice", "n", "std z", "evidence", "adjusted p", "flagged"]].to_string(index=False))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", action="store_true")
    ap.add_argument("--rows", type=float, default=1e7)
    ap.add_argument("--files", type=int, default=10)
    ap.add_argument("--workers", type=int, default=2, help="0: in this process, no cluster")
    ap.add_argument("--repeats", type=int, default=3, help="runs on the same cluster (medians printed)")
    args = ap.parse_args()
    if args.build:
        build(int(args.rows), args.files)
    else:
        run(args.workers, args.repeats)


if __name__ == "__main__":
    main()
