"""Calibration summaries of Parquet data sets on Dask: one machine's ``LocalCluster`` or an existing cluster.

The in-memory path (``cc.load_predictions`` → ``cc.diagnose``) holds every row; here a data set of any size is
read partition by partition on Dask workers, each partition is reduced to a mergeable
:class:`~calib_core.scale.summary.Summary` and the summaries are merged in a tree, so no process ever holds more than
one partition.  The pipeline of :func:`summarize_parquet`:

1. **Plan** (on the client, footers only): the files of the glob, in sorted order; every file's Arrow schema is
   compared with the first file's (:func:`check_schemas`: a column missing from one file, or a column whose
   type differs in kind — numeric / text / boolean / other — raises an :class:`~calib_core.base.predictions.InputError`
   naming both files and the column); row groups are grouped into partitions of about ``rows_per_partition``
   rows — by default as many as keep a task's working set near 600 MB (:func:`auto_rows_per_partition`) —
   (:func:`plan_partitions`), each with its file, row groups, rows of the file and the data-set row number of its
   first row.  Dask's own ``read_parquet`` is not used to cut partitions because it fuses files into one
   partition when only a few columns are read, which loses the position of a row in its file that drop reports
   and the hashed bootstrap weights need.
2. **Head**: the first rows of the first file go through the same reader as ``cc.load_predictions``
   (``parse_regression_frame`` / ``parse_classification_frame``) on the client, so a wrong mapping or a missing
   column fails at once with the reader's message; the task, the layout and (classification) the class names are
   fixed from it for every partition.
3. **Edges** (when the bins need quantiles of the data: equal-count σ-bins of a regression, equal-mass confidence
   bins): exact order statistics by a distributed radix select (:func:`order_statistics`) — each pass reads every
   partition, counts the next bits of the IEEE-754 keys of the values inside the buckets that hold the wanted
   ranks, and the client narrows each bucket; after at most three passes (24 + 20 + 20 bits), or earlier once a
   bucket is small enough to gather (typically the second pass), the value at each rank is known exactly.
4. **Summaries**: every partition is read (pyarrow, page checksums verified), parsed by the same reader with
   ``min_rows=0`` (its dropped rows are counted per reason, :class:`DropTally`) and summarised with
   ``summary.summarize(chunk, spec=spec, row_ids=global row ids)``; the summaries are merged by
   ``summary.merge`` in a tree of fan-in 8 on the workers.

Failures: every task is retried once (``retries=1``); on a ``LocalCluster`` the scheduler's
``allowed-failures`` is 1, so a partition whose task was on a worker that died is run again on another worker,
and a partition that fails twice (an exception twice, or two dead workers) is reported by name — file, row
groups, rows — with its error (:class:`PartitionError`); no partition is ever skipped.  A partition whose rows
are all invalid is not a failure: its rows are counted as dropped.

Dask and distributed are an optional extra (``pip install "calibration-lab[dask]"``); they are imported only
inside the functions that run on a cluster, so ``import calib_core`` never needs them.
"""

from __future__ import annotations

import glob
import os
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..base.mergeable import Summary, SummarySpec, equal_count_positions
from ..base.predictions import InputError, PredictionSet, iter_subsets
from ..base.regression import SampleSet
from ..data.classification import parse_classification_frame
from ..data.detect import detect_task
from ..data.regression import parse_regression_frame
from ..slices.candidates import DEFAULT_BINS
from .classification import classification_rows_values, spec_for_classification
from .regression import regression_spec, silverman_bandwidths
from .slices import SAMPLE_ROWS, SliceSketch, SliceSummary, sketch_slices, spec_from_sketch, summarize_slices
from .summary import merge_all, summarize, with_edges

__all__ = [
    "DEFAULT_ROWS_PER_PARTITION",
    "IN_PROCESS",
    "PARTITION_BUDGET_BYTES",
    "ParquetSummary",
    "auto_rows_per_partition",
    "summarize_parquet",
    "SliceParquetSummary",
    "slice_summary_parquet",
    "DropTally",
    "Partition",
    "PartitionError",
    "ReadOptions",
    "check_schemas",
    "expand_paths",
    "float_keys",
    "key_values",
    "locate_row",
    "open_client",
    "order_statistics",
    "parse_frame",
    "plan_partitions",
    "process_peak_mb",
    "worker_peak_mb",
    "read_head",
    "read_partition",
    "regression_edges",
    "regression_edges_and_kde_floor",
    "equal_mass_edges_distributed",
    "run_tree",
]

DEFAULT_ROWS_PER_PARTITION = None
"""``rows_per_partition=None``: :func:`auto_rows_per_partition` of the data set's column count."""

PARTITION_BUDGET_BYTES = 600_000_000
"""Working set one partition task may take.  Measured by ``bench/distributed.py`` (peak resident memory of a worker
process, about 300 MB of which is the interpreter and libraries): ≈ 230 bytes per cell of a partition
(reading, parsing, summarising), so a budget of 6·10⁸ bytes keeps a worker near 1 GB."""

BYTES_PER_CELL = 230
SLICE_BYTES_PER_CELL = 25
"""Working set of the slice explorer's passes per cell of a partition (measured: 570 MB above the interpreter for
10⁶ rows × 23 columns), so its partitions default to PARTITION_BUDGET_BYTES / (25 B · columns) rows."""

IN_PROCESS = "in-process"
"""``scheduler=IN_PROCESS``: no cluster — the partitions are read and summarised one after the other in this
process (memory: one partition's working set), and Dask need not be installed (the dashboard's default engine)."""


