"""A light reader for the passes over a plain Gaussian data set: the three columns as arrays, each row group decoded
once per pass.

:func:`~calib_core.scale.distributed_reading.read_partition` reads a partition through the reader of
``cc.load_predictions`` (pyarrow → pandas → the regression parser: roles, layout, drop reasons, messages), which
costs about three times the Parquet decoding itself.  For the common data set of three float64 columns — target,
predictive mean and σ (role ``std``), no model, group, time or other column — the parser keeps a row exactly when
its three values are finite and σ > 0, and then keeps them as read.  :func:`light_layout` recognises such a data
set from its schema and first rows; :func:`light_columns` reads a partition's three columns as float64 arrays and
returns them only when every row is valid in that sense (no null, every value finite, σ > 0): the parser would drop
nothing and hold the same numbers.  A partition with any other row returns None and is read by the parser as
before, so the drop counts and row numbers stay the parser's.

Slices of a row group larger than the partition budget (``Partition.rows``) share one decoded copy of the row group
(:class:`_RowGroupCache`, a few row groups at most), so a row group cut in two slices is decoded once per pass, not
twice, whichever threads read its slices.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from concurrent.futures import Future
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from ..base.predictions import ALL, DropReport, PredictionSet
from ..base.regression import Gaussian
from .distributed_partitions import Partition
from .distributed_reading import ReadOptions

__all__ = ["LightLayout", "light_columns", "light_layout", "light_prediction_set", "light_sigma_subsets"]


@dataclass(frozen=True)
class LightLayout:
    """The three columns of a plain Gaussian data set and the key of its one subset.

    Attributes
    ----------
    y, mean, std : str
        The columns of the target, the predictive mean and σ.
    subset : tuple of (str, str)
        (model, group) of every row (one model, no group column).
    template : PredictionSet
        The parser's set of the first valid rows (fields other than the rows' arrays are taken from it).

    References
    ----------
    .. [1] Apache Software Foundation. Apache Parquet file format (footer metadata, row groups, page checksums).
       https://parquet.apache.org/docs/file-format/
    """

    y: str
    mean: str
    std: str
    subset: tuple[str, str]
    template: PredictionSet


def light_layout(files: list[str], options: ReadOptions, head: PredictionSet) -> LightLayout | None:
    """The light layout of a data set, or None when the parser must read every partition.

    Light: a regression data set in the Gaussian layout with σ from a ``std`` column, whose files hold exactly three
    float64 columns (target, mean, σ) and nothing else (no model, group, split, time, feature or text column), the
    head parsed without a model or group.

    Parameters
    ----------
    files : list of str
        The data set's files (their schemas agree: the planner checked).
    options : ReadOptions
        How partitions are parsed.
    head : PredictionSet
        The parsed first rows.

    Returns
    -------
    LightLayout or None
        The columns, or None.

    References
    ----------
    .. [1] Apache Software Foundation. Apache Parquet file format (footer metadata, row groups, page checksums).
       https://parquet.apache.org/docs/file-format/
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    if (options.task != "regression" or head.layout != "gaussian" or head.model is not None
            or head.group is not None or head.split is not None or head.time is not None
            or head.features is not None or head.n_rows < 2 or not files
            or not str(head.source).startswith(f"{Path(files[0]).name} (first ")):
        return None
    schema = pq.read_schema(files[0])
    if len(schema) != 3 or not all(pa.types.is_float64(f.type) for f in schema):
        return None
    if [str(f.name) for f in schema] != [str(f.name).strip() for f in schema]:
        return None
    # which column the parser took for each role: the one whose head rows are the head's y, μ and σ, bit for bit
    rows = np.asarray(head.row_number, dtype=np.int64) - 1
    pf = pq.ParquetFile(files[0])
    batch = next(pf.iter_batches(batch_size=int(rows.max()) + 1), None)
    if batch is None or batch.num_rows <= rows.max():
        return None
    raw = {str(name): np.asarray(batch.column(i).to_numpy(zero_copy_only=False), dtype=np.float64)[rows]
           for i, name in enumerate(batch.schema.names)}
    names = []
    for role in (head.y, head.dist.mean(), head.dist.std()):
        want = np.asarray(role, dtype=np.float64)
        match = [c for c, v in raw.items() if v.tobytes() == want.tobytes()]
        if len(match) != 1:
            return None
        names.append(match[0])
    if len(set(names)) != 3:
        return None
    return LightLayout(*names, subset=(head.models()[0], ALL), template=head)


