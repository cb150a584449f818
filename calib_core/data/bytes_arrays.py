"""npz archives and Excel workbooks as DataFrames, and the checks of a file's columns that come before any decoding.

:func:`calib_core.data.bytes.read_table` hands npz archives to :func:`read_npz` (after its size check) and workbooks
to :func:`read_excel`.  Every ``.npy`` header of an archive is read first (``numpy.lib.format``, no pickle) and its
shape × item size compared with the member's bytes: a forged header declaring 10¹⁰ rows in a 200-byte member is
refused saying so, before numpy allocates what it declares.  :func:`check_flat_columns` refuses nested Parquet
columns (list, struct, map …) naming each with its type; :func:`check_names` refuses empty column names naming their
positions.
"""

from __future__ import annotations

import io
import math
import zipfile
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..base.predictions import InputError
from .columns import MAX_COLUMNS, check_columns, name_list
from .text import check_name_lengths

__all__ = ["check_flat_columns", "check_names", "read_excel", "read_npz"]

_NPZ_NAMES = {"probs": "prob", "logits": "logit", "samples": "sample", "members": "member", "labels": "label",
              "quantiles": "q"}

READ_TYPES = "numbers, booleans, text, dates and times, and categoricals (dictionary-encoded text)"
"""The Parquet column types the loader reads, in words."""


def check_flat_columns(fields: Sequence[Any], src: str) -> None:
    """Refuse Parquet columns of nested types (list, large list, fixed-size list, struct, map, union).

    Parameters
    ----------
    fields : sequence of pyarrow.Field
        The file's Arrow schema fields.
    src : str
        The file name for the message.

    Raises
    ------
    InputError
        Naming every nested column with its type and the types that are read.

    Examples
    --------
    >>> import pyarrow as pa
    >>> from calib_core.data.bytes_arrays import check_flat_columns
    >>> check_flat_columns([pa.field("y", pa.float64())], "f.parquet")
    """
    import pyarrow as pa

    nested = [f for f in fields if pa.types.is_nested(f.type)
              or (pa.types.is_dictionary(f.type) and pa.types.is_nested(f.type.value_type))]
    if nested:
        shown = ", ".join(f"{f.name!r} ({str(f.type)[:60]})" for f in nested[:5])
        more = f" and {len(nested) - 5} more" if len(nested) > 5 else ""
        raise InputError(
            f"has nested column(s) {shown}{more}: a column of lists, structs or maps holds several values per row, "
            f"and the loader reads one value per cell — {READ_TYPES}",
            source=src,
            columns=[f.name for f in nested],
            hint="export one flat column per value (e.g. a list of K class probabilities as prob_0 … prob_K−1, a "
            "struct's fields as their own columns); columns the diagnosis does not need can be left out of the export",
        )


def check_names(names: Sequence[Any], src: str) -> None:
    """Refuse empty (or blank) column names and names over the length limit, naming their positions.

    Parameters
    ----------
    names : sequence
        The column names in file order.
    src : str
        The file name for the message.

    Raises
    ------
    InputError
        Naming the 1-based positions of the empty names.

    Examples
    --------
    >>> from calib_core.data.bytes_arrays import check_names
    >>> check_names(["y", "mean"], "f.parquet")
    """
    empty = [i + 1 for i, name in enumerate(names) if not str(name).strip()]
    if empty:
        before = [str(n) for n in names[: empty[0] - 1] if str(n).strip()]
        after = f" (the first one after {before[-1][:40]!r})" if before else ""
        raise InputError(
            f"column(s) at position {name_list(empty, 10)} of {len(names)} have an empty name{after}: every column "
            "needs a name to be chosen by",
            source=src,
            columns=[f"column {i}" for i in empty[:10]],
            hint="give every column a name when exporting (pandas: df.columns = [...]; an unnamed index: "
            "df.reset_index() names it 'index')",
        )
    check_name_lengths(names, src)


def _npy_header(member: Any) -> tuple[tuple[int, ...], np.dtype, int]:
    """(shape, dtype, header bytes) of a ``.npy`` stream, read without pickle (``numpy.lib.format``)."""
    fmt = np.lib.format
    version = fmt.read_magic(member)
    if version == (1, 0):
        shape, _, dtype = fmt.read_array_header_1_0(member)
    elif version == (2, 0):
        shape, _, dtype = fmt.read_array_header_2_0(member)
    else:
        shape, _, dtype = fmt._read_array_header(member, version)  # noqa: SLF001 (3.0: UTF-8 header)
    return tuple(int(n) for n in shape), np.dtype(dtype), 0