def auto_rows_per_partition(n_columns: int) -> int:
    """Rows per partition for a table of ``n_columns`` columns: ⌊PARTITION_BUDGET_BYTES / (230 B · columns)⌋, at
    least 10,000 — 869,565 rows for (y, mean, std), 237,154 for 10 probabilities and a label."""
    return max(10_000, PARTITION_BUDGET_BYTES // (BYTES_PER_CELL * max(1, int(n_columns))))

FIRST_ROW_IDS = 10
"""Row numbers kept per drop reason (the smallest global 1-based row numbers; the count is exact)."""

_FAN_IN = 8
_GATHER_LIMIT = 4_000_000  # values the client gathers at most in one pass of the order statistics


class PartitionError(RuntimeError):
    """Partitions that failed twice (an exception twice, or two workers that died running them).

    ``failures`` lists ``(partition name, error text)``; the message names every failed partition.
    """

    def __init__(self, failures: Sequence[tuple[str, str]]) -> None:
        self.failures = list(failures)
        lines = "; ".join(f"{name}: {err}" for name, err in self.failures[:10])
        more = f" (and {len(self.failures) - 10} more)" if len(self.failures) > 10 else ""
        super().__init__(
            f"{len(self.failures)} partition(s) failed twice and were not summarised — {lines}{more}. "
            "What to do: fix or remove the file(s) named (a corrupt file fails on every read), or give the workers "
            "more memory if they died; the result is never computed without them."
        )


# ----------------------------------------------------------------------------------------------
# Files, schemas, partitions
# ----------------------------------------------------------------------------------------------


def expand_paths(paths_or_glob: str | os.PathLike | Iterable[str | os.PathLike]) -> list[str]:
    """The Parquet files of a path, a directory (its ``*.parquet`` files), a glob, or a list of them, sorted by
    name within each pattern, without duplicates, as absolute paths (the workers' working directory is not the
    client's; on a cluster the files must be at the same absolute path on every worker, e.g. a shared file system);
    raises ``InputError`` when a pattern matches no file."""
    items = [paths_or_glob] if isinstance(paths_or_glob, (str, os.PathLike)) else list(paths_or_glob)
    out: list[str] = []
    for item in items:
        text = os.fspath(item)
        if Path(text).is_dir():
            found = sorted(str(p) for p in Path(text).glob("*.parquet"))
        elif glob.has_magic(text):
            found = sorted(p for p in glob.glob(text, recursive=True) if Path(p).is_file())
        else:
            found = [text] if Path(text).is_file() else []
        if not found:
            raise InputError(
                "matches no file" if glob.has_magic(text) or Path(text).is_dir() else "no such file",
                source=text,
                hint="check the path or glob (quote it so that the shell does not expand it), e.g. 'data/*.parquet'",
            )
        out += [p for p in (os.path.abspath(f) for f in found) if p not in out]
    return out


def _kind(arrow_type: Any) -> str:
    import pyarrow.types as pat

    if pat.is_dictionary(arrow_type):
        arrow_type = arrow_type.value_type
    if pat.is_boolean(arrow_type):
        return "boolean"
    if pat.is_integer(arrow_type) or pat.is_floating(arrow_type) or pat.is_decimal(arrow_type):
        return "numeric"
    if pat.is_string(arrow_type) or pat.is_large_string(arrow_type) or pat.is_binary(arrow_type):
        return "text"
    return str(arrow_type)


def _data_fields(schema: Any) -> dict[str, Any]:
    """Field name → Arrow type, without pandas' stored index columns."""
    return {f.name: f.type for f in schema if not (f.name.startswith("__index_level_") and f.name.endswith("__"))}


def check_schemas(files: Sequence[str], schemas: Sequence[Any]) -> None:
    """Raise ``InputError`` when the files disagree: every file must have the first file's columns, each of the
    same kind (numeric — any integer, float or decimal width —, text, boolean, or else the identical Arrow type).

    The message names both files, the column and the two types, and counts the files that disagree."""
    first = _data_fields(schemas[0])
    bad: list[str] = []
    for path, schema in zip(files[1:], schemas[1:]):
        fields = _data_fields(schema)
        problem = None
        for name, typ in first.items():
            if name not in fields:
                problem = (f"column {name!r} is in {Path(files[0]).name} but not in {Path(path).name}", name)
                break
            if _kind(fields[name]) != _kind(typ):
                problem = (f"column {name!r} is {typ} in {Path(files[0]).name} but {fields[name]} in "
                           f"{Path(path).name}", name)
                break
        if problem is None:
            extra = [n for n in fields if n not in first]
            if extra:
                problem = (f"column {extra[0]!r} is in {Path(path).name} but not in {Path(files[0]).name}", extra[0])
        if problem is not None:
            bad.append(problem[0])
    if bad:
        more = f" ({len(bad)} files disagree with the first one)" if len(bad) > 1 else ""
        raise InputError(
            f"the files' schemas disagree: {bad[0]}{more}",
            source=str(Path(files[0]).parent),
            columns=[],
            hint="give every file the same columns and types (or read the files that agree with a narrower glob)",
        )


@dataclass(frozen=True)
class Partition:
    """One partition: consecutive row groups of one file.

    ``file_row`` is the 0-based row of the file where it starts and ``row_id`` the number of data set rows before
    it (files in order): its rows are rows ``row_id + 1 … row_id + n_rows`` of the data set, the row ids of the
    summaries (1-based like ``PredictionSet.row_number``, so that one file read in memory has the same ids)."""

    index: int
    path: str
    row_groups: tuple[int, ...]
    file_row: int
    row_id: int
    n_rows: int

    @property
    def name(self) -> str:
        """E.g. ``part-3.parquet row groups 4–7 (rows 4,000,001–8,000,000)`` (1-based rows of the file)."""
        g = self.row_groups
        groups = f"row group {g[0]}" if len(g) == 1 else f"row groups {g[0]}–{g[-1]}"
        return f"{Path(self.path).name} {groups} (rows {self.file_row + 1:,}–{self.file_row + self.n_rows:,})"


def plan_partitions(
    paths_or_glob: Any, *, rows_per_partition: int | None = DEFAULT_ROWS_PER_PARTITION
) -> tuple[list[Partition], list[str]]:
    """The partitions of a Parquet data set and its files, from the footers alone (no data is read).

    Row groups of a file are grouped in order until a partition has at least ``rows_per_partition`` rows (None:
    :func:`auto_rows_per_partition` of the column count, so that a worker's memory does not grow with the width
    of the table; a row group larger than that is one partition); the schemas are checked first
    (:func:`check_schemas`).  Unreadable footers raise ``InputError`` naming the file.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    if rows_per_partition is not None and rows_per_partition < 1:
        raise ValueError("rows_per_partition must be at least 1")
    files = expand_paths(paths_or_glob)
    metas, schemas = [], []
    for path in files:
        try:
            pf = pq.ParquetFile(path)
        except (pa.ArrowException, OSError, ValueError) as exc:
            raise InputError(f"is not a readable Parquet file ({str(exc)[:200]})", source=path,
                             hint="check the file (a Parquet file ends with the bytes PAR1), or leave it out") from None
        metas.append(pf.metadata)
        schemas.append(pf.schema_arrow)
    check_schemas(files, schemas)
    if rows_per_partition is None:
        rows_per_partition = auto_rows_per_partition(len(_data_fields(schemas[0])))
    parts: list[Partition] = []
    row_id = 0
    for path, meta in zip(files, metas):
        groups: list[int] = []
        start = rows = file_row = 0
        for g in range(meta.num_row_groups):
            n = int(meta.row_group(g).num_rows)
            if n == 0:
                continue
            if not groups:
                start = file_row
            groups.append(g)
            rows += n
            file_row += n
            if rows >= rows_per_partition:
                parts.append(Partition(len(parts), path, tuple(groups), start, row_id, rows))
                row_id += rows
                groups, rows = [], 0
        if groups:
            parts.append(Partition(len(parts), path, tuple(groups), start, row_id, rows))
            row_id += rows
    if not parts:
        raise InputError("has no data rows", source=str(paths_or_glob), hint="check the files")
    return parts, files


# ----------------------------------------------------------------------------------------------
# Reading one partition through the readers of cc.load_predictions
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ReadOptions:
    """How every partition is parsed: the task, the column mapping (with the class names fixed from the head) and
    the classification ``renormalize`` option."""

    task: str
    columns: Mapping[str, Any] | None = None
    renormalize: bool = False


def _frame(table: Any, *, zero_copy: bool = False) -> pd.DataFrame:
    """The table as a frame (string column names stripped, index 0 … n−1).  ``zero_copy``: one block per column
    and the table's buffers handed over (``split_blocks``, ``self_destruct``): columns without missing values are
    the read-only Arrow buffers themselves, no copy (the table is unusable afterwards)."""
    import pyarrow as pa

    kw = {"split_blocks": True, "self_destruct": True} if zero_copy else {"memory_pool": pa.system_memory_pool()}
    try:
        frame = table.to_pandas(**kw)
    except (KeyError, IndexError, AttributeError, TypeError, ValueError):
        frame = table.replace_schema_metadata(None).to_pandas(**kw)
    if not isinstance(frame.index, pd.RangeIndex):
        frame = frame.reset_index()
    frame = frame.reset_index(drop=True)
    frame.columns = [str(c).strip() for c in frame.columns]
    return frame


def parse_frame(frame: pd.DataFrame, source: str, options: ReadOptions, *, min_rows: int = 0) -> PredictionSet:
    """A frame through the task's reader (the one behind ``cc.load_predictions``), ``min_rows`` valid rows needed."""
    if options.task == "classification":
        return parse_classification_frame(frame, source, options.columns, options.renormalize, min_rows=min_rows)
    return parse_regression_frame(frame, source, options.columns, min_rows=min_rows)


def read_partition(part: Partition, options: ReadOptions, *, dictionary: Sequence[str] = (),
                   zero_copy: bool = False) -> PredictionSet:
    """Read one partition (pyarrow, page checksums verified where the writer stored them) and parse it; its
    ``row_number`` are the 1-based rows of the partition and ``dropped`` counts its invalid rows.  Columns named
    in ``dictionary`` (text columns no role takes) are read as dictionaries, i.e. pandas categoricals: their
    codes come from the file's dictionary pages, without a Python string per row.  ``zero_copy``: the frame's
    columns are the Arrow buffers (read-only; for readers of the set that do not write into its columns)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        pf = pq.ParquetFile(part.path, page_checksum_verification=True, read_dictionary=list(dictionary) or None)
        table = pf.read_row_groups(list(part.row_groups), use_threads=False)
        frame = _frame(table, zero_copy=zero_copy)
        del table
    finally:
        pa.default_memory_pool().release_unused()
    return parse_frame(frame, part.name, options)


@dataclass
class DropTally:
    """Dropped rows of a data set: per reason the exact count and the smallest global row ids (at most
    :data:`FIRST_ROW_IDS`); ``merge`` is associative and commutative (sums and sorted unions)."""

    counts: dict[str, int] = field(default_factory=dict)
    first: dict[str, np.ndarray] = field(default_factory=dict)
    n_read: int = 0
    n_dropped: int = 0

    @classmethod
    def of(cls, pset: PredictionSet, row_id: int) -> DropTally:
        """The drops of one parsed partition with ``row_id`` data set rows before it (global 1-based rows)."""
        out = cls(n_read=int(pset.n_read), n_dropped=int(pset.dropped.total))
        for reason, rows in pset.dropped.reasons.items():
            rows = np.asarray(rows, dtype=np.int64)
            out.counts[reason] = int(rows.size)
            out.first[reason] = np.sort(rows)[:FIRST_ROW_IDS] + row_id
        return out

    def as_dropped(self) -> dict[str, dict[str, Any]]:
        """The ``Summary.dropped`` form: reason → {"count", "first"}."""
        return {r: {"count": int(c), "first": [int(i) for i in self.first[r]]} for r, c in self.counts.items()}

    def merge(self, other: DropTally) -> DropTally:
        """Counts added, first ids the smallest of both."""
        out = DropTally(dict(self.counts), dict(self.first), self.n_read + other.n_read,
                        self.n_dropped + other.n_dropped)
        for reason, count in other.counts.items():
            out.counts[reason] = out.counts.get(reason, 0) + count
            prev = out.first.get(reason)
            ids = other.first[reason] if prev is None else np.union1d(prev, other.first[reason])
            out.first[reason] = np.sort(ids)[:FIRST_ROW_IDS]
        return out

    def table(self, locate: Callable[[int], str] | None = None) -> pd.DataFrame:
        """One row per reason: reason, count, first rows (``locate`` turns a global id into ``file:row``)."""
        rows = []
        for reason, count in sorted(self.counts.items(), key=lambda kv: (-kv[1], kv[0])):
            ids = self.first[reason]
            where = [locate(int(i)) if locate else str(int(i)) for i in ids]
            rows.append({"reason": reason, "count": count,
                         "rows": ", ".join(where) + (" …" if count > len(ids) else "")})
        return pd.DataFrame(rows, columns=["reason", "count", "rows"])


def locate_row(parts: Sequence[Partition]) -> Callable[[int], str]:
    """Data set row (1-based, files in order) → ``file.parquet:row`` (1-based row of the file)."""
    starts = np.array([p.row_id for p in parts], dtype=np.int64)

    def locate(row: int) -> str:
        p = parts[int(np.searchsorted(starts, row - 1, side="right")) - 1]
        return f"{Path(p.path).name}:{p.file_row + row - p.row_id}"

    return locate


def read_head(files: Sequence[str], *, task: str | None, columns: Mapping[str, Any] | None, renormalize: bool,
              n_rows: int = 2000) -> tuple[ReadOptions, PredictionSet]:
    """Parse the first ``n_rows`` rows of the first file with the reader of ``cc.load_predictions`` (at least two
    valid rows needed), so that a wrong mapping fails before any work is sent to the cluster; returns the options
    every partition is then read with (task detected once, classification class names fixed)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    pf = pq.ParquetFile(files[0])
    batch = next(pf.iter_batches(batch_size=n_rows), None)
    table = pa.Table.from_batches([batch]) if batch is not None else pf.schema_arrow.empty_table()
    frame = _frame(table)
    kind = task or detect_task(frame, columns)
    options = ReadOptions(kind, dict(columns) if columns is not None else None, renormalize)
    head = parse_frame(frame, f"{Path(files[0]).name} (first {len(frame):,} rows)", options, min_rows=2)
    if kind == "classification" and head.classes is not None and "classes" not in (columns or {}):
        options = ReadOptions(kind, {**(columns or {}), "classes": list(head.classes)}, renormalize)
    return options, head


# ----------------------------------------------------------------------------------------------
# Running on a cluster
# ----------------------------------------------------------------------------------------------


class open_client:  # noqa: N801 - used as a context manager, like a function
    """``with open_client(scheduler, n_workers=2) as client``: a ``distributed.Client`` of an existing cluster
    (``scheduler`` an address such as ``tcp://10.0.0.5:8786``, or a ``Client``, used as it is and not closed) or of
    a new ``LocalCluster`` of ``n_workers`` single-threaded worker processes with ``memory_limit`` each (closed on
    exit), or None for :data:`IN_PROCESS` (everything runs in this process, :func:`run_tree` with no client).
    The local scheduler runs with ``distributed.scheduler.allowed-failures = 1`` (a task that was on two
    workers that died is reported, not tried a third time) and ``worker-saturation = 1.0`` (a worker holds only the
    tasks it runs, so a worker that dies puts only those under suspicion)."""

    def __init__(self, scheduler: Any = None, *, n_workers: int = 2, memory_limit: str | int = "2GiB",
                 threads_per_worker: int = 1) -> None:
        self.scheduler = scheduler
        self.n_workers = n_workers
        self.memory_limit = memory_limit
        self.threads_per_worker = threads_per_worker
        self._own: list[Any] = []

    def __enter__(self) -> Any:
        if isinstance(self.scheduler, str) and self.scheduler == IN_PROCESS:
            return None
        import dask
        from distributed import Client, LocalCluster

        if self.scheduler is not None and not isinstance(self.scheduler, str):
            return self.scheduler  # a Client
        if isinstance(self.scheduler, str):
            try:
                client = Client(self.scheduler, timeout="20s")
            except (OSError, TimeoutError) as exc:
                raise InputError(f"cannot reach the Dask scheduler ({exc})", source=self.scheduler,
                                 hint="check the address (tcp://HOST:PORT) and that the scheduler runs") from None
            self._own = [client]
            return client
        with dask.config.set({"distributed.scheduler.allowed-failures": 1,
                              "distributed.scheduler.worker-saturation": 1.0}):
            cluster = LocalCluster(n_workers=self.n_workers, threads_per_worker=self.threads_per_worker,
                                   processes=True, memory_limit=self.memory_limit, dashboard_address=None,
                                   silence_logs=50)
            client = Client(cluster)
        self._own = [client, cluster]
        return client

    def __exit__(self, *exc: Any) -> None:
        for obj in self._own:
            obj.close()
        self._own = []


def run_tree(client: Any, leaf: Callable[[Partition], Any], parts: Sequence[Partition],
             combine: Callable[..., Any], *, stage: str) -> Any:
    """``combine`` of ``leaf(p)`` over all partitions: one task per partition (``retries=1``), merged by ``combine``
    tasks of fan-in 8 on the workers as the partitions finish; the root's value is returned.

    Only as many partition tasks are in flight as the cluster has threads, so a worker that dies had only the
    tasks it was running: those are the partitions Dask puts under suspicion and runs again elsewhere.  Every
    partition is run even when some fail; then :class:`PartitionError` names every partition that failed twice,
    with its error (an exception raised twice, or ``KilledWorker`` when the workers running it died).
    ``client=None`` runs everything in this process (errors propagate as they are)."""
    if client is None:  # in this process, one partition after the other (tests, debugging)
        level = [leaf(p) for p in parts]
        while len(level) > 1:
            level = [combine(*level[i:i + _FAN_IN]) for i in range(0, len(level), _FAN_IN)]
        return level[0]
    import uuid

    from distributed import as_completed

    token = uuid.uuid4().hex[:8]
    todo = iter(parts)
    of_key: dict[str, Partition] = {}
    queue = as_completed()
    n_merges = 0

    def submit_leaf() -> None:
        part = next(todo, None)
        if part is not None:
            fut = client.submit(leaf, part, key=f"calib-{stage}-{part.index}-{token}", retries=1, pure=False)
            of_key[fut.key] = part
            queue.add(fut)

    for _ in range(max(1, sum(client.nthreads().values()))):
        submit_leaf()
    ready: list[Any] = []
    failed: list[tuple[str, str]] = []
    running = len(parts)  # partitions not yet finished (merges are tracked through ``ready``)
    for fut in queue:
        part = of_key.get(fut.key)
        if part is not None:
            running -= 1
            submit_leaf()
            if fut.status != "finished":
                failed.append((part.name, _error_text(fut)))
                continue
        elif fut.status != "finished":
            fut.result()  # a merge failed: its error as it is
        ready.append(fut)
        if failed:
            ready = []  # no result will be given: stop merging, keep running the partitions to name every failure
            continue
        if len(ready) >= _FAN_IN or (running == 0 and len(ready) > 1 and queue.count() == 0):
            n_merges += 1
            group, ready = ready[:_FAN_IN], ready[_FAN_IN:]
            queue.add(client.submit(combine, *group, key=f"calib-{stage}-merge-{n_merges}-{token}", retries=1,
                                    pure=False))
    if failed:
        raise PartitionError(failed)
    assert len(ready) == 1, len(ready)
    return ready[0].result()


def process_peak_mb() -> float:
    """This process's peak resident memory in MB since it started: ``VmHWM`` of ``/proc/self/status`` (Linux).

    Not ``getrusage(RUSAGE_SELF).ru_maxrss``: Linux carries that peak across ``fork`` + ``exec`` (``exec_mmap``
    keeps the larger of the old and new maxima), so a Dask worker process spawned by a client holding 3.6 GB
    reports 3.6 GB before it has read a row — which is what the classification benchmark at 10⁸ rows reported
    "per worker" (its client had just run DuckDB over 2·10⁸ rows).  ``VmHWM`` is the high-water mark of the memory
    map that ``exec`` created.  Elsewhere (no ``/proc``) ``ru_maxrss`` is returned, an upper bound."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    import resource

    divisor = 1024.0 * 1024.0 if os.uname().sysname == "Darwin" else 1024.0  # bytes on macOS, kB elsewhere
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / divisor


def worker_peak_mb(client: Any) -> dict[str, float]:
    """Worker address → that worker process's peak resident memory in MB (:func:`process_peak_mb`, run on each
    worker); a worker restarted by its nanny starts a new peak."""
    return {str(k): float(v) for k, v in client.run(process_peak_mb).items()}


def _error_text(future: Any) -> str:
    try:
        exc = future.exception()
    except Exception as err:  # noqa: BLE001 - a cancelled future has no exception to show
        return f"{type(err).__name__}: {err}"
    if type(exc).__name__ == "KilledWorker":
        return "the workers running it died twice (KilledWorker: out of memory or a crash in a native library?)"
    return f"{type(exc).__name__}: {str(exc)[:300]}"


# ----------------------------------------------------------------------------------------------
# Exact order statistics by a distributed radix select
# ----------------------------------------------------------------------------------------------

_SIGN = np.uint64(1 << 63)


def float_keys(x: np.ndarray) -> np.ndarray:
    """Order-preserving uint64 keys of float64 values (x ≥ 0: bits with the sign bit set; x < 0: all bits
    flipped; −0.0 gets the key of +0.0), so that x < x' ⇔ key(x) < key(x')."""
    x = np.ascontiguousarray(x, dtype=np.float64)
    bits = x.view(np.uint64)
    neg = (bits >> np.uint64(63)).astype(bool)
    key = np.where(neg, ~bits, bits | _SIGN)
    key[key == ~_SIGN] = _SIGN
    return key


def key_values(key: np.ndarray) -> np.ndarray:
    """Inverse of :func:`float_keys` (−0.0 comes back as +0.0)."""
    key = np.asarray(key, dtype=np.uint64)
    pos = (key & _SIGN).astype(bool)
    return np.where(pos, key ^ _SIGN, ~key).view(np.float64)


# bits of the 128-bit (value key, row id) counted by successive passes: the first digit is the sign, the exponent and
# 12 significand bits, so a bucket spans a relative 2⁻¹² of σ and the buckets holding the wanted ranks are small
# enough to gather in the second pass (two passes over the data) up to about 10⁹ rows of a smooth distribution
_WIDTHS = (24, 20, 20, 24, 20, 20)
_STARTS = (0, 24, 44, 64, 88, 108)
_DENSE_SPAN = 1 << 22  # digits counted with a bincount (no sort) when they span at most this many values


@dataclass
class _Target:
    subset: Any
    rank: int  # wanted 0-based rank within the subset
    prefix: int = 0  # known top bits of the 128-bit key (value key << 64 | row id)
    bits: int = 0  # how many
    below: int = 0  # values of the subset whose key is below the bucket
    size: int = 0  # values of the subset in the bucket
    value: float | None = None
    row_id: int | None = None


Ask = tuple[Any, int, int, str]  # (subset, known bits, prefix, "count" | "gather")


def _in_bucket(keys: np.ndarray, ids: np.ndarray, bits: int, prefix: int) -> np.ndarray | slice:
    if bits == 0:
        return slice(None)
    if bits <= 64:
        return (keys >> np.uint64(64 - bits)) == np.uint64(prefix)
    hi, lo_bits = prefix >> (bits - 64), bits - 64
    return (keys == np.uint64(hi)) & ((ids >> np.uint64(64 - lo_bits)) == np.uint64(prefix & ((1 << lo_bits) - 1)))


def _digits(keys: np.ndarray, ids: np.ndarray, bits: int) -> np.ndarray:
    width = _WIDTHS[_STARTS.index(bits)]
    word, shift = (keys, bits) if bits < 64 else (ids, bits - 64)
    return ((word << np.uint64(shift)) if shift else word) >> np.uint64(64 - width)


def _stat_leaf(part: Partition, load: Callable[[Partition], Mapping[Any, tuple[np.ndarray, np.ndarray]]],
               asks: Sequence[Ask] | None) -> dict:
    """One partition's share of a radix pass: for each ask, the distinct next digits of the 128-bit keys inside the
    bucket and their counts (``count``), or the bucket's (value key, row id) pairs in order (``gather``);
    ``asks=None``: the top digits of every subset."""
    data = {s: (float_keys(np.asarray(v, dtype=np.float64)), np.asarray(i, dtype=np.int64).view(np.uint64))
            for s, (v, i) in load(part).items()}
    if asks is None:
        asks = [(s, 0, 0, "count") for s in data]
    out: dict = {}
    for ask in asks:
        subset, bits, prefix, mode = ask
        if subset not in data or data[subset][0].size == 0:
            continue
        keys, ids = data[subset]
        sel = _in_bucket(keys, ids, bits, prefix)
        k, i = keys[sel], ids[sel]
        if mode == "gather":
            order = np.lexsort((i, k))
            out[ask] = (k[order], i[order])
        else:
            out[ask] = _count_digits(_digits(k, i, bits))
    return out


def _count_digits(d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(distinct digits, counts) of uint64 digits: a bincount over the digits' span when it is at most 2²² values
    (O(n), no sort), else ``numpy.unique``."""
    if d.size == 0:
        return d, np.zeros(0, dtype=np.int64)
    lo = d.min()
    span = int(d.max() - lo) + 1
    if span > _DENSE_SPAN:
        return np.unique(d, return_counts=True)
    counts = np.bincount((d - lo).astype(np.int64), minlength=span)
    nz = np.flatnonzero(counts)
    return nz.astype(np.uint64) + lo, counts[nz]


