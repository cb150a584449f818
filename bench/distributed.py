"""Calibration summaries of Parquet data sets on Dask, at scale: a benchmark, not a test.

Writes a synthetic Parquet data set — Gaussian regression rows (y, mean, std; σ log-normal, predictions 15 %
over-confident) and classification rows (K = 10 probabilities from a softmax of normal logits, labels drawn from a
tempered version, label as int) — to local disk (``--dir``, default under /tmp; deleted afterwards unless ``--keep``),
then for 1 and 2 workers times ``calib_core.scale.distributed.summarize_parquet`` on a new ``LocalCluster`` (one
thread per
worker, ``--memory-limit`` each) and reads every worker's peak resident memory (``VmHWM`` of the worker process,
which starts fresh with each cluster; see ``_peak_rss_mb`` for why not ``getrusage``).  Prints wall time per
stage, throughput (rows/s), peak memory per worker, the
scaling from 1 to 2 workers and the time projected for 1e9 rows on 16 workers from it:

    t(1e9, 16) = t_fixed + (t(N, 1) − t_fixed) · (1e9 / N) / (16 · e₂),   e₂ = t(N, 1) / (2 · t(N, 2))

(the parallel efficiency measured from 1 to 2 workers kept at 16 — optimistic for the tree's depth, pessimistic on
a machine whose two cores are shared with other jobs; ``t_fixed`` = planning + cluster start), and from the workers'
CPU time (``getrusage``, load-independent as far as CPU time is): 1e9 / (16 · rows per worker-CPU-second), the time
if every worker has a core of its own.  Beside the workers' CPU, the CPU spent inside the partition and merge tasks
(``distributed_cluster.task_cpu_seconds``): the difference is what Dask itself costs (timers, messages, memory).
The load average (1 minute, mean of start and end) is printed per run.

Side by side, in the same run, DuckDB (one process, all cores) computes from the same files what SQL can express:
the top-label ECE with 15 equal-width bins, the 90 % central-interval coverage of the Gaussian, and the binned RMSE
vs RMV (15 equal-count σ-bins, NTILE over σ); the values are printed next to ours (they agree to float rounding)
with DuckDB's time.

    nice -n 10 python bench/distributed.py --regression-rows 2e8 --classification-rows 1e8
    nice -n 10 python bench/distributed.py --regression-rows 1e7 --classification-rows 5e6   # the README's size
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

# this file's folder first on sys.path would make ``import distributed`` import this file, not Dask's package
_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]
sys.path.insert(0, str(_HERE.parent))

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402

from calib_core.base.regression import norm_ppf  # noqa: E402
from calib_core.scale.distributed import open_client, summarize_parquet  # noqa: E402
from calib_core.scale.distributed_cluster import process_peak_mb, task_cpu_seconds  # noqa: E402
from calib_core.scale.summary import report  # noqa: E402

ROWS_PER_FILE = 5_000_000
ROW_GROUP = 250_000


def write_regression(folder: Path, n: int, seed: int = 0) -> None:
    """Gaussian predictions, y drawn with σ·1.15 (over-confident), in files of ROWS_PER_FILE rows."""
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    for i, start in enumerate(range(0, n, ROWS_PER_FILE)):
        m = min(ROWS_PER_FILE, n - start)
        sigma = rng.lognormal(0.0, 0.5, m)
        mean = rng.normal(0.0, 2.0, m)
        y = mean + 1.15 * sigma * rng.standard_normal(m)
        table = pa.table({"y": y, "mean": mean, "std": sigma})
        pq.write_table(table, folder / f"reg-{i:04d}.parquet", row_group_size=ROW_GROUP, compression="snappy")


def write_classification(folder: Path, n: int, k: int = 10, seed: int = 1) -> None:
    """K-class probabilities (softmax of N(0, 1.5²) logits) and labels drawn from softmax(logits / 1.3)."""
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    for i, start in enumerate(range(0, n, ROWS_PER_FILE)):
        cols: dict[str, np.ndarray] = {}
        labels = np.empty(min(ROWS_PER_FILE, n - start), dtype=np.int64)
        for a in range(0, labels.size, 1_000_000):
            b = min(a + 1_000_000, labels.size)
            logits = rng.normal(0.0, 1.5, (b - a, k))
            p = np.exp(logits - logits.max(axis=1, keepdims=True))
            p /= p.sum(axis=1, keepdims=True)
            q = np.exp((logits - logits.max(axis=1, keepdims=True)) / 1.3)
            q /= q.sum(axis=1, keepdims=True)
            labels[a:b] = (q.cumsum(axis=1) < rng.random((b - a, 1))).sum(axis=1).clip(0, k - 1)
            for j in range(k):
                cols.setdefault(f"prob_{j}", np.empty(labels.size))[a:b] = p[:, j]
        cols["label"] = labels
        pq.write_table(pa.table(cols), folder / f"cls-{i:04d}.parquet", row_group_size=ROW_GROUP,
                       compression="snappy")


_peak_rss_mb = process_peak_mb  # VmHWM, not ru_maxrss: see its docstring


def _cpu_seconds() -> float:
    import resource

    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _rows_in(folder: Path) -> int:
    return sum(pq.ParquetFile(f).metadata.num_rows for f in sorted(folder.glob("*.parquet")))


def run_dask(pattern: str, workers: int, memory_limit: str, rows_per_partition: int | None) -> dict:
    """summarize_parquet + report on a fresh LocalCluster; wall times and every worker's peak RSS."""
    t0 = time.perf_counter()
    with open_client(None, n_workers=workers, memory_limit=memory_limit) as client:
        client.wait_for_workers(workers, timeout=120)
        t_start = time.perf_counter() - t0
        cpu0 = sum(client.run(_cpu_seconds).values())
        task0 = sum(client.run(task_cpu_seconds).values())
        load0 = os.getloadavg()[0]
        res = summarize_parquet(pattern, scheduler=client, rows_per_partition=rows_per_partition)
        load1 = os.getloadavg()[0]
        cpu = sum(client.run(_cpu_seconds).values()) - cpu0
        task_cpu = sum(client.run(task_cpu_seconds).values()) - task0
        peaks = sorted(client.run(_peak_rss_mb).values())
    t1 = time.perf_counter()
    rep = report(res.summary, n_resamples=200, n_simulations=200)
    t_report = time.perf_counter() - t1
    return {"workers": workers, "rows": res.n_read, "partitions": len(res.partitions), "passes": res.passes,
            "start_s": t_start, "plan_s": res.seconds["plan"], "edges_s": res.seconds["edges"],
            "summaries_s": res.seconds["summaries"], "total_s": t_start + res.seconds["total"], "report_s": t_report,
            "peak_mb": peaks, "client_peak_mb": _peak_rss_mb(), "report": rep, "spec": res.summary.spec,
            "cpu_s": cpu, "task_cpu_s": task_cpu, "load": (load0 + load1) / 2.0}


