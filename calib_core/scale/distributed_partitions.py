"""Parquet data sets as partitions: the files of a glob, their schemas and the partitions cut from the footers.

The Dask pipelines of :mod:`calib_core.scale.distributed` plan a data set here (:func:`plan_partitions`: consecutive
row groups of one file, each with the data-set row number of its first row), then fix the task and the column
mapping from the first rows and read every partition on a worker with
:mod:`calib_core.scale.distributed_reading` (page checksums verified, invalid rows counted per reason).
"""

from __future__ import annotations

import glob
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..base.predictions import InputError
from ..data.parquet_size import RowGroupSize, row_group_sizes
from ..data.path_glob import bounded_glob, check_path_text, shown

__all__ = [
    "BYTES_PER_CELL",
    "DEFAULT_ROWS_PER_PARTITION",
    "MAX_ROW_BYTES",
    "MIN_SLICE_ROWS",
    "PARTITION_BUDGET_BYTES",
    "SLICE_BYTES_PER_CELL",
    "Partition",
    "auto_rows_per_partition",
    "check_schemas",
    "slice_rows",
    "expand_paths",
    "plan_partitions",
]

DEFAULT_ROWS_PER_PARTITION = None
"""``rows_per_partition=None``: :func:`auto_rows_per_partition` of the data set's column count."""

PARTITION_BUDGET_BYTES = 600_000_000
"""Working set one partition task may take.  Measured by ``bench/distributed.py`` (peak resident memory of a worker
process, about 300 MB of which is the interpreter and libraries): ≈ 230 bytes per cell of a partition
(reading, parsing, summarising), so a budget of 6·10⁸ bytes keeps a worker near 1 GB."""

BYTES_PER_CELL = 230
SLICE_BYTES_PER_CELL = 25
MIN_SLICE_ROWS = 1000
"""Fewest rows a partition is cut to: a row group whose rows are so wide that fewer than this many fit in
:data:`PARTITION_BUDGET_BYTES` is refused (:data:`MAX_ROW_BYTES`)."""
MAX_ROW_BYTES = PARTITION_BUDGET_BYTES // MIN_SLICE_ROWS
"""Decoded bytes one row may take (600 kB): beyond it a file is refused, naming its row group and widest column."""
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


def expand_paths(paths_or_glob: str | os.PathLike | Iterable[str | os.PathLike]) -> list[str]:
    """The Parquet files of a path, a directory, a glob, or a list of them, as absolute paths.

    Sorted by name within each pattern, without duplicates; the path text checked and a glob walked with bounds
    (:func:`calib_core.data.path_glob.bounded_glob`: a loop of symbolic links is refused); absolute because the
    workers' working directory is not the client's (on a cluster the files must be at the same absolute path on
    every worker, e.g. a shared file system).

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
        If a pattern matches no file, has a NUL or control character, or its walk loops or has no end.

    References
    ----------
    .. [1] Apache Software Foundation. Apache Parquet file format (footer metadata, row groups, page checksums).
       https://parquet.apache.org/docs/file-format/
    """
    items = [paths_or_glob] if isinstance(paths_or_glob, (str, os.PathLike)) else list(paths_or_glob)
    out: list[str] = []
    seen: set[str] = set()
    for item in items:
        text = os.fspath(item)
        check_path_text(text)
        if Path(text).is_dir():
            found = bounded_glob(os.path.join(glob.escape(text), "*.parquet"))
        elif glob.has_magic(text):
            found = [p for p in bounded_glob(text) if Path(p).is_file()]
        else:
            found = [text] if Path(text).is_file() else []
        if not found:
            raise InputError(
                "matches no file" if glob.has_magic(text) or Path(text).is_dir() else "no such file",
                source=shown(text),
                hint="check the path or glob (quote it so that the shell does not expand it), e.g. 'data/*.parquet'",
            )
        for p in (os.path.abspath(f) for f in found):
            if p not in seen:
                seen.add(p)
                out.append(p)
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
    rows : (int, int) or None, default None
        A slice ``[start, stop)`` of the rows of its one row group, when the row group is larger than a partition
        may be (:func:`slice_rows`); None: the whole row groups.

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
    rows: tuple[int, int] | None = None

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
        if self.rows is not None:
            groups += " (a slice)"
        return f"{Path(self.path).name} {groups} (rows {self.file_row + 1:,}–{self.file_row + self.n_rows:,})"


def _size_text(n: float) -> str:
    for unit, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return f"{n / scale:.3g} {unit}"
    return f"{n:.0f} bytes"