def _stat_combine(*parts: dict) -> dict:
    """Sum of digit counts / ordered union of gathered pairs, per ask."""
    grouped: dict = {}
    for part in parts:
        for ask, val in part.items():
            grouped.setdefault(ask, []).append(val)
    out: dict = {}
    for ask, vals in grouped.items():
        a = np.concatenate([x for x, _ in vals])
        b = np.concatenate([y for _, y in vals])
        if ask[3] == "gather":
            order = np.lexsort((b, a))
            out[ask] = (a[order], b[order])
        else:
            digits, inverse = np.unique(a, return_inverse=True)
            out[ask] = (digits, np.bincount(inverse, weights=b.astype(np.float64)).astype(np.int64))
    return out


def _descend(t: _Target, digits: np.ndarray, counts: np.ndarray) -> None:
    """Move target ``t`` into the next digit bucket under its prefix that holds its rank."""
    width = _WIDTHS[_STARTS.index(t.bits)]
    c = np.cumsum(counts)
    i = int(np.searchsorted(c, t.rank - t.below, side="right"))
    t.below += int(c[i - 1]) if i else 0
    t.size = int(counts[i])
    t.prefix = (t.prefix << width) | int(digits[i])
    t.bits += width


def order_statistics(
    client: Any,
    parts: Sequence[Partition],
    load: Callable[[Partition], Mapping[Any, tuple[np.ndarray, np.ndarray]]],
    ranks: Callable[[Any, int], Sequence[int]],
    *,
    with_ids: bool = True,
    gather_limit: int = _GATHER_LIMIT,
) -> tuple[dict[Any, int], dict[Any, dict[int, tuple[float, int]]], int]:
    """Exact order statistics (value, row id) of distributed values, per subset, ties ordered by row id.

    ``load(part)`` returns, for one partition, each subset's float values and their int64 row ids ≥ 0 (a row may
    be in several subsets); ``ranks(subset, n)`` the wanted 0-based ranks in a subset of n values, sorted by
    (value, row id) — the order of a stable sort when the ids follow the row order.  NaN is not allowed.

    Radix select on 128-bit keys (order-preserving key of the value, :func:`float_keys`, then the row id): the
    first pass counts every subset's values by their top 24 bits, which also gives n; each later pass either
    gathers the (value, id) pairs inside the buckets that hold a wanted rank, when those buckets hold at most
    ``gather_limit`` rows together, or counts the next 20–24 bits inside them.  Without ``with_ids`` the search
    stops once the value is known (the id returned is then −1).  Exact, with memory bounded by the distinct digits
    of a bucket (≤ 2²⁴ counts) or ``gather_limit`` pairs.  Returns (n per subset, {subset: {rank: (value, id)}},
    the number of passes over the data).
    """
    first = run_tree(client, lambda p: _stat_leaf(p, load, None), parts, _stat_combine, stage="quantiles-0")
    totals = {ask[0]: int(counts.sum()) for ask, (_, counts) in first.items()}
    targets = [_Target(s, int(r)) for s in sorted(totals, key=str) for r in sorted(set(ranks(s, totals[s])))]
    for t in targets:
        if not 0 <= t.rank < totals[t.subset]:
            raise ValueError(f"rank {t.rank} outside 0..{totals[t.subset] - 1} of subset {t.subset!r}")
        _descend(t, *first[(t.subset, 0, 0, "count")])
    passes = 1
    for pass_no in range(1, len(_WIDTHS) + 1):
        open_targets = [t for t in targets if t.value is None]
        for t in open_targets:
            if t.bits >= 64 and (not with_ids or t.bits == 128):
                t.value = float(key_values(np.array([t.prefix >> (t.bits - 64)], dtype=np.uint64))[0])
                t.row_id = int(t.prefix & ((1 << 64) - 1)) if t.bits == 128 else -1
        open_targets = [t for t in targets if t.value is None]
        if not open_targets:
            break
        buckets = {(t.subset, t.bits, t.prefix): t.size for t in open_targets}
        mode = "gather" if sum(buckets.values()) <= gather_limit else "count"
        asks = sorted(((s, b, p, mode) for s, b, p in buckets), key=str)
        result = run_tree(client, lambda p, asks=asks: _stat_leaf(p, load, asks), parts, _stat_combine,
                          stage=f"quantiles-{pass_no}")
        passes += 1
        for t in open_targets:
            got = result[(t.subset, t.bits, t.prefix, mode)]
            if mode == "gather":
                j = t.rank - t.below
                t.value = float(key_values(got[0][j : j + 1])[0])
                t.row_id = int(got[1][j].view(np.int64)) if with_ids else -1
            else:
                _descend(t, *got)
    out: dict[Any, dict[int, tuple[float, int]]] = {}
    for t in targets:
        assert t.value is not None and t.row_id is not None
        out.setdefault(t.subset, {})[t.rank] = (t.value, t.row_id)
    return totals, out, passes