def duckdb_regression(pattern: str, n_bins: int = 15, threads: int = 2) -> tuple[dict, float]:
    """DuckDB's coverage of the 90 % interval and Levi's binned RMSE vs RMV (ENCE) over equal-count σ-bins cut
    as calib_core cuts them: the order statistics at the sorted positions ⌈kN/B⌉ (``quantile_disc`` at
    (pos + ½)/N: DuckDB takes the value at 0-based position ⌈qN⌉ − 1), bin = number of
    edges ≤ σ (the same bins as the row-order tie-break when no σ is tied with an edge: the synthetic σ is
    continuous, and the edges are compared with ours value by value)."""
    import duckdb

    z = float(norm_ppf(0.95))
    t0 = time.perf_counter()
    con = duckdb.connect()
    con.execute(f"SET threads = {threads}")
    src = f"read_parquet('{pattern}')"
    n, cov = con.execute(f"SELECT count(*), avg(CASE WHEN abs(y - mean) <= {z!r} * std THEN 1.0 ELSE 0.0 END) "
                         f"FROM {src}").fetchone()
    pos = (np.arange(1, n_bins) * n + n_bins - 1) // n_bins
    qs = [(float(p) + 0.5) / n for p in pos]
    edges = np.array(con.execute(f"SELECT quantile_disc(std, {qs}) FROM {src}").fetchone()[0], dtype=float)
    b = " + ".join(f"(std >= {float(e)!r})::INTEGER" for e in edges)
    bins = con.execute(
        f"SELECT {b} AS b, count(*) AS n, sqrt(avg((y - mean) * (y - mean))) AS rmse, sqrt(avg(std * std)) AS rmv "
        f"FROM {src} GROUP BY b ORDER BY b").df()
    seconds = time.perf_counter() - t0
    ence = float(np.mean(np.abs(bins["rmv"] - bins["rmse"]) / bins["rmv"]))
    return {"coverage_90": float(cov), "ence": ence, "edges": edges, "bins": bins}, seconds