def _check_npz_headers(zf: zipfile.ZipFile, src: str) -> None:
    """Every member's declared shape × item size must be its data's size (object arrays are left to ``np.load``,
    which refuses them without pickle)."""
    for info in zf.infolist():
        with zf.open(info) as member:
            shape, dtype, _ = _npy_header(member)
            header = member.tell()
        if dtype.hasobject:
            continue
        declared = math.prod(shape) * dtype.itemsize
        held = info.file_size - header
        if declared != held:
            key = info.filename[:-4]
            raise InputError(
                f"npz array {key!r} has a header declaring shape {shape} of {dtype} ({declared:,} bytes), but the "
                f"archive holds {held:,} bytes of data for it: the header's shape/dtype is inconsistent with the file "
                "size (a damaged or hand-edited file)",
                source=src,
                columns=[key],
                hint="save the arrays again with numpy.savez (shape and data are then written together), or upload CSV",
            )


def read_npz(data: bytes, src: str) -> pd.DataFrame:
    """An npz archive of plain arrays as a DataFrame (size checked by the caller; headers checked here).

    Parameters
    ----------
    data : bytes
        The archive.
    src : str
        The file name for messages.

    Returns
    -------
    DataFrame
        1-D arrays as columns, 2-D arrays as one column per column (``probs`` → ``prob_0 …``).

    Raises
    ------
    InputError
        A forged or corrupt header, object arrays, arrays of different lengths, no 1-D or 2-D array.
    """
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            _check_npz_headers(zf, src)
        with np.load(io.BytesIO(data), allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
    except InputError:
        raise
    except Exception as exc:  # corrupt archives raise many types (zlib.error, TokenError from a bad .npy header, …)
        raise InputError(
            f"npz archive could not be read without pickle ({str(exc)[:200]})",
            source=src,
            hint="store plain numeric arrays (np.savez with allow_pickle=False readable arrays), or upload CSV",
        ) from None
    cols: dict[str, np.ndarray] = {}
    n_rows: int | None = None
    for key, arr in arrays.items():
        if arr.ndim == 0 or arr.ndim > 2:
            continue
        if n_rows is None:
            n_rows = arr.shape[0]
        if arr.shape[0] != n_rows:
            raise InputError(
                f"npz arrays have different lengths ({key!r} has {arr.shape[0]} rows, expected {n_rows})",
                source=src,
                columns=[key],
                hint="every array must have one entry (row) per example",
            )
        base = _NPZ_NAMES.get(key.lower(), key)
        if arr.ndim == 1:
            cols[base] = arr
        else:
            if arr.shape[1] > MAX_COLUMNS:
                raise InputError(f"npz array {key!r} has {arr.shape[1]:,} columns, more than {MAX_COLUMNS:,}",
                                 source=src, columns=[key], hint="store fewer columns")
            for j in range(arr.shape[1]):
                cols[f"{base}_{j}"] = arr[:, j]
    if not cols:
        raise InputError("npz archive holds no 1-D or 2-D arrays", source=src,
                         hint="store e.g. probs (N, K) and labels (N,), or y, mean, std (N,)")
    check_names(list(cols), src)
    check_columns(list(cols), src)
    frame = pd.DataFrame(cols)
    frame.attrs.update({"format": "npz", "comments": []})
    return frame


def read_excel(data: bytes, src: str) -> pd.DataFrame:
    """The first sheet of an Excel workbook (only with openpyxl installed).

    Parameters
    ----------
    data : bytes
        The workbook.
    src : str
        The file name for messages.

    Returns
    -------
    DataFrame
        The sheet, column names stripped.

    Raises
    ------
    InputError
        openpyxl missing, an unreadable workbook, duplicate or over-long names.
    """
    try:
        import openpyxl  # noqa: F401
    except ImportError:
        raise InputError(
            "is an Excel workbook, and reading Excel needs the optional package openpyxl, which is not installed",
            source=src,
            hint="save the sheet as CSV (UTF-8) and upload that, or `pip install openpyxl`",
        ) from None
    try:
        frame = pd.read_excel(io.BytesIO(data), sheet_name=0, engine="openpyxl")
    except Exception as exc:  # openpyxl raises many types on malformed workbooks
        raise InputError(f"Excel workbook could not be read ({str(exc)[:200]})", source=src,
                         hint="save the sheet as CSV and upload that") from None
    check_name_lengths(list(frame.columns), src)
    check_columns(list(frame.columns), src)
    frame.columns = [str(c).strip() for c in frame.columns]
    frame.attrs.update({"format": "excel", "comments": []})
    return frame