# ----------------------------------------------------------------------------------------------
# The data set's summary
# ----------------------------------------------------------------------------------------------


@dataclass
class ParquetSummary:
    """What :func:`summarize_parquet` found: the merged ``summary`` (its ``dropped`` holds the global 1-based row
    numbers of the first dropped rows per reason), the ``files`` and ``partitions`` read, ``n_read`` data rows,
    the data passes made (1 + the passes of the exact quantiles), the wall time per stage in seconds, the head's
    loader ``messages`` and the cluster it ran on."""

    summary: Summary
    files: list[str]
    partitions: list[Partition]
    n_read: int
    passes: int
    seconds: dict[str, float]
    messages: list[str]
    cluster: str

    def dropped_table(self) -> pd.DataFrame:
        """Reason, count and the first rows as ``file.parquet:row``."""
        locate = locate_row(self.partitions)
        rows = [{"reason": r, "count": int(d["count"]),
                 "rows": ", ".join(locate(int(i)) for i in d["first"]) + (" …" if d["count"] > len(d["first"]) else "")}
                for r, d in sorted(self.summary.dropped.items(), key=lambda kv: (-kv[1]["count"], kv[0]))]
        return pd.DataFrame(rows, columns=["reason", "count", "rows"])

    @property
    def n_dropped(self) -> int:
        """Rows read but not summarised (a row dropped for two reasons counts once)."""
        return self.n_read - self.summary.n_rows


