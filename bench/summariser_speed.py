"""Per-partition summariser speed: rows per CPU-second of one 10⁶-row chunk, in this process — a benchmark, not a test.

What a Dask worker (and the embedded engine) does per partition, timed part by part with ``time.thread_time``
(medians of ``--repeats``): the Parquet read + validation (``distributed_reading.read_partition`` of a 10⁶-row
file in row groups of 250,000, as ``bench/distributed.py`` writes them), the first pass's share (the σ values and
row ids, their radix digits), and ``summary.summarize`` of the regression chunk (Gaussian, 15 equal-count σ-bins
with exact edges) and of a K = 10 classification chunk.  Inside ``summarize`` the leaf functions are wrapped to
split its CPU time: the exact sums, the WIS columns, Dekker's product, the σ-bins, the bootstrap-block hash, the
PIT / z histograms and the rest.  Side by side in the same process: the same ``summarize`` with the exact sums
forced through the general path (``mergeable_exact._general_bin_sums``, the algorithm before the fast one) — a
ratio of the two, and a check that both give the same summary bit for bit.

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 nice python bench/summariser_speed.py --repeats 5

Before/after: copy this file into a checkout of the commit before and run both, alternately, at the same load
(the wrapped leaves that the older tree lacks are left out; its "general path" line is then the same code twice).
"""

from __future__ import annotations

import argparse
import collections
import dataclasses
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402
import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402

from calib_core.base import mergeable_exact  # noqa: E402
from calib_core.base.mergeable import equal_count_edges  # noqa: E402
from calib_core.scale import regression as reg_mod  # noqa: E402
from calib_core.scale.classification import spec_for_classification  # noqa: E402
from calib_core.scale.distributed_partitions import expand_paths, plan_partitions  # noqa: E402
from calib_core.scale.distributed_quantiles import _sigma_subsets, _stat_leaf  # noqa: E402
from calib_core.scale.distributed_reading import ReadOptions, global_ids, read_partition  # noqa: E402
from calib_core.scale.regression_spec import regression_spec  # noqa: E402
from calib_core.scale.summary import summarize  # noqa: E402

N = 1_000_000
PARTS = ["exact_bin_sums_columns", "_wis_columns", "_two_product", "bin_by_edges", "hash_block", "_unit_hist",
         "_uniform_hist", "scaled_variance_columns"]


