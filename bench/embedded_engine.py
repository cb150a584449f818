"""The embedded engine against DuckDB on the same Parquet files and threads: a benchmark, not a test.

Writes N rows (``--rows``, default 2e7) of Gaussian forecasts (y, mean, std; σ log-normal, predictions 15 %
over-confident — the law of ``bench/distributed.py``) to Parquet files of ``--rows-per-file`` rows with row groups
of ``--row-group`` rows (default 5e6 and 1e6) in a temporary folder, then in ONE process, alternating, ``--repeats``
times each:

* DuckDB (``SET threads = T``) builds the σ-bin table — the equal-count σ edges at the sorted positions ⌈kN/B⌉, the
  per-bin counts, RMSE and RMV, hence ENCE, and the 90 % coverage — with the SQL of ``bench/distributed.py``
  (``duckdb_regression``);
* ``calib_core.scale.embedded.summarize_parquet_embedded(threads=T)`` builds the whole mergeable summary: the exact
  equal-count σ edges (radix select: two passes), then every sum of the summary (a third pass).

Prints wall seconds and CPU seconds (``time.process_time``: every thread of this process) of each, their medians
and the ratio ours / DuckDB, the load average, and checks that the results are equal (edges bit for bit, counts,
ENCE and coverage to 1e-12 relative).  ``--big`` then runs the engine alone on 1e8 rows (``--big-rows``) in a fresh
process (``--child``) for its wall time and peak resident memory (``VmHWM``), and projects 10⁹ rows on a cluster of
``--workers`` workers from the measured rows per CPU-second and the cost of a merge.

    nice -n 10 python bench/embedded_engine.py                       # 2e7 rows, 2 threads
    nice -n 10 python bench/embedded_engine.py --big                 # and 1e8 rows in a fresh process
    python bench/embedded_engine.py --profile --rows 2e6             # where the engine's time goes (cProfile)
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]  # ``distributed`` is Dask's package
sys.path.insert(0, str(_HERE.parent))

import numpy as np  # noqa: E402
import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402

from calib_core.scale.distributed_cluster import process_peak_mb  # noqa: E402
from calib_core.scale.embedded import summarize_parquet_embedded  # noqa: E402
from calib_core.scale.summary import merge, report  # noqa: E402


def _duckdb_reference():
    spec = importlib.util.spec_from_file_location("bench_distributed", _HERE / "distributed.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    return mod.duckdb_regression


def write_data(folder: Path, n: int, rows_per_file: int, row_group: int, seed: int = 0) -> None:
    """Gaussian predictions, y drawn with σ·1.15, in files of ``rows_per_file`` rows and row groups of
    ``row_group``."""
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    for i, start in enumerate(range(0, n, rows_per_file)):
        m = min(rows_per_file, n - start)
        sigma = rng.lognormal(0.0, 0.5, m)
        mean = rng.normal(0.0, 2.0, m)
        y = mean + 1.15 * sigma * rng.standard_normal(m)
        pq.write_table(pa.table({"y": y, "mean": mean, "std": sigma}), folder / f"reg-{i:04d}.parquet",
                       row_group_size=row_group, compression="snappy")


def run_ours(pattern: str, threads: int, rows_per_partition: int | None = None) -> dict:
    """The engine's summary: wall, CPU, the passes and what is compared with DuckDB."""
    c0, t0 = time.process_time(), time.perf_counter()
    res = summarize_parquet_embedded(pattern, threads=threads, rows_per_partition=rows_per_partition)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    s = res.summary
    (key,) = [k for k in s.parts if k[1] == " (all)"]
    t1 = time.perf_counter()
    rep = report(s, n_resamples=0, n_simulations=0)
    t_report = time.perf_counter() - t1
    (edges,) = [np.array(e[2], dtype=float) for e in s.spec.sigma_edges if (e[0], e[1]) == key]
    parts = [s.parts[key]]
    t2 = time.perf_counter()
    merge(s, s)  # the cost of merging two summaries of this spec (the projection's merge cost)
    t_merge = time.perf_counter() - t2
    del parts
    return {"wall": wall, "cpu": cpu, "rows": res.n_read, "partitions": len(res.partitions), "passes": res.passes,
            "edges": edges, "counts": np.asarray(s.parts[key]["n"], dtype=np.int64), "report_s": t_report,
            "ence": float(rep.value("ence")), "coverage_90": float(rep.value("coverage_90")),
            "merge_s": t_merge, "seconds": res.seconds}