def _global_ids(part: Partition, pset: PredictionSet) -> np.ndarray:
    return np.asarray(pset.row_number, dtype=np.int64) + part.row_id


def _summarize_leaf(part: Partition, options: ReadOptions, spec: SummarySpec, by_group: bool) -> Summary:
    """Read, parse and summarise one partition; its drops carry data-set row numbers (a partition without a valid
    row gives an empty summary that only counts them)."""
    pset = read_partition(part, options)
    tally = DropTally.of(pset, part.row_id)
    if pset.n_rows == 0:
        return Summary(spec, {}, 0, tally.as_dropped(), part.name, ())
    out = summarize(pset, spec=spec, row_ids=_global_ids(part, pset), by_group=by_group)
    out.dropped = tally.as_dropped()
    return out


def _merge_leaves(*summaries: Summary) -> Summary:
    return merge_all(summaries)


_KDE = "kernel bandwidths"  # the subset of the ensembles' positive Silverman bandwidths (subsets of σ are tuples)


def _sigma_subsets(part: Partition, options: ReadOptions, by_group: bool,
                   kde: bool = False) -> dict[Any, tuple[np.ndarray, np.ndarray]]:
    pset = read_partition(part, options)
    if pset.n_rows == 0 or pset.dist is None:
        return {}
    sigma = np.asarray(pset.dist.std(), dtype=np.float64)
    ids = _global_ids(part, pset)
    out = {(m, g): (sigma[mask], ids[mask]) for m, g, mask in iter_subsets(pset, by_group)}
    if kde and isinstance(pset.dist, SampleSet):
        h = silverman_bandwidths(pset.dist.samples)
        positive = h > 0
        out[_KDE] = (h[positive], ids[positive])
    return out


