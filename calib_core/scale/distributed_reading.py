"""One partition read through the readers of ``cc.load_predictions``: the options every partition is parsed with
(:class:`ReadOptions`, fixed from the first rows by :func:`read_head`), the read itself (:func:`read_partition`:
pyarrow, page checksums verified) and the dropped rows counted per reason over the data set (:class:`DropTally`,
:func:`locate_row`).  The partitions: :mod:`calib_core.scale.distributed_partitions`.
"""

from __future__ import annotations

import dataclasses
import os
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..base.predictions import InputError, PredictionSet
from ..data.classification import parse_classification_frame
from ..data.detect import detect_task
from ..data.parquet_size import row_group_sizes
from ..data.regression import parse_regression_frame
from .distributed_partitions import PARTITION_BUDGET_BYTES, Partition

__all__ = [
    "FIRST_ROW_IDS",
    "HEAD_BYTES",
    "MAX_HEAD_FILES",
    "DropTally",
    "ReadOptions",
    "locate_row",
    "parse_frame",
    "read_head",
    "read_partition",
]

FIRST_ROW_IDS = 10
"""Row numbers kept per drop reason (the smallest global 1-based row numbers; the count is exact)."""
HEAD_BYTES = 64_000_000
"""Decoded bytes of the first rows parsed on the client (fewer rows than ``n_rows`` when rows are wide)."""
MAX_HEAD_FILES = 1000
"""Files whose first rows are tried for two valid rows before the data set is refused."""


# ----------------------------------------------------------------------------------------------
# Reading one partition through the readers of cc.load_predictions
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ReadOptions:
    """How every partition is parsed.

    Attributes
    ----------
    task : {"regression", "classification"}
        The task (detected once, on the head).
    columns : mapping, optional
        The column mapping, with the class names fixed from the head for classification.
    renormalize : bool, default False
        The classification ``renormalize`` option of ``cc.load_predictions``.
    crossing : {"rearrange", "drop"}, default "rearrange"
        The regression ``crossing`` option of ``cc.load_predictions``.
    layout : str, optional
        The regression layout, fixed from the head so that every partition is read in the same one.

    References
    ----------
    .. [1] Apache Software Foundation. Apache Parquet file format (footer metadata, row groups, page checksums).
       https://parquet.apache.org/docs/file-format/
    """

    task: str
    columns: Mapping[str, Any] | None = None
    renormalize: bool = False
    crossing: str = "rearrange"
    layout: str | None = None


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
    """A frame through the task's reader (the one behind ``cc.load_predictions``).

    Parameters
    ----------
    frame : DataFrame
        The rows as read.
    source : str
        Where they come from (in messages).
    options : ReadOptions
        Task, mapping and ``renormalize``.
    min_rows : int, default 0
        Valid rows needed (0: a partition with no valid row is not an error).

    Returns
    -------
    PredictionSet
        The validated rows; ``dropped`` counts the invalid ones.

    References
    ----------
    .. [1] Apache Software Foundation. Apache Parquet file format (footer metadata, row groups, page checksums).
       https://parquet.apache.org/docs/file-format/
    """
    if options.task == "classification":
        return parse_classification_frame(frame, source, options.columns, options.renormalize, min_rows=min_rows)
    return parse_regression_frame(frame, source, options.columns, min_rows=min_rows, crossing=options.crossing,
                                  layout=options.layout)


def _text_columns(schema: Any) -> list[str]:
    import pyarrow as pa

    return [f.name for f in schema if pa.types.is_string(f.type) or pa.types.is_large_string(f.type)
            or pa.types.is_binary(f.type) or pa.types.is_large_binary(f.type)]


