"""Parquet data sets as partitions: the files of a glob, their schemas, the partitions cut from the footers, and
one partition read through the readers of ``cc.load_predictions``.

The Dask pipelines of :mod:`calib_core.scale.distributed` plan a data set here (:func:`plan_partitions`: consecutive
row groups of one file, each with the data-set row number of its first row), fix the task and the column mapping
from the first rows (:func:`read_head`), and read every partition on a worker with :func:`read_partition` (page
checksums verified, invalid rows counted per reason: :class:`DropTally`).
"""

from __future__ import annotations

import glob
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..base.predictions import InputError, PredictionSet
from ..data.classification import parse_classification_frame
from ..data.reading import detect_task
from ..data.regression import parse_regression_frame

__all__ = [
    "BYTES_PER_CELL",
    "DEFAULT_ROWS_PER_PARTITION",
    "FIRST_ROW_IDS",
    "PARTITION_BUDGET_BYTES",
    "SLICE_BYTES_PER_CELL",
    "DropTally",
    "Partition",
    "ReadOptions",
    "auto_rows_per_partition",
    "check_schemas",
    "expand_paths",
    "locate_row",
    "parse_frame",
    "plan_partitions",
    "read_head",
    "read_partition",
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


def auto_rows_per_partition(n_columns: int) -> int:
    """Rows per partition for a table of ``n_columns`` columns.

    ⌊PARTITION_BUDGET_BYTES / (230 B · columns)⌋, at least 10,000 — 869,565 rows for (y, mean, std), 237,154 for
    10 probabilities and a label.

    Parameters
    ----------
    n_columns : int
        Columns of the table (at least 1 is assumed).

    Returns
    -------
    int
        The rows per partition.

    References
    ----------
    .. [1] Rocklin, M. (2015). Dask: parallel computation with blocked algorithms and task scheduling. Proceedings
       of the 14th Python in Science Conference (SciPy 2015), 130–136.
    """
    return max(10_000, PARTITION_BUDGET_BYTES // (BYTES_PER_CELL * max(1, int(n_columns))))

FIRST_ROW_IDS = 10
"""Row numbers kept per drop reason (the smallest global 1-based row numbers; the count is exact)."""


def expand_paths(paths_or_glob: str | os.PathLike | Iterable[str | os.PathLike]) -> list[str]:
    """The Parquet files of a path, a directory, a glob, or a list of them, as absolute paths.

    Sorted by name within each pattern, without duplicates; absolute because the workers' working directory is not
    the client's (on a cluster the files must be at the same absolute path on every worker, e.g. a shared file
    system).

    Parameters
    ----------
    paths_or_glob : str, path-like or iterable of them
        A file, a directory (its ``*.parquet`` files), a glob (quoted, so that the shell does not expand it).

    Returns
    -------
    list of str
        The files.

    Raises
    ------
    InputError
        If a pattern matches no file.

    References
    ----------
    .. [1] Apache Software Foundation. Apache Parquet file format (footer metadata, row groups, page checksums).
       https://parquet.apache.org/docs/file-format/
    """
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


def data_fields(schema: Any) -> dict[str, Any]:
    """Field name → Arrow type of a schema, without pandas' stored index columns.

    Parameters
    ----------
    schema : pyarrow.Schema
        A file's schema.

    Returns
    -------
    dict of str to pyarrow.DataType
        The data columns.
    """
    return {f.name: f.type for f in schema if not (f.name.startswith("__index_level_") and f.name.endswith("__"))}


def check_schemas(files: Sequence[str], schemas: Sequence[Any]) -> None:
    """Raise ``InputError`` when the files disagree about their columns.

    Every file must have the first file's columns, each of the same kind (numeric — any integer, float or decimal
    width —, text, boolean, or else the identical Arrow type).  The message names both files, the column and the two
    types, and counts the files that disagree.

    Parameters
    ----------
    files : sequence of str
        The files, in order.
    schemas : sequence of pyarrow.Schema
        Their schemas.

    Raises
    ------
    InputError
        If a file lacks a column of the first, has one more, or a column of another kind.

    References
    ----------
    .. [1] Apache Software Foundation. Apache Parquet file format (footer metadata, row groups, page checksums).
       https://parquet.apache.org/docs/file-format/
    """
    first = data_fields(schemas[0])
    bad: list[str] = []
    for path, schema in zip(files[1:], schemas[1:]):
        fields = data_fields(schema)
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

    Its rows are rows ``row_id + 1 … row_id + n_rows`` of the data set, the row ids of the summaries (1-based like
    ``PredictionSet.row_number``, so that one file read in memory has the same ids).

    Attributes
    ----------
    index : int
        Position of the partition in the data set.
    path : str
        The file.
    row_groups : tuple of int
        The file's row groups it holds.
    file_row : int
        The 0-based row of the file where it starts.
    row_id : int
        The number of data-set rows before it (files in order).
    n_rows : int
        Its rows.

    References
    ----------
    .. [1] Apache Software Foundation. Apache Parquet file format (footer metadata, row groups, page checksums).
       https://parquet.apache.org/docs/file-format/
    .. [2] Rocklin, M. (2015). Dask: parallel computation with blocked algorithms and task scheduling. Proceedings
       of the 14th Python in Science Conference (SciPy 2015), 130–136.
    """

    index: int
    path: str
    row_groups: tuple[int, ...]
    file_row: int
    row_id: int
    n_rows: int

    @property
    def name(self) -> str:
        """E.g. ``part-3.parquet row groups 4–7 (rows 4,000,001–8,000,000)`` (1-based rows of the file).

        Returns
        -------
        str
            The partition's name in messages.
        """
        g = self.row_groups
        groups = f"row group {g[0]}" if len(g) == 1 else f"row groups {g[0]}–{g[-1]}"
        return f"{Path(self.path).name} {groups} (rows {self.file_row + 1:,}–{self.file_row + self.n_rows:,})"


def plan_partitions(
    paths_or_glob: Any, *, rows_per_partition: int | None = DEFAULT_ROWS_PER_PARTITION
) -> tuple[list[Partition], list[str]]:
    """The partitions of a Parquet data set and its files, from the footers alone (no data is read).

    Row groups of a file are grouped in order until a partition has at least ``rows_per_partition`` rows (a row group
    larger than that is one partition); the schemas are checked first (:func:`check_schemas`).

    Parameters
    ----------
    paths_or_glob : str, path-like or iterable of them
        As :func:`expand_paths`.
    rows_per_partition : int or None, default DEFAULT_ROWS_PER_PARTITION
        None: :func:`auto_rows_per_partition` of the column count, so that a worker's memory does not grow with the
        width of the table.

    Returns
    -------
    partitions : list of Partition
        In data-set order.
    files : list of str
        The files read.

    Raises
    ------
    InputError
        If a footer is unreadable (naming the file), the schemas disagree or there is no data row.
    ValueError
        If ``rows_per_partition`` < 1.

    References
    ----------
    .. [1] Apache Software Foundation. Apache Parquet file format (footer metadata, row groups, page checksums).
       https://parquet.apache.org/docs/file-format/
    .. [2] Rocklin, M. (2015). Dask: parallel computation with blocked algorithms and task scheduling. Proceedings
       of the 14th Python in Science Conference (SciPy 2015), 130–136.
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
        rows_per_partition = auto_rows_per_partition(len(data_fields(schemas[0])))
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
    """How every partition is parsed.

    Attributes
    ----------
    task : {"regression", "classification"}
        The task (detected once, on the head).
    columns : mapping, optional
        The column mapping, with the class names fixed from the head for classification.
    renormalize : bool, default False
        The classification ``renormalize`` option of ``cc.load_predictions``.

    References
    ----------
    .. [1] Apache Software Foundation. Apache Parquet file format (footer metadata, row groups, page checksums).
       https://parquet.apache.org/docs/file-format/
    """

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
    return parse_regression_frame(frame, source, options.columns, min_rows=min_rows)


def read_partition(part: Partition, options: ReadOptions, *, dictionary: Sequence[str] = (),
                   zero_copy: bool = False) -> PredictionSet:
    """Read one partition and parse it with the reader of ``cc.load_predictions``.

    pyarrow, page checksums verified where the writer stored them; the set's ``row_number`` are the 1-based rows of
    the partition and ``dropped`` counts its invalid rows.

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
        pf = pq.ParquetFile(part.path, page_checksum_verification=True, read_dictionary=list(dictionary) or None)
        table = pf.read_row_groups(list(part.row_groups), use_threads=False)
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
              n_rows: int = 2000) -> tuple[ReadOptions, PredictionSet]:
    """Parse the first rows of the first file, so that a wrong mapping fails before any work is sent out.

    The reader of ``cc.load_predictions`` (at least two valid rows needed) decides the options every partition is
    then read with: the task detected once and, for classification, the class names fixed.

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