def regression_edges(client: Any, parts: Sequence[Partition], options: ReadOptions, *, n_bins: int,
                     by_group: bool = True) -> tuple[dict[tuple[str, str], tuple[np.ndarray, np.ndarray]], int]:
    """The exact equal-count σ edges of every (model, group) of a distributed data set: the order statistics
    (σ, row number) at ``mergeable.equal_count_positions(n, n_bins)`` (ties by row number, as the in-memory stable
    sort breaks them), by :func:`order_statistics`; returns the edges and the number of data passes made."""
    edges, _, passes = regression_edges_and_kde_floor(client, parts, options, n_bins=n_bins, by_group=by_group,
                                                      kde=False)
    return edges, passes


def regression_edges_and_kde_floor(
    client: Any, parts: Sequence[Partition], options: ReadOptions, *, n_bins: int, by_group: bool = True,
    kde: bool = True,
) -> tuple[dict[tuple[str, str], tuple[np.ndarray, np.ndarray]], float, int]:
    """:func:`regression_edges` and, for ensembles (``kde``), in the same passes the kernel floor of their NLL:
    1% of the median positive Silverman bandwidth h = 1.06·s·M^(−1/5) over all valid rows (``SampleSet``'s floor,
    as ``regression.summary.spec_for_regression`` takes it over a whole set), the median being NumPy's — the
    middle order statistic, or the mean of the two middle ones — of the exact order statistics.  Returns (edges,
    floor — 0.0 without ``kde``, 1e-12 when no bandwidth is positive — and the number of data passes)."""

    def ranks(subset: Any, n: int) -> list[int]:
        if subset == _KDE:
            return sorted({(n - 1) // 2, n // 2})
        pos = equal_count_positions(n, n_bins)
        return [int(p) for p in pos[pos < n]]

    totals, stats, passes = order_statistics(client, parts, lambda p: _sigma_subsets(p, options, by_group, kde),
                                             ranks)
    floor = 0.0
    if kde:
        found = stats.pop(_KDE, None)
        if found:
            n = totals[_KDE]
            middle = np.array([found[r][0] for r in sorted({(n - 1) // 2, n // 2})], dtype=np.float64)
            floor = 0.01 * float(np.median(middle))
        else:
            floor = 1e-12
    edges = {}
    for subset, found in stats.items():
        order = sorted(found)
        edges[subset] = (np.array([found[r][0] for r in order], dtype=np.float64),
                         np.array([found[r][1] for r in order], dtype=np.int64))
    return edges, floor, passes


def _confidence_subsets(part: Partition, options: ReadOptions,
                        by_group: bool) -> dict[Any, tuple[np.ndarray, np.ndarray]]:
    pset = read_partition(part, options)
    if pset.n_rows == 0:
        return {}
    conf = np.asarray(classification_rows_values(pset), dtype=np.float64)
    ids = _global_ids(part, pset)
    return {(m, g): (conf[mask], ids[mask]) for m, g, mask in iter_subsets(pset, by_group)}


def _quantile_positions(n: int, n_bins: int) -> list[tuple[float, int, float]]:
    """For q = k/M, k = 0..M: NumPy's linear-method virtual index v = (n − 1)·q, its floor i and v − i."""
    out = []
    for q in np.linspace(0.0, 1.0, n_bins + 1):
        v = (n - 1) * q
        i = int(np.floor(v))
        out.append((v, i, v - i))
    return out


def equal_mass_edges_distributed(client: Any, parts: Sequence[Partition], options: ReadOptions, *, n_bins: int,
                                 by_group: bool = True) -> tuple[dict[tuple[str, str], np.ndarray], int]:
    """``binning.equal_mass_edges`` (``np.quantile`` of the top-label confidences at k/M, linear method) of every
    (model, group) of a distributed classification data set, exactly: with v = (n − 1)·q, i = ⌊v⌋ and the order
    statistics x₍ᵢ₎, x₍ᵢ₊₁₎ (:func:`order_statistics`, values only), the edge is ``np.quantile([x₍ᵢ₎, x₍ᵢ₊₁₎],
    v − i)`` — NumPy's own interpolation of the same two values — or x₍ₙ₋₁₎ when v ≥ n − 1.  Returns the edges
    and the number of data passes."""

    def ranks(subset: Any, n: int) -> list[int]:
        return sorted({r for v, i, _ in _quantile_positions(n, n_bins) for r in ((n - 1,) if v >= n - 1
                                                                                  else (i, i + 1))})

    totals, stats, passes = order_statistics(client, parts, lambda p: _confidence_subsets(p, options, by_group),
                                             ranks, with_ids=False)
    edges = {}
    for subset, found in stats.items():
        n = totals[subset]
        vals = [found[n - 1][0] if v >= n - 1 else float(np.quantile(np.array([found[i][0], found[i + 1][0]]), g))
                for v, i, g in _quantile_positions(n, n_bins)]
        edges[subset] = np.array(vals, dtype=np.float64)
    return edges, passes


def summarize_parquet(
    paths_or_glob: Any,
    *,
    columns: Mapping[str, Any] | None = None,
    task: str | None = None,
    renormalize: bool = False,
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
    """The mergeable calibration summary of a Parquet data set (a path, directory, glob or list), computed on Dask.

    Pipeline (module docstring): plan the partitions from the footers (schemas checked: a disagreement names both
    files and the column), parse the first rows with the reader of ``cc.load_predictions`` (``columns``, ``task``,
    ``renormalize`` as there), compute the exact equal-count σ edges of every (model, group) by a distributed radix
    select over (σ, row number) when the spec needs them, then ``summary.summarize`` every partition (row ids: the
    1-based row numbers of the data set, files in name order — one file read in memory gets the same ids, so the
    same summary) and merge the summaries in a tree on the workers.

    ``n_bins`` σ-bins or confidence bins, ``pit_bins`` (regression), ``strategy`` (classification: ``"uniform"``,
    or ``"quantile"`` with exact equal-mass edges from :func:`equal_mass_edges_distributed`) and ``seed`` (the
    hashed bootstrap blocks) go into the spec, like the same options of ``cc.diagnose``.

    ``scheduler``: None (a new ``LocalCluster`` of ``n_workers`` single-threaded processes, ``memory_limit``
    each), :data:`IN_PROCESS` (no cluster: one partition after the other in this process), an address
    ``tcp://HOST:PORT`` of a running scheduler, or a ``distributed.Client``; the workers must be
    able to read the paths and import ``calib_core``.  ``spec``: a ready :class:`~calib_core.base.mergeable.SummarySpec`
    (no edges pass); further ``spec_options`` go to ``regression.summary.regression_spec`` (``coverages``,
    ``n_blocks``, …) or ``classification.summary.classification_spec``.  Raises ``InputError`` for bad input and
    :class:`PartitionError` when partitions failed twice.  Returns a :class:`ParquetSummary`.
    """
    seconds: dict[str, float] = {}
    t0 = time.perf_counter()
    parts, files = plan_partitions(paths_or_glob, rows_per_partition=rows_per_partition)
    options, head = read_head(files, task=task, columns=columns, renormalize=renormalize)
    seconds["plan"] = time.perf_counter() - t0
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
                                                                     by_group=by_group, kde=ensemble)
                passes += extra
                if ensemble:
                    spec_options.setdefault("kde_floor", floor)
                if head.layout == "quantile":
                    spec_options.setdefault("quantile_levels", head.dist.levels)
                spec = regression_spec(layout=head.layout, sigma_edges=edges, n_bins=n_bins, pit_bins=pit_bins,
                                       seed=seed, **spec_options)
        seconds["edges"] = time.perf_counter() - t1
        t2 = time.perf_counter()
        summary = run_tree(client, lambda p: _summarize_leaf(p, options, spec, by_group), parts, _merge_leaves,
                           stage="summary")
        seconds["summaries"] = time.perf_counter() - t2
    summary.source = str(paths_or_glob) if isinstance(paths_or_glob, (str, os.PathLike)) else f"{len(files)} files"
    seconds["total"] = time.perf_counter() - t0
    n_read = sum(p.n_rows for p in parts)
    if summary.n_rows < 2:
        raise InputError(f"only {summary.n_rows} of {n_read:,} rows are valid (at least 2 are needed)",
                         source=summary.source, hint="see the dropped rows; check the column mapping")
    # the head's notes about the layout and columns (its row counts are only the head's: the drops are in the summary)
    notes = [m for m in head.messages[1:] if "row" not in m]
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
    """What :func:`slice_summary_parquet` found: the merged :class:`~calib_core.scale.slices.SliceSummary`, the
    ``files`` and ``partitions`` read, ``n_read`` data rows (``summary.n_rows`` of them valid), the wall seconds per
    stage (plan, edges, summaries, total), the head's loader ``messages`` and the cluster it ran on."""

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
    return sketch_slices(pset, rate=rate, row_ids=_global_ids(part, pset), seed=seed)


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
    return summarize_slices(pset, spec, row_ids=_global_ids(part, pset))


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
    """The slice explorer's summary of a Parquet data set on Dask: every slice column's and every pair of columns'
    per-cell sums (:mod:`calib_core.scale.slices`), from which
    :func:`calib_core.scale.slices.summary_ranking` ranks the slices as the in-memory explorer does.

    Two passes over the partitions, each a tree of merges on the workers (:func:`run_tree`; failures as in
    :func:`summarize_parquet`): (1) the :class:`~calib_core.scale.slices.SliceSketch` — text levels, which
    numeric columns have more than 12 values, and the rows whose row-id hash falls below m/N
    (m = ``sample_rows``, N the rows of the files), whose quantiles give the numeric and σ edges (rank error in
    ``summary.spec.rank_error``; exact when N ≤ m); (2) the slice summary of every partition with those edges.
    Rows are read and parsed by the reader of ``cc.load_predictions`` (``columns``, ``task``, ``renormalize`` as
    there); invalid rows are left out, as in memory.  ``scheduler``: as :func:`summarize_parquet`;
    ``rows_per_partition`` None: PARTITION_BUDGET_BYTES / (:data:`SLICE_BYTES_PER_CELL` · columns).
    """
    seconds: dict[str, float] = {}
    t0 = time.perf_counter()
    if rows_per_partition is None:  # a slice pass needs ~25 B per cell (measured): larger partitions than a summary's
        import pyarrow.parquet as pq

        first = expand_paths(paths_or_glob)[0]
        try:
            n_columns = len(_data_fields(pq.read_schema(first)))
        except (OSError, ValueError):
            n_columns = 1  # plan_partitions names the unreadable file below
        rows_per_partition = max(10_000, PARTITION_BUDGET_BYTES // (SLICE_BYTES_PER_CELL * max(1, n_columns)))
    parts, files = plan_partitions(paths_or_glob, rows_per_partition=rows_per_partition)
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
