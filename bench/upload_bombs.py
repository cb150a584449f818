"""Upload bombs at their real sizes, against the dashboard's upload limit.

    python bench/upload_bombs.py                # limit 500 MB (.streamlit/config.toml)
    python bench/upload_bombs.py --limit-mb 200

Writes each bomb into a temporary directory, then loads it in a *fresh child process* exactly as the Data page
does (``cc.load_predictions(bytes, max_bytes=<upload limit>)``) and prints, per bomb: file size, what it declares
or inflates to, the outcome (refused / loaded), seconds to the outcome and the child's peak RSS above its
baseline after imports.  For comparison the same load is run with the core's default limit (1 GB), which the
dashboard got before it passed its own limit.

Bombs: a Parquet of 2e7 constant rows (mean, std, y), a Parquet of 1e8 rows × 20 constant columns,
and a .csv.gz of one repeated line inflating to ~4.3 GB.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import tomllib
import zlib
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

REPO = Path(__file__).resolve().parents[1]

CHILD = r"""
import json, resource, sys, time
from pathlib import Path
import calib_core as cc
def rss():
    with open("/proc/self/status") as f:
        return next(int(l.split()[1]) for l in f if l.startswith("VmRSS")) / 1024
path, limit = Path(sys.argv[1]), int(sys.argv[2])
data = path.read_bytes()
base = rss()
t0 = time.perf_counter()
try:
    pset = cc.load_predictions(data, source=path.name, max_bytes=limit or None)
    outcome = f"loaded {pset.n_rows:,} rows"
except cc.InputError as err:
    outcome = "refused: " + str(err).split(" What to do")[0][len(path.name) + 2:][:110]
seconds = time.perf_counter() - t0
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"outcome": outcome, "seconds": seconds, "peak_above_base_mb": peak - base}))
"""


def constant_parquet(path: Path, n_rows: int, n_columns: int, chunk: int = 10_000_000) -> Path:
    names = ["mean", "std", "y"] + [f"x{j}" for j in range(n_columns - 3)]
    zeros, ones = pa.array(np.zeros(min(chunk, n_rows))), pa.array(np.ones(min(chunk, n_rows)))
    with pq.ParquetWriter(str(path), pa.schema([(n, pa.float64()) for n in names])) as writer:
        done = 0
        while done < n_rows:
            size = min(chunk, n_rows - done)
            columns = {n: (ones if n == "std" else zeros).slice(0, size) for n in names}  # a valid σ = 1
            writer.write_table(pa.table(columns), row_group_size=size)
            done += size
    return path


def gzip_bomb(path: Path, inflated: int) -> Path:
    line = b"0.5,0.25,1\n"
    chunk = line * ((1 << 20) // len(line))
    comp = zlib.compressobj(9, zlib.DEFLATED, 31)  # gzip container
    with path.open("wb") as out:
        out.write(comp.compress(b"y,mean,std\n"))
        for _ in range(inflated // len(chunk)):
            out.write(comp.compress(chunk))
        out.write(comp.flush())
    return path


def run(path: Path, limit: int) -> dict:
    proc = subprocess.run([sys.executable, "-c", CHILD, str(path), str(limit)], cwd=REPO, capture_output=True,
                          text=True, timeout=1800)
    if proc.returncode:
        return {"outcome": f"child failed: {proc.stderr.strip().splitlines()[-1][:110]}", "seconds": float("nan"),
                "peak_above_base_mb": float("nan")}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> None:
    config = tomllib.loads((REPO / ".streamlit" / "config.toml").read_text())
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--limit-mb", type=int, default=int(config["server"]["maxUploadSize"]))
    parser.add_argument("--no-default", action="store_true", help="skip the runs with the core's 1 GB default")
    parser.add_argument("--only", type=int, nargs="+", default=[1, 2, 3], help="bombs to run (1, 2, 3)")
    args = parser.parse_args(argv)
    limit = args.limit_mb << 20
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        makers = {
            1: ("Parquet, 2e7 constant rows x 3", lambda: constant_parquet(tmp / "rows2e7.parquet", 20_000_000, 3)),
            2: ("Parquet, 1e8 rows x 20 columns",
                lambda: constant_parquet(tmp / "rows1e8x20.parquet", 100_000_000, 20)),
            3: (".csv.gz inflating to 4.3 GB", lambda: gzip_bomb(tmp / "bomb.csv.gz", 4_300_000_000)),
        }
        bombs = [(makers[i][0], makers[i][1]()) for i in args.only]
        print(f"upload limit {args.limit_mb} MB; child process per load; peak RSS above the child's baseline\n")
        print(f"{'bomb':34} {'file':>9} {'limit':>8} {'s':>7} {'peak MB':>8}  outcome")
        for title, path in bombs:
            size = path.stat().st_size
            for name, lim in ((f"{args.limit_mb} MB", limit), ("1 GB*", 0)):
                if lim == 0 and args.no_default:
                    continue
                r = run(path, lim)
                print(f"{title:34} {size / 1e6:>7.2f}MB {name:>8} {r['seconds']:>7.2f} "
                      f"{r['peak_above_base_mb']:>8.0f}  {r['outcome']}")
        print("\n* the core's default limit (DEFAULT_MAX_BYTES): what a caller that does not pass a limit gets "
              "(the dashboard, before it passed its own)")


if __name__ == "__main__":
    main()
