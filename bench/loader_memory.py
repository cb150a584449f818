"""Peak memory of the loader against the decoded size of the columns it keeps (target: at most 1.5×).

    python bench/loader_memory.py                  # the two bombs at their issue sizes
    python bench/loader_memory.py --scale 0.1      # ten times smaller (what the default-run test uses, smaller)

Two small files that decode to a lot (both written into a temporary directory):

* a ``.csv.gz`` of one repeated line ``0.5,0.25,1`` (columns y, mean, std) decompressing to ~250 MB of text
  (≈ 485 KB on disk), whose 2.4·10⁷ rows × 3 float64 columns decode to ≈ 545 MB of values;
* a Parquet of 2·10⁷ constant rows × 3 float64 columns (mean, std, y; ≈ 262 KB on disk), 458 MB decoded.

Each file is loaded by ``cc.load_predictions(path)`` in a *fresh child process* (so the parent's memory does not
count), which reports its peak resident memory (``VmHWM`` of ``/proc/self/status``; ``ru_maxrss`` where there is
no ``/proc``) minus its resident memory after the imports (the interpreter's baseline).  The decoded size of the kept
columns is rows × kept columns × 8 bytes (float64 values), the least the loaded table can take.  The ratio of the
two is printed (target ≤ 1.5) and the script exits 1 when a ratio is above ``--max-ratio``.

Measured on the 2-core development machine (peak above baseline, ratio to the decoded kept columns):

| file | before the streaming reader | after |
|---|---|---|
| .csv.gz, 474 KB → 2.27·10⁷ rows (520 MB decoded) | 2,107 MB (4.05×) | 761 MB (1.46×) |
| Parquet, 236 KB → 2·10⁷ rows (458 MB decoded) | 1,570 MB (3.43×) | 637 MB (1.39×) |

The floor is 1.33×: the set's row numbers (int64) are a fourth column beside y, mean and std.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import zlib
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
LINE = b"0.5,0.25,1\n"
HEADER = b"y,mean,std\n"
CSV_TEXT_BYTES = 250_000_000
PARQUET_ROWS = 20_000_000

CHILD = r"""
import json, sys, time
sys.path.insert(0, sys.argv[2])
def status(key):
    try:
        with open("/proc/self/status") as f:
            return next(int(l.split()[1]) for l in f if l.startswith(key)) / 1024
    except OSError:
        import resource
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
import numpy, pandas, pyarrow, pyarrow.parquet
import calib_core as cc
base = status("VmRSS:")
t0 = time.perf_counter()
pset = cc.load_predictions(sys.argv[1])
seconds = time.perf_counter() - t0
print(json.dumps({"rows": int(pset.n_rows), "seconds": seconds, "base_mb": base,
                  "peak_above_base_mb": status("VmHWM:") - base}))
"""


def gzip_csv(path: Path, text_bytes: int = CSV_TEXT_BYTES) -> tuple[Path, int]:
    """A ``.csv.gz`` of the header and ``LINE`` repeated to ``text_bytes`` of text; returns (path, data rows)."""
    rows = max(1, (text_bytes - len(HEADER)) // len(LINE))
    chunk_rows = 100_000
    comp = zlib.compressobj(9, zlib.DEFLATED, 31)  # gzip container
    with path.open("wb") as out:
        out.write(comp.compress(HEADER))
        done = 0
        while done < rows:
            k = min(chunk_rows, rows - done)
            out.write(comp.compress(LINE * k))
            done += k
        out.write(comp.flush())
    return path, rows


def constant_parquet(path: Path, n_rows: int = PARQUET_ROWS, chunk: int = 5_000_000) -> tuple[Path, int]:
    """A Parquet of ``n_rows`` constant rows: mean 0, std 1, y 0 (float64); returns (path, rows)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = pa.schema([(n, pa.float64()) for n in ("mean", "std", "y")])
    with pq.ParquetWriter(str(path), schema) as writer:
        done = 0
        while done < n_rows:
            k = min(chunk, n_rows - done)
            zeros, ones = pa.array(np.zeros(k)), pa.array(np.ones(k))
            writer.write_table(pa.table({"mean": zeros, "std": ones, "y": zeros}), row_group_size=k)
            done += k
    return path, n_rows


def measure(path: Path, timeout: float = 1800) -> dict:
    """Peak resident memory above the interpreter's baseline while ``cc.load_predictions(path)`` runs, in a fresh
    child process: ``{"rows", "seconds", "base_mb", "peak_above_base_mb"}``."""
    out = subprocess.run([sys.executable, "-c", CHILD, str(path), str(ROOT)], capture_output=True, text=True,
                         timeout=timeout, cwd=ROOT)
    if out.returncode != 0:
        raise RuntimeError(f"child failed ({out.returncode}):\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def run_bombs(folder: Path, scale: float = 1.0) -> list[dict]:
    """Write both bombs at ``scale`` of their issue sizes into ``folder`` and measure each load."""
    results = []
    for title, make in ((".csv.gz", lambda: gzip_csv(folder / "bomb.csv.gz", int(CSV_TEXT_BYTES * scale))),
                        ("Parquet", lambda: constant_parquet(folder / "bomb.parquet", int(PARQUET_ROWS * scale)))):
        path, rows = make()
        decoded_mb = rows * 3 * 8 / 2**20
        m = measure(path)
        assert m["rows"] == rows, (m, rows)
        results.append({"file": title, "file_kb": path.stat().st_size / 1024, "rows": rows,
                        "decoded_mb": decoded_mb, **m, "ratio": m["peak_above_base_mb"] / decoded_mb})
        path.unlink()
    return results


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scale", type=float, default=1.0, help="fraction of the issue's sizes")
    ap.add_argument("--max-ratio", type=float, default=1.5)
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="calib_loader_memory_") as tmp:
        results = run_bombs(Path(tmp), args.scale)
    print("| file | on disk | rows | decoded (kept columns) | peak above baseline | ratio | load time |")
    print("|---|---|---|---|---|---|---|")
    for r in results:
        print(f"| {r['file']} | {r['file_kb']:,.0f} KB | {r['rows']:,} | {r['decoded_mb']:,.0f} MB | "
              f"{r['peak_above_base_mb']:,.0f} MB | {r['ratio']:.2f}× | {r['seconds']:.1f} s |")
    worst = max(r["ratio"] for r in results)
    print(f"\nworst ratio {worst:.2f}× (target ≤ {args.max_ratio}×)")
    return 0 if worst <= args.max_ratio else 1


if __name__ == "__main__":
    sys.exit(main())
