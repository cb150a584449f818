"""Benchmark: load and diagnose a big regression Parquet file (target: < 3 GB peak memory).

    python bench/big_file.py                   # 1e7 rows: mean, std, y (float64) + a 'group' column
    python bench/big_file.py --rows 1e6 --no-group

Writes a Parquet file of synthetic Gaussian predictions (heteroscedastic, mildly over-confident; pyarrow,
snappy, row groups of 1e6 rows) into a temporary directory, then runs, in a *fresh child process* (so the
parent's memory does not count):

1. ``cc.load_predictions(path)`` — read, validate, build the ``PredictionSet``;
2. ``cc.diagnose(pset, n_resamples=0, n_simulations=0)`` — every metric and diagram table, CIs off
   (bootstrap CIs and perfect-calibration simulations multiply the work; the dashboard offers 0 for both).

The child reports ``resource.getrusage(RUSAGE_SELF).ru_maxrss`` (peak resident set size, KiB on Linux)
after the imports, after loading and after diagnosing, and the wall-clock time of each step.  The parent
prints the file size and a table, and exits with status 1 when the peak is at or above ``--limit-gb``.
``tests/data/test_reading_big_file.py`` runs the same child (``measure``) at a smaller size.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
GROUPS = ("north", "south", "east", "west")


def write_parquet(path: Path, n_rows: int, *, group: bool = True, seed: int = 0, chunk: int = 1_000_000) -> Path:
    """Write ``n_rows`` synthetic Gaussian regression predictions (mean, std, y[, group]) chunk by chunk.

    y = sin 3x + 1.3 σ(x) ε with σ(x) = 0.2x + 0.02, x ~ U(0.1, 1): the predicted σ is 30 % too small.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(seed)
    writer = None
    try:
        for start in range(0, n_rows, chunk):
            m = min(chunk, n_rows - start)
            x = rng.uniform(0.1, 1.0, m)
            std = 0.2 * x + 0.02
            mean = np.sin(3 * x) + 0.05 * rng.standard_normal(m)
            y = np.sin(3 * x) + 1.3 * std * rng.standard_normal(m)
            cols = {"mean": mean, "std": std, "y": y}
            if group:
                cols["group"] = pa.DictionaryArray.from_arrays(
                    pa.array(rng.integers(0, len(GROUPS), m).astype(np.int8)), pa.array(GROUPS)
                )
            table = pa.table(cols)
            if writer is None:
                writer = pq.ParquetWriter(str(path), table.schema, compression="snappy")
            writer.write_table(table)
    finally:
        if writer is not None:
            writer.close()
    return path


def _peak_mb() -> float:
    """Peak resident set size of this process: VmHWM of /proc/self/status (Linux).  Not ``ru_maxrss``: Linux carries
    the parent's high-water mark into a child across fork + exec, so a child of a 1.5 GB test process would report
    1.5 GB whatever it did itself."""
    try:
        with open("/proc/self/status") as status:
            return next(int(line.split()[1]) for line in status if line.startswith("VmHWM")) / 1024
    except (OSError, StopIteration):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _rss_mb() -> float:
    """Current resident set size (VmRSS of /proc/self/status; Linux)."""
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmRSS")) / 1024


def _arrays_mb(pset) -> float:
    """Memory of the PredictionSet's own arrays (object arrays: the pointers only)."""
    arrays = [pset.y, pset.point, pset.group, pset.split, pset.model, pset.row_number]
    arrays += list(vars(pset.dist).values()) if pset.dist is not None else []
    return sum(a.nbytes for a in arrays if isinstance(a, np.ndarray)) / 2**20


def child(path: str) -> None:
    """Run in a fresh process: load + diagnose ``path``; print one JSON line of peak RSS and times."""
    sys.path.insert(0, str(ROOT))
    import gc

    import calib_core as cc

    after_import, rss_import = _peak_mb(), _rss_mb()
    t0 = time.perf_counter()
    pset = cc.load_predictions(path)
    t_load = time.perf_counter() - t0
    after_load = _peak_mb()
    gc.collect()
    held = _rss_mb() - rss_import  # what loading left resident: the set's arrays plus anything not given back
    t0 = time.perf_counter()
    report = cc.diagnose(pset, n_resamples=0, n_simulations=0)
    t_diag = time.perf_counter() - t0
    ence = report.metrics.loc[report.metrics["metric"] == "ence", "value"]
    print(json.dumps({
        "rows": int(pset.n_rows), "layout": pset.layout, "groups": sorted(map(str, set(pset.group[:1000])))
        if pset.group is not None else [], "ence": float(ence.iloc[0]) if len(ence) else None,
        "import_peak_mb": after_import, "load_peak_mb": after_load, "peak_mb": _peak_mb(),
        "held_after_load_mb": held, "pset_arrays_mb": _arrays_mb(pset),
        "load_s": t_load, "diagnose_s": t_diag,
    }))


def measure(path: Path, timeout: float = 1800) -> dict:
    """Peak RSS and times of load + diagnose of ``path`` in a fresh child process (see ``child``)."""
    out = subprocess.run([sys.executable, __file__, "--child", str(path)], capture_output=True, text=True,
                         timeout=timeout, cwd=ROOT)
    if out.returncode != 0:
        raise RuntimeError(f"child failed ({out.returncode}):\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=float, default=1e7)
    ap.add_argument("--no-group", action="store_true", help="only mean, std, y")
    ap.add_argument("--limit-gb", type=float, default=3.0)
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.child)
        return 0
    n = int(args.rows)
    with tempfile.TemporaryDirectory(prefix="calib_big_") as tmp:
        path = Path(tmp) / f"predictions_{n}.parquet"
        t0 = time.perf_counter()
        write_parquet(path, n, group=not args.no_group)
        t_write = time.perf_counter() - t0
        size = path.stat().st_size
        m = measure(path)
    cols = "mean, std, y" + ("" if args.no_group else ", group")
    print(f"\nBig file: {n:,} rows ({cols}), Parquet {size / 2**20:.0f} MiB ({size:,} bytes), written in "
          f"{t_write:.1f} s; {m['rows']:,} rows kept, layout {m['layout']}, groups {m['groups']}, "
          f"ENCE {m['ence']:.3f}\n")
    print("| step | wall time | peak RSS of the child so far |")
    print("|---|---|---|")
    print(f"| python + calib_core imports | – | {m['import_peak_mb']:.0f} MB |")
    held = f"then {m['held_after_load_mb']:.0f} MB held, of which the set's arrays {m['pset_arrays_mb']:.0f} MB"
    print(f"| cc.load_predictions | {m['load_s']:.1f} s | {m['load_peak_mb']:.0f} MB ({held}) |")
    print(f"| cc.diagnose (CIs off) | {m['diagnose_s']:.1f} s | {m['peak_mb']:.0f} MB |")
    ok = m["peak_mb"] < args.limit_gb * 1024
    print(f"\nPeak RSS {m['peak_mb'] / 1024:.2f} GB {'<' if ok else '>='} limit {args.limit_gb} GB")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