def run_duckdb(pattern: str, threads: int) -> dict:
    c0, t0 = time.process_time(), time.perf_counter()
    ref, _ = _duckdb_reference()(pattern, threads=threads)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    return {"wall": wall, "cpu": cpu, "edges": np.asarray(ref["edges"], dtype=float),
            "counts": ref["bins"]["n"].to_numpy(dtype=np.int64), "ence": ref["ence"],
            "coverage_90": ref["coverage_90"]}


def child(pattern: str, threads: int, out: str) -> int:
    """One engine run in this fresh process: wall, CPU, peak resident memory."""
    r = run_ours(pattern, threads)
    r.update(peak_mb=process_peak_mb(), edges=r["edges"].tolist(), counts=r["counts"].tolist())
    Path(out).write_text(json.dumps(r))
    return 0


def _load() -> float:
    return os.getloadavg()[0]


def compare(ours: dict, duck: dict) -> list[str]:
    lines = [f"  σ edges: {int(np.sum(ours['edges'] == duck['edges']))} of {ours['edges'].size} equal bit for bit; "
             f"per-bin counts equal: {bool(np.array_equal(ours['counts'], duck['counts']))}"]
    for key in ("ence", "coverage_90"):
        rel = abs(ours[key] - duck[key]) / abs(duck[key])
        lines.append(f"  {key}: ours {ours[key]:.15g}, DuckDB {duck[key]:.15g}, relative difference {rel:.1e}")
    return lines