def _expand_text(table: Any, keep: Sequence[str], budget: int, where: str) -> Any:
    """Text columns read as dictionaries back to plain text, after their decoded size — Σ over rows of the length of
    the row's dictionary value, from the codes — is checked against ``budget`` (a dictionary of many short values and
    one long one that every row uses passes the footer's estimate, not this); ``keep`` stay dictionaries."""
    import pyarrow as pa
    import pyarrow.compute as pc

    for i, spec in enumerate(table.schema):
        if not pa.types.is_dictionary(spec.type) or spec.name in keep:
            continue
        column = table.column(i)
        size = sum(int(pc.sum(pc.binary_length(c.dictionary).take(c.indices)).as_py() or 0) for c in column.chunks)
        if size > budget:
            raise InputError(
                f"column {spec.name!r} decodes to {size:,} bytes of text in {len(table):,} rows (its dictionary "
                f"values repeated over the rows), more than the {budget:,} bytes a partition may take",
                source=where, columns=[spec.name],
                hint="write the data set again with only the columns the summary needs, or with shorter values in "
                     "that column")
        table = table.set_column(i, spec.name, column.cast(spec.type.value_type))
    return table


_SLICE_READER: dict[str, Any] = {}
"""The batch reader of the last slice read (file, row group, batch size, position): the next slice of the same row
group continues from it instead of decoding the row group from its start again (partitions run in order)."""
_SLICE_LOCK = threading.Lock()


def _read_slice(pf: Any, part: Partition) -> Any:
    """Rows ``part.rows`` of the partition's one row group, as a table (batches of the slice's size)."""
    import pyarrow as pa

    start, stop = part.rows or (0, part.n_rows)
    size = max(1, stop - start)
    try:
        stat = os.stat(part.path)
        key = (part.path, stat.st_size, stat.st_mtime_ns, tuple(part.row_groups), size)
    except OSError:
        key = None
    with _SLICE_LOCK:
        cached = _SLICE_READER.pop("current", None)
    if cached is not None and key is not None and cached[0] == key and cached[2] <= start:
        batches, seen = cached[1], cached[2]
    else:
        batches, seen = pf.iter_batches(batch_size=size, row_groups=list(part.row_groups), use_threads=False), 0
    kept = []
    for batch in batches:
        n = batch.num_rows
        lo, hi = max(start - seen, 0), min(stop - seen, n)
        if hi > lo:
            kept.append(batch.slice(lo, hi - lo))
        seen += n
        if seen >= stop:
            break
    if key is not None and seen < sum(pf.metadata.row_group(g).num_rows for g in part.row_groups):
        with _SLICE_LOCK:
            _SLICE_READER["current"] = (key, batches, seen)
    return pa.Table.from_batches(kept) if kept else pf.schema_arrow.empty_table()