class _RowGroupCache:
    """Decoded row groups (three columns) shared by the slices of a row group: at most ``size`` kept, the oldest
    dropped first; a row group being decoded by one thread is waited for by the others."""

    def __init__(self, size: int = 4) -> None:
        self.size = size
        self._lock = threading.Lock()
        self._items: OrderedDict[Any, Future] = OrderedDict()

    def get(self, key: Any, load: Any) -> Any:
        with self._lock:
            fut = self._items.get(key)
            owner = fut is None
            if owner:
                fut = self._items[key] = Future()
                while len(self._items) > self.size:
                    self._items.popitem(last=False)
            else:
                self._items.move_to_end(key)
        if owner:
            try:
                fut.set_result(load())
            except BaseException as exc:
                with self._lock:
                    self._items.pop(key, None)
                fut.set_exception(exc)
        return fut.result()


_CACHE = _RowGroupCache()
_CACHE_BYTES = 1 << 27  # decoded row groups above 128 MB are not held whole (their slices are read in batches)


def light_columns(part: Partition, light: LightLayout) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """The partition's target, mean and σ as float64 arrays, or None when a row is not valid (null, non-finite, σ ≤ 0).

    Parameters
    ----------
    part : Partition
        The partition.
    light : LightLayout
        The columns.

    Returns
    -------
    (ndarray, ndarray, ndarray) or None
        y, μ, σ of every row of the partition, in file order.

    References
    ----------
    .. [1] Apache Software Foundation. Apache Parquet file format (footer metadata, row groups, page checksums).
       https://parquet.apache.org/docs/file-format/
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    cols = [light.y, light.mean, light.std]
    try:
        if part.rows is None:
            pf = pq.ParquetFile(part.path, page_checksum_verification=True)
            table = pf.read_row_groups(list(part.row_groups), columns=cols, use_threads=False)
        else:
            pf = pq.ParquetFile(part.path)
            if sum(pf.metadata.row_group(g).num_rows for g in part.row_groups) * 24 > _CACHE_BYTES:
                return None  # a row group too large to hold decoded: the parser's slice reader
            stat = os.stat(part.path)
            key = (part.path, stat.st_size, stat.st_mtime_ns, tuple(part.row_groups), tuple(cols))

            def load() -> Any:
                pf = pq.ParquetFile(part.path, page_checksum_verification=True)
                return pf.read_row_groups(list(part.row_groups), columns=cols, use_threads=False)

            start, stop = part.rows
            table = _CACHE.get(key, load).slice(start, stop - start)
    finally:
        pa.default_memory_pool().release_unused()
    out = []
    for name in cols:
        column = table.column(name)
        if column.null_count:
            return None
        out.append(np.ascontiguousarray(column.to_numpy(), dtype=np.float64))
    y, mean, sigma = out
    with np.errstate(invalid="ignore", over="ignore"):
        ok = bool(np.isfinite(y).all() and np.isfinite(mean).all() and np.isfinite(sigma).all()
                  and (sigma > 0).all())
    return (y, mean, sigma) if ok else None


def light_sigma_subsets(part: Partition, light: LightLayout) -> dict[Any, tuple[np.ndarray, np.ndarray]] | None:
    """σ and the global row ids of a light partition's one subset (the σ-edge passes), or None (parser needed).

    Parameters
    ----------
    part : Partition
        The partition.
    light : LightLayout
        The columns.

    Returns
    -------
    dict or None
        {(model, group): (σ, ids)}, ids = ``part.row_id`` + 1 … n.

    References
    ----------
    .. [1] Apache Software Foundation. Apache Parquet file format (footer metadata, row groups, page checksums).
       https://parquet.apache.org/docs/file-format/
    """
    found = light_columns(part, light)
    if found is None:
        return None
    sigma = found[2]
    return {light.subset: (sigma, np.arange(part.row_id + 1, part.row_id + sigma.shape[0] + 1, dtype=np.int64))}


def light_prediction_set(part: Partition, light: LightLayout) -> PredictionSet | None:
    """The partition as the parser would give it when every row is valid, or None (parser needed).

    Parameters
    ----------
    part : Partition
        The partition.
    light : LightLayout
        The columns.

    Returns
    -------
    PredictionSet or None
        ``Gaussian(μ, σ)``, y, row numbers 1 … n, nothing dropped.

    References
    ----------
    .. [1] Apache Software Foundation. Apache Parquet file format (footer metadata, row groups, page checksums).
       https://parquet.apache.org/docs/file-format/
    """
    found = light_columns(part, light)
    if found is None:
        return None
    y, mean, sigma = found
    n = y.shape[0]
    dist = Gaussian(mean, sigma, copy=False)
    msg = (f"gaussian layout (y={light.y!r}, mean={light.mean!r}, std={light.std!r}); {n} of {n} rows kept.")
    return replace(light.template, source=part.name, y=y, dist=dist, point=dist.mean(), slice_columns=None,
                   row_number=np.arange(1, n + 1, dtype=np.int64), n_read=n, dropped=DropReport(), messages=[msg])