def duckdb_classification(pattern: str, k: int = 10, n_bins: int = 15, threads: int = 2) -> tuple[dict, float]:
    """DuckDB's top-label ECE on 15 equal-width bins (a, b] (the argmax by the first maximal column)."""
    import duckdb

    probs = ", ".join(f"prob_{j}" for j in range(k))
    argmax = "CASE " + " ".join(f"WHEN prob_{j} = greatest({probs}) THEN {j}" for j in range(k)) + " END"
    t0 = time.perf_counter()
    con = duckdb.connect()
    con.execute(f"SET threads = {threads}")
    ece = con.execute(
        f"WITH r AS (SELECT greatest({probs}) AS c, CASE WHEN ({argmax}) = label THEN 1.0 ELSE 0.0 END AS hit "
        f"FROM read_parquet('{pattern}')), "
        f"b AS (SELECT greatest(least(ceil(c * {n_bins}) - 1, {n_bins - 1}), 0) AS bin, sum(c) AS sc, sum(hit) AS sh "
        "FROM r GROUP BY bin) "
        "SELECT sum(abs(sc - sh)) / (SELECT count(*) FROM r) FROM b").fetchone()[0]
    return {"ece": float(ece)}, time.perf_counter() - t0


def _row(task: str, r: dict) -> dict:
    total = r["total_s"] - r["start_s"]
    return {"task": task, "rows": f"{r['rows']:.2e}", "workers": r["workers"], "partitions": r["partitions"],
            "passes": r["passes"], "cluster start s": round(r["start_s"], 1), "edges s": round(r["edges_s"], 1),
            "summaries s": round(r["summaries_s"], 1), "total s (no start)": round(total, 1),
            "rows/s": f"{r['rows'] / total:,.0f}", "worker CPU s": round(r["cpu_s"], 1),
            "rows/CPU-s": f"{r['rows'] / r['cpu_s']:,.0f}", "task CPU s": round(r["task_cpu_s"], 1),
            "rows/task-CPU-s": f"{r['rows'] / r['task_cpu_s']:,.0f}" if r["task_cpu_s"] else "–",
            "peak MB/worker": "/".join(f"{p:.0f}" for p in r["peak_mb"]),
            "client peak MB": round(r["client_peak_mb"]), "report s": round(r["report_s"], 1),
            "load": round(r["load"], 1)}