def projection(rows_per_cpu_s: float, merge_s: float, rows: float = 1e9, workers: int = 16,
               rows_per_partition: int = 869_565) -> tuple[float, int]:
    """(seconds, partitions) for ``rows`` rows on ``workers`` single-threaded workers: the CPU work spread evenly,
    plus the merge tree's critical path — ⌈log₈ P⌉ levels of one 8-way merge (7 pairwise merges) each."""
    parts = int(np.ceil(rows / rows_per_partition))
    depth = int(np.ceil(np.log(parts) / np.log(8)))
    return rows / (workers * rows_per_cpu_s) + depth * 7 * merge_s, parts


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=float, default=2e7)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--rows-per-file", type=float, default=5e6)
    ap.add_argument("--row-group", type=float, default=1e6)
    ap.add_argument("--big", action="store_true", help="also 1e8 rows in a fresh process (wall, peak memory)")
    ap.add_argument("--big-rows", type=float, default=1e8)
    ap.add_argument("--workers", type=int, default=16, help="workers of the 1e9-row projection")
    ap.add_argument("--dir", default=None)
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--skip-duckdb", action="store_true")
    ap.add_argument("--profile", action="store_true", help="cProfile one engine run (top 25 by own time)")
    ap.add_argument("--child", nargs=2, metavar=("PATTERN", "OUT"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        return child(args.child[0], args.threads, args.child[1])
    root = Path(args.dir or tempfile.mkdtemp(prefix="calib-embedded-"))
    try:
        n = int(args.rows)
        folder = root / f"reg-{n}"
        if not folder.exists():
            t0 = time.perf_counter()
            write_data(folder, n, int(args.rows_per_file), int(args.row_group))
            print(f"wrote {n:,} rows in {time.perf_counter() - t0:.0f} s to {folder}")
        pattern = str(folder / "*.parquet")
        print(f"load average at start: {open('/proc/loadavg').read().strip()}; threads: {args.threads}")
        if args.profile:
            import cProfile
            import pstats

            from calib_core.scale.distributed import IN_PROCESS, summarize_parquet

            # cProfile sees one thread only: the same passes, leaves and merge tree, run serially in this thread
            prof = cProfile.Profile()
            prof.enable()
            summarize_parquet(pattern, scheduler=IN_PROCESS)
            prof.disable()
            pstats.Stats(prof).sort_stats("tottime").print_stats(25)
            return 0
        ours, duck, loads = [], [], []
        for rep in range(args.repeats):
            la = _load()
            if not args.skip_duckdb:
                duck.append(run_duckdb(pattern, args.threads))
            ours.append(run_ours(pattern, args.threads))
            loads.append((la + _load()) / 2)
            d = duck[-1] if duck else None
            print(f"repeat {rep + 1}: ours wall {ours[-1]['wall']:.1f} s CPU {ours[-1]['cpu']:.1f} s"
                  + (f"; DuckDB wall {d['wall']:.1f} s CPU {d['cpu']:.1f} s" if d else "")
                  + f"; load {loads[-1]:.1f}", flush=True)
        med = {k: statistics.median(r[k] for r in ours) for k in ("wall", "cpu")}
        o = ours[-1]
        print(f"\nours ({o['rows']:,} rows, {o['partitions']} partitions, {o['passes']} passes): median wall "
              f"{med['wall']:.1f} s, CPU {med['cpu']:.1f} s ({o['rows'] / med['cpu']:,.0f} rows per CPU-second); "
              f"stages of the last run: " + ", ".join(f"{k} {v:.1f} s" for k, v in o["seconds"].items())
              + f"; report {o['report_s']:.2f} s; one merge {o['merge_s'] * 1e3:.1f} ms")
        if duck:
            dm = {k: statistics.median(r[k] for r in duck) for k in ("wall", "cpu")}
            print(f"DuckDB σ-bin table: median wall {dm['wall']:.1f} s, CPU {dm['cpu']:.1f} s")
            print(f"ratio ours / DuckDB: wall {med['wall'] / dm['wall']:.2f}x, CPU {med['cpu'] / dm['cpu']:.2f}x "
                  f"(goal: wall ≤ 1.5x)")
            for line in compare(o, duck[-1]):
                print(line)
        print(f"load average (1 min, mean over the repeats): {statistics.mean(loads):.1f}")
        rate = o["rows"] / med["cpu"]
        if args.big:
            nb = int(args.big_rows)
            big = root / f"reg-{nb}"
            if not big.exists():
                t0 = time.perf_counter()
                write_data(big, nb, int(args.rows_per_file), int(args.row_group))
                print(f"wrote {nb:,} rows in {time.perf_counter() - t0:.0f} s to {big}")
            out = root / "big.json"
            la = _load()
            subprocess.run([sys.executable, __file__, "--threads", str(args.threads), "--child",
                            str(big / "*.parquet"), str(out)], check=True)
            b = json.loads(out.read_text())
            rate = b["rows"] / b["cpu"]
            print(f"\n{b['rows']:,} rows in a fresh process: wall {b['wall']:.1f} s, CPU {b['cpu']:.1f} s "
                  f"({rate:,.0f} rows per CPU-second), {b['partitions']} partitions, {b['passes']} passes, peak "
                  f"resident memory {b['peak_mb']:.0f} MB; load {(la + _load()) / 2:.1f}")
            o = {**o, "merge_s": b["merge_s"]}
        seconds, parts = projection(rate, o["merge_s"], workers=args.workers)
        print(f"projection to 1e9 rows on {args.workers} single-threaded workers: {seconds:.0f} s "
              f"({parts:,} partitions; {rate:,.0f} rows per CPU-second, merges {o['merge_s'] * 1e3:.1f} ms each)")
    finally:
        if not args.keep and args.dir is None:
            shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