def slice_rows(group: RowGroupSize, path: str, bytes_per_cell: int = BYTES_PER_CELL) -> int:
    """The most rows of a row group one partition may hold within :data:`PARTITION_BUDGET_BYTES`.

    ⌊PARTITION_BUDGET_BYTES / (c · columns + e)⌋ (c = ``bytes_per_cell``, 230 B for a summary), with ``e`` the
    decoded bytes of a row beyond 8 per cell (long text; :func:`calib_core.data.parquet_size.row_group_sizes`, which
    counts a dictionary-encoded value at rows × its dictionary's mean value).  A row group of more rows is read in
    slices.

    Parameters
    ----------
    group : RowGroupSize
        The row group's estimated decoded size.
    path : str
        Its file (in messages).
    bytes_per_cell : int, default BYTES_PER_CELL
        Working set of a pass per cell (:data:`SLICE_BYTES_PER_CELL` for the slice explorer's passes).

    Returns
    -------
    int
        The rows of a slice (at least 1).

    Raises
    ------
    InputError
        When a row decodes to more than :data:`MAX_ROW_BYTES` (fewer than :data:`MIN_SLICE_ROWS` rows would fit),
        naming the file, the row group and its widest column.

    References
    ----------
    .. [1] Apache Software Foundation. Apache Parquet file format (footer metadata, row groups, dictionary pages).
       https://parquet.apache.org/docs/file-format/
    """
    n_cols = max(1, len(group.columns))
    per_row = group.bytes_per_row
    if per_row > MAX_ROW_BYTES:
        widest = group.widest()
        what = (f"; column {widest.name!r} alone decodes to about {_size_text(widest.bytes_per_row)} per row"
                + (f" (its dictionary holds {widest.dictionary_values:,} value(s) of "
                   f"{_size_text(widest.dictionary_bytes)} in all, repeated over {widest.rows:,} rows)"
                   if widest.dictionary_values else "")) if widest is not None else ""
        raise InputError(
            f"row group {group.index} declares {group.rows:,} rows that decode to about {_size_text(group.decoded)} "
            f"({_size_text(per_row)} per row){what}; the server reads at most {_size_text(MAX_ROW_BYTES)} per row "
            f"(partitions of at least {MIN_SLICE_ROWS:,} rows within {_size_text(PARTITION_BUDGET_BYTES)})",
            source=Path(path).name, columns=[widest.name] if widest is not None else [],
            hint="write the data set again with only the columns the summary needs (predictions, truth, model, "
                 "group), or with shorter values in that column")
    extra = max(0.0, per_row - 8.0 * n_cols)
    return max(1, int(PARTITION_BUDGET_BYTES // (bytes_per_cell * n_cols + extra)))


def plan_partitions(
    paths_or_glob: Any, *, rows_per_partition: int | None = DEFAULT_ROWS_PER_PARTITION,
    bytes_per_cell: int = BYTES_PER_CELL,
) -> tuple[list[Partition], list[str]]:
    """The partitions of a Parquet data set and its files, from the footers alone (no data is read).

    Row groups of a file are grouped in order until a partition has at least ``rows_per_partition`` rows (or as many
    as the budget allows, :func:`slice_rows`; a row group larger than ``rows_per_partition`` but within the budget is
    one partition); a row group larger than a partition may be (:func:`slice_rows`: what its decoded size from the
    footer and dictionary page headers allows) is cut into slices of at most ``rows_per_partition`` rows, each a
    partition read with ``iter_batches``; a row group
    whose rows are wider than :data:`MAX_ROW_BYTES` is refused, naming the file, the row group and the column.  The
    schemas are checked first (:func:`check_schemas`).

    Parameters
    ----------
    paths_or_glob : str, path-like or iterable of them
        As :func:`expand_paths`.
    rows_per_partition : int or None, default DEFAULT_ROWS_PER_PARTITION
        None: :func:`auto_rows_per_partition` of the column count, so that a worker's memory does not grow with the
        width of the table.
    bytes_per_cell : int, default BYTES_PER_CELL
        Working set of the pass per cell, for :func:`slice_rows`.

    Returns
    -------
    partitions : list of Partition
        In data-set order.
    files : list of str
        The files read.

    Raises
    ------
    InputError
        If a footer is unreadable (naming the file), the schemas disagree, a row group's rows decode to more than
        :data:`MAX_ROW_BYTES` each, or there is no data row.
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
    metas, schemas, sizes = [], [], []
    for path in files:
        try:
            pf = pq.ParquetFile(path)
            sizes.append(row_group_sizes(pf.metadata, pf.schema, source=path))
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
    for path, meta, groups_size in zip(files, metas, sizes):
        groups: list[int] = []
        start = rows = file_row = 0
        for g in range(meta.num_row_groups):
            n = int(meta.row_group(g).num_rows)
            if n == 0:
                continue
            cap = slice_rows(groups_size[g], path, bytes_per_cell)
            cut = min(rows_per_partition, cap)
            if n > cap:  # a row group larger than a partition may be: read in slices of it
                if groups:
                    parts.append(Partition(len(parts), path, tuple(groups), start, row_id, rows))
                    row_id += rows
                    groups, rows = [], 0
                for a in range(0, n, cut):
                    b = min(n, a + cut)
                    parts.append(Partition(len(parts), path, (g,), file_row + a, row_id, b - a, (a, b)))
                    row_id += b - a
                file_row += n
                continue
            if not groups:
                start = file_row
            groups.append(g)
            rows += n
            file_row += n
            if rows >= min(rows_per_partition, cut):  # wide rows: fewer rows per partition
                parts.append(Partition(len(parts), path, tuple(groups), start, row_id, rows))
                row_id += rows
                groups, rows = [], 0
        if groups:
            parts.append(Partition(len(parts), path, tuple(groups), start, row_id, rows))
            row_id += rows
    if not parts:
        raise InputError("has no data rows", source=str(paths_or_glob), hint="check the files")
    return parts, files