def read_partition(part: Partition, options: ReadOptions, *, dictionary: Sequence[str] = (),
                   zero_copy: bool = False) -> PredictionSet:
    """Read one partition and parse it with the reader of ``cc.load_predictions``.

    pyarrow, page checksums verified where the writer stored them; the set's ``row_number`` are the 1-based rows of
    the partition and ``dropped`` counts its invalid rows.  A slice of a row group (``part.rows``) is read with
    ``iter_batches`` in batches of the slice's size, the batches before it decoded and dropped one at a time, so
    memory holds at most two batches besides the slice; the next slice of the same row group in the same process
    continues the reader where this one stopped (linear, not quadratic, in the slices of a row group).

    Parameters
    ----------
    part : Partition
        The partition.
    options : ReadOptions
        How to parse it.
    dictionary : sequence of str, default ()
        Columns (text columns no role takes) read as dictionaries, i.e. pandas categoricals: their codes come from
        the file's dictionary pages, without a Python string per row.
    zero_copy : bool, default False
        The frame's columns are the Arrow buffers (read-only; for readers of the set that do not write into its
        columns).

    Returns
    -------
    PredictionSet
        The partition's valid rows.

    References
    ----------
    .. [1] Apache Software Foundation. Apache Parquet file format (footer metadata, row groups, page checksums).
       https://parquet.apache.org/docs/file-format/
    .. [2] Rocklin, M. (2015). Dask: parallel computation with blocked algorithms and task scheduling. Proceedings
       of the 14th Python in Science Conference (SciPy 2015), 130–136.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        text = _text_columns(pq.read_schema(part.path))
        pf = pq.ParquetFile(part.path, page_checksum_verification=True, read_dictionary=text or None)
        if part.rows is None:
            table = pf.read_row_groups(list(part.row_groups), use_threads=False)
        else:
            table = _read_slice(pf, part)
        table = _expand_text(table, dictionary, PARTITION_BUDGET_BYTES, part.name)
        frame = _frame(table, zero_copy=zero_copy)
        del table
    finally:
        pa.default_memory_pool().release_unused()
    return parse_frame(frame, part.name, options)


@dataclass
class DropTally:
    """Dropped rows of a data set: per reason the exact count and the smallest global row ids.

    ``merge`` is associative and commutative (sums and sorted unions).

    Attributes
    ----------
    counts : dict of str to int
        Reason → rows dropped.
    first : dict of str to ndarray
        Reason → the smallest global 1-based row ids (at most :data:`FIRST_ROW_IDS`).
    n_read : int
        Rows read.
    n_dropped : int
        Rows dropped (a row dropped for two reasons counts once).

    References
    ----------
    .. [1] Rocklin, M. (2015). Dask: parallel computation with blocked algorithms and task scheduling. Proceedings
       of the 14th Python in Science Conference (SciPy 2015), 130–136.
    """

    counts: dict[str, int] = field(default_factory=dict)
    first: dict[str, np.ndarray] = field(default_factory=dict)
    n_read: int = 0
    n_dropped: int = 0

    @classmethod
    def of(cls, pset: PredictionSet, row_id: int) -> DropTally:
        """The drops of one parsed partition with ``row_id`` data-set rows before it (global 1-based rows).

        Parameters
        ----------
        pset : PredictionSet
            The parsed partition.
        row_id : int
            Data-set rows before it.

        Returns
        -------
        DropTally
            Its tally.
        """
        out = cls(n_read=int(pset.n_read), n_dropped=int(pset.dropped.total))
        for reason, rows in pset.dropped.reasons.items():
            rows = np.asarray(rows, dtype=np.int64)
            out.counts[reason] = int(rows.size)
            out.first[reason] = np.sort(rows)[:FIRST_ROW_IDS] + row_id
        return out

    def as_dropped(self) -> dict[str, dict[str, Any]]:
        """The ``Summary.dropped`` form: reason → {"count", "first"}.

        Returns
        -------
        dict of str to dict
            Reason → count and first row ids.
        """
        return {r: {"count": int(c), "first": [int(i) for i in self.first[r]]} for r, c in self.counts.items()}

    def merge(self, other: DropTally) -> DropTally:
        """Counts added, first ids the smallest of both.

        Parameters
        ----------
        other : DropTally
            Another tally.

        Returns
        -------
        DropTally
            The tally of both.
        """
        out = DropTally(dict(self.counts), dict(self.first), self.n_read + other.n_read,
                        self.n_dropped + other.n_dropped)
        for reason, count in other.counts.items():
            out.counts[reason] = out.counts.get(reason, 0) + count
            prev = out.first.get(reason)
            ids = other.first[reason] if prev is None else np.union1d(prev, other.first[reason])
            out.first[reason] = np.sort(ids)[:FIRST_ROW_IDS]
        return out

    def table(self, locate: Callable[[int], str] | None = None) -> pd.DataFrame:
        """One row per reason: reason, count, first rows.

        Parameters
        ----------
        locate : callable, optional
            Turns a global id into ``file:row`` (:func:`locate_row`); default the id itself.

        Returns
        -------
        DataFrame
            Columns ``reason, count, rows``, the most frequent reason first.
        """
        rows = []
        for reason, count in sorted(self.counts.items(), key=lambda kv: (-kv[1], kv[0])):
            ids = self.first[reason]
            where = [locate(int(i)) if locate else str(int(i)) for i in ids]
            rows.append({"reason": reason, "count": count,
                         "rows": ", ".join(where) + (" …" if count > len(ids) else "")})
        return pd.DataFrame(rows, columns=["reason", "count", "rows"])


def locate_row(parts: Sequence[Partition]) -> Callable[[int], str]:
    """A function from a data-set row (1-based, files in order) to ``file.parquet:row`` (1-based row of the file).

    Parameters
    ----------
    parts : sequence of Partition
        The data set's partitions, in order.

    Returns
    -------
    callable
        ``locate(row) -> str``.

    References
    ----------
    .. [1] Apache Software Foundation. Apache Parquet file format (footer metadata, row groups, page checksums).
       https://parquet.apache.org/docs/file-format/
    """
    starts = np.array([p.row_id for p in parts], dtype=np.int64)

    def locate(row: int) -> str:
        p = parts[int(np.searchsorted(starts, row - 1, side="right")) - 1]
        return f"{Path(p.path).name}:{p.file_row + row - p.row_id}"

    return locate


def read_head(files: Sequence[str], *, task: str | None, columns: Mapping[str, Any] | None, renormalize: bool,
              n_rows: int = 2000, crossing: str = "rearrange", layout: str | None = None
              ) -> tuple[ReadOptions, PredictionSet]:
    """Parse the first rows of the first file with valid rows, so that a wrong mapping fails before any work is sent
    out.

    The reader of ``cc.load_predictions`` (at least two valid rows needed) decides the options every partition is
    then read with: the task detected once and, for classification, the class names fixed.  A file whose first rows
    hold fewer than two valid rows is passed over (its rows are read and counted like any other partition's), up to
    :data:`MAX_HEAD_FILES` files; the head takes at most ``n_rows`` rows and :data:`HEAD_BYTES` decoded bytes
    (:func:`calib_core.data.parquet_size.row_group_sizes`).

    Parameters
    ----------
    files : sequence of str
        The data set's files.
    task : {"regression", "classification"} or None
        The task (None: detected from the head).
    columns : mapping or None
        The column mapping.
    renormalize : bool
        The classification ``renormalize`` option.
    n_rows : int, default 2000
        Rows of the head.
    crossing : {"rearrange", "drop"}, default "rearrange"
        The regression ``crossing`` option.
    layout : str, optional
        The regression ``layout`` option (None: chosen on the head, then fixed for every partition).

    Returns
    -------
    options : ReadOptions
        How every partition is read.
    head : PredictionSet
        The parsed head.

    References
    ----------
    .. [1] Apache Software Foundation. Apache Parquet file format (footer metadata, row groups, page checksums).
       https://parquet.apache.org/docs/file-format/
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    first: tuple[pd.DataFrame, str, ReadOptions] | None = None
    for path in files[:MAX_HEAD_FILES]:
        pf = pq.ParquetFile(path, read_dictionary=_text_columns(pq.read_schema(path)) or None)
        per_row = max((g.bytes_per_row for g in row_group_sizes(pf.metadata, pf.schema, source=path)), default=0.0)
        rows = max(2, min(int(n_rows), int(HEAD_BYTES // per_row) if per_row > 0 else int(n_rows)))
        batch = next(pf.iter_batches(batch_size=rows), None)
        table = pa.Table.from_batches([batch]) if batch is not None else pf.schema_arrow.empty_table()
        frame = _frame(_expand_text(table, (), HEAD_BYTES, f"{Path(path).name} (first {rows:,} rows)"))
        kind = task or detect_task(frame, columns)
        options = ReadOptions(kind, dict(columns) if columns is not None else None, renormalize, crossing, layout)
        source = f"{Path(path).name} (first {len(frame):,} rows)"
        head = parse_frame(frame, source, options, min_rows=0)
        if head.n_rows >= 2:  # a file whose first rows hold no valid row is read as any other partition
            break
        first = first or (frame, source, options)
    else:
        frame, source, options = first  # type: ignore[misc]  # no file's head has two valid rows: its message
        kind = options.task
        head = parse_frame(frame, source, options, min_rows=2)
    if kind == "classification" and head.classes is not None and "classes" not in (columns or {}):
        options = ReadOptions(kind, {**(columns or {}), "classes": list(head.classes)}, renormalize)
    elif kind == "regression":
        options = dataclasses.replace(options, layout=head.layout)
    return options, head


def global_ids(part: Partition, pset: PredictionSet) -> np.ndarray:
    """The global 1-based row ids of a parsed partition: its ``row_number`` plus the rows before it.

    Parameters
    ----------
    part : Partition
        The partition.
    pset : PredictionSet
        Its parsed rows.

    Returns
    -------
    ndarray of shape (n,) of int64
        The data-set row numbers of its valid rows.
    """
    return np.asarray(pset.row_number, dtype=np.int64) + part.row_id
