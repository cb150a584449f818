"""Calibration summaries of Parquet data sets on Dask: one machine's ``LocalCluster`` or an existing cluster.

The in-memory path (``cc.load_predictions`` → ``cc.diagnose``) holds every row; here a data set of any size is read
partition by partition on Dask workers, each partition is reduced to a mergeable
:class:`~calib_core.scale.summary.Summary` and the summaries are merged in a tree, so no process ever holds more than
one partition.  The pipeline of :func:`summarize_parquet`:

1. **Plan** (on the client, footers only): the files of the glob, in sorted order; every file's Arrow schema is
   compared with the first file's (:func:`~calib_core.scale.distributed_partitions.check_schemas`: a column missing
   from one file, or a column whose type differs in kind — numeric / text / boolean / other — raises an
   :class:`~calib_core.base.predictions.InputError` naming both files and the column); row groups are grouped into
   partitions of about ``rows_per_partition`` rows — by default as many as keep a task's working set near 600 MB
   (:func:`~calib_core.scale.distributed_partitions.auto_rows_per_partition`) —
   (:func:`~calib_core.scale.distributed_partitions.plan_partitions`), each with its file, row groups, rows of the
   file and the data-set row number of its first row.  Dask's own ``read_parquet`` is not used to cut partitions
   because it fuses files into one partition when only a few columns are read, which loses the position of a row in
   its file that drop reports and the hashed bootstrap weights need.
2. **Head**: the first rows of the first file go through the same reader as ``cc.load_predictions``
   (``parse_regression_frame`` / ``parse_classification_frame``) on the client, so a wrong mapping or a missing
   column fails at once with the reader's message; the task, the layout and (classification) the class names are
   fixed from it for every partition.
3. **Edges** (when the bins need quantiles of the data: equal-count σ-bins of a regression, equal-mass confidence
   bins): exact order statistics by a distributed radix select
   (:func:`~calib_core.scale.distributed_quantiles.order_statistics`) — each pass reads every partition, counts the
   next bits of the IEEE-754 keys of the values inside the buckets that hold the wanted ranks, and the client narrows
   each bucket; after at most three passes (24 + 20 + 20 bits), or earlier once a bucket is small enough to gather
   (typically the second pass), the value at each rank is known exactly.
4. **Summaries**: every partition is read (pyarrow, page checksums verified), parsed by the same reader with
   ``min_rows=0`` (its dropped rows are counted per reason,
   :class:`~calib_core.scale.distributed_reading.DropTally`) and summarised with
   ``summary.summarize(chunk, spec=spec, row_ids=global row ids)``; the summaries are merged by ``summary.merge``
   in a tree of fan-in 8 on the workers.

Failures: every task is retried once (``retries=1``); on a ``LocalCluster`` the scheduler's ``allowed-failures`` is
1, so a partition whose task was on a worker that died is run again on another worker, and a partition that fails
twice (an exception twice, or two dead workers) is reported by name — file, row groups, rows — with its error
(:class:`~calib_core.scale.distributed_cluster.PartitionError`); no partition is ever skipped.  A partition whose
rows are all invalid is not a failure, wherever it is: its rows are counted as dropped and it is named in the
messages (partition N of M, its file and rows, the reasons); the first rows that fix the task and the mapping come
from the first file with two valid rows in its head.  A row group larger than a partition may be is read in slices
and one whose rows decode (footer and dictionary page headers) to more than 600 kB each is refused before any read.

Dask and distributed are an optional extra (``pip install "calibration-lab[dask]"``); they are imported only inside
the functions that run on a cluster, so ``import calib_core`` never needs them.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from ..base.mergeable import Summary, SummarySpec
from ..base.predictions import InputError, PredictionSet
from ..slices.candidates import DEFAULT_BINS
from .classification import spec_for_classification
from .distributed_cluster import IN_PROCESS, PartitionError, open_client, run_tree
from .distributed_light import LightLayout, light_layout, light_prediction_set
from .distributed_partitions import (
    DEFAULT_ROWS_PER_PARTITION,
    PARTITION_BUDGET_BYTES,
    SLICE_BYTES_PER_CELL,
    Partition,
    data_fields,
    expand_paths,
    plan_partitions,
)
from .distributed_quantiles import equal_mass_edges_distributed, regression_edges_and_kde_floor
from .distributed_reading import DropTally, ReadOptions, global_ids, locate_row, read_head, read_partition
from .regression_spec import regression_spec
from .slices import SliceSummary, summarize_slices
from .slices_sketch import SliceSketch, sketch_slices, spec_from_sketch
from .slices_spec import SAMPLE_ROWS
from .summary import merge_all, summarize, with_edges

__all__ = [
    "DEFAULT_ROWS_PER_PARTITION",
    "IN_PROCESS",
    "ParquetSummary",
    "PartitionError",
    "SliceParquetSummary",
    "empty_partition_notes",
    "open_client",
    "slice_summary_parquet",
    "summarize_parquet",
]


# ----------------------------------------------------------------------------------------------
# The data set's summary

LIGHT_READER = True
"""Partitions of a plain Gaussian data set (three valid float64 columns) read without the parser
(:mod:`~calib_core.scale.distributed_light`); False: every partition through the parser (the tests' reference)."""
# ----------------------------------------------------------------------------------------------


@dataclass
class ParquetSummary:
    """What :func:`summarize_parquet` found.

    Attributes
    ----------
    summary : Summary
        The merged summary; its ``dropped`` holds the global 1-based row numbers of the first dropped rows per
        reason.
    files : list of str
        The files read.
    partitions : list of Partition
        The partitions read.
    n_read : int
        Data rows read.
    passes : int
        The data passes made (1 + the passes of the exact quantiles).
    seconds : dict of str to float
        Wall time per stage (plan, edges, summaries, total).
    messages : list of str
        The head's loader messages, then one per partition without a valid row (:func:`empty_partition_notes`).
    cluster : str
        The cluster it ran on.

    References
    ----------
    .. [1] Rocklin, M. (2015). Dask: parallel computation with blocked algorithms and task scheduling. Proceedings
       of the 14th Python in Science Conference (SciPy 2015), 130–136.
    .. [2] Levi, D., Gispan, L., Giladi, N., & Fetaya, E. (2019). Evaluating and calibrating uncertainty
       prediction in regression tasks. arXiv:1905.11659.
    .. [3] Guo, C., Pleiss, G., Sun, Y., & Weinberger, K. Q. (2017). On calibration of modern neural networks.
       Proceedings of the 34th International Conference on Machine Learning (ICML), PMLR 70, 1321–1330.
    """

    summary: Summary
    files: list[str]
    partitions: list[Partition]
    n_read: int
    passes: int
    seconds: dict[str, float]
    messages: list[str]
    cluster: str

    def dropped_table(self) -> pd.DataFrame:
        """Reason, count and the first rows as ``file.parquet:row``.

        Returns
        -------
        DataFrame
            Columns ``reason, count, rows``, the most frequent reason first.
        """
        locate = locate_row(self.partitions)
        rows = [{"reason": r, "count": int(d["count"]),
                 "rows": ", ".join(locate(int(i)) for i in d["first"]) + (" …" if d["count"] > len(d["first"]) else "")}
                for r, d in sorted(self.summary.dropped.items(), key=lambda kv: (-kv[1]["count"], kv[0]))]
        return pd.DataFrame(rows, columns=["reason", "count", "rows"])

    @property
    def n_dropped(self) -> int:
        """Rows read but not summarised (a row dropped for two reasons counts once).

        Returns
        -------
        int
            ``n_read − summary.n_rows``.
        """
        return self.n_read - self.summary.n_rows


@dataclass
class _Leaf:
    """A partition's summary and, for partitions without a valid row, (index, why) — merged in the tree."""

    summary: Summary
    empty: tuple[tuple[int, str], ...] = ()


def _summarize_leaf(part: Partition, options: ReadOptions, spec: SummarySpec, by_group: bool,
                    light: LightLayout | None = None) -> _Leaf:
    """Read, parse and summarise one partition; its drops carry data-set row numbers (a partition without a valid
    row gives an empty summary that only counts them, and says so).  ``light``: a partition of valid rows of a plain
    Gaussian data set is read without the parser (the same set, :mod:`~calib_core.scale.distributed_light`)."""
    pset = light_prediction_set(part, light) if light is not None else None
    if pset is None:
        pset = read_partition(part, options)
    tally = DropTally.of(pset, part.row_id)
    if pset.n_rows == 0:
        reasons = sorted(tally.counts.items(), key=lambda kv: (-kv[1], kv[0]))
        why = "; ".join(f"{reason}: {count:,}" for reason, count in reasons[:3]) or "no row read"
        return _Leaf(Summary(spec, {}, 0, tally.as_dropped(), part.name, ()), ((part.index, why),))
    out = summarize(pset, spec=spec, row_ids=global_ids(part, pset), by_group=by_group)
    out.dropped = tally.as_dropped()
    return _Leaf(out)


def _merge_leaves(*leaves: _Leaf) -> _Leaf:
    return _Leaf(merge_all([leaf.summary for leaf in leaves]), tuple(e for leaf in leaves for e in leaf.empty))


def empty_partition_notes(parts: Sequence[Partition], empty: Sequence[tuple[int, str]]) -> list[str]:
    """One sentence per partition without a valid row: ``partition N of M: file, row group (rows), why``.

    Parameters
    ----------
    parts : sequence of Partition
        The data set's partitions.
    empty : sequence of (int, str)
        (partition index, the drop reasons with their counts).

    Returns
    -------
    list of str
        At most 10 sentences (then how many more), in partition order.

    References
    ----------
    .. [1] Rocklin, M. (2015). Dask: parallel computation with blocked algorithms and task scheduling. Proceedings
       of the 14th Python in Science Conference (SciPy 2015), 130–136.
    """
    rows = sorted(empty)
    out = [f"Partition {i + 1:,} of {len(parts):,} ({parts[i].name}) has no valid row ({why}); its rows are counted "
           "as dropped and the other partitions are summarised." for i, why in rows[:10]]
    if len(rows) > 10:
        out.append(f"{len(rows) - 10:,} more partitions have no valid row.")
    return out


def summarize_parquet(
    paths_or_glob: Any,
    *,
    columns: Mapping[str, Any] | None = None,
    task: str | None = None,
    renormalize: bool = False,
    crossing: str = "rearrange",
    layout: str | None = None,
    scheduler: Any = None,
    n_workers: int = 2,
    memory_limit: str | int = "2GiB",
    rows_per_partition: int | None = DEFAULT_ROWS_PER_PARTITION,
    by_group: bool = True,
    spec: SummarySpec | None = None,
    n_bins: int = 15,
    pit_bins: int = 20,
    strategy: str = "uniform",
    seed: int = 0,
    **spec_options: Any,
) -> ParquetSummary:
    """The mergeable calibration summary of a Parquet data set, computed on Dask.

    Pipeline (module docstring): plan the partitions from the footers (schemas checked: a disagreement names both
    files and the column), parse the first rows with the reader of ``cc.load_predictions``, compute the exact
    equal-count σ edges of every (model, group) by a distributed radix select over (σ, row number) when the spec
    needs them, then ``summary.summarize`` every partition (row ids: the 1-based row numbers of the data set, files
    in name order — one file read in memory gets the same ids, so the same summary) and merge the summaries in a tree
    on the workers.  The workers must be able to read the paths and import ``calib_core``.

    Parameters
    ----------
    paths_or_glob : str, path-like or iterable of them
        A file, a directory, a glob or a list of them.
    columns : mapping, optional
        The column mapping, as for ``cc.load_predictions``.
    task : {"regression", "classification"}, optional
        The task (default: detected from the first rows).
    renormalize : bool, default False
        The classification ``renormalize`` option of ``cc.load_predictions``.
    crossing, layout : str, optional
        The regression ``crossing`` and ``layout`` options of ``cc.load_predictions``; the layout chosen on the
        first rows is the one every partition is read in.
    scheduler : str, Client or None, default None
        None (a new ``LocalCluster`` of ``n_workers`` single-threaded processes, ``memory_limit`` each),
        :data:`IN_PROCESS` (no cluster: one partition after the other in this process), an address
        ``tcp://HOST:PORT`` of a running scheduler, or a ``distributed.Client``.
    n_workers : int, default 2
        Workers of a new ``LocalCluster``.
    memory_limit : str or int, default "2GiB"
        Memory of each new worker.
    rows_per_partition : int or None, default DEFAULT_ROWS_PER_PARTITION
        None: ``auto_rows_per_partition`` of the column count.
    by_group : bool, default True
        Also summarise each group of each model.
    spec : SummarySpec, optional
        A ready spec (no edges pass).
    n_bins : int, default 15
        σ-bins (regression) or confidence bins (classification).
    pit_bins : int, default 20
        Bins of the PIT histogram (regression).
    strategy : {"uniform", "quantile"}, default "uniform"
        Classification bins: equal width, or equal mass with exact edges from ``equal_mass_edges_distributed``.
    seed : int, default 0
        Seed of the hashed bootstrap blocks.  ``n_bins``, ``pit_bins``, ``strategy`` and ``seed`` go into the spec,
        like the same options of ``cc.diagnose``.
    **spec_options
        Passed to ``regression_spec`` (``coverages``, ``n_blocks``, …) or ``classification_spec``.

    Returns
    -------
    ParquetSummary
        The merged summary with the files, partitions, passes, timings and the cluster.

    Raises
    ------
    InputError
        For bad input (unreadable or disagreeing files, a wrong mapping, point predictions only, fewer than two valid
        rows).
    PartitionError
        When partitions failed twice.

    References
    ----------
    .. [1] Rocklin, M. (2015). Dask: parallel computation with blocked algorithms and task scheduling. Proceedings
       of the 14th Python in Science Conference (SciPy 2015), 130–136.
    .. [2] Levi, D., Gispan, L., Giladi, N., & Fetaya, E. (2019). Evaluating and calibrating uncertainty
       prediction in regression tasks. arXiv:1905.11659.
    .. [3] Kuleshov, V., Fenner, N., & Ermon, S. (2018). Accurate uncertainties for deep learning using calibrated
       regression. Proceedings of the 35th International Conference on Machine Learning (ICML), PMLR 80,
       2796–2804.
    .. [4] Guo, C., Pleiss, G., Sun, Y., & Weinberger, K. Q. (2017). On calibration of modern neural networks.
       Proceedings of the 34th International Conference on Machine Learning (ICML), PMLR 70, 1321–1330.
    """
    seconds: dict[str, float] = {}
    t0 = time.perf_counter()
    parts, files = plan_partitions(paths_or_glob, rows_per_partition=rows_per_partition)
    options, head = read_head(files, task=task, columns=columns, renormalize=renormalize, crossing=crossing,
                              layout=layout)
    seconds["plan"] = time.perf_counter() - t0
    light = light_layout(files, options, head) if LIGHT_READER else None
    passes = 1
    with open_client(scheduler, n_workers=n_workers, memory_limit=memory_limit) as client:
        cluster = _describe(client)
        t1 = time.perf_counter()
        if spec is None:
            if options.task == "classification":
                spec = spec_for_classification(head, by_group=by_group, n_bins=n_bins, strategy=strategy, seed=seed,
                                               **spec_options)
                if strategy == "quantile":
                    conf_edges, extra = equal_mass_edges_distributed(client, parts, options, n_bins=n_bins,
                                                                     by_group=by_group)
                    passes += extra
                    spec = with_edges(spec, conf_edges)
            else:
                if head.dist is None:
                    raise InputError("point predictions only: a summary needs a predictive distribution",
                                     source=head.source, hint="add an uncertainty column (std, quantiles, samples)")
                ensemble = head.layout == "sample"
                edges, floor, extra = regression_edges_and_kde_floor(client, parts, options, n_bins=n_bins,
                                                                     by_group=by_group, kde=ensemble, light=light)
                passes += extra
                if ensemble:
                    spec_options.setdefault("kde_floor", floor)
                if head.layout == "quantile":
                    spec_options.setdefault("quantile_levels", head.dist.levels)
                spec = regression_spec(layout=head.layout, sigma_edges=edges, n_bins=n_bins, pit_bins=pit_bins,
                                       seed=seed, **spec_options)
        seconds["edges"] = time.perf_counter() - t1
        t2 = time.perf_counter()
        leaf = run_tree(client, lambda p: _summarize_leaf(p, options, spec, by_group, light), parts, _merge_leaves,
                        stage="summary")
        summary = leaf.summary
        seconds["summaries"] = time.perf_counter() - t2
    summary.source = str(paths_or_glob) if isinstance(paths_or_glob, (str, os.PathLike)) else f"{len(files)} files"
    seconds["total"] = time.perf_counter() - t0
    n_read = sum(p.n_rows for p in parts)
    if summary.n_rows < 2:
        raise InputError(f"only {summary.n_rows} of {n_read:,} rows are valid (at least 2 are needed)",
                         source=summary.source, hint="see the dropped rows; check the column mapping")
    # the head's notes about the layout and columns (its row counts are only the head's: the drops are in the summary)
    notes = [m for m in head.messages[1:] if "row" not in m] + empty_partition_notes(parts, leaf.empty)
    return ParquetSummary(summary, files, parts, n_read, passes, seconds, notes, cluster)


def _describe(client: Any) -> str:
    if client is None:
        return "in this process, one partition at a time"
    info = client.scheduler_info()
    workers = info.get("workers", {})
    threads = sum(int(w.get("nthreads", 1)) for w in workers.values())
    return f"{info.get('address', '?')} ({len(workers)} workers, {threads} threads)"


# ----------------------------------------------------------------------------------------------
# Slice statistics (the slice explorer) from mergeable slice summaries
# ----------------------------------------------------------------------------------------------


@dataclass
class SliceParquetSummary:
    """What :func:`slice_summary_parquet` found.

    Attributes
    ----------
    summary : SliceSummary
        The merged :class:`~calib_core.scale.slices.SliceSummary` (``summary.n_rows`` valid rows).
    files : list of str
        The files read.
    partitions : list of Partition
        The partitions read.
    n_read : int
        Data rows read.
    seconds : dict of str to float
        Wall seconds per stage (plan, edges, summaries, total).
    messages : list of str
        The head's loader messages.
    cluster : str
        The cluster it ran on.

    References
    ----------
    .. [1] Rocklin, M. (2015). Dask: parallel computation with blocked algorithms and task scheduling. Proceedings
       of the 14th Python in Science Conference (SciPy 2015), 130–136.
    .. [2] Chung, Y., Kraska, T., Polyzotis, N., Tae, K. H., & Whang, S. E. (2019). Slice Finder: automated data
       slicing for model validation. Proceedings of the 35th IEEE International Conference on Data Engineering
       (ICDE), 1550–1553.
    """

    summary: SliceSummary
    files: list[str]
    partitions: list[Partition]
    n_read: int
    seconds: dict[str, float]
    messages: list[str]
    cluster: str


def _text_slice_columns(files: Sequence[str], head: PredictionSet) -> list[str]:
    """The file's text columns that the head's reader kept as slice columns (no role took them): read as
    dictionaries by the slice passes."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    kept = set() if head.slice_columns is None else {str(c) for c in head.slice_columns.columns}
    return [f.name for f in pq.read_schema(files[0])
            if (pa.types.is_string(f.type) or pa.types.is_large_string(f.type)) and str(f.name).strip() in kept]


def _sketch_leaf(part: Partition, options: ReadOptions, rate: float, seed: int,
                 dictionary: Sequence[str] = ()) -> SliceSketch | None:
    pset = read_partition(part, options, dictionary=dictionary, zero_copy=True)
    if pset.n_rows == 0:
        return None
    return sketch_slices(pset, rate=rate, row_ids=global_ids(part, pset), seed=seed)


def _merge_sketches(*sketches: SliceSketch | None) -> SliceSketch | None:
    found = [s for s in sketches if s is not None]
    if not found:
        return None
    out = found[0]
    for s in found[1:]:
        out = out.merge(s)
    return out


def _slice_leaf(part: Partition, options: ReadOptions, spec: Any,
                dictionary: Sequence[str] = ()) -> SliceSummary | None:
    pset = read_partition(part, options, dictionary=dictionary, zero_copy=True)
    if pset.n_rows == 0:
        return None
    return summarize_slices(pset, spec, row_ids=global_ids(part, pset))


def _merge_slice_summaries(*summaries: SliceSummary | None) -> SliceSummary | None:
    found = [s for s in summaries if s is not None]
    if not found:
        return None
    out = found[0]
    for s in found[1:]:
        out = out.merge(s)
    return out


def slice_summary_parquet(
    paths_or_glob: Any,
    *,
    columns: Mapping[str, Any] | None = None,
    task: str | None = None,
    renormalize: bool = False,
    scheduler: Any = None,
    n_workers: int = 2,
    memory_limit: str | int = "2GiB",
    rows_per_partition: int | None = DEFAULT_ROWS_PER_PARTITION,
    n_bins: int = DEFAULT_BINS,
    sample_rows: int = SAMPLE_ROWS,
    target: str = "auto",
    seed: int = 0,
) -> SliceParquetSummary:
    """The slice explorer's summary of a Parquet data set on Dask.

    Every slice column's and every pair of columns' per-cell sums (:mod:`calib_core.scale.slices`), from which
    :func:`calib_core.scale.slices_ranking.summary_ranking` ranks the slices as the in-memory explorer does.  Two passes
    over the partitions, each a tree of merges on the workers (``run_tree``; failures as in :func:`summarize_parquet`):
    (1) the :class:`~calib_core.scale.slices_sketch.SliceSketch` — text levels, which numeric columns have more than 12
    values, and the rows whose row-id hash falls below m/N (m = ``sample_rows``, N the rows of the files), whose
    quantiles give the numeric and σ edges (rank error in ``summary.spec.rank_error``; exact when N ≤ m); (2) the slice
    summary of every partition with those edges.  Rows are read and parsed by the reader of ``cc.load_predictions``;
    invalid rows are left out, as in memory.

    Parameters
    ----------
    paths_or_glob : str, path-like or iterable of them
        A file, a directory, a glob or a list of them.
    columns : mapping, optional
        The column mapping, as for ``cc.load_predictions``.
    task : {"regression", "classification"}, optional
        The task (default: detected from the first rows).
    renormalize : bool, default False
        The classification ``renormalize`` option.
    scheduler : str, Client or None, default None
        As :func:`summarize_parquet`.
    n_workers : int, default 2
        Workers of a new ``LocalCluster``.
    memory_limit : str or int, default "2GiB"
        Memory of each new worker.
    rows_per_partition : int or None, default DEFAULT_ROWS_PER_PARTITION
        None: PARTITION_BUDGET_BYTES / (SLICE_BYTES_PER_CELL · columns).
    n_bins : int, default DEFAULT_BINS
        Quantile bins of a numeric slice column.
    sample_rows : int, default SAMPLE_ROWS
        m, the expected rows of the hashed sample the edges come from.
    target : str, default "auto"
        The classification event (as the in-memory explorer).
    seed : int, default 0
        Seed of the row hashes.

    Returns
    -------
    SliceParquetSummary
        The merged slice summary with the files, partitions, timings and the cluster.

    Raises
    ------
    InputError
        For bad input, or when no row is valid.
    PartitionError
        When partitions failed twice.

    References
    ----------
    .. [1] Rocklin, M. (2015). Dask: parallel computation with blocked algorithms and task scheduling. Proceedings
       of the 14th Python in Science Conference (SciPy 2015), 130–136.
    .. [2] Chung, Y., Kraska, T., Polyzotis, N., Tae, K. H., & Whang, S. E. (2019). Slice Finder: automated data
       slicing for model validation. Proceedings of the 35th IEEE International Conference on Data Engineering
       (ICDE), 1550–1553.
    .. [3] Massart, P. (1990). The tight constant in the Dvoretzky–Kiefer–Wolfowitz inequality. The Annals of
       Probability, 18(3), 1269–1283.
    """
    seconds: dict[str, float] = {}
    t0 = time.perf_counter()
    if rows_per_partition is None:  # a slice pass needs ~25 B per cell (measured): larger partitions than a summary's
        import pyarrow.parquet as pq

        first = expand_paths(paths_or_glob)[0]
        try:
            n_columns = len(data_fields(pq.read_schema(first)))
        except (OSError, ValueError):
            n_columns = 1  # plan_partitions names the unreadable file below
        rows_per_partition = max(10_000, PARTITION_BUDGET_BYTES // (SLICE_BYTES_PER_CELL * max(1, n_columns)))
    parts, files = plan_partitions(paths_or_glob, rows_per_partition=rows_per_partition,
                                   bytes_per_cell=SLICE_BYTES_PER_CELL)
    options, head = read_head(files, task=task, columns=columns, renormalize=renormalize)
    n_read = sum(p.n_rows for p in parts)
    rate = min(1.0, float(sample_rows) / max(n_read, 1))
    text = _text_slice_columns(files, head)
    seconds["plan"] = time.perf_counter() - t0
    with open_client(scheduler, n_workers=n_workers, memory_limit=memory_limit) as client:
        cluster = _describe(client)
        t1 = time.perf_counter()
        sketch = run_tree(client, lambda p: _sketch_leaf(p, options, rate, seed, text), parts, _merge_sketches,
                          stage="slice-edges")
        if sketch is None:
            raise InputError(f"none of the {n_read:,} rows is valid", source=str(paths_or_glob),
                             hint="check the column mapping")
        spec = spec_from_sketch(sketch, n_bins=n_bins, target=target, seed=seed)
        seconds["edges"] = time.perf_counter() - t1
        t2 = time.perf_counter()
        summary = run_tree(client, lambda p: _slice_leaf(p, options, spec, text), parts, _merge_slice_summaries,
                           stage="slice-summary")
        seconds["summaries"] = time.perf_counter() - t2
    seconds["total"] = time.perf_counter() - t0
    notes = [m for m in head.messages[1:] if "row" not in m]
    return SliceParquetSummary(summary, files, parts, n_read, seconds, notes, cluster)