def projection(one: dict, two: dict, target: float = 1e9, workers: int = 16) -> tuple[float, float]:
    """(parallel efficiency 1 → 2 workers, projected seconds for ``target`` rows on ``workers`` workers, cluster
    start not included): the work time t = edges + summaries scales as rows / (workers · efficiency)."""
    t1 = one["edges_s"] + one["summaries_s"]
    t2 = two["edges_s"] + two["summaries_s"]
    eff = t1 / (2.0 * t2)
    return eff, one["plan_s"] + t1 * (target / one["rows"]) / (workers * eff)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--regression-rows", type=float, default=2e8)
    ap.add_argument("--classification-rows", type=float, default=1e8)
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--memory-limit", default="2GiB")
    ap.add_argument("--rows-per-partition", type=int, default=None,
                    help="default: calib_core.scale.distributed.auto_rows_per_partition of the column count")
    ap.add_argument("--dir", default=None, help="where to write the data (default: a new folder under /tmp)")
    ap.add_argument("--keep", action="store_true", help="keep the data afterwards")
    ap.add_argument("--skip-duckdb", action="store_true")
    ap.add_argument("--tasks", nargs="+", default=["regression", "classification"])
    args = ap.parse_args(argv)
    n_reg, n_cls = int(args.regression_rows), int(args.classification_rows)
    root = Path(args.dir) if args.dir else Path(tempfile.mkdtemp(prefix="calib-bench-", dir="/tmp"))
    free = shutil.disk_usage(root if root.exists() else "/tmp").free
    have_reg = _rows_in(root / "regression") if n_reg else 0
    have_cls = _rows_in(root / "classification") if n_cls else 0
    need = 28 * (n_reg - have_reg) + 90 * (n_cls - have_cls)
    print(f"data under {root}; free disk {free / 1e9:.1f} GB, about {need / 1e9:.1f} GB needed")
    if need > 0.8 * free:
        print("not enough free disk: choose fewer rows or another --dir")
        return 2
    rows = []
    try:
        t0 = time.perf_counter()
        # files already there with the asked number of rows (an earlier run with --keep) are read again as they are
        if n_reg and have_reg != n_reg:
            write_regression(root / "regression", n_reg)
        if n_cls and have_cls != n_cls:
            write_classification(root / "classification", n_cls)
        size = sum(f.stat().st_size for f in root.rglob("*.parquet"))
        print(f"wrote {n_reg:,} regression + {n_cls:,} classification rows ({size / 1e9:.2f} GB) in "
              f"{time.perf_counter() - t0:.0f} s")
        for task, n in (("regression", n_reg), ("classification", n_cls)):
            if not n or task not in args.tasks:
                continue
            pattern = str(root / task / "*.parquet")
            runs = {}
            for w in args.workers:
                r = run_dask(pattern, w, args.memory_limit, args.rows_per_partition)
                runs[w] = r
                rows.append(_row(task, r))
                print(pd.DataFrame([rows[-1]]).to_string(index=False), flush=True)
            ours = runs[max(runs)]["report"]
            if not args.skip_duckdb:
                if task == "regression":
                    ref, sec = duckdb_regression(pattern)
                    mine = {"coverage_90": ours.value("coverage_90"), "ence": ours.value("ence")}
                    spec = runs[max(runs)]["spec"]
                    ours_edges = np.asarray(spec.sigma_edges[0][2], dtype=float)
                    levi = ours.diagrams[next(iter(ours.diagrams))]["levi_bins"]
                    theirs = ref["bins"]
                    same = int(np.sum(ours_edges == ref["edges"]))
                    print(f"  σ-bin edges: {same} of {ours_edges.size} equal to DuckDB's bit for bit; per-bin counts "
                          f"equal: {bool(np.array_equal(levi['count'].to_numpy(), theirs['n'].to_numpy()))}; "
                          f"max |Δ| binned RMSE {np.max(np.abs(levi['rmse'] - theirs['rmse'])):.2g}, "
                          f"RMV {np.max(np.abs(levi['rmv'] - theirs['rmv'])):.2g}")
                    ref = {k: ref[k] for k in ("coverage_90", "ence")}
                else:
                    ref, sec = duckdb_classification(pattern)
                    mine = {"ece": ours.value("ece")}
                best = min(r["total_s"] - r["start_s"] for r in runs.values())
                print(f"DuckDB {task} ({n:,} rows, one process): {sec:.1f} s ({n / sec:,.0f} rows/s), "
                      f"{sec / best:.2f}x our best wall time")
                for key in ref:
                    print(f"  {key}: DuckDB {ref[key]:.12g}   summary {mine[key]:.12g}   "
                          f"|diff| {abs(ref[key] - mine[key]):.2g}")
            if 1 in runs and 2 in runs:
                eff, proj = projection(runs[1], runs[2])
                w1, w2 = (runs[w]["edges_s"] + runs[w]["summaries_s"] for w in (1, 2))
                print(f"{task}: 1 → 2 workers: parallel efficiency {eff:.2f} (work time {w1:.1f} s → {w2:.1f} s); "
                      f"projected 1e9 rows on 16 workers: {proj / 60:.1f} min (+ cluster start)")
            big = runs[max(runs)]
            rate = big["rows"] / big["cpu_s"]
            print(f"{task}: {rate:,.0f} rows per worker-CPU-second with {max(runs)} workers (all passes): 1e9 rows on "
                  f"16 workers with a core each ≈ {1e9 / (16 * rate) / 60:.1f} min of work (+ start and plan)")
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
    print()
    print(pd.DataFrame(rows).to_string(index=False))
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONWARNINGS", "ignore")
    raise SystemExit(main())