def write_files(folder: Path) -> tuple[Path, Path]:
    """A 10⁶-row Gaussian file (as bench/distributed.py: σ log-normal, 15 % over-confident) and a K = 10 file."""
    rng = np.random.default_rng(0)
    sigma = rng.lognormal(0.0, 0.5, N)
    mean = rng.normal(0.0, 2.0, N)
    y = mean + 1.15 * sigma * rng.standard_normal(N)
    reg = folder / "reg.parquet"
    pq.write_table(pa.table({"y": y, "mean": mean, "std": sigma}), reg, row_group_size=250_000)
    logits = rng.normal(0.0, 1.5, (N, 10))
    p = np.exp(logits - logits.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    labels = (p.cumsum(axis=1) < rng.random((N, 1))).sum(axis=1).clip(0, 9)
    cls = folder / "cls.parquet"
    cols = {f"prob_{j}": p[:, j] for j in range(10)}
    cols["label"] = labels
    pq.write_table(pa.table(cols), cls, row_group_size=250_000)
    return reg, cls


def cpu(fn, repeats: int) -> tuple[float, object]:
    """Median thread CPU seconds of ``fn()`` over ``repeats`` calls, and its last result."""
    times, out = [], None
    for _ in range(repeats):
        t = time.thread_time()
        out = fn()
        times.append(time.thread_time() - t)
    return float(np.median(times)), out


def split_summarize(pset, spec, ids, repeats: int) -> tuple[float, dict[str, float]]:
    """Median CPU of summarize and the mean CPU of each wrapped leaf inside it."""
    acc: collections.Counter = collections.Counter()
    saved = {}
    for name in PARTS:
        f = getattr(reg_mod, name, None)
        if f is None:  # an older tree (the benchmark is also run on the commit before, for the before column)
            continue
        saved[name] = f

        def timed(*a, _f=f, _n=name, **k):
            t = time.thread_time()
            r = _f(*a, **k)
            acc[_n] += time.thread_time() - t
            return r
        setattr(reg_mod, name, timed)
    try:
        total, _ = cpu(lambda: summarize(pset, spec=spec, row_ids=ids), repeats)
    finally:
        for name, f in saved.items():
            setattr(reg_mod, name, f)
    return total, {k: v / repeats for k, v in acc.items()}


def _general_columns(index, n_cells, columns):
    return [mergeable_exact._general_bin_sums(index, n_cells, x) for x in columns]


def same_summary(a, b) -> bool:
    for key in a.parts:
        for name, x in a.parts[key].items():
            y = b.parts[key][name]
            if x.dtype == object:
                if [int(v) for v in x.reshape(-1)] != [int(v) for v in y.reshape(-1)]:
                    return False
            elif not np.array_equal(x, y, equal_nan=True):
                return False
    return True


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args(argv)
    print(f"load average {os.getloadavg()[0]:.1f}; numpy {np.__version__}; one thread; medians of {args.repeats}")
    with tempfile.TemporaryDirectory(dir="/tmp") as tmp:
        reg, cls = write_files(Path(tmp))
        (part,), _ = plan_partitions(expand_paths(str(reg)), rows_per_partition=N)
        opts = ReadOptions(task="regression", layout="gaussian")
        t_read, pset = cpu(lambda: read_partition(part, opts), args.repeats)
        ids = global_ids(part, pset)
        t_first, _ = cpu(lambda: _stat_leaf(part, lambda p: _sigma_subsets(p, opts, True), None), args.repeats)
        e = equal_count_edges(np.asarray(pset.dist.std()), ids, 15)
        spec = dataclasses.replace(regression_spec(layout="gaussian"),
                                   sigma_edges=(("*", "*", tuple(map(float, e[0])), tuple(map(int, e[1]))),))
        t_sum, split = split_summarize(pset, spec, ids, args.repeats)
        fast = summarize(pset, spec=spec, row_ids=ids)
        t_ser, _ = cpu(lambda: fast.to_bytes(), args.repeats)
        saved = getattr(reg_mod, "exact_bin_sums_columns", None)
        if saved is not None:
            reg_mod.exact_bin_sums_columns = _general_columns
        try:
            t_gen, slow = cpu(lambda: summarize(pset, spec=spec, row_ids=ids), args.repeats)
        finally:
            if saved is not None:
                reg_mod.exact_bin_sums_columns = saved
        print(f"\nregression (Gaussian), {N:,} rows, 15 σ-bins, exact edges")
        print(f"  read + validate (one pass)        {t_read:7.3f} s  {N / t_read:>12,.0f} rows/CPU-s")
        print(f"  first pass leaf (read + digits)   {t_first:7.3f} s")
        print(f"  summarize                         {t_sum:7.3f} s  {N / t_sum:>12,.0f} rows/CPU-s")
        for name in PARTS:
            print(f"    {name:30s}  {split.get(name, 0.0):7.3f} s  {100 * split.get(name, 0.0) / t_sum:4.0f} %")
        rest = t_sum - sum(split.values())
        print(f"    {'the rest (block sums, PIT, …)':30s}  {rest:7.3f} s  {100 * rest / t_sum:4.0f} %")
        print(f"  summarize, exact sums by the general path {t_gen:7.3f} s: fast/general = {t_sum / t_gen:.2f}; "
              f"same summary bit for bit: {same_summary(fast, slow)}")
        print(f"  summary to bytes                  {t_ser:7.3f} s ({len(fast.to_bytes()) / 1024:.0f} KiB)")
        worker = 3 * t_read + 2 * max(t_first - t_read, 0.0) + t_sum
        print(f"  per 10⁶ rows with 3 reads (2 first-pass passes + summaries): {worker:.3f} s → "
              f"{N / worker:,.0f} rows/CPU-s in process")
        cparts, _ = plan_partitions(expand_paths(str(cls)), rows_per_partition=N)  # K = 10: the memory budget cuts
        copts = ReadOptions(task="classification")                              # 10⁶ rows into several partitions
        sets = [read_partition(p, copts) for p in cparts]
        t_cread = sum(cpu(lambda p=p: read_partition(p, copts), args.repeats)[0] for p in cparts)
        cspec = spec_for_classification(sets[0])
        t_csum = sum(cpu(lambda p=p, c=c: summarize(c, spec=cspec, row_ids=global_ids(p, c)), args.repeats)[0]
                     for p, c in zip(cparts, sets, strict=True))
        print(f"\nclassification (K = 10), {N:,} rows in {len(cparts)} partitions, 15 equal-width bins")
        print(f"  read + validate                   {t_cread:7.3f} s  {N / t_cread:>12,.0f} rows/CPU-s")
        print(f"  summarize                         {t_csum:7.3f} s  {N / t_csum:>12,.0f} rows/CPU-s")
        print(f"  both                              {t_cread + t_csum:7.3f} s  "
              f"{N / (t_cread + t_csum):>12,.0f} rows/CPU-s")
    print(f"\nload average at the end {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
